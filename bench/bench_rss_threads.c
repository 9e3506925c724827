// SPDX-License-Identifier: MIT
/*
 * bench_rss_threads.c - memory held as threads multiply over the same work:
 * THREADS threads share OBJECTS live objects of 16..511 bytes (each
 * allocates its share, then all hold them at once behind a barrier), each
 * replaces random ones of its own 4 times over, then frees them all.  8
 * threads against 1000 doing the same total work shows what an allocator
 * keeps per thread (caches, arenas) rather than per CPU.
 *
 *   bench_rss_threads THREADS OBJECTS   prints "net_peak_kib stacks_kib"
 *
 * The thread stacks are the benchmark's own (mmap, 64 KiB each, given to
 * pthread_attr_setstack), so no allocator places them; once all threads
 * are joined, mincore() counts their resident pages (stack pages stay
 * resident until unmapped, so this is every page they ever touched,
 * glibc's thread descriptor and TLS included, as they live in the stack).
 * net_peak = VmHWM - the RSS before any thread - those stack pages.
 */
#include "bench_util.h"

#include <sys/mman.h>
#include <unistd.h>

#define STACK (64 * 1024)

static pthread_barrier_t held;
static long share;

static void *worker(void *arg)
{
	uint64_t seed = 0xbf58476d1ce4e5b9ULL * ((uint64_t)(uintptr_t)arg + 1);
	void **mine = malloc((size_t)share * sizeof(*mine));
	for (long i = 0; i < share; i++) {
		mine[i] = malloc(16 + bench_rand(&seed) % 496);
		memset(mine[i], 1, 16);
	}
	pthread_barrier_wait(&held);	/* everyone's share live at once: the peak */
	for (long i = 0; i < 4 * share; i++) {
		size_t k = bench_rand(&seed) % (uint64_t)share;
		free(mine[k]);
		mine[k] = malloc(16 + bench_rand(&seed) % 496);
		memset(mine[k], 2, 16);
	}
	for (long i = 0; i < share; i++)
		free(mine[i]);
	free(mine);
	return NULL;
}

int main(int argc, char **argv)
{
	long threads, objects;
	bench_args(argc, argv, "THREADS OBJECTS", &threads, &objects);
	share = objects / (threads > 0 ? threads : 1);
	if (threads < 1 || share < 1)
		return 2;
	size_t bytes = (size_t)threads * STACK;
	char *stacks = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	pthread_t *t = mmap(NULL, (size_t)threads * sizeof(*t), PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	size_t pages = bytes / (size_t)sysconf(_SC_PAGESIZE);
	unsigned char *in_core = mmap(NULL, pages, PROT_READ | PROT_WRITE,
				      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (stacks == MAP_FAILED || t == MAP_FAILED || in_core == MAP_FAILED)
		return 1;
	memset(in_core, 0, pages);
	pthread_barrier_init(&held, NULL, (unsigned)threads);
	long base = bench_status_kib("VmRSS");
	for (long i = 0; i < threads; i++) {
		pthread_attr_t a;
		pthread_attr_init(&a);
		pthread_attr_setstack(&a, stacks + (size_t)i * STACK, STACK);
		t[i] = bench_spawn(&a, worker, (void *)i);
		pthread_attr_destroy(&a);
	}
	for (long i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	long peak = bench_status_kib("VmHWM");
	size_t resident = 0;
	if (mincore(stacks, bytes, in_core) == 0)
		for (size_t p = 0; p < pages; p++)
			resident += in_core[p] & 1;
	long stack_kib = (long)(resident * (size_t)sysconf(_SC_PAGESIZE) / 1024);
	printf("%ld %ld\n", peak - base - stack_kib, stack_kib);
	return 0;
}
