// SPDX-License-Identifier: MIT
/*
 * slab_kasan.c - telling AddressSanitizer or valgrind's memcheck what each
 * slab object is, as the kernel's KASAN tells its shadow memory: found at
 * run time, so a program built with -fsanitize=address, or run under
 * valgrind, sees libslub's objects without a rebuild of libslub.
 *
 *   ASan      its poisoning interface, looked up as weak symbols: present
 *             only in a program that links ASan's run-time.  A free object,
 *             the red zone after each object and the bytes past a kmalloc
 *             caller's size are poisoned; ASan reports "use-after-poison"
 *             or an overflow with the access's stack.
 *   valgrind  memcheck's client requests (valgrind/memcheck.h, headers
 *             only; no-ops outside valgrind): each object handed out is a
 *             malloc-like block, so memcheck reports invalid accesses with
 *             the block's allocation and free stacks, double frees, reads
 *             of undefined bytes, and leaks.
 *
 * SLAB_TYPESAFE_BY_RCU objects stay open after a free: a reader in
 * rcu_read_lock() may look at one (the kernel's KASAN skips them too).
 * Under ASan, a cache with slub_debug flags is left out: those checks
 * write red zones and poison with memset, which ASan's interceptor checks.
 */
#include "slab/debug/slab_kasan.h"
#include "slab/debug/slab_debug.h"
#include "base/options.h"
#include "base/report.h"

#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define SLUB_HAVE_VALGRIND 1
#endif
#endif

/* ASan's run-time defines them when the program links it; else they are NULL. */
void __asan_poison_memory_region(void const volatile *addr, size_t size) __attribute__((weak));
void __asan_unpoison_memory_region(void const volatile *addr, size_t size) __attribute__((weak));
void __asan_set_error_report_callback(void (*callback)(const char *)) __attribute__((weak));
void *__asan_get_report_address(void) __attribute__((weak));

bool slab_kasan_asan, slab_kasan_valgrind;

/* libslub itself built with ASan (the fuzz targets): its own reads of free objects are checked. */
#if defined(__SANITIZE_ADDRESS__)
#define SLUB_ASAN_INSIDE 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SLUB_ASAN_INSIDE 1
#endif
#endif

/*
 * ASan calls a poisoned byte "use-after-poison" and knows no more: after
 * its report, say what the byte is to libslub, as KASAN's report does
 * (the object, its cache, freed or how much of it was asked for).  The
 * program dies next, so the unlocked walk of the freelist is safe enough.
 */
static __attribute__((unused)) void asan_describe(const char *report)
{
	(void)report;
	const void *p = __asan_get_report_address ? __asan_get_report_address() : NULL;
	uintptr_t start;
	struct slab *slab;
	struct kmem_cache *s = p ? object_slab(p, &slab, &start) : NULL;
	if (!s || !slab_kasan(s))
		return;
	uintptr_t object = start + ((uintptr_t)p - start) / s->size * s->size;
	unsigned long into = (unsigned long)((uintptr_t)p - object);
	if (slab_freelist_holds(s, slab, (void *)object)) {
		slub_report("KASAN: %#lx is %lu bytes into the freed %u-byte object at %#lx "
			    "of cache %s: a use after free", (unsigned long)p, into,
			    s->object_size, (unsigned long)object, s->name);
		return;
	}
	unsigned int size = get_orig_size(s, (void *)object);
	slub_report("KASAN: %#lx is %lu bytes past the end of the %u-byte object at %#lx "
		    "of cache %s (%u bytes asked for): an out-of-bounds access",
		    (unsigned long)p, into - size, s->object_size, (unsigned long)object, s->name,
		    size);
}

void slab_kasan_setup(void)
{
	if (!slub_opt(kasan))
		return;
#ifndef SLUB_ASAN_INSIDE
	if (__asan_poison_memory_region && __asan_unpoison_memory_region) {
		WRITE_ONCE(slab_kasan_asan, true);
		if (__asan_set_error_report_callback)
			__asan_set_error_report_callback(asan_describe);
		if (slub_opt_str(slub_debug)[0])
			slub_report("kasan: AddressSanitizer: caches slub_debug selects are not told "
				    "(its checks write where ASan has poisoned)");
		return;
	}
#endif
#ifdef SLUB_HAVE_VALGRIND
	/*
	 * memcheck only: it alone answers GET_VBITS (1 for an addressable
	 * word); callgrind, which counts our instructions, must see the
	 * fast paths.
	 */
	static uint64_t probe;
	uint64_t bits;
	if (RUNNING_ON_VALGRIND && VALGRIND_GET_VBITS(&probe, &bits, sizeof(probe)) == 1)
		WRITE_ONCE(slab_kasan_valgrind, true);	/* written only so: false needs no write */
#endif
}

