// SPDX-License-Identifier: MIT
/*
 * stat_items_attr.c - the statistics counters as attributes: the sum over CPUs,
 * then " C<cpu>=<n>" for each CPU that counted any; writing 0 clears them.
 * Counters are per CPU and bumped without a locked instruction, as the
 * kernel's are (a bump lost to a thread migrating mid-way is the price of
 * a cheap counter); built only with -DSLUB_STATS=ON.
 */
#define _GNU_SOURCE
#include "slab/core/slab.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "slab/core/stat_items.h"

static const char *const stat_names[NR_SLUB_STAT_ITEMS] = {
#define X(item, name) name,
	SLAB_STAT_LIST(X)
#undef X
};

#ifdef SLUB_STATS
unsigned long slab_stat_cpus[SLUB_MAX_CPUS / 64];

/* The first CPU at or after @cpu that counted anything, or @end. */
static unsigned int next_stat_cpu(unsigned int cpu, unsigned int end)
{
	for (; cpu < end; cpu++)
		if (__atomic_load_n(&slab_stat_cpus[cpu / 64], __ATOMIC_RELAXED) & (1UL << (cpu % 64)))
			return cpu;
	return end;
}

#define for_each_stat_cpu(cpu, s)                                                \
	for (unsigned int cpu = next_stat_cpu(0, (s)->nr_cpu_slots); cpu < (s)->nr_cpu_slots; \
	     cpu = next_stat_cpu(cpu + 1, (s)->nr_cpu_slots))

static int find_stat(const char *attr)
{
	for (int i = 0; i < NR_SLUB_STAT_ITEMS; i++)
		if (!strcmp(stat_names[i], attr))
			return i;
	return -1;
}

const char *slab_stat_attr_name(unsigned int i, unsigned int *mode)
{
	if (i >= NR_SLUB_STAT_ITEMS)
		return NULL;
	if (mode)
		*mode = 0644;
	return stat_names[i];
}

bool slab_stat_show(struct kmem_cache *s, const char *attr, char *buf, size_t len,
		    size_t *out_len)
{
	int si = find_stat(attr);
	if (si < 0)
		return false;
	unsigned long sum = 0;
	for_each_stat_cpu(cpu, s)
		sum += READ_ONCE(*slab_stat_counter(s, cpu, (enum stat_item)si));
	size_t n = 0;
	int w = snprintf(buf, len, "%lu", sum);
	n += w > 0 ? (size_t)w : 0;
	for_each_stat_cpu(cpu, s) {
		unsigned int x = READ_ONCE(*slab_stat_counter(s, cpu, (enum stat_item)si));
		if (!x)
			continue;
		w = snprintf(n < len ? buf + n : NULL, n < len ? len - n : 0, " C%u=%u", cpu, x);
		n += w > 0 ? (size_t)w : 0;
	}
	w = snprintf(n < len ? buf + n : NULL, n < len ? len - n : 0, "\n");
	*out_len = n + (w > 0 ? (size_t)w : 0);
	return true;
}

bool slab_stat_store(struct kmem_cache *s, const char *attr, const char *text, int *err)
{
	int si = find_stat(attr);
	if (si < 0)
		return false;
	/* As the kernel: only 0, which clears every CPU's counter. */
	if (text[0] != '0' || (text[1] && strcmp(text + 1, "\n"))) {
		*err = -EINVAL;
		return true;
	}
	for_each_stat_cpu(cpu, s)
		WRITE_ONCE(*slab_stat_counter(s, cpu, (enum stat_item)si), 0);
	*err = 0;
	return true;
}
#else
const char *slab_stat_attr_name(unsigned int i, unsigned int *mode)
{
	(void)i;
	(void)mode;
	(void)stat_names;
	return NULL;
}

bool slab_stat_show(struct kmem_cache *s, const char *attr, char *buf, size_t len,
		    size_t *out_len)
{
	(void)s, (void)attr, (void)buf, (void)len, (void)out_len;
	return false;
}

bool slab_stat_store(struct kmem_cache *s, const char *attr, const char *text, int *err)
{
	(void)s, (void)attr, (void)text, (void)err;
	return false;
}
#endif
