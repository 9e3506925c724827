// SPDX-License-Identifier: MIT
/*
 * slub.c - the SLUB engine: slabs, the slow allocation path, frees outside
 * the cpu slab, per-CPU and per-node partial lists, flushing and shrinking.
 * The lock order, the slab states and the per-CPU protocol are described at
 * the top of slab.h; the fast paths are inline there.
 *
 * Slow allocation path, in the kernel's order (___slab_alloc):
 *   1. objects that landed on the CPU freelist since the fast path looked
 *   2. the cpu slab's own freelist (remote frees), taken whole
 *   3. a slab from this CPU's partial list
 *   4. a slab from the node's partial list (more go to the CPU's list)
 *   5. a new slab from the page allocator
 */
#define _GNU_SOURCE
#include "slab/core/slab.h"
#include "slab/debug/slab_debug.h"
#include "slab/core/slab_harden.h"
#include "slab/debug/kfence.h"
#include "slab/debug/slab_kasan.h"
#include "slab/rcu/rcu.h"

#include <errno.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/random.h>
#include <time.h>

#include "base/start.h"
#include "base/fault_inject.h"
#include "base/options.h"
#include "base/report.h"
#include "page/page_alloc.h"

/*
 * slab_lock() and slab_unlock() (slab.h): while the process has one
 * thread (os_single_threaded), nothing else can
 * touch a slab's freelist, a CPU slot or a partial list: the hot slow paths
 * then take neither c->lock nor list_lock, and change freelist+counters and
 * the retired slot's freelist with plain loads and stores, as glibc's
 * malloc skips its locks when single-threaded (slab flag bits and counters
 * keep their atomics, as does the cmpxchg16b mode's slot protocol).  The
 * saving is more than the instructions' cost: a locked instruction waits
 * for every store before it, and a free outside the cpu slab has just
 * written the free pointer into an object that, in a big heap, is rarely
 * cached (bench_churn, 3M objects: 434 -> 265 ns per random replacement
 * with the free's prefetch).  The flag turns false only in this thread's
 * own pthread_create(), which nothing between a slab_lock() and its
 * slab_unlock() calls, so a section that skipped the one skips the other;
 * pthread_create() publishes every plain store made before it.  Cold paths
 * (flush, shrink, validation) lock always: skipping a lock some other
 * section took for real is harmless with one thread.  As in glibc, a
 * thread made with a raw clone() that then allocates is not supported:
 * glibc does not know of it, so neither do we.
 */
static void free_to_slab(struct kmem_cache *s, struct slab *slab, void *object);

static bool slab_update_freelist(struct kmem_cache *s, struct slab *slab, void *old_freelist,
				 unsigned long old_counters, void *new_freelist,
				 unsigned long new_counters)
{
	if (os_single_threaded()) {
		if (slab->freelist != old_freelist || slab->counters != old_counters)
			return false;
		slab->freelist = new_freelist;
		slab->counters = new_counters;
		return true;
	}
	if (cmpxchg_double(&slab->freelist, old_freelist, old_counters, new_freelist, new_counters))
		return true;
	stat(s, CMPXCHG_DOUBLE_FAIL);
	return false;
}

void slab_zero_object(struct kmem_cache *s, void *object)
{
	if (s->ctor) {
		/* Constructed state wins over zeroing, as in the kernel. */
		if (!__atomic_exchange_n(&s->ctor_zero_warned, true, __ATOMIC_RELAXED))
			slub_report("WARNING %s: __GFP_ZERO on a cache with a constructor; not zeroed",
				    s->name);
	} else {
		/* A debug kmalloc object: not the red zone past the size asked for. */
		memset(object, 0, kmem_cache_debug(s) ? get_orig_size(s, object) : s->object_size);
	}
}

/* ---- encoded free pointers (slab.h) ------------------------------------------ */

/* The tag alone until slab_fp_init(), which runs before the first slab. */
uintptr_t slab_fp_key = 0xa5c0000000000000UL;
const uintptr_t slab_fp_tag = SLAB_FP_TAG;

/*
 * The key's tag (top 17 bits): bit 63 set, so no pointer, no small or
 * positive integer and no ASCII text carries it, and the top byte below
 * 0xf0, so neither do -1 nor small negative integers.  Its low 47 bits are
 * random (getrandom, else the kernel's AT_RANDOM bytes and the clock), so
 * what one process's freelists hold means nothing in another.
 */
void slab_fp_init(void)
{
	uint64_t r = 0;
	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r)) {
		const uint64_t *at = (const uint64_t *)getauxval(AT_RANDOM);
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		r = (at ? at[1] : 0) ^ (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ULL;
	}
	uint64_t top = 0x80 | ((r >> 56) % 0x70);		/* 0x80 .. 0xef */
	slab_fp_key = (top << 56) | (r & ((1UL << 56) - 1));
}

/* ---- node partial list (list_lock held) ------------------------------------- */

/* ---- slabs from and to the page allocator ------------------------------------ */

static void slab_out_of_memory(struct kmem_cache *s, gfp_t gfp)
{
	static struct slub_ratelimit rs;
	if ((gfp & __GFP_NOWARN) || !slub_ratelimit(&rs))
		return;
	slub_warn("SLUB: Unable to allocate memory on node -1, gfp=%#x", gfp);
	slub_report_cont("  cache: %s, object size: %u, buffer size: %u, default order: %u, min order: %u",
			 s->name, s->object_size, s->size, oo_order(s->oo), oo_order(s->min));
}

/* The object pointer of the @i-th object (after the left red zone). */
static void *object_at(struct kmem_cache *s, void *start, unsigned int i)
{
	return (char *)start + (size_t)i * s->size + s->red_left_pad;
}

/*
 * Where the next lazy link-up of a slab ends: every object whose free
 * pointer lies in the page that holds object @start's (at least that one).
 * Linking writes the pointers; an object that crosses into the next page
 * with its pointer there waits for the next link-up, so that page stays
 * untouched until an object in it is handed out (a cache of 1664-byte
 * objects used by one object holds one page, not two).
 */
static unsigned int build_end(struct kmem_cache *s, unsigned int start, unsigned int objects)
{
	size_t fp0 = s->red_left_pad + s->offset;	/* object 0's free pointer */
	size_t page_end = (((size_t)start * s->size + fp0) | (PAGE_SIZE - 1)) + 1;
	size_t end = (page_end - sizeof(void *) - fp0) / s->size + 1;
	return end < objects ? (unsigned int)end : objects;
}

/*
 * Link objects [start, end) of @slab in order; returns the first.  If the
 * slab's pages came untouched (PG_fresh), the page object @start's free
 * pointer lies in is faulted in first with one call: the link-up writes
 * there at once, and an object the next page holds only in part is linked
 * by the next link-up, so each call brings one page in.
 */
static void *link_objects(struct kmem_cache *s, struct slab *slab, unsigned int start,
			  unsigned int end)
{
	void *base = slab_address(slab);
	if (slab_flags(slab) & PG_fresh) {
		uintptr_t fp = (uintptr_t)object_at(s, base, start) + s->offset;
		os_populate((void *)(fp & ~(PAGE_SIZE - 1)), PAGE_SIZE);
	}
	for (unsigned int i = start; i < end; i++)
		set_freepointer(s, object_at(s, base, i), i + 1 < end ? object_at(s, base, i + 1) : NULL);
	return object_at(s, base, start);
}

#ifdef SLUB_PAGEMAP
struct slab **pagemap_root[PAGEMAP_ROOT_ENTRIES];

bool pagemap_set(uintptr_t start, unsigned int order, struct slab *slab)
{
	struct slab ***root = &pagemap_root[start >> PAGEMAP_LEAF_SHIFT];
	struct slab **leaf = __atomic_load_n(root, __ATOMIC_ACQUIRE);
	if (unlikely(!leaf)) {
		if (!slab)
			return true;	/* nothing was ever named here */
		/* Mapped outside any lock: two makers race, the loser unmaps its own. */
		struct slab **mine = os_map_sparse(PAGEMAP_LEAF_BYTES);
		if (!mine)
			return false;
		if (__atomic_compare_exchange_n(root, &leaf, mine, false, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE))
			leaf = mine;
		else
			os_release(mine, PAGEMAP_LEAF_BYTES);
	}
	size_t first = pagemap_index(start);
	for (size_t i = 0; i < (1UL << order); i++)
		__atomic_store_n(&leaf[first + i], slab, __ATOMIC_RELAXED);
	return true;
}
#endif

/*
 * A slab is made from one reading of the layout (size, offset, flags,
 * objects: slab_set_debug changes them together).  nr_building and
 * layout_busy are a pair of Dekker flags: the maker counts itself, then
 * looks for a switch under way; the switch raises layout_busy, then looks
 * for makers and slabs.  Sequentially consistent, so one of the two sees
 * the other: the maker waits (the switch holds the list lock throughout),
 * or the switch is refused.  Called with none of the cache's locks held.
 */
static void layout_hold(struct kmem_cache *s, struct kmem_cache_node *n)
{
	for (;;) {
		__atomic_add_fetch(&n->nr_building, 1, __ATOMIC_SEQ_CST);
		if (likely(!__atomic_load_n(&s->layout_busy, __ATOMIC_SEQ_CST)))
			return;
		__atomic_sub_fetch(&n->nr_building, 1, __ATOMIC_SEQ_CST);
		pthread_mutex_lock(&n->list_lock);	/* until the switch is over */
		pthread_mutex_unlock(&n->list_lock);
	}
}

/* Release: a switch that sees the count drop sees the slab in nr_slabs. */
static void layout_release(struct kmem_cache_node *n)
{
	__atomic_sub_fetch(&n->nr_building, 1, __ATOMIC_RELEASE);
}

static struct slab *__allocate_slab(struct kmem_cache *s, gfp_t gfp, int node);

/* May an allocation with @gfp take another node's slab (its node has no pages left)? */
static inline bool may_fall_back(gfp_t gfp)
{
	return !(gfp & __GFP_THISNODE) && nr_node_ids > 1;
}

/* A try that may fail (the retry is the caller's): __GFP_NOFAIL's exemption from fail_page_alloc kept. */
static inline gfp_t failable(gfp_t gfp)
{
	return gfp & __GFP_NOFAIL ? (gfp & ~__GFP_NOFAIL) | __GFP_NOINJECT : gfp;
}

