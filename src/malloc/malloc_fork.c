// SPDX-License-Identifier: MIT
/*
 * malloc_fork.c - the malloc library's fork handlers, registered lazily
 * (the why and the when: base/start.h).
 *
 * One part lives here because it is the malloc library's alone: this
 * library exports __register_atfork, the function behind every
 * pthread_atfork() call (glibc's libc_nonshared.a turns pthread_atfork into
 * a call of it with the caller's __dso_handle).  Preloaded, ours is found
 * first: it registers our handlers before anyone else's, then passes the
 * call on to glibc's, found with dlsym(RTLD_NEXT) (the caller's
 * dso_handle must reach it: dlclose() unregisters by it).
 *
 * Ours go in another way, which needs no dlsym in calloc.  The dynamic
 * linker lets an unversioned definition (ours) satisfy a versioned
 * reference, so even __register_atfork@GLIBC_2.3.2 would find us again;
 * but since glibc 2.34 (libpthread merged into libc) the pthread_atfork
 * kept for programs linked against the old libpthread jumps straight to
 * glibc's __register_atfork, and we call that one by its version.  Should
 * it come back to us after all (an interposer of pthread_atfork that calls
 * __register_atfork), the call is passed on, not waited on.  Elsewhere (not
 * x86-64, older glibc) the handlers are registered at load, as in
 * libslub.so.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>

#include "base/start.h"
#include "base/report.h"

#if defined(__x86_64__) && defined(__GLIBC__) && \
	(__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34)) && SLUB_HAVE_SINGLE_THREADED

typedef void (*fork_handler_fn)(void);

int libc_pthread_atfork(fork_handler_fn prepare, fork_handler_fn parent, fork_handler_fn child);
__asm__(".symver libc_pthread_atfork, pthread_atfork@GLIBC_2.2.5");

/* glibc's __register_atfork, the next definition after ours. */
static int (*libc_register_atfork)(fork_handler_fn, fork_handler_fn, fork_handler_fn, void *);

/* Base registers the handlers with this one, and not at load: lazily. */
slub_initcall(malloc_fork_initcall, .atfork = libc_pthread_atfork);

__attribute__((visibility("default")))
int __register_atfork(fork_handler_fn prepare, fork_handler_fn parent, fork_handler_fn child,
		      void *dso_handle);
int __register_atfork(fork_handler_fn prepare, fork_handler_fn parent, fork_handler_fn child,
		      void *dso_handle)
{
	/* Ours first (waiting for another thread's registration to finish). */
	slub_fork_handlers_register(true);
	__typeof__(libc_register_atfork) next = __atomic_load_n(&libc_register_atfork,
								 __ATOMIC_ACQUIRE);
	if (!next) {
		next = (__typeof__(next))dlsym(RTLD_NEXT, "__register_atfork");
		if (!next) {
			slub_report("pthread_atfork: glibc's __register_atfork not found; "
				    "handlers not registered");
			return ENOMEM;
		}
		__atomic_store_n(&libc_register_atfork, next, __ATOMIC_RELEASE);
	}
	return next(prepare, parent, child, dso_handle);
}

#endif
