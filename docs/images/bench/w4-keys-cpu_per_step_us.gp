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
set yrange [0:16911.319250000048]
set ytics ("0" 0, "5000" 5000, "10k" 10000, "15k" 15000)
$E0 << EOD
# x median min max
10000 1497.0749999997677 1488.2149999993999 1506.3750000000198 
100000 3507.7799999999115 2842.6950000000775 4560.874999999669 
EOD
$E1 << EOD
# x median min max
10000 9228.6 8604.409999999234 13880.019999999718 
100000 9550.100000000015 8824.019999999564 14705.495000000043 
EOD
$E2 << EOD
# x median min max
10000 1466.3000000000181 1399.70500000004 2250.110000000518 
100000 6097.93499999995 5304.1549999989 8821.874999999864 
EOD
$E3 << EOD
# x median min max
10000 1778.799999999592 1775.6149999999593 3001.8150000000787 
100000 5290.600000000011 5072.490000000016 9111.819999999398 
EOD
$E4 << EOD
# x median min max
10000 3090.499999999992 2948.3449999997906 4748.169999999732 
100000 5191.565000000082 5151.3749999999445 7459.410000000162 
EOD
plot $E0 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#e6550d" title "Spool", \
     $E1 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#3182bd" title "RocksDB", \
     $E2 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#31a354" title "LMDB", \
     $E3 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#756bb1" title "SQLite", \
     $E4 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#8c6d31" title "LevelDB"
