/* SPDX-License-Identifier: MIT */
/*
 * malloc_extent_pcp.h - one freed buddy extent (up to 1 MiB) kept per CPU,
 * put and taken by restartable sequences: the free and the next malloc of
 * its size on that CPU take no lock and no locked instruction
 * (malloc_extent_pcp.c has the rest: retire, decay, drain).
 *
 * Why: with the bins (malloc_extent_bins.c) a large block's malloc+free
 * pair still made three locked instructions, twice glibc's time; a program
 * that frees a buffer mostly asks for one of its size again on the same CPU.
 *
 * A CPU's slot: the extent (0: none) and its time stamp; a third word,
 * closed, is set while a lock holder empties the slot, and every sequence
 * tests it first.  A sequence commits with the store of the extent word.
 * Only in rseq mode (slub_percpu_rseq): without it, the bins serve.
 *
 * The put reads no clock (it was a tenth of the pair): it leaves the stamp
 * 0, and the decay's walk that first finds the extent stamps it with a
 * clock read under its lock, later than the free, so the extent goes back a
 * decay period after that walk: never early.  A stamp taken from a clock
 * read some frees before instead could be older than the free by a whole
 * quiet spell, and a buffer freed and asked for again at once was then
 * given back and faulted in.
 */
#ifndef SLUB_MALLOC_EXTENT_PCP_H
#define SLUB_MALLOC_EXTENT_PCP_H

#include <stddef.h>

#include "page/page_alloc.h"
#include "slab/core/slab.h"

/* The largest extent a CPU keeps (the bins take larger ones). */
#define EXTENT_PCP_MAX_PAGES 256UL

struct extent_pcp {
	struct page *page;	/* the extent kept, PG_extent clear; NULL: none */
	uint64_t when;		/* a walk of the decay saw it then (ms); 0: not yet */
	unsigned long closed;	/* a lock holder empties the slot (zero: a page never written) */
} __attribute__((aligned(64)));

#define EXTENT_PCP_SHIFT 6
#define EXTENT_PCP_CLOSED 16

/* Every CPU's slot: a CPU that never frees an extent leaves its line untouched. */
extern __hidden struct extent_pcp extent_pcp[];
/* Slots in use, set at the first put (0: none yet, the slow paths skip them). */
extern __hidden unsigned int extent_pcp_nr;
__hidden void extent_pcp_first_use(void);
/* Tell the page allocator a slot may hold an extent (page_alloc_stats.pcp_extents_kept). */
__hidden void extent_pcp_note_kept(void);
/*
 * The CPUs whose slots may hold an extent, bit n for CPU n, where there are
 * at most 64: a put sets its CPU's bit if it finds it clear, a walk of the
 * decay clears those of empty slots, behind a fence.  A put that finds no
 * other CPU's bit needs no clock read for their decay; a stale bit only
 * costs puts a clock read until a walk clears it.
 */
struct extent_pcp_held {
	unsigned long cpus;
} __attribute__((aligned(64)));	/* read by every put, written when a bit changes */
extern __hidden struct extent_pcp_held extent_pcp_held;

#if SLUB_HAVE_RSEQ_ASM
/*
 * Keep @page (@nr pages, claimed) in this CPU's slot if it is open and
 * empty; false: the caller keeps it elsewhere.  *@alone: no other CPU's slot
 * is known to hold an extent.
 */
