#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# suite.sh [BUILD_DIR] [COUNT_BUILD] - the benchmark suite (make bench):
# every benchmark under libslub-malloc.so, glibc, jemalloc, tcmalloc and
# mimalloc (LD_PRELOAD, bench/peers.sh), one process per measurement,
# allocators interleaved, ROUNDS rounds (default 5).  Groups, one file each:
#   micro     suite_micro.sh     ns and instructions per alloc+free pair
#   threads   suite_threads.sh   Mops/s at 1, 2, 4, 8 threads
#   memory    suite_memory.sh    fragmentation, 8 vs 1000 threads, trim
#   programs  suite_programs.sh  real programs and redis
# Writes bench/results/<date>-<commit>/: raw.tsv (every measurement),
# <group>.md (the tables), <group>-<metric>.png (the plots), machine.md.
# libslub is the library as shipped (malloc on sheaves where rseq runs);
# UNQUEUED=1 (the default here; 0: not) runs it a second time on the seeds'
# unqueued cpu slabs, as slub-unqueued (slub_malloc_sheaves=0): a contender
# beside it, not a peer.  QUICK=1: one round and a tenth of the work, a
# smoke test.  BENCH_GROUPS="micro threads" runs only those.  A measurement
# is never a test: failures are logged to errors.log and the suite goes on.
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-build-bench}" && pwd)
# shellcheck disable=SC2034  # read by suite_micro.sh
count_build=$(cd "${2:-build-count}" 2>/dev/null && pwd || echo /nonexistent)
QUICK=${QUICK:-0}
rounds=${ROUNDS:-5}
[ "$QUICK" = 1 ] && rounds=1
if [ ! -e "$build/libslub-malloc.so" ] || [ ! -x "$build/bench/bench_micro" ]; then
  echo "suite.sh: build first ($build)" >&2
  exit 1
fi
out_dir=$src/bench/results/$(date +%Y-%m-%d)-$(git -C "$src" rev-parse --short HEAD)
[ "$QUICK" = 1 ] && out_dir+=-quick
mkdir -p "$out_dir"
raw=$out_dir/raw.tsv
: >"$raw"
: >"$out_dir/errors.log"
export UNQUEUED=${UNQUEUED:-1}	# run_programs.sh and run_redis.sh read it too
. "$src/bench/peers.sh"
. "$src/bench/suite_lib.sh"
ask_variants 1
peers="${names[*]:1}"
contenders=("${names[@]}" "${variants[@]}")	# what suite_<group>.sh runs
"$src/bench/suite_machine.sh" >"$out_dir/machine.md"

declare -A about=(
  [micro]="ns and callgrind instructions per malloc+free pair (case: size/objects in flight); slub-cache and slub-kmalloc are libslub's kmem_cache_alloc/free and kmalloc/kfree, slub-rseq its malloc on the rseq path (the SLUB_FAKE_RSEQ counting build: on sheaves), slub-rseq-unqueued the same on cpu slabs; plain libslub under valgrind runs its cmpxchg16b mode, without rseq and so on cpu slabs"
  [threads]="millions of operations per second (case: threads; 2 CPUs, so 4 and 8 are oversubscribed)"
  [memory]="MiB resident net of the process before it allocates (frag: case is objects; rss-threads: case is threads, net of stacks)"
  [programs]="real programs (wall-s, cpu-s, peak-MiB) and redis (kreq/s per test, peak-MiB); glibc-again is glibc run twice as a contender: the noise floor"
)
declare -A plots=([micro]="ns Ir" [threads]="Mops" [memory]="peak trimmed net-peak" [programs]="wall-s peak-MiB krps")
for g in ${BENCH_GROUPS:-micro threads memory programs}; do
  echo "== group $g ($rounds rounds)" >&2
  # shellcheck source=/dev/null
  . "$src/bench/suite_$g.sh"
  {
    echo "# $g"
    echo
    echo "${about[$g]}. Each cell: best / median of $rounds round(s); last column: libslub's median as a cost over the best peer's ($peers), rates inverted, so below 1 libslub wins.${variants[*]:+ libslub is the library as shipped, on sheaves; slub-unqueued the same on its unqueued cpu slabs (slub_malloc_sheaves=0), a contender, not a peer.}"
    echo
    awk -F'\t' -v group="$g" -v peers="$peers" -f "$src/bench/suite_table.awk" "$raw"
    [ "$g" = programs ] && [ -s "$out_dir/programs.txt" ] &&
      printf "\nThe scripts' own reports (noise floor included):\n\n\`\`\`\n%s\n\`\`\`\n" "$(cat "$out_dir/programs.txt")"
    for m in ${plots[$g]}; do
      "$src/bench/suite_plot.sh" "$raw" "$g" "$m" "$g: $m" "$out_dir/$g-$m.png" "$peers" &&
        [ -s "$out_dir/$g-$m.png" ] && printf '\n![%s %s](%s-%s.png)\n' "$g" "$m" "$g" "$m"
    done
  } >"$out_dir/$g.md"
done
echo "suite.sh: results in ${out_dir#"$src"/}" >&2
