# latency.png, drawn by spool-bench plot from docs/images/bench/results.json.
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
set yrange [0:4397.91625]
set ytics ("0" 0, "1000" 1000, "2000" 2000, "3000" 3000, "4000" 4000)
set boxwidth 0.6
set style fill solid 0.9 border rgb "#404040"
$BARS << EOD
# x median min max colour label
0 2667.394 2624.212 3107.853 15095053 2667
1 3317.801 2925.325 3443.791 3244733 3318
2 3420.658 3150.113 3814.827 3253076 3421
3 3357.819 3088.015 3824.275 7695281 3358
4 2958.669 2949.56 3308.164 9202993 2959
EOD
plot $BARS using 1:2:5 with boxes lc rgb variable, \
     $BARS using 1:2:3:4:2 with candlesticks whiskerbars 0.3 lc rgb "#202020" lw 1.5 fill empty, \
     $BARS using 1:4:6 with labels offset 0,0.8
