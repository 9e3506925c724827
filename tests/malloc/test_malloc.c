// SPDX-License-Identifier: MIT
/*
 * test_malloc.c - the malloc contract of libslub-malloc.so: sizes,
 * alignment, usable size, realloc, calloc, overflow, the memalign family,
 * zero sizes, bad pointers and errno.  Linked against libslub-malloc.so
 * alone, so this whole process (stdio included) runs on libslub.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <slub.h>

#include "slab/core/slab.h"	/* struct slab, compound_head(): inline only, no hidden symbol */
#include "check.h"	/* CHECK, RUN, EXPECT_ONE_REPORT (EXPECT_REPORT needs internals this library hides) */

/*
 * This file frees what it must not, on purpose: hide the pointers and
 * sizes from the compiler, which rightly warns about such misuse.
 */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#pragma GCC diagnostic ignored "-Wuse-after-free"
#endif
#define OPAQUE(x) ({ __typeof__(x) o_ = (x); __asm__("" : "+r"(o_)); o_; })

static bool aligned(const void *p, size_t a)
{
	return ((uintptr_t)p & (a - 1)) == 0;
}

static bool all_bytes(const void *p, int c, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++)
		if (b[i] != (unsigned char)c)
			return false;
	return true;
}

/* The head descriptor of the slab holding @p (public virt_to_page). */
static struct slab *slab_of(void *p)
{
	return page_slab(compound_head(virt_to_page(p)));
}

static unsigned int slab_objects(void *p)
{
	return ((union slab_counters){ .counters = slab_of(p)->counters }).objects;
}

/*
 * Allocate @size until it gets the finer class @fine: its kmalloc class
 * splits once its slabs hold more than slub_malloc_split pages.
 */
static void split_kmalloc_class(size_t size, size_t fine)
{
	enum { MAX_HELD = 4096 };
	static void *held[MAX_HELD];
	int n = 0;
	while (n < MAX_HELD) {
		void *p = malloc(OPAQUE(size));
		if (malloc_usable_size(p) == fine) {
			free(p);
			break;
		}
		held[n++] = p;
	}
	CHECK(n < MAX_HELD);
	while (n)
		free(held[--n]);
}

static void we_are_the_allocator(void)
{
	/* Up to 4 KiB: above, the fine classes are there from the start. */
	split_kmalloc_class(100, 112);
	split_kmalloc_class(2100, 2176);
	/* malloc and kmalloc are one allocator: ksize() knows malloc's objects. */
	void *p = malloc(100);
	CHECK_EQ(ksize(p), 112);	/* malloc's classes: 16-byte steps up to 128 */
	CHECK_EQ(malloc_usable_size(p), 112);
	free(p);
	/*
	 * Above 2 KiB the classes are what a slab divides into: a 4.2 KiB
	 * request takes 4368 bytes (64 KiB / 15), and its slab wastes nothing.
	 */
	p = malloc(4300);
	CHECK_EQ(malloc_usable_size(p), 4368);
	CHECK_EQ(slab_of(p)->order, 4);
	CHECK_EQ(slab_objects(p), 15);
	free(p);
	p = malloc(6600);	/* 7280: nine to a slab, not 7680 four to 32 KiB */
	CHECK_EQ(malloc_usable_size(p), 7280);
	CHECK_EQ(slab_objects(p), 9);
	free(p);
	p = malloc(2100);	/* 2176: fifteen to 32 KiB */
	CHECK_EQ(malloc_usable_size(p), 2176);
	CHECK_EQ(slab_objects(p), 15);
	free(p);
	/* kmalloc keeps the kernel's classes; either free takes either's object. */
	p = malloc(100);
	void *k = kmalloc(100, GFP_KERNEL);
	CHECK_EQ(ksize(k), 128);
	unsigned long e = slub_errors();
	kfree(p);
	free(k);
	CHECK_EQ(slub_errors(), e);
}

static void sizes_and_alignment(void)
{
	static const size_t sizes[] = { 1, 7, 8, 9, 15, 16, 17, 24, 33, 48, 63, 64, 65, 95, 96,
					97, 100, 128, 129, 191, 192, 193, 255, 256, 500, 1000,
					1024, 2000, 4095, 4096, 4097, 8191, 8192, 8193, 9000,
					12288, 65536, 100000, 1 << 20, 3 << 20, (4 << 20) + 1,
					10 << 20 };
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t n = sizes[i];
		char *p = malloc(n);
		CHECK(p != NULL);
		CHECK(aligned(p, n >= 16 ? 16 : 8));
		size_t usable = malloc_usable_size(p);
		CHECK(usable >= n);
		if (n > 8192)	/* page extents: exactly the pages asked for */
			CHECK_EQ(usable, (n + 4095) / 4096 * 4096);
		memset(p, 0x5a, usable);	/* all of it is the caller's */
		free(p);
	}
	CHECK_EQ(malloc_usable_size(NULL), 0);
}

static void zero_sizes(void)
{
	void *a = malloc(0), *b = malloc(0);
	CHECK(a && b && a != b);	/* unique, as glibc's */
	free(a);
	free(b);
	void *c = realloc(NULL, 0);
	CHECK(c != NULL);
	errno = 0;
	CHECK(realloc(c, 0) == NULL);	/* glibc: frees, returns NULL */
	void *d = calloc(0, 10);
	CHECK(d != NULL);
	free(d);
}

static size_t info_total(const char *type);

