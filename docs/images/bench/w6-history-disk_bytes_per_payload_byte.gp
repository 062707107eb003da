# w6-history-disk_bytes_per_payload_byte.png, drawn by spool-bench plot from docs/images/bench/results.json.
# To draw it again: cd to this directory, then gnuplot w6-history-disk_bytes_per_payload_byte.gp
set encoding utf8
set terminal pngcairo size 1000,560 noenhanced font "Sans,11"
small_font = ",9"
set output "w6-history-disk_bytes_per_payload_byte.png"
set border 3
set tics nomirror
set grid ytics lt 1 lc rgb "#e0e0e0"
set title "W6 scaling: rewind against the history after the point — disk bytes per payload byte"
set ylabel "× payload"
set key outside top center horizontal
set grid xtics
set xlabel "history after the point (×)"
set logscale x
set xrange [0.8:125]
set xtics (1, 10, 100)
set yrange [0:2.367788137931034]
set ytics ("0" 0, "0.5" 0.5, "1" 1, "1.5" 1.5, "2" 2)
$E0 << EOD
# x median min max
1 1.4427806896551725 1.4427806896551725 1.4427806896551725 
10 1.2009863129973475 1.2009863129973475 1.2010406366047746 
100 1.1438083428188819 1.1437603481754268 1.1438151991965182 
EOD
$E1 << EOD
# x median min max
1 0.6467089655172413 0.6467089655172413 0.6467089655172413 
10 0.5898457294429709 0.5898457294429709 0.5898457294429709 
100 0.5333918982256445 0.5333918982256445 0.5333918982256445 
EOD
$E2 << EOD
# x median min max
1 2.0589462068965516 2.0589462068965516 2.0589462068965516 
10 1.8812808488063661 1.8812808488063661 1.8812808488063661 
100 1.9328951322397054 1.9328951322397054 1.9328951322397054 
EOD
$E3 << EOD
# x median min max
1 1.3281986206896552 1.3281986206896552 1.3281986206896552 
10 1.3297875862068966 1.3297875862068966 1.3297875862068966 
100 1.344782484097757 1.344782484097757 1.344782484097757 
EOD
$E4 << EOD
# x median min max
1 0.5598455172413793 0.5598455172413793 0.5598455172413793 
10 0.5209090716180371 0.5206374535809019 0.5209090716180371 
100 0.5416881151657181 0.5416881151657181 0.5422777636424506 
EOD
plot $E0 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#e6550d" title "Spool", \
     $E1 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#3182bd" title "RocksDB", \
     $E2 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#31a354" title "LMDB", \
     $E3 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#756bb1" title "SQLite", \
     $E4 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#8c6d31" title "LevelDB"
