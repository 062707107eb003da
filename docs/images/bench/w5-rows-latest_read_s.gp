# w5-rows-latest_read_s.png, drawn by spool-bench plot from results.json.
# To draw it again: cd to this directory, then gnuplot w5-rows-latest_read_s.gp
set encoding utf8
set terminal pngcairo size 1000,560 noenhanced font "Sans,11"
small_font = ",9"
set output "w5-rows-latest_read_s.png"
set border 3
set tics nomirror
set grid ytics lt 1 lc rgb "#e0e0e0"
set title "W5 scaling: full reads against the table's rows — latest read"
set ylabel "s"
set key outside top center horizontal
set grid xtics
set xlabel "rows"
set logscale x
set xrange [8000:1250000]
set xtics (10000, 100000, 1000000)
set logscale y
set yrange [0.0001:1.2511103344]
$E0 << EOD
# x median min max
10000 0.000443027 0.000423675 0.00048105 
100000 0.007057146 0.00574222 0.008052207 
1000000 0.073096691 0.07057163 0.073144643 
EOD
$E1 << EOD
# x median min max
10000 0.00396324 0.003939192 0.004466685 
100000 0.071525351 0.070908203 0.075701982 
1000000 0.674829807 0.667503134 0.781943959 
EOD
$E2 << EOD
# x median min max
10000 0.000857044 0.000680685 0.001021409 
100000 0.012895489 0.00993541 0.014982266 
1000000 0.150004061 0.144263789 0.167943647 
EOD
$E3 << EOD
# x median min max
10000 0.003206525 0.002998272 0.00321235 
100000 0.036049872 0.034693673 0.040415309 
1000000 0.356481261 0.332354869 0.378652425 
EOD
$E4 << EOD
# x median min max
10000 0.002004146 0.001989151 0.002082361 
100000 0.040913665 0.040840033 0.048946608 
1000000 0.440535815 0.429024688 0.475171596 
EOD
plot $E0 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#e6550d" title "Spool", \
     $E1 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#3182bd" title "RocksDB", \
     $E2 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#31a354" title "LMDB", \
     $E3 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#756bb1" title "SQLite", \
     $E4 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#8c6d31" title "LevelDB"
