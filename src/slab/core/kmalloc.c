// SPDX-License-Identifier: MIT
/*
 * kmalloc.c - the kmalloc family on the kmalloc-8 ... kmalloc-8k caches
 * (plus kmalloc-96 and kmalloc-192), chosen by the kernel's size index;
 * larger requests are compound pages from the page allocator, marked so
 * that kfree/ksize/krealloc tell them apart through virt_to_page().
 * GFP_DMA/GFP_DMA32 requests use dma-kmalloc-* caches made on first use.
 */
#define _GNU_SOURCE
#include "slab/core/kmalloc.h"
#include "slab/core/slab_common.h"
#include "slab/debug/slab_debug.h"
#include "slab/debug/kfence.h"

#include <errno.h>
#include <string.h>

#include "base/start.h"
#include "base/report.h"

struct kmem_cache *kmalloc_caches[NR_KMALLOC_TYPES][NR_KMALLOC_INDEX];
static pthread_mutex_t kmalloc_dma_lock = PTHREAD_MUTEX_INITIALIZER;

/* Cache index for sizes up to 192, in steps of 8 (index 1: 96, 2: 192). */
static const uint8_t size_index[24] = {
	3, 4, 5, 5, 6, 6, 6, 6,		/*   8 ..  64 */
	1, 1, 1, 1, 7, 7, 7, 7,		/*  72 .. 128 */
	2, 2, 2, 2, 2, 2, 2, 2,		/* 136 .. 192 */
};

static unsigned int kmalloc_index(size_t size)
{
	if (size <= 192)
		return size_index[(size - 1) / 8];
	return 64 - (unsigned int)__builtin_clzl(size - 1);	/* fls(size - 1) */
}

uint8_t kmalloc_fast_index[KMALLOC_MAX_CACHE_SIZE / 8];

static unsigned int kmalloc_size(unsigned int index)
{
	return index == 1 ? 96 : index == 2 ? 192 : 1u << index;
}

static void kmalloc_name(char *buf, size_t n, enum kmalloc_type type, unsigned int size)
{
	slab_cache_name(buf, n, type == KMALLOC_DMA ? "dma-kmalloc" : "kmalloc", size);
}

static struct kmem_cache *create_kmalloc_cache(enum kmalloc_type type, unsigned int index)
{
	char name[SLUB_NAME_MAX];
	unsigned int flags = SLAB_KMALLOC | (type == KMALLOC_DMA ? SLAB_CACHE_DMA32 : 0);
	kmalloc_name(name, sizeof(name), type, kmalloc_size(index));
	return __kmem_cache_create(name, kmalloc_size(index), KMALLOC_MIN_SIZE, flags, NULL, 0);
}

bool create_kmalloc_caches(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(kmalloc_fast_index); i++)
		__atomic_store_n(&kmalloc_fast_index[i], (uint8_t)kmalloc_index(i * 8 + 1),
				 __ATOMIC_RELAXED);
	for (unsigned int i = 1; i < NR_KMALLOC_INDEX; i++) {
		struct kmem_cache *s = create_kmalloc_cache(KMALLOC_NORMAL, i);
		if (!s)
			return false;	/* no memory at start-up: the rest fails too */
		__atomic_store_n(&kmalloc_caches[KMALLOC_NORMAL][i], s, __ATOMIC_RELEASE);
	}
	/* Debug caches keep each caller's size: their sizes take the slow path (index 0: none). */
	for (size_t i = 0; i < ARRAY_SIZE(kmalloc_fast_index); i++)
		if (kmem_cache_debug(kmalloc_caches[KMALLOC_NORMAL][kmalloc_fast_index[i]]))
			__atomic_store_n(&kmalloc_fast_index[i], 0, __ATOMIC_RELAXED);
	return true;
}

void kmalloc_fork_lock(bool lock)
{
	os_mutex_hold(&kmalloc_dma_lock, lock);
}

void kmalloc_fork_child(void)
{
	pthread_mutex_init(&kmalloc_dma_lock, NULL);
}

static struct kmem_cache *kmalloc_slab(size_t size, gfp_t gfp)
{
	unsigned int index = kmalloc_index(size);
	enum kmalloc_type type = gfp & (__GFP_DMA | __GFP_DMA32) ? KMALLOC_DMA : KMALLOC_NORMAL;
	struct kmem_cache *s = __atomic_load_n(&kmalloc_caches[type][index], __ATOMIC_ACQUIRE);
	if (likely(s) || type == KMALLOC_NORMAL)
		return s;
	slub_fork_handlers_check();
	pthread_mutex_lock(&kmalloc_dma_lock);
	s = kmalloc_caches[type][index];
	if (!s) {
		s = create_kmalloc_cache(type, index);
		if (s)
			__atomic_store_n(&kmalloc_caches[type][index], s, __ATOMIC_RELEASE);
		else
			slub_report("cannot create the dma-kmalloc cache for %zu bytes: out of memory",
				    size);
	}
	pthread_mutex_unlock(&kmalloc_dma_lock);
	return s;
}

