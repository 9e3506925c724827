// SPDX-License-Identifier: MIT
/*
 * slab_merge.c - cache merging and the names a cache answers to.
 *
 * A kmem_cache_create() whose objects would fit an existing cache's slots
 * as well as slots of their own gets that cache (the kernel's
 * find_mergeable): fewer caches, fewer half-empty slabs.  A mergeable cache
 * is known by a unique id, ":[flags-]size" (":0000064", ":a-0000088"),
 * under which the live tree lists it; every name merged into it is an
 * alias.  All of this runs under slab_caches_lock.
 */
#define _GNU_SOURCE
#include "slab/core/slab.h"
#include "slab/core/slab_common.h"

#include <string.h>

#include "base/options.h"

bool slab_unmergeable(const struct kmem_cache *s)
{
	/* A region for usercopy checks, a ctor, debug metadata, a sheaf capacity are per cache. */
	return !slub_opt(slub_merge) || (s->flags & SLAB_NEVER_MERGE) || s->ctor || s->usersize ||
	       s->args_sheaf_capacity || s->refcount < 0;
}

/*
 * The newest cache whose slots hold @size bytes at @align, wasting less
 * than a word more than a cache of its own would, with the same
 * SLAB_MERGE_SAME flags.  Here also: slabs as large as the new cache may
 * have (@max_order: the malloc classes ask for larger slabs than the
 * options give, so a class never lands in a cache of smaller slabs, which
 * would waste more of each; a plain cache may land in a class).
 */
struct kmem_cache *find_mergeable(unsigned int size, unsigned int align, slab_flags_t flags,
				  void (*ctor)(void *), unsigned int max_order)
{
	if (ctor || (flags & SLAB_NEVER_MERGE))
		return NULL;
	size = (unsigned int)ALIGN_UP(size, sizeof(void *));
	align = calculate_alignment(flags, align, size);
	size = (unsigned int)ALIGN_UP(size, align);

	for (struct list_head *pos = slab_caches.prev; pos != &slab_caches; pos = pos->prev) {
		struct kmem_cache *s = list_entry(pos, struct kmem_cache, list);
		if (slab_unmergeable(s) || size > s->size || s->max_order < max_order)
			continue;
		if ((flags & SLAB_MERGE_SAME) != (s->flags & SLAB_MERGE_SAME))
			continue;
		if (s->size % align || s->size - size >= sizeof(void *))
			continue;
		/* KASAN's slots hold a red zone: the objects must fit, not the slots. */
		if ((flags & __SLAB_KASAN) && size > ALIGN_UP(s->object_size, sizeof(void *)))
			continue;
		return s;
	}
	return NULL;
}

/*
 * ":" + the flag letters that matter for merging + "-" if any + the size
 * in 7 digits; fixed at creation, as the kernel's sysfs directory is.
 */
void slab_set_id(struct kmem_cache *s)
{
	static const struct { slab_flags_t flag; char letter; } letters[] = {
		{ SLAB_CACHE_DMA, 'd' }, { SLAB_CACHE_DMA32, 'D' }, { SLAB_RECLAIM_ACCOUNT, 'a' },
		{ SLAB_CONSISTENCY_CHECKS, 'F' }, { SLAB_ACCOUNT, 'A' },
	};
	s->id[0] = 0;	/* known by its name alone */
	if (slab_unmergeable(s))
		return;
	char *p = s->id;
	*p++ = ':';
	for (size_t i = 0; i < ARRAY_SIZE(letters); i++)
		if (s->flags & letters[i].flag)
			*p++ = letters[i].letter;
	if (p != s->id + 1)
		*p++ = '-';
	/* %07u without stdio (slab_cache_name's reason): sizes stay below 10^8. */
	unsigned int v = s->size;
	for (int i = 6; i >= 0; i--, v /= 10)
		p[i] = (char)('0' + v % 10);
	p[7] = 0;
}

