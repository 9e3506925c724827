// SPDX-License-Identifier: MIT
/*
 * malloc_extents.c - malloc's blocks above 8 KiB: page extents of exactly
 * the pages asked for (alloc_pages_extent), the first descriptor marked
 * PG_extent with the page count, found from the pointer through the memory
 * map.  Up to 4 MiB they are runs of buddy blocks; above, mappings of
 * their own, which realloc resizes in place and which a small cache of
 * recently freed ones saves from being unmapped and faulted in again when
 * a program frees a big buffer and asks for big buffers again.  Freed
 * buddy extents wait for the next malloc of their size, not merged into
 * the buddy lists: one per CPU (malloc_extent_pcp.h), the rest in bins
 * (malloc_extent_bins.c).
 */
#define _GNU_SOURCE
#include "malloc/malloc_extents.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

#include "page/decay_thread.h"
#include "base/start.h"
#include "base/options.h"
#include "page/page_alloc.h"
#include "base/report.h"
#include "malloc/malloc_classes.h"
#include "malloc/malloc_debug.h"
#include "malloc/malloc_extent_bins.h"
#include "malloc/malloc_extent_pcp.h"

/*
 * The cache: a few freed mappings, 128 MiB at most, each in a slot taken
 * and filled with atomic exchanges (no lock, so nothing for fork() to worry
 * about).  A later block is cut from the one that fits best, its pages
 * moved, not faulted in again: sort frees its 64 MiB buffer and asks for
 * three of 21 MiB.  The cache never raises the peak: whenever the process
 * takes fresh pages from the page allocator, the cache gives back as many
 * first (slub_malloc_pages_taken).  An entry older than slub_decay_ms is
 * unmapped at the next page-level call, as the page allocator's decay gives
 * back buddy pages, or by the decay thread when the program sleeps.
 */
#define EXTENT_CACHE_SLOTS 4
#define EXTENT_CACHE_MAX_PAGES (128UL << (20 - PAGE_SHIFT))	/* all entries together */

static struct page *extent_cache[EXTENT_CACHE_SLOTS];
static uint64_t extent_cache_when[EXTENT_CACHE_SLOTS];
/* Each slot's pages when it was filled: a hint (its entry may be gone since). */
static unsigned long extent_cache_pages[EXTENT_CACHE_SLOTS];

static unsigned long pages_for(size_t size)
{
	return (size + PAGE_SIZE - 1) >> PAGE_SHIFT;
}

/*
 * The last time an extent call read the clock (ms): a slot's extent, kept
 * without a read, falls due no sooner than a decay period after it.
 */
static uint64_t extent_clock_ms;

static inline __attribute__((always_inline)) uint64_t extent_clock(void)
{
	uint64_t now = os_now_ms();
	if (now != __atomic_load_n(&extent_clock_ms, __ATOMIC_RELAXED))
		__atomic_store_n(&extent_clock_ms, now, __ATOMIC_RELAXED);
	return now;
}

static void extent_release(struct page *page)
{
	free_pages_extent(page, page->nr_extent_pages);
}

/*
 * Give a freed buddy extent back to the OS at once?  As glibc unmaps a
 * chunk above its mmap threshold, and raises the threshold to that chunk's
 * size: a buffer used once (git pack-objects' 4 MiB) does not stay resident
 * for the decay, while blocks of a size freed before are kept, since a
 * program that frees one such block will likely ask for another (no page
 * faults).  Mappings go to the cache instead, which gives them back before
 * the process takes fresh pages, so they cost no peak.
 */
#define RELEASE_MIN_PAGES ((128UL << 10) >> PAGE_SHIFT)	/* glibc's first threshold */
#define RELEASE_MAX_PAGES (32UL << (20 - PAGE_SHIFT))	/* and its highest */
static unsigned long release_threshold = RELEASE_MIN_PAGES;

