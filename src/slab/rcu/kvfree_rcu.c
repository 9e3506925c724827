// SPDX-License-Identifier: MIT
/*
 * kvfree_rcu.c - what waits for an RCU grace period before it is freed:
 *
 *   kfree_rcu(), kvfree_rcu() and their one-argument forms
 *       (kvfree_call_rcu): the pointer goes into a page of pointers, one of
 *       a few shards (by CPU), as the kernel's kfree_rcu batches do; a
 *       full page takes one call_rcu() for its ~500 objects.  A page not
 *       yet full is closed by the shard's monitor, a call_rcu() of its own
 *       made when the page got its first pointer: when it runs, a grace
 *       period later, it hands the page to call_rcu(), and every pointer in
 *       it, however late it came, waits a whole grace period more.  So the
 *       worker thread of liburcu is the kernel's monitor work, and a flood
 *       costs two call_rcu() a page.  With no page to be had: the object's
 *       own rcu_head goes to call_rcu(); without one (the mightsleep form)
 *       synchronize_rcu() and free here, as the kernel does.
 *   SLAB_TYPESAFE_BY_RCU slabs (slab_rcu_free_slab): discard_slab() has
 *       taken the slab off its cache; its pages wait, mapped and untouched,
 *       for a grace period before the page allocator has them back.  The
 *       rcu_head is the slab's link table entry (slab.h), the cache waits in
 *       its freelist word.  Objects are reused at once, never deferred.
 *   A poisoning debug cache's frees, if SLAB_TYPESAFE_BY_RCU: the whole
 *       debug free (checks, poison, freelist) runs after a grace period,
 *       as the kernel's CONFIG_SLUB_RCU_DEBUG, so readers never see poison.
 *       Such records carry bit 0 set in the batch.
 *
 * Each cache counts its objects and slabs waiting (the rcu_pending_objects
 * and rcu_pending_slabs attributes); kmem_cache_destroy() waits for them
 * (slab_rcu_cache_quiesce, slab_rcu_cache_release).
 */
#define _GNU_SOURCE
#include "slab/rcu/rcu.h"
#include "slab/core/kmalloc.h"
#include "slab/core/slab.h"
#include "slab/debug/slab_debug.h"

#include <pthread.h>
#include <string.h>

#include "base/report.h"

#ifdef SLAB_RCU_TSAN
char slab_rcu_tsan_token;
#endif

/* One page of pointers waiting for the same grace period. */
struct kvfree_batch {
	struct rcu_head rcu;
	unsigned long nr;
	void *records[];
};
#define KVFREE_BATCH_MAX ((PAGE_SIZE - offsetof(struct kvfree_batch, records)) / sizeof(void *))
#define RECORD_DEBUG_FREE 1UL	/* bit 0 of a record: a debug free, not a kvfree */

#define KRC_SHARDS 16

/* A shard: the page being filled, and whether its monitor is queued. */
struct krc {
	pthread_mutex_t lock;
	struct kvfree_batch *open;	/* NULL until the next pointer */
	bool monitor_queued;		/* monitor is with call_rcu() */
	struct rcu_head monitor;	/* closes the open page a grace period on */
} __attribute__((aligned(64)));

static struct krc krcs[KRC_SHARDS] = {
	[0 ... KRC_SHARDS - 1] = { .lock = PTHREAD_MUTEX_INITIALIZER },
};

/* Every record queued and not yet freed, whatever its cache (kvfree_rcu_barrier). */
static unsigned long kvfree_pending;

static struct kvfree_batch *batch_new(void)
{
	/* GFP_NOWAIT: kfree_rcu may be called anywhere; without a page, the fallbacks. */
	unsigned long addr = __get_free_page(GFP_NOWAIT | __GFP_NOWARN);
	struct kvfree_batch *b = (struct kvfree_batch *)addr;
	if (b)
		b->nr = 0;
	return b;
}

