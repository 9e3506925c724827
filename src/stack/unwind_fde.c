// SPDX-License-Identifier: MIT
/*
 * unwind_fde.c - a cache miss of the CFI unwinder (unwind_cfi.h): find the
 * FDE covering a pc, parse its CIE, run the CIE's initial instructions and
 * the FDE's up to the pc, and keep of the result what the walker needs (the
 * CFA rule, where rbp and the return address were saved).
 *
 * The FDE is found by glibc's _dl_find_object() (2.35+: lock-free and
 * async-signal-safe, in libc itself) and a binary search of the object's
 * .eh_frame_hdr table, not by libgcc's _Unwind_Find_FDE(): that would make
 * libslub depend on libgcc_s, and before gcc 12 it walks dl_iterate_phdr(),
 * which takes dl_load_lock (no use from a signal handler or inside dlopen).
 *
 * Offsets and lengths in the tables are trusted no further than the
 * loaded segment that holds .eh_frame_hdr: every read stays inside it (a
 * hole between segments is PROT_NONE, a page past the file's end SIGBUS).
 */
#define _GNU_SOURCE
#include "stack/unwind.h"

#if UNWIND_FAST
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <string.h>

#include "stack/unwind_cfi.h"

/* DW_EH_PE_*: pointer encodings (LSB Core, .eh_frame). */
#define PE_ABSPTR	0x00
#define PE_ULEB128	0x01
#define PE_UDATA2	0x02
#define PE_UDATA4	0x03
#define PE_UDATA8	0x04
#define PE_SLEB128	0x09
#define PE_SDATA2	0x0a
#define PE_SDATA4	0x0b
#define PE_SDATA8	0x0c
#define PE_PCREL	0x10
#define PE_DATAREL	0x30
#define PE_INDIRECT	0x80
#define PE_OMIT		0xff

/* DW_CFA_* opcodes: the primary ones carry an operand in their low 6 bits. */
enum {
	CFA_advance_loc = 0x40, CFA_offset = 0x80, CFA_restore = 0xc0,
	CFA_nop = 0x00, CFA_set_loc, CFA_advance_loc1, CFA_advance_loc2, CFA_advance_loc4,
	CFA_offset_extended, CFA_restore_extended, CFA_undefined, CFA_same_value,
	CFA_register, CFA_remember_state, CFA_restore_state, CFA_def_cfa,
	CFA_def_cfa_register, CFA_def_cfa_offset, CFA_def_cfa_expression, CFA_expression,
	CFA_offset_extended_sf, CFA_def_cfa_sf, CFA_def_cfa_offset_sf, CFA_val_offset,
	CFA_val_offset_sf, CFA_val_expression,
	CFA_GNU_args_size = 0x2e, CFA_GNU_negative_offset_extended = 0x2f,
};

/* x86-64 psABI DWARF register numbers. */
#define REG_RBP 6
#define REG_RSP 7
#define REG_RA  16

/* Bytes of CFI, read within one CIE or FDE record. */
struct cursor {
	const uint8_t *p, *end;
	bool bad;
};

static uint64_t get_bytes(struct cursor *c, unsigned int n)
{
	uint64_t v = 0;
	if (c->bad || (size_t)(c->end - c->p) < n) {
		c->bad = true;
		return 0;
	}
	memcpy(&v, c->p, n);	/* little-endian, unaligned */
	c->p += n;
	return v;
}

static uint64_t get_uleb(struct cursor *c)
{
	uint64_t v = 0;
	for (unsigned int shift = 0; c->p < c->end && shift < 64; shift += 7) {
		uint8_t b = *c->p++;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	c->bad = true;
	return 0;
}

static int64_t get_sleb(struct cursor *c)
{
	uint64_t v = 0;
	for (unsigned int shift = 0; c->p < c->end && shift < 64;) {
		uint8_t b = *c->p++;
		v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80)) {
			if (shift < 64 && (b & 0x40))
				v |= ~(uint64_t)0 << shift;
			return (int64_t)v;
		}
	}
	c->bad = true;
	return 0;
}

