// SPDX-License-Identifier: MIT
/*
 * agent_path.c - where an agent's socket lives (agent_proto.h): the
 * directory made and checked, a pid's socket found, stale ones removed.
 * Shared by the library (the agent thread, which must not allocate: no
 * opendir, no stdio streams) and the tools.
 */
#define _GNU_SOURCE
#include "agent/agent_proto.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * A directory the socket may go in: ours and closed to writers but us, or
 * a shared one with the sticky bit (no one else can replace our socket).
 */
static bool dir_acceptable(const struct stat *st)
{
	if (!S_ISDIR(st->st_mode))
		return false;
	if (st->st_uid == geteuid())
		return !(st->st_mode & 022);
	return (st->st_mode & S_ISVTX) && st->st_uid == 0;
}

/* @path made 0700 if missing (its parent must exist), then checked. */
static int private_dir(const char *path)
{
	struct stat st;
	if (mkdir(path, 0700) && errno != EEXIST)
		return -errno;
	if (lstat(path, &st))
		return -errno;
	return dir_acceptable(&st) ? 0 : -EPERM;
}

static int choose(char *buf, size_t len, const char *fmt, const char *a, unsigned long b)
{
	int n = snprintf(buf, len, fmt, a, b);
	/* Room for "/<pid>.sock" within sun_path (agent.c cuts at 80). */
	if (n < 0 || (size_t)n >= len || n > 80)
		return -ENAMETOOLONG;
	return private_dir(buf);
}

int agent_socket_dir(char *buf, size_t len)
{
	const char *xdg = secure_getenv("XDG_RUNTIME_DIR");
	if (xdg && *xdg)
		return choose(buf, len, "%s/slub", xdg, 0);
	/* /run/slub: root makes it; anyone else uses it only when it is there for them. */
	struct stat st;
	if ((!lstat("/run/slub", &st) && access("/run/slub", W_OK | X_OK) == 0) ||
	    (errno == ENOENT && geteuid() == 0))
		if (!choose(buf, len, "%s", "/run/slub", 0))
			return 0;
	return choose(buf, len, "/tmp/slub-%s%lu", "", (unsigned long)geteuid());
}

/* Is process @pid gone?  (One of another user answers EPERM: it is alive.) */
static bool pid_gone(long pid)
{
	return kill((pid_t)pid, 0) && errno == ESRCH;
}

/* "<pid>.sock" → pid, or 0 for any other name. */
static long socket_pid(const char *name)
{
	char *end;
	if (name[0] < '1' || name[0] > '9')
		return 0;
	long pid = strtol(name, &end, 10);
	return strcmp(end, ".sock") ? 0 : pid;
}

void agent_clean_stale(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	/* getdents64 into the stack: opendir would malloc. */
	char ents[4096] __attribute__((aligned(8)));
	ssize_t n;
	while ((n = getdents64(fd, ents, sizeof(ents))) > 0) {
		for (ssize_t off = 0; off < n;) {
			struct dirent64 *de = (struct dirent64 *)(ents + off);
			long pid = socket_pid(de->d_name);
			if (pid && pid != getpid() && pid_gone(pid))
				unlinkat(fd, de->d_name, 0);
			off += de->d_reclen;
		}
	}
	close(fd);
}

int agent_socket_find(pid_t pid, char *buf, size_t len)
{
	char dirs[4][AGENT_PATH_MAX], proc[32];
	struct stat st;
	unsigned long uid = geteuid();
	snprintf(proc, sizeof(proc), "/proc/%d", (int)pid);
	if (!stat(proc, &st))
		uid = st.st_uid;
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	int nr = 0;
	if (xdg && *xdg)
		snprintf(dirs[nr++], AGENT_PATH_MAX, "%s/slub", xdg);
	snprintf(dirs[nr++], AGENT_PATH_MAX, "/run/user/%lu/slub", uid);
	snprintf(dirs[nr++], AGENT_PATH_MAX, "/run/slub");
	snprintf(dirs[nr++], AGENT_PATH_MAX, "/tmp/slub-%lu", uid);
	int err = -ENOENT;
	for (int i = 0; i < nr; i++) {
		int n = snprintf(buf, len, "%s/%d.sock", dirs[i], (int)pid);
		if (n < 0 || (size_t)n >= len || lstat(buf, &st) || !S_ISSOCK(st.st_mode))
			continue;
		if (!pid_gone(pid))
			return 0;
		unlink(buf);	/* a killed process's: nobody else will */
		err = -ESRCH;
	}
	return err;
}
