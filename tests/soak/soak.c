// SPDX-License-Identifier: MIT
/*
 * soak.c - a long run of the allocator in one mode (issue 34).
 *
 * Worker threads allocate from several kmem_caches (plain, with a
 * constructor, SLAB_NO_MERGE, a debug cache with sanity_checks on) and
 * kmalloc of mixed sizes (large ones too), fill each object with a
 * pattern, krealloc some, hand objects to other threads through queues
 * and check the pattern wherever an object is freed.  Beside them: a
 * thread flipping debug switches on a cache of its own, a thread writing
 * shrink and validate, a thread forking (the child allocates, frees and
 * exits) and execing, a thread running the malloc part (a child exec'd
 * with libslub-malloc.so preloaded), and with the agent on
 * (SLUB_OPTIONS=slub_agent) slabinfo -p readers and min_partial writes.
 * Every interval the main thread checks slub_errors(), the RSS against
 * the live bytes, and validate on the debug cache, and prints a line.
 *
 * soak --mode NAME --seconds N [--interval S] [--threads N]
 *      [--rss-factor F] [--malloc-lib SO --malloc-helper PROG]
 *      [--slabinfo PROG]
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <slub.h>

#include "agent_client.h"

extern char **environ;

#define MAX_WORKERS 32
#define TABLE_SLOTS 2048
#define QUEUE_SLOTS 1024
#define CTOR_BYTE 0xc7
#define MIB (1024.0 * 1024.0)

/* ---- options and shared state -------------------------------------------- */

static const char *mode = "rseq";
static long seconds = 60;
static long interval = 10;
static int nworkers = 4;
static double rss_factor = 4.0;
static const char *malloc_lib, *malloc_helper, *slabinfo_prog;

static atomic_bool stop;
static atomic_bool failed;
static atomic_ulong ops;
static atomic_long live_bytes;
static pthread_mutex_t fail_lock = PTHREAD_MUTEX_INITIALIZER;
static char fail_msg[512];
static double t_start;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void fail(const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&fail_lock);
	if (!atomic_load(&failed)) {
		va_start(ap, fmt);
		vsnprintf(fail_msg, sizeof(fail_msg), fmt, ap);
		va_end(ap);
		fprintf(stderr, "soak %s: FAIL at %.0f s: %s\n", mode, now() - t_start, fail_msg);
		atomic_store(&failed, true);
	}
	pthread_mutex_unlock(&fail_lock);
	atomic_store(&stop, true);
}

static bool running(void)
{
	return !atomic_load_explicit(&stop, memory_order_relaxed);
}

/* Sleep @ms milliseconds, waking early when the run stops. */
static void nap(long ms)
{
	while (ms > 0 && running()) {
		long step = ms < 50 ? ms : 50;

		usleep(step * 1000);
		ms -= step;
	}
}

static uint64_t rnd(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

/* ---- caches ---------------------------------------------------------------- */

enum { C_PLAIN, C_CTOR, C_NOMERGE, C_BIG, C_DEBUG, NCACHES, K_KMALLOC = NCACHES };

static struct kmem_cache *caches[NCACHES];
static const unsigned int cache_size[NCACHES] = { 48, 200, 96, 3000, 64 };
static struct kmem_cache *flip_cache;

static void ctor(void *p)
{
	memset(p, CTOR_BYTE, cache_size[C_CTOR]);
}

struct item {
	unsigned char *p;
	uint32_t size;
	uint8_t kind;
	uint8_t pat;
};

static void fill(struct item *it)
{
	memset(it->p, it->pat, it->size);
}

/* The first byte of @p[0..n) that is not @b, or -1. */
static long first_diff(const unsigned char *p, size_t n, unsigned char b)
{
	uint64_t w = 0x0101010101010101ull * b;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t v;

		memcpy(&v, p + i, 8);
		if (v != w)
			break;
	}
	for (; i < n; i++)
		if (p[i] != b)
			return (long)i;
	return -1;
}

static bool check(const struct item *it, const char *where)
{
	long d = first_diff(it->p, it->size, it->pat);

	if (d < 0)
		return true;
	fail("%s: object %p (%s, %u bytes) byte %ld is 0x%02x, not 0x%02x", where, (void *)it->p,
	     it->kind == K_KMALLOC ? "kmalloc" : slub_cache_name(caches[it->kind]), it->size, d,
	     it->p[d], it->pat);
	return false;
}

