/* SPDX-License-Identifier: MIT */
/*
 * malloc_debug.h - slub_debug for malloc's blocks above the slab sizes
 * (malloc_debug.c): the pseudo-cache "malloc-large".
 */
#ifndef SLUB_MALLOC_DEBUG_H
#define SLUB_MALLOC_DEBUG_H

#include "slab/core/slab.h"

/* The slub_debug flags of malloc-large: F Z P U (SLAB_*), 0 for none. */
#define EXTENT_DEBUG_UNSET (~0u)
extern __hidden unsigned int extent_debug_flags_value;
__hidden unsigned int extent_debug_flags_slow(void);

static inline unsigned int extent_debug_flags(void)
{
	unsigned int f = __atomic_load_n(&extent_debug_flags_value, __ATOMIC_RELAXED);
	return likely(f != EXTENT_DEBUG_UNSET) ? f : extent_debug_flags_slow();
}

/* @size bytes behind a header, red zones around them; align at most a page. */
__hidden void *debug_extent_alloc(size_t size, size_t align, gfp_t gfp);
/* Checked and freed, or a double free reported: true; false: no debug extent. */
__hidden bool debug_extent_free(void *p, const char *caller);
/* The size asked for a live debug extent at @p, else 0. */
__hidden size_t debug_extent_size(const void *p);
/*
 * realloc of a debug extent: always moved (after its checks), so that the
 * red zone follows the new size; false: @p is no debug extent.
 */
__hidden bool debug_extent_realloc(void *p, size_t size, void **moved);

#endif
