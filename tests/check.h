/* SPDX-License-Identifier: MIT */
/*
 * check.h - the tests' harness: CHECK macros that count failures, a runner
 * per test function, helpers shared by the tests.  Each test file is one
 * CTest test; it exits non-zero if any CHECK failed.
 */
#ifndef SLUB_TEST_CHECK_H
#define SLUB_TEST_CHECK_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <slub.h>
#include "report.h"

static int check_failures;
static int check_count;

#define CHECK(cond)                                                              \
	do {                                                                     \
		check_count++;                                                   \
		if (!(cond)) {                                                   \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__,   \
				__LINE__, #cond);                                \
			check_failures++;                                        \
		}                                                                \
	} while (0)

#define CHECK_EQ(a, b)                                                           \
	do {                                                                     \
		long long a_ = (long long)(a), b_ = (long long)(b);              \
		check_count++;                                                   \
		if (a_ != b_) {                                                  \
			fprintf(stderr, "%s:%d: CHECK failed: %s == %s (%lld != %lld)\n", \
				__FILE__, __LINE__, #a, #b, a_, b_);             \
			check_failures++;                                        \
		}                                                                \
	} while (0)

#define RUN(fn)                                                                  \
	do {                                                                     \
		int before_ = check_failures;                                    \
		fprintf(stderr, "== %s\n", #fn);                                 \
		fn();                                                            \
		fprintf(stderr, "   %s: %s\n", #fn,                              \
			check_failures == before_ ? "ok" : "FAILED");            \
	} while (0)

static inline int check_done(void)
{
	fprintf(stderr, "%d checks, %d failed\n", check_count, check_failures);
	return check_failures ? 1 : 0;
}

/* A bad call must be reported exactly once, with @text in the report. */
#define EXPECT_REPORT(call, text)                                                \
	do {                                                                     \
		unsigned long e_ = slub_errors();                                \
		char m_[SLUB_REPORT_LINE];                                       \
		call;                                                            \
		CHECK_EQ(slub_errors(), e_ + 1);                                 \
		slub_report_last(m_, sizeof(m_));                                \
		if (!strstr(m_, text)) {                                         \
			fprintf(stderr, "   report was: %s", m_);               \
			CHECK(!"report text");                                   \
		}                                                                \
	} while (0)

/* Resident set size in bytes, from /proc/self/statm. */
static inline long rss_bytes(void)
{
	long size = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	if (!f)
		return -1;
	if (fscanf(f, "%ld %ld", &size, &resident) != 2)
		resident = -1;
	fclose(f);
	return resident * sysconf(_SC_PAGESIZE);
}

/* The process's address space in bytes (VmSize of /proc/self/status). */
static inline size_t vm_size_bytes(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	size_t kb = 0;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmSize: %zu kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb << 10;
}

/* Does a limit on address space (ulimit -v) hold?  Some tests assume none. */
static inline bool address_space_limited(void)
{
	struct rlimit lim;
	return !getrlimit(RLIMIT_AS, &lim) && lim.rlim_cur != RLIM_INFINITY;
}

/* Let the address space grow by @extra bytes at most (under any hard limit). */
static inline int limit_address_space(size_t extra)
{
	struct rlimit lim;
	if (getrlimit(RLIMIT_AS, &lim))
		return -1;
	rlim_t want = vm_size_bytes() + extra;
	lim.rlim_cur = lim.rlim_max != RLIM_INFINITY && lim.rlim_max < want ? lim.rlim_max : want;
	return setrlimit(RLIMIT_AS, &lim);
}

/*
 * Run @fn in a forked child whose address space may grow by @extra bytes
 * at most.  Its exit code: @fn's (0, or the number of what failed), 2 if
 * the limit could not be set, -1 if it did not exit.
 */
static inline int child_under_address_limit(size_t extra, int (*fn)(void))
{
	pid_t pid = fork();
	if (pid == 0)
		_exit(limit_address_space(extra) ? 2 : fn());
	int status;
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* Is the kernel built with transparent huge pages (and MADV_[NO]HUGEPAGE)? */
static inline bool have_thp(void)
{
	return access("/sys/kernel/mm/transparent_hugepage/enabled", F_OK) == 0;
}

/* The /proc/self/smaps entry of the mapping holding an address. */
struct smaps_vma {
	bool found, anonymous, no_huge, huge;	/* VmFlags "nh", "hg" */
	unsigned long lo, hi;
	long rss_kb;
};

static inline struct smaps_vma smaps_vma_of(const void *addr)
{
	struct smaps_vma v = { .rss_kb = -1 };
	uintptr_t a = (uintptr_t)addr;
	char line[512];
	bool in = false;
	FILE *f = fopen("/proc/self/smaps", "r");
	if (!f)
		return v;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char path[256] = "";
		if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %255s", &lo, &hi, path) >= 2 &&
		    strchr(line, '-') < strchr(line, ' ')) {
			in = a >= lo && a < hi;
			if (in) {
				v.found = true;
				v.lo = lo;
				v.hi = hi;
				v.anonymous = path[0] == 0;
			}
		} else if (in) {
			sscanf(line, "Rss: %ld kB", &v.rss_kb);
			if (strncmp(line, "VmFlags:", 8) == 0) {
				v.no_huge = strstr(line, " nh") != NULL;
				v.huge = strstr(line, " hg") != NULL;
			}
		}
	}
	fclose(f);
	return v;
}

/*
 * A counter of this thread's page faults taken in user space, or -1.  Not
 * getrusage(): its ru_minflt also counts the pages a MADV_POPULATE_WRITE
 * call faults in, which are what the tests that count want to tell apart.
 */
static inline int fault_counter(void)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_SOFTWARE;
	a.size = sizeof(a);
	a.config = PERF_COUNT_SW_PAGE_FAULTS;
	a.exclude_kernel = 1;
	return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
}

/* The faults a fault_counter() has counted so far (a failed read fails the test). */
static inline uint64_t faults_now(int fd)
{
	uint64_t n = 0;
	CHECK(read(fd, &n, sizeof(n)) == sizeof(n));
	return n;
}

/*
 * Run @self (this test's argv[0]) with argument @mode and SLUB_OPTIONS set
 * to @options; what it writes to stdout and stderr lands in @out.  Returns
 * the wait status (0: exited with 0).
 */
static inline int run_self(const char *self, const char *mode, const char *options,
			   char *out, size_t size)
{
	int fds[2];
	if (pipe(fds))
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		close(fds[0]);
		setenv("SLUB_OPTIONS", options, 1);
		execl(self, self, mode, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	size_t n = 0;
	ssize_t r;
	while (n < size - 1 && (r = read(fds[0], out + n, size - 1 - n)) > 0)
		n += (size_t)r;
	out[n] = 0;
	close(fds[0]);
	int status = -1;
	waitpid(pid, &status, 0);
	return status;
}

/* Sanitizer builds run shorter stress loops. */
#if defined(__SANITIZE_THREAD__)
#define UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UNDER_TSAN 1
#endif
#endif
#ifndef UNDER_TSAN
#define UNDER_TSAN 0
#endif

#endif
