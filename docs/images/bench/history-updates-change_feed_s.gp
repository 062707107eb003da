# history-updates-change_feed_s.png, drawn by spool-bench plot from docs/images/bench/results.json.
# To draw it again: cd to this directory, then gnuplot history-updates-change_feed_s.gp
set encoding utf8
set terminal pngcairo size 1000,560 noenhanced font "Sans,11"
small_font = ",9"
set output "history-updates-change_feed_s.png"
set border 3
set tics nomirror
set grid ytics lt 1 lc rgb "#e0e0e0"
set title "History length: change feed and vacuum against the update commits — change feed"
set ylabel "s"
set key outside top center horizontal
set grid xtics
set xlabel "update commits"
set xrange [212.5:1037.5]
set xtics (250, 1000)
set yrange [0:0.46062151865]
set ytics ("0" 0, "0.1" 0.1, "0.2" 0.2, "0.3" 0.30000000000000004, "0.4" 0.4)
$E0 << EOD
# x median min max
250 0.0148025 0.011199927 0.015510026 
1000 0.059200151 0.040163136 0.060397198 
EOD
$E1 << EOD
# x median min max
250 0.123730893 0.115813361 0.176813738 
1000 0.396627227 0.376847498 0.400540451 
EOD
$E2 << EOD
# x median min max
250 0.023442066 0.022496136 0.02933712 
1000 0.06801479 0.067869774 0.068931273 
EOD
$E3 << EOD
# x median min max
250 0.069185828 0.067258031 0.106220182 
1000 0.228467473 0.211338667 0.283500326 
EOD
$E4 << EOD
# x median min max
250 0.083057427 0.080076726 0.110266789 
1000 0.231356598 0.21496245 0.238987204 
EOD
plot $E0 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#e6550d" title "Spool", \
     $E1 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#3182bd" title "RocksDB", \
     $E2 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#31a354" title "LMDB", \
     $E3 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#756bb1" title "SQLite", \
     $E4 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#8c6d31" title "LevelDB"
