# history-updates-disk_mb_before.png, drawn by spool-bench plot from docs/images/bench/results.json.
# To draw it again: cd to this directory, then gnuplot history-updates-disk_mb_before.gp
set encoding utf8
set terminal pngcairo size 1000,560 noenhanced font "Sans,11"
small_font = ",9"
set output "history-updates-disk_mb_before.png"
set border 3
set tics nomirror
set grid ytics lt 1 lc rgb "#e0e0e0"
set title "History length: change feed and vacuum against the update commits — disk mb before"
set ylabel "MB"
set key outside top center horizontal
set grid xtics
set xlabel "update commits"
set xrange [212.5:1037.5]
set xtics (250, 1000)
set yrange [0:284.92267519999996]
set ytics ("0" 0, "50" 50, "100" 100, "150" 150, "200" 200, "250" 250)
$E0 << EOD
# x median min max
250 52.137984 52.137984 52.137984 
1000 151.441408 151.437312 151.441408 
EOD
$E1 << EOD
# x median min max
250 25.612288 25.612288 25.612288 
1000 72.933376 72.933376 72.933376 
EOD
$E2 << EOD
# x median min max
250 76.066816 76.066816 76.066816 
1000 247.758848 247.758848 247.758848 
EOD
$E3 << EOD
# x median min max
250 53.997568 53.997568 53.997568 
1000 170.115072 170.115072 170.115072 
EOD
$E4 << EOD
# x median min max
250 28.991488 26.19392 41.1648 
1000 86.007808 78.76608 89.31328 
EOD
plot $E0 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#e6550d" title "Spool", \
     $E1 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#3182bd" title "RocksDB", \
     $E2 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#31a354" title "LMDB", \
     $E3 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#756bb1" title "SQLite", \
     $E4 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#8c6d31" title "LevelDB"
