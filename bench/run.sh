#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# run.sh [BUILD_DIR] - the page allocator benchmark: a time table measured
# side by side in one process, then instructions per pair under callgrind.
#
# Callgrind runs the code on one simulated CPU and counts user-space
# instructions only: mmap/munmap's kernel work is invisible to it, so their
# instruction counts are not comparable; use the time ratios for them.
set -euo pipefail
build=${1:-build}
bin=$build/bench/bench_page_alloc
[ -x "$bin" ] || { echo "run.sh: build first ($bin missing)" >&2; exit 1; }

echo "== time (ns per alloc+free pair)"
"$bin" --iters "${ITERS:-200000}" --rounds "${ROUNDS:-5}"

command -v valgrind >/dev/null || { echo "(valgrind missing: no instruction counts)"; exit 0; }
echo
echo "== instructions per alloc+free pair (callgrind, user space only)"
n=65536
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf "%-14s %12s\n" mode Ir/pair
for mode in slub-order0 glibc-order0 slub-mix glibc-mix slub-batch glibc-batch mmap-order0; do
  valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.$mode" --collect-atstart=no \
    --toggle-collect=measured "$bin" --only "$mode" --iters $n >/dev/null 2>"$tmp/log.$mode"
  awk -v mode="$mode" -v n=$n '/^(summary|totals):/ {t=$2} END {printf "%-14s %12.1f\n", mode, t / n}' \
    "$tmp/cg.$mode"
done
echo "(mmap/munmap: the kernel's work is invisible to callgrind, so its count is"
echo " not comparable; use the time ratio.  libslub under valgrind: rseq is off, so"
echo " the CPU number comes from the sched_getcpu() fallback, about 120 of the"
echo " instructions per pair, and the per-CPU list locks are two mutex pairs.)"
