// SPDX-License-Identifier: MIT
/*
 * test_numa.c - nodes, with the kernel's fake ones (run with
 * SLUB_OPTIONS=numa=fake=4): pages and slabs of the node asked for,
 * __GFP_THISNODE, remote frees back to their node's list, per-node
 * attribute figures that add up, and a churn of remote frees from threads.
 * On one node (no option) it checks that nothing is split.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include <slub.h>
#include "check.h"
#include "base/fault_inject.h"
#include "base/numa.h"
#include "base/options.h"
#include "page/page_alloc.h"
#include "slab/core/slab.h"

#define NODES 4

/* Run on @cpu (one of ours), so that numa_node_id() stays put. */
static bool pin(unsigned int cpu)
{
	return !pin_to_cpu((int)cpu);
}

/* Run on every possible CPU again. */
static void unpin_all(void)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	for (unsigned int cpu = 0; cpu < os_possible_cpus(); cpu++)
		CPU_SET(cpu, &set);
	unpin(&set);
}

static int object_nid(const void *p)
{
	struct slab *slab = virt_to_slab(p);
	int nid = slab ? slab_nid(slab) : -2;
	/* The slab's node and its page's must agree. */
	CHECK_EQ(page_to_nid(virt_to_page(p)), nid);
	return nid;
}

static void fake_nodes(void)
{
	CHECK_EQ(nr_node_ids, NODES);
	CHECK(numa_fake());
	/* Two CPUs in four nodes: blocks of consecutive numbers. */
	if (os_possible_cpus() == 2) {
		CHECK_EQ(cpu_to_node(0), 0);
		CHECK_EQ(cpu_to_node(1), 2);
	}
}

static void pages_on_node(void)
{
	for (int nid = 0; nid < NODES; nid++) {
		for (unsigned int order = 0; order <= 3; order++) {
			struct page *page = alloc_pages_node(nid, GFP_KERNEL, order);
			CHECK(page);
			if (!page)
				continue;
			CHECK_EQ(page_to_nid(page), nid);
			__free_pages(page, order);
		}
	}
	/* Each node's section was bound (mbind to the real node 0 here). */
	CHECK(page_alloc_stats.bound_regions >= NODES);
	CHECK_EQ(page_alloc_stats.bind_failures, 0);
	/* NUMA_NO_NODE: this CPU's node. */
	if (pin(0)) {
		struct page *page = alloc_pages_node(NUMA_NO_NODE, GFP_KERNEL, 0);
		CHECK_EQ(page_to_nid(page), cpu_to_node(0));
		__free_pages(page, 0);
		unpin_all();
	}
}

/* kmem_cache_alloc_node(s, gfp, k) gives node k's objects, with or without sheaves. */
static void alloc_on_node(struct kmem_cache *s, gfp_t extra)
{
	enum { N = 300 };
	static void *p[NODES][N];
	for (int nid = 0; nid < NODES; nid++)
		for (int i = 0; i < N; i++) {
			p[nid][i] = kmem_cache_alloc_node(s, GFP_KERNEL | extra, nid);
			CHECK(p[nid][i]);
		}
	for (int nid = 0; nid < NODES; nid++) {
		int wrong = 0;
		for (int i = 0; i < N; i++)
			wrong += object_nid(p[nid][i]) != nid;
		CHECK_EQ(wrong, 0);
	}
	CHECK_EQ(slub_validate(s), 0);
	for (int nid = 0; nid < NODES; nid++)
		for (int i = 0; i < N; i++)
			kmem_cache_free(s, p[nid][i]);
	CHECK_EQ(slub_validate(s), 0);
}

static void node_directed(void)
{
	struct kmem_cache *s = kmem_cache_create("numa-objs", 96, 0, SLAB_NO_MERGE, NULL);
	alloc_on_node(s, 0);
	alloc_on_node(s, __GFP_THISNODE);
	kmem_cache_destroy(s);

	struct kmem_cache_args args = { .sheaf_capacity = 16 };
	s = kmem_cache_create("numa-sheaves", 96, &args, SLAB_NO_MERGE);
	CHECK(s && s->sheaf_capacity);
	alloc_on_node(s, 0);
	alloc_on_node(s, __GFP_THISNODE);
	kmem_cache_destroy(s);

	s = kmem_cache_create("numa-debug", 96, 0, SLAB_RED_ZONE | SLAB_POISON, NULL);
	alloc_on_node(s, __GFP_THISNODE);
	kmem_cache_destroy(s);

	/* kmalloc_node: a class of the kmalloc caches, each on its node. */
	for (int nid = 0; nid < NODES; nid++) {
		void *q[64];
		for (int i = 0; i < 64; i++)
			q[i] = kmalloc_node(200, GFP_KERNEL, nid);
		for (int i = 0; i < 64; i++) {
			CHECK_EQ(object_nid(q[i]), nid);
			kfree(q[i]);
		}
	}
}