/* A pointer in encoding @enc; @datarel is the DW_EH_PE_datarel base. */
static uintptr_t get_ptr(struct cursor *c, uint8_t enc, uintptr_t datarel)
{
	uintptr_t at = (uintptr_t)c->p, v;
	switch (enc & 0x0f) {
	case PE_ABSPTR: case PE_UDATA8: case PE_SDATA8: v = get_bytes(c, 8); break;
	case PE_UDATA4: v = (uint32_t)get_bytes(c, 4); break;
	case PE_SDATA4: v = (uintptr_t)(int64_t)(int32_t)get_bytes(c, 4); break;
	case PE_UDATA2: v = (uint16_t)get_bytes(c, 2); break;
	case PE_SDATA2: v = (uintptr_t)(int64_t)(int16_t)get_bytes(c, 2); break;
	case PE_ULEB128: v = get_uleb(c); break;
	case PE_SLEB128: v = (uintptr_t)get_sleb(c); break;
	default: c->bad = true; return 0;
	}
	switch (enc & 0x70) {
	case 0: break;
	case PE_PCREL: v += at; break;
	case PE_DATAREL: v += datarel; break;
	default: c->bad = true;	/* textrel, funcrel, aligned: not in x86-64 .eh_frame */
	}
	return v;
}

/* One register's rule, as far as the walker cares. */
enum reg_how { REG_SAME, REG_UNDEF, REG_AT_CFA, REG_OTHER };
struct reg_rule {
	enum reg_how how;
	int64_t off;	/* REG_AT_CFA: saved at CFA + off */
};

/* The row of the CFI table at the pc, the columns the walker reads. */
struct cfi_row {
	int cfa_reg;	/* -1: DW_CFA_def_cfa_expression */
	int64_t cfa_off;
	struct reg_rule rbp, ra;
};

/* What the CIE says about its FDEs and their instructions. */
struct cie {
	uint64_t code_align;
	int64_t data_align;
	uint8_t fde_enc;
	bool has_aug_len, signal_frame;
	struct cursor insns;
};

/*
 * A cursor over the CIE or FDE record whose length word is at @p, all of
 * it inside @eh's bounds; false if it is not, or is a terminator or 64-bit
 * DWARF (never in .eh_frame).
 */
static bool open_record(const struct eh_tables *eh, const uint8_t *p, struct cursor *c)
{
	uint32_t len;
	if (p < eh->lo || p > eh->hi || eh->hi - p < 4)
		return false;
	memcpy(&len, p, 4);
	if (len == 0 || len == 0xffffffff || len > (size_t)(eh->hi - p - 4))
		return false;
	*c = (struct cursor){ p + 4, p + 4 + len, false };
	return true;
}

/* Parse the CIE at @p (its length word): false if malformed or unknown. */
static bool parse_cie(const struct eh_tables *eh, const uint8_t *p, struct cie *cie)
{
	struct cursor c;
	if (!open_record(eh, p, &c))
		return false;
	if (get_bytes(&c, 4) != 0)
		return false;	/* CIE id */
	uint8_t version = (uint8_t)get_bytes(&c, 1);
	if (version != 1 && version != 3)
		return false;
	const char *aug = (const char *)c.p;
	size_t aug_n = strnlen(aug, (size_t)(c.end - c.p));
	if (aug_n == (size_t)(c.end - c.p))
		return false;	/* unterminated: the cursor would pass its end */
	c.p += aug_n + 1;
	if (aug_n && aug[0] != 'z')
		return false;	/* "eh" and other pre-'z' augmentations */
	cie->code_align = get_uleb(&c);
	cie->data_align = get_sleb(&c);
	uint64_t ra = version == 1 ? get_bytes(&c, 1) : get_uleb(&c);
	if (ra != REG_RA)
		return false;
	cie->fde_enc = PE_ABSPTR;
	cie->has_aug_len = aug_n > 0;
	cie->signal_frame = false;
	if (cie->has_aug_len) {
		uint64_t n = get_uleb(&c);
		if (c.bad || n > (uint64_t)(c.end - c.p))
			return false;
		const uint8_t *aug_end = c.p + n;
		for (size_t i = 1; i < aug_n; i++) {
			switch (aug[i]) {
			case 'R': cie->fde_enc = (uint8_t)get_bytes(&c, 1); break;
			case 'L': get_bytes(&c, 1); break;
			case 'P': get_ptr(&c, (uint8_t)get_bytes(&c, 1) & ~PE_INDIRECT, 0); break;
			case 'S': cie->signal_frame = true; break;
			case 'B': case 'G': break;	/* no data */
			default: i = aug_n;	/* unknown: 'z' lets the rest be skipped */
			}
		}
		c.p = aug_end;
	}
	cie->insns = c;
	return !c.bad && cie->code_align;
}

