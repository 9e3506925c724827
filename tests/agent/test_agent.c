// SPDX-License-Identifier: MIT
/*
 * test_agent.c - slub_agent from the outside, as slabinfo -p and slubfs
 * see it: the socket where agent_proto.h says and closed to others, the
 * caches, attributes and figures the attribute API gives, writes that take
 * effect, errors as -errno; a stale socket cleaned at start; a forked
 * child with its own agent (and a killed one's socket cleaned by the next);
 * 8 threads allocating while the tree is read in a loop.
 */
#define _GNU_SOURCE
#include "check.h"

#include <errno.h>
#include <pwd.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "agent/agent_proto.h"
#include "agent_client.h"

static char base_dir[64];	/* $XDG_RUNTIME_DIR */
static char dir[64];		/* $XDG_RUNTIME_DIR/slub */

static void sock_path(pid_t pid, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%d.sock", dir, (int)pid);
}

/* Connect to @pid's agent, waiting up to 30 s for it to listen (a loaded machine). */
static int connect_wait(pid_t pid)
{
	char path[AGENT_PATH_MAX];
	sock_path(pid, path, sizeof(path));
	for (int i = 0; i < 3000; i++) {
		int fd = agent_connect_path(path);
		if (fd >= 0)
			return fd;
		usleep(10000);
	}
	return -1;
}

/* The text of @req's answer (NULL on error); *status its status. */
static char *ask(int fd, const char *req, int *status)
{
	char *body;
	size_t len;
	*status = agent_call(fd, req, NULL, 0, &body, &len);
	return body;
}

static int write_attr(int fd, const char *cache, const char *attr, const char *val)
{
	char req[256], *body;
	size_t len;
	snprintf(req, sizeof(req), "write\t%s\t%s\t%zu", cache, attr, strlen(val));
	int st = agent_call(fd, req, val, strlen(val), &body, &len);
	free(body);
	return st;
}

/* Attribute @attr of @cache through the agent equals the API's reading. */
static void same_as_api(int fd, struct kmem_cache *s, const char *attr)
{
	char req[256], api[4096];
	int st;
	snprintf(req, sizeof(req), "read\t%s\t%s", slub_cache_id(s), attr);
	char *got = ask(fd, req, &st);
	ssize_t n = slub_attr_read(s, attr, api, sizeof(api));
	CHECK_EQ(st, n < 0 ? n : 0);
	if (got && n >= 0 && strcmp(got, api)) {
		fprintf(stderr, "   %s/%s: agent '%s', API '%s'\n", slub_cache_id(s), attr, got, api);
		CHECK(!"agent and API differ");
	}
	free(got);
}

static struct kmem_cache *plain, *merged_a, *merged_b;
static void *objs[1000];
static int agent_fd = -1;

static void socket_where_said(void)
{
	struct stat st;
	char path[AGENT_PATH_MAX], found[AGENT_PATH_MAX];
	agent_fd = connect_wait(getpid());
	CHECK(agent_fd >= 0);
	CHECK(!stat(dir, &st) && (st.st_mode & 0777) == 0700);
	sock_path(getpid(), path, sizeof(path));
	CHECK(!stat(path, &st) && S_ISSOCK(st.st_mode) && (st.st_mode & 0777) == 0600);
	/* The tools find it as the agent placed it. */
	int fd = agent_connect(getpid(), found, sizeof(found));
	CHECK(fd >= 0);
	CHECK(!strcmp(found, path));
	close(fd);
	/* The thread is named, as ps and top show it. */
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "grep -qx slub-agent /proc/%d/task/*/comm", (int)getpid());
	CHECK_EQ(system(cmd), 0);
}

static bool line_has(const char *text, const char *line)
{
	size_t n = strlen(line);
	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, line, n) && (p[n] == '\n' || !p[n]))
			return true;
	return false;
}