static void *kmalloc_large(size_t size, gfp_t gfp, int node)
{
	if (unlikely(size > KMALLOC_MAX_SIZE)) {
		if (!(gfp & __GFP_NOWARN))
			slub_report("kmalloc: size %zu is larger than the largest allocation (%lu)",
				    size, KMALLOC_MAX_SIZE);
		errno = ENOMEM;
		return NULL;
	}
	struct page *page = alloc_pages_node(node, gfp | __GFP_COMP, (unsigned int)get_order(size));
	if (!page)
		return NULL;
	__atomic_or_fetch(&page->flags, PG_kmalloc_large, __ATOMIC_RELEASE);
	return memmap_page_address(page);
}

/* Zero sizes, large sizes, DMA caches and the very first call. */
static __noinline void *kmalloc_node_slow(size_t size, gfp_t gfp, int node)
{
	if (unlikely(!size))
		return ZERO_SIZE_PTR;
	if (unlikely(size > KMALLOC_MAX_CACHE_SIZE))
		return kmalloc_large(size, gfp, node);
	struct kmem_cache *s = kmalloc_slab(size, gfp);
	if (unlikely(!s)) {
		slab_ensure_init();
		s = kmalloc_slab(size, gfp);
		if (!s) {
			errno = ENOMEM;
			return NULL;
		}
	}
	return slab_alloc_sized(s, gfp, node, size);
}

/*
 * The common case: a normal kmalloc cache that exists.  Inlined by force:
 * GCC weighs an asm by its lines, and the fast path's pop has enough of
 * them that kmalloc() would otherwise call this (3 instructions more).
 */
static inline __attribute__((always_inline)) void *__kmalloc_node(size_t size, gfp_t gfp, int node)
{
	if (likely(size - 1 < KMALLOC_MAX_CACHE_SIZE && !(gfp & (__GFP_DMA | __GFP_DMA32)))) {
		struct kmem_cache *s = kmalloc_cache_fast(size);
		if (likely(s))
			return slab_alloc(s, gfp, node);
	}
	return kmalloc_node_slow(size, gfp, node);
}

void *kmalloc_node(size_t size, gfp_t gfp, int node)
{
	return __kmalloc_node(size, gfp, node);
}

void *kmalloc(size_t size, gfp_t gfp)
{
	return __kmalloc_node(size, gfp, NUMA_NO_NODE);
}

size_t kmalloc_size_roundup(size_t size)
{
	if (!size)
		return 0;
	if (size <= KMALLOC_MAX_CACHE_SIZE)
		return kmalloc_size(kmalloc_index(size));
	if (size > KMALLOC_MAX_SIZE)
		return size;	/* kmalloc() fails: its size is the caller's to keep */
	return PAGE_SIZE << get_order(size);
}

void *kzalloc(size_t size, gfp_t gfp)
{
	return kmalloc_node(size, gfp | __GFP_ZERO, NUMA_NO_NODE);
}

void *kmalloc_array(size_t n, size_t size, gfp_t gfp)
{
	size_t bytes;
	if (__builtin_mul_overflow(n, size, &bytes)) {
		errno = ENOMEM;
		return NULL;
	}
	return kmalloc_node(bytes, gfp, NUMA_NO_NODE);
}

void *kcalloc(size_t n, size_t size, gfp_t gfp)
{
	return kmalloc_array(n, size, gfp | __GFP_ZERO);
}

/* What a kmalloc'ed pointer is: a slab object, a large block, or neither. */
enum kobj_kind { KOBJ_BAD, KOBJ_SLAB, KOBJ_LARGE, KOBJ_KFENCE };

/*
 * A large block's descriptors are read under memmap_lock (when in a large
 * region): a racing free of the same block (a program's double free) may
 * unmap the region.  @claim: take the block for freeing (clear
 * PG_kmalloc_large), so that of two racing frees one wins and the other is
 * reported.  *orderp: the large block's order, read under the lock too.
 */
