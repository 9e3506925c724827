// SPDX-License-Identifier: MIT
/*
 * test_unwind.c - unwind_fast() against glibc's backtrace(), frame by
 * frame: through plain calls, a large and a very large frame (an offset
 * too big for a cache slot), a VLA (CFA on rbp) above a function that uses
 * rbp as a callee-saved register, a call to a noreturn function as a
 * function's last instruction, recursion deeper than 16, and qsort's
 * comparator (frames of libc); on a cold and a warm rule cache, from
 * threads racing on the cache, and from a signal handler (where the walk
 * stops at the signal frame).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <setjmp.h>

#include "check.h"
#include "stack/unwind.h"
#if UNWIND_FAST
#include "stack/unwind_cfi.h"
#endif

#define MAX_FRAMES 128

struct shot {
	void *fast[MAX_FRAMES], *bt[MAX_FRAMES];
	int nf, nb;
};

static __thread volatile unsigned int sink;	/* per thread: the racing threads share no data */
static unsigned int next(const char *plan, struct shot *s);

/* Both walks from one frame: past each one's own frames, the same callers. */
static __noinline unsigned int capture(struct shot *s)
{
	s->nf = unwind_fast(s->fast, MAX_FRAMES);
	s->nb = unwind_backtrace(s->bt, MAX_FRAMES);
	return (unsigned int)s->nf + sink;
}

static __noinline unsigned int plain(const char *plan, struct shot *s)
{
	return next(plan + 1, s) + sink;
}

static __noinline unsigned int medium_frame(const char *plan, struct shot *s)
{
	volatile char buf[4000];
	buf[sink & 7] = 1;
	return next(plan + 1, s) + buf[sink & 3];
}

static __noinline unsigned int huge_frame(const char *plan, struct shot *s)
{
	volatile char buf[100000];
	buf[sink & 7] = 1;
	return next(plan + 1, s) + buf[sink & 3];
}

/* A variable-length array: the CFA is rbp-based. */
static __noinline unsigned int vla(const char *plan, struct shot *s)
{
	volatile char buf[16 + (sink & 64)];
	buf[0] = 1;
	return next(plan + 1, s) + buf[0];
}

/* Six values live across the call: rbx, rbp and r12-r15 all saved and used. */
static __noinline unsigned int many_regs(const char *plan, struct shot *s)
{
	unsigned int a = sink + 3, b = a * 5, c = b ^ 7, d = c * 11, e = d + 13, f = e * 17;
	unsigned int r = next(plan + 1, s);
	return r + a * b + c * d + e * f + sink;
}

static int by_value(const void *a, const void *b, void *arg)
{
	void **ctx = arg;
	if (ctx[0]) {
		sink += next(ctx[0], ctx[1]);
		ctx[0] = NULL;
	}
	return *(const int *)a - *(const int *)b;
}

/* The rest of the plan from qsort_r's comparator, under libc's frames. */
static __noinline unsigned int through_qsort(const char *plan, struct shot *s)
{
	int v[4] = { 4, 2, 3, 1 };
	void *ctx[2] = { (void *)(plan + 1), s };
	qsort_r(v, 4, sizeof(v[0]), by_value, ctx);
	return (unsigned int)v[0] + sink;
}

static __thread jmp_buf after_noreturn;

static __noinline __attribute__((noreturn)) void finish_and_jump(const char *plan, struct shot *s)
{
	sink += next(plan, s);
	longjmp(after_noreturn, 1);
}

/* Its call is its last instruction: the return address is past its FDE (pc - 1 is in it). */
static __noinline void calls_noreturn(const char *plan, struct shot *s)
{
	finish_and_jump(plan + 1, s);
}

static __noinline unsigned int next(const char *plan, struct shot *s)
{
	switch (*plan) {
	case 'n':
		if (!setjmp(after_noreturn))
			calls_noreturn(plan, s);
		return sink;
	case 'p': return plain(plan, s);
	case 'm': return medium_frame(plan, s);
	case 'h': return huge_frame(plan, s);
	case 'v': return vla(plan, s);
	case 'r': return many_regs(plan, s);
	case 'q': return through_qsort(plan, s);
	default: return capture(s);
	}
}

static const char *const plans[] = {
	"ppp",
	"pmph",
	"vrp",
	"rvrvp",
	"hvr",
	"pqp",
	"vqrv",
	"pnp",
	"vrnv",
	"pppppppppppppppppppppppppppppp",	/* 30 deep: more than 16 */
	"vrvrvrvrvrvrvrvrvrvrvrvrvrvrvrvrvrvrvrvr",
};

static void print_frame(const char *which, int i, void *pc)
{
	Dl_info info;
	if (dladdr(pc, &info) && info.dli_sname)
		fprintf(stderr, "     %s[%d] %p %s+%#lx\n", which, i, pc, info.dli_sname,
			(unsigned long)((char *)pc - (char *)info.dli_saddr));
	else
		fprintf(stderr, "     %s[%d] %p %s\n", which, i, pc, info.dli_fname ? info.dli_fname : "?");
}

