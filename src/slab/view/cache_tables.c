// SPDX-License-Identifier: MIT
/*
 * cache_tables.c - the caches as tables, read through the attribute table
 * (slub_attr_read) and formatted by the slabinfo core (slabinfo.c):
 *
 *  - slub_print_slabinfo(): the kernel's slabinfo table of every cache;
 *  - the exit table, written when slub_exit_stats= names a file (slubrun
 *    --stats sets it) and by malloc_stats(): "where did my memory go",
 *    caches sorted by the most memory they held, that peak beside what is
 *    left at exit, a process line (peak RSS, allocations if counted) and a
 *    legend.  It is formatted into one buffer and written with one
 *    write(2), appending, so that the processes of one program (a shell's
 *    children, gcc's passes) each add a whole table to the same file, and
 *    it uses no stdio and no heap (its buffer is mapped): it runs at exit
 *    and inside malloc_stats().
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/options.h"
#include "base/os.h"
#include "page/page_alloc.h"
#include "base/report.h"
#include "slab/core/slab.h"
#include "slab/core/slab_common.h"
#include "slab/view/slabinfo.h"

/*
 * The slabinfo core's reader in the process: @ctx is the cache when the
 * caller holds it (inside a walk), else the cache is looked up by its
 * directory name (a name or an id), as a path in the tree would be.
 */
static ssize_t attr_reader(void *ctx, const char *cache, const char *attr, char *buf,
			   size_t len)
{
	struct kmem_cache *s = ctx ? ctx : slub_find_cache(cache);
	return s ? slub_attr_read(s, attr, buf, len) : -ENOENT;
}

static int attr_writer(void *ctx, const char *cache, const char *attr, const char *val)
{
	struct kmem_cache *s = ctx ? ctx : slub_find_cache(cache);
	ssize_t n = s ? slub_attr_write(s, attr, val, strlen(val)) : -ENOENT;
	return n < 0 ? (int)n : 0;
}

/* ---- slub_print_slabinfo ---------------------------------------------------- */

static void file_write(void *arg, const char *s, size_t n)
{
	fwrite(s, 1, n, arg);
}

static int count_cache(struct kmem_cache *s, void *arg)
{
	size_t *n = arg;
	n[0]++;
	n[1] += slub_cache_id(s)[0] == ':';
	for (unsigned int i = 0; slub_cache_alias(s, i); i++)
		n[1]++;
	return 0;
}

static void add_alias(struct slabinfo_set *set, const char *name, const char *ref)
{
	if (set->nr_aliases == set->cap_aliases)
		return;
	struct slabinfo_alias *a = &set->aliases[set->nr_aliases++];
	snprintf(a->name, sizeof(a->name), "%s", name);
	snprintf(a->ref, sizeof(a->ref), "%s", ref);
}

/*
 * A merged cache is its id's directory, with a link for each name, the
 * first creator's included, as in the kernel's tree.
 */
static int load_cache(struct kmem_cache *s, void *arg)
{
	struct slabinfo_set *set = arg;
	const char *id = slub_cache_id(s);
	if (set->nr == set->cap || !slabinfo_load(set, &set->caches[set->nr], id, s))
		return 0;
	set->nr++;
	if (id[0] == ':')
		add_alias(set, slub_cache_name(s), id);
	const char *name;
	for (unsigned int i = 0; (name = slub_cache_alias(s, i)); i++)
		add_alias(set, name, id);
	return 0;
}

void slub_print_slabinfo(FILE *out)
{
	/* Counted first: nothing may be allocated inside the walk (a cache may be made). */
	size_t n[2] = { 0, 0 };
	slub_for_each_cache(count_cache, n);
	struct slabinfo_set set = {
		.cap = n[0] + 16, .cap_aliases = n[1] + 16, .page_size = PAGE_SIZE,
		.read = attr_reader, .write = attr_writer, .out = { file_write, out },
	};
	set.caches = calloc(set.cap, sizeof(*set.caches));
	set.aliases = calloc(set.cap_aliases, sizeof(*set.aliases));
	if (!set.caches || !set.aliases) {
		fprintf(out, "slub_print_slabinfo: no memory for %zu caches\n", set.cap);
		goto out;
	}
	slub_for_each_cache(load_cache, &set);
	struct slabinfo_opts opts = { .show_slab = true, .lines = -1 };
	slabinfo_link(&set, &opts);
	slabinfo_sort(&set, &opts);
	slabinfo_output(&set, &opts);
out:
	free(set.caches);
	free(set.aliases);
}

