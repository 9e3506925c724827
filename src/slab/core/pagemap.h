/* SPDX-License-Identifier: MIT */
/*
 * pagemap.h - a measurement build's lookup of a slab by address
 * (cmake -DSLUB_PAGEMAP=ON; issue 26): a table indexed by page number
 * whose entry for every page of a slab names the slab's head descriptor,
 * as tcmalloc's pagemap names a span.  Without the option object_slab()
 * goes through the section table, the page's descriptor and its compound
 * head (slab.h); with it, through this table alone, and the slab's start
 * is its section's base (slabs live in section regions, one
 * SECTION_SIZE-aligned slot each) plus its head descriptor's index in the
 * section, in pages (slab_start_in_section()).
 *
 * Two levels, for the ADDR_BITS - PAGE_SHIFT bits of a page number:
 *   root  PAGEMAP_ROOT_ENTRIES leaf pointers, in the bss (256 KiB, of
 *         which the pages naming our leaves are touched: one, usually);
 *         never NULL, so a lookup needs no test of it.
 *   leaf  one per 4 GiB of address space (2^20 pages: its index is the low
 *         32 bits of the address >> PAGE_SHIFT), 8 MiB of address space,
 *         mapped sparse (no commit charge, small pages) when the first
 *         slab in its range is made, never unmapped.  Resident: 8 bytes per
 *         page of slabs, 2 MiB per GiB of slab heap at most (a leaf page
 *         covers 2 MiB of address space).
 *
 * An entry is set, for every page of a slab, before its cache is (so
 * before any of its objects is handed out), and cleared before the slab's
 * descriptors are (so before its pages go back to the page allocator).  A
 * lookup racing with that reads a stale entry or a stale descriptor; it then
 * re-checks the head's second word, the slab's cache exactly while it is
 * a slab, as the descriptor lookup does: a descriptor that is now a tail,
 * a free block or another slab's head says so, and another slab's bounds
 * its objects (slab_object_valid_at).
 */
#ifndef SLUB_PAGEMAP_H
#define SLUB_PAGEMAP_H

#ifdef SLUB_PAGEMAP

#include "base/compiler.h"
#include "page/memmap.h"

struct slab;

#define PAGEMAP_ROOT_BITS 15
#define PAGEMAP_LEAF_SHIFT (ADDR_BITS - PAGEMAP_ROOT_BITS)	/* 32 on x86-64 */
#define PAGEMAP_ROOT_ENTRIES (1UL << PAGEMAP_ROOT_BITS)
#define PAGEMAP_LEAF_ENTRIES (1UL << (PAGEMAP_LEAF_SHIFT - PAGE_SHIFT))
#define PAGEMAP_LEAF_BYTES (PAGEMAP_LEAF_ENTRIES * sizeof(struct slab *))

extern __hidden struct slab **pagemap_root[PAGEMAP_ROOT_ENTRIES];

/* @addr's entry in its leaf: with 4 GiB leaves, a 32-bit shift (no mask). */
static inline size_t pagemap_index(uintptr_t addr)
{
#if PAGEMAP_LEAF_SHIFT == 32
	return (uint32_t)addr >> PAGE_SHIFT;
#else
	return (addr >> PAGE_SHIFT) & (PAGEMAP_LEAF_ENTRIES - 1);
#endif
}

/*
 * The slab whose pages include @addr's, from its entry; NULL if none.
 * @addr must be below 1 << ADDR_BITS.
 */
static inline struct slab *pagemap_lookup(uintptr_t addr)
{
	struct slab **leaf = READ_ONCE(pagemap_root[addr >> PAGEMAP_LEAF_SHIFT]);
	if (unlikely(!leaf))
		return NULL;
	return READ_ONCE(leaf[pagemap_index(addr)]);
}

/*
 * Name @slab (or NULL) in the entries of the 2^@order pages at @start.
 * Setting may map a leaf: false if that failed (nothing set).  A slab
 * never straddles two leaves: it lies in one section's slot.
 */
__hidden bool pagemap_set(uintptr_t start, unsigned int order, struct slab *slab);

#endif /* SLUB_PAGEMAP */
#endif
