// SPDX-License-Identifier: MIT
/*
 * malloc_classes.c - the malloc library's size classes (see malloc_classes.h).
 */
#define _GNU_SOURCE
#include "malloc/malloc_classes.h"

#include <pthread.h>

#include "base/options.h"
#include "slab/core/slab_common.h"
#include "slab/debug/slab_debug.h"
#include "base/report.h"

uint8_t malloc_class_index[MALLOC_MAX_CLASS_SIZE / 8];
/* The classes with slub_debug flags, kept out of malloc_class_cache (malloc_class_make). */
static struct kmem_cache *malloc_class_debug[NR_MALLOC_CLASSES];
struct kmem_cache *malloc_class_cache[NR_MALLOC_CLASSES];

/*
 * Above 2 KiB a class is what a slab divides into: (slab / n) rounded down
 * to 16 bytes, for n = 15 .. 8 objects of a 32 KiB slab (2176 .. 4096),
 * then of a 64 KiB one (4368 .. 8192).  Such a class leaves at most 16
 * bytes per object unused in its slab.  Even steps did not: 8 KiB / 8 steps
 * put 6656-byte objects four to a 32 KiB slab (8 KiB each), and sqlite's
 * page-cache entries (4104 and 4368 bytes) in 4608-byte objects seven to a
 * slab (4681 bytes each; now 4369).
 */
static unsigned int slab_divided_class(unsigned int k, unsigned int *slab_order)
{
	unsigned int slab = k < 8 ? 32768u : 65536u;
	*slab_order = k < 8 ? 3 : 4;
	return (slab / (15 - k % 8)) & ~15u;
}

/*
 * The size of class @i (1-based), or 0 past the last: 8, then steps of 16
 * to 128, four classes per doubling to 1024, eight per doubling to 2048,
 * then the slab-divided classes to 8192.  @slab_order: the slab order the
 * class is made for (0: the cache's own choice).
 */
static unsigned int class_size(unsigned int i, unsigned int *slab_order)
{
	*slab_order = 0;
	if (i == 1)
		return 8;
	if (i <= 9)
		return (i - 1) * 16;			/* 16 .. 128 */
	if (i <= 21) {
		unsigned int k = i - 10, base = 128u << (k / 4);
		return base + (k % 4 + 1) * (base / 4);	/* 160 .. 1024 */
	}
	if (i <= 29)
		return 1024 + (i - 21) * 128;		/* 1152 .. 2048 */
	if (i <= 45)
		return slab_divided_class(i - 30, slab_order);	/* 2176 .. 8192 */
	return 0;
}

static bool classes_ok;

/*
 * A process starts with kmalloc's classes only, up to 4 KiB, and a kmalloc
 * class is split into the finer classes under it once its slabs hold more
 * than slub_malloc_split pages.  A class costs a slab page or more however
 * few objects it has: a small process (bash, git) asks for two dozen sizes
 * a few times each, and fine classes cost it some 40 KiB, a tenth of its
 * heap.  A kmalloc class wastes a quarter of what it holds on spread sizes:
 * that pays for fine classes only once the class holds enough.  The split
 * is one way; objects already allocated stay where they are.  Sizes above
 * 4 KiB have their fine classes from the start: kmalloc-8k wastes up to
 * half of each object (sqlite's 4104-byte entries), and its 32 KiB slabs,
 * left behind by a split, sat among sqlite's buffers: its peak RSS was
 * 0.6 MB higher.
 */
static const unsigned short kmalloc_split_sizes[] = {
	8, 16, 32, 64, 96, 128, 192, 256, 512, 1024, 2048, 4096,
};
#define NR_SPLIT_SIZES (sizeof(kmalloc_split_sizes) / sizeof(kmalloc_split_sizes[0]))

static uint8_t fine_class_index[MALLOC_MAX_CLASS_SIZE / 8];	/* the index once split */
static uint8_t split_class[NR_SPLIT_SIZES];	/* class of each kmalloc size */
static unsigned int split_done;			/* bit k: kmalloc_split_sizes[k] is split */
static unsigned long split_pages;		/* slub_malloc_split, read once */

/* The smallest kmalloc class holding @size: its position in kmalloc_split_sizes, or -1. */
static int split_position(unsigned int size)
{
	for (unsigned int k = 0; k < NR_SPLIT_SIZES; k++)
		if (kmalloc_split_sizes[k] >= size)
			return (int)k;
	return -1;
}

/*
 * The index only: each class's cache is made at its first allocation
 * (malloc_class_make), so a process that never asks for 3264 bytes keeps
 * no cache, CPU slot or slab for it.  Making all of them at start-up cost
 * every short-lived process (git runs hundreds) some 40 caches.
 */
