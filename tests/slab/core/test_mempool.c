// SPDX-License-Identifier: MIT
/*
 * test_mempool.c - mempool_t against the kernel's semantics: the reserve
 * filled at creation, handed out when the allocator fails (failslab in a
 * child: every allocation of the element cache fails, or half of them),
 * refilled by mempool_free() before anything is freed, a sleeping caller
 * that waits for an element instead of getting NULL, GFP_NOWAIT that
 * does get NULL, resize both ways, __GFP_ZERO on reserved elements, the
 * kmalloc and page pools, and bad input.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <slub.h>
#include "check.h"
#include "page_hog.h"

struct elem {
	unsigned long v[6];
};

/* No failure injected: the allocator serves, the reserve stays full. */
static int plain(void)
{
	struct kmem_cache *s = KMEM_CACHE(elem, SLAB_NO_MERGE);
	CHECK(s != NULL);
	CHECK(!strcmp(slub_cache_name(s), "elem"));
	CHECK_EQ(kmem_cache_size(s), sizeof(struct elem));
	mempool_t *pool = mempool_create_slab_pool(4, s);
	CHECK(pool && mempool_initialized(pool));
	CHECK_EQ(pool->curr_nr, 4);
	void *e[10];
	for (int i = 0; i < 10; i++)
		CHECK((e[i] = mempool_alloc(pool, GFP_KERNEL)) != NULL);
	CHECK_EQ(pool->curr_nr, 4);
	for (int i = 0; i < 10; i++)
		mempool_free(e[i], pool);
	CHECK_EQ(pool->curr_nr, 4);
	/* Resize: down frees reserved elements, up fills from the allocator. */
	CHECK_EQ(mempool_resize(pool, 2), 0);
	CHECK_EQ(pool->curr_nr, 2);
	CHECK_EQ(mempool_resize(pool, 8), 0);
	CHECK_EQ(pool->curr_nr, 8);
	CHECK_EQ(pool->min_nr, 8);
	mempool_destroy(pool);
	mempool_destroy(NULL);
	kmem_cache_shrink(s);
	CHECK_EQ(check_attr_long(s, "objects"), 0);	/* the reserve went back */
	kmem_cache_destroy(s);

	/* The kmalloc and page pools, __GFP_ZERO on fresh elements. */
	mempool_t *km = mempool_create_kmalloc_pool(2, 100);
	unsigned char *b = mempool_alloc(km, GFP_KERNEL | __GFP_ZERO);
	bool zero = true;
	for (int i = 0; i < 100; i++)
		zero &= b[i] == 0;
	CHECK(zero);
	mempool_free(b, km);
	mempool_destroy(km);
	mempool_t *pp = mempool_create_page_pool(2, 1);
	struct page *pg = mempool_alloc(pp, GFP_KERNEL);
	CHECK(pg && page_address(pg));
	memset(page_address(pg), 1, 2 * PAGE_SIZE);
	mempool_free(pg, pp);
	mempool_destroy(pp);

	/* mempool_init on an embedded pool. */
	mempool_t embedded;
	CHECK_EQ(mempool_init_kmalloc_pool(&embedded, 3, 64), 0);
	CHECK_EQ(embedded.curr_nr, 3);
	mempool_exit(&embedded);
	CHECK(!mempool_initialized(&embedded));
	return check_done();
}

static int bad_input(void)
{
	mempool_t pool;
	EXPECT_REPORT(CHECK_EQ(mempool_init(&pool, -1, mempool_kmalloc, mempool_kfree, (void *)8),
			       -EINVAL), "negative min_nr");
	EXPECT_REPORT(CHECK(mempool_create(2, NULL, mempool_kfree, NULL) == NULL),
		      "no alloc or free function");
	mempool_t *p = mempool_create_kmalloc_pool(1, 32);
	EXPECT_REPORT(CHECK_EQ(mempool_resize(p, 0), -EINVAL), "one element at least");
	mempool_destroy(p);
	memset(&pool, 0, sizeof(pool));
	EXPECT_REPORT(CHECK(mempool_alloc(&pool, GFP_KERNEL) == NULL), "not an initialized pool");
	mempool_free(NULL, &pool);	/* NULL: nothing, as the kernel's */
	return check_done();
}

