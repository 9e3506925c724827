// SPDX-License-Identifier: MIT
/*
 * test_slab.c - the kmem_cache API over the SLUB engine: allocation and
 * freeing, constructors, alignment, zeroing, bulk, shrink, destroy, and
 * every kind of bad input, each reported once with nothing corrupted.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include <slub.h>
#include "check.h"
#include "slab/core/kmalloc.h"
#include "base/os.h"
#include "base/numa.h"
#include "page/page_alloc.h"
#include "base/report.h"
#include "slab/core/slab.h"
#include "slab/core/slab_common.h"
#include "slab/nodes.h"

struct thing {
	unsigned long magic;
	char body[40];
};
#define MAGIC 0x5ab5ab5ab5ab5abUL

static unsigned long ctor_calls;

static void thing_ctor(void *p)
{
	__atomic_add_fetch(&ctor_calls, 1, __ATOMIC_RELAXED);
	((struct thing *)p)->magic = MAGIC;
}

static struct zone *normal(void)
{
	return &page_alloc_nodes[0].node_zones[ZONE_NORMAL];
}

static void alloc_free_distinct(void)
{
	struct kmem_cache *s = kmem_cache_create("thing", sizeof(struct thing), 0, SLAB_NO_MERGE, NULL);
	CHECK(s != NULL);
	enum { N = 5000 };
	struct thing **p = calloc(N, sizeof(*p));
	for (int i = 0; i < N; i++) {
		p[i] = kmem_cache_alloc(s, GFP_KERNEL);
		CHECK(p[i] != NULL);
		CHECK(((uintptr_t)p[i] & 7) == 0);
		memset(p[i], i & 0xff, sizeof(struct thing));
	}
	for (int i = 0; i < N; i++) {
		const unsigned char *b = (const unsigned char *)p[i];
		CHECK(b[0] == (i & 0xff) && b[sizeof(struct thing) - 1] == (i & 0xff));
	}
	CHECK_EQ(slab_validate_cache(s), 0);
	for (int i = 0; i < N; i += 3)
		kmem_cache_free(s, p[i]);
	CHECK_EQ(slab_validate_cache(s), 0);
	for (int i = 0; i < N; i++)
		if (i % 3)
			kmem_cache_free(s, p[i]);
	CHECK_EQ(slab_validate_cache(s), 0);
	CHECK_EQ(kmem_cache_shrink(s), 0);	/* everything free: no slab left */
	CHECK_EQ(NODES_SUM(s, nr_slabs), 0);
	free(p);
	kmem_cache_destroy(s);
	CHECK_EQ(slub_errors(), 0);
}

static union slab_counters counters_of(const void *object)
{
	return (union slab_counters){ .counters = virt_to_slab(object)->counters };
}

/*
 * A new slab links one page of objects at a time: the pages nobody
 * allocated from stay unwritten.  Unlinked objects are free objects, on a
 * cpu slab, a partial slab, or a slab emptied and freed.
 */
static void lazy_link_up(void)
{
	enum { SIZE = 1000, N = 200 };
	slub_reclaim();		/* the next slab comes from clean pages */
	struct kmem_cache *s = kmem_cache_create("lazy", SIZE, 0, SLAB_NO_MERGE, NULL);
	CHECK(s != NULL);
	unsigned int pages = 1u << oo_order(s->oo), objects = oo_objects(s->oo);
	CHECK(pages >= 4);
	char *p[N];
	p[0] = kmem_cache_alloc(s, GFP_KERNEL);
	char *base = slab_address(virt_to_slab(p[0]));
	/*
	 * The objects whose free pointers are in the first page: not the one
	 * crossing into the second (its pointer, at 4000 + 496, is there).
	 */
	CHECK_EQ(counters_of(p[0]).built, 4);
	long resident = resident_pages(base, pages * PAGE_SIZE);
	CHECK(resident >= 0 && resident <= 1);
	CHECK_EQ(slab_validate_cache(s), 0);
	/* An object never linked was never handed out: freeing it is refused. */
#ifndef SLUB_UNCHECKED_FREE	/* which trusts every free (check.h) */
	EXPECT_REPORT(kmem_cache_free(s, base + 10 * SIZE), "is not the start of an object");
	EXPECT_REPORT(kmem_cache_free(s, base + 4 * SIZE), "is not the start of an object");
#endif
	CHECK_EQ(counters_of(p[0]).built, 4);
	CHECK_EQ(slab_validate_cache(s), 0);
	for (int i = 1; i < N; i++) {
		p[i] = kmem_cache_alloc(s, GFP_KERNEL);
		memset(p[i], i, SIZE);
		if (i < (int)objects)
			CHECK_EQ(slab_validate_cache(s), 0);
	}
	for (int i = 1; i < N; i++)
		for (int j = 0; j < SIZE; j += 250)
			CHECK_EQ((unsigned char)p[i][j], i & 0xff);
	CHECK_EQ(slab_validate_cache(s), 0);
	for (int i = 0; i < N; i++)
		kmem_cache_free(s, p[i]);
	CHECK_EQ(kmem_cache_shrink(s), 0);

	/*
	 * A slab whose linked objects are all in use, flushed: unfrozen with
	 * an empty freelist yet free objects, so on the partial list.  A free
	 * to it must not take it for a full slab (and list it twice).
	 */
	for (int i = 0; i < 8; i++)
		p[i] = kmem_cache_alloc(s, GFP_KERNEL);
	CHECK_EQ(counters_of(p[0]).built, 8);	/* pointers in the second page: 4 .. 7 */
	CHECK(virt_to_slab(p[7]) == virt_to_slab(p[0]));
	kmem_cache_flush_all(s);
	CHECK(virt_to_slab(p[0])->freelist == NULL);
	CHECK_EQ(NODES_SUM(s, nr_partial), 1);
	kmem_cache_free(s, p[2]);
	CHECK_EQ(NODES_SUM(s, nr_partial), 1);
	CHECK_EQ(slab_validate_cache(s), 0);
	/* Allocation takes it back: the freed object, then the rest of it. */
	for (int i = 8; i < (int)objects + 1; i++)
		p[i] = kmem_cache_alloc(s, GFP_KERNEL);
	CHECK(p[8] == p[2]);
	CHECK(virt_to_slab(p[objects]) == virt_to_slab(p[0]));
	CHECK_EQ(counters_of(p[0]).built, objects);
	CHECK_EQ(slab_validate_cache(s), 0);
	for (int i = 0; i < (int)objects + 1; i++)
		if (i != 2)
			kmem_cache_free(s, p[i]);
	CHECK_EQ(slab_validate_cache(s), 0);
	CHECK_EQ(kmem_cache_shrink(s), 0);
	kmem_cache_destroy(s);
}

