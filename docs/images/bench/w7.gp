# w7.png, drawn by spool-bench plot from docs/images/bench/results.json.
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
set yrange [0:16.0585732303]
set ytics ("0" 0, "5" 5, "10" 10, "15" 15)
set boxwidth 0.6
set style fill solid 0.9 border rgb "#404040"
$BARS << EOD
# x median min max colour label
0 0.006014272 0.005688282 0.006064657 15095053 0.00601
1 12.390272678 11.955038397 13.963976722 3244733 12.4
2 0.999146868 0.97348059 1.310223204 7695281 0.999
3 9.839609345 2.2233771 10.792958297 9202993 9.84
EOD
plot $BARS using 1:2:5 with boxes lc rgb variable, \
     $BARS using 1:2:3:4:2 with candlesticks whiskerbars 0.3 lc rgb "#202020" lw 1.5 fill empty, \
     $BARS using 1:4:6 with labels offset 0,0.8
