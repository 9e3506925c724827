// SPDX-License-Identifier: MIT
/*
 * os.c - the OS layer: mmap/madvise behind a swappable table, CPU count and
 * current CPU, clock, page-size check.  Nothing here allocates with malloc.
 */
#define _GNU_SOURCE
#include "base/os.h"

#include <errno.h>
#if defined(__x86_64__)
#include <cpuid.h>
#if __has_include(<sys/platform/x86.h>)
#include <sys/platform/x86.h>	/* CPU_FEATURE_ACTIVE: glibc 2.33 and later */
#endif
#endif
#include <fcntl.h>
#include <sched.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>

#include <slub.h>
#include "base/report.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

/* mremap(2) is variadic (the new address comes last); the table's entry is not. */
static void *mremap_to(void *old, size_t old_len, size_t new_len, int flags, void *new_addr)
{
	return mremap(old, old_len, new_len, flags, new_addr);
}

const struct slub_os_ops slub_os_default = {
	.mmap = mmap,
	.munmap = munmap,
	.mprotect = mprotect,
	.madvise = madvise,
	.mremap = mremap_to,
};

struct slub_os_ops slub_os = {
	.mmap = mmap,
	.munmap = munmap,
	.mprotect = mprotect,
	.madvise = madvise,
	.mremap = mremap_to,
};

ptrdiff_t os_rseq_offset;

/* glibc >= 2.35 exports these; weak so older libcs still link. */
extern const ptrdiff_t __rseq_offset __attribute__((weak));
extern const unsigned int __rseq_size __attribute__((weak));

