// SPDX-License-Identifier: MIT
/*
 * bench_shortlived.c - many threads, each short-lived, each with
 * short-lived objects: waves of THREADS threads are started and joined
 * until 512 threads have run; each allocates and frees OBJECTS/512 objects
 * of 16..511 bytes through a window of 16 live ones, then exits.  What a
 * thread costs the allocator when it comes (a thread cache or arena to set
 * up) and goes (one to drain) is part of the rate, as for a server that
 * starts a thread per request.
 *
 *   bench_shortlived THREADS OBJECTS   prints "ops_per_second" (op: a malloc
 *                                      and its free)
 */
#include "bench_util.h"

#define TOTAL_THREADS 512
#define WINDOW 16

static long per_thread;

static void *worker(void *arg)
{
	uint64_t seed = 0xd1b54a32d192ed03ULL * ((uint64_t)(uintptr_t)arg + 1);
	void *live[WINDOW] = { 0 };
	for (long i = 0; i < per_thread; i++) {
		size_t k = (size_t)i % WINDOW;
		free(live[k]);
		live[k] = malloc(16 + bench_rand(&seed) % 496);
		*(volatile char *)live[k] = 1;
	}
	for (size_t k = 0; k < WINDOW; k++)
		free(live[k]);
	return NULL;
}

int main(int argc, char **argv)
{
	long threads, objects;
	bench_args(argc, argv, "THREADS OBJECTS", &threads, &objects);
	per_thread = objects / TOTAL_THREADS;
	if (threads < 1 || threads > TOTAL_THREADS || per_thread < WINDOW)
		return 2;
	pthread_t t[TOTAL_THREADS];
	double t0 = bench_now();
	for (long started = 0; started < TOTAL_THREADS; started += threads) {
		long wave = started + threads <= TOTAL_THREADS ? threads : TOTAL_THREADS - started;
		for (long i = 0; i < wave; i++)
			t[i] = bench_spawn(NULL, worker, (void *)(started + i));
		for (long i = 0; i < wave; i++)
			pthread_join(t[i], NULL);
	}
	double t1 = bench_now();
	printf("%.0f\n", (double)(per_thread * TOTAL_THREADS) / (t1 - t0));
	return 0;
}
