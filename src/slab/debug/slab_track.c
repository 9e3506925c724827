// SPDX-License-Identifier: MIT
/*
 * slab_track.c - alloc/free tracking (slub_debug U): each object's last
 * allocation and last free, with the call stack kept once in the stack
 * depot, printed in reports, and summed by call site for the alloc_calls
 * and free_calls attributes.
 *
 * Stacks are captured before any allocator lock (the unwinder may fault in
 * unwind tables) and named only when printed (stack/stacktrace.h: no
 * dladdr, no allocation).  Times are milliseconds where the kernel counts
 * jiffies; pid is the process, tid the thread (the kernel's pid).
 */
#define _GNU_SOURCE
#include "slab/debug/slab_debug.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/maps.h"
#include "base/options.h"
#include "base/report.h"
#include "slab/core/kmalloc.h"
#include "stack/stackdepot.h"
#include "stack/stacktrace.h"

/* Frames captured beyond the ones kept: the allocator's own, dropped. */
#define TRACK_CAPTURE (TRACK_ADDRS_COUNT + 8)

/*
 * The allocator's own code is dropped from the front of a stack, so that a
 * track starts at the program's call (stack_trace_own_frame()); linked into
 * a program, these are the functions on the way from an entry point to a
 * capture, with the report paths' own.
 */
__attribute__((constructor(104))) static void track_own_functions(void)
{
	static const void *const path_functions[] = {
		track_save_stack, track_capture, debug_slab_alloc, debug_slab_free, slab_alloc_finish,
		slab_alloc_sized, slab_free_finish, __slab_free, __slab_alloc, kmem_cache_alloc,
		kmem_cache_alloc_node, kmem_cache_zalloc, kmem_cache_free, kmem_cache_alloc_bulk,
		kmem_cache_free_bulk, kmalloc, kmalloc_node, kzalloc, kmalloc_array, kcalloc, kfree,
		kfree_checked, krealloc, kmemdup, kstrdup, object_err, slab_err, debug_dump_stack,
		slab_double_free, slab_free_suspect, slub_validate,
	};
	static const void *const cold_functions[] = { slab_bad_free };
	stack_trace_add_own(path_functions, sizeof(path_functions) / sizeof(path_functions[0]), false);
	stack_trace_add_own(cold_functions, 1, true);
}

static bool own_frame(uintptr_t addr)
{
	return stack_trace_own_frame(addr);
}

/*
 * Up to slub_debug_frames frames (16, the kernel's TRACK_ADDRS_COUNT, at
 * most): each frame costs unwinding time on every tracked call (some 2000
 * instructions a frame with glibc's unwinder), and a whole program in
 * debug mode makes millions of them.  @ret: the allocator's caller if the
 * path to here was all tail calls (then a track with no stack needs no
 * unwinding at all), else an address of our own, or 0.
 */
__attribute__((noinline)) void track_save_stack(struct track_stack *ts, uintptr_t ret)
{
	uintptr_t frames[TRACK_CAPTURE];
	unsigned int keep = (unsigned int)slub_opt(debug_frames);
	ts->addr = 0;
	ts->handle = 0;
	if (!keep && ret && !own_frame(ret)) {
		ts->addr = ret;		/* slub_debug_frames=0: the caller alone */
		return;
	}
	unsigned int n = stack_trace_save(frames, (keep ? keep : 1) + TRACK_CAPTURE -
					  TRACK_ADDRS_COUNT, 0);
	unsigned int first = 0;
	while (first < n && own_frame(frames[first]))
		first++;
	if (first == n)
		return;
	ts->addr = frames[first];
	if (!keep)
		return;
	if (n - first > keep)
		n = first + keep;
	ts->handle = stack_depot_save(frames + first, n - first);
}

__attribute__((noinline)) void track_capture(const struct kmem_cache *s, struct track_stack *ts,
					     uintptr_t ret)
{
	ts->addr = 0;
	ts->handle = 0;
	if (READ_ONCE(s->flags) & SLAB_STORE_USER)	/* a switch may race: checked again under the lock */
		track_save_stack(ts, ret);
}

/* This thread's ids, asked once: getpid() and gettid() are system calls. */
static __thread int cached_pid __attribute__((tls_model("initial-exec")));
static __thread int cached_tid __attribute__((tls_model("initial-exec")));

void track_fork_child(void)
{
	cached_pid = cached_tid = 0;	/* the forking thread is the child's only one */
}

