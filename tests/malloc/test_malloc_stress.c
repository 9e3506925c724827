// SPDX-License-Identifier: MIT
/*
 * test_malloc_stress.c - libslub-malloc.so under threads and forks: more
 * threads than CPUs pass blocks of every kind (small objects, extents, a
 * few large regions) to each other through shared slots, resize them with
 * realloc and check every byte they wrote; one thread forks all the time,
 * and each child allocates at once, whatever locks the others held.
 * Fixed seeds; nothing may be reported.
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

#define THREADS 8
#define SLOTS 4096
#define OPS 60000

struct block {
	size_t size;
	uint64_t stamp;		/* every 8-byte word of the block holds stamp ^ index */
};

static struct block *slots[SLOTS];
static int stop_forking;
static unsigned long bad_blocks, forks, bad_children;

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static size_t pick_size(uint64_t r)
{
	unsigned int kind = r % 1000;
	if (kind < 900)
		return 16 + (r >> 12) % 1000;		/* small objects */
	if (kind < 995)
		return 8192 + (r >> 12) % (256 << 10);	/* extents */
	return (5 << 20) + (r >> 12) % (1 << 20);	/* large regions */
}

static void fill(struct block *b)
{
	uint64_t *w = (uint64_t *)b;
	for (size_t i = 2; i < b->size / 8; i++)
		w[i] = b->stamp ^ i;
}

static bool intact(const struct block *b, size_t upto)
{
	const uint64_t *w = (const uint64_t *)b;
	for (size_t i = 2; i < upto / 8; i++)
		if (w[i] != (b->stamp ^ i))
			return false;
	return true;
}

static void *worker(void *arg)
{
	uint64_t seed = 0x9e3779b97f4a7c15ULL * ((uintptr_t)arg + 1);
	for (int op = 0; op < OPS; op++) {
		uint64_t r = rnd(&seed);
		struct block **slot = &slots[r % SLOTS];
		struct block *b = __atomic_exchange_n(slot, NULL, __ATOMIC_ACQ_REL);
		if (b && !intact(b, b->size))
			__atomic_add_fetch(&bad_blocks, 1, __ATOMIC_RELAXED);
		if (b && (r >> 40) % 4 == 0) {
			/* Resize: the common prefix must survive, wherever it lands. */
			size_t size = pick_size(rnd(&seed));
			struct block *n = realloc(b, size);
			if (!n) {
				free(b);
				continue;
			}
			size_t keep = size < n->size ? size : n->size;
			if (!intact(n, keep))
				__atomic_add_fetch(&bad_blocks, 1, __ATOMIC_RELAXED);
			n->size = size;
			fill(n);
			b = n;
		} else if (b) {
			free(b);	/* often another thread's block */
			continue;
		} else {
			size_t size = pick_size(r);
			b = (r >> 50) % 2 ? malloc(size) : calloc(1, size);
			if (!b)
				continue;
			b->size = size;
			b->stamp = r;
			fill(b);
		}
		struct block *old = __atomic_exchange_n(slot, b, __ATOMIC_ACQ_REL);
		if (old)
			free(old);
	}
	return NULL;
}

static void *forker(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop_forking, __ATOMIC_ACQUIRE)) {
		pid_t pid = fork();
		if (pid == 0) {
			/* Only this thread exists here: any lock another held is ours now. */
			for (int i = 0; i < 200; i++) {
				void *p = malloc(16 + (size_t)i * 97);
				void *q = malloc(20000);
				if (!p || !q)
					_exit(1);
				free(p);
				free(q);
			}
			_exit(0);
		}
		int status;
		if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			__atomic_add_fetch(&bad_children, 1, __ATOMIC_RELAXED);
		forks++;
	}
	return NULL;
}

int main(void)
{
	pthread_t t[THREADS], f;
	unsigned long errors = slub_errors();
	pthread_create(&f, NULL, forker, NULL);
	for (uintptr_t i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	__atomic_store_n(&stop_forking, 1, __ATOMIC_RELEASE);
	pthread_join(f, NULL);
	for (int i = 0; i < SLOTS; i++) {
		if (slots[i] && !intact(slots[i], slots[i]->size))
			bad_blocks++;
		free(slots[i]);
	}
	fprintf(stderr, "%d threads x %d operations, %lu forks\n", THREADS, OPS, forks);
	CHECK_EQ(bad_blocks, 0);
	CHECK_EQ(bad_children, 0);
	CHECK(forks > 0);
	CHECK_EQ(slub_errors(), errors);
	CHECK_EQ(malloc_trim(0), 1);
	return check_done();
}
