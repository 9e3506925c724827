// SPDX-License-Identifier: MIT
/*
 * test_failslab.c - failslab and fail_page_alloc at the slab layer's and
 * the page allocator's entries, each case in a child started with its
 * SLUB_OPTIONS (the options are read once, at start-up): every call
 * failing gives NULL and ENOMEM from kmem_cache_alloc, kmalloc and the
 * bulk call; failslab_cache narrows it to one cache; interval, space and
 * times fail exactly the calls they name; a probability fails about its
 * share, and what was allocated frees, the caches validate clean and their
 * counts add up (with slub_debug=F too); fail_page_alloc fails new slabs,
 * large kmalloc and alloc_pages, never the allocator's own caches.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <slub.h>
#include "check.h"


static long attr_long(struct kmem_cache *s, const char *name)
{
	char buf[256];
	ssize_t n = slub_attr_read(s, name, buf, sizeof(buf) - 1);
	if (n < 0)
		return -1;
	buf[n] = 0;
	return strtol(buf, NULL, 10);
}

/* Every call fails: failslab=1,100,0,-1. */
static int every_call(void)
{
	unsigned long e = slub_errors();
	struct kmem_cache *s = kmem_cache_create("victim", 40, 0, SLAB_NO_MERGE, NULL);
	CHECK(s != NULL);	/* the descriptor's cache never fails */
	errno = 0;
	CHECK(kmem_cache_alloc(s, GFP_KERNEL) == NULL);
	CHECK_EQ(errno, ENOMEM);
	CHECK(kmem_cache_zalloc(s, GFP_KERNEL) == NULL);
	CHECK(kmem_cache_alloc_node(s, GFP_KERNEL, 0) == NULL);
	void *p[8];
	CHECK_EQ(kmem_cache_alloc_bulk(s, GFP_KERNEL, 8, p), 0);
	for (size_t size = 1; size <= 8192; size *= 2) {
		errno = 0;
		CHECK(kmalloc(size, GFP_KERNEL) == NULL);
		CHECK_EQ(errno, ENOMEM);
	}
	CHECK(kzalloc(100, GFP_KERNEL) == NULL);
	CHECK(kmalloc(100, GFP_KERNEL | GFP_DMA) == NULL);
	/* __GFP_NOFAIL is never failed, as the kernel's. */
	void *q = kmem_cache_alloc(s, GFP_KERNEL | __GFP_NOFAIL);
	CHECK(q != NULL);
	kmem_cache_free(s, q);
	/* Large kmalloc is the page allocator's: failslab leaves it. */
	void *big = kmalloc(1 << 20, GFP_KERNEL);
	CHECK(big != NULL);
	kfree(big);
	CHECK_EQ(slub_validate(s), 0);
	kmem_cache_shrink(s);	/* a cpu slab counts every object as in use */
	CHECK_EQ(attr_long(s, "objects"), 0);
	CHECK_EQ(slub_errors(), e);	/* no fail_verbose: nothing reported */
	kmem_cache_destroy(s);
	return check_done();
}

/* failslab=1,100,0,2 fail_verbose=1: two failures, each reported, then none. */
static int verbose_times(void)
{
	/* Its own cache: merged, it would answer to the name of the one it joined. */
	struct kmem_cache *s = kmem_cache_create("told", 64, 0, SLAB_NO_MERGE, NULL);
	EXPECT_REPORT(CHECK(kmem_cache_alloc(s, GFP_KERNEL) == NULL), "failslab, cache told");
	EXPECT_REPORT(CHECK(kmalloc(200, GFP_KERNEL) == NULL), "failslab, cache kmalloc-256");
	unsigned long e = slub_errors();
	void *a = kmem_cache_alloc(s, GFP_KERNEL), *b = kmalloc(200, GFP_KERNEL);
	CHECK(a && b);
	kmem_cache_free(s, a);
	kfree(b);
	CHECK_EQ(slub_errors(), e);
	kmem_cache_destroy(s);
	return check_done();
}

