// SPDX-License-Identifier: MIT
/*
 * slab_check.c - slub_debug's checks of objects and slabs, and its reports
 * in the kernel's format: a BUG banner, INFO lines, the object's tracks, a
 * hex dump of red zones, object and padding, then a FIX line saying what
 * was repaired.  Each banner and each FIX counts one error (slub_errors()),
 * as the kernel's KUnit counter counts them.  Callers hold the node's
 * list_lock (or own the slab alone); nothing here allocates.
 */
#define _GNU_SOURCE
#include "slab/debug/slab_debug.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/report.h"
#include "stack/stacktrace.h"

__thread unsigned long slab_debug_errors __attribute__((tls_model("initial-exec")));

/* The kernel says "Not tainted" until its first bad-page report, then B. */
static bool tainted;

__thread bool debug_stack_off __attribute__((tls_model("initial-exec")));

/*
 * Caches that had an error, for the ERROR SUMMARY (slab_exit.c): names
 * copied (a cache may be destroyed since), filled under the report lock.
 */
#define ERROR_CACHES_MAX 64
static struct {
	char name[32];
	unsigned long errors;
} error_caches[ERROR_CACHES_MAX];
static unsigned int nr_error_caches;

#define PTR(p) ((unsigned long)(uintptr_t)(p))

void *slab_object_at(const struct kmem_cache *s, const struct slab *slab, unsigned int i)
{
	return (char *)slab_address(slab) + (size_t)i * s->size + s->red_left_pad;
}

unsigned int slab_objects_max(const struct kmem_cache *s, const struct slab *slab)
{
	unsigned long max = (PAGE_SIZE << slab->order) / s->size;
	return max > MAX_OBJS_PER_PAGE ? MAX_OBJS_PER_PAGE : (unsigned int)max;
}

/* Under the list lock: no CAS, but readers outside it see whole words. */
static void set_counters(struct slab *slab, union slab_counters c)
{
	__atomic_store_n(&slab->counters, c.counters, __ATOMIC_RELAXED);
}

/* ---- reports ------------------------------------------------------------------ */

static void count_error(void)
{
	slab_debug_errors++;
}

void debug_note_error(const char *name)
{
	slub_report_begin();
	unsigned int i = 0;
	while (i < nr_error_caches && strncmp(error_caches[i].name, name, sizeof(error_caches[i].name) - 1))
		i++;
	if (i == nr_error_caches && i < ERROR_CACHES_MAX)
		snprintf(error_caches[nr_error_caches++].name, sizeof(error_caches[i].name), "%s", name);
	if (i < nr_error_caches)
		error_caches[i].errors++;
	slub_report_end();
}

unsigned int debug_error_caches(unsigned long *in_caches)
{
	unsigned long sum = 0;
	slub_report_begin();	/* the table's lock: another thread may still report */
	unsigned int nr = nr_error_caches;
	for (unsigned int i = 0; i < nr; i++)
		sum += error_caches[i].errors;
	slub_report_end();
	*in_caches = sum;
	return nr;
}

void debug_dump_stack(void)
{
	if (!debug_stack_off)
		stack_trace_dump_report(READ_ONCE(tainted) ? "Tainted: B" : "Not tainted");
}

static void vdebug_bug(const char *name, const char *fmt, va_list ap)
{
	char what[SLUB_REPORT_LINE / 2];
	vsnprintf(what, sizeof(what), fmt, ap);
	slub_report_line("=============================================================================");
	slub_report_bug("BUG %s (%s): %s", name ? name : "<unknown>",
			READ_ONCE(tainted) ? "Tainted: B" : "Not tainted", what);
	slub_report_line("-----------------------------------------------------------------------------\n");
	count_error();
	if (name)
		debug_note_error(name);
	WRITE_ONCE(tainted, true);
}

static void slab_bug(struct kmem_cache *s, const char *fmt, va_list ap)
{
	vdebug_bug(s ? s->name : NULL, fmt, ap);
}

