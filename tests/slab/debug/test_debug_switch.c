// SPDX-License-Identifier: MIT
/*
 * test_debug_switch.c - debug flags switched on and off through the
 * attributes (red_zone, poison, store_user, sanity_checks, trace's
 * neighbours) while other threads allocate and free in the same cache: a
 * switch takes effect whole or is refused (-EBUSY), and neither way may
 * the allocator crash, hand an object out twice, or report corruption
 * that the program did not commit.  Run in the fast paths' modes by
 * tests/CMakeLists.txt (rseq, cmpxchg16b, sheaves).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <slub.h>
#include "check.h"

#define CHURNERS 2
#define HELD 8
#define SIZE 64

static struct kmem_cache *cache;
static int stop;
static unsigned long overlaps;

/* Each thread fills its objects with its own byte and checks it before the free. */
static void *churn(void *arg)
{
	uint8_t mine = (uint8_t)(uintptr_t)arg;
	void *held[HELD] = { 0 };
	unsigned long round = 0;
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		/* Mostly one object at a time: the cache often has no slab, so switches are taken. */
		unsigned int k = (unsigned int)(round++ % HELD);
		unsigned int n = round % 64 ? 1 : HELD;
		for (unsigned int i = 0; i < n; i++) {
			unsigned int j = (k + i) % HELD;
			if (held[j]) {
				uint8_t *p = held[j];
				for (unsigned int b = 0; b < SIZE; b++)
					if (p[b] != mine) {
						__atomic_add_fetch(&overlaps, 1, __ATOMIC_RELAXED);
						break;
					}
				kmem_cache_free(cache, p);
				held[j] = NULL;
			} else {
				held[j] = kmem_cache_alloc(cache, GFP_KERNEL);
				if (held[j])
					memset(held[j], mine, SIZE);
			}
		}
		/* Pauses with nothing held: moments when the switch may be taken. */
		if (!(round & 3))
			sched_yield();
	}
	for (unsigned int j = 0; j < HELD; j++)
		if (held[j])
			kmem_cache_free(cache, held[j]);
	return NULL;
}

struct switch_count {
	unsigned long done, refused;
};

static void flip(const char *attr, int rounds, struct switch_count *sc)
{
	for (int i = 0; i < rounds; i++) {
		const char *v = i & 1 ? "0" : "1";
		ssize_t r;
		/* A few tries: a switch is taken only at a moment the cache has no slab. */
		for (int tries = 0; (r = slub_attr_write(cache, attr, v, 1)) == -EBUSY && tries < 50; tries++)
			sc->refused++;
		if (r == 1) {
			/* Taken: the attribute reads back what was written, whole. */
			char buf[16] = "";
			slub_attr_read(cache, attr, buf, sizeof(buf));
			CHECK(buf[0] == v[0]);
			sc->done++;
		} else {
			CHECK(r == -EBUSY);
		}
	}
}

static void switch_while_allocating(void)
{
	static const char *const attrs[] = { "red_zone", "poison", "store_user", "sanity_checks" };
	cache = kmem_cache_create("switch_64", SIZE, 0, SLAB_NO_MERGE, NULL);
	CHECK(cache != NULL);
	CHECK(slub_attr_write(cache, "min_partial", "0", 1) == 1);
	unsigned long errors = slub_errors();
	pthread_t t[CHURNERS];
	__atomic_store_n(&stop, 0, __ATOMIC_RELAXED);
	for (uintptr_t i = 0; i < CHURNERS; i++)
		CHECK(!pthread_create(&t[i], NULL, churn, (void *)(i + 0x41)));
	struct switch_count sc[4] = { 0 };
	int rounds = UNDER_TSAN ? 300 : 6000;
	for (int pass = 0; pass < 3; pass++)
		for (int a = 0; a < 4; a++)
			flip(attrs[a], rounds / 3, &sc[a]);
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < CHURNERS; i++)
		pthread_join(t[i], NULL);
	for (int a = 0; a < 4; a++)
		printf("   %-13s %lu writes taken, %lu refused\n", attrs[a], sc[a].done, sc[a].refused);
	CHECK_EQ(overlaps, 0);
	CHECK_EQ(slub_errors(), errors);
	/* Every check on, then a clean validation (only a debug cache validates). */
	for (int a = 0; a < 4; a++)
		while (slub_attr_write(cache, attrs[a], "1", 1) == -EBUSY)
			;
	CHECK(slub_attr_write(cache, "validate", "1", 1) == 1);
	CHECK_EQ(slub_errors(), errors);
	kmem_cache_destroy(cache);
}

