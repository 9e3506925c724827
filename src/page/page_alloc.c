// SPDX-License-Identifier: MIT
/*
 * page_alloc.c - the buddy allocator and the kernel's page API.
 *
 * Entry points: alloc_pages_node() and friends allocate; free_pages() and
 * __free_pages() check the caller's input, then free under the zone lock.
 * Orders above MAX_PAGE_ORDER are large regions of their own (memmap.c),
 * mapped on allocation and unmapped on free.
 *
 * Block states, by the head descriptor's flags:
 *   PG_buddy [+PG_zero]  free, on free_area[order].dirty or .clean
 *   PG_isolated          free, off the lists while the decay decommits it
 *   PG_head              allocated; tails carry PG_tail and a head pointer
 *   PG_head+PG_headonly  allocated block of a malloc extent; tails stay zero
 * Tails of free blocks are all-zero descriptors.
 */
#define _GNU_SOURCE
#include "page/page_alloc.h"
#include "page/pcp.h"

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <string.h>
#include <time.h>

#include "base/start.h"
#include "base/fault_inject.h"
#include "base/options.h"
#include "base/os.h"
#include "base/report.h"

struct pglist_data page_alloc_nodes[MAX_NUMNODES];
struct page_alloc_stats page_alloc_stats;

static const char *const zone_names[MAX_NR_ZONES] = {
	[ZONE_DMA32] = "DMA32",
	[ZONE_NORMAL] = "Normal",
};

/* Options are fixed once the allocator runs; cache them here. */
static unsigned int decommit_order;
static uint64_t decay_ms;
static unsigned long dirty_ratio;
static uint64_t bound_idle_ms;	/* see zone_bound_dirty() */
static unsigned long thp_min_pages;	/* see large_fit_huge_pages() */
static int thp_madvise = -1;		/* the system's THP setting is "madvise" (1); -1: not read yet */

/* The zones; under options_lock at start-up, after base's step. */
static void page_alloc_init(void)
{
	decommit_order = (unsigned int)slub_opt(decommit_order);
	decay_ms = (uint64_t)slub_opt(decay_ms);
	dirty_ratio = (unsigned long)slub_opt(dirty_ratio);
	thp_min_pages = (unsigned long)slub_opt(thp_mb) << (20 - PAGE_SHIFT);
	/* decay 0 asks for nothing to be kept: then the bound waits for nothing either. */
	uint64_t tick = os_clock_tick_ms();
	bound_idle_ms = !decay_ms ? 0 : decay_ms / 64 > tick ? decay_ms / 64 : tick;
	/* Only the nodes in use: the others' zones would be pages of RSS for nothing. */
	for (int nid = 0; nid < (int)nr_node_ids; nid++) {
		struct pglist_data *pgdat = &page_alloc_nodes[nid];
		pgdat->node_id = nid;
		for (int zt = 0; zt < MAX_NR_ZONES; zt++) {
			struct zone *z = &pgdat->node_zones[zt];
			pthread_mutex_init(&z->lock, NULL);
			for (int o = 0; o <= MAX_PAGE_ORDER; o++) {
				INIT_LIST_HEAD(&z->free_area[o].dirty);
				INIT_LIST_HEAD(&z->free_area[o].clean);
			}
			z->name = zone_names[zt];
			z->node = nid;
			z->type = (enum zone_type)zt;
		}
	}
}

static struct zone *page_zone(const struct page *page)
{
	const struct mem_region *r = page_region(page);
	return &page_alloc_nodes[r->node].node_zones[r->zone];
}

static struct zone *gfp_zone(int nid, gfp_t gfp)
{
	if (nid < 0 || nid >= (int)nr_node_ids)
		nid = numa_node_id();	/* NUMA_NO_NODE, or unknown: the local node */
	enum zone_type zt = gfp & (__GFP_DMA | __GFP_DMA32) ? ZONE_DMA32 : ZONE_NORMAL;
	return &page_alloc_nodes[nid].node_zones[zt];
}

static void zone_maybe_decay(struct zone *z, uint64_t now);

/* ---- free lists --------------------------------------------------------- */

/*
 * Zero a descriptor's flags and head pointer (an old cut head becomes a
 * zero tail; order, zone, node and lru stay stale, read by nobody while
 * no flag is set).
 */
static void clear_descriptor(struct page *page)
{
	set_page_flags(page, 0);
	set_page_word(page, 0);
}

/* When a dirty free block was freed (ms; 0 for a clean one). */
static uint64_t block_stamp(const struct page *page)
{
	return (page->free_stamp & ~PAGE_WORD_TAG) >> 1;
}

static void add_to_free_list(struct zone *z, struct page *page, unsigned int order,
			     bool zero, uint64_t stamp)
{
	struct free_area *area = &z->free_area[order];
	unsigned long nr = 1UL << order;

	page->order = (uint8_t)order;
	if (zero) {
		set_page_flags(page, PG_buddy | PG_zero);
		set_page_word(page, 0);
		list_add(&page->lru, &area->clean);
	} else {
		set_page_flags(page, PG_buddy);
		set_page_word(page, stamp << 1 | PAGE_WORD_TAG);
		list_add(&page->lru, &area->dirty);
		z->dirty_pages += nr;
		if (order >= decommit_order)
			z->decayable_pages += nr;
	}
	area->nr_free++;
	z->free_pages += nr;
}

static void del_from_free_list(struct zone *z, struct page *page, unsigned int order)
{
	unsigned long nr = 1UL << order;

	list_del(&page->lru);
	if (!(page_flags(page) & PG_zero)) {
		z->dirty_pages -= nr;
		if (order >= decommit_order)
			z->decayable_pages -= nr;
	}
	z->free_area[order].nr_free--;
	z->free_pages -= nr;
	clear_descriptor(page);
	page->order = 0;
}

/* Free a block into the lists, merging with free buddies as far as it goes. */
static void free_one_page(struct zone *z, struct page *page, unsigned int order,
			  bool zero, uint64_t stamp)
{
	struct mem_region *r = page_region(page);
	uintptr_t idx = page_index(page, r);
	uintptr_t first = r->first_page, end = r->first_page + r->nr_pages;

	while (order < MAX_PAGE_ORDER) {
		uintptr_t buddy_idx = idx ^ (1UL << order);
		if (buddy_idx < first || buddy_idx >= end)
			break;
		struct page *buddy = (struct page *)r + buddy_idx;
		if (!(page_flags(buddy) & PG_buddy) || buddy->order != order)
			break;
		if (!(page_flags(buddy) & PG_zero)) {
			/*
			 * Dirty as a whole: freed when its newest dirty part was.
			 * A clean part (a carve, stamp 0) must not make it look
			 * idle since boot, for the decay and the bound.
			 */
			uint64_t buddy_stamp = block_stamp(buddy);
			if (zero || buddy_stamp > stamp)
				stamp = buddy_stamp;
			zero = false;
		}
		del_from_free_list(z, buddy, order);
		idx &= buddy_idx;
		order++;
	}
	add_to_free_list(z, (struct page *)r + idx, order, zero, stamp);
}

/*
 * The free list to take a block of @order from.  Without @want_zero a
 * dirty block of any order comes before a clean one: a clean block of the
 * right order would fault in fresh pages while resident ones sit idle (and
 * raise the peak RSS by what the decay holds).  With @want_zero, the
 * smallest block, clean first (it skips the memset).
 */
static struct list_head *rmqueue_list(struct zone *z, unsigned int order, bool want_zero,
				      unsigned int *found)
{
	if (!want_zero && z->dirty_pages) {
		for (unsigned int o = order; o <= MAX_PAGE_ORDER; o++)
			if (!list_empty(&z->free_area[o].dirty)) {
				*found = o;
				return &z->free_area[o].dirty;
			}
	}
	for (unsigned int o = order; o <= MAX_PAGE_ORDER; o++) {
		struct free_area *area = &z->free_area[o];
		if (!area->nr_free)
			continue;
		*found = o;
		return list_empty(&area->clean) ? &area->dirty : &area->clean;
	}
	return NULL;
}

