/* SPDX-License-Identifier: MIT */
/*
 * slabinfo.h - the slabinfo formatting core: a cache's figures read from
 * the text of its /sys/kernel/slab-style attributes, and the kernel's
 * slabinfo outputs (the table, aliases, totals, reports) built from them.
 *
 * The attributes come through a reader, so the same code serves the
 * library (slub_attr_read on a live cache: slub_print_slabinfo, the exit
 * table) and the slabinfo tool (files of a directory tree: the real
 * kernel's /sys/kernel/slab, a copy, a mount).  Nothing here knows the
 * allocator's structures, so the tool compiles this file on its own.
 */
#ifndef SLUB_SLABINFO_H
#define SLUB_SLABINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "slab/core/stat_items.h"

#define SLABINFO_NAME_MAX 64
#define SLABINFO_MAX_NODES 64

/*
 * Read attribute @attr of cache @cache into @buf (NUL-terminated): its
 * length, or negative if there is no such attribute or it cannot be read.
 * @ctx is the reader's own (a directory, a struct kmem_cache).
 */
typedef ssize_t (*slabinfo_read_fn)(void *ctx, const char *cache, const char *attr, char *buf,
				    size_t len);
/*
 * Write @val to @attr of @cache; 0 or a negative errno.  For validate, a
 * source that can tell returns the number of problems it reported.
 */
typedef int (*slabinfo_write_fn)(void *ctx, const char *cache, const char *attr,
				 const char *val);

/* One cache as the kernel's slabinfo sees it: its attributes' leading numbers. */
struct slabinfo_cache {
	char name[SLABINFO_NAME_MAX];	/* its directory: a name or a unique id ":…" */
	/*
	 * The alias's name printed for an id, NULL to print its own (a
	 * pointer into the aliases, which stay put while caches are sorted).
	 */
	const char *shown_as;
	bool hidden;			/* an id no alias names (the kernel's "*") */
	int refs;			/* aliases pointing at it in the tree */
	unsigned int aliases, align, order, object_size, slab_size, objs_per_slab;
	bool cache_dma, hwcache_align, destroy_by_rcu, reclaim_account;
	/* libslub's: waiting for an RCU grace period (0 where the tree has no such file) */
	unsigned long rcu_pending_objects, rcu_pending_slabs;
	bool sanity_checks, red_zone, poison, store_user, trace;
	unsigned long objects, objects_partial, total_objects, slabs, partial, cpu_slabs;
	unsigned long total_pages;	/* libslub's attribute; 0 in the kernel's tree */
	unsigned long numa[SLABINFO_MAX_NODES], numa_partial[SLABINFO_MAX_NODES];
	bool has_stats;			/* the counters exist (CONFIG_SLUB_STATS) */
	unsigned long stat[NR_SLUB_STAT_ITEMS];
	unsigned long peak_bytes;	/* libslub's exit table only: not an attribute */
};

/* The name a cache is printed by. */
static inline const char *slabinfo_name(const struct slabinfo_cache *c)
{
	return c->shown_as ? c->shown_as : c->name;
}

struct slabinfo_alias {
	char name[SLABINFO_NAME_MAX];
	char ref[SLABINFO_NAME_MAX];	/* the cache directory it points at */
	struct slabinfo_cache *slab;
};

/* What to show, as the kernel tool's switches. */
struct slabinfo_opts {
	bool show_empty, skip_zero, show_bytes, show_activity, inverted, first_alias;
	bool single_ref, unreclaim_only, show_numa, show_report, show_track, show_ops;
	bool show_slab, validate, shrink;
	bool sort_size, sort_loss, sort_partial, sort_active;
	long lines;			/* -N: caches to show, -1 for all */
};

/* Where the text goes: the library writes without stdio at exit. */
struct slabinfo_out {
	void (*write)(void *arg, const char *s, size_t n);
	void *arg;
};

struct slabinfo_set {
	struct slabinfo_cache *caches;
	size_t nr, cap;
	struct slabinfo_alias *aliases;
	size_t nr_aliases, cap_aliases;
	int highest_node;
	unsigned long page_size;
	slabinfo_read_fn read;		/* for -r, -t, -o: read on demand */
	slabinfo_write_fn write;	/* for -s, -v */
	void *ctx;
	struct slabinfo_out out;
	int errors;			/* writes refused */
	bool counts_problems;		/* set->write tells validate's problems (a live process) */
};

/*
 * Fill @c, cache @name, from its attributes read by set->read with @ctx;
 * false if it has no "objects" to read (not a cache).
 */
bool slabinfo_load(struct slabinfo_set *set, struct slabinfo_cache *c, const char *name,
		   void *ctx);
/* The leading number of an attribute's text; 0 for none. */
unsigned long slabinfo_number(const char *text);

/* The kernel's sizes: "123.4K" (1000s) unless bytes; returns @buf. */
const char *slabinfo_size(char *buf, size_t n, unsigned long value, bool bytes);
/* Memory of all the cache's slabs, and what its objects do not use of it. */
unsigned long slabinfo_bytes(const struct slabinfo_set *set, const struct slabinfo_cache *c);
unsigned long slabinfo_loss(const struct slabinfo_set *set, const struct slabinfo_cache *c);

__attribute__((format(printf, 2, 3))) void slabinfo_printf(struct slabinfo_out *out,
							    const char *fmt, ...);

/* Alias resolution and the kernel's renaming of ":id" caches; 0 or -1 (unresolved). */
int slabinfo_link(struct slabinfo_set *set, const struct slabinfo_opts *opts);
void slabinfo_sort(struct slabinfo_set *set, const struct slabinfo_opts *opts);
/* The per-cache outputs, as the kernel's output_slabs. */
void slabinfo_output(struct slabinfo_set *set, const struct slabinfo_opts *opts);
void slabinfo_print_aliases(struct slabinfo_set *set, const struct slabinfo_opts *opts);
void slabinfo_totals(struct slabinfo_set *set, const struct slabinfo_opts *opts);
void slabinfo_xtotals(struct slabinfo_set *set, struct slabinfo_opts *opts);

#endif /* SLUB_SLABINFO_H */
