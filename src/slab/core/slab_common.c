// SPDX-License-Identifier: MIT
/*
 * slab_common.c - the cache list and the kmem_cache API: create, destroy,
 * alloc, free, shrink, bulk.  Bad input is reported here, before the engine
 * (slub.c) sees it.  The caches' own descriptors come from a boot cache,
 * `kmem_cache`, as in the kernel.
 */
#define _GNU_SOURCE
#include "slab/core/slab.h"
#include "slab/core/slab_common.h"
#include "slab/debug/slab_debug.h"
#include "slab/core/slab_harden.h"
#include "slab/debug/kfence.h"
#include "slab/debug/slab_kasan.h"
#include "slab/rcu/rcu.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "base/start.h"
#include "base/fault_inject.h"
#include "base/options.h"
#include "base/percpu.h"
#include "base/report.h"
#include "stack/stacktrace.h"

pthread_mutex_t slab_caches_lock = PTHREAD_MUTEX_INITIALIZER;
struct list_head slab_caches = { &slab_caches, &slab_caches };
static struct kmem_cache boot_kmem_cache __attribute__((aligned(CACHE_LINE_SIZE)));	/* as the rest */
static struct kmem_cache_node boot_kmem_cache_node[MAX_NUMNODES];	/* only nr_node_ids touched */
static pthread_once_t slab_once = PTHREAD_ONCE_INIT;

static void free_cpu_slab(struct kmem_cache *s)
{
	pcpu_slot_free(s->cpu_slab);
	s->cpu_slab = NULL;
#ifdef SLUB_STATS
	for (int i = 0; i < SLAB_STAT_SLOTS; i++) {
		if (s->cpu_stats[i])
			pcpu_slot_free(s->cpu_stats[i]);
		s->cpu_stats[i] = NULL;
	}
#endif
}

/* Set up a cache whose name, size, align, flags and ctor are filled in. */
bool kmem_cache_open(struct kmem_cache *s)
{
	if (!calculate_sizes(s))
		return false;
	s->nr_cpu_slots = os_possible_cpus();
	sheaf_prepare(s);
	sheaf_setup(s);
	tsheaf_setup(s);
	set_min_partial(s);
	set_cpu_partial(s);
	s->populate_slabs = (unsigned int)slub_opt(populate_slabs);
	/* Zeroed slots: an all-zero slot is a valid empty one (mutex included). */
	s->cpu_slab = pcpu_slot_alloc(s->nr_cpu_slots);
	if (!s->cpu_slab)
		return false;
#ifdef SLUB_STATS
	for (int i = 0; i < SLAB_STAT_SLOTS; i++) {
		s->cpu_stats[i] = pcpu_slot_alloc(s->nr_cpu_slots);
		if (!s->cpu_stats[i]) {
			free_cpu_slab(s);
			return false;
		}
	}
#endif
	for_each_kmem_cache_node(s, node, n) {
		pthread_mutex_init(&n->list_lock, NULL);
		INIT_LIST_HEAD(&n->partial);
		INIT_LIST_HEAD(&n->full);
		pthread_mutex_init(&n->barn.lock, NULL);
		INIT_LIST_HEAD(&n->barn.sheaves_full);
		INIT_LIST_HEAD(&n->barn.sheaves_empty);
	}
	s->refcount = 1;
	return true;
}


/*
 * Choose the per-CPU mechanism once, before any cache exists: rseq when
 * glibc registered it for us, this thread has a CPU number, membarrier
 * agrees, and slub_rseq is on; the tid + cmpxchg16b protocol otherwise.
 */
static void choose_percpu_mode(void)
{
#if SLUB_HAVE_RSEQ_ASM
	/*
	 * failslab and the hardening options decide on the slow paths only
	 * (slab_harden.h): with one on, every call takes them, on the
	 * cmpxchg16b protocol.
	 */
	if (!slub_opt(slub_rseq) || !os_rseq_offset || slab_alloc_hooked || slab_free_hooked)
		return;
	if (*(volatile int32_t *)(rseq_abi() + 4) < 0)
		return;
#ifndef SLUB_FAKE_RSEQ		/* the counting build has no real rseq to fence */
	if (os_membarrier_register_rseq())
		return;
#endif
	slab_set_percpu_mode(os_rseq_offset);
#endif
}

