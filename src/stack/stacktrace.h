/* SPDX-License-Identifier: MIT */
/*
 * stacktrace.h - call stacks for slub_debug's alloc/free tracking: capture
 * (stacktrace.c, on every tracked allocation and free) and, only when a
 * report prints them, names (stacktrace_symbol.c).
 *
 * Capture before taking any allocator lock: the unwinder may fault in
 * unwind tables and, unprimed, would dlopen (stack/unwind.h).  Naming never
 * calls dladdr() or dl_iterate_phdr() (they take dl_load_lock: an ABBA
 * deadlock with a thread in dlopen() that waits for an allocator lock we
 * hold) and never allocates: it reads /proc/self/maps and the module's own
 * ELF symbol tables.
 */
#ifndef SLUB_STACKTRACE_H
#define SLUB_STACKTRACE_H

#include <stddef.h>
#include <stdint.h>
#include "base/compiler.h"
#include "stack/unwind.h"

/* Frames the kernel keeps per track (TRACK_ADDRS_COUNT). */
#define STACK_TRACE_FRAMES 16

/*
 * Ready the unwinder, at a point where dlopen() is safe (stack/unwind.h):
 * the slab layer calls it at start-up when a cache tracks users.  Until
 * then stack_trace_save() captures nothing: it cannot know whether it runs
 * inside the dynamic loader, where priming could corrupt the loader's state.
 */
static inline void stack_trace_prime(void)
{
	unwind_prime();
}

/*
 * Store up to @size return addresses of the caller's stack in @store,
 * innermost first, passing over @skip frames above the caller (the
 * allocator's own); the number stored.  0 before stack_trace_prime(), and
 * when this thread is already capturing (the unwinder's own malloc, a
 * signal handler that interrupted a capture): it never recurses.
 */
__hidden unsigned int stack_trace_save(uintptr_t *store, unsigned int size, unsigned int skip);

/* What stack_trace_symbol() could tell about an address. */
enum stack_trace_found {
	STACK_SYM_NONE,		/* no module: "?" (unmapped), "[anonymous]+0xoff", "[stack]+0xoff" */
	STACK_SYM_MODULE,	/* "module+0xoff" (addr2line -e module 0xoff) */
	STACK_SYM_FUNCTION,	/* "function+0xoff/0xsize [module]", as the kernel's %pS */
};

/*
 * Name @addr into @buf (cut to @len): the function holding it from the
 * module's .symtab, else its .dynsym, else the module and the address's
 * offset in it, as addr2line takes it.  For print time only: it reads
 * /proc/self/maps and the module's file (slow, takes no lock, and never
 * maps the file: one rewritten in place cannot raise SIGBUS).
 */
__hidden enum stack_trace_found stack_trace_symbol(uintptr_t addr, char *buf, size_t len);

/* One report detail line per frame: @indent, then the frame's name (a module opened once). */
__hidden void stack_trace_print(const uintptr_t *entries, unsigned int nr, const char *indent);

/*
 * The allocator's own code, which a track or a report's stack starts
 * after.  As a shared object (the usual case, the preloaded one) that is
 * its text mapping.  Linked into a program (a static build), its objects
 * sit together in the text: the span from the first to the end of the
 * last of the functions on the way from an entry point to a capture or a
 * report, which each layer names once (stack_trace_add_own(), from a
 * constructor; looked up at the first frame asked about: sizes come from
 * the symbol table; @cold: __cold ones,
 * which the linker puts apart).
 */
__hidden bool stack_trace_own_frame(uintptr_t addr);
__hidden void stack_trace_add_own(const void *const *functions, unsigned int nr, bool cold);

/*
 * For a report, not a track: the calling thread's stack from the
 * program's frame on (the allocator's own frames dropped) into @store, at
 * most @size frames; how many.  Readies the CFI walker if nothing did
 * (unwind_prime_walk(): no dlopen, no malloc), so a release-mode report
 * names the call it reports; 0 frames where only backtrace() unwinds and
 * start-up did not prime it.
 */
__hidden unsigned int stack_trace_save_report(uintptr_t *store, unsigned int size);

/*
 * The kernel's dump_stack() after a slab_err()/object_err(): "CPU: N PID:
 * P TID: T Comm: NAME @taint", "Call Trace:", then the frames from the
 * program's call into the allocator, as report detail lines.
 */
__hidden void stack_trace_dump_report(const char *taint);

#endif
