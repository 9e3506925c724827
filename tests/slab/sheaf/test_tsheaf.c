// SPDX-License-Identifier: MIT
/*
 * test_tsheaf.c - thread sheaves (src/slab/sheaf/tsheaf.c), run with slub_rseq=0
 * (ctest sets it): kmalloc's caches are taken for malloc's here
 * (slub_malloc_library below).  The mode and which caches get one; the
 * bound of a sheaf; many threads in several classes, whose objects are
 * back in the slabs once they exit; remote frees; double frees of parked
 * objects (this thread's and another's) and bad pointers reported; shrink
 * flushing the caller's sheaf; a fork child flushing the threads it lost;
 * the option's values.
 */
#define _GNU_SOURCE
#include <pthread.h>

#include <slub.h>
#include "check.h"
#include "base/options.h"
#include "slab/core/slab.h"
#include "slab/core/slab_common.h"

/* kmalloc's caches are malloc's, as in libslub-malloc.so: they get thread sheaves. */
const bool slub_malloc_library = true;

#define THREADS 8
static const unsigned int sizes[] = { 16, 64, 256, 1024 };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

static struct kmem_cache *cache_of(unsigned int size)
{
	char name[32];
	snprintf(name, sizeof(name), "kmalloc-%u", size >= 1024 ? size / 1024 : size);
	if (size >= 1024)
		snprintf(name, sizeof(name), "kmalloc-%uk", size / 1024);
	return slub_find_cache(name);
}

/* The objects attribute: in use, parked objects not counted. */
static long objects_attr(struct kmem_cache *s)
{
	char buf[64];
	CHECK(slub_attr_read(s, "objects", buf, sizeof(buf)) > 0);
	return atol(buf);
}

/* This thread's sheaf of @s: its count, and its room (0: none yet). */
static unsigned int own_size(struct kmem_cache *s, unsigned int *room)
{
	struct tsheaf *sh = tsheaf_at(tsheaf_self, s->tsheaf_off);
	if (room)
		*room = sh->room;
	return sh->size;
}

static void mode(void)
{
	CHECK(!strcmp(slub_percpu_mode(), "cmpxchg16b + thread sheaves"));
	CHECK(cache_of(64)->tsheaf_off != 0);
	CHECK(cache_of(8192)->tsheaf_off != 0);
	struct kmem_cache *own = kmem_cache_create("tsheaf-own", 64, 0, SLAB_NO_MERGE, NULL);
	CHECK_EQ(own->tsheaf_off, 0);		/* the kmem_cache API keeps cpu slabs */
	void *p = kmem_cache_alloc(own, GFP_KERNEL);
	kmem_cache_free(own, p);
	kmem_cache_destroy(own);
	struct kmem_cache *dbg = kmem_cache_create("tsheaf-debug", 64, 0,
						   SLAB_KMALLOC | SLAB_RED_ZONE | SLAB_NO_MERGE, NULL);
	CHECK(dbg != NULL);
	if (dbg)
		CHECK_EQ(dbg->tsheaf_off, 0);	/* never a debug cache (a kmalloc one stays) */
}

/* One thread's sheaf never holds more than its room, at most TSHEAF_CAPACITY. */
static void bound_and_shrink(void)
{
	enum { N = 200 };
	void *p[N];
	for (unsigned int k = 0; k < NSIZES; k++) {
		struct kmem_cache *s = cache_of(sizes[k]);
		long before = objects_attr(s);
		for (int i = 0; i < N; i++)
			p[i] = kmalloc(sizes[k], GFP_KERNEL);
		unsigned int room, peak = 0;
		for (int i = 0; i < N; i++) {
			kfree(p[i]);
			unsigned int n = own_size(s, &room);
			peak = n > peak ? n : peak;
		}
		CHECK(room > 0 && room <= TSHEAF_CAPACITY);
		CHECK_EQ(peak, room);			/* filled to its room, never past */
		CHECK(tsheaf_parked(s) >= own_size(s, NULL));
		CHECK_EQ(objects_attr(s), before);	/* parked objects are free */
		/* calloc's path pops and zeroes. */
		char *z = kmalloc(sizes[k], GFP_KERNEL | __GFP_ZERO);
		bool zero = true;
		for (unsigned int i = 0; i < sizes[k]; i++)
			zero = zero && !z[i];
		CHECK(zero);
		kfree(z);
		kmem_cache_shrink(s);			/* flushes this thread's sheaf */
		CHECK_EQ(own_size(s, NULL), 0);
	}
	/* The room shrinks for big objects: 32 KiB of them at most. */
	struct kmem_cache *big = cache_of(8192);
	kfree(kmalloc(8192, GFP_KERNEL));
	unsigned int room;
	own_size(big, &room);
	CHECK_EQ(room, 4);
}

