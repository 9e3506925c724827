// SPDX-License-Identifier: MIT
/*
 * test_decay_thread.c - slub_decay_thread: started by slub_setup(), named,
 * one per process; while the program makes no allocator call it gives
 * freed blocks back and empties the per-CPU page lists, which without it
 * stay resident (the same steps run with --without, the control); a forked
 * child runs without it and allocates as usual, and a fork never leaves it
 * blocks that a decay in flight had taken off the lists.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <slub.h>
#include "check.h"
#include "page/page_alloc.h"
#include "base/os.h"
#include "page/pcp.h"
#include "page/local_zone.h"

#define DECAY_MS 40
#define NR_BLOCKS 16	/* order-4 blocks: 1 MiB */
#define NR_PAGES 48	/* order-0 pages: stay on this CPU's list when freed */

/* Threads of this process named slub-decay (a sanitizer may run its own). */
static int decay_threads(void)
{
	int n = 0;
	DIR *d = opendir("/proc/self/task");	/* libc's malloc: this test is not preloaded */
	if (!d)
		return -1;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char path[300], comm[32] = "";
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		int fd = open(path, O_RDONLY);
		if (fd >= 0) {
			ssize_t len = read(fd, comm, sizeof(comm) - 1);
			close(fd);
			if (len > 0 && !strncmp(comm, "slub-decay", 10))
				n++;
		}
	}
	closedir(d);
	return n;
}

static unsigned long pcp_pages(void)
{
	struct zone *z = local_zone(ZONE_NORMAL);
	unsigned long n = pcp_lock_all(z);
	pcp_unlock_all(z);
	return n;
}

static long blocks_resident(unsigned long *blocks)
{
	long resident = 0;
	for (int i = 0; i < NR_BLOCKS; i++) {
		long n = resident_pages((void *)blocks[i], PAGE_SIZE << 4);
		CHECK(n >= 0);
		resident += n;
	}
	return resident;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts))
		;
}

/* Free blocks and pages, then make no allocator call for ten decay periods. */
static void idle_after_frees(bool with_thread)
{
	static unsigned long blocks[NR_BLOCKS], pages[NR_PAGES];
	for (int i = 0; i < NR_BLOCKS; i++) {
		blocks[i] = __get_free_pages(GFP_KERNEL, 4);
		CHECK(blocks[i] != 0);
		memset((void *)blocks[i], 0x5a, PAGE_SIZE << 4);
	}
	for (int i = 0; i < NR_PAGES; i++) {
		pages[i] = __get_free_pages(GFP_KERNEL, 0);
		CHECK(pages[i] != 0);
		memset((void *)pages[i], 0x5a, PAGE_SIZE);
	}
	for (int i = 0; i < NR_BLOCKS; i++)
		free_pages(blocks[i], 4);
	uint64_t t0 = os_now_ms();
	for (int i = 0; i < NR_PAGES; i++)
		free_page(pages[i]);
	/*
	 * The thread empties a list only a decay period after its last free:
	 * if this thread was kept off the CPU that long, the lists may be empty
	 * already, rightly.
	 */
	CHECK(pcp_pages() >= NR_PAGES / 2 || os_now_ms() - t0 >= DECAY_MS);
	sleep_ms(10 * DECAY_MS);
	long resident = blocks_resident(blocks);
	unsigned long on_lists = pcp_pages();
	/* On a loaded machine the thread runs late: it has 10 s, not 10 periods. */
	for (uint64_t end = os_now_ms() + 10000;
	     with_thread && (resident > 1 || on_lists) && os_now_ms() < end;) {
		sleep_ms(DECAY_MS);
		resident = blocks_resident(blocks);
		on_lists = pcp_pages();
	}
	fprintf(stderr, "   %s the thread: %ld of %d freed pages resident, %lu on per-CPU lists\n",
		with_thread ? "with" : "without", resident, NR_BLOCKS << 4, on_lists);
	if (with_thread) {
		CHECK(resident <= 1);
		CHECK_EQ(on_lists, 0);
	} else {
		CHECK(resident >= (NR_BLOCKS << 4) / 2);
		CHECK(on_lists >= NR_PAGES / 2);
	}
	CHECK_EQ(page_alloc_validate(), 0);
}

/* A forked child has no thread, and allocates and frees as usual. */
static void child_runs_without_it(void)
{
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		int ok = decay_threads() == 0;	/* fork copies the calling thread only */
		void *p = kmalloc(1000, GFP_KERNEL);
		unsigned long page = __get_free_pages(GFP_KERNEL, 2);
		ok = ok && p && page;
		kfree(p);
		free_pages(page, 2);
		_exit(ok && page_alloc_validate() == 0 ? 0 : 1);
	}
	int status;
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/*
 * Forks while the thread decays: a child must find no block isolated (off
 * the lists while a decay decommits it), or it would never get it back.
 * Each round leaves 64 separate order-4 blocks free, which the thread takes
 * in one sweep of some hundreds of microseconds, and forks without pause
 * across it.  Without the wait in page_alloc_fork_prepare() children of
 * most runs see isolated pages; with it, none may.
 */
