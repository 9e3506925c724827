// SPDX-License-Identifier: MIT
/*
 * catch_bugs - one classic heap bug per run, for run_catch.sh's table of
 * what each mode catches: `catch_bugs CASE` commits it on a 64-byte block
 * (plain malloc: the allocator comes in by LD_PRELOAD, or valgrind's),
 * then allocates a little more and prints "survived".  Cases:
 *   over-write-K, over-memcpy-K, under-write-K, under-memcpy-K, over-read-K
 *     (K = 1, 16, 32 bytes past either end; "-kept": the block is never freed)
 *   uaf-read, uaf-write, double-free, interleaved-free, free-stack,
 *   free-interior, zero-write, zero-read
 * `catch_bugs list` prints them all.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SIZE 64

static volatile char sink;

/* Out of line, so the compiler sees no bug it could fold away or warn of. */
static __attribute__((noinline)) char *block(size_t n)
{
	char *p = malloc(n);
	__asm__ volatile("" : "+r"(p));
	return p;
}

static __attribute__((noinline)) void release(void *p)
{
	__asm__ volatile("" : "+r"(p));
	free(p);
}

static const char *const cases[] = {
	"over-write-1", "over-write-16", "over-write-32", "over-write-1-kept",
	"over-memcpy-1", "over-memcpy-16", "over-memcpy-32", "over-memcpy-1-kept",
	"under-write-1", "under-write-16", "under-write-32", "under-write-1-kept",
	"under-memcpy-1", "under-memcpy-16", "under-memcpy-32",
	"over-read-1", "over-read-16", "over-read-32",
	"uaf-read", "uaf-write", "double-free", "interleaved-free", "free-stack",
	"free-interior", "zero-write", "zero-read",
};

/* The case's bug; 0 if it is one, -1 if the name is none. */
static int commit(const char *c)
{
	char src[SIZE + 64];
	memset(src, 'x', sizeof(src));
	int k = 0;
	int kept = strstr(c, "-kept") != NULL;
	if (sscanf(c, "over-write-%d", &k) == 1) {
		char *p = block(SIZE);
		p[SIZE - 1 + k] = 'x';
		if (!kept)
			release(p);
	} else if (sscanf(c, "over-memcpy-%d", &k) == 1) {
		char *p = block(SIZE);
		memcpy(p, src, SIZE + (size_t)k);
		if (!kept)
			release(p);
	} else if (sscanf(c, "under-write-%d", &k) == 1) {
		char *p = block(SIZE);
		p[-k] = 'x';
		if (!kept)
			release(p);
	} else if (sscanf(c, "under-memcpy-%d", &k) == 1) {
		char *p = block(SIZE);
		memcpy(p - k, src, (size_t)k);
		release(p);
	} else if (sscanf(c, "over-read-%d", &k) == 1) {
		char *p = block(SIZE);
		sink = p[SIZE - 1 + k];
		release(p);
	} else if (!strcmp(c, "uaf-read")) {
		char *p = block(SIZE);
		release(p);
		sink = p[8];
	} else if (!strcmp(c, "uaf-write")) {
		char *p = block(SIZE);
		release(p);
		p[8] = 'x';
	} else if (!strcmp(c, "double-free")) {
		char *p = block(SIZE);
		release(p);
		release(p);
	} else if (!strcmp(c, "interleaved-free")) {
		char *p = block(SIZE), *q = block(SIZE);
		release(p);
		release(q);
		release(p);
	} else if (!strcmp(c, "free-stack")) {
		release(src);
	} else if (!strcmp(c, "free-interior")) {
		char *p = block(SIZE);
		release(p + 16);
	} else if (!strcmp(c, "zero-write")) {
		char *p = block(0);
		p[0] = 'x';
		release(p);
	} else if (!strcmp(c, "zero-read")) {
		char *p = block(0);
		sink = p[0];
		release(p);
	} else {
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "list")) {
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
			printf("%s\n", cases[i]);
		return argc < 2;
	}
	if (commit(argv[1])) {
		fprintf(stderr, "catch_bugs: no case %s\n", argv[1]);
		return 2;
	}
	/* More heap traffic after the bug, as a program would go on. */
	for (int i = 0; i < 1000; i++)
		release(block(SIZE));
	printf("survived\n");
	return 0;
}
