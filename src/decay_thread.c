/*
 * decay_thread.c - slub_decay_thread: a thread that gives free pages back
 * while the program makes no allocator call.
 *
 * Without it the decay and the dirty bound run on the allocator's own
 * calls, so a process that frees a lot and then sleeps (a server between
 * bursts) keeps those pages resident until its next call.  The thread
 * looks at each zone as a free would, every eighth of slub_decay_ms while
 * free pages may be resident and every slub_decay_ms otherwise; once a zone
 * has not changed for a whole decay period it also empties the per-CPU
 * page lists into it, for the decay to take later.  Off by default: a
 * thread makes every process multi-threaded, which costs the
 * single-threaded slow paths their lock skipping (slub.c).
 *
 * Started once per process, where starting a thread is safe: the library's
 * constructor (SLUB_OPTIONS names it) or slub_setup(), never from inside
 * an allocation (the loader or pthread_create() itself may be allocating).
 * It waits for start-up, which the program's first call brings (the
 * constructor does not start the allocator: slub_setup() must still work),
 * and then obeys the options in force.  A forked child runs without it
 * until it execs.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "decay_thread.h"
#include "init.h"
#include "options.h"
#include "os.h"
#include "page_alloc.h"
#include "report.h"

/* The pid that has the thread: a forked child has another one. */
static pid_t decay_thread_pid;
static pthread_mutex_t decay_thread_lock = PTHREAD_MUTEX_INITIALIZER;

/* The malloc library's idle work (its cache of extent mappings); none in libslub.so. */
__attribute__((weak)) void slub_malloc_idle_tick(uint64_t now_ms)
{
	(void)now_ms;
}

static void sleep_ms(uint64_t ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts))
		;
}

static void *decay_thread_main(void *arg)
{
	(void)arg;
	/*
	 * Started by slub_setup(), it may run before the allocator does: the
	 * zones are made at start-up, which the program's first call brings
	 * (not this thread: options may still come).
	 */
	while (!__atomic_load_n(&slub_started, __ATOMIC_ACQUIRE))
		sleep_ms(10);
	/* SLUB_OPTIONS, applied at start-up after slub_setup(), may have turned it off. */
	while (slub_opt(decay_thread) && slub_opt(decay_ms)) {
		uint64_t period = (uint64_t)slub_opt(decay_ms);
		uint64_t now = os_now_ms();
		bool pending = page_alloc_idle_tick(now);
		slub_malloc_idle_tick(now);
		sleep_ms(pending ? (period >= 8 ? period / 8 : 1) : period);
	}
	return NULL;
}

void slub_decay_thread_start(void)
{
	/* decay 0 gives pages back on every free already: nothing to wait for. */
	if (!slub_opt(decay_thread) || !slub_opt(decay_ms))
		return;
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
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		pthread_attr_setstacksize(&attr, 64 << 10);
		int err = pthread_create(&thread, &attr, decay_thread_main, NULL);
		pthread_attr_destroy(&attr);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (err) {
			slub_report("slub_decay_thread: cannot start the thread (error %d); "
				    "free pages go back on allocator calls only", err);
		} else {
			pthread_setname_np(thread, "slub-decay");
			decay_thread_pid = pid;
		}
	}
	pthread_mutex_unlock(&decay_thread_lock);
}