static enum kobj_kind classify(const void *p, const char *caller, bool claim,
			       struct kmem_cache **sp, struct slab **slabp, struct page **pagep,
			       unsigned int *orderp)
{
	uintptr_t start;
	struct slab *slab;
	struct kmem_cache *s = object_slab(p, &slab, &start);
	if (likely(s)) {
		if (unlikely(!slab_object_valid_at(s, slab, start, p))) {
			slab_bad_free(p, s, caller);
			return KOBJ_BAD;
		}
		*sp = s;
		*slabp = slab;
		return KOBJ_SLAB;
	}
	if (unlikely(is_kfence_address(p)))
		return KOBJ_KFENCE;	/* outside the memory map: kfence.c judges it */
	bool locked, interior = false, free_now = false;
	enum kobj_kind kind = KOBJ_BAD;
	uintptr_t block = 0;
	struct page *page = memmap_virt_to_page_locked(p, &locked);
	if (page) {
		/* Every page of an allocated block is a head or a tail. */
		free_now = !(page_flags(page) & (PG_head | PG_tail));
		struct page *head = compound_head(page);
		block = (uintptr_t)memmap_page_address(head);
		interior = (uintptr_t)p != block;
		/* Acquire: pairs with kmalloc_large()'s release, so the order below is the block's. */
		if ((__atomic_load_n(&head->flags, __ATOMIC_ACQUIRE) & PG_kmalloc_large) &&
		    p == memmap_page_address(head) &&
		    (!claim || (__atomic_fetch_and(&head->flags, ~PG_kmalloc_large, __ATOMIC_ACQ_REL) &
				PG_kmalloc_large))) {
			*pagep = head;
			*orderp = head->order;
			kind = KOBJ_LARGE;
		}
	}
	if (locked)
		memmap_unlock();
	/* 8 bytes in: C++'s delete of a new[] array, whose count sits in front (slab_report.c). */
	if (kind == KOBJ_BAD && free_now)
		slub_report_call("%s: invalid pointer %p (in libslub's heap, on pages that are free: "
			    "freed already, a double free?); ignored", caller, p);
	else if (kind == KOBJ_BAD && interior)
		slub_report_call("%s: invalid pointer %p (inside libslub's heap, but not the start of a "
			    "block it handed out: %lu bytes into the block at %#lx%s); ignored", caller,
			    p, (unsigned long)((uintptr_t)p - block), (unsigned long)block,
			    (uintptr_t)p - block == sizeof(size_t) ?
				    ", C++ delete of an array from new[]?" : "");
	else if (kind == KOBJ_BAD)
		slub_report_call("%s: invalid pointer %p (not allocated by libslub); ignored", caller, p);
	return kind;
}

void *kmalloc_block_start(const void *p, struct kmem_cache **sp)
{
	uintptr_t start;
	struct slab *slab;
	*sp = NULL;
	if ((uintptr_t)p < PAGE_SIZE || (uintptr_t)p >= (1UL << 47))
		return NULL;
	struct kmem_cache *s = object_slab(p, &slab, &start);
	if (s) {
		unsigned int size = READ_ONCE(s->size);
		uintptr_t index = ((uintptr_t)p - start) / size;
		*sp = s;
		return (void *)(start + index * size + READ_ONCE(s->red_left_pad));
	}
	struct page *page = virt_to_page(p);
	if (!page)
		return NULL;
	struct page *head = compound_head(page);
	if (!(__atomic_load_n(&head->flags, __ATOMIC_ACQUIRE) & PG_kmalloc_large))
		return NULL;
	return memmap_page_address(head);
}

bool wild_pointer_report(const void *p, const char *caller, bool zero_size_ok)
{
	uintptr_t a = (uintptr_t)p;
	if (!a || (zero_size_ok && p == ZERO_SIZE_PTR))
		return false;
	if (a < PAGE_SIZE)
		slub_report_call("%s: invalid pointer %p (a small integer, not an address); ignored",
			    caller, p);
	else
		slub_report_call("%s: invalid pointer %p (not a canonical user-space address); ignored",
			    caller, p);
	return true;
}

size_t ksize_of(const void *p, const char *caller, bool *ok)
{
	struct kmem_cache *s;
	struct slab *slab;
	struct page *page;
	unsigned int order;
	*ok = true;
	if (unlikely(wild_pointer(p, caller, true))) {
		*ok = false;
		return 0;
	}
	if (ZERO_OR_NULL_PTR(p))
		return 0;
	switch (classify(p, caller, false, &s, &slab, &page, &order)) {
	case KOBJ_SLAB:
		if (kmem_cache_debug(s))
			debug_ksize(s, (void *)p);	/* the caller may use it all now */
		return slab_ksize(s);
	case KOBJ_LARGE:
		return PAGE_SIZE << order;
	case KOBJ_KFENCE: {
		size_t size = kfence_ksize(p, caller);
		*ok = size != 0;
		return size;
	}
	default:
		*ok = false;
		return 0;
	}
}

