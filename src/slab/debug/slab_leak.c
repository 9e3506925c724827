// SPDX-License-Identifier: MIT
/*
 * slab_leak.c - slub_leak_check: at exit, what the program left allocated,
 * summed by the call stack that allocated it (slubrun --leak-check).
 *
 * Only what carries an allocation track can be placed: objects of caches
 * with U (slub_debug=U) and the malloc library's debug extents, which it
 * adds through slub_leak_collect_extents().  Nothing is scanned for
 * pointers, so a block still reachable from a global counts as much as a
 * lost one: the lines say "left allocated at exit", as valgrind's "still
 * reachable" and "definitely lost" together.  They say "leak", never
 * "BUG", and count no error: a leak does not stop the program under
 * slub_abort_on_error.
 */
#define _GNU_SOURCE
#include "slab/debug/slab_leak.h"
#include "slab/core/slab_common.h"
#include "slab/debug/slab_debug.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/options.h"
#include "base/report.h"
#include "base/start.h"
#include "stack/stackdepot.h"
#include "stack/stacktrace.h"
#include "page/page_alloc.h"

#define LEAK_SITES_MAX 16384		/* a power of two: open addressing */
#define LEAK_SITES_PRINTED 64		/* the rest are summed in one line */
#define LEAK_FRAMES_PRINTED 5		/* the call site, then a few callers */

bool leak_table_init(struct leak_table *lt)
{
	memset(lt, 0, sizeof(*lt));
	lt->map_bytes = LEAK_SITES_MAX * sizeof(struct leak_site);
	lt->site = os_map_sparse(lt->map_bytes);	/* never malloc: it may be us */
	return lt->site != NULL;
}

void leak_table_release(struct leak_table *lt)
{
	if (lt->site)
		os_release(lt->site, lt->map_bytes);
	lt->site = NULL;
}

/* A site is its whole stack (the depot's handle), or its caller where none was kept. */
void leak_table_add(struct leak_table *lt, const struct track *t, size_t bytes)
{
	lt->objects++;
	lt->bytes += bytes;
	uint64_t key = t->handle ? t->handle : (uint64_t)t->addr << 1 | 1;
	for (unsigned long i = (unsigned long)(key * 0x9e3779b97f4a7c15ULL >> 40), n = 0;
	     n < LEAK_SITES_MAX; i++, n++) {
		struct leak_site *site = &lt->site[i & (LEAK_SITES_MAX - 1)];
		if (!site->count) {
			site->key = key;
			site->addr = t->addr;
			site->handle = t->handle;
			lt->nr_sites++;
		} else if (site->key != key) {
			continue;
		}
		site->count++;
		site->bytes += bytes;
		return;
	}
	lt->unplaced++;		/* the table is full */
}

/* ---- the caches' objects ---------------------------------------------------------- */

struct cache_walk {
	struct kmem_cache *s;
	struct leak_table *lt;
};

static void collect_slab(struct page *head, void *arg)
{
	struct cache_walk *w = arg;
	struct kmem_cache *s = w->s;
	if (!(page_flags(head) & PG_slab) || READ_ONCE(head->compound_head) != (uintptr_t)s)
		return;
	struct slab *slab = page_slab(head);
	union slab_counters c = read_counters(slab);
	unsigned long free_map[SLAB_MAP_LONGS];
	if (!c.inuse || (slab_flags(slab) & PG_slab_disabled))
		return;
	slab_free_map(s, slab, free_map);
	for (unsigned int i = 0; i < c.objects; i++) {
		if (free_map[i / 64] & (1UL << (i % 64)))
			continue;
		void *p = slab_object_at(s, slab, i);
		leak_table_add(w->lt, get_track(s, p, TRACK_ALLOC), get_orig_size(s, p));
	}
}

/*
 * Every cache with U, under its list lock (a debug cache allocates and
 * frees under it, and has no CPU slab whose objects the slab's freelist
 * would not show).  Caches without U are not looked at: their objects
 * may sit on per-CPU freelists, and nothing says where they came from.
 */
static void collect_caches(struct leak_table *lt)
{
	struct list_head *pos;
	pthread_mutex_lock(&slab_caches_lock);
	list_for_each(pos, &slab_caches) {
		struct kmem_cache *s = list_entry(pos, struct kmem_cache, list);
		if (!(READ_ONCE(s->flags) & SLAB_STORE_USER))
			continue;
		struct cache_walk w = { s, lt };
		struct kmem_cache_node *n = &s->node[0];
		pthread_mutex_lock(&n->list_lock);
		page_for_each_block(collect_slab, &w);
		pthread_mutex_unlock(&n->list_lock);
	}
	pthread_mutex_unlock(&slab_caches_lock);
}

/* libslub.so has no extents; libslub-malloc.so replaces this (malloc_debug.c). */
__attribute__((weak)) void slub_leak_collect_extents(struct leak_table *lt)
{
	(void)lt;
}

/* ---- the listing ------------------------------------------------------------------- */

static int by_bytes(const void *a, const void *b)
{
	const struct leak_site *x = a, *y = b;
	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	return (x->count < y->count) - (x->count > y->count);
}

