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
set yrange [0:14299.128749999998]
set ytics ("0" 0, "2500" 2500, "5000" 5000, "7500" 7500, "10k" 10000, "12.5k" 12500)
set boxwidth 0.36000000000000004
set style fill solid 0.9 border rgb "#404040"
$P0 << EOD
# x median min max label
-0.2 794.763 723.877 894.391 795
0.8 9077.018 8569.222 9751.402 9077
1.8 2612.049 2552.585 3783.387 2612
2.8 2390.688 2140.131 3837.38 2391
3.8 2480.178 2116.617 3996.373 2480
EOD
$P1 << EOD
# x median min max label
0.2 4547.52 3313.483 4701.994 4548
1.2 11962.988 10955.602 12434.025 12k
2.2 5042.593 3013.141 5486.417 5043
3.2 4085.042 3988.468 5926.745 4085
4.2 6047.856 5972.562 7497.634 6048
EOD
plot $P0 using 1:2 with boxes lc rgb "#9ecae1" title "p50", \
     $P0 using 1:2:3:4:2 with candlesticks whiskerbars 0.3 lc rgb "#202020" lw 1.5 fill empty notitle, \
     $P0 using 1:4:5 with labels font small_font offset 0,0.7 notitle, \
     $P1 using 1:2 with boxes lc rgb "#4292c6" title "p99", \
     $P1 using 1:2:3:4:2 with candlesticks whiskerbars 0.3 lc rgb "#202020" lw 1.5 fill empty notitle, \
     $P1 using 1:4:5 with labels font small_font offset 0,0.7 notitle
