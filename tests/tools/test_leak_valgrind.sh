#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test_leak_valgrind.sh SLUBRUN LEAKY_CPP - the leak check counts what
# valgrind's memcheck counts: LEAKY_CPP (tests/tools/leaky.cpp, built here
# with g++ -g) and small real programs, each under `valgrind --leak-check=full`
# and `slubrun --leak-check`: the same "definitely lost" blocks and bytes,
# grouped in as many call sites, and the same "indirectly lost" blocks and
# bytes; "no leaks" where valgrind finds nothing lost.  Then the C++
# program's listing leads to the lines (demangled, the inlined call named).
set -euo pipefail
slubrun=$1 leaky_src=$2
command -v valgrind >/dev/null || { echo "no valgrind: skipped"; exit 77; }
command -v g++ >/dev/null || { echo "no g++: skipped"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export SLUB_OPTIONS=
fail() { echo "test_leak_valgrind: $*" >&2; exit 1; }
g++ -g -O1 -o "$work/leaky" "$leaky_src" || fail "g++ could not build $leaky_src"

# memcheck PROGRAM...: "DEF_BLOCKS DEF_BYTES RECORDS IND_BLOCKS IND_BYTES" by valgrind.
memcheck() {
  valgrind --leak-check=full --log-file="$work/vg.txt" "$@" >/dev/null 2>&1 ||
    fail "valgrind $* failed: $(tail -3 "$work/vg.txt")"
  tr -d , <"$work/vg.txt" | awk '
    /definitely lost in loss record/ { rec++ }
    /definitely lost: / { db = $4; dn = $7 }
    /indirectly lost: / { ib = $4; in_ = $7 }
    END { printf "%d %d %d %d %d\n", dn, db, rec, in_, ib }'
}

# slub PROGRAM...: the same five figures from libslub's leak listing.
slub() {
  "$slubrun" --leak-check "$@" >"$work/slub.txt" 2>&1 || fail "slubrun $* failed"
  awk '
    /^leak: no leaks/ { print "0 0 0 0 0"; found = 1; exit }
    /^leak: [0-9]+ blocks?, [0-9]+ bytes unreferenced at exit/ {
      n = $2; b = $4; k = 0; in_ = 0; ib = 0
      if (match($0, /from [0-9]+ call site/)) { split(substr($0, RSTART), w, " "); k = w[2] }
      if (match($0, /; [0-9]+ more blocks?, [0-9]+ bytes/)) {
        split(substr($0, RSTART + 2), w, " "); in_ = w[1]; ib = w[4]
      }
      printf "%d %d %d %d %d\n", n, b, k, in_, ib; found = 1; exit
    }
    END { if (!found) print "none" }' "$work/slub.txt"
}

compare() {	# compare NAME PROGRAM...
  local name=$1; shift
  local v s
  v=$(memcheck "$@")
  s=$(slub "$@")
  echo "$name: valgrind (definitely blocks bytes sites, indirectly blocks bytes) $v; libslub $s"
  [ "$v" = "$s" ] || { cat "$work/slub.txt" >&2; fail "$name: libslub's counts differ from valgrind's"; }
}

compare leaky "$work/leaky"
[ "$(memcheck "$work/leaky" | cut -d' ' -f1)" -gt 0 ] || fail "leaky lost nothing under valgrind"
command -v sqlite3 >/dev/null && compare sqlite3 sqlite3 :memory: 'select 1'
command -v python3 >/dev/null && compare python3 python3 -c pass

# The listing of leaky leads to its lines (where slub-symbolize is beside slubrun).
if [ -x "$(dirname "$slubrun")/slub-symbolize" ]; then
  # From the source's directory: slub-symbolize names files relative to it.
  (cd "$(dirname "$leaky_src")" && "$slubrun" --leak-check "$work/leaky") >"$work/slub.txt" 2>&1
  line() { echo "leaky.cpp:$(grep -n -- "/\* $1 \*/" "$leaky_src" | cut -d: -f1)"; }
  grep -q "allocated in operator new(unsigned long)" "$work/slub.txt" ||
    fail "operator new not demangled: $(cat "$work/slub.txt")"
  grep -qF "$(line list) (make_list inlined into main at $(line dropped))" "$work/slub.txt" ||
    fail "the list's line and its inlined call not named: $(cat "$work/slub.txt")"
  grep -qF "$(line arrays)" "$work/slub.txt" || fail "the arrays' line not named"
fi
echo "test_leak_valgrind: ok"
