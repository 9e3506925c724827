// SPDX-License-Identifier: MIT
/*
 * malloc_debug.c - slub_debug for malloc's blocks above 8 KiB, the
 * pseudo-cache "malloc-large" (slub_debug=FZPU, or a list naming
 * malloc-large): a heap debugger must not go blind above the slab sizes.
 *
 * A debug extent is the pages of header + request + red zone:
 *
 *   start          p - 128                     p               p + size      end of pages
 *   | (align pad) | magic state size offset    | left red |    | data         | right red zone |
 *                 | alloc track  free track    | zone 32  |    |              | 0xcc, >= 16 B  |
 *
 * p is start + 128, or start + align for an alignment up to a page: from
 * p, the start is p's page (or the one before when p is page-aligned),
 * whatever the header says, so a block found there is ours even when an
 * underflow wrote over its header.
 *
 *   Z  red zones 0xcc, checked on free and realloc;
 *   P  the freed data poisoned 0x6b..0xa5, and blocks up to 1 MiB held in a
 *      quarantine of the last 64 frees, their poison checked when they
 *      leave it: a write after free is reported, and a double free within
 *      it is told from an invalid one with both tracks;
 *   U  the allocation and free stacks (slab_track.c), printed in reports
 *      and summed by slub_leak_check;
 *   F  (and any flag) the header's checks.
 * Reports are the kernel's: banner, INFO lines, hex dump, FIX.  realloc
 * always moves a debug extent, so its red zone follows the new size.
 * Blocks aligned to more than a page stay plain extents.
 */
#define _GNU_SOURCE
#include "malloc/malloc_debug.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/options.h"
#include "base/report.h"
#include "base/start.h"
#include "malloc/malloc_extents.h"
#include "page/page_alloc.h"
#include "slab/debug/slab_debug.h"
#include "slab/core/slab_common.h"
#include "slab/debug/slab_leak.h"

#define EXTENT_HDR 128
#define EXTENT_RED_MIN 16
#define EXTENT_MAGIC 0x6b6c6c61u	/* "allk" */
#define EXTENT_FLAGS (SLAB_CONSISTENCY_CHECKS | SLAB_RED_ZONE | SLAB_POISON | SLAB_STORE_USER)

enum extent_state { EXTENT_LIVE = 1, EXTENT_FREED = 2 };

struct extent_hdr {
	uint32_t magic;
	uint32_t state;			/* enum extent_state, changed by CAS */
	uint64_t size;			/* what the caller asked for */
	uint64_t offset;		/* from the extent's start to the caller's pointer */
	uint64_t bytes;			/* the extent's pages, in bytes */
	struct track track[2];		/* TRACK_ALLOC, TRACK_FREE */
	uint8_t left_red[32];
};
static_assert(sizeof(struct extent_hdr) == EXTENT_HDR, "the header is what p - 128 holds");

static const char large_name[] = "malloc-large";

unsigned int extent_debug_flags_value = EXTENT_DEBUG_UNSET;

/* Once the options are read (they cannot change after start-up). */
unsigned int extent_debug_flags_slow(void)
{
	bool higher_order_off;
	slub_ensure_init();
	unsigned int f = slub_debug_flags(large_name, &higher_order_off) & EXTENT_FLAGS;
	__atomic_store_n(&extent_debug_flags_value, f, __ATOMIC_RELAXED);
	return f;
}

#define PTR(p) ((unsigned long)(uintptr_t)(p))

static uint8_t *data_of(struct extent_hdr *h)
{
	return (uint8_t *)(h + 1);
}

static uint8_t *start_of(struct extent_hdr *h)
{
	return data_of(h) - h->offset;
}

/*
 * The header of the debug extent the caller's pointer @p names, or NULL;
 * *@corrupt: the extent is there but its header was overwritten.
 */
static struct extent_hdr *extent_hdr_of(const void *p, bool *corrupt)
{
	uintptr_t a = (uintptr_t)p, in_page = a & (PAGE_SIZE - 1);
	*corrupt = false;
	if ((a & 15) || (in_page && in_page < EXTENT_HDR))
		return NULL;
	uintptr_t start = in_page ? a - in_page : a - PAGE_SIZE;
	size_t bytes = extent_bytes((void *)start);
	if (!bytes)
		return NULL;
	struct extent_hdr *h = (struct extent_hdr *)(a - EXTENT_HDR);
	if (h->magic == EXTENT_MAGIC && h->offset == a - start && h->bytes == bytes &&
	    h->size <= bytes - h->offset)
		return h;
	/* Only the default offset is sure to be a block's pointer, not an interior one. */
	if (a - start != EXTENT_HDR)
		return NULL;
	*corrupt = true;
	return h;
}

