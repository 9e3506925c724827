// SPDX-License-Identifier: MIT
/*
 * sheaf.c - sheaves (sheaf.h): the paths around the main sheaf's rseq pop
 * and push, the barn, and what the rest of the engine asks of them.
 *
 * Allocation when main is empty (the kernel's __pcs_replace_empty_main):
 *   1. objects freed into main since the fast path looked
 *   2. the spare, if it has objects: swap main and spare
 *   3. a full sheaf from the barn in exchange for the empty main
 *   4. refill main from the node's partial slabs (slab_refill_bulk)
 *   5. a new slab on the partial list, then 4 again
 * Free when main is full (__pcs_replace_full_main):
 *   1. room made in main since the fast path looked
 *   2. the spare, if it has room: swap main and spare
 *   3. no spare: main becomes it, an empty sheaf becomes main
 *   4. main into the barn's full list (under its bound), an empty as main
 *   5. flush main to its slabs (slab_free_bulk)
 * Each runs under the slot's lock with the slot retired (sheaf_lock):
 * no fast path commits on it until sheaf_unlock() publishes it again.
 * A thread that moved to another CPU since its fast path works on the
 * slot of the CPU it is on now; one that moves while it holds the lock
 * goes on with the old slot, which is as correct (retired, and locked).
 *
 * Without rseq (cmpxchg16b mode, valgrind, TSan builds) the fast paths are
 * these functions too: a pop or push under the lock of the slot last used.
 *
 * Sheaves come from caches of their own, one per capacity ("sheaf-N"),
 * which never have sheaves; they are allocated and freed with no slot
 * lock held (sheaf.h says why): a path that needs one unlocks, allocates
 * and starts over, and one that gives one up frees it after its unlock.
 */
#define _GNU_SOURCE
#include "slab/core/slab.h"
#include "slab/core/slab_common.h"
#include "slab/debug/kfence.h"
#include "slab/debug/slab_debug.h"

#include <errno.h>

#include "base/options.h"
#include "base/report.h"
#include "base/start.h"
#include "page/decay_thread.h"

static_assert(SHEAF_CAPACITY_MAX < SHEAF_SIZE_RETIRED, "a retired count is no count");
static_assert(SHEAF_CAPACITY_MAX == SLUB_SHEAVES_MAX, "slub_sheaves' range");

/* ---- the sheaves' own caches ------------------------------------------------------- */

#define SHEAF_CACHES 16		/* capacities with a cache of their own */

static pthread_mutex_t sheaf_caches_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	unsigned int capacity;
	struct kmem_cache *cache;
} sheaf_caches[SHEAF_CACHES];

/*
 * The cache of sheaves of @capacity objects, made on first use; once
 * SHEAF_CACHES capacities have one, the smallest of larger sheaves (a
 * cache's capacity is its own, not its sheaves' size).  NULL if none.
 */
static struct kmem_cache *sheaf_cache_for(unsigned int capacity)
{
	struct kmem_cache *cache = NULL, *larger = NULL;
	unsigned int larger_capacity = UINT32_MAX;
	pthread_mutex_lock(&sheaf_caches_lock);
	for (unsigned int i = 0; i < SHEAF_CACHES && !cache; i++) {
		unsigned int c = sheaf_caches[i].capacity;
		if (c == capacity) {
			cache = sheaf_caches[i].cache;
		} else if (c > capacity && c < larger_capacity) {
			larger = sheaf_caches[i].cache;
			larger_capacity = c;
		} else if (!c) {
			char name[SLUB_NAME_MAX];
			slab_cache_name(name, sizeof(name), "sheaf", capacity);
			size_t bytes = sizeof(struct slab_sheaf) + capacity * sizeof(void *);
			cache = __kmem_cache_create(name, (unsigned int)bytes, 0,
						    SLAB_NO_MERGE | __SLAB_NO_SHEAVES, NULL, 0);
			if (!cache)
				break;
			WRITE_ONCE(cache->refcount, -1);	/* the allocator's own: never destroyed */
			sheaf_caches[i].capacity = capacity;
			sheaf_caches[i].cache = cache;
		}
	}
	pthread_mutex_unlock(&sheaf_caches_lock);
	return cache ? cache : larger;
}

void sheaf_fork_lock(bool lock)
{
	os_mutex_hold(&sheaf_caches_lock, lock);
}

void sheaf_fork_child(void)
{
	pthread_mutex_init(&sheaf_caches_lock, NULL);
}

