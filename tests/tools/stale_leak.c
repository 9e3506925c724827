// SPDX-License-Identifier: MIT
/*
 * stale_leak.c - for test_leak_exit.sh.  No argument: a block main leaks,
 * whose address lingers below main's frame when it returns (copies a deeper
 * call left there, in the stack exit() and its handlers reuse, writing only
 * some of its words): the leak check must list it.  "exit": a block whose
 * address a live frame holds when it calls exit(): reachable, not listed.
 * "exit-stale": the first case, but main calls exit() itself.
 * "altstack": a global holds a block, and exit() is called by a signal
 * handler on a signal stack just above that global, in the same mapping:
 * reachable, not listed.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

/*
 * One object: the global lies below the signal stack, past the padding in
 * the .bss's own mapping (its first bytes may share the data's last page).
 */
static struct {
	char pad[16384];
	void *keep[8];
	char stack[65536];
} area;

static void exit_from_handler(int sig)
{
	(void)sig;
	exit(0);
}

static void held_by_global_exit_on_altstack(void)
{
	area.keep[5] = malloc(100);
	((char *)area.keep[5])[0] = 0;
	stack_t ss = { .ss_sp = area.stack, .ss_size = sizeof(area.stack) };
	struct sigaction sa = { .sa_handler = exit_from_handler, .sa_flags = SA_ONSTACK };
	if (sigaltstack(&ss, NULL) || sigaction(SIGUSR1, &sa, NULL))
		abort();
	raise(SIGUSR1);
}

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
	if (argc > 1 && !strcmp(argv[1], "altstack"))
		held_by_global_exit_on_altstack();
	char *volatile lost = malloc(100);	/* never freed */
	lost[0] = 0;
	linger(lost);
	lost = NULL;			/* main's own copy gone */
	if (argc > 1 && !strcmp(argv[1], "exit-stale"))
		exit(0);
	return 0;
}
