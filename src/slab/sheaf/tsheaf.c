// SPDX-License-Identifier: MIT
/*
 * tsheaf.c - thread sheaves (tsheaf.h): the blocks, their slow paths, the
 * thread-exit flush, and what the rest of the engine asks of them.  The
 * pop and push that hit are in slub.c's slab_alloc_finish and
 * slab_free_finish.
 *
 * Blocks are mapped 16 at a time (fresh zero pages: a thread touches only
 * the pages of the sheaves it uses) and never unmapped: an exiting thread's
 * block, flushed, goes to a free list for the next thread.  The list lock
 * (tsheaf_lock) is taken alone, or in object_is_free() and the fork
 * handlers after the node's list lock (slab.h's 3b).
 */
#define _GNU_SOURCE
#include "slab/core/slab.h"
#include "slab/core/slab_common.h"
#include "slab/debug/slab_debug.h"
#include "slab/debug/kfence.h"
#include "slab/core/slab_harden.h"

#include <pthread.h>
#include <string.h>

#include "base/options.h"
#include "base/start.h"

#define TSHEAF_CHUNK 16		/* blocks mapped at once */

/* Every room 0: each pop and push of a thread without a block misses. */
static struct thread_sheaves tsheaf_none;
__thread struct thread_sheaves *tsheaf_self
	__attribute__((tls_model("initial-exec"))) = &tsheaf_none;

/* A thread's life with its block: MAKING guards the setup's own allocations. */
enum { TS_NONE, TS_MAKING, TS_LIVE, TS_DONE };
static __thread unsigned char tsheaf_state __attribute__((tls_model("initial-exec")));

static pthread_mutex_t tsheaf_lock = PTHREAD_MUTEX_INITIALIZER;
static struct thread_sheaves *live_blocks;	/* with an owner, by next/pprev */
static struct thread_sheaves *free_blocks;	/* flushed, by next */
static char *chunk_next;			/* unused blocks of the last chunk */
static unsigned int chunk_left;
/* The cache of each sheaf index; [0] is none.  Set under tsheaf_lock, never cleared. */
static struct kmem_cache *tsheaf_cache[TSHEAF_CACHES];
static unsigned int tsheaf_nr = 1;

static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static pthread_key_t tsheaf_key;
static bool key_made;

static_assert(sizeof(struct tsheaf) == 8 + 8 * TSHEAF_CAPACITY, "count, room, array");

bool tsheaf_enabled(void)
{
	/*
	 * Not with init_on_free: its wipe is in free_finish(), which a sheaf's
	 * push skips.  Not with more than one node: a thread's sheaf would keep
	 * any node's objects, which a free must send back to their node.
	 */
	return slub_opt(thread_sheaves) && !slub_percpu_rseq && !slab_free_hooked &&
	       nr_node_ids == 1 &&
	       &slub_malloc_library &&
	       slub_malloc_library;
}

/* Room of a sheaf of @s: TSHEAF_CAPACITY objects, TSHEAF_ROOM_BYTES of them at most. */
static unsigned int tsheaf_room(const struct kmem_cache *s)
{
	unsigned int room = TSHEAF_ROOM_BYTES / s->size;
	return room > TSHEAF_CAPACITY ? TSHEAF_CAPACITY : room < 2 ? 2 : room;
}

/*
 * malloc's caches (kmalloc's and the finer classes of libslub-malloc.so),
 * not a debug cache, not one on per-CPU sheaves, not the DMA ones.  Only
 * without rseq, which never comes back once gone (a fork child may lose
 * it): the finish paths take an offset to mean "no rseq".
 */
void tsheaf_setup(struct kmem_cache *s)
{
	unsigned int off = 0;
	if (tsheaf_enabled() && (s->flags & SLAB_KMALLOC) && !s->sheaf_capacity &&
	    !(s->flags & (SLAB_SLOW_FLAGS | SLAB_CACHE_DMA | SLAB_CACHE_DMA32))) {
		pthread_mutex_lock(&tsheaf_lock);
		unsigned int i = 1;
		while (i < tsheaf_nr && tsheaf_cache[i] != s)
			i++;
		if (i == tsheaf_nr && i < TSHEAF_CACHES) {
			tsheaf_cache[i] = s;
			__atomic_store_n(&tsheaf_nr, i + 1, __ATOMIC_RELEASE);	/* flush_block reads it unlocked */
		}
		pthread_mutex_unlock(&tsheaf_lock);
		if (i < TSHEAF_CACHES)
			off = (unsigned int)offsetof(struct thread_sheaves, sheaf[i]);
	}
	WRITE_ONCE(s->tsheaf_off, off);
}

