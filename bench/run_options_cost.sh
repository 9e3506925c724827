#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# run_options_cost.sh [BUILD_DIR] - what a run-time option costs real
# programs: sqlite3 (100,000 rows inserted and indexed), a Python workload
# and gcc compiling slub.c, each under libslub-malloc.so without options and
# with each of OPTIONS (default: KFENCE by the clock at the kernel's 100 ms
# and at 10 ms, and the three hardening options).  CPU time (perf stat's
# task-clock, the mean of 5 runs), best of ROUNDS interleaved rounds
# (default 3); then each option's time over none.  Not in CI: minutes of
# machine time, and only the ratios mean anything.
# IR=1: instructions instead (callgrind's total over the program and its
# children, one run each), which no noise moves; give a -DSLUB_FAKE_RSEQ=ON
# build so that the rseq paths run under valgrind.  Valgrind runs some 50
# times slower, so a sampling interval in ms takes that many times more
# samples per instruction than natively: the ratio is an upper bound.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
slub=$build/libslub-malloc.so
rounds=${ROUNDS:-3}
read -ra options <<<"${OPTIONS:-kfence.sample_interval=100 kfence.sample_interval=10 init_on_alloc=1 init_on_free=1 slab_freelist_random=1}"
[ -e "$slub" ] || { echo "run_options_cost.sh: build first ($build)" >&2; exit 1; }
if [ "${IR:-0}" = 1 ]; then
  command -v valgrind >/dev/null || { echo "run_options_cost.sh: IR=1 needs valgrind" >&2; exit 1; }
  rounds=1
else
  command -v perf >/dev/null || { echo "run_options_cost.sh: needs perf" >&2; exit 1; }
fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# measure PROGRAM OPTIONS: CPU ms (task-clock, mean of 5), or with IR=1 instructions.
measure() {
  if [ "${IR:-0}" = 1 ]; then
    rm -f "$tmp"/cg.*
    LD_PRELOAD=$slub SLUB_OPTIONS="$2" valgrind -q --tool=callgrind --trace-children=yes \
      --callgrind-out-file="$tmp/cg.%p" bash -c "${cmds[$1]}" >/dev/null 2>&1 || return 1
    cat "$tmp"/cg.* | awk '/^(summary|totals):/ {s += $2} END {printf "%.0f\n", s}'
  else
    LD_PRELOAD=$slub SLUB_OPTIONS="$2" perf stat -x, -e task-clock -r 5 bash -c "${cmds[$1]}" 2>&1 >/dev/null |
      awk -F, '/task-clock/ {print $1}'
  fi
}
declare -A cmds=(
  [sqlite]="sqlite3 :memory: <$src/bench/sqlite_rows.sql"
  [python]="python3 $src/tests/programs/workload.py"
  [gcc]="gcc -O2 -I$src/include -I$build/include -I$src/src -c $src/src/slab/core/slub.c -o /dev/null"
)
programs=(sqlite python gcc)
modes=(none "${options[@]}")
declare -A best
for r in $(seq "$rounds"); do
  for p in "${programs[@]}"; do
    for m in "${modes[@]}"; do
      o=$m; [ "$m" = none ] && o=
      t=$(measure "$p" "$o")
      [ -n "$t" ] || { echo "run_options_cost.sh: $p with '$o' did not run" >&2; exit 1; }
      k=$p/$m
      if [ -z "${best[$k]:-}" ] || awk -v a="$t" -v b="${best[$k]}" 'BEGIN{exit !(a<b)}'; then best[$k]=$t; fi
    done
  done
  echo "round $r of $rounds done" >&2
done
if [ "${IR:-0}" = 1 ]; then
  echo "== instructions (callgrind), one run; the option's over none"
else
  echo "== CPU ms (task-clock, mean of 5), best of $rounds rounds; the option's over none"
fi
for p in "${programs[@]}"; do
  printf '%-8s none %8.1f' "$p" "${best[$p/none]}"
  for m in "${options[@]}"; do
    printf '   %s %.3f' "$m" "$(awk -v a="${best[$p/$m]}" -v b="${best[$p/none]}" 'BEGIN{print a/b}')"
  done
  echo
done
