# snapshot.png, drawn by spool-bench plot from docs/images/bench/results.json.
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
set yrange [0:2.3907789219499995]
set ytics ("0" 0, "0.5" 0.5, "1" 1, "1.5" 1.5, "2" 2)
set boxwidth 0.6
set style fill solid 0.9 border rgb "#404040"
$BARS << EOD
# x median min max colour label
0 0.463176959 0.458603268 0.480854148 15095053 0.463
1 0.04585836 0.045633933 0.04841835 15095053 0.0459
2 0.493876151 0.483323095 0.577422958 3244733 0.494
3 0.002842728 0.002593343 0.003528242 3244733 0.00284
4 1.284747869 1.258678045 1.35896492 3253076 1.28
5 0.185011373 0.174555932 0.187503533 3253076 0.185
6 1.953099199 1.495281444 2.078938193 7695281 1.95
7 0.581358856 0.496411684 0.622952273 7695281 0.581
8 0.398293175 0.361569723 0.574270212 9202993 0.398
9 0.010853037 0.010342045 0.017061507 9202993 0.0109
EOD
plot $BARS using 1:2:5 with boxes lc rgb variable, \
     $BARS using 1:2:3:4:2 with candlesticks whiskerbars 0.3 lc rgb "#202020" lw 1.5 fill empty, \
     $BARS using 1:4:6 with labels offset 0,0.8
