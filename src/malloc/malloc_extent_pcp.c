// SPDX-License-Identifier: MIT
/*
 * malloc_extent_pcp.c - the slow side of the per-CPU kept extents
 * (malloc_extent_pcp.h has the sequences that put and take them): emptying
 * another CPU's slot, the decay, the drain, and the look a report takes.
 *
 * Emptying a slot: on its own CPU one sequence takes the extent word; from
 * another CPU the slot is closed, membarrier(RSEQ) on that CPU ends every
 * sequence that began before (none commits after it), and the slot is then
 * ours to read and clear until it is opened again.  One lock serializes
 * the emptiers; nothing else is taken while it is held (the extents go to
 * the page allocator after it is let go), so fork() may take it anywhere.
 *
 * The bound: one extent of at most 1 MiB per CPU, given back to the OS
 * when it has waited slub_decay_ms (the bins' due time covers it), and
 * counted with the bins as kept for reuse.
 */
#define _GNU_SOURCE
#include "malloc/malloc_extent_pcp.h"

#include <pthread.h>

#include "base/options.h"
#include "base/os.h"
#include "base/start.h"
#include "slab/sheaf/sheaf_rseq.h"

struct extent_pcp extent_pcp[SLUB_MAX_CPUS];
unsigned int extent_pcp_nr;

static pthread_mutex_t pcp_lock = PTHREAD_MUTEX_INITIALIZER;

void extent_pcp_first_use(void)
{
	unsigned int nr = os_possible_cpus();
	WRITE_ONCE(page_alloc_stats.pcp_extents_used, 1);
	__atomic_store_n(&extent_pcp_nr, nr < SLUB_MAX_CPUS ? nr : SLUB_MAX_CPUS, __ATOMIC_RELEASE);
}

/* count << 32 | pages kept in the slots, for the figures (page_alloc.h). */
unsigned long slub_malloc_pcp_kept(void)
{
	unsigned long kept = 0;
	unsigned int nr = __atomic_load_n(&extent_pcp_nr, __ATOMIC_ACQUIRE);
	for (unsigned int cpu = 0; cpu < nr; cpu++) {
		struct page *page = __atomic_load_n(&extent_pcp[cpu].page, __ATOMIC_RELAXED);
		/* A racy look: the descriptor stays mapped, its count may be another block's. */
		if (page)
			kept += BINNED_ONE(READ_ONCE(page->nr_extent_pages) & 0xffffffffUL);
	}
	return kept;
}

/*
 * Under pcp_lock: take @cpu's extent if @due says so (NULL: whatever it
 * holds); *@when: when the one left in it falls due, or UINT64_MAX.
 */
static struct page *slot_take(unsigned int cpu, uint64_t now, uint64_t decay, bool due_only,
			      uint64_t *when)
{
	struct extent_pcp *p = &extent_pcp[cpu];
	*when = UINT64_MAX;
	if (!__atomic_load_n(&p->page, __ATOMIC_RELAXED))
		return NULL;
	uint64_t freed = __atomic_load_n(&p->when, __ATOMIC_RELAXED);
	if (due_only && now < freed + decay) {
		*when = freed + decay;
		return NULL;
	}
#if SLUB_HAVE_RSEQ_ASM
	uint64_t old;
	/* On @cpu: one sequence (a refill since the look above is given back early, rarely). */
	if (rseq_sheaf_take(slub_percpu_rseq, (uint64_t *)&p->page, cpu, &old))
		return (struct page *)old;
#endif
	__atomic_store_n(&p->closed, 1, __ATOMIC_SEQ_CST);
	if (!os_single_threaded())
		os_membarrier_rseq(cpu);
	struct page *page = __atomic_load_n(&p->page, __ATOMIC_ACQUIRE);
	freed = __atomic_load_n(&p->when, __ATOMIC_RELAXED);
	if (page && due_only && now < freed + decay) {
		*when = freed + decay;	/* refilled meanwhile: stays */
		page = NULL;
	} else {
		__atomic_store_n(&p->page, NULL, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&p->closed, 0, __ATOMIC_RELEASE);
	return page;
}

/*
 * Take up to @max slots' extents from CPU *@cpu on into @out, moving *@cpu
 * on; with pcp_lock only tried when @try (the decay's look).  Their number.
 */
#define BATCH 32
static unsigned int take_batch(unsigned int *cpu, struct page **out, uint64_t now,
			       uint64_t decay, bool due_only, bool try, uint64_t *next)
{
	unsigned int nr = __atomic_load_n(&extent_pcp_nr, __ATOMIC_ACQUIRE), n = 0;
	if (try ? pthread_mutex_trylock(&pcp_lock) : pthread_mutex_lock(&pcp_lock)) {
		*next = now + 1;	/* busy: look again soon */
		*cpu = nr;
		return 0;
	}
	for (; *cpu < nr && n < BATCH; (*cpu)++) {
		uint64_t when;
		struct page *page = slot_take(*cpu, now, decay, due_only, &when);
		if (page)
			out[n++] = page;
		if (when < *next)
			*next = when;
	}
	pthread_mutex_unlock(&pcp_lock);
	return n;
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
	return next;
}

unsigned long extent_pcp_drain(bool all, void (*give)(struct page *page, unsigned long nr))
{
	unsigned long pages = 0;
	struct page *out[BATCH];
	if (!__atomic_load_n(&extent_pcp_nr, __ATOMIC_ACQUIRE))
		return 0;
	if (!all) {
#if SLUB_HAVE_RSEQ_ASM
		/* This CPU's only, as one sequence: no lock, no fence. */
		uint64_t old = 0;
		unsigned int cpu = os_current_cpu();
		if (cpu < extent_pcp_nr && __atomic_load_n(&extent_pcp[cpu].page, __ATOMIC_RELAXED) &&
		    rseq_sheaf_take(slub_percpu_rseq, (uint64_t *)&extent_pcp[cpu].page, cpu, &old) &&
		    old) {
			struct page *page = (struct page *)old;
			pages = page->nr_extent_pages;
			give(page, pages);
		}
#endif
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
