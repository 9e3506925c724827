// SPDX-License-Identifier: MIT
/*
 * test_rcu.c - RCU on liburcu (src/slab/rcu/): SLAB_TYPESAFE_BY_RCU and
 * kfree_rcu under readers, their batching, kmem_cache_destroy()'s
 * barrier, debug poisoning after the grace period, the attributes that
 * show what waits, fork, and bad input.
 *
 * The reader/writer cases: reader threads under rcu_read_lock() walk a
 * lock-free hash whose nodes writers unlink and free, while a third kind
 * of thread shrinks the cache and churns other caches and the page
 * allocator, so that pages returned early would be reused (or given back
 * to the OS, reading zero) at once.  A node a reader reaches must always
 * be a node (its magic), and its key and value must agree when the key
 * reads the same before and after the value (the re-check kernel code
 * makes).  Under kfree_rcu nothing may change at all while the reader
 * holds it.  An early grace period, a slab freed without one, or an
 * object poisoned too soon breaks one of these within a run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "slab/core/slab.h"
#include "slab/rcu/rcu.h"

#define MAGIC 0x5ab1e5afe0000000UL
#define PATTERN 0x0123456789abcdefUL
#define BUCKETS 64
#define KEYS 1024
#define READERS 6
#define WRITERS 2

/* Readers' and writers' view of one node: every field read by readers is atomic. */
struct node {
	unsigned long key;
	unsigned long value;		/* value_of(key) once published */
	struct node *next;
	unsigned long magic;		/* typesafe: set by the constructor, never changed */
	struct rcu_head rcu;
	unsigned long pattern[3];	/* kfree_rcu: set at insert, never changed until freed */
};

static unsigned long value_of(unsigned long key)
{
	return key * 2654435761UL ^ 0x77;
}

static struct node *buckets[BUCKETS];
static pthread_mutex_t bucket_lock[BUCKETS];
static bool present[KEYS];
static struct kmem_cache *node_cache;	/* NULL: the kfree_rcu variant, on kmalloc */
static atomic_bool stop;
static atomic_ulong broken_magic, broken_value, broken_pattern, lookups, found, rechecked;

static void reader_lock(void)
{
	rcu_read_lock();
}

static void reader_unlock(void)
{
#ifdef SLAB_RCU_TSAN
	/*
	 * rcu.h: what a grace period waited for.  Before the unlock: after it,
	 * the grace period may end and a callback acquire before this release.
	 */
	__tsan_release(&slab_rcu_tsan_token);
#endif
	rcu_read_unlock();
}

static void thread_online(void)
{
#if !defined(SLUB_RCU_FLAVOR_BP)
	rcu_register_thread();
#endif
}

static void thread_offline(void)
{
#if !defined(SLUB_RCU_FLAVOR_BP)
	rcu_unregister_thread();
#endif
}

static void quiescent(void)
{
#if defined(SLUB_RCU_FLAVOR_QSBR)
	rcu_quiescent_state();
#endif
}

/*
 * Atomic stores, as kernel code writes what lockless readers read: a
 * reader may reach an object of a new slab that another thread published,
 * and TSan sees the allocator's hand-off of the slab's objects between
 * threads as no ordering with this constructor's writes.
 */
static void node_ctor(void *p)
{
	struct node *n = p;
	__atomic_store_n(&n->key, ~0UL, __ATOMIC_RELAXED);
	__atomic_store_n(&n->value, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&n->next, NULL, __ATOMIC_RELAXED);
	__atomic_store_n(&n->magic, MAGIC, __ATOMIC_RELAXED);
}

