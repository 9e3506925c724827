// SPDX-License-Identifier: MIT
/*
 * test_sheaves.c - caches on sheaves (src/slab/sheaf/sheaf.c): each step of the
 * slow paths reached with a small capacity on one CPU and seen in the
 * slot and the barn; threads on fewer cores than threads, migrating, with
 * remote frees; the memory bound; shrink and destroy flushing everything;
 * the option; debug caches without sheaves; double frees of parked objects;
 * a __GFP_NOFAIL request when no sheaf can be made.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>

#include <slub.h>
#include "check.h"
#include "page_hog.h"
#include "base/options.h"
#include "base/os.h"
#include "page/decay_thread.h"
#include "slab/core/slab.h"
#include "slab/core/slab_common.h"
#include "slab/nodes.h"

static struct kmem_cache *sheaf_cache_create(const char *name, unsigned int size,
					     unsigned int capacity)
{
	struct kmem_cache_args args = { .sheaf_capacity = capacity };
	return kmem_cache_create(name, size, &args, 0);
}

/* Main's and the spare's counts in @cpu's slot (-1: no such sheaf). */
static void slot_counts(struct kmem_cache *s, unsigned int cpu, int *main, int *spare)
{
	struct kmem_cache_cpu *c = cpu_slot(s, cpu);
	pthread_mutex_lock(&c->lock);
	*main = c->main ? (int)c->sheaf_size : -1;
	*spare = c->spare ? (int)c->spare->size : -1;
	pthread_mutex_unlock(&c->lock);
}

static unsigned int barn_full(struct kmem_cache *s)
{
	return (unsigned int)NODES_SUM(s, barn.nr_full);
}

static unsigned int barn_empty(struct kmem_cache *s)
{
	return (unsigned int)NODES_SUM(s, barn.nr_empty);
}

/* The objects attribute: objects in use, parked ones not counted. */
static long objects_attr(struct kmem_cache *s)
{
	char buf[64];
	CHECK(slub_attr_read(s, "objects", buf, sizeof(buf)) > 0);
	return atol(buf);
}

/*
 * The parked objects with every slot lock of @s and its barn lock held:
 * no sheaf moves between a slot and the barn meanwhile, and a fast path
 * can only fill a main up to its room, so the figure is one the bound
 * must hold for (sheaf_parked() locks one slot at a time).
 */
static unsigned long parked_exact(struct kmem_cache *s, unsigned int *cpus)
{
	unsigned long parked = 0;
	*cpus = 0;
	pthread_mutex_lock(&slab_cpus.lock);
	for_each_used_cpu(cpu, &slab_cpus, s->nr_cpu_slots)
		pthread_mutex_lock(&cpu_slot(s, cpu)->lock);
	for (unsigned int nid = 0; nid < nr_node_ids; nid++)
		pthread_mutex_lock(&get_node(s, (int)nid)->barn.lock);
	for_each_used_cpu(cpu, &slab_cpus, s->nr_cpu_slots) {
		struct kmem_cache_cpu *c = cpu_slot(s, cpu);
		parked += READ_ONCE(c->sheaf_size) + (c->spare ? c->spare->size : 0);
		(*cpus)++;
	}
	struct list_head *pos;
	for (unsigned int nid = 0; nid < nr_node_ids; nid++) {
		list_for_each(pos, &get_node(s, (int)nid)->barn.sheaves_full)
			parked += list_entry(pos, struct slab_sheaf, barn_list)->size;
		pthread_mutex_unlock(&get_node(s, (int)nid)->barn.lock);
	}
	for_each_used_cpu(cpu, &slab_cpus, s->nr_cpu_slots)
		pthread_mutex_unlock(&cpu_slot(s, cpu)->lock);
	pthread_mutex_unlock(&slab_cpus.lock);
	return parked;
}

/* The fast paths on a cache with sheaves: distinct objects, no cpu slab. */
static void alloc_free(void)
{
	struct kmem_cache *s = sheaf_cache_create("sheaf-basic", 48, 16);
	CHECK(s && s->sheaf_capacity == 16 && s->sheaf_slots == s->nr_cpu_slots &&
	      !s->cpu_slab_slots && !s->cpu_partial_slabs);
	enum { N = 3000 };
	static char *p[N];
	for (int i = 0; i < N; i++) {
		p[i] = kmem_cache_alloc(s, GFP_KERNEL);
		CHECK(p[i] != NULL);
		memset(p[i], i & 0xff, 48);
	}
	for (int i = 0; i < N; i++)
		CHECK(p[i][0] == (char)(i & 0xff) && p[i][47] == (char)(i & 0xff));
	CHECK_EQ(objects_attr(s), N);
	CHECK_EQ(slab_validate_cache(s), 0);
	for (int i = 0; i < N; i += 2)
		kmem_cache_free(s, p[i]);
	CHECK_EQ(objects_attr(s), N / 2);
	CHECK_EQ(slab_validate_cache(s), 0);
	for (int i = 0; i < N; i += 2) {
		p[i] = kmem_cache_zalloc(s, GFP_KERNEL);
		CHECK(p[i] && !p[i][0] && !p[i][47]);
	}
	for (unsigned int cpu = 0; cpu < s->nr_cpu_slots; cpu++)
		CHECK(cpu_slot(s, cpu)->slab == NULL);
	for (int i = 0; i < N; i++)
		kmem_cache_free(s, p[i]);
	CHECK_EQ(objects_attr(s), 0);
	CHECK(sheaf_parked(s) > 0);
	CHECK_EQ(slab_validate_cache(s), 0);
	kmem_cache_destroy(s);
	CHECK_EQ(slub_errors(), 0);
}

