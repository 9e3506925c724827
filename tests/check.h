/* SPDX-License-Identifier: MIT */
/*
 * check.h - the tests' harness: CHECK macros that count failures, a runner
 * per test function, helpers shared by the tests.  Each test file is one
 * CTest test; it exits non-zero if any CHECK failed.
 */
#ifndef SLUB_TEST_CHECK_H
#define SLUB_TEST_CHECK_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <slub.h>
#include "base/report.h"

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

/*
 * First in a test of what a bad free does (reported, no harm done): the
 * unsafe measurement build SLUB_UNCHECKED_FREE (src/slab/core/slab.h) trusts
 * every free, so there the test is skipped.
 */
#ifdef SLUB_UNCHECKED_FREE
#define SKIP_IF_UNCHECKED_FREE()                                                 \
	do {                                                                     \
		fprintf(stderr, "   skipped: SLUB_UNCHECKED_FREE trusts every free\n"); \
		return;                                                          \
	} while (0)
#else
#define SKIP_IF_UNCHECKED_FREE() do { } while (0)
#endif

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

/*
 * A bad call must be reported exactly once (the public slub_errors() only:
 * for the malloc library's tests, which cannot reach slub_report_last()).
 */
#define EXPECT_ONE_REPORT(call)                                                  \
	do {                                                                     \
		unsigned long e_ = slub_errors();                                \
		call;                                                            \
		CHECK_EQ(slub_errors(), e_ + 1);                                 \
	} while (0)

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

/* Run this thread on @cpu alone; the result of sched_setaffinity(). */
static inline int pin_to_cpu(int cpu)
{
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	return sched_setaffinity(0, sizeof(one), &one);
}

/* Keep this thread on the CPU it runs on, its affinity saved in *@old to restore. */
static inline int pin_to_this_cpu(cpu_set_t *old)
{
	if (sched_getaffinity(0, sizeof(*old), old))
		return -1;
	return pin_to_cpu(sched_getcpu());
}

/* Let this thread run on the CPUs of @old again (a mask saved before pinning). */
static inline int unpin(const cpu_set_t *old)
{
	return sched_setaffinity(0, sizeof(*old), old);
}

/* Does the last counted report contain @text?  Says what it was if not. */
static inline bool last_report_has(const char *text)
{
	char m[SLUB_REPORT_LINE];
	slub_report_last(m, sizeof(m));
	if (!strstr(m, text)) {
		fprintf(stderr, "   expected '%s' in: %s", text, m);
		return false;
	}
	return true;
}

