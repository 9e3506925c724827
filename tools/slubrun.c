// SPDX-License-Identifier: MIT
/*
 * slubrun - run a program with libslub as its malloc.
 *
 *   slubrun [--options 'SLUB_OPTIONS string'] [--stats] [--] PROGRAM [ARGS...]
 *
 * Puts libslub-malloc.so first in LD_PRELOAD, adds the options to
 * SLUB_OPTIONS (the program's own environment wins for nothing: ours are
 * appended, and the last setting of an option is the one in force), runs
 * the program and exits as a shell would: its exit status, or 128 + n if
 * signal n killed it.  Without --stats slubrun simply becomes the program
 * (exec).  --stats must outlive it: slubrun forks, passes on the signals
 * a supervisor sends (TERM, HUP, ALRM, USR1, USR2), waits, and prints the
 * table of caches each of the program's processes left at exit
 * (slub_exit_stats=).
 *
 * slubrun itself runs on glibc's malloc; only the program is preloaded.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void usage(FILE *out)
{
	fprintf(out,
		"usage: slubrun [--options 'SLUB_OPTIONS string'] [--stats] [--] PROGRAM [ARGS...]\n"
		"Run PROGRAM with libslub-malloc.so as its malloc (LD_PRELOAD).\n"
		"  --options S  add S to SLUB_OPTIONS (e.g. 'slub_min_objects=8')\n"
		"  --stats      when PROGRAM ends, print the caches each of its processes used\n"
		"  --help       this text\n"
		"The library is looked up beside slubrun (build tree) and in %s;\n"
		"SLUBRUN_LIBRARY=path overrides.\n", SLUBRUN_LIBDIR_REL);
}

static bool readable(const char *path)
{
	return access(path, R_OK) == 0;
}

/* The library: $SLUBRUN_LIBRARY, or relative to this executable. */
static const char *find_library(void)
{
	static char path[PATH_MAX];
	char self[PATH_MAX];
	const char *env = getenv("SLUBRUN_LIBRARY");
	if (env && *env)
		return env;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return NULL;
	self[n] = 0;
	const char *dir = dirname(self);
	static const char *const rel[] = { SLUBRUN_LIBDIR_REL, "..", "." };
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s/%s", dir, rel[i], SLUBRUN_LIBNAME);
		if (readable(path))
			return path;
	}
	return NULL;
}

/* NAME = before + sep + after, or the one of them that is set. */
static void join_env(const char *name, const char *before, const char *sep, const char *after)
{
	if (!before || !*before) {
		setenv(name, after, 1);
		return;
	}
	if (!after || !*after) {
		setenv(name, before, 1);
		return;
	}
	size_t len = strlen(before) + strlen(sep) + strlen(after) + 1;
	char *v = malloc(len);
	if (!v) {
		perror("slubrun");
		exit(127);
	}
	snprintf(v, len, "%s%s%s", before, sep, after);
	setenv(name, v, 1);
	free(v);
}

static volatile pid_t child;

/* A supervisor's signal is for the program: pass it on. */
static void forward(int sig)
{
	if (child > 0)
		kill(child, sig);
}

static void copy_to_stderr(int fd)
{
	char buf[8192];
	ssize_t n;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		if (write(STDERR_FILENO, buf, (size_t)n) != n)
			break;
}

