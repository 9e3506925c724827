#!/usr/bin/env bash
# run_redis.sh [BUILD_DIR] - Debian's redis-server under libslub-malloc.so
# and each peer (LD_PRELOAD; jemalloc is redis's own, glibc's malloc comes
# in through libc_malloc_debug.so, which only wraps it): requests per second
# of redis-benchmark's SET (1M random keys written into a growing heap, a
# freed value for each overwrite), GET, LPUSH, HSET and LRANGE_100, on a
# fresh server each, and the server's peak RSS.  ROUNDS
# interleaved rounds (default 3), the best rate and the highest RSS; the
# ratios are libslub's to the best peer's (rate: above 1 is faster).
set -euo pipefail
build=$(cd "${1:-build-bench}" && pwd)
rounds=${ROUNDS:-3}
command -v redis-server >/dev/null && command -v redis-benchmark >/dev/null ||
  { echo "run_redis.sh: needs redis-server and redis-tools (scripts/install-deps.sh bench)" >&2; exit 1; }
. "$(dirname "$0")/peers.sh"
preload[jemalloc]=	# redis-server links jemalloc: its own run
if [ -e "$lib/libc_malloc_debug.so.0" ]; then preload[glibc]=$lib/libc_malloc_debug.so.0; else
  names=("${names[@]/glibc}"); fi
tests=(set get lpush hset lrange_100)
work=$(mktemp -d)
trap 'redis-cli -s "$work/sock" shutdown nosave >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

declare -A rss
for r in $(seq "$rounds"); do
  for n in "${names[@]}"; do
    [ -n "$n" ] || continue
    rm -f "$work/dump.rdb"
    LD_PRELOAD=${preload[$n]} redis-server --port 0 --unixsocket "$work/sock" --dir "$work" \
      --save "" --appendonly no >/dev/null 2>&1 &
    pid=$!
    for _ in $(seq 100); do redis-cli -s "$work/sock" ping >/dev/null 2>&1 && break; sleep 0.05; done
    out=$(redis-benchmark -s "$work/sock" -q -n 1000000 -c 50 -P 16 -d 100 -r 1000000 \
            -t "$(IFS=,; echo "${tests[*]}")" 2>/dev/null | tr '\r' '\n' | grep 'requests per second')
    for t in "${tests[@]}"; do
      label=$(tr a-z A-Z <<<"$t" | sed 's/LRANGE_100/LRANGE_100 (first 100 elements)/')
      rps=$(sed -n "s/^$label: \([0-9.]*\) requests.*/\1/p" <<<"$out" | head -1)
      # keep_best keeps the lowest: store the inverse rate
      keep_best "$t/$n" "$(awk -v x="$rps" 'BEGIN { printf "%.9f", (x > 0 ? 1 / x : 1) }')"
    done
    k=$(awk '/VmHWM/ { print $2 }' /proc/$pid/status)
    [ -z "${rss[$n]:-}" ] || [ "$k" -gt "${rss[$n]}" ] && rss[$n]=$k
    redis-cli -s "$work/sock" shutdown nosave >/dev/null 2>&1 || true
    wait $pid || true
  done
done

echo "== redis-server: thousands of requests per second (best of $rounds rounds; 50 clients, pipeline 16)"
printf '%-12s' test; for n in "${names[@]}"; do [ -n "$n" ] && printf ' %9s' "$n"; done; printf ' %18s\n' "libslub/best peer"
for t in "${tests[@]}" rss; do
  printf '%-12s' "$t"
  bestpeer=
  for n in "${names[@]}"; do
    [ -n "$n" ] || continue
    if [ "$t" = rss ]; then v=$(( rss[$n] / 1024 )); else v=$(awk -v x="${best[$t/$n]}" 'BEGIN { printf "%.0f", 1 / x / 1000 }'); fi
    printf ' %9s' "$v"
    [ "$n" = libslub ] && mine=$v
    if [ "$n" != libslub ]; then
      if [ "$t" = rss ]; then better=$(( v < ${bestpeer:-999999999} )); else better=$(awk -v a="$v" -v b="${bestpeer:-0}" 'BEGIN { print (a > b ? 1 : 0) }'); fi
      [ "$better" = 1 ] && bestpeer=$v
    fi
  done
  awk -v a="$mine" -v b="$bestpeer" 'BEGIN { printf " %18.2f\n", (b > 0 ? a / b : 0) }'
done
echo "(rss: the server's peak, MiB; for it, below 1 is better.  SET writes 1M random keys:"
echo " every overwrite frees a value that is rarely in the CPU slab, SLUB's slow path)"