static void caches_and_attrs(void)
{
	int st;
	char *list = ask(agent_fd, "caches", &st);
	CHECK_EQ(st, 0);
	char want[256];
	snprintf(want, sizeof(want), "%s\t%s", slub_cache_id(plain), slub_cache_name(plain));
	CHECK(list && line_has(list, want));
	/* The merged pair: one line, the id, the first name, the other as an alias. */
	CHECK(slub_cache_id(merged_a)[0] == ':' && merged_a == merged_b);
	bool b_is_alias = false;
	for (unsigned int i = 0; slub_cache_alias(merged_a, i); i++)
		b_is_alias |= !strcmp(slub_cache_alias(merged_a, i), "agent_merged_b");
	CHECK(b_is_alias);
	char *line = list ? strstr(list, slub_cache_id(merged_a)) : NULL;
	CHECK(line && line[-1] == '\n');
	if (line) {
		*strchrnul(line, '\n') = 0;
		for (unsigned int i = 0; slub_cache_alias(merged_a, i); i++)
			CHECK(strstr(line, slub_cache_alias(merged_a, i)));
	}
	free(list);

	char *attrs = ask(agent_fd, "attrs", &st);
	CHECK_EQ(st, 0);
	unsigned int mode, nr = 0;
	const char *name;
	for (unsigned int i = 0; (name = slub_attr_name(i, &mode)); i++, nr++) {
		snprintf(want, sizeof(want), "%o\t%s", mode, name);
		CHECK(attrs && line_has(attrs, want));
	}
	CHECK(nr > 25);
	free(attrs);
}

static void figures_as_the_api(void)
{
	static const char *const attrs[] = {
		"objects", "slabs", "partial", "cpu_slabs", "total_objects", "object_size",
		"slab_size", "order", "objs_per_slab", "aliases", "min_partial", "ctor",
	};
	for (size_t i = 0; i < ARRAY_SIZE(attrs); i++) {
		same_as_api(agent_fd, plain, attrs[i]);
		same_as_api(agent_fd, merged_a, attrs[i]);
	}
	/* By name and by alias too. */
	int st;
	char *a = ask(agent_fd, "read\tagent_merged_b\tobject_size", &st);
	CHECK_EQ(st, 0);
	CHECK(a && atoi(a) == 72);
	free(a);
	a = ask(agent_fd, "read\tagent_plain\tobjects", &st);
	CHECK(a && atoi(a) == 1000);
	free(a);
}

static void writes_take_effect(void)
{
	char buf[64];
	CHECK_EQ(write_attr(agent_fd, slub_cache_id(plain), "min_partial", "7\n"), 0);
	CHECK_EQ(slub_attr_read(plain, "min_partial", buf, sizeof(buf)), 2);
	CHECK(!strcmp(buf, "7\n"));
	/* Empty slabs go on shrink: free all, shrink through the agent. */
	for (int i = 0; i < 1000; i++)
		kmem_cache_free(plain, objs[i]);
	CHECK_EQ(write_attr(agent_fd, "agent_plain", "shrink", "1\n"), 0);
	slub_attr_read(plain, "slabs", buf, sizeof(buf));
	CHECK_EQ(atol(buf), 0);
	/* Errors as the kernel's files give them. */
	CHECK_EQ(write_attr(agent_fd, "agent_plain", "validate", "1"), -EINVAL); /* no debug flags */
	CHECK_EQ(write_attr(agent_fd, "agent_plain", "objects", "1"), -EPERM);
	CHECK_EQ(write_attr(agent_fd, "agent_plain", "no_such", "1"), -ENOENT);
	CHECK_EQ(write_attr(agent_fd, "no_such_cache", "shrink", "1"), -ENOENT);
	CHECK_EQ(write_attr(agent_fd, "agent_plain", "min_partial", "x"), -EINVAL);
	int st;
	free(ask(agent_fd, "bogus", &st));
	CHECK_EQ(st, -EINVAL);
	free(ask(agent_fd, "read\tagent_plain\tno_such", &st));
	CHECK_EQ(st, -ENOENT);
	/* validate on a debug cache: writable, and finds nothing wrong. */
	struct kmem_cache *dbg = kmem_cache_create("agent_debug", 40, 0, SLAB_CONSISTENCY_CHECKS, NULL);
	void *o = kmem_cache_alloc(dbg, 0);
	CHECK_EQ(write_attr(agent_fd, "agent_debug", "validate", "1\n"), 0);
	CHECK_EQ(slub_errors(), 0);
	kmem_cache_free(dbg, o);
	kmem_cache_destroy(dbg);
}

