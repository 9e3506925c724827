/* SPDX-License-Identifier: MIT */
/*
 * unwind.h - the one way the library walks a thread's stack: glibc's
 * backtrace(), readied once by unwind_prime(), behind a per-thread guard.
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

#include "base/compiler.h"

/*
 * Ready the unwinder (at most once; later calls return at once).  Callers:
 * a constructor at load, slub_setup(), an API call made by the program.
 */
__hidden void unwind_prime(void);
__hidden bool unwind_primed(void);

/*
 * backtrace() into @frames (@size at most); frames[0] is the return address
 * into unwind_backtrace()'s caller.  0 frames before unwind_prime(), or when
 * this thread is already unwinding (backtrace() calling malloc, a signal
 * handler that interrupted an unwind): never a recursive unwind.
 */
__hidden int unwind_backtrace(void **frames, int size);

#endif
