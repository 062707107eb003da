# history-updates-vacuum_s.png, drawn by spool-bench plot from docs/images/bench/results.json.
# To draw it again: cd to this directory, then gnuplot history-updates-vacuum_s.gp
set encoding utf8
set terminal pngcairo size 1000,560 noenhanced font "Sans,11"
small_font = ",9"
set output "history-updates-vacuum_s.png"
set border 3
set tics nomirror
set grid ytics lt 1 lc rgb "#e0e0e0"
set title "History length: change feed and vacuum against the update commits — vacuum"
set ylabel "s"
set key outside top center horizontal
set grid xtics
set xlabel "update commits"
set xrange [212.5:1037.5]
set xtics (250, 1000)
set yrange [0:3.21434221505]
set ytics ("0" 0, "1" 1, "2" 2, "3" 3)
$E0 << EOD
# x median min max
250 0.208294696 0.199207308 0.228283793 
1000 0.270933829 0.268340045 0.281938013 
EOD
$E1 << EOD
# x median min max
250 0.561758278 0.504918698 0.788499536 
1000 2.010378545 1.943505488 2.053548801 
EOD
$E2 << EOD
# x median min max
250 0.531161712 0.503468379 0.688409077 
1000 1.212216007 1.194839509 1.226881627 
EOD
$E3 << EOD
# x median min max
250 0.681699252 0.668732904 0.920512305 
1000 2.675164252 2.308450091 2.795080187 
EOD
$E4 << EOD
# x median min max
250 0.601034647 0.54768715 0.724391208 
1000 1.898574632 1.877241519 1.949320561 
EOD
plot $E0 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#e6550d" title "Spool", \
     $E1 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#3182bd" title "RocksDB", \
     $E2 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#31a354" title "LMDB", \
     $E3 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#756bb1" title "SQLite", \
     $E4 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#8c6d31" title "LevelDB"