/*
 * fast[f..] equals backtrace()'s frames from its caller on, f the index of
 * capture()'s caller in fast[] (1 past unwind_fast()'s own frames); a
 * sanitizer's backtrace() interceptor may add one of its own, so the same
 * frame in bt[] is found by its address.  @to_signal: the fast walk may end
 * early, at a signal frame.
 */
static bool same_frames(const struct shot *s, bool to_signal)
{
	int f = UNWIND_OWN_FRAMES + 1, k = 1;
	while (k < 5 && k < s->nb && s->nf > f && s->bt[k] != s->fast[f])
		k++;
	bool ok = s->nf > f && k < 5 && k < s->nb;
	int want = s->nb - k + f;
	ok = ok && (to_signal ? s->nf <= want : s->nf == want);
	for (int i = f; ok && i < s->nf; i++)
		ok = s->fast[i] == s->bt[k - f + i];
	if (!ok) {
		fprintf(stderr, "   fast walk (%d) and backtrace() (%d) differ:\n", s->nf, s->nb);
		for (int i = 0; i < s->nf; i++)
			print_frame("fast", i, s->fast[i]);
		for (int i = 0; i < s->nb; i++)
			print_frame("bt", i, s->bt[i]);
	}
	return ok;
}

static bool run_plan(const char *plan)
{
	struct shot s;
	sink += next(plan, &s);	/* every frame's result used: no call dropped or made a tail call */
	return same_frames(&s, false);
}

static void flush(void)
{
#if UNWIND_FAST
	cfi_cache_flush();
#endif
}

static void same_as_backtrace(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(plans); i++) {
		flush();
		CHECK(run_plan(plans[i]));	/* cold */
		CHECK(run_plan(plans[i]));	/* warm */
		CHECK(run_plan(plans[i]));
	}
}

/* dlclose() empties the rule cache: another library may load where one was. */
static void dlclose_flushes(void)
{
#if UNWIND_FAST
	CHECK(run_plan(plans[0]));
	CHECK(cfi_cache_used() > 0);
	void *h = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
	CHECK(h != NULL);
	if (h)
		CHECK_EQ(dlclose(h), 0);
	CHECK_EQ(cfi_cache_used(), 0);
	CHECK(run_plan(plans[0]));	/* and refills */
#endif
}

/* Stack depth 30: the walk fills exactly what it is given, no more. */
static void stops_at_size(void)
{
	struct shot s;
	next(plans[9], &s);
	void *few[5] = { 0 };
	int n = unwind_fast(few, 4);
	CHECK_EQ(n, 4);
	CHECK(few[4] == NULL);
	CHECK(s.nf > 30);
}

static volatile bool stop_racing;

/* Each thread walks every plan and compares; one flushes the cache under them. */
static void *race_walks(void *arg)
{
	unsigned long *bad = arg;
	for (int round = 0; round < 300; round++)
		for (size_t i = 0; i < ARRAY_SIZE(plans); i++)
			*bad += !run_plan(plans[i]);
	return NULL;
}

static void *race_flush(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop_racing, __ATOMIC_RELAXED)) {
		flush();
		sched_yield();
	}
	return NULL;
}

static void threads_race_on_the_cache(void)
{
	enum { NR = 4 };
	pthread_t t[NR], f;
	unsigned long bad[NR] = { 0 };
	pthread_create(&f, NULL, race_flush, NULL);
	for (int i = 0; i < NR; i++)
		pthread_create(&t[i], NULL, race_walks, &bad[i]);
	for (int i = 0; i < NR; i++) {
		pthread_join(t[i], NULL);
		CHECK_EQ(bad[i], 0);
	}
	__atomic_store_n(&stop_racing, true, __ATOMIC_RELAXED);
	pthread_join(f, NULL);
}

static struct shot in_handler;
static volatile sig_atomic_t handled;

static void capture_in_handler(int sig)
{
	(void)sig;
	capture(&in_handler);
	handled++;
}

static __noinline unsigned int raise_here(void)
{
	raise(SIGUSR1);
	return sink;
}

/* The walk ends at (or before) the signal frame, agreeing with backtrace() up to it. */
static void from_a_signal_handler(void)
{
	struct sigaction sa = { .sa_handler = capture_in_handler }, old;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, &old);
	for (int cold = 0; cold < 2; cold++) {
		flush();
		raise_here();
		CHECK_EQ(handled, cold + 1);
		CHECK(same_frames(&in_handler, true));
		CHECK(in_handler.nf >= UNWIND_OWN_FRAMES + 2);
		if (UNWIND_FAST && !UNDER_TSAN)
			CHECK(in_handler.nf < in_handler.nb);	/* it stopped at __restore_rt */
	}
	sigaction(SIGUSR1, &old, NULL);
}

int main(void)
{
	struct shot s;
	CHECK_EQ(unwind_fast(s.fast, MAX_FRAMES), 0);	/* nothing before priming */
	unwind_prime();
	fprintf(stderr, "   fast walker: %s\n", UNWIND_FAST ? "CFI" : "backtrace()");
	RUN(same_as_backtrace);
	RUN(stops_at_size);
	RUN(dlclose_flushes);
	RUN(threads_race_on_the_cache);
	RUN(from_a_signal_handler);
	return check_done();
}
