// SPDX-License-Identifier: MIT
/*
 * machine_faults.c - properties of the machine that weigh on every
 * allocator's figures here, printed before comparing them:
 *   - what a first-touch page fault costs (write one byte per fresh page),
 *     and what faulting a page in with a call costs instead
 *     (MADV_POPULATE_WRITE, one page a call: what the slab layer does);
 *   - whether reading a page never written backs it with memory of its own
 *     (most kernels map the shared zero page, which RSS does not count).
 * The more a fault costs, the more a short process pays for each page it
 * touches, in time as well as in memory.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define PAGES 1024

static unsigned long page_size;

static double now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static char *fresh(void)
{
	char *p = mmap(NULL, PAGES * page_size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	madvise(p, PAGES * page_size, MADV_NOHUGEPAGE);	/* one fault per page */
	return p;
}

/* Resident KiB of the mapping at @p, from /proc/self/smaps. */
static long rss_kib(const void *p)
{
	char line[256];
	long rss = -1;
	int in = 0;
	FILE *f = fopen("/proc/self/smaps", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' '))
			in = (unsigned long)p >= lo && (unsigned long)p < hi;
		else if (in && sscanf(line, "Rss: %ld kB", &rss) == 1)
			break;
	}
	fclose(f);
	return rss;
}

int main(void)
{
	page_size = (unsigned long)sysconf(_SC_PAGESIZE);
	double best = 1e30;
	for (int round = 0; round < 5; round++) {
		char *p = fresh();
		double t0 = now_ns();
		for (int i = 0; i < PAGES; i++)
			p[i * page_size] = 1;
		double per = (now_ns() - t0) / PAGES;
		if (per < best)
			best = per;
		munmap(p, PAGES * page_size);
	}
	printf("first-touch page fault: %.0f ns (best of 5 rounds of %d pages)\n", best, PAGES);
#ifdef MADV_POPULATE_WRITE
	best = 1e30;
	for (int round = 0; round < 5; round++) {
		char *p = fresh();
		double t0 = now_ns();
		for (int i = 0; i < PAGES; i++)
			if (madvise(p + i * page_size, page_size, MADV_POPULATE_WRITE)) {
				best = -1;	/* a kernel before 5.14 */
				break;
			}
		double per = (now_ns() - t0) / PAGES;
		if (best >= 0 && per < best)
			best = per;
		munmap(p, PAGES * page_size);
		if (best < 0)
			break;
	}
	if (best >= 0)
		printf("the same page faulted in by a call (MADV_POPULATE_WRITE, a page a call): %.0f ns\n",
		       best);
#endif

	char *p = fresh();
	long before = rss_kib(p);	/* a neighbour merged into the mapping counts in both */
	for (int i = 0; i < PAGES; i++)
		(void)*(volatile char *)&p[i * page_size];
	long rss = before < 0 ? -1 : rss_kib(p) - before;
	printf("reading %d never-written pages: %ld KiB resident (%s)\n", PAGES, rss,
	       rss < 0 ? "smaps unreadable" :
	       rss >= (long)(PAGES * page_size / 1024 / 2) ? "each read backs a page of its own" :
							"the shared zero page");
	munmap(p, PAGES * page_size);
	return 0;
}