static size_t kmalloc_size(uint64_t *s)
{
	unsigned int r = rnd(s) % 100;

	if (r < 60)
		return 1 + rnd(s) % 512;
	if (r < 86)
		return 513 + rnd(s) % (8192 - 512);
	if (r < 99)
		return 8193 + rnd(s) % (65536 - 8192);
	return 65537 + rnd(s) % (1024 * 1024 - 65536);
}

static bool item_alloc(struct item *it, uint64_t *s)
{
	unsigned int kind = rnd(s) % 10;

	kind = kind < NCACHES ? kind : K_KMALLOC;
	it->kind = kind;
	it->pat = 1 + rnd(s) % 254;
	if (kind == K_KMALLOC) {
		it->size = kmalloc_size(s);
		it->p = kmalloc(it->size, GFP_KERNEL);
	} else {
		it->size = cache_size[kind];
		it->p = kmem_cache_alloc(caches[kind], GFP_KERNEL);
	}
	if (!it->p) {
		fail("allocation of %u bytes (kind %u) returned NULL", it->size, kind);
		return false;
	}
	if (kind == C_CTOR) {
		long d = first_diff(it->p, it->size, CTOR_BYTE);

		if (d >= 0) {
			fail("soak_ctor object %p not in its constructed state: byte %ld is 0x%02x",
			     (void *)it->p, d, it->p[d]);
			return false;
		}
	}
	fill(it);
	atomic_fetch_add_explicit(&live_bytes, it->size, memory_order_relaxed);
	return true;
}

static void item_free(struct item *it, const char *where)
{
	check(it, where);
	atomic_fetch_sub_explicit(&live_bytes, it->size, memory_order_relaxed);
	if (it->kind == K_KMALLOC) {
		kfree(it->p);
	} else {
		if (it->kind == C_CTOR)
			memset(it->p, CTOR_BYTE, it->size);	/* freed as constructed */
		kmem_cache_free(caches[it->kind], it->p);
	}
	it->p = NULL;
}

static void item_realloc(struct item *it, uint64_t *s)
{
	size_t n = kmalloc_size(s);
	unsigned char *q;

	if (!check(it, "before krealloc"))
		return;
	q = krealloc(it->p, n, GFP_KERNEL);
	if (!q) {
		fail("krealloc(%p, %zu) returned NULL", (void *)it->p, n);
		return;
	}
	{
		struct item old = { q, (uint32_t)(n < it->size ? n : it->size), it->kind, it->pat };

		if (!check(&old, "after krealloc"))
			return;
	}
	atomic_fetch_add_explicit(&live_bytes, (long)n - (long)it->size, memory_order_relaxed);
	it->p = q;
	it->size = n;
	it->pat = 1 + rnd(s) % 254;
	fill(it);
}

/* ---- workers and their queues -------------------------------------------- */

struct worker {
	pthread_t tid;
	int id;
	pthread_mutex_t lock;
	unsigned int head, count;
	struct item queue[QUEUE_SLOTS];
	struct item table[TABLE_SLOTS];
	unsigned int used;
};

static struct worker *workers;

static bool queue_push(struct worker *w, const struct item *it)
{
	bool ok = false;

	pthread_mutex_lock(&w->lock);
	if (w->count < QUEUE_SLOTS) {
		w->queue[(w->head + w->count++) % QUEUE_SLOTS] = *it;
		ok = true;
	}
	pthread_mutex_unlock(&w->lock);
	return ok;
}

