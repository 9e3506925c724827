// SPDX-License-Identifier: MIT
/*
 * test_fault_inject.c - the fault injection options (failslab=,
 * fail_page_alloc=, failslab_cache=, fail_verbose=): each parses in the
 * kernel's "<interval>,<probability>,<space>,<times>" and every malformed
 * value is rejected in one report, the old value standing; and the
 * decision (should_fail) spends space, keeps the interval, counts times
 * down and fails about the share the probability asks.
 */
#define _GNU_SOURCE
#include <slub.h>
#include "check.h"
#include "base/fault_inject.h"
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
	CHECK_EQ(options_parse("failslab=1,100,0,-1", "test", false), 0);
	CHECK(!strcmp(slub_opt_str(failslab), "1,100,0,-1"));
	CHECK_EQ(options_parse("fail_page_alloc=10,5,4096,3 fail-verbose=1", "test", false), 0);
	CHECK(!strcmp(slub_opt_str(fail_page_alloc), "10,5,4096,3"));
	CHECK_EQ(slub_opt(fail_verbose), 1);
	CHECK_EQ(options_parse("failslab_cache=dentry", "test", false), 0);
	CHECK(!strcmp(slub_opt_str(failslab_cache), "dentry"));
	CHECK_EQ(slub_errors(), e);

	struct fault_attr a;
	CHECK(!fault_attr_parse("3,50,1000,7", &a));
	CHECK_EQ(a.interval, 3);
	CHECK_EQ(a.probability, 50);
	CHECK_EQ(a.space, 1000);
	CHECK_EQ(a.times, 7);
	CHECK(!fault_attr_parse("1,0,0,0", &a));
	CHECK_EQ(a.probability, 0);
	CHECK_EQ(a.times, 0);
	reset();
}

static void malformed_values_rejected(void)
{
	reset();
	CHECK_EQ(options_parse("failslab=1,100,0,-1", "test", false), 0);
	REJECT("failslab=1,100,0", "expected four integers");
	REJECT("failslab=1,100,0,-1,5", "expected four integers");
	REJECT("failslab=", "expected four integers");
	REJECT("failslab", "needs a value");
	REJECT("failslab=a,100,0,-1", "expected four integers");
	REJECT("failslab=1,,0,-1", "expected four integers");
	REJECT("failslab=\"1, 100,0,-1\"", "expected four integers");
	REJECT("failslab=1,100,0,-1x", "expected four integers");
	REJECT("failslab=1,101,0,-1", "probability must be 0..100");
	REJECT("failslab=1,-1,0,-1", "probability must be 0..100");
	REJECT("failslab=0,100,0,-1", "interval must be 1 or more");
	REJECT("failslab=1,100,-5,-1", "space must be 0 or more");
	REJECT("failslab=1,100,0,-2", "times must be -1");
	REJECT("failslab=1,100,0,99999999999999999999999", "times must be -1");
	REJECT("fail_page_alloc=1;100;0;-1", "expected four integers");
	REJECT("fail_verbose=maybe", "expected 0/1");
	REJECT("failslab_cache=", "expected a value");
	/* The value before the rejections stands. */
	CHECK(!strcmp(slub_opt_str(failslab), "1,100,0,-1"));
	reset();
}

static struct fault_attr attr(const char *s)
{
	struct fault_attr a;
	memset(&a, 0, sizeof(a));
	CHECK(!fault_attr_parse(s, &a));
	return a;
}

static void decisions(void)
{
	fault_inject_init();	/* seeds the generator */
	/* Every call. */
	struct fault_attr a = attr("1,100,0,-1");
	for (int i = 0; i < 1000; i++)
		CHECK(should_fail(&a, 64, "test", "x", 0));
	/* Never: probability 0, or no times. */
	a = attr("1,0,0,-1");
	for (int i = 0; i < 1000; i++)
		CHECK(!should_fail(&a, 64, "test", "x", 0));
	a = attr("1,100,0,0");
	CHECK(!should_fail(&a, 64, "test", "x", 0));
	/* Times: exactly that many, then none. */
	a = attr("1,100,0,3");
	int n = 0;
	for (int i = 0; i < 100; i++)
		n += should_fail(&a, 64, "test", "x", 0);
	CHECK_EQ(n, 3);
	/* Space: 1000 bytes pass in calls of 100 while more than 100 is left (10 calls). */
	a = attr("1,100,1000,-1");
	for (int i = 0; i < 9; i++)
		CHECK(!should_fail(&a, 100, "test", "x", 0));
	CHECK(should_fail(&a, 100, "test", "x", 0));
	CHECK(should_fail(&a, 100, "test", "x", 0));
	/* Interval: every 4th call. */
	a = attr("4,100,0,-1");
	for (int i = 1; i <= 40; i++)
		CHECK_EQ(should_fail(&a, 8, "test", "x", 0), i % 4 == 0);
	/* Probability: 30% of 100000 within 1.5 points. */
	a = attr("1,30,0,-1");
	n = 0;
	for (int i = 0; i < 100000; i++)
		n += should_fail(&a, 8, "test", "x", 0);
	CHECK(n > 28500 && n < 31500);
	/* fail_verbose: one line per failure, naming the cache or the order. */
	slub_opt(fail_verbose) = 1;
	a = attr("1,100,0,-1");
	EXPECT_REPORT(CHECK(should_fail(&a, 8, "failslab", "kmalloc-8", 0)), "failslab, cache kmalloc-8");
	EXPECT_REPORT(CHECK(should_fail(&a, 8, "fail_page_alloc", NULL, 3)), "fail_page_alloc, order 3");
	slub_opt(fail_verbose) = 0;
	unsigned long e = slub_errors();
	CHECK(should_fail(&a, 8, "failslab", "kmalloc-8", 0));
	CHECK_EQ(slub_errors(), e);
}

int main(void)
{
	RUN(valid_values);
	RUN(malformed_values_rejected);
	RUN(decisions);
	return check_done();
}
