// SPDX-License-Identifier: MIT
/*
 * test_agent_client.c - the tools' side of the agent's socket
 * (tools/agent_client.c) against servers that are not the agent: an
 * answer outside the protocol is refused before its status or length is
 * used; a socket whose listener is another pid, or in a directory another
 * uid owns or may write to, gets not one byte; a stale socket is named
 * where it was.
 */
#define _GNU_SOURCE
#include "check.h"

#include <errno.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "agent/agent_proto.h"
#include "agent_client.h"

static char base[64], dir[80];

/* agent_call's result when the server's whole answer is @answer (@len bytes). */
static int answered(const char *answer, size_t len, char **body)
{
	int sv[2];
	size_t n;
	CHECK(!socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	CHECK_EQ(write(sv[1], answer, len), (ssize_t)len);
	shutdown(sv[1], SHUT_WR);
	int st = agent_call(sv[0], "read\tc\ta", NULL, 0, body, &n);
	close(sv[0]);
	close(sv[1]);
	return st;
}

static void answers_outside_the_protocol(void)
{
	static const char *const bad[] = {
		"5\t0\n",			/* a positive status: taken for a byte count */
		"1000000\t0\n",
		"-2\t5\nhello",			/* an error with a body */
		"-0\t0\n",
		"-4096\t0\n",			/* no errno */
		"99999999999999999999\t0\n",
		"0\t4194305\n",			/* past AGENT_ANSWER_MAX */
		"0\t-1\n",
		" 0\t1\nx",
		"0\t1 \nx",
		"0\n",
		"x\t0\n",
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		char *body = NULL;
		int st = answered(bad[i], strlen(bad[i]), &body);
		if (st != -EPROTO)
			fprintf(stderr, "   answer '%s': status %d\n", bad[i], st);
		CHECK_EQ(st, -EPROTO);
		CHECK(!body);
		free(body);
	}
	/* A head that never ends is refused, not read for ever. */
	char endless[100];
	memset(endless, '1', sizeof(endless));
	char *body;
	CHECK_EQ(answered(endless, sizeof(endless), &body), -EPROTO);
	/* The protocol's own answers. */
	CHECK_EQ(answered("0\t3\nabc", 7, &body), 0);
	CHECK(body && !strcmp(body, "abc"));
	free(body);
	CHECK_EQ(answered("-2\t0\n", 5, &body), -ENOENT);
	free(body);
	CHECK_EQ(answered("0\t3\nab", 6, &body), -ECONNRESET);
}

/* A listening socket at @path, bound by this process (accept does not wait). */
static int plant(const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	CHECK(fd >= 0 && !bind(fd, (struct sockaddr *)&sun, sizeof(sun)) && !listen(fd, 4));
	return fd;
}

/* Bytes the client sent on the connection pending at @lfd (-1: it never connected). */
static long bytes_sent(int lfd)
{
	int c = accept4(lfd, NULL, NULL, SOCK_NONBLOCK);
	if (c < 0)
		return -1;
	char buf[256];
	ssize_t n = recv(c, buf, sizeof(buf), 0);
	close(c);
	return n < 0 ? 0 : n;
}

static pid_t sleeper(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		pause();
		_exit(0);
	}
	return pid;
}

static void reap(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* A socket for a live pid, listened on by another process (us). */
static void other_listener_gets_nothing(void)
{
	char path[AGENT_PATH_MAX], found[AGENT_PATH_MAX];
	pid_t pid = sleeper();
	snprintf(path, sizeof(path), "%s/%d.sock", dir, (int)pid);
	int lfd = plant(path);
	int fd = agent_connect(pid, found, sizeof(found));
	CHECK_EQ(fd, -EPERM);
	if (fd >= 0) {
		char *body;
		size_t n;
		agent_call(fd, "caches", NULL, 0, &body, &n);	/* as a tool would go on */
		free(body);
		close(fd);
	}
	CHECK_EQ(bytes_sent(lfd), 0);
	CHECK(strstr(agent_refusal(), "not its agent"));
	CHECK(!strcmp(found, path));
	close(lfd);
	unlink(path);
	reap(pid);
}

/* The directory: another uid's, writable by others, a symlink: nothing connects. */
static void unsafe_directory_refused(void)
{
	char path[AGENT_PATH_MAX], link[AGENT_PATH_MAX + 8];
	pid_t pid = sleeper();
	snprintf(path, sizeof(path), "%s/%d.sock", dir, (int)pid);
	int lfd = plant(path);
	CHECK(!chmod(dir, 0777));
	CHECK_EQ(agent_connect(pid, NULL, 0), -EPERM);
	CHECK(strstr(agent_refusal(), "writable by other users"));
	CHECK_EQ(bytes_sent(lfd), -1);
	CHECK(!chmod(dir, 0700));
	if (geteuid() == 0) {
		CHECK(!chown(dir, 65534, 65534));
		CHECK_EQ(agent_connect(pid, NULL, 0), -EPERM);
		CHECK(strstr(agent_refusal(), "owned by another uid"));
		CHECK_EQ(bytes_sent(lfd), -1);
		CHECK(!chown(dir, 0, 0));
	} else {
		fprintf(stderr, "   (another owner skipped: not root, cannot chown)\n");
	}
	/* $XDG_RUNTIME_DIR/slub a symlink to a good directory: not followed. */
	snprintf(link, sizeof(link), "%s.real", dir);
	CHECK(!rename(dir, link) && !symlink(link, dir));
	CHECK_EQ(agent_connect(pid, NULL, 0), -EPERM);
	CHECK(strstr(agent_refusal(), "not a directory"));
	CHECK_EQ(bytes_sent(lfd), -1);
	CHECK(!unlink(dir) && !rename(link, dir));
	close(lfd);
	unlink(path);
	reap(pid);
}

/* A killed process's socket is reported at its own path, and removed. */
static void stale_socket_named_where_it_was(void)
{
	char path[AGENT_PATH_MAX], found[AGENT_PATH_MAX];
	pid_t pid = sleeper();
	reap(pid);
	snprintf(path, sizeof(path), "%s/%d.sock", dir, (int)pid);
	close(plant(path));
	CHECK_EQ(agent_connect(pid, found, sizeof(found)), -ESRCH);
	CHECK(!strcmp(found, path));
	struct stat st;
	CHECK(lstat(path, &st) && errno == ENOENT);
}

int main(void)
{
	snprintf(base, sizeof(base), "/tmp/test_agent_client-XXXXXX");
	if (!mkdtemp(base))
		return 1;
	snprintf(dir, sizeof(dir), "%s/slub", base);
	CHECK(!mkdir(dir, 0700));
	setenv("XDG_RUNTIME_DIR", base, 1);
	RUN(answers_outside_the_protocol);
	RUN(other_listener_gets_nothing);
	RUN(unsafe_directory_refused);
	RUN(stale_socket_named_where_it_was);
	remove_tree(base);
	return check_done();
}
