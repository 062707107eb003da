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
set yrange [0:31832.61985]
set ytics ("0" 0, "10k" 10000, "20k" 20000, "30k" 30000)
$E0 << EOD
# x median min max
10000 3458.94 2869.51 4764.735 
100000 23172.402 17442.242 27680.539 
EOD
$E1 << EOD
# x median min max
10000 11784.468 11101.68 18777.802 
100000 12234.855 11741.528 18352.213 
EOD
$E2 << EOD
# x median min max
10000 3342.539 3278.577 5271.66 
100000 21795.944 18674.596 24444.252 
EOD
$E3 << EOD
# x median min max
10000 4150.966 3358.97 5815.212 
100000 17822.104 17242.342 25813.717 
EOD
$E4 << EOD
# x median min max
10000 7300.288 5715.373 8439.435 
100000 11233.029 10309.553 11926.088 
EOD
plot $E0 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#e6550d" title "Spool", \
     $E1 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#3182bd" title "RocksDB", \
     $E2 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#31a354" title "LMDB", \
     $E3 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#756bb1" title "SQLite", \
     $E4 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#8c6d31" title "LevelDB"