static void realloc_grows_shrinks_moves(void)
{
	size_t n = 10;
	unsigned char *p = malloc(n);
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)i;
	/* Grow through every kind: small classes, extents, large regions. */
	static const size_t steps[] = { 20, 100, 1000, 8192, 9000, 100000, 5 << 20, 20 << 20,
					100 << 20 };	/* past the 64 MiB slot: moves */
	for (size_t s = 0; s < sizeof(steps) / sizeof(steps[0]); s++) {
		unsigned char *q = realloc(p, steps[s]);
		CHECK(q != NULL);
		for (size_t i = 0; i < n; i++)
			if (q[i] != (unsigned char)i) {
				CHECK(!"realloc lost content");
				break;
			}
		for (size_t i = n; i < steps[s]; i++)
			q[i] = (unsigned char)i;
		p = q;
		n = steps[s];
	}
	/* Shrinking by less than half stays in place; by more, it moves. */
	CHECK((uintptr_t)realloc(OPAQUE(p), n - 4096) == (uintptr_t)p);
	unsigned char *q = realloc(OPAQUE(p), 100);
	CHECK(q != NULL && (uintptr_t)q != (uintptr_t)p);
	for (size_t i = 0; i < 100; i++)
		if (q[i] != (unsigned char)i) {
			CHECK(!"shrinking realloc lost content");
			break;
		}
	/*
	 * A block with a mapping of its own (above 4 MiB) grows and shrinks in
	 * place: a fresh one, not the cache's (the freed 100 MiB block was
	 * itself moved, and a moved mapping grows by moving again).
	 */
	CHECK_EQ(malloc_trim(0), 1);
	char *big = malloc(5 << 20);
	memset(big, 0x77, 5 << 20);
	char *bigger = realloc(OPAQUE(big), 40 << 20);
	CHECK((uintptr_t)bigger == (uintptr_t)big && all_bytes(bigger, 0x77, 5 << 20));
	memset(bigger, 0x66, 40 << 20);
	CHECK_EQ(malloc_usable_size(bigger), 40 << 20);
	char *smaller = realloc(OPAQUE(bigger), 6 << 20);
	CHECK((uintptr_t)smaller == (uintptr_t)big && all_bytes(smaller, 0x66, 6 << 20));
	CHECK_EQ(malloc_usable_size(smaller), 6 << 20);
	/*
	 * Grown a MiB at a time past its slot: it moves (its pages, by
	 * mremap), grows inside the moved mapping, moves again; every MiB
	 * written keeps its mark.
	 */
	char *grow = smaller;
	size_t moves = 0, moved_before = info_total("mmap-moved");
	for (size_t mib = 7; mib <= 200; mib++) {
		char *g = realloc(OPAQUE(grow), mib << 20);
		CHECK(g != NULL);
		moves += g != grow;
		grow = g;
		grow[(mib << 20) - 1] = (char)mib;
		CHECK_EQ(malloc_usable_size(grow), mib << 20);
	}
	CHECK(moves >= 2);
	/* Moved by pages, not copied: 63 MiB at the first move, 128 MiB over all. */
	CHECK(info_total("mmap-moved") >= moved_before + (128u << 20));
	CHECK(all_bytes(grow, 0x66, 6 << 20));
	for (size_t mib = 7; mib <= 200; mib++)
		if (grow[(mib << 20) - 1] != (char)mib) {
			CHECK(!"a block grown past its slot lost content");
			break;
		}
	free(grow);
	char *small = malloc(100);
	void *same = realloc(OPAQUE(small), 90);
	CHECK((uintptr_t)same == (uintptr_t)small);
	free(same);
	free(q);
}

/* Big buffers freed and asked for again in a loop keep their mapping. */
static void large_blocks_are_reused(void)
{
	/* The first free of a new biggest size gives it back (see below). */
	free(OPAQUE(malloc(8 << 20)));
	char *a = malloc(8 << 20);
	memset(a, 1, 8 << 20);
	uintptr_t where = (uintptr_t)a;
	free(a);
	struct rusage before, after;
	getrusage(RUSAGE_SELF, &before);
	char *b = malloc(7 << 20);	/* the cached mapping, resized */
	memset(b, 2, 7 << 20);
	getrusage(RUSAGE_SELF, &after);
	CHECK((uintptr_t)b == where);
	CHECK(after.ru_minflt - before.ru_minflt < 100);	/* still resident: no faults */
	CHECK_EQ(malloc_usable_size(b), 7 << 20);
	free(b);
	char *c = calloc(1, 9 << 20);	/* reused and dirty: calloc clears it */
	CHECK((uintptr_t)c == where && all_bytes(c, 0, 9 << 20));
	free(c);
	CHECK_EQ(malloc_trim(0), 1);	/* unmaps what the cache held */
}

static const char *self;

static long resident_after(size_t size)
{
	char *p = malloc(size);
	memset(p, 3, size);
	free(p);
	return rss_bytes();
}

/*
 * In a fresh process (nothing big freed yet): a buddy extent freed for the
 * first time goes back to the OS at once; freed again, that size is kept
 * for the next request.  A mapping of its own is kept from its first free,
 * but only until the process takes fresh pages: then the cache gives back
 * as many first, and the peak does not grow by what it holds.
 */
static int release_once(void)
{
	long base = rss_bytes();
	enum { SIZE = 2 << 20 };
	long once = resident_after(SIZE) - base;
	long twice = resident_after(SIZE) - base;
	CHECK(once < (long)SIZE / 4);
	CHECK(twice > (long)SIZE / 2);
	fprintf(stderr, "   %d MiB freed: %ld KiB, then %ld KiB resident\n", SIZE >> 20,
		once >> 10, twice >> 10);
	malloc_trim(0);

	enum { BIG = 12 << 20, SMALL = 64 << 10, NR = (8 << 20) / SMALL };
	base = rss_bytes();
	long kept = resident_after(BIG) - base;
	CHECK(kept > (long)BIG / 2);
	static char *p[NR];
	for (int i = 0; i < NR; i++) {
		p[i] = malloc(SMALL);	/* buddy extents: fresh pages */
		CHECK(p[i] != NULL);
		memset(p[i], 1, SMALL);
	}
	long after = rss_bytes() - base;
	fprintf(stderr, "   %d MiB freed: %ld KiB resident; then %d MiB of new blocks: %ld KiB\n",
		BIG >> 20, kept >> 10, (NR * SMALL) >> 20, after >> 10);
	CHECK(after < kept + (1 << 20));
	for (int i = 0; i < NR; i++)
		free(p[i]);
	malloc_trim(0);

	/*
	 * Resident pages are what the cache gives back, not pages: of a
	 * buffer used in half, cutting the untouched tail gives back nothing.
	 * And a mapping made without the cache (an alignment above a page)
	 * is paid for as well.
	 */
	base = rss_bytes();
	char *half = malloc(2 * BIG);
	CHECK(half != NULL);
	memset(half, 1, BIG);
	free(half);
	kept = rss_bytes() - base;
	void *aligned = NULL;
	CHECK_EQ(posix_memalign(&aligned, 4 << 20, 8 << 20), 0);
	memset(aligned, 1, 8 << 20);
	long aligned_after = rss_bytes() - base;
	for (int i = 0; i < NR / 2; i++) {
		p[i] = malloc(SMALL);
		CHECK(p[i] != NULL);
		memset(p[i], 1, SMALL);
	}
	after = rss_bytes() - base;
	fprintf(stderr, "   half of %d MiB used, freed: %ld KiB resident; then 8 MiB aligned to 4 MiB: "
		"%ld KiB; then %d MiB of new blocks: %ld KiB\n", 2 * BIG >> 20, kept >> 10,
		aligned_after >> 10, (NR / 2 * SMALL) >> 20, after >> 10);
	CHECK(aligned_after < kept + (1 << 20));
	CHECK(after < kept + (1 << 20));
	free(aligned);
	for (int i = 0; i < NR / 2; i++)
		free(p[i]);
	return check_done();
}