/*
 * Every step of both slow paths, capacity 4, on one CPU: frees fill main,
 * then the spare, then the barn's full list to its bound, then flush;
 * allocations take main, swap the spare in, take the barn's full sheaves
 * (giving it empty ones), then refill from the partial slabs, then a new
 * slab.
 */
static void slow_path_steps(void)
{
	enum { CAP = 4, N = CAP * (SHEAF_BARN_MAX + 4) };
	cpu_set_t old;
	sched_getaffinity(0, sizeof(old), &old);
	int cpu = sched_getcpu();
	CHECK_EQ(pin_to_cpu(cpu), 0);
	struct kmem_cache *s = sheaf_cache_create("sheaf-steps", 64, CAP);
	static void *objs[N];
	void **p = objs;
	for (int i = 0; i < N; i++)
		p[i] = kmem_cache_alloc(s, GFP_KERNEL);
	int m, sp;
	/* The first allocation refilled main from a new slab. */
	slot_counts(s, (unsigned int)cpu, &m, &sp);
	CHECK(m >= 0 && m < CAP);
	kmem_cache_shrink(s);		/* main stays, empty; no spare, no barn */
	slot_counts(s, (unsigned int)cpu, &m, &sp);
	CHECK_EQ(m, 0);
	CHECK_EQ(sp, -1);
	CHECK_EQ(barn_full(s) + barn_empty(s), 0);
	long slabs_objects = objects_attr(s);
	CHECK_EQ(slabs_objects, N);

	int k = 0;
	for (; k < CAP; k++)
		kmem_cache_free(s, p[k]);
	slot_counts(s, (unsigned int)cpu, &m, &sp);
	CHECK(m == CAP && sp == -1);
	kmem_cache_free(s, p[k++]);	/* no spare: full main becomes it */
	slot_counts(s, (unsigned int)cpu, &m, &sp);
	CHECK(m == 1 && sp == CAP);
	for (unsigned int full = 1; full <= SHEAF_BARN_MAX; full++) {
		for (int i = 1; i < CAP; i++)
			kmem_cache_free(s, p[k++]);
		kmem_cache_free(s, p[k++]);	/* main and spare full: main to the barn */
		slot_counts(s, (unsigned int)cpu, &m, &sp);
		CHECK(m == 1 && sp == CAP);
		CHECK_EQ(barn_full(s), full);
	}
	for (int i = 1; i < CAP; i++)
		kmem_cache_free(s, p[k++]);
	kmem_cache_free(s, p[k++]);	/* the barn at its bound: main flushed */
	slot_counts(s, (unsigned int)cpu, &m, &sp);
	CHECK(m == 1 && sp == CAP);
	CHECK_EQ(barn_full(s), SHEAF_BARN_MAX);
	CHECK_EQ(objects_attr(s), N - k);
	unsigned int cpus;
	CHECK_EQ(parked_exact(s, &cpus), (unsigned long)(1 + CAP + SHEAF_BARN_MAX * CAP));
	CHECK_EQ(slab_validate_cache(s), 0);

	/* Allocations, back the other way; p[kept..N) are still allocated. */
	const int kept = k;
	static void *q[N];
	void **p_all = p;
	p = q;
	k = 0;
	p[k++] = kmem_cache_alloc(s, GFP_KERNEL);	/* main's last */
	p[k++] = kmem_cache_alloc(s, GFP_KERNEL);	/* the spare swapped in */
	slot_counts(s, (unsigned int)cpu, &m, &sp);
	CHECK(m == CAP - 1 && sp == 0);
	for (int i = 1; i < CAP; i++)
		p[k++] = kmem_cache_alloc(s, GFP_KERNEL);
	p[k++] = kmem_cache_alloc(s, GFP_KERNEL);	/* a full sheaf from the barn */
	slot_counts(s, (unsigned int)cpu, &m, &sp);
	CHECK(m == CAP - 1 && sp == 0);
	CHECK_EQ(barn_full(s), SHEAF_BARN_MAX - 1);
	CHECK_EQ(barn_empty(s), 1);
	for (unsigned int full = SHEAF_BARN_MAX - 1; full > 0; full--)
		for (int i = 0; i < CAP; i++)
			p[k++] = kmem_cache_alloc(s, GFP_KERNEL);
	CHECK_EQ(barn_full(s), 0);
	CHECK_EQ(barn_empty(s), SHEAF_BARN_MAX);
	slot_counts(s, (unsigned int)cpu, &m, &sp);
	CHECK(m == CAP - 1 && sp == 0);
	for (int i = 1; i < CAP; i++)
		p[k++] = kmem_cache_alloc(s, GFP_KERNEL);
	/* Main and spare empty, the barn has no full sheaf: refill from the partial slabs. */
	unsigned long partial_before = NODES_SUM(s, nr_partial);
	unsigned long slabs_before = NODES_SUM(s, nr_slabs);
	CHECK(partial_before > 0);
	p[k++] = kmem_cache_alloc(s, GFP_KERNEL);
	slot_counts(s, (unsigned int)cpu, &m, &sp);
	CHECK(m == CAP - 1 && sp == 0);
	CHECK_EQ(NODES_SUM(s, nr_slabs), slabs_before);
	/* The rest of the flushed objects, then a new slab when the partial ones run out. */
	while (k < kept)
		p[k++] = kmem_cache_alloc(s, GFP_KERNEL);
	CHECK_EQ(objects_attr(s), N);
	CHECK_EQ(NODES_SUM(s, nr_slabs), slabs_before);
	enum { MORE = 1000 };
	static void *more[MORE];
	int n = 0;
	while (n < MORE && NODES_SUM(s, nr_slabs) == slabs_before)
		more[n++] = kmem_cache_alloc(s, GFP_KERNEL);
	CHECK(n < MORE && n >= (int)(oo_objects(s->oo) * slabs_before) - N - 2 * CAP);
	CHECK_EQ(NODES_SUM(s, nr_partial), 1);	/* the new slab, refilled from */
	for (int i = 0; i < kept; i++)
		for (int j = 0; j < n; j++)
			CHECK(p[i] != more[j] && p_all[kept + i % (N - kept)] != more[j]);
	CHECK_EQ(slab_validate_cache(s), 0);
	for (int i = 0; i < n; i++)
		kmem_cache_free(s, more[i]);
	for (int i = 0; i < kept; i++)
		kmem_cache_free(s, p[i]);
	for (int i = kept; i < N; i++)
		kmem_cache_free(s, p_all[i]);
	CHECK_EQ(kmem_cache_shrink(s), 0);
	CHECK_EQ(NODES_SUM(s, nr_slabs), 0);
	kmem_cache_destroy(s);
	sched_setaffinity(0, sizeof(old), &old);
	CHECK_EQ(slub_errors(), 0);
}

