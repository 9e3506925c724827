// SPDX-License-Identifier: MIT
/*
 * test_malloc_extent_bins.c - malloc_extent_bins.c through the malloc API:
 * a freed buddy extent comes back whole for the next malloc or calloc of
 * its size, a larger one is cut to a size none fits, a block grown in
 * place makes them give back as many pages as it took,
 * the bins hold no more than their bound, the decay gives what waited back
 * to the OS, a bad free of a kept block is still reported, and a fork while
 * threads use the bins leaves a child that can use them.  What the bins
 * hold is mallinfo2()'s fsmblks (no block above 4 MiB is freed here, so the
 * cache of mappings holds nothing).  Linked against libslub-malloc.so.
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <slub.h>

#include "malloc/malloc_extent_bins.h"	/* the bound's constants only */
#include "check.h"

#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#pragma GCC diagnostic ignored "-Wuse-after-free"
#endif
#define OPAQUE(x) ({ __typeof__(x) o_ = (x); __asm__("" : "+r"(o_)); o_; })

/* Below glibc's first mmap threshold: never given back at its first free. */
#define SMALL_EXTENT (64 << 10)

static size_t kept_bytes(void)
{
	return mallinfo2().fsmblks;
}

static long minor_faults(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

/* Freed and asked for again: the same block, its pages still resident. */
static void freed_extent_is_reused(void)
{
	cpu_set_t old;
	pin_to_this_cpu(&old);		/* this CPU's slot keeps the block (malloc_extent_pcp.h) */
	char *p = malloc(SMALL_EXTENT);
	CHECK(p != NULL);
	memset(p, 1, SMALL_EXTENT);
	size_t before = kept_bytes();
	free(p);
	CHECK_EQ(kept_bytes(), before + SMALL_EXTENT);
	long faults = minor_faults();
	char *q = malloc(SMALL_EXTENT);
	memset(q, 2, SMALL_EXTENT);
	CHECK((uintptr_t)q == (uintptr_t)p);
	CHECK(minor_faults() - faults < 4);	/* no page of it faulted in again */
	CHECK_EQ(kept_bytes(), before);
	CHECK_EQ(malloc_usable_size(q), SMALL_EXTENT);
	free(q);
	/* A smaller size does not take this CPU's kept block: its slot keeps one size. */
	q = malloc(SMALL_EXTENT - 3 * 4096);
	CHECK((uintptr_t)q != (uintptr_t)p);
	CHECK_EQ(malloc_usable_size(q), SMALL_EXTENT - 3 * 4096);
	free(q);
	/* A calloc of a size freed before takes the kept block and clears it, as glibc's. */
	q = calloc(1, SMALL_EXTENT);
	CHECK((uintptr_t)q == (uintptr_t)p);
	for (size_t i = 0; i < SMALL_EXTENT; i++)
		if (q[i]) {
			CHECK(!"calloc'ed extent not zero");
			break;
		}
	free(q);
	malloc_trim(0);
	CHECK_EQ(kept_bytes(), 0);
	unpin(&old);
}

/*
 * No kept block of the size asked for: a larger one in the bins is cut to
 * it (the tail goes to the buddy lists), rather than fresh pages taken.
 */
static void larger_kept_extent_is_cut(void)
{
	cpu_set_t old;
	pin_to_this_cpu(&old);
	size_t larger = SMALL_EXTENT + 4 * 4096, asked = SMALL_EXTENT + 4096;
	char *a = OPAQUE(malloc(SMALL_EXTENT)), *b = OPAQUE(malloc(larger));
	CHECK(a && b);
	memset(b, 3, larger);
	size_t before = kept_bytes();
	free(a);	/* this CPU's slot */
	free(b);	/* the bins */
	CHECK_EQ(kept_bytes(), before + SMALL_EXTENT + larger);
	char *c = malloc(asked);
	CHECK((uintptr_t)c == (uintptr_t)b);
	CHECK_EQ(malloc_usable_size(c), asked);
	CHECK_EQ(kept_bytes(), before + SMALL_EXTENT);	/* the cut tail is no kept block */
	free(c);
	malloc_trim(0);
	CHECK_EQ(kept_bytes(), 0);
	unpin(&old);
}

/*
 * A block that grows in place takes fresh pages as a new block would: the
 * kept blocks give back as many first, or they would lift the peak RSS
 * (sqlite3's doubling array grew beside a kept 2 MiB).
 */
static void growing_in_place_gives_kept_back(void)
{
	cpu_set_t old;
	pin_to_this_cpu(&old);
	malloc_trim(0);
	size_t page = 4096, small = 8 * page, larger = 12 * page;
	char *a = OPAQUE(malloc(small)), *b = OPAQUE(malloc(larger));
	/*
	 * 17 pages: a block of 32, its last 15 given back.  Grown to 24 (cut
	 * 16 + 8) it stays where it is: its start is aligned for the new cut
	 * and the 7 pages after it are free.
	 */
	char *g = OPAQUE(malloc(17 * page));
	CHECK(a && b && g);
	memset(a, 1, small);
	memset(b, 1, larger);
	memset(g, 1, 17 * page);
	free(a);	/* this CPU's slot */
	free(b);	/* the bins */
	CHECK_EQ(kept_bytes(), small + larger);
	char *h = realloc(g, 24 * page);
	CHECK(h == g);
	CHECK(kept_bytes() <= small + larger - 7 * page);	/* 7 fresh pages: as many kept went back */
	free(h);
	malloc_trim(0);
	CHECK_EQ(kept_bytes(), 0);
	unpin(&old);
}

/*
 * Many blocks freed: a bin keeps EXTENT_BIN_SLOTS, all bins
 * EXTENT_BINS_MAX_PAGES; and each CPU one of up to 1 MiB beside them
 * (malloc_extent_pcp.h).
 */
static void bins_are_bounded(void)
{
	enum { NR = 3 * EXTENT_BIN_SLOTS };
	static char *p[NR];
	cpu_set_t old;
	pin_to_this_cpu(&old);		/* one CPU's slot */
	for (int i = 0; i < NR; i++)
		CHECK((p[i] = malloc(SMALL_EXTENT)) != NULL);
	for (int i = 0; i < NR; i++)
		free(p[i]);
	unpin(&old);
	size_t kept = kept_bytes();
	CHECK(kept > 0);
	CHECK(kept <= (size_t)(EXTENT_BIN_SLOTS + 1) * SMALL_EXTENT);
	malloc_trim(0);
	CHECK_EQ(kept_bytes(), 0);

	/* 4 MiB blocks (untouched: no RSS), the order-10 bin: the byte bound first. */
	enum { BIG = 4 << 20, NR_BIG = 2 * (EXTENT_BINS_MAX_PAGES * 4096 / BIG) };
	static char *b[NR_BIG];
	for (int i = 0; i < NR_BIG; i++)
		CHECK((b[i] = malloc(BIG)) != NULL);
	for (int i = 0; i < NR_BIG; i++)
		free(b[i]);
	kept = kept_bytes();
	CHECK(kept > 0);
	CHECK(kept <= EXTENT_BINS_MAX_PAGES * 4096);
	malloc_trim(0);
	CHECK_EQ(kept_bytes(), 0);
}

/* Any page of it in memory?  A failed mincore answers yes. */
static bool resident(const void *p, size_t len)
{
	return resident_pages(p, len) != 0;
}

/*
 * Blocks that wait a decay period go back to the OS.  No speed assumed:
 * an extent free looks at the time; it is repeated until the kept bytes
 * fall to the one block the loop itself keeps, or a minute has passed.
 */
static void decay_gives_back(void)
{
	enum { NR = 32 };
	static char *p[NR];
	for (int i = 0; i < NR; i++) {
		CHECK((p[i] = malloc(SMALL_EXTENT)) != NULL);
		memset(p[i], 3, SMALL_EXTENT);
	}
	char *other = malloc(SMALL_EXTENT);	/* the loop's block, not among p[] */
	cpu_set_t old;
	pin_to_this_cpu(&old);
	for (int i = 0; i < NR; i++)
		free(p[i]);
	CHECK(kept_bytes() >= NR * SMALL_EXTENT);
	struct timespec start, now, pause = { 0, 5 * 1000000L };
	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		free(other);	/* runs the decay's check */
		other = malloc(SMALL_EXTENT);
		if (kept_bytes() == 0)
			break;
		nanosleep(&pause, NULL);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (now.tv_sec - start.tv_sec < 60);
	CHECK_EQ(kept_bytes(), 0);
	int still = 0;
	for (int i = 0; i < NR; i++)
		if (p[i] != other && resident(p[i], SMALL_EXTENT))
			still++;
	CHECK_EQ(still, 0);
	free(other);
	malloc_trim(0);
	unpin(&old);
}

/* A free of a kept block is a double free, however long ago it was kept. */
static void bad_frees_of_kept_blocks(void)
{
	/*
	 * A block of another size, taken now: taking fresh pages later
	 * would empty the bins first (to keep the peak).  Its first free
	 * gives it back; it is taken again from fresh pages, then kept.
	 */
	cpu_set_t old;
	pin_to_this_cpu(&old);
	char *q = malloc(256 << 10);
	free(q);
	q = malloc(256 << 10);
	char *p = malloc(SMALL_EXTENT);
	free(p);
	EXPECT_ONE_REPORT(free(OPAQUE(p)));
	EXPECT_ONE_REPORT(free(OPAQUE(p + 4096)));	/* inside it */
	EXPECT_ONE_REPORT(free(OPAQUE(p + 16)));
	/* 300 frees of the other size push it out of the last frees' record. */
	for (int i = 0; i < 300; i++) {
		free(q);
		q = malloc(256 << 10);
	}
	free(q);
	CHECK(kept_bytes() >= SMALL_EXTENT);	/* still in its bin */
	EXPECT_ONE_REPORT(free(OPAQUE(p)));
	void *r = (void *)1;
	EXPECT_ONE_REPORT(r = realloc(OPAQUE(p), 100));
	CHECK(r == NULL);
	/* Kept once, not twice: two mallocs get two blocks. */
	char *a = malloc(SMALL_EXTENT), *b = malloc(SMALL_EXTENT);
	CHECK(a != b);
	memset(a, 1, SMALL_EXTENT);
	memset(b, 2, SMALL_EXTENT);
	free(a);
	free(b);
	malloc_trim(0);
	unpin(&old);
}

static volatile int stop_churn;

static void *churn(void *arg)
{
	size_t size = (size_t)(uintptr_t)arg;
	while (!__atomic_load_n(&stop_churn, __ATOMIC_RELAXED)) {
		char *p = malloc(size);
		if (p)
			p[0] = 1;
		free(p);
	}
	return NULL;
}

/* fork() while other threads take and put blocks: the child's bins work. */
static void fork_while_threads_use_bins(void)
{
	pthread_t t[2];
	stop_churn = 0;
	pthread_create(&t[0], NULL, churn, (void *)(uintptr_t)SMALL_EXTENT);
	pthread_create(&t[1], NULL, churn, (void *)(uintptr_t)(256 << 10));
	for (int i = 0; i < 50; i++) {
		pid_t pid = fork();
		if (pid == 0) {
			alarm(30);	/* a bin lock left held would hang the child */
			for (int j = 0; j < 100; j++) {
				char *p = malloc(j % 2 ? SMALL_EXTENT : 256 << 10);
				if (!p)
					_exit(1);
				p[0] = 1;
				free(p);
			}
			_exit(0);
		}
		int status = 0;
		CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	__atomic_store_n(&stop_churn, 1, __ATOMIC_RELAXED);
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	malloc_trim(0);
}

int main(void)
{
	RUN(freed_extent_is_reused);
	RUN(larger_kept_extent_is_cut);
	RUN(growing_in_place_gives_kept_back);
	RUN(bins_are_bounded);
	RUN(decay_gives_back);
	RUN(bad_frees_of_kept_blocks);
	RUN(fork_while_threads_use_bins);
	return check_done();
}
