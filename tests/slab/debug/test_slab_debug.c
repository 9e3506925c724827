// SPDX-License-Identifier: MIT
/*
 * test_slab_debug.c - slub_debug, broken on purpose: the kernel's slub_kunit
 * cases with the error counts the kernel asserts (a report and a FIX count
 * one each), then double and invalid frees, underflows, writes after free,
 * page-sized objects in order > 0 slabs, tracking and tracing, the debug
 * attribute switches, and the whole report's text in a child.  After each
 * repair the program goes on and the cache validates clean.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>

#include <slub.h>
#include "check.h"
#include "slab/core/slab.h"
#include "slab/core/slab_common.h"
#include "slab/debug/slab_debug.h"

static const char *self;

static struct kmem_cache *make(const char *name, unsigned int size, slab_flags_t flags)
{
	struct kmem_cache *s = kmem_cache_create(name, size, 0, flags | SLAB_NO_MERGE, NULL);
	CHECK(s != NULL);
	return s;
}

/* Errors since @e0, as slub_errors() counts them. */
#define ERRORS_SINCE(e0) ((long)(slub_errors() - (e0)))

static void clobber_zone(void)
{
	struct kmem_cache *s = make("TestSlub_RZ_alloc", 64, SLAB_RED_ZONE);
	unsigned char *p = kmem_cache_alloc(s, GFP_KERNEL);
	unsigned long e0 = slub_errors();
	p[64] = 0x12;
	CHECK_EQ(slub_validate(s), 2);
	CHECK_EQ(ERRORS_SINCE(e0), 2);
	CHECK(last_report_has("FIX TestSlub_RZ_alloc: Restoring Right Redzone"));
	CHECK_EQ(p[64], SLUB_RED_ACTIVE);	/* restored */
	CHECK_EQ(slub_validate(s), 0);
	kmem_cache_free(s, p);
	kmem_cache_destroy(s);
}

static void next_pointer(void)
{
	struct kmem_cache *s = make("TestSlub_next_ptr_free", 64, SLAB_POISON);
	unsigned char *p = kmem_cache_alloc(s, GFP_KERNEL);
	kmem_cache_free(s, p);
	CHECK(s->offset >= 64);		/* poisoned objects keep their free pointer outside */
	unsigned long saved = *(unsigned long *)(p + s->offset);
	p[s->offset] = (unsigned char)~p[s->offset];
	/* Freechain corrupt, then Wrong object count and its FIX. */
	CHECK_EQ(slub_validate(s), 3);
	*(unsigned long *)(p + s->offset) = saved;
	/* All free again, one counted in use: Wrong object count and its FIX. */
	CHECK_EQ(slub_validate(s), 2);
	CHECK_EQ(slub_validate(s), 0);
	/* And the cache still works. */
	void *q = kmem_cache_alloc(s, GFP_KERNEL);
	CHECK(q != NULL);
	kmem_cache_free(s, q);
	kmem_cache_destroy(s);
}

/*
 * A byte of a freed object overwritten: validate reports it and restores
 * @restored (2 errors: the report and its FIX), then finds nothing.
 */
static void clobber_free_byte(const char *name, slab_flags_t flags, unsigned int at,
			      unsigned char value, unsigned char restored, const char *fix)
{
	struct kmem_cache *s = make(name, 64, flags);
	unsigned char *p = kmem_cache_alloc(s, GFP_KERNEL);
	kmem_cache_free(s, p);
	p[at] = value;
	CHECK_EQ(slub_validate(s), 2);
	CHECK(last_report_has(fix));
	CHECK_EQ(p[at], restored);
	CHECK_EQ(slub_validate(s), 0);
	kmem_cache_destroy(s);
}

static void first_word(void)
{
	clobber_free_byte("TestSlub_1th_word_free", SLAB_POISON, 0, 0x78, POISON_FREE,
			  "Restoring Poison");
}

static void clobber_50th_byte(void)
{
	clobber_free_byte("TestSlub_50th_word_free", SLAB_POISON, 50, 0x9a, POISON_FREE,
			  "Restoring Poison");
}

