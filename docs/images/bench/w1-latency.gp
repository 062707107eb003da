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
set yrange [0:951.9745999999999]
set ytics ("0" 0, "200" 200, "400" 400, "600" 600, "800" 800)
set boxwidth 0.36000000000000004
set style fill solid 0.9 border rgb "#404040"
$P0 << EOD
# x median min max label
-0.2 144.324 138.914 150.786 144
0.8 173.68 171.466 210.35 174
1.8 129.277 127.352 155.066 129
2.8 166.867 164.522 185.082 167
3.8 302.405 292.597 322.224 302
4.8 166.506 146.529 177.887 167
5.8 176.465 166.016 209.409 176
EOD
$P1 << EOD
# x median min max label
0.2 229.968 205.972 253.993 230
1.2 278.39 244.946 358.953 278
2.2 212.695 182.668 221.1 213
3.2 250.457 247.13 264.132 250
4.2 536.08 465.205 712.175 536
5.2 376.026 299.68 383.299 376
6.2 335.138 271.306 827.804 335
EOD
plot $P0 using 1:2 with boxes lc rgb "#9ecae1" title "p50", \
     $P0 using 1:2:3:4:2 with candlesticks whiskerbars 0.3 lc rgb "#202020" lw 1.5 fill empty notitle, \
     $P0 using 1:4:5 with labels font small_font offset 0,0.7 notitle, \
     $P1 using 1:2 with boxes lc rgb "#4292c6" title "p99", \
     $P1 using 1:2:3:4:2 with candlesticks whiskerbars 0.3 lc rgb "#202020" lw 1.5 fill empty notitle, \
     $P1 using 1:4:5 with labels font small_font offset 0,0.7 notitle
