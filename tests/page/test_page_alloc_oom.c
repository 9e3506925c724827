// SPDX-License-Identifier: MIT
/*
 * test_page_alloc_oom.c - fault injection through the OS ops table: when
 * mmap, mprotect or madvise fail, every call returns NULL/0 with
 * errno = ENOMEM (or gives back nothing), nothing leaks, the allocator
 * stays consistent, and it works again once the OS does.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sys/mman.h>

#include <slub.h>
#include "check.h"
#include "base/os.h"
#include "page/page_alloc.h"
#include "base/report.h"
#include "page/local_zone.h"

static void *no_mmap(void *a, size_t l, int p, int f, int fd, off_t o)
{
	(void)a; (void)l; (void)p; (void)f; (void)fd; (void)o;
	errno = ENOMEM;
	return MAP_FAILED;
}

static int no_mprotect(void *a, size_t l, int p)
{
	(void)a; (void)l; (void)p;
	errno = ENOMEM;
	return -1;
}

static int no_madvise(void *a, size_t l, int adv)
{
	(void)a; (void)l; (void)adv;
	errno = EAGAIN;
	return -1;
}

/* Bytes mapped minus bytes unmapped through the ops table. */
static long net_mapped;

static void *counting_mmap(void *a, size_t l, int p, int f, int fd, off_t o)
{
	void *r = mmap(a, l, p, f, fd, o);
	if (r != MAP_FAILED)
		net_mapped += (long)l;
	return r;
}

static int counting_munmap(void *a, size_t l)
{
	int r = munmap(a, l);
	if (r == 0)
		net_mapped -= (long)l;
	return r;
}

static void every_call_fails_cleanly(void)
{
	slub_os.mmap = no_mmap;
	for (unsigned int o = 0; o <= MAX_PAGE_ORDER + 3; o++) {
		errno = 0;
		CHECK(alloc_pages(GFP_KERNEL | __GFP_NOWARN, o) == NULL);
		CHECK_EQ(errno, ENOMEM);
		errno = 0;
		CHECK(alloc_pages(GFP_DMA32 | __GFP_NOWARN | __GFP_ZERO, o) == NULL);
		CHECK_EQ(errno, ENOMEM);
		errno = 0;
		CHECK_EQ(__get_free_pages(GFP_DMA | __GFP_NOWARN, o), 0);
		CHECK_EQ(errno, ENOMEM);
	}
	errno = 0;
	CHECK_EQ(get_zeroed_page(GFP_KERNEL | __GFP_NOWARN), 0);
	CHECK_EQ(errno, ENOMEM);

	/* Without __GFP_NOWARN: one warning line per failure. */
	unsigned long e = slub_errors();
	CHECK(alloc_pages(GFP_KERNEL, 2) == NULL);
	CHECK_EQ(slub_errors(), e + 1);
	char m[SLUB_REPORT_LINE];
	slub_report_last(m, sizeof(m));
	CHECK(strstr(m, "page allocation failure: order:2") && strstr(m, "out of memory"));
	slub_os = slub_os_default;
	CHECK_EQ(page_alloc_validate(), 0);

	/* The OS is back: both zones work, DMA32 was not written off. */
	unsigned long a = __get_free_pages(GFP_KERNEL, 3);
	unsigned long d = __get_free_pages(GFP_DMA32, 3);
	CHECK(a != 0 && d != 0 && d < (1UL << 32));
	free_pages(a, 3);
	free_pages(d, 3);
	CHECK_EQ(page_alloc_validate(), 0);
}

/* Data pages of the zone's sections, carved or not. */
static unsigned long section_pages(struct zone *z)
{
	unsigned long pages = 0;
	for (struct mem_region *r = z->sections; r; r = r->next)
		pages += r->nr_pages;
	return pages;
}

