/* SPDX-License-Identifier: MIT */
/*
 * slub.h - the one public header of libslub.
 *
 * libslub is the Linux kernel's SLUB slab allocator rebuilt as a user-space
 * library.  This header carries the kernel's API with the kernel's names and
 * signatures, plus a few `slub_` extras for what only a process needs
 * (options, error counts, giving memory back to the OS).
 *
 * Layers: the page allocator (buddy system over a memory map of page
 * descriptors), object caches (kmem_cache_*) and the kmalloc family on
 * SLUB's slabs, and the slub_ extras at the end.  `struct page` is opaque:
 * use page_address(), virt_to_page() and page_to_nid().
 *
 * Besides this API the library defines one libc function, dlclose(), on
 * x86-64: it calls libc's, then forgets the unwind rules slub_debug=U's
 * stack capture cached for the addresses the library occupied.
 */
#ifndef SLUB_H
#define SLUB_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

/* struct rcu_head and the liburcu flavour's API (RCU section below). */
#include <slub_rcu.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SLUB_API __attribute__((visibility("default")))

/* ---- pages ------------------------------------------------------------ */

#ifndef PAGE_SHIFT
#define PAGE_SHIFT 12
#endif
#ifndef PAGE_SIZE
#define PAGE_SIZE (1UL << PAGE_SHIFT)
#endif
#ifndef PAGE_MASK
#define PAGE_MASK (~(PAGE_SIZE - 1))
#endif

/* Largest order the buddy lists hold: 2^10 pages = 4 MiB, as on x86-64. */
#define MAX_PAGE_ORDER 10
#define MAX_ORDER_NR_PAGES (1UL << MAX_PAGE_ORDER)
#define NUMA_NO_NODE (-1)

struct page;

/* ---- gfp flags -------------------------------------------------------- */

typedef unsigned int gfp_t;

#define __GFP_DMA            0x01u
#define __GFP_HIGHMEM        0x02u
#define __GFP_DMA32          0x04u
#define __GFP_MOVABLE        0x08u
#define __GFP_RECLAIMABLE    0x10u
#define __GFP_HIGH           0x20u
#define __GFP_IO             0x40u
#define __GFP_FS             0x80u
#define __GFP_ZERO           0x100u
#define __GFP_DIRECT_RECLAIM 0x400u
#define __GFP_KSWAPD_RECLAIM 0x800u
#define __GFP_NOWARN         0x2000u
#define __GFP_RETRY_MAYFAIL  0x4000u
#define __GFP_NOFAIL         0x8000u
#define __GFP_NORETRY        0x10000u
#define __GFP_COMP           0x40000u
#define __GFP_HARDWALL       0x100000u
#define __GFP_THISNODE       0x200000u
#define __GFP_ACCOUNT        0x400000u
#define __GFP_NOLOCKDEP      0x800000u
#define __GFP_WRITE          0x1000u
#define __GFP_MEMALLOC       0x20000u
#define __GFP_NOMEMALLOC     0x80000u

/*
 * What the bits mean here.  Honoured: __GFP_ZERO (every entry point),
 * __GFP_DMA/__GFP_DMA32 (memory below 4 GiB), __GFP_NOWARN (no failure
 * report), __GFP_NOFAIL (never NULL: the allocation is retried, a
 * millisecond apart, until other threads free memory; a request no
 * allocation can satisfy, such as an order above 30, still fails),
 * __GFP_COMP (every block of pages is compound already).  Accepted and
 * ignored, for there is nothing in a process for them to choose:
 * __GFP_NORETRY and __GFP_RETRY_MAYFAIL (an allocation is tried once
 * anyway, and fails with NULL + ENOMEM), the reclaim bits and GFP_NOWAIT /
 * GFP_ATOMIC / GFP_NOIO / GFP_NOFS (no allocation sleeps waiting for
 * reclaim or I/O: none exists; each takes only the allocator's own short
 * locks, which no reclaim holds), __GFP_HIGH and __GFP_MEMALLOC (no
 * reserves), __GFP_HIGHMEM and __GFP_MOVABLE (one zone of ordinary memory),
 * __GFP_ACCOUNT (no memcg), __GFP_THISNODE and __GFP_HARDWALL (one node),
 * __GFP_IO, __GFP_FS, __GFP_WRITE, __GFP_NOMEMALLOC, __GFP_NOLOCKDEP.
 */

