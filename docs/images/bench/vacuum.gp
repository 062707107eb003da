# vacuum.png, drawn by spool-bench plot from results.json.
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
set yrange [0:2.44397153025]
set ytics ("0" 0, "0.5" 0.5, "1" 1, "1.5" 1.5, "2" 2)
set boxwidth 0.6
set style fill solid 0.9 border rgb "#404040"
$BARS << EOD
# x median min max colour label
0 0.081358524 0.070649801 0.094236136 15095053 0.0814
1 2.032639289 1.99765669 2.125192635 3244733 2.03
2 0.552193373 0.541230804 0.555858501 3253076 0.552
3 1.636595294 1.577705778 1.704019248 7695281 1.64
4 1.586038736 1.535857491 1.670675282 9202993 1.59
EOD
plot $BARS using 1:2:5 with boxes lc rgb variable, \
     $BARS using 1:2:3:4:2 with candlesticks whiskerbars 0.3 lc rgb "#202020" lw 1.5 fill empty, \
     $BARS using 1:4:6 with labels offset 0,0.8
