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
 *
 * With sample_every, every allocation goes there, to be counted.  By the
 * clock alone (sample_interval), the kernel's gate: once the interval has
 * passed, the next slow path to run (a refill, kfence_tick()) opens it,
 * diverting allocations to the hooked path (slab_alloc_divert()) until
 * one, in any thread and cache, is sampled and closes it again.  Between
 * samples the fast paths run as without KFENCE.  Unlike the kernel's
 * timer, a refill is needed to open the gate: a loop that allocates and
 * frees without ever refilling is not sampled until something does.
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

/* sample_every: every allocation must come to kfence_alloc() (slab_hooks_setup()). */
__hidden bool kfence_every_allocation(void);
/* Start-up: sample by the gate if KFENCE is on and allocations are not all @hooked. */
__hidden void kfence_gate_setup(bool hooked);

/* Sampling by the gate (see above); kfence_tick() from the allocation slow paths. */
extern __hidden bool kfence_timed;
__hidden void kfence_tick_slow(void);
static inline void kfence_tick(void)
{
	if (unlikely(kfence_timed))
		kfence_tick_slow();
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
/*
 * At exit (slab_exit.c): the slack of each object still allocated, which
 * no free will check (an overflow of a block never freed); how many.
 */
__hidden unsigned int kfence_validate_live(void);
/* A cache goes: its live pool objects are reported as left over, its freed ones forget it. */
__hidden void kfence_shutdown_cache(struct kmem_cache *s);

#endif
