/* SPDX-License-Identifier: MIT */
/*
 * slab_kasan.h - KASAN's model at run time: when the program carries
 * AddressSanitizer's interface or runs under valgrind, every cache's
 * objects are told to that tool as they move (slab_kasan.c), so it reports
 * a use of a freed object, an overflow into the red zone after an object
 * and a kmalloc access past the size asked for, with its own stacks.
 *
 * Such a cache has __SLAB_KASAN: a red zone after each object, the free
 * pointer outside it, the size asked for kept (kmalloc caches), and it
 * takes the debug paths, where the hooks below run.  The fast paths never
 * see it; a program with neither tool pays nothing.
 */
#ifndef SLUB_SLAB_KASAN_H
#define SLUB_SLAB_KASAN_H

#include "slab/core/slab.h"

/* Which tool is told; both false when KASAN is off (the default without one). */
extern bool slab_kasan_asan, slab_kasan_valgrind;

/* Read the option and look for the tools: once, before the first cache. */
__hidden void slab_kasan_setup(void);

/* The flag a new cache with @flags gets, or 0 (set by create_cache). */
__hidden slab_flags_t slab_kasan_flags(slab_flags_t flags);

/* The red zone after an object of @object_size: the kernel's widths. */
static inline unsigned int kasan_redzone(unsigned int object_size)
{
	static const unsigned int limit[] = { 64, 128, 512, 4096, 16384, 32768, 65536 };
	static const unsigned int width[] = { 16, 32, 64, 128, 256, 512, 1024 };
	for (unsigned int i = 0; i < sizeof(width) / sizeof(width[0]); i++)
		if (object_size <= limit[i] - width[i])
			return width[i];
	return 2048;
}

/* The flag never changes; the other flags may (a debug switch): READ_ONCE. */
static inline bool slab_kasan(const struct kmem_cache *s)
{
	return unlikely(READ_ONCE(s->flags) & __SLAB_KASAN);
}

/*
 * libslub's own reads and writes of objects the tool was told are off
 * limits (free pointers, red zones, tracks): valgrind checks our code too,
 * so its errors are off for the thread between begin and end.  Nests.
 */
__hidden void kasan_quiet(int delta);
/* data_race(): the agent's thread may read before start-up has set it (from false). */
static inline void kasan_quiet_begin(void)
{
	if (unlikely(data_race(slab_kasan_valgrind)))
		kasan_quiet(1);
}
static inline void kasan_quiet_end(void)
{
	if (unlikely(data_race(slab_kasan_valgrind)))
		kasan_quiet(-1);
}

/* A new slab of @s, built: all of it off limits until an object is handed out. */
__hidden void kasan_slab_new(struct kmem_cache *s, void *start, size_t bytes);
/* A slab's memory about to go back to the page allocator: open again. */
__hidden void kasan_slab_gone(struct kmem_cache *s, void *start, size_t bytes);
/* @object handed out, @size bytes of it the caller's. */
__hidden void kasan_alloc(struct kmem_cache *s, void *object, unsigned int size);
/* @object given back (or, @refused, a double free libslub refused). */
__hidden void kasan_free(struct kmem_cache *s, void *object, bool refused);
/* An object in use now @new_size bytes (krealloc in place, ksize), from @old_size. */
__hidden void kasan_resize(struct kmem_cache *s, void *object, unsigned int old_size,
			   unsigned int new_size);

#endif