/* What kmem_cache_args, slub_sheaves and slub_malloc_sheaves ask of @s, debug flags aside. */
static unsigned int capacity_wanted(const struct kmem_cache *s)
{
	if (s->flags & __SLAB_NO_SHEAVES)
		return 0;
	if (s->args_sheaf_capacity)
		return s->args_sheaf_capacity;
	if (slub_opt(sheaves))
		return (unsigned int)slub_opt(sheaves);
	/*
	 * malloc's default only where the fast paths are rseq sequences:
	 * without rseq (valgrind, an old glibc, slub_rseq=0) a sheaf's pop and
	 * push take its slot's mutex, and a malloc+free pair under callgrind
	 * cost 291 instructions against 178 on cpu slabs (run_ring_ir.sh).
	 * slub_malloc_sheaves_min keeps small objects off them: a sheaf hands
	 * a thread the object it just freed, whose neighbours on the cache
	 * line other CPUs may write (bench_scratch); a cpu slab hands out its
	 * own slab's objects in address order, and a remote free goes home.
	 */
	if ((s->flags & SLAB_KMALLOC) && &slub_malloc_library && slub_malloc_library &&
	    slub_percpu_rseq && s->object_size >= (unsigned int)slub_opt(malloc_sheaves_min))
		return (unsigned int)slub_opt(malloc_sheaves);
	return 0;
}

void sheaf_prepare(struct kmem_cache *s)
{
	unsigned int capacity = capacity_wanted(s);
	if (!capacity || s->sheaf_cache)
		return;
	s->sheaf_cache = sheaf_cache_for(capacity);
	if (!s->sheaf_cache)
		slub_warn("%s: no cache for sheaves of %u objects (out of memory, or %u sizes in use); "
			  "cpu slabs instead", s->name, capacity, SHEAF_CACHES);
}

void sheaf_setup(struct kmem_cache *s)
{
	unsigned int capacity = s->sheaf_cache && !(s->flags & SLAB_SLOW_FLAGS) ?
				capacity_wanted(s) : 0;
	WRITE_ONCE(s->sheaf_capacity, capacity);
	WRITE_ONCE(s->sheaf_slots, capacity ? s->nr_cpu_slots : 0);
	/* More than one node: each free asks first whether its object is of this one. */
	WRITE_ONCE(s->sheaf_free_slots, nr_node_ids == 1 ? s->sheaf_slots : 0);
	WRITE_ONCE(s->cpu_slab_slots, capacity ? 0 : s->nr_cpu_slots);
}

static struct slab_sheaf *alloc_empty_sheaf(struct kmem_cache *s)
{
	struct slab_sheaf *sheaf = kmem_cache_alloc(s->sheaf_cache, GFP_KERNEL | __GFP_NOWARN);
	if (!sheaf)
		return NULL;
	sheaf->size = 0;
	__atomic_add_fetch(&s->nr_sheaves, 1, __ATOMIC_RELAXED);
	stat(s, SHEAF_ALLOC);
	return sheaf;
}

/* With no slot lock of @s held.  NULL: nothing. */
static void free_empty_sheaf(struct kmem_cache *s, struct slab_sheaf *sheaf)
{
	if (!sheaf)
		return;
	__atomic_sub_fetch(&s->nr_sheaves, 1, __ATOMIC_RELAXED);
	stat(s, SHEAF_FREE);
	kmem_cache_free(s->sheaf_cache, sheaf);
}

unsigned long sheaf_count(struct kmem_cache *s)
{
	return READ_ONCE(s->nr_sheaves);
}

/* ---- the slot: retire, publish ------------------------------------------------------ */

/*
 * Retire @cpu's slot (its lock held): its word becomes 0, so that no fast
 * path commits on it, and main's count comes back.  On @cpu that is one
 * rseq sequence.  On another CPU a sequence may have read the word before
 * our exchange and store its new count after it: the exchange leaves a
 * count no sequence stores, membarrier ends every sequence there, and then
 * the count says whether one committed (its count is the truth) or not.
 */
static unsigned int sheaf_retire(struct kmem_cache_cpu *c, unsigned int cpu)
{
#if SLUB_HAVE_RSEQ_ASM
	if (slub_percpu_rseq) {
		uint64_t old;
		if (rseq_sheaf_take(slub_percpu_rseq, &c->sheaf_word, cpu, &old))
			return (unsigned int)old;
		old = __atomic_exchange_n(&c->sheaf_word, (uint64_t)SHEAF_SIZE_RETIRED,
					  __ATOMIC_SEQ_CST);
		if (!os_single_threaded())
			os_membarrier_rseq(cpu);
		unsigned int now = __atomic_load_n(&c->sheaf_size, __ATOMIC_ACQUIRE);
		__atomic_store_n(&c->sheaf_word, 0, __ATOMIC_RELAXED);
		return now != SHEAF_SIZE_RETIRED ? now : (unsigned int)old;
	}
#endif
	(void)cpu;
	unsigned int size = c->sheaf_size;
	c->sheaf_word = 0;
	return size;
}

