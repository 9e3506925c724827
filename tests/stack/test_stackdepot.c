// SPDX-License-Identifier: MIT
/*
 * test_stackdepot.c - the stack depot: one handle per distinct stack, the
 * frames back from a handle, nothing from a handle it never gave, the same
 * handles from 8 threads saving overlapping stacks at once, a full depot
 * (said once, old stacks still found), errno kept, and a forked child.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sys/wait.h>

#include "check.h"
#include "stack/stackdepot.h"

/* A made-up stack: @nr frames that differ with @seed. */
static void fake_stack(uintptr_t *f, unsigned int nr, unsigned int seed)
{
	for (unsigned int i = 0; i < nr; i++)
		f[i] = 0x7f0000400000UL + seed * 0x1000UL + i * 0x13;
}

static bool same_frames(depot_stack_handle_t h, const uintptr_t *f, unsigned int nr)
{
	const uintptr_t *got;
	return stack_depot_fetch(h, &got) == nr && !memcmp(got, f, nr * sizeof(*f));
}

static void dedup_and_fetch(void)
{
	uintptr_t a[16], b[16], a_short[16];
	fake_stack(a, 16, 1);
	fake_stack(b, 16, 2);
	fake_stack(a_short, 15, 1);
	unsigned long stacks = stack_depot_nr_stacks();
	size_t bytes = stack_depot_bytes();
	depot_stack_handle_t ha = stack_depot_save(a, 16);
	depot_stack_handle_t hb = stack_depot_save(b, 16);
	depot_stack_handle_t hs = stack_depot_save(a_short, 15);
	CHECK(ha && hb && hs);
	CHECK(ha != hb && ha != hs && hb != hs);
	CHECK_EQ(stack_depot_save(a, 16), ha);
	uintptr_t copy[16];
	memcpy(copy, a, sizeof(a));
	CHECK_EQ(stack_depot_save(copy, 16), ha);	/* by value, not by address */
	CHECK_EQ(stack_depot_nr_stacks(), stacks + 3);
	CHECK(stack_depot_bytes() > bytes);
	CHECK(same_frames(ha, a, 16));
	CHECK(same_frames(hb, b, 16));
	CHECK(same_frames(hs, a_short, 15));
	CHECK_EQ(stack_depot_save(a, 0), 0);
	CHECK_EQ(stack_depot_save(NULL, 3), 0);
}

static void long_stacks_are_cut(void)
{
	uintptr_t big[DEPOT_MAX_FRAMES + 10];
	fake_stack(big, DEPOT_MAX_FRAMES + 10, 3);
	depot_stack_handle_t h = stack_depot_save(big, DEPOT_MAX_FRAMES + 10);
	CHECK(h);
	CHECK(same_frames(h, big, DEPOT_MAX_FRAMES));
	CHECK_EQ(stack_depot_save(big, DEPOT_MAX_FRAMES), h);
}

static void garbage_handles(void)
{
	uintptr_t a[8];
	fake_stack(a, 8, 4);
	depot_stack_handle_t h = stack_depot_save(a, 8);
	const uintptr_t *got = (const uintptr_t *)1;
	CHECK_EQ(stack_depot_fetch(0, &got), 0);
	CHECK(got == NULL);
	CHECK_EQ(stack_depot_fetch(0xffffffffu, &got), 0);
	CHECK_EQ(stack_depot_fetch(1, &got), 0);		/* pool bits 0 */
	CHECK_EQ(stack_depot_fetch(h + 1, &got), 0);		/* inside a record */
	CHECK_EQ(stack_depot_fetch(h + 2, &got), 0);
	CHECK_EQ(stack_depot_fetch(h + (1u << 22), &got), 0);	/* a pool never mapped */
	/* Anything else: no frames, or the frames of a stack the depot holds. */
	size_t used = stack_depot_bytes();
	uint32_t x = 12345, first_pool = used < (1u << 20) ? (uint32_t)used : 1u << 20;
	int real = 0;
	for (int i = 0; i < 200000; i++) {
		x = x * 1103515245u + 12345u;
		/* Half anywhere, half into the records of the first pool. */
		depot_stack_handle_t g = i & 1 ? (x >> 8) & ((1u << 24) - 1)
					       : 1u << 17 | (x >> 8) % (first_pool / 8);
		unsigned int nr = stack_depot_fetch(g, &got);
		if (nr) {
			real++;
			CHECK_EQ(stack_depot_save(got, nr), g);
		}
	}
	fprintf(stderr, "   %d of 200000 random handles were real\n", real);
}