static void clobber_redzone_free(void)
{
	clobber_free_byte("TestSlub_RZ_free", SLAB_RED_ZONE, 64, 0xab, SLUB_RED_INACTIVE,
			  "Restoring Right Redzone");
}

static void kmalloc_redzone_access(void)
{
	struct kmem_cache *s = make("TestSlub_RZ_kmalloc", 32,
				    SLAB_KMALLOC | SLAB_STORE_USER | SLAB_RED_ZONE);
	unsigned char *p = slab_alloc_sized(s, GFP_KERNEL, NUMA_NO_NODE, 18);
	CHECK(p != NULL);
	p[18] = 0xab;
	p[19] = 0xab;
	CHECK_EQ(slub_validate(s), 2);
	CHECK(last_report_has("Restoring kmalloc Redzone"));
	CHECK_EQ(slub_validate(s), 0);
	kmem_cache_free(s, p);
	kmem_cache_destroy(s);
}

static void leak_destroy(void)
{
	struct kmem_cache *s = make("TestSlub_leak_destroy", 64, 0);
	void *p = kmem_cache_alloc(s, GFP_KERNEL);
	unsigned long e0 = slub_errors();
	kmem_cache_destroy(s);
	/* The banner and the one object: two, as the kernel counts them. */
	CHECK_EQ(ERRORS_SINCE(e0), 2);
	kmem_cache_free(s, p);
	kmem_cache_destroy(s);
	CHECK_EQ(ERRORS_SINCE(e0), 2);
}

static void krealloc_redzone_zeroing(void)
{
	struct kmem_cache *s = make("TestSlub_krealloc", 64,
				    SLAB_KMALLOC | SLAB_STORE_USER | SLAB_RED_ZONE);
	unsigned long e0 = slub_errors();
	unsigned char *p = slab_alloc_sized(s, GFP_KERNEL, NUMA_NO_NODE, 48);
	memset(p, 0xff, 48);
	/* Shrink in place: the kmalloc red zone grows back over [40, 64). */
	CHECK(krealloc(p, 40, GFP_KERNEL | __GFP_ZERO) == p);
	for (int i = 40; i < 64; i++)
		CHECK_EQ(p[i], SLUB_RED_ACTIVE);
	/* Grow in place: [40, 56) zeroed, [56, 64) red zone. */
	CHECK(krealloc(p, 56, GFP_KERNEL | __GFP_ZERO) == p);
	for (int i = 40; i < 56; i++)
		CHECK_EQ(p[i], 0);
	for (int i = 56; i < 64; i++)
		CHECK_EQ(p[i], SLUB_RED_ACTIVE);
	CHECK_EQ(slub_validate(s), 0);
	memset(p, 0xff, 56);
	/* Grow out of the object: the 56 bytes asked for move, the rest is zero. */
	unsigned char *q = krealloc(p, 112, GFP_KERNEL | __GFP_ZERO);
	CHECK(q != NULL && q != p);
	for (int i = 0; i < 56; i++)
		CHECK_EQ(q[i], 0xff);
	for (int i = 56; i < 112; i++)
		CHECK_EQ(q[i], 0);
	kfree(q);
	CHECK_EQ(ERRORS_SINCE(e0), 0);
	kmem_cache_destroy(s);
}

/* ---- beyond the kernel's cases ------------------------------------------------------- */

#define FULL_DEBUG (SLAB_CONSISTENCY_CHECKS | SLAB_RED_ZONE | SLAB_POISON | SLAB_STORE_USER)

