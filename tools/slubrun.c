// SPDX-License-Identifier: MIT
/*
 * slubrun - run a program with libslub as its malloc.
 *
 *   slubrun [OPTIONS] [--] PROGRAM [ARGS...]     (usage() lists the options)
 *
 * Puts libslub-malloc.so first in LD_PRELOAD, adds the options to
 * SLUB_OPTIONS (the program's own environment wins for nothing: ours are
 * appended, and the last setting of an option is the one in force), runs
 * the program and exits as a shell would: its exit status, or 128 + n if
 * signal n killed it.  Without --stats or --fs slubrun simply becomes the program
 * (exec).  --stats must outlive it: slubrun forks, passes on the signals
 * a supervisor sends (TERM, HUP, ALRM, USR1, USR2), waits, and prints the
 * table of caches the program left at exit (slub_exit_stats=): only the
 * process slubrun started, as it is at its last exec (a launcher such as a
 * pyenv shim execs the real program in the same pid), unless --stats=all.
 * --fs also outlives it: it turns the program's agent on and mounts its
 * tree with slubfs while it runs (slubrun_fs.c).  So do --debug,
 * --leak-check and --abort-on-error when slub-symbolize is beside slubrun:
 * the program's reports go to a private file (slub_report_file=, with
 * module paths: slub_report_paths=1), which slubrun follows while the
 * program runs and pipes through slub-symbolize to its stderr, so that
 * every frame shows its file:line.  A file, not a pipe: a process of the
 * program that outlives slubrun (a daemon) writes on into it harmlessly,
 * where a pipe would block it or kill it with SIGPIPE.
 *
 * slubrun itself runs on glibc's malloc; only the program is preloaded.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "slubrun_check.h"
#include "slubrun_fs.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: slubrun [OPTIONS] [--] PROGRAM [ARGS...]\n"
		"Run PROGRAM with libslub-malloc.so as its malloc (LD_PRELOAD).\n"
		"  --options S       add S to SLUB_OPTIONS (e.g. 'slub_min_objects=8'); the\n"
		"                    list below shows the values in force with them\n"
		"  --stats           when PROGRAM ends, print the table of its caches: of the\n"
		"                    process slubrun started, at its last exec (a launcher\n"
		"                    that execs the real program counts as the program)\n"
		"  --stats=all       a table for every process of the program (each child too)\n"
		"  --stats=internal  the allocator's own caches (kmem_cache, sheaf-N) in the table too\n"
		"  --stats=counters  each cache's statistics counters after the table (a\n"
		"                    -DSLUB_STATS=ON build); words combine: --stats=all,counters\n"
		"  --fs[=DIR]        the program's caches, live, as a /sys/kernel/slab tree\n"
		"                    mounted at DIR (slubfs; default $XDG_RUNTIME_DIR/slub/PID,\n"
		"                    else /run/slub/PID for root, /tmp/slub-UID/PID for\n"
		"                    others) while it runs, with its agent on\n"
		"                    (slub_agent=1: slabinfo -p PID reads it too)\n"
		"  --abort-on-error  an error report (a bad free, a corrupted heap) prints the\n"
		"                    stack and aborts the program (SIGABRT, status 134), as\n"
		"                    glibc does; warnings (an allocation failing, an option)\n"
		"                    never stop it (slub_abort_on_error=1)\n"
		"  --debug[=FLAGS]   slub_debug=FLAGS (default FZPU) for every cache and for\n"
		"                    malloc's blocks above 8 KiB (malloc-large): red zones,\n"
		"                    poisoning, double and invalid frees reported with the\n"
		"                    stacks that allocated and freed (F checks, Z red zones,\n"
		"                    P poison, U tracking, T tracing); --options after it win\n"
		"  --error-exitcode=N  exit with status N if the library reported errors\n"
		"                    (slub_error_exitcode=N; as valgrind's option)\n"
		"  --no-exit-validate  with --debug, do not validate every cache at exit\n"
		"                    (slub_exit_validate=0; the ERROR SUMMARY line goes too)\n"
		"  --no-symbolize    reports as the library prints them: without --debug's\n"
		"                    default of piping them through slub-symbolize (file:line)\n"
		"  --leak-check      at PROGRAM's exit, list what it left allocated, summed\n"
		"                    by the stack that allocated it (adds U to the debug\n"
		"                    flags; lines say \"leak\"; blocks still reachable count:\n"
		"                    nothing is scanned); only the process slubrun starts\n"
		"  --version         slubrun's version and the library it preloads\n"
		"  --help            this text\n"
		"Exit status: PROGRAM's, or 128+N if signal N ended it; 126/127 if it could\n"
		"not be run; 2 for a bad option or value (the library checks --debug and\n"
		"--options: nothing runs then).  A program that cannot load the library\n"
		"(statically linked; set-user-ID, set-group-ID or with file capabilities,\n"
		"where the loader ignores LD_PRELOAD; for a #! script, its interpreter) is\n"
		"still run, after one line on stderr saying so: it runs on its own malloc.\n"
		"The library is looked up beside slubrun (build tree) and in %s;\n"
		"SLUBRUN_LIBRARY=path overrides.\n", SLUBRUN_LIBDIR_REL);
}

static bool readable(const char *path)
{
	return access(path, R_OK) == 0;
}

/* The library: $SLUBRUN_LIBRARY, or relative to this executable. */
static const char *find_library_as_given(char *path, size_t size)
{
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
		snprintf(path, size, "%s/%s/%s", dir, rel[i], SLUBRUN_LIBNAME);
		if (readable(path))
			return path;
	}
	return NULL;
}

