# w4.png, drawn by spool-bench plot from docs/images/bench/results.json.
# To draw it again: cd to this directory, then gnuplot w4.gp
set encoding utf8
set terminal pngcairo size 1000,560 noenhanced font "Sans,11"
small_font = ",9"
set output "w4.png"
set border 3
set tics nomirror
set grid ytics lt 1 lc rgb "#e0e0e0"
set title "W4: stream step, 1,000 events per durable step"
set ylabel "events/s"
set key off
set xrange [-0.6:4.6]
set xtics scale 0 ("Spool" 0, "RocksDB" 1, "LMDB" 2, "SQLite" 3, "LevelDB" 4)
set yrange [0:1231851.2493555876]
set ytics ("0" 0, "250k" 250000, "500k" 500000, "750k" 750000, "1M" 1000000)
set boxwidth 0.6
set style fill solid 0.9 border rgb "#404040"
$BARS << EOD
# x median min max colour label
0 935156.7980676368 908683.6453418273 1071174.9994396416 15095053 935k
1 113527.16656364332 105882.60305457005 114645.97484904056 3244733 114k
2 367544.3389640177 264449.95371563855 391520.54819642217 3253076 368k
3 402471.7245552582 249308.36033260814 440471.02967639646 7695281 402k
4 368867.2146120285 239198.2979137085 425035.83206139767 9202993 369k
EOD
plot $BARS using 1:2:5 with boxes lc rgb variable, \
     $BARS using 1:2:3:4:2 with candlesticks whiskerbars 0.3 lc rgb "#202020" lw 1.5 fill empty, \
     $BARS using 1:4:6 with labels offset 0,0.8
