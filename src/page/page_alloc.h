/* SPDX-License-Identifier: MIT */
/*
 * page_alloc.h - the buddy page allocator: nodes, zones, free areas.
 *
 * Each zone keeps, per order 0..MAX_PAGE_ORDER, two free lists: `dirty`
 * blocks (freed by a user, probably resident, reused first: no page faults)
 * and `clean` blocks (fresh from the OS or decommitted: zero and not
 * resident, preferred for __GFP_ZERO since they skip the memset).
 * A block is clean only if all of it is: splitting keeps the state, merging
 * a clean block with a dirty one gives a dirty one.
 *
 * Decay: a dirty block of order >= slub_decommit_order free for longer than
 * slub_decay_ms is decommitted (MADV_DONTNEED) and becomes clean.  Dirty
 * bound: past the pages in use / slub_dirty_ratio, dirty blocks of any
 * order idle for a few ms are decommitted too (zone_bound_dirty()).  The
 * checks run on the allocator's own calls, and with slub_decay_thread=1
 * on a thread's too (decay_thread.c), outside the zone lock for the system
 * calls.  slub_reclaim() decommits every dirty block.
 *
 * Orders 0..PCP_MAX_ORDER pass through per-CPU lists first (pcp.h).
 *
 * Lock order: pcp->lock, then zone->lock, then region_lock (memmap.c, when
 * a zone grows).  pcp locks are only ever tried, never waited for, on the
 * allocation paths.
 */
#ifndef SLUB_PAGE_ALLOC_H
#define SLUB_PAGE_ALLOC_H

#include <pthread.h>

#include "base/numa.h"
#include "page/memmap.h"

enum zone_type { ZONE_DMA32, ZONE_NORMAL, MAX_NR_ZONES };

struct free_area {
	struct list_head dirty;	/* most recently freed first */
	struct list_head clean;
	unsigned long nr_free;	/* blocks on both lists */
};

struct zone {
	pthread_mutex_t lock;
	struct free_area free_area[MAX_PAGE_ORDER + 1];
	unsigned long managed_pages;	/* data pages carved into the lists so far */
	unsigned long free_pages;	/* on the free lists */
	unsigned long dirty_pages;	/* free but possibly resident */
	unsigned long decayable_pages;	/* dirty, in blocks >= decommit order */
	unsigned long isolated_pages;	/* off the lists while being decommitted */
	uint64_t next_decay_ms;
	uint64_t next_bound_ms;		/* next look at the dirty bound */
	/* The most pages in use in this decay period and the last (zone_bound_dirty()). */
	unsigned long peak_in_use, last_peak_in_use;
	uint64_t peak_since_ms;		/* when this period began */
	struct mem_region *sections;
	const char *name;
	int node;
	enum zone_type type;
	uint64_t full_until_ms;		/* DMA32 range found full: no search before */
};

struct pglist_data {
	struct zone node_zones[MAX_NR_ZONES];
	int node_id;
};

extern __hidden struct pglist_data page_alloc_nodes[MAX_NUMNODES];

/*
 * Every zone of every node in use (declares @z): two loops, since a node's
 * zones are not followed by the next node's.  No break in the body.
 */
#define for_each_zone(z)                                                      \
	for (unsigned int nid_ = 0; nid_ < nr_node_ids; nid_++)               \
		for (struct zone *z = page_alloc_nodes[nid_].node_zones;      \
		     z < page_alloc_nodes[nid_].node_zones + MAX_NR_ZONES; z++)