/* Walk @key's bucket once; true if done (found or surely absent). */
static void lookup(unsigned long key, unsigned int *seed)
{
	struct node *n = __atomic_load_n(&buckets[key % BUCKETS], __ATOMIC_ACQUIRE);
	(void)seed;
	atomic_fetch_add_explicit(&lookups, 1, memory_order_relaxed);
	for (int steps = 0; n && steps < 4 * KEYS; steps++) {
		for (volatile int i = 0; i < 20; i++)
			;
		if (__atomic_load_n(&n->magic, __ATOMIC_RELAXED) != MAGIC)
			atomic_fetch_add_explicit(&broken_magic, 1, memory_order_relaxed);
		unsigned long k1 = __atomic_load_n(&n->key, __ATOMIC_ACQUIRE);
		if (k1 == key) {
			/* Linger, so that a slab freed too early is reused under us. */
			for (volatile int i = 0; i < 200; i++)
				;
			if (__atomic_load_n(&n->magic, __ATOMIC_RELAXED) != MAGIC)
				atomic_fetch_add_explicit(&broken_magic, 1, memory_order_relaxed);
			unsigned long v = __atomic_load_n(&n->value, __ATOMIC_ACQUIRE);
			unsigned long k2 = __atomic_load_n(&n->key, __ATOMIC_ACQUIRE);
			if (!node_cache) {
				/* kfree_rcu: nothing changes under a reader. */
				if (k2 != k1 || v != value_of(key))
					atomic_fetch_add_explicit(&broken_value, 1, memory_order_relaxed);
				for (int i = 0; i < 3; i++)
					if (__atomic_load_n(&n->pattern[i], __ATOMIC_RELAXED) != PATTERN)
						atomic_fetch_add_explicit(&broken_pattern, 1,
									  memory_order_relaxed);
			} else if (k2 != key) {
				/* Reused for another key while we looked: look again, as kernel code does. */
				atomic_fetch_add_explicit(&rechecked, 1, memory_order_relaxed);
				return;
			} else if (v != value_of(key)) {
				atomic_fetch_add_explicit(&broken_value, 1, memory_order_relaxed);
			}
			atomic_fetch_add_explicit(&found, 1, memory_order_relaxed);
			return;
		}
		n = __atomic_load_n(&n->next, __ATOMIC_ACQUIRE);
	}
}

static void *reader(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg;
	thread_online();
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		reader_lock();
		for (int i = 0; i < 16; i++)
			lookup((unsigned long)rand_r(&seed) % KEYS, &seed);
		reader_unlock();
		quiescent();
	}
	thread_offline();
	return NULL;
}

static struct node *node_alloc(unsigned long key)
{
	struct node *n = node_cache ? kmem_cache_alloc(node_cache, GFP_KERNEL) :
				      kmalloc(sizeof(*n), GFP_KERNEL);
	if (!n)
		return NULL;
	/*
	 * A reused typesafe node: no key while the value changes, then the key,
	 * released, so a reader that reads the new key reads the new value (a
	 * writer preempted between the key and the value made a reader count a
	 * broken value).
	 */
	__atomic_store_n(&n->key, ~0UL, __ATOMIC_RELAXED);
	__atomic_store_n(&n->value, value_of(key), __ATOMIC_RELEASE);
	__atomic_store_n(&n->key, key, __ATOMIC_RELEASE);
	if (!node_cache) {
		__atomic_store_n(&n->magic, MAGIC, __ATOMIC_RELAXED);
		for (int i = 0; i < 3; i++)
			__atomic_store_n(&n->pattern[i], PATTERN, __ATOMIC_RELAXED);
	}
	return n;
}

static void node_free(struct node *n)
{
	if (node_cache)
		kmem_cache_free(node_cache, n);	/* reused at once: the readers re-check */
	else
		kfree_rcu(n, rcu);
}

/*
 * Writers fill the table, then empty it, by turns: emptied slabs are what
 * the shrinker gives back, and what must wait for the readers.
 */
static atomic_ulong writes;

static void *writer(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg;
	thread_online();
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		unsigned long key = (unsigned long)rand_r(&seed) % KEYS;
		unsigned int b = (unsigned int)(key % BUCKETS);
		bool filling = (atomic_fetch_add_explicit(&writes, 1, memory_order_relaxed) / 4096) % 2;
		pthread_mutex_lock(&bucket_lock[b]);
		if (!present[key] && !filling) {
			pthread_mutex_unlock(&bucket_lock[b]);
		} else if (!present[key]) {
			struct node *n = node_alloc(key);
			if (n) {
				/*
				 * Released: a reader still on @n from its last life
				 * follows this link to nodes it has no other ordering
				 * with (TSan saw their slab's earlier writes as racing).
				 */
				__atomic_store_n(&n->next, buckets[b], __ATOMIC_RELEASE);
				__atomic_store_n(&buckets[b], n, __ATOMIC_RELEASE);
				present[key] = true;
			}
			pthread_mutex_unlock(&bucket_lock[b]);
		} else {
			struct node **pp = &buckets[b], *n;
			while ((n = *pp) && n->key != key)
				pp = &n->next;
			__atomic_store_n(pp, n->next, __ATOMIC_RELEASE);
			present[key] = false;
			pthread_mutex_unlock(&bucket_lock[b]);
			node_free(n);
		}
		quiescent();
	}
	thread_offline();
	return NULL;
}

