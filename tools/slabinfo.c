// SPDX-License-Identifier: MIT
/*
 * slabinfo - the kernel's tools/mm/slabinfo for any /sys/kernel/slab-style
 * tree: the real kernel's (/sys/kernel/slab, then /sys/slab), a copy, or
 * a mount of a libslub process's caches.
 *
 *   slabinfo [-aABDefilLnoPrsStTUvXz1] [-N K] [-d DIR | -p PID [--watch S]]
 *            [--json] [REGEX]
 *
 * A tree has a directory per cache with a file per attribute, and a
 * symlink per alias of a merged cache (whose directory is its unique id,
 * ":[flags-]size").  This file only finds the caches and reads and writes
 * their files; the figures and every output come from the library's
 * formatting core (src/slab/view/slabinfo.c, compiled in), so the tool and
 * slub_print_slabinfo() print the same table.  Beyond the kernel's tool:
 * --json prints every attribute of every cache; -p PID reads a live libslub
 * process through its agent (slabinfo_live.c; no mount needed), and
 * --watch refreshes that view.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "slabinfo_source.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: slabinfo [OPTIONS] [REGEX]\n"
		"The caches of a /sys/kernel/slab-style tree, as the kernel's slabinfo shows them;\n"
		"REGEX (case-insensitive) picks caches by name.\n"
		"  -a, --aliases          show aliases\n"
		"  -A, --activity         most active caches first (needs statistics counters)\n"
		"  -B, --Bytes            sizes in bytes, not K/M/G of 1000s\n"
		"  -D, --display-active   activity lines: allocations, frees, %% fast path\n"
		"  -e, --empty            only caches without slabs\n"
		"  -f, --first-alias      name a merged cache by its first alias\n"
		"  -i, --inverted         inverted order\n"
		"  -l, --slabs            the table (the default)\n"
		"  -L, --Loss             sort by loss (memory not used by objects)\n"
		"  -n, --numa             slabs per NUMA node\n"
		"  -N, --lines=K          the first K caches only\n"
		"  -o, --ops              cache operations\n"
		"  -P, --partial          sort by partial slabs\n"
		"  -r, --report           a detailed report of each cache\n"
		"  -s, --shrink           shrink the caches (writes 1 to shrink)\n"
		"  -S, --Size             sort by size\n"
		"  -t, --tracking         allocation and free call sites (alloc_calls, free_calls)\n"
		"  -T, --Totals           summary\n"
		"  -U, --Unreclaim        unreclaimable caches only\n"
		"  -v, --validate         validate the caches (writes 1 to validate)\n"
		"  -X, --Xtotals          extended summary\n"
		"  -z, --zero             include caches without slabs\n"
		"  -1, --1ref             single-reference aliases too\n"
		"  -d, --dir=DIR          read this tree (default /sys/kernel/slab, then /sys/slab);\n"
		"                         the kernel's tool uses -d for debug flags: not offered here\n"
		"  -p, --pid=PID          a libslub process's caches, live, through its agent\n"
		"                         (run it with SLUB_OPTIONS=slub_agent, or slubrun --fs)\n"
		"      --watch=SECONDS    with -p: refresh every SECONDS, sorted by memory,\n"
		"                         changes marked, until ^C or the process ends\n"
		"      --json             every attribute of every cache, as a JSON array\n"
		"      --leaks            with -p: scan the process for leaks, as kmemleak does\n"
		"                         (its caches need slub_debug=U: slubrun --leak-check);\n"
		"                         a block is listed once two scans found it unreferenced\n"
		"  -h, --help             this text\n"
		"      --version          slabinfo's version\n"
		"Sorting options (-L, -S, -P, -A) exclude each other.\n");
}

/* ---- the tree ---------------------------------------------------------------- */

struct tree {
	int fd;
	const char *path;
};

