// SPDX-License-Identifier: MIT
/*
 * test_slab_release.c - the checks caches without debug flags make on
 * every operation (slab.h, "free pointers"): a double free with other
 * frees in between is reported and ignored, on the CPU's freelist, on the
 * slab's own, or on another CPU's; a free pointer overwritten after the
 * free is reported where it would be followed, the freelist is cut there,
 * and the cache still validates; program data never makes a false report.
 * ctest runs it again in the cmpxchg16b mode (test_slab_release_cas).
 */
#define _GNU_SOURCE
#include <stdatomic.h>

#include <slub.h>
#include "check.h"
#include "base/report.h"
#include "slab/core/slab.h"

#define NR_SIZES 5
static const unsigned int sizes[NR_SIZES] = { 8, 16, 64, 200, 4096 };

static void ctor_fill(void *p)
{
	memset(p, 0x5c, 24);
}

static struct kmem_cache *cache_of(const void *p)
{
	struct slab *slab = virt_to_slab(p);
	return slab ? slab->slab_cache : NULL;
}

/* The four objects after a double free: four different ones. */
static void four_distinct(void *(*alloc)(void *), void *arg, void (*release)(void *, void *))
{
	void *o[4];
	for (int i = 0; i < 4; i++) {
		o[i] = alloc(arg);
		CHECK(o[i] != NULL);
		for (int j = 0; j < i; j++)
			CHECK(o[i] != o[j]);
	}
	for (int i = 0; i < 4; i++)
		release(arg, o[i]);
}

static void *cache_alloc(void *s)
{
	return kmem_cache_alloc(s, GFP_KERNEL);
}

static void cache_release(void *s, void *p)
{
	kmem_cache_free(s, p);
}

static void *kmalloc_50ish(void *size)
{
	return kmalloc((size_t)(uintptr_t)size, GFP_KERNEL);
}

static void kmalloc_release(void *size, void *p)
{
	(void)size;
	kfree(p);
}

/* kfree(p); kfree(q); kfree(p), with @between frees in between, for kmem caches. */
static void interleaved_double_free_caches(void)
{
	SKIP_IF_UNCHECKED_FREE();
	for (int i = 0; i < NR_SIZES; i++) {
		for (int ctor = 0; ctor < 2; ctor++) {
			struct kmem_cache *s = kmem_cache_create(ctor ? "rel-ctor" : "rel", sizes[i], 0,
								 SLAB_NO_MERGE, ctor && sizes[i] >= 24 ? ctor_fill : NULL);
			CHECK(s != NULL);
			for (int between = 1; between <= 9; between += 4) {
				char *p = kmem_cache_alloc(s, GFP_KERNEL);
				char *q[9];
				for (int k = 0; k < between; k++)
					q[k] = kmem_cache_alloc(s, GFP_KERNEL);
				memset(p, 0x11, sizes[i]);
				kmem_cache_free(s, p);
				for (int k = 0; k < between; k++)
					kmem_cache_free(s, q[k]);
				EXPECT_REPORT(kmem_cache_free(s, p), "double free");
				four_distinct(cache_alloc, s, cache_release);
				CHECK_EQ(slab_validate_cache(s), 0);
			}
			/* Freed twice in a row, too. */
			char *p = kmem_cache_alloc(s, GFP_KERNEL);
			kmem_cache_free(s, p);
			EXPECT_REPORT(kmem_cache_free(s, p), "double free");
			four_distinct(cache_alloc, s, cache_release);
			CHECK_EQ(slab_validate_cache(s), 0);
			kmem_cache_destroy(s);
		}
	}
}

static void interleaved_double_free_kmalloc(void)
{
	SKIP_IF_UNCHECKED_FREE();
	static const size_t ksizes[] = { 8, 16, 50, 64, 4096 };
	for (size_t i = 0; i < sizeof(ksizes) / sizeof(ksizes[0]); i++) {
		char *p = kmalloc(ksizes[i], GFP_KERNEL);
		char *q = kmalloc(ksizes[i], GFP_KERNEL);
		kfree(p);
		kfree(q);
		EXPECT_REPORT(kfree(p), "double free");
		/* The case: four kmalloc(50) after it, four objects. */
		four_distinct(kmalloc_50ish, (void *)(uintptr_t)ksizes[i], kmalloc_release);
		CHECK_EQ(slab_validate_cache(cache_of(q)), 0);
	}
}

