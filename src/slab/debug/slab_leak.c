// SPDX-License-Identifier: MIT
/*
 * slab_leak.c - slub_leak_check: at exit, the blocks the program can no
 * longer reach, summed by the call stack that allocated them (slubrun
 * --leak-check), as the kernel's kmemleak reports unreferenced objects.
 *
 * Only what carries an allocation track can be placed: objects of caches
 * with U (slub_debug=U) and the malloc library's debug extents, which it
 * adds through slub_leak_collect_extents().  The scan (leak_scan.c) marks
 * each block a pointer reaches; the others are the leaks.  Reachable
 * blocks are counted in one line (slub_leak_check_reachable lists them).
 * The lines say "leak", never "BUG", and count no error: a leak does not
 * stop the program under slub_abort_on_error.
 */
#define _GNU_SOURCE
#include "slab/debug/slab_leak.h"
#include "slab/debug/slab_kasan.h"
#include "slab/core/slab_common.h"
#include "slab/debug/slab_debug.h"
#include "slab/debug/leak_suppress.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/options.h"
#include "base/report.h"
#include "base/start.h"
#include "stack/stackdepot.h"
#include "stack/stacktrace.h"
#include "stack/unwind.h"
#include "page/page_alloc.h"

#define LEAK_SITES_MAX 16384		/* a power of two: open addressing */
#define LEAK_BLOCKS_MAX (64UL << 20)	/* blocks a scan can hold: 2.5 GiB of sparse map */
#define LEAK_SITES_PRINTED 64		/* the rest are summed in one line */
#define LEAK_FRAMES_PRINTED 5		/* the call site, then a few callers */

bool leak_table_init(struct leak_table *lt)
{
	memset(lt, 0, sizeof(*lt));
	lt->map_bytes = LEAK_SITES_MAX * sizeof(struct leak_site);
	lt->site = os_map_sparse(lt->map_bytes);	/* never malloc: it may be us */
	lt->max_blocks = LEAK_BLOCKS_MAX;
	lt->block_map_bytes = LEAK_BLOCKS_MAX * sizeof(struct leak_block);
	lt->block = os_map_sparse(lt->block_map_bytes);
	if (!lt->site || !lt->block) {
		leak_table_release(lt);
		return false;
	}
	/* Filled once, front to back, then dropped: a fault per 2 MiB, not per page. */
	os_huge_pages(lt->block, lt->block_map_bytes);
	return true;
}

void leak_table_release(struct leak_table *lt)
{
	if (lt->site)
		os_release(lt->site, lt->map_bytes);
	if (lt->block)
		os_release(lt->block, lt->block_map_bytes);
	lt->site = NULL;
	lt->block = NULL;
}

void leak_table_add(struct leak_table *lt, const void *start, size_t bytes, const struct track *t)
{
	if (lt->nr_blocks == lt->max_blocks) {
		lt->dropped++;
		return;
	}
	lt->block[lt->nr_blocks++] = (struct leak_block){
		(uintptr_t)start, bytes, t->addr, t->handle, 0, t->when
	};
}

/* A site is its whole stack (the depot's handle), or its caller where none was kept. */
static void leak_site_add(struct leak_table *lt, const struct leak_block *b)
{
	size_t bytes = b->bytes;
	lt->objects++;
	lt->bytes += bytes;
	uint64_t key = b->handle ? b->handle : (uint64_t)b->addr << 1 | 1;
	for (unsigned long i = (unsigned long)(key * 0x9e3779b97f4a7c15ULL >> 40), n = 0;
	     n < LEAK_SITES_MAX; i++, n++) {
		struct leak_site *site = &lt->site[i & (LEAK_SITES_MAX - 1)];
		if (!site->count) {
			site->key = key;
			site->addr = b->addr;
			site->handle = b->handle;
			lt->nr_sites++;
		} else if (site->key != key) {
			continue;
		}
		site->count++;
		site->bytes += bytes;
		site->ind_count += b->ind_objects;
		site->ind_bytes += b->ind_bytes;
		return;
	}
	lt->unplaced++;		/* the table is full */
}

/* ---- frees refused after a report -------------------------------------------------- */

#define REFUSED_MAX 1024		/* the latest, a ring: a bound on what a run may report */

struct refused {
	uintptr_t object;
	unsigned long when;		/* the allocation track's: tells a later reuse apart */
	uint32_t handle;
};

static struct refused refused_ring[REFUSED_MAX];
static unsigned long refused_next;