void track_fill(struct track *t, const struct track_stack *ts)
{
	if (unlikely(!cached_tid)) {
		cached_pid = getpid();
		cached_tid = gettid();
	}
	t->addr = ts->addr ? ts->addr : 1;	/* 1: tracked, no stack could be taken */
	t->handle = ts->handle;
	t->cpu = (int)os_current_cpu();
	t->pid = cached_pid;
	t->tid = cached_tid;
	t->when = os_now_ms();
}

void set_track(const struct kmem_cache *s, void *object, enum track_item alloc,
	       const struct track_stack *ts)
{
	if (s->flags & SLAB_STORE_USER)
		track_fill(get_track(s, object, alloc), ts);
}

void init_tracking(const struct kmem_cache *s, void *object)
{
	if (s->flags & SLAB_STORE_USER)
		memset(get_track(s, object, TRACK_ALLOC), 0, 2 * sizeof(struct track));
}

static void symbol_of(uintptr_t addr, char *buf, size_t len)
{
	if (addr <= 1)
		snprintf(buf, len, "<not-available>");
	else
		stack_trace_symbol(addr, buf, len);
}

void track_print(const char *what, const struct track *t, unsigned long now)
{
	char sym[320];
	if (!t->addr)
		return;
	symbol_of(t->addr, sym, sizeof(sym));
	slub_report_line("INFO: %s in %s age=%lu cpu=%d pid=%d tid=%d", what, sym,
			 now - t->when, t->cpu, t->pid, t->tid);
	const uintptr_t *entries;
	unsigned int nr = stack_depot_fetch(t->handle, &entries);
	if (nr)
		stack_trace_print(entries, nr, " ");
	else if (slub_opt(debug_frames))	/* 0: no stacks kept, by request */
		slub_report_line("object %s stack trace missing",
				 strcmp(what, "Freed") ? "allocation" : "free");
}

void print_tracking(const struct kmem_cache *s, void *object)
{
	if (!(s->flags & SLAB_STORE_USER))
		return;
	unsigned long now = os_now_ms();
	track_print("Allocated", get_track(s, object, TRACK_ALLOC), now);
	track_print("Freed", get_track(s, object, TRACK_FREE), now);
}

/* ---- alloc_calls and free_calls ------------------------------------------------------ */

/* One call site: the kernel's struct location, keyed by the caller's address. */
struct location {
	uintptr_t addr;
	unsigned long count;
	unsigned long sum_time, min_time, max_time;
	int min_pid, max_pid;
	unsigned long cpus[SLUB_MAX_CPUS / 64];
};

struct loc_track {
	struct location *loc;
	unsigned long count, max;
	size_t bytes;
};

/*
 * @t's CPU into @cpus.  A track is object memory, which the program may
 * have overwritten: a CPU out of range marks none (a negative one made the
 * shift undefined, one too large named another CPU).  Its other fields
 * are only compared, printed or checked by the depot (the handle).
 */
static void mark_cpu(unsigned long *cpus, const struct track *t)
{
	unsigned int cpu = (unsigned int)t->cpu;
	if (cpu < SLUB_MAX_CPUS)
		cpus[cpu / 64] |= 1UL << (cpu % 64);
}

