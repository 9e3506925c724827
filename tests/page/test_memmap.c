// SPDX-License-Identifier: MIT
/*
 * test_memmap.c - the memory map: descriptor layout, section table
 * lookups in both directions, region headers, large regions.
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include <slub.h>
#include "check.h"
#include "page/memmap.h"
#include "page/page_alloc.h"

static void descriptor_layout(void)
{
	CHECK_EQ(sizeof(struct page), 32);
	CHECK_EQ(offsetof(struct page, lru) % 16, 0);
	CHECK_EQ(MEMMAP_PAGES_PER_SLOT, 128);
	CHECK_EQ(PAGES_PER_SECTION, 16384);
}

static void lookups_before_any_allocation(void)
{
	/* The table is zero until a region exists: nothing is ours. */
	int x;
	CHECK(memmap_virt_to_page(&x) == NULL);
	CHECK(memmap_virt_to_page((void *)(1UL << 40)) == NULL);
}

static void section_header_and_lookups(void)
{
	struct page *page = alloc_pages(GFP_KERNEL, 0);
	CHECK(page != NULL);
	uintptr_t addr = (uintptr_t)page_address(page);
	struct mem_region *r = page_region(page);
	uintptr_t base = (uintptr_t)r;

	CHECK(IS_ALIGNED(base, SECTION_SIZE));
	CHECK_EQ(r->kind, REGION_SECTION);
	CHECK_EQ(r->flags, PG_reserved);
	CHECK_EQ(r->nr_slots, 1);
	CHECK_EQ(r->first_page, SECTION_FIRST_PAGE);
	if (address_space_limited())	/* mapped as carved: 4 MiB at least */
		CHECK(r->nr_pages >= 1024 && r->nr_pages <= PAGES_PER_SECTION - SECTION_FIRST_PAGE);
	else
		CHECK_EQ(r->nr_pages, PAGES_PER_SECTION - SECTION_FIRST_PAGE);
	CHECK(addr >= base + (r->first_page << PAGE_SHIFT));
	CHECK(addr < base + SECTION_SIZE);
	/* Descriptor and page are in the same region; arithmetic both ways. */
	CHECK_EQ((uintptr_t)page, base + ((addr - base) >> PAGE_SHIFT) * 32);
	CHECK(memmap_page_address(page) == (void *)addr);
	CHECK(memmap_page_valid(page));
	CHECK(!memmap_page_valid((struct page *)r));		/* the header */
	CHECK(!memmap_page_valid((struct page *)r + 1));	/* a mem_map page */
	CHECK(!memmap_page_valid((struct page *)((char *)page + 1)));
	CHECK(!memmap_page_valid((struct page *)addr));		/* data, not a descriptor */
	/* The first and the last byte of the section are ours. */
	CHECK(memmap_virt_to_page((void *)base) == (struct page *)r);
	CHECK(memmap_virt_to_page((void *)(base + SECTION_SIZE - 1)) ==
	      (struct page *)r + PAGES_PER_SECTION - 1);
	/* One byte either side is not (unless another region sits there). */
	if (memmap_region_base(base - 1) == 0)
		CHECK(memmap_virt_to_page((void *)(base - 1)) == NULL);
	if (memmap_region_base(base + SECTION_SIZE) == 0)
		CHECK(memmap_virt_to_page((void *)(base + SECTION_SIZE)) == NULL);
	__free_pages(page, 0);
}

/*
 * The section table is a mapping of its own, made with the first region:
 * not bss, which would make the library's image 8 MiB (test_image), and
 * never backed by huge pages, so its one touched page costs one page.
 */
static void section_table_is_its_own_mapping(void)
{
	struct page *page = alloc_pages(GFP_KERNEL, 0);
	CHECK(page != NULL);
	const uint32_t *table = memmap_table();
	CHECK(table != NULL);
	struct smaps_vma v = smaps_vma_of(table);
	CHECK(v.found && v.anonymous);
	CHECK(v.lo == (uintptr_t)table && v.hi - v.lo >= NR_SECTION_SLOTS * sizeof(uint32_t));
	if (have_thp())
		CHECK(v.no_huge);
	__free_pages(page, 0);
}

/*
 * NULL, which free() sees more than any other pointer that is no object,
 * is refused without reading the table: table[0]'s page stays untouched (a
 * read would map the zero page, or on some kernels a page of its own).
 */
/* Is the page holding @addr mapped in (a read maps the zero page: mincore counts it)? */
static bool page_resident(const void *addr)
{
	long n = resident_pages(addr, 1);
	CHECK(n >= 0);
	return n > 0;
}

static void null_lookup_reads_no_table_page(void)
{
	struct page *page = alloc_pages(GFP_KERNEL, 0);
	CHECK(page != NULL);
	const uint32_t *table = memmap_table();
	/* The watch works: the page naming our section was written. */
	CHECK(page_resident(&table[(uintptr_t)page_address(page) >> SECTION_SHIFT]));
	if (page_resident(table)) {
		/* A region of ours below 64 GiB: nothing to see. */
		printf("   (table[0]'s page is in use here)\n");
	} else {
		CHECK(memmap_virt_to_page(NULL) == NULL);
		CHECK(virt_to_page(NULL) == NULL);
		kfree(NULL);
		CHECK(!page_resident(table));
	}
	/* The one address the check lets through past the last slot. */
	CHECK_EQ(memmap_slot(1UL << ADDR_BITS), 0);
	__free_pages(page, 0);
}

