// SPDX-License-Identifier: MIT
/*
 * memmap.c - regions of address space and the section table that maps any
 * address to its region's mem_map.  See memmap.h for the layout.
 */
#define _GNU_SOURCE
#include "page/memmap.h"

#include <errno.h>
#include <pthread.h>

#include "base/start.h"
#include "base/os.h"
#include "base/report.h"

uint32_t *memmap_section_table;

/* Serialises table updates and the DMA32 placement cursor. */
static pthread_mutex_t region_lock = PTHREAD_MUTEX_INITIALIZER;

void memmap_lock(void)
{
	slub_fork_handlers_check();
	pthread_mutex_lock(&region_lock);
}

void memmap_unlock(void)
{
	pthread_mutex_unlock(&region_lock);
}

void memmap_reinit_lock(void)
{
	pthread_mutex_init(&region_lock, NULL);
}

/*
 * DMA32 regions: "below 4 GiB" is a virtual-address promise here.  Search
 * down from 4 GiB so we stay clear of a non-PIE program's brk heap, which
 * grows up from just above its image; never go below 1 GiB.  The cursor
 * remembers where the last search ended; when it reaches the floor the
 * search starts once more from the top, where freed large regions left
 * holes (MAP_FIXED_NOREPLACE skips whatever is still mapped).
 */
#define DMA32_TOP   (1UL << 32)
#define DMA32_FLOOR (1UL << 30)
static uintptr_t dma32_cursor = DMA32_TOP;

static void *reserve_below_4g(size_t size, size_t align)
{
	if (size > DMA32_TOP - DMA32_FLOOR) {
		errno = EEXIST;
		return NULL;
	}
	uintptr_t start = dma32_cursor;
	for (int pass = 0; pass < 2; pass++) {
		uintptr_t cursor = pass ? DMA32_TOP : start;
		while (cursor >= DMA32_FLOOR + size) {
			uintptr_t at = ALIGN_DOWN(cursor - size, align);
			if (at < DMA32_FLOOR)
				break;
			void *p = os_reserve_at(at, size);
			if (p) {
				dma32_cursor = at;
				return p;
			}
			if (errno != EEXIST)
				return NULL;	/* the OS refused: no point in going on */
			cursor = at;		/* taken: look further down */
			if (pass && cursor <= start)
				break;
		}
	}
	errno = EEXIST;
	return NULL;
}

/*
 * Called with region_lock held, before the first region exists.  Of the
 * table's 8 MiB only the pages naming our regions are ever touched (one,
 * usually).
 */
static int map_section_table(void)
{
	void *table = os_map_sparse((NR_SECTION_SLOTS + 1) * sizeof(uint32_t));
	if (!table)
		return -1;
	__atomic_store_n(&memmap_section_table, (uint32_t *)table, __ATOMIC_RELEASE);
	return 0;
}

/*
 * Geometry of a large region: the mem_map must cover every slot the region
 * spans, and the data starts at the first @align boundary after it.
 */
static void large_geometry(uint64_t nr_pages, size_t align, uint32_t *nr_slots,
			   uint64_t *first_page)
{
	uint64_t slots = 1, data = nr_pages << PAGE_SHIFT;
	for (;;) {
		uint64_t off = ALIGN_UP(slots * MEMMAP_PAGES_PER_SLOT * PAGE_SIZE, align);
		uint64_t need = (off + data + SECTION_SIZE - 1) >> SECTION_SHIFT;
		if (need <= slots) {
			*nr_slots = (uint32_t)slots;
			*first_page = off >> PAGE_SHIFT;
			return;
		}
		slots = need;
	}
}

/*
 * The table's pages that add_region() wrote (region_lock held): no entry
 * elsewhere can name a region.  slot_is_ours() asks here first, so that a
 * probe near a page nobody wrote yet (the first region's, in every
 * process) is not a read fault of its own, 11 us in our CI's machines.
 */
#define TABLE_PAGES (((NR_SECTION_SLOTS + 1) * sizeof(uint32_t) + PAGE_SIZE - 1) / PAGE_SIZE)
static uint64_t table_pages_written[(TABLE_PAGES + 63) / 64];

/* Bit @set in table_pages_written for the table page naming @at's slot; was it set? */
static bool table_page_written(uintptr_t at, bool set)
{
	size_t page = (size_t)(at >> SECTION_SHIFT) * sizeof(uint32_t) / PAGE_SIZE;
	if (page >= TABLE_PAGES)
		return false;
	uint64_t bit = 1ULL << (page % 64);
	bool was = table_pages_written[page / 64] & bit;
	if (set)
		table_pages_written[page / 64] |= bit;
	return was;
}

