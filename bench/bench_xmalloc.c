// SPDX-License-Identifier: MIT
/*
 * bench_xmalloc.c - objects allocated on one thread and freed on another,
 * after the design of xmalloc-test (written anew): THREADS threads stand in
 * a ring; each allocates batches of 64 objects of 8..512 bytes, hands each
 * batch to the next thread's mailbox, and frees the batches its predecessor
 * hands it.  One thread alone frees its own (the local baseline).  Every
 * free of two or more threads is a remote free: the path a per-CPU or
 * per-thread cache has to send home.  The total work is fixed, so the rate
 * shows what more threads (on 2 cores: oversubscription) cost.
 *
 *   bench_xmalloc THREADS OBJECTS     prints "ops_per_second" (op: a malloc
 *                                     and its free on the other thread)
 */
#include "bench_util.h"

#include <sched.h>

#define BATCH 64
#define PENDING_MAX 32	/* batches a mailbox may hold: memory stays bounded */

struct batch {
	struct batch *next;
	void *obj[BATCH];
};

struct mailbox {
	struct batch *head;	/* pushed by the producer, taken whole by the owner */
	long pending;
	char pad[64 - sizeof(struct batch *) - sizeof(long)];
} __attribute__((aligned(64)));

static struct mailbox *box;
static long threads, batches_each;

static void *worker(void *arg)
{
	long me = (long)arg;
	struct mailbox *in = &box[me], *out = &box[(me + 1) % threads];
	uint64_t seed = 0x9e3779b97f4a7c15ULL * (uint64_t)(me + 1);
	long made = 0, freed = 0;
	while (made < batches_each || freed < batches_each) {
		int idle = 1;
		if (made < batches_each && __atomic_load_n(&out->pending, __ATOMIC_ACQUIRE) < PENDING_MAX) {
			struct batch *b = malloc(sizeof(*b));
			for (int i = 0; i < BATCH; i++) {
				b->obj[i] = malloc(8 + bench_rand(&seed) % 505);
				*(volatile char *)b->obj[i] = 1;
			}
			b->next = __atomic_load_n(&out->head, __ATOMIC_RELAXED);
			while (!__atomic_compare_exchange_n(&out->head, &b->next, b, 1,
							    __ATOMIC_RELEASE, __ATOMIC_RELAXED))
				;
			__atomic_add_fetch(&out->pending, 1, __ATOMIC_RELEASE);
			made++;
			idle = 0;
		}
		struct batch *b = __atomic_exchange_n(&in->head, NULL, __ATOMIC_ACQUIRE);
		while (b) {
			struct batch *next = b->next;
			for (int i = 0; i < BATCH; i++)
				free(b->obj[i]);
			free(b);
			__atomic_sub_fetch(&in->pending, 1, __ATOMIC_RELEASE);
			freed++;
			b = next;
			idle = 0;
		}
		if (idle)
			sched_yield();	/* oversubscribed: let the producer run */
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long objects;
	bench_args(argc, argv, "THREADS OBJECTS", &threads, &objects);
	batches_each = objects / BATCH / (threads > 0 ? threads : 1);
	box = calloc((size_t)(threads > 0 ? threads : 1), sizeof(*box));
	if (threads < 1 || batches_each < 1 || !box)
		return 2;
	pthread_t *t = calloc((size_t)threads, sizeof(*t));
	double t0 = bench_now();
	for (long i = 0; i < threads; i++)
		t[i] = bench_spawn(NULL, worker, (void *)i);
	for (long i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	double t1 = bench_now();
	printf("%.0f\n", (double)(batches_each * threads * BATCH) / (t1 - t0));
	free(t);
	free(box);
	return 0;
}
