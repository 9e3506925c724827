// SPDX-License-Identifier: MIT
/*
 * test_os.c - the OS layer: reservations are aligned and inaccessible until
 * committed, decommit zeroes and frees RSS, CPU numbers are sane and follow
 * the thread, the ops table really is what the layers call, and a
 * membarrier fence refused by seccomp keeps the library off rseq.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <slub.h>
#include "check.h"
#include "page/memmap.h"
#include "base/os.h"
#include "slab/core/slab.h"
#include "slab/core/slab_common.h"

static sigjmp_buf fault_jmp;

static void on_segv(int sig)
{
	(void)sig;
	siglongjmp(fault_jmp, 1);
}

static bool touch_faults(volatile char *p)
{
	struct sigaction sa = { .sa_handler = on_segv }, old;
	bool faulted;
	sigaction(SIGSEGV, &sa, &old);
	if (sigsetjmp(fault_jmp, 1) == 0) {
		*p = 1;
		faulted = false;
	} else {
		faulted = true;
	}
	sigaction(SIGSEGV, &old, NULL);
	return faulted;
}

static void reserve_commit_decommit_release(void)
{
	size_t align = 64UL << 20, size = 8UL << 20;
	char *p = os_reserve(size, align);
	CHECK(p != NULL);
	if (!p)
		return;
	CHECK(((uintptr_t)p & (align - 1)) == 0);
	CHECK(touch_faults(p));			/* reserved: PROT_NONE */
	CHECK_EQ(os_commit(p, size), 0);
	CHECK(!touch_faults(p));
	long rss0 = rss_bytes();
	memset(p, 0xab, size);
	long rss1 = rss_bytes();
	CHECK(rss1 - rss0 >= (long)size * 3 / 4);
	CHECK_EQ(os_decommit(p, size), 0);
	long rss2 = rss_bytes();
	CHECK(rss1 - rss2 >= (long)size * 3 / 4);
	CHECK(p[0] == 0 && p[size - 1] == 0);	/* reads zero, still mapped */
	CHECK_EQ(os_release(p, size), 0);
}

static void reserve_at_a_fixed_place(void)
{
	char *p = os_reserve(4UL << 20, 4UL << 20);
	CHECK(p != NULL);
	/* The exact place is taken now: a second reservation must refuse. */
	errno = 0;
	CHECK(os_reserve_at((uintptr_t)p, 4UL << 20) == NULL);
	CHECK_EQ(errno, EEXIST);
	os_release(p, 4UL << 20);
	char *q = os_reserve_at((uintptr_t)p, 4UL << 20);
	CHECK(q == p);
	os_release(q, 4UL << 20);
}

/*
 * An aligned reservation takes no more address space than its size, even
 * for a moment: under a limit on it (ulimit -v) a 64 MiB section aligned
 * to 64 MiB must not need 128 MiB.
 */
static int reserve_four_sections(void)
{
	for (int i = 0; i < 4; i++) {
		char *p = os_reserve(SECTION_SIZE, SECTION_SIZE);
		if (!p)
			return 10 + i;
		if ((uintptr_t)p & (SECTION_SIZE - 1))
			return 20 + i;
		os_release(p, SECTION_SIZE);
	}
	return 0;
}

static void aligned_reservation_within_address_limit(void)
{
	CHECK_EQ(child_under_address_limit(SECTION_SIZE + (24UL << 20), reserve_four_sections), 0);
}

static void *failing_mmap(void *a, size_t l, int p, int f, int fd, off_t o)
{
	(void)a; (void)l; (void)p; (void)f; (void)fd; (void)o;
	errno = ENOMEM;
	return MAP_FAILED;
}

static void ops_table_is_used(void)
{
	slub_os.mmap = failing_mmap;
	CHECK(os_reserve(1UL << 20, 1UL << 20) == NULL);
	CHECK(os_reserve_at(1UL << 32, 1UL << 20) == NULL);
	slub_os = slub_os_default;
	void *p = os_reserve(1UL << 20, PAGE_SIZE);
	CHECK(p != NULL);
	os_release(p, 1UL << 20);
}

static void cpus(void)
{
	unsigned int n = os_possible_cpus();
	CHECK(n >= 1 && n <= SLUB_MAX_CPUS);
	CHECK((long)n >= sysconf(_SC_NPROCESSORS_ONLN));
	CHECK_EQ(os_check_page_size(), 0);

	/* Pin to each allowed CPU: the rseq read and sched_getcpu agree. */
	cpu_set_t old;
	CHECK_EQ(sched_getaffinity(0, sizeof(old), &old), 0);
	int tried = 0;
	for (int cpu = 0; cpu < CPU_SETSIZE && tried < 4; cpu++) {
		if (!CPU_ISSET(cpu, &old))
			continue;
		if (pin_to_cpu(cpu))
			continue;
		tried++;
		CHECK_EQ(os_current_cpu(), cpu);
		CHECK_EQ(os_current_cpu_slow(), cpu);
	}
	CHECK(tried > 0);
	sched_setaffinity(0, sizeof(old), &old);
}

static void clock_moves(void)
{
	uint64_t a = os_now_ms();
	usleep(30000);
	uint64_t b = os_now_ms();
	CHECK(b >= a + 20 && b < a + 5000);
}

/*
 * A seccomp policy that lets the membarrier registration through but
 * refuses the fence (EPERM), installed before start-up: the library must
 * find out at start and keep to the cmpxchg16b protocol, which then works
 * on every CPU without a report.  Run as its own process (--no-fence).
 */
static const char *self;

static void membarrier_refused_means_no_rseq(void)
{
	CHECK_EQ(run_self_args(self, "--no-fence"), 0);
}

static int deny_membarrier_fence(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_membarrier, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 1 << 7 /* PRIVATE_EXPEDITED_RSEQ */, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };
	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	       prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
}

static int run_no_fence(void)
{
	if (deny_membarrier_fence())
		return 0;	/* no seccomp here: nothing to show */
	void *p = kmalloc(64, GFP_KERNEL);
	fprintf(stderr, "   fence refused: per-CPU mode %s\n", slub_percpu_rseq ? "rseq" : "cmpxchg16b");
	if (slub_percpu_rseq)
		return 1;
	/* Objects freed on one CPU and allocated on another: no report. */
	cpu_set_t old;
	sched_getaffinity(0, sizeof(old), &old);
	void *q[256];
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &old))
			continue;
		pin_to_cpu(cpu);
		for (int i = 0; i < 256; i++)
			q[i] = kmalloc(64, GFP_KERNEL);
		for (int i = 0; i < 256; i++)
			kfree(q[i]);
	}
	kfree(p);
	return slub_errors() == 0 && slab_validate_all() == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--no-fence"))
		return run_no_fence();
	self = argv[0];
	/* Start-up detects rseq (glibc >= 2.35 registers it unless disabled). */
	slub_reclaim();
	fprintf(stderr, "rseq area: %s\n", os_rseq_offset ? "in use" : "not available (sched_getcpu fallback)");
	RUN(reserve_commit_decommit_release);
	RUN(reserve_at_a_fixed_place);
	RUN(aligned_reservation_within_address_limit);
	RUN(ops_table_is_used);
	RUN(cpus);
	RUN(clock_moves);
	RUN(membarrier_refused_means_no_rseq);
	return check_done();
}
