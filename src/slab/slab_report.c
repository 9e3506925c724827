/* SPDX-License-Identifier: MIT */
/*
 * slab_report.c - what the release-mode checks (debug flags or not)
 * report: a free of something that is not an object, a double free, a
 * corrupt free pointer.
 */
#include "slab/slab.h"

#include "base/report.h"

void slab_double_free(struct kmem_cache *s, void *object)
{
	slub_report("BUG %s: object %p is free already (double free); ignored", s->name, object);
}

void slab_corrupt_freepointer(struct kmem_cache *s, struct slab *slab, void *object, void *fp)
{
	/* The word as the program wrote it: the decoded value means nothing to anyone. */
	slub_report("BUG %s: free pointer of free object %p corrupt (its word is %#lx: written after free?); freelist of slab %p cut there, the objects after it leaked",
		    s->name, object, (unsigned long)freepointer_encode(fp), slab_address(slab));
}

void slab_bad_free(const void *object, struct kmem_cache *s, const char *caller)
{
	if (!s)
		slub_report("%s: invalid pointer %p (not a slab object of libslub); ignored",
			    caller, object);
	else
		slub_report("%s: %p is not the start of an object in %s; ignored",
			    caller, object, s->name);
}