void debug_bug(const char *name, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vdebug_bug(name, fmt, ap);
	va_end(ap);
}

static void slab_bugf(struct kmem_cache *s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	slab_bug(s, fmt, ap);
	va_end(ap);
}

static void vdebug_fix(const char *name, const char *fmt, va_list ap)
{
	char what[SLUB_REPORT_LINE / 2];
	vsnprintf(what, sizeof(what), fmt, ap);
	slub_report_error("FIX %s: %s", name, what);
	count_error();
}

void slab_fix(struct kmem_cache *s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vdebug_fix(s->name, fmt, ap);
	va_end(ap);
}

void debug_fix(const char *name, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vdebug_fix(name, fmt, ap);
	va_end(ap);
}

/* The kernel's print_hex_dump(DUMP_PREFIX_ADDRESS, 16 bytes a row, ASCII column). */
void print_section(const char *prefix, const void *addr, size_t length)
{
	const unsigned char *p = addr;
	for (size_t row = 0; row < length; row += 16) {
		char hex[16 * 3 + 1], ascii[17];
		size_t n = length - row < 16 ? length - row : 16;
		int h = 0;
		for (size_t i = 0; i < n; i++) {
			unsigned char b = p[row + i];
			h += snprintf(hex + h, sizeof(hex) - (size_t)h, i ? " %02x" : "%02x", b);
			ascii[i] = isascii(b) && isprint(b) ? (char)b : '.';
		}
		ascii[n] = 0;
		slub_report_line("%s%016lx: %-47s  %s", prefix, PTR(p + row), hex, ascii);
	}
}

/* Names of the page flags a slab can have, as %pGp lists them. */
static void slab_flag_names(uint32_t flags, char *buf, size_t len)
{
	static const struct { uint32_t bit; const char *name; } names[] = {
		{ PG_head, "head" }, { PG_slab, "slab" }, { PG_slab_partial, "partial" },
		{ PG_fresh, "fresh" }, { PG_large, "large" },
	};
	size_t used = 0;
	buf[0] = 0;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if ((flags & names[i].bit) && used < len)
			used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? "|" : "",
						 names[i].name);
}

static void print_slab_info(const struct slab *slab)
{
	char names[64];
	union slab_counters c = read_counters(slab);
	uint32_t flags = slab_flags(slab);
	slab_flag_names(flags, names, sizeof(names));
	slub_report_line("INFO: Slab 0x%016lx objects=%u used=%u fp=0x%016lx flags=0x%x(%s)",
			 PTR(slab_address(slab)), c.objects, c.inuse,
			 PTR(__atomic_load_n(&slab->freelist, __ATOMIC_RELAXED)), flags, names);
}

/* Where the padding after the metadata starts. */
static unsigned int pad_start(const struct kmem_cache *s)
{
	unsigned int off = get_info_end(s);
	if (s->flags & SLAB_STORE_USER) {
		off += 2 * (unsigned int)sizeof(struct track);
		if (s->flags & SLAB_KMALLOC)
			off += (unsigned int)sizeof(unsigned int);
	}
	return off;
}

static void print_trailer(struct kmem_cache *s, struct slab *slab, void *object)
{
	char *p = object, *base = slab_address(slab);
	print_tracking(s, object);
	print_slab_info(slab);
	slub_report_line("INFO: Object 0x%016lx @offset=%tu fp=0x%016lx\n", PTR(p), p - base,
			 PTR(get_freepointer(s, p)));
	if (s->flags & SLAB_RED_ZONE)
		print_section("Redzone  ", p - s->red_left_pad, s->red_left_pad);
	else if (p > base + 16)
		print_section("Bytes b4 ", p - 16, 16);
	print_section("Object   ", p, s->object_size < PAGE_SIZE ? s->object_size : PAGE_SIZE);
	if (s->flags & SLAB_RED_ZONE)
		print_section("Redzone  ", p + s->object_size, s->inuse - s->object_size);
	unsigned int off = pad_start(s);
	if (off != size_from_object(s))
		print_section("Padding  ", p + off, size_from_object(s) - off);
	debug_dump_stack();
}