static void print_site(const struct leak_site *site)
{
	char sym[320];
	const uintptr_t *entries;
	unsigned int nr = site->handle ? stack_depot_fetch(site->handle, &entries) : 0;
	if (site->addr > 1)
		stack_trace_symbol(site->addr, sym, sizeof(sym));
	else
		snprintf(sym, sizeof(sym), "<no stack: allocated before tracking started>");
	slub_report_line("leak: %lu object%s, %zu bytes, allocated in %s", site->count,
			 site->count == 1 ? "" : "s", site->bytes, sym);
	for (unsigned int i = 1; i < nr && i < LEAK_FRAMES_PRINTED; i++) {
		stack_trace_symbol(entries[i], sym, sizeof(sym));
		slub_report_line("leak:     %s", sym);
	}
}

/*
 * Blocks no leak of the program's: those allocated before tracking started
 * (the dynamic loader's and libc's start-up, before the constructors ran:
 * no stack) and libc's stdio buffers (allocated in _IO_file_doallocate,
 * which glibc frees only in __libc_freeres(), as valgrind calls it).  Both
 * are told apart reliably; they are summed in one line, not listed.
 */
enum leak_kind { LEAK_PROGRAM, LEAK_STARTUP, LEAK_STDIO };
#define LEAK_SITES_CLASSIFIED 1024	/* naming a site costs; the rest count as the program's */

static enum leak_kind leak_kind_of(const struct leak_site *site)
{
	char sym[320];
	if (site->addr <= 1 && !site->handle)
		return LEAK_STARTUP;
	enum stack_trace_found found = stack_trace_symbol(site->addr, sym, sizeof(sym));
	if (found == STACK_SYM_FUNCTION && !strncmp(sym, "_IO_file_doallocate+", 20) &&
	    (strstr(sym, "[libc.so") || strstr(sym, "/libc.so")))	/* slub_report_paths: a path */
		return LEAK_STDIO;
	/* The dynamic loader's own blocks (tracked once slub_debug_frames=0 needs no unwinder). */
	if (strstr(sym, "/ld-linux") || strstr(sym, "[ld-linux"))
		return LEAK_STARTUP;
	return LEAK_PROGRAM;
}

void slub_leak_report(void)
{
	struct leak_table lt;
	if (!slub_debug_any(SLAB_STORE_USER)) {
		/* Saying "no leaks" here would be a guess: nothing was tracked. */
		slub_warn("leak check: no cache tracks allocations (slub_debug without U); "
			  "nothing to list");
		return;
	}
	if (!leak_table_init(&lt)) {
		slub_warn("leak check: no memory for the table of call sites; nothing listed");
		return;
	}
	collect_caches(&lt);
	slub_leak_collect_extents(&lt);
	/* Compact the open-addressed table, then the biggest sites first. */
	unsigned long used = 0, kept = 0, objects = 0, libc_objects = 0;
	size_t bytes = 0, libc_bytes = 0;
	for (unsigned long i = 0; i < LEAK_SITES_MAX; i++)
		if (lt.site[i].count)
			lt.site[used++] = lt.site[i];
	qsort(lt.site, used, sizeof(*lt.site), by_bytes);
	for (unsigned long i = 0; i < used; i++) {
		struct leak_site *site = &lt.site[i];
		if (i < LEAK_SITES_CLASSIFIED && leak_kind_of(site) != LEAK_PROGRAM) {
			libc_objects += site->count;
			libc_bytes += site->bytes;
			continue;
		}
		objects += site->count;
		bytes += site->bytes;
		lt.site[kept++] = *site;
	}
	slub_report_begin();
	if (!objects) {
		slub_report_line("leak: no leaks (pid %d)", getpid());
	} else {
		slub_report_line("leak: %lu block%s, %zu bytes left allocated at exit (pid %d), "
				 "from %lu call site%s; reachable or not (no scan is made):",
				 objects, objects == 1 ? "" : "s", bytes, getpid(), kept,
				 kept == 1 ? "" : "s");
		for (unsigned long i = 0; i < kept && i < LEAK_SITES_PRINTED; i++)
			print_site(&lt.site[i]);
		if (kept > LEAK_SITES_PRINTED)
			slub_report_line("leak: ... and %lu more call sites", kept - LEAK_SITES_PRINTED);
	}
	if (libc_objects)
		slub_report_line("leak: not counted: %lu block%s, %zu bytes of the loader's and libc's "
				 "own (start-up, stdio buffers)", libc_objects,
				 libc_objects == 1 ? "" : "s", libc_bytes);
	if (lt.unplaced)
		slub_report_line("leak: %lu blocks not placed (too many call sites)", lt.unplaced);
	slub_report_end();
	leak_table_release(&lt);
}

/*
 * After the program's own destructors and atexit handlers (a preloaded
 * library's destructor runs after those of the program, which was loaded
 * after it), in every process that has slub_leak_check (children inherit
 * it), or only in slub_leak_check_pid's.  A process that never allocated
 * lists nothing.
 */
__attribute__((destructor)) static void leak_check_at_exit(void)
{
	long pid = slub_opt(leak_check_pid);
	if (__atomic_load_n(&slub_started, __ATOMIC_ACQUIRE) && !slub_unusable &&
	    slub_opt(leak_check) && (!pid || pid == getpid()))
		slub_leak_report();
}
