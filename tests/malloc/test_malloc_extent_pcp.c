// SPDX-License-Identifier: MIT
/*
 * test_malloc_extent_pcp.c - malloc_extent_pcp.c through the malloc API:
 * in rseq mode each CPU keeps one freed extent beside the bins, which the
 * next malloc of its size there takes back; malloc_trim and the decay
 * empty other CPUs' slots too; a block is never handed to two owners while
 * threads churn their slots and another thread empties them; a free of a
 * kept block is a double free.  In cmpxchg16b mode (valgrind, no rseq)
 * the bins serve alone and the cases check that.  What is kept is
 * mallinfo2()'s fsmblks.  CTest runs it with slub_decay_ms=3000 (exact
 * counts while nothing decays).  Linked against libslub-malloc.so.
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>

#include <slub.h>

#include "malloc/malloc_extent_bins.h"	/* the bound's constants only */
#include "check.h"

#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#pragma GCC diagnostic ignored "-Wuse-after-free"
#endif
#define OPAQUE(x) ({ __typeof__(x) o_ = (x); __asm__("" : "+r"(o_)); o_; })

#define BLOCK (64 << 10)

static bool rseq_mode;

static size_t kept_bytes(void)
{
	return mallinfo2().fsmblks;
}

/* A bin's slots all filled: one block more is kept, by this CPU, and comes back here first. */
static void cpu_keeps_one_beyond_the_bins(void)
{
	cpu_set_t old;
	CHECK_EQ(pin_to_this_cpu(&old), 0);
	enum { NR = EXTENT_BIN_SLOTS + 8 };
	static char *p[NR];
	for (int i = 0; i < NR; i++)
		CHECK((p[i] = malloc(BLOCK)) != NULL);
	for (int i = 0; i < NR; i++)
		free(p[i]);
	size_t want = (size_t)(EXTENT_BIN_SLOTS + (rseq_mode ? 1 : 0)) * BLOCK;
	CHECK_EQ(kept_bytes(), want);
	/* The first freed went to the CPU's slot: the first malloc gets it back. */
	char *q = malloc(BLOCK);
	CHECK(rseq_mode ? q == p[0] : q != NULL);
	CHECK_EQ(kept_bytes(), want - BLOCK);
	free(q);
	CHECK_EQ(kept_bytes(), want);
	malloc_trim(0);
	CHECK_EQ(kept_bytes(), 0);
	unpin(&old);
}

struct on_cpu {
	int cpu;
	char *block;
};

/* Free a block on another CPU, where it stays in that CPU's slot. */
static void *free_there(void *arg)
{
	struct on_cpu *o = arg;
	if (pin_to_cpu(o->cpu))
		return NULL;
	o->block = malloc(BLOCK);
	memset(o->block, 7, BLOCK);
	free(o->block);
	return o;
}

/*
 * This thread on one CPU (its affinity saved in *@old), nothing kept, then
 * a block freed on another, kept in its slot: *@o.  False: one CPU only.
 */
static bool block_kept_on_cpu1(struct on_cpu *o, cpu_set_t *old)
{
	/* Two CPUs this process may run on (a cpuset may leave out 0 or 1). */
	int cpu[2], n = 0;
	sched_getaffinity(0, sizeof(*old), old);
	for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
		if (CPU_ISSET(c, old))
			cpu[n++] = c;
	if (n < 2) {
		fprintf(stderr, "   skipped: one CPU\n");
		return false;
	}
	CHECK_EQ(pin_to_cpu(cpu[0]), 0);
	malloc_trim(0);
	*o = (struct on_cpu){ cpu[1], NULL };
	pthread_t t;
	void *ret = NULL;
	CHECK_EQ(pthread_create(&t, NULL, free_there, o), 0);
	pthread_join(t, &ret);
	CHECK(ret == o);
	CHECK_EQ(kept_bytes(), BLOCK);
	return true;
}

/* malloc_trim on one CPU empties the slot of another (a fence, in rseq mode). */
static void trim_empties_other_cpus(void)
{
	struct on_cpu o;
	cpu_set_t old;
	if (!block_kept_on_cpu1(&o, &old))
		return;
	malloc_trim(0);
	CHECK_EQ(kept_bytes(), 0);
	/* Its double free, from here, is still named. */
	EXPECT_ONE_REPORT(free(OPAQUE(o.block)));
	unpin(&old);
}

/*
 * A block another CPU kept, then left alone, goes back to the OS after a
 * decay period: this thread's frees into its own slot look at the time
 * while another CPU's slot keeps a block.  No speed assumed: up to a minute.
 */
static void decay_empties_other_cpus(void)
{
	struct on_cpu o;
	cpu_set_t old;
	if (!block_kept_on_cpu1(&o, &old))
		return;
	/* This CPU's own churn, a size the bins hold apart, keeps one block of its own. */
	enum { OTHER = 3 * BLOCK };
	struct timespec start, now, pause = { 0, 5 * 1000000L };
	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		char *p = malloc(OTHER);
		p[0] = 1;
		free(p);
		if (kept_bytes() == OTHER)
			break;
		nanosleep(&pause, NULL);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (now.tv_sec - start.tv_sec < 60);
	CHECK_EQ(kept_bytes(), OTHER);
	malloc_trim(0);
	unpin(&old);
}

