// SPDX-License-Identifier: MIT
/*
 * agent_path.c - where an agent's socket lives (agent_proto.h): the
 * directory made and checked (one of the uid's that nobody else may write
 * to), the places a pid's socket may be, stale ones removed.
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

int agent_dir_open(const char *path, uid_t owner, char *why, size_t why_len)
{
	struct stat st = { 0 };
	/* O_NOFOLLOW: a symlink planted in our place is refused, not walked. */
	int fd = open(path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int err = errno;
		if (err == ENOENT)
			return -ENOENT;
		/* No strerror: its translation may allocate, and the agent must not. */
		if (why)
			snprintf(why, why_len, "%s: %s", path,
				 err == ELOOP || err == ENOTDIR ? "not a directory (a symlink?)" :
				 "cannot be opened");
		return -EPERM;
	}
	const char *bad = NULL;
	if (fstat(fd, &st))
		bad = "cannot be examined";
	else if (st.st_uid != owner)
		bad = "owned by another uid";
	else if (st.st_mode & 022)
		bad = "writable by other users";
	if (!bad)
		return fd;
	if (why)
		snprintf(why, why_len, "%s: %s (uid %u, mode %04o; wanted uid %u, no write for others)",
			 path, bad, (unsigned int)st.st_uid, (unsigned int)(st.st_mode & 07777),
			 (unsigned int)owner);
	close(fd);
	return -EPERM;
}

/* @path made 0700 if missing and @make (its parent must exist), then checked as ours. */
static int private_dir(const char *path, bool make, char *why, size_t why_len)
{
	if (make && mkdir(path, 0700) && errno != EEXIST)
		return -errno;
	int fd = agent_dir_open(path, geteuid(), why, why_len);
	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

static int choose(char *buf, size_t len, const char *fmt, const char *a, unsigned long b,
		  bool make, char *why, size_t why_len)
{
	int n = snprintf(buf, len, fmt, a, b);
	/* Room for "/<pid>.sock" within sun_path (agent.c cuts at 80). */
	if (n < 0 || (size_t)n >= len || n > 80)
		return -ENAMETOOLONG;
	return private_dir(buf, make, why, why_len);
}

int agent_socket_dir(char *buf, size_t len, bool make, char *why, size_t why_len)
{
	const char *xdg = secure_getenv("XDG_RUNTIME_DIR");
	if (xdg && *xdg)
		return choose(buf, len, "%s/slub", xdg, 0, make, why, why_len);
	/* /run/slub is root's alone: a directory others share is no place for a socket. */
	if (geteuid() == 0 && !choose(buf, len, "%s", "/run/slub", 0, make, why, why_len))
		return 0;
	return choose(buf, len, "/tmp/slub-%s%lu", "", (unsigned long)geteuid(), make, why,
		      why_len);
}

int agent_socket_dirs(uid_t uid, char dirs[][AGENT_PATH_MAX])
{
	int nr = 0;
	snprintf(dirs[nr++], AGENT_PATH_MAX, "/run/user/%u/slub", (unsigned int)uid);
	if (uid == 0)
		snprintf(dirs[nr++], AGENT_PATH_MAX, "/run/slub");
	snprintf(dirs[nr++], AGENT_PATH_MAX, "/tmp/slub-%u", (unsigned int)uid);
	return nr;
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
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
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