/* Take a block of @order, splitting a larger one; *zero: known zero. */
static struct page *rmqueue(struct zone *z, unsigned int order, bool want_zero, bool *zero)
{
	unsigned int o;
	struct list_head *l = rmqueue_list(z, order, want_zero, &o);
	if (l) {
		struct page *page = list_first_entry(l, struct page, lru);
		bool clean = page_flags(page) & PG_zero;
		uint64_t stamp = block_stamp(page);
		del_from_free_list(z, page, o);
		/* Split: the upper halves go back, each in the state of the whole. */
		while (o > order) {
			o--;
			add_to_free_list(z, page + (1UL << o), o, clean, stamp);
		}
		*zero = clean;
		return page;
	}
	return NULL;
}

#define CARVE_MIN_ORDER 4	/* 16 pages, 64 KiB */

/*
 * Pages mapped into region @r after it was made (it grew) take its node's
 * policy too: with another policy they would be a VMA of their own, which
 * one mremap cannot move with the rest (a realloc then copies).
 */
static void region_bind_range(const struct mem_region *r, void *addr, size_t size)
{
	if (nr_node_ids > 1 &&
	    os_bind_node(addr, size, numa_phys_node(r->node)))
		__atomic_add_fetch(&page_alloc_stats.bind_failures, 1, __ATOMIC_RELAXED);
}

/*
 * Is the section mapped up to page @end_idx?  Under a limit on address
 * space a section maps its slot as it carves it, and its nr_pages follow
 * (add_region).  Where the next range is taken by someone else's mapping,
 * or the limit is reached, the zone's next block comes from a new section;
 * this one is tried again only while it is the zone's newest.
 */
static bool section_mapped_to(struct mem_region *r, uintptr_t end_idx)
{
	size_t want = end_idx << PAGE_SHIFT;
	if (want <= r->reserved_bytes)
		return true;
	char *at = (char *)r + r->reserved_bytes;
	if (os_map_at(at, want - r->reserved_bytes, false))
		return false;
	os_no_huge_pages(at, want - r->reserved_bytes);
	region_bind_range(r, at, want - r->reserved_bytes);
	r->reserved_bytes = want;
	__atomic_store_n(&r->nr_pages, end_idx - r->first_page, __ATOMIC_RELAXED);
	return true;
}

/*
 * Hand the next naturally aligned block of section @r to the buddy lists,
 * clean, merged with a free buddy below it.  A section is carved a block
 * at a time, not whole, because each free block's head descriptor is
 * written: carving 64 MiB at once wrote sixteen pages of mem_map (64 KiB
 * resident) in every process.  And the block is no larger than the
 * request (@order), 16 pages, or what the section has carved so far,
 * whichever is largest: splitting a first 1 MiB block for one page wrote
 * the descriptors of its halves in three more mem_map pages, in every
 * process.  The blocks double from there, so each section carves 4 MiB
 * blocks after its first few.  Zone lock held.
 */
static bool section_carve(struct zone *z, struct mem_region *r, unsigned int want)
{
	/* The slot's end: under ulimit -v, nr_pages are only what is mapped yet. */
	uintptr_t idx = r->carved, end = PAGES_PER_SECTION;
	if (idx >= end)
		return false;
	uintptr_t carved = idx - r->first_page;
	unsigned int limit = carved ? (unsigned int)(63 - __builtin_clzl(carved)) : 0;
	if (limit < want)
		limit = want;
	if (limit < CARVE_MIN_ORDER)
		limit = CARVE_MIN_ORDER;
	unsigned int order = (unsigned int)__builtin_ctzl(idx);
	if (order > limit)
		order = limit;
	if (order > MAX_PAGE_ORDER)
		order = MAX_PAGE_ORDER;
	while (idx + (1UL << order) > end)
		order--;
	if (!section_mapped_to(r, idx + (1UL << order))) {
		end = r->first_page + r->nr_pages;	/* what is mapped */
		if (idx >= end)
			return false;
		while (idx + (1UL << order) > end)
			order--;
	}
	r->carved = (uint32_t)(idx + (1UL << order));
	z->managed_pages += 1UL << order;
	free_one_page(z, (struct page *)r + idx, order, true, 0);
	return true;
}

/*
 * A new region is @nid's: with more than one node its pages are asked of
 * the real node under @nid (fake nodes share theirs), before any is touched.
 */
static void region_set_node(struct mem_region *r, int nid)
{
	r->node = (uint16_t)nid;
	if (nr_node_ids == 1)
		return;
	if (os_bind_node(r, r->reserved_bytes, numa_phys_node(nid)))
		__atomic_add_fetch(&page_alloc_stats.bind_failures, 1, __ATOMIC_RELAXED);
	else
		__atomic_add_fetch(&page_alloc_stats.bound_regions, 1, __ATOMIC_RELAXED);
}

/*
 * Give @z one more block, for a request of @order: carved from its newest
 * section, or from a new section when that one is used up.  Zone lock held.
 */
static bool zone_grow(struct zone *z, unsigned int order)
{
	if (z->sections && section_carve(z, z->sections, order))
		return true;
	if (z->full_until_ms && os_now_ms() < z->full_until_ms)
		return false;
	struct mem_region *r = memmap_add_region(0, REGION_SECTION, z->type,
						 z->type == ZONE_DMA32, 0);
	if (!r) {
		/*
		 * No free range below 4 GiB: do not search again for a second,
		 * or until a large DMA32 block gives its range back.
		 */
		if (errno == EEXIST)
			z->full_until_ms = os_now_ms() + 1000;
		return false;
	}
	z->full_until_ms = 0;
	region_set_node(r, z->node);
	r->carved = r->first_page;
	r->next = z->sections;
	z->sections = r;
	return section_carve(z, r, order);
}

static inline unsigned long zone_in_use(const struct zone *z)
{
	return z->managed_pages - z->free_pages - z->isolated_pages;
}

#define DIRTY_FLOOR_PAGES 64	/* 256 KiB: small processes keep their few free pages */
static void zone_bound_growth(struct zone *z, unsigned int order);

struct page *zone_take_locked(struct zone *z, unsigned int order, bool want_zero, bool *zero)
{
	struct page *page = rmqueue(z, order, want_zero, zero);
	while (unlikely(!page) && zone_grow(z, order))
		page = rmqueue(z, order, want_zero, zero);
	if (page && zone_in_use(z) > z->peak_in_use)
		z->peak_in_use = zone_in_use(z);
	if (page && *zero && dirty_ratio &&
	    z->dirty_pages > DIRTY_FLOOR_PAGES + zone_in_use(z) / dirty_ratio)
		zone_bound_growth(z, order);
	return page;
}

void zone_give_locked(struct zone *z, struct page *page, unsigned int order, bool zero,
		      uint64_t now)
{
	if (page)
		free_one_page(z, page, order, zero, now);
	zone_maybe_decay(z, now);
}

/* The head only: @flags PG_head, or PG_head | PG_headonly (tails left zero). */
static void prep_head(struct zone *z, struct page *page, unsigned int order, uint32_t flags)
{
	set_page_flags(page, flags);
	page->order = (uint8_t)order;
	page->zone = (uint8_t)z->type;
	page->node = (uint16_t)z->node;
	set_page_word(page, 0);
}

static void prep_new_page(struct zone *z, struct page *page, unsigned int order)
{
	prep_head(z, page, order, PG_head);
	for (unsigned long i = 1; i < 1UL << order; i++) {
		set_page_flags(&page[i], PG_tail);
		set_page_word(&page[i], tail_word(page));
	}
}

/* ---- failure reports ------------------------------------------------------ */

/*
 * fail_page_alloc, as the kernel's should_fail_alloc_page(): true if this
 * allocation of 2^@order pages is to fail (errno ENOMEM).  Never one with
 * __GFP_NOFAIL.  Space counts pages, as the kernel's.
 */
static __cold bool should_fail_alloc_page(gfp_t gfp, unsigned int order)
{
	if (gfp & (__GFP_NOFAIL | __GFP_NOINJECT))
		return false;
	if (!should_fail(&fail_page_alloc_attr, 1L << order, "fail_page_alloc", NULL, order))
		return false;
	errno = ENOMEM;
	return true;
}

