/* SPDX-License-Identifier: MIT */
/*
 * nodes.h - the slab tests' sums over the nodes of a cache (one, or
 * numa=fake's).  Kept out of check.h, which the page tests include too
 * and which includes no slab internals.
 */
#ifndef SLUB_TEST_SLAB_NODES_H
#define SLUB_TEST_SLAB_NODES_H

#include "base/compiler.h"
#include "slab/core/slab.h"

/* @expr, of the node @kn, summed over the nodes of @s. */
#define NODES_SUM_OF(s, kn, expr)                                                \
	({                                                                       \
		unsigned long nodes_sum_ = 0;                                    \
		for_each_kmem_cache_node(s, nodes_nid_, kn)                      \
			nodes_sum_ += (expr);                                    \
		nodes_sum_;                                                      \
	})

/* A figure of each node of @s, summed; each read once, as it may be changing. */
#define NODES_SUM(s, field) NODES_SUM_OF(s, nodes_kn_, READ_ONCE(nodes_kn_->field))

#endif
