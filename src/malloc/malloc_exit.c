// SPDX-License-Identifier: MIT
/*
 * malloc_exit.c - exit(), before the C library's where the malloc library
 * is preloaded or linked: it tells the leak check at exit where the
 * program's stack ends.
 *
 * Why: the check runs in a destructor, deep under exit(), and scans the
 * exiting thread's stack as a root.  Below the frame that called exit(),
 * that stack is exit's own and its handlers', laid over frames the program
 * had left; a word there that the exit path does not write keeps an old
 * copy of a pointer, and a leaked block it names passes for reachable.
 * The scan cannot start at the caller's frame without the caller's
 * registers, which may hold the only pointer to a live block: the exit
 * path saves them below that frame, wherever its code puts them.  Here
 * they are saved first, in this frame, and the scan reads from it up.
 *
 * The C library's own call of exit() after main returns does not come
 * here (a direct call); slab_leak.c finds that boundary by the CFI walk.
 * x86-64 only, as that walk: elsewhere this only passes the call on.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "slab/debug/slab_leak.h"

__attribute__((visibility("default"), noreturn, noinline)) void exit(int status)
{
	/* Every callee-saved register, the caller's values, into this frame. */
	__builtin_unwind_init();
#if defined(__x86_64__)
	uintptr_t sp;
	__asm__ volatile("mov %%rsp, %0" : "=r"(sp));
	slub_leak_exit_from(sp);
#endif
	void (*libc_exit)(int) = (void (*)(int))dlsym(RTLD_NEXT, "exit");
	if (libc_exit)
		libc_exit(status);
	_exit(status);	/* no C library's exit() to find: nothing sensible left to run */
}