/* Free one record whose grace period is over, then uncount it. */
static void free_record(void *record)
{
	void *p = (void *)((uintptr_t)record & ~RECORD_DEBUG_FREE);
	struct kmem_cache *s;
	kmalloc_block_start(p, &s);
	if (((uintptr_t)record & RECORD_DEBUG_FREE) && s) {
		uintptr_t start = 0;
		struct slab *slab = NULL;
		if (object_slab(p, &slab, &start) == s)
			debug_slab_free(s, slab, p);
	} else {
		kvfree(p);
	}
	/* Last: a destroy that sees the count drop may free the cache. */
	if (s)
		__atomic_sub_fetch(&s->rcu_pending_objects, 1, __ATOMIC_RELEASE);
	__atomic_sub_fetch(&kvfree_pending, 1, __ATOMIC_RELEASE);
}

static void batch_free(struct rcu_head *head)
{
	struct kvfree_batch *b = container_of(head, struct kvfree_batch, rcu);
	rcu_tsan_callback(head);
	for (unsigned long i = 0; i < b->nr; i++)
		free_record(b->records[i]);
	free_page((unsigned long)b);
}

/* The monitor, a grace period after the open page got its first pointer. */
static void monitor_fire(struct rcu_head *head)
{
	struct krc *krc = container_of(head, struct krc, monitor);
	rcu_tsan_callback(head);
	pthread_mutex_lock(&krc->lock);
	struct kvfree_batch *b = krc->open;
	krc->open = NULL;
	krc->monitor_queued = false;
	pthread_mutex_unlock(&krc->lock);
	if (b)
		slab_call_rcu(&b->rcu, batch_free);
}

/* Into this CPU's shard's page: false if there is no page to be had. */
static bool enqueue(void *record)
{
	struct krc *krc = &krcs[os_current_cpu() % KRC_SHARDS];
	struct kvfree_batch *full = NULL;
	bool monitor = false, queued = false;

	pthread_mutex_lock(&krc->lock);
	if (!krc->open)
		krc->open = batch_new();
	struct kvfree_batch *b = krc->open;
	if (b) {
		b->records[b->nr++] = record;
		queued = true;
		if (b->nr == KVFREE_BATCH_MAX) {
			full = b;
			krc->open = NULL;
		} else if (!krc->monitor_queued) {
			krc->monitor_queued = monitor = true;
		}
	}
	pthread_mutex_unlock(&krc->lock);
	if (full)
		slab_call_rcu(&full->rcu, batch_free);
	if (monitor)
		slab_call_rcu(&krc->monitor, monitor_fire);
	return queued;
}

/* No page was to be had: the object's own rcu_head carries it. */
static void free_by_head(struct rcu_head *head)
{
	struct kmem_cache *s;
	rcu_tsan_callback(head);
	free_record(kmalloc_block_start(head, &s));
}

static void count_pending(struct kmem_cache *s)
{
	if (s)
		__atomic_add_fetch(&s->rcu_pending_objects, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&kvfree_pending, 1, __ATOMIC_RELAXED);
}

void kvfree_call_rcu(struct rcu_head *head, void *ptr)
{
	if (ZERO_OR_NULL_PTR(ptr))
		return;		/* as kfree(): nothing to free */
	struct kmem_cache *s;
	void *start = kmalloc_block_start(ptr, &s);
	if (start != ptr) {
		slub_report("kvfree_call_rcu: invalid pointer %p (%s); ignored", ptr,
			    start ? "inside a block, not its start" : "not a block libslub handed out");
		return;
	}
	if (head && ((uintptr_t)head < (uintptr_t)ptr ||
		     (s && (uintptr_t)head + sizeof(*head) > (uintptr_t)ptr + s->object_size))) {
		slub_report("kvfree_call_rcu: rcu_head %p is not inside the object at %p; ignored",
			    (void *)head, ptr);
		return;
	}
	if (!slab_rcu_load()) {
		slub_report("kvfree_call_rcu(%p): liburcu is missing, so no grace period can be "
			    "waited for; the block is not freed", ptr);
		return;
	}
	count_pending(s);
	if (enqueue(ptr))
		return;
	if (head) {
		slab_call_rcu(head, free_by_head);
		return;
	}
	/* kvfree_rcu_mightsleep() with no page: wait here, as the kernel does. */
	slab_synchronize_rcu();
	free_record(ptr);
}

