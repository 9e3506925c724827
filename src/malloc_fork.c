/*
 * malloc_fork.c - the malloc library's fork handlers, registered lazily
 * (the why and the when: init.h).
 *
 * One part lives here because it is the malloc library's alone: this
 * library exports __register_atfork, the function behind every
 * pthread_atfork() call (glibc's libc_nonshared.a turns pthread_atfork into
 * a call of it with the caller's __dso_handle).  Preloaded, ours is found
 * first: it registers our handlers before anyone else's, then passes the
 * call on to glibc's, found with dlsym(RTLD_NEXT) (the caller's
 * dso_handle must reach it: dlclose() unregisters by it).
 *
 * Our own go in another way, which needs no dlsym in calloc: the dynamic
 * linker lets an unversioned definition (ours) satisfy a versioned
 * reference, so even __register_atfork@GLIBC_2.3.2 would find us again,
 * but glibc's first pthread_atfork (kept for programs linked against the
 * old libpthread) calls its __register_atfork directly; we call that one
 * by its version.  Where that version is unknown, the handlers are
 * registered at load, as in libslub.so.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>

#include "init.h"

#if SLUB_HAVE_SINGLE_THREADED && (defined(__x86_64__) || defined(__aarch64__))

#if defined(__x86_64__)
#define PTHREAD_ATFORK_COMPAT "GLIBC_2.2.5"
#else
#define PTHREAD_ATFORK_COMPAT "GLIBC_2.17"	/* arm64's first glibc */
#endif

typedef void (*fork_handler_fn)(void);

int libc_pthread_atfork(fork_handler_fn prepare, fork_handler_fn parent, fork_handler_fn child);
__asm__(".symver libc_pthread_atfork, pthread_atfork@" PTHREAD_ATFORK_COMPAT);

/* libc's own, as the next definition after ours, found once it is needed. */
static int (*libc_register_atfork)(fork_handler_fn, fork_handler_fn, fork_handler_fn, void *);

bool slub_fork_handlers_lazy(void)
{
	return true;
}

int slub_atfork(fork_handler_fn prepare, fork_handler_fn parent, fork_handler_fn child)
{
	return libc_pthread_atfork(prepare, parent, child);
}

__attribute__((visibility("default")))
int __register_atfork(fork_handler_fn prepare, fork_handler_fn parent, fork_handler_fn child,
		      void *dso_handle);
int __register_atfork(fork_handler_fn prepare, fork_handler_fn parent, fork_handler_fn child,
		      void *dso_handle)
{
	slub_fork_handlers_register();
	/* Another thread is registering ours: theirs must come after. */
	while (__atomic_load_n(&slub_fork_handlers, __ATOMIC_ACQUIRE) != FORK_HANDLERS_READY)
		sched_yield();
	__typeof__(libc_register_atfork) next = __atomic_load_n(&libc_register_atfork,
								 __ATOMIC_ACQUIRE);
	if (!next) {
		next = (__typeof__(next))dlsym(RTLD_NEXT, "__register_atfork");
		if (!next)
			return libc_pthread_atfork(prepare, parent, child);	/* no handle, still run */
		__atomic_store_n(&libc_register_atfork, next, __ATOMIC_RELEASE);
	}
	return next(prepare, parent, child, dso_handle);
}

#endif
