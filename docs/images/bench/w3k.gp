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
set yrange [0:2445686.7781849224]
set ytics ("0" 0, "500k" 500000, "1M" 1000000, "1.5M" 1500000, "2M" 2000000)
set boxwidth 0.6
set style fill solid 0.9 border rgb "#404040"
$BARS << EOD
# x median min max colour label
0 316909.37980958755 289082.64819446043 358640.65181151003 15095053 317k
1 1862711.4197601993 1666523.4664715016 2126684.154943411 16616764 1.86M
2 740449.0773007112 728217.1741047421 783641.8061134829 3244733 740k
3 1092358.4056264637 1011070.6053646025 1198440.8500260513 3253076 1.09M
4 526502.1368689437 502360.8558942137 542745.3901469131 7695281 527k
5 1074314.14872921 1023166.5969195314 1272884.8093485162 9202993 1.07M
EOD
plot $BARS using 1:2:5 with boxes lc rgb variable, \
     $BARS using 1:2:3:4:2 with candlesticks whiskerbars 0.3 lc rgb "#202020" lw 1.5 fill empty, \
     $BARS using 1:4:6 with labels offset 0,0.8
