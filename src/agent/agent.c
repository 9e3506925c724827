// SPDX-License-Identifier: MIT
/*
 * agent.c - slub_agent: one thread that answers the attribute API
 * (slub_for_each_cache, slub_attr_read, slub_attr_write) over a unix
 * socket named after the process, so that slabinfo -p and slubfs, which
 * run outside it, see and steer its caches live (agent_proto.h: where,
 * and what is said).
 *
 * Kept tiny (TRAPS.md, "Live statistics"): off unless the option asks;
 * all signals blocked; its buffers are one mapping of its own, never the
 * heap it inspects; no allocator lock is held while it waits (poll and
 * send come after the cache walk that read the answer).  It wakes every
 * 2 s to see that its fds are still its own (a program may close them).  No
 * read reaches the heap: alloc_calls and free_calls sum their sites in a
 * mapping of their own and heap-sort them in place (slab_track.c), since
 * glibc's qsort mallocs a merge buffer.
 *
 * Started where a thread may be made (the constructor when SLUB_OPTIONS
 * names it, slub_setup(), a forked child's handler), it listens once the
 * allocator runs: a request must not start it before slub_setup() could.
 * A forked child has no agent thread; the fork child handler closes the
 * parent's sockets (they stay: the parent still listens) and starts the
 * child's own.  The socket is removed at exit; one left by a killed
 * process is removed by the next agent to start in that directory.
 *
 * Who is answered: the peer's uid (SO_PEERCRED at accept) must be our
 * effective uid or root, and is checked again before each request against
 * the euid then in force, so that a program changing its euid never
 * answers a connection its new identity would refuse.
 */
#define _GNU_SOURCE
#include "agent/agent.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <slub.h>
#include "agent/agent_proto.h"
#include "base/options.h"
#include "base/report.h"
#include "base/start.h"
#include "slab/debug/leak_live.h"
#include "stack/stacktrace.h"

#define AGENT_CLIENTS 8

struct agent_client {
	int fd;				/* -1: a free slot */
	ino_t ino;			/* its socket's, to know it is still ours */
	uid_t uid;			/* its peer's, from SO_PEERCRED at accept */
	size_t len;			/* bytes in @in */
	char in[AGENT_REQUEST_MAX + AGENT_WRITE_MAX];
};

/* Mapped once per process; a forked child keeps its copy. */
struct agent_mem {
	struct agent_client clients[AGENT_CLIENTS];
	char answer[AGENT_ANSWER_MAX];
};

static pthread_mutex_t agent_lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t agent_pid;			/* the process whose thread runs */
static int agent_listen_fd = -1;
static char agent_path[AGENT_PATH_MAX];	/* set before the fd, under agent_lock's start */
static struct agent_mem *agent_mem;
static ino_t agent_listen_ino;
static bool agent_exiting;		/* set by agent_at_exit before it looks */
/*
 * Held from the agent_exiting test through the bind to the fd's store, and
 * by agent_at_exit: either the name is bound and stored first and the
 * destructor removes it, or the thread sees the flag and binds nothing.
 * (Without it a bind just after the destructor looked left the name: the
 * thread died in exit_group before its own test.)  Nothing else is taken
 * under it, and it is never held across a poll.
 */
static pthread_mutex_t agent_bind_lock = PTHREAD_MUTEX_INITIALIZER;

bool slub_agent_wanted(void)
{
	return slub_opt(agent);
}

/* ---- answers ---------------------------------------------------------------- */

/* An answer being built in agent_mem->answer. */
struct out {
	char *buf;
	size_t size, len;
};

static void put(struct out *o, const char *s)
{
	size_t n = strlen(s);
	if (o->len + n <= o->size)
		memcpy(o->buf + o->len, s, n);
	o->len += n;
}

static int list_cache(struct kmem_cache *s, void *arg)
{
	struct out *o = arg;
	const char *alias;
	put(o, slub_cache_id(s));
	put(o, "\t");
	put(o, slub_cache_name(s));
	for (unsigned int i = 0; (alias = slub_cache_alias(s, i)); i++) {
		put(o, "\t");
		put(o, alias);
	}
	put(o, "\n");
	return 0;
}

