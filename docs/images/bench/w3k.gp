# w3k.png, drawn by spool-bench plot from results.json.
# To draw it again: cd to this directory, then gnuplot w3k.gp
set encoding utf8
set terminal pngcairo size 1000,560 noenhanced font "Sans,11"
small_font = ",9"
set output "w3k.png"
set border 3
set tics nomirror
set grid ytics lt 1 lc rgb "#e0e0e0"
set title "W3 keyed: W3's records as rows of a keyed table"
set ylabel "records/s"
set key off
set xrange [-0.6:5.6]
set bmargin 4
set xtics scale 0 ("Spool keyed table" 0, "Spool log only\n(plain W3)" 1, "RocksDB" 2, "LMDB" 3, "SQLite" 4, "LevelDB" 5)
set yrange [0:2022173.2883639506]
set ytics ("0" 0, "500k" 500000, "1M" 1000000, "1.5M" 1500000, "2M" 2000000)
set boxwidth 0.6
set style fill solid 0.9 border rgb "#404040"
$BARS << EOD
# x median min max colour label
0 338391.01563420787 330166.0660001101 355278.2619773923 15095053 338k
1 1689392.905146323 1554590.5565952028 1758411.5550990875 16616764 1.69M
2 777600.8241262366 765490.1788017683 854512.89326951 3244733 778k
3 1101535.196991469 1091242.677446538 1116488.440119015 3253076 1.1M
4 604547.5042637677 584866.7591787461 622130.8917482978 7695281 605k
5 1117524.5609743579 1109892.0389922431 1121710.8656277915 9202993 1.12M
EOD
plot $BARS using 1:2:5 with boxes lc rgb variable, \
     $BARS using 1:2:3:4:2 with candlesticks whiskerbars 0.3 lc rgb "#202020" lw 1.5 fill empty, \
     $BARS using 1:4:6 with labels offset 0,0.8
