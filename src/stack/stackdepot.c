// SPDX-License-Identifier: MIT
/*
 * stackdepot.c - the stack depot (stackdepot.h).
 *
 * Records live in pools of DEPOT_POOL_SIZE bytes, mapped as needed and never
 * unmapped, so a handle, (pool + 1, offset / 8), stays valid for good and an
 * entries pointer handed out is never freed.  A hash of the frames picks a
 * bucket: a chain of records, newest first.
 *
 * No lock at all, not even to insert:
 *  - Space is claimed by a compare-and-swap on the cursor (pool, offset):
 *    the claimed bytes are the claimant's alone until it publishes them.
 *  - A pool is mapped by whoever first needs it; two racing threads both
 *    map, one wins the compare-and-swap on its slot and the other unmaps.
 *  - A record is filled, then pushed on its chain by a compare-and-swap of
 *    the head (release); readers walk the chain with acquire loads.  If the
 *    push fails, only records pushed since can hold the same stack: they
 *    are searched, and if one does, it is used and ours is left unlinked
 *    (its bytes are lost: a race between two first captures of one stack).
 * A lock would deadlock a signal handler that allocates on the thread that
 * holds it, and a fork child of a thread that held it; here a thread that
 * stops anywhere (fork, a signal) leaves at worst an unlinked record.  So
 * the depot needs no fork handlers.
 */
#define _GNU_SOURCE
#include "stack/stackdepot.h"

#include <errno.h>
#include <string.h>

#include "base/os.h"
#include "base/report.h"

#define DEPOT_POOL_SIZE (1UL << 20)
#define DEPOT_MAX_POOLS (DEPOT_MAX_BYTES / DEPOT_POOL_SIZE)
#define DEPOT_ALIGN 8
#define DEPOT_OFFSET_BITS 17		/* DEPOT_POOL_SIZE / DEPOT_ALIGN */
#define DEPOT_HASH_BITS 16		/* 512 KiB of buckets, touched as used */
#define DEPOT_BUCKETS (1UL << DEPOT_HASH_BITS)

_Static_assert(DEPOT_POOL_SIZE / DEPOT_ALIGN == 1UL << DEPOT_OFFSET_BITS, "offset bits");
_Static_assert((DEPOT_MAX_POOLS + 1) << DEPOT_OFFSET_BITS <= UINT32_MAX, "handle bits");

/* A stored stack.  Written whole before it is pushed, never changed after. */
struct depot_record {
	struct depot_record *next;	/* older record of the same bucket */
	uint32_t hash;
	uint32_t handle;		/* its own handle: fetch checks handles against it */
	uint32_t nr;			/* frames, 1..DEPOT_MAX_FRAMES */
	uint32_t unused;
	uintptr_t entries[];
};

static void *buckets;			/* DEPOT_BUCKETS chain heads */
static void *pools[DEPOT_MAX_POOLS];
/* Where the next record goes: pool << 32 | offset in it. */
static uint64_t cursor;
static size_t limit = DEPOT_MAX_BYTES;
static unsigned long nr_stacks;
static bool said_full;

static uint32_t hash_frames(const uintptr_t *entries, unsigned int nr)
{
	uint64_t h = nr * 0x9e3779b97f4a7c15ULL;
	for (unsigned int i = 0; i < nr; i++) {
		h = (h ^ entries[i]) * 0xff51afd7ed558ccdULL;
		h ^= h >> 32;
	}
	return (uint32_t)(h ^ (h >> 29));
}

/* Map @size bytes into *@slot unless someone has; the mapping in force, or NULL. */
static void *map_once(void **slot, size_t size)
{
	void *have = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
	if (likely(have))
		return have;
	int saved_errno = errno;
	void *mine = os_map_sparse(size);
	errno = saved_errno;
	if (!mine)
		return NULL;
	if (__atomic_compare_exchange_n(slot, &have, mine, false, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE))
		return mine;
	os_release(mine, size);		/* another thread's is in place */
	errno = saved_errno;
	return have;
}

enum claim { CLAIMED, FULL, NO_MEMORY };

/* Claim @size bytes for a record: *@rec and its *@handle. */
static enum claim claim(size_t size, struct depot_record **rec, uint32_t *handle)
{
	uint64_t cur = __atomic_load_n(&cursor, __ATOMIC_RELAXED);
	for (;;) {
		size_t pool = cur >> 32, off = (uint32_t)cur;
		if (off + size > DEPOT_POOL_SIZE) {	/* the rest of a pool is left */
			pool++;
			off = 0;
		}
		if (pool >= DEPOT_MAX_POOLS ||
		    pool * DEPOT_POOL_SIZE + off + size > READ_ONCE(limit))
			return FULL;
		char *base = map_once(&pools[pool], DEPOT_POOL_SIZE);
		if (!base)
			return NO_MEMORY;
		uint64_t next = (uint64_t)pool << 32 | (off + size);
		if (__atomic_compare_exchange_n(&cursor, &cur, next, true, __ATOMIC_RELAXED,
						__ATOMIC_RELAXED)) {
			*rec = (struct depot_record *)(base + off);
			*handle = (uint32_t)((pool + 1) << DEPOT_OFFSET_BITS | off / DEPOT_ALIGN);
			return CLAIMED;
		}
	}
}

