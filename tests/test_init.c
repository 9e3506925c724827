/*
 * test_init.c - start-up and fork(): a child forked while other threads
 * hold allocator locks can still allocate; start-up happens once even when
 * many threads race to be first.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>

#include <slub.h>
#include "check.h"
#include "page_alloc.h"

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

int main(void)
{
	RUN(racing_start_up);
	RUN(fork_while_allocating);
	return check_done();
}
