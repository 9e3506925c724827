// SPDX-License-Identifier: MIT
/*
 * agent_client.c - connect to a libslub process's agent and exchange
 * requests and answers (agent_client.h).  The tools' side: plain libc.
 *
 * Nothing is sent before the socket is known to be the process's: found
 * in a directory of the process's uid that nobody else may write to, and
 * served (SO_PEERCRED) by that pid with that uid.  Whatever comes back is
 * still read as untrusted: the status must be 0 or an errno, the length
 * bounded, before either is used.  The uid expected is the process's
 * effective uid now: one that changed it since its agent started is
 * refused (its directory and listener carry the old one).
 */
#define _GNU_SOURCE
#include "agent_client.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "agent/agent_proto.h"

/* What the last refusal of this thread's was (the tools print it). */
static __thread char refusal[2 * AGENT_PATH_MAX + 160];

const char *agent_refusal(void)
{
	return refusal;
}

int agent_connect_path(const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof(sun.sun_path))
		return -ENAMETOOLONG;
	strcpy(sun.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun))) {
		int err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

/* The whole of a small /proc file, NUL-terminated (NULs inside kept); its length or -1. */
static ssize_t read_proc(pid_t pid, const char *what, char *buf, size_t size)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, what);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t n = 0;
	ssize_t k;
	while (n + 1 < size && (k = read(fd, buf + n, size - 1 - n)) > 0)
		n += (size_t)k;
	close(fd);
	buf[n] = 0;
	return (ssize_t)n;
}

/* The effective uid of @pid (/proc/PID/status), or -ESRCH. */
static long process_euid(pid_t pid)
{
	char status[4096];
	if (read_proc(pid, "status", status, sizeof(status)) < 0)
		return -ESRCH;
	const char *uid = strstr(status, "\nUid:");
	unsigned long real, effective;
	if (!uid || sscanf(uid + 5, "%lu %lu", &real, &effective) != 2)
		return -ESRCH;
	return (long)effective;
}

/* Running, not a zombie: /proc/PID/stat's state after the command's ')'. */
bool agent_process_running(pid_t pid)
{
	char buf[512];
	if (read_proc(pid, "stat", buf, sizeof(buf)) <= 0)
		return false;
	const char *paren = strrchr(buf, ')');
	return paren && paren[1] == ' ' && paren[2] != 'Z' && paren[2] != 'X';
}

/* The value of @name in @pid's environment at its exec, into @buf; false if unknown. */
static bool process_env(pid_t pid, const char *name, char *buf, size_t size)
{
	const size_t cap = 64 << 10;
	char *env = malloc(cap);
	bool found = false;
	ssize_t n = env ? read_proc(pid, "environ", env, cap) : -1;
	size_t len = strlen(name);
	for (ssize_t i = 0; i < n && !found; i += (ssize_t)strlen(env + i) + 1)
		if (!strncmp(env + i, name, len) && env[i + len] == '=') {
			snprintf(buf, size, "%s", env + i + len + 1);
			found = true;
		}
	free(env);
	return found;
}

/*
 * The listener must be @pid itself, with uid @uid (the directory's
 * owner): a socket bound by anyone else gets not one byte.
 */
static bool peer_is(int fd, pid_t pid, uid_t uid, const char *path)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len)) {
		snprintf(refusal, sizeof(refusal), "%s: cannot tell who listens (%s)", path,
			 strerror(errno));
		return false;
	}
	if (cred.pid == pid && cred.uid == uid)
		return true;
	snprintf(refusal, sizeof(refusal), "%s is served by pid %d, uid %u, not by pid %d, uid %u: "
		 "not its agent", path, (int)cred.pid, (unsigned int)cred.uid, (int)pid,
		 (unsigned int)uid);
	return false;
}

/*
 * The socket @name in the checked directory @dirfd: connected through
 * the fd, so that the directory checked is the one used.
 */
static int connect_at(int dirfd, const char *name)
{
	char via[64];
	snprintf(via, sizeof(via), "/proc/self/fd/%d/%s", dirfd, name);
	return agent_connect_path(via);
}

/* @xdg's "slub" into @dir: 1, or 0 if there is none or it does not fit. */
static int xdg_dir(char *dir, const char *xdg)
{
	return *xdg && strlen(xdg) + sizeof("/slub") <= AGENT_PATH_MAX &&
	       snprintf(dir, AGENT_PATH_MAX, "%s/slub", xdg) > 0;
}

