#!/bin/bash
# SPDX-License-Identifier: MIT
# One capture of 16 frames, 24 calls deep: time (best of 5 runs) and
# instructions (callgrind) per capture for each unwinder; see bench_stacktrace.c.
#   bench/run_stacktrace.sh [BUILD]
set -eu
bin=${1:-build}/bench/bench_stacktrace
for mode in save backtrace unwind fp depot; do
	ns=$(for i in 1 2 3 4 5; do "$bin" "$mode"; done | awk '{print $4}' | sort -n | head -1)
	ir=-
	if command -v valgrind >/dev/null; then
		out=$(mktemp)
		valgrind --tool=callgrind --callgrind-out-file="$out" --toggle-collect=measure \
			"$bin" "$mode" 1000 >/dev/null 2>&1
		ir=$(awk '/^summary:/ {print int($2 / 1000)}' "$out")
		rm -f "$out"
	fi
	printf '%-9s %8s ns %8s Ir\n' "$mode" "$ns" "$ir"
done
