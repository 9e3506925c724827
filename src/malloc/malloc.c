// SPDX-License-Identifier: MIT
/*
 * malloc.c - the C library's malloc family on SLUB: libslub-malloc.so.
 *
 * Up to 8 KiB a request is an object of the cache of its size class
 * (malloc_classes.h: finer than kmalloc's).  Every class from 16 bytes up
 * is a multiple of 16 and slabs start on page boundaries, so those objects
 * are 16-byte aligned (what glibc promises), and power-of-two classes are
 * aligned to their size, which the memalign family relies on.
 * Larger requests are page extents (malloc_extents.c).  free() and
 * malloc_usable_size() find either kind through the memory map in O(1);
 * anything else is reported and ignored.
 *
 * Nothing here calls what may allocate (stdio, dlsym) on a path that
 * holds an allocator lock; reports go through the report sink.  free()
 * keeps errno.  The fast paths are kmalloc's: an rseq pop or push.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/start.h"
#include "malloc/malloc_classes.h"
#include "malloc/malloc_debug.h"
#include "malloc/malloc_extents.h"
#include "slab/sheaf/sheaf.h"
#include "slab/debug/slab_debug.h"
#include "base/os.h"
#include "base/report.h"

#define MALLOC_API __attribute__((visibility("default")))
/* C23; <stdlib.h> declares them from glibc 2.43 on. */
void free_sized(void *p, size_t size);
void free_aligned_sized(void *p, size_t align, size_t size);
/* Out of memory is the caller's to handle: no warning, as in glibc. */
#define MALLOC_GFP (GFP_KERNEL | __GFP_NOWARN)
#define MALLOC_MIN_ALIGN 16
/*
 * The fast paths test for sheaves first: malloc's caches are on sheaves
 * wherever rseq runs (sheaf.c's capacity_wanted), so a pop or push skips
 * the unqueued sequence, and on cpu slabs pays one test of sheaf_slots.
 */
#define MALLOC_SHEAVES_FIRST true
#define REALLOC_POPULATE_MIN (64UL << 10)	/* 16 pages: one call beats 16 faults */

/* ---- allocation ------------------------------------------------------------------ */

/* Zero, large sizes, and the first allocation of each class (no cache yet). */
static __noinline void *malloc_slow(size_t size, gfp_t gfp)
{
	if (!size)
		size = 1;	/* glibc: a unique pointer that free() takes */
	if (size > MALLOC_MAX_CLASS_SIZE)
		return extent_alloc(size, 0, gfp);
	struct kmem_cache *s = malloc_cache_fast(size);
	if (unlikely(!s)) {
		s = malloc_class_make(size);
		if (!s) {
			errno = ENOMEM;
			return NULL;
		}
	}
	return slab_alloc_sized(s, gfp, NUMA_NO_NODE, size);
}

/* Inlined by force, as kmalloc's: GCC weighs the fast paths' asm by its lines. */
static inline __attribute__((always_inline)) void *malloc_gfp(size_t size, gfp_t gfp)
{
	if (likely(size - 1 < MALLOC_MAX_CLASS_SIZE)) {
		struct kmem_cache *s = malloc_cache_fast(size);
		if (likely(s))
			return slab_alloc_in(s, gfp, NUMA_NO_NODE, MALLOC_SHEAVES_FIRST);
	}
	return malloc_slow(size, gfp);
}

MALLOC_API void *malloc(size_t size)
{
	return malloc_gfp(size, MALLOC_GFP);
}

MALLOC_API void *calloc(size_t n, size_t size)
{
	/* pthread_create() callocs here before its thread exists (base/start.h). */
	slub_fork_handlers_check();
	size_t bytes;
	if (unlikely(__builtin_mul_overflow(n, size, &bytes))) {
		errno = ENOMEM;
		return NULL;
	}
	/* Extents of clean pages skip the memset (alloc_pages_extent). */
	return malloc_gfp(bytes, MALLOC_GFP | __GFP_ZERO);
}

/* The smallest power of two >= @x (1 < x <= 2^63). */
static size_t roundup_pow2(size_t x)
{
	return 1UL << (64 - __builtin_clzl(x - 1));
}

/* @align: a power of two. */
static void *malloc_aligned(size_t align, size_t size)
{
	if (align <= ARCH_SLAB_MINALIGN)
		return malloc(size);
	if (size < align)
		size = align;
	if (size <= MALLOC_MAX_CLASS_SIZE) {
		/* Power-of-two classes are aligned to their size. */
		if (align > MALLOC_MIN_ALIGN)
			size = roundup_pow2(size);
		return malloc_gfp(size, MALLOC_GFP);
	}
	/* Extents start on a page; a debug extent's header needs the alignment. */
	return extent_alloc(size, align, MALLOC_GFP);
}

/* The kmalloc caches are malloc's here: sheaves by default (slub_malloc_sheaves). */
const bool slub_malloc_library = true;

static bool is_pow2(size_t x)
{
	return x && !(x & (x - 1));
}

