// SPDX-License-Identifier: MIT
/*
 * test_rcu_lazy.c - a program that never uses RCU pays nothing for it: no
 * liburcu mapped, no thread, whatever it allocates and frees; its first
 * kfree_rcu() loads liburcu and starts the one worker thread.  Linked
 * without liburcu, as such a program is (slub.h's declarations alone).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

static bool urcu_mapped(void)
{
	char line[512];
	bool found = false;
	FILE *f = fopen("/proc/self/maps", "r");
	while (f && fgets(line, sizeof(line), f))
		found |= strstr(line, "liburcu") != NULL;
	if (f)
		fclose(f);
	return found;
}

static int threads(void)
{
	int n = 0;
	DIR *d = opendir("/proc/self/task");
	for (struct dirent *e; d && (e = readdir(d));)
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

int main(void)
{
	int before = threads();
	struct kmem_cache *s = kmem_cache_create("lazy", 100, 0, 0, NULL);
	for (int i = 0; i < 10000; i++) {
		void *p = kmalloc((size_t)(i % 5000) + 1, GFP_KERNEL);
		void *o = kmem_cache_alloc(s, GFP_KERNEL);
		kfree(p);
		kmem_cache_free(s, o);
	}
	kmem_cache_destroy(s);
	kvfree_rcu_barrier();	/* nothing queued: no load either */
	CHECK(!urcu_mapped());
	CHECK_EQ(threads(), before);
	kfree_rcu_mightsleep(kmalloc(64, GFP_KERNEL));
	CHECK(urcu_mapped());
	/* liburcu's call_rcu worker (and, under TSan, maybe its runtime's own thread by now) */
	CHECK(threads() == before + 1 || (UNDER_TSAN && threads() > before));
	kvfree_rcu_barrier();
	return check_done();
}
