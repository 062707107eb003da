# w6-history-latest_read_s.png, drawn by spool-bench plot from docs/images/bench/results.json.
# To draw it again: cd to this directory, then gnuplot w6-history-latest_read_s.gp
set encoding utf8
set terminal pngcairo size 1000,560 noenhanced font "Sans,11"
small_font = ",9"
set output "w6-history-latest_read_s.png"
set border 3
set tics nomirror
set grid ytics lt 1 lc rgb "#e0e0e0"
set title "W6 scaling: rewind against the history after the point — latest read"
set ylabel "s"
set key outside top center horizontal
set grid xtics
set xlabel "history after the point (×)"
set logscale x
set xrange [0.8:125]
set xtics (1, 10, 100)
set logscale y
set yrange [0.01:4.7633122096000005]
$E0 << EOD
# x median min max
1 0.011356894 0.011140743 0.015701019 
10 0.023728731 0.023252946 0.026763273 
100 0.022489964 0.021518516 0.023968287 
EOD
$E1 << EOD
# x median min max
1 0.097921654 0.075513134 0.115441754 
10 0.24180221 0.227663454 0.305018592 
100 2.075157961 2.049456457 2.977070131 
EOD
$E2 << EOD
# x median min max
1 0.021403869 0.017008747 0.022995927 
10 0.048338588 0.046802345 0.049523081 
100 0.325298201 0.322106519 0.420213055 
EOD
$E3 << EOD
# x median min max
1 0.046435227 0.043835362 0.076307938 
10 0.149138748 0.134868842 0.214658652 
100 1.239818707 1.095025204 1.558892968 
EOD
$E4 << EOD
# x median min max
1 0.04156863 0.040435424 0.067422142 
10 0.204641506 0.160258733 0.213787706 
100 1.167368319 1.159722123 1.299544369 
EOD
plot $E0 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#e6550d" title "Spool", \
     $E1 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#3182bd" title "RocksDB", \
     $E2 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#31a354" title "LMDB", \
     $E3 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#756bb1" title "SQLite", \
     $E4 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#8c6d31" title "LevelDB"
