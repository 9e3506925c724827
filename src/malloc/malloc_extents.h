/* SPDX-License-Identifier: MIT */
/*
 * malloc_extents.h - malloc's blocks above 8 KiB (malloc_extents.c).
 */
#ifndef SLUB_MALLOC_EXTENTS_H
#define SLUB_MALLOC_EXTENTS_H

#include "slab/slab.h"

/* @size bytes of whole pages aligned to @align (0 or a power of two); NULL + ENOMEM. */
__hidden void *extent_alloc(size_t size, size_t align, gfp_t gfp);
/* Free @p if it is an extent's start (true); false: not an extent. */
__hidden bool extent_free(void *p);
/* The bytes of the extent that starts at @p, or 0 if @p is none. */
__hidden size_t extent_usable_size(const void *p);
/*
 * Resize the extent at @p to @size bytes where it lies, or, growing one
 * with a mapping of its own past its slots, by moving its pages (mremap),
 * not its bytes.  The address (@p or the new one), or NULL: the caller copies.
 */
__hidden void *extent_resize(void *p, size_t size);
/* Unmap the cached mappings (malloc_trim). */
__hidden void extent_cache_drain(void);

#endif
