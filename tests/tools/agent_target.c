// SPDX-License-Identifier: MIT
/*
 * agent_target.c - a process for the live-tree tests to look at: caches
 * with known contents (one plain, one merged pair), then commands on stdin,
 * each answered on stdout in one line:
 *   attr CACHE ATTR   the attribute as slub_attr_read gives it (newlines as '|')
 *   alloc N / free    N more objects in agent_t_plain / all of them freed
 *   corrupt           a byte written just past agent_t_plain's first object
 *                     (its red zone, when slub_debug gives it Z); "skip"
 *                     under TSan, which cannot see that the agent reads it
 *                     after the write (the order comes through a fifo)
 *   leak N            N objects of agent_t_plain allocated and their
 *                     pointers dropped (the stack they passed through wiped)
 *   quit              exit (so does the end of stdin)
 * Run with SLUB_OPTIONS=slub_agent; it prints "ready PID" first.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <slub.h>
#include "check.h"

static void *objs[100000];
static int nr;

/* Allocated, filled, and let go: no pointer to them stays in the program. */
static __attribute__((noinline)) void leak_objects(struct kmem_cache *s, int n)
{
	for (int i = 0; i < n; i++) {
		void *p = kmem_cache_alloc(s, 0);
		if (p)
			memset(p, 0x6b, 200);
		__asm__ volatile("" : : "r"(p) : "memory");
	}
}

int main(void)
{
	struct kmem_cache *plain = kmem_cache_create("agent_t_plain", 200, 0, SLAB_NO_MERGE, NULL);
	struct kmem_cache *a = kmem_cache_create("agent_t_a", 72, 0, 0, NULL);
	struct kmem_cache *b = kmem_cache_create("agent_t_b", 70, 0, 0, NULL);
	void *in_a = kmem_cache_alloc(a, 0), *in_b = kmem_cache_alloc(b, 0);
	for (; nr < 1000; nr++)
		objs[nr] = kmem_cache_alloc(plain, 0);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	char line[256], c1[128], c2[128];
	int n;
	while (fgets(line, sizeof(line), stdin)) {
		if (sscanf(line, "attr %127s %127s", c1, c2) == 2) {
			char buf[4096];
			struct kmem_cache *s = slub_find_cache(c1);
			ssize_t len = s ? slub_attr_read(s, c2, buf, sizeof(buf)) : -1;
			for (ssize_t i = 0; i < len; i++)
				if (buf[i] == '\n')
					buf[i] = '|';
			printf("%s\n", len >= 0 ? buf : "error");
		} else if (sscanf(line, "alloc %d", &n) == 1) {
			for (int i = 0; i < n && nr < 100000; i++)
				objs[nr++] = kmem_cache_alloc(plain, 0);
			printf("ok\n");
		} else if (sscanf(line, "leak %d", &n) == 1) {
			leak_objects(plain, n);
			/* A scan that finds main not yet blocked in read() (a busy machine) reads its dead stack too. */
			wipe_dead_stack();
			printf("ok\n");
		} else if (!strcmp(line, "free\n")) {
			while (nr)
				kmem_cache_free(plain, objs[--nr]);
			printf("ok\n");
		} else if (!strcmp(line, "corrupt\n")) {
			if (!UNDER_TSAN)
				((volatile char *)objs[0])[200] = 0x5a;
			printf("%s\n", UNDER_TSAN ? "skip" : "ok");
		} else if (!strcmp(line, "quit\n")) {
			break;
		} else {
			printf("unknown\n");
		}
		fflush(stdout);
	}
	kmem_cache_free(a, in_a);
	kmem_cache_free(b, in_b);
	return 0;
}