/* ---- reports ------------------------------------------------------------------ */

static void print_trailer(struct extent_hdr *h)
{
	unsigned long now = os_now_ms();
	if (extent_debug_flags() & SLAB_STORE_USER) {
		track_print("Allocated", &h->track[TRACK_ALLOC], now);
		track_print("Freed", &h->track[TRACK_FREE], now);
	}
	slub_report_line("INFO: Extent 0x%016lx pages=%lu size=%lu object=0x%016lx @offset=%lu\n",
			 PTR(start_of(h)), (unsigned long)(h->bytes >> PAGE_SHIFT),
			 (unsigned long)h->size, PTR(data_of(h)), (unsigned long)h->offset);
}

/* A hex dump of at most @max bytes of [from, from + len) around @at. */
static void dump_around(const char *prefix, uint8_t *from, size_t len, uint8_t *at, size_t max)
{
	uint8_t *lo = from;
	if (len > max) {
		uintptr_t want = ALIGN_DOWN((uintptr_t)at, 16) - max / 4;
		if (want > (uintptr_t)from)
			lo = (uint8_t *)want;
		if (lo + max > from + len)
			lo = from + len - max;
		len = max;
	}
	print_section(prefix, lo, len);
}

/*
 * [start, start + len) must hold @value: on damage a report from the first
 * to the last bad byte, the dump of the data next to it, and the range
 * restored (two errors, as the kernel's KUnit counter).
 */
static bool check_range(struct extent_hdr *h, const char *what, uint8_t *start, size_t len,
			uint8_t value)
{
	uint8_t *fault = memchr_inv(start, value, len);
	if (!fault)
		return true;
	uint8_t *end = start + len, *data = data_of(h);
	while (end > fault && end[-1] == value)
		end--;
	slub_report_begin();
	debug_bug(large_name, "%s overwritten", what);
	slub_report_line("INFO: 0x%016lx-0x%016lx @offset=%td. First byte 0x%x instead of 0x%x",
			 PTR(fault), PTR(end - 1), fault - data, fault[0], value);
	print_trailer(h);
	if (start == h->left_red) {
		print_section("Redzone  ", h->left_red, sizeof(h->left_red));
		print_section("Object   ", data, h->size < 32 ? h->size : 32);
	} else if (start == data + h->size) {
		size_t tail = h->size < 32 ? h->size : 32;
		print_section("Object   ", data + h->size - tail, tail);
		dump_around("Redzone  ", start, len, fault, 64);
	} else {
		dump_around("Object   ", start, len, fault, 64);
	}
	debug_dump_stack();
	debug_fix(large_name, "Restoring %s 0x%016lx-0x%016lx=0x%x", what, PTR(fault), PTR(end - 1),
		  value);
	memset(fault, value, (size_t)(end - fault));
	slub_report_end();
	return false;
}

static void check_red_zones(struct extent_hdr *h)
{
	if (!(extent_debug_flags() & SLAB_RED_ZONE))
		return;
	check_range(h, "Left Redzone", h->left_red, sizeof(h->left_red), SLUB_RED_ACTIVE);
	uint8_t *end = data_of(h) + h->size;
	check_range(h, "Right Redzone", end, (size_t)(start_of(h) + h->bytes - end), SLUB_RED_ACTIVE);
}

static void report_header(struct extent_hdr *h, const void *p, const char *caller)
{
	slub_report_begin();
	debug_bug(large_name, "Extent header overwritten");
	slub_report_line("INFO: %s(0x%016lx): the header before the block was written over "
			 "(an underflow of more than %zu bytes)", caller, PTR(p),
			 sizeof(h->left_red));
	print_section("Header   ", h, sizeof(*h));
	debug_dump_stack();
	debug_fix(large_name, "Block freed unchecked (its size is lost)");
	slub_report_end();
}

/* A free or realloc of a block already freed (it waits in the quarantine). */
static void report_already_free(struct extent_hdr *h, const void *p, const char *caller)
{
	slub_report_begin();
	debug_bug(large_name, "Object already free");
	slub_report_line("INFO: %s(0x%016lx): double free (the block was freed before); ignored",
			 caller, PTR(p));
	print_trailer(h);
	debug_dump_stack();
	slub_report_end();
}

