# w4-keys-p99_us.png, drawn by spool-bench plot from docs/images/bench/results.json.
# To draw it again: cd to this directory, then gnuplot w4-keys-p99_us.gp
set encoding utf8
set terminal pngcairo size 1000,560 noenhanced font "Sans,11"
small_font = ",9"
set output "w4-keys-p99_us.png"
set border 3
set tics nomirror
set grid ytics lt 1 lc rgb "#e0e0e0"
set title "W4 scaling: the stream step against the key space — p99"
set ylabel "µs"
set key outside top center horizontal
set grid xtics
set xlabel "keys"
set logscale x
set xrange [8000:125000]
set xtics (10000, 100000)
set yrange [0:23503.620649999997]
set ytics ("0" 0, "5000" 5000, "10k" 10000, "15k" 15000, "20k" 20000)
$E0 << EOD
# x median min max
10000 3509.907 3233.02 3711.461 
100000 18810.324 18105.163 19757.476 
EOD
$E1 << EOD
# x median min max
10000 14159.447 12444.535 17283.429 
100000 14936.124 12810.551 15616.389 
EOD
$E2 << EOD
# x median min max
10000 4404.148 3097.833 6431.816 
100000 20076.244 19616.377 20437.931 
EOD
$E3 << EOD
# x median min max
10000 3984.25 3261.355 5474.646 
100000 18777.913 15739.342 19348.499 
EOD
$E4 << EOD
# x median min max
10000 4987.268 4400.1 5970.307 
100000 8813.507 7518.953 9229.067 
EOD
plot $E0 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#e6550d" title "Spool", \
     $E1 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#3182bd" title "RocksDB", \
     $E2 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#31a354" title "LMDB", \
     $E3 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#756bb1" title "SQLite", \
     $E4 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#8c6d31" title "LevelDB"
