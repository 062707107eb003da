# w2.png, drawn by spool-bench plot from docs/images/bench/results.json.
# To draw it again: cd to this directory, then gnuplot w2.gp
set encoding utf8
set terminal pngcairo size 1000,560 noenhanced font "Sans,11"
small_font = ",9"
set output "w2.png"
set border 3
set tics nomirror
set grid ytics lt 1 lc rgb "#e0e0e0"
set title "W2: 4 writer threads, 1 record per durable commit"
set ylabel "commits/s"
set key off
set xrange [-0.6:4.6]
set xtics scale 0 ("Spool" 0, "RocksDB" 1, "LMDB" 2, "SQLite" 3, "LevelDB" 4)
set yrange [0:21229.229190630966]
set ytics ("0" 0, "5000" 5000, "10k" 10000, "15k" 15000, "20k" 20000)
set boxwidth 0.6
set style fill solid 0.9 border rgb "#404040"
$BARS << EOD
# x median min max colour label
0 17037.843121374295 15736.749163856946 18460.19929620084 15095053 17k
1 8149.945564007469 7667.437283089756 10033.85944935518 3244733 8150
2 2967.7812842619824 2696.424742686001 3425.83112895974 3253076 2968
3 5017.443947930373 4833.6299284104025 6575.937371530022 7695281 5017
4 10537.155894145657 10426.600713676526 12303.700434551258 9202993 10.5k
EOD
plot $BARS using 1:2:5 with boxes lc rgb variable, \
     $BARS using 1:2:3:4:2 with candlesticks whiskerbars 0.3 lc rgb "#202020" lw 1.5 fill empty, \
     $BARS using 1:4:6 with labels offset 0,0.8