#define __GFP_RECLAIM (__GFP_DIRECT_RECLAIM | __GFP_KSWAPD_RECLAIM)

#define GFP_ATOMIC         (__GFP_HIGH | __GFP_KSWAPD_RECLAIM)
#define GFP_KERNEL         (__GFP_RECLAIM | __GFP_IO | __GFP_FS)
#define GFP_KERNEL_ACCOUNT (GFP_KERNEL | __GFP_ACCOUNT)
#define GFP_NOWAIT         (__GFP_KSWAPD_RECLAIM | __GFP_NOWARN)
#define GFP_NOIO           (__GFP_RECLAIM)
#define GFP_NOFS           (__GFP_RECLAIM | __GFP_IO)
#define GFP_USER           (__GFP_RECLAIM | __GFP_IO | __GFP_FS | __GFP_HARDWALL)
#define GFP_DMA            __GFP_DMA
#define GFP_DMA32          __GFP_DMA32
#define GFP_HIGHUSER       (GFP_USER | __GFP_HIGHMEM)
#define GFP_HIGHUSER_MOVABLE (GFP_HIGHUSER | __GFP_MOVABLE)
#define GFP_KERNEL_ACCOUNT_NOWARN (GFP_KERNEL_ACCOUNT | __GFP_NOWARN)

/* ---- page allocator (kernel API) -------------------------------------- */

/*
 * Order of the smallest block of pages that holds @size bytes.  As in the
 * kernel, get_order(0) is undefined in meaning; it returns 64 - PAGE_SHIFT.
 */
static inline int get_order(unsigned long size)
{
	if (size == 0)
		return 64 - PAGE_SHIFT;
	size = (size - 1) >> PAGE_SHIFT;
	return size ? 64 - __builtin_clzl(size) : 0;
}

/*
 * Blocks of 2^order pages, naturally aligned.  Orders 0..MAX_PAGE_ORDER come
 * from the buddy lists; larger ones, up to order 30 (4 TiB), are mappings of
 * their own, unmapped again when freed.  NULL with errno = ENOMEM on failure
 * (and a rate-limited warning unless __GFP_NOWARN).
 */
SLUB_API struct page *alloc_pages(gfp_t gfp, unsigned int order);
SLUB_API struct page *alloc_pages_node(int nid, gfp_t gfp, unsigned int order);
SLUB_API void __free_pages(struct page *page, unsigned int order);
SLUB_API unsigned long __get_free_pages(gfp_t gfp, unsigned int order);
SLUB_API unsigned long get_zeroed_page(gfp_t gfp);
SLUB_API void free_pages(unsigned long addr, unsigned int order);

#define alloc_page(gfp)        alloc_pages((gfp), 0)
#define __get_free_page(gfp)   __get_free_pages((gfp), 0)
#define __free_page(page)      __free_pages((page), 0)
#define free_page(addr)        free_pages((addr), 0)

/*
 * Exactly PAGE_ALIGN(@size) bytes of pages, page-aligned (the pages the
 * power-of-two order would add are not taken); NULL for @size 0 or on
 * failure.  free_pages_exact() needs the same @size.
 */
SLUB_API void *alloc_pages_exact(size_t size, gfp_t gfp);
SLUB_API void free_pages_exact(void *virt, size_t size);

SLUB_API void *page_address(const struct page *page);
/* NULL for any address that is not in libslub's memory map. */
SLUB_API struct page *virt_to_page(const void *addr);
SLUB_API int page_to_nid(const struct page *page);

/* ---- object caches (kernel API) ---------------------------------------- */

typedef unsigned int slab_flags_t;

