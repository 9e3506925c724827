// SPDX-License-Identifier: MIT
/*
 * test_page_alloc.c - the kernel page API over the buddy allocator:
 * every order, alignment, round trips, coalescing, zeroing, DMA32,
 * large orders, and bad input that must be reported and ignored.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include <slub.h>
#include "check.h"
#include "page/memmap.h"
#include "base/options.h"
#include "base/os.h"
#include "page/page_alloc.h"
#include "base/report.h"
#include "page/local_zone.h"

#define NR 4

static unsigned long free_blocks(enum zone_type zt, int order)
{
	unsigned long nr_free[MAX_PAGE_ORDER + 1];
	page_alloc_buddyinfo(numa_node_id(), zt, nr_free, NULL);
	return nr_free[order];
}

static void every_order_allocates_aligned_distinct(void)
{
	unsigned long addr[MAX_PAGE_ORDER + 1][NR];

	for (int o = 0; o <= MAX_PAGE_ORDER; o++)
		for (int i = 0; i < NR; i++) {
			struct page *page = alloc_pages(GFP_KERNEL, (unsigned int)o);
			CHECK(page != NULL);
			if (!page)
				return;
			unsigned long a = (unsigned long)page_address(page);
			addr[o][i] = a;
			CHECK(a != 0);
			CHECK((a & ((PAGE_SIZE << o) - 1)) == 0);	/* natural alignment */
			CHECK(virt_to_page((void *)a) == page);
			/* Every page of the block resolves to its own descriptor. */
			for (unsigned long p = 0; p < 1UL << o; p++) {
				void *pa = (void *)(a + p * PAGE_SIZE);
				CHECK(page_address(virt_to_page(pa)) == pa);
				CHECK(virt_to_page((char *)pa + PAGE_SIZE - 1) == virt_to_page(pa));
			}
			CHECK_EQ(page_to_nid(page), numa_node_id());	/* pinned: this CPU's node */
			/* Write the whole block: it must be ours to use. */
			memset((void *)a, 0x40 + o, PAGE_SIZE << o);
		}
	/* Distinct and non-overlapping: the patterns survived. */
	for (int o = 0; o <= MAX_PAGE_ORDER; o++)
		for (int i = 0; i < NR; i++) {
			unsigned char *p = (unsigned char *)addr[o][i];
			CHECK(p[0] == 0x40 + o && p[(PAGE_SIZE << o) - 1] == 0x40 + o);
			for (int j = 0; j < NR; j++)
				for (int q = 0; q <= MAX_PAGE_ORDER; q++)
					if ((q != o || j != i) && addr[q][j] >= addr[o][i])
						CHECK(addr[q][j] >= addr[o][i] + (PAGE_SIZE << o));
		}
	for (int o = 0; o <= MAX_PAGE_ORDER; o++)
		for (int i = 0; i < NR; i++)
			free_pages(addr[o][i], (unsigned int)o);
	CHECK_EQ(page_alloc_validate(), 0);
}

static void coalescing_restores_max_order(void)
{
	page_alloc_drain_pcp();
	unsigned long before = free_blocks(ZONE_NORMAL, MAX_PAGE_ORDER);
	unsigned long n = MAX_ORDER_NR_PAGES * 2 + 5;	/* spans three 4 MiB blocks */
	unsigned long *pages = calloc(n, sizeof(*pages));

	for (unsigned long i = 0; i < n; i++) {
		pages[i] = __get_free_page(GFP_KERNEL);
		CHECK(pages[i] != 0);
	}
	CHECK(free_blocks(ZONE_NORMAL, MAX_PAGE_ORDER) < before);
	CHECK_EQ(page_alloc_validate(), 0);
	/* Free in a scattered order so merges happen from both sides. */
	for (unsigned long i = 0; i < n; i += 2)
		free_page(pages[i]);
	for (unsigned long i = 1; i < n; i += 2)
		free_page(pages[i]);
	page_alloc_drain_pcp();		/* per-CPU lists hold back some pages */
	CHECK_EQ(free_blocks(ZONE_NORMAL, MAX_PAGE_ORDER), before);
	/* Below the order of a section's first block (whose buddy is the link table). */
	for (int o = 0; o < __builtin_ctzl(SECTION_FIRST_PAGE); o++)
		CHECK_EQ(free_blocks(ZONE_NORMAL, o), 0);
	CHECK_EQ(page_alloc_validate(), 0);
	free(pages);
}

static bool all_zero(const void *p, size_t n)
{
	const unsigned char *c = p;
	for (size_t i = 0; i < n; i++)
		if (c[i])
			return false;
	return true;
}

static void zeroed_pages_are_zero_after_dirty_reuse(void)
{
	unsigned long dirty[64];
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < 64; i++) {
			dirty[i] = __get_free_pages(GFP_KERNEL, (unsigned int)(i % 4));
			CHECK(dirty[i] != 0);
			memset((void *)dirty[i], 0xff, PAGE_SIZE << (i % 4));
		}
		for (int i = 0; i < 64; i++)
			free_pages(dirty[i], (unsigned int)(i % 4));
		for (int i = 0; i < 64; i++) {
			unsigned int o = (unsigned int)(i % 4);
			unsigned long z = o ? (unsigned long)page_address(
					alloc_pages(GFP_KERNEL | __GFP_ZERO, o))
				: get_zeroed_page(GFP_KERNEL);
			CHECK(z != 0);
			CHECK(all_zero((void *)z, PAGE_SIZE << o));
			dirty[i] = z;
		}
		for (int i = 0; i < 64; i++)
			free_pages(dirty[i], (unsigned int)(i % 4));
	}
	CHECK_EQ(page_alloc_validate(), 0);
}

