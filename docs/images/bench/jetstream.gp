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
set yrange [0:94925.17332330649]
set ytics ("0" 0, "20k" 20000, "40k" 40000, "60k" 60000, "80k" 80000)
set boxwidth 0.6
set style fill solid 0.9 border rgb "#404040"
$BARS << EOD
# x median min max colour label
0 71647.38951618598 64438.28540090668 74107.54216545275 15095053 71.6k
1 75099.03612166985 69932.20178634439 82543.62897678826 12369186 75.1k
2 44225.723759060806 41626.058400082846 45235.542500037176 14907330 44.2k
EOD
plot $BARS using 1:2:5 with boxes lc rgb variable, \
     $BARS using 1:2:3:4:2 with candlesticks whiskerbars 0.3 lc rgb "#202020" lw 1.5 fill empty, \
     $BARS using 1:4:6 with labels offset 0,0.8
