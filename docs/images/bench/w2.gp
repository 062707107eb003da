# w2.png, drawn by spool-bench plot from results.json.
# To draw it again: cd to this directory, then gnuplot w2.gp
set encoding utf8
set terminal pngcairo size 1000,560 noenhanced font "Sans,11"
small_font = ",9"
set output "w2.png"
set border 3
set tics nomirror
set grid ytics lt 1 lc rgb "#e0e0e0"
set title "W2: 4 writer threads, 1 record per durable commit"
set ylabel "commits/s"
set key off
set xrange [-0.6:4.6]
set xtics scale 0 ("Spool" 0, "RocksDB" 1, "LMDB" 2, "SQLite" 3, "LevelDB" 4)
set yrange [0:28006.672865006087]
set ytics ("0" 0, "5000" 5000, "10k" 10000, "15k" 15000, "20k" 20000, "25k" 25000)
set boxwidth 0.6
set style fill solid 0.9 border rgb "#404040"
$BARS << EOD
# x median min max colour label
0 22203.06349477343 20577.367959420502 24353.628578266165 15095053 22.2k
1 6861.998714066244 6412.990634033036 7902.181371762162 3244733 6862
2 2532.7657163568274 2510.119871754677 3075.78221440887 3253076 2533
3 4784.839456666953 4637.883245301996 5682.615851573894 7695281 4785
4 8041.044398250324 7804.636791847977 8328.161180882953 9202993 8041
EOD
plot $BARS using 1:2:5 with boxes lc rgb variable, \
     $BARS using 1:2:3:4:2 with candlesticks whiskerbars 0.3 lc rgb "#202020" lw 1.5 fill empty, \
     $BARS using 1:4:6 with labels offset 0,0.8
