/* SPDX-License-Identifier: MIT */
/*
 * start.h - start-up of the whole library, once, on first use, and the
 * fork() handlers: each layer registers its start step and its fork hooks
 * with base (slub_initcall()), and base runs them in order (start.c).  So
 * start-up calls go down the layers, never up.
 *
 * Start order: options from the environment, the report file, fault
 * injection, the OS and CPU checks (base); the page allocator (page).
 * After it slub_setup() answers -EBUSY.
 */
#ifndef SLUB_START_H
#define SLUB_START_H

#include <stdbool.h>

#include "base/compiler.h"
#include "base/os.h"

extern __hidden int slub_started;
/* Nonzero when start-up found the system unusable (wrong page size). */
extern __hidden int slub_unusable;

/* Run the registered start steps, once (under options_lock). */
__hidden void slub_init_slow(void);

static inline void slub_ensure_init(void)
{
	if (unlikely(!__atomic_load_n(&slub_started, __ATOMIC_ACQUIRE)))
		slub_init_slow();
}

/*
 * Start-up order, first first: the layers' order.  Each step runs under
 * options_lock, before slub_started is set.
 */
enum slub_init_level {
	INIT_NONE,
	INIT_BASE,	/* options, report file, fault injection, OS checks */
	INIT_PAGE,	/* the zones */
	INIT_SLAB,	/* what the slab layer sets up before its first cache (KFENCE's pool) */
	NR_INIT_LEVELS
};

/*
 * The fork lock order, outermost first: prepare hooks run in it, parent
 * and child hooks the other way round.  Not the layers' order: the slab
 * layer's locks are outside options_lock, which start-up holds outside
 * the page allocator's.
 */
enum slub_fork_level {
	FORK_NONE,
	FORK_AGENT,		/* child only, last: it may start a thread, which allocates */
	FORK_SLAB,		/* the caches' locks */
	FORK_OPTIONS,		/* options_lock */
	FORK_PAGE,		/* the zones' and per-CPU lists' locks (once started) */
	FORK_DECAY_THREAD,	/* child only */
	FORK_REPORT,		/* innermost: reports come with any lock held */
	NR_FORK_LEVELS
};

typedef void (*fork_hook_fn)(void);
typedef int (*atfork_fn)(fork_hook_fn prepare, fork_hook_fn parent, fork_hook_fn child);

/* What one layer (or file) registers; any member may be left out. */
struct slub_initcall {
	enum slub_init_level init_level;
	void (*init)(void);
	enum slub_fork_level fork_level;
	fork_hook_fn fork_prepare, fork_parent, fork_child;
	/*
	 * The pthread_atfork to register the handlers with, lazily: the
	 * malloc library's (malloc_fork.c).  Without one they are registered
	 * at load with the platform's.
	 */
	atfork_fn atfork;
};

/*
 * Register at link time, not in a constructor: a preloaded malloc may
 * start the library before any constructor has run.  The pointers go in
 * section slub_initcall, which the linker gathers from every object in
 * the image (start.c walks it between __start_ and __stop_).
 */
#define slub_initcall(id, ...)							\
	static const struct slub_initcall id = { __VA_ARGS__ };		\
	static const struct slub_initcall *const id##_entry			\
		__attribute__((used, section("slub_initcall"))) = &id

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

static inline void slub_fork_handlers_check(void)
{
	if (likely(__atomic_load_n(&slub_fork_handlers, __ATOMIC_ACQUIRE) == FORK_HANDLERS_READY))
		return;
	if (!os_single_threaded())
		slub_fork_handlers_register(false);
}

#endif
