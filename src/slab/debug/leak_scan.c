// SPDX-License-Identifier: MIT
/*
 * leak_scan.c - the leak check's scan, kmemleak's model in user space: a
 * conservative mark from the roots through the blocks left allocated.
 *
 * Roots: every private writable mapping outside the heap (the modules'
 * data and bss, the thread stacks, TLS, the program's own mappings), the
 * live part of this thread's stack (its registers spilled onto it), and
 * inside the heap every slab and block that is no candidate: a cache
 * without U (its objects are not tracked, so all of its slabs are read),
 * a page block, extent or large region that holds no tracked block.  Every aligned word
 * that points into a candidate, at its start or inside (valgrind's
 * "possibly lost" is not reported as lost), marks it; a marked block is
 * read in turn.  The scan's own tables are mapped outside the heap and
 * skipped, since they hold every candidate's address.
 *
 * Roots are read with process_vm_readv(), which returns EFAULT where a
 * plain read would fault (a mapping another thread unmaps meanwhile, a
 * file mapping past its file's end), and so are blocks in large regions,
 * which their free unmaps; the sections' blocks stay mapped and are read
 * directly.
 */
#define _GNU_SOURCE
#include "slab/debug/slab_leak.h"
#include "slab/core/slab_common.h"

#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "base/maps.h"
#include "base/os.h"
#include "page/memmap.h"
#include "page/page_alloc.h"

#define ROOT_CHUNK (64UL << 10)

struct scan {
	struct leak_table *lt;
	uint32_t *work;			/* indices of marked blocks not yet read */
	size_t work_bytes;
	unsigned long nr_work;
	uintptr_t lo, hi;		/* the candidates' span */
	uintptr_t sp;			/* this thread's stack below it is dead */
	uintptr_t skip[3][2];		/* the scan's own tables */
	uintptr_t buf[ROOT_CHUNK / sizeof(uintptr_t)];
};

static int by_start(const void *a, const void *b)
{
	const struct leak_block *x = a, *y = b;
	return (x->start > y->start) - (x->start < y->start);
}

/* The block whose [start, start + bytes) holds @v (a zero-size block: its start only). */
static long block_of(const struct scan *sc, uintptr_t v)
{
	const struct leak_block *b = sc->lt->block;
	long lo = 0, hi = (long)sc->lt->nr_blocks - 1, found = -1;
	while (lo <= hi) {
		long mid = lo + (hi - lo) / 2;
		if (b[mid].start <= v) {
			found = mid;
			lo = mid + 1;
		} else {
			hi = mid - 1;
		}
	}
	if (found < 0 || v - b[found].start >= (b[found].bytes ? b[found].bytes : 1))
		return -1;
	return found;
}

/* Is a candidate's start in [from, to)? */
static bool holds_candidate(const struct scan *sc, uintptr_t from, uintptr_t to)
{
	const struct leak_block *b = sc->lt->block;
	long lo = 0, hi = (long)sc->lt->nr_blocks;
	while (lo < hi) {		/* the first start >= from */
		long mid = lo + (hi - lo) / 2;
		if (b[mid].start < from)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < (long)sc->lt->nr_blocks && b[lo].start < to;
}

static void scan_words(struct scan *sc, const uintptr_t *w, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uintptr_t v = w[i];
		if (v < sc->lo || v >= sc->hi)
			continue;
		long k = block_of(sc, v);
		if (k < 0 || sc->lt->block[k].reached)
			continue;
		sc->lt->block[k].reached = 1;
		sc->work[sc->nr_work++] = (uint32_t)k;
	}
}

/* A block of the heap: mapped for as long as it is allocated, read directly. */
static void scan_block(struct scan *sc, uintptr_t start, size_t bytes)
{
	uintptr_t from = (start + sizeof(uintptr_t) - 1) & ~(sizeof(uintptr_t) - 1);
	uintptr_t to = (start + bytes) & ~(sizeof(uintptr_t) - 1);
	if (to > from)
		scan_words(sc, (const uintptr_t *)from, (to - from) / sizeof(uintptr_t));
}

/* Memory outside the heap: copied a chunk at a time; what cannot be read is passed over. */
static void scan_root(struct scan *sc, uintptr_t from, uintptr_t to)
{
	from = (from + sizeof(uintptr_t) - 1) & ~(sizeof(uintptr_t) - 1);
	for (int i = 0; i < 3; i++)
		if (from < sc->skip[i][1] && to > sc->skip[i][0]) {	/* one of ours inside */
			if (from < sc->skip[i][0])
				scan_root(sc, from, sc->skip[i][0]);
			if (to > sc->skip[i][1])
				scan_root(sc, sc->skip[i][1], to);
			return;
		}
	pid_t self = getpid();
	while (from + sizeof(uintptr_t) <= to) {
		size_t len = to - from < ROOT_CHUNK ? (to - from) & ~(sizeof(uintptr_t) - 1) : ROOT_CHUNK;
		struct iovec local = { sc->buf, len }, remote = { (void *)from, len };
		ssize_t got = process_vm_readv(self, &local, 1, &remote, 1, 0);
		if (got > 0)
			scan_words(sc, sc->buf, (size_t)got / sizeof(uintptr_t));
		from += got > 0 ? (uintptr_t)got : PAGE_SIZE;	/* an unreadable page: the next */
		if (got <= 0)
			from &= ~(PAGE_SIZE - 1);
	}
}