/* The library's absolute path: the program may change directory. */
static const char *find_library(void)
{
	static char found[PATH_MAX], canonical[PATH_MAX];
	const char *lib = find_library_as_given(found, sizeof(found));
	return lib && realpath(lib, canonical) ? canonical : lib;
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

static void add_option(const char *option);

/* The report decoder beside this executable, or NULL. */
static const char *find_symbolizer(void)
{
	static char path[PATH_MAX];
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return NULL;
	self[n] = 0;
	snprintf(path, sizeof(path), "%s/slub-symbolize", dirname(self));
	return access(path, X_OK) ? NULL : path;
}

/* The report decoder: its input, a socket (a send to it never raises SIGPIPE). */
struct symbolizer {
	const char *path;	/* NULL: reports go as the library writes them */
	char file[32];		/* the program's report file */
	int report_fd, in;
	pid_t pid;
};

/* Start the decoder on slubrun's stderr and point the program's reports at a private file. */
static bool symbolizer_start(struct symbolizer *sym)
{
	int sv[2];
	snprintf(sym->file, sizeof(sym->file), "/tmp/slubrun-reports-XXXXXX");
	sym->report_fd = mkstemp(sym->file);
	if (sym->report_fd < 0 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
		perror("slubrun: report file");
		return false;
	}
	sym->pid = fork();
	if (sym->pid == 0) {
		/* The decoder runs on glibc's malloc, with no options of the program's. */
		unsetenv("LD_PRELOAD");
		unsetenv("SLUB_OPTIONS");
		dup2(sv[1], STDIN_FILENO);
		dup2(STDERR_FILENO, STDOUT_FILENO);
		execl(sym->path, sym->path, (char *)NULL);
		_exit(127);
	}
	close(sv[1]);
	sym->in = sv[0];
	if (sym->pid < 0) {
		perror("slubrun: fork");
		return false;
	}
	char opt[sizeof(sym->file) + 64];
	snprintf(opt, sizeof(opt), "slub_report_file=%s slub_report_paths=1", sym->file);
	add_option(opt);
	return true;
}

/* What the program wrote since the last call, to the decoder. */
static void symbolizer_pump(struct symbolizer *sym)
{
	char buf[8192];
	ssize_t n;
	while ((n = read(sym->report_fd, buf, sizeof(buf))) > 0)
		for (ssize_t done = 0, k; done < n; done += k)
			if ((k = send(sym->in, buf + done, (size_t)(n - done), MSG_NOSIGNAL)) <= 0)
				return;	/* the decoder is gone: the rest is lost */
}

static void symbolizer_stop(struct symbolizer *sym)
{
	symbolizer_pump(sym);
	close(sym->in);
	while (waitpid(sym->pid, NULL, 0) < 0 && errno == EINTR)
		;
	close(sym->report_fd);
	unlink(sym->file);
}

/* Returns the number of bytes copied. */
static size_t copy_to_stderr(int fd)
{
	char buf[8192];
	ssize_t n;
	size_t total = 0;
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		total += (size_t)n;
		if (write(STDERR_FILENO, buf, (size_t)n) != n)
			break;
	}
	return total;
}

