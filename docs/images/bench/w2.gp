# w2.png, drawn by spool-bench plot from docs/images/bench/results.json.
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
set yrange [0:20616.36694900148]
set ytics ("0" 0, "5000" 5000, "10k" 10000, "15k" 15000, "20k" 20000)
set boxwidth 0.6
set style fill solid 0.9 border rgb "#404040"
$BARS << EOD
# x median min max colour label
0 15008.561209750249 13962.374904189312 17927.275607827374 15095053 15k
1 7472.955872451522 6950.015448928716 7766.669423756645 3244733 7473
2 2645.1426132521683 2554.1321539532755 3047.8355718956923 3253076 2645
3 4930.634092903901 4886.658691704837 7203.919294309166 7695281 4931
4 9498.589425512853 8319.89518422993 12758.175353446191 9202993 9499
EOD
plot $BARS using 1:2:5 with boxes lc rgb variable, \
     $BARS using 1:2:3:4:2 with candlesticks whiskerbars 0.3 lc rgb "#202020" lw 1.5 fill empty, \
     $BARS using 1:4:6 with labels offset 0,0.8