/* Shrink the node cache, churn another cache and large blocks, give pages to the OS. */
static void other_ctor(void *p)
{
	memset(p, 0xa7, sizeof(struct node));
}

static void *pressure(void *arg)
{
	struct kmem_cache *other = kmem_cache_create("rcu_test_other", sizeof(struct node), 0, 0,
						    other_ctor);
	void *held[256];
	unsigned long round = 0;
	(void)arg;
	thread_online();
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		if (node_cache)
			kmem_cache_shrink(node_cache);
		for (int i = 0; i < 256; i++)
			held[i] = i % 8 ? kmem_cache_alloc(other, GFP_KERNEL) : kmalloc(6000, GFP_KERNEL);
		for (int i = 0; i < 256; i++)
			if (i % 8)
				kmem_cache_free(other, held[i]);
			else
				kfree(held[i]);
		kmem_cache_shrink(other);
		if (++round % 2 == 0)
			slub_reclaim();		/* a page given back too early reads zero */
		quiescent();
	}
	kmem_cache_destroy(other);
	thread_offline();
	return NULL;
}

static double run_seconds = 2.0;

static void reader_writer(struct kmem_cache *cache)
{
	pthread_t r[READERS], w[WRITERS], p;
	unsigned long errors = slub_errors();
	node_cache = cache;
	atomic_store(&stop, false);
	for (int i = 0; i < BUCKETS; i++)
		pthread_mutex_init(&bucket_lock[i], NULL);
	for (int i = 0; i < READERS; i++)
		pthread_create(&r[i], NULL, reader, (void *)(uintptr_t)(i + 1));
	for (int i = 0; i < WRITERS; i++)
		pthread_create(&w[i], NULL, writer, (void *)(uintptr_t)(100 + i));
	pthread_create(&p, NULL, pressure, NULL);
	usleep((useconds_t)(run_seconds * 1e6));
	atomic_store(&stop, true);
	for (int i = 0; i < READERS; i++)
		pthread_join(r[i], NULL);
	for (int i = 0; i < WRITERS; i++)
		pthread_join(w[i], NULL);
	pthread_join(p, NULL);
	fprintf(stderr, "   %lu lookups, %lu found, %lu re-checked after reuse\n",
		atomic_load(&lookups), atomic_load(&found), atomic_load(&rechecked));
	CHECK_EQ(atomic_load(&broken_magic), 0);
	CHECK_EQ(atomic_load(&broken_value), 0);
	CHECK_EQ(atomic_load(&broken_pattern), 0);
	CHECK(atomic_load(&found) > 0);
	/* Empty the table. */
	for (unsigned long key = 0; key < KEYS; key++) {
		if (!present[key])
			continue;
		struct node **pp = &buckets[key % BUCKETS], *n;
		while ((n = *pp) && n->key != key)
			pp = &n->next;
		*pp = n->next;
		present[key] = false;
		node_free(n);
	}
	CHECK_EQ(slub_errors(), errors);
	atomic_store(&lookups, 0);
	atomic_store(&broken_magic, 0);
	atomic_store(&broken_value, 0);
	atomic_store(&broken_pattern, 0);
	atomic_store(&found, 0);
	atomic_store(&rechecked, 0);
}

static void test_typesafe_readers(void)
{
	struct kmem_cache *s = kmem_cache_create("rcu_test_nodes", sizeof(struct node), 0,
						 SLAB_TYPESAFE_BY_RCU, node_ctor);
	CHECK(s != NULL);
	if (!s)
		return;
	CHECK_EQ(check_attr_long(s, "destroy_by_rcu"), 1);
	reader_writer(s);
	kmem_cache_destroy(s);
	CHECK(slub_find_cache("rcu_test_nodes") == NULL);
}

static void test_kfree_rcu_readers(void)
{
	reader_writer(NULL);
	kvfree_rcu_barrier();
	CHECK_EQ(check_attr_long(slub_find_cache("kmalloc-96"), "rcu_pending_objects"), 0);
}