static void add_option(const char *option)
{
	join_env("SLUB_OPTIONS", getenv("SLUB_OPTIONS"), " ", option);
}

static bool leak_check;

/*
 * --debug and --leak-check: slub_debug=FLAGS, U added for the leak check
 * (which needs every block's allocation track).  Without --debug, the
 * leak check keeps a slub_debug the user set in SLUB_OPTIONS or --options
 * (it lists only the caches whose flags have U) and otherwise adds U alone.
 */
/* Does the options line @s set slub_debug (or slab_debug), bare or with a value? */
static bool sets_debug(const char *s)
{
	while (s && *s) {
		s += strspn(s, " \t");
		size_t len = strcspn(s, " \t");
		for (const char *name = "slub_debug"; name; name = *name == 's' && name[2] == 'u' ?
							     "slab_debug" : NULL)
			if (len >= 10 && !strncmp(s, name, 10) && (len == 10 || s[10] == '='))
				return true;	/* not slub_debug_frames */
		s += len;
	}
	return false;
}

/*
 * @flags with U in each block's letters, for the leak check: "FZ,conn;P"
 * gives "FZU,conn;PU" (U after the cache names would name another cache);
 * a block of names alone (",conn", which means FZPU) and one with U stay
 * as they are; "-" (none) and "" give "U".
 */
static void add_u(const char *flags, char *out, size_t size)
{
	size_t o = 0;
	for (const char *p = flags;;) {
		int block = (int)strcspn(p, ";"), letters = (int)strcspn(p, ",;");
		bool has_u = memchr(p, 'u', (size_t)letters) || memchr(p, 'U', (size_t)letters);
		if ((block && !letters) || has_u)
			o += (size_t)snprintf(out + o, o < size ? size - o : 0, "%.*s", block, p);
		else if (block || p == flags)
			o += (size_t)snprintf(out + o, o < size ? size - o : 0, "%.*sU%.*s",
					      letters == 1 && *p == '-' ? 0 : letters, p,
					      block - letters, p + letters);
		if (!p[block])
			return;
		o += (size_t)snprintf(out + o, o < size ? size - o : 0, ";");
		p += block + 1;
	}
}

static void add_debug(const char *flags, bool leaks, const char *options)
{
	char opt[256];
	if (leaks) {
		add_option("slub_leak_check=1");
		bool user_debug = sets_debug(getenv("SLUB_OPTIONS")) || sets_debug(options);
		if (!flags && user_debug)
			return;
	}
	if (!flags)
		flags = "";
	int n = snprintf(opt, sizeof(opt), "slub_debug=%s", leaks ? "" : flags);
	if (leaks)
		add_u(flags, opt + n, sizeof(opt) - (size_t)n);
	add_option(opt);
}

static _Noreturn void exec_program(char **argv)
{
	/* The program is this pid (slubrun's own, or its child's under --stats). */
	if (leak_check) {
		char mine[64];
		snprintf(mine, sizeof(mine), "slub_leak_check_pid=%d", (int)getpid());
		add_option(mine);
	}
	execvp(argv[0], argv);
	int e = errno;
	fprintf(stderr, "slubrun: %s: %s\n", argv[0], strerror(e));
	_exit(e == ENOENT ? 127 : 126);
}

/*
 * The options as the program would see them: a preloaded copy of slubrun
 * lists them at load (SLUB_OPTIONS=help) and exits.  stdout, as --help is.
 */
#define LISTING_CHILD "--list-options-at-load"

static void list_options(const char *lib)
{
	if (!lib) {
		printf("(The list of SLUB_OPTIONS needs %s, which was not found.)\n",
		       SLUBRUN_LIBNAME);
		return;
	}
	printf("\nSLUB_OPTIONS=help in a program's environment prints this list to stderr once\n"
	       "as the program starts, and the program runs on.\n\n");
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(STDOUT_FILENO, STDERR_FILENO);
		add_option("help");
		char *args[] = { "slubrun", LISTING_CHILD, NULL };
		execv("/proc/self/exe", args);
		_exit(127);
	}
	int status;
	if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
		printf("(The list could not be printed: %s did not start.)\n", lib);
}

/*
 * Options given on the command line are checked by the library itself
 * before anything runs (a bad one would otherwise be one warning in the
 * program's stderr, and the program run without it): a preloaded copy of
 * slubrun with SLUB_OPTIONS set to them starts the allocator and exits 1
 * if it reported anything.
 */
