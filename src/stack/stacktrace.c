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

#include <slub.h>
#include "base/maps.h"
#include "base/options.h"
#include "base/report.h"

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

/* Small buffers: the reporting thread's stack may be small too. */
#define DUMP_FRAMES 48
#define DUMP_NAME 1024		/* longer module paths are cut */

/*
 * Name the mapping @addr lies in: "path+0xoff" (addr2line -e path 0xoff),
 * or "?" if none.  From /proc/self/maps: backtrace_symbols_fd() would call
 * dladdr(), which takes dl_load_lock, and a thread inside dlopen() may hold
 * it while it waits for an allocator lock we hold.
 */
static void dump_frame_name(uintptr_t addr, char *out, size_t size)
{
	struct maps_entry e;
	char path[DUMP_NAME - 32];	/* room for the offset */
	if (!maps_find(addr, &e, path, sizeof(path)))
		snprintf(out, size, "?");
	else
		snprintf(out, size, "%s+%#lx", *path ? path : "[anonymous]",
			 (unsigned long)(addr - e.start + e.offset));
}

/* report_abort()'s stack writer: no allocation, no lock. */
static void stack_trace_dump(int fd)
{
	char line[DUMP_NAME + 64];
	void *frames[DUMP_FRAMES];

	if (!unwind_primed()) {
		static const char none[] = "slub: no stack: the report came before start-up "
					   "prepared the unwinder\n";
		report_write(fd, none, sizeof(none) - 1);
		return;
	}
	int n = unwind_backtrace(frames, DUMP_FRAMES);
	static const char head[] = "slub: slub_abort_on_error: stack of the reporting thread:\n";
	report_write(fd, head, sizeof(head) - 1);
	for (int i = 3; i < n; i++) {	/* 0-2: unwind_backtrace, here, write_stack */
		char name[DUMP_NAME];
		dump_frame_name((uintptr_t)frames[i], name, sizeof(name));
		int len = snprintf(line, sizeof(line), "  #%-2d %p %s\n", i, frames[i], name);
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
	pthread_mutex_lock(&options_lock);
	bool unwind = slub_opt(abort_on_error) || slub_debug_any(SLAB_STORE_USER) ||
		      slub_opt(kfence_sample_every) || slub_opt(kfence_sample_interval);
	pthread_mutex_unlock(&options_lock);
	if (unwind)
		unwind_prime();	/* unlocked: it may allocate */
}
