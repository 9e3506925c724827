// SPDX-License-Identifier: MIT
/*
 * fault_inject.c - failures on demand, as the kernel's fault injection
 * (lib/fault-inject.c, Documentation/fault-injection/): the options
 * failslab= and fail_page_alloc= take "<interval>,<probability>,<space>,
 * <times>", and each call at an injection point that passes the filters
 * is decided here:
 *
 *   probability 0 or no times left   never fails
 *   space > size                     space -= size, no failure yet
 *   interval > 1                     only every interval-th call may fail
 *   probability                      percent of those that fail
 *
 * The draws come from a per-process generator (splitmix64 over one atomic
 * counter, seeded from the pid): no lock, and a single-threaded program
 * sees the same sequence in each run with the same pid.
 */
#define _GNU_SOURCE
#include "base/fault_inject.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/options.h"
#include "base/report.h"

struct fault_attr failslab_attr, fail_page_alloc_attr;
bool slub_failslab_on, slub_fail_page_alloc_on;

static uint64_t prng_state;

#define FOUR_INTEGERS "expected four integers <interval>,<probability>,<space>,<times>"
static const char out_of_range[] = "out of range";

/* One field: a decimal integer in [min, max], ended by ',' (or the end for the last). */
static const char *parse_field(const char **p, long min, long max, bool last, long *out)
{
	const char *s = *p;
	char *end;
	if (!((*s >= '0' && *s <= '9') || (*s == '-' && s[1] >= '0' && s[1] <= '9')))
		return FOUR_INTEGERS;
	errno = 0;
	long n = strtol(s, &end, 10);
	if (errno || n < min || n > max)
		return out_of_range;	/* the caller names the field */
	if (last ? *end != 0 : *end != ',')
		return FOUR_INTEGERS;
	*out = n;
	*p = last ? end : end + 1;
	return NULL;
}

const char *fault_attr_parse(const char *str, struct fault_attr *attr)
{
	static const struct {
		const char *range;
		long min, max;
	} fields[4] = {
		{ "interval must be 1 or more", 1, LONG_MAX },
		{ "probability must be 0..100 (percent)", 0, 100 },
		{ "space must be 0 or more", 0, LONG_MAX },
		{ "times must be -1 (no limit) or 0 or more", -1, LONG_MAX },
	};
	long v[4];
	const char *p = str;
	if (!str || !*str)
		return FOUR_INTEGERS;
	for (int i = 0; i < 4; i++) {
		const char *why = parse_field(&p, fields[i].min, fields[i].max, i == 3, &v[i]);
		if (why == out_of_range)
			return fields[i].range;
		if (why)
			return why;
	}
	attr->interval = (unsigned long)v[0];
	attr->probability = (unsigned long)v[1];
	attr->space = v[2];
	attr->times = v[3];
	attr->count = 0;
	return NULL;
}

void fault_inject_init(void)
{
	memset(&failslab_attr, 0, sizeof(failslab_attr));
	memset(&fail_page_alloc_attr, 0, sizeof(fail_page_alloc_attr));
	/* Checked when the options were applied: a value here parses. */
	if (slub_opt_str(failslab)[0] && !fault_attr_parse(slub_opt_str(failslab), &failslab_attr))
		slub_failslab_on = failslab_attr.probability && failslab_attr.times;
	if (slub_opt_str(fail_page_alloc)[0] &&
	    !fault_attr_parse(slub_opt_str(fail_page_alloc), &fail_page_alloc_attr))
		slub_fail_page_alloc_on = fail_page_alloc_attr.probability && fail_page_alloc_attr.times;
	prng_state = (uint64_t)getpid() * 0x9e3779b97f4a7c15ull;
}

/* splitmix64: a draw in 0..99. */
static unsigned int draw_percent(void)
{
	uint64_t z = __atomic_add_fetch(&prng_state, 0x9e3779b97f4a7c15ull, __ATOMIC_RELAXED);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return (unsigned int)(z % 100);
}

bool should_fail(struct fault_attr *attr, long size, const char *kind, const char *name,
		 unsigned int order)
{
	if (!attr->probability || !__atomic_load_n(&attr->times, __ATOMIC_RELAXED))
		return false;
	/* The budget first: no failure until it is spent. */
	long space = __atomic_load_n(&attr->space, __ATOMIC_RELAXED);
	while (space > size)
		if (__atomic_compare_exchange_n(&attr->space, &space, space - size, false,
						__ATOMIC_RELAXED, __ATOMIC_RELAXED))
			return false;
	if (attr->interval > 1 &&
	    __atomic_add_fetch(&attr->count, 1, __ATOMIC_RELAXED) % attr->interval)
		return false;
	if (attr->probability <= draw_percent())
		return false;
	/* Take one of the times left; none left (another thread took the last): no failure. */
	long times = __atomic_load_n(&attr->times, __ATOMIC_RELAXED);
	while (times != -1) {
		if (!times)
			return false;
		if (__atomic_compare_exchange_n(&attr->times, &times, times - 1, false,
						__ATOMIC_RELAXED, __ATOMIC_RELAXED))
			break;
	}
	if (slub_opt(fail_verbose)) {
		if (name)
			slub_warn("FAULT_INJECTION: forcing a failure: %s, cache %s", kind, name);
		else
			slub_warn("FAULT_INJECTION: forcing a failure: %s, order %u", kind, order);
	}
	return true;
}
