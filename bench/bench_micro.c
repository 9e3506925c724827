// SPDX-License-Identifier: MIT
/*
 * bench_micro.c - the allocator's own work: ns per allocate+free pair of
 * SIZE bytes with INFLIGHT objects live at a time (allocate INFLIGHT, write
 * each one's first word, free them in the order they came).  INFLIGHT 1 is
 * the hot pair every allocator has a fast path for; 64 stays within a
 * per-CPU slab or thread cache; 4096 spills to the shared lists behind
 * them.
 *
 *   bench_micro SIZE INFLIGHT PAIRS [API]     prints "ns_per_pair pairs"
 *
 * Built twice (bench/CMakeLists.txt): bench_micro calls malloc/free, so any
 * allocator comes in by LD_PRELOAD; bench_micro_slab (MICRO_SLAB) links
 * libslub and also takes API "cache" (kmem_cache_alloc/free on a cache of
 * SIZE) or "kmalloc" (kmalloc/kfree).  Under callgrind only `measured` is
 * counted (--toggle-collect=measured): instructions per pair are its total
 * over the pairs printed, the loop's own few included.
 *
 * After the warm-up, a probe: an allocator that returns memory to the
 * kernel at every batch (glibc's heap trim at 4 KiB x 64) takes tens of
 * microseconds a pair, and PAIRS of those would take minutes, so the pairs
 * measured are capped at about 0.2 s' worth; the second number says how
 * many were measured.
 */
#include "bench_util.h"

#ifdef MICRO_SLAB
#include <slub.h>
static struct kmem_cache *cache;
#endif

#define NOINLINE __attribute__((noinline))

static void **slot;
static size_t size, inflight;

/* One loop per API, so no call through a pointer sits between the pairs. */
#define BATCHES(ALLOC, FREE)                                            \
	for (long done = 0; done < pairs; done += (long)inflight) {     \
		for (size_t j = 0; j < inflight; j++) {                 \
			slot[j] = ALLOC;                                \
			*(volatile long *)slot[j] = done;               \
		}                                                       \
		for (size_t j = 0; j < inflight; j++)                   \
			FREE(slot[j]);                                  \
	}

NOINLINE static void loop_malloc(long pairs)
{
	BATCHES(malloc(size), free)
}

#ifdef MICRO_SLAB
#define CACHE_FREE(p) kmem_cache_free(cache, p)
NOINLINE static void loop_cache(long pairs)
{
	BATCHES(kmem_cache_alloc(cache, GFP_KERNEL), CACHE_FREE)
}

NOINLINE static void loop_kmalloc(long pairs)
{
	BATCHES(kmalloc(size, GFP_KERNEL), kfree)
}
#endif

NOINLINE static void measured(void (*loop)(long), long pairs)
{
	loop(pairs);
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: bench_micro SIZE INFLIGHT PAIRS [malloc|cache|kmalloc]\n");
		return 2;
	}
	size = strtoul(argv[1], NULL, 10);
	inflight = strtoul(argv[2], NULL, 10);
	long pairs = atol(argv[3]);
	const char *api = argc > 4 ? argv[4] : "malloc";
	void (*loop)(long) = NULL;
	if (!strcmp(api, "malloc"))
		loop = loop_malloc;
#ifdef MICRO_SLAB
	cache = kmem_cache_create("bench-micro", (unsigned int)size, 0, 0, NULL);
	if (!strcmp(api, "cache"))
		loop = loop_cache;
	else if (!strcmp(api, "kmalloc"))
		loop = loop_kmalloc;
#endif
	slot = calloc(inflight ? inflight : 1, sizeof(*slot));
	if (!loop || !size || !inflight || !slot || pairs < (long)inflight) {
		fprintf(stderr, "bench_micro: bad arguments (API %s)\n", api);
		return 2;
	}
	pairs = pairs / (long)inflight * (long)inflight;
	loop((long)inflight * 16);	/* warm: slabs and caches populated */
	long probe = (long)inflight * (inflight < 256 ? 4096 / (long)inflight : 1);
	double t0 = bench_now();
	loop(probe);	/* the probe: 4096 pairs (one batch, past that) */
	double t1 = bench_now();
	long fit = (long)(0.2 / (t1 - t0 + 1e-9) * (double)probe);
	if (fit < pairs)
		pairs = fit > probe ? fit / (long)inflight * (long)inflight : probe;
	t0 = bench_now();
	measured(loop, pairs);
	t1 = bench_now();
	printf("%.2f %ld\n", (t1 - t0) * 1e9 / (double)pairs, pairs);
	return 0;
}
