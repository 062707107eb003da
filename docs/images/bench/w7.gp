# w7.png, drawn by spool-bench plot from results.json.
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
set yrange [0:13.586679297549999]
set ytics ("0" 0, "2.5" 2.5, "5" 5, "7.5" 7.5, "10" 10, "12.5" 12.5)
set boxwidth 0.6
set style fill solid 0.9 border rgb "#404040"
$BARS << EOD
# x median min max colour label
0 0.007911749 0.005263787 0.009061687 15095053 0.00791
1 11.65433664 11.232864464 11.814503737 3244733 11.7
2 0.638982434 0.578068268 0.641674725 7695281 0.639
3 7.02753016 6.812559134 7.166081089 9202993 7.03
EOD
plot $BARS using 1:2:5 with boxes lc rgb variable, \
     $BARS using 1:2:3:4:2 with candlesticks whiskerbars 0.3 lc rgb "#202020" lw 1.5 fill empty, \
     $BARS using 1:4:6 with labels offset 0,0.8
