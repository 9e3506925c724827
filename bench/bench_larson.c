// SPDX-License-Identifier: MIT
/*
 * bench_larson.c - a server's heap as threads come and go, after the design
 * of Larson and Krishnan's benchmark (written anew): THREADS chains run at
 * once; each owns an array of 1000 slots holding objects of 16..1023 bytes,
 * and replaces random slots (free the old object, allocate a new one, write
 * it).  After each of 10 rounds the thread hands its array to a thread it
 * starts and exits, as a server hands a connection's state on: the
 * successor frees objects its predecessor allocated, on whatever CPU it
 * lands.  The total number of replacements is fixed.
 *
 *   bench_larson THREADS REPLACEMENTS   prints "ops_per_second" (op: one
 *                                       replacement, a free and a malloc)
 */
#include "bench_util.h"

#include <sched.h>

#define SLOTS 1000
#define ROUNDS 10

struct chain {
	void *slot[SLOTS];
	uint64_t seed;
	long per_round, rounds_left;
	pthread_t self;
};

static void *round_of(void *arg)
{
	struct chain *c = arg;
	for (long i = 0; i < c->per_round; i++) {
		size_t k = bench_rand(&c->seed) % SLOTS;
		size_t n = 16 + bench_rand(&c->seed) % 1008;
		free(c->slot[k]);
		c->slot[k] = malloc(n);
		memset(c->slot[k], (int)i, 16);
	}
	if (--c->rounds_left > 0) {
		/* The successor joins nobody: detached, it ends the chain's last. */
		pthread_attr_t a;
		pthread_attr_init(&a);
		pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
		bench_spawn(&a, round_of, c);
		pthread_attr_destroy(&a);
		return NULL;
	}
	for (size_t k = 0; k < SLOTS; k++)
		free(c->slot[k]);
	__atomic_store_n(&c->rounds_left, -1, __ATOMIC_RELEASE);	/* done */
	return NULL;
}

int main(int argc, char **argv)
{
	long threads, total;
	bench_args(argc, argv, "THREADS REPLACEMENTS", &threads, &total);
	if (threads < 1 || total < threads * ROUNDS)
		return 2;
	struct chain *c = calloc((size_t)threads, sizeof(*c));
	if (!c)
		return 1;
	for (long i = 0; i < threads; i++) {
		c[i].seed = 0x2545f4914f6cdd1dULL * (uint64_t)(i + 1);
		for (size_t k = 0; k < SLOTS; k++)
			c[i].slot[k] = malloc(16 + bench_rand(&c[i].seed) % 1008);
		c[i].per_round = total / threads / ROUNDS;
		c[i].rounds_left = ROUNDS;
	}
	double t0 = bench_now();
	for (long i = 0; i < threads; i++)
		c[i].self = bench_spawn(NULL, round_of, &c[i]);
	for (long i = 0; i < threads; i++) {
		pthread_join(c[i].self, NULL);
		while (__atomic_load_n(&c[i].rounds_left, __ATOMIC_ACQUIRE) != -1)
			sched_yield();
	}
	double t1 = bench_now();
	printf("%.0f\n", (double)(c[0].per_round * ROUNDS * threads) / (t1 - t0));
	free(c);
	return 0;
}
