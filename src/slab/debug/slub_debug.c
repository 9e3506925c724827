// SPDX-License-Identifier: MIT
/*
 * slub_debug.c - the allocation and free paths of a debug cache, its
 * validation, and the list of objects left at destroy.
 *
 * Everything runs under the node's list_lock, as the kernel's debug paths
 * do: a debug cache has no cpu slabs, each of its slabs is on the node's
 * partial list (it has free objects) or on its full list (none), and the
 * checks may walk a slab's freelist with nothing else changing it.  Stacks
 * for the tracks are captured before the lock (the unwinder may take the
 * loader's lock).
 */
#define _GNU_SOURCE
#include "slab/debug/slab_debug.h"
#include "slab/debug/slab_kasan.h"
#include "slab/debug/slab_leak.h"

#include <errno.h>
#include <string.h>

#include "base/report.h"
#include "page/page_alloc.h"

/* Lists of a debug cache (list_lock held); readers outside it read the counts only. */
static void list_move_to(struct kmem_cache_node *n, struct slab *slab, bool to_full)
{
	if (to_full) {
		remove_partial(n, slab);
		list_add(slab_lru(slab), &n->full);
	} else {
		list_del(slab_lru(slab));
		add_partial(n, slab, true);
	}
}

/*
 * An alloc check failed: the slab's free objects are given up, as the
 * kernel's, and the slab is disabled: never allocated from again, passed
 * over by validation and leak lists (its free objects now count as used),
 * while frees of its real objects are still checked and then dropped.
 */
static void mark_all_used(struct kmem_cache *s, struct kmem_cache_node *n, struct slab *slab)
{
	union slab_counters c = read_counters(slab);
	slab_fix(s, "Marking all objects used");
	c.inuse = c.objects;
	__atomic_store_n(&slab->counters, c.counters, __ATOMIC_RELAXED);
	WRITE_ONCE(slab->freelist, NULL);
	__atomic_or_fetch(&slab->flags, PG_slab_disabled, __ATOMIC_RELAXED);
	list_move_to(n, slab, true);
}

static bool slab_disabled(const struct slab *slab)
{
	return slab_flags(slab) & PG_slab_disabled;
}

static bool alloc_consistency_checks(struct kmem_cache *s, struct slab *slab, void *object)
{
	if (!check_slab(s, slab))
		return false;
	if (!check_valid_pointer(s, slab, object)) {
		object_err(s, slab, object, "Freelist Pointer check fails");
		return false;
	}
	return check_object(s, slab, object, SLUB_RED_INACTIVE);
}

static void trace(struct kmem_cache *s, struct slab *slab, void *object, bool alloc)
{
	union slab_counters c = read_counters(slab);
	slub_report_begin();
	slub_report_line("TRACE %s %s 0x%016lx inuse=%u fp=0x%016lx", s->name,
			 alloc ? "alloc" : "free", (unsigned long)object, c.inuse,
			 (unsigned long)slab->freelist);
	if (!alloc)
		print_section("Object ", object, s->object_size < 64 ? s->object_size : 64);
	slub_report_end();
}

/*
 * The object of a debug cache, *@done false if the cache is not one now
 * (slab_set_debug switched it off meanwhile): for slab_alloc_finish().
 */
