#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# run_large.sh [BUILD_DIR] - issue 40's large-block rows: ns per malloc+free
# pair of 64 KiB, 256 KiB and 1 MiB with 1 and 64 blocks in flight
# (bench_micro), under libslub-malloc.so and each peer by LD_PRELOAD,
# interleaved rounds (ROUNDS, default 5), best round each.  The ratios:
# libslub's time to the best peer's, and to glibc's.  BEFORE=PATH adds
# another build's libslub-malloc.so as slub-before (peers.sh).
set -euo pipefail
build=${1:-build-bench}
bin=$build/bench/bench_micro
[ -x "$bin" ] || { echo "run_large.sh: build first ($bin missing)" >&2; exit 1; }
. "$(dirname "$0")/peers.sh"
ask_variants 0
rounds=${ROUNDS:-5}
pairs=${PAIRS:-40000}
cases=(65536/1 65536/64 262144/1 262144/64 1048576/1 1048576/64)

for r in $(seq "$rounds"); do
  for c in "${cases[@]}"; do
    for n in "${names[@]}" "${variants[@]}"; do
      keep_best "$c/$n" "$(preloaded "$n" "$bin" "${c%/*}" "${c#*/}" "$pairs" | awk '{print $1}')"
    done
  done
done

echo "== ns per malloc+free pair of a large block (best of $rounds rounds)"
row_format='%-22s' col_format='%9s' ratio_format='%17.2f'
ratio_header "size/in flight" | sed 's/$/ libslub\/glibc/'
for c in "${cases[@]}"; do
  ratio_row "$((${c%/*} >> 10)) KiB, $((${c#*/})) in flight" "$c"
done | paste -d' ' - <(for c in "${cases[@]}"; do
  awk -v a="${best[$c/libslub]}" -v b="${best[$c/glibc]}" 'BEGIN{printf "%14.2f\n", a / b}'
done)