static void double_free(void)
{
	struct kmem_cache *s = make("dbl", 96, FULL_DEBUG);
	void *p = kmem_cache_alloc(s, GFP_KERNEL), *q = kmem_cache_alloc(s, GFP_KERNEL);
	kmem_cache_free(s, p);
	unsigned long e0 = slub_errors();
	kmem_cache_free(s, p);		/* twice in a row */
	CHECK_EQ(ERRORS_SINCE(e0), 2);	/* Object already free, then not freed */
	CHECK(last_report_has("not freed"));
	kmem_cache_free(s, q);
	e0 = slub_errors();
	kmem_cache_free(s, p);		/* again, with another free in between */
	CHECK_EQ(ERRORS_SINCE(e0), 2);
	/* The freelist is whole: two allocations give two objects. */
	void *a = kmem_cache_alloc(s, GFP_KERNEL), *b = kmem_cache_alloc(s, GFP_KERNEL);
	CHECK(a != b);
	kmem_cache_free(s, a);
	kmem_cache_free(s, b);
	CHECK_EQ(slub_validate(s), 0);
	kmem_cache_destroy(s);
}

/*
 * The slab's own freelist head corrupted: the freelist is cleared and the
 * slab given up (its lost objects count as in use), and the lists stay
 * counted right.
 */
static void corrupt_freelist_head(void)
{
	struct kmem_cache *s = make("head", 64, FULL_DEBUG);
	void *a = kmem_cache_alloc(s, GFP_KERNEL), *b = kmem_cache_alloc(s, GFP_KERNEL);
	kmem_cache_free(s, b);
	struct slab *slab = virt_to_slab(a);
	slab->freelist = (void *)0x1234;
	unsigned long e0 = slub_errors();
	kmem_cache_free(s, a);		/* Freepointer corrupt, Freelist cleared; a is freed */
	CHECK_EQ(ERRORS_SINCE(e0), 2);
	CHECK_EQ(slub_validate(s), 0);
	void *c = kmem_cache_alloc(s, GFP_KERNEL);
	CHECK(c != NULL && c != a && c != b);	/* not from the given-up slab */
	kmem_cache_free(s, c);
	CHECK_EQ(slub_validate(s), 0);
}

static void invalid_free(void)
{
	struct kmem_cache *s = make("inval", 96, FULL_DEBUG);
	char *p = kmem_cache_alloc(s, GFP_KERNEL);
	int on_stack;
	EXPECT_REPORT(kmem_cache_free(s, p + 1), "not the start of an object");
	EXPECT_REPORT(kmem_cache_free(s, &on_stack), "");
	static char foreign[64];
	EXPECT_REPORT(kmem_cache_free(s, foreign), "");
	EXPECT_REPORT(kfree(p + 8), "not the start of an object");
	kmem_cache_free(s, p);
	CHECK_EQ(slub_validate(s), 0);
	kmem_cache_destroy(s);
}

static void underflow_and_overflow(void)
{
	struct kmem_cache *s = make("rz", 100, FULL_DEBUG);
	for (int bytes = 1; bytes <= 16; bytes++) {
		unsigned char *p = kmem_cache_alloc(s, GFP_KERNEL);
		unsigned long e0 = slub_errors();
		memset(p - bytes, 0x41, (size_t)bytes);	/* into the left red zone */
		kmem_cache_free(s, p);
		/* Left Redzone and its FIX; the free is refused: not freed. */
		CHECK_EQ(ERRORS_SINCE(e0), 3);
		CHECK(last_report_has("not freed"));
		p = kmem_cache_alloc(s, GFP_KERNEL);
		e0 = slub_errors();
		memset(p + 100, 0x42, (size_t)bytes);	/* past the end */
		kmem_cache_free(s, p);
		CHECK(ERRORS_SINCE(e0) >= 3);
	}
	/*
	 * Underflows past the red zone reached the slots before: validation
	 * mends them, the first bad object of a slab per pass, as the kernel's.
	 */
	int passes = 0;
	while (slub_validate(s) && passes < 40)
		passes++;
	CHECK(passes > 0 && passes < 40);
	kmem_cache_destroy(s);
}

static void write_after_free(void)
{
	struct kmem_cache *s = make("uaf", 200, FULL_DEBUG);
	unsigned char *p = kmem_cache_alloc(s, GFP_KERNEL);
	kmem_cache_free(s, p);
	p[10] = 0;	/* the freed object is the next one handed out */
	unsigned long e0 = slub_errors();
	void *q = kmem_cache_alloc(s, GFP_KERNEL);
	/* Poison overwritten and its FIX, then the slab given up: Marking all objects used. */
	CHECK_EQ(ERRORS_SINCE(e0), 3);
	CHECK(q != NULL && q != p);
	kmem_cache_free(s, q);
	CHECK_EQ(slub_validate(s), 0);
}

