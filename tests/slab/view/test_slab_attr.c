// SPDX-License-Identifier: MIT
/*
 * test_slab_attr - the /sys/kernel/slab attribute table: every attribute
 * of every cache reads as the kernel's file would, geometry reads back
 * under the order options and after an order write, writes take good
 * values and refuse bad ones with the kernel's errors, object counts match
 * what a test put there, and reads run safely while 8 threads allocate.
 * With --options (run under slub_min_order/max_order/min_objects), the
 * geometry checks follow those options.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "base/options.h"
#include "slab/core/slab.h"

static char buf[16384];

/* The attribute's text, or "" after a failed check. */
static const char *attr(struct kmem_cache *s, const char *name)
{
	ssize_t n = slub_attr_read(s, name, buf, sizeof(buf));
	if (n < 0) {
		fprintf(stderr, "   read %s/%s: %zd\n", slub_cache_name(s), name, n);
		CHECK(n >= 0);
		buf[0] = 0;
	}
	return buf;
}

static unsigned long attr_ul(struct kmem_cache *s, const char *name)
{
	return strtoul(attr(s, name), NULL, 10);
}

static ssize_t write_attr(struct kmem_cache *s, const char *name, const char *text)
{
	return slub_attr_write(s, name, text, strlen(text));
}

/* One number and a newline, or a sum with " N0=" / " C<cpu>=" parts. */
static bool well_formed(const char *name, const char *text, size_t len)
{
	if (len != strlen(text))
		return false;
	if (!strcmp(name, "ctor") || !strcmp(name, "shrink") || !strcmp(name, "validate"))
		return len == 0 || text[len - 1] == '\n';
	if (!len || text[len - 1] != '\n')
		return false;
	const char *p = text;
	if (*p < '0' || *p > '9')
		return false;
	while (*p && *p != '\n' && *p != ' ')
		p++;
	while (*p == ' ') {	/* " N0=12" or " C1=3" or " C1=3(1)" */
		if ((p[1] != 'N' && p[1] != 'C') || !strchr(p, '='))
			return false;
		p = strchr(p + 1, ' ') ? strchr(p + 1, ' ') : strchr(p, '\n');
	}
	return *p == '\n' && !p[1];
}

static int read_all(struct kmem_cache *s, void *arg)
{
	(void)arg;
	unsigned int mode;
	for (unsigned int i = 0; slub_attr_name(i, &mode); i++) {
		const char *name = slub_attr_name(i, &mode);
		ssize_t n = slub_attr_read(s, name, buf, sizeof(buf));
		if (!strcmp(name, "alloc_calls") || !strcmp(name, "free_calls")) {
			CHECK_EQ(n, -ENOSYS);	/* no tracks recorded yet, as the kernel without U */
			continue;
		}
		if (n < 0 || !well_formed(name, buf, (size_t)n)) {
			fprintf(stderr, "   %s/%s: %zd '%s'\n", slub_cache_id(s), name, n, n >= 0 ? buf : "");
			CHECK(!"well formed");
		}
		CHECK(mode == 0444 || mode == 0644);
	}
	return 0;
}

static void every_attribute_of_every_cache(void)
{
	struct kmem_cache *own = kmem_cache_create("attr-ctor", 100, 0, 0, (void (*)(void *))free);
	CHECK_EQ(slub_for_each_cache(read_all, NULL), 0);
	/* The names the kernel has, all here. */
	static const char *const kernel_names[] = {
		"slab_size", "object_size", "objs_per_slab", "order", "min_partial", "cpu_partial",
		"slabs_cpu_partial", "objects", "objects_partial", "total_objects", "slabs",
		"partial", "cpu_slabs", "ctor", "aliases", "align", "hwcache_align",
		"reclaim_account", "destroy_by_rcu", "cache_dma", "sanity_checks", "red_zone",
		"poison", "store_user", "trace", "usersize", "shrink", "validate",
	};
	CHECK_EQ(slub_attr_read(own, "alloc_calls", buf, sizeof(buf)), -ENOSYS);
	CHECK_EQ(slub_attr_read(own, "free_calls", buf, sizeof(buf)), -ENOSYS);
	for (size_t i = 0; i < sizeof(kernel_names) / sizeof(kernel_names[0]); i++)
		CHECK(slub_attr_read(own, kernel_names[i], buf, sizeof(buf)) >= 0);
	/* The constructor, as the kernel's %pS (free is in libc's dynamic symbols, maybe as an alias). */
	const char *ctor_text = attr(own, "ctor");
	CHECK(strstr(ctor_text, "free+0x0/0x") && ctor_text[strlen(ctor_text) - 1] == '\n');
	CHECK(slub_attr_read(own, "no_such_attribute", buf, sizeof(buf)) == -ENOENT);
	CHECK(slub_attr_read(own, "slab_size", buf, 3) == -ENOSPC);	/* "112\n" and a NUL */
	CHECK(slub_attr_read(own, "slab_size", buf, 5) == 4);
	CHECK(!strcmp(attr(slub_find_cache("kmalloc-64"), "slab_size"), "64\n"));
	CHECK(!strcmp(attr(slub_find_cache("kmalloc-64"), "hwcache_align"), "0\n"));
	CHECK(!strcmp(attr(slub_find_cache("kmem_cache"), "hwcache_align"), "1\n"));
	CHECK(!strcmp(attr(slub_find_cache("kmem_cache"), "aliases"), "0\n"));
	kmem_cache_destroy(own);
}

