# w5.png, drawn by spool-bench plot from docs/images/bench/results.json.
# To draw it again: cd to this directory, then gnuplot w5.gp
set encoding utf8
set terminal pngcairo size 1000,560 noenhanced font "Sans,11"
small_font = ",9"
set output "w5.png"
set border 3
set tics nomirror
set grid ytics lt 1 lc rgb "#e0e0e0"
set title "W5: time travel, full read of a 100,000-row table"
set ylabel "s"
set key off
set xrange [-0.6:9.6]
set xtics scale 0 rotate by 30 right ("Spool table (asof_read_s)" 0, "Spool table (latest_read_s)" 1, "RocksDB (asof_read_s)" 2, "RocksDB (latest_read_s)" 3, "LMDB (asof_read_s)" 4, "LMDB (latest_read_s)" 5, "SQLite (asof_read_s)" 6, "SQLite (latest_read_s)" 7, "LevelDB (asof_read_s)" 8, "LevelDB (latest_read_s)" 9)
set yrange [0:0.1327580171]
set ytics ("0" 0, "0.025" 0.025, "0.05" 0.05, "0.075" 0.07500000000000001, "0.1" 0.1, "0.125" 0.125)
set boxwidth 0.6
set style fill solid 0.9 border rgb "#404040"
$BARS << EOD
# x median min max colour label
0 0.018588763 0.014687871 0.019496599 15095053 0.0186
1 0.011356894 0.011140743 0.015701019 15095053 0.0114
2 0.078387984 0.075796083 0.11519777 3244733 0.0784
3 0.097921654 0.075513134 0.115441754 3244733 0.0979
4 0.021712144 0.016505089 0.022266459 3253076 0.0217
5 0.021403869 0.017008747 0.022995927 3253076 0.0214
6 0.045831057 0.044118901 0.076446459 7695281 0.0458
7 0.046435227 0.043835362 0.076307938 7695281 0.0464
8 0.042115269 0.040700737 0.067344054 9202993 0.0421
9 0.04156863 0.040435424 0.067422142 9202993 0.0416
EOD
plot $BARS using 1:2:5 with boxes lc rgb variable, \
     $BARS using 1:2:3:4:2 with candlesticks whiskerbars 0.3 lc rgb "#202020" lw 1.5 fill empty, \
     $BARS using 1:4:6 with labels offset 0,0.8
