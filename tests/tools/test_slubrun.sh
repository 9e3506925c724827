#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test_slubrun.sh SLUBRUN TARGET CC - slubrun from the shell: --version,
# --help with the options list, SLUB_OPTIONS=help, a missing --options
# argument, the warning for programs that cannot load the library (static,
# set-user-ID, a script whose interpreter is static), and --stats printing
# the started program's table only (--stats=all: every process's), and
# --abort-on-error stopping a program at a bad free with its stack.
# TARGET is tests/tools/slubrun_target.c built; CC builds a static program.
set -euo pipefail
slubrun=$1 target=$2 cc=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
export SLUB_OPTIONS=

fail() { echo "test_slubrun: $*" >&2; exit 1; }
# tables FILE: how many cache tables a --stats run printed.
tables() { grep -c '^libslub: caches of pid ' "$1" || true; }

# --version: slubrun's version and the library it would preload.
"$slubrun" --version >out.txt
grep -q '^slubrun (libslub) [0-9]' out.txt || fail "--version: $(cat out.txt)"
lib=$(sed -n 's/^library: //p' out.txt)
[ -f "$lib" ] || fail "--version names no library file: $(cat out.txt)"

# --options without its argument says what is missing.
st=0; "$slubrun" --options >out.txt 2>err.txt || st=$?
[ "$st" = 2 ] || fail "--options without a value: status $st, not 2"
grep -q -- '--options needs a SLUB_OPTIONS string' err.txt || fail "--options alone: $(cat err.txt)"

# --help: usage and the options in force, --options applied, on stdout.
"$slubrun" --options 'slub_decay_ms=9' --help >out.txt 2>err.txt
grep -q '^usage: slubrun' out.txt || fail "--help printed no usage"
for flag in --stats=all --abort-on-error --version; do
  grep -q -- "^  $flag " out.txt || fail "--help does not mention $flag"
done
grep -q '^slub_abort_on_error=0 ' out.txt || fail "--help lists no slub_abort_on_error"
grep -q '^slub_decay_ms=9  *0\.\.3600000  *free page blocks' out.txt ||
  fail "--help lists no slub_decay_ms=9 line: $(grep slub_decay_ms out.txt)"
grep -q '^slub_report_file=""' out.txt || fail "--help lists no slub_report_file"
[ ! -s err.txt ] || fail "--help wrote to stderr: $(cat err.txt)"

# SLUB_OPTIONS=help: the list once on stderr, and the program runs on.
st=0; SLUB_OPTIONS=help "$slubrun" -- sh -c 'echo running; exit 4' >out.txt 2>err.txt || st=$?
[ "$st" = 4 ] && [ "$(cat out.txt)" = running ] || fail "SLUB_OPTIONS=help: status $st, output $(cat out.txt)"
[ "$(grep -c '^libslub options in force' err.txt)" = 1 ] || fail "SLUB_OPTIONS=help: $(head -3 err.txt)"
grep -q '^slub_decay_ms=250 ' err.txt || fail "SLUB_OPTIONS=help: no slub_decay_ms line"

# An unknown option in the environment points to the list; the program runs.
SLUB_OPTIONS='slub_no_such=1' "$slubrun" -- "$target" fork 2>err.txt
grep -q "unknown option 'slub_no_such' ignored (SLUB_OPTIONS=help or slubrun --help" err.txt ||
  fail "the unknown option's message: $(cat err.txt)"