/*
 * fork(): take every slab lock in the documented order (kmalloc's DMA lock,
 * the cache list, then per cache its CPU slots and its node), so that no
 * other thread is inside a slow path at the fork.  Registered with base at
 * FORK_SLAB (base/start.h): before options_lock and the page allocator's,
 * as the lock order says.
 */
/*
 * Only the slots of CPUs ever used (slab_cpus), whose lock is held
 * meanwhile so that no slot comes into use between prepare and parent:
 * with 512 possible CPUs a walk of them all touched a page per cache
 * chunk per CPU, 4 MiB and some 4600 page faults a fork.
 */
static void for_each_cache_lock(bool lock)
{
	struct list_head *pos;
	list_for_each(pos, &slab_caches) {
		struct kmem_cache *s = list_entry(pos, struct kmem_cache, list);
		for_each_used_cpu(cpu, &slab_cpus, s->nr_cpu_slots)
			os_mutex_hold(&cpu_slot(s, cpu)->lock, lock);
		for_each_kmem_cache_node(s, node, n) {
			os_mutex_hold(&n->barn.lock, lock);
			os_mutex_hold(&n->list_lock, lock);
		}
	}
}

/* fork(): the slab layer's locks, outside every other layer's (FORK_SLAB). */
static void slab_fork_prepare(void)
{
	slab_rcu_fork(SLAB_RCU_FORK_PREPARE);	/* first: liburcu's worker frees into slabs */
	kmalloc_fork_lock(true);
	sheaf_fork_lock(true);
	pthread_mutex_lock(&slab_caches_lock);
	pthread_mutex_lock(&slab_cpus.lock);
	for_each_cache_lock(true);
	tsheaf_fork_lock(true);
	pcpu_fork_lock(true);
}

static void slab_fork_parent(void)
{
	pcpu_fork_lock(false);
	tsheaf_fork_lock(false);
	for_each_cache_lock(false);
	pthread_mutex_unlock(&slab_cpus.lock);
	pthread_mutex_unlock(&slab_caches_lock);
	sheaf_fork_lock(false);
	kmalloc_fork_lock(false);
	slab_rcu_fork(SLAB_RCU_FORK_PARENT);
}

static void slab_fork_child(void)
{
	track_fork_child();
	struct list_head *pos;
	list_for_each(pos, &slab_caches) {
		struct kmem_cache *s = list_entry(pos, struct kmem_cache, list);
		for_each_used_cpu(cpu, &slab_cpus, s->nr_cpu_slots)
			pthread_mutex_init(&cpu_slot(s, cpu)->lock, NULL);
		for_each_kmem_cache_node(s, node, n) {
			pthread_mutex_init(&n->barn.lock, NULL);
			pthread_mutex_init(&n->list_lock, NULL);
		}
	}
	pthread_mutex_init(&slab_cpus.lock, NULL);
	pthread_mutex_init(&slab_caches_lock, NULL);
	pcpu_fork_child();
	sheaf_fork_child();
	kmalloc_fork_child();
	/*
	 * Linux keeps the membarrier registration across fork(); register
	 * anyway, not to depend on it.  Should that fail, the child (one
	 * thread now) can still switch to the cmpxchg16b protocol: the slots
	 * are valid in both.
	 */
	if (slub_percpu_rseq && os_membarrier_register_rseq()) {
		slab_set_percpu_mode(0);
		slub_report("membarrier registration failed in a forked child; using cmpxchg16b");
	}
	tsheaf_fork_child();	/* it frees to slabs, every lock set up again */
	slab_rcu_fork(SLAB_RCU_FORK_CHILD);	/* last: liburcu makes its worker anew */
}
slub_initcall(slab_initcall, .fork_level = FORK_SLAB, .fork_prepare = slab_fork_prepare,
	      .fork_parent = slab_fork_parent, .fork_child = slab_fork_child);


