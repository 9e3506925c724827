/* SPDX-License-Identifier: MIT */
/*
 * malloc_classes.h - the malloc library's size classes.
 *
 * Finer than the kernel's kmalloc classes: steps of 16 bytes up to 128,
 * four classes per doubling to 1024 (160, 192, 224, 256, 320, ...), eight
 * per doubling to 2048 (1152, 1280, ...), then what a slab divides into,
 * eight per doubling (2176, 2336, ... 4096, 4368, ... 7280, 8192).
 * Power-of-two kmalloc classes waste a quarter of the memory on evenly
 * spread sizes, and some programs ask for one size a lot (sqlite's page
 * cache entries are just over 4 KiB: kmalloc-8k would double them).
 * Up to 4 KiB a process starts with the kmalloc classes only and splits
 * each into the finer ones under it once it holds more than slub_malloc_split pages
 * (a class costs a slab page however few objects it has).
 * The classes are in malloc_classes.c.  Each
 * class is an ordinary SLUB cache; where a kmalloc cache has the class's
 * size, it is that cache, so kmalloc and malloc share it.  Every class from
 * 16 bytes is a multiple of 16, and the power-of-two classes the memalign
 * family relies on are all there.
 */
#ifndef SLUB_MALLOC_CLASSES_H
#define SLUB_MALLOC_CLASSES_H

#include "slab/core/kmalloc.h"

#define MALLOC_MAX_CLASS_SIZE KMALLOC_MAX_CACHE_SIZE
#define NR_MALLOC_CLASSES 48

/* Class index by (size - 1) / 8, for 1 <= size <= 8 KiB; 0 until the first small malloc. */
extern __hidden uint8_t malloc_class_index[MALLOC_MAX_CLASS_SIZE / 8];
/* Cache per class index, NULL until the class's first allocation; [0] stays NULL. */
extern __hidden struct kmem_cache *malloc_class_cache[NR_MALLOC_CLASSES];

static inline struct kmem_cache *malloc_cache_fast(size_t size)
{
	unsigned int index = __atomic_load_n(&malloc_class_index[(size - 1) / 8], __ATOMIC_RELAXED);
	return __atomic_load_n(&malloc_class_cache[index], __ATOMIC_ACQUIRE);
}

/* The cache for @size (1 .. 8 KiB), made at its first use; NULL: no memory. */
__hidden struct kmem_cache *malloc_class_make(size_t size);

#endif
