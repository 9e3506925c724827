#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# demo-live.sh BUILD PYTHON - the last part of `make run`: a program runs on
# libslub with its agent on (slub_agent=1); slabinfo -p shows its caches
# live, then slubfs mounts its tree and cat reads an attribute.  Where the
# kernel offers no FUSE (no /dev/fuse, no fusermount3) the mount is skipped
# with the reason.
set -euo pipefail
build=$1 python=$2
work=$(mktemp -d)
export XDG_RUNTIME_DIR=$work
pid=
cleanup() {
  if mountpoint -q "$work/tree" 2>/dev/null; then fusermount3 -u "$work/tree" || true; fi
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# The program: Python holding 200,000 small strings until its stdin closes,
# its small objects on malloc (PYTHONMALLOC=malloc), not its own arenas.
mkfifo "$work/hold"
SLUB_OPTIONS=slub_agent=1 PYTHONMALLOC=malloc LD_PRELOAD=$build/libslub-malloc.so "$python" -c '
import sys
kept = [str(i) * 3 for i in range(200000)]
print("holding", len(kept), "strings", flush=True)
sys.stdin.read()' <"$work/hold" &
pid=$!
exec 3>"$work/hold"
for _ in $(seq 600); do [ -S "$work/slub/$pid.sock" ] && break; sleep 0.05; done
[ -S "$work/slub/$pid.sock" ] || { echo "demo-live: no agent socket for pid $pid" >&2; exit 1; }
sleep 0.5	# the strings are made

echo "\$ slabinfo -p $pid -N 6 -S      # its six biggest caches, read live through its agent"
"$build/tools/slabinfo" -p "$pid" -N 6 -S
echo
if [ ! -x "$build/tools/slubfs" ]; then
  echo "(slubfs not built: libfuse3-dev was missing at configure time)"
elif [ ! -c /dev/fuse ] || ! command -v fusermount3 >/dev/null; then
  echo "(slubfs skipped: this kernel or container offers no FUSE: /dev/fuse or fusermount3 missing)"
else
  mkdir "$work/tree"
  echo "\$ slubfs $pid tree; cat tree/kmalloc-64/objects tree/kmalloc-64/slab_size"
  "$build/tools/slubfs" "$pid" "$work/tree" 3>&-	# not the fifo that ends Python
  for _ in $(seq 100); do mountpoint -q "$work/tree" && break; sleep 0.05; done
  cat "$work/tree/kmalloc-64/objects" "$work/tree/kmalloc-64/slab_size"
  echo "\$ ls tree | head -5"
  ls "$work/tree" | head -5
fi
exec 3>&-	# Python's stdin closes: it ends
wait "$pid"
pid=
