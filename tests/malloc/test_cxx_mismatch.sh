#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test_cxx_mismatch.sh SLUBRUN - C++ new[]/delete mismatches under libslub,
# in debug mode and in release mode, small and large arrays: the report
# names the likely mismatch and the program goes on; correct C++ gets no
# report.  Builds cxx_mismatch.cpp with the system's C++ compiler (skips,
# exit 77, when there is none).
set -euo pipefail
slubrun=$1
here=$(cd "$(dirname "$0")" && pwd)
cxx=$(command -v c++ || command -v g++ || command -v clang++ || true)
[ -n "$cxx" ] || { echo "test_cxx_mismatch: no C++ compiler: skipped"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$cxx" -O1 -Wno-mismatched-new-delete -o "$work/prog" "$here/cxx_mismatch.cpp"
export SLUB_OPTIONS=
fail=0
# check MODE CASE N WANT: run; the output must hold WANT and the end line.
check() {
  local mode=$1 case=$2 n=$3 want=$4 out st=0
  local flags=(); [ "$mode" = debug ] && flags=(--debug)
  out=$("$slubrun" "${flags[@]}" -- "$work/prog" "$case" "$n" 2>&1) || st=$?
  if [ "$st" != 0 ] || ! grep -qF -- "-- the program went on --" <<<"$out" ||
     ! grep -qF -- "$want" <<<"$out"; then
    echo "FAIL: $mode $case $n: status $st, wanted \"$want\"; got:"; head -c 3000 <<<"$out"; echo
    fail=1
  else
    echo "ok: $mode $case $n"
  fi
}
for mode in release debug; do
  # 3 and 100 elements of 8 bytes: slab objects; 3000: an extent.
  for n in 3 100; do
    check $mode array_delete $n "8 bytes into the object at"
    check $mode array_delete $n "C++ delete of an array from new[]?"
  done
  check $mode array_delete 3000 "8 bytes into the block at"
  check $mode array_delete 3000 "C++ delete of an array from new[]?"
  flags=(); [ "$mode" = debug ] && flags=(--debug)
  out=$("$slubrun" "${flags[@]}" -- "$work/prog" clean 100 2>&1)
  if grep -qE 'BUG|slub:|invalid' <<<"$out"; then
    echo "FAIL: $mode clean: a report for correct C++:"; echo "$out"; fail=1
  fi
done
exit $fail
