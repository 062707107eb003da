# history-updates-vacuum_s.png, drawn by spool-bench plot from docs/images/bench/results.json.
# To draw it again: cd to this directory, then gnuplot history-updates-vacuum_s.gp
set encoding utf8
set terminal pngcairo size 1000,560 noenhanced font "Sans,11"
small_font = ",9"
set output "history-updates-vacuum_s.png"
set border 3
set tics nomirror
set grid ytics lt 1 lc rgb "#e0e0e0"
set title "History length: change feed and vacuum against the update commits — vacuum"
set ylabel "s"
set key outside top center horizontal
set grid xtics
set xlabel "update commits"
set xrange [212.5:1037.5]
set xtics (250, 1000)
set yrange [0:3.2746715715499994]
set ytics ("0" 0, "1" 1, "2" 2, "3" 3)
$E0 << EOD
# x median min max
250 0.215126092 0.213342568 0.22216351 
1000 0.290854657 0.283200845 0.310577476 
EOD
$E1 << EOD
# x median min max
250 0.550573911 0.516890573 0.644153806 
1000 2.52059959 2.325402751 2.847540497 
EOD
$E2 << EOD
# x median min max
250 0.533551859 0.513311033 0.649882834 
1000 1.264201183 1.23744993 1.31279714 
EOD
$E3 << EOD
# x median min max
250 0.733256454 0.687770231 0.749737386 
1000 2.414309946 2.401074197 2.464516158 
EOD
$E4 << EOD
# x median min max
250 0.591202623 0.582447185 0.721040895 
1000 2.140279757 1.933049015 2.224941937 
EOD
plot $E0 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#e6550d" title "Spool", \
     $E1 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#3182bd" title "RocksDB", \
     $E2 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#31a354" title "LMDB", \
     $E3 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#756bb1" title "SQLite", \
     $E4 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#8c6d31" title "LevelDB"