static void *debug_alloc_locked(struct kmem_cache *s, gfp_t gfp, int node, unsigned int orig_size,
				const struct track_stack *ts, bool *done)
{
	/*
	 * The node asked for, or this CPU's; when it has no pages left, another
	 * (unless __GFP_THISNODE), as release mode's (slab_new_partial()).
	 */
	int searchnode = slab_search_node(node);
	struct kmem_cache_node *n = get_node(s, searchnode);
	struct slab *slab;
	void *object;

	*done = true;
	pthread_mutex_lock(&n->list_lock);
	if (unlikely(!kmem_cache_debug(s))) {	/* switched off meanwhile (slab_set_debug) */
		pthread_mutex_unlock(&n->list_lock);
		*done = false;
		return NULL;
	}
	for (;;) {
		if (list_empty(&n->partial)) {
			pthread_mutex_unlock(&n->list_lock);
			/* A new slab listed on its node, or a node with partial slabs. */
			if (!slab_new_partial(s, gfp, &searchnode))
				return NULL;	/* reported, errno ENOMEM */
			n = get_node(s, searchnode);
			pthread_mutex_lock(&n->list_lock);
			/*
			 * Switched to release mode meanwhile: a slab just made
			 * is of the new layout, listed already, and no switch
			 * comes while it exists.
			 */
			if (unlikely(!kmem_cache_debug(s))) {
				pthread_mutex_unlock(&n->list_lock);
				*done = false;
				return NULL;
			}
			continue;	/* another thread may have emptied it meanwhile */
		}
		slab = lru_slab(n->partial.next);
		object = slab->freelist;
		if (!object) {		/* emptied by a repair: it belongs on the full list */
			list_move_to(n, slab, true);
			continue;
		}
		if ((s->flags & SLAB_CONSISTENCY_CHECKS) && !alloc_consistency_checks(s, slab, object)) {
			mark_all_used(s, n, slab);
			continue;
		}
		break;
	}
	union slab_counters c = read_counters(slab);
	void *next = get_freepointer(s, object);
	c.inuse++;
	WRITE_ONCE(slab->freelist, next);
	__atomic_store_n(&slab->counters, c.counters, __ATOMIC_RELAXED);
	if (!next)
		list_move_to(n, slab, true);
	if (s->flags & SLAB_TRACE)
		trace(s, slab, object, true);
	set_orig_size(s, object, orig_size && orig_size < s->object_size ? orig_size :
			 s->object_size);
	/* As release mode's: a word that says "free" at free time is a double free. */
	object_mark_allocated(s, object);
	init_object(s, object, SLUB_RED_ACTIVE);
	set_track(s, object, TRACK_ALLOC, ts);
	pthread_mutex_unlock(&n->list_lock);
	return object;
}

void *debug_slab_alloc(struct kmem_cache *s, gfp_t gfp, int node, unsigned int orig_size)
{
	struct track_stack ts;
	bool done;

	track_capture(s, &ts, (uintptr_t)__builtin_return_address(0));
	kasan_quiet_begin();
	void *object = debug_alloc_locked(s, gfp, node, orig_size, &ts, &done);
	kasan_quiet_end();
	if (!done)
		return slab_alloc_finish(s, gfp, node, NULL);
	if (!object)
		return NULL;
	if (slab_kasan(s))	/* before __GFP_ZERO's memset, which ASan checks */
		kasan_alloc(s, object, get_orig_size(s, object));
	if (gfp & __GFP_ZERO)
		slab_zero_object(s, object);
	return object;
}

/*
 * Could @object be free already?  Its bytes say so when it has a red zone
 * (0xbb free, 0xcc in use) or poison (ending in 0xa5): only then is the
 * freelist walked for a double free, not on every free as the kernel does
 * (that walk was a third of sqlite's instructions under FZP).  A damaged
 * red zone counts as "maybe": the walk decides.  A bad freelist head is
 * still caught at the free, a bad link when the object before it is
 * allocated (check_object), wrong counts by validation.
 */
static bool may_be_free(const struct kmem_cache *s, const uint8_t *object)
{
	if (s->flags & SLAB_RED_ZONE)
		return object[s->object_size] != SLUB_RED_ACTIVE;
	if (s->flags & __OBJECT_POISON)
		return object[s->object_size - 1] == POISON_END;
	return true;
}

static bool free_consistency_checks(struct kmem_cache *s, struct slab *slab, void *object)
{
	if (!check_valid_pointer(s, slab, object)) {
		slab_err(s, slab, "Invalid object pointer 0x%016lx", (unsigned long)object);
		return false;
	}
	/* A bad head is the walk's to report and cut, before we link to it. */
	bool walk = may_be_free(s, object) || !check_valid_pointer(s, slab, slab->freelist);
	if (walk && on_freelist(s, slab, object)) {
		object_err(s, slab, object, "Object already free");
		return false;
	}
	if (!check_object(s, slab, object, SLUB_RED_ACTIVE))
		return false;
	if (slab->slab_cache != s) {
		object_err(s, slab, object, "page slab pointer corrupt.");
		return false;
	}
	return true;
}

/*
 * Every debug cache, F or not, keeps release mode's promise: a double free
 * is reported and ignored, never linked twice (which would hand the object
 * out twice).  Without F the object's word decides, as on the release
 * paths: set to "allocated" by debug_slab_alloc, it says "free" only if the
 * object was freed since, and the walk of the slab's freelist (a debug
 * slab's only one, under the list lock held here) confirms it.
 */
