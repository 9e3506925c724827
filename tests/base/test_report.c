// SPDX-License-Identifier: MIT
/*
 * test_report.c - the report sink: one count per event, none per detail
 * line, the text as written, errno untouched, long lines cut cleanly, and
 * slub_report_file= sending everything to a file, no report a
 * cancellation point, a failed write leaving cancellation as it was, and
 * slub_abort_on_error: an event stops the program with its stack, a warning
 * does not, nor does an event without the option.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>

#include <slub.h>
#include "check.h"
#include "base/report.h"

static void counts_events_not_details(void)
{
	unsigned long e = slub_errors();
	slub_report("test event %d", 1);
	CHECK_EQ(slub_errors(), e + 1);
	slub_report_cont("  detail line %s", "x");
	CHECK_EQ(slub_errors(), e + 1);
	slub_report("test event %d\n", 2);
	CHECK_EQ(slub_errors(), e + 2);
	char m[SLUB_REPORT_LINE];
	slub_report_last(m, sizeof(m));
	CHECK(!strcmp(m, "slub: test event 2\n"));
}

static void keeps_errno_and_cuts_long_lines(void)
{
	char big[2000];
	memset(big, 'y', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	errno = 1234;
	slub_report("%s", big);
	CHECK_EQ(errno, 1234);
	char m[SLUB_REPORT_LINE];
	slub_report_last(m, sizeof(m));
	size_t n = strlen(m);
	CHECK(n > 100 && n < SLUB_REPORT_LINE);
	CHECK(m[n - 1] == '\n');
}

/*
 * A thread cancelled while it reports must come back from the report: the
 * allocator is no cancellation point, and a report may be written with a
 * slab or zone lock held.  The thread acts on the cancel only at
 * pthread_testcancel(), after the report.
 */
static int reported_before_cancel;

static void *report_with_cancel_pending(void *arg)
{
	(void)arg;
	pthread_cancel(pthread_self());
	slub_report("report with a cancel pending");
	free_pages(0x1000, 0);	/* a report from inside the page allocator */
	__atomic_store_n(&reported_before_cancel, 1, __ATOMIC_RELEASE);
	pthread_testcancel();
	return NULL;
}

static void reports_are_no_cancellation_points(void)
{
	pthread_t t;
	CHECK_EQ(pthread_create(&t, NULL, report_with_cancel_pending, NULL), 0);
	void *ret = NULL;
	CHECK_EQ(pthread_join(t, &ret), 0);
	CHECK(ret == PTHREAD_CANCELED);
	CHECK_EQ(__atomic_load_n(&reported_before_cancel, __ATOMIC_ACQUIRE), 1);
}

/*
 * A report whose write fails (stderr closed in a daemon, EPIPE, ENOSPC)
 * must still give the thread its cancellation state back: the thread is
 * cancelled at its next cancellation point, after the report.
 */
static int state_after_failed_write = -1;

static void *report_into_unwritable_stderr(void *arg)
{
	(void)arg;
	slub_report("a report nobody can read");
	int old = -1;
	pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &old);
	__atomic_store_n(&state_after_failed_write, old, __ATOMIC_RELEASE);
	pthread_cancel(pthread_self());
	pthread_testcancel();
	return NULL;
}

static void failed_write_restores_cancel_state(void)
{
	/* stderr open read-only: every write(2) to it fails with EBADF. */
	int saved = dup(2), ro = open("/dev/null", O_RDONLY);
	CHECK(saved >= 0 && ro >= 0);
	dup2(ro, 2);
	pthread_t t;
	void *ret = NULL;
	CHECK_EQ(pthread_create(&t, NULL, report_into_unwritable_stderr, NULL), 0);
	CHECK_EQ(pthread_join(t, &ret), 0);
	dup2(saved, 2);
	close(saved);
	close(ro);
	CHECK_EQ(__atomic_load_n(&state_after_failed_write, __ATOMIC_ACQUIRE),
		 PTHREAD_CANCEL_ENABLE);
	CHECK(ret == PTHREAD_CANCELED);
}

static const char *self_path;

static void report_file_option(void)
{
	char path[] = "/tmp/slub-report-XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	close(fd);
	char opt[128];
	/* An option error is reported into the file too, though it comes first. */
	snprintf(opt, sizeof(opt), "bogus_first slub_report_file=%s", path);
	pid_t pid = fork();
	if (pid == 0) {
		int devnull = open("/dev/null", O_WRONLY);
		dup2(devnull, 2);	/* nothing may reach stderr */
		setenv("SLUB_OPTIONS", opt, 1);
		execl(self_path, self_path, "--child", (char *)NULL);
		_exit(127);
	}
	int status;
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	char buf[1024] = { 0 };
	fd = open(path, O_RDONLY);
	CHECK(read(fd, buf, sizeof(buf) - 1) > 0);
	close(fd);
	unlink(path);
	CHECK(strstr(buf, "slub: SLUB_OPTIONS: unknown option 'bogus_first'") != NULL);
	CHECK(strstr(buf, "slub: free_pages: invalid address 0x1000") != NULL);
	CHECK(strstr(buf, "slub: child event\n  child detail\n") != NULL);
}

static void abort_on_error(void)
{
	char out[16384];
	int status = run_self(self_path, "--event", "slub_abort_on_error", out, sizeof(out));
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
	CHECK(strstr(out, "slub: the event\n") != NULL);
	CHECK(strstr(out, "stack of the reporting thread:\n") != NULL);
	/* Named frames from the program's own on: the report's caller first, no bare address. */
	CHECK(strstr(out, "#0  report_child+0x") != NULL);
	CHECK(strstr(out, " [test_report]\n") != NULL);
	CHECK(strstr(out, " 0x") == NULL);
	CHECK(strstr(out, "ran on") == NULL);
	/* The program's SIGABRT handler does not run: it might allocate. */
	CHECK(strstr(out, "handler ran") == NULL);
	/* A warning does not stop the program; nor an event without the option. */
	status = run_self(self_path, "--warning", "slub_abort_on_error=1", out, sizeof(out));
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK(strstr(out, "slub: the warning\n") != NULL && strstr(out, "ran on") != NULL);
	status = run_self(self_path, "--event", "slub_abort_on_error=0", out, sizeof(out));
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK(strstr(out, "slub: the event\n") != NULL && strstr(out, "ran on") != NULL);
	CHECK(strstr(out, "stack") == NULL);
}

static void abort_handler(int sig)
{
	(void)sig;
	static const char msg[] = "handler ran\n";
	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(3);
}

/* Not inlined: the abort stack must start at its frame. */
static __attribute__((noinline)) int report_child(const char *mode)
{
	signal(SIGABRT, abort_handler);
	if (!strcmp(mode, "--event"))
		slub_report("the event");
	else
		slub_warn("the warning");
	fprintf(stderr, "ran on\n");
	return 0;
}

static int child(void)
{
	free_pages(0x1000, 0);	/* starts the allocator, reports once */
	slub_report("child event");
	slub_report_cont("  child detail");
	return slub_errors() == 3 ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--child"))
		return child();
	if (argc > 1 && (!strcmp(argv[1], "--event") || !strcmp(argv[1], "--warning")))
		return report_child(argv[1]);
	self_path = argv[0];
	RUN(counts_events_not_details);
	RUN(keeps_errno_and_cuts_long_lines);
	RUN(report_file_option);
	RUN(reports_are_no_cancellation_points);
	RUN(failed_write_restores_cancel_state);
	RUN(abort_on_error);
	return check_done();
}