/*
 * A new slab on *@node, or on this CPU's for NUMA_NO_NODE: the node is
 * chosen here, once, so that the list counted and the page's node agree
 * even if the thread moves meanwhile (the page allocator takes it as is).
 * *@node becomes that node.  One call of __allocate_slab(), which stays
 * inlined.  When another node may serve instead (may_fall_back), a failure
 * here is no end: __GFP_NOFAIL waits in allocate_slab_elsewhere(), over
 * every node, not on this one alone.
 */
static struct slab *allocate_slab(struct kmem_cache *s, gfp_t gfp, int *node)
{
	int home = slab_search_node(*node);
	struct kmem_cache_node *n = get_node(s, home);
	if (may_fall_back(gfp))
		gfp = failable(gfp);
	layout_hold(s, n);
	struct slab *slab = __allocate_slab(s, gfp, home);
	layout_release(n);
	*node = home;
	return slab;
}

/*
 * After allocate_slab() found @home without pages, and the caller found no
 * partial slab on any node: a new slab on the next node that has pages, as
 * the kernel's ___slab_alloc() falls back (held and counted there; *@node
 * becomes it).  __GFP_NOFAIL goes round every node until one has some.
 */
static __noinline struct slab *allocate_slab_elsewhere(struct kmem_cache *s, gfp_t gfp, int home,
						       int *node)
{
	gfp_t each = failable(gfp) | __GFP_THISNODE | __GFP_NOWARN;
	for (bool warned = false;; warned = true) {
		for (unsigned int i = 1; i <= nr_node_ids; i++) {	/* home last */
			*node = node_after(home, i);
			struct slab *slab = allocate_slab(s, each, node);
			if (slab)
				return slab;
		}
		if (!(gfp & __GFP_NOFAIL))
			return NULL;
		static struct slub_ratelimit rs;
		if (!warned && slub_ratelimit(&rs))
			slub_warn("%s: __GFP_NOFAIL slab allocation failed on every node; retrying "
				  "until memory is freed", s->name);
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
	}
}

/* A node other than @home with partial slabs, or NUMA_NO_NODE. */
static int node_with_partial(struct kmem_cache *s, int home)
{
	for (unsigned int i = 1; i < nr_node_ids; i++) {
		int node = node_after(home, i);
		if (READ_ONCE(get_node(s, node)->nr_partial))
			return node;
	}
	return NUMA_NO_NODE;
}

static struct slab *__allocate_slab(struct kmem_cache *s, gfp_t gfp, int node)
{
	struct kmem_cache_order_objects oo = { READ_ONCE(s->oo.x) };	/* order may be written */
	gfp_t flags = (gfp & ~__GFP_ZERO) | s->allocflags | __GFP_COMP;
	struct slab *slab;

	/*
	 * The allocator's own caches (refcount -1: the boot cache of cache
	 * descriptors, the sheaves') take no injected failure (fail_page_alloc
	 * skips __GFP_NOINJECT), but may fail for real.
	 */
	if (unlikely(s->refcount < 0))
		flags |= __GFP_NOINJECT;
	/*
	 * A slab is of the node it is made for: that node's counts and lists,
	 * and the refills that follow (sheaves), assume so.  The page
	 * allocator's fallback to another node stays off here.
	 */
	flags |= __GFP_THISNODE;

	/*
	 * Try the preferred order quietly, then the smallest that fits one;
	 * __GFP_NOFAIL retries only there (page_alloc.c).
	 */
	gfp_t quiet = flags | __GFP_NOWARN;
	if (oo_order(s->min) < oo_order(oo))
		quiet &= ~__GFP_NOFAIL;
	struct page *page = alloc_pages_node(node, quiet, oo_order(oo));
	if (unlikely(!page) && oo_order(s->min) < oo_order(oo)) {
		oo = s->min;
		stat(s, ORDER_FALLBACK);
		page = alloc_pages_node(node, flags | __GFP_NOWARN, oo_order(oo));
	}
	if (unlikely(!page))
		return NULL;
	slab = page_slab(page);

	unsigned int objects = oo_objects(oo);
	void *start = slab_address(slab);
#ifdef SLUB_PAGEMAP
	/* Before the cache is set: no object is handed out unnamed. */
	if (unlikely(!pagemap_set((uintptr_t)start, oo_order(oo), slab))) {
		__free_pages(page, oo_order(oo));
		return NULL;
	}
#endif
	/*
	 * A cache that already holds populate_slabs slabs will fill this one
	 * too: fault it in with one call, not page by page as the lazy link-up
	 * and the objects' users reach each page.  A fault costs some 0.5 us
	 * on bare metal and 10 us in the virtual machines our CI runs on
	 * (bench/machine_faults), where the call costs 0.45 us a page: sqlite
	 * runs 6% faster there.  A cache's first slabs stay lazy, so a small
	 * process keeps one touched page per class; but each of their pages
	 * the link-up reaches untouched is faulted in by a call of its own
	 * (link_objects), which costs 2.5 us there against the fault's 11.
	 */
	struct kmem_cache_node *n = get_node(s, node);
	bool debug = kmem_cache_debug(s);
	if (slab_flags(slab) & PG_fresh) {
		bool whole = s->ctor || debug || slub_freelist_random || (s->populate_slabs &&
					 __atomic_load_n(&n->nr_slabs, __ATOMIC_RELAXED) >=
						 s->populate_slabs);
		if (whole)
			os_populate(start, PAGE_SIZE << oo_order(oo));	/* a constructor writes all */
		if (whole || !slub_opt(populate_pages))
			__atomic_and_fetch(&slab->flags, ~PG_fresh, __ATOMIC_RELAXED);
	}
	/*
	 * Constructors run once per object, here, never on reuse: here, since
	 * a constructor may allocate and the lazy link-up runs under c->lock.
	 * Without one only the first page is linked (slab.h, "built").
	 */
	bool shuffle = unlikely(slub_freelist_random);	/* linked whole, in a random order */
	unsigned int built = s->ctor || debug || shuffle ? objects : build_end(s, 0, objects);
	if (debug)
		setup_slab_debug(s, slab, objects);	/* before the constructor, as the kernel */
	if (s->ctor)
		for (unsigned int i = 0; i < objects; i++)
			s->ctor(object_at(s, start, i));
	union slab_counters c = { .counters = 0 };
	c.objects = objects;
	c.built = built;
	slab->counters = c.counters;
	void *first = shuffle ? slab_shuffle_freelist(s, start, objects) : NULL;
	slab->freelist = first ? first : link_objects(s, slab, 0, built);
	if (slab_kasan(s))	/* built: no object is the program's yet */
		kasan_slab_new(s, start, PAGE_SIZE << oo_order(oo));
	/* A set slab_cache is what makes the page a slab to object_slab(). */
	__atomic_store_n(&slab->slab_cache, s, __ATOMIC_RELEASE);
	__atomic_or_fetch(&slab->flags, PG_slab, __ATOMIC_RELEASE);

	__atomic_add_fetch(&n->nr_slabs, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&n->total_objects, objects, __ATOMIC_RELAXED);
	unsigned long pages = __atomic_add_fetch(&n->total_pages, 1UL << oo_order(oo),
						 __ATOMIC_RELAXED);
	atomic_max_ulong(&n->peak_pages, pages);
	if (s->flags & SLAB_KMALLOC)
		slub_malloc_slab_grown(s, pages);
	return slab;
}

__attribute__((weak)) void slub_malloc_slab_grown(struct kmem_cache *s, unsigned long total_pages)
{
	(void)s;
	(void)total_pages;
}

static void discard_slab(struct kmem_cache *s, struct slab *slab)
{
	struct kmem_cache_node *n = slab_node(s, slab);
	unsigned int objects = read_counters(slab).objects;

	/* Release: a switch that sees the slab gone saw our reads of its layout (slab_pad_check). */
	__atomic_sub_fetch(&n->nr_slabs, 1, __ATOMIC_RELEASE);
	__atomic_sub_fetch(&n->total_objects, objects, __ATOMIC_RELAXED);
	__atomic_sub_fetch(&n->total_pages, 1UL << slab->order, __ATOMIC_RELAXED);
	stat(s, FREE_SLAB);
#ifdef SLUB_PAGEMAP
	/* Before the descriptors: no entry outlives the slab (pagemap.h). */
	pagemap_set((uintptr_t)slab_address(slab), slab->order, NULL);
#endif
	/* The head as the page allocator left it (the link entry is nobody's now). */
	WRITE_ONCE(slab->slab_cache, NULL);
	slab->freelist = NULL;
	slab->counters = 0;
	__atomic_and_fetch(&slab->flags, ~(PG_slab | PG_slab_partial | PG_slab_disabled),
			   __ATOMIC_RELEASE);
	if (slab_kasan(s))
		kasan_slab_gone(s, slab_address(slab), PAGE_SIZE << slab->order);
	/* Readers under rcu_read_lock() may still look: the pages wait (rcu.h).  Never switched. */
	if (unlikely(READ_ONCE(s->flags) & SLAB_TYPESAFE_BY_RCU))
		slab_rcu_free_slab(s, slab);
	else
		__free_pages(slab_page(slab), slab->order);
}

void slab_free_pages(struct kmem_cache *s, struct slab *slab)
{
	if (s->flags & SLAB_CONSISTENCY_CHECKS) {
		kasan_quiet_begin();
		slab_pad_check(s, slab);
		kasan_quiet_end();
	}
	discard_slab(s, slab);
}

/* Free a chain (via slab_next()) of empty slabs, with no list lock held. */
static void discard_slabs(struct kmem_cache *s, struct slab *list)
{
	while (list) {
		struct slab *slab = list;
		list = slab_next(slab);
		discard_slab(s, slab);
	}
}

/*
 * Does node @n keep @slab, now empty, on its partial list?  The kernel's
 * rule: while the list is shorter than min_partial.  kmalloc's and malloc's
 * caches keep up to slub_partial_keep_kb of slabs there, so that a burst of
 * objects freed and allocated again does not unmake and remake its slabs
 * each time; the decay thread trims them back (slab_trim_partial).  List
 * lock held.
 */
