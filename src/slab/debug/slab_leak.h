/* SPDX-License-Identifier: MIT */
/*
 * slab_leak.h - slub_leak_check (slab_leak.c): the blocks left allocated
 * at exit, which the scan (leak_scan.c) marks reached or not, and the
 * table of call sites they are summed in.  Shared with the malloc
 * library, which adds its extents.
 */
#ifndef SLUB_SLAB_LEAK_H
#define SLUB_SLAB_LEAK_H

#include "slab/core/slab.h"

struct leak_site {
	uint64_t key;			/* the stack's depot handle, or the caller's address */
	uintptr_t addr;			/* the caller of the allocator */
	uint32_t handle;
	unsigned long count;
	size_t bytes;
	unsigned long ind_count;	/* the blocks its blocks alone reach (LEAK_INDIRECT) */
	size_t ind_bytes;
};

/* A block left allocated: where it is, and who allocated it. */
struct leak_block {
	uintptr_t start;		/* the pointer the program was given */
	size_t bytes;			/* what it asked for */
	uintptr_t addr;			/* the allocation track's caller */
	uint32_t handle;		/* and its stack */
	uint32_t reached;		/* LEAK_REACHED: a pointer to it was found (leak_scan) */
	unsigned long when;		/* allocated then (os_now_ms) */
	/* An unreferenced block that heads others (LEAK_INDIRECT): their count and bytes. */
	unsigned long ind_objects;
	size_t ind_bytes;
};

#define LEAK_REACHED 1
#define LEAK_PENDING 2			/* a live scan's: unreferenced, not yet confirmed */
#define LEAK_INDIRECT 3			/* unreferenced, but another unreferenced block points to it */

struct leak_table {
	struct leak_site *site;		/* open addressing, mapped (never malloc) */
	size_t map_bytes;
	unsigned long nr_sites, objects, unplaced;
	size_t bytes;
	struct leak_block *block;	/* every block, mapped sparse */
	size_t block_map_bytes;
	unsigned long nr_blocks, max_blocks, dropped;
	unsigned long refused;		/* allocated, but the program's free was refused */
	size_t refused_bytes;
	uintptr_t skip_start, skip_end;	/* a table of the caller's that holds block addresses */
	uintptr_t stack_from;		/* this thread's stack is read from here up (0: the scan's frame) */
};

__hidden bool leak_table_init(struct leak_table *lt);
__hidden void leak_table_release(struct leak_table *lt);
/* One block left allocated at @start: @t its allocation track, @bytes the size asked for. */
__hidden void leak_table_add(struct leak_table *lt, const void *start, size_t bytes,
			     const struct track *t);
/*
 * kmemleak's scan (leak_scan.c): from the roots (every writable mapping
 * outside the heap, the live part of this thread's stack, the slabs and
 * blocks that are no candidates) through the blocks, conservatively;
 * each block a pointer reaches (at its start or inside) is marked.  Then,
 * among the others, valgrind's split: a block that another unreferenced
 * block points to is LEAK_INDIRECT, counted in the head of its group.
 * False if it could not run (then nothing is marked).
 */
__hidden bool leak_scan(struct leak_table *lt);
/*
 * Read [@from, @to) of our own memory with process_vm_readv(), which fails
 * where a load would fault (a mapping another thread unmaps meanwhile), up
 * to @chunk bytes at a time into @buf.  @fn gets each piece read, at @at,
 * or NULL at an address that cannot be read, and returns false to stop;
 * after an unreadable one the read goes on at the next page.
 */
__hidden void leak_read_self(uintptr_t from, uintptr_t to, void *buf, size_t chunk,
			     bool (*fn)(void *arg, uintptr_t at, const void *data, size_t n),
			     void *arg);
/*
 * A free refused after a report (a damaged red zone, say): the object
 * stays allocated, but the program let it go, so the leak check counts it
 * apart instead of listing it.  Told by address and allocation track, so
 * an object freed and handed out again later is listed as usual.
 */
__hidden void leak_note_refused(const void *object, const struct track *alloc);
/*
 * The malloc library's exit() (malloc_exit.c), before the C library's: the
 * calling thread's stack from @sp up is the program's, with its registers
 * saved there.  The leak check at exit reads the stack from @sp.
 */
__hidden void slub_leak_exit_from(uintptr_t sp);
/* The malloc library's debug extents (a weak no-op in libslub.so). */
__hidden void slub_leak_collect_extents(struct leak_table *lt);
/* Where a listing goes: the process's reports (at exit), or a live scan's answer. */
struct leak_out {
	char *buf;			/* NULL: slub_report_line() */
	size_t size, len;
	bool cut;			/* a line did not fit */
};

/* One line of a listing, to @o. */
__hidden void leak_line(struct leak_out *o, const char *fmt, ...) __printf(2, 3);
/* Every tracked block into @lt: the caches' objects and the malloc library's extents. */
__hidden void leak_collect(struct leak_table *lt);
/*
 * The listing of a table the scan marked (@scanned; else every block is
 * listed as left allocated): the unreferenced blocks by call site, then
 * one line each for what is not counted.  @what says when ("at exit").
 */
__hidden void leak_listing(struct leak_out *o, struct leak_table *lt, bool scanned,
			   const char *what);
/* Print the listing now (the exit-time destructor calls it under slub_leak_check). */
__hidden void slub_leak_report(void);

#endif
