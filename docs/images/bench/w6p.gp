# w6p.png, drawn by spool-bench plot from docs/images/bench/results.json.
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
set yrange [0:0.0156507732]
set ytics ("0" 0, "0.005" 0.005, "0.01" 0.01, "0.015" 0.015)
set boxwidth 0.6
set style fill solid 0.9 border rgb "#404040"
$BARS << EOD
# x median min max colour label
0 0.010462043 0.010179897 0.011935794000000001 16616764 0.0105
1 0.011090257 0.009644859 0.011122159 16616764 0.0111
2 0.011628332000000002 0.011348589999999999 0.013609368 16616764 0.0116
3 0.012397034 0.012346668 0.013351921 3244733 0.0124
EOD
plot $BARS using 1:2:5 with boxes lc rgb variable, \
     $BARS using 1:2:3:4:2 with candlesticks whiskerbars 0.3 lc rgb "#202020" lw 1.5 fill empty, \
     $BARS using 1:4:6 with labels offset 0,0.8