static bool options_mode;

/* Geometry under the options in force, and after an order write. */
static void geometry_reads_back(void)
{
	struct kmem_cache *s = kmem_cache_create("attr-geo", 300, 0, SLAB_NO_MERGE, NULL);
	CHECK_EQ(attr_ul(s, "slab_size"), s->size);
	CHECK_EQ(attr_ul(s, "object_size"), 300);
	CHECK_EQ(attr_ul(s, "align"), 8);
	CHECK_EQ(attr_ul(s, "order"), oo_order(s->oo));
	CHECK_EQ(attr_ul(s, "objs_per_slab"), oo_objects(s->oo));
	CHECK_EQ(attr_ul(s, "min_partial"), 5);	/* ilog2(304) / 2 = 4, at least 5 */
	if (options_mode) {
		/* slub_min_order=3 slub_max_order=4 slub_min_objects=100: 30000 bytes -> order 3 */
		CHECK_EQ(attr_ul(s, "order"), 3);
		CHECK_EQ(attr_ul(s, "objs_per_slab"), (4096 << 3) / 304);
	}
	/* Write a larger order: new slabs follow it, old ones keep theirs. */
	void *old[4];
	for (int i = 0; i < 4; i++)
		old[i] = kmem_cache_alloc(s, GFP_KERNEL);
	unsigned int old_order = oo_order(s->oo), old_objs = oo_objects(s->oo);
	unsigned int new_order = options_mode ? 4 : old_order + 1;
	char text[16];
	snprintf(text, sizeof(text), "%u\n", new_order);
	CHECK_EQ(write_attr(s, "order", text), (ssize_t)strlen(text));
	CHECK_EQ(attr_ul(s, "order"), new_order);
	CHECK_EQ(attr_ul(s, "objs_per_slab"), (4096u << new_order) / s->size);
	/* Enough objects to need slabs of the new order beside the first. */
	unsigned int n = old_objs + 2 * ((4096u << new_order) / s->size);
	void **p = calloc(n, sizeof(void *));
	for (unsigned int i = 0; i < n; i++)
		p[i] = kmem_cache_alloc(s, GFP_KERNEL);
	unsigned long slabs = attr_ul(s, "slabs"), total = attr_ul(s, "total_objects");
	/* The first slab of the old order, the rest of the new (none full of another size). */
	CHECK_EQ(total, old_objs + (slabs - 1) * ((4096u << new_order) / s->size));
	CHECK_EQ(slab_validate_cache(s), 0);
	for (unsigned int i = 0; i < n; i++)
		kmem_cache_free(s, p[i]);
	for (int i = 0; i < 4; i++)
		kmem_cache_free(s, old[i]);
	free(p);
	CHECK_EQ(kmem_cache_shrink(s), 0);
	kmem_cache_destroy(s);
}

