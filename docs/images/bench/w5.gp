# w5.png, drawn by spool-bench plot from results.json.
# To draw it again: cd to this directory, then gnuplot w5.gp
set encoding utf8
set terminal pngcairo size 1000,560 noenhanced font "Sans,11"
small_font = ",9"
set output "w5.png"
set border 3
set tics nomirror
set grid ytics lt 1 lc rgb "#e0e0e0"
set title "W5: time travel, full read of a 100,000-row table"
set ylabel "s"
set key off
set xrange [-0.6:9.6]
set xtics scale 0 rotate by 30 right ("Spool table (asof_read_s)" 0, "Spool table (latest_read_s)" 1, "RocksDB (asof_read_s)" 2, "RocksDB (latest_read_s)" 3, "LMDB (asof_read_s)" 4, "LMDB (latest_read_s)" 5, "SQLite (asof_read_s)" 6, "SQLite (latest_read_s)" 7, "LevelDB (asof_read_s)" 8, "LevelDB (latest_read_s)" 9)
set yrange [0:0.08056384224999999]
set ytics ("0" 0, "0.02" 0.02, "0.04" 0.04, "0.06" 0.06, "0.08" 0.08)
set boxwidth 0.6
set style fill solid 0.9 border rgb "#404040"
$BARS << EOD
# x median min max colour label
0 0.015305573 0.012855656 0.015619683 15095053 0.0153
1 0.007025667 0.006621489 0.010059926 15095053 0.00703
2 0.067494286 0.064433596 0.069119697 3244733 0.0675
3 0.067047648 0.065224895 0.070055515 3244733 0.067
4 0.013094124 0.012340202 0.013968018 3253076 0.0131
5 0.012693083 0.012052848 0.01343143 3253076 0.0127
6 0.036606032 0.034121838 0.037263459 7695281 0.0366
7 0.035671825 0.033442963 0.036623024 7695281 0.0357
8 0.043929595 0.040939467 0.046257801 9202993 0.0439
9 0.043752435 0.040053256 0.044921355 9202993 0.0438
EOD
plot $BARS using 1:2:5 with boxes lc rgb variable, \
     $BARS using 1:2:3:4:2 with candlesticks whiskerbars 0.3 lc rgb "#202020" lw 1.5 fill empty, \
     $BARS using 1:4:6 with labels offset 0,0.8
