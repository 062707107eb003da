# w6.png, drawn by spool-bench plot from docs/images/bench/results.json.
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
set yrange [0:0.11125652575]
set ytics ("0" 0, "0.02" 0.02, "0.04" 0.04, "0.06" 0.06, "0.08" 0.08, "0.1" 0.1)
set boxwidth 0.6
set style fill solid 0.9 border rgb "#404040"
$BARS << EOD
# x median min max colour label
0 0.015744903 0.01308362 0.017485194 15095053 0.0157
1 0.012476645 0.012127451 0.013021612 3244733 0.0125
2 0.0947078 0.093630762 0.096744805 3253076 0.0947
3 0.054420318 0.047973875 0.06015599 7695281 0.0544
4 0.020287375 0.019479998 0.021009258 9202993 0.0203
EOD
plot $BARS using 1:2:5 with boxes lc rgb variable, \
     $BARS using 1:2:3:4:2 with candlesticks whiskerbars 0.3 lc rgb "#202020" lw 1.5 fill empty, \
     $BARS using 1:4:6 with labels offset 0,0.8
