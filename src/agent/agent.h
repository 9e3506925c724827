/* SPDX-License-Identifier: MIT */
/*
 * agent.h - slub_agent (agent.c): a thread that answers the attribute
 * API over a unix socket, for slabinfo -p and slubfs.
 */
#ifndef SLUB_AGENT_H
#define SLUB_AGENT_H

#include <stdbool.h>

#include "base/compiler.h"

/* Whether the options ask for the agent (options_lock held, or started). */
__hidden bool slub_agent_wanted(void);
/*
 * Start the agent unless this process has one.  Only where making a
 * thread is safe: the constructor, slub_setup(), the fork child handler.
 */
__hidden void slub_agent_start(void);

#endif
