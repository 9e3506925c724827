// SPDX-License-Identifier: MIT
/*
 * test_options.c - the options table and the boot-line grammar: values,
 * ranges, booleans, quotes, '-' for '_', every malformed form reported once
 * with the default standing, slub_setup() before and after start-up,
 * SLUB_OPTIONS from the environment (in a child process), and
 * SLUB_OPTIONS=help listing them once, in a program that allocates or not.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sys/wait.h>

#include <slub.h>
#include "check.h"
#include "base/options.h"
#include "base/report.h"

static void reset(void)
{
	for (size_t i = 0; i < NR_SLUB_OPTIONS; i++) {
		slub_options[i].value = slub_options[i].def;
		slub_options[i].str[0] = 0;
	}
}

static void valid_values(void)
{
	reset();
	unsigned long e = slub_errors();
	CHECK_EQ(options_parse("slub_decay_ms=250", "test", false), 0);
	CHECK_EQ(slub_opt(decay_ms), 250);
	CHECK_EQ(options_parse("  slub-decay-ms=0x20\tslub_decommit_order=7  ", "test", false), 0);
	CHECK_EQ(slub_opt(decay_ms), 32);
	CHECK_EQ(slub_opt(decommit_order), 7);
	CHECK_EQ(options_parse("slub_report_file=\"/tmp/a b\"", "test", false), 0);
	CHECK(!strcmp(slub_opt_str(report_file), "/tmp/a b"));
	CHECK_EQ(options_parse("slub_decay_ms=3600000 slub_decommit_order=0", "test", false), 0);
	CHECK_EQ(slub_opt(decay_ms), 3600000);
	CHECK_EQ(options_parse("slub_decay_ms=010", "test", false), 0);	/* decimal, not octal */
	CHECK_EQ(slub_opt(decay_ms), 10);
	CHECK_EQ(options_parse("slub_decay_ms=0X1f", "test", false), 0);
	CHECK_EQ(slub_opt(decay_ms), 31);
	CHECK_EQ(options_parse("", "test", false), 0);
	CHECK_EQ(options_parse("   ", "test", false), 0);
	CHECK_EQ(slub_errors(), e);
	reset();
}

static void malformed_values_keep_defaults(void)
{
	reset();
	REJECT("slub_decay_ms=abc", "expected an integer in 0..3600000; 250 stands");
	REJECT("slub_decay_ms=-1", "slub_decay_ms=-1");
	REJECT("slub_decay_ms=3600001", "expected an integer");
	REJECT("slub_decay_ms=12x", "expected an integer");
	REJECT("slub_decay_ms=", "expected an integer");
	REJECT("slub_decay_ms", "without a value");
	REJECT("slub_decay_ms=99999999999999999999999", "expected an integer");
	REJECT("slub_decommit_order=11", "0..10");
	REJECT("slub_decay_ms=\" 200\"", "expected an integer");
	REJECT("slub_decay_ms=+5", "expected an integer");
	REJECT("slub_decay_ms=0x", "expected an integer");
	REJECT("slub_decay_ms=1e3", "expected an integer");
	CHECK_EQ(slub_opt(decay_ms), 250);
	CHECK_EQ(slub_opt(decommit_order), 4);
	REJECT("no_such_option", "unknown option 'no_such_option'");
	REJECT("no_such_option", "(SLUB_OPTIONS=help or slubrun --help lists them)");
	REJECT("help=1", "help takes no value");
	REJECT("no_such=1", "unknown option 'no_such'");
	REJECT("=5", "no option name");
	REJECT("slub_report_file", "expected a value");
	REJECT("slub_report_file=\"unterminated", "unterminated quote");
	CHECK(slub_opt_str(report_file)[0] == 0);
	char longv[600] = "slub_report_file=";
	memset(longv + strlen(longv), 'x', 400);
	REJECT(longv, "longer than");
	/* Good options next to bad ones still apply. */
	unsigned long e = slub_errors();
	CHECK_EQ(options_parse("bogus slub_decay_ms=5 slub_decommit_order=x", "test", false), 2);
	CHECK_EQ(slub_errors(), e + 2);
	CHECK_EQ(slub_opt(decay_ms), 5);
	CHECK_EQ(slub_opt(decommit_order), 4);
	reset();
}

/* CRLF line ends (an options file from Windows) and other whitespace separate options. */
static void crlf_line_ends(void)
{
	reset();
	unsigned long e = slub_errors();
	CHECK_EQ(options_parse("slub_decay_ms=40\r\nslub_merge=0\r\nslub_nomerge\r\n", "test", false), 0);
	CHECK_EQ(slub_opt(decay_ms), 40);
	CHECK_EQ(slub_opt(slub_merge), 0);
	CHECK_EQ(options_parse("slub_report_file=\"/tmp/a b\"\r\n\vslub_decommit_order=6\f", "test",
			       false), 0);
	CHECK(!strcmp(slub_opt_str(report_file), "/tmp/a b"));
	CHECK_EQ(slub_opt(decommit_order), 6);
	CHECK_EQ(slub_errors(), e);
	reset();
}