size_t ksize(const void *p)
{
	bool ok;
	return ksize_of(p, "ksize", &ok);
}

void kfree_checked(const void *p, const char *caller)
{
	struct kmem_cache *s;
	struct slab *slab;
	struct page *page;
	unsigned int order;
	if (unlikely(ZERO_OR_NULL_PTR(p))) {
		wild_pointer(p, caller, true);	/* 1 to 15: reported */
		return;
	}
	if (unlikely(wild_pointer(p, caller, true)))
		return;
	switch (classify(p, caller, true, &s, &slab, &page, &order)) {
	case KOBJ_SLAB:
		slab_free(s, slab, (void *)p);
		break;
	case KOBJ_LARGE:
		__free_pages(page, order);	/* claimed: ours alone to free */
		break;
	case KOBJ_KFENCE:
		kfence_free(p, NULL, caller);
		break;
	default:
		break;
	}
}

static __noinline void kfree_slow(const void *p)
{
	kfree_checked(p, "kfree");
}

void kfree(const void *p)
{
	/* The common case inline; NULL, ZERO_SIZE_PTR, large blocks and bad pointers below. */
	slab_free_prefetch(p);
	struct slab *slab;
	struct kmem_cache *s = object_cache(p, &slab);
	if (likely(s))
		slab_free(s, slab, (void *)p);
	else
		kfree_slow(p);
}

void kfree_sensitive(const void *p)
{
	bool ok;
	size_t ks = ksize_of(p, "kfree_sensitive", &ok);
	if (!ok)
		return;
	if (ks) {
		memset((void *)p, 0, ks);
		__asm__ __volatile__("" : : "r"(p) : "memory");	/* keep the memset */
	}
	kfree_checked(p, "kfree_sensitive");
}

void *krealloc(const void *p, size_t new_size, gfp_t gfp)
{
	if (unlikely(!new_size)) {
		kfree_checked(p, "krealloc");
		return ZERO_SIZE_PTR;
	}
	struct kmem_cache *s;
	struct slab *slab;
	struct page *page;
	unsigned int order;
	size_t ks = 0, copy = 0;
	if (!ZERO_OR_NULL_PTR(p)) {
		switch (classify(p, "krealloc", false, &s, &slab, &page, &order)) {
		case KOBJ_SLAB:
			ks = copy = slab_ksize(s);
			if (kmem_cache_debug(s))
				copy = get_orig_size(s, (void *)p);	/* not its red zone */
			if (ks >= new_size && kmem_cache_debug(s)) {
				/* In place: the kmalloc red zone moves to the new end. */
				debug_krealloc(s, (void *)p, new_size, gfp);
				return (void *)p;
			}
			break;
		case KOBJ_LARGE:
			ks = copy = PAGE_SIZE << order;
			break;
		case KOBJ_KFENCE:
			ks = copy = kfence_ksize(p, "krealloc");
			if (!ks)
				return NULL;
			break;
		default:
			return NULL;
		}
	}
	if (ks >= new_size) {
		if (gfp & __GFP_ZERO)
			memset((char *)p + new_size, 0, ks - new_size);
		return (void *)p;
	}
	void *ret = kmalloc_node(new_size, gfp, NUMA_NO_NODE);
	if (ret && ks) {
		memcpy(ret, p, copy);
		kfree_checked(p, "krealloc");
	}
	return ret;
}

char *kstrdup(const char *s, gfp_t gfp)
{
	return s ? kmemdup(s, strlen(s) + 1, gfp) : NULL;
}

char *kstrndup(const char *s, size_t max, gfp_t gfp)
{
	if (!s)
		return NULL;
	size_t len = strnlen(s, max);
	char *p = kmalloc_node(len + 1, gfp, NUMA_NO_NODE);
	if (p) {
		memcpy(p, s, len);
		p[len] = 0;
	}
	return p;
}

void *kmemdup(const void *src, size_t len, gfp_t gfp)
{
	void *p = kmalloc_node(len, gfp, NUMA_NO_NODE);
	if (p && len)
		memcpy(p, src, len);
	return p;
}

void *kvmalloc(size_t size, gfp_t gfp)
{
	return kmalloc_node(size, gfp, NUMA_NO_NODE);
}

void *kvzalloc(size_t size, gfp_t gfp)
{
	return kmalloc_node(size, gfp | __GFP_ZERO, NUMA_NO_NODE);
}

void kvfree(const void *p)
{
	kfree_checked(p, "kvfree");
}
