// SPDX-License-Identifier: MIT
/*
 * unwind.c - priming of glibc's backtrace() and of the CFI walker's cache,
 * the per-thread guard against unwinding inside an unwind, and the entry
 * of unwind_fast() (unwind.h).
 */
#define _GNU_SOURCE
#include "stack/unwind.h"

#include <execinfo.h>

#include "stack/unwind_cfi.h"

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
#if UNWIND_FAST
	cfi_cache_init();
#endif
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

#if UNWIND_FAST
__hidden int unwind_fast_walk(void **frames, int size, uintptr_t pc, uintptr_t sp, uintptr_t bp);

/*
 * unwind_fast(frames, size): its return address, the rsp its caller returns
 * with and the caller's rbp (untouched here) are exactly the state of the
 * caller's frame; a tail jump hands them to the walk, which returns to the
 * caller itself.
 */
__asm__(".text\n"
	".globl unwind_fast\n"
	".hidden unwind_fast\n"
	".type unwind_fast, @function\n"
	"unwind_fast:\n"
	".cfi_startproc\n"
#ifdef __CET__
	"endbr64\n"
#endif
	"movq (%rsp), %rdx\n"
	"leaq 8(%rsp), %rcx\n"
	"movq %rbp, %r8\n"
	"jmp unwind_fast_walk\n"
	".cfi_endproc\n"
	".size unwind_fast, .-unwind_fast\n");

__attribute__((used)) int unwind_fast_walk(void **frames, int size, uintptr_t pc, uintptr_t sp,
					     uintptr_t bp)
{
	if (size <= 0 || !__atomic_load_n(&primed, __ATOMIC_ACQUIRE) || !enter())
		return 0;
	int n = cfi_walk(frames, size, pc, sp, bp);
	leave();
	return n;
}
#endif

#if UNWIND_FAST
#include <dlfcn.h>

/*
 * The rule cache is keyed by address: a library unloaded and another
 * loaded where it was would meet the old library's rules, and a wrong rule
 * reads the stack at a wrong place.  So dlclose() (ours, in front of
 * libc's, as heap profilers do it) empties the cache after the unload.
 */
__attribute__((visibility("default"))) int dlclose(void *handle)
{
	static int (*next)(void *);
	int (*real)(void *) = __atomic_load_n(&next, __ATOMIC_ACQUIRE);
	if (!real) {
		real = (int (*)(void *))dlsym(RTLD_NEXT, "dlclose");
		if (!real)
			return -1;
		__atomic_store_n(&next, real, __ATOMIC_RELEASE);
	}
	int ret = real(handle);
	cfi_cache_flush();
	return ret;
}
#endif