/* Another uid gets nothing: not through the directory, not past SO_PEERCRED. */
static void other_uid_refused(void)
{
	if (geteuid() != 0) {
		fprintf(stderr, "   (skipped: not root, cannot become another uid)\n");
		return;
	}
	if (UNDER_TSAN) {	/* the child's fork handler starts its agent: TSan refuses */
		fprintf(stderr, "   (skipped: TSan does not support threads started after a fork)\n");
		return;
	}
	struct passwd *pw = getpwnam("nobody");
	uid_t nobody = pw ? pw->pw_uid : 65534;
	char path[AGENT_PATH_MAX];
	sock_path(getpid(), path, sizeof(path));
	for (int open_up = 0; open_up < 2; open_up++) {
		/* Opened up, the peer check is all that stands. */
		if (open_up) {
			CHECK(!chmod(base_dir, 0711) && !chmod(dir, 0711) && !chmod(path, 0666));
		}
		pid_t pid = fork();
		if (pid == 0) {
			if (setgid(nobody) || setuid(nobody))
				_exit(3);
			int fd = agent_connect_path(path);
			if (fd < 0)
				_exit(fd == -EACCES ? 0 : 4);
			char *body;
			size_t len;
			int st = agent_call(fd, "caches", NULL, 0, &body, &len);
			_exit(st == -ECONNRESET && !body ? 1 : 5);
		}
		int status;
		waitpid(pid, &status, 0);
		/* Closed: connect refused (0), or connected and dropped unanswered (1). */
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == (open_up ? 1 : 0));
		if (!WIFEXITED(status) || WEXITSTATUS(status) != (open_up ? 1u : 0u))
			fprintf(stderr, "   child status %#x (open_up %d)\n", status, open_up);
	}
	chmod(base_dir, 0700);
	chmod(dir, 0700);
	chmod(path, 0600);
	/* And the owner still gets its answers. */
	int st;
	free(ask(agent_fd, "attrs", &st));
	CHECK_EQ(st, 0);
}

/*
 * The agent's euid is asked again at each request: a connection accepted
 * while the process ran as nobody is dropped once it runs as root again.
 */
static void euid_checked_at_each_request(void)
{
	if (geteuid() != 0 || UNDER_TSAN) {
		fprintf(stderr, "   (skipped: %s)\n", UNDER_TSAN ? "TSan and fork" :
			"not root, cannot change the euid");
		return;
	}
	struct passwd *pw = getpwnam("nobody");
	uid_t nobody = pw ? pw->pw_uid : 65534;
	char path[AGENT_PATH_MAX];
	int go[2], said[2];
	sock_path(getpid(), path, sizeof(path));
	CHECK(!pipe(go) && !pipe(said));
	CHECK(!chmod(base_dir, 0711) && !chmod(dir, 0711) && !chmod(path, 0666));
	pid_t pid = fork();
	if (pid == 0) {
		char c;
		int st[2] = { 1, 1 };
		if (setgid(nobody) || setuid(nobody) || read(go[0], &c, 1) != 1)
			_exit(3);
		int fd = agent_connect_path(path);
		char *body = NULL;
		size_t len;
		st[0] = fd < 0 ? fd : agent_call(fd, "caches", NULL, 0, &body, &len);
		free(body);
		if (write(said[1], &st[0], sizeof(st[0])) != sizeof(st[0]) || read(go[0], &c, 1) != 1)
			_exit(4);
		st[1] = agent_call(fd, "caches", NULL, 0, &body, &len);
		free(body);
		_exit(write(said[1], &st[1], sizeof(st[1])) == sizeof(st[1]) ? 0 : 5);
	}
	int st = 1, status;
	/* As nobody, the process answers nobody (glibc changes every thread's euid). */
	CHECK(!seteuid(nobody));
	CHECK_EQ(write(go[1], "x", 1), 1);
	CHECK_EQ(read(said[0], &st, sizeof(st)), (ssize_t)sizeof(st));
	CHECK(!seteuid(0));
	CHECK_EQ(st, 0);
	/* Root again: the same connection gets nothing more. */
	CHECK_EQ(write(go[1], "x", 1), 1);
	CHECK_EQ(read(said[0], &st, sizeof(st)), (ssize_t)sizeof(st));
	CHECK_EQ(st, -ECONNRESET);
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	chmod(base_dir, 0700);
	chmod(dir, 0700);
	chmod(path, 0600);
	close(go[0]); close(go[1]); close(said[0]); close(said[1]);
	free(ask(agent_fd, "attrs", &st));
	CHECK_EQ(st, 0);
}

