/* SPDX-License-Identifier: MIT */
/*
 * memmap.h - the memory map: page descriptors and the section table.
 *
 * Glossary
 *   region   a run of address space the allocator owns, aligned to
 *            SECTION_SIZE and a whole number of slots long.  A *section*
 *            region (one slot, 64 MiB) feeds a zone's buddy lists; a *large*
 *            region holds exactly one allocation above MAX_PAGE_ORDER.
 *   slot     one SECTION_SIZE-aligned piece of the address space; the section
 *            table has an entry per slot naming the region that owns it.
 *   mem_map  the region's array of struct page, one per 4 KiB page of the
 *            region, at the start of the region itself (in a section, the
 *            slab link table follows it: SLAB_LINK_OFFSET).  Descriptors 0
 *            and 1 describe pages of the mem_map, which are never handed
 *            out, so they hold the region header (struct mem_region).
 *
 * Because the mem_map sits at the start of its region, both directions are
 * arithmetic after one table load:
 *   virt_to_page(a)  = base + ((a - base) >> PAGE_SHIFT) * 32
 *   page_address(pg) = base + ((pg - base) >> 5) << PAGE_SHIFT
 * with base = table[a >> SECTION_SHIFT] (a descriptor lives in its region,
 * so the same table finds the base of a page pointer).
 *
 * Invariants
 *   - table[slot] is 0 or the base of the one region covering the slot.
 *   - The mem_map covers every page of every slot of the region, so a lookup
 *     of any address in an owned slot reads committed memory.
 *   - An all-zero descriptor means "not the start of anything": no block
 *     is in use from it (tails of extents and large regions are left zero).
 *   - Regions of kind SECTION are never unmapped: pointers into them stay
 *     resolvable for the life of the process.
 *   - Data pages of a region are [first_page, first_page + nr_pages).  A
 *     region owns its slots but not always all of their address space:
 *     under a limit on it (ulimit -v) a section maps its slot as it is
 *     carved, and a large region maps its data only.  The rest may hold
 *     anyone's mappings; their descriptors stay zero (no block of ours).
 */
#ifndef SLUB_MEMMAP_H
#define SLUB_MEMMAP_H

#include <assert.h>

#include <slub.h>
#include "base/compiler.h"
#include "base/list.h"

#define SECTION_SHIFT 26
#define SECTION_SIZE (1UL << SECTION_SHIFT)
#define PAGES_PER_SECTION (SECTION_SIZE >> PAGE_SHIFT)
/*
 * User addresses we can index: below 2^47 on x86-64 with 4-level tables,
 * below 2^48 on arm64 (48-bit VA).  mmap only goes higher when asked to.
 */
#if defined(__aarch64__)
#define ADDR_BITS 48
#else
#define ADDR_BITS 47
#endif
#define NR_SECTION_SLOTS (1UL << (ADDR_BITS - SECTION_SHIFT))
/* Table entry bit: the slot belongs to a large region (unmapped on free). */
#define SLOT_LARGE (1u << 31)
static_assert(ADDR_BITS - SECTION_SHIFT < 31, "a slot read as int32_t is negative only for SLOT_LARGE");

/* Page flags (struct page.flags). */
enum pageflags {
	PG_buddy    = 1u << 0,	/* head of a free block on a buddy list */
	PG_zero     = 1u << 1,	/* free block known zero and not resident */
	PG_head     = 1u << 2,	/* head of an allocated block */
	PG_tail     = 1u << 3,	/* tail of an allocated block */
	PG_large    = 1u << 4,	/* head of a large region's allocation */
	PG_isolated = 1u << 5,	/* free block off the lists, being decommitted */
	PG_slab     = 1u << 6,	/* owned by the slab layer (later issues) */
	PG_reserved = 1u << 7,	/* never allocatable (region header) */
	PG_pcp      = 1u << 8,	/* free block on a per-CPU list */
	/* Set and cleared by the slab layer only, on pages it owns: */
	PG_slab_partial = 1u << 9,	/* slab is on its node's partial list */
	PG_kmalloc_large = 1u << 10,	/* block is a large kmalloc allocation */
	PG_extent = 1u << 11,		/* first block of a malloc extent (nr_extent_pages) */
	PG_headonly = 1u << 12,		/* allocated block whose tails stay zero (extents) */
	PG_fresh = 1u << 13,		/* allocated block none of whose pages were resident
					   (alloc_pages_node): its owner may fault them in */
	PG_slab_disabled = 1u << 14,	/* a debug slab given up after a failed check */
};

