/*
 * decay_thread.h - slub_decay_thread (decay_thread.c): free pages go back
 * while the program sleeps.
 */
#ifndef SLUB_DECAY_THREAD_H
#define SLUB_DECAY_THREAD_H

#include <stdint.h>

#include "compiler.h"

/*
 * Start the thread if slub_decay_thread asks for it and this process has
 * none yet.  Only where making a thread is safe: not inside an allocation.
 */
__hidden void slub_decay_thread_start(void);

/* The malloc library's part of each look (its cached extent mappings). */
__hidden void slub_malloc_idle_tick(uint64_t now_ms);

#endif