/* ---- the exit table --------------------------------------------------------- */

/* Mapped, not on the stack: with slub_exit_counters a table takes tens of KiB. */
struct table {
	char buf[(256 << 10) - sizeof(size_t)];
	size_t len;
};

static void table_write(void *arg, const char *s, size_t n)
{
	struct table *t = arg;
	size_t room = sizeof(t->buf) - 1 - t->len;
	n = n < room ? n : room;
	memcpy(t->buf + t->len, s, n);
	t->len += n;
}

/* One cache's row: the figures of the table, kept small (the rows are sorted). */
struct row {
	char name[SLABINFO_NAME_MAX];
	unsigned int object_size;
	unsigned long peak, bytes, objects, slabs, partial, allocs, frees;
	bool counted;
	unsigned long stat[NR_SLUB_STAT_ITEMS];	/* for slub_exit_counters */
};

struct rows {
	struct row *row;
	size_t nr, cap;
	bool internal;	/* the allocator's own caches too */
};

/* The allocator's own: the boot cache that holds the caches' descriptors, and the sheaves' caches. */
static bool internal_cache(const struct kmem_cache *s)
{
	return s->refcount < 0;
}

static void count_row(struct kmem_cache *s, void *arg)
{
	(void)s;
	(*(size_t *)arg)++;
}

static void cache_row(struct kmem_cache *s, void *arg)
{
	struct rows *rows = arg;
	struct slab_info info;
	struct slabinfo_cache c;
	struct slabinfo_set one = { .page_size = PAGE_SIZE, .read = attr_reader };
	if (rows->nr == rows->cap || (!rows->internal && internal_cache(s)))
		return;
	/* Exact counts: objects free on a CPU's lockless list go back to their slabs. */
	kmem_cache_flush_all(s);
	slab_get_info(s, &info);	/* the peak: the one figure no attribute has */
	if (!info.peak_bytes || !slabinfo_load(&one, &c, s->name, s))
		return;			/* never used */
	struct row *r = &rows->row[rows->nr++];
	snprintf(r->name, sizeof(r->name), "%s", s->name);
	r->object_size = c.object_size;
	r->peak = info.peak_bytes;
	r->bytes = slabinfo_bytes(&one, &c);
	r->objects = c.objects;
	r->slabs = c.slabs;
	r->partial = c.partial;
	r->counted = c.has_stats;
	/*
	 * With sheaves (a CPU's or a thread's) every object comes from or goes
	 * to a sheaf; slow paths only count entries, and a flush one per slab.
	 */
	bool sheaves = READ_ONCE(s->sheaf_capacity) || READ_ONCE(s->tsheaf_off);
	r->allocs = c.stat[ALLOC_FASTPATH] + c.stat[ALLOC_PCS] + c.stat[ALLOC_TSHEAF] +
		    (sheaves ? 0 : c.stat[ALLOC_SLOWPATH]);
	r->frees = c.stat[FREE_FASTPATH] + c.stat[FREE_PCS] + c.stat[FREE_TSHEAF] +
		   (sheaves ? 0 : c.stat[FREE_SLOWPATH]);
	memcpy(r->stat, c.stat, sizeof(r->stat));
}

/*
 * slub_exit_counters: each counted cache's nonzero counters by their
 * attribute names, the busiest first.  Runs after the table: it re-sorts
 * the rows.
 */
