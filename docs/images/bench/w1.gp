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
set yrange [0:8541.762708033744]
set ytics ("0" 0, "2000" 2000, "4000" 4000, "6000" 6000, "8000" 8000)
set boxwidth 0.6
set style fill solid 0.9 border rgb "#404040"
$BARS << EOD
# x median min max colour label
0 6401.225612454231 6320.53014806795 6603.578134878835 10395294 6401
1 5489.434954712769 4567.995828540927 5523.640723558468 10395294 5489
2 7348.852712510368 6210.459369554341 7427.619746116299 15095053 7349
3 5639.612036695706 5181.611203018155 5701.491170623452 3244733 5640
4 3130.218867678167 3042.4895132228276 3215.816925572251 3253076 3130
5 5426.817076451765 5255.331221225876 6078.9450792263115 7695281 5427
6 4904.966727051524 4463.502527010393 5644.2889581811405 9202993 4905
EOD
plot $BARS using 1:2:5 with boxes lc rgb variable, \
     $BARS using 1:2:3:4:2 with candlesticks whiskerbars 0.3 lc rgb "#202020" lw 1.5 fill empty, \
     $BARS using 1:4:6 with labels offset 0,0.8
