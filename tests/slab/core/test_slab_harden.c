// SPDX-License-Identifier: MIT
/*
 * test_slab_harden.c - init_on_alloc, init_on_free and slab_freelist_random
 * (slab_harden.c, slab_random.c), each case in a child started with its
 * SLUB_OPTIONS: an object comes zeroed (or is wiped at its free) but for
 * the kernel's exemptions (a constructor's cache, an RCU or P cache unless
 * __GFP_ZERO); a double free is still caught under init_on_free; a random
 * slab hands out every object once, not in address order, and each slab
 * from its own place in the cache's sequence; the caches validate clean.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <sys/wait.h>

#include <slub.h>
#include "check.h"

#define OBJ 96

static void ctor_fill(void *p)
{
	memset(p, 0x42, OBJ);
}

static bool all_bytes(const void *p, size_t n, int byte)
{
	for (size_t i = 0; i < n; i++)
		if (((const unsigned char *)p)[i] != byte)
			return false;
	return true;
}

/* Dirty an object of @s, free it, take it back (a lone thread gets the same one). */
static void *dirty_and_reuse(struct kmem_cache *s, gfp_t gfp)
{
	void *p = kmem_cache_alloc(s, GFP_KERNEL);
	memset(p, 0x77, OBJ);
	kmem_cache_free(s, p);
	void *q = kmem_cache_alloc(s, gfp);
	CHECK(q == p);
	return q;
}

static int on_alloc(void)
{
	unsigned long e = slub_errors();
	struct kmem_cache *plain = kmem_cache_create("plain", OBJ, 0, SLAB_NO_MERGE, NULL);
	struct kmem_cache *ctor = kmem_cache_create("ctor", OBJ, 0, 0, ctor_fill);
	struct kmem_cache *rcu = kmem_cache_create("rcu", OBJ, 0, SLAB_TYPESAFE_BY_RCU, NULL);
	void *p = dirty_and_reuse(plain, GFP_KERNEL);
	CHECK(all_bytes(p, OBJ, 0));
	kmem_cache_free(plain, p);
	/* A constructor's state is never wiped (its free pointer lies outside the object). */
	p = dirty_and_reuse(ctor, GFP_KERNEL);
	CHECK(all_bytes(p, OBJ, 0x77));
	kmem_cache_free(ctor, p);
	/* RCU: only when asked. */
	p = dirty_and_reuse(rcu, GFP_KERNEL);
	CHECK(all_bytes(p, OBJ, 0x77));
	kmem_cache_free(rcu, p);
	p = dirty_and_reuse(rcu, GFP_KERNEL | __GFP_ZERO);
	CHECK(all_bytes(p, OBJ, 0));
	kmem_cache_free(rcu, p);
	/* kmalloc too. */
	char *k = kmalloc(200, GFP_KERNEL);
	memset(k, 0x55, 200);
	kfree(k);
	k = kmalloc(200, GFP_KERNEL);
	CHECK(all_bytes(k, 200, 0));
	kfree(k);
	CHECK_EQ(slub_validate(plain) + slub_validate(ctor) + slub_validate(rcu), 0);
	CHECK_EQ(slub_errors(), e);
	return check_done();
}

static int on_free(void)
{
	struct kmem_cache *plain = kmem_cache_create("plain", OBJ, 0, SLAB_NO_MERGE, NULL);
	struct kmem_cache *ctor = kmem_cache_create("ctor", OBJ, 0, 0, ctor_fill);
	unsigned char *p = kmem_cache_alloc(plain, GFP_KERNEL);
	memset(p, 0x77, OBJ);
	kmem_cache_free(plain, p);
	/* Slab memory stays mapped: the freed object reads as zero but its free pointer. */
	size_t nonzero = 0;
	for (size_t i = 0; i < OBJ; i++)
		nonzero += p[i] != 0;
	CHECK(nonzero <= sizeof(void *));
	/* The free pointer's tag still tells a double free. */
	EXPECT_REPORT(kmem_cache_free(plain, p), "double free");
	unsigned char *c = kmem_cache_alloc(ctor, GFP_KERNEL);
	memset(c, 0x77, OBJ);
	kmem_cache_free(ctor, c);
	CHECK(all_bytes(c, OBJ, 0x77));
	/* Off: init_on_alloc is not implied; the object keeps what it had but its word. */
	CHECK_EQ(slub_validate(plain) + slub_validate(ctor), 0);
	return check_done();
}

