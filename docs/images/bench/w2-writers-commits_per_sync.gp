# w2-writers-commits_per_sync.png, drawn by spool-bench plot from results.json.
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
set yrange [0:4.589902215126721]
set ytics ("0" 0, "1" 1, "2" 2, "3" 3, "4" 4)
$E0 << EOD
# x median min max
1 1 1 1 
2 1.9841269841269842 1.9801980198019802 1.9849146486701073 
3 2.982107355864811 2.9761904761904763 2.9827003380393715 
4 3.984857541342897 3.971405877680699 3.9912193175014967 
EOD
plot $E0 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb "#e6550d" title "Spool"
