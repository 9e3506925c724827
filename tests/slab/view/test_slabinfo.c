// SPDX-License-Identifier: MIT
/*
 * test_slabinfo - the slabinfo core in the process: slub_print_slabinfo()
 * prints the kernel tool's header and a row for every cache that
 * slub_for_each_cache() lists, named as the kernel's tool names it (a
 * merged cache by its id), with the objects its "objects" attribute
 * gives; and the core's size strings are the kernel's.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "slab/view/slabinfo.h"

struct row {
	char name[64];
	unsigned long objects;
	unsigned int objsize;
};

static struct row rows[512];
static size_t nr_rows;

static void read_table(void)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	CHECK(f != NULL);
	if (!f)
		return;
	slub_print_slabinfo(f);
	fclose(f);
	char *save = NULL, *line = strtok_r(text, "\n", &save);
	CHECK(line && !strncmp(line, "Name                   Objects Objsize           Space "
			       "Slabs/Part/Cpu  O/S O %Fr %Ef Flg", 80));
	nr_rows = 0;
	while ((line = strtok_r(NULL, "\n", &save)) && nr_rows < 512) {
		struct row *r = &rows[nr_rows];
		CHECK_EQ(sscanf(line, "%63s %lu %u", r->name, &r->objects, &r->objsize), 3);
		nr_rows++;
	}
	free(text);
}

static const struct row *row_of(const char *name)
{
	for (size_t i = 0; i < nr_rows; i++)
		if (!strcmp(rows[i].name, name))
			return &rows[i];
	return NULL;
}

/* The row of @s: its name, or for a merged cache its id or one of its names. */
static int check_cache(struct kmem_cache *s, void *arg)
{
	size_t *seen = arg;
	const struct row *r = row_of(slub_cache_id(s));
	if (!r)
		r = row_of(slub_cache_name(s));
	for (unsigned int i = 0; !r && slub_cache_alias(s, i); i++)
		r = row_of(slub_cache_alias(s, i));
	if (!r) {
		fprintf(stderr, "   no row for %s (%s)\n", slub_cache_name(s), slub_cache_id(s));
		CHECK(r != NULL);
		return 0;
	}
	char buf[256];
	CHECK(slub_attr_read(s, "objects", buf, sizeof(buf)) > 0);
	CHECK_EQ(r->objects, strtoul(buf, NULL, 10));
	CHECK(slub_attr_read(s, "object_size", buf, sizeof(buf)) > 0);
	CHECK_EQ(r->objsize, strtoul(buf, NULL, 10));
	(*seen)++;
	return 0;
}

static void ctor(void *p)
{
	memset(p, 0, 8);
}

static void every_cache_printed(void)
{
	/* A cache of its own (a ctor keeps it unmerged) and two merged into one id. */
	struct kmem_cache *own = kmem_cache_create("slabinfo_own", 96, 0, 0, ctor);
	struct kmem_cache *a = kmem_cache_create("slabinfo_a", 200, 0, 0, NULL);
	struct kmem_cache *b = kmem_cache_create("slabinfo_b", 200, 0, 0, NULL);
	void *objs[100];
	CHECK(own && a && b);
	if (!own || !a || !b)
		return;
	for (int i = 0; i < 100; i++)
		objs[i] = kmem_cache_alloc(own, GFP_KERNEL);
	void *x = kmem_cache_alloc(a, GFP_KERNEL), *y = kmem_cache_alloc(b, GFP_KERNEL);
	read_table();
	/* At least the 100: as in the kernel, a CPU's slab counts all its objects as used. */
	const struct row *r = row_of("slabinfo_own");
	CHECK(r && r->objects >= 100 && r->objsize == 96);
	if (a == b)	/* merged (slub_merge on): shown by its id, as two names share it */
		CHECK(row_of(slub_cache_id(a)) && slub_cache_id(a)[0] == ':');
	size_t seen = 0;
	slub_for_each_cache(check_cache, &seen);
	CHECK_EQ(nr_rows, seen);
	kmem_cache_free(a, x);
	kmem_cache_free(b, y);
	for (int i = 0; i < 100; i++)
		kmem_cache_free(own, objs[i]);
	kmem_cache_destroy(b);
	kmem_cache_destroy(a);
	kmem_cache_destroy(own);
}

static void sizes_as_the_kernel(void)
{
	char b[24];
	CHECK(!strcmp(slabinfo_size(b, sizeof(b), 999, false), "999"));
	CHECK(!strcmp(slabinfo_size(b, sizeof(b), 12288, false), "12.2K"));
	CHECK(!strcmp(slabinfo_size(b, sizeof(b), 3276800, false), "3.2M"));
	CHECK(!strcmp(slabinfo_size(b, sizeof(b), 1500000000, false), "1.5G"));
	CHECK(!strcmp(slabinfo_size(b, sizeof(b), 12288, true), "12288"));
}

static ssize_t read_attr(void *ctx, const char *cache, const char *attr, char *buf, size_t len)
{
	(void)cache;
	return slub_attr_read(ctx, attr, buf, len);
}

/*
 * After a write of order the old slabs keep theirs: the space is the
 * pages the slabs hold, not the slabs at the new order.
 */
static void space_after_order_write(void)
{
	struct kmem_cache *s = kmem_cache_create("slabinfo_order", 512, 0, SLAB_NO_MERGE, NULL);
	void *objs[200];
	CHECK(s && slub_attr_write(s, "order", "1", 1) == 1);
	for (int i = 0; i < 100; i++)
		objs[i] = kmem_cache_alloc(s, GFP_KERNEL);
	CHECK(slub_attr_write(s, "order", "3", 1) == 1);
	for (int i = 100; i < 200; i++)
		objs[i] = kmem_cache_alloc(s, GFP_KERNEL);
	char text[64];
	CHECK(slub_attr_read(s, "total_pages", text, sizeof(text)) > 0);
	unsigned long pages = strtoul(text, NULL, 10);
	struct slabinfo_set set = { .page_size = 4096, .read = read_attr };
	struct slabinfo_cache c;
	CHECK(slabinfo_load(&set, &c, "slabinfo_order", s));
	/* 100 objects of 512 B in 8 KiB slabs (13 slabs), 100 in 32 KiB ones (4). */
	CHECK(c.order == 3 && c.slabs > 4);
	CHECK_EQ(slabinfo_bytes(&set, &c), pages * 4096);
	CHECK(slabinfo_bytes(&set, &c) < c.slabs * (4096UL << 3));
	for (int i = 0; i < 200; i++)
		kmem_cache_free(s, objs[i]);
	kmem_cache_destroy(s);
}

int main(void)
{
	RUN(every_cache_printed);
	RUN(space_after_order_write);
	RUN(sizes_as_the_kernel);
	return check_done();
}