static void big_blocks_go_back_once(void)
{
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "%s --release-once", self);
	CHECK_EQ(system(cmd), 0);
}

/*
 * In a fresh process: a big calloc made of dirty free blocks (64 KiB
 * blocks written and freed, merged) gets zero pages, not a memset that
 * makes every page resident; a size freed before is cleared as usual.
 */
static int calloc_unresident(void)
{
	enum { NR = 64, SMALL = 60 << 10, BIG = 1 << 20 };
	char *p[NR];
	for (int i = 0; i < NR; i++) {
		p[i] = malloc(SMALL);
		memset(p[i], 0xee, SMALL);
	}
	for (int i = 0; i < NR; i++)
		free(p[i]);
	char *z = calloc(1, BIG);
	CHECK(z != NULL);
	/* Before reading it: a read maps the zero page, which mincore() counts. */
	long resident = resident_pages(z, BIG);
	CHECK(resident >= 0 && resident <= 8);
	fprintf(stderr, "   calloc of 1 MiB over dirty blocks: %ld pages resident\n", resident);
	CHECK(all_bytes(z, 0, BIG));
	memset(z, 0x11, BIG);
	free(z);	/* first free of this size: given back, and kept from now on */
	z = calloc(1, BIG);
	CHECK(z != NULL && all_bytes(z, 0, BIG));
	free(z);
	return check_done();
}

/*
 * In a fresh process: a freed 24 MiB buffer serves three of 8 MiB (as sort
 * asks for after its main buffer) with its pages, moved, not faulted in
 * again; and a calloc from it reads zero.
 */
static int split_cached(void)
{
	enum { BIG = 24 << 20, PART = 8 << 20 };
	char *big = malloc(BIG);
	CHECK(big != NULL);
	memset(big, 0x5a, BIG);
	free(big);
	size_t split_before = info_total("mmap-split");
	struct rusage before, after;
	getrusage(RUSAGE_SELF, &before);
	char *part[3];
	for (int i = 0; i < 3; i++) {
		part[i] = malloc(PART);
		CHECK(part[i] != NULL);
		memset(part[i], i, PART);
	}
	getrusage(RUSAGE_SELF, &after);
	long faults = after.ru_minflt - before.ru_minflt;
	fprintf(stderr, "   3 blocks of 8 MiB after a 24 MiB one freed: %ld page faults, "
		"%zu KiB split off\n", faults, (info_total("mmap-split") - split_before) >> 10);
	CHECK(faults < 256);	/* 4096 for the two that would be fresh */
	CHECK(info_total("mmap-split") >= split_before + (16u << 20));
	CHECK_EQ(malloc_usable_size(part[0]), PART);
	for (int i = 0; i < 3; i++)
		for (size_t k = 0; k < PART; k += 4096)
			if (part[i][k] != (char)i) {
				CHECK(!"a block cut from a cached mapping lost its bytes");
				break;
			}
	for (int i = 0; i < 3; i++)
		free(part[i]);
	char *z = calloc(1, PART + (1 << 20));
	CHECK(z != NULL && all_bytes(z, 0, PART + (1 << 20)));
	free(z);

	/* A calloc from a cached buffer used in part: zero pages, nothing made resident. */
	malloc_trim(0);
	char *sparse = malloc(BIG);
	CHECK(sparse != NULL);
	memset(sparse, 1, BIG / 8);
	free(sparse);
	char *table = calloc(1, BIG - (1 << 20));
	CHECK(table != NULL);
	long resident = resident_pages(table, BIG - (1 << 20));
	CHECK(resident >= 0);
	fprintf(stderr, "   calloc of 23 MiB from a cached block used for 3 MiB: %ld pages resident\n",
		resident);
	CHECK(resident < 64);	/* a memset: all 5888 */
	CHECK(all_bytes(table, 0, BIG - (1 << 20)));
	free(table);
	return check_done();
}

/* Under a limit on address space a freed mapping is not kept: its room is the program's. */
static int uncached_under_limit(void)
{
	enum { BIG = 100 << 20 };
	malloc_trim(0);		/* nothing kept from the parent's tests */
	char *p = malloc(BIG);
	if (!p)
		return 3;
	memset(p, 1, BIG);
	free(p);
	void *m = mmap(NULL, 64 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		fprintf(stderr, "   a 64 MiB mapping after a 100 MiB block freed, under the limit: %m\n");
	CHECK(m != MAP_FAILED);
	if (m != MAP_FAILED)
		munmap(m, 64 << 20);
	return check_done();
}

static void big_blocks_uncached_under_limit(void)
{
	CHECK_EQ(child_under_address_limit(110u << 20, uncached_under_limit), 0);
}

static void big_blocks_serve_smaller_ones(void)
{
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "%s --split-cached", self);
	CHECK_EQ(system(cmd), 0);
}

static void big_callocs_stay_unresident(void)
{
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "%s --calloc-unresident", self);
	CHECK_EQ(system(cmd), 0);
}

/* Threads of this process, from /proc without an allocator call. */
static int threads_now(void)
{
	char buf[4096];
	int fd = open("/proc/self/status", O_RDONLY);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	const char *t = strstr(buf, "\nThreads:");
	return t ? atoi(t + 9) : -1;
}

/*
 * In a fresh process, with (argv "1") or without slub_decay_thread: 15 MiB
 * of extents freed at once and an 8 MiB mapping left in the extent cache,
 * then no allocator call for ten decay periods.  With the thread their
 * pages go back meanwhile; without, nothing runs the decay and they stay
 * resident (the control: the test can tell).  The parent sets
 * slub_decay_ms=40 and no dirty bound.
 */
