# cdf.png, drawn by spool-bench plot from docs/images/bench/results.json.
# To draw it again: cd to this directory, then gnuplot cdf.gp
set encoding utf8
set terminal pngcairo size 1000,560 noenhanced font "Sans,11"
small_font = ",9"
set output "cdf.png"
set border 3
set tics nomirror
set grid ytics lt 1 lc rgb "#e0e0e0"
set title "Change data feed: scan of 100 versions' changes"
set ylabel "rows/s"
set key off
set xrange [-0.6:4.6]
set xtics scale 0 ("Spool" 0, "RocksDB" 1, "LMDB" 2, "SQLite" 3, "LevelDB" 4)
set yrange [0:2667412.800014065]
set ytics ("0" 0, "500k" 500000, "1M" 1000000, "1.5M" 1500000, "2M" 2000000, "2.5M" 2500000)
set boxwidth 0.6
set style fill solid 0.9 border rgb "#404040"
$BARS << EOD
# x median min max colour label
0 2315068.614929637 1642633.4877479991 2319489.3913165787 15095053 2.32M
1 249842.24148885108 239661.1842732797 263289.02999542654 3244733 250k
2 1398453.064782611 1157579.27577488 1481025.0844032492 3253076 1.4M
3 425621.9565768988 260845.44971533192 435999.26274268667 7695281 426k
4 298728.2487224304 284588.69109370897 425533.53011025046 9202993 299k
EOD
plot $BARS using 1:2:5 with boxes lc rgb variable, \
     $BARS using 1:2:3:4:2 with candlesticks whiskerbars 0.3 lc rgb "#202020" lw 1.5 fill empty, \
     $BARS using 1:4:6 with labels offset 0,0.8
