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
set yrange [0:1268467.850938769]
set ytics ("0" 0, "250k" 250000, "500k" 500000, "750k" 750000, "1M" 1000000, "1.25M" 1250000)
$E0 << EOD
# x median min max
10000 962896.5252424913 929083.7482454892 1103015.5225554514 
100000 377853.1773717138 305834.6262963655 507012.081017955 
EOD
$E1 << EOD
# x median min max
10000 103326.61931426756 67959.97920958801 110932.46916052396 
100000 99620.15934046241 64609.56377776297 105825.9782660183 
EOD
$E2 << EOD
# x median min max
10000 371888.2923509367 246298.66188547763 397432.3201373933 
100000 81209.56861081257 56769.16095421094 89785.97971904413 
EOD
$E3 << EOD
# x median min max
10000 428776.0205809917 256139.58386046859 453957.57741925307 
100000 113101.6857631521 72604.98826422227 114690.81153840807 
EOD
$E4 << EOD
# x median min max
10000 372245.45344056236 222306.3244098519 372850.23595566186 
100000 241467.80717208187 157851.36821718345 248023.52778963247 
EOD
plot $E0 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#e6550d" title "Spool", \
     $E1 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#3182bd" title "RocksDB", \
     $E2 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#31a354" title "LMDB", \
     $E3 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#756bb1" title "SQLite", \
     $E4 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#8c6d31" title "LevelDB"