#define SLAB_CONSISTENCY_CHECKS 0x00000100u	/* debug: sanity checks */
#define SLAB_RED_ZONE           0x00000400u	/* debug: red zones around objects */
#define SLAB_POISON             0x00000800u	/* debug: poison free objects */
#define SLAB_KMALLOC            0x00001000u	/* a kmalloc cache */
#define SLAB_HWCACHE_ALIGN      0x00002000u	/* align objects to cache lines */
#define SLAB_CACHE_DMA          0x00004000u	/* memory below 4 GiB (as DMA32 here) */
#define SLAB_CACHE_DMA32        0x00008000u	/* memory below 4 GiB */
#define SLAB_STORE_USER         0x00010000u	/* debug: track alloc and free */
#define SLAB_RECLAIM_ACCOUNT    0x00020000u	/* accepted; no accounting here */
#define SLAB_PANIC              0x00040000u	/* abort if the cache cannot be made */
#define SLAB_TYPESAFE_BY_RCU    0x00080000u	/* slabs freed after a grace period (RCU, below) */
#define SLAB_TRACE              0x00200000u	/* debug: trace alloc and free */
#define SLAB_NOLEAKTRACE        0x00800000u	/* accepted */
#define SLAB_NO_MERGE           0x01000000u	/* never an alias of another cache */
#define SLAB_ACCOUNT            0x04000000u	/* accepted; no accounting here */
/* Accepted and without effect here (the kernel's, or gone from it). */
#define SLAB_TEMPORARY          SLAB_RECLAIM_ACCOUNT
#define SLAB_MEM_SPREAD         0u
#define SLAB_NO_USER_FLAGS      0u
#define SLAB_SKIP_KFENCE        0u
#define SLAB_FAILSLAB           0u	/* failslab picks its cache by the option failslab_cache= */

struct kmem_cache;

/*
 * What a new cache may be given beyond its name, object size and flags, as
 * the kernel's struct kmem_cache_args (6.12; sheaf_capacity 6.18).  Zeroed
 * fields (or NULL for the whole) are the defaults.
 */
struct kmem_cache_args {
	unsigned int align;		/* power of two; 0: the flags' default */
	unsigned int useroffset;	/* the usercopy region, as kmem_cache_create_usercopy */
	unsigned int usersize;
	/*
	 * With use_freeptr_offset, a SLAB_TYPESAFE_BY_RCU cache keeps the free
	 * pointer at this offset inside the object (word-aligned) instead of
	 * growing each object by a word after it: the field there is the
	 * allocator's while the object is free, and reads 0 when it is handed out.
	 */
	unsigned int freeptr_offset;
	bool use_freeptr_offset;
	void (*ctor)(void *);
	/*
	 * Objects per sheaf (at most 1024): the cache keeps per-CPU arrays of
	 * free objects (sheaves) instead of the unqueued per-CPU slabs, at most
	 * (2 * CPUs + 10) * sheaf_capacity objects; 0: as the option
	 * slub_sheaves says (off by default).  A debug cache has none.
	 */
	unsigned int sheaf_capacity;
};

SLUB_API struct kmem_cache *kmem_cache_create(const char *name, unsigned int size,
					      unsigned int align, slab_flags_t flags,
					      void (*ctor)(void *));
/* The kernel's __kmem_cache_create_args(): a cache made from @args (NULL: defaults). */
SLUB_API struct kmem_cache *kmem_cache_create_args(const char *name, unsigned int object_size,
						   const struct kmem_cache_args *args,
						   slab_flags_t flags);
/*
 * kmem_cache_create() takes either form, as the kernel's does since 6.12:
 * (name, size, align, flags, ctor), or (name, size, args, flags) with a
 * struct kmem_cache_args pointer or NULL.  C picks by the third argument's
 * type (_Generic); C++ by overloading, below.
 */
#ifndef __cplusplus
#define kmem_cache_create(name, size, args_or_align, ...)                              \
	_Generic((args_or_align),                                                      \
		struct kmem_cache_args *: kmem_cache_create_args,                      \
		const struct kmem_cache_args *: kmem_cache_create_args,                \
		void *: kmem_cache_create_args,                                        \
		default: kmem_cache_create)(name, size, args_or_align, __VA_ARGS__)
#endif
/*
 * As kmem_cache_create(), with the region of each object that may be
 * copied to and from user space (the kernel's hardened usercopy): such a
 * cache is never merged.  A region outside the object is reported and
 * dropped, as the kernel does.
 */
SLUB_API struct kmem_cache *kmem_cache_create_usercopy(const char *name, unsigned int size,
						       unsigned int align, slab_flags_t flags,
						       unsigned int useroffset,
						       unsigned int usersize,
						       void (*ctor)(void *));