/* ---- the quarantine --------------------------------------------------------------- */

#define QUARANTINE_SLOTS 64
#define QUARANTINE_BLOCK_MAX (1UL << 20)	/* 64 MiB held at most */

static struct extent_hdr *quarantine[QUARANTINE_SLOTS];
static unsigned int quarantine_next;

static void poison(struct extent_hdr *h)
{
	if (!h->size)
		return;
	memset(data_of(h), POISON_FREE, h->size - 1);
	data_of(h)[h->size - 1] = POISON_END;
}

static void release(struct extent_hdr *h)
{
	void *p = data_of(h);
	extent_free_pages(start_of(h));
	extent_note_free(p);	/* a later free of it: a double free, by name */
}

/* Leaving the quarantine: the poison checked (a write after free), then freed. */
static void unquarantine(struct extent_hdr *h)
{
	if (h->size > 1)
		check_range(h, "Poison", data_of(h), h->size - 1, POISON_FREE);
	if (h->size)
		check_range(h, "End Poison", data_of(h) + h->size - 1, 1, POISON_END);
	release(h);
}

static void quarantine_put(struct extent_hdr *h)
{
	unsigned int i = __atomic_fetch_add(&quarantine_next, 1, __ATOMIC_RELAXED) % QUARANTINE_SLOTS;
	struct extent_hdr *old = __atomic_exchange_n(&quarantine[i], h, __ATOMIC_ACQ_REL);
	if (old)
		unquarantine(old);
}

/* ---- the entry points ------------------------------------------------------------- */

void *debug_extent_alloc(size_t size, size_t align, gfp_t gfp)
{
	size_t offset = align > EXTENT_HDR ? align : EXTENT_HDR;
	if (size > PTRDIFF_MAX - 2 * PAGE_SIZE) {
		errno = ENOMEM;
		return NULL;
	}
	struct track_stack ts = { 0, 0 };
	unsigned int flags = extent_debug_flags();
	if (flags & SLAB_STORE_USER)
		track_save_stack(&ts, 0);	/* before any allocator lock */
	size_t total = offset + size + EXTENT_RED_MIN;
	uint8_t *start = extent_alloc_pages(total, 0, gfp);
	if (!start)
		return NULL;
	struct extent_hdr *h = (struct extent_hdr *)(start + offset - EXTENT_HDR);
	h->magic = EXTENT_MAGIC;
	h->size = size;
	h->offset = offset;
	h->bytes = ALIGN_UP(total, PAGE_SIZE);
	memset(h->track, 0, sizeof(h->track));
	if (flags & SLAB_STORE_USER)
		track_fill(&h->track[TRACK_ALLOC], &ts);
	memset(h->left_red, SLUB_RED_ACTIVE, sizeof(h->left_red));
	memset(data_of(h) + size, SLUB_RED_ACTIVE, h->bytes - offset - size);
	__atomic_store_n(&h->state, EXTENT_LIVE, __ATOMIC_RELEASE);
	return data_of(h);
}

/*
 * A pointer 8 bytes into a live debug extent: C++'s delete of an array from
 * new[] (its count sits in front).  Named here, as the slab layer names it
 * for objects (slab_report.c): the generic report counts from the pages'
 * start, which the header hides.
 */
static bool report_array_delete(void *p, const char *caller)
{
	bool corrupt;
	struct extent_hdr *h = extent_hdr_of((uint8_t *)p - sizeof(size_t), &corrupt);
	if (!h || corrupt || __atomic_load_n(&h->state, __ATOMIC_ACQUIRE) != EXTENT_LIVE)
		return false;
	slub_report_call("%s: invalid pointer %p (8 bytes into the block at %p of %s: C++ delete of an "
		    "array from new[]?); ignored", caller, p, (void *)data_of(h), large_name);
	return true;
}