/* Find or insert @t's site in the table kept sorted by address. */
static void add_location(struct loc_track *lt, const struct track *t, unsigned long now)
{
	unsigned long lo = 0, hi = lt->count, age = now - t->when;
	uintptr_t addr = t->addr > 1 ? t->addr : 0;
	while (lo < hi) {
		unsigned long mid = (lo + hi) / 2;
		if (lt->loc[mid].addr == addr) {
			struct location *l = &lt->loc[mid];
			l->count++;
			if (t->when) {
				l->sum_time += age;
				if (age < l->min_time)
					l->min_time = age;
				if (age > l->max_time)
					l->max_time = age;
				if (t->tid < l->min_pid)
					l->min_pid = t->tid;
				if (t->tid > l->max_pid)
					l->max_pid = t->tid;
				mark_cpu(l->cpus, t);
			}
			return;
		}
		if (lt->loc[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lt->count == lt->max)
		return;		/* full: the rest are not summed */
	memmove(&lt->loc[lo + 1], &lt->loc[lo], (lt->count - lo) * sizeof(struct location));
	lt->count++;
	struct location *l = &lt->loc[lo];
	memset(l, 0, sizeof(*l));
	l->addr = addr;
	l->count = 1;
	l->sum_time = l->min_time = l->max_time = age;
	l->min_pid = l->max_pid = t->tid;
	mark_cpu(l->cpus, t);
}

/* Sites of the objects in use of one slab (those not on its freelist). */
static void process_slab(struct kmem_cache *s, struct slab *slab, enum track_item alloc,
			 struct loc_track *lt, unsigned long now)
{
	unsigned long free_map[SLAB_MAP_LONGS];
	union slab_counters c = read_counters(slab);
	if (slab_flags(slab) & PG_slab_disabled)
		return;
	slab_free_map(s, slab, free_map);
	for (unsigned int i = 0; i < c.objects; i++)
		if (!(free_map[i / 64] & (1UL << (i % 64))))
			add_location(lt, get_track(s, slab_object_at(s, slab, i), alloc), now);
}

static int by_count(const void *a, const void *b)
{
	const struct location *x = a, *y = b;
	return x->count < y->count ? 1 : x->count > y->count ? -1 : (x->addr > y->addr) - (x->addr < y->addr);
}

/*
 * In place, by by_count(): a heap sort, not qsort(), which mallocs a merge
 * buffer for more than 1 KiB of sites (glibc before 2.37) - and the agent
 * reads alloc_calls inside its walk of the caches (src/agent/agent.c).
 */
static void sift_down(struct location *v, size_t root, size_t n)
{
	for (size_t child; (child = 2 * root + 1) < n; root = child) {
		if (child + 1 < n && by_count(&v[child], &v[child + 1]) < 0)
			child++;	/* the later of the two in the final order */
		if (by_count(&v[root], &v[child]) >= 0)
			return;
		struct location t = v[root];
		v[root] = v[child];
		v[child] = t;
	}
}

static void sort_locations(struct location *v, size_t n)
{
	for (size_t i = n / 2; i-- > 0;)
		sift_down(v, i, n);
	for (size_t end = n; end > 1; end--) {
		struct location t = v[0];
		v[0] = v[end - 1];
		v[end - 1] = t;
		sift_down(v, 0, end - 1);
	}
}

/* The CPU set as the kernel's %*pbl: "0-3,6". */
static int cpu_list(const unsigned long *cpus, char *buf, size_t len)
{
	int n = 0;
	for (unsigned int c = 0; c < SLUB_MAX_CPUS; c++) {
		if (!(cpus[c / 64] & (1UL << (c % 64))))
			continue;
		unsigned int end = c;
		while (end + 1 < SLUB_MAX_CPUS && (cpus[(end + 1) / 64] & (1UL << ((end + 1) % 64))))
			end++;
		n += snprintf(buf + n, len > (size_t)n ? len - (size_t)n : 0,
			      end > c ? "%s%u-%u" : "%s%u", n ? "," : "", c, end);
		c = end;
	}
	return n;
}

ssize_t slab_list_locations(struct kmem_cache *s, enum track_item alloc, char *buf, size_t len)
{
	if (!(s->flags & SLAB_STORE_USER))
		return -ENOSYS;
	struct loc_track lt = { .max = 4096 };
	lt.bytes = lt.max * sizeof(struct location);
	lt.loc = os_map_sparse(lt.bytes);
	if (!lt.loc)
		return -ENOMEM;
	unsigned long now = os_now_ms();
	struct list_head *pos;
	for_each_kmem_cache_node(s, node, n) {
		pthread_mutex_lock(&n->list_lock);
		list_for_each(pos, &n->partial)
			process_slab(s, lru_slab(pos), alloc, &lt, now);
		list_for_each(pos, &n->full)
			process_slab(s, lru_slab(pos), alloc, &lt, now);
		pthread_mutex_unlock(&n->list_lock);
	}
	sort_locations(lt.loc, lt.count);

	size_t used = 0;
#define OUT(...)                                                                          \
	used += (size_t)snprintf(used < len ? buf + used : NULL, used < len ? len - used : 0, \
				 __VA_ARGS__)
	for (unsigned long i = 0; i < lt.count; i++) {
		struct location *l = &lt.loc[i];
		char sym[320], cpus[256];
		symbol_of(l->addr, sym, sizeof(sym));
		OUT("%7lu %s", l->count, sym);
		if (l->sum_time != l->min_time)
			OUT(" age=%lu/%lu/%lu", l->min_time, l->sum_time / l->count, l->max_time);
		else
			OUT(" age=%lu", l->min_time);
		if (l->min_pid != l->max_pid)
			OUT(" pid=%d-%d", l->min_pid, l->max_pid);
		else
			OUT(" pid=%d", l->min_pid);
		if (os_possible_cpus() > 1 && cpu_list(l->cpus, cpus, sizeof(cpus)))
			OUT(" cpus=%s", cpus);
		OUT("\n");
	}
	if (!lt.count)
		OUT("No data\n");
#undef OUT
	os_release(lt.loc, lt.bytes);
	return (ssize_t)used;
}
