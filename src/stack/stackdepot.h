/* SPDX-License-Identifier: MIT */
/*
 * stackdepot.h - the stack depot: every distinct call stack stored once,
 * named by a 32-bit handle, as the kernel's lib/stackdepot.c does, so an
 * object's alloc and free tracks cost a word each, not a stack each.
 *
 * Safe from any thread, from inside malloc, from a signal handler and in a
 * forked child: lookups and inserts are lock-free (see stackdepot.c), and
 * memory comes from the OS layer, never from malloc.  Stacks are never
 * freed; the depot stops growing at DEPOT_MAX_BYTES.
 */
#ifndef SLUB_STACKDEPOT_H
#define SLUB_STACKDEPOT_H

#include <stddef.h>
#include <stdint.h>
#include "base/compiler.h"

typedef uint32_t depot_stack_handle_t;	/* 0: no stack */

/* At most this many frames of a stack are kept (the rest are cut). */
#define DEPOT_MAX_FRAMES 64
/* The depot's memory never exceeds this (the hash table aside). */
#define DEPOT_MAX_BYTES (64UL << 20)

/*
 * The handle of the stack @entries[0..@nr): that of an identical stored
 * one if any, else of a new copy.  0 for no frames, when the depot is full
 * (reported once) or when the OS gives no memory.  errno is kept.
 */
__hidden depot_stack_handle_t stack_depot_save(const uintptr_t *entries, unsigned int nr);

/*
 * The frames of @handle in *@entries (valid for the life of the process)
 * and their number; 0 frames and NULL for handle 0 or any handle the depot
 * never gave out.
 */
__hidden unsigned int stack_depot_fetch(depot_stack_handle_t handle, const uintptr_t **entries);

/* Distinct stacks stored, and the bytes of the depot's pools they used. */
__hidden unsigned long stack_depot_nr_stacks(void);
__hidden size_t stack_depot_bytes(void);

/* Tests only: make the depot full at @bytes instead (returns the old bound). */
__hidden size_t stack_depot_set_limit(size_t bytes);

#endif