/*
 * Pinned to one CPU, so that one slot serves it all.  A CI run under UBSan
 * (make test -j2) once counted 292 more constructor calls on reuse (four
 * slabs built anew); 30 reruns and moves between CPUs forced at three
 * points did not reproduce it, so a failure prints the slab counts.
 */
static void constructor_runs_once_per_object(void)
{
	cpu_set_t old;
	CHECK_EQ(pin_to_this_cpu(&old), 0);
	ctor_calls = 0;
	struct kmem_cache *s = kmem_cache_create("ctor", sizeof(struct thing), 0, 0, thing_ctor);
	unsigned int per_slab = oo_objects(s->oo);
	struct thing *p[300];
	for (int i = 0; i < 300; i++) {
		p[i] = kmem_cache_alloc(s, GFP_KERNEL);
		CHECK_EQ(p[i]->magic, MAGIC);
	}
	unsigned long slabs = NODES_SUM(s, nr_slabs);
	CHECK_EQ(ctor_calls, slabs * per_slab);
	/* Reuse keeps the constructed state: no ctor call, magic intact. */
	for (int i = 0; i < 300; i++)
		kmem_cache_free(s, p[i]);
	unsigned long before = ctor_calls;
	for (int i = 0; i < 300; i++) {
		p[i] = kmem_cache_alloc(s, GFP_KERNEL);
		CHECK_EQ(p[i]->magic, MAGIC);	/* the free pointer is outside the object */
	}
	if (ctor_calls != before)
		fprintf(stderr, "   cpu %d, %u per slab, slabs %lu then %lu, node partial %lu\n",
			sched_getcpu(), per_slab, slabs, NODES_SUM(s, nr_slabs),
			NODES_SUM(s, nr_partial));
	CHECK_EQ(ctor_calls, before);
	/* __GFP_ZERO with a constructor: warned about once, object left intact. */
	unsigned long e = slub_errors();
	struct thing *z1 = kmem_cache_zalloc(s, GFP_KERNEL);
	struct thing *z2 = kmem_cache_alloc(s, GFP_KERNEL | __GFP_ZERO);
	CHECK_EQ(slub_errors(), e + 1);
	CHECK_EQ(z1->magic, MAGIC);
	CHECK_EQ(z2->magic, MAGIC);
	kmem_cache_free(s, z1);
	kmem_cache_free(s, z2);
	for (int i = 0; i < 300; i++)
		kmem_cache_free(s, p[i]);
	kmem_cache_destroy(s);
	sched_setaffinity(0, sizeof(old), &old);
}