void object_err(struct kmem_cache *s, struct slab *slab, void *object, const char *reason)
{
	slub_report_begin();
	slab_bugf(s, "%s", reason);
	print_trailer(s, slab, object);
	slub_report_end();
}

void slab_err(struct kmem_cache *s, struct slab *slab, const char *fmt, ...)
{
	va_list ap;
	slub_report_begin();
	va_start(ap, fmt);
	slab_bug(s, fmt, ap);
	va_end(ap);
	print_slab_info(slab);
	debug_dump_stack();
	slub_report_end();
}

static void restore_bytes(struct kmem_cache *s, const char *what, uint8_t value, uint8_t *from,
			  uint8_t *to)
{
	slab_fix(s, "Restoring %s 0x%016lx-0x%016lx=0x%x", what, PTR(from), PTR(to - 1), value);
	memset(from, value, (size_t)(to - from));
}

uint8_t *memchr_inv(uint8_t *start, uint8_t value, size_t bytes)
{
	/* A word at a time: poison checks scan every object on every alloc and free. */
	const uint64_t pattern = value * 0x0101010101010101ULL;
	size_t i = 0;
	for (; i + 8 <= bytes; i += 8) {
		uint64_t word;
		memcpy(&word, start + i, 8);
		if (word != pattern)
			break;
	}
	for (; i < bytes; i++)
		if (start[i] != value)
			return start + i;
	return NULL;
}

/*
 * One range of an object that must hold @value: on damage, a report of the
 * range from the first to the last bad byte with the object's trailer
 * (showing the damage), then the range restored.
 */
static bool check_bytes_and_report(struct kmem_cache *s, struct slab *slab, void *object,
				   const char *what, uint8_t *start, uint8_t value, size_t bytes)
{
	uint8_t *fault = memchr_inv(start, value, bytes);
	if (!fault)
		return true;
	uint8_t *end = start + bytes;
	while (end > fault && end[-1] == value)
		end--;
	slub_report_begin();
	slab_bugf(s, "%s overwritten", what);
	slub_report_line("INFO: 0x%016lx-0x%016lx @offset=%tu. First byte 0x%x instead of 0x%x",
			 PTR(fault), PTR(end - 1), fault - (uint8_t *)slab_address(slab), fault[0],
			 value);
	print_trailer(s, slab, object);
	restore_bytes(s, what, value, fault, end);
	slub_report_end();
	return false;
}

/* ---- object state ---------------------------------------------------------------- */

void init_object(const struct kmem_cache *s, void *object, uint8_t val)
{
	uint8_t *p = object;
	unsigned int poison_size = s->object_size;
	if (s->flags & SLAB_RED_ZONE) {
		memset(p - s->red_left_pad, val, s->red_left_pad);
		/* An allocated kmalloc object: the bytes past the request are red zone. */
		if (slub_debug_orig_size(s) && val == SLUB_RED_ACTIVE)
			poison_size = get_orig_size(s, object);
	}
	if ((s->flags & __OBJECT_POISON) && poison_size) {
		memset(p, POISON_FREE, poison_size - 1);
		p[poison_size - 1] = POISON_END;
	}
	if (s->flags & SLAB_RED_ZONE)
		memset(p + poison_size, val, s->inuse - poison_size);
}

void setup_slab_debug(struct kmem_cache *s, struct slab *slab, unsigned int objects)
{
	if (s->flags & SLAB_POISON)
		memset(slab_address(slab), POISON_INUSE, PAGE_SIZE << slab->order);
	if (!(s->flags & (SLAB_STORE_USER | SLAB_RED_ZONE | __OBJECT_POISON)))
		return;
	for (unsigned int i = 0; i < objects; i++) {
		void *object = slab_object_at(s, slab, i);
		init_object(s, object, SLUB_RED_INACTIVE);
		init_tracking(s, object);
	}
}