static struct page *alloc_failed(gfp_t gfp, unsigned int order, const char *why)
{
	static struct slub_ratelimit rs;
	if (!(gfp & __GFP_NOWARN) && slub_ratelimit(&rs))
		slub_warn("alloc_pages: page allocation failure: order:%u, mode:%#x: %s",
			  order, gfp, why);
	errno = ENOMEM;
	return NULL;
}

static void bad_page(const char *caller, const void *addr, unsigned int order,
		     const char *why)
{
	slub_report_call("BUG: Bad page state: %s(%p, order %u): %s; ignored",
		    caller, addr, order, why);
}

/* ---- large regions (order > MAX_PAGE_ORDER) ------------------------------- */

static void extent_account(unsigned long nr, long sign);

/*
 * A block of a large region: 2^@order pages naturally aligned, as every
 * block of the kernel's allocator is, or (@order EXTENT_ORDER) @nr pages
 * aligned to @align.
 */
#define EXTENT_ORDER 0xff

/*
 * A large block of slub_thp_mb or more asks for transparent huge pages: one
 * fault brings 2 MiB in, not 4 KiB.  Big blocks are mostly buffers filled
 * from one end (sort's, 188 MB of a 4 GB block in our benchmark, filled a
 * page fault at a time: 46K faults, 11 us each in our CI's virtual
 * machines).  What it costs is the 2 MiB window being filled, all resident
 * at once: at most 2 MiB a block, an eighth of the smallest one at the
 * default.  Only where the system's setting is "madvise": under "always"
 * the block has them anyway, under "never" it cannot.
 *
 * Called with a block's pages (@nr, from @data) whenever its size changes,
 * and @mapped, the pages of its mapping from @data (moved blocks are
 * mapped larger): a block that shrinks or is split below the size, or
 * moves into a mapping that had asked, says "no" again on its own pages
 * (which is what no advice means under "madvise"), so the advice always
 * follows the block's size and its pages stay one mapping for mremap.
 */
static void large_fit_huge_pages(void *data, unsigned long nr, unsigned long mapped)
{
	if (!thp_min_pages)
		return;
	int madvise_setting = __atomic_load_n(&thp_madvise, __ATOMIC_RELAXED);
	if (nr >= thp_min_pages) {
		if (madvise_setting < 0) {
			madvise_setting = os_thp_setting_is_madvise();
			__atomic_store_n(&thp_madvise, madvise_setting, __ATOMIC_RELAXED);
		}
		if (madvise_setting)
			os_huge_pages(data, mapped << PAGE_SHIFT);
	} else if (madvise_setting > 0) {
		os_no_huge_pages(data, nr << PAGE_SHIFT);	/* none ever asked before the first */
	}
}

static struct page *alloc_large_region(struct zone *z, gfp_t gfp, unsigned int order,
				       unsigned long nr, size_t align)
{
	/* Fresh pages: the malloc library's cached mappings give back as many first. */
	if (unlikely(slub_malloc_keeps_extents()))
		slub_malloc_pages_taken(nr);
	struct mem_region *r = memmap_add_region(nr, REGION_LARGE, z->type,
						 z->type == ZONE_DMA32, align);
	if (!r)
		return alloc_failed(gfp, order, errno == EEXIST ?
				    "no address space left below 4 GiB" :
				    "out of memory for a direct mapping");
	region_set_node(r, z->node);
	struct page *page = region_first_page(r);
	page->order = (uint8_t)order;
	page->zone = (uint8_t)z->type;
	page->node = (uint16_t)z->node;
	__atomic_store_n(&page->flags, PG_head | PG_large, __ATOMIC_RELEASE);
	if (nr >= thp_min_pages)	/* a new mapping: no advice to undo below the size */
		large_fit_huge_pages(memmap_page_address(page), nr, nr);
	__atomic_add_fetch(&page_alloc_stats.large_allocs, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&page_alloc_stats.large_pages, nr, __ATOMIC_RELAXED);
	return page;	/* a fresh mapping is zero: no memset for __GFP_ZERO */
}

static struct page *alloc_large(struct zone *z, gfp_t gfp, unsigned int order)
{
	return alloc_large_region(z, gfp, order, 1UL << order, PAGE_SIZE << order);
}

/*
 * Free a block of a large region, given by descriptor (@page) or address.
 * Everything is judged under memmap_lock: a racing free of the same block
 * may unmap the region, and after that no lookup finds it any more.
 */
static void free_large(struct page *page, unsigned long addr, unsigned int order,
		       const char *caller)
{
	const char *why = NULL;
	char buf[64];
	void *base = NULL;
	size_t bytes = 0;
	unsigned long pages = 0;
	int zone = 0;

	memmap_lock();
	if (!page) {
		page = memmap_virt_to_page((void *)addr);
		if (!page || !memmap_page_valid(page))
			why = "invalid address";
		else if (addr & ~PAGE_MASK)
			why = "unaligned";
	} else if (!memmap_page_valid(page)) {
		why = "invalid page";
	}
	if (!why) {
		struct mem_region *r = page_region(page);
		uint32_t flags = page_flags(page);
		addr = (unsigned long)memmap_page_address(page);
		if (page != region_first_page(r)) {
			why = "inside a large block, not its head";
		} else if (!(flags & PG_head)) {
			why = "double free (the block is already free)";
		} else if (page->order != order) {
			if (page->order == EXTENT_ORDER)
				snprintf(buf, sizeof(buf), "the block is an extent of %lu pages",
					 (unsigned long)r->nr_pages);
			else
				snprintf(buf, sizeof(buf), "the block has order %u", page->order);
			why = buf;
		} else {
			set_page_flags(page, 0);
			zone = r->zone;
			base = r;
			bytes = r->reserved_bytes;
			pages = r->nr_pages;
			memmap_unregister_region(r);
		}
	}
	memmap_unlock();

	if (base) {
		__atomic_sub_fetch(&page_alloc_stats.large_allocs, 1, __ATOMIC_RELAXED);
		__atomic_sub_fetch(&page_alloc_stats.large_pages, pages, __ATOMIC_RELAXED);
		if (order == EXTENT_ORDER)
			extent_account(pages, -1);
		memmap_release_region(base, bytes);
		if (zone == ZONE_DMA32) {
			/* Address space below 4 GiB came free: growing may work again, on any node. */
			for (unsigned int nid = 0; nid < nr_node_ids; nid++) {
				struct zone *z = &page_alloc_nodes[nid].node_zones[ZONE_DMA32];
				pthread_mutex_lock(&z->lock);
				z->full_until_ms = 0;
				pthread_mutex_unlock(&z->lock);
			}
		}
	} else if (!strcmp(why, "invalid address")) {
		slub_report_call("%s: invalid address %#lx (not from the page allocator); ignored",
			    caller, addr);
	} else if (!strcmp(why, "unaligned")) {
		slub_report_call("%s: invalid address %#lx (not page aligned); ignored", caller, addr);
	} else if (!strcmp(why, "invalid page")) {
		slub_report_call("%s: invalid page %p (not a page descriptor of ours); ignored",
			    caller, (void *)page);
	} else {
		bad_page(caller, (void *)addr, order, why);
	}
}

/* ---- decay ---------------------------------------------------------------- */

/*
 * Decommit isolated blocks on @list with the zone lock dropped, then free
 * them back as clean.  Returns the pages decommitted.
 */
static unsigned long decommit_isolated(struct zone *z, struct list_head *list)
{
	unsigned long pages = 0;
	struct list_head *pos;

	pthread_mutex_unlock(&z->lock);
	list_for_each(pos, list) {
		struct page *page = list_entry(pos, struct page, lru);
		size_t bytes = PAGE_SIZE << page->order;
		/* A failed madvise leaves the block dirty; it stays correct. */
		if (os_decommit(memmap_page_address(page), bytes) == 0) {
			set_page_flags(page, page_flags(page) | PG_zero);
			pages += 1UL << page->order;
		}
	}
	pthread_mutex_lock(&z->lock);
	uint64_t now = os_now_ms();
	while (!list_empty(list)) {
		struct page *page = list_first_entry(list, struct page, lru);
		unsigned int order = page->order;
		bool zero = page_flags(page) & PG_zero;
		list_del(&page->lru);
		set_page_flags(page, 0);
		free_one_page(z, page, order, zero, now);
	}
	return pages;
}

