# latency-latency.png, drawn by spool-bench plot from docs/images/bench/results.json.
# To draw it again: cd to this directory, then gnuplot latency-latency.gp
set encoding utf8
set terminal pngcairo size 1000,560 noenhanced font "Sans,11"
small_font = ",9"
set output "latency-latency.png"
set border 3
set tics nomirror
set grid ytics lt 1 lc rgb "#e0e0e0"
set title "Latency: an event produced → visible in the output table, continuous mode — latency percentiles"
set ylabel "µs"
set key outside top center horizontal
set xrange [-0.6:4.6]
set xtics scale 0 ("Spool" 0, "RocksDB" 1, "LMDB" 2, "SQLite" 3, "LevelDB" 4)
set yrange [0:9593.288499999999]
set ytics ("0" 0, "2000" 2000, "4000" 4000, "6000" 6000, "8000" 8000)
set boxwidth 0.36000000000000004
set style fill solid 0.9 border rgb "#404040"
$P0 << EOD
# x median min max label
-0.2 2656.444 2598.394 2707.602 2656
0.8 3047.688 2955.293 3283.486 3048
1.8 3319.785 3303.204 3734.235 3320
2.8 3180.962 2991.08 3732.731 3181
3.8 3114.085 2930.546 3445.154 3114
EOD
$P1 << EOD
# x median min max label
0.2 5579.184 5516.635 5649.578 5579
1.2 5545.75 5500.063 5873.974 5546
2.2 6025.413 5766.24 7695.4 6025
3.2 6031.153 5572.981 8341.99 6031
4.2 5593.942 5539.789 6366.162 5594
EOD
plot $P0 using 1:2 with boxes lc rgb "#9ecae1" title "p50", \
     $P0 using 1:2:3:4:2 with candlesticks whiskerbars 0.3 lc rgb "#202020" lw 1.5 fill empty notitle, \
     $P0 using 1:4:5 with labels font small_font offset 0,0.7 notitle, \
     $P1 using 1:2 with boxes lc rgb "#4292c6" title "p99", \
     $P1 using 1:2:3:4:2 with candlesticks whiskerbars 0.3 lc rgb "#202020" lw 1.5 fill empty notitle, \
     $P1 using 1:4:5 with labels font small_font offset 0,0.7 notitle