static void *reserve_raw(void *hint, size_t size, int flags)
{
	void *p = slub_os.mmap(hint, size, PROT_NONE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | flags,
			       -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

#define RESERVE_TRIES_BELOW 16		/* system calls */
#define RESERVE_STEPS_BELOW 4096	/* starts looked at */

void *os_reserve(size_t size, size_t align)
{
	return os_reserve_avoiding(size, align, NULL);
}

void *os_reserve_avoiding(size_t size, size_t align, bool (*known_taken)(uintptr_t at))
{
	if (align <= PAGE_SIZE)
		return reserve_raw(NULL, size, 0);
	if (size + align < size)
		return NULL;
	int saved_errno = errno;	/* failed tries must not show in a success */
	/*
	 * First where the kernel puts @size bytes, moved to an aligned start
	 * at or below it (the kernel hands out the top of a free gap, and
	 * mappings grow down, so below is most often free), or just above:
	 * never more than @size of address space at once, which a limit on it
	 * (RLIMIT_AS) counts.  Over-reserving, the fallback, needs @align more
	 * (a section: twice its 64 MiB).
	 */
	char *probe = reserve_raw(NULL, size, 0);
	if (!probe)
		return NULL;
	if (!((uintptr_t)probe & (align - 1)))
		return probe;
	slub_os.munmap(probe, size);
	/*
	 * Starts the caller knows are taken (its own regions, which under
	 * RLIMIT_AS leave their slots' tails free, where the kernel then puts
	 * the probe) are passed over without a system call.
	 */
	uintptr_t at = ALIGN_DOWN((uintptr_t)probe, align);
	for (unsigned int tries = 0, steps = 0;
	     tries < RESERVE_TRIES_BELOW && steps < RESERVE_STEPS_BELOW && at >= align;
	     steps++, at -= align) {
		if (known_taken && known_taken(at))
			continue;
		tries++;
		void *q = os_reserve_at(at, size);
		if (q) {
			errno = saved_errno;
			return q;
		}
		if (errno != EEXIST)
			break;	/* the OS refused, not a mapping in the way */
	}
	void *q = os_reserve_at(ALIGN_UP((uintptr_t)probe, align), size);
	if (q) {
		errno = saved_errno;
		return q;
	}
	/* Over-reserve, then cut the unaligned head and tail off. */
	char *p = reserve_raw(NULL, size + align, 0);
	if (!p)
		return NULL;
	uintptr_t start = ALIGN_UP((uintptr_t)p, align);
	size_t head = start - (uintptr_t)p;
	size_t tail = align - head;
	if (head)
		slub_os.munmap(p, head);
	if (tail)
		slub_os.munmap((char *)start + size, tail);
	errno = saved_errno;
	return (void *)start;
}

void *os_reserve_at(uintptr_t addr, size_t size)
{
	void *p = reserve_raw((void *)addr, size, MAP_FIXED_NOREPLACE);
	if (p && (uintptr_t)p != addr) {
		/* Kernels before 4.17 treat the flag as a mere hint. */
		slub_os.munmap(p, size);
		errno = EEXIST;
		return NULL;
	}
	return p;
}

int os_commit(void *addr, size_t size)
{
	return slub_os.mprotect(addr, size, PROT_READ | PROT_WRITE) ? -errno : 0;
}

void *os_map_sparse(size_t size)
{
	void *p = slub_os.mmap(NULL, size, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	os_no_huge_pages(p, size);
	return p;
}

void os_no_huge_pages(void *addr, size_t size)
{
	/* Fails where THP is not built in; then there is nothing to avoid. */
	int saved_errno = errno;
	slub_os.madvise(addr, size, MADV_NOHUGEPAGE);
	errno = saved_errno;
}

void os_huge_pages(void *addr, size_t size)
{
	int saved_errno = errno;
	slub_os.madvise(addr, size, MADV_HUGEPAGE);
	errno = saved_errno;
}

bool os_thp_setting_is_madvise(void)
{
	int saved_errno = errno;
	char buf[128];
	ssize_t n = -1;
	int fd = open("/sys/kernel/mm/transparent_hugepage/enabled", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
	}
	errno = saved_errno;
	if (n <= 0)
		return false;
	buf[n] = 0;
	return strstr(buf, "[madvise]") != NULL;
}

int os_commit_charged(void *addr, size_t size)
{
	void *p = slub_os.mmap(addr, size, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	return p == MAP_FAILED ? -errno : 0;
}

bool os_address_space_limited(void)
{
	struct rlimit lim;
	return !getrlimit(RLIMIT_AS, &lim) && lim.rlim_cur != RLIM_INFINITY;
}

int os_map_at(void *addr, size_t size, bool charged)
{
	int saved_errno = errno, rc = 0;
	void *p = slub_os.mmap(addr, size, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE |
				       (charged ? 0 : MAP_NORESERVE), -1, 0);
	if (p == MAP_FAILED) {
		rc = -errno;
	} else if (p != addr) {
		/* Kernels before 4.17 treat the flag as a mere hint. */
		slub_os.munmap(p, size);
		rc = -EEXIST;
	}
	errno = saved_errno;
	return rc;
}

int os_bind_node(void *addr, size_t size, int node)
{
#ifdef SYS_mbind
	/* The kernel's MPOL_PREFERRED: its node first, another rather than none. */
	enum { MPOL_PREFERRED_ = 1 };
	unsigned long mask[(MAX_OS_NODES + 63) / 64] = { 0 };
	if (node < 0 || node >= MAX_OS_NODES)
		return -EINVAL;
	mask[node / 64] = 1UL << (node % 64);
	int saved = errno, ret = 0;
	/* maxnode counts one more than the mask's bits (the kernel drops the last). */
	if (syscall(SYS_mbind, addr, size, MPOL_PREFERRED_, mask, (unsigned long)MAX_OS_NODES + 1, 0))
		ret = -errno;
	errno = saved;
	return ret;
#else
	(void)addr, (void)size, (void)node;
	return -ENOSYS;
#endif
}

int os_decommit(void *addr, size_t size)
{
	return slub_os.madvise(addr, size, MADV_DONTNEED) ? -errno : 0;
}

void os_populate(void *addr, size_t size)
{
#ifdef MADV_POPULATE_WRITE
	static bool unsupported;
	if (READ_ONCE(unsupported))
		return;
	int saved_errno = errno;
	if (slub_os.madvise(addr, size, MADV_POPULATE_WRITE) && errno == EINVAL)
		WRITE_ONCE(unsupported, true);
	errno = saved_errno;
#else
	(void)addr;
	(void)size;
#endif
}

int os_release(void *addr, size_t size)
{
	return slub_os.munmap(addr, size) ? -errno : 0;
}

int os_move(void *old, size_t old_size, void *to, size_t new_size)
{
	void *p = slub_os.mremap(old, old_size, new_size, MREMAP_MAYMOVE | MREMAP_FIXED, to);
	return p == MAP_FAILED ? -errno : 0;
}

bool os_can_commit(size_t size)
{
	void *p = slub_os.mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return false;
	slub_os.munmap(p, size);
	return true;
}

unsigned long os_resident_cut(void *addr, unsigned long pages, unsigned long want,
			      unsigned long *found)
{
	unsigned char vec[512];
	unsigned long end = pages, n = 0;
	int saved_errno = errno;
	while (end && n < want) {
		unsigned long chunk = end < sizeof(vec) ? end : sizeof(vec);
		unsigned long start = end - chunk;
		bool known = !mincore((char *)addr + (start << PAGE_SHIFT), chunk << PAGE_SHIFT, vec);
		while (end > start && n < want) {
			end--;
			n += known && (vec[end - start] & 1);
		}
	}
	errno = saved_errno;
	*found = n;
	return end;
}

bool os_range_mapped(void *addr, size_t size)
{
	/*
	 * msync() checks the range and, for anonymous memory, does nothing
	 * else.  The system call itself: glibc's msync() is a cancellation
	 * point, which realloc must not be.
	 */
	return !syscall(SYS_msync, addr, size, MS_ASYNC);
}

int os_check_page_size(void)
{
	/* The aux vector, not sysconf(): sysconf's page of libc is one more
	 * window of 64 KiB faulted in for every process (fault-around). */
	long ps = (long)getauxval(AT_PAGESZ);
	if (!ps)
		ps = sysconf(_SC_PAGESIZE);
	return ps == (long)PAGE_SIZE ? 0 : (int)ps;
}

int os_cpu_list_parse(const char *s, void (*fn)(unsigned int lo, unsigned int hi, void *arg),
		      void *arg)
{
	unsigned long n = 0, lo = 0;
	bool any = false, range = false;
	for (;; s++) {
		if (*s >= '0' && *s <= '9') {
			n = n * 10 + (unsigned long)(*s - '0');
			if (n > 1UL << 20)
				return -1;
			any = true;
			continue;
		}
		if (*s == '-' && any && !range) {
			lo = n;
			range = true;
		} else if (*s == ',' || *s == '\n' || !*s) {
			if (any) {
				if (!range)
					lo = n;
				if (lo > n)
					return -1;
				fn((unsigned int)lo, (unsigned int)n, arg);
			} else if (range) {
				return -1;
			}
			range = false;
			if (!*s)
				return 0;
		} else {
			return -1;
		}
		n = 0;
		any = false;
	}
}

static void note_highest(unsigned int lo, unsigned int hi, void *arg)
{
	(void)lo;
	unsigned int *end = arg;
	if (hi + 1 > *end)
		*end = hi + 1;
}

/* Parse "0-3,8-11" (sysfs cpu list): highest CPU + 1, or 0 on error. */
static unsigned int parse_cpu_list(const char *s)
{
	unsigned int end = 0;
	return os_cpu_list_parse(s, note_highest, &end) ? 0 : end;
}

ssize_t os_read_small_file(const char *path, char *buf, size_t size)
{
	int cancel = os_cancel_off();
	ssize_t len = -1;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		len = read(fd, buf, size - 1);
		close(fd);
	}
	os_cancel_restore(cancel);
	buf[len > 0 ? len : 0] = 0;
	return len;
}

static unsigned int possible_cpus;

void os_set_possible_cpus(unsigned int n)
{
	WRITE_ONCE(possible_cpus, n < SLUB_MAX_CPUS ? n : SLUB_MAX_CPUS);
}

unsigned int os_possible_cpus(void)
{
	unsigned int n = READ_ONCE(possible_cpus);
	if (n)
		return n;
	char buf[256];
	if (os_read_small_file("/sys/devices/system/cpu/possible", buf, sizeof(buf)) > 0)
		n = parse_cpu_list(buf);
	if (!n) {
		long c = get_nprocs_conf();
		n = c > 0 ? (unsigned int)c : 1;
	}
	if (n > SLUB_MAX_CPUS)
		n = SLUB_MAX_CPUS;
	WRITE_ONCE(possible_cpus, n);
	return n;
}

void os_cpu_set_add(struct os_cpu_set *set, unsigned int cpu)
{
	pthread_mutex_lock(&set->lock);
	__atomic_fetch_or(&set->bits[cpu / 64], 1UL << (cpu % 64), __ATOMIC_RELEASE);
	pthread_mutex_unlock(&set->lock);
}

unsigned int os_cpu_next(const struct os_cpu_set *set, unsigned int cpu, unsigned int end)
{
	while (cpu < end) {
		unsigned long word = __atomic_load_n(&set->bits[cpu / 64], __ATOMIC_ACQUIRE);
		word &= ~0UL << (cpu % 64);
		if (word) {
			cpu = cpu / 64 * 64 + (unsigned int)__builtin_ctzl(word);
			return cpu < end ? cpu : end;
		}
		cpu = (cpu / 64 + 1) * 64;
	}
	return end;
}

unsigned int os_current_cpu_slow(void)
{
	int cpu = sched_getcpu();
	if (cpu < 0)
		return 0;	/* any CPU slot is correct, just less local */
	return (unsigned int)cpu % SLUB_MAX_CPUS;
}

uint64_t os_clock_tick_ms(void)
{
	struct timespec res;
	if (clock_getres(CLOCK_MONOTONIC_COARSE, &res))
		return 10;	/* HZ=100, the coarsest there is */
	uint64_t ms = (uint64_t)res.tv_sec * 1000 + ((uint64_t)res.tv_nsec + 999999) / 1000000;
	return ms ? ms : 1;
}

/*
 * glibc read the CPU's features at start-up; ask it rather than execute
 * CPUID, which a hypervisor traps: 14 us a time on our CI machines, and
 * __get_cpuid runs it twice, in every process that mallocs once.
 */
bool os_has_cmpxchg16b(void)
{
#if defined(__x86_64__) && defined(CPU_FEATURE_ACTIVE)
	return CPU_FEATURE_ACTIVE(CMPXCHG16B);
#elif defined(__x86_64__)
	unsigned int eax, ebx, ecx, edx;
	if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx))
		return false;
	return ecx & bit_CMPXCHG16B;
#else
	return true;	/* arm64: casp or ldxp/stxp */
#endif
}

#define MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ (1 << 7)
#define MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_RSEQ (1 << 8)
#define MEMBARRIER_CMD_FLAG_CPU (1 << 0)

/*
 * Registered is not enough: a seccomp policy may allow the registration and
 * refuse the fence itself, and then every retire of another CPU's slot
 * would race.  So one fence of this CPU proves it works, once, here.
 */
int os_membarrier_register_rseq(void)
{
	if (syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_RSEQ, 0, 0) ||
	    syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ, MEMBARRIER_CMD_FLAG_CPU,
		    (int)os_current_cpu()))
		return -errno;
	return 0;
}