/*
 * Whether start-up made the boot cache.  It fails on an unusable system
 * (slub_unusable) or out of memory at the first allocation, and is not
 * tried again: every cache operation then fails cleanly instead.
 */
static bool slab_ready;
static bool boot_cache_open;	/* set once it is: then caches can be made */

static void slab_init(void)
{
	slub_ensure_init();
	slab_fp_init();		/* before the first freelist is written */
	slab_hooks_setup();	/* before the mode: the hooks choose it */
	slab_kasan_setup();	/* before the first cache a tool is told of */
	slab_set_percpu_mode(0);
	choose_percpu_mode();
	struct kmem_cache *s = &boot_kmem_cache;
	strcpy(s->name, "kmem_cache");
	/* A cache's node array follows it, as many as there are nodes (the kernel's too). */
	s->object_size = (unsigned int)(sizeof(struct kmem_cache) +
					nr_node_ids * sizeof(struct kmem_cache_node));
	s->node = boot_kmem_cache_node;
	s->align = calculate_alignment(SLAB_HWCACHE_ALIGN, 0, s->object_size);
	s->flags = SLAB_HWCACHE_ALIGN | __SLAB_NO_SHEAVES;	/* made before any sheaf cache can be */
	if (!kmem_cache_open(s)) {
		slub_report("cannot set up the kmem_cache cache: out of memory");
		return;
	}
	s->refcount = -1;	/* never merged, never destroyed (the kernel's boot caches) */
	slab_set_id(s);
	pthread_mutex_lock(&slab_caches_lock);	/* the decay thread may walk the list already */
	list_add_tail(&s->list, &slab_caches);
	pthread_mutex_unlock(&slab_caches_lock);
	__atomic_store_n(&boot_cache_open, true, __ATOMIC_RELEASE);
	if (!create_kmalloc_caches()) {
		slub_report("cannot set up the kmalloc caches: out of memory");
		return;
	}
	slab_stats_init();
	slab_exit_init();
	__atomic_store_n(&slab_ready, true, __ATOMIC_RELEASE);
}

bool slab_ensure_init(void)
{
	pthread_once(&slab_once, slab_init);
	return __atomic_load_n(&slab_ready, __ATOMIC_ACQUIRE);
}

const char *slub_percpu_mode(void)
{
	if (!slab_ensure_init())
		return NULL;
	return slub_percpu_rseq ? "rseq" : tsheaf_enabled() ? "cmpxchg16b + thread sheaves" :
	       "cmpxchg16b";
}

/*
 * "prefix-size", with "k" for whole KiB (kmalloc-96, kmalloc-8k), without
 * stdio: start-up names some sixty caches, and snprintf alone would bring
 * in a hundred KiB of libc text for every program that preloads us.
 */