bool check_valid_pointer(const struct kmem_cache *s, const struct slab *slab, const void *p)
{
	return !p || valid_pointer_in(s, (uintptr_t)slab_address(slab), read_counters(slab).objects,
				      p);
}

static bool check_pad_bytes(struct kmem_cache *s, struct slab *slab, uint8_t *p)
{
	unsigned int off = pad_start(s), end = size_from_object(s);
	if (off == end)
		return true;
	return check_bytes_and_report(s, slab, p, "Object padding", p + off, POISON_INUSE,
				      end - off);
}

/*
 * Every check of one object, each range restored when damaged (as the
 * kernel since 6.11: all of them, not the first only).  @val: 0xcc for an
 * object in use, 0xbb for a free one.  A bad free pointer is cut: the rest
 * of that freelist is lost, and the counts are mended later (on_freelist).
 */
bool check_object(struct kmem_cache *s, struct slab *slab, void *object, uint8_t val)
{
	uint8_t *p = object, *endobject = p + s->object_size;
	bool ok = true;

	if (s->flags & SLAB_RED_ZONE) {
		ok &= check_bytes_and_report(s, slab, object, "Left Redzone", p - s->red_left_pad,
					     val, s->red_left_pad);
		ok &= check_bytes_and_report(s, slab, object, "Right Redzone", endobject, val,
					     s->inuse - s->object_size);
		if (slub_debug_orig_size(s) && val == SLUB_RED_ACTIVE) {
			unsigned int orig = get_orig_size(s, object);
			if (orig < s->object_size)
				ok &= check_bytes_and_report(s, slab, object, "kmalloc Redzone",
							     p + orig, val, s->object_size - orig);
		}
	} else if ((s->flags & SLAB_POISON) && s->object_size < s->inuse) {
		ok &= check_bytes_and_report(s, slab, p, "Alignment padding", endobject,
					     POISON_INUSE, s->inuse - s->object_size);
	}
	if (s->flags & SLAB_POISON) {
		if (val != SLUB_RED_ACTIVE && (s->flags & __OBJECT_POISON)) {
			ok &= check_bytes_and_report(s, slab, p, "Poison", p, POISON_FREE,
						     s->object_size - 1);
			ok &= check_bytes_and_report(s, slab, p, "End Poison", endobject - 1,
						     POISON_END, 1);
		}
		ok &= check_pad_bytes(s, slab, p);
	}
	/*
	 * In use, a free pointer inside the object is the user's data; one
	 * outside it holds the allocated mark (0), or a pointer of the slab
	 * (objects a cut freelist lost, counted in use since).
	 */
	bool fp_bad = (freeptr_outside_object(s) || val != SLUB_RED_ACTIVE) &&
		      !(val == SLUB_RED_ACTIVE && !*(uintptr_t *)(p + s->offset)) &&
		      !check_valid_pointer(s, slab, get_freepointer(s, p));
	if (fp_bad) {
		object_err(s, slab, p, "Freepointer corrupt");
		if (val == SLUB_RED_ACTIVE)
			object_mark_allocated(s, p);
		else
			set_freepointer(s, p, NULL);
		ok = false;
	}
	return ok;
}

/* The end of the slab after its last object: 0x5a under P. */
void slab_pad_check(struct kmem_cache *s, struct slab *slab)
{
	if (!(s->flags & SLAB_POISON))
		return;
	size_t length = PAGE_SIZE << slab->order;
	size_t remainder = length % s->size;
	if (!remainder)
		return;
	uint8_t *start = slab_address(slab), *pad = start + length - remainder;
	uint8_t *fault = memchr_inv(pad, POISON_INUSE, remainder);
	if (!fault)
		return;
	uint8_t *end = start + length;
	while (end > fault && end[-1] == POISON_INUSE)
		end--;
	slub_report_begin();
	slab_err(s, slab, "Padding overwritten. 0x%016lx-0x%016lx @offset=%tu", PTR(fault),
		 PTR(end - 1), fault - start);
	print_section("Padding ", pad, remainder);
	restore_bytes(s, "slab padding", POISON_INUSE, fault, end);
	slub_report_end();
}

