// SPDX-License-Identifier: MIT
/*
 * malloc_extent_pcp.c - the slow side of the per-CPU kept extents
 * (malloc_extent_pcp.h has the sequences that put and take them): emptying
 * another CPU's slot, the decay, the drain, and the look a report takes.
 *
 * Emptying slots: they are closed, one membarrier(RSEQ) ends every
 * sequence that began before (none commits after it), and they are then
 * ours to read and clear until they are opened again; this CPU's alone is
 * taken by one sequence.  One lock serializes the emptiers (a sequence
 * that takes a slot's extent without looking at `closed` is safe only
 * under it); nothing else is taken while it is held (the extents go to the
 * page allocator after it is let go), so fork() may take it anywhere.
 *
 * The bound: one extent of at most 1 MiB per CPU, given back to the OS
 * when it has waited slub_decay_ms since the first walk that saw it (the
 * slots' due time, and the decay thread's tick, bring the walks), and
 * counted with the bins as kept for reuse.
 * Before fresh pages only this CPU's goes back to the buddy lists: the
 * others may add up to 1 MiB each to the peak.
 */
#define _GNU_SOURCE
#include "malloc/malloc_extent_pcp.h"

#include <pthread.h>

#include <assert.h>

#include "base/options.h"
#include "base/os.h"
#include "base/start.h"
#include "slab/sheaf/sheaf_rseq.h"

/* The offsets the sequences use. */
static_assert(offsetof(struct extent_pcp, when) == 8, "extent_pcp.when");
static_assert(offsetof(struct extent_pcp, closed) == EXTENT_PCP_CLOSED, "extent_pcp.closed");
static_assert(sizeof(struct extent_pcp) == 1UL << EXTENT_PCP_SHIFT, "extent_pcp size");

struct extent_pcp extent_pcp[SLUB_MAX_CPUS];
unsigned int extent_pcp_nr;
struct extent_pcp_held extent_pcp_held;

static pthread_mutex_t pcp_lock = PTHREAD_MUTEX_INITIALIZER;
/*
 * The fence failed once (a seccomp filter installed later, say): the slots
 * it was to fence stay closed with their extents, which no one may take
 * now (a sequence may still commit on them), and no slot is emptied again.
 */
static bool fence_failed;

void extent_pcp_first_use(void)
{
	unsigned int nr = os_possible_cpus();
	__atomic_store_n(&extent_pcp_nr, nr < SLUB_MAX_CPUS ? nr : SLUB_MAX_CPUS, __ATOMIC_RELEASE);
}

void extent_pcp_note_kept(void)
{
	WRITE_ONCE(page_alloc_stats.pcp_extents_kept, 1);
}

/* count << 32 | pages kept in the slots, for the figures (page_alloc.h). */
unsigned long slub_malloc_pcp_kept(void)
{
	unsigned long kept = 0;
	unsigned int nr = __atomic_load_n(&extent_pcp_nr, __ATOMIC_ACQUIRE);
	for (unsigned int cpu = 0; cpu < nr; cpu++) {
		struct page *page = __atomic_load_n(&extent_pcp[cpu].page, __ATOMIC_RELAXED);
		if (!page)
			continue;
		/*
		 * A racy look: the descriptor stays mapped, but the block may
		 * be taken and free by now, its count a list link: counted
		 * only if the slot still holds it and the count fits a slot.
		 */
		unsigned long nr_pages = READ_ONCE(page->nr_extent_pages);
		if (nr_pages <= EXTENT_PCP_MAX_PAGES &&
		    __atomic_load_n(&extent_pcp[cpu].page, __ATOMIC_ACQUIRE) == page)
			kept += BINNED_ONE(nr_pages);
	}
	return kept;
}

/*
 * Has @p's extent waited @decay by @now since a walk stamped it?  If not,
 * *@next says when it will have.  One not stamped yet is stamped with a
 * clock read here (the caller's @now may be older than a free the walk
 * finds: read before a long give-back).  The stamp races with the
 * sequences: a put that stores 0 after it leaves the new extent for the
 * next walk, one before it gets a time later than its free, but for a
 * preemption between the clock read and the store.
 */
static bool slot_due(struct extent_pcp *p, uint64_t now, uint64_t decay, uint64_t *next)
{
	uint64_t when = __atomic_load_n(&p->when, __ATOMIC_RELAXED);
	if (!when) {
		uint64_t stamp = os_now_ms();
		when = stamp > now ? stamp : now;
		__atomic_store_n(&p->when, when, __ATOMIC_RELAXED);
	}
	if (now >= when + decay)
		return true;
	*next = when + decay < *next ? when + decay : *next;
	return false;
}