static unsigned long queue_drain(struct worker *w)
{
	struct item batch[64];
	unsigned long n = 0;

	for (;;) {
		unsigned int k = 0;

		pthread_mutex_lock(&w->lock);
		while (w->count && k < 64) {
			batch[k++] = w->queue[w->head];
			w->head = (w->head + 1) % QUEUE_SLOTS;
			w->count--;
		}
		pthread_mutex_unlock(&w->lock);
		if (!k)
			return n;
		for (unsigned int i = 0; i < k; i++)
			item_free(&batch[i], "free of an object from another thread");
		n += k;
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint64_t s = 0x9e3779b97f4a7c15ull * (w->id + 1) ^ (uint64_t)time(NULL);
	unsigned long local = 0;

	while (running()) {
		unsigned int r = rnd(&s) % 100;

		if (r < 45 || w->used == 0) {
			if (w->used == TABLE_SLOTS) {
				unsigned int i = rnd(&s) % w->used;

				item_free(&w->table[i], "free");
				w->table[i] = w->table[--w->used];
			}
			if (!item_alloc(&w->table[w->used], &s))
				break;
			w->used++;
		} else if (r < 75) {
			unsigned int i = rnd(&s) % w->used;

			item_free(&w->table[i], "free");
			w->table[i] = w->table[--w->used];
		} else if (r < 88) {
			unsigned int i = rnd(&s) % w->used;
			struct worker *to = &workers[rnd(&s) % nworkers];

			if (to == w || !queue_push(to, &w->table[i]))
				item_free(&w->table[i], "free");
			w->table[i] = w->table[--w->used];
		} else if (r < 95) {
			unsigned int i = rnd(&s) % w->used;

			if (w->table[i].kind == K_KMALLOC)
				item_realloc(&w->table[i], &s);
		} else {
			local += queue_drain(w);
		}
		if (++local % 1024 == 0) {
			atomic_fetch_add_explicit(&ops, 1024, memory_order_relaxed);
			queue_drain(w);
		}
	}
	while (w->used)
		item_free(&w->table[--w->used], "free at the end");
	queue_drain(w);
	return NULL;
}

/* ---- the debug switches, shrink and validate ------------------------------ */

static unsigned long flips_done, flips_busy;

static void *flip_main(void *arg)
{
	static const char *const attrs[] = { "red_zone", "poison", "store_user", "sanity_checks" };
	uint64_t s = 12345;
	void *objs[64];

	(void)arg;
	while (running()) {
		const char *a = attrs[rnd(&s) % 4];
		const char *v = rnd(&s) % 2 ? "1" : "0";
		ssize_t r;

		slub_attr_write(flip_cache, "shrink", "1", 1);
		r = slub_attr_write(flip_cache, a, v, 1);
		if (r == 1)
			flips_done++;
		else if (r == -EBUSY)
			flips_busy++;
		else
			fail("write %s to soak_flip's %s: %zd (%s)", v, a, r, strerror((int)-r));
		for (int i = 0; i < 64; i++) {
			objs[i] = kmem_cache_alloc(flip_cache, GFP_KERNEL);
			if (!objs[i]) {
				fail("soak_flip allocation returned NULL");
				return NULL;
			}
			memset(objs[i], 0x40 + i, 128);
		}
		for (int i = 0; i < 64; i++) {
			struct item it = { objs[i], 128, K_KMALLOC, (uint8_t)(0x40 + i) };

			if (first_diff(objs[i], 128, 0x40 + i) >= 0)
				check(&it, "soak_flip free");
			kmem_cache_free(flip_cache, objs[i]);
		}
		nap(5);
	}
	return NULL;
}

static void *shrink_main(void *arg)
{
	uint64_t s = 777;

	(void)arg;
	while (running()) {
		struct kmem_cache *c = caches[rnd(&s) % NCACHES];
		ssize_t r = slub_attr_write(c, "shrink", "1", 1);

		if (r != 1)
			fail("shrink of %s: %zd", slub_cache_name(c), r);
		r = slub_attr_write(caches[C_DEBUG], "validate", "1", 1);
		if (r != 1)
			fail("validate of soak_debug: %zd", r);
		/* An object of soak_flip held while its switches flip: -EBUSY meanwhile. */
		{
			unsigned char *p = kmem_cache_alloc(flip_cache, GFP_KERNEL);
			struct item it = { p, 128, K_KMALLOC, 0x33 };

			if (!p) {
				fail("soak_flip allocation returned NULL");
				break;
			}
			fill(&it);
			nap(rnd(&s) % 30);
			check(&it, "soak_flip free (held across flips)");
			kmem_cache_free(flip_cache, p);
		}
		nap(20);
	}
	return NULL;
}

/* ---- children: fork, exec, the malloc part, slabinfo -p ------------------- */

/* Wait for @pid up to @timeout s (then kill it); its status, or -1. */
static int wait_child(pid_t pid, double timeout, const char *what)
{
	double end = now() + timeout;
	int st;

	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid)
			break;
		if (r < 0) {
			fail("waitpid for %s: %s", what, strerror(errno));
			return -1;
		}
		if (now() > end) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			fail("%s (pid %d) still running after %.0f s: killed", what, (int)pid, timeout);
			return -1;
		}
		usleep(2000);
	}
	if (WIFSIGNALED(st)) {
		fail("%s (pid %d) killed by signal %d", what, (int)pid, WTERMSIG(st));
		return -1;
	}
	return WEXITSTATUS(st);
}