/*
 * A cache whose objects are as big (within a word), as aligned and as
 * flagged (SLAB_RECLAIM_ACCOUNT, SLAB_CACHE_DMA, SLAB_CACHE_DMA32,
 * SLAB_ACCOUNT alike) is shared, as the kernel shares it, unless either
 * has a constructor, debug flags, SLAB_TYPESAFE_BY_RCU, a usercopy region
 * or SLAB_NO_MERGE, or slub_nomerge is set: kmem_cache_create() returns the
 * existing cache and its name becomes an alias.  kmem_cache_destroy()
 * drops one reference; the last one destroys the cache.
 */
SLUB_API void kmem_cache_destroy(struct kmem_cache *s);
SLUB_API void *kmem_cache_alloc(struct kmem_cache *s, gfp_t gfp);
SLUB_API void *kmem_cache_alloc_node(struct kmem_cache *s, gfp_t gfp, int node);
SLUB_API void *kmem_cache_zalloc(struct kmem_cache *s, gfp_t gfp);
SLUB_API void kmem_cache_free(struct kmem_cache *s, void *object);
SLUB_API int kmem_cache_shrink(struct kmem_cache *s);
SLUB_API unsigned int kmem_cache_size(struct kmem_cache *s);
/* All @nr objects into @p, or none: returns @nr or 0. */
SLUB_API int kmem_cache_alloc_bulk(struct kmem_cache *s, gfp_t gfp, size_t nr, void **p);
SLUB_API void kmem_cache_free_bulk(struct kmem_cache *s, size_t nr, void **p);

/*
 * A cache named after struct @s, of its size and alignment, as the kernel's
 * KMEM_CACHE(); KMEM_CACHE_USERCOPY() makes field @f its usercopy region.
 */
#define KMEM_CACHE(s, flags)                                                            \
	kmem_cache_create_args(#s, sizeof(struct s),                                    \
			       &(struct kmem_cache_args){ .align = __alignof__(struct s) }, \
			       (flags))
#define KMEM_CACHE_USERCOPY(s, flags, f)                                                \
	kmem_cache_create_args(#s, sizeof(struct s),                                    \
			       &(struct kmem_cache_args){                               \
				       .align = __alignof__(struct s),                  \
				       .useroffset = offsetof(struct s, f),             \
				       .usersize = sizeof(((struct s *)0)->f),          \
			       },                                                       \
			       (flags))

/* ---- kmalloc (kernel API) ---------------------------------------------- */

/* kmalloc(0) returns ZERO_SIZE_PTR: not NULL, not usable, fine to kfree. */
#define ZERO_SIZE_PTR ((void *)16)
#define ZERO_OR_NULL_PTR(x) ((unsigned long)(x) <= (unsigned long)ZERO_SIZE_PTR)
#define KMALLOC_MAX_CACHE_SIZE (2 * PAGE_SIZE)
#define KMALLOC_MIN_SIZE 8

SLUB_API void *kmalloc(size_t size, gfp_t gfp);
SLUB_API void *kmalloc_node(size_t size, gfp_t gfp, int node);
SLUB_API void *kzalloc(size_t size, gfp_t gfp);
SLUB_API void *kmalloc_array(size_t n, size_t size, gfp_t gfp);
SLUB_API void *kcalloc(size_t n, size_t size, gfp_t gfp);
SLUB_API void *krealloc(const void *p, size_t new_size, gfp_t gfp);
SLUB_API void kfree(const void *p);
/* kfree() after clearing the whole object. */
SLUB_API void kfree_sensitive(const void *p);
/* Usable size of a kmalloc'ed object (0 for ZERO_SIZE_PTR and NULL). */
SLUB_API size_t ksize(const void *p);
SLUB_API char *kstrdup(const char *s, gfp_t gfp);
SLUB_API char *kstrndup(const char *s, size_t max, gfp_t gfp);
SLUB_API void *kmemdup(const void *src, size_t len, gfp_t gfp);
SLUB_API void *kvmalloc(size_t size, gfp_t gfp);
SLUB_API void *kvzalloc(size_t size, gfp_t gfp);
SLUB_API void kvfree(const void *p);
/*
 * krealloc() for kvmalloc'ed blocks (the kernel's 6.12 signature): @p's
 * contents up to the smaller size move to a block of @size bytes.
 */
