/* SPDX-License-Identifier: MIT */
/*
 * decay_thread.h - slub_decay_thread (decay_thread.c): free pages go back
 * while the program sleeps.
 */
#ifndef SLUB_DECAY_THREAD_H
#define SLUB_DECAY_THREAD_H

#include <stdbool.h>
#include <stdint.h>

#include "base/compiler.h"

/* Whether the options ask for the thread (options_lock held, or started). */
__hidden bool slub_decay_thread_wanted(void);
/*
 * Start the thread unless this process has it.  Only where making a thread
 * is safe: not inside an allocation.  The caller asked wanted() first.
 */
__hidden void slub_decay_thread_start(void);

/* The malloc library's part of each look; true while it caches extent mappings. */
__hidden bool slub_malloc_idle_tick(uint64_t now_ms);
/* The slab layer's (sheaf.c): true if it flushed a sheaf, so may again. */
__hidden bool slub_slab_idle_tick(uint64_t now_ms);

#endif
