// SPDX-License-Identifier: MIT
/*
 * test_percpu.c - the per-CPU slot chunks: slots are distinct and zero in
 * every CPU's unit, a freed slot comes back zeroed, a second chunk is made
 * when the first is full, untouched units stay unbacked, caches built on
 * them work from every CPU the test can run on, and a fork touches the
 * units of the CPUs used only.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <sys/mman.h>

#include "check.h"
#include "base/os.h"
#include "base/percpu.h"
#include "slab/core/slab.h"
#include "slab/core/slab_common.h"

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
	/*
	 * Counted over the chunk alone (mincore), not its mapping: the kernel
	 * merges a mapping with a neighbour of the same protection.
	 */
	char *chunk = (char *)((uintptr_t)slots[0] & ~(PCPU_UNIT_SIZE - 1));
	size_t pages = ((size_t)cpus << PCPU_UNIT_SHIFT) / PAGE_SIZE;
	long rss = resident_pages(chunk, pages * PAGE_SIZE) * (long)(PAGE_SIZE >> 10);
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
		pin_to_cpu(cpu);
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

/*
 * A fork's cost does not grow with the possible CPUs: its handlers lock the
 * slots of the CPUs used, not of every possible one.  Run again with 512
 * possible CPUs and 60 caches; the parent's page faults across one fork
 * (the handlers' touches of units, and the copy-on-write faults of the
 * parent's writes after it) are counted.
 */
#define FORK_CPUS 512
#define FORK_CACHES 60
#define FORK_MAX_FAULTS 200	/* fixed costs: stacks, locks, libc (about 50 here) */

static const char *self;

static void fork_cost_follows_cpus_used(void)
{
	if (UNDER_TSAN) {
		fprintf(stderr, "   (skipped: TSan's deadlock detector fails on the fork handlers' locks)\n");
		return;
	}
	CHECK_EQ(run_self_args(self, "--fork-cost"), 0);
}

static int run_fork_cost(void)
{
	os_set_possible_cpus(FORK_CPUS);
	char name[32];
	for (int i = 0; i < FORK_CACHES; i++) {
		snprintf(name, sizeof(name), "fork-cost-%d", i);
		struct kmem_cache *s = kmem_cache_create(name, 32 + 8 * i, 0, 0, NULL);
		if (!s)
			return 2;
		kmem_cache_free(s, kmem_cache_alloc(s, GFP_KERNEL));
	}
	int fd = fault_counter();
	if (fd < 0)
		return 0;	/* no perf events here: nothing to count with */
	uint64_t before = faults_now(fd);
	pid_t pid = fork();
	if (pid == 0)
		_exit(0);
	uint64_t faults = faults_now(fd) - before;
	int status;
	waitpid(pid, &status, 0);
	fprintf(stderr, "   one fork with %d possible CPUs and %d caches: %lu page faults\n",
		FORK_CPUS, FORK_CACHES, (unsigned long)faults);
	return faults < FORK_MAX_FAULTS && WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--fork-cost"))
		return run_fork_cost();
	self = argv[0];
	RUN(untouched_units_unbacked);	/* first: nothing is touched yet */
	RUN(slots_distinct_and_zero);
	RUN(freed_slot_comes_back_zero);
	RUN(caches_on_every_cpu);
	RUN(fork_cost_follows_cpus_used);
	CHECK_EQ(slub_errors(), 0);
	return check_done();
}
