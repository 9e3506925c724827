/* SPDX-License-Identifier: MIT */
/*
 * local_zone.h - the zone a page test's allocations come from: the node of
 * the CPU it runs on (node 0 on one node).  Under numa=fake a test that
 * looks into that zone stays on one CPU, so its node does not change.
 */
#ifndef SLUB_TEST_LOCAL_ZONE_H
#define SLUB_TEST_LOCAL_ZONE_H

#include <sched.h>

#include "check.h"
#include "base/numa.h"
#include "base/start.h"
#include "page/page_alloc.h"

static inline struct zone *local_zone(enum zone_type zt)
{
	return &page_alloc_nodes[numa_node_id()].node_zones[zt];
}

/* With more than one node, run on the CPU we are on now, and only there. */
static inline void stay_on_one_node(void)
{
	slub_ensure_init();	/* the nodes are known from start-up */
	if (nr_node_ids == 1)
		return;
	pin_to_cpu(sched_getcpu());
}

#endif
