#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# run_leak_scan.sh [BUILD_DIR] - what the leak check's scan costs on a large
# heap: bench_leak_scan (BLOCKS 64-byte blocks, default 1M, all reachable)
# under libslub with slub_debug=U, without and with slub_leak_check, and
# under valgrind's memcheck with --leak-check=no and =full.  ROUNDS
# interleaved rounds (default 3), the best CPU time of each; the scan's cost
# is the difference.  Not in CI: only the differences, side by side, mean
# anything.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
rounds=${ROUNDS:-3} blocks=${BLOCKS:-1000000}
prog=$build/bench/bench_leak_scan runstat=$build/bench/runstat slub=$build/libslub-malloc.so
[ -x "$prog" ] && [ -x "$runstat" ] && [ -e "$slub" ] || { echo "run_leak_scan.sh: build first ($build)" >&2; exit 1; }
modes=(slub slub-scan)
command -v valgrind >/dev/null && modes+=(valgrind valgrind-scan)

run() {	# run MODE: the CPU seconds (user + sys) of one run
  local cmd=()
  case $1 in
  slub) cmd=(env LD_PRELOAD="$slub" SLUB_OPTIONS=slub_debug=U) ;;
  slub-scan) cmd=(env LD_PRELOAD="$slub" "SLUB_OPTIONS=slub_debug=U slub_leak_check=1") ;;
  valgrind) cmd=(valgrind -q --leak-check=no) ;;
  valgrind-scan) cmd=(valgrind -q --leak-check=full) ;;
  esac
  /usr/bin/time -f '%U %S' "${cmd[@]}" "$prog" "$blocks" 2>&1 >/dev/null | tail -1 |
    awk '{ printf "%.3f\n", $1 + $2 }'
}

declare -A best
for r in $(seq "$rounds"); do
  for m in "${modes[@]}"; do
    t=$(run "$m")
    if [ -z "${best[$m]:-}" ] || awk -v a="$t" -v b="${best[$m]}" 'BEGIN{exit !(a<b)}'; then
      best[$m]=$t
    fi
  done
done
echo "== $blocks blocks of 64 bytes, best CPU seconds of $rounds rounds"
for m in "${modes[@]}"; do printf '%-14s %8.3f s\n' "$m" "${best[$m]}"; done
printf '%-14s %8.3f s\n' "libslub scan" "$(awk -v a="${best[slub-scan]}" -v b="${best[slub]}" 'BEGIN{print a-b}')"
[ -n "${best[valgrind]:-}" ] &&
  printf '%-14s %8.3f s\n' "valgrind scan" "$(awk -v a="${best[valgrind-scan]}" -v b="${best[valgrind]}" 'BEGIN{print a-b}')"
exit 0