/* One read or write of one cache's attribute, done inside the cache walk. */
struct attr_op {
	const char *cache, *attr, *val;	/* val: NULL for a read */
	size_t val_len;
	struct out *o;
	ssize_t ret;
};

static bool answers_to(struct kmem_cache *s, const char *name)
{
	const char *alias;
	if (!strcmp(slub_cache_id(s), name) || !strcmp(slub_cache_name(s), name))
		return true;
	for (unsigned int i = 0; (alias = slub_cache_alias(s, i)); i++)
		if (!strcmp(alias, name))
			return true;
	return false;
}

/* Under the walk's hold of the cache list: the cache cannot be destroyed meanwhile. */
static int do_attr(struct kmem_cache *s, void *arg)
{
	struct attr_op *op = arg;
	if (!answers_to(s, op->cache))
		return 0;
	if (op->val)
		op->ret = slub_attr_write(s, op->attr, op->val, op->val_len);
	else
		op->ret = slub_attr_read(s, op->attr, op->o->buf, op->o->size);
	return 1;
}

/* The answer's status and length: "STATUS\tLEN\n", then the bytes. */
static bool send_answer(int fd, long status, const char *body, size_t len)
{
	char head[48];
	int n = snprintf(head, sizeof(head), "%ld\t%zu\n", status, len);
	struct iovec iov[2] = { { head, (size_t)n }, { (void *)body, len } };
	struct msghdr msg = { .msg_iov = iov, .msg_iovlen = 2 };
	while (iov[0].iov_len + iov[1].iov_len) {
		ssize_t sent = sendmsg(fd, &msg, MSG_NOSIGNAL);
		if (sent < 0 && errno == EINTR)
			continue;
		if (sent <= 0)
			return false;	/* gone, or stuck past SO_SNDTIMEO */
		for (int i = 0; i < 2; i++) {
			size_t k = (size_t)sent < iov[i].iov_len ? (size_t)sent : iov[i].iov_len;
			iov[i].iov_base = (char *)iov[i].iov_base + k;
			iov[i].iov_len -= k;
			sent -= (ssize_t)k;
		}
	}
	return true;
}

/* Split @line at tabs into at most @max fields; returns how many. */
static int fields(char *line, char **f, int max)
{
	int n = 0;
	f[n++] = line;
	for (char *p = line; *p && n < max; p++)
		if (*p == '\t') {
			*p = 0;
			f[n++] = p + 1;
		}
	return n;
}

/*
 * Answer one request of @line (its newline cut), @payload the bytes a
 * write brought.  False if the client must go.
 */
static bool answer(int fd, char *line, const char *payload, size_t payload_len)
{
	struct out o = { agent_mem->answer, sizeof(agent_mem->answer), 0 };
	char *f[5];
	int n = fields(line, f, 5);
	long status = 0;

	if (n == 1 && !strcmp(f[0], "caches")) {
		slub_for_each_cache(list_cache, &o);
	} else if (n == 1 && !strcmp(f[0], "attrs")) {
		unsigned int mode;
		const char *name;
		for (unsigned int i = 0; (name = slub_attr_name(i, &mode)); i++) {
			char m[8];
			snprintf(m, sizeof(m), "%o\t", mode);
			put(&o, m);
			put(&o, name);
			put(&o, "\n");
		}
	} else if (n == 1 && !strcmp(f[0], "leaks")) {
		o.len = slub_leak_scan_live(o.buf, o.size);
	} else if ((n == 3 && !strcmp(f[0], "read")) || (n == 4 && !strcmp(f[0], "write"))) {
		struct attr_op op = { f[1], f[2], payload, payload_len, &o, -ENOENT };
		unsigned long errors = slub_errors();
		/* Ready the unwinder outside the walk: it may allocate. */
		if (payload && !strcmp(op.attr, "store_user") && payload_len && payload[0] == '1')
			stack_trace_prime();
		slub_for_each_cache(do_attr, &op);
		if (op.ret < 0) {
			status = op.ret;
		} else if (!payload) {
			o.len = (size_t)op.ret;
		} else if (!strcmp(op.attr, "validate")) {
			/* What it found goes to the process's reports: the tool gets the count. */
			char count[24];
			snprintf(count, sizeof(count), "%lu\n", slub_errors() - errors);
			put(&o, count);
		}
	} else {
		status = -EINVAL;
	}
	if (o.len > o.size) {
		status = -ENOSPC;
		o.len = 0;
	}
	return send_answer(fd, status, o.buf, status ? 0 : o.len);
}