bool check_slab(struct kmem_cache *s, struct slab *slab)
{
	union slab_counters c = read_counters(slab);
	unsigned int max = slab_objects_max(s, slab);
	if (!(slab_flags(slab) & PG_slab) || slab->slab_cache != s) {
		slab_err(s, slab, "Not a valid slab page");
		return false;
	}
	if (c.objects > max) {
		slab_err(s, slab, "objects %u > max %u", c.objects, max);
		return false;
	}
	if (c.inuse > c.objects) {
		slab_err(s, slab, "inuse %u > max %u", c.inuse, c.objects);
		return false;
	}
	slab_pad_check(s, slab);
	return true;
}

/*
 * A bad head or a loop: the slab's free objects are given up, and the slab
 * is disabled as after a failed allocation check (slub_debug.c): its lost
 * objects now count as in use, so checks would take them for live ones.
 */
static void freelist_clear(struct kmem_cache *s, struct slab *slab, union slab_counters c)
{
	WRITE_ONCE(slab->freelist, NULL);
	c.inuse = c.objects;
	set_counters(slab, c);
	__atomic_or_fetch(&slab->flags, PG_slab_disabled, __ATOMIC_RELAXED);
	slab_fix(s, "Freelist cleared");
}

void slab_free_map(const struct kmem_cache *s, const struct slab *slab, unsigned long *map)
{
	union slab_counters c = read_counters(slab);
	memset(map, 0, (c.objects + 63) / 64 * sizeof(unsigned long));
	for (void *p = slab->freelist; p && check_valid_pointer(s, slab, p);
	     p = get_freepointer(s, p)) {
		unsigned int i = (unsigned int)(((char *)p - s->red_left_pad -
						  (char *)slab_address(slab)) / s->size);
		if (map[i / 64] & (1UL << (i % 64)))
			break;		/* a loop: validation reports it */
		map[i / 64] |= 1UL << (i % 64);
	}
	for (unsigned int i = c.built; i < c.objects; i++)	/* never linked: free */
		map[i / 64] |= 1UL << (i % 64);
}

/*
 * Is @search on the slab's freelist?  The walk also mends what it finds:
 * a bad link is cut (the objects after it are lost to the cache), a loop
 * or a bad head empties the freelist, and wrong counts are set right.
 */
bool on_freelist(struct kmem_cache *s, struct slab *slab, const void *search)
{
	union slab_counters c = read_counters(slab);
	void *fp = slab->freelist, *object = NULL;
	unsigned int nr = 0, max = slab_objects_max(s, slab);
	/* Every free walks the whole list: its bounds once, not per link. */
	uintptr_t base = (uintptr_t)slab_address(slab);

	while (fp && nr <= c.objects) {
		if (fp == search)
			return true;
		if (!valid_pointer_in(s, base, c.objects, fp)) {
			if (object) {
				object_err(s, slab, object, "Freechain corrupt");
				set_freepointer(s, object, NULL);
			} else {
				slab_err(s, slab, "Freepointer corrupt");
				freelist_clear(s, slab, c);
				return false;
			}
			break;
		}
		object = fp;
		fp = get_freepointer(s, object);
		nr++;
	}
	if (nr > c.objects) {
		slab_err(s, slab, "Freelist cycle detected");
		freelist_clear(s, slab, c);
		return false;
	}
	if (c.objects != max) {
		slab_err(s, slab, "Wrong number of objects. Found %u but should be %u", c.objects,
			 max);
		c.objects = max;
		c.built = max;
		set_counters(slab, c);
		slab_fix(s, "Number of objects adjusted");
	}
	if (c.inuse != c.objects - nr) {
		slab_err(s, slab, "Wrong object count. Counter is %u but counted were %u", c.inuse,
			 c.objects - nr);
		c.inuse = c.objects - nr;
		set_counters(slab, c);
		slab_fix(s, "Object count adjusted");
	}
	return search == NULL;
}
