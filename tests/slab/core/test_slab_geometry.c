// SPDX-License-Identifier: MIT
/*
 * test_slab_geometry.c - object layout and slab order against a table
 * worked out by hand from the kernel's rules (calculate_sizes/order) for
 * this machine's CPU count, and the options that change them.
 *
 * The expected orders assume slub_min_objects' default for 2 possible
 * CPUs: 4 * (fls(2) + 1) = 12; rows depending on it are skipped elsewhere.
 */
#define _GNU_SOURCE
#include <sys/wait.h>

#include <slub.h>
#include "check.h"
#include "slab/core/slab.h"

static void ctor(void *p)
{
	(void)p;
}

struct row {
	const char *what;
	unsigned int object_size, align, flags;
	bool with_ctor;
	unsigned int size, offset, inuse, order, objects, red_left_pad;
};

static const struct row rows[] = {
	/* free pointer in the middle of the object, no debug */
	{ "24",            24,   0, 0, false,  24,    8,   24, 0, 170, 0 },
	{ "1",              1,   0, 0, false,   8,    0,    8, 0, 512, 0 },
	{ "700",          700,   0, 0, false, 704,  344,  704, 2,  23, 0 },
	{ "3000",        3000,   0, 0, false, 3000, 1496, 3000, 3, 10, 0 },
	{ "5000",        5000,   0, 0, false, 5000, 2496, 5000, 3,  6, 0 },
	{ "100000",    100000,   0, 0, false, 100000, 50000, 100000, 5, 1, 0 },
	/* alignment */
	{ "100 hwcache",  100,   0, SLAB_HWCACHE_ALIGN, false, 128, 48, 104, 0, 32, 0 },
	{ "20 hwcache",    20,   0, SLAB_HWCACHE_ALIGN, false,  32,  8,  24, 0, 128, 0 },
	{ "100 align256", 100, 256, 0, false, 256, 48, 104, 0, 16, 0 },
	/* beyond a page, as the kernel: a slab starts on a boundary of its size */
	{ "100 align8k",  100, 8192, 0, false, 8192, 48, 104, 3, 4, 0 },
	{ "8k align8k",  8192, 8192, 0, false, 8192, 4096, 8192, 3, 4, 0 },
	{ "64 align4M",    64, 4u << 20, 0, false, 4u << 20, 32, 64, 10, 1, 0 },
	{ "24 redzone align16k", 24, 16384, SLAB_RED_ZONE, false, 32768, 8, 32, 3, 1, 16384 },
	/* free pointer after the object: constructor, poison, RCU */
	{ "24 ctor",       24,   0, 0, true,   32,   24,   24, 0, 128, 0 },
	{ "24 poison",     24,   0, SLAB_POISON, false, 32, 24, 24, 0, 128, 0 },
	{ "24 rcu",        24,   0, SLAB_TYPESAFE_BY_RCU, false, 32, 24, 24, 0, 128, 0 },
	/* debug metadata */
	{ "24 redzone",    24,   0, SLAB_RED_ZONE, false, 48, 8, 32, 0, 85, 8 },
	{ "4 redzone",      4,   0, SLAB_RED_ZONE, false, 32, 8, 8, 0, 128, 8 },
	{ "24 user",       24,   0, SLAB_STORE_USER, false, 88, 8, 24, 0, 46, 0 },
};

static void table(void)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		/* A cache of its own: merged, it would have another's geometry. */
		struct kmem_cache *s = kmem_cache_create(r->what, r->object_size, r->align,
							 r->flags | SLAB_NO_MERGE,
							 r->with_ctor ? ctor : NULL);
		CHECK(s != NULL);
		if (!s)
			continue;
		bool ok = s->size == r->size && s->offset == r->offset && s->inuse == r->inuse &&
			  oo_order(s->oo) == r->order && oo_objects(s->oo) == r->objects &&
			  s->red_left_pad == r->red_left_pad && s->object_size == r->object_size;
		if (!ok)
			fprintf(stderr, "   %-14s size %u offset %u inuse %u order %u objects %u red_left %u"
				" (want %u %u %u %u %u %u)\n", r->what, s->size, s->offset, s->inuse,
				oo_order(s->oo), oo_objects(s->oo), s->red_left_pad, r->size, r->offset,
				r->inuse, r->order, r->objects, r->red_left_pad);
		CHECK(ok);
		CHECK_EQ(kmem_cache_size(s), r->object_size);
		CHECK_EQ(oo_order(s->min), get_order(s->size));
		kmem_cache_destroy(s);
	}
}

/*
 * Alignments above a page: every object of a full slab, and of a slab of
 * the fallback order, on its boundary; the kmalloc caches' own (the
 * kernel's kmalloc-8k is 8192-aligned) and a user's create merging into one.
 */