static void isolate(struct zone *z, struct page *page, unsigned int order,
		    struct list_head *list)
{
	del_from_free_list(z, page, order);
	set_page_flags(page, PG_isolated);
	page->order = (uint8_t)order;
	list_add_tail(&page->lru, list);
}

/*
 * Decommit dirty blocks of order >= @min_order freed before @cutoff_ms,
 * largest first.  Zone lock held on entry and exit (dropped around the
 * system calls).  At most @batch blocks and about @max_pages pages per
 * call, so no thread waits on a long sweep.
 */
static unsigned long zone_decay(struct zone *z, unsigned int min_order,
				uint64_t cutoff_ms, unsigned int batch, unsigned long max_pages)
{
	struct list_head list;
	unsigned int taken = 0;
	unsigned long isolated = 0;

	INIT_LIST_HEAD(&list);
	for (int o = MAX_PAGE_ORDER; o >= (int)min_order && taken < batch; o--) {
		struct list_head *dirty = &z->free_area[o].dirty;
		struct list_head *pos = dirty->prev;
		/*
		 * Oldest at the tail; skip blocks that are still young, but
		 * not too many (4 per block wanted): a split block's halves
		 * keep its age, so the order is loose, and the lists of small
		 * orders can be long.
		 */
		unsigned long scanned = 0;
		while (pos != dirty && taken < batch && isolated < max_pages &&
		       scanned++ < 4UL * batch) {
			struct page *page = list_entry(pos, struct page, lru);
			pos = pos->prev;
			if (block_stamp(page) <= cutoff_ms) {
				isolate(z, page, (unsigned int)o, &list);
				isolated += 1UL << o;
				taken++;
			}
		}
	}
	if (!taken)
		return 0;
	z->isolated_pages += isolated;
	unsigned long pages = decommit_isolated(z, &list);
	z->isolated_pages -= isolated;
	__atomic_add_fetch(&page_alloc_stats.decommitted_pages, pages, __ATOMIC_RELAXED);
	return pages;
}

/*
 * After a free: a bound on the dirty pages, and the decay.  Zone lock held.
 *
 * The decay alone lets a short program keep everything it freed: git's
 * pack-objects runs for 160 ms, less than the decay period, and held 3.5
 * MB of free dirty blocks at its peak against 1.2 MB in use.  So the pages
 * in use and the free ones that may be resident are kept to at most the
 * recent peak of the pages in use times 1 + 1 / slub_dirty_ratio (8, as
 * jemalloc's old lg_dirty_mult bound), the free ones to a floor of
 * DIRTY_FLOOR_PAGES at least: free pages never raise the resident memory
 * much past what the program itself used lately.  The recent peak is the
 * most in use in this decay period or the last one, so a server whose
 * replies come and go every few tens of ms keeps the pages they use.
 * Bounded by the pages in use of the moment (as first written), redis'
 * LRANGE replies went back and were faulted in again on every round of
 * requests: 3x slower than glibc.  The peak of the resident memory has the
 * same bound either way: the most ever in use times 1 + 1 / slub_dirty_ratio.
 *
 * Past the bound, blocks of any order idle for bound_idle_ms go back,
 * largest and oldest first, until half the ratio's share is left below it.
 * bound_idle_ms is a 64th of the decay period but at least one tick of
 * the coarse clock: a block freed in an earlier tick.  A free and the look
 * it runs share one `now`, so a block is never taken by its own free's
 * look.  With two ticks (as first written) the bound never reached what
 * cc1 frees and leaves idle between one tick and two: its peak RSS was
 * 0.3 MB higher.  Pages on the per-CPU lists are outside the bound (counted
 * in use): at most slub_pcp_high per CPU.
 */
/* The most pages in use in this decay period and the last. */
static unsigned long zone_recent_peak(struct zone *z, uint64_t now)
{
	unsigned long in_use = zone_in_use(z);
	if (now - z->peak_since_ms >= decay_ms) {
		/*
		 * A new period.  Its peak may be this moment's (a program idle
		 * since it began, freeing now): the last period keeps it.
		 */
		z->last_peak_in_use = z->peak_in_use;
		z->peak_in_use = in_use;
		z->peak_since_ms = now;
	}
	return z->peak_in_use > z->last_peak_in_use ? z->peak_in_use : z->last_peak_in_use;
}

static void zone_bound_dirty(struct zone *z, uint64_t now)
{
	uint64_t idle_ms = bound_idle_ms;
	z->next_bound_ms = now + idle_ms;
	unsigned long in_use = zone_in_use(z);
	unsigned long peak = zone_recent_peak(z, now);
	unsigned long below_peak = peak > in_use ? peak - in_use : 0;
	unsigned long share = peak / dirty_ratio;
	if (share < DIRTY_FLOOR_PAGES)
		share = DIRTY_FLOOR_PAGES;
	if (z->dirty_pages > below_peak + share && now >= idle_ms) {
		unsigned long pages = zone_decay(z, 0, now - idle_ms, 64,
						 z->dirty_pages - below_peak - share / 2);
		__atomic_add_fetch(&page_alloc_stats.bound_pages, pages, __ATOMIC_RELAXED);
	}
}

/*
 * A clean block of @order was taken (the resident memory grows) while more
 * dirty pages sit free than the pages in use / slub_dirty_ratio: they do
 * not fit what the program asks for now (all smaller than it needs, or it
 * wants zeroed ones), and keeping them up to the recent peak only lifts
 * the peak RSS.  So twice the pages taken of them go back (oldest and
 * largest first, idle bound_idle_ms), until those past half the share of
 * the pages in use are gone: the resident memory stops growing while they
 * last, and the work is in step with the growth, a few madvise calls for
 * a block whose pages are about to fault in anyway.
 */
static void zone_bound_growth(struct zone *z, unsigned int order)
{
	uint64_t now = os_now_ms();
	unsigned long keep = DIRTY_FLOOR_PAGES + zone_in_use(z) / dirty_ratio / 2;
	if (z->dirty_pages <= keep || now < bound_idle_ms)
		return;
	unsigned long want = z->dirty_pages - keep, pages = 0, n;
	if (want > 2UL << order)
		want = 2UL << order;
	/* Fragments may be single pages: 64 blocks a call, as many calls as it takes. */
	while (pages < want && (n = zone_decay(z, 0, now - bound_idle_ms, 64, want - pages)))
		pages += n;
	__atomic_add_fetch(&page_alloc_stats.bound_pages, pages, __ATOMIC_RELAXED);
}

static void zone_maybe_decay(struct zone *z, uint64_t now)
{
	if (dirty_ratio && z->dirty_pages > DIRTY_FLOOR_PAGES && now >= z->next_bound_ms)
		zone_bound_dirty(z, now);
	if (!z->decayable_pages || now < z->next_decay_ms)
		return;
	/* Sweep at most 8 times per decay period; decay 0 sweeps on every free. */
	z->next_decay_ms = decay_ms ? now + (decay_ms >= 8 ? decay_ms / 8 : 1) : 0;
	if (now >= decay_ms)
		zone_decay(z, decommit_order, now - decay_ms, 64, ULONG_MAX);
}

unsigned long page_alloc_decay(uint64_t now_ms)
{
	slub_fork_handlers_check();
	unsigned long pages = 0;
	slub_ensure_init();
	for_each_zone(z) {
		pthread_mutex_lock(&z->lock);
		if (now_ms >= decay_ms) {
			unsigned long n;
			while ((n = zone_decay(z, decommit_order, now_ms - decay_ms, 64, ULONG_MAX)))
				pages += n;
		}
		pthread_mutex_unlock(&z->lock);
	}
	return pages;
}

enum idle_work page_alloc_idle_tick(uint64_t now_ms)
{
	enum idle_work work = IDLE_NOTHING;
	for_each_zone(z) {
		pthread_mutex_lock(&z->lock);
		bool used = z->managed_pages != 0;
		if (used) {
			zone_maybe_decay(z, now_ms);
			if (z->decayable_pages)
				work = IDLE_DECAY_SOON;
		}
		pthread_mutex_unlock(&z->lock);
		/* Lock order: the per-CPU lists before the zone. */
		if (used && pcp_drain_idle(z, now_ms, decay_ms) && work == IDLE_NOTHING)
			work = IDLE_LATER;
	}
	return work;
}