/*
 * Objects of slabs that are no longer the CPU's: their frees go to the
 * slab's own freelist, where the second free must be found too.
 */
static void double_free_on_slab_freelist(void)
{
	SKIP_IF_UNCHECKED_FREE();
	for (int i = 0; i < NR_SIZES; i++) {
		struct kmem_cache *s = kmem_cache_create("rel-slab", sizes[i], 0, SLAB_NO_MERGE, NULL);
		enum { N = 3000 };
		static char *o[N];
		for (int k = 0; k < N; k++)
			o[k] = kmem_cache_alloc(s, GFP_KERNEL);
		/* o[0] and o[1] are in the first slab, long since not the CPU's. */
		CHECK(virt_to_slab(o[0]) != virt_to_slab(o[N - 1]));
		kmem_cache_free(s, o[0]);
		kmem_cache_free(s, o[1]);
		kmem_cache_free(s, o[N - 1]);
		EXPECT_REPORT(kmem_cache_free(s, o[0]), "double free");
		EXPECT_REPORT(kmem_cache_free(s, o[N - 1]), "double free");
		CHECK_EQ(slab_validate_cache(s), 0);
		for (int k = 2; k < N - 1; k++)
			kmem_cache_free(s, o[k]);
		CHECK_EQ(slab_validate_cache(s), 0);
		/* Everything went back exactly once: the cache empties. */
		CHECK_EQ(kmem_cache_shrink(s), 0);
		kmem_cache_destroy(s);
	}
}

/* ---- two threads: the second free on another CPU ------------------------------- */

struct remote {
	struct kmem_cache *s;
	size_t kmalloc_size;	/* kmalloc if nonzero */
	int cpu;
	char *p, *q;
	bool cpu_list;		/* the first free on the allocating CPU */
};

static void *remote_alloc(struct remote *r)
{
	return r->kmalloc_size ? kmalloc(r->kmalloc_size, GFP_KERNEL) :
				 kmem_cache_alloc(r->s, GFP_KERNEL);
}

static void remote_free(struct remote *r, void *p)
{
	if (r->kmalloc_size)
		kfree(p);
	else
		kmem_cache_free(r->s, p);
}

static void *second_cpu(void *arg)
{
	struct remote *r = arg;
	pin_to_cpu(r->cpu);
	if (!r->cpu_list) {
		remote_free(r, r->p);	/* to the slab's own list: a remote free */
		remote_free(r, r->q);
	}
	EXPECT_REPORT(remote_free(r, r->p), "double free");
	return NULL;
}

static void double_free_from_another_cpu(void)
{
	SKIP_IF_UNCHECKED_FREE();
	cpu_set_t mine;
	if (sched_getaffinity(0, sizeof(mine), &mine) || CPU_COUNT(&mine) < 2) {
		fprintf(stderr, "   (needs two CPUs)\n");
		return;
	}
	int a = -1, b = -1;
	for (int c = 0; c < CPU_SETSIZE && b < 0; c++)
		if (CPU_ISSET(c, &mine))
			*(a < 0 ? &a : &b) = c;
	for (int i = 0; i < NR_SIZES * 2; i++) {
		for (int cpu_list = 0; cpu_list < 2; cpu_list++) {
			struct remote r = { .cpu = b, .cpu_list = cpu_list };
			if (i < NR_SIZES)
				r.s = kmem_cache_create("rel-remote", sizes[i], 0, SLAB_NO_MERGE, NULL);
			else
				r.kmalloc_size = sizes[i - NR_SIZES];
			pin_to_cpu(a);
			r.p = remote_alloc(&r);
			r.q = remote_alloc(&r);
			if (cpu_list) {
				/* On CPU a's lockless freelist, which the other thread must not walk. */
				remote_free(&r, r.p);
				remote_free(&r, r.q);
			}
			pthread_t t;
			pthread_create(&t, NULL, second_cpu, &r);
			pthread_join(t, NULL);
			four_distinct(r.s ? cache_alloc : kmalloc_50ish,
				      r.s ? (void *)r.s : (void *)(uintptr_t)r.kmalloc_size,
				      r.s ? cache_release : kmalloc_release);
			struct kmem_cache *s = r.s ? r.s : cache_of(r.q);
			CHECK_EQ(slab_validate_cache(s), 0);
			if (r.s)
				kmem_cache_destroy(r.s);
		}
	}
	sched_setaffinity(0, sizeof(mine), &mine);
}