static void alignment_and_zeroing(void)
{
	struct kmem_cache *hw = kmem_cache_create("hw", 100, 0, SLAB_HWCACHE_ALIGN | SLAB_NO_MERGE, NULL);
	struct kmem_cache *a256 = kmem_cache_create("a256", 50, 256, SLAB_NO_MERGE, NULL);
	for (int i = 0; i < 200; i++) {
		void *x = kmem_cache_alloc(hw, GFP_KERNEL);
		void *y = kmem_cache_zalloc(a256, GFP_KERNEL);
		CHECK(((uintptr_t)x & 63) == 0);
		CHECK(((uintptr_t)y & 255) == 0);
		const char *c = y;
		for (int j = 0; j < 50; j++)
			CHECK(c[j] == 0);
		memset(y, 0xff, 50);	/* dirty it for the next round */
		kmem_cache_free(a256, y);
		if (i % 2)
			kmem_cache_free(hw, x);
	}
	kmem_cache_shrink(hw);
	CHECK_EQ(slab_validate_cache(hw), 0);
	kmem_cache_destroy(a256);
	/* A banner, then each of the 100 objects in use, full slabs too: one error each. */
	unsigned long e = slub_errors();
	kmem_cache_destroy(hw);
	CHECK_EQ(slub_errors(), e + 1 + 100);
	/* The cache lives on: its objects are still usable and freeable. */
	CHECK(kmem_cache_alloc(hw, GFP_KERNEL) != NULL);
}

static void bulk(void)
{
	struct kmem_cache *s = kmem_cache_create("bulk", 64, 0, SLAB_NO_MERGE, NULL);
	void *p[512];
	CHECK_EQ(kmem_cache_alloc_bulk(s, GFP_KERNEL, 512, p), 512);
	for (int i = 0; i < 512; i++)
		for (int j = i + 1; j < i + 4 && j < 512; j++)
			CHECK(p[i] != p[j]);
	kmem_cache_free_bulk(s, 512, p);
	CHECK_EQ(kmem_cache_shrink(s), 0);
	kmem_cache_destroy(s);
}

static void destroy_recreate_returns_memory(void)
{
	slub_reclaim();
	unsigned long free0 = normal()->free_pages;
	for (int round = 0; round < 50; round++) {
		struct kmem_cache *s = kmem_cache_create("cycle", 200 + round * 8, 0, SLAB_NO_MERGE, NULL);
		void *p[1000];
		for (int i = 0; i < 1000; i++)
			p[i] = kmem_cache_alloc(s, GFP_KERNEL);
		for (int i = 0; i < 1000; i++)
			kmem_cache_free(s, p[i]);
		kmem_cache_destroy(s);
	}
	page_alloc_drain_pcp();
	/* Nothing kept but what other caches had before (a page or so). */
	CHECK(normal()->free_pages + 8 >= free0);
	CHECK_EQ(slub_errors(), 1 + 101);	/* the __GFP_ZERO warning and the destroy report */
}

/*
 * kmem_cache_create() in both forms (slub.h's _Generic), and what the
 * args form adds: a free pointer inside an RCU object, a sheaf capacity.
 */
static void create_args(void)
{
	ctor_calls = 0;
	struct kmem_cache_args args = { .align = 128, .ctor = thing_ctor };
	struct kmem_cache *s = kmem_cache_create("args", sizeof(struct thing), &args, 0);
	CHECK(s != NULL);
	struct thing *t = kmem_cache_alloc(s, GFP_KERNEL);
	CHECK(((uintptr_t)t & 127) == 0 && t->magic == MAGIC && ctor_calls > 0);
	kmem_cache_free(s, t);
	kmem_cache_destroy(s);
	/* NULL: the defaults; a const pointer too; the function itself. */
	s = kmem_cache_create("args-null", 24, NULL, SLAB_NO_MERGE);
	CHECK(s != NULL && s->align == ARCH_SLAB_MINALIGN && !s->ctor);
	kmem_cache_destroy(s);
	const struct kmem_cache_args cargs = { .usersize = 8, .useroffset = 8 };
	s = kmem_cache_create("args-const", 32, &cargs, 0);
	CHECK(s != NULL && s->usersize == 8 && s->useroffset == 8);
	kmem_cache_destroy(s);
	s = kmem_cache_create_args("args-fn", 40, NULL, SLAB_NO_MERGE);
	CHECK(s != NULL && s->object_size == 40);
	kmem_cache_destroy(s);

	/* The free pointer in the RCU object's own field: no word after it. */
	struct kmem_cache_args rcu = { .freeptr_offset = 16, .use_freeptr_offset = true };
	s = kmem_cache_create("args-rcu", 48, &rcu, SLAB_TYPESAFE_BY_RCU);
	CHECK(s != NULL && s->offset == 16 && s->size == 48);
	struct kmem_cache *plain = kmem_cache_create("args-rcu-plain", 48, 0, SLAB_TYPESAFE_BY_RCU, NULL);
	CHECK(plain != NULL && plain->offset == 48 && plain->size == 56);
	enum { N = 300 };
	static void *obj[N];
	for (int i = 0; i < N; i++) {
		obj[i] = kmem_cache_alloc(s, GFP_KERNEL);
		memset(obj[i], 0x11, 48);
	}
	for (int i = 0; i < N; i++)
		kmem_cache_free(s, obj[i]);
	CHECK_EQ(slab_validate_cache(s), 0);
	kmem_cache_destroy(s);
	kmem_cache_destroy(plain);
	/* What the kernel refuses: outside RCU, misaligned, past the object. */
	EXPECT_REPORT(kmem_cache_create("args-bad", 48, &rcu, 0), "freeptr_offset");
	rcu.freeptr_offset = 12;
	EXPECT_REPORT(kmem_cache_create("args-bad", 48, &rcu, SLAB_TYPESAFE_BY_RCU), "freeptr_offset");
	rcu.freeptr_offset = 48;
	EXPECT_REPORT(kmem_cache_create("args-bad", 48, &rcu, SLAB_TYPESAFE_BY_RCU), "freeptr_offset");
	CHECK_EQ(errno, EINVAL);

	/* A capacity of its own keeps a cache from merging; too large a one is refused. */
	struct kmem_cache_args sheaf = { .sheaf_capacity = 16 };
	struct kmem_cache *a = kmem_cache_create("args-sheaf", 64, &sheaf, 0);
	struct kmem_cache *b = kmem_cache_create("args-sheaf-plain", 64, 0, 0, NULL);
	CHECK(a != NULL && b != NULL && a != b && a->sheaf_capacity == 16);
	kmem_cache_destroy(a);
	kmem_cache_destroy(b);
	sheaf.sheaf_capacity = SHEAF_CAPACITY_MAX + 1;
	EXPECT_REPORT(kmem_cache_create("args-sheaf-big", 64, &sheaf, 0), "sheaf_capacity");
}

