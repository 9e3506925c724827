/* SPDX-License-Identifier: MIT */
/*
 * stat_items.h - the kernel's CONFIG_SLUB_STATS counters, one X-macro list,
 * kept per CPU when built with -DSLUB_STATS=ON and read as attributes in
 * the kernel's "<sum> C<cpu>=<n>" form.  Off (the default), stat() is
 * empty and the attributes do not exist, as in the kernel.
 */
#ifndef SLUB_SLAB_STAT_H
#define SLUB_SLAB_STAT_H

#include <stddef.h>
#include <sys/types.h>

#include "base/compiler.h"

/* X(item, attribute name) */
#define SLAB_STAT_LIST(X)                                            \
	X(ALLOC_FASTPATH, "alloc_fastpath")                          \
	X(ALLOC_SLOWPATH, "alloc_slowpath")                          \
	X(FREE_FASTPATH, "free_fastpath")                            \
	X(FREE_SLOWPATH, "free_slowpath")                            \
	X(FREE_FROZEN, "free_frozen")                                \
	X(FREE_ADD_PARTIAL, "free_add_partial")                      \
	X(FREE_REMOVE_PARTIAL, "free_remove_partial")                \
	X(ALLOC_FROM_PARTIAL, "alloc_from_partial")                  \
	X(ALLOC_SLAB, "alloc_slab")                                  \
	X(ALLOC_REFILL, "alloc_refill")                              \
	X(ALLOC_NODE_MISMATCH, "alloc_node_mismatch")                \
	X(FREE_SLAB, "free_slab")                                    \
	X(CPUSLAB_FLUSH, "cpuslab_flush")                            \
	X(DEACTIVATE_FULL, "deactivate_full")                        \
	X(DEACTIVATE_EMPTY, "deactivate_empty")                      \
	X(DEACTIVATE_TO_HEAD, "deactivate_to_head")                  \
	X(DEACTIVATE_TO_TAIL, "deactivate_to_tail")                  \
	X(DEACTIVATE_REMOTE_FREES, "deactivate_remote_frees")        \
	X(DEACTIVATE_BYPASS, "deactivate_bypass")                    \
	X(ORDER_FALLBACK, "order_fallback")                          \
	X(CMPXCHG_DOUBLE_CPU_FAIL, "cmpxchg_double_cpu_fail")        \
	X(CMPXCHG_DOUBLE_FAIL, "cmpxchg_double_fail")                \
	X(CPU_PARTIAL_ALLOC, "cpu_partial_alloc")                    \
	X(CPU_PARTIAL_FREE, "cpu_partial_free")                      \
	X(CPU_PARTIAL_NODE, "cpu_partial_node")                      \
	X(CPU_PARTIAL_DRAIN, "cpu_partial_drain")                    \
	X(ALLOC_PCS, "alloc_cpu_sheaf")                              \
	X(FREE_PCS, "free_cpu_sheaf")                                \
	X(SHEAF_SWAP, "sheaf_swap")                                  \
	X(SHEAF_FLUSH, "sheaf_flush")                                \
	X(SHEAF_REFILL, "sheaf_refill")                              \
	X(SHEAF_ALLOC, "sheaf_alloc")                                \
	X(SHEAF_FREE, "sheaf_free")                                  \
	X(BARN_GET, "barn_get")                                      \
	X(BARN_GET_FAIL, "barn_get_fail")                            \
	X(BARN_PUT, "barn_put")                                      \
	X(BARN_PUT_FAIL, "barn_put_fail")                            \
	X(ALLOC_TSHEAF, "alloc_thread_sheaf")                        \
	X(FREE_TSHEAF, "free_thread_sheaf")                          \
	X(TSHEAF_REFILL, "thread_sheaf_refill")                      \
	X(TSHEAF_FLUSH, "thread_sheaf_flush")

/* Percpu slots the counters take (128 bytes each: 32 counters). */
#define SLAB_STAT_SLOTS 2

enum stat_item {
#define X(item, name) item,
	SLAB_STAT_LIST(X)
#undef X
	NR_SLUB_STAT_ITEMS
};

struct kmem_cache;

/* The attribute name of counter @i (from 0 until NULL) and its mode. */
__hidden const char *slab_stat_attr_name(unsigned int i, unsigned int *mode);
/* Render or clear the counter named @attr; false if there is none. */
__hidden bool slab_stat_show(struct kmem_cache *s, const char *attr, char *buf, size_t len,
			     size_t *out_len);
__hidden bool slab_stat_store(struct kmem_cache *s, const char *attr, const char *text,
			      int *err);

#endif