/* Statistics that do not belong to one zone. */
struct page_alloc_stats {
	unsigned long large_allocs;	/* live large-region allocations */
	unsigned long large_pages;
	unsigned long decommitted_pages;	/* total given back: decay, bound or reclaim */
	unsigned long bound_pages;	/* of those, by the dirty bound */
	unsigned long extents;		/* live extents (alloc_pages_extent) */
	unsigned long extent_pages;
	unsigned long idle_extents;	/* of those, mappings freed and kept for reuse (malloc) */
	unsigned long idle_extent_pages;
	/*
	 * Of those, freed buddy extents in malloc's bins, one word per bin
	 * (count << 32 | pages), written only by the holder of its bin's lock:
	 * a plain store, no locked add on the free and malloc of a block.
	 */
	unsigned long binned[MAX_PAGE_ORDER + 1];
	/*
	 * A hint: malloc may keep an extent in a CPU's slot (set by a put
	 * that finds it off, cleared when a walk finds every slot empty).
	 */
	unsigned long pcp_extents_kept;
	unsigned long remapped_extents;	/* moved by remap_pages_extent() (totals) */
	unsigned long remapped_pages;
	unsigned long split_extents;	/* made by split_pages_extent() (totals) */
	unsigned long split_pages;
	/* Regions given a node's placement (os_bind_node), and those the OS refused. */
	unsigned long bound_regions;
	unsigned long bind_failures;
};
extern __hidden struct page_alloc_stats page_alloc_stats;

/* Largest order served at all (from direct mappings above MAX_PAGE_ORDER). */
#define MAX_LARGE_ORDER 30	/* 4 TiB */
/*
 * Internal gfp bit: no injected failure (fail_page_alloc), yet free to fail
 * for real.  The slab layer's own caches ask for it; __GFP_NOFAIL would
 * retry for ever (alloc_pages_node).
 */
#define __GFP_NOINJECT 0x80000000u

/*
 * Inside the page allocator (page_alloc.c, pcp.c): take a block from the
 * buddy lists, growing the zone if needed, or give one back (merging, then
 * the dirty bound and the decay if due; @page NULL: only those).  Zone lock held.  *zero:
 * the block is known zero.
 */
__hidden struct page *zone_take_locked(struct zone *z, unsigned int order, bool want_zero,
				       bool *zero);
__hidden void zone_give_locked(struct zone *z, struct page *page, unsigned int order,
			       bool zero, uint64_t now);

/*
 * Extents: @nr pages exactly (alloc_pages_exact, without the power-of-two
 * rounding), at an address aligned to @align (a power of two; page
 * alignment below a page).  Up to MAX_PAGE_ORDER the extent is a run of
 * buddy blocks, each with its head written and its tails left zero (only the
 * extent's start is ever looked up: PG_headonly), and what rounding up took
 * is given back at once; above, a mapping of its own, @nr pages long.
 * free_pages_extent() needs the same @nr.  NULL + ENOMEM on failure.
 */
__hidden struct page *alloc_pages_extent(gfp_t gfp, unsigned long nr, unsigned long align);
__hidden void free_pages_extent(struct page *page, unsigned long nr);
/* Free an extent and give its pages back to the OS now (they go back clean). */
__hidden void release_pages_extent(struct page *page, unsigned long nr);
/*
 * Resize an extent from @nr to @new_nr pages where it lies, if it can be:
 * one with a mapping of its own grows into the address space its region
 * reserved (whole 64 MiB slots) and shrinks by giving its tail back; a
 * buddy extent grows into free blocks after it, up to MAX_ORDER_NR_PAGES,
 * and shrinks by giving its tail to the buddy lists.  False: the caller
 * copies.
 */
__hidden bool resize_pages_extent(struct page *page, unsigned long nr, unsigned long new_nr);
/*
 * Grow an extent with a mapping of its own that resize_pages_extent()
 * cannot grow in place: its pages move to a new region of @new_nr pages
 * (mremap: page tables move, no byte is copied, as glibc's realloc of an
 * mmapped chunk).  Returns the new head, the old one now invalid; NULL if
 * it cannot (a buddy extent, DMA32, no memory), the extent untouched.
 */
__hidden struct page *remap_pages_extent(struct page *page, unsigned long nr,
					 unsigned long new_nr);
/*
 * Split the last @take pages off an extent with a mapping of its own of
 * @nr pages: they move (mremap, no byte copied, no page faulted again) to a
 * new region as an extent of @take pages, whose head is returned; the old
 * extent keeps its first @nr - @take pages.  NULL if it cannot (a buddy
 * extent, DMA32, no memory, @take not below @nr), both untouched.
 */
__hidden struct page *split_pages_extent(struct page *page, unsigned long nr,
					 unsigned long take);