/*
 * Take the extents of up to BATCH slots from CPU *@cpu on into @out
 * (with @due_only, those that waited @decay by @now only), moving *@cpu on;
 * pcp_lock only tried when @try (the decay's look).  Their number; *@next:
 * when the earliest left falls due.  The slots are closed together and
 * fenced by one membarrier: a sequence that read a slot open may still
 * commit until it returns, none after.  Without rseq no sequence runs.
 */
#define BATCH 32
static unsigned int take_batch(unsigned int *cpu, struct page **out, uint64_t now,
			       uint64_t decay, bool due_only, bool try, uint64_t *next)
{
	unsigned int nr = __atomic_load_n(&extent_pcp_nr, __ATOMIC_ACQUIRE), n = 0, k = 0;
	unsigned int closed[BATCH];
	if (try ? pthread_mutex_trylock(&pcp_lock) : pthread_mutex_lock(&pcp_lock)) {
		*next = now + 1;	/* busy: look again soon */
		*cpu = nr;
		return 0;
	}
	if (fence_failed) {
		pthread_mutex_unlock(&pcp_lock);
		*cpu = nr;
		return 0;
	}
	for (; *cpu < nr && k < BATCH; (*cpu)++) {
		struct extent_pcp *p = &extent_pcp[*cpu];
		if (!__atomic_load_n(&p->page, __ATOMIC_RELAXED))
			continue;
		if (due_only && !slot_due(p, now, decay, next))
			continue;
		__atomic_store_n(&p->closed, 1, __ATOMIC_SEQ_CST);
		closed[k++] = *cpu;
	}
	if (k && slub_percpu_rseq && !os_single_threaded() && !os_membarrier_rseq_all()) {
		fence_failed = true;	/* left closed, with their extents: leaked, not shared */
		pthread_mutex_unlock(&pcp_lock);
		*cpu = nr;
		return 0;
	}
	for (unsigned int i = 0; i < k; i++) {
		struct extent_pcp *p = &extent_pcp[closed[i]];
		struct page *page = __atomic_load_n(&p->page, __ATOMIC_ACQUIRE);
		/* One refilled meanwhile stays. */
		if (page && (!due_only || slot_due(p, now, decay, next))) {
			__atomic_store_n(&p->page, NULL, __ATOMIC_RELAXED);
			out[n++] = page;
		}
		__atomic_store_n(&p->closed, 0, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&pcp_lock);
	return n;
}

/* The bits of @cpus (the first 64 CPUs) whose slots are empty. */
static unsigned long slots_empty(unsigned long cpus)
{
	unsigned int nr = __atomic_load_n(&extent_pcp_nr, __ATOMIC_ACQUIRE);
	unsigned long empty = 0;
	for (unsigned int cpu = 0; cpu < nr && cpu < 64; cpu++)
		if ((cpus & (1UL << cpu)) && !__atomic_load_n(&extent_pcp[cpu].page, __ATOMIC_SEQ_CST))
			empty |= 1UL << cpu;
	return empty;
}

/*
 * After a walk: clear the bits of the CPUs whose slots are empty now.  A
 * put sets its bit only if it finds it clear, and its commit and that load
 * may pass our clear and look (x86 lets a load pass an earlier store): so
 * the clear is a locked and, the fence makes every put that committed
 * before it visible, and a slot found full again gets its bit back.  A bit
 * lost would let the other CPUs' puts skip the clock while its extent waits
 * for a walk nothing brings.  A bit left set only costs puts a clock read.
 */
static void held_again(void)
{
	unsigned long gone = slots_empty(__atomic_load_n(&extent_pcp_held.cpus, __ATOMIC_RELAXED));
	if (!gone || pthread_mutex_trylock(&pcp_lock))
		return;
	if (fence_failed) {	/* no fence to be had: the bits stay, and no second report */
		pthread_mutex_unlock(&pcp_lock);
		return;
	}
	__atomic_fetch_and(&extent_pcp_held.cpus, ~gone, __ATOMIC_SEQ_CST);
	if (slub_percpu_rseq && !os_single_threaded() && !os_membarrier_rseq_all()) {
		fence_failed = true;
		__atomic_fetch_or(&extent_pcp_held.cpus, gone, __ATOMIC_RELAXED);	/* kept, as they were */
	} else {
		unsigned long full = gone & ~slots_empty(gone);	/* refilled: bits back */
		if (full)
			__atomic_fetch_or(&extent_pcp_held.cpus, full, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&pcp_lock);
}

uint64_t extent_pcp_expire(uint64_t now_ms)
{
	uint64_t next = UINT64_MAX, decay = (uint64_t)slub_opt(decay_ms);
	struct page *out[BATCH];
	for (unsigned int cpu = 0; cpu < __atomic_load_n(&extent_pcp_nr, __ATOMIC_ACQUIRE);) {
		unsigned int n = take_batch(&cpu, out, now_ms, decay, true, true, &next);
		/* A decay period unused: back to the OS, not only to the buddy lists. */
		for (unsigned int i = 0; i < n; i++)
			release_pages_extent(out[i], out[i]->nr_extent_pages);
	}
	/*
	 * None left: the page allocator's calls stop looking; a put racing
	 * this walk may find the hint still on and leave it, and the next
	 * walk that sees its slot turns it on again.
	 */
	WRITE_ONCE(page_alloc_stats.pcp_extents_kept, next != UINT64_MAX);
	held_again();
	return next;
}

/*
 * Under pcp_lock: the extent of @cpu, the caller's CPU when it looked,
 * taken as one sequence (no other emptier runs).
 */
static struct page *take_here(unsigned int cpu)
{
	struct extent_pcp *p = &extent_pcp[cpu];
#if SLUB_HAVE_RSEQ_ASM
	if (slub_percpu_rseq) {
		uint64_t old = 0;
		/* Moved to another CPU since: that slot is left for the decay. */
		if (!rseq_sheaf_take(slub_percpu_rseq, (uint64_t *)&p->page, cpu, &old))
			return NULL;
		return (struct page *)old;
	}
#endif
	/* No rseq (a child that fell back to cmpxchg16b): no sequence runs. */
	struct page *page = p->page;
	p->page = NULL;
	return page;
}

unsigned long extent_pcp_drain(bool all, void (*give)(struct page *page, unsigned long nr))
{
	unsigned long pages = 0;
	struct page *out[BATCH];
	if (!__atomic_load_n(&extent_pcp_nr, __ATOMIC_ACQUIRE))
		return 0;
	if (!all) {
		/* Before fresh pages: a look first, then the lock only tried (the caller is allocating). */
		unsigned int here = os_current_cpu();
		if (here >= extent_pcp_nr || !__atomic_load_n(&extent_pcp[here].page, __ATOMIC_RELAXED) ||
		    pthread_mutex_trylock(&pcp_lock))
			return 0;
		struct page *page = take_here(here);
		pthread_mutex_unlock(&pcp_lock);
		if (page) {
			pages = page->nr_extent_pages;
			give(page, pages);
		}
		return pages;
	}
	uint64_t next = UINT64_MAX;
	for (unsigned int cpu = 0; cpu < __atomic_load_n(&extent_pcp_nr, __ATOMIC_ACQUIRE);) {
		unsigned int n = take_batch(&cpu, out, 0, 0, false, false, &next);
		for (unsigned int i = 0; i < n; i++) {
			unsigned long nr = out[i]->nr_extent_pages;
			give(out[i], nr);
			pages += nr;
		}
	}
	WRITE_ONCE(page_alloc_stats.pcp_extents_kept, 0);
	held_again();
	return pages;
}

bool extent_pcp_holds(const void *p)
{
	unsigned int nr = __atomic_load_n(&extent_pcp_nr, __ATOMIC_ACQUIRE);
	for (unsigned int cpu = 0; cpu < nr; cpu++) {
		struct page *page = __atomic_load_n(&extent_pcp[cpu].page, __ATOMIC_RELAXED);
		if (!page)
			continue;
		uintptr_t start = (uintptr_t)memmap_page_address(page);
		/* The first page: a debug extent's pointer lies past its header. */
		if ((uintptr_t)p >= start && (uintptr_t)p < start + PAGE_SIZE)
			return true;
	}
	return false;
}

/* fork(): no emptier inside across it; the child's lock made new. */
static void pcp_fork_prepare(void)
{
	pthread_mutex_lock(&pcp_lock);
}

static void pcp_fork_parent(void)
{
	pthread_mutex_unlock(&pcp_lock);
}

static void pcp_fork_child(void)
{
	pthread_mutex_init(&pcp_lock, NULL);
}
slub_initcall(extent_pcp_initcall, .fork_level = FORK_PAGE, .fork_prepare = pcp_fork_prepare,
	      .fork_parent = pcp_fork_parent, .fork_child = pcp_fork_child);