int agent_connect(pid_t pid, char *path, size_t len)
{
	char dirs[5][AGENT_PATH_MAX], name[32], xdg[AGENT_PATH_MAX], found[AGENT_PATH_MAX + 32];
	refusal[0] = 0;
	if (path && len)
		path[0] = 0;
	/* A process gone leaves a stale socket to look for in our own places. */
	long euid = process_euid(pid);
	uid_t me = geteuid(), uid = euid < 0 ? me : (uid_t)euid;
	if (me != 0 && me != uid) {
		snprintf(refusal, sizeof(refusal), "pid %d runs as uid %u: only that uid and root "
			 "may talk to its agent", (int)pid, (unsigned int)uid);
		return -EACCES;
	}
	/* Its $XDG_RUNTIME_DIR (as it was at its exec), ours when we are its uid, the rest. */
	int nr = 0;
	const char *mine = me == uid ? getenv("XDG_RUNTIME_DIR") : NULL;
	if (process_env(pid, "XDG_RUNTIME_DIR", xdg, sizeof(xdg)))
		nr += xdg_dir(dirs[nr], xdg);
	if (mine && (!nr || strcmp(mine, xdg)))
		nr += xdg_dir(dirs[nr], mine);
	nr += agent_socket_dirs(uid, dirs + nr);
	snprintf(name, sizeof(name), "%d.sock", (int)pid);
	for (int i = 0; i < nr; i++) {
		struct stat st;
		snprintf(found, sizeof(found), "%.*s/%s", AGENT_PATH_MAX - 1, dirs[i], name);
		if (lstat(found, &st) || !S_ISSOCK(st.st_mode))
			continue;
		if (path)
			snprintf(path, len, "%s", found);
		int dirfd = agent_dir_open(dirs[i], uid, refusal, sizeof(refusal));
		if (dirfd < 0 && euid < 0)
			return -ESTALE;
		if (dirfd < 0)
			return dirfd == -ENOENT ? -ENOENT : -EPERM;
		if (euid < 0 || !agent_process_running(pid)) {
			/* Stale: removed only from a directory of our own. */
			int err = me == uid && !unlinkat(dirfd, name, 0) ? -ESRCH : -ESTALE;
			close(dirfd);
			return err;
		}
		int fd = connect_at(dirfd, name);
		close(dirfd);
		if (fd >= 0 && !peer_is(fd, pid, uid, found)) {
			close(fd);
			return -EPERM;
		}
		return fd;
	}
	return euid < 0 ? -ESRCH : -ENOENT;
}

/* Does @opts (SLUB_OPTIONS, '-' made '_') turn the agent on?  The last setting wins. */
static bool options_want_agent(char *opts)
{
	bool on = false;
	for (char *p = opts; *p; p++)
		*p = *p == '-' ? '_' : *p;
	for (const char *p = opts; (p = strstr(p, "slub_agent")); p += 10) {
		if (p != opts && p[-1] != ' ' && p[-1] != '\t')
			continue;
		if (p[10] == 0 || p[10] == ' ' || p[10] == '\t')
			on = true;
		else if (p[10] == '=')
			on = strchr("1yY", p[11]) || !strncmp(p + 11, "on", 2);
	}
	return on;
}

/*
 * Seconds since @pid started, or a large number.  "Now" is /proc/uptime,
 * from the same clock as /proc/PID/stat's start time: CLOCK_BOOTTIME is
 * that clock on Linux but not under every sandbox (gVisor's runs seconds
 * apart, which made every process look old).
 */