static bool free_checks(struct kmem_cache *s, struct slab *slab, void *object)
{
	if (s->flags & SLAB_CONSISTENCY_CHECKS)
		return check_slab(s, slab) && free_consistency_checks(s, slab, object);
	if (object_looks_free(s, object) && slab_freelist_holds(s, slab, object)) {
		object_err(s, slab, object, "Object already free");
		return false;
	}
	return true;
}

/* Free @object under the list lock: false if refused (reported already). */
static bool debug_free_locked(struct kmem_cache *s, struct slab *slab, void *object,
			      const struct track_stack *ts)
{
	struct kmem_cache_node *n = slab_node(s, slab);

	pthread_mutex_lock(&n->list_lock);
	if (!free_checks(s, slab, object)) {
		slab_fix(s, "Object at 0x%016lx not freed", (unsigned long)object);
		if (s->flags & SLAB_STORE_USER)	/* the program let it go: no leak of its */
			leak_note_refused(object, get_track(s, object, TRACK_ALLOC));
		pthread_mutex_unlock(&n->list_lock);
		return false;
	}
	/* Told before the object is on the freelist, where another thread may take it. */
	if (slab_kasan(s))
		kasan_free(s, object, false);
	set_track(s, object, TRACK_FREE, ts);
	if (s->flags & SLAB_TRACE)
		trace(s, slab, object, false);
	init_object(s, object, SLUB_RED_INACTIVE);
	if (slab_disabled(slab)) {	/* checked, poisoned, never handed out again */
		pthread_mutex_unlock(&n->list_lock);
		return true;
	}

	void *prior = slab->freelist;
	union slab_counters c = read_counters(slab);
	set_freepointer(s, object, prior);
	c.inuse--;
	WRITE_ONCE(slab->freelist, object);
	__atomic_store_n(&slab->counters, c.counters, __ATOMIC_RELAXED);
	if (!prior)
		list_move_to(n, slab, false);
	if (!c.inuse && n->nr_partial > READ_ONCE(s->min_partial)) {
		remove_partial(n, slab);
		pthread_mutex_unlock(&n->list_lock);
		slab_free_pages(s, slab);
		return true;
	}
	pthread_mutex_unlock(&n->list_lock);
	return true;
}

void debug_slab_free(struct kmem_cache *s, struct slab *slab, void *object)
{
	struct track_stack ts;

	track_capture(s, &ts, (uintptr_t)__builtin_return_address(0));
	kasan_quiet_begin();
	bool freed = debug_free_locked(s, slab, object, &ts);
	kasan_quiet_end();
	if (!freed && slab_kasan(s))
		kasan_free(s, object, true);	/* memcheck's report of it, with its stacks */
}

/* ---- validation ------------------------------------------------------------------- */

/* Check a slab and each object in it; stop at the first object found bad. */
static void validate_slab(struct kmem_cache *s, struct slab *slab)
{
	unsigned long free_map[SLAB_MAP_LONGS];
	if (slab_disabled(slab))
		return;		/* given up and reported already */
	if (!check_slab(s, slab) || !on_freelist(s, slab, NULL))
		return;
	union slab_counters c = read_counters(slab);
	slab_free_map(s, slab, free_map);
	for (unsigned int i = 0; i < c.objects; i++) {
		bool free = free_map[i / 64] & (1UL << (i % 64));
		if (!check_object(s, slab, slab_object_at(s, slab, i),
				  free ? SLUB_RED_INACTIVE : SLUB_RED_ACTIVE))
			break;
	}
}

