// SPDX-License-Identifier: MIT
/*
 * test_kfence_malloc.c - KFENCE under the malloc library: each case runs in
 * a child (this program again) with every allocation sampled
 * (kfence.sample_every=1), commits one heap bug and goes on; the parent
 * checks the child's report in the kernel's KFENCE format and that the
 * child reached its end.  Out-of-bounds writes and reads on both sides,
 * reads and writes after free, invalid and double frees, slack corruption
 * found at the free, or at exit for a block never freed; realloc and
 * malloc_usable_size of a pool block.
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

#define DONE "-- the program went on --"
#define PAGE 4096

/* A 32-byte block at its page's end (@end) or start: pool objects alternate. */
static char *placed(bool end)
{
	for (int i = 0; i < 4; i++) {
		char *p = hidden_ptr(malloc(32));
		uintptr_t off = (uintptr_t)p & (PAGE - 1);
		if (end ? off == PAGE - 32 : off == 0)
			return p;
	}
	return NULL;
}

static __attribute__((noinline)) void bug(const char *name)
{
	if (!strcmp(name, "oob_write_right"))
		poke_byte(placed(true), 32, 1);
	else if (!strcmp(name, "oob_write_left"))
		poke_byte(placed(false), -1, 1);
	else if (!strcmp(name, "oob_read_right"))
		peek_byte(placed(true), 40);
	else if (!strcmp(name, "oob_read_left"))
		peek_byte(placed(false), -16);
	else if (!strcmp(name, "uaf_read")) {
		char *p = hidden_ptr(malloc(100));
		free(p);
		peek_byte(p, 0);
	} else if (!strcmp(name, "uaf_write")) {
		char *p = hidden_ptr(calloc(1, 100));
		free(p);
		poke_byte(p, 50, 1);
	} else if (!strcmp(name, "invalid_free")) {
		char *p = hidden_ptr(malloc(64));
		free(p + 8);
	} else if (!strcmp(name, "double_free")) {
		char *p = hidden_ptr(malloc(64));
		free(p);
		free(p);
	} else if (!strcmp(name, "corruption")) {
		char *p = placed(false);
		p[33] = 0x7f;	/* the slack: no fault, found at the free */
		free(p);
	} else if (!strcmp(name, "corruption_kept")) {
		char *p = placed(false);
		p[33] = 0x7f;	/* never freed: found at exit */
	} else if (!strcmp(name, "realloc")) {
		char *p = hidden_ptr(malloc(40));
		memset(p, 'a', 40);
		if (malloc_usable_size(p) < 40 || malloc_usable_size(p) > 64)	/* its class's */
			printf("usable size %zu\n", malloc_usable_size(p));
		char *q = hidden_ptr(realloc(p, 3000));
		for (int i = 0; i < 40; i++)
			if (q[i] != 'a')
				printf("realloc lost byte %d\n", i);
		free(q);
		peek_byte(p, 0);	/* the old block, freed by realloc */
	}
}

static const struct {
	const char *name, *expect;
} cases[] = {
	{ "oob_write_right", "BUG: KFENCE: out-of-bounds write in poke" },
	{ "oob_write_left", "BUG: KFENCE: out-of-bounds write in poke" },
	{ "oob_read_right", "BUG: KFENCE: out-of-bounds read in peek" },
	{ "oob_read_left", "BUG: KFENCE: out-of-bounds read in peek" },
	{ "uaf_read", "BUG: KFENCE: use-after-free read in peek" },
	{ "uaf_write", "BUG: KFENCE: use-after-free write in poke" },
	{ "invalid_free", "BUG: KFENCE: invalid free in " },
	{ "double_free", "BUG: KFENCE: invalid free in " },
	{ "corruption", "BUG: KFENCE: memory corruption in " },
	{ "realloc", "BUG: KFENCE: use-after-free read in peek" },
	{ "corruption_kept", "BUG: KFENCE: memory corruption of an object never freed, found at exit" },
};

int main(int argc, char **argv)
{
	if (argc == 2) {
		bug(argv[1]);
		printf("%s\n", DONE);
		return 0;
	}
	static char out[1 << 16];
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int status = run_self(argv[0], cases[i].name, "kfence.sample_every=1", out, sizeof(out));
		bool ok = WIFEXITED(status) && !WEXITSTATUS(status) && strstr(out, DONE) &&
			  strstr(out, cases[i].expect) && !strstr(out, "lost byte") &&
			  !strstr(out, "usable size");
		/* Its stacks: the allocation's, and the free's where there was one. */
		ok = ok && strstr(out, "allocated by task");
		fprintf(stderr, "== %s: %s\n", cases[i].name, ok ? "ok" : "FAILED");
		if (!ok)
			fputs(out, stderr);
		CHECK(ok);
	}
	/* Off by default: the same bug goes unseen, and nothing comes from a pool. */
	int status = run_self(argv[0], "uaf_read", "", out, sizeof(out));
	CHECK(WIFEXITED(status) && strstr(out, DONE) && !strstr(out, "KFENCE"));
	return check_done();
}
