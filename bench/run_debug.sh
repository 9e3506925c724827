#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# run_debug.sh [BUILD_DIR] - what heap debugging costs on real programs:
# wall time of each program plain (glibc), under glibc's debug library
# (libc_malloc_debug.so with MALLOC_CHECK_=3), under libslub in release
# mode, under libslub with slub_debug=FZPU (slubrun --debug) keeping 16 and
# 4 stack frames per track, with slub_debug=FZP (no tracking), and under
# valgrind's memcheck (on glibc's malloc).  ROUNDS interleaved rounds
# (default 3), the best time of each; then each debug mode's time over
# glibc's debug library's (the issue's target: <= 3), and slubrun --debug's
# over valgrind's (issue 36's: <= 0.1).  PROGRAMS (default all five) and
# MODES (default all) pick a subset, e.g. PROGRAMS=sqlite MODES='glibc
# slub-FZPU valgrind' for one short figure.
# Not in CI: minutes of machine time, and only ratios mean anything.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
rounds=${ROUNDS:-3}
runstat=$build/bench/runstat
slub=$build/libslub-malloc.so
lib=/usr/lib/$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
gdebug=$lib/libc_malloc_debug.so.0
[ -x "$runstat" ] && [ -e "$slub" ] || { echo "run_debug.sh: build first ($build)" >&2; exit 1; }
[ -e "$gdebug" ] || { echo "run_debug.sh: $gdebug missing (glibc 2.34+)" >&2; exit 1; }
python=/usr/bin/python3
[ -x "$python" ] || python=python3

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
awk 'BEGIN { srand(42); for (i = 0; i < 300000; i++) printf "%d %08x line-%d\n", int(rand() * 1e9), i * 2654435761 % 4294967296, i }' >part.txt

declare -A cmds=(
  [python]="$python $src/tests/programs/workload.py"
  [sqlite]="sqlite3 :memory: <$src/bench/sqlite_rows.sql"	# 100,000 rows inserted, indexed
  [sort]="sort -k1,1n -k2 part.txt"
  [gcc]="gcc -O2 -I$src/include -I$build/include -I$src/src -c $src/src/slab/core/slub.c -o /dev/null"
  [git]="git -C $src log --stat -n 300"
)
read -ra programs <<<"${PROGRAMS:-python sqlite sort gcc git}"
read -ra modes <<<"${MODES:-glibc glibc-debug slub slub-FZPU slub-FZPU-4 slub-FZP valgrind}"
has() { [[ " ${modes[*]} " == *" $1 "* ]]; }
if has valgrind && ! command -v valgrind >/dev/null; then
  echo "run_debug.sh: no valgrind: its column is left out" >&2
  read -ra modes <<<"${modes[*]/valgrind/}"
fi

run() {	# run MODE COMMAND: prints the wall time
  local mode=$1 cmd=$2 env=()
  case $mode in
  glibc) ;;
  glibc-debug) env=(LD_PRELOAD="$gdebug" MALLOC_CHECK_=3) ;;
  slub) env=(LD_PRELOAD="$slub" SLUB_OPTIONS=) ;;
  slub-FZPU) env=(LD_PRELOAD="$slub" SLUB_OPTIONS=slub_debug=FZPU) ;;
  slub-FZPU-4) env=(LD_PRELOAD="$slub" "SLUB_OPTIONS=slub_debug=FZPU slub_debug_frames=4") ;;
  slub-FZP) env=(LD_PRELOAD="$slub" SLUB_OPTIONS=slub_debug=FZP) ;;
  valgrind)	# memcheck's defaults, the program and the shell around it
    env "$runstat" valgrind -q --trace-children=yes --error-exitcode=0 bash -c "$cmd" 2>&1 >/dev/null |
      tail -1 | cut -d' ' -f1
    return ;;
  esac
  env "${env[@]}" "$runstat" bash -c "$cmd" 2>&1 >/dev/null | tail -1 | cut -d' ' -f1
}

declare -A best
for r in $(seq "$rounds"); do
  for prog in "${programs[@]}"; do
    for i in "${!modes[@]}"; do
      m=${modes[$(((i + r - 1) % ${#modes[@]}))]}
      t=$(run "$m" "${cmds[$prog]}") && [ -n "$t" ] ||
        { echo "run_debug.sh: $prog under $m did not run" >&2; exit 1; }
      k=$prog/$m
      if [ -z "${best[$k]:-}" ] || awk -v a="$t" -v b="${best[$k]}" 'BEGIN{exit !(a<b)}'; then
        best[$k]=$t
      fi
    done
  done
  echo "round $r of $rounds done" >&2
done

# ratio A B: A's time over B's, "-" where either did not run.
ratio() {
  local a=${best[$prog/$1]:-} b=${best[$prog/$2]:-}
  if [ -n "$a" ] && [ -n "$b" ]; then awk -v a="$a" -v b="$b" 'BEGIN{printf "%8.2f", a/b}'
  else printf '%8s' -; fi
}
echo "== best wall time (s) of $rounds interleaved rounds; then ratios"
printf '%-8s' program
for m in "${modes[@]}"; do printf ' %12s' "$m"; done
printf '   %s\n' "FZPU/glibc-debug FZPU-4/glibc-debug FZP/glibc-debug FZPU/slub FZPU/valgrind"
for prog in "${programs[@]}"; do
  printf '%-8s' "$prog"
  for m in "${modes[@]}"; do printf ' %11.2fs' "${best[$prog/$m]}"; done
  for m in slub-FZPU slub-FZPU-4 slub-FZP; do printf '   %s' "$(ratio "$m" glibc-debug)"; done
  printf '   %s   %s\n' "$(ratio slub-FZPU slub)" "$(ratio slub-FZPU valgrind)"
done
