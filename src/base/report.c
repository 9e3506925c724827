// SPDX-License-Identifier: MIT
/*
 * report.c - format into a stack buffer, write(2) once, count the event;
 * with slub_abort_on_error, stop the program after an event (not a warning).
 */
#define _GNU_SOURCE
#include "base/report.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <slub.h>
#include "base/options.h"
#include "base/start.h"
#include "base/os.h"

static int report_fd = STDERR_FILENO;
static unsigned long report_events;
static unsigned long report_bugs;

/* The last event's text, for tests; a seqlock-free best effort copy. */
static char last_event[SLUB_REPORT_LINE];
static int last_event_lock;

void report_init(void)
{
	const char *path = slub_opt_str(report_file);
	if (!path || !*path)
		return;
	int cancel = os_cancel_off();
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	os_cancel_restore(cancel);
	if (fd < 0) {
		slub_warn("cannot open slub_report_file=%s (%s); reporting to stderr",
			  path, strerror(errno));
		return;
	}
	WRITE_ONCE(report_fd, fd);
}

/* A failed write (fd closed, EPIPE, ENOSPC) drops the rest of the report. */
void report_write(int fd, const char *buf, size_t len)
{
	int cancel = os_cancel_off();
	while (len) {
		ssize_t n = write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;	/* cancellation must still be restored */
		buf += n;
		len -= (size_t)n;
	}
	os_cancel_restore(cancel);
}

/*
 * A block: the lines of one multi-line report (slab_debug's BUG reports),
 * kept together against other threads' reports by one lock, innermost of
 * all (reports come with allocator locks held).  The owner may nest.  Under
 * slub_abort_on_error the block ends before the program stops.
 */
static pthread_mutex_t report_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static __thread unsigned int block_depth __attribute__((tls_model("initial-exec")));
static __thread bool block_event __attribute__((tls_model("initial-exec")));

void slub_report_begin(void)
{
	int cancel = os_cancel_off();
	pthread_mutex_lock(&report_lock);
	os_cancel_restore(cancel);
	block_depth++;
}

void slub_report_end(void)
{
	bool stop = !--block_depth && block_event;
	if (stop)
		block_event = false;
	pthread_mutex_unlock(&report_lock);
	if (stop && READ_ONCE(slub_opt(abort_on_error)))
		report_abort(READ_ONCE(report_fd));
}

/* fork(): the report lock is the innermost lock; taken last, made new in the child. */
static void report_fork_prepare(void)
{
	pthread_mutex_lock(&report_lock);
}

static void report_fork_parent(void)
{
	pthread_mutex_unlock(&report_lock);
}

static void report_fork_child(void)
{
	pthread_mutex_t fresh = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
	memcpy(&report_lock, &fresh, sizeof(fresh));
	block_depth = 0;
	block_event = false;
}
slub_initcall(report_initcall, .fork_level = FORK_REPORT, .fork_prepare = report_fork_prepare,
	      .fork_parent = report_fork_parent, .fork_child = report_fork_child);

enum report_kind {
	REPORT_CONT, REPORT_EVENT, REPORT_WARNING, REPORT_RAW, REPORT_RAW_EVENT, REPORT_BUG,
};