slab_flags_t slab_kasan_flags(slab_flags_t flags)
{
	if (flags & __SLAB_NO_SHEAVES)
		return 0;	/* libslub's own caches (sheaves): never the program's objects */
	if (slab_kasan_valgrind)
		return __SLAB_KASAN;
	if (slab_kasan_asan && !(flags & SLAB_DEBUG_FLAGS))
		return __SLAB_KASAN;
	return 0;
}

void kasan_quiet(int delta)
{
#ifdef SLUB_HAVE_VALGRIND
	if (delta > 0)
		VALGRIND_DISABLE_ERROR_REPORTING;
	else
		VALGRIND_ENABLE_ERROR_REPORTING;
#else
	(void)delta;
#endif
}

static void asan_poison(const void *p, size_t bytes)
{
	__asan_poison_memory_region(p, bytes);
}

static void asan_unpoison(const void *p, size_t bytes)
{
	__asan_unpoison_memory_region(p, bytes);
}

/* Bytes of the object's slot from the object on: object, red zone, metadata. */
static size_t slot_after_object(const struct kmem_cache *s)
{
	return size_from_object(s);
}

/* Is a freed object of @s still the readers' to look at? */
static bool stays_open(const struct kmem_cache *s)
{
	return s->flags & SLAB_TYPESAFE_BY_RCU;
}

/* A whole slab's memory: off limits (@open false) or open to anyone. */
static void slab_memory(void *start, size_t bytes, bool open)
{
	if (slab_kasan_asan) {
		(open ? asan_unpoison : asan_poison)(start, bytes);
		return;
	}
#ifdef SLUB_HAVE_VALGRIND
	if (open)
		VALGRIND_MAKE_MEM_DEFINED(start, bytes);
	else
		VALGRIND_MAKE_MEM_NOACCESS(start, bytes);
#endif
}

void kasan_slab_new(struct kmem_cache *s, void *start, size_t bytes)
{
	(void)s;
	slab_memory(start, bytes, false);
}

void kasan_slab_gone(struct kmem_cache *s, void *start, size_t bytes)
{
	(void)s;
	slab_memory(start, bytes, true);
}

void kasan_alloc(struct kmem_cache *s, void *object, unsigned int size)
{
	if (slab_kasan_asan) {
		asan_unpoison(object, size);
		return;
	}
#ifdef SLUB_HAVE_VALGRIND
	/* A constructed object, or one RCU readers saw, holds defined bytes. */
	bool defined = s->ctor || stays_open(s);
	VALGRIND_MALLOCLIKE_BLOCK(object, size, 0, defined);
#else
	(void)s;
	(void)object;
	(void)size;
#endif
}

void kasan_free(struct kmem_cache *s, void *object, bool refused)
{
	if (slab_kasan_asan) {
		if (!refused && !stays_open(s))
			asan_poison(object, slot_after_object(s));
		return;
	}
#ifdef SLUB_HAVE_VALGRIND
	/* A refused double free too: memcheck names both frees' stacks. */
	VALGRIND_FREELIKE_BLOCK(object, 0);
	if (!refused && stays_open(s))
		VALGRIND_MAKE_MEM_DEFINED(object, s->object_size);
#else
	(void)s;
	(void)object;
	(void)refused;
#endif
}

void kasan_resize(struct kmem_cache *s, void *object, unsigned int old_size,
		  unsigned int new_size)
{
	if (slab_kasan_asan) {
		asan_poison(object, slot_after_object(s));
		asan_unpoison(object, new_size);
		return;
	}
#ifdef SLUB_HAVE_VALGRIND
	VALGRIND_RESIZEINPLACE_BLOCK(object, old_size, new_size, 0);
#else
	(void)s;
	(void)object;
	(void)old_size;
	(void)new_size;
#endif
}
