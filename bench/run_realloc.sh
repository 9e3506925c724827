#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# run_realloc.sh [BUILD_DIR] - seconds inside realloc while one buffer grows
# (bench_realloc: doubled from 1 MiB to 1 GiB, and 64 KiB steps from 8 MiB
# to 256 MiB), under libslub-malloc.so and each peer by LD_PRELOAD, interleaved
# rounds, best round; the ratio is libslub's time to the best peer's.
# UNQUEUED=1 runs slub-unqueued too (bench/peers.sh).
set -euo pipefail
build=${1:-build-bench}
bin=$build/bench/bench_realloc
[ -x "$bin" ] || { echo "run_realloc.sh: build first ($bin missing)" >&2; exit 1; }
. "$(dirname "$0")/peers.sh"
ask_variants 0
rounds=${ROUNDS:-3}

for r in $(seq "$rounds"); do
  for pattern in double step; do
    for n in "${names[@]}" "${variants[@]}"; do
      keep_best "$pattern/$n" "$(preloaded "$n" "$bin" "$pattern" | awk '{print $2}')"
    done
  done
done

echo "== seconds inside realloc growing one buffer (best of $rounds rounds)"
row_format='%-34s' col_format='%10s' ratio_format='%22.2f'
ratio_header pattern
for pattern in double step; do
  case $pattern in double) label="doubled, 1 MiB to 1 GiB";; step) label="64 KiB steps, 8 to 256 MiB";; esac
  ratio_row "$label" "$pattern"
done
echo "(above 4 MiB libslub grows a block in place within its reserved slots, and past"
echo " them moves its pages with mremap, as glibc does for its mmapped chunks)"