static int decay_thread_child(bool want_thread)
{
	enum { NR = 256, SIZE = 60 << 10 };	/* extents below the release threshold */
	static char *p[NR];
	if (slub_errors() && threads_now() == 1) {
		/*
		 * Sanitizer runtimes allocate before glibc sets environ (init.c):
		 * the defaults run, with a dirty bound that gives pages back at
		 * once, so neither the thread nor its control can be seen.
		 */
		fprintf(stderr, "   skipped: SLUB_OPTIONS came after the first allocation\n");
		return 0;
	}
	CHECK_EQ(threads_now(), want_thread ? 2 : 1);
	for (int i = 0; i < NR; i++) {
		p[i] = malloc(SIZE);
		CHECK(p[i] != NULL);
		memset(p[i], 0x5a, SIZE);
	}
	/* A mapping of its own (above 4 MiB) freed a second time: the extent cache keeps it. */
	enum { BIG = 8 << 20 };
	char *big = malloc(BIG);
	CHECK(big != NULL);
	memset(big, 1, BIG);
	free(big);	/* the first free of a size gives it back at once */
	big = malloc(BIG);
	CHECK(big != NULL);
	memset(big, 1, BIG);
	/* The frees last, together: the decay counts from each. */
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	free(big);
	for (int i = 0; i < NR; i++)
		free(p[i]);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	long setup_ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	/*
	 * Only system calls from here: an allocator call would run the decay
	 * itself.  On a loaded machine the thread runs late: with it, look
	 * again every 100 ms for up to 10 s more.
	 */
	long total = (long)NR * (SIZE >> 12), resident, big_resident;
	int idle_ms = 400;
	struct timespec ts = { 0, 400 * 1000000L };
	for (;; idle_ms += 100, ts.tv_nsec = 100 * 1000000L) {
		while (nanosleep(&ts, &ts))
			;
		resident = 0;
		for (int i = 0; i < NR; i++) {
			long n = resident_pages(p[i], SIZE);
			CHECK(n >= 0);
			resident += n;
		}
		big_resident = resident_pages(big, BIG);
		if (big_resident < 0)	/* ENOMEM: unmapped */
			big_resident = 0;
		if (!want_thread || (resident < total / 16 && !big_resident) || idle_ms >= 10400)
			break;
	}
	fprintf(stderr, "   %s the decay thread: %ld of %ld freed pages resident after %d ms idle, "
		"%ld of %d of a cached mapping\n", want_thread ? "with" : "without", resident, total,
		idle_ms, big_resident, BIG >> 12);
	if (want_thread) {
		CHECK(resident < total / 16);
		CHECK_EQ(big_resident, 0);
	} else if (setup_ms >= 40) {
		/* A loaded machine: the frees' own decay ran before the last of them (CI saw 1125). */
		fprintf(stderr, "   control not judged: the frees took %ld ms, beyond slub_decay_ms\n",
			setup_ms);
	} else {
		CHECK(resident > total / 2);
		CHECK(big_resident > (BIG >> 12) / 2);
	}
	return check_done();
}

static void decay_thread_gives_back_while_idle(void)
{
	char cmd[4200];
	for (int thread = 0; thread < 2; thread++) {
		snprintf(cmd, sizeof(cmd),
			 "SLUB_OPTIONS='slub_decay_thread=%d slub_decay_ms=40 slub_dirty_ratio=0' "
			 "%s --decay-thread %d", thread, self, thread);
		CHECK_EQ(system(cmd), 0);
	}
}

/* A child that allocates from one class: its exit table names what it made. */
static int one_class(void)
{
	free(malloc(OPAQUE(3000)));	/* malloc-3264 */
	return 0;
}

/*
 * A class's cache is made at its first allocation, not at start-up: the
 * child above asked for 3000 bytes only, so besides kmalloc's caches (made
 * at start-up, as in the kernel) it made malloc-3264 and no other class
 * when classes are split at once (slub_malloc_split=0), and none at all by
 * default: 3000 bytes go to kmalloc-4k until it holds 16 pages.  The
 * kmem_cache row (shown with slub_exit_stats_internal=1) counts the caches
 * made (45 when all were made up front), the sheaf-N caches of malloc's
 * sheaves too (their own rows).
 */
static void one_class_child_made(const char *split, bool want_malloc_3264)
{
	char path[] = "/tmp/test_malloc-stats-XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	char cmd[4300];
	snprintf(cmd, sizeof(cmd),
		 "SLUB_OPTIONS='slub_exit_stats=%s slub_exit_stats_internal=1 %s' %s --one-class", path,
		 split, self);
	CHECK_EQ(system(cmd), 0);
	char table[16384];
	ssize_t n = read(fd, table, sizeof(table) - 1);
	close(fd);
	unlink(path);
	if (n <= 0) {
		/* UBSan's runtime allocates before environ exists: options unseen. */
		fprintf(stderr, "   skipped: the child printed no table (SLUB_OPTIONS unseen)\n");
		return;
	}
	table[n] = 0;
	CHECK((strstr(table, "\nmalloc-3264 ") != NULL) == want_malloc_3264);
	CHECK(strstr(table, "\nmalloc-") == NULL || want_malloc_3264);
	const char *row = strstr(table, "\nkmem_cache ");
	unsigned long caches = 0;	/* its Objects at exit: Name Objsize Peak | Memory Objects */
	CHECK(row && sscanf(row + 1, "%*s %*s %*s | %*s %lu", &caches) == 1);
	unsigned long sheaf_caches = 0;
	for (const char *p = table; (p = strstr(p, "\nsheaf-")); p++)
		sheaf_caches++;
	/* kmalloc-8 .. kmalloc-8k (the boot cache is static), malloc-3264 if made */
	CHECK_EQ(caches, 13 + want_malloc_3264 + sheaf_caches);
}

static void classes_made_at_first_use(void)
{
	one_class_child_made("slub_malloc_split=0", true);
	one_class_child_made("", false);
}

/*
 * A fresh process (argv "--split"): 40 bytes go to kmalloc-64 until its
 * slabs hold more than slub_malloc_split pages (16), then to malloc-48;
 * 200 bytes still go to kmalloc-256, which is not full; 5000 bytes go to
 * malloc-5040 (65536 / 13) from the start.  What was allocated
 * before the split stays where it is and is freed from there.
 */
#define SPLIT_OBJECTS 4000	/* 250 KiB of kmalloc-64: well past 16 pages */
static int split_child(void)
{
	static void *early[SPLIT_OBJECTS];
	void *first = malloc(OPAQUE(40));
	if (malloc_usable_size(first) != 64)
		return 10;
	/*
	 * Where the split comes depends on how full each CPU's slab was when
	 * the thread moved, so find it: 64 bytes up to some object, 48 after.
	 */
	int split_at = -1, wrong = 0;
	for (int i = 0; i < SPLIT_OBJECTS; i++) {
		early[i] = malloc(OPAQUE(40));
		size_t usable = malloc_usable_size(early[i]);
		if (split_at < 0 && usable == 48)
			split_at = i;
		wrong += usable != (split_at < 0 ? 64u : 48u);
	}
	void *other = malloc(OPAQUE(200));
	void *big = malloc(OPAQUE(5000));	/* above 4 KiB: fine classes from the start */
	/*
	 * At the slab that takes kmalloc-64 past 16 pages (order-1 slabs of 128
	 * objects: the ninth).  Fewer than 1024 objects when a CPU's slab was
	 * left part used, never a quarter of that; never twice that.
	 */
	int rc = split_at < 256 || split_at > 2048 ? 11 : wrong ? 12 :
		 malloc_usable_size(other) != 256 ? 13 :
		 malloc_usable_size(big) != 5040 ? 14 : 0;
	if (rc)
		fprintf(stderr, "split child: split at object %d, %d sizes out of order\n", split_at, wrong);
	free(big);
	for (int i = 0; i < SPLIT_OBJECTS; i++)
		free(early[i]);
	free(first);
	free(other);
	return rc;
}