int main(int argc, char **argv)
{
	const char *options = NULL;
	bool stats = false;
	int i = 1;
	for (; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			i++;
			break;
		} else if (!strcmp(argv[i], "--stats")) {
			stats = true;
		} else if (!strcmp(argv[i], "--options") && i + 1 < argc) {
			options = argv[++i];
		} else if (!strncmp(argv[i], "--options=", 10)) {
			options = argv[i] + 10;
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		} else if (argv[i][0] == '-') {
			fprintf(stderr, "slubrun: unknown option %s\n", argv[i]);
			usage(stderr);
			return 2;
		} else {
			break;
		}
	}
	if (i >= argc) {
		usage(stderr);
		return 2;
	}

	const char *lib = find_library();
	if (!lib) {
		fprintf(stderr, "slubrun: cannot find %s (set SLUBRUN_LIBRARY)\n", SLUBRUN_LIBNAME);
		return 127;
	}
	char abs[PATH_MAX];
	if (realpath(lib, abs))
		lib = abs;
	join_env("LD_PRELOAD", lib, ":", getenv("LD_PRELOAD"));
	if (options)
		join_env("SLUB_OPTIONS", getenv("SLUB_OPTIONS"), " ", options);

	if (!stats) {
		execvp(argv[i], &argv[i]);
		int e = errno;
		fprintf(stderr, "slubrun: %s: %s\n", argv[i], strerror(e));
		return e == ENOENT ? 127 : 126;
	}

	/* The tables go to a private file, printed after the program is done. */
	char stats_path[] = "/tmp/slubrun-stats-XXXXXX";
	int stats_fd = mkstemp(stats_path);
	if (stats_fd < 0) {
		perror("slubrun: mkstemp");
		return 127;
	}
	char opt[sizeof(stats_path) + 32];
	snprintf(opt, sizeof(opt), "slub_exit_stats=%s", stats_path);
	join_env("SLUB_OPTIONS", getenv("SLUB_OPTIONS"), " ", opt);

	/* As system(3) does: the terminal's signals are the program's to take. */
	struct sigaction ign = { .sa_handler = SIG_IGN }, old_int, old_quit;
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGQUIT, &ign, &old_quit);
	/*
	 * The signals passed on are held from before the fork until the
	 * handler knows the child: one arriving in between would otherwise
	 * end slubrun alone and leave the program running, orphaned.
	 */
	static const int passed_on[] = { SIGTERM, SIGHUP, SIGALRM, SIGUSR1, SIGUSR2 };
	const size_t nr_passed = sizeof(passed_on) / sizeof(passed_on[0]);
	sigset_t held, old_mask;
	sigemptyset(&held);
	for (size_t k = 0; k < nr_passed; k++)
		sigaddset(&held, passed_on[k]);
	sigprocmask(SIG_BLOCK, &held, &old_mask);
	/* One the caller ignores (nohup, trap '' HUP) stays ignored, by the program too. */
	struct sigaction fwd = { .sa_handler = forward };
	struct sigaction old_act[sizeof(passed_on) / sizeof(passed_on[0])];
	sigemptyset(&fwd.sa_mask);
	for (size_t k = 0; k < nr_passed; k++) {
		sigaction(passed_on[k], NULL, &old_act[k]);
		if (old_act[k].sa_handler != SIG_IGN)
			sigaction(passed_on[k], &fwd, NULL);
	}
	pid_t pid = fork();
	if (pid < 0) {
		perror("slubrun: fork");
		return 127;
	}
	if (pid == 0) {
		/* The program's own: the actions and the mask slubrun was given. */
		for (size_t k = 0; k < nr_passed; k++)
			sigaction(passed_on[k], &old_act[k], NULL);
		sigprocmask(SIG_SETMASK, &old_mask, NULL);
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGQUIT, &old_quit, NULL);
		close(stats_fd);
		execvp(argv[i], &argv[i]);
		int e = errno;
		fprintf(stderr, "slubrun: %s: %s\n", argv[i], strerror(e));
		_exit(e == ENOENT ? 127 : 126);
	}
	child = pid;
	sigprocmask(SIG_SETMASK, &old_mask, NULL);	/* one held meanwhile is passed on now */
	/*
	 * Wait for its end without collecting it, so that its pid, which a
	 * late signal is passed on to, is nobody else's until the handler
	 * forgets it.
	 */
	siginfo_t info;
	while (waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT) < 0)
		if (errno != EINTR) {
			perror("slubrun: waitid");
			return 127;
		}
	sigprocmask(SIG_BLOCK, &held, NULL);
	child = 0;
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			perror("slubrun: waitpid");
			return 127;
		}
	lseek(stats_fd, 0, SEEK_SET);
	copy_to_stderr(stats_fd);
	close(stats_fd);
	unlink(stats_path);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
