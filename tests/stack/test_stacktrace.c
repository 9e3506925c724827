// SPDX-License-Identifier: MIT
/*
 * test_stacktrace.c - stack capture and naming: nothing before priming,
 * the frames of nested functions in order (and @skip passing over them), no
 * unwind inside an unwind (a signal handler interrupting captures), names
 * of this program's functions with offsets inside their size, of a libc
 * export (.dynsym of a stripped library), of a libc function it does not
 * export (module+offset), of the vdso, anonymous and unmapped addresses,
 * the print through the report sink, and names in a library rewritten in
 * place (truncated, cut, written anew) while it is loaded and named.
 * Built again as a non-PIE executable (test_stacktrace_nopie), whose
 * addresses are its link-time ones.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/time.h>

#include "check.h"
#include "base/maps.h"
#include "stack/stacktrace.h"

static uintptr_t frames[STACK_TRACE_FRAMES];
static unsigned int nr_frames;
static volatile unsigned int skip_now;

/* Three nested calls, none inlined or made a tail call (the volatile add after each). */
static __noinline unsigned int nested_inner(void)
{
	nr_frames = stack_trace_save(frames, STACK_TRACE_FRAMES, skip_now);
	return nr_frames + skip_now;
}

static __noinline unsigned int nested_middle(void)
{
	return nested_inner() + skip_now;
}

static __noinline unsigned int nested_outer(void)
{
	return nested_middle() + skip_now;
}

/* Does @addr name @fn, with an offset that is @addr - @fn and within the size? */
static bool names_function(uintptr_t addr, const char *fn)
{
	char buf[512], want[128];
	if (stack_trace_symbol(addr, buf, sizeof(buf)) != STACK_SYM_FUNCTION) {
		fprintf(stderr, "   %#lx: no function: %s\n", (unsigned long)addr, buf);
		return false;
	}
	unsigned long off, size;
	snprintf(want, sizeof(want), "%s+0x%%lx/0x%%lx [", fn);
	if (sscanf(buf, want, &off, &size) != 2 || off >= size) {
		fprintf(stderr, "   %#lx: '%s', not %s\n", (unsigned long)addr, buf, fn);
		return false;
	}
	return true;
}

static void nothing_before_priming(void)
{
	CHECK(!unwind_primed());
	CHECK_EQ(nested_outer(), 0);
	stack_trace_prime();
	CHECK(unwind_primed());
	CHECK(nested_outer() > 3);
}

static void nested_frames_in_order(void)
{
	skip_now = 0;
	nested_outer();
	CHECK(nr_frames >= 4);		/* the three, main, libc ... */
	CHECK(names_function(frames[0], "nested_inner"));
	CHECK(names_function(frames[1], "nested_middle"));
	CHECK(names_function(frames[2], "nested_outer"));
	/* The offset printed is the return address's: frame 0 is @off into nested_inner. */
	char buf[512];
	unsigned long off = 0;
	stack_trace_symbol(frames[0], buf, sizeof(buf));
	CHECK(sscanf(buf, "nested_inner+0x%lx/", &off) == 1);
	CHECK_EQ(frames[0] - off, (uintptr_t)nested_inner);
	skip_now = 1;
	nested_outer();
	CHECK(names_function(frames[0], "nested_middle"));
	CHECK(names_function(frames[1], "nested_outer"));
	skip_now = 0;
	uintptr_t two[2];
	CHECK_EQ(stack_trace_save(two, 2, 0), 2);	/* @size bounds it */
	CHECK_EQ(stack_trace_save(two, 0, 0), 0);
	CHECK_EQ(stack_trace_save(two, 2, 1000), 0);	/* skipping past the end */
}

/*
 * A timer signal lands in the middle of captures again and again; its
 * handler captures too.  It must get nothing while the thread it
 * interrupted is unwinding, and a stack otherwise.
 */
static unsigned long in_handler_empty, in_handler_full;

static void capture_in_handler(int sig)
{
	(void)sig;
	uintptr_t f[STACK_TRACE_FRAMES];
	if (stack_trace_save(f, STACK_TRACE_FRAMES, 0))
		in_handler_full++;
	else
		in_handler_empty++;
}

