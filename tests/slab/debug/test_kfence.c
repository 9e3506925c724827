// SPDX-License-Identifier: MIT
/*
 * test_kfence.c - KFENCE (src/slab/debug/kfence.c) through the kernel API,
 * each case in a child started with its SLUB_OPTIONS: with every
 * allocation sampled, an out-of-bounds read or write on either side of an
 * object faults and is reported as the kernel's "BUG: KFENCE:
 * out-of-bounds ...", once, and the program goes on; a read or write after
 * kmem_cache_free/kfree is a use-after-free (a SLAB_TYPESAFE_BY_RCU
 * cache's object only after a grace period); a free of an inner pointer,
 * a double free and a free of a guard page are invalid frees; a write into
 * the slack is memory corruption at the free; sample_every=N takes every
 * N-th allocation, and the pool, once used up, leaves the rest to the
 * slabs; a fault elsewhere goes to the program's own SIGSEGV handler (or
 * kills as it would have); threads share a small pool; sample_interval samples by the clock; under
 * slub_abort_on_error a report aborts.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <slub.h>
#include "check.h"
#include "slab/debug/kfence.h"
#include "slab/rcu/rcu.h"

#define EVERY "kfence.sample_every=1"

static bool at_page_end(const void *p, size_t size)
{
	return (((uintptr_t)p + size) & (PAGE_SIZE - 1)) == 0;
}

/* A pool object of @s placed at its page's end (@end) or start: objects alternate. */
static char *placed(struct kmem_cache *s, bool end)
{
	for (int i = 0; i < 4; i++) {
		char *p = kmem_cache_alloc(s, GFP_KERNEL);
		CHECK(is_kfence_address(p));
		if (end ? at_page_end(p, 32) : ((uintptr_t)p & (PAGE_SIZE - 1)) == 0)
			return hidden_ptr(p);
	}
	CHECK(!"placed");
	return NULL;
}

static struct kmem_cache *cache32(void)
{
	return kmem_cache_create("victim", 32, 0, SLAB_NO_MERGE, NULL);
}

static int out_of_bounds(void)
{
	struct kmem_cache *s = cache32();
	volatile char *right = placed(s, true), *left = placed(s, false);
	EXPECT_REPORT(poke_byte(right, 32, 1), "BUG: KFENCE: out-of-bounds write");
	CHECK(last_report_has("out-of-bounds write in poke"));
	/* Let through once: the page stays open until the next pool event. */
	unsigned long e = slub_errors();
	poke_byte(right, 33, 2);
	CHECK_EQ(slub_errors(), e);
	/* An allocation or free closes it again (the two objects may share that guard page). */
	kmem_cache_free(s, kmem_cache_alloc(s, GFP_KERNEL));
	EXPECT_REPORT(peek_byte(left, -1), "BUG: KFENCE: out-of-bounds read");
	kmem_cache_free(s, kmem_cache_alloc(s, GFP_KERNEL));
	EXPECT_REPORT(peek_byte(right, 40), "out-of-bounds read");
	kmem_cache_free(s, kmem_cache_alloc(s, GFP_KERNEL));
	EXPECT_REPORT(peek_byte(left, -17), "out-of-bounds read");
	kmem_cache_free(s, (void *)right);
	kmem_cache_free(s, (void *)left);
	/* kmalloc's objects too. */
	for (int i = 0; i < 2; i++) {
		volatile char *k = hidden_ptr(kmalloc(64, GFP_KERNEL));
		CHECK(is_kfence_address((void *)k));
		if (at_page_end((void *)k, 64))
			EXPECT_REPORT(poke_byte(k, 64, 0), "out-of-bounds write");
		else
			EXPECT_REPORT(poke_byte(k, -8, 0), "out-of-bounds write");
		kfree((void *)k);
	}
	return check_done();
}

