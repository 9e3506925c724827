#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# run_ring_ir.sh [BUILD] [COUNT_BUILD] - issue 26's figure: callgrind
# instructions per free+malloc pair in a ring of 64 slots (bench_ring.c),
# the loop included ("pair"), and without the loop's own ("allocator").
#   rseq path: COUNT_BUILD (cmake -DSLUB_FAKE_RSEQ=ON; default build-count),
#              malloc on sheaves as shipped, and as peers.sh's slub-unqueued
#              (slub_malloc_sheaves=0) on cpu slabs
#   cmpxchg16b: BUILD (default build), the mode valgrind really runs (no
#              rseq, so malloc is on cpu slabs)
# SIZE (default 64) and PAIRS (default 100000) may be set.
set -euo pipefail
build=${1:-build}
count_build=${2:-build-count}
size=${SIZE:-64}
pairs=${PAIRS:-100000}
. "$(dirname "$0")/peers.sh"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

count() {	# count LABEL PRELOAD BINARY API [SLUB_OPTIONS]
  SLUB_OPTIONS=${5:-${SLUB_OPTIONS:-}} LD_PRELOAD=$2 valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" --collect-atstart=no \
    --toggle-collect=measured "$3" "$size" "$pairs" "$4" >/dev/null 2>&1
  local total loop
  total=$(awk '/^(summary|totals):/ {t=$2} END {print t}' "$tmp/cg")
  loop=$(callgrind_annotate --inclusive=no "$tmp/cg" 2>/dev/null |
    awk '/ring_(malloc|cache|kmalloc)/ && !n++ {gsub(",", "", $1); print $1}')
  awk -v n="$1" -v t="$total" -v l="${loop:-0}" -v p="$pairs" \
    'BEGIN {printf "%-38s %8.1f %10.1f\n", n, t / p, (t - l) / p}'
}

printf '%-38s %8s %10s\n' "Ir per pair, $size B, ring of 64" pair allocator
for c in "$count_build:rseq path" "$build:cmpxchg16b"; do
  b=${c%%:*} mode=${c#*:}
  [ -e "$b/libslub-malloc.so" ] || continue
  [ "$b" = "$count_build" ] && label="libslub malloc ($mode, sheaves)" || label="libslub malloc ($mode)"
  count "$label" "$(realpath "$b/libslub-malloc.so")" "$build/bench/bench_ring" malloc
  [ "$b" = "$count_build" ] && count "libslub malloc ($mode, unqueued)" "$(realpath "$b/libslub-malloc.so")" \
    "$build/bench/bench_ring" malloc "$(slub_options slub-unqueued)"
  count "libslub kmem_cache ($mode)" "" "$b/bench/bench_ring_slab" cache
  count "libslub kmalloc ($mode)" "" "$b/bench/bench_ring_slab" kmalloc
done
for p in "${names[@]:1}"; do
  count "$p" "${preload[$p]}" "$build/bench/bench_ring" malloc
done