static void forks_wait_for_decays(void)
{
	enum { PAIRS = 64, ROUNDS = 6 };
	static unsigned long blocks[2 * PAIRS];
	struct zone *z = local_zone(ZONE_NORMAL);
	int forks = 0, isolated = 0;
	for (int r = 0; r < ROUNDS; r++) {
		for (int i = 0; i < 2 * PAIRS; i++) {
			blocks[i] = __get_free_pages(GFP_KERNEL, 4);
			CHECK(blocks[i] != 0);
			memset((void *)blocks[i], 0x5a, PAGE_SIZE << 4);
		}
		for (int i = 1; i < 2 * PAIRS; i += 2)	/* their buddies stay in use */
			free_pages(blocks[i], 4);
		/* Ten forks at least, however slow forks are (ThreadSanitizer on a busy machine). */
		uint64_t end = os_now_ms() + 3 * DECAY_MS;
		for (int round_forks = 0; os_now_ms() < end || round_forks < 10; round_forks++) {
			pid_t pid = fork();
			CHECK(pid >= 0);
			if (pid == 0)
				_exit(z->isolated_pages != 0);	/* one thread here: no lock needed */
			int status;
			CHECK_EQ(waitpid(pid, &status, 0), pid);
			forks++;
			isolated += !WIFEXITED(status) || WEXITSTATUS(status) != 0;
		}
		for (int i = 0; i < 2 * PAIRS; i += 2)
			free_pages(blocks[i], 4);
	}
	fprintf(stderr, "   %d forks across the thread's decays: %d children found blocks isolated\n",
		forks, isolated);
	CHECK_EQ(isolated, 0);
}

/* Voluntary context switches of the slub-decay thread: about one per sleep. */
static long decay_thread_sleeps(void)
{
	long sleeps = -1;
	DIR *d = opendir("/proc/self/task");
	if (!d)
		return -1;
	struct dirent *e;
	while ((e = readdir(d))) {
		char path[300], buf[4096] = "";
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		int fd = open(path, O_RDONLY);
		if (fd < 0)
			continue;
		ssize_t len = read(fd, buf, 16);
		close(fd);
		if (len <= 0 || strncmp(buf, "slub-decay", 10))
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/status", e->d_name);
		fd = open(path, O_RDONLY);
		len = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
		if (fd >= 0)
			close(fd);
		buf[len > 0 ? len : 0] = 0;
		const char *v = strstr(buf, "\nvoluntary_ctxt_switches:");
		if (v)
			sleeps = atol(v + 26);
	}
	closedir(d);
	return sleeps;
}

/*
 * With nothing left to give back the thread sleeps longer each time, up to
 * 8 decay periods (320 ms here): over a second of a sleeping program it
 * wakes a few times, not 25.
 */
static void idle_thread_backs_off(void)
{
	sleep_ms(40 * DECAY_MS);	/* everything freed has gone back; backed off */
	/*
	 * Unless a loaded machine kept the thread from finishing: while blocks
	 * wait for their decay it wakes 8 times a period.  Measure from when
	 * nothing is left (the ramp up to 8 periods then wakes it 5 times).
	 */
	struct zone *z = local_zone(ZONE_NORMAL);
	for (uint64_t end = os_now_ms() + 10000; os_now_ms() < end; sleep_ms(DECAY_MS)) {
		pthread_mutex_lock(&z->lock);
		unsigned long decayable = z->decayable_pages;
		pthread_mutex_unlock(&z->lock);
		if (!decayable && !pcp_pages())
			break;
	}
	long before = decay_thread_sleeps();
	sleep_ms(25 * DECAY_MS);
	long woken = decay_thread_sleeps() - before;
	/* A thread kept off the CPU may not have woken in that second: wait for once. */
	for (uint64_t end = os_now_ms() + 10000; !woken && os_now_ms() < end; sleep_ms(DECAY_MS))
		woken = decay_thread_sleeps() - before;
	fprintf(stderr, "   %ld wake-ups in %d ms of nothing to do\n", woken, 25 * DECAY_MS);
	CHECK(before >= 0);
	CHECK(woken >= 1 && woken <= 8);
}

int main(int argc, char **argv)
{
	bool with_thread = !(argc > 1 && !strcmp(argv[1], "--without"));
	char opts[128];
	snprintf(opts, sizeof(opts), "slub_decay_thread=%d slub_decay_ms=%d slub_dirty_ratio=0",
		 with_thread, DECAY_MS);
	CHECK_EQ(slub_setup(opts), 0);
	CHECK_EQ(decay_threads(), with_thread);
	CHECK_EQ(slub_setup(NULL), 0);	/* a second start finds it running: still one */
	CHECK_EQ(decay_threads(), with_thread);
	stay_on_one_node();
	fprintf(stderr, "== idle_after_frees\n");
	idle_after_frees(with_thread);
	if (with_thread) {
		RUN(child_runs_without_it);
		RUN(forks_wait_for_decays);
		RUN(idle_thread_backs_off);
		/* The same steps without the thread must leave the pages where they are. */
		char cmd[4200];
		snprintf(cmd, sizeof(cmd), "%s --without", argv[0]);
		CHECK_EQ(system(cmd), 0);
	}
	return check_done();
}
