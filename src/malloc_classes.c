/*
 * malloc_classes.c - the malloc library's size classes (see malloc_classes.h).
 */
#define _GNU_SOURCE
#include "malloc_classes.h"

#include <pthread.h>

#include "report.h"

uint8_t malloc_class_index[MALLOC_MAX_CLASS_SIZE / 8];
struct kmem_cache *malloc_class_cache[NR_MALLOC_CLASSES];

/*
 * The size of class @i (1-based), or 0 past the last: 8, then steps of 16
 * to 128, four classes per doubling to 1024, eight per doubling to 8192.
 * Eight where requests are pages plus a header (4096 + 136 for sqlite's
 * page cache): 4608 wastes 8% of such an object where 5120 wastes 17%.
 */
static unsigned int class_size(unsigned int i)
{
	if (i == 1)
		return 8;
	if (i <= 9)
		return (i - 1) * 16;			/* 16 .. 128 */
	if (i <= 21) {
		unsigned int k = i - 10, base = 128u << (k / 4);
		return base + (k % 4 + 1) * (base / 4);	/* 160 .. 1024 */
	}
	unsigned int k = i - 22, base = 1024u << (k / 8);
	unsigned int size = base + (k % 8 + 1) * (base / 8);	/* 1152 .. 8192 */
	return size <= MALLOC_MAX_CLASS_SIZE ? size : 0;
}

static bool classes_ok;

static void make_classes(void)
{
	unsigned int i;
	if (!slab_ensure_init())
		return;		/* every small malloc fails with ENOMEM */
	for (i = 1; class_size(i); i++) {
		unsigned int size = class_size(i);
		struct kmem_cache *s = kmalloc_cache_fast(size);
		if (!s || s->object_size != size) {
			char name[SLUB_NAME_MAX];
			slab_cache_name(name, sizeof(name), "malloc", size);
			/* 16-byte alignment stated, not implied: debug layouts move objects. */
			s = __kmem_cache_create(name, size, size >= 16 ? 16 : 8, SLAB_KMALLOC, NULL);
			if (!s) {
				slub_report("cannot create %s: out of memory", name);
				return;
			}
		}
		__atomic_store_n(&malloc_class_cache[i], s, __ATOMIC_RELEASE);
	}
	static_assert(NR_MALLOC_CLASSES > 45, "class table too small");
	/* The index last: a lookup that sees a class finds its cache made. */
	unsigned int c = 1;
	for (size_t b = 0; b < MALLOC_MAX_CLASS_SIZE / 8; b++) {
		while (class_size(c) < (b + 1) * 8)
			c++;
		__atomic_store_n(&malloc_class_index[b], (uint8_t)c, __ATOMIC_RELEASE);
	}
	classes_ok = true;
}

bool malloc_classes_init(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, make_classes);
	return classes_ok;
}
