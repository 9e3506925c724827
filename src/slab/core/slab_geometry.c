// SPDX-License-Identifier: MIT
/*
 * slab_geometry.c - where objects go in a slab and how big a slab is: the
 * kernel's calculate_alignment(), calculate_sizes() and calculate_order(),
 * plus min_partial and the cpu_partial rule.  Pure arithmetic on the cache.
 *
 * Object layout (offsets from the object's start, debug parts only with
 * their flags):
 *
 *   [red_left_pad][object_size][red zone][pad to word][free ptr?][tracks][orig size][red][pad to align]
 *                 ^ object     ^ object_size           ^ inuse when the free pointer is outside
 *
 * The free pointer sits in the middle of the object (a use after free of
 * the first words then does not break the freelist) unless the object must
 * stay intact while free: constructor, RCU, poisoning, small red-zoned ones.
 */
#define _GNU_SOURCE
#include "slab/core/slab.h"
#include "slab/debug/slab_kasan.h"

#include <errno.h>

#include "base/options.h"

unsigned int calculate_alignment(unsigned int flags, unsigned int align, unsigned int size)
{
	if (flags & SLAB_HWCACHE_ALIGN) {
		unsigned int ralign = CACHE_LINE_SIZE;
		/* Small objects share a line: halve the alignment while they fit. */
		while (size <= ralign / 2)
			ralign /= 2;
		if (ralign > align)
			align = ralign;
	}
	if (align < ARCH_SLAB_MINALIGN)
		align = ARCH_SLAB_MINALIGN;
	return (unsigned int)ALIGN_UP(align, sizeof(void *));
}

static unsigned int order_objects(unsigned int order, unsigned int size)
{
	return (unsigned int)((PAGE_SIZE << order) / size);
}

static struct kmem_cache_order_objects oo_make(unsigned int order, unsigned int size)
{
	return (struct kmem_cache_order_objects){ (order << OO_SHIFT) + order_objects(order, size) };
}

static unsigned int fls_uint(unsigned int x)
{
	return x ? 32 - (unsigned int)__builtin_clz(x) : 0;
}

/* Smallest order in [min_order, max_order] that wastes at most 1/fract. */
static unsigned int calc_slab_order(unsigned int size, unsigned int min_order,
				    unsigned int max_order, unsigned int fract_leftover)
{
	unsigned int order;
	for (order = min_order; order <= max_order; order++) {
		unsigned int slab_size = (unsigned int)PAGE_SIZE << order;
		if (slab_size % size <= slab_size / fract_leftover)
			break;
	}
	return order;
}

/* The default of slub_min_objects: grows with the number of CPUs. */
static unsigned int default_min_objects(void)
{
	unsigned int nr_cpus = os_possible_cpus();
	return 4 * (fls_uint(nr_cpus) + 1);
}

/* The smallest order a slab of one @size object can have. */
static unsigned int slab_min_order_for(unsigned int size)
{
	return (unsigned int)get_order(size);
}

int calculate_order(unsigned int size, unsigned int at_least_max_order)
{
	unsigned int min_order = (unsigned int)slub_opt(slub_min_order);
	unsigned int max_order = (unsigned int)slub_opt(slub_max_order);
	if (max_order < at_least_max_order)
		max_order = at_least_max_order;
	unsigned int min_objects = (unsigned int)slub_opt(slub_min_objects);
	unsigned int max_objects, order;

	if (!min_objects)
		min_objects = default_min_objects();
	if (max_order < min_order)
		max_order = min_order;
	/* Not more objects than max order can hold (and at least one). */
	max_objects = order_objects(max_order, size);
	if (max_objects < 1)
		max_objects = 1;
	if (min_objects > max_objects)
		min_objects = max_objects;

	unsigned int want = (unsigned int)get_order((unsigned long)min_objects * size);
	if (want > min_order)
		min_order = want;
	if (order_objects(min_order, size) > MAX_OBJS_PER_PAGE)
		return get_order((unsigned long)size * MAX_OBJS_PER_PAGE) - 1;

	/* Accept more waste step by step: 1/16, 1/8, 1/4, 1/2. */
	for (unsigned int fraction = 16; fraction > 1; fraction /= 2) {
		order = calc_slab_order(size, min_order, max_order, fraction);
		if (order <= max_order)
			return (int)order;
	}
	/* Larger than max order allows: a slab of the order one object needs. */
	order = slab_min_order_for(size);
	if (order <= MAX_PAGE_ORDER)
		return (int)order;
	return -1;
}

