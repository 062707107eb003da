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
set yrange [0:4294.37025]
set ytics ("0" 0, "1000" 1000, "2000" 2000, "3000" 3000, "4000" 4000)
set boxwidth 0.6
set style fill solid 0.9 border rgb "#404040"
$BARS << EOD
# x median min max colour label
0 2656.444 2598.394 2707.602 15095053 2656
1 3047.688 2955.293 3283.486 3244733 3048
2 3319.785 3303.204 3734.235 3253076 3320
3 3180.962 2991.08 3732.731 7695281 3181
4 3114.085 2930.546 3445.154 9202993 3114
EOD
plot $BARS using 1:2:5 with boxes lc rgb variable, \
     $BARS using 1:2:3:4:2 with candlesticks whiskerbars 0.3 lc rgb "#202020" lw 1.5 fill empty, \
     $BARS using 1:4:6 with labels offset 0,0.8
