# snapshot.png, drawn by spool-bench plot from results.json.
# To draw it again: cd to this directory, then gnuplot snapshot.gp
set encoding utf8
set terminal pngcairo size 1000,560 noenhanced font "Sans,11"
small_font = ",9"
set output "snapshot.png"
set border 3
set tics nomirror
set grid ytics lt 1 lc rgb "#e0e0e0"
set title "Snapshot of the newest version, restore to an older one"
set ylabel "s"
set key off
set xrange [-0.6:9.6]
set xtics scale 0 rotate by 30 right ("Spool (restore_s)" 0, "Spool (snapshot_s)" 1, "RocksDB (restore_s)" 2, "RocksDB (snapshot_s)" 3, "LMDB (restore_s)" 4, "LMDB (snapshot_s)" 5, "SQLite (restore_s)" 6, "SQLite (snapshot_s)" 7, "LevelDB (restore_s)" 8, "LevelDB (snapshot_s)" 9)
set yrange [0:1.1094465115499998]
set ytics ("0" 0, "0.2" 0.2, "0.4" 0.4, "0.6" 0.6000000000000001, "0.8" 0.8, "1" 1)
set boxwidth 0.6
set style fill solid 0.9 border rgb "#404040"
$BARS << EOD
# x median min max colour label
0 0.337349325 0.314647136 0.350789467 15095053 0.337
1 0.051264913 0.051012593 0.055636836 15095053 0.0513
2 0.398117055 0.388096896 0.407780505 3244733 0.398
3 0.002582666 0.002537007 0.003160858 3244733 0.00258
4 0.493966966 0.458751394 0.4968806 3253076 0.494
5 0.141222262 0.130320133 0.144639202 3253076 0.141
6 0.96246145 0.929335494 0.964736097 7695281 0.962
7 0.279878984 0.275042913 0.279899394 7695281 0.28
8 0.271253333 0.265491727 0.287907507 9202993 0.271
9 0.007840309 0.007782478 0.00801866 9202993 0.00784
EOD
plot $BARS using 1:2:5 with boxes lc rgb variable, \
     $BARS using 1:2:3:4:2 with candlesticks whiskerbars 0.3 lc rgb "#202020" lw 1.5 fill empty, \
     $BARS using 1:4:6 with labels offset 0,0.8
