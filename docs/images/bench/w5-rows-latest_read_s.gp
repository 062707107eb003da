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
set yrange [0.0001:1.50162968]
$E0 << EOD
# x median min max
10000 0.000560547 0.000526772 0.000913448 
100000 0.008529487 0.008506142 0.008605901 
1000000 0.085719602 0.083116248 0.086036494 
EOD
$E1 << EOD
# x median min max
10000 0.003287224 0.003108263 0.004795182 
100000 0.07250366 0.069247705 0.110018507 
1000000 0.750978879 0.721403014 0.93851855 
EOD
$E2 << EOD
# x median min max
10000 0.00111402 0.001050849 0.001857414 
100000 0.017213797 0.016689 0.022076698 
1000000 0.173504252 0.16677537 0.206894132 
EOD
$E3 << EOD
# x median min max
10000 0.004270453 0.004041228 0.004358812 
100000 0.045110167 0.043769176 0.071182446 
1000000 0.432514638 0.419302282 0.448746847 
EOD
$E4 << EOD
# x median min max
10000 0.001738818 0.001646973 0.001826074 
100000 0.040346104 0.039343487 0.063058451 
1000000 0.411743843 0.410210256 0.492959837 
EOD
plot $E0 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#e6550d" title "Spool", \
     $E1 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#3182bd" title "RocksDB", \
     $E2 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#31a354" title "LMDB", \
     $E3 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#756bb1" title "SQLite", \
     $E4 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#8c6d31" title "LevelDB"
