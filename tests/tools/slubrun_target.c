// SPDX-License-Identifier: MIT
/*
 * slubrun_target.c - a program for test_slubrun.sh to run under slubrun.
 *
 *   slubrun_target fork      allocate, fork a child that allocates and
 *                            exits normally (no exec), wait, exit 0
 *   slubrun_target idle      allocate nothing, exit 0
 *   slubrun_target badfree   free a pointer malloc never gave, exit 0
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Through a volatile pointer: the compiler may not fold the calls away. */
static void *(*volatile do_malloc)(size_t) = malloc;
static void (*volatile do_free)(void *) = free;

static void allocate(void)
{
	for (int i = 0; i < 100; i++)
		do_free(do_malloc(64));
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	if (!strcmp(mode, "idle"))
		return 0;
	allocate();
	if (!strcmp(mode, "fork")) {
		pid_t pid = fork();
		if (pid == 0) {
			allocate();
			exit(0);	/* exit(), not _exit(): destructors run */
		}
		int status;
		waitpid(pid, &status, 0);
		return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
	}
	if (!strcmp(mode, "badfree")) {
		static long not_from_malloc[4];
		do_free(&not_from_malloc[2]);
		puts("ran on after the bad free");
		return 0;
	}
	fprintf(stderr, "usage: slubrun_target fork|idle|badfree\n");
	return 2;
}
