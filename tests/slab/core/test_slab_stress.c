// SPDX-License-Identifier: MIT
/*
 * test_slab_stress.c - more threads than CPUs allocate, stamp, check and
 * free objects of several caches (kmalloc ones included), hand objects to
 * other threads to free (remote frees), migrate between CPUs on purpose,
 * while one thread keeps shrinking the caches (taking over every CPU's
 * slot).  Fixed seeds.  Before any thread exists, the main thread leaves
 * every cache with slabs full, partial and on its CPU lists by the
 * single-threaded slow paths (no locks, plain freelist updates), and frees
 * the rest of those objects while the threads run.  At the end every slab's
 * freelist and counters are validated and every cache shrinks to nothing.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>

#include <slub.h>
#include "check.h"
#include "page/page_alloc.h"
#include "slab/core/slab.h"
#include "slab/core/slab_common.h"

#define THREADS 8
#define LIVE 256
#define EXCHANGE 128
#define NR_CACHES 4
#define PROLOGUE 4000	/* objects per cache allocated while single-threaded */

static unsigned long iterations = UNDER_TSAN ? 40000 : 600000;
static struct kmem_cache *caches[NR_CACHES];
static const unsigned int sizes[NR_CACHES] = { 16, 72, 256, 1500 };
static uintptr_t exchange[EXCHANGE];	/* object | cache index (objects are 8-aligned) */
static int errors, done, ncpus;
static unsigned long next_seq;

struct obj {
	void *p;
	unsigned int cache;	/* NR_CACHES: kmalloc */
};

static void *prologue[NR_CACHES][PROLOGUE];

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static size_t obj_size(unsigned int cache)
{
	return cache < NR_CACHES ? sizes[cache] : 40;
}

static void stamp(void *p, size_t size)
{
	unsigned long seq = __atomic_add_fetch(&next_seq, 1, __ATOMIC_RELAXED);
	unsigned long *w = p;
	w[0] = seq;
	w[size / 8 - 1] = ~seq;
}

static void check_and_free(void *p, unsigned int cache)
{
	unsigned long *w = p;
	size_t size = obj_size(cache);
	if (w[size / 8 - 1] != ~w[0])
		__atomic_add_fetch(&errors, 1, __ATOMIC_RELAXED);
	if (cache < NR_CACHES)
		kmem_cache_free(caches[cache], p);
	else
		kfree(p);
}

static void *worker(void *arg)
{
	uint64_t seed = 0xabcdef12345ULL * ((uintptr_t)arg + 7);
	struct obj live[LIVE] = { { NULL, 0 } };

	for (unsigned long i = 0; i < iterations; i++) {
		struct obj *o = &live[rnd(&seed) % LIVE];
		if (o->p) {
			if (rnd(&seed) % 3 == 0) {
				unsigned int x = (unsigned int)(rnd(&seed) % EXCHANGE);
				uintptr_t old = __atomic_exchange_n(&exchange[x],
								    (uintptr_t)o->p | o->cache,
								    __ATOMIC_ACQ_REL);
				if (old)
					check_and_free((void *)(old & ~7UL), (unsigned int)(old & 7));
			} else {
				check_and_free(o->p, o->cache);
			}
			o->p = NULL;
			continue;
		}
		o->cache = (unsigned int)(rnd(&seed) % (NR_CACHES + 1));
		o->p = o->cache < NR_CACHES ? kmem_cache_alloc(caches[o->cache], GFP_KERNEL)
					    : kmalloc(obj_size(o->cache), GFP_KERNEL);
		if (!o->p) {
			__atomic_add_fetch(&errors, 1, __ATOMIC_RELAXED);
			continue;
		}
		stamp(o->p, obj_size(o->cache));
		if (i % 2048 == 0 && ncpus > 1) {
			cpu_set_t set;
			CPU_ZERO(&set);
			CPU_SET((int)(rnd(&seed) % (uint64_t)ncpus), &set);
			sched_setaffinity(0, sizeof(set), &set);
		}
	}
	for (int i = 0; i < LIVE; i++)
		if (live[i].p)
			check_and_free(live[i].p, live[i].cache);
	return NULL;
}

static void *shrinker(void *arg)
{
	unsigned long *rounds = arg;
	while (!__atomic_load_n(&done, __ATOMIC_RELAXED)) {
		for (int c = 0; c < NR_CACHES; c++)
			kmem_cache_shrink(caches[c]);
		(*rounds)++;
		sched_yield();
	}
	return NULL;
}

int main(void)
{
	pthread_t t[THREADS], sh;
	cpu_set_t all;
	unsigned long shrinks = 0;
	sched_getaffinity(0, sizeof(all), &all);
	ncpus = CPU_COUNT(&all);

	for (int c = 0; c < NR_CACHES; c++) {
		char name[32];
		snprintf(name, sizeof(name), "stress-%u", sizes[c]);
		/*
		 * One cache with a debug flag: debug caches keep no per-CPU
		 * partial slabs, so frees there take the node-list paths.
		 */
		caches[c] = kmem_cache_create(name, sizes[c], 0,
					      c == 1 ? SLAB_CONSISTENCY_CHECKS : 0, NULL);
		CHECK(caches[c] != NULL);
	}
	CHECK_EQ(slub_errors(), 0);
	unsigned long e0 = slub_errors();
	/* One thread: the slow paths take their single-threaded forms. */
	if (!UNDER_TSAN)
		CHECK(os_single_threaded());
	uint64_t seed = 99;
	for (unsigned int c = 0; c < NR_CACHES; c++) {
		for (int i = 0; i < PROLOGUE; i++) {
			prologue[c][i] = kmem_cache_alloc(caches[c], GFP_KERNEL);
			CHECK(prologue[c][i] != NULL);
			stamp(prologue[c][i], sizes[c]);
		}
		for (int i = 0; i < PROLOGUE; i++)
			if (rnd(&seed) % 3 == 0) {	/* frees into full slabs, out of order */
				check_and_free(prologue[c][i], c);
				prologue[c][i] = NULL;
			}
	}
	pthread_create(&sh, NULL, shrinker, &shrinks);
	for (uintptr_t i = 0; i < THREADS; i++)
		CHECK_EQ(pthread_create(&t[i], NULL, worker, (void *)i), 0);
	CHECK(!os_single_threaded());
	/* The rest of them go while the threads allocate from the same slabs. */
	for (unsigned int c = 0; c < NR_CACHES; c++)
		for (int i = 0; i < PROLOGUE; i++)
			if (prologue[c][i])
				check_and_free(prologue[c][i], c);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	__atomic_store_n(&done, 1, __ATOMIC_RELAXED);
	pthread_join(sh, NULL);
	for (int i = 0; i < EXCHANGE; i++)
		if (exchange[i])
			check_and_free((void *)(exchange[i] & ~7UL), (unsigned int)(exchange[i] & 7));

	fprintf(stderr, "%d threads, %lu iterations each, %lu shrink rounds meanwhile\n",
		THREADS, iterations, shrinks);
	CHECK_EQ(errors, 0);
	CHECK_EQ(slub_errors(), e0);
	CHECK_EQ(slab_validate_all(), 0);
	for (int c = 0; c < NR_CACHES; c++) {
		CHECK_EQ(kmem_cache_shrink(caches[c]), 0);	/* every object came back */
		kmem_cache_destroy(caches[c]);
	}
	CHECK_EQ(slub_errors(), e0);
	CHECK_EQ(page_alloc_validate(), 0);
	return check_done();
}
