// SPDX-License-Identifier: MIT
/*
 * options.c - the options table, the boot-line parser, slub_setup(),
 * the list of options (slub_print_options(), SLUB_OPTIONS=help).
 */
#define _GNU_SOURCE
#include "base/options.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <slub.h>
#include "base/fault_inject.h"
#include "base/numa.h"
#include "base/os.h"
#include "base/start.h"
#include "base/report.h"

#define X(id_, name_, type_, def_, min_, max_, help_) \
	static char opt_str_##id_[type_ == OPT_STRING ? SLUB_OPTION_STR_MAX : 1];
SLUB_OPTION_LIST(X)
#undef X

struct slub_option slub_options[NR_SLUB_OPTIONS] = {
#define X(id_, name_, type_, def_, min_, max_, help_) \
	[OPT_##id_] = { .name = name_, .type = type_, .def = def_, .min = min_, \
			.max = max_, .help = help_, .value = def_, .str = opt_str_##id_ },
	SLUB_OPTION_LIST(X)
#undef X
};

pthread_mutex_t options_lock = PTHREAD_MUTEX_INITIALIZER;

/* fork(): start-up holds options_lock outside the page allocator's locks. */
static void options_fork_prepare(void)
{
	pthread_mutex_lock(&options_lock);
}

static void options_fork_parent(void)
{
	pthread_mutex_unlock(&options_lock);
}

static void options_fork_child(void)
{
	pthread_mutex_init(&options_lock, NULL);
}
slub_initcall(options_initcall, .fork_level = FORK_OPTIONS, .fork_prepare = options_fork_prepare,
	      .fork_parent = options_fork_parent, .fork_child = options_fork_child);

/* Kernel rule: '-' and '_' match each other in parameter names. */
static bool name_eq(const char *a, size_t alen, const char *b)
{
	size_t i;
	for (i = 0; i < alen && b[i]; i++) {
		char x = a[i] == '-' ? '_' : a[i];
		char y = b[i] == '-' ? '_' : b[i];
		if (x != y)
			return false;
	}
	return i == alen && !b[i];
}

static struct slub_option *find_option(const char *key, size_t len)
{
	for (size_t i = 0; i < NR_SLUB_OPTIONS; i++)
		if (name_eq(key, len, slub_options[i].name))
			return &slub_options[i];
	return NULL;
}

static bool parse_bool(const char *v, long *out)
{
	static const char *const yes[] = { "1", "y", "Y", "yes", "on", "true" };
	static const char *const no[] = { "0", "n", "N", "no", "off", "false" };
	for (size_t i = 0; i < ARRAY_SIZE(yes); i++) {
		if (!strcmp(v, yes[i]))
			return *out = 1, true;
		if (!strcmp(v, no[i]))
			return *out = 0, true;
	}
	return false;
}

/* Decimal, or hexadecimal after 0x; no sign but '-', no spaces, no octal. */
static bool parse_long(const char *v, long *out)
{
	char *end;
	const char *digits = v + (*v == '-');
	if (!(*digits >= '0' && *digits <= '9'))
		return false;
	bool hex = digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X');
	errno = 0;
	long n = strtol(v, &end, hex ? 16 : 10);
	if (errno || *end)
		return false;
	*out = n;
	return true;
}

/*
 * Quiet parsing applies what it can and reports nothing: start-up parses
 * once quietly to learn slub_report_file, then again to report into it.
 */
static bool quiet;

/* A warning: slub_abort_on_error does not stop a program for its options. */
#define option_report(...) do { if (!quiet) slub_warn(__VA_ARGS__); } while (0)

/*
 * `help` on the line: list the options once the whole line is applied, and
 * once per process (SLUB_OPTIONS is parsed at load and at start-up).
 */
static bool help_asked, help_printed;

/*
 * Other spellings: the kernel's current slab_ names, and the negative
 * forms, which set a value and take none.
 */
static const struct {
	const char *spelling, *option, *value;
} spellings[] = {
	{ "slab_min_order", "slub_min_order", NULL },
	{ "slab_max_order", "slub_max_order", NULL },
	{ "slab_min_objects", "slub_min_objects", NULL },
	{ "slab_merge", "slub_merge", NULL },
	{ "slab_debug", "slub_debug", NULL },
	{ "slub_nomerge", "slub_merge", "0" },
	{ "slab_nomerge", "slub_merge", "0" },
};

/*
 * slub_debug: checked whole; bare (or empty) means F, Z, P and U, as the
 * kernel's.  Kept without the whitespace that ends it (a quoted "P\r\n").
 */
static bool apply_debug(struct slub_option *o, const char *val, const char *origin)
{
	char why[96];
	const char *bad;
	if (!val || !slub_debug_len(val))
		val = "FZPU";
	size_t len = slub_debug_len(val);
	if (len >= SLUB_OPTION_STR_MAX)
		bad = "longer than 255 characters";
	else
		bad = slub_debug_check(val, why, sizeof(why));
	if (bad) {
		option_report("%s: option %s='%s' rejected: %s", origin, o->name, val, bad);
		return false;
	}
	memcpy(o->str, val, len);
	o->str[len] = 0;
	return true;
}

/* failslab, fail_page_alloc: the kernel's "<interval>,<probability>,<space>,<times>", checked whole. */
static bool apply_fault(struct slub_option *o, const char *val, const char *origin)
{
	struct fault_attr attr;
	const char *bad = !val ? "needs a value" :
		strlen(val) >= SLUB_OPTION_STR_MAX ? "longer than 255 characters" :
		fault_attr_parse(val, &attr);
	if (bad) {
		if (val)
			option_report("%s: option %s='%s' rejected: %s", origin, o->name, val, bad);
		else
			option_report("%s: option %s rejected: %s", origin, o->name, bad);
		return false;
	}
	strcpy(o->str, val);
	return true;
}

/* numa: "fake=<N>" or "off", checked whole (numa.c). */
static bool apply_numa(struct slub_option *o, const char *val, const char *origin)
{
	const char *bad = !val ? "needs a value" : numa_option_check(val);
	if (bad) {
		option_report("%s: option %s%s%s rejected: %s", origin, o->name, val ? "=" : "",
			      val ? val : "", bad);
		return false;
	}
	strcpy(o->str, val);
	return true;
}

/* Apply one `key` or `key=value`; returns false (after a report) if rejected. */
static bool apply_option(const char *key, size_t klen, const char *val,
			 const char *origin)
{
	struct slub_option *o = find_option(key, klen);
	long n;

	for (size_t i = 0; !o && i < ARRAY_SIZE(spellings); i++) {
		if (!name_eq(key, klen, spellings[i].spelling))
			continue;
		o = find_option(spellings[i].option, strlen(spellings[i].option));
		if (spellings[i].value) {
			if (val) {
				option_report("%s: option %s takes no value ('%s'); ignored", origin,
					      spellings[i].spelling, val);
				return false;
			}
			val = spellings[i].value;
		}
	}
	if (o == &slub_options[OPT_slub_debug])
		return apply_debug(o, val, origin);
	if (o == &slub_options[OPT_failslab] || o == &slub_options[OPT_fail_page_alloc])
		return apply_fault(o, val, origin);
	if (o == &slub_options[OPT_numa])
		return apply_numa(o, val, origin);

	if (name_eq(key, klen, "help")) {
		if (!val)
			return help_asked = true;
		option_report("%s: 'help=%s': help takes no value; ignored", origin, val);
		return false;
	}
	if (!o) {
		option_report("%s: unknown option '%.*s' ignored (SLUB_OPTIONS=help or slubrun --help lists them)",
			    origin, (int)klen, key);
		return false;
	}
	switch (o->type) {
	case OPT_BOOL:
		if (!val) {
			o->value = 1;
			return true;
		}
		if (parse_bool(val, &n)) {
			o->value = n;
			return true;
		}
		option_report("%s: option %s='%s': expected 0/1, y/n, on/off; %s stands",
			    origin, o->name, val, o->value ? "on" : "off");
		return false;
	case OPT_INT:
		if (val && parse_long(val, &n) && n >= o->min && n <= o->max) {
			o->value = n;
			return true;
		}
		option_report("%s: option %s%s%s: expected an integer in %ld..%ld; %ld stands",
			    origin, o->name, val ? "=" : "", val ? val : " without a value",
			    o->min, o->max, o->value);
		return false;
	case OPT_STRING:
		if (val && *val && strlen(val) < SLUB_OPTION_STR_MAX) {
			strcpy(o->str, val);
			return true;
		}
		option_report("%s: option %s: expected a value of 1..%zu characters; ignored",
			    origin, o->name, (size_t)SLUB_OPTION_STR_MAX - 1);
		return false;
	}
	return false;
}

static void write_options(int fd);

int options_parse(const char *line, const char *origin, bool be_quiet)
{
	quiet = be_quiet;
	help_asked = false;
	/* A token: key[=value], where value may be "quoted with spaces"; \r separates too. */
	char val[SLUB_OPTION_STR_MAX + 2];
	int rejected = 0;
	const char *p = line;

	while (p && *p) {
		while (option_space(*p))
			p++;
		if (!*p)
			break;
		const char *key = p;
		while (*p && *p != '=' && !option_space(*p))
			p++;
		size_t klen = (size_t)(p - key);
		if (*p != '=') {
			if (klen)
				rejected += !apply_option(key, klen, NULL, origin);
			continue;
		}
		p++;	/* '=' */
		size_t vlen = 0;
		bool quoted = *p == '"', overflow = false;
		if (quoted)
			p++;
		while (*p && (quoted ? *p != '"' : !option_space(*p))) {
			if (vlen < sizeof(val) - 1)
				val[vlen++] = *p;
			else
				overflow = true;
			p++;
		}
		if (quoted && *p != '"') {
			option_report("%s: option '%.*s': unterminated quote; ignored",
				    origin, (int)klen, key);
			rejected++;
			break;
		}
		if (quoted)
			p++;
		val[vlen] = 0;
		if (!klen) {
			option_report("%s: '=%s' has no option name; ignored", origin, val);
			rejected++;
		} else if (overflow) {
			option_report("%s: option '%.*s': value longer than %d characters; ignored",
				    origin, (int)klen, key, SLUB_OPTION_STR_MAX - 1);
			rejected++;
		} else {
			rejected += !apply_option(key, klen, val, origin);
		}
	}
	/* To stderr even with slub_report_file=: it is an answer, not a report. */
	if (help_asked && !quiet && !help_printed) {
		help_printed = true;
		write_options(STDERR_FILENO);
	}
	return rejected;
}

bool options_exit_stats_here(void)
{
	long pid = slub_opt(exit_stats_pid);
	return slub_opt_str(exit_stats)[0] && (!pid || pid == getpid());
}

/*
 * At load, outside any allocation, what the options ask for that start-up
 * (maybe inside the first malloc) cannot do: SLUB_OPTIONS=help lists the
 * options even in a program that never allocates, and the options are
 * parsed for the layers above that act at load (the debug layer readies
 * its unwinder after this, at priority 103, for slub_debug's U, abort
 * on error and KFENCE's stacks).  The values are those in
 * force now: a later slub_setup() is not in the list.
 */
__attribute__((constructor(102))) static void options_at_load(void)
{
	const char *env = secure_getenv("SLUB_OPTIONS");
	if (!env || (!strstr(env, "help") && !strstr(env, "abort") && !strstr(env, "debug") &&
		     !strstr(env, "kfence")))
		return;
	pthread_mutex_lock(&options_lock);
	if (!__atomic_load_n(&slub_started, __ATOMIC_ACQUIRE)) {
		options_parse(env, "SLUB_OPTIONS", true);	/* reported at start-up */
		if (help_asked && !help_printed) {
			help_printed = true;
			write_options(STDERR_FILENO);
		}
	}
	pthread_mutex_unlock(&options_lock);
}

/* "name=value" of one option into @buf; returns its length. */
static int format_option(const struct slub_option *o, char *buf, size_t size)
{
	switch (o->type) {
	case OPT_BOOL:
		return snprintf(buf, size, "%s=%d", o->name, o->value ? 1 : 0);
	case OPT_INT:
		return snprintf(buf, size, "%s=%ld", o->name, o->value);
	case OPT_STRING:
		return snprintf(buf, size, "%s=\"%s\"", o->name, o->str);
	}
	return 0;
}

/* The values an option takes, as the list shows them. */
static int format_range(const struct slub_option *o, char *buf, size_t size)
{
	if (o->type == OPT_STRING)
		return snprintf(buf, size, "text");
	return snprintf(buf, size, "%ld..%ld", o->min, o->max);
}

#define OPTION_LINE (3 * SLUB_OPTION_STR_MAX)

/*
 * The list, one option a line: "name=value  range  help", columns aligned.
 * Formatted into stack buffers: SLUB_OPTIONS=help prints it at start-up,
 * which may be inside the first malloc.
 */
static void for_each_option_line(void (*emit)(const char *line, void *arg), void *arg)
{
	char kv[2 * SLUB_OPTION_STR_MAX], range[48], line[OPTION_LINE];
	int kv_width = 0, range_width = 0;

	for (size_t i = 0; i < NR_SLUB_OPTIONS; i++) {
		int n = format_option(&slub_options[i], kv, sizeof(kv));
		kv_width = n > kv_width ? n : kv_width;
		n = format_range(&slub_options[i], range, sizeof(range));
		range_width = n > range_width ? n : range_width;
	}
	for (size_t i = 0; i < NR_SLUB_OPTIONS; i++) {
		format_option(&slub_options[i], kv, sizeof(kv));
		format_range(&slub_options[i], range, sizeof(range));
		snprintf(line, sizeof(line), "%-*s  %-*s  %s\n", kv_width, kv, range_width, range,
			 slub_options[i].help);
		emit(line, arg);
	}
}

#define OPTIONS_HEADER "libslub options in force (SLUB_OPTIONS=\"name=value ...\"), range, help:\n"

static void emit_to_fd(const char *line, void *arg)
{
	report_write(*(int *)arg, line, strlen(line));
}

static void write_options(int fd)
{
	report_write(fd, OPTIONS_HEADER, strlen(OPTIONS_HEADER));
	for_each_option_line(emit_to_fd, &fd);
}

static void emit_to_file(const char *line, void *arg)
{
	fputs(line, arg);
}

void slub_print_options(FILE *out)
{
	slub_ensure_init();
	fputs(OPTIONS_HEADER, out);
	for_each_option_line(emit_to_file, out);
}
