# latency-latency.png, drawn by spool-bench plot from latency.json.
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
set yrange [0:6564.770399999999]
set ytics ("0" 0, "2000" 2000, "4000" 4000, "6000" 6000)
set boxwidth 0.36000000000000004
set style fill solid 0.9 border rgb "#404040"
$P0 << EOD
# x median min max label
-0.2 2696.661 2675.014 2763.148 2697
0.8 2933.593 2882.862 3039.326 2934
1.8 3137.166 3128.914 3190.731 3137
2.8 2868.418 2761.248 3034.459 2868
3.8 2866.223 2801.317 2875.345 2866
EOD
$P1 << EOD
# x median min max label
0.2 5522.691 5443.696 5583.477 5523
1.2 5570.81 5480.524 5605.881 5571
2.2 5651.672 5585.62 5708.225 5652
3.2 5568.082 5537.938 5708.496 5568
4.2 5517.709 5469.821 5602.148 5518
EOD
plot $P0 using 1:2 with boxes lc rgb "#9ecae1" title "p50", \
     $P0 using 1:2:3:4:2 with candlesticks whiskerbars 0.3 lc rgb "#202020" lw 1.5 fill empty notitle, \
     $P0 using 1:4:5 with labels font small_font offset 0,0.7 notitle, \
     $P1 using 1:2 with boxes lc rgb "#4292c6" title "p99", \
     $P1 using 1:2:3:4:2 with candlesticks whiskerbars 0.3 lc rgb "#202020" lw 1.5 fill empty notitle, \
     $P1 using 1:4:5 with labels font small_font offset 0,0.7 notitle