static unsigned long node_keep_slabs(struct kmem_cache *s, unsigned int order)
{
	unsigned long keep = READ_ONCE(s->min_partial);
	if (READ_ONCE(s->flags) & SLAB_KMALLOC) {
		unsigned long bytes = (unsigned long)slub_opt(partial_keep_kb) << 10;
		unsigned long slabs = bytes >> (PAGE_SHIFT + order);
		if (slabs > keep)
			keep = slabs;
	}
	return keep;
}

static bool node_keeps_empty(struct kmem_cache *s, struct kmem_cache_node *n,
			     const struct slab *slab)
{
	return n->nr_partial < node_keep_slabs(s, slab->order);
}

/* ---- freezing and unfreezing --------------------------------------------------- */

/*
 * Take the whole freelist of a slab and freeze it (it becomes a cpu slab),
 * or leave it unfrozen and full if it has no free object.  An empty
 * freelist with unlinked objects left claims the next page of them, which
 * only the caller can reach: it alone may take this slab's freelist (its
 * CPU slot's lock, or the slab just came off a partial list).
 */
static void *take_freelist(struct kmem_cache *s, struct slab *slab, bool freeze_if_empty,
			   unsigned int *link_from, unsigned int *link_to)
{
	void *freelist;
	union slab_counters old, new;

	do {
		freelist = __atomic_load_n(&slab->freelist, __ATOMIC_ACQUIRE);
		old = read_counters(slab);
		new = old;
		if (!freelist && old.built < old.objects)
			new.built = build_end(s, old.built, old.objects);
		new.inuse = new.built;
		new.frozen = freelist || new.built != old.built || freeze_if_empty;
	} while (!slab_update_freelist(s, slab, freelist, old.counters, NULL, new.counters));
	*link_from = old.built;
	*link_to = new.built;
	return freelist;
}

/* The freelist take_freelist() claimed: [from, to) linked now, if any. */
static void *claimed_freelist(struct kmem_cache *s, struct slab *slab, void *freelist,
			      unsigned int from, unsigned int to)
{
	return from < to ? link_objects(s, slab, from, to) : freelist;
}

static void *get_freelist(struct kmem_cache *s, struct slab *slab, bool freeze_if_empty)
{
	unsigned int from, to;
	void *freelist = take_freelist(s, slab, freeze_if_empty, &from, &to);
	return claimed_freelist(s, slab, freelist, from, to);
}

/*
 * Return a cpu slab to the lists: the CPU's leftover freelist goes back
 * into the slab, which is unfrozen and then discarded (empty, enough
 * partial slabs), put on the node partial list, or forgotten (full).
 */
static void deactivate_slab(struct kmem_cache *s, struct slab *slab, void *freelist)
{
	struct kmem_cache_node *n = slab_node(s, slab);
	unsigned int free_delta = 0;
	void *tail = NULL;
	union slab_counters old, new;
	void *old_freelist;

	/*
	 * The CPU freelist's objects were free-pointer checked one by one as
	 * they reached its head; those below were not.  Check them before
	 * they go back: a corrupt pointer cuts the list there, and the objects
	 * after it stay counted in use, lost but harmless.
	 */
	if (freelist) {
		uintptr_t start = (uintptr_t)slab_address(slab);
		unsigned int objects = read_counters(slab).objects;
		for (void *p = freelist; p;) {
			void *next = get_freepointer(s, p);
			tail = p;
			free_delta++;
			if (unlikely(next && (!slab_object_valid_at(s, slab, start, next) ||
					      free_delta >= objects))) {
				slab_corrupt_freepointer(s, slab, p, next);
				set_freepointer(s, p, NULL);
				break;
			}
			p = next;
		}
	}
	do {
		old_freelist = __atomic_load_n(&slab->freelist, __ATOMIC_ACQUIRE);
		old = read_counters(slab);
		new = old;
		new.frozen = 0;
		if (tail) {
			set_freepointer(s, tail, old_freelist);
			new.inuse -= free_delta;
		}
	} while (!slab_update_freelist(s, slab, old_freelist, old.counters,
				       tail ? freelist : old_freelist, new.counters));

	bool has_free = tail || old_freelist || old.built < old.objects;
	if (old_freelist)
		stat(s, DEACTIVATE_REMOTE_FREES);
	slab_lock(&n->list_lock);
	if (!new.inuse && !node_keeps_empty(s, n, slab)) {
		slab_unlock(&n->list_lock);
		stat(s, DEACTIVATE_EMPTY);
		discard_slab(s, slab);
		return;
	}
	if (has_free)
		add_partial(n, slab, true);
	slab_unlock(&n->list_lock);
	stat(s, has_free ? DEACTIVATE_TO_TAIL : DEACTIVATE_FULL);
}

/*
 * Move a chain of cpu partial slabs (unfrozen) to their nodes, freeing
 * empties.  A chain may mix nodes: each node's lock is held over its run.
 */
static void put_partials(struct kmem_cache *s, struct slab *list)
{
	struct kmem_cache_node *n = NULL;
	struct slab *discard = NULL;

	while (list) {
		struct slab *slab = list;
		list = slab_next(slab);
		slab_next(slab) = NULL;
		if (n != slab_node(s, slab)) {
			if (n)
				slab_unlock(&n->list_lock);
			n = slab_node(s, slab);
			slab_lock(&n->list_lock);
		}
		if (!read_counters(slab).inuse && !node_keeps_empty(s, n, slab)) {
			slab_next(slab) = discard;
			discard = slab;
		} else {
			add_partial(n, slab, true);
		}
	}
	if (n)
		slab_unlock(&n->list_lock);
	discard_slabs(s, discard);
}

/*
 * This CPU's slot, locked.  A slot index is added to slab_cpus before its
 * first lock (one test afterwards), so that every walk of the slots (fork,
 * flush, validation, figures) sees each slot ever locked, and only those.
 */
struct kmem_cache_cpu *slab_lock_cpu_slot(struct kmem_cache *s, unsigned int *cpup)
{
	unsigned int cpu = this_cpu_slot(s);
	os_cpu_use(&slab_cpus, cpu);
	struct kmem_cache_cpu *c = cpu_slot(s, cpu);
	slab_lock(&c->lock);
	if (cpup)
		*cpup = cpu;
	return c;
}

/* A slab that was full got a free object: keep it on this CPU's partial list. */
static void put_cpu_partial(struct kmem_cache *s, struct slab *slab)
{
	struct kmem_cache_cpu *c = slab_lock_cpu_slot(s, NULL);
	struct slab *flush = NULL;

	if (unlikely(!READ_ONCE(s->cpu_partial_slabs))) {
		/* Turned off since the caller looked (a debug switch): the node's list. */
		slab_unlock(&c->lock);
		slab_next(slab) = NULL;
		put_partials(s, slab);
		return;
	}
	if (c->nr_partial >= READ_ONCE(s->cpu_partial_slabs)) {
		/* Full: the old list goes to the node, this slab starts anew. */
		flush = c->partial;
		c->partial = NULL;
		c->nr_partial = 0;
		stat(s, CPU_PARTIAL_DRAIN);
	}
	stat(s, CPU_PARTIAL_FREE);
	slab_next(slab) = c->partial;
	c->partial = slab;
	c->nr_partial++;
	slab_unlock(&c->lock);
	if (flush)
		put_partials(s, flush);
}

/* ---- the CPU slot protocol (c->lock held) ---------------------------------------- */

intptr_t slub_percpu_rseq;
intptr_t slub_fastpath_area;
struct os_cpu_set slab_cpus = OS_CPU_SET_INIT;

#if SLUB_HAVE_RSEQ_ASM
/* cmpxchg16b mode's stand-in for an rseq area: cpu_id names no slot. */
static __thread struct {
	uint32_t cpu_id_start, cpu_id;
	uint64_t rseq_cs;
} parked_rseq_area __attribute__((aligned(32), tls_model("initial-exec"))) = {
	.cpu_id_start = ~0u, .cpu_id = ~0u,
};

/* The parked area's offset from the thread pointer: the same in every thread. */
static intptr_t parked_area_offset(void)
{
	return (intptr_t)((uintptr_t)&parked_rseq_area - os_thread_pointer());
}
#endif

void slab_alloc_divert(bool on)
{
	/* Hooked before diverted, restored after: a diverted allocation finds the hook. */
	if (on)
		WRITE_ONCE(slab_alloc_hooked, true);
#if SLUB_HAVE_RSEQ_ASM
	if (slub_percpu_rseq)
		WRITE_ONCE(slub_fastpath_area, on ? parked_area_offset() : slub_percpu_rseq);
#endif
	if (!on)
		WRITE_ONCE(slab_alloc_hooked, false);
}

void slab_set_percpu_mode(intptr_t rseq_offset)
{
	slub_percpu_rseq = rseq_offset;
	slab_free_direct = rseq_offset || slab_free_hooked;
#if SLUB_HAVE_RSEQ_ASM
	slub_fastpath_area = rseq_offset ? rseq_offset : parked_area_offset();
#endif
}
/*
 * None yet: the first use asks.  The model is repeated here because the
 * definition's own (the default, local-dynamic in a shared library) would
 * win, and every fast path without rseq would call __tls_get_addr.
 */
__thread unsigned int slab_cpu_hint __attribute__((tls_model("initial-exec"))) = ~0u;

/*
 * Retire the slot of @cpu: after this no fast path commits on it until it
 * is published.  Returns the CPU freelist, which the caller now owns.
 */
static void *retire_slot(struct kmem_cache_cpu *c, unsigned int cpu, unsigned long *tid)
{
#if SLUB_HAVE_RSEQ_ASM
	if (slub_percpu_rseq) {
		/* On @cpu: mark in a sequence.  Elsewhere: mark, then restart @cpu's. */
		if (!rseq_slot_mark(slub_percpu_rseq, &c->tid, cpu)) {
			__atomic_fetch_or(&c->tid, 1, __ATOMIC_SEQ_CST);
			/* With one thread, here, no sequence runs on @cpu. */
			if (!os_single_threaded())
				os_membarrier_rseq(cpu);
		}
		*tid = __atomic_load_n(&c->tid, __ATOMIC_ACQUIRE);
		if (os_single_threaded()) {
			void *freelist = c->freelist;
			c->freelist = NULL;
			return freelist;
		}
		return __atomic_exchange_n(&c->freelist, NULL, __ATOMIC_ACQ_REL);
	}
#else
	(void)cpu;
#endif
	for (;;) {
		unsigned long t = __atomic_load_n(&c->tid, __ATOMIC_ACQUIRE);
		void *f = __atomic_load_n(&c->freelist, __ATOMIC_ACQUIRE);
		if (cmpxchg_double(&c->freelist, f, t, NULL, t + 1)) {
			*tid = t + 1;
			return f;
		}
	}
}