/*
 * A fresh process (argv "--sheaf-capacity"): kmalloc-64's sheaf capacity
 * (malloc's cache), a kmem_cache of the program's own's and the fast
 * paths' mode, as "MALLOC OWN MODE"; "late" if SLUB_OPTIONS came after the
 * first allocation (reported).
 */
static int sheaf_capacity_child(void)
{
	free(malloc(40));
	if (slub_errors()) {	/* a sanitizer runtime allocated before environ: defaults */
		printf("late\n");
		return 0;
	}
	struct kmem_cache *own = kmem_cache_create("test_own_64", 64, 0, SLAB_NO_MERGE, NULL);
	struct kmem_cache *km = slub_find_cache("kmalloc-64");
	char a[32] = "", b[32] = "";
	if (!own || !km || slub_attr_read(km, "sheaf_capacity", a, sizeof(a)) <= 0 ||
	    slub_attr_read(own, "sheaf_capacity", b, sizeof(b)) <= 0)
		return 1;
	const char *mode = slub_percpu_mode();
	printf("%d %d %s\n", atoi(a), atoi(b), mode ? mode : "none");
	kmem_cache_destroy(own);
	return 0;
}

/* "MALLOC OWN MODE" from a child run with @options; "" if it printed nothing. */
static void sheaf_capacities(const char *options, char *out, size_t len)
{
	char cmd[4300];
	snprintf(cmd, sizeof(cmd), "SLUB_OPTIONS='%s' %s --sheaf-capacity", options, self);
	FILE *f = popen(cmd, "r");
	*out = 0;
	CHECK(f != NULL);
	if (f && !fgets(out, (int)len, f))
		*out = 0;
	out[strcspn(out, "\n")] = 0;
	if (f)
		CHECK_EQ(pclose(f), 0);
}

/*
 * malloc's caches are on sheaves of 32 by default (slub_malloc_sheaves)
 * where the fast paths are rseq sequences (the child says which mode it
 * chose: glibc's rseq area, slub_rseq and membarrier decide);
 * a program's own caches are not; slub_sheaves sets both;
 * slub_malloc_sheaves=0 puts malloc back on the unqueued cpu slabs, and
 * slub_malloc_sheaves_min its caches of smaller objects; a debug cache
 * has none.
 */
static void malloc_caches_on_sheaves(void)
{
	/* Capacities under rseq and under cmpxchg16b; a mode the case forces. */
	const struct { const char *options, *rseq, *cas, *mode; } cases[] = {
		{ "", "32 0", "0 0", NULL },
		{ "slub_malloc_sheaves=8", "8 0", "0 0", NULL },
		{ "slub_rseq=0", NULL, "0 0", "cmpxchg16b + thread sheaves" },	/* a sheaf would take a lock */
		{ "slub_rseq=0 slub_thread_sheaves=0", NULL, "0 0", "cmpxchg16b" },
		{ "slub_malloc_sheaves=0", "0 0", "0 0", NULL },
		{ "slub_malloc_sheaves_min=64", "32 0", "0 0", NULL },	/* kmalloc-64: not below */
		{ "slub_malloc_sheaves_min=65", "0 0", "0 0", NULL },
		{ "slub_sheaves=16", "16 16", "16 16", NULL },
		{ "slub_sheaves=16 slub_malloc_sheaves=0", "16 16", "16 16", NULL },
		{ "slub_debug=F,kmalloc-64", "0 0", "0 0", NULL },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char got[96], mode[40] = "";
		int malloc_cap = -1, own_cap = -1;
		sheaf_capacities(cases[i].options, got, sizeof(got));
		if (!*got || !strcmp(got, "late")) {	/* UBSan's runtime allocates before environ */
			fprintf(stderr, "   skipped: the child printed nothing (SLUB_OPTIONS unseen)\n");
			return;
		}
		CHECK_EQ(sscanf(got, "%d %d %39[^\n]", &malloc_cap, &own_cap, mode), 3);
		bool rseq = !strcmp(mode, "rseq");
		CHECK(rseq || !strcmp(mode, "cmpxchg16b") || !strcmp(mode, "cmpxchg16b + thread sheaves"));
		if (cases[i].mode)
			CHECK(!strcmp(mode, cases[i].mode));
		const char *want = rseq ? cases[i].rseq : cases[i].cas;
		char caps[32];
		snprintf(caps, sizeof(caps), "%d %d", malloc_cap, own_cap);
		if (!want || strcmp(caps, want))
			fprintf(stderr, "   SLUB_OPTIONS='%s': '%s', want '%s'\n", cases[i].options, got,
				want ? want : "(no rseq)");
		CHECK(want && !strcmp(caps, want));
	}
}

static void kmalloc_classes_split_when_full(void)
{
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "SLUB_OPTIONS= %s --split", self);
	CHECK_EQ(system(cmd), 0);
}

static void calloc_zeroes_and_overflow(void)
{
	for (size_t n = 16; n <= (1 << 22); n *= 4) {
		char *p = malloc(n);
		memset(p, 0xff, n);
		free(p);
		char *z = calloc(1, n);	/* likely the same memory, dirty */
		CHECK(z != NULL && all_bytes(z, 0, n));
		free(z);
	}
	char *big = calloc(3, 7 << 20);
	CHECK(big != NULL && all_bytes(big, 0, 21 << 20));
	free(big);
	errno = 0;
	CHECK(calloc(OPAQUE(SIZE_MAX / 2), 3) == NULL);
	CHECK_EQ(errno, ENOMEM);
	void *p = malloc(10);
	errno = 0;
	CHECK(reallocarray(p, OPAQUE(SIZE_MAX / 2), 3) == NULL);
	CHECK_EQ(errno, ENOMEM);
	void *r = reallocarray(OPAQUE(p), 5, 4);	/* p is still valid after the failure */
	CHECK(r != NULL);
	free(r);
	free(reallocarray(NULL, 5, 4));
	unsigned long e = slub_errors();
	errno = 0;
	CHECK(malloc(OPAQUE(SIZE_MAX / 2)) == NULL);	/* impossible: ENOMEM, no report */
	CHECK_EQ(errno, ENOMEM);
	CHECK_EQ(slub_errors(), e);
	/* Beyond RAM + swap: the kernel's overcommit heuristic refuses it, as for glibc. */
	FILE *f = fopen("/proc/sys/vm/overcommit_memory", "r");
	int mode = -1;
	if (f) {
		if (fscanf(f, "%d", &mode) != 1)
			mode = -1;
		fclose(f);
	}
	if (mode == 0) {
		errno = 0;
		CHECK(malloc(OPAQUE((size_t)1 << 42)) == NULL);	/* 4 TiB: address space enough */
		CHECK_EQ(errno, ENOMEM);
		void *a = (void *)1;
		CHECK_EQ(posix_memalign(&a, (size_t)1 << 30, (size_t)1 << 42), ENOMEM);
	}
}