/*
 * Every allocation of cache "elem" fails (failslab_cache=elem) once the
 * reserve exists: the reserve is what mempool_alloc() hands out.
 */
static struct kmem_cache *failing;
static mempool_t *failing_pool;
static void *held[8];
static volatile int waiter_got;

static void *waiter(void *arg)
{
	(void)arg;
	void *e = mempool_alloc(failing_pool, GFP_KERNEL);	/* waits: never NULL */
	waiter_got = e != NULL;
	mempool_free(e, failing_pool);
	return NULL;
}

/* A reserve that cannot be filled: no pool, as the kernel's mempool_create(). */
static int under_failslab(void)
{
	failing = kmem_cache_create("elem", sizeof(struct elem), 0, SLAB_NO_MERGE, NULL);
	CHECK(kmem_cache_alloc(failing, GFP_KERNEL) == NULL);	/* failslab is on */
	CHECK(mempool_create_slab_pool(2, failing) == NULL);
	mempool_t pool;
	CHECK_EQ(mempool_init_slab_pool(&pool, 2, failing), -ENOMEM);
	CHECK(!mempool_initialized(&pool));
	kmem_cache_shrink(failing);
	CHECK_EQ(check_attr_long(failing, "objects"), 0);
	kmem_cache_destroy(failing);
	return check_done();
}

/* The reserve was filled while failslab's space lasted (space= bytes), then every call fails. */
static int reserve_handed_out(void)
{
	failing = kmem_cache_create("elem", sizeof(struct elem), 0, SLAB_NO_MERGE, NULL);
	failing_pool = mempool_create_slab_pool(4, failing);	/* 4 x 48 bytes: within space */
	CHECK(failing_pool != NULL);
	if (!failing_pool)
		return check_done();
	CHECK(kmem_cache_alloc(failing, GFP_KERNEL) == NULL);	/* the allocator fails now */
	unsigned long seen = 0;
	for (int i = 0; i < 4; i++) {
		held[i] = mempool_alloc(failing_pool, GFP_KERNEL | __GFP_ZERO);
		CHECK(held[i] != NULL);
		if (held[i])
			seen |= ((struct elem *)held[i])->v[0] | ((struct elem *)held[i])->v[5];
		if (held[i])
			memset(held[i], 0x5a, sizeof(struct elem));
	}
	CHECK_EQ(seen, 0);	/* reserved elements zeroed as asked */
	CHECK_EQ(failing_pool->curr_nr, 0);
	/* Empty reserve: GFP_NOWAIT gets NULL, the preallocated form too. */
	CHECK(mempool_alloc(failing_pool, GFP_NOWAIT) == NULL);
	CHECK(mempool_alloc(failing_pool, GFP_ATOMIC) == NULL);
	CHECK(mempool_alloc_preallocated(failing_pool) == NULL);
	/* GFP_KERNEL waits for the next mempool_free(). */
	pthread_t t;
	pthread_create(&t, NULL, waiter, NULL);
	usleep(100000);
	CHECK_EQ(waiter_got, 0);	/* still waiting */
	mempool_free(held[0], failing_pool);
	pthread_join(t, NULL);
	CHECK_EQ(waiter_got, 1);
	/* Frees refill the reserve before anything goes back to the cache. */
	for (int i = 1; i < 4; i++)
		mempool_free(held[i], failing_pool);
	CHECK_EQ(failing_pool->curr_nr, 4);
	CHECK(mempool_alloc_preallocated(failing_pool) != NULL);
	mempool_destroy(failing_pool);
	return check_done();
}

