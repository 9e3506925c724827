// SPDX-License-Identifier: MIT
/*
 * test_slab_merge - which kmem_cache_create() calls share a cache (the
 * kernel's merge rules), the unique ids, alias lookup, and destroying a
 * merged cache's names in every order.  With --nomerge (run under
 * SLUB_OPTIONS=slub_merge=0) nothing merges and no cache has an id.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "slab/core/slab.h"

static void ctor(void *p)
{
	(void)p;
}

/* One creation of the table, and what it must meet. */
struct merge_row {
	const char *name;
	unsigned int size, align;
	slab_flags_t flags;
	bool with_ctor;
	const char *joins;	/* the cache it must share (by any name), or NULL: its own */
	const char *id;		/* its id: ":..." or, for its own unmergeable cache, the name */
};

/*
 * 200-byte objects fit no kmalloc class within a word (192 and 256), so the
 * first makes a cache of its own and the next ones show the rules.
 */
static const struct merge_row rows[] = {
	{ "m200", 200, 0, 0, false, NULL, ":0000200" },
	{ "m200-same", 200, 0, 0, false, "m200", ":0000200" },
	{ "m196", 196, 0, 0, false, "m200", ":0000200" },	/* 200 after aligning to a word */
	{ "m201", 201, 0, 0, false, NULL, ":0000208" },	/* 208 > 200: a slot too small */
	{ "m200-a64", 200, 64, 0, false, "kmalloc-256", ":0000256" },	/* 256, 64-aligned */
	{ "m100-hw", 100, 0, SLAB_HWCACHE_ALIGN, false, "kmalloc-128", ":0000128" },
	{ "m60", 60, 0, 0, false, "kmalloc-64", ":0000064" },
	{ "m56", 56, 0, 0, false, NULL, ":0000056" },	/* 64 - 56 >= a word: own cache */
	{ "m200-ctor", 200, 0, 0, true, NULL, "m200-ctor" },
	{ "m200-nomerge", 200, 0, SLAB_NO_MERGE, false, NULL, "m200-nomerge" },
	{ "m200-rcu", 200, 0, SLAB_TYPESAFE_BY_RCU, false, NULL, "m200-rcu" },
	{ "m200-poison", 200, 0, SLAB_POISON, false, NULL, "m200-poison" },
	{ "m200-redzone", 200, 0, SLAB_RED_ZONE, false, NULL, "m200-redzone" },
	{ "m200-user", 200, 0, SLAB_STORE_USER, false, NULL, "m200-user" },
	{ "m200-trace", 200, 0, SLAB_TRACE, false, NULL, "m200-trace" },
	{ "m200-checks", 200, 0, SLAB_CONSISTENCY_CHECKS, false, NULL, "m200-checks" },
	{ "m200-reclaim", 200, 0, SLAB_RECLAIM_ACCOUNT, false, NULL, ":a-0000200" },
	{ "m200-reclaim2", 200, 0, SLAB_RECLAIM_ACCOUNT, false, "m200-reclaim", ":a-0000200" },
	{ "m200-account", 200, 0, SLAB_ACCOUNT, false, NULL, ":A-0000200" },
	{ "m200-dma", 200, 0, SLAB_CACHE_DMA, false, NULL, ":d-0000200" },
	{ "m200-dma32", 200, 0, SLAB_CACHE_DMA32, false, NULL, ":D-0000200" },
	{ "m200-both", 200, 0, SLAB_RECLAIM_ACCOUNT | SLAB_ACCOUNT, false, NULL, ":aA-0000200" },
};

#define NR_ROWS (sizeof(rows) / sizeof(rows[0]))

static bool nomerge;