/*
 * calloc of a buddy extent of a size release_now() would give back: the
 * kernel's zero pages (one madvise), as glibc's calloc gets from a fresh
 * mapping above its threshold, not a memset.  A free block is dirty as a
 * whole once any part of it was (buddies merge), so a memset would make
 * every page resident, and a program rarely touches all of a big table it
 * callocs (git status: 512 KiB of hash table, 128 page faults and 512 KiB
 * of RSS that glibc never spends).  Sizes freed before stay memset, as in
 * glibc once its threshold rose: a buffer callocked again and again is
 * used whole, and refaulting it would cost more than clearing it.
 */
static bool release_now_would(unsigned long nr)
{
	return nr >= __atomic_load_n(&release_threshold, __ATOMIC_RELAXED);
}

static bool release_now(unsigned long nr)
{
	if (!release_now_would(nr))
		return false;
	if (nr < RELEASE_MAX_PAGES)
		atomic_max_ulong(&release_threshold, nr + 1);
	return true;
}

/* Count @page in or out of the idle figures (the cache's own, and the stats'). */
static void idle_account(struct page *page, long sign)
{
	unsigned long nr = page->nr_extent_pages * (unsigned long)sign;
	__atomic_add_fetch(&page_alloc_stats.idle_extents, (unsigned long)sign, __ATOMIC_RELAXED);
	__atomic_add_fetch(&page_alloc_stats.idle_extent_pages, nr, __ATOMIC_RELAXED);
}

/* Empty slot @i: its mapping, no longer counted idle, or NULL. */
static struct page *extent_cache_slot_take(int i)
{
	if (!READ_ONCE(extent_cache[i]))
		return NULL;
	struct page *page = __atomic_exchange_n(&extent_cache[i], NULL, __ATOMIC_ACQ_REL);
	if (page)
		idle_account(page, -1);
	return page;
}

static void extent_cache_expire(uint64_t now)
{
	uint64_t decay = (uint64_t)slub_opt(decay_ms);
	for (int i = 0; i < EXTENT_CACHE_SLOTS; i++) {
		if (now < READ_ONCE(extent_cache_when[i]) + decay)
			continue;
		struct page *page = extent_cache_slot_take(i);
		if (page)
			extent_release(page);
	}
}

