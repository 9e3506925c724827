/* SPDX-License-Identifier: MIT */
/*
 * report.h - the one report sink.
 *
 * Every message the allocator prints goes through here: formatted into a
 * stack buffer, written with one write(2) to stderr or to the file named by
 * `slub_report_file=`.  It never allocates and takes no allocator lock, so it
 * is safe from any path, including inside malloc and with zone locks held.
 * Each slub_report() is one event for slub_errors(); slub_report_cont()
 * adds detail lines to the event before it without counting.
 */
#ifndef SLUB_REPORT_H
#define SLUB_REPORT_H

#include <stdarg.h>
#include <stdint.h>
#include "base/compiler.h"

#define SLUB_REPORT_LINE 512

__hidden void slub_report(const char *fmt, ...) __printf(1, 2);
__hidden void slub_report_cont(const char *fmt, ...) __printf(1, 2);
/*
 * A warning: an event like slub_report(), but one the program is told of
 * otherwise (an allocation that fails returns NULL) or that concerns the
 * set-up (an option, a file), so slub_abort_on_error never stops on it.
 */
__hidden void slub_warn(const char *fmt, ...) __printf(1, 2);
__hidden void slub_vreport(bool count, const char *fmt, va_list ap);
/*
 * An event about a call the program made into the allocator (a free of
 * what is no block, a double free): slub_report(), then where the call
 * was made ("slub:   at function+off/size [module]", "by" its callers),
 * from the site writer the stack layer registers.  The stack is taken
 * here, on the report path only: the good calls pay nothing for it.
 */
__hidden void slub_report_call(const char *fmt, ...) __printf(1, 2);
/* Register the writer of slub_report_call()'s site lines; no malloc, no lock. */
__hidden void report_set_site_writer(void (*write_site)(void));
/*
 * Errors reported so far: each event (slub_report(), slub_report_call())
 * and each BUG banner (slub_report_bug()), not the FIX and detail lines
 * that go with them, nor warnings: what an ERROR SUMMARY counts.
 */
__hidden unsigned long slub_report_bugs(void);

/*
 * Multi-line reports in the kernel's format (slab debugging): between
 * begin and end no other thread's report interleaves, and
 * slub_abort_on_error stops the program at the end, not at the first line.
 * slub_report_error() is an event and slub_report_line() a detail line,
 * both without the "slub: " prefix; slub_report_count() counts an event
 * that prints nothing of its own (the kernel's KUnit error counter).
 */
__hidden void slub_report_begin(void);
__hidden void slub_report_end(void);
__hidden void slub_report_error(const char *fmt, ...) __printf(1, 2);
/* slub_report_error() that is a BUG banner: one more for slub_report_bugs(). */
__hidden void slub_report_bug(const char *fmt, ...) __printf(1, 2);
__hidden void slub_report_line(const char *fmt, ...) __printf(1, 2);
__hidden void slub_report_count(void);

/*
 * The kernel's rate limit for warnings: at most 10 per 5 seconds per
 * state.  Lock-free (approximate under races, which is all it needs to be).
 */
struct slub_ratelimit {
	uint64_t window_start_ms;
	unsigned int printed;
};
__hidden bool slub_ratelimit(struct slub_ratelimit *rs);

/* write(2) all of @buf to @fd, retrying, not a cancellation point. */
__hidden void report_write(int fd, const char *buf, size_t len);

/* Open the file named by the slub_report_file option, if any. */
__hidden void report_init(void);

/*
 * slub_abort_on_error: after an event, write the stack to @fd and abort()
 * without running the program's SIGABRT handler (report_abort.c).  The
 * stack comes from the writer the debug layer registers (it owns the
 * unwinder); without one the report says there is no stack.
 */
__hidden _Noreturn void report_abort(int fd);
/* Register the stack writer report_abort() calls; async-signal-safe, no malloc. */
__hidden void report_set_stack_writer(void (*write_stack)(int fd));

/* Test hook: copy the text of the last counted event into @buf. */
__hidden void slub_report_last(char *buf, size_t size);

#endif
