// SPDX-License-Identifier: MIT
/*
 * fuzz/slub_debug.c - libFuzzer target: the slub_debug grammar
 * (base/options_debug.c).  The input is a value, then cache names after
 * NUL bytes.  The check must take or refuse the value without reading past
 * its end, and its message must fit the caller's buffer; a value it takes
 * must give every name flags of the grammar's letters only, flags that
 * slub_debug_any() also finds, and the same flags to every name when the
 * value names no cache.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <slub.h>
#include "base/options.h"
#include "fuzz.h"

#define LETTER_FLAGS (SLAB_CONSISTENCY_CHECKS | SLAB_RED_ZONE | SLAB_POISON | SLAB_STORE_USER | \
		      SLAB_TRACE)
#define MAX_NAMES 16

/* Names every value is asked about besides the input's own. */
static const char *const fixed_names[] = {
	"kmalloc-64", "kmalloc-", "kmalloc", "dentry", "", "*",
	"a-cache-name-of-sixty-three-characters-which-is-the-longest-one",
};

/* The flags @name gets; checked against the value's other answers. */
static unsigned int flags_of(const char *name, bool names_none, unsigned int global,
			     const char *value)
{
	bool o = true;
	unsigned int f = slub_debug_flags(name, &o);
	if (f & ~LETTER_FLAGS)
		fuzz_fail("slub_debug='%s' gives '%s' flags %#x, not of F Z P U T", value, name, f);
	if (f && !slub_debug_any(f))
		fuzz_fail("slub_debug='%s' gives '%s' flags %#x that slub_debug_any() does not see",
			  value, name, f);
	if (names_none && f != global)
		fuzz_fail("slub_debug='%s' names no cache, yet gives '%s' %#x, others %#x", value,
			  name, f, global);
	return f;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_quiet_reports();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size);
	size_t vlen = nul ? (size_t)(nul - data) : size;
	char *value = fuzz_cstring(data, vlen);

	/* The message buffer, sized by the value: short ones cut the message. */
	size_t msg_size = 1 + vlen % 97;
	char *msg = malloc(msg_size);
	if (!msg)
		abort();
	const char *why = slub_debug_check(value, msg, msg_size);
	if (why == msg && !memchr(msg, 0, msg_size))
		fuzz_fail("slub_debug='%s': the message overran its %zu bytes", value, msg_size);
	if (why || vlen >= SLUB_OPTION_STR_MAX)
		goto out;	/* refused (or too long for the option, as apply_debug says) */

	strcpy(slub_opt_str(slub_debug), value);
	bool names_none = !strchr(value, ',');
	bool o;
	unsigned int global = slub_debug_flags("", &o);
	for (size_t i = 0; i < sizeof(fixed_names) / sizeof(fixed_names[0]); i++)
		flags_of(fixed_names[i], names_none, global, value);
	/* The input's names, each a block of its own size. */
	const uint8_t *p = nul ? nul + 1 : data + size, *end = data + size;
	for (int n = 0; p <= end && n < MAX_NAMES; n++) {
		const uint8_t *next = memchr(p, 0, (size_t)(end - p));
		size_t len = next ? (size_t)(next - p) : (size_t)(end - p);
		char *name = fuzz_cstring(p, len);
		flags_of(name, names_none, global, value);
		free(name);
		if (!next)
			break;
		p = next + 1;
	}
	slub_opt_str(slub_debug)[0] = 0;
out:
	free(msg);
	free(value);
	return 0;
}