/*
 * struct page - one per 4 KiB page, 32 bytes (0.78% of the memory).
 * Flags, order, zone and node belong to the page allocator and the page's
 * current owner.  A slab reads its head descriptor as a struct slab
 * (slab.h): its cache in the second word, its freelist and counters in the
 * list slot; its own list links are in the section's link table, below.
 */
struct page {
	uint32_t flags;		/* PG_* */
	uint8_t order;		/* order of a free or allocated block (head) */
	uint8_t zone;		/* zone index (head of an allocated block) */
	uint16_t node;		/* node id (head of an allocated block) */
	/*
	 * The second word says with one sign test whether a head is a slab
	 * (object_slab): a slab's is its cache, a user-space pointer, so
	 * positive; every other word is 0 or negative (PAGE_WORD_TAG), a
	 * tail's included, in case the page changed since it was looked up.
	 */
	union {
		/* Tail page of an allocated block: ~head (bit 0 set, negative). */
		uintptr_t compound_head;
		/* Free block head: when it was freed, ms << 1 | PAGE_WORD_TAG (0: clean). */
		uint64_t free_stamp;
		/* Allocated head: 0, or a slab's cache (struct slab.slab_cache). */
	};
	union {
		/* Free block head: its buddy or per-CPU list. */
		struct list_head lru;
		/* PG_extent head: pages of the extent (an extent is on no list). */
		unsigned long nr_extent_pages;
		/* Slab head: freelist+counters (struct slab). */
	};
} __attribute__((aligned(32)));

static_assert(sizeof(struct page) == 32, "struct page must stay 32 bytes");
#define PAGE_WORD_TAG (1UL << 63)
static_assert(offsetof(struct page, lru) == 16, "struct slab overlays two descriptors");

#define MEMMAP_PAGES_PER_SLOT (PAGES_PER_SECTION * sizeof(struct page) / PAGE_SIZE)
/*
 * A section's link table follows its mem_map: 16 bytes per page, the list
 * links of a slab headed there (struct slab_link, slab.h).  Backed lazily,
 * as the mem_map: only entries of slabs ever put on a list are touched.
 * Large regions hold no slabs and have none.
 */
#define SLAB_LINK_SIZE 16
#define SLAB_LINK_OFFSET (MEMMAP_PAGES_PER_SLOT * PAGE_SIZE)
#define SLAB_LINK_PAGES (PAGES_PER_SECTION * SLAB_LINK_SIZE / PAGE_SIZE)
#define SECTION_FIRST_PAGE (MEMMAP_PAGES_PER_SLOT + SLAB_LINK_PAGES)

enum region_kind { REGION_SECTION = 1, REGION_LARGE = 2 };

/* Region header, stored in descriptors 0-1 of the region's own mem_map. */
struct mem_region {
	/* descriptor 0 */
	uint32_t flags;		/* PG_reserved: descriptor 0 is no block of anyone's */
	uint8_t kind;		/* enum region_kind */
	uint8_t zone;
	uint16_t node;
	uint64_t word_tag;	/* PAGE_WORD_TAG: a stray lookup finds no tail, no cache */
	uint32_t nr_slots;
	uint32_t first_page;	/* index of the first data page */
	uint64_t nr_pages;	/* data pages (LARGE: the pages after them are zero:
				   never touched, or given back when it shrank) */
	/* descriptor 1: reserved as well, to every lookup */
	uint32_t flags1;	/* PG_reserved */
	union {
		uint32_t carved;	/* SECTION: pages below this index are the buddy lists' */
		uint32_t moved_pages;	/* LARGE: 0, or the data pages of the one mapping
					   remap_pages_extent() moved here (read-write) */
	};
	uint64_t word_tag1;	/* PAGE_WORD_TAG, as word_tag */
	struct mem_region *next;	/* zone's list of sections */
	uint64_t reserved_bytes;	/* size of the reservation; it may grow within the slots
					   (large regions, and sections under ulimit -v) */
};
#define MEMMAP_HEADER_DESCRIPTORS 2
static_assert(sizeof(struct mem_region) <= MEMMAP_HEADER_DESCRIPTORS * sizeof(struct page),
	      "region header must fit in its descriptors");
