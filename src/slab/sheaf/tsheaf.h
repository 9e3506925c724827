/* SPDX-License-Identifier: MIT */
/*
 * tsheaf.h - thread sheaves: a per-thread cache of free objects for the
 * malloc library's size classes, used only when the process has no rseq
 * (valgrind, slub_rseq=0, kernels before 4.18, TSan builds).
 *
 * Without rseq a per-CPU array cannot be popped or pushed without a lock,
 * and the cmpxchg16b protocol costs two locked instructions a pair; a
 * thread's own array needs neither.  Each thread that allocates gets a
 * block with one small sheaf (count, room, array) per eligible cache, at
 * the byte offset s->tsheaf_off; offset 0 is a sheaf whose room is always
 * 0, so a cache without one, and a thread without a block (tsheaf_self
 * points to a shared all-zero block), miss at the first compare and take
 * the cmpxchg16b paths.  The pop and push are inline in slub.c's
 * out-of-line finish paths: the rseq fast paths are not touched.
 *
 * An empty sheaf is refilled with half its room from the node's partial
 * slabs (slab_refill_bulk); a full one gives its oldest half back to the
 * slabs (slab_free_bulk).  Only the owner changes its sheaves; other
 * threads read them (figures, the double-free check) with relaxed loads.
 * A thread's sheaves are flushed when it exits (a pthread key destructor),
 * by kmem_cache_shrink and malloc_trim for the calling thread, and in a
 * forked child for the threads that did not come along.
 *
 * Memory bound: threads x eligible caches x room objects, room being
 * TSHEAF_CAPACITY, less for objects above 1 KiB (32 KiB of objects per
 * sheaf at most), plus one block of TSHEAF_BLOCK_SIZE per thread.
 *
 * Not async-signal-safe: a signal handler that allocates on a thread
 * interrupted inside its own pop or push may hand out an object twice (as
 * with glibc's tcache).  With rseq the fast paths are safe; thread sheaves
 * run only without it.
 */
#ifndef SLUB_TSHEAF_H
#define SLUB_TSHEAF_H

#include <stdint.h>

#include <slub.h>
#include "base/compiler.h"

#define TSHEAF_CAPACITY 32	/* objects per thread sheaf at most */
#define TSHEAF_ROOM_BYTES (32u << 10)	/* and at most this many bytes of objects */
#define TSHEAF_CACHES 64	/* sheaves per thread: [0] is none, so 63 caches */

struct tsheaf {
	unsigned int size;	/* objects[0 .. size) are parked */
	unsigned int room;	/* 0 until the thread's first slow path on this cache */
	void *objects[TSHEAF_CAPACITY];
};

struct thread_sheaves {
	struct tsheaf sheaf[TSHEAF_CACHES];
	struct thread_sheaves *next;	/* all blocks with an owner, or the free ones */
	struct thread_sheaves **pprev;
};

/* This thread's block; a shared all-zero one (no room anywhere) before its first. */
extern __hidden __thread struct thread_sheaves *tsheaf_self
	__attribute__((tls_model("initial-exec")));

struct kmem_cache;
struct slab;

static inline struct tsheaf *tsheaf_at(struct thread_sheaves *t, unsigned int off)
{
	return (struct tsheaf *)((char *)t + off);
}

/* A new count: relaxed for the owner, readable by others (figures, double frees). */
static inline void tsheaf_set_size(struct tsheaf *sh, unsigned int size)
{
	__atomic_store_n(&sh->size, size, __ATOMIC_RELEASE);
}

/*
 * Readers load the slots below the count they read (acquire) relaxed; a
 * plain store here saves an instruction (GCC indexes an atomic one
 * worse), and only TSan would tell the difference.
 */
static inline void tsheaf_set_object(struct tsheaf *sh, unsigned long i, void *object)
{
#ifdef SLUB_TSAN
	__atomic_store_n(&sh->objects[i], object, __ATOMIC_RELAXED);
#else
	sh->objects[i] = object;
#endif
}

/* Are thread sheaves in use in this process (slub_percpu_mode, the exit table)? */
__hidden bool tsheaf_enabled(void);
/* Give @s its sheaf offset, or 0 (kmem_cache_open, debug flags switched). */
__hidden void tsheaf_setup(struct kmem_cache *s);
/*
 * The slow paths, @s having a sheaf offset: an object (the sheaf was
 * empty: refilled), or NULL for the cmpxchg16b paths (no block: thread
 * exiting, no memory; or no slab could be made).  tsheaf_free parks
 * @object (its sheaf full: after flushing half), reports a double free,
 * or, in a thread without a block, frees it to its slab.
 */
__hidden void *tsheaf_alloc(struct kmem_cache *s, gfp_t gfp, int node);
__hidden void tsheaf_free(struct kmem_cache *s, struct slab *slab, void *object);
/* The calling thread's sheaf of @s, back to the slabs (flush_all: shrink, trim). */
__hidden void tsheaf_flush_self(struct kmem_cache *s);
/* Objects of @s in every thread's sheaf (a snapshot). */
__hidden unsigned long tsheaf_parked(struct kmem_cache *s);
/* Is @object in a thread's sheaf of @s?  (object_is_free, under the list lock.) */
__hidden bool tsheaf_holds(struct kmem_cache *s, const void *object);
/* fork(): the list lock; the child flushes the blocks of threads it has not. */
__hidden void tsheaf_fork_lock(bool lock);
__hidden void tsheaf_fork_child(void);
/* Blocks with an owner (tests). */
__hidden unsigned long tsheaf_threads(void);

#endif
