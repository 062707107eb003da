# w6-history-asof_read_s.png, drawn by spool-bench plot from results.json.
# To draw it again: cd to this directory, then gnuplot w6-history-asof_read_s.gp
set encoding utf8
set terminal pngcairo size 1000,560 noenhanced font "Sans,11"
small_font = ",9"
set output "w6-history-asof_read_s.png"
set border 3
set tics nomirror
set grid ytics lt 1 lc rgb "#e0e0e0"
set title "W6 scaling: rewind against the history after the point — asof read"
set ylabel "s"
set key outside top center horizontal
set grid xtics
set xlabel "history after the point (×)"
set logscale x
set xrange [0.8:125]
set xtics (1, 10, 100)
set logscale y
set yrange [0.01:2.9299211104000005]
$E0 << EOD
# x median min max
1 0.015305573 0.012855656 0.015619683 
10 0.132294181 0.126007355 0.146900933 
100 0.138866434 0.131210848 0.142438803 
EOD
$E1 << EOD
# x median min max
1 0.067494286 0.064433596 0.069119697 
10 0.218816823 0.218230156 0.21911086 
100 1.7928068 1.751514523 1.831200694 
EOD
$E2 << EOD
# x median min max
1 0.013094124 0.012340202 0.013968018 
10 0.041736979 0.041712301 0.047160695 
100 0.334544198 0.315721068 0.479011327 
EOD
$E3 << EOD
# x median min max
1 0.036606032 0.034121838 0.037263459 
10 0.112993594 0.112804986 0.119355047 
100 0.93598095 0.88903159 1.019883714 
EOD
$E4 << EOD
# x median min max
1 0.043929595 0.040939467 0.046257801 
10 0.205028906 0.192534292 0.206089052 
100 1.271115763 1.266450416 1.499712601 
EOD
plot $E0 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#e6550d" title "Spool", \
     $E1 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#3182bd" title "RocksDB", \
     $E2 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#31a354" title "LMDB", \
     $E3 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#756bb1" title "SQLite", \
     $E4 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#8c6d31" title "LevelDB"
