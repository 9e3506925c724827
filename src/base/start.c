// SPDX-License-Identifier: MIT
/*
 * start.c - the start-up registry: slub_init_slow() runs the start steps
 * the layers registered (slub_initcall(), start.h), once, in their order;
 * the fork() handlers run their fork hooks in the lock order; and base's
 * own step (options, report file, fault injection, OS checks).
 */
#define _GNU_SOURCE
#include "base/start.h"

#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>

#include <slub.h>
#include "base/fault_inject.h"
#include "base/numa.h"
#include "base/options.h"
#include "base/os.h"
#include "base/report.h"

int slub_started;
int slub_unusable;
/* Start-up came before the environment existed (a very early malloc). */
static bool started_without_environ;

/* Every object's slub_initcall() entries, in link order (the linker's bounds). */
extern const struct slub_initcall *const __start_slub_initcall[] __hidden;
extern const struct slub_initcall *const __stop_slub_initcall[] __hidden;

#define for_each_initcall(c, pos)						\
	for (const struct slub_initcall *const *pos = __start_slub_initcall;	\
	     pos < __stop_slub_initcall && ((c) = *pos, true); pos++)

/* Base's step: under options_lock, first. */
static void base_init(void)
{
	/* secure_getenv: a setuid program must not take file names from us. */
	started_without_environ = environ == NULL;
	const char *env = secure_getenv("SLUB_OPTIONS");
	/* Quietly first: reports about options belong in slub_report_file. */
	if (env)
		options_parse(env, "SLUB_OPTIONS", true);
	report_init();
	if (env)
		options_parse(env, "SLUB_OPTIONS", false);
	fault_inject_init();
	os_init();
	numa_init();
	int ps = os_check_page_size();
	if (ps) {
		slub_report("system page size is %d, libslub is built for %lu; every allocation will fail",
			    ps, PAGE_SIZE);
		slub_unusable = 1;
	}
	if (!os_has_cmpxchg16b()) {
		slub_report("this CPU lacks cmpxchg16b, which the per-CPU freelists need; every allocation will fail");
		slub_unusable = 1;
	}
}
slub_initcall(base_initcall, .init_level = INIT_BASE, .init = base_init);

void slub_init_slow(void)
{
	slub_fork_handlers_check();
	pthread_mutex_lock(&options_lock);
	if (!__atomic_load_n(&slub_started, __ATOMIC_RELAXED)) {
		const struct slub_initcall *c;
		for (int level = INIT_NONE + 1; level < NR_INIT_LEVELS; level++)
			for_each_initcall(c, pos)
				if (c->init_level == (enum slub_init_level)level && c->init)
					c->init();
		__atomic_store_n(&slub_started, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&options_lock);
}

/* ---- fork ------------------------------------------------------------------- */

/*
 * Each layer's locks in the lock order (enum slub_fork_level), taken
 * outermost first; the child makes them all new: a lock held by another
 * thread at fork time would never be released.
 *
 * One triple of handlers, registered once per process; but a child forked
 * while another thread of its parent was registering cannot know whether
 * that call was made, and registers again.  So the handlers count their
 * calls in one fork (fork runs them all on the forking thread): the first
 * prepare takes the locks, the last parent or child handler deals with
 * them, and the others do nothing.
 */
/* Prepare handlers run minus parent (or child) handlers run, in this fork. */
static __thread unsigned int fork_depth __attribute__((tls_model("initial-exec")));

/* The hooks at @which (an offset in struct slub_initcall), in or against the lock order. */
static void run_fork_hooks(size_t which, bool outermost_first)
{
	const struct slub_initcall *c;
	for (int i = FORK_NONE + 1; i < NR_FORK_LEVELS; i++) {
		int level = outermost_first ? i : NR_FORK_LEVELS - i;
		for_each_initcall(c, pos) {
			fork_hook_fn hook = *(const fork_hook_fn *)((const char *)c + which);
			if (c->fork_level == (enum slub_fork_level)level && hook)
				hook();
		}
	}
}

static void fork_prepare(void)
{
	if (fork_depth++)
		return;
	run_fork_hooks(offsetof(struct slub_initcall, fork_prepare), true);
}

static void fork_parent(void)
{
	if (--fork_depth)
		return;
	run_fork_hooks(offsetof(struct slub_initcall, fork_parent), false);
}

static void fork_child(void)
{
	if (--fork_depth)
		return;
	run_fork_hooks(offsetof(struct slub_initcall, fork_child), false);
}

int slub_fork_handlers;

/* A layer's own pthread_atfork (the malloc library's, lazily), else none. */
static atfork_fn registered_atfork(void)
{
	const struct slub_initcall *c;
	for_each_initcall(c, pos)
		if (c->atfork)
			return c->atfork;
	return NULL;
}

/* The process that set REGISTERING (all its threads share the pid). */
static pid_t fork_registrant_pid;
/* This thread is registering: what pthread_atfork calls must not wait. */
static __thread bool fork_registrant __attribute__((tls_model("initial-exec")));

/*
 * pthread_atfork() may allocate; the slow paths it reaches see this thread
 * registering.
 */
static void register_now(void)
{
	atfork_fn atfork = registered_atfork();
	fork_registrant = true;
	if ((atfork ? atfork : pthread_atfork)(fork_prepare, fork_parent, fork_child))
		slub_report("pthread_atfork failed: a fork while other threads allocate may hang the child");
	fork_registrant = false;
	__atomic_store_n(&slub_fork_handlers, FORK_HANDLERS_READY, __ATOMIC_RELEASE);
}

void slub_fork_handlers_register(bool wait)
{
	for (;;) {
		int state = __atomic_load_n(&slub_fork_handlers, __ATOMIC_ACQUIRE);
		if (state == FORK_HANDLERS_READY || fork_registrant)
			return;
		if (state == FORK_HANDLERS_NONE) {
			/* Before the claim: whoever sees REGISTERING sees our pid. */
			__atomic_store_n(&fork_registrant_pid, getpid(), __ATOMIC_RELAXED);
			if (__atomic_compare_exchange_n(&slub_fork_handlers, &state,
							FORK_HANDLERS_REGISTERING, false,
							__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
				register_now();
				return;
			}
			continue;
		}
		/* REGISTERING in a parent that forked meanwhile: nobody here will finish. */
		if (__atomic_load_n(&fork_registrant_pid, __ATOMIC_RELAXED) != getpid()) {
			__atomic_compare_exchange_n(&slub_fork_handlers, &state, FORK_HANDLERS_NONE,
						    false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
			continue;
		}
		if (!wait)
			return;
		sched_yield();
	}
}

/*
 * At load, before any handler the program registers later (prepare
 * handlers run last-registered-first, so a program's handler that
 * allocates runs while our locks are still free); a layer with its own
 * pthread_atfork keeps that order lazily (start.h).  The locks are
 * statically valid before start-up.  Before init.c's constructor, which
 * may start threads.
 */
__attribute__((constructor(101))) static void start_at_load(void)
{
	if (!registered_atfork())
		slub_fork_handlers_register(true);
	/*
	 * A preloaded allocator can start before glibc has set environ; then
	 * SLUB_OPTIONS was never seen.  Options cannot change once caches
	 * exist, so say so rather than run with settings nobody chose.
	 */
	if (started_without_environ && secure_getenv("SLUB_OPTIONS"))
		slub_report("SLUB_OPTIONS came after the first allocation (no environment yet); "
			    "running with the defaults");
}