#define CHECKING_CHILD "--check-options-at-load"

static int checking_child(void)
{
	void *volatile p = malloc(1);	/* the allocator starts, and reads SLUB_OPTIONS */
	free(p);
	unsigned long (*errors)(void) = (unsigned long (*)(void))dlsym(RTLD_DEFAULT, "slub_errors");
	return errors ? errors() != 0 : 2;
}

/* "slub: SLUB_OPTIONS: why" lines of the checking child as "slubrun: @arg: why". */
static void say_refused(const char *arg, char *text)
{
	static const char prefix[] = "slub: SLUB_OPTIONS: ";
	bool said = false;
	for (char *line = text, *nl; *line; line = nl) {
		nl = strchrnul(line, '\n');
		if (*nl)
			*nl++ = 0;
		if (!strncmp(line, prefix, sizeof(prefix) - 1))
			line += sizeof(prefix) - 1;
		fprintf(stderr, "slubrun: %s: %s\n", arg, line);
		said = true;
	}
	if (!said)
		fprintf(stderr, "slubrun: %s: refused by %s (its reports went to slub_report_file)\n",
			arg, SLUBRUN_LIBNAME);
	fprintf(stderr, "slubrun: nothing run: fix %s (slubrun --help lists the options)\n", arg);
}

/* False, after saying why, if the library refuses @opts (from argument @arg). */
static bool options_accepted(const char *lib, const char *arg, const char *opts)
{
	int out[2];
	if (!lib || !*opts || pipe2(out, O_CLOEXEC))
		return true;	/* not checkable here: the program's start still reports */
	pid_t pid = fork();
	if (pid == 0) {
		dup2(out[1], STDERR_FILENO);
		setenv("LD_PRELOAD", lib, 1);
		setenv("SLUB_OPTIONS", opts, 1);
		char *args[] = { "slubrun", CHECKING_CHILD, NULL };
		execv("/proc/self/exe", args);
		_exit(127);
	}
	close(out[1]);
	char text[4096];
	size_t n = 0;
	ssize_t k;
	while ((k = read(out[0], text + n, sizeof(text) - 1 - n)) > 0 ||
	       (k < 0 && errno == EINTR))
		n += k > 0 ? (size_t)k : 0;
	text[n] = 0;
	close(out[0]);
	int status;
	while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (pid < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 1)
		return true;
	say_refused(arg, text);
	return false;
}

/* --fs=DIR: a directory there, or one slubrun can make (its parent is one). */
static bool fs_dir_usable(const char *dir)
{
	struct stat st;
	char parent[PATH_MAX];
	if (!*dir) {
		fprintf(stderr, "slubrun: --fs= needs a directory (or --fs alone for the default)\n");
		return false;
	}
	if (!stat(dir, &st)) {
		if (S_ISDIR(st.st_mode))
			return true;
		fprintf(stderr, "slubrun: --fs=%s: not a directory\n", dir);
		return false;
	}
	snprintf(parent, sizeof(parent), "%s", dir);
	if (errno == ENOENT && !stat(dirname(parent), &st) && S_ISDIR(st.st_mode))
		return true;
	fprintf(stderr, "slubrun: --fs=%s: %s\n", dir, strerror(errno == ENOENT ? ENOENT : errno));
	return false;
}

enum stats_mode { STATS_NONE, STATS_PROGRAM, STATS_ALL };

/*
 * Why no table came: the destructor that writes it runs only at a normal
 * exit of a process that loaded the library and allocated.
 */
static void no_table(const char *prog, pid_t pid, int status, enum stats_mode mode)
{
	if (mode == STATS_ALL)
		fprintf(stderr, "slubrun: no table: no process of %s allocated through %s and "
			"exited normally\n", prog, SLUBRUN_LIBNAME);
	else if (WIFSIGNALED(status))
		fprintf(stderr, "slubrun: no table: %s (pid %d) was killed by signal %d\n", prog,
			(int)pid, WTERMSIG(status));
	else
		fprintf(stderr, "slubrun: no table: %s (pid %d) made no allocation, did not load "
			"%s, or left by _exit(); --stats=all shows its children's\n", prog,
			(int)pid, SLUBRUN_LIBNAME);
}