static void memalign_family(void)
{
	/* 65 and 130 would land in kmalloc-96 and kmalloc-192: only 32/64-aligned. */
	static const size_t sizes[] = { 1, 65, 100, 130, 4096, 5000, 100000 };
	for (size_t align = 1; align <= (16 << 20); align <<= 1) {
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			/* Several live at once: not only the first object of a slab. */
			void *live[6];
			size_t n = sizes[i];
			for (int k = 0; k < 6; k++) {
				void *p = NULL;
				if (k % 3 == 0 && align >= sizeof(void *))
					CHECK_EQ(posix_memalign(&p, align, n), 0);
				else if (k % 3 == 1)
					p = memalign(align, n);
				else
					p = aligned_alloc(align, n);
				CHECK(p != NULL && aligned(p, align));
				CHECK(malloc_usable_size(p) >= n);
				memset(p, 1, n);
				live[k] = p;
			}
			for (int k = 0; k < 6; k++)
				free(live[k]);
		}
	}
	void *p = (void *)1;
	CHECK_EQ(posix_memalign(&p, 24, 10), EINVAL);
	CHECK_EQ(posix_memalign(&p, 4, 10), EINVAL);	/* not a multiple of sizeof(void *) */
	CHECK(p == (void *)1);				/* untouched on failure */
	errno = 0;
	CHECK(aligned_alloc(OPAQUE((size_t)24), 10) == NULL);
	CHECK_EQ(errno, EINVAL);
	void *m = memalign(OPAQUE((size_t)24), 10);	/* glibc rounds the alignment up to 32 */
	CHECK(m != NULL && aligned(m, 32));
	free(m);
	void *v = valloc(10), *pv = pvalloc(1);
	CHECK(aligned(v, 4096) && aligned(pv, 4096));
	CHECK(malloc_usable_size(pv) >= 4096);
	free(v);
	free(pv);
}

/* C23's sized frees; glibc 2.43 declares them, older headers do not. */
void free_sized(void *p, size_t size);
void free_aligned_sized(void *p, size_t align, size_t size);

/*
 * free_sized() and free_aligned_sized() free every kind of block (a second
 * free() of it is then a double free), report a size larger than the block,
 * an alignment it does not have or that is no power of two, and still free
 * it; a pointer that is not ours is reported and ignored.
 */
static void sized_frees(void)
{
	SKIP_IF_UNCHECKED_FREE();
	static const size_t sizes[] = { 0, 1, 100, 3000, 9000, 100000, 9 << 20 };
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t n = sizes[i];
		unsigned long e = slub_errors();
		errno = 1234;
		char *p = malloc(n);
		free_sized(p, n);
		void *q = aligned_alloc(64, n);
		CHECK(q != NULL && aligned(q, 64));
		free_aligned_sized(q, 64, n);
		CHECK_EQ(errno, 1234);
		CHECK_EQ(slub_errors(), e);
		EXPECT_ONE_REPORT(free(OPAQUE(p)));		/* it was freed */
		EXPECT_ONE_REPORT(free(OPAQUE(q)));
	}
	free_sized(NULL, 10);
	free_aligned_sized(NULL, 16, 10);
	/* The usable size is the bound (the widened size, as ksize() gives). */
	static const size_t small_and_extent[] = { 100, 100000 };
	for (size_t i = 0; i < 2; i++) {
		char *p = malloc(small_and_extent[i]);
		size_t usable = malloc_usable_size(p);
		unsigned long e = slub_errors();
		free_sized(p, usable);
		CHECK_EQ(slub_errors(), e);
		p = malloc(small_and_extent[i]);
		EXPECT_ONE_REPORT(free_sized(OPAQUE(p), malloc_usable_size(p) + 1));
		EXPECT_ONE_REPORT(free(OPAQUE(p)));		/* freed all the same */
	}
	char *p;
	p = malloc(48);
	size_t align = 1;
	while (aligned(p, align << 1))
		align <<= 1;
	EXPECT_ONE_REPORT(free_aligned_sized(OPAQUE(p), align << 1, 48));	/* not that aligned */
	EXPECT_ONE_REPORT(free(OPAQUE(p)));
	p = malloc(48);
	EXPECT_ONE_REPORT(free_aligned_sized(OPAQUE(p), 24, 48));		/* no power of two */
	EXPECT_ONE_REPORT(free(OPAQUE(p)));
	p = malloc(48);
	EXPECT_ONE_REPORT(free_aligned_sized(OPAQUE(p), 0, 48));
	EXPECT_ONE_REPORT(free(OPAQUE(p)));
	int local;
	EXPECT_ONE_REPORT(free_sized(OPAQUE(&local), sizeof(local)));	/* not ours */
	p = malloc(64);
	EXPECT_ONE_REPORT(free_sized(OPAQUE(p + 16), 16));		/* inside a block */
	free_sized(p, 64);
}

static void bad_pointers_are_reported(void)
{
	SKIP_IF_UNCHECKED_FREE();
	int local;
	char *p = malloc(64);
	EXPECT_ONE_REPORT(free(OPAQUE(&local)));		/* not ours */
	EXPECT_ONE_REPORT(free(OPAQUE(p + 8)));		/* not the start of an object */
	EXPECT_ONE_REPORT(CHECK_EQ(malloc_usable_size(p + 1), 0));
	free(p);
	EXPECT_ONE_REPORT(free(OPAQUE(p)));			/* freed twice in a row */
	char *big = malloc(100000);
	EXPECT_ONE_REPORT(free(OPAQUE(big + 4096)));	/* inside an extent */
	free(big);
	EXPECT_ONE_REPORT(free(OPAQUE(big)));		/* an extent freed twice */
	char *huge = malloc(9 << 20);		/* a large region */
	free(huge);
	EXPECT_ONE_REPORT(free(OPAQUE(huge)));
	errno = 0;
	EXPECT_ONE_REPORT(CHECK(realloc(OPAQUE(&local), 10) == NULL));
	CHECK_EQ(errno, EINVAL);
	/* The memory map's own pages, the region header's first (64 MiB sections). */
	p = malloc(64);
	char *map = (char *)((uintptr_t)p & ~((1UL << 26) - 1));
	for (int i = 0; i < 3; i++) {
		EXPECT_ONE_REPORT(free(OPAQUE(map + i * 4096)));
		EXPECT_ONE_REPORT(CHECK_EQ(malloc_usable_size(map + i * 4096), 0));
	}
	free(p);
	free(malloc(200000));	/* the allocator still works */
}