static int use_after_free(void)
{
	struct kmem_cache *s = cache32();
	volatile char *p = hidden_ptr(kmem_cache_alloc(s, GFP_KERNEL));
	poke_byte(p, 0, 5);
	kmem_cache_free(s, (void *)p);
	EXPECT_REPORT(peek_byte(p, 0), "BUG: KFENCE: use-after-free read");
	volatile char *q = hidden_ptr(kmalloc(100, GFP_KERNEL));
	kfree((void *)q);
	EXPECT_REPORT(poke_byte(q, 3, 1), "BUG: KFENCE: use-after-free write");
	/* Freed objects are reused oldest first: p's page stays closed a while. */
	kmem_cache_free(s, kmem_cache_alloc(s, GFP_KERNEL));
	EXPECT_REPORT(peek_byte(p, 31), "use-after-free read");
	return check_done();
}

/*
 * A SLAB_TYPESAFE_BY_RCU cache's object stays open to readers after its
 * free, and no allocation reuses it, until a grace period has ended; then
 * it is closed as any.  Before, a reader faulted, and another cache's
 * object could take its place while readers might still hold it.
 */
static int typesafe_by_rcu(void)
{
	struct kmem_cache *s = kmem_cache_create("typesafe", 32, 0, SLAB_TYPESAFE_BY_RCU, NULL);
	volatile char *p = hidden_ptr(kmem_cache_alloc(s, GFP_KERNEL));
	CHECK(is_kfence_address((void *)p));
	poke_byte(p, 0, 5);
	rcu_register_thread();
	rcu_read_lock();		/* a reader: no grace period ends before the unlock */
	kmem_cache_free(s, (void *)p);
	unsigned long e = slub_errors();
	CHECK_EQ(peek_byte(p, 0), 5);	/* a reader's look: no fault, no report */
	CHECK_EQ(slub_errors(), e);
	EXPECT_REPORT(kmem_cache_free(s, (void *)p), "BUG: KFENCE: invalid free");
	/* The pool's other objects, then the slabs: never p's place. */
	void *k[4];
	for (int i = 0; i < 4; i++) {
		k[i] = kmalloc(32, GFP_KERNEL);
		CHECK(k[i] != (void *)p);
	}
	for (int i = 0; i < 4; i++)
		kfree(k[i]);
	rcu_read_unlock();
	slab_rcu_barrier();		/* the grace period, and the callback after it */
	EXPECT_REPORT(peek_byte(p, 0), "BUG: KFENCE: use-after-free read");
	kmem_cache_destroy(s);
	rcu_unregister_thread();
	return check_done();
}

static int invalid_free(void)
{
	struct kmem_cache *s = cache32();
	char *p = hidden_ptr(kmem_cache_alloc(s, GFP_KERNEL));
	EXPECT_REPORT(kmem_cache_free(s, p + 1), "BUG: KFENCE: invalid free");
	kmem_cache_free(s, p);
	EXPECT_REPORT(kmem_cache_free(s, p), "BUG: KFENCE: invalid free");
	char *k = hidden_ptr(kmalloc(40, GFP_KERNEL));
	EXPECT_REPORT(kfree(k + 8), "invalid free");
	kfree(k);
	EXPECT_REPORT(kfree(k), "invalid free");
	/* A guard page's address. */
	EXPECT_REPORT(kfree((void *)kfence_pool_start), "invalid free");
	/* ksize of a pool object is its size; of a freed one, a report. */
	char *z = hidden_ptr(kzalloc(24, GFP_KERNEL));
	CHECK(is_kfence_address(z));
	CHECK_EQ(ksize(z), 32);	/* the class's size: the request is not passed down */
	kfree(z);
	EXPECT_REPORT(ksize(z), "KFENCE pool");
	return check_done();
}

static int corruption(void)
{
	struct kmem_cache *s = cache32();
	char *left = placed(s, false), *right = placed(s, true);
	left[32] = 'x';		/* in the slack after a left-placed object: no fault */
	right[-3] = 'y';	/* and before a right-placed one */
	EXPECT_REPORT(kmem_cache_free(s, left), "BUG: KFENCE: memory corruption");
	EXPECT_REPORT(kmem_cache_free(s, right), "memory corruption");
	/* Intact slack: a quiet free. */
	unsigned long e = slub_errors();
	kmem_cache_free(s, kmem_cache_alloc(s, GFP_KERNEL));
	CHECK_EQ(slub_errors(), e);
	return check_done();
}

