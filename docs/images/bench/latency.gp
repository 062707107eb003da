# latency.png, drawn by spool-bench plot from latency.json.
# To draw it again: cd to this directory, then gnuplot latency.gp
set encoding utf8
set terminal pngcairo size 1000,560 noenhanced font "Sans,11"
small_font = ",9"
set output "latency.png"
set border 3
set tics nomirror
set grid ytics lt 1 lc rgb "#e0e0e0"
set title "Latency: an event produced → visible in the output table, continuous mode"
set ylabel "µs"
set key off
set xrange [-0.6:4.6]
set xtics scale 0 ("Spool" 0, "RocksDB" 1, "LMDB" 2, "SQLite" 3, "LevelDB" 4)
set yrange [0:3669.34065]
set ytics ("0" 0, "1000" 1000, "2000" 2000, "3000" 3000)
set boxwidth 0.6
set style fill solid 0.9 border rgb "#404040"
$BARS << EOD
# x median min max colour label
0 2696.661 2675.014 2763.148 15095053 2697
1 2933.593 2882.862 3039.326 3244733 2934
2 3137.166 3128.914 3190.731 3253076 3137
3 2868.418 2761.248 3034.459 7695281 2868
4 2866.223 2801.317 2875.345 9202993 2866
EOD
plot $BARS using 1:2:5 with boxes lc rgb variable, \
     $BARS using 1:2:3:4:2 with candlesticks whiskerbars 0.3 lc rgb "#202020" lw 1.5 fill empty, \
     $BARS using 1:4:6 with labels offset 0,0.8
