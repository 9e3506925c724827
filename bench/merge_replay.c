// SPDX-License-Identifier: MIT
/*
 * merge_replay [DIR] - how many kmem_cache_create() calls share a cache:
 * the running kernel's own decisions, read from its /sys/kernel/slab (or
 * DIR, a copy), against libslub's on the same creations.
 *
 * Every name in the tree is one creation: a symlink names an alias of the
 * mergeable cache it points to (":[flags-]size"), a directory of its own
 * name is a cache the kernel kept apart.  Each is replayed into libslub
 * with the size, alignment and flags the tree shows (the id's letters,
 * the flag files, a constructor, a usercopy size).  A merged cache's
 * object_size is the largest of its names', so every alias replays at
 * that size: the figure checks the rules on the kernel's own mix of
 * caches, not the kernel's exact sizes.  A directory of its own name
 * that no shown property keeps apart was kept apart by SLAB_NO_MERGE (not
 * shown in sysfs), and replays with it.  kmalloc and boot caches are not
 * replayed: libslub makes its own at start-up, and they are merge targets.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <slub.h>

static void replay_ctor(void *p)
{
	(void)p;
}

struct creation {
	char name[64], dir[64];
	unsigned int size, align, usersize;
	slab_flags_t flags;
	int ctor;
};

static unsigned long read_ul(const char *root, const char *dir, const char *file)
{
	char path[PATH_MAX], text[64] = "";
	snprintf(path, sizeof(path), "%s/%s/%s", root, dir, file);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	if (!fgets(text, sizeof(text), f))
		text[0] = 0;
	fclose(f);
	return strtoul(text, NULL, 10);
}

static int has_text(const char *root, const char *dir, const char *file)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s/%s", root, dir, file);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	int c = fgetc(f);
	fclose(f);
	return c != EOF && c != '\n';
}

static int skipped(const char *name)
{
	return !strncmp(name, "kmalloc-", 8) || !strncmp(name, "dma-kmalloc-", 12) ||
	       !strcmp(name, "kmem_cache") || !strcmp(name, "kmem_cache_node");
}

/* The cache a name stands for, with what the tree shows of it. */
static void describe(const char *root, const char *dir, struct creation *c)
{
	snprintf(c->dir, sizeof(c->dir), "%.63s", dir);
	c->size = (unsigned int)read_ul(root, dir, "object_size");
	c->align = (unsigned int)read_ul(root, dir, "align");
	c->usersize = (unsigned int)read_ul(root, dir, "usersize");
	c->ctor = has_text(root, dir, "ctor");
	c->flags = 0;
	if (dir[0] == ':') {	/* the id's letters are the merge-relevant flags */
		for (const char *p = dir + 1; *p && *p != '-' && (*p < '0' || *p > '9'); p++)
			c->flags |= *p == 'd' ? SLAB_CACHE_DMA : *p == 'D' ? SLAB_CACHE_DMA32 :
				    *p == 'a' ? SLAB_RECLAIM_ACCOUNT : *p == 'A' ? SLAB_ACCOUNT :
				    *p == 'F' ? SLAB_CONSISTENCY_CHECKS : 0;
		return;
	}
	static const struct { const char *file; slab_flags_t flag; } files[] = {
		{ "reclaim_account", SLAB_RECLAIM_ACCOUNT }, { "cache_dma", SLAB_CACHE_DMA },
		{ "destroy_by_rcu", SLAB_TYPESAFE_BY_RCU }, { "sanity_checks", SLAB_CONSISTENCY_CHECKS },
		{ "red_zone", SLAB_RED_ZONE }, { "poison", SLAB_POISON },
		{ "store_user", SLAB_STORE_USER }, { "trace", SLAB_TRACE },
	};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if (read_ul(root, dir, files[i].file))
			c->flags |= files[i].flag;
	if (!c->ctor && !c->usersize && !(c->flags & (SLAB_TYPESAFE_BY_RCU | SLAB_POISON |
		      SLAB_RED_ZONE | SLAB_STORE_USER | SLAB_TRACE | SLAB_CONSISTENCY_CHECKS)))
		c->flags |= SLAB_NO_MERGE;
}

