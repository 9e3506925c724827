// SPDX-License-Identifier: MIT
/*
 * fuzz/agent.c - libFuzzer target: slub_agent's protocol (agent/agent.c,
 * agent_proto.h) as a hostile peer sees it.  The process runs its own
 * agent (slub_agent, in a private $XDG_RUNTIME_DIR); each input is sent
 * whole on a new connection, then the write side is shut: requests,
 * writes and their payloads, partial lines, huge lengths, any bytes.  The
 * agent must answer in its framing ("STATUS\tLEN\n", LEN bytes, no body
 * after an error), at most once per line, and close the connection within
 * seconds; the caches it steered must still validate with no report.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <slub.h>
#include "agent/agent_proto.h"
#include "fuzz.h"

/* How long the agent may take over one input before it counts as hung. */
#define DEADLINE_MS 10000

static char base_dir[64], sock_path[AGENT_PATH_MAX];
static struct kmem_cache *caches[3];

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int connect_agent(void)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", sock_path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The agent's answers, parsed as they come: a head line, then its body. */
struct answers {
	char head[64];
	size_t head_len;
	size_t body_left;	/* bytes of the current body still to come */
	unsigned long count;
};

static void answer_bytes(struct answers *a, const char *p, size_t n)
{
	while (n) {
		if (a->body_left) {
			size_t k = n < a->body_left ? n : a->body_left;
			a->body_left -= k;
			p += k;
			n -= k;
			continue;
		}
		char c = *p++;
		n--;
		if (c != '\n') {
			if (a->head_len == sizeof(a->head) - 1)
				fuzz_fail("an answer's head line is longer than %zu bytes", a->head_len);
			a->head[a->head_len++] = c;
			continue;
		}
		a->head[a->head_len] = 0;
		a->head_len = 0;
		long status;
		unsigned long len;
		int used = 0;
		if (sscanf(a->head, "%ld\t%lu%n", &status, &len, &used) != 2 || a->head[used])
			fuzz_fail("an answer's head is '%s', not STATUS\\tLEN", a->head);
		if (status > 0 || status < -4095 || (status && len) || len > AGENT_ANSWER_MAX)
			fuzz_fail("an answer's head is '%s'", a->head);
		a->body_left = len;
		a->count++;
	}
}

/* Remove the socket, its directory and ours (the agent's destructor comes after). */
static void clean_up(void)
{
	char dir[128];
	unlink(sock_path);
	snprintf(dir, sizeof(dir), "%s/slub", base_dir);
	rmdir(dir);
	rmdir(base_dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	snprintf(base_dir, sizeof(base_dir), "/tmp/fuzz_agent-XXXXXX");
	if (!mkdtemp(base_dir) || setenv("XDG_RUNTIME_DIR", base_dir, 1))
		abort();
	atexit(clean_up);
	if (slub_setup("slub_agent slub_report_file=/dev/null"))
		abort();
	/* What a peer may find: a plain cache, one with tracking, a merged one; objects in each. */
	caches[0] = kmem_cache_create("fuzz_plain", 200, 0, SLAB_NO_MERGE, NULL);
	caches[1] = kmem_cache_create("fuzz_tracked", 64, 0, SLAB_STORE_USER | SLAB_RED_ZONE, NULL);
	caches[2] = kmem_cache_create("fuzz_merged", 72, 0, 0, NULL);
	for (int c = 0; c < 3; c++)
		for (int i = 0; caches[c] && i < 50; i++)
			if (!kmem_cache_alloc(caches[c], GFP_KERNEL))
				abort();
	/* The agent listens once the allocator has started; wait for it. */
	snprintf(sock_path, sizeof(sock_path), "%s/slub/%d.sock", base_dir, (int)getpid());
	for (int i = 0; i < 3000; i++) {
		int fd;
		if ((fd = connect_agent()) >= 0) {
			close(fd);
			return 0;
		}
		usleep(10000);
	}
	fprintf(stderr, "fuzz agent: no agent socket after 30 s\n");
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned long errors = slub_errors();
	int fd = -1;
	/* Its 8 client slots free up as each earlier connection's close is seen. */
	for (int i = 0; fd < 0 && i < 1000; i++)
		if ((fd = connect_agent()) < 0)
			usleep(1000);
	if (fd < 0)
		fuzz_fail("cannot connect to the agent: %s", strerror(errno));

	struct answers a = { .count = 0 };
	size_t sent = 0;
	bool shut = false;
	long deadline = now_ms() + DEADLINE_MS;
	for (;;) {
		if (sent == size && !shut) {
			shutdown(fd, SHUT_WR);
			shut = true;
		}
		struct pollfd pfd = { fd, (short)(POLLIN | (shut ? 0 : POLLOUT)), 0 };
		long left = deadline - now_ms();
		if (left <= 0)
			fuzz_fail("the agent neither answered nor closed in %d ms (%zu of %zu bytes sent)",
				  DEADLINE_MS, sent, size);
		if (poll(&pfd, 1, (int)left) < 0 && errno != EINTR)
			fuzz_fail("poll: %s", strerror(errno));
		if (pfd.revents & POLLOUT && !shut) {
			ssize_t n = send(fd, data + sent, size - sent, MSG_NOSIGNAL);
			if (n > 0)
				sent += (size_t)n;
			else if (n < 0 && errno != EAGAIN && errno != EINTR)
				sent = size;	/* the agent dropped us: read what it said */
		}
		if (pfd.revents & (POLLIN | POLLHUP | POLLERR)) {
			char buf[65536];
			ssize_t n = recv(fd, buf, sizeof(buf), 0);
			if (n > 0)
				answer_bytes(&a, buf, (size_t)n);
			else if (n == 0 || (errno != EAGAIN && errno != EINTR))
				break;	/* closed (or reset) */
		}
	}
	close(fd);
	if (a.head_len || a.body_left)
		fuzz_fail("the last answer was cut: %zu head bytes, %zu body bytes missing", a.head_len,
			  a.body_left);
	unsigned long lines = 0;
	for (size_t i = 0; i < size; i++)
		lines += data[i] == '\n';
	if (a.count > lines)
		fuzz_fail("%lu answers to %lu lines", a.count, lines);
	for (int c = 0; c < 3; c++)
		if (caches[c] && slub_validate(caches[c]))
			fuzz_fail("cache %d did not validate clean", c);
	if (slub_errors() != errors)
		fuzz_fail("%lu reports during the exchange", slub_errors() - errors);
	return 0;
}
