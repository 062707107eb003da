# history-updates-change_rows_per_s.png, drawn by spool-bench plot from docs/images/bench/results.json.
# To draw it again: cd to this directory, then gnuplot history-updates-change_rows_per_s.gp
set encoding utf8
set terminal pngcairo size 1000,560 noenhanced font "Sans,11"
small_font = ",9"
set output "history-updates-change_rows_per_s.png"
set border 3
set tics nomirror
set grid ytics lt 1 lc rgb "#e0e0e0"
set title "History length: change feed and vacuum against the update commits — change rows"
set ylabel "rows/s"
set key outside top center horizontal
set grid xtics
set xlabel "update commits"
set xrange [212.5:1037.5]
set xtics (250, 1000)
set yrange [0:2863322.226630908]
set ytics ("0" 0, "500k" 500000, "1M" 1000000, "1.5M" 1500000, "2M" 2000000, "2.5M" 2500000)
$E0 << EOD
# x median min max
250 1688903.9013680122 1611860.6119680265 2232157.40602595 
1000 1689184.8806264026 1655705.948477941 2489845.4144616593 
EOD
$E1 << EOD
# x median min max
250 202051.39875616998 141391.72828301386 215864.55814886504 
1000 252125.90864318045 249662.67389557615 265359.3311106447 
EOD
$E2 << EOD
# x median min max
250 1066458.9034089402 852162.7208124042 1111301.9587008187 
1000 1470268.451905828 1450720.3428551217 1473409.9453462157 
EOD
$E3 << EOD
# x median min max
250 361345.6790601682 235360.16912492205 371702.82311713824 
1000 437699.06799818284 352733.2804548521 473174.17782331334 
EOD
$E4 << EOD
# x median min max
250 300996.5622941823 226722.8439924917 312200.57623234997 
1000 432233.18835281284 418432.4446090427 465197.52635867335 
EOD
plot $E0 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#e6550d" title "Spool", \
     $E1 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#3182bd" title "RocksDB", \
     $E2 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#31a354" title "LMDB", \
     $E3 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#756bb1" title "SQLite", \
     $E4 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#8c6d31" title "LevelDB"
