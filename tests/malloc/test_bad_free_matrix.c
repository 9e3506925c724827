// SPDX-License-Identifier: MIT
/*
 * test_bad_free_matrix.c - release mode's promise under every debug mode:
 * a double free (also with another free between), an interior pointer and
 * a pointer libslub never gave out are reported and ignored, for malloc,
 * kmalloc and kmem_cache_alloc, small objects and large blocks, under each
 * of the 32 combinations of slub_debug's letters F Z P U T, and with the
 * leak check as slubrun --leak-check sets it (U added).  Each mode runs in a child (this program again,
 * with SLUB_OPTIONS); the child marks each case on stderr, commits the bug,
 * allocates again and says whether the new blocks are distinct; the parent
 * reads the case's report and verdict.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <slub.h>
#include "check.h"

static void *opaque(void *p)
{
	__asm__ volatile("" : "+r"(p));
	return p;
}

/* ---- the child: every case in one process ----------------------------------------- */

struct api {
	const char *name;
	void *(*alloc)(size_t size);
	void (*free)(void *p);
};

static struct kmem_cache *cache;

static void *do_kmalloc(size_t size)
{
	return kmalloc(size, GFP_KERNEL);
}

static void *do_cache_alloc(size_t size)
{
	(void)size;
	return kmem_cache_alloc(cache, GFP_KERNEL);
}

static void do_kfree(void *p)
{
	kfree(p);
}

static void do_cache_free(void *p)
{
	kmem_cache_free(cache, p);
}

static const struct api apis[] = {
	{ "malloc", malloc, free },
	{ "kmalloc", do_kmalloc, do_kfree },
	{ "kmem_cache", do_cache_alloc, do_cache_free },
};

static void mark(const char *api, const char *bug, size_t size)
{
	fprintf(stderr, "\n@@ case %s %s %zu\n", api, bug, size);
}

static void verdict(const char *api, const char *bug, size_t size, void **p, int n)
{
	bool distinct = true;
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++)
			distinct &= p[i] != p[j] && p[i] && p[j];
	fprintf(stderr, "\n@@ result %s %s %zu %s\n", api, bug, size, distinct ? "distinct" : "SAME");
}

/* Blocks the leak check must find at exit (the double-free cases' new ones). */
static void *kept[64];
static int nkept;

static __attribute__((noinline)) void run_cases(void)
{
	cache = kmem_cache_create("matrix_40", 40, 0, SLAB_NO_MERGE, NULL);
	static const size_t small = 40, large = 300000;
	char on_stack[64];
	for (size_t a = 0; a < sizeof(apis) / sizeof(apis[0]); a++) {
		const struct api *api = &apis[a];
		for (int big = 0; big < 2; big++) {
			if (big && api->alloc == do_cache_alloc)
				continue;	/* a cache has one size */
			size_t size = big ? large : small;
			void *r[3];

			mark(api->name, "double", size);
			char *p = api->alloc(size);
			api->free(p);
			api->free(opaque(p));
			r[0] = api->alloc(size);
			r[1] = api->alloc(size);
			verdict(api->name, "double", size, r, 2);
			if (api->alloc == malloc && nkept < 62) {
				kept[nkept++] = r[0];
				kept[nkept++] = r[1];
			} else {
				api->free(r[0]);
				api->free(r[1]);
			}

			mark(api->name, "interleaved", size);
			p = api->alloc(size);
			char *q = api->alloc(size);
			api->free(p);
			api->free(q);
			api->free(opaque(p));
			r[0] = api->alloc(size);
			r[1] = api->alloc(size);
			r[2] = api->alloc(size);
			verdict(api->name, "interleaved", size, r, 3);
			for (int i = 0; i < 3; i++)
				api->free(r[i]);

			mark(api->name, "interior", size);
			p = api->alloc(size);
			api->free(opaque(p + 8));
			api->free(p);	/* the real free still works */
			r[0] = api->alloc(size);
			r[1] = api->alloc(size);
			verdict(api->name, "interior", size, r, 2);
			api->free(r[0]);
			api->free(r[1]);
		}
		mark(api->name, "invalid", small);
		api->free(opaque(on_stack));
		void *r[2] = { api->alloc(small), api->alloc(small) };
		verdict(api->name, "invalid", small, r, 2);
		api->free(r[0]);
		api->free(r[1]);
	}
	fprintf(stderr, "\n@@ end\n");
}

