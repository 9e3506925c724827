# SPDX-License-Identifier: MIT
# suite_table.awk - bench/suite.sh's raw rows (suite_lib.sh) to one group's
# Markdown table, or to the numbers one plot draws.
#   awk -F'\t' -v group=G -v peers="glibc jemalloc ..." [-v plot=METRIC] raw.tsv
# Table: a row per bench, case and metric; per allocator "best / median"
# over the rounds (best: lowest cost or highest rate); last, libslub's
# median over the best peer's median as a cost (a rate is inverted), so
# below 1 libslub wins on every row.  Plot: for METRIC only, each
# allocator's median as a cost relative to the row's best (1 = the best).

function med(key, a,    n, i, j, t, v) {
	n = cnt[key, a]
	for (i = 1; i <= n; i++) v[i] = val[key, a, i]
	for (i = 2; i <= n; i++)	# insertion sort: a handful of rounds
		for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
	return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
function best(key, a,    i, b) {
	b = val[key, a, 1]
	for (i = 2; i <= cnt[key, a]; i++)
		if (high[key] ? val[key, a, i] > b : val[key, a, i] < b) b = val[key, a, i]
	return b
}
function fmt(x) {
	return x >= 1000 ? sprintf("%.0f", x) : x >= 10 ? sprintf("%.1f", x) : sprintf("%.2f", x)
}
function cost(key, x) {	# as a cost: lower is better on every row
	return high[key] ? (x > 0 ? 1 / x : 1e300) : x
}

$1 == group && (plot == "" || $4 == plot) {
	key = $2 SUBSEP $3 SUBSEP $4
	if (!(key in seen)) { seen[key] = 1; keys[++nk] = key; high[key] = $5 == "high" }
	if (!(($6) in aseen)) { aseen[$6] = 1; allocs[++na] = $6 }
	val[key, $6, ++cnt[key, $6]] = $8
}

END {
	np = split(peers, p, " ")
	for (i = 1; i <= np; i++) ispeer[p[i]] = 1
	if (plot == "") {
		printf "| bench | case | metric |"
		for (j = 1; j <= na; j++) printf " %s |", allocs[j]
		print " libslub ÷ best peer |"
		printf "|---|---|---|"
		for (j = 1; j <= na; j++) printf "---:|"
		print "---:|"
	} else {	# the header line gnuplot's columnheader reads
		printf "case"
		for (j = 1; j <= na; j++) printf " %s", allocs[j]
		print ""
	}
	for (k = 1; k <= nk; k++) {
		key = keys[k]
		split(key, part, SUBSEP)
		bp = ""; bpn = ""; rowbest = ""
		for (j = 1; j <= na; j++) {
			a = allocs[j]
			if (!cnt[key, a]) continue
			c = cost(key, med(key, a))
			if (ispeer[a] && (bp == "" || c < bp)) { bp = c; bpn = a }
			if (rowbest == "" || c < rowbest) rowbest = c
		}
		if (plot != "") {
			printf "\"%s %s\"", part[1], part[2]
			for (j = 1; j <= na; j++)
				printf " %s", ((cnt[key, allocs[j]] && rowbest > 0) ? cost(key, med(key, allocs[j])) / rowbest : "?")
			print ""
			continue
		}
		printf "| %s | %s | %s |", part[1], part[2], part[3]
		for (j = 1; j <= na; j++) {
			a = allocs[j]
			printf " %s |", cnt[key, a] ? fmt(best(key, a)) " / " fmt(med(key, a)) : "–"
		}
		if (cnt[key, "libslub"] && bp > 0)
			printf " %.2f (%s) |\n", cost(key, med(key, "libslub")) / bp, bpn
		else
			print " – |"
	}
}
