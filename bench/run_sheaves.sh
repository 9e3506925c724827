#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# run_sheaves.sh [BUILD_DIR] - the seeds' unqueued per-CPU slabs against the
# kernel's sheaves (slub_sheaves=N, default N=32), side by side in one run.
# SHEAVES=N here is that N.  Unqueued is also slub_malloc_sheaves=0 (peers.sh's
# slub-unqueued): libslub-malloc.so is on sheaves by default.
# The counting builds need bench_slab and slub_malloc built:
#   cmake -S . -B build-count -DSLUB_FAKE_RSEQ=ON
#  1. ns per alloc+free pair of 64 bytes: kmem_cache, kmalloc, and malloc
#     through libslub-malloc.so (LD_PRELOAD), with glibc and the peers'
#     malloc beside them; interleaved rounds, best round.
#  2. instructions per pair under callgrind, each loop's own included: the
#     rseq path in the counting build (COUNT_BUILD, -DSLUB_FAKE_RSEQ=ON) and
#     the cmpxchg16b/locked path valgrind really runs.
#  3. ns per random replacement in a live heap (bench_churn), single- and
#     multi-threaded paths.
#  4. fragmentation: bench_slab_frag's slabs and objects in use per slab after
#     4 threads churned one cache, before and after kmem_cache_shrink.
set -euo pipefail
build=${1:-build}
count_build=${COUNT_BUILD:-build-count}
sheaves=${SHEAVES:-32}
rounds=${ROUNDS:-5}
iters=${ITERS:-20000000}
bin=$build/bench
[ -x "$bin/bench_slab" ] && [ -x "$bin/bench_slab_frag" ] ||
  { echo "run_sheaves.sh: build first ($bin/bench_slab, bench_slab_frag missing)" >&2; exit 1; }
. "$(dirname "$0")/peers.sh"
designs=(unqueued sheaves)
declare -A opts=([unqueued]=${alloc_options[slub-unqueued]} [sheaves]="slub_sheaves=$sheaves")

# One timing; libslub's rows run with the design's options, the peers' with none.
time_pair() {	# time_pair MODE DESIGN|PEER
  local pre= o=
  if [ -n "${opts[$2]+x}" ]; then
    o=${opts[$2]}
    [ "$1" = malloc ] && pre=${preload[libslub]}
  else
    pre=${preload[$2]}
  fi
  SLUB_OPTIONS=$o LD_PRELOAD=$pre "$bin/bench_slab" "$1" "$iters" | awk '{print $2}'
}

peers=("${names[@]:1}")
for r in $(seq "$rounds"); do
  for m in cache kmalloc malloc; do
    for d in "${designs[@]}"; do keep_best "$m/$d" "$(time_pair "$m" "$d")"; done
  done
  for p in "${peers[@]}"; do keep_best "malloc/$p" "$(time_pair malloc "$p")"; done
done
echo "== ns per alloc+free pair, 64 bytes (best of $rounds interleaved rounds, $iters pairs; rseq path)"
printf '%-12s %10s %10s %16s\n' pair unqueued sheaves "sheaves/unqueued"
for m in cache kmalloc malloc; do
  awk -v m="$m" -v u="${best[$m/unqueued]}" -v s="${best[$m/sheaves]}" \
    'BEGIN{printf "%-12s %10.2f %10.2f %16.2f\n", m, u, s, s / u}'
done
for p in "${peers[@]}"; do printf '%-12s %10.2f   (malloc pair)\n' "$p" "${best[malloc/$p]}"; done

if command -v valgrind >/dev/null; then
  tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
  count() {	# count BUILD MODE OPTIONS
    local pre=
    if [ "$2" = malloc ]; then
      [ -e "$1/libslub-malloc.so" ] || { printf '%10s' -; return; }
      pre=$(realpath "$1/libslub-malloc.so")
    fi
    SLUB_OPTIONS=$3 LD_PRELOAD=$pre valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" \
      --collect-atstart=no --toggle-collect=measured "$1/bench/bench_slab" "$2" 100000 >/dev/null 2>&1
    awk '/^(summary|totals):/ {t=$2} END {printf "%10.1f", t / 100000}' "$tmp/cg"
  }
  echo
  echo "== instructions per alloc+free pair, 64 bytes (callgrind, the loop's own included)"
  printf '%-37s %10s %10s\n' "pair (path)" unqueued sheaves
  for m in cache kmalloc malloc; do
    if [ -x "$count_build/bench/bench_slab" ]; then
      printf '%-37s' "$m (rseq, counting build)"
      for d in "${designs[@]}"; do count "$count_build" "$m" "${opts[$d]}"; done
      echo
    fi
    printf '%-37s' "$m (as valgrind runs: no rseq)"
    for d in "${designs[@]}"; do count "$build" "$m" "${opts[$d]}"; done
    echo
  done
fi

echo
echo "== ns per random replacement, 16..104-byte objects (bench_churn, best of $rounds)"
cases=("3000000 3000000" "3000000 3000000 threaded" "30000 10000000" "30000 10000000 threaded")
for r in $(seq "$rounds"); do
  for c in "${cases[@]}"; do
    for d in "${designs[@]}"; do
      # shellcheck disable=SC2086
      keep_best "churn $c/$d" "$(SLUB_OPTIONS=${opts[$d]} LD_PRELOAD=${preload[libslub]} \
        "$bin/bench_churn" $c | awk '{print $2}')"
    done
  done
done
printf '%-34s %10s %10s %16s\n' "live objects" unqueued sheaves "sheaves/unqueued"
for c in "${cases[@]}"; do
  read -r live _ mode <<<"$c"
  awk -v l="$live ${mode:-single-threaded}" -v u="${best[churn $c/unqueued]}" \
    -v s="${best[churn $c/sheaves]}" 'BEGIN{printf "%-34s %10.1f %10.1f %16.2f\n", l, u, s, s / u}'
done

echo
echo "== fragmentation: 4 threads churn 400000 64-byte objects (bench_slab_frag, median of 3)"
printf '%-10s %8s %9s | %7s %8s %9s %6s | %7s %8s %9s %6s\n' design seconds "in use" slabs partial \
  "use/slab" fill slabs partial "use/slab" fill
for d in "${designs[@]}"; do
  for r in 1 2 3; do SLUB_OPTIONS=${opts[$d]} "$bin/bench_slab_frag" 4 400000; done |
    sort -n -k2 | sed -n 2p | {
      read -r _ secs inuse s1 p1 u1 f1 _ s2 p2 u2 f2
      printf '%-10s %8s %9s | %7s %8s %9s %6s | %7s %8s %9s %6s\n' "$d" "$secs" "$inuse" \
        "$s1" "$p1" "$u1" "$f1" "$s2" "$p2" "$u2" "$f2"
    }
done
echo "(left: as the churn left the cache; right: after kmem_cache_shrink flushed every"
echo " CPU's slab or sheaves. 'in use' excludes objects parked in sheaves.)"