static unsigned long forks, execs;

static int child_work(void)
{
	unsigned long e0 = slub_errors();
	uint64_t s = (uint64_t)getpid() * 2654435761u + 1;
	static struct item its[512];

	for (int round = 0; round < 4; round++) {
		for (int i = 0; i < 512; i++)
			if (!item_alloc(&its[i], &s))
				return 2;
		for (int i = 0; i < 512; i++) {
			if (first_diff(its[i].p, its[i].size, its[i].pat) >= 0)
				return 3;
			item_free(&its[i], "free in a forked child");
		}
	}
	return slub_errors() == e0 ? 0 : 4;
}

static void *fork_main(void *arg)
{
	(void)arg;
	while (running()) {
		pid_t pid = fork();
		int st;

		if (pid < 0) {
			fail("fork: %s", strerror(errno));
			break;
		}
		if (pid == 0)
			_exit(child_work());
		st = wait_child(pid, 60, "forked child");
		if (st > 0)
			fail("forked child exited %d (2 NULL, 3 pattern, 4 a report)", st);
		forks++;
		nap(100);
		pid = fork();
		if (pid < 0) {
			fail("fork: %s", strerror(errno));
			break;
		}
		if (pid == 0) {
			char *argv[] = { "true", NULL };

			execv("/bin/true", argv);
			_exit(127);
		}
		st = wait_child(pid, 60, "fork+exec of /bin/true");
		if (st > 0)
			fail("fork+exec of /bin/true exited %d", st);
		execs++;
		nap(100);
	}
	return NULL;
}

