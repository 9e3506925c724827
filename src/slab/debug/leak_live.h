/* SPDX-License-Identifier: MIT */
/*
 * leak_live.h - kmemleak's scan of the running process (leak_live.c), for
 * the agent; apart from slab_leak.h so that the agent needs no slab
 * internals.
 */
#ifndef SLUB_LEAK_LIVE_H
#define SLUB_LEAK_LIVE_H

#include <stddef.h>

#include "base/compiler.h"

/*
 * The listing, as text, into @buf (at most @size bytes; returns the
 * length).  A block is listed once two scans in a row found it
 * unreferenced and unchanged, and it is older than slub_leak_min_age; the
 * program runs on meanwhile.
 */
__hidden size_t slub_leak_scan_live(char *buf, size_t size);

#endif
