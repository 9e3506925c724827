/*
 * init.h - start-up of the whole library, once, on first use.
 *
 * Order: options from the environment, the report file, the OS checks, the
 * page allocator.  After it slub_setup() answers -EBUSY.
 */
#ifndef SLUB_INIT_H
#define SLUB_INIT_H

#include "compiler.h"

extern __hidden int slub_started;
/* Nonzero when start-up found the system unusable (wrong page size). */
extern __hidden int slub_unusable;

__hidden void slub_init_slow(void);

static inline void slub_ensure_init(void)
{
	if (unlikely(!__atomic_load_n(&slub_started, __ATOMIC_ACQUIRE)))
		slub_init_slow();
}

#endif
