/* SPDX-License-Identifier: MIT */
/*
 * unwind.h - how the library walks a thread's stack: unwind_fast(), its own
 * DWARF CFI walker on x86-64 (stack/unwind_cfi.h), else glibc's backtrace();
 * both readied once by unwind_prime(), behind a per-thread guard.
 *
 * backtrace() loads libgcc_s at its first call (dlopen: malloc and
 * dl_load_lock), so that call must come from a point where dlopen() is
 * safe: no allocator lock held, not inside the dynamic loader, not in a
 * signal handler.  The allocator cannot tell from inside malloc whether it
 * is at such a point, so nothing here primes by itself: until
 * unwind_prime() has run, unwind_backtrace() gives no frames.  After it,
 * backtrace() only unwinds (glibc 2.35+ finds unwind tables without a lock).
 * A frame-pointer walk would need no priming, but neither this library nor
 * a distribution's libc keeps frame pointers.
 */
#ifndef SLUB_UNWIND_H
#define SLUB_UNWIND_H

#include <stdint.h>

#include "base/compiler.h"

/*
 * The CFI walker needs x86-64 and glibc 2.35's _dl_find_object();
 * -DSLUB_UNWIND_BACKTRACE keeps backtrace() (a comparison build).
 */
#if defined(__x86_64__) && defined(__GLIBC__) && !defined(SLUB_UNWIND_BACKTRACE) && \
	(__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35))
#define UNWIND_FAST 1
/* unwind_fast()'s own frames before its caller's return address. */
#define UNWIND_OWN_FRAMES 0
#else
#define UNWIND_FAST 0
#define UNWIND_OWN_FRAMES 1	/* unwind_backtrace()'s */
#endif

/*
 * Ready the unwinder (at most once; later calls return at once).  Callers:
 * a constructor at load, slub_setup(), an API call made by the program.
 */
__hidden void unwind_prime(void);
__hidden bool unwind_primed(void);
/*
 * Ready unwind_fast() alone, where UNWIND_FAST: the CFI walker never
 * dlopens or allocates (its rule cache is an mmap), so a report path may
 * call this from anywhere, inside malloc too, to name the call it
 * reports; backtrace() stays unprimed.  A no-op without UNWIND_FAST.
 */
__hidden void unwind_prime_walk(void);

/*
 * backtrace() into @frames (@size at most); frames[0] is the return address
 * into unwind_backtrace() itself, frames[1] the one into its caller.  0
 * frames before unwind_prime(), or when this thread is already unwinding
 * (backtrace() calling malloc, a signal handler that interrupted an
 * unwind): never a recursive unwind.
 */
__hidden int unwind_backtrace(void **frames, int size);

/*
 * The same stack, with the same guard, at a fraction of the cost (about 40
 * instructions a frame once its return address's rule is cached): frames[0]
 * is the return address into unwind_fast()'s caller.  It stops at a signal
 * frame, where the CFI says what it cannot follow (expressions: glibc's
 * own few hand-written frames) and where a read would leave the stack it
 * started on (wrong CFI), and never allocates, locks or dlopens.
 * backtrace() (unwind_backtrace()) where UNWIND_FAST is 0.
 */
#if UNWIND_FAST
__hidden int unwind_fast(void **frames, int size);
/* unwind_fast() with each frame's CFA in @cfas: the rsp its caller returns with (0: not found). */
__hidden int unwind_fast_cfa(void **frames, uintptr_t *cfas, int size);
/*
 * The stack of an interrupted context (a signal handler's ucontext): its
 * @pc first, then its callers, walked from its @sp and @bp with the same
 * guard and bounds.  Without the CFI walker: 0 frames.
 */
__hidden int unwind_context(void **frames, int size, uintptr_t pc, uintptr_t sp, uintptr_t bp);
#else
static inline int unwind_fast(void **frames, int size)
{
	return unwind_backtrace(frames, size);
}

static inline int unwind_context(void **frames, int size, uintptr_t pc, uintptr_t sp, uintptr_t bp)
{
	(void)frames, (void)size, (void)pc, (void)sp, (void)bp;
	return 0;
}
static inline int unwind_fast_cfa(void **frames, uintptr_t *cfas, int size)
{
	(void)frames, (void)cfas, (void)size;
	return 0;
}
#endif

#endif
