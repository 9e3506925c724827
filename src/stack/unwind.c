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
/* unwind_fast() may walk: set by unwind_prime() and unwind_prime_walk(). */
static bool walk_primed;
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
	__atomic_store_n(&walk_primed, true, __ATOMIC_RELEASE);
	__atomic_store_n(&primed, true, __ATOMIC_RELEASE);
}

void unwind_prime_walk(void)
{
#if UNWIND_FAST
	if (__atomic_load_n(&walk_primed, __ATOMIC_ACQUIRE))
		return;
	cfi_cache_init();	/* an mmap; without it every frame is interpreted */
	__atomic_store_n(&walk_primed, true, __ATOMIC_RELEASE);
#endif
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
#include <errno.h>
#include <pthread.h>
#include <signal.h>

#include "base/maps.h"

/*
 * The walk reads only the stack it starts on, below that stack's end: a
 * wrong CFI (hand-written assembly, a JIT's frames) must not make it read
 * anywhere else, which may be unmapped.  This thread's own stack is found
 * once, in /proc/self/maps: the mapping holding both the walk's rsp and
 * the thread's descriptor (glibc puts it at the top of a thread's stack),
 * or the main thread's __libc_stack_end.  Another stack (a sigaltstack,
 * a makecontext() one) is looked up at each walk that starts on it.
 */
extern void *__libc_stack_end;
static __thread uintptr_t home_lo __attribute__((tls_model("initial-exec")));
static __thread uintptr_t home_hi __attribute__((tls_model("initial-exec")));

/*
 * The end of the stack holding @sp, from the signal stack or the maps; @sp
 * if unknown.  errno is kept: free() captures stacks too.
 */
static __noinline uintptr_t stack_end_slow(uintptr_t sp)
{
	stack_t alt;
	if (!sigaltstack(NULL, &alt) && (alt.ss_flags & SS_ONSTACK) &&
	    sp - (uintptr_t)alt.ss_sp < alt.ss_size)
		return (uintptr_t)alt.ss_sp + alt.ss_size;
	struct maps_entry e;
	char path[16];
	int saved_errno = errno;
	bool found = maps_find(sp, &e, path, sizeof(path)) && e.perms[0] == 'r';
	errno = saved_errno;
	if (!found)
		return sp;
	uintptr_t self = (uintptr_t)pthread_self(), main_end = (uintptr_t)__libc_stack_end;
	if (self - e.start < e.end - e.start || main_end - e.start < e.end - e.start) {
		home_lo = e.start;	/* the main thread's grows: its start moves down */
		home_hi = e.end;
	}
	return e.end;
}

/* The end of the stack the walk from @sp may read up to: the thread's own, as a rule. */
static inline uintptr_t stack_end(uintptr_t sp)
{
	if (likely(sp - home_lo < home_hi - home_lo))
		return home_hi;
	return stack_end_slow(sp);
}

__hidden int unwind_fast_walk(void **frames, int size, uintptr_t pc, uintptr_t sp, uintptr_t bp);
__hidden int unwind_fast_cfa_walk(void **frames, uintptr_t *cfas, int size, uintptr_t pc,
				  uintptr_t sp, uintptr_t bp);

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

/* unwind_fast_cfa(frames, cfas, size): the same, one argument later. */
__asm__(".text\n"
	".globl unwind_fast_cfa\n"
	".hidden unwind_fast_cfa\n"
	".type unwind_fast_cfa, @function\n"
	"unwind_fast_cfa:\n"
	".cfi_startproc\n"
#ifdef __CET__
	"endbr64\n"
#endif
	"movq (%rsp), %rcx\n"
	"leaq 8(%rsp), %r8\n"
	"movq %rbp, %r9\n"
	"jmp unwind_fast_cfa_walk\n"
	".cfi_endproc\n"
	".size unwind_fast_cfa, .-unwind_fast_cfa\n");

/* Both walks: primed, not already walking on this thread (the guard), bounded by its stack. */
static inline __attribute__((always_inline)) int guarded_walk(void **frames, uintptr_t *cfas,
							     int size, uintptr_t pc, uintptr_t sp,
							     uintptr_t bp)
{
	if (size <= 0 || !__atomic_load_n(&walk_primed, __ATOMIC_ACQUIRE) || !enter())
		return 0;
	int n = cfi_walk(frames, cfas, size, pc, sp, bp, stack_end(sp));
	leave();
	return n;
}

__attribute__((used)) int unwind_fast_walk(void **frames, int size, uintptr_t pc, uintptr_t sp,
					     uintptr_t bp)
{
	return guarded_walk(frames, NULL, size, pc, sp, bp);
}

__attribute__((used)) int unwind_fast_cfa_walk(void **frames, uintptr_t *cfas, int size,
						 uintptr_t pc, uintptr_t sp, uintptr_t bp)
{
	return guarded_walk(frames, cfas, size, pc, sp, bp);
}

/*
 * A faulting pc is not a return address: the walk looks its rule up at
 * pc - 1, which is still inside the faulting function unless the fault
 * is its first instruction (then the caller's frame may be skipped).
 */
int unwind_context(void **frames, int size, uintptr_t pc, uintptr_t sp, uintptr_t bp)
{
	return unwind_fast_walk(frames, size, pc + 1, sp, bp);
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
