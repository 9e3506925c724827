/* SPDX-License-Identifier: MIT */
/*
 * rcu.h - RCU for the slab layer: liburcu, loaded at the first RCU use
 * (rcu.c), and what waits for its grace periods (kvfree_rcu.c): kfree_rcu's
 * batches, the slabs of SLAB_TYPESAFE_BY_RCU caches, the debug frees of
 * such caches that poison.
 *
 * Nothing here runs for a program that never uses RCU: no library loaded,
 * no thread, no memory.  The first use is one of kmem_cache_create() of a
 * SLAB_TYPESAFE_BY_RCU cache, kvfree_call_rcu() (kfree_rcu and its
 * kin), kvfree_rcu_barrier(): a program's call, outside every allocator lock.
 * Loading starts liburcu's call_rcu thread there and then, so that no
 * later call_rcu() (from discard_slab, under slab locks) makes a thread.
 *
 * Lock order: rcu_load_lock, then the kfree_rcu shards' locks (krc), then
 * the slab locks (slab.h).  call_rcu() itself takes none of ours.
 */
#ifndef SLUB_SLAB_RCU_H
#define SLUB_SLAB_RCU_H

#include <slub.h>
#include "base/compiler.h"

struct kmem_cache;
struct slab;

/* Load liburcu if not done: true once its functions are there. */
__hidden bool slab_rcu_load(void);
/* Loaded already?  (No attempt.)  One load, for paths that must not load. */
__hidden bool slab_rcu_loaded(void);
/* liburcu's, of the flavour built for; slab_rcu_load() must have said true. */
__hidden void slab_call_rcu(struct rcu_head *head, void (*func)(struct rcu_head *head));
__hidden void slab_rcu_barrier(void);
__hidden void slab_synchronize_rcu(void);
/* call_rcu() calls made so far (tests: kfree_rcu batches). */
extern __hidden unsigned long slab_rcu_calls;

/*
 * fork(): liburcu's call_rcu thread paused and its registry locked before
 * the slab locks are taken (its callbacks free into slabs), resumed after.
 * One call each from slab_fork_prepare/parent/child; nothing if not loaded.
 */
__hidden void slab_rcu_fork(int phase);
enum { SLAB_RCU_FORK_PREPARE, SLAB_RCU_FORK_PARENT, SLAB_RCU_FORK_CHILD };

/*
 * A SLAB_TYPESAFE_BY_RCU slab leaving its cache (discard_slab, after the
 * counts and the descriptors' slab fields): its pages go back to the page
 * allocator after a grace period, mapped and untouched until then.
 */
__hidden void slab_rcu_free_slab(struct kmem_cache *s, struct slab *slab);
/*
 * A debug free of a SLAB_TYPESAFE_BY_RCU cache that poisons: queued for
 * after a grace period (true), as the kernel's CONFIG_SLUB_RCU_DEBUG; false:
 * no room to queue it, free it now without waiting.
 */
__hidden bool slab_rcu_defer_debug_free(struct kmem_cache *s, void *object);
/*
 * kmem_cache_destroy(): what RCU still holds of @s comes back first
 * (kvfree_rcu_barrier, rcu_barrier); called with no lock held.
 */
__hidden void slab_rcu_cache_quiesce(struct kmem_cache *s);
/*
 * After @s left the cache list: its RCU-deferred slabs gone too
 * (rcu_barrier); false (reported) if they would not go.
 */
__hidden bool slab_rcu_cache_release(struct kmem_cache *s);

/* The kfree_rcu shards' locks across fork (kvfree_rcu.c; slab_rcu_fork's order). */
__hidden void krc_fork_lock(bool lock);
__hidden void krc_fork_child(void);

/*
 * ThreadSanitizer sees none of liburcu's ordering (it is not instrumented):
 * a callback acquires what its call_rcu() released, and every reader's
 * rcu_read_unlock() that a grace period waited for.  A TSan build's test
 * releases slab_rcu_tsan_token just before each rcu_read_unlock() (after
 * it, the grace period may end and a callback run first); every callback
 * of ours acquires it first.  No code in other builds.
 */
#ifdef SLUB_TSAN		/* base/compiler.h */
#define SLAB_RCU_TSAN 1
#endif
#ifdef SLAB_RCU_TSAN
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
extern __hidden char slab_rcu_tsan_token;
static inline void rcu_tsan_release(void *p)
{
	__tsan_release(p);
}
static inline void rcu_tsan_callback(void *p)
{
	__tsan_acquire(&slab_rcu_tsan_token);
	__tsan_acquire(p);
}
#else
static inline void rcu_tsan_release(void *p)
{
	(void)p;
}
static inline void rcu_tsan_callback(void *p)
{
	(void)p;
}
#endif

#endif