/* ---- a free pointer written after the free -------------------------------------- */

static const uintptr_t garbage[] = {
	0x4141414141414141UL,	/* text */
	1,			/* a small integer */
	0,			/* a cleared field */
	~0UL,			/* -1 */
	0x00007f0000001000UL,	/* a pointer, unmapped */
};

/*
 * Free @depth + 3 objects of a new cache (so all of its cpu slab), overwrite
 * the free pointer of the one @depth deep in the CPU's freelist, then
 * allocate until it would be followed, or flush the CPU's freelist: one
 * report, the objects handed out are distinct, the cache validates.  The
 * cache is not destroyed: the objects after the cut are lost for good, and
 * a destroy would list them.
 */
static void corrupt_one(unsigned int size, bool ctor, int depth, uintptr_t bad, bool shrink)
{
	struct kmem_cache *s = kmem_cache_create("rel-corrupt", size, 0, SLAB_NO_MERGE,
						 ctor ? ctor_fill : NULL);
	enum { N = 8 };
	char *o[N];
	for (int k = 0; k < depth + 3; k++)
		o[k] = kmem_cache_alloc(s, GFP_KERNEL);
	for (int k = depth + 2; k >= 0; k--)
		kmem_cache_free(s, o[k]);	/* freelist: o[0], o[1], ... */
	char *victim = o[depth];
	uintptr_t pointed = (uintptr_t)&victim;	/* a pointer to the stack */
	*(uintptr_t *)(victim + s->offset) = bad ? bad : pointed;
	unsigned long before = slub_errors();
	if (shrink) {
		/* Flushing the CPU freelist walks it. */
		kmem_cache_shrink(s);
	} else {
		char *got[N];
		for (int k = 0; k <= depth + 2; k++) {
			got[k] = kmem_cache_alloc(s, GFP_KERNEL);
			CHECK(got[k] != NULL);
			for (int j = 0; j < k; j++)
				CHECK(got[k] != got[j]);
		}
		for (int k = 0; k <= depth + 2; k++)
			kmem_cache_free(s, got[k]);
	}
	CHECK_EQ(slub_errors(), before + 1);
	CHECK(last_report_has("free pointer"));
	CHECK_EQ(slab_validate_cache(s), 0);
}

/*
 * Keep this thread on the CPU it runs on, and make that CPU's slot the one
 * its fast paths use (the cmpxchg16b mode's is the slot a slow path last
 * asked for: a new cache's first allocation asks).  Moved to another CPU
 * between a free and the allocations after it, a thread no longer pops the
 * freelist it corrupted, and the report the tests wait for comes later.
 */
static void stay_on_this_cpu(cpu_set_t *old)
{
	CHECK_EQ(pin_to_this_cpu(old), 0);
	struct kmem_cache *s = kmem_cache_create("rel-ask-cpu", 64, 0, SLAB_NO_MERGE, NULL);
	kmem_cache_free(s, kmem_cache_alloc(s, GFP_KERNEL));
	kmem_cache_destroy(s);
}

static void corrupt_free_pointer(void)
{
	cpu_set_t old;
	stay_on_this_cpu(&old);
	for (int i = 0; i < NR_SIZES; i++) {
		for (int ctor = 0; ctor < 2; ctor++) {
			if (ctor && sizes[i] < 24)
				continue;
			for (size_t g = 0; g < sizeof(garbage) / sizeof(garbage[0]); g++)
				for (int depth = 0; depth < 3; depth++)
					for (int shrink = 0; shrink < 2; shrink++)
						corrupt_one(sizes[i], ctor, depth, garbage[g], shrink);
		}
	}
	sched_setaffinity(0, sizeof(old), &old);
}

