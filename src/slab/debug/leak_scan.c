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
 * skipped, since they hold every candidate's address.  Of anonymous
 * memory only what can hold more than zeroes is read: /proc/self/smaps
 * says which mappings have pages resident or swapped out, mincore() which
 * pages of a mapping with none swapped out are resident (scan_mapping).
 *
 * The blocks still unmarked are then grouped as valgrind's memcheck
 * groups them: one that another unmarked block points to is "indirectly
 * lost" (LEAK_INDIRECT), counted in the head of its group, the block its
 * reading started from; a head later reached from another block gives its
 * group to that one (a lost list counts once, at its first node).
 *
 * Roots are read with process_vm_readv(), which returns EFAULT where a
 * plain read would fault (a mapping another thread unmaps meanwhile, a
 * file mapping past its file's end), and so are blocks in large regions,
 * which their free unmaps; the sections' blocks stay mapped and are read
 * directly.
 */
#define _GNU_SOURCE
#include "slab/debug/slab_leak.h"
#include "slab/debug/slab_kasan.h"
#include "slab/core/slab_common.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "base/maps.h"
#include "base/os.h"
#include "page/memmap.h"
#include "page/page_alloc.h"

#define ROOT_CHUNK (64UL << 10)
#define SCAN_THREADS 256		/* threads whose dead stack is skipped; the rest read whole */
#define RED_ZONE 128			/* the x86-64 ABI's, below a leaf's sp */
#define SPARSE_MAX 64			/* mappings read by their resident pages, checked after */

struct scan {
	struct leak_table *lt;
	uint32_t *work;			/* indices of marked blocks not yet read */
	size_t work_bytes;
	unsigned long nr_work;
	uintptr_t lo, hi;		/* the candidates' span */
	uint32_t *page_first;		/* per page of the span: the first block at or after it */
	size_t page_first_bytes;	/* 0: too sparse a span, found by a search of all */
	uintptr_t sp;			/* this thread's stack below it is dead */
	uintptr_t sp_low;		/* down to here: a signal stack's base (0: the mapping's) */
	uintptr_t other_sp[SCAN_THREADS];	/* and other threads', blocked in a system call */
	unsigned int nr_other_sp;
	uintptr_t skip[5][2];		/* the scan's own tables, and the caller's */
	long head;			/* grouping the unmarked: the group's head; -1 first */
	uintptr_t sparse[SPARSE_MAX][2];	/* mappings read by their resident pages only */
	unsigned int nr_sparse;
	uintptr_t buf[ROOT_CHUNK / sizeof(uintptr_t)];
	unsigned char vec[SECTION_SIZE / PAGE_SIZE];	/* mincore()'s answer for a section */
};

static int by_start(const void *a, const void *b)
{
	const struct leak_block *x = a, *y = b;
	return (x->start > y->start) - (x->start < y->start);
}

/*
 * Each page of the span: the index of the first block that starts at or
 * after it, so that a word's block is looked for among those of its page
 * (and the one before, which may reach into it): a few steps, in cache,
 * instead of a search of a million blocks.  Built only where the span is
 * not much sparser than the blocks (large regions may lie far apart).
 */
static void index_pages(struct scan *sc)
{
	size_t pages = ((sc->hi - sc->lo) >> PAGE_SHIFT) + 2;
	if (pages > 4 * sc->lt->nr_blocks + 65536)
		return;
	sc->page_first_bytes = pages * sizeof(uint32_t);
	sc->page_first = os_map_sparse(sc->page_first_bytes);
	if (!sc->page_first) {
		sc->page_first_bytes = 0;
		return;
	}
	const struct leak_block *b = sc->lt->block;
	uint32_t k = 0;
	for (size_t p = 0; p < pages; p++) {
		uintptr_t page = sc->lo + (p << PAGE_SHIFT);
		while (k < sc->lt->nr_blocks && b[k].start < page)
			k++;
		sc->page_first[p] = k;
	}
}

/* The block whose [start, start + bytes) holds @v (a zero-size block: its start only). */
static long block_of(const struct scan *sc, uintptr_t v)
{
	const struct leak_block *b = sc->lt->block;
	long lo = 0, hi = (long)sc->lt->nr_blocks - 1, found = -1;
	if (sc->page_first_bytes) {	/* the last block starting at or before v: in page p, or earlier */
		size_t p = (v - sc->lo) >> PAGE_SHIFT;
		lo = sc->page_first[p] ? (long)sc->page_first[p] - 1 : 0;
		hi = (long)sc->page_first[p + 1] - 1;
	}
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

/* @b, unmarked, is pointed to from @head's group: it joins it, with its own if it headed one. */
static void join_group(struct leak_block *head, struct leak_block *b)
{
	b->reached = LEAK_INDIRECT;
	head->ind_objects += 1 + b->ind_objects;
	head->ind_bytes += b->bytes + b->ind_bytes;
	b->ind_objects = 0;
	b->ind_bytes = 0;
}

/*
 * Heap memory is read as the program writes it (kmemleak's race, which the
 * live scan's second look answers): kept out of TSan's view.
 */
__attribute__((no_sanitize("thread")))
static void scan_words(struct scan *sc, const uintptr_t *w, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uintptr_t v = w[i];
		if (v < sc->lo || v >= sc->hi)
			continue;
		long k = block_of(sc, v);
		if (k < 0 || sc->lt->block[k].reached || k == sc->head)
			continue;
		if (sc->head < 0)
			sc->lt->block[k].reached = LEAK_REACHED;
		else
			join_group(&sc->lt->block[sc->head], &sc->lt->block[k]);
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

void leak_read_self(uintptr_t from, uintptr_t to, void *buf, size_t chunk,
		    bool (*fn)(void *arg, uintptr_t at, const void *data, size_t n), void *arg)
{
	pid_t self = getpid();
	while (from < to) {
		size_t len = to - from < chunk ? to - from : chunk;
		struct iovec local = { buf, len }, remote = { (void *)from, len };
		ssize_t got = process_vm_readv(self, &local, 1, &remote, 1, 0);
		if (!fn(arg, from, got > 0 ? buf : NULL, got > 0 ? (size_t)got : 0))
			return;
		from += got > 0 ? (uintptr_t)got : PAGE_SIZE;	/* an unreadable page: the next */
		if (got <= 0)
			from &= ~(PAGE_SIZE - 1);
	}
}

static bool scan_chunk(void *arg, uintptr_t at, const void *data, size_t n)
{
	(void)at;
	if (data)
		scan_words(arg, data, n / sizeof(uintptr_t));
	return true;
}

/* Memory outside the heap: copied a chunk at a time; what cannot be read is passed over. */
static void scan_root(struct scan *sc, uintptr_t from, uintptr_t to)
{
	from = (from + sizeof(uintptr_t) - 1) & ~(sizeof(uintptr_t) - 1);
	for (size_t i = 0; i < sizeof(sc->skip) / sizeof(sc->skip[0]); i++)
		if (from < sc->skip[i][1] && to > sc->skip[i][0]) {	/* one of ours inside */
			if (from < sc->skip[i][0])
				scan_root(sc, from, sc->skip[i][0]);
			if (to > sc->skip[i][1])
				scan_root(sc, sc->skip[i][1], to);
			return;
		}
	leak_read_self(from, to & ~(sizeof(uintptr_t) - 1), sc->buf, ROOT_CHUNK, scan_chunk, sc);
}

/*
 * The stack pointer of each other thread that is blocked in a system call
 * (/proc/self/task/TID/syscall), so that the dead part of its stack, where
 * stale pointers to freed or leaked blocks linger, is not read.  A thread
 * that runs has its whole stack read.  Without malloc: raw getdents64.
 */
static void find_thread_sps(struct scan *sc)
{
	int dir = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return;
	pid_t self = (pid_t)syscall(SYS_gettid);
	char ents[4096];
	long got;
	while ((got = syscall(SYS_getdents64, dir, ents, sizeof(ents))) > 0) {
		for (long off = 0; off < got;) {
			struct dirent64 *d = (struct dirent64 *)(ents + off);
			off += d->d_reclen;
			char *end;
			long tid = strtol(d->d_name, &end, 10);
			if (*end || tid <= 0 || tid == self || sc->nr_other_sp == SCAN_THREADS)
				continue;
			char path[64], line[256];
			snprintf(path, sizeof(path), "/proc/self/task/%ld/syscall", tid);
			int fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd < 0)
				continue;
			ssize_t n = read(fd, line, sizeof(line) - 1);
			close(fd);
			if (n <= 0)
				continue;
			line[n] = 0;
			/* "NR a1 .. a6 SP PC", or "-1 SP PC" outside a call; "running" otherwise. */
			unsigned long f[9];
			int k = 0;
			for (char *q = line; k < 9 && *q && *q != '\n'; k++) {
				f[k] = strtoul(q, &end, 0);
				if (end == q)
					break;
				q = end;
			}
			uintptr_t sp = k == 9 ? f[7] : k == 3 && (long)f[0] == -1 ? f[1] : 0;
			if (sp > RED_ZONE)
				sc->other_sp[sc->nr_other_sp++] = (sp - RED_ZONE) & ~(sizeof(uintptr_t) - 1);
		}
	}
	close(dir);
}

/* Where a stack in [a, next) starts to be live: its thread's sp, or @a. */
static uintptr_t live_from(const struct scan *sc, uintptr_t a, uintptr_t next)
{
	if (sc->sp >= a && sc->sp < next)
		return sc->sp;
	uintptr_t from = next;
	for (unsigned int i = 0; i < sc->nr_other_sp; i++)
		if (sc->other_sp[i] >= a && sc->other_sp[i] < from)
			from = sc->other_sp[i];
	return from < next ? from : a;
}

/*
 * The first resident page in @vec[i, n) (mincore's bit 0), or n.  Our own
 * array, gigabytes of it for TSan's shadow: not instrumented.
 */
__attribute__((no_sanitize("thread")))
static size_t next_resident(const unsigned char *vec, size_t i, size_t n)
{
	const uint64_t ones = 0x0101010101010101ULL;
	for (uint64_t w; i + 8 <= n && (memcpy(&w, vec + i, 8), !(w & ones));)
		i += 8;			/* most of a sparse mapping is untouched */
	while (i < n && !(vec[i] & 1))
		i++;
	return i;
}

/*
 * [from, to), inside one section, of anonymous memory that has nothing
 * swapped out: a page that is not resident was never written (or was
 * dropped) and reads as zeroes, so only the resident ones are read.
 */
static void scan_resident(struct scan *sc, uintptr_t from, uintptr_t to)
{
	uintptr_t base = from & ~(PAGE_SIZE - 1);
	size_t n = (to - base + PAGE_SIZE - 1) >> PAGE_SHIFT;
	if (mincore((void *)base, n << PAGE_SHIFT, sc->vec)) {
		scan_root(sc, from, to);	/* unmapped meanwhile, say: read what can be */
		return;
	}
	for (size_t i = next_resident(sc->vec, 0, n), j; i < n; i = next_resident(sc->vec, j, n)) {
		for (j = i + 1; j < n && (sc->vec[j] & 1); j++)
			;
		uintptr_t a = base + (i << PAGE_SHIFT), b = base + (j << PAGE_SHIFT);
		scan_root(sc, a > from ? a : from, b < to ? b : to);
	}
}

static void scan_piece(struct scan *sc, uintptr_t from, uintptr_t to, bool resident)
{
	if (resident)
		scan_resident(sc, from, to);
	else
		scan_root(sc, from, to);
}

/* [start, end) of a mapping, a section at a time: from sp up in a thread's stack. */
static void scan_range(struct scan *sc, uintptr_t start, uintptr_t end, bool resident)
{
	for (uintptr_t a = start, next; a < end; a = next) {
		next = (a | (SECTION_SIZE - 1)) + 1;
		if (next > end || next < a)
			next = end;
		uintptr_t from = live_from(sc, a, next);
		if (memmap_slot(a))	/* the heap's: the page walks' (scan_heap_block) */
			continue;
		/* A signal stack in the program's data: below it the data is live. */
		if (sc->sp >= a && sc->sp < next && sc->sp_low > a && sc->sp_low < sc->sp)
			scan_piece(sc, a, sc->sp_low, resident);
		scan_piece(sc, from, next, resident);
	}
}

/*
 * A mapping outside the heap: a root.  Anonymous memory (no file, no
 * userfaultfd to fill a missing page) none of whose pages is resident or
 * swapped out holds only zeroes: skipped.  With some resident and none
 * swapped out (ThreadSanitizer's shadow: terabytes, a few pages touched),
 * only the resident pages are read, and smaps is asked again after
 * (recheck_mapping) in case one went to swap meanwhile.
 */
static bool scan_mapping(const struct maps_entry *e, const char *path, void *arg)
{
	struct scan *sc = arg;
	if (e->perms[0] != 'r' || e->perms[1] != 'w' || e->perms[3] != 'p' ||
	    !strcmp(path, "[vvar]") || !strcmp(path, "[vsyscall]"))
		return false;
	bool anon = !e->inode && !e->userfault;
	if (anon && !e->rss && !e->swap)
		return false;
	bool resident = anon && !e->swap && e->rss < e->end - e->start &&
			sc->nr_sparse < SPARSE_MAX;
	if (resident) {
		sc->sparse[sc->nr_sparse][0] = e->start;
		sc->sparse[sc->nr_sparse++][1] = e->end;
	}
	scan_range(sc, e->start, e->end, resident);
	return false;
}

/*
 * After the resident pages of a mapping were read: smaps again.  What is
 * swapped out now may have been resident when smaps was read first and
 * gone by mincore()'s turn: the mapping is read whole, swap-ins and all.
 */
static bool recheck_mapping(const struct maps_entry *e, const char *path, void *arg)
{
	struct scan *sc = arg;
	(void)path;
	if (!e->swap)
		return false;
	for (unsigned int i = 0; i < sc->nr_sparse; i++) {
		uintptr_t lo = e->start > sc->sparse[i][0] ? e->start : sc->sparse[i][0];
		uintptr_t hi = e->end < sc->sparse[i][1] ? e->end : sc->sparse[i][1];
		if (lo < hi)
			scan_range(sc, lo, hi, false);
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

/* A tracked block's words. */
static void scan_tracked(struct scan *sc, const struct leak_block *b)
{
	/* A large region goes with its block: a thread still running may free it now. */
	if (memmap_in_large_region((const void *)b->start))
		scan_root(sc, b->start, b->start + b->bytes);
	else
		scan_block(sc, b->start, b->bytes);
}

static void drain(struct scan *sc)
{
	while (sc->nr_work)
		scan_tracked(sc, &sc->lt->block[sc->work[--sc->nr_work]]);
}

/*
 * valgrind's grouping of what no root reaches: each unmarked block not yet
 * in a group heads one, and what its reading reaches joins it.  A block
 * is read at most twice (as a head, then as a member of a later group).
 */
static void group_unreferenced(struct scan *sc)
{
	for (unsigned long i = 0; i < sc->lt->nr_blocks; i++) {
		if (sc->lt->block[i].reached)
			continue;
		sc->head = (long)i;
		scan_tracked(sc, &sc->lt->block[i]);
		drain(sc);
	}
	sc->head = -1;
}

/* Not inlined: its frame sits below the caller's, whose registers it spilled. */
static __attribute__((noinline)) void scan_roots(struct scan *sc)
{
	char here;
	sc->sp = (sc->lt->stack_from ? sc->lt->stack_from : (uintptr_t)&here) &
		 ~(sizeof(uintptr_t) - 1);
	/*
	 * On a signal stack (exit() from a handler, say), only that stack
	 * below sp is dead: it may be an array in the program's data, whose
	 * mapping holds live globals below it.
	 */
	stack_t ss;
	sc->sp_low = 0;
	if (!sigaltstack(NULL, &ss) && (ss.ss_flags & SS_ONSTACK) &&
	    sc->sp - (uintptr_t)ss.ss_sp < ss.ss_size)
		sc->sp_low = (uintptr_t)ss.ss_sp;
	find_thread_sps(sc);
	if (!maps_walk_sizes(scan_mapping, sc))
		maps_walk(scan_mapping, sc);	/* no smaps: each mapping read whole */
	if (sc->nr_sparse)
		maps_walk_sizes(recheck_mapping, sc);
	drain(sc);
	page_for_each_block(scan_heap_block, sc);
	page_for_each_large(scan_heap_block, sc);
	drain(sc);
	group_unreferenced(sc);
}

static bool scan_all(struct leak_table *lt)
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
	sc->head = -1;
	sc->work_bytes = lt->nr_blocks * sizeof(uint32_t);
	sc->work = os_map_sparse(sc->work_bytes);
	if (!sc->work) {
		os_release(sc, sizeof(*sc));
		return false;
	}
	const struct leak_block *last = &lt->block[lt->nr_blocks - 1];
	sc->lo = lt->block[0].start;
	sc->hi = last->start + (last->bytes ? last->bytes : 1);
	index_pages(sc);
	/* The page index too: two indices side by side may read as an address. */
	uintptr_t own[5][2] = {
		{ (uintptr_t)lt->block, (uintptr_t)lt->block + lt->block_map_bytes },
		{ (uintptr_t)sc->work, (uintptr_t)sc->work + sc->work_bytes },
		{ (uintptr_t)sc, (uintptr_t)sc + sizeof(*sc) },
		{ lt->skip_start, lt->skip_end },
		{ (uintptr_t)sc->page_first, (uintptr_t)sc->page_first + sc->page_first_bytes },
	};
	memcpy(sc->skip, own, sizeof(own));
	__builtin_unwind_init();	/* callee-saved registers onto the stack the scan reads */
	scan_roots(sc);
	if (sc->page_first)
		os_release(sc->page_first, sc->page_first_bytes);
	os_release(sc->work, sc->work_bytes);
	os_release(sc, sizeof(*sc));
	return true;
}

/* Reads every word, the free objects' too: a tool told of them looks away (slab_kasan.h). */
bool leak_scan(struct leak_table *lt)
{
	kasan_quiet_begin();
	bool scanned = scan_all(lt);
	kasan_quiet_end();
	return scanned;
}