static void vreport(enum report_kind kind, const char *fmt, va_list ap)
{
	char buf[SLUB_REPORT_LINE];
	bool count = kind == REPORT_EVENT || kind == REPORT_WARNING || kind == REPORT_RAW_EVENT ||
		     kind == REPORT_BUG;
	int saved_errno = errno;	/* reports must not disturb errno */
	/* Events carry the library's name (a preloaded program has others); kernel-format lines do not. */
	int pre = kind == REPORT_EVENT || kind == REPORT_WARNING ? snprintf(buf, sizeof(buf), "slub: ") : 0;
	int n = vsnprintf(buf + pre, sizeof(buf) - 1 - (size_t)pre, fmt, ap);
	if (n < 0)
		n = 0;
	n += pre;
	if ((size_t)n > sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	if (n == 0 || buf[n - 1] != '\n')
		buf[n++] = '\n';
	buf[n] = 0;
	if (kind == REPORT_EVENT || kind == REPORT_BUG)
		__atomic_add_fetch(&report_bugs, 1, __ATOMIC_RELAXED);
	if (count) {
		__atomic_add_fetch(&report_events, 1, __ATOMIC_RELAXED);
		if (!__atomic_exchange_n(&last_event_lock, 1, __ATOMIC_ACQUIRE)) {
			memcpy(last_event, buf, (size_t)n + 1);
			__atomic_store_n(&last_event_lock, 0, __ATOMIC_RELEASE);
		}
	}
	int fd = READ_ONCE(report_fd);
	report_write(fd, buf, (size_t)n);
	if (kind == REPORT_EVENT || kind == REPORT_RAW_EVENT || kind == REPORT_BUG) {
		if (block_depth)
			block_event = true;	/* stop at the block's end */
		else if (READ_ONCE(slub_opt(abort_on_error)))
			report_abort(fd);
	}
	errno = saved_errno;
}

void slub_vreport(bool count, const char *fmt, va_list ap)
{
	vreport(count ? REPORT_EVENT : REPORT_CONT, fmt, ap);
}

#define REPORT_FN(name, kind)				\
	void name(const char *fmt, ...)			\
	{						\
		va_list ap;				\
		va_start(ap, fmt);			\
		vreport(kind, fmt, ap);			\
		va_end(ap);				\
	}
REPORT_FN(slub_report, REPORT_EVENT)
REPORT_FN(slub_report_cont, REPORT_CONT)
REPORT_FN(slub_warn, REPORT_WARNING)
REPORT_FN(slub_report_line, REPORT_RAW)
REPORT_FN(slub_report_error, REPORT_RAW_EVENT)
REPORT_FN(slub_report_bug, REPORT_BUG)

/* Set at load by the stack layer (stack/stacktrace.c), read on report paths. */
static void (*site_writer)(void);

void report_set_site_writer(void (*write_site)(void))
{
	__atomic_store_n(&site_writer, write_site, __ATOMIC_RELEASE);
}

void slub_report_call(const char *fmt, ...)
{
	va_list ap;
	/* One block: under slub_abort_on_error the program stops after the site, not before. */
	slub_report_begin();
	va_start(ap, fmt);
	vreport(REPORT_EVENT, fmt, ap);
	va_end(ap);
	void (*writer)(void) = __atomic_load_n(&site_writer, __ATOMIC_ACQUIRE);
	if (writer) {
		int saved_errno = errno;
		writer();
		errno = saved_errno;
	}
	slub_report_end();
}

unsigned long slub_report_bugs(void)
{
	return __atomic_load_n(&report_bugs, __ATOMIC_RELAXED);
}

void slub_report_count(void)
{
	__atomic_add_fetch(&report_events, 1, __ATOMIC_RELAXED);
	if (block_depth)
		block_event = true;
}

#define RATELIMIT_INTERVAL_MS 5000
#define RATELIMIT_BURST 10

bool slub_ratelimit(struct slub_ratelimit *rs)
{
	uint64_t now = os_now_ms();
	uint64_t start = __atomic_load_n(&rs->window_start_ms, __ATOMIC_RELAXED);
	if (now - start >= RATELIMIT_INTERVAL_MS &&
	    __atomic_compare_exchange_n(&rs->window_start_ms, &start, now, false,
					__ATOMIC_RELAXED, __ATOMIC_RELAXED))
		__atomic_store_n(&rs->printed, 0, __ATOMIC_RELAXED);
	return __atomic_fetch_add(&rs->printed, 1, __ATOMIC_RELAXED) < RATELIMIT_BURST;
}

void slub_report_last(char *buf, size_t size)
{
	if (!size)
		return;
	while (__atomic_exchange_n(&last_event_lock, 1, __ATOMIC_ACQUIRE))
		sched_yield();	/* test hook only; writers never wait */
	snprintf(buf, size, "%s", last_event);
	__atomic_store_n(&last_event_lock, 0, __ATOMIC_RELEASE);
}

unsigned long slub_errors(void)
{
	return __atomic_load_n(&report_events, __ATOMIC_RELAXED);
}