static double process_age(pid_t pid)
{
	char buf[1024], up[64];
	unsigned long long start;
	double now;
	if (read_proc(pid, "stat", buf, sizeof(buf)) <= 0 || !strrchr(buf, ')'))
		return 1e9;
	/* Field 22; the fields after the command's ')' start at 3. */
	const char *p = strrchr(buf, ')') + 1;
	for (int field = 2; field < 21 && p; field++)
		p = strchr(p + 1, ' ');
	int fd = open("/proc/uptime", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, up, sizeof(up) - 1);
	if (fd >= 0)
		close(fd);
	if (n <= 0 || !p || sscanf(p, " %llu", &start) != 1)
		return 1e9;
	up[n] = 0;
	if (sscanf(up, "%lf", &now) != 1)
		return 1e9;
	long hz = sysconf(_SC_CLK_TCK);
	return now - (double)start / (double)hz;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

int agent_connect_wait_for(pid_t pid, char *path, size_t len, double at_least)
{
	double waited = 0;
	for (;;) {
		int fd = agent_connect(pid, path, len);
		if (fd >= 0 || (fd != -ENOENT && fd != -ECONNREFUSED))
			return fd;
		/*
		 * A process just started (`prog & slabinfo -p $!`: maybe not
		 * even exec'd yet) or an exec under way: its agent comes soon.
		 */
		char opts[1024];
		bool wants = process_env(pid, "SLUB_OPTIONS", opts, sizeof(opts)) &&
			     options_want_agent(opts);
		if (!agent_process_running(pid) ||
		    (waited >= AGENT_WAIT_S && !wants && process_age(pid) >= AGENT_WAIT_S) ||
		    (waited >= at_least && process_age(pid) >= AGENT_WAIT_S &&
		     (!wants || waited >= AGENT_WAIT_S)))
			return fd;
		sleep_ms(20);
		waited += 0.02;
	}
}

int agent_connect_wait(pid_t pid, char *path, size_t len)
{
	return agent_connect_wait_for(pid, path, len, 0);
}

void agent_explain(const char *tool, pid_t pid, int err, const char *path)
{
	char opts[1024], maps[1 << 16];
	switch (err) {
	case -ESRCH:
	case -ESTALE:
		if (path && *path)
			fprintf(stderr, "%s: pid %d: no such process (its stale socket %s %s)\n", tool,
				(int)pid, path, err == -ESRCH ? "is removed" :
				"is left: its directory is not ours to change");
		else
			fprintf(stderr, "%s: pid %d: no such process\n", tool, (int)pid);
		return;
	case -EPERM:
	case -EACCES:
		fprintf(stderr, "%s: pid %d: refused, nothing sent: %s\n", tool, (int)pid,
			agent_refusal());
		return;
	case -ENOENT:
		break;
	default:
		fprintf(stderr, "%s: pid %d: cannot reach its agent at %s: %s\n", tool, (int)pid,
			path && *path ? path : "its socket", strerror(-err));
		return;
	}
	/* No socket: say what can be told of the process. */
	ssize_t n = read_proc(pid, "maps", maps, sizeof(maps));
	bool env = process_env(pid, "SLUB_OPTIONS", opts, sizeof(opts));
	if (n > 0 && !strstr(maps, "libslub"))
		fprintf(stderr, "%s: pid %d does not run libslub (none in /proc/%d/maps): start it "
			"under slubrun --fs, or with LD_PRELOAD=libslub-malloc.so and "
			"SLUB_OPTIONS=slub_agent\n", tool, (int)pid, (int)pid);
	else if (env && options_want_agent(opts))
		fprintf(stderr, "%s: pid %d has no libslub agent although its SLUB_OPTIONS asks for "
			"one: none listened within %d s (its stderr may say why)\n", tool, (int)pid,
			AGENT_WAIT_S);
	else
		fprintf(stderr, "%s: pid %d has no libslub agent: run it with SLUB_OPTIONS=slub_agent "
			"(or slubrun --fs)\n", tool, (int)pid);
}

/* All @n bytes sent (@out) or received; -ECONNRESET if the connection broke. */
static int transfer(int fd, char *p, size_t n, bool out)
{
	while (n) {
		ssize_t k = out ? send(fd, p, n, MSG_NOSIGNAL) : recv(fd, p, n, 0);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -ECONNRESET;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

static int send_all(int fd, const char *p, size_t n)
{
	return transfer(fd, (char *)p, n, true);
}

static int recv_all(int fd, char *p, size_t n)
{
	return transfer(fd, p, n, false);
}

/*
 * "STATUS\tLEN\n" read strictly: STATUS 0 or -1..-4095 (an errno), LEN
 * digits within AGENT_ANSWER_MAX and 0 unless STATUS is.  False for
 * anything else: the server is not speaking the protocol.
 */
static bool parse_head(const char *head, int *status, size_t *len)
{
	const char *p = head;
	bool neg = *p == '-';
	unsigned long st = 0, n = 0;
	p += neg;
	if (*p < '0' || *p > '9')
		return false;
	for (; *p >= '0' && *p <= '9'; p++)
		if ((st = st * 10 + (unsigned long)(*p - '0')) > 4095)
			return false;
	if (*p++ != '\t' || (st && !neg) || (neg && !st) || *p < '0' || *p > '9')
		return false;
	for (; *p >= '0' && *p <= '9'; p++)
		if ((n = n * 10 + (unsigned long)(*p - '0')) > AGENT_ANSWER_MAX)
			return false;
	if (*p != '\n' || p[1] || (st && n))
		return false;
	*status = -(int)st;
	*len = n;
	return true;
}

int agent_call(int fd, const char *line, const char *payload, size_t payload_len, char **body,
	       size_t *body_len)
{
	char head[64];
	size_t n = 0, len;
	int status;
	*body = NULL;
	*body_len = 0;
	if (send_all(fd, line, strlen(line)) || send_all(fd, "\n", 1) ||
	    (payload_len && send_all(fd, payload, payload_len)))
		return -ECONNRESET;
	/* "STATUS\tLEN\n": a byte at a time, the body then in one piece. */
	do {
		if (n + 1 >= sizeof(head))
			return -EPROTO;
		if (recv_all(fd, head + n, 1))
			return -ECONNRESET;
	} while (head[n++] != '\n');
	head[n] = 0;
	if (!parse_head(head, &status, &len))
		return -EPROTO;
	char *b = malloc(len + 1);
	if (!b)
		return -ENOMEM;
	if (recv_all(fd, b, len)) {
		free(b);
		return -ECONNRESET;
	}
	b[len] = 0;
	*body = b;
	*body_len = len;
	return status;
}