/* Open the slot again: main's count and room in one store (the fast paths read main after). */
static void sheaf_publish(struct kmem_cache *s, struct kmem_cache_cpu *c)
{
	struct slab_sheaf *main = c->main;
	uint64_t word = main ? (uint64_t)s->sheaf_capacity << 32 | main->size : 0;
	__atomic_store_n(&c->sheaf_word, word, __ATOMIC_RELEASE);
}

/* This CPU's slot, locked and retired: main's own count is exact while it is. */
static struct kmem_cache_cpu *sheaf_lock(struct kmem_cache *s)
{
	unsigned int cpu;
	struct kmem_cache_cpu *c = slab_lock_cpu_slot(s, &cpu);
	unsigned int size = sheaf_retire(c, cpu);
	if (c->main)
		c->main->size = size;
	return c;
}

static void sheaf_unlock(struct kmem_cache *s, struct kmem_cache_cpu *c)
{
	sheaf_publish(s, c);
	slab_unlock(&c->lock);
}

static void free_empty_sheaf(struct kmem_cache *s, struct slab_sheaf *sheaf);

/*
 * sheaf_lock(), and *@empty (taken) as main if the slot has none; NULL,
 * unlocked and *@empty given back, if @s has no sheaves now (debug
 * switched on meanwhile).
 */
static struct kmem_cache_cpu *sheaf_lock_main(struct kmem_cache *s, struct slab_sheaf **empty)
{
	struct kmem_cache_cpu *c = sheaf_lock(s);
	if (unlikely(!READ_ONCE(s->sheaf_capacity))) {
		sheaf_unlock(s, c);
		free_empty_sheaf(s, *empty);
		*empty = NULL;
		return NULL;
	}
	if (!c->main) {
		c->main = *empty;
		*empty = NULL;
	}
	return c;
}

/* ---- the barn ---------------------------------------------------------------------- */

/* This CPU's node's barn: the sheaves of its objects. */
static struct node_barn *get_barn(struct kmem_cache *s)
{
	return &get_node(s, numa_mem_id())->barn;
}

/* Every node's barn (declares @barn). */
#define for_each_barn(s, barn)                                                   \
	for (struct node_barn *barn = &get_node(s, 0)->barn; barn;              \
	     barn = barn_next(s, barn))

static struct node_barn *barn_next(struct kmem_cache *s, struct node_barn *barn)
{
	struct kmem_cache_node *n = container_of(barn, struct kmem_cache_node, barn);
	return n + 1 < get_node(s, (int)nr_node_ids) ? &n[1].barn : NULL;
}

/* A full (@full) or an empty sheaf from the barn, or NULL. */
static struct slab_sheaf *barn_get(struct node_barn *barn, bool full)
{
	unsigned int *nr = full ? &barn->nr_full : &barn->nr_empty;
	struct list_head *list = full ? &barn->sheaves_full : &barn->sheaves_empty;
	struct slab_sheaf *sheaf = NULL;
	if (!READ_ONCE(*nr))
		return NULL;
	slab_lock(&barn->lock);
	if (*nr) {
		sheaf = list_first_entry(list, struct slab_sheaf, barn_list);
		list_del(&sheaf->barn_list);
		WRITE_ONCE(*nr, *nr - 1);
	}
	slab_unlock(&barn->lock);
	return sheaf;
}

/* Into the barn's list of full (@full) or empty sheaves, unless it holds SHEAF_BARN_MAX. */
static bool barn_put(struct node_barn *barn, struct slab_sheaf *sheaf, bool full)
{
	unsigned int *nr = full ? &barn->nr_full : &barn->nr_empty;
	bool put = false;
	slab_lock(&barn->lock);
	if (*nr < SHEAF_BARN_MAX) {
		list_add(&sheaf->barn_list, full ? &barn->sheaves_full : &barn->sheaves_empty);
		WRITE_ONCE(*nr, *nr + 1);
		put = true;
	}
	slab_unlock(&barn->lock);
	return put;
}

/* An empty sheaf to the barn, or to *@spill for the caller to free after its unlock. */
static void put_empty(struct node_barn *barn, struct slab_sheaf *sheaf, struct slab_sheaf **spill)
{
	if (sheaf && !barn_put(barn, sheaf, false))
		*spill = sheaf;
}

