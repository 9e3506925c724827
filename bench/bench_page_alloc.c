// SPDX-License-Identifier: MIT
/*
 * bench_page_alloc.c - the page allocator against mmap/munmap and glibc's
 * aligned_alloc/free, side by side in one process.
 *
 *   bench_page_alloc [--iters N] [--rounds R]      time table, ratios
 *   bench_page_alloc --only MODE --iters N          one loop (for callgrind)
 *
 * Workloads, each an allocation and a free of what it allocated, with one
 * word written so the memory is really used:
 *   order0    one page, freed at once
 *   mix0-3    orders 0,1,2,3 in turn, naturally aligned, freed at once
 *   batch256  256 single pages, then all freed (splits and merges)
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include <slub.h>

#define BATCH 256
static void *batch[BATCH];

#define NOINLINE __attribute__((noinline))

NOINLINE static void loop_slub_order0(long n)
{
	for (long i = 0; i < n; i++) {
		unsigned long a = __get_free_pages(GFP_KERNEL, 0);
		*(volatile long *)a = i;
		free_pages(a, 0);
	}
}

NOINLINE static void loop_slub_mix(long n)
{
	for (long i = 0; i < n; i++) {
		unsigned int o = (unsigned int)(i & 3);
		unsigned long a = __get_free_pages(GFP_KERNEL, o);
		*(volatile long *)a = i;
		free_pages(a, o);
	}
}

NOINLINE static void loop_slub_batch(long n)
{
	for (long i = 0; i < n; i += BATCH) {
		for (int j = 0; j < BATCH; j++) {
			batch[j] = (void *)__get_free_pages(GFP_KERNEL, 0);
			*(volatile long *)batch[j] = j;
		}
		for (int j = 0; j < BATCH; j++)
			free_pages((unsigned long)batch[j], 0);
	}
}

static void *map(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		abort();
	return p;
}

NOINLINE static void loop_mmap_order0(long n)
{
	for (long i = 0; i < n; i++) {
		void *p = map(PAGE_SIZE);
		*(volatile long *)p = i;
		munmap(p, PAGE_SIZE);
	}
}

NOINLINE static void loop_mmap_mix(long n)
{
	for (long i = 0; i < n; i++) {
		size_t len = PAGE_SIZE << (i & 3);
		void *p = map(len);	/* mmap gives page alignment only */
		*(volatile long *)p = i;
		munmap(p, len);
	}
}

NOINLINE static void loop_mmap_batch(long n)
{
	for (long i = 0; i < n; i += BATCH) {
		for (int j = 0; j < BATCH; j++) {
			batch[j] = map(PAGE_SIZE);
			*(volatile long *)batch[j] = j;
		}
		for (int j = 0; j < BATCH; j++)
			munmap(batch[j], PAGE_SIZE);
	}
}

NOINLINE static void loop_glibc_order0(long n)
{
	for (long i = 0; i < n; i++) {
		void *p = aligned_alloc(PAGE_SIZE, PAGE_SIZE);
		*(volatile long *)p = i;
		free(p);
	}
}

NOINLINE static void loop_glibc_mix(long n)
{
	for (long i = 0; i < n; i++) {
		size_t len = PAGE_SIZE << (i & 3);
		void *p = aligned_alloc(len, len);
		*(volatile long *)p = i;
		free(p);
	}
}

NOINLINE static void loop_glibc_batch(long n)
{
	for (long i = 0; i < n; i += BATCH) {
		for (int j = 0; j < BATCH; j++) {
			batch[j] = aligned_alloc(PAGE_SIZE, PAGE_SIZE);
			*(volatile long *)batch[j] = j;
		}
		for (int j = 0; j < BATCH; j++)
			free(batch[j]);
	}
}

struct mode {
	const char *name;
	const char *workload;
	const char *impl;
	void (*loop)(long);
	double best_ns;
};

static struct mode modes[] = {
	{ "slub-order0", "order0", "libslub", loop_slub_order0, 0 },
	{ "mmap-order0", "order0", "mmap/munmap", loop_mmap_order0, 0 },
	{ "glibc-order0", "order0", "glibc aligned_alloc", loop_glibc_order0, 0 },
	{ "slub-mix", "mix0-3", "libslub", loop_slub_mix, 0 },
	{ "mmap-mix", "mix0-3", "mmap/munmap", loop_mmap_mix, 0 },
	{ "glibc-mix", "mix0-3", "glibc aligned_alloc", loop_glibc_mix, 0 },
	{ "slub-batch", "batch256", "libslub", loop_slub_batch, 0 },
	{ "mmap-batch", "batch256", "mmap/munmap", loop_mmap_batch, 0 },
	{ "glibc-batch", "batch256", "glibc aligned_alloc", loop_glibc_batch, 0 },
};
#define NR_MODES (sizeof(modes) / sizeof(modes[0]))

/* callgrind counts inside this function only (--toggle-collect=measured). */
NOINLINE static void measured(void (*loop)(long), long n)
{
	loop(n);
}

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long iters = 200000;
	int rounds = 5;
	const char *only = NULL;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--iters") && i + 1 < argc)
			iters = atol(argv[++i]);
		else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			rounds = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--only") && i + 1 < argc)
			only = argv[++i];
		else {
			fprintf(stderr, "usage: %s [--iters N] [--rounds R] [--only MODE]\n", argv[0]);
			return 2;
		}
	}
	iters = (iters + BATCH - 1) / BATCH * BATCH;

	if (only) {
		for (size_t m = 0; m < NR_MODES; m++)
			if (!strcmp(modes[m].name, only)) {
				modes[m].loop(BATCH * 4);	/* warm up: zones grown, caches hot */
				measured(modes[m].loop, iters);
				return 0;
			}
		fprintf(stderr, "unknown mode %s\n", only);
		return 2;
	}

	for (size_t m = 0; m < NR_MODES; m++)
		modes[m].loop(BATCH * 4);
	/* Interleaved rounds; the minimum is the least disturbed run. */
	for (int r = 0; r < rounds; r++)
		for (size_t m = 0; m < NR_MODES; m++) {
			double t0 = now_ns();
			modes[m].loop(iters);
			double ns = (now_ns() - t0) / (double)iters;
			if (r == 0 || ns < modes[m].best_ns)
				modes[m].best_ns = ns;
		}

	printf("%-10s %-20s %10s %18s\n", "workload", "allocator", "ns/pair",
	       "libslub time / this");
	for (size_t m = 0; m < NR_MODES; m++) {
		double slub = modes[m - m % 3].best_ns;
		printf("%-10s %-20s %10.1f %18.2f\n", modes[m].workload, modes[m].impl,
		       modes[m].best_ns, slub / modes[m].best_ns);
	}
	printf("(%ld pairs per run, best of %d interleaved rounds; below 1: libslub is faster)\n",
	       iters, rounds);
	return slub_errors() ? 1 : 0;
}