static int count_cache(struct kmem_cache *s, void *arg)
{
	(void)s;
	++*(int *)arg;
	return 0;
}

static int caches(void)
{
	int n = 0;
	slub_for_each_cache(count_cache, &n);
	return n;
}

int main(int argc, char **argv)
{
	const char *root = argc > 1 ? argv[1] : "/sys/kernel/slab";
	DIR *d = opendir(root);
	if (!d) {
		perror(root);
		return 1;
	}
	static struct creation c[8192];
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)) && n < 8192) {
		if (e->d_name[0] == '.' || skipped(e->d_name))
			continue;
		char path[PATH_MAX], target[PATH_MAX];
		snprintf(path, sizeof(path), "%s/%s", root, e->d_name);
		ssize_t len = readlink(path, target, sizeof(target) - 1);
		struct creation *cr = &c[n];
		snprintf(cr->name, sizeof(cr->name), "%.63s", e->d_name);
		if (len > 0) {	/* an alias of a mergeable cache */
			target[len] = 0;
			const char *base = strrchr(target, '/') ? strrchr(target, '/') + 1 : target;
			describe(root, base, cr);
		} else if (e->d_name[0] != ':') {
			describe(root, e->d_name, cr);
		} else {
			continue;	/* an id directory: its names are the symlinks */
		}
		n++;
	}
	closedir(d);
	/*
	 * The kernel: each id's aliases file counts the creations it answered
	 * with that cache (its first creation, or a kmalloc cache made at
	 * boot, made it).
	 */
	unsigned long kernel_merged = 0;
	d = opendir(root);
	while (d && (e = readdir(d)))
		if (e->d_name[0] == ':')
			kernel_merged += read_ul(root, e->d_name, "aliases");
	if (d)
		closedir(d);
	int replay_merged = 0, differ = 0, into_kmalloc = 0, nr_targets = 0;
	struct kmem_cache *targets[64];
	for (int i = 0; i < n; i++) {
		int before = caches();
		struct kmem_cache *s = kmem_cache_create_usercopy(c[i].name, c[i].size, c[i].align,
								  c[i].flags, 0, c[i].usersize,
								  c[i].ctor ? replay_ctor : NULL);
		int merged = s && caches() == before;
		replay_merged += merged;
		if (merged && !strncmp(slub_cache_name(s), "kmalloc-", 8)) {
			into_kmalloc++;
			int seen = 0;
			for (int k = 0; k < nr_targets; k++)
				seen |= targets[k] == s;
			if (!seen && nr_targets < 64)
				targets[nr_targets++] = s;
		}
		if (merged && c[i].dir[0] != ':') {
			differ++;
			printf("  merged here, apart in the kernel: %s (%u bytes) into %s\n",
			       c[i].name, c[i].size, slub_cache_id(s));
		}
	}
	printf("%s: %d cache creations (kmalloc and boot caches aside)\n", root, n);
	printf("  the kernel answered %lu of them with an existing cache (%.1f%%)\n", kernel_merged,
	       100.0 * (double)kernel_merged / (n ? n : 1));
	printf("  libslub, replaying them: %d (%.1f%%); %d merged here but apart there\n",
	       replay_merged, 100.0 * replay_merged / (n ? n : 1), differ);
	/*
	 * A kernel that keeps its kmalloc caches apart (kmalloc-N a directory
	 * of its own, as on 6.x with memcg) makes a cache of each group's first
	 * name where libslub merges it into kmalloc-N: one merge fewer a group.
	 */
	printf("  of those, %d went into %d kmalloc caches; where the kernel keeps kmalloc caches\n"
	       "  apart, each group's first would have made a cache: %d (%.1f%%)\n",
	       into_kmalloc, nr_targets, replay_merged - nr_targets,
	       100.0 * (replay_merged - nr_targets) / (n ? n : 1));
	return 0;
}
