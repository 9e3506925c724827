/* SPDX-License-Identifier: MIT */
/*
 * os.h - the OS layer: address space (reserve, commit, decommit, release),
 * CPUs, time and the page-size check.
 *
 * Every system call the allocator makes on memory goes through `slub_os`, a
 * small table of function pointers, so tests can make mmap fail and check
 * that each layer above returns NULL with errno = ENOMEM and stays whole.
 */
#ifndef SLUB_OS_H
#define SLUB_OS_H

#include <pthread.h>
#include <stdbool.h>
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
#include <sys/single_threaded.h>
#define SLUB_HAVE_SINGLE_THREADED 1
#else
#define SLUB_HAVE_SINGLE_THREADED 0
#endif
#include <sys/types.h>
#include <time.h>
#include "base/compiler.h"

struct slub_os_ops {
	void *(*mmap)(void *addr, size_t len, int prot, int flags, int fd, off_t off);
	int (*munmap)(void *addr, size_t len);
	int (*mprotect)(void *addr, size_t len, int prot);
	int (*madvise)(void *addr, size_t len, int advice);
	void *(*mremap)(void *old, size_t old_len, size_t new_len, int flags, void *new_addr);
};

/* The table in force; tests swap entries, restore from slub_os_default. */
extern __hidden struct slub_os_ops slub_os;
extern __hidden const struct slub_os_ops slub_os_default;

/* Upper bound on CPU numbers the per-CPU layers index (keeps arrays small). */
#define SLUB_MAX_CPUS 1024

/*
 * Address space.  os_reserve() returns @size bytes aligned to @align,
 * inaccessible and not charged (PROT_NONE, MAP_NORESERVE).  os_reserve_at()
 * reserves exactly [addr, addr + size) or fails without touching mappings
 * that are already there.  Both return NULL on failure.
 */
__hidden void *os_reserve(size_t size, size_t align);
/* The same, passing over aligned starts @known_taken says are taken (may be NULL). */
__hidden void *os_reserve_avoiding(size_t size, size_t align, bool (*known_taken)(uintptr_t at));
__hidden void *os_reserve_at(uintptr_t addr, size_t size);
/* Make reserved memory usable (read/write, zero-filled on first touch). */
__hidden int os_commit(void *addr, size_t size);
/*
 * Zeroed read-write memory for a big table touched sparsely: no commit
 * charge, and small pages only, so a touch costs one page, not 2 MiB.
 */
__hidden void *os_map_sparse(size_t size);
/*
 * Never back [addr, addr + size) with transparent huge pages, whatever the
 * system's setting: for memory touched a page here and there.
 */
__hidden void os_no_huge_pages(void *addr, size_t size);
/*
 * Ask for transparent huge pages on [addr, addr + size) (MADV_HUGEPAGE).
 * Both calls keep errno; where THP is not built in they do nothing.
 */
__hidden void os_huge_pages(void *addr, size_t size);
/* Is /sys/kernel/mm/transparent_hugepage/enabled "madvise"? */
__hidden bool os_thp_setting_is_madvise(void);
/*
 * Commit charged to the process, as a plain mmap is: the kernel's
 * overcommit check sees it, so an absurd request fails here with ENOMEM
 * (os_commit()'s mprotect of a MAP_NORESERVE reservation is never
 * charged).  Replaces what was there: fresh or discarded ranges only.
 */
__hidden int os_commit_charged(void *addr, size_t size);
/*
 * Read-write memory at [addr, addr + size) of address space not reserved,
 * mapped only if nothing is there (-EEXIST otherwise); @charged as
 * os_commit_charged(), else as os_commit().  errno is left as it was: a
 * failure here is a try, and the allocation may well succeed another way.
 */
__hidden int os_map_at(void *addr, size_t size, bool charged);
/*
 * Give the physical pages back; the range stays mapped and reads as zero.
 * MADV_DONTNEED, never MADV_FREE (that keeps old contents and RSS) and never
 * PROT_NONE (a racing reader of a stale free pointer must not fault).
 */
