# w7-log-writer_peak_rss_mb.png, drawn by spool-bench plot from docs/images/bench/results.json.
# To draw it again: cd to this directory, then gnuplot w7-log-writer_peak_rss_mb.gp
set encoding utf8
set terminal pngcairo size 1000,560 noenhanced font "Sans,11"
small_font = ",9"
set output "w7-log-writer_peak_rss_mb.png"
set border 3
set tics nomirror
set grid ytics lt 1 lc rgb "#e0e0e0"
set title "W7 scaling: reopen after a kill against the log written — writer peak rss"
set ylabel "MB"
set key outside top center horizontal
set grid xtics
set xlabel "payload written (× W7's)"
set logscale x
set xrange [0.8:12.5]
set xtics (1, 10)
set yrange [0:1558.0495872]
set ytics ("0" 0, "500" 500, "1000" 1000, "1500" 1500)
$E0 << EOD
# x median min max
1 121.77408 99.352576 179.994624 
10 999.010304 311.6032 1094.688768 
EOD
$E1 << EOD
# x median min max
1 1278.455808 1278.275584 1278.554112 
EOD
$E2 << EOD
# x median min max
1 229.163008 197.922816 279.04 
EOD
$E3 << EOD
# x median min max
1 1354.432512 1322.758144 1354.825728 
EOD
plot $E0 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#e6550d" title "Spool", \
     $E1 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#3182bd" title "RocksDB", \
     $E2 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#756bb1" title "SQLite", \
     $E3 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#8c6d31" title "LevelDB"