#define STATE_DEPTH 8

/* The CIE's initial instructions or the FDE's: run them while loc <= @pc. */
struct interp {
	struct cfi_row row, initial;	/* initial: after the CIE's, for restore */
	struct cfi_row stack[STATE_DEPTH];
	unsigned int depth;
	uintptr_t loc, pc;
	const struct cie *cie;
};

static struct reg_rule *column(struct cfi_row *row, uint64_t reg)
{
	return reg == REG_RBP ? &row->rbp : reg == REG_RA ? &row->ra : NULL;
}

static void set_rule(struct interp *in, uint64_t reg, enum reg_how how, int64_t off)
{
	struct reg_rule *r = column(&in->row, reg);
	if (r) {
		r->how = how;
		r->off = off;
	}
}

static void restore_rule(struct interp *in, uint64_t reg)
{
	struct reg_rule *r = column(&in->row, reg);
	if (r)
		*r = *column(&in->initial, reg);
}

/* Advance loc by @delta code units: false once past the pc (the row is found). */
static bool advance(struct interp *in, uint64_t delta)
{
	uintptr_t loc = in->loc + delta * in->cie->code_align;
	if (loc > in->pc)
		return false;
	in->loc = loc;
	return true;
}

static void skip_block(struct cursor *c)
{
	uint64_t n = get_uleb(c);
	if (n > (uint64_t)(c->end - c->p))
		c->bad = true;
	else
		c->p += n;
}

/*
 * An offset operand @v (negated if @neg) times the data alignment; an
 * overflow (hostile CFI: the fuzz target found one) makes the record bad.
 */
static int64_t scaled(struct cursor *c, int64_t v, bool neg, int64_t da)
{
	int64_t out;
	if ((neg && __builtin_sub_overflow((int64_t)0, v, &v)) ||
	    __builtin_mul_overflow(v, da, &out)) {
		c->bad = true;
		return 0;
	}
	return out;
}

/* Run @c's instructions; false if one is malformed or unknown. */
static bool run_cfa_program(struct interp *in, struct cursor *c)
{
	int64_t da = in->cie->data_align;
	while (c->p < c->end && !c->bad) {
		uint8_t op = *c->p++, low = op & 0x3f;
		uint64_t reg;
		switch (op & 0xc0) {
		case CFA_advance_loc:
			if (!advance(in, low))
				return true;
			continue;
		case CFA_offset:
			set_rule(in, low, REG_AT_CFA, scaled(c, (int64_t)get_uleb(c), false, da));
			continue;
		case CFA_restore:
			restore_rule(in, low);
			continue;
		}
		switch (op) {
		case CFA_nop:
			break;
		case CFA_set_loc: {
			uintptr_t loc = get_ptr(c, in->cie->fde_enc, 0);
			if (loc > in->pc)
				return true;
			in->loc = loc;
			break;
		}
		case CFA_advance_loc1:
		case CFA_advance_loc2:
		case CFA_advance_loc4:
			if (!advance(in, get_bytes(c, op == CFA_advance_loc1 ? 1 : op == CFA_advance_loc2 ? 2 : 4)))
				return !c->bad;
			break;
		case CFA_offset_extended:
			reg = get_uleb(c);
			set_rule(in, reg, REG_AT_CFA, scaled(c, (int64_t)get_uleb(c), false, da));
			break;
		case CFA_offset_extended_sf:
			reg = get_uleb(c);
			set_rule(in, reg, REG_AT_CFA, scaled(c, get_sleb(c), false, da));
			break;
		case CFA_GNU_negative_offset_extended:
			reg = get_uleb(c);
			set_rule(in, reg, REG_AT_CFA, scaled(c, (int64_t)get_uleb(c), true, da));
			break;
		case CFA_restore_extended:
			restore_rule(in, get_uleb(c));
			break;
		case CFA_undefined:
			set_rule(in, get_uleb(c), REG_UNDEF, 0);
			break;
		case CFA_same_value:
			set_rule(in, get_uleb(c), REG_SAME, 0);
			break;
		case CFA_register:
		case CFA_val_offset:
			reg = get_uleb(c);
			get_uleb(c);
			set_rule(in, reg, REG_OTHER, 0);
			break;
		case CFA_val_offset_sf:
			reg = get_uleb(c);
			get_sleb(c);
			set_rule(in, reg, REG_OTHER, 0);
			break;
		case CFA_expression:
		case CFA_val_expression:
			reg = get_uleb(c);
			skip_block(c);
			set_rule(in, reg, REG_OTHER, 0);
			break;
		case CFA_remember_state:
			if (in->depth == STATE_DEPTH)
				return false;
			in->stack[in->depth++] = in->row;
			break;
		case CFA_restore_state:
			if (!in->depth)
				return false;
			in->row = in->stack[--in->depth];
			break;
		case CFA_def_cfa:
			in->row.cfa_reg = (int)get_uleb(c);
			in->row.cfa_off = (int64_t)get_uleb(c);
			break;
		case CFA_def_cfa_sf:
			in->row.cfa_reg = (int)get_uleb(c);
			in->row.cfa_off = scaled(c, get_sleb(c), false, da);
			break;
		case CFA_def_cfa_register:
			in->row.cfa_reg = (int)get_uleb(c);
			break;
		case CFA_def_cfa_offset:
			in->row.cfa_off = (int64_t)get_uleb(c);
			break;
		case CFA_def_cfa_offset_sf:
			in->row.cfa_off = scaled(c, get_sleb(c), false, da);
			break;
		case CFA_def_cfa_expression:
			skip_block(c);
			in->row.cfa_reg = -1;
			break;
		case CFA_GNU_args_size:
			get_uleb(c);
			break;
		default:
			return false;
		}
	}
	return !c->bad;
}