static void bad_input(void)
{
	SKIP_IF_UNCHECKED_FREE();
	CHECK(kmem_cache_create(NULL, 8, 0, 0, NULL) == NULL);
	EXPECT_REPORT(kmem_cache_create("", 8, 0, 0, NULL), "no name");
	EXPECT_REPORT(kmem_cache_create("zero", 0, 0, 0, NULL), "size 0");
	EXPECT_REPORT(kmem_cache_create("huge", 5u << 20, 0, 0, NULL), "larger than 4 MiB");
	EXPECT_REPORT(kmem_cache_create("odd", 8, 24, 0, NULL), "not a power of two");
	EXPECT_REPORT(kmem_cache_create("flags", 8, 0, 0x2u, NULL), "unknown flags");
	CHECK_EQ(errno, EINVAL);
	kmem_cache_destroy(NULL);

	struct kmem_cache *a = kmem_cache_create("bad-a", 32, 0, SLAB_NO_MERGE, NULL);
	struct kmem_cache *b = kmem_cache_create("bad-b", 64, 0, SLAB_NO_MERGE, NULL);
	char *x = kmem_cache_alloc(a, GFP_KERNEL);
	int local;
	EXPECT_REPORT(kmem_cache_free(a, &local), "not a slab object");
	EXPECT_REPORT(kmem_cache_free(a, x + 8), "not the start of an object in bad-a");
	EXPECT_REPORT(kfree(x + 1), "not the start of an object");
	/* Wrong cache: warned, then freed where it belongs. */
	EXPECT_REPORT(kmem_cache_free(b, x), "Wrong slab cache. bad-b but object is from bad-a");
	CHECK_EQ(slab_validate_cache(a), 0);
	CHECK_EQ(kmem_cache_shrink(a), 0);
	/* Freed twice in a row on the same CPU: caught before the list loops. */
	char *y = kmem_cache_alloc(a, GFP_KERNEL);
	kmem_cache_free(a, y);
	EXPECT_REPORT(kmem_cache_free(a, y), "double free");
	CHECK_EQ(slab_validate_cache(a), 0);
	kmem_cache_free(a, NULL);
	kmem_cache_destroy(a);
	kmem_cache_destroy(b);

	/*
	 * The slot after the last object: on an object boundary and inside
	 * the slab's pages (1000-byte objects leave a tail), but no object.
	 */
	struct kmem_cache *t = kmem_cache_create("bad-tail", 1000, 0, SLAB_NO_MERGE, NULL);
	char *o = kmem_cache_alloc(t, GFP_KERNEL);
	struct slab *slab = NULL;
	uintptr_t start = 0;
	CHECK(object_slab(o, &slab, &start) == t);
	unsigned int objects = ((union slab_counters){ .counters = slab->counters }).objects;
	CHECK((PAGE_SIZE << slab->order) - objects * 1000u >= 8);
	EXPECT_REPORT(kmem_cache_free(t, (char *)start + objects * 1000), "not the start of an object");
	EXPECT_REPORT(kfree((char *)start + objects * 1000), "not the start of an object");
	/*
	 * The word before the slab: reported as not ours when it lies in no
	 * slab.  If the page before is another slab its word may be any of its
	 * objects, free or live, so the case is not asked then.
	 */
	struct slab *before_slab;
	uintptr_t before_start;
	if (!object_slab((char *)start - 8, &before_slab, &before_start))
		EXPECT_REPORT(kfree((char *)start - 8), "kfree");
	kmem_cache_free(t, o);
	CHECK_EQ(slab_validate_cache(t), 0);
	kmem_cache_destroy(t);
}

