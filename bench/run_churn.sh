#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# run_churn.sh [BUILD_DIR] - ns per random replacement in a live heap
# (bench_churn: free a random object, allocate its successor, with
# malloc_usable_size on both, as a cache server overwriting keys does),
# under libslub-malloc.so and each peer by LD_PRELOAD: a heap of 3M objects
# (far beyond the CPU caches) and one of 30K, each single-threaded and with
# one idle thread (the multi-threaded paths).  Interleaved rounds, best
# round; the ratio is libslub's time to the best peer's.  UNQUEUED=1 runs
# slub-unqueued too (bench/peers.sh: malloc on the seeds' cpu slabs).
set -euo pipefail
build=${1:-build-bench}
bin=$build/bench/bench_churn
[ -x "$bin" ] || { echo "run_churn.sh: build first ($bin missing)" >&2; exit 1; }
. "$(dirname "$0")/peers.sh"
ask_variants 0
rounds=${ROUNDS:-3}
cases=("3000000 3000000" "3000000 3000000 threaded" "30000 10000000" "30000 10000000 threaded")

for r in $(seq "$rounds"); do
  for c in "${cases[@]}"; do
    for n in "${names[@]}" "${variants[@]}"; do
      # shellcheck disable=SC2086
      keep_best "$c/$n" "$(preloaded "$n" "$bin" $c | awk '{print $2}')"
    done
  done
done

echo "== ns per random replacement (free + malloc + 2 malloc_usable_size), best of $rounds rounds"
row_format='%-30s' col_format='%9s' ratio_format='%18.2f'
ratio_header "live objects"
for c in "${cases[@]}"; do
  read -r live _ mode <<<"$c"
  ratio_row "$live ${mode:-single-threaded}" "$c"
done
echo "(On cpu slabs, slub-unqueued, SLUB frees an object to its own slab and allocates"
echo " from the CPU's slab: in a big heap both are cache misses, and the remote free's"
echo " locked CAS waits for its store.  The queued peers, and libslub's malloc on sheaves,"
echo " hand the freed object straight back, still cached; a free still reads its slab's"
echo " descriptor)"