MALLOC_API void *memalign(size_t align, size_t size)
{
	/* glibc: a non-power-of-two alignment is rounded up to one. */
	if (align > (SIZE_MAX >> 1) + 1) {
		errno = EINVAL;
		return NULL;
	}
	if (!is_pow2(align))
		align = align ? roundup_pow2(align) : 1;
	return malloc_aligned(align, size);
}

MALLOC_API void *aligned_alloc(size_t align, size_t size)
{
	if (!is_pow2(align)) {
		errno = EINVAL;	/* as glibc 2.38 and C23 */
		return NULL;
	}
	return malloc_aligned(align, size);
}

MALLOC_API int posix_memalign(void **memptr, size_t align, size_t size)
{
	if (!is_pow2(align) || align % sizeof(void *))
		return EINVAL;
	void *p = malloc_aligned(align, size);
	if (!p)
		return ENOMEM;
	*memptr = p;
	return 0;
}

MALLOC_API void *valloc(size_t size)
{
	return malloc_aligned(PAGE_SIZE, size);
}

MALLOC_API void *pvalloc(size_t size)
{
	if (size > SIZE_MAX - PAGE_SIZE) {
		errno = ENOMEM;
		return NULL;
	}
	size = size ? ALIGN_UP(size, PAGE_SIZE) : PAGE_SIZE;
	return malloc_aligned(PAGE_SIZE, size);
}

/* ---- free and size ---------------------------------------------------------------- */

/* Everything but a good slab object: NULL, an extent, a kmalloc block, garbage. */
static __noinline void free_slow(void *p, const char *caller)
{
	if (!p)
		return;
	int saved = errno;
	if (wild_pointer(p, caller, false))
		;	/* reported, ignored */
	else if (!extent_free(p, caller))
		kfree_checked(p, caller);	/* a kmalloc'ed block, or a report */
	errno = saved;
}

/* On a cache line's start: its sheaf path, 250 bytes, then spans 4 lines, not 5. */
MALLOC_API __attribute__((aligned(64))) void free(void *p)
{
	slab_free_prefetch(p);
	struct slab *slab;
	struct kmem_cache *s = object_cache(p, &slab);
	if (likely(s))
		slab_free_in(s, slab, p, MALLOC_SHEAVES_FIRST);
	else
		free_slow(p, "free");
}

/* What the caller may use at @p; *ok false (after a report) if @p is not ours. */
static size_t usable_size(const void *p, const char *caller, bool *ok)
{
	struct slab *slab;
	struct kmem_cache *s = object_cache(p, &slab);
	*ok = true;
	if (likely(s)) {
		if (unlikely(kmem_cache_debug(s)))
			debug_ksize(s, (void *)p);	/* all of it is the caller's now */
		return slab_ksize(s);
	}
	size_t bytes = extent_usable_size(p);
	if (bytes)
		return bytes;
	return ksize_of(p, caller, ok);
}

MALLOC_API size_t malloc_usable_size(void *p)
{
	bool ok;
	return usable_size(p, "malloc_usable_size", &ok);
}

/*
 * C23's sized frees (glibc 2.43): a program built against a newer glibc
 * calls them, and without ours its blocks would reach glibc's free.  The
 * size and alignment are checked, not needed (the memory map knows the
 * block): a block smaller than the size given, or not at the alignment
 * given, is the caller's bug, reported; the block is freed all the same,
 * as it is ours and whole.  In debug mode a slab object's size is checked
 * against the size asked for (kept under U), as C23 requires it to be.
 * Extents, debug caches and bad pointers take the slow path.
 */
static __noinline void sized_free_slow(void *p, size_t align, size_t size, const char *caller)
{
	struct slab *slab;
	struct kmem_cache *s = object_cache(p, &slab);
	size_t usable, asked = 0;
	bool ok = true;
	if (s) {
		/* Not usable_size(): its debug_ksize() would disarm the red zone free checks. */
		usable = slab_ksize(s);
		if (slub_debug_orig_size(s) && get_orig_size(s, p) < s->object_size)
			asked = get_orig_size(s, p);	/* widened by malloc_usable_size(): unknown */
	} else if (!(usable = extent_usable_size(p))) {
		usable = ksize_of(p, caller, &ok);
	}
	if (!ok)
		return;		/* not ours: reported and ignored, as free() does */
	if (size > usable)
		slub_report_call("%s: size %zu is larger than block %p (%zu bytes); freed anyway", caller,
			    size, p, usable);
	else if (asked && size != asked)
		slub_report_call("%s: size %zu is not the %zu bytes block %p was allocated with; freed "
			    "anyway", caller, size, asked, p);
	else if (!align || (align & (align - 1)))
		slub_report_call("%s: alignment %zu is not a power of two (block %p); freed anyway",
			    caller, align, p);
	else if ((uintptr_t)p & (align - 1))
		slub_report_call("%s: block %p is not aligned to %zu; freed anyway", caller, p, align);
	free(p);
}

