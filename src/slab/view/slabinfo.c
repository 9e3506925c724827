// SPDX-License-Identifier: MIT
/*
 * slabinfo.c - the slabinfo formatting core (slabinfo.h): a cache's
 * figures parsed from its attributes' text, and the outputs of the
 * kernel's tools/mm/slabinfo.c built from them: the table, the activity
 * lines, aliases, NUMA lines, the per-cache report, totals and extended
 * totals, in the kernel's layouts so that what one knows of the kernel's
 * tool reads the same here.
 *
 * It sees caches only through a reader of attribute text, never the
 * allocator's structures: the library feeds it slub_attr_read(), the
 * slabinfo tool the files of a /sys/kernel/slab-style tree.  Output goes
 * through a write callback and a fixed buffer, so the library's exit table
 * can use the figures and sizes without stdio.
 */
#define _GNU_SOURCE
#include "slab/view/slabinfo.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void slabinfo_printf(struct slabinfo_out *out, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > 0)
		out->write(out->arg, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

/* Room for a short attribute's text (ops); alloc_calls gets a buffer of its own. */
#define ATTR_TEXT 4096

unsigned long slabinfo_number(const char *text)
{
	return strtoul(text, NULL, 10);
}

/* " N0=12 N1=3" after the sum: each node's part, as decode_numa_list. */
static void numa_parts(struct slabinfo_set *set, unsigned long *numa, const char *t)
{
	char *end;
	strtoul(t, &end, 10);
	for (t = end; *t == ' '; t++) {
		while (*t == ' ')
			t++;
		if (*t != 'N')
			break;
		unsigned long node = strtoul(t + 1, &end, 10);
		if (*end != '=' || node >= SLABINFO_MAX_NODES)
			break;
		numa[node] = strtoul(end + 1, &end, 10);
		if ((int)node > set->highest_node)
			set->highest_node = (int)node;
		t = end - 1;
	}
}

bool slabinfo_load(struct slabinfo_set *set, struct slabinfo_cache *c, const char *name,
		   void *ctx)
{
	char text[256];
	memset(c, 0, sizeof(*c));
	snprintf(c->name, sizeof(c->name), "%s", name);
	if (set->read(ctx, name, "objects", text, sizeof(text)) < 0)
		return false;
	c->objects = slabinfo_number(text);
/* Each attribute's leading number; one that cannot be read counts 0, as the kernel's tool. */
#define NUM(field, attr)							\
	c->field = set->read(ctx, name, attr, text, sizeof(text)) < 0 ? 0 : slabinfo_number(text)
	NUM(aliases, "aliases");
	NUM(align, "align");
	NUM(order, "order");
	NUM(object_size, "object_size");
	NUM(slab_size, "slab_size");
	NUM(objs_per_slab, "objs_per_slab");
	NUM(cache_dma, "cache_dma");
	NUM(hwcache_align, "hwcache_align");
	NUM(destroy_by_rcu, "destroy_by_rcu");
	NUM(rcu_pending_objects, "rcu_pending_objects");
	NUM(rcu_pending_slabs, "rcu_pending_slabs");
	NUM(reclaim_account, "reclaim_account");
	NUM(sanity_checks, "sanity_checks");
	NUM(red_zone, "red_zone");
	NUM(poison, "poison");
	NUM(store_user, "store_user");
	NUM(trace, "trace");
	NUM(objects_partial, "objects_partial");
	NUM(total_objects, "total_objects");
	NUM(cpu_slabs, "cpu_slabs");
	NUM(total_pages, "total_pages");
#undef NUM
	if (set->read(ctx, name, "slabs", text, sizeof(text)) >= 0) {
		c->slabs = slabinfo_number(text);
		numa_parts(set, c->numa, text);
	}
	if (set->read(ctx, name, "partial", text, sizeof(text)) >= 0) {
		c->partial = slabinfo_number(text);
		numa_parts(set, c->numa_partial, text);
	}
	static const char *const stat_names[] = {
#define X(item, attr) attr,
		SLAB_STAT_LIST(X)
#undef X
	};
	for (size_t i = 0; i < NR_SLUB_STAT_ITEMS; i++) {
		if (set->read(ctx, name, stat_names[i], text, sizeof(text)) < 0)
			continue;
		c->has_stats = true;
		c->stat[i] = slabinfo_number(text);
	}
	return true;
}

/*
 * The kernel's store_size: past 1000 a unit (K, M, G of 1000s) and one
 * decimal, so a column stays narrow; -B prints bytes.
 */
const char *slabinfo_size(char *buf, size_t n, unsigned long value, bool bytes)
{
	static const struct { unsigned long above; char unit; } units[] = {
		{ 1000000000UL, 'G' }, { 1000000UL, 'M' }, { 1000UL, 'K' },
	};
	for (size_t i = 0; !bytes && i < sizeof(units) / sizeof(units[0]); i++) {
		if (value > units[i].above) {
			unsigned long tenths = value / (units[i].above / 10);
			snprintf(buf, n, "%lu.%lu%c", tenths / 10, tenths % 10, units[i].unit);
			return buf;
		}
	}
	snprintf(buf, n, "%lu", value);
	return buf;
}

/* The kernel's tool assumes every slab of the current order; libslub says its pages. */
unsigned long slabinfo_bytes(const struct slabinfo_set *set, const struct slabinfo_cache *c)
{
	if (c->total_pages)
		return c->total_pages * set->page_size;
	return c->slabs * (set->page_size << c->order);
}

unsigned long slabinfo_loss(const struct slabinfo_set *set, const struct slabinfo_cache *c)
{
	unsigned long used = c->objects * c->object_size, bytes = slabinfo_bytes(set, c);
	return bytes > used ? bytes - used : 0;
}

static unsigned long activity(const struct slabinfo_cache *c)
{
	return c->stat[ALLOC_FASTPATH] + c->stat[FREE_FASTPATH] + c->stat[ALLOC_SLOWPATH] +
	       c->stat[FREE_SLOWPATH];
}

static bool any_stats(const struct slabinfo_set *set)
{
	for (size_t i = 0; i < set->nr; i++)
		if (set->caches[i].has_stats)
			return true;
	return false;
}

static void no_stats_note(struct slabinfo_set *set)
{
	slabinfo_printf(&set->out, "(no statistics counters in this tree: activity needs a "
			"kernel with CONFIG_SLUB_STATS or libslub built with -DSLUB_STATS=ON)\n");
}

/* ---- aliases ----------------------------------------------------------------- */

/* The alias to show for an id: a kmalloc one if any, else the longest (as the kernel's). */
static struct slabinfo_alias *one_alias(struct slabinfo_set *set, struct slabinfo_cache *c)
{
	struct slabinfo_alias *best = NULL;
	for (size_t i = 0; i < set->nr_aliases; i++) {
		struct slabinfo_alias *a = &set->aliases[i];
		if (a->slab != c || (best && strlen(best->name) >= strlen(a->name)))
			continue;
		best = a;
		if (!strncmp(a->name, "kmall", 5))
			break;
	}
	return best;
}

int slabinfo_link(struct slabinfo_set *set, const struct slabinfo_opts *opts)
{
	int unresolved = 0;
	for (size_t i = 0; i < set->nr; i++)
		set->caches[i].refs = 0;
	for (size_t i = 0; i < set->nr_aliases; i++) {
		struct slabinfo_alias *a = &set->aliases[i];
		a->slab = NULL;
		for (size_t j = 0; j < set->nr && !a->slab; j++)
			if (!strcmp(a->ref, set->caches[j].name))
				a->slab = &set->caches[j];
		if (a->slab)
			a->slab->refs++;
		else
			unresolved = -1;
	}
	/* An id is shown by an alias's name; one nobody names is left out. */
	for (size_t i = 0; i < set->nr; i++) {
		struct slabinfo_cache *c = &set->caches[i];
		c->shown_as = NULL;
		c->hidden = false;
		if (c->name[0] != ':' || (c->refs > 1 && !opts->first_alias))
			continue;
		struct slabinfo_alias *a = one_alias(set, c);
		c->shown_as = a ? a->name : NULL;
		c->hidden = !a;
	}
	return unresolved;
}

/* What a comparison needs: qsort_r's argument, so that two callers may sort at once. */
struct sort_by {
	const struct slabinfo_set *set;
	const struct slabinfo_opts *opts;
};

static int by_value(unsigned long a, unsigned long b)
{
	return a == b ? 0 : a < b ? 1 : -1;	/* larger first */
}

static int cache_cmp(const void *pa, const void *pb, void *arg)
{
	const struct slabinfo_cache *a = pa, *b = pb;
	const struct sort_by *by = arg;
	const struct slabinfo_set *set = by->set;
	const struct slabinfo_opts *o = by->opts;
	int r = 0;
	if (o->sort_size)
		r = by_value(slabinfo_bytes(set, a), slabinfo_bytes(set, b));
	else if (o->sort_active)
		r = by_value(activity(a), activity(b));
	else if (o->sort_loss)
		r = by_value(slabinfo_loss(set, a), slabinfo_loss(set, b));
	else if (o->sort_partial)
		r = by_value(a->partial, b->partial);
	if (!r)
		r = strcasecmp(a->hidden ? "*" : slabinfo_name(a), b->hidden ? "*" : slabinfo_name(b));
	return o->inverted ? -r : r;
}

void slabinfo_sort(struct slabinfo_set *set, const struct slabinfo_opts *opts)
{
	/* Alias pointers follow the caches they name. */
	for (size_t i = 0; i < set->nr_aliases; i++)
		set->aliases[i].slab = NULL;
	struct sort_by by = { set, opts };
	qsort_r(set->caches, set->nr, sizeof(set->caches[0]), cache_cmp, &by);
	slabinfo_link(set, opts);
}

static int alias_cmp(const void *pa, const void *pb, void *arg)
{
	const struct slabinfo_alias *a = pa, *b = pb;
	const struct slabinfo_opts *opts = arg;
	if (!opts->inverted) {
		int r = strcasecmp(a->ref, b->ref);
		if (r)
			return r;
	}
	return strcasecmp(a->name, b->name);
}

void slabinfo_print_aliases(struct slabinfo_set *set, const struct slabinfo_opts *opts)
{
	qsort_r(set->aliases, set->nr_aliases, sizeof(set->aliases[0]), alias_cmp, (void *)opts);
	slabinfo_link(set, opts);
	const char *active = NULL;
	for (size_t i = 0; i < set->nr_aliases; i++) {
		struct slabinfo_alias *a = &set->aliases[i];
		if (!a->slab || (!opts->single_ref && a->slab->refs == 1))
			continue;
		if (opts->inverted) {
			slabinfo_printf(&set->out, "%-15s -> %s\n", a->name, a->slab->name);
		} else if (active && !strcmp(a->slab->name, active)) {
			slabinfo_printf(&set->out, " %s", a->name);
		} else {
			slabinfo_printf(&set->out, "\n%-12s <- %s", a->slab->name, a->name);
			active = a->slab->name;
		}
	}
	if (active)
		slabinfo_printf(&set->out, "\n");
}

/* ---- one cache ------------------------------------------------------------------ */

static void flags_of(const struct slabinfo_cache *c, char *p)
{
	const struct { bool on; char c; } f[] = {
		{ c->aliases, '*' }, { c->cache_dma, 'd' }, { c->hwcache_align, 'A' },
		{ c->poison, 'P' }, { c->reclaim_account, 'a' }, { c->red_zone, 'Z' },
		{ c->sanity_checks, 'F' }, { c->store_user, 'U' }, { c->trace, 'T' },
	};
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		if (f[i].on)
			*p++ = f[i].c;
	*p = 0;
}

static void first_line(struct slabinfo_set *set, const struct slabinfo_opts *opts)
{
	if (opts->show_activity) {
		slabinfo_printf(&set->out, "Name                   Objects      Alloc       Free"
				"   %%Fast Fallb O CmpX   UL\n");
		if (!any_stats(set))
			no_stats_note(set);
	} else {
		slabinfo_printf(&set->out, "Name                   Objects Objsize           %s "
				"Slabs/Part/Cpu  O/S O %%Fr %%Ef Flg\n",
				opts->sort_loss ? " Loss" : "Space");
	}
}

static unsigned long pct(unsigned long part, unsigned long whole)
{
	return whole ? part * 100 / whole : 0;
}

static void cache_line(struct slabinfo_set *set, const struct slabinfo_opts *opts,
		       struct slabinfo_cache *c, int *line)
{
	char size[24], dist[64], flags[16];
	slabinfo_size(size, sizeof(size),
		      opts->sort_loss ? slabinfo_loss(set, c) : slabinfo_bytes(set, c),
		      opts->show_bytes);
	/* cpu_slabs counts the CPUs' partial slabs too: it can exceed a racing read of slabs. */
	snprintf(dist, sizeof(dist), "%lu/%lu/%lu", c->slabs > c->cpu_slabs ? c->slabs - c->cpu_slabs : 0,
		 c->partial, c->cpu_slabs);
	if (!(*line)++)
		first_line(set, opts);
	flags_of(c, flags);
	if (opts->show_activity) {
		unsigned long a = c->stat[ALLOC_FASTPATH] + c->stat[ALLOC_SLOWPATH];
		unsigned long f = c->stat[FREE_FASTPATH] + c->stat[FREE_SLOWPATH];
		slabinfo_printf(&set->out, "%-21s %8lu %10lu %10lu %3lu %3lu %5lu %1u %4lu %4lu\n",
				slabinfo_name(c), c->objects, a, f, pct(c->stat[ALLOC_FASTPATH], a),
				pct(c->stat[FREE_FASTPATH], f), c->stat[ORDER_FALLBACK], c->order,
				c->stat[CMPXCHG_DOUBLE_FAIL], c->stat[CMPXCHG_DOUBLE_CPU_FAIL]);
		return;
	}
	unsigned long bytes = slabinfo_bytes(set, c);
	slabinfo_printf(&set->out, "%-21s %8lu %7u %15s %14s %4u %1u %3lu %3lu %s\n", slabinfo_name(c),
			c->objects, c->object_size, size, dist, c->objs_per_slab, c->order,
			c->slabs ? c->partial * 100 / c->slabs : 100,
			c->slabs ? c->objects * c->object_size * 100 / bytes : 100, flags);
}

static void numa_line(struct slabinfo_set *set, const struct slabinfo_opts *opts,
		      struct slabinfo_cache *c, bool all, int *line)
{
	char b[24];
	if (!set->highest_node && !all) {
		/* One node: the kernel's tool says so per cache. */
		slabinfo_printf(&set->out, "\n%s: No NUMA information available.\n", slabinfo_name(c));
		return;
	}
	if (opts->skip_zero && !c->slabs)
		return;
	if (!(*line)++) {
		slabinfo_printf(&set->out, "\n%-21s:", all ? "NUMA nodes" : "Slab");
		for (int node = 0; node <= set->highest_node; node++)
			slabinfo_printf(&set->out, " %4d", node);
		slabinfo_printf(&set->out, "\n----------------------");
		for (int node = 0; node <= set->highest_node; node++)
			slabinfo_printf(&set->out, "-----");
		slabinfo_printf(&set->out, "\n");
	}
	slabinfo_printf(&set->out, "%-21s ", all ? "All slabs" : slabinfo_name(c));
	for (int node = 0; node <= set->highest_node; node++)
		slabinfo_printf(&set->out, " %4s", slabinfo_size(b, sizeof(b), c->numa[node],
								    opts->show_bytes));
	slabinfo_printf(&set->out, "\n");
	if (!all)
		return;
	slabinfo_printf(&set->out, "%-21s ", "Partial slabs");
	for (int node = 0; node <= set->highest_node; node++)
		slabinfo_printf(&set->out, " %4s", slabinfo_size(b, sizeof(b),
								    c->numa_partial[node],
								    opts->show_bytes));
	slabinfo_printf(&set->out, "\n");
}

/* A long attribute (alloc_calls), printed whole, or "No Data". */
static void print_attr(struct slabinfo_set *set, struct slabinfo_cache *c, const char *attr)
{
	const size_t size = 1 << 20;
	char *text = malloc(size);
	ssize_t n = text ? set->read(set->ctx, c->name, attr, text, size) : -1;
	if (n > 0)
		set->out.write(set->out.arg, text, (size_t)n);
	else
		slabinfo_printf(&set->out, "No Data\n");
	free(text);
}

static void tracking(struct slabinfo_set *set, struct slabinfo_cache *c)
{
	slabinfo_printf(&set->out, "\n%s: Kernel object allocation\n", slabinfo_name(c));
	slabinfo_printf(&set->out, "-----------------------------------------------------------------------\n");
	print_attr(set, c, "alloc_calls");
	slabinfo_printf(&set->out, "\n%s: Kernel object freeing\n", slabinfo_name(c));
	slabinfo_printf(&set->out, "------------------------------------------------------------------------\n");
	print_attr(set, c, "free_calls");
}

static void ops(struct slabinfo_set *set, struct slabinfo_cache *c)
{
	char text[ATTR_TEXT];
	ssize_t n = set->read(set->ctx, c->name, "ops", text, sizeof(text));
	if (n > 0) {
		slabinfo_printf(&set->out, "\n%s: kmem_cache operations\n", slabinfo_name(c));
		slabinfo_printf(&set->out, "--------------------------------------------\n");
		set->out.write(set->out.arg, text, (size_t)n);
	} else {
		slabinfo_printf(&set->out, "\n%s has no kmem_cache operations\n", slabinfo_name(c));
	}
}

static const char *onoff(bool x)
{
	return x ? "On " : "Off";
}

/* The counters' part of a report, as the kernel's slab_stats(). */
static void perf_counters(struct slabinfo_set *set, const struct slabinfo_cache *c)
{
	const unsigned long *st = c->stat;
	unsigned long a = st[ALLOC_FASTPATH] + st[ALLOC_SLOWPATH];
	unsigned long f = st[FREE_FASTPATH] + st[FREE_SLOWPATH];
	struct slabinfo_out *out = &set->out;
	if (!c->has_stats) {
		slabinfo_printf(out, "\nNo statistics counters (CONFIG_SLUB_STATS, -DSLUB_STATS=ON)\n");
		return;
	}
	if (!st[ALLOC_SLAB] || !a)
		return;
	const struct { const char *name; unsigned long a, f; } rows[] = {
		{ "Fastpath", st[ALLOC_FASTPATH], st[FREE_FASTPATH] },
		{ "Slowpath", a - st[ALLOC_FASTPATH], st[FREE_SLOWPATH] },
		{ "Page Alloc", st[ALLOC_SLAB], st[FREE_SLAB] },
		{ "Add partial", st[DEACTIVATE_TO_HEAD] + st[DEACTIVATE_TO_TAIL],
		  st[FREE_ADD_PARTIAL] },
		{ "Remove partial", st[ALLOC_FROM_PARTIAL], st[FREE_REMOVE_PARTIAL] },
		{ "Cpu partial list", st[CPU_PARTIAL_ALLOC], st[CPU_PARTIAL_FREE] },
		{ "RemoteObj/SlabFrozen", st[DEACTIVATE_REMOTE_FREES], st[FREE_FROZEN] },
	};
	slabinfo_printf(out, "\nSlab Perf Counter       Alloc     Free %%Al %%Fr\n");
	slabinfo_printf(out, "--------------------------------------------------\n");
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		slabinfo_printf(out, "%-20s %8lu %8lu %3lu %3lu\n", rows[i].name, rows[i].a,
				rows[i].f, pct(rows[i].a, a), pct(rows[i].f, f));
	slabinfo_printf(out, "Total                %8lu %8lu\n\n", a, f);
	if (st[CPUSLAB_FLUSH])
		slabinfo_printf(out, "Flushes %8lu\n", st[CPUSLAB_FLUSH]);
	const struct { const char *name; unsigned long n; } deact[] = {
		{ "Slab full", st[DEACTIVATE_FULL] },
		{ "Slab empty", st[DEACTIVATE_EMPTY] },
		{ "Moved to head of partial list", st[DEACTIVATE_TO_HEAD] },
		{ "Moved to tail of partial list", st[DEACTIVATE_TO_TAIL] },
		{ "Deactivation bypass", st[DEACTIVATE_BYPASS] },
		{ "Refilled from foreign frees", st[ALLOC_REFILL] },
		{ "Node mismatch", st[ALLOC_NODE_MISMATCH] },
	};
	unsigned long total = 0;
	for (size_t i = 0; i < 5; i++)	/* the first five are the deactivations */
		total += deact[i].n;
	if (total) {
		slabinfo_printf(out, "\nSlab Deactivation             Occurrences %%\n");
		slabinfo_printf(out, "-------------------------------------------------\n");
		for (size_t i = 0; i < sizeof(deact) / sizeof(deact[0]); i++)
			slabinfo_printf(out, "%-29s %7lu  %3lu%%\n", deact[i].name, deact[i].n,
					deact[i].n * 100 / total);
	}
	if (st[CMPXCHG_DOUBLE_FAIL] || st[CMPXCHG_DOUBLE_CPU_FAIL])
		slabinfo_printf(out, "\nCmpxchg_double Looping\n------------------------\n"
				"Locked Cmpxchg Double redos   %lu\nUnlocked Cmpxchg Double redos %lu\n",
				st[CMPXCHG_DOUBLE_FAIL], st[CMPXCHG_DOUBLE_CPU_FAIL]);
}

static void report(struct slabinfo_set *set, const struct slabinfo_opts *opts,
		   struct slabinfo_cache *c)
{
	struct slabinfo_out *out = &set->out;
	unsigned long slab_bytes = set->page_size << c->order;
	unsigned long bytes = slabinfo_bytes(set, c), used = c->objects * c->object_size;
	unsigned long full = c->slabs > c->partial + c->cpu_slabs ?
			     c->slabs - c->partial - c->cpu_slabs : 0;
	unsigned long pad = slab_bytes > c->objs_per_slab * c->slab_size ?
			    slab_bytes - c->objs_per_slab * c->slab_size : 0;
	slabinfo_printf(out, "\nSlabcache: %-15s  Aliases: %2u Order : %2u Objects: %lu\n",
			slabinfo_name(c), c->aliases, c->order, c->objects);
	if (c->hwcache_align)
		slabinfo_printf(out, "** Hardware cacheline aligned\n");
	if (c->cache_dma)
		slabinfo_printf(out, "** Memory is allocated in a special DMA zone\n");
	if (c->destroy_by_rcu)
		slabinfo_printf(out, "** Slabs are destroyed via RCU\n");
	if (c->rcu_pending_objects || c->rcu_pending_slabs)
		slabinfo_printf(out, "** Waiting for an RCU grace period: %lu objects, %lu slabs\n",
				c->rcu_pending_objects, c->rcu_pending_slabs);
	if (c->reclaim_account)
		slabinfo_printf(out, "** Reclaim accounting active\n");
	slabinfo_printf(out, "\nSizes (bytes)     Slabs              Debug                Memory\n");
	slabinfo_printf(out, "------------------------------------------------------------------------\n");
	slabinfo_printf(out, "Object : %7u  Total  : %7lu   Sanity Checks : %s  Total: %7lu\n",
			c->object_size, c->slabs, onoff(c->sanity_checks), bytes);
	slabinfo_printf(out, "SlabObj: %7u  Full   : %7lu   Redzoning     : %s  Used : %7lu\n",
			c->slab_size, full, onoff(c->red_zone), used);
	slabinfo_printf(out, "SlabSiz: %7lu  Partial: %7lu   Poisoning     : %s  Loss : %7lu\n",
			slab_bytes, c->partial, onoff(c->poison), bytes - used);
	slabinfo_printf(out, "Loss   : %7u  CpuSlab: %7lu   Tracking      : %s  Lalig: %7lu\n",
			c->slab_size - c->object_size, c->cpu_slabs, onoff(c->store_user),
			(unsigned long)(c->slab_size - c->object_size) * c->objects);
	slabinfo_printf(out, "Align  : %7u  Objects: %7u   Tracing       : %s  Lpadd: %7lu\n",
			c->align, c->objs_per_slab, onoff(c->trace), pad * c->slabs);
	ops(set, c);
	tracking(set, c);
	int line = 0;
	numa_line(set, opts, c, true, &line);
	perf_counters(set, c);
}

static void write_attr(struct slabinfo_set *set, struct slabinfo_cache *c, const char *attr)
{
	int err = set->write(set->ctx, c->name, attr, "1");
	if (err) {
		slabinfo_printf(&set->out, "%s: cannot write %s: %s\n", slabinfo_name(c), attr,
				strerror(-err));
		set->errors++;
	}
}

/* -v's tally: caches validated, the problems they reported, the ones skipped. */
struct validation {
	size_t done, skipped;
	unsigned long problems;
	char skipped_names[200];
};

/*
 * Only a cache with debug flags keeps what a check needs: the others
 * refuse validate (the kernel's -EINVAL), and are skipped, not failed.
 */
static void validate(struct slabinfo_set *set, struct slabinfo_cache *c, struct validation *v)
{
	if (!c->sanity_checks && !c->red_zone && !c->poison && !c->store_user && !c->trace) {
		size_t n = strlen(v->skipped_names);
		if (v->skipped++ < 5)
			snprintf(v->skipped_names + n, sizeof(v->skipped_names) - n, "%s%s",
				 n ? ", " : "", slabinfo_name(c));
		return;
	}
	int r = set->write(set->ctx, c->name, "validate", "1");
	if (r < 0) {
		slabinfo_printf(&set->out, "%s: cannot write validate: %s\n", slabinfo_name(c),
				strerror(-r));
		set->errors++;
		return;
	}
	v->done++;
	v->problems += (unsigned long)r;
	if (r)
		slabinfo_printf(&set->out, "%s: %d problem%s found\n", slabinfo_name(c), r,
				r == 1 ? "" : "s");
}

static void validation_summary(struct slabinfo_set *set, const struct validation *v)
{
	slabinfo_printf(&set->out, "Validated %zu cache%s", v->done, v->done == 1 ? "" : "s");
	if (!set->counts_problems)
		slabinfo_printf(&set->out, " (problems go to the allocator's reports: the kernel "
				"log, or the process's stderr)\n");
	else if (!v->problems)
		slabinfo_printf(&set->out, ": no problems found\n");
	else
		slabinfo_printf(&set->out, ": %lu problem%s found, reported by the process (its "
				"stderr, or slub_report_file)\n", v->problems,
				v->problems == 1 ? "" : "s");
	if (v->skipped)
		slabinfo_printf(&set->out, "Skipped %zu without debug flags (validate needs "
				"slub_debug): %s%s\n", v->skipped, v->skipped_names,
				v->skipped > 5 ? ", ..." : "");
}

void slabinfo_output(struct slabinfo_set *set, const struct slabinfo_opts *opts)
{
	struct validation v = { 0 };
	long lines = opts->lines;
	int line = 0;
	size_t visible = 0;
	for (size_t i = 0; i < set->nr; i++)
		visible += !set->caches[i].hidden;
	for (size_t i = 0; i < set->nr && lines; i++) {
		struct slabinfo_cache *c = &set->caches[i];
		if (c->hidden)
			continue;
		if (lines > 0)
			lines--;
		if (opts->show_numa) {
			numa_line(set, opts, c, false, &line);
		} else if (opts->show_track) {
			tracking(set, c);
		} else if (opts->validate) {
			validate(set, c, &v);
		} else if (opts->shrink) {
			write_attr(set, c, "shrink");
		} else if (opts->show_ops) {
			ops(set, c);
		} else if (opts->show_slab) {
			if (opts->unreclaim_only && c->reclaim_account)
				continue;
			if (visible == 1) {
				report(set, opts, c);	/* one cache: its report, as the kernel's */
				continue;
			}
			if (opts->show_empty ? c->slabs != 0 : opts->skip_zero && !c->slabs)
				continue;
			cache_line(set, opts, c, &line);
		} else if (opts->show_report) {
			report(set, opts, c);
		}
	}
	if (opts->validate)
		validation_summary(set, &v);
}

/* ---- totals ------------------------------------------------------------------------ */

struct range {
	unsigned long long min, max, total;
};

static void range_add(struct range *r, unsigned long long v)
{
	if (v < r->min)
		r->min = v;
	if (v > r->max)
		r->max = v;
	r->total += v;
}

/* "Name   avg  min  max  total": @pc adds the kernel's '%' to each column. */
static void range_line(struct slabinfo_set *set, const char *name, const struct range *r,
		       unsigned long long avg, unsigned long long total, bool pc, bool four,
		       bool bytes)
{
	char b[4][24];
	slabinfo_size(b[0], sizeof(b[0]), avg, bytes);
	slabinfo_size(b[1], sizeof(b[1]), r->min, bytes);
	slabinfo_size(b[2], sizeof(b[2]), r->max, bytes);
	slabinfo_size(b[3], sizeof(b[3]), total, bytes);
	const char *p = pc ? "%" : " ";
	if (four)
		slabinfo_printf(&set->out, "%-9s%15s%s %15s%s %15s%s %15s%s\n", name, b[0], p, b[1],
				p, b[2], p, b[3], pc ? "%" : "");
	else
		slabinfo_printf(&set->out, "%-9s%15s%s %15s%s %15s\n", name, b[0], p, b[1], p, b[2]);
}

void slabinfo_totals(struct slabinfo_set *set, const struct slabinfo_opts *opts)
{
	const unsigned long long none = ~0ULL;
	struct range objsize = { none, 0, 0 }, partial = { none, 0, 0 }, slabs = { none, 0, 0 };
	struct range size = { none, 0, 0 }, used = { none, 0, 0 }, waste = { none, 0, 0 };
	struct range objects = { none, 0, 0 }, objwaste = { none, 0, 0 }, memobj = { none, 0, 0 };
	struct range ppart = { 100, 0, 0 }, partobj = { none, 0, 0 }, ppartobj = { 100, 0, 0 };
	unsigned long long total_objwaste = 0, total_memobj = 0;
	unsigned int used_caches = 0, alias_targets = 0;
	bool b = opts->show_bytes;

	for (size_t i = 0; i < set->nr; i++) {
		struct slabinfo_cache *c = &set->caches[i];
		alias_targets += c->name[0] == ':';
		if (!c->slabs || !c->objects)
			continue;
		used_caches++;
		unsigned long long bytes = slabinfo_bytes(set, c), u = c->objects * c->object_size;
		unsigned long long ow = c->slab_size - c->object_size;
		unsigned long long pp = c->partial * 100 / c->slabs;
		unsigned long long ppo = c->objects_partial * 100 / c->objects;
		range_add(&objsize, c->object_size);
		range_add(&partial, c->partial);
		range_add(&slabs, c->slabs);
		range_add(&size, bytes);
		range_add(&waste, bytes > u ? bytes - u : 0);
		range_add(&objwaste, ow);
		range_add(&objects, c->objects);
		range_add(&used, u);
		range_add(&partobj, c->objects_partial);
		range_add(&ppart, pp > 100 ? 100 : pp);
		range_add(&ppartobj, ppo > 100 ? 100 : ppo);
		range_add(&memobj, c->slab_size);
		total_objwaste += c->objects * ow;
		total_memobj += c->objects * c->slab_size;
	}
	if (!objects.total) {
		slabinfo_printf(&set->out, "No objects\n");
		return;
	}
	char b1[24], b2[24], b3[24];
	slabinfo_printf(&set->out, "Slabcache Totals\n----------------\n");
	slabinfo_printf(&set->out, "Slabcaches : %15zu   Aliases  : %11zu->%-3u  Active:    %3u\n",
			set->nr, set->nr_aliases, alias_targets, used_caches);
	slabinfo_printf(&set->out, "Memory used: %15s   # Loss   : %15s   MRatio:%6s%%\n",
			slabinfo_size(b1, sizeof(b1), size.total, b),
			slabinfo_size(b2, sizeof(b2), waste.total, b),
			slabinfo_size(b3, sizeof(b3), waste.total * 100 / used.total, b));
	slabinfo_printf(&set->out, "# Objects  : %15s   # PartObj: %15s   ORatio:%6s%%\n",
			slabinfo_size(b1, sizeof(b1), objects.total, b),
			slabinfo_size(b2, sizeof(b2), partobj.total, b),
			slabinfo_size(b3, sizeof(b3), partobj.total * 100 / objects.total, b));
	slabinfo_printf(&set->out, "\nPer Cache         Average              Min              Max"
			"            Total\n");
	slabinfo_printf(&set->out, "----------------------------------------------------------"
			"------------------\n");
	unsigned long long n = used_caches;
	range_line(set, "#Objects", &objects, objects.total / n, objects.total, false, true, b);
	range_line(set, "#Slabs", &slabs, slabs.total / n, slabs.total, false, true, b);
	range_line(set, "#PartSlab", &partial, partial.total / n, partial.total, false, true, b);
	range_line(set, "%PartSlab", &ppart, ppart.total / n, partial.total * 100 / slabs.total,
		   true, true, b);
	range_line(set, "PartObjs", &partobj, partobj.total / n, partobj.total, false, true, b);
	range_line(set, "% PartObj", &ppartobj, ppartobj.total / n,
		   partobj.total * 100 / objects.total, true, true, b);
	range_line(set, "Memory", &size, size.total / n, size.total, false, true, b);
	range_line(set, "Used", &used, used.total / n, used.total, false, true, b);
	range_line(set, "Loss", &waste, waste.total / n, waste.total, false, true, b);
	slabinfo_printf(&set->out, "\nPer Object        Average              Min              Max\n");
	slabinfo_printf(&set->out, "---------------------------------------------------------"
			"---\n");
	range_line(set, "Memory", &memobj, total_memobj / objects.total, 0, false, false, b);
	range_line(set, "User", &objsize, used.total / objects.total, 0, false, false, b);
	range_line(set, "Loss", &objwaste, total_objwaste / objects.total, 0, false, false, b);
}

void slabinfo_xtotals(struct slabinfo_set *set, struct slabinfo_opts *opts)
{
	static const struct { const char *heading; bool loss, size, partial; } parts[] = {
		{ "\nSlabs sorted by size\n--------------------\n", false, true, false },
		{ "\nSlabs sorted by loss\n--------------------\n", true, false, false },
		{ "\nSlabs sorted by number of partial slabs\n"
		  "---------------------------------------\n", false, false, true },
	};
	slabinfo_totals(set, opts);
	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		slabinfo_printf(&set->out, "%s", parts[i].heading);
		opts->sort_loss = parts[i].loss;
		opts->sort_size = parts[i].size;
		opts->sort_partial = parts[i].partial;
		slabinfo_sort(set, opts);
		slabinfo_output(set, opts);
	}
	slabinfo_printf(&set->out, "\n");
}