/* The slab's pages wait; its objects do not. */
static void test_typesafe_slab_waits(void)
{
	struct kmem_cache *s = kmem_cache_create("rcu_test_wait", 512, 0,
						 SLAB_TYPESAFE_BY_RCU, NULL);
	void *objs[64];
	for (int i = 0; i < 64; i++)
		objs[i] = kmem_cache_alloc(s, GFP_KERNEL);
	/* The free pointer is outside the object: what a reader sees stays. */
	memset(objs[5], 0x3c, 512);
	kmem_cache_free(s, objs[5]);
	unsigned char *p = objs[5];
	bool intact = true;
	for (int i = 0; i < 512; i++)
		intact &= p[i] == 0x3c;
	CHECK(intact);
	objs[5] = kmem_cache_alloc(s, GFP_KERNEL);
	/* Reused at once: the cpu slab's last object comes back (a migration between may miss). */
	bool reused = false;
	for (int i = 0; i < 10 && !reused; i++) {
		kmem_cache_free(s, objs[63]);
		void *again = kmem_cache_alloc(s, GFP_KERNEL);
		reused = again == objs[63];
		objs[63] = again;
	}
	CHECK(reused);

	reader_lock();
	for (int i = 0; i < 64; i++)
		kmem_cache_free(s, objs[i]);
	kmem_cache_shrink(s);
	/* Inside a read-side section: the slabs cannot be back yet, and their memory reads. */
	long pending = check_attr_long(s, "rcu_pending_slabs");
	CHECK(pending > 0);
	CHECK(virt_to_page(objs[0]) != NULL);
	volatile unsigned char c = *(volatile unsigned char *)objs[63];
	(void)c;
	reader_unlock();
	rcu_barrier();
	CHECK_EQ(check_attr_long(s, "rcu_pending_slabs"), 0);
	kmem_cache_destroy(s);
}

/* A flood: batched (a call_rcu per page of pointers), then destroy reports nothing. */
static void test_flood_then_destroy(void)
{
	enum { N = 100000 };
	struct item { unsigned long a[5]; struct rcu_head rcu; };
	struct kmem_cache *s = kmem_cache_create("rcu_test_flood", sizeof(struct item), 0,
						 SLAB_NO_MERGE, NULL);
	unsigned long errors = slub_errors();
	unsigned long calls = __atomic_load_n(&slab_rcu_calls, __ATOMIC_RELAXED);
	/* Inside a reader: no grace period ends, so the objects are still pending at the check. */
	reader_lock();
	for (int i = 0; i < N; i++) {
		struct item *it = kmem_cache_alloc(s, GFP_KERNEL);
		it->a[0] = (unsigned long)i;
		kfree_rcu(it, rcu);
	}
	calls = __atomic_load_n(&slab_rcu_calls, __ATOMIC_RELAXED) - calls;
	fprintf(stderr, "   %d kfree_rcu: %lu call_rcu\n", N, calls);
	CHECK(calls < N / 100);
	CHECK(check_attr_long(s, "rcu_pending_objects") > 0);
	reader_unlock();
	kmem_cache_destroy(s);
	CHECK(slub_find_cache("rcu_test_flood") == NULL);
	CHECK_EQ(slub_errors(), errors);
}

/* The one-argument forms, kvmalloc'ed blocks, large ones, an object of any cache. */
static void test_forms(void)
{
	unsigned long errors = slub_errors();
	char *big = kvmalloc(1 << 20, GFP_KERNEL);
	char *small = kmalloc(40, GFP_KERNEL);
	struct kmem_cache *s = kmem_cache_create("rcu_test_forms", 128, 0, 0, NULL);
	void *obj = kmem_cache_alloc(s, GFP_KERNEL);
	kvfree_rcu_mightsleep(big);
	kfree_rcu_mightsleep(small);
	kfree_rcu_mightsleep(obj);
	kfree_rcu_mightsleep(NULL);		/* nothing */
	kfree_rcu_mightsleep(ZERO_SIZE_PTR);	/* nothing, as kfree() */
	struct withhead { int x; struct rcu_head rcu; } *wh = kzalloc(sizeof(*wh), GFP_KERNEL), *none = NULL;
	kvfree_rcu(wh, rcu);
	kfree_rcu(none, rcu);			/* NULL: nothing */
	kvfree_rcu_barrier();
	CHECK_EQ(check_attr_long(s, "rcu_pending_objects"), 0);
	kmem_cache_shrink(s);
	CHECK_EQ(check_attr_long(s, "objects"), 0);
	CHECK_EQ(slub_errors(), errors);
	kmem_cache_destroy(s);
	CHECK_EQ(slub_errors(), errors);
}

static void test_bad_input(void)
{
	SKIP_IF_UNCHECKED_FREE();
	int on_stack;
	char *p = kmalloc(64, GFP_KERNEL);
	EXPECT_REPORT(kvfree_call_rcu(NULL, &on_stack), "not a block libslub handed out");
	EXPECT_REPORT(kvfree_call_rcu(NULL, p + 8), "inside a block, not its start");
	EXPECT_REPORT(kvfree_call_rcu((struct rcu_head *)&on_stack, p), "not inside the object");
	kfree(p);
	/* A cache that asks for RCU with a free pointer it cannot have. */
	struct kmem_cache_args args = { .use_freeptr_offset = true, .freeptr_offset = 3 };
	EXPECT_REPORT(CHECK(kmem_cache_create("rcu_test_bad", 64, &args, SLAB_TYPESAFE_BY_RCU) == NULL),
		      "freeptr_offset");
}