/* sample_every=3, 8 objects in the pool: every third allocation until it is used up. */
static int sampling(void)
{
	struct kmem_cache *s = cache32();
	unsigned int pooled = 0, first = 0;
	void *p[60];
	for (int i = 0; i < 60; i++) {
		p[i] = kmem_cache_alloc(s, GFP_KERNEL);
		if (is_kfence_address(p[i]) && !pooled++)
			first = (unsigned int)i;
	}
	CHECK_EQ(pooled, 8);
	CHECK(first < 3);
	for (int i = 0; i < 60; i++)
		kmem_cache_free(s, p[i]);
	CHECK_EQ(slub_validate(s), 0);
	/* Freed, they serve again: a constructor runs on each. */
	void *q = kmem_cache_alloc(s, GFP_KERNEL);
	void *r = kmem_cache_alloc(s, GFP_KERNEL);
	void *t = kmem_cache_alloc(s, GFP_KERNEL);
	CHECK(is_kfence_address(q) + is_kfence_address(r) + is_kfence_address(t) == 1);
	kmem_cache_free(s, q);
	kmem_cache_free(s, r);
	kmem_cache_free(s, t);
	kmem_cache_destroy(s);
	return check_done();
}

static void ctor42(void *p)
{
	memset(p, 42, 48);
}

/* __GFP_ZERO and constructors on pool objects; off: nothing comes from a pool. */
static int init_and_off(void)
{
	struct kmem_cache *c = kmem_cache_create("ctor48", 48, 0, 0, ctor42);
	unsigned char *p = kmem_cache_alloc(c, GFP_KERNEL);
	bool on = kfence_enabled();
	CHECK_EQ(is_kfence_address(p), on);
	CHECK(p[0] == 42 && p[47] == 42);
	kmem_cache_free(c, p);
	unsigned char *z = kzalloc(200, GFP_KERNEL);
	CHECK_EQ(is_kfence_address(z), on);
	for (int i = 0; i < 200; i++)
		CHECK_EQ(z[i], 0);
	kfree(z);
	return check_done();
}

static sigjmp_buf jump;
static volatile void *fault_addr;

static void user_segv(int sig, siginfo_t *si, void *ctx)
{
	(void)sig, (void)ctx;
	fault_addr = si->si_addr;
	siglongjmp(jump, 1);
}

/* The program's handler, installed before start-up, still gets its own faults. */
static int chained(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = user_segv;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigaction(SIGSEGV, &sa, NULL);
	void *p = kmalloc(32, GFP_KERNEL);	/* starts the allocator: KFENCE wraps the handler */
	CHECK(is_kfence_address(p));
	unsigned long e = slub_errors();
	volatile int *wild = hidden_ptr((void *)64);
	if (!sigsetjmp(jump, 1))
		peek_byte((volatile char *)wild, 0);
	CHECK(fault_addr == (void *)64);
	CHECK_EQ(slub_errors(), e);
	/* Pool faults stay KFENCE's. */
	kfree(p);
	EXPECT_REPORT(peek_byte((volatile char *)p, 0), "use-after-free read");
	return check_done();
}

/* No handler of the program's: a wild access still kills with SIGSEGV. */
static int unhandled(void)
{
	if (UNDER_TSAN)
		return 0;	/* TSan's own SIGSEGV handler reports and exits instead */
	kfree(kmalloc(32, GFP_KERNEL));
	peek_byte(hidden_ptr((void *)64), 0);
	return 3;
}

static int aborts(void)
{
	char *p = hidden_ptr(kmalloc(32, GFP_KERNEL));
	kfree(p);
	peek_byte((volatile char *)p, 0);
	return 3;
}

/* Allocate and free @n objects of @s; how many came from the pool. */
static unsigned int batch(struct kmem_cache *s, void **p, int n)
{
	unsigned int pooled = 0;
	for (int j = 0; j < n; j++) {
		p[j] = kmem_cache_alloc(s, GFP_KERNEL);
		pooled += is_kfence_address(p[j]);
	}
	for (int j = 0; j < n; j++)
		kmem_cache_free(s, p[j]);
	return pooled;
}

