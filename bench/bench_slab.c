// SPDX-License-Identifier: MIT
/*
 * bench_slab.c - object allocation: kmem_cache_alloc/free and kmalloc/kfree
 * of libslub against malloc/free of whatever allocator the process runs on
 * (glibc, or jemalloc/tcmalloc/mimalloc through LD_PRELOAD).
 *
 *   bench_slab MODE [ITERS]     prints "MODE ns/pair"
 * MODE: cache, kmalloc, malloc        alloc+free of one 64-byte object
 *       cache-batch, malloc-batch     1000 allocations, then 1000 frees
 * Under callgrind only the function `measured` is counted (--toggle-collect).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <slub.h>

#define NOINLINE __attribute__((noinline))
#define SIZE 64
#define BATCH 1000

static struct kmem_cache *cache;
static void *batch[BATCH];

NOINLINE static void loop_cache(long n)
{
	for (long i = 0; i < n; i++) {
		void *p = kmem_cache_alloc(cache, GFP_KERNEL);
		*(volatile long *)p = i;
		kmem_cache_free(cache, p);
	}
}

NOINLINE static void loop_kmalloc(long n)
{
	for (long i = 0; i < n; i++) {
		void *p = kmalloc(SIZE, GFP_KERNEL);
		*(volatile long *)p = i;
		kfree(p);
	}
}

NOINLINE static void loop_malloc(long n)
{
	for (long i = 0; i < n; i++) {
		void *p = malloc(SIZE);
		*(volatile long *)p = i;
		free(p);
	}
}

NOINLINE static void loop_cache_batch(long n)
{
	for (long i = 0; i < n; i += BATCH) {
		for (int j = 0; j < BATCH; j++)
			*(volatile long *)(batch[j] = kmem_cache_alloc(cache, GFP_KERNEL)) = j;
		for (int j = 0; j < BATCH; j++)
			kmem_cache_free(cache, batch[j]);
	}
}

NOINLINE static void loop_malloc_batch(long n)
{
	for (long i = 0; i < n; i += BATCH) {
		for (int j = 0; j < BATCH; j++)
			*(volatile long *)(batch[j] = malloc(SIZE)) = j;
		for (int j = 0; j < BATCH; j++)
			free(batch[j]);
	}
}

NOINLINE static void measured(void (*loop)(long), long n)
{
	loop(n);
}

static const struct {
	const char *name;
	void (*loop)(long);
} modes[] = {
	{ "cache", loop_cache }, { "kmalloc", loop_kmalloc }, { "malloc", loop_malloc },
	{ "cache-batch", loop_cache_batch }, { "malloc-batch", loop_malloc_batch },
};

int main(int argc, char **argv)
{
	long iters = argc > 2 ? atol(argv[2]) : 10000000;
	iters = (iters + BATCH - 1) / BATCH * BATCH;
	cache = kmem_cache_create("bench-64", SIZE, 0, 0, NULL);
	for (size_t m = 0; argc > 1 && m < sizeof(modes) / sizeof(modes[0]); m++) {
		if (strcmp(argv[1], modes[m].name))
			continue;
		modes[m].loop(BATCH * 10);	/* warm up */
		struct timespec a, b;
		clock_gettime(CLOCK_MONOTONIC, &a);
		measured(modes[m].loop, iters);
		clock_gettime(CLOCK_MONOTONIC, &b);
		double ns = ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / (double)iters;
		printf("%s %.2f\n", argv[1], ns);
		return 0;
	}
	fprintf(stderr, "usage: %s cache|kmalloc|malloc|cache-batch|malloc-batch [iters]\n", argv[0]);
	return 2;
}