/* An options line rejected in one report naming @text (options.h's options_parse). */
#define REJECT(line, text)                                                       \
	do {                                                                     \
		unsigned long e_ = slub_errors();                                \
		CHECK_EQ(options_parse(line, "test", false), 1);                 \
		CHECK_EQ(slub_errors(), e_ + 1);                                 \
		CHECK(last_report_has(text));                                    \
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

/*
 * Pages of [@addr, @addr + @len), widened to whole pages, in memory by
 * mincore() (a page only read maps the zero page: it counts); -1 with
 * errno set if mincore fails (ENOMEM: a page of the range is not mapped).
 */
static inline long resident_pages(const void *addr, size_t len)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t start = (uintptr_t)addr & ~(page - 1);
	uintptr_t end = ((uintptr_t)addr + len + page - 1) & ~(page - 1);
	unsigned char vec[256];
	long resident = 0;
	while (start < end) {
		size_t n = (end - start) / page;
		if (n > sizeof(vec))
			n = sizeof(vec);
		if (mincore((void *)start, n * page, vec))
			return -1;
		for (size_t i = 0; i < n; i++)
			resident += vec[i] & 1;
		start += n * page;
	}
	return resident;
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
	if (pid == 0) {
		check_failures = 0;	/* fn's own, not the parent's before it */
		_exit(limit_address_space(extra) ? 2 : fn());
	}
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

/*
 * Under TSan, run_self's children run without its deadlock detector: some
 * fork with the allocator running, and fork_prepare then holds every
 * cache's locks, past the 64 the detector can count (it aborts on a CHECK).
 */
static inline void run_self_tsan_options(void)
{
	if (!UNDER_TSAN)
		return;
	char buf[1024];
	const char *old = getenv("TSAN_OPTIONS");
	snprintf(buf, sizeof(buf), "%s%sdetect_deadlocks=0", old ? old : "", old && *old ? ":" : "");
	setenv("TSAN_OPTIONS", buf, 1);
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
		run_self_tsan_options();
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


/* Hide a pointer from the compiler, which would otherwise fold away the bug a test commits. */
static inline void *hidden_ptr(void *p)
{
	__asm__ volatile("" : "+r"(p));
	return p;
}

/*
 * Zero 64 KiB of dead stack below the caller's frame, so a leak scan finds no
 * stale copy of a pointer there.  The barrier keeps the store: gcc and clang
 * drop a memset of a dead local, and then the call.
 */
static __attribute__((noinline, unused)) void wipe_dead_stack(void)
{
	char junk[64 << 10];
	memset(junk, 0, sizeof(junk));
	__asm__ volatile("" : : "r"(junk) : "memory");
}

/*
 * One byte access each, out of line and fenced: a faulting access the
 * compiler may not move past a slub_errors() (KFENCE's tests).
 */
static __attribute__((noinline, unused)) void poke_byte(volatile char *p, long i, char v)
{
	__asm__ volatile("" ::: "memory");
	p[i] = v;
	__asm__ volatile("" ::: "memory");
}

static __attribute__((noinline, unused)) char peek_byte(volatile char *p, long i)
{
	__asm__ volatile("" ::: "memory");
	char c = p[i];
	__asm__ volatile("" ::: "memory");
	return c;
}

/*
 * A test made of cases, each run in a child of its own (this program again,
 * with the case's mode and SLUB_OPTIONS: the options are read once, at
 * start-up).  A child exits 0, or dies of @signal if it is set.
 */
struct self_case {
	const char *mode, *options;
	int (*fn)(void);
	int signal;
};

/*
 * main() of such a test: in a child, run the case argv[1] names; in the
 * parent, every case, each child's output shown if it failed.  @check, if
 * set, may refuse a child's output.  Returns main's status.
 */
static inline int run_self_cases(int argc, char **argv, const struct self_case *cases, size_t n,
				 bool (*check)(const struct self_case *c, const char *out))
{
	if (argc > 1) {
		for (size_t i = 0; i < n; i++)
			if (!strcmp(argv[1], cases[i].mode))
				return cases[i].fn();
		return 2;
	}
	static char out[1 << 16];
	for (size_t i = 0; i < n; i++) {
		int status = run_self(argv[0], cases[i].mode, cases[i].options, out, sizeof(out));
		bool ok = cases[i].signal ? WIFSIGNALED(status) && WTERMSIG(status) == cases[i].signal :
			  WIFEXITED(status) && WEXITSTATUS(status) == 0;
		if (ok && check)
			ok = check(&cases[i], out);
		printf("== %s (SLUB_OPTIONS=%s): %s\n", cases[i].mode, cases[i].options,
		       ok ? "ok" : "FAILED");
		if (!ok)
			fputs(out, stdout);
		CHECK(ok);
	}
	return check_done();
}

/* Run this test's binary @self again with @args (a mode set up before start-up); its status. */
static inline int run_self_args(const char *self, const char *args)
{
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "%s %s", self, args);
	return system(cmd);
}

/*
 * Run @fn in a forked child whose reports (stderr) go to /dev/null, for
 * tests that make many on purpose (under TSan in this process).  Its exit code: @fn's, or 128 + the
 * signal that ended it (a crash shows as such), -1 if it could not run.
 */
static inline int child_quiet(int (*fn)(void))
{
	/* TSan's deadlock detector fails on the fork handlers' many locks: in process. */
	if (UNDER_TSAN) {
		int saved = dup(STDERR_FILENO), fd = open("/dev/null", O_WRONLY);
		dup2(fd, STDERR_FILENO);
		int rc = fn();
		dup2(saved, STDERR_FILENO);
		close(fd);
		close(saved);
		return rc;
	}
	pid_t pid = fork();
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);
		if (fd >= 0)
			dup2(fd, STDERR_FILENO);
		_exit(fn());
	}
	int status;
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

/*
 * Two threads at one block, for the races a program's bug makes (two frees
 * of one block, a size asked while it is freed) that must end in a report.
 * Each of @rounds rounds @make gives a block; this thread calls @a on it
 * while a second one calls @b: once, both let go at the same moment
 * (spinning on a turn counter), or with @hammer again and again until @a
 * is done.  With @hammer the second thread is stopped by a signal at
 * whatever it is doing before @a starts, and held until @a returns (or
 * 2 ms pass, as it may hold a lock @a needs): a lookup caught between its
 * steps then sees the block freed under it, as a preempted one would.
 */
struct race_pair {
	void *(*make)(void);
	void (*a)(void *), (*b)(void *);
	int rounds;
	bool hammer;
	void *block;
	int turn, paused, released;
	pthread_t second;
};

static struct race_pair *race_now;

