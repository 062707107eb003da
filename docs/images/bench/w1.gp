# w1.png, drawn by spool-bench plot from results.json.
# To draw it again: cd to this directory, then gnuplot w1.gp
set encoding utf8
set terminal pngcairo size 1000,560 noenhanced font "Sans,11"
small_font = ",9"
set output "w1.png"
set border 3
set tics nomirror
set grid ytics lt 1 lc rgb "#e0e0e0"
set title "W1: one writer, 1 record per durable commit"
set ylabel "commits/s"
set key off
set xrange [-0.6:6.6]
set bmargin 5
set xtics scale 0 ("raw 4-KiB\noverwrite +\nfdatasync" 0, "raw 4-KiB\nappend +\nfdatasync" 1, "Spool" 2, "RocksDB" 3, "LMDB" 4, "SQLite" 5, "LevelDB" 6)
set yrange [0:7375.188311765392]
set ytics ("0" 0, "2000" 2000, "4000" 4000, "6000" 6000)
set boxwidth 0.6
set style fill solid 0.9 border rgb "#404040"
$BARS << EOD
# x median min max colour label
0 5916.414673155197 5120.61576903939 6413.207227622081 10395294 5916
1 3665.917726518185 3657.7040196690195 4228.500882534014 10395294 3666
2 5741.7879500372555 5624.4578150974185 6194.057815183893 15095053 5742
3 3443.8282173026673 3395.1950588053155 4091.9636863912183 3244733 3444
4 2468.5590065906654 2401.130109750562 2500.037515875468 3253076 2469
5 4806.704996620507 4133.767410438295 5809.3185742103215 7695281 4807
6 4161.961417545954 4008.753299637663 4648.878377270733 9202993 4162
EOD
plot $BARS using 1:2:5 with boxes lc rgb variable, \
     $BARS using 1:2:3:4:2 with candlesticks whiskerbars 0.3 lc rgb "#202020" lw 1.5 fill empty, \
     $BARS using 1:4:6 with labels offset 0,0.8