/* ---- threads --------------------------------------------------------------------- */

#define THREADS 8
#define LIVE 64
#define HANDOFF 32
#define MAGIC_LIVE 0x11fe11fe11fe11feUL

static struct kmem_cache *mt_cache;
static uintptr_t handoff[HANDOFF];
static int mt_errors, mt_done;
static unsigned long mt_iterations = UNDER_TSAN ? 20000 : 300000;

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* An object handed out: not live already (handed out twice?), then live. */
static void take(unsigned long *o)
{
	if (__atomic_exchange_n(&o[0], MAGIC_LIVE, __ATOMIC_RELAXED) == MAGIC_LIVE)
		__atomic_add_fetch(&mt_errors, 1, __ATOMIC_RELAXED);
}

static void give(struct kmem_cache *s, unsigned long *o)
{
	if (__atomic_exchange_n(&o[0], 0, __ATOMIC_RELAXED) != MAGIC_LIVE)
		__atomic_add_fetch(&mt_errors, 1, __ATOMIC_RELAXED);
	kmem_cache_free(s, o);
}

static void *mt_worker(void *arg)
{
	uint64_t seed = 0x9e3779b97f4a7c15ULL * (uintptr_t)(arg + 1);
	unsigned long *live[LIVE] = { 0 };
	int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	for (unsigned long i = 0; i < mt_iterations; i++) {
		unsigned int slot = (unsigned int)(rnd(&seed) % LIVE);
		if (live[slot]) {
			/* Half the frees are another thread's objects, left in the hand-off. */
			if (rnd(&seed) & 1) {
				uintptr_t got = __atomic_exchange_n(&handoff[rnd(&seed) % HANDOFF],
								    (uintptr_t)live[slot], __ATOMIC_ACQ_REL);
				if (got)
					give(mt_cache, (unsigned long *)got);
			} else {
				give(mt_cache, live[slot]);
			}
			live[slot] = NULL;
		} else {
			live[slot] = kmem_cache_alloc(mt_cache, GFP_KERNEL);
			take(live[slot]);
		}
		if (!(i % 4096)) {
			/* Move on purpose: slots change hands under running sequences. */
			cpu_set_t one;
			CPU_ZERO(&one);
			CPU_SET((int)(rnd(&seed) % (uint64_t)ncpu), &one);
			sched_setaffinity(0, sizeof(one), &one);
			sched_yield();
		}
	}
	for (int k = 0; k < LIVE; k++)
		if (live[k])
			give(mt_cache, live[k]);
	return NULL;
}