unsigned long page_alloc_resident_free_pages(void)
{
	slub_fork_handlers_check();
	unsigned long pages = 0;
	slub_ensure_init();
	for_each_zone(z) {
		pages += pcp_lock_all(z);	/* lock order: pcp lists, then the zone */
		pthread_mutex_lock(&z->lock);
		pages += z->dirty_pages;
		pthread_mutex_unlock(&z->lock);
		pcp_unlock_all(z);
	}
	return pages;
}

unsigned long slub_reclaim(void)
{
	slub_fork_handlers_check();
	unsigned long pages = 0;
	slub_ensure_init();
	page_alloc_drain_pcp();
	for_each_zone(z) {
		pthread_mutex_lock(&z->lock);
		/*
		 * Isolate every dirty block in one sweep, so that blocks
		 * coming back clean cannot merge into dirty ones; a
		 * second sweep catches what other threads freed meanwhile.
		 */
		for (int pass = 0; pass < 2; pass++)
			pages += zone_decay(z, 0, UINT64_MAX, UINT32_MAX, ULONG_MAX);
		pthread_mutex_unlock(&z->lock);
	}
	return pages;
}

/* ---- fork ------------------------------------------------------------------ */

/*
 * Whether this fork's prepare took the locks: before start-up there are no
 * zones.  Start-up sets slub_started under options_lock, which the fork
 * holds already (FORK_OPTIONS is outside FORK_PAGE): stable here.
 */
static bool fork_took_pages;

/*
 * Every page allocator lock in the documented order before, released after
 * in the parent, made new in the child (the threads that may have held
 * them do not exist there).
 */
static void page_alloc_fork_prepare(void)
{
	fork_took_pages = __atomic_load_n(&slub_started, __ATOMIC_RELAXED);
	if (!fork_took_pages)
		return;
	pcp_fork_prepare();
	/*
	 * A decay drops the zone lock while it decommits blocks it took off
	 * the lists; forked then, the child would never get them back.  With
	 * every per-CPU list held, a decay in flight needs only the zone lock
	 * to finish (one run from a pcp free holds its list: none is in flight).
	 */
	for_each_zone(z) {
		pthread_mutex_lock(&z->lock);
		while (z->isolated_pages) {
			pthread_mutex_unlock(&z->lock);
			sched_yield();
			pthread_mutex_lock(&z->lock);
		}
	}
	memmap_lock();
}

static void page_alloc_fork_parent(void)
{
	if (!fork_took_pages)
		return;
	memmap_unlock();
	for_each_zone(z)
		pthread_mutex_unlock(&z->lock);
	pcp_fork_parent();
}

static void page_alloc_fork_child(void)
{
	if (!fork_took_pages)
		return;
	memmap_reinit_lock();
	for_each_zone(z)
		pthread_mutex_init(&z->lock, NULL);
	pcp_fork_child();
}
slub_initcall(page_alloc_initcall, .init_level = INIT_PAGE, .init = page_alloc_init,
	      .fork_level = FORK_PAGE, .fork_prepare = page_alloc_fork_prepare,
	      .fork_parent = page_alloc_fork_parent, .fork_child = page_alloc_fork_child);

/* ---- the page API ----------------------------------------------------------- */

__attribute__((weak)) void slub_malloc_pages_taken(unsigned long fresh)
{
	(void)fresh;
}

__attribute__((weak)) unsigned long slub_malloc_pcp_kept(void)
{
	return 0;
}

/*
 * A buddy block of @order (<= MAX_PAGE_ORDER) from @z, its descriptors all
 * zero: the caller prepares it (a compound block, or an extent's cut);
 * *zero: known zero.
 */
/* @z's own lists (and the per-CPU ones if @use_pcp), growing it if it must. */
static struct page *zone_alloc(struct zone *z, gfp_t gfp, unsigned int order, bool *zero,
			       bool use_pcp, bool *full)
{
	struct page *page = use_pcp ? pcp_alloc(z, order, gfp & __GFP_ZERO, zero) : NULL;
	for (int attempt = 0; !page && attempt < 2; attempt++) {
		/* Second attempt: other CPUs' lists may hold what we need. */
		if (attempt)
			pcp_drain_zone(z);
		pthread_mutex_lock(&z->lock);
		page = zone_take_locked(z, order, gfp & __GFP_ZERO, zero);
		*full |= z->full_until_ms != 0;
		pthread_mutex_unlock(&z->lock);
	}
	return page;
}

/*
 * A block of @order from *@zp, or, as the kernel's zonelist falls back, from
 * the same zone of another node when that one has none and cannot grow (the
 * OS refused a mapping, or address space ran out) -- unless __GFP_THISNODE.
 * *@zp becomes the zone the block came from.
 */
static struct page *buddy_alloc(struct zone **zp, gfp_t gfp, unsigned int order, bool *zero,
				bool use_pcp)
{
	slub_fork_handlers_check();
	bool full = false;
	struct page *page = zone_alloc(*zp, gfp, order, zero, use_pcp, &full);
	if (unlikely(!page) && nr_node_ids > 1 && !(gfp & __GFP_THISNODE)) {
		int home = (*zp)->node;
		enum zone_type zt = (*zp)->type;
		for (unsigned int i = 1; !page && i < nr_node_ids; i++) {
			struct zone *z = &page_alloc_nodes[node_after(home, i)].node_zones[zt];
			page = zone_alloc(z, gfp, order, zero, false, &full);
			if (page)
				*zp = z;
		}
	}
	if (unlikely(!page))
		return alloc_failed(gfp, order, full ? "no address space left below 4 GiB"
						     : "out of memory");
	/* No lock held: the malloc library may give mappings back from here. */
	if (unlikely(slub_malloc_keeps_extents()))
		slub_malloc_pages_taken(*zero ? 1UL << order : 0);
	return page;
}

static struct page *alloc_nofail(int nid, gfp_t gfp, unsigned int order);

struct page *alloc_pages_node(int nid, gfp_t gfp, unsigned int order)
{
	bool zero = false;

	slub_ensure_init();
	if (unlikely(slub_unusable))
		return alloc_failed(gfp, order, "allocator unusable on this system");
	if (unlikely(slub_fail_page_alloc_on) && should_fail_alloc_page(gfp, order))
		return NULL;
	struct zone *z = gfp_zone(nid, gfp);
	if (unlikely(order > MAX_PAGE_ORDER)) {
		if (order > MAX_LARGE_ORDER)
			return alloc_failed(gfp, order, "order too large");
		struct page *large = alloc_large(z, gfp, order);
		return large || !(gfp & __GFP_NOFAIL) ? large : alloc_nofail(nid, gfp, order);
	}
	struct page *page = buddy_alloc(&z, gfp, order, &zero, true);
	if (unlikely(!page))
		return gfp & __GFP_NOFAIL ? alloc_nofail(nid, gfp, order) : NULL;
	prep_new_page(z, page, order);
	if (zero)
		set_page_flags(page, PG_head | PG_fresh);
	else if (gfp & __GFP_ZERO)
		memset(memmap_page_address(page), 0, PAGE_SIZE << order);
	return page;
}

/*
 * __GFP_NOFAIL, as the kernel's: never NULL.  There is no reclaim to wait
 * for here, so wait for other threads' frees (and the decay's, the OS's):
 * retry every millisecond, quietly after one warning.  Only an order no
 * allocation can have, or an unusable system, still fails.
 */
static __cold struct page *alloc_nofail(int nid, gfp_t gfp, unsigned int order)
{
	static struct slub_ratelimit rs;
	if (order > MAX_LARGE_ORDER || slub_unusable)
		return NULL;
	if (slub_ratelimit(&rs))
		slub_warn("alloc_pages: __GFP_NOFAIL allocation of order %u failed; retrying until "
			  "memory is freed", order);
	for (;;) {
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
		struct page *page = alloc_pages_node(nid, (gfp & ~__GFP_NOFAIL) | __GFP_NOWARN, order);
		if (page)
			return page;
	}
}

struct page *alloc_pages(gfp_t gfp, unsigned int order)
{
	return alloc_pages_node(NUMA_NO_NODE, gfp, order);
}