bool calculate_sizes(struct kmem_cache *s)
{
	unsigned int flags = s->flags;
	unsigned int size = (unsigned int)ALIGN_UP(s->object_size, sizeof(void *));

	/* A SLAB_TYPESAFE_BY_RCU object is poisoned after a grace period (rcu.h). */
	if ((flags & SLAB_POISON) && !s->ctor)
		s->flags |= __OBJECT_POISON;
	else
		s->flags &= ~__OBJECT_POISON;

	/* A word of red zone after the object if alignment left none. */
	if ((flags & SLAB_RED_ZONE) && size == s->object_size)
		size += sizeof(void *);

	/* KASAN's red zone: poisoned bytes after the object, wider for larger ones. */
	if (flags & __SLAB_KASAN)
		size = (unsigned int)ALIGN_UP(s->object_size + kasan_redzone(s->object_size),
					      sizeof(void *));

	s->inuse = size;

	bool kmalloc_orig_size = (flags & (SLAB_STORE_USER | __SLAB_KASAN)) && (flags & SLAB_KMALLOC);
	bool rcu_inside = (flags & SLAB_TYPESAFE_BY_RCU) && s->use_freeptr_offset;
	/* Under KASAN too: a use after free must not break the freelist (valgrind goes on). */
	if (((flags & SLAB_TYPESAFE_BY_RCU) && !rcu_inside) || (flags & SLAB_POISON) || s->ctor ||
	    (flags & __SLAB_KASAN) ||
	    ((flags & SLAB_RED_ZONE) && (s->object_size < sizeof(void *) || kmalloc_orig_size))) {
		/* The object must stay intact while free: pointer after it. */
		s->offset = size;
		size += sizeof(void *);
	} else if (rcu_inside) {
		/* The creator named a field RCU readers may find overwritten. */
		s->offset = s->freeptr_offset;
	} else {
		s->offset = (unsigned int)ALIGN_DOWN(s->object_size / 2, sizeof(void *));
	}

	if (flags & SLAB_STORE_USER)
		size += 2 * sizeof(struct track);
	if (kmalloc_orig_size)
		size += sizeof(unsigned int);

	/* Set either way: a debug switch lays a live cache out again (slab_set_debug). */
	s->red_left_pad = 0;
	if (flags & SLAB_RED_ZONE) {
		/* Right red zone word, and a left one padded to the alignment. */
		size += sizeof(void *);
		s->red_left_pad = (unsigned int)ALIGN_UP(sizeof(void *), s->align);
		size += s->red_left_pad;
	}

	size = (unsigned int)ALIGN_UP(size, s->align);
	s->size = size;
	s->reciprocal_size = UINT64_MAX / size + 1;	/* ceil(2^64 / size); size > 1 */

	int order = calculate_order(size, s->max_order);
	if (order < 0)
		return false;
	s->allocflags = 0;
	if (flags & SLAB_CACHE_DMA)
		s->allocflags |= GFP_DMA;
	if (flags & SLAB_CACHE_DMA32)
		s->allocflags |= GFP_DMA32;
	if (flags & SLAB_RECLAIM_ACCOUNT)
		s->allocflags |= __GFP_RECLAIMABLE;
	s->oo = oo_make((unsigned int)order, size);
	s->min = oo_make(slab_min_order_for(size), size);
	return oo_objects(s->oo) != 0;
}

void set_min_partial(struct kmem_cache *s)
{
	unsigned int min = fls_uint(s->size) - 1;	/* ilog2 */
	min /= 2;
	if (min < MIN_PARTIAL)
		min = MIN_PARTIAL;
	if (min > MAX_PARTIAL)
		min = MAX_PARTIAL;
	s->min_partial = min;
}

/*
 * Debug caches, caches with sheaves and slub_cpu_partial=0 keep no partial
 * slabs per CPU; nor those with thread sheaves, which refill from the
 * node's partial list: frees must land there.
 */
bool slab_no_cpu_partial(const struct kmem_cache *s)
{
	return !slub_opt(slub_cpu_partial) || (s->flags & SLAB_SLOW_FLAGS) || s->sheaf_capacity ||
	       s->tsheaf_off;
}

/* How many objects the per-CPU partial lists may hold: fewer for big objects. */
void set_cpu_partial(struct kmem_cache *s)
{
	unsigned int nr_objects;

	if (slab_no_cpu_partial(s))
		nr_objects = 0;
	else if (s->size >= PAGE_SIZE)
		nr_objects = 6;
	else if (s->size >= 1024)
		nr_objects = 24;
	else if (s->size >= 256)
		nr_objects = 52;
	else
		nr_objects = 120;
	slab_set_cpu_partial(s, nr_objects);
}

/* Also the cpu_partial attribute's write (which the kernel then follows with a flush). */
void slab_set_cpu_partial(struct kmem_cache *s, unsigned int nr_objects)
{
	WRITE_ONCE(s->cpu_partial, nr_objects);
	/* Assume half of each slab is free on average. */
	unsigned int per_slab = oo_objects(s->oo);
	WRITE_ONCE(s->cpu_partial_slabs,
		   nr_objects ? (nr_objects * 2 + per_slab - 1) / per_slab : 0);
}

/*
 * The order attribute's write: slabs made from now on have 2^@order pages;
 * those made before keep theirs (each slab knows its order and objects).
 * Within what the options allow, or what one object needs, as the kernel.
 */
int slab_set_order(struct kmem_cache *s, unsigned int order)
{
	unsigned int lo = (unsigned int)slub_opt(slub_min_order);
	unsigned int hi = (unsigned int)slub_opt(slub_max_order);
	if (hi < s->max_order)
		hi = s->max_order;
	if (hi < oo_order(s->min))
		hi = oo_order(s->min);	/* a big object's own order stays writable */
	if (order < lo || order > hi || order > MAX_PAGE_ORDER)
		return -EINVAL;
	unsigned int objects = order_objects(order, s->size);
	if (!objects || objects > MAX_OBJS_PER_PAGE)
		return -EINVAL;
	WRITE_ONCE(s->oo.x, oo_make(order, s->size).x);
	slab_set_cpu_partial(s, READ_ONCE(s->cpu_partial));
	return 0;
}
