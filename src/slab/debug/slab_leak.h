/* SPDX-License-Identifier: MIT */
/*
 * slab_leak.h - slub_leak_check (slab_leak.c): the table of call sites
 * that blocks left allocated at exit are summed in, shared with the
 * malloc library, which adds its extents to it.
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
};

struct leak_table {
	struct leak_site *site;		/* open addressing, mapped (never malloc) */
	size_t map_bytes;
	unsigned long nr_sites, objects, unplaced;
	size_t bytes;
};

__hidden bool leak_table_init(struct leak_table *lt);
__hidden void leak_table_release(struct leak_table *lt);
/* One block left allocated: @t its allocation track, @bytes the size asked for. */
__hidden void leak_table_add(struct leak_table *lt, const struct track *t, size_t bytes);
/* The malloc library's debug extents (a weak no-op in libslub.so). */
__hidden void slub_leak_collect_extents(struct leak_table *lt);
/* Print the listing now (the exit-time destructor calls it under slub_leak_check). */
__hidden void slub_leak_report(void);

#endif