/* Install @slab and publish @freelist: the slot is live (even tid) again. */
static void publish_slot(struct kmem_cache_cpu *c, unsigned long tid, struct slab *slab,
			 void *freelist)
{
	__atomic_store_n(&c->slab, slab, __ATOMIC_RELEASE);
	if (slub_percpu_rseq) {
		/* Marked: nobody else writes the slot; the tid store reopens it. */
		__atomic_store_n(&c->freelist, freelist, __ATOMIC_RELEASE);
		__atomic_store_n(&c->tid, tid + 1, __ATOMIC_RELEASE);
		return;
	}
	if (!cmpxchg_double(&c->freelist, NULL, tid, freelist, tid + 1))
		slub_report("BUG: cpu slot changed while retired (tid %lu)", tid);
}

/* Unfreeze everything a slot holds: cpu slab and cpu partial list. */
static void flush_slot(struct kmem_cache *s, unsigned int cpu)
{
	struct kmem_cache_cpu *c = cpu_slot(s, cpu);
	unsigned long tid;
	pthread_mutex_lock(&c->lock);
	/* The slab only changes under the lock, and a CPU freelist needs one. */
	if (!c->slab && !c->partial) {
		pthread_mutex_unlock(&c->lock);
		return;
	}
	void *freelist = retire_slot(c, cpu, &tid);
	struct slab *slab = c->slab;
	struct slab *partial = c->partial;
	c->partial = NULL;
	c->nr_partial = 0;
	if (slab) {
		stat(s, CPUSLAB_FLUSH);
		deactivate_slab(s, slab, freelist);
	}
	publish_slot(c, tid, NULL, NULL);
	pthread_mutex_unlock(&c->lock);
	if (partial)
		put_partials(s, partial);
}

/* Every CPU's slabs, or sheaves and then the barn's, back to the node. */
void kmem_cache_flush_all(struct kmem_cache *s)
{
	slub_fork_handlers_check();
	tsheaf_flush_self(s);	/* other threads' sheaves are theirs alone (tsheaf.h) */
	bool sheaves = READ_ONCE(s->sheaf_capacity) != 0;
	for_each_used_cpu(cpu, &slab_cpus, s->nr_cpu_slots) {
		if (sheaves)
			sheaf_flush_cpu(s, cpu);
		/* Both with sheaves: a slot may keep a slab from before a debug switch. */
		flush_slot(s, cpu);
	}
	if (sheaves)
		sheaf_flush_barn(s);
}

/* ---- the cmpxchg16b fast paths --------------------------------------------------- */

/*
 * A retired slot (odd tid) or an empty freelist ends the attempt; a CAS
 * lost to another thread retries.  The free pointer is read before the CAS
 * decides, from an object another thread may own by then (see
 * get_freepointer_safe); the tid makes the CAS fail in that case.  One that
 * does not decode to a plausible pointer also ends it: corrupt, or the
 * object was taken meanwhile; the slow path tells which under the lock.
 */
static inline void *alloc_fast_cas(struct kmem_cache *s)
{
	for (unsigned int cpu = cas_cpu_slot(s);; cpu = this_cpu_slot(s)) {
		struct kmem_cache_cpu *c = cpu_slot(s, cpu);
		unsigned long tid = __atomic_load_n(&c->tid, __ATOMIC_ACQUIRE);
		void *object = __atomic_load_n(&c->freelist, __ATOMIC_ACQUIRE);
		if (unlikely((tid & 1) || !object))
			return NULL;
		void *next = get_freepointer_safe(s, object);
		if (unlikely(!freepointer_plausible(next)))
			return NULL;
		if (likely(cmpxchg_double(&c->freelist, object, tid, next, tid + 2))) {
			object_mark_allocated(s, object);
			return object;
		}
		stat(s, CMPXCHG_DOUBLE_CPU_FAIL);
	}
}

/*
 * One CAS pop on the slot this thread used last, or NULL for
 * alloc_finish() to sort out: a leaf, so that the cmpxchg16b mode's hit
 * saves and restores no registers (it cost 16 instructions a call).
 */
static inline void *alloc_cas_once(struct kmem_cache *s)
{
	unsigned int cpu = slab_cpu_hint;
	if (unlikely(cpu >= s->nr_cpu_slots))
		return NULL;
	struct kmem_cache_cpu *c = cpu_slot(s, cpu);
	unsigned long tid = __atomic_load_n(&c->tid, __ATOMIC_ACQUIRE);
	void *object = __atomic_load_n(&c->freelist, __ATOMIC_ACQUIRE);
	if (unlikely((tid & 1) || !object))
		return NULL;
	void *next = get_freepointer_safe(s, object);
	if (unlikely(!freepointer_plausible(next)))
		return NULL;
	if (unlikely(!cmpxchg_double(&c->freelist, object, tid, next, tid + 2))) {
		stat(s, CMPXCHG_DOUBLE_CPU_FAIL);
		return NULL;
	}
	object_mark_allocated(s, object);
	return object;
}

/*
 * After the inline fast path and alloc_cas_once(): in cmpxchg16b mode the
 * CAS fast path again; then the slow path if there was no object; then
 * __GFP_ZERO.
 */
static __noinline void *alloc_finish(struct kmem_cache *s, gfp_t gfp, int node, void *object)
{
	/* A thread sheaf's refill (or __GFP_ZERO's pop); NULL: the cmpxchg16b paths. */
	if (READ_ONCE(s->tsheaf_off) && (object = tsheaf_alloc(s, gfp, node))) {
		if (gfp & __GFP_ZERO)
			slab_zero_object(s, object);
		return object;
	}
	if (!object && READ_ONCE(s->sheaf_capacity)) {
		/* Never a debug cache's (sheaf.c; with or without rseq). */
		object = sheaf_alloc(s, gfp, node);
		if (!object)
			return NULL;
	} else {
		/* A debug cache has no cpu slab: the inline pop never finds an object. */
		if (kmem_cache_debug(s))
			return debug_slab_alloc(s, gfp, node, 0);
		/* A node asked for: the cpu slab's is checked by __slab_alloc (node_match). */
		if (!object && !slub_percpu_rseq && !slab_alloc_needs_node(node))
			object = alloc_fast_cas(s);
		if (object) {
			/* The rseq pop's (a sheaf's, if the cache has them), or the CAS's. */
			stat(s, READ_ONCE(s->sheaf_capacity) ? ALLOC_PCS : ALLOC_FASTPATH);
		} else {
			object = __slab_alloc(s, gfp, node);
			if (!object)
				return NULL;
		}
	}
	if (gfp & __GFP_ZERO)
		slab_zero_object(s, object);
	return object;
}

/*
 * failslab, as the kernel's should_failslab(): true if this allocation is
 * to fail (errno ENOMEM).  Never the allocator's own caches (the boot
 * cache of cache descriptors, the sheaves' caches: refcount -1), nor
 * __GFP_NOFAIL; with failslab_cache only that cache.
 */
static __cold bool should_failslab(struct kmem_cache *s, gfp_t gfp)
{
	const char *only = slub_opt_str(failslab_cache);
	if (s->refcount < 0 || (gfp & __GFP_NOFAIL) || (only[0] && strcmp(only, s->name)))
		return false;
	if (!should_fail(&failslab_attr, (long)s->object_size, "failslab", s->name, 0))
		return false;
	errno = ENOMEM;
	return true;
}

/*
 * The hooked allocation (slab_harden.h): failslab, KFENCE, init_on_alloc, then
 * the rest of slab_alloc_finish() (no object yet).
 */
static __cold void *hooked_alloc(struct kmem_cache *s, gfp_t gfp, int node)
{
	if (slub_failslab_on && should_failslab(s, gfp))
		return NULL;
	if (kfence_enabled()) {
		void *object = kfence_alloc(s, gfp);
		if (object)
			return object;
	}
	if (slab_want_init_on_alloc(gfp, s))
		gfp |= __GFP_ZERO;
	unsigned int off = READ_ONCE(s->tsheaf_off);
	if (off) {
		struct tsheaf *sh = tsheaf_at(tsheaf_self, off);
		unsigned int n = sh->size;
		if (n && !(gfp & __GFP_ZERO))
			return tsheaf_pop(s, sh, n);
	}
	return alloc_finish(s, gfp, node, NULL);
}

/*
 * After the inline fast path: without rseq, the thread sheaf's pop (a
 * thread without a block reads an empty one), or for a cache without
 * one the cmpxchg16b mode's hit; each a leaf.
 *
 * failslab, init_on_alloc and KFENCE are decided here, at the top: with
 * one on, start-up chose the cmpxchg16b mode, whose inline sequences give
 * up at once, so every allocation comes here with no object yet (the rseq
 * fast paths carry no test of them).
 */
void *slab_alloc_finish(struct kmem_cache *s, gfp_t gfp, int node, void *object)
{
	if (unlikely(data_race(slab_alloc_hooked)) && !object)
		return hooked_alloc(s, gfp, node);	/* a tail call: this stays a leaf */
	/*
	 * A sheaf offset means no rseq (tsheaf_setup), so the inline
	 * sequences gave up at once: no object yet.
	 */
	unsigned int off = READ_ONCE(s->tsheaf_off);
	if (off) {
		struct tsheaf *sh = tsheaf_at(tsheaf_self, off);
		unsigned int n = sh->size;
		if (likely(n && !(gfp & __GFP_ZERO)))
			return tsheaf_pop(s, sh, n);
	} else if (likely(!object && !slub_percpu_rseq && !READ_ONCE(s->sheaf_capacity) &&
			  !(gfp & __GFP_ZERO))) {
		/* A debug cache has no cpu slab: alloc_cas_once() finds nothing. */
		void *got = alloc_cas_once(s);
		if (likely(got)) {
			stat(s, ALLOC_FASTPATH);
			return got;
		}
	}
	return alloc_finish(s, gfp, node, object);
}

/* A request for a node, with more than one: past the CAS hit, whose cpu slab may be any node's. */
void *slab_alloc_node_slow(struct kmem_cache *s, gfp_t gfp, int node)
{
	if (unlikely(data_race(slab_alloc_hooked)))
		return hooked_alloc(s, gfp, node);
	return alloc_finish(s, gfp, node, NULL);
}

