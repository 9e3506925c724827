#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test_slubrun_fs.sh SLUBRUN SLABINFO - slubrun --fs: a program (bash,
# on libslub-malloc.so) runs with its tree mounted, which cat and slabinfo
# read and echo writes; the mount and its directory are gone when it ends,
# and its exit status comes through; an exec in its pid keeps the tree.
# Only the program has an agent: slubrun's helpers (slubfs, fusermount3)
# run without libslub, and no socket is left.
# Both the default place and --fs=DIR.
# Exit 77 (skipped) where FUSE cannot mount.
set -euo pipefail
slubrun=$1 slabinfo=$2 name=test_slubrun_fs target=
source "$(dirname "$0")/agent_lib.sh"
[ -c /dev/fuse ] || { echo "$name: skipped: no /dev/fuse"; exit 77; }
command -v fusermount3 >/dev/null || { echo "$name: skipped: no fusermount3"; exit 77; }
[ -x "$(dirname "$slubrun")/slubfs" ] || { echo "$name: skipped: slubfs not built (no libfuse3-dev)"; exit 77; }

mkfifo go
# On failure too: the program let go, no mount left behind.
on_exit='exec 5<>"$work/go"; echo >&5; for m in "$work"/slub/*/ "$work/tree"; do
  if mountpoint -q "$m"; then fusermount3 -uz "$m"; fi; done; wait'
# The program reads its own tree while slubrun keeps it mounted.
st=0
"$slubrun" --fs -- bash -c '
  d=$XDG_RUNTIME_DIR/slub/$$
  for i in $(seq 600); do mountpoint -q "$d" && break; sleep 0.05; done
  cat "$d/kmalloc-64/objects" >objects.txt
  echo 1 >"$d/kmalloc-64/shrink" && echo shrunk >>objects.txt
  echo $$ >pid.txt
  read -r x <go
  exit 7' 2>err.txt &
runner=$!
wait_until 30 test -s pid.txt || fail "the program did not run: $(cat err.txt)"
pid=$(cat pid.txt)
grep -Eq '^[0-9]+( N0=[0-9]+)?$' objects.txt && grep -q shrunk objects.txt ||
  fail "the program's own tree: $(cat objects.txt) $(cat err.txt)"
grep -q "slubrun: pid $pid's caches are at $work/slub/$pid" err.txt || fail "where: $(cat err.txt)"
mountpoint -q "$work/slub/$pid" || fail "not mounted at the default place"
"$slabinfo" -d "$work/slub/$pid" -a -1 >out.txt || fail "slabinfo -d: $(cat out.txt)"
grep -q '<- .*kmalloc-64' out.txt || fail "slabinfo -a -1 on the mount: $(cat out.txt)"
"$slabinfo" -p "$pid" -T >out.txt || fail "slabinfo -p beside the mount: $(cat out.txt)"
# (The program's own children have agents of their own: only the helpers are looked at.)
helpers=$(pgrep -f "slubfs -f $pid " || true)
[ -n "$helpers" ] || fail "no slubfs found for pid $pid (test assumption)"
for p in $helpers $(pgrep -x fusermount3 || true); do
  [ ! -e "$work/slub/$p.sock" ] || fail "helper $p ($(cat /proc/$p/comm)) has an agent: $(ls "$work/slub")"
  ! grep -q libslub "/proc/$p/maps" 2>/dev/null || fail "helper $p ($(cat /proc/$p/comm)) runs on libslub"
done
echo >go
wait $runner || st=$?
[ "$st" = 7 ] || fail "exit status $st, not the program's 7: $(cat err.txt)"
[ ! -e "$work/slub/$pid" ] || fail "mount directory left: $(ls -la "$work/slub")"
[ ! -e "$work/slub/$pid.sock" ] || fail "socket left"
# Whose: the pid's command if it lives, for a failure seen once in a loaded ctest -j2.
owners() {
  for s in "$work"/slub/*.sock; do
    [ -e "$s" ] || continue
    p=$(basename "$s" .sock)
    echo "$p.sock ($(tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline" || echo gone))"
  done
}
wait_until 10 bash -c "! ls '$work'/slub/*.sock >/dev/null 2>&1" || fail "sockets left: $(owners)"

# A launcher that execs the program keeps its pid: the tree stays mounted
# and, once the new image's agent listens, reads it.
cat >inner.sh <<'INNER'
d=$XDG_RUNTIME_DIR/slub/$$
for i in $(seq 600); do cat "$d/kmalloc-64/objects" >objects2.txt 2>/dev/null && break; sleep 0.05; done
mountpoint -q "$d" && echo mounted >>objects2.txt
INNER
st=0
"$slubrun" --fs -- bash -c '
  d=$XDG_RUNTIME_DIR/slub/$$
  for i in $(seq 600); do mountpoint -q "$d" && break; sleep 0.05; done
  exec bash inner.sh' 2>err.txt || st=$?
[ "$st" = 0 ] || fail "exec: status $st: $(cat err.txt); sockets: $(owners)"
grep -Eq '^[0-9]+( N0=[0-9]+)?$' objects2.txt && grep -q mounted objects2.txt ||
  fail "the tree after an exec: $(cat objects2.txt) $(cat err.txt)"

# --fs=DIR, a directory of the caller's: kept, unmounted.
mkdir tree
st=0
"$slubrun" --fs="$work/tree" -- bash -c '
  for i in $(seq 600); do mountpoint -q tree && break; sleep 0.05; done
  ls tree >ls.txt; true' 2>err.txt || st=$?
[ "$st" = 0 ] || fail "--fs=DIR: status $st: $(cat err.txt)"
grep -q '^kmalloc-64$' ls.txt || fail "--fs=DIR listing: $(head -5 ls.txt)"
[ -d tree ] && ! mountpoint -q tree || fail "--fs=DIR: left mounted, or removed"
echo "$name: ok"
