// SPDX-License-Identifier: MIT
/*
 * pcp.c - per-CPU page lists in front of the buddy lists (see pcp.h).
 */
#define _GNU_SOURCE
#include "page/pcp.h"

#include "base/options.h"
#include "base/os.h"

struct per_cpu_pages {
	pthread_mutex_t lock;
	unsigned int count;		/* pages on the lists */
	unsigned int nr[PCP_MAX_ORDER + 1];	/* pages on each list */
	unsigned int frees;		/* frees since the last look at the decay */
	unsigned int ops;		/* allocations and frees here, ever (wraps) */
	unsigned int idle_ops;		/* decay thread: ops at its last look */
	uint64_t idle_since_ms;		/* ... and since when they have not changed */
	bool ready;			/* lists initialised (zero: never used) */
	struct list_head lists[PCP_MAX_ORDER + 1];	/* most recently freed first */
} __attribute__((aligned(64)));	/* one cache line set per CPU: no false sharing */

/*
 * Zero-initialised and backed lazily by the OS: a CPU that never allocates
 * costs no memory.  A zero pthread mutex is an unlocked default mutex.
 * By CPU first: the lists of the first CPUs, which every process uses,
 * share a page (by zone first, each zone's CPU 0 touched a page of its own).
 */
static struct per_cpu_pages pcp_sets[SLUB_MAX_CPUS][MAX_NR_ZONES];
/*
 * The CPUs whose lists were ever used, by the CPU number that indexes
 * pcp_sets (any below SLUB_MAX_CPUS, possible or not): what every walk
 * visits, so that no list's pages are out of sight.
 */
static struct os_cpu_set pcp_cpus = OS_CPU_SET_INIT;

/* Every this many frees a CPU's list looks whether the zone's decay is due. */
#define PCP_DECAY_EVERY 64

static struct per_cpu_pages *pcp_of(struct zone *z, unsigned int cpu)
{
	return &pcp_sets[cpu][z->type];
}

/*
 * A CPU keeps lists for its own node's zones only, not for every node's as
 * the kernel's: a set per node would make the table 64 times larger (and
 * one CPU's sets a page apart), for pages the CPU's allocations rarely ask
 * of another node.  @z's walks visit its node's CPUs.
 */
#define for_each_zone_cpu(cpu, z)                                              \
	for_each_used_cpu(cpu, &pcp_cpus, SLUB_MAX_CPUS)                        \
		if (cpu_to_node(cpu) != (z)->node) {} else

static void pcp_prepare(struct per_cpu_pages *pcp)
{
	if (unlikely(!pcp->ready)) {
		for (int o = 0; o <= PCP_MAX_ORDER; o++)
			INIT_LIST_HEAD(&pcp->lists[o]);
		pcp->ready = true;
	}
}

/* This CPU's list set, locked, or NULL if lists are off or it is busy. */
static struct per_cpu_pages *pcp_trylock(struct zone *z)
{
	if (!slub_opt(pcp_high))
		return NULL;
	unsigned int cpu = os_current_cpu();
	if (unlikely(cpu_to_node(cpu) != z->node))
		return NULL;
	os_cpu_use(&pcp_cpus, cpu);
	struct per_cpu_pages *pcp = pcp_of(z, cpu);
	if (pthread_mutex_trylock(&pcp->lock))
		return NULL;
	pcp_prepare(pcp);
	return pcp;
}

static void pcp_add(struct per_cpu_pages *pcp, struct page *page, unsigned int order,
		    bool zero)
{
	set_page_flags(page, PG_pcp | (zero ? PG_zero : 0));
	page->order = (uint8_t)order;
	list_add(&page->lru, &pcp->lists[order]);
	pcp->count += 1u << order;
	pcp->nr[order] += 1u << order;
}

static struct page *pcp_take(struct per_cpu_pages *pcp, struct list_head *pos,
			     unsigned int order)
{
	struct page *page = list_entry(pos, struct page, lru);
	list_del(&page->lru);
	pcp->count -= 1u << order;
	pcp->nr[order] -= 1u << order;
	return page;
}

/*
 * Move at least @pages pages (or all) to the zone, the oldest block of the
 * fullest list each time: an order in steady use keeps its blocks while a
 * list swollen by a burst of frees of another order shrinks.
 */
static void pcp_drain(struct zone *z, struct per_cpu_pages *pcp, unsigned int pages)
{
	unsigned int moved = 0;
	pthread_mutex_lock(&z->lock);
	uint64_t now = os_now_ms();
	while (moved < pages && pcp->count) {
		unsigned int o = 0;
		for (unsigned int i = 1; i <= PCP_MAX_ORDER; i++)
			if (pcp->nr[i] > pcp->nr[o])
				o = i;
		struct page *page = pcp_take(pcp, pcp->lists[o].prev, o);
		bool zero = page_flags(page) & PG_zero;
		set_page_flags(page, 0);
		moved += 1u << o;
		zone_give_locked(z, page, o, zero, now);
	}
	pthread_mutex_unlock(&z->lock);
}

