// SPDX-License-Identifier: MIT
/*
 * slabinfo_live.c - slabinfo's live source: a libslub process's caches
 * read through its agent (-p PID), and --watch, which refreshes them as
 * slabtop does: sorted by memory, with what changed since the last look.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent_client.h"
#include "slabinfo_source.h"

struct live {
	int fd;
	pid_t pid;
	bool gone;		/* the connection broke, or was given up: nothing more is asked */
	bool broken;		/* given up: an answer outside the protocol */
	int reopened;		/* connections made again after an exec (live_source_reopen) */
	char what[32];
};

/* One request; its status, the answer in *body (freed by the caller). */
static int live_call(struct live *l, const char *req, const char *payload, char **body)
{
	size_t len;
	*body = NULL;
	if (l->gone)
		return -ECONNRESET;
	int st = agent_call(l->fd, req, payload, payload ? strlen(payload) : 0, body, &len);
	if (st == -EPROTO && !l->broken) {
		fprintf(stderr, "slabinfo: %s: its agent's answer is not the protocol's: not read "
			"further\n", l->what);
		l->broken = true;
	}
	if (st == -ECONNRESET || st == -EPROTO)
		l->gone = true;
	return st;
}

static ssize_t live_read(void *ctx, const char *cache, const char *attr, char *buf, size_t len)
{
	char req[3 * SLABINFO_NAME_MAX], *body;
	snprintf(req, sizeof(req), "read\t%s\t%s", cache, attr);
	int st = live_call(ctx, req, NULL, &body);
	if (st) {
		free(body);
		return st;
	}
	size_t n = strlen(body);
	if (n >= len)
		n = len ? len - 1 : 0;
	if (len) {
		memcpy(buf, body, n);
		buf[n] = 0;
	}
	free(body);
	return (ssize_t)n;
}

/* A write's status; for validate, the problems the process reported (its answer's number). */
static int live_write(void *ctx, const char *cache, const char *attr, const char *val)
{
	char req[3 * SLABINFO_NAME_MAX + 32], *body;
	snprintf(req, sizeof(req), "write\t%s\t%s\t%zu", cache, attr, strlen(val));
	int st = live_call(ctx, req, val, &body);
	if (!st && body && !strcmp(attr, "validate")) {
		unsigned long n = strtoul(body, NULL, 10);
		st = n > INT_MAX ? INT_MAX : (int)n;
	}
	free(body);
	return st;
}

/*
 * "id\tname[\talias...]" per cache: the id is the directory; a merged
 * cache's every name, its creator's too, is an alias of it, as the
 * kernel's tree links them.
 */
static int live_load(struct source *src, struct slabinfo_set *set, const regex_t *re)
{
	struct live *l = src->ctx;
	char *list;
	int st = live_call(l, "caches", NULL, &list);
	if (st) {
		/* A hang-up is the caller's to tell (live_source_reopen, live_source_hung_up). */
		if (!l->gone)
			fprintf(stderr, "slabinfo: %s: %s\n", l->what, strerror(-st));
		free(list);
		return -1;
	}
	for (char *line = list, *next; *line; line = next) {
		next = strchrnul(line, '\n');
		if (*next)
			*next++ = 0;
		char *f[64];
		int n = 0;
		for (char *p = line; p && n < 64; p = strchr(p, '\t') ? strchr(p, '\t') + 1 : NULL)
			f[n++] = p;
		for (char *p = line; (p = strchr(p, '\t')); )
			*p++ = 0;
		const char *id = f[0];
		if (n < 2 || strlen(id) >= SLABINFO_NAME_MAX)
			continue;
		if (id[0] == ':' || !regexec(re, id, 0, NULL, 0))
			source_add_cache(set, id, l);
		for (int i = id[0] == ':' ? 1 : 2; i < n; i++)
			if (!regexec(re, f[i], 0, NULL, 0))
				source_add_alias(set, f[i], id);
	}
	free(list);
	return l->gone ? -1 : 0;
}

