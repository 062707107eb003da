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
set yrange [0.001:22.3423627552]
$E0 << EOD
# x median min max
1 0.006014272 0.005688282 0.006064657 
10 0.109202104 0.03997071 0.15781808 
EOD
$E1 << EOD
# x median min max
1 12.390272678 11.955038397 13.963976722 
EOD
$E2 << EOD
# x median min max
1 0.999146868 0.97348059 1.310223204 
EOD
$E3 << EOD
# x median min max
1 9.839609345 2.2233771 10.792958297 
EOD
plot $E0 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#e6550d" title "Spool", \
     $E1 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#3182bd" title "RocksDB", \
     $E2 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#756bb1" title "SQLite", \
     $E3 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#8c6d31" title "LevelDB"