static bool extent_cache_put(struct page *page, uint64_t when)
{
	unsigned long nr = page->nr_extent_pages;
	/*
	 * Not under a limit on address space (ulimit -v): what the cache
	 * holds counts there, and giving back memory gives back none of it.
	 */
	if (!memmap_in_large_region(page) ||
	    READ_ONCE(page_alloc_stats.idle_extent_pages) + nr > EXTENT_CACHE_MAX_PAGES ||
	    os_address_space_limited())
		return false;	/* racing puts may pass this together: a bound, not a limit */
	idle_account(page, 1);	/* before it is visible: whoever takes it un-counts it */
	for (int i = 0; i < EXTENT_CACHE_SLOTS; i++) {
		struct page *empty = NULL;
		if (__atomic_compare_exchange_n(&extent_cache[i], &empty, page, false,
						__ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
			/* An expiry that sees the old time only unmaps it early. */
			WRITE_ONCE(extent_cache_when[i], when);
			WRITE_ONCE(extent_cache_pages[i], nr);
			return true;
		}
	}
	idle_account(page, -1);
	return false;
}

/* Back into the cache, or unmapped if it no longer fits there. */
static void extent_cache_return(struct page *page, uint64_t when)
{
	if (!extent_cache_put(page, when))
		extent_release(page);
}

/*
 * The slot to serve @nr pages from: the smallest entry that holds them,
 * else the largest (grown).  -1: none.
 */
static int extent_cache_pick(unsigned long nr)
{
	int fit = -1, largest = -1;
	unsigned long fit_nr = 0, largest_nr = 0;
	for (int i = 0; i < EXTENT_CACHE_SLOTS; i++) {
		if (!READ_ONCE(extent_cache[i]))
			continue;
		unsigned long n = READ_ONCE(extent_cache_pages[i]);
		if (n >= nr && (fit < 0 || n < fit_nr))
			fit = i, fit_nr = n;
		if (largest < 0 || n > largest_nr)
			largest = i, largest_nr = n;
	}
	return fit >= 0 ? fit : largest;
}

/*
 * A cached mapping made @nr pages long, or NULL; *@dirty: how many of its
 * first pages were written before (what grows it comes zero).  A bigger
 * one keeps its head for the block and its tail moves on, cached, when that
 * is still a mapping's size; else it shrinks.  A smaller one grows in
 * place, or moves to a bigger mapping.
 */
static struct page *extent_cache_take(unsigned long nr, unsigned long *dirty)
{
	struct page *page = NULL;
	uint64_t when = 0;
	/* Another thread may take the slot picked first: pick again. */
	for (int tries = 0; !page && tries < EXTENT_CACHE_SLOTS; tries++) {
		int i = extent_cache_pick(nr);
		if (i < 0)
			return NULL;
		when = READ_ONCE(extent_cache_when[i]);
		page = extent_cache_slot_take(i);
	}
	if (!page)
		return NULL;
	unsigned long have = page->nr_extent_pages;
	*dirty = have < nr ? have : nr;
	if (have > nr + MAX_ORDER_NR_PAGES) {
		struct page *rest = split_pages_extent(page, have, have - nr);
		if (rest) {
			rest->nr_extent_pages = have - nr;
			extent_cache_return(rest, when);
			page->nr_extent_pages = nr;
			return page;
		}
	}
	if (have < nr)
		slub_malloc_pages_taken(nr - have);	/* the rest of the cache pays for growing */
	if (resize_pages_extent(page, have, nr)) {
		page->nr_extent_pages = nr;
		return page;
	}
	struct page *moved = have < nr ? remap_pages_extent(page, have, nr) : NULL;
	if (moved) {
		moved->nr_extent_pages = nr;
		return moved;
	}
	extent_release(page);
	return NULL;
}

/*
 * The page allocator's call while the cache holds mappings: age them, and
 * give back at least @fresh resident pages, as many as the program is about
 * to make resident elsewhere, so that the cache never adds to the peak.
 * Resident ones, counted (mincore), not pages: a buffer used in part keeps
 * its used head resident, and cutting its untouched tail gives back nothing.
 * No more than that: more would be faulted in again by the next big block.
 */
void slub_malloc_pages_taken(unsigned long fresh)
{
	int saved_errno = errno;
	uint64_t now = extent_clock();
	extent_bins_expire(now);
	if (fresh && (binned_sum() || READ_ONCE(page_alloc_stats.pcp_extents_kept)))
		extent_bins_drain(fresh);	/* to the buddy lists: the next blocks come from them */
	extent_cache_expire(now);
	for (int i = 0; i < EXTENT_CACHE_SLOTS && fresh; i++) {
		uint64_t when = READ_ONCE(extent_cache_when[i]);
		struct page *page = extent_cache_slot_take(i);
		if (!page)
			continue;
		unsigned long have = page->nr_extent_pages, found;
		unsigned long cut = os_resident_cut(memmap_page_address(page), have, fresh, &found);
		if (cut > MAX_ORDER_NR_PAGES && resize_pages_extent(page, have, cut)) {
			page->nr_extent_pages = cut;
			extent_cache_return(page, when);
			break;
		}
		extent_release(page);	/* all of it: at least @found resident pages */
		fresh = fresh > found ? fresh - found : 0;
	}
	errno = saved_errno;
}

/* The decay thread's look: cached mappings age out while the program sleeps too. */
bool slub_malloc_idle_tick(uint64_t now_ms)
{
	if (READ_ONCE(page_alloc_stats.idle_extents))
		extent_cache_expire(now_ms);
	/*
	 * The slots' own look (a put racing the bins' expiry may have left no
	 * due time, and the hint off: its commit and its loads may pass each
	 * other): due now, so that the one walk of the expiry covers them.
	 */
	if (READ_ONCE(page_alloc_stats.pcp_extents_kept) || slub_malloc_pcp_kept())
		extent_due(&extent_slots_due_ms, now_ms);
	extent_bins_expire(now_ms);
	return READ_ONCE(page_alloc_stats.idle_extents) || binned_sum() || slub_malloc_pcp_kept();
}

void extent_cache_drain(void)
{
	extent_bins_drain(ULONG_MAX);
	for (int i = 0; i < EXTENT_CACHE_SLOTS; i++) {
		struct page *page = extent_cache_slot_take(i);
		if (page)
			extent_release(page);
	}
}

/* An extent of @nr pages kept by this CPU or the bins, made the caller's; or NULL. */
static inline __attribute__((always_inline)) void *take_kept(unsigned long nr)
{
	unsigned long have = nr;
	struct page *page = extent_pcp_take(nr);
	if (!page)
		page = extent_bins_take(nr, &have);
	if (!page)
		return NULL;
	/* A larger one: its tail to the buddy lists (an extent is the pages asked for). */
	if (have > nr && resize_pages_extent(page, have, nr))
		have = nr;
	page->nr_extent_pages = have;
	/* No other writer: a plain store, not a locked or. */
	__atomic_store_n(&page->flags, page_flags(page) | PG_extent, __ATOMIC_RELEASE);
	return memmap_page_address(page);
}

static __noinline void *alloc_fresh(size_t size, size_t align, gfp_t gfp);

/*
 * take_kept() for a calloc, out of line (rare): the whole extent cleared,
 * since a larger one whose cut failed stays whole and malloc_usable_size()
 * says so.
 */
static __noinline void *take_kept_cleared(unsigned long nr)
{
	void *p = take_kept(nr);
	if (p)
		memset(p, 0, memmap_virt_to_page(p)->nr_extent_pages << PAGE_SHIFT);
	return p;
}

/* Inlined in both callers: a large block's malloc is mostly this CPU's kept extent. */
static inline __attribute__((always_inline)) void *alloc_block(size_t size, size_t align, gfp_t gfp)
{
	if (likely(size <= MAX_ORDER_NR_PAGES << PAGE_SHIFT && align <= PAGE_SIZE)) {
		unsigned long nr = pages_for(size);
		if (likely(!(gfp & __GFP_ZERO)))
			return take_kept(nr) ?: alloc_fresh(size, align, gfp);
		/*
		 * A calloc of a size freed before (below the release threshold)
		 * clears a kept extent, as glibc clears a reused chunk: its
		 * pages are resident already, where fresh ones would be faulted
		 * in while the kept ones stay (git log's 222 callocs added 3 MiB
		 * to its peak).  Larger ones take the kernel's zero pages below.
		 */
		if (!release_now_would(nr)) {
			void *p = take_kept_cleared(nr);
			if (p)
				return p;
		}
	}
	return alloc_fresh(size, align, gfp);
}

void *extent_alloc(size_t size, size_t align, gfp_t gfp)
{
	/* slub_debug for malloc-large: a header, red zones, tracks (malloc_debug.c). */
	if (unlikely(extent_debug_flags()) && align <= PAGE_SIZE)
		return debug_extent_alloc(size, align, gfp);
	return alloc_block(size, align, gfp);
}

void *extent_alloc_pages(size_t size, size_t align, gfp_t gfp)
{
	return alloc_block(size, align, gfp);
}

static void *alloc_fresh(size_t size, size_t align, gfp_t gfp)
{
	if (unlikely(size > PTRDIFF_MAX - PAGE_SIZE)) {
		errno = ENOMEM;
		return NULL;
	}
	unsigned long nr = pages_for(size);
	struct page *page = NULL;
	/* Every extent call ages the cache: it holds memory nobody uses. */
	if (READ_ONCE(page_alloc_stats.idle_extents))
		extent_cache_expire(extent_clock());
	if (nr > MAX_ORDER_NR_PAGES && align <= PAGE_SIZE && READ_ONCE(page_alloc_stats.idle_extents)) {
		unsigned long dirty = 0;
		page = extent_cache_take(nr, &dirty);
		/*
		 * Reused pages may be dirty (what grew them, and fresh ones
		 * below, come zeroed): a calloc gets the kernel's zero pages,
		 * as from a fresh mapping, not a memset that would make pages
		 * resident that the old block never touched.
		 */
		if (page && (gfp & __GFP_ZERO)) {
			void *addr = memmap_page_address(page);
			if (os_decommit(addr, dirty << PAGE_SHIFT))
				memset(addr, 0, dirty << PAGE_SHIFT);
		}
	}
	bool zero_by_decommit = false;
	if (!page) {
		zero_by_decommit = (gfp & __GFP_ZERO) && nr <= MAX_ORDER_NR_PAGES && release_now_would(nr);
		page = alloc_pages_extent(zero_by_decommit ? gfp & ~__GFP_ZERO : gfp, nr, align);
	}
	if (!page) {
		errno = ENOMEM;
		return NULL;
	}
	if (zero_by_decommit) {
		void *addr = memmap_page_address(page);
		if (os_decommit(addr, nr << PAGE_SHIFT))
			memset(addr, 0, nr << PAGE_SHIFT);
	}
	page->nr_extent_pages = nr;
	__atomic_or_fetch(&page->flags, PG_extent, __ATOMIC_RELEASE);
	return memmap_page_address(page);
}

/*
 * The extent that starts at @p, or NULL; *@nr: its pages.  A large
 * region's descriptors may be unmapped by a racing free of the same block
 * (a program's double free), so they are only read under memmap_lock,
 * the page count too.  @claim: take the extent for freeing (clear
 * PG_extent); of two racing frees one wins (with one thread there is no
 * race: a plain store, as glibc skips its atomics then).  *@large: it lies
 * in a large region (a mapping of its own).
 */
static inline __attribute__((always_inline)) struct page *extent_of(const void *p, bool claim,
								     unsigned long *nr, bool *large)
{
	*large = false;
	if (!p || ((uintptr_t)p & (PAGE_SIZE - 1)))
		return NULL;
	struct page *page = memmap_virt_to_page_locked(p, large);
	uint32_t flags = page ? page_flags(page) : 0;
	if (!(flags & PG_extent))
		page = NULL;
	else if (claim && os_single_threaded())
		__atomic_store_n(&page->flags, flags & ~PG_extent, __ATOMIC_RELAXED);
	else if (claim && !__atomic_compare_exchange_n(&page->flags, &flags, flags & ~PG_extent,
						       false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		page = NULL;
	if (page)
		*nr = page->nr_extent_pages;
	if (*large)
		memmap_unlock();
	return page;
}

/*
 * The last frees of extents, as the pointers the program had: a free that
 * finds no extent at one of them is a double free, named so (in release
 * mode too: the pages may be a free buddy block, cached, unmapped or some
 * other block by then).  One store per extent free.
 */
#define RECENT_FREES 256
static uintptr_t recent_frees[RECENT_FREES];
static unsigned int recent_next;

void extent_note_free(const void *p)
{
	/*
	 * A load and a store, not a locked add: two racing frees may write
	 * one slot, and one record is lost (that free, done twice, is then
	 * reported as a bad pointer, not by name).  The lock prefix cost
	 * more than a tenth of a large block's malloc+free pair.
	 */
	unsigned int i = __atomic_load_n(&recent_next, __ATOMIC_RELAXED);
	__atomic_store_n(&recent_next, i + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&recent_frees[i % RECENT_FREES], (uintptr_t)p, __ATOMIC_RELAXED);
}

bool extent_freed_recently(const void *p)
{
	for (unsigned int i = 0; i < RECENT_FREES; i++)
		if (__atomic_load_n(&recent_frees[i], __ATOMIC_RELAXED) == (uintptr_t)p)
			return true;
	return false;
}

/* A kmalloc'ed large block now: a pointer kfree_checked() takes, not a double free. */
static bool is_kmalloc_large(const void *p)
{
	bool locked;
	struct page *page = memmap_virt_to_page_locked(p, &locked);
	bool ret = page && (page_flags(page) & PG_kmalloc_large);
	if (locked)
		memmap_unlock();
	return ret;
}

bool extent_report_freed(const void *p, const char *caller)
{
	if (((uintptr_t)p & (ARCH_SLAB_MINALIGN - 1)) ||
	    !(extent_freed_recently(p) || extent_bins_hold(p)) ||
	    extent_bytes(p) || is_kmalloc_large(p))
		return false;
	slub_report_call("%s: %s %p (a block above %lu KiB, freed before); ignored", caller,
		    strcmp(caller, "realloc") ? "double free of" : "realloc of freed block", p,
		    (unsigned long)MALLOC_MAX_CLASS_SIZE >> 10);
	return true;
}

static bool free_pages_at(void *p);

bool extent_free(void *p, const char *caller)
{
	if (unlikely(extent_debug_flags()) && debug_extent_free(p, caller))
		return true;
	if (free_pages_at(p)) {
		extent_note_free(p);
		return true;
	}
	return extent_report_freed(p, caller);
}

/*
 * This CPU's slot keeps @page for the next malloc of its size here (decay
 * 0: nothing kept).  The walk that stamps it comes a decay period after
 * the last clock read at the soonest.  *@alone: no other CPU's slot is
 * known to keep one.
 */
static inline __attribute__((always_inline)) bool keep_extent(struct page *page, unsigned long nr,
								  bool *alone)
{
	uint64_t decay = (uint64_t)slub_opt(decay_ms);
	if (!decay || !extent_pcp_put(page, nr, alone))
		return false;
	uint64_t last = __atomic_load_n(&extent_clock_ms, __ATOMIC_RELAXED);
	extent_due(&extent_slots_due_ms, last + decay);
	return true;
}

/* Inlined in both callers, as alloc_block(). */
static inline __attribute__((always_inline)) bool free_pages_at(void *p)
{
	unsigned long nr;
	bool large;
	struct page *page = extent_of(p, true, &nr, &large);
	if (!page)
		return false;
	bool release = release_now(nr);	/* raises the threshold, as glibc's */
	bool alone = false;
	bool kept = !large && !release && keep_extent(page, nr, &alone);
	/*
	 * The pair's common case: nothing else is kept, in the bins, the cache
	 * or another CPU's slot, that could wait for the decay, so no clock read
	 * (it was a tenth of the pair's time).
	 */
	if (kept && likely(alone && __atomic_load_n(&extent_bins_due_ms, __ATOMIC_RELAXED) == UINT64_MAX &&
			   !READ_ONCE(page_alloc_stats.idle_extents)))
		return true;
	uint64_t now = extent_clock();
	if (kept)
		;
	else if (large)
		extent_cache_return(page, now);	/* whatever its size: the cache costs no peak */
	else if (release)
		release_pages_extent(page, nr);
	else if (!extent_bins_put(page, nr, now))
		extent_release(page);
	extent_bins_expire(now);
	if (READ_ONCE(page_alloc_stats.idle_extents))
		extent_cache_expire(now);
	return true;
}

bool extent_free_pages(void *p)
{
	return free_pages_at(p);
}

size_t extent_usable_size(const void *p)
{
	if (unlikely(extent_debug_flags())) {
		size_t asked = debug_extent_size(p);
		if (asked)
			return asked;
	}
	return extent_bytes(p);
}

size_t extent_bytes(const void *p)
{
	unsigned long nr;
	bool large;
	struct page *page = extent_of(p, false, &nr, &large);
	return page ? nr << PAGE_SHIFT : 0;
}

void *extent_resize(void *p, size_t size)
{
	if (size > PTRDIFF_MAX - PAGE_SIZE)
		return NULL;
	unsigned long have;
	bool large;
	struct page *page = extent_of(p, false, &have, &large);
	unsigned long nr = pages_for(size);
	if (!page)
		return NULL;
	/*
	 * A racing free of @p is the caller's bug: the resizes judge @have under
	 * the lock.  Growing, in place or not, takes fresh pages, for which the
	 * kept extents (mappings, bins and CPU slots alike) give back as many
	 * first, as for a new block: the bins' and slots' go to the buddy
	 * lists, where the next blocks find them.  sqlite3's doubling array grew
	 * in place while a freed 2 MiB sat in a bin (its peak RSS 0.5 MB higher).
	 */
	if (nr > have && slub_malloc_keeps_extents())
		slub_malloc_pages_taken(nr - have);
	if (!resize_pages_extent(page, have, nr)) {
		/* A mapping of its own that outgrew its slots moves its pages, not its bytes. */
		if (nr <= MAX_ORDER_NR_PAGES || !(page = remap_pages_extent(page, have, nr)))
			return NULL;
	}
	page->nr_extent_pages = nr;
	return memmap_page_address(page);
}
