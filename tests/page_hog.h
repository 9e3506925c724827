/* SPDX-License-Identifier: MIT */
/*
 * page_hog.h - for tests of __GFP_NOFAIL, in a child under an address-space
 * limit (child_under_address_limit): take every page the limit lets the
 * process have, then give them all back from another thread 200 ms later,
 * while the test's NOFAIL request waits.
 */
#ifndef SLUB_TEST_PAGE_HOG_H
#define SLUB_TEST_PAGE_HOG_H

#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "check.h"

enum { PAGE_HOG_MAX = 1 << 15 };	/* a 64 MiB limit holds 16384 pages at most */
static struct { unsigned long addr; unsigned int order; } page_hog[PAGE_HOG_MAX];
static int page_hog_nr;
static atomic_int page_hog_full;
static pthread_t page_hog_thread;

static void *page_hog_give_back(void *arg)
{
	(void)arg;
	while (!atomic_load(&page_hog_full))
		usleep(1000);
	usleep(200000);
	for (int i = 0; i < page_hog_nr; i++)
		free_pages(page_hog[i].addr, page_hog[i].order);
	return NULL;
}

/* Every page the limit allows, 1 MiB blocks first, then the smaller rest. */
static inline void page_hog_take_all(void)
{
	/* The thread first: its stack is a mapping too.  Without it a NOFAIL request would wait forever. */
	if (pthread_create(&page_hog_thread, NULL, page_hog_give_back, NULL)) {
		fprintf(stderr, "   page_hog: no thread to give the pages back\n");
		_exit(3);
	}
	for (int order = 8; order >= 0; order--) {
		unsigned long addr;
		while (page_hog_nr < PAGE_HOG_MAX &&
		       (addr = __get_free_pages(GFP_KERNEL | __GFP_NOWARN, (unsigned int)order))) {
			page_hog[page_hog_nr].addr = addr;
			page_hog[page_hog_nr++].order = (unsigned int)order;
		}
	}
	CHECK(page_hog_nr < PAGE_HOG_MAX);	/* the limit was reached */
}

/* The pages go back 200 ms from now. */
static inline void page_hog_release_later(void)
{
	atomic_store(&page_hog_full, 1);
}

/* Wait until they are all back. */
static inline void page_hog_join(void)
{
	pthread_join(page_hog_thread, NULL);
}

#endif
