# w5-rows-asof_read_s.png, drawn by spool-bench plot from docs/images/bench/results.json.
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
set yrange [0.001:1.763751936]
$E0 << EOD
# x median min max
10000 0.001192649 0.001102878 0.001884476 
100000 0.014300414 0.014086949 0.014643488 
1000000 0.447881361 0.444126618 0.459708621 
EOD
$E1 << EOD
# x median min max
10000 0.003365362 0.002957747 0.005609993 
100000 0.072583251 0.069239309 0.109999841 
1000000 0.747712955 0.731633396 1.10234496 
EOD
$E2 << EOD
# x median min max
10000 0.001359957 0.001165858 0.002017418 
100000 0.016693128 0.015993657 0.021108446 
1000000 0.166495658 0.161679476 0.198182728 
EOD
$E3 << EOD
# x median min max
10000 0.004303696 0.004171095 0.004442661 
100000 0.044826207 0.044236234 0.070117511 
1000000 0.439413372 0.413504182 0.454862923 
EOD
$E4 << EOD
# x median min max
10000 0.00177129 0.001731174 0.00185576 
100000 0.040995309 0.039296867 0.063726983 
1000000 0.431082002 0.415664071 0.457252989 
EOD
plot $E0 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#e6550d" title "Spool", \
     $E1 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#3182bd" title "RocksDB", \
     $E2 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#31a354" title "LMDB", \
     $E3 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#756bb1" title "SQLite", \
     $E4 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#8c6d31" title "LevelDB"