static void setup_before_and_after_start(void)
{
	reset();
	CHECK_EQ(slub_setup("slub_decay_ms=123"), 0);
	CHECK_EQ(slub_opt(decay_ms), 123);
	CHECK_EQ(slub_setup("slub_decay_ms=oops"), -EINVAL);
	CHECK_EQ(slub_opt(decay_ms), 123);
	CHECK_EQ(slub_setup(NULL), 0);
	unsigned long page = __get_free_page(GFP_KERNEL);	/* starts the allocator */
	CHECK(page != 0);
	unsigned long e = slub_errors();
	CHECK_EQ(slub_setup("slub_decay_ms=5"), -EBUSY);
	CHECK_EQ(slub_opt(decay_ms), 123);
	CHECK_EQ(slub_errors(), e + 1);		/* said out loud, not silently dropped */
	CHECK(last_report_has("too late, the allocator is running"));
	free_page(page);

	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	slub_print_options(f);
	fclose(f);
	CHECK(strstr(text, "slub_decay_ms=123 ") != NULL);
	CHECK(strstr(text, "slub_decommit_order=4 ") != NULL);
	CHECK(strstr(text, "slub_report_file=\"\"") != NULL);
	CHECK(strstr(text, "given back to the OS") != NULL);	/* help text */
	/* Help texts start in one column. */
	const char *l1 = strstr(text, "slub_decay_ms="), *l2 = strstr(text, "slub_pcp_high=");
	CHECK(l1 && l2 && strstr(l1, "  free") - l1 == strstr(l2, "  most") - l2);
	free(text);
}

static const char *self_path;

static void environment_options(void)
{
	char out[8192];
	CHECK_EQ(run_self(self_path, "--child", "slub_decay_ms=77 bogus slub_decommit_order=99",
			  out, sizeof(out)), 0);
	CHECK(strstr(out, "slub_decay_ms=77 ") != NULL);
	CHECK(strstr(out, "slub_decommit_order=4 ") != NULL);
	CHECK(strstr(out, "SLUB_OPTIONS: unknown option 'bogus'") != NULL);
	CHECK(strstr(out, "SLUB_OPTIONS: option slub_decommit_order=99") != NULL);
	CHECK(strstr(out, "errors=2") != NULL);
	/* The environment is applied after slub_setup(), so it wins. */
	CHECK(strstr(out, "setup=0") != NULL);
}

static int count(const char *text, const char *what)
{
	int n = 0;
	for (const char *p = text; (p = strstr(p, what)); p++)
		n++;
	return n;
}

#define HELP_HEADER "libslub options in force"

static void help_lists_options_once(void)
{
	static const char *const modes[] = { "--child", "--idle" };
	char out[16384];
	for (size_t i = 0; i < ARRAY_SIZE(modes); i++) {
		/* The list shows the whole line's values, wherever help stands in it. */
		CHECK_EQ(run_self(self_path, modes[i], "help slub_decay_ms=77", out, sizeof(out)), 0);
		/* name=value, range and help, each after a run of spaces */
		const char *line = strstr(out, "slub_decay_ms=77 ");
		const char *range = line ? strstr(line, "  0..3600000  ") : NULL;
		CHECK(range && !strncmp(range + 12 + strspn(range + 12, " "), "free page blocks", 16));
		CHECK(strstr(out, "slub_report_file=\"\"") != NULL);
		CHECK(strstr(out, "unknown option 'help'") == NULL);
	}
	/* --idle never starts the allocator: listed at load, once. */
	CHECK_EQ(count(out, HELP_HEADER), 1);
	/* --child prints its own list after ours, and runs on. */
	CHECK_EQ(run_self(self_path, "--child", "help", out, sizeof(out)), 0);
	CHECK_EQ(count(out, HELP_HEADER), 2);
	CHECK(strstr(out, "setup=0 errors=0") != NULL);
	/* Without help, no list at start-up: only the child's own. */
	CHECK_EQ(run_self(self_path, "--child", "slub_decay_ms=7", out, sizeof(out)), 0);
	CHECK_EQ(count(out, HELP_HEADER), 1);
	CHECK_EQ(run_self(self_path, "--idle", "slub_decay_ms=7", out, sizeof(out)), 0);
	CHECK_EQ(count(out, HELP_HEADER), 0);
}

/* slubrun --stats names the one process that writes the table at exit. */
static void exit_stats_only_in_named_pid(void)
{
	reset();
	CHECK(!options_exit_stats_here());		/* no file named */
	char line[64];
	snprintf(line, sizeof(line), "slub_exit_stats=- slub_exit_stats_pid=%d", (int)getpid());
	CHECK_EQ(options_parse(line, "test", false), 0);
	CHECK(options_exit_stats_here());
	snprintf(line, sizeof(line), "slub_exit_stats_pid=%d", (int)getpid() + 1);
	CHECK_EQ(options_parse(line, "test", false), 0);
	CHECK(!options_exit_stats_here());
	CHECK_EQ(options_parse("slub_exit_stats_pid=0", "test", false), 0);
	CHECK(options_exit_stats_here());		/* 0: every process */
	REJECT("slub_exit_stats_pid=-1", "expected an integer in 0..2147483647");
	reset();
}

static int child(void)
{
	int r = slub_setup("slub_decay_ms=5");
	slub_print_options(stdout);
	printf("setup=%d errors=%lu\n", r, slub_errors());
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--child"))
		return child();
	if (argc > 1 && !strcmp(argv[1], "--idle"))
		return 0;	/* allocates nothing: the allocator never starts */
	self_path = argv[0];
	RUN(valid_values);
	RUN(malformed_values_keep_defaults);
	RUN(crlf_line_ends);
	RUN(setup_before_and_after_start);
	RUN(environment_options);
	RUN(exit_stats_only_in_named_pid);
	RUN(help_lists_options_once);
	return check_done();
}
