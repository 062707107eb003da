# w7-log-recovered_payload_mb_per_s.png, drawn by spool-bench plot from docs/images/bench/results.json.
# To draw it again: cd to this directory, then gnuplot w7-log-recovered_payload_mb_per_s.gp
set encoding utf8
set terminal pngcairo size 1000,560 noenhanced font "Sans,11"
small_font = ",9"
set output "w7-log-recovered_payload_mb_per_s.png"
set border 3
set tics nomirror
set grid ytics lt 1 lc rgb "#e0e0e0"
set title "W7 scaling: reopen after a kill against the log written — recovered payload mb"
set ylabel "MB/s"
set key outside top center horizontal
set grid xtics
set xlabel "payload written (× W7's)"
set logscale x
set xrange [0.8:12.5]
set xtics (1, 10)
set logscale y
set yrange [10:66329.50961942984]
set format y "%.0s%c"
$E0 << EOD
# x median min max
1 40590.938391271535 33515.808908937506 41455.94351214365 
10 23922.485499318176 15869.213903413876 24317.4826587196 
EOD
$E1 << EOD
# x median min max
1 60.281880663061095 58.21148893192822 79.73693473302313 
EOD
$E2 << EOD
# x median min max
1 1468.293488132409 1440.1805390345462 1512.3177116610166 
EOD
$E3 << EOD
# x median min max
1 96.4057311858645 96.19822947641103 97.91283395638285 
EOD
plot $E0 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#e6550d" title "Spool", \
     $E1 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#3182bd" title "RocksDB", \
     $E2 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#756bb1" title "SQLite", \
     $E3 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#8c6d31" title "LevelDB"
