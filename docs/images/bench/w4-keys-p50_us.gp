# w4-keys-p50_us.png, drawn by spool-bench plot from docs/images/bench/results.json.
# To draw it again: cd to this directory, then gnuplot w4-keys-p50_us.gp
set encoding utf8
set terminal pngcairo size 1000,560 noenhanced font "Sans,11"
small_font = ",9"
set output "w4-keys-p50_us.png"
set border 3
set tics nomirror
set grid ytics lt 1 lc rgb "#e0e0e0"
set title "W4 scaling: the stream step against the key space — p50"
set ylabel "µs"
set key outside top center horizontal
set grid xtics
set xlabel "keys"
set logscale x
set xrange [8000:125000]
set xtics (10000, 100000)
set yrange [0:22718.367299999998]
set ytics ("0" 0, "5000" 5000, "10k" 10000, "15k" 15000, "20k" 20000)
$E0 << EOD
# x median min max
10000 843.645 807.406 907.978 
100000 1792.71 1311.996 2109.093 
EOD
$E1 << EOD
# x median min max
10000 10143.768 9269.865 14842.807 
100000 10196.608 9906.235 15826.628 
EOD
$E2 << EOD
# x median min max
10000 2712.44 2536.174 4035.408 
100000 14010.674 11645.003 19755.102 
EOD
$E3 << EOD
# x median min max
10000 2196.969 2127.327 3746.567 
100000 8377.777 8309.297 12855.556 
EOD
$E4 << EOD
# x median min max
10000 2473.165 2207.489 4321.271 
100000 3220.376 3106.178 6315.666 
EOD
plot $E0 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#e6550d" title "Spool", \
     $E1 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#3182bd" title "RocksDB", \
     $E2 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#31a354" title "LMDB", \
     $E3 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#756bb1" title "SQLite", \
     $E4 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#8c6d31" title "LevelDB"