/* Half the allocations fail: every mempool_alloc(GFP_KERNEL) still succeeds. */
static int half_fail(void)
{
	struct kmem_cache *s = kmem_cache_create("elem", sizeof(struct elem), 0, SLAB_NO_MERGE, NULL);
	mempool_t *pool = NULL;
	for (int i = 0; i < 100 && !pool; i++)	/* the reserve fills when its calls pass */
		pool = mempool_create_slab_pool(2, s);
	CHECK(pool != NULL);
	if (!pool)
		return check_done();
	void *e[2000];
	int got = 0;
	for (int round = 0; round < 1000; round++) {
		e[0] = mempool_alloc(pool, GFP_KERNEL);
		e[1] = mempool_alloc(pool, GFP_KERNEL);
		got += (e[0] != NULL) + (e[1] != NULL);
		mempool_free(e[1], pool);
		mempool_free(e[0], pool);
	}
	CHECK_EQ(got, 2000);
	CHECK_EQ(pool->curr_nr, 2);
	mempool_destroy(pool);
	CHECK_EQ(slub_validate(s), 0);
	kmem_cache_destroy(s);
	return check_done();
}

/* The kmalloc helpers of slub.h that mm/util.c and slab.h give the kernel. */
static int util(void)
{
	CHECK_EQ(kmalloc_size_roundup(0), 0);
	CHECK_EQ(kmalloc_size_roundup(1), 8);
	CHECK_EQ(kmalloc_size_roundup(65), 96);
	CHECK_EQ(kmalloc_size_roundup(100), 128);
	CHECK_EQ(kmalloc_size_roundup(8192), 8192);
	CHECK_EQ(kmalloc_size_roundup(8193), 16384);
	CHECK_EQ(kmalloc_size_roundup(~(size_t)0), ~(size_t)0);
	for (size_t n = 1; n < 20000; n = n * 3 + 1) {
		char *p = kmalloc(n, GFP_KERNEL);
		CHECK(ksize(p) == kmalloc_size_roundup(n));
		kfree(p);
	}
	char *d = kmemdup_nul("abcdef", 3, GFP_KERNEL);
	CHECK(d && !strcmp(d, "abc"));
	kfree(d);
	CHECK(kmemdup_nul(NULL, 3, GFP_KERNEL) == NULL);
	const char *lit = "a string literal";
	const char *c = kstrdup_const(lit, GFP_KERNEL);
	CHECK(c == lit);	/* read-only memory: kept, as the kernel's .rodata */
	kfree_const(c);		/* and not freed */
	char onstack[] = "on the stack";
	const char *c2 = kstrdup_const(onstack, GFP_KERNEL);
	CHECK(c2 != onstack && !strcmp(c2, onstack));
	unsigned long e = slub_errors();
	kfree_const(c2);
	CHECK_EQ(slub_errors(), e);
	CHECK(kstrdup_const(NULL, GFP_KERNEL) == NULL);
	int src[4] = { 1, 2, 3, 4 };
	int *a = kmemdup_array(src, 4, sizeof(int), GFP_KERNEL);
	CHECK(a && a[3] == 4);
	a = krealloc_array(a, 1000, sizeof(int), GFP_KERNEL);
	CHECK(a && a[2] == 3);
	CHECK(krealloc_array(a, SIZE_MAX / 2, 4, GFP_KERNEL) == NULL);	/* overflow: a stays */
	kfree(a);
	CHECK(kmemdup_array(src, SIZE_MAX / 2, 4, GFP_KERNEL) == NULL);
	CHECK(kvmalloc_array(SIZE_MAX / 2, 4, GFP_KERNEL) == NULL);
	CHECK(kcalloc_node(SIZE_MAX / 2, 4, GFP_KERNEL, 0) == NULL);
	int *z = kcalloc_node(10, sizeof(int), GFP_KERNEL, NUMA_NO_NODE);
	CHECK(z && z[9] == 0);
	kfree(z);
	unsigned char *zn = kzalloc_node(3000, GFP_KERNEL, 0);
	CHECK(zn && zn[2999] == 0);
	kfree(zn);
	long *v = kvcalloc(100000, sizeof(long), GFP_KERNEL);
	CHECK(v && v[99999] == 0);
	v[0] = 7;
	v = kvrealloc(v, 200000 * sizeof(long), GFP_KERNEL);
	CHECK(v && v[0] == 7);
	kvfree(v);
	void *bulk[3] = { kmalloc(10, GFP_KERNEL), kmalloc(1000, GFP_KERNEL), NULL };
	kfree_bulk(3, bulk);
	/* alloc_pages_exact: exactly the pages asked for, zeroed if asked. */
	unsigned char *px = alloc_pages_exact(5 * PAGE_SIZE + 1, GFP_KERNEL | __GFP_ZERO);
	CHECK(px && ((uintptr_t)px & (PAGE_SIZE - 1)) == 0);
	CHECK(px && px[6 * PAGE_SIZE - 1] == 0);
	free_pages_exact(px, 5 * PAGE_SIZE + 1);
	CHECK(alloc_pages_exact(0, GFP_KERNEL) == NULL);
	free_pages_exact(NULL, 10);
	int x;
	EXPECT_REPORT(free_pages_exact(&x, 10), "not a block alloc_pages_exact() handed out");
	/* Accepted flags and bits, without effect. */
	struct kmem_cache *s = kmem_cache_create("flags_ok", 50, 0,
						 SLAB_TEMPORARY | SLAB_MEM_SPREAD | SLAB_ACCOUNT |
						 SLAB_NO_USER_FLAGS | SLAB_SKIP_KFENCE, NULL);
	CHECK(s != NULL);
	void *o = kmem_cache_alloc_node(s, GFP_KERNEL_ACCOUNT | __GFP_NORETRY | __GFP_RETRY_MAYFAIL |
					__GFP_NOWARN | __GFP_HIGHMEM | __GFP_MOVABLE | __GFP_ZERO, 0);
	CHECK(o && ((unsigned char *)o)[49] == 0);
	kmem_cache_free(s, o);
	kmem_cache_destroy(s);
	/* KMEM_CACHE_USERCOPY: the field is the usercopy region. */
	struct kmem_cache *u = KMEM_CACHE_USERCOPY(elem, 0, v);
	CHECK_EQ(check_attr_long(u, "usersize"), sizeof(((struct elem *)0)->v));
	kmem_cache_destroy(u);
	return check_done();
}

