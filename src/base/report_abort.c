// SPDX-License-Identifier: MIT
/*
 * report_abort.c - slub_abort_on_error: after a report, the reporting
 * thread's stack, then abort(), as glibc stops a program on a bad free.
 *
 * Nothing here may allocate or wait for a lock: a report can come from
 * inside malloc with an allocator lock held.
 *  - The stack comes from unwind_backtrace() (unwind.h), readied by
 *    unwind_prime() at load or from slub_setup(), outside any allocator
 *    path.
 *  - Frames are named "module+0xoffset" (addr2line -e module 0xoffset) from
 *    /proc/self/maps (maps.h): backtrace_symbols_fd() would call dladdr(),
 *    which takes dl_load_lock, and a thread inside dlopen() may hold it
 *    while it waits for an allocator lock we hold.
 *  - The program's SIGABRT handler is not run: it might call malloc while
 *    this thread holds an allocator lock, and a hang is worse than a crash.
 *    So the locks we may hold do not matter: no code of the process runs
 *    after the report.  Debuggers and core dumps see SIGABRT as usual.
 */
#define _GNU_SOURCE
#include "base/report.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/maps.h"
#include "base/os.h"
#include "base/unwind.h"

/* Small buffers: the reporting thread's stack may be small too. */
#define STACK_FRAMES 48
#define FRAME_NAME 1024		/* longer module paths are cut */

/* Name the mapping @addr lies in: "path+0xoff", or "?" if none. */
static void frame_name(uintptr_t addr, char *out, size_t size)
{
	struct maps_entry e;
	char path[FRAME_NAME - 32];	/* room for the offset */
	if (!maps_find(addr, &e, path, sizeof(path)))
		snprintf(out, size, "?");
	else
		snprintf(out, size, "%s+%#lx", *path ? path : "[anonymous]",
			 (unsigned long)(addr - e.start + e.offset));
}

static void write_stack(int fd)
{
	char line[FRAME_NAME + 64];
	void *frames[STACK_FRAMES];

	if (!unwind_primed()) {
		static const char none[] = "slub: no stack: the report came before start-up "
					   "prepared the unwinder\n";
		report_write(fd, none, sizeof(none) - 1);
		return;
	}
	int n = unwind_backtrace(frames, STACK_FRAMES);
	static const char head[] = "slub: slub_abort_on_error: stack of the reporting thread:\n";
	report_write(fd, head, sizeof(head) - 1);
	for (int i = 2; i < n; i++) {	/* 0, 1: unwind_backtrace, write_stack */
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
