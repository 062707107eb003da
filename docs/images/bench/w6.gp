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
set yrange [0:0.12416758609999999]
set ytics ("0" 0, "0.025" 0.025, "0.05" 0.05, "0.075" 0.07500000000000001, "0.1" 0.1)
set boxwidth 0.6
set style fill solid 0.9 border rgb "#404040"
$BARS << EOD
# x median min max colour label
0 0.01318393 0.012013784 0.014152553 15095053 0.0132
1 0.017503829 0.012801844 0.020365503 3244733 0.0175
2 0.092164933 0.090161401 0.107971814 3253076 0.0922
3 0.054630388 0.051274964 0.055889964 7695281 0.0546
4 0.021582819 0.02057351 0.031377963 9202993 0.0216
EOD
plot $BARS using 1:2:5 with boxes lc rgb variable, \
     $BARS using 1:2:3:4:2 with candlesticks whiskerbars 0.3 lc rgb "#202020" lw 1.5 fill empty, \
     $BARS using 1:4:6 with labels offset 0,0.8