/* ---- flush ---------------------------------------------------------------------------- */

static void flush_sheaf(struct kmem_cache *s, struct slab_sheaf *sheaf)
{
	if (!sheaf || !sheaf->size)
		return;
	slab_free_bulk(s, sheaf->objects, sheaf->size);
	sheaf->size = 0;
	stat(s, SHEAF_FLUSH);
}

/*
 * Flush @cpu's main and spare; main stays (empty), the spare is given back.
 * @teardown: main too, and the slot has no sheaf afterwards.
 */
static void flush_cpu(struct kmem_cache *s, unsigned int cpu, bool teardown)
{
	struct kmem_cache_cpu *c = cpu_slot(s, cpu);
	pthread_mutex_lock(&c->lock);
	if (!c->main && !c->spare) {
		pthread_mutex_unlock(&c->lock);
		return;
	}
	unsigned int size = sheaf_retire(c, cpu);
	struct slab_sheaf *main = c->main, *spare = c->spare;
	if (main) {
		main->size = size;
		flush_sheaf(s, main);
	}
	flush_sheaf(s, spare);
	c->spare = NULL;
	if (teardown)
		c->main = NULL;
	sheaf_publish(s, c);
	pthread_mutex_unlock(&c->lock);
	free_empty_sheaf(s, spare);
	if (teardown)
		free_empty_sheaf(s, main);
}

void sheaf_flush_cpu(struct kmem_cache *s, unsigned int cpu)
{
	flush_cpu(s, cpu, false);
}

/* Every sheaf of @barn: the full ones flushed, all given back. */
static void flush_barn(struct kmem_cache *s, struct node_barn *barn)
{
	struct list_head sheaves;
	INIT_LIST_HEAD(&sheaves);
	pthread_mutex_lock(&barn->lock);
	list_splice_init(&barn->sheaves_full, &sheaves);
	list_splice_init(&barn->sheaves_empty, &sheaves);
	WRITE_ONCE(barn->nr_full, 0);
	WRITE_ONCE(barn->nr_empty, 0);
	pthread_mutex_unlock(&barn->lock);
	while (!list_empty(&sheaves)) {
		struct slab_sheaf *sheaf = list_first_entry(&sheaves, struct slab_sheaf, barn_list);
		list_del(&sheaf->barn_list);
		flush_sheaf(s, sheaf);
		free_empty_sheaf(s, sheaf);
	}
}

void sheaf_flush_barn(struct kmem_cache *s)
{
	for_each_barn(s, barn)
		flush_barn(s, barn);
}

/* Full sheaves in any node's barn? */
static bool barns_hold_full(struct kmem_cache *s)
{
	for_each_barn(s, barn)
		if (READ_ONCE(barn->nr_full))
			return true;
	return false;
}

void sheaf_retire_all(struct kmem_cache *s)
{
	for_each_used_cpu(cpu, &slab_cpus, s->nr_cpu_slots) {
		struct kmem_cache_cpu *c = cpu_slot(s, cpu);
		unsigned int size = sheaf_retire(c, cpu);
		if (c->main)
			c->main->size = size;
	}
}

void sheaf_teardown(struct kmem_cache *s)
{
	if (!s->sheaf_cache)
		return;
	for_each_used_cpu(cpu, &slab_cpus, s->nr_cpu_slots)
		flush_cpu(s, cpu, true);
	sheaf_flush_barn(s);
}

/* ---- allocation ----------------------------------------------------------------------- */

/*
 * May a request for @node (a named one, or NUMA_NO_NODE) take @object from
 * a sheaf?  A sheaf mostly holds its CPU's node's objects, not only: the
 * slot a thread without rseq uses is the one it used last, not its CPU's,
 * and a thread may move between a free's node test and its push.  So a
 * named node looks at the object itself, as the kernel's alloc_from_pcs().
 */
static inline bool sheaf_object_fits(const void *object, int node)
{
	return node == NUMA_NO_NODE || nr_node_ids == 1 || node_match(virt_to_slab(object), node);
}

/* Without rseq: the pop under the lock of the slot this thread used last. */
static void *pop_locked(struct kmem_cache *s, int node)
{
	unsigned int cpu = cas_cpu_slot(s);
	struct kmem_cache_cpu *c = cpu_slot(s, cpu);
	void *object = NULL;
	os_cpu_use(&slab_cpus, cpu);
	slab_lock(&c->lock);
	if (c->sheaf_size && c->sheaf_room &&
	    sheaf_object_fits(c->main->objects[c->sheaf_size - 1], node))
		object = c->main->objects[--c->sheaf_size];
	slab_unlock(&c->lock);
	return object;
}

