# w4.png, drawn by spool-bench plot from results.json.
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
set yrange [0:527728.5417246001]
set ytics ("0" 0, "100k" 100000, "200k" 200000, "300k" 300000, "400k" 400000, "500k" 500000)
set boxwidth 0.6
set style fill solid 0.9 border rgb "#404040"
$BARS << EOD
# x median min max colour label
0 202610.83265381373 190352.7405601342 208092.71637567788 15095053 203k
1 107229.70198063907 99786.75948687342 107638.29696421673 3244733 107k
2 422882.92585997935 402025.45651322295 458894.384108348 3253076 423k
3 398624.99251780886 393799.31242364395 409997.60294901434 7695281 399k
4 333750.2151645918 321918.5148523674 345580.05579535145 9202993 334k
EOD
plot $BARS using 1:2:5 with boxes lc rgb variable, \
     $BARS using 1:2:3:4:2 with candlesticks whiskerbars 0.3 lc rgb "#202020" lw 1.5 fill empty, \
     $BARS using 1:4:6 with labels offset 0,0.8
