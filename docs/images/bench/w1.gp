# w1.png, drawn by spool-bench plot from docs/images/bench/results.json.
# To draw it again: cd to this directory, then gnuplot w1.gp
set encoding utf8
set terminal pngcairo size 1000,560 noenhanced font "Sans,11"
small_font = ",9"
set output "w1.png"
set border 3
set tics nomirror
set grid ytics lt 1 lc rgb "#e0e0e0"
set title "W1: one writer, 1 record per durable commit"
set ylabel "commits/s"
set key off
set xrange [-0.6:6.6]
set bmargin 5
set xtics scale 0 ("raw 4-KiB\noverwrite +\nfdatasync" 0, "raw 4-KiB\nappend +\nfdatasync" 1, "Spool" 2, "RocksDB" 3, "LMDB" 4, "SQLite" 5, "LevelDB" 6)
set yrange [0:8140.138858155244]
set ytics ("0" 0, "2000" 2000, "4000" 4000, "6000" 6000, "8000" 8000)
set boxwidth 0.6
set style fill solid 0.9 border rgb "#404040"
$BARS << EOD
# x median min max colour label
0 6136.796706969112 5397.621027841062 6680.229679496515 10395294 6137
1 4367.910429430802 3975.525327919502 5103.90919342802 10395294 4368
2 6612.651747673717 5754.800334040147 7078.381615787169 15095053 6613
3 5216.46144968218 4264.769536139294 5264.781028113278 3244733 5216
4 3118.954668569525 3113.8452124512232 3457.5817812846303 3253076 3119
5 6196.038111590018 5222.742488152459 6616.6500328054835 7695281 6196
6 5180.096166428832 4988.054535917607 5258.176620615722 9202993 5180
EOD
plot $BARS using 1:2:5 with boxes lc rgb variable, \
     $BARS using 1:2:3:4:2 with candlesticks whiskerbars 0.3 lc rgb "#202020" lw 1.5 fill empty, \
     $BARS using 1:4:6 with labels offset 0,0.8
