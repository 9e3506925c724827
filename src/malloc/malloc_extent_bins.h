/* SPDX-License-Identifier: MIT */
/*
 * malloc_extent_bins.h - freed buddy extents (up to 4 MiB) kept whole for
 * the next malloc of their size (malloc_extent_bins.c).
 */
#ifndef SLUB_MALLOC_EXTENT_BINS_H
#define SLUB_MALLOC_EXTENT_BINS_H

#include "page/page_alloc.h"

/* All bins together hold at most this many pages (64 MiB). */
#define EXTENT_BINS_MAX_PAGES (64UL << (20 - PAGE_SHIFT))
/* Entries per bin (one bin per order of the extent's page count). */
#define EXTENT_BIN_SLOTS 64

/*
 * Keep the freed buddy extent at @page (@nr pages, PG_extent already
 * cleared) for reuse; false: full, busy or not wanted, the caller frees it.
 */
__hidden bool extent_bins_put(struct page *page, unsigned long nr, uint64_t now_ms);
/*
 * A kept extent of @nr pages, or else the smallest larger one the bins
 * have (*@have: its pages, for the caller to cut), or NULL.  Its pages are
 * as the last owner left them (dirty).
 */
__hidden struct page *extent_bins_take(unsigned long nr, unsigned long *have);
/*
 * No kept extent in the bins falls due for the decay before this (ms); the
 * second: when the CPUs' slots need a walk of the decay (to stamp or give
 * back).  UINT64_MAX: none kept.  Apart, so that a free into a slot can
 * tell that the bins keep nothing.
 */
extern __hidden uint64_t extent_bins_due_ms, extent_slots_due_ms;
__hidden void extent_due_slow(uint64_t *due, uint64_t when);
__hidden void extent_bins_expire_slow(uint64_t now_ms);

/* Lower the due time @due (either of the two) to @when (ms), if it is later. */
static inline void extent_due(uint64_t *due, uint64_t when)
{
	if (when < __atomic_load_n(due, __ATOMIC_RELAXED))
		extent_due_slow(due, when);
}
/* Give back what has waited a decay period by @now_ms, in the bins and the CPUs' slots. */
static inline void extent_bins_expire(uint64_t now_ms)
{
	if (unlikely(now_ms >= __atomic_load_n(&extent_bins_due_ms, __ATOMIC_RELAXED) ||
		     now_ms >= __atomic_load_n(&extent_slots_due_ms, __ATOMIC_RELAXED)))
		extent_bins_expire_slow(now_ms);
}
/*
 * Give back kept extents, this CPU's and then the bins' oldest first,
 * until @pages pages went (ULONG_MAX: all, every CPU's too).
 */
__hidden void extent_bins_drain(unsigned long pages);
/* Is @p the start of an extent a bin or a CPU keeps (a free of it is a double free)? */
__hidden bool extent_bins_hold(const void *p);

#endif