/*
 * Sections are never backed by transparent huge pages, whatever the
 * system's setting: under THP "always" the first slab would cost 2 MiB.
 * A large region's mem_map is not either; its data is left to the system.
 */
static void regions_without_huge_pages(void)
{
	if (!have_thp())
		return;
	struct page *page = alloc_pages(GFP_KERNEL, 0);
	CHECK(page != NULL);
	struct mem_region *r = page_region(page);
	CHECK(smaps_vma_of(r).no_huge);
	CHECK(smaps_vma_of(page_address(page)).no_huge);
	if (!address_space_limited())	/* else the slot's end is not mapped yet */
		CHECK(smaps_vma_of((char *)r + SECTION_SIZE - 1).no_huge);
	__free_pages(page, 0);

	unsigned int order = MAX_PAGE_ORDER + 1;
	struct page *big = alloc_pages(GFP_KERNEL, order);
	CHECK(big != NULL);
	if (!big)
		return;
	CHECK(smaps_vma_of(page_region(big)).no_huge);
	CHECK(!smaps_vma_of(page_address(big)).no_huge);
	__free_pages(big, order);
}

static void tails_find_their_head(void)
{
	struct page *head = alloc_pages(GFP_KERNEL, 3);
	CHECK(head != NULL);
	char *a = page_address(head);
	for (int i = 0; i < 8; i++) {
		struct page *p = memmap_virt_to_page(a + i * PAGE_SIZE + 100);
		CHECK(p == head + i);
		CHECK(compound_head(p) == head);
	}
	CHECK_EQ(head->order, 3);
	CHECK(head->flags & PG_head);
	__free_pages(head, 3);
}

static void large_region_spans_slots(void)
{
	/*
	 * 2^15 pages = 128 MiB, naturally aligned: the mem_map at the region's
	 * start, the data at the next 128 MiB boundary, four slots in all.
	 */
	unsigned int order = 15;
	struct page *page = alloc_pages(GFP_KERNEL, order);
	CHECK(page != NULL);
	if (!page)
		return;
	struct mem_region *r = page_region(page);
	char *a = page_address(page);
	size_t bytes = PAGE_SIZE << order;

	CHECK_EQ(r->kind, REGION_LARGE);
	CHECK_EQ(r->nr_slots, 4);
	CHECK_EQ(r->first_page, 1UL << order);
	CHECK(IS_ALIGNED((uintptr_t)page_address(page), PAGE_SIZE << order));
	CHECK_EQ(r->nr_pages, 1UL << order);
	CHECK(page == region_first_page(r));
	CHECK(page->flags & PG_large);
	/* Every slot of the region leads to the one header. */
	for (size_t off = 0; off < bytes; off += SECTION_SIZE / 2)
		CHECK(page_region(memmap_virt_to_page(a + off)) == r);
	struct page *last = memmap_virt_to_page(a + bytes - 1);
	CHECK(memmap_page_address(last) == a + bytes - PAGE_SIZE);
	/* Tails of a large region are never written. */
	CHECK_EQ(last->flags, 0);
	/* Between mem_map and data the reservation is ours: zero descriptors. */
	uintptr_t gap = (uintptr_t)r + SECTION_SIZE + 12345;
	struct page *guard = memmap_virt_to_page((void *)gap);
	CHECK(guard != NULL && guard->flags == 0 && !memmap_page_valid(guard));
	CHECK(memmap_in_large_region(a) && memmap_in_large_region((void *)gap));
	__free_pages(page, order);
	CHECK(memmap_virt_to_page(a) == NULL);
	CHECK(memmap_virt_to_page((void *)gap) == NULL);
}

/*
 * A new region's header page, the page describing its first data pages and
 * its table page come in with a call, not a fault each: a section's first
 * block (the first below 4 GiB here) and a large region fault nothing in.
 */
static void new_regions_fault_nothing_in(void)
{
	int fd = fault_counter();
	if (fd < 0 || UNDER_TSAN) {
		fprintf(stderr, "   (%s: not counted)\n", fd < 0 ? "no perf page-fault counter here" :
			"ThreadSanitizer's shadow faults too");
		if (fd >= 0)
			close(fd);
		return;
	}
	uint64_t before = faults_now(fd);
	struct page *low = alloc_pages(GFP_DMA32, 0);
	struct page *large = alloc_pages(GFP_KERNEL, MAX_PAGE_ORDER + 1);
	CHECK(low != NULL && large != NULL);
	CHECK_EQ(page_region(low)->kind, REGION_SECTION);
	CHECK_EQ(page_region(large)->kind, REGION_LARGE);
	uint64_t faults = faults_now(fd) - before;
	close(fd);
	fprintf(stderr, "   a new section and a new large region: %llu page faults\n",
		(unsigned long long)faults);
	CHECK(faults <= 1);	/* 4, and up to 2 table pages, without the calls */
	__free_pages(low, 0);
	__free_pages(large, MAX_PAGE_ORDER + 1);
}

int main(void)
{
	RUN(descriptor_layout);
	RUN(lookups_before_any_allocation);
	RUN(section_header_and_lookups);
	RUN(section_table_is_its_own_mapping);
	RUN(null_lookup_reads_no_table_page);
	RUN(regions_without_huge_pages);
	RUN(tails_find_their_head);
	RUN(large_region_spans_slots);
	RUN(new_regions_fault_nothing_in);
	CHECK_EQ(page_alloc_validate(), 0);
	return check_done();
}
