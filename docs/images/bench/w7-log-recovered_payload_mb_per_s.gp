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
set yrange [10:87986.81202310394]
set format y "%.0s%c"
$E0 << EOD
# x median min max
1 36750.010641354434 36444.69258525255 38856.11859608929 
10 20128.363021283913 13927.805939598302 54991.75751443995 
EOD
$E1 << EOD
# x median min max
1 82.82965667271007 73.49496869205682 85.84514728597907 
EOD
$E2 << EOD
# x median min max
1 1528.9716066046858 1165.9595001341465 1569.2836690251831 
EOD
$E3 << EOD
# x median min max
1 95.08811178166641 74.58423809438354 104.30109458781567 
EOD
plot $E0 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#e6550d" title "Spool", \
     $E1 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#3182bd" title "RocksDB", \
     $E2 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#756bb1" title "SQLite", \
     $E3 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#8c6d31" title "LevelDB"
