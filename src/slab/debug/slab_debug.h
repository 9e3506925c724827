/* SPDX-License-Identifier: MIT */
/*
 * slab_debug.h - slub_debug: the object layout of a debug cache, and the
 * entry points of its checks (slab_check.c), its paths (slub_debug.c) and
 * its tracks (slab_track.c).
 *
 * A debug cache (any of F Z P U T) never takes the per-CPU fast paths: it
 * never has a cpu slab, so the inline pop finds no object and the inline
 * push no cpu slab, and both fall through to slub.c, which hands the
 * object to the paths here.  They run under the node's list_lock, with
 * every slab on the node's partial list (free objects) or its full list.
 * Caches without debug flags pay nothing on their fast paths.
 *
 * One object's slot (offsets from the object; the kernel's layout):
 *
 *   -red_left_pad    0            object_size   inuse      info_end
 *   | left red zone | object      | right red  | free ptr | alloc track | free track | orig | pad |
 *                   |  ... kmalloc red zone    |  (if outside)                        size  0x5a
 *                   |  [orig_size, object_size)|
 *
 *   left/right red zone   0xbb while free, 0xcc while allocated (Z)
 *   object                0x6b ... 0x6b 0xa5 while free (P, no ctor, no RCU)
 *   kmalloc red zone      the bytes a kmalloc caller did not ask for (U and Z)
 *   padding               0x5a (P), as is the end of the slab
 */
#ifndef SLUB_SLAB_DEBUG_H
#define SLUB_SLAB_DEBUG_H

#include "slab/core/slab.h"
#include "slab/debug/slab_kasan.h"

#define POISON_INUSE 0x5a
#define POISON_FREE 0x6b
#define POISON_END 0xa5
#define SLUB_RED_INACTIVE 0xbb
#define SLUB_RED_ACTIVE 0xcc

#define TRACK_ADDRS_COUNT 16		/* frames captured per track */

enum track_item { TRACK_ALLOC, TRACK_FREE };

static inline bool kmem_cache_debug(const struct kmem_cache *s)
{
	return unlikely(READ_ONCE(s->flags) & SLAB_SLOW_FLAGS);
}

/* The free pointer lies after the object (inuse), not inside it. */
static inline bool freeptr_outside_object(const struct kmem_cache *s)
{
	return s->offset >= s->inuse;
}

/* Where the tracks start: after the object and an outside free pointer. */
static inline unsigned int get_info_end(const struct kmem_cache *s)
{
	return freeptr_outside_object(s) ? s->inuse + (unsigned int)sizeof(void *) : s->inuse;
}

/* kmalloc caches with U, or KASAN's, keep the size each caller asked for. */
static inline bool slub_debug_orig_size(const struct kmem_cache *s)
{
	return (s->flags & SLAB_KMALLOC) && (s->flags & (SLAB_STORE_USER | __SLAB_KASAN));
}

static inline struct track *get_track(const struct kmem_cache *s, void *object,
				      enum track_item alloc)
{
	return (struct track *)((char *)object + get_info_end(s)) + alloc;
}

static inline unsigned int *orig_size_slot(const struct kmem_cache *s, void *object)
{
	unsigned int tracks = s->flags & SLAB_STORE_USER ? 2 * sizeof(struct track) : 0;
	return (unsigned int *)((char *)object + get_info_end(s) + tracks);
}

static inline unsigned int get_orig_size(const struct kmem_cache *s, void *object)
{
	if (!slub_debug_orig_size(s))
		return s->object_size;
	kasan_quiet_begin();	/* the slot lies past the object, off limits to the program */
	unsigned int size = *orig_size_slot(s, object);
	kasan_quiet_end();
	return size;
}

static inline void set_orig_size(const struct kmem_cache *s, void *object, unsigned int size)
{
	if (slub_debug_orig_size(s))
		*orig_size_slot(s, object) = size;
}

/* The slot's end as seen from the object (the left red zone belongs to it). */
static inline unsigned int size_from_object(const struct kmem_cache *s)
{
	return s->flags & SLAB_RED_ZONE ? s->size - s->red_left_pad : s->size;
}

/* A stack captured before any allocator lock, for a track (slab_track.c). */
struct track_stack {
	uintptr_t addr;			/* the caller of the allocator */
	uint32_t handle;		/* stack depot handle, 0: none */
};

/* ---- checks and reports (slab_check.c); the node's list_lock held ---------- */

/* The object's slab-relative start and the object at index @i. */
__hidden void *slab_object_at(const struct kmem_cache *s, const struct slab *slab, unsigned int i);
__hidden unsigned int slab_objects_max(const struct kmem_cache *s, const struct slab *slab);
/* A new debug slab: padding poisoned, every object free-initialised. */
__hidden void setup_slab_debug(struct kmem_cache *s, struct slab *slab, unsigned int objects);
__hidden void init_object(const struct kmem_cache *s, void *object, uint8_t val);
/*
 * @p is the start of one of the @objects slots of the slab at @base; the
 * multiply by the cache's reciprocal, not a division (slab.h's
 * slab_object_valid_at), as freelist walks test every link.
 */
static inline bool valid_pointer_in(const struct kmem_cache *s, uintptr_t base,
				    unsigned int objects, const void *p)
{
	uintptr_t off = (uintptr_t)p - s->red_left_pad - base;
	if ((uintptr_t)p < base + s->red_left_pad || off >= (uintptr_t)objects * s->size)
		return false;
	uint64_t idx;
	return slab_offset_index(s, off, &idx);
}

