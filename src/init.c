// SPDX-License-Identifier: MIT
/*
 * init.c - slub_init_slow(): bring the layers up in order, once.
 */
#define _GNU_SOURCE
#include "base/start.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <slub.h>
#include "agent/agent.h"
#include "page/decay_thread.h"
#include "base/fault_inject.h"
#include "base/options.h"
#include "base/os.h"
#include "page/page_alloc.h"
#include "base/report.h"
#include "stack/unwind.h"
#include "slab/core/slab.h"
#include "slab/core/slab_common.h"

int slub_started;
int slub_unusable;
/* Start-up came before the environment existed (a very early malloc). */
static bool started_without_environ;

/*
 * fork(): the slab layer's locks, then the options lock (start-up holds it
 * outermost of the page allocator's), then the page allocator's locks in
 * their order.  The child makes them all new: a lock held by another
 * thread at fork time would never be released.
 *
 * One triple of handlers, registered once per process; but a child forked
 * while another thread of its parent was registering cannot know whether
 * that call was made, and registers again.  So the handlers count their
 * calls in one fork (fork runs them all on the forking thread): the first
 * prepare takes the locks, the last parent or child handler deals with
 * them, and the others do nothing.
 */
/* Whether this fork's prepare took the page allocator's locks (set up yet?). */
static bool fork_took_pages;
/* Prepare handlers run minus parent (or child) handlers run, in this fork. */
static __thread unsigned int fork_depth __attribute__((tls_model("initial-exec")));

static void fork_prepare(void)
{
	if (fork_depth++)
		return;
	slab_fork_prepare();
	pthread_mutex_lock(&options_lock);
	/* Start-up sets slub_started under options_lock: stable here. */
	fork_took_pages = __atomic_load_n(&slub_started, __ATOMIC_RELAXED);
	if (fork_took_pages)
		page_alloc_fork_prepare();
	report_fork_prepare();	/* innermost: reports come with any lock held */
}

static void fork_parent(void)
{
	if (--fork_depth)
		return;
	report_fork_parent();
	if (fork_took_pages)
		page_alloc_fork_parent();
	pthread_mutex_unlock(&options_lock);
	slab_fork_parent();
}

static void fork_child(void)
{
	if (--fork_depth)
		return;
	report_fork_child();
	slub_decay_thread_fork_child();
	if (fork_took_pages)
		page_alloc_fork_child();
	pthread_mutex_init(&options_lock, NULL);
	slab_fork_child();
	/* Last: it may start a thread, which allocates. */
	slub_agent_fork_child();
}

int slub_fork_handlers;
/* Weak functions, not a weak constant: a compiler may fold the constant. */
__attribute__((weak)) bool slub_fork_handlers_lazy(void)
{
	return false;
}

__attribute__((weak)) int slub_atfork(void (*prepare)(void), void (*parent)(void),
				      void (*child)(void))
{
	return pthread_atfork(prepare, parent, child);
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
	fork_registrant = true;
	if (slub_atfork(fork_prepare, fork_parent, fork_child))
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
 * allocates runs while our locks are still free); the malloc library
 * keeps that order lazily (init.h).  The locks are statically valid
 * before start-up.
 */
__attribute__((constructor(101))) static void init_at_load(void)
{
	if (!slub_fork_handlers_lazy())
		slub_fork_handlers_register(true);
	/*
	 * A preloaded allocator can start before glibc has set environ; then
	 * SLUB_OPTIONS was never seen.  Options cannot change once caches
	 * exist, so say so rather than run with settings nobody chose.
	 */
	const char *env = secure_getenv("SLUB_OPTIONS");
	if (started_without_environ && env)
		slub_report("SLUB_OPTIONS came after the first allocation (no environment yet); "
			    "running with the defaults");
	/*
	 * A thread is made here or in slub_setup(), never inside an
	 * allocation.  Before start-up, SLUB_OPTIONS is parsed quietly now to
	 * know: start-up parses it again, after any slub_setup(), so it still
	 * wins, and reports what is wrong in it.
	 */
	if (env && (strstr(env, "slub_decay_thread") || strstr(env, "slub_agent"))) {
		pthread_mutex_lock(&options_lock);
		if (!__atomic_load_n(&slub_started, __ATOMIC_ACQUIRE))
			options_parse(env, "SLUB_OPTIONS", true);
		bool wanted = slub_decay_thread_wanted(), agent = slub_agent_wanted();
		pthread_mutex_unlock(&options_lock);
		if (wanted)
			slub_decay_thread_start();
		if (agent)
			slub_agent_start();
	}
}

void slub_init_slow(void)
{
	slub_fork_handlers_check();
	pthread_mutex_lock(&options_lock);
	if (!__atomic_load_n(&slub_started, __ATOMIC_RELAXED)) {
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
		page_alloc_init();
		__atomic_store_n(&slub_started, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&options_lock);
}

/* Options before start-up; it may start the decay thread and the agent. */
int slub_setup(const char *options)
{
	int ret = 0;
	bool start_thread = false, start_agent = false;
	slub_fork_handlers_check();
	pthread_mutex_lock(&options_lock);
	if (__atomic_load_n(&slub_started, __ATOMIC_ACQUIRE))
		ret = -EBUSY;
	else if (options && options_parse(options, "slub_setup", false))
		ret = -EINVAL;
	if (ret != -EBUSY)
		start_thread = slub_decay_thread_wanted();	/* read under the lock */
	if (ret != -EBUSY)
		start_agent = slub_agent_wanted();
	bool unwind = slub_opt(abort_on_error) || slub_debug_any(SLAB_STORE_USER);
	pthread_mutex_unlock(&options_lock);
	if (ret == -EBUSY)
		slub_warn("slub_setup(\"%s\"): too late, the allocator is running; ignored",
			  options ? options : "");
	/* A user's call is a safe place for both. */
	if (start_thread)
		slub_decay_thread_start();
	if (start_agent)
		slub_agent_start();
	if (unwind)
		unwind_prime();
	return ret;
}