static_assert(offsetof(struct mem_region, flags1) == sizeof(struct page) + offsetof(struct page, flags) &&
	      PAGES_PER_SECTION <= UINT32_MAX, "descriptor 1's flags; carved fits");
static_assert(offsetof(struct mem_region, word_tag) == offsetof(struct page, compound_head) &&
	      offsetof(struct mem_region, word_tag1) ==
		      sizeof(struct page) + offsetof(struct page, compound_head),
	      "the header's descriptors read as tagged heads");
static_assert(MEMMAP_PAGES_PER_SLOT >= MEMMAP_HEADER_DESCRIPTORS,
	      "the header's descriptors describe mem_map pages, never data");

/*
 * Region base >> SECTION_SHIFT for each slot (| SLOT_LARGE for a large
 * region), 0 if the slot is not ours.  NR_SECTION_SLOTS entries and a
 * guard entry, always 0, for the address 1 << ADDR_BITS, mapped
 * with the first region; NULL before it, when no address is ours.  Not a
 * static array: 8 MiB of bss would make the library's image 2 MiB or more,
 * and the kernel then places it on a 2 MiB boundary, which pins libc, mapped
 * next to it, to one placement that fault-around happens to make costly
 * (about 20 more resident pages of libc in every process).
 */
extern __hidden uint32_t *memmap_section_table;

static inline const uint32_t *memmap_table(void)
{
	/*
	 * Relaxed: the table is fresh zero pages from mmap, and each entry is
	 * stored with release, so nothing else needs ordering (and aarch64
	 * keeps a plain load on every free).
	 */
	return __atomic_load_n(&memmap_section_table, __ATOMIC_RELAXED);
}

static inline uint32_t memmap_slot(uintptr_t addr)
{
	const uint32_t *table = memmap_table();
	/*
	 * addr - 1: NULL, which free() sees more than any other non-object,
	 * is refused without reading table[0] (as many instructions as
	 * addr >> ADDR_BITS).  Some kernels back a read of an untouched page
	 * with a page of its own, so reading it would cost every process a
	 * resident page.  1 << ADDR_BITS itself reads the guard entry.
	 */
	if (unlikely(((addr - 1) >> ADDR_BITS) || !table))
		return 0;
	return READ_ONCE(table[addr >> SECTION_SHIFT]);
}

static inline uintptr_t memmap_region_base(uintptr_t addr)
{
	return (uintptr_t)(memmap_slot(addr) & ~SLOT_LARGE) << SECTION_SHIFT;
}

/*
 * Does @addr lie in a large region?  Such a region can be unmapped by a
 * racing free, so its header may only be read under memmap_lock().
 */
static inline bool memmap_in_large_region(const void *addr)
{
	return memmap_slot((uintptr_t)addr) & SLOT_LARGE;
}

/* The descriptor of the page holding @addr, or NULL if it is not ours. */
static inline struct page *memmap_virt_to_page(const void *addr)
{
	uintptr_t a = (uintptr_t)addr;
	uintptr_t base = memmap_region_base(a);
	if (!base)
		return NULL;
	return (struct page *)(base + ((a - base) >> PAGE_SHIFT) * sizeof(struct page));
}

/* Address of the page @page describes; @page must be a real descriptor. */
static inline void *memmap_page_address(const struct page *page)
{
	uintptr_t p = (uintptr_t)page;
	uintptr_t base = memmap_region_base(p);
	return (void *)(base + ((p - base) / sizeof(struct page)) * PAGE_SIZE);
}

static inline struct mem_region *page_region(const struct page *page)
{
	return (struct mem_region *)memmap_region_base((uintptr_t)page);
}

/* Index of @page within its region's mem_map. */
static inline uintptr_t page_index(const struct page *page, const struct mem_region *r)
{
	return (uintptr_t)(page - (const struct page *)r);
}

/*
 * Flags change outside the zone lock too (an owner freeing its block, a
 * per-CPU list taking one), but never to or from PG_buddy: a buddy check
 * under the zone lock may read a neighbour's flags while they change, so
 * every access is a (relaxed) atomic one.
 */
static inline uint32_t page_flags(const struct page *page)
{
	return __atomic_load_n(&page->flags, __ATOMIC_RELAXED);
}

static inline void set_page_flags(struct page *page, uint32_t flags)
{
	__atomic_store_n(&page->flags, flags, __ATOMIC_RELAXED);
}

