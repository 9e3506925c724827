/* SPDX-License-Identifier: MIT */
/*
 * slab.h - the SLUB engine's types and its inline fast paths.
 *
 * Glossary
 *   slab        2^order pages (order 0 and up) of objects of one cache;
 *               its metadata (cache, freelist, inuse, objects, frozen) is
 *               in its head's page descriptor, read as a struct slab, and
 *               its list links in the section's link table.
 *   cpu slab    the one slab a CPU allocates from (frozen: on no list).
 *   freelist    free objects linked through the word at s->offset, stored
 *               encoded ("free pointers" below).  A cpu slab has two: the
 *               CPU's lockless one (c->freelist) and the slab's own
 *               (slab->freelist), where remote frees land.
 *   partial     a slab with free objects that no CPU allocates from: on its
 *               node's partial list, or on a CPU's partial list.
 *   full        no free objects and not a cpu slab: on no list at all.
 *   sheaves     the kernel's other per-CPU design (sheaf.h): a cache with a
 *               sheaf capacity has no cpu slabs and no cpu partial lists.
 *   built       a new slab links only the objects whose free pointers are
 *               in its first page; the rest are free but unlinked until the freelist
 *               runs dry, then linked a page at a time.  Pages nobody
 *               allocated from are never written, so never resident: a
 *               32 KiB slab with one object in use costs a page, not eight.
 *               A slab has free objects iff freelist || built < objects,
 *               and inuse = built - (objects on slab->freelist).
 *
 * Lock order (numbered; a lock is only taken while holding lower numbers)
 *   0. kmalloc_dma_lock   making a dma-kmalloc cache on first use
 *   1. slab_caches_lock   the cache list, create/destroy/shrink
 *   2. c->lock            one CPU's slot: its cpu slab and cpu partial list,
 *                         or its main and spare sheaves
 *   2b. barn->lock        the node's barn of sheaves (sheaf.h)
 *   3. n->list_lock       the node's partial list and nr_partial
 *   3b. tsheaf_lock       the list of threads' sheaf blocks (tsheaf.c)
 *   4. (page allocator: pcp lock, zone lock, region lock)
 * slab->freelist+counters change only by a 16-byte compare-and-swap.
 * While the process has one thread, slub.c's slow paths skip locks 2-3 and
 * the CAS (plain compare and store): see slab_lock() there.
 *
 * Why a tid and a double-width CAS (and what differs from the kernel)
 *   The kernel's fast path relies on running on the CPU whose slot it
 *   touches.  A thread here can be migrated between reading its CPU number
 *   and committing, and two threads can share a CPU's slot, so the
 *   (freelist, tid) pair is always changed with a locked cmpxchg16b: a
 *   commit against a slot that changed under it fails and retries.
 *   The slow path (and a thread flushing another CPU's slot) takes c->lock
 *   and first *retires* the slot: (freelist, tid) -> (NULL, tid | 1).  An
 *   odd tid sends every fast path to the slow path, so while the lock
 *   holder swaps c->slab no lockless push or pop can land; it then
 *   *publishes* (freelist', tid + 1), even again.  Fast operations add 2.
 *
 * Why rseq when it can be had (slub_percpu_rseq)
 *   Two locked cmpxchg16b per alloc+free pair cost more than a whole
 *   malloc/free pair of tcmalloc.  With glibc's rseq area and membarrier
 *   the pop and push are restartable sequences (percpu_rseq.h) that commit
 *   with a plain store; the tid is then only the mark.  A lock holder marks
 *   its own CPU's slot inside a sequence, or marks any slot and then runs
 *   membarrier(RSEQ) on that CPU, which restarts every sequence there.
 *   Without rseq (valgrind, glibc.pthread.rseq=0, slub_rseq=0, TSan
 *   builds) the tid + cmpxchg16b protocol above is used, process-wide.
 */
#ifndef SLUB_SLAB_H
#define SLUB_SLAB_H

#include <pthread.h>

#include <slub.h>
#include "base/compiler.h"
#include "base/list.h"
#include "page/memmap.h"
#include "base/numa.h"
#include "base/os.h"
#include "slab/core/pagemap.h"
#include "slab/core/percpu_rseq.h"
#include "slab/sheaf/sheaf.h"
#include "slab/sheaf/sheaf_rseq.h"
#include "slab/sheaf/tsheaf.h"
#include "slab/core/stat_items.h"

#define MAX_OBJS_PER_PAGE 32767		/* slab->inuse is 15 bits */
#define MIN_PARTIAL 5
#define MAX_PARTIAL 10
#define CACHE_LINE_SIZE 64
#define ARCH_SLAB_MINALIGN 8
#define SLUB_NAME_MAX 64
#define SLUB_ID_MAX 24		/* ":dDaFA-" and the size, as the kernel's ID_STR_LENGTH */

/* Internal cache flags, above the public SLAB_* bits. */
#define __OBJECT_POISON   0x80000000u	/* poison the object itself */
#define __SLAB_NO_SHEAVES 0x40000000u	/* never sheaves, whatever the options (the sheaves' own caches) */
#define __SLAB_KASAN      0x20000000u	/* objects' states told to ASan or valgrind (slab_kasan.h) */
#define SLAB_DEBUG_FLAGS (SLAB_CONSISTENCY_CHECKS | SLAB_RED_ZONE | SLAB_POISON | \
			  SLAB_STORE_USER | SLAB_TRACE)
#define SLAB_VALID_FLAGS (SLAB_DEBUG_FLAGS | SLAB_HWCACHE_ALIGN | SLAB_PANIC |     \
			  SLAB_CACHE_DMA | SLAB_CACHE_DMA32 | SLAB_RECLAIM_ACCOUNT | \
			  SLAB_ACCOUNT | SLAB_NO_MERGE | SLAB_TYPESAFE_BY_RCU |     \
			  SLAB_NOLEAKTRACE | SLAB_KMALLOC)

/*
 * Flags that keep a cache to itself (the kernel's SLAB_NEVER_MERGE: debug
 * metadata, RCU, the opt-out), and flags two caches must agree on to merge
 * (SLAB_MERGE_SAME: where their memory comes from and how it is counted).
 */
#define SLAB_NEVER_MERGE (SLAB_DEBUG_FLAGS | SLAB_TYPESAFE_BY_RCU | SLAB_NOLEAKTRACE | SLAB_NO_MERGE)
#define SLAB_MERGE_SAME (SLAB_RECLAIM_ACCOUNT | SLAB_CACHE_DMA | SLAB_CACHE_DMA32 | SLAB_ACCOUNT | \
			 __SLAB_KASAN)

/* Caches that take the debug paths (slab_debug.h): slub_debug's, and KASAN's. */
#define SLAB_SLOW_FLAGS (SLAB_DEBUG_FLAGS | __SLAB_KASAN)

