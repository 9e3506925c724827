// SPDX-License-Identifier: MIT
/*
 * malloc_extent_bins.c - freed buddy extents (above 8 KiB, up to 4 MiB)
 * kept whole, mapped and resident, for the next malloc of their size.
 *
 * Why: freeing an extent to the buddy lists merges its blocks under the
 * zone lock and the next malloc splits them again (three zone locks and
 * some 1,400 instructions a pair); a program that frees a 256 KiB buffer
 * mostly asks for one again.  A bin is a small stack per order of the page
 * count: a free pushes the extent as it is (still an allocated block to the
 * page allocator, PG_extent cleared), a malloc pops one of its size, or
 * cuts a larger one (its tail to the buddy lists) when none has it.
 *
 * The bound: EXTENT_BINS_MAX_PAGES in all, EXTENT_BIN_SLOTS per bin, and
 * time: an entry that waited slub_decay_ms is given back to the OS (its
 * pages decommitted), checked on each extent free, on each page-level
 * allocation and by the decay thread.  The bins never raise the peak: when
 * the page allocator takes fresh pages, they give back as many first
 * (slub_malloc_pages_taken), as the cache of mappings does.  Kept pages
 * are counted in page_alloc_stats.binned, shown as kept for reuse.
 *
 * Locks: one per bin, only ever tried (a thread whose holder is
 * preempted, or a signal handler that interrupted it, goes to the buddy
 * lists instead); nothing else is taken while it is held.  A word taken
 * by an exchange and let go by a store, not a mutex: a mutex's unlock is a
 * second locked instruction, and the pair's atomics were most of its cost.
 * fork() takes them all (the handlers below).
 */
#define _GNU_SOURCE
#include "malloc/malloc_extent_bins.h"
#include "malloc/malloc_extent_pcp.h"

#include <sched.h>
#include <string.h>

#include "base/options.h"
#include "base/start.h"

/* A take looks this far down its bin's stack for a size that fits. */
#define TAKE_LOOK 8

struct bin_entry {
	struct page *page;	/* the extent's head (no PG_extent while here) */
	unsigned long nr;	/* its pages */
	uint64_t when;		/* when it was freed (ms) */
};

/* Entries [0, count): the oldest at the bottom, the last freed on top. */
struct extent_bin {
	int locked;		/* only tried (bin_trylock), except by fork() */
	unsigned int count;	/* written under lock, read without it as a hint */
	struct bin_entry slot[EXTENT_BIN_SLOTS];
} __attribute__((aligned(64)));

static struct extent_bin bins[MAX_PAGE_ORDER + 1];

static bool bin_trylock(struct extent_bin *b)
{
	return !__atomic_exchange_n(&b->locked, 1, __ATOMIC_ACQUIRE);
}

static void bin_unlock(struct extent_bin *b)
{
	__atomic_store_n(&b->locked, 0, __ATOMIC_RELEASE);
}

uint64_t extent_bins_due_ms = UINT64_MAX, extent_slots_due_ms = UINT64_MAX;

/* The bin of an extent of @nr (2 or more) pages: the order of its page count, rounded up. */
static struct extent_bin *bin_of(unsigned long nr)
{
	return &bins[64 - __builtin_clzl(nr - 1)];
}

void extent_due_slow(uint64_t *due, uint64_t when)
{
	uint64_t cur = __atomic_load_n(due, __ATOMIC_RELAXED);
	while (when < cur && !__atomic_compare_exchange_n(due, &cur, when, true, __ATOMIC_RELAXED,
							  __ATOMIC_RELAXED))
		;
}

/* Under @b's lock: its word of page_alloc_stats.binned has no other writer. */
static void account(struct extent_bin *b, unsigned long nr, bool in)
{
	unsigned long *word = &page_alloc_stats.binned[b - bins];
	unsigned long v = __atomic_load_n(word, __ATOMIC_RELAXED);
	__atomic_store_n(word, in ? v + BINNED_ONE(nr) : v - BINNED_ONE(nr), __ATOMIC_RELAXED);
}

