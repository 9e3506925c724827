/* SPDX-License-Identifier: MIT */
/*
 * options.h - the one options table.
 *
 * Every tunable of every layer is one line of SLUB_OPTION_LIST: its name on
 * the "boot line", its type, default, range and a line of help.  Values come
 * from slub_setup() and then from the SLUB_OPTIONS environment variable, in
 * the kernel's boot-parameter grammar: space-separated `key` or `key=value`,
 * values may be double-quoted, `-` and `_` in names are interchangeable.
 * Later layers add their lines here.
 */
#ifndef SLUB_OPTIONS_H
#define SLUB_OPTIONS_H

#include <limits.h>

#include "base/compiler.h"

enum slub_opt_type { OPT_BOOL, OPT_INT, OPT_STRING };

#define SLUB_OPTION_STR_MAX 256

#define SLUB_SHEAVES_MAX 1024	/* the slab layer's SHEAF_CAPACITY_MAX */

/* X(id, name, type, default, min, max, help) */
#define SLUB_OPTION_LIST(X)                                                   \
	X(report_file, "slub_report_file", OPT_STRING, 0, 0, 0,              \
	  "append reports to this file instead of stderr")                    \
	X(decay_ms, "slub_decay_ms", OPT_INT, 250, 0, 3600000,               \
	  "free page blocks unused this long (ms) are given back to the OS")  \
	X(decommit_order, "slub_decommit_order", OPT_INT, 4, 0, 10,          \
	  "smallest free block (page order) the decay gives back")            \
	X(dirty_ratio, "slub_dirty_ratio", OPT_INT, 8, 0, 1024,              \
	  "free pages kept resident: at most the pages in use / N (0: no bound)") \
	X(decay_thread, "slub_decay_thread", OPT_BOOL, 0, 0, 1,              \
	  "a thread gives free pages back while the program makes no allocator call") \
	X(pcp_high, "slub_pcp_high", OPT_INT, 64, 0, 65536,                  \
	  "most pages a CPU's page lists hold per zone (0: no per-CPU lists)") \
	X(pcp_batch, "slub_pcp_batch", OPT_INT, 32, 1, 4096,                  \
	  "pages moved at once between a CPU's page lists and its zone")      \
	X(numa, "numa", OPT_STRING, 0, 0, 0,                                   \
	  "nodes: fake=<N> splits memory and CPUs into N fake nodes (the kernel's numa=fake), off: one node") \
	X(slub_min_order, "slub_min_order", OPT_INT, 0, 0, 10,                \
	  "smallest order of a slab")                                         \
	X(slub_max_order, "slub_max_order", OPT_INT, 3, 0, 10,                \
	  "largest order of a slab, unless one object needs more")            \
	X(slub_min_objects, "slub_min_objects", OPT_INT, 0, 0, 32767,         \
	  "objects a slab should hold (0: 4 * (fls(CPUs) + 1); 2.6.22 had 8)") \
	X(slub_cpu_partial, "slub_cpu_partial", OPT_BOOL, 1, 0, 1,            \
	  "keep a few partial slabs per CPU (CONFIG_SLUB_CPU_PARTIAL)")       \
	X(partial_keep_kb, "slub_partial_keep_kb", OPT_INT, 1024, 0, 1048576, \
	  "kmalloc's and malloc's caches keep emptied slabs on each node's partial list up to this many KiB (at least min_partial slabs); the decay thread gives them back") \
	X(slub_rseq, "slub_rseq", OPT_BOOL, 1, 0, 1,                          \
	  "per-CPU fast paths as rseq sequences when possible (0: cmpxchg16b)") \
	X(sheaves, "slub_sheaves", OPT_INT, 0, 0, SLUB_SHEAVES_MAX,           \
	  "objects per CPU sheaf for every non-debug cache, malloc's too (0: unqueued per-CPU slabs)") \
	X(malloc_sheaves, "slub_malloc_sheaves", OPT_INT, 32, 0, SLUB_SHEAVES_MAX, \
	  "objects per CPU sheaf for malloc's caches in libslub-malloc.so, when slub_sheaves is 0 and rseq runs (0: unqueued)") \
	X(malloc_sheaves_min, "slub_malloc_sheaves_min", OPT_INT, 0, 0, 8192,   \
	  "malloc's caches of smaller objects stay on unqueued cpu slabs (bytes; 64: no two objects on sheaves share a cache line)") \
	X(thread_sheaves, "slub_thread_sheaves", OPT_BOOL, 1, 0, 1,          \
	  "without rseq (valgrind, slub_rseq=0), malloc's classes keep a cache per thread of up to 32 free objects each (0: cmpxchg16b cpu slabs)") \
	X(populate_slabs, "slub_populate_slabs", OPT_INT, 4, 0, 1048576,     \
	  "slabs a cache holds before each new one is populated in one call, and its sheaf refills take more than a page's worth (0: never)") \
	X(populate_pages, "slub_populate_pages", OPT_BOOL, 1, 0, 1,           \
	  "fault in each untouched slab page with a call as the lazy link-up reaches it") \
	X(malloc_split, "slub_malloc_split", OPT_INT, 16, 0, 1048576,         \
	  "pages a kmalloc class of malloc holds before finer classes split it (0: at once)") \
	X(thp_mb, "slub_thp_mb", OPT_INT, 16, 0, 1048576,                     \
	  "large blocks of this many MiB or more ask for transparent huge pages (0: none)") \
	X(slub_merge, "slub_merge", OPT_BOOL, 1, 0, 1,                         \
	  "merge caches of compatible size and flags, as the kernel (slub_nomerge: 0)") \
	X(slub_debug, "slub_debug", OPT_STRING, 0, 0, 0,                      \
	  "debug flags [FZPUTO-] for every cache, or per list: P,kmalloc-*;U,dentry (bare: FZPU)") \
	X(exit_stats, "slub_exit_stats", OPT_STRING, 0, 0, 0,                 \
	  "at exit, append a table of the caches to this file (- : stderr)")  \
	X(exit_stats_pid, "slub_exit_stats_pid", OPT_INT, 0, 0, INT_MAX,       \
	  "only the process with this pid writes the slub_exit_stats table (0: every one)") \
	X(debug_frames, "slub_debug_frames", OPT_INT, 16, 0, 16,              \
	  "frames of the call stack slub_debug's U keeps per allocation and free (0: the caller only)") \
	X(leak_check, "slub_leak_check", OPT_BOOL, 0, 0, 1,                  \
	  "at exit, list the blocks no pointer reaches, by call site, as kmemleak (needs slub_debug U)") \
	X(leak_check_reachable, "slub_leak_check_reachable", OPT_BOOL, 0, 0, 1, \
	  "the leak check lists the blocks still reachable at exit too, by call site") \
	X(leak_suppressions, "slub_leak_suppressions", OPT_STRING, 0, 0, 0,      \
	  "a file of leak:PATTERN lines (LeakSanitizer's syntax): call sites the leak check does not list") \
	X(leak_min_age, "slub_leak_min_age", OPT_INT, 5000, 0, INT_MAX,       \
	  "a live leak scan (slabinfo -p PID --leaks) lists no block younger than this many ms (kmemleak's 5 s)") \
	X(leak_check_pid, "slub_leak_check_pid", OPT_INT, 0, 0, INT_MAX,      \
	  "only the process with this pid lists its leaks (0: every one)")    \
	X(exit_stats_internal, "slub_exit_stats_internal", OPT_BOOL, 0, 0, 1,  \
	  "the slub_exit_stats table shows the allocator's own caches (kmem_cache, sheaf-N) too") \
	X(exit_counters, "slub_exit_counters", OPT_BOOL, 0, 0, 1,            \
	  "the slub_exit_stats table is followed by each cache's statistics counters (-DSLUB_STATS=ON builds)") \
	X(abort_on_error, "slub_abort_on_error", OPT_BOOL, 0, 0, 1,           \
	  "after an error report, print the stack and abort() (warnings never stop)") \
	X(report_paths, "slub_report_paths", OPT_BOOL, 0, 0, 1,               \
	  "stack frames name their module by its path, for slub-symbolize (0: by its file name, as the kernel)") \
	X(exit_validate, "slub_exit_validate", OPT_BOOL, 1, 0, 1,             \
	  "with any slub_debug flag, validate every debug cache at exit and print an ERROR SUMMARY line") \
	X(error_exitcode, "slub_error_exitcode", OPT_INT, 0, 0, 255,          \
	  "at exit, if errors were reported, exit with this status (0: the program's own)") \
	X(agent, "slub_agent", OPT_BOOL, 0, 0, 1,                             \
	  "a thread answers slabinfo -p and slubfs on $XDG_RUNTIME_DIR/slub/<pid>.sock") \
	X(failslab, "failslab", OPT_STRING, 0, 0, 0,                          \
	  "fail slab allocations: <interval>,<probability %>,<space bytes>,<times (-1: no limit)>") \
	X(failslab_cache, "failslab_cache", OPT_STRING, 0, 0, 0,              \
	  "failslab fails only this cache's allocations (default: every cache)") \
	X(fail_page_alloc, "fail_page_alloc", OPT_STRING, 0, 0, 0,            \
	  "fail page allocations: <interval>,<probability %>,<space pages>,<times (-1: no limit)>") \
	X(fail_verbose, "fail_verbose", OPT_BOOL, 0, 0, 1,                    \
	  "report each failure failslab or fail_page_alloc injects, in one line") \
	X(init_on_alloc, "init_on_alloc", OPT_BOOL, 0, 0, 1,                  \
	  "zero every slab object when it is allocated (not caches with a constructor; RCU and P caches only for __GFP_ZERO)") \
	X(init_on_free, "init_on_free", OPT_BOOL, 0, 0, 1,                    \
	  "zero every slab object when it is freed (not caches with a constructor, RCU or P)") \
	X(freelist_random, "slab_freelist_random", OPT_BOOL, 0, 0, 1,         \
	  "a new slab's objects are handed out in a random order (CONFIG_SLAB_FREELIST_RANDOM)") \
	X(kfence_sample_every, "kfence.sample_every", OPT_INT, 0, 0, INT_MAX, \
	  "KFENCE: every N-th slab allocation comes from the guarded pool (1: all while it lasts; 0: off)") \
	X(kfence_sample_interval, "kfence.sample_interval", OPT_INT, 0, 0, 3600000, \
	  "KFENCE: one allocation every N ms comes from the guarded pool (0: off)") \
	X(kfence_num_objects, "kfence.num_objects", OPT_INT, 255, 1, 65535,   \
	  "KFENCE: objects in the guarded pool, each on a page between guard pages") \
	X(kasan, "kasan", OPT_BOOL, 1, 0, 1,                                  \
	  "under AddressSanitizer or valgrind, tell the tool every slab object's state (KASAN; 0: never)")

