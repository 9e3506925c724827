/* SPDX-License-Identifier: MIT */
/*
 * compiler.h - attributes and memory-access helpers shared by every layer.
 */
#ifndef SLUB_COMPILER_H
#define SLUB_COMPILER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define likely(x)   __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/* Internal, non-static symbols: visible across the library, not exported. */
#define __hidden     __attribute__((visibility("hidden")))
#define __noinline   __attribute__((noinline))
#define __cold       __attribute__((cold, noinline))
#define __printf(a, b) __attribute__((format(printf, a, b)))

/* Shared words read without a lock are read and written through these. */
#define READ_ONCE(x)         __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define WRITE_ONCE(x, v)     __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)
#define smp_load_acquire(p)  __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define smp_store_release(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)

/*
 * A flag a fast path reads while another thread may set it, where a stale
 * value costs nothing (the kernel's data_race()): a plain load, which the
 * compiler folds into a compare with memory (a relaxed atomic load costs
 * one more instruction there); under TSan an atomic one, so that the race
 * meant to be is not reported.
 */
#if defined(__SANITIZE_THREAD__)
#define SLUB_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SLUB_TSAN 1
#endif
#endif
#ifdef SLUB_TSAN
#define data_race(x) READ_ONCE(x)
#else
#define data_race(x) (x)
#endif

/* Raise *@p to @v if it is lower (relaxed: a statistic or a threshold). */
static inline void atomic_max_ulong(unsigned long *p, unsigned long v)
{
	unsigned long cur = __atomic_load_n(p, __ATOMIC_RELAXED);
	while (cur < v && !__atomic_compare_exchange_n(p, &cur, v, true, __ATOMIC_RELAXED,
						       __ATOMIC_RELAXED))
		;
}

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define ALIGN_UP(x, a)   (((x) + ((a) - 1)) & ~((uintptr_t)(a) - 1))
#define ALIGN_DOWN(x, a) ((x) & ~((uintptr_t)(a) - 1))
#define IS_ALIGNED(x, a) (((x) & ((uintptr_t)(a) - 1)) == 0)

#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

#endif
