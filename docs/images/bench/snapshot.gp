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
set yrange [0:2.3723233539499997]
set ytics ("0" 0, "0.5" 0.5, "1" 1, "1.5" 1.5, "2" 2)
set boxwidth 0.6
set style fill solid 0.9 border rgb "#404040"
$BARS << EOD
# x median min max colour label
0 0.531100696 0.491717214 0.656280035 15095053 0.531
1 0.05012129 0.048230813 0.059059483 15095053 0.0501
2 0.511150913 0.503852269 0.517977802 3244733 0.511
3 0.003212522 0.002753107 0.003344132 3244733 0.00321
4 1.38442314 1.340291044 1.736753105 3253076 1.38
5 0.182147283 0.181960578 0.197433042 3253076 0.182
6 1.626742013 1.555672551 2.062889873 7695281 1.63
7 0.502441735 0.478775804 0.64933368 7695281 0.502
8 0.577758327 0.571009989 0.581375787 9202993 0.578
9 0.020403034 0.012506111 0.021237351 9202993 0.0204
EOD
plot $BARS using 1:2:5 with boxes lc rgb variable, \
     $BARS using 1:2:3:4:2 with candlesticks whiskerbars 0.3 lc rgb "#202020" lw 1.5 fill empty, \
     $BARS using 1:4:6 with labels offset 0,0.8
