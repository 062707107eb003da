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
set yrange [0.01:1.2415405072]
$E0 << EOD
# x median min max
1 0.01318393 0.012013784 0.014152553 
10 0.013538174 0.013101354 0.014411487 
100 0.019015064 0.01545481 0.025859605 
EOD
$E1 << EOD
# x median min max
1 0.017503829 0.012801844 0.020365503 
10 0.012326149 0.011963228 0.016683197 
100 0.016054551 0.014371861 0.151038472 
EOD
$E2 << EOD
# x median min max
1 0.092164933 0.090161401 0.107971814 
10 0.153163415 0.137107571 0.159277146 
100 0.682392791 0.657748649 0.775962817 
EOD
$E3 << EOD
# x median min max
1 0.054630388 0.051274964 0.055889964 
10 0.101402005 0.09201114 0.10526833 
100 0.497809373 0.494741387 0.561438479 
EOD
$E4 << EOD
# x median min max
1 0.021582819 0.02057351 0.031377963 
10 0.023526196 0.018543998 0.024526178 
100 0.040162755 0.03510377 0.040590207 
EOD
plot $E0 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#e6550d" title "Spool", \
     $E1 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#3182bd" title "RocksDB", \
     $E2 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#31a354" title "LMDB", \
     $E3 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#756bb1" title "SQLite", \
     $E4 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#8c6d31" title "LevelDB"