static void counters_body(struct slabinfo_out *out, struct rows *rows)
{
	static const char *const names[] = {
#define X(item, name) name,
		SLAB_STAT_LIST(X)
#undef X
	};
	bool any = false;
	for (size_t k = 0; k < rows->nr; k++)
		any |= rows->row[k].counted;
	slabinfo_printf(out, "Statistics counters (the kernel's CONFIG_SLUB_STATS names), busiest "
			"cache first:\n");
	if (!any) {
		slabinfo_printf(out, "  none: this libslub was built without them (cmake "
				"-DSLUB_STATS=ON)\n");
		return;
	}
	for (size_t i = 1; i < rows->nr; i++) {	/* insertion, as sort_by_peak */
		struct row r = rows->row[i];
		size_t j = i;
		for (; j && rows->row[j - 1].allocs < r.allocs; j--)
			rows->row[j] = rows->row[j - 1];
		rows->row[j] = r;
	}
	for (size_t k = 0; k < rows->nr && rows->row[k].allocs; k++) {
		const struct row *r = &rows->row[k];
		slabinfo_printf(out, "%-22s", r->name);
		for (unsigned int i = 0; i < NR_SLUB_STAT_ITEMS; i++)
			if (r->stat[i])
				slabinfo_printf(out, " %s=%lu", names[i], r->stat[i]);
		slabinfo_printf(out, "\n");
	}
}

/* Most memory at peak first; insertion, as qsort may allocate and the rows are few. */
static void sort_by_peak(struct rows *rows)
{
	for (size_t i = 1; i < rows->nr; i++) {
		struct row r = rows->row[i];
		size_t j = i;
		for (; j && (rows->row[j - 1].peak < r.peak ||
			     (rows->row[j - 1].peak == r.peak &&
			      strcmp(rows->row[j - 1].name, r.name) > 0)); j--)
			rows->row[j] = rows->row[j - 1];
		rows->row[j] = r;
	}
}

/* A "Name:   1234 kB" line of /proc/self/status, in bytes; 0 if none (no stdio). */
static unsigned long self_status_kb(const char *key)
{
	char buf[4096];
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return 0;
	buf[len] = 0;
	size_t klen = strlen(key);
	for (char *p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, key, klen) && p[klen] == ':')
			return strtoul(p + klen + 1, NULL, 10) * 1024;
	return 0;
}