/*
 * struct slab spans the first two descriptors: the head, and the first
 * tail, which stays a tail (flags, head pointer) for lookups while its
 * list slot holds freelist+counters.  Lookups from either page find the
 * slab; after the slab goes back both descriptors are a plain free block's.
 */
/*
 * The free check's object-start test (one multiply, slab_offset_index)
 * agrees with a division at every byte of a slab, for power-of-two sizes
 * and others; built read alone is the counters' built.
 */
static void object_start_every_offset(void)
{
	static const unsigned int sizes[] = { 8, 24, 64, 96, 192, 200, 1000, 2048, 4096, 5000 };
	unsigned long errors = slub_errors();
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		struct kmem_cache *s = kmem_cache_create("start", sizes[k], 0, SLAB_NO_MERGE, NULL);
		CHECK(s != NULL);
		void *obj = kmem_cache_alloc(s, GFP_KERNEL);
		struct slab *slab = virt_to_slab(obj);
		CHECK(slab != NULL);
		CHECK_EQ(read_built(slab), counters_of(obj).built);
		uintptr_t start = (uintptr_t)slab_address(slab);
		unsigned long bytes = PAGE_SIZE << oo_order(s->oo);
		for (unsigned long off = 0; off < bytes; off++) {
			bool want = off % s->size == 0 && off / s->size < read_built(slab);
			CHECK_EQ(slab_object_valid(s, slab, (void *)(start + off)), want);
		}
		/* Below the slab: the offset wraps. */
		CHECK(!slab_object_valid(s, slab, (void *)(start - s->size)));
		kmem_cache_free(s, obj);
		kmem_cache_destroy(s);
	}
	CHECK_EQ(slub_errors(), errors);	/* the checks report nothing */
}

/*
 * struct slab is its head's descriptor alone, so a small cache's slab is one
 * page, as the kernel's; its list links are in the section's link table.
 */
static void slab_in_one_descriptor(void)
{
	CHECK_EQ(sizeof(struct slab), sizeof(struct page));
	struct kmem_cache *small = kmem_cache_create("one-desc", 64, 0, SLAB_NO_MERGE, NULL);
	CHECK(small != NULL && oo_order(small->oo) == 0 && oo_objects(small->oo) == 64);
	void *obj = kmem_cache_alloc(small, GFP_KERNEL);
	struct slab *one = virt_to_slab(obj);
	CHECK(one != NULL && one->order == 0 && one->slab_cache == small);
	/* The link entry and back, and it is in the section's table, past the mem_map. */
	CHECK(lru_slab(slab_lru(one)) == one);
	uintptr_t base = (uintptr_t)one & ~(SECTION_SIZE - 1);
	CHECK((uintptr_t)slab_lru(one) >= base + SLAB_LINK_OFFSET &&
	      (uintptr_t)slab_lru(one) < base + SECTION_FIRST_PAGE * PAGE_SIZE);
	kmem_cache_free(small, obj);
	kmem_cache_destroy(small);

	/* A larger slab: its tails stay the page allocator's. */
	struct kmem_cache *s = kmem_cache_create("two-page", 700, 0, SLAB_NO_MERGE, NULL);
	CHECK(s != NULL && oo_order(s->oo) >= 1);
	unsigned int per_slab = oo_objects(s->oo);
	void **p = calloc(per_slab, sizeof(*p));
	for (unsigned int i = 0; i < per_slab; i++)
		p[i] = kmem_cache_alloc(s, GFP_KERNEL);
	struct slab *slab = virt_to_slab(p[0]);
	CHECK(slab != NULL);
	struct page *head = slab_page(slab), *tail = head + 1;
	CHECK_EQ(page_flags(tail), PG_tail);
	CHECK_EQ(tail->compound_head, tail_word(head));
	CHECK(compound_head(tail) == head);
	CHECK(slab->slab_cache == s);
	/* The validator holds a head to it: a cache word exactly on a slab. */
	CHECK_EQ(page_alloc_validate(), 0);
	__atomic_and_fetch(&slab->flags, ~PG_slab, __ATOMIC_RELAXED);
	EXPECT_REPORT(CHECK_EQ(page_alloc_validate(), 1), "second word");
	__atomic_or_fetch(&slab->flags, PG_slab, __ATOMIC_RELAXED);
	/* An object in the second page: the same slab, through the tail. */
	void *second = (char *)slab_address(slab) + PAGE_SIZE + 8 * s->size;
	CHECK(virt_to_slab(second) == slab);
	struct slab *found = NULL;
	uintptr_t start = 0;
	CHECK(object_slab(second, &found, &start) == s && found == slab);
	CHECK_EQ(start, (uintptr_t)slab_address(slab));
	for (unsigned int i = 0; i < per_slab; i++)
		kmem_cache_free(s, p[i]);
	CHECK_EQ(slab_validate_cache(s), 0);
	kmem_cache_destroy(s);	/* the empty slab goes back */
	CHECK_EQ(page_alloc_validate(), 0);
	free(p);
}

