/* SPDX-License-Identifier: MIT */
/*
 * numa.h - the nodes: how many, which CPU is on which, and which real node
 * holds each node's memory.
 *
 * At start-up (base's step) the nodes come from /sys/devices/system/node
 * (node<N>/cpulist), or from the option numa=fake=<N>, the kernel's fake
 * nodes: N nodes whatever the machine has, the CPUs spread over them in
 * blocks, each node's memory bound to the real node under it.  numa=off
 * asks for one node.  Until start-up, and on a machine with one node,
 * nr_node_ids is 1: the layers then behave as without NUMA.
 *
 * MAX_NUMNODES only bounds the tables; what grows with the nodes (a
 * cache's per-node array, the zones walked) is sized by nr_node_ids.
 */
#ifndef SLUB_NUMA_H
#define SLUB_NUMA_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/compiler.h"
#include "base/os.h"

#ifndef SLUB_MAX_NUMNODES
#define SLUB_MAX_NUMNODES 64	/* the kernel's NODES_SHIFT 6 */
#endif
#define MAX_NUMNODES SLUB_MAX_NUMNODES
static_assert(MAX_NUMNODES >= 1 && MAX_NUMNODES <= 100, "a byte per CPU; two digits in sysfs names");

/* Node ids in use are [0, nr_node_ids); fixed once start-up ran. */
extern __hidden unsigned int nr_node_ids;
/* Each CPU number's node (a CPU sysfs names on no node: 0). */
extern __hidden uint8_t numa_cpu_node[SLUB_MAX_CPUS];

static inline int cpu_to_node(unsigned int cpu)
{
	return numa_cpu_node[cpu];
}

/* The @i-th node after @home, round the nodes (the fallback order): @home itself at nr_node_ids. */
static inline int node_after(int home, unsigned int i)
{
	return (int)(((unsigned int)home + i) % nr_node_ids);
}

/*
 * The node of the CPU this thread runs on (possibly stale by the time it
 * is used, as the kernel's outside a preempt-disabled region).  One node:
 * no look at the CPU at all.
 */
static inline int numa_node_id(void)
{
	return nr_node_ids == 1 ? 0 : cpu_to_node(os_current_cpu());
}

/* Are the nodes the option's fake ones? */
__hidden bool numa_fake(void);
/* The real node whose memory @nid's pages are bound to (itself unless fake). */
__hidden int numa_phys_node(int nid);

/*
 * The numa option's value: NULL if it follows the grammar ("fake=<N>",
 * N in 1..MAX_NUMNODES, or "off"), else why not.
 */
__hidden const char *numa_option_check(const char *value);

/* Base's start step: the nodes, after the options (start.c). */
__hidden void numa_init(void);

#endif
