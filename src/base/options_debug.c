// SPDX-License-Identifier: MIT
/*
 * options_debug.c - the kernel's slub_debug grammar: which debug flags a
 * cache gets from the option, by its name.
 *
 *   slub_debug                    F, Z, P and U for every cache
 *   slub_debug=FZ                 these flags for every cache
 *   slub_debug=P,kmalloc-*,dentry these flags for the caches named ('*' ends
 *                                 a prefix), none for the others
 *   slub_debug=FZ;U,dentry        blocks: a block without names sets every
 *                                 cache's flags, one with names its caches'
 *   slub_debug=,dentry            names without flags: F, Z, P and U
 *
 * Letters (either case): F checks, Z red zones (R too, as the 2.6.22
 * drafts spelt it), P poisoning, U alloc/free tracking, T tracing, O no
 * debug metadata where it would raise a cache's slab order, - none.
 * Whitespace ending the value (a CRLF line end) is ignored; any other
 * character is not.  The value is checked whole when the option is
 * applied (a bad letter, an empty or malformed name rejects it, by name
 * and reason) and read again at each cache's creation, as the kernel
 * reads its boot string.
 */
#define _GNU_SOURCE
#include "base/options.h"

#include <stdio.h>
#include <string.h>

#include <slub.h>

#define DEBUG_DEFAULT_FLAGS (SLAB_CONSISTENCY_CHECKS | SLAB_RED_ZONE | SLAB_POISON | SLAB_STORE_USER)

struct debug_block {
	slab_flags_t flags;
	bool higher_order_off;		/* 'O' */
	const char *names, *end;	/* the name list, [names, end); names NULL: none */
};

size_t slub_debug_len(const char *value)
{
	size_t n = strlen(value);
	while (n && option_space(value[n - 1]))
		n--;
	return n;
}

/*
 * Parse the block at @p (the value ends at @end) into @b; returns the next
 * block, or NULL at the end.  A character not in the grammar is left in
 * *@bad (NUL if none).
 */
static const char *parse_block(const char *p, const char *end, struct debug_block *b,
			       char *bad)
{
	b->flags = 0;
	b->higher_order_off = false;
	b->names = NULL;
	while (p < end && *p == ';')
		p++;
	if (p < end && *p == ',') {
		b->flags = DEBUG_DEFAULT_FLAGS;	/* names without flags: full debugging */
	} else {
		for (; p < end && *p != ',' && *p != ';'; p++) {
			/* Letters alone folded: c | 0x20 would make '\r' a '-'. */
			switch (*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p) {
			case '-': b->flags = 0; break;
			case 'f': b->flags |= SLAB_CONSISTENCY_CHECKS; break;
			case 'z': case 'r': b->flags |= SLAB_RED_ZONE; break;
			case 'p': b->flags |= SLAB_POISON; break;
			case 'u': b->flags |= SLAB_STORE_USER; break;
			case 't': b->flags |= SLAB_TRACE; break;
			case 'o': b->higher_order_off = true; break;
			default:
				if (!*bad)
					*bad = *p;
			}
		}
	}
	if (p < end && *p == ',') {
		b->names = ++p;
		while (p < end && *p != ';')
			p++;
	}
	b->end = p;
	while (p < end && *p == ';')
		p++;
	return p < end ? p : NULL;
}

/* Does @name match the pattern [pat, pat_end): exactly, or a prefix ending in '*'? */
static bool name_matches(const char *name, const char *pat, const char *pat_end)
{
	size_t len = (size_t)(pat_end - pat);
	if (len && pat[len - 1] == '*')
		return !strncmp(name, pat, len - 1);
	return strlen(name) == len && !strncmp(name, pat, len);
}

const char *slub_debug_check(const char *value, char *buf, size_t n)
{
	struct debug_block b;
	const char *p = value, *end = value + slub_debug_len(value);
	do {
		char bad = 0;
		p = parse_block(p, end, &b, &bad);
		if (bad == 'a' || bad == 'A')
			return "A (per-cache failslab) is not available in libslub: use failslab= and failslab_cache=";
		if (bad >= ' ' && bad < 0x7f) {
			snprintf(buf, n, "'%c' is not a debug flag (F Z P U T O -)", bad);
			return buf;
		}
		if (bad) {	/* a control character or a byte past ASCII: by its code */
			snprintf(buf, n, "character 0x%02x is not a debug flag (F Z P U T O -)",
				 (unsigned char)bad);
			return buf;
		}
		if (!b.names)
			continue;
		for (const char *q = b.names; q <= b.end; q++) {
			const char *comma = memchr(q, ',', (size_t)(b.end - q));
			const char *e = comma ? comma : b.end;
			const char *star = memchr(q, '*', (size_t)(e - q));
			if (e == q)
				return "an empty cache name in the list";
			if (star && star != e - 1)
				return "'*' may only end a cache name";
			if (e - q >= 64)
				return "a cache name longer than 63 characters";
			for (const char *c = q; c < e; c++)
				if ((unsigned char)*c <= ' ' || *c == 0x7f || *c == '=')
					return "a space, control character or '=' in a cache name";
			q = e;
		}
	} while (p);
	return NULL;
}

/*
 * As the kernel's kmem_cache_flags(): the flags of the first block whose
 * list names @name, else those of the last block without a list, else
 * none.  A list without a global block leaves every other
 * cache alone.
 */
unsigned int slub_debug_flags(const char *name, bool *higher_order_off)
{
	const char *p = slub_opt_str(slub_debug), *end = p + slub_debug_len(p);
	slab_flags_t global = 0;
	bool global_o = false;
	struct debug_block b;
	*higher_order_off = false;
	if (p == end)
		return 0;
	do {
		char bad = 0;
		p = parse_block(p, end, &b, &bad);
		if (!b.names) {
			global = b.flags;
			global_o = b.higher_order_off;
			continue;
		}
		for (const char *q = b.names; q < b.end;) {
			const char *comma = memchr(q, ',', (size_t)(b.end - q));
			const char *e = comma ? comma : b.end;
			if (name_matches(name, q, e)) {
				*higher_order_off = b.higher_order_off;
				return b.flags;
			}
			q = e + 1;
		}
	} while (p);
	*higher_order_off = global_o;
	return global;
}

/* Does any block of slub_debug give some cache the flags in @flags? */
bool slub_debug_any(unsigned int flags)
{
	const char *p = slub_opt_str(slub_debug), *end = p + slub_debug_len(p);
	struct debug_block b;
	if (p == end)
		return false;
	do {
		char bad = 0;
		p = parse_block(p, end, &b, &bad);
		if (b.flags & flags)
			return true;
	} while (p);
	return false;
}