static void validate_node(struct kmem_cache *s, struct kmem_cache_node *n)
{
	unsigned long partial = 0, full = 0;
	struct list_head *pos, *next;

	pthread_mutex_lock(&n->list_lock);
	kasan_quiet_begin();
	/* A repair may move a slab between the lists: walk each safely. */
	list_for_each_safe(pos, next, &n->partial) {
		validate_slab(s, lru_slab(pos));
		partial++;
	}
	if (partial != n->nr_partial) {
		slub_report_error("SLUB %s: %lu partial slabs counted but counter=%lu", s->name,
				  partial, n->nr_partial);
		slab_debug_errors++;
	}
	list_for_each_safe(pos, next, &n->full) {
		validate_slab(s, lru_slab(pos));
		full++;
	}
	/* A repair emptied a freelist: that slab belongs on the full list now. */
	list_for_each_safe(pos, next, &n->partial) {
		struct slab *slab = lru_slab(pos);
		if (!slab->freelist)
			list_move_to(n, slab, true);
	}
	/*
	 * A slab in transit (counted by allocate_slab, not yet listed by the
	 * thread that made it; or taken off a list, not yet given back) is on
	 * no list for a moment, so the counter may run ahead of the lists
	 * while others allocate: only a listed slab not counted is an error.
	 */
	if (partial + full > READ_ONCE(n->nr_slabs)) {
		slub_report_error("SLUB: %s %lu slabs counted but counter=%lu", s->name,
				  partial + full, READ_ONCE(n->nr_slabs));
		slab_debug_errors++;
	}
	kasan_quiet_end();
	pthread_mutex_unlock(&n->list_lock);
}

unsigned long debug_validate_cache(struct kmem_cache *s)
{
	unsigned long before = slab_debug_errors;
	for_each_kmem_cache_node(s, node, n)
		validate_node(s, n);
	return slab_debug_errors - before;
}

/* ---- krealloc and destroy ----------------------------------------------------------- */

void debug_krealloc(struct kmem_cache *s, void *object, size_t new_size, gfp_t gfp)
{
	struct kmem_cache_node *n = slab_node(s, virt_to_slab(object));
	pthread_mutex_lock(&n->list_lock);
	kasan_quiet_begin();
	unsigned int orig = get_orig_size(s, object);
	/* Open before the memsets below (ASan checks them), closed after them. */
	if (slab_kasan(s) && new_size > orig)
		kasan_resize(s, object, orig, (unsigned int)new_size);
	if (gfp & __GFP_ZERO) {
		if (orig < new_size)
			memset((char *)object + orig, 0, new_size - orig);
		else
			memset((char *)object + new_size, 0, s->object_size - new_size);
	}
	if (slub_debug_orig_size(s)) {
		set_orig_size(s, object, (unsigned int)new_size);
		if ((s->flags & SLAB_RED_ZONE) && new_size < s->object_size)
			memset((char *)object + new_size, SLUB_RED_ACTIVE,
			       s->object_size - new_size);
	}
	if (slab_kasan(s) && new_size <= orig)
		kasan_resize(s, object, orig, (unsigned int)new_size);
	kasan_quiet_end();
	pthread_mutex_unlock(&n->list_lock);
}

void debug_ksize(struct kmem_cache *s, void *object)
{
	if (!slub_debug_orig_size(s))
		return;
	struct kmem_cache_node *n = slab_node(s, virt_to_slab(object));
	pthread_mutex_lock(&n->list_lock);
	kasan_quiet_begin();
	unsigned int orig = get_orig_size(s, object);
	set_orig_size(s, object, s->object_size);
	kasan_quiet_end();
	if (slab_kasan(s) && orig != s->object_size)
		kasan_resize(s, object, orig, s->object_size);
	pthread_mutex_unlock(&n->list_lock);
}

static unsigned long list_slab_objects(struct kmem_cache *s, struct slab *slab, bool *header)
{
	unsigned long free_map[SLAB_MAP_LONGS], listed = 0;
	union slab_counters c = read_counters(slab);
	if (!c.inuse || slab_disabled(slab))
		return 0;
	slab_free_map(s, slab, free_map);
	if (!*header) {
		*header = true;
		slab_err(s, slab, "Objects remaining in %s on __kmem_cache_shutdown()", s->name);
	}
	for (unsigned int i = 0; i < c.objects; i++) {
		if (free_map[i / 64] & (1UL << (i % 64)))
			continue;
		void *p = slab_object_at(s, slab, i);
		slub_report_begin();
		slub_report_error("Object 0x%016lx @offset=%tu", (unsigned long)p,
				  (char *)p - (char *)slab_address(slab));
		slab_debug_errors++;
		print_tracking(s, p);
		slub_report_end();
		listed++;
	}
	return listed;
}

struct leak_walk {
	struct kmem_cache *s;
	unsigned long listed;
	bool header;
};

static void list_block_objects(struct page *head, void *arg)
{
	struct leak_walk *w = arg;
	if ((page_flags(head) & PG_slab) && READ_ONCE(head->compound_head) == (uintptr_t)w->s)
		w->listed += list_slab_objects(w->s, page_slab(head), &w->header);
}

