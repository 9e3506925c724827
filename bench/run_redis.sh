#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# run_redis.sh [BUILD_DIR] - Debian's redis-server under libslub-malloc.so
# and each peer (LD_PRELOAD; jemalloc is redis's own, glibc's malloc comes
# in through libc_malloc_debug.so, which only wraps it): requests per second
# of redis-benchmark's SET (1M random keys written into a growing heap, a
# freed value for each overwrite), GET, LPUSH, HSET and LRANGE_100, on a
# fresh server each, and the server's peak RSS.  ROUNDS
# interleaved rounds (default 3), the best rate and the highest RSS; the
# ratios are libslub's to the best peer's (rate: above 1 is faster).
# IO_THREADS=N: the server reads and writes its sockets on N threads
# (io-threads, io-threads-do-reads), so requests are parsed and replies
# freed on threads other than the one that runs the commands: a threaded
# server under load.  REQUESTS per test (default 1M).  The contenders are
# bench/peers.sh's; libslub is the library as shipped (malloc on sheaves
# where rseq runs).  UNQUEUED=1 runs it a second time on the seeds' unqueued
# cpu slabs, slub-unqueued (slub_malloc_sheaves=0): a column of its own and
# a last column, its figure over libslub's.  SUITE_RAW=FILE (bench/suite.sh)
# appends each run's figures there (suite_lib.sh's rows).
set -euo pipefail
build=$(cd "${1:-build-bench}" && pwd)
rounds=${ROUNDS:-3}
command -v redis-server >/dev/null && command -v redis-benchmark >/dev/null ||
  { echo "run_redis.sh: needs redis-server and redis-tools (scripts/install-deps.sh bench)" >&2; exit 1; }
. "$(dirname "$0")/peers.sh"
ask_variants 0
preload[jemalloc]=	# redis-server links jemalloc: its own run
if [ -e "$lib/libc_malloc_debug.so.0" ]; then
  preload[glibc]=$lib/libc_malloc_debug.so.0
else
  names=(libslub "${names[@]:2}")
fi
tests=(set get lpush hset lrange_100)
requests=${REQUESTS:-1000000}
io=()
bench_name=redis
if [ "${IO_THREADS:-1}" -gt 1 ]; then
  io=(--io-threads "$IO_THREADS" --io-threads-do-reads yes)
  bench_name=redis-io$IO_THREADS
fi
raw() {	# raw CASE METRIC BETTER ALLOC VALUE
  [ -z "${SUITE_RAW:-}" ] ||
    printf 'programs\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$bench_name" "$1" "$2" "$3" "$4" "$r" "$5" >>"$SUITE_RAW"
}
work=$(mktemp -d)
trap 'redis-cli -s "$work/sock" shutdown nosave >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

for r in $(seq "$rounds"); do
  for n in "${names[@]}" "${variants[@]}"; do
    rm -f "$work/dump.rdb"
    # Not `preloaded`: $! must be the server's pid, not a subshell's.
    SLUB_OPTIONS=$(slub_options "$n") LD_PRELOAD=${preload[$n]} redis-server --port 0 --unixsocket "$work/sock" --dir "$work" \
      --save "" --appendonly no "${io[@]}" >/dev/null 2>&1 &
    pid=$!
    # Up to 20 s to come up: on a loaded machine 5 s was not always enough.
    for _ in $(seq 400); do redis-cli -s "$work/sock" ping >/dev/null 2>&1 && break; sleep 0.05; done
    # A server that gave no figures is said so and skipped, not the run ended.
    out=$(redis-benchmark -s "$work/sock" -q -n "$requests" -c 50 -P 16 -d 100 -r 1000000 \
            -t "$(IFS=,; echo "${tests[*]}")" 2>/dev/null | tr '\r' '\n' | grep 'requests per second') ||
      echo "run_redis.sh: no figures from $n's server in round $r" >&2
    for t in "${tests[@]}"; do
      label=$(tr a-z A-Z <<<"$t" | sed 's/LRANGE_100/LRANGE_100 (first 100 elements)/')
      rps=$(sed -n "s/^$label: \([0-9.]*\) requests.*/\1/p" <<<"$out" | head -1)
      [ -n "$rps" ] || continue
      krps=$(awk -v x="$rps" 'BEGIN { printf "%.0f", x / 1000 }')
      keep_best "$t/$n" "$krps" max
      raw "$t" krps high "$n" "$krps"
    done
    hwm=$(awk '/VmHWM/ { printf "%.0f", $2 / 1024 }' /proc/$pid/status 2>/dev/null || true)
    if [ -n "$hwm" ]; then
      keep_best "rss/$n" "$hwm" max
      raw - peak-MiB low "$n" "$hwm"
    fi
    redis-cli -s "$work/sock" shutdown nosave >/dev/null 2>&1 || true
    wait $pid || true
  done
done

echo "== $bench_name: thousands of requests per second (best of $rounds rounds; 50 clients, pipeline 16, io-threads ${IO_THREADS:-1})"
row_format='%-12s' col_format='%9s' ratio_format='%18.2f'
[ ${#variants[@]} -eq 0 ] || col_format='%13s'	# slub-unqueued
ratio_header test
for t in "${tests[@]}"; do
  ratio_row "$t" "$t" max
done
ratio_row rss rss
echo "(rss: the server's peak, MiB; for it, below 1 is better.  SET writes 1M random keys:"
echo " every overwrite frees a value that is rarely in the CPU slab, on unqueued cpu slabs"
echo " SLUB's slow path; a CPU's sheaf takes it whatever its slab)"