/* One more name of a merged cache, and how many creations used it. */
struct slab_alias {
	struct slab_alias *next;
	unsigned int count;
	char name[SLUB_NAME_MAX];
};

/* Alloc/free track of a U cache, as the kernel's, with the thread too (slab_track.c). */
struct track {
	unsigned long addr;	/* the allocator's caller; 0: never */
	uint32_t handle;	/* stack depot handle */
	int cpu;
	int pid;
	int tid;
	unsigned long when;	/* milliseconds (os_now_ms) */
};
static_assert(sizeof(struct track) == 32, "the kernel's size");

/* Order and objects per slab, packed as the kernel's oo. */
struct kmem_cache_order_objects {
	unsigned int x;
};
#define OO_SHIFT 16
#define OO_MASK ((1u << OO_SHIFT) - 1)

static inline unsigned int oo_order(struct kmem_cache_order_objects x)
{
	return x.x >> OO_SHIFT;
}

static inline unsigned int oo_objects(struct kmem_cache_order_objects x)
{
	return x.x & OO_MASK;
}

/*
 * struct slab - a slab's own view of its head's page descriptor, as the
 * kernel's struct slab overlays its struct page: the general part (flags,
 * order, node), the cache where a tail keeps its head pointer, and the
 * freelist+counters unit in the list slot a free block uses.  Everything a
 * free reads and a remote free swaps is in these 32 bytes, so a slab may be
 * one page (order 0) as the kernel's.  What does not fit, the partial-list
 * links, is cold (list paths, under the node's lock or the slot's) and
 * lives in the section's link table (struct slab_link, below).
 */
struct slab {
	uint32_t flags;			/* PG_slab | PG_head | ... (page_flags) */
	uint8_t order;
	uint8_t zone;
	uint16_t node;
	struct kmem_cache *slab_cache;	/* set exactly while this is a slab */
	void *freelist;			/* first free object */
	union {
		unsigned long counters;	/* union slab_counters; with freelist one 16-byte CAS */
		struct {
			uint32_t counters_low;
			uint16_t counters_built;	/* its built, alone: one load on a free */
			uint16_t counters_high;
		};
	};
} __attribute__((aligned(32)));

static_assert(sizeof(struct slab) == sizeof(struct page), "one descriptor");
static_assert(offsetof(struct slab, slab_cache) == offsetof(struct page, compound_head) &&
	      offsetof(struct slab, freelist) == offsetof(struct page, lru),
	      "struct slab mirrors struct page");
static_assert(offsetof(struct slab, freelist) % 16 == 0 &&
	      offsetof(struct slab, counters) == offsetof(struct slab, freelist) + 8,
	      "freelist+counters: one 16-byte aligned CAS unit");

/*
 * A slab's list links, in its section's link table: the node's partial list
 * (or a debug cache's full list), or a CPU's partial chain.  The entry of
 * the slab headed at descriptor d is at the same index as d, so each way is
 * arithmetic on the section's base (slabs live in sections: memmap.h).
 */
struct slab_link {
	union {
		struct list_head lru;
		struct slab *next;
		struct rcu_head rcu_head;	/* or, discarded, waiting for a grace period (rcu.h) */
	};
};
static_assert(sizeof(struct slab_link) == SLAB_LINK_SIZE, "one link table entry");
static_assert(sizeof(struct rcu_head) == sizeof(struct list_head), "an rcu_head in the lru's place");

static inline struct slab_link *slab_link(const struct slab *slab)
{
	uintptr_t d = (uintptr_t)slab, base = d & ~(SECTION_SIZE - 1);
	return (struct slab_link *)(base + SLAB_LINK_OFFSET +
				    (d - base) / (sizeof(struct page) / SLAB_LINK_SIZE));
}

static inline struct list_head *slab_lru(const struct slab *slab)
{
	return &slab_link(slab)->lru;
}

/* The slab whose partial-list entry is @lru (list_entry's role). */
static inline struct slab *lru_slab(const struct list_head *lru)
{
	uintptr_t l = (uintptr_t)lru, base = l & ~(SECTION_SIZE - 1);
	return (struct slab *)(base + (l - base - SLAB_LINK_OFFSET) *
				      (sizeof(struct page) / SLAB_LINK_SIZE));
}

#define slab_next(slab) (slab_link(slab)->next)

/* SLUB_PAGEMAP: a slab's first page, from its descriptor and an address in its section. */
static inline uintptr_t slab_start_in_section(uintptr_t a, const struct slab *slab)
{
	return (a & ~(SECTION_SIZE - 1)) +
	       ((uintptr_t)slab & (SECTION_SIZE - 1)) * (PAGE_SIZE / sizeof(struct page));
}

/* A slab's head descriptor: any page's (order 0 and up). */
static inline struct slab *page_slab(struct page *page)
{
	return (struct slab *)page;
}

static inline struct page *slab_page(struct slab *slab)
{
	return (struct page *)slab;
}

static inline uint32_t slab_flags(const struct slab *slab)
{
	return __atomic_load_n(&slab->flags, __ATOMIC_RELAXED);
}

/* The slab's counters word: one half of the CAS unit. */
union slab_counters {
	unsigned long counters;
	struct {
		unsigned objects:16;
		unsigned inuse:15;	/* objects out of the slab: allocated or on a CPU freelist */
		unsigned frozen:1;
		unsigned built:16;	/* objects [built, objects) were never linked: free; a free
				   checks its index against it (one 16-bit load) */
	};
};
static_assert(sizeof(union slab_counters) == sizeof(unsigned long), "counters");

/* One CPU's slot of a cache.  freelist+tid: one 16-byte CAS unit. */
struct kmem_cache_cpu {
	void *freelist;			/* next object to hand out */
	unsigned long tid;		/* even: live; odd: retired by a lock holder */
	struct slab *slab;		/* the cpu slab (frozen) or NULL */
	struct slab *partial;		/* cpu partial list, chained by slab_next() */
	unsigned int nr_partial;	/* slabs on it */
	pthread_mutex_t lock;		/* slow path and takeover of this slot */
	/* A cache with sheaves uses these instead of the fields above (sheaf.h). */
	union {
		struct {
			unsigned int sheaf_size;	/* objects in main */
			unsigned int sheaf_room;	/* main's capacity; 0: no main, or retired */
		};
		uint64_t sheaf_word;		/* both: retired as one */
	};
	struct slab_sheaf *main;	/* NULL until the slot's first slow path */
	struct slab_sheaf *spare;	/* empty, full or in between; or NULL */
	unsigned long sheaf_seen;	/* the idle decay's last look (sheaf.c) */
} __attribute__((aligned(64)));
/* The rseq sequences find slots at cpu << PCPU_UNIT_SHIFT and read tid at 8, slab at 16. */
static_assert(sizeof(struct kmem_cache_cpu) == PCPU_SLOT_SIZE, "one percpu slot");
static_assert(offsetof(struct kmem_cache_cpu, tid) == 8 &&
	      offsetof(struct kmem_cache_cpu, slab) == 16, "offsets baked into the rseq code");
