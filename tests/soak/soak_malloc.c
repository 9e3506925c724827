// SPDX-License-Identifier: MIT
/*
 * soak_malloc.c - the malloc part of the soak (issue 34), run by soak.c
 * with libslub-malloc.so in LD_PRELOAD: threads malloc, calloc, realloc
 * and free blocks of mixed sizes (some above 8 KiB, a few above 4 MiB),
 * hand blocks to each other to free, check each block's pattern where it
 * is freed, and fork children that allocate and exit.  slub_errors() is
 * found with dlsym: its absence means the library was not preloaded.
 *
 * soak_malloc SECONDS
 * Exit status: 0 clean, 1 a check failed, 3 libslub-malloc not loaded.
 */
#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define THREADS 4
#define SLOTS 1024
#define QSLOTS 512

struct blk {
	unsigned char *p;
	size_t size;
	unsigned char pat;
};

struct thr {
	pthread_t tid;
	int id;
	pthread_mutex_t lock;
	unsigned int head, count;
	struct blk q[QSLOTS];
	struct blk t[SLOTS];
	unsigned int used;
};

static struct thr thr[THREADS];
static atomic_bool stop, bad;
static atomic_ulong nops;

static void die(const char *fmt, const void *p, size_t a, size_t b)
{
	fprintf(stderr, "soak_malloc: ");
	fprintf(stderr, fmt, p, a, b);
	fputc('\n', stderr);
	atomic_store(&bad, true);
	atomic_store(&stop, true);
}

static uint64_t rnd(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

static size_t pick(uint64_t *s)
{
	unsigned int r = rnd(s) % 1000;

	if (r < 600)
		return rnd(s) % 257;
	if (r < 860)
		return 257 + rnd(s) % 8000;
	if (r < 995)
		return 8193 + rnd(s) % 200000;
	return 4 * 1024 * 1024 + rnd(s) % (4 * 1024 * 1024);
}

static bool same(const unsigned char *p, size_t n, unsigned char b, size_t *at)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != b) {
			*at = i;
			return false;
		}
	return true;
}

static void release(struct blk *b)
{
	size_t at;

	if (!same(b->p, b->size, b->pat, &at))
		die("block %p of %zu bytes changed at byte %zu", b->p, b->size, at);
	free(b->p);
	b->p = NULL;
}

static bool get(struct blk *b, uint64_t *s)
{
	size_t at;

	b->size = pick(s);
	b->pat = 1 + rnd(s) % 254;
	if (rnd(s) % 8 == 0) {
		b->p = calloc(1, b->size);
		if (b->p && !same(b->p, b->size, 0, &at)) {
			die("calloc block %p of %zu bytes not zero at %zu", b->p, b->size, at);
			return false;
		}
	} else {
		b->p = malloc(b->size);
	}
	if (!b->p) {
		die("allocation %p of %zu bytes failed (%zu)", NULL, b->size, 0);
		return false;
	}
	if (malloc_usable_size(b->p) < b->size) {
		die("block %p: usable size %zu below %zu", b->p, malloc_usable_size(b->p),
		    b->size);
		return false;
	}
	memset(b->p, b->pat, b->size);
	return true;
}

static void grow(struct blk *b, uint64_t *s)
{
	size_t n = pick(s), keep = n < b->size ? n : b->size, at;
	unsigned char *q;

	if (!same(b->p, b->size, b->pat, &at)) {
		die("block %p of %zu bytes changed at byte %zu before realloc", b->p, b->size, at);
		return;
	}
	q = realloc(b->p, n ? n : 1);
	if (!q) {
		die("realloc(%p, %zu) failed (%zu)", b->p, n, 0);
		return;
	}
	if (!same(q, keep, b->pat, &at)) {
		die("realloc'd block %p (%zu bytes kept) changed at byte %zu", q, keep, at);
		return;
	}
	b->p = q;
	b->size = n;
	b->pat = 1 + rnd(s) % 254;
	memset(q, b->pat, n);
}