/* ---- clients ------------------------------------------------------------------ */

/*
 * Is @fd still the socket we opened?  A daemon closing every fd closes
 * ours too, and the number may then be the program's: never read from it
 * or close it then.
 */
static bool still_ours(int fd, ino_t ino)
{
	struct stat st;
	return !fstat(fd, &st) && S_ISSOCK(st.st_mode) && st.st_ino == ino;
}

static ino_t ino_of(int fd)
{
	struct stat st;
	return fstat(fd, &st) ? 0 : st.st_ino;
}

static void drop(struct agent_client *c)
{
	close(c->fd);
	c->fd = -1;
	c->len = 0;
}

/*
 * Only the process's effective uid and root: the attributes steer the
 * process.  Asked again at each request, of the euid then in force: a
 * program that changes its euid (a daemon dropping root, a set-user-ID
 * one switching back and forth) answers a connection only while the
 * connection's uid is its euid or root.
 */
static bool may_ask(uid_t uid)
{
	return uid == geteuid() || uid == 0;
}

static void accept_client(int lfd)
{
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return;
	struct ucred cred;
	socklen_t len = sizeof(cred);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) || !may_ask(cred.uid)) {
		close(fd);
		return;
	}
	/* A client that stops reading is dropped, not waited for. */
	struct timeval tv = { 2, 0 };
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	for (int i = 0; i < AGENT_CLIENTS; i++)
		if (agent_mem->clients[i].fd < 0) {
			agent_mem->clients[i].fd = fd;
			agent_mem->clients[i].ino = ino_of(fd);
			agent_mem->clients[i].uid = cred.uid;
			agent_mem->clients[i].len = 0;
			return;
		}
	close(fd);	/* all slots taken */
}

/* Read what came and answer every whole request in it. */
static void client_input(struct agent_client *c)
{
	ssize_t n = recv(c->fd, c->in + c->len, sizeof(c->in) - c->len, MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		drop(c);
		return;
	}
	c->len += (size_t)n;
	for (;;) {
		char *nl = memchr(c->in, '\n', c->len);
		if (!nl) {
			if (c->len >= AGENT_REQUEST_MAX)
				drop(c);	/* no request is that long */
			return;
		}
		if (!may_ask(c->uid)) {
			drop(c);	/* the euid changed since the accept */
			return;
		}
		size_t line_len = (size_t)(nl - c->in) + 1, payload_len = 0;
		*nl = 0;
		const char *payload = NULL;
		if (!strncmp(c->in, "write\t", 6)) {
			const char *tab = strrchr(c->in, '\t');
			char *end;
			unsigned long v = strtoul(tab + 1, &end, 10);
			if (*end || v > AGENT_WRITE_MAX) {
				drop(c);
				return;
			}
			if (c->len < line_len + v) {
				*nl = '\n';	/* whole next time */
				return;
			}
			payload = c->in + line_len;
			payload_len = v;
		}
		if (!answer(c->fd, c->in, payload, payload_len)) {
			drop(c);
			return;
		}
		size_t used = line_len + payload_len;
		memmove(c->in, c->in + used, c->len - used);
		c->len -= used;
	}
}

/* ---- the thread ------------------------------------------------------------------ */

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { 0, (long)ms * 1000000L };
	while (nanosleep(&ts, &ts))
		;
}

