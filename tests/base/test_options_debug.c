// SPDX-License-Identifier: MIT
/*
 * test_options_debug.c - the kernel's slub_debug grammar (every form, and
 * each malformed one rejected by name with its reason), which caches a
 * value selects and with what flags, the kernel's slab_ spellings and the
 * negative forms; then, in child processes under SLUB_OPTIONS, caches
 * that slub_debug selects get the flags, never merge and say in one report
 * that nothing checks them yet, and an unknown option is reported once.
 * (Flags a cache's creator passes are reported per cache: test_slab_merge.)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sys/wait.h>

#include "check.h"
#include "base/options.h"
#include "base/report.h"
#include "slab/core/slab.h"

#define FZPU (SLAB_CONSISTENCY_CHECKS | SLAB_RED_ZONE | SLAB_POISON | SLAB_STORE_USER)

static unsigned int flags_for(const char *name, bool *o)
{
	return slub_debug_flags(name, o);
}

/* Apply @line; it must be taken whole, with no report. */
static void take(const char *line)
{
	unsigned long e = slub_errors();
	CHECK_EQ(options_parse(line, "test", false), 0);
	CHECK_EQ(slub_errors(), e);
}

static void grammar(void)
{
	bool o;
	take("slub_debug");
	CHECK(!strcmp(slub_opt_str(slub_debug), "FZPU"));
	CHECK_EQ(flags_for("dentry", &o), FZPU);
	take("slub_debug=");
	CHECK_EQ(flags_for("dentry", &o), FZPU);
	take("slub_debug=FZ");
	CHECK_EQ(flags_for("anything", &o), SLAB_CONSISTENCY_CHECKS | SLAB_RED_ZONE);
	take("slub_debug=fzput");
	CHECK_EQ(flags_for("x", &o), FZPU | SLAB_TRACE);
	take("slub_debug=R");	/* the v6 cover letter's letter for red zones */
	CHECK_EQ(flags_for("x", &o), SLAB_RED_ZONE);
	take("slub_debug=FZ-P");	/* '-' clears what came before */
	CHECK_EQ(flags_for("x", &o), SLAB_POISON);
	take("slub_debug=-");
	CHECK_EQ(flags_for("x", &o), 0);
	/* Lists: the named caches ('*' ends a prefix), no others. */
	take("slub_debug=P,kmalloc-*,dentry");
	CHECK_EQ(flags_for("kmalloc-64", &o), SLAB_POISON);
	CHECK_EQ(flags_for("kmalloc-", &o), SLAB_POISON);
	CHECK_EQ(flags_for("dentry", &o), SLAB_POISON);
	CHECK_EQ(flags_for("dentry2", &o), 0);
	CHECK_EQ(flags_for("dentr", &o), 0);
	CHECK_EQ(flags_for("kmalloc", &o), 0);
	/* Blocks: a block without a list for all, the first matching list wins. */
	take("slub_debug=FZ;U,dentry;T,dentry,inode");
	CHECK_EQ(flags_for("dentry", &o), SLAB_STORE_USER);
	CHECK_EQ(flags_for("inode", &o), SLAB_TRACE);
	CHECK_EQ(flags_for("other", &o), SLAB_CONSISTENCY_CHECKS | SLAB_RED_ZONE);
	take("slub_debug=U,dentry;-");
	CHECK_EQ(flags_for("dentry", &o), SLAB_STORE_USER);
	CHECK_EQ(flags_for("other", &o), 0);
	take("slub_debug=,dentry");	/* names without flags: full debugging */
	CHECK_EQ(flags_for("dentry", &o), FZPU);
	CHECK_EQ(flags_for("inode", &o), 0);
	take("slub_debug=;;F;;");
	CHECK_EQ(flags_for("x", &o), SLAB_CONSISTENCY_CHECKS);
	take("slub_debug=ZO");
	CHECK_EQ(flags_for("x", &o), SLAB_RED_ZONE);
	CHECK(o);
	take("slab_debug=P");	/* the kernel's current spelling */
	CHECK_EQ(flags_for("x", &o), SLAB_POISON);
	CHECK(!o);
	take("slub_debug=-");
}

