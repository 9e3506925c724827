# SPDX-License-Identifier: MIT
# shellcheck shell=bash disable=SC2154,SC2034,SC2317  # sourced by suite.sh: it sets build, rounds; interleave reads cases
# suite_threads.sh - group 2, sourced by bench/suite.sh: multi-threaded
# rates at 1, 2, 4 and 8 threads (on a 2-core machine, 4 and 8 are
# oversubscribed on purpose: threads migrate between CPUs mid-operation).
# Each benchmark's total work is fixed, so more threads is not more work:
#   xmalloc     objects freed by another thread (bench_xmalloc.c)
#   larson      a server's slots handed from thread to thread (bench_larson.c)
#   scratch     false sharing the allocator causes (bench_scratch.c)
#   shortlived  512 threads in waves, short-lived objects (bench_shortlived.c)
# Rates in millions of operations per second (what an op is: each file).

cases=(1 2 4 8)
declare -A mt_work=([xmalloc]=2000000 [larson]=2000000 [scratch]=100000 [shortlived]=2000000)
for mt_bench in xmalloc larson scratch shortlived; do
  run_one() {	# run_one ALLOC THREADS
    preloaded "$1" "$build/bench/bench_$mt_bench" "$2" $((mt_work[$mt_bench] / (QUICK ? 10 : 1))) |
      awk '{printf "%.3f\n", $1 / 1e6}'
  }
  interleave threads "$mt_bench" high Mops "${contenders[@]}"
done
