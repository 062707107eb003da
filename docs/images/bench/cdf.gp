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
set yrange [0:2907213.9657907374]
set ytics ("0" 0, "500k" 500000, "1M" 1000000, "1.5M" 1500000, "2M" 2000000, "2.5M" 2500000)
set boxwidth 0.6
set style fill solid 0.9 border rgb "#404040"
$BARS << EOD
# x median min max colour label
0 2513686.393993697 2511352.569289473 2528012.1441658586 15095053 2.51M
1 255784.34294107754 222876.6733235174 262349.9528469247 3244733 256k
2 1507970.6957864254 1390520.626218183 1535682.2371229127 3253076 1.51M
3 294088.1828827596 267667.92744327633 445878.66966338153 7695281 294k
4 461189.25258401455 329111.74566415435 468015.19128637336 9202993 461k
EOD
plot $BARS using 1:2:5 with boxes lc rgb variable, \
     $BARS using 1:2:3:4:2 with candlesticks whiskerbars 0.3 lc rgb "#202020" lw 1.5 fill empty, \
     $BARS using 1:4:6 with labels offset 0,0.8
