/* SPDX-License-Identifier: MIT */
/*
 * <linux/slab.h> for kernel code built on libslub: kmem_cache_*,
 * KMEM_CACHE, the kmalloc family and kfree_rcu are slub.h's, under the
 * kernel's names and signatures.  Added here: the scope-based cleanup
 * the kernel's slab.h declares for kfree and kvfree (__free(kfree),
 * no_free_ptr, return_ptr), as <linux/cleanup.h> spells them.
 */
#ifndef SLUB_PORTER_LINUX_SLAB_H
#define SLUB_PORTER_LINUX_SLAB_H

#include <errno.h>	/* -ENOMEM and kin, which the kernel's headers bring */
#include <linux/gfp.h>

#ifndef __free
#define __free(name) __attribute__((__cleanup__(__free_##name)))
/* Take the pointer out of a __free() variable's care. */
#define no_free_ptr(p) ({ __typeof__(p) slub_nfp_ = (p); (p) = NULL; slub_nfp_; })
#define return_ptr(p) return no_free_ptr(p)
#endif

static inline void __free_kfree(void *pp)
{
	void *p = *(void **)pp;
	if (!ZERO_OR_NULL_PTR(p))
		kfree(p);
}

static inline void __free_kvfree(void *pp)
{
	void *p = *(void **)pp;
	if (!ZERO_OR_NULL_PTR(p))
		kvfree(p);
}

#endif
