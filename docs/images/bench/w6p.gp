# w6p.png, drawn by spool-bench plot from results.json.
# To draw it again: cd to this directory, then gnuplot w6p.gp
set encoding utf8
set terminal pngcairo size 1000,560 noenhanced font "Sans,11"
small_font = ",9"
set output "w6p.png"
set border 3
set tics nomirror
set grid ytics lt 1 lc rgb "#e0e0e0"
set title "W6 pipeline: rewind tables, offsets and state to a point"
set ylabel "s"
set key off
set xrange [-0.6:3.6]
set bmargin 4
set xtics scale 0 ("Spool pipeline, ×1\nhistory" 0, "Spool pipeline, ×10\nhistory" 1, "Spool pipeline, ×100\nhistory" 2, "RocksDB checkpoint, the\ntable alone" 3)
set yrange [0:0.011801057349999998]
set ytics ("0" 0, "0.002" 0.002, "0.004" 0.004, "0.006" 0.006, "0.008" 0.008, "0.01" 0.01)
set boxwidth 0.6
set style fill solid 0.9 border rgb "#404040"
$BARS << EOD
# x median min max colour label
0 0.008582518999999999 0.007198492000000001 0.008603310000000001 16616764 0.00858
1 0.008347865 0.007467278999999999 0.008355367 16616764 0.00835
2 0.007871383000000001 0.006910807000000001 0.010261788999999999 16616764 0.00787
3 0.008158002 0.007456478 0.009709884 3244733 0.00816
EOD
plot $BARS using 1:2:5 with boxes lc rgb variable, \
     $BARS using 1:2:3:4:2 with candlesticks whiskerbars 0.3 lc rgb "#202020" lw 1.5 fill empty, \
     $BARS using 1:4:6 with labels offset 0,0.8