static_assert(offsetof(struct kmem_cache_cpu, sheaf_size) == SHEAF_SLOT_SIZE &&
	      offsetof(struct kmem_cache_cpu, sheaf_room) == SHEAF_SLOT_ROOM &&
	      offsetof(struct kmem_cache_cpu, sheaf_word) == SHEAF_SLOT_SIZE &&
	      offsetof(struct kmem_cache_cpu, main) == SHEAF_SLOT_MAIN &&
	      offsetof(struct slab_sheaf, objects) == SHEAF_OBJECTS,
	      "offsets baked into the sheaf sequences (sheaf_rseq.h)");

struct kmem_cache_node {
	pthread_mutex_t list_lock;
	unsigned long nr_partial;
	struct list_head partial;	/* via slab_lru() */
	unsigned long nr_slabs;		/* all slabs of the node */
	unsigned long total_objects;
	unsigned long total_pages;	/* pages of all slabs (orders may differ) */
	unsigned long peak_pages;	/* the most total_pages has been */
	struct list_head full;		/* a debug cache's slabs with no free object */
	/*
	 * Slabs being made: counted from before their first read of the
	 * cache's layout until they are in nr_slabs, so that a switch of the
	 * layout (slab_set_debug) sees every slab that may use the old one.
	 */
	unsigned long nr_building;
	unsigned long trims;		/* slab_trim_partial() calls (under list_lock) */
	struct node_barn barn;		/* sheaves traded between the node's CPUs */
};

struct kmem_cache {
	/* The first line: all a free reads here (slab_object_valid_at, the push), so one line a cache. */
	struct kmem_cache_cpu *cpu_slab;	/* CPU 0's slot (percpu.h); CPU n's is cpu_slot() */
	uint64_t reciprocal_size;		/* ceil(2^64 / size): index without a division */
	/*
	 * The slots the fast paths may use: the unqueued sequences are given
	 * cpu_slab_slots, the sheaf sequences sheaf_slots.  One of the two is
	 * nr_cpu_slots, the other 0, and a sequence given 0 gives up at once.
	 */
	unsigned int cpu_slab_slots;
	unsigned int sheaf_slots;
	/*
	 * The sheaf pushes': sheaf_slots on one node, 0 on more, where a free
	 * must first ask whether its object is of this node (out of line).
	 */
	unsigned int sheaf_free_slots;
	unsigned int flags;
	unsigned int size;		/* object + metadata, aligned: the stride */
	unsigned int object_size;	/* what the user asked for */
	unsigned int offset;		/* free pointer offset */
	unsigned int tsheaf_off;		/* this cache's thread sheaf in a block (tsheaf.h); 0: none */
	unsigned int inuse;		/* offset of metadata after the object */
	unsigned int align;
	unsigned int red_left_pad;
	struct kmem_cache_order_objects oo;	/* preferred order */
	struct kmem_cache_order_objects min;	/* fallback order */
	gfp_t allocflags;
	unsigned int min_partial;
	unsigned int cpu_partial;		/* objects kept on cpu partial lists */
	unsigned int cpu_partial_slabs;		/* the same, in slabs */
	void (*ctor)(void *);
	int refcount;				/* creators sharing it; -1: never merged (boot) */
	bool ctor_zero_warned;
	unsigned int useroffset, usersize;	/* kmem_cache_create_usercopy's region */
	unsigned int freeptr_offset;		/* the free pointer's place, if use_freeptr_offset */
	bool use_freeptr_offset;		/* kmem_cache_args': inside an RCU cache's object */
	unsigned int args_sheaf_capacity;	/* asked at creation (0: the option slub_sheaves) */
	unsigned int sheaf_capacity;		/* objects per sheaf; 0: unqueued cpu slabs */
	struct kmem_cache *sheaf_cache;		/* where the sheaves come from (sheaf.c) */
	unsigned long nr_sheaves;		/* sheaves in existence */
	char name[SLUB_NAME_MAX];		/* the first creator's */
	char id[SLUB_ID_MAX];			/* ":[flags-]size" if mergeable, else "" */
	struct slab_alias *aliases;		/* the other names merged into it */
	struct list_head list;			/* slab_caches */
	/*
	 * One per node in use (nr_node_ids), after the descriptor itself: a
	 * cache with an array of MAX_NUMNODES would be 64 nodes long.
	 */
	struct kmem_cache_node *node;
	unsigned int nr_cpu_slots;
	unsigned int lone_cpu;			/* 1 + the slot a lone thread last filled (slub.c) */
	unsigned int populate_slabs;		/* slabs held before new ones are populated whole */
	unsigned int max_order;			/* at least this high a limit (malloc classes) */
	int layout_busy;			/* slab_set_debug is changing the layout */
	unsigned int layout_gen;		/* layouts taken by slab_set_debug */
	unsigned long rcu_pending_objects;	/* queued by kfree_rcu, or a debug free, for a grace period */
	unsigned long rcu_pending_slabs;	/* SLAB_TYPESAFE_BY_RCU slabs waiting to go back */
	struct random_seq *random_seq;		/* slab_freelist_random's order (slab_random.c) */
#ifdef SLUB_STATS
	unsigned int *cpu_stats[SLAB_STAT_SLOTS];	/* CPU 0's counters, in percpu slots (stat_items.h) */
#endif
};
/* Made HWCACHE_ALIGN'ed (slab_common.c): the fields a free reads share the first line. */
static_assert(offsetof(struct kmem_cache, red_left_pad) + sizeof(unsigned int) <= CACHE_LINE_SIZE,
	      "a free's fields of kmem_cache in one line");

static inline struct kmem_cache_node *get_node(struct kmem_cache *s, int node)
{
	return &s->node[node];
}

/* Every node of @s (declares @node and @n). */
#define for_each_kmem_cache_node(s, node, n)                                    \
	for (int node = 0; node < (int)nr_node_ids; node++)                      \
		for (struct kmem_cache_node *n = get_node(s, node); n; n = NULL)

/* The node of this CPU's memory (every node has memory here). */
static inline int numa_mem_id(void)
{
	return numa_node_id();
}

/* The node a request for @node looks at first: NUMA_NO_NODE's is the local one. */
static inline int slab_search_node(int node)
{
	return node == NUMA_NO_NODE || (unsigned int)node >= nr_node_ids ? numa_mem_id() : node;
}

static inline int slab_nid(const struct slab *slab)
{
	return slab->node;
}