/* A page and more per object: order > 0 slabs, every check as for small ones. */
static void big_objects(void)
{
	struct kmem_cache *s = make("big", 5000, FULL_DEBUG);
	CHECK(oo_order(s->oo) >= 1);
	unsigned char *p = kmem_cache_alloc(s, GFP_KERNEL);
	unsigned long e0 = slub_errors();
	p[5000] = 1;
	kmem_cache_free(s, p);
	CHECK(ERRORS_SINCE(e0) >= 3);
	p = kmem_cache_alloc(s, GFP_KERNEL);
	kmem_cache_free(s, p);
	p[4999] = 7;	/* after free: the end poison */
	e0 = slub_errors();
	CHECK_EQ(slub_validate(s), 2);
	kmem_cache_free(s, p);	/* and a double free */
	CHECK(ERRORS_SINCE(e0) >= 4);
	CHECK_EQ(slub_validate(s), 0);
}

/* kmalloc's own caches under slub_debug: a 1-byte overflow of kmalloc(24). */
static __attribute__((noinline)) int child_kmalloc(void)
{
	unsigned long e0 = slub_errors();
	unsigned char *p = kmalloc(24, GFP_KERNEL);
	p[24] = 1;
	kfree(p);
	int bad = ERRORS_SINCE(e0) != 3;
	p = kmalloc(24, GFP_KERNEL);
	(void)ksize(p);		/* now all 32 bytes are the caller's */
	p[31] = 1;
	e0 = slub_errors();
	kfree(p);
	bad |= ERRORS_SINCE(e0) != 0;
	/* Power-of-two sizes stay naturally aligned under red zones, as the kernel's. */
	for (size_t size = 8; size <= 8192; size *= 2) {
		void *q = kmalloc(size, GFP_KERNEL);
		if ((uintptr_t)q & (size - 1)) {
			printf("kmalloc(%zu) gave %p: not aligned to its size\n", size, q);
			bad = 1;
		}
		kfree(q);
	}
	bad |= slab_validate_all() != 0;
	printf("child: %s\n", bad ? "FAILED" : "ok");
	return bad;
}

static void kmalloc_caches_debugged(void)
{
	if (UNDER_TSAN) {	/* fork() holds every cache's locks: more than TSan can count */
		fprintf(stderr, "   (skipped: TSan's deadlock detector fails on the fork handlers' locks)\n");
		return;
	}
	char out[65536];
	CHECK_EQ(run_self(self, "--kmalloc", "slub_debug=FZPU", out, sizeof(out)), 0);
	CHECK(strstr(out, "child: ok") != NULL);
	CHECK(strstr(out, "BUG kmalloc-32 (Not tainted): kmalloc Redzone overwritten") != NULL);
	CHECK(strstr(out, "=============================================================================\n"
			  "BUG kmalloc-32") != NULL);
	CHECK(strstr(out, "INFO: Allocated in child_kmalloc") != NULL);
	CHECK(strstr(out, "INFO: Freed in") == NULL || strstr(out, "INFO: Slab 0x") != NULL);
	CHECK(strstr(out, "Redzone  ") != NULL && strstr(out, "Object   ") != NULL);
	CHECK(strstr(out, "FIX kmalloc-32: Restoring kmalloc Redzone") != NULL);
	CHECK(strstr(out, "FIX kmalloc-32: Object at 0x") != NULL);
	if (!strstr(out, "child: ok"))
		fprintf(stderr, "%s", out);
}

static __attribute__((noinline)) void *alloc_here(struct kmem_cache *s)
{
	void *p = kmem_cache_alloc(s, GFP_KERNEL);
	__asm__ __volatile__("" : : "r"(p) : "memory");	/* a call, not a tail jump */
	return p;
}

