// SPDX-License-Identifier: MIT
/*
 * bench_realloc.c - growing one big buffer with realloc, as a program that
 * appends to a vector or a string does: seconds spent inside realloc, for
 * whichever malloc the process has (run under LD_PRELOAD for the others).
 *
 *   bench_realloc double  1 MiB doubled to 1 GiB
 *   bench_realloc step    8 MiB grown 64 KiB at a time to 256 MiB (past
 *                         three of libslub's 64 MiB slots; some peers take
 *                         seconds per 256 MiB this way)
 *
 * Each new part is written, so the pages are real.  Prints
 * "<pattern> <seconds in realloc> <seconds in all>".
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	int doubling = argc > 1 && !strcmp(argv[1], "double");
	const size_t max = doubling ? (size_t)1 << 30 : (size_t)256 << 20;
	if (argc < 2 || (!doubling && strcmp(argv[1], "step"))) {
		fprintf(stderr, "usage: bench_realloc double|step\n");
		return 2;
	}
	size_t n = doubling ? (size_t)1 << 20 : (size_t)8 << 20;
	double start = now(), in_realloc = 0;
	char *p = malloc(n);
	if (!p)
		return 1;
	memset(p, 1, n);
	while (n < max) {
		size_t next = doubling ? 2 * n : n + (64 << 10);
		double t = now();
		char *q = realloc(p, next);
		in_realloc += now() - t;
		if (!q) {
			fprintf(stderr, "bench_realloc: realloc(%zu) failed\n", next);
			return 1;
		}
		p = q;
		memset(p + n, 2, next - n);
		n = next;
	}
	/* Read it back: a realloc that lost bytes fails here, not silently. */
	for (size_t i = 0; i < n; i += 4096)
		if (p[i] != (i < (doubling ? (size_t)1 << 20 : (size_t)8 << 20) ? 1 : 2)) {
			fprintf(stderr, "bench_realloc: byte %zu lost\n", i);
			return 1;
		}
	free(p);
	printf("%s %.4f %.4f\n", argv[1], in_realloc, now() - start);
	return 0;
}
