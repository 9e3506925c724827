#!/usr/bin/env bash
# run_churn.sh [BUILD_DIR] - ns per random replacement in a live heap
# (bench_churn: free a random object, allocate its successor, with
# malloc_usable_size on both, as a cache server overwriting keys does),
# under libslub-malloc.so and each peer by LD_PRELOAD: a heap of 3M objects
# (far beyond the CPU caches) and one of 30K, each single-threaded and with
# one idle thread (the multi-threaded paths).  Interleaved rounds, best
# round; the ratio is libslub's time to the best peer's.
set -euo pipefail
build=${1:-build-bench}
bin=$build/bench/bench_churn
[ -x "$bin" ] || { echo "run_churn.sh: build first ($bin missing)" >&2; exit 1; }
lib=/usr/lib/$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
declare -A preload=([libslub]=$(realpath "$build/libslub-malloc.so") [glibc]=
                    [jemalloc]=$lib/libjemalloc.so.2 [tcmalloc]=$lib/libtcmalloc_minimal.so.4
                    [mimalloc]=$lib/libmimalloc.so.2)
names=(libslub glibc)
for p in jemalloc tcmalloc mimalloc; do [ -e "${preload[$p]}" ] && names+=("$p"); done
rounds=${ROUNDS:-3}
cases=("3000000 3000000" "3000000 3000000 threaded" "30000 10000000" "30000 10000000 threaded")

declare -A best
for r in $(seq "$rounds"); do
  for c in "${cases[@]}"; do
    for n in "${names[@]}"; do
      # shellcheck disable=SC2086
      t=$(LD_PRELOAD=${preload[$n]} "$bin" $c | awk '{print $2}')
      k="$c/$n"
      if [ -z "${best[$k]:-}" ] || awk -v a="$t" -v b="${best[$k]}" 'BEGIN{exit !(a<b)}'; then
        best[$k]=$t
      fi
    done
  done
done

echo "== ns per random replacement (free + malloc + 2 malloc_usable_size), best of $rounds rounds"
printf '%-30s' "live objects"; printf ' %9s' "${names[@]}"; printf ' %18s\n' "libslub/best peer"
for c in "${cases[@]}"; do
  read -r live _ mode <<<"$c"
  printf '%-30s' "$live ${mode:-single-threaded}"
  bestpeer=
  for n in "${names[@]}"; do
    printf ' %9s' "${best[$c/$n]}"
    if [ "$n" != libslub ] && { [ -z "$bestpeer" ] ||
         awk -v a="${best[$c/$n]}" -v b="$bestpeer" 'BEGIN{exit !(a<b)}'; }; then
      bestpeer=${best[$c/$n]}
    fi
  done
  awk -v a="${best[$c/libslub]}" -v b="$bestpeer" 'BEGIN{printf " %18.2f\n", (b > 0 ? a / b : 0)}'
done
echo "(SLUB frees an object to its own slab and allocates from the CPU's slab: in a"
echo " big heap both are cache misses, and the remote free's locked CAS waits for its"
echo " store; the queued peers hand the freed object straight back, still cached)"