bool slab_rcu_defer_debug_free(struct kmem_cache *s, void *object)
{
	if (!slab_rcu_loaded())
		return false;
	count_pending(s);
	if (enqueue((void *)((uintptr_t)object | RECORD_DEBUG_FREE)))
		return true;
	__atomic_sub_fetch(&s->rcu_pending_objects, 1, __ATOMIC_RELAXED);
	__atomic_sub_fetch(&kvfree_pending, 1, __ATOMIC_RELAXED);
	return false;
}

/* Hand every open page to call_rcu() now. */
static void close_open_batches(void)
{
	for (int i = 0; i < KRC_SHARDS; i++) {
		struct krc *krc = &krcs[i];
		pthread_mutex_lock(&krc->lock);
		struct kvfree_batch *b = krc->open;
		krc->open = NULL;
		pthread_mutex_unlock(&krc->lock);
		if (b)
			slab_call_rcu(&b->rcu, batch_free);
	}
}

/*
 * rcu_barrier() waits for the callbacks queued before it; a monitor that
 * was running meanwhile may queue its page just after.  So again, while
 * anything is pending, a few rounds at most (new kfree_rcu calls from
 * other threads are not what this waits for).
 */
void kvfree_rcu_barrier(void)
{
	if (!slab_rcu_loaded())
		return;		/* nothing was ever queued */
	for (int round = 0; round < 8; round++) {
		close_open_batches();
		slab_rcu_barrier();
		if (!__atomic_load_n(&kvfree_pending, __ATOMIC_ACQUIRE))
			return;
	}
}

static void free_slab_rcu(struct rcu_head *head)
{
	/* The rcu_head is the slab's link table entry (slab.h), off every list now. */
	struct slab *slab = lru_slab(&container_of(head, struct slab_link, rcu_head)->lru);
	rcu_tsan_callback(head);
	struct kmem_cache *s = slab->freelist;
	unsigned int order = slab->order;
	slab->freelist = NULL;
	memset(head, 0, sizeof(*head));
	__free_pages(slab_page(slab), order);
	__atomic_sub_fetch(&s->rcu_pending_slabs, 1, __ATOMIC_RELEASE);
}

void slab_rcu_free_slab(struct kmem_cache *s, struct slab *slab)
{
	__atomic_add_fetch(&s->rcu_pending_slabs, 1, __ATOMIC_RELAXED);
	slab->freelist = s;
	slab_call_rcu(&slab_link(slab)->rcu_head, free_slab_rcu);
}

/*
 * Before the last reference goes: kfree_rcu'd objects of @s freed
 * (kvfree_rcu_barrier), and, as the kernel's kmem_cache_destroy() does for
 * SLAB_TYPESAFE_BY_RCU, callbacks queued so far run (rcu_barrier) — the
 * program's own call_rcu() frees into @s among them when it has objects.
 */
void slab_rcu_cache_quiesce(struct kmem_cache *s)
{
	if (!slab_rcu_loaded())
		return;
	if (__atomic_load_n(&s->rcu_pending_objects, __ATOMIC_ACQUIRE))
		kvfree_rcu_barrier();
	if ((s->flags & SLAB_TYPESAFE_BY_RCU) || slab_nr_slabs(s))
		slab_rcu_barrier();
}

/*
 * rcu_barrier() returns at once in liburcu's worker (a destroy from inside
 * an RCU callback): after a few rounds the descriptor is kept, not freed
 * under callbacks that still name it.
 */
bool slab_rcu_cache_release(struct kmem_cache *s)
{
	for (int round = 0; round < 16; round++) {
		if (!__atomic_load_n(&s->rcu_pending_slabs, __ATOMIC_ACQUIRE))
			return true;
		slab_rcu_barrier();
	}
	if (!__atomic_load_n(&s->rcu_pending_slabs, __ATOMIC_ACQUIRE))
		return true;
	slub_report("kmem_cache_destroy(%s): slabs still wait for a grace period (called from an "
		    "RCU callback?); the cache's descriptor is kept", s->name);
	return false;
}

void krc_fork_lock(bool lock)
{
	for (int i = 0; i < KRC_SHARDS; i++)
		os_mutex_hold(&krcs[i].lock, lock);
}

void krc_fork_child(void)
{
	for (int i = 0; i < KRC_SHARDS; i++)
		pthread_mutex_init(&krcs[i].lock, NULL);
}
