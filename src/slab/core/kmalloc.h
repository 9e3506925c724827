/* SPDX-License-Identifier: MIT */
/*
 * kmalloc.h - what the kmalloc family shares with the malloc library:
 * the size classes, the fast lookup of a class's cache, and the checked
 * paths for pointers that may be anything.
 */
#ifndef SLUB_KMALLOC_H
#define SLUB_KMALLOC_H

#include "slab/core/slab.h"

#define KMALLOC_SHIFT_HIGH (PAGE_SHIFT + 1)	/* 8 KiB: the largest cache */
#define NR_KMALLOC_INDEX (KMALLOC_SHIFT_HIGH + 1)
/* Largest kmalloc at all: what the page allocator serves (order 30). */
#define KMALLOC_MAX_SIZE (PAGE_SIZE << 30)

enum kmalloc_type { KMALLOC_NORMAL, KMALLOC_DMA, NR_KMALLOC_TYPES };

extern __hidden struct kmem_cache *kmalloc_caches[NR_KMALLOC_TYPES][NR_KMALLOC_INDEX];

/*
 * The cache index of every size up to KMALLOC_MAX_CACHE_SIZE, by
 * (size - 1) / 8: one load on the fast path instead of a branch and a bit
 * scan.  Filled before the caches are published; 0 (no cache) until then.
 */
extern __hidden uint8_t kmalloc_fast_index[KMALLOC_MAX_CACHE_SIZE / 8];

/* The normal kmalloc cache for 1 <= @size <= KMALLOC_MAX_CACHE_SIZE, or NULL before start-up. */
static inline struct kmem_cache *kmalloc_cache_fast(size_t size)
{
	unsigned int index = __atomic_load_n(&kmalloc_fast_index[(size - 1) / 8], __ATOMIC_RELAXED);
	return __atomic_load_n(&kmalloc_caches[KMALLOC_NORMAL][index], __ATOMIC_ACQUIRE);
}

/*
 * What ksize() says of an object of @s: the bytes the caller may use.
 * Inline: malloc_usable_size() runs it on every call (Redis: twice per key
 * written).  Debugging needs the bytes after the object; metadata its own.
 */
static inline size_t slab_ksize(const struct kmem_cache *s)
{
	if (unlikely(s->flags & (SLAB_RED_ZONE | SLAB_POISON | __SLAB_KASAN)))
		return s->object_size;
	if (unlikely(s->flags & (SLAB_TYPESAFE_BY_RCU | SLAB_STORE_USER)))
		return s->inuse;
	return s->size;
}

/*
 * ksize() and kfree() for a pointer that may be NULL, ZERO_SIZE_PTR, a slab
 * object, a large kmalloc block or garbage (reported as @caller's; *ok false).
 */
__hidden size_t ksize_of(const void *p, const char *caller, bool *ok);
__hidden void kfree_checked(const void *p, const char *caller);
/*
 * A value no allocator hands out, reported as @caller's (true): a small
 * integer (below the first page; ZERO_SIZE_PTR too unless @zero_size_ok:
 * kmalloc(0) gives it, malloc(0) never does) or an address that is not
 * canonical.  ZERO_OR_NULL_PTR() used to take 1 to 16 silently.
 */
__hidden __cold bool wild_pointer_report(const void *p, const char *caller, bool zero_size_ok);
static inline bool wild_pointer(const void *p, const char *caller, bool zero_size_ok)
{
	uintptr_t a = (uintptr_t)p;
	if (likely(a - PAGE_SIZE < (1UL << 47) - PAGE_SIZE))	/* a page or more, canonical */
		return false;
	return wild_pointer_report(p, caller, zero_size_ok);
}
/*
 * The start of the slab object or large kmalloc block that @p points into
 * (its cache in *@sp, NULL for a large block), or NULL if @p is in neither.
 * Reports nothing: kvfree_rcu's callers compare the answer with @p.  The
 * block must stay allocated meanwhile.
 */
__hidden void *kmalloc_block_start(const void *p, struct kmem_cache **sp);

#endif
