// SPDX-License-Identifier: MIT
/*
 * runstat.c - run a command, print "wall_seconds peak_rss_kib cpu_seconds"
 * on stderr's last line: wall time from a monotonic clock, peak RSS from
 * wait4(), which is the largest of the command and every descendant it
 * waited for (a pipeline's biggest process), and from the same rusage the
 * user plus system CPU time of all of them (threads on other cores count).
 *
 *   runstat COMMAND [ARGS...]
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: runstat COMMAND [ARGS...]\n");
		return 2;
	}
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid_t pid = fork();
	if (pid == 0) {
		execvp(argv[1], &argv[1]);
		perror(argv[1]);
		_exit(127);
	}
	int status;
	struct rusage ru;
	if (pid < 0 || wait4(pid, &status, 0, &ru) < 0) {
		perror("runstat");
		return 127;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double wall = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	double cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
		     (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
	fprintf(stderr, "%.3f %ld %.3f\n", wall, ru.ru_maxrss, cpu);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
