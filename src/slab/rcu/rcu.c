// SPDX-License-Identifier: MIT
/*
 * rcu.c - liburcu for the slab layer, loaded at the first RCU use: the
 * flavour's library (SLUB_RCU_SONAME, chosen at build time) is opened with
 * dlopen() and its call_rcu, rcu_barrier, synchronize_rcu and fork hooks
 * looked up by name.  A program that never uses RCU has none of it: the
 * malloc library's start-up and fast paths are those of a build without
 * RCU.  A program that takes rcu_read_lock() links the same library, and
 * dlopen() then hands back that very copy: one set of readers, one grace
 * period.
 *
 * Entry points: slab_rcu_load() (rcu.h says who calls it), slab_call_rcu(),
 * slab_rcu_barrier(), slab_synchronize_rcu(), slab_rcu_fork().
 */
#define _GNU_SOURCE
#include "slab/rcu/rcu.h"

#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

#include "base/report.h"
#include "base/start.h"

#ifndef SLUB_RCU_PREFIX
#error "SLUB_RCU_PREFIX (urcu_bp_, ...) comes from the build"
#endif

/* The flavour's functions this file calls, by their names without the prefix. */
enum {
	URCU_CALL_RCU, URCU_BARRIER, URCU_SYNCHRONIZE, URCU_DEFAULT_CRDP,
	URCU_CR_BEFORE_FORK, URCU_CR_AFTER_PARENT, URCU_CR_AFTER_CHILD,
	URCU_BEFORE_FORK, URCU_AFTER_PARENT, URCU_AFTER_CHILD,	/* urcu-bp's registry only */
	NR_URCU_FUNCS
};
static const struct {
	const char *name;
	bool optional;
} urcu_funcs[NR_URCU_FUNCS] = {
	[URCU_CALL_RCU] = { "call_rcu", false },
	[URCU_BARRIER] = { "barrier", false },
	[URCU_SYNCHRONIZE] = { "synchronize_rcu", false },
	[URCU_DEFAULT_CRDP] = { "get_default_call_rcu_data", false },
	[URCU_CR_BEFORE_FORK] = { "call_rcu_before_fork", false },
	[URCU_CR_AFTER_PARENT] = { "call_rcu_after_fork_parent", false },
	[URCU_CR_AFTER_CHILD] = { "call_rcu_after_fork_child", false },
	[URCU_BEFORE_FORK] = { "before_fork", true },
	[URCU_AFTER_PARENT] = { "after_fork_parent", true },
	[URCU_AFTER_CHILD] = { "after_fork_child", true },
};
static void *urcu[NR_URCU_FUNCS];
/* call_rcu() calls made, for the tests of kfree_rcu's batching. */
unsigned long slab_rcu_calls;

/* 0: not tried; 1: loaded; -1: failed (reported once, not tried again). */
static int load_state;
/* Held while loading, and across fork (rcu.h's lock order: outermost). */
static pthread_mutex_t rcu_load_lock = PTHREAD_MUTEX_INITIALIZER;

typedef void (*void_fn)(void);

static void call_void(int i)
{
	if (urcu[i])
		((void_fn)urcu[i])();
}

/*
 * Another flavour already in the process is a program whose readers this
 * library's grace periods do not wait for: said once, at load.
 */
static void check_other_flavours(void)
{
	static const char *const flavours[] = { "", "-bp", "-memb", "-mb", "-qsbr", "-signal" };
	const char *suffix = strstr(SLUB_RCU_SONAME, ".so");
	if (!suffix)
		return;
	for (size_t i = 0; i < ARRAY_SIZE(flavours); i++) {
		char name[64] = "liburcu";
		if (strlen(name) + strlen(flavours[i]) + strlen(suffix) >= sizeof(name))
			continue;
		strcat(strcat(name, flavours[i]), suffix);
		if (!strcmp(name, SLUB_RCU_SONAME))
			continue;
		void *h = dlopen(name, RTLD_LAZY | RTLD_NOLOAD);
		if (h) {
			slub_warn("RCU: the program has %s loaded, but libslub waits for the grace "
				  "periods of %s: readers of the other flavour are not waited for",
				  name, SLUB_RCU_SONAME);
			dlclose(h);
		}
	}
}

