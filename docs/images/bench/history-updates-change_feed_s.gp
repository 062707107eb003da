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
set logscale y
set yrange [0.01:0.9393410336000001]
$E0 << EOD
# x median min max
250 0.012437501 0.011347958 0.012587026 
1000 0.061690068 0.044154578 0.06409313 
EOD
$E1 << EOD
# x median min max
250 0.115663597 0.113833775 0.118759766 
1000 0.408362531 0.394559852 0.587088146 
EOD
$E2 << EOD
# x median min max
250 0.025109809 0.023374556 0.028609386 
1000 0.069162413 0.067052109 0.071502555 
EOD
$E3 << EOD
# x median min max
250 0.071858282 0.069280088 0.072923839 
1000 0.227082458 0.220214481 0.241943197 
EOD
$E4 << EOD
# x median min max
250 0.087144783 0.083536467 0.09405075 
1000 0.257033235 0.224045329 0.260239595 
EOD
plot $E0 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#e6550d" title "Spool", \
     $E1 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#3182bd" title "RocksDB", \
     $E2 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#31a354" title "LMDB", \
     $E3 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#756bb1" title "SQLite", \
     $E4 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#8c6d31" title "LevelDB"