static void failure_when_a_zone_must_grow(void)
{
	struct zone *z = local_zone(ZONE_NORMAL);
	struct mem_region *sections = z->sections;
	unsigned long managed = section_pages(z);
	unsigned long got[64];
	int n = 0;

	CHECK(z->managed_pages < managed);	/* sections are carved as needed */
	slub_os.mmap = no_mmap;
	while (n < 64 && (got[n] = __get_free_pages(GFP_KERNEL | __GFP_NOWARN, MAX_PAGE_ORDER)))
		n++;
	slub_os = slub_os_default;
	/*
	 * Everything the sections had was carved and handed out, then NULL.
	 * (Under ulimit -v a section maps its slot as it carves it, and ends
	 * where mmap fails: its pages are then fewer than at the start.)
	 */
	CHECK(n > 0 && n < 64);
	CHECK(z->sections == sections);
	CHECK_EQ(z->managed_pages, section_pages(z));
	managed = z->managed_pages;
	CHECK_EQ(z->free_area[MAX_PAGE_ORDER].nr_free, 0);
	CHECK_EQ(page_alloc_validate(), 0);
	unsigned long more = __get_free_pages(GFP_KERNEL, MAX_PAGE_ORDER);
	CHECK(more != 0);
	CHECK(z->managed_pages > managed);
	free_pages(more, MAX_PAGE_ORDER);
	while (n--)
		free_pages(got[n], MAX_PAGE_ORDER);
	page_alloc_drain_pcp();
	CHECK_EQ(z->free_pages, z->managed_pages);
	CHECK_EQ(page_alloc_validate(), 0);
}

static void commit_failure_leaks_nothing(void)
{
	/* Use up the zone, then make the next section's commit fail. */
	unsigned long got[64];
	int n = 0;
	struct zone *z = local_zone(ZONE_NORMAL);
	while ((z->free_area[MAX_PAGE_ORDER].nr_free || z->managed_pages < section_pages(z)) &&
	       n < 64)
		got[n++] = __get_free_pages(GFP_KERNEL, MAX_PAGE_ORDER);
	net_mapped = 0;
	slub_os.mmap = counting_mmap;
	slub_os.munmap = counting_munmap;
	slub_os.mprotect = no_mprotect;
	for (int i = 0; i < 10; i++) {
		CHECK(alloc_pages(GFP_KERNEL | __GFP_NOWARN, MAX_PAGE_ORDER) == NULL);
		CHECK(alloc_pages(GFP_KERNEL | __GFP_NOWARN, MAX_PAGE_ORDER + 2) == NULL);
	}
	slub_os = slub_os_default;
	CHECK_EQ(net_mapped, 0);	/* every reservation was released */
	while (n--)
		free_pages(got[n], MAX_PAGE_ORDER);
	CHECK_EQ(page_alloc_validate(), 0);
}

static void decommit_failure_keeps_blocks_dirty(void)
{
	unsigned long a = __get_free_pages(GFP_KERNEL, 6);
	memset((void *)a, 9, PAGE_SIZE << 6);
	free_pages(a, 6);
	slub_os.madvise = no_madvise;
	CHECK_EQ(slub_reclaim(), 0);
	slub_os = slub_os_default;
	struct zone *z = local_zone(ZONE_NORMAL);
	CHECK(z->dirty_pages > 0);
	CHECK_EQ(page_alloc_validate(), 0);
	/* A dirty block must be zeroed by hand for __GFP_ZERO. */
	unsigned long b = (unsigned long)page_address(alloc_pages(GFP_KERNEL | __GFP_ZERO, 6));
	CHECK(b != 0 && ((char *)b)[0] == 0 && ((char *)b)[(PAGE_SIZE << 6) - 1] == 0);
	free_pages(b, 6);
	CHECK(slub_reclaim() > 0);
	CHECK_EQ(page_alloc_validate(), 0);
}

int main(void)
{
	stay_on_one_node();
	RUN(every_call_fails_cleanly);
	/*
	 * Both use a zone up and count on its sections being mapped whole,
	 * which under ulimit -v they are not: they map their slot as they
	 * carve it, with mmap.
	 */
	if (!address_space_limited())
		RUN(failure_when_a_zone_must_grow);
	if (!address_space_limited())
		RUN(commit_failure_leaks_nothing);
	RUN(decommit_failure_keeps_blocks_dirty);
	return check_done();
}