static void drain(struct thr *t)
{
	for (;;) {
		struct blk b;

		pthread_mutex_lock(&t->lock);
		if (!t->count) {
			pthread_mutex_unlock(&t->lock);
			return;
		}
		b = t->q[t->head];
		t->head = (t->head + 1) % QSLOTS;
		t->count--;
		pthread_mutex_unlock(&t->lock);
		release(&b);
	}
}

static void *run(void *arg)
{
	struct thr *t = arg;
	uint64_t s = 0x2545f4914f6cdd1dull * (t->id + 1) ^ (uint64_t)getpid();
	unsigned long n = 0;

	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		unsigned int r = rnd(&s) % 100;

		if (r < 45 || !t->used) {
			if (t->used == SLOTS) {
				unsigned int i = rnd(&s) % t->used;

				release(&t->t[i]);
				t->t[i] = t->t[--t->used];
			}
			if (!get(&t->t[t->used], &s))
				break;
			t->used++;
		} else if (r < 75) {
			unsigned int i = rnd(&s) % t->used;

			release(&t->t[i]);
			t->t[i] = t->t[--t->used];
		} else if (r < 88) {
			unsigned int i = rnd(&s) % t->used;
			struct thr *to = &thr[rnd(&s) % THREADS];
			bool put = false;

			if (to != t) {
				pthread_mutex_lock(&to->lock);
				if (to->count < QSLOTS) {
					to->q[(to->head + to->count++) % QSLOTS] = t->t[i];
					put = true;
				}
				pthread_mutex_unlock(&to->lock);
			}
			if (!put)
				release(&t->t[i]);
			t->t[i] = t->t[--t->used];
		} else if (r < 97) {
			grow(&t->t[rnd(&s) % t->used], &s);
		} else {
			drain(t);
		}
		if (++n % 1024 == 0) {
			atomic_fetch_add_explicit(&nops, 1024, memory_order_relaxed);
			drain(t);
		}
	}
	while (t->used)
		release(&t->t[--t->used]);
	drain(t);
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned long (*errors)(void) = (unsigned long (*)(void))dlsym(RTLD_DEFAULT, "slub_errors");
	long secs = argc > 1 ? atol(argv[1]) : 10;
	time_t end = time(NULL) + secs;
	unsigned long e0, forks = 0;

	if (!errors) {
		fprintf(stderr, "soak_malloc: slub_errors not found: libslub-malloc.so not "
				"preloaded\n");
		return 3;
	}
	e0 = errors();
	for (int i = 0; i < THREADS; i++) {
		thr[i].id = i;
		pthread_mutex_init(&thr[i].lock, NULL);
		pthread_create(&thr[i].tid, NULL, run, &thr[i]);
	}
	while (time(NULL) < end && !atomic_load(&stop)) {
		pid_t pid = fork();

		if (pid == 0) {
			uint64_t s = (uint64_t)getpid() | 1;
			struct blk b[64];

			for (int i = 0; i < 64; i++)
				if (!get(&b[i], &s))
					_exit(1);
			for (int i = 0; i < 64; i++)
				release(&b[i]);
			_exit(atomic_load(&bad) || errors() != e0);
		}
		if (pid > 0) {
			int st = 0;

			waitpid(pid, &st, 0);
			if (!WIFEXITED(st) || WEXITSTATUS(st)) {
				fprintf(stderr, "soak_malloc: forked child status 0x%x\n", st);
				atomic_store(&bad, true);
			}
			forks++;
		}
		if (errors() != e0) {
			fprintf(stderr, "soak_malloc: slub_errors() grew by %lu\n", errors() - e0);
			atomic_store(&bad, true);
			break;
		}
		usleep(250000);
	}
	atomic_store(&stop, true);
	for (int i = 0; i < THREADS; i++)
		pthread_join(thr[i].tid, NULL);
	for (int i = 0; i < THREADS; i++)
		drain(&thr[i]);
	if (errors() != e0) {
		fprintf(stderr, "soak_malloc: slub_errors() grew by %lu\n", errors() - e0);
		atomic_store(&bad, true);
	}
	fprintf(stderr, "soak_malloc: %ld s, %lu ops, %lu forks, %s\n", secs, atomic_load(&nops),
		forks, atomic_load(&bad) ? "FAILED" : "clean");
	return atomic_load(&bad) ? 1 : 0;
}