__hidden int os_decommit(void *addr, size_t size);
__hidden int os_release(void *addr, size_t size);
/*
 * Move the mapping [old, old + old_size) to @to, @new_size long (the rest
 * zero, charged as the old one), replacing what was reserved there.  The
 * kernel moves page tables; nothing is copied.  0 or -errno (then nothing
 * moved).
 */
__hidden int os_move(void *old, size_t old_size, void *to, size_t new_size);
/* Would the OS charge @size more bytes of private memory now?  (A mapping made and undone.) */
__hidden bool os_can_commit(size_t size);
/* Is the process's address space limited (RLIMIT_AS, ulimit -v)? */
__hidden bool os_address_space_limited(void);
/* Is every page of [addr, addr + size) mapped (by anyone)? */
__hidden bool os_range_mapped(void *addr, size_t size);
/*
 * Counting back from the end of the @pages pages at @addr (mapped), where
 * @want resident ones are found: returns the page index from which on
 * *@found (at least @want, unless 0 is returned) pages are resident.  A
 * page mincore() cannot tell about counts as not resident.
 */
__hidden unsigned long os_resident_cut(void *addr, unsigned long pages, unsigned long want,
				       unsigned long *found);

/*
 * Fault in [addr, addr + size) for writing with one call (MADV_POPULATE_WRITE,
 * Linux 5.14), for memory about to be written whole.  Best effort: errno
 * is kept, and a kernel without it is not asked again.
 */
__hidden void os_populate(void *addr, size_t size);

/* 0 when the system page size is the PAGE_SIZE we are built for. */
__hidden int os_check_page_size(void);
/*
 * Read a small file (sysfs) into @buf, NUL-terminated, with open/read, never
 * fopen (it allocates): its length, or -1.
 */
__hidden ssize_t os_read_small_file(const char *path, char *buf, size_t size);
/* Call @fn for each range of a sysfs list ("0-3,8-11\n"): 0, or -1 if it is malformed. */
__hidden int os_cpu_list_parse(const char *s, void (*fn)(unsigned int lo, unsigned int hi, void *arg),
			       void *arg);
/*
 * Ask for the pages of [addr, addr + size) on real node @node (mbind with
 * MPOL_PREFERRED, no libnuma): 0 or -errno.  Errno is kept.
 */
#define MAX_OS_NODES 1024
__hidden int os_bind_node(void *addr, size_t size, int node);
/* Number of possible CPUs (from sysfs), at most SLUB_MAX_CPUS. */
__hidden unsigned int os_possible_cpus(void);
/* Tests only: as if sysfs said @n (before start-up, which sizes the per-CPU slots by it). */
__hidden void os_set_possible_cpus(unsigned int n);

/*
 * The CPUs a per-CPU layer has used.  /sys may say 8192 CPUs are possible,
 * and a walk of them all (drain, fork, statistics) would touch a page or
 * more per CPU: the layers walk these instead.  CPU numbers may also reach
 * past the possible count (a fallback count, no sysfs), and a walk must
 * see those too.  A CPU is added before its state is first locked, under
 * @lock, which fork's prepare holds so that its walk stays the whole set.
 */
struct os_cpu_set {
	pthread_mutex_t lock;
	unsigned long bits[SLUB_MAX_CPUS / 64];
};
#define OS_CPU_SET_INIT { .lock = PTHREAD_MUTEX_INITIALIZER }

__hidden void os_cpu_set_add(struct os_cpu_set *set, unsigned int cpu);

/* Before @cpu's state in @set's layer is locked: one test once it was used. */
static inline void os_cpu_use(struct os_cpu_set *set, unsigned int cpu)
{
	if (unlikely(!(__atomic_load_n(&set->bits[cpu / 64], __ATOMIC_ACQUIRE) &
		       (1UL << (cpu % 64)))))
		os_cpu_set_add(set, cpu);
}

