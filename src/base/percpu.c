// SPDX-License-Identifier: MIT
/*
 * percpu.c - the chunks that hold the caches' per-CPU slots (percpu.h).
 *
 * A chunk is reserved whole and committed uncharged (mprotect of a
 * MAP_NORESERVE reservation): its pages are backed on first touch only,
 * so 1024 possible CPUs cost address space, not memory.  The chunk's own
 * header is slot 0 of CPU 0's unit, which the first caches' slots share a
 * page with anyway.  Chunks are never returned: a process that made 256
 * caches will likely make them again.
 */
#define _GNU_SOURCE
#include "base/percpu.h"

#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include <slub.h>

#include "base/start.h"
#include "base/os.h"

struct pcpu_chunk {
	struct pcpu_chunk *next;
	uint64_t used[PCPU_SLOTS_PER_CHUNK / 64];	/* bit i: slot i taken */
	uint64_t dirty[PCPU_SLOTS_PER_CHUNK / 64];	/* bit i: slot i was used: zero it */
};
static_assert(sizeof(struct pcpu_chunk) <= PCPU_SLOT_SIZE, "the header is slot 0");
static_assert(PCPU_SLOTS_PER_CHUNK % 64 == 0, "whole bitmap words");

static pthread_mutex_t pcpu_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pcpu_chunk *pcpu_chunks;

static struct pcpu_chunk *pcpu_new_chunk(unsigned int nr_cpus)
{
	size_t bytes = (size_t)nr_cpus << PCPU_UNIT_SHIFT;
	void *base = os_reserve(bytes, PCPU_UNIT_SIZE);
	if (!base)
		return NULL;
	if (os_commit(base, bytes)) {
		os_release(base, bytes);
		return NULL;
	}
	/*
	 * The header's page, and the first page of the unit of the CPU we run
	 * on, whose slots the first caches fill at once: a call, not a fault
	 * each (memmap.c).
	 */
	os_populate(base, PAGE_SIZE);
	unsigned int cpu = os_current_cpu();
	if (cpu && cpu < nr_cpus)
		os_populate((char *)base + ((size_t)cpu << PCPU_UNIT_SHIFT), PAGE_SIZE);
	struct pcpu_chunk *chunk = base;
	chunk->used[0] = 1;	/* the header */
	chunk->next = pcpu_chunks;
	pcpu_chunks = chunk;
	return chunk;
}

static bool slot_is_zero(const void *p)
{
	const uint64_t *w = p;
	for (unsigned int i = 0; i < PCPU_SLOT_SIZE / 8; i++)
		if (w[i])
			return false;
	return true;
}

void *pcpu_slot_alloc(unsigned int nr_cpus)
{
	slub_fork_handlers_check();
	void *slot = NULL;
	pthread_mutex_lock(&pcpu_lock);
	bool dirty = false;
	struct pcpu_chunk *chunk = pcpu_chunks;
	for (;; chunk = chunk->next) {
		if (!chunk && !(chunk = pcpu_new_chunk(nr_cpus)))
			break;
		for (unsigned int w = 0; w < PCPU_SLOTS_PER_CHUNK / 64; w++) {
			if (chunk->used[w] == ~0ULL)
				continue;
			unsigned int bit = (unsigned int)__builtin_ctzll(~chunk->used[w]);
			chunk->used[w] |= 1ULL << bit;
			dirty = chunk->dirty[w] & (1ULL << bit);
			chunk->dirty[w] &= ~(1ULL << bit);
			slot = (char *)chunk + (size_t)(w * 64 + bit) * PCPU_SLOT_SIZE;
			goto out;
		}
	}
out:
	pthread_mutex_unlock(&pcpu_lock);
	if (!slot) {
		errno = ENOMEM;
		return NULL;
	}
	/*
	 * A slot used before: zero the copies that are not.  Read before
	 * writing, so a unit no CPU wrote is not made resident by a memset
	 * (where the kernel maps its zero page for the read).
	 */
	for (unsigned int cpu = 0; dirty && cpu < nr_cpus; cpu++) {
		void *copy = pcpu_slot_of(slot, cpu);
		if (!slot_is_zero(copy))
			memset(copy, 0, PCPU_SLOT_SIZE);
	}
	return slot;
}

void pcpu_slot_free(void *slot)
{
	slub_fork_handlers_check();
	/*
	 * Nothing is read or written here: the next user zeroes what it
	 * finds (pcpu_slot_alloc), and a slot never used again costs nothing.
	 */
	uintptr_t chunk = (uintptr_t)slot & ~(PCPU_UNIT_SIZE - 1);
	unsigned int idx = (unsigned int)(((uintptr_t)slot - chunk) / PCPU_SLOT_SIZE);
	pthread_mutex_lock(&pcpu_lock);
	((struct pcpu_chunk *)chunk)->used[idx / 64] &= ~(1ULL << (idx % 64));
	((struct pcpu_chunk *)chunk)->dirty[idx / 64] |= 1ULL << (idx % 64);
	pthread_mutex_unlock(&pcpu_lock);
}

void pcpu_fork_lock(bool lock)
{
	os_mutex_hold(&pcpu_lock, lock);
}

void pcpu_fork_child(void)
{
	pthread_mutex_init(&pcpu_lock, NULL);
}