static void writes_good_and_bad(void)
{
	struct kmem_cache *s = kmem_cache_create("attr-write", 128, 0, SLAB_NO_MERGE, NULL);
	unsigned long e0 = slub_errors();
	/* order: within the options' range and one object at least. */
	/* Options mode: slub_min_order=3 slub_max_order=4; else 0 and 3. */
	const char *good = options_mode ? "4" : "2";
	const char *high = options_mode ? "5" : "4";
	if (options_mode)
		CHECK_EQ(write_attr(s, "order", "2"), -EINVAL);	/* below slub_min_order */
	else
		CHECK_EQ(write_attr(s, "order", "0"), 1);	/* one page, as the kernel's */
	CHECK_EQ(write_attr(s, "order", good), 1);
	CHECK_EQ(attr_ul(s, "order"), good[0] - '0');
	CHECK_EQ(write_attr(s, "order", high), -EINVAL);	/* above slub_max_order */
	CHECK_EQ(write_attr(s, "order", "11"), -EINVAL);
	CHECK_EQ(write_attr(s, "order", "x"), -EINVAL);
	CHECK_EQ(write_attr(s, "order", "-1"), -EINVAL);
	CHECK_EQ(write_attr(s, "order", "2x"), -EINVAL);
	CHECK_EQ(write_attr(s, "order", ""), -EINVAL);
	CHECK_EQ(attr_ul(s, "order"), good[0] - '0');
	/* min_partial: any count. */
	CHECK_EQ(write_attr(s, "min_partial", "7\n"), 2);
	CHECK_EQ(attr_ul(s, "min_partial"), 7);
	CHECK_EQ(write_attr(s, "min_partial", "seven"), -EINVAL);
	CHECK_EQ(attr_ul(s, "min_partial"), 7);
	/* cpu_partial: a count of objects; none where the cache keeps no per-CPU partials. */
	CHECK_EQ(write_attr(s, "cpu_partial", "0"), 1);
	CHECK_EQ(attr_ul(s, "cpu_partial"), 0);
	CHECK_EQ(s->cpu_partial_slabs, 0);
	ssize_t r = write_attr(s, "cpu_partial", "30");
	CHECK_EQ(r, slub_opt(slub_cpu_partial) ? 2 : -EINVAL);
	CHECK_EQ(write_attr(s, "cpu_partial", "lots"), -EINVAL);
	/* shrink and validate: "1" only; validate needs debug flags, as the kernel's. */
	CHECK_EQ(write_attr(s, "shrink", "1"), 1);
	CHECK_EQ(write_attr(s, "shrink", "0"), -EINVAL);
	CHECK_EQ(write_attr(s, "validate", "1"), -EINVAL);
	/* Read-only and unknown attributes. */
	CHECK_EQ(write_attr(s, "slabs", "1"), -EPERM);
	CHECK_EQ(write_attr(s, "object_size", "64"), -EPERM);
	CHECK_EQ(write_attr(s, "nonesuch", "1"), -ENOENT);
	char big[200];
	memset(big, '1', sizeof(big));
	CHECK_EQ(slub_attr_write(s, "min_partial", big, sizeof(big)), -EINVAL);
	CHECK_EQ(slub_errors(), e0);	/* refused writes are errors to the caller, not reports */
	kmem_cache_destroy(s);
}

/* Counts match what the test put in the cache. */
static void objects_counted(void)
{
	struct kmem_cache *s = kmem_cache_create("attr-count", 512, 0, SLAB_NO_MERGE, NULL);
	enum { N = 1000 };
	static void *p[N];
	for (int i = 0; i < N; i++)
		p[i] = kmem_cache_alloc(s, GFP_KERNEL);
	unsigned long per = attr_ul(s, "objs_per_slab"), slabs = attr_ul(s, "slabs");
	CHECK_EQ(slabs, (N + per - 1) / per);
	CHECK_EQ(attr_ul(s, "total_objects"), slabs * per);
	CHECK_EQ(attr_ul(s, "cpu_slabs"), 1);	/* one thread, one CPU slab (a partial tail) */
	for (int i = 0; i < N; i += 2)
		kmem_cache_free(s, p[i]);
	kmem_cache_shrink(s);	/* flushes the CPU slab: every slab is now half used, partial */
	CHECK_EQ(attr_ul(s, "cpu_slabs"), 0);
	CHECK(!strcmp(attr(s, "slabs_cpu_partial"), "0(0)\n"));
	CHECK_EQ(attr_ul(s, "partial"), slabs);
	CHECK_EQ(attr_ul(s, "objects_partial"), N / 2);
	CHECK_EQ(attr_ul(s, "objects"), N / 2);
	snprintf(buf, sizeof(buf), "%d N0=%d\n", N / 2, N / 2);
	CHECK(!strcmp(attr(s, "objects"), buf));
	for (int i = 1; i < N; i += 2)
		kmem_cache_free(s, p[i]);
	kmem_cache_shrink(s);
	CHECK(!strcmp(attr(s, "slabs"), "0\n"));
	CHECK(!strcmp(attr(s, "objects"), "0\n"));
	kmem_cache_destroy(s);
}

