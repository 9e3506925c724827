// SPDX-License-Identifier: MIT
/*
 * test_page_alloc_reclaim.c - free memory goes back to the OS: RSS falls
 * after slub_reclaim() and after the decay period, zero requests reuse
 * decommitted blocks without a memset, warm blocks are reused first, and a
 * block freed and reused in a loop is never decommitted (no thrashing).
 * With --bound, the dirty bound (slub_dirty_ratio): free blocks that would
 * take the memory past the recent peak in use and an eighth of it go back
 * long before the decay, those below it stay, and still no loop thrashes.
 */
#define _GNU_SOURCE
#include <sys/mman.h>
#include <time.h>

#include <slub.h>
#include "check.h"
#include "base/os.h"
#include "page/page_alloc.h"
#include "page/pcp.h"
#include "page/local_zone.h"

#define DECAY_MS 200
#define MIB (1UL << 20)

static struct zone *normal(void)
{
	return local_zone(ZONE_NORMAL);
}

static void fill_and_free(unsigned long nr_max_blocks, bool do_free, unsigned long *keep)
{
	for (unsigned long i = 0; i < nr_max_blocks; i++) {
		keep[i] = __get_free_pages(GFP_KERNEL, MAX_PAGE_ORDER);
		CHECK(keep[i] != 0);
		memset((void *)keep[i], 0x77, PAGE_SIZE << MAX_PAGE_ORDER);
	}
	if (do_free)
		for (unsigned long i = 0; i < nr_max_blocks; i++)
			free_pages(keep[i], MAX_PAGE_ORDER);
}

static void rss_falls_after_reclaim(void)
{
	unsigned long blocks[64];
	long rss0 = rss_bytes();
	fill_and_free(64, false, blocks);	/* 256 MiB */
	long rss1 = rss_bytes();
	CHECK(rss1 - rss0 >= 240 * (long)MIB);
	for (int i = 0; i < 64; i++)
		free_pages(blocks[i], MAX_PAGE_ORDER);
	unsigned long pages = slub_reclaim();
	long rss2 = rss_bytes();
	fprintf(stderr, "   rss %ld -> %ld -> %ld MiB, reclaimed %lu pages\n",
		rss0 >> 20, rss1 >> 20, rss2 >> 20, pages);
	CHECK(pages >= 64UL << MAX_PAGE_ORDER);
	CHECK(rss1 - rss2 >= 240 * (long)MIB);
	CHECK_EQ(normal()->dirty_pages, 0);
	CHECK_EQ(slub_reclaim(), 0);		/* nothing left to give */
	CHECK_EQ(page_alloc_validate(), 0);
}

static void zero_requests_use_clean_blocks(void)
{
	/* All free memory is clean now: zeroed blocks must still read zero. */
	long rss0 = rss_bytes();
	unsigned long a[16];
	for (int i = 0; i < 16; i++) {
		a[i] = (unsigned long)page_address(alloc_pages(GFP_KERNEL | __GFP_ZERO, MAX_PAGE_ORDER));
		CHECK(a[i] != 0);
	}
	long rss1 = rss_bytes();
	/* No memset ran: 64 MiB of zero pages are not resident. */
	CHECK(rss1 - rss0 < 8 * (long)MIB);
	for (int i = 0; i < 16; i++) {
		const unsigned long *w = (const unsigned long *)a[i];
		for (size_t j = 0; j < (PAGE_SIZE << MAX_PAGE_ORDER) / sizeof(long); j += 509)
			CHECK(w[j] == 0);
		free_pages(a[i], MAX_PAGE_ORDER);
	}
	CHECK_EQ(page_alloc_validate(), 0);
}

