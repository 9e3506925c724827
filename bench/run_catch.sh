#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# run_catch.sh [BUILD_DIR] - what each mode catches (issue 37's table):
# every case of catch_bugs (one classic heap bug on a 64-byte block per
# run) under glibc, glibc's debug library (libc_malloc_debug.so,
# MALLOC_CHECK_=3), libslub in release mode, libslub with KFENCE sampling
# every allocation (kfence.sample_every=1), libslub with slub_debug=FZPU,
# and valgrind's memcheck when it is installed.  A cell says "report" (the
# mode named the bug, and the program went on), "report+exit" (named it
# and stopped), "crash" (a signal, no report) or "-" (nothing seen).
# Prints a Markdown table and each mode's count of reports.  Not in CI.
set -uo pipefail
build=$(cd "${1:-build}" && pwd)
prog=$build/bench/catch_bugs slub=$build/libslub-malloc.so
lib=/usr/lib/$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
gdebug=$lib/libc_malloc_debug.so.0
[ -x "$prog" ] && [ -e "$slub" ] || { echo "run_catch.sh: build first ($build)" >&2; exit 1; }
modes=(glibc slub slub-kfence slub-FZPU)
[ -e "$gdebug" ] && modes=(glibc glibc-debug slub slub-kfence slub-FZPU)
command -v valgrind >/dev/null && modes+=(valgrind)
out=$(mktemp)
trap 'rm -f "$out"' EXIT

# cell MODE CASE: run it, classify what happened.
cell() {
  local st pat
  case $1 in
  glibc) env SLUB_OPTIONS= "$prog" "$2" >"$out" 2>&1; st=$? ;;
  glibc-debug) env LD_PRELOAD="$gdebug" MALLOC_CHECK_=3 "$prog" "$2" >"$out" 2>&1; st=$? ;;
  slub) env LD_PRELOAD="$slub" SLUB_OPTIONS= "$prog" "$2" >"$out" 2>&1; st=$? ;;
  slub-kfence) env LD_PRELOAD="$slub" SLUB_OPTIONS=kfence.sample_every=1 "$prog" "$2" >"$out" 2>&1; st=$? ;;
  slub-FZPU) env LD_PRELOAD="$slub" SLUB_OPTIONS=slub_debug=FZPU "$prog" "$2" >"$out" 2>&1; st=$? ;;
  valgrind) valgrind -q --error-exitcode=0 "$prog" "$2" >"$out" 2>&1; st=$? ;;
  esac
  case $1 in
  glibc*) pat='free\(\)|malloc\(\)|double free|corrupted|munmap_chunk|invalid pointer' ;;
  slub*) pat='^slub: |BUG |^=+$' ;;
  valgrind) pat='Invalid (read|write|free)|Mismatched free|Conditional jump|uninitialised' ;;
  esac
  local seen=0 lived=0
  grep -qE "$pat" "$out" && seen=1
  grep -q '^survived$' "$out" && lived=1
  if [ $seen = 1 ] && [ $lived = 1 ]; then echo report
  elif [ $seen = 1 ]; then echo report+exit
  elif [ "$st" -ge 128 ]; then echo crash
  else echo -; fi
}

declare -A n
printf '| case |'; for m in "${modes[@]}"; do printf ' %s |' "$m"; n[$m]=0; done; echo
printf '|---|'; for m in "${modes[@]}"; do printf -- '---|'; done; echo
total=0
while read -r c; do
  total=$((total + 1))
  printf '| %s |' "$c"
  for m in "${modes[@]}"; do
    r=$(cell "$m" "$c")
    [[ $r == report* ]] && n[$m]=$((n[$m] + 1))
    printf ' %s |' "$r"
  done
  echo
done < <("$prog" list)
printf '| **reported, of %d** |' "$total"; for m in "${modes[@]}"; do printf ' **%d** |' "${n[$m]}"; done; echo
