// SPDX-License-Identifier: MIT
/*
 * kasan_victim.c - kernel-style code with one heap bug per mode, for
 * test_kasan.sh: built as is (run under valgrind) and with
 * -fsanitize=address, against the same libslub, which tells either tool
 * what its objects are (slab_kasan.c).
 *
 *   clean      a cache of structures with a constructor, kmalloc,
 *              kzalloc, krealloc and ksize used rightly: no report
 *   uaf        a read of a freed cache object
 *   overflow   a kmalloc(24) written one byte past its end
 *   redzone    a cache object written just past its end, its neighbour live
 *   leak       a cache object nobody points at when the program ends
 *   double     a cache object freed twice
 */
#include <slub.h>
#include <stdio.h>
#include <string.h>

struct conn {
	int id;
	int refs;
	char name[40];
	struct conn *next;
};

static void conn_ctor(void *p)
{
	struct conn *c = p;
	memset(c, 0, sizeof(*c));
	c->refs = 1;
}

/* Opaque to the compiler, so that no bug below is optimized away. */
static void *volatile sink;

static struct kmem_cache *conn_cache(void)
{
	return kmem_cache_create("conn", sizeof(struct conn), 0, SLAB_HWCACHE_ALIGN, conn_ctor);
}

static int clean(void)
{
	struct kmem_cache *s = conn_cache();
	struct conn *list = NULL;
	for (int i = 0; i < 1000; i++) {
		struct conn *c = kmem_cache_alloc(s, GFP_KERNEL);
		if (!c || c->refs != 1)	/* the constructor's state: defined bytes */
			return 1;
		c->id = i;
		snprintf(c->name, sizeof(c->name), "conn%d", i);
		c->next = list;
		list = c;
	}
	while (list) {
		struct conn *next = list->next;
		list->refs = 1;
		kmem_cache_free(s, list);
		list = next;
	}
	char *z = kzalloc(100, GFP_KERNEL);
	for (int i = 0; i < 100; i++)
		if (z[i])
			return 1;
	char *p = kmalloc(20, GFP_KERNEL);
	memset(p, 'a', 20);
	p = krealloc(p, 28, GFP_KERNEL);	/* in place: 28 bytes are the caller's now */
	memset(p + 20, 'b', 8);
	p = krealloc(p, 300, GFP_KERNEL);	/* moved */
	if (p[0] != 'a' || p[27] != 'b')
		return 1;
	size_t all = ksize(p);		/* the whole object is the caller's */
	memset(p, 0, all);
	kfree(p);
	kfree(z);
	kmem_cache_destroy(s);
	return 0;
}

static int uaf(void)
{
	struct kmem_cache *s = conn_cache();
	struct conn *c = kmem_cache_alloc(s, GFP_KERNEL);
	struct conn *other = kmem_cache_alloc(s, GFP_KERNEL);
	c->id = 7;
	kmem_cache_free(s, c);
	sink = other;
	printf("id %d\n", ((volatile struct conn *)c)->id);	/* the bug */
	return 0;
}

static int overflow(void)
{
	char *p = kmalloc(24, GFP_KERNEL);
	memset(p, 0, 24);
	((volatile char *)p)[24] = 1;	/* the bug: one byte past what was asked */
	sink = p;
	return 0;
}

static int redzone(void)
{
	struct kmem_cache *s = kmem_cache_create("records", 64, 0, 0, NULL);
	char *a = kmem_cache_alloc(s, GFP_KERNEL);
	char *b = kmem_cache_alloc(s, GFP_KERNEL);
	sink = b;
	((volatile char *)a)[64] = 1;	/* the bug: into the red zone after a */
	return 0;
}

static int leak(void)
{
	struct kmem_cache *s = conn_cache();
	struct conn *c = kmem_cache_alloc(s, GFP_KERNEL);
	c->id = 1;
	c = NULL;			/* the bug: the last pointer is gone */
	sink = s;
	return 0;
}

static int double_free(void)
{
	struct kmem_cache *s = conn_cache();
	struct conn *c = kmem_cache_alloc(s, GFP_KERNEL);
	kmem_cache_free(s, c);
	kmem_cache_free(s, c);		/* the bug */
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "clean";
	static const struct {
		const char *name;
		int (*run)(void);
	} modes[] = {
		{ "clean", clean },	    { "uaf", uaf },   { "overflow", overflow },
		{ "redzone", redzone }, { "leak", leak }, { "double", double_free },
	};
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (!strcmp(mode, modes[i].name))
			return modes[i].run();
	fprintf(stderr, "kasan_victim: no mode %s\n", mode);
	return 2;
}
