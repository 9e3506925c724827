#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test_slabinfo.sh SLABINFO - the slabinfo tool on a tree made here (three
# caches with slabs, an empty one, a merged cache with two alias links):
# the default table's figures, -z/-e, -S and -i order, -N, -a, -T, -r,
# --json, -s/-v writing their files, bad options and a missing tree; then
# -T and -a on the real kernel's /sys/kernel/slab when it can be read.
set -euo pipefail
slabinfo=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

fail() { echo "test_slabinfo: $*" >&2; exit 1; }

# cache DIR OBJSIZE ORDER OBJS_PER_SLAB SLABS PARTIAL CPU_SLABS OBJECTS [ALIASES]
cache() {
  local d=tree/$1
  mkdir -p "$d"
  echo "$2" >"$d/object_size"; echo "$2" >"$d/slab_size"; echo "$3" >"$d/order"
  echo "$4" >"$d/objs_per_slab"; echo "${9:-0}" >"$d/aliases"; echo 8 >"$d/align"
  for f in cache_dma destroy_by_rcu reclaim_account sanity_checks red_zone poison \
           store_user trace hwcache_align; do echo 0 >"$d/$f"; done
  if [ "$5" = 0 ]; then echo 0 >"$d/slabs"; else echo "$5 N0=$5" >"$d/slabs"; fi
  echo "$6" >"$d/partial"; echo "$7" >"$d/cpu_slabs"
  if [ "$8" = 0 ]; then echo 0 >"$d/objects"; else echo "$8 N0=$8" >"$d/objects"; fi
  echo 0 >"$d/objects_partial"; echo "$(($5 * $4))" >"$d/total_objects"
  : >"$d/shrink"; : >"$d/validate"; : >"$d/ctor"
}
cache kmalloc-64 64 0 64 3 1 1 100
cache big_cache 1024 3 32 100 0 2 2000
cache :0000128 128 0 32 2 0 1 40 2
cache empty_cache 256 0 16 0 0 0 0
ln -s :0000128 tree/dentry
ln -s ../tree/:0000128 tree/inode_cache

# rows FILE: the cache names of a table, in order.
rows() { awk 'NR > 1 {print $1}' "$1" | tr '\n' ' '; }

"$slabinfo" -d tree >out.txt
head -1 out.txt | grep -q '^Name  *Objects Objsize  *Space Slabs/Part/Cpu  O/S O %Fr %Ef Flg$' ||
  fail "header: $(head -1 out.txt)"
[ "$(rows out.txt)" = ":0000128 big_cache kmalloc-64 " ] || fail "default rows: $(rows out.txt)"
# 3 slabs of 4 KiB, 1 partial, 1 CPU slab, 64 per slab, 100 * 64 of 12288 bytes used.
grep -Eq '^kmalloc-64 +100 +64 +12.2K +2/1/1 +64 0 +33 +52 *$' out.txt ||
  fail "kmalloc-64 line: $(grep kmalloc-64 out.txt)"
grep -Eq '^:0000128 +40 +128 +8.1K +1/0/1 +32 0 +0 +62 \*$' out.txt ||
  fail "merged cache line: $(grep :0000128 out.txt)"
"$slabinfo" -d tree -B >out.txt
grep -Eq '^big_cache +2000 +1024 +3276800 ' out.txt || fail "-B: $(grep big_cache out.txt)"
"$slabinfo" -d tree -z >out.txt
grep -q '^empty_cache ' out.txt || fail "-z shows no empty cache"
"$slabinfo" -d tree -e >out.txt
[ "$(rows out.txt)" = "empty_cache " ] || fail "-e rows: $(rows out.txt)"

# Sorting and lines.
"$slabinfo" -d tree -S >out.txt
[ "$(rows out.txt)" = "big_cache kmalloc-64 :0000128 " ] || fail "-S rows: $(rows out.txt)"
"$slabinfo" -d tree -S -i >out.txt
[ "$(rows out.txt)" = ":0000128 kmalloc-64 big_cache " ] || fail "-S -i rows: $(rows out.txt)"
"$slabinfo" -d tree -S -N 1 >out.txt
[ "$(rows out.txt)" = "big_cache " ] || fail "-N 1 rows: $(rows out.txt)"
"$slabinfo" -d tree kmalloc >out.txt
grep -q '^Slabcache: kmalloc-64 ' out.txt || fail "one cache matched: no report: $(head -3 out.txt)"

# Aliases, totals, the report.
"$slabinfo" -d tree -a >out.txt
grep -Eq '^:0000128 +<- dentry inode_cache$' out.txt || fail "-a: $(cat out.txt)"
"$slabinfo" -d tree -T >out.txt
grep -Eq '^Slabcaches : +4 +Aliases  : +2->1 +Active: +3$' out.txt || fail "-T: $(head -4 out.txt)"
grep -Eq '^#Objects +713 +40 +2.0K +2.1K$' out.txt || fail "-T objects: $(grep Objects out.txt)"
"$slabinfo" -d tree -r big >out.txt
grep -q '^Slabcache: big_cache .*Objects: 2000' out.txt || fail "-r: $(head -3 out.txt)"
grep -q 'No statistics counters' out.txt || fail "-r does not say the counters are absent"

