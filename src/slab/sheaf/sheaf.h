/* SPDX-License-Identifier: MIT */
/*
 * sheaf.h - sheaves, the kernel's per-CPU design since Linux 7.0, beside the
 * seeds' unqueued per-CPU slabs (slab.h).  A cache uses one or the other.
 *
 * Glossary
 *   sheaf       an array of pointers to free objects and their count.
 *   main        the sheaf a CPU allocates from and frees to (the fast paths:
 *               one rseq sequence each, sheaf_rseq.h).
 *   spare       a second sheaf of the CPU, empty or full or in between,
 *               swapped with main when main runs empty or full.
 *   barn        per node: lists of full and of empty sheaves, each bounded
 *               (SHEAF_BARN_MAX), where CPUs trade sheaves.
 *   refill      objects into a sheaf in bulk from the node's partial slabs
 *               (a new slab when there are none).
 *   flush       a sheaf's objects back to their slabs in bulk, grouped by slab.
 *   parked      an object in a sheaf: allocated as its slab sees it, free as
 *               the program sees it; every figure subtracts them.
 *
 * A CPU's slot (struct kmem_cache_cpu) holds main's count and room (the
 * capacity, or 0) in one 8-byte word beside the main and spare pointers:
 * an untouched slot (all zero) has no room, so no fast path uses it, and a
 * lock holder *retires* the slot by setting that word to 0 (sheaf.c).  Only
 * the holder of the slot's lock changes main, spare or the room; the fast
 * paths change the count.  While a sheaf is main its own size field is
 * stale; a spare's or a barn's is exact.
 *
 * Memory bound: each cache holds at most 2 sheaves per CPU it was used on
 * and SHEAF_BARN_MAX full sheaves in each node's barn, so at most
 * (2 * CPUs + nodes * SHEAF_BARN_MAX) * sheaf_capacity objects parked, plus
 * the sheaves themselves: that many and nodes * SHEAF_BARN_MAX empty ones.
 *
 * Lock order: c->lock (slot) -> barn->lock -> n->list_lock (slab.h's 2, 2b, 3).
 * No sheaf is allocated or freed while a slot lock is held: the sheaves'
 * own caches ("sheaf-N") would take their slot locks, and a first use of a
 * CPU takes slab_cpus.lock, which object_is_free() holds around slot locks.
 */
#ifndef SLUB_SHEAF_H
#define SLUB_SHEAF_H

#include <pthread.h>

#include <slub.h>
#include "base/compiler.h"
#include "base/list.h"

#define SHEAF_CAPACITY_MAX 1024	/* objects per sheaf at most (slub_sheaves' range too) */
#define SHEAF_BARN_MAX 10		/* full sheaves a barn keeps, and empty ones */

struct slab_sheaf {
	struct list_head barn_list;	/* on the barn's full or empty list */
	unsigned int size;		/* objects, unless it is a CPU's main (the slot counts) */
	void *objects[];		/* [0, size) are parked objects */
};

struct node_barn {
	pthread_mutex_t lock;
	struct list_head sheaves_full;
	struct list_head sheaves_empty;
	unsigned int nr_full;
	unsigned int nr_empty;
};

struct kmem_cache;
struct slab;

/*
 * The cache of sheaves @s would use, made if need be (kmem_cache_open; no
 * lock held); without one (reported) @s has none.  Then sheaf_setup() gives @s sheaves
 * (and tells the fast paths) as its flags and the options say, or none: a
 * debug cache has none.  The debug switches call it again, every slot of
 * @s locked; turning sheaves off, they retire every slot first
 * (sheaf_retire_all) and give the sheaves back once unlocked.
 */
__hidden void sheaf_prepare(struct kmem_cache *s);
__hidden void sheaf_setup(struct kmem_cache *s);
__hidden void sheaf_retire_all(struct kmem_cache *s);
/* Give back every sheaf of @s, all of them flushed (destroy; debug switched on). */
__hidden void sheaf_teardown(struct kmem_cache *s);
/* fork(): the lock of the sheaves' own caches (after kmalloc's, before the cache list's). */
__hidden void sheaf_fork_lock(bool lock);
__hidden void sheaf_fork_child(void);
/* The slow paths (and the fast ones without rseq): an object, or NULL with errno set. */
__hidden void *sheaf_alloc(struct kmem_cache *s, gfp_t gfp, int node);
__hidden void sheaf_free(struct kmem_cache *s, struct slab *slab, void *object);
/* Flush the sheaves of @cpu's slot; of the barn (flush_all, shrink, the decay). */
__hidden void sheaf_flush_cpu(struct kmem_cache *s, unsigned int cpu);
__hidden void sheaf_flush_barn(struct kmem_cache *s);
/* Objects parked in @s's sheaves now (a snapshot: figures, tests). */
__hidden unsigned long sheaf_parked(struct kmem_cache *s);
/* The same per node, added to @nodes[nid] (a walk of every parked object). */
__hidden void sheaf_parked_nodes(struct kmem_cache *s, unsigned long *nodes);
/* Is @object parked in one of @s's sheaves?  Every slot lock of @s held (object_is_free). */
__hidden bool sheaf_holds(struct kmem_cache *s, void *object);
/* Check the sheaves of @s; the number of problems reported (slab_validate_cache). */
__hidden unsigned long sheaf_validate(struct kmem_cache *s);
/* Sheaves of @s in existence (the memory bound's test). */
__hidden unsigned long sheaf_count(struct kmem_cache *s);
/*
 * True where libslub-malloc.so's malloc layer defines it: there the kmalloc
 * caches are malloc's, and take slub_malloc_sheaves (weak: libslub.so has
 * none, and its kmalloc caches keep slub_sheaves alone).
 */
__attribute__((weak)) extern __hidden const bool slub_malloc_library;

#endif