/* The process's name from /proc. */
static void self_comm(char *buf, size_t n)
{
	snprintf(buf, n, "?");
	int fd = open("/proc/self/comm", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t len = read(fd, buf, n - 1);
	close(fd);
	if (len <= 0)
		return;
	buf[len] = 0;
	buf[strcspn(buf, "\n")] = 0;
}

#define SZ(k, v) slabinfo_size(sz[k], sizeof(sz[k]), (v), false)

static void table_body(struct slabinfo_out *out, struct rows *rows)
{
	char sz[3][24];
	unsigned long peak = 0, bytes = 0, objects = 0, allocs = 0, frees = 0;
	bool counted = false;
	for (size_t k = 0; k < rows->nr; k++) {
		counted |= rows->row[k].counted;
		allocs += rows->row[k].allocs;
		frees += rows->row[k].frees;
	}
	char comm[64];
	self_comm(comm, sizeof(comm));
	slabinfo_printf(out, "libslub: caches of pid %d (%s): peak RSS %s", (int)getpid(), comm,
			SZ(0, self_status_kb("VmHWM")));
	if (counted)
		slabinfo_printf(out, ", %lu allocations and %lu frees from caches", allocs, frees);
	slabinfo_printf(out, "\n%-22s %7s %9s | %9s\n", "", "", "at peak", "at exit");
	slabinfo_printf(out, "%-22s %7s %9s | %9s %9s %7s %6s %4s\n", "Name", "Objsize", "Memory",
			"Memory", "Objects", "Slabs", "Part", "Use%");
	sort_by_peak(rows);
	for (size_t k = 0; k < rows->nr; k++) {
		const struct row *r = &rows->row[k];
		unsigned long used = r->objects * r->object_size;
		slabinfo_printf(out, "%-22s %7u %9s | %9s %9lu %7lu %6lu %3lu%%\n", r->name,
				r->object_size, SZ(0, r->peak), SZ(1, r->bytes), r->objects, r->slabs,
				r->partial, r->bytes ? used * 100 / r->bytes : 0);
		peak += r->peak;
		bytes += r->bytes;
		objects += r->objects;
	}
	/* Kept for reuse: mappings in malloc's cache and buddy extents in its bins. */
	unsigned long kept = binned_kept();
	unsigned long idle = READ_ONCE(page_alloc_stats.idle_extents) + BINNED_COUNT(kept);
	unsigned long idle_bytes = (READ_ONCE(page_alloc_stats.idle_extent_pages) +
				    BINNED_PAGES(kept)) << PAGE_SHIFT;
	unsigned long extents = READ_ONCE(page_alloc_stats.extents) - idle;
	unsigned long extent_bytes = (READ_ONCE(page_alloc_stats.extent_pages) << PAGE_SHIFT) -
				     idle_bytes;
	if (extents)
		slabinfo_printf(out, "%-22s %7s %9s | %9s %9lu\n", "(large blocks)", "-", "-",
				SZ(0, extent_bytes), extents);
	if (idle)
		slabinfo_printf(out, "%-22s %7s %9s | %9s %9lu\n", "(kept for reuse)", "-", "-",
				SZ(0, idle_bytes), idle);
	slabinfo_printf(out, "%-22s %7s %9s | %9s %9lu\n", "sum of the rows", "", SZ(0, peak),
			SZ(1, bytes + extent_bytes + idle_bytes), objects + extents + idle);
	slabinfo_printf(out,
		"Memory: bytes in the cache's slabs; at peak: the most it held at once (caches\n"
		"  peak at different times, so their sum can exceed the process's peak).\n"
		"At exit most objects are freed: Objects still allocated, Slabs held, Part of\n"
		"  them partly used (free slots waiting for reuse), Use%% = Objects' bytes / Memory.\n"
		"Large blocks: allocations above the slab sizes, straight from pages.\n"
		"Sizes: K = 1000 bytes, M = 1000000.%s\n"
		"Per-CPU fast paths: %s.\n",
		rows->internal ? "" : "  The allocator's own caches: slub_exit_stats_internal=1.",
		slub_percpu_rseq ? "rseq" : tsheaf_enabled() ?
		"cmpxchg16b + thread sheaves (no rseq)" : "cmpxchg16b (no rseq: slower)");
}

/* On the stack and freshly mapped: malloc_stats() and the exit table may run at once. */
void slab_write_cache_table(int fd)
{
	struct table *t = os_map_sparse(sizeof(*t));
	if (!t)
		return;		/* no memory left even for pages: nothing to say it with */
	struct slabinfo_out out = { table_write, t };
	int cancel = os_cancel_off();	/* as glibc's malloc_stats: no cancellation point */
	struct rows rows = { .internal = slub_opt(exit_stats_internal) };
	t->len = 0;
	slab_for_each_cache(count_row, &rows.cap);
	rows.cap += 16;
	size_t map = (rows.cap * sizeof(struct row) + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1);
	rows.row = os_map_sparse(map);
	if (!rows.row) {
		slabinfo_printf(&out, "libslub: no memory for the table of caches\n");
	} else {
		slab_for_each_cache(cache_row, &rows);
		table_body(&out, &rows);
		if (slub_opt(exit_counters))
			counters_body(&out, &rows);
		os_release(rows.row, map);
	}
	const char *p = t->buf;
	size_t left = t->len;
	while (left) {
		ssize_t n = write(fd, p, left);
		if (n <= 0)
			break;
		p += n;
		left -= (size_t)n;
	}
	os_release(t, sizeof(*t));
	os_cancel_restore(cancel);
}

static bool exit_stats_armed;

/*
 * Called by slab_init(): arms the destructor below, and, as important,
 * makes a static link pull this file (and so the destructor) in.
 */
void slab_stats_init(void)
{
	__atomic_store_n(&exit_stats_armed, slub_opt_str(exit_stats)[0] != 0, __ATOMIC_RELEASE);
}

__attribute__((destructor)) static void write_exit_stats(void)
{
	const char *path = slub_opt_str(exit_stats);
	if (!__atomic_load_n(&exit_stats_armed, __ATOMIC_ACQUIRE) || !options_exit_stats_here())
		return;
	if (!strcmp(path, "-")) {
		slab_write_cache_table(STDERR_FILENO);
		return;
	}
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		slub_warn("cannot open slub_exit_stats=%s; no table written", path);
		return;
	}
	slab_write_cache_table(fd);
	close(fd);
}