void *slab_alloc_sized(struct kmem_cache *s, gfp_t gfp, int node, size_t size)
{
	if (kmem_cache_debug(s)) {
		if (unlikely(slub_failslab_on) && should_failslab(s, gfp))
			return NULL;
		if (unlikely(data_race(slab_alloc_hooked))) {
			void *object = kfence_enabled() ? kfence_alloc(s, gfp) : NULL;
			if (object)
				return object;
			if (slab_want_init_on_alloc(gfp, s))
				gfp |= __GFP_ZERO;
		}
		return debug_slab_alloc(s, gfp, node, (unsigned int)size);
	}
	return slab_alloc(s, gfp, node);
}

/* Is slot @c live with @slab as its cpu slab?  Its tid in *@tid. */
static inline bool slot_holds(struct kmem_cache_cpu *c, struct slab *slab, unsigned long *tid)
{
	*tid = __atomic_load_n(&c->tid, __ATOMIC_ACQUIRE);
	return likely(!(*tid & 1)) && __atomic_load_n(&c->slab, __ATOMIC_RELAXED) == slab;
}

/* One CAS push of @object on @c's freelist at @tid; false if the CAS lost. */
static inline bool push_cas(struct kmem_cache *s, struct kmem_cache_cpu *c, unsigned long tid,
			    void *object)
{
	void *head = __atomic_load_n(&c->freelist, __ATOMIC_RELAXED);
	set_freepointer(s, object, head);
	if (unlikely(!cmpxchg_double(&c->freelist, head, tid, object, tid + 2)))
		return false;
	stat(s, FREE_FASTPATH);
	return true;
}

/* A lost CAS push: retried on this CPU's slot while the slab is its cpu slab. */
static __noinline void free_cas_retry(struct kmem_cache *s, struct slab *slab, void *object)
{
	struct kmem_cache_cpu *c;
	unsigned long tid;
	do {
		stat(s, CMPXCHG_DOUBLE_CPU_FAIL);
		c = cpu_slot(s, this_cpu_slot(s));
		if (!slot_holds(c, slab, &tid)) {
			free_to_slab(s, slab, object);
			return;
		}
	} while (!push_cas(s, c, tid, object));
}

/*
 * The CAS push on slot @cpu.  The slab is read after the tid: if the slot
 * changed in between, the CAS fails.  A cpu slab is never a debug cache's,
 * so the word is checked once the slab matched; and only then, not on a
 * retry: a lost CAS leaves it encoded.  Every call is a tail call, so the
 * hit saves no registers.
 */
static inline void free_cas(struct kmem_cache *s, struct slab *slab, void *object, unsigned int cpu)
{
	unsigned long tid;
	struct kmem_cache_cpu *c = cpu_slot(s, cpu);
	if (!slot_holds(c, slab, &tid))
		__slab_free(s, slab, object);
	else if (unlikely(object_looks_free(s, object)))
		slab_free_suspect(s, slab, object);
	else if (unlikely(!push_cas(s, c, tid, object)))
		free_cas_retry(s, slab, object);
}

/* A thread without a slot hint yet: ask for its CPU first. */
static __noinline void free_cas_ask(struct kmem_cache *s, struct slab *slab, void *object)
{
	free_cas(s, slab, object, this_cpu_slot(s));
}

/*
 * After the inline fast path found @slab is not the CPU's: in cmpxchg16b
 * mode the CAS push, on the slot this thread used last.
 */
static __noinline void free_finish(struct kmem_cache *s, struct slab *slab, void *object);

void slab_free_finish(struct kmem_cache *s, struct slab *slab, void *object)
{
	unsigned int off = READ_ONCE(s->tsheaf_off);
	if (off) {
		/* The thread sheaf's push (no rseq: tsheaf_setup); a thread without a block has room 0. */
		struct tsheaf *sh = tsheaf_at(tsheaf_self, off);
		unsigned long n = sh->size;
		if (likely(n < sh->room)) {
			if (unlikely(object_looks_free(s, object))) {
				slab_free_suspect(s, slab, object);
				return;
			}
			tsheaf_park(s, sh, n, object);
			return;
		}
		tsheaf_free(s, slab, object);	/* full, or no block yet */
		return;
	}
	free_finish(s, slab, object);
}

/*
 * To the slab, init_on_free's wipe first: out of line, so that the
 * cmpxchg16b mode's free_finish() saves no registers for the call.
 */
static __noinline void free_direct(struct kmem_cache *s, struct slab *slab, void *object)
{
	if (unlikely(slab_free_hooked))
		slab_free_hook(s, object);
	__slab_free(s, slab, object);
}

/* The rest, out of line: the thread sheaf's hit above saves no registers. */
static __noinline void free_finish(struct kmem_cache *s, struct slab *slab, void *object)
{
	if (READ_ONCE(s->sheaf_capacity)) {
		sheaf_free(s, slab, object);
		return;
	}
	/* rseq mode, or init_on_free: never the CAS push (slab_harden.h). */
	if (slab_free_direct) {
		free_direct(s, slab, object);
		return;
	}
	unsigned int cpu = slab_cpu_hint;
	if (unlikely(cpu >= s->nr_cpu_slots)) {
		free_cas_ask(s, slab, object);
		return;
	}
	free_cas(s, slab, object, cpu);
}

/* ---- slow allocation path ---------------------------------------------------------- */

/*
 * Take a slab from node @n's partial list for this CPU, frozen, and move a
 * few more to the CPU's partial list.  Returns the slab and its freelist.
 */
static struct slab *get_partial_node(struct kmem_cache *s, struct kmem_cache_node *n,
				     struct kmem_cache_cpu *c, void **freelist)
{
	struct slab *got = NULL;
	unsigned int from = 0, to = 0;

	if (!READ_ONCE(n->nr_partial))
		return NULL;
	slab_lock(&n->list_lock);
	while (!list_empty(&n->partial)) {
		struct slab *slab = lru_slab(n->partial.next);
		remove_partial(n, slab);
		if (!got) {
			/* A claimed page is linked after the unlock: its faults hold no list. */
			void *f = take_freelist(s, slab, false, &from, &to);
			if (!f && from == to) {
				/* Emptied by allocations? Not possible: it was on no CPU. */
				continue;
			}
			got = slab;
			*freelist = f;
			stat(s, ALLOC_FROM_PARTIAL);
		} else {
			slab_next(slab) = c->partial;
			c->partial = slab;
			c->nr_partial++;
			stat(s, CPU_PARTIAL_NODE);
		}
		if (c->nr_partial >= READ_ONCE(s->cpu_partial_slabs) / 2)
			break;
	}
	slab_unlock(&n->list_lock);
	if (got)
		*freelist = claimed_freelist(s, got, *freelist, from, to);
	return got;
}

/*
 * Another node's partial slab, nearest first as far as ids tell (the
 * kernel walks its zonelist): only from a node with more than min_partial,
 * whose last few slabs stay for its own CPUs.
 */
static struct slab *get_any_partial(struct kmem_cache *s, struct kmem_cache_cpu *c,
				    void **freelist, int skip, unsigned long keep)
{
	for (unsigned int i = 1; i < nr_node_ids; i++) {
		struct kmem_cache_node *n = get_node(s, node_after(skip, i));
		if (READ_ONCE(n->nr_partial) <= keep)
			continue;
		struct slab *slab = get_partial_node(s, n, c, freelist);
		if (slab)
			return slab;
	}
	return NULL;
}

/*
 * A partial slab for an allocation on @node: that node's (this CPU's for
 * NUMA_NO_NODE), else, unless the caller named a node, any node's beyond
 * its min_partial.  The kernel's get_partial() with __GFP_THISNODE set for
 * a named node, as its first try (a new slab on the node comes before
 * another node's).  @dry: the node had no pages for a new slab: any node's
 * partial slab, before a new slab elsewhere (the kernel's second try).
 */
static struct slab *get_partial(struct kmem_cache *s, struct kmem_cache_cpu *c,
				void **freelist, int node, bool dry)
{
	int searchnode = slab_search_node(node);
	struct slab *slab = get_partial_node(s, get_node(s, searchnode), c, freelist);
	if (slab || (node != NUMA_NO_NODE && !dry) || nr_node_ids == 1)
		return slab;
	return get_any_partial(s, c, freelist, searchnode, dry ? 0 : READ_ONCE(s->min_partial));
}

/*
 * Freeze a slab from this CPU's partial list; NULL if the list is empty.
 * A slab of another node than @node asks for goes to its node's list.
 */
static struct slab *get_cpu_partial(struct kmem_cache *s, struct kmem_cache_cpu *c,
				    void **freelist, int node)
{
	while (c->partial) {
		struct slab *slab = c->partial;
		c->partial = slab_next(slab);
		c->nr_partial--;
		slab_next(slab) = NULL;
		if (unlikely(!node_match(slab, node))) {
			put_partials(s, slab);
			continue;
		}
		/* It has free objects: only its CPU allocates from a slab. */
		void *f = get_freelist(s, slab, false);
		if (f) {
			*freelist = f;
			stat(s, CPU_PARTIAL_ALLOC);
			return slab;
		}
	}
	return NULL;
}

/*
 * One thread keeps one cpu slab per cache, not one per CPU it has run on:
 * before a new slab is made for @cpu, the slabs held by the slot the thread
 * filled last go to the node's partial list, where get_partial() finds them.
 * Otherwise a single-threaded program that the scheduler moves between CPUs
 * holds a part-used slab of each size class on each of them.  Returns true
 * if that left partial slabs to take.
 */
static bool adopt_lone_slabs(struct kmem_cache *s, unsigned int cpu)
{
	if (!os_single_threaded())
		return false;
	unsigned int last = s->lone_cpu;
	if (!last-- || last == cpu || last >= s->nr_cpu_slots)
		return false;
	s->lone_cpu = 0;
	flush_slot(s, last);
	return READ_ONCE(get_node(s, numa_mem_id())->nr_partial) != 0;
}

/*
 * The object after @object, the first of a freelist being handed to the
 * CPU, checked in full (the pops check only that it decodes to a user
 * address): NULL or a linked object of @slab.  A corrupt one is reported
 * and the freelist ends at @object; the objects after it stay counted in
 * use (the kernel's fix for a corrupt freelist: isolate it).
 */
