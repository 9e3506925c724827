/* SPDX-License-Identifier: MIT */
/*
 * slabinfo_source.h - where the slabinfo tool reads caches from: a
 * /sys/kernel/slab-style directory tree (slabinfo.c) or a live libslub
 * process's agent (slabinfo_live.c).  Both fill the same slabinfo_set,
 * so every output is the formatting core's.
 */
#ifndef SLABINFO_SOURCE_H
#define SLABINFO_SOURCE_H

#include <regex.h>
#include <stdbool.h>
#include <sys/types.h>

#include "slab/view/slabinfo.h"

struct source {
	const char *what;		/* for messages: the tree's path, "pid N" */
	void *ctx;			/* the reader's and writer's */
	slabinfo_read_fn read;
	slabinfo_write_fn write;
	/* The caches and aliases whose names @re matches (ids always); 0 or -1. */
	int (*load)(struct source *src, struct slabinfo_set *set, const regex_t *re);
	/* The attribute names of @cache, malloc'd (the array and each name). */
	size_t (*attr_names)(struct source *src, const char *cache, char ***names);
};

/* The set's growing arrays: a cache loaded (false if it is none), an alias. */
bool source_add_cache(struct slabinfo_set *set, const char *dir, void *ctx);
void source_add_alias(struct slabinfo_set *set, const char *name, const char *ref);
/* A name added to a malloc'd array of them. */
void source_add_name(char ***names, size_t *nr, size_t *cap, const char *name);

/* The agent of @pid as a source: 0, or 1 after saying why not. */
int live_source_open(struct source *src, pid_t pid);
/* The process is gone (its connection broke), or its agent was given up. */
/* After a failed load: true if the process exec'd and its new agent is connected. */
bool live_source_reopen(struct source *src);
bool live_source_gone(const struct source *src);
/* The same, saying so on stderr (once the output is done). */
bool live_source_hung_up(const struct source *src);

/* -p PID --leaks: a leak scan of the process (kmemleak's), its listing on stdout. */
int live_leaks(struct source *src);

/*
 * -p PID --watch SECONDS: the table every @seconds, sorted by memory, each
 * change since the last refresh shown, until SIGINT or the process's end.
 */
int live_watch(struct source *src, const struct slabinfo_opts *opts, const regex_t *re,
	       double seconds);

#endif
