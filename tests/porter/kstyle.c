// SPDX-License-Identifier: MIT
/*
 * kstyle.c - kernel-style code, as a driver or lib/ would write it,
 * including only <linux/slab.h>, <linux/gfp.h>, <linux/mempool.h> and
 * <linux/rcupdate.h> from libslub's porter directory: a table of sessions
 * looked up under rcu_read_lock(), each from a KMEM_CACHE through a
 * mempool, freed by call_rcu() back to the pool; each name a kmalloc'ed
 * block replaced under RCU and freed with kfree_rcu().  Updates are
 * serialized by the caller, as under the kernel's spinlock.
 */
#include <linux/gfp.h>
#include <linux/mempool.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>

#include "kstyle.h"

#define SESSION_HASH_SIZE 64

struct session_name {
	struct rcu_head rcu;
	char str[];
};

struct session {
	unsigned long id;
	struct session_name __rcu *name;
	struct session __rcu *next;
	struct rcu_head rcu;
};

static struct session __rcu *session_hash[SESSION_HASH_SIZE];
static struct kmem_cache *session_cachep;
static mempool_t *session_pool;

static struct session __rcu **bucket(unsigned long id)
{
	return &session_hash[id % SESSION_HASH_SIZE];
}

static struct session_name *name_new(const char *name, gfp_t gfp)
{
	size_t len = 0;
	while (name[len])
		len++;
	struct session_name *n = kmalloc(sizeof(*n) + len + 1, gfp);
	if (!n)
		return NULL;
	for (size_t i = 0; i <= len; i++)
		n->str[i] = name[i];
	return n;
}

int session_init(void)
{
	session_cachep = KMEM_CACHE(session, SLAB_HWCACHE_ALIGN | SLAB_ACCOUNT);
	if (!session_cachep)
		return -ENOMEM;
	session_pool = mempool_create_slab_pool(16, session_cachep);
	if (!session_pool) {
		kmem_cache_destroy(session_cachep);
		return -ENOMEM;
	}
	return 0;
}

int session_add(unsigned long id, const char *name)
{
	struct session *s = mempool_alloc(session_pool, GFP_KERNEL);	/* never NULL */
	struct session_name *n = name_new(name, GFP_KERNEL);
	if (!n) {
		mempool_free(s, session_pool);
		return -ENOMEM;
	}
	s->id = id;
	RCU_INIT_POINTER(s->name, n);
	RCU_INIT_POINTER(s->next, rcu_dereference_protected(*bucket(id), 1));
	rcu_assign_pointer(*bucket(id), s);
	return 0;
}

bool session_lookup(unsigned long id, char *name, size_t len)
{
	bool found = false;
	rcu_read_lock();
	for (struct session *s = rcu_dereference(*bucket(id)); s; s = rcu_dereference(s->next)) {
		if (s->id != id)
			continue;
		struct session_name *n = rcu_dereference(s->name);
		size_t i = 0;
		for (; i + 1 < len && n->str[i]; i++)
			name[i] = n->str[i];
		if (len)
			name[i] = 0;
		found = true;
		break;
	}
	rcu_read_unlock();
	return found;
}

int session_rename(unsigned long id, const char *name)
{
	for (struct session *s = rcu_dereference_protected(*bucket(id), 1); s;
	     s = rcu_dereference_protected(s->next, 1)) {
		if (s->id != id)
			continue;
		struct session_name *n = name_new(name, GFP_KERNEL);
		if (!n)
			return -ENOMEM;
		struct session_name *old = rcu_replace_pointer(s->name, n, 1);
		kfree_rcu(old, rcu);
		return 0;
	}
	return -ENOENT;
}

static void session_free_rcu(struct rcu_head *head)
{
	struct session *s = (struct session *)((char *)head - offsetof(struct session, rcu));
	kfree(rcu_dereference_protected(s->name, 1));
	mempool_free(s, session_pool);
}

int session_del(unsigned long id)
{
	struct session __rcu **pp = bucket(id);
	struct session *s;
	while ((s = rcu_dereference_protected(*pp, 1)) && s->id != id)
		pp = &s->next;
	if (!s)
		return -ENOENT;
	rcu_assign_pointer(*pp, rcu_dereference_protected(s->next, 1));
	call_rcu(&s->rcu, session_free_rcu);
	return 0;
}

void session_exit(void)
{
	for (unsigned long b = 0; b < SESSION_HASH_SIZE; b++)
		while (rcu_dereference_protected(session_hash[b], 1))
			session_del(rcu_dereference_protected(session_hash[b], 1)->id);
	rcu_barrier();		/* every session_free_rcu() has run */
	mempool_destroy(session_pool);
	kmem_cache_destroy(session_cachep);
}