static void *next_free_object(struct kmem_cache *s, struct slab *slab, void *object)
{
	void *next = get_freepointer(s, object);
	if (unlikely(next && !slab_object_valid(s, slab, next))) {
		slab_corrupt_freepointer(s, slab, object, next);
		set_freepointer(s, object, NULL);
		return NULL;
	}
	return next;
}

void *__slab_alloc(struct kmem_cache *s, gfp_t gfp, int node)
{
	slub_fork_handlers_check();
	unsigned int cpu;
	struct kmem_cache_cpu *c;
	unsigned long tid;
	void *object;

	stat(s, ALLOC_SLOWPATH);
	kfence_tick();
	bool dry = false;	/* the node had no pages: any node's partial slab (get_partial) */
again:
	c = slab_lock_cpu_slot(s, &cpu);
	if (unlikely(kmem_cache_debug(s))) {	/* switched on meanwhile (slab_set_debug) */
		slab_unlock(&c->lock);
		return debug_slab_alloc(s, gfp, node, 0);
	}
	if (unlikely(READ_ONCE(s->sheaf_capacity))) {	/* switched off: sheaves again */
		slab_unlock(&c->lock);
		return sheaf_alloc(s, gfp, node);
	}
	/* Stable under the slot lock, which every switch holds. */
	unsigned int layout_gen = READ_ONCE(s->layout_gen);
	object = retire_slot(c, cpu, &tid);
	struct slab *slab = c->slab;

	if (slab && unlikely(!node_match(slab, node))) {
		/* The kernel's node_match(): another node's cpu slab goes back first. */
		stat(s, ALLOC_NODE_MISMATCH);
		deactivate_slab(s, slab, object);
		__atomic_store_n(&c->slab, NULL, __ATOMIC_RELEASE);	/* lockless frees read it */
		object = NULL;
		slab = NULL;
	}
	if (object)			/* frees landed on the CPU freelist */
		goto load;
	if (slab) {
		object = get_freelist(s, slab, false);
		if (object) {
			stat(s, ALLOC_REFILL);
			goto load;
		}
		stat(s, DEACTIVATE_BYPASS);
		slab = NULL;		/* full and unfrozen now: on no list */
	}
	slab = get_cpu_partial(s, c, &object, node);
	if (!slab)
		slab = get_partial(s, c, &object, node, dry);
	if (!slab) {
		/*
		 * A new slab, made with the slot open and unlocked, as the
		 * kernel does: constructors may allocate (from any cache), and
		 * the page allocator may take long; this CPU's other threads
		 * need not wait for either.
		 */
		publish_slot(c, tid, NULL, NULL);
		slab_unlock(&c->lock);
		if (adopt_lone_slabs(s, cpu))
			goto again;
		int made_on = node;
		slab = allocate_slab(s, gfp, &made_on);
		if (unlikely(!slab) && may_fall_back(gfp)) {
			if (!dry) {
				dry = true;
				goto again;
			}
			slab = allocate_slab_elsewhere(s, gfp, made_on, &made_on);
		}
		if (unlikely(!slab)) {
			slab_out_of_memory(s, gfp);
			errno = ENOMEM;
			return NULL;
		}
		stat(s, ALLOC_SLAB);
		if (unlikely(READ_ONCE(s->layout_gen) != layout_gen)) {
			/*
			 * A switch came between the slot's unlock and the slab's
			 * making: the slab has the new layout (none can come
			 * while it exists), which may not be a cpu slab's.  The
			 * partial list fits any; the top decides again.
			 */
			struct kmem_cache_node *n = slab_node(s, slab);
			slab_lock(&n->list_lock);
			add_partial(n, slab, false);
			slab_unlock(&n->list_lock);
			goto again;
		}
		object = slab->freelist;
		slab->freelist = NULL;
		union slab_counters cnt = read_counters(slab);
		cnt.inuse = cnt.built;
		cnt.frozen = 1;
		slab->counters = cnt.counters;

		/* Maybe on another CPU by now; that slot may have a slab again. */
		c = slab_lock_cpu_slot(s, &cpu);
		void *old_freelist = retire_slot(c, cpu, &tid);
		if (c->slab)
			deactivate_slab(s, c->slab, old_freelist);
	}
load:
	if (os_single_threaded() && s->lone_cpu != cpu + 1)
		s->lone_cpu = cpu + 1;
	publish_slot(c, tid, slab, next_free_object(s, slab, object));
	slab_unlock(&c->lock);
	object_mark_allocated(s, object);
	return object;
}

/* ---- frees outside the cpu slab ----------------------------------------------------- */

/*
 * Free the chain @head .. @tail of @cnt objects (linked already, or one
 * object) to its slab's own freelist with a CAS, no queue.  A full slab
 * that gets its first free object goes to this CPU's partial list (or the
 * node's); an empty one beyond min_partial goes back to the page allocator.
 * @check: whether the one object's word is still to be checked
 * (object_looks_free); inlined for each use, so that the common one,
 * __slab_free, is one call and a single object's chain costs nothing.
 */
static __attribute__((always_inline)) inline void
do_slab_free(struct kmem_cache *s, struct slab *slab, void *head, void *tail, unsigned int cnt,
	     bool check)
{
	struct kmem_cache_node *n = slab_node(s, slab);
	bool locked = false, on_node_partial = false, was_full;
	bool cpu_partial = READ_ONCE(s->cpu_partial_slabs) != 0;
	void *prior;
	union slab_counters old, new;

	if (check && unlikely(object_looks_free(s, head))) {
		slab_free_suspect(s, slab, head);
		return;
	}
	stat(s, FREE_SLOWPATH);
	for (;;) {
		if (locked) {	/* the decision was for a state that is gone */
			slab_unlock(&n->list_lock);
			locked = false;
		}
		prior = __atomic_load_n(&slab->freelist, __ATOMIC_ACQUIRE);
		old = read_counters(slab);
		/*
		 * A double free racing the free that emptied the slab may get
		 * here after the slab went back: its freelist+counters are a
		 * tail's list slot by then, which the page allocator may use.
		 * The cache is cleared before the pages go: check it after the
		 * reads (this narrows the race; as in the kernel, it stays one).
		 * The list lock is never held here.
		 */
		if (unlikely(__atomic_load_n(&slab->slab_cache, __ATOMIC_ACQUIRE) != s)) {
			slub_report_call("BUG %s: object %p freed again after its slab went back (double free); ignored",
				    s->name, head);
			return;
		}
		set_freepointer(s, tail, prior);
		new = old;
		new.inuse -= cnt;
		was_full = !prior && old.built == old.objects;
		if ((!new.inuse || was_full) && !old.frozen &&
		    (!cpu_partial || !was_full)) {
			/* A list may change: decide under the list lock. */
			slab_lock(&n->list_lock);
			locked = true;
		}
		if (slab_update_freelist(s, slab, prior, old.counters, head, new.counters))
			break;
	}
	if (locked)
		on_node_partial = slab_flags(slab) & PG_slab_partial;

	if (old.frozen)
		stat(s, FREE_FROZEN);
	if (!locked) {
		if (!old.frozen && cpu_partial && was_full)
			put_cpu_partial(s, slab);
		return;
	}
	/* Partially free, but on a CPU's partial list: not ours to move. */
	if (!was_full && !on_node_partial) {
		slab_unlock(&n->list_lock);
		return;
	}
	if (!new.inuse && !node_keeps_empty(s, n, slab)) {
		if (!was_full) {
			remove_partial(n, slab);
			stat(s, FREE_REMOVE_PARTIAL);
		}
		slab_unlock(&n->list_lock);
		discard_slab(s, slab);
		return;
	}
	if (!cpu_partial && was_full) {
		add_partial(n, slab, true);
		stat(s, FREE_ADD_PARTIAL);
	} else if (!new.inuse) {
		/* Kept empty: to the tail, where allocations come last and the trim looks first. */
		list_del(slab_lru(slab));
		list_add_tail(slab_lru(slab), &n->partial);
	}
	slab_unlock(&n->list_lock);
}

void __slab_free(struct kmem_cache *s, struct slab *slab, void *object)
{
	slub_fork_handlers_check();
	if (kmem_cache_debug(s)) {
		/* Poison of a SLAB_TYPESAFE_BY_RCU object waits for the readers (rcu.h). */
		if (unlikely((s->flags & (SLAB_TYPESAFE_BY_RCU | __OBJECT_POISON)) ==
			     (SLAB_TYPESAFE_BY_RCU | __OBJECT_POISON)) &&
		    slab_rcu_defer_debug_free(s, object))
			return;
		debug_slab_free(s, slab, object);
		return;
	}
	do_slab_free(s, slab, object, object, 1, true);
}

/* A free whose object's word was checked already. */
static __noinline void free_to_slab(struct kmem_cache *s, struct slab *slab, void *object)
{
	do_slab_free(s, slab, object, object, 1, false);
}

/* Is @object on the freelist that starts at @p, a freelist of @slab? */
static bool freelist_holds(struct kmem_cache *s, struct slab *slab, void *p, void *object)
{
	uintptr_t start = (uintptr_t)slab_address(slab);
	unsigned int objects = read_counters(slab).objects;
	for (unsigned int n = 0; p && n < objects; n++) {
		if (p == object)
			return true;
		if (!slab_object_valid_at(s, slab, start, p))
			return false;	/* corrupt: the walk cannot go on */
		p = get_freepointer(s, p);
	}
	return false;
}

bool slab_freelist_holds(struct kmem_cache *s, struct slab *slab, void *object)
{
	return freelist_holds(s, slab, slab->freelist, object);
}

/*
 * Is @object free already?  A slab's free objects are on at most two
 * lists: its own and, if it is a cpu slab, that CPU's lockless one, which
 * only its CPU may walk; or, with sheaves, on its own list or in a sheaf.  So hold every slot of the cache (in the fork
 * handlers' order: the set of used slots, the slots, the node), which
 * stops every change of which list a slab's objects are on (taking a
 * freelist, freezing, unfreezing and discarding all happen under one of
 * them), and retire the slot whose cpu slab it is, as flush_slot does, to
 * walk its freelist.  Lockless frees may still push onto the slab's own
 * list: they only add in front of the objects walked.  Slow (a membarrier
 * on another CPU in rseq mode), and run only when a word says free.
 */
