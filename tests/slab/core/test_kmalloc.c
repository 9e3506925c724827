// SPDX-License-Identifier: MIT
/*
 * test_kmalloc.c - the kmalloc family: size classes and ksize, natural
 * alignment of power-of-two sizes, ZERO_SIZE_PTR, krealloc semantics,
 * large allocations through the page allocator, DMA, the string helpers,
 * overflow, and bad pointers.
 */
#define _GNU_SOURCE
#include <errno.h>

#include <slub.h>
#include "check.h"
#include "base/numa.h"
#include "base/options.h"
#include "base/report.h"
#include "base/os.h"
#include "page/decay_thread.h"
#include "slab/core/slab.h"
#include "slab/core/slab_common.h"
#include "slab/nodes.h"

static void size_classes(void)
{
	/* size -> ksize, per the kernel's index (96 and 192 between powers of two). */
	static const struct { size_t size, ksize; } t[] = {
		{ 1, 8 }, { 8, 8 }, { 9, 16 }, { 16, 16 }, { 17, 32 }, { 32, 32 },
		{ 33, 64 }, { 64, 64 }, { 65, 96 }, { 96, 96 }, { 97, 128 }, { 128, 128 },
		{ 129, 192 }, { 192, 192 }, { 193, 256 }, { 256, 256 }, { 257, 512 },
		{ 513, 1024 }, { 1025, 2048 }, { 2049, 4096 }, { 4097, 8192 }, { 8192, 8192 },
		{ 8193, 12288 > 8192 ? 16384 : 0 }, { 16384, 16384 }, { 16385, 32768 },
		{ 1 << 22, 1 << 22 }, { (1 << 22) + 1, 1 << 23 },
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		char *p = kmalloc(t[i].size, GFP_KERNEL);
		CHECK(p != NULL);
		if (!p)
			continue;
		CHECK_EQ(ksize(p), t[i].ksize);
		memset(p, 0x77, ksize(p));	/* all of ksize is ours to use */
		if (!(t[i].ksize & (t[i].ksize - 1)))
			CHECK(((uintptr_t)p & (t[i].ksize - 1)) == 0);	/* naturally aligned */
		CHECK(((uintptr_t)p & 7) == 0);
		kfree(p);
	}
	CHECK_EQ(slub_errors(), 0);
}

static void zero_size(void)
{
	void *z = kmalloc(0, GFP_KERNEL);
	CHECK(z == ZERO_SIZE_PTR);
	CHECK(ZERO_OR_NULL_PTR(z) && ZERO_OR_NULL_PTR(NULL));
	CHECK_EQ(ksize(z), 0);
	CHECK_EQ(ksize(NULL), 0);
	kfree(z);
	kfree(NULL);
	char *p = krealloc(z, 10, GFP_KERNEL);
	CHECK(p != NULL && !ZERO_OR_NULL_PTR(p));
	CHECK(krealloc(p, 0, GFP_KERNEL) == ZERO_SIZE_PTR);	/* frees p */
	CHECK_EQ(slub_errors(), 0);
}

static void krealloc_keeps_contents(void)
{
	char *p = kmalloc(10, GFP_KERNEL);
	strcpy(p, "123456789");
	char *q = krealloc(p, 12, GFP_KERNEL);	/* still fits kmalloc-16 */
	CHECK(q == p);
	char *r = krealloc(q, 5000, GFP_KERNEL);
	CHECK(r != NULL && !strcmp(r, "123456789"));
	CHECK_EQ(ksize(r), 8192);
	char *s = krealloc(r, 100000, GFP_KERNEL);	/* to a large allocation */
	CHECK(s != NULL && !strcmp(s, "123456789"));
	CHECK_EQ(ksize(s), 131072);
	char *t = krealloc(NULL, 40, GFP_KERNEL | __GFP_ZERO);
	CHECK(t && t[0] == 0 && t[39] == 0);
	/* Shrinking in place with __GFP_ZERO clears what lies past the new size. */
	memset(t, 5, 40);
	CHECK(krealloc(t, 20, GFP_KERNEL | __GFP_ZERO) == t);
	CHECK(t[19] == 5 && t[20] == 0 && t[63] == 0);
	kfree(s);
	kfree(t);
	CHECK_EQ(slub_errors(), 0);
}

