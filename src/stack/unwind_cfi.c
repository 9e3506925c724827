// SPDX-License-Identifier: MIT
/*
 * unwind_cfi.c - the walk of unwind_fast() (unwind.h): per frame, the rule
 * of its return address from a lock-free cache, else from the FDE
 * (unwind_fde.c, ~10K instructions), then the caller's (pc, rsp, rbp).
 *
 * A cache slot is one 64-bit word: the pc in the low 47 bits (a user-space
 * x86-64 address), the rule packed in the 17 above.  Readers and writers
 * race on slots with plain atomic loads and stores: a word is whole or
 * absent, never torn, and a collision just overwrites.  Rules that do not
 * fit are interpreted again at every walk.
 */
#define _GNU_SOURCE
#include "stack/unwind.h"

#if UNWIND_FAST
#include <sys/mman.h>

#include "stack/unwind_cfi.h"

#define CACHE_BITS	12	/* 4096 return addresses, 32 KiB */
#define PC_BITS		47
#define PC_MASK		((1ull << PC_BITS) - 1)
/*
 * Above the pc: CFA on rbp (1 bit), stop (1), the rbp slot j (4: the
 * caller's rbp at CFA - 8j, 0 unchanged), the CFA offset / 8 (11).
 */
#define ON_RBP		(1ull << PC_BITS)
#define STOP		(1ull << (PC_BITS + 1))
#define SLOT_SHIFT	(PC_BITS + 2)
#define SLOT_MAX	15u
#define OFF_SHIFT	(PC_BITS + 6)
#define OFF8_MAX	2047u

static uint64_t *cache;

void cfi_cache_init(void)
{
	if (__atomic_load_n(&cache, __ATOMIC_ACQUIRE))
		return;
	void *p = mmap(NULL, sizeof(*cache) << CACHE_BITS, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return;		/* every frame interpreted: slow, still right */
	uint64_t *none = NULL;
	if (!__atomic_compare_exchange_n(&cache, &none, (uint64_t *)p, false, __ATOMIC_RELEASE,
					 __ATOMIC_RELAXED))
		munmap(p, sizeof(*cache) << CACHE_BITS);
}

void cfi_cache_flush(void)
{
	uint64_t *c = __atomic_load_n(&cache, __ATOMIC_ACQUIRE);
	for (size_t i = 0; c && i < (size_t)1 << CACHE_BITS; i++)
		__atomic_store_n(&c[i], 0, __ATOMIC_RELAXED);
}

size_t cfi_cache_used(void)
{
	uint64_t *c = __atomic_load_n(&cache, __ATOMIC_ACQUIRE);
	size_t used = 0;
	for (size_t i = 0; c && i < (size_t)1 << CACHE_BITS; i++)
		used += __atomic_load_n(&c[i], __ATOMIC_RELAXED) != 0;
	return used;
}

static inline size_t slot_of(uintptr_t pc)
{
	return (size_t)((pc * 0x9e3779b97f4a7c15ull) >> (64 - CACHE_BITS));
}

/* @rule packed with @pc, or 0 if it does not fit a slot. */
static uint64_t pack(uintptr_t pc, const struct cfa_rule *rule)
{
	uint64_t j = rule->rbp_below / 8, k = rule->offset / 8;
	if (pc > PC_MASK || rule->rbp_below % 8 || j > SLOT_MAX || rule->offset % 8 || k > OFF8_MAX)
		return 0;
	/*
	 * cfi_walk() reads a cached rule's slots without checking they lie
	 * above the register the CFA is on (rsp: the frame; rbp: checked to be
	 * on the stack): so they must.  (A CFA on rbp with the slot below it
	 * is left to the checked path.)
	 */
	if (rule->rbp_below > rule->offset)
		return rule->kind == CFA_RSP ? pc | STOP : 0;
	uint64_t kind = rule->kind == CFA_RBP ? ON_RBP : rule->kind == CFA_STOP ? STOP : 0;
	return pc | kind | j << SLOT_SHIFT | k << OFF_SHIFT;
}

/* A cache miss: the rule from the FDE, cached if it fits; 0 if no FDE covers @pc. */
static __noinline uint64_t rule_miss(uint64_t *cache_slot, uintptr_t pc, struct cfa_rule *rule)
{
	/* pc - 1: a call's return address may be past its function's end (noreturn). */
	if (!cfi_rule_find(pc - 1, rule))
		return 0;
	uint64_t w = pack(pc, rule);
	if (cache_slot && w)
		__atomic_store_n(cache_slot, w, __ATOMIC_RELAXED);
	return 1;
}

/*
 * Reads only the stack slots the CFI names: the return address at CFA - 8
 * and the saved rbp, between the frame's rsp and a CFA that must rise
 * frame by frame and stay at or below @end: wrong CFI stops the walk,
 * never leads it off the stack.  A cached rule needs fewer checks: its
 * CFA is 8 bytes or more above rsp, or above an rbp checked to be aligned
 * and not below rsp, and its slots lie above that register (pack()).
 */
int cfi_walk(void **frames, uintptr_t *cfas, int size, uintptr_t pc, uintptr_t sp, uintptr_t bp,
	     uintptr_t end)
{
	uint64_t *c = __atomic_load_n(&cache, __ATOMIC_ACQUIRE);
	int n = 0;
	if (!IS_ALIGNED(sp, 8))
		end = sp;	/* nothing to read */
	for (;;) {
		if (cfas)
			cfas[n] = 0;
		frames[n++] = (void *)pc;
		if (n == size)
			break;
		uint64_t *slot = c ? &c[slot_of(pc)] : NULL;
		uint64_t w = slot ? __atomic_load_n(slot, __ATOMIC_RELAXED) : 0;
		uintptr_t cfa, below;
		if (likely((w & (PC_MASK | STOP)) == pc)) {	/* never for an empty slot: pc is not 0 */
			uintptr_t base = sp;
			if (w & ON_RBP) {
				/* Below rsp (the difference's sign) or unaligned: not a frame. */
				if ((bp - sp) & (1ull << 63 | 7))
					break;
				base = bp;	/* then bp + offset cannot wrap: sp < 2^47 */
			}
			cfa = base + (w >> OFF_SHIFT) * 8;
			below = (w >> SLOT_SHIFT & SLOT_MAX) * 8;
		} else {
			struct cfa_rule r;
			if ((w & PC_MASK) == pc || !rule_miss(slot, pc, &r) || r.kind == CFA_STOP)
				break;	/* a cached stop, no FDE, or a stop */
			cfa = (r.kind == CFA_RBP ? bp : sp) + r.offset;
			below = r.rbp_below;
			/* cfa - sp is huge if cfa < sp; sp <= end always. */
			if (cfa - sp - 1 >= end - sp || !IS_ALIGNED(cfa, 8) || below > cfa - sp)
				break;
		}
		if (unlikely(cfa > end))
			break;
		if (cfas)
			cfas[n - 1] = cfa;
		pc = *(const uintptr_t *)(cfa - 8);
		if (below)
			bp = *(const uintptr_t *)(cfa - below);
		sp = cfa;
		if (!pc)
			break;
	}
	return n;
}
#endif
