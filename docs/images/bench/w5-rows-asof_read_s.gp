# w5-rows-asof_read_s.png, drawn by spool-bench plot from results.json.
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
set yrange [0.0001:1.2367046528]
$E0 << EOD
# x median min max
10000 0.001258442 0.00100778 0.001281968 
100000 0.014914731 0.011446833 0.017118218 
1000000 0.191197463 0.18888698 0.236968565 
EOD
$E1 << EOD
# x median min max
10000 0.004017396 0.003990452 0.00413095 
100000 0.071020737 0.070668826 0.076407692 
1000000 0.665196614 0.664825173 0.772940408 
EOD
$E2 << EOD
# x median min max
10000 0.000954566 0.000758173 0.001112587 
100000 0.01385703 0.010710613 0.01537011 
1000000 0.152770206 0.147824915 0.171503629 
EOD
$E3 << EOD
# x median min max
10000 0.003371135 0.00305088 0.003408446 
100000 0.036353967 0.035115931 0.040665901 
1000000 0.364968479 0.34058646 0.380914502 
EOD
$E4 << EOD
# x median min max
10000 0.002074649 0.001904565 0.002152516 
100000 0.041620383 0.041034364 0.050026382 
1000000 0.472206387 0.439463702 0.475726296 
EOD
plot $E0 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#e6550d" title "Spool", \
     $E1 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#3182bd" title "RocksDB", \
     $E2 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#31a354" title "LMDB", \
     $E3 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#756bb1" title "SQLite", \
     $E4 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#8c6d31" title "LevelDB"