/*
 * Frees of our own metadata: the pages of the memory map, whose first two
 * descriptors hold the region header.  Its fields must not read as a
 * block's: descriptor 1's flags word sits where the header keeps carved,
 * which grows past bits 10 and 11 (PG_kmalloc_large, PG_extent) in use.
 */
static void frees_of_the_memory_map(void)
{
	struct page *pages[512];
	unsigned int n = 0;
	struct mem_region *r;
	do {
		pages[n] = alloc_pages(GFP_KERNEL, 4);
		CHECK(pages[n] != NULL);
		r = page_region(pages[n++]);
	} while (!(r->carved & (3u << 10)) && n < 512);
	CHECK(r->carved & (3u << 10));
	uint32_t carved = r->carved;
	EXPECT_REPORT(kfree(r), "kfree");			/* descriptor 0 */
	EXPECT_REPORT(kfree((char *)r + PAGE_SIZE), "kfree");	/* descriptor 1 */
	EXPECT_REPORT(kfree((char *)r + 2 * PAGE_SIZE), "kfree");	/* a zero descriptor */
	bool ok;
	CHECK_EQ(ksize_of((char *)r + PAGE_SIZE, "ksize", &ok), 0);
	CHECK(!ok);
	CHECK(object_slab(r, &(struct slab *){ NULL }, &(uintptr_t){ 0 }) == NULL);
	CHECK_EQ(r->carved, carved);
	CHECK_EQ(r->flags1, PG_reserved);
	while (n)
		__free_pages(pages[--n], 4);
	CHECK_EQ(page_alloc_validate(), 0);
}

static int stop_churn;
static struct kmem_cache *churn_cache;

static void *churn(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop_churn, __ATOMIC_RELAXED)) {
		void *p[64], *q[64];
		for (int i = 0; i < 64; i++) {
			p[i] = kmalloc(16 << (i % 10), GFP_KERNEL);
			q[i] = kmem_cache_alloc(churn_cache, GFP_KERNEL);
		}
		for (int i = 0; i < 64; i++) {
			kfree(p[i]);
			kmem_cache_free(churn_cache, q[i]);
		}
		kmem_cache_shrink(churn_cache);	/* every CPU slot and the node lock */
	}
	return NULL;
}

/*
 * A child forked while threads are in slab slow paths can still allocate.
 * Not under TSan: its runtime emulates the 16-byte CAS with an internal
 * spin lock, which a thread may hold at the fork (the child then hangs in
 * __tsan_atomic128_compare_exchange_strong, seen with gdb).
 */
