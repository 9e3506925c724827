// SPDX-License-Identifier: MIT
/*
 * slab_attr.c - the per-cache attributes of the kernel's /sys/kernel/slab/
 * <cache>/, as one table: name, read, and write where the kernel allows
 * one.  slabinfo, the live tree and the debug switches all go through it.
 * A read renders the exact text the kernel's file holds (one value and a
 * newline; " N<node>=" and " C<cpu>=" parts where the kernel prints them)
 * into the caller's buffer; nothing here allocates.
 *
 * Reads run while other threads allocate: each counts under the locks
 * that guard what it counts (a CPU's slot lock for its slabs, the node's
 * list lock for the partial list), so a figure is consistent with itself,
 * not with the figure read a moment before.
 */
#define _GNU_SOURCE
#include "slab/core/slab.h"
#include "slab/debug/slab_debug.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/options.h"
#include "base/percpu.h"
#include "stack/stacktrace.h"
#include "slab/core/stat_items.h"

/* The caller's buffer, filled as far as it goes; len counts what was wanted. */
struct attr_out {
	char *buf;
	size_t size, len;
	int err;	/* a read the attribute refuses (-ENOSYS) */
};

static __printf(2, 3) void emit(struct attr_out *o, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	size_t room = o->len < o->size ? o->size - o->len : 0;
	int n = vsnprintf(room ? o->buf + o->len : NULL, room, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->len += (size_t)n;
}

/* ---- counting objects, as the kernel's show_slab_objects ------------------ */

enum {
	SO_ALL = 1 << 0,	/* every slab of the node */
	SO_PARTIAL = 1 << 1,	/* the node's partial slabs */
	SO_CPU = 1 << 2,	/* the CPUs' slabs and partial slabs */
	SO_OBJECTS = 1 << 3,	/* objects in use, not slabs */
	SO_TOTAL = 1 << 4,	/* all objects, not slabs */
};

/* What @flags counts of one slab: all its objects, those in use, or 1. */
static unsigned long slab_count(struct slab *slab, unsigned int flags)
{
	union slab_counters c = read_counters(slab);
	if (flags & SO_TOTAL)
		return c.objects;
	if (flags & SO_OBJECTS)
		return c.inuse;
	return 1;
}

/* Free objects (or @flags' count) on the node's partial list. */
static unsigned long count_partial(struct kmem_cache_node *n, unsigned int flags, bool free)
{
	unsigned long x = 0;
	pthread_mutex_lock(&n->list_lock);
	for (struct list_head *pos = n->partial.next; pos != &n->partial; pos = pos->next) {
		struct slab *slab = lru_slab(pos);
		if (free) {
			union slab_counters c = read_counters(slab);
			x += c.objects - c.inuse;
		} else {
			x += slab_count(slab, flags);
		}
	}
	pthread_mutex_unlock(&n->list_lock);
	return x;
}

/* Objects parked in sheaves, per node: free to the program, so not in use. */
static void parked_nodes(struct kmem_cache *s, unsigned long *nodes)
{
	if (nr_node_ids == 1)
		nodes[0] = slab_parked(s);
	else if (READ_ONCE(s->sheaf_capacity))
		sheaf_parked_nodes(s, nodes);	/* no thread sheaves with more than one node */
}

/*
 * The kernel's show_slab_objects(): the count, then each node's part as
 * " N<node>=<count>" where it is not 0 (a NUMA kernel's form, so with one
 * node " N0=" follows any count but 0).
 */
static void show_slab_objects(struct kmem_cache *s, struct attr_out *o, unsigned int flags)
{
	unsigned long nodes[MAX_NUMNODES] = { 0 }, total = 0;

	if (flags & SO_CPU) {
		for_each_used_cpu(cpu, &slab_cpus, s->nr_cpu_slots) {
			struct kmem_cache_cpu *c = cpu_slot(s, cpu);
			pthread_mutex_lock(&c->lock);
			if (c->slab) {
				nodes[slab_nid(c->slab)] += slab_count(c->slab, flags);
				/* The kernel counts partial slabs here, not their objects. */
				if (!(flags & (SO_TOTAL | SO_OBJECTS)))
					for (struct slab *p = c->partial; p; p = slab_next(p))
						nodes[slab_nid(p)]++;
			}
			pthread_mutex_unlock(&c->lock);
		}
	}
	unsigned long parked[MAX_NUMNODES] = { 0 };
	if ((flags & SO_ALL) && (flags & SO_OBJECTS))
		parked_nodes(s, parked);
	for_each_kmem_cache_node(s, node, n) {
		unsigned long x = 0;
		if (flags & SO_ALL) {
			if (flags & SO_TOTAL) {
				x = READ_ONCE(n->total_objects);
			} else if (flags & SO_OBJECTS) {
				unsigned long free = count_partial(n, 0, true) + parked[node];
				unsigned long all = READ_ONCE(n->total_objects);
				x = all > free ? all - free : 0;
			} else {
				x = READ_ONCE(n->nr_slabs);
			}
		} else if (flags & SO_PARTIAL) {
			if (flags & (SO_TOTAL | SO_OBJECTS))
				x = count_partial(n, flags, false);
			else
				x = READ_ONCE(n->nr_partial);
		}
		nodes[node] += x;
	}
	for (unsigned int node = 0; node < nr_node_ids; node++)
		total += nodes[node];
	emit(o, "%lu", total);
	for (unsigned int node = 0; node < nr_node_ids; node++)
		if (nodes[node])
			emit(o, " N%u=%lu", node, nodes[node]);
	emit(o, "\n");
}

/* ---- the attributes ----------------------------------------------------------- */

#define SHOW(attr) static void attr##_show(struct kmem_cache *s, struct attr_out *o)
#define STORE(attr) static int attr##_store(struct kmem_cache *s, const char *buf)

SHOW(slab_size) { emit(o, "%u\n", s->size); }
SHOW(object_size) { emit(o, "%u\n", READ_ONCE(s->object_size)); }
SHOW(objs_per_slab) { emit(o, "%u\n", oo_objects((struct kmem_cache_order_objects){ READ_ONCE(s->oo.x) })); }
SHOW(order) { emit(o, "%u\n", oo_order((struct kmem_cache_order_objects){ READ_ONCE(s->oo.x) })); }
SHOW(min_partial) { emit(o, "%u\n", READ_ONCE(s->min_partial)); }
SHOW(cpu_partial) { emit(o, "%u\n", READ_ONCE(s->cpu_partial)); }
SHOW(align) { emit(o, "%u\n", s->align); }
SHOW(usersize) { emit(o, "%u\n", s->usersize); }
/* Objects per sheaf; 0: cpu slabs instead.  objects counts what sheaves hold as free. */
SHOW(sheaf_capacity) { emit(o, "%u\n", READ_ONCE(s->sheaf_capacity)); }
SHOW(aliases)
{
	int refs = READ_ONCE(s->refcount);
	emit(o, "%d\n", refs < 0 ? 0 : refs - 1);
}
SHOW(objects) { show_slab_objects(s, o, SO_ALL | SO_OBJECTS); }
SHOW(objects_partial) { show_slab_objects(s, o, SO_PARTIAL | SO_OBJECTS); }
SHOW(total_objects) { show_slab_objects(s, o, SO_ALL | SO_TOTAL); }
SHOW(slabs) { show_slab_objects(s, o, SO_ALL); }
/*
 * libslub's own: the pages the cache's slabs hold.  Slabs made before a
 * write of order keep their order, so slabs x the order is not the space
 * (the slabinfo core reads this where it exists).
 */
SHOW(total_pages)
{
	unsigned long pages = 0;
	for_each_kmem_cache_node(s, node, n)
		pages += READ_ONCE(n->total_pages);
	emit(o, "%lu\n", pages);
}
SHOW(partial) { show_slab_objects(s, o, SO_PARTIAL); }
SHOW(cpu_slabs) { show_slab_objects(s, o, SO_CPU); }

/* A flag as 0 or 1. */
#define FLAG_SHOW(attr, flag) SHOW(attr) { emit(o, "%d\n", !!(s->flags & (flag))); }
FLAG_SHOW(hwcache_align, SLAB_HWCACHE_ALIGN)
FLAG_SHOW(reclaim_account, SLAB_RECLAIM_ACCOUNT)
FLAG_SHOW(destroy_by_rcu, SLAB_TYPESAFE_BY_RCU)
/*
 * libslub's own: what waits for an RCU grace period (src/slab/rcu/):
 * objects queued by kfree_rcu() (or a poisoning debug free of an RCU
 * cache), and SLAB_TYPESAFE_BY_RCU slabs on their way back to the pages.
 */
SHOW(rcu_pending_objects) { emit(o, "%lu\n", __atomic_load_n(&s->rcu_pending_objects, __ATOMIC_RELAXED)); }
SHOW(rcu_pending_slabs) { emit(o, "%lu\n", __atomic_load_n(&s->rcu_pending_slabs, __ATOMIC_RELAXED)); }
FLAG_SHOW(cache_dma, SLAB_CACHE_DMA)
/*
 * The debug switches, writable as in 2.6.22: '1' on, anything else off,
 * only while the cache has no objects (-EBUSY), never on a merged cache
 * (-EINVAL) (slab_set_debug).  Tracking asks for the unwinder first: a
 * program's write is a safe place to ready it.
 */
#define FLAG_ATTR(attr, flag)						\
	FLAG_SHOW(attr, flag)						\
	STORE(attr)							\
	{								\
		if ((flag) & SLAB_STORE_USER && buf[0] == '1')		\
			stack_trace_prime();				\
		return slab_set_debug(s, flag, buf[0] == '1');		\
	}
FLAG_ATTR(sanity_checks, SLAB_CONSISTENCY_CHECKS)
FLAG_ATTR(red_zone, SLAB_RED_ZONE)
FLAG_ATTR(poison, SLAB_POISON)
FLAG_ATTR(store_user, SLAB_STORE_USER)
FLAG_ATTR(trace, SLAB_TRACE)

/*
 * The constructor as the kernel's %pS: symbol+offset/size where the
 * dynamic symbol table names it (dladdr1 allocates nothing), else its
 * address; nothing without one.
 */
SHOW(ctor)
{
	if (!s->ctor)
		return;
	void *addr = (void *)(uintptr_t)s->ctor;
	Dl_info info;
	const ElfW(Sym) *sym = NULL;
	if (dladdr1(addr, &info, (void **)&sym, RTLD_DL_SYMENT) && info.dli_sname && sym)
		emit(o, "%s+0x%lx/0x%lx\n", info.dli_sname,
		     (unsigned long)((uintptr_t)addr - (uintptr_t)info.dli_saddr),
		     (unsigned long)sym->st_size);
	else
		emit(o, "0x%lx\n", (unsigned long)(uintptr_t)addr);
}

/*
 * Free objects on the CPUs' partial lists and the slabs holding them, then
 * each CPU's part: "objects(slabs) C<cpu>=objects(slabs)".  The kernel
 * estimates the objects as half of each slab; here they are counted.  The
 * parts are rendered first, past room for the sums, and moved up behind
 * them: one pass, so the sums are the parts' sums.
 */
SHOW(slabs_cpu_partial)
{
	enum { SUMS_ROOM = 48 };	/* "%lu(%lu)" */
	unsigned long objects = 0, slabs = 0;
	bool room = o->size > SUMS_ROOM;
	struct attr_out parts = { room ? o->buf + SUMS_ROOM : NULL, room ? o->size - SUMS_ROOM : 0,
				  0, 0 };
	for_each_used_cpu(cpu, &slab_cpus, s->nr_cpu_slots) {
		struct kmem_cache_cpu *c = cpu_slot(s, cpu);
		unsigned long cpu_objects = 0, cpu_slabs = 0;
		pthread_mutex_lock(&c->lock);
		for (struct slab *slab = c->partial; slab; slab = slab_next(slab), cpu_slabs++) {
			union slab_counters cnt = read_counters(slab);
			cpu_objects += cnt.objects - cnt.inuse;
		}
		pthread_mutex_unlock(&c->lock);
		objects += cpu_objects;
		slabs += cpu_slabs;
		if (cpu_slabs)
			emit(&parts, " C%u=%lu(%lu)", cpu, cpu_objects, cpu_slabs);
	}
	char sums[SUMS_ROOM];
	int n = snprintf(sums, sizeof(sums), "%lu(%lu)", objects, slabs);
	size_t sums_len = n > 0 ? (size_t)n : 0;
	if (o->len + sums_len + parts.len < o->size && parts.len < parts.size) {
		memmove(o->buf + o->len + sums_len, parts.buf, parts.len);
		memcpy(o->buf + o->len, sums, sums_len);
	}
	o->len += sums_len + parts.len;
	emit(o, "\n");
}

/* Text written to an attribute: one unsigned number, a newline allowed. */
static int parse_uint(const char *buf, unsigned long max, unsigned long *v)
{
	char *end;
	if (*buf < '0' || *buf > '9')
		return -EINVAL;
	errno = 0;
	unsigned long x = strtoul(buf, &end, 10);
	if (errno || x > max || (*end && strcmp(end, "\n")))
		return -EINVAL;
	*v = x;
	return 0;
}

STORE(order)
{
	unsigned long v;
	int err = parse_uint(buf, MAX_PAGE_ORDER, &v);
	return err ? err : slab_set_order(s, (unsigned int)v);
}

STORE(min_partial)
{
	unsigned long v;
	int err = parse_uint(buf, UINT32_MAX, &v);
	if (!err)
		WRITE_ONCE(s->min_partial, (unsigned int)v);
	return err;
}

STORE(cpu_partial)
{
	unsigned long v;
	int err = parse_uint(buf, MAX_OBJS_PER_PAGE, &v);
	if (err)
		return err;
	if (v && slab_no_cpu_partial(s))
		return -EINVAL;
	slab_set_cpu_partial(s, (unsigned int)v);
	kmem_cache_flush_all(s);
	return 0;
}

/* Write-only in effect: reading gives nothing, as the kernel's. */
SHOW(shrink) { (void)s; (void)o; }
STORE(shrink)
{
	if (buf[0] != '1')
		return -EINVAL;
	kmem_cache_shrink(s);
	return 0;
}

SHOW(validate) { (void)s; (void)o; }
STORE(validate)
{
	/* As the kernel: only a cache with debug flags keeps what a check needs. */
	if (buf[0] != '1' || !(s->flags & SLAB_DEBUG_FLAGS))
		return -EINVAL;
	slab_validate_cache(s);	/* each problem is reported */
	return 0;
}

/*
 * Where the objects in use were last allocated and freed, by call site
 * (slab_track.c); without U (SLAB_STORE_USER) the read is refused with
 * -ENOSYS, as the kernel's.
 */
static void show_locations(struct kmem_cache *s, struct attr_out *o, enum track_item item)
{
	size_t room = o->len < o->size ? o->size - o->len : 0;
	ssize_t n = slab_list_locations(s, item, room ? o->buf + o->len : NULL, room);
	if (n < 0)
		o->err = (int)n;
	else
		o->len += (size_t)n;
}

SHOW(alloc_calls) { show_locations(s, o, TRACK_ALLOC); }
SHOW(free_calls) { show_locations(s, o, TRACK_FREE); }

struct slab_attribute {
	const char *name;
	void (*show)(struct kmem_cache *s, struct attr_out *o);
	int (*store)(struct kmem_cache *s, const char *buf);
};

#define RO(attr) { #attr, attr##_show, NULL }
#define RW(attr) { #attr, attr##_show, attr##_store }

static const struct slab_attribute slab_attrs[] = {
	RO(slab_size), RO(object_size), RO(objs_per_slab), RW(order), RW(min_partial),
	RW(cpu_partial), RO(slabs_cpu_partial), RO(objects), RO(objects_partial),
	RO(total_objects), RO(total_pages), RO(slabs), RO(partial), RO(cpu_slabs), RO(ctor), RO(aliases),
	RO(align), RO(hwcache_align), RO(reclaim_account), RO(destroy_by_rcu), RO(rcu_pending_objects),
	RO(rcu_pending_slabs), RO(cache_dma),
	RW(sanity_checks), RW(red_zone), RW(poison), RW(store_user), RW(trace), RO(usersize),
	RW(shrink), RW(validate), RO(alloc_calls), RO(free_calls), RO(sheaf_capacity),
};

static const struct slab_attribute *find_attr(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(slab_attrs); i++)
		if (!strcmp(slab_attrs[i].name, name))
			return &slab_attrs[i];
	return NULL;
}

