// SPDX-License-Identifier: MIT
/*
 * bench_stacktrace.c - what one capture of 16 frames costs, DEPTH calls
 * deep (a program's frames under malloc's), by four unwinders:
 *   save    stack_trace_save(): unwind_fast(), what tracking uses (the
 *           CFI walker on x86-64, its rules cached)
 *   backtrace  glibc's backtrace() (unwind_backtrace()), what it used before
 *   unwind  _Unwind_Backtrace() called directly (libgcc_s, the same tables)
 *   fp      a frame-pointer walk (valid only through code that keeps them:
 *           this file does, libc and libslub do not)
 * and depot: stack_depot_save() of a stack it already holds (the common case).
 *
 *   bench_stacktrace [MODE [ROUNDS]]    ns per capture, every mode by default
 * Instructions: valgrind --tool=callgrind --toggle-collect=measure
 *   bench_stacktrace MODE 1000, the total Ir / 1000 (bench/run_stacktrace.sh).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unwind.h>

#include "stack/stackdepot.h"
#include "stack/stacktrace.h"

#define DEPTH 24
#define FRAMES 16

struct unwind_state {
	uintptr_t *store;
	unsigned int n, size;
};

static _Unwind_Reason_Code one_frame(struct _Unwind_Context *ctx, void *arg)
{
	struct unwind_state *s = arg;
	if (s->n == s->size)
		return _URC_END_OF_STACK;
	s->store[s->n++] = (uintptr_t)_Unwind_GetIP(ctx);
	return _URC_NO_REASON;
}

static __attribute__((noinline)) unsigned int unwind_save(uintptr_t *store, unsigned int size)
{
	struct unwind_state s = { store, 0, size };
	_Unwind_Backtrace(one_frame, &s);
	return s.n;
}

/* The frames stack_trace_save() asked of backtrace(): its own two and @size. */
static __attribute__((noinline)) unsigned int backtrace_save(uintptr_t *store, unsigned int size)
{
	void *frames[FRAMES + 2];
	int n = unwind_backtrace(frames, (int)size + 2);
	for (int i = 2; i < n; i++)
		store[i - 2] = (uintptr_t)frames[i];
	return n > 2 ? (unsigned int)n - 2 : 0;
}

static __attribute__((noinline)) unsigned int fp_save(uintptr_t *store, unsigned int size)
{
	uintptr_t *fp = __builtin_frame_address(0);
	unsigned int n = 0;
	while (n < size && fp) {
		uintptr_t *next = (uintptr_t *)fp[0];
		store[n++] = fp[1];
		if (next <= fp || (uintptr_t)next - (uintptr_t)fp > (1 << 20))
			break;	/* not a frame of ours: stop */
		fp = next;
	}
	return n;
}

static const char *mode;
static long rounds;
static volatile unsigned int sink;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static __attribute__((noinline)) unsigned int capture_loop(const char *m, long n)
{
	uintptr_t f[FRAMES];
	unsigned int got = 0;
	depot_stack_handle_t h = 0;
	if (!strcmp(m, "depot"))
		h = stack_depot_save(f, stack_trace_save(f, FRAMES, 0));
	for (long i = 0; i < n; i++) {
		if (!strcmp(m, "save"))
			got = stack_trace_save(f, FRAMES, 0);
		else if (!strcmp(m, "backtrace"))
			got = backtrace_save(f, FRAMES);
		else if (!strcmp(m, "unwind"))
			got = unwind_save(f, FRAMES);
		else if (!strcmp(m, "fp"))
			got = fp_save(f, FRAMES);
		else
			got = stack_depot_save(f, FRAMES) == h ? FRAMES : 0;
	}
	return got;
}

/* The loop as callgrind counts it (--toggle-collect=measure), warm-up apart. */
static __attribute__((noinline)) unsigned int measure(const char *m, long n)
{
	return capture_loop(m, n) + sink;
}

static void run(const char *m)
{
	capture_loop(m, 100);	/* warm: unwind tables found and faulted in */
	uint64_t t0 = now_ns();
	unsigned int got = measure(m, rounds);
	uint64_t t1 = now_ns();
	printf("%-9s %3u frames  %7.1f ns per capture\n", m, got, (double)(t1 - t0) / rounds);
}

/* DEPTH nested calls, then the captures (each frame keeps its frame pointer). */
static __attribute__((noinline)) unsigned int dive(int depth)
{
	if (depth > 0)
		return dive(depth - 1) + sink;
	static const char *const all[] = { "save", "backtrace", "unwind", "fp", "depot" };
	for (unsigned int i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (!mode || !strcmp(mode, all[i]))
			run(all[i]);
	return 0;
}

int main(int argc, char **argv)
{
	mode = argc > 1 ? argv[1] : NULL;
	rounds = argc > 2 ? atol(argv[2]) : 200000;
	stack_trace_prime();
	uintptr_t f[FRAMES];
	unwind_save(f, 1);	/* libgcc_s's own first-use work, outside the timing */
	return (int)dive(DEPTH);
}
