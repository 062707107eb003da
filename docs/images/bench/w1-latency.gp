# w1-latency.png, drawn by spool-bench plot from docs/images/bench/results.json.
# To draw it again: cd to this directory, then gnuplot w1-latency.gp
set encoding utf8
set terminal pngcairo size 1000,560 noenhanced font "Sans,11"
small_font = ",9"
set output "w1-latency.png"
set border 3
set tics nomirror
set grid ytics lt 1 lc rgb "#e0e0e0"
set title "W1: one writer, 1 record per durable commit — latency percentiles"
set ylabel "µs"
set key outside top center horizontal
set xrange [-0.6:6.6]
set bmargin 5
set xtics scale 0 ("raw 4-KiB\noverwrite +\nfdatasync" 0, "raw 4-KiB\nappend +\nfdatasync" 1, "Spool" 2, "RocksDB" 3, "LMDB" 4, "SQLite" 5, "LevelDB" 6)
set yrange [0:606.7561]
set ytics ("0" 0, "200" 200, "400" 400, "600" 600)
set boxwidth 0.36000000000000004
set style fill solid 0.9 border rgb "#404040"
$P0 << EOD
# x median min max label
-0.2 156.929 144.034 172.208 157
0.8 219.248 186.114 242.782 219
1.8 142.882 135.548 162.108 143
2.8 183.77 182.707 213.948 184
3.8 300.602 278.82 308.957 301
4.8 144.405 135.789 161.998 144
5.8 181.004 171.987 189.069 181
EOD
$P1 << EOD
# x median min max label
0.2 229.106 203.087 273.99 229
1.2 343.544 230.449 343.894 344
2.2 245.477 186.264 315.16 245
3.2 276.105 258.963 459.504 276
4.2 469.985 431.672 527.614 470
5.2 309.589 269.653 341.75 310
6.2 320.94 309.639 443.293 321
EOD
plot $P0 using 1:2 with boxes lc rgb "#9ecae1" title "p50", \
     $P0 using 1:2:3:4:2 with candlesticks whiskerbars 0.3 lc rgb "#202020" lw 1.5 fill empty notitle, \
     $P0 using 1:4:5 with labels font small_font offset 0,0.7 notitle, \
     $P1 using 1:2 with boxes lc rgb "#4292c6" title "p99", \
     $P1 using 1:2:3:4:2 with candlesticks whiskerbars 0.3 lc rgb "#202020" lw 1.5 fill empty notitle, \
     $P1 using 1:4:5 with labels font small_font offset 0,0.7 notitle
