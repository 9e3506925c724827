/* SPDX-License-Identifier: MIT */
/*
 * <linux/gfp.h> for kernel code built on libslub (the porter's include
 * directory: pkg-config --cflags slub-porter).  The gfp bits, the page
 * allocator and alloc_pages_exact() are slub.h's; slub.h says which bits
 * mean something in a process and which are accepted and ignored.
 */
#ifndef SLUB_PORTER_LINUX_GFP_H
#define SLUB_PORTER_LINUX_GFP_H

#include <slub.h>

/* May an allocation with @gfp sleep?  (Here none does; the answer is the kernel's.) */
static inline bool gfpflags_allow_blocking(const gfp_t gfp)
{
	return !!(gfp & __GFP_DIRECT_RECLAIM);
}

#endif
