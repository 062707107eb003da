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
set yrange [0:0.023853899149999996]
set ytics ("0" 0, "0.005" 0.005, "0.01" 0.01, "0.015" 0.015, "0.02" 0.02)
set boxwidth 0.6
set style fill solid 0.9 border rgb "#404040"
$BARS << EOD
# x median min max colour label
0 0.011918734000000002 0.011842128000000002 0.012057187999999998 16616764 0.0119
1 0.010228148 0.010158967000000001 0.013480302999999999 16616764 0.0102
2 0.013022315 0.011804246000000001 0.020742521 16616764 0.013
3 0.016328122 0.011247206 0.016464842 3244733 0.0163
EOD
plot $BARS using 1:2:5 with boxes lc rgb variable, \
     $BARS using 1:2:3:4:2 with candlesticks whiskerbars 0.3 lc rgb "#202020" lw 1.5 fill empty, \
     $BARS using 1:4:6 with labels offset 0,0.8