/*
 * Every slab of the cache, whichever list it is on or none (a full slab
 * of a cache without debug flags is on none): walk the memory map.  The
 * cache is being destroyed, so nothing else changes its slabs.
 */
unsigned long debug_list_leaks(struct kmem_cache *s)
{
	struct leak_walk w = { s, 0, false };
	for_each_kmem_cache_node(s, node, n)
		pthread_mutex_lock(&n->list_lock);
	kasan_quiet_begin();
	page_for_each_block(list_block_objects, &w);
	kasan_quiet_end();
	for_each_kmem_cache_node(s, node, n)
		pthread_mutex_unlock(&n->list_lock);
	return w.listed;
}

/* ---- switching debug flags at run time -------------------------------------------- */

static void hold_cache(struct kmem_cache *s, bool lock)
{
	if (lock)
		pthread_mutex_lock(&slab_cpus.lock);	/* no slot comes into use meanwhile */
	for_each_used_cpu(cpu, &slab_cpus, s->nr_cpu_slots)
		os_mutex_hold(&cpu_slot(s, cpu)->lock, lock);
	for_each_kmem_cache_node(s, node, n)
		os_mutex_hold(&n->list_lock, lock);
	if (!lock)
		pthread_mutex_unlock(&slab_cpus.lock);
}

/*
 * Turn @flag on or off, as the attribute writes of 2.6.22 did: only while
 * the cache has no slab (the layout changes), never on a merged cache.
 * Every slot lock and the list lock are held while the layout is computed
 * again, so no allocation runs meanwhile; the slow paths look at the flags
 * again once they hold their lock.
 */
int slab_set_debug(struct kmem_cache *s, slab_flags_t flag, bool on)
{
	if (READ_ONCE(s->refcount) > 1 || s->aliases)
		return -EINVAL;
	if (!on == !(READ_ONCE(s->flags) & flag))
		return 0;
	__kmem_cache_shrink(s);		/* flushes the CPUs, frees empty slabs */
	hold_cache(s, true);
	int ret = 0;
	/* The switch's side of layout_hold() (slub.c): busy first, then makers, then slabs. */
	__atomic_store_n(&s->layout_busy, 1, __ATOMIC_SEQ_CST);
	bool busy = false;
	for_each_kmem_cache_node(s, node, n)
		busy |= __atomic_load_n(&n->nr_building, __ATOMIC_SEQ_CST) ||
			__atomic_load_n(&n->nr_slabs, __ATOMIC_ACQUIRE);
	if (busy) {
		ret = -EBUSY;
	} else {
		/*
		 * calculate_sizes()'s inputs only: a copy of the whole cache
		 * would read counters other threads write (TSan saw it).
		 */
		struct kmem_cache laid_out = {
			.flags = on ? s->flags | flag : s->flags & ~flag,
			.object_size = s->object_size,
			.align = s->align,
			.ctor = s->ctor,
			.freeptr_offset = s->freeptr_offset,
			.use_freeptr_offset = s->use_freeptr_offset,
			.max_order = s->max_order,
		};
		if (!calculate_sizes(&laid_out)) {
			ret = -EINVAL;
		} else {
			s->size = laid_out.size;
			WRITE_ONCE(s->offset, laid_out.offset);	/* get_freepointer_safe() reads it racily */
			s->inuse = laid_out.inuse;
			s->red_left_pad = laid_out.red_left_pad;
			s->reciprocal_size = laid_out.reciprocal_size;
			s->oo = laid_out.oo;
			s->min = laid_out.min;
			s->allocflags = laid_out.allocflags;
			WRITE_ONCE(s->flags, laid_out.flags);
			/* Sheaves off with debug on (the slots' empty sheaves go below), back with it off. */
			sheaf_setup(s);
			tsheaf_setup(s);	/* none with debug on: the cache has no slab, so no sheaf holds one */
			if (!s->sheaf_capacity)
				sheaf_retire_all(s);
			/* min_partial stays: it may be the user's (the attribute). */
			set_cpu_partial(s);
			WRITE_ONCE(s->layout_gen, s->layout_gen + 1);
		}
	}
	__atomic_store_n(&s->layout_busy, 0, __ATOMIC_RELEASE);
	hold_cache(s, false);
	if (!ret && !s->sheaf_capacity)
		sheaf_teardown(s);
	return ret;
}
