// SPDX-License-Identifier: MIT
/*
 * leak_live.c - kmemleak's scan of a running process: the agent's "leaks"
 * request (slabinfo -p PID --leaks, the live tree's "leaks" file).
 *
 * The program runs on while it is scanned: each cache is held only while
 * its tracked objects are listed, and no thread is stopped, so a pointer
 * that another thread holds in a register only, or moves while the scan
 * reads, may go unseen.  As kmemleak does, a block is therefore listed
 * only when this scan and the one before found it unreferenced and its
 * contents unchanged (a block being filled in is not yet linked), and it
 * is older than slub_leak_min_age.  The first scan lists nothing new; it
 * says how many blocks wait for the next.
 *
 * What the last scan found unreferenced is kept in a table mapped outside
 * the heap (never malloc: it may be us), which the scan skips: it holds
 * the very addresses it looks for.
 */
#define _GNU_SOURCE
#include "slab/debug/leak_live.h"
#include "slab/debug/slab_leak.h"
#include "slab/debug/slab_debug.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "base/options.h"
#include "base/os.h"
#include "page/memmap.h"

#define SEEN_MAX (16UL << 20)		/* blocks remembered between scans */
#define SUM_BYTES_MAX (64UL << 10)	/* a block's checksum covers its first 64 KiB */

struct leak_seen {
	uintptr_t start;
	unsigned long when;		/* tells a block freed and allocated again apart */
	uint64_t sum;
};

static struct {
	pthread_mutex_t lock;		/* one scan at a time */
	struct leak_seen *map;		/* two halves: the last scan's, and this one's */
	size_t map_bytes;
	unsigned int last;		/* the half the last scan filled */
	unsigned long nr[2];
	unsigned long scans;
} live = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* A block's bytes, which the program may be writing (see scan_words): not TSan's. */
__attribute__((no_sanitize("thread")))
static uint64_t sum_words(uint64_t h, const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;	/* FNV-1a */
	return h;
}

struct sum {
	uintptr_t start;
	uint64_t h;
};

static bool sum_chunk(void *arg, uintptr_t at, const void *data, size_t n)
{
	struct sum *s = arg;
	if (!data) {
		s->h ^= at - s->start;	/* gone: it differs from what was read before */
		return false;
	}
	s->h = sum_words(s->h, data, n);
	return true;
}

/*
 * A large region's block may be unmapped by a free meanwhile: read it
 * with process_vm_readv() (leak_read_self), which fails where a load would fault.
 */
static uint64_t block_sum(const struct leak_block *b)
{
	size_t bytes = b->bytes < SUM_BYTES_MAX ? b->bytes : SUM_BYTES_MAX;
	struct sum s = { b->start, 0xcbf29ce484222325ULL };
	if (!memmap_in_large_region((const void *)b->start))
		return sum_words(s.h, (const unsigned char *)b->start, bytes);
	unsigned char buf[4096];
	leak_read_self(b->start, b->start + bytes, buf, sizeof(buf), sum_chunk, &s);
	return s.h;
}

/*
 * Mark each group head (an unreferenced block, see leak_scan) not yet to be listed LEAK_PENDING,
 * and remember every unreferenced one for the next scan.  @lt->block is
 * sorted by start (leak_scan), as the last scan's table is.
 */
static unsigned long confirm(struct leak_table *lt)
{
	const struct leak_seen *old = live.map + (live.last * SEEN_MAX);
	unsigned long nr_old = live.nr[live.last];
	unsigned int cur = !live.last;
	struct leak_seen *now = live.map + (cur * SEEN_MAX);
	unsigned long nr_now = 0, pending = 0, j = 0;
	uint64_t ms = os_now_ms();
	uint64_t min_age = (uint64_t)slub_opt(leak_min_age);
	for (unsigned long i = 0; i < lt->nr_blocks; i++) {
		struct leak_block *b = &lt->block[i];
		if (b->reached == LEAK_REACHED)
			continue;
		uint64_t sum = block_sum(b);
		while (j < nr_old && old[j].start < b->start)
			j++;
		bool again = j < nr_old && old[j].start == b->start && old[j].when == b->when &&
			     old[j].sum == sum;
		/* A group is listed with its head, or waits with it. */
		if (!b->reached && (!again || ms - b->when < min_age)) {
			b->reached = LEAK_PENDING;
			pending += 1 + b->ind_objects;
		}
		if (nr_now < SEEN_MAX)
			now[nr_now++] = (struct leak_seen){ b->start, b->when, sum };
	}
	live.nr[cur] = nr_now;
	live.last = cur;
	return pending;
}

size_t slub_leak_scan_live(char *buf, size_t size)
{
	/* Room kept for the line that says the listing was cut. */
	struct leak_out o = { buf, size > 96 ? size - 96 : 0, 0, false };
	if (!slub_debug_any(SLAB_STORE_USER)) {
		leak_line(&o, "leak: no cache tracks allocations (slub_debug without U): nothing to scan");
		return o.len;
	}
	pthread_mutex_lock(&live.lock);
	if (!live.map) {
		live.map_bytes = 2 * SEEN_MAX * sizeof(struct leak_seen);
		live.map = os_map_sparse(live.map_bytes);
	}
	struct leak_table lt;
	if (!live.map || !leak_table_init(&lt)) {
		pthread_mutex_unlock(&live.lock);
		leak_line(&o, "leak: no memory for the scan's tables; nothing scanned");
		return o.len;
	}
	lt.skip_start = (uintptr_t)live.map;
	lt.skip_end = (uintptr_t)live.map + live.map_bytes;
	/*
	 * The agent's stack holds none of the program's pointers, but below
	 * this frame what leak_collect() left, block addresses, lingers in
	 * the slots the scan's frames do not write: read from here up only.
	 */
	lt.stack_from = (uintptr_t)__builtin_frame_address(0);
	leak_collect(&lt);
	if (!leak_scan(&lt)) {
		leak_line(&o, "leak: the scan could not run (more blocks than it can hold)");
	} else {
		unsigned long pending = confirm(&lt);
		char what[48];
		snprintf(what, sizeof(what), "in live scan %lu", ++live.scans);
		leak_listing(&o, &lt, true, what);
		if (pending)
			leak_line(&o, "leak: %lu more unreferenced, not listed yet: younger than "
				  "slub_leak_min_age (%ld ms) or changed since the last scan; scan again",
				  pending, slub_opt(leak_min_age));
	}
	pthread_mutex_unlock(&live.lock);
	leak_table_release(&lt);
	if (o.cut) {
		o.size = size;
		o.cut = false;
		leak_line(&o, "leak: ... (cut: more than one answer holds)");
	}
	return o.len;
}
