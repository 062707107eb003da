# w4-keys-events_per_s.png, drawn by spool-bench plot from docs/images/bench/results.json.
# To draw it again: cd to this directory, then gnuplot w4-keys-events_per_s.gp
set encoding utf8
set terminal pngcairo size 1000,560 noenhanced font "Sans,11"
small_font = ",9"
set output "w4-keys-events_per_s.png"
set border 3
set tics nomirror
set grid ytics lt 1 lc rgb "#e0e0e0"
set title "W4 scaling: the stream step against the key space — events"
set ylabel "events/s"
set key outside top center horizontal
set grid xtics
set xlabel "keys"
set logscale x
set xrange [8000:125000]
set xtics (10000, 100000)
set yrange [0:1407183.050311297]
set ytics ("0" 0, "250k" 250000, "500k" 500000, "750k" 750000, "1M" 1000000, "1.25M" 1250000)
$E0 << EOD
# x median min max
10000 995556.2599669182 847073.9851571885 1223637.4350533017 
100000 445924.60794124525 419802.13998884626 506853.3491351285 
EOD
$E1 << EOD
# x median min max
10000 100513.08158910679 66466.00553010726 106852.33008409788 
100000 105188.69077907411 94485.46711046352 106874.56214293449 
EOD
$E2 << EOD
# x median min max
10000 334350.37870454765 262438.20147877786 401437.3182172646 
100000 76681.84997969004 75428.62984567463 77213.77821544967 
EOD
$E3 << EOD
# x median min max
10000 409559.1431662313 367927.0567243887 450332.8385241226 
100000 107643.42442028232 104461.48074118658 122210.20656223921 
EOD
$E4 << EOD
# x median min max
10000 401145.84583069786 348892.3036568046 433506.9287986827 
100000 246688.19342671262 228144.1705981801 285000.7984297368 
EOD
plot $E0 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#e6550d" title "Spool", \
     $E1 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#3182bd" title "RocksDB", \
     $E2 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#31a354" title "LMDB", \
     $E3 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#756bb1" title "SQLite", \
     $E4 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#8c6d31" title "LevelDB"