static void remove_entries(struct extent_bin *b, unsigned int at, unsigned int n)
{
	if (at + n < b->count)	/* not the top: what lies above moves down */
		memmove(&b->slot[at], &b->slot[at + n], (b->count - at - n) * sizeof(b->slot[0]));
	WRITE_ONCE(b->count, b->count - n);
}

bool extent_bins_put(struct page *page, unsigned long nr, uint64_t now_ms)
{
	uint64_t decay = (uint64_t)slub_opt(decay_ms);
	/* decay 0 asks for nothing to be kept. */
	if (!decay || nr < 2 || nr > MAX_ORDER_NR_PAGES ||
	    BINNED_PAGES(binned_sum()) + nr > EXTENT_BINS_MAX_PAGES)
		return false;	/* racing puts may pass this together: a bound, not a limit */
	slub_fork_handlers_check();
	struct extent_bin *b = bin_of(nr);
	if (!bin_trylock(b))
		return false;
	bool kept = b->count < EXTENT_BIN_SLOTS;
	if (kept) {
		b->slot[b->count] = (struct bin_entry){ page, nr, now_ms };
		WRITE_ONCE(b->count, b->count + 1);
		account(b, nr, true);
	}
	bin_unlock(b);
	if (kept)
		extent_due(&extent_bins_due_ms, now_ms + decay);
	return kept;
}

/*
 * In @b (locked): the newest of the last TAKE_LOOK entries of exactly @nr
 * pages, else the smallest of them above @nr; -1 if none.
 */
static int bin_find(const struct extent_bin *b, unsigned long nr)
{
	unsigned int low = b->count > TAKE_LOOK ? b->count - TAKE_LOOK : 0;
	int best = -1;
	for (unsigned int i = b->count; i-- > low;) {
		if (b->slot[i].nr == nr)
			return (int)i;
		if (b->slot[i].nr > nr && (best < 0 || b->slot[i].nr < b->slot[best].nr))
			best = (int)i;
	}
	return best;
}

/* Take entry @i of @b (locked). */
static struct page *bin_take_entry(struct extent_bin *b, int i, unsigned long *have)
{
	struct page *page = b->slot[i].page;
	*have = b->slot[i].nr;
	remove_entries(b, (unsigned int)i, 1);
	account(b, *have, false);
	return page;
}

struct page *extent_bins_take(unsigned long nr, unsigned long *have)
{
	if (nr < 2)
		return NULL;
	/*
	 * The newest first (its pages the likeliest in the CPU's caches), of
	 * the same size, else the smallest larger one of this bin or the next
	 * ones up, which the caller cuts to size: a program whose large blocks
	 * vary in size (git inflating objects) reuses kept pages instead of
	 * taking fresh ones while the bins hold megabytes.
	 */
	for (struct extent_bin *b = bin_of(nr); b <= &bins[MAX_PAGE_ORDER]; b++) {
		if (!READ_ONCE(b->count) || !bin_trylock(b))
			continue;
		int i = bin_find(b, nr);
		struct page *page = i >= 0 ? bin_take_entry(b, i, have) : NULL;
		bin_unlock(b);
		if (page)
			return page;
	}
	return NULL;
}

/*
 * Take up to @max entries off the bottom of @b that @due says may go
 * (NULL: any) into @out; their number.  Sets *@next to when the new
 * bottom falls due (UINT64_MAX: none left).
 */
static unsigned int take_oldest(struct extent_bin *b, struct bin_entry *out, unsigned int max,
				bool (*due)(const struct bin_entry *, uint64_t), uint64_t now,
				uint64_t *next)
{
	*next = UINT64_MAX;
	if (!READ_ONCE(b->count) || !bin_trylock(b)) {
		if (READ_ONCE(b->count))
			*next = now + 1;	/* busy: look again soon */
		return 0;
	}
	unsigned int n = 0;
	while (n < b->count && n < max && (!due || due(&b->slot[n], now)))
		n++;
	memcpy(out, b->slot, n * sizeof(*out));
	remove_entries(b, 0, n);
	for (unsigned int i = 0; i < n; i++)
		account(b, out[i].nr, false);
	if (b->count)
		*next = b->slot[0].when + (uint64_t)slub_opt(decay_ms);
	bin_unlock(b);
	return n;
}

