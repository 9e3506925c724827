#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test_slub_symbolize.sh SLUBRUN BUGS SOURCE DOC - the reports lead to the
# line: BUGS (tests/tools/bugs.c, -g -O0, one heap bug of each kind) under
# slubrun --debug --leak-check, its reports decoded by slub-symbolize
# (beside slubrun).  Each bug: the right diagnosis, the file:line of its
# allocation and, where the bad operation is a call into the allocator, of
# that call; the damage nothing touched again found at exit; the ERROR
# SUMMARY; --error-exitcode.  Then the release mode: a bad free names its
# call.  Last, docs/debugging.md (DOC) shows this very program.
set -euo pipefail
slubrun=$1 bugs=$2 src=$3 doc=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export SLUB_OPTIONS=
fail() { echo "test_slub_symbolize: $*" >&2; exit 1; }
[ -x "$(dirname "$slubrun")/slub-symbolize" ] || { echo "no slub-symbolize (libdw-dev): skipped"; exit 77; }

# line MARK: the line of bugs.c whose comment says MARK.
line() {
  local n
  n=$(grep -n -- "/\* $1 \*/" "$src" | cut -d: -f1)
  [ -n "$n" ] || fail "no line marked '$1' in $src"
  echo "bugs.c:$n"
}

# One report per paragraph: a BUG banner, a "slub:" event or a leak site starts one.
st=0; "$slubrun" --debug --leak-check "$bugs" >"$work/out.txt" 2>&1 || st=$?
[ "$st" = 0 ] || fail "bugs exited $st: $(tail -5 "$work/out.txt")"
awk '/^=====/ || (/^slub: / && !/^slub:   (at|by) /) || /^leak: [0-9]+ objects?, / { n++ }
     { print > sprintf("%s/report.%03d", dir, n) }' dir="$work" "$work/out.txt"

# expect WHAT DIAGNOSIS LOCATION...: one report holds the diagnosis and every location.
expect() {
  local what=$1 diag=$2; shift 2
  for f in "$work"/report.*; do
    grep -qF -- "$diag" "$f" || continue
    local ok=1
    for loc in "$@"; do grep -qE -- "${loc//./\\.}([^0-9]|\$)" "$f" || ok=0; done
    [ "$ok" = 1 ] && return 0
  done
  fail "$what: no report with '$diag' and $*; the output: $(cat "$work/out.txt")"
}

expect "overflow by 1" "kmalloc Redzone overwritten" \
  "$(line 'overflow 1: allocated')" "$(line 'overflow 1: found')"
expect "overflow by 16" "Right Redzone overwritten" \
  "$(line 'overflow 16: allocated')" "$(line 'overflow 16: found')"
expect "underflow" "Left Redzone overwritten" \
  "$(line 'underflow: allocated')" "$(line 'underflow: found')"
# Found at exit: the allocation and the free, no call trace (the exit handler's says nothing).
expect "use after free" "Poison overwritten" \
  "$(line 'use after free: allocated')" "$(line 'use after free: freed')"
expect "double free" "Object already free" \
  "$(line 'double free: allocated')" "$(line 'double free: freed')" "$(line 'double free: found')"
expect "interleaved double free" "Object already free" \
  "$(line 'interleaved: allocated')" "$(line 'interleaved: freed')" "$(line 'interleaved: found')"
expect "free of a stack address" "invalid pointer" "slub:   at free_stack_address+" \
  "$(line 'stack address: found')"
expect "free of an interior pointer" "is not the start of an object" \
  "$(line 'interior: allocated')" "$(line 'interior: found')"
expect "realloc of a freed block" "Object already free" \
  "$(line 'realloc freed: allocated')" "$(line 'realloc freed: freed')" \
  "$(line 'realloc freed: found')"
expect "leak" "leak: 1 object, 120 bytes, allocated in leak+" "$(line 'leak: allocated')"
grep -q 'Call Trace:' "$work/out.txt" || fail "no BUG report ends with its call trace"
# Frames keep the kernel's format: the module by its file name.
grep -q ' \[bugs\] .*bugs\.c:' "$work/out.txt" || fail "frames lost their [module]"
! grep -q '\[/' "$work/out.txt" || fail "a module path was left in: $(grep -m1 '\[/' "$work/out.txt")"
grep -q '^slub: ERROR SUMMARY: 10 errors: 9 in 5 caches, 1 outside them; 1 found at exit (pid [0-9]*)$' \
  "$work/out.txt" || fail "summary: $(grep 'ERROR SUMMARY' "$work/out.txt")"
# A never-freed object's report shows no free track.
! grep -q 'not-available\|stack trace missing' "$work/out.txt" || fail "an unset track was printed"

# --error-exitcode; --no-exit-validate leaves the use after free unfound.
st=0; "$slubrun" --debug --error-exitcode=42 --no-exit-validate "$bugs" >"$work/out.txt" 2>&1 || st=$?
[ "$st" = 42 ] || fail "--error-exitcode=42: status $st"
! grep -q 'Poison overwritten' "$work/out.txt" || fail "--no-exit-validate still validated at exit"
grep -q 'ERROR SUMMARY: 9 errors' "$work/out.txt" || fail "$(grep 'ERROR SUMMARY' "$work/out.txt")"

# Release mode: no debug flag, and the bad frees still name their call (no file:line:
# only --debug, --leak-check and --abort-on-error decode).
st=0; "$slubrun" "$bugs" >"$work/out.txt" 2>&1 || st=$?
[ "$st" = 0 ] || fail "release mode: status $st"
for call in double_free interleaved_double_free free_stack_address free_interior_pointer; do
  grep -q "^slub:   at $call+0x[0-9a-f]*/0x[0-9a-f]* \[bugs\]$" "$work/out.txt" ||
    fail "release mode: no site for $call: $(cat "$work/out.txt")"
done
# The filter by hand, on the release report: bare file names found in the current directory.
(cd "$(dirname "$bugs")" && "$(dirname "$slubrun")/slub-symbolize") <"$work/out.txt" >"$work/decoded.txt"
grep -q "^slub:   at double_free+.*$(line 'double free: found')\$" "$work/decoded.txt" ||
  fail "slub-symbolize by hand: $(cat "$work/decoded.txt")"

# docs/debugging.md shows this program, as it is.
awk '/<!-- example: file=bugs.c / { on = 1; getline; next } on && /^```$/ { exit } on' "$doc" \
  >"$work/doc_bugs.c"
cmp -s "$work/doc_bugs.c" "$src" || fail "docs/debugging.md's bugs.c differs from $src"
echo "test_slub_symbolize: ok"