/*
 * A sheaf may hold another node's objects: here, without rseq, the sheaf
 * of the slot the thread used last, on the CPU it left.  A request for
 * the new CPU's node must not take them.
 */
static void node_directed_after_move(void)
{
	if (os_possible_cpus() < 2 || cpu_to_node(0) == cpu_to_node(1) || !pin(0))
		return;
	struct kmem_cache_args args = { .sheaf_capacity = 16 };
	struct kmem_cache *s = kmem_cache_create("numa-moved", 96, &args, SLAB_NO_MERGE);
	enum { N = 12 };
	void *p[N];
	for (int i = 0; i < N; i++)
		p[i] = kmem_cache_alloc(s, GFP_KERNEL);
	for (int i = 0; i < N; i++)
		kmem_cache_free(s, p[i]);	/* parked in CPU 0's sheaf */
	int node = cpu_to_node(1);
	if (pin(1)) {
		for (int i = 0; i < N; i++) {
			p[i] = kmem_cache_alloc_node(s, GFP_KERNEL, node);
			CHECK_EQ(object_nid(p[i]), node);
		}
		for (int i = 0; i < N; i++)
			kmem_cache_free(s, p[i]);
	}
	unpin_all();
	CHECK_EQ(slub_validate(s), 0);
	kmem_cache_destroy(s);
}

/*
 * Without a node, a pinned thread's objects come from its CPU's node.  In
 * rseq mode only: the cmpxchg16b fast path keeps the slot of the thread's
 * last slow path (a hint, slab.h), whose cpu slab may be of the node the
 * thread ran on before; the kernel too lets NUMA_NO_NODE take any cpu slab.
 */
static void local_node(void)
{
	if (!slub_percpu_rseq)
		return;
	struct kmem_cache *s = kmem_cache_create("numa-local", 64, 0, SLAB_NO_MERGE, NULL);
	for (unsigned int cpu = 0; cpu < os_possible_cpus() && cpu < 4; cpu++) {
		if (!pin(cpu))
			continue;
		void *p[100];
		int wrong = 0;
		for (int i = 0; i < 100; i++) {
			p[i] = kmem_cache_alloc(s, GFP_KERNEL);
			wrong += object_nid(p[i]) != cpu_to_node(cpu);
		}
		CHECK_EQ(wrong, 0);
		for (int i = 0; i < 100; i++)
			kmem_cache_free(s, p[i]);
	}
	unpin_all();
	kmem_cache_destroy(s);
}

/*
 * Frees from node 0's CPU of node 3's objects: their slabs go back to node
 * 3's partial list (or to the page allocator), never node 0's, and no
 * sheaf of node 0 keeps them.
 */
static void remote_free(struct kmem_cache *s)
{
	enum { N = 2000 };
	static void *p[N];
	if (!pin(0))
		return;
	for (int i = 0; i < N; i++)
		p[i] = kmem_cache_alloc_node(s, GFP_KERNEL, 3);
	/* Every other one: the slabs stay, partly free. */
	for (int i = 0; i < N; i += 2)
		kmem_cache_free(s, p[i]);
	kmem_cache_flush_all(s);
	CHECK(get_node(s, 3)->nr_partial > 0);
	CHECK_EQ(get_node(s, 0)->nr_partial, 0);
	CHECK_EQ(get_node(s, 0)->nr_slabs, 0);
	CHECK_EQ(slab_parked(s), 0);
	CHECK_EQ(slub_validate(s), 0);
	for (int i = 1; i < N; i += 2)
		kmem_cache_free(s, p[i]);
	CHECK_EQ(slub_validate(s), 0);
	unpin_all();
}

