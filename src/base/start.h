/* SPDX-License-Identifier: MIT */
/*
 * init.h - start-up of the whole library, once, on first use.
 *
 * Order: options from the environment, the report file, the OS checks, the
 * page allocator.  After it slub_setup() answers -EBUSY.
 */
#ifndef SLUB_INIT_H
#define SLUB_INIT_H

#include <stdbool.h>

#include "base/compiler.h"
#include "base/os.h"

extern __hidden int slub_started;
/* Nonzero when start-up found the system unusable (wrong page size). */
extern __hidden int slub_unusable;

__hidden void slub_init_slow(void);

static inline void slub_ensure_init(void)
{
	if (unlikely(!__atomic_load_n(&slub_started, __ATOMIC_ACQUIRE)))
		slub_init_slow();
}

/*
 * fork() handlers (pthread_atfork): the allocator's locks, taken in order
 * before a fork and made new in the child.  They matter only once a second
 * thread may hold a lock at the fork; registering them costs a process
 * two 64 KiB windows of libc's text and data that a program which never
 * forks nor starts threads would not touch (128 KiB of its RSS).
 *
 * So libslub.so registers them at load, while libslub-malloc.so (x86-64,
 * glibc 2.34 and later: malloc_fork.c) registers them at the first of:
 *   - calloc() in a multi-threaded process: pthread_create() callocs the
 *     new thread's TLS vector after marking the process multi-threaded and
 *     before the thread runs, so no second thread exists yet: no race;
 *   - a slow path (every path that may take an allocator lock) in a
 *     multi-threaded process: a best-effort net for threads made some
 *     other way (one racing a fork may still hold a lock at it);
 *   - anyone else's pthread_atfork(), so that ours stay the oldest and run
 *     last: a program's prepare handler may allocate.
 * The child of a single-threaded fork needs nothing: no lock was held, and
 * the membarrier registration is inherited (os_membarrier_rseq registers
 * again should it not be).
 */
enum { FORK_HANDLERS_NONE, FORK_HANDLERS_REGISTERING, FORK_HANDLERS_READY };
extern __hidden int slub_fork_handlers;
/*
 * Register the handlers unless done, under way in this thread, or (without
 * @wait) under way in another one.  Any thread, any time.
 */
__hidden void slub_fork_handlers_register(bool wait);
/* The platform's pthread_atfork; the malloc library's bypasses its own. */
__hidden int slub_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void));
/* True in the malloc library where it can register lazily. */
__hidden bool slub_fork_handlers_lazy(void);

static inline void slub_fork_handlers_check(void)
{
	if (likely(__atomic_load_n(&slub_fork_handlers, __ATOMIC_ACQUIRE) == FORK_HANDLERS_READY))
		return;
	if (!os_single_threaded())
		slub_fork_handlers_register(false);
}

#endif
