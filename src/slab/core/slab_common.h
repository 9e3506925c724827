/* SPDX-License-Identifier: MIT */
/*
 * slab_common.h - the cache layer above the SLUB engine: the list of caches,
 * creation and merging, start-up and fork of the slab layer, and the
 * figures and tables read from it.  The engine (slub.c) needs none of it.
 */
#ifndef SLUB_SLAB_COMMON_H
#define SLUB_SLAB_COMMON_H

#include "slab/core/slab.h"

/* Write the table of caches in use to @fd (cache_tables.c). */
__hidden void slab_write_cache_table(int fd);
/* Arm the table at exit if slub_exit_stats= asks for it (slab_init). */
__hidden void slab_stats_init(void);
/* Arm the validation at exit and the ERROR SUMMARY (slab_init; slab/debug/slab_exit.c). */
__hidden void slab_exit_init(void);
/* malloc-large's part of the validation at exit (a weak no-op in libslub.so). */
__hidden void slub_exit_validate_extents(void);

/* The cache layer (slab_common.c). */
/* Call @fn for every cache, under the cache list lock (fn may take cache locks). */
__hidden void slab_for_each_cache(void (*fn)(struct kmem_cache *s, void *arg), void *arg);
/* Start the slab layer once; false if it could not start. */
__hidden bool slab_ensure_init(void);
/* @max_order: slabs may be this big even above slub_max_order (0: the option only). */
__hidden struct kmem_cache *__kmem_cache_create(const char *name, unsigned int size,
						unsigned int align, slab_flags_t flags,
						void (*ctor)(void *), unsigned int max_order);

/* kmem_cache_destroy() of a size class the allocator made (malloc_classes.c). */
__hidden void slab_cache_put_own(struct kmem_cache *s);
/* Name a size-class cache: "kmalloc-96", "kmalloc-8k", "malloc-4608". */
__hidden void slab_cache_name(char *buf, size_t n, const char *prefix, unsigned int size);
__hidden unsigned long slab_validate_all(void);
/* kmalloc.c: the kmalloc caches, made by slab_init(). */
__hidden bool create_kmalloc_caches(void);
__hidden void kmalloc_fork_lock(bool lock);
__hidden void kmalloc_fork_child(void);

/* Merging and names (slab_merge.c); the cache list lock is held. */
__hidden bool slab_unmergeable(const struct kmem_cache *s);
__hidden struct kmem_cache *find_mergeable(unsigned int size, unsigned int align,
					   slab_flags_t flags, void (*ctor)(void *),
					   unsigned int max_order);
__hidden void slab_set_id(struct kmem_cache *s);
__hidden bool slab_answers_to(const struct kmem_cache *s, const char *name);
__hidden void slab_alias_add(struct kmem_cache *s, struct slab_alias **spare, const char *name);
__hidden void slab_aliases_free(struct kmem_cache *s);
/* This thread is inside slub_for_each_cache(), holding slab_caches_lock. */
extern __hidden __thread bool slab_in_cache_walk __attribute__((tls_model("initial-exec")));
/* The cache list (slab_common.c): walk it under slab_caches_lock. */
extern __hidden struct list_head slab_caches;
extern __hidden pthread_mutex_t slab_caches_lock;

#endif