static void no_unwind_inside_an_unwind(void)
{
	struct sigaction sa = { .sa_handler = capture_in_handler }, old;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGPROF, &sa, &old);
	struct itimerval every = { { 0, 100 }, { 0, 100 } }, off = { 0 };
	setitimer(ITIMER_PROF, &every, NULL);
	uint64_t until = race_clock_ns() + 300000000;	/* 0.3 s of CPU-bound captures */
	unsigned long empty = 0, done = 0;
	/* A capture is short (unwind_fast()): go on until a signal lands in one, 5 s at most. */
	uint64_t hard = until + 5000000000u;
	while (race_clock_ns() < until || in_handler_empty + in_handler_full < 20 ||
	       (!UNDER_TSAN && !in_handler_empty && race_clock_ns() < hard)) {
		uintptr_t f[STACK_TRACE_FRAMES];
		uint64_t start = race_clock_ns();
		empty += !stack_trace_save(f, STACK_TRACE_FRAMES, 0);
		done++;
		/* As long again outside any unwind: some signals must land there. */
		uint64_t now = race_clock_ns(), spin = now + (now - start);
		while (race_clock_ns() < spin)
			;
	}
	setitimer(ITIMER_PROF, &off, NULL);
	sigaction(SIGPROF, &old, NULL);
	fprintf(stderr, "   %lu captures; in the handler %lu empty, %lu full\n", done,
		in_handler_empty, in_handler_full);
	CHECK_EQ(empty, 0);
	/* TSan delivers signals at its own points, not inside an unwind. */
	if (!UNDER_TSAN)
		CHECK(in_handler_empty > 0);
	CHECK(in_handler_full > 0);
}

/* Every thread unwinds on its own: one's capture never makes another's empty. */
static void *capture_loop(void *arg)
{
	uintptr_t f[STACK_TRACE_FRAMES];
	unsigned long *empty = arg;
	for (int i = 0; i < (UNDER_TSAN ? 200 : 20000); i++)
		*empty += !stack_trace_save(f, STACK_TRACE_FRAMES, 0);
	return NULL;
}

static void threads_capture_alone(void)
{
	pthread_t th[4];
	unsigned long empty[4] = { 0 };
	for (int i = 0; i < 4; i++)
		CHECK(!pthread_create(&th[i], NULL, capture_loop, &empty[i]));
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		CHECK_EQ(empty[i], 0);
	}
}

/* Is @addr in a mapping of a file whose path contains @part? */
static bool mapped_from(uintptr_t addr, const char *part)
{
	struct maps_entry e;
	char path[1024];
	return maps_find(addr, &e, path, sizeof(path)) && strstr(path, part);
}

static int by_value(const void *a, const void *b)
{
	uintptr_t *f = frames;
	nr_frames = stack_trace_save(f, STACK_TRACE_FRAMES, 0);
	return *(const int *)a - *(const int *)b;
}

static void names_in_libc(void)
{
	char buf[512];
	int (*volatile pf)(const char *, ...) = printf;
	uintptr_t p = (uintptr_t)pf;
	/* A non-PIE program's &printf is its own PLT entry, not libc's. */
	if (mapped_from(p, "libc")) {
		CHECK_EQ(stack_trace_symbol(p, buf, sizeof(buf)), STACK_SYM_FUNCTION);
		CHECK(!strncmp(buf, "printf+0x0/0x", 13));
		CHECK(strstr(buf, " [libc.so.6]"));
		stack_trace_symbol(p + 3, buf, sizeof(buf));
		CHECK(!strncmp(buf, "printf+0x3/0x", 13));
		fprintf(stderr, "   %s\n", buf);
	}
	/* qsort's inner functions are libc's own: not in .dynsym, so module+offset. */
	int v[3] = { 3, 1, 2 };
	qsort(v, 3, sizeof(int), by_value);
	CHECK(nr_frames >= 3 && names_function(frames[0], "by_value"));
	CHECK(mapped_from(frames[1], "libc"));
	enum stack_trace_found found = stack_trace_symbol(frames[1], buf, sizeof(buf));
	fprintf(stderr, "   qsort's caller of by_value: %s\n", buf);
	CHECK(found != STACK_SYM_NONE && strstr(buf, "libc.so.6"));
	if (found == STACK_SYM_MODULE)
		CHECK(buf[0] == '/' && strstr(buf, "libc.so.6+0x"));
}