static void dma32_is_below_4g(void)
{
	unsigned long a[MAX_PAGE_ORDER + 3];
	for (int o = 0; o <= MAX_PAGE_ORDER + 2; o++) {
		a[o] = __get_free_pages(o & 1 ? GFP_DMA32 : GFP_DMA, (unsigned int)o);
		CHECK(a[o] != 0);
		CHECK(a[o] + (PAGE_SIZE << o) <= 1UL << 32);
		memset((void *)a[o], 1, PAGE_SIZE << o);
	}
	unsigned long normal = __get_free_page(GFP_KERNEL);
	CHECK(normal != 0);
	for (int o = 0; o <= MAX_PAGE_ORDER + 2; o++)
		free_pages(a[o], (unsigned int)o);
	free_page(normal);
	page_alloc_drain_pcp();
	CHECK(free_blocks(ZONE_DMA32, MAX_PAGE_ORDER) > 0);
	CHECK_EQ(page_alloc_validate(), 0);
}

static void large_orders_use_direct_mappings(void)
{
	for (unsigned int o = MAX_PAGE_ORDER + 1; o <= MAX_PAGE_ORDER + 4; o++) {
		struct page *page = alloc_pages(GFP_KERNEL | __GFP_ZERO, o);
		CHECK(page != NULL);
		if (!page)
			continue;
		char *a = page_address(page);
		CHECK(((uintptr_t)a & ((PAGE_SIZE << o) - 1)) == 0);	/* naturally aligned */
		CHECK(virt_to_page(a) == page);
		char *last = a + (PAGE_SIZE << o) - 1;
		CHECK(all_zero(a, PAGE_SIZE) && *last == 0);
		memset(a, 7, PAGE_SIZE << o);
		/* Interior pages resolve and round-trip too. */
		CHECK(page_address(virt_to_page(last)) == (void *)((uintptr_t)last & PAGE_MASK));
		__free_pages(page, o);
		/* Unmapped at once: no longer ours. */
		CHECK(virt_to_page(a) == NULL);
	}
	CHECK_EQ(page_alloc_stats.large_allocs, 0);
}

static void dma32_address_space_is_reused(void)
{
	/* Far more 8 MiB blocks in turn than fit below 4 GiB at once. */
	for (int i = 0; i < 600; i++) {
		struct page *page = alloc_pages(GFP_DMA32, MAX_PAGE_ORDER + 1);
		CHECK(page != NULL);
		if (!page)
			break;
		uintptr_t a = (uintptr_t)page_address(page);
		CHECK(a + (PAGE_SIZE << (MAX_PAGE_ORDER + 1)) <= 1UL << 32);
		CHECK(IS_ALIGNED(a, PAGE_SIZE << (MAX_PAGE_ORDER + 1)));
		__free_pages(page, MAX_PAGE_ORDER + 1);
	}
	unsigned long small = __get_free_page(GFP_DMA32);
	CHECK(small != 0);
	free_page(small);
	CHECK_EQ(page_alloc_validate(), 0);
}

static void oom_too_large_order(void)
{
	unsigned long e = slub_errors();
	errno = 0;
	CHECK(alloc_pages(GFP_KERNEL, 40) == NULL);
	CHECK_EQ(errno, ENOMEM);
	CHECK_EQ(slub_errors(), e + 1);
	char msg[SLUB_REPORT_LINE];
	slub_report_last(msg, sizeof(msg));
	CHECK(strstr(msg, "page allocation failure: order:40") != NULL);
	errno = 0;
	CHECK(__get_free_pages(GFP_KERNEL | __GFP_NOWARN, 63) == 0);
	CHECK_EQ(errno, ENOMEM);
	CHECK_EQ(slub_errors(), e + 1);	/* __GFP_NOWARN: silent */
	CHECK_EQ(page_alloc_validate(), 0);
}

/* A bad call must be reported once and leave the free lists consistent. */
#define EXPECT_BAD_FREE(call, text)                                             \
	do {                                                                     \
		EXPECT_REPORT(call, text);                                       \
		CHECK_EQ(page_alloc_validate(), 0);                              \
	} while (0)

