// SPDX-License-Identifier: MIT
/*
 * slab_exit.c - at exit: every debug cache validated (slub_exit_validate),
 * an ERROR SUMMARY line, and the exit status slub_error_exitcode asks for.
 *
 * Damage to a red zone or to a freed object is found when something checks
 * that object again: its free, its next allocation, a validation.  Damage
 * that nothing touched later would go unseen; so, with any slub_debug flag,
 * every debug cache (and malloc's large blocks, through the hook the malloc
 * library fills, and KFENCE's live objects' slack) is validated when the
 * process exits, and one line sums
 * the errors of the whole run, as valgrind's ERROR SUMMARY.  The reports of
 * this validation end without a call trace: the exit handler's stack says
 * nothing of the bug.
 *
 * A destructor of priority 101: it runs at exit() or the return from main,
 * after the program's destructors and atexit handlers and after this
 * library's default-priority destructors (the leak check's listing, the
 * exit statistics), which run before prioritised ones.  Never at _exit()
 * (nor in a vfork or posix_spawn child, which leave by _exit), as the
 * program's own handlers.  A forked child that exits validates its copy of
 * the heap: damage done before the fork and found by nobody yet is then
 * reported by each process that exits, each summary with its pid.  Other
 * threads may still run: the caches are validated under their list locks,
 * as slub_validate() does.
 */
#define _GNU_SOURCE
#include "slab/debug/slab_debug.h"
#include "slab/debug/kfence.h"
#include "slab/core/slab_common.h"

#include <stdio.h>
#include <unistd.h>

#include "base/options.h"
#include "base/report.h"
#include "base/start.h"

static bool exit_armed;

/*
 * Called by slab_init(): arms the destructor below, and makes a static
 * link pull this file in.  Caches may get debug flags from their creator
 * as well as from slub_debug: whether any has them is known at exit only.
 */
void slab_exit_init(void)
{
	__atomic_store_n(&exit_armed, slub_opt(exit_validate) || slub_opt(error_exitcode),
			 __ATOMIC_RELEASE);
}

/* libslub.so has no extents; libslub-malloc.so replaces this (malloc_debug.c). */
__attribute__((weak)) void slub_exit_validate_extents(void)
{
}

/* The debug caches validated; how many there were (0: nothing to say at exit). */
static unsigned int validate_caches(void)
{
	struct list_head *pos;
	unsigned int validated = 0;
	debug_stack_off = true;
	pthread_mutex_lock(&slab_caches_lock);
	list_for_each(pos, &slab_caches) {
		struct kmem_cache *s = list_entry(pos, struct kmem_cache, list);
		if (kmem_cache_debug(s)) {
			debug_validate_cache(s);
			validated++;
		}
	}
	pthread_mutex_unlock(&slab_caches_lock);
	if (slub_debug_any(SLAB_DEBUG_FLAGS)) {
		slub_exit_validate_extents();
		validated++;
	}
	if (kfence_enabled())
		validated += kfence_validate_live() ? 1 : 0;
	debug_stack_off = false;
	return validated;
}

static void error_summary(unsigned long found_at_exit, bool validated)
{
	unsigned long errors = slub_report_bugs(), in_caches;
	unsigned int caches = debug_error_caches(&in_caches);
	char at_exit[64] = "";
	if (validated)
		snprintf(at_exit, sizeof(at_exit), "; %lu found at exit", found_at_exit);
	if (in_caches == errors)
		slub_report_cont("slub: ERROR SUMMARY: %lu error%s in %u cache%s%s (pid %d)", errors,
				 errors == 1 ? "" : "s", caches, caches == 1 ? "" : "s", at_exit,
				 getpid());
	else
		slub_report_cont("slub: ERROR SUMMARY: %lu error%s: %lu in %u cache%s, %lu outside "
				 "them%s (pid %d)", errors, errors == 1 ? "" : "s", in_caches, caches,
				 caches == 1 ? "" : "s", errors - in_caches, at_exit, getpid());
}

__attribute__((destructor(101))) static void validate_at_exit(void)
{
	if (!__atomic_load_n(&exit_armed, __ATOMIC_ACQUIRE) ||
	    !__atomic_load_n(&slub_started, __ATOMIC_ACQUIRE) || slub_unusable)
		return;
	unsigned long before = slub_report_bugs();
	bool validate = slub_opt(exit_validate) && validate_caches();
	unsigned long errors = slub_report_bugs();
	/* A clean run stays silent, as it always was: the summary comes with errors. */
	if (errors)
		error_summary(errors - before, validate);
	long code = slub_opt(error_exitcode);
	if (errors && code) {
		/* As valgrind's --error-exitcode: the status replaced; stdio is flushed first. */
		fflush(NULL);
		_exit((int)code);
	}
}
