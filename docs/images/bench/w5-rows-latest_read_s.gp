# w5-rows-latest_read_s.png, drawn by spool-bench plot from docs/images/bench/results.json.
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
set yrange [0.0001:1.8049304976]
$E0 << EOD
# x median min max
10000 0.000496174 0.000490313 0.000750848 
100000 0.008295813 0.008185132 0.011178697 
1000000 0.111756073 0.080458792 0.114378561 
EOD
$E1 << EOD
# x median min max
10000 0.003173768 0.003131036 0.005046651 
100000 0.071664914 0.071533633 0.105983009 
1000000 0.764480223 0.671840907 1.128081561 
EOD
$E2 << EOD
# x median min max
10000 0.001098029 0.00096743 0.001236082 
100000 0.018537125 0.015952899 0.021852912 
1000000 0.169036953 0.166041865 0.21932016 
EOD
$E3 << EOD
# x median min max
10000 0.004123635 0.003770943 0.005943336 
100000 0.042883791 0.0418477 0.0722151 
1000000 0.404122404 0.400903271 0.411748923 
EOD
$E4 << EOD
# x median min max
10000 0.001696066 0.0016927 0.001782311 
100000 0.036378736 0.036002119 0.05843765 
1000000 0.402366825 0.398061405 0.407561908 
EOD
plot $E0 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#e6550d" title "Spool", \
     $E1 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#3182bd" title "RocksDB", \
     $E2 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#31a354" title "LMDB", \
     $E3 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#756bb1" title "SQLite", \
     $E4 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#8c6d31" title "LevelDB"