static void tracking(void)
{
	struct kmem_cache *s = make("track", 48, SLAB_STORE_USER);
	void *p[10];
	for (int i = 0; i < 10; i++)
		p[i] = alloc_here(s);
	char buf[4096];
	ssize_t n = slub_attr_read(s, "alloc_calls", buf, sizeof(buf));
	CHECK(n > 0);
	CHECK(strstr(buf, "     10 alloc_here+0x") != NULL);
	if (!strstr(buf, "alloc_here"))
		fprintf(stderr, "alloc_calls: %s", buf);
	kmem_cache_free(s, p[0]);
	struct track *t = get_track(s, p[0], TRACK_FREE);
	CHECK(t->addr > 1 && t->handle != 0);
	CHECK_EQ(t->pid, getpid());
	CHECK_EQ(t->tid, gettid());
	for (int i = 1; i < 10; i++)
		kmem_cache_free(s, p[i]);
	n = slub_attr_read(s, "alloc_calls", buf, sizeof(buf));
	CHECK(n > 0 && !strcmp(buf, "No data\n"));
	/* Without U: refused, as the kernel refuses it. */
	struct kmem_cache *plain = make("untracked", 48, 0);
	CHECK_EQ(slub_attr_read(plain, "free_calls", buf, sizeof(buf)), -ENOSYS);
	kmem_cache_destroy(plain);
	kmem_cache_destroy(s);
}

/*
 * Tracks are object memory a program can overwrite: a CPU out of range
 * (negative made 1UL << (cpu % 64) undefined), any pid, tid, time, handle
 * or caller must make alloc_calls, free_calls and a report say what they
 * can, never misbehave.  UBSan builds (-DSLUB_SANITIZE=undefined) abort
 * on the undefined shift; others would list a CPU that never ran them.
 */
static void corrupt_tracks(void)
{
	struct kmem_cache *s = make("track-corrupt", 48, SLAB_STORE_USER | SLAB_RED_ZONE);
	static const int bad_cpus[] = { -5, INT_MIN, SLUB_MAX_CPUS + 3, -1 };
	void *p[4];
	for (int i = 0; i < 4; i++)
		p[i] = alloc_here(s);
	for (int i = 0; i < 4; i++)
		for (int item = TRACK_ALLOC; item <= TRACK_FREE; item++) {
			struct track *t = get_track(s, p[i], item);
			t->addr = (unsigned long)alloc_here + 4;
			t->cpu = bad_cpus[i];
			t->pid = INT_MIN;
			t->tid = -i;
			t->when = ~0UL - (unsigned long)i;	/* in the future */
			t->handle = i == 1 ? 0xffffffffu : t->handle ^ 0x5a5a5;
		}
	char buf[4096];
	CHECK(slub_attr_read(s, "alloc_calls", buf, sizeof(buf)) > 0);
	CHECK(!strncmp(buf, "      4 alloc_here+0x4/", 23));
	CHECK(strstr(buf, "cpus=") == NULL);	/* none of them a CPU */
	fprintf(stderr, "   alloc_calls: %s", buf);
	CHECK(slub_attr_read(s, "free_calls", buf, sizeof(buf)) > 0);
	CHECK(!strncmp(buf, "      4 alloc_here+0x4/", 23));
	CHECK(strstr(buf, "cpus=") == NULL);
	/* A report prints both tracks of the object it names, as they are. */
	unsigned long e0 = slub_errors();
	((unsigned char *)p[1])[48] = 0x12;
	CHECK_EQ(slub_validate(s), 2);
	CHECK_EQ(ERRORS_SINCE(e0), 2);
	for (int i = 0; i < 4; i++)
		kmem_cache_free(s, p[i]);
	CHECK_EQ(slub_validate(s), 0);
	kmem_cache_destroy(s);
}

