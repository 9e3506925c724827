// SPDX-License-Identifier: MIT
/*
 * stacktrace.c - stack_trace_save(): the capture on every tracked
 * allocation and free (stacktrace.h).  Naming is stacktrace_symbol.c.
 * Also, at load, this layer's part of start-up: the unwinder readied when
 * the options ask for stacks, and the stack writer slub_abort_on_error
 * calls (base/report.h) registered, so the base layer never calls up.
 */
#define _GNU_SOURCE
#include "stack/stacktrace.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <slub.h>
#include "base/maps.h"
#include "base/options.h"
#include "base/os.h"
#include "base/report.h"
#include "base/start.h"

/* Frames asked of the unwinder at most, ours and the skipped ones included. */
#define STACK_TRACE_MAX 64
/*
 * Frames before our caller's: the unwinder's (none for unwind_fast()) and
 * ours, as a rule; a sanitizer's backtrace() interceptor may add or hide
 * one, so the caller's frame is looked for by our return address among the
 * first few, and sanitizer builds of the backtrace() path ask for
 * INTERCEPTOR_FRAMES more.
 */
#define OWN_FRAMES (UNWIND_OWN_FRAMES + 1)
#define OWN_FRAMES_MAX 4
#if UNWIND_FAST
#define INTERCEPTOR_FRAMES 0
#elif defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define INTERCEPTOR_FRAMES 2
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define INTERCEPTOR_FRAMES 2
#endif
#endif
#ifndef INTERCEPTOR_FRAMES
#define INTERCEPTOR_FRAMES 0
#endif

unsigned int stack_trace_save(uintptr_t *store, unsigned int size, unsigned int skip)
{
	void *frames[STACK_TRACE_MAX];
	void *caller = __builtin_return_address(0);
	if (!size || OWN_FRAMES_MAX + skip >= STACK_TRACE_MAX)
		return 0;
	/* Frames cost (backtrace(): ~2000 instructions each): none beyond @size. */
	unsigned int want = OWN_FRAMES + INTERCEPTOR_FRAMES + skip + size;
	int n = unwind_fast(frames, want < STACK_TRACE_MAX ? (int)want : STACK_TRACE_MAX);
	unsigned int own = OWN_FRAMES;
	for (unsigned int i = 0; i < OWN_FRAMES_MAX && (int)i < n; i++)
		if (frames[i] == caller) {
			own = i;
			break;
		}
	unsigned int first = own + skip;
	if (n <= (int)first)
		return 0;
	unsigned int got = (unsigned int)n - first < size ? (unsigned int)n - first : size;
	for (unsigned int i = 0; i < got; i++)
		store[i] = (uintptr_t)frames[first + i];
	return got;
}

/* ---- the allocator's own frames ------------------------------------------------------ */

static pthread_mutex_t own_lock = PTHREAD_MUTEX_INITIALIZER;
static uintptr_t own_start, own_end;	/* written under own_lock, read relaxed */
/*
 * Linked into a program, the __cold functions: the linker puts them in
 * .text.unlikely, before the program's main, so they cannot widen the
 * span; each is its own range.
 */
#define OWN_COLD_MAX 8
static struct { uintptr_t start, end; } own_cold[OWN_COLD_MAX];
static unsigned int nr_own_cold;
static bool own_shared;			/* libslub is a shared object: its mapping is the span */
static pthread_once_t own_once = PTHREAD_ONCE_INIT;
/*
 * The layers' lists (stack_trace_add_own()), kept until the first frame
 * is asked about: a program that never takes a stack never reads
 * /proc/self/maps (at load that read brought in libc's stdio-free but
 * string and strtoul pages, some 60 KiB of every process's RSS).
 */
#define OWN_LISTS_MAX 4
static struct own_list {
	const void *const *functions;
	unsigned int nr;
	bool cold;
} own_lists[OWN_LISTS_MAX];
static unsigned int nr_own_lists;	/* under own_lock */
static bool own_found;			/* under own_lock: the lists were taken */

/*
 * own_lock is taken now at a process's first stack, in any thread: a fork
 * meanwhile must not leave the child's copy held.  Child only: a report
 * holds report.c's lock around its stack, so taking own_lock in a prepare
 * hook of that level would race it.
 */
