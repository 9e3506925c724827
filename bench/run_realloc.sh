#!/usr/bin/env bash
# run_realloc.sh [BUILD_DIR] - seconds inside realloc while one buffer grows
# (bench_realloc: doubled from 1 MiB to 1 GiB, and 64 KiB steps from 8 MiB
# to 256 MiB), under libslub-malloc.so and each peer by LD_PRELOAD, interleaved
# rounds, best round; the ratio is libslub's time to the best peer's.
set -euo pipefail
build=${1:-build-bench}
bin=$build/bench/bench_realloc
[ -x "$bin" ] || { echo "run_realloc.sh: build first ($bin missing)" >&2; exit 1; }
lib=/usr/lib/$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
declare -A preload=([libslub]=$(realpath "$build/libslub-malloc.so") [glibc]=
                    [jemalloc]=$lib/libjemalloc.so.2 [tcmalloc]=$lib/libtcmalloc_minimal.so.4
                    [mimalloc]=$lib/libmimalloc.so.2)
names=(libslub glibc)
for p in jemalloc tcmalloc mimalloc; do [ -e "${preload[$p]}" ] && names+=("$p"); done
rounds=${ROUNDS:-3}

declare -A best
for r in $(seq "$rounds"); do
  for pattern in double step; do
    for n in "${names[@]}"; do
      t=$(LD_PRELOAD=${preload[$n]} "$bin" "$pattern" | awk '{print $2}')
      k="$pattern/$n"
      if [ -z "${best[$k]:-}" ] || awk -v a="$t" -v b="${best[$k]}" 'BEGIN{exit !(a<b)}'; then
        best[$k]=$t
      fi
    done
  done
done

echo "== seconds inside realloc growing one buffer (best of $rounds rounds)"
printf '%-34s' pattern; printf ' %10s' "${names[@]}"; printf ' %22s\n' "libslub/best peer"
for pattern in double step; do
  case $pattern in double) label="doubled, 1 MiB to 1 GiB";; step) label="64 KiB steps, 8 to 256 MiB";; esac
  printf '%-34s' "$label"
  bestpeer=
  for n in "${names[@]}"; do
    printf ' %10s' "${best[$pattern/$n]}"
    if [ "$n" != libslub ] && { [ -z "$bestpeer" ] ||
         awk -v a="${best[$pattern/$n]}" -v b="$bestpeer" 'BEGIN{exit !(a<b)}'; }; then
      bestpeer=${best[$pattern/$n]}
    fi
  done
  awk -v a="${best[$pattern/libslub]}" -v b="$bestpeer" 'BEGIN{printf " %22.2f\n", (b > 0 ? a / b : 0)}'
done
echo "(above 4 MiB libslub grows a block in place within its reserved slots, and past"
echo " them moves its pages with mremap, as glibc does for its mmapped chunks)"