/* The row found, as a walker's rule (CFA_STOP where it cannot express it). */
static void row_to_rule(const struct cfi_row *row, bool signal_frame, struct cfa_rule *rule)
{
	rule->kind = CFA_STOP;
	rule->offset = 0;
	rule->rbp_below = 0;
	if (signal_frame || row->ra.how != REG_AT_CFA || row->ra.off != -8)
		return;		/* RA undefined (_start, a thread's clone) is the end of the stack */
	if (row->cfa_reg != REG_RSP && row->cfa_reg != REG_RBP)
		return;
	if (row->cfa_off <= 0 || row->cfa_off > UINT32_MAX)
		return;
	if (row->rbp.how == REG_AT_CFA) {
		if (row->rbp.off > -8 || row->rbp.off < -(int64_t)UINT32_MAX)
			return;
		rule->rbp_below = (uint32_t)-row->rbp.off;
	} else if (row->rbp.how != REG_SAME) {
		return;
	}
	rule->kind = row->cfa_reg == REG_RSP ? CFA_RSP : CFA_RBP;
	rule->offset = (uint32_t)row->cfa_off;
}

/* The FDE covering @pc in @eh's .eh_frame_hdr: its length word, or NULL. */
static const uint8_t *search_hdr(const struct eh_tables *eh, uintptr_t pc)
{
	const uint8_t *hdr = eh->hdr;
	if (hdr < eh->lo || hdr > eh->hi || eh->hi - hdr < 4)
		return NULL;
	if (hdr[0] != 1 || hdr[3] != (PE_DATAREL | PE_SDATA4) || hdr[1] == PE_OMIT || hdr[2] == PE_OMIT)
		return NULL;	/* no binary search table: not worth a linear .eh_frame scan */
	struct cursor c = { hdr + 4, eh->hi, false };
	get_ptr(&c, hdr[1], (uintptr_t)hdr);
	uintptr_t count = get_ptr(&c, hdr[2], (uintptr_t)hdr);
	/* Sorted (initial location, FDE) pairs, each sdata4 from @hdr, all in bounds. */
	const uint8_t *table = c.p;
	if (c.bad || !count || count > (uintptr_t)(eh->hi - table) / 8)
		return NULL;
	uintptr_t lo = 0, hi = count;
	while (hi - lo > 1) {
		uintptr_t mid = lo + (hi - lo) / 2;
		int32_t loc;
		memcpy(&loc, table + mid * 8, 4);
		if ((uintptr_t)hdr + (uintptr_t)(intptr_t)loc <= pc)
			lo = mid;
		else
			hi = mid;
	}
	int32_t ent[2];
	memcpy(ent, table + lo * 8, 8);
	if ((uintptr_t)hdr + (uintptr_t)(intptr_t)ent[0] > pc)
		return NULL;
	return hdr + ent[1];	/* open_record() checks it is in bounds */
}

