# jetstream.png, drawn by spool-bench plot from docs/images/bench/results.json.
# To draw it again: cd to this directory, then gnuplot jetstream.gp
set encoding utf8
set terminal pngcairo size 1000,560 noenhanced font "Sans,11"
small_font = ",9"
set output "jetstream.png"
set border 3
set tics nomirror
set grid ytics lt 1 lc rgb "#e0e0e0"
set title "JetStream in and out: stream → W4's step → totals published"
set ylabel "events/s"
set key off
set xrange [-0.6:2.6]
set xtics scale 0 ("Spool" 0, "the limit: bare libnats loop" 1, "hand-built peer: libnats + RocksDB" 2)
set yrange [0:92340.16039281907]
set ytics ("0" 0, "20k" 20000, "40k" 40000, "60k" 60000, "80k" 80000)
set boxwidth 0.6
set style fill solid 0.9 border rgb "#404040"
$BARS << EOD
# x median min max colour label
0 64085.85975349324 59891.88551602838 70392.7474791523 15095053 64.1k
1 74027.99833504813 62570.81590919521 80295.79164592964 12369186 74k
2 40701.070625972556 38506.064860780076 46076.48692221439 14907330 40.7k
EOD
plot $BARS using 1:2:5 with boxes lc rgb variable, \
     $BARS using 1:2:3:4:2 with candlesticks whiskerbars 0.3 lc rgb "#202020" lw 1.5 fill empty, \
     $BARS using 1:4:6 with labels offset 0,0.8
