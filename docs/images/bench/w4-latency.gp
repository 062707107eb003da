# w4-latency.png, drawn by spool-bench plot from results.json.
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
set yrange [0:16408.032099999997]
set ytics ("0" 0, "5000" 5000, "10k" 10000, "15k" 15000)
set boxwidth 0.36000000000000004
set style fill solid 0.9 border rgb "#404040"
$P0 << EOD
# x median min max label
-0.2 4751.745 4628.859 4908.716 4752
0.8 9497.335 9280.47 10291.413 9497
1.8 2299.696 2126.153 2405.8 2300
2.8 2338.804 2338.042 2425.436 2339
3.8 2877.101 2720.515 2938.107 2877
EOD
$P1 << EOD
# x median min max label
0.2 9440.172 8489.543 13485.535 9440
1.2 14039.271 10803.903 14267.854 14k
2.2 3616.324 2910.819 3953.55 3616
3.2 4708.008 3470.034 7265.711 4708
4.2 6813.277 6394.634 8392.272 6813
EOD
plot $P0 using 1:2 with boxes lc rgb "#9ecae1" title "p50", \
     $P0 using 1:2:3:4:2 with candlesticks whiskerbars 0.3 lc rgb "#202020" lw 1.5 fill empty notitle, \
     $P0 using 1:4:5 with labels font small_font offset 0,0.7 notitle, \
     $P1 using 1:2 with boxes lc rgb "#4292c6" title "p99", \
     $P1 using 1:2:3:4:2 with candlesticks whiskerbars 0.3 lc rgb "#202020" lw 1.5 fill empty notitle, \
     $P1 using 1:4:5 with labels font small_font offset 0,0.7 notitle