/* kmalloc: the same, through kmalloc and kfree. */
static void corrupt_free_pointer_kmalloc(void)
{
	static const size_t ksizes[] = { 8, 16, 64, 4096 };
	cpu_set_t old;
	stay_on_this_cpu(&old);
	for (size_t i = 0; i < sizeof(ksizes) / sizeof(ksizes[0]); i++) {
		char *p = kmalloc(ksizes[i], GFP_KERNEL), *q = kmalloc(ksizes[i], GFP_KERNEL);
		struct kmem_cache *s = cache_of(p);
		kfree(q);
		kfree(p);
		*(uintptr_t *)(p + s->offset) = 0x4242424242424242UL;
		unsigned long before = slub_errors();
		char *a = kmalloc(ksizes[i], GFP_KERNEL);
		char *b = kmalloc(ksizes[i], GFP_KERNEL);
		char *c = kmalloc(ksizes[i], GFP_KERNEL);
		CHECK(a && b && c && a != b && b != c && a != c);
		CHECK_EQ(slub_errors(), before + 1);
		CHECK(last_report_has("free pointer"));
		kfree(a);
		kfree(b);
		kfree(c);
		CHECK_EQ(slab_validate_cache(s), 0);
	}
	sched_setaffinity(0, sizeof(old), &old);
}

/*
 * A free pointer on a slab's own freelist (a remote free, or a slab that
 * is not the CPU's): found when that freelist is taken and used.
 */
static void corrupt_free_pointer_on_slab_freelist(void)
{
	struct kmem_cache *s = kmem_cache_create("rel-corrupt-slab", 64, 0, SLAB_NO_MERGE, NULL);
	enum { N = 2000 };
	static char *o[N];
	for (int k = 0; k < N; k++)
		o[k] = kmem_cache_alloc(s, GFP_KERNEL);
	/* Free the first slab's first three objects: its freelist o[2], o[1], o[0]. */
	kmem_cache_free(s, o[0]);
	kmem_cache_free(s, o[1]);
	kmem_cache_free(s, o[2]);
	*(uintptr_t *)(o[1] + s->offset) = 0x4343434343434343UL;
	unsigned long before = slub_errors();
	for (int k = 3; k < N; k++)
		kmem_cache_free(s, o[k]);
	/* Allocate everything again: the first slab's freelist is used on the way. */
	for (int k = 0; k < N; k++)
		o[k] = kmem_cache_alloc(s, GFP_KERNEL);
	for (int k = 0; k < N; k++)
		kmem_cache_free(s, o[k]);
	kmem_cache_shrink(s);
	CHECK_EQ(slub_errors(), before + 1);
	CHECK(last_report_has("free pointer"));
	CHECK_EQ(slab_validate_cache(s), 0);
	kmem_cache_destroy(s);
}

/* ---- no false report ----------------------------------------------------------------- */

/*
 * Program data that looks like an encoded free pointer (the key's tag in
 * the free pointer's word) costs a walk, never a report.
 */
static void data_like_a_free_pointer(void)
{
	for (int i = 0; i < NR_SIZES; i++) {
		struct kmem_cache *s = kmem_cache_create("rel-data", sizes[i], 0, SLAB_NO_MERGE, NULL);
		unsigned long before = slub_errors();
		char *other = kmem_cache_alloc(s, GFP_KERNEL);
		for (int k = 0; k < 100; k++) {
			char *p = kmem_cache_alloc(s, GFP_KERNEL);
			uintptr_t w = slab_fp_key ^ (k & 1 ? (uintptr_t)other : 0);
			*(uintptr_t *)(p + s->offset) = w;
			kmem_cache_free(s, p);
		}
		kmem_cache_free(s, other);
		CHECK_EQ(slub_errors(), before);
		CHECK_EQ(slab_validate_cache(s), 0);
		CHECK_EQ(kmem_cache_shrink(s), 0);
		kmem_cache_destroy(s);
	}
}