static void switches(void)
{
	struct kmem_cache *s = make("switch", 80, 0);
	char buf[64];
	void *p = kmem_cache_alloc(s, GFP_KERNEL);
	CHECK_EQ(slub_attr_write(s, "red_zone", "1", 1), -EBUSY);
	kmem_cache_free(s, p);
	CHECK_EQ(slub_attr_write(s, "red_zone", "1", 1), 1);
	CHECK_EQ(slub_attr_write(s, "poison", "1", 1), 1);
	CHECK_EQ(slub_attr_write(s, "sanity_checks", "1", 1), 1);
	CHECK(slub_attr_read(s, "red_zone", buf, sizeof(buf)) > 0 && !strcmp(buf, "1\n"));
	CHECK(s->red_left_pad > 0);
	unsigned char *q = kmem_cache_alloc(s, GFP_KERNEL);
	q[80] = 0;
	unsigned long e0 = slub_errors();
	kmem_cache_free(s, q);
	CHECK_EQ(ERRORS_SINCE(e0), 3);
	/* Off again, back to the plain layout and the fast paths. */
	CHECK_EQ(slub_attr_write(s, "red_zone", "0", 1), -EBUSY);	/* the object not freed */
	struct kmem_cache *m1 = kmem_cache_create("merged-a", 88, 0, 0, NULL);
	struct kmem_cache *m2 = kmem_cache_create("merged-b", 88, 0, 0, NULL);
	if (m1 == m2)
		CHECK_EQ(slub_attr_write(m1, "poison", "1", 1), -EINVAL);
	kmem_cache_destroy(m2);
	kmem_cache_destroy(m1);
}

static void *churn(void *arg)
{
	struct kmem_cache *s = arg;
	for (int round = 0; round < 2000; round++) {
		void *p[16];
		for (int i = 0; i < 16; i++)
			p[i] = kmem_cache_alloc(s, GFP_KERNEL);
		for (int i = 0; i < 16; i++)
			kmem_cache_free(s, p[i]);
	}
	return NULL;
}

static void threads_on_a_debug_cache(void)
{
	struct kmem_cache *s = make("dbg-mt", 72, FULL_DEBUG);
	unsigned long e0 = slub_errors();
	pthread_t t[4];
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, churn, s);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	CHECK_EQ(ERRORS_SINCE(e0), 0);
	CHECK_EQ(slub_validate(s), 0);
	kmem_cache_destroy(s);
}

static void tracing(void)
{
	if (UNDER_TSAN) {	/* fork() holds every cache's locks: more than TSan can count */
		fprintf(stderr, "   (skipped: TSan's deadlock detector fails on the fork handlers' locks)\n");
		return;
	}
	char out[65536];
	CHECK_EQ(run_self(self, "--trace", "", out, sizeof(out)), 0);
	CHECK(strstr(out, "TRACE traced alloc 0x") != NULL);
	CHECK(strstr(out, "TRACE traced free 0x") != NULL);
	CHECK(strstr(out, "Object ") != NULL);
}

static int child_trace(void)
{
	struct kmem_cache *s = make("traced", 32, SLAB_TRACE);
	void *p = kmem_cache_alloc(s, GFP_KERNEL);
	memset(p, 'x', 32);
	kmem_cache_free(s, p);
	return 0;
}

int main(int argc, char **argv)
{
	self = argv[0];
	if (argc > 1 && !strcmp(argv[1], "--kmalloc"))
		return child_kmalloc();
	if (argc > 1 && !strcmp(argv[1], "--trace"))
		return child_trace();
	RUN(clobber_zone);
	RUN(next_pointer);
	RUN(first_word);
	RUN(clobber_50th_byte);
	RUN(clobber_redzone_free);
	RUN(kmalloc_redzone_access);
	RUN(leak_destroy);
	RUN(krealloc_redzone_zeroing);
	RUN(double_free);
	RUN(corrupt_freelist_head);
	RUN(invalid_free);
	RUN(underflow_and_overflow);
	RUN(write_after_free);
	RUN(big_objects);
	RUN(kmalloc_caches_debugged);
	RUN(tracking);
	RUN(corrupt_tracks);
	RUN(switches);
	RUN(threads_on_a_debug_cache);
	RUN(tracing);
	CHECK_EQ(slab_validate_all(), 0);
	return check_done();
}
