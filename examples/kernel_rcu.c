// SPDX-License-Identifier: MIT
/*
 * kernel_rcu.c - kernel code on libslub, as `make run` shows it: a table of
 * connections whose objects come from a KMEM_CACHE() with
 * SLAB_TYPESAFE_BY_RCU through a mempool, looked up by a reader thread
 * under rcu_read_lock() (re-checking the key, as such code must), their
 * names kmalloc'ed and freed with kfree_rcu(); then what waits for a grace
 * period, as the caches' attributes tell it, and everything destroyed.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <slub.h>

struct conn {
	unsigned long key;		/* re-checked by readers: objects are reused at once */
	struct conn *next;
	char *name;			/* kmalloc'ed, freed with kfree_rcu() */
};

struct conn_name {
	struct rcu_head rcu;
	char str[24];
};

#define TABLE 32
static struct conn *table[TABLE];
static struct kmem_cache *conn_cache;
static mempool_t *conn_pool;
static atomic_bool done;
static atomic_ulong found, reused;

static void *reader(void *arg)
{
	(void)arg;
	while (!atomic_load(&done)) {
		rcu_read_lock();
		for (unsigned long key = 0; key < 1000; key++) {
			struct conn *c = rcu_dereference(table[key % TABLE]);
			for (; c; c = rcu_dereference(c->next)) {
				if (__atomic_load_n(&c->key, __ATOMIC_ACQUIRE) != key)
					continue;
				/* Same type, maybe another object by now: look again. */
				if (__atomic_load_n(&c->key, __ATOMIC_ACQUIRE) == key)
					atomic_fetch_add(&found, 1);
				else
					atomic_fetch_add(&reused, 1);
				break;
			}
		}
		rcu_read_unlock();
	}
	return NULL;
}

static void conn_add(unsigned long key)
{
	struct conn *c = mempool_alloc(conn_pool, GFP_KERNEL);	/* never NULL */
	struct conn_name *n = kmalloc(sizeof(*n), GFP_KERNEL);
	snprintf(n->str, sizeof(n->str), "conn-%lu", key);
	__atomic_store_n(&c->key, key, __ATOMIC_RELEASE);
	c->name = n->str;
	c->next = table[key % TABLE];
	rcu_assign_pointer(table[key % TABLE], c);
}

static void conn_del(unsigned long key)
{
	struct conn **pp = &table[key % TABLE], *c;
	while ((c = *pp) && c->key != key)
		pp = &c->next;
	if (!c)
		return;
	rcu_assign_pointer(*pp, c->next);
	struct conn_name *n = (struct conn_name *)(c->name - offsetof(struct conn_name, str));
	kfree_rcu(n, rcu);
	mempool_free(c, conn_pool);	/* back to the cache at once: SLAB_TYPESAFE_BY_RCU */
}

static const char *attr(struct kmem_cache *s, const char *name)
{
	static char buf[64];
	if (slub_attr_read(s, name, buf, sizeof(buf)) < 0)
		return "?\n";
	return buf;
}

int main(void)
{
	printf("== kernel code on libslub: KMEM_CACHE, SLAB_TYPESAFE_BY_RCU, a mempool, kfree_rcu\n");
	printf("RCU flavour: liburcu %s (slub.h says what a program must do)\n", SLUB_RCU_FLAVOR);
	conn_cache = KMEM_CACHE(conn, SLAB_TYPESAFE_BY_RCU);
	conn_pool = mempool_create_slab_pool(8, conn_cache);
	if (!conn_cache || !conn_pool)
		return 1;
	printf("cache %s: object_size %s", slub_cache_name(conn_cache), attr(conn_cache, "object_size"));
	printf("  destroy_by_rcu %s", attr(conn_cache, "destroy_by_rcu"));

	pthread_t t;
	pthread_create(&t, NULL, reader, NULL);
	for (int round = 0; round < 200; round++) {
		for (unsigned long key = 0; key < 1000; key++)
			conn_add(key);
		for (unsigned long key = 0; key < 1000; key++)
			conn_del(key);
	}
	atomic_store(&done, true);
	pthread_join(t, NULL);
	printf("200 rounds of 1000 connections added and deleted beside a reader:\n");
	printf("  reader: %lu found, %lu found reused and looked again\n",
	       atomic_load(&found), atomic_load(&reused));

	char names_cache[32];
	snprintf(names_cache, sizeof(names_cache), "kmalloc-%zu",
		 kmalloc_size_roundup(sizeof(struct conn_name)));
	struct kmem_cache *names = slub_find_cache(names_cache);
	printf("  %s objects waiting for a grace period (kfree_rcu): %s", names_cache,
	       attr(names, "rcu_pending_objects"));
	kmem_cache_shrink(conn_cache);
	printf("  after kmem_cache_shrink: %s slabs of %s waiting before going back to the pages\n",
	       strtok((char *)attr(conn_cache, "rcu_pending_slabs"), "\n"), slub_cache_name(conn_cache));
	kvfree_rcu_barrier();
	printf("after kvfree_rcu_barrier(): %s rcu_pending_objects %s", names_cache,
	       attr(names, "rcu_pending_objects"));
	mempool_destroy(conn_pool);
	unsigned long errors = slub_errors();
	kmem_cache_destroy(conn_cache);		/* waits for the slabs' grace period */
	printf("kmem_cache_destroy: %s, %lu reports\n",
	       slub_find_cache("conn") ? "cache still there" : "cache gone", slub_errors() - errors);
	return slub_errors() ? 1 : 0;
}