/* ---- reads while 8 threads allocate and free ------------------------------------ */

static struct kmem_cache *busy;
static int stop;

static void *churn(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg;
	void *held[256] = { 0 };
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		unsigned int i = (unsigned int)rand_r(&seed) % 256;
		if (held[i]) {
			kmem_cache_free(busy, held[i]);
			held[i] = NULL;
		} else {
			held[i] = kmem_cache_alloc(busy, GFP_KERNEL);
		}
	}
	for (int i = 0; i < 256; i++)
		if (held[i])
			kmem_cache_free(busy, held[i]);
	return NULL;
}

static void reads_while_busy(void)
{
	/* Order writes flip between two orders the options allow. */
	static const char *const orders[2][2] = { { "1", "2" }, { "3", "4" } };
	busy = kmem_cache_create("attr-busy", 96, 0, SLAB_NO_MERGE, NULL);
	pthread_t t[8];
	for (int i = 0; i < 8; i++)
		pthread_create(&t[i], NULL, churn, (void *)(uintptr_t)(i + 1));
	for (int round = 0; round < 2000; round++) {
		unsigned long total = attr_ul(busy, "total_objects"), objects = attr_ul(busy, "objects");
		unsigned long slabs = attr_ul(busy, "slabs"), partial = attr_ul(busy, "partial");
		/* Each read is consistent in itself; between reads things move. */
		CHECK(attr_ul(busy, "objects_partial") <= 8 * 256 + 8 * 128);
		CHECK(partial <= slabs + 64 && objects <= total + 8 * 256);
		read_all(busy, NULL);
		if (round % 100 == 0)
			CHECK_EQ(write_attr(busy, "shrink", "1"), 1);
		if (round % 250 == 0)
			CHECK_EQ(write_attr(busy, "order", orders[options_mode][round % 500 != 0]), 1);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < 8; i++)
		pthread_join(t[i], NULL);
	kmem_cache_shrink(busy);
	CHECK_EQ(slab_validate_cache(busy), 0);
	CHECK(!strcmp(attr(busy, "objects"), "0\n"));
	kmem_cache_destroy(busy);
}

/* The CONFIG_SLUB_STATS counters: only in a -DSLUB_STATS=ON build, as in the kernel. */
static void statistics(void)
{
	unsigned int mode;
	bool listed = false;
	for (unsigned int i = 0; slub_attr_name(i, &mode); i++)
		listed |= !strcmp(slub_attr_name(i, &mode), "alloc_fastpath");
	struct kmem_cache *s = kmem_cache_create("attr-stats", 256, 0, SLAB_NO_MERGE, NULL);
#ifndef SLUB_STATS
	CHECK(!listed);
	CHECK_EQ(slub_attr_read(s, "alloc_fastpath", buf, sizeof(buf)), -ENOENT);
	CHECK_EQ(write_attr(s, "alloc_fastpath", "0"), -ENOENT);
#else
	CHECK(listed);
	enum { N = 3000 };
	static void *p[N];
	for (int i = 0; i < N; i++)
		p[i] = kmem_cache_alloc(s, GFP_KERNEL);
	unsigned long fast = attr_ul(s, "alloc_fastpath"), slow = attr_ul(s, "alloc_slowpath");
	CHECK_EQ(fast + slow, N);
	CHECK(slow >= attr_ul(s, "alloc_slab") && attr_ul(s, "alloc_slab") >= attr_ul(s, "slabs"));
	CHECK_EQ(attr_ul(s, "alloc_slab"), attr_ul(s, "slabs"));	/* one thread, nothing freed */
	/* The sum, then each CPU that counted: "<sum> C<cpu>=<n>". */
	const char *text = attr(s, "alloc_slab");
	unsigned long sum = strtoul(text, NULL, 10), parts = 0;
	for (const char *c = strstr(text, " C"); c; c = strstr(c + 1, " C"))
		parts += strtoul(strchr(c, '=') + 1, NULL, 10);
	CHECK_EQ(parts, sum);
	for (int i = 0; i < N; i++)
		kmem_cache_free(s, p[i]);
	CHECK_EQ(attr_ul(s, "free_fastpath") + attr_ul(s, "free_slowpath"), N);
	kmem_cache_shrink(s);
	CHECK_EQ(attr_ul(s, "free_slab"), attr_ul(s, "alloc_slab"));	/* every slab went back */
	CHECK(attr_ul(s, "cpuslab_flush") >= 1);
	/* Writing 0 clears; nothing else is taken. */
	CHECK_EQ(write_attr(s, "alloc_fastpath", "1"), -EINVAL);
	CHECK_EQ(write_attr(s, "alloc_fastpath", "0\n"), 2);
	CHECK(!strcmp(attr(s, "alloc_fastpath"), "0\n"));
	CHECK(attr_ul(s, "alloc_slowpath") != 0);
#endif
	kmem_cache_destroy(s);
}

