# vacuum.png, drawn by spool-bench plot from docs/images/bench/results.json.
# To draw it again: cd to this directory, then gnuplot vacuum.gp
set encoding utf8
set terminal pngcairo size 1000,560 noenhanced font "Sans,11"
small_font = ",9"
set output "vacuum.png"
set border 3
set tics nomirror
set grid ytics lt 1 lc rgb "#e0e0e0"
set title "Vacuum of the history below a floor"
set ylabel "s"
set key off
set xrange [-0.6:4.6]
set xtics scale 0 ("Spool" 0, "RocksDB" 1, "LMDB" 2, "SQLite" 3, "LevelDB" 4)
set yrange [0:3.7340651523999995]
set ytics ("0" 0, "1" 1, "2" 2, "3" 3)
set boxwidth 0.6
set style fill solid 0.9 border rgb "#404040"
$BARS << EOD
# x median min max colour label
0 0.503429234 0.46898091 0.504177889 15095053 0.503
1 2.292562447 2.276484972 3.068313872 3244733 2.29
2 0.761342283 0.732172041 0.765054706 3253076 0.761
3 3.190004063 2.221650645 3.247013176 7695281 3.19
4 2.022693322 1.824824481 2.779425555 9202993 2.02
EOD
plot $BARS using 1:2:5 with boxes lc rgb variable, \
     $BARS using 1:2:3:4:2 with candlesticks whiskerbars 0.3 lc rgb "#202020" lw 1.5 fill empty, \
     $BARS using 1:4:6 with labels offset 0,0.8
