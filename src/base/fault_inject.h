/* SPDX-License-Identifier: MIT */
/*
 * fault_inject.h - the kernel's fault injection (lib/fault-inject.c) for
 * failslab (slab layer) and fail_page_alloc (page allocator): options in
 * the boot syntax "<interval>,<probability>,<space>,<times>".
 *
 * Off (the default), each injection point costs one test of a global flag
 * on a slow path; on, the decision is out of line (should_fail()).
 */
#ifndef SLUB_FAULT_INJECT_H
#define SLUB_FAULT_INJECT_H

#include <stdbool.h>
#include <stddef.h>

#include "base/compiler.h"

struct fault_attr {
	unsigned long interval;		/* fail one call in @interval of those that pass the rest */
	unsigned long probability;	/* percent, 0..100 */
	long space;			/* budget (bytes, or pages) spent before failures start */
	long times;			/* failures left; -1: no limit */
	unsigned long count;		/* calls counted for @interval */
};

extern __hidden struct fault_attr failslab_attr, fail_page_alloc_attr;
/* Set at start-up when the option asks for failures; read without a lock. */
extern __hidden bool slub_failslab_on, slub_fail_page_alloc_on;

/*
 * Parse "<interval>,<probability>,<space>,<times>" into @attr: NULL if
 * good, else why not.
 */
__hidden const char *fault_attr_parse(const char *str, struct fault_attr *attr);

/* From the options table, at start-up (after the options are parsed). */
__hidden void fault_inject_init(void);

/*
 * Should this call of @size fail?  Spends space, counts calls for the
 * interval, draws against the probability, counts down times; under
 * fail_verbose reports the failure in one line: @kind, then the cache
 * @name, or (@name NULL) the page @order.
 */
__hidden bool should_fail(struct fault_attr *attr, long size, const char *kind,
			  const char *name, unsigned int order);

#endif
