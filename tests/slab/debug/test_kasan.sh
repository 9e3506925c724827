#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test_kasan.sh VICTIM [VICTIM_ASAN] - KASAN's model at run time: the
# kernel-style program kasan_victim.c against libslub, under valgrind's
# memcheck and (VICTIM_ASAN, built with -fsanitize=address) under
# AddressSanitizer: each bug reported by the tool with its stacks, the
# clean run reported by none, and nothing reported with kasan=0.
set -uo pipefail
victim=$1 victim_asan=${2:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export SLUB_OPTIONS=
bad=0
fail() { echo "FAIL: $*"; bad=$((bad + 1)); }
# has FILE PATTERN WHAT: PATTERN (extended regex) in FILE, else a failure.
has() { grep -Eq -- "$2" "$1" || { fail "$3: no /$2/ in:"; sed 's/^/    /' "$1" | head -40; }; }

if [ -n "$victim_asan" ]; then
  run_asan() {	# run_asan MODE: output in $work/asan-MODE.txt, exit status in $rc
    "$victim_asan" "$1" >"$work/asan-$1.txt" 2>&1; rc=$?
  }
  # ASan names the function and line where it finds a symboliser (gcc's
  # built in, clang's llvm-symbolizer); its report and ours stand either way.
  where() { command -v llvm-symbolizer >/dev/null && echo ".*kasan_victim.c:[0-9:]+ in $1"; }
  run_asan clean
  [ "$rc" -eq 0 ] || fail "ASan clean: exit $rc"
  ! grep -q AddressSanitizer "$work/asan-clean.txt" || fail "ASan clean: a report"
  run_asan uaf
  [ "$rc" -ne 0 ] || fail "ASan uaf: exit 0"
  has "$work/asan-uaf.txt" "use-after-poison$(where uaf)" "ASan uaf"
  has "$work/asan-uaf.txt" 'KASAN: .* freed 56-byte object .* of cache conn: a use after free' "ASan uaf"
  run_asan overflow
  has "$work/asan-overflow.txt" "use-after-poison$(where overflow)" "ASan overflow"
  has "$work/asan-overflow.txt" '0 bytes past the end of the 32-byte object .* of cache kmalloc-32 \(24 bytes asked for\)' "ASan overflow"
  run_asan redzone
  has "$work/asan-redzone.txt" "use-after-poison$(where redzone)" "ASan redzone"
  has "$work/asan-redzone.txt" '0 bytes past the end of the 64-byte object .* of cache records' "ASan redzone"
  # The tool is told nothing with kasan=0: the same bug goes unseen.
  SLUB_OPTIONS=kasan=0 "$victim_asan" uaf >"$work/asan-off.txt" 2>&1 || fail "ASan kasan=0: exit $?"
  ! grep -q AddressSanitizer "$work/asan-off.txt" || fail "ASan kasan=0: a report"
  echo "ASan: 5 runs checked"
fi

if command -v valgrind >/dev/null; then
  run_vg() {	# run_vg MODE: memcheck's log in $work/vg-MODE.txt, exit status in $rc
    valgrind --leak-check=full --error-exitcode=9 --log-file="$work/vg-$1.txt" \
      "$victim" "$1" >"$work/out-$1.txt" 2>&1; rc=$?
  }
  run_vg clean
  [ "$rc" -eq 0 ] || fail "valgrind clean: exit $rc"
  has "$work/vg-clean.txt" 'ERROR SUMMARY: 0 errors' "valgrind clean"
  run_vg uaf
  has "$work/vg-uaf.txt" 'Invalid read of size 4' "valgrind uaf"
  has "$work/vg-uaf.txt" "0 bytes inside a block of size 56 free'd" "valgrind uaf"
  # gcc's units name the file, clang's its path from the source directory.
  [ "$(grep -cE 'uaf \((.*/)?kasan_victim.c:' "$work/vg-uaf.txt")" -ge 3 ] ||
    fail "valgrind uaf: the access's, the free's and the allocation's stacks not all named"
  run_vg overflow
  has "$work/vg-overflow.txt" 'Invalid write of size 1' "valgrind overflow"
  has "$work/vg-overflow.txt" "0 bytes after a block of size 24 alloc'd" "valgrind overflow"
  run_vg redzone
  has "$work/vg-redzone.txt" "0 bytes after a block of size 64 alloc'd" "valgrind redzone"
  run_vg leak
  has "$work/vg-leak.txt" 'definitely lost: 56 bytes in 1 blocks' "valgrind leak"
  has "$work/vg-leak.txt" 'leak \((.*/)?kasan_victim.c:' "valgrind leak"
  run_vg double
  has "$work/out-double.txt" 'BUG conn .*Object already free' "valgrind double"
  has "$work/vg-double.txt" "Invalid free\(\)" "valgrind double"
  SLUB_OPTIONS=kasan=0 valgrind --error-exitcode=9 --log-file="$work/vg-off.txt" "$victim" uaf \
    >/dev/null 2>&1 || fail "valgrind kasan=0: exit $?"
  echo "valgrind: 7 runs checked"
else
  echo "no valgrind: its half skipped"
fi
[ "$bad" -eq 0 ] && echo "test_kasan: ok"
exit $((bad > 0))
