// SPDX-License-Identifier: MIT
/*
 * demo.c - what libslub does so far: the page allocator (blocks of every
 * order, the buddy free lists per zone and order after each step, as
 * /proc/buddyinfo shows them), then an object cache, merged caches and
 * their /sys/kernel/slab attributes, and the kmalloc size classes.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <slub.h>

#define BLOCKS_PER_ORDER 3

static void show(const char *what)
{
	printf("\n-- %s\n", what);
	printf("%-21s", "");
	for (int o = 0; o <= MAX_PAGE_ORDER; o++)
		printf(" %6d", o);
	printf("   (order)\n");
	slub_print_buddyinfo(stdout);
}

/* One attribute's text, as `cat /sys/kernel/slab/<cache>/<attr>` shows it. */
static const char *attr(struct kmem_cache *s, const char *name)
{
	static char buf[256];
	if (slub_attr_read(s, name, buf, sizeof(buf)) < 0)
		return "?\n";
	return buf;
}

/* Caches of compatible size and flags share one, as in the kernel. */
static void merging(void)
{
	static const struct { const char *name; unsigned int size; slab_flags_t flags; } made[] = {
		{ "inode_cache", 600, 0 },
		{ "ext4_inode", 596, 0 },		/* 600 after aligning to a word: merged */
		{ "xfs_inode", 600, SLAB_RECLAIM_ACCOUNT },	/* accounted apart: its own */
		{ "sock_inode", 60, 0 },		/* into kmalloc-64 */
	};
	struct kmem_cache *s[4];
	printf("\n-- caches merge as in the kernel: a new cache whose objects fit an existing one's\n"
	       "   slots (within a word, same alignment and accounting, no constructor or\n"
	       "   debugging) is that cache, under the unique id /sys/kernel/slab lists it by\n");
	for (int i = 0; i < 4; i++) {
		s[i] = kmem_cache_create(made[i].name, made[i].size, 0, made[i].flags, NULL);
		printf("kmem_cache_create(\"%s\", %u) -> %s (first created as %s)\n", made[i].name,
		       made[i].size, slub_cache_id(s[i]), slub_cache_name(s[i]));
	}
	printf("aliases of %s:", slub_cache_id(s[0]));
	for (unsigned int i = 0; slub_cache_alias(s[0], i); i++)
		printf(" %s", slub_cache_alias(s[0], i));
	printf("\n");

	enum { N = 100 };
	void *obj[N];
	for (int i = 0; i < N; i++)
		obj[i] = kmem_cache_alloc(s[1], GFP_KERNEL);
	printf("\n-- its attributes, after %d allocations (the files of /sys/kernel/slab/%s/):\n", N,
	       slub_cache_id(s[0]));
	static const char *const names[] = { "slab_size", "objs_per_slab", "order", "objects",
					     "total_objects", "slabs", "aliases" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		printf("  %-14s %s", names[i], attr(s[0], names[i]));
	slub_attr_write(s[0], "order", "3", 1);
	printf("echo 3 > order: new slabs have order %s", attr(s[0], "order"));
	printf("  %-14s %s", "objs_per_slab", attr(s[0], "objs_per_slab"));
	for (int i = 0; i < N; i++)
		kmem_cache_free(s[1], obj[i]);
	for (int i = 3; i >= 0; i--)
		kmem_cache_destroy(s[i]);
}

int main(void)
{
	unsigned long blocks[MAX_PAGE_ORDER + 1][BLOCKS_PER_ORDER];
	unsigned long dma32;

	printf("libslub page allocator: orders 0..%d, %lu-byte pages, largest buddy block %lu KiB\n",
	       MAX_PAGE_ORDER, PAGE_SIZE, (PAGE_SIZE << MAX_PAGE_ORDER) >> 10);

	for (int o = 0; o <= MAX_PAGE_ORDER; o++)
		for (int i = 0; i < BLOCKS_PER_ORDER; i++) {
			blocks[o][i] = __get_free_pages(GFP_KERNEL, (unsigned int)o);
			if (!blocks[o][i]) {
				perror("__get_free_pages");
				return 1;
			}
			memset((void *)blocks[o][i], 0x5a, PAGE_SIZE << o);
		}
	dma32 = __get_free_pages(GFP_DMA32, 2);
	printf("\n%d blocks of each order 0..%d allocated; one order-2 DMA32 block at %#lx (below 4 GiB: %s)\n",
	       BLOCKS_PER_ORDER, MAX_PAGE_ORDER, dma32, dma32 && dma32 < (1UL << 32) ? "yes" : "no");
	show("after allocating: the first 64 MiB section of each zone is split into blocks of\n"
	     "   every order (orders 0-3 were taken in batches through the per-CPU lists)");

	for (int o = 0; o <= MAX_PAGE_ORDER; o++)
		for (int i = 0; i < BLOCKS_PER_ORDER; i += 2)
			free_pages(blocks[o][i], (unsigned int)o);
	show("after freeing the 1st and 3rd block of each order: their buddies are still in use");

	for (int o = 0; o <= MAX_PAGE_ORDER; o++)
		free_pages(blocks[o][1], (unsigned int)o);
	free_pages(dma32, 2);
	show("after freeing everything: coalesced, but for blocks of order 0-3 that wait on\n"
	     "   per-CPU page lists (the kernel's pcp) for the next allocation on this CPU");

	unsigned long page = get_zeroed_page(GFP_KERNEL);
	printf("\nget_zeroed_page -> %#lx; virt_to_page/page_address round trip: %s\n", page,
	       page_address(virt_to_page((void *)page)) == (void *)page ? "ok" : "BROKEN");
	printf("virt_to_page(&page) for a stack address: %p (not ours)\n", (void *)virt_to_page(&page));
	free_page(page);

	unsigned long reclaimed = slub_reclaim();
	printf("slub_reclaim() gave %lu pages (%lu MiB) back to the OS: the free blocks that had\n"
	       "been written to; never-touched ones were not resident to begin with\n", reclaimed,
	       (reclaimed * PAGE_SIZE) >> 20);
	show("after slub_reclaim(): per-CPU lists drained, every section whole again: one\n"
	     "   order-6, one order-8 and one order-9 block (its first 768 KiB hold the\n"
	     "   section's own page descriptors and slab links) and the order-10 blocks carved so far (the\n"
	     "   zone carves them one at a time, as it needs them)");

	/* Object caches on top: SLUB packs objects into slabs of pages. */
	struct task { int pid; char comm[16]; long state; void *mm; char pad[64]; };
	/* As the kernel's: comm may be copied to user space, which keeps the cache to itself. */
	struct kmem_cache *tasks = kmem_cache_create_usercopy("task_struct", sizeof(struct task), 0,
							      SLAB_HWCACHE_ALIGN,
							      offsetof(struct task, comm),
							      sizeof(((struct task *)0)->comm), NULL);
	enum { NR_TASKS = 10000 };
	static struct task *t[NR_TASKS];
	for (int i = 0; i < NR_TASKS; i++) {
		t[i] = kmem_cache_zalloc(tasks, GFP_KERNEL);
		t[i]->pid = i;
	}
	printf("\nkmem_cache \"task_struct\": %d objects of %u bytes, the first at %p (64-byte aligned: %s)\n",
	       NR_TASKS, kmem_cache_size(tasks), (void *)t[0], ((uintptr_t)t[0] & 63) ? "no" : "yes");
	show("with 10000 task_structs allocated: their slabs came from the buddy lists");
	for (int i = 0; i < NR_TASKS; i++)
		kmem_cache_free(tasks, t[i]);
	printf("kmem_cache_shrink() after freeing them all: %d (0: no slab left)\n",
	       kmem_cache_shrink(tasks));
	kmem_cache_destroy(tasks);

	merging();

	printf("\nkmalloc size classes (request -> ksize):");
	static const size_t sizes[] = { 1, 9, 33, 65, 100, 129, 200, 700, 3000, 5000, 9000, 70000 };
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		void *p = kmalloc(sizes[i], GFP_KERNEL);
		printf("%s %zu->%zu", i % 6 ? "," : "\n ", sizes[i], ksize(p));
		kfree(p);
	}
	printf("\n(above 8 KiB kmalloc takes whole pages: power-of-two orders from the page allocator)\n");
	printf("errors reported: %lu\n", slub_errors());
	return slub_errors() ? 1 : 0;
}