static uint64_t rng_next(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

struct churn {
	struct kmem_cache *caches[NR_SIZES];
	void *_Atomic handover[256];	/* what one thread allocates, the other frees */
	long rounds;
};

struct churn_thread_arg {
	struct churn *c;
	uint64_t seed;
};

static void fill(void *p, size_t size, uint64_t v)
{
	/* Data a program writes: integers, pointers, -1, random bits, text. */
	uint64_t word[5] = { v & 0xffff, (uintptr_t)p, ~0UL, v * 0x9e3779b97f4a7c15ULL,
			     0x6f6c6c6568UL };
	if (size < 8) {
		memset(p, (int)v, size);
		return;
	}
	for (size_t off = 0; off + 8 <= size && off < 512; off += 8)
		memcpy((char *)p + off, &word[(off / 8 + v) % 5], 8);
}

static void churn_release(struct churn *c, int kind, void *p)
{
	if (kind < NR_SIZES)
		kmem_cache_free(c->caches[kind], p);
	else
		kfree(p);
}

static void *churn_thread(void *arg)
{
	struct churn_thread_arg *a = arg;
	struct churn *c = a->c;
	enum { LIVE = 512 };
	void *live[LIVE] = { 0 };
	int kind[LIVE];
	uint64_t x = a->seed;
	for (long r = 0; r < c->rounds; r++) {
		uint64_t v = rng_next(&x);
		int slot = (int)(v % LIVE), k = (int)((v >> 20) % (NR_SIZES + 1));
		if (live[slot]) {
			churn_release(c, kind[slot], live[slot]);
			live[slot] = NULL;
		}
		if ((v >> 40) % 4 == 0) {
			size_t size = 1 + (v >> 8) % 300;
			void *p = kmalloc(size, GFP_KERNEL);
			fill(p, size, v);
			kfree(atomic_exchange(&c->handover[(v >> 48) % 256], p));
			continue;
		}
		size_t size = k < NR_SIZES ? sizes[k] : 1 + (v >> 8) % 2000;
		live[slot] = k < NR_SIZES ? kmem_cache_alloc(c->caches[k], GFP_KERNEL) :
					    kmalloc(size, GFP_KERNEL);
		kind[slot] = k;
		fill(live[slot], size, v);
	}
	for (int slot = 0; slot < LIVE; slot++)
		if (live[slot])
			churn_release(c, kind[slot], live[slot]);
	return NULL;
}

/* A long random run of two threads, with data of every kind in the objects. */
static void no_false_report(void)
{
	static struct churn c;
	for (int i = 0; i < NR_SIZES; i++)
		c.caches[i] = kmem_cache_create("rel-churn", sizes[i], 0, SLAB_NO_MERGE, NULL);
	c.rounds = UNDER_TSAN ? 100000 : 1000000;
	unsigned long before = slub_errors();
	pthread_t t[2];
	struct churn_thread_arg a[2] = { { &c, 0x1234567 }, { &c, 0x7654321 } };
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, churn_thread, &a[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < 256; i++)
		kfree(atomic_exchange(&c.handover[i], NULL));
	CHECK_EQ(slub_errors(), before);
	for (int i = 0; i < NR_SIZES; i++) {
		CHECK_EQ(slab_validate_cache(c.caches[i]), 0);
		CHECK_EQ(kmem_cache_shrink(c.caches[i]), 0);
		kmem_cache_destroy(c.caches[i]);
	}
}

/* With an argument, only the tests whose names contain it (to see each fail alone). */
#define RUN_IF(fn)                                                               \
	do {                                                                     \
		if (!only || strstr(#fn, only))                                  \
			RUN(fn);                                                 \
	} while (0)

int main(int argc, char **argv)
{
	const char *only = argc > 1 ? argv[1] : NULL;
	RUN_IF(interleaved_double_free_caches);
	RUN_IF(interleaved_double_free_kmalloc);
	RUN_IF(double_free_on_slab_freelist);
	RUN_IF(double_free_from_another_cpu);
	RUN_IF(corrupt_free_pointer);
	RUN_IF(corrupt_free_pointer_kmalloc);
	RUN_IF(corrupt_free_pointer_on_slab_freelist);
	RUN_IF(data_like_a_free_pointer);
	RUN_IF(no_false_report);
	return check_done();
}