static void remote_frees(void)
{
	struct kmem_cache *s = kmem_cache_create("numa-remote", 128, 0, SLAB_NO_MERGE, NULL);
	remote_free(s);
	kmem_cache_destroy(s);
	struct kmem_cache_args args = { .sheaf_capacity = 32 };
	s = kmem_cache_create("numa-remote-sheaves", 128, &args, SLAB_NO_MERGE);
	remote_free(s);
	kmem_cache_destroy(s);
}

/* "total N0=a N2=b": the parts add up to the total, each node named once, in order. */
static void check_figure(struct kmem_cache *s, const char *attr, unsigned long *nodes)
{
	char buf[256];
	ssize_t len = slub_attr_read(s, attr, buf, sizeof(buf));
	CHECK(len > 0);
	if (len <= 0)
		return;
	char *p = buf;
	unsigned long total = strtoul(p, &p, 10), sum = 0;
	int last = -1;
	while (*p == ' ') {
		int nid;
		unsigned long x;
		int used;
		if (sscanf(p, " N%d=%lu%n", &nid, &x, &used) != 2)
			break;
		CHECK(nid > last && nid < NODES && x > 0);
		if (nodes && nid >= 0 && nid < NODES)
			nodes[nid] = x;
		last = nid;
		sum += x;
		p += used;
	}
	CHECK(*p == '\n');
	fprintf(stderr, "   %s %s: %s", s->name, attr, buf);	/* the figures docs/internals.md gives */
	CHECK_EQ(sum, total);
}

static void node_figures(void)
{
	static const char *const attrs[] = { "objects", "objects_partial", "total_objects",
					     "slabs", "partial", "cpu_slabs" };
	struct kmem_cache_args args = { .sheaf_capacity = 16 };
	struct kmem_cache *caches[] = {
		kmem_cache_create("numa-figures", 256, 0, SLAB_NO_MERGE, NULL),
		kmem_cache_create("numa-figures-sheaves", 256, &args, SLAB_NO_MERGE),
	};
	for (unsigned int c = 0; c < ARRAY_SIZE(caches); c++) {
		struct kmem_cache *s = caches[c];
		enum { N = 500 };
		static void *p[NODES][N];
		for (int nid = 0; nid < NODES; nid++)
			for (int i = 0; i < N; i++)
				p[nid][i] = kmem_cache_alloc_node(s, GFP_KERNEL, nid);
		for (int nid = 0; nid < NODES; nid++)
			for (int i = 0; i < N; i += 3)
				kmem_cache_free(s, p[nid][i]);
		unsigned long objects[NODES] = { 0 }, total[NODES] = { 0 };
		for (unsigned int a = 0; a < ARRAY_SIZE(attrs); a++)
			check_figure(s, attrs[a], !strcmp(attrs[a], "objects") ? objects :
						  !strcmp(attrs[a], "total_objects") ? total : NULL);
		for (int nid = 0; nid < NODES; nid++) {
			/* Every node holds its own: N - N/3 in use, some more counted so on cpu slabs. */
			CHECK(total[nid] >= N);
			CHECK(objects[nid] >= N - (N + 2) / 3);
		}
		for (int nid = 0; nid < NODES; nid++)
			for (int i = 0; i < N; i++)
				if (i % 3)
					kmem_cache_free(s, p[nid][i]);
		CHECK_EQ(slub_validate(s), 0);
		kmem_cache_destroy(s);
	}
}

/* Threads allocate on any node and hand their objects to the next thread to free. */
enum { THREADS = 4, ROUNDS = 20000, RING = 256 };
static struct kmem_cache *churn_cache[2];
static void *_Atomic ring[THREADS][RING];

static void *churn(void *arg)
{
	unsigned int me = (unsigned int)(uintptr_t)arg;
	unsigned int seed = me * 7919 + 1;
	pin(me % os_possible_cpus());
	for (unsigned int r = 0; r < ROUNDS; r++) {
		seed = seed * 1103515245 + 12345;
		struct kmem_cache *s = churn_cache[(seed >> 8) & 1];
		int node = (int)((seed >> 12) % (NODES + 1)) - 1;	/* NUMA_NO_NODE too */
		gfp_t gfp = GFP_KERNEL | ((seed >> 20) & 1 ? __GFP_THISNODE : 0);
		void *p = node < 0 ? kmem_cache_alloc(s, GFP_KERNEL) : kmem_cache_alloc_node(s, gfp, node);
		if (!p || (node >= 0 && slab_nid(virt_to_slab(p)) != node)) {
			CHECK(!"object of the node asked for");
			return NULL;
		}
		memset(p, (int)me, 64);
		/* To the next thread's ring; what was there is freed here. */
		void *old = atomic_exchange(&ring[(me + 1) % THREADS][r % RING], p);
		if (old)
			kmem_cache_free(virt_to_slab(old)->slab_cache, old);
	}
	return NULL;
}

