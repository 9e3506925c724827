// SPDX-License-Identifier: MIT
/*
 * util.c - the kmalloc helpers of the kernel's mm/util.c a porter reaches
 * for beyond kmalloc.c's: kvrealloc, kmemdup_nul, kstrdup_const and
 * kfree_const.  (The one-line array and node forms are inline in slub.h.)
 */
#define _GNU_SOURCE
#include "slab/core/kmalloc.h"

#include <string.h>

#include "base/maps.h"

void *kvrealloc(const void *p, size_t size, gfp_t gfp)
{
	return krealloc(p, size, gfp);	/* kvmalloc'ed blocks are kmalloc'ed here */
}

char *kmemdup_nul(const char *s, size_t len, gfp_t gfp)
{
	if (!s)
		return NULL;
	size_t bytes;
	if (__builtin_add_overflow(len, 1, &bytes))
		return NULL;
	char *p = kmalloc_node(bytes, gfp, NUMA_NO_NODE);
	if (p) {
		memcpy(p, s, len);
		p[len] = 0;
	}
	return p;
}

/*
 * The kernel keeps a string that is in .rodata; here, one in a read-only
 * mapping of a file (the program's or a library's constants).  The heap is
 * writable, so nothing libslub handed out is ever taken for constant.
 */
static bool in_rodata(const void *p)
{
	struct maps_entry e;
	char path[2];
	if (virt_to_page(p) || !maps_find((uintptr_t)p, &e, path, sizeof(path)))
		return false;
	return e.inode && e.perms[1] != 'w';
}

const char *kstrdup_const(const char *s, gfp_t gfp)
{
	if (s && in_rodata(s))
		return s;
	return kstrdup(s, gfp);
}

void kfree_const(const void *x)
{
	if (x && virt_to_page(x))
		kfree(x);
}
