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
set yrange [0.01:3.8696760448000003]
$E0 << EOD
# x median min max
1 0.011484939 0.011016889 0.016133512 
10 0.023214173 0.022505594 0.023966983 
100 0.021381816 0.019317529 0.02446945 
EOD
$E1 << EOD
# x median min max
1 0.079223954 0.078383355 0.080658323 
10 0.236600745 0.234460342 0.248242602 
100 2.164726915 2.135441584 2.418547528 
EOD
$E2 << EOD
# x median min max
1 0.016622242 0.01583299 0.022063613 
10 0.044442286 0.044402831 0.04595806 
100 0.31686624 0.302689561 0.404046701 
EOD
$E3 << EOD
# x median min max
1 0.04284128 0.04227861 0.045068967 
10 0.131803371 0.129246887 0.142056846 
100 1.088003988 1.071673682 1.32721073 
EOD
$E4 << EOD
# x median min max
1 0.038645298 0.038609159 0.040071921 
10 0.206695964 0.202297056 0.210965527 
100 1.149330394 0.989425755 1.504939789 
EOD
plot $E0 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#e6550d" title "Spool", \
     $E1 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#3182bd" title "RocksDB", \
     $E2 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#31a354" title "LMDB", \
     $E3 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#756bb1" title "SQLite", \
     $E4 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#8c6d31" title "LevelDB"