/*
 * __GFP_NOFAIL never returns NULL: under an address-space limit that makes
 * the allocation fail, it waits until another thread frees.
 */
static int nofail_body(void)
{
	page_hog_take_all();
	page_hog_release_later();
	void *p = kmalloc(1 << 20, GFP_KERNEL | __GFP_NOFAIL);
	CHECK(p != NULL);
	page_hog_join();
	kfree(p);
	return check_failures ? 1 : 0;
}

static int nofail(void)
{
	if (address_space_limited()) {
		fprintf(stderr, "   skipped: the address space is limited already\n");
		return 0;
	}
	return child_under_address_limit(64 << 20, nofail_body);
}

static const struct self_case cases[] = {
	{ "plain", "", plain, 0 },
	{ "bad_input", "", bad_input, 0 },
	{ "util", "", util, 0 },
	{ "under_failslab", "failslab=1,100,0,-1 failslab_cache=elem", under_failslab, 0 },
	{ "reserve_handed_out", "failslab=1,100,200,-1 failslab_cache=elem", reserve_handed_out, 0 },
	{ "half_fail", "failslab=1,50,0,-1 failslab_cache=elem", half_fail, 0 },
	{ "nofail", "", nofail, 0 },
};

int main(int argc, char **argv)
{
	return run_self_cases(argc, argv, cases, ARRAY_SIZE(cases), NULL);
}
