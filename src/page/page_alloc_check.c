// SPDX-License-Identifier: MIT
/*
 * page_alloc_check.c - the page allocator seen from the side: the validator
 * (an executable statement of the free-list invariants) and buddyinfo.
 * Slow by design; never called from an allocation path.
 */
#define _GNU_SOURCE
#include "page/page_alloc.h"

#include <stdio.h>

#include "base/start.h"
#include "base/options.h"
#include "page/pcp.h"
#include "base/report.h"

static unsigned long check_free_list(struct zone *z, unsigned int order,
				     struct list_head *head, bool clean,
				     unsigned long *blocks, unsigned long *dirty,
				     unsigned long *decayable)
{
	unsigned long errors = 0;
	struct list_head *pos;

	list_for_each(pos, head) {
		struct page *page = list_entry(pos, struct page, lru);
		void *addr = memmap_page_address(page);
		struct mem_region *r = page_region(page);
		uintptr_t idx = page_index(page, r);

		(*blocks)++;
		if (!clean) {
			*dirty += 1UL << order;
			if (order >= (unsigned int)slub_opt(decommit_order))
				*decayable += 1UL << order;
		}
		if (!memmap_page_valid(page) || r->zone != z->type || r->kind != REGION_SECTION) {
			slub_report("validate: %s free list %u holds %p, not a page of this zone",
				    z->name, order, addr);
			errors++;
			continue;
		}
		if (!(page_flags(page) & PG_buddy) || page->order != order ||
		    !!(page_flags(page) & PG_zero) != clean) {
			slub_report("validate: %s free list %u (%s): page %p has flags %#x order %u",
				    z->name, order, clean ? "clean" : "dirty", addr,
				    page_flags(page), page->order);
			errors++;
		}
		if (idx & ((1UL << order) - 1)) {
			slub_report("validate: %s: free block %p of order %u is misaligned",
				    z->name, addr, order);
			errors++;
		}
		if (pos->next->prev != pos) {
			slub_report("validate: %s free list %u: broken links at %p", z->name,
				    order, addr);
			return errors + 1;
		}
	}
	return errors;
}

/* Walk the descriptors of one section, block by block. */
static unsigned long check_section(struct zone *z, struct mem_region *r,
				   unsigned long *free_pages, unsigned long *used_pages,
				   unsigned long *isolated_pages, unsigned long *pcp_pages,
				   unsigned long nr_blocks[])
{
	unsigned long errors = 0;
	uintptr_t idx = r->first_page, end = r->carved;

	/* Descriptors above the carved part are untouched: not read either. */
	while (idx < end) {
		struct page *page = (struct page *)r + idx;
		void *addr = memmap_page_address(page);
		uint32_t flags = page->flags;
		unsigned int order = page->order;
		unsigned long nr = 1UL << order;

		if (!(flags & (PG_buddy | PG_isolated | PG_pcp | PG_head)) || order > MAX_PAGE_ORDER ||
		    (idx & (nr - 1)) || idx + nr > end) {
			slub_report("validate: %s: page %p is in no block (flags %#x order %u)",
				    z->name, addr, flags, order);
			errors++;
			idx++;
			continue;
		}
		if (flags & PG_buddy) {
			*free_pages += nr;
			nr_blocks[order]++;
			/* Two free buddies of one order would have merged. */
			uintptr_t bidx = idx ^ nr;
			struct page *buddy = (struct page *)r + bidx;
			if (order < MAX_PAGE_ORDER && bidx >= r->first_page && bidx < end &&
			    (page_flags(buddy) & PG_buddy) && buddy->order == order) {
				slub_report("validate: %s: free buddies %p and %p of order %u did not merge",
					    z->name, addr, memmap_page_address(buddy), order);
				errors++;
			}
		} else if (flags & PG_isolated) {
			*isolated_pages += nr;
		} else if (flags & PG_pcp) {
			*pcp_pages += nr;
		} else {
			*used_pages += nr;
			/* A head's second word is a cache exactly when it is a slab (memmap.h). */
			intptr_t word = (intptr_t)READ_ONCE(page->compound_head);
			if ((word > 0) != !!(flags & PG_slab)) {
				slub_report("validate: %s: block %p (order %u, flags %#x) has second word %#lx",
					    z->name, addr, order, flags, (unsigned long)word);
				errors++;
			}
		}
		for (unsigned long i = 1; i < nr; i++) {
			struct page *tail = page + i;
			bool ok = (flags & (PG_head | PG_headonly)) == PG_head ?
				page_flags(tail) == PG_tail && tail->compound_head == tail_word(page) :
				page_flags(tail) == 0 && tail->compound_head == 0;
			if (!ok) {
				slub_report("validate: %s: tail %p of block %p (order %u) has flags %#x head %#lx",
					    z->name, memmap_page_address(tail), addr, order,
					    page_flags(tail), (unsigned long)tail->compound_head);
				errors++;
			}
		}
		idx += nr;
	}
	return errors;
}

