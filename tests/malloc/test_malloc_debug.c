// SPDX-License-Identifier: MIT
/*
 * test_malloc_debug.c - the classic heap bugs against the malloc library,
 * in debug mode (slub_debug=FZPU) and in release mode: each case runs in a
 * child process of its own (this program again, with the case's name and
 * SLUB_OPTIONS), which commits the bug and goes on; the parent checks that
 * the child's reports name the bug, and that the child went on to its end.
 * Sizes cover small classes, page-sized objects and extents (> 8 KiB).
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

#define DEBUG "slub_debug=FZPU"
#define DONE "-- the program went on --"

void free_sized(void *p, size_t size);	/* C23, glibc 2.43: ours */

static const size_t sizes[] = { 24, 100, 4000, 20000, 300000 };

/* Keep the compiler from knowing what these pointers are (no -Wfree-nonheap-object). */
static void *opaque(void *p)
{
	__asm__ volatile("" : "+r"(p));
	return p;
}

static __attribute__((noinline)) void *leak_here(size_t n)
{
	return opaque(malloc(n));
}

/* ---- the leak scan's cases (kmemleak's model) ------------------------------------ */

struct node {
	struct node *next;
	char pad[24];
};

/* volatile: stores the compiler would drop, never read back. */
static void *volatile keep_global, *volatile keep_interior;
static int hold_pipe[2];

/* Bodies unlike lost_here's: identical functions may be folded into one. */
static __attribute__((noinline)) void *kept_here(size_t n)
{
	void *p = malloc(n);
	memset(p, 0, n);
	return opaque(p);
}

static __attribute__((noinline)) void *lost_here(size_t n)
{
	return opaque(calloc(1, n));
}

static void *holder(void *arg)
{
	void *volatile mine = kept_here(16);	/* only on this thread's stack */
	char c;
	(void)arg;
	while (read(hold_pipe[0], &c, 1) < 0)	/* blocks until the process ends */
		;
	return mine;
}

static __attribute__((noinline)) void scan_cases(void)
{
	/*
	 * Reached: from a global, along a chain, by an interior pointer only,
	 * from a mapping, from a sparse one.
	 */
	struct node *a = kept_here(sizeof(struct node));
	a->next = kept_here(sizeof(struct node));
	keep_global = a;
	keep_interior = (char *)kept_here(64) + 10;
	void **m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m != MAP_FAILED)
		m[7] = kept_here(48);
	/* A mapping mostly untouched, read by its resident pages: one holds the pointer. */
	size_t sparse_bytes = 256UL << 20;
	void **sparse = mmap(NULL, sparse_bytes, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (sparse != MAP_FAILED)
		sparse[(100UL << 20) / sizeof(void *) + 3] = kept_here(40);
	pthread_t t;
	if (!pipe(hold_pipe))
		pthread_create(&t, NULL, holder, NULL);
	/* Lost: a cycle of two, and a chain of two from nowhere: 4 x 32 bytes. */
	struct node *x = lost_here(sizeof(struct node)), *y = lost_here(sizeof(struct node));
	x->next = y;
	y->next = x;
	struct node *z = lost_here(sizeof(struct node));
	z->next = lost_here(sizeof(struct node));
	x = y = z = NULL;
	usleep(20000);		/* the holder thread is up */
}

/* Blocks above 4 MiB are large regions of their own: found and read too. */
static __attribute__((noinline)) void scan_large_cases(void)
{
	void **big = kept_here(5 << 20);	/* reachable; the only pointer to a kept one */
	big[1000] = kept_here(40);
	keep_global = big;
	void **lost = lost_here(6 << 20);	/* unreachable; the only pointer to a lost one */
	lost[5] = lost_here(32);
}

/* ---- the bugs, in the child --------------------------------------------------- */

