// SPDX-License-Identifier: MIT
/*
 * test_page_alloc_stress.c - more threads than CPUs allocate, write, check
 * and free blocks of mixed orders and zones, hand blocks to each other to
 * be freed on another thread, and migrate between CPUs on purpose.
 * Fixed seeds; at the end every page is free again and the validator finds
 * the free lists and descriptors consistent.  Every allocation stamps its
 * block with a unique number, so a block handed out twice is caught.
 *
 * --decay: the decay gives freed blocks back after 2 ms and another
 * thread runs slub_reclaim() all the time, so blocks are decommitted with
 * the zone lock dropped while the workers allocate and free around them.
 * --bound: the same with the dirty bound in place of the decay, made to
 * act all the time (floor only, no per-CPU lists), and slub_reclaim() every
 * 20 ms.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>

#include <slub.h>
#include "check.h"
#include "page/page_alloc.h"

#define THREADS 8
#define LIVE 48
#define EXCHANGE 64

static unsigned long iterations = UNDER_TSAN ? 20000 : 400000;
static unsigned long exchange[EXCHANGE];	/* addr | order, 0 = empty */
static int ncpus;
static int errors;

struct block {
	unsigned long addr;
	unsigned int order;
};

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static unsigned int pick_order(uint64_t *s)
{
	unsigned int r = (unsigned int)(rnd(s) % 100);
	if (r < 55)
		return 0;
	if (r < 75)
		return 1;
	if (r < 87)
		return 2;
	if (r < 95)
		return 3;
	return 4 + (unsigned int)(rnd(s) % 4);
}

static unsigned long next_seq;
#define STRIDE 128	/* words between checked words: 4 per page */

static void fill(unsigned long addr, unsigned int order)
{
	unsigned long *w = (unsigned long *)addr;
	size_t words = (PAGE_SIZE << order) / sizeof(long);
	unsigned long seq = __atomic_add_fetch(&next_seq, 1, __ATOMIC_RELAXED);
	w[0] = seq;
	for (size_t i = STRIDE; i < words; i += STRIDE)
		w[i] = seq ^ i;
	w[words - 1] = ~seq;
}

static void verify_and_free(unsigned long addr, unsigned int order)
{
	unsigned long *w = (unsigned long *)addr;
	size_t words = (PAGE_SIZE << order) / sizeof(long);
	unsigned long seq = w[0];
	bool ok = w[words - 1] == ~seq;
	for (size_t i = STRIDE; i < words; i += STRIDE)
		ok = ok && w[i] == (seq ^ i);
	if (!ok)
		__atomic_add_fetch(&errors, 1, __ATOMIC_RELAXED);	/* someone else wrote here */
	free_pages(addr, order);
}

static int workers_done;
static bool bound;

static void *reclaimer(void *arg)
{
	unsigned long *pages = arg;
	while (!__atomic_load_n(&workers_done, __ATOMIC_RELAXED)) {
		*pages += slub_reclaim();
		if (bound) {	/* leave the bound blocks idle long enough to take */
			struct timespec ts = { 0, 20 * 1000000L };
			nanosleep(&ts, NULL);
		}
	}
	return NULL;
}

