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
set yrange [0.01:4.7126621424]
$E0 << EOD
# x median min max
1 0.018588763 0.014687871 0.019496599 
10 0.145380059 0.13960892 0.152248265 
100 0.156397998 0.132320514 0.164883671 
EOD
$E1 << EOD
# x median min max
1 0.078387984 0.075796083 0.11519777 
10 0.24366353 0.23658268 0.300152574 
100 1.987813549 1.955046072 2.945413839 
EOD
$E2 << EOD
# x median min max
1 0.021712144 0.016505089 0.022266459 
10 0.109136991 0.108001651 0.109472728 
100 0.850809684 0.834492984 1.02773301 
EOD
$E3 << EOD
# x median min max
1 0.045831057 0.044118901 0.076446459 
10 0.147073019 0.136723289 0.206979354 
100 1.273528196 1.097563254 1.487982429 
EOD
$E4 << EOD
# x median min max
1 0.042115269 0.040700737 0.067344054 
10 0.288909215 0.274884024 0.402624546 
100 1.380691601 1.303588562 1.481603685 
EOD
plot $E0 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#e6550d" title "Spool", \
     $E1 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#3182bd" title "RocksDB", \
     $E2 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#31a354" title "LMDB", \
     $E3 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#756bb1" title "SQLite", \
     $E4 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#8c6d31" title "LevelDB"
