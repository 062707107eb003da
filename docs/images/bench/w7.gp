# w7.png, drawn by spool-bench plot from docs/images/bench/results.json.
# To draw it again: cd to this directory, then gnuplot w7.gp
set encoding utf8
set terminal pngcairo size 1000,560 noenhanced font "Sans,11"
small_font = ",9"
set output "w7.png"
set border 3
set tics nomirror
set grid ytics lt 1 lc rgb "#e0e0e0"
set title "W7: reopen after the writer was killed"
set ylabel "s"
set key off
set xrange [-0.6:3.6]
set xtics scale 0 ("Spool" 0, "RocksDB" 1, "SQLite" 2, "LevelDB" 3)
set yrange [0:20.274766346899998]
set ytics ("0" 0, "5" 5, "10" 10, "15" 15, "20" 20)
set boxwidth 0.6
set style fill solid 0.9 border rgb "#404040"
$BARS << EOD
# x median min max colour label
0 0.00544517 0.005331553 0.006594636 15095053 0.00545
1 17.024718219 12.870848816 17.630231606 3244733 17
2 1.040437218 1.01014964 1.060747004 7695281 1.04
3 10.645446203 10.481588404 10.668408666 9202993 10.6
EOD
plot $BARS using 1:2:5 with boxes lc rgb variable, \
     $BARS using 1:2:3:4:2 with candlesticks whiskerbars 0.3 lc rgb "#202020" lw 1.5 fill empty, \
     $BARS using 1:4:6 with labels offset 0,0.8