/* The listening socket; -errno, and what was wrong in @why. */
static int agent_listen(char *why, size_t why_len)
{
	char dir[AGENT_PATH_MAX];
	int err = agent_socket_dir(dir, sizeof(dir), true, why, why_len);
	if (err == -EPERM)
		return err;
	if (err) {
		snprintf(why, why_len, "%s: %s", dir, strerror(-err));
		return err;
	}
	agent_clean_stale(dir);
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	/* agent_socket_dir() left room for the name. */
	if (snprintf(sun.sun_path, sizeof(sun.sun_path), "%.80s/%d.sock", dir, (int)getpid()) >=
	    (int)sizeof(sun.sun_path)) {
		snprintf(why, why_len, "%s: %s", dir, strerror(ENAMETOOLONG));
		return -ENAMETOOLONG;
	}
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(why, why_len, "socket: %s", strerror(errno));
		return -errno;
	}
	pthread_mutex_lock(&agent_bind_lock);
	/* The process is exiting (agent_at_exit): the name would outlive it. */
	if (__atomic_load_n(&agent_exiting, __ATOMIC_SEQ_CST)) {
		pthread_mutex_unlock(&agent_bind_lock);
		close(fd);
		snprintf(why, why_len, "the process is exiting");
		return -ECANCELED;
	}
	/* Our pid's name: left by this process before an exec, or by a dead one. */
	int r = bind(fd, (struct sockaddr *)&sun, sizeof(sun));
	if (r && errno == EADDRINUSE) {
		unlink(sun.sun_path);
		r = bind(fd, (struct sockaddr *)&sun, sizeof(sun));
	}
	if (r)
		goto fail;
	chmod(sun.sun_path, 0600);
	if (listen(fd, AGENT_CLIENTS)) {
		err = -errno;
		unlink(sun.sun_path);
		errno = -err;
		goto fail;
	}
	memcpy(agent_path, sun.sun_path, sizeof(agent_path));
	agent_listen_ino = ino_of(fd);
	__atomic_store_n(&agent_listen_fd, fd, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&agent_bind_lock);
	return 0;
fail:
	err = -errno;
	pthread_mutex_unlock(&agent_bind_lock);
	snprintf(why, why_len, "%s: %s", sun.sun_path, strerror(-err));
	close(fd);
	return err;
}

static void *agent_main(void *arg)
{
	(void)arg;
	for (unsigned int ms = 1; !__atomic_load_n(&slub_started, __ATOMIC_ACQUIRE);
	     ms = ms < 64 ? 2 * ms : ms)
		sleep_ms(ms);
	/* SLUB_OPTIONS, applied at start-up after slub_setup(), may have turned it off. */
	if (!slub_agent_wanted())
		return NULL;
	char why[AGENT_PATH_MAX + 96];
	int err = agent_listen(why, sizeof(why));
	if (err) {
		/* A process that ends before its agent listens is no error (seq, a shell's child). */
		if (err != -ECANCELED)
			slub_warn("slub_agent: no socket (%s); slabinfo -p and slubfs cannot see "
				  "this process", why);
		return NULL;
	}
	int lfd = agent_listen_fd;
	struct pollfd pfd[1 + AGENT_CLIENTS];
	int slot[1 + AGENT_CLIENTS];
	for (;;) {
		int nfds = 1;
		pfd[0] = (struct pollfd){ lfd, POLLIN, 0 };
		for (int i = 0; i < AGENT_CLIENTS; i++)
			if (agent_mem->clients[i].fd >= 0) {
				slot[nfds] = i;
				pfd[nfds++] = (struct pollfd){ agent_mem->clients[i].fd, POLLIN, 0 };
			}
		/*
		 * Waits here, and only here, holding nothing; every 2 s it looks
		 * whether its fds are still its own (below).
		 */
		if (poll(pfd, (nfds_t)nfds, 2000) < 0) {
			if (errno == EINTR)
				continue;
			return NULL;
		}
		/*
		 * An fd the program closed (POLLNVAL, or its number another
		 * file's now) is forgotten, never closed; without the listening
		 * socket the agent ends.  (A poll under way follows the number,
		 * not the file: only the timeout brings it back then.)
		 */
		for (int i = 1; i < nfds; i++) {
			struct agent_client *c = &agent_mem->clients[slot[i]];
			if ((pfd[i].revents & POLLNVAL) || !still_ours(c->fd, c->ino))
				*c = (struct agent_client){ .fd = -1 };
			else if (pfd[i].revents)
				client_input(c);
		}
		if ((pfd[0].revents & POLLNVAL) || !still_ours(lfd, agent_listen_ino)) {
			if (__atomic_exchange_n(&agent_listen_fd, -1, __ATOMIC_ACQ_REL) >= 0)
				unlink(agent_path);
			return NULL;
		}
		if (pfd[0].revents & POLLIN)
			accept_client(lfd);
	}
}

