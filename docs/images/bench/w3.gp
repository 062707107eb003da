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
set yrange [0:9016293.917461613]
set ytics ("0" 0, "2M" 2000000, "4M" 4000000, "6M" 6000000, "8M" 8000000)
set boxwidth 0.6
set style fill solid 0.9 border rgb "#404040"
$BARS << EOD
# x median min max colour label
0 5825185.0538070025 4349379.249818798 7840255.580401404 10395294 5.83M
1 2271224.359692539 1688797.567873454 2526339.817890588 10395294 2.27M
2 1578430.5171634778 1515587.5439470469 2088079.6602056276 15095053 1.58M
3 702983.0179981097 606802.4161301806 747709.9029869469 3244733 703k
4 992699.2755718468 880708.160663306 1021598.2872205941 3253076 993k
5 416017.93012650585 376688.4297954955 529235.3541871672 7695281 416k
6 942897.8697546405 857544.8810434493 1031680.1915537943 9202993 943k
EOD
plot $BARS using 1:2:5 with boxes lc rgb variable, \
     $BARS using 1:2:3:4:2 with candlesticks whiskerbars 0.3 lc rgb "#202020" lw 1.5 fill empty, \
     $BARS using 1:4:6 with labels offset 0,0.8