SLUB_API void *kvrealloc(const void *p, size_t size, gfp_t gfp);
/* The size kmalloc(@size) really hands out (a class's size, or pages); 0 for 0. */
SLUB_API size_t kmalloc_size_roundup(size_t size);
/* @len bytes of @s and a NUL after them; NULL for a NULL @s. */
SLUB_API char *kmemdup_nul(const char *s, size_t len, gfp_t gfp);
/*
 * @s itself if it lies in read-only memory of the program or a library
 * (a string literal: the kernel's .rodata test), else kstrdup(); free it
 * with kfree_const(), which frees only what libslub handed out.
 */
SLUB_API const char *kstrdup_const(const char *s, gfp_t gfp);
SLUB_API void kfree_const(const void *x);

/* The kernel's inline wrappers: NULL when @n * @size overflows. */
static inline void *kmalloc_array_node(size_t n, size_t size, gfp_t gfp, int node)
{
	size_t bytes;
	if (__builtin_mul_overflow(n, size, &bytes))
		return NULL;
	return kmalloc_node(bytes, gfp, node);
}
static inline void *kzalloc_node(size_t size, gfp_t gfp, int node)
{
	return kmalloc_node(size, gfp | __GFP_ZERO, node);
}
static inline void *kcalloc_node(size_t n, size_t size, gfp_t gfp, int node)
{
	return kmalloc_array_node(n, size, gfp | __GFP_ZERO, node);
}
static inline void *krealloc_array(void *p, size_t new_n, size_t new_size, gfp_t gfp)
{
	size_t bytes;
	if (__builtin_mul_overflow(new_n, new_size, &bytes))
		return NULL;
	return krealloc(p, bytes, gfp);
}
static inline void *kmemdup_array(const void *src, size_t count, size_t element_size, gfp_t gfp)
{
	size_t bytes;
	if (__builtin_mul_overflow(count, element_size, &bytes))
		return NULL;
	return kmemdup(src, bytes, gfp);
}
/* kvmalloc'ed memory is kmalloc'ed here: one allocator serves every size. */
static inline void *kvmalloc_node(size_t size, gfp_t gfp, int node)
{
	return kmalloc_node(size, gfp, node);
}
static inline void *kvzalloc_node(size_t size, gfp_t gfp, int node)
{
	return kmalloc_node(size, gfp | __GFP_ZERO, node);
}
static inline void *kvmalloc_array(size_t n, size_t size, gfp_t gfp)
{
	return kmalloc_array_node(n, size, gfp, NUMA_NO_NODE);
}
static inline void *kvcalloc(size_t n, size_t size, gfp_t gfp)
{
	return kmalloc_array_node(n, size, gfp | __GFP_ZERO, NUMA_NO_NODE);
}
static inline void kfree_bulk(size_t size, void **p)
{
	for (size_t i = 0; i < size; i++)
		kfree(p[i]);
}

/* ---- mempool (kernel API) ---------------------------------------------- */

/*
 * A pool that keeps @min_nr elements in reserve, as the kernel's mempool_t:
 * mempool_alloc() asks the allocator first and hands out a reserved
 * element when it fails; with __GFP_DIRECT_RECLAIM in the mask (GFP_KERNEL,
 * GFP_NOIO ...) it never returns NULL, but waits for mempool_free() to
 * give an element back.  Without it (GFP_NOWAIT, GFP_ATOMIC) it may return
 * NULL.  mempool_free() refills the reserve before it frees.  __GFP_ZERO:
 * the elements of the slab, kmalloc and page pools come zeroed, reserved
 * ones too; a pool of your own functions gets the flag passed on, and its
 * reserved elements are handed out as they were freed.
 */
typedef void *(mempool_alloc_t)(gfp_t gfp, void *pool_data);
typedef void (mempool_free_t)(void *element, void *pool_data);

typedef struct mempool {
	pthread_mutex_t lock;
	pthread_cond_t wait;		/* an element came back */
	int min_nr;			/* the reserve's size */
	int curr_nr;			/* elements in it now */
	unsigned int waiting;		/* mempool_alloc() calls waiting for an element */
	void **elements;
	void *pool_data;
	mempool_alloc_t *alloc;
	mempool_free_t *free;
} mempool_t;

