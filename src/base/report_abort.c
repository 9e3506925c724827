// SPDX-License-Identifier: MIT
/*
 * report_abort.c - slub_abort_on_error: after a report, the reporting
 * thread's stack, then abort(), as glibc stops a program on a bad free.
 *
 * Nothing here may allocate or wait for a lock: a report can come from
 * inside malloc with an allocator lock held.
 *  - The stack is written by the debug layer's writer, registered at load
 *    (report_set_stack_writer): the unwinder lives there, above this layer.
 *  - The program's SIGABRT handler is not run: it might call malloc while
 *    this thread holds an allocator lock, and a hang is worse than a crash.
 *    So the locks we may hold do not matter: no code of the process runs
 *    after the report.  Debuggers and core dumps see SIGABRT as usual.
 */
#define _GNU_SOURCE
#include "base/report.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/os.h"

/* Set at load by the debug layer (stack/stacktrace.c), read at abort. */
static void (*stack_writer)(int fd);

void report_set_stack_writer(void (*write_stack)(int fd))
{
	__atomic_store_n(&stack_writer, write_stack, __ATOMIC_RELEASE);
}

static void write_stack(int fd)
{
	void (*writer)(int) = __atomic_load_n(&stack_writer, __ATOMIC_ACQUIRE);
	if (writer) {
		writer(fd);
		return;
	}
	static const char none[] = "slub: no stack: the report came before start-up "
				   "prepared the unwinder\n";
	report_write(fd, none, sizeof(none) - 1);
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