static bool exists(const char *path)
{
	struct stat st;
	return !lstat(path, &st);
}

/*
 * A process run as @uid with $XDG_RUNTIME_DIR @xdg (a new image of this
 * test, --dir-check; spawned, not forked: a fork would start this
 * process's agent in the child): whether its agent listened there (1),
 * gave up (0), or the child failed (-1).
 */
static int agent_listens_in(const char *xdg, uid_t uid)
{
	char uid_text[16];
	snprintf(uid_text, sizeof(uid_text), "%u", (unsigned int)uid);
	char *args[] = { "test_agent", "--dir-check", (char *)xdg, uid_text, NULL };
	pid_t pid;
	int status;
	if (posix_spawn(&pid, "/proc/self/exe", NULL, NULL, args, environ))
		return -1;
	waitpid(pid, &status, 0);
	return !WIFEXITED(status) || WEXITSTATUS(status) > 1 ? -1 : WEXITSTATUS(status);
}

/*
 * --dir-check XDG UID: become UID, start the agent, wait for it to listen
 * or give up; 1 if it listens.
 */
static int run_dir_check(const char *xdg, const char *uid_text)
{
	char path[AGENT_PATH_MAX], cmd[128];
	uid_t uid = (uid_t)strtoul(uid_text, NULL, 10);
	if (uid != geteuid() && (setgid(uid) || setuid(uid)))
		return 3;
	setenv("XDG_RUNTIME_DIR", xdg, 1);
	snprintf(path, sizeof(path), "%s/slub/%d.sock", xdg, (int)getpid());
	snprintf(cmd, sizeof(cmd), "grep -qx slub-agent /proc/%d/task/*/comm", (int)getpid());
	if (slub_setup("slub_agent"))
		return 2;
	kfree(kmalloc(64, GFP_KERNEL));	/* the allocator runs: the agent may listen */
	for (int i = 0; i < 3000; i++) {
		if (exists(path))
			return 1;
		if (system(cmd) != 0)
			return exists(path);	/* the thread ended without a socket */
		usleep(10000);
	}
	return 2;
}

/* The agent's directory: its own uid's, closed to writers, no symlink. */
static void unsafe_directory_refused(void)
{
	char xdg[80], slub[96], real[104];
	struct passwd *pw = getpwnam("nobody");
	uid_t nobody = pw ? pw->pw_uid : 65534;
	snprintf(xdg, sizeof(xdg), "%s/dircheck", base_dir);
	snprintf(slub, sizeof(slub), "%s/slub", xdg);
	snprintf(real, sizeof(real), "%s/real", xdg);
	CHECK(!mkdir(xdg, 0755) && !mkdir(slub, 0700));
	CHECK_EQ(agent_listens_in(xdg, geteuid()), 1);	/* the good case first */
	CHECK(!chmod(slub, 0777));
	CHECK_EQ(agent_listens_in(xdg, geteuid()), 0);
	CHECK(!chmod(slub, 0700) && !rename(slub, real) && !symlink(real, slub));
	CHECK_EQ(agent_listens_in(xdg, geteuid()), 0);
	CHECK(!unlink(slub) && !rename(real, slub));
	if (geteuid() != 0) {
		fprintf(stderr, "   (other owners skipped: not root)\n");
	} else {
		CHECK(!chown(slub, nobody, nobody));
		CHECK_EQ(agent_listens_in(xdg, 0), 0);
		/* A shared sticky directory of root's: another user could plant our pid's socket. */
		CHECK(!chown(slub, 0, 0) && !chmod(slub, 01777) && !chmod(base_dir, 0755));
		CHECK_EQ(agent_listens_in(xdg, nobody), 0);
		chmod(base_dir, 0700);
	}
	CHECK(remove_tree(xdg));
}

