// SPDX-License-Identifier: MIT
/*
 * maps.c - look an address up in /proc/self/maps (maps.h), the one parser
 * of that file: reports name stack frames with it.
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

bool maps_walk(bool (*fn)(const struct maps_entry *e, const char *path, void *arg), void *arg)
{
	char buf[MAPS_LINE];
	size_t have = 0;
	bool stop = false;
	int cancel = os_cancel_off();
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
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
			struct maps_entry e;
			const char *name;
			if (parse_line(line, &e, &name))
				stop = fn(&e, name, arg);
			line = nl + 1;
		}
		have = strlen(line);		/* a partial line: keep it */
		memmove(buf, line, have);
		if (have == sizeof(buf) - 1)
			have = 0;		/* longer than a path can be: drop it */
	}
	close(fd);
	os_cancel_restore(cancel);
	return true;
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