/*
 * Steps 1 to 4 of the allocation (main exists, the slot is retired): an
 * object, or NULL when @node (NUMA_NO_NODE: this CPU's) has no partial
 * slab left.  An empty sheaf the barn has no room for goes to *@spill.
 */
static void *alloc_from_sheaves(struct kmem_cache *s, struct kmem_cache_cpu *c,
				struct slab_sheaf **spill, int node)
{
	struct slab_sheaf *main = c->main, *spare = c->spare;
	if (!main->size) {
		struct slab_sheaf *full;
		if (spare && spare->size) {
			c->main = spare;
			c->spare = main;
			stat(s, SHEAF_SWAP);
		} else if ((full = barn_get(get_barn(s), true))) {
			c->main = full;
			if (!spare)
				c->spare = main;
			else
				put_empty(get_barn(s), main, spill);
			stat(s, BARN_GET);
		} else {
			stat(s, BARN_GET_FAIL);
			main->size = slab_refill_bulk(s, main->objects, s->sheaf_capacity, node);
			if (!main->size)
				return NULL;
			stat(s, SHEAF_REFILL);
		}
		main = c->main;
	}
	return main->objects[--main->size];
}

/*
 * An object of @node when the sheaves cannot give one (another node than
 * this CPU's, a sheaf topped by another node's object, or no sheaf to be
 * had): from that node's partial slabs, or a new slab there, as the kernel's.
 */
static void *object_on_node(struct kmem_cache *s, gfp_t gfp, int node)
{
	void *object;
	/* @node, or the node slab_new_partial() sent us to if it had no pages. */
	while (!slab_refill_bulk(s, &object, 1, node)) {
		if (unlikely(kmem_cache_debug(s)))	/* switched on: a refill takes nothing */
			return slab_alloc_finish(s, gfp, node, NULL);
		if (!slab_new_partial(s, gfp, &node))
			return NULL;
	}
	object_mark_allocated(s, object);
	return object;
}

static __noinline void *alloc_on_node(struct kmem_cache *s, gfp_t gfp, int node)
{
	slub_fork_handlers_check();
	stat(s, ALLOC_SLOWPATH);
	return object_on_node(s, gfp, node);
}

/* The slow path: main has no object, or there is no main. */
static __noinline void *__sheaf_alloc(struct kmem_cache *s, gfp_t gfp, int node)
{
	struct slab_sheaf *empty = NULL, *spill = NULL;
	struct kmem_cache_cpu *c;
	void *object;
	int refill = NUMA_NO_NODE;	/* this CPU's node, until its pages ran out */

	slub_fork_handlers_check();
	stat(s, ALLOC_SLOWPATH);
	kfence_tick();
	for (;;) {
		c = sheaf_lock_main(s, &empty);
		if (!c)
			return slab_alloc_finish(s, gfp, node, NULL);
		struct slab_sheaf *main = c->main;
		if (main && (object = alloc_from_sheaves(s, c, &spill, refill))) {
			if (likely(sheaf_object_fits(object, node)))
				break;
			c->main->size++;	/* another node's: left in the sheaf */
			sheaf_unlock(s, c);
			free_empty_sheaf(s, empty);
			free_empty_sheaf(s, spill);
			return object_on_node(s, gfp, node);
		}
		sheaf_unlock(s, c);
		free_empty_sheaf(s, spill);
		spill = NULL;
		if (!main) {
			/*
			 * The slot's first slow path: its main sheaf.  None to
			 * be had, the object comes from the slabs, as the
			 * kernel's does when alloc_from_pcs() fails: a
			 * __GFP_NOFAIL request waits there, it does not fail.
			 */
			empty = alloc_empty_sheaf(s);
			if (!empty)
				return object_on_node(s, gfp, node);
		} else if (!slab_new_partial(s, gfp, &refill)) {
			return NULL;
		}
	}
	stat(s, ALLOC_PCS);
	sheaf_unlock(s, c);
	free_empty_sheaf(s, empty);
	free_empty_sheaf(s, spill);
	object_mark_allocated(s, object);
	return object;
}

void *sheaf_alloc(struct kmem_cache *s, gfp_t gfp, int node)
{
	void *object;
	if (unlikely(!node_match_cpu(node)))
		return alloc_on_node(s, gfp, node);
	if (slub_percpu_rseq || !(object = pop_locked(s, node)))
		return __sheaf_alloc(s, gfp, node);
	stat(s, ALLOC_PCS);
	object_mark_allocated(s, object);
	return object;
}

