# w1-latency.png, drawn by spool-bench plot from results.json.
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
set yrange [0:1361.0779]
set ytics ("0" 0, "250" 250, "500" 500, "750" 750, "1000" 1000, "1250" 1250)
set boxwidth 0.36000000000000004
set style fill solid 0.9 border rgb "#404040"
$P0 << EOD
# x median min max label
-0.2 150.169 142.846 161.338 150
0.8 239.26 216.389 245.876 239
1.8 148.292 143.391 152.965 148
2.8 253.942 217.08 255.662 254
3.8 367.769 359.703 382.273 368
4.8 172.928 150.79 210.498 173
5.8 211.731 210.143 214.431 212
EOD
$P1 << EOD
# x median min max label
0.2 386.495 368.456 693.347 386
1.2 741.774 534.133 742.541 742
2.2 503.005 411.188 554.334 503
3.2 819.808 593.933 879.976 820
4.2 1067.38 969.389 1183.546 1067
5.2 638.852 506.73 736.076 639
6.2 535.746 421.706 716.569 536
EOD
plot $P0 using 1:2 with boxes lc rgb "#9ecae1" title "p50", \
     $P0 using 1:2:3:4:2 with candlesticks whiskerbars 0.3 lc rgb "#202020" lw 1.5 fill empty notitle, \
     $P0 using 1:4:5 with labels font small_font offset 0,0.7 notitle, \
     $P1 using 1:2 with boxes lc rgb "#4292c6" title "p99", \
     $P1 using 1:2:3:4:2 with candlesticks whiskerbars 0.3 lc rgb "#202020" lw 1.5 fill empty notitle, \
     $P1 using 1:4:5 with labels font small_font offset 0,0.7 notitle