static inline bool extent_pcp_put(struct page *page, unsigned long nr, bool *alone)
{
	intptr_t abi = slub_percpu_rseq;
	if (!abi || nr > EXTENT_PCP_MAX_PAGES)
		return false;
	if (unlikely(!extent_pcp_nr))
		extent_pcp_first_use();
	unsigned long c;
	__asm__ __volatile__ goto(
		RSEQ_CS_DESCRIPTOR(1, 2, 4)
		RSEQ_ENTER("[abi]", "[c]")
		"1:\n\t"
		"movl %%fs:4(%[abi]), %k[c]\n\t"
		"cmpl %[nr], %k[c]\n\t"
		"jae %l[busy]\n\t"
		"shlq $" PCPU_STR(EXTENT_PCP_SHIFT) ", %[c]\n\t"
		"addq %[slots], %[c]\n\t"
		"cmpq $0, " PCPU_STR(EXTENT_PCP_CLOSED) "(%[c])\n\t"
		"jne %l[busy]\n\t"
		"cmpq $0, (%[c])\n\t"
		"jne %l[busy]\n\t"
		"movq $0, 8(%[c])\n\t"
		"movq %[page], (%[c])\n\t"		/* commit */
		"2:\n\t"
		RSEQ_ABORT_RESTART
		: [c] "=&r"(c)
		: [abi] "r"(abi), [slots] "r"(extent_pcp), [nr] "rm"(extent_pcp_nr),
		  [page] "r"(page)
		: "memory", "cc"
		: busy);
	/* Read first: the store only when the hint is off, not a shared line written by every free. */
	if (unlikely(!READ_ONCE(page_alloc_stats.pcp_extents_kept)))
		extent_pcp_note_kept();
	unsigned long bit = 1UL << (((c - (unsigned long)extent_pcp) >> EXTENT_PCP_SHIFT) & 63);
	unsigned long held = __atomic_load_n(&extent_pcp_held.cpus, __ATOMIC_RELAXED);
	if (unlikely(!(held & bit)))
		__atomic_fetch_or(&extent_pcp_held.cpus, bit, __ATOMIC_RELAXED);
	*alone = !(held & ~bit) && extent_pcp_nr <= 64;
	return true;
busy:
	return false;
}

/* This CPU's kept extent if it has @nr pages, or NULL. */
static inline struct page *extent_pcp_take(unsigned long nr)
{
	intptr_t abi = slub_percpu_rseq;
	if (!abi || nr > EXTENT_PCP_MAX_PAGES)
		return NULL;
	struct page *page;
	unsigned long c, t;
	__asm__ __volatile__(
		RSEQ_CS_DESCRIPTOR(1, 2, 4)
		RSEQ_ENTER("[abi]", "[c]")
		"1:\n\t"
		"xorl %k[page], %k[page]\n\t"
		"movl %%fs:4(%[abi]), %k[c]\n\t"
		"cmpl %[nr], %k[c]\n\t"
		"jae 3f\n\t"
		"shlq $" PCPU_STR(EXTENT_PCP_SHIFT) ", %[c]\n\t"
		"addq %[slots], %[c]\n\t"
		"cmpq $0, " PCPU_STR(EXTENT_PCP_CLOSED) "(%[c])\n\t"
		"jne 3f\n\t"
		"movq (%[c]), %[t]\n\t"
		"testq %[t], %[t]\n\t"
		"jz 3f\n\t"
		"cmpq %[want], %c[nroff](%[t])\n\t"
		"jne 3f\n\t"
		"movq $0, (%[c])\n\t"			/* commit */
		"2:\n\t"
		"movq %[t], %[page]\n\t"
		"3:\n\t"
		RSEQ_ABORT_RESTART
		: [page] "=&r"(page), [c] "=&r"(c), [t] "=&r"(t)
		: [abi] "r"(abi), [slots] "r"(extent_pcp), [nr] "rm"(extent_pcp_nr),
		  [want] "r"(nr), [nroff] "i"(offsetof(struct page, nr_extent_pages))
		: "memory", "cc");
	return page;
}
#else
static inline bool extent_pcp_put(struct page *page, unsigned long nr, bool *alone)
{
	(void)page, (void)nr, (void)alone;
	return false;
}

static inline struct page *extent_pcp_take(unsigned long nr)
{
	(void)nr;
	return NULL;
}
#endif

/*
 * The slow side, under one lock.  Expire: give back to the OS the kept
 * extents that waited a decay period by @now_ms since a walk stamped them
 * (every CPU's), stamp the others, and return when the next one falls due
 * (UINT64_MAX: none kept).  In the counting
 * build (SLUB_FAKE_RSEQ) the slots, as the slab fast paths, are right for
 * one thread only.
 */
__hidden uint64_t extent_pcp_expire(uint64_t now_ms);
/*
 * Take the kept extents, this CPU's (@all false) or every CPU's, and pass
 * each to @give; returns the pages given.
 */
__hidden unsigned long extent_pcp_drain(bool all, void (*give)(struct page *page, unsigned long nr));
/* Does a CPU keep the extent that starts in @p's page (a racy look, for reports)? */
__hidden bool extent_pcp_holds(const void *p);

#endif
