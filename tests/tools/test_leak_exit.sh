#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test_leak_exit.sh SLUBRUN STALE_LEAK - the leak check at exit lists a
# block main leaked whose address lingers below main's frame, in stack that
# exit() and its handlers reuse (tests/tools/stale_leak.c): the scan reads
# the stack from exit()'s caller up.  Both ways out: the return from main,
# and exit() called inside the program (then its caller's frame is read).
set -euo pipefail
slubrun=$1 target=$2
export SLUB_OPTIONS=
fail() { echo "test_leak_exit: $*" >&2; exit 1; }
out=$("$slubrun" --debug --leak-check "$target" 2>&1) || fail "slubrun failed: $out"
grep -q "^leak: 1 block, 100 bytes unreferenced at exit" <<<"$out" ||
	fail "the lingering block is not listed: $(grep '^leak:' <<<"$out")"
out=$("$slubrun" --debug --leak-check "$target" exit 2>&1) || fail "slubrun failed: $out"
grep -q "^leak: no leaks" <<<"$out" ||
	fail "a block exit()'s caller holds is listed: $(grep '^leak:' <<<"$out")"
echo "test_leak_exit: ok"
