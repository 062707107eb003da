# w4.png, drawn by spool-bench plot from docs/images/bench/results.json.
# To draw it again: cd to this directory, then gnuplot w4.gp
set encoding utf8
set terminal pngcairo size 1000,560 noenhanced font "Sans,11"
small_font = ",9"
set output "w4.png"
set border 3
set tics nomirror
set grid ytics lt 1 lc rgb "#e0e0e0"
set title "W4: stream step, 1,000 events per durable step"
set ylabel "events/s"
set key off
set xrange [-0.6:4.6]
set xtics scale 0 ("Spool" 0, "RocksDB" 1, "LMDB" 2, "SQLite" 3, "LevelDB" 4)
set yrange [0:1141186.077857321]
set ytics ("0" 0, "200k" 200000, "400k" 400000, "600k" 600000, "800k" 800000, "1M" 1000000)
set boxwidth 0.6
set style fill solid 0.9 border rgb "#404040"
$BARS << EOD
# x median min max colour label
0 890341.7406270953 747052.1611204898 992335.7198759313 15095053 890k
1 96964.93767198286 92773.90923358458 99434.99094192724 3244733 97k
2 349628.5895493218 341597.47931394126 372226.1770426363 3253076 350k
3 425740.227775407 390728.19039931527 429690.4074598586 7695281 426k
4 376708.1551116849 365880.23192701524 407505.9831047204 9202993 377k
EOD
plot $BARS using 1:2:5 with boxes lc rgb variable, \
     $BARS using 1:2:3:4:2 with candlesticks whiskerbars 0.3 lc rgb "#202020" lw 1.5 fill empty, \
     $BARS using 1:4:6 with labels offset 0,0.8
