/* SPDX-License-Identifier: MIT */
/*
 * slab_report.c - what the release-mode checks (debug flags or not)
 * report: a free of something that is not an object, a double free, a
 * corrupt free pointer.
 */
#include "slab/core/slab.h"

#include <stdio.h>

#include "base/report.h"
#include "slab/debug/slab_debug.h"

void slab_double_free(struct kmem_cache *s, void *object)
{
	slub_report_call("BUG %s: object %p is free already (double free); ignored", s->name, object);
	debug_note_error(s->name);
}

void slab_corrupt_freepointer(struct kmem_cache *s, struct slab *slab, void *object, void *fp)
{
	/* The word as the program wrote it: the decoded value means nothing to anyone. */
	slub_report_call("BUG %s: free pointer of free object %p corrupt (its word is %#lx: written after free?); freelist of slab %p cut there, the objects after it leaked",
		    s->name, object, (unsigned long)freepointer_encode(fp), slab_address(slab));
	debug_note_error(s->name);
}

/*
 * Where an interior pointer lies: "N bytes into the object at X", or into
 * its left red zone.  8 bytes off is what C++ frees when an array from
 * new[] of a type with a destructor goes to delete (the array's count sits
 * in front of it), and 8 bytes before when delete[] gets an object from
 * new: say so, as valgrind names a mismatched delete.  Returns that
 * object, 0 if none.
 */
static uintptr_t describe_interior(const void *p, struct kmem_cache *s, char *buf, size_t len)
{
	uintptr_t start;
	struct slab *slab;
	buf[0] = 0;
	if (object_slab(p, &slab, &start) != s || (uintptr_t)p < start + s->red_left_pad)
		return 0;
	uintptr_t off = (uintptr_t)p - start - s->red_left_pad;
	uintptr_t object = start + s->red_left_pad + off / s->size * s->size;
	uintptr_t into = (uintptr_t)p - object;
	if (into >= s->size - s->red_left_pad) {
		uintptr_t next = object + s->size, before = next - (uintptr_t)p;
		snprintf(buf, len, " (%lu bytes before the object at %#lx, in its left red zone%s)",
			 (unsigned long)before, (unsigned long)next,
			 before == sizeof(size_t) ? ": C++ delete[] of an object from new?" : "");
		/* Past the slab's last object: in its padding, no object's. */
		return next + s->size - s->red_left_pad - start <=
			       (uintptr_t)read_counters(slab).objects * s->size ? next : 0;
	}
	if (into >= s->object_size)
		snprintf(buf, len, " (past the end of the object at %#lx, in its metadata)",
			 (unsigned long)object);
	else
		snprintf(buf, len, " (%lu bytes into the object at %#lx%s)", (unsigned long)into,
			 (unsigned long)object,
			 into == sizeof(size_t) ? ": C++ delete of an array from new[]?" : "");
	return object;
}

void slab_bad_free(const void *object, struct kmem_cache *s, const char *caller)
{
	char where[128];
	if (!s) {
		slub_report_call("%s: invalid pointer %p (not a slab object of libslub); ignored",
			    caller, object);
		return;
	}
	uintptr_t holder = describe_interior(object, s, where, sizeof(where));
	slub_report_begin();
	slub_report_call("%s: %p is not the start of an object in %s%s; ignored", caller, object,
			 s->name, where);
	/* Tracked (U): the object it points into, where it was allocated (and last freed). */
	if (holder && (READ_ONCE(s->flags) & SLAB_STORE_USER))
		print_tracking(s, (void *)holder);
	slub_report_end();
	debug_note_error(s->name);
}
