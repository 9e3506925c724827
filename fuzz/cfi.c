// SPDX-License-Identifier: MIT
/*
 * fuzz/cfi.c - libFuzzer target: the unwinder's CIE/FDE parser and CFA
 * program interpreter (stack/unwind_fde.c, cfi_rule_parse) on hostile
 * .eh_frame bytes.  The bytes sit in a block of their own size, so ASan
 * catches any read outside them; a rule the parser returns must be one
 * the walker (unwind_cfi.c) can follow.
 *
 * Input: the pc as a signed 32-bit offset from the FDE's initial-location
 * field (where a pc-relative FDE counts from), the FDE's offset in the
 * section (16 bits, modulo its size), then the section: CIEs and FDEs.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stack/unwind.h"
#include "stack/unwind_cfi.h"
#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

#if UNWIND_FAST
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 7)
		return 0;
	int32_t pc_off;
	uint16_t fde_off;
	memcpy(&pc_off, data, 4);
	memcpy(&fde_off, data + 4, 2);
	size_t len = size - 6;
	uint8_t *sec = malloc(len);
	if (!sec)
		abort();
	memcpy(sec, data + 6, len);
	const uint8_t *fde = sec + fde_off % len;
	uintptr_t pc = (uintptr_t)fde + 8 + (uintptr_t)(intptr_t)pc_off;

	struct cfa_rule rule = { CFA_NONE, 0, 0 };
	if (cfi_rule_parse(fde, sec, sec + len, pc, &rule)) {
		if (rule.kind != CFA_RSP && rule.kind != CFA_RBP && rule.kind != CFA_STOP)
			fuzz_fail("a rule of kind %d", (int)rule.kind);
		if (rule.kind != CFA_STOP && !rule.offset)
			fuzz_fail("a CFA at offset 0 from its register: the walk would not rise");
		if (rule.kind == CFA_STOP && (rule.offset || rule.rbp_below))
			fuzz_fail("a stop rule with offset %u, rbp at -%u", rule.offset, rule.rbp_below);
	}
	free(sec);
	return 0;
}
#else
/* No CFI walker on this platform (unwind.h): nothing to parse. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	(void)data;
	(void)size;
	return 0;
}
#endif
