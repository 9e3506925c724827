// SPDX-License-Identifier: MIT
/*
 * maps.c - look an address up in /proc/self/maps (maps.h), the one parser
 * of that file and of /proc/self/smaps' headers and sizes: reports name
 * stack frames with it, the leak scan finds its roots.
 */
#define _GNU_SOURCE
#include "base/maps.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/os.h"

/* Parse "start-end perms offset dev inode path"; false if malformed. */
static bool parse_line(char *line, struct maps_entry *e, const char **path)
{
	char *p;
	e->start = strtoul(line, &p, 16);
	if (*p != '-')
		return false;
	e->end = strtoul(p + 1, &p, 16);
	if (*p != ' ' || strlen(p + 1) < 5)
		return false;
	memcpy(e->perms, p + 1, 4);
	e->perms[4] = 0;
	p = strchr(p + 1, ' ');			/* after the permissions */
	if (!p)
		return false;
	e->offset = strtoul(p + 1, &p, 16);
	p = strchr(p + 1, ' ');			/* after the device */
	if (!p)
		return false;
	e->inode = strtoul(p + 1, &p, 10);
	*path = p + strspn(p, " ");
	return true;
}

static void copy_path(char *to, size_t len, const char *from)
{
	if (!len)
		return;
	size_t n = strnlen(from, len - 1);
	memcpy(to, from, n);
	to[n] = 0;
}

/*
 * A line of smaps after its mapping's header ("Rss:    12 kB"): true, and
 * what @e holds of it filled in.  A header's first word has no colon.
 */
static bool parse_size(const char *line, struct maps_entry *e)
{
	const char *colon = strchr(line, ':'), *space = strchr(line, ' ');
	if (!colon || (space && space < colon))
		return false;
	size_t *to = !strncmp(line, "Rss:", 4) ? &e->rss : !strncmp(line, "Swap:", 5) ? &e->swap : NULL;
	if (to)
		*to = strtoul(colon + 1, NULL, 10) << 10;	/* always in kB */
	if (!strncmp(line, "VmFlags:", 8))
		e->userfault = strstr(colon, " um") != NULL;	/* two-letter flags, space-led */
	return true;
}

/*
 * smaps gives a mapping's sizes after its header: it is held until the
 * next header (or the end).  Only smaps' walk has one on its stack, which
 * maps_find's callers, reports on a signal stack among them, are spared.
 */
struct held {
	bool full;
	struct maps_entry e;
	char path[MAPS_LINE];
};

static bool take_line(char *line, struct held *h,
		      bool (*fn)(const struct maps_entry *e, const char *path, void *arg), void *arg)
{
	struct maps_entry e = { .rss = SIZE_MAX, .swap = SIZE_MAX, .userfault = true };
	const char *name;
	if (h && h->full && parse_size(line, &h->e))
		return false;
	if (!parse_line(line, &e, &name))
		return false;
	if (!h)
		return fn(&e, name, arg);
	bool stop = h->full && fn(&h->e, h->path, arg);
	h->e = e;			/* sizes unknown until their lines come */
	copy_path(h->path, sizeof(h->path), name);
	h->full = true;
	return stop;
}

static bool walk(const char *file, struct held *h,
		 bool (*fn)(const struct maps_entry *e, const char *path, void *arg), void *arg)
{
	char buf[MAPS_LINE];
	size_t have = 0;
	bool stop = false;
	int cancel = os_cancel_off();
	int fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		os_cancel_restore(cancel);
		return false;
	}
	while (!stop) {
		ssize_t n = read(fd, buf + have, sizeof(buf) - 1 - have);
		if (n <= 0)
			break;
		have += (size_t)n;
		buf[have] = 0;
		char *line = buf, *nl;
		while (!stop && (nl = strchr(line, '\n'))) {
			*nl = 0;
			stop = take_line(line, h, fn, arg);
			line = nl + 1;
		}
		have = strlen(line);		/* a partial line: keep it */
		memmove(buf, line, have);
		if (have == sizeof(buf) - 1)
			have = 0;		/* longer than a path can be: drop it */
	}
	if (!stop && h && h->full)
		fn(&h->e, h->path, arg);
	close(fd);
	os_cancel_restore(cancel);
	return true;
}

bool maps_walk(bool (*fn)(const struct maps_entry *e, const char *path, void *arg), void *arg)
{
	return walk("/proc/self/maps", NULL, fn, arg);
}

bool maps_walk_sizes(bool (*fn)(const struct maps_entry *e, const char *path, void *arg),
		     void *arg)
{
	struct held h = { .full = false };
	return walk("/proc/self/smaps", &h, fn, arg);
}

struct find {
	uintptr_t addr;
	struct maps_entry *e;
	char *path;
	size_t path_len;
	bool found;
};

static bool find_one(const struct maps_entry *e, const char *path, void *arg)
{
	struct find *f = arg;
	if (f->addr < e->start || f->addr >= e->end)
		return false;
	*f->e = *e;
	copy_path(f->path, f->path_len, path);
	f->found = true;
	return true;
}

bool maps_find(uintptr_t addr, struct maps_entry *e, char *path, size_t path_len)
{
	struct find f = { addr, e, path, path_len, false };
	maps_walk(find_one, &f);
	return f.found;
}
