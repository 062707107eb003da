# w3.png, drawn by spool-bench plot from docs/images/bench/results.json.
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
set xrange [-0.6:6.6]
set bmargin 5
set xtics scale 0 ("raw sequential\nwrite + 1\nfdatasync" 0, "raw, each\nbatch written\n+ fdatasync" 1, "Spool" 2, "RocksDB" 3, "LMDB" 4, "SQLite" 5, "LevelDB" 6)
set yrange [0:11180219.927469445]
set ytics ("0" 0, "2M" 2000000, "4M" 4000000, "6M" 6000000, "8M" 8000000, "10M" 10000000)
set boxwidth 0.6
set style fill solid 0.9 border rgb "#404040"
$BARS << EOD
# x median min max colour label
0 5829988.518419547 4689444.020644721 9721930.371712562 10395294 5.83M
1 2662445.8132205573 2607606.119510223 2668187.277268731 10395294 2.66M
2 1936631.164379666 1564536.1362194302 2130668.8677101065 15095053 1.94M
3 705459.4217183337 575608.3276173939 754634.2270884301 3244733 705k
4 933230.5987672987 924945.2445942524 999280.4171723138 3253076 933k
5 534692.8949611642 479137.04650428996 540335.1963717173 7695281 535k
6 1247085.6831288105 1022502.6451632179 1327419.384403765 9202993 1.25M
EOD
plot $BARS using 1:2:5 with boxes lc rgb variable, \
     $BARS using 1:2:3:4:2 with candlesticks whiskerbars 0.3 lc rgb "#202020" lw 1.5 fill empty, \
     $BARS using 1:4:6 with labels offset 0,0.8
