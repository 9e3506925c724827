// SPDX-License-Identifier: MIT
/*
 * bench_scratch.c - false sharing the allocator causes, after the design of
 * Hoard's cache-scratch (written anew).  The main thread allocates one
 * 8-byte object per thread, neighbours in memory, and hands one to each
 * thread, which frees it: an allocator that reuses a freed object for the
 * thread that freed it now hands threads objects on one cache line.  Each
 * thread then repeats: allocate 8 bytes, write them 500 times, free.  If
 * two threads' objects share a line, every write moves it between cores.
 * On 2 cores, 2 threads show it; more threads share the cores in turns.
 *
 *   bench_scratch THREADS OBJECTS   prints "ops_per_second" (op: one
 *                                   object allocated, written, freed)
 */
#include "bench_util.h"

#define SIZE 8
#define WRITES 500

static long per_thread;

static void *worker(void *arg)
{
	free(arg);	/* the neighbour the main thread allocated */
	for (long i = 0; i < per_thread; i++) {
		volatile char *p = malloc(SIZE);
		for (int w = 0; w < WRITES; w++)
			p[w & (SIZE - 1)] = (char)(p[0] + w);
		free((void *)p);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long threads, objects;
	bench_args(argc, argv, "THREADS OBJECTS", &threads, &objects);
	per_thread = objects / (threads > 0 ? threads : 1);
	pthread_t *t = calloc((size_t)(threads > 0 ? threads : 1), sizeof(*t));
	if (threads < 1 || per_thread < 1 || !t)
		return 2;
	double t0 = bench_now();
	for (long i = 0; i < threads; i++)
		t[i] = bench_spawn(NULL, worker, malloc(SIZE));
	for (long i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	double t1 = bench_now();
	printf("%.0f\n", (double)(per_thread * threads) / (t1 - t0));
	free(t);
	return 0;
}