/*
 * --stats (@mode), --fs (@fs: its directory, "" for the default), reports
 * decoded (@symbolizer: slub-symbolize's path): slubrun outlives the program.
 */
static int run_supervised(char **argv, enum stats_mode mode, const char *fs,
			  const char *symbolizer)
{
	struct symbolizer sym = { .path = symbolizer };
	if (sym.path && !symbolizer_start(&sym))
		return 127;
	/* The tables go to a private file, printed after the program is done. */
	char stats_path[] = "/tmp/slubrun-stats-XXXXXX";
	int stats_fd = -1;
	if (mode != STATS_NONE) {
		stats_fd = mkstemp(stats_path);
		if (stats_fd < 0) {
			perror("slubrun: mkstemp");
			return 127;
		}
		char opt[sizeof(stats_path) + 32];
		snprintf(opt, sizeof(opt), "slub_exit_stats=%s", stats_path);
		add_option(opt);
	}
	struct slubrun_fs tree = { .dir = fs };
	if (fs)
		add_option("slub_agent=1");

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
		if (stats_fd >= 0)
			close(stats_fd);
		/*
		 * The program is this pid, at whatever it last execs: its
		 * children and the images it execs on the way inherit the
		 * option, and only a process with this pid writes at exit.
		 */
		if (mode == STATS_PROGRAM) {
			char mine[48];
			snprintf(mine, sizeof(mine), "slub_exit_stats_pid=%d", (int)getpid());
			add_option(mine);
		}
		exec_program(argv);
	}
	child = pid;
	sigprocmask(SIG_SETMASK, &old_mask, NULL);	/* one held meanwhile is passed on now */
	if (fs)
		slubrun_fs_mount(&tree, pid);
	/*
	 * Wait for its end without collecting it, so that its pid, which a
	 * late signal is passed on to, is nobody else's until the handler
	 * forgets it.
	 */
	siginfo_t info;
	for (;;) {
		/* Following the report file: reports come out as they are written. */
		int flags = WEXITED | WNOWAIT | (sym.path ? WNOHANG : 0);
		memset(&info, 0, sizeof(info));
		if (waitid(P_PID, (id_t)pid, &info, flags) < 0) {
			if (errno == EINTR)
				continue;
			perror("slubrun: waitid");
			return 127;
		}
		if (info.si_pid == pid)
			break;
		symbolizer_pump(&sym);
		nanosleep(&(struct timespec){ .tv_nsec = 20 * 1000 * 1000 }, NULL);
	}
	sigprocmask(SIG_BLOCK, &held, NULL);
	child = 0;
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			perror("slubrun: waitpid");
			return 127;
		}
	if (fs)
		slubrun_fs_unmount(&tree);
	if (sym.path)
		symbolizer_stop(&sym);
	/* A program that could not be run (126, 127) has said so already. */
	bool ran = !WIFEXITED(status) || (WEXITSTATUS(status) != 126 && WEXITSTATUS(status) != 127);
	if (stats_fd >= 0) {
		lseek(stats_fd, 0, SEEK_SET);
		if (!copy_to_stderr(stats_fd) && ran)
			no_table(argv[0], pid, status, mode);
		close(stats_fd);
		unlink(stats_path);
	}
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