static void warm_blocks_are_reused_first(void)
{
	/* Order 4: past the per-CPU lists, straight from the buddy lists. */
	unsigned long a = __get_free_pages(GFP_KERNEL, 4);
	memset((void *)a, 1, PAGE_SIZE << 4);
	free_pages(a, 4);
	CHECK(normal()->dirty_pages >= 16);
	unsigned long b = __get_free_pages(GFP_KERNEL, 4);
	CHECK_EQ(b, a);		/* the dirty (resident) block came back, not a clean one */
	free_pages(b, 4);
	slub_reclaim();
	/*
	 * A dirty block of a higher order comes before a clean one of the
	 * order asked for: splitting the clean block left clean order-4
	 * buddies, yet the next block is cut from the dirty one.
	 */
	unsigned long x = __get_free_pages(GFP_KERNEL, 4);
	unsigned long d = __get_free_pages(GFP_KERNEL, 6);
	memset((void *)d, 1, PAGE_SIZE << 6);
	free_pages(d, 6);
	unsigned long c = __get_free_pages(GFP_KERNEL, 4);
	/* Resident, first and last page: from the dirty block. */
	CHECK_EQ(resident_pages((void *)c, PAGE_SIZE), 1);
	CHECK_EQ(resident_pages((void *)(c + 15 * PAGE_SIZE), PAGE_SIZE), 1);
	free_pages(c, 4);
	free_pages(x, 4);
	slub_reclaim();
}

static void decay_returns_old_blocks(void)
{
	unsigned long blocks[16];
	fill_and_free(16, false, blocks);
	uint64_t t0 = os_now_ms();
	for (int i = 0; i < 16; i++)
		free_pages(blocks[i], MAX_PAGE_ORDER);	/* 64 MiB freed, dirty */
	long rss1 = rss_bytes();
	CHECK(normal()->dirty_pages >= 16UL << MAX_PAGE_ORDER);
	/*
	 * Not yet old: a decay "now" gives nothing back.  Unless the machine
	 * kept this thread off the CPU for a decay period since the frees.
	 */
	uint64_t now = os_now_ms();
	if (now - t0 < DECAY_MS)
		CHECK_EQ(page_alloc_decay(now), 0);
	struct timespec ts = { 0, (DECAY_MS * 2 + 50) * 1000000L };
	nanosleep(&ts, NULL);
	/*
	 * Any free to the zone runs the decay when it is due.  The trigger
	 * takes a dirty block (they come first) and frees it: that one block
	 * is young again, the other fifteen (60 MiB) go back.
	 */
	free_pages(__get_free_pages(GFP_KERNEL, 4), 4);
	long rss2 = rss_bytes();
	fprintf(stderr, "   after decay: rss %ld -> %ld MiB\n", rss1 >> 20, rss2 >> 20);
	CHECK(rss1 - rss2 >= 56 * (long)MIB);
	/* Only the block the trigger page merged into is still dirty. */
	CHECK(normal()->dirty_pages <= MAX_ORDER_NR_PAGES);
	CHECK_EQ(page_alloc_validate(), 0);
}

static void explicit_decay_clock(void)
{
	unsigned long blocks[8];
	fill_and_free(8, true, blocks);
	unsigned long pages = page_alloc_decay(os_now_ms() + DECAY_MS + 10);
	CHECK(pages >= 8UL << MAX_PAGE_ORDER);
	CHECK_EQ(page_alloc_validate(), 0);
}

/* Order 8 (1 MiB): more than the dirty bound's floor, for the --bound run. */
static void reuse_loop_does_not_thrash(void)
{
	slub_reclaim();
	unsigned long before = page_alloc_stats.decommitted_pages;
	uint64_t end = os_now_ms() + DECAY_MS * 3;
	unsigned long first = 0, loops = 0;
	while (os_now_ms() < end) {
		unsigned long a = __get_free_pages(GFP_KERNEL, 8);
		memset((void *)a, 3, PAGE_SIZE << 8);
		if (!first)
			first = a;
		CHECK_EQ(a, first);
		free_pages(a, 8);
		loops++;
	}
	CHECK(loops > 10);
	CHECK_EQ(page_alloc_stats.decommitted_pages, before);
	CHECK_EQ(page_alloc_validate(), 0);
}

/* ---- the dirty bound (--bound: slub_dirty_ratio=8) ---------------------- */

/* How long a free block sits before the bound takes it (page_alloc.c). */
static uint64_t bound_idle(void)
{
	uint64_t tick = os_clock_tick_ms();
	return DECAY_MS / 64 > tick ? DECAY_MS / 64 : tick;
}

/*
 * Clean blocks for the tests below to take: @n max-order blocks carved and
 * decommitted.  Their use is no peak of the test's: forgotten, as if two
 * decay periods had passed.
 */