/* A forked child has its own agent; the parent's goes on; a killed one's socket is cleaned. */
static void fork_has_own_agent(void)
{
	if (UNDER_TSAN) {
		fprintf(stderr, "   (skipped: TSan's deadlock detector fails on the fork handlers' locks)\n");
		return;
	}
	char mine[AGENT_PATH_MAX], childs[AGENT_PATH_MAX];
	int to_child[2], from_child[2];
	CHECK(!pipe(to_child) && !pipe(from_child));
	pid_t pid = fork();
	if (pid == 0) {
		/* Its own socket, answering with its own figures. */
		struct kmem_cache *s = kmem_cache_create("agent_child_only", 200, 0, SLAB_NO_MERGE, NULL);
		void *o = kmem_cache_alloc(s, 0);
		int fd = connect_wait(getpid()), st = 0;
		char *a = fd >= 0 ? ask(fd, "read\tagent_child_only\tobjects", &st) : NULL;
		char api[64] = "";
		slub_attr_read(s, "objects", api, sizeof(api));
		int ok = a && atoi(a) > 0 && !strcmp(a, api);
		if (!ok)
			fprintf(stderr, "   child: fd %d, status %d, answer '%s'\n", fd, st, a ? a : "");
		free(a);
		ssize_t w = write(from_child[1], &ok, sizeof(ok));
		char c;
		w += read(to_child[0], &c, 1);	/* held until the parent has looked */
		kmem_cache_free(s, o);
		exit(w == (ssize_t)sizeof(ok) + 1 ? 0 : 1);	/* exit: the socket goes */
	}
	int ok = 0;
	CHECK_EQ(read(from_child[0], &ok, sizeof(ok)), (ssize_t)sizeof(ok));
	CHECK(ok);
	sock_path(getpid(), mine, sizeof(mine));
	sock_path(pid, childs, sizeof(childs));
	CHECK(exists(mine) && exists(childs));
	/* The parent's agent does not know the child's cache, and still answers. */
	int st;
	free(ask(agent_fd, "read\tagent_child_only\tobjects", &st));
	CHECK_EQ(st, -ENOENT);
	CHECK_EQ(write(to_child[1], "x", 1), 1);
	int status;
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK(!exists(childs));	/* removed at its exit */
	CHECK(exists(mine));	/* not the parent's */
	free(ask(agent_fd, "caches", &st));
	CHECK_EQ(st, 0);

	/* SIGKILL: the socket stays, until the next agent starts here. */
	pid = fork();
	if (pid == 0) {
		int fd = connect_wait(getpid());
		ssize_t w = write(from_child[1], &fd, sizeof(fd));
		(void)w;
		pause();
		_exit(0);
	}
	int fd = -1;
	CHECK_EQ(read(from_child[0], &fd, sizeof(fd)), (ssize_t)sizeof(fd));
	CHECK(fd >= 0);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	sock_path(pid, childs, sizeof(childs));
	CHECK(exists(childs));
	pid_t next = fork();
	if (next == 0) {
		int nfd = connect_wait(getpid());
		_exit(nfd >= 0 ? 0 : 1);
	}
	waitpid(next, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK(!exists(childs));
	close(to_child[0]); close(to_child[1]); close(from_child[0]); close(from_child[1]);
}

/*
 * A forked child's agent listens, then the child execs a program that
 * ends before its own agent could listen (a shell's `$(seq 600)`): the
 * name of its pid goes with it, not left behind.
 */
static void exec_then_quick_exit_leaves_nothing(void)
{
	if (UNDER_TSAN) {
		fprintf(stderr, "   (skipped: TSan does not support threads started after a fork)\n");
		return;
	}
	char childs[AGENT_PATH_MAX];
	pid_t pid = fork();
	if (pid == 0) {
		char path[AGENT_PATH_MAX];
		sock_path(getpid(), path, sizeof(path));
		for (int i = 0; i < 3000 && !exists(path); i++)
			usleep(10000);
		setenv("SLUB_OPTIONS", "slub_agent", 1);
		execl("/proc/self/exe", "test_agent", "--exit-at-once", (char *)NULL);
		_exit(127);
	}
	int status;
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	sock_path(pid, childs, sizeof(childs));
	CHECK(!exists(childs));
	unlink(childs);
}

/* ---- 8 threads allocating while the tree is read in a loop ------------------------ */

static bool stop;
static struct kmem_cache *churn_caches[4];

static void *churner(void *arg)
{
	uintptr_t i = (uintptr_t)arg;
	void *held[256] = { 0 };
	unsigned long n = 0;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		struct kmem_cache *s = churn_caches[(i + n) % 4];
		unsigned int k = (unsigned int)(n * 7919 % 256);
		if (held[k]) {
			kmem_cache_free(churn_caches[k % 4], held[k]);
			held[k] = NULL;
		} else {
			held[k] = kmem_cache_alloc(churn_caches[k % 4], 0);
		}
		(void)s;
		if (n++ % 4096 == 0) {
			void *big = kmalloc(3000 + n % 5000, 0);
			kfree(big);
		}
	}
	for (int k = 0; k < 256; k++)
		if (held[k])
			kmem_cache_free(churn_caches[k % 4], held[k]);
	return NULL;
}