/* ---- free ------------------------------------------------------------------------------- */

/* Without rseq: the push under the lock of the slot this thread used last. */
static bool push_locked(struct kmem_cache *s, void *object)
{
	unsigned int cpu = cas_cpu_slot(s);
	struct kmem_cache_cpu *c = cpu_slot(s, cpu);
	bool pushed = false;
	os_cpu_use(&slab_cpus, cpu);
	slab_lock(&c->lock);
	if (c->sheaf_size < c->sheaf_room) {
		set_freepointer(s, object, NULL);	/* parked: its word says free */
		c->main->objects[c->sheaf_size++] = object;
		pushed = true;
	}
	slab_unlock(&c->lock);
	return pushed;
}

/*
 * Steps 1 to 5 of the free (main exists, the slot is retired): true when
 * main has room.  False: an empty sheaf would do, and neither *@empty
 * (one the caller brought) nor the barn has one.
 */
static bool make_room(struct kmem_cache *s, struct kmem_cache_cpu *c, struct slab_sheaf **empty,
		      struct slab_sheaf **spill)
{
	struct slab_sheaf *main = c->main, *spare = c->spare;
	struct node_barn *barn = get_barn(s);
	unsigned int capacity = s->sheaf_capacity;

	if (main->size < capacity)
		return true;
	if (spare && spare->size < capacity) {
		c->main = spare;
		c->spare = main;
		stat(s, SHEAF_SWAP);
		return true;
	}
	struct slab_sheaf *e = *empty ? *empty : barn_get(barn, false);
	*empty = NULL;
	if (!spare && e) {
		c->spare = main;
		c->main = e;
		return true;
	}
	if (e && barn_put(barn, main, true)) {
		c->main = e;
		stat(s, BARN_PUT);
		return true;
	}
	if (!e && READ_ONCE(barn->nr_full) < SHEAF_BARN_MAX)
		return false;
	stat(s, BARN_PUT_FAIL);
	put_empty(barn, e, spill);
	flush_sheaf(s, main);
	return true;
}

/* The slow path: main is full, or there is no main. */
static __noinline void __sheaf_free(struct kmem_cache *s, struct slab *slab, void *object)
{
	struct slab_sheaf *empty = NULL, *spill = NULL;
	struct kmem_cache_cpu *c;

	slub_fork_handlers_check();
	for (;;) {
		c = sheaf_lock_main(s, &empty);
		if (!c) {
			__slab_free(s, slab, object);
			return;
		}
		if (c->main && make_room(s, c, &empty, &spill))
			break;
		sheaf_unlock(s, c);
		free_empty_sheaf(s, spill);
		spill = NULL;
		empty = alloc_empty_sheaf(s);
		if (!empty) {
			__slab_free(s, slab, object);
			return;
		}
	}
	set_freepointer(s, object, NULL);	/* parked: its word says free */
	c->main->objects[c->main->size++] = object;
	stat(s, FREE_PCS);
	sheaf_unlock(s, c);
	free_empty_sheaf(s, empty);
	free_empty_sheaf(s, spill);
}

void sheaf_free(struct kmem_cache *s, struct slab *slab, void *object)
{
	/* The push may have stopped before it looked at the word (main full). */
	if (unlikely(object_looks_free(s, object))) {
		slab_free_suspect(s, slab, object);
		return;
	}
	if (!slab_on_this_node(slab)) {
		__slab_free(s, slab, object);
		return;
	}
	if (slub_percpu_rseq || !push_locked(s, object)) {
		__sheaf_free(s, slab, object);
		return;
	}
	stat(s, FREE_PCS);
}

/* ---- the idle decay ----------------------------------------------------------------------- */

/* What changes in a slot whenever its sheaves are used (a fast path changes the count). */
static unsigned long slot_fingerprint(const struct kmem_cache_cpu *c)
{
	unsigned long spare = c->spare ? c->spare->size : 0;
	return (unsigned long)READ_ONCE(c->sheaf_word) ^ (uintptr_t)c->main ^
	       ((uintptr_t)c->spare << 1) ^ (spare << 48);
}

/*
 * Flush the sheaves of each slot of @s that did not change since the last
 * look, and the barn once every slot was idle.  A slot whose threads
 * allocate and free in balance may look idle at the moment of a look:
 * flushing it costs one refill.
 */
