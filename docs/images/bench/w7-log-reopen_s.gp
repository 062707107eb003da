# w7-log-reopen_s.png, drawn by spool-bench plot from docs/images/bench/results.json.
# To draw it again: cd to this directory, then gnuplot w7-log-reopen_s.gp
set encoding utf8
set terminal pngcairo size 1000,560 noenhanced font "Sans,11"
small_font = ",9"
set output "w7-log-reopen_s.png"
set border 3
set tics nomirror
set grid ytics lt 1 lc rgb "#e0e0e0"
set title "W7 scaling: reopen after a kill against the log written — reopen"
set ylabel "s"
set key outside top center horizontal
set grid xtics
set xlabel "payload written (× W7's)"
set logscale x
set xrange [0.8:12.5]
set xtics (1, 10)
set logscale y
set yrange [0.001:28.2083705696]
$E0 << EOD
# x median min max
1 0.00544517 0.005331553 0.006594636 
10 0.091882576 0.090390096 0.138510931 
EOD
$E1 << EOD
# x median min max
1 17.024718219 12.870848816 17.630231606 
EOD
$E2 << EOD
# x median min max
1 1.040437218 1.01014964 1.060747004 
EOD
$E3 << EOD
# x median min max
1 10.645446203 10.481588404 10.668408666 
EOD
plot $E0 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#e6550d" title "Spool", \
     $E1 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#3182bd" title "RocksDB", \
     $E2 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#756bb1" title "SQLite", \
     $E3 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#8c6d31" title "LevelDB"
