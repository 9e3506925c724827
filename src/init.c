/*
 * init.c - slub_init_slow(): bring the layers up in order, once.
 */
#define _GNU_SOURCE
#include "init.h"

#include <stdlib.h>
#include <unistd.h>

#include <slub.h>
#include "options.h"
#include "os.h"
#include "page_alloc.h"
#include "report.h"

int slub_started;
int slub_unusable;
/* Start-up came before the environment existed (a very early malloc). */
static bool started_without_environ;

/*
 * fork(): the options lock first (start-up holds it outermost), then the
 * page allocator's locks in their order.  The child makes them all new:
 * a lock held by another thread at fork time would never be released.
 */
/* Whether this fork's prepare took the page allocator's locks (set up yet?). */
static bool fork_took_pages;

static void fork_prepare(void)
{
	pthread_mutex_lock(&options_lock);
	/* Start-up sets slub_started under options_lock: stable here. */
	fork_took_pages = __atomic_load_n(&slub_started, __ATOMIC_RELAXED);
	if (fork_took_pages)
		page_alloc_fork_prepare();
}

static void fork_parent(void)
{
	if (fork_took_pages)
		page_alloc_fork_parent();
	pthread_mutex_unlock(&options_lock);
}

static void fork_child(void)
{
	if (fork_took_pages)
		page_alloc_fork_child();
	pthread_mutex_init(&options_lock, NULL);
}

/*
 * Registered when the library loads, before any handler the program
 * registers later: prepare handlers run last-registered-first, so a
 * program's handler that allocates runs while our locks are still free.
 * The locks are statically valid before start-up.
 */
__attribute__((constructor(101))) static void register_fork_handlers(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	/*
	 * A preloaded allocator can start before glibc has set environ; then
	 * SLUB_OPTIONS was never seen.  Options cannot change once caches
	 * exist, so say so rather than run with settings nobody chose.
	 */
	if (started_without_environ && secure_getenv("SLUB_OPTIONS"))
		slub_report("SLUB_OPTIONS came after the first allocation (no environment yet); "
			    "running with the defaults");
}

void slub_init_slow(void)
{
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
