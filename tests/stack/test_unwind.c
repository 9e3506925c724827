// SPDX-License-Identifier: MIT
/*
 * test_unwind.c - unwind_fast() against glibc's backtrace(), frame by
 * frame: through plain calls, a large and a very large frame (an offset
 * too big for a cache slot), a VLA (CFA on rbp) above a function that uses
 * rbp as a callee-saved register, a call to a noreturn function as a
 * function's last instruction, recursion deeper than 16, and qsort's
 * comparator (frames of libc); on a cold and a warm rule cache, from
 * threads racing on the cache, and from a signal handler (where the walk
 * stops at the signal frame).  Then CFI that lies (a CFA far above the
 * stack) on a makecontext() stack, a thread's own, a sigaltstack and the
 * main thread's: the walk stops at the stack's end, and a tracked
 * allocation under such a frame keeps what it found; and made-up unwind
 * tables whose offsets point past the segment they lie in.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <setjmp.h>
#include <sys/mman.h>
#include <ucontext.h>

#include "check.h"
#include "base/maps.h"
#include "stack/stacktrace.h"
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

#if UNWIND_FAST
/*
 * Frames whose CFI lies.  wrong_cfa_rbp(fake, fn) calls fn() with rbp =
 * fake under CFI that puts the CFA at rbp + 16; wrong_cfa_rsp(fn) calls
 * fn() under CFI that puts it 1 MiB above rsp (16 bytes is the truth).
 */
__hidden unsigned int wrong_cfa_rbp(uintptr_t fake, unsigned int (*fn)(void));
__hidden unsigned int wrong_cfa_rsp(unsigned int (*fn)(void));
__asm__(".text\n"
	".globl wrong_cfa_rbp\n"
	".hidden wrong_cfa_rbp\n"
	".type wrong_cfa_rbp, @function\n"
	"wrong_cfa_rbp:\n"
	".cfi_startproc\n"
#ifdef __CET__
	"endbr64\n"
#endif
	"push %rbp\n"
	".cfi_def_cfa_offset 16\n"
	".cfi_offset %rbp, -16\n"
	"mov %rdi, %rbp\n"
	".cfi_def_cfa %rbp, 16\n"
	"call *%rsi\n"
	"pop %rbp\n"
	".cfi_def_cfa %rsp, 8\n"
	"ret\n"
	".cfi_endproc\n"
	".size wrong_cfa_rbp, .-wrong_cfa_rbp\n"
	".globl wrong_cfa_rsp\n"
	".hidden wrong_cfa_rsp\n"
	".type wrong_cfa_rsp, @function\n"
	"wrong_cfa_rsp:\n"
	".cfi_startproc\n"
#ifdef __CET__
	"endbr64\n"
#endif
	"sub $8, %rsp\n"
	".cfi_def_cfa_offset 0x100010\n"
	"call *%rdi\n"
	"add $8, %rsp\n"
	".cfi_def_cfa_offset 8\n"
	"ret\n"
	".cfi_endproc\n"
	".size wrong_cfa_rsp, .-wrong_cfa_rsp\n");

/* A stack of STACK_BYTES (TSan needs 1 MiB in a thread's) with 2 MiB of PROT_NONE above it. */
#define STACK_BYTES (2 << 20)
#define GUARD_BYTES (2 << 20)

static char *guarded_stack(void)
{
	char *p = mmap(NULL, STACK_BYTES + GUARD_BYTES, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED || mprotect(p, STACK_BYTES, PROT_READ | PROT_WRITE))
		return NULL;
	return p;
}

static void *lie_frames[MAX_FRAMES];
static int lie_n;
static struct kmem_cache *tracked_cache;
static uintptr_t lie_top;	/* the fake rbp: the end of the stack */
static char lie_how;		/* 'b': rbp, 's': rsp, 't': a tracked allocation under rbp */

static __noinline unsigned int capture_lied_to(void)
{
	lie_n = unwind_fast(lie_frames, MAX_FRAMES);
	return (unsigned int)lie_n + sink;
}

/* A tracked allocation (slub_debug U) takes its stack the same way. */
static __noinline unsigned int allocate_lied_to(void)
{
	void *p = kmem_cache_alloc(tracked_cache, GFP_KERNEL);
	lie_n = p ? 1 : 0;
	kmem_cache_free(tracked_cache, p);
	return (unsigned int)lie_n + sink;
}

/* Under a lying frame, by lie_how; the frames found (-1: none taken). */
static int walk_under_lie(void)
{
	lie_n = -1;
	if (lie_how == 's')
		sink += wrong_cfa_rsp(capture_lied_to);
	else
		sink += wrong_cfa_rbp(lie_top, lie_how == 't' ? allocate_lied_to : capture_lied_to);
	return lie_n;
}

