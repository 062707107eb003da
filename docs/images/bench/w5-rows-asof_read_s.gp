# w5-rows-asof_read_s.png, drawn by spool-bench plot from docs/images/bench/results.json.
# To draw it again: cd to this directory, then gnuplot w5-rows-asof_read_s.gp
set encoding utf8
set terminal pngcairo size 1000,560 noenhanced font "Sans,11"
small_font = ",9"
set output "w5-rows-asof_read_s.png"
set border 3
set tics nomirror
set grid ytics lt 1 lc rgb "#e0e0e0"
set title "W5 scaling: full reads against the table's rows — asof read"
set ylabel "s"
set key outside top center horizontal
set grid xtics
set xlabel "rows"
set logscale x
set xrange [8000:1250000]
set xtics (10000, 100000, 1000000)
set logscale y
set yrange [0.0001:1.8338049328000001]
$E0 << EOD
# x median min max
10000 0.001164956 0.001065587 0.001625602 
100000 0.013281887 0.013084501 0.017571287 
1000000 0.180806322 0.139509431 0.185754937 
EOD
$E1 << EOD
# x median min max
10000 0.003219524 0.003203264 0.005139858 
100000 0.072476317 0.072045177 0.102647775 
1000000 0.772612083 0.674860462 1.146128083 
EOD
$E2 << EOD
# x median min max
10000 0.001146571 0.000984122 0.001185165 
100000 0.018274686 0.015318662 0.021971999 
1000000 0.161710235 0.158598856 0.212347306 
EOD
$E3 << EOD
# x median min max
10000 0.004192176 0.003862788 0.005293069 
100000 0.042422533 0.042315591 0.069232667 
1000000 0.412289812 0.406788286 0.415922673 
EOD
$E4 << EOD
# x median min max
10000 0.001762473 0.001758225 0.00256538 
100000 0.036832098 0.036255703 0.059300984 
1000000 0.403696375 0.397213131 0.419328573 
EOD
plot $E0 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#e6550d" title "Spool", \
     $E1 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#3182bd" title "RocksDB", \
     $E2 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#31a354" title "LMDB", \
     $E3 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#756bb1" title "SQLite", \
     $E4 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#8c6d31" title "LevelDB"