/* 0 or -ENOMEM (the reserve could not be filled) / -EINVAL (bad arguments). */
SLUB_API int mempool_init(mempool_t *pool, int min_nr, mempool_alloc_t *alloc_fn,
			  mempool_free_t *free_fn, void *pool_data);
SLUB_API void mempool_exit(mempool_t *pool);
SLUB_API bool mempool_initialized(mempool_t *pool);
SLUB_API mempool_t *mempool_create(int min_nr, mempool_alloc_t *alloc_fn, mempool_free_t *free_fn,
				   void *pool_data);
SLUB_API mempool_t *mempool_create_node(int min_nr, mempool_alloc_t *alloc_fn,
					mempool_free_t *free_fn, void *pool_data, gfp_t gfp,
					int nid);
/* Change the reserve's size: 0, or -ENOMEM (it could not grow) / -EINVAL. */
SLUB_API int mempool_resize(mempool_t *pool, int new_min_nr);
/* Frees the reserve and the pool; elements still handed out stay the caller's. */
SLUB_API void mempool_destroy(mempool_t *pool);
SLUB_API void *mempool_alloc(mempool_t *pool, gfp_t gfp);
/* A reserved element only, never the allocator; NULL if none is left. */
SLUB_API void *mempool_alloc_preallocated(mempool_t *pool);
SLUB_API void mempool_free(void *element, mempool_t *pool);

/* The pool functions of the kernel's three kinds of pools. */
SLUB_API void *mempool_alloc_slab(gfp_t gfp, void *pool_data);
SLUB_API void mempool_free_slab(void *element, void *pool_data);
SLUB_API void *mempool_kmalloc(gfp_t gfp, void *pool_data);
SLUB_API void mempool_kfree(void *element, void *pool_data);
SLUB_API void *mempool_alloc_pages(gfp_t gfp, void *pool_data);
SLUB_API void mempool_free_pages(void *element, void *pool_data);

static inline mempool_t *mempool_create_slab_pool(int min_nr, struct kmem_cache *kc)
{
	return mempool_create(min_nr, mempool_alloc_slab, mempool_free_slab, (void *)kc);
}
static inline int mempool_init_slab_pool(mempool_t *pool, int min_nr, struct kmem_cache *kc)
{
	return mempool_init(pool, min_nr, mempool_alloc_slab, mempool_free_slab, (void *)kc);
}
static inline mempool_t *mempool_create_kmalloc_pool(int min_nr, size_t size)
{
	return mempool_create(min_nr, mempool_kmalloc, mempool_kfree, (void *)size);
}
static inline int mempool_init_kmalloc_pool(mempool_t *pool, int min_nr, size_t size)
{
	return mempool_init(pool, min_nr, mempool_kmalloc, mempool_kfree, (void *)size);
}
/* Elements are struct page pointers of blocks of 2^@order pages. */
static inline mempool_t *mempool_create_page_pool(int min_nr, int order)
{
	return mempool_create(min_nr, mempool_alloc_pages, mempool_free_pages,
			      (void *)(long)order);
}
static inline int mempool_init_page_pool(mempool_t *pool, int min_nr, int order)
{
	return mempool_init(pool, min_nr, mempool_alloc_pages, mempool_free_pages,
			    (void *)(long)order);
}

/* ---- RCU: kfree_rcu() and SLAB_TYPESAFE_BY_RCU, on liburcu --------------- */