/* --stats=WORD[,WORD...]: all, internal, counters. */
static bool stats_words(const char *list, enum stats_mode *stats)
{
	char words[64];
	snprintf(words, sizeof(words), "%s", list);
	*stats = STATS_PROGRAM;
	for (char *save = NULL, *w = strtok_r(words, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		if (!strcmp(w, "all"))
			*stats = STATS_ALL;
		else if (!strcmp(w, "internal"))
			add_option("slub_exit_stats_internal=1");
		else if (!strcmp(w, "counters"))
			add_option("slub_exit_counters=1");
		else {
			fprintf(stderr, "slubrun: --stats=%s: '%s' is none of all, internal, counters\n",
				list, w);
			return false;
		}
	}
	return true;
}

int main(int argc, char **argv)
{
	static const char default_fs[] = "";
	const char *options = NULL, *debug = NULL, *debug_arg = NULL, *fs = NULL;
	enum stats_mode stats = STATS_NONE;
	bool help = false, abort_on_error = false, symbolize = true;
	int i = 1;
	if (argc == 2 && !strcmp(argv[1], LISTING_CHILD))
		return 0;	/* the list is printed at load */
	if (argc == 2 && !strcmp(argv[1], CHECKING_CHILD))
		return checking_child();
	for (; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			i++;
			break;
		} else if (!strcmp(argv[i], "--stats")) {
			stats = STATS_PROGRAM;
		} else if (!strncmp(argv[i], "--stats=", 8)) {
			if (!stats_words(argv[i] + 8, &stats))
				return 2;
		} else if (!strcmp(argv[i], "--fs")) {
			fs = default_fs;
		} else if (!strncmp(argv[i], "--fs=", 5)) {
			fs = argv[i] + 5;
		} else if (!strcmp(argv[i], "--abort-on-error")) {
			abort_on_error = true;
		} else if (!strcmp(argv[i], "--debug")) {
			debug = "FZPU";
			debug_arg = argv[i];
		} else if (!strncmp(argv[i], "--debug=", 8)) {
			debug = argv[i] + 8;
			debug_arg = argv[i];
		} else if (!strcmp(argv[i], "--leak-check")) {
			leak_check = true;
		} else if (!strcmp(argv[i], "--no-symbolize")) {
			symbolize = false;
		} else if (!strcmp(argv[i], "--no-exit-validate")) {
			add_option("slub_exit_validate=0");
		} else if (!strncmp(argv[i], "--error-exitcode=", 17)) {
			char *end;
			long code = strtol(argv[i] + 17, &end, 10);
			if (!argv[i][17] || *end || code < 1 || code > 255) {
				fprintf(stderr, "slubrun: %s: the status must be 1 to 255\n", argv[i]);
				return 2;
			}
			char opt[48];
			snprintf(opt, sizeof(opt), "slub_error_exitcode=%ld", code);
			add_option(opt);
		} else if (!strcmp(argv[i], "--options")) {
			if (i + 1 >= argc) {
				fprintf(stderr, "slubrun: --options needs a SLUB_OPTIONS string, "
					"e.g. --options 'slub_decay_ms=100' (slubrun --help lists them)\n");
				return 2;
			}
			options = argv[++i];
		} else if (!strncmp(argv[i], "--options=", 10)) {
			options = argv[i] + 10;
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			help = true;
		} else if (!strcmp(argv[i], "--version")) {
			const char *lib = find_library();
			printf("slubrun (libslub) %s\nlibrary: %s\n", SLUBRUN_VERSION,
			       lib ? lib : "not found (set SLUBRUN_LIBRARY)");
			return 0;
		} else if (argv[i][0] == '-') {
			fprintf(stderr, "slubrun: unknown option %s\n", argv[i]);
			usage(stderr);
			return 2;
		} else {
			break;
		}
	}
	if (!help && i >= argc) {
		usage(stderr);
		return 2;
	}

	const char *lib = find_library();
	if (!lib && !help) {
		fprintf(stderr, "slubrun: cannot find %s (set SLUBRUN_LIBRARY)\n", SLUBRUN_LIBNAME);
		return 127;
	}
	/* A bad value on the command line is a usage error: nothing runs. */
	if (!help) {
		char debug_opt[300];
		snprintf(debug_opt, sizeof(debug_opt), "slub_debug=%s", debug ? debug : "");
		if (debug && !options_accepted(lib, debug_arg, debug_opt))
			return 2;
		if (options && !options_accepted(lib, "--options", options))
			return 2;
		if (fs && fs != default_fs && !fs_dir_usable(fs))
			return 2;
	}
	if (lib)
		join_env("LD_PRELOAD", lib, ":", getenv("LD_PRELOAD"));
	if (abort_on_error)
		add_option("slub_abort_on_error=1");
	if (debug || leak_check)
		add_debug(debug, leak_check, options);
	if (options && *options)
		add_option(options);
	if (help) {
		usage(stdout);
		list_options(lib);
		return 0;
	}

	slubrun_check_program(argv[i], SLUBRUN_LIBNAME);
	/* The reports decoded, unless the user sends them somewhere already. */
	const char *symbolizer = NULL;
	if (symbolize && (debug || leak_check || abort_on_error) &&
	    !strstr(getenv("SLUB_OPTIONS") ? getenv("SLUB_OPTIONS") : "", "report_file"))	/* --options' are in it */
		symbolizer = find_symbolizer();
	if (stats == STATS_NONE && !fs && !symbolizer)
		exec_program(&argv[i]);
	return run_supervised(&argv[i], stats, fs, symbolizer);
}