/* A mapping outside the heap: a root (from sp up, for this thread's stack). */
static bool scan_mapping(const struct maps_entry *e, const char *path, void *arg)
{
	struct scan *sc = arg;
	if (e->perms[0] != 'r' || e->perms[1] != 'w' || e->perms[3] != 'p' ||
	    !strcmp(path, "[vvar]") || !strcmp(path, "[vsyscall]"))
		return false;
	uintptr_t a = e->start;
	while (a < e->end) {
		uintptr_t next = (a | (SECTION_SIZE - 1)) + 1;
		if (next > e->end || next < a)
			next = e->end;
		uintptr_t from = a;
		if (sc->sp >= a && sc->sp < next)
			from = sc->sp;
		if (!memmap_slot(a))	/* the heap's: the page walks' (scan_heap_block) */
			scan_root(sc, from, next);
		a = next;
	}
	return false;
}

/* The heap's roots: slabs of caches without U, blocks that hold no candidate. */
static void scan_heap_block(struct page *head, void *arg)
{
	struct scan *sc = arg;
	uintptr_t start = (uintptr_t)memmap_page_address(head);
	if (page_flags(head) & PG_slab) {
		struct kmem_cache *s = page_slab(head)->slab_cache;
		if (s && !(READ_ONCE(s->flags) & SLAB_STORE_USER))
			scan_block(sc, start, PAGE_SIZE << head->order);
		return;
	}
	size_t bytes = (page_flags(head) & PG_extent) ? head->nr_extent_pages << PAGE_SHIFT :
							 PAGE_SIZE << head->order;
	if (holds_candidate(sc, start, start + bytes))
		return;
	if (page_flags(head) & PG_large)	/* its free unmaps it: read safely */
		scan_root(sc, start, start + bytes);
	else
		scan_block(sc, start, bytes);
}

static void drain(struct scan *sc)
{
	while (sc->nr_work) {
		const struct leak_block *b = &sc->lt->block[sc->work[--sc->nr_work]];
		/* A large region goes with its block: a thread still running may free it now. */
		if (memmap_in_large_region((const void *)b->start))
			scan_root(sc, b->start, b->start + b->bytes);
		else
			scan_block(sc, b->start, b->bytes);
	}
}

/* Not inlined: its frame sits below the caller's, whose registers it spilled. */
static __attribute__((noinline)) void scan_roots(struct scan *sc)
{
	char here;
	sc->sp = (uintptr_t)&here & ~(sizeof(uintptr_t) - 1);
	maps_walk(scan_mapping, sc);
	drain(sc);
	page_for_each_block(scan_heap_block, sc);
	page_for_each_large(scan_heap_block, sc);
	drain(sc);
}

bool leak_scan(struct leak_table *lt)
{
	if (!lt->nr_blocks)
		return true;
	if (lt->nr_blocks > UINT32_MAX)
		return false;
	qsort(lt->block, lt->nr_blocks, sizeof(*lt->block), by_start);
	struct scan *sc = os_map_sparse(sizeof(*sc));
	if (!sc)
		return false;
	sc->lt = lt;
	sc->work_bytes = lt->nr_blocks * sizeof(uint32_t);
	sc->work = os_map_sparse(sc->work_bytes);
	if (!sc->work) {
		os_release(sc, sizeof(*sc));
		return false;
	}
	const struct leak_block *last = &lt->block[lt->nr_blocks - 1];
	sc->lo = lt->block[0].start;
	sc->hi = last->start + (last->bytes ? last->bytes : 1);
	uintptr_t own[3][2] = {
		{ (uintptr_t)lt->block, (uintptr_t)lt->block + lt->block_map_bytes },
		{ (uintptr_t)sc->work, (uintptr_t)sc->work + sc->work_bytes },
		{ (uintptr_t)sc, (uintptr_t)sc + sizeof(*sc) },
	};
	memcpy(sc->skip, own, sizeof(own));
	__builtin_unwind_init();	/* callee-saved registers onto the stack the scan reads */
	scan_roots(sc);
	os_release(sc->work, sc->work_bytes);
	os_release(sc, sizeof(*sc));
	return true;
}
