// SPDX-License-Identifier: MIT
/*
 * test_porter.c - the porter's include directory (include/porter/linux/)
 * in use: kstyle.c, kernel-style code that includes only <linux/slab.h>,
 * <linux/gfp.h>, <linux/mempool.h> and <linux/rcupdate.h>, run with a
 * reader thread looking sessions up while they are added, renamed and
 * deleted; its caches are gone at the end and nothing was reported.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "porter/kstyle.h"

static atomic_bool stop;
static atomic_ulong seen, bad;

static void *reader(void *arg)
{
	char name[32];
	(void)arg;
	while (!atomic_load(&stop)) {
		for (unsigned long id = 0; id < 500; id++)
			if (session_lookup(id, name, sizeof(name))) {
				atomic_fetch_add(&seen, 1);
				if (strncmp(name, "session", 7) && strncmp(name, "renamed", 7))
					atomic_fetch_add(&bad, 1);
			}
	}
	return NULL;
}

/* __free(kfree): the block goes when the variable leaves scope. */
static size_t scoped(void)
{
	char *p __free(kfree) = kmalloc(100, GFP_KERNEL);
	return ksize(p);
}

int main(void)
{
	unsigned long errors = slub_errors();
	CHECK_EQ(session_init(), 0);
	CHECK(slub_find_cache("session") != NULL);
	pthread_t t;
	pthread_create(&t, NULL, reader, NULL);
	char name[32];
	for (int round = 0; round < 20; round++) {
		for (unsigned long id = 0; id < 500; id++) {
			snprintf(name, sizeof(name), "session-%lu", id);
			CHECK_EQ(session_add(id, name), 0);
		}
		for (unsigned long id = 0; id < 500; id += 3)
			CHECK_EQ(session_rename(id, "renamed"), 0);
		for (unsigned long id = 0; id < 500; id += 2)
			CHECK_EQ(session_del(id), 0);
		CHECK_EQ(session_del(100000), -ENOENT);
		for (unsigned long id = 1; id < 500; id += 2)
			CHECK_EQ(session_del(id), 0);
	}
	atomic_store(&stop, true);
	pthread_join(t, NULL);
	CHECK_EQ(atomic_load(&bad), 0);
	fprintf(stderr, "   %lu lookups found a session\n", atomic_load(&seen));
	CHECK(session_lookup(1, name, sizeof(name)) == false);
	session_exit();
	CHECK(slub_find_cache("session") == NULL);
	CHECK(scoped() >= 100);
	kvfree_rcu_barrier();
	CHECK_EQ(slub_errors(), errors);
	return check_done();
}
