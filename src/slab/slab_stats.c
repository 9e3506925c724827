// SPDX-License-Identifier: MIT
/*
 * slab_stats.c - a slabinfo-like table of the caches in use, written at
 * exit when slub_exit_stats= names a file (slubrun --stats sets it).
 * Formatted into one buffer and written with one write(2), appending, so
 * that the processes of one program (a shell's children, gcc's passes)
 * each add a whole table to the same file.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/options.h"
#include "page/page_alloc.h"
#include "base/report.h"
#include "slab/slab.h"
#include "slab/slab_common.h"

struct table {
	char buf[16384];
	size_t len;
	unsigned long bytes, active_bytes, peak_bytes;
};

static __printf(2, 3) void table_add(struct table *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(t->buf + t->len, sizeof(t->buf) - t->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		t->len = t->len + (size_t)n < sizeof(t->buf) ? t->len + (size_t)n : sizeof(t->buf) - 1;
}

/* 1234 -> "1234", 123456 -> "120.5K", in the slabinfo tool's manner. */
static const char *human(char *buf, size_t n, unsigned long bytes)
{
	if (bytes < 10000)
		snprintf(buf, n, "%lu", bytes);
	else if (bytes < 10000UL * 1024)
		snprintf(buf, n, "%.1fK", bytes / 1024.0);
	else
		snprintf(buf, n, "%.1fM", bytes / (1024.0 * 1024));
	return buf;
}

static void cache_line(struct kmem_cache *s, void *arg)
{
	struct table *t = arg;
	struct slab_info info;
	char mem[16], peak[16];
	/* Exact counts: objects free on a CPU's lockless list go back to their slabs. */
	kmem_cache_flush_all(s);
	slab_get_info(s, &info);
	if (!info.peak_bytes)
		return;		/* never used */
	unsigned long used = info.active_objs * s->object_size;
	table_add(t, "%-20s %10lu %7u %7lu %5lu %9s %4lu%% %9s\n", s->name, info.active_objs,
		  s->object_size, info.num_slabs, info.partial_slabs,
		  human(mem, sizeof(mem), info.bytes), info.bytes ? used * 100 / info.bytes : 0,
		  human(peak, sizeof(peak), info.peak_bytes));
	t->bytes += info.bytes;
	t->peak_bytes += info.peak_bytes;
	t->active_bytes += used;
}

/* The process's name from /proc (no stdio: nothing here may allocate). */
static void self_comm(char *buf, size_t n)
{
	snprintf(buf, n, "?");
	int fd = open("/proc/self/comm", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t len = read(fd, buf, n - 1);
	close(fd);
	if (len <= 0)
		return;
	buf[len] = 0;
	buf[strcspn(buf, "\n")] = 0;
}

/* On the stack: malloc_stats() and the exit table may run at once. */
void slab_write_cache_table(int fd)
{
	struct table table, *t = &table;
	char comm[64], mem[16];
	int cancel = os_cancel_off();	/* as glibc's malloc_stats: no cancellation point */
	t->len = 0;
	t->bytes = t->active_bytes = t->peak_bytes = 0;
	self_comm(comm, sizeof(comm));
	table_add(t, "libslub: caches of pid %d (%s)\n", (int)getpid(), comm);
	table_add(t, "%-20s %10s %7s %7s %5s %9s %5s %9s\n", "Name", "Objects", "Objsize", "Slabs",
		  "Part", "Memory", "Eff", "Peak");
	slab_for_each_cache(cache_line, t);
	unsigned long idle = READ_ONCE(page_alloc_stats.idle_extents);
	unsigned long idle_bytes = READ_ONCE(page_alloc_stats.idle_extent_pages) << PAGE_SHIFT;
	unsigned long extents = READ_ONCE(page_alloc_stats.extents) - idle;
	unsigned long extent_bytes = (READ_ONCE(page_alloc_stats.extent_pages) << PAGE_SHIFT) -
				     idle_bytes;
	if (extents)
		table_add(t, "%-20s %10lu %7s %7s %5s %9s\n", "(page extents)", extents, "-", "-",
			  "-", human(mem, sizeof(mem), extent_bytes));
	if (idle)
		table_add(t, "%-20s %10lu %7s %7s %5s %9s\n", "(cached mappings)", idle, "-", "-",
			  "-", human(mem, sizeof(mem), idle_bytes));
	char peak[16];
	table_add(t, "%-20s %10s %7s %7s %5s %9s %4lu%% %9s\n", "total in slabs", "", "", "", "",
		  human(mem, sizeof(mem), t->bytes), t->bytes ? t->active_bytes * 100 / t->bytes : 0,
		  human(peak, sizeof(peak), t->peak_bytes));
	table_add(t, "(Peak: the most memory a cache's slabs held at once; Eff: objects' bytes / memory)\n");
	const char *p = t->buf;
	size_t left = t->len;
	while (left) {
		ssize_t n = write(fd, p, left);
		if (n <= 0)
			break;
		p += n;
		left -= (size_t)n;
	}
	os_cancel_restore(cancel);
}

static bool exit_stats_armed;

/*
 * Called by slab_init(): arms the destructor below, and, as important,
 * makes a static link pull this file (and so the destructor) in.
 */
void slab_stats_init(void)
{
	__atomic_store_n(&exit_stats_armed, slub_opt_str(exit_stats)[0] != 0, __ATOMIC_RELEASE);
}

__attribute__((destructor)) static void write_exit_stats(void)
{
	const char *path = slub_opt_str(exit_stats);
	if (!__atomic_load_n(&exit_stats_armed, __ATOMIC_ACQUIRE) || !options_exit_stats_here())
		return;
	if (!strcmp(path, "-")) {
		slab_write_cache_table(STDERR_FILENO);
		return;
	}
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		slub_warn("cannot open slub_exit_stats=%s; no table written", path);
		return;
	}
	slab_write_cache_table(fd);
	close(fd);
}
