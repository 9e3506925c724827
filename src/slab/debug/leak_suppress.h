/* SPDX-License-Identifier: MIT */
/*
 * leak_suppress.h - the leak check's suppression file (leak_suppress.c):
 * LeakSanitizer's `leak:PATTERN` lines, matched against the functions and
 * modules of a call site's stack.
 */
#ifndef SLUB_LEAK_SUPPRESS_H
#define SLUB_LEAK_SUPPRESS_H

#include <stdbool.h>
#include <stdint.h>

#include "base/compiler.h"

/* Read slub_leak_suppressions' file once; false (said why) when none can be used. */
__hidden bool leak_suppress_load(void);
/* Does a suppression match a frame of the site (its stack @handle, or its caller @addr)? */
__hidden bool leak_suppressed(uintptr_t addr, uint32_t handle);

#endif