static void *worker(void *arg)
{
	uint64_t seed = 0x1234567ULL * ((uintptr_t)arg + 1);
	struct block live[LIVE] = { { 0, 0 } };

	for (unsigned long i = 0; i < iterations; i++) {
		unsigned int slot = (unsigned int)(rnd(&seed) % LIVE);
		struct block *b = &live[slot];
		if (b->addr) {
			if (rnd(&seed) % 4 == 0) {
				/* Hand it to whichever thread takes this slot next. */
				unsigned int x = (unsigned int)(rnd(&seed) % EXCHANGE);
				unsigned long old = __atomic_exchange_n(&exchange[x], b->addr | b->order,
									__ATOMIC_ACQ_REL);
				if (old)
					verify_and_free(old & PAGE_MASK, (unsigned int)(old & ~PAGE_MASK));
			} else {
				verify_and_free(b->addr, b->order);
			}
			b->addr = 0;
			continue;
		}
		unsigned int order = pick_order(&seed);
		gfp_t gfp = GFP_KERNEL;
		if (rnd(&seed) % 8 == 0)
			gfp |= __GFP_ZERO;
		if (rnd(&seed) % 16 == 0)
			gfp |= GFP_DMA32;
		struct page *page = alloc_pages(gfp, order);
		if (!page) {
			__atomic_add_fetch(&errors, 1, __ATOMIC_RELAXED);
			continue;
		}
		unsigned long addr = (unsigned long)page_address(page);
		if ((gfp & __GFP_ZERO) && (((long *)addr)[0] || ((long *)addr)[(PAGE_SIZE << order) / 8 - 1]))
			__atomic_add_fetch(&errors, 1, __ATOMIC_RELAXED);
		if ((gfp & GFP_DMA32) && addr >= (1UL << 32))
			__atomic_add_fetch(&errors, 1, __ATOMIC_RELAXED);
		fill(addr, order);
		b->addr = addr;
		b->order = order;
		if (i % 4096 == 0 && ncpus > 1) {
			/* Forced migration: the next call runs on another CPU. */
			cpu_set_t set;
			CPU_ZERO(&set);
			CPU_SET((int)(rnd(&seed) % (uint64_t)ncpus), &set);
			sched_setaffinity(0, sizeof(set), &set);
		}
	}
	for (int i = 0; i < LIVE; i++)
		if (live[i].addr)
			verify_and_free(live[i].addr, live[i].order);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[THREADS], reclaim;
	cpu_set_t all;
	bool decay = argc > 1 && !strcmp(argv[1], "--decay");
	bound = argc > 1 && !strcmp(argv[1], "--bound");
	unsigned long reclaimed = 0;
	sched_getaffinity(0, sizeof(all), &all);
	ncpus = CPU_COUNT(&all);

	if (decay || bound) {
		/* The decay alone, or mostly the bound (idle 10 ms, the decay 640). */
		CHECK_EQ(slub_setup(decay ? "slub_decay_ms=2 slub_decommit_order=0 slub_dirty_ratio=0"
					  : "slub_decay_ms=640 slub_decommit_order=10 slub_dirty_ratio=1024 slub_pcp_high=0"), 0);
		iterations /= 4;
		pthread_create(&reclaim, NULL, reclaimer, &reclaimed);
	}
	/*
	 * The bound takes blocks idle 10 ms: a run that a loaded machine
	 * schedules so that none stays idle so long (1 in 30-100 here) goes
	 * again, five rounds at most, until the bound has taken some.
	 */
	for (int round = 0; round < (bound ? 5 : 1); round++) {
		if (round && __atomic_load_n(&page_alloc_stats.bound_pages, __ATOMIC_RELAXED))
			break;
		for (uintptr_t i = 0; i < THREADS; i++)
			CHECK_EQ(pthread_create(&t[i], NULL, worker, (void *)i), 0);
		for (int i = 0; i < THREADS; i++)
			pthread_join(t[i], NULL);
	}
	if (decay || bound) {
		__atomic_store_n(&workers_done, 1, __ATOMIC_RELAXED);
		pthread_join(reclaim, NULL);
		fprintf(stderr, "decommitted %lu pages, %lu of them by slub_reclaim, %lu by the bound\n",
			page_alloc_stats.decommitted_pages, reclaimed, page_alloc_stats.bound_pages);
		/* The decay, or the bound, ran too. */
		CHECK(page_alloc_stats.decommitted_pages > reclaimed);
		CHECK(bound ? page_alloc_stats.bound_pages > 0 : page_alloc_stats.bound_pages == 0);
		CHECK(reclaimed > 0);
	}
	for (int i = 0; i < EXCHANGE; i++)
		if (exchange[i])
			verify_and_free(exchange[i] & PAGE_MASK, (unsigned int)(exchange[i] & ~PAGE_MASK));

	CHECK_EQ(errors, 0);
	CHECK_EQ(slub_errors(), 0);
	CHECK_EQ(page_alloc_validate(), 0);	/* with pages still on per-CPU lists */
	page_alloc_drain_pcp();
	CHECK_EQ(page_alloc_validate(), 0);
	for (int zt = 0; zt < MAX_NR_ZONES; zt++) {
		struct zone *z = &page_alloc_nodes[0].node_zones[zt];
		CHECK_EQ(z->free_pages, z->managed_pages);
		fprintf(stderr, "zone %s: %lu pages managed, all free\n", z->name, z->managed_pages);
	}
	return check_done();
}
