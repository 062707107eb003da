# history-updates-fresh_mb.png, drawn by spool-bench plot from docs/images/bench/results.json.
# To draw it again: cd to this directory, then gnuplot history-updates-fresh_mb.gp
set encoding utf8
set terminal pngcairo size 1000,560 noenhanced font "Sans,11"
small_font = ",9"
set output "history-updates-fresh_mb.png"
set border 3
set tics nomirror
set grid ytics lt 1 lc rgb "#e0e0e0"
set title "History length: change feed and vacuum against the update commits — fresh"
set ylabel "MB"
set key outside top center horizontal
set grid xtics
set xlabel "update commits"
set xrange [212.5:1037.5]
set xtics (250, 1000)
set yrange [0:54.8667392]
set ytics ("0" 0, "10" 10, "20" 20, "30" 30, "40" 40, "50" 50)
$E0 << EOD
# x median min max
250 24.899584 24.899584 24.899584 
1000 34.87744 34.816 34.881536 
EOD
$E1 << EOD
# x median min max
250 15.925248 15.925248 15.925248 
1000 25.452544 25.452544 25.452544 
EOD
$E2 << EOD
# x median min max
250 37.502976 37.502976 37.502976 
1000 47.710208 47.710208 47.710208 
EOD
$E3 << EOD
# x median min max
250 19.288064 19.288064 19.288064 
1000 30.867456 30.867456 30.867456 
EOD
$E4 << EOD
# x median min max
250 8.769536 8.769536 8.769536 
1000 16.400384 16.400384 16.400384 
EOD
plot $E0 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#e6550d" title "Spool", \
     $E1 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#3182bd" title "RocksDB", \
     $E2 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#31a354" title "LMDB", \
     $E3 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#756bb1" title "SQLite", \
     $E4 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#8c6d31" title "LevelDB"
