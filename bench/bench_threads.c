// SPDX-License-Identifier: MIT
/*
 * bench_threads.c - memory held as threads multiply: N threads churn one
 * shared live set of objects (allocate into empty slots, free what they
 * find, often objects another thread allocated).  SLUB keeps state per
 * CPU, not per thread, so peak RSS must not grow with N.
 *
 *   bench_threads N [--baseline]
 * prints "N peak_rss_kib stack_kib"; --baseline runs the same threads
 * (same stacks, same barrier) without allocating, so its figure is what
 * the threads themselves cost.  A thread that calls the allocator touches
 * more of its own stack than one that only waits: stack_kib (the stack
 * pages resident when each thread ends, by mincore) lets the script take
 * the threads' stacks out of the difference, as the issue asks.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <slub.h>

#define SLOTS 100000
#define TOTAL_OPS 4000000UL
#define STACK (128 * 1024)

static void *slots[SLOTS];
static unsigned long ops_per_thread;
static int baseline;
static pthread_barrier_t start;
static unsigned long stack_pages;	/* resident stack pages, summed over threads */

static void count_stack_pages(void)
{
	pthread_attr_t a;
	void *base;
	size_t size;
	if (pthread_getattr_np(pthread_self(), &a))
		return;
	pthread_attr_getstack(&a, &base, &size);
	pthread_attr_destroy(&a);
	long page = sysconf(_SC_PAGESIZE);
	size_t n = size / (size_t)page;
	unsigned char vec[n];
	if (mincore(base, size, vec))
		return;
	unsigned long resident = 0;
	for (size_t i = 0; i < n; i++)
		resident += vec[i] & 1;
	__atomic_add_fetch(&stack_pages, resident, __ATOMIC_RELAXED);
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void *worker(void *arg)
{
	uint64_t seed = 0x9e3779b97f4a7c15ULL ^ ((uintptr_t)arg * 0x100000001b3ULL);
	pthread_barrier_wait(&start);
	if (baseline) {
		count_stack_pages();
		return NULL;
	}
	for (unsigned long i = 0; i < ops_per_thread; i++) {
		uint64_t r = rnd(&seed);
		void **slot = &slots[r % SLOTS];
		void *old = __atomic_exchange_n(slot, NULL, __ATOMIC_ACQ_REL);
		if (old) {
			kfree(old);
		} else {
			size_t size = 16 + (r >> 40) % 240;	/* 16..255 bytes */
			void *p = kmalloc(size, GFP_KERNEL);
			memset(p, 1, 16);
			old = __atomic_exchange_n(slot, p, __ATOMIC_ACQ_REL);
			if (old)
				kfree(old);
		}
	}
	count_stack_pages();
	return NULL;
}

static long peak_rss_kib(void)
{
	char line[256];
	long kib = -1;
	FILE *f = fopen("/proc/self/status", "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmHWM:", 6))
			kib = atol(line + 6);
	if (f)
		fclose(f);
	return kib;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 8;
	baseline = argc > 2 && !strcmp(argv[2], "--baseline");
	if (n < 1)
		return 2;
	ops_per_thread = TOTAL_OPS / (unsigned long)n;
	pthread_t *t = calloc((size_t)n, sizeof(*t));
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, STACK);
	pthread_barrier_init(&start, NULL, (unsigned)n);
	kfree(kmalloc(8, GFP_KERNEL));	/* the allocator's start-up in both modes */
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], &attr, worker, (void *)(uintptr_t)i)) {
			perror("pthread_create");
			return 1;
		}
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("%d %ld %lu\n", n, peak_rss_kib(), stack_pages * (unsigned long)sysconf(_SC_PAGESIZE) / 1024);
	return 0;
}