struct page *pcp_alloc(struct zone *z, unsigned int order, bool want_zero, bool *zero)
{
	if (order > PCP_MAX_ORDER)
		return NULL;
	struct per_cpu_pages *pcp = pcp_trylock(z);
	if (!pcp)
		return NULL;
	struct list_head *l = &pcp->lists[order];
	if (list_empty(l)) {
		/* Refill a batch in one visit to the zone, never beyond high. */
		unsigned int high = (unsigned int)slub_opt(pcp_high);
		unsigned int room = high > pcp->count ? high - pcp->count : 0;
		unsigned int pages = (unsigned int)slub_opt(pcp_batch);
		unsigned int n = (pages < room ? pages : room) >> order;
		pthread_mutex_lock(&z->lock);
		for (unsigned int i = 0; i < (n ? n : 1); i++) {
			bool clean;
			struct page *page = zone_take_locked(z, order, want_zero, &clean);
			if (!page)
				break;
			pcp_add(pcp, page, order, clean);
		}
		pthread_mutex_unlock(&z->lock);
	}
	struct page *page = NULL;
	if (!list_empty(l)) {
		page = pcp_take(pcp, l->next, order);
		*zero = page_flags(page) & PG_zero;
		set_page_flags(page, 0);
	}
	pcp->ops++;
	pthread_mutex_unlock(&pcp->lock);
	return page;
}

bool pcp_free(struct zone *z, struct page *page, unsigned int order)
{
	if (order > PCP_MAX_ORDER)
		return false;
	struct per_cpu_pages *pcp = pcp_trylock(z);
	if (!pcp)
		return false;
	pcp_add(pcp, page, order, false);
	pcp->ops++;
	if (pcp->count > (unsigned int)slub_opt(pcp_high)) {
		pcp_drain(z, pcp, (unsigned int)slub_opt(pcp_batch));
		pcp->frees = 0;
	} else if (++pcp->frees >= PCP_DECAY_EVERY) {
		/* Frees that stay on this CPU must not starve the decay. */
		pthread_mutex_lock(&z->lock);
		zone_give_locked(z, NULL, 0, false, os_now_ms());
		pthread_mutex_unlock(&z->lock);
		pcp->frees = 0;
	}
	pthread_mutex_unlock(&pcp->lock);
	return true;
}

static unsigned long lock_lists(struct zone *z)
{
	unsigned long pages = 0;
	for_each_zone_cpu(cpu, z) {
		struct per_cpu_pages *pcp = pcp_of(z, cpu);
		pthread_mutex_lock(&pcp->lock);
		pages += pcp->count;
	}
	return pages;
}

static void unlock_lists(struct zone *z)
{
	for_each_zone_cpu(cpu, z)
		pthread_mutex_unlock(&pcp_of(z, cpu)->lock);
}

/* The set first: a CPU whose lists came into use in between would be unlocked, not locked. */
unsigned long pcp_lock_all(struct zone *z)
{
	pthread_mutex_lock(&pcp_cpus.lock);
	return lock_lists(z);
}

void pcp_unlock_all(struct zone *z)
{
	unlock_lists(z);
	pthread_mutex_unlock(&pcp_cpus.lock);
}

void pcp_fork_prepare(void)
{
	pthread_mutex_lock(&pcp_cpus.lock);
	for_each_zone(z)
		lock_lists(z);
}

void pcp_fork_parent(void)
{
	for_each_zone(z)
		unlock_lists(z);
	pthread_mutex_unlock(&pcp_cpus.lock);
}

void pcp_fork_child(void)
{
	for_each_zone(z)
		for_each_zone_cpu(cpu, z)
			pthread_mutex_init(&pcp_of(z, cpu)->lock, NULL);
	pthread_mutex_init(&pcp_cpus.lock, NULL);
}

void pcp_drain_zone(struct zone *z)
{
	for_each_zone_cpu(cpu, z) {
		struct per_cpu_pages *pcp = pcp_of(z, cpu);
		pthread_mutex_lock(&pcp->lock);
		if (pcp->count)
			pcp_drain(z, pcp, pcp->count);
		pthread_mutex_unlock(&pcp->lock);
	}
}

unsigned long pcp_drain_idle(struct zone *z, uint64_t now_ms, uint64_t quiet_ms)
{
	unsigned long left = 0;
	for_each_zone_cpu(cpu, z) {
		struct per_cpu_pages *pcp = pcp_of(z, cpu);
		pthread_mutex_lock(&pcp->lock);
		if (pcp->ops != pcp->idle_ops || !pcp->count) {
			pcp->idle_ops = pcp->ops;
			pcp->idle_since_ms = now_ms;
		} else if (now_ms - pcp->idle_since_ms >= quiet_ms) {
			pcp_drain(z, pcp, pcp->count);
		}
		left += pcp->count;
		pthread_mutex_unlock(&pcp->lock);
	}
	return left;
}

void page_alloc_drain_pcp(void)
{
	for_each_zone(z)
		pcp_drain_zone(z);
}