/* The rule at @pc from the FDE at @fde, every read inside @eh's bounds. */
static bool parse_fde(const struct eh_tables *eh, const uint8_t *fde, uintptr_t pc,
		      struct cfa_rule *rule)
{
	struct cursor c;
	if (!open_record(eh, fde, &c))
		return false;
	uint32_t cie_off = (uint32_t)get_bytes(&c, 4);
	struct cie cie;
	/* The CIE pointer counts back from its own field, 4 bytes in. */
	if (c.bad || !cie_off || cie_off > (uintptr_t)(fde + 4 - eh->lo) ||
	    !parse_cie(eh, fde + 4 - cie_off, &cie))
		return false;
	uintptr_t begin = get_ptr(&c, cie.fde_enc, 0);
	uintptr_t range = get_ptr(&c, cie.fde_enc & 0x0f, 0);
	if (cie.has_aug_len)
		skip_block(&c);
	if (c.bad || pc < begin || pc - begin >= range)
		return false;	/* in a gap between FDEs */

	struct interp in = { .pc = pc, .loc = begin, .cie = &cie };
	in.row.cfa_reg = -1;
	in.row.rbp.how = REG_SAME;
	in.row.ra.how = REG_OTHER;	/* a CIE that never says where RA is: stop */
	if (!run_cfa_program(&in, &cie.insns))
		return false;
	in.initial = in.row;
	in.depth = 0;
	if (!run_cfa_program(&in, &c))
		return false;
	row_to_rule(&in.row, cie.signal_frame, rule);
	return true;
}

bool cfi_rule_find_in(const struct eh_tables *eh, uintptr_t pc, struct cfa_rule *rule)
{
	const uint8_t *fde = search_hdr(eh, pc);
	return fde && parse_fde(eh, fde, pc, rule);
}

bool cfi_rule_parse(const uint8_t *fde, const uint8_t *lo, const uint8_t *hi, uintptr_t pc,
		    struct cfa_rule *rule)
{
	const struct eh_tables eh = { NULL, lo, hi };
	return parse_fde(&eh, fde, pc, rule);
}

/*
 * The readable PT_LOAD segment of @obj that holds its .eh_frame_hdr (the
 * linkers put .eh_frame beside it), from the program headers after the
 * ELF header at the start of the object's mapping.
 */
static bool eh_segment(const struct dl_find_object *obj, struct eh_tables *eh)
{
	const uint8_t *start = obj->dlfo_map_start, *end = obj->dlfo_map_end;
	const Elf64_Ehdr *e = (const Elf64_Ehdr *)start;
	uintptr_t hdr = (uintptr_t)obj->dlfo_eh_frame;
	if (end - start < (ptrdiff_t)sizeof(*e) || memcmp(e->e_ident, ELFMAG, SELFMAG) ||
	    e->e_phentsize != sizeof(Elf64_Phdr) || e->e_phoff > (uint64_t)(end - start) ||
	    e->e_phnum > (uint64_t)(end - start - e->e_phoff) / sizeof(Elf64_Phdr))
		return false;
	const Elf64_Phdr *ph = (const Elf64_Phdr *)(start + e->e_phoff);
	uintptr_t bias = obj->dlfo_link_map->l_addr;
	for (unsigned int i = 0; i < e->e_phnum; i++) {
		uintptr_t lo = bias + ph[i].p_vaddr;
		if (ph[i].p_type != PT_LOAD || !(ph[i].p_flags & PF_R) || hdr < lo ||
		    hdr - lo >= ph[i].p_memsz)
			continue;
		if (lo < (uintptr_t)start || ph[i].p_memsz > (uintptr_t)end - lo)
			return false;
		*eh = (struct eh_tables){ obj->dlfo_eh_frame, (const uint8_t *)lo,
					  (const uint8_t *)lo + ph[i].p_memsz };
		return true;
	}
	return false;
}

bool cfi_rule_find(uintptr_t pc, struct cfa_rule *rule)
{
	struct dl_find_object obj;
	struct eh_tables eh;
	if (_dl_find_object((void *)pc, &obj) || !obj.dlfo_eh_frame || !eh_segment(&obj, &eh))
		return false;
	return cfi_rule_find_in(&eh, pc, rule);
}
#endif
