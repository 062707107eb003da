# w6-history-rewind_s.png, drawn by spool-bench plot from results.json.
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
set yrange [0.001:1.763693896]
$E0 << EOD
# x median min max
1 0.27131802 0.26322524 0.290313588 
10 0.659812746 0.648927787 0.712415565 
100 0.716202739 0.708598371 1.102308685 
EOD
$E1 << EOD
# x median min max
1 0.009200561 0.007679993 0.009880847 
10 0.009604611 0.008407773 0.010326783 
100 0.042230723 0.042188714 0.042766944 
EOD
$E2 << EOD
# x median min max
1 0.07503388 0.061662514 0.094694113 
10 0.135296236 0.120345635 0.136025194 
100 0.42148848 0.360572531 0.446927712 
EOD
$E3 << EOD
# x median min max
1 0.0348669 0.034851891 0.038425759 
10 0.065723195 0.056977932 0.082082475 
100 0.30058902 0.276152748 0.3377049 
EOD
$E4 << EOD
# x median min max
1 0.017583372 0.016050531 0.018422065 
10 0.018434516 0.017152729 0.018555338 
100 0.026627133 0.025908327 0.029823719 
EOD
plot $E0 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#e6550d" title "Spool", \
     $E1 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#3182bd" title "RocksDB", \
     $E2 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#31a354" title "LMDB", \
     $E3 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#756bb1" title "SQLite", \
     $E4 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#8c6d31" title "LevelDB"