/* Both sized frees: a slab object whose size and alignment check out, inline. */
static inline void sized_free(void *p, size_t align, size_t size, const char *caller)
{
	struct slab *slab;
	struct kmem_cache *s = object_cache(p, &slab);
	if (likely(s && !kmem_cache_debug(s) && size <= slab_ksize(s) && align &&
		   !(align & (align - 1)) && !((uintptr_t)p & (align - 1))))
		slab_free_in(s, slab, p, MALLOC_SHEAVES_FIRST);
	else if (p)
		sized_free_slow(p, align, size, caller);
}

MALLOC_API void free_sized(void *p, size_t size)
{
	sized_free(p, 1, size, "free_sized");
}

MALLOC_API void free_aligned_sized(void *p, size_t align, size_t size)
{
	sized_free(p, align, size, "free_aligned_sized");
}

/* Copy @p (@old bytes usable) to a new block of @size; @p is left to the caller. */
static void *realloc_move(const void *p, size_t size, size_t old)
{
	size_t copy = size < old ? size : old;
	void *q = malloc(size);
	if (!q)
		return NULL;
	/*
	 * A long copy writes every page it reaches: fault them in with one
	 * call, not one fault per page (os_populate; see allocate_slab).
	 */
	if (copy >= REALLOC_POPULATE_MIN) {
		uintptr_t from = ALIGN_UP((uintptr_t)q, PAGE_SIZE);
		uintptr_t to = ALIGN_DOWN((uintptr_t)q + copy, PAGE_SIZE);
		if (to > from)
			os_populate((void *)from, to - from);
	}
	memcpy(q, p, copy);
	return q;
}

/* In place while it fits and does not waste more than half. */
static inline bool realloc_fits(size_t size, size_t old)
{
	return size <= old && (size > old / 2 || old <= MALLOC_MIN_ALIGN);
}

/* Extents, kmalloc's own large blocks and pointers that are not ours. */
static __noinline void *realloc_slow(void *p, size_t size)
{
	void *moved;
	if (unlikely(extent_debug_flags()) && debug_extent_realloc(p, size, &moved))
		return moved;	/* a debug extent is checked and moved, never resized */
	if (extent_report_freed(p, "realloc")) {
		errno = EINVAL;
		return NULL;
	}
	bool ok;
	size_t old = usable_size(p, "realloc", &ok);
	if (!ok) {
		errno = EINVAL;
		return NULL;
	}
	if (realloc_fits(size, old))
		return p;
	/* An extent grows or shrinks where it lies, or moves its pages (glibc: mremap). */
	if (old > MALLOC_MAX_CLASS_SIZE && size > MALLOC_MAX_CLASS_SIZE) {
		void *q = extent_resize(p, size);
		if (q)
			return q;
	}
	void *q = realloc_move(p, size, old);
	if (q)
		free(p);
	return q;
}

MALLOC_API void *realloc(void *p, size_t size)
{
	if (!p)
		return malloc(size);
	if (!size) {
		free(p);	/* glibc: realloc(p, 0) frees and returns NULL */
		return NULL;
	}
	/* A slab object: one lookup serves the size and the free. */
	struct slab *slab;
	struct kmem_cache *s = object_cache(p, &slab);
	if (unlikely(!s))
		return realloc_slow(p, size);
	size_t old = slab_ksize(s);
	if (realloc_fits(size, old)) {
		if (unlikely(kmem_cache_debug(s)))
			debug_krealloc(s, p, size, 0);	/* the kmalloc red zone moves */
		return p;
	}
	if (unlikely(kmem_cache_debug(s)))
		old = get_orig_size(s, p);	/* what the caller has: not the red zone */
	void *q = realloc_move(p, size, old);
	if (q)
		slab_free_in(s, slab, p, MALLOC_SHEAVES_FIRST);
	return q;
}

MALLOC_API void *reallocarray(void *p, size_t n, size_t size)
{
	size_t bytes;
	if (__builtin_mul_overflow(n, size, &bytes)) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc(p, bytes);
}

/* ---- the names glibc also answers to ---------------------------------------------- */

/* The aliases need not repeat glibc's declaration attributes (GCC asks them to). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-attributes"
#endif
MALLOC_API void *__libc_malloc(size_t) __attribute__((alias("malloc")));
MALLOC_API void __libc_free(void *) __attribute__((alias("free")));
MALLOC_API void cfree(void *) __attribute__((alias("free")));
MALLOC_API void *__libc_calloc(size_t, size_t) __attribute__((alias("calloc")));
MALLOC_API void *__libc_realloc(void *, size_t) __attribute__((alias("realloc")));
MALLOC_API void *__libc_reallocarray(void *, size_t, size_t) __attribute__((alias("reallocarray")));
MALLOC_API void *__libc_memalign(size_t, size_t) __attribute__((alias("memalign")));
MALLOC_API void *__libc_valloc(size_t) __attribute__((alias("valloc")));
MALLOC_API void *__libc_pvalloc(size_t) __attribute__((alias("pvalloc")));
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