/* Flushes of every CPU's sheaves (remote retires) while the workers run. */
static void *mt_flusher(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&mt_done, __ATOMIC_ACQUIRE)) {
		kmem_cache_shrink(mt_cache);
		usleep(2000);
	}
	return NULL;
}

static void threads_migrate(void)
{
	mt_cache = sheaf_cache_create("sheaf-mt", 64, 8);
	pthread_t t[THREADS], flusher;
	pthread_create(&flusher, NULL, mt_flusher, NULL);
	for (long i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, mt_worker, (void *)i);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	__atomic_store_n(&mt_done, 1, __ATOMIC_RELEASE);
	pthread_join(flusher, NULL);
	for (int i = 0; i < HANDOFF; i++)
		if (handoff[i])
			give(mt_cache, (unsigned long *)handoff[i]);
	CHECK_EQ(mt_errors, 0);
	CHECK_EQ(slab_validate_cache(mt_cache), 0);
	CHECK_EQ(objects_attr(mt_cache), 0);
	CHECK_EQ(kmem_cache_shrink(mt_cache), 0);
	CHECK_EQ(sheaf_parked(mt_cache), 0);
	unsigned long errors = slub_errors();
	kmem_cache_destroy(mt_cache);
	CHECK_EQ(slub_errors(), errors);	/* nothing left behind */
}

/* ---- the memory bound ------------------------------------------------------------- */

#define BOUND_THREADS 24
#define BOUND_CAP 16

static struct kmem_cache *bound_cache;
static int bound_done;

static void *bound_worker(void *arg)
{
	uint64_t seed = 0x2545f4914f6cdd1dULL * (uintptr_t)(arg + 1);
	enum { BURST = 3 * BOUND_CAP };
	void *burst[BURST];
	for (int round = 0; round < (UNDER_TSAN ? 300 : 3000); round++) {
		unsigned int n = (unsigned int)(rnd(&seed) % BURST) + 1;
		for (unsigned int i = 0; i < n; i++)
			burst[i] = kmem_cache_alloc(bound_cache, GFP_KERNEL);
		if (rnd(&seed) % 8 == 0)
			sched_yield();
		for (unsigned int i = 0; i < n; i++)
			kmem_cache_free(bound_cache, burst[i]);
	}
	return NULL;
}

/*
 * (2 * CPUs + nodes * SHEAF_BARN_MAX) * capacity objects parked at most,
 * and 2 * CPUs + 2 * nodes * SHEAF_BARN_MAX sheaves, plus one each thread
 * may hold while it has no slot locked.
 */
static void check_bound(unsigned long *worst)
{
	unsigned int cpus;
	unsigned long parked = parked_exact(bound_cache, &cpus);
	unsigned long barns = nr_node_ids * SHEAF_BARN_MAX;
	unsigned long bound = (2UL * cpus + barns) * BOUND_CAP;
	if (parked > *worst)
		*worst = parked;
	CHECK(parked <= bound);
	CHECK(sheaf_count(bound_cache) <= 2UL * cpus + 2 * barns + BOUND_THREADS);
}

static void memory_bound(void)
{
	bound_cache = sheaf_cache_create("sheaf-bound", 128, BOUND_CAP);
	pthread_t t[BOUND_THREADS];
	unsigned long worst = 0;
	for (long i = 0; i < BOUND_THREADS; i++)
		pthread_create(&t[i], NULL, bound_worker, (void *)i);
	for (int k = 0; k < 200; k++) {
		check_bound(&worst);
		usleep(1000);
	}
	for (int i = 0; i < BOUND_THREADS; i++)
		pthread_join(t[i], NULL);
	__atomic_store_n(&bound_done, 1, __ATOMIC_RELAXED);
	check_bound(&worst);
	unsigned int cpus;
	parked_exact(bound_cache, &cpus);
	fprintf(stderr, "   %d threads, %u CPUs used: at most %lu objects parked (bound %lu), %lu sheaves\n",
		BOUND_THREADS, cpus, worst, (2UL * cpus + nr_node_ids * SHEAF_BARN_MAX) * BOUND_CAP,
		sheaf_count(bound_cache));
	CHECK(worst > 0);
	CHECK_EQ(objects_attr(bound_cache), 0);
	CHECK_EQ(kmem_cache_shrink(bound_cache), 0);
	kmem_cache_destroy(bound_cache);
}

/* ---- shrink, destroy, double frees, debug, the option --------------------------------- */

