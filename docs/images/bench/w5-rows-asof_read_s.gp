# w5-rows-asof_read_s.png, drawn by spool-bench plot from docs/images/bench/w5-rows-2026-12-06.json.
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
set yrange [0.001:1.1774575888]
$E0 << EOD
# x median min max
10000 0.001271338 0.00123016 0.001644679 
100000 0.014428207 0.013561228 0.014617408 
1000000 0.14148607 0.138808487 0.144799224 
EOD
$E1 << EOD
# x median min max
10000 0.003185189 0.003092272 0.005264375 
100000 0.10874758 0.072746261 0.114252351 
1000000 0.735908388 0.722389971 0.735910993 
EOD
$E2 << EOD
# x median min max
10000 0.001428267 0.001318448 0.00183449 
100000 0.020546367 0.016377527 0.021733204 
1000000 0.169662353 0.168573191 0.180992376 
EOD
$E3 << EOD
# x median min max
10000 0.006795066 0.004593419 0.007025195 
100000 0.043091025 0.042592327 0.046570735 
1000000 0.458046599 0.429485304 0.721020565 
EOD
$E4 << EOD
# x median min max
10000 0.003085309 0.001993481 0.003217771 
100000 0.038761609 0.037865204 0.040353387 
1000000 0.429250267 0.427796952 0.445406644 
EOD
plot $E0 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#e6550d" title "Spool", \
     $E1 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#3182bd" title "RocksDB", \
     $E2 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#31a354" title "LMDB", \
     $E3 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#756bb1" title "SQLite", \
     $E4 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#8c6d31" title "LevelDB"
