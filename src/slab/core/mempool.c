// SPDX-License-Identifier: MIT
/*
 * mempool.c - the kernel's mempool_t (mm/mempool.c): a reserve of
 * elements that mempool_alloc() hands out when the allocator fails, and
 * that mempool_free() refills before anything goes back.  A caller that may
 * sleep (__GFP_DIRECT_RECLAIM) never gets NULL: it waits on the pool's
 * condition variable for the next mempool_free(), re-trying the allocator
 * every 5 seconds meanwhile, as the kernel's io_schedule_timeout(5*HZ).
 * The pool functions of the slab, kmalloc and page pools are here too.
 */
#define _GNU_SOURCE
#include "slab/core/slab.h"

#include <errno.h>
#include <string.h>
#include <time.h>

#include "base/report.h"

static void add_element(mempool_t *pool, void *element)
{
	pool->elements[pool->curr_nr++] = element;
}

static void *remove_element(mempool_t *pool)
{
	return pool->elements[--pool->curr_nr];
}

/* The bytes of an element of the pools whose functions are ours; 0 if unknown. */
static size_t element_size(mempool_t *pool, void *element, void **start)
{
	*start = element;
	if (pool->alloc == mempool_alloc_slab)
		return kmem_cache_size(pool->pool_data);
	if (pool->alloc == mempool_kmalloc)
		return (size_t)pool->pool_data;
	if (pool->alloc == mempool_alloc_pages) {
		*start = page_address(element);
		return PAGE_SIZE << (long)pool->pool_data;
	}
	return 0;
}

int mempool_init(mempool_t *pool, int min_nr, mempool_alloc_t *alloc_fn, mempool_free_t *free_fn,
		 void *pool_data)
{
	if (!pool || min_nr < 0 || !alloc_fn || !free_fn) {
		slub_report("mempool_init: %s; refused", !pool ? "no pool" : min_nr < 0 ?
			    "negative min_nr" : "no alloc or free function");
		return -EINVAL;
	}
	memset(pool, 0, sizeof(*pool));
	pthread_mutex_init(&pool->lock, NULL);
	pthread_cond_init(&pool->wait, NULL);
	pool->min_nr = min_nr;
	pool->pool_data = pool_data;
	pool->alloc = alloc_fn;
	pool->free = free_fn;
	pool->elements = kmalloc_array(min_nr ? (size_t)min_nr : 1, sizeof(void *), GFP_KERNEL);
	if (!pool->elements)
		return -ENOMEM;
	while (pool->curr_nr < pool->min_nr) {
		void *element = pool->alloc(GFP_KERNEL, pool->pool_data);
		if (!element) {
			mempool_exit(pool);
			return -ENOMEM;
		}
		add_element(pool, element);
	}
	return 0;
}

bool mempool_initialized(mempool_t *pool)
{
	return pool && pool->elements;
}

void mempool_exit(mempool_t *pool)
{
	if (!mempool_initialized(pool))
		return;
	while (pool->curr_nr)
		pool->free(remove_element(pool), pool->pool_data);
	kfree(pool->elements);
	pool->elements = NULL;
	pthread_cond_destroy(&pool->wait);
	pthread_mutex_destroy(&pool->lock);
}

mempool_t *mempool_create_node(int min_nr, mempool_alloc_t *alloc_fn, mempool_free_t *free_fn,
			       void *pool_data, gfp_t gfp, int nid)
{
	mempool_t *pool = kmalloc_node(sizeof(*pool), gfp | __GFP_ZERO, nid);
	if (!pool)
		return NULL;
	if (mempool_init(pool, min_nr, alloc_fn, free_fn, pool_data)) {
		kfree(pool);
		return NULL;
	}
	return pool;
}

mempool_t *mempool_create(int min_nr, mempool_alloc_t *alloc_fn, mempool_free_t *free_fn,
			  void *pool_data)
{
	return mempool_create_node(min_nr, alloc_fn, free_fn, pool_data, GFP_KERNEL, NUMA_NO_NODE);
}

void mempool_destroy(mempool_t *pool)
{
	if (!pool)
		return;
	mempool_exit(pool);
	kfree(pool);
}