# A bad value on the command line is a usage error: exit 2, nothing run,
# the bad letter or option named.
bad() {
  local want=$1; shift
  st=0; "$slubrun" "$@" -- sh -c 'echo ran' >out.txt 2>err.txt || st=$?
  [ "$st" = 2 ] && [ ! -s out.txt ] && grep -qF -- "$want" err.txt ||
    fail "slubrun $*: status $st, output '$(cat out.txt)', $(cat err.txt)"
}
bad "slubrun: --debug=Q: option slub_debug='Q' rejected: 'Q' is not a debug flag" --debug=Q
grep -q "slubrun: nothing run: fix --debug=Q" err.txt || fail "--debug=Q: $(cat err.txt)"
bad "'q' is not a debug flag" --debug=FZq,kmalloc-* --leak-check
bad "slubrun: --options: unknown option 'slub_no_such' ignored" --options 'slub_no_such=1'
bad "slubrun: --options: option slub_decay_ms=x: expected an integer" --options 'slub_decay_ms=x'
bad "slubrun: --fs=$work/no/dir: No such file or directory" --fs="$work/no/dir"
bad "slubrun: --fs= needs a directory" --fs=
bad "'bogus' is none of all, internal, counters" --stats=bogus
# --leak-check adds U to each block's letters, not after its cache names.
"$slubrun" --debug='FZ,kmalloc-64;P' --leak-check --help >out.txt
grep -q '^slub_debug="FZU,kmalloc-64;PU" ' out.txt || fail "--leak-check's U: $(grep '^slub_debug=' out.txt)"
# Good values still run, with their effect.
[ "$("$slubrun" --debug=FZ,slubrun_no_cache --options 'slub_decay_ms=10' -- sh -c 'echo ran' 2>err.txt)" = ran ] &&
  [ ! -s err.txt ] || fail "good --debug and --options: $(cat err.txt)"

# A dynamic program: no warning.
"$slubrun" -- "$target" fork 2>err.txt
[ ! -s err.txt ] || fail "a dynamic program drew a warning: $(cat err.txt)"

# A static program cannot load the library: said, and run anyway.
if echo 'int main(void) { return 3; }' >static.c && "$cc" -static -o static static.c 2>/dev/null; then
  st=0; "$slubrun" -- ./static 2>err.txt || st=$?
  [ "$st" = 3 ] || fail "a static program ran with status $st, not 3"
  grep -q '^slubrun: ./static is statically linked: it cannot load libslub-malloc' err.txt ||
    fail "a static program: $(cat err.txt)"
  [ "$(wc -l <err.txt)" = 1 ] || fail "a static program: more than one line: $(cat err.txt)"
  # Found through $PATH, and through a script's #! line (one level).
  PATH=$work:$PATH "$slubrun" static 2>err.txt || true
  grep -q "^slubrun: $work/static is statically linked" err.txt || fail "static by \$PATH: $(cat err.txt)"
  printf '#!%s\n' "$work/static" >script && chmod +x script
  st=0; "$slubrun" -- ./script 2>err.txt || st=$?
  [ "$st" = 3 ] || fail "a script on a static interpreter: status $st"
  grep -q "^slubrun: ./script (a script) runs $work/static, which is statically linked" err.txt ||
    fail "a script on a static interpreter: $(cat err.txt)"
else
  echo "test_slubrun: no static C library: static checks skipped"
fi
# A script whose interpreter is dynamic: no warning.
printf '#!/bin/sh\nexit 0\n' >dyn.sh && chmod +x dyn.sh
"$slubrun" -- ./dyn.sh 2>err.txt
[ ! -s err.txt ] || fail "a script on /bin/sh drew a warning: $(cat err.txt)"

# Set-user-ID to another user: the loader ignores LD_PRELOAD.
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
  cp "$target" suid && chown nobody suid && chmod 4755 suid
  "$slubrun" -- ./suid idle 2>err.txt || true
  grep -q '^slubrun: ./suid is set-user-ID: the loader ignores LD_PRELOAD' err.txt ||
    fail "a set-user-ID program: $(cat err.txt)"
  # Set-user-ID to ourselves changes nothing: no warning.
  cp "$target" suid_self && chmod 4755 suid_self
  "$slubrun" -- ./suid_self idle 2>err.txt
  [ ! -s err.txt ] || fail "set-user-ID to our own uid drew a warning: $(cat err.txt)"
else
  echo "test_slubrun: not root: set-user-ID checks skipped"
fi

# --stats: the started program's table only, not its forked child's.
"$slubrun" --stats -- "$target" fork 2>err.txt
[ "$(tables err.txt)" = 1 ] || fail "--stats printed $(tables err.txt) tables, not 1"
grep -q '^kmalloc-64 ' err.txt || fail "--stats: no kmalloc-64 line"
# Sorted by the memory at peak, with the legend; the allocator's own caches on request.
awk '/^Name /{on=1; next} on && /^\(|^sum/{exit} on{print $3}' err.txt >peaks.txt
[ -s peaks.txt ] || fail "--stats: no rows: $(cat err.txt)"
awk '{v=$1; m=1; if (v ~ /K$/) m=1e3; if (v ~ /M$/) m=1e6; if (v ~ /G$/) m=1e9; v=v*m
      if (NR > 1 && v > last) bad=1; last=v} END{exit bad}' peaks.txt ||
  fail "--stats: rows not sorted by memory at peak: $(tr '\n' ' ' <peaks.txt)"