static void helpers(void)
{
	char *a = kstrdup("hello", GFP_KERNEL);
	CHECK(a && !strcmp(a, "hello"));
	char *b = kstrndup("hello world", 5, GFP_KERNEL);
	CHECK(b && !strcmp(b, "hello"));
	int arr[4] = { 1, 2, 3, 4 };
	int *c = kmemdup(arr, sizeof(arr), GFP_KERNEL);
	CHECK(c && c[3] == 4);
	CHECK(kstrdup(NULL, GFP_KERNEL) == NULL);
	long *z = kcalloc(100, sizeof(long), GFP_KERNEL);
	CHECK(z && z[0] == 0 && z[99] == 0);
	errno = 0;
	CHECK(kmalloc_array(SIZE_MAX / 2, 3, GFP_KERNEL) == NULL);
	CHECK_EQ(errno, ENOMEM);
	CHECK(kcalloc(SIZE_MAX / 8, 16, GFP_KERNEL) == NULL);
	char *k = kzalloc(300, GFP_KERNEL);
	CHECK(k && k[0] == 0 && k[299] == 0);
	void *v = kvmalloc(1 << 20, GFP_KERNEL);
	char *vz = kvzalloc(3 << 20, GFP_KERNEL);
	CHECK(v && vz && vz[(3 << 20) - 1] == 0);
	kfree_sensitive(a);
	kfree(b);
	kfree(c);
	kfree(z);
	kfree(k);
	kvfree(v);
	kvfree(vz);
	CHECK_EQ(slub_errors(), 0);
}

static void zeroing_after_reuse(void)
{
	for (int round = 0; round < 4; round++) {
		char *p[64];
		for (int i = 0; i < 64; i++) {
			p[i] = kmalloc(200, GFP_KERNEL);
			memset(p[i], 0xee, 200);
		}
		for (int i = 0; i < 64; i++)
			kfree(p[i]);
		for (int i = 0; i < 64; i++) {
			p[i] = kzalloc(200, GFP_KERNEL);
			for (int j = 0; j < 200; j++)
				if (p[i][j]) {
					CHECK(!"kzalloc returned dirty memory");
					break;
				}
		}
		for (int i = 0; i < 64; i++)
			kfree(p[i]);
	}
}

static void dma(void)
{
	for (int i = 0; i < 100; i++) {
		void *p = kmalloc(100 + i * 50, GFP_DMA32);
		CHECK(p != NULL && (uintptr_t)p < (1UL << 32));
		kfree(p);
	}
	void *big = kmalloc(100000, GFP_DMA);
	CHECK(big != NULL && (uintptr_t)big + 100000 <= (1UL << 32));
	kfree(big);
}

static void bad_pointers(void)
{
	int local;
	char *heap = malloc(32);
	EXPECT_REPORT(kfree(&local), "kfree: invalid pointer");
	EXPECT_REPORT(kfree(heap), "kfree: invalid pointer");
	EXPECT_REPORT(kfree((void *)0xdeadbeef000UL), "kfree: invalid pointer");
	EXPECT_REPORT(CHECK_EQ(ksize(&local), 0), "ksize: invalid pointer");
	EXPECT_REPORT(CHECK(krealloc(&local, 10, GFP_KERNEL) == NULL), "krealloc: invalid pointer");
	char *big = kmalloc(50000, GFP_KERNEL);
	EXPECT_REPORT(kfree(big + 4096), "invalid pointer");
	/* Pages from the page allocator are not kmalloc's to free. */
	unsigned long page = __get_free_pages(GFP_KERNEL, 2);
	EXPECT_REPORT(kfree((void *)page), "not allocated by libslub");
	free_pages(page, 2);
	kfree(big);
	EXPECT_REPORT(CHECK(kmalloc(1UL << 50, GFP_KERNEL) == NULL), "larger than the largest");
	free(heap);
	CHECK_EQ(slab_validate_all(), 0);
}

