# e2e.png, drawn by spool-bench plot from docs/images/bench/results.json.
# To draw it again: cd to this directory, then gnuplot e2e.gp
set encoding utf8
set terminal pngcairo size 1000,560 noenhanced font "Sans,11"
small_font = ",9"
set output "e2e.png"
set border 3
set tics nomirror
set grid ytics lt 1 lc rgb "#e0e0e0"
set title "End to end: triggered update, topic → filter → aggregate → table"
set ylabel "events/s"
set key off
set xrange [-0.6:0.6]
set xtics scale 0 ("Spool" 0)
set yrange [0:1731668.913445846]
set ytics ("0" 0, "500k" 500000, "1M" 1000000, "1.5M" 1500000)
set boxwidth 0.6
set style fill solid 0.9 border rgb "#404040"
$BARS << EOD
# x median min max colour label
0 1485494.40023567 1037286.285559726 1505799.0551703009 15095053 1.49M
EOD
plot $BARS using 1:2:5 with boxes lc rgb variable, \
     $BARS using 1:2:3:4:2 with candlesticks whiskerbars 0.3 lc rgb "#202020" lw 1.5 fill empty, \
     $BARS using 1:4:6 with labels offset 0,0.8