static void shrink_and_destroy_flush(void)
{
	struct kmem_cache *s = sheaf_cache_create("sheaf-destroy", 200, 32);
	enum { N = 700 };
	static void *p[N];
	for (int i = 0; i < N; i++)
		p[i] = kmem_cache_alloc(s, GFP_KERNEL);
	for (int i = 0; i < N; i++)
		kmem_cache_free(s, p[i]);
	CHECK(sheaf_parked(s) > 0);
	CHECK(NODES_SUM(s, nr_slabs) > 0);	/* the parked objects keep slabs */
	CHECK_EQ(kmem_cache_shrink(s), 0);
	CHECK_EQ(sheaf_parked(s), 0);
	CHECK_EQ(NODES_SUM(s, nr_slabs), 0);
	/* Destroyed straight after the frees: no report, every sheaf given back. */
	struct kmem_cache *sheaves = s->sheaf_cache;
	for (int i = 0; i < N; i++)
		p[i] = kmem_cache_alloc(s, GFP_KERNEL);
	for (int i = 0; i < N; i++)
		kmem_cache_free(s, p[i]);
	unsigned long errors = slub_errors();
	CHECK(sheaf_count(s) > 0);
	kmem_cache_destroy(s);
	CHECK_EQ(slub_errors(), errors);
	CHECK(slub_find_cache("sheaf-destroy") == NULL);
	(void)sheaves;
	/* An object still allocated: reported, and the cache stays. */
	s = sheaf_cache_create("sheaf-leak", 200, 32);
	for (int i = 0; i < N; i++)
		p[i] = kmem_cache_alloc(s, GFP_KERNEL);
	for (int i = 1; i < N; i++)
		kmem_cache_free(s, p[i]);
	unsigned long before = slub_errors();
	kmem_cache_destroy(s);		/* the listing: a banner and the object */
	CHECK(slub_errors() > before);
	CHECK(slub_find_cache("sheaf-leak") == s);
	CHECK_EQ(objects_attr(s), 1);
	CHECK_EQ(slab_validate_cache(s), 0);
	kmem_cache_free(s, p[0]);
	kmem_cache_destroy(s);
	CHECK(slub_find_cache("sheaf-leak") == NULL);
}

static void double_free_parked(void)
{
	SKIP_IF_UNCHECKED_FREE();
	struct kmem_cache *s = sheaf_cache_create("sheaf-double", 32, 8);
	void *a = kmem_cache_alloc(s, GFP_KERNEL), *b = kmem_cache_alloc(s, GFP_KERNEL);
	kmem_cache_free(s, a);		/* parked in main */
	EXPECT_REPORT(kmem_cache_free(s, a), "double free");
	kmem_cache_free(s, b);
	EXPECT_REPORT(kmem_cache_free(s, b), "double free");
	/* Parked in the spare or the barn, or flushed to the slab: caught all the same. */
	enum { N = 100 };
	void *p[N];
	for (int i = 0; i < N; i++)
		p[i] = kmem_cache_alloc(s, GFP_KERNEL);
	for (int i = 0; i < N; i++)
		kmem_cache_free(s, p[i]);
	EXPECT_REPORT(kmem_cache_free(s, p[3]), "double free");
	EXPECT_REPORT(kmem_cache_free(s, p[N / 2]), "double free");
	CHECK_EQ(slab_validate_cache(s), 0);
	CHECK_EQ(objects_attr(s), 0);
	kmem_cache_destroy(s);
}

static void debug_caches_have_none(void)
{
	unsigned long errors = slub_errors();
	struct kmem_cache_args args = { .sheaf_capacity = 8 };
	struct kmem_cache *d = kmem_cache_create("sheaf-debug", 64, &args, SLAB_RED_ZONE);
	CHECK(d && d->sheaf_capacity == 0 && d->sheaf_slots == 0 && d->cpu_slab_slots != 0);
	void *x = kmem_cache_alloc(d, GFP_KERNEL);
	kmem_cache_free(d, x);
	CHECK_EQ(sheaf_count(d), 0);
	kmem_cache_destroy(d);

	/* Debug switched on at run time: the sheaves go, and come back when it is off. */
	struct kmem_cache *s = kmem_cache_create("sheaf-switch", 64, &args, 0);
	x = kmem_cache_alloc(s, GFP_KERNEL);
	kmem_cache_free(s, x);
	CHECK(sheaf_count(s) > 0);
	CHECK_EQ(slub_attr_write(s, "sanity_checks", "1", 1), 1);
	CHECK(s->sheaf_capacity == 0 && s->sheaf_slots == 0 && sheaf_count(s) == 0);
	x = kmem_cache_alloc(s, GFP_KERNEL);
	kmem_cache_free(s, x);
	CHECK_EQ(sheaf_count(s), 0);
	CHECK_EQ(slab_validate_cache(s), 0);
	CHECK_EQ(slub_attr_write(s, "sanity_checks", "0", 1), 1);
	CHECK(s->sheaf_capacity == 8 && s->sheaf_slots == s->nr_cpu_slots);
	x = kmem_cache_alloc(s, GFP_KERNEL);
	kmem_cache_free(s, x);
	CHECK(sheaf_count(s) > 0);
	CHECK_EQ(slab_validate_cache(s), 0);
	kmem_cache_destroy(s);
	CHECK_EQ(slub_errors(), errors);
}

