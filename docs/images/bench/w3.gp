# w3.png, drawn by spool-bench plot from results.json.
# To draw it again: cd to this directory, then gnuplot w3.gp
set encoding utf8
set terminal pngcairo size 1000,560 noenhanced font "Sans,11"
small_font = ",9"
set output "w3.png"
set border 3
set tics nomirror
set grid ytics lt 1 lc rgb "#e0e0e0"
set title "W3: batches of 1,000 records, 1 durable commit per batch"
set ylabel "records/s"
set key off
set xrange [-0.6:5.6]
set bmargin 5
set xtics scale 0 ("raw sequential\nwrite + 1\nfdatasync" 0, "Spool" 1, "RocksDB" 2, "LMDB" 3, "SQLite" 4, "LevelDB" 5)
set yrange [0:8618277.284642963]
set ytics ("0" 0, "2M" 2000000, "4M" 4000000, "6M" 6000000, "8M" 8000000)
set boxwidth 0.6
set style fill solid 0.9 border rgb "#404040"
$BARS << EOD
# x median min max colour label
0 6328190.978280861 4171027.6366389743 7494154.160559099 10395294 6.33M
1 1693560.1908015718 1640813.2649270953 1935060.7674340897 15095053 1.69M
2 829292.7134318055 824273.9471957713 848642.9627041004 3244733 829k
3 1181238.7208682464 1146220.7144440135 1327758.0851005448 3253076 1.18M
4 629544.867755268 588554.8610581383 630675.9934787207 7695281 630k
5 1150577.7006913219 1094540.5132442976 1244143.3352155979 9202993 1.15M
EOD
plot $BARS using 1:2:5 with boxes lc rgb variable, \
     $BARS using 1:2:3:4:2 with candlesticks whiskerbars 0.3 lc rgb "#202020" lw 1.5 fill empty, \
     $BARS using 1:4:6 with labels offset 0,0.8
