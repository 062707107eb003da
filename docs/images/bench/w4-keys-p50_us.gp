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
set yrange [0:17649.21905]
set ytics ("0" 0, "5000" 5000, "10k" 10000, "15k" 15000)
$E0 << EOD
# x median min max
10000 699.221 680.935 861.789 
100000 1552.033 1316.805 1562.813 
EOD
$E1 << EOD
# x median min max
10000 9855.579 9353.253 15347.147 
100000 9636.763 9618.779 11298.704 
EOD
$E2 << EOD
# x median min max
10000 3008.223 2521.898 3784.319 
100000 14666.711 14536.564 14863.606 
EOD
$E3 << EOD
# x median min max
10000 2355.291 2152.405 2593.975 
100000 8813.397 7557.968 8838.735 
EOD
$E4 << EOD
# x median min max
10000 2303.853 2058.105 2632.168 
100000 3341.396 3222.029 3884.861 
EOD
plot $E0 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#e6550d" title "Spool", \
     $E1 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#3182bd" title "RocksDB", \
     $E2 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#31a354" title "LMDB", \
     $E3 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#756bb1" title "SQLite", \
     $E4 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#8c6d31" title "LevelDB"