static void option(void)
{
	REJECT("slub_sheaves=many", "slub_sheaves=many: expected an integer in 0..1024");
	REJECT("slub_sheaves=1025", "expected an integer in 0..1024");
	REJECT("slub_sheaves=-1", "expected an integer in 0..1024");
	REJECT("slub_sheaves", "slub_sheaves without a value");
	CHECK_EQ(slub_opt(sheaves), 0);
	/* Every new non-debug cache takes it; args ask for their own. */
	CHECK_EQ(options_parse("slub_sheaves=24", "test", false), 0);
	struct kmem_cache *a = kmem_cache_create("sheaf-opt", 100, 0, SLAB_NO_MERGE, NULL);
	struct kmem_cache *b = sheaf_cache_create("sheaf-opt-args", 100, 6);
	struct kmem_cache *d = kmem_cache_create("sheaf-opt-debug", 100, 0, SLAB_POISON, NULL);
	CHECK(a && a->sheaf_capacity == 24 && b && b->sheaf_capacity == 6 && d &&
	      d->sheaf_capacity == 0);
	CHECK(slub_find_cache("sheaf-24") && slub_find_cache("sheaf-6"));
	CHECK(slub_find_cache("sheaf-24")->sheaf_capacity == 0);
	CHECK_EQ(options_parse("slub_sheaves=0", "test", false), 0);
	struct kmem_cache *e = kmem_cache_create("sheaf-opt-off", 100, 0, SLAB_NO_MERGE, NULL);
	CHECK(e && e->sheaf_capacity == 0 && e->cpu_slab_slots == e->nr_cpu_slots);
	void *x = kmem_cache_alloc(a, GFP_KERNEL);
	kmem_cache_free(a, x);
	kmem_cache_destroy(a);
	kmem_cache_destroy(b);
	kmem_cache_destroy(d);
	kmem_cache_destroy(e);
}

/* The sheaf_capacity attribute, and the objects attribute next to what sheaves hold. */
static void attributes(void)
{
	struct kmem_cache *s = sheaf_cache_create("sheaf-attr", 80, 12);
	struct kmem_cache *u = kmem_cache_create("sheaf-attr-none", 80, 0, SLAB_NO_MERGE, NULL);
	char buf[32];
	CHECK(slub_attr_read(s, "sheaf_capacity", buf, sizeof(buf)) == 3 && !strcmp(buf, "12\n"));
	CHECK(slub_attr_read(u, "sheaf_capacity", buf, sizeof(buf)) == 2 && !strcmp(buf, "0\n"));
	CHECK_EQ(slub_attr_write(s, "sheaf_capacity", "4", 1), -EPERM);
	void *p[40];
	for (int i = 0; i < 40; i++)
		p[i] = kmem_cache_alloc(s, GFP_KERNEL);
	for (int i = 0; i < 30; i++)
		kmem_cache_free(s, p[i]);
	CHECK(sheaf_parked(s) >= 12);
	CHECK_EQ(objects_attr(s), 10);
	struct slab_info info;
	slab_get_info(s, &info);
	CHECK_EQ(info.active_objs, 10);
	/* The exit table lists the cache, not the sheaves' own (the allocator's, as kmem_cache). */
	FILE *f = tmpfile();
	static char table[1 << 16];
	slab_write_cache_table(fileno(f));
	size_t n = fread(table, 1, sizeof(table) - 1, (rewind(f), f));
	table[n] = 0;
	fclose(f);
	CHECK(strstr(table, "\nsheaf-attr ") != NULL);
	CHECK(strstr(table, "\nsheaf-12 ") == NULL);
	for (int i = 30; i < 40; i++)
		kmem_cache_free(s, p[i]);
	kmem_cache_destroy(s);
	kmem_cache_destroy(u);
}

/*
 * The idle decay flushes the sheaves of a slot that did not change since
 * its last look, not of one in use between two looks.  With the decay
 * thread on (the _decay variant of this test) the thread does it.
 */