static bool object_is_free(struct kmem_cache *s, struct slab *slab, void *object)
{
	struct kmem_cache_node *n = slab_node(s, slab);
	bool found = false;

	pthread_mutex_lock(&slab_cpus.lock);
	for_each_used_cpu(cpu, &slab_cpus, s->nr_cpu_slots)
		pthread_mutex_lock(&cpu_slot(s, cpu)->lock);
	/* Parked in a sheaf: the barn's lock comes before the list lock. */
	if (READ_ONCE(s->sheaf_capacity))
		found = sheaf_holds(s, object);
	pthread_mutex_lock(&n->list_lock);
	if (!found)
		found = tsheaf_holds(s, object);	/* its lock comes after the list lock */
	if (!found && __atomic_load_n(&slab->slab_cache, __ATOMIC_ACQUIRE) == s) {
		for_each_used_cpu(cpu, &slab_cpus, s->nr_cpu_slots) {
			struct kmem_cache_cpu *c = cpu_slot(s, cpu);
			if (c->slab != slab)
				continue;
			unsigned long tid;
			void *freelist = retire_slot(c, cpu, &tid);
			found = freelist_holds(s, slab, freelist, object);
			publish_slot(c, tid, slab, freelist);
			break;
		}
		if (!found)
			found = freelist_holds(s, slab, __atomic_load_n(&slab->freelist,
									 __ATOMIC_ACQUIRE), object);
	}
	pthread_mutex_unlock(&n->list_lock);
	for_each_used_cpu(cpu, &slab_cpus, s->nr_cpu_slots)
		pthread_mutex_unlock(&cpu_slot(s, cpu)->lock);
	pthread_mutex_unlock(&slab_cpus.lock);
	return found;
}

/* Out of line: the fast paths that call it stay leaves. */
__noinline void slab_free_suspect(struct kmem_cache *s, struct slab *slab, void *object)
{
	if (object_is_free(s, slab, object)) {
		slab_double_free(s, object);
		return;
	}
	/* Program data that looks like an encoded pointer: a free after all. */
	free_to_slab(s, slab, object);
}

/* ---- bulk, for the sheaves (sheaf.c) ------------------------------------------------- */

/*
 * Take up to @max free objects of @slab, a partial slab (list_lock held),
 * into @top[-1], @top[-2] ... (slab_refill_bulk says why downwards).
 * Only a list_lock holder takes objects from the slab of a cache with
 * sheaves (its slabs are never frozen); other threads only push frees
 * on the slab's freelist, so the chain below the head we read is ours to
 * walk, and a push meanwhile fails the CAS.  An empty freelist with
 * unlinked objects links the next page of them first (its faults come
 * under the list lock, once a page).  A corrupt free pointer is reported
 * and the freelist cut there; what was after it stays counted in use.
 */
static unsigned int take_objects(struct kmem_cache *s, struct slab *slab, void **top,
				 unsigned int max)
{
	for (;;) {
		void *head = __atomic_load_n(&slab->freelist, __ATOMIC_ACQUIRE);
		union slab_counters old = read_counters(slab), new = old;
		if (!head) {
			if (old.built == old.objects)
				return 0;
			new.built = build_end(s, old.built, old.objects);
			void *first = link_objects(s, slab, old.built, new.built);
			slab_update_freelist(s, slab, NULL, old.counters, first, new.counters);
			continue;	/* lost to a free: the page stays unclaimed */
		}
		unsigned int k = 0;
		void **q = top;		/* again from the top if the CAS below fails */
		void *next = head;
		bool cut = false;
		/*
		 * slab_object_valid() with its slab's start and built hoisted: the
		 * stores to @top may alias them for the compiler, which then looked the
		 * start up again for every object.  built holds still here (list lock).
		 */
		uintptr_t first = (uintptr_t)slab_address(slab) + s->red_left_pad;
		unsigned int built = old.built;
		while (next && k < max) {
			void *object = next;
			uint64_t idx;
			*--q = object;
			k++;
			next = get_freepointer(s, object);
			if (unlikely(next && !(slab_offset_index(s, (uintptr_t)next - first, &idx) &&
					       idx < built))) {
				slab_corrupt_freepointer(s, slab, object, next);
				next = NULL;
				cut = true;
			}
		}
		new.inuse = cut ? new.built : new.inuse + k;
		if (slab_update_freelist(s, slab, head, old.counters, next, new.counters))
			return k;
	}
}

/*
 * Refill: up to @max objects from @node's partial slabs (this CPU's node
 * for NUMA_NO_NODE) into @p, the first slabs first (shrink sorts the
 * fullest there); a slab left with no free object leaves the list, as a
 * full slab is on none.  Returns the count.  The first object taken is
 * the last in @p: a sheaf pops from its top, so the objects go out in
 * their freelists' order, a fresh slab's in address order, as the unqueued
 * cpu slab hands them out.  Popped the other way, a program's consecutive
 * objects lay downwards, and Python with PYTHONMALLOC=malloc ran 6-9%
 * slower (bench/run_programs.sh's python-malloc).  While the cache is small
 * (fewer than populate_slabs slabs, which allocate_slab() keeps lazy) a
 * refill stops once the objects taken come to REFILL_SMALL_BYTES: a sheaf
 * of 32 objects of 4 KiB would otherwise link, fault in and hold 128 KiB
 * for one malloc (as the 20 malloc classes above 4 KiB did at Python's
 * start-up), and one of 1.5 KiB objects 48 KiB.  A big cache refills
 * whole: smaller refills cost it time (4 KiB objects, 4096 in flight: 10%).
 */
unsigned int slab_refill_bulk(struct kmem_cache *s, void **p, unsigned int max, int node)
{
	struct kmem_cache_node *n = get_node(s, slab_search_node(node));
	unsigned int got = 0;

	if (!READ_ONCE(n->nr_partial))
		return 0;
	bool lazy = !s->populate_slabs ||
		    __atomic_load_n(&n->nr_slabs, __ATOMIC_RELAXED) < s->populate_slabs;
	slab_lock(&n->list_lock);
	/* A debug cache's objects never leave through a thread sheaf (switched on meanwhile). */
	while (got < max && !list_empty(&n->partial) && !kmem_cache_debug(s)) {
		if (lazy && got * s->size >= REFILL_SMALL_BYTES)
			break;
		struct slab *slab = lru_slab(n->partial.next);
		got += take_objects(s, slab, p + max - got, max - got);
		union slab_counters c = read_counters(slab);
		if (!__atomic_load_n(&slab->freelist, __ATOMIC_ACQUIRE) && c.built == c.objects)
			remove_partial(n, slab);
	}
	slab_unlock(&n->list_lock);
	if (got)
		stat(s, ALLOC_FROM_PARTIAL);
	if (got < max)		/* to the bottom, in order */
		memmove(p, p + max - got, got * sizeof(*p));
	return got;
}

/*
 * A new slab at the head of its node's partial list, for the next refill:
 * *@node's (NUMA_NO_NODE: this CPU's).  If that node has no pages left and
 * another may serve (may_fall_back), *@node becomes a node with partial
 * slabs already, else one where a new slab could be made.
 */
bool slab_new_partial(struct kmem_cache *s, gfp_t gfp, int *node)
{
	struct slab *slab = allocate_slab(s, gfp, node);
	if (unlikely(!slab) && may_fall_back(gfp)) {
		int other = node_with_partial(s, *node);
		if (other != NUMA_NO_NODE) {
			*node = other;
			return true;
		}
		slab = allocate_slab_elsewhere(s, gfp, *node, node);
	}
	if (unlikely(!slab)) {
		slab_out_of_memory(s, gfp);
		errno = ENOMEM;
		return false;
	}
	stat(s, ALLOC_SLAB);
	struct kmem_cache_node *n = get_node(s, *node);
	slab_lock(&n->list_lock);
	add_partial(n, slab, false);
	slab_unlock(&n->list_lock);
	return true;
}

/* The chain of a bulk free: a call of its own, do_slab_free inlined once more. */
static __noinline void free_chain_to_slab(struct kmem_cache *s, struct slab *slab, void *head,
					  void *tail, unsigned int cnt)
{
	do_slab_free(s, slab, head, tail, cnt, false);
}

/*
 * Flush: free @nr objects of @s, checked already, to their slabs, grouped:
 * the objects of one slab are linked into one chain and freed with one
 * CAS.  @p is reordered.  A slab's extent is one lookup; the rest of the
 * array is compared against it, so a sheaf of objects from k slabs costs
 * k passes over it.
 */
void slab_free_bulk(struct kmem_cache *s, void **p, unsigned int nr)
{
	while (nr) {
		void *tail = p[--nr], *head = tail;
		struct slab *slab = virt_to_slab(tail);
		uintptr_t start = (uintptr_t)slab_address(slab);
		size_t len = PAGE_SIZE << slab->order;
		unsigned int cnt = 1;
		for (unsigned int i = nr; i-- > 0;) {
			if ((uintptr_t)p[i] - start >= len)
				continue;
			set_freepointer(s, p[i], head);
			head = p[i];
			cnt++;
			p[i] = p[--nr];
		}
		free_chain_to_slab(s, slab, head, tail, cnt);
	}
}

/* ---- shrinking and teardown ---------------------------------------------------------- */

/*
 * Flush every CPU, free the empty slabs, and order the partial list with
 * the fullest slabs first (allocations fill them, the emptiest may drain).
 * Returns 0 if the cache holds no slab any more.
 */
static void shrink_node(struct kmem_cache *s, struct kmem_cache_node *n)
{
	struct list_head buckets[33];
	struct slab *discard = NULL;

	for (int i = 0; i < 33; i++)
		INIT_LIST_HEAD(&buckets[i]);
	pthread_mutex_lock(&n->list_lock);
	while (!list_empty(&n->partial)) {
		struct slab *slab = lru_slab(n->partial.next);
		union slab_counters c = read_counters(slab);
		remove_partial(n, slab);
		unsigned int free = c.objects - c.inuse;
		if (!c.inuse) {
			slab_next(slab) = discard;
			discard = slab;
		} else {
			list_add_tail(slab_lru(slab), &buckets[free < 32 ? free : 32]);
		}
	}
	for (int i = 0; i < 33; i++)
		while (!list_empty(&buckets[i])) {
			struct slab *slab = lru_slab(buckets[i].next);
			list_del(slab_lru(slab));
			add_partial(n, slab, true);
		}
	pthread_mutex_unlock(&n->list_lock);
	discard_slabs(s, discard);
}

