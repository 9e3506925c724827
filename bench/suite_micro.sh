# SPDX-License-Identifier: MIT
# shellcheck shell=bash disable=SC2154,SC2034,SC2317  # sourced by suite.sh: it sets build, rounds; interleave reads cases
# suite_micro.sh - group 1, sourced by bench/suite.sh: the allocator's own
# work (bench_micro.c).  ns per alloc+free pair with 1, 64 and 4096 objects
# in flight, sizes 16 B to 4 KiB and a 256 KiB extent (4096 of those would
# be 1 GiB: the extent stops at 64), under every allocator and libslub's
# kmem_cache and kmalloc; then callgrind's instructions per pair, once
# (they do not vary): libslub twice, its rseq path (COUNT_BUILD, the
# SLUB_FAKE_RSEQ build: same instructions, CPU 0 always; on sheaves, and
# with UNQUEUED=1 on cpu slabs too) and the cmpxchg16b mode valgrind really
# runs it in (without rseq: on cpu slabs).  slub-unqueued (UNQUEUED=1) is
# timed, not counted.

micro_cases() {
  local s n
  for s in 16 64 256 1024 4096 262144; do
    for n in 1 64 4096; do
      [ "$s" -gt 4096 ] && [ "$n" -gt 64 ] && continue
      echo "${s}B/$n"
    done
  done
}
mapfile -t cases < <(micro_cases)

micro_pairs() {	# pairs a case times: 0.05 s at a fast path's speed (QUICK: a tenth)
  local s=$1 p=2000000
  [ "$s" -gt 4096 ] && p=40000
  echo $((p / (QUICK ? 10 : 1)))
}

run_one() {	# run_one ALLOC CASE: ns per pair, the first number printed
  micro_run "$@" | awk '{print $1}'
}
micro_run() {
  local s=${2%%B/*} n=${2##*/}
  case $1 in
    slub-cache) "$build/bench/bench_micro_slab" "$s" "$n" "$(micro_pairs "$s")" cache ;;
    slub-kmalloc) "$build/bench/bench_micro_slab" "$s" "$n" "$(micro_pairs "$s")" kmalloc ;;
    *) preloaded "$1" "$build/bench/bench_micro" "$s" "$n" "$(micro_pairs "$s")" ;;
  esac
}
interleave micro pair low ns "${contenders[@]}" slub-cache slub-kmalloc

callgrind_ir() {	# callgrind_ir PRELOAD CMD...: instructions per pair in `measured`
  local pre=$1 f pairs
  shift
  f=$(mktemp)
  # The pairs bench_micro measured (it may cap them): its second number.
  pairs=$(SLUB_OPTIONS=${ir_options-${SLUB_OPTIONS:-}} LD_PRELOAD=$pre valgrind --tool=callgrind --callgrind-out-file="$f" --collect-atstart=no \
    --toggle-collect=measured "$@" 2>/dev/null | awk '{print $2}') &&
    awk -v n="$pairs" '/^(summary|totals):/ {t=$2} END {if (t && n) printf "%.1f\n", t / n}' "$f"
  rm -f "$f"
}
if command -v valgrind >/dev/null; then
  # Instructions scale with nothing but the loop count: a few thousand pairs.
  ir_pairs() { local s=$1; [ "$s" -gt 4096 ] && echo 2048 || echo 65536; }
  run_one() {
    local s=${2%%B/*} n=${2##*/} p
    p=$(ir_pairs "$s")
    [ "$p" -ge "$n" ] || p=$n
    case $1 in
      slub-rseq) callgrind_ir "$count_build/libslub-malloc.so" "$build/bench/bench_micro" "$s" "$n" "$p" ;;
      slub-rseq-unqueued) ir_options=$(slub_options slub-unqueued) \
        callgrind_ir "$count_build/libslub-malloc.so" "$build/bench/bench_micro" "$s" "$n" "$p" ;;
      slub-cache) callgrind_ir "" "$count_build/bench/bench_micro_slab" "$s" "$n" "$p" cache ;;
      slub-kmalloc) callgrind_ir "" "$count_build/bench/bench_micro_slab" "$s" "$n" "$p" kmalloc ;;
      *) ir_options=$(slub_options "$1") \
        callgrind_ir "${preload[$1]}" "$build/bench/bench_micro" "$s" "$n" "$p" ;;
    esac
  }
  # Not slub-unqueued: without rseq, libslub is on cpu slabs already.
  ir_allocs=("${names[@]}")
  [ -e "$count_build/libslub-malloc.so" ] && ir_allocs+=(slub-rseq slub-cache slub-kmalloc)
  [ -e "$count_build/libslub-malloc.so" ] && [ ${#variants[@]} -gt 0 ] && ir_allocs+=(slub-rseq-unqueued)
  rounds=1 interleave micro pair low Ir "${ir_allocs[@]}"
fi