/*
 * kfence.sample_interval=2: at most one allocation every 2 ms, whatever
 * the rate; it is the first after a refill once the interval is over (the
 * gate, kfence.h), so each round allocates enough to refill.  Between
 * samples the fast paths run: a loop that never refills is not sampled.
 */
static int interval(void)
{
	struct kmem_cache *s = cache32();
	static void *p[600];
	unsigned int pooled = 0;
	uint64_t t0 = race_clock_ns();
	for (int i = 0; i < 20; i++) {
		pooled += batch(s, p, 600);
		usleep(3000);
	}
	uint64_t ms = (race_clock_ns() - t0) / 1000000;
	CHECK(pooled >= 5);
	CHECK(pooled <= ms / 2 + 1);
	/* A burst: at most one per 2 ms of it. */
	pooled = 0;
	t0 = race_clock_ns();
	for (int i = 0; i < 200; i++)
		pooled += batch(s, p, 600);
	ms = (race_clock_ns() - t0) / 1000000;
	CHECK(pooled <= ms / 2 + 2);
	/* One object allocated and freed again and again: no refill, no sample. */
	batch(s, p, 1);
	pooled = 0;
	t0 = race_clock_ns();
	while (race_clock_ns() - t0 < 20 * 1000000ULL)
		pooled += batch(s, p, 1);
	CHECK(pooled <= 1);
	return check_done();
}

static struct kmem_cache *shared_cache;

static void *churn(void *arg)
{
	void *p[16];
	for (int round = 0; round < 2000; round++) {
		for (int i = 0; i < 16; i++) {
			p[i] = (round + i) % 2 ? kmem_cache_alloc(shared_cache, GFP_KERNEL) :
						 kmalloc(8 + i * 16, GFP_KERNEL);
			memset(p[i], (int)(uintptr_t)arg, 8);
		}
		for (int i = 0; i < 16; i++) {
			if ((round + i) % 2)
				kmem_cache_free(shared_cache, p[i]);
			else
				kfree(p[i]);
		}
	}
	return NULL;
}

/* Threads sharing a small pool: every object handed out once at a time, nothing reported. */
static int threads(void)
{
	shared_cache = cache32();
	unsigned long e = slub_errors();
	pthread_t t[4];
	for (long i = 0; i < 4; i++)
		CHECK_EQ(pthread_create(&t[i], NULL, churn, (void *)(i + 1)), 0);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	CHECK_EQ(slub_errors(), e);
	CHECK_EQ(slub_validate(shared_cache), 0);
	return check_done();
}

/* The child's report, under slub_abort_on_error, came before the abort. */
static bool reported(const struct self_case *c, const char *out)
{
	return c->signal != SIGABRT || strstr(out, "BUG: KFENCE: use-after-free read");
}

static const struct self_case cases[] = {
	{ "out_of_bounds", EVERY, out_of_bounds, 0 },
	{ "out_of_bounds_rseq0", EVERY " slub_rseq=0", out_of_bounds, 0 },
	{ "use_after_free", EVERY, use_after_free, 0 },
	{ "invalid_free", EVERY, invalid_free, 0 },
	{ "typesafe_by_rcu", EVERY " kfence.num_objects=2", typesafe_by_rcu, 0 },
	{ "corruption", EVERY, corruption, 0 },
	{ "sampling", "kfence.sample_every=3 kfence.num_objects=8", sampling, 0 },
	{ "interval", "kfence.sample_interval=2", interval, 0 },
	{ "threads", "kfence.sample_every=2 kfence.num_objects=16", threads, 0 },
	{ "init", EVERY, init_and_off, 0 },
	{ "init_debug", EVERY " slub_debug=FZPU", init_and_off, 0 },
	{ "off", "", init_and_off, 0 },
	{ "chained", EVERY, chained, 0 },
	{ "unhandled", EVERY, unhandled, UNDER_TSAN ? 0 : SIGSEGV },
	{ "aborts", EVERY " slub_abort_on_error=1", aborts, SIGABRT },
};

int main(int argc, char **argv)
{
	return run_self_cases(argc, argv, cases, ARRAY_SIZE(cases), reported);
}