static void idle_cache(struct kmem_cache *s, void *arg)
{
	bool *flushed = arg, all_idle = true;
	if (!READ_ONCE(s->sheaf_capacity))
		return;
	for_each_used_cpu(cpu, &slab_cpus, s->nr_cpu_slots) {
		struct kmem_cache_cpu *c = cpu_slot(s, cpu);
		pthread_mutex_lock(&c->lock);
		unsigned long seen = slot_fingerprint(c);
		bool idle = seen == c->sheaf_seen;
		bool parked = READ_ONCE(c->sheaf_size) || (c->spare && c->spare->size);
		c->sheaf_seen = seen;
		pthread_mutex_unlock(&c->lock);
		all_idle = all_idle && idle;
		if (idle && parked) {
			sheaf_flush_cpu(s, cpu);
			*flushed = true;
		}
	}
	if (all_idle && barns_hold_full(s)) {
		sheaf_flush_barn(s);
		*flushed = true;
	}
}

/* The cache list as it is: the thread must not start the slab layer (it allocates). */
bool slub_slab_idle_tick(uint64_t now_ms)
{
	(void)now_ms;
	bool flushed = false;
	struct list_head *pos;
	pthread_mutex_lock(&slab_caches_lock);
	list_for_each(pos, &slab_caches) {
		struct kmem_cache *s = list_entry(pos, struct kmem_cache, list);
		idle_cache(s, &flushed);
		/* The emptied slabs a kmalloc cache kept (node_keeps_empty). */
		if ((READ_ONCE(s->flags) & SLAB_KMALLOC) && slab_trim_partial(s))
			flushed = true;
	}
	pthread_mutex_unlock(&slab_caches_lock);
	return flushed;
}

/* ---- what the rest of the engine asks ------------------------------------------------- */

/* @sheaf's objects into @nodes, by the node of each one's slab. */
static void count_nodes(const struct slab_sheaf *sheaf, unsigned long *nodes)
{
	for (unsigned int i = 0; sheaf && i < sheaf->size; i++)
		nodes[slab_nid(virt_to_slab(sheaf->objects[i]))]++;
}

void sheaf_parked_nodes(struct kmem_cache *s, unsigned long *nodes)
{
	for_each_used_cpu(cpu, &slab_cpus, s->nr_cpu_slots) {
		struct kmem_cache_cpu *c = cpu_slot(s, cpu);
		pthread_mutex_lock(&c->lock);
		if (c->main) {
			c->main->size = sheaf_retire(c, cpu);
			count_nodes(c->main, nodes);
			sheaf_publish(s, c);
		}
		count_nodes(c->spare, nodes);
		pthread_mutex_unlock(&c->lock);
	}
	for_each_barn(s, barn) {
		pthread_mutex_lock(&barn->lock);
		struct list_head *pos;
		list_for_each(pos, &barn->sheaves_full)
			count_nodes(list_entry(pos, struct slab_sheaf, barn_list), nodes);
		pthread_mutex_unlock(&barn->lock);
	}
}

unsigned long sheaf_parked(struct kmem_cache *s)
{
	unsigned long parked = 0;
	for_each_used_cpu(cpu, &slab_cpus, s->nr_cpu_slots) {
		struct kmem_cache_cpu *c = cpu_slot(s, cpu);
		/* Locked: no retirer holds the slot, so the word counts main (or is 0). */
		pthread_mutex_lock(&c->lock);
		parked += READ_ONCE(c->sheaf_size);
		if (c->spare)
			parked += c->spare->size;
		pthread_mutex_unlock(&c->lock);
	}
	for_each_barn(s, barn) {
		pthread_mutex_lock(&barn->lock);
		struct list_head *pos;
		list_for_each(pos, &barn->sheaves_full)
			parked += list_entry(pos, struct slab_sheaf, barn_list)->size;
		pthread_mutex_unlock(&barn->lock);
	}
	return parked;
}

static bool sheaf_has(const struct slab_sheaf *sheaf, const void *object)
{
	for (unsigned int i = 0; sheaf && i < sheaf->size; i++)
		if (sheaf->objects[i] == object)
			return true;
	return false;
}

bool sheaf_holds(struct kmem_cache *s, void *object)
{
	bool found = false;
	for_each_used_cpu(cpu, &slab_cpus, s->nr_cpu_slots) {
		struct kmem_cache_cpu *c = cpu_slot(s, cpu);
		if (!c->main)
			continue;
		c->main->size = sheaf_retire(c, cpu);
		found = found || sheaf_has(c->main, object) || sheaf_has(c->spare, object);
		sheaf_publish(s, c);
	}
	for_each_barn(s, barn) {
		pthread_mutex_lock(&barn->lock);
		struct list_head *pos;
		list_for_each(pos, &barn->sheaves_full)
			found = found || sheaf_has(list_entry(pos, struct slab_sheaf, barn_list),
						   object);
		pthread_mutex_unlock(&barn->lock);
	}
	return found;
}