/*
 * A child with a short decay (100 ms): a block freed into the slot after a
 * quiet spell longer than the decay is not taken for old by the decay's
 * walk that comes next (a free into the bins runs it), and the malloc of
 * its size after gets it back.  A stamp from the last clock read, before
 * the spell, would have made it look old, and the walk would have given
 * it back to the OS.
 */
static int quiet_spell(void)
{
	free(malloc(1));
	if (strcmp(slub_percpu_mode(), "rseq")) {
		fprintf(stderr, "   skipped: no rseq\n");
		return 0;
	}
	cpu_set_t old;
	CHECK_EQ(pin_to_this_cpu(&old), 0);
	enum { OTHER = BLOCK + (32 << 10) };	/* another bin, below the release threshold */
	char *a = malloc(BLOCK), *c = malloc(OTHER);
	CHECK(a && c);
	memset(a, 1, BLOCK);
	free(a);	/* this CPU's slot */
	free(c);	/* the bins: they keep something, so the next slot free reads the clock */
	CHECK_EQ(kept_bytes(), BLOCK + OTHER);
	struct timespec spell = { 0, 300 * 1000000L };
	while (nanosleep(&spell, &spell))
		;
	char *b = malloc(BLOCK);
	CHECK(b == a);
	memset(b, 2, BLOCK);
	free(b);	/* into the slot; the walk after it gives c back, which waited the decay */
	CHECK_EQ(kept_bytes(), BLOCK);
	CHECK(malloc(BLOCK) == a);
	CHECK_EQ(kept_bytes(), 0);
	unpin(&old);
	return check_done();
}

/*
 * A child with a short decay (100 ms): another CPU's kept block goes back
 * within a few of this thread's slow pairs (a second), not after some count
 * of frees, which a thread making few of them would never reach.
 */
static int slow_pairs(void)
{
	free(malloc(1));
	struct on_cpu o;
	cpu_set_t old;
	if (strcmp(slub_percpu_mode(), "rseq") || !block_kept_on_cpu1(&o, &old)) {
		fprintf(stderr, "   skipped: no rseq or one CPU\n");
		return 0;
	}
	enum { OTHER = 3 * BLOCK };
	struct timespec pause = { 0, 50 * 1000000L };
	for (int i = 0; i < 20 && kept_bytes() != OTHER; i++) {
		char *p = malloc(OTHER);
		p[0] = 1;
		free(p);
		nanosleep(&pause, NULL);
	}
	CHECK_EQ(kept_bytes(), OTHER);
	unpin(&old);
	return check_done();
}

/* Cases in children of their own, with slub_decay_ms=100 (run_self_cases). */
static const struct self_case short_decay[] = {
	{ "quiet-spell", "slub_decay_ms=100", quiet_spell, 0 },
	{ "slow-pairs", "slub_decay_ms=100", slow_pairs, 0 },
};
#define NR_SHORT_DECAY (sizeof(short_decay) / sizeof(short_decay[0]))

static volatile int stop;

/* Each thread's blocks carry its mark: a block handed to two owners shows the other's. */
static void *churn(void *arg)
{
	unsigned char mark = (unsigned char)(uintptr_t)arg;
	long bad = 0;
	for (unsigned int i = 0; !__atomic_load_n(&stop, __ATOMIC_RELAXED); i++) {
		size_t size = i % 3 ? BLOCK : 2 * BLOCK;
		unsigned char *p = malloc(size);
		if (!p)
			return (void *)-1L;
		memset(p, mark, size);
		sched_yield();
		for (size_t j = 0; j < size; j += 4096)
			bad += p[j] != mark;
		free(p);
	}
	return (void *)bad;
}

/*
 * Threads on every CPU churn their slots while this one empties them all,
 * again and again; and no block is lost (in use by no one, kept nowhere).
 */
static void no_block_has_two_owners(void)
{
	enum { THREADS = 4 };
	pthread_t t[THREADS];
	malloc_trim(0);
	size_t in_use = mallinfo2().uordblks;
	unsigned long errors = slub_errors();	/* a block with two owners is freed twice */
	stop = 0;
	for (int i = 0; i < THREADS; i++)
		CHECK_EQ(pthread_create(&t[i], NULL, churn, (void *)(uintptr_t)(i + 1)), 0);
	for (int i = 0; i < 2000; i++) {
		malloc_trim(0);
		if (i % 8 == 0)
			sched_yield();
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < THREADS; i++) {
		void *bad = NULL;
		pthread_join(t[i], &bad);
		CHECK(bad == NULL);
	}
	malloc_trim(0);
	CHECK_EQ(kept_bytes(), 0);
	CHECK(mallinfo2().uordblks < in_use + BLOCK);	/* the threads' own few objects only */
	CHECK_EQ(slub_errors(), errors);
}

int main(int argc, char **argv)
{
	if (argc > 1)
		return run_self_cases(argc, argv, short_decay, NR_SHORT_DECAY, NULL);
	free(malloc(1));	/* the allocator starts, and chooses its mode */
	rseq_mode = !strcmp(slub_percpu_mode(), "rseq");
	fprintf(stderr, "mode: %s\n", slub_percpu_mode());
	RUN(cpu_keeps_one_beyond_the_bins);
	RUN(trim_empties_other_cpus);
	RUN(decay_empties_other_cpus);
	RUN(no_block_has_two_owners);
	return run_self_cases(argc, argv, short_decay, NR_SHORT_DECAY, NULL);
}
