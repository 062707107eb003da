# w6-history-disk_mb.png, drawn by spool-bench plot from docs/images/bench/results.json.
# To draw it again: cd to this directory, then gnuplot w6-history-disk_mb.gp
set encoding utf8
set terminal pngcairo size 1000,560 noenhanced font "Sans,11"
small_font = ",9"
set output "w6-history-disk_mb.png"
set border 3
set tics nomirror
set grid ytics lt 1 lc rgb "#e0e0e0"
set title "W6 scaling: rewind against the history after the point — disk"
set ylabel "MB"
set key outside top center horizontal
set grid xtics
set xlabel "history after the point (×)"
set logscale x
set xrange [0.8:125]
set xtics (1, 10, 100)
set logscale y
set yrange [10:1847.5384832]
set format y "%.0s%c"
$E0 << EOD
# x median min max
1 33.472512 33.472512 33.472512 
10 90.554368 90.554368 90.558464 
100 683.311104 683.282432 683.3152 
EOD
$E1 << EOD
# x median min max
1 15.003648 15.003648 15.003648 
10 44.474368 44.474368 44.474368 
100 318.64832 318.64832 318.64832 
EOD
$E2 << EOD
# x median min max
1 47.767552 47.767552 47.767552 
10 141.848576 141.848576 141.848576 
100 1154.711552 1154.711552 1154.711552 
EOD
$E3 << EOD
# x median min max
1 30.814208 30.814208 30.814208 
10 100.265984 100.265984 100.265984 
100 803.373056 803.373056 803.373056 
EOD
$E4 << EOD
# x median min max
1 12.988416 12.988416 12.988416 
10 39.276544 39.256064 39.276544 
100 323.60448 323.60448 323.956736 
EOD
plot $E0 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#e6550d" title "Spool", \
     $E1 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#3182bd" title "RocksDB", \
     $E2 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#31a354" title "LMDB", \
     $E3 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#756bb1" title "SQLite", \
     $E4 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#8c6d31" title "LevelDB"