void slab_cache_name(char *buf, size_t n, const char *prefix, unsigned int size)
{
	char digits[12];
	int d = 0;
	bool kilo = size >= 1024 && size % 1024 == 0;
	unsigned int v = kilo ? size / 1024 : size;
	do {
		digits[d++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	size_t len = 0;
	while (*prefix && len + 1 < n)
		buf[len++] = *prefix++;
	if (len + 1 < n)
		buf[len++] = '-';
	while (d && len + 1 < n)
		buf[len++] = digits[--d];
	if (kilo && len + 1 < n)
		buf[len++] = 'k';
	buf[len] = 0;
}

/* ---- alloc and free -------------------------------------------------------- */

void *kmem_cache_alloc_node(struct kmem_cache *s, gfp_t gfp, int node)
{
	return slab_alloc(s, gfp, node);
}

void *kmem_cache_alloc(struct kmem_cache *s, gfp_t gfp)
{
	return slab_alloc(s, gfp, NUMA_NO_NODE);
}

void *kmem_cache_zalloc(struct kmem_cache *s, gfp_t gfp)
{
	return slab_alloc(s, gfp | __GFP_ZERO, NUMA_NO_NODE);
}

/* Everything but a good object of @s: NULL, a bad pointer, another cache's object. */
static __cold void kmem_cache_free_slow(struct kmem_cache *s, void *object)
{
	struct slab *slab;
	if (!object)
		return;
	if (unlikely(is_kfence_address(object))) {
		kfence_free(object, s, "kmem_cache_free");
		return;
	}
	struct kmem_cache *owner = slab_free_prepare(object, &slab, "kmem_cache_free");
	if (!owner)
		return;
	if (owner != s) {
		slub_report_call("Wrong slab cache. %s but object is from %s", s ? s->name : "(null)",
			    owner->name);
		s = owner;	/* free it where it belongs */
	}
	slab_free(s, slab, object);
}

void kmem_cache_free(struct kmem_cache *s, void *object)
{
	slab_free_prefetch(object);
	struct slab *slab;
#ifdef SLUB_UNCHECKED_FREE
	slab = object_slab_trusted(object);	/* NULL or an object of @s (slab.h) */
	bool ours = slab != NULL;
#else
	struct kmem_cache *owner = object_cache(object, &slab);
	bool ours = owner && owner == s;
#endif
	if (likely(ours))
		slab_free(s, slab, object);
	else
		kmem_cache_free_slow(s, object);
}

int kmem_cache_alloc_bulk(struct kmem_cache *s, gfp_t gfp, size_t nr, void **p)
{
	for (size_t i = 0; i < nr; i++) {
		p[i] = slab_alloc(s, gfp, NUMA_NO_NODE);
		if (unlikely(!p[i])) {
			kmem_cache_free_bulk(s, i, p);
			return 0;
		}
	}
	return (int)nr;
}

void kmem_cache_free_bulk(struct kmem_cache *s, size_t nr, void **p)
{
	for (size_t i = 0; i < nr; i++)
		kmem_cache_free(s, p[i]);
}

/* ---- cache lifecycle -------------------------------------------------------- */

static bool is_power_of_2(unsigned int x)
{
	return x && !(x & (x - 1));
}

static const char *create_check(const char *name, unsigned int size, unsigned int align,
				slab_flags_t flags)
{
	if (!name || !*name)
		return "no name";
	if (strlen(name) >= SLUB_NAME_MAX)
		return "name longer than 63 characters";
	if (!size)
		return "size 0";
	if (size > (PAGE_SIZE << MAX_PAGE_ORDER))
		return "size larger than 4 MiB (KMALLOC_MAX_SIZE)";
	if (align && !is_power_of_2(align))
		return "alignment not a power of two";
	/*
	 * A slab starts on a boundary of its own size, so any alignment up to
	 * the largest slab's size holds once the stride is a multiple of it.
	 */
	if (align > (PAGE_SIZE << MAX_PAGE_ORDER))
		return "alignment larger than the largest slab (4 MiB)";
	if (flags & ~SLAB_VALID_FLAGS)
		return "unknown flags";
	return NULL;
}

/*
 * An existing cache that can serve these objects (slab_merge.c), with one
 * more reference and @name as an alias, or NULL.  The alias node is made
 * before the lock: nothing allocates under slab_caches_lock.
 */
static struct kmem_cache *merge_into_existing(const char *name, unsigned int size,
					      unsigned int align, slab_flags_t flags,
					      void (*ctor)(void *), unsigned int max_order)
{
	if (!slub_opt(slub_merge) || ctor || (flags & SLAB_NEVER_MERGE))
		return NULL;
	/*
	 * kmalloc serves the node once start-up has made its caches; the
	 * allocator's own, so no injected failure (__GFP_NOFAIL: a real one
	 * only loses the alias's name).
	 */
	bool ready = __atomic_load_n(&slab_ready, __ATOMIC_ACQUIRE);
	struct slab_alias *spare = ready ? kmalloc(sizeof(*spare), GFP_KERNEL | __GFP_NOFAIL) : NULL;
	pthread_mutex_lock(&slab_caches_lock);
	struct kmem_cache *s = find_mergeable(size, align, flags, ctor, max_order);
	if (s) {
		WRITE_ONCE(s->refcount, s->refcount + 1);	/* the aliases attribute reads it unlocked */
		/* The larger of the two sizes is what both may use (zeroing, ksize). */
		if (s->object_size < size)
			WRITE_ONCE(s->object_size, size);
		if (s->inuse < ALIGN_UP(size, sizeof(void *)))
			s->inuse = (unsigned int)ALIGN_UP(size, sizeof(void *));
		slab_alias_add(s, &spare, name);
	}
	pthread_mutex_unlock(&slab_caches_lock);
	kfree(spare);
	return s;
}

/*
 * With 'O' in slub_debug, debug metadata (red zones, poison's outside free
 * pointer, tracks) is dropped where it would raise the order one object
 * needs, as the kernel's disable_higher_order_debug.
 */
static slab_flags_t drop_costly_debug(struct kmem_cache *s)
{
	const slab_flags_t metadata = SLAB_RED_ZONE | SLAB_POISON | SLAB_STORE_USER;
	struct kmem_cache laid_out = *s;
	if (!(s->flags & metadata) || !calculate_sizes(&laid_out) ||
	    get_order(laid_out.size) <= get_order(s->object_size))
		return s->flags;
	return s->flags & ~metadata;
}

static struct kmem_cache *create_cache(const char *name, unsigned int size,
				       const struct kmem_cache_args *args, slab_flags_t flags,
				       unsigned int max_order)
{
	unsigned int align = args->align, usersize = args->usersize;
	void (*ctor)(void *) = args->ctor;
	/* What slub_debug asks for this name: a cache it selects never merges. */
	bool higher_order_off;
	flags |= slub_debug_flags(name, &higher_order_off);
	flags |= slab_kasan_flags(flags);
	/* The cache failslab_cache names keeps to itself, as the kernel's SLAB_FAILSLAB. */
	if (slub_failslab_on && slub_opt_str(failslab_cache)[0] &&
	    !strcmp(name, slub_opt_str(failslab_cache)))
		flags |= SLAB_NO_MERGE;
	slub_fork_handlers_check();
	/* Called by start-up itself too: check the boot cache, not slab_ready. */
	if (!__atomic_load_n(&boot_cache_open, __ATOMIC_ACQUIRE))
		return NULL;	/* no boot cache to take a struct kmem_cache from */
	if (slab_in_cache_walk) {
		slub_report("kmem_cache_create(%s) inside slub_for_each_cache(): refused", name);
		return NULL;
	}
	/* A usercopy region or a sheaf capacity of its own is the cache's own. */
	struct kmem_cache *s = usersize || args->sheaf_capacity ? NULL :
			       merge_into_existing(name, size, align, flags, ctor, max_order);
	if (s)
		return s;
	s = kmem_cache_zalloc(&boot_kmem_cache, GFP_KERNEL);
	if (!s)
		return NULL;
	s->node = (struct kmem_cache_node *)(s + 1);
	strcpy(s->name, name);
	s->object_size = size;
	s->flags = flags;
	s->ctor = ctor;
	s->useroffset = args->useroffset;
	s->usersize = usersize;
	s->freeptr_offset = args->freeptr_offset;
	s->use_freeptr_offset = args->use_freeptr_offset;
	s->args_sheaf_capacity = args->sheaf_capacity;
	s->max_order = max_order;
	s->align = calculate_alignment(flags, align, size);
	if (higher_order_off)
		s->flags = drop_costly_debug(s);
	if (!kmem_cache_open(s)) {
		kmem_cache_free(&boot_kmem_cache, s);
		return NULL;
	}
	slab_set_id(s);
	pthread_mutex_lock(&slab_caches_lock);
	list_add_tail(&s->list, &slab_caches);
	pthread_mutex_unlock(&slab_caches_lock);
	return s;
}

struct kmem_cache *__kmem_cache_create(const char *name, unsigned int size, unsigned int align,
				       slab_flags_t flags, void (*ctor)(void *), unsigned int max_order)
{
	/*
	 * kmalloc and malloc caches of a power-of-two size are aligned to it
	 * (the memalign family relies on it), as the kernel's kmalloc caches
	 * are: stated, because red zones move objects off the natural place.
	 */
	if ((flags & SLAB_KMALLOC) && !(size & (size - 1)) && size > align)
		align = size;
	struct kmem_cache_args args = { .align = align, .ctor = ctor };
	return create_cache(name, size, &args, flags, max_order);
}

/* What the kernel refuses in kmem_cache_args, or NULL. */
static const char *args_check(unsigned int size, const struct kmem_cache_args *args,
			      slab_flags_t flags)
{
	if (args->use_freeptr_offset &&
	    (!(flags & SLAB_TYPESAFE_BY_RCU) || args->freeptr_offset % sizeof(void *) ||
	     args->freeptr_offset > size - sizeof(void *) || size < sizeof(void *)))
		return "freeptr_offset: only a word-aligned field inside a SLAB_TYPESAFE_BY_RCU object";
	if (args->sheaf_capacity > SHEAF_CAPACITY_MAX)
		return "sheaf_capacity above " PCPU_STR(SHEAF_CAPACITY_MAX);
	return NULL;
}

struct kmem_cache *kmem_cache_create_args(const char *name, unsigned int size,
					  const struct kmem_cache_args *args, slab_flags_t flags)
{
	static const struct kmem_cache_args defaults;
	struct kmem_cache_args a = args ? *args : defaults;

	slab_ensure_init();
	if (flags & SLAB_STORE_USER)
		stack_trace_prime();	/* the program's call: a safe place to ready the unwinder */
	const char *why = create_check(name, size, a.align, flags);
	if (!why)
		why = args_check(size, &a, flags);
	/* The first RCU use may be this: liburcu is loaded here, outside every lock. */
	if (!why && (flags & SLAB_TYPESAFE_BY_RCU) && !slab_rcu_load())
		why = "SLAB_TYPESAFE_BY_RCU needs liburcu, which could not be loaded";
	if (!why && (a.usersize > size || size - a.usersize < a.useroffset ||
		     (!a.usersize && a.useroffset))) {
		/* As the kernel: warn, and make the cache without the region. */
		slub_report("WARNING kmem_cache_create_usercopy(%s): region %u+%u outside the %u-byte object; ignored",
			    name, a.useroffset, a.usersize, size);
		a.useroffset = a.usersize = 0;
	}
	struct kmem_cache *s = why ? NULL : create_cache(name, size, &a, flags, 0);
	if (!s) {
		slub_report("kmem_cache_create(%s) failed: %s", name ? name : "(null)",
			    why ? why : "out of memory");
		if (flags & SLAB_PANIC)
			abort();
		errno = why ? EINVAL : ENOMEM;
	}
	return s;
}

struct kmem_cache *kmem_cache_create_usercopy(const char *name, unsigned int size,
					      unsigned int align, slab_flags_t flags,
					      unsigned int useroffset, unsigned int usersize,
					      void (*ctor)(void *))
{
	struct kmem_cache_args args = {
		.align = align, .useroffset = useroffset, .usersize = usersize, .ctor = ctor,
	};
	return kmem_cache_create_args(name, size, &args, flags);
}

/* Parenthesised: slub.h makes the name a macro that picks this or the args form. */
struct kmem_cache *(kmem_cache_create)(const char *name, unsigned int size, unsigned int align,
				       slab_flags_t flags, void (*ctor)(void *))
{
	return kmem_cache_create_usercopy(name, size, align, flags, 0, 0, ctor);
}

/*
 * Drop a reference.  The boot cache and the size classes (kmalloc's, the
 * malloc library's) hold one reference of the allocator's own, which only
 * @own (the malloc classes giving back a cache made twice) may drop: a
 * user's extra destroy of a cache merged into kmalloc-64 must not take
 * kmalloc-64 away.
 */
static void cache_put(struct kmem_cache *s, bool own)
{
	slub_fork_handlers_check();
	if (!s)
		return;
	if (slab_in_cache_walk) {
		slub_report("kmem_cache_destroy(%s) inside slub_for_each_cache(): refused", s->name);
		return;
	}
	pthread_mutex_lock(&slab_caches_lock);
	if (s->refcount < 0 || (!own && s->refcount == 1 && (s->flags & SLAB_KMALLOC))) {
		pthread_mutex_unlock(&slab_caches_lock);
		slub_report("kmem_cache_destroy(%s): a cache of the allocator's own; ignored", s->name);
		return;
	}
	WRITE_ONCE(s->refcount, s->refcount - 1);
	if (s->refcount > 0) {	/* one alias fewer */
		pthread_mutex_unlock(&slab_caches_lock);
		return;
	}
	if (__kmem_cache_release(s)) {
		/* Memory in use stays valid: the cache stays, as in the kernel. */
		WRITE_ONCE(s->refcount, 1);
		pthread_mutex_unlock(&slab_caches_lock);
		/* Each object it can find, with its track; full slabs only a debug cache lists. */
		if (!debug_list_leaks(s))
			slub_report("Objects remaining in %s on kmem_cache_destroy() (in full slabs, "
				    "which only a debug cache keeps a list of)", s->name);
		return;
	}
	list_del(&s->list);
	pthread_mutex_unlock(&slab_caches_lock);
	kfence_shutdown_cache(s);
	/* Its slabs still waiting for readers name it. */
	if (!slab_rcu_cache_release(s))
		return;
	slab_aliases_free(s);
	free_cpu_slab(s);
	kmem_cache_free(&boot_kmem_cache, s);
}

void kmem_cache_destroy(struct kmem_cache *s)
{
	/* rcu_barrier() semantics: what RCU still holds of @s comes back first. */
	if (s && READ_ONCE(s->refcount) == 1)
		slab_rcu_cache_quiesce(s);
	cache_put(s, false);
}

void slab_cache_put_own(struct kmem_cache *s)
{
	cache_put(s, true);
}

int kmem_cache_shrink(struct kmem_cache *s)
{
	if (!s)
		return 0;
	return __kmem_cache_shrink(s);
}

unsigned int kmem_cache_size(struct kmem_cache *s)
{
	return s->object_size;
}

void slab_for_each_cache(void (*fn)(struct kmem_cache *s, void *arg), void *arg)
{
	slub_fork_handlers_check();
	struct list_head *pos;
	slab_ensure_init();
	pthread_mutex_lock(&slab_caches_lock);
	list_for_each(pos, &slab_caches)
		fn(list_entry(pos, struct kmem_cache, list), arg);
	pthread_mutex_unlock(&slab_caches_lock);
}

/* Validate every cache (tests; needs a quiet allocator). */
unsigned long slab_validate_all(void)
{
	slub_fork_handlers_check();
	unsigned long errors = 0;
	struct list_head *pos;
	slab_ensure_init();
	pthread_mutex_lock(&slab_caches_lock);
	list_for_each(pos, &slab_caches)
		errors += slab_validate_cache(list_entry(pos, struct kmem_cache, list));
	pthread_mutex_unlock(&slab_caches_lock);
	return errors;
}

int slub_validate(struct kmem_cache *s)
{
	if (!s)
		return -EINVAL;
	slub_fork_handlers_check();
	unsigned long errors = slab_validate_cache(s);
	return errors > INT_MAX ? INT_MAX : (int)errors;
}