/* Is a request for @node one this CPU's node serves?  (Sheaves: this node's objects.) */
static inline bool node_match_cpu(int node)
{
	return node == NUMA_NO_NODE || (unsigned int)node >= nr_node_ids || node == numa_mem_id();
}

/* May @slab serve a request for @node?  Any for NUMA_NO_NODE (or a node that is none). */
static inline bool node_match(const struct slab *slab, int node)
{
	return node == NUMA_NO_NODE || (unsigned int)node >= nr_node_ids || slab_nid(slab) == node;
}

/* The node list @slab belongs on. */
static inline struct kmem_cache_node *slab_node(struct kmem_cache *s, const struct slab *slab)
{
	return get_node(s, slab_nid(slab));
}

/*
 * Frees of another node's objects bypass the sheaves.  Out of line only:
 * with more than one node the inline pushes are given no slot (sheaf.c's
 * sheaf_free_slots), so one node pays no test for it.
 */
static inline bool slab_on_this_node(const struct slab *slab)
{
	return nr_node_ids == 1 || slab_nid(slab) == numa_mem_id();
}

/* A slab's counters, read whole: others change them under a CAS or a list lock. */
static inline union slab_counters read_counters(const struct slab *slab)
{
	return (union slab_counters){ .counters =
		__atomic_load_n(&slab->counters, __ATOMIC_RELAXED) };
}

/* The counters' built alone (slab_object_valid_at): one 16-bit load, no shifts. */
static inline unsigned int read_built(const struct slab *slab)
{
	return __atomic_load_n(&slab->counters_built, __ATOMIC_RELAXED);
}

/* The node's partial list (list_lock held); nr_partial is read unlocked (get_partial). */
static inline void add_partial(struct kmem_cache_node *n, struct slab *slab, bool tail)
{
	WRITE_ONCE(n->nr_partial, n->nr_partial + 1);
	if (tail)
		list_add_tail(slab_lru(slab), &n->partial);
	else
		list_add(slab_lru(slab), &n->partial);
	__atomic_or_fetch(&slab->flags, PG_slab_partial, __ATOMIC_RELAXED);
}

static inline void remove_partial(struct kmem_cache_node *n, struct slab *slab)
{
	list_del(slab_lru(slab));
	__atomic_and_fetch(&slab->flags, ~PG_slab_partial, __ATOMIC_RELAXED);
	WRITE_ONCE(n->nr_partial, n->nr_partial - 1);
}

/* A head's second word holds a cache pointer: bit 0 clear, or it would read as a tail. */
static_assert(_Alignof(struct kmem_cache) >= 2, "cache pointers are even");

/* ---- free pointers -------------------------------------------------------- */

/*
 * Free pointers are stored encoded, fp ^ slab_fp_key, so that a free
 * object's word says "free" and a corrupt one says "corrupt", both in
 * release mode and at a few instructions per alloc+free pair:
 *
 *   - The key's top 17 bits (SLAB_FP_TAG) are a tag: bit 63 set, not all
 *     ones.  A free pointer is NULL or a user-space address (below 2^47),
 *     so an encoded one always carries the tag, and a word that decodes to
 *     a pointer with any of those bits set was not written by us.  The
 *     pops check that before they follow a pointer: a write after free
 *     over a free pointer (an int, a pointer, text, -1) is reported
 *     instead of a SIGSEGV inside malloc (slab_corrupt_freepointer()).
 *   - Every allocation overwrites the word with 0 (which decodes to the
 *     key, a non-pointer), so a word with the tag at free time means the
 *     object is (very likely) free already: a double free, even with other
 *     frees in between.  Only then is it confirmed by a walk of the slab's
 *     freelists under the cache's locks (slab_free_suspect()): user data
 *     that happens to carry the tag costs a walk, never a false report.
 *   - It needs no second word: 8-byte objects and objects whose free
 *     pointer is outside the object (constructor, RCU) are covered too.
 * The key's low 47 bits are random per process (slab_fp_init()): a pointer
 * copied from one object's word to another is still an encoded one, but
 * a value the program writes is not, except by a 1 in 2^17 chance for
 * random bits.  Only the words inside objects are encoded: the slots' and
 * slabs' own freelist heads are plain pointers.
 */
#define SLAB_FP_TAG 0xffff800000000000UL
extern __hidden uintptr_t slab_fp_key;
extern __hidden const uintptr_t slab_fp_tag;	/* SLAB_FP_TAG, as a memory operand for the asm */
__hidden void slab_fp_init(void);

static inline void *freepointer_decode(uintptr_t word)
{
	return (void *)(word ^ slab_fp_key);
}

static inline uintptr_t freepointer_encode(const void *fp)
{
	return (uintptr_t)fp ^ slab_fp_key;
}

/* Could @fp, just decoded, be a free pointer we wrote (NULL or a user address)? */
static inline bool freepointer_plausible(const void *fp)
{
	return !((uintptr_t)fp & SLAB_FP_TAG);
}

/*
 * Read the free pointer of an object that another thread may own by now:
 * the lockless pop reads it before its CAS decides.  Slab memory is never
 * unmapped, so the load is safe; the value may be garbage, which the CAS
 * then rejects.  Kept out of TSan's view: it is a benign, validated race.
 */
__attribute__((no_sanitize("thread")))
static inline void *get_freepointer_safe(const struct kmem_cache *s, void *object)
{
	/*
	 * s->offset too may be stale: a debug switch (slub_debug.c) fails the
	 * CAS after.  A volatile load, not an atomic one: clang's TSan still
	 * sees atomics in a no_sanitize("thread") function.
	 */
	return freepointer_decode(*(const volatile uintptr_t *)((char *)object +
								 data_race(s->offset)));
}

static inline void *get_freepointer(const struct kmem_cache *s, void *object)
{
	return freepointer_decode(*(uintptr_t *)((char *)object + s->offset));
}

static inline void set_freepointer(const struct kmem_cache *s, void *object, void *fp)
{
	*(uintptr_t *)((char *)object + s->offset) = freepointer_encode(fp);
}

/*
 * Does @object's word say it is free?  Debug allocations mark the word
 * too (slub_debug.c), so this holds for every cache.  Asked of an object
 * the caller claims to own, which in a double free is not so: the word
 * may be rewritten by the thread that now holds it, hence the safe read.
 */
static inline bool object_looks_free(const struct kmem_cache *s, const void *object)
{
	return freepointer_plausible(get_freepointer_safe(s, (void *)object));
}

/* @object is handed out: its word no longer says free (see above). */
static inline void object_mark_allocated(const struct kmem_cache *s, void *object)
{
	*(uintptr_t *)((char *)object + s->offset) = 0;
}

/* ---- double-width compare-and-swap --------------------------------------- */

