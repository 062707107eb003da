# w4-latency.png, drawn by spool-bench plot from docs/images/bench/results.json.
# To draw it again: cd to this directory, then gnuplot w4-latency.gp
set encoding utf8
set terminal pngcairo size 1000,560 noenhanced font "Sans,11"
small_font = ",9"
set output "w4-latency.png"
set border 3
set tics nomirror
set grid ytics lt 1 lc rgb "#e0e0e0"
set title "W4: stream step, 1,000 events per durable step — latency percentiles"
set ylabel "µs"
set key outside top center horizontal
set xrange [-0.6:4.6]
set xtics scale 0 ("Spool" 0, "RocksDB" 1, "LMDB" 2, "SQLite" 3, "LevelDB" 4)
set yrange [0:15403.3185]
set ytics ("0" 0, "5000" 5000, "10k" 10000, "15k" 15000)
set boxwidth 0.36000000000000004
set style fill solid 0.9 border rgb "#404040"
$P0 << EOD
# x median min max label
-0.2 882.559 806.303 1095.194 883
0.8 10417.549 10154.528 11251.565 10.4k
1.8 2899.367 2714.294 2924.664 2899
2.8 2252.706 2249.139 2441.976 2253
3.8 2356.082 2319.112 2482.002 2356
EOD
$P1 << EOD
# x median min max label
0.2 4428.074 3670.072 4683.109 4428
1.2 12947.932 12724.737 13394.19 12.9k
2.2 3213.624 3153.94 3506.872 3214
3.2 3629.965 3449.813 4520.219 3630
4.2 6030.432 4921.813 6786.51 6030
EOD
plot $P0 using 1:2 with boxes lc rgb "#9ecae1" title "p50", \
     $P0 using 1:2:3:4:2 with candlesticks whiskerbars 0.3 lc rgb "#202020" lw 1.5 fill empty notitle, \
     $P0 using 1:4:5 with labels font small_font offset 0,0.7 notitle, \
     $P1 using 1:2 with boxes lc rgb "#4292c6" title "p99", \
     $P1 using 1:2:3:4:2 with candlesticks whiskerbars 0.3 lc rgb "#202020" lw 1.5 fill empty notitle, \
     $P1 using 1:4:5 with labels font small_font offset 0,0.7 notitle