bool slab_trim_partial(struct kmem_cache *s)
{
	bool trimmed = false;
	for_each_kmem_cache_node(s, node, n) {
		unsigned long min = READ_ONCE(s->min_partial);
		struct slab *discard = NULL;
		if (READ_ONCE(n->nr_partial) <= min)
			continue;
		pthread_mutex_lock(&n->list_lock);
		/*
		 * Emptied slabs go to the tail, and no more are kept than
		 * node_keep_slabs(): look that far from the tail, and a few
		 * more for partial slabs added behind them since, not at the
		 * whole list under its lock on every tick; every 8th trim of
		 * the node the whole list, for empties later slabs pushed deeper.
		 */
		struct list_head *pos = n->partial.prev, *prev;
		unsigned long look = n->trims++ % 8 ? node_keep_slabs(s, oo_order(s->min)) + 32 : ULONG_MAX;
		for (; pos != &n->partial && n->nr_partial > min && look; pos = prev, look--) {
			prev = pos->prev;
			struct slab *slab = lru_slab(pos);
			if (read_counters(slab).inuse)
				continue;
			remove_partial(n, slab);
			slab_next(slab) = discard;
			discard = slab;
		}
		pthread_mutex_unlock(&n->list_lock);
		trimmed |= discard != NULL;
		discard_slabs(s, discard);
	}
	return trimmed;
}

unsigned long slab_nr_slabs(struct kmem_cache *s)
{
	unsigned long slabs = 0;
	for_each_kmem_cache_node(s, node, n)
		slabs += READ_ONCE(n->nr_slabs);
	return slabs;
}

int __kmem_cache_shrink(struct kmem_cache *s)
{
	slub_fork_handlers_check();
	kmem_cache_flush_all(s);
	for_each_kmem_cache_node(s, node, n)
		shrink_node(s, n);
	return slab_nr_slabs(s) ? 1 : 0;
}

/*
 * Shrink for destroy; returns the slabs still holding objects in use
 * (0: all gone).  After a shrink every remaining slab has one.
 */
unsigned long __kmem_cache_release(struct kmem_cache *s)
{
	sheaf_teardown(s);	/* every sheaf flushed and given back */
	__kmem_cache_shrink(s);
	unsigned long left = slab_nr_slabs(s);
	if (!left)
		slab_random_release(s);
	return left;
}

/* ---- validation ------------------------------------------------------------------------ */

/* Walk a freelist of @slab; returns its length, or -1 after a report. */
static long walk_freelist(struct kmem_cache *s, struct slab *slab, void *p, const char *what)
{
	union slab_counters c = read_counters(slab);
	long n = 0, max = c.objects;
	uintptr_t built_end = (uintptr_t)object_at(s, slab_address(slab), c.built);
	for (; p; p = get_freepointer(s, p)) {
		if (!virt_to_slab(p) || virt_to_slab(p) != slab || !slab_object_valid(s, slab, p) ||
		    (uintptr_t)p >= built_end) {
			slub_report("validate %s: %s of slab %p holds %p, not a free object of it",
				    s->name, what, slab_address(slab), p);
			return -1;
		}
		if (++n > max) {
			slub_report("validate %s: %s of slab %p is longer than the slab (a loop?)",
				    s->name, what, slab_address(slab));
			return -1;
		}
	}
	return n;
}

/* Every page of @slab names it, and it knows where it starts (pagemap.h). */
static bool pagemap_names(struct slab *slab)
{
#ifdef SLUB_PAGEMAP
	uintptr_t start = (uintptr_t)slab_address(slab);
	if (slab_start_in_section(start, slab) != start)
		return false;
	for (unsigned long i = 0; i < 1UL << slab->order; i++)
		if (pagemap_lookup(start + i * PAGE_SIZE) != slab)
			return false;
#else
	(void)slab;
#endif
	return true;
}

/* A slab of two pages or more left its first tail an ordinary tail of its head. */
static bool first_tail_intact(struct slab *slab)
{
	struct page *head = slab_page(slab);
	return !slab->order || (page_flags(head + 1) == PG_tail &&
				head[1].compound_head == tail_word(head));
}

static unsigned long validate_slab(struct kmem_cache *s, struct slab *slab, void *cpu_freelist,
				   bool frozen)
{
	union slab_counters c = read_counters(slab);
	long own = walk_freelist(s, slab, slab->freelist, "freelist");
	long cpu = walk_freelist(s, slab, cpu_freelist, "cpu freelist");
	if (own < 0 || cpu < 0)
		return 1;
	if (slab->slab_cache != s || !(slab_flags(slab) & PG_slab) || c.frozen != frozen ||
	    !first_tail_intact(slab) ||
	    !pagemap_names(slab) || c.objects != (PAGE_SIZE << slab->order) / s->size ||
	    c.built > c.objects || (s->ctor && c.built != c.objects) ||
	    (long)c.built - (long)c.inuse != own + (frozen ? 0 : cpu)) {
		slub_report("validate %s: slab %p: objects %u built %u inuse %u frozen %u, free %ld + %ld on the cpu",
			    s->name, slab_address(slab), c.objects, c.built, c.inuse, c.frozen, own, cpu);
		return 1;
	}
	return 0;
}

/* Node @node's partial list: each slab valid, marked, of that node, and counted. */
static unsigned long validate_node_partial(struct kmem_cache *s, struct kmem_cache_node *n,
					   int node)
{
	unsigned long errors = 0, partial = 0;
	struct list_head *pos;
	pthread_mutex_lock(&n->list_lock);
	list_for_each(pos, &n->partial) {
		struct slab *slab = lru_slab(pos);
		errors += validate_slab(s, slab, NULL, false);
		if (!(slab_flags(slab) & PG_slab_partial)) {
			slub_report("validate %s: slab %p on the partial list is not marked so",
				    s->name, slab_address(slab));
			errors++;
		}
		if (slab_nid(slab) != node || page_to_nid(slab_page(slab)) != node) {
			slub_report("validate %s: slab %p of node %d (its page's: %d) on node %d's list",
				    s->name, slab_address(slab), slab_nid(slab),
				    page_to_nid(slab_page(slab)), node);
			errors++;
		}
		partial++;
	}
	if (partial != n->nr_partial) {
		slub_report("validate %s: %lu partial slabs listed on node %d, nr_partial %lu",
			    s->name, partial, node, n->nr_partial);
		errors++;
	}
	pthread_mutex_unlock(&n->list_lock);
	return errors;
}

/*
 * Check every slab the cache can reach: cpu slabs with their CPU freelist,
 * cpu partial and node partial slabs.  Needs a quiet cache (no operation
 * in flight).  Returns the number of problems reported.
 */
unsigned long slab_validate_cache(struct kmem_cache *s)
{
	unsigned long errors = 0;

	if (kmem_cache_debug(s))
		return debug_validate_cache(s);

	if (READ_ONCE(s->sheaf_capacity))
		errors += sheaf_validate(s);
	for_each_used_cpu(cpu, &slab_cpus, s->nr_cpu_slots) {
		struct kmem_cache_cpu *c = cpu_slot(s, cpu);
		pthread_mutex_lock(&c->lock);
		if (c->tid & 1) {
			slub_report("validate %s: cpu %u slot left retired", s->name, cpu);
			errors++;
		}
		if (c->slab)
			errors += validate_slab(s, c->slab, c->freelist, true);
		else if (c->freelist) {
			slub_report("validate %s: cpu %u has a freelist but no slab", s->name, cpu);
			errors++;
		}
		unsigned int nr = 0;
		for (struct slab *slab = c->partial; slab; slab = slab_next(slab), nr++)
			errors += validate_slab(s, slab, NULL, false);
		if (nr != c->nr_partial) {
			slub_report("validate %s: cpu %u partial list has %u slabs, counted %u",
				    s->name, cpu, nr, c->nr_partial);
			errors++;
		}
		pthread_mutex_unlock(&c->lock);
	}
	for_each_kmem_cache_node(s, node, n)
		errors += validate_node_partial(s, n, node);
	return errors;
}

/* ---- figures ---------------------------------------------------------------------- */

/*
 * As the kernel's slabinfo counts them: objects free on partial slabs (the
 * node's and the CPUs') are inactive; a cpu slab counts as wholly active,
 * since its free objects sit on a lockless list nobody may walk.  Unlike
 * the kernel's, objects parked in sheaves are inactive too: counted per
 * sheaf, not per object (slab_parked()).
 */
unsigned long slab_parked(struct kmem_cache *s)
{
	return (READ_ONCE(s->sheaf_capacity) ? sheaf_parked(s) : 0) + tsheaf_parked(s);
}

void slab_get_info(struct kmem_cache *s, struct slab_info *info)
{
	unsigned long free = slab_parked(s), partial = 0;
	struct list_head *pos;

	for_each_used_cpu(cpu, &slab_cpus, s->nr_cpu_slots) {
		struct kmem_cache_cpu *c = cpu_slot(s, cpu);
		pthread_mutex_lock(&c->lock);
		for (struct slab *slab = c->partial; slab; slab = slab_next(slab), partial++) {
			union slab_counters cnt = read_counters(slab);
			free += cnt.objects - cnt.inuse;
		}
		pthread_mutex_unlock(&c->lock);
	}
	*info = (struct slab_info){ 0 };
	for_each_kmem_cache_node(s, node, n) {
		pthread_mutex_lock(&n->list_lock);
		list_for_each(pos, &n->partial) {
			union slab_counters cnt = read_counters(lru_slab(pos));
			free += cnt.objects - cnt.inuse;
			partial++;
		}
		info->num_objs += READ_ONCE(n->total_objects);
		info->num_slabs += READ_ONCE(n->nr_slabs);
		info->bytes += READ_ONCE(n->total_pages) << PAGE_SHIFT;
		/* Each node's peak: their sum bounds the whole's, which no node keeps. */
		info->peak_bytes += READ_ONCE(n->peak_pages) << PAGE_SHIFT;
		pthread_mutex_unlock(&n->list_lock);
	}
	info->active_objs = info->num_objs > free ? info->num_objs - free : 0;
	info->partial_slabs = partial;
}
