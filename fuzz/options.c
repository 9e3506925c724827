// SPDX-License-Identifier: MIT
/*
 * fuzz/options.c - libFuzzer target: the SLUB_OPTIONS line parser
 * (options_parse, base/options.c).  Any line must parse without a crash or
 * a hang, report each option it rejects exactly once, and leave a table
 * whose numbers are in range and whose strings are terminated (slub_debug's
 * by the grammar); parsing the line again, or the table written back as a
 * line, must give the same table.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <slub.h>
#include "base/options.h"
#include "base/report.h"
#include "fuzz.h"

/* The table's values, to compare two parses. */
struct snapshot {
	long value[NR_SLUB_OPTIONS];
	char str[NR_SLUB_OPTIONS][SLUB_OPTION_STR_MAX];
};

static struct snapshot before, after;

/* As tests/base/test_options.c: every option back to its default. */
static void reset(void)
{
	for (size_t i = 0; i < NR_SLUB_OPTIONS; i++) {
		slub_options[i].value = slub_options[i].def;
		slub_options[i].str[0] = 0;
	}
}

static void take(struct snapshot *s)
{
	for (size_t i = 0; i < NR_SLUB_OPTIONS; i++) {
		s->value[i] = slub_options[i].value;
		if (slub_options[i].type == OPT_STRING)
			memcpy(s->str[i], slub_options[i].str, SLUB_OPTION_STR_MAX);
		else
			s->str[i][0] = slub_options[i].str[0];
	}
}

static void same(const struct snapshot *a, const struct snapshot *b, const char *what)
{
	for (size_t i = 0; i < NR_SLUB_OPTIONS; i++) {
		if (a->value[i] != b->value[i])
			fuzz_fail("%s: %s is %ld, then %ld", what, slub_options[i].name, a->value[i],
				  b->value[i]);
		if (strcmp(a->str[i], b->str[i]))
			fuzz_fail("%s: %s is '%s', then '%s'", what, slub_options[i].name, a->str[i],
				  b->str[i]);
	}
}

/* Numbers in range, strings terminated, slub_debug as its grammar allows. */
static void table_consistent(void)
{
	char why[96];
	for (size_t i = 0; i < NR_SLUB_OPTIONS; i++) {
		const struct slub_option *o = &slub_options[i];
		if (o->type != OPT_STRING) {
			if (o->value < o->min || o->value > o->max)
				fuzz_fail("%s=%ld outside %ld..%ld", o->name, o->value, o->min, o->max);
			if (o->str[0])
				fuzz_fail("%s: the 1-byte string of a number was written", o->name);
			continue;
		}
		if (!memchr(o->str, 0, SLUB_OPTION_STR_MAX))
			fuzz_fail("%s: string not terminated", o->name);
	}
	const char *debug = slub_opt_str(slub_debug);
	const char *bad = debug[0] ? slub_debug_check(debug, why, sizeof(why)) : NULL;
	if (bad)
		fuzz_fail("slub_debug='%s' stored, though the grammar refuses it: %s", debug, bad);
}

/*
 * The table as a line.  A stored string holds no '"' if it came quoted,
 * and no blank if it came bare: one of the two forms always takes it back.
 */
static size_t table_line(char *buf, size_t size)
{
	size_t n = 0;
	for (size_t i = 0; i < NR_SLUB_OPTIONS; i++) {
		const struct slub_option *o = &slub_options[i];
		int k;
		if (o->type != OPT_STRING)
			k = snprintf(buf + n, size - n, "%s=%ld ", o->name, o->value);
		else if (!o->str[0])
			continue;
		else if (strchr(o->str, '"'))
			k = snprintf(buf + n, size - n, "%s=%s ", o->name, o->str);
		else
			k = snprintf(buf + n, size - n, "%s=\"%s\" ", o->name, o->str);
		if (k < 0 || (size_t)k >= size - n)
			fuzz_fail("the table does not fit %zu bytes as a line", size);
		n += (size_t)k;
	}
	return n;
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
	static char line_back[NR_SLUB_OPTIONS * (SLUB_OPTION_STR_MAX + 64)];
	char *line = fuzz_cstring(data, size);

	reset();
	unsigned long e = slub_errors();
	int rejected = options_parse(line, "fuzz", false);
	unsigned long reported = slub_errors() - e;
	if (rejected < 0 || reported != (unsigned long)rejected)
		fuzz_fail("%d options rejected, %lu reported", rejected, reported);
	table_consistent();
	take(&before);

	/* Again, quietly, over its own result: each token decides alone. */
	e = slub_errors();
	int again = options_parse(line, "fuzz", true);
	if (again != rejected || slub_errors() != e)
		fuzz_fail("parsed again: %d rejected (first %d), %lu reported quietly", again,
			  rejected, slub_errors() - e);
	take(&after);
	same(&before, &after, "parsed twice");

	/* The table written back as a line gives the same table. */
	table_line(line_back, sizeof(line_back));
	reset();
	int back = options_parse(line_back, "fuzz", true);
	if (back)
		fuzz_fail("the table as a line, '%s', had %d rejected", line_back, back);
	take(&after);
	same(&before, &after, "written back");

	reset();
	free(line);
	return 0;
}
