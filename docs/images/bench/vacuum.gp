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
set yrange [0:3.5400349857999998]
set ytics ("0" 0, "1" 1, "2" 2, "3" 3)
set boxwidth 0.6
set style fill solid 0.9 border rgb "#404040"
$BARS << EOD
# x median min max colour label
0 0.521022623 0.474050114 0.532386302 15095053 0.521
1 2.461453883 2.358064958 2.851046837 3244733 2.46
2 0.789168489 0.776888558 1.128828312 3253076 0.789
3 2.427284189 2.377799631 3.078291292 7695281 2.43
4 2.539563116 2.038497078 2.746535827 9202993 2.54
EOD
plot $BARS using 1:2:5 with boxes lc rgb variable, \
     $BARS using 1:2:3:4:2 with candlesticks whiskerbars 0.3 lc rgb "#202020" lw 1.5 fill empty, \
     $BARS using 1:4:6 with labels offset 0,0.8
