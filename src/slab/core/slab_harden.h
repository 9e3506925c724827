/* SPDX-License-Identifier: MIT */
/*
 * slab_harden.h - the kernel's hardening options on slab objects:
 * init_on_alloc, init_on_free (slab_harden.c) and slab_freelist_random
 * (slab_random.c), and the switch that sends a process's allocations and
 * frees through the out-of-line hooks that serve them (and failslab and
 * KFENCE) while the rseq fast paths carry no test of any of them.
 *
 * How they stay off the fast paths: with any hook on, start-up chooses
 * the cmpxchg16b mode (slab_common.c), whose inline sequences give up at
 * once, so every allocation reaches slab_alloc_finish() without an object
 * and every free reaches free_finish() (slub.c); each tests one flag there,
 * in a place that already tested a flag of its own before.  KFENCE by the
 * clock alone keeps the mode, and diverts allocations only while a sample
 * is due (slab_alloc_divert(), kfence.h).
 */
#ifndef SLUB_SLAB_HARDEN_H
#define SLUB_SLAB_HARDEN_H

#include "slab/core/slab.h"

/*
 * Allocations take the hooked path: failslab, init_on_alloc or KFENCE's
 * sample_every is on, or a KFENCE sample is due.  Read with data_race():
 * KFENCE's gate sets it while others allocate.
 */
extern __hidden bool slab_alloc_hooked;
/*
 * Every allocation to the hooked path (@on), until one is sampled, or
 * back: the rseq sequences are given cmpxchg16b mode's parked area, where
 * they give up at once, and slab_alloc_finish() sees slab_alloc_hooked.
 * No test on the fast paths: they read both words anyway (slub.c).
 */
__hidden void slab_alloc_divert(bool on);
/*
 * Frees skip the cpu freelist for __slab_free(): rseq mode, or a free hook
 * (init_on_free).  One flag, so the cmpxchg16b mode's free tests no more.
 */
extern __hidden bool slab_free_direct;
extern __hidden bool slab_free_hooked;
/* The options, read once at start-up. */
extern __hidden bool slub_init_on_alloc, slub_init_on_free, slub_freelist_random;

/* Decide the flags from the options, before the per-CPU mode is chosen (slab_common.c). */
__hidden void slab_hooks_setup(void);

/*
 * The kernel's slab_want_init_on_alloc(): a constructor's state is never
 * wiped; an RCU or poisoned (P) cache is zeroed only when asked, since a
 * reader may still look at the old object, or the poison is the check.
 */
static inline bool slab_want_init_on_alloc(gfp_t gfp, const struct kmem_cache *s)
{
	if (!(gfp & __GFP_ZERO) && slub_init_on_alloc && !s->ctor &&
	    !(READ_ONCE(s->flags) & (SLAB_TYPESAFE_BY_RCU | SLAB_POISON)))
		return true;
	return gfp & __GFP_ZERO;
}

/* The kernel's slab_want_init_on_free(): the same exemptions, and no __GFP_ZERO to ask. */
static inline bool slab_want_init_on_free(const struct kmem_cache *s)
{
	return slub_init_on_free && !s->ctor &&
	       !(READ_ONCE(s->flags) & (SLAB_TYPESAFE_BY_RCU | SLAB_POISON));
}

/* init_on_free's wipe of @object, its free pointer word left for the free's checks. */
__hidden void slab_free_hook(struct kmem_cache *s, void *object);

/*
 * slab_freelist_random (slab_random.c): link objects [0, @objects) of a new
 * slab at @start in the cache's random order; returns the first, or NULL
 * if the cache has no sequence for that many (then the caller links in order).
 */
__hidden void *slab_shuffle_freelist(struct kmem_cache *s, void *start, unsigned int objects);
/* The cache's random sequence goes with it. */
__hidden void slab_random_release(struct kmem_cache *s);

#endif