static void stack_fork_child(void)
{
	pthread_mutex_init(&own_lock, NULL);
}
slub_initcall(stack_initcall, .fork_level = FORK_REPORT, .fork_child = stack_fork_child);

static void own_span(uintptr_t start, uintptr_t end)
{
	pthread_mutex_lock(&own_lock);
	uintptr_t lo = __atomic_load_n(&own_start, __ATOMIC_RELAXED);
	uintptr_t hi = __atomic_load_n(&own_end, __ATOMIC_RELAXED);
	if (!hi || start < lo)
		__atomic_store_n(&own_start, start, __ATOMIC_RELAXED);
	if (end > hi)
		__atomic_store_n(&own_end, end, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&own_lock);
}

static void add_own_function(const void *fn, bool cold)
{
	char name[320];
	uintptr_t start = (uintptr_t)fn;
	if (stack_trace_symbol(start, name, sizeof(name)) != STACK_SYM_FUNCTION)
		return;
	const char *size = strstr(name, "/0x");
	uintptr_t end = size ? start + strtoul(size + 3, NULL, 16) : start + 1;
	if (!cold) {
		own_span(start, end);
		return;
	}
	pthread_mutex_lock(&own_lock);
	unsigned int i = __atomic_load_n(&nr_own_cold, __ATOMIC_RELAXED);
	if (i < OWN_COLD_MAX) {
		own_cold[i].start = start;
		own_cold[i].end = end;
		__atomic_store_n(&nr_own_cold, i + 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&own_lock);
}

static void stack_trace_dump(int fd);
static void report_site(void);

static void add_own_list(const struct own_list *l)
{
	for (unsigned int i = 0; i < l->nr; i++)
		add_own_function(l->functions[i], l->cold);
}

/*
 * Once, at the first frame asked about: the shared object's text mapping,
 * or this layer's and the report sink's functions and the lists the other
 * layers gave.  The symbol lookups take no lock and no malloc (it may run
 * inside an allocation's capture).
 */
static void find_own_text(void)
{
	struct maps_entry e;
	char path[256];
	bool shared = maps_find((uintptr_t)&find_own_text, &e, path, sizeof(path)) &&
		      strstr(path, ".so");
	if (shared) {
		own_span(e.start, e.end);
		__atomic_store_n(&own_shared, true, __ATOMIC_RELEASE);
	}
	/* Taken with the flag set under one hold: a list given later is added by its giver. */
	struct own_list lists[OWN_LISTS_MAX];
	pthread_mutex_lock(&own_lock);
	unsigned int nr = nr_own_lists;
	memcpy(lists, own_lists, nr * sizeof(lists[0]));
	own_found = true;
	pthread_mutex_unlock(&own_lock);
	if (shared)
		return;
	static const void *const functions[] = {
		stack_trace_save, stack_trace_save_report, stack_trace_dump_report, stack_trace_dump,
		report_site, report_abort, report_write, slub_report_begin, slub_report, slub_report_error,
		slub_report_end, slub_report_call, slub_report_bug,
	};
	add_own_list(&(struct own_list){ functions, sizeof(functions) / sizeof(functions[0]), false });
	for (unsigned int i = 0; i < nr; i++)
		add_own_list(&lists[i]);
}

bool stack_trace_own_frame(uintptr_t addr)
{
	pthread_once(&own_once, find_own_text);
	if (addr >= __atomic_load_n(&own_start, __ATOMIC_RELAXED) &&
	    addr < __atomic_load_n(&own_end, __ATOMIC_RELAXED))
		return true;
	for (unsigned int i = 0, n = __atomic_load_n(&nr_own_cold, __ATOMIC_ACQUIRE); i < n; i++)
		if (addr >= own_cold[i].start && addr < own_cold[i].end)
			return true;
	return false;
}

void stack_trace_add_own(const void *const *functions, unsigned int nr, bool cold)
{
	struct own_list l = { functions, nr, cold };
	pthread_mutex_lock(&own_lock);
	bool found = own_found;
	if (!found) {
		if (nr_own_lists < OWN_LISTS_MAX)
			own_lists[nr_own_lists++] = l;
		else
			found = true;	/* no room: looked up now */
	}
	pthread_mutex_unlock(&own_lock);
	if (!found)
		return;
	pthread_once(&own_once, find_own_text);
	if (!__atomic_load_n(&own_shared, __ATOMIC_ACQUIRE))	/* else the mapping holds them */
		add_own_list(&l);
}

/* ---- stacks for reports ------------------------------------------------------------- */

unsigned int stack_trace_save_report(uintptr_t *store, unsigned int size)
{
	uintptr_t frames[STACK_TRACE_MAX - OWN_FRAMES_MAX - INTERCEPTOR_FRAMES - 1];
	unwind_prime_walk();
	unsigned int n = stack_trace_save(frames, sizeof(frames) / sizeof(frames[0]), 0);
	unsigned int first = 0, got = 0;
	while (first < n && stack_trace_own_frame(frames[first]))
		first++;
	for (; first + got < n && got < size; got++)
		store[got] = frames[first + got];
	return got;
}

/* Frames of a report's stack: as the kernel's dump_stack(), a deep one is cut. */
#define REPORT_FRAMES 32
/* Frames a release-mode report names: the call, then a few callers. */
#define SITE_FRAMES 4

void stack_trace_dump_report(const char *taint)
{
	uintptr_t frames[REPORT_FRAMES];
	char comm[17] = "";
	unsigned int n = stack_trace_save_report(frames, REPORT_FRAMES);
	prctl(PR_GET_NAME, comm);	/* no file read: a report may come from anywhere */
	slub_report_line("CPU: %u PID: %d TID: %d Comm: %s %s", os_current_cpu(), getpid(), gettid(),
			 comm, taint);
	slub_report_line("Call Trace:");
	if (n)
		stack_trace_print(frames, n, " ");
	else
		slub_report_line(" <no stack: the unwinder is not ready>");
}

/*
 * The report sink's site writer (base/report.h): after a release-mode
 * report of a bad call (a free of what is no block, a double free), where
 * the program made it, valgrind's way: "at" the call, "by" its callers.
 */
static void report_site(void)
{
	uintptr_t frames[SITE_FRAMES];
	char name[384];
	unsigned int n = stack_trace_save_report(frames, SITE_FRAMES);
	for (unsigned int i = 0; i < n; i++) {
		stack_trace_symbol(frames[i], name, sizeof(name));
		slub_report_cont("slub:   %s %s", i ? "by" : "at", name);
	}
}

/* Small buffers: the reporting thread's stack may be small too. */
#define DUMP_FRAMES 48

/*
 * report_abort()'s stack writer: no allocation, no lock.  From the
 * program's frame on, named as in every report (function+off/size
 * [module], or module+0xoff where no symbol covers it).
 */
static void stack_trace_dump(int fd)
{
	uintptr_t frames[DUMP_FRAMES];
	char line[512];

	unsigned int n = stack_trace_save_report(frames, DUMP_FRAMES);
	if (!n) {
		static const char none[] = "slub: no stack: the report came before start-up "
					   "prepared the unwinder\n";
		report_write(fd, none, sizeof(none) - 1);
		return;
	}
	static const char head[] = "slub: slub_abort_on_error: stack of the reporting thread:\n";
	report_write(fd, head, sizeof(head) - 1);
	for (unsigned int i = 0; i < n; i++) {
		char name[384];
		stack_trace_symbol(frames[i], name, sizeof(name));
		int len = snprintf(line, sizeof(line), "  #%-2u %s\n", i, name);
		report_write(fd, line, len < (int)sizeof(line) ? (size_t)len : sizeof(line) - 1);
	}
}

/*
 * After options_at_load() (base/options.c, priority 102) has read
 * SLUB_OPTIONS: tracking (slub_debug with U) takes stacks from the first
 * allocation on, and slub_abort_on_error prints one, so the unwinder is
 * readied here, outside any allocation (it may allocate: stack/unwind.h).
 */
__attribute__((constructor(103))) static void stack_trace_at_load(void)
{
	report_set_stack_writer(stack_trace_dump);
	report_set_site_writer(report_site);
	pthread_mutex_lock(&options_lock);
	bool unwind = slub_opt(abort_on_error) || slub_debug_any(SLAB_STORE_USER) ||
		      slub_opt(kfence_sample_every) || slub_opt(kfence_sample_interval);
	pthread_mutex_unlock(&options_lock);
	if (unwind)
		unwind_prime();	/* unlocked: it may allocate */
}