void leak_note_refused(const void *object, const struct track *alloc)
{
	unsigned long i = __atomic_fetch_add(&refused_next, 1, __ATOMIC_RELAXED) % REFUSED_MAX;
	struct refused *r = &refused_ring[i];
	__atomic_store_n(&r->when, alloc->when, __ATOMIC_RELAXED);
	__atomic_store_n(&r->handle, alloc->handle, __ATOMIC_RELAXED);
	__atomic_store_n(&r->object, (uintptr_t)object, __ATOMIC_RELEASE);
}

static bool was_refused(const void *object, const struct track *alloc)
{
	unsigned long n = __atomic_load_n(&refused_next, __ATOMIC_RELAXED);
	for (unsigned long i = 0; i < n && i < REFUSED_MAX; i++) {
		const struct refused *r = &refused_ring[i];
		if (__atomic_load_n(&r->object, __ATOMIC_ACQUIRE) == (uintptr_t)object &&
		    __atomic_load_n(&r->when, __ATOMIC_RELAXED) == alloc->when &&
		    __atomic_load_n(&r->handle, __ATOMIC_RELAXED) == alloc->handle)
			return true;
	}
	return false;
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
		const struct track *t = get_track(s, p, TRACK_ALLOC);
		if (was_refused(p, t)) {
			w->lt->refused++;
			w->lt->refused_bytes += get_orig_size(s, p);
			continue;
		}
		leak_table_add(w->lt, p, get_orig_size(s, p), t);
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
		for_each_kmem_cache_node(s, node, n)
			pthread_mutex_lock(&n->list_lock);
		page_for_each_block(collect_slab, &w);
		for_each_kmem_cache_node(s, node, n)
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

void leak_line(struct leak_out *o, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (!o->buf) {
		slub_report_line("%s", line);
		return;
	}
	size_t len = n < 0 ? 0 : (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1;
	if (o->cut || o->len + len + 1 > o->size) {
		o->cut = true;
		return;
	}
	memcpy(o->buf + o->len, line, len);
	o->buf[o->len + len] = '\n';
	o->len += len + 1;
}

static int by_bytes(const void *a, const void *b)
{
	const struct leak_site *x = a, *y = b;
	size_t xb = x->bytes + x->ind_bytes, yb = y->bytes + y->ind_bytes;
	if (xb != yb)
		return xb < yb ? 1 : -1;
	return (x->count < y->count) - (x->count > y->count);
}

static void print_site(struct leak_out *o, const struct leak_site *site)
{
	char sym[320];
	const uintptr_t *entries;
	unsigned int nr = site->handle ? stack_depot_fetch(site->handle, &entries) : 0;
	if (site->addr > 1)
		stack_trace_symbol(site->addr, sym, sizeof(sym));
	else
		snprintf(sym, sizeof(sym), "<no stack: allocated before tracking started>");
	char ind[96] = "";
	if (site->ind_count)
		snprintf(ind, sizeof(ind), " (%lu more, %zu bytes, reached only through %s)",
			 site->ind_count, site->ind_bytes, site->count == 1 ? "it" : "them");
	leak_line(o, "leak: %lu object%s, %zu bytes%s, allocated in %s", site->count,
		  site->count == 1 ? "" : "s", site->bytes, ind, sym);
	for (unsigned int i = 1; i < nr && i < LEAK_FRAMES_PRINTED; i++) {
		stack_trace_symbol(entries[i], sym, sizeof(sym));
		leak_line(o, "leak:     %s", sym);
	}
}

/*
 * Blocks no leak of the program's: those allocated before tracking started
 * (the dynamic loader's and libc's start-up, before the constructors ran:
 * no stack) and libc's stdio buffers (allocated in _IO_file_doallocate,
 * which glibc frees only in __libc_freeres(), as valgrind calls it).  Both
 * are told apart reliably; they are summed in one line, not listed.
 */
enum leak_kind { LEAK_PROGRAM, LEAK_STARTUP, LEAK_STDIO, LEAK_SUPPRESSED };
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
	if (leak_suppressed(site->addr, site->handle))
		return LEAK_SUPPRESSED;
	return LEAK_PROGRAM;
}

struct leak_sum {
	unsigned long kept, objects, libc_objects, suppressed_objects;
	size_t bytes, libc_bytes, suppressed_bytes;
	unsigned long ind_objects;	/* the program's sites' LEAK_INDIRECT blocks */
	size_t ind_bytes;
};

/*
 * The blocks whose scan state is @state (0: unreferenced, LEAK_REACHED),
 * summed by call site into lt->site, biggest first; the loader's and
 * libc's own counted apart.
 */
static void sum_sites(struct leak_table *lt, uint32_t state, struct leak_sum *sum)
{
	memset(lt->site, 0, lt->map_bytes);
	lt->nr_sites = lt->objects = lt->unplaced = 0;
	lt->bytes = 0;
	*sum = (struct leak_sum){ 0 };
	for (unsigned long i = 0; i < lt->nr_blocks; i++)
		if (lt->block[i].reached == state)
			leak_site_add(lt, &lt->block[i]);
	unsigned long used = 0;
	for (unsigned long i = 0; i < LEAK_SITES_MAX; i++)
		if (lt->site[i].count)
			lt->site[used++] = lt->site[i];
	qsort(lt->site, used, sizeof(*lt->site), by_bytes);
	for (unsigned long i = 0; i < used; i++) {
		struct leak_site *site = &lt->site[i];
		enum leak_kind kind = i < LEAK_SITES_CLASSIFIED ? leak_kind_of(site) : LEAK_PROGRAM;
		if (kind == LEAK_SUPPRESSED) {
			sum->suppressed_objects += site->count + site->ind_count;
			sum->suppressed_bytes += site->bytes + site->ind_bytes;
			continue;
		}
		if (kind != LEAK_PROGRAM) {
			sum->libc_objects += site->count + site->ind_count;
			sum->libc_bytes += site->bytes + site->ind_bytes;
			continue;
		}
		sum->objects += site->count;
		sum->bytes += site->bytes;
		sum->ind_objects += site->ind_count;
		sum->ind_bytes += site->ind_bytes;
		lt->site[sum->kept++] = *site;
	}
}

static void print_sites(struct leak_out *o, const struct leak_table *lt, const struct leak_sum *sum)
{
	for (unsigned long i = 0; i < sum->kept && i < LEAK_SITES_PRINTED; i++)
		print_site(o, &lt->site[i]);
	if (sum->kept > LEAK_SITES_PRINTED)
		leak_line(o, "leak: ... and %lu more call sites", sum->kept - LEAK_SITES_PRINTED);
}

void leak_listing(struct leak_out *o, struct leak_table *lt, bool scanned, const char *what)
{
	struct leak_sum lost, kept;
	sum_sites(lt, 0, &lost);
	if (!lost.objects) {
		leak_line(o, "leak: no leaks (pid %d)", getpid());
	} else {
		char ind[96] = "";
		if (lost.ind_objects)	/* valgrind's "indirectly lost" */
			snprintf(ind, sizeof(ind), "; %lu more block%s, %zu bytes, reached only "
				 "through them", lost.ind_objects, lost.ind_objects == 1 ? "" : "s",
				 lost.ind_bytes);
		leak_line(o, "leak: %lu block%s, %zu bytes %s %s%s (pid %d), from %lu call site%s%s:",
			  lost.objects, lost.objects == 1 ? "" : "s", lost.bytes,
			  scanned ? "unreferenced" : "left allocated", what,
			  scanned ? "" : ", reachable or not (the scan could not run)",
			  getpid(), lost.kept, lost.kept == 1 ? "" : "s", ind);
		print_sites(o, lt, &lost);
	}
	if (lost.libc_objects)
		leak_line(o, "leak: not counted: %lu block%s, %zu bytes of the loader's and libc's "
			  "own (start-up, stdio buffers)", lost.libc_objects,
			  lost.libc_objects == 1 ? "" : "s", lost.libc_bytes);
	if (lost.suppressed_objects)
		leak_line(o, "leak: suppressed: %lu block%s, %zu bytes (slub_leak_suppressions)",
			  lost.suppressed_objects, lost.suppressed_objects == 1 ? "" : "s",
			  lost.suppressed_bytes);
	if (scanned) {
		sum_sites(lt, LEAK_REACHED, &kept);
		unsigned long n = kept.objects + kept.libc_objects + kept.suppressed_objects;
		size_t b = kept.bytes + kept.libc_bytes + kept.suppressed_bytes;
		unsigned long apart = kept.libc_objects + kept.suppressed_objects;
		if (n && slub_opt(leak_check_reachable) && !kept.kept) {
			leak_line(o, "leak: still reachable: %lu block%s, %zu bytes, all of them the "
				  "loader's, libc's or suppressed", n, n == 1 ? "" : "s", b);
		} else if (n && slub_opt(leak_check_reachable)) {
			char rest[96] = "";
			if (apart)	/* counted, not listed: as the unreferenced ones */
				snprintf(rest, sizeof(rest), ", and %lu block%s of the loader's, libc's "
					 "or suppressed, not listed", apart, apart == 1 ? "" : "s");
			leak_line(o, "leak: still reachable: %lu block%s, %zu bytes, from %lu call site%s%s:",
				  n, n == 1 ? "" : "s", b, kept.kept, kept.kept == 1 ? "" : "s", rest);
			print_sites(o, lt, &kept);
		} else if (n) {
			leak_line(o, "leak: still reachable: %lu block%s, %zu bytes (not listed: "
				  "slub_leak_check_reachable=1 lists them)", n, n == 1 ? "" : "s", b);
		}
	}
	if (lt->refused)
		leak_line(o, "leak: not counted: %lu block%s, %zu bytes the program freed but libslub "
			  "kept, its free refused after a report above", lt->refused,
			  lt->refused == 1 ? "" : "s", lt->refused_bytes);
	if (lt->unplaced)
		leak_line(o, "leak: %lu blocks not placed (too many call sites)", lt->unplaced);
	if (lt->dropped)
		leak_line(o, "leak: %lu blocks not looked at (more than %lu)", lt->dropped,
			  lt->max_blocks);
}

void leak_collect(struct leak_table *lt)
{
	kasan_quiet_begin();	/* the tracks lie past the objects (slab_kasan.h) */
	collect_caches(lt);
	kasan_quiet_end();
	slub_leak_collect_extents(lt);
	leak_suppress_load();
}

static uintptr_t exit_caller_sp(void);

/* The listing; @at_exit: from the leak check's destructor (exit_caller_sp()). */
static void leak_report(bool at_exit)
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
	lt.stack_from = at_exit ? exit_caller_sp() : 0;	/* 0: the scan's own frame up */
	leak_collect(&lt);
	bool scanned = leak_scan(&lt);
	struct leak_out o = { 0 };
	slub_report_begin();
	leak_listing(&o, &lt, scanned, "at exit");
	slub_report_end();
	leak_table_release(&lt);
}

