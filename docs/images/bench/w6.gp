# w6.png, drawn by spool-bench plot from results.json.
# To draw it again: cd to this directory, then gnuplot w6.gp
set encoding utf8
set terminal pngcairo size 1000,560 noenhanced font "Sans,11"
small_font = ",9"
set output "w6.png"
set border 3
set tics nomirror
set grid ytics lt 1 lc rgb "#e0e0e0"
set title "W6: rewind the table to v50 and reopen"
set ylabel "s"
set key off
set xrange [-0.6:4.6]
set xtics scale 0 ("Spool table" 0, "RocksDB" 1, "LMDB" 2, "SQLite" 3, "LevelDB" 4)
set yrange [0:0.3338606262]
set ytics ("0" 0, "0.1" 0.1, "0.2" 0.2, "0.3" 0.30000000000000004)
set boxwidth 0.6
set style fill solid 0.9 border rgb "#404040"
$BARS << EOD
# x median min max colour label
0 0.27131802 0.26322524 0.290313588 15095053 0.271
1 0.009200561 0.007679993 0.009880847 3244733 0.0092
2 0.07503388 0.061662514 0.094694113 3253076 0.075
3 0.0348669 0.034851891 0.038425759 7695281 0.0349
4 0.017583372 0.016050531 0.018422065 9202993 0.0176
EOD
plot $BARS using 1:2:5 with boxes lc rgb variable, \
     $BARS using 1:2:3:4:2 with candlesticks whiskerbars 0.3 lc rgb "#202020" lw 1.5 fill empty, \
     $BARS using 1:4:6 with labels offset 0,0.8
