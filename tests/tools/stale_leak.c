// SPDX-License-Identifier: MIT
/*
 * stale_leak.c - for test_leak_exit.sh.  No argument: a block main leaks,
 * whose address lingers below main's frame when it returns (copies a deeper
 * call left there, in the stack exit() and its handlers reuse, writing only
 * some of its words): the leak check must list it.  "exit": a block whose
 * address a live frame holds when it calls exit(): reachable, not listed.
 * "exit-stale": the first case, but main calls exit() itself.
 */
#include <stdlib.h>
#include <string.h>

static __attribute__((noinline)) void linger(void *p)
{
	void *slots[1024];		/* 8 KiB of the stack below main's frame */
	for (int i = 0; i < 1024; i++)
		slots[i] = p;
	__asm__ volatile("" : : "r"(slots) : "memory");	/* written, as if read */
}

static __attribute__((noinline)) void hold_and_exit(void)
{
	char *volatile held = malloc(100);
	held[0] = 0;
	exit(0);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "exit"))
		hold_and_exit();
	char *volatile lost = malloc(100);	/* never freed */
	lost[0] = 0;
	linger(lost);
	lost = NULL;			/* main's own copy gone */
	if (argc > 1 && !strcmp(argv[1], "exit-stale"))
		exit(0);
	return 0;
}
