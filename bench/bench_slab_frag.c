// SPDX-License-Identifier: MIT
/*
 * bench_slab_frag.c - fragmentation of one kmem_cache after churn: THREADS
 * threads fill a shared table of LIVE objects, free a random three quarters
 * of it (mostly objects other threads allocated), allocate a quarter again,
 * and free a random half of what is left.  Then the cache's own figures
 * (its attributes, as slabinfo reads them): slabs, partial slabs, objects
 * in use, and objects in use per slab against objects per slab; once as
 * the churn left it and once after kmem_cache_shrink() (every CPU's slab or
 * sheaves flushed: what the layout itself costs).  Run it with
 * SLUB_OPTIONS=slub_sheaves=N against the unqueued default (run_sheaves.sh).
 *
 *   bench_slab_frag [THREADS [LIVE]]
 * Prints "frag SECONDS INUSE SLABS PARTIAL PER_SLAB FILL% | SLABS PARTIAL PER_SLAB FILL%".
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <slub.h>

#define SIZE 64

static struct kmem_cache *cache;
static void **table;
static size_t live;
static unsigned int threads;
static pthread_barrier_t barrier;

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Which thread frees slot @i in a round: not, mostly, the one that allocated it. */
static unsigned int freer(size_t i, unsigned int round)
{
	return (unsigned int)((i * 2654435761u + round) % threads);
}

static void *worker(void *arg)
{
	unsigned int me = (unsigned int)(uintptr_t)arg;
	uint64_t seed = 0x9e3779b97f4a7c15ULL * (me + 1);
	for (size_t i = me; i < live; i += threads)
		table[i] = kmem_cache_alloc(cache, GFP_KERNEL);
	pthread_barrier_wait(&barrier);
	for (size_t i = 0; i < live; i++)
		if (freer(i, 1) == me && xorshift(&seed) % 4) {
			kmem_cache_free(cache, table[i]);
			table[i] = NULL;
		}
	pthread_barrier_wait(&barrier);
	for (size_t i = me; i < live; i += threads)
		if (!table[i] && xorshift(&seed) % 3 == 0)
			table[i] = kmem_cache_alloc(cache, GFP_KERNEL);
	pthread_barrier_wait(&barrier);
	for (size_t i = 0; i < live; i++)
		if (freer(i, 2) == me && table[i] && xorshift(&seed) % 2) {
			kmem_cache_free(cache, table[i]);
			table[i] = NULL;
		}
	return NULL;
}

static unsigned long attr(const char *name)
{
	char buf[64];
	return slub_attr_read(cache, name, buf, sizeof(buf)) > 0 ? strtoul(buf, NULL, 10) : 0;
}

static void figures(void)
{
	unsigned long slabs = attr("slabs"), inuse = attr("objects");
	unsigned long per_slab = attr("objs_per_slab");
	printf(" %lu %lu %.1f %.1f%%", slabs, attr("partial"), slabs ? (double)inuse / slabs : 0.0,
	       slabs ? 100.0 * inuse / ((double)slabs * per_slab) : 0.0);
}

int main(int argc, char **argv)
{
	threads = argc > 1 ? (unsigned int)atoi(argv[1]) : 4;
	live = argc > 2 ? strtoul(argv[2], NULL, 10) : 400000;
	if (!threads || !live)
		return 2;
	cache = kmem_cache_create("bench-frag", SIZE, 0, 0, NULL);
	table = calloc(live, sizeof(*table));
	pthread_t t[threads];
	pthread_barrier_init(&barrier, NULL, threads);
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (unsigned int i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)i);
	for (unsigned int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("frag %.3f", (double)(b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9);
	printf(" %lu", attr("objects"));
	figures();
	printf(" |");
	kmem_cache_shrink(cache);
	figures();
	printf("\n");
	return 0;
}