void slub_agent_start(void)
{
	pthread_mutex_lock(&agent_lock);
	pid_t pid = getpid();
	if (agent_pid != pid) {
		if (!agent_mem) {
			void *p = mmap(NULL, sizeof(*agent_mem), PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
			agent_mem = p == MAP_FAILED ? NULL : p;
		}
		/* A fork while the thread holds a lock needs our handlers: now, not lazily. */
		slub_fork_handlers_register(true);
		pthread_attr_t attr;
		pthread_t thread;
		sigset_t all, old;
		int err = ENOMEM;
		if (agent_mem) {
			for (int i = 0; i < AGENT_CLIENTS; i++)
				agent_mem->clients[i].fd = -1;
			/* Signals are the program's: the thread takes none. */
			sigfillset(&all);
			pthread_sigmask(SIG_SETMASK, &all, &old);
			pthread_attr_init(&attr);
			pthread_attr_setstacksize(&attr, 256 << 10);
			err = pthread_create(&thread, &attr, agent_main, NULL);
			pthread_attr_destroy(&attr);
			pthread_sigmask(SIG_SETMASK, &old, NULL);
		}
		if (err) {
			slub_warn("slub_agent: cannot start the thread (error %d)", err);
		} else {
			pthread_setname_np(thread, "slub-agent");
			pthread_detach(thread);
			agent_pid = pid;
		}
	}
	pthread_mutex_unlock(&agent_lock);
}

/*
 * In a forked child, after the allocator's locks are made new (FORK_AGENT
 * is the outermost level: its child hook runs last): drop the parent's
 * socket (without removing it: it is still the parent's) and start this
 * process's own agent if the option is on.
 */
static void agent_fork_child(void)
{
	pthread_mutex_init(&agent_lock, NULL);
	pthread_mutex_init(&agent_bind_lock, NULL);
	if (!agent_pid)
		return;
	/* The parent's sockets: closed here, not removed (the parent still listens). */
	int fd = __atomic_exchange_n(&agent_listen_fd, -1, __ATOMIC_ACQ_REL);
	if (fd >= 0)
		close(fd);
	for (int i = 0; agent_mem && i < AGENT_CLIENTS; i++)
		if (agent_mem->clients[i].fd >= 0)
			drop(&agent_mem->clients[i]);
	agent_pid = 0;
	agent_path[0] = 0;
	if (slub_agent_wanted())
		slub_agent_start();
}
slub_initcall(agent_initcall, .fork_level = FORK_AGENT, .fork_child = agent_fork_child);

/*
 * At exit the socket goes; the thread may still be answering meanwhile, as
 * any thread runs on.  One not listening yet may be binding now (it sees
 * agent_exiting after its bind, or its bind came first and the name is
 * removed here), and a name of our pid may be left by this process's image
 * before an exec (a forked shell's agent, then the program it became,
 * gone before its own agent listened): removed too.
 */
__attribute__((destructor)) static void agent_at_exit(void)
{
	if (agent_pid != getpid())
		return;
	__atomic_store_n(&agent_exiting, true, __ATOMIC_SEQ_CST);
	pthread_mutex_lock(&agent_bind_lock);
	if (__atomic_load_n(&agent_listen_fd, __ATOMIC_SEQ_CST) >= 0) {
		unlink(agent_path);
	} else {
		char dir[AGENT_PATH_MAX], path[AGENT_PATH_MAX + 16];
		struct stat st;
		if (!agent_socket_dir(dir, sizeof(dir), false, NULL, 0)) {
			snprintf(path, sizeof(path), "%.*s/%d.sock", AGENT_PATH_MAX - 1, dir,
				 (int)getpid());
			if (!lstat(path, &st) && S_ISSOCK(st.st_mode))
				unlink(path);
		}
	}
	pthread_mutex_unlock(&agent_bind_lock);
}
