// SPDX-License-Identifier: MIT
/*
 * test_percpu.c - the per-CPU slot chunks: slots are distinct and zero in
 * every CPU's unit, a freed slot comes back zeroed, a second chunk is made
 * when the first is full, untouched units stay unbacked, and caches built
 * on them work from every CPU the test can run on.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>

#include "check.h"
#include "os.h"
#include "percpu.h"
#include "slab.h"

#define MANY ((int)PCPU_SLOTS_PER_CHUNK + 40)	/* more than one chunk holds */

static void *slots[MANY];

static bool all_zero(const void *p)
{
	const unsigned char *b = p;
	for (unsigned int i = 0; i < PCPU_SLOT_SIZE; i++)
		if (b[i])
			return false;
	return true;
}

static void slots_distinct_and_zero(void)
{
	unsigned int cpus = os_possible_cpus();
	for (int i = 0; i < MANY; i++) {
		slots[i] = pcpu_slot_alloc(cpus);
		CHECK(slots[i] != NULL);
		CHECK_EQ((uintptr_t)slots[i] % PCPU_SLOT_SIZE, 0);
	}
	/* Every copy zero, then stamped: a copy shared by two slots or CPUs shows. */
	for (int i = 0; i < MANY; i++)
		for (unsigned int cpu = 0; cpu < cpus; cpu++) {
			CHECK(all_zero(pcpu_slot_of(slots[i], cpu)));
			memset(pcpu_slot_of(slots[i], cpu), (i * 7 + (int)cpu) % 251 + 1, PCPU_SLOT_SIZE);
		}
	for (int i = 0; i < MANY; i++)
		for (unsigned int cpu = 0; cpu < cpus; cpu++)
			CHECK_EQ(*(unsigned char *)pcpu_slot_of(slots[i], cpu), (i * 7 + (int)cpu) % 251 + 1);
	/* The slots fill more than one chunk. */
	uintptr_t first = (uintptr_t)slots[0] & ~(PCPU_UNIT_SIZE - 1);
	int other = 0;
	for (int i = 0; i < MANY; i++)
		other += ((uintptr_t)slots[i] & ~(PCPU_UNIT_SIZE - 1)) != first;
	CHECK(other > 0);
	for (int i = 0; i < MANY; i++)
		pcpu_slot_free(slots[i]);
}

static void freed_slot_comes_back_zero(void)
{
	unsigned int cpus = os_possible_cpus();
	void *a = pcpu_slot_alloc(cpus);
	memset(pcpu_slot_of(a, cpus - 1), 0x5a, PCPU_SLOT_SIZE);
	pcpu_slot_free(a);
	void *b = pcpu_slot_alloc(cpus);
	CHECK(a == b);		/* lowest free slot first */
	for (unsigned int cpu = 0; cpu < cpus; cpu++)
		CHECK(all_zero(pcpu_slot_of(b, cpu)));
	pcpu_slot_free(b);
}

static void untouched_units_unbacked(void)
{
	unsigned int cpus = os_possible_cpus();
	/* A whole chunk's slots, taken and given back, never written. */
	for (int i = 0; i < (int)PCPU_SLOTS_PER_CHUNK - 1; i++)
		slots[i] = pcpu_slot_alloc(cpus);
	for (int i = 0; i < (int)PCPU_SLOTS_PER_CHUNK - 1; i++)
		pcpu_slot_free(slots[i]);
	/*
	 * Backed: the header's page, and the first page of the unit of the CPU
	 * the chunk was made on.  Zeroing every copy would back every unit.
	 */
	long rss = smaps_vma_of(slots[0]).rss_kb;
	CHECK(rss >= 4);
	CHECK(rss <= 8);
	if (rss > 8)
		fprintf(stderr, "%ld KiB resident of %u units of %lu KiB\n", rss, cpus,
			PCPU_UNIT_SIZE >> 10);
}

/* Caches on shared chunks: allocate and free on every CPU we may run on. */
static void caches_on_every_cpu(void)
{
	struct kmem_cache *c[40];
	char name[32];
	for (int i = 0; i < 40; i++) {
		snprintf(name, sizeof(name), "percpu-test-%d", i);
		c[i] = kmem_cache_create(name, 24 + 8 * i, 0, 0, NULL);
		CHECK(c[i] != NULL);
	}
	cpu_set_t old;
	sched_getaffinity(0, sizeof(old), &old);
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &old))
			continue;
		cpu_set_t one;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		sched_setaffinity(0, sizeof(one), &one);
		for (int i = 0; i < 40; i++) {
			void *p[64];
			for (int j = 0; j < 64; j++)
				p[j] = kmem_cache_alloc(c[i], GFP_KERNEL);
			for (int j = 0; j < 64; j++)
				kmem_cache_free(c[i], p[j]);
		}
	}
	sched_setaffinity(0, sizeof(old), &old);
	for (int i = 0; i < 40; i++)
		kmem_cache_destroy(c[i]);
	CHECK_EQ(slab_validate_all(), 0);
}

int main(void)
{
	RUN(untouched_units_unbacked);	/* first: nothing is touched yet */
	RUN(slots_distinct_and_zero);
	RUN(freed_slot_comes_back_zero);
	RUN(caches_on_every_cpu);
	CHECK_EQ(slub_errors(), 0);
	return check_done();
}
