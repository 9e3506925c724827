/* SPDX-License-Identifier: MIT */
/*
 * unwind_cfi.h - the x86-64 DWARF CFI unwinder behind unwind_fast()
 * (stack/unwind.h): the rule of one frame (unwind_fde.c reads it from the
 * object's .eh_frame) and the cached walk (unwind_cfi.c).
 */
#ifndef SLUB_UNWIND_CFI_H
#define SLUB_UNWIND_CFI_H

#include "base/compiler.h"

/* How a frame's caller is found: all the walker can express. */
enum cfa_kind {
	CFA_NONE,	/* 0: an empty cache slot */
	CFA_RSP,	/* CFA = rsp + offset */
	CFA_RBP,	/* CFA = rbp + offset */
	CFA_STOP,	/* end of stack (RA undefined), signal frame, or a rule not expressible */
};

/*
 * The return address is at CFA - 8 and the caller's rsp is the CFA;
 * rbp_below 0: rbp unchanged, else the caller's rbp is at CFA - rbp_below.
 */
struct cfa_rule {
	enum cfa_kind kind;
	uint32_t offset;
	uint32_t rbp_below;
};

/*
 * The rule at @pc (a return address minus one: inside the calling
 * instruction), from the FDE covering it.  False if no object or FDE covers
 * @pc or its CFI cannot be read.  Lock-free, async-signal-safe, no allocation.
 */
__hidden bool cfi_rule_find(uintptr_t pc, struct cfa_rule *rule);
/*
 * The same from the FDE at @fde (its length word) and its CIE, reading
 * nothing outside [@lo, @hi): for the fuzz target (fuzz/cfi.c), on a
 * buffer of hostile bytes.  cfi_rule_find() bounds its reads by the
 * object's segment that holds the tables.
 */
__hidden bool cfi_rule_parse(const uint8_t *fde, const uint8_t *lo, const uint8_t *hi,
			     uintptr_t pc, struct cfa_rule *rule);

/* An object's .eh_frame_hdr, and the bytes [lo, hi) its tables may be read in. */
struct eh_tables {
	const uint8_t *hdr, *lo, *hi;
};
/* cfi_rule_find() in the tables @eh (tests: tables made up, at a page's edge). */
__hidden bool cfi_rule_find_in(const struct eh_tables *eh, uintptr_t pc, struct cfa_rule *rule);

/* The rule cache: mapped at priming (without it every frame is interpreted). */
__hidden void cfi_cache_init(void);
/* Forget every cached rule (tests: a cold cache). */
__hidden void cfi_cache_flush(void);
/* Slots in use (tests: dlclose() empties the cache). */
__hidden size_t cfi_cache_used(void);

/*
 * Walk from the frame at (@pc, @sp, @bp), a return address and the rsp and
 * rbp it returns with: @frames[0] = @pc, then each caller's return address.
 * Every read is in [@sp, @end), the stack @sp is on (@end <= @sp: @pc alone).
 * @cfas (or NULL): each frame's CFA, the rsp its function's caller returns
 * with (0 where the walk stopped before finding it).
 */
__hidden int cfi_walk(void **frames, uintptr_t *cfas, int size, uintptr_t pc, uintptr_t sp,
		      uintptr_t bp, uintptr_t end);

#endif
