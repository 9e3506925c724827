/* SPDX-License-Identifier: MIT */
/*
 * fuzz/fuzz.h - what the libFuzzer targets of fuzz/ share: failing with a
 * message (libFuzzer then keeps the input as a crash), the input as a C
 * string, a reader of the input's bytes, and quiet reports.
 */
#ifndef SLUB_FUZZ_H
#define SLUB_FUZZ_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/options.h"
#include "base/report.h"

/* libFuzzer's entry points, which each target defines. */
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A broken invariant: said on stderr, then abort(), which libFuzzer counts as a crash. */
static inline __attribute__((noreturn, format(printf, 1, 2))) void fuzz_fail(const char *fmt, ...)
{
	char last[SLUB_REPORT_LINE];
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "fuzz: ");
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	slub_report_last(last, sizeof(last));
	fprintf(stderr, "\nfuzz: the library's last report: %s", last[0] ? last : "(none)\n");
	abort();
}

/* The bytes as a NUL-terminated string in a block of its own size (ASan sees past it). */
static inline char *fuzz_cstring(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (!s)
		abort();
	if (size)
		memcpy(s, data, size);
	s[size] = 0;
	return s;
}

/*
 * Reports go to /dev/null: the targets count them (slub_errors()) rather
 * than read them, and fuzz_fail() shows the last.  Before start-up, which
 * opens slub_report_file; report_init() for a target that never starts it.
 */
static inline void fuzz_quiet_reports(void)
{
	strcpy(slub_opt_str(report_file), "/dev/null");
	report_init();
}

/* The input read front to back; past its end every byte is 0. */
struct fuzz_in {
	const uint8_t *p, *end;
};

static inline uint8_t fuzz_byte(struct fuzz_in *in)
{
	return in->p < in->end ? *in->p++ : 0;
}

/* Up to @n bytes of the input (fewer at its end); their count in *@got. */
static inline const uint8_t *fuzz_bytes(struct fuzz_in *in, size_t n, size_t *got)
{
	const uint8_t *at = in->p;
	size_t left = (size_t)(in->end - in->p);
	*got = n < left ? n : left;
	in->p += *got;
	return at;
}

#endif
