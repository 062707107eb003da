# w3k.png, drawn by spool-bench plot from docs/images/bench/results.json.
# To draw it again: cd to this directory, then gnuplot w3k.gp
set encoding utf8
set terminal pngcairo size 1000,560 noenhanced font "Sans,11"
small_font = ",9"
set output "w3k.png"
set border 3
set tics nomirror
set grid ytics lt 1 lc rgb "#e0e0e0"
set title "W3 keyed: W3's records as rows of a keyed table"
set ylabel "records/s"
set key off
set xrange [-0.6:5.6]
set bmargin 4
set xtics scale 0 ("Spool keyed table" 0, "Spool log only\n(plain W3)" 1, "RocksDB" 2, "LMDB" 3, "SQLite" 4, "LevelDB" 5)
set yrange [0:2554957.8004674]
set ytics ("0" 0, "500k" 500000, "1M" 1000000, "1.5M" 1500000, "2M" 2000000, "2.5M" 2500000)
set boxwidth 0.6
set style fill solid 0.9 border rgb "#404040"
$BARS << EOD
# x median min max colour label
0 358647.60061711166 340954.3580437675 385390.29183972743 15095053 359k
1 2008595.28135775 2008523.7167103111 2221702.4351890436 16616764 2.01M
2 779396.6875348507 754639.4762406303 852199.8756832125 3244733 779k
3 1168204.7214008986 1062929.9587889353 1219062.5201248173 3253076 1.17M
4 496187.1740797183 468509.90496174677 526330.8576335977 7695281 496k
5 1103988.0331229973 1032392.1113735649 1139039.3790089434 9202993 1.1M
EOD
plot $BARS using 1:2:5 with boxes lc rgb variable, \
     $BARS using 1:2:3:4:2 with candlesticks whiskerbars 0.3 lc rgb "#202020" lw 1.5 fill empty, \
     $BARS using 1:4:6 with labels offset 0,0.8
