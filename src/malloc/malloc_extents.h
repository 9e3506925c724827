/* SPDX-License-Identifier: MIT */
/*
 * malloc_extents.h - malloc's blocks above 8 KiB (malloc_extents.c).
 */
#ifndef SLUB_MALLOC_EXTENTS_H
#define SLUB_MALLOC_EXTENTS_H

#include "slab/core/slab.h"

/* @size bytes of whole pages aligned to @align (0 or a power of two); NULL + ENOMEM. */
__hidden void *extent_alloc(size_t size, size_t align, gfp_t gfp);
/*
 * Free @p if it is an extent's start (true); true also after reporting a
 * double free of one (@caller names the call); false: not an extent.
 */
__hidden bool extent_free(void *p, const char *caller);
/* The same without the debug layer: the extent's pages (malloc_debug.c). */
__hidden void *extent_alloc_pages(size_t size, size_t align, gfp_t gfp);
__hidden bool extent_free_pages(void *p);
__hidden size_t extent_bytes(const void *p);
/* Remember a freed extent's pointer; was @p among the last ones freed? */
__hidden void extent_note_free(const void *p);
__hidden bool extent_freed_recently(const void *p);
/* @p is no block but one of the last extents freed: report a double free (true). */
__hidden bool extent_report_freed(const void *p, const char *caller);
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