static void large_align(void)
{
	static const unsigned int aligns[] = { 8192, 16384, 65536, 1u << 20 };
	for (size_t i = 0; i < sizeof(aligns) / sizeof(aligns[0]); i++) {
		unsigned int align = aligns[i];
		struct kmem_cache *s = kmem_cache_create("big-align", 200, align, SLAB_NO_MERGE, NULL);
		CHECK(s != NULL);
		if (!s)
			continue;
		CHECK_EQ(s->align, align);
		void *obj[20];
		for (int k = 0; k < 20; k++) {
			obj[k] = kmem_cache_alloc(s, GFP_KERNEL);
			CHECK(obj[k] != NULL && !((uintptr_t)obj[k] & (align - 1)));
			if (obj[k])
				memset(obj[k], 0x5c, 200);
		}
		for (int k = 0; k < 20; k++)
			kmem_cache_free(s, obj[k]);
		CHECK_EQ(slab_validate_cache(s), 0);
		kmem_cache_destroy(s);
	}
	/* Red zones move the object by a left pad of the alignment: still aligned. */
	struct kmem_cache *rz = kmem_cache_create("big-align-rz", 100, 16384,
						  SLAB_RED_ZONE | SLAB_POISON, NULL);
	CHECK(rz != NULL);
	if (rz) {
		void *a = kmem_cache_alloc(rz, GFP_KERNEL), *b = kmem_cache_alloc(rz, GFP_KERNEL);
		CHECK(a && b && !((uintptr_t)a & 16383) && !((uintptr_t)b & 16383));
		kmem_cache_free(rz, a);
		kmem_cache_free(rz, b);
		CHECK_EQ(slab_validate_cache(rz), 0);
		kmem_cache_destroy(rz);
	}

	struct kmem_cache *k8 = slub_find_cache("kmalloc-8k");
	CHECK(k8 != NULL && k8->align == 8192);
	struct kmem_cache *m = kmem_cache_create("kmalloc-8k-again", 8192, 8192, 0, NULL);
	CHECK(m != NULL && m == k8);
	if (m) {
		void *p = kmem_cache_alloc(m, GFP_KERNEL);
		CHECK(p && !((uintptr_t)p & 8191));
		kmem_cache_free(m, p);
		kmem_cache_destroy(m);
	}
	/* The largest slab's size is the limit. */
	EXPECT_REPORT(kmem_cache_create("too-aligned", 64, 8u << 20, 0, NULL), "alignment larger");
}

static void partial_rules(void)
{
	struct kmem_cache *a = kmem_cache_create("p24", 24, 0, SLAB_NO_MERGE, NULL);
	struct kmem_cache *b = kmem_cache_create("p5000", 5000, 0, SLAB_NO_MERGE, NULL);
	struct kmem_cache *c = kmem_cache_create("p300", 300, 0, SLAB_NO_MERGE, NULL);
	struct kmem_cache *d = kmem_cache_create("p1500", 1500, 0, SLAB_RED_ZONE, NULL);
	/* min_partial = clamp(ilog2(size) / 2, 5, 10) */
	CHECK_EQ(a->min_partial, 5);
	CHECK_EQ(b->min_partial, 6);
	/* cpu_partial by size, in slabs = ceil(2 * objects / per slab) */
	CHECK_EQ(a->cpu_partial, 120);
	CHECK_EQ(a->cpu_partial_slabs, 2);	/* 240 / 170 */
	CHECK_EQ(b->cpu_partial, 6);
	CHECK_EQ(b->cpu_partial_slabs, 2);	/* 12 / 6 */
	CHECK_EQ(c->cpu_partial, 52);
	CHECK_EQ(d->cpu_partial, 0);		/* debug caches keep none */
	kmem_cache_destroy(a);
	kmem_cache_destroy(b);
	kmem_cache_destroy(c);
	kmem_cache_destroy(d);
}

static const char *self;

/* The seeds' 2.6.22 default, slub_min_objects=8, gives smaller slabs. */
static void min_objects_option(void)
{
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "SLUB_OPTIONS='slub_min_objects=8' %s --order 700 1", self);
	CHECK_EQ(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "SLUB_OPTIONS='slub_min_order=2' %s --order 24 2", self);
	CHECK_EQ(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "SLUB_OPTIONS='slub_max_order=1' %s --order 3000 1", self);
	CHECK_EQ(system(cmd), 0);
	/* Order 0 is the kernel's for small objects, and so the default here. */
	snprintf(cmd, sizeof(cmd), "SLUB_OPTIONS='slub_max_order=0' %s --order 24 0", self);
	CHECK_EQ(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "SLUB_OPTIONS='slub_max_order=0' %s --order 3000 0", self);
	CHECK_EQ(system(cmd), 0);
}

static int child_order(unsigned int size, unsigned int want)
{
	struct kmem_cache *s = kmem_cache_create("child", size, 0, SLAB_NO_MERGE, NULL);
	unsigned int got = s ? oo_order(s->oo) : 99;
	if (got != want)
		fprintf(stderr, "   size %u: order %u, want %u\n", size, got, want);
	return got == want ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "--order"))
		return child_order((unsigned int)atoi(argv[2]), (unsigned int)atoi(argv[3]));
	self = argv[0];
	slub_reclaim();		/* start-up, so os_possible_cpus() is known */
	if (os_possible_cpus() != 2) {
		fprintf(stderr, "%u possible CPUs: the table assumes 2; checking rules only\n",
			os_possible_cpus());
		RUN(partial_rules);
		return check_done();
	}
	RUN(table);
	RUN(large_align);
	RUN(partial_rules);
	RUN(min_objects_option);
	return check_done();
}