/* ---- blocks ----------------------------------------------------------------------- */

static void tsheaf_exit(void *arg);

static void make_key(void)
{
	key_made = !pthread_key_create(&tsheaf_key, tsheaf_exit);
}

/* A flushed block (tsheaf_lock held), or NULL without memory. */
static struct thread_sheaves *take_block(void)
{
	struct thread_sheaves *t = free_blocks;
	if (t) {
		free_blocks = t->next;
		return t;
	}
	if (!chunk_left) {
		chunk_next = os_map_sparse(TSHEAF_CHUNK * sizeof(struct thread_sheaves));
		if (!chunk_next)
			return NULL;
		chunk_left = TSHEAF_CHUNK;
	}
	t = (struct thread_sheaves *)chunk_next;
	chunk_next += sizeof(struct thread_sheaves);
	chunk_left--;
	return t;
}

static void link_live(struct thread_sheaves *t)
{
	t->next = live_blocks;
	t->pprev = &live_blocks;
	if (live_blocks)
		live_blocks->pprev = &t->next;
	live_blocks = t;
}

/* Off the live list, onto the free one (tsheaf_lock held; @t flushed). */
static void retire_block(struct thread_sheaves *t)
{
	*t->pprev = t->next;
	if (t->next)
		t->next->pprev = t->pprev;
	t->next = free_blocks;
	free_blocks = t;
}

/*
 * This thread's block, made at its first slow path; NULL: none for it
 * (exiting, in the making (the pthread key's setup may calloc), or no
 * memory), and it takes the cmpxchg16b paths.
 */
static struct thread_sheaves *tsheaf_create(void)
{
	if (tsheaf_state != TS_NONE)
		return NULL;
	tsheaf_state = TS_MAKING;
	pthread_once(&key_once, make_key);
	pthread_mutex_lock(&tsheaf_lock);
	struct thread_sheaves *t = key_made ? take_block() : NULL;
	if (t)
		link_live(t);
	pthread_mutex_unlock(&tsheaf_lock);
	/* A key above the first 32 makes glibc calloc its second level: not from a sheaf. */
	if (t && pthread_setspecific(tsheaf_key, t)) {
		pthread_mutex_lock(&tsheaf_lock);
		retire_block(t);
		pthread_mutex_unlock(&tsheaf_lock);
		t = NULL;
	}
	if (!t) {
		tsheaf_state = TS_DONE;
		return NULL;
	}
	tsheaf_self = t;
	tsheaf_state = TS_LIVE;
	return t;
}

/* ---- flush ------------------------------------------------------------------------ */

/*
 * The oldest @n objects of @sh to their slabs: out of the sheaf first, so
 * that no object is both parked and on a slab's freelist for a reader.
 */
static void flush_oldest(struct kmem_cache *s, struct tsheaf *sh, unsigned int n)
{
	void *out[TSHEAF_CAPACITY];
	unsigned int size = sh->size;
	memcpy(out, sh->objects, n * sizeof(void *));
	for (unsigned int i = n; i < size; i++)
		tsheaf_set_object(sh, i - n, sh->objects[i]);
	tsheaf_set_size(sh, size - n);
	slab_free_bulk(s, out, n);
	stat(s, TSHEAF_FLUSH);
}

/* Every sheaf of @t (its owner, or a forked child for a thread it has not). */
static void flush_block(struct thread_sheaves *t)
{
	unsigned int nr = __atomic_load_n(&tsheaf_nr, __ATOMIC_ACQUIRE);
	for (unsigned int i = 1; i < nr; i++)
		if (t->sheaf[i].size)
			flush_oldest(tsheaf_cache[i], &t->sheaf[i], t->sheaf[i].size);
}

/* The key's destructor, on the exiting thread: what it holds goes back. */
static void tsheaf_exit(void *arg)
{
	struct thread_sheaves *t = arg;
	tsheaf_state = TS_DONE;	/* later destructors' allocations: cmpxchg16b */
	tsheaf_self = &tsheaf_none;
	flush_block(t);
	pthread_mutex_lock(&tsheaf_lock);
	retire_block(t);
	pthread_mutex_unlock(&tsheaf_lock);
}

void tsheaf_flush_self(struct kmem_cache *s)
{
	unsigned int off = READ_ONCE(s->tsheaf_off);
	struct tsheaf *sh = tsheaf_at(tsheaf_self, off);
	if (off && sh->size)
		flush_oldest(s, sh, sh->size);
}