/*
 * The head of the allocated block @page belongs to.  Tails of buddy blocks
 * point at their head, except a malloc extent's (PG_headonly: only the
 * start of an extent is ever looked up, and its tails would cost 1.6% of
 * its size in descriptors, touched or not): such a tail is a zero
 * descriptor, its own "head", where callers find no block.  Tails of a
 * large region are never written either (16 MiB of descriptors per GiB);
 * they resolve through the region.  Without a branch: head or tail is a
 * coin toss for random objects of a mixed heap (half the pages of 2-page
 * slabs are tails), and the mispredicted branch cost more than the rest of
 * the lookup (malloc_usable_size of random objects: 11.3 ns, now 6.3).
 */
static inline struct page *compound_head(struct page *page)
{
	uintptr_t word = READ_ONCE(page->compound_head);
#if defined(__x86_64__)
	/* A cmov, spelled out (GCC branches on a select): 4 instructions, where masks took 9. */
	uintptr_t head = ~word;
	__asm__("testl $1, %k[word]\n\tcmovzq %[page], %[head]"
		: [head] "+r"(head)
		: [word] "r"(word), [page] "r"(page)
		: "cc");
	return (struct page *)head;
#else
	uintptr_t tail = -(word & 1);		/* all ones for a tail */
	return (struct page *)(((uintptr_t)page & ~tail) | (~word & tail));
#endif
}

/*
 * The second word is read without a lock (object_slab on any pointer), so
 * it is written with relaxed atomic stores.
 */
static inline void set_page_word(struct page *page, uintptr_t word)
{
	__atomic_store_n(&page->compound_head, word, __ATOMIC_RELAXED);
}

/* What a tail's compound_head holds: its head, inverted. */
static inline uintptr_t tail_word(const struct page *head)
{
	return ~(uintptr_t)head;
}

/*
 * Is @page a descriptor of a data page of some region (not a header, not a
 * mem_map page, not a stray pointer)?  Cheap; for checking caller input.
 */
__hidden bool memmap_page_valid(const struct page *page);

/*
 * Map a new region with room for @nr_pages data pages, all committed.  A
 * SECTION region is one slot (@nr_pages ignored); a LARGE region's data
 * start is aligned to @data_align bytes (a power of two).  @below_4g places
 * it under 4 GiB (DMA32).  Returns the header, or NULL with errno ENOMEM
 * (the OS refused) or EEXIST (no free address range below 4 GiB).
 */
__hidden struct mem_region *memmap_add_region(uint64_t nr_pages, enum region_kind kind,
					      int zone, bool below_4g, size_t data_align);
/*
 * A LARGE region whose data pages are left reserved, not committed: the
 * caller moves a mapping there (os_move) or releases the region.
 */
__hidden struct mem_region *memmap_add_region_for_move(uint64_t nr_pages, int zone);

/* Serialise against region changes (lookups of large regions need it). */
__hidden void memmap_lock(void);
__hidden void memmap_unlock(void);
__hidden void memmap_reinit_lock(void);	/* forked child */

/*
 * memmap_virt_to_page() for a caller that reads the descriptor: in a
 * large region, which a racing free may unmap, with memmap_lock taken
 * (*locked; the caller unlocks).  One look at the slot decides, as a
 * section's slot never changes once set.
 */
static inline struct page *memmap_virt_to_page_locked(const void *addr, bool *locked)
{
	uint32_t slot = memmap_slot((uintptr_t)addr);
	*locked = slot & SLOT_LARGE;
	if (!slot)
		return NULL;
	if (*locked)
		memmap_lock();
	return memmap_virt_to_page(addr);
}
/*
 * Unregister a large region (memmap_lock held): from now on no lookup finds
 * it.  Then, with the lock dropped, memmap_release_region() unmaps it.
 */
__hidden void memmap_unregister_region(struct mem_region *r);
/*
 * Give up the slots of large region @r from @nr_slots on, which it no
 * longer maps (memmap_lock held): another region may be placed there.
 */
__hidden void memmap_unregister_slots_from(struct mem_region *r, uint32_t nr_slots);
__hidden void memmap_release_region(void *base, size_t bytes);

/* First data page descriptor of a region. */
static inline struct page *region_first_page(struct mem_region *r)
{
	return (struct page *)r + r->first_page;
}

#endif