static void free_keeps_errno(void)
{
	static const size_t sizes[] = { 8, 100, 9000, 6 << 20 };
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		void *p = malloc(sizes[i]);
		errno = 1234;
		free(p);
		CHECK_EQ(errno, 1234);
	}
	errno = 4321;
	free(NULL);
	CHECK_EQ(errno, 4321);
}

/*
 * Nor does any call that succeeds (a caller may test errno after a call
 * that only reports through it): every size, realloc in place and moved,
 * calloc, memalign, and blocks given back and taken again.
 */
static void successes_keep_errno(void)
{
	static const size_t sizes[] = { 1, 24, 100, 3000, 9000, 100000, 1 << 20, 5 << 20, 40 << 20 };
	enum { N = sizeof(sizes) / sizeof(sizes[0]) };
	for (int round = 0; round < 3; round++) {
		void *p[N];
		for (int i = 0; i < N; i++) {
			errno = 1234;
			p[i] = round == 1 ? calloc(1, sizes[i]) : malloc(sizes[i]);
			CHECK(p[i] != NULL);
			CHECK_EQ(errno, 1234);
		}
		for (int i = 0; i < N; i++) {
			errno = 1234;
			void *q = realloc(p[i], sizes[(i + 3) % N]);
			CHECK(q != NULL);
			CHECK_EQ(errno, 1234);
			p[i] = q;
		}
		errno = 1234;
		void *a = memalign(1 << 16, 1 << 20);
		CHECK(a != NULL);
		CHECK_EQ(errno, 1234);
		free(a);
		for (int i = 0; i < N; i++)
			free(p[i]);
		CHECK_EQ(malloc_trim(0) >= 0, 1);
		errno = 1234;
	}
}

/* A <total type="TYPE" ... size="N"/> of malloc_info(), or SIZE_MAX. */
static size_t info_total(const char *type)
{
	char xml[2048] = "";
	FILE *f = fmemopen(xml, sizeof(xml) - 1, "w");
	if (!f)
		return SIZE_MAX;
	CHECK_EQ(malloc_info(0, f), 0);
	fclose(f);
	char key[64];
	snprintf(key, sizeof(key), "<total type=\"%s\"", type);
	const char *at = strstr(xml, key);
	const char *size = at ? strstr(at, "size=\"") : NULL;
	return size ? strtoull(size + 6, NULL, 10) : SIZE_MAX;
}

static void trim_and_info(void)
{
	enum { N = 2000 };
	static void *blocks[N];
	struct mallinfo2 before = mallinfo2();
	for (int i = 0; i < N; i++) {
		blocks[i] = malloc(i % 2 ? 200 : 10000);
		memset(blocks[i], 1, i % 2 ? 200 : 10000);
	}
	struct mallinfo2 during = mallinfo2();
	CHECK(during.uordblks >= before.uordblks + N / 2 * (10000 + 200));
	struct timespec t0, t1, tick, start;
	/* Start the frees as a tick begins: they have all of it. */
	clock_gettime(CLOCK_MONOTONIC_COARSE, &start);
	do
		clock_gettime(CLOCK_MONOTONIC_COARSE, &t0);
	while (t0.tv_sec == start.tv_sec && t0.tv_nsec == start.tv_nsec);
	for (int i = 0; i < N; i++)
		free(blocks[i]);
	/*
	 * The freed extents' pages are still resident: keepcost says so, if
	 * the dirty bound took none.  It takes blocks freed in an earlier
	 * tick of this clock; the frees may cross a tick's end.
	 */
	struct mallinfo2 freed = mallinfo2();
	clock_gettime(CLOCK_MONOTONIC_COARSE, &t1);
	clock_getres(CLOCK_MONOTONIC_COARSE, &tick);
	long elapsed_ns = (t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec);
	if (elapsed_ns < tick.tv_sec * 1000000000L + tick.tv_nsec)
		CHECK(freed.keepcost >= N / 4 * 8192);
	else
		fprintf(stderr, "   slow frees (%ld ms): keepcost %zu not checked\n",
			elapsed_ns / 1000000, freed.keepcost);
	CHECK(freed.fordblks >= freed.keepcost);
	size_t returned_before = info_total("returned");
	CHECK(returned_before != SIZE_MAX);
	CHECK_EQ(malloc_trim(0), 1);	/* something was given back */
	CHECK(info_total("returned") >= returned_before + N / 4 * 8192);	/* malloc_info says so */
	CHECK(info_total("returned-by-bound") <= info_total("returned"));
	struct mallinfo2 after = mallinfo2();
	CHECK(after.uordblks < during.uordblks);
	CHECK(after.keepcost < freed.keepcost / 4);
	CHECK_EQ(mallopt(M_ARENA_MAX, 1), 0);	/* glibc's knobs: refused */
}

static void *thread_alloc(void *arg)
{
	void **slot = arg;
	*slot = malloc(777);
	memset(*slot, 7, 777);
	return NULL;
}

#define MIB (1UL << 20)

/*
 * BIG_BLOCKS 5 MiB blocks (7 MiB of address space each, with their
 * descriptors and 2 MiB alignment), one grown to 12 MiB, twice; errno is
 * untouched by every success.  Each block's slot tail is free, and the
 * kernel puts the next probe there: the search for an aligned start must
 * pass over our own slots, not fall back to over-reserving 64 MiB more.
 */
#define BIG_BLOCKS 40
static int big_blocks(void)
{
	enum { N = BIG_BLOCKS };
	for (int round = 0; round < 2; round++) {
		char *b[N];
		for (int i = 0; i < N; i++) {
			errno = 0;
			b[i] = malloc(5 * MIB);
			if (!b[i])
				return 10 + i;
			if (errno)
				return 60 + i;
			memset(b[i], (unsigned char)(i + 1), 5 * MIB);
		}
		char *g = realloc(b[0], 12 * MIB);
		if (!g)
			return 20;
		for (size_t k = 0; k < 5 * MIB; k += 4096)
			if (g[k] != 1)
				return 21;
		b[0] = g;
		for (int i = 0; i < N; i++)
			free(b[i]);
		malloc_trim(0);	/* the cached mappings go too: the next round starts empty */
	}
	return 0;
}

/*
 * A fresh process (argv "--small-objects"), limited to 48 MiB more address
 * space than it has at main: 96 MiB of 1000-byte objects, more than its
 * first section holds, needed a second whole 64 MiB section.
 */
