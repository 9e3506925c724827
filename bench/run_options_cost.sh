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
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
slub=$build/libslub-malloc.so
rounds=${ROUNDS:-3}
read -ra options <<<"${OPTIONS:-kfence.sample_interval=100 kfence.sample_interval=10 init_on_alloc=1 init_on_free=1 slab_freelist_random=1}"
[ -e "$slub" ] || { echo "run_options_cost.sh: build first ($build)" >&2; exit 1; }
command -v perf >/dev/null || { echo "run_options_cost.sh: needs perf" >&2; exit 1; }
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
      t=$(LD_PRELOAD=$slub SLUB_OPTIONS="$o" perf stat -x, -e task-clock -r 5 bash -c "${cmds[$p]}" 2>&1 >/dev/null |
          awk -F, '/task-clock/ {print $1}')
      [ -n "$t" ] || { echo "run_options_cost.sh: $p with '$o' did not run" >&2; exit 1; }
      k=$p/$m
      if [ -z "${best[$k]:-}" ] || awk -v a="$t" -v b="${best[$k]}" 'BEGIN{exit !(a<b)}'; then best[$k]=$t; fi
    done
  done
  echo "round $r of $rounds done" >&2
done
echo "== CPU ms (task-clock, mean of 5), best of $rounds rounds; the option's over none"
for p in "${programs[@]}"; do
  printf '%-8s none %8.1f' "$p" "${best[$p/none]}"
  for m in "${options[@]}"; do
    printf '   %s %.3f' "$m" "$(awk -v a="${best[$p/$m]}" -v b="${best[$p/none]}" 'BEGIN{print a/b}')"
  done
  echo
done
