// SPDX-License-Identifier: MIT
/*
 * stacktrace.c - stack_trace_save(): the capture on every tracked
 * allocation and free (stacktrace.h).  Naming is stacktrace_symbol.c.
 */
#define _GNU_SOURCE
#include "debug/stacktrace.h"

/* Frames asked of the unwinder at most, ours and the skipped ones included. */
#define STACK_TRACE_MAX 64
/* frames[0] is in unwind_backtrace(), frames[1] in stack_trace_save(). */
#define OWN_FRAMES 2

unsigned int stack_trace_save(uintptr_t *store, unsigned int size, unsigned int skip)
{
	void *frames[STACK_TRACE_MAX];
	unsigned int first = OWN_FRAMES + skip;
	if (!size || first >= STACK_TRACE_MAX)
		return 0;
	unsigned int want = first + size < STACK_TRACE_MAX ? first + size : STACK_TRACE_MAX;
	int n = unwind_backtrace(frames, (int)want);
	if (n <= (int)first)
		return 0;
	unsigned int got = (unsigned int)n - first;
	for (unsigned int i = 0; i < got; i++)
		store[i] = (uintptr_t)frames[first + i];
	return got;
}