/*
 * The kernel's geometry, read back as its /sys/kernel/slab files: the
 * values a Linux 6.18 kernel with 2 CPUs shows (slub_min_objects 12 by
 * its rule), for the kmalloc caches and small caches of a user's.
 */
struct kernel_geometry {
	const char *name;
	unsigned int object_size, align_arg;	/* a user's cache: created with these */
	unsigned long slab_size, order, objs_per_slab, align, min_partial;
};

static const struct kernel_geometry kernel_rows[] = {
	{ "kmalloc-8",    0, 0,    8, 0, 512,    8, 5 },
	{ "kmalloc-16",   0, 0,   16, 0, 256,   16, 5 },
	{ "kmalloc-32",   0, 0,   32, 0, 128,   32, 5 },
	{ "kmalloc-64",   0, 0,   64, 0,  64,   64, 5 },
	{ "kmalloc-96",   0, 0,   96, 0,  42,    8, 5 },
	{ "kmalloc-128",  0, 0,  128, 0,  32,  128, 5 },
	{ "kmalloc-192",  0, 0,  192, 0,  21,    8, 5 },
	{ "kmalloc-256",  0, 0,  256, 0,  16,  256, 5 },
	{ "kmalloc-512",  0, 0,  512, 1,  16,  512, 5 },
	{ "kmalloc-1k",   0, 0, 1024, 2,  16, 1024, 5 },
	{ "kmalloc-2k",   0, 0, 2048, 3,  16, 2048, 5 },
	{ "kmalloc-4k",   0, 0, 4096, 3,   8, 4096, 6 },
	{ "kmalloc-8k",   0, 0, 8192, 3,   4, 8192, 6 },
	/* a user's caches (SLAB_NO_MERGE: its own geometry, not a kmalloc cache's) */
	{ "geo-24",      24, 0,   24, 0, 170,    8, 5 },
	{ "geo-40",      40, 0,   40, 0, 102,    8, 5 },
	{ "geo-600",    600, 0,  600, 1,  13,    8, 5 },
	{ "geo-8k-8k", 8192, 8192, 8192, 3, 4, 8192, 6 },
};

static void kernel_geometry(void)
{
	if (options_mode || os_possible_cpus() != 2) {
		fprintf(stderr, "   the kernel's table is for 2 CPUs and default options: skipped\n");
		return;
	}
	for (size_t i = 0; i < sizeof(kernel_rows) / sizeof(kernel_rows[0]); i++) {
		const struct kernel_geometry *r = &kernel_rows[i];
		struct kmem_cache *s = r->object_size ?
			kmem_cache_create(r->name, r->object_size, r->align_arg, SLAB_NO_MERGE, NULL) :
			slub_find_cache(r->name);
		CHECK(s != NULL);
		if (!s)
			continue;
		unsigned long got[5] = { attr_ul(s, "slab_size"), attr_ul(s, "order"),
					 attr_ul(s, "objs_per_slab"), attr_ul(s, "align"),
					 attr_ul(s, "min_partial") };
		unsigned long want[5] = { r->slab_size, r->order, r->objs_per_slab, r->align,
					  r->min_partial };
		if (memcmp(got, want, sizeof(got))) {
			fprintf(stderr, "   %s: slab_size %lu order %lu objs_per_slab %lu align %lu"
				" min_partial %lu (want %lu %lu %lu %lu %lu)\n", r->name, got[0], got[1],
				got[2], got[3], got[4], want[0], want[1], want[2], want[3], want[4]);
			CHECK(!"the kernel's geometry");
		}
		if (r->object_size)
			kmem_cache_destroy(s);
	}
}

int main(int argc, char **argv)
{
	options_mode = argc > 1 && !strcmp(argv[1], "--options");
	RUN(every_attribute_of_every_cache);
	RUN(geometry_reads_back);
	RUN(kernel_geometry);
	RUN(writes_good_and_bad);
	RUN(objects_counted);
	RUN(reads_while_busy);
	RUN(statistics);
	return check_done();
}