/* ---- the slow paths --------------------------------------------------------------- */

/* This thread's sheaf of @s, its room set; NULL without a block. */
static struct tsheaf *own_sheaf(struct kmem_cache *s)
{
	struct thread_sheaves *t = tsheaf_self;
	if (t == &tsheaf_none && !(t = tsheaf_create()))
		return NULL;
	struct tsheaf *sh = tsheaf_at(t, s->tsheaf_off);
	if (!sh->room)
		sh->room = tsheaf_room(s);
	return sh;
}

void *tsheaf_alloc(struct kmem_cache *s, gfp_t gfp, int node)
{
	struct tsheaf *sh = own_sheaf(s);
	if (!sh)
		return NULL;
	unsigned int n = sh->size;
	if (!n) {
		/* Half the room: the next frees have room, the next allocations objects. */
		slub_fork_handlers_check();
		kfence_tick();
		int refill = node;	/* one node (tsheaf_enabled): any is it */
		while (!(n = slab_refill_bulk(s, sh->objects, (sh->room + 1) / 2, refill)))
			if (!slab_new_partial(s, gfp, &refill) || !READ_ONCE(s->tsheaf_off))
				return NULL;	/* no memory, or debug switched on: the other paths */
		stat(s, TSHEAF_REFILL);
	}
	return tsheaf_pop(s, sh, n);
}

void tsheaf_free(struct kmem_cache *s, struct slab *slab, void *object)
{
	struct tsheaf *sh = own_sheaf(s);
	if (!sh) {
		__slab_free(s, slab, object);	/* checks the word too */
		return;
	}
	if (unlikely(object_looks_free(s, object))) {
		slab_free_suspect(s, slab, object);
		return;
	}
	if (sh->size >= sh->room) {
		slub_fork_handlers_check();
		flush_oldest(s, sh, sh->room / 2);
	}
	tsheaf_park(s, sh, sh->size, object);
}

/* ---- what the rest of the engine asks ---------------------------------------------- */

/* Another thread's count, read while it may change: never above the array. */
static unsigned int size_of(const struct tsheaf *sh)
{
	unsigned int n = __atomic_load_n(&sh->size, __ATOMIC_ACQUIRE);
	return n < TSHEAF_CAPACITY ? n : TSHEAF_CAPACITY;
}

unsigned long tsheaf_parked(struct kmem_cache *s)
{
	unsigned int off = READ_ONCE(s->tsheaf_off);
	unsigned long parked = 0;
	if (!off)
		return 0;
	pthread_mutex_lock(&tsheaf_lock);
	for (struct thread_sheaves *t = live_blocks; t; t = t->next)
		parked += size_of(tsheaf_at(t, off));
	pthread_mutex_unlock(&tsheaf_lock);
	return parked;
}

bool tsheaf_holds(struct kmem_cache *s, const void *object)
{
	unsigned int off = READ_ONCE(s->tsheaf_off);
	bool found = false;
	if (!off)
		return false;
	pthread_mutex_lock(&tsheaf_lock);
	for (struct thread_sheaves *t = live_blocks; t && !found; t = t->next) {
		struct tsheaf *sh = tsheaf_at(t, off);
		for (unsigned int i = 0, n = size_of(sh); i < n && !found; i++)
			found = __atomic_load_n(&sh->objects[i], __ATOMIC_RELAXED) == object;
	}
	pthread_mutex_unlock(&tsheaf_lock);
	return found;
}

unsigned long tsheaf_threads(void)
{
	unsigned long n = 0;
	pthread_mutex_lock(&tsheaf_lock);
	for (struct thread_sheaves *t = live_blocks; t; t = t->next)
		n++;
	pthread_mutex_unlock(&tsheaf_lock);
	return n;
}

void tsheaf_fork_lock(bool lock)
{
	os_mutex_hold(&tsheaf_lock, lock);
}

/*
 * The child has one thread: the other threads' sheaves would be lost
 * memory.  Their counts are exact but for a push or pop under way at the
 * fork (an object not yet counted stays out: leaked, never handed out twice).
 */
void tsheaf_fork_child(void)
{
	pthread_mutex_init(&tsheaf_lock, NULL);
	struct thread_sheaves *t = live_blocks;
	while (t) {
		struct thread_sheaves *next = t->next;
		if (t != tsheaf_self) {
			flush_block(t);
			retire_block(t);
		}
		t = next;
	}
}