__hidden bool check_valid_pointer(const struct kmem_cache *s, const struct slab *slab,
				  const void *p);
__hidden bool check_object(struct kmem_cache *s, struct slab *slab, void *object, uint8_t val);
__hidden bool check_slab(struct kmem_cache *s, struct slab *slab);
__hidden bool on_freelist(struct kmem_cache *s, struct slab *slab, const void *search);
/* Bit i of @map set: object i is free (on the slab's freelist, or never linked). */
__hidden void slab_free_map(const struct kmem_cache *s, const struct slab *slab,
			    unsigned long *map);
#define SLAB_MAP_LONGS ((MAX_OBJS_PER_PAGE + 64) / 64)
__hidden void slab_pad_check(struct kmem_cache *s, struct slab *slab);
/* The kernel's report pieces: a banner and the object's trailer, a slab line, a FIX. */
__hidden void object_err(struct kmem_cache *s, struct slab *slab, void *object,
			 const char *reason);
__hidden void slab_err(struct kmem_cache *s, struct slab *slab, const char *fmt, ...)
	__printf(3, 4);
__hidden void slab_fix(struct kmem_cache *s, const char *fmt, ...) __printf(2, 3);
__hidden void print_section(const char *prefix, const void *addr, size_t length);
/*
 * The same banner and FIX line for memory that is no cache's object (the
 * malloc library's extents, named as a pseudo-cache "malloc-large"): each
 * counts one error, as slab_fix() does.
 */
__hidden void debug_bug(const char *name, const char *fmt, ...) __printf(2, 3);
__hidden void debug_fix(const char *name, const char *fmt, ...) __printf(2, 3);
/*
 * The kernel's dump_stack() at the end of a BUG report: the stack of the
 * bad call, from the program's frame on (stack_trace_dump_report()).  Not
 * while this thread sets debug_stack_off (validation at exit: the exit
 * handler's stack says nothing of the bug).
 */
__hidden void debug_dump_stack(void);
extern __hidden __thread bool debug_stack_off __attribute__((tls_model("initial-exec")));
/*
 * An error about cache @name, for the ERROR SUMMARY (BUG banners note
 * theirs; a release-mode report of a cache's object, its own): how many
 * caches had one, and the errors they had in *@in_caches.
 */
__hidden void debug_note_error(const char *name);
__hidden unsigned int debug_error_caches(unsigned long *in_caches);
/* The first byte of [start, start + bytes) that is not @value, or NULL. */
__hidden uint8_t *memchr_inv(uint8_t *start, uint8_t value, size_t bytes);
/* This thread's count of debug errors (validate returns its own). */
extern __hidden __thread unsigned long slab_debug_errors __attribute__((tls_model("initial-exec")));

/* ---- tracks (slab_track.c) ------------------------------------------------ */

/* @ret: __builtin_return_address(0) of the debug path's entry (see track_save_stack). */
__hidden void track_capture(const struct kmem_cache *s, struct track_stack *ts, uintptr_t ret);
__hidden void set_track(const struct kmem_cache *s, void *object, enum track_item alloc,
			const struct track_stack *ts);
__hidden void init_tracking(const struct kmem_cache *s, void *object);
__hidden void print_tracking(const struct kmem_cache *s, void *object);
/*
 * The same for memory outside the caches (malloc's debug extents): the
 * caller's stack with the allocator's frames dropped, a track filled
 * from it, and its "INFO: Allocated in ..." lines.
 */
__hidden void track_save_stack(struct track_stack *ts, uintptr_t ret);
/* fork(): the child's thread has other ids. */
__hidden void track_fork_child(void);
__hidden void track_fill(struct track *t, const struct track_stack *ts);
__hidden void track_print(const char *what, const struct track *t, unsigned long now);
/* The alloc_calls / free_calls attribute text; -ENOSYS without U. */
__hidden ssize_t slab_list_locations(struct kmem_cache *s, enum track_item alloc, char *buf,
				     size_t len);

/* ---- the debug paths (slub_debug.c) --------------------------------------- */

__hidden void *debug_slab_alloc(struct kmem_cache *s, gfp_t gfp, int node, unsigned int orig_size);
__hidden void debug_slab_free(struct kmem_cache *s, struct slab *slab, void *object);
__hidden unsigned long debug_validate_cache(struct kmem_cache *s);
/* krealloc in place of a debug kmalloc object: its kmalloc red zone moves. */
__hidden void debug_krealloc(struct kmem_cache *s, void *object, size_t new_size, gfp_t gfp);
/* The debug attribute writes: 0, -EBUSY (objects), -EINVAL (merged). */
__hidden int slab_set_debug(struct kmem_cache *s, slab_flags_t flag, bool on);
/* ksize() of a debug kmalloc object: all of it is the caller's now. */
__hidden void debug_ksize(struct kmem_cache *s, void *object);
/* List the objects still allocated at destroy; returns how many. */
__hidden unsigned long debug_list_leaks(struct kmem_cache *s);

/* ---- slub.c's helpers the debug paths share ------------------------------- */

__hidden void slab_free_pages(struct kmem_cache *s, struct slab *slab);

#endif
