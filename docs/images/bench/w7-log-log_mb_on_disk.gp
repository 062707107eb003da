# w7-log-log_mb_on_disk.png, drawn by spool-bench plot from docs/images/bench/results.json.
# To draw it again: cd to this directory, then gnuplot w7-log-log_mb_on_disk.gp
set encoding utf8
set terminal pngcairo size 1000,560 noenhanced font "Sans,11"
small_font = ",9"
set output "w7-log-log_mb_on_disk.png"
set border 3
set tics nomirror
set grid ytics lt 1 lc rgb "#e0e0e0"
set title "W7 scaling: reopen after a kill against the log written — log mb on disk"
set ylabel "MB"
set key outside top center horizontal
set grid xtics
set xlabel "payload written (× W7's)"
set logscale x
set xrange [0.8:12.5]
set xtics (1, 10)
set yrange [0:2527.7685308]
set ytics ("0" 0, "500" 500, "1000" 1000, "1500" 1500, "2000" 2000, "2500" 2500)
$E0 << EOD
# x median min max
1 221.02456 221.02456 221.02456 
10 2198.059592 2198.059592 2198.059592 
EOD
$E1 << EOD
# x median min max
1 1026.282032 1026.282032 1026.282032 
EOD
$E2 << EOD
# x median min max
1 1527.667192 1527.667192 1527.667192 
EOD
$E3 << EOD
# x median min max
1 1026.282025 165.828887 1026.282025 
EOD
plot $E0 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#e6550d" title "Spool", \
     $E1 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#3182bd" title "RocksDB", \
     $E2 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#756bb1" title "SQLite", \
     $E3 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#8c6d31" title "LevelDB"
