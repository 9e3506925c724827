// SPDX-License-Identifier: MIT
/*
 * decay_thread.c - slub_decay_thread: a thread that gives free pages back
 * while the program makes no allocator call.
 *
 * Without it the decay and the dirty bound run on the allocator's own
 * calls, so a process that frees a lot and then sleeps (a server between
 * bursts) keeps those pages resident until its next call.  The thread
 * looks at each zone as a free would, every eighth of slub_decay_ms while
 * blocks wait for the decay, every slub_decay_ms while other free pages may
 * still go back, and less and less often (down to once in 8 periods) when
 * nothing could; and it empties each CPU's page list that saw no allocation
 * or free for a decay period into its zone (where the decay or the dirty
 * bound can take the pages); and flushes the sheaves of each CPU slot that
 * did not change since its last look (sheaf.c), so that their slabs can empty.
 * Off by default: a thread makes every process multi-threaded, which costs
 * the single-threaded slow paths their lock skipping (slub.c).
 *
 * Started once per process, where starting a thread is safe: the library's
 * constructor (SLUB_OPTIONS names it) or slub_setup(), never from inside
 * an allocation (the loader or pthread_create() itself may be allocating).
 * It waits for start-up, which the program's first call brings (the
 * constructor does not start the allocator: slub_setup() must still work),
 * and then obeys the options in force.  A forked child has no thread: the
 * fork copies only the calling one.  Only a child forked before start-up
 * could make its own, by calling slub_setup().  A process with a second
 * thread cannot enter a new user namespace (unshare(CLONE_NEWUSER)), so
 * such programs (unshare -U, bwrap) fail under this option.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "page/decay_thread.h"
#include "base/start.h"
#include "base/options.h"
#include "base/os.h"
#include "page/page_alloc.h"
#include "base/report.h"

/* The pid that has the thread: a forked child has another one. */
static pid_t decay_thread_pid;
static pthread_mutex_t decay_thread_lock = PTHREAD_MUTEX_INITIALIZER;

/* The malloc library's idle work (its cache of extent mappings); none in libslub.so. */
__attribute__((weak)) bool slub_malloc_idle_tick(uint64_t now_ms)
{
	(void)now_ms;
	return false;
}

/* The slab layer's idle work (its sheaves); none while no cache was made. */
__attribute__((weak)) bool slub_slab_idle_tick(uint64_t now_ms)
{
	(void)now_ms;
	return false;
}

static void sleep_ms(uint64_t ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts))
		;
}

bool slub_decay_thread_wanted(void)
{
	/* decay 0 gives pages back on every free already: nothing to wait for. */
	return slub_opt(decay_thread) && slub_opt(decay_ms);
}

static void *decay_thread_main(void *arg)
{
	(void)arg;
	/*
	 * Started by slub_setup(), it may run before the allocator does: the
	 * zones are made at start-up, which the program's first call brings
	 * (not this thread: options may still come).
	 */
	for (uint64_t ms = 10; !__atomic_load_n(&slub_started, __ATOMIC_ACQUIRE);
	     ms = ms < 1000 ? 2 * ms : ms)
		sleep_ms(ms);
	/* SLUB_OPTIONS, applied at start-up after slub_setup(), may have turned it off. */
	uint64_t idle_sleep = 0;
	while (slub_decay_thread_wanted()) {
		uint64_t period = (uint64_t)slub_opt(decay_ms);
		uint64_t now = os_now_ms();
		/* Sheaves first: objects flushed to their slabs may leave pages to decay. */
		bool sheaves = slub_slab_idle_tick(now);
		enum idle_work work = page_alloc_idle_tick(now);
		if ((slub_malloc_idle_tick(now) || sheaves) && work == IDLE_NOTHING)
			work = IDLE_LATER;
		/*
		 * With nothing to give back it sleeps longer each time, up to 8
		 * periods: a sleeping program is woken 4 times a second at first,
		 * then once in 2 s (by default).  The first frees after that wait
		 * that much longer for their decay.
		 */
		if (work == IDLE_NOTHING)
			idle_sleep = idle_sleep ? (idle_sleep * 2 < 8 * period ? idle_sleep * 2 : 8 * period)
						: period;
		else
			idle_sleep = 0;
		sleep_ms(work == IDLE_DECAY_SOON ? (period >= 8 ? period / 8 : 1)
			 : work == IDLE_LATER ? period : idle_sleep);
	}
	return NULL;
}

/* In a forked child: the start lock made new (a thread may have held it). */
static void decay_thread_fork_child(void)
{
	pthread_mutex_init(&decay_thread_lock, NULL);
}
slub_initcall(decay_thread_initcall, .fork_level = FORK_DECAY_THREAD,
	      .fork_child = decay_thread_fork_child);

void slub_decay_thread_start(void)
{
	pthread_mutex_lock(&decay_thread_lock);
	pid_t pid = getpid();
	if (decay_thread_pid != pid) {
		/* A fork while the thread holds a lock needs our handlers: now, not lazily. */
		slub_fork_handlers_register(true);
		pthread_attr_t attr;
		pthread_t thread;
		sigset_t all, old;
		/* Signals are the program's: the thread takes none. */
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		pthread_attr_init(&attr);
		/* Address space only; glibc takes static TLS out of it too. */
		pthread_attr_setstacksize(&attr, 256 << 10);
		int err = pthread_create(&thread, &attr, decay_thread_main, NULL);
		pthread_attr_destroy(&attr);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (err) {
			slub_warn("slub_decay_thread: cannot start the thread (error %d); "
				  "free pages go back on allocator calls only", err);
		} else {
			/* Named while joinable: a detached thread may be gone already. */
			pthread_setname_np(thread, "slub-decay");
			pthread_detach(thread);
			decay_thread_pid = pid;
		}
	}
	pthread_mutex_unlock(&decay_thread_lock);
}