enum slub_option_id {
#define X(id, name, type, def, min, max, help) OPT_##id,
	SLUB_OPTION_LIST(X)
#undef X
	NR_SLUB_OPTIONS
};

struct slub_option {
	const char *name;
	enum slub_opt_type type;
	long def, min, max;
	const char *help;
	long value;			/* OPT_BOOL, OPT_INT */
	/*
	 * OPT_STRING: a buffer of SLUB_OPTION_STR_MAX bytes in bss (others: 1
	 * byte), not in the table: inline buffers made the table 4.4 KiB of
	 * .data, a page more copied on write in every process.
	 */
	char *str;
};

extern __hidden struct slub_option slub_options[NR_SLUB_OPTIONS];

#define slub_opt(id)     (slub_options[OPT_##id].value)
#define slub_opt_str(id) (slub_options[OPT_##id].str)

/*
 * Whitespace between options, and at the end of a slub_debug value: the
 * C locale's (an options file's CRLF line ends included).
 */
static inline bool option_space(char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

/* Parse a boot line into the table; returns the number of rejected options. */
__hidden int options_parse(const char *line, const char *origin, bool quiet);

/*
 * Whether this process writes the slub_exit_stats table: asked at exit,
 * since a forked child inherits the parent's options but not its pid.
 */
__hidden bool options_exit_stats_here(void);

/* Held while options change: slub_setup() and start-up. */
#include <pthread.h>
extern __hidden pthread_mutex_t options_lock;

/*
 * slub_debug (options_debug.c): NULL if @value follows the grammar, else
 * why not (maybe formatted into @buf); and the debug flags the option gives
 * the cache @name, and whether its 'O' asks to drop them where they would
 * raise the cache's slab order.
 */
__hidden const char *slub_debug_check(const char *value, char *buf, size_t n);
/* @value's length without the whitespace that ends it, which the grammar ignores. */
__hidden size_t slub_debug_len(const char *value);
__hidden unsigned int slub_debug_flags(const char *name, bool *higher_order_off);
/* Does slub_debug give any cache one of @flags? */
__hidden bool slub_debug_any(unsigned int flags);

#endif
