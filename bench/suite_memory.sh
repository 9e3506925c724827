# SPDX-License-Identifier: MIT
# shellcheck shell=bash disable=SC2154,SC2034,SC2317  # sourced by suite.sh: it sets build, rounds; interleave reads cases
# suite_memory.sh - group 3, sourced by bench/suite.sh: resident memory,
# in MiB, net of what the benchmark process holds before it allocates.
#   frag         bench_frag.c: peak and final RSS of a fragmented heap, RSS
#                after freeing all of it and malloc_trim(0) (where the
#                allocator has one of its own: has-trim 1), and the bytes
#                asked for (live)
#   rss-threads  bench_rss_threads.c: peak RSS of 8 and of 1000 threads
#                doing the same work, net of their stacks (the benchmark's
#                own mmap'd stacks, counted by mincore: see the file)

cases=(1000000)
run_one() {
  preloaded "$1" "$build/bench/bench_frag" $(($2 / (QUICK ? 10 : 1))) |
    awk '{printf "%.1f %.1f %.1f %.1f %d\n", $1 / 1024, $2 / 1024, $3 / 1024, $4 / 1024, $5}'
}
interleave memory frag low "peak final trimmed live has-trim" "${contenders[@]}"

cases=(8 1000)
run_one() {
  preloaded "$1" "$build/bench/bench_rss_threads" "$2" $((400000 / (QUICK ? 10 : 1))) |
    awk '{printf "%.1f %.1f\n", $1 / 1024, $2 / 1024}'
}
interleave memory rss-threads low "net-peak stacks" "${contenders[@]}"