static pthread_barrier_t barrier;
static unsigned long thread_errors;

/* Allocate and free in every class, hold some, check the bound, then free all and exit. */
static void *worker(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg;
	enum { HELD = 64 };
	void *held[NSIZES][HELD] = { { 0 } };
	for (int round = 0; round < 20000; round++) {
		unsigned int k = (unsigned int)rand_r(&seed) % NSIZES;
		unsigned int i = (unsigned int)rand_r(&seed) % HELD;
		kfree(held[k][i]);
		held[k][i] = kmalloc(sizes[k], GFP_KERNEL);
		memset(held[k][i], 0x5a, sizes[k]);
		unsigned int room, n = own_size(cache_of(sizes[k]), &room);
		if (n > room || room > TSHEAF_CAPACITY)
			__atomic_add_fetch(&thread_errors, 1, __ATOMIC_RELAXED);
	}
	for (unsigned int k = 0; k < NSIZES; k++)
		for (int i = 0; i < HELD; i++)
			kfree(held[k][i]);
	pthread_barrier_wait(&barrier);	/* every thread's sheaves full of objects at once */
	pthread_barrier_wait(&barrier);
	return NULL;
}

static void threads_exit_flush(void)
{
	long before[NSIZES];
	for (unsigned int k = 0; k < NSIZES; k++) {
		kmem_cache_shrink(cache_of(sizes[k]));
		before[k] = objects_attr(cache_of(sizes[k]));
	}
	unsigned long threads_before = tsheaf_threads();
	pthread_t t[THREADS];
	pthread_barrier_init(&barrier, NULL, THREADS + 1);
	for (int i = 0; i < THREADS; i++)
		CHECK_EQ(pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)(i + 1)), 0);
	pthread_barrier_wait(&barrier);
	CHECK_EQ(tsheaf_threads(), threads_before + THREADS);
	unsigned long parked = 0;
	for (unsigned int k = 0; k < NSIZES; k++) {
		struct kmem_cache *s = cache_of(sizes[k]);
		unsigned long p = tsheaf_parked(s);
		CHECK(p <= (THREADS + 1) * TSHEAF_CAPACITY);	/* the memory bound */
		parked += p;
		CHECK_EQ(objects_attr(s), before[k]);	/* parked ones are free */
	}
	CHECK(parked > 0);
	pthread_barrier_wait(&barrier);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&barrier);
	CHECK_EQ(thread_errors, 0);
	CHECK_EQ(tsheaf_threads(), threads_before);
	for (unsigned int k = 0; k < NSIZES; k++) {
		struct kmem_cache *s = cache_of(sizes[k]);
		/* Back in the slabs: nothing parked by the threads, nothing counted in use. */
		CHECK_EQ(tsheaf_parked(s), own_size(s, NULL));
		struct slab_info info;
		slab_get_info(s, &info);
		CHECK_EQ(objects_attr(s), before[k]);
		kmem_cache_shrink(s);
		CHECK_EQ(tsheaf_parked(s), 0);
		CHECK_EQ(slab_validate_cache(s), 0);
	}
}

/* Thread A allocates, thread B frees: B parks them and gives them back at its exit. */
enum { REMOTE = 1000 };
static void *remote[REMOTE];

static void *remote_alloc(void *arg)
{
	(void)arg;
	for (int i = 0; i < REMOTE; i++)
		remote[i] = kmalloc(128, GFP_KERNEL);
	return NULL;
}

static void *remote_free(void *arg)
{
	(void)arg;
	for (int i = 0; i < REMOTE; i++)
		kfree(remote[i]);
	return NULL;
}