static __attribute__((noinline)) int child(const char *what, size_t n, long arg)
{
	char *p = malloc(n), *q = malloc(n);
	memset(p, 'a', n);
	if (!strcmp(what, "double")) {
		free(p);
		free(opaque(p));
	} else if (!strcmp(what, "interleaved")) {
		free(p);
		free(q);
		free(opaque(p));
		q = NULL;
	} else if (!strcmp(what, "overflow")) {
		p[n - 1 + (size_t)arg] = 'X';
		free(p);
	} else if (!strcmp(what, "sized_overflow")) {
		/* A size one past the block's: reported, and the overflow still caught. */
		p[n - 1 + (size_t)arg] = 'X';
		free_sized(opaque(p), n + (size_t)arg);
	} else if (!strcmp(what, "sized_wrong")) {
		free_sized(opaque(p), n / 2);
	} else if (!strcmp(what, "underflow")) {
		p[-arg] = 'X';
		free(p);
	} else if (!strcmp(what, "after_free")) {
		free(p);
		((char *)opaque(p))[arg] = 'X';
		/* Reuse: slabs check a free object when it is handed out again;
		 * extents when they leave the quarantine of the last 64 frees. */
		for (int i = 0; i < 70; i++)
			free(malloc(n));
	} else if (!strcmp(what, "realloc_freed")) {
		free(p);
		void *r = realloc(opaque(p), n * 2);
		printf("realloc gave %p\n", r);
	} else if (!strcmp(what, "stack")) {
		char local[64];
		free(opaque(local));
		free(p);
	} else if (!strcmp(what, "interior")) {
		free(opaque(p + 64));
		free(p);
	} else if (!strcmp(what, "unaligned")) {
		free(opaque(p + 1));
		free(p);
	} else if (!strcmp(what, "foreign")) {
		static char global[256];
		free(opaque(global));
		free(p);
	} else if (!strcmp(what, "tiny")) {
		free(opaque((void *)(uintptr_t)arg));
		free(p);
	} else if (!strcmp(what, "leak")) {
		for (long i = 0; i < 3 + arg; i++)	/* one call site: not unrolled */
			leak_here(32);
		leak_here(n);
		free(p);
	} else if (!strcmp(what, "scan")) {
		scan_cases();
		wipe_dead_stack();
		free(p);
		free(q);
		q = NULL;
	} else if (!strcmp(what, "scan_large")) {
		scan_large_cases();
		wipe_dead_stack();
		free(p);
		free(q);
		q = NULL;
	} else if (!strcmp(what, "clean")) {
		/* Legal use at every size: no report may come. */
		for (int i = 0; i < 200; i++) {
			size_t m = 1 + (size_t)i * 997 % 40000;
			char *r = malloc(m);
			memset(r, 1, m);
			r = realloc(r, m * 2);
			memset(r, 2, m * 2);
			r = realloc(r, m / 2 + 1);
			memset(r, 3, malloc_usable_size(r));
			free(r);
		}
		/* The memalign family keeps its alignment under red zones (GSlice asserts it). */
		for (size_t al = 32; al <= 8192; al *= 2)
			for (size_t m = 1; m <= 300000; m = m * 7 + 3) {
				void *b = NULL;
				if (posix_memalign(&b, al, m) || ((uintptr_t)b & (al - 1)))
					printf("misaligned: posix_memalign(%zu, %zu) gave %p\n", al, m, b);
				memset(b, 4, m);
				void *c = memalign(al, m), *d = aligned_alloc(al, m);
				if (((uintptr_t)c | (uintptr_t)d) & (al - 1))
					printf("misaligned: memalign/aligned_alloc(%zu, %zu)\n", al, m);
				free(b);
				free(c);
				free(d);
			}
		void *a = aligned_alloc(4096, 20000);
		memset(a, 0, 20000);
		free(a);
		a = calloc(1, 50000);
		CHECK(((char *)a)[49999] == 0);
		free(a);
		free(p);
	}
	free(q);
	printf("%s\n", DONE);
	fflush(stdout);
	return 0;
}

/* ---- the parent --------------------------------------------------------------- */