/* Zone lock and all of its pcp locks held. */
static unsigned long validate_zone(struct zone *z, unsigned long pcp_listed)
{
	unsigned long errors = 0, dirty = 0, decayable = 0, listed_free = 0;
	unsigned long free_pages = 0, used_pages = 0, isolated_pages = 0, managed = 0;
	unsigned long pcp_pages = 0;
	unsigned long nr_blocks[MAX_PAGE_ORDER + 1] = { 0 };

	for (unsigned int o = 0; o <= MAX_PAGE_ORDER; o++) {
		struct free_area *area = &z->free_area[o];
		unsigned long blocks = 0;
		errors += check_free_list(z, o, &area->dirty, false, &blocks, &dirty, &decayable);
		errors += check_free_list(z, o, &area->clean, true, &blocks, &dirty, &decayable);
		if (blocks != area->nr_free) {
			slub_report("validate: %s order %u: %lu blocks listed, nr_free says %lu",
				    z->name, o, blocks, area->nr_free);
			errors++;
		}
		listed_free += blocks << o;
	}
	for (struct mem_region *r = z->sections; r; r = r->next) {
		managed += r->carved - r->first_page;
		errors += check_section(z, r, &free_pages, &used_pages, &isolated_pages,
					&pcp_pages, nr_blocks);
	}
	for (unsigned int o = 0; o <= MAX_PAGE_ORDER; o++)
		if (nr_blocks[o] != z->free_area[o].nr_free) {
			slub_report("validate: %s order %u: %lu free blocks in the map, %lu on lists",
				    z->name, o, nr_blocks[o], z->free_area[o].nr_free);
			errors++;
		}
	if (free_pages != z->free_pages || listed_free != z->free_pages ||
	    dirty != z->dirty_pages || decayable != z->decayable_pages ||
	    isolated_pages != z->isolated_pages ||
	    managed != z->managed_pages || pcp_pages != pcp_listed ||
	    free_pages + used_pages + isolated_pages + pcp_pages != managed) {
		slub_report("validate: %s: counters free %lu/%lu/%lu dirty %lu/%lu decayable %lu/%lu isolated %lu/%lu pcp %lu/%lu used %lu managed %lu/%lu",
			    z->name, free_pages, listed_free, z->free_pages, dirty,
			    z->dirty_pages, decayable, z->decayable_pages, isolated_pages, z->isolated_pages, pcp_pages,
			    pcp_listed, used_pages, managed, z->managed_pages);
		errors++;
	}
	return errors;
}

unsigned long page_alloc_validate(void)
{
	slub_fork_handlers_check();
	unsigned long errors = 0;
	slub_ensure_init();
	for_each_zone(z) {
		/* Lock order: pcp lists, then the zone. */
		unsigned long pcp_listed = pcp_lock_all(z);
		pthread_mutex_lock(&z->lock);
		errors += validate_zone(z, pcp_listed);
		pthread_mutex_unlock(&z->lock);
		pcp_unlock_all(z);
	}
	return errors;
}

void page_for_each_block(void (*fn)(struct page *head, void *arg), void *arg)
{
	slub_ensure_init();
	for_each_zone(z) {
		pthread_mutex_lock(&z->lock);
		for (struct mem_region *r = z->sections; r; r = r->next) {
			uintptr_t idx = r->first_page, end = r->carved;
			while (idx < end) {
				struct page *page = (struct page *)r + idx;
				unsigned int order = page->order;
				if (order > MAX_PAGE_ORDER)
					order = 0;	/* not a block head: step one page */
				if ((page_flags(page) & (PG_head | PG_buddy | PG_isolated | PG_pcp)) ==
				    PG_head)
					fn(page, arg);
				idx += 1UL << order;
			}
		}
		pthread_mutex_unlock(&z->lock);
	}
}

/*
 * Large regions are on no list: their heads are found through the section
 * table, a region at the first slot it owns.  Under memmap_lock, so none
 * is unmapped meanwhile.  Reads the whole table (8 MiB, mostly the zero
 * page): for exit-time walks such as the leak check, not a hot path.
 */
void page_for_each_large(void (*fn)(struct page *head, void *arg), void *arg)
{
	slub_ensure_init();
	memmap_lock();
	const uint32_t *table = memmap_table();
	for (uintptr_t i = 1; table && i < NR_SECTION_SLOTS; i++) {
		uint32_t slot = READ_ONCE(table[i]);
		if (!(slot & SLOT_LARGE) || (slot & ~SLOT_LARGE) != i)
			continue;
		struct page *head = region_first_page((struct mem_region *)(i << SECTION_SHIFT));
		if (page_flags(head) & PG_head)
			fn(head, arg);
	}
	memmap_unlock();
}

void page_alloc_buddyinfo(int nid, enum zone_type zt,
			  unsigned long nr_free[MAX_PAGE_ORDER + 1], unsigned long *managed)
{
	slub_fork_handlers_check();
	struct zone *z = &page_alloc_nodes[nid].node_zones[zt];
	slub_ensure_init();
	pthread_mutex_lock(&z->lock);
	for (int o = 0; o <= MAX_PAGE_ORDER; o++)
		nr_free[o] = z->free_area[o].nr_free;
	if (managed)
		*managed = z->managed_pages;
	pthread_mutex_unlock(&z->lock);
}

void slub_print_buddyinfo(FILE *out)
{
	/* Counts are copied under the lock; stdio runs with no lock held. */
	for (int nid = 0; nid < (int)nr_node_ids; nid++)
		for (int zt = 0; zt < MAX_NR_ZONES; zt++) {
			unsigned long nr_free[MAX_PAGE_ORDER + 1], managed;
			page_alloc_buddyinfo(nid, (enum zone_type)zt, nr_free, &managed);
			if (!managed && zt != ZONE_NORMAL)
				continue;	/* DMA32 exists once used */
			fprintf(out, "Node %d, zone %8s ", nid,
				page_alloc_nodes[nid].node_zones[zt].name);
			for (int o = 0; o <= MAX_PAGE_ORDER; o++)
				fprintf(out, "%6lu ", nr_free[o]);
			fputc('\n', out);
		}
}
