// SPDX-License-Identifier: MIT
/*
 * test_pcp.c - per-CPU page lists: LIFO reuse on one CPU, never more than
 * slub_pcp_high pages held, drained when a zone runs dry, switched off by
 * slub_pcp_high=0, and seen on CPUs past the possible count.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <sys/mman.h>

#include <slub.h>
#include "check.h"
#include "base/os.h"
#include "page/page_alloc.h"
#include "page/pcp.h"
#include "page/local_zone.h"

#define HIGH 8

static struct zone *normal(void)
{
	return local_zone(ZONE_NORMAL);
}

static unsigned long pcp_pages(void)
{
	unsigned long n = pcp_lock_all(normal());
	pcp_unlock_all(normal());
	return n;
}

static void lifo_on_one_cpu(void)
{
	unsigned long a = __get_free_page(GFP_KERNEL);
	free_page(a);
	unsigned long b = __get_free_page(GFP_KERNEL);
	CHECK_EQ(b, a);
	free_page(b);
	CHECK(pcp_pages() > 0);
}

static void never_more_than_high(void)
{
	/* slub_pcp_batch is far above high here: refills must still stop at high. */
	unsigned long p[64];
	for (int i = 0; i < 64; i++) {
		p[i] = __get_free_pages(GFP_KERNEL, (unsigned int)(i % 4));
		CHECK(p[i] != 0);
		CHECK(pcp_pages() <= HIGH + 8);	/* one order-3 block may overshoot */
	}
	for (int i = 0; i < 64; i++) {
		free_pages(p[i], (unsigned int)(i % 4));
		CHECK(pcp_pages() <= HIGH + 8);
	}
	CHECK_EQ(page_alloc_validate(), 0);
}

static void *no_mmap(void *a, size_t l, int p, int f, int fd, off_t o)
{
	(void)a; (void)l; (void)p; (void)f; (void)fd; (void)o;
	errno = ENOMEM;
	return MAP_FAILED;
}

static void dry_zone_drains_other_cpus(void)
{
	cpu_set_t old;
	sched_getaffinity(0, sizeof(old), &old);
	if (CPU_COUNT(&old) < 2 || !CPU_ISSET(0, &old) || !CPU_ISSET(1, &old)) {
		fprintf(stderr, "   (skipped: needs CPUs 0 and 1)\n");
		return;
	}
	/*
	 * CPU 0's list holds a few pages...  From empty lists: one the test
	 * before left near high would send a batch back at these frees
	 * (seen once under TSan in a loaded CI, where CPU 0 had run it).
	 */
	CHECK_EQ(pin_to_cpu(0), 0);
	page_alloc_drain_pcp();
	unsigned long held[4];
	for (int i = 0; i < 4; i++)
		held[i] = __get_free_page(GFP_KERNEL);
	for (int i = 0; i < 4; i++)
		free_page(held[i]);
	CHECK(pcp_pages() >= 4);
	/* ...then CPU 1 takes everything else and the OS refuses more. */
	CHECK_EQ(pin_to_cpu(1), 0);
	slub_os.mmap = no_mmap;
	unsigned long *all = calloc(1 << 16, sizeof(*all));
	unsigned long n = 0;
	while (n < (1 << 16) && (all[n] = __get_free_pages(GFP_KERNEL | __GFP_NOWARN, 0)))
		n++;
	/* The last pages came from CPU 0's list: nothing was left behind. */
	CHECK_EQ(pcp_pages(), 0);
	CHECK_EQ(normal()->free_pages, 0);
	slub_os = slub_os_default;
	while (n--)
		free_page(all[n]);
	free(all);
	unpin(&old);
	CHECK_EQ(page_alloc_validate(), 0);
}

static const char *self;

static void off_when_high_is_zero(void)
{
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "SLUB_OPTIONS=slub_pcp_high=0 %s --off", self);
	CHECK_EQ(system(cmd), 0);
}

static int run_off(void)
{
	unsigned long a = __get_free_page(GFP_KERNEL);
	free_page(a);
	return pcp_pages() == 0 && page_alloc_validate() == 0 ? 0 : 1;
}

/*
 * CPU numbers at or above the possible count (a fallback count, no sysfs):
 * the lists of such a CPU are still seen by every walk, counted, validated
 * and drained.  Here the count says 1 and the pages go to CPU 1's lists.
 */
static void cpus_past_the_possible_count(void)
{
	cpu_set_t set;
	sched_getaffinity(0, sizeof(set), &set);
	if (!CPU_ISSET(1, &set)) {
		fprintf(stderr, "   (skipped: needs CPU 1)\n");
		return;
	}
	CHECK_EQ(run_self_args(self, "--one-possible-cpu"), 0);
}

static int run_one_possible_cpu(void)
{
	if (pin_to_cpu(1))
		return 1;
	unsigned long a = __get_free_page(GFP_KERNEL);
	free_page(a);
	unsigned long held = pcp_pages();
	page_alloc_drain_pcp();
	fprintf(stderr, "   CPU 1 of 1 possible: %lu pages listed, %lu after a drain\n", held,
		pcp_pages());
	return held > 0 && pcp_pages() == 0 && page_alloc_validate() == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	char opt[64];
	snprintf(opt, sizeof(opt), "slub_pcp_high=%d slub_pcp_batch=4096", HIGH);
	if (argc > 1 && !strcmp(argv[1], "--one-possible-cpu")) {
		os_set_possible_cpus(1);
		return slub_setup(opt) ? 1 : run_one_possible_cpu();
	}
	if (argc > 1 && !strcmp(argv[1], "--off"))
		return run_off();
	self = argv[0];
	CHECK_EQ(slub_setup(opt), 0);
	stay_on_one_node();
	RUN(lifo_on_one_cpu);
	RUN(never_more_than_high);
	RUN(dry_zone_drains_other_cpus);
	RUN(off_when_high_is_zero);
	RUN(cpus_past_the_possible_count);
	return check_done();
}