/* Compare-and-swap two adjacent words at @p (16-byte aligned), full barrier. */
static inline bool cmpxchg_double(void *p, void *old1, unsigned long old2,
				  void *new1, unsigned long new2)
{
	unsigned __int128 o = ((unsigned __int128)old2 << 64) | (uintptr_t)old1;
	unsigned __int128 n = ((unsigned __int128)new2 << 64) | (uintptr_t)new1;
	return __sync_bool_compare_and_swap((unsigned __int128 *)p, o, n);
}

/* ---- slabs ---------------------------------------------------------------- */

static inline struct slab *virt_to_slab(const void *addr)
{
	struct page *page = memmap_virt_to_page(addr);
	if (unlikely(!page))
		return NULL;
	page = compound_head(page);
	return likely(page_flags(page) & PG_slab) ? page_slab(page) : NULL;
}

static inline void *slab_address(const struct slab *slab)
{
	return memmap_page_address((const struct page *)slab);
}

/*
 * The index of the object at byte @off of a slab's objects, if @off is
 * an object's start, else false.  One 64x64->128 multiply by
 * r = ceil(2^64 / size) gives both answers (Lemire's "faster remainder by
 * direct computation"): for off < 2^32 and size < 2^32, the high half is
 * off / size and the low half is below r exactly when size divides off.
 * An offset at or above 2^32 (a pointer below the slab wraps to one) has a
 * high half of at least 2^32 / size - 1, above any object count (objects
 * * size <= 2^22), so the callers' bound on the index turns it away.
 */
static inline bool slab_offset_index(const struct kmem_cache *s, uint64_t off, uint64_t *idx)
{
	unsigned __int128 m = (unsigned __int128)off * s->reciprocal_size;
	*idx = (uint64_t)(m >> 64);
	return (uint64_t)m < s->reciprocal_size;
}

/*
 * Is @p the start of an object of @slab that was ever linked (so could
 * have been handed out)?  Bounding by built, not objects, costs nothing
 * (one 16-bit load either way) and turns away a free of an object never
 * linked, which the lazy link-up would otherwise link a second time and
 * hand out twice.
 */
static inline bool slab_object_valid_at(const struct kmem_cache *s, struct slab *slab,
					uintptr_t slab_start, const void *p)
{
	uint64_t idx;
	bool start = slab_offset_index(s, (uintptr_t)p - (slab_start + s->red_left_pad), &idx);
	return start && idx < read_built(slab);
}

static inline bool slab_object_valid(const struct kmem_cache *s, struct slab *slab, const void *p)
{
	return slab_object_valid_at(s, slab, (uintptr_t)slab_address(slab), p);
}

/*
 * The cache, the slab holding @p and the address of the slab's first page,
 * from one table lookup (a slab's descriptors are in the same region as its
 * pages), or NULL if @p is in no slab.  Slabs are never in large regions
 * (their order is at most MAX_PAGE_ORDER), so a negative slot (SLOT_LARGE)
 * is "no slab" as 0 is; a head's second word is a cache exactly while it is
 * a slab (set before PG_slab, cleared when the slab is freed).
 */
static inline struct kmem_cache *object_slab(const void *p, struct slab **slabp,
					     uintptr_t *slab_start)
{
	uintptr_t a = (uintptr_t)p;
#ifdef SLUB_PAGEMAP
	/* addr - 1: NULL refused with the addresses above the table (memmap_slot). */
	if (unlikely((a - 1) >> ADDR_BITS))
		return NULL;
	struct slab *slab = pagemap_lookup(a);
	if (unlikely(!slab))
		return NULL;
	/* Re-checked: a racing lookup may hold a stale entry (pagemap.h). */
	intptr_t cache = (intptr_t)READ_ONCE(slab->slab_cache);
	if (unlikely(cache <= 0))
		return NULL;
	*slabp = slab;
	/* A slab's pages, as its descriptors, are in the section of @p's page. */
	*slab_start = slab_start_in_section(a, slab);
	return (struct kmem_cache *)cache;
#else
	int32_t slot = (int32_t)memmap_slot(a);
	if (unlikely(slot <= 0))
		return NULL;
	uintptr_t base = (uintptr_t)slot << SECTION_SHIFT;
	struct page *page = (struct page *)(base + ((a - base) >> PAGE_SHIFT) * sizeof(struct page));
	struct page *head = compound_head(page);
	/* The head's second word: its cache if positive (memmap.h). */
	intptr_t word = (intptr_t)READ_ONCE(head->compound_head);
	if (unlikely(word <= 0))
		return NULL;
	*slabp = page_slab(head);
	/* A multiple of the descriptor's size: one shift, not a shift each way. */
	*slab_start = base + ((uintptr_t)head - base) * (PAGE_SIZE / sizeof(struct page));
	return (struct kmem_cache *)word;
#endif
}

/*
 * A free writes the free pointer into the object: start fetching its line
 * for writing before the lookup, so that in a big heap the object's miss
 * overlaps the descriptor's instead of following it (and a locked CAS on a
 * remote free would wait for both in turn).  The object's first line: the
 * cache, hence the free pointer's offset, is not known yet.
 */
static inline void slab_free_prefetch(const void *object)
{
	__builtin_prefetch(object, 1, 3);
}

#ifdef SLUB_UNCHECKED_FREE
/*
 * SLUB_UNCHECKED_FREE (cmake -DSLUB_UNCHECKED_FREE=ON; unsafe, a measurement
 * build for issue 26): what the checks on free cost.  free, kfree, the size
 * queries and kmem_cache_free trust their pointer to be NULL, an object or
 * (but for kmem_cache_free) the start of another block of ours, so the
 * lookups below keep only the tests that tell those apart: no object-start
 * check, no test that the slab is still one, and kmem_cache_free takes its
 * cache's word for the owner.  The fast pushes skip their double-free
 * compare (percpu_rseq.h).  A bad pointer corrupts the heap or crashes.
 */
#ifndef SLUB_PAGEMAP
/* The descriptor of @a's page, @a in the one-slot section region at @base: a shift and a mask. */
static inline struct page *section_page(uintptr_t base, uintptr_t a)
{
	static_assert(sizeof(struct page) == 1u << 5, "descriptors of 32 bytes");
	return (struct page *)(base + ((a >> (PAGE_SHIFT - 5)) &
				       ((PAGES_PER_SECTION - 1) * sizeof(struct page))));
}
#endif

/* The slab of @p, trusted to be NULL or an object: NULL for NULL. */
static inline struct slab *object_slab_trusted(const void *p)
{
	uintptr_t a = (uintptr_t)p;
#ifdef SLUB_PAGEMAP
	return pagemap_lookup(a);	/* NULL's page is no slab's */
#else
	if (unlikely(!a))
		return NULL;
	uintptr_t base = (uintptr_t)READ_ONCE(memmap_table()[a >> SECTION_SHIFT]) << SECTION_SHIFT;
	struct slab *slab = page_slab(compound_head(section_page(base, a)));
	if (!slab)
		__builtin_unreachable();	/* a descriptor: the caller's test of it goes */
	return slab;
#endif
}