static int small_objects(void)
{
	/*
	 * One CPU, so one node: under numa=fake each node the thread ran on
	 * would take sections of its own, and only the first was mapped whole.
	 */
	pin_to_cpu(sched_getcpu());
	if (limit_address_space(48 * MIB))
		return 2;
	enum { N = 96 * 1024 * 1024 / 1000 };
	char **held = malloc(N * sizeof(*held));
	if (!held)
		return 30;
	for (int i = 0; i < N; i++) {
		held[i] = malloc(1000);
		if (!held[i])
			return 31;
		memset(held[i], (unsigned char)i, 1000);
	}
	for (int i = 0; i < N; i++) {
		if (held[i][999] != (char)(unsigned char)i)
			return 32;
		free(held[i]);
	}
	free(held);
	return 0;
}

/*
 * Under a limit on address space (ulimit -v), blocks and sections take
 * about what they hold of it, not whole 64 MiB slots.
 */
static void address_space_as_used(void)
{
	CHECK_EQ(child_under_address_limit((BIG_BLOCKS * 7 + 24) * MIB, big_blocks), 0);
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "%s --small-objects", self);
	/* Its premise, a first section mapped whole, needs no limit at start. */
	if (!address_space_limited())
		CHECK_EQ(system(cmd), 0);
}

static void threads_and_fork(void)
{
	pthread_t t;
	void *p = NULL;
	pthread_create(&t, NULL, thread_alloc, &p);
	pthread_join(t, NULL);
	CHECK(p && all_bytes(p, 7, 777));
	free(p);	/* freed by another thread than the one that allocated */
	pid_t pid = fork();
	if (pid == 0) {
		char *c = malloc(1 << 20);	/* the child's allocator works */
		if (!c)
			_exit(1);
		memset(c, 3, 1 << 20);
		free(c);
		_exit(0);
	}
	int status;
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/*
 * A program's fork handler that allocates, registered while the process
 * has one thread (before ours, which libslub-malloc.so registers lazily):
 * its prepare must still run while our locks are free.  3 MiB is a buddy
 * extent, which takes the zone lock our prepare holds.  A hang is killed
 * by the alarm.
 */
static void *prepare_block;
static void allocating_prepare(void)
{
	prepare_block = malloc(OPAQUE(3 << 20));
}

static void allocating_parent_or_child(void)
{
	free(prepare_block);
	prepare_block = NULL;
}

static int fork_with_allocating_handler(void)
{
	alarm(30);
	pthread_atfork(allocating_prepare, allocating_parent_or_child, allocating_parent_or_child);
	pthread_t t;
	void *p = NULL;
	pthread_create(&t, NULL, thread_alloc, &p);	/* now our handlers exist */
	pthread_join(t, NULL);
	free(p);
	pid_t pid = fork();
	if (pid == 0)
		_exit(prepare_block == NULL && malloc(OPAQUE(1 << 20)) ? 0 : 1);
	int status;
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return 2;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 && !prepare_block ? 0 : 3;
}

static void prepare_handlers_may_allocate(void)
{
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "%s --fork-with-allocating-handler", self);
	CHECK_EQ(system(cmd), 0);
}

/*
 * A realloc that copies a long block faults its destination in with one
 * call (os_populate), not a fault per page during the copy: 256 KiB moved
 * costs a few faults, not 64.
 */
static void moving_realloc_populates(void)
{
	int fd = fault_counter();
	if (fd < 0) {
		printf("   (no perf page-fault counter here)\n");
		return;
	}
	slub_reclaim();		/* free blocks decommitted: the destination starts untouched */
	size_t old = 256UL << 10;
	char *p = malloc(old), *next = malloc(old);	/* next: p's buddy, so p cannot grow */
	CHECK(p != NULL && next != NULL);
	memset(p, 7, old);
	uint64_t before = faults_now(fd);
	char *q = realloc(p, 4 * old);
	uint64_t after = faults_now(fd);
	CHECK(q != NULL && q != p);	/* copied */
	CHECK(q[0] == 7 && q[old - 1] == 7);
	CHECK(after - before < 16);
	if (after - before >= 16)
		printf("   %llu faults\n", (unsigned long long)(after - before));
	free(q);
	free(next);
	close(fd);
}

/*
 * Two threads free one block too big for the cache of mappings (so the
 * free unmaps it) at once, or ask its size while it is freed: one free
 * wins, the other is reported; a lookup caught by the unmap answers or
 * reports, and never reads the unmapped descriptors (SIGSEGV).
 */
#define RACE_ROUNDS 1000
#define RACE_BLOCK (130UL << 20)	/* above the cache's 128 MiB */

static void *make_uncached(void)
{
	return malloc(RACE_BLOCK);
}

static void usable_size_of(void *p)
{
	(void)malloc_usable_size(p);
}

static void racing_double_free_large(void)
{
	check_racing_frees(make_uncached, free, usable_size_of, RACE_ROUNDS);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--calloc-unresident"))
		return calloc_unresident();
	if (argc > 1 && !strcmp(argv[1], "--release-once"))
		return release_once();
	if (argc > 1 && !strcmp(argv[1], "--split-cached"))
		return split_cached();
	if (argc > 2 && !strcmp(argv[1], "--decay-thread"))
		return decay_thread_child(atoi(argv[2]) != 0);
	if (argc > 1 && !strcmp(argv[1], "--one-class"))
		return one_class();
	if (argc > 1 && !strcmp(argv[1], "--split"))
		return split_child();
	if (argc > 1 && !strcmp(argv[1], "--sheaf-capacity"))
		return sheaf_capacity_child();
	if (argc > 1 && !strcmp(argv[1], "--small-objects"))
		return small_objects();
	if (argc > 1 && !strcmp(argv[1], "--fork-with-allocating-handler"))
		return fork_with_allocating_handler();
	self = argv[0];
	RUN(we_are_the_allocator);
	RUN(sizes_and_alignment);
	RUN(zero_sizes);
	RUN(realloc_grows_shrinks_moves);
	RUN(moving_realloc_populates);
	RUN(large_blocks_are_reused);
	RUN(big_blocks_go_back_once);
	RUN(big_blocks_serve_smaller_ones);
	RUN(big_blocks_uncached_under_limit);
	RUN(big_callocs_stay_unresident);
	RUN(decay_thread_gives_back_while_idle);
	RUN(classes_made_at_first_use);
	RUN(kmalloc_classes_split_when_full);
	RUN(malloc_caches_on_sheaves);
	RUN(calloc_zeroes_and_overflow);
	RUN(memalign_family);
	RUN(bad_pointers_are_reported);
	RUN(racing_double_free_large);
	RUN(sized_frees);
	RUN(free_keeps_errno);
	RUN(successes_keep_errno);
	RUN(trim_and_info);
	RUN(address_space_as_used);
	RUN(threads_and_fork);
	RUN(prepare_handlers_may_allocate);
	return check_done();
}
