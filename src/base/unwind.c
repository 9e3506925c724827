// SPDX-License-Identifier: MIT
/*
 * unwind.c - priming of glibc's backtrace() and the per-thread guard
 * against unwinding inside an unwind (unwind.h).
 */
#define _GNU_SOURCE
#include "base/unwind.h"

#include <execinfo.h>

static bool primed;
/* This thread is inside backtrace(): a nested call must not unwind. */
static __thread bool unwinding __attribute__((tls_model("initial-exec")));

static bool enter(void)
{
	if (unwinding)
		return false;
	unwinding = true;
	/* Set before backtrace() starts, as a signal handler on this thread sees it. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	return true;
}

static void leave(void)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	unwinding = false;
}

void unwind_prime(void)
{
	void *frame;
	if (__atomic_load_n(&primed, __ATOMIC_ACQUIRE) || !enter())
		return;
	backtrace(&frame, 1);
	leave();
	__atomic_store_n(&primed, true, __ATOMIC_RELEASE);
}

bool unwind_primed(void)
{
	return __atomic_load_n(&primed, __ATOMIC_ACQUIRE);
}

__noinline int unwind_backtrace(void **frames, int size)
{
	if (!__atomic_load_n(&primed, __ATOMIC_ACQUIRE) || !enter())
		return 0;
	int n = backtrace(frames, size);
	leave();
	return n;
}