/* Run a case; its stdout and stderr together in @out. */
static int run_case(const char *options, const char *what, size_t n, long arg, char *out,
		    size_t len)
{
	int fd[2];
	if (pipe(fd))
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		char ns[32], as[32];
		snprintf(ns, sizeof(ns), "%zu", n);
		snprintf(as, sizeof(as), "%ld", arg);
		dup2(fd[1], 1);
		dup2(fd[1], 2);
		close(fd[0]);
		setenv("SLUB_OPTIONS", options, 1);
		execl("/proc/self/exe", "test_malloc_debug", what, ns, as, (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	size_t used = 0;
	ssize_t r;
	while (used + 1 < len && (r = read(fd[0], out + used, len - 1 - used)) > 0)
		used += (size_t)r;
	out[used] = 0;
	char drain[4096];
	while (read(fd[0], drain, sizeof(drain)) > 0)
		;
	close(fd[0]);
	int status;
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static char out[1 << 18];

/* The case ran to its end and its reports hold @want (and @also, if given). */
static void expect(const char *options, const char *what, size_t n, long arg, const char *want,
		   const char *also)
{
	int status = run_case(options, what, n, arg, out, sizeof(out));
	bool ok = status == 0 && strstr(out, DONE) && strstr(out, want) && (!also || strstr(out, also));
	CHECK(ok);
	if (!ok)
		fprintf(stderr, "   %s %s size %zu arg %ld: status %d, wanted \"%s\"%s%s%s; got:\n%.3000s\n",
			options, what, n, arg, status, want, also ? " and \"" : "", also ? also : "",
			also ? "\"" : "", out);
}

static void double_free(void)
{
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		expect(DEBUG, "double", sizes[i], 0, "Object already free", NULL);
		expect(DEBUG, "interleaved", sizes[i], 0, "Object already free", NULL);
	}
	/* Release mode: an extent's double free by its name, not "invalid pointer". */
	expect("", "double", 20000, 0, "double free of", NULL);
	expect("", "interleaved", 300000, 0, "double free of", NULL);
}

static void invalid_free(void)
{
	SKIP_IF_UNCHECKED_FREE();
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		expect(DEBUG, "stack", sizes[i], 0, "free: invalid pointer", "not allocated by libslub");
		/* "... is not the start of an object in malloc-32", or of an extent */
		expect(DEBUG, "interior", sizes[i], 0, "not the start of", NULL);
		expect(DEBUG, "unaligned", sizes[i], 0, "not the start of", NULL);
		expect(DEBUG, "foreign", sizes[i], 0, "free: invalid pointer", "not allocated by libslub");
	}
	/* Release mode: small integers and non-canonical values are named, not taken. */
	expect("", "tiny", 100, 1, "invalid pointer 0x1 (a small integer", NULL);
	expect("", "tiny", 100, 16, "invalid pointer 0x10 (a small integer", NULL);
	expect("", "tiny", 100, 4095, "invalid pointer 0xfff (a small integer", NULL);
	expect("", "tiny", 100, (long)0x8000000000001000UL, "not a canonical", NULL);
	expect("", "interior", 20000, 0, "not the start of a block", NULL);
}

static void overflow_underflow(void)
{
	static const long by[] = { 1, 8, 16 };
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		for (size_t j = 0; j < sizeof(by) / sizeof(by[0]); j++) {
			expect(DEBUG, "overflow", sizes[i], by[j], "Redzone overwritten", "FIX ");
			expect(DEBUG, "underflow", sizes[i], by[j], "Redzone overwritten", "FIX ");
		}
	expect(DEBUG, "overflow", 20000, 1, "BUG malloc-large (Not tainted): Right Redzone overwritten",
	       "First byte 0x58 instead of 0xcc");
	expect(DEBUG, "underflow", 20000, 1, "BUG malloc-large (Not tainted): Left Redzone overwritten",
	       "INFO: Allocated in child+");
}

/* free_sized(): a wrong size is named, and a sized free checks what free() does. */
static void sized_free(void)
{
	for (size_t i = 0; i < 3; i++) {	/* the slab sizes: the size asked for is kept */
		expect(DEBUG, "sized_wrong", sizes[i], 0, "is not the", "bytes block");
		expect(DEBUG, "sized_overflow", sizes[i], 1, "Redzone overwritten", "free_sized: size");
	}
	expect(DEBUG, "sized_overflow", 20000, 1, "Right Redzone overwritten", "free_sized: size");
}

static void after_free(void)
{
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		expect(DEBUG, "after_free", sizes[i], 10, "Poison overwritten", "INFO: Freed in child+");
}

static void realloc_freed(void)
{
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		expect(DEBUG, "realloc_freed", sizes[i], 0, "already free", NULL);
	expect("", "realloc_freed", 20000, 0, "realloc of freed block", NULL);
}

static void leaks(void)
{
	expect(DEBUG " slub_leak_check=1", "leak", 20000, 0,
	       "leak: 3 objects, 96 bytes, allocated in leak_here", "leak: 1 object, 20000 bytes");
	CHECK(!strstr(out, "BUG"));
	expect("slub_debug=U slub_leak_check=1", "clean", 100, 0, "leak: no leaks", NULL);
	/* Listing the reachable ones: libc's alone are said so, not "from 0 call sites". */
	expect("slub_debug=U slub_leak_check=1 slub_leak_check_reachable=1", "clean", 100, 0,
	       "leak: no leaks", NULL);
	CHECK(!strstr(out, "from 0 call sites"));
	/*
	 * The scan: only what no pointer reaches; the rest counted, or listed on
	 * request.  As valgrind's memcheck: the cycle and the chain count one
	 * block each, and the block each reaches "indirectly lost".
	 */
	expect("slub_debug=U slub_leak_check=1", "scan", 100, 0,
	       "leak: 2 blocks, 64 bytes unreferenced at exit", "leak: still reachable:");
	CHECK(strstr(out, "; 2 more blocks, 64 bytes, reached only through them:"));
	CHECK(strstr(out, "leak: 1 object, 32 bytes (1 more, 32 bytes, reached only through it), "
			  "allocated in lost_here"));
	CHECK(strstr(out, "allocated in lost_here") && !strstr(out, "allocated in kept_here"));
	expect("slub_debug=U slub_leak_check=1 slub_leak_check_reachable=1", "scan", 100, 0,
	       "allocated in lost_here", "allocated in kept_here");
	expect("slub_debug=U slub_leak_check=1", "scan_large", 100, 0,
	       "leak: 1 block, 6291456 bytes unreferenced at exit", "leak: still reachable:");
	CHECK(strstr(out, "; 1 more block, 32 bytes, reached only through them:"));
	CHECK(strstr(out, "allocated in lost_here") && !strstr(out, "allocated in kept_here"));
	/* A block whose free was refused after a report: the program let it go, no leak. */
	expect(DEBUG " slub_leak_check=1", "overflow", 24, 1, "Redzone overwritten",
	       "leak: not counted: 1 block, 24 bytes the program freed but libslub kept");
	/* A suppression file in LeakSanitizer's syntax; a line of another kind is named. */
	char sup[] = "/tmp/slub-suppressions-XXXXXX", opts[128];
	int fd = mkstemp(sup);
	static const char text[] = "# the scan's lost blocks\nleak:lost_*\ncalled_from_lib:libx.so\n";
	CHECK(fd >= 0 && write(fd, text, sizeof(text) - 1) == (ssize_t)sizeof(text) - 1);
	close(fd);
	snprintf(opts, sizeof(opts), "slub_debug=U slub_leak_check=1 slub_leak_suppressions=%s", sup);
	expect(opts, "scan", 100, 0, "leak: no leaks", "leak: suppressed: 4 blocks, 128 bytes");
	CHECK(strstr(out, "'called_from_lib:libx.so' skipped") != NULL);
	unlink(sup);
}

static void no_false_reports(void)
{
	expect(DEBUG, "clean", 100, 0, DONE, NULL);
	CHECK(!strstr(out, "BUG") && !strstr(out, "slub:") && !strstr(out, "misaligned"));
	expect("", "clean", 100, 0, DONE, NULL);
	CHECK(!strstr(out, "slub:") && !strstr(out, "misaligned"));
}

int main(int argc, char **argv)
{
	if (argc == 4)
		return child(argv[1], strtoul(argv[2], NULL, 0), strtol(argv[3], NULL, 0));
	RUN(double_free);
	RUN(invalid_free);
	RUN(overflow_underflow);
	RUN(sized_free);
	RUN(after_free);
	RUN(realloc_freed);
	RUN(leaks);
	RUN(no_false_reports);
	return check_done();
}