/* Every attribute of every cache, over and over, as `cat` in a slubfs loop. */
static void *tree_reader(void *arg)
{
	unsigned long *reads = arg;
	int fd = agent_connect(getpid(), NULL, 0), st;
	if (fd < 0)
		return NULL;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		char *list = ask(fd, "caches", &st), *attrs = ask(fd, "attrs", &st);
		for (char *c = list; c && *c && !__atomic_load_n(&stop, __ATOMIC_RELAXED);) {
			char *end = strchrnul(c, '\n'), *tab = strchr(c, '\t');
			for (char *a = attrs; a && *a;) {
				char *aend = strchrnul(a, '\n'), *atab = strchr(a, '\t'), req[256];
				snprintf(req, sizeof(req), "read\t%.*s\t%.*s", (int)(tab - c), c,
					 (int)(aend - atab - 1), atab + 1);
				free(ask(fd, req, &st));
				if (st == -ECONNRESET)
					goto out;
				(*reads)++;
				a = *aend ? aend + 1 : aend;
			}
			c = *end ? end + 1 : end;
		}
		free(list);
		free(attrs);
	}
out:
	close(fd);
	return NULL;
}

static void readers_beside_8_allocators(void)
{
	pthread_t t[8], r[2];
	unsigned long reads[2] = { 0, 0 };
	for (int i = 0; i < 4; i++) {
		char name[32];
		snprintf(name, sizeof(name), "agent_churn%d", i);
		churn_caches[i] = kmem_cache_create(name, 32 + 48 * (unsigned)i, 0, SLAB_NO_MERGE, NULL);
	}
	for (uintptr_t i = 0; i < 8; i++)
		pthread_create(&t[i], NULL, churner, (void *)i);
	for (int i = 0; i < 2; i++)
		pthread_create(&r[i], NULL, tree_reader, &reads[i]);
	/* Long enough for many rounds of the tree; a deadlock trips the alarm. */
	alarm(300);
	sleep(2);
	__atomic_store_n(&stop, true, __ATOMIC_RELAXED);
	for (int i = 0; i < 8; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(r[i], NULL);
	alarm(0);
	fprintf(stderr, "   %lu + %lu attribute reads beside 8 allocating threads\n", reads[0],
		reads[1]);
	CHECK(reads[0] > 100 && reads[1] > 100);
	CHECK_EQ(slub_errors(), 0);
	for (int i = 0; i < 4; i++)
		kmem_cache_destroy(churn_caches[i]);
}

/*
 * A daemon closing every fd closes the agent's too: the agent must see
 * it (POLLNVAL), not spin on it nor close a number the program reuses,
 * and end, removing its socket.  Last: it ends this process's agent.
 */
static void closed_fd_ends_the_agent(void)
{
	char path[AGENT_PATH_MAX], cmd[128];
	if (UNDER_TSAN) {	/* the close races with the agent's fstat on purpose: TSan says so */
		fprintf(stderr, "   (skipped: it closes a thread's fd under it, which TSan reports)\n");
		return;
	}
	sock_path(getpid(), path, sizeof(path));
	int closed = 0;
	for (int fd = 3; fd < 1024; fd++) {
		struct sockaddr_un sun;
		socklen_t len = sizeof(sun);
		int listening = 0;
		socklen_t ilen = sizeof(listening);
		if (getsockname(fd, (struct sockaddr *)&sun, &len) || sun.sun_family != AF_UNIX ||
		    getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &ilen) || !listening ||
		    strcmp(sun.sun_path, path))
			continue;
		close(fd);
		closed++;
	}
	CHECK_EQ(closed, 1);
	/*
	 * A client now most likely takes the closed number: the agent's poll
	 * then waits on this socket, until its timeout shows it is not its own.
	 */
	int fd = agent_connect_path(path);
	bool gone = false;
	for (int i = 0; i < 3000 && !gone; i++) {
		usleep(10000);
		gone = !exists(path);
	}
	CHECK(gone);
	snprintf(cmd, sizeof(cmd), "grep -qx slub-agent /proc/%d/task/*/comm", (int)getpid());
	for (int i = 0; i < 300 && system(cmd) == 0; i++)
		usleep(10000);
	CHECK(system(cmd) != 0);	/* the thread ended */
	if (fd >= 0)
		close(fd);
}