bool debug_extent_free(void *p, const char *caller)
{
	bool corrupt;
	struct extent_hdr *h = extent_hdr_of(p, &corrupt);
	if (!h)
		return report_array_delete(p, caller);
	if (corrupt) {
		report_header(h, p, caller);
		extent_free_pages((uint8_t *)p - EXTENT_HDR);
		extent_note_free(p);
		return true;
	}
	uint32_t live = EXTENT_LIVE;
	if (!__atomic_compare_exchange_n(&h->state, &live, EXTENT_FREED, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		report_already_free(h, p, caller);
		return true;
	}
	unsigned int flags = extent_debug_flags();
	if (flags & SLAB_STORE_USER) {
		struct track_stack ts;
		track_save_stack(&ts, 0);
		track_fill(&h->track[TRACK_FREE], &ts);
	}
	check_red_zones(h);
	if ((flags & SLAB_POISON) && h->bytes <= QUARANTINE_BLOCK_MAX) {
		poison(h);
		quarantine_put(h);
	} else {
		release(h);
	}
	return true;
}

size_t debug_extent_size(const void *p)
{
	bool corrupt;
	struct extent_hdr *h = extent_hdr_of(p, &corrupt);
	if (!h || corrupt || __atomic_load_n(&h->state, __ATOMIC_ACQUIRE) != EXTENT_LIVE)
		return 0;
	return h->size ? h->size : 1;	/* malloc_usable_size(malloc(0)) is not 0 here */
}

bool debug_extent_realloc(void *p, size_t size, void **moved)
{
	bool corrupt;
	struct extent_hdr *h = extent_hdr_of(p, &corrupt);
	if (!h)
		return false;
	*moved = NULL;
	if (corrupt) {
		report_header(h, p, "realloc");
		errno = EINVAL;
		return true;	/* the block stays: its size is not known */
	}
	if (__atomic_load_n(&h->state, __ATOMIC_ACQUIRE) != EXTENT_LIVE) {
		report_already_free(h, p, "realloc");
		errno = EINVAL;
		return true;
	}
	void *q = malloc(size);
	if (!q)
		return true;	/* the old block stays the caller's */
	memcpy(q, p, size < h->size ? size : h->size);
	free(p);		/* checks its red zones */
	*moved = q;
	return true;
}

/* ---- slub_leak_check ------------------------------------------------------------- */

/* The header of a debug extent that starts at @start, at any offset it may have. */
static struct extent_hdr *hdr_at_start(uint8_t *start, size_t bytes)
{
	for (size_t off = EXTENT_HDR; off <= PAGE_SIZE && off < bytes; off <<= 1) {
		struct extent_hdr *h = (struct extent_hdr *)(start + off - EXTENT_HDR);
		if (h->magic == EXTENT_MAGIC && h->offset == off && h->bytes == bytes)
			return h;
	}
	return NULL;
}

static void collect_extent(struct page *head, void *arg)
{
	if (!(page_flags(head) & PG_extent))
		return;
	uint8_t *start = memmap_page_address(head);
	size_t bytes = head->nr_extent_pages << PAGE_SHIFT;
	struct extent_hdr *h = hdr_at_start(start, bytes);
	static const struct track untracked;
	if (!h)
		leak_table_add(arg, start, bytes, &untracked);	/* a plain extent (aligned beyond a page) */
	else if (__atomic_load_n(&h->state, __ATOMIC_ACQUIRE) == EXTENT_LIVE)
		leak_table_add(arg, h + 1, h->size, &h->track[TRACK_ALLOC]);
}

void slub_leak_collect_extents(struct leak_table *lt)
{
	if (extent_debug_flags()) {
		page_for_each_block(collect_extent, lt);
		page_for_each_large(collect_extent, lt);
	}
}

/* ---- validation at exit (slab_exit.c) ---------------------------------------------- */

static void validate_extent(struct page *head, void *arg)
{
	(void)arg;
	if (!(page_flags(head) & PG_extent))
		return;
	struct extent_hdr *h = hdr_at_start(memmap_page_address(head),
					    head->nr_extent_pages << PAGE_SHIFT);
	if (h && __atomic_load_n(&h->state, __ATOMIC_ACQUIRE) == EXTENT_LIVE)
		check_red_zones(h);
}

/*
 * The red zones of every live block, and the poison of every block in the
 * quarantine: each taken out of it first (an exchange, as quarantine_put()
 * does), so no other thread releases it meanwhile, then checked and freed.
 */
void slub_exit_validate_extents(void)
{
	if (!extent_debug_flags())
		return;
	for (unsigned int i = 0; i < QUARANTINE_SLOTS; i++) {
		struct extent_hdr *h = __atomic_exchange_n(&quarantine[i], NULL, __ATOMIC_ACQ_REL);
		if (h)
			unquarantine(h);
	}
	page_for_each_block(validate_extent, NULL);
}
