// SPDX-License-Identifier: MIT
/*
 * agent_client.c - connect to a libslub process's agent and exchange
 * requests and answers (agent_client.h).  The tools' side: plain libc.
 */
#define _GNU_SOURCE
#include "agent_client.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "agent/agent_proto.h"

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

int agent_connect(pid_t pid, char *path, size_t len)
{
	char buf[AGENT_PATH_MAX];
	int err = agent_socket_find(pid, buf, sizeof(buf));
	if (path)	/* the stale one removed, for -ESRCH */
		snprintf(path, len, "%s", err == -ENOENT ? "" : buf);
	return err ? err : agent_connect_path(buf);
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

int agent_call(int fd, const char *line, const char *payload, size_t payload_len, char **body,
	       size_t *body_len)
{
	char head[64];
	size_t n = 0;
	*body = NULL;
	*body_len = 0;
	if (send_all(fd, line, strlen(line)) || send_all(fd, "\n", 1) ||
	    (payload_len && send_all(fd, payload, payload_len)))
		return -ECONNRESET;
	/* "STATUS\tLEN\n": a byte at a time, the body then in one piece. */
	do {
		if (n + 1 >= sizeof(head) || recv_all(fd, head + n, 1))
			return -ECONNRESET;
	} while (head[n++] != '\n');
	head[n] = 0;
	long status;
	unsigned long len;
	if (sscanf(head, "%ld\t%lu", &status, &len) != 2 || len > AGENT_ANSWER_MAX)
		return -ECONNRESET;
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
	return (int)status;
}