static void make_index(void)
{
	unsigned int i, order, size;
	if (!slab_ensure_init())
		return;		/* every small malloc fails with ENOMEM */
	static_assert(NR_MALLOC_CLASSES > 45, "class table too small");
	static_assert(NR_SPLIT_SIZES <= 8 * sizeof(split_done), "split bits");
	size_t b = 0;
	for (i = 1; (size = class_size(i, &order)); i++) {
		int k = split_position(size);
		if (k >= 0 && kmalloc_split_sizes[k] == size)
			split_class[k] = (uint8_t)i;
		for (; b < size / 8; b++)	/* sizes b*8+1 .. b*8+8 */
			fine_class_index[b] = (uint8_t)i;
	}
	pthread_mutex_lock(&options_lock);
	split_pages = (unsigned long)slub_opt(malloc_split);
	pthread_mutex_unlock(&options_lock);
	/* Each fine class's start-up class, found once per class, not per byte. */
	uint8_t fine = 0, start_class = 0;
	for (b = 0; b < MALLOC_MAX_CLASS_SIZE / 8; b++) {
		if (fine_class_index[b] != fine) {
			fine = start_class = fine_class_index[b];
			int k = split_position(class_size(fine, &order));
			if (split_pages && k >= 0 && split_class[k])
				start_class = split_class[k];	/* the kmalloc class over it, until split */
		}
		__atomic_store_n(&malloc_class_index[b], start_class, __ATOMIC_RELEASE);
	}
	/* Release: a hook that sees it sees the tables and split_pages too. */
	__atomic_store_n(&classes_ok, true, __ATOMIC_RELEASE);
}

void slub_malloc_slab_grown(struct kmem_cache *s, unsigned long total_pages)
{
	/* kmalloc callers reach here without make_index's pthread_once. */
	if (!__atomic_load_n(&classes_ok, __ATOMIC_ACQUIRE) || total_pages <= split_pages)
		return;
	int k = split_position(s->object_size);
	if (k < 0 || kmalloc_split_sizes[k] != s->object_size)
		return;
	unsigned int bit = 1u << k;
	if ((__atomic_load_n(&split_done, __ATOMIC_RELAXED) & bit) ||
	    __atomic_load_n(&malloc_class_cache[split_class[k]], __ATOMIC_RELAXED) != s)
		return;
	if (__atomic_fetch_or(&split_done, bit, __ATOMIC_RELAXED) & bit)
		return;
	/* Readers see the old class or the new one: both hold the sizes. */
	unsigned int from = k ? kmalloc_split_sizes[k - 1] / 8 : 0;
	for (unsigned int b = from; b < kmalloc_split_sizes[k] / 8u; b++)
		__atomic_store_n(&malloc_class_index[b], fine_class_index[b], __ATOMIC_RELEASE);
}

static struct kmem_cache *create_class(unsigned int i)
{
	unsigned int order, size = class_size(i, &order);
	struct kmem_cache *s = kmalloc_cache_fast(size);
	if (s && s->object_size == size)
		return s;	/* kmalloc's own cache of this size, shared */
	char name[SLUB_NAME_MAX];
	slab_cache_name(name, sizeof(name), "malloc", size);
	/* 16-byte alignment stated, not implied: debug layouts move objects. */
	s = __kmem_cache_create(name, size, size >= 16 ? 16 : 8, SLAB_KMALLOC, NULL, order);
	if (!s)
		slub_report("cannot create %s: out of memory", name);
	return s;
}

struct kmem_cache *malloc_class_make(size_t size)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, make_index);
	if (!classes_ok)
		return NULL;
	/* A split may rewrite the byte now: either class holds @size. */
	unsigned int i = __atomic_load_n(&malloc_class_index[(size - 1) / 8], __ATOMIC_RELAXED);
	struct kmem_cache *s = __atomic_load_n(&malloc_class_cache[i], __ATOMIC_ACQUIRE);
	if (s)
		return s;
	s = __atomic_load_n(&malloc_class_debug[i], __ATOMIC_ACQUIRE);
	if (s)
		return s;
	struct kmem_cache *made = create_class(i);
	if (!made)
		return NULL;
	/*
	 * A debug class is never published to malloc_cache_fast(): its sizes
	 * come here, by malloc_slow(), which passes each size on for the
	 * kmalloc red zone.
	 */
	if (kmem_cache_debug(made)) {
		if (__atomic_compare_exchange_n(&malloc_class_debug[i], &s, made, false,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			return made;
		if (made != s)
			slab_cache_put_own(made);
		return s;
	}
	/*
	 * Two threads may both make the class; the first to publish wins and
	 * the other's cache, empty, goes (no lock: nothing for fork to take).
	 */
	if (__atomic_compare_exchange_n(&malloc_class_cache[i], &s, made, false,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return made;
	if (made != s)		/* not kmalloc's cache, which both found */
		slab_cache_put_own(made);
	return s;
}
