# history-updates-change_rows_per_s.png, drawn by spool-bench plot from docs/images/bench/results.json.
# To draw it again: cd to this directory, then gnuplot history-updates-change_rows_per_s.gp
set encoding utf8
set terminal pngcairo size 1000,560 noenhanced font "Sans,11"
small_font = ",9"
set output "history-updates-change_rows_per_s.png"
set border 3
set tics nomirror
set grid ytics lt 1 lc rgb "#e0e0e0"
set title "History length: change feed and vacuum against the update commits — change rows"
set ylabel "rows/s"
set key outside top center horizontal
set grid xtics
set xlabel "update commits"
set xrange [212.5:1037.5]
set xtics (250, 1000)
set yrange [0:2604486.4475887413]
set ytics ("0" 0, "500k" 500000, "1M" 1000000, "1.5M" 1500000, "2M" 2000000, "2.5M" 2500000)
$E0 << EOD
# x median min max
250 2010050.089644214 1986172.1108703518 2203039.5248202365 
1000 1621006.4803300265 1560229.622113946 2264770.82399021 
EOD
$E1 << EOD
# x median min max
250 216144.06475703846 210509.00352902347 219618.4743939134 
1000 244880.4491320973 170332.17359493405 253446.97260277765 
EOD
$E2 << EOD
# x median min max
250 995626.8484559162 873839.096022543 1069539.0320996898 
1000 1445872.051919299 1398551.422393228 1491377.4002246521 
EOD
$E3 << EOD
# x median min max
250 347907.0095218809 342823.4215700026 360854.0451045616 
1000 440368.6699568842 413320.15630098496 454102.7435884201 
EOD
$E4 << EOD
# x median min max
250 286878.90587781946 265813.93556138576 299270.4970393349 
1000 389054.7461693037 384261.2804558046 446338.2497030322 
EOD
plot $E0 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#e6550d" title "Spool", \
     $E1 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#3182bd" title "RocksDB", \
     $E2 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#31a354" title "LMDB", \
     $E3 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#756bb1" title "SQLite", \
     $E4 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#8c6d31" title "LevelDB"