/* ---- the parent --------------------------------------------------------------------- */

static char out[8 << 20];

/* The text of the case that starts with @head, up to the next case. */
static const char *case_text(const char *head, size_t *len)
{
	const char *start = strstr(out, head);
	if (!start)
		return NULL;
	const char *end = strstr(start + strlen(head), "\n@@ case ");
	*len = end ? (size_t)(end - start) : strlen(start);
	return start;
}

static bool within(const char *text, size_t len, const char *what)
{
	const char *hit = memmem(text, len, what, strlen(what));
	return hit != NULL;
}

static int modes_failed;

static void check_mode(const char *options, bool leak_check)
{
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	CHECK(n > 0);
	if (n <= 0)
		return;
	self[n] = 0;
	int status = run_self(self, "child", options, out, sizeof(out));
	bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0 && strstr(out, "\n@@ end\n");
	if (!ok)
		fprintf(stderr, "   [%s] child status %#x, %s\n", options, status,
			strstr(out, "\n@@ end\n") ? "ran to its end" : "did not reach its end");
	for (size_t a = 0; a < sizeof(apis) / sizeof(apis[0]); a++) {
		static const char *const bugs[] = { "double", "interleaved", "interior", "invalid" };
		for (int big = 0; big < 2; big++) {
			for (size_t b = 0; b < 4; b++) {
				bool invalid = !strcmp(bugs[b], "invalid");
				if ((big && (invalid || a == 2)))
					continue;
				char head[128], result[160];
				size_t size = big ? 300000 : 40;
				snprintf(head, sizeof(head), "\n@@ case %s %s %zu\n", apis[a].name, bugs[b], size);
				snprintf(result, sizeof(result), "\n@@ result %s %s %zu distinct\n",
					 apis[a].name, bugs[b], size);
				size_t len = 0;
				const char *text = case_text(head, &len);
				/* Interior: "not the start of" an object, or a block's "N bytes into". */
				bool reported = text && (invalid ? within(text, len, "invalid pointer") :
							 b == 2 ? within(text, len, "not the start of") ||
								  within(text, len, "bytes into the block") :
							 within(text, len, "already free") ||
							 within(text, len, "double free"));
				bool distinct = text && within(text, len, result + 1);
				if (!reported || !distinct) {
					ok = false;
					fprintf(stderr, "   [%s] %s %s %zu: %s%s\n", options, apis[a].name,
						bugs[b], size, reported ? "" : "no report; ",
						distinct ? "" : "next allocations not distinct");
				}
			}
		}
	}
	/* kept[] holds them: reachable, so listed under slub_leak_check_reachable only. */
	if (leak_check && (!strstr(out, "leak: still reachable:") || !strstr(out, "allocated in run_cases"))) {
		ok = false;
		fprintf(stderr, "   [%s] the leak check missed the blocks left allocated\n", options);
	}
	if (!ok) {
		modes_failed++;
		if (modes_failed <= 2)
			fprintf(stderr, "   --- its output (start) ---\n%.4000s\n", out);
	}
	CHECK(ok);
}

static void every_mode(void)
{
	SKIP_IF_UNCHECKED_FREE();
	static const char letters[] = "FZPUT";
	for (int leak = 0; leak < 2; leak++)
		for (unsigned int set = 0; set < 32; set++) {
			char flags[8] = "", options[128];
			int k = 0;
			for (int i = 0; i < 5; i++)
				if (set & (1u << i))
					flags[k++] = letters[i];
			flags[k] = 0;
			/* The leak check as slubrun --leak-check sets it: U added to the flags. */
			if (leak && !(set & 8))
				flags[k++] = 'U';
			flags[k] = 0;
			snprintf(options, sizeof(options), "%s%s%s", k ? "slub_debug=" : "", flags,
				 leak ? " slub_leak_check=1 slub_leak_check_reachable=1" : "");
			check_mode(options, leak);
		}
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "child")) {
		run_cases();
		return 0;
	}
	RUN(every_mode);
	return check_done();
}
