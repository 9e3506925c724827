// SPDX-License-Identifier: MIT
/*
 * report_abort.c - slub_abort_on_error: after a report, the reporting
 * thread's stack, then abort(), as glibc stops a program on a bad free.
 *
 * Nothing here may allocate or wait for a lock: a report can come from
 * inside malloc with an allocator lock held.
 *  - glibc's backtrace() loads libgcc_s (dlopen: malloc, dl_load_lock) at
 *    its first call, so report_abort_prepare() makes that call at load or
 *    from slub_setup(), outside any allocator path.  Afterwards it only
 *    unwinds (glibc 2.35+ finds each frame's unwind table without a lock).
 *    A frame-pointer walk would need no priming, but neither this library
 *    nor a distribution's libc keeps frame pointers.
 *  - Frames are named "module+0xoffset" (addr2line -e module 0xoffset) from
 *    /proc/self/maps, read with open/read: backtrace_symbols_fd() would
 *    call dladdr(), which takes dl_load_lock, and a thread inside dlopen()
 *    may hold it while it waits for an allocator lock we hold.
 *  - The program's SIGABRT handler is not run: it might call malloc while
 *    this thread holds an allocator lock, and a hang is worse than a crash.
 *    So the locks we may hold do not matter: no code of the process runs
 *    after the report.  Debuggers and core dumps see SIGABRT as usual.
 */
#define _GNU_SOURCE
#include "base/report.h"

#include <execinfo.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/os.h"

/* Small buffers: the reporting thread's stack may be small too. */
#define STACK_FRAMES 48
#define MAPS_LINE 4608		/* a line of /proc/self/maps, path included */
#define FRAME_NAME 1024		/* longer module paths are cut */

static bool unwinder_ready;

void report_abort_prepare(void)
{
	void *frame;
	if (__atomic_load_n(&unwinder_ready, __ATOMIC_ACQUIRE))
		return;
	backtrace(&frame, 1);
	__atomic_store_n(&unwinder_ready, true, __ATOMIC_RELEASE);
}

/* Parse "start-end perms offset dev inode path"; false if malformed. */
static bool parse_maps_line(char *line, uintptr_t *start, uintptr_t *end, uintptr_t *off,
			    const char **path)
{
	char *p;
	*start = strtoul(line, &p, 16);
	if (*p != '-')
		return false;
	*end = strtoul(p + 1, &p, 16);
	p = strchr(p + 1, ' ');			/* after the permissions */
	if (!p)
		return false;
	*off = strtoul(p + 1, &p, 16);
	for (int field = 0; field < 2 && p; field++)	/* device, inode */
		p = strchr(p + 1, ' ');
	if (!p)
		return false;
	*path = p + strspn(p, " ");
	return true;
}

/* Name the mapping @addr lies in: "path+0xoff", or "?" if none. */
static void frame_name(uintptr_t addr, char *out, size_t size)
{
	char buf[MAPS_LINE];
	size_t have = 0;
	snprintf(out, size, "?");
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	for (;;) {
		ssize_t n = read(fd, buf + have, sizeof(buf) - 1 - have);
		if (n <= 0)
			break;
		have += (size_t)n;
		buf[have] = 0;
		char *line = buf, *nl;
		while ((nl = strchr(line, '\n'))) {
			*nl = 0;
			uintptr_t start, end, off;
			const char *path;
			if (parse_maps_line(line, &start, &end, &off, &path) &&
			    addr >= start && addr < end) {
				snprintf(out, size, "%s+%#lx", *path ? path : "[anonymous]",
					 (unsigned long)(addr - start + off));
				close(fd);
				return;
			}
			line = nl + 1;
		}
		have = strlen(line);		/* a partial line: keep it */
		memmove(buf, line, have);
		if (have == sizeof(buf) - 1)
			have = 0;		/* longer than a path can be: drop it */
	}
	close(fd);
}

static void write_stack(int fd)
{
	char line[FRAME_NAME + 64];
	void *frames[STACK_FRAMES];

	if (!__atomic_load_n(&unwinder_ready, __ATOMIC_ACQUIRE)) {
		static const char none[] = "slub: no stack: the report came before start-up "
					   "prepared the unwinder\n";
		report_write(fd, none, sizeof(none) - 1);
		return;
	}
	int n = backtrace(frames, STACK_FRAMES);
	static const char head[] = "slub: slub_abort_on_error: stack of the reporting thread:\n";
	report_write(fd, head, sizeof(head) - 1);
	for (int i = 1; i < n; i++) {	/* 0 is write_stack itself */
		char name[FRAME_NAME];
		frame_name((uintptr_t)frames[i], name, sizeof(name));
		int len = snprintf(line, sizeof(line), "  #%-2d %p %s\n", i, frames[i], name);
		report_write(fd, line, len < (int)sizeof(line) ? (size_t)len : sizeof(line) - 1);
	}
}

void report_abort(int fd)
{
	/* open() and read() are cancellation points: unwinding now would leave locks held. */
	os_cancel_off();
	write_stack(fd);
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	sigemptyset(&dfl.sa_mask);
	sigaction(SIGABRT, &dfl, NULL);
	sigset_t abrt;
	sigemptyset(&abrt);
	sigaddset(&abrt, SIGABRT);
	pthread_sigmask(SIG_UNBLOCK, &abrt, NULL);
	abort();
}