static int load(void)
{
	void *h = dlopen(SLUB_RCU_SONAME, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
	if (!h) {
		slub_report("RCU: cannot load %s (%s): kfree_rcu() and SLAB_TYPESAFE_BY_RCU "
			    "need liburcu (apt-get install liburcu8)", SLUB_RCU_SONAME, dlerror());
		return -1;
	}
	for (int i = 0; i < NR_URCU_FUNCS; i++) {
		char name[64] = SLUB_RCU_PREFIX;
		if (strlen(name) + strlen(urcu_funcs[i].name) >= sizeof(name))
			return -1;
		strcat(name, urcu_funcs[i].name);
		urcu[i] = dlsym(h, name);
		if (!urcu[i] && !urcu_funcs[i].optional) {
			slub_report("RCU: %s has no %s: not the liburcu libslub was built for",
				    SLUB_RCU_SONAME, name);
			return -1;
		}
	}
	check_other_flavours();
	/*
	 * liburcu's worker thread now, from the program's call: a call_rcu()
	 * from discard_slab() must never be the one that makes it.
	 */
	((void *(*)(void))urcu[URCU_DEFAULT_CRDP])();
	return 1;
}

bool slab_rcu_loaded(void)
{
	return __atomic_load_n(&load_state, __ATOMIC_ACQUIRE) > 0;
}

bool slab_rcu_load(void)
{
	int state = __atomic_load_n(&load_state, __ATOMIC_ACQUIRE);
	if (likely(state))
		return state > 0;
	slub_fork_handlers_check();
	pthread_mutex_lock(&rcu_load_lock);
	state = load_state;
	if (!state) {
		state = load();
		__atomic_store_n(&load_state, state, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&rcu_load_lock);
	/* Two threads now, the worker one of them: fork must find our handlers. */
	slub_fork_handlers_check();
	return state > 0;
}

void slab_call_rcu(struct rcu_head *head, void (*func)(struct rcu_head *head))
{
	rcu_tsan_release(head);
	__atomic_add_fetch(&slab_rcu_calls, 1, __ATOMIC_RELAXED);
	((void (*)(struct rcu_head *, void (*)(struct rcu_head *)))urcu[URCU_CALL_RCU])(head, func);
}

void slab_rcu_barrier(void)
{
	call_void(URCU_BARRIER);
}

void slab_synchronize_rcu(void)
{
	call_void(URCU_SYNCHRONIZE);
}

/*
 * Prepare: liburcu's worker paused first (it may be inside a callback that
 * frees into a slab: the slab locks are still free), then urcu-bp's
 * registry, then the kfree_rcu shards.  Parent and child undo it in the
 * reverse order; the child's call_rcu_after_fork_child() makes a new
 * worker, so slab_fork_child() calls this last.
 */
void slab_rcu_fork(int phase)
{
	switch (phase) {
	case SLAB_RCU_FORK_PREPARE:
		pthread_mutex_lock(&rcu_load_lock);
		if (load_state <= 0)
			return;
		call_void(URCU_CR_BEFORE_FORK);
		call_void(URCU_BEFORE_FORK);
		krc_fork_lock(true);
		return;
	case SLAB_RCU_FORK_PARENT:
		if (load_state > 0) {
			krc_fork_lock(false);
			call_void(URCU_AFTER_PARENT);
			call_void(URCU_CR_AFTER_PARENT);
		}
		pthread_mutex_unlock(&rcu_load_lock);
		return;
	default:
		if (load_state > 0) {
			krc_fork_child();
			call_void(URCU_AFTER_CHILD);
			call_void(URCU_CR_AFTER_CHILD);
		}
		pthread_mutex_init(&rcu_load_lock, NULL);
		return;
	}
}
