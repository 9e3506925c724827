// SPDX-License-Identifier: MIT
/*
 * fuzz/attr.c - libFuzzer target: the attributes' write parsers
 * (slub_attr_write, slab/view/slab_attr.c, and the statistics counters'
 * of a -DSLUB_STATS=ON build) on a cache the input describes, between
 * allocations and frees it also drives.  A write may fail, with an error
 * the API documents; what it takes must read back, and afterwards the
 * cache must validate clean, allocate and free, with no report at all.
 *
 * Input: a size byte and a flags byte for kmem_cache_create(), then
 * operations: alloc, free, write ATTR LEN BYTES, read ATTR.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <slub.h>
#include "fuzz.h"

#define MAX_OBJS 64
#define MAX_OPS 256
/* slub_attr_write() refuses 64 bytes or more: a little past it too. */
#define MAX_WRITE 72

static const unsigned int sizes[16] = {
	8, 16, 24, 40, 64, 96, 100, 128, 192, 256, 500, 1024, 2048, 4096, 5000, 9000,
};

static unsigned int nr_attrs;

/* The constructor a cache may get: a pattern the program would rely on. */
static void ctor(void *p)
{
	memset(p, 0x5a, 8);
}

/* Errors a write may answer, as slub.h documents them; -EBUSY for the debug switches. */
static bool write_error_ok(ssize_t r)
{
	return r == -EINVAL || r == -EPERM || r == -EBUSY;
}

static bool is_debug_switch(const char *name)
{
	static const char *const sw[] = { "sanity_checks", "red_zone", "poison", "store_user",
					   "trace" };
	for (size_t i = 0; i < sizeof(sw) / sizeof(sw[0]); i++)
		if (!strcmp(name, sw[i]))
			return true;
	return false;
}

/* What a write that was taken must read back as. */
static void reads_back(struct kmem_cache *s, const char *name, const char *val)
{
	char got[64], want[64];
	if (!strcmp(name, "order") || !strcmp(name, "min_partial"))
		snprintf(want, sizeof(want), "%lu\n", strtoul(val, NULL, 10));
	else if (is_debug_switch(name))
		snprintf(want, sizeof(want), "%d\n", val[0] == '1');
	else
		return;
	ssize_t n = slub_attr_read(s, name, got, sizeof(got));
	if (n < 0 || strcmp(got, want))
		fuzz_fail("wrote '%s' to %s, read back %zd '%s'", val, name, n, n < 0 ? "" : got);
}

static void do_write(struct kmem_cache *s, struct fuzz_in *in)
{
	unsigned int mode;
	const char *name = slub_attr_name(fuzz_byte(in) % nr_attrs, &mode);
	size_t len;
	const uint8_t *bytes = fuzz_bytes(in, fuzz_byte(in) % MAX_WRITE, &len);
	char val[MAX_WRITE + 1];
	memcpy(val, bytes, len);
	val[len] = 0;
	ssize_t r = slub_attr_write(s, name, val, len);
	if (r == (ssize_t)len) {
		if (!(mode & 0200))
			fuzz_fail("%s is read-only (%o), yet the write was taken", name, mode);
		if (len == strlen(val))	/* the parsers see the text up to a NUL */
			reads_back(s, name, val);
	} else if (!write_error_ok(r) || (r == -EPERM && (mode & 0200))) {
		fuzz_fail("write of %zu bytes to %s (mode %o): %zd", len, name, mode, r);
	}
}

static void do_read(struct kmem_cache *s, struct fuzz_in *in)
{
	static char buf[1 << 16];
	const char *name = slub_attr_name(fuzz_byte(in) % nr_attrs, NULL);
	ssize_t n = slub_attr_read(s, name, buf, sizeof(buf));
	if (n == -ENOSYS && (!strcmp(name, "alloc_calls") || !strcmp(name, "free_calls")))
		return;	/* without U, as the kernel's */
	if (n < 0 || (size_t)n != strlen(buf))
		fuzz_fail("read of %s: %zd", name, n);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* Before start-up, which opens the report file. */
	if (slub_setup("slub_report_file=/dev/null"))
		abort();
	unsigned int mode;
	while (slub_attr_name(nr_attrs, &mode))
		nr_attrs++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, data + size };
	uint8_t geometry = fuzz_byte(&in), f = fuzz_byte(&in);
	unsigned int obj_size = sizes[geometry & 15];
	unsigned int align = geometry & 0x10 ? 64 : 0;
	slab_flags_t flags = (geometry & 0x20 ? SLAB_TYPESAFE_BY_RCU : 0) |
			     (geometry & 0x40 ? SLAB_RECLAIM_ACCOUNT : 0) |
			     (geometry & 0x80 ? SLAB_CACHE_DMA : 0) |
			     (f & 0x01 ? SLAB_NO_MERGE : 0) | (f & 0x02 ? SLAB_HWCACHE_ALIGN : 0) |
			     (f & 0x04 ? SLAB_CONSISTENCY_CHECKS : 0) | (f & 0x08 ? SLAB_RED_ZONE : 0) |
			     (f & 0x10 ? SLAB_POISON : 0) | (f & 0x20 ? SLAB_STORE_USER : 0) |
			     (f & 0x40 ? SLAB_TRACE : 0);
	unsigned long errors = slub_errors();
	struct kmem_cache *s = kmem_cache_create("fuzz_attr", obj_size, align, flags,
						 f & 0x80 ? ctor : NULL);
	if (!s)
		fuzz_fail("kmem_cache_create(%u, align %u, flags %#x) failed", obj_size, align,
			  (unsigned int)flags);

	void *objs[MAX_OBJS];
	unsigned int nr = 0;
	for (int ops = 0; in.p < in.end && ops < MAX_OPS; ops++) {
		uint8_t op = fuzz_byte(&in);
		switch (op & 3) {
		case 0:
			if (nr == MAX_OBJS)
				break;
			objs[nr] = kmem_cache_alloc(s, GFP_KERNEL);
			if (!objs[nr])
				fuzz_fail("allocation from a %u-byte cache failed", obj_size);
			memset(objs[nr++], op, obj_size);	/* the whole object is the program's */
			break;
		case 1:
			if (nr) {
				unsigned int i = (op >> 2) % nr;
				kmem_cache_free(s, objs[i]);
				objs[i] = objs[--nr];
			}
			break;
		case 2:
			do_write(s, &in);
			break;
		case 3:
			do_read(s, &in);
			break;
		}
	}

	/* Whatever was written, the cache still works and validates clean. */
	while (nr)
		kmem_cache_free(s, objs[--nr]);
	if (slub_validate(s))
		fuzz_fail("the cache did not validate clean after the writes");
	void *p = kmem_cache_alloc(s, GFP_KERNEL);
	if (!p)
		fuzz_fail("no allocation after the writes");
	memset(p, 0xa5, obj_size);
	kmem_cache_free(s, p);
	if (slub_validate(s))
		fuzz_fail("the cache did not validate clean after an allocation");
	if (slub_errors() != errors)
		fuzz_fail("%lu reports during the run", slub_errors() - errors);
	kmem_cache_destroy(s);
	if (slub_errors() != errors)
		fuzz_fail("kmem_cache_destroy reported");
	return 0;
}
