# SPDX-License-Identifier: GPL-2.0
#
# The chart of scripts/bench.sh, from its CSV (row,label,unit,rnic,rxe,
# rnic_over_rxe,rnic_min,rnic_max,rxe_min,rxe_max,rounds; rnic and rxe
# are the medians over the rounds):
#
#   gnuplot -e "csv='bench.csv'; png='bench.png'; heading='...'" chart.gp
#
# Four panels, one per unit so that no bar is dwarfed by another unit's:
# throughput, latency and message rate as rnic/rxe bar pairs (the
# medians, an error bar from the lowest to the highest round), and every
# row's ratio of the medians against the line at 1.  A missing figure is
# an empty CSV field: no bar.

# noenhanced: labels are literal ("FETCH_ADD" is no subscript).
set terminal pngcairo size 1600,1100 font "sans,10" noenhanced
set output png
set datafile separator ","
set datafile missing ""
set style data histograms
set style histogram errorbars gap 1 lw 1
set style fill solid 0.85 border -1
set boxwidth 0.9 relative
set grid ytics
set key top left
set xtics rotate by 30 right nomirror
set yrange [0:*]
set bmargin 9
# room for the first rotated label
set lmargin 14

# rows(u): the CSV rows of unit u (all rows for u = ""), without the header.
rows(u) = sprintf("< awk -F, 'NR > 1 && (\"%s\" == \"\" || $3 == \"%s\")' '%s'", u, u, csv)

rnic = "#2b6cb0"
rxe = "#dd6b20"

set multiplot layout 2,2 title heading font "sans,13"

set title "Throughput, MB/s (higher is better)"
plot rows("MB/s") using 4:7:8:xtic(2) title "rnic" lc rgb rnic, \
	"" using 5:9:10 title "rxe" lc rgb rxe

set title "Latency at depth 1, us (lower is better)"
plot rows("us") using 4:7:8:xtic(2) title "rnic" lc rgb rnic, \
	"" using 5:9:10 title "rxe" lc rgb rxe

set title "64 B SEND message rate, msg/s (higher is better)"
plot rows("msg/s") using 4:7:8:xtic(2) title "rnic" lc rgb rnic, \
	"" using 5:9:10 title "rxe" lc rgb rxe

set style histogram clustered gap 1
set title "rnic / rxe per row, medians (latency: above 1 is slower)"
plot rows("") using 6:xtic(2) notitle lc rgb rnic, \
	1 with lines dt 2 lw 2 lc rgb "black" notitle

unset multiplot