/* @cpu -1: every CPU the process runs on.  False: it failed (reported). */
static bool membarrier_rseq(int cpu)
{
	bool registered = false;
	while (syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ,
		       cpu < 0 ? 0 : MEMBARRIER_CMD_FLAG_CPU, cpu < 0 ? 0 : cpu)) {
		if (errno == EINTR || errno == EAGAIN)
			continue;
		/*
		 * Not registered.  Linux keeps the registration across fork(),
		 * but the child of a fork that ran no handlers of ours (the
		 * malloc library registers them lazily) must not depend on
		 * it: register and retry.
		 */
		if (errno == EPERM && !registered) {
			registered = true;
			if (!os_membarrier_register_rseq())
				continue;
		}
		/* Registered at start-up; failing now leaves a race: say so. */
		if (cpu < 0)
			slub_report("BUG: membarrier(RSEQ, all CPUs) failed (errno %d)", errno);
		else
			slub_report("BUG: membarrier(RSEQ, cpu %d) failed (errno %d)", cpu, errno);
		return false;
	}
	return true;
}

void os_membarrier_rseq(unsigned int cpu)
{
	membarrier_rseq((int)cpu);
}

bool os_membarrier_rseq_all(void)
{
	return membarrier_rseq(-1);
}

#ifdef SLUB_FAKE_RSEQ
/*
 * Counting build (cmake -DSLUB_FAKE_RSEQ=ON): valgrind cannot register
 * rseq, so callgrind would only ever see the cmpxchg16b mode.  This area
 * says "CPU 0" forever and no kernel aborts a sequence in it: the rseq
 * fast paths run their real instructions, correct for one thread only.
 */
static __thread struct {
	uint32_t cpu_id_start, cpu_id;
	uint64_t rseq_cs;
	uint32_t flags;
} fake_rseq __attribute__((aligned(32), tls_model("initial-exec")));
#endif

void os_init(void)
{
#ifdef SLUB_FAKE_RSEQ
	os_rseq_offset = (ptrdiff_t)((uintptr_t)&fake_rseq - os_thread_pointer());
	(void)os_possible_cpus();
	return;
#endif
	/* The sequences write rseq_cs (offset 8): the original 20-byte ABI has it. */
	if (&__rseq_size && &__rseq_offset && __rseq_size >= 20)
		os_rseq_offset = __rseq_offset;
	(void)os_possible_cpus();
}