/* The cache of @p (its slab in *slabp), trusted to be NULL or a block of ours; NULL if no object. */
static inline struct kmem_cache *object_cache(const void *p, struct slab **slabp)
{
	uintptr_t a = (uintptr_t)p;
#ifdef SLUB_PAGEMAP
	struct slab *slab = pagemap_lookup(a);	/* NULL for NULL, extents and large blocks */
	if (unlikely(!slab))
		return NULL;
	*slabp = slab;
	struct kmem_cache *s = READ_ONCE(slab->slab_cache);
	if (!s)
		__builtin_unreachable();	/* a slab's: the caller's test of it goes */
	return s;
#else
	if (unlikely(!a))
		return NULL;
	/* Negative: a large region (an extent or a large block), no slab. */
	int32_t slot = (int32_t)READ_ONCE(memmap_table()[a >> SECTION_SHIFT]);
	if (unlikely(slot <= 0))
		return NULL;
	struct page *head = compound_head(section_page((uintptr_t)slot << SECTION_SHIFT, a));
	intptr_t word = (intptr_t)READ_ONCE(head->compound_head);
	if (unlikely(word <= 0))
		return NULL;	/* an extent or a large block in a section */
	*slabp = page_slab(head);
	return (struct kmem_cache *)word;
#endif
}
#else
/*
 * The cache of @p if @p is the start of an object (and its slab in *slabp),
 * else NULL, without a report: the check every free and size query makes
 * first, inline; what it turns down goes to a slow path that says why.
 */
static inline struct kmem_cache *object_cache(const void *p, struct slab **slabp)
{
	uintptr_t start;
	struct kmem_cache *s = object_slab(p, slabp, &start);	/* NULL for NULL too */
	if (unlikely(!s || !slab_object_valid_at(s, *slabp, start, p)))
		return NULL;
	return s;
}
#endif

/* Report a free of something that is not an object (slab_common.c). */
__hidden __cold void slab_bad_free(const void *object, struct kmem_cache *s, const char *caller);

/*
 * The checks every free gets: @object is the start of an object of a slab.
 * Returns the owning cache, or NULL after a report.
 */
static inline struct kmem_cache *slab_free_prepare(const void *object, struct slab **slabp,
						   const char *caller)
{
	uintptr_t start;
	struct slab *slab;
	struct kmem_cache *s = object_slab(object, &slab, &start);
	if (unlikely(!s)) {
		slab_bad_free(object, NULL, caller);
		return NULL;
	}
	if (unlikely(!slab_object_valid_at(s, slab, start, object))) {
		slab_bad_free(object, s, caller);
		return NULL;
	}
	*slabp = slab;
	return s;
}

/*
 * Nonzero: the fast paths are rseq sequences, and this is the offset of the
 * thread's rseq area from the thread pointer (decided once at start-up;
 * one load tells both the mode and where to look).
 */
extern __hidden intptr_t slub_percpu_rseq;
/* The slot indexes ever locked, in any cache (slub.c): what walks of the slots visit. */
extern __hidden struct os_cpu_set slab_cpus;

static inline uintptr_t rseq_abi(void)
{
	return os_thread_pointer() + (uintptr_t)os_rseq_offset;
}

/*
 * A SLAB_KMALLOC cache has @total_pages in slabs after a new one; the malloc
 * library decides from it when to split a kmalloc class (malloc_classes.c).
 * Weak: nothing in libslub.so.
 */
__hidden void slub_malloc_slab_grown(struct kmem_cache *s, unsigned long total_pages);

/*
 * The slot index for the CPU we run on.  CPU numbers are below the count
 * of possible CPUs, unless that count came from a fallback (no sysfs); a
 * stray number then shares a slot, which is correct, only less local.
 * The answer is remembered as this thread's hint for the CAS fast paths.
 */
extern __hidden __thread unsigned int slab_cpu_hint __attribute__((tls_model("initial-exec")));

static inline unsigned int this_cpu_slot(const struct kmem_cache *s)
{
	unsigned int cpu = os_current_cpu();
	if (unlikely(cpu >= s->nr_cpu_slots))
		cpu %= s->nr_cpu_slots;
	slab_cpu_hint = cpu;
	return cpu;
}

/*
 * The slot the CAS fast paths use: the CPU this thread was on at its last
 * slow path or failed CAS.  Asking the CPU on every operation costs more
 * than the operation (sched_getcpu() without rseq); a stale hint is still
 * correct, because the tid and the 16-byte CAS make any slot safe to share,
 * and a thread sharing a busy slot soon fails a CAS and looks again.
 */
static inline unsigned int cas_cpu_slot(const struct kmem_cache *s)
{
	unsigned int cpu = slab_cpu_hint;
	return likely(cpu < s->nr_cpu_slots) ? cpu : this_cpu_slot(s);
}

static inline struct kmem_cache_cpu *cpu_slot(struct kmem_cache *s, unsigned int cpu)
{
	return pcpu_slot_of(s->cpu_slab, cpu);
}

/* ---- statistics (stat_items.h) ------------------------------------------------ */

#ifdef SLUB_STATS
#define SLAB_STATS_PER_SLOT (PCPU_SLOT_SIZE / sizeof(unsigned int))
static_assert(NR_SLUB_STAT_ITEMS <= SLAB_STAT_SLOTS * SLAB_STATS_PER_SLOT, "percpu slots");
extern __hidden unsigned long slab_stat_cpus[SLUB_MAX_CPUS / 64];

/* @cpu's counter @si (a constant in stat(): the slot is chosen at compile time). */
static inline unsigned int *slab_stat_counter(struct kmem_cache *s, unsigned int cpu,
					      enum stat_item si)
{
	unsigned int *slot = pcpu_slot_of(s->cpu_stats[si / SLAB_STATS_PER_SLOT], cpu);
	return &slot[si % SLAB_STATS_PER_SLOT];
}
#endif

