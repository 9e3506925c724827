/* SPDX-License-Identifier: MIT */
/*
 * maps.h - which mapping of the process holds an address, from
 * /proc/self/maps read with open/read into a stack buffer: no malloc, no
 * stdio, no dladdr() (it takes dl_load_lock, which a thread inside dlopen()
 * may hold while it waits for an allocator lock we hold).  Used to name
 * stack frames (report_abort.c, stack/stacktrace_symbol.c) and by the leak
 * scan for its roots (slab/debug/leak_scan.c).
 */
#ifndef SLUB_MAPS_H
#define SLUB_MAPS_H

#include <stddef.h>
#include <stdint.h>
#include "base/compiler.h"

/* A line of /proc/self/maps, path included (PATH_MAX and the fields). */
#define MAPS_LINE 4608

struct maps_entry {
	uintptr_t start, end;	/* [start, end) */
	uintptr_t offset;	/* file offset of start */
	unsigned long inode;	/* 0 for anonymous memory */
	char perms[5];		/* "r-xp" */
	size_t rss, swap;	/* bytes resident, swapped out (SIZE_MAX: not known) */
	bool userfault;		/* a missing page is a userfaultfd's to fill (true: not known) */
};

/*
 * Find the mapping holding @addr: true and *@e filled, its path (empty for
 * anonymous memory, "[vdso]", "[stack]" ...) copied into @path, cut to
 * @path_len; false if no mapping holds it or maps cannot be read.  Runs
 * with cancellation off (open and read are cancellation points).
 */
__hidden bool maps_find(uintptr_t addr, struct maps_entry *e, char *path, size_t path_len);

/*
 * Call @fn for each mapping, in address order, until it returns true;
 * false if maps cannot be read.  Same rules as maps_find(); @fn must not
 * map or unmap (the file is read as the walk goes).
 */
__hidden bool maps_walk(bool (*fn)(const struct maps_entry *e, const char *path, void *arg),
			void *arg);
/*
 * maps_walk() over /proc/self/smaps: each entry's rss and swap filled in.
 * Slower (the kernel walks each mapping's page tables); @fn is called for
 * a mapping once the next one's header is read.
 */
__hidden bool maps_walk_sizes(bool (*fn)(const struct maps_entry *e, const char *path,
					 void *arg), void *arg);

#endif