static inline uint64_t race_clock_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline void race_hold(int sig)
{
	(void)sig;
	struct race_pair *r = race_now;
	int round = __atomic_load_n(&r->turn, __ATOMIC_ACQUIRE);
	__atomic_store_n(&r->paused, round, __ATOMIC_RELEASE);
	uint64_t until = race_clock_ns() + 2000000;
	while (__atomic_load_n(&r->released, __ATOMIC_ACQUIRE) != round && race_clock_ns() < until)
		;
}

static inline void race_wait_turn(struct race_pair *r, int turn)
{
	/* Yield after a while: on a loaded machine the other thread may wait for a CPU. */
	for (unsigned int spins = 0; __atomic_load_n(&r->turn, __ATOMIC_ACQUIRE) != turn; spins++)
		if (spins > 1000)
			sched_yield();
}

static inline void *race_second(void *arg)
{
	struct race_pair *r = arg;
	int turn;
	/* Hammering, it may miss whole rounds: it goes by the turn it sees. */
	while (r->hammer && (turn = __atomic_load_n(&r->turn, __ATOMIC_ACQUIRE)) != 2 * r->rounds)
		if (turn & 1)
			r->b(__atomic_load_n(&r->block, __ATOMIC_RELAXED));
	for (int i = 0; !r->hammer && i < r->rounds; i++) {
		race_wait_turn(r, 2 * i + 1);
		r->b(r->block);
		__atomic_store_n(&r->turn, 2 * i + 2, __ATOMIC_RELEASE);
	}
	return NULL;
}

static inline void race_blocks(struct race_pair *r)
{
	struct sigaction sa = { .sa_handler = race_hold };
	race_now = r;
	r->turn = r->paused = r->released = 0;
	if (r->hammer)
		sigaction(SIGUSR1, &sa, NULL);
	if (pthread_create(&r->second, NULL, race_second, r)) {
		CHECK(!"pthread_create");
		return;
	}
	for (int i = 0; i < r->rounds; i++) {
		int turn = 2 * i + 1;
		__atomic_store_n(&r->block, r->make(), __ATOMIC_RELAXED);
		__atomic_store_n(&r->turn, turn, __ATOMIC_RELEASE);
		if (!r->hammer) {
			r->a(r->block);
			race_wait_turn(r, turn + 1);
			continue;
		}
		for (volatile int spin = 0; spin < 2000; spin++)
			;	/* let it start */
		pthread_kill(r->second, SIGUSR1);
		uint64_t until = race_clock_ns() + 2000000;
		while (__atomic_load_n(&r->paused, __ATOMIC_ACQUIRE) != turn && race_clock_ns() < until)
			;
		r->a(r->block);
		__atomic_store_n(&r->released, turn, __ATOMIC_RELEASE);
		__atomic_store_n(&r->turn, turn + 1, __ATOMIC_RELEASE);
	}
	pthread_join(r->second, NULL);
}

/*
 * A program's double frees of @rounds blocks from @make, each by two threads
 * at once, then @size_of asked about blocks while they are freed: every
 * double free must be reported once, and nothing may crash (a forked child
 * runs it).
 */
static struct race_pair race_config;

static inline int race_frees_and_sizes(void)
{
	unsigned long before = slub_errors();
	struct race_pair r = race_config;
	int rounds = r.rounds;
	void (*size_of)(void *) = r.b;
	r.b = r.a;
	r.rounds = rounds / 4;
	race_blocks(&r);
	if (slub_errors() - before != (unsigned long)r.rounds)
		return 1;	/* one report a round: the loser's */
	r.b = size_of;
	r.hammer = true;
	r.rounds = rounds;
	race_blocks(&r);
	return 0;
}

static inline void check_racing_frees(void *(*make)(void), void (*free_fn)(void *),
				      void (*size_of)(void *), int rounds)
{
	race_config = (struct race_pair){ .make = make, .a = free_fn, .b = size_of,
					  .rounds = rounds };
	CHECK_EQ(child_quiet(race_frees_and_sizes), 0);
}

/* An attribute's leading number, -1 if it cannot be read. */
static inline long check_attr_long(struct kmem_cache *s, const char *name)
{
	char buf[256];
	if (slub_attr_read(s, name, buf, sizeof(buf)) < 0)
		return -1;
	return strtol(buf, NULL, 10);
}

/* A test's temporary directory and all in it removed; false (said on stderr) if not. */
static inline bool remove_tree(const char *path)
{
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
	if (system(cmd) == 0)
		return true;
	fprintf(stderr, "could not remove %s\n", path);
	return false;
}

#endif