static void bad_frees_are_reported_and_ignored(void)
{
	int on_stack;
	static int in_data;
	char *heap = malloc(64);
	page_alloc_drain_pcp();
	unsigned long free_before = free_blocks(ZONE_NORMAL, MAX_PAGE_ORDER);

	unsigned long e = slub_errors();
	free_pages(0, 0);
	free_pages(0, 5);
	CHECK_EQ(slub_errors(), e);

	EXPECT_BAD_FREE(free_pages((unsigned long)&on_stack, 0), "invalid address");
	EXPECT_BAD_FREE(free_pages((unsigned long)&in_data, 0), "invalid address");
	EXPECT_BAD_FREE(free_pages((unsigned long)heap, 0), "invalid address");
	EXPECT_BAD_FREE(free_pages(0xdeadbeef000UL, 0), "invalid address");
	EXPECT_BAD_FREE(free_pages(~0UL & PAGE_MASK, 0), "invalid address");
	EXPECT_BAD_FREE(__free_pages((struct page *)&on_stack, 0), "invalid page");
	EXPECT_BAD_FREE(__free_pages(NULL, 0), "invalid page");

	unsigned long a = __get_free_pages(GFP_KERNEL, 2);
	struct page *pg = virt_to_page((void *)a);
	CHECK(a != 0);
	EXPECT_BAD_FREE(free_pages(a + 8, 2), "not page aligned");
	EXPECT_BAD_FREE(free_pages(a + PAGE_SIZE, 0), "not its head");
	EXPECT_BAD_FREE(free_pages(a, 1), "block has order 2");
	EXPECT_BAD_FREE(free_pages(a, 3), "block has order 2");
	/* Misaligned descriptor pointers are not descriptors. */
	EXPECT_BAD_FREE(__free_pages((struct page *)((char *)pg + 8), 2), "invalid page");
	/* The region's own mem_map is not allocatable memory. */
	EXPECT_BAD_FREE(free_pages((unsigned long)pg & PAGE_MASK, 0), "invalid address");
	free_pages(a, 2);
	CHECK_EQ(page_alloc_validate(), 0);
	EXPECT_BAD_FREE(free_pages(a, 2), "double free");
	EXPECT_BAD_FREE(__free_pages(pg, 2), "double free");

	CHECK_EQ(slub_errors(), e + 15);
	/* A freed block that merged: its head is now inside a free block. */
	unsigned long pair = __get_free_pages(GFP_KERNEL, 1);
	free_pages(pair, 1);
	page_alloc_drain_pcp();		/* into the buddy lists, where it merges */
	EXPECT_BAD_FREE(free_page(pair + PAGE_SIZE), "not an allocated block");
	EXPECT_BAD_FREE(free_page(pair), "not an allocated block");

	/* Large blocks: tail, wrong order, double free. */
	struct page *big = alloc_pages(GFP_KERNEL, MAX_PAGE_ORDER + 1);
	CHECK(big != NULL);
	char *ba = page_address(big);
	EXPECT_BAD_FREE(free_pages((unsigned long)ba + PAGE_SIZE, MAX_PAGE_ORDER + 1), "not its head");
	EXPECT_BAD_FREE(__free_pages(big, MAX_PAGE_ORDER + 2), "the block has order 11");
	__free_pages(big, MAX_PAGE_ORDER + 1);
	EXPECT_BAD_FREE(free_pages((unsigned long)ba, MAX_PAGE_ORDER + 1), "invalid address");

	page_alloc_drain_pcp();
	CHECK_EQ(free_blocks(ZONE_NORMAL, MAX_PAGE_ORDER), free_before);
	free(heap);
}

static void foreign_pointers_are_not_ours(void)
{
	int local;
	static int global;
	void *heap = malloc(100);
	void *big_heap = malloc(1 << 24);
	const void *wild[] = {
		NULL, &local, &global, heap, big_heap, (void *)foreign_pointers_are_not_ours,
		(void *)16, (void *)0xdeadbeefUL, (void *)(1UL << 47),
		(void *)((1UL << 47) - 1), (void *)~0UL, (void *)0xffff800000000000UL,
		(void *)0x8000000000000000UL,
	};
	for (size_t i = 0; i < sizeof(wild) / sizeof(wild[0]); i++)
		CHECK(virt_to_page(wild[i]) == NULL);
	CHECK(page_address(NULL) == NULL);
	CHECK(page_address((struct page *)&local) == NULL);
	CHECK_EQ(page_to_nid(NULL), NUMA_NO_NODE);
	free(heap);
	free(big_heap);
}

