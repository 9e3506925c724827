#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test_slubfs.sh SLUBFS SLABINFO TARGET - a live process's tree mounted:
# directories, alias links and file modes as the kernel's tree has them,
# `cat` giving the attribute API's figures, `echo` writes that take effect
# (or fail with the attribute's errno), slabinfo -d reading the mount; the
# mount gone when the process exits, is SIGKILLed, or slubfs is; the root's
# leaks file giving the live leak scan's report.
# Exit 77 (skipped) where FUSE cannot mount.
set -euo pipefail
slubfs=$1 slabinfo=$2 target=$3 name=test_slubfs
source "$(dirname "$0")/agent_lib.sh"
mnt=$work/mnt
mkdir "$mnt"
on_exit='if in_mountinfo; then fusermount3 -uz "$mnt"; fi'

skip() { echo "$name: skipped: $*"; exit 77; }
[ -c /dev/fuse ] || skip "no /dev/fuse (a kernel or container without FUSE)"
command -v fusermount3 >/dev/null || skip "no fusermount3 (Debian: apt-get install fuse3)"
# The mount table, not mountpoint(1): a mount whose server died answers
# stat with ENOTCONN, which mountpoint takes for "not a mount point".
in_mountinfo() { awk -v m="$mnt" '$5 == m {f = 1} END {exit !f}' /proc/self/mountinfo; }
mounted() { mountpoint -q "$mnt"; }
unmounted() { ! in_mountinfo; }

start
wait_socket "$pid"
if ! "$slubfs" "$pid" "$mnt" 2>err.txt; then
  grep -qiE 'permission|not permitted|fuse: device not found|failed to open /dev/fuse' err.txt &&
    skip "FUSE cannot mount here: $(head -1 err.txt)"
  fail "slubfs failed: $(cat err.txt)"
fi
wait_until 30 mounted || fail "not mounted"

# The tree: a directory per cache, a link per merged name, the modes.
[ -d "$mnt/agent_t_plain" ] && [ ! -L "$mnt/agent_t_plain" ] || fail "agent_t_plain is no directory"
id=$(readlink "$mnt/agent_t_a") || fail "agent_t_a is no link"
[[ $id == :* ]] && [ -d "$mnt/$id" ] && [ "$(readlink "$mnt/agent_t_b")" = "$id" ] ||
  fail "merged pair: agent_t_a -> $id, agent_t_b -> $(readlink "$mnt/agent_t_b")"
[ "$(stat -c %a "$mnt/agent_t_plain/objects")" = 444 ] || fail "objects not 0444"
[ "$(stat -c %a "$mnt/agent_t_plain/shrink")" = 644 ] || fail "shrink not 0644"
[ "$(ls "$mnt/agent_t_plain" | wc -l)" -ge 30 ] || fail "attributes: $(ls "$mnt/agent_t_plain")"

# cat gives what slub_attr_read gives in the process.
for a in objects slabs partial cpu_slabs aliases object_size order; do
  got=$(tr '\n' '|' <"$mnt/agent_t_plain/$a")
  [ "$got" = "$(api agent_t_plain $a)" ] || fail "cat $a: '$got', API '$(api agent_t_plain $a)'"
  got=$(tr '\n' '|' <"$mnt/agent_t_a/$a")
  [ "$got" = "$(api agent_t_a $a)" ] || fail "cat agent_t_a/$a: '$got'"
done
[ "$(cat "$mnt/$id/aliases")" = 1 ] || fail "aliases of $id: $(cat "$mnt/$id/aliases")"

# Writes take effect; refused ones fail with the attribute's errno.
echo 9 >"$mnt/agent_t_plain/min_partial" || fail "echo 9 > min_partial failed"
[ "$(api agent_t_plain min_partial)" = "9|" ] || fail "min_partial: $(api agent_t_plain min_partial)"
st=0; (echo x >"$mnt/agent_t_plain/min_partial") 2>err.txt || st=$?
[ "$st" != 0 ] && grep -q 'Invalid argument' err.txt || fail "echo x > min_partial: $(cat err.txt)"
st=0; (echo 1 >"$mnt/agent_t_plain/objects") 2>err.txt || st=$?
[ "$st" != 0 ] && grep -q 'Permission denied' err.txt || fail "echo > objects: $(cat err.txt)"
st=0; (echo 1 >"$mnt/agent_t_plain/validate") 2>err.txt || st=$?
[ "$st" != 0 ] && grep -q 'Invalid argument' err.txt || fail "validate without debug flags: $(cat err.txt)"
cmd free
echo 1 >"$mnt/agent_t_plain/shrink" || fail "echo 1 > shrink failed"
[ "$(num "$(api agent_t_plain slabs)")" = 0 ] || fail "shrink: slabs $(api agent_t_plain slabs)"
cmd "alloc 300"
[ "$(tr '\n' '|' <"$mnt/agent_t_plain/objects")" = "$(api agent_t_plain objects)" ] ||
  fail "objects after alloc: $(cat "$mnt/agent_t_plain/objects")"

