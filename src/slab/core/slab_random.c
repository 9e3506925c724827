// SPDX-License-Identifier: MIT
/*
 * slab_random.c - slab_freelist_random, as CONFIG_SLAB_FREELIST_RANDOM: a
 * new slab's free objects are linked in a random order, so that where the
 * next object lands next to the last one is not known to an attacker who
 * overflows one.  Each cache draws one random permutation of its object
 * indexes (made at its first slab, from getrandom); each new slab walks it
 * from a random place, wrapping, skipping indexes its smaller (fallback
 * order) slab lacks.  A random slab is linked whole, not page by page.
 */
#define _GNU_SOURCE
#include "slab/core/slab_harden.h"

#include <sys/random.h>

#include <slub.h>

/* A permutation of [0, count): kept in pages from the page allocator, below us. */
struct random_seq {
	unsigned int count;
	unsigned int order;	/* of the pages it lives in */
	uint16_t idx[];
};

static uint64_t seed_state;

/* splitmix64 over a shared counter: lock-free, good enough for a start and a shuffle. */
static uint64_t next_random(void)
{
	uint64_t z = __atomic_add_fetch(&seed_state, 0x9e3779b97f4a7c15ULL, __ATOMIC_RELAXED);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static void seed_once(void)
{
	uint64_t r;
	if (__atomic_load_n(&seed_state, __ATOMIC_RELAXED))
		return;
	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r))
		r = (uint64_t)(uintptr_t)&r * 0x2545f4914f6cdd1dULL;
	uint64_t zero = 0;
	__atomic_compare_exchange_n(&seed_state, &zero, r | 1, false, __ATOMIC_RELAXED,
				    __ATOMIC_RELAXED);
}

/* Made outside any lock; two makers race, the loser gives its pages back. */
static struct random_seq *cache_seq(struct kmem_cache *s, unsigned int objects)
{
	struct random_seq *seq = __atomic_load_n(&s->random_seq, __ATOMIC_ACQUIRE);
	if (likely(seq))
		return seq->count >= objects ? seq : NULL;
	unsigned int count = oo_objects((struct kmem_cache_order_objects){ READ_ONCE(s->oo.x) });
	if (count < objects)
		count = objects;
	size_t bytes = sizeof(*seq) + count * sizeof(seq->idx[0]);
	unsigned int order = 0;
	while ((PAGE_SIZE << order) < bytes)
		order++;
	struct page *page = alloc_pages(GFP_KERNEL | __GFP_NOWARN, order);
	if (!page)
		return NULL;
	struct random_seq *mine = page_address(page);
	mine->count = count;
	mine->order = order;
	seed_once();
	for (unsigned int i = 0; i < count; i++)
		mine->idx[i] = (uint16_t)i;
	for (unsigned int i = count - 1; i > 0; i--) {	/* Fisher-Yates */
		unsigned int j = (unsigned int)(next_random() % (i + 1));
		uint16_t t = mine->idx[i];
		mine->idx[i] = mine->idx[j];
		mine->idx[j] = t;
	}
	if (__atomic_compare_exchange_n(&s->random_seq, &seq, mine, false, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE)) {
		seq = mine;
	} else {
		__free_pages(page, order);
	}
	return seq->count >= objects ? seq : NULL;
}

void *slab_shuffle_freelist(struct kmem_cache *s, void *start, unsigned int objects)
{
	struct random_seq *seq = cache_seq(s, objects);
	if (!seq)
		return NULL;
	unsigned int pos = (unsigned int)(next_random() % seq->count);
	void *first = NULL, *prev = NULL;
	for (unsigned int n = 0; n < seq->count; n++, pos = pos + 1 == seq->count ? 0 : pos + 1) {
		unsigned int i = seq->idx[pos];
		if (i >= objects)
			continue;
		void *object = (char *)start + (size_t)i * s->size + s->red_left_pad;
		if (prev)
			set_freepointer(s, prev, object);
		else
			first = object;
		prev = object;
	}
	set_freepointer(s, prev, NULL);
	return first;
}

void slab_random_release(struct kmem_cache *s)
{
	struct random_seq *seq = s->random_seq;
	if (!seq)
		return;
	s->random_seq = NULL;
	__free_pages(virt_to_page(seq), seq->order);
}
