// SPDX-License-Identifier: MIT
/*
 * test_maps.c - /proc/self/maps and smaps walked: a mapping is found with
 * its permissions and path; smaps gives an untouched anonymous mapping no
 * resident or swapped page and a touched one its pages; maps, which has no
 * sizes, says they are unknown.
 */
#define _GNU_SOURCE
#include <sys/mman.h>

#include "check.h"
#include "base/maps.h"

#define PAGES 64

struct look {
	uintptr_t start;
	struct maps_entry e;
	bool found;
};

static bool look_for(const struct maps_entry *e, const char *path, void *arg)
{
	struct look *l = arg;
	(void)path;
	if (e->start > l->start || e->end <= l->start)
		return false;
	l->e = *e;
	l->found = true;
	return true;
}

static bool look_last(const struct maps_entry *e, const char *path, void *arg)
{
	(void)path;
	*(struct maps_entry *)arg = *e;
	return false;
}

static void find_a_mapping(void)
{
	struct maps_entry e;
	char path[256];
	CHECK(maps_find((uintptr_t)&find_a_mapping, &e, path, sizeof(path)));
	CHECK(e.perms[0] == 'r' && e.perms[2] == 'x');
	CHECK(strstr(path, "test_maps") != NULL);
	CHECK(e.rss == SIZE_MAX && e.swap == SIZE_MAX);		/* maps has no sizes */
}

static void smaps_sizes(void)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), bytes = PAGES * page;
	/* Between guards of PROT_NONE: no neighbour merges with it. */
	char *guard = mmap(NULL, bytes + 2 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(guard != MAP_FAILED);
	if (guard == MAP_FAILED)
		return;
	char *p = guard + page;
	CHECK(!mprotect(p, bytes, PROT_READ | PROT_WRITE));
	struct look l = { (uintptr_t)p, { 0 }, false };
	CHECK(maps_walk_sizes(look_for, &l) && l.found);
	CHECK(l.e.start == (uintptr_t)p && l.e.end == (uintptr_t)p + bytes);
	CHECK(l.e.inode == 0 && !l.e.userfault);
	CHECK_EQ(l.e.rss, 0);
	CHECK_EQ(l.e.swap, 0);
	for (int i = 0; i < 5; i++)
		p[(size_t)i * 7 * page] = 1;
	l.found = false;
	CHECK(maps_walk_sizes(look_for, &l) && l.found);
	/* At least the pages touched: a kernel may fault in a larger folio (mTHP). */
	CHECK(l.e.rss >= 5 * page && l.e.rss <= bytes);
	/* The last mapping of the file too (held until the end). */
	struct maps_entry last = { 0 };
	CHECK(maps_walk_sizes(look_last, &last));
	CHECK(last.rss != SIZE_MAX && last.end > (uintptr_t)p);
	munmap(guard, bytes + 2 * page);
}

int main(void)
{
	RUN(find_a_mapping);
	RUN(smaps_sizes);
	return check_done();
}
