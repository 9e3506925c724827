/* SPDX-License-Identifier: MIT */
/*
 * percpu.h - per-CPU slots of the caches, laid out as the kernel's percpu
 * allocator lays out its units.
 *
 * A chunk is one unit of PCPU_UNIT_SIZE bytes per possible CPU, side by
 * side.  A slot is the same 128-byte offset in every unit, so the slot of
 * CPU n is the slot of CPU 0 plus n << PCPU_UNIT_SHIFT, a constant shift
 * the rseq sequences use.  All of one CPU's slots are thus packed into its
 * own pages, and no two CPUs' slots share a page.  A CPU the program never
 * runs on backs no page of its unit: fork(), validation and statistics walk
 * the slots of CPUs used (slab_cpus), and only the reuse of a destroyed
 * cache's slot reads every unit, where the kernel may back a read fault
 * with a page of its own.  A page per
 * cache per CPU set (the first design) cost some 80 KiB of resident memory
 * in every process.
 */
#ifndef SLUB_PERCPU_H
#define SLUB_PERCPU_H

#include <stdbool.h>
#include "base/compiler.h"

#define PCPU_UNIT_SHIFT 15		/* 32 KiB per CPU per chunk */
#define PCPU_UNIT_SIZE (1UL << PCPU_UNIT_SHIFT)
#define PCPU_SLOT_SIZE 128
#define PCPU_SLOTS_PER_CHUNK (PCPU_UNIT_SIZE / PCPU_SLOT_SIZE)
#define PCPU_STR_(x) #x
#define PCPU_STR(x) PCPU_STR_(x)

/*
 * A slot, zero in every unit, for @nr_cpus CPUs (the same count on every
 * call: os_possible_cpus()).  Returns CPU 0's copy, or NULL (ENOMEM).
 */
__hidden void *pcpu_slot_alloc(unsigned int nr_cpus);
/* Give a slot back; its next user finds it zero again (pcpu_slot_alloc). */
__hidden void pcpu_slot_free(void *slot);

/* The copy of @slot for @cpu. */
static inline void *pcpu_slot_of(void *slot, unsigned int cpu)
{
	return (char *)slot + ((unsigned long)cpu << PCPU_UNIT_SHIFT);
}

/* fork(): the chunk list's lock, a leaf taken after every slab lock. */
__hidden void pcpu_fork_lock(bool lock);
__hidden void pcpu_fork_child(void);

#endif