static void carve_clean(unsigned long n)
{
	unsigned long blocks[16];
	CHECK(n <= 16);
	fill_and_free(n, true, blocks);
	slub_reclaim();
	normal()->peak_in_use = normal()->last_peak_in_use = 0;
}

static void sleep_ms(uint64_t ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/*
 * A server's pattern: 32 MiB of replies made and freed over and over, each
 * time idle longer than the bound waits, beside 8 MiB kept.  What is freed
 * stays below the recent peak of the pages in use: kept, never decommitted
 * and faulted in again (bounded by the pages in use of the moment, it was).
 */
static void pages_freed_below_the_peak_stay(void)
{
	carve_clean(12);
	unsigned long keep[2], replies[8];
	fill_and_free(2, false, keep);
	unsigned long before = page_alloc_stats.decommitted_pages;
	unsigned long bound_before = page_alloc_stats.bound_pages;
	int rounds;
	for (rounds = 0; rounds < 3; rounds++) {
		fill_and_free(8, false, replies);
		sleep_ms(bound_idle() + os_clock_tick_ms() + 2);
		for (int i = 0; i < 8; i++)
			free_pages(replies[i], MAX_PAGE_ORDER);
		sleep_ms(bound_idle() + os_clock_tick_ms() + 2);
		free_pages(__get_free_pages(GFP_KERNEL, 4), 4);	/* a free to the zone looks */
	}
	fprintf(stderr, "   %d rounds, %lu pages dirty, %lu decommitted\n", rounds,
		normal()->dirty_pages, page_alloc_stats.decommitted_pages - before);
	CHECK_EQ(page_alloc_stats.bound_pages, bound_before);
	CHECK_EQ(page_alloc_stats.decommitted_pages, before);
	CHECK(normal()->dirty_pages >= 7UL << MAX_PAGE_ORDER);
	for (int i = 0; i < 2; i++)
		free_pages(keep[i], MAX_PAGE_ORDER);
	CHECK_EQ(page_alloc_validate(), 0);
}

/*
 * 8 MiB kept, 32 MiB freed (a peak of 40 in use), then 16 MiB taken
 * zeroed, from clean blocks: free and used pages would now hold 56 MiB,
 * past the peak and its eighth.  Long before the decay, the free blocks
 * idle a few ms go back until what is left is within the bound (as the
 * clean blocks are taken if they are idle by then, else at the next
 * free), and the blocks in use keep their contents.
 */
static void pages_freed_above_the_peak_go_back(void)
{
	carve_clean(16);
	unsigned long keep[2], freed[8], zeroed[4];
	fill_and_free(2, false, keep);
	fill_and_free(8, false, freed);
	for (int i = 0; i < 8; i++)
		free_pages(freed[i], MAX_PAGE_ORDER);
	long rss0 = rss_bytes();
	for (int i = 0; i < 4; i++) {
		zeroed[i] = __get_free_pages(GFP_KERNEL | __GFP_ZERO, MAX_PAGE_ORDER);
		CHECK(zeroed[i] != 0);
		memset((void *)zeroed[i], 0x55, PAGE_SIZE << MAX_PAGE_ORDER);
	}
	long rss1 = rss_bytes();
	sleep_ms(bound_idle() + 2 * os_clock_tick_ms() + 10);
	free_pages(__get_free_pages(GFP_KERNEL, 4), 4);	/* a free to the zone looks */
	long rss2 = rss_bytes();
	unsigned long in_use = 6UL << MAX_PAGE_ORDER, peak = 10UL << MAX_PAGE_ORDER;
	fprintf(stderr, "   rss %ld, 16 MiB taken: %ld, later %ld MiB, %lu pages dirty\n",
		rss0 >> 20, rss1 >> 20, rss2 >> 20, normal()->dirty_pages);
	/* Within the bound; the trigger took a dirty block and freed it: that one is young. */
	CHECK(normal()->dirty_pages <= peak - in_use + peak / 8 + MAX_ORDER_NR_PAGES);
	CHECK(rss0 + 16 * (long)MIB - rss2 >= 12 * (long)MIB);
	CHECK(page_alloc_stats.bound_pages >= 3UL << MAX_PAGE_ORDER);
	for (int i = 0; i < 2; i++) {
		const unsigned char *b = (const unsigned char *)keep[i];
		CHECK(b[0] == 0x77 && b[(PAGE_SIZE << MAX_PAGE_ORDER) - 1] == 0x77);
		free_pages(keep[i], MAX_PAGE_ORDER);
	}
	for (int i = 0; i < 4; i++) {
		const unsigned char *b = (const unsigned char *)zeroed[i];
		CHECK(b[0] == 0x55 && b[(PAGE_SIZE << MAX_PAGE_ORDER) - 1] == 0x55);
		free_pages(zeroed[i], MAX_PAGE_ORDER);
	}
	CHECK_EQ(page_alloc_validate(), 0);
}

/*
 * bench_frag's pattern: 32 MiB of single pages, every other one freed, so
 * the free ones cannot merge, all below the recent peak in use (kept by
 * the bound).  Then 16 MiB taken in max-order blocks: no free block is
 * large enough, they come clean, and the memory would grow by all of it
 * while 16 MiB sit free.  As the zone grows, the fragments idle a few ms
 * go back, twice the pages taken, down to half the share of the pages in
 * use: the resident memory grows by at most a quarter of what was taken.
 */
static void fragments_go_back_as_the_zone_grows(void)
{
	enum { PAGES = 8192 };
	static unsigned long page[PAGES];
	carve_clean(16);
	for (int i = 0; i < PAGES; i++) {
		page[i] = __get_free_page(GFP_KERNEL);
		CHECK(page[i] != 0);
		memset((void *)page[i], 0x66, PAGE_SIZE);
	}
	for (int i = 0; i < PAGES; i += 2)
		free_page(page[i]);
	pcp_drain_zone(normal());
	sleep_ms(bound_idle() + os_clock_tick_ms() + 2);
	unsigned long bound_before = page_alloc_stats.bound_pages;
	unsigned long dirty0 = normal()->dirty_pages;
	long rss0 = rss_bytes();
	unsigned long big[4];
	for (int i = 0; i < 4; i++) {
		big[i] = __get_free_pages(GFP_KERNEL, MAX_PAGE_ORDER);
		CHECK(big[i] != 0);
		memset((void *)big[i], 0x44, PAGE_SIZE << MAX_PAGE_ORDER);
	}
	long rss1 = rss_bytes();
	fprintf(stderr, "   %lu -> %lu pages dirty, rss %ld -> %ld MiB, %lu pages bound\n", dirty0,
		normal()->dirty_pages, rss0 >> 20, rss1 >> 20,
		page_alloc_stats.bound_pages - bound_before);
	CHECK(dirty0 >= PAGES / 2 - 64);
	CHECK(page_alloc_stats.bound_pages - bound_before >= PAGES / 2 - 1024);
	CHECK(rss1 - rss0 <= 4 * (long)MIB);
	for (int i = 1; i < PAGES; i += 2) {
		const unsigned char *b = (const unsigned char *)page[i];
		CHECK(b[0] == 0x66 && b[PAGE_SIZE - 1] == 0x66);
		free_page(page[i]);
	}
	for (int i = 0; i < 4; i++)
		free_pages(big[i], MAX_PAGE_ORDER);
	CHECK_EQ(page_alloc_validate(), 0);
}

int main(int argc, char **argv)
{
	bool bound = argc > 1 && !strcmp(argv[1], "--bound");
	char opt[64];
	snprintf(opt, sizeof(opt), "slub_decay_ms=%d slub_dirty_ratio=%d", DECAY_MS, bound ? 8 : 0);
	CHECK_EQ(slub_setup(opt), 0);
	stay_on_one_node();
	if (bound) {
		RUN(pages_freed_below_the_peak_stay);
		RUN(pages_freed_above_the_peak_go_back);
		RUN(fragments_go_back_as_the_zone_grows);
		RUN(reuse_loop_does_not_thrash);
		return check_done();
	}
	/* The decay alone: no bound to give blocks back before their time. */
	RUN(rss_falls_after_reclaim);
	RUN(zero_requests_use_clean_blocks);
	RUN(warm_blocks_are_reused_first);
	RUN(decay_returns_old_blocks);
	RUN(explicit_decay_clock);
	RUN(reuse_loop_does_not_thrash);
	return check_done();
}