/* For os_reserve_avoiding(), region_lock held: a slot of ours has no room for another region. */
static bool slot_is_ours(uintptr_t at)
{
	return table_page_written(at, false) && memmap_slot(at) != 0;
}

#define LARGE_DATA_ALIGN (2UL << 20)
#define SECTION_FIRST_MAPPED (4UL << 20)

static struct mem_region *add_region(uint64_t nr_pages, enum region_kind kind, int zone,
				     bool below_4g, size_t data_align, bool commit_data)
{
	uint32_t nr_slots = 1;
	uint64_t first_page = MEMMAP_PAGES_PER_SLOT;
	size_t align = SECTION_SIZE;

	if (kind == REGION_SECTION) {
		first_page = SECTION_FIRST_PAGE;	/* after the slab link table */
		nr_pages = PAGES_PER_SECTION - first_page;
	} else {
		if (nr_pages == 0 || nr_pages > (1UL << (ADDR_BITS - 2 - PAGE_SHIFT))) {
			errno = ENOMEM;
			return NULL;
		}
		/*
		 * Data on a 2 MiB boundary: mremap moves a region's pages a
		 * page table (512 pages) at a time when the old and new
		 * addresses are both aligned so, not an entry at a time.  Not
		 * below 4 GiB, whose 64 slots are scarce and never move.
		 */
		if (data_align < LARGE_DATA_ALIGN && !below_4g)
			data_align = LARGE_DATA_ALIGN;
		if (data_align < PAGE_SIZE)
			data_align = PAGE_SIZE;
		large_geometry(nr_pages, data_align, &nr_slots, &first_page);
		if (data_align > align)
			align = data_align;
	}
	size_t data_off = (size_t)first_page << PAGE_SHIFT;
	/* The mem_map, and a section's link table. */
	size_t map_bytes = kind == REGION_SECTION ? data_off :
				   (size_t)nr_slots * MEMMAP_PAGES_PER_SLOT * PAGE_SIZE;
	size_t data_bytes = (size_t)nr_pages << PAGE_SHIFT;
	/*
	 * A section is its whole slot, and so is a large region, the rest of
	 * its last slot being room to grow in place, unless the address space
	 * is limited (ulimit -v): then it reserves its mem_map and data only,
	 * or a 5 MiB block would count as 64 MiB, and grows where nothing else
	 * was mapped since.  Whatever is mapped in the rest of its slot is no
	 * block of ours to any lookup: the mem_map covers the whole slot and
	 * those descriptors stay zero.  No other region of ours lands there:
	 * regions start on slot boundaries, and this slot's is ours.
	 */
	size_t size = (size_t)nr_slots << SECTION_SHIFT;
	if (os_address_space_limited()) {
		/*
		 * A section: its first 4 MiB, then what section_carve() maps;
		 * its nr_pages are the pages mapped, so that lookups in the
		 * rest (someone else's mappings, maybe) find no data page.
		 */
		if (kind == REGION_SECTION && data_bytes > SECTION_FIRST_MAPPED) {
			data_bytes = SECTION_FIRST_MAPPED;
			nr_pages = data_bytes >> PAGE_SHIFT;
		}
		size = data_off + data_bytes;
	}
	char *base;

	memmap_lock();
	if (!memmap_section_table && map_section_table())
		goto fail;
	base = below_4g ? reserve_below_4g(size, align) :
			  os_reserve_avoiding(size, align, slot_is_ours);
	if (!base)
		goto fail;
	if ((uintptr_t)base + size > (1UL << ADDR_BITS)) {
		/* 5-level page tables can hand out addresses we cannot index. */
		os_release(base, size);
		errno = ENOMEM;
		goto fail;
	}
	/*
	 * Commit the mem_map and the data, each in one call (a section: one
	 * call for both, one VMA, never split per allocation).
	 */
	if (kind == REGION_LARGE) {
		/* A large block is one request: charged, as glibc's mmap of it would be. */
		if (os_commit(base, map_bytes) ||
		    (commit_data && os_commit_charged(base + data_off, data_bytes)))
			goto fail_release;
	} else if (os_commit(base, map_bytes + data_bytes)) {
		goto fail_release;
	}
	/*
	 * No transparent huge pages where we hand out and give back memory by
	 * the 4 KiB page: with THP "always" the first slab would cost 2 MiB
	 * (+2 MiB of RSS for every small process) and a decommit splits the
	 * huge page anyway.  A large region's data is one block, left to the
	 * system's setting as a plain mmap of it would be.
	 */
	os_no_huge_pages(base, kind == REGION_LARGE ? map_bytes : map_bytes + data_bytes);
	/*
	 * The header's page is written now and the page describing the first
	 * data pages at the first block: in with a call, not a fault each
	 * (bench/machine_faults: 11 us a fault, 2.5 us a call in our CI's
	 * virtual machines).  A section's are its first two pages.
	 */
	size_t first_desc = ((size_t)first_page * sizeof(struct page)) & ~(PAGE_SIZE - 1);
	os_populate(base, first_desc == PAGE_SIZE ? 2 * PAGE_SIZE : PAGE_SIZE);
	if (first_desc > PAGE_SIZE)
		os_populate(base + first_desc, PAGE_SIZE);
	struct mem_region *r = (struct mem_region *)base;
	r->flags = PG_reserved;
	r->flags1 = PG_reserved;
	r->word_tag = PAGE_WORD_TAG;
	r->word_tag1 = PAGE_WORD_TAG;
	r->kind = (uint8_t)kind;
	r->zone = (uint8_t)zone;
	r->node = 0;
	r->nr_slots = nr_slots;
	r->first_page = (uint32_t)first_page;
	r->nr_pages = nr_pages;
	r->next = NULL;
	r->reserved_bytes = size;
	uint32_t tag = (uint32_t)((uintptr_t)base >> SECTION_SHIFT);
	uint32_t entry = tag | (kind == REGION_LARGE ? SLOT_LARGE : 0);
	/* Its table page too, the first region's certainly new (a call on one in is cheap). */
	os_populate((void *)((uintptr_t)&memmap_section_table[tag] & ~(PAGE_SIZE - 1)), PAGE_SIZE);
	for (uint32_t i = 0; i < nr_slots; i++) {
		table_page_written((uintptr_t)base + ((size_t)i << SECTION_SHIFT), true);
		__atomic_store_n(&memmap_section_table[tag + i], entry, __ATOMIC_RELEASE);
	}
	memmap_unlock();
	return r;
fail_release:
	os_release(base, size);
	errno = ENOMEM;
fail:
	memmap_unlock();
	if (errno != EEXIST)
		errno = ENOMEM;
	return NULL;
}