/* Poisoning waits for the grace period; the debug checks stay clean. */
static void test_debug_poison_after_gp(void)
{
	struct kmem_cache *s = kmem_cache_create("rcu_test_poison", 100, 0,
						 SLAB_TYPESAFE_BY_RCU | SLAB_POISON | SLAB_RED_ZONE |
						 SLAB_CONSISTENCY_CHECKS, NULL);
	unsigned long errors = slub_errors();
	unsigned char *p = kmem_cache_alloc(s, GFP_KERNEL);
	memset(p, 0x11, 100);
	reader_lock();
	kmem_cache_free(s, p);
	bool intact = true;
	for (int i = 0; i < 100; i++)
		intact &= p[i] == 0x11;
	CHECK(intact);		/* a reader still sees the object */
	CHECK_EQ(check_attr_long(s, "rcu_pending_objects"), 1);
	reader_unlock();
	kvfree_rcu_barrier();
	CHECK_EQ(check_attr_long(s, "rcu_pending_objects"), 0);
	CHECK_EQ(p[0], 0x6b);	/* poisoned after the grace period */
	CHECK_EQ(p[99], 0xa5);
	CHECK_EQ(slub_validate(s), 0);
	CHECK_EQ(slub_errors(), errors);
	kmem_cache_destroy(s);
	CHECK_EQ(slub_errors(), errors);
}

/* freeptr_offset: the creator's field is the allocator's while the object is free. */
static void test_freeptr_offset(void)
{
	struct obj { unsigned long key; void *free_word; unsigned long data[6]; };
	struct kmem_cache_args args = {
		.use_freeptr_offset = true, .freeptr_offset = offsetof(struct obj, free_word),
	};
	struct kmem_cache *s = kmem_cache_create("rcu_test_freeptr", sizeof(struct obj), &args,
						 SLAB_TYPESAFE_BY_RCU);
	CHECK(s != NULL);
	if (!s)
		return;
	CHECK_EQ(kmem_cache_size(s), sizeof(struct obj));
	struct obj *o = kmem_cache_alloc(s, GFP_KERNEL);
	o->key = 42;
	kmem_cache_free(s, o);
	CHECK_EQ(o->key, 42);	/* fields but the named one stay for readers */
	kmem_cache_destroy(s);
}

/* A child of a process whose liburcu worker runs can use RCU (the fork hooks). */
static int child_uses_rcu(void)
{
	char *p = kmalloc(64, GFP_KERNEL);
	kfree_rcu_mightsleep(p);
	kvfree_rcu_barrier();
	struct kmem_cache *s = kmem_cache_create("rcu_test_child", 64, 0, SLAB_TYPESAFE_BY_RCU, NULL);
	void *o = kmem_cache_alloc(s, GFP_KERNEL);
	kmem_cache_free(s, o);
	kmem_cache_destroy(s);
	return slub_find_cache("rcu_test_child") == NULL ? 0 : 1;
}

static void test_fork(void)
{
	if (UNDER_TSAN) {
		fprintf(stderr, "   skipped under TSan (its deadlock detector and the fork handlers)\n");
		return;
	}
	/* Something queued at the fork, in both processes. */
	for (int i = 0; i < 1000; i++)
		kfree_rcu_mightsleep(kmalloc(32, GFP_KERNEL));
	pid_t pid = fork();
	if (pid == 0)
		_exit(child_uses_rcu());
	int status = 0;
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	kvfree_rcu_barrier();
	CHECK_EQ(check_attr_long(slub_find_cache("kmalloc-32"), "rcu_pending_objects"), 0);
}

int main(int argc, char **argv)
{
	if (argc > 1)
		run_seconds = atof(argv[1]);
	thread_online();
	RUN(test_typesafe_slab_waits);
	RUN(test_freeptr_offset);
	RUN(test_forms);
	RUN(test_bad_input);
	RUN(test_debug_poison_after_gp);
	RUN(test_flood_then_destroy);
	RUN(test_typesafe_readers);
	RUN(test_kfree_rcu_readers);
	RUN(test_fork);
	thread_offline();
	return check_done();
}
