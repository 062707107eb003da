# w6-history-asof_read_s.png, drawn by spool-bench plot from docs/images/bench/results.json.
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
set yrange [0.01:4.247860424000001]
$E0 << EOD
# x median min max
1 0.014217077 0.014100895 0.019852837 
10 0.13568272 0.123980599 0.137776644 
100 0.137810187 0.103318992 0.148828618 
EOD
$E1 << EOD
# x median min max
1 0.078677755 0.077834231 0.081819202 
10 0.2345796 0.232418789 0.276334663 
100 2.086762186 2.01908516 2.654912765 
EOD
$E2 << EOD
# x median min max
1 0.015923893 0.015488014 0.021610201 
10 0.105353402 0.10469471 0.108104055 
100 0.846301768 0.809558349 0.993914264 
EOD
$E3 << EOD
# x median min max
1 0.042605412 0.042535529 0.04515904 
10 0.133083364 0.131161419 0.1466535 
100 1.083679502 1.065872856 1.26215009 
EOD
$E4 << EOD
# x median min max
1 0.039317508 0.038000011 0.039515483 
10 0.268649153 0.266539469 0.272417441 
100 1.366107176 1.154594078 1.497154578 
EOD
plot $E0 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#e6550d" title "Spool", \
     $E1 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#3182bd" title "RocksDB", \
     $E2 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#31a354" title "LMDB", \
     $E3 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#756bb1" title "SQLite", \
     $E4 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#8c6d31" title "LevelDB"