struct mem_region *memmap_add_region(uint64_t nr_pages, enum region_kind kind,
				     int zone, bool below_4g, size_t data_align)
{
	return add_region(nr_pages, kind, zone, below_4g, data_align, true);
}

struct mem_region *memmap_add_region_for_move(uint64_t nr_pages, int zone)
{
	return add_region(nr_pages, REGION_LARGE, zone, false, PAGE_SIZE, false);
}

void memmap_unregister_slots_from(struct mem_region *r, uint32_t nr_slots)
{
	uint32_t tag = (uint32_t)((uintptr_t)r >> SECTION_SHIFT);
	uint32_t entry = tag | (r->kind == REGION_LARGE ? SLOT_LARGE : 0);
	/* Only entries naming @r: a slot it gave up may be another region's since. */
	for (uint32_t i = nr_slots; i < r->nr_slots; i++) {
		uint32_t mine = entry;
		__atomic_compare_exchange_n(&memmap_section_table[tag + i], &mine, 0, false,
					    __ATOMIC_RELEASE, __ATOMIC_RELAXED);
	}
	r->nr_slots = nr_slots;
}

void memmap_unregister_region(struct mem_region *r)
{
	memmap_unregister_slots_from(r, 0);
}

void memmap_release_region(void *base, size_t bytes)
{
	if (os_release(base, bytes))
		slub_report("memmap: munmap of region %p (%zu bytes) failed", base, bytes);
}

bool memmap_page_valid(const struct page *page)
{
	uintptr_t p = (uintptr_t)page;
	uintptr_t base = memmap_region_base(p);
	if (!base || (p - base) % sizeof(struct page))
		return false;
	const struct mem_region *r = (const struct mem_region *)base;
	uintptr_t idx = (p - base) / sizeof(struct page);
	return idx >= r->first_page &&
	       idx < r->first_page + __atomic_load_n(&r->nr_pages, __ATOMIC_RELAXED);
}