/*
 * The malloc library's look at each page-level allocation while it holds
 * freed mappings or extents (weak: nothing in libslub.so).  @fresh: pages of the block
 * that were never touched or were given back, which the program is about to
 * make resident.
 */
__hidden void slub_malloc_pages_taken(unsigned long fresh);

/* page_alloc_stats.binned[]: what one extent of @nr pages adds, and the halves of a sum. */
#define BINNED_ONE(nr)		((1UL << 32) + (nr))
#define BINNED_COUNT(sum)	((sum) >> 32)
#define BINNED_PAGES(sum)	((sum) & 0xffffffffUL)
/* The bins' count << 32 | pages.  No half overflows: 64 entries a bin, 64 MiB in all. */
static inline unsigned long binned_sum(void)
{
	unsigned long sum = 0;
	for (int o = 0; o <= MAX_PAGE_ORDER; o++)
		sum += READ_ONCE(page_alloc_stats.binned[o]);
	return sum;
}
/*
 * The malloc library's extents kept one per CPU, as count << 32 | pages
 * (weak: none in libslub.so).  A walk of the CPUs: for figures, not for
 * every free.
 */
__hidden unsigned long slub_malloc_pcp_kept(void);
/* Kept for reuse, in the bins and per CPU, as count << 32 | pages: one walk. */
static inline unsigned long binned_kept(void)
{
	return binned_sum() + slub_malloc_pcp_kept();
}

/*
 * May the malloc library keep freed extents (mappings, buddy extents)?
 * Asked at every buddy allocation: no walk of the CPUs' slots, their hint.
 */
static inline bool slub_malloc_keeps_extents(void)
{
	return READ_ONCE(page_alloc_stats.idle_extents) | binned_sum() |
	       READ_ONCE(page_alloc_stats.pcp_extents_kept);
}

/* Return every per-CPU list's pages to the buddy lists. */
__hidden void page_alloc_drain_pcp(void);

/*
 * Start-up (the zones) and fork() (its locks) are registered with base
 * (slub_initcall(), base/start.h).
 */

/*
 * Walk every free list and every descriptor of every zone; report each
 * inconsistency and return their number (0: consistent).  Call it with no
 * allocation or free in flight: a block being freed, or a slab being made,
 * is briefly in no state it checks.
 */
__hidden unsigned long page_alloc_validate(void);
/*
 * Call @fn for the head of every allocated block of the sections (not the
 * large regions), under each zone's lock: @fn must not allocate.  For
 * walks that no list serves, such as a cache's full slabs at destroy.
 */
__hidden void page_for_each_block(void (*fn)(struct page *head, void *arg), void *arg);
/* The same for the heads of large regions (above 4 MiB): exit-time walks only. */
__hidden void page_for_each_large(void (*fn)(struct page *head, void *arg), void *arg);

/* Snapshot of free block counts per order, for buddyinfo and tests. */
/*
 * Free pages the allocator may still have resident: dirty blocks on the
 * buddy lists and pages on the per-CPU lists (what the decay or
 * slub_reclaim() would give back).
 */
__hidden unsigned long page_alloc_resident_free_pages(void);
__hidden void page_alloc_buddyinfo(int nid, enum zone_type zt,
				   unsigned long nr_free[MAX_PAGE_ORDER + 1],
				   unsigned long *managed);

/*
 * The decay thread's look at every zone (decay_thread.c): the dirty bound
 * and the decay, as a free runs them, and each CPU's page list that saw no
 * allocation or free for a decay period emptied into its zone (where the
 * decay or the bound can take its pages).  Says what is left for it.
 */
enum idle_work {
	IDLE_NOTHING,		/* nothing it could give back */
	IDLE_LATER,		/* pages on per-CPU lists, not yet quiet long enough */
	IDLE_DECAY_SOON,	/* blocks wait for the decay */
};
__hidden enum idle_work page_alloc_idle_tick(uint64_t now_ms);

/* Run the decay now as if @now_ms had come (tests use it to avoid sleeps). */
__hidden unsigned long page_alloc_decay(uint64_t now_ms);

#endif
