# history-updates-disk_mb_after.png, drawn by spool-bench plot from docs/images/bench/results.json.
# To draw it again: cd to this directory, then gnuplot history-updates-disk_mb_after.gp
set encoding utf8
set terminal pngcairo size 1000,560 noenhanced font "Sans,11"
small_font = ",9"
set output "history-updates-disk_mb_after.png"
set border 3
set tics nomirror
set grid ytics lt 1 lc rgb "#e0e0e0"
set title "History length: change feed and vacuum against the update commits — disk mb after"
set ylabel "MB"
set key outside top center horizontal
set grid xtics
set xlabel "update commits"
set xrange [212.5:1037.5]
set xtics (250, 1000)
set yrange [0:392.75786239999996]
set ytics ("0" 0, "100" 100, "200" 200, "300" 300)
$E0 << EOD
# x median min max
250 25.120768 25.120768 25.120768 
1000 37.720064 37.715968 37.720064 
EOD
$E1 << EOD
# x median min max
250 11.845632 11.845632 11.845632 
1000 16.408576 16.408576 16.408576 
EOD
$E2 << EOD
# x median min max
250 128.77824 128.77824 128.77824 
1000 338.681856 338.681856 338.681856 
EOD
$E3 << EOD
# x median min max
250 108.38016 108.38016 108.38016 
1000 341.52448 341.52448 341.528576 
EOD
$E4 << EOD
# x median min max
250 7.974912 7.974912 7.974912 
1000 12.754944 12.754944 12.75904 
EOD
plot $E0 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#e6550d" title "Spool", \
     $E1 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#3182bd" title "RocksDB", \
     $E2 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#31a354" title "LMDB", \
     $E3 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#756bb1" title "SQLite", \
     $E4 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#8c6d31" title "LevelDB"