int mempool_resize(mempool_t *pool, int new_min_nr)
{
	if (!mempool_initialized(pool) || new_min_nr <= 0) {
		slub_report("mempool_resize(%d): %s; refused", new_min_nr,
			    new_min_nr <= 0 ? "the reserve must hold one element at least" :
			    "not an initialized pool");
		return -EINVAL;
	}
	pthread_mutex_lock(&pool->lock);
	if (new_min_nr <= pool->min_nr) {
		while (new_min_nr < pool->curr_nr) {
			void *element = remove_element(pool);
			pthread_mutex_unlock(&pool->lock);
			pool->free(element, pool->pool_data);
			pthread_mutex_lock(&pool->lock);
		}
		pool->min_nr = new_min_nr;
		pthread_mutex_unlock(&pool->lock);
		return 0;
	}
	pthread_mutex_unlock(&pool->lock);
	void **grown = kmalloc_array((size_t)new_min_nr, sizeof(void *), GFP_KERNEL);
	if (!grown)
		return -ENOMEM;
	pthread_mutex_lock(&pool->lock);
	if (new_min_nr <= pool->min_nr) {	/* shrunk meanwhile: start again */
		pthread_mutex_unlock(&pool->lock);
		kfree(grown);
		return mempool_resize(pool, new_min_nr);
	}
	memcpy(grown, pool->elements, (size_t)pool->curr_nr * sizeof(void *));
	void **old = pool->elements;
	pool->elements = grown;
	pool->min_nr = new_min_nr;
	pthread_mutex_unlock(&pool->lock);
	kfree(old);
	/* Fill what the allocator gives now; a shortfall is made up by mempool_free(). */
	for (;;) {
		void *element = pool->alloc(GFP_KERNEL, pool->pool_data);
		if (!element)
			return 0;
		pthread_mutex_lock(&pool->lock);
		bool room = pool->curr_nr < pool->min_nr;
		if (room)
			add_element(pool, element);
		pthread_mutex_unlock(&pool->lock);
		if (!room) {
			pool->free(element, pool->pool_data);
			return 0;
		}
	}
}

/* A reserved element, zeroed if asked and known how: the caller holds pool->lock. */
static void *take_reserved(mempool_t *pool, gfp_t gfp)
{
	void *element = remove_element(pool), *start;
	size_t bytes = element_size(pool, element, &start);
	if ((gfp & __GFP_ZERO) && bytes)
		memset(start, 0, bytes);
	return element;
}

void *mempool_alloc(mempool_t *pool, gfp_t gfp)
{
	if (!mempool_initialized(pool)) {
		slub_report("mempool_alloc(%p): not an initialized pool", (void *)pool);
		return NULL;
	}
	/* The reserve is the guarantee: the allocator is asked once, quietly. */
	gfp = (gfp | __GFP_NOMEMALLOC | __GFP_NORETRY | __GFP_NOWARN) & ~__GFP_NOFAIL;
	gfp_t first = gfp & ~(__GFP_DIRECT_RECLAIM | __GFP_IO);
	for (;;) {
		void *element = pool->alloc(first, pool->pool_data);
		if (element)
			return element;
		pthread_mutex_lock(&pool->lock);
		if (pool->curr_nr) {
			element = take_reserved(pool, gfp);
			pthread_mutex_unlock(&pool->lock);
			return element;
		}
		if (first != gfp) {
			pthread_mutex_unlock(&pool->lock);
			first = gfp;	/* once more, as the kernel: now allowed to reclaim */
			continue;
		}
		if (!(gfp & __GFP_DIRECT_RECLAIM)) {
			pthread_mutex_unlock(&pool->lock);
			return NULL;
		}
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += 5;
		pool->waiting++;
		pthread_cond_timedwait(&pool->wait, &pool->lock, &until);
		pool->waiting--;
		if (pool->curr_nr) {
			element = take_reserved(pool, gfp);
			pthread_mutex_unlock(&pool->lock);
			return element;
		}
		pthread_mutex_unlock(&pool->lock);
	}
}

void *mempool_alloc_preallocated(mempool_t *pool)
{
	void *element = NULL;
	if (!mempool_initialized(pool))
		return NULL;
	pthread_mutex_lock(&pool->lock);
	if (pool->curr_nr)
		element = remove_element(pool);
	pthread_mutex_unlock(&pool->lock);
	return element;
}

void mempool_free(void *element, mempool_t *pool)
{
	if (!element)
		return;
	if (!mempool_initialized(pool)) {
		slub_report("mempool_free(%p, %p): not an initialized pool; the element is leaked",
			    element, (void *)pool);
		return;
	}
	/* Refill the reserve first; with none, still hand it to a waiter (the kernel's min_nr 0 case). */
	pthread_mutex_lock(&pool->lock);
	if (pool->curr_nr < pool->min_nr ||
	    (!pool->min_nr && !pool->curr_nr && pool->waiting)) {	/* elements has room for one */
		add_element(pool, element);
		pthread_cond_signal(&pool->wait);
		pthread_mutex_unlock(&pool->lock);
		return;
	}
	pthread_mutex_unlock(&pool->lock);
	pool->free(element, pool->pool_data);
}

void *mempool_alloc_slab(gfp_t gfp, void *pool_data)
{
	return kmem_cache_alloc(pool_data, gfp);
}

void mempool_free_slab(void *element, void *pool_data)
{
	kmem_cache_free(pool_data, element);
}

void *mempool_kmalloc(gfp_t gfp, void *pool_data)
{
	return kmalloc((size_t)pool_data, gfp);
}

void mempool_kfree(void *element, void *pool_data)
{
	(void)pool_data;
	kfree(element);
}

void *mempool_alloc_pages(gfp_t gfp, void *pool_data)
{
	return alloc_pages(gfp, (unsigned int)(long)pool_data);
}

void mempool_free_pages(void *element, void *pool_data)
{
	__free_pages(element, (unsigned int)(long)pool_data);
}