/* A socket left by a process that is gone: made before our agent starts. */
static pid_t stale_pid;

static void make_stale_socket(void)
{
	pid_t pid = fork();
	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	stale_pid = pid;
	char path[AGENT_PATH_MAX];
	sock_path(pid, path, sizeof(path));
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)))
		perror("bind");
	close(fd);
}

static void stale_socket_cleaned(void)
{
	char path[AGENT_PATH_MAX];
	sock_path(stale_pid, path, sizeof(path));
	CHECK(!exists(path));
}

static int run_no_agent(void)
{
	struct kmem_cache *s = kmem_cache_create("agent_off", 64, 0, 0, NULL);
	void *o = kmem_cache_alloc(s, 0);
	usleep(100000);
	char path[AGENT_PATH_MAX];
	sock_path(getpid(), path, sizeof(path));
	int bad = exists(path) || exists(dir);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "grep -qx slub-agent /proc/%d/task/*/comm", (int)getpid());
	bad |= system(cmd) == 0;
	kmem_cache_free(s, o);
	return bad;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "--exit-at-once"))
		return 0;	/* its agent started (SLUB_OPTIONS), the allocator never */
	if (argc == 4 && !strcmp(argv[1], "--dir-check"))
		return run_dir_check(argv[2], argv[3]);
	char base[] = "/tmp/test_agent-XXXXXX";
	if (!mkdtemp(base)) {
		perror("mkdtemp");
		return 1;
	}
	setenv("XDG_RUNTIME_DIR", base, 1);
	snprintf(base_dir, sizeof(base_dir), "%s", base);
	snprintf(dir, sizeof(dir), "%s/slub", base);
	if (argc > 1 && !strcmp(argv[1], "--no-agent")) {
		int bad = run_no_agent();
		rmdir(base);
		return bad;
	}
	/* Without the option first, in a process of its own. */
	fprintf(stderr, "== no_option_no_agent\n");
	pid_t pid = fork();
	if (pid == 0)
		execl("/proc/self/exe", argv[0], "--no-agent", (char *)NULL), _exit(127);
	int status;
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	mkdir(dir, 0700);
	make_stale_socket();
	CHECK_EQ(slub_setup("slub_agent"), 0);
	plain = kmem_cache_create("agent_plain", 200, 0, SLAB_NO_MERGE, NULL);
	merged_a = kmem_cache_create("agent_merged_a", 72, 0, 0, NULL);
	merged_b = kmem_cache_create("agent_merged_b", 70, 0, 0, NULL);
	for (int i = 0; i < 1000; i++)
		objs[i] = kmem_cache_alloc(plain, 0);

	RUN(socket_where_said);
	if (agent_fd < 0)
		return check_done();
	RUN(stale_socket_cleaned);
	RUN(caches_and_attrs);
	RUN(figures_as_the_api);
	RUN(writes_take_effect);
	RUN(other_uid_refused);
	RUN(euid_checked_at_each_request);
	RUN(unsafe_directory_refused);
	RUN(fork_has_own_agent);
	RUN(exec_then_quick_exit_leaves_nothing);
	RUN(readers_beside_8_allocators);
	close(agent_fd);
	RUN(closed_fd_ends_the_agent);
	/* The socket itself goes at exit (fork_has_own_agent saw a child's go). */
	remove_tree(base);
	return check_done();
}
