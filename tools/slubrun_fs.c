// SPDX-License-Identifier: MIT
/*
 * slubrun_fs.c - slubrun --fs[=DIR]: mount the program's live tree with
 * slubfs (found beside slubrun, else on PATH) at DIR, by default the
 * directory of its agent's socket plus its pid ($XDG_RUNTIME_DIR/slub/PID,
 * else /run/slub/PID for root, /tmp/slub-UID/PID for others).  slubfs unmounts by itself when the program's agent
 * hangs up; slubrun then waits for it, and unmounts (fusermount3 -uz) and
 * removes the directory it made should anything be left.
 */
#define _GNU_SOURCE
#include "slubrun_fs.h"

#include <dirent.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent/agent_proto.h"

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

static bool program_alive(pid_t pid)
{
	siginfo_t info = { 0 };
	return waitid(P_PID, (id_t)pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && !info.si_pid;
}

/* slubfs beside this executable (the build tree, the bindir), else by PATH. */
static const char *find_slubfs(char *buf, size_t len)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = 0;
		snprintf(buf, len, "%s/slubfs", dirname(self));
		if (access(buf, X_OK) == 0)
			return buf;
	}
	return "slubfs";
}

/*
 * In a helper's child (slubfs, fusermount3), before its exec: slubrun's
 * environment carries the program's LD_PRELOAD and SLUB_OPTIONS, which
 * would give each helper libslub and an agent of its own (a socket each,
 * one left behind by a killed fusermount3).  Ours run without either.
 */
static void helper_env(void)
{
	unsetenv("LD_PRELOAD");
	unsetenv("SLUB_OPTIONS");
}

/*
 * Why a live program's agent has no socket: whether it has a slub-agent
 * thread, and if so its state and where it waits ("S poll", "D ..."), for
 * the message.
 */
static void agent_thread_state(pid_t pid, char *buf, size_t len)
{
	snprintf(buf, len, "no slub-agent thread");
	char path[64], text[64];
	DIR *d;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if (!(d = opendir(path)))
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.16s/comm", (int)pid, de->d_name);
		FILE *f = fopen(path, "r");
		bool agent = f && fgets(text, sizeof(text), f) && !strcmp(text, "slub-agent\n");
		if (f)
			fclose(f);
		if (!agent)
			continue;
		char state = '?', wchan[48] = "?";
		snprintf(path, sizeof(path), "/proc/%d/task/%.16s/stat", (int)pid, de->d_name);
		if ((f = fopen(path, "r"))) {
			/* After the comm's closing parenthesis: " S ..." */
			if (fgets(text, sizeof(text), f)) {
				char *rp = strrchr(text, ')');
				if (rp && rp[1] == ' ')
					state = rp[2];
			}
			fclose(f);
		}
		snprintf(path, sizeof(path), "/proc/%d/task/%.16s/wchan", (int)pid, de->d_name);
		if ((f = fopen(path, "r"))) {
			if (!fgets(wchan, sizeof(wchan), f))
				snprintf(wchan, sizeof(wchan), "?");
			fclose(f);
		}
		snprintf(buf, len, "its slub-agent thread %.16s is in state %c at %.47s", de->d_name,
			 state, wchan);
		break;
	}
	closedir(d);
}

/* A mount point: another device than its parent's. */
static bool mounted(const char *path)
{
	struct stat st, parent;
	char up[4096 + 4];
	snprintf(up, sizeof(up), "%s/..", path);
	return !stat(path, &st) && !stat(up, &parent) && st.st_dev != parent.st_dev;
}

void slubrun_fs_mount(struct slubrun_fs *fs, pid_t pid)
{
	char dir[AGENT_PATH_MAX], sock[AGENT_PATH_MAX + 32], why[AGENT_PATH_MAX + 96];
	int err = agent_socket_dir(dir, sizeof(dir), true, why, sizeof(why));
	if (err) {
		fprintf(stderr, "slubrun: --fs: no directory for the agent's socket: %s\n",
			err == -EPERM ? why : strerror(-err));
		return;
	}
	if (*fs->dir)
		snprintf(fs->path, sizeof(fs->path), "%s", fs->dir);
	else
		snprintf(fs->path, sizeof(fs->path), "%s/%d", dir, (int)pid);
	snprintf(sock, sizeof(sock), "%s/%d.sock", dir, (int)pid);
	/* The agent listens once the program's allocator has started. */
	struct stat st;
	long waited = 0;
	while (stat(sock, &st) && program_alive(pid) && waited < 30000) {
		sleep_ms(10);
		waited += 10;
	}
	if (stat(sock, &st)) {
		if (program_alive(pid)) {
			char state[128];
			agent_thread_state(pid, state, sizeof(state));
			fprintf(stderr, "slubrun: --fs: pid %d's agent did not start (does it run on "
				"libslub?  %s); no tree mounted\n", (int)pid, state);
		}
		return;
	}
	if (!mkdir(fs->path, 0700))
		fs->made_dir = true;
	else if (errno != EEXIST) {
		fprintf(stderr, "slubrun: --fs: cannot make %s: %s\n", fs->path, strerror(errno));
		return;
	}
	char prog[PATH_MAX], pidtext[16];
	const char *slubfs = find_slubfs(prog, sizeof(prog));
	snprintf(pidtext, sizeof(pidtext), "%d", (int)pid);
	pid_t server = fork();
	if (server == 0) {
		/* Not the program's: the terminal's ^C is for the program, slubfs ends with it. */
		signal(SIGINT, SIG_IGN);
		signal(SIGQUIT, SIG_IGN);
		helper_env();
		execlp(slubfs, "slubfs", "-f", pidtext, fs->path, (char *)NULL);
		fprintf(stderr, "slubrun: --fs: cannot run %s: %s\n", slubfs, strerror(errno));
		_exit(127);
	}
	if (server < 0)
		return;
	fs->server = server;
	/* Said once it is there, so that a script may read it at once. */
	for (waited = 0; !mounted(fs->path) && waited < 10000; waited += 10) {
		if (waitpid(server, NULL, WNOHANG) == server) {
			fs->server = 0;
			return;		/* slubfs said why */
		}
		sleep_ms(10);
	}
	fprintf(stderr, "slubrun: pid %d's caches are at %s\n", (int)pid, fs->path);
}

void slubrun_fs_unmount(struct slubrun_fs *fs)
{
	if (fs->server > 0) {
		/* It sees the agent hang up and unmounts; a stuck one is stopped. */
		int status;
		long waited = 0;
		while (waitpid(fs->server, &status, WNOHANG) == 0 && waited < 10000) {
			sleep_ms(10);
			waited += 10;
		}
		if (waited >= 10000) {
			kill(fs->server, SIGTERM);
			waitpid(fs->server, &status, 0);
		}
	}
	if (!fs->path[0])
		return;
	if (mounted(fs->path)) {	/* still: take it away */
		pid_t p = fork();
		if (p == 0) {
			helper_env();
			execlp("fusermount3", "fusermount3", "-uz", fs->path, (char *)NULL);
			_exit(127);
		}
		if (p > 0)
			waitpid(p, NULL, 0);
	}
	if (fs->made_dir)
		rmdir(fs->path);
}