/* The switch is taken when the cache has no slab, refused (-EBUSY) while it has one. */
static void switch_taken_or_refused(void)
{
	cache = kmem_cache_create("switch_one", SIZE, 0, SLAB_NO_MERGE, NULL);
	CHECK(slub_attr_write(cache, "min_partial", "0", 1) == 1);
	void *p = kmem_cache_alloc(cache, GFP_KERNEL);
	CHECK_EQ(slub_attr_write(cache, "red_zone", "1", 1), -EBUSY);
	kmem_cache_free(cache, p);
	CHECK_EQ(slub_attr_write(cache, "red_zone", "1", 1), 1);
	char buf[16] = "";
	CHECK(slub_attr_read(cache, "red_zone", buf, sizeof(buf)) > 0 && buf[0] == '1');
	p = kmem_cache_alloc(cache, GFP_KERNEL);
	memset(p, 1, SIZE);
	kmem_cache_free(cache, p);
	CHECK_EQ(slub_attr_write(cache, "red_zone", "0", 1), 1);
	/* Laid out again whole: no left red zone is left in front of the objects. */
	p = kmem_cache_alloc(cache, GFP_KERNEL);
	CHECK_EQ((uintptr_t)p % SIZE, 0);
	kmem_cache_free(cache, p);
	kmem_cache_destroy(cache);
}

/*
 * A switch while a slab is being made: the constructor (run inside the
 * making, after the layout was read) holds the maker until the switch has
 * been tried.  The switch must be refused, or the slab would come out in
 * the old layout into a cache of the new one.
 */
static int gate;		/* 1: the maker is in the constructor; 2: the switch was tried */

static void ctor_gate(void *object)
{
	int expected = 0;
	if (__atomic_compare_exchange_n(&gate, &expected, 1, false, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE))
		while (__atomic_load_n(&gate, __ATOMIC_ACQUIRE) != 2)
			sched_yield();
	memset(object, 0x11, SIZE);
}

static void *make_one(void *arg)
{
	(void)arg;
	return kmem_cache_alloc(cache, GFP_KERNEL);
}

static void switch_during_slab_making(void)
{
	cache = kmem_cache_create("switch_ctor", SIZE, 0, SLAB_NO_MERGE, ctor_gate);
	CHECK(slub_attr_write(cache, "min_partial", "0", 1) == 1);
	unsigned long errors = slub_errors();
	__atomic_store_n(&gate, 0, __ATOMIC_RELAXED);
	pthread_t t;
	CHECK(!pthread_create(&t, NULL, make_one, NULL));
	while (__atomic_load_n(&gate, __ATOMIC_ACQUIRE) != 1)
		sched_yield();
	ssize_t r = slub_attr_write(cache, "red_zone", "1", 1);
	__atomic_store_n(&gate, 2, __ATOMIC_RELEASE);
	void *p = NULL;
	pthread_join(t, &p);
	CHECK_EQ(r, -EBUSY);
	CHECK(p != NULL);
	kmem_cache_free(cache, p);
	/* Whatever was taken, the cache is whole: every check on, a clean validation. */
	while (slub_attr_write(cache, "sanity_checks", "1", 1) == -EBUSY)
		;
	CHECK(slub_attr_write(cache, "validate", "1", 1) == 1);
	CHECK_EQ(slub_errors(), errors);
	kmem_cache_destroy(cache);
}

int main(void)
{
	RUN(switch_taken_or_refused);
	RUN(switch_during_slab_making);
	RUN(switch_while_allocating);
	return check_done();
}
