// SPDX-License-Identifier: MIT
/*
 * test_kernel_geometry.c - every cache of a real kernel, re-created here
 * with the size, alignment and flags it was made with, must get the
 * kernel's geometry: slab_size, order, objs_per_slab, align, min_partial.
 *
 * The caches come from a snapshot of /sys/kernel/slab taken with
 * kernel_slab_snapshot.sh (argument 1; kernel-6.18-2cpu.slab by default).
 * slub_min_objects follows the snapshot's CPU count, as the kernel's
 * default does, so a snapshot of any machine replays on this one.
 */
#define _GNU_SOURCE
#include <slub.h>
#include "check.h"

static void replay_ctor(void *p)
{
	(void)p;
}

struct kernel_cache {
	char name[64], flags[16];
	unsigned int object_size, align, usersize;
	unsigned long slab_size, order, objs_per_slab, min_partial;
};

static unsigned long attr(struct kmem_cache *s, const char *name)
{
	char buf[64] = "";
	if (slub_attr_read(s, name, buf, sizeof(buf)) < 0)
		return ~0UL;
	return strtoul(buf, NULL, 10);
}

static bool has(const struct kernel_cache *k, char c)
{
	return strchr(k->flags, c) != NULL;
}

static slab_flags_t kernel_flags(const struct kernel_cache *k)
{
	slab_flags_t f = SLAB_NO_MERGE;		/* each gets its own geometry */
	if (has(k, 'h'))
		f |= SLAB_HWCACHE_ALIGN;
	if (has(k, 'a'))
		f |= SLAB_RECLAIM_ACCOUNT;
	if (has(k, 'd'))
		f |= SLAB_CACHE_DMA;
	if (has(k, 'r'))
		f |= SLAB_TYPESAFE_BY_RCU;
	return f;
}

/*
 * sysfs does not show freeptr_offset.  An RCU cache without a constructor
 * whose slots hold no word past the object was made with one (the kernel
 * puts the free pointer after the object otherwise).
 */
static bool uses_freeptr_offset(const struct kernel_cache *k)
{
	unsigned long word = sizeof(void *), a = k->align;
	unsigned long with_word = ((k->object_size + word - 1) / word * word + word + a - 1) / a * a;
	return has(k, 'r') && !has(k, 'c') && k->slab_size < with_word;
}

static int replayed, with_freeptr;

static void replay(const struct kernel_cache *k)
{
	struct kmem_cache_args args = {
		.align = k->align,
		.useroffset = 0,
		.usersize = k->usersize,
		.ctor = has(k, 'c') ? replay_ctor : NULL,
	};
	if (uses_freeptr_offset(k)) {
		args.use_freeptr_offset = true;
		args.freeptr_offset = 0;
		with_freeptr++;
	}
	char name[80];
	snprintf(name, sizeof(name), "k.%s", k->name);
	struct kmem_cache *s = kmem_cache_create_args(name, k->object_size, &args,
						      kernel_flags(k));
	if (!s) {
		fprintf(stderr, "%s: refused (size %u, align %u, flags %s)\n", k->name,
			k->object_size, k->align, k->flags);
		CHECK(s != NULL);
		return;
	}
	struct { const char *attr; unsigned long want; } fields[] = {
		{ "slab_size", k->slab_size }, { "order", k->order },
		{ "objs_per_slab", k->objs_per_slab }, { "align", k->align },
		{ "min_partial", k->min_partial },
	};
	bool same = true;
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		unsigned long got = attr(s, fields[i].attr);
		if (got != fields[i].want) {
			fprintf(stderr, "%s (%u bytes, align %u, %s): %s %lu, the kernel's %lu\n",
				k->name, k->object_size, k->align, k->flags, fields[i].attr, got,
				fields[i].want);
			same = false;
		}
	}
	CHECK(same);
	replayed += same;
	kmem_cache_destroy(s);
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : SLUB_TEST_DATA "/kernel-6.18-2cpu.slab";
	FILE *f = fopen(path, "r");
	if (!f) {
		perror(path);
		return 1;
	}
	char line[512];
	unsigned int cpus = 0;
	if (!fgets(line, sizeof(line), f) || sscanf(line, "# kernel %*s %u CPUs", &cpus) != 1 ||
	    !cpus) {
		fprintf(stderr, "%s: no '# kernel <release>, <N> CPUs' header\n", path);
		return 1;
	}
	/* The kernel's default: 4 * (fls(CPUs) + 1) objects at least. */
	unsigned int fls = 0;
	while (cpus >> fls)
		fls++;
	char want[64];
	snprintf(want, sizeof(want), "slub_min_objects=%u", 4 * (fls + 1));
	const char *opts = getenv("SLUB_OPTIONS");
	if (!opts || strcmp(opts, want)) {
		setenv("SLUB_OPTIONS", want, 1);
		execv("/proc/self/exe", argv);
		perror("execv");
		return 1;
	}
	int total = 0;
	while (fgets(line, sizeof(line), f)) {
		struct kernel_cache k = { 0 };
		if (line[0] == '#')
			continue;
		if (sscanf(line, "%63s %u %u %15s %u | %lu %lu %lu %lu", k.name, &k.object_size,
			   &k.align, k.flags, &k.usersize, &k.slab_size, &k.order, &k.objs_per_slab,
			   &k.min_partial) != 9) {
			fprintf(stderr, "%s: malformed line: %s", path, line);
			CHECK(0);
			continue;
		}
		total++;
		replay(&k);
	}
	fclose(f);
	printf("%s: %d of %d caches re-created with the kernel's geometry "
	       "(%d RCU caches with a free pointer offset)\n", path, replayed, total, with_freeptr);
	CHECK(total > 0);
	return check_done();
}
