# w5-rows-latest_read_s.png, drawn by spool-bench plot from docs/images/bench/w5-rows-2026-12-06.json.
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
set yrange [0.0001:1.1675613376]
$E0 << EOD
# x median min max
10000 0.000618967 0.000568552 0.000748594 
100000 0.008560897 0.008447049 0.008680685 
1000000 0.08421566 0.082883857 0.087024173 
EOD
$E1 << EOD
# x median min max
10000 0.003126318 0.003025856 0.005276478 
100000 0.110282148 0.071979222 0.11446694 
1000000 0.726387675 0.718466096 0.729725836 
EOD
$E2 << EOD
# x median min max
10000 0.001363815 0.00121386 0.001757383 
100000 0.021138113 0.017112194 0.022537315 
1000000 0.176720661 0.175244882 0.180951869 
EOD
$E3 << EOD
# x median min max
10000 0.006743168 0.004543333 0.007132238 
100000 0.042753614 0.042183649 0.04610997 
1000000 0.452977926 0.422249229 0.712640955 
EOD
$E4 << EOD
# x median min max
10000 0.002954781 0.001842495 0.003058028 
100000 0.038208037 0.037492374 0.039915294 
1000000 0.425836424 0.422951635 0.552795628 
EOD
plot $E0 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#e6550d" title "Spool", \
     $E1 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#3182bd" title "RocksDB", \
     $E2 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#31a354" title "LMDB", \
     $E3 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#756bb1" title "SQLite", \
     $E4 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#8c6d31" title "LevelDB"