/* The record of @entries in the chain from @r, stopping before @stop. */
static struct depot_record *find(struct depot_record *r, const struct depot_record *stop,
				 uint32_t hash, const uintptr_t *entries, unsigned int nr)
{
	for (; r != stop; r = __atomic_load_n(&r->next, __ATOMIC_ACQUIRE))
		if (r->hash == hash && r->nr == nr &&
		    !memcmp(r->entries, entries, nr * sizeof(*entries)))
			return r;
	return NULL;
}

depot_stack_handle_t stack_depot_save(const uintptr_t *entries, unsigned int nr)
{
	if (!entries || !nr)
		return 0;
	if (nr > DEPOT_MAX_FRAMES)
		nr = DEPOT_MAX_FRAMES;
	struct depot_record **table = map_once(&buckets, DEPOT_BUCKETS * sizeof(*table));
	if (!table)
		return 0;
	uint32_t hash = hash_frames(entries, nr);
	struct depot_record **bucket = &table[hash & (DEPOT_BUCKETS - 1)];
	struct depot_record *head = __atomic_load_n(bucket, __ATOMIC_ACQUIRE);
	struct depot_record *rec = find(head, NULL, hash, entries, nr);
	if (likely(rec))
		return rec->handle;

	uint32_t handle;
	switch (claim(sizeof(*rec) + nr * sizeof(*entries), &rec, &handle)) {
	case CLAIMED:
		break;
	case FULL:
		if (!__atomic_exchange_n(&said_full, true, __ATOMIC_RELAXED))
			slub_warn("stack depot full (%lu stacks in %zu bytes): new stacks are not recorded",
				  stack_depot_nr_stacks(), stack_depot_bytes());
		return 0;
	case NO_MEMORY:
		return 0;
	}
	rec->hash = hash;
	rec->nr = nr;
	memcpy(rec->entries, entries, nr * sizeof(*entries));
	__atomic_store_n(&rec->handle, handle, __ATOMIC_RELEASE);
	do {
		rec->next = head;
		if (__atomic_compare_exchange_n(bucket, &head, rec, false, __ATOMIC_RELEASE,
						__ATOMIC_ACQUIRE))
			break;
		/* Pushed meanwhile: head back to the head we had. */
		struct depot_record *same = find(head, rec->next, hash, entries, nr);
		if (same)
			return same->handle;
	} while (true);
	__atomic_add_fetch(&nr_stacks, 1, __ATOMIC_RELAXED);
	return handle;
}

unsigned int stack_depot_fetch(depot_stack_handle_t handle, const uintptr_t **entries)
{
	*entries = NULL;
	/* Handle 0 and handles of no pool wrap to a pool index out of range. */
	size_t pool = (size_t)(handle >> DEPOT_OFFSET_BITS) - 1;
	size_t off = (size_t)(handle & ((1U << DEPOT_OFFSET_BITS) - 1)) * DEPOT_ALIGN;
	if (pool >= DEPOT_MAX_POOLS || off + sizeof(struct depot_record) > DEPOT_POOL_SIZE)
		return 0;
	char *base = __atomic_load_n(&pools[pool], __ATOMIC_ACQUIRE);
	if (!base)
		return 0;
	struct depot_record *rec = (struct depot_record *)(base + off);
	/* Anywhere but a record's start, this word is not the handle. */
	if (__atomic_load_n(&rec->handle, __ATOMIC_ACQUIRE) != handle)
		return 0;
	unsigned int nr = rec->nr;
	if (!nr || nr > DEPOT_MAX_FRAMES ||
	    off + sizeof(*rec) + nr * sizeof(uintptr_t) > DEPOT_POOL_SIZE)
		return 0;
	*entries = rec->entries;
	return nr;
}

unsigned long stack_depot_nr_stacks(void)
{
	return __atomic_load_n(&nr_stacks, __ATOMIC_RELAXED);
}

size_t stack_depot_bytes(void)
{
	uint64_t cur = __atomic_load_n(&cursor, __ATOMIC_RELAXED);
	return (size_t)(cur >> 32) * DEPOT_POOL_SIZE + (uint32_t)cur;
}

size_t stack_depot_set_limit(size_t bytes)
{
	if (bytes > DEPOT_MAX_BYTES)
		bytes = DEPOT_MAX_BYTES;
	__atomic_store_n(&said_full, false, __ATOMIC_RELAXED);
	return __atomic_exchange_n(&limit, bytes, __ATOMIC_RELAXED);
}