static void malformed(void)
{
	take("slub_debug=P");
	REJECT("slub_debug=FX", "'X' is not a debug flag");
	REJECT("slub_debug=A", "failslab");
	REJECT("slub_debug=F,,dentry", "an empty cache name");
	REJECT("slub_debug=F,", "an empty cache name");
	REJECT("slub_debug=F,dentry,", "an empty cache name");
	REJECT("slub_debug=F,km*lloc", "'*' may only end a cache name");
	REJECT("slub_debug=\"F,a b\"", "a space, control character or '=' in a cache name");
	REJECT("slub_debug=F;Q,x", "'Q' is not a debug flag");
	char line[400];
	snprintf(line, sizeof(line), "slub_debug=F,%070d", 0);
	REJECT(line, "longer than 63 characters");
	/* Each rejection names the option and leaves the value before it standing. */
	CHECK(last_report_has("slub_debug="));
	CHECK(!strcmp(slub_opt_str(slub_debug), "P"));
	take("slub_debug=-");
}

/*
 * Line ends and other stray characters: whitespace ending a value (an
 * options file written with CRLF) is ignored, not read as a flag ('\r'
 * folded to lower case is '-', which cleared every flag); any other
 * character is rejected, named legibly.
 */
static void stray_characters(void)
{
	bool o;
	take("slub_debug=P\r");
	CHECK_EQ(flags_for("x", &o), SLAB_POISON);
	take("slub_debug=FZ\r\nslub_min_order=0\r\n");
	CHECK_EQ(flags_for("x", &o), SLAB_CONSISTENCY_CHECKS | SLAB_RED_ZONE);
	take("slub_debug=\"U\r\n\t \"");	/* quoted: the whitespace reaches the grammar */
	CHECK_EQ(flags_for("x", &o), SLAB_STORE_USER);
	CHECK(!strcmp(slub_opt_str(slub_debug), "U"));
	take("slub_debug=\"P,dentry\r\n\"");
	CHECK_EQ(flags_for("dentry", &o), SLAB_POISON);
	CHECK_EQ(flags_for("x", &o), 0);
	take("slub_debug=\"\r\n\"");	/* nothing but a line end: as bare slub_debug */
	CHECK_EQ(flags_for("x", &o), FZPU);
	REJECT("slub_debug=\"F\rZ\"", "character 0x0d is not a debug flag");
	REJECT("slub_debug=\"F\x01\"", "character 0x01 is not a debug flag");
	REJECT("slub_debug=\"F Z\"", "' ' is not a debug flag");
	REJECT("slub_debug=\"F,den\rtry\"", "a space, control character or '=' in a cache name");
	CHECK(!strcmp(slub_opt_str(slub_debug), "FZPU"));
	take("slub_debug=-");
}

static void spellings(void)
{
	take("slab_min_order=2 slab_max_order=5 slab_min_objects=33");
	CHECK_EQ(slub_opt(slub_min_order), 2);
	CHECK_EQ(slub_opt(slub_max_order), 5);
	CHECK_EQ(slub_opt(slub_min_objects), 33);
	take("slub_min_order=0 slub_max_order=3 slub_min_objects=0");
	take("slub_nomerge");
	CHECK_EQ(slub_opt(slub_merge), 0);
	take("slub_merge");
	CHECK_EQ(slub_opt(slub_merge), 1);
	take("slab_nomerge");
	CHECK_EQ(slub_opt(slub_merge), 0);
	take("slab_merge=1");
	CHECK_EQ(slub_opt(slub_merge), 1);
	REJECT("slub_nomerge=1", "slub_nomerge takes no value");
	REJECT("slab_nomerge=0", "slab_nomerge takes no value");
	CHECK_EQ(slub_opt(slub_merge), 1);
	REJECT("slab_max_order=11", "0..10");
	REJECT("slab_nomerg", "unknown option 'slab_nomerg'");
}

