// SPDX-License-Identifier: MIT
/*
 * malloc_stats.c - the malloc library's answers about itself and its one
 * knob: malloc_trim, malloc_stats, mallinfo2/mallinfo, malloc_info,
 * mallopt.  Figures come from the slab layer (slab_get_info) and the page
 * allocator's counters; "mmap" in glibc's vocabulary is our large regions.
 * glibc's arena is memory taken from the OS and not given back; ours
 * counts, besides slabs and extents, the free pages still possibly
 * resident, which are also keepcost: what malloc_trim() can give back.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "malloc/malloc_extents.h"
#include "page/page_alloc.h"
#include "slab/core/slab.h"
#include "slab/core/slab_common.h"

#define MALLOC_API __attribute__((visibility("default")))

struct totals {
	unsigned long slab_bytes;	/* pages of all slabs */
	unsigned long used_bytes;	/* active objects * object stride */
	unsigned long partial_slabs;
};

static void add_cache(struct kmem_cache *s, void *arg)
{
	struct totals *t = arg;
	struct slab_info info;
	slab_get_info(s, &info);
	t->slab_bytes += info.bytes;
	t->used_bytes += info.active_objs * s->size;
	t->partial_slabs += info.partial_slabs;
}

static struct mallinfo2 collect(void)
{
	struct totals t = { 0 };
	slab_for_each_cache(add_cache, &t);
	unsigned long extent_bytes = READ_ONCE(page_alloc_stats.extent_pages) << PAGE_SHIFT;
	/* Mappings the extent cache keeps are free memory, not blocks in use. */
	unsigned long idle_bytes = READ_ONCE(page_alloc_stats.idle_extent_pages) << PAGE_SHIFT;
	unsigned long large_bytes = (READ_ONCE(page_alloc_stats.large_pages) << PAGE_SHIFT) - idle_bytes;
	unsigned long large = READ_ONCE(page_alloc_stats.large_allocs) -
			      READ_ONCE(page_alloc_stats.idle_extents);
	/* Buddy extents in malloc's bins: free and resident, like the buddy lists' dirty pages. */
	unsigned long binned_bytes = BINNED_PAGES(binned_kept()) << PAGE_SHIFT;
	extent_bytes -= idle_bytes;
	/* Extents above 4 MiB are large regions: count them once, as "mmap". */
	unsigned long buddy_extents = extent_bytes > large_bytes ? extent_bytes - large_bytes : 0;
	buddy_extents = buddy_extents > binned_bytes ? buddy_extents - binned_bytes : 0;
	unsigned long held = (page_alloc_resident_free_pages() << PAGE_SHIFT) + binned_bytes;
	struct mallinfo2 mi = {
		.arena = t.slab_bytes + buddy_extents + held,
		.fsmblks = idle_bytes + binned_bytes,	/* glibc: fastbin bytes; here: kept extents */
		.ordblks = t.partial_slabs,
		.hblks = large,
		.hblkhd = large_bytes,
		.uordblks = t.used_bytes + buddy_extents,
		.keepcost = held,
	};
	mi.fordblks = mi.arena - mi.uordblks;
	return mi;
}

MALLOC_API struct mallinfo2 mallinfo2(void)
{
	return collect();
}

static int clamp(size_t x)
{
	return x > INT_MAX ? INT_MAX : (int)x;
}

MALLOC_API struct mallinfo mallinfo(void)
{
	struct mallinfo2 m = collect();
	return (struct mallinfo){
		.arena = clamp(m.arena), .ordblks = clamp(m.ordblks), .hblks = clamp(m.hblks),
		.hblkhd = clamp(m.hblkhd), .uordblks = clamp(m.uordblks),
		.fordblks = clamp(m.fordblks), .keepcost = clamp(m.keepcost),
	};
}
MALLOC_API struct mallinfo __libc_mallinfo(void) __attribute__((alias("mallinfo")));

static void shrink_one(struct kmem_cache *s, void *arg)
{
	(void)arg;
	kmem_cache_shrink(s);
}

/* Empty slabs back to the page allocator, then every free page back to the OS. */
MALLOC_API int malloc_trim(size_t pad)
{
	(void)pad;	/* nothing here grows like glibc's heap top */
	extent_cache_drain();
	slab_for_each_cache(shrink_one, NULL);
	return slub_reclaim() > 0;
}

/* glibc's format, on stderr, then our caches. */
MALLOC_API void malloc_stats(void)
{
	struct mallinfo2 m = collect();
	char buf[512];
	int n = snprintf(buf, sizeof(buf),
			 "Arena 0:\nsystem bytes     = %10zu\nin use bytes     = %10zu\n"
			 "Total (incl. mmap):\nsystem bytes     = %10zu\nin use bytes     = %10zu\n"
			 "max mmap regions = %10zu\nmax mmap bytes   = %10zu\n",
			 m.arena, m.uordblks, m.arena + m.hblkhd, m.uordblks + m.hblkhd, m.hblks,
			 m.hblkhd);
	int cancel = os_cancel_off();
	bool written = n > 0 && write(STDERR_FILENO, buf, (size_t)n) >= 0;
	os_cancel_restore(cancel);
	if (written)
		slab_write_cache_table(STDERR_FILENO);
}

MALLOC_API int malloc_info(int options, FILE *fp)
{
	if (options) {
		errno = EINVAL;
		return -1;
	}
	struct mallinfo2 m = collect();
	/* Given back to the OS so far (decommitted), and of that by the dirty bound. */
	size_t returned = READ_ONCE(page_alloc_stats.decommitted_pages) << PAGE_SHIFT;
	size_t by_bound = READ_ONCE(page_alloc_stats.bound_pages) << PAGE_SHIFT;
	/* Blocks realloc moved by their pages (mremap), and the bytes not copied. */
	size_t moved = READ_ONCE(page_alloc_stats.remapped_extents);
	size_t moved_bytes = READ_ONCE(page_alloc_stats.remapped_pages) << PAGE_SHIFT;
	/* Freed mappings cut for later, smaller blocks: the pieces moved on, cached. */
	size_t split = READ_ONCE(page_alloc_stats.split_extents);
	size_t split_bytes = READ_ONCE(page_alloc_stats.split_pages) << PAGE_SHIFT;
	fprintf(fp, "<malloc version=\"libslub-1\">\n"
		    "<total type=\"slabs\" size=\"%zu\"/>\n<total type=\"in-use\" size=\"%zu\"/>\n"
		    "<total type=\"free-resident\" size=\"%zu\"/>\n"
		    "<total type=\"mmap\" count=\"%zu\" size=\"%zu\"/>\n"
		    "<total type=\"returned\" size=\"%zu\"/>\n"
		    "<total type=\"returned-by-bound\" size=\"%zu\"/>\n"
		    "<total type=\"mmap-moved\" count=\"%zu\" size=\"%zu\"/>\n"
		    "<total type=\"mmap-split\" count=\"%zu\" size=\"%zu\"/>\n</malloc>\n",
		m.arena - m.keepcost, m.uordblks, m.keepcost, m.hblks, m.hblkhd, returned, by_bound,
		moved, moved_bytes, split, split_bytes);
	return 0;
}

/* glibc's tunables have no counterpart here: every one is refused (0). */
MALLOC_API int mallopt(int param, int value)
{
	(void)param;
	(void)value;
	return 0;
}
/* The aliases need not repeat glibc's declaration attributes (GCC asks them to). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-attributes"
#endif
MALLOC_API int __libc_mallopt(int, int) __attribute__((alias("mallopt")));
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
