// SPDX-License-Identifier: MIT
/*
 * test_init.c - start-up and fork(): a child forked while other threads
 * hold allocator locks can still allocate; start-up happens once even when
 * many threads race to be first; a fork that cuts the handlers' registration
 * short does not leave the child waiting for it, nor its own forks hung on
 * handlers it registered a second time.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>

#include <slub.h>
#include "check.h"
#include "base/start.h"
#include "page/page_alloc.h"

static int stop;

static void *churn(void *arg)
{
	unsigned int order = (unsigned int)(uintptr_t)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		unsigned long a = __get_free_pages(GFP_KERNEL, order);
		if (a)
			free_pages(a, order);
		if (order == 5)
			slub_reclaim();	/* takes zone locks and drops them for madvise */
	}
	return NULL;
}

static void fork_while_allocating(void)
{
	pthread_t t[4];
	for (uintptr_t i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, churn, (void *)(i == 3 ? 5 : i * 2 + 1));
	int hung = 0, bad = 0;
	for (int i = 0; i < 100; i++) {
		pid_t pid = fork();
		if (pid == 0) {
			alarm(10);	/* a deadlock ends as SIGALRM */
			unsigned long errors = slub_errors();
			for (unsigned int o = 0; o <= MAX_PAGE_ORDER + 1; o++) {
				unsigned long a = __get_free_pages(GFP_KERNEL, o);
				if (!a)
					_exit(2);
				free_pages(a, o);
			}
			/*
			 * Not the validator: blocks the other threads were
			 * allocating or freeing at fork time are in flight
			 * for ever here (leaked in the child, as with any
			 * allocator), and it would rightly call them lost.
			 */
			_exit(slub_errors() == errors ? 0 : 3);
		}
		int status;
		waitpid(pid, &status, 0);
		if (WIFSIGNALED(status))
			hung++;
		else if (WEXITSTATUS(status))
			bad++;
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	CHECK_EQ(hung, 0);
	CHECK_EQ(bad, 0);
	CHECK_EQ(page_alloc_validate(), 0);
}

static void *first_use(void *arg)
{
	(void)arg;
	unsigned long a = __get_free_page(GFP_KERNEL);
	free_page(a);
	return (void *)(uintptr_t)(a != 0);
}

static void racing_start_up(void)
{
	pthread_t t[8];
	for (int i = 0; i < 8; i++)
		pthread_create(&t[i], NULL, first_use, NULL);
	for (int i = 0; i < 8; i++) {
		void *ok;
		pthread_join(t[i], &ok);
		CHECK(ok != NULL);
	}
}

/*
 * A fork in the middle of registering the fork handlers (another thread of
 * the parent was inside pthread_atfork) leaves the child with REGISTERING
 * and nobody to finish: the child must register them itself, not wait for
 * ever, and its own forks must work with the handlers registered twice
 * (the parent's call may have been done, only READY not stored yet).
 * Without @wait, a thread of the registering process goes on.
 */
static void registration_cut_by_fork(void)
{
	CHECK_EQ(slub_fork_handlers, FORK_HANDLERS_READY);	/* libslub registers at load */
	__atomic_store_n(&slub_fork_handlers, FORK_HANDLERS_REGISTERING, __ATOMIC_RELEASE);
	slub_fork_handlers_register(false);	/* the registrant's process: goes on */
	CHECK_EQ(slub_fork_handlers, FORK_HANDLERS_REGISTERING);
	pid_t pid = fork();
	if (pid == 0) {
		alarm(10);
		slub_fork_handlers_register(true);
		if (slub_fork_handlers != FORK_HANDLERS_READY)
			_exit(1);
		/*
		 * The handlers are registered twice now (the parent's, then
		 * ours): the next fork must still take each lock once, or it
		 * waits for ever on a lock it holds itself.
		 */
		pid_t grandchild = fork();
		if (grandchild == 0)
			_exit(first_use(NULL) ? 0 : 1);
		int status;
		_exit(waitpid(grandchild, &status, 0) == grandchild && WIFEXITED(status) &&
		      WEXITSTATUS(status) == 0 && first_use(NULL) ? 0 : 2);
	}
	__atomic_store_n(&slub_fork_handlers, FORK_HANDLERS_READY, __ATOMIC_RELEASE);
	int status;
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(void)
{
	RUN(racing_start_up);
	RUN(fork_while_allocating);
	RUN(registration_cut_by_fork);
	return check_done();
}