bool slab_answers_to(const struct kmem_cache *s, const char *name)
{
	if (!strcmp(s->name, name) || (s->id[0] && !strcmp(s->id, name)))
		return true;
	for (const struct slab_alias *a = s->aliases; a; a = a->next)
		if (!strcmp(a->name, name))
			return true;
	return false;
}

/*
 * Record @name as one more creation of @s.  The node comes from the
 * caller, made before the lock (*spare; taken here if used), so that no
 * allocation happens under slab_caches_lock.  A name used again counts
 * up: a destroy cannot say which of a merged cache's names it meant (the
 * handle is the same), so names stay until the cache goes, as the kernel's
 * alias links do.
 */
void slab_alias_add(struct kmem_cache *s, struct slab_alias **spare, const char *name)
{
	if (!strcmp(s->name, name))
		return;
	for (struct slab_alias *a = s->aliases; a; a = a->next)
		if (!strcmp(a->name, name)) {
			a->count++;
			return;
		}
	struct slab_alias *a = *spare;
	if (!a)
		return;	/* no memory for the name: the merge still stands */
	*spare = NULL;
	strcpy(a->name, name);
	a->count = 1;
	a->next = NULL;
	struct slab_alias **tail = &s->aliases;
	while (*tail)
		tail = &(*tail)->next;
	*tail = a;
}

void slab_aliases_free(struct kmem_cache *s)
{
	while (s->aliases) {
		struct slab_alias *a = s->aliases;
		s->aliases = a->next;
		kfree(a);
	}
}

/* ---- the public lookups ------------------------------------------------------ */

/*
 * Set while this thread's slub_for_each_cache() holds the list lock: a
 * callback's lookups then read the list under that hold instead of
 * deadlocking on the lock, and creating or destroying a cache there, which
 * would change the list under the walk, is refused (slab_common.c).
 */
__thread bool slab_in_cache_walk __attribute__((tls_model("initial-exec")));

static bool lookup_lock(void)
{
	if (slab_in_cache_walk)
		return false;
	pthread_mutex_lock(&slab_caches_lock);
	return true;
}

static void lookup_unlock(bool locked)
{
	if (locked)
		pthread_mutex_unlock(&slab_caches_lock);
}

struct kmem_cache *slub_find_cache(const char *name)
{
	struct kmem_cache *found = NULL;
	if (!name || !slab_ensure_init())
		return NULL;
	bool locked = lookup_lock();
	for (struct list_head *pos = slab_caches.next; pos != &slab_caches; pos = pos->next) {
		struct kmem_cache *s = list_entry(pos, struct kmem_cache, list);
		if (slab_answers_to(s, name)) {
			found = s;
			break;
		}
	}
	lookup_unlock(locked);
	return found;
}

int slub_for_each_cache(int (*fn)(struct kmem_cache *s, void *arg), void *arg)
{
	int ret = 0;
	if (!fn || !slab_ensure_init())
		return 0;
	bool locked = lookup_lock();	/* a walk inside a walk reads under the outer hold */
	bool outer = !slab_in_cache_walk;
	slab_in_cache_walk = true;
	for (struct list_head *pos = slab_caches.next; pos != &slab_caches && !ret; pos = pos->next)
		ret = fn(list_entry(pos, struct kmem_cache, list), arg);
	if (outer)
		slab_in_cache_walk = false;
	lookup_unlock(locked);
	return ret;
}

const char *slub_cache_name(struct kmem_cache *s)
{
	return s ? s->name : NULL;
}

const char *slub_cache_id(struct kmem_cache *s)
{
	return !s ? NULL : s->id[0] ? s->id : s->name;
}

/* Alias names of @s, one per call: @i from 0 until NULL. */
const char *slub_cache_alias(struct kmem_cache *s, unsigned int i)
{
	const char *name = NULL;
	if (!s)
		return NULL;
	bool locked = lookup_lock();
	const struct slab_alias *a = s->aliases;
	while (a && i--)
		a = a->next;
	if (a)
		name = a->name;
	lookup_unlock(locked);
	return name;
}