/*
 * The walk's result as a child's exit code: 2 (the capturing function and
 * the lying frame, then the end) or 1 for the allocation; a fault: 128 + signal.
 */
static int lie_result(void)
{
	int n = walk_under_lie();
	if (lie_how == 't')
		return n;
	return n == 2 && (uintptr_t)lie_frames[1] - (uintptr_t)wrong_cfa_rbp < 64 ? 2 :
	       n == 2 && (uintptr_t)lie_frames[1] - (uintptr_t)wrong_cfa_rsp < 64 ? 2 : 100 + n;
}

static ucontext_t ctx_main, ctx_lie;
static int ctx_result;

static void on_context(void)
{
	ctx_result = lie_result();
}

static int child_on_context(void)
{
	char *stack = guarded_stack();
	if (!stack || getcontext(&ctx_lie))
		return 99;
	ctx_lie.uc_stack.ss_sp = stack;
	ctx_lie.uc_stack.ss_size = STACK_BYTES;
	ctx_lie.uc_link = &ctx_main;
	makecontext(&ctx_lie, on_context, 0);
	lie_top = (uintptr_t)stack + STACK_BYTES;
	if (swapcontext(&ctx_main, &ctx_lie))
		return 98;
	return ctx_result;
}

static void *thread_lie(void *arg)
{
	(void)arg;
	return (void *)(intptr_t)lie_result();
}

static int child_on_thread(void)
{
	char *stack = guarded_stack();
	pthread_attr_t attr;
	pthread_t t;
	void *ret;
	if (!stack || pthread_attr_init(&attr) || pthread_attr_setstack(&attr, stack, STACK_BYTES))
		return 99;
	lie_top = (uintptr_t)stack + STACK_BYTES;
	if (pthread_create(&t, &attr, thread_lie, NULL) || pthread_join(t, &ret))
		return 98;
	return (int)(intptr_t)ret;
}

static volatile int alt_result;

static void lie_on_signal(int sig)
{
	(void)sig;
	alt_result = lie_result();
}

static int child_on_sigaltstack(void)
{
	char *stack = guarded_stack();
	stack_t ss = { .ss_sp = stack, .ss_size = STACK_BYTES };
	struct sigaction sa = { .sa_handler = lie_on_signal, .sa_flags = SA_ONSTACK };
	sigemptyset(&sa.sa_mask);
	if (!stack || sigaltstack(&ss, NULL) || sigaction(SIGUSR2, &sa, NULL))
		return 99;
	lie_top = (uintptr_t)stack + STACK_BYTES;
	raise(SIGUSR2);
	return alt_result;
}

static int child_on_main_stack(void)
{
	return lie_result();
}

/* Each case in a child: before the walk was bounded, each died of SIGSEGV (139). */
static void lying_cfi_stays_on_the_stack(void)
{
	tracked_cache = kmem_cache_create("unwind-tracked", 64, 0, SLAB_STORE_USER, NULL);
	CHECK(tracked_cache != NULL);
	static const char hows[] = "bst";
	for (const char *how = hows; *how; how++) {
		lie_how = *how;
		int want = *how == 't' ? 1 : 2;
		fprintf(stderr, "   CFA %s\n", *how == 's' ? "1 MiB above rsp" : "at the stack's end");
		CHECK_EQ(child_quiet(child_on_context), want);
		CHECK_EQ(child_quiet(child_on_thread), want);
		if (*how != 's')	/* a handler's frames are few: 1 MiB up is past a small alt stack */
			CHECK_EQ(child_quiet(child_on_sigaltstack), want);
	}
	/* The main thread's stack: lie to just past its end, if nothing is mapped there. */
	struct maps_entry e;
	char path[64];
	uintptr_t here = (uintptr_t)__builtin_frame_address(0);
	if (maps_find(here, &e, path, sizeof(path)) && !maps_find(e.end + 8, &e, path, sizeof(path))) {
		maps_find(here, &e, path, sizeof(path));
		lie_top = e.end;
		lie_how = 'b';
		CHECK_EQ(child_quiet(child_on_main_stack), 2);
		lie_how = 't';
		CHECK_EQ(child_quiet(child_on_main_stack), 1);
	} else {
		fprintf(stderr, "   main stack: something is mapped past its end, not tried\n");
	}
	kmem_cache_destroy(tracked_cache);
}

/*
 * Made-up .eh_frame_hdr tables at the edge of a page between two PROT_NONE
 * ones, each with an offset or a count that reaches past the page: every
 * lookup must fail without reading there.  One good table first: a CIE
 * (CFA = rsp + 8, RA at CFA - 8) and an FDE covering [code, code + 0x100).
 */