static void merge_table(void)
{
	unsigned long e0 = slub_errors();
	struct kmem_cache *made[NR_ROWS];
	for (size_t i = 0; i < NR_ROWS; i++) {
		const struct merge_row *r = &rows[i];
		struct kmem_cache *before = r->joins ? slub_find_cache(r->joins) : NULL;
		made[i] = kmem_cache_create(r->name, r->size, r->align, r->flags,
					    r->with_ctor ? ctor : NULL);
		CHECK(made[i] != NULL);
		if (!made[i])
			continue;
		bool own = nomerge || !r->joins;
		bool ok = own ? made[i] != before : made[i] == before;
		const char *want_id = nomerge ? r->name : r->id;
		if (!ok || strcmp(slub_cache_id(made[i]), want_id))
			fprintf(stderr, "   %s: cache %s (id %s), wanted %s (id %s)\n", r->name,
				slub_cache_name(made[i]), slub_cache_id(made[i]),
				own ? "its own" : r->joins, want_id);
		CHECK(ok);
		CHECK(!strcmp(slub_cache_id(made[i]), want_id));
		/* Every name and the id find it. */
		CHECK(slub_find_cache(r->name) == made[i]);
		CHECK(slub_find_cache(slub_cache_id(made[i])) == made[i]);
		/* A merged cache serves objects of the larger size, aligned. */
		void *p = kmem_cache_alloc(made[i], GFP_KERNEL);
		CHECK(p != NULL);
		CHECK(kmem_cache_size(made[i]) >= r->size);
		if (r->align)
			CHECK((uintptr_t)p % r->align == 0);
		kmem_cache_free(made[i], p);
	}
	for (size_t i = NR_ROWS; i-- > 0;)
		kmem_cache_destroy(made[i]);
	CHECK(slub_find_cache("m200") == NULL);
	CHECK(slub_find_cache("m200-reclaim2") == NULL);
	CHECK(slub_find_cache("kmalloc-64") != NULL);
	/* Debug caches checked their objects: no report. */
	CHECK_EQ(slub_errors(), e0);
}

static int count_cache(struct kmem_cache *s, void *arg)
{
	(void)s;
	(*(int *)arg)++;
	return 0;
}

/* Three names, one cache: destroyed in each of the six orders. */
static void destroy_orders(void)
{
	static const int orders[6][3] = { { 0, 1, 2 }, { 0, 2, 1 }, { 1, 0, 2 },
					  { 1, 2, 0 }, { 2, 0, 1 }, { 2, 1, 0 } };
	const char *names[3] = { "d-first", "d-second", "d-third" };
	unsigned long e0 = slub_errors();
	int caches0 = 0;
	slub_for_each_cache(count_cache, &caches0);
	for (int o = 0; o < 6; o++) {
		struct kmem_cache *s[3];
		for (int i = 0; i < 3; i++)
			s[i] = kmem_cache_create(names[i], 216, 0, 0, NULL);
		CHECK(s[0] && s[1] == (nomerge ? s[1] : s[0]) && s[2] == (nomerge ? s[2] : s[0]));
		if (!nomerge) {
			char buf[32];
			CHECK_EQ(slub_attr_read(s[0], "aliases", buf, sizeof(buf)), 2);
			CHECK(!strcmp(buf, "2\n"));
			CHECK(!strcmp(slub_cache_alias(s[0], 0), "d-second"));
			CHECK(!strcmp(slub_cache_alias(s[0], 1), "d-third"));
			CHECK(slub_cache_alias(s[0], 2) == NULL);
		}
		void *obj = kmem_cache_alloc(s[1], GFP_KERNEL);
		kmem_cache_free(s[2], obj);	/* one cache: no "wrong cache" report */
		for (int k = 0; k < 3; k++) {
			int i = orders[o][k];
			/* Until the last reference goes, every name still finds it. */
			if (!nomerge && k < 2)
				for (int j = 0; j < 3; j++)
					CHECK(slub_find_cache(names[j]) == s[0]);
			kmem_cache_destroy(s[i]);
		}
		for (int j = 0; j < 3; j++)
			CHECK(slub_find_cache(names[j]) == NULL);
	}
	int caches1 = 0;
	slub_for_each_cache(count_cache, &caches1);
	CHECK_EQ(caches1, caches0);
	/* Merged, a free through another name is fine; apart, each is "Wrong slab cache". */
	CHECK_EQ(slub_errors(), e0 + (nomerge ? 6 : 0));
}