/*
 * Two threads free one block above 4 MiB (a large region of its own) at
 * once, or one asks its ksize() while the other frees it: the free unmaps
 * it, and the other call must end in a report (or a size), not in a read of
 * the unmapped descriptors (SIGSEGV).  Many rounds: the window is short.
 */
#define RACE_ROUNDS (UNDER_TSAN ? 200 : 800)

static void *make_large(void)
{
	return kmalloc(5 << 20, GFP_KERNEL);
}

static void kfree_it(void *p)
{
	kfree(p);
}

static void ksize_it(void *p)
{
	(void)ksize(p);
}

static void racing_double_free_large(void)
{
	check_racing_frees(make_large, kfree_it, ksize_it, RACE_ROUNDS);
}

/* Empty slabs on @kn's partial list. */
static unsigned long node_empty_partial(struct kmem_cache_node *kn)
{
	unsigned long n = 0;
	struct list_head *pos;
	pthread_mutex_lock(&kn->list_lock);
	list_for_each(pos, &kn->partial)
		n += !read_counters(lru_slab(pos)).inuse;
	pthread_mutex_unlock(&kn->list_lock);
	return n;
}

/* Empty slabs on the partial lists of every node of @s. */
static unsigned long empty_partial(struct kmem_cache *s)
{
	return NODES_SUM_OF(s, kn, node_empty_partial(kn));
}

/* Allocate and free a burst of @n objects of 2 KiB from @s (NULL: kmalloc). */
static void burst(struct kmem_cache *s, unsigned int n)
{
	static void *p[2048];
	for (unsigned int i = 0; i < n; i++)
		p[i] = s ? kmem_cache_alloc(s, GFP_KERNEL) : kmalloc(2048, GFP_KERNEL);
	for (unsigned int i = 0; i < n; i++)
		s ? kmem_cache_free(s, p[i]) : kfree(p[i]);
}

/*
 * A kmalloc cache keeps the slabs a burst of frees emptied, up to
 * slub_partial_keep_kb per node (1 MiB: 32 slabs of 32 KiB), where another
 * cache keeps min_partial; the decay's trim gives the extra back.
 */
static void emptied_slabs_kept(void)
{
	void *first = kmalloc(2048, GFP_KERNEL);
	struct kmem_cache *s = virt_to_slab(first)->slab_cache;
	kfree(first);
	unsigned long keep = ((unsigned long)slub_opt(partial_keep_kb) << 10) >>
			     (PAGE_SHIFT + oo_order(s->oo));
	if (keep < s->min_partial)
		keep = s->min_partial;
	CHECK(keep > s->min_partial);		/* 32 against 5 */
	burst(NULL, 2048);			/* 128 slabs */
	kmem_cache_flush_all(s);		/* cpu slabs and sheaves to the lists */
	unsigned long kept = empty_partial(s);
	CHECK(kept <= keep * nr_node_ids);
	CHECK(kept > s->min_partial * nr_node_ids);
	CHECK(slab_trim_partial(s));
	CHECK(empty_partial(s) <= s->min_partial * nr_node_ids);
	CHECK(!slab_trim_partial(s));		/* nothing more to give */
	/* The decay thread's tick trims them (called here, not waited for). */
	burst(NULL, 2048);
	kmem_cache_flush_all(s);
	CHECK(empty_partial(s) > s->min_partial * nr_node_ids);
	CHECK(slub_slab_idle_tick(os_now_ms()));
	CHECK(empty_partial(s) <= s->min_partial * nr_node_ids);

	struct kmem_cache *plain = kmem_cache_create("plain-2k", 2048, 0, SLAB_NO_MERGE, NULL);
	burst(plain, 2048);
	kmem_cache_flush_all(plain);
	CHECK(empty_partial(plain) <= plain->min_partial * nr_node_ids);
	kmem_cache_destroy(plain);
}

int main(void)
{
	RUN(size_classes);
	RUN(zero_size);
	RUN(krealloc_keeps_contents);
	RUN(helpers);
	RUN(zeroing_after_reuse);
	RUN(dma);
	RUN(bad_pointers);
	RUN(racing_double_free_large);
	RUN(emptied_slabs_kept);
	CHECK_EQ(slab_validate_all(), 0);
	return check_done();
}
