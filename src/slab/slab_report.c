/* SPDX-License-Identifier: MIT */
/*
 * slab_report.c - what the checks every free makes (debug flags or not)
 * report: a free of something that is not an object, a double free.
 */
#include "slab/slab.h"

#include "base/report.h"

void slab_double_free(struct kmem_cache *s, void *object)
{
	slub_report("BUG %s: object %p freed twice in a row (double free); ignored",
		    s->name, object);
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