static bool waited_decay(const struct bin_entry *e, uint64_t now)
{
	return now >= e->when + (uint64_t)slub_opt(decay_ms);
}

void extent_bins_expire_slow(uint64_t now_ms)
{
	/* Puts racing with this lower the marks again after the stores. */
	__atomic_store_n(&extent_bins_due_ms, UINT64_MAX, __ATOMIC_RELAXED);
	__atomic_store_n(&extent_slots_due_ms, UINT64_MAX, __ATOMIC_RELAXED);
	struct bin_entry out[EXTENT_BIN_SLOTS];
	for (int o = 0; o <= MAX_PAGE_ORDER; o++) {
		uint64_t next;
		unsigned int n = take_oldest(&bins[o], out, EXTENT_BIN_SLOTS, waited_decay, now_ms, &next);
		extent_due(&extent_bins_due_ms, next);
		/* A decay period unused: back to the OS, not only to the buddy lists. */
		for (unsigned int i = 0; i < n; i++)
			release_pages_extent(out[i].page, out[i].nr);
	}
	extent_due(&extent_slots_due_ms, extent_pcp_expire(now_ms));
}

static void give_to_buddy(struct page *page, unsigned long nr)
{
	free_pages_extent(page, nr);
}

void extent_bins_drain(unsigned long pages)
{
	struct bin_entry out[EXTENT_BIN_SLOTS];
	/* This CPU's kept extent first (every CPU's for all): dirty, to the buddy lists. */
	unsigned long given = extent_pcp_drain(pages == ULONG_MAX, give_to_buddy);
	if (pages != ULONG_MAX)
		pages = given < pages ? pages - given : 0;
	for (int o = MAX_PAGE_ORDER; o >= 0 && pages; o--) {
		uint64_t next;
		unsigned int n = take_oldest(&bins[o], out, EXTENT_BIN_SLOTS, NULL, 0, &next);
		for (unsigned int i = 0; i < n; i++) {
			/* Dirty, to the buddy lists: the allocation that asked reuses them. */
			free_pages_extent(out[i].page, out[i].nr);
			pages = out[i].nr < pages ? pages - out[i].nr : 0;
		}
	}
}

bool extent_bins_hold(const void *p)
{
	bool found = extent_pcp_holds(p);
	for (int o = 0; o <= MAX_PAGE_ORDER && !found; o++) {
		struct extent_bin *b = &bins[o];
		if (!READ_ONCE(b->count) || !bin_trylock(b))
			continue;
		for (unsigned int i = 0; i < b->count && !found; i++) {
			uintptr_t start = (uintptr_t)memmap_page_address(b->slot[i].page);
			/* The first page: a debug extent's pointer lies past its header. */
			found = (uintptr_t)p >= start && (uintptr_t)p < start + PAGE_SIZE;
		}
		bin_unlock(b);
	}
	return found;
}

/*
 * fork(): every bin locked across it (a holder keeps one for a few dozen
 * instructions: yield until it lets go); both sides let them go after.
 */
static void bins_fork_prepare(void)
{
	for (int o = 0; o <= MAX_PAGE_ORDER; o++)
		while (!bin_trylock(&bins[o]))
			sched_yield();
}

static void bins_fork_parent(void)
{
	for (int o = MAX_PAGE_ORDER; o >= 0; o--)
		bin_unlock(&bins[o]);
}
slub_initcall(extent_bins_initcall, .fork_level = FORK_PAGE, .fork_prepare = bins_fork_prepare,
	      .fork_parent = bins_fork_parent, .fork_child = bins_fork_parent);