/*
 * Grace periods are liburcu's, of the flavour this libslub was built for
 * (SLUB_RCU_FLAVOR in slub_rcu.h; "bp" unless built with
 * -DSLUB_RCU_FLAVOR=memb|mb|qsbr).  slub.h includes that flavour's header,
 * so rcu_read_lock(), rcu_read_unlock(), rcu_dereference(),
 * rcu_assign_pointer(), synchronize_rcu(), call_rcu() and rcu_barrier() are
 * liburcu's, under the kernel's names.  What a program must do:
 *   - take its read-side critical sections with this flavour's
 *     rcu_read_lock()/rcu_read_unlock() (these, through slub.h), and link
 *     the flavour's library (pkg-config slub names it);
 *   - with urcu-bp (the default): nothing more; a thread is registered by
 *     its first rcu_read_lock().  With memb or mb: rcu_register_thread()
 *     in every thread that reads, before its first rcu_read_lock(), and
 *     rcu_unregister_thread() before it exits.  With qsbr: that, and
 *     rcu_quiescent_state() (or rcu_thread_offline()) often, outside
 *     read-side sections; kfree_rcu() from an online thread only.
 * An unregistered memb/qsbr reader is not waited for: the object it reads
 * may be freed under it.  That is why the default is bp: kernel code takes
 * rcu_read_lock() in any thread, and bp's reader costs a few instructions
 * more, never a use after free.
 *
 * A program that never uses RCU pays nothing: liburcu is loaded (dlopen of
 * the flavour's library) at the first kmem_cache_create() with
 * SLAB_TYPESAFE_BY_RCU, kvfree_call_rcu() or kvfree_rcu_barrier(); that
 * first use starts liburcu's call_rcu worker thread, the one thread the
 * library starts on its own.  fork() pauses it and makes it anew in the
 * child (the library's fork handlers call liburcu's).  Define SLUB_NO_URCU
 * before including slub.h to build without liburcu's headers: struct
 * rcu_head is then slub_rcu.h's, of the same layout, and the calls below
 * still work (liburcu must be installed at run time).
 *
 * SLAB_TYPESAFE_BY_RCU, as in the kernel: an object freed with
 * kmem_cache_free() may be handed out again at once, but the slab's pages
 * go back to the page allocator only after a grace period.  A reader under
 * rcu_read_lock() that reaches a freed object finds memory of the same type
 * (possibly another object now): it must re-check, under the object's lock
 * or by its key, that it has the object it looked up.  The free pointer is
 * kept outside the object (or at kmem_cache_args.freeptr_offset), the
 * constructor runs once per object when its slab is made, and with
 * slub_debug's poisoning an object is poisoned after a grace period.
 * kmem_cache_destroy() waits for the cache's slabs, its kfree_rcu'd
 * objects and (rcu_barrier) the callbacks already queued.
 */

/*
 * Free @ptr (the start of a kmalloc'ed, kvmalloc'ed or kmem_cache block)
 * after a grace period.  @head is an rcu_head inside it, used only when no
 * batch page can be had; NULL (the mightsleep forms) may then wait for a
 * grace period in the caller.  Never from inside a read-side section with
 * @head NULL.  A bad pointer is reported and ignored.
 */
SLUB_API void kvfree_call_rcu(struct rcu_head *head, void *ptr);
/* Wait until every block queued by kfree_rcu() and kin before it is freed. */
SLUB_API void kvfree_rcu_barrier(void);

#define kvfree_rcu(ptr, rhf)                                                            \
	do {                                                                            \
		__typeof__(ptr) slub_rcu_p_ = (ptr);                                    \
		if (slub_rcu_p_)                                                        \
			kvfree_call_rcu(&slub_rcu_p_->rhf, (void *)slub_rcu_p_);        \
	} while (0)
#define kfree_rcu(ptr, rhf) kvfree_rcu(ptr, rhf)
#define kvfree_rcu_mightsleep(ptr) kvfree_call_rcu(NULL, (void *)(ptr))
#define kfree_rcu_mightsleep(ptr) kvfree_rcu_mightsleep(ptr)

/* ---- libslub extras --------------------------------------------------- */

/*
 * Apply options in the kernel's boot-line syntax ("key key=value ...")
 * before the first allocation.  Returns 0, -EINVAL if any option was unknown
 * or malformed (each is reported; the valid ones still apply), or -EBUSY
 * once the allocator is running.  SLUB_OPTIONS in the environment is read
 * at start-up after these, so the environment wins.  With
 * slub_decay_thread=1 it starts that thread (named slub-decay).
 */
SLUB_API int slub_setup(const char *options);
/*
 * Print every option with its value in force, its range and a line of
 * help.  This reads SLUB_OPTIONS and starts the allocator: slub_setup()
 * comes first.  From the shell: SLUB_OPTIONS=help (printed once to stderr,
 * then the program runs on) or slubrun --help.
 */
