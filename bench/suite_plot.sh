#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# suite_plot.sh RAW GROUP METRIC TITLE OUT.png PEERS - one bar chart of a
# suite run: for each case of GROUP's METRIC, each allocator's median as a
# cost relative to the best allocator of that case (suite_table.awk's plot
# mode), so 1 is the winner and every row reads the same way, rates too.
# A log scale: the spread runs from a few percent to a hundredfold.
set -euo pipefail
raw=$1 group=$2 metric=$3 title=$4 out=$5 peers=$6
command -v gnuplot >/dev/null || { echo "suite_plot.sh: no gnuplot, no $out" >&2; exit 0; }
dat=$(mktemp)
trap 'rm -f "$dat"' EXIT
awk -F'\t' -v group="$group" -v plot="$metric" -v peers="$peers" \
  -f "$(dirname "$0")/suite_table.awk" "$raw" >"$dat"
rows=$(($(wc -l <"$dat") - 1))
cols=$(head -1 "$dat" | wc -w)
[ "$rows" -gt 0 ] || exit 0
width=$((300 + rows * (cols - 1) * 9))
[ "$width" -lt 800 ] && width=800
gnuplot <<EOG
set terminal pngcairo size $width,480 noenhanced font "sans,9"
set output "$out"
set title "$title (1 = best of the case; lower is better)"
set datafile missing "?"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set logscale y 2
set yrange [0.9:*]
set grid ytics
set key top left horizontal
set xtics rotate by -40 scale 0
set ylabel "median cost / best median"
plot for [i=2:$cols] "$dat" using i:xtic(1) title columnheader(i)
EOG