/* Every attribute the library has, the same for every cache. */
static size_t live_attr_names(struct source *src, const char *cache, char ***names)
{
	char *list;
	size_t nr = 0, cap = 0;
	(void)cache;
	*names = NULL;
	if (live_call(src->ctx, "attrs", NULL, &list) == 0)
		for (char *line = list, *nl; (nl = strchr(line, '\n')); line = nl + 1) {
			char *tab = strchr(line, '\t');
			*nl = 0;
			if (tab)
				source_add_name(names, &nr, &cap, tab + 1);
		}
	free(list);
	return nr;
}

int live_source_open(struct source *src, pid_t pid)
{
	static struct live l;
	char path[128] = "";
	l.pid = pid;
	snprintf(l.what, sizeof(l.what), "pid %d", (int)pid);
	l.fd = agent_connect_wait(pid, path, sizeof(path));
	if (l.fd < 0) {
		agent_explain("slabinfo", pid, l.fd, path);
		return 1;
	}
	*src = (struct source){ l.what, &l, live_read, live_write, live_load, live_attr_names };
	return 0;
}

/*
 * After a hang-up while the caches were read: a process that is still
 * there exec'd (a launcher, a shell script's exec, a pyenv shim chain),
 * and its new image starts an agent of its own: connect again, within
 * AGENT_WAIT_S of the first try.  False when that is not the case.
 */
bool live_source_reopen(struct source *src)
{
	struct live *l = src->ctx;
	if (!l->gone || l->broken || ++l->reopened > 10 || !agent_process_running(l->pid))
		return false;
	close(l->fd);
	char path[128] = "";
	int fd = agent_connect_wait_for(l->pid, path, sizeof(path), 4 * AGENT_WAIT_S);
	if (fd < 0)
		return false;
	l->fd = fd;
	l->gone = false;
	return true;
}

bool live_source_gone(const struct source *src)
{
	return ((const struct live *)src->ctx)->gone;
}

bool live_source_hung_up(const struct source *src)
{
	const struct live *l = src->ctx;
	if (l->gone && !l->broken)
		fprintf(stderr, "slabinfo: %s: its agent hung up before all was read (the process "
			"exited or exec'd)\n", l->what);
	return l->gone;
}

/* ---- --leaks ---------------------------------------------------------------------- */

int live_leaks(struct source *src)
{
	struct live *l = src->ctx;
	char *body;
	int st = live_call(l, "leaks", NULL, &body);
	if (st) {
		if (st == -ECONNRESET)
			fprintf(stderr, "slabinfo: %s: its agent hung up during the scan\n", l->what);
		else if (st != -EPROTO)
			fprintf(stderr, "slabinfo: %s: the leak scan was refused: %s (an agent older "
				"than --leaks?)\n", l->what, strerror(-st));
		free(body);
		return 1;
	}
	fputs(body ? body : "", stdout);
	free(body);
	return 0;
}

/* ---- --watch ---------------------------------------------------------------------- */

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
	(void)sig;
	interrupted = 1;
}

/* What a cache showed at the last refresh. */
struct seen {
	char name[SLABINFO_NAME_MAX];
	unsigned long objects, bytes;
};

static const struct seen *find_seen(const struct seen *s, size_t nr, const char *name)
{
	for (size_t i = 0; i < nr; i++)
		if (!strcmp(s[i].name, name))
			return &s[i];
	return NULL;
}

/* "+1.2M", "-40", or "" for no change; sizes as the table's.  @n > 2. */
static const char *delta(char *buf, size_t n, unsigned long now, unsigned long then, bool size,
			 bool bytes)
{
	char num[32];
	if (now == then)
		return "";
	unsigned long d = now > then ? now - then : then - now;
	if (size)
		slabinfo_size(num, sizeof(num), d, bytes);
	else
		snprintf(num, sizeof(num), "%lu", d);
	size_t k = strlen(num) < n - 2 ? strlen(num) : n - 2;
	buf[0] = now > then ? '+' : '-';
	memcpy(buf + 1, num, k);
	buf[1 + k] = 0;
	return buf;
}