printf '    100 main+0x1/0x2 age=1/1/1 pid=1 cpus=0\n' >tree/kmalloc-64/alloc_calls
"$slabinfo" -d tree -t kmalloc >out.txt
grep -q '^kmalloc-64: Kernel object allocation' out.txt && grep -q '100 main+0x1/0x2' out.txt ||
  fail "-t shows no alloc_calls: $(cat out.txt)"
[ "$(grep -c '^No Data' out.txt)" = 1 ] || fail "-t: free_calls absent is not 'No Data'"
"$slabinfo" -d tree -D >out.txt
grep -q '^(no statistics counters in this tree' out.txt || fail "-D does not say the counters are absent"
echo '5000 C0=5000' >tree/big_cache/alloc_fastpath; echo '10 C0=10' >tree/big_cache/alloc_slowpath
"$slabinfo" -d tree -D >out.txt
grep -Eq '^big_cache +2000 +5010 +0 +99 ' out.txt || fail "-D with counters: $(grep big_cache out.txt)"
rm tree/big_cache/alloc_fastpath tree/big_cache/alloc_slowpath

# --json: valid, every attribute, numbers as numbers.
"$slabinfo" -d tree --json >out.json
python3 -c '
import json, sys
caches = {c["name"]: c for c in json.load(open(sys.argv[1]))}
assert set(caches) == {":0000128", "big_cache", "kmalloc-64", "empty_cache"}, caches.keys()
k = caches["kmalloc-64"]["attributes"]
assert k["object_size"] == 64 and k["objects"] == "100 N0=100" and k["shrink"] == "", k
assert sorted(caches[":0000128"]["alias_names"]) == ["dentry", "inode_cache"]
' out.json || fail "--json: $(head -c 400 out.json)"

# Writes.
"$slabinfo" -d tree -s kmalloc >/dev/null
[ "$(cat tree/kmalloc-64/shrink)" = 1 ] || fail "-s wrote no 1 to shrink"
# -v writes to the caches with debug flags and names the others, skipped
# (the kernel refuses validate without them).
echo 1 >tree/big_cache/sanity_checks
"$slabinfo" -d tree -v 'big|kmalloc' >out.txt || fail "-v: $(cat out.txt)"
[ "$(cat tree/big_cache/validate)" = 1 ] || fail "-v wrote no 1 to validate"
[ ! -s tree/kmalloc-64/validate ] || fail "-v wrote to a cache without debug flags"
grep -q '^Validated 1 cache (problems go to' out.txt &&
  grep -q '^Skipped 1 without debug flags (validate needs slub_debug): kmalloc-64$' out.txt ||
  fail "-v: $(cat out.txt)"

# Bad options, a missing tree, -p of a process without the agent.
st=0; "$slabinfo" -Q -d tree >out.txt 2>err.txt || st=$?
[ "$st" = 2 ] && grep -q 'unknown option -Q' err.txt || fail "-Q: status $st, $(cat err.txt)"
st=0; "$slabinfo" -d tree -N x 2>err.txt || st=$?
[ "$st" = 2 ] && grep -q -- '-N needs a number' err.txt || fail "-N x: status $st, $(cat err.txt)"
st=0; "$slabinfo" -d "$work/none" 2>err.txt || st=$?
[ "$st" = 1 ] && grep -q "cannot open $work/none" err.txt || fail "missing dir: status $st, $(cat err.txt)"
st=0; XDG_RUNTIME_DIR=$work "$slabinfo" -p 1 2>err.txt || st=$?
[ "$st" = 1 ] && grep -q 'pid 1 has no libslub agent' err.txt || fail "-p 1: status $st, $(cat err.txt)"
st=0; "$slabinfo" -d tree --watch 1 2>err.txt || st=$?
[ "$st" = 2 ] && grep -q -- '--watch needs -p PID' err.txt || fail "--watch: status $st, $(cat err.txt)"
st=0; "$slabinfo" -d tree '(' 2>err.txt || st=$?
[ "$st" = 2 ] && grep -q 'invalid pattern' err.txt || fail "bad regex: status $st, $(cat err.txt)"
st=0; "$slabinfo" -d tree -S -L 2>err.txt || st=$?
[ "$st" = 2 ] || fail "-S -L: status $st"
"$slabinfo" --help | grep -q '^usage: slabinfo' || fail "--help"
"$slabinfo" --version | grep -q '^slabinfo (libslub) [0-9]' || fail "--version"

# The real kernel's tree.
if [ -r /sys/kernel/slab ] && [ -r "$(ls -d /sys/kernel/slab/*/ 2>/dev/null | head -1)objects" ]; then
  "$slabinfo" -T >out.txt || fail "-T on /sys/kernel/slab failed"
  grep -q '^Slabcache Totals' out.txt || fail "-T on /sys/kernel/slab: $(head -3 out.txt)"
  "$slabinfo" -a >out.txt || fail "-a on /sys/kernel/slab failed"
  grep -q ' <- ' out.txt || echo "test_slabinfo: note: no merged caches in /sys/kernel/slab"
  echo "test_slabinfo: /sys/kernel/slab read ($(ls /sys/kernel/slab | wc -l) entries)"
else
  echo "test_slabinfo: skipped /sys/kernel/slab: not readable here (no SLUB sysfs, or not root)"
fi
echo "test_slabinfo: ok"
