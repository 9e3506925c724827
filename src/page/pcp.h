/* SPDX-License-Identifier: MIT */
/*
 * pcp.h - per-CPU page lists, the kernel's `pcp`: small free blocks
 * (orders 0..PCP_MAX_ORDER) cached per CPU and zone in front of the buddy
 * lists, moved to and from a zone `slub_pcp_batch` pages at a time, never
 * more than `slub_pcp_high` pages per list set.
 *
 * Why: a single order-0 alloc+free through the buddy lists splits a 4 MiB
 * block ten times and merges it back ten times under the zone lock; the
 * per-CPU list turns that into a list push and pop (bench/run.sh shows it).
 *
 * User space has no preemption control, so each list set has a mutex that
 * allocation paths only *try*: a busy list (its holder preempted, or another
 * thread on the same CPU) sends the caller to the zone instead of making it
 * wait.  Memory held: at most high pages per CPU used, per zone.
 */
#ifndef SLUB_PCP_H
#define SLUB_PCP_H

#include "page/page_alloc.h"

#define PCP_MAX_ORDER 3	/* PAGE_ALLOC_COSTLY_ORDER */

/* A block of @order from this CPU's list, or NULL: then use the zone. */
__hidden struct page *pcp_alloc(struct zone *z, unsigned int order, bool want_zero,
				bool *zero);
/* Put a block on this CPU's list; false: the caller frees to the zone. */
__hidden bool pcp_free(struct zone *z, struct page *page, unsigned int order);
/* Return every CPU's pages of @z to the zone (no pcp lock held). */
__hidden void pcp_drain_zone(struct zone *z);
/*
 * The decay thread's look: empty each CPU's list of @z that has pages and
 * has seen no allocation or free for @quiet_ms (no pcp lock held).
 * Returns the pages left on the lists.
 */
__hidden unsigned long pcp_drain_idle(struct zone *z, uint64_t now_ms, uint64_t quiet_ms);
/* Lock every list set of @z (for the validator); returns their pages. */
__hidden unsigned long pcp_lock_all(struct zone *z);
__hidden void pcp_unlock_all(struct zone *z);
/* fork(): every zone's lists locked (no CPU's come into use meanwhile); the child's made new. */
__hidden void pcp_fork_prepare(void);
__hidden void pcp_fork_parent(void);
__hidden void pcp_fork_child(void);

#endif
