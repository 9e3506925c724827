// SPDX-License-Identifier: MIT
/*
 * leak_suppress.c - the leak check's suppressions (slub_leak_suppressions=
 * FILE), in LeakSanitizer's syntax so that one file serves both:
 *
 *   # a comment
 *   leak:PATTERN
 *
 * A call site is suppressed when PATTERN matches the function or the
 * module of any frame of its stack.  `*` matches any run of characters;
 * the pattern is found anywhere in the name unless `^` anchors it at the
 * start or `$` at the end.  Other kinds of line (LeakSanitizer's
 * `called_from_lib:`, valgrind's brace blocks) are reported once and
 * skipped.  Read once, at exit, with open/read into a mapping: the
 * allocator may not allocate here.
 */
#define _GNU_SOURCE
#include "slab/debug/leak_suppress.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "base/options.h"
#include "base/os.h"
#include "base/report.h"
#include "stack/stackdepot.h"
#include "stack/stacktrace.h"

#define SUPPRESS_FILE_MAX (256UL << 10)
#define SUPPRESS_MAX 512

struct suppressions {
	char *text;			/* the file, NULs at line ends */
	size_t map_bytes;
	const char *pattern[SUPPRESS_MAX];
	unsigned int nr;
};

static struct suppressions sup;

/* Glob with '*' over [s, s + n): the whole of it must match. */
static bool glob(const char *p, const char *s, size_t n)
{
	while (*p && *p != '*') {
		if (!n || *p != *s)
			return false;
		p++, s++, n--;
	}
	if (!*p)
		return !n;
	while (*p == '*')
		p++;
	if (!*p)
		return true;
	for (size_t skip = 0; skip <= n; skip++)
		if (glob(p, s + skip, n - skip))
			return true;
	return false;
}

/* LeakSanitizer's rule: found anywhere, unless ^ or $ anchors it. */
static bool pattern_matches(const char *pat, const char *name, size_t n)
{
	char buf[256];
	size_t len = strlen(pat);
	bool start = pat[0] == '^', end = len > 1 && pat[len - 1] == '$';
	if (!n || len + 3 > sizeof(buf))
		return false;
	size_t k = 0;
	if (!start)
		buf[k++] = '*';
	memcpy(buf + k, pat + start, len - start - end);
	k += len - start - end;
	if (!end)
		buf[k++] = '*';
	buf[k] = 0;
	return glob(buf, name, n);
}

bool leak_suppress_load(void)
{
	const char *path = slub_opt_str(leak_suppressions);
	if (!path[0] || sup.text)
		return sup.text != NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		slub_warn("leak check: cannot open slub_leak_suppressions=%s; nothing suppressed",
			  path);
		return false;
	}
	sup.map_bytes = SUPPRESS_FILE_MAX + 1;
	sup.text = os_map_sparse(sup.map_bytes);
	size_t have = 0;
	ssize_t n = 0;
	while (sup.text && have < SUPPRESS_FILE_MAX &&
	       (n = read(fd, sup.text + have, SUPPRESS_FILE_MAX - have)) > 0)
		have += (size_t)n;
	close(fd);
	if (!sup.text || n < 0) {
		slub_warn("leak check: cannot read slub_leak_suppressions=%s; nothing suppressed", path);
		return false;
	}
	bool warned = false;
	for (char *line = sup.text, *next; line < sup.text + have; line = next) {
		char *nl = memchr(line, '\n', (size_t)(sup.text + have - line));
		next = nl ? nl + 1 : sup.text + have;
		if (nl)
			*nl = 0;
		while (*line == ' ' || *line == '\t')
			line++;
		for (char *e = line + strlen(line); e > line && option_space(e[-1]); )
			*--e = 0;
		if (!*line || *line == '#')
			continue;
		if (strncmp(line, "leak:", 5) || !line[5] || sup.nr == SUPPRESS_MAX) {
			if (!warned)
				slub_warn("leak check: %s: '%.60s' skipped (only leak:PATTERN lines, %d "
					  "at most)", path, line, SUPPRESS_MAX);
			warned = true;
			continue;
		}
		sup.pattern[sup.nr++] = line + 5;
	}
	return true;
}

/* The function ("name+0x..") and the module ("[module]") of a frame's name. */
static bool frame_matches(uintptr_t addr)
{
	char name[320];
	enum stack_trace_found found = stack_trace_symbol(addr, name, sizeof(name));
	const char *plus = strchr(name, '+');
	const char *mod = strrchr(name, '[');
	size_t fn_len = found == STACK_SYM_FUNCTION && plus ? (size_t)(plus - name) : 0;
	const char *module = NULL;
	size_t mod_len = 0;
	if (found == STACK_SYM_FUNCTION && mod && strchr(mod, ']')) {
		module = mod + 1;
		mod_len = (size_t)(strchr(mod, ']') - module);
	} else if (found == STACK_SYM_MODULE && plus) {
		module = strrchr(name, '/') && strrchr(name, '/') < plus ? strrchr(name, '/') + 1 : name;
		mod_len = (size_t)(plus - module);
	}
	for (unsigned int i = 0; i < sup.nr; i++)
		if ((fn_len && pattern_matches(sup.pattern[i], name, fn_len)) ||
		    (mod_len && pattern_matches(sup.pattern[i], module, mod_len)))
			return true;
	return false;
}

bool leak_suppressed(uintptr_t addr, uint32_t handle)
{
	if (!sup.nr)
		return false;
	const uintptr_t *entries;
	unsigned int nr = handle ? stack_depot_fetch(handle, &entries) : 0;
	if (!nr)
		return addr > 1 && frame_matches(addr);
	for (unsigned int i = 0; i < nr; i++)
		if (frame_matches(entries[i]))
			return true;
	return false;
}
