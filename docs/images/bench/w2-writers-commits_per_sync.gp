# w2-writers-commits_per_sync.png, drawn by spool-bench plot from docs/images/bench/results.json.
# To draw it again: cd to this directory, then gnuplot w2-writers-commits_per_sync.gp
set encoding utf8
set terminal pngcairo size 1000,560 noenhanced font "Sans,11"
small_font = ",9"
set output "w2-writers-commits_per_sync.png"
set border 3
set tics nomirror
set grid ytics lt 1 lc rgb "#e0e0e0"
set title "W2 scaling: durable commits/s against the writers — commits per sync"
set ylabel "commits/sync"
set key outside top center horizontal
set grid xtics
set xlabel "writers"
set xrange [0.85:4.15]
set xtics (1, 2, 3, 4)
set yrange [0:4.593569003395246]
set ytics ("0" 0, "1" 1, "2" 2, "3" 3, "4" 4)
$E0 << EOD
# x median min max
1 1 1 1 
2 1.9972039145196725 1.9036740909956216 1.9984012789768186 
3 2.983887010145216 2.9803298231670974 2.985074626865672 
4 3.984857541342897 3.964321110009911 3.994407829039345 
EOD
plot $E0 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#e6550d" title "Spool"