/* Problems of one sheaf: its count, and each object one of @s's, marked free. */
static unsigned long validate_sheaf(struct kmem_cache *s, struct slab_sheaf *sheaf,
				    const char *what, unsigned int cpu)
{
	if (sheaf->size > s->sheaf_capacity) {
		slub_report("validate %s: cpu %u %s sheaf holds %u objects, capacity %u", s->name,
			    cpu, what, sheaf->size, s->sheaf_capacity);
		return 1;
	}
	for (unsigned int i = 0; i < sheaf->size; i++) {
		void *p = sheaf->objects[i];
		struct slab *slab = virt_to_slab(p);
		if (!slab || slab->slab_cache != s || !slab_object_valid(s, slab, p) ||
		    !object_looks_free(s, p)) {
			slub_report("validate %s: cpu %u %s sheaf holds %p, not a free object of it",
				    s->name, cpu, what, p);
			return 1;
		}
	}
	return 0;
}

/* One node's barn: its sheaves' objects, and its counts. */
static unsigned long validate_barn(struct kmem_cache *s, struct node_barn *barn,
				   unsigned long *sheaves)
{
	unsigned long errors = 0;
	pthread_mutex_lock(&barn->lock);
	unsigned int full = 0, empty = 0;
	struct list_head *pos;
	list_for_each(pos, &barn->sheaves_full) {
		struct slab_sheaf *sheaf = list_entry(pos, struct slab_sheaf, barn_list);
		errors += validate_sheaf(s, sheaf, "barn", 0);
		errors += sheaf->size != s->sheaf_capacity;
		full++;
	}
	list_for_each(pos, &barn->sheaves_empty) {
		errors += list_entry(pos, struct slab_sheaf, barn_list)->size != 0;
		empty++;
	}
	if (full != barn->nr_full || empty != barn->nr_empty || full > SHEAF_BARN_MAX ||
	    empty > SHEAF_BARN_MAX) {
		slub_report("validate %s: barn lists %u full and %u empty sheaves, counted %u and %u",
			    s->name, full, empty, barn->nr_full, barn->nr_empty);
		errors++;
	}
	pthread_mutex_unlock(&barn->lock);
	*sheaves += full + empty;
	return errors;
}

/*
 * The sheaves the slots and barns hold, counted again with nothing else
 * looked at: a sheaf the decay thread moved from a slot to a barn while a
 * walk went from one to the other was counted twice by it.
 */
static unsigned long count_sheaves(struct kmem_cache *s)
{
	unsigned long sheaves = 0;
	for_each_used_cpu(cpu, &slab_cpus, s->nr_cpu_slots) {
		struct kmem_cache_cpu *c = cpu_slot(s, cpu);
		pthread_mutex_lock(&c->lock);
		sheaves += (c->main != NULL) + (c->spare != NULL);
		pthread_mutex_unlock(&c->lock);
	}
	for_each_barn(s, barn) {
		pthread_mutex_lock(&barn->lock);
		sheaves += barn->nr_full + barn->nr_empty;
		pthread_mutex_unlock(&barn->lock);
	}
	return sheaves;
}

unsigned long sheaf_validate(struct kmem_cache *s)
{
	unsigned long errors = 0, sheaves = 0;
	for_each_used_cpu(cpu, &slab_cpus, s->nr_cpu_slots) {
		struct kmem_cache_cpu *c = cpu_slot(s, cpu);
		pthread_mutex_lock(&c->lock);
		if (c->main) {
			c->main->size = sheaf_retire(c, cpu);
			errors += validate_sheaf(s, c->main, "main", cpu);
			sheaf_publish(s, c);
			sheaves++;
		} else if (c->sheaf_word || c->spare) {
			slub_report("validate %s: cpu %u has a sheaf count or a spare but no main",
				    s->name, cpu);
			errors++;
		}
		if (c->spare) {
			errors += validate_sheaf(s, c->spare, "spare", cpu);
			sheaves++;
		}
		pthread_mutex_unlock(&c->lock);
	}
	for_each_barn(s, barn)
		errors += validate_barn(s, barn, &sheaves);
	/* Too many: only if it stays so (a move counted twice passes). */
	for (int again = 0; again < 5 && sheaves > sheaf_count(s); again++)
		sheaves = count_sheaves(s);
	if (sheaves > sheaf_count(s)) {
		slub_report("validate %s: %lu sheaves in use, %lu made", s->name,
			    sheaves, sheaf_count(s));
		errors++;
	}
	return errors;
}