static void keeps_errno(void)
{
	uintptr_t a[4];
	fake_stack(a, 4, 5);
	errno = 4321;
	CHECK(stack_depot_save(a, 4));
	CHECK(stack_depot_save(a, 4));
	CHECK_EQ(errno, 4321);
}

/* 8 threads save the same STACKS stacks, each in its own order. */
#define THREADS 8
#define STACKS 2000
static depot_stack_handle_t seen[THREADS][STACKS];

static void *saver(void *arg)
{
	unsigned int t = (unsigned int)(uintptr_t)arg;
	uintptr_t f[12];
	for (unsigned int k = 0; k < STACKS; k++) {
		unsigned int i = (k * 7919u + t * 131u) % STACKS;	/* 7919 is prime */
		fake_stack(f, 4 + i % 8, 1000 + i);
		seen[t][i] = stack_depot_save(f, 4 + i % 8);
	}
	return NULL;
}

static void threads_agree(void)
{
	pthread_t th[THREADS];
	unsigned long stacks = stack_depot_nr_stacks();
	for (unsigned int t = 0; t < THREADS; t++)
		CHECK(!pthread_create(&th[t], NULL, saver, (void *)(uintptr_t)t));
	for (unsigned int t = 0; t < THREADS; t++)
		pthread_join(th[t], NULL);
	int disagree = 0, wrong = 0;
	uintptr_t f[12];
	for (unsigned int i = 0; i < STACKS; i++) {
		for (unsigned int t = 1; t < THREADS; t++)
			disagree += seen[t][i] != seen[0][i];
		fake_stack(f, 4 + i % 8, 1000 + i);
		wrong += !seen[0][i] || !same_frames(seen[0][i], f, 4 + i % 8);
	}
	CHECK_EQ(disagree, 0);
	CHECK_EQ(wrong, 0);
	CHECK_EQ(stack_depot_nr_stacks(), stacks + STACKS);
}

/* A child made while other threads save: the depot has no lock to be left held. */
static void *keep_saving(void *arg)
{
	uintptr_t f[6];
	for (unsigned int i = 0; !__atomic_load_n((int *)arg, __ATOMIC_RELAXED); i++) {
		fake_stack(f, 6, 50000 + i % 5000);
		stack_depot_save(f, 6);
	}
	return NULL;
}

static void fork_child_saves(void)
{
	int stop = 0;
	pthread_t th;
	CHECK(!pthread_create(&th, NULL, keep_saving, &stop));
	for (int round = 0; round < (UNDER_TSAN ? 2 : 20); round++) {
		pid_t pid = fork();
		if (pid == 0) {
			uintptr_t f[6];
			bool ok = true;
			for (unsigned int i = 0; i < 2000 && ok; i++) {
				fake_stack(f, 6, 90000 + i);
				depot_stack_handle_t h = stack_depot_save(f, 6);
				ok = h && h == stack_depot_save(f, 6) && same_frames(h, f, 6);
			}
			_exit(ok ? 0 : 1);
		}
		int status = -1;
		CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	pthread_join(th, NULL);
}

static void full_depot(void)
{
	uintptr_t a[16], f[16];
	fake_stack(a, 16, 6);
	depot_stack_handle_t ha = stack_depot_save(a, 16);
	size_t old = stack_depot_set_limit(stack_depot_bytes() + 2000);
	CHECK_EQ(old, DEPOT_MAX_BYTES);
	unsigned long errors = slub_errors();
	int saved = 0, refused = 0;
	for (unsigned int i = 0; i < 100; i++) {
		fake_stack(f, 16, 200000 + i);
		if (stack_depot_save(f, 16))
			saved++;
		else
			refused++;
	}
	CHECK(saved > 0 && saved <= 2000 / (int)(16 * sizeof(uintptr_t)));
	CHECK(refused > 0);
	CHECK_EQ(slub_errors(), errors + 1);		/* said once */
	CHECK(last_report_has("stack depot full"));
	CHECK_EQ(stack_depot_save(a, 16), ha);		/* old stacks still found */
	stack_depot_set_limit(old);
	fake_stack(f, 16, 300000);
	CHECK(stack_depot_save(f, 16));
}

int main(void)
{
	RUN(dedup_and_fetch);
	RUN(long_stacks_are_cut);
	RUN(garbage_handles);
	RUN(keeps_errno);
	RUN(threads_agree);
	RUN(fork_child_saves);
	RUN(full_depot);
	fprintf(stderr, "   depot: %lu stacks, %zu bytes\n", stack_depot_nr_stacks(),
		stack_depot_bytes());
	return check_done();
}