grep -q 'at peak' err.txt && grep -q '^Sizes: K = 1000 bytes' err.txt || fail "--stats: no legend"
grep -q '^Per-CPU fast paths: \(rseq\|cmpxchg16b\)' err.txt || fail "--stats: no fast-path mode"
grep -q '^libslub: caches of pid [0-9]* (.*): peak RSS [0-9.]*[KMG]' err.txt ||
  fail "--stats: no process line: $(head -1 err.txt)"
! grep -q '^kmem_cache ' err.txt || fail "--stats shows kmem_cache without being asked"
! grep -q '%.*total\|^total in slabs' err.txt || fail "--stats still ends on a total percentage"
"$slubrun" --stats=internal -- "$target" fork 2>err.txt
grep -q '^kmem_cache ' err.txt || fail "--stats=internal: no kmem_cache row"
# --stats=counters: the counters after the table, or why there are none;
# words combine; a wrong word is refused.
"$slubrun" --stats=all,counters -- "$target" fork 2>err.txt
[ "$(grep -c '^Statistics counters' err.txt)" = 2 ] || fail "--stats=all,counters: $(cat err.txt)"
grep -qE '^kmalloc-64 +alloc_fastpath=[0-9]|^  none: this libslub was built without them' err.txt ||
  fail "--stats=counters: no kmalloc-64 counters and no reason: $(cat err.txt)"
st=0; "$slubrun" --stats=all,bogus -- "$target" fork 2>err.txt || st=$?
[ "$st" = 2 ] && grep -q "'bogus' is none of all, internal, counters" err.txt ||
  fail "--stats=all,bogus: status $st: $(cat err.txt)"
# The program is the started pid at its last exec (as a pyenv shim execs).
"$slubrun" --stats -- sh -c "sh -c 'exec \"$target\" fork'; exec \"$target\" fork" 2>err.txt
[ "$(tables err.txt)" = 1 ] || fail "--stats through exec printed $(tables err.txt) tables, not 1"
# --stats=all: every process that allocated and exited normally.
"$slubrun" --stats=all -- "$target" fork 2>err.txt
[ "$(tables err.txt)" = 2 ] || fail "--stats=all printed $(tables err.txt) tables, not 2"
# No table, and why.
"$slubrun" --stats -- "$target" idle 2>err.txt
grep -q '^slubrun: no table: .*made no allocation' err.txt || fail "--stats, idle: $(cat err.txt)"
"$slubrun" --stats=all -- "$target" idle 2>err.txt
grep -q '^slubrun: no table: no process of .* exited normally' err.txt || fail "--stats=all, idle: $(cat err.txt)"
st=0; "$slubrun" --stats -- sh -c 'kill -9 $$' 2>err.txt || st=$?
[ "$st" = 137 ] || fail "--stats, killed: status $st"
grep -q '^slubrun: no table: sh (pid [0-9]*) was killed by signal 9' err.txt ||
  fail "--stats, killed: $(cat err.txt)"

# --abort-on-error: the report, the stack, SIGABRT; without it the program runs on.
st=0; "$slubrun" --abort-on-error -- "$target" badfree >out.txt 2>err.txt || st=$?
[ "$st" = 134 ] || fail "--abort-on-error: status $st, not 134 (SIGABRT)"
grep -q '^slub: free: invalid pointer' err.txt || fail "--abort-on-error: no report: $(cat err.txt)"
grep -q '^  #[0-9 ]* [a-z_]*+0x[0-9a-f]*/0x[0-9a-f]* \[slubrun_target\]' err.txt ||
  fail "--abort-on-error: no frame in the program: $(cat err.txt)"
[ ! -s out.txt ] || fail "--abort-on-error: the program ran on: $(cat out.txt)"
"$slubrun" -- "$target" badfree >out.txt 2>err.txt || fail "a bad free without --abort-on-error stopped the program"
grep -q 'ran on after the bad free' out.txt || fail "without --abort-on-error: $(cat out.txt)"

echo "test_slubrun: ok"
