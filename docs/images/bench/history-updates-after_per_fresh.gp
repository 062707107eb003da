# history-updates-after_per_fresh.png, drawn by spool-bench plot from docs/images/bench/results.json.
# To draw it again: cd to this directory, then gnuplot history-updates-after_per_fresh.gp
set encoding utf8
set terminal pngcairo size 1000,560 noenhanced font "Sans,11"
small_font = ",9"
set output "history-updates-after_per_fresh.png"
set border 3
set tics nomirror
set grid ytics lt 1 lc rgb "#e0e0e0"
set title "History length: change feed and vacuum against the update commits — after per fresh"
set ylabel "× fresh store"
set key outside top center horizontal
set grid xtics
set xlabel "update commits"
set xrange [212.5:1037.5]
set xtics (250, 1000)
set yrange [0:12.724011411889595]
set ytics ("0" 0, "2.5" 2.5, "5" 5, "7.5" 7.5, "10" 10, "12.5" 12.5)
$E0 << EOD
# x median min max
250 1.00888303997368 1.00888303997368 1.00888303997368 
1000 1.0815032295948326 1.0813762329732268 1.0832941176470587 
EOD
$E1 << EOD
# x median min max
250 0.7438271604938271 0.7438271604938271 0.7438271604938271 
1000 0.6446733183134857 0.6446733183134857 0.6446733183134857 
EOD
$E2 << EOD
# x median min max
250 3.4338138925294888 3.4338138925294888 3.4338138925294888 
1000 7.098729395604396 7.098729395604396 7.098729395604396 
EOD
$E3 << EOD
# x median min max
250 5.619027394351242 5.619027394351242 5.619027394351242 
1000 11.064225053078557 11.064225053078557 11.064357749469215 
EOD
$E4 << EOD
# x median min max
250 0.9093881363848669 0.9093881363848669 0.9093881363848669 
1000 0.7777222777222778 0.7777222777222778 0.777972027972028 
EOD
plot $E0 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#e6550d" title "Spool", \
     $E1 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#3182bd" title "RocksDB", \
     $E2 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#31a354" title "LMDB", \
     $E3 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#756bb1" title "SQLite", \
     $E4 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#8c6d31" title "LevelDB"