/* The file of @attr of @cache; -errno if it cannot be opened. */
static int open_attr(void *ctx, const char *cache, const char *attr, int flags)
{
	struct tree *t = ctx;
	char path[2 * SLABINFO_NAME_MAX + 64];
	snprintf(path, sizeof(path), "%s/%s", cache, attr);
	int fd = openat(t->fd, path, flags | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/*
 * The kernel moved alloc_calls and free_calls to debugfs (5.14:
 * /sys/kernel/debug/slab/<cache>/alloc_traces): read there for its tree.
 */
static int open_traces(struct tree *t, const char *cache, const char *attr)
{
	char path[2 * SLABINFO_NAME_MAX + 64];
	if (strcmp(t->path, "/sys/kernel/slab") ||
	    (strcmp(attr, "alloc_calls") && strcmp(attr, "free_calls")))
		return -ENOENT;
	snprintf(path, sizeof(path), "/sys/kernel/debug/slab/%s/%s_traces", cache,
		 attr[0] == 'a' ? "alloc" : "free");
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

static ssize_t tree_read(void *ctx, const char *cache, const char *attr, char *buf, size_t len)
{
	int fd = open_attr(ctx, cache, attr, O_RDONLY);
	if (fd == -ENOENT)
		fd = open_traces(ctx, cache, attr);
	if (fd < 0)
		return fd;
	size_t got = 0;
	ssize_t n = 0;
	while (got + 1 < len && (n = read(fd, buf + got, len - 1 - got)) > 0)
		got += (size_t)n;
	int err = errno;
	close(fd);
	if (n < 0)
		return -err;
	buf[got] = 0;
	return (ssize_t)got;
}

static int tree_write(void *ctx, const char *cache, const char *attr, const char *val)
{
	int fd = open_attr(ctx, cache, attr, O_WRONLY);
	if (fd < 0)
		return fd;
	ssize_t n = write(fd, val, strlen(val));
	int err = n < 0 ? -errno : 0;
	close(fd);
	return err;
}

static void *grow(void *p, size_t *cap, size_t size)
{
	*cap = *cap ? *cap * 2 : 64;
	p = realloc(p, *cap * size);
	if (!p) {
		fprintf(stderr, "slabinfo: out of memory\n");
		exit(1);
	}
	return p;
}

bool source_add_cache(struct slabinfo_set *set, const char *dir, void *ctx)
{
	if (set->nr == set->cap)
		set->caches = grow(set->caches, &set->cap, sizeof(*set->caches));
	if (!slabinfo_load(set, &set->caches[set->nr], dir, ctx))
		return false;
	set->nr++;
	return true;
}

void source_add_alias(struct slabinfo_set *set, const char *name, const char *ref)
{
	if (set->nr_aliases == set->cap_aliases)
		set->aliases = grow(set->aliases, &set->cap_aliases, sizeof(*set->aliases));
	struct slabinfo_alias *a = &set->aliases[set->nr_aliases++];
	snprintf(a->name, sizeof(a->name), "%s", name);
	snprintf(a->ref, sizeof(a->ref), "%.*s", SLABINFO_NAME_MAX - 1, ref);
}

void source_add_name(char ***names, size_t *nr, size_t *cap, const char *name)
{
	if (*nr == *cap)
		*names = grow(*names, cap, sizeof(**names));
	(*names)[(*nr)++] = strdup(name);
}

/* Caches and aliases of the tree whose names @re matches (ids always: an alias may match). */
static int tree_load(struct source *src, struct slabinfo_set *set, const regex_t *re)
{
	struct tree *t = src->ctx;
	DIR *dir = fdopendir(dup(t->fd));
	if (!dir) {
		fprintf(stderr, "slabinfo: cannot read %s: %s\n", t->path, strerror(errno));
		return -1;
	}
	struct dirent *de;
	while ((de = readdir(dir))) {
		struct stat st;
		if (de->d_name[0] == '.' || strlen(de->d_name) >= SLABINFO_NAME_MAX ||
		    (de->d_name[0] != ':' && regexec(re, de->d_name, 0, NULL, 0)) ||
		    fstatat(t->fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW))
			continue;
		if (S_ISLNK(st.st_mode)) {
			char target[4096];
			ssize_t n = readlinkat(t->fd, de->d_name, target, sizeof(target) - 1);
			if (n < 0)
				continue;
			target[n] = 0;
			const char *base = strrchr(target, '/') ? strrchr(target, '/') + 1 : target;
			source_add_alias(set, de->d_name, base);
		} else if (S_ISDIR(st.st_mode)) {
			source_add_cache(set, de->d_name, t);
		}
	}
	closedir(dir);
	return 0;
}

/* The files of a cache's directory. */
static size_t tree_attr_names(struct source *src, const char *cache, char ***names)
{
	struct tree *t = src->ctx;
	int fd = openat(t->fd, cache, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *dir = fd < 0 ? NULL : fdopendir(fd);
	size_t nr = 0, cap = 0;
	struct dirent *de;
	*names = NULL;
	while (dir && (de = readdir(dir)))
		if (de->d_name[0] != '.')
			source_add_name(names, &nr, &cap, de->d_name);
	if (dir)
		closedir(dir);
	return nr;
}

/* ---- --json ------------------------------------------------------------------------ */

static void json_string(const char *s, size_t n)
{
	putchar('"');
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c == '\n')
			printf("\\n");
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

/* A file's text as a number when it is one ("42\n"), else a string, or null if unreadable. */
static void json_value(const char *text, ssize_t n)
{
	if (n < 0) {
		printf("null");
		return;
	}
	while (n > 0 && text[n - 1] == '\n')
		n--;
	size_t digits = strspn(text, "0123456789");
	if (digits && digits == (size_t)n && digits < 19 && (text[0] != '0' || n == 1))
		printf("%.*s", (int)n, text);
	else
		json_string(text, (size_t)n);
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void json_cache(struct slabinfo_set *set, struct source *src, struct slabinfo_cache *c)
{
	const size_t size = 1 << 20;
	char *text = malloc(size);
	char **names;
	size_t nr = src->attr_names(src, c->name, &names);
	qsort(names, nr, sizeof(*names), name_cmp);
	printf("  {\"name\": ");
	json_string(slabinfo_name(c), strlen(slabinfo_name(c)));
	printf(", \"dir\": ");
	json_string(c->name, strlen(c->name));
	printf(", \"alias_names\": [");
	bool first = true;
	for (size_t i = 0; i < set->nr_aliases; i++) {
		if (strcmp(set->aliases[i].ref, c->name))
			continue;
		printf(first ? "" : ", ");
		json_string(set->aliases[i].name, strlen(set->aliases[i].name));
		first = false;
	}
	printf("], \"attributes\": {");
	for (size_t i = 0; i < nr; i++) {
		printf(i ? ", " : "");
		json_string(names[i], strlen(names[i]));
		printf(": ");
		json_value(text, text ? src->read(src->ctx, c->name, names[i], text, size) : -1);
		free(names[i]);
	}
	printf("}}");
	free(names);
	free(text);
}

static void print_json(struct slabinfo_set *set, struct source *src, long lines)
{
	printf("[\n");
	bool first = true;
	for (size_t i = 0; i < set->nr && lines; i++) {
		if (set->caches[i].hidden)
			continue;
		if (lines > 0)
			lines--;
		printf(first ? "" : ",\n");
		json_cache(set, src, &set->caches[i]);
		first = false;
	}
	printf("\n]\n");
}

/* ---- options ---------------------------------------------------------------------- */

enum { OPT_JSON = 256, OPT_WATCH, OPT_VERSION, OPT_LEAKS };

static const struct option long_opts[] = {
	{ "aliases", no_argument, NULL, 'a' },
	{ "activity", no_argument, NULL, 'A' },
	{ "Bytes", no_argument, NULL, 'B' },
	{ "display-active", no_argument, NULL, 'D' },
	{ "empty", no_argument, NULL, 'e' },
	{ "first-alias", no_argument, NULL, 'f' },
	{ "help", no_argument, NULL, 'h' },
	{ "inverted", no_argument, NULL, 'i' },
	{ "slabs", no_argument, NULL, 'l' },
	{ "Loss", no_argument, NULL, 'L' },
	{ "numa", no_argument, NULL, 'n' },
	{ "lines", required_argument, NULL, 'N' },
	{ "ops", no_argument, NULL, 'o' },
	{ "partial", no_argument, NULL, 'P' },
	{ "report", no_argument, NULL, 'r' },
	{ "shrink", no_argument, NULL, 's' },
	{ "Size", no_argument, NULL, 'S' },
	{ "tracking", no_argument, NULL, 't' },
	{ "Totals", no_argument, NULL, 'T' },
	{ "Unreclaim", no_argument, NULL, 'U' },
	{ "validate", no_argument, NULL, 'v' },
	{ "Xtotals", no_argument, NULL, 'X' },
	{ "zero", no_argument, NULL, 'z' },
	{ "1ref", no_argument, NULL, '1' },
	{ "dir", required_argument, NULL, 'd' },
	{ "pid", required_argument, NULL, 'p' },
	{ "watch", required_argument, NULL, OPT_WATCH },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "leaks", no_argument, NULL, OPT_LEAKS },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

static void stdout_write(void *arg, const char *s, size_t n)
{
	(void)arg;
	fwrite(s, 1, n, stdout);
}

/* The tree at @dir, else the kernel's; 0, or 1 after saying why not. */
static int tree_source_open(struct source *src, struct tree *tree, const char *dir)
{
	tree->fd = -1;
	tree->path = dir;
	if (dir) {
		tree->fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	} else {
		static const char *const defaults[] = { "/sys/kernel/slab", "/sys/slab" };
		for (size_t i = 0; i < 2 && tree->fd < 0; i++) {
			tree->path = defaults[i];
			tree->fd = open(defaults[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		}
	}
	if (tree->fd < 0) {
		if (dir)
			fprintf(stderr, "slabinfo: cannot open %s: %s\n", dir, strerror(errno));
		else
			fprintf(stderr, "slabinfo: no /sys/kernel/slab or /sys/slab (a kernel "
				"without SLUB's sysfs?); name a tree with -d DIR\n");
		return 1;
	}
	*src = (struct source){ tree->path, tree, tree_read, tree_write, tree_load,
				tree_attr_names };
	return 0;
}

enum view { VIEW_TABLE, VIEW_JSON, VIEW_ALIASES, VIEW_XTOTALS, VIEW_TOTALS };

/* Load @src's caches and print them as @view asks: the exit status. */
static int print_tables(struct source *src, struct slabinfo_opts *o, const regex_t *re,
			const char *pattern, bool filtered, bool live, enum view view)
{
	struct slabinfo_set set = {
		.page_size = (unsigned long)sysconf(_SC_PAGESIZE),
		.read = src->read, .write = src->write, .ctx = src->ctx,
		.out = { stdout_write, NULL },
		.counts_problems = live,	/* the agent answers validate with a count */
	};
	if (src->load(src, &set, re))
		return 1;	/* (the set is left: the tool exits soon) */
	if (!set.nr) {
		fprintf(stderr, "slabinfo: no cache in %s%s%s\n", src->what,
			filtered ? " matches " : "", filtered ? pattern : "");
		return 1;
	}
	if (slabinfo_link(&set, o))
		fprintf(stderr, "slabinfo: an alias in %s names no cache there\n", src->what);
	if ((o->sort_active || o->show_activity) && !set.caches[0].has_stats) {
		bool any = false;
		for (size_t i = 0; i < set.nr; i++)
			any |= set.caches[i].has_stats;
		if (!any && o->sort_active)
			fprintf(stderr, "slabinfo: -A: no statistics counters in %s (a kernel with "
				"CONFIG_SLUB_STATS, libslub built with -DSLUB_STATS=ON); sorted by "
				"name\n", src->what);
	}
	if (view == VIEW_JSON) {
		slabinfo_sort(&set, o);
		print_json(&set, src, o->lines);
	} else if (view == VIEW_ALIASES) {
		slabinfo_print_aliases(&set, o);
	} else if (view == VIEW_XTOTALS) {
		slabinfo_xtotals(&set, o);
	} else if (view == VIEW_TOTALS) {
		slabinfo_totals(&set, o);
	} else {
		slabinfo_sort(&set, o);
		slabinfo_output(&set, o);
	}
	return set.errors ? 1 : 0;
}
int main(int argc, char **argv)
{
	struct slabinfo_opts o = { .skip_zero = true, .lines = -1 };
	bool aliases = false, totals = false, xtotals = false, json = false, leaks = false;
	const char *dir = NULL;
	long pid = 0;
	double watch = 0;
	int c, sorts = 0;
	char *end;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":aABDefhilLnN:oPrsStTUvXz1d:p:", long_opts,
				NULL)) != -1) {
		switch (c) {
		case 'a': aliases = true; break;
		case 'A': o.sort_active = true; sorts++; break;
		case 'B': o.show_bytes = true; break;
		case 'D': o.show_activity = true; break;
		case 'e': o.show_empty = true; break;
		case 'f': o.first_alias = true; break;
		case 'h': usage(stdout); return 0;
		case 'i': o.inverted = true; break;
		case 'l': o.show_slab = true; break;
		case 'L': o.sort_loss = true; sorts++; break;
		case 'n': o.show_numa = true; break;
		case 'N':
			o.lines = strtol(optarg, &end, 10);
			if (*end || end == optarg) {
				fprintf(stderr, "slabinfo: -N needs a number of lines, not '%s'\n",
					optarg);
				return 2;
			}
			if (o.lines < 1)
				o.lines = 1;
			break;
		case 'o': o.show_ops = true; break;
		case 'P': o.sort_partial = true; sorts++; break;
		case 'r': o.show_report = true; break;
		case 's': o.shrink = true; break;
		case 'S': o.sort_size = true; sorts++; break;
		case 't': o.show_track = true; break;
		case 'T': totals = true; break;
		case 'U': o.unreclaim_only = true; break;
		case 'v': o.validate = true; break;
		case 'X':
			if (o.lines == -1)
				o.lines = 1;
			xtotals = o.show_bytes = true;
			break;
		case 'z': o.skip_zero = false; break;
		case '1': o.single_ref = true; break;
		case 'd': dir = optarg; break;
		case 'p':
			pid = strtol(optarg, &end, 10);
			if (*end || end == optarg || pid <= 0) {
				fprintf(stderr, "slabinfo: -p needs a process id, not '%s'\n", optarg);
				return 2;
			}
			break;
		case OPT_WATCH:
			watch = strtod(optarg, &end);
			if (*end || end == optarg || !(watch > 0)) {
				fprintf(stderr, "slabinfo: --watch needs a number of seconds, not '%s'\n",
					optarg);
				return 2;
			}
			break;
		case OPT_JSON: json = true; break;
		case OPT_LEAKS: leaks = true; break;
		case OPT_VERSION: printf("slabinfo (libslub) %s\n", SLABINFO_VERSION); return 0;
		case ':':
			fprintf(stderr, "slabinfo: %s needs an argument\n", argv[optind - 1]);
			return 2;
		default:
			if (optopt)
				fprintf(stderr, "slabinfo: unknown option -%c\n", optopt);
			else
				fprintf(stderr, "slabinfo: unknown option %s\n", argv[optind - 1]);
			usage(stderr);
			return 2;
		}
	}
	if (leaks && (!pid || watch)) {
		fprintf(stderr, "slabinfo: --leaks needs -p PID (a live process), and no --watch\n");
		return 2;
	}
	if (watch && !pid) {
		fprintf(stderr, "slabinfo: --watch needs -p PID (a live process)\n");
		return 2;
	}
	if (pid && dir) {
		fprintf(stderr, "slabinfo: -p and -d exclude each other\n");
		return 2;
	}
	if (sorts > 1) {
		fprintf(stderr, "slabinfo: sorting options (-L, -S, -P, -A) exclude each other\n");
		return 2;
	}
	if (argc > optind + 1) {
		fprintf(stderr, "slabinfo: one REGEX only, not '%s' too\n", argv[optind + 1]);
		return 2;
	}
	if (!o.show_slab && !aliases && !o.show_track && !o.show_report && !o.validate &&
	    !o.shrink && !o.show_ops && !o.show_numa)
		o.show_slab = true;

	regex_t re;
	const char *pattern = argc > optind ? argv[optind] : ".*";
	int err = regcomp(&re, pattern, REG_ICASE | REG_NOSUB | REG_EXTENDED);
	if (err) {
		char msg[256];
		regerror(err, &re, msg, sizeof(msg));
		fprintf(stderr, "slabinfo: invalid pattern '%s': %s\n", pattern, msg);
		return 2;
	}

	struct source src;
	struct tree tree;
	if (pid ? live_source_open(&src, (pid_t)pid) : tree_source_open(&src, &tree, dir))
		return 1;
	if (watch)
		return live_watch(&src, &o, &re, watch);
	if (leaks)
		return live_leaks(&src);
	enum view view = json ? VIEW_JSON : aliases ? VIEW_ALIASES : xtotals ? VIEW_XTOTALS :
			 totals ? VIEW_TOTALS : VIEW_TABLE;

	if (!pid)
		return print_tables(&src, &o, &re, pattern, argc > optind, false, view);
	/*
	 * A live process may exec while it is read (a launcher, a shell
	 * script's exec, a pyenv shim chain): its new image's agent is asked
	 * again, and what the first one answered is thrown away, so stdout
	 * holds a table of one image only.
	 */
	for (;;) {
		fflush(stdout);
		int out = dup(STDOUT_FILENO);
		FILE *held = tmpfile();
		if (out < 0 || !held || dup2(fileno(held), STDOUT_FILENO) < 0) {
			if (held)
				fclose(held);
			if (out >= 0)
				close(out);
			return print_tables(&src, &o, &re, pattern, argc > optind, true, view);
		}
		int rc = print_tables(&src, &o, &re, pattern, argc > optind, true, view);
		fflush(stdout);
		dup2(out, STDOUT_FILENO);
		close(out);
		if (live_source_gone(&src) && live_source_reopen(&src)) {
			fclose(held);
			continue;
		}
		char buf[8192];
		size_t n;
		rewind(held);
		while ((n = fread(buf, 1, sizeof(buf), held)) > 0)
			fwrite(buf, 1, n, stdout);
		fclose(held);
		fflush(stdout);
		if (live_source_hung_up(&src))
			return 1;
		return rc;
	}
}