SLUB_API void slub_print_options(FILE *out);
/* Number of events (errors and warnings) reported since start. */
SLUB_API unsigned long slub_errors(void);
/*
 * Check every slab, freelist and object of @s (with slub_debug flags, each
 * object's red zones, poison and padding too), repairing what it can;
 * the number of errors found, counted as slub_errors() counts them.
 */
SLUB_API int slub_validate(struct kmem_cache *s);
/* Give every free page back to the OS now; returns the number of pages. */
SLUB_API unsigned long slub_reclaim(void);
/* Free blocks per node, zone and order, in the form of /proc/buddyinfo. */
SLUB_API void slub_print_buddyinfo(FILE *out);
/*
 * Every cache in the table of the kernel's slabinfo tool (Name, Objects,
 * Objsize, Space, Slabs/Part/Cpu, O/S, O, %Fr, %Ef, Flg), empty ones too,
 * read through the attributes below.
 */
SLUB_API void slub_print_slabinfo(FILE *out);
/*
 * How the per-CPU fast paths run in this process, chosen once at start-up:
 * "rseq" (restartable sequences on glibc's registered area) or
 * "cmpxchg16b" (no rseq: an old glibc, valgrind, slub_rseq=0, or a
 * membarrier that refused), "cmpxchg16b + thread sheaves" where the malloc
 * library's classes then keep per-thread caches (slub_thread_sheaves);
 * NULL if the library could not start.
 */
SLUB_API const char *slub_percpu_mode(void);

/* ---- caches by name, and their /sys/kernel/slab attributes -------------- */

/*
 * The cache known by @name: a creator's name, an alias, or the unique id
 * of a mergeable cache (":0000064", ":a-0000088"); NULL if none.
 */
SLUB_API struct kmem_cache *slub_find_cache(const char *name);
/*
 * Call @fn for every cache until it returns non-zero, and return that (0
 * when all were seen).  The cache list is locked meanwhile: @fn may look
 * caches up, read and write attributes and allocate, but a cache created
 * or destroyed from @fn is reported and refused.
 */
SLUB_API int slub_for_each_cache(int (*fn)(struct kmem_cache *s, void *arg), void *arg);
/* The name the cache was first created under. */
SLUB_API const char *slub_cache_name(struct kmem_cache *s);
/*
 * The name the kernel's /sys/kernel/slab gives the cache's directory: the
 * unique id ":[flags-]size" of a mergeable cache, else its name.
 */
SLUB_API const char *slub_cache_id(struct kmem_cache *s);
/* The names merged into @s other than its own: @i from 0 until NULL. */
SLUB_API const char *slub_cache_alias(struct kmem_cache *s, unsigned int i);
/*
 * Read attribute @attr of @s (slab_size, objects, order, ...: the files of
 * the kernel's /sys/kernel/slab/<cache>/) into @buf: the exact text the
 * kernel's file would hold, NUL-terminated.  Returns its length, -ENOENT
 * for no such attribute, -ENOSPC if @len cannot hold it and the NUL.  Safe
 * while other threads allocate and free.
 */
SLUB_API ssize_t slub_attr_read(struct kmem_cache *s, const char *attr, char *buf, size_t len);
/*
 * Write @len bytes of text to attribute @attr of @s, as `echo 1 > shrink`
 * would.  Returns @len, -ENOENT for no such attribute, -EPERM for a
 * read-only one, -EINVAL for a value the attribute refuses.
 */
SLUB_API ssize_t slub_attr_write(struct kmem_cache *s, const char *attr, const char *buf,
				 size_t len);
/*
 * Attribute @i's name (from 0 until NULL) and, in @mode if not NULL, its
 * permissions as the kernel's file has them (0444 read-only, 0644 writable).
 */
SLUB_API const char *slub_attr_name(unsigned int i, unsigned int *mode);

#ifdef __cplusplus
}

/* The args form of kmem_cache_create() for C++ (C++ linkage: an overload). */
static inline struct kmem_cache *kmem_cache_create(const char *name, unsigned int size,
						   const struct kmem_cache_args *args,
						   slab_flags_t flags)
{
	return kmem_cache_create_args(name, size, args, flags);
}
#endif

#endif /* SLUB_H */
