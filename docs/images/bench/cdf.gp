# cdf.png, drawn by spool-bench plot from results.json.
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
set yrange [0:2613665.1733547514]
set ytics ("0" 0, "500k" 500000, "1M" 1000000, "1.5M" 1500000, "2M" 2000000, "2.5M" 2500000)
set boxwidth 0.6
set style fill solid 0.9 border rgb "#404040"
$BARS << EOD
# x median min max colour label
0 2183811.5491179507 1901651.0210230562 2272752.324656306 15095053 2.18M
1 310439.554469569 286939.5685010803 311611.5584430064 3244733 310k
2 1790713.6384224687 1475342.4395206233 1954902.4339473657 3253076 1.79M
3 530788.7039777333 518644.61254926503 548466.0889834235 7695281 531k
4 465219.41063976707 417727.1453489748 495022.5433761276 9202993 465k
EOD
plot $BARS using 1:2:5 with boxes lc rgb variable, \
     $BARS using 1:2:3:4:2 with candlesticks whiskerbars 0.3 lc rgb "#202020" lw 1.5 fill empty, \
     $BARS using 1:4:6 with labels offset 0,0.8