/* failslab=1,100,0,-1 failslab_cache=victim: that cache alone. */
static int one_cache(void)
{
	struct kmem_cache *v = kmem_cache_create("victim", 48, 0, 0, NULL);
	struct kmem_cache *o = kmem_cache_create("bystander", 48, 0, 0, NULL);
	CHECK(kmem_cache_alloc(v, GFP_KERNEL) == NULL);
	void *p = kmem_cache_alloc(o, GFP_KERNEL), *k = kmalloc(48, GFP_KERNEL);
	CHECK(p && k);
	kmem_cache_free(o, p);
	kfree(k);
	CHECK_EQ(slub_validate(v), 0);
	CHECK_EQ(slub_validate(o), 0);
	return check_done();
}

/*
 * failslab=3,100,640,4 failslab_cache=exact: 64-byte objects; 9 calls
 * spend the space (640 > 64 ... 128 > 64), then every 3rd call fails,
 * 4 times.
 */
static int exact_calls(void)
{
	struct kmem_cache *s = kmem_cache_create("exact", 64, 0, 0, NULL);
	void *p[40];
	int n = 0;
	for (int call = 1; call <= 40; call++) {
		void *x = kmem_cache_alloc(s, GFP_KERNEL);
		bool fail = call > 9 && (call - 9) % 3 == 0 && call <= 9 + 12;
		CHECK_EQ(x == NULL, fail);
		if (x)
			p[n++] = x;
	}
	CHECK_EQ(n, 36);
	for (int i = 0; i < n; i++)
		kmem_cache_free(s, p[i]);
	CHECK_EQ(slub_validate(s), 0);
	return check_done();
}

#define CALLS 20000

/*
 * failslab=1,25,0,-1 (with or without slub_debug=F): about a quarter of
 * the calls fail; the rest free, and the caches validate clean with their
 * counts right.
 */
static int share(void)
{
	unsigned long e = slub_errors();
	struct kmem_cache *s = kmem_cache_create("share", 96, 0, 0, NULL);
	void **obj = calloc(CALLS, sizeof(void *)), **km = calloc(CALLS, sizeof(void *));
	long got = 0, kgot = 0;
	srand(1);
	for (int i = 0; i < CALLS; i++) {
		if ((obj[got] = kmem_cache_alloc(s, GFP_KERNEL)))
			got++;
		if ((km[kgot] = kmalloc((size_t)(rand() % 2000) + 1, GFP_KERNEL)))
			kgot++;
	}
	long fails = CALLS - got, kfails = CALLS - kgot;
	printf("failed %ld and %ld of %d\n", fails, kfails, CALLS);
	CHECK(fails > CALLS * 22 / 100 && fails < CALLS * 28 / 100);
	CHECK(kfails > CALLS * 22 / 100 && kfails < CALLS * 28 / 100);
	long objects = attr_long(s, "objects"), total = attr_long(s, "total_objects");
	CHECK(objects >= got && objects <= total);
	CHECK_EQ(total, attr_long(s, "slabs") * attr_long(s, "objs_per_slab"));
	CHECK_EQ(slub_validate(s), 0);
	for (long i = 0; i < got; i += 2)
		kmem_cache_free(s, obj[i]);
	CHECK_EQ(slub_validate(s), 0);
	for (long i = 1; i < got; i += 2)
		kmem_cache_free(s, obj[i]);
	for (long i = 0; i < kgot; i++)
		kfree(km[i]);
	kmem_cache_shrink(s);
	CHECK_EQ(attr_long(s, "objects"), 0);
	CHECK_EQ(slub_validate(s), 0);
	/* Validation needs no flags; with them on it checks each object too. */
	CHECK_EQ(slub_attr_write(s, "sanity_checks", "1", 1), 1);
	CHECK_EQ(slub_validate(s), 0);
	CHECK_EQ(slub_errors(), e);
	kmem_cache_destroy(s);
	free(obj);
	free(km);
	return check_done();
}