enum { PAGE = 4096 };

struct made_up {
	uint8_t *page;
	uintptr_t code;
	struct eh_tables eh;
};

static void put32(uint8_t *at, uint32_t v)
{
	memcpy(at, &v, 4);
}

/* hdr | CIE | FDE at the end of the page; returns the FDE's offset. */
static size_t make_tables(struct made_up *m, uint32_t count, int32_t fde_rel, uint32_t fde_len,
			  uint32_t cie_back)
{
	static const uint8_t cie[] = {
		0x14, 0, 0, 0,	/* length 20 */
		0, 0, 0, 0,	/* CIE id */
		1, 'z', 'R', 0,	/* version, augmentation */
		1, 0x78, 16,	/* code align 1, data align -8, RA column 16 */
		1, 0x1b,	/* augmentation data: FDE pointers pcrel sdata4 */
		0x0c, 7, 8,	/* DW_CFA_def_cfa rsp 8 */
		0x90, 1,	/* DW_CFA_offset RA, CFA - 8 */
		0, 0,		/* nops to the length */
	};
	size_t hdr_len = 12 + 8, fde_len_all = 4 + 16;
	size_t at = PAGE - (hdr_len + sizeof(cie) + fde_len_all);
	uint8_t *hdr = m->page + at, *c = hdr + hdr_len, *fde = c + sizeof(cie);
	memset(m->page, 0, PAGE);
	m->code = (uintptr_t)m->page - 0x10000;
	hdr[0] = 1;
	hdr[1] = 0x03;		/* eh_frame_ptr: udata4 */
	hdr[2] = 0x03;		/* fde_count: udata4 */
	hdr[3] = 0x3b;		/* table: datarel sdata4 */
	put32(hdr + 8, count);
	put32(hdr + 12, (uint32_t)(m->code - (uintptr_t)hdr));
	put32(hdr + 16, (uint32_t)(fde_rel ? fde_rel : (int32_t)(fde - hdr)));
	memcpy(c, cie, sizeof(cie));
	put32(fde, fde_len);
	put32(fde + 4, cie_back ? cie_back : (uint32_t)(fde + 4 - c));
	put32(fde + 8, (uint32_t)(m->code - (uintptr_t)(fde + 8)));	/* pc begin */
	put32(fde + 12, 0x100);		/* pc range */
	fde[16] = 0;			/* no augmentation data */
	m->eh = (struct eh_tables){ hdr, m->page, m->page + PAGE };
	return (size_t)(fde - m->page);
}

static struct made_up tables;
static uint32_t bad_count, bad_len, bad_cie;
static int32_t bad_fde;

static int child_made_up_tables(void)
{
	struct cfa_rule r;
	make_tables(&tables, bad_count ? bad_count : 1, bad_fde, bad_len ? bad_len : 16, bad_cie);
	return cfi_rule_find_in(&tables.eh, tables.code + 0x10, &r);
}

static void made_up_tables_are_bounded(void)
{
	uint8_t *p = mmap(NULL, 3 * PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED && !mprotect(p + PAGE, PAGE, PROT_READ | PROT_WRITE));
	tables.page = p + PAGE;
	struct cfa_rule r;
	size_t fde = make_tables(&tables, 1, 0, 16, 0);
	CHECK(cfi_rule_find_in(&tables.eh, tables.code + 0x10, &r));
	CHECK(r.kind == CFA_RSP && r.offset == 8 && r.rbp_below == 0);
	CHECK(!cfi_rule_find_in(&tables.eh, tables.code + 0x100, &r));	/* past the FDE */
	/* In a child each: before the reads were bounded, SIGSEGV. */
	bad_count = 1u << 28;		/* a table of 2 GiB */
	CHECK_EQ(child_quiet(child_made_up_tables), 0);
	bad_count = 0;
	bad_fde = PAGE;			/* an FDE in the page above */
	CHECK_EQ(child_quiet(child_made_up_tables), 0);
	bad_fde = 0;
	bad_len = 1u << 20;		/* an FDE whose instructions run 1 MiB */
	CHECK_EQ(child_quiet(child_made_up_tables), 0);
	bad_len = 0;
	bad_cie = (uint32_t)fde + 4 + PAGE / 2;	/* a CIE in the page below */
	CHECK_EQ(child_quiet(child_made_up_tables), 0);
	bad_cie = 0;
	munmap(p, 3 * PAGE);
}
#endif

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
#if UNWIND_FAST
	RUN(lying_cfi_stays_on_the_stack);
	RUN(made_up_tables_are_bounded);
#endif
	return check_done();
}