/* A name used twice counts twice; its reference goes with one destroy each. */
static void same_name_twice(void)
{
	if (nomerge)
		return;
	struct kmem_cache *a = kmem_cache_create("twice-base", 232, 0, 0, NULL);
	struct kmem_cache *b = kmem_cache_create("twice", 232, 0, 0, NULL);
	struct kmem_cache *c = kmem_cache_create("twice", 232, 0, 0, NULL);
	CHECK(a == b && b == c);
	CHECK(slub_cache_alias(a, 1) == NULL);	/* one alias name, used twice */
	kmem_cache_destroy(b);
	kmem_cache_destroy(a);
	CHECK(slub_find_cache("twice") == c);
	kmem_cache_destroy(c);
	CHECK(slub_find_cache("twice") == NULL);
}

/* Destroying a kmalloc cache once too often must not take it away. */
static void allocator_caches_stay(void)
{
	struct kmem_cache *k = slub_find_cache("kmalloc-64");
	CHECK(k != NULL);
	EXPECT_REPORT(kmem_cache_destroy(k), "a cache of the allocator's own");
	EXPECT_REPORT(kmem_cache_destroy(slub_find_cache("kmem_cache")), "allocator's own");
	void *p = kmalloc(64, GFP_KERNEL);
	CHECK(p && slub_find_cache("kmalloc-64") == k);
	kfree(p);
	if (nomerge)
		return;
	/* With an alias the first destroy drops the alias's reference, quietly. */
	struct kmem_cache *m = kmem_cache_create("into-kmalloc-64", 64, 0, 0, NULL);
	CHECK(m == k);
	unsigned long e = slub_errors();
	kmem_cache_destroy(k);
	CHECK_EQ(slub_errors(), e);
	EXPECT_REPORT(kmem_cache_destroy(k), "a cache of the allocator's own");
}

/* A usercopy region keeps a cache to itself; a region outside the object is dropped. */
static void usercopy(void)
{
	struct kmem_cache *a = kmem_cache_create_usercopy("uc", 200, 0, 0, 8, 64, NULL);
	struct kmem_cache *b = kmem_cache_create("uc-plain", 200, 0, 0, NULL);
	CHECK(a && b && a != b);
	char buf[32];
	CHECK(slub_attr_read(a, "usersize", buf, sizeof(buf)) > 0 && !strcmp(buf, "64\n"));
	CHECK(!strcmp(slub_cache_id(a), "uc"));
	struct kmem_cache *c;
	EXPECT_REPORT(c = kmem_cache_create_usercopy("uc-bad", 200, 0, 0, 190, 64, NULL),
		      "outside the 200-byte object");
	CHECK(c && slub_attr_read(c, "usersize", buf, sizeof(buf)) > 0 && !strcmp(buf, "0\n"));
	kmem_cache_destroy(a);
	kmem_cache_destroy(b);
	kmem_cache_destroy(c);
}

/* Every cache start-up made answers to its id, and ids are unique. */
static int id_unique(struct kmem_cache *s, void *arg)
{
	(void)arg;
	const char *id = slub_cache_id(s);
	CHECK(slub_find_cache(id) == s);
	if (nomerge)
		CHECK(!strcmp(id, slub_cache_name(s)));
	return 0;
}

static void ids_resolve(void)
{
	slub_for_each_cache(id_unique, NULL);
	CHECK(!strcmp(slub_cache_id(slub_find_cache("kmem_cache")), "kmem_cache"));
	if (!nomerge)
		CHECK(!strcmp(slub_cache_id(slub_find_cache("kmalloc-96")), ":0000096"));
	/* A callback's non-zero return stops the walk and comes back. */
	CHECK_EQ(slub_for_each_cache(count_cache, &(int){ 0 }), 0);
}

static int stop_at_second(struct kmem_cache *s, void *arg)
{
	(void)s;
	return ++*(int *)arg == 2 ? 42 : 0;
}

static void walk_stops(void)
{
	int n = 0;
	CHECK_EQ(slub_for_each_cache(stop_at_second, &n), 42);
	CHECK_EQ(n, 2);
}

int main(int argc, char **argv)
{
	nomerge = argc > 1 && !strcmp(argv[1], "--nomerge");
	RUN(merge_table);
	RUN(destroy_orders);
	RUN(same_name_twice);
	RUN(allocator_caches_stay);
	RUN(usercopy);
	RUN(ids_resolve);
	RUN(walk_stops);
	return check_done();
}
