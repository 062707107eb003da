# w6-history-rewind_s.png, drawn by spool-bench plot from docs/images/bench/results.json.
# To draw it again: cd to this directory, then gnuplot w6-history-rewind_s.gp
set encoding utf8
set terminal pngcairo size 1000,560 noenhanced font "Sans,11"
small_font = ",9"
set output "w6-history-rewind_s.png"
set border 3
set tics nomirror
set grid ytics lt 1 lc rgb "#e0e0e0"
set title "W6 scaling: rewind against the history after the point — rewind"
set ylabel "s"
set key outside top center horizontal
set grid xtics
set xlabel "history after the point (×)"
set logscale x
set xrange [0.8:125]
set xtics (1, 10, 100)
set logscale y
set yrange [0.01:1.054102264]
$E0 << EOD
# x median min max
1 0.015744903 0.01308362 0.017485194 
10 0.012845296 0.012412012 0.013394662 
100 0.016533152 0.016449533 0.018966201 
EOD
$E1 << EOD
# x median min max
1 0.012476645 0.012127451 0.013021612 
10 0.011957327 0.011877916 0.016278348 
100 0.016058189 0.015128451 0.017202696 
EOD
$E2 << EOD
# x median min max
1 0.0947078 0.093630762 0.096744805 
10 0.14676891 0.122833105 0.164150467 
100 0.637175661 0.612296561 0.658813915 
EOD
$E3 << EOD
# x median min max
1 0.054420318 0.047973875 0.06015599 
10 0.095405107 0.083908886 0.110798071 
100 0.509551511 0.497312647 0.645510426 
EOD
$E4 << EOD
# x median min max
1 0.020287375 0.019479998 0.021009258 
10 0.023704065 0.022074725 0.031183283 
100 0.040094996 0.036090407 0.040523771 
EOD
plot $E0 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#e6550d" title "Spool", \
     $E1 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#3182bd" title "RocksDB", \
     $E2 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#31a354" title "LMDB", \
     $E3 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#756bb1" title "SQLite", \
     $E4 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#8c6d31" title "LevelDB"
