/* SPDX-License-Identifier: MIT */
/*
 * kfence.h - KFENCE, the kernel's sampling guard-page detector
 * (mm/kfence/): a pool of objects, each alone on a page between two
 * inaccessible guard pages; a sample of slab allocations is served from
 * it (kfence.sample_every, kfence.sample_interval), and an access past an
 * object or to a freed one faults, and becomes a report (kfence.c).
 *
 * The pool lies outside the memory map, so the free paths' slab lookup
 * never finds a pool object: every kfree/free/kmem_cache_free of one falls
 * to the slow path that reports bad pointers, which asks is_kfence_address()
 * first (a range check).  Allocations reach kfence_alloc() through the
 * hooked slow path (slab_harden.h): nothing on the fast paths.
 */
#ifndef SLUB_KFENCE_H
#define SLUB_KFENCE_H

#include "slab/core/slab.h"

/* The pool's bounds; both 0 while KFENCE is off, so no address is in it. */
extern __hidden uintptr_t kfence_pool_start, kfence_pool_size;

static inline bool is_kfence_address(const void *p)
{
	return (uintptr_t)p - kfence_pool_start < kfence_pool_size;
}

/* KFENCE is on: its pool is mapped and its fault handler installed (start-up). */
static inline bool kfence_enabled(void)
{
	return kfence_pool_size != 0;
}

/*
 * A sampled allocation of @s, from the pool (zeroed for __GFP_ZERO,
 * constructed if @s has a constructor); NULL if this one is not sampled or
 * the pool is used up: the caller allocates as usual.
 */
__hidden void *kfence_alloc(struct kmem_cache *s, gfp_t gfp);
/*
 * Free @p, a pool address: reported as an invalid free unless it is an
 * allocated object's start; its slack is checked.  @s: the cache the
 * caller named (kmem_cache_free), or NULL.
 */
__hidden void kfence_free(const void *p, struct kmem_cache *s, const char *caller);
/* The object's size, or 0 (reported) if @p is not an allocated object's start. */
__hidden size_t kfence_ksize(const void *p, const char *caller);
/* A cache goes: its live pool objects are reported as left over, its freed ones forget it. */
__hidden void kfence_shutdown_cache(struct kmem_cache *s);

#endif
