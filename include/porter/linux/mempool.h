/* SPDX-License-Identifier: MIT */
/*
 * <linux/mempool.h> for kernel code built on libslub: mempool_t and its
 * functions, the slab, kmalloc and page pools, are slub.h's.
 */
#ifndef SLUB_PORTER_LINUX_MEMPOOL_H
#define SLUB_PORTER_LINUX_MEMPOOL_H

#include <linux/slab.h>

#endif
