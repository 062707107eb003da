# w5.png, drawn by spool-bench plot from docs/images/bench/results.json.
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
set yrange [0:0.09409208229999999]
set ytics ("0" 0, "0.02" 0.02, "0.04" 0.04, "0.06" 0.06, "0.08" 0.08)
set boxwidth 0.6
set style fill solid 0.9 border rgb "#404040"
$BARS << EOD
# x median min max colour label
0 0.014217077 0.014100895 0.019852837 15095053 0.0142
1 0.011484939 0.011016889 0.016133512 15095053 0.0115
2 0.078677755 0.077834231 0.081819202 3244733 0.0787
3 0.079223954 0.078383355 0.080658323 3244733 0.0792
4 0.015923893 0.015488014 0.021610201 3253076 0.0159
5 0.016622242 0.01583299 0.022063613 3253076 0.0166
6 0.042605412 0.042535529 0.04515904 7695281 0.0426
7 0.04284128 0.04227861 0.045068967 7695281 0.0428
8 0.039317508 0.038000011 0.039515483 9202993 0.0393
9 0.038645298 0.038609159 0.040071921 9202993 0.0386
EOD
plot $BARS using 1:2:5 with boxes lc rgb variable, \
     $BARS using 1:2:3:4:2 with candlesticks whiskerbars 0.3 lc rgb "#202020" lw 1.5 fill empty, \
     $BARS using 1:4:6 with labels offset 0,0.8