/* ---- in a child process, with SLUB_OPTIONS ------------------------------------ */

static int child_selected(void)
{
	unsigned long e0 = slub_errors();
	struct kmem_cache *a = kmem_cache_create("sel-a", 200, 0, 0, NULL);
	struct kmem_cache *b = kmem_cache_create("sel-b", 200, 0, 0, NULL);
	struct kmem_cache *c = kmem_cache_create("plain-c", 200, 0, 0, NULL);
	struct kmem_cache *d = kmem_cache_create("plain-d", 200, 0, 0, NULL);
	int bad = 0;
	/* Selected: the flags, no merging (not even with each other). */
	bad |= !(a->flags & SLAB_POISON) || !(b->flags & SLAB_POISON) || a == b;
	bad |= strcmp(slub_cache_id(a), "sel-a") != 0;
	/* Not selected: merged with each other as ever. */
	bad |= (c->flags & SLAB_DEBUG_FLAGS) || c != d || strcmp(slub_cache_id(c), ":0000200");
	/* Poisoned and checked: a clean use reports nothing. */
	void *p = kmem_cache_alloc(a, GFP_KERNEL);
	kmem_cache_free(a, p);
	bad |= ((unsigned char *)p)[0] != 0x6b || slub_errors() != e0;
	printf("child: %s\n", bad ? "FAILED" : "ok");
	return bad;
}

/* 'O': red zones where they cost no higher order, none where they would. */
static int child_order(void)
{
	struct kmem_cache *small = kmem_cache_create("o-small", 100, 0, 0, NULL);
	struct kmem_cache *page = kmem_cache_create("o-page", 4096, 0, 0, NULL);
	int bad = !(small->flags & SLAB_RED_ZONE) || (page->flags & SLAB_RED_ZONE) ||
		  page->size != 4096;
	printf("child: %s\n", bad ? "FAILED" : "ok");
	return bad;
}

static int child_once(void)
{
	void *p = kmalloc(100, GFP_KERNEL);	/* starts the allocator */
	kfree(p);
	pid_t pid = fork();
	if (pid == 0) {
		p = kmalloc(10, GFP_KERNEL);
		kfree(p);
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	return 0;
}

static const char *self;

static void selected_caches(void)
{
	char out[4096];
	CHECK_EQ(run_self(self, "--selected", "slub_debug=P,sel-*", out, sizeof(out)), 0);
	CHECK(strstr(out, "child: ok") != NULL);
	CHECK_EQ(run_self(self, "--order", "slub_debug=ZO", out, sizeof(out)), 0);
	CHECK(strstr(out, "child: ok") != NULL);
	/* Every cache checked, from a global value: a clean run says nothing. */
	CHECK_EQ(run_self(self, "--once", "slub_debug=FZPU", out, sizeof(out)), 0);
	CHECK(strstr(out, "BUG") == NULL);
}

static void unknown_reported_once(void)
{
	char out[4096];
	int status = run_self(self, "--once", "no_such_option=1", out, sizeof(out));
	CHECK_EQ(status, 0);
	int lines = 0;
	for (const char *p = out; (p = strstr(p, "no_such_option")); p++)
		lines++;
	if (lines != 1 || status != 0)
		fprintf(stderr, "   child said:\n%s", out);
	CHECK_EQ(lines, 1);	/* the forked child parses nothing again */
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--selected"))
		return child_selected();
	if (argc > 1 && !strcmp(argv[1], "--order"))
		return child_order();
	if (argc > 1 && !strcmp(argv[1], "--once"))
		return child_once();
	self = argv[0];
	RUN(grammar);
	RUN(malformed);
	RUN(stray_characters);
	RUN(spellings);
	RUN(selected_caches);
	RUN(unknown_reported_once);
	return check_done();
}
