// SPDX-License-Identifier: MIT
/*
 * slab_harden.c - init_on_alloc and init_on_free (the kernel's boot
 * options), and the flags that route a process through the hooks
 * (slab_harden.h says why that keeps the fast paths as they were).
 */
#include "slab/core/slab_harden.h"
#include "slab/debug/slab_debug.h"
#include "slab/debug/kfence.h"

#include <string.h>

#include "base/fault_inject.h"
#include "base/options.h"

bool slab_alloc_hooked, slab_free_direct, slab_free_hooked;
bool slub_init_on_alloc, slub_init_on_free, slub_freelist_random;

void slab_hooks_setup(void)
{
	slub_init_on_alloc = slub_opt(init_on_alloc);
	slub_init_on_free = slub_opt(init_on_free);
	slub_freelist_random = slub_opt(freelist_random);
	slab_alloc_hooked = slub_failslab_on || slub_init_on_alloc || kfence_every_allocation();
	slab_free_hooked = slub_init_on_free;
	/* KFENCE by the clock alone opens a gate now and then instead (kfence.h). */
	kfence_gate_setup(slab_alloc_hooked);
}

/*
 * Zero what the program had of @object, but the free pointer's word: the
 * free still reads it to tell a double free (its tag), and writes it
 * next.  A debug kmalloc object keeps its red zone past the size asked.
 */
void slab_free_hook(struct kmem_cache *s, void *object)
{
	if (!slab_want_init_on_free(s))
		return;
	unsigned int end = kmem_cache_debug(s) ? get_orig_size(s, object) : s->object_size;
	unsigned int word = s->offset;
	if (word >= end) {
		memset(object, 0, end);
		return;
	}
	memset(object, 0, word);
	if (word + sizeof(void *) < end)
		memset((char *)object + word + sizeof(void *), 0, end - word - sizeof(void *));
}