static int cmp_ptr(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
	return x < y ? -1 : x > y;
}

/* Objects of one new slab of @s in the order handed out: 1 if in address order. */
static int slab_in_order(struct kmem_cache *s, void **p, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		p[i] = kmem_cache_alloc(s, GFP_KERNEL);
	int ordered = 1;
	for (unsigned int i = 1; i < n; i++)
		if ((uintptr_t)p[i] != (uintptr_t)p[i - 1] + 64)
			ordered = 0;
	return ordered;
}

/* How many of @b's objects sit where @a's do, each relative to its slab's lowest. */
static unsigned int same_places(void **a, void **b, unsigned int n)
{
	uintptr_t min_a = (uintptr_t)a[0], min_b = (uintptr_t)b[0];
	for (unsigned int i = 1; i < n; i++) {
		if ((uintptr_t)a[i] < min_a)
			min_a = (uintptr_t)a[i];
		if ((uintptr_t)b[i] < min_b)
			min_b = (uintptr_t)b[i];
	}
	unsigned int same = 0;
	for (unsigned int i = 0; i < n; i++)
		same += (uintptr_t)a[i] - min_a == (uintptr_t)b[i] - min_b;
	return same;
}

/*
 * Up to this many slabs are drawn after the first.  As the kernel's, a
 * slab starts at a random place of the cache's one sequence, so two slabs
 * share their order with probability 1/n (1/64 for 64-byte objects on
 * order-0 slabs); that all of 8 more share the first's is 64^-8.
 */
#define RANDOM_SLABS 8

static int random_order(void)
{
	struct kmem_cache *s = kmem_cache_create("shuffled", 64, 0, SLAB_NO_MERGE, NULL);
	char buf[32];
	ssize_t len = slub_attr_read(s, "objs_per_slab", buf, sizeof(buf) - 1);
	CHECK(len > 0);
	buf[len > 0 ? len : 0] = 0;
	unsigned int n = (unsigned int)atoi(buf);
	CHECK(n >= 64);
	void **slabs[1 + RANDOM_SLABS] = { 0 };
	unsigned int drawn = 0;
	bool want_random = getenv("SLUB_OPTIONS") && strstr(getenv("SLUB_OPTIONS"), "random=1");
	bool differ = false;
	while (drawn < 1 + RANDOM_SLABS && !(drawn >= 2 && (differ || !want_random))) {
		void **p = calloc(n, sizeof(void *));
		slabs[drawn++] = p;
		CHECK_EQ(slab_in_order(s, p, n), !want_random);
		if (drawn >= 2)
			differ = same_places(slabs[0], p, n) < n;
	}
	/* Each object of the slab once. */
	void **sorted = calloc(n, sizeof(void *));
	memcpy(sorted, slabs[0], n * sizeof(void *));
	qsort(sorted, n, sizeof(void *), cmp_ptr);
	for (unsigned int i = 1; i < n; i++)
		CHECK_EQ((uintptr_t)sorted[i] - (uintptr_t)sorted[i - 1], 64);
	/* Slabs start at different places: some slab's order is not the first's. */
	if (want_random)
		CHECK(differ);
	CHECK_EQ(slub_validate(s), 0);
	for (unsigned int k = 0; k < drawn; k++) {
		for (unsigned int i = 0; i < n; i++)
			kmem_cache_free(s, slabs[k][i]);
		free(slabs[k]);
	}
	CHECK_EQ(slub_validate(s), 0);
	kmem_cache_destroy(s);
	free(sorted);
	return check_done();
}

static const struct self_case cases[] = {
	{ "on_alloc", "init_on_alloc=1", on_alloc, 0 },
	{ "on_alloc_cas", "init_on_alloc=1 slub_rseq=0", on_alloc, 0 },
	{ "on_free", "init_on_free=1", on_free, 0 },
	{ "on_free_cas", "init_on_free=1 slub_rseq=0", on_free, 0 },
	{ "in_order", "", random_order, 0 },
	{ "random", "slab_freelist_random=1", random_order, 0 },
	{ "random_debug", "slab_freelist_random=1 slub_debug=F", random_order, 0 },
};

int main(int argc, char **argv)
{
	return run_self_cases(argc, argv, cases, ARRAY_SIZE(cases), NULL);
}