/* The first CPU of @set at or after @cpu and below @end (<= SLUB_MAX_CPUS), or @end. */
__hidden unsigned int os_cpu_next(const struct os_cpu_set *set, unsigned int cpu,
				  unsigned int end);
#define for_each_used_cpu(cpu, set, end)                                         \
	for (unsigned int cpu = os_cpu_next(set, 0, end); cpu < (end);           \
	     cpu = os_cpu_next(set, cpu + 1, end))
/* Monotonic clock in milliseconds (inline: every large block's free reads it). */
static inline uint64_t os_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);	/* vDSO, a few ns */
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}
/* The step of os_now_ms() (a kernel tick: 1 to 10 ms), rounded up. */
__hidden uint64_t os_clock_tick_ms(void);

/*
 * The CPU this thread runs on, from the rseq area glibc registers for every
 * thread; -1 there (rseq off, valgrind, thread exit) falls back to
 * sched_getcpu().  Always in [0, SLUB_MAX_CPUS).  The answer may be stale by
 * the time it is used: callers must be correct on any CPU.
 */
__hidden unsigned int os_current_cpu_slow(void);
extern __hidden ptrdiff_t os_rseq_offset;	/* 0: no rseq area */

static inline uintptr_t os_thread_pointer(void)
{
#if defined(__x86_64__)
	uintptr_t tp;
	__asm__("mov %%fs:0, %0" : "=r"(tp));
	return tp;
#elif defined(__aarch64__)
	uintptr_t tp;
	__asm__("mrs %0, tpidr_el0" : "=r"(tp));
	return tp;
#else
	return 0;
#endif
}

static inline unsigned int os_current_cpu(void)
{
	if (likely(os_rseq_offset)) {
		/* struct rseq: cpu_id_start at 0, cpu_id at 4 (kernel ABI). */
		const volatile int32_t *cpu_id = (const volatile int32_t *)
			(os_thread_pointer() + os_rseq_offset + 4);
		int32_t cpu = *cpu_id;
		if (likely(cpu >= 0 && cpu < SLUB_MAX_CPUS))
			return (unsigned int)cpu;
	}
	return os_current_cpu_slow();
}

/* Does the CPU have a 16-byte compare-and-swap (x86-64: cmpxchg16b)? */
__hidden bool os_has_cmpxchg16b(void);

/*
 * membarrier(2) for rseq: register once, and prove the fence works (0, or
 * -errno: then rseq mode must not be used); then restart every rseq
 * critical section running on @cpu (returns when none can still commit).
 */
__hidden int os_membarrier_register_rseq(void);
__hidden void os_membarrier_rseq(unsigned int cpu);
/* The same on every CPU at once: one system call for many slots; false if it failed. */
__hidden bool os_membarrier_rseq_all(void);

/* Called once at start-up. */
__hidden void os_init(void);

/*
 * Can this process have a single thread only?  glibc 2.32+ says so through
 * __libc_single_threaded, which pthread_create() clears before the new
 * thread exists.  Elsewhere: never assume it.
 */
static inline bool os_single_threaded(void)
{
#if SLUB_HAVE_SINGLE_THREADED
	return __atomic_load_n(&__libc_single_threaded, __ATOMIC_RELAXED);
#else
	return false;
#endif
}

/*
 * The allocator is no cancellation point (POSIX names no malloc function
 * among them), so its own I/O (reports, sysfs, statistics) runs with
 * cancellation off: a cancelled thread would otherwise unwind out of a
 * write() in a report and leave the locks held around it taken for good.
 */
static inline int os_cancel_off(void)
{
	int old;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
	return old;
}

static inline void os_cancel_restore(int old)
{
	int ignored;
	pthread_setcancelstate(old, &ignored);
}

/* Take (@lock) or release @m: fork handlers do both with one walk. */
static inline void os_mutex_hold(pthread_mutex_t *m, bool lock)
{
	if (lock)
		pthread_mutex_lock(m);
	else
		pthread_mutex_unlock(m);
}

#endif