/* Data, no function: module+offset, the link-time address (a non-PIE program's is the address). */
static const char marker[] = "a string in .rodata";

static void names_elsewhere(void)
{
	char buf[512];
	unsigned long at = 0;
	CHECK_EQ(stack_trace_symbol((uintptr_t)marker, buf, sizeof(buf)), STACK_SYM_MODULE);
	const char *plus = strrchr(buf, '+');
	CHECK(buf[0] == '/' && plus && sscanf(plus, "+0x%lx", &at) == 1);
#ifndef __PIE__
	CHECK_EQ(at, (uintptr_t)marker);
#endif
	uintptr_t vdso = getauxval(AT_SYSINFO_EHDR);
	if (vdso) {
		stack_trace_symbol(vdso + 0x10, buf, sizeof(buf));	/* the ELF header */
		CHECK(!strcmp(buf, "[vdso]+0x10"));
	}
	/*
	 * The kernel merges a new anonymous mapping with a neighbour of the same protection, so
	 * the page that is named sits between two PROT_NONE pages: its own mapping, by itself.
	 */
	long page = sysconf(_SC_PAGESIZE);
	char *guard = mmap(NULL, 3 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(guard != MAP_FAILED);
	char *anon = guard + page;
	CHECK(!mprotect(anon, page, PROT_READ | PROT_WRITE));
	CHECK_EQ(stack_trace_symbol((uintptr_t)anon + 0x18, buf, sizeof(buf)), STACK_SYM_NONE);
	CHECK(!strcmp(buf, "[anonymous]+0x18"));
	munmap(anon, page);
	CHECK_EQ(stack_trace_symbol((uintptr_t)anon + 0x18, buf, sizeof(buf)), STACK_SYM_NONE);
	CHECK(!strcmp(buf, "?"));
	munmap(guard, 3 * page);
	CHECK_EQ(stack_trace_symbol(0x10, buf, sizeof(buf)), STACK_SYM_NONE);
	/* A short buffer is cut, not overrun. */
	char tiny[8] = "xxxxxxx";
	stack_trace_symbol((uintptr_t)nested_inner, tiny, 5);
	CHECK(!strcmp(tiny, "nest") && tiny[5] == 'x');
}

static void prints_through_the_sink(void)
{
	skip_now = 0;
	nested_outer();
	char path[] = "/tmp/test_stacktrace.XXXXXX";
	int fd = mkstemp(path), saved = dup(STDERR_FILENO);
	CHECK(fd >= 0);
	unlink(path);
	dup2(fd, STDERR_FILENO);
	unsigned long errors = slub_errors();
	stack_trace_print(frames, 3, "  ");
	dup2(saved, STDERR_FILENO);
	close(saved);
	CHECK_EQ(slub_errors(), errors);	/* detail lines, no event */
	char out[2048] = "";
	CHECK(pread(fd, out, sizeof(out) - 1, 0) > 0);
	close(fd);
	char *second = strchr(out, '\n');
	CHECK(!strncmp(out, "  nested_inner+0x", 17));
	CHECK(second && !strncmp(second + 1, "  nested_middle+0x", 18));
	CHECK(strstr(out, "\n  nested_outer+0x"));
	fprintf(stderr, "%s", out);
}

/*
 * A loaded library rewritten in place (cp over it: the same inode,
 * truncated, then written) while frames in it are named: the namer read
 * its file through a mapping, where a byte past the new end raises
 * SIGBUS.  Each step runs in a child, whose crash the exit status shows;
 * its result is a bit per step that named wrongly.
 */
static char victim_copy[64];
static char *victim_bytes;
static size_t victim_size;
static volatile bool rewriting;

/* The copy as cp leaves it when given the first @len bytes: truncated, then written. */
static bool rewrite_victim(size_t len)
{
	int fd = open(victim_copy, O_WRONLY | O_TRUNC | O_CLOEXEC);
	bool ok = fd >= 0 && pwrite(fd, victim_bytes, len, 0) == (ssize_t)len;
	if (fd >= 0)
		close(fd);
	return ok;
}

static void *keep_rewriting(void *arg)
{
	(void)arg;
	for (int i = 0; i < (UNDER_TSAN ? 50 : 500); i++)
		rewrite_victim(i % 3 ? victim_size : victim_size / (size_t)(i % 7 + 1));
	rewrite_victim(victim_size);
	__atomic_store_n(&rewriting, false, __ATOMIC_RELEASE);
	return NULL;
}

static int child_rewritten_library(void)
{
	char buf[512];
	int bad = 0;
	if (!rewrite_victim(victim_size))
		return 64;
	void *h = dlopen(victim_copy, RTLD_NOW | RTLD_LOCAL);
	void *sym = h ? dlsym(h, "victim_function") : NULL;
	if (!sym)
		return 65;
	uintptr_t fn = (uintptr_t)sym + 1;
	bool named = stack_trace_symbol(fn, buf, sizeof(buf)) == STACK_SYM_FUNCTION &&
		     !strncmp(buf, "victim_function+0x1/", 20);
	bad |= !named;
	/* Truncated to nothing: the module and the offset, from the mapping alone. */
	rewrite_victim(0);
	bad |= (stack_trace_symbol(fn, buf, sizeof(buf)) != STACK_SYM_MODULE) << 1;
	stack_trace_print(&fn, 1, " ");
	/* Cut after its header: its tables are gone. */
	rewrite_victim(victim_size / 3);
	stack_trace_symbol(fn, buf, sizeof(buf));
	/* Whole again: named again. */
	rewrite_victim(victim_size);
	bad |= (stack_trace_symbol(fn, buf, sizeof(buf)) != STACK_SYM_FUNCTION) << 2;
	/* Rewritten while it is being read. */
	pthread_t writer;
	rewriting = true;
	if (pthread_create(&writer, NULL, keep_rewriting, NULL))
		return 66;
	uintptr_t stack[16];
	for (int i = 0; i < 16; i++)
		stack[i] = fn + (uintptr_t)i % 4;
	while (__atomic_load_n(&rewriting, __ATOMIC_ACQUIRE)) {
		stack_trace_symbol(fn, buf, sizeof(buf));
		stack_trace_print(stack, 16, " ");
	}
	pthread_join(writer, NULL);
	bad |= (stack_trace_symbol(fn, buf, sizeof(buf)) != STACK_SYM_FUNCTION) << 3;
	/* Not closed: truncation dropped its relocated pages, which dlclose() reads. */
	return bad;
}

static void rewritten_library(void)
{
#ifdef VICTIM_SO
	int fd = open(VICTIM_SO, O_RDONLY | O_CLOEXEC);
	struct stat st;
	CHECK(fd >= 0 && !fstat(fd, &st));
	if (fd < 0)
		return;
	victim_size = (size_t)st.st_size;
	victim_bytes = malloc(victim_size);
	CHECK(victim_bytes && pread(fd, victim_bytes, victim_size, 0) == (ssize_t)victim_size);
	close(fd);
	snprintf(victim_copy, sizeof(victim_copy), "/tmp/test_stacktrace_victim.%d.so", getpid());
	fd = open(victim_copy, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	CHECK_EQ(child_quiet(child_rewritten_library), 0);	/* 128 + 7: SIGBUS */
	unlink(victim_copy);
	free(victim_bytes);
#else
	fprintf(stderr, "   skipped: no VICTIM_SO\n");
#endif
}

int main(void)
{
	RUN(nothing_before_priming);
	RUN(nested_frames_in_order);
	RUN(no_unwind_inside_an_unwind);
	RUN(threads_capture_alone);
	RUN(names_in_libc);
	RUN(names_elsewhere);
	RUN(prints_through_the_sink);
	RUN(rewritten_library);
	return check_done();
}