unsigned long __get_free_pages(gfp_t gfp, unsigned int order)
{
	struct page *page = alloc_pages_node(NUMA_NO_NODE, gfp, order);
	return page ? (unsigned long)memmap_page_address(page) : 0;
}

unsigned long get_zeroed_page(gfp_t gfp)
{
	return __get_free_pages(gfp | __GFP_ZERO, 0);
}

/* Undo prep_new_page() on the tails of a block of @order (before it is freed). */
static void clear_tails(struct page *page, unsigned int order)
{
	for (unsigned long i = 1; i < 1UL << order; i++)
		clear_descriptor(&page[i]);
}

/*
 * Check the block and free it; the caller has a valid data-page descriptor.
 * @zero: the caller decommitted the block (it goes back clean).
 */
static void free_pages_checked(struct page *page, unsigned int order, const char *caller,
			       bool use_pcp, bool zero)
{
	slub_fork_handlers_check();
	void *addr = memmap_page_address(page);
	/*
	 * PG_head -> 0 by compare-and-swap: of two racing frees of one block
	 * exactly one proceeds, and no lock is needed to judge the input.
	 */
	uint32_t flags = __atomic_load_n(&page->flags, __ATOMIC_ACQUIRE);
	const char *why = NULL;
	char buf[96];
	if (flags & (PG_buddy | PG_isolated | PG_pcp)) {
		why = "double free (the block is already free)";
	} else if (flags & PG_tail) {
		struct page *head = compound_head(page);
		snprintf(buf, sizeof(buf), "inside the block of order %u at %p, not its head",
			 head->order, memmap_page_address(head));
		why = buf;
	} else if (!(flags & PG_head)) {
		why = "not an allocated block (a double free, never handed out, or inside a malloc extent)";
	} else if (flags & PG_slab) {
		why = "the page belongs to a slab";
	} else if (page->order != order) {
		snprintf(buf, sizeof(buf), "the block has order %u", page->order);
		why = buf;
	} else if (!__atomic_compare_exchange_n(&page->flags, &flags, 0, false,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		why = "double free (freed twice at once)";
	}
	if (why) {
		bad_page(caller, addr, order, why);
		return;
	}
	if (!(flags & PG_headonly))
		clear_tails(page, order);
	struct zone *z = page_zone(page);
	if (use_pcp && pcp_free(z, page, order))
		return;
	pthread_mutex_lock(&z->lock);
	zone_give_locked(z, page, order, zero, os_now_ms());
	pthread_mutex_unlock(&z->lock);
}

/*
 * A free of a large region's block, or of something that is no descriptor,
 * is finished here (true); a buddy block is left to the caller (false).
 */
static bool free_large_or_invalid(struct page *page, unsigned int order, const char *caller)
{
	slub_ensure_init();	/* options say where reports go */
	if (memmap_in_large_region(page)) {
		free_large(page, 0, order, caller);
		return true;
	}
	if (!memmap_page_valid(page)) {
		slub_report_call("%s: invalid page %p (not a page descriptor of ours); ignored", caller,
			    (void *)page);
		return true;
	}
	return false;
}

void __free_pages(struct page *page, unsigned int order)
{
	if (!free_large_or_invalid(page, order, "__free_pages"))
		free_pages_checked(page, order, "__free_pages", true, false);
}

void free_pages(unsigned long addr, unsigned int order)
{
	if (addr == 0)
		return;
	slub_ensure_init();
	if (memmap_in_large_region((void *)addr)) {
		free_large(NULL, addr, order, "free_pages");
		return;
	}
	struct page *page = memmap_virt_to_page((void *)addr);
	if (!page || !memmap_page_valid(page)) {
		slub_report_call("free_pages: invalid address %#lx (not from the page allocator); ignored",
			    addr);
		return;
	}
	if (addr & ~PAGE_MASK) {
		slub_report_call("free_pages: invalid address %#lx (not page aligned); ignored", addr);
		return;
	}
	free_pages_checked(page, order, "free_pages", true, false);
}

/* ---- address translation ------------------------------------------------------ */

/* ---- extents ------------------------------------------------------------------ */

/*
 * An extent of @nr pages at a naturally aligned start is cut into the
 * binary digits of @nr, largest first: each block then lands on a multiple
 * of its own size, and both ends agree on the cut knowing only @nr.
 */
static void extent_account(unsigned long nr, long sign)
{
	__atomic_add_fetch(&page_alloc_stats.extents, (unsigned long)sign, __ATOMIC_RELAXED);
	__atomic_add_fetch(&page_alloc_stats.extent_pages, nr * (unsigned long)sign, __ATOMIC_RELAXED);
}

static inline unsigned int extent_next_order(unsigned long rest)
{
	return 63 - (unsigned int)__builtin_clzl(rest);
}

/* Each block of an extent of @nr pages: its page offset @off and @order. */
#define for_each_extent_block(off, order, nr)                                    \
	for (unsigned long off = 0, rest_ = (nr), order;                         \
	     rest_ && (order = extent_next_order(rest_), true);                  \
	     off += 1UL << order, rest_ -= 1UL << order)

/*
 * Cut the extent at @page, cut for @old_nr pages (0: a new block, all
 * tails zero), anew for @nr: the old cut's inner heads become zero tails,
 * then each new block gets its head.  Tails are never written (PG_headonly).
 */
static void extent_recut(struct zone *z, struct page *page, unsigned long old_nr,
			 unsigned long nr)
{
	uint32_t keep = page_flags(page) & PG_extent;
	for_each_extent_block(off, order, old_nr)
		if (off)
			clear_descriptor(page + off);
	for_each_extent_block(off, order, nr)
		prep_head(z, page + off, (unsigned int)order, PG_head | PG_headonly);
	__atomic_or_fetch(&page->flags, keep, __ATOMIC_RELAXED);
}

/*
 * Give pages [from, to) of the region of @base back, in naturally aligned
 * blocks, with the state (@zero, @stamp) they had.  Zone lock held.
 */
static void give_range_locked(struct zone *z, struct page *base, uintptr_t from, uintptr_t to,
			      bool zero, uint64_t stamp)
{
	while (from < to) {
		unsigned int k = (unsigned int)__builtin_ctzl(from);
		while (from + (1UL << k) > to)
			k--;
		struct page *piece = base + from;
		clear_descriptor(piece);	/* zero already; its tails too: extents write none */
		free_one_page(z, piece, k, zero, stamp);
		from += 1UL << k;
	}
}

struct page *alloc_pages_extent(gfp_t gfp, unsigned long nr, unsigned long align)
{
	slub_fork_handlers_check();
	unsigned int order = 0, align_order = 0;
	bool zero = false;

	slub_ensure_init();
	if (unlikely(slub_unusable))
		return alloc_failed(gfp, 0, "allocator unusable on this system");
	if (unlikely(!nr || nr > (1UL << MAX_LARGE_ORDER)))
		return alloc_failed(gfp, MAX_LARGE_ORDER + 1, "extent too large");
	order = (unsigned int)get_order(nr << PAGE_SHIFT);
	if (unlikely(slub_fail_page_alloc_on) && should_fail_alloc_page(gfp, order))
		return NULL;
	if (align > PAGE_SIZE)
		align_order = (unsigned int)get_order(align);
	if (align_order > order)
		order = align_order;
	struct zone *z = gfp_zone(NUMA_NO_NODE, gfp);
	if (order > MAX_PAGE_ORDER) {
		if (align > (PAGE_SIZE << MAX_LARGE_ORDER))
			return alloc_failed(gfp, align_order, "alignment too large");
		struct page *page = alloc_large_region(z, gfp, EXTENT_ORDER, nr,
							align > PAGE_SIZE ? align : PAGE_SIZE);
		if (page) {
			page->order = EXTENT_ORDER;
			extent_account(nr, 1);
		}
		return page;
	}

	/*
	 * Not through the per-CPU lists, either way: they do not merge buddies,
	 * so the blocks of freed extents of every size would pile up there,
	 * dirty, while the next extent takes fresh pages (git log: 2x the RSS).
	 * Without __GFP_ZERO: only the kept pages need clearing, not the rounding.
	 */
	struct page *block = buddy_alloc(&z, gfp & ~__GFP_ZERO, order, &zero, false);
	if (!block)
		return NULL;
	/* Re-cut the block: the extent's blocks first, then what goes back. */
	extent_recut(z, block, 0, nr);
	struct mem_region *r = page_region(block);
	uintptr_t start = page_index(block, r);
	uint64_t now = os_now_ms();
	pthread_mutex_lock(&z->lock);
	give_range_locked(z, (struct page *)r, start + nr, start + (1UL << order), zero, now);
	zone_give_locked(z, NULL, 0, zero, now);	/* the decay check a free runs */
	pthread_mutex_unlock(&z->lock);
	if ((gfp & __GFP_ZERO) && !zero)
		memset(memmap_page_address(block), 0, nr << PAGE_SHIFT);
	extent_account(nr, 1);
	return block;
}

static void free_extent_blocks(struct page *page, unsigned long nr, const char *caller, bool zero)
{
	extent_account(nr, -1);
	for_each_extent_block(off, order, nr)
		free_pages_checked(page + off, (unsigned int)order, caller, false, zero);
}

void free_pages_extent(struct page *page, unsigned long nr)
{
	if (!free_large_or_invalid(page, EXTENT_ORDER, "free_pages_extent"))
		free_extent_blocks(page, nr, "free_pages_extent", false);
}

void release_pages_extent(struct page *page, unsigned long nr)
{
	if (free_large_or_invalid(page, EXTENT_ORDER, "release_pages_extent"))
		return;		/* a mapping of its own: unmapped */
	/* Decommit only what is surely this extent: each block's head as cut. */
	bool ok = true;
	for_each_extent_block(off, order, nr)
		ok = ok && (page_flags(page + off) & (PG_head | PG_buddy | PG_pcp | PG_isolated)) == PG_head &&
		     page[off].order == order;
	bool zero = ok && !os_decommit(memmap_page_address(page), nr << PAGE_SHIFT);
	if (zero)
		__atomic_add_fetch(&page_alloc_stats.decommitted_pages, nr, __ATOMIC_RELAXED);
	free_extent_blocks(page, nr, "release_pages_extent", zero);
}


/*
 * Grow a buddy extent into the free pages after it, or shrink it by giving
 * its tail back.  Growing needs every page up to the new end free on the
 * buddy lists (not on a per-CPU list, not being decommitted) and a start
 * aligned for the new cut.  This is what glibc's realloc gets from growing
 * a chunk into the free space after it: a buffer that doubles does not
 * leave each old copy behind, dirty.
 */
static bool resize_buddy_extent(struct page *page, unsigned long nr, unsigned long new_nr)
{
	slub_fork_handlers_check();
	struct mem_region *r = page_region(page);
	struct zone *z = page_zone(page);
	uintptr_t start = page_index(page, r);
	uintptr_t end = start + nr, new_end = start + new_nr;

	if (new_nr > MAX_ORDER_NR_PAGES || (start & ((1UL << extent_next_order(new_nr)) - 1)))
		return false;
	pthread_mutex_lock(&z->lock);
	/* Carving moves r->carved, under the lock; carve up to our new end. */
	while (new_end > r->carved && section_carve(z, r, 0))
		;
	if (new_end > r->carved) {
		pthread_mutex_unlock(&z->lock);
		return false;
	}
	if (new_nr > nr) {
		/*
		 * Page end - 1 is ours, so a free block holding page end starts
		 * there, and so does each next one: only block heads to check.
		 */
		uintptr_t idx = end;
		while (idx < new_end) {
			struct page *block = (struct page *)r + idx;
			if (!(page_flags(block) & PG_buddy)) {
				pthread_mutex_unlock(&z->lock);
				return false;
			}
			idx += 1UL << block->order;
		}
		for (idx = end; idx < new_end;) {
			struct page *block = (struct page *)r + idx;
			unsigned int order = block->order;
			bool zero = page_flags(block) & PG_zero;
			uint64_t stamp = block_stamp(block);
			del_from_free_list(z, block, order);	/* leaves its head zero */
			idx += 1UL << order;
			if (idx > new_end)
				give_range_locked(z, (struct page *)r, new_end, idx, zero, stamp);
		}
		extent_recut(z, page, nr, new_nr);
	} else {
		extent_recut(z, page, nr, new_nr);
		give_range_locked(z, (struct page *)r, new_end, end, false, os_now_ms());
	}
	pthread_mutex_unlock(&z->lock);
	extent_account(new_nr, 1);
	extent_account(nr, -1);
	return true;
}

/*
 * Make [end, new_end) of large region @r usable, charged: what lies in its
 * reservation is committed, what lies past it is mapped only where nothing
 * else is (its slots are ours, not all of their address space).
 */
static bool grow_large_in_place(struct mem_region *r, char *end, char *new_end)
{
	char *reserved_end = (char *)r + r->reserved_bytes;
	if (new_end > reserved_end) {
		char *from = end > reserved_end ? end : reserved_end;
		if (os_map_at(from, (size_t)(new_end - from), true))
			return false;
		region_bind_range(r, from, (size_t)(new_end - from));
		r->reserved_bytes = (uint64_t)(new_end - (char *)r);
		new_end = from;
	}
	if (end >= new_end)
		return true;
	if (os_commit_charged(end, (size_t)(new_end - end)))
		return false;
	region_bind_range(r, end, (size_t)(new_end - end));
	return true;
}

bool resize_pages_extent(struct page *page, unsigned long nr, unsigned long new_nr)
{
	bool ok = false;
	if (!new_nr)
		return false;
	if (!memmap_in_large_region(page))
		return new_nr == nr || resize_buddy_extent(page, nr, new_nr);
	memmap_lock();
	struct mem_region *r = page_region(page);
	if (page == region_first_page(r) && page->order == EXTENT_ORDER && r->nr_pages == nr) {
		uint64_t room = ((uint64_t)r->nr_slots << (SECTION_SHIFT - PAGE_SHIFT)) - r->first_page;
		char *data = memmap_page_address(page);
		if (new_nr > nr && r->moved_pages)
			/*
			 * Within its mapping, or it moves again: a piece mapped
			 * beside it would be a second mapping (its page offset
			 * does not follow on), which mremap cannot move as one.
			 */
			ok = new_nr <= r->moved_pages;
		else if (new_nr > nr && new_nr <= room)
			ok = grow_large_in_place(r, data + (nr << PAGE_SHIFT),
						 data + (new_nr << PAGE_SHIFT));
		else if (new_nr <= nr)
			ok = !os_decommit(data + (new_nr << PAGE_SHIFT), (nr - new_nr) << PAGE_SHIFT);
		if (ok) {
			large_fit_huge_pages(data, new_nr, r->moved_pages ? r->moved_pages : new_nr);
			r->nr_pages = new_nr;
			__atomic_add_fetch(&page_alloc_stats.large_pages, new_nr - nr, __ATOMIC_RELAXED);
			__atomic_add_fetch(&page_alloc_stats.extent_pages, new_nr - nr, __ATOMIC_RELAXED);
		}
	}
	memmap_unlock();
	return ok;
}

static_assert((1UL << MAX_LARGE_ORDER) <= UINT32_MAX, "moved_pages holds a large region's pages");

/* Unmap [base, base + bytes) but for the hole [hole, hole + hole_bytes) inside it. */
static void release_around(void *base, size_t bytes, void *hole, size_t hole_bytes)
{
	char *b = base, *h = hole;
	if (h > b)
		memmap_release_region(b, (size_t)(h - b));
	if (h + hole_bytes < b + bytes)
		memmap_release_region(h + hole_bytes, (size_t)(b + bytes - (h + hole_bytes)));
}

/* Is @page still the head of region @old's whole extent of @nr pages?  memmap_lock held. */
static bool extent_heads_region(const struct page *page, struct mem_region *old,
				unsigned long nr)
{
	return page == region_first_page(old) && page->order == EXTENT_ORDER &&
	       old->nr_pages == nr && (page_flags(page) & PG_head);
}

/* The head of region @r that pages moved into from @page's region @old. */
static void prep_moved_head(struct page *head, struct mem_region *r, const struct page *page,
			    const struct mem_region *old)
{
	head->order = EXTENT_ORDER;
	head->zone = page->zone;
	head->node = page->node;
	r->node = old->node;
}

/*
 * Release region @r after a move of pages into [@to, @to + @bytes) failed
 * (or was not @tried).  Whatever the kernel unmapped is a hole another
 * thread's mmap may fill at once: never unmap it.  Linux may unmap the
 * target before failing a move, so the target is left out unless it is
 * still all mapped (a mapping of someone else's filling exactly that hole
 * in between is the one case this cannot tell).
 */
static void release_failed_move(struct mem_region *r, void *to, size_t bytes, bool tried)
{
	size_t r_bytes = r->reserved_bytes;
	if (!tried || os_range_mapped(to, bytes))
		memmap_release_region(r, r_bytes);
	else
		release_around(r, r_bytes, to, bytes);
}

struct page *remap_pages_extent(struct page *page, unsigned long nr, unsigned long new_nr)
{
	slub_fork_handlers_check();
	if (!memmap_in_large_region(page) || new_nr <= nr || new_nr > (1UL << MAX_LARGE_ORDER))
		return NULL;
	struct mem_region *old = page_region(page);
	if (old->zone == ZONE_DMA32)
		return NULL;	/* its slots are below 4 GiB, where the new ones might not be */
	/*
	 * A quarter more mapped than asked for: a moved buffer grows within
	 * its own mapping (no system call) until it moves again, so a buffer
	 * grown a page at a time moves once per quarter, not per page.  The
	 * extra pages are charged, never touched by us.
	 */
	unsigned long map_nr = new_nr + new_nr / 4;
	if (map_nr > (1UL << MAX_LARGE_ORDER))
		map_nr = 1UL << MAX_LARGE_ORDER;
	struct mem_region *r = memmap_add_region_for_move(map_nr, old->zone);
	if (!r)
		return NULL;
	/*
	 * A move that fails on the charge may have unmapped its target first
	 * (Linux does, for MREMAP_FIXED): ask before, so it rarely fails
	 * (after the region, whose mem_map is charged too).
	 */
	bool can_charge = os_can_commit((map_nr - nr) << PAGE_SHIFT);
	r->nr_pages = new_nr;
	r->moved_pages = (uint32_t)map_nr;
	struct page *head = region_first_page(r);
	char *from = memmap_page_address(page), *to = memmap_page_address(head);
	size_t from_bytes = nr << PAGE_SHIFT, to_bytes = map_nr << PAGE_SHIFT;
	void *base = NULL;
	size_t bytes = 0;

	/* Judged and moved under memmap_lock, as free_large judges a free. */
	memmap_lock();
	bool tried = can_charge && extent_heads_region(page, old, nr);
	if (tried && !os_move(from, from_bytes, to, to_bytes)) {
		prep_moved_head(head, r, page, old);
		__atomic_store_n(&head->flags, page_flags(page), __ATOMIC_RELEASE);
		set_page_flags(page, 0);
		large_fit_huge_pages(to, new_nr, map_nr);
		base = old;
		bytes = old->reserved_bytes;
		memmap_unregister_region(old);
	} else {
		memmap_unregister_region(r);
	}
	memmap_unlock();

	/* After a move the old data is a hole too (the charge check makes failing rare). */
	if (!base) {
		release_failed_move(r, to, to_bytes, tried);
		return NULL;
	}
	release_around(base, bytes, from, from_bytes);
	__atomic_add_fetch(&page_alloc_stats.large_pages, new_nr - nr, __ATOMIC_RELAXED);
	__atomic_add_fetch(&page_alloc_stats.remapped_extents, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&page_alloc_stats.remapped_pages, nr, __ATOMIC_RELAXED);
	extent_account(new_nr, 1);
	extent_account(nr, -1);
	return head;
}

struct page *split_pages_extent(struct page *page, unsigned long nr, unsigned long take)
{
	slub_fork_handlers_check();
	if (!memmap_in_large_region(page) || !take || take >= nr)
		return NULL;
	struct mem_region *old = page_region(page);
	if (old->zone == ZONE_DMA32)
		return NULL;	/* as remap_pages_extent() */
	struct mem_region *r = memmap_add_region_for_move(take, old->zone);
	if (!r)
		return NULL;
	r->nr_pages = take;
	r->moved_pages = (uint32_t)take;
	struct page *head = region_first_page(r);
	unsigned long keep = nr - take;
	char *from = (char *)memmap_page_address(page) + (keep << PAGE_SHIFT);
	char *to = memmap_page_address(head);
	size_t bytes = take << PAGE_SHIFT;
	char *beyond = NULL;
	size_t beyond_bytes = 0;

	memmap_lock();
	bool tried = extent_heads_region(page, old, nr);
	bool ok = tried && !os_move(from, bytes, to, bytes);
	if (ok) {
		prep_moved_head(head, r, page, old);
		__atomic_store_n(&head->flags, PG_head | PG_large, __ATOMIC_RELEASE);
		old->nr_pages = keep;
		if (old->moved_pages)
			old->moved_pages = (uint32_t)keep;	/* its one mapping ends there now */
		/*
		 * The moved range is a hole anyone's mmap may fill at once: the
		 * old reservation ends before it, and what it held beyond the
		 * hole (ours) goes.  The old extent then grows as one under a
		 * limit on address space does: into what is free beside it.
		 */
		char *reserved_end = (char *)old + old->reserved_bytes;
		if (reserved_end > from + bytes) {
			beyond = from + bytes;
			beyond_bytes = (size_t)(reserved_end - beyond);
		}
		old->reserved_bytes = (uint64_t)(from - (char *)old);
		/* Whole slots past it are no longer ours: another region may be put there. */
		memmap_unregister_slots_from(old, (uint32_t)((old->reserved_bytes + SECTION_SIZE - 1) >>
							     SECTION_SHIFT));
	} else {
		memmap_unregister_region(r);
	}
	memmap_unlock();

	if (!ok) {
		release_failed_move(r, to, bytes, tried);
		return NULL;
	}
	if (beyond)
		memmap_release_region(beyond, beyond_bytes);
	/* Both parts kept the old block's advice. */
	large_fit_huge_pages(from - (keep << PAGE_SHIFT), keep, keep);
	large_fit_huge_pages(to, take, take);
	__atomic_add_fetch(&page_alloc_stats.large_allocs, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&page_alloc_stats.split_extents, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&page_alloc_stats.split_pages, take, __ATOMIC_RELAXED);
	__atomic_add_fetch(&page_alloc_stats.extents, 1, __ATOMIC_RELAXED);	/* same pages */
	return head;
}

void *page_address(const struct page *page)
{
	return memmap_page_valid(page) ? memmap_page_address(page) : NULL;
}

/*
 * Under a limit on address space a region maps only part of its slots,
 * and someone else's mapping may lie in the rest (memmap.c): only a data
 * page's descriptor is an answer.  A large region's header is read under
 * memmap_lock, as a racing free may unmap it.
 */
struct page *virt_to_page(const void *addr)
{
	bool large;
	struct page *page = memmap_virt_to_page_locked(addr, &large);
	if (page && !memmap_page_valid(page))
		page = NULL;
	if (large)
		memmap_unlock();
	return page;
}

int page_to_nid(const struct page *page)
{
	return memmap_page_valid(page) ? page_region(page)->node : NUMA_NO_NODE;
}

/* ---- alloc_pages_exact: extents under the kernel's names -------------------- */

void *alloc_pages_exact(size_t size, gfp_t gfp)
{
	if (unlikely(!size)) {
		errno = EINVAL;
		return NULL;
	}
	unsigned long nr = (unsigned long)((size - 1) >> PAGE_SHIFT) + 1;
	struct page *page = alloc_pages_extent(gfp, nr, PAGE_SIZE);
	return page ? memmap_page_address(page) : NULL;
}

void free_pages_exact(void *virt, size_t size)
{
	if (!virt)
		return;
	struct page *page = ((uintptr_t)virt & (PAGE_SIZE - 1)) ? NULL : virt_to_page(virt);
	if (!page || !size) {
		slub_report("free_pages_exact(%p, %zu): not a block alloc_pages_exact() handed out; "
			    "ignored", virt, size);
		return;
	}
	free_pages_extent(page, (unsigned long)((size - 1) >> PAGE_SHIFT) + 1);
}