/* Count @si on this CPU: a load and a store, no locked instruction (stat_items_attr.c). */
static inline void stat(struct kmem_cache *s, enum stat_item si)
{
#ifdef SLUB_STATS
	unsigned int cpu = this_cpu_slot(s);
	unsigned long bit = 1UL << (cpu % 64);
	/* The sums walk the CPUs that counted; no lock: stat() runs under slab locks. */
	if (unlikely(!(__atomic_load_n(&slab_stat_cpus[cpu / 64], __ATOMIC_RELAXED) & bit)))
		__atomic_fetch_or(&slab_stat_cpus[cpu / 64], bit, __ATOMIC_RELAXED);
	unsigned int *p = slab_stat_counter(s, cpu, si);
	__atomic_store_n(p, __atomic_load_n(p, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
#else
	(void)s;
	(void)si;
#endif
}

/* ---- thread sheaves' pop and push (tsheaf.h) ------------------------------------ */

/* The top object of @sh, which holds @n > 0. */
static inline void *tsheaf_pop(struct kmem_cache *s, struct tsheaf *sh, unsigned int n)
{
	void *object = sh->objects[n - 1];
	tsheaf_set_size(sh, n - 1);
	object_mark_allocated(s, object);
	stat(s, ALLOC_TSHEAF);
	return object;
}

/* Park @object on @sh, which holds @n < its room; the word says free, as a freelist's. */
static inline void tsheaf_park(struct kmem_cache *s, struct tsheaf *sh, unsigned long n,
			       void *object)
{
	set_freepointer(s, object, NULL);
	tsheaf_set_object(sh, n, object);
	tsheaf_set_size(sh, (unsigned int)n + 1);
	stat(s, FREE_TSHEAF);
}

/* ---- entry points of the engine (slub.c) ----------------------------------- */

/* The slow paths' locks, skipped while the process has one thread (slub.c says why). */
static inline void slab_lock(pthread_mutex_t *m)
{
	if (!os_single_threaded())
		pthread_mutex_lock(m);
}

static inline void slab_unlock(pthread_mutex_t *m)
{
	if (!os_single_threaded())
		pthread_mutex_unlock(m);
}

/* This CPU's slot, locked (slab_lock); its index in *@cpup if not NULL. */
__hidden struct kmem_cache_cpu *slab_lock_cpu_slot(struct kmem_cache *s, unsigned int *cpup);
/* Bulk work for the sheaves: see slub.c. */
#define REFILL_SMALL_BYTES 4096u	/* a small cache's refill: one page's worth (slub.c) */
__hidden unsigned int slab_refill_bulk(struct kmem_cache *s, void **p, unsigned int max, int node);
__hidden bool slab_new_partial(struct kmem_cache *s, gfp_t gfp, int *node);
__hidden void slab_free_bulk(struct kmem_cache *s, void **p, unsigned int nr);

__hidden void *__slab_alloc(struct kmem_cache *s, gfp_t gfp, int node);
__hidden void __slab_free(struct kmem_cache *s, struct slab *slab, void *object);
__hidden bool kmem_cache_open(struct kmem_cache *s);
__hidden void kmem_cache_flush_all(struct kmem_cache *s);
__hidden int __kmem_cache_shrink(struct kmem_cache *s);
/* Give back the empty partial slabs beyond min_partial; true if any went. */
__hidden bool slab_trim_partial(struct kmem_cache *s);
/* The slabs of every node of @s (0: none). */
__hidden unsigned long slab_nr_slabs(struct kmem_cache *s);
__hidden unsigned long __kmem_cache_release(struct kmem_cache *s);
__hidden unsigned long slab_validate_cache(struct kmem_cache *s);

/* One cache's figures, as slabinfo shows them. */
struct slab_info {
	unsigned long active_objs;	/* allocated, or free on a CPU's lockless list */
	unsigned long num_objs;		/* in all slabs */
	unsigned long num_slabs;
	unsigned long bytes;		/* pages of all slabs */
	unsigned long peak_bytes;	/* the most they have been */
	unsigned long partial_slabs;	/* on the node's and the CPUs' partial lists */
};
__hidden void slab_get_info(struct kmem_cache *s, struct slab_info *info);
/* Objects parked in @s's sheaves, the CPUs' and the threads' (free to the program). */
__hidden unsigned long slab_parked(struct kmem_cache *s);

/* Reports of the release-mode checks every free makes (slab_report.c). */
__hidden void slab_double_free(struct kmem_cache *s, void *object);
__hidden void slab_corrupt_freepointer(struct kmem_cache *s, struct slab *slab, void *object,
				       void *fp);
/*
 * A free found @object's word saying "free": a double free (reported,
 * ignored) if a walk of the slab's freelists finds it, else freed (slub.c).
 */
__hidden void slab_free_suspect(struct kmem_cache *s, struct slab *slab, void *object);
/* Is @object on @slab's own freelist?  A walk, for a caller that holds it still. */
__hidden bool slab_freelist_holds(struct kmem_cache *s, struct slab *slab, void *object);
/* __GFP_ZERO of an allocated object (slub.c). */
__hidden void slab_zero_object(struct kmem_cache *s, void *object);

/* Geometry (slab_geometry.c). */
__hidden unsigned int calculate_alignment(unsigned int flags, unsigned int align,
					  unsigned int size);
__hidden bool calculate_sizes(struct kmem_cache *s);
__hidden int calculate_order(unsigned int size, unsigned int max_order);
__hidden void set_min_partial(struct kmem_cache *s);
__hidden bool slab_no_cpu_partial(const struct kmem_cache *s);
__hidden void set_cpu_partial(struct kmem_cache *s);
__hidden void slab_set_cpu_partial(struct kmem_cache *s, unsigned int nr_objects);
__hidden int slab_set_order(struct kmem_cache *s, unsigned int order);

/* ---- fast paths ------------------------------------------------------------- */

/*
 * Where the fast paths look for their CPU: an rseq area's offset from the
 * thread pointer.  In rseq mode that is glibc's registered area (equal to
 * slub_percpu_rseq); in cmpxchg16b mode a per-thread area whose cpu_id
 * names no slot, so every sequence gives up at once and the out-of-line
 * code runs the CAS protocol.  One load, and no test of the mode inline.
 */
extern __hidden intptr_t slub_fastpath_area;
/* Set both at start-up (0: cmpxchg16b mode). */
__hidden void slab_set_percpu_mode(intptr_t rseq_offset);

/*
 * Shape: the inline part is a leaf that ends in a return or a tail call,
 * so it saves no registers; everything rarer (an empty freelist,
 * __GFP_ZERO, a free outside the cpu slab, the cmpxchg16b mode) is one
 * out-of-line call (slub.c).
 */
__hidden void *slab_alloc_finish(struct kmem_cache *s, gfp_t gfp, int node, void *object);
__hidden void slab_free_finish(struct kmem_cache *s, struct slab *slab, void *object);
__hidden void *slab_alloc_node_slow(struct kmem_cache *s, gfp_t gfp, int node);

/*
 * Which fast path a cache takes, in an order each call site chooses at
 * compile time.  slab_alloc and slab_free (the kmem_cache API, kmalloc:
 * their caches are on cpu slabs unless asked) pass a cache with sheaves
 * to the unqueued sequence with no slots (it gives up after its CPU
 * number), then pop its main sheaf: a cache without sheaves costs its
 * misses one test of sheaf_slots, and its hits nothing.  The sheaves-first
 * ones (malloc: its caches are on sheaves where rseq runs) test
 * sheaf_slots first: each path costs its own sequence and that one test.
 */
/*
 * A request for a node, with more than one: the slow paths, where the cpu
 * slab's node is checked (node_match) and sheaves are passed by.  Nothing
 * for the callers that pass NUMA_NO_NODE, a constant.
 */
static __attribute__((always_inline)) inline bool slab_alloc_needs_node(int node)
{
	return node != NUMA_NO_NODE && unlikely(nr_node_ids > 1);
}

/* The whole allocation: fast path, slow path, __GFP_ZERO. */
static __attribute__((always_inline)) inline void *slab_alloc(struct kmem_cache *s, gfp_t gfp,
							      int node)
{
	if (slab_alloc_needs_node(node))
		return slab_alloc_node_slow(s, gfp, node);
#if SLUB_HAVE_RSEQ_ASM
	void *object = rseq_freelist_pop(slub_fastpath_area, s->cpu_slab, s->cpu_slab_slots, s->offset,
				   &slab_fp_key, &slab_fp_tag);
	if (likely(object && !(gfp & __GFP_ZERO))) {
		stat(s, ALLOC_FASTPATH);
		return object;
	}
	if (!object && s->sheaf_slots) {
		object = rseq_sheaf_pop(slub_fastpath_area, s->cpu_slab, s->sheaf_slots, s->offset);
		if (likely(object && !(gfp & __GFP_ZERO))) {
			stat(s, ALLOC_PCS);
			return object;
		}
	}
	return slab_alloc_finish(s, gfp, node, object);
#else
	return slab_alloc_finish(s, gfp, node, NULL);
#endif
}

/*
 * s->sheaf_slots != 0 as one compare with memory: in C, GCC loads the
 * word into a register to reuse as the sheaf sequence's slot count, and a
 * cache without sheaves pays for the load (one instruction a pop or push).
 * The jump is taken without sheaves: the sheaves' sequence, the malloc
 * library's usual path, falls through and lies right after the test.
 */
static __attribute__((always_inline)) inline bool slab_has_sheaves(const struct kmem_cache *s)
{
#if SLUB_HAVE_RSEQ_ASM
	__asm__ goto("cmpl $0, %0\n\t"
		     "je %l[no]"
		     :
		     : "m"(s->sheaf_slots)
		     : "cc"
		     : no);
	return true;
no:
	return false;
#else
	return s->sheaf_slots != 0;
#endif
}

/* slab_alloc testing for sheaves first. */
static __attribute__((always_inline)) inline void *
slab_alloc_sheaves_first(struct kmem_cache *s, gfp_t gfp, int node)
{
	if (slab_alloc_needs_node(node))
		return slab_alloc_node_slow(s, gfp, node);
#if SLUB_HAVE_RSEQ_ASM
	void *object;
	if (slab_has_sheaves(s)) {
		object = rseq_sheaf_pop(slub_fastpath_area, s->cpu_slab, s->sheaf_slots, s->offset);
		if (likely(object && !(gfp & __GFP_ZERO))) {
			stat(s, ALLOC_PCS);
			return object;
		}
	} else {
		object = rseq_freelist_pop(slub_fastpath_area, s->cpu_slab, s->cpu_slab_slots,
					   s->offset, &slab_fp_key, &slab_fp_tag);
		if (likely(object && !(gfp & __GFP_ZERO))) {
			stat(s, ALLOC_FASTPATH);
			return object;
		}
	}
	return slab_alloc_finish(s, gfp, node, object);
#else
	return slab_alloc_finish(s, gfp, node, NULL);
#endif
}

/* Either order, by a constant @sheaves_first. */
static __attribute__((always_inline)) inline void *
slab_alloc_in(struct kmem_cache *s, gfp_t gfp, int node, bool sheaves_first)
{
	return sheaves_first ? slab_alloc_sheaves_first(s, gfp, node) : slab_alloc(s, gfp, node);
}

/*
 * An allocation of @size bytes (kmalloc, malloc) from their slow paths: a
 * debug cache keeps the size for its kmalloc red zone.  The fast paths
 * never see a debug kmalloc or malloc class (their lookup tables send
 * those sizes to the slow paths), so they carry no size (slub.c).
 */
__hidden void *slab_alloc_sized(struct kmem_cache *s, gfp_t gfp, int node, size_t size);

#if SLUB_HAVE_RSEQ_ASM
/* After a push: true if @object is dealt with (pushed, or a likely double free checked). */
static __attribute__((always_inline)) inline bool
slab_push_done(struct kmem_cache *s, struct slab *slab, void *object, enum rseq_push_result r,
	       enum stat_item pushed)
{
	if (likely(r == RSEQ_PUSHED)) {
		stat(s, pushed);
		return true;
	}
	if (r == RSEQ_LOOKS_FREE) {
		slab_free_suspect(s, slab, object);
		return true;
	}
	return false;
}
#endif

/* Free a checked object: to the CPU freelist or main sheaf, else to its slab. */
static __attribute__((always_inline)) inline void slab_free(struct kmem_cache *s, struct slab *slab,
							    void *object)
{
#if SLUB_HAVE_RSEQ_ASM
	if (slab_push_done(s, slab, object,
			   rseq_freelist_push(slub_fastpath_area, s->cpu_slab, s->cpu_slab_slots,
					      s->offset, &slab_fp_key, slab, object),
			   FREE_FASTPATH))
		return;
	if (s->sheaf_free_slots &&
	    slab_push_done(s, slab, object,
			   rseq_sheaf_push(slub_fastpath_area, s->cpu_slab, s->sheaf_free_slots,
					   s->offset, &slab_fp_key, object),
			   FREE_PCS))
		return;
#endif
	slab_free_finish(s, slab, object);
}

/* slab_free testing for sheaves first. */
static __attribute__((always_inline)) inline void
slab_free_sheaves_first(struct kmem_cache *s, struct slab *slab, void *object)
{
#if SLUB_HAVE_RSEQ_ASM
	if (slab_has_sheaves(s)) {
		if (slab_push_done(s, slab, object,
				   rseq_sheaf_push(slub_fastpath_area, s->cpu_slab, s->sheaf_free_slots,
						   s->offset, &slab_fp_key, object),
				   FREE_PCS))
			return;
	} else if (slab_push_done(s, slab, object,
				  rseq_freelist_push(slub_fastpath_area, s->cpu_slab,
						     s->cpu_slab_slots, s->offset, &slab_fp_key,
						     slab, object),
				  FREE_FASTPATH)) {
		return;
	}
#endif
	slab_free_finish(s, slab, object);
}

/* Either order, by a constant @sheaves_first. */
static __attribute__((always_inline)) inline void
slab_free_in(struct kmem_cache *s, struct slab *slab, void *object, bool sheaves_first)
{
	if (sheaves_first)
		slab_free_sheaves_first(s, slab, object);
	else
		slab_free(s, slab, object);
}

#endif
