#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# run_slab.sh [BUILD_DIR] - object allocation benchmarks, figures for the
# SLUB core:
#  1. ns per alloc+free pair of one 64-byte object: libslub's kmem_cache and
#     kmalloc against malloc/free of glibc, jemalloc, tcmalloc and mimalloc
#     (those installed, bench/peers.sh; one process each, interleaved
#     rounds, best round).
#  2. instructions per pair under callgrind, each loop's 9-10 included.
#     valgrind cannot register rseq, so libslub counts twice: its rseq fast
#     paths in the counting build (COUNT_BUILD, cmake -DSLUB_FAKE_RSEQ=ON:
#     a per-thread rseq area that always says CPU 0, same instructions), and
#     the cmpxchg16b mode it really runs under valgrind.
#  3. peak RSS as threads multiply over one shared live set.
set -euo pipefail
build=${1:-build-bench}
count_build=${COUNT_BUILD:-build-count}
bin=$build/bench
[ -x "$bin/bench_slab" ] || { echo "run_slab.sh: build first ($bin missing)" >&2; exit 1; }
. "$(dirname "$0")/peers.sh"
mallocs=("${names[@]:2}")	# the peers preloaded: all but glibc
rounds=${ROUNDS:-5}
iters=${ITERS:-20000000}

declare -A best
run() {	# run NAME MODE [PRELOAD]
  local t
  t=$(LD_PRELOAD=${3:-} "$bin/bench_slab" "$2" "$iters" | awk '{print $2}')
  if [ -z "${best[$1]:-}" ] || awk -v a="$t" -v b="${best[$1]}" 'BEGIN{exit !(a<b)}'; then
    best[$1]=$t
  fi
}
names=("libslub kmem_cache" "libslub kmalloc" glibc)
for r in $(seq "$rounds"); do
  run "libslub kmem_cache" cache
  run "libslub kmalloc" kmalloc
  run glibc malloc
  for p in "${mallocs[@]}"; do run "$p" malloc "${preload[$p]}"; done
done
names+=("${mallocs[@]}")

echo "== ns per alloc+free pair, 64 bytes (best of $rounds interleaved rounds, $iters pairs)"
printf '%-20s %10s %22s %22s\n' allocator ns/pair "kmem_cache time/this" "kmalloc time/this"
for n in "${names[@]}"; do
  awk -v n="$n" -v t="${best[$n]}" -v c="${best["libslub kmem_cache"]}" -v k="${best["libslub kmalloc"]}" \
    'BEGIN{printf "%-20s %10.2f %22.2f %22.2f\n", n, t, c/t, k/t}'
done
echo "(below 1: libslub is faster; libslub ran its rseq fast paths)"

if command -v valgrind >/dev/null; then
  echo
  echo "== instructions per alloc+free pair, 64 bytes (callgrind, the loop's own 9-10 included)"
  tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
  count() {	# count LABEL BINARY MODE [PRELOAD]
    LD_PRELOAD=${4:-} valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" --collect-atstart=no \
      --toggle-collect=measured "$2" "$3" 100000 >/dev/null 2>&1
    awk -v n="$1" '/^(summary|totals):/ {t=$2} END {printf "%-34s %8.1f Ir/pair\n", n, t / 100000}' "$tmp/cg"
  }
  if [ -x "$count_build/bench/bench_slab" ]; then
    count "libslub kmem_cache (rseq path)" "$count_build/bench/bench_slab" cache
    count "libslub kmalloc (rseq path)" "$count_build/bench/bench_slab" kmalloc
  fi
  count "libslub kmem_cache (cmpxchg16b)" "$bin/bench_slab" cache
  count "libslub kmalloc (cmpxchg16b)" "$bin/bench_slab" kmalloc
  count glibc "$bin/bench_slab" malloc
  for p in "${mallocs[@]}"; do count "$p" "$bin/bench_slab" malloc "${preload[$p]}"; done
fi

echo
echo "== peak RSS with N threads churning one live set of 16..255-byte objects"
echo "   (median of 3 runs; allocator = peak - baseline threads' peak - extra stack pages)"
printf '%8s %14s %14s %14s %14s\n' threads "peak KiB" "threads KiB" "stack+ KiB" "allocator KiB"
for n in 1 2 8 64 1000; do
  for r in 1 2 3; do
    read -r _ w ws < <("$bin/bench_threads" $n)
    read -r _ b bs < <("$bin/bench_threads" $n --baseline)
    echo "$w $b $((ws - bs)) $((w - b - (ws - bs)))"
  done | sort -n -k4 | sed -n 2p | {
    read -r w b st a
    printf '%8s %14s %14s %14s %14s\n' "$n" "$w" "$b" "$st" "$a"
  }
done