static pid_t spawn(char *const argv[], char *const envp[], bool quiet)
{
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int err;

	posix_spawn_file_actions_init(&fa);
	if (quiet)
		posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	err = posix_spawn(&pid, argv[0], &fa, NULL, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	if (err) {
		fail("spawn %s: %s", argv[0], strerror(err));
		return -1;
	}
	return pid;
}

static unsigned long malloc_runs;

static void *malloc_main(void *arg)
{
	char preload[4096], secs[32];
	char **env;
	size_t n = 0;

	(void)arg;
	for (char **e = environ; *e; e++)
		n++;
	env = calloc(n + 2, sizeof(*env));
	if (!env) {
		fail("calloc");
		return NULL;
	}
	n = 0;
	for (char **e = environ; *e; e++)
		if (strncmp(*e, "LD_PRELOAD=", 11))
			env[n++] = *e;
	snprintf(preload, sizeof(preload), "LD_PRELOAD=%s", malloc_lib);
	env[n++] = preload;
	while (running()) {
		double left = seconds - (now() - t_start);
		long run = left > 20 ? 15 : (long)left - 2;
		pid_t pid;
		int st;

		if (run < 1)
			break;
		snprintf(secs, sizeof(secs), "%ld", run);
		{
			char *argv[] = { (char *)malloc_helper, secs, NULL };

			pid = spawn(argv, env, false);
		}
		if (pid < 0)
			break;
		st = wait_child(pid, run + 60, "the malloc part (soak_malloc under LD_PRELOAD)");
		if (st > 0)
			fail("the malloc part (soak_malloc under LD_PRELOAD) exited %d", st);
		malloc_runs++;
	}
	free(env);
	return NULL;
}

static unsigned long agent_reads, agent_writes;

static void *agent_main(void *arg)
{
	static const char *const opts[] = { "-T", "-s", "-v", "--json", "-a" };
	char pid[32];
	int fd = -ENOENT;
	unsigned int k = 0;

	(void)arg;
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	for (int i = 0; i < 100 && fd < 0 && running(); i++) {
		fd = agent_connect(getpid(), NULL, 0);
		if (fd < 0)
			nap(50);
	}
	if (fd < 0 && running()) {
		fail("no agent answers (SLUB_OPTIONS has slub_agent): %s", strerror(-fd));
		return NULL;
	}
	while (running()) {
		/* -v on soak_debug alone: validate refuses a cache without debug flags. */
		char *argv[] = { (char *)slabinfo_prog, "-p", pid, (char *)opts[k % 5], NULL, NULL };
		char line[256], val[8];
		char *body = NULL;
		size_t blen;
		pid_t c;
		int st, r;

		if (k % 2 == 0)
			argv[3] = NULL;
		else if (!strcmp(argv[3], "-v"))
			argv[4] = "soak_debug";
		c = spawn(argv, environ, true);
		if (c < 0)
			break;
		st = wait_child(c, 60, "slabinfo -p");
		if (st > 0)
			fail("slabinfo -p %s %s exited %d", pid, argv[3] ? argv[3] : "", st);
		agent_reads++;
		snprintf(val, sizeof(val), "%u\n", 3 + k % 5);
		snprintf(line, sizeof(line), "write\t%s\tmin_partial\t%zu",
			 slub_cache_id(caches[C_PLAIN]), strlen(val));
		r = agent_call(fd, line, val, strlen(val), &body, &blen);
		free(body);
		if (r)
			fail("min_partial write through the agent: %d (%s)", r, strerror(-r));
		agent_writes++;
		k++;
		nap(200);
	}
	if (fd >= 0)
		close(fd);
	return NULL;
}

/* ---- checks ----------------------------------------------------------------- */

static double rss_mib(void)
{
	unsigned long size, res;
	FILE *f = fopen("/proc/self/statm", "r");
	int n;

	if (!f)
		return -1;
	n = fscanf(f, "%lu %lu", &size, &res);
	fclose(f);
	return n == 2 ? res * (double)sysconf(_SC_PAGESIZE) / MIB : -1;
}

static double hwm_mib(void)
{
	char line[256];
	double kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %lf", &kb) == 1)
			break;
	fclose(f);
	return kb / 1024;
}

static void usage(void)
{
	fprintf(stderr, "usage: soak --mode NAME --seconds N [--interval S] [--threads N] "
			"[--rss-factor F] [--malloc-lib SO --malloc-helper PROG] "
			"[--slabinfo PROG]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	pthread_t flip, shr, frk, mal, agt;
	bool agent = false, with_malloc;
	unsigned long e0;
	double peak = 0, next;
	const char *o = getenv("SLUB_OPTIONS");

	for (int i = 1; i < argc; i += 2) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!v)
			usage();
		if (!strcmp(a, "--mode"))
			mode = v;
		else if (!strcmp(a, "--seconds"))
			seconds = atol(v);
		else if (!strcmp(a, "--interval"))
			interval = atol(v);
		else if (!strcmp(a, "--threads"))
			nworkers = atoi(v);
		else if (!strcmp(a, "--rss-factor"))
			rss_factor = atof(v);
		else if (!strcmp(a, "--malloc-lib"))
			malloc_lib = v;
		else if (!strcmp(a, "--malloc-helper"))
			malloc_helper = v;
		else if (!strcmp(a, "--slabinfo"))
			slabinfo_prog = v;
		else
			usage();
	}
	if (seconds < 1 || interval < 1 || nworkers < 2 || nworkers > MAX_WORKERS)
		usage();
	with_malloc = malloc_lib && malloc_helper;
	agent = o && strstr(o, "slub_agent") && !strstr(o, "slub_agent=0") && slabinfo_prog;
	setvbuf(stdout, NULL, _IOLBF, 0);
	t_start = now();
	e0 = slub_errors();
	printf("soak %s: %ld s, %d threads, fast paths %s, SLUB_OPTIONS='%s', malloc part %s, "
	       "agent %s\n",
	       mode, seconds, nworkers, slub_percpu_mode(), o ? o : "", with_malloc ? "on" : "off",
	       agent ? "on" : "off");

	caches[C_PLAIN] = kmem_cache_create("soak_plain", cache_size[C_PLAIN], 0, 0, NULL);
	caches[C_CTOR] = kmem_cache_create("soak_ctor", cache_size[C_CTOR], 0, 0, ctor);
	caches[C_NOMERGE] = kmem_cache_create("soak_nomerge", cache_size[C_NOMERGE], 0,
					      SLAB_NO_MERGE, NULL);
	caches[C_BIG] = kmem_cache_create("soak_big", cache_size[C_BIG], 0, SLAB_HWCACHE_ALIGN,
					  NULL);
	caches[C_DEBUG] = kmem_cache_create("soak_debug", cache_size[C_DEBUG], 0, SLAB_NO_MERGE,
					    NULL);
	flip_cache = kmem_cache_create("soak_flip", 128, 0, SLAB_NO_MERGE, NULL);
	for (int i = 0; i < NCACHES; i++)
		if (!caches[i]) {
			printf("soak %s: FAIL: kmem_cache_create of cache %d\n", mode, i);
			return 1;
		}
	if (!flip_cache) {
		printf("soak %s: FAIL: kmem_cache_create of soak_flip\n", mode);
		return 1;
	}
	{
		ssize_t r = slub_attr_write(caches[C_DEBUG], "sanity_checks", "1", 1);

		if (r != 1) {
			printf("soak %s: FAIL: sanity_checks on soak_debug: %zd\n", mode, r);
			return 1;
		}
	}

	workers = calloc(nworkers, sizeof(*workers));
	if (!workers)
		return 1;
	for (int i = 0; i < nworkers; i++) {
		workers[i].id = i;
		pthread_mutex_init(&workers[i].lock, NULL);
	}
	for (int i = 0; i < nworkers; i++)
		pthread_create(&workers[i].tid, NULL, worker_main, &workers[i]);
	pthread_create(&flip, NULL, flip_main, NULL);
	pthread_create(&shr, NULL, shrink_main, NULL);
	pthread_create(&frk, NULL, fork_main, NULL);
	if (with_malloc)
		pthread_create(&mal, NULL, malloc_main, NULL);
	if (agent)
		pthread_create(&agt, NULL, agent_main, NULL);

	next = t_start + interval;
	while (running()) {
		double t = now();

		if (t >= t_start + seconds)
			break;
		if (t < next) {
			usleep(20000);
			continue;
		}
		next += interval;
		{
			unsigned long errs = slub_errors() - e0;
			int v = slub_validate(caches[C_DEBUG]);
			double rss = rss_mib(), live = atomic_load(&live_bytes) / MIB;
			double bound = rss_factor * live + 64;

			if (rss > peak)
				peak = rss;
			printf("soak %s: %4.0f s  ops %lu  live %.1f MiB  rss %.1f MiB  bound %.1f "
			       "MiB  reports %lu  validate %d  flips %lu/%lu busy  forks %lu  "
			       "malloc runs %lu  agent %lu/%lu\n",
			       mode, t - t_start, atomic_load(&ops), live, rss, bound, errs, v,
			       flips_done, flips_busy, forks, malloc_runs, agent_reads, agent_writes);
			if (errs)
				fail("slub_errors() grew by %lu (reports above)", errs);
			if (v)
				fail("validate of soak_debug found %d errors", v);
			if (rss > bound)
				fail("RSS %.1f MiB above the bound %.1f MiB (%gx live %.1f MiB + 64)",
				     rss, bound, rss_factor, live);
		}
	}
	atomic_store(&stop, true);
	if (atomic_load(&failed)) {
		/* Threads may be stuck in what failed: do not wait for them. */
		printf("soak %s: FAIL: %s\n", mode, fail_msg);
		fflush(stdout);
		_exit(1);
	}
	for (int i = 0; i < nworkers; i++)
		pthread_join(workers[i].tid, NULL);
	for (int i = 0; i < nworkers; i++)
		queue_drain(&workers[i]);
	pthread_join(flip, NULL);
	pthread_join(shr, NULL);
	pthread_join(frk, NULL);
	if (with_malloc)
		pthread_join(mal, NULL);
	if (agent)
		pthread_join(agt, NULL);
	if (!atomic_load(&failed)) {
		int v = slub_validate(caches[C_DEBUG]);

		if (v)
			fail("final validate of soak_debug found %d errors", v);
		if (atomic_load(&live_bytes))
			fail("%ld live bytes left after every object was freed",
			     atomic_load(&live_bytes));
		for (int i = 0; i < NCACHES; i++)
			kmem_cache_destroy(caches[i]);
		kmem_cache_destroy(flip_cache);
		if (slub_errors() != e0)
			fail("slub_errors() grew by %lu at the end (reports above)",
			     slub_errors() - e0);
	}
	if (atomic_load(&failed)) {
		printf("soak %s: FAIL: %s\n", mode, fail_msg);
		return 1;
	}
	{
		double hwm = hwm_mib();

		printf("soak %s: %ld seconds, %lu ops, peak RSS %.1f MiB, no report "
		       "(flips %lu, busy %lu; forks %lu, execs %lu; malloc runs %lu; agent "
		       "reads %lu, writes %lu)\n",
		       mode, seconds, atomic_load(&ops), hwm > peak ? hwm : peak, flips_done,
		       flips_busy, forks, execs, malloc_runs, agent_reads, agent_writes);
	}
	return 0;
}