const char *slub_attr_name(unsigned int i, unsigned int *mode)
{
	if (i >= ARRAY_SIZE(slab_attrs))
		return slab_stat_attr_name(i - (unsigned int)ARRAY_SIZE(slab_attrs), mode);
	if (mode)
		*mode = slab_attrs[i].store ? 0644 : 0444;
	return slab_attrs[i].name;
}

ssize_t slub_attr_read(struct kmem_cache *s, const char *attr, char *buf, size_t len)
{
	if (!s || !attr || (!buf && len))
		return -EINVAL;
	struct attr_out o = { buf, len, 0, 0 };
	const struct slab_attribute *a = find_attr(attr);
	if (a)
		a->show(s, &o);
	else if (!slab_stat_show(s, attr, buf, len, &o.len))
		return -ENOENT;
	if (o.err)
		return o.err;
	if (o.len >= len)
		return -ENOSPC;	/* the text and its terminating NUL did not fit */
	buf[o.len] = 0;		/* an empty file (ctor, shrink) wrote nothing */
	return (ssize_t)o.len;
}

ssize_t slub_attr_write(struct kmem_cache *s, const char *attr, const char *buf, size_t len)
{
	char text[64];
	if (!s || !attr || !buf)
		return -EINVAL;
	const struct slab_attribute *a = find_attr(attr);
	int err;
	if (len >= sizeof(text))
		return -EINVAL;	/* no attribute takes that much */
	memcpy(text, buf, len);
	text[len] = 0;
	if (a)
		err = a->store ? a->store(s, text) : -EPERM;
	else if (!slab_stat_store(s, attr, text, &err))
		return -ENOENT;
	return err ? err : (ssize_t)len;
}
