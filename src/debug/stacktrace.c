// SPDX-License-Identifier: MIT
/*
 * stacktrace.c - stack_trace_save(): the capture on every tracked
 * allocation and free (stacktrace.h).  Naming is stacktrace_symbol.c.
 */
#define _GNU_SOURCE
#include "debug/stacktrace.h"

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