static void idle_decay(void)
{
	bool thread = slub_decay_thread_wanted();
	struct kmem_cache *s = sheaf_cache_create("sheaf-idle", 64, 16);
	void *p[100];
	for (int i = 0; i < 100; i++)
		p[i] = kmem_cache_alloc(s, GFP_KERNEL);
	for (int i = 0; i < 100; i++)
		kmem_cache_free(s, p[i]);
	CHECK(sheaf_parked(s) > 0);
	unsigned long slabs = NODES_SUM(s, nr_slabs);
	if (thread) {
		for (int ms = 0; ms < 5000 && sheaf_parked(s); ms += 10)
			usleep(10000);
	} else {
		slub_slab_idle_tick(os_now_ms());	/* a first look: what each slot holds */
		/* This slot is used in between (an allocation and a free would leave it as it was). */
		void *x = kmem_cache_alloc(s, GFP_KERNEL);
		unsigned long before = sheaf_parked(s);
		slub_slab_idle_tick(os_now_ms());
		CHECK(sheaf_parked(s) > 0 && sheaf_parked(s) <= before);
		kmem_cache_free(s, x);
		slub_slab_idle_tick(os_now_ms());
		CHECK(slub_slab_idle_tick(os_now_ms()));	/* idle now: flushed */
		CHECK(!slub_slab_idle_tick(os_now_ms()));	/* nothing left to flush */
	}
	CHECK_EQ(sheaf_parked(s), 0);
	CHECK_EQ(objects_attr(s), 0);
	CHECK(slabs > 0);
	CHECK_EQ(kmem_cache_shrink(s), 0);
	kmem_cache_destroy(s);
}

/*
 * Sheaves come from a cache per capacity, 16 of them; past that a cache
 * takes the smallest larger sheaves, its capacity still its own.
 */
static void many_capacities(void)
{
	enum { N = 40 };
	struct kmem_cache *c[N];
	unsigned long errors = slub_errors();
	for (int i = 0; i < N; i++) {
		char name[32];
		snprintf(name, sizeof(name), "sheaf-cap-%d", i);
		c[i] = sheaf_cache_create(name, 32, SHEAF_CAPACITY_MAX - (unsigned int)i);
		CHECK(c[i] && c[i]->sheaf_capacity == SHEAF_CAPACITY_MAX - (unsigned int)i);
		CHECK(c[i]->sheaf_cache->object_size >=
		      sizeof(struct slab_sheaf) + c[i]->sheaf_capacity * sizeof(void *));
	}
	CHECK(c[N - 1]->sheaf_cache->object_size >
	      sizeof(struct slab_sheaf) + c[N - 1]->sheaf_capacity * sizeof(void *));
	for (int i = 0; i < N; i++) {
		void *p[3 * SHEAF_CAPACITY_MAX];
		int n = (int)(2 * c[i]->sheaf_capacity + 5);
		for (int k = 0; k < n; k++)
			p[k] = kmem_cache_alloc(c[i], GFP_KERNEL);
		for (int k = 0; k < n; k++)
			kmem_cache_free(c[i], p[k]);
		CHECK_EQ(slab_validate_cache(c[i]), 0);
		kmem_cache_destroy(c[i]);
	}
	CHECK_EQ(slub_errors(), errors);
}

/* A child forked while other threads fill and empty sheaves goes on with them. */
static void *fork_churn(void *arg)
{
	struct kmem_cache *s = arg;
	while (!__atomic_load_n(&mt_done, __ATOMIC_ACQUIRE)) {
		void *p[20];
		for (int i = 0; i < 20; i++)
			p[i] = kmem_cache_alloc(s, GFP_KERNEL);
		for (int i = 0; i < 20; i++)
			kmem_cache_free(s, p[i]);
	}
	return NULL;
}