static void fork_while_allocating(void)
{
	if (UNDER_TSAN) {
		fprintf(stderr, "   (skipped under TSan)\n");
		return;
	}
	pthread_t t[3];
	churn_cache = kmem_cache_create("churn", 200, 0, SLAB_NO_MERGE, NULL);
	for (int i = 0; i < 3; i++)
		pthread_create(&t[i], NULL, churn, NULL);
	int bad = 0;
	for (int i = 0; i < 150; i++) {
		pid_t pid = fork();
		if (pid == 0) {
			alarm(10);	/* a deadlock ends as SIGALRM */
			for (int j = 0; j < 2000; j++)
				kfree(kmalloc(16 << (j % 10), GFP_KERNEL));
			for (int j = 0; j < 2000; j++)
				kmem_cache_free(churn_cache, kmem_cache_alloc(churn_cache, GFP_KERNEL));
			kmem_cache_shrink(churn_cache);
			struct kmem_cache *s = kmem_cache_create("child", 100, 0, SLAB_NO_MERGE, NULL);
			kmem_cache_free(s, kmem_cache_alloc(s, GFP_KERNEL));
			kmem_cache_destroy(s);
			_exit(0);
		}
		int status;
		waitpid(pid, &status, 0);
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			fprintf(stderr, "   child %d: %s %d\n", i, WIFEXITED(status) ? "exit" : "signal",
				WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
			bad++;
		}
	}
	__atomic_store_n(&stop_churn, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	CHECK_EQ(bad, 0);
}

static void *no_mmap(void *p, size_t l, int pr, int f, int fd, off_t o)
{
	(void)p; (void)l; (void)pr; (void)f; (void)fd; (void)o;
	errno = ENOMEM;
	return MAP_FAILED;
}

static void out_of_memory(void)
{
	/* One CPU: another CPU's slot could still hold free objects. */
	cpu_set_t old, one;
	sched_getaffinity(0, sizeof(old), &old);
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	sched_setaffinity(0, sizeof(one), &one);
	struct kmem_cache *s = kmem_cache_create("oom", 1024, 0, SLAB_NO_MERGE, NULL);
	enum { MAX = 200000 };
	void **p = calloc(MAX, sizeof(void *));
	slub_os.mmap = no_mmap;
	unsigned long e = slub_errors();
	size_t n = 0;
	while (n < MAX && (p[n] = kmem_cache_alloc(s, GFP_KERNEL)))
		n++;
	CHECK(n > 0 && n < MAX);
	CHECK_EQ(errno, ENOMEM);
	CHECK(slub_errors() > e);	/* a warning naming the cache */
	char m[SLUB_REPORT_LINE];
	slub_report_last(m, sizeof(m));
	CHECK(strstr(m, "Unable to allocate memory") != NULL);
	e = slub_errors();
	CHECK(kmem_cache_alloc(s, GFP_KERNEL | __GFP_NOWARN) == NULL);
	CHECK_EQ(slub_errors(), e);
	CHECK_EQ(slab_validate_cache(s), 0);
	slub_os = slub_os_default;
	CHECK(kmem_cache_alloc(s, GFP_KERNEL) != NULL);	/* and it recovers */
	while (n--)
		kmem_cache_free(s, p[n]);
	free(p);
	sched_setaffinity(0, sizeof(old), &old);
	CHECK_EQ(slab_validate_cache(s), 0);
	CHECK_EQ(page_alloc_validate(), 0);
}

/* Pin this thread to @cpu; false if it may not run there. */
static bool run_on(int cpu)
{
	return !pin_to_cpu(cpu) && sched_getcpu() == cpu;
}

/*
 * A lone thread that the scheduler moves keeps one cpu slab per cache: the
 * CPU it moved to takes over the slab of the one it left (adopt_lone_slabs)
 * instead of making a second.  Must run while the process has one thread.
 */
static void lone_thread_keeps_one_slab(void)
{
	cpu_set_t old;
	sched_getaffinity(0, sizeof(old), &old);
	int a = -1, b = -1;
	for (int cpu = 0; cpu < CPU_SETSIZE && b < 0; cpu++)
		if (CPU_ISSET(cpu, &old))
			*(a < 0 ? &a : &b) = cpu;
	if (b < 0 || !os_single_threaded()) {
		fprintf(stderr, "   (needs two CPUs and one thread)\n");
		return;
	}
	struct kmem_cache *s = kmem_cache_create("lone", 64, 0, SLAB_NO_MERGE, NULL);
	void *x[3] = { NULL, NULL, NULL };
	struct slab_info info;
	if (run_on(a) && (x[0] = kmem_cache_alloc(s, GFP_KERNEL)) && run_on(b)) {
		x[1] = kmem_cache_alloc(s, GFP_KERNEL);
		slab_get_info(s, &info);
		if (slub_percpu_rseq && cpu_to_node((unsigned int)a) != cpu_to_node((unsigned int)b)) {
			/*
			 * Other nodes (numa=fake): a local slab.  Without rseq the
			 * thread keeps its slot (the CAS paths' hint) and its slab,
			 * which serves a request for no node, as the kernel's does.
			 */
			CHECK_EQ(info.num_slabs, 2);
			CHECK_EQ(slab_nid(virt_to_slab(x[1])), cpu_to_node((unsigned int)b));
			goto out;
		}
		CHECK_EQ(info.num_slabs, 1);
		CHECK(virt_to_slab(x[1]) == virt_to_slab(x[0]));
		/* And back: the slab moves again, still alone. */
		if (run_on(a)) {
			x[2] = kmem_cache_alloc(s, GFP_KERNEL);
			slab_get_info(s, &info);
			CHECK_EQ(info.num_slabs, 1);
		}
	} else {
		fprintf(stderr, "   (could not move between CPUs %d and %d)\n", a, b);
	}
out:
	unpin(&old);
	for (int i = 0; i < 3; i++)
		if (x[i])
			kmem_cache_free(s, x[i]);
	CHECK_EQ(slab_validate_cache(s), 0);
	kmem_cache_destroy(s);
}

/*
 * Once a cache holds slub_populate_slabs slabs, each new one is faulted in
 * whole with one call (os_populate); before that a new slab has only the
 * page its first objects lie in.
 */
static void hot_cache_slabs_populated(void)
{
	cpu_set_t old;
	pin_to_this_cpu(&old);		/* one cpu slab at a time */
	slub_reclaim();			/* free blocks given back: new slabs start untouched */
	struct kmem_cache *s = kmem_cache_create("populate", 1000, 0, SLAB_NO_MERGE, NULL);
	unsigned int order = oo_order(s->oo), hot = s->populate_slabs;
	size_t bytes = PAGE_SIZE << order;
	CHECK(order >= 2);
	if (!hot) {
		fprintf(stderr, "   (slub_populate_slabs=0: nothing is populated)\n");
		kmem_cache_destroy(s);
		unpin(&old);
		return;
	}
	enum { MAX = 4096 };
	static void *obj[MAX];
	unsigned int n = 0, slabs = 0, checked = 0;
	while (n < MAX && slabs <= hot) {
		obj[n] = kmem_cache_alloc(s, GFP_KERNEL);
		if (!obj[n])
			break;
		if (NODES_SUM(s, nr_slabs) > slabs) {
			slabs = (unsigned int)NODES_SUM(s, nr_slabs);
			void *start = slab_address(virt_to_slab(obj[n]));
			long pages = resident_pages(start, bytes);
			CHECK(pages >= 0);
			if (slabs <= hot)
				CHECK(pages < (long)(bytes / PAGE_SIZE));	/* lazy */
			else
				CHECK_EQ(pages, (long)(bytes / PAGE_SIZE));	/* populated */
			checked++;
		}
		n++;
	}
	CHECK_EQ(checked, hot + 1);
	while (n--)
		kmem_cache_free(s, obj[n]);
	kmem_cache_destroy(s);
	unpin(&old);
}

/*
 * A new slab of a cache's first ones stays lazy, but each page the link-up
 * reaches untouched is faulted in by a call (slub_populate_pages), not by a
 * page fault: taking every object of a first slab faults nothing in.  The
 * pages resident are the same either way.
 */
static void lazy_pages_populated(void)
{
	const char *opt = getenv("SLUB_OPTIONS");
	int fd = fault_counter();
	if ((opt && strstr(opt, "slub_populate_pages=0")) || UNDER_TSAN || fd < 0) {
		fprintf(stderr, "   (%s: not counted)\n",
			fd < 0 ? "no perf page-fault counter here" :
			UNDER_TSAN ? "ThreadSanitizer's shadow faults too" : "slub_populate_pages=0");
		if (fd >= 0)
			close(fd);
		return;
	}
	cpu_set_t old;
	pin_to_this_cpu(&old);		/* one cpu slab */
	slub_reclaim();			/* free blocks given back: the slab starts untouched */
	struct kmem_cache *s = kmem_cache_create("lazy_pages", 1000, 0, SLAB_NO_MERGE, NULL);
	unsigned int objects = oo_objects(s->oo), pages = 1u << oo_order(s->oo);
	CHECK(pages >= 4);
	enum { MAX = 512 };
	static void *obj[MAX];
	CHECK(objects <= MAX);
	obj[0] = kmem_cache_alloc(s, GFP_KERNEL);	/* the slab, its first page linked */
	void *start = slab_address(virt_to_slab(obj[0]));
	CHECK_EQ(resident_pages(start, pages * PAGE_SIZE), 1);
	uint64_t before = faults_now(fd);
	for (unsigned int i = 1; i < objects; i++)
		obj[i] = kmem_cache_alloc(s, GFP_KERNEL);
	uint64_t after = faults_now(fd);
	close(fd);
	fprintf(stderr, "   %u objects over %u pages: %llu page faults\n", objects, pages,
		(unsigned long long)(after - before));
	CHECK(after - before < pages / 2);	/* one a page without the calls */
	CHECK_EQ(NODES_SUM(s, nr_slabs), 1);
	CHECK_EQ(resident_pages(start, pages * PAGE_SIZE), (long)pages);
	for (unsigned int i = 0; i < objects; i++)
		kmem_cache_free(s, obj[i]);
	kmem_cache_destroy(s);
	unpin(&old);
}

static void percpu_mode(void)
{
	const char *opt = getenv("SLUB_OPTIONS");
	bool rseq_off = opt && strstr(opt, "slub_rseq=0");
	fprintf(stderr, "   per-CPU fast paths: %s\n", slub_percpu_rseq ? "rseq" : "cmpxchg16b");
	/* Where glibc registered rseq and nothing turned it off, it is used. */
	if (SLUB_HAVE_RSEQ_ASM && os_rseq_offset && !rseq_off)
		CHECK(slub_percpu_rseq != 0);
	if (rseq_off)
		CHECK_EQ(slub_percpu_rseq, 0);
}

/* A program's own fork handler that allocates (registered before first use). */
static void prepare_that_allocates(void)
{
	kfree(kmalloc(3000, GFP_KERNEL));
	if (churn_cache)
		kmem_cache_free(churn_cache, kmem_cache_alloc(churn_cache, GFP_KERNEL));
}

int main(void)
{
	pthread_atfork(prepare_that_allocates, NULL, NULL);
	kfree(kmalloc(8, GFP_KERNEL));	/* start the slab layer */
	RUN(percpu_mode);
	RUN(lone_thread_keeps_one_slab);	/* before any thread */
	RUN(hot_cache_slabs_populated);
	RUN(lazy_pages_populated);
	RUN(alloc_free_distinct);
	RUN(constructor_runs_once_per_object);
	RUN(alignment_and_zeroing);
	RUN(bulk);
	RUN(destroy_recreate_returns_memory);
	RUN(create_args);
	RUN(bad_input);
	RUN(slab_in_one_descriptor);
	RUN(object_start_every_offset);
	RUN(frees_of_the_memory_map);
	RUN(out_of_memory);
	RUN(fork_while_allocating);
	RUN(lazy_link_up);	/* last: the others count reports from zero */
	CHECK_EQ(slab_validate_all(), 0);
	return check_done();
}