void slub_leak_report(void)
{
	leak_report(false);
}

/* Is @pc (a return address) in the function named @name, by the dynamic symbols? */
static bool pc_in(void *pc, const char *name)
{
	Dl_info info;
	/* pc - 1: inside the call, not past a call that ends a function. */
	return dladdr((char *)pc - 1, &info) && info.dli_sname && !strcmp(info.dli_sname, name);
}

/* Where the program called exit() (slub_leak_exit_from), by which thread of which process. */
static uintptr_t exit_from_sp, exit_from_thread;
static pid_t exit_from_pid;

void slub_leak_exit_from(uintptr_t sp)
{
	exit_from_sp = sp;
	exit_from_thread = os_thread_pointer();
	exit_from_pid = getpid();	/* a vfork child's exit() writes its parent's memory */
}

/*
 * After a return from main, the stack below exit()'s caller is exit's own
 * and its handlers', laid over frames the program had left: main's, and the
 * allocator's under it.  A word there that the exit path does not write
 * keeps its old value, and a pointer to a block main leaked, found there,
 * made the block reachable (the README's example, built with clang, every
 * run).  So the scan reads the stack from the CFA of exit()'s frame up,
 * where exit() was called by glibc's start code (its caller's caller is
 * __libc_start_main): main's registers are dead by then.  Where the
 * program called exit() itself, from where the malloc library's exit()
 * saved the caller's registers; else (libslub.so has no exit()) from the
 * scan's own frame (0): the registers the program holds live pointers in
 * are saved by the exit path, below exit()'s CFA.
 */
static uintptr_t exit_caller_sp(void)
{
	enum { FRAMES = 64 };
	void *frames[FRAMES];
	uintptr_t cfas[FRAMES];
	/* The program called exit(), the malloc library's: its registers are saved above @sp. */
	if (exit_from_sp && exit_from_thread == os_thread_pointer() && exit_from_pid == getpid())
		return exit_from_sp;
	unwind_prime_walk();
	int n = unwind_fast_cfa(frames, cfas, FRAMES);
	for (int i = 0; i + 2 < n; i++)
		if (cfas[i] && pc_in(frames[i], "exit"))
			return pc_in(frames[i + 2], "__libc_start_main") ? cfas[i] : 0;
	return 0;
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
		leak_report(true);
}
