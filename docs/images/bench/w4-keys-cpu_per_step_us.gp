# w4-keys-cpu_per_step_us.png, drawn by spool-bench plot from docs/images/bench/results.json.
# To draw it again: cd to this directory, then gnuplot w4-keys-cpu_per_step_us.gp
set encoding utf8
set terminal pngcairo size 1000,560 noenhanced font "Sans,11"
small_font = ",9"
set output "w4-keys-cpu_per_step_us.png"
set border 3
set tics nomirror
set grid ytics lt 1 lc rgb "#e0e0e0"
set title "W4 scaling: the stream step against the key space — cpu per step"
set ylabel "µs"
set key outside top center horizontal
set grid xtics
set xlabel "keys"
set logscale x
set xrange [8000:125000]
set xtics (10000, 100000)
set yrange [0:16416.03724999868]
set ytics ("0" 0, "5000" 5000, "10k" 10000, "15k" 15000)
$E0 << EOD
# x median min max
10000 1539.1350000004425 1322.0749999999982 1855.9749999997166 
100000 3062.730000000329 2731.0250000000024 3291.535000000181 
EOD
$E1 << EOD
# x median min max
10000 9430.115000000114 9042.014999999992 14274.814999998853 
100000 9179.695000000052 8823.770000000195 9925.899999999501 
EOD
$E2 << EOD
# x median min max
10000 1547.289999999748 1513.7149999999622 2161.479999999756 
100000 6277.9449999999315 6032.914999999548 6493.589999999968 
EOD
$E3 << EOD
# x median min max
10000 1852.0800000000295 1834.3450000003259 1882.9449999998358 
100000 5708.160000000007 5607.410000000073 5715.579999999818 
EOD
$E4 << EOD
# x median min max
10000 2649.4149999996353 2562.7150000000397 2930.914999999459 
100000 5047.280000000569 4545.335000000037 5296.660000001339 
EOD
plot $E0 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#e6550d" title "Spool", \
     $E1 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#3182bd" title "RocksDB", \
     $E2 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#31a354" title "LMDB", \
     $E3 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#756bb1" title "SQLite", \
     $E4 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#8c6d31" title "LevelDB"
