// SPDX-License-Identifier: MIT
/*
 * bench_util.h - the little the suite's benchmarks (bench/suite.sh) share:
 * a monotonic clock, a xorshift generator, the process's resident set from
 * /proc, malloc_trim when the allocator in the process has one, and a
 * thread starter that fails loudly.  Header-only: each benchmark stays one
 * small file that any allocator can be preloaded under.
 */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H

#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline double bench_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static inline uint64_t bench_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* A field of /proc/self/status in KiB: "VmRSS" now, "VmHWM" the peak. */
static inline long bench_status_kib(const char *field)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kib = -1;
	size_t n = strlen(field);
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, field, n) && line[n] == ':')
			kib = atol(line + n + 1);
	if (f)
		fclose(f);
	return kib;
}

/*
 * malloc_trim(0) where the allocator in use defines it.  glibc always
 * exports one, so a preloaded peer without its own would find glibc's,
 * which trims an arena nobody used: it is called only when it lives in the
 * same library as malloc.  Returns whether it was called.
 */
static inline int bench_trim(void)
{
	int (*trim)(size_t) = (int (*)(size_t))dlsym(RTLD_DEFAULT, "malloc_trim");
	void *alloc = dlsym(RTLD_DEFAULT, "malloc");
	Dl_info t, m;
	if (!trim || !alloc || !dladdr((void *)trim, &t) || !dladdr(alloc, &m) ||
	    strcmp(t.dli_fname, m.dli_fname))
		return 0;
	trim(0);
	return 1;
}

/* The two numbers every threaded benchmark takes, or its usage and exit 2. */
static inline void bench_args(int argc, char **argv, const char *usage, long *a, long *b)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s %s\n", argv[0], usage);
		exit(2);
	}
	*a = atol(argv[1]);
	*b = atol(argv[2]);
}

static inline pthread_t bench_spawn(const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	pthread_t t;
	int err = pthread_create(&t, attr, fn, arg);
	if (err) {
		fprintf(stderr, "pthread_create: %s\n", strerror(err));
		exit(1);
	}
	return t;
}

#endif
