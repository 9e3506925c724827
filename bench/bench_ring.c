// SPDX-License-Identifier: MIT
/*
 * bench_ring.c - issue 26's instruction count: a ring of 64 slots, each
 * step frees the oldest block and allocates its replacement
 * (free(slot[i % 64]); slot[i % 64] = malloc(n)), so frees and allocations
 * alternate with 64 blocks live, as in a program's steady state.
 *
 *   bench_ring SIZE PAIRS [malloc|cache|kmalloc]    prints "ns_per_pair"
 *
 * Built twice, as bench_micro: bench_ring calls malloc/free (any allocator
 * by LD_PRELOAD); bench_ring_slab (RING_SLAB) links libslub for the
 * kmem_cache and kmalloc rings.  Under callgrind only `measured` is counted
 * (--toggle-collect=measured); bench/run_ring_ir.sh prints Ir per pair.
 */
#include "bench_util.h"

#ifdef RING_SLAB
#include <slub.h>
static struct kmem_cache *cache;
#endif

#define NOINLINE __attribute__((noinline))
#define RING 64

static void *slot[RING];
static size_t size;

#define RING_LOOP(FREE, ALLOC)                          \
	for (long i = 0; i < pairs; i++) {              \
		FREE(slot[i % RING]);                   \
		slot[i % RING] = ALLOC;                 \
	}

NOINLINE static void ring_malloc(long pairs)
{
	RING_LOOP(free, malloc(size))
}

#ifdef RING_SLAB
#define CACHE_FREE(p) (p ? kmem_cache_free(cache, p) : (void)0)
NOINLINE static void ring_cache(long pairs)
{
	RING_LOOP(CACHE_FREE, kmem_cache_alloc(cache, GFP_KERNEL))
}

NOINLINE static void ring_kmalloc(long pairs)
{
	RING_LOOP(kfree, kmalloc(size, GFP_KERNEL))
}
#endif

NOINLINE static void measured(void (*loop)(long), long pairs)
{
	loop(pairs);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: bench_ring SIZE PAIRS [malloc|cache|kmalloc]\n");
		return 2;
	}
	size = strtoul(argv[1], NULL, 10);
	long pairs = atol(argv[2]) / RING * RING;
	const char *api = argc > 3 ? argv[3] : "malloc";
	/* volatile: with one loop to choose from, GCC would clone `measured` with it built in. */
	void (*volatile loop)(long) = NULL;
	if (!strcmp(api, "malloc"))
		loop = ring_malloc;
#ifdef RING_SLAB
	cache = kmem_cache_create("bench-ring", (unsigned int)size, 0, 0, NULL);
	if (!strcmp(api, "cache"))
		loop = ring_cache;
	else if (!strcmp(api, "kmalloc"))
		loop = ring_kmalloc;
#endif
	if (!loop || !size || pairs <= 0) {
		fprintf(stderr, "bench_ring: bad arguments (API %s)\n", api);
		return 2;
	}
	loop(RING * 16);	/* warm: the ring full, slabs populated */
	double t0 = bench_now();
	measured(loop, pairs);
	double t1 = bench_now();
	printf("%.2f\n", (t1 - t0) * 1e9 / (double)pairs);
	return 0;
}