static void free_set(struct slabinfo_set *set)
{
	free(set->caches);
	free(set->aliases);
}

int live_watch(struct source *src, const struct slabinfo_opts *opts, const regex_t *re,
	       double seconds)
{
	struct slabinfo_opts o = *opts;
	struct seen *seen = NULL;
	size_t nr_seen = 0;
	bool tty = isatty(STDOUT_FILENO), first = true;
	struct sigaction sa = { .sa_handler = on_sigint };	/* no SA_RESTART: ends the sleep */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	o.sort_size = true;
	o.sort_loss = o.sort_partial = o.sort_active = false;

	while (!interrupted) {
		struct slabinfo_set set = {
			.page_size = (unsigned long)sysconf(_SC_PAGESIZE),
			.read = src->read, .write = src->write, .ctx = src->ctx,
		};
		if (src->load(src, &set, re) || live_source_gone(src)) {
			free_set(&set);
			break;
		}
		slabinfo_link(&set, &o);
		slabinfo_sort(&set, &o);
		unsigned long total = 0, total_then = 0;
		for (size_t i = 0; i < set.nr; i++)
			total += slabinfo_bytes(&set, &set.caches[i]);
		for (size_t i = 0; i < nr_seen; i++)
			total_then += seen[i].bytes;
		char now_s[16], tot[32], dtot[32];
		time_t t = time(NULL);
		strftime(now_s, sizeof(now_s), "%H:%M:%S", localtime(&t));
		if (tty)
			printf("\033[H\033[J");
		printf("slabinfo: %s at %s, every %gs: %zu caches, %s in slabs %s\n", src->what,
		       now_s, seconds, set.nr, slabinfo_size(tot, sizeof(tot), total, o.show_bytes),
		       first ? "" : delta(dtot, sizeof(dtot), total, total_then, true, o.show_bytes));
		printf("%-24s %10s %8s %7s %9s %8s %14s %s\n", "Name", "Objects", "Change", "Objsize",
		       "Space", "Change", "Slabs/Part/Cpu", "");
		struct seen *next = calloc(set.nr ? set.nr : 1, sizeof(*next));
		long lines = o.lines;
		for (size_t i = 0; i < set.nr; i++) {
			struct slabinfo_cache *c = &set.caches[i];
			unsigned long bytes = slabinfo_bytes(&set, c);
			snprintf(next[i].name, sizeof(next[i].name), "%s", c->name);
			next[i].objects = c->objects;
			next[i].bytes = bytes;
			if (c->hidden || (o.skip_zero && !c->slabs) || !lines)
				continue;
			if (lines > 0)
				lines--;
			const struct seen *was = find_seen(seen, nr_seen, c->name);
			char space[32], d1[32], d2[32], sp[48];
			snprintf(sp, sizeof(sp), "%lu/%lu/%lu",
				 c->slabs > c->cpu_slabs ? c->slabs - c->cpu_slabs : 0, c->partial,
				 c->cpu_slabs);
			printf("%-24.24s %10lu %8s %7u %9s %8s %14s %s\n", slabinfo_name(c), c->objects,
			       was ? delta(d1, sizeof(d1), c->objects, was->objects, false, false) : "",
			       c->object_size, slabinfo_size(space, sizeof(space), bytes, o.show_bytes),
			       was ? delta(d2, sizeof(d2), bytes, was->bytes, true, o.show_bytes) : "",
			       sp, first ? "" : !was ? "new" : was->objects != c->objects ? "*" : "");
		}
		fflush(stdout);
		free(seen);
		seen = next;
		nr_seen = set.nr;
		free_set(&set);
		first = false;
		struct timespec ts = { (time_t)seconds,
				       (long)((seconds - (double)(time_t)seconds) * 1e9) };
		nanosleep(&ts, NULL);	/* SIGINT ends it early */
	}
	free(seen);
	if (live_source_gone(src))
		printf("slabinfo: %s exited\n", src->what);
	return 0;
}
