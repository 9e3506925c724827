#!/bin/bash
# SPDX-License-Identifier: MIT
# kernel_slab_snapshot.sh [DIR] - one line per cache of a kernel's
# /sys/kernel/slab (or DIR, a copy): what it was created with and the
# geometry the kernel gave it, for test_kernel_geometry to replay.
# Aliases (symlinks) are skipped: they share their target's geometry.
set -eu
root=${1:-/sys/kernel/slab}
read1() { cat "$root/$1/$2" 2>/dev/null | head -n1 | cut -d' ' -f1; }
echo "# kernel $(uname -r), $(nproc --all) CPUs; taken $(date -u +%F) from $root"
echo "# name object_size align flags usersize | slab_size order objs_per_slab min_partial"
echo "# flags: h hwcache_align, a reclaim_account, d cache_dma, r destroy_by_rcu, c ctor, - none"
for d in "$root"/*; do
	[ -L "$d" ] && continue
	[ -d "$d" ] || continue
	n=$(basename "$d")
	f=
	[ "$(read1 "$n" hwcache_align)" = 1 ] && f+=h
	[ "$(read1 "$n" reclaim_account)" = 1 ] && f+=a
	[ "$(read1 "$n" cache_dma)" = 1 ] && f+=d
	[ "$(read1 "$n" destroy_by_rcu)" = 1 ] && f+=r
	[ -n "$(read1 "$n" ctor)" ] && f+=c
	for dbg in sanity_checks red_zone poison store_user trace; do
		[ "$(read1 "$n" $dbg)" = 1 ] && { echo "$n: $dbg is on; take the snapshot without slub_debug" >&2; exit 1; }
	done
	echo "$n $(read1 "$n" object_size) $(read1 "$n" align) ${f:--} $(read1 "$n" usersize) | $(read1 "$n" slab_size) $(read1 "$n" order) $(read1 "$n" objs_per_slab) $(read1 "$n" min_partial)"
done
