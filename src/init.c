// SPDX-License-Identifier: MIT
/*
 * init.c - what is above every layer: slub_setup(), and starting the
 * threads SLUB_OPTIONS asks for at load (the decay thread, the agent).
 * Start-up itself is base's (base/start.c), in the steps the layers
 * register there.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <slub.h>
#include "agent/agent.h"
#include "base/options.h"
#include "base/report.h"
#include "base/start.h"
#include "page/decay_thread.h"
#include "stack/unwind.h"

/*
 * After base's constructor, which registers the fork handlers: the
 * threads need them.  A thread is made here or in slub_setup(), never
 * inside an allocation.  Before start-up, SLUB_OPTIONS is parsed quietly
 * now to know: start-up parses it again, after any slub_setup(), so it
 * still wins, and reports what is wrong in it.
 */
__attribute__((constructor(102))) static void init_at_load(void)
{
	const char *env = secure_getenv("SLUB_OPTIONS");
	if (env && (strstr(env, "slub_decay_thread") || strstr(env, "slub_agent"))) {
		pthread_mutex_lock(&options_lock);
		if (!__atomic_load_n(&slub_started, __ATOMIC_ACQUIRE))
			options_parse(env, "SLUB_OPTIONS", true);
		bool wanted = slub_decay_thread_wanted(), agent = slub_agent_wanted();
		pthread_mutex_unlock(&options_lock);
		if (wanted)
			slub_decay_thread_start();
		if (agent)
			slub_agent_start();
	}
}

/* Options before start-up; it may start the decay thread and the agent. */
int slub_setup(const char *options)
{
	int ret = 0;
	bool start_thread = false, start_agent = false;
	slub_fork_handlers_check();
	pthread_mutex_lock(&options_lock);
	if (__atomic_load_n(&slub_started, __ATOMIC_ACQUIRE))
		ret = -EBUSY;
	else if (options && options_parse(options, "slub_setup", false))
		ret = -EINVAL;
	if (ret != -EBUSY)
		start_thread = slub_decay_thread_wanted();	/* read under the lock */
	if (ret != -EBUSY)
		start_agent = slub_agent_wanted();
	bool unwind = slub_opt(abort_on_error) || slub_debug_any(SLAB_STORE_USER) ||
		      slub_opt(kfence_sample_every) || slub_opt(kfence_sample_interval);
	pthread_mutex_unlock(&options_lock);
	if (ret == -EBUSY)
		slub_warn("slub_setup(\"%s\"): too late, the allocator is running; ignored",
			  options ? options : "");
	/* A user's call is a safe place for both. */
	if (start_thread)
		slub_decay_thread_start();
	if (start_agent)
		slub_agent_start();
	if (unwind)
		unwind_prime();
	return ret;
}