static void churn_remote_frees(void)
{
	struct kmem_cache_args args = { .sheaf_capacity = 16 };
	churn_cache[0] = kmem_cache_create("numa-churn", 64, 0, SLAB_NO_MERGE, NULL);
	churn_cache[1] = kmem_cache_create("numa-churn-sheaves", 64, &args, SLAB_NO_MERGE);
	pthread_t t[THREADS];
	for (unsigned int i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, churn, (void *)(uintptr_t)i);
	for (unsigned int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	for (unsigned int i = 0; i < THREADS; i++)
		for (unsigned int j = 0; j < RING; j++) {
			void *p = atomic_exchange(&ring[i][j], NULL);
			if (p)
				kmem_cache_free(virt_to_slab(p)->slab_cache, p);
		}
	for (int c = 0; c < 2; c++) {
		CHECK_EQ(slub_validate(churn_cache[c]), 0);
		CHECK_EQ(kmem_cache_shrink(churn_cache[c]), 0);
		CHECK_EQ(slab_nr_slabs(churn_cache[c]), 0);
		kmem_cache_destroy(churn_cache[c]);
	}
	CHECK_EQ(page_alloc_validate(), 0);
}

/*
 * A node that has no free pages and cannot grow lends no page under
 * __GFP_THISNODE; without it the page comes from another node, as the
 * kernel's zonelist falls back.  Node 2 is run dry under an address-space
 * limit while node 0 keeps free pages.
 */
#define DRY_MAX (1 << 17)
static struct page *dry[DRY_MAX];

static int drain_node_two(void)
{
	int n = 0;
	while (n < DRY_MAX && (dry[n] = alloc_pages_node(2, GFP_KERNEL | __GFP_THISNODE |
							 __GFP_NOWARN, 0)))
		n++;
	CHECK(n < DRY_MAX);			/* the limit stopped it */
	struct page *page = alloc_pages_node(2, GFP_KERNEL | __GFP_THISNODE | __GFP_NOWARN, 0);
	CHECK(page == NULL);
	page = alloc_pages_node(2, GFP_KERNEL | __GFP_NOWARN, 0);
	CHECK(page != NULL);
	if (page) {
		CHECK(page_to_nid(page) != 2);
		__free_pages(page, 0);
	}
	/*
	 * The slab layer, as the kernel's: __GFP_THISNODE gets nothing, else a
	 * slab of another node, counted and listed there; the same for a
	 * thread on one of node 2's CPUs asking for no node.  With and
	 * without sheaves (their refills must look where the slab went), and
	 * a debug cache (its own path lists the slab where it was made).
	 */
	struct kmem_cache_args args = { .sheaf_capacity = 16 };
	slab_flags_t debug = SLAB_NO_MERGE | SLAB_CONSISTENCY_CHECKS | SLAB_RED_ZONE | SLAB_POISON;
	struct kmem_cache *caches[3] = {
		kmem_cache_create("numa-dry", 2048, 0, SLAB_NO_MERGE, NULL),
		kmem_cache_create("numa-dry-sheaves", 2048, &args, SLAB_NO_MERGE),
		kmem_cache_create("numa-dry-debug", 2048, 0, debug, NULL),
	};
	bool on_two = os_possible_cpus() >= 2 && cpu_to_node(1) == 2 && pin(1);
	for (int k = 0; k < 3; k++) {
		struct kmem_cache *s = caches[k];
		CHECK(s != NULL);
		if (!s)
			continue;
		CHECK(kmem_cache_alloc_node(s, GFP_KERNEL | __GFP_THISNODE | __GFP_NOWARN, 2) == NULL);
		enum { N = 40 };	/* more than a slab, and than a sheaf */
		void *p[3][N] = { { NULL } };
		for (int i = 0; i < N; i++) {
			p[0][i] = kmem_cache_alloc_node(s, GFP_KERNEL | __GFP_NOWARN, 2);
			CHECK(p[0][i] && object_nid(p[0][i]) != 2);
			if (on_two) {
				p[1][i] = kmem_cache_alloc(s, GFP_KERNEL | __GFP_NOWARN);
				CHECK(p[1][i] && object_nid(p[1][i]) != 2);
			}
			/* Not a wait on node 2 alone (alarm: a hang fails the child). */
			alarm(10);
			p[2][i] = kmem_cache_alloc_node(s, GFP_KERNEL | __GFP_NOFAIL, 2);
			alarm(0);
			CHECK(p[2][i] && object_nid(p[2][i]) != 2);
		}
		/* Each taken from the slabs made elsewhere, not a new slab each. */
		unsigned int per = oo_objects(s->oo), objects = (2 + on_two) * N;
		CHECK(slab_nr_slabs(s) <= (objects + per - 1) / per + 3);
		CHECK_EQ(slub_validate(s), 0);
		for (int i = 0; i < N; i++) {
			for (int j = 0; j < 3; j++)
				if (p[j][i])
					kmem_cache_free(s, p[j][i]);
		}
		CHECK_EQ(slub_validate(s), 0);
	}
	/*
	 * Every failable page allocation failed on purpose (fail_page_alloc):
	 * __GFP_NOFAIL's tries on the other nodes are exempt, as its own are.
	 */
	CHECK_EQ(options_parse("fail_page_alloc=1,100,0,-1", "test", false), 0);
	fault_inject_init();
	struct kmem_cache *fresh[3] = {	/* no slab yet: the request needs pages */
		kmem_cache_create("numa-dry-nofail", 2048, 0, SLAB_NO_MERGE, NULL),
		kmem_cache_create("numa-dry-nofail-sheaves", 2048, &args, SLAB_NO_MERGE),
		kmem_cache_create("numa-dry-nofail-debug", 2048, 0, debug, NULL),
	};
	for (int k = 0; k < 3; k++) {
		alarm(10);
		void *q = fresh[k] ? kmem_cache_alloc_node(fresh[k], GFP_KERNEL | __GFP_NOFAIL, 2)
				   : NULL;
		alarm(0);
		CHECK(q && object_nid(q) != 2);
		if (q)
			kmem_cache_free(fresh[k], q);
	}
	CHECK_EQ(options_parse("fail_page_alloc=1,0,0,0", "test", false), 0);	/* off */
	fault_inject_init();
	if (on_two)
		unpin_all();
	return check_failures;
}

static void fallback_node(void)
{
	if (address_space_limited())
		return;			/* the test sets its own */
	/* Node 0: free pages to lend (allocated and given back). */
	static struct page *pages[512];
	for (int i = 0; i < 512; i++)
		pages[i] = alloc_pages_node(0, GFP_KERNEL | __GFP_THISNODE, 0);
	for (int i = 0; i < 512; i++)
		if (pages[i])
			__free_pages(pages[i], 0);
	CHECK_EQ(child_under_address_limit(1 << 20, drain_node_two), 0);
}

/* No option: one node, and the figures name only N0. */
static void one_node(void)
{
	CHECK_EQ(nr_node_ids, 1);
	struct kmem_cache *s = kmem_cache_create("numa-one", 64, 0, SLAB_NO_MERGE, NULL);
	void *p = kmem_cache_alloc_node(s, GFP_KERNEL | __GFP_THISNODE, 0);
	CHECK_EQ(object_nid(p), 0);
	void *q = kmem_cache_alloc_node(s, GFP_KERNEL, 5);	/* no such node: any */
	CHECK_EQ(object_nid(q), 0);
	check_figure(s, "objects", NULL);
	kmem_cache_free(s, p);
	kmem_cache_free(s, q);
	kmem_cache_destroy(s);
}

int main(void)
{
	kfree(kmalloc(8, GFP_KERNEL));	/* start the slab layer */
	if (nr_node_ids == 1) {
		RUN(one_node);
		return check_done();
	}
	RUN(fake_nodes);
	RUN(pages_on_node);
	RUN(node_directed);
	RUN(node_directed_after_move);
	RUN(local_node);
	RUN(remote_frees);
	RUN(node_figures);
	RUN(churn_remote_frees);
	RUN(fallback_node);
	return check_done();
}