/* A page of someone else's mapped in [from, to), or NULL if none fits. */
static void *map_foreign_page(char *from, char *to)
{
	for (char *at = (char *)ALIGN_UP((uintptr_t)from, 1UL << 20); at < to; at += 1UL << 20) {
		void *p = mmap(at, PAGE_SIZE, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (p == at)
			return p;
		if (p != MAP_FAILED)
			munmap(p, PAGE_SIZE);
	}
	return NULL;
}

/* Child: 0, or what failed. */
static int foreign_mappings_in_our_slots(void)
{
	/* A large region reserves its data, not the rest of its slot. */
	struct page *big = alloc_pages(GFP_KERNEL, MAX_PAGE_ORDER + 1);
	if (!big)
		return 3;
	char *data = page_address(big);
	char *slot_end = (char *)ALIGN_UP((uintptr_t)data + 1, SECTION_SIZE);
	void *foreign = map_foreign_page(data + (PAGE_SIZE << (MAX_PAGE_ORDER + 1)), slot_end);
	if (!foreign)
		return 4;	/* the slot was reserved whole: nothing to test */
	if (virt_to_page(foreign) || page_address(virt_to_page(data)) != data)
		return 10;
	/* A section made under the limit maps its slot as it carves it. */
	struct zone *z = local_zone(ZONE_NORMAL);
	struct mem_region *old = z->sections;
	unsigned long got[64];
	int n = 0;
	while (n < 64 && z->sections == old &&
	       (got[n] = __get_free_pages(GFP_KERNEL | __GFP_NOWARN, MAX_PAGE_ORDER)))
		n++;
	if (z->sections == old)
		return 5;
	struct mem_region *r = z->sections;
	void *in_section = map_foreign_page((char *)r + r->reserved_bytes, (char *)r + SECTION_SIZE);
	if (!in_section)
		return 6;
	if (virt_to_page(in_section))
		return 11;
	while (n--)
		free_pages(got[n], MAX_PAGE_ORDER);
	__free_pages(big, MAX_PAGE_ORDER + 1);
	return 0;
}

/*
 * Under a limit on address space our regions leave parts of their 64 MiB
 * slots unmapped, and someone else's mappings may lie there: virt_to_page()
 * of them must still answer "not ours".
 */
static void foreign_mapping_in_our_slot(void)
{
	CHECK_EQ(child_under_address_limit(96UL << 20, foreign_mappings_in_our_slots), 0);
}

static void unknown_node_is_any_node(void)
{
	struct page *a = alloc_pages_node(7, GFP_KERNEL, 1);
	struct page *b = alloc_pages_node(-5, GFP_KERNEL, 0);
	struct page *c = alloc_pages_node(NUMA_NO_NODE, GFP_KERNEL, 0);
	CHECK(a && b && c);
	/* The local node's, as NUMA_NO_NODE (node 7 exists only past 7 nodes). */
	if (nr_node_ids <= 7)
		CHECK_EQ(page_to_nid(a), numa_node_id());
	CHECK_EQ(page_to_nid(b), numa_node_id());
	CHECK_EQ(page_to_nid(c), numa_node_id());
	__free_pages(a, 1);
	__free_pages(b, 0);
	__free_pages(c, 0);
	CHECK_EQ(page_alloc_validate(), 0);
}

/* Extents: any page count, any power-of-two alignment, nothing lost. */
static void extent_round(void)
{
	static const unsigned long counts[] = { 1, 2, 3, 5, 7, 8, 9, 100, 257, 1000, 1023, 1024,
						1025, 3000 };
	static const unsigned long aligns[] = { 0, PAGE_SIZE, 16 * PAGE_SIZE, 1UL << 22, 1UL << 23 };
	for (size_t a = 0; a < ARRAY_SIZE(aligns); a++) {
		struct page *e[ARRAY_SIZE(counts)];
		for (size_t i = 0; i < ARRAY_SIZE(counts); i++) {
			e[i] = alloc_pages_extent(GFP_KERNEL | __GFP_ZERO, counts[i], aligns[a]);
			CHECK(e[i] != NULL);
			char *p = page_address(e[i]);
			unsigned long align = aligns[a] > PAGE_SIZE ? aligns[a] : PAGE_SIZE;
			CHECK(((uintptr_t)p & (align - 1)) == 0);
			CHECK(all_zero(p, counts[i] * PAGE_SIZE));
			memset(p, 0xa5, counts[i] * PAGE_SIZE);	/* every page is ours */
		}
		CHECK_EQ(page_alloc_validate(), 0);
		for (size_t i = 0; i < ARRAY_SIZE(counts); i++)
			free_pages_extent(e[i], counts[i]);
		CHECK_EQ(page_alloc_validate(), 0);
	}
	page_alloc_drain_pcp();
}

static void extents_are_exact(void)
{
	unsigned long before[MAX_PAGE_ORDER + 1], after[MAX_PAGE_ORDER + 1];
	extent_round();		/* the zone grows to what the round needs */
	page_alloc_buddyinfo(numa_node_id(), ZONE_NORMAL, before, NULL);
	extent_round();
	/* What rounding up took was given back: every block merged again. */
	page_alloc_buddyinfo(numa_node_id(), ZONE_NORMAL, after, NULL);
	for (int o = 0; o <= MAX_PAGE_ORDER; o++)
		CHECK_EQ(after[o], before[o]);
	/* A block of an extent is freed with its extent's count, or reported. */
	struct page *e = alloc_pages_extent(GFP_KERNEL, 5, 0);
	EXPECT_REPORT(__free_pages(e, 3), "the block has order 2");
	CHECK_EQ(page_alloc_stats.extents, 1);
	CHECK_EQ(page_alloc_stats.extent_pages, 5);
	free_pages_extent(e, 5);
	CHECK_EQ(page_alloc_stats.extents, 0);
	CHECK_EQ(page_alloc_stats.extent_pages, 0);
	CHECK_EQ(page_alloc_validate(), 0);
	/*
	 * Only the heads of an extent's blocks are written (1000 pages: blocks
	 * of 512, 256, 128, 64, 32 and 8); its tails stay zero, so the memory
	 * map of a big buffer the program never touches is not touched either.
	 */
	struct page *t = alloc_pages_extent(GFP_KERNEL, 1000, 0);
	unsigned long written = 0;
	for (unsigned long i = 0; i < 1000; i++)
		written += page_flags(t + i) != 0 || t[i].compound_head != 0;
	CHECK_EQ(written, 6);
	CHECK(resize_pages_extent(t, 1000, 600) && resize_pages_extent(t, 600, 1000));
	written = 0;
	for (unsigned long i = 0; i < 1000; i++)
		written += page_flags(t + i) != 0 || t[i].compound_head != 0;
	CHECK_EQ(written, 6);
	free_pages_extent(t, 1000);
	CHECK_EQ(page_alloc_validate(), 0);
}

/*
 * A buddy extent grows where it lies into the free pages after it, as a
 * doubling buffer does, and shrinks by giving its tail back; a page in use
 * in the way, or a start not aligned for the new cut, makes it refuse.
 */
static void extents_resize_in_place(void)
{
	unsigned long before[MAX_PAGE_ORDER + 1], after[MAX_PAGE_ORDER + 1];
	struct page *probe = alloc_pages_extent(GFP_KERNEL, 1, 0);
	free_pages_extent(probe, 1);
	page_alloc_buddyinfo(numa_node_id(), ZONE_NORMAL, before, NULL);

	/* 513 pages: a start aligned for any cut up to MAX_ORDER_NR_PAGES. */
	struct page *e = alloc_pages_extent(GFP_KERNEL, 513, 0);
	CHECK(resize_pages_extent(e, 513, 3));
	CHECK_EQ(page_alloc_stats.extent_pages, 3);
	char *data = page_address(e);
	memset(data, 0x3c, 3 * PAGE_SIZE);
	unsigned long nr = 3;
	for (unsigned long next = 5; next <= MAX_ORDER_NR_PAGES; nr = next, next = next * 2 - 1) {
		if (!resize_pages_extent(e, nr, next)) {
			CHECK(!"grew in place");
			break;
		}
		CHECK(page_address(e) == data);
		memset(data + nr * PAGE_SIZE, 0x3c, (next - nr) * PAGE_SIZE);
		CHECK_EQ(page_alloc_stats.extent_pages, next);
		CHECK_EQ(page_alloc_validate(), 0);
	}
	CHECK(data[0] == 0x3c && data[nr * PAGE_SIZE - 1] == 0x3c);
	/* Past MAX_ORDER_NR_PAGES: not a buddy extent any more. */
	CHECK(resize_pages_extent(e, nr, MAX_ORDER_NR_PAGES));
	nr = MAX_ORDER_NR_PAGES;
	CHECK(!resize_pages_extent(e, nr, MAX_ORDER_NR_PAGES + 1));
	/* 257 pages: the rest of its block of 512 was given back; it grows into it. */
	struct page *f = alloc_pages_extent(GFP_KERNEL, 257, 0);
	CHECK(resize_pages_extent(f, 257, 512));
	free_pages_extent(f, 512);
	/* Shrink, then grow back over what was given. */
	CHECK(resize_pages_extent(e, nr, 7));
	CHECK_EQ(page_alloc_stats.extent_pages, 7);
	CHECK_EQ(page_alloc_validate(), 0);
	CHECK(resize_pages_extent(e, 7, 8));
	/* A page in use right after the extent: no growth. */
	enum { TRIES = 4096 };
	struct page **taken = calloc(TRIES, sizeof(*taken));
	int n = 0;
	while (n < TRIES && (taken[n] = alloc_pages(GFP_KERNEL, 0)) != e + 8)
		n++;
	CHECK(n < TRIES);
	CHECK(!resize_pages_extent(e, 8, 12));
	CHECK_EQ(page_alloc_stats.extent_pages, 8);
	for (int i = 0; i <= n && i < TRIES; i++)
		__free_pages(taken[i], 0);
	free(taken);
	page_alloc_drain_pcp();
	CHECK(resize_pages_extent(e, 8, 12));
	/* A one-page extent at an odd page cannot become a block of two. */
	struct page *one[4];
	int k;
	for (k = 0; k < 4; k++) {
		one[k] = alloc_pages_extent(GFP_KERNEL, 1, 0);
		if (page_index(one[k], page_region(one[k])) & 1)
			break;
	}
	CHECK(k < 4);
	CHECK(!resize_pages_extent(one[k], 1, 2));
	for (int i = 0; i <= k && i < 4; i++)
		free_pages_extent(one[i], 1);
	free_pages_extent(e, 12);
	page_alloc_drain_pcp();
	CHECK_EQ(page_alloc_stats.extent_pages, 0);
	CHECK_EQ(page_alloc_validate(), 0);
	page_alloc_buddyinfo(numa_node_id(), ZONE_NORMAL, after, NULL);
	for (int o = 0; o <= MAX_PAGE_ORDER; o++)
		CHECK_EQ(after[o], before[o]);
}

/*
 * Another thread's mapping, as if its mmap() landed in a hole the kernel
 * just made: one page at @at, which must outlive what we do after.
 */
static void *foreign;

static void map_foreign(void *at)
{
	foreign = mmap(at, PAGE_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	CHECK(foreign == at);
	memset(foreign, 0x5a, PAGE_SIZE);
}

static bool foreign_alive(void)
{
	bool mapped = resident_pages(foreign, PAGE_SIZE) >= 0 &&
		      ((unsigned char *)foreign)[7] == 0x5a;
	munmap(foreign, PAGE_SIZE);
	return mapped;
}

static void *move_target;

/* As Linux fails an MREMAP_FIXED move on the charge: the target unmapped first. */
static void *failing_mremap(void *old, size_t old_len, size_t new_len, int flags, void *to)
{
	(void)old, (void)old_len, (void)flags;
	move_target = to;
	munmap(to, new_len);
	map_foreign((char *)to + new_len / 2);
	errno = ENOMEM;
	return MAP_FAILED;
}

/* A failure that leaves the target as it was (Linux: a block split by mprotect, EFAULT). */
static void *refusing_mremap(void *old, size_t old_len, size_t new_len, int flags, void *to)
{
	(void)old, (void)old_len, (void)new_len, (void)flags;
	move_target = to;
	errno = EFAULT;
	return MAP_FAILED;
}

static bool unmapped(void *p)
{
	return resident_pages(p, PAGE_SIZE) < 0 && errno == ENOMEM;
}

/* Nothing mapped at the start of the region that held @data (its header page)? */
static bool region_gone(void *data)
{
	return unmapped((void *)((uintptr_t)data & ~(SECTION_SIZE - 1)));
}

/* A move that works, and another thread maps into the old data's place at once. */
static void *racing_mremap(void *old, size_t old_len, size_t new_len, int flags, void *to)
{
	void *p = mremap(old, old_len, new_len, flags, to);
	if (p != MAP_FAILED)
		map_foreign((char *)old + old_len / 2);
	return p;
}

static void fill(unsigned char *p, unsigned long pages)
{
	for (unsigned long i = 0; i < pages; i++)
		p[i * PAGE_SIZE] = p[i * PAGE_SIZE + PAGE_SIZE - 1] = (unsigned char)(i * 7 + 1);
}

static bool filled(const unsigned char *p, unsigned long pages)
{
	for (unsigned long i = 0; i < pages; i++)
		if (p[i * PAGE_SIZE] != (unsigned char)(i * 7 + 1) ||
		    p[i * PAGE_SIZE + PAGE_SIZE - 1] != (unsigned char)(i * 7 + 1))
			return false;
	return true;
}

/* An extent of @nr pages, each marked (fill), at *@data. */
static struct page *filled_extent(unsigned long nr, unsigned char **data)
{
	struct page *e = alloc_pages_extent(GFP_KERNEL, nr, 0);
	CHECK(e != NULL);
	*data = page_address(e);
	fill(*data, nr);
	return e;
}

/*
 * An extent with a mapping of its own that outgrows its region's slots
 * moves its pages to a new region (mremap), keeping every byte; the old
 * address is nobody's after.  A moved extent grows inside its mapping
 * (mapped a quarter larger), and past it moves again, never growing a
 * second mapping beside it.  A failing mremap leaves the extent as it was.
 */
static void large_extents_move_their_pages(void)
{
	const unsigned long nr = 3000, big = 20000;	/* 11.7 MiB, then 78 MiB: past a 64 MiB slot */
	unsigned long remapped = page_alloc_stats.remapped_extents;
	unsigned long large = page_alloc_stats.large_allocs;
	unsigned char *old;
	struct page *e = filled_extent(nr, &old);
	CHECK(!resize_pages_extent(e, nr, big));	/* beyond its slot: refused in place */

	slub_os.mremap = failing_mremap;
	CHECK(remap_pages_extent(e, nr, big) == NULL);
	slub_os = slub_os_default;
	CHECK(foreign_alive());		/* the new region went, not the hole's new tenant */
	CHECK(region_gone(move_target));
	CHECK(virt_to_page(old) == e && filled(old, nr));
	slub_os.mremap = refusing_mremap;
	CHECK(remap_pages_extent(e, nr, big) == NULL);
	slub_os = slub_os_default;
	CHECK(region_gone(move_target) && unmapped(move_target));	/* still ours: all went */
	CHECK(virt_to_page(old) == e && filled(old, nr));
	CHECK_EQ(page_alloc_stats.large_allocs, large + 1);	/* the new region went */
	CHECK_EQ(page_alloc_validate(), 0);

	slub_os.mremap = racing_mremap;
	struct page *m = remap_pages_extent(e, nr, big);
	slub_os = slub_os_default;
	CHECK(m != NULL);
	CHECK(foreign_alive());		/* the old region went around it */
	unsigned char *p = page_address(m);
	CHECK(p != old);
	CHECK(virt_to_page(old) == NULL);
	CHECK(virt_to_page(p) == m && virt_to_page(p + (big - 1) * PAGE_SIZE) == m + big - 1);
	CHECK(filled(p, nr));
	CHECK(p[nr * PAGE_SIZE] == 0 && p[big * PAGE_SIZE - 1] == 0);
	CHECK_EQ(page_alloc_stats.remapped_extents, remapped + 1);
	CHECK_EQ(page_alloc_stats.large_allocs, large + 1);
	CHECK_EQ(page_alloc_validate(), 0);

	/* Inside its mapping in place; past it, no: it moves again. */
	fill(p, big);
	CHECK(resize_pages_extent(m, big, big + big / 4));
	CHECK(!resize_pages_extent(m, big + big / 4, big + big / 4 + 1));
	CHECK(resize_pages_extent(m, big + big / 4, big));
	struct page *m2 = remap_pages_extent(m, big, 2 * big);
	CHECK(m2 != NULL && m2 != m);
	CHECK(filled(page_address(m2), big));
	CHECK_EQ(page_alloc_stats.remapped_extents, remapped + 2);
	CHECK(!remap_pages_extent(m2, 2 * big, big));	/* it only grows */
	free_pages_extent(m2, 2 * big);
	CHECK_EQ(page_alloc_stats.large_allocs, large);
	CHECK_EQ(page_alloc_validate(), 0);

	/* A buddy extent has no mapping of its own to move. */
	struct page *b = alloc_pages_extent(GFP_KERNEL, 5, 0);
	CHECK(remap_pages_extent(b, 5, big) == NULL);
	free_pages_extent(b, 5);
}

/*
 * An extent with a mapping of its own gives its tail to a new region, the
 * pages moved (mremap): every byte kept, none faulted in again.  The old
 * extent keeps its head; the range the tail left is nobody's, so the old
 * extent grows back into it only where nothing else was mapped since.
 */
static void large_extents_split_their_pages(void)
{
	const unsigned long nr = 6000, keep = 2000;	/* 23 MiB, 8 MiB kept */
	unsigned long large = page_alloc_stats.large_allocs;
	unsigned long split = page_alloc_stats.split_extents;
	unsigned char *old;
	struct page *e = filled_extent(nr, &old);
	CHECK(split_pages_extent(e, nr, nr) == NULL && split_pages_extent(e, nr, 0) == NULL);
	struct page *b = alloc_pages_extent(GFP_KERNEL, 5, 0);
	CHECK(split_pages_extent(b, 5, 2) == NULL);	/* a buddy extent: no mapping to cut */
	free_pages_extent(b, 5);

	struct rusage before, after;
	getrusage(RUSAGE_SELF, &before);
	struct page *t = split_pages_extent(e, nr, nr - keep);
	getrusage(RUSAGE_SELF, &after);
	CHECK(t != NULL);
	fprintf(stderr, "   %lu pages split off: %ld page faults\n", nr - keep,
		after.ru_minflt - before.ru_minflt);
	/* 4000 had the pages been copied (ThreadSanitizer's shadow alone takes ~90). */
	CHECK(after.ru_minflt - before.ru_minflt < 256);
	unsigned char *tail = page_address(t);
	bool moved_whole = true;
	for (unsigned long i = 0; i < nr - keep; i++)
		if (tail[i * PAGE_SIZE] != (unsigned char)((keep + i) * 7 + 1))
			moved_whole = false;
	CHECK(moved_whole && filled(old, keep));
	CHECK(virt_to_page(old) == e && virt_to_page(tail) == t);
	CHECK(virt_to_page(old + keep * PAGE_SIZE) == NULL);
	CHECK(unmapped(old + keep * PAGE_SIZE) && unmapped(old + (nr - 1) * PAGE_SIZE));
	CHECK_EQ(page_alloc_stats.large_allocs, large + 2);
	CHECK_EQ(page_alloc_stats.split_extents, split + 1);
	CHECK_EQ(page_alloc_validate(), 0);

	/* The old one grows back in (fresh pages, zero); the moved one only by moving. */
	CHECK(resize_pages_extent(e, keep, keep + 10));
	CHECK(old[keep * PAGE_SIZE] == 0 && old[(keep + 10) * PAGE_SIZE - 1] == 0);
	CHECK(filled(old, keep));
	CHECK(!resize_pages_extent(t, nr - keep, nr - keep + 1));
	CHECK(resize_pages_extent(e, keep + 10, keep));
	/* Someone maps into the range the tail left: the old extent does not grow over it. */
	map_foreign(old + (keep + 20) * PAGE_SIZE);
	CHECK(!resize_pages_extent(e, keep, keep + 30));
	CHECK(resize_pages_extent(e, keep, keep + 10));	/* what it took back stays its own */
	CHECK(filled(old, keep));
	CHECK(resize_pages_extent(e, keep + 10, keep));
	free_pages_extent(e, keep);
	free_pages_extent(t, nr - keep);
	CHECK(foreign_alive());		/* the old region went around it */
	CHECK_EQ(page_alloc_stats.large_allocs, large);
	CHECK_EQ(page_alloc_validate(), 0);

	/*
	 * A failed move may have unmapped its target first, and another
	 * thread's mapping be there at once: it stays; the extent is whole.
	 */
	e = filled_extent(nr, &old);
	slub_os.mremap = failing_mremap;
	CHECK(split_pages_extent(e, nr, nr - keep) == NULL);
	slub_os = slub_os_default;
	CHECK(foreign_alive());
	CHECK(region_gone(move_target));
	slub_os.mremap = refusing_mremap;
	CHECK(split_pages_extent(e, nr, nr - keep) == NULL);
	slub_os = slub_os_default;
	CHECK(region_gone(move_target) && unmapped(move_target));
	CHECK(virt_to_page(old) == e && filled(old, nr));
	CHECK_EQ(page_alloc_stats.large_allocs, large + 1);
	free_pages_extent(e, nr);

	/*
	 * A region of two slots that keeps less than one gives the second up:
	 * a new region may be put there, and must not be unregistered by the
	 * old one's free.
	 */
	const unsigned long two_slots = 20000;	/* 78 MiB */
	e = filled_extent(two_slots, &old);
	uintptr_t second = ((uintptr_t)page_region(e) + SECTION_SIZE);
	CHECK(memmap_virt_to_page((void *)second) != NULL);
	t = split_pages_extent(e, two_slots, two_slots - keep);
	CHECK(t != NULL);
	CHECK(memmap_virt_to_page((void *)second) == NULL);
	CHECK(unmapped((void *)second));
	CHECK(filled(old, keep));
	free_pages_extent(t, two_slots - keep);
	free_pages_extent(e, keep);
	CHECK_EQ(page_alloc_stats.large_allocs, large);
	CHECK_EQ(page_alloc_validate(), 0);
}

/*
 * A large block of slub_thp_mb MiB (16) or more asks for transparent huge
 * pages on its data, where the system's setting is "madvise"; a smaller one
 * is left to the system, as is every mem_map.  The advice follows the
 * block's size: growing to it (in place or moving its pages) asks, and
 * shrinking or being split below it undoes the asking, on the block's own
 * pages, which stay one mapping.  slub_thp_mb=0 (--no-thp): none asks.
 */
static bool block_huge(struct page *block, unsigned long nr)
{
	char *data = page_address(block);
	struct smaps_vma v = smaps_vma_of(data);
	/* One mapping for all of the block, or mremap could not move it. */
	CHECK(v.lo <= (uintptr_t)data && v.hi >= (uintptr_t)(data + (nr << PAGE_SHIFT)));
	return v.huge;
}

static void large_blocks_ask_for_huge_pages(void)
{
	if (!have_thp())
		return;
	bool asks = slub_opt(thp_mb) != 0 && os_thp_setting_is_madvise();
	const unsigned long min = 16UL << (20 - PAGE_SHIFT);

	struct page *e = alloc_pages_extent(GFP_KERNEL, min - 1, 0);
	CHECK(e != NULL);
	char *data = page_address(e);
	CHECK(!block_huge(e, min - 1));
	CHECK(resize_pages_extent(e, min - 1, min));	/* in place: its slot has room */
	struct smaps_vma v = smaps_vma_of(data);
	CHECK_EQ(v.huge, asks);
	CHECK(v.lo == (uintptr_t)data && v.hi == (uintptr_t)(data + (min << PAGE_SHIFT)));
	CHECK(!smaps_vma_of(page_region(e)).huge);
	CHECK(resize_pages_extent(e, min, min / 2));	/* shrunk below: asks no more */
	CHECK(!block_huge(e, min / 2));
	CHECK(resize_pages_extent(e, min / 2, min + 1));	/* and again */
	CHECK_EQ(block_huge(e, min + 1), asks);
	free_pages_extent(e, min + 1);

	struct page *block = alloc_pages(GFP_KERNEL, 12);	/* 16 MiB */
	CHECK(block != NULL);
	CHECK_EQ(block_huge(block, min), asks);
	CHECK(!smaps_vma_of(page_region(block)).huge);
	__free_pages(block, 12);
	block = alloc_pages(GFP_KERNEL, 11);	/* 8 MiB */
	CHECK(block != NULL);
	CHECK(!block_huge(block, min / 2));
	__free_pages(block, 11);

	/* Moved: the new size decides, not the mapping (a quarter larger). */
	const unsigned long nr = 3000, big = 20000;	/* 11.7 MiB, then 78 MiB */
	e = alloc_pages_extent(GFP_KERNEL, nr, 0);
	CHECK(e != NULL && !block_huge(e, nr));
	struct page *m = remap_pages_extent(e, nr, 3300);	/* 12.9 MiB, mapped as 16.1 */
	CHECK(m != NULL);
	if (!m)
		return;
	CHECK(!block_huge(m, 3300));
	struct page *m2 = remap_pages_extent(m, 3300, big);
	CHECK(m2 != NULL);
	if (!m2)
		return;
	CHECK_EQ(block_huge(m2, big), asks);
	CHECK_EQ(smaps_vma_of((char *)page_address(m2) + (big << PAGE_SHIFT) - 1).huge, asks);

	/* Split: each part as its own size says. */
	struct page *tail = split_pages_extent(m2, big, big - min - 100);
	CHECK(tail != NULL);
	if (!tail)
		return;
	CHECK_EQ(block_huge(m2, min + 100), asks);
	CHECK_EQ(block_huge(tail, big - min - 100), asks);
	struct page *tail2 = split_pages_extent(m2, min + 100, 200);
	CHECK(tail2 != NULL);
	if (!tail2)
		return;
	CHECK(!block_huge(m2, min - 100));
	CHECK(!block_huge(tail2, 200));
	free_pages_extent(m2, min - 100);
	free_pages_extent(tail2, 200);
	free_pages_extent(tail, big - min - 100);
	CHECK_EQ(page_alloc_validate(), 0);
}

static void get_order_matches_kernel(void)
{
	CHECK_EQ(get_order(1), 0);
	CHECK_EQ(get_order(PAGE_SIZE), 0);
	CHECK_EQ(get_order(PAGE_SIZE + 1), 1);
	CHECK_EQ(get_order(2 * PAGE_SIZE), 1);
	CHECK_EQ(get_order(3 * PAGE_SIZE), 2);
	CHECK_EQ(get_order(PAGE_SIZE << 10), 10);
	CHECK_EQ(get_order((PAGE_SIZE << 10) + 1), 11);
	CHECK_EQ(get_order(0), 52);
}

/*
 * A section is carved a block at a time, small ones first: one page taken
 * from a new zone writes the region header and the descriptors of one
 * 16-page block and its halves, two mem_map pages; not the sixteen 4 MiB
 * blocks of the whole section (a mem_map page each), nor the halves of a
 * first 1 MiB block (three more).
 */
static void sections_are_carved_lazily(void)
{
	struct page *page = alloc_pages(GFP_KERNEL, 0);
	CHECK(page != NULL);
	struct zone *z = local_zone(ZONE_NORMAL);
	struct mem_region *r = z->sections;
	CHECK(r != NULL && r->next == NULL);
	CHECK(z->managed_pages < r->nr_pages);
	long resident = resident_pages(r, MEMMAP_PAGES_PER_SLOT * PAGE_SIZE);
	CHECK(resident >= 0 && resident <= 2);
	if (resident > 2)
		fprintf(stderr, "%ld pages of the mem_map resident\n", resident);
	__free_pages(page, 0);
	CHECK_EQ(page_alloc_validate(), 0);
}

/*
 * In a young section, pages freed dirty sit just below the carve point;
 * the next carves merge with them.  The merged block is dirty, and must
 * keep the time its dirty part was freed: a carve's stamp (0) would make
 * it look idle since boot to the decay and the dirty bound.
 */
static void carves_merge_with_dirty_blocks(void)
{
	struct page *pages[32];
	for (int i = 0; i < 32; i++) {
		pages[i] = alloc_pages(GFP_KERNEL, 0);
		CHECK(pages[i] != NULL);
		memset(page_address(pages[i]), 1, PAGE_SIZE);
	}
	for (int i = 0; i < 32; i++)
		__free_pages(pages[i], 0);
	page_alloc_drain_pcp();
	struct page *big = alloc_pages(GFP_KERNEL, MAX_PAGE_ORDER);	/* carves up to 4 MiB */
	CHECK(big != NULL);
	struct zone *z = local_zone(ZONE_NORMAL);
	unsigned long dirty = 0, stamped = 0;
	pthread_mutex_lock(&z->lock);
	for (int o = 0; o <= MAX_PAGE_ORDER; o++) {
		struct list_head *pos;
		list_for_each(pos, &z->free_area[o].dirty) {
			dirty++;
			stamped += list_entry(pos, struct page, lru)->free_stamp != 0;
		}
	}
	pthread_mutex_unlock(&z->lock);
	CHECK(dirty > 0);
	CHECK_EQ(stamped, dirty);
	__free_pages(big, MAX_PAGE_ORDER);
	CHECK_EQ(page_alloc_validate(), 0);
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--no-thp") == 0) {
		CHECK_EQ(slub_setup("slub_thp_mb=0"), 0);
		RUN(large_blocks_ask_for_huge_pages);
		return check_done();
	}
	stay_on_one_node();
	RUN(sections_are_carved_lazily);	/* first: a new zone */
	RUN(carves_merge_with_dirty_blocks);	/* second: a young section */
	RUN(get_order_matches_kernel);
	RUN(every_order_allocates_aligned_distinct);
	RUN(coalescing_restores_max_order);
	RUN(zeroed_pages_are_zero_after_dirty_reuse);
	RUN(dma32_is_below_4g);
	RUN(large_orders_use_direct_mappings);
	RUN(dma32_address_space_is_reused);
	RUN(oom_too_large_order);
	RUN(bad_frees_are_reported_and_ignored);
	RUN(foreign_pointers_are_not_ours);
	RUN(foreign_mapping_in_our_slot);
	RUN(unknown_node_is_any_node);
	RUN(extents_are_exact);
	RUN(extents_resize_in_place);
	RUN(large_extents_move_their_pages);
	RUN(large_extents_split_their_pages);
	RUN(large_blocks_ask_for_huge_pages);
	CHECK_EQ(page_alloc_validate(), 0);
	return check_done();
}