static void fork_with_sheaves(void)
{
	if (UNDER_TSAN) {
		fprintf(stderr, "   (skipped: TSan's deadlock detector fails on the fork handlers' locks)\n");
		return;
	}
	struct kmem_cache *s = sheaf_cache_create("sheaf-fork", 96, 4);
	pthread_t t[2];
	__atomic_store_n(&mt_done, 0, __ATOMIC_RELEASE);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, fork_churn, s);
	for (int round = 0; round < 20; round++) {
		pid_t pid = fork();
		if (pid == 0) {
			void *p[100];
			for (int i = 0; i < 100; i++)
				p[i] = kmem_cache_alloc(s, GFP_KERNEL);
			for (int i = 0; i < 100; i++)
				kmem_cache_free(s, p[i]);
			/* The parent's other threads' objects stay allocated here: no shrink to 0. */
			kmem_cache_shrink(s);
			_exit(slab_validate_cache(s) ? 1 : 0);
		}
		int status = -1;
		waitpid(pid, &status, 0);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	__atomic_store_n(&mt_done, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	CHECK_EQ(slab_validate_cache(s), 0);
	kmem_cache_destroy(s);
}

/*
 * A free pointer overwritten in a partial slab (a write after free) is
 * caught when a refill pops the object before it: reported once, the
 * freelist cut there, and only the slab's own objects handed out.
 */
static void refill_checks_free_pointers(void)
{
	struct kmem_cache *s = sheaf_cache_create("sheaf-corrupt", 64, 4);
	void *p[16], *q[8];
	/* On one CPU: under numa=fake another CPU may be another node's, with its own list. */
	cpu_set_t old;
	pin_to_this_cpu(&old);
	for (int i = 0; i < 16; i++)
		p[i] = kmem_cache_alloc(s, GFP_KERNEL);
	struct slab *slab = virt_to_slab(p[0]);
	for (int i = 0; i < 16; i++)
		kmem_cache_free(s, p[i]);
	kmem_cache_flush_all(s);	/* every object back on its slab's freelist */
	void *head = __atomic_load_n(&slab->freelist, __ATOMIC_ACQUIRE);
	CHECK(head != NULL);
	if (!head) {
		unpin(&old);
		return;
	}
	set_freepointer(s, head, (char *)head + 8);	/* inside an object, not at one */
	unsigned long errors = slub_errors();
	for (int i = 0; i < 8; i++) {
		q[i] = kmem_cache_alloc(s, GFP_KERNEL);
		CHECK(q[i] != NULL && q[i] != (char *)head + 8);
		CHECK(!q[i] || slab_object_valid(s, virt_to_slab(q[i]), q[i]));
	}
	CHECK_EQ(slub_errors(), errors + 1);
	for (int i = 0; i < 8; i++)
		kmem_cache_free(s, q[i]);
	unpin(&old);
	/* The objects after the cut stay counted in use: destroy would report them. */
}

/*
 * While a cache is small, a refill from a new slab links its pages only
 * until the objects taken come to a page's worth (slab_refill_bulk), not the
 * sheaf's capacity: a malloc of a large class must not take a whole slab.
 */
static void refill_links_few_pages(void)
{
	enum { SIZE = 1024, CAP = 32, WANT = REFILL_SMALL_BYTES / SIZE };
	cpu_set_t old;
	pin_to_this_cpu(&old);
	int cpu = sched_getcpu();
	struct kmem_cache *s = sheaf_cache_create("sheaf-large", SIZE, CAP);
	void *p = kmem_cache_alloc(s, GFP_KERNEL);
	CHECK(p != NULL);
	struct slab *slab = virt_to_slab(p);
	CHECK(read_counters(slab).objects > WANT);	/* pages to spare in the slab */
	int m, sp;
	slot_counts(s, (unsigned int)cpu, &m, &sp);
	CHECK_EQ(m + 1, WANT);		/* one page's objects, one handed out */
	CHECK_EQ(read_counters(slab).built, WANT);
	kmem_cache_free(s, p);
	unpin(&old);
	kmem_cache_destroy(s);
}

/*
 * A slot's first allocation makes its main sheaf.  Out of memory, with no
 * sheaf to be had, a __GFP_NOFAIL request takes its object from the slabs
 * and waits there for memory, as every such request does: it returned NULL.
 */
static int nofail_without_sheaf_body(void)
{
	struct kmem_cache *s = sheaf_cache_create("sheaf-nofail", 64, 57);
	CHECK(s != NULL && s->sheaf_capacity == 57);
	page_hog_take_all();
	/* And every sheaf its sheaves' cache (shared by capacity) still has room for. */
	static void *sheaves[4096];
	int nsheaves = 0;
	while (nsheaves < 4096 &&
	       (sheaves[nsheaves] = kmem_cache_alloc(s->sheaf_cache, GFP_KERNEL | __GFP_NOWARN)))
		nsheaves++;
	CHECK(nsheaves < 4096);
	page_hog_release_later();
	void *p = kmem_cache_alloc(s, GFP_KERNEL | __GFP_NOFAIL);
	CHECK(p != NULL);
	page_hog_join();
	kmem_cache_free(s, p);
	for (int i = 0; i < nsheaves; i++)
		kmem_cache_free(s->sheaf_cache, sheaves[i]);
	kmem_cache_destroy(s);
	return check_failures ? 1 : 0;
}

static void nofail_without_sheaf(void)
{
	if (UNDER_TSAN) {
		fprintf(stderr, "   (skipped: TSan's deadlock detector fails on the fork handlers' locks)\n");
		return;
	}
	if (address_space_limited()) {
		fprintf(stderr, "   skipped: the address space is limited already\n");
		return;
	}
	CHECK_EQ(child_under_address_limit(64 << 20, nofail_without_sheaf_body), 0);
}

int main(void)
{
	kfree(kmalloc(8, GFP_KERNEL));	/* start the slab layer */
	fprintf(stderr, "   per-CPU fast paths: %s\n", slub_percpu_rseq ? "rseq" : "locked (no rseq)");
	RUN(alloc_free);
	RUN(slow_path_steps);
	RUN(option);
	RUN(debug_caches_have_none);
	RUN(double_free_parked);
	RUN(refill_checks_free_pointers);
	RUN(refill_links_few_pages);
	RUN(shrink_and_destroy_flush);
	RUN(attributes);
	RUN(idle_decay);
	RUN(many_capacities);
	RUN(threads_migrate);
	RUN(memory_bound);
	RUN(fork_with_sheaves);
	RUN(nofail_without_sheaf);
	CHECK_EQ(slab_validate_all(), 0);
	return check_done();
}
