// SPDX-License-Identifier: MIT
/*
 * bench_agent.c - what reading a live tree costs the process read: N
 * threads allocate and free (four kmem_caches and kmalloc sizes, each
 * thread holding a window of objects) for S seconds and the total ops/s
 * is printed.  Run with SLUB_OPTIONS=slub_agent or without; run_agent.sh
 * starts readers of the tree (slabinfo -p --json in a loop) beside it.
 *
 *   bench_agent THREADS SECONDS     prints "pid P" at once, then at the end
 *                                   "ops_per_s N" and "cpu_ns_per_op N"
 *
 * cpu_ns_per_op is the allocating threads' own CPU time per operation: on
 * a machine busy with other work it still says what the readers cost
 * them (contention, cache misses), apart from the CPU the readers take.
 *
 * The measured seconds start after a half-second warm-up, time for the
 * readers to connect.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <slub.h>

#define WINDOW 512

static struct kmem_cache *caches[4];
static volatile int phase;	/* 0 warm-up, 1 measured, 2 stop */
static double cpu_ns[256];	/* each thread's CPU time in the measured phase */

static double thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void *worker(void *arg)
{
	unsigned long *ops = arg, n = 0, x = (uintptr_t)arg;
	size_t me = (size_t)(*ops - 1);
	void *held[WINDOW] = { 0 };
	double start = 0;
	while (phase < 2) {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		unsigned int k = (unsigned int)(x >> 33) % WINDOW;
		if (held[k]) {
			if (k % 5 == 4)
				kfree(held[k]);
			else
				kmem_cache_free(caches[k % 5], held[k]);
			held[k] = NULL;
		} else {
			held[k] = k % 5 == 4 ? kmalloc(16 + (x >> 40) % 1000, 0) :
					       kmem_cache_alloc(caches[k % 5], 0);
		}
		if (phase == 1 && !n++)
			start = thread_cpu_ns();
	}
	cpu_ns[me] = n ? thread_cpu_ns() - start : 0;
	for (unsigned int k = 0; k < WINDOW; k++)
		if (held[k]) {
			if (k % 5 == 4)
				kfree(held[k]);
			else
				kmem_cache_free(caches[k % 5], held[k]);
		}
	*ops = n;
	return NULL;
}

static void sleep_s(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };
	while (nanosleep(&ts, &ts))
		;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 8;
	double seconds = argc > 2 ? atof(argv[2]) : 3;
	if (threads < 1 || threads > 256 || seconds <= 0) {
		fprintf(stderr, "usage: bench_agent THREADS SECONDS\n");
		return 2;
	}
	for (int i = 0; i < 4; i++) {
		char name[32];
		snprintf(name, sizeof(name), "bench_agent%d", i);
		caches[i] = kmem_cache_create(name, 24 + 56 * (unsigned)i, 0, SLAB_NO_MERGE, NULL);
	}
	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	pthread_t t[256];
	unsigned long ops[256];
	for (int i = 0; i < threads; i++) {
		ops[i] = (unsigned long)i + 1;
		pthread_create(&t[i], NULL, worker, &ops[i]);
	}
	sleep_s(0.5);
	phase = 1;
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	sleep_s(seconds);
	phase = 2;
	clock_gettime(CLOCK_MONOTONIC, &b);
	unsigned long total = 0;
	double cpu = 0;
	for (int i = 0; i < threads; i++) {
		pthread_join(t[i], NULL);
		total += ops[i];
		cpu += cpu_ns[i];
	}
	double dt = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
	printf("ops_per_s %.0f\ncpu_ns_per_op %.2f\n", (double)total / dt,
	       total ? cpu / (double)total : 0);
	return 0;
}
