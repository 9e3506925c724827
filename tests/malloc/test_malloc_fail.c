// SPDX-License-Identifier: MIT
/*
 * test_malloc_fail.c - a program whose mallocs fail on purpose: each case
 * runs this program again with SLUB_OPTIONS naming failslab or
 * fail_page_alloc; the child checks that malloc and its family return
 * NULL with errno ENOMEM where asked, frees what it got and goes on to its
 * end, and the parent that it got there.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

#define DONE "-- the program went on --"

/* Keep the compiler from folding what a call returns. */
static void *opaque(void *p)
{
	__asm__ volatile("" : "+r"(p));
	return p;
}

static void went_on(void)
{
	static const char line[] = DONE "\n";
	if (write(STDOUT_FILENO, line, sizeof(line) - 1) < 0)
		_exit(3);
}

/* failslab=1,100,0,-1: every small block fails; an extent (the page allocator's) does not. */
static int small_fail(void)
{
	errno = 0;
	CHECK(opaque(malloc(32)) == NULL);
	CHECK_EQ(errno, ENOMEM);
	errno = 0;
	CHECK(opaque(calloc(4, 100)) == NULL);
	CHECK_EQ(errno, ENOMEM);
	CHECK(opaque(realloc(NULL, 2000)) == NULL);
	CHECK(opaque(strdup("x")) == NULL);
	void *p = NULL;
	CHECK_EQ(posix_memalign(&p, 64, 200), ENOMEM);
	void *big = opaque(malloc(1 << 20));
	CHECK(big != NULL);
	free(big);
	went_on();
	return check_done();
}

/* fail_page_alloc=1,100,0,-1: a block of 1 MiB (an extent) fails. */
static int big_fail(void)
{
	errno = 0;
	CHECK(opaque(malloc(1 << 20)) == NULL);
	CHECK_EQ(errno, ENOMEM);
	errno = 0;
	CHECK(opaque(calloc(1, 300000)) == NULL);
	CHECK_EQ(errno, ENOMEM);
	went_on();
	return check_done();
}

/* failslab=1,30,0,-1: about 30% of the calls fail; the rest free. */
static int share(void)
{
	enum { N = 20000 };
	static void *p[N];
	int got = 0;
	for (int i = 0; i < N; i++) {
		errno = 0;
		void *q = opaque(malloc((size_t)(i * 37 % 4000) + 1));
		if (q) {
			memset(q, 1, 1);
			p[got++] = q;
		} else {
			CHECK_EQ(errno, ENOMEM);
		}
	}
	int failed = N - got;
	CHECK(failed > N * 27 / 100 && failed < N * 33 / 100);
	for (int i = 0; i < got; i++)
		free(p[i]);
	went_on();
	return check_done();
}

/* Each child reaches its end: the program went on after every failure. */
static bool reached_end(const struct self_case *c, const char *out)
{
	(void)c;
	return strstr(out, DONE) != NULL;
}

static const struct self_case cases[] = {
	{ "small_fail", "failslab=1,100,0,-1", small_fail, 0 },
	{ "small_fail_cas", "failslab=1,100,0,-1 slub_thread_sheaves=0", small_fail, 0 },
	{ "big_fail", "fail_page_alloc=1,100,0,-1", big_fail, 0 },
	{ "share", "failslab=1,30,0,-1", share, 0 },
	{ "share_debug", "failslab=1,30,0,-1 slub_debug=F", share, 0 },
};

int main(int argc, char **argv)
{
	return run_self_cases(argc, argv, cases, ARRAY_SIZE(cases), reached_end);
}
