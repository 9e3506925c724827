#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# fuzz.sh BUILD [SECONDS] - run each libFuzzer target of fuzz/ (built in
# BUILD by `make fuzz`) for SECONDS (60), from its seeds in fuzz/corpus/NAME/
# (read only: what it finds goes to BUILD/fuzz-out/NAME/corpus/), and print
# one line per target: "fuzz NAME: RUNS runs, no crash", or the failure
# with the input that caused it and the full log.  Exits 1 if any failed.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:?usage: fuzz.sh BUILD [SECONDS]}
seconds=${2:-60}
targets=(options slub_debug attr agent cfi)

failed=0
for t in "${targets[@]}"; do
	bin=$build/fuzz/fuzz_$t
	out=$build/fuzz-out/$t
	mkdir -p "$out/corpus"
	log=$out/log
	args=(-max_total_time="$seconds" -timeout=10 -print_final_stats=1 -artifact_prefix="$out/")
	[ -f "fuzz/$t.dict" ] && args+=(-dict="fuzz/$t.dict")
	if [ ! -x "$bin" ]; then
		echo "fuzz $t: not built ($bin)"; failed=1; continue
	fi
	"$bin" "${args[@]}" "$out/corpus" "fuzz/corpus/$t" >"$log" 2>&1
	rc=$?
	# libFuzzer's last words: "Done N runs in S second(s)" when nothing broke.
	runs=$(sed -nE 's/^Done ([0-9]+) runs in .*/\1/p' "$log" | tail -1)
	if [ "$rc" -eq 0 ] && [ -n "$runs" ]; then
		echo "fuzz $t: $runs runs, no crash"
		continue
	fi
	failed=1
	runs=$(sed -nE 's/^#([0-9]+).*/\1/p' "$log" | tail -1)
	input=$(sed -nE 's/.*Test unit written to (.*)$/\1/p' "$log" | tail -1)
	# The first line that says what broke: our invariant, a sanitizer's or libFuzzer's.
	why=$(grep -m1 -E '^fuzz: |^SUMMARY: |ERROR: libFuzzer|runtime error:' "$log")
	echo "fuzz $t: FAILED (exit $rc) after ${runs:-0} runs: ${why:-see the log}; input ${input:-none}; log $log"
done
exit $failed
