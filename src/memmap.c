/*
 * memmap.c - regions of address space and the section table that maps any
 * address to its region's mem_map.  See memmap.h for the layout.
 */
#define _GNU_SOURCE
#include "memmap.h"

#include <errno.h>
#include <pthread.h>

#include "os.h"
#include "report.h"

uint32_t memmap_section_table[NR_SECTION_SLOTS];

/* Serialises table updates and the DMA32 placement cursor. */
static pthread_mutex_t region_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * DMA32 regions: "below 4 GiB" is a virtual-address promise here.  Search
 * down from 4 GiB so we stay clear of a non-PIE program's brk heap, which
 * grows up from just above its image; never go below 1 GiB.
 */
#define DMA32_TOP   (1UL << 32)
#define DMA32_FLOOR (1UL << 30)
static uintptr_t dma32_cursor = DMA32_TOP;

static void *reserve_below_4g(size_t size)
{
	while (dma32_cursor >= DMA32_FLOOR + size) {
		uintptr_t at = ALIGN_DOWN(dma32_cursor - size, SECTION_SIZE);
		void *p = os_reserve_at(at, size);
		if (p) {
			dma32_cursor = at;
			return p;
		}
		if (errno != EEXIST)
			return NULL;	/* the OS refused: try the same place next time */
		dma32_cursor = at;	/* taken by someone else: move down */
	}
	errno = EEXIST;
	return NULL;
}

static uint32_t slots_for(uint64_t nr_pages)
{
	uint64_t per_slot = PAGES_PER_SECTION - MEMMAP_PAGES_PER_SLOT;
	return (uint32_t)((nr_pages + per_slot - 1) / per_slot);
}

struct mem_region *memmap_add_region(uint64_t nr_pages, enum region_kind kind,
				     int zone, bool below_4g)
{
	uint32_t nr_slots = kind == REGION_SECTION ? 1 : slots_for(nr_pages);
	uint64_t first_page = (uint64_t)nr_slots * MEMMAP_PAGES_PER_SLOT;
	if (kind == REGION_SECTION)
		nr_pages = PAGES_PER_SECTION - first_page;
	size_t size = (size_t)nr_slots << SECTION_SHIFT;
	size_t used = (size_t)(first_page + nr_pages) << PAGE_SHIFT;
	char *base;

	if (nr_pages == 0 || nr_slots == 0 || nr_slots > NR_SECTION_SLOTS / 2) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_lock(&region_lock);
	base = below_4g ? reserve_below_4g(size) : os_reserve(size, SECTION_SIZE);
	if (!base)
		goto fail;
	if ((uintptr_t)base + size > (1UL << ADDR_BITS)) {
		/* 5-level page tables can hand out addresses we cannot index. */
		os_release(base, size);
		goto fail;
	}
	/* Commit in one call: one VMA, no splitting per allocation. */
	if (os_commit(base, used)) {
		os_release(base, size);
		goto fail;
	}
	struct mem_region *r = (struct mem_region *)base;
	r->flags = PG_reserved;
	r->kind = (uint8_t)kind;
	r->zone = (uint8_t)zone;
	r->node = 0;
	r->nr_slots = nr_slots;
	r->first_page = (uint32_t)first_page;
	r->nr_pages = nr_pages;
	r->next = NULL;
	r->reserved_bytes = size;
	uint32_t tag = (uint32_t)((uintptr_t)base >> SECTION_SHIFT);
	for (uint32_t i = 0; i < nr_slots; i++)
		__atomic_store_n(&memmap_section_table[tag + i], tag, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&region_lock);
	return r;
fail:
	pthread_mutex_unlock(&region_lock);
	if (errno != EEXIST)
		errno = ENOMEM;
	return NULL;
}

void memmap_remove_region(struct mem_region *r)
{
	uintptr_t base = (uintptr_t)r;
	uint32_t tag = (uint32_t)(base >> SECTION_SHIFT);
	uint32_t nr_slots = r->nr_slots;
	size_t size = r->reserved_bytes;

	pthread_mutex_lock(&region_lock);
	for (uint32_t i = 0; i < nr_slots; i++)
		__atomic_store_n(&memmap_section_table[tag + i], 0, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&region_lock);
	if (os_release(r, size))
		slub_report("memmap: munmap of region %#lx (%zu bytes) failed", base, size);
}

bool memmap_page_valid(const struct page *page)
{
	uintptr_t p = (uintptr_t)page;
	uintptr_t base = memmap_region_base(p);
	if (!base || (p - base) % sizeof(struct page))
		return false;
	const struct mem_region *r = (const struct mem_region *)base;
	uintptr_t idx = (p - base) / sizeof(struct page);
	return idx >= r->first_page && idx < r->first_page + r->nr_pages;
}
