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
set yrange [0:7572.296899999999]
set ytics ("0" 0, "2000" 2000, "4000" 4000, "6000" 6000)
set boxwidth 0.36000000000000004
set style fill solid 0.9 border rgb "#404040"
$P0 << EOD
# x median min max label
-0.2 2667.394 2624.212 3107.853 2667
0.8 3317.801 2925.325 3443.791 3318
1.8 3420.658 3150.113 3814.827 3421
2.8 3357.819 3088.015 3824.275 3358
3.8 2958.669 2949.56 3308.164 2959
EOD
$P1 << EOD
# x median min max label
0.2 5758.795 5642.024 6092.51 5759
1.2 5833.978 5491.688 6044.548 5834
2.2 6104.242 5608.269 6153.796 6104
3.2 6100.385 5516.815 6584.606 6100
4.2 5854.558 5518.809 5877.672 5855
EOD
plot $P0 using 1:2 with boxes lc rgb "#9ecae1" title "p50", \
     $P0 using 1:2:3:4:2 with candlesticks whiskerbars 0.3 lc rgb "#202020" lw 1.5 fill empty notitle, \
     $P0 using 1:4:5 with labels font small_font offset 0,0.7 notitle, \
     $P1 using 1:2 with boxes lc rgb "#4292c6" title "p99", \
     $P1 using 1:2:3:4:2 with candlesticks whiskerbars 0.3 lc rgb "#202020" lw 1.5 fill empty notitle, \
     $P1 using 1:4:5 with labels font small_font offset 0,0.7 notitle