# slabinfo reads the mount as any tree.
"$slabinfo" -d "$mnt" -a >out.txt || fail "slabinfo -d: $(cat out.txt)"
grep -Eq "^$id +<- agent_t_a agent_t_b$" out.txt || fail "slabinfo -d -a: $(cat out.txt)"
"$slabinfo" -d "$mnt" agent_t_plain >out.txt
grep -q '^Slabcache: agent_t_plain ' out.txt || fail "slabinfo -d report: $(head -3 out.txt)"

# The process exits: the mount goes, slubfs ends.
quit
wait_until 30 unmounted || fail "mount left after the process exited"
wait_until 30 bash -c "! pgrep -f '^$slubfs $pid ' >/dev/null" || fail "slubfs still running"

# The process SIGKILLed: the mount goes too.
start
wait_socket "$pid"
"$slubfs" "$pid" "$mnt" || fail "slubfs (2) failed"
wait_until 30 mounted || fail "not mounted (2)"
kill -9 "$pid"
wait_until 30 unmounted || fail "mount left after SIGKILL of the process"
exec 3>&- 4<&-
killed=$pid

# slubfs SIGKILLed: auto_unmount takes the mount away; the next agent
# to start cleans the killed process's socket.
start
wait_socket "$pid"
[ ! -e "$work/slub/$killed.sock" ] || fail "stale socket of killed pid $killed not cleaned"
"$slubfs" -f "$pid" "$mnt" &
fs=$!
wait_until 30 mounted || fail "not mounted (3)"
kill -9 "$fs"
wait_until 30 unmounted || fail "mount left after SIGKILL of slubfs"
quit

# The root's leaks file, kmemleak's: echo scan > runs the first scan (a
# block is listed once two scans found it), cat runs the second and gives
# the report slabinfo -p --leaks prints; any other write is refused.
# A directory of its own: the SIGKILLed slubfs's auto_unmount helper
# (libfuse's fusermount3) may still unmount by path a second later, and
# took the next mount of the same directory (half the runs under TSan).
mnt=$work/mnt4
mkdir "$mnt"
start "slub_agent slub_debug=U,agent_t_plain slub_leak_min_age=0"
wait_socket "$pid"
"$slubfs" "$pid" "$mnt" || fail "slubfs (4) failed"
wait_until 30 mounted || fail "not mounted (4)"
[ "$(stat -c %a "$mnt/leaks")" = 600 ] || fail "leaks not 0600"
ls "$mnt" | grep -qx leaks || fail "leaks not listed: $(ls "$mnt")"
cmd "leak 3"
echo scan >"$mnt/leaks" || fail "echo scan > leaks failed"
cat "$mnt/leaks" >out.txt || fail "cat leaks failed"
grep -q '^leak: 3 blocks, 600 bytes unreferenced in live scan 2' out.txt &&
  grep -q '^leak: 3 objects, 600 bytes, allocated in leak_objects' out.txt &&
  grep -q '^leak: still reachable: 1000 blocks' out.txt || fail "cat leaks: $(cat out.txt)"
st=0; (echo clear >"$mnt/leaks") 2>err.txt || st=$?
[ "$st" != 0 ] && grep -q 'Invalid argument' err.txt || fail "echo clear > leaks: $(cat err.txt)"
st=0; (printf 'scanx' >"$mnt/leaks") 2>err.txt || st=$?
[ "$st" != 0 ] && grep -q 'Invalid argument' err.txt || fail "printf scanx > leaks: $(cat err.txt)"
quit
wait_until 30 unmounted || fail "mount left after the process exited (4)"
echo "$name: ok"
