// SPDX-License-Identifier: MIT
/*
 * bench_churn.c - random replacement in a live heap, the pattern of a cache
 * server overwriting keys (Redis SET): fill LIVE objects of small mixed
 * sizes, then STEPS times pick a random object, free it and allocate its
 * successor, asking malloc_usable_size of both as Redis's accounting does.
 * Plain malloc/free: each allocator comes in by LD_PRELOAD (run_churn.sh).
 *
 *   bench_churn LIVE STEPS [threaded]
 *
 * "threaded" starts one idle thread first, so that allocators with a
 * single-threaded mode (glibc, libslub) run their multi-threaded paths.
 * Prints "churn NS_PER_REPLACE".
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const size_t sizes[] = { 16, 24, 104, 24, 16, 40 };	/* key, entry, value, ... */
#define NR_SIZES (sizeof(sizes) / sizeof(sizes[0]))

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void *idle(void *arg)
{
	pthread_mutex_t *m = arg;
	pthread_mutex_lock(m);	/* held by main until the end */
	pthread_mutex_unlock(m);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: bench_churn LIVE STEPS [threaded]\n");
		return 2;
	}
	size_t live = strtoul(argv[1], NULL, 10), steps = strtoul(argv[2], NULL, 10);
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pthread_t t;
	bool threaded = argc > 3 && !strcmp(argv[3], "threaded");
	if (threaded) {
		pthread_mutex_lock(&m);
		pthread_create(&t, NULL, idle, &m);
	}
	void **obj = malloc(live * sizeof(*obj));
	if (!live || !obj)
		return 1;
	size_t used = 0;
	for (size_t i = 0; i < live; i++) {
		obj[i] = malloc(sizes[i % NR_SIZES]);
		memset(obj[i], 1, 8);
		used += malloc_usable_size(obj[i]);
	}
	uint64_t seed = 88172645463325252ULL;
	double t0 = now();
	for (size_t s = 0; s < steps; s++) {
		size_t k = xorshift(&seed) % live;
		used -= malloc_usable_size(obj[k]);
		free(obj[k]);
		obj[k] = malloc(sizes[k % NR_SIZES]);
		memset(obj[k], 2, 8);	/* the caller writes its new object */
		used += malloc_usable_size(obj[k]);
	}
	double t1 = now();
	for (size_t i = 0; i < live; i++) {
		used -= malloc_usable_size(obj[i]);
		free(obj[i]);
	}
	free(obj);
	if (threaded) {
		pthread_mutex_unlock(&m);
		pthread_join(t, NULL);
	}
	if (used) {
		fprintf(stderr, "bench_churn: usable sizes do not add up (%zu left)\n", used);
		return 1;
	}
	printf("churn %.1f\n", (t1 - t0) * 1e9 / (double)steps);
	return 0;
}