/* fail_page_alloc=1,100,0,-1: new slabs, large kmalloc, alloc_pages. */
static int no_pages(void)
{
	unsigned long e = slub_errors();
	struct kmem_cache *s = kmem_cache_create("new", 200, 0, 0, NULL);
	CHECK(s != NULL);	/* the allocator's own caches take no failure */
	errno = 0;
	CHECK(kmem_cache_alloc(s, GFP_KERNEL) == NULL);
	CHECK_EQ(errno, ENOMEM);
	errno = 0;
	CHECK(kmalloc(1 << 20, GFP_KERNEL) == NULL);
	CHECK_EQ(errno, ENOMEM);
	CHECK(kmalloc(100, GFP_KERNEL) == NULL);	/* kmalloc-128 has no slab yet */
	CHECK(alloc_pages(GFP_KERNEL, 0) == NULL);
	CHECK(alloc_pages(GFP_KERNEL, 12) == NULL);	/* a large block */
	CHECK(__get_free_pages(GFP_KERNEL, 2) == 0);
	struct page *pg = alloc_pages(GFP_KERNEL | __GFP_NOFAIL, 1);
	CHECK(pg != NULL);
	if (pg)
		__free_pages(pg, 1);
	CHECK_EQ(slub_validate(s), 0);
	CHECK_EQ(attr_long(s, "total_objects"), 0);
	/* Each slab not had is reported, as the kernel's slab_out_of_memory() (2 here). */
	CHECK(slub_errors() - e <= 3);
	kmem_cache_destroy(s);
	return check_done();
}

/* fail_page_alloc=1,50,0,-1 fail_verbose=1: about half the slabs fail; all frees, validates. */
static int some_pages(void)
{
	struct kmem_cache *s = kmem_cache_create("some", 1024, 0, SLAB_NO_MERGE, NULL);
	enum { N = 4000 };
	static void *obj[N], *big[200];
	long got = 0, bgot = 0;
	for (int i = 0; i < N; i++)
		if ((obj[got] = kmem_cache_alloc(s, GFP_KERNEL)))
			got++;
	for (int i = 0; i < 200; i++)
		if ((big[bgot] = kmalloc(100000, GFP_KERNEL)))
			bgot++;
	printf("%ld objects, %ld large blocks\n", got, bgot);
	CHECK(got > 0 && got < N);
	CHECK(bgot > 60 && bgot < 140);
	CHECK(attr_long(s, "objects") >= got);
	/* Some slabs fell back to the smallest order: fewer objects than objs_per_slab. */
	CHECK(attr_long(s, "total_objects") <= attr_long(s, "slabs") * attr_long(s, "objs_per_slab"));
	CHECK(attr_long(s, "total_objects") >= attr_long(s, "objects"));
	CHECK_EQ(slub_validate(s), 0);
	for (long i = 0; i < got; i++)
		kmem_cache_free(s, obj[i]);
	for (long i = 0; i < bgot; i++)
		kfree(big[i]);
	kmem_cache_shrink(s);
	CHECK_EQ(attr_long(s, "objects"), 0);
	CHECK_EQ(slub_validate(s), 0);
	kmem_cache_destroy(s);
	return check_done();
}

static const struct self_case cases[] = {
	{ "every_call", "failslab=1,100,0,-1", every_call, 0 },
	{ "every_call_debug", "failslab=1,100,0,-1 slub_debug=FZP", every_call, 0 },
	{ "verbose_times", "failslab=1,100,0,2 fail_verbose=1", verbose_times, 0 },
	{ "one_cache", "failslab=1,100,0,-1 failslab_cache=victim", one_cache, 0 },
	{ "exact_calls", "failslab=3,100,640,4 failslab_cache=exact", exact_calls, 0 },
	{ "share", "failslab=1,25,0,-1 slub_nomerge", share, 0 },
	{ "share_debug", "failslab=1,25,0,-1 slub_debug=F", share, 0 },
	{ "share_sheaves", "failslab=1,25,0,-1 slub_sheaves=16 slub_nomerge", share, 0 },
	{ "no_pages", "fail_page_alloc=1,100,0,-1", no_pages, 0 },
	{ "some_pages", "fail_page_alloc=1,50,0,-1", some_pages, 0 },
};

int main(int argc, char **argv)
{
	return run_self_cases(argc, argv, cases, ARRAY_SIZE(cases), NULL);
}
