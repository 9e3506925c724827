#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test_leak_exit.sh SLUBRUN STALE_LEAK - the leak check at exit lists a
# block main leaked whose address lingers below main's frame, in stack that
# exit() and its handlers reuse (tests/tools/stale_leak.c): after a return
# from main the scan reads the stack from exit()'s caller up; where main
# calls exit() itself, from the malloc library's exit() up.  And a block
# whose address a live frame holds when the program calls exit() itself
# stays reachable, as does one a global holds just below the signal stack
# of a handler that calls exit().  The boundary needs the CFI walker (x86-64, glibc 2.35).
set -euo pipefail
slubrun=$1 target=$2
[ "$(uname -m)" = x86_64 ] || { echo "not x86-64: skipped"; exit 77; }
v=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{split($2, a, "."); print a[1] * 1000 + a[2]}')
[ "${v:-0}" -ge 2035 ] || { echo "glibc older than 2.35: skipped"; exit 77; }
export SLUB_OPTIONS=
fail() { echo "test_leak_exit: $*" >&2; exit 1; }
out=$("$slubrun" --debug --leak-check "$target" 2>&1) || fail "slubrun failed: $out"
grep -q "^leak: 1 block, 100 bytes unreferenced at exit" <<<"$out" ||
	fail "the lingering block is not listed: $(grep '^leak:' <<<"$out")"
out=$("$slubrun" --debug --leak-check "$target" exit-stale 2>&1) || fail "slubrun failed: $out"
grep -q "^leak: 1 block, 100 bytes unreferenced at exit" <<<"$out" ||
	fail "the lingering block is not listed when main calls exit(): $(grep '^leak:' <<<"$out")"
out=$("$slubrun" --debug --leak-check "$target" exit 2>&1) || fail "slubrun failed: $out"
grep -q "^leak: no leaks" <<<"$out" ||
	fail "a block exit()'s caller holds is listed: $(grep '^leak:' <<<"$out")"
out=$("$slubrun" --debug --leak-check "$target" altstack 2>&1) || fail "slubrun failed: $out"
grep -q "^leak: no leaks" <<<"$out" ||
	fail "a block a global holds below the signal stack exit() ran on is listed: $(grep '^leak:' <<<"$out")"
echo "test_leak_exit: ok"
