#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# run_agent.sh [BUILD_DIR] - the cost of a live tree to the process it
# shows: bench_agent's 8 allocating threads, ops/s, side by side
#   no agent | agent, no reader | a reader every second (slabinfo -p
#   --watch 1, as someone watching) | 1 reader flat out (slabinfo -p --json
#   in a loop: every attribute of every cache, alloc_calls included)
# Interleaved rounds, median; the change is against "no agent".  Two
# figures: ops/s (wall clock: on a machine with fewer CPUs than 8 threads +
# readers, or busy with other work, a reader's CPU time is taken from the
# allocating threads and other load adds noise; nproc and the load average
# are printed beside) and the allocating threads' own CPU ns per operation
# (what the readers cost them inside the process: lock waits, cache misses).
set -euo pipefail
build=${1:-build}
bin=$build/bench/bench_agent slabinfo=$build/tools/slabinfo
[ -x "$bin" ] && [ -x "$slabinfo" ] || { echo "run_agent.sh: build first ($bin, $slabinfo)" >&2; exit 1; }
rounds=${ROUNDS:-5} seconds=${SECONDS_PER_RUN:-3} threads=${THREADS:-8}
work=$(mktemp -d)
export XDG_RUNTIME_DIR=$work
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
cases=(none idle watch flat)
declare -A runs cpus

one() {	# one CASE: prints ops/s
  local opts=slub_agent readers=()
  [ "$1" = none ] && opts=
  rm -f "$work/out"	# not the last run's "pid" line
  SLUB_OPTIONS=$opts "$bin" "$threads" "$seconds" >"$work/out" &
  local bench=$!
  while ! grep -qs '^pid' "$work/out"; do sleep 0.01; done
  local pid; pid=$(awk '/^pid/ {print $2}' "$work/out")
  if [ "$1" = watch ] || [ "$1" = flat ]; then
    while [ ! -S "$work/slub/$pid.sock" ] && kill -0 "$bench" 2>/dev/null; do sleep 0.01; done
    if [ "$1" = watch ]; then
      "$slabinfo" -p "$pid" --watch 1 >/dev/null 2>&1 & readers+=($!)
    else
      (while kill -0 "$bench" 2>/dev/null; do "$slabinfo" -p "$pid" --json >/dev/null 2>&1 || true; done) &
      readers+=($!)
    fi
  fi
  wait "$bench"
  [ ${#readers[@]} = 0 ] || { kill "${readers[@]}" 2>/dev/null || true; wait "${readers[@]}" 2>/dev/null || true; }
  awk '/^ops_per_s/ {o = $2} /^cpu_ns_per_op/ {c = $2} END {print o, c}' "$work/out"
}

for r in $(seq "$rounds"); do
  for c in "${cases[@]}"; do
    read -r o n < <(one "$c")
    runs[$c]="${runs[$c]:-} $o" cpus[$c]="${cpus[$c]:-} $n"
  done
done
median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
base=$(echo "${runs[none]}" | median) cbase=$(echo "${cpus[none]}" | median)
echo "== $threads allocating threads, median of $rounds interleaved ${seconds}s runs, $(nproc) CPUs," \
     "load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-34s %12s %9s %14s %9s\n' case ops/s "vs none" "CPU ns/op" "vs none"
declare -A label=([none]="no agent" [idle]="agent on, no reader"
                  [watch]="slabinfo -p --watch 1" [flat]="slabinfo -p --json, flat out")
for c in "${cases[@]}"; do
  m=$(echo "${runs[$c]}" | median) n=$(echo "${cpus[$c]}" | median)
  awk -v l="${label[$c]}" -v m="$m" -v b="$base" -v n="$n" -v cb="$cbase" \
    'BEGIN {printf "%-34s %12.0f %+8.1f%% %14.1f %+8.1f%%\n", l, m, (m / b - 1) * 100, n, (n / cb - 1) * 100}'
done