static void remote_frees(void)
{
	struct kmem_cache *s = cache_of(128);
	kmem_cache_shrink(s);
	long before = objects_attr(s);
	unsigned long errors = slub_errors();
	pthread_t a, b;
	pthread_create(&a, NULL, remote_alloc, NULL);
	pthread_join(a, NULL);
	CHECK_EQ(objects_attr(s), before + REMOTE);
	pthread_create(&b, NULL, remote_free, NULL);
	pthread_join(b, NULL);
	CHECK_EQ(objects_attr(s), before);
	CHECK_EQ(tsheaf_parked(s), 0);
	CHECK_EQ(slub_errors(), errors);
	CHECK_EQ(slab_validate_cache(s), 0);
}

/* Double frees of parked objects, here and in another thread's sheaf; bad pointers. */
static void *park_one(void *arg)
{
	kfree(arg);
	pthread_barrier_wait(&barrier);	/* parked in this thread's sheaf */
	pthread_barrier_wait(&barrier);
	return NULL;
}

static void double_and_bad_frees(void)
{
	char *p = kmalloc(64, GFP_KERNEL);
	kfree(p);
	CHECK(own_size(cache_of(64), NULL) > 0);
	EXPECT_REPORT(kfree(p), "double free");
	/* Parked twice, with frees in between. */
	char *q = kmalloc(64, GFP_KERNEL);
	kfree(q);
	kfree(kmalloc(64, GFP_KERNEL));
	EXPECT_REPORT(kfree(q), "double free");
	/* In another thread's sheaf. */
	char *r = kmalloc(64, GFP_KERNEL);
	pthread_t t;
	pthread_barrier_init(&barrier, NULL, 2);
	pthread_create(&t, NULL, park_one, r);
	pthread_barrier_wait(&barrier);
	EXPECT_REPORT(kfree(r), "double free");
	pthread_barrier_wait(&barrier);
	pthread_join(t, NULL);
	pthread_barrier_destroy(&barrier);
	/* Not an object's start. */
	char *s = kmalloc(64, GFP_KERNEL);
	EXPECT_REPORT(kfree(s + 8), "not the start of an object");
	kfree(s);
	CHECK_EQ(slab_validate_cache(cache_of(64)), 0);
}

/* A child forked while other threads hold parked objects gives them back. */
static void fork_child_flushes(void)
{
	struct kmem_cache *s = cache_of(256);
	kmem_cache_shrink(s);
	long before = objects_attr(s);
	char *r = kmalloc(256, GFP_KERNEL);
	pthread_t t;
	pthread_barrier_init(&barrier, NULL, 2);
	pthread_create(&t, NULL, park_one, r);
	pthread_barrier_wait(&barrier);
	CHECK(tsheaf_parked(s) > 0);
	pid_t pid = fork();
	if (pid == 0) {
		bool ok = tsheaf_threads() == 1 && tsheaf_parked(s) == own_size(s, NULL) &&
			  objects_attr(s) == before && slab_validate_cache(s) == 0;
		_exit(ok ? 0 : 1);
	}
	int status = -1;
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	pthread_barrier_wait(&barrier);
	pthread_join(t, NULL);
	pthread_barrier_destroy(&barrier);
	CHECK_EQ(objects_attr(s), before);
}

static void option(void)
{
	CHECK_EQ(slub_opt(thread_sheaves), 1);
	REJECT("slub_thread_sheaves=2", "slub_thread_sheaves");
	REJECT("slub_thread_sheaves=maybe", "slub_thread_sheaves");
	CHECK_EQ(slub_opt(thread_sheaves), 1);
}

int main(void)
{
	kfree(kmalloc(8, GFP_KERNEL));	/* start the slab layer */
	if (slub_percpu_rseq || !slub_opt(thread_sheaves)) {
		fprintf(stderr, "   thread sheaves need slub_rseq=0 and slub_thread_sheaves=1: skipped\n");
		return 0;
	}
	RUN(mode);
	RUN(bound_and_shrink);
	RUN(threads_exit_flush);
	RUN(remote_frees);
	RUN(double_and_bad_frees);
	RUN(fork_child_flushes);
	RUN(option);
	CHECK_EQ(slab_validate_all(), 0);
	return check_done();
}
