// SPDX-License-Identifier: MIT
/*
 * kfence.c - KFENCE (kfence.h): the pool, the sampled allocation and free,
 * the slack check, and the SIGSEGV handler that turns a fault in the pool
 * into a report in the kernel's KFENCE format.
 *
 * Pool layout: 2 * N + 1 pages.  Even pages are guards (never accessible);
 * object i owns page 2i + 1, accessible while it is allocated, made
 * inaccessible again when it is freed, so a use after free faults until
 * the object is reused.  Objects sit at their page's end and start in
 * turn: one catches an overflow, the next an underflow, at the access.
 * The rest of the page (the slack) holds a pattern, checked at the free.
 *
 * Free objects are reused oldest first (a FIFO), so a freed page stays
 * inaccessible as long as the pool allows.  A fault's page is opened for
 * the access to go through once, and closed again at the next allocation
 * or free from the pool (the kernel's let-through).  kfence_lock guards
 * the free list and the objects' states; the fault handler takes it too,
 * so nothing that may fault in the pool (a constructor, the program) runs
 * under it.
 */
#define _GNU_SOURCE
#include "slab/debug/kfence.h"
#include "slab/debug/slab_debug.h"
#include "slab/core/slab_harden.h"
#include "slab/rcu/rcu.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "base/options.h"
#include "base/report.h"
#include "base/start.h"
#include "stack/stackdepot.h"
#include "stack/stacktrace.h"
#include "stack/unwind.h"

/*
 * RCU_FREEING: an object of a SLAB_TYPESAFE_BY_RCU cache, freed, still open
 * to the readers that may hold it until a grace period ends; only then is
 * its page closed and the object free for reuse (as the kernel's KFENCE):
 * before, another cache's object there would break the cache's promise
 * that a reader finds an object of its type.  A second free is caught.
 */
enum kfence_object_state {
	KFENCE_OBJECT_UNUSED,
	KFENCE_OBJECT_ALLOCATED,
	KFENCE_OBJECT_RCU_FREEING,
	KFENCE_OBJECT_FREED,
};

/* One pool object: where it is and who used it (guarded by kfence_lock). */
struct kfence_metadata {
	struct list_head list;		/* the free list, oldest first */
	enum kfence_object_state state;
	uintptr_t addr;			/* the object's start in its page */
	size_t size;
	struct kmem_cache *cache;	/* NULL once the cache is gone */
	char cache_name[SLUB_NAME_MAX];	/* for reports after that */
	struct track alloc_track, free_track;
	struct rcu_head rcu;		/* RCU_FREEING: the grace period's callback */
};

uintptr_t kfence_pool_start, kfence_pool_size;
static struct kfence_metadata *kfence_metadata;
static unsigned int kfence_nr;
static struct list_head kfence_freelist = { &kfence_freelist, &kfence_freelist };
static pthread_mutex_t kfence_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long kfence_allocs;	/* sampling count */
static uint64_t kfence_next_ms;		/* sample_interval's next allocation */
bool kfence_timed;
static bool kfence_gate;		/* open: the next allocation is sampled */
/* Opening and closing, so the divert always ends as the gate is (a leaf lock). */
static pthread_mutex_t kfence_gate_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned int kfence_placed;	/* right or left, in turn */

/* Pages a fault opened, closed again at the next pool event (under kfence_lock). */
#define KFENCE_OPEN_MAX 16
static uintptr_t kfence_open[KFENCE_OPEN_MAX];
static unsigned int kfence_nr_open;

static struct sigaction kfence_old_segv;

/* ---- the pool's geometry -------------------------------------------------------------------- */

static uintptr_t object_page(unsigned int i)
{
	return kfence_pool_start + (2 * (uintptr_t)i + 1) * PAGE_SIZE;
}

/* The object whose page holds @addr, or NULL for a guard page. */
static struct kfence_metadata *addr_to_metadata(uintptr_t addr)
{
	uintptr_t page = (addr - kfence_pool_start) / PAGE_SIZE;
	if (!(page & 1))
		return NULL;
	return &kfence_metadata[page / 2];
}

static unsigned int meta_index(const struct kfence_metadata *m)
{
	return (unsigned int)(m - kfence_metadata);
}

static void protect(uintptr_t page, bool access)
{
	slub_os.mprotect((void *)page, PAGE_SIZE, access ? PROT_READ | PROT_WRITE : PROT_NONE);
}

/* The slack's pattern: a byte that depends on its address, so a shifted copy shows. */
static uint8_t canary(uintptr_t addr)
{
	return (uint8_t)(0x5c ^ ((addr & 0xf) * 0x11));
}

/* Close what faults opened: guards always, object pages as their state says. */
static void close_opened(void)
{
	for (unsigned int i = 0; i < kfence_nr_open; i++) {
		struct kfence_metadata *m = addr_to_metadata(kfence_open[i]);
		protect(kfence_open[i], m && (m->state == KFENCE_OBJECT_ALLOCATED ||
					      m->state == KFENCE_OBJECT_RCU_FREEING));
	}
	kfence_nr_open = 0;
}

/* ---- allocation --------------------------------------------------------------------------------- */

bool kfence_every_allocation(void)
{
	return kfence_enabled() && slub_opt(kfence_sample_every);
}

void kfence_gate_setup(bool hooked)
{
	kfence_timed = kfence_enabled() && !hooked && slub_opt(kfence_sample_interval);
}

/* Is the interval over?  Then it starts again: one caller in a race wins it. */
static bool interval_over(uint64_t interval)
{
	uint64_t now = os_now_ms(), next = __atomic_load_n(&kfence_next_ms, __ATOMIC_RELAXED);
	return now >= next &&
	       __atomic_compare_exchange_n(&kfence_next_ms, &next, now + interval, false,
					   __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

void kfence_tick_slow(void)
{
	if (__atomic_load_n(&kfence_gate, __ATOMIC_RELAXED) ||
	    !interval_over((uint64_t)slub_opt(kfence_sample_interval)))
		return;
	pthread_mutex_lock(&kfence_gate_lock);
	__atomic_store_n(&kfence_gate, true, __ATOMIC_RELAXED);
	slab_alloc_divert(true);
	pthread_mutex_unlock(&kfence_gate_lock);
}

/* The gate is open: close it, and this allocation is the sample (one thread's). */
static bool through_gate(void)
{
	bool sampled = false;
	if (!__atomic_load_n(&kfence_gate, __ATOMIC_RELAXED))
		return false;
	pthread_mutex_lock(&kfence_gate_lock);
	if (__atomic_load_n(&kfence_gate, __ATOMIC_RELAXED)) {
		__atomic_store_n(&kfence_gate, false, __ATOMIC_RELAXED);
		slab_alloc_divert(false);
		sampled = true;
	}
	pthread_mutex_unlock(&kfence_gate_lock);
	return sampled;
}

/* Is this allocation sampled?  Outside the lock: a race only moves the sample. */
static bool should_sample(void)
{
	long every = slub_opt(kfence_sample_every);
	if (every &&
	    __atomic_add_fetch(&kfence_allocs, 1, __ATOMIC_RELAXED) % (unsigned long)every == 0)
		return true;
	if (kfence_timed)
		return through_gate();
	long interval = slub_opt(kfence_sample_interval);
	if (!interval)
		return false;
	return interval_over((uint64_t)interval);
}

void *kfence_alloc(struct kmem_cache *s, gfp_t gfp)
{
	size_t size = s->object_size;
	/* Not the allocator's own caches (refcount -1: cache descriptors, sheaves). */
	if (s->refcount < 0 || !size || size > PAGE_SIZE || s->align > PAGE_SIZE || !should_sample())
		return NULL;
	struct track_stack ts;
	track_save_stack(&ts, (uintptr_t)__builtin_return_address(0));	/* before the lock */
	pthread_mutex_lock(&kfence_lock);
	close_opened();
	if (list_empty(&kfence_freelist)) {
		pthread_mutex_unlock(&kfence_lock);
		return NULL;
	}
	struct kfence_metadata *m = list_first_entry(&kfence_freelist, struct kfence_metadata, list);
	list_del(&m->list);
	uintptr_t page = object_page(meta_index(m));
	protect(page, true);
	uintptr_t addr = page;
	if (kfence_placed++ & 1) {	/* at the page's end, as far as the alignment lets it */
		unsigned int align = s->align ? s->align : ARCH_SLAB_MINALIGN;
		addr = (page + PAGE_SIZE - size) & ~((uintptr_t)align - 1);
	}
	for (uintptr_t b = page; b < addr; b++)
		*(uint8_t *)b = canary(b);
	for (uintptr_t b = addr + size; b < page + PAGE_SIZE; b++)
		*(uint8_t *)b = canary(b);
	m->addr = addr;
	m->size = size;
	m->cache = s;
	memcpy(m->cache_name, s->name, sizeof(m->cache_name));	/* both SLUB_NAME_MAX, NUL-ended */
	track_fill(&m->alloc_track, &ts);
	memset(&m->free_track, 0, sizeof(m->free_track));
	m->state = KFENCE_OBJECT_ALLOCATED;
	pthread_mutex_unlock(&kfence_lock);
	/* Outside the lock: a constructor is the program's code, and may fault in the pool. */
	if (s->ctor)
		s->ctor((void *)addr);
	else if (slab_want_init_on_alloc(gfp, s))
		memset((void *)addr, 0, size);
	return (void *)addr;
}

/* ---- reports -------------------------------------------------------------------------------- */

/* A snapshot of an object for a report made outside the lock. */
struct kfence_view {
	unsigned int index;
	struct kfence_metadata m;
};

static void print_track(const char *what, const struct track *t)
{
	uint64_t now = os_now_ms();
	slub_report_line("%s by task %d (tid %d) on cpu %d %llu.%03llus ago:", what, t->pid, t->tid,
			 t->cpu, (unsigned long long)(now - t->when) / 1000,
			 (unsigned long long)(now - t->when) % 1000);
	const uintptr_t *entries;
	unsigned int nr = stack_depot_fetch(t->handle, &entries);
	if (nr)
		stack_trace_print(entries, nr, " ");
	else if (t->addr > 1)
		stack_trace_print(&t->addr, 1, " ");
	slub_report_line("%s", "");
}

static void print_object(const struct kfence_view *v)
{
	const struct kfence_metadata *m = &v->m;
	slub_report_line("kfence-#%u: %#lx-%#lx, size=%zu, cache=%s", v->index,
			 (unsigned long)m->addr, (unsigned long)(m->addr + m->size - 1), m->size,
			 m->cache_name);
	slub_report_line("%s", "");
	print_track("allocated", &m->alloc_track);
	if (m->state == KFENCE_OBJECT_FREED || m->state == KFENCE_OBJECT_RCU_FREEING)
		print_track("freed", &m->free_track);
}

static void report_head(const char *kind, const uintptr_t *stack, unsigned int nr)
{
	char sym[320];
	slub_report_line("==================================================================");
	if (!nr) {		/* found at exit: no access to name */
		slub_report_bug("BUG: KFENCE: %s", kind);
		slub_report_line("%s", "");
		return;
	}
	stack_trace_symbol(stack[0], sym, sizeof(sym));
	slub_report_bug("BUG: KFENCE: %s in %s", kind, sym);
	slub_report_line("%s", "");
}

static void report_tail(const uintptr_t *stack, unsigned int nr)
{
	if (nr)
		stack_trace_print(stack, nr, " ");
	slub_report_line("%s", "");
}

/* This thread's stack, our own frames left out. */
static unsigned int caller_stack(uintptr_t *frames, unsigned int size)
{
	struct track_stack ts;
	track_save_stack(&ts, 0);
	const uintptr_t *entries;
	unsigned int nr = stack_depot_fetch(ts.handle, &entries);
	if (nr > size)
		nr = size;
	if (nr)
		memcpy(frames, entries, nr * sizeof(*frames));
	else if (ts.addr > 1)
		frames[nr++] = ts.addr;
	return nr;
}

static void report_invalid_free(const void *p, const struct kfence_view *v)
{
	uintptr_t stack[STACK_TRACE_FRAMES];
	unsigned int nr = caller_stack(stack, STACK_TRACE_FRAMES);
	slub_report_begin();
	report_head("invalid free", stack, nr);
	if (v)
		slub_report_line("Invalid free of %p (in kfence-#%u):", p, v->index);
	else
		slub_report_line("Invalid free of %p (a guard page of the KFENCE pool):", p);
	report_tail(stack, nr);
	if (v)
		print_object(v);
	slub_report_line("==================================================================");
	slub_report_end();
}

/* The slack's first bad byte and up to 16 from it, as the kernel shows them ('.': intact). */
static void format_damage(char *bytes, size_t size, uintptr_t first, uintptr_t end)
{
	size_t len = 0;
	bytes[0] = 0;
	for (uintptr_t b = first; b < end && b < first + 16 && len < size; b++) {
		uint8_t c = *(const uint8_t *)b;
		len += (size_t)snprintf(bytes + len, size - len, c == canary(b) ? " ." : " 0x%02x", c);
	}
}

/* At a free, with its stack; at exit (@at_exit), of an object never freed, without. */
static void report_corruption(const struct kfence_view *v, uintptr_t first, const char *bytes,
			      bool at_exit)
{
	uintptr_t stack[STACK_TRACE_FRAMES];
	unsigned int nr = at_exit ? 0 : caller_stack(stack, STACK_TRACE_FRAMES);
	slub_report_begin();
	report_head(at_exit ? "memory corruption of an object never freed, found at exit" :
		    "memory corruption", stack, nr);
	slub_report_line("Corrupted memory at %#lx [%s ] (in kfence-#%u):", (unsigned long)first,
			 bytes, v->index);
	report_tail(stack, nr);
	print_object(v);
	slub_report_line("==================================================================");
	slub_report_end();
}

/* The first slack byte that lost its pattern in [@from, @to), or 0. */
static uintptr_t slack_damage(uintptr_t from, uintptr_t to)
{
	for (uintptr_t b = from; b < to; b++)
		if (*(const uint8_t *)b != canary(b))
			return b;
	return 0;
}

/* An allocated object's first damaged slack byte (0: none), and its bytes into @bytes. */
static uintptr_t object_damage(const struct kfence_metadata *m, char *bytes, size_t size)
{
	uintptr_t a = m->addr, page = a & ~(uintptr_t)(PAGE_SIZE - 1);
	uintptr_t bad = slack_damage(page, a), end = a;
	if (!bad) {
		bad = slack_damage(a + m->size, page + PAGE_SIZE);
		end = page + PAGE_SIZE;
	}
	if (bad)
		format_damage(bytes, size, bad, end);
	return bad;
}

/* ---- free ---------------------------------------------------------------------------------- */

/* After the grace period: no reader holds the object now; close it and free it. */
static void rcu_guarded_free(struct rcu_head *head)
{
	struct kfence_metadata *m = container_of(head, struct kfence_metadata, rcu);
	rcu_tsan_callback(head);
	pthread_mutex_lock(&kfence_lock);
	close_opened();
	m->state = KFENCE_OBJECT_FREED;
	protect(object_page(meta_index(m)), false);
	list_add_tail(&m->list, &kfence_freelist);
	pthread_mutex_unlock(&kfence_lock);
}

void kfence_free(const void *p, struct kmem_cache *s, const char *caller)
{
	(void)caller;
	uintptr_t a = (uintptr_t)p;
	struct track_stack ts;
	track_save_stack(&ts, (uintptr_t)__builtin_return_address(0));
	pthread_mutex_lock(&kfence_lock);
	close_opened();
	struct kfence_metadata *m = addr_to_metadata(a);
	struct kfence_view v;
	if (!m || m->state != KFENCE_OBJECT_ALLOCATED || m->addr != a) {
		if (m)
			v = (struct kfence_view){ meta_index(m), *m };
		pthread_mutex_unlock(&kfence_lock);
		report_invalid_free(p, m ? &v : NULL);
		return;
	}
	if (s && m->cache && s != m->cache)
		slub_report("Wrong slab cache. %s but object is from %s", s->name, m->cache_name);
	char bytes[16 * 5 + 1];
	uintptr_t bad = object_damage(m, bytes, sizeof(bytes));	/* before the page closes */
	uintptr_t page = a & ~(uintptr_t)(PAGE_SIZE - 1);
	track_fill(&m->free_track, &ts);
	/* A typesafe cache loaded RCU when it was made: no load here, under no lock of ours. */
	bool wait = m->cache && (m->cache->flags & SLAB_TYPESAFE_BY_RCU) && slab_rcu_loaded();
	m->state = wait ? KFENCE_OBJECT_RCU_FREEING : KFENCE_OBJECT_FREED;
	v = (struct kfence_view){ meta_index(m), *m };
	if (!wait) {
		protect(page, false);
		list_add_tail(&m->list, &kfence_freelist);
	}
	pthread_mutex_unlock(&kfence_lock);
	if (wait)
		slab_call_rcu(&m->rcu, rcu_guarded_free);
	if (bad)
		report_corruption(&v, bad, bytes, false);
}

unsigned int kfence_validate_live(void)
{
	unsigned int live = 0;
	for (unsigned int i = 0; i < kfence_nr; i++) {
		char bytes[16 * 5 + 1];
		struct kfence_view v;
		pthread_mutex_lock(&kfence_lock);
		struct kfence_metadata *m = &kfence_metadata[i];
		bool allocated = m->state == KFENCE_OBJECT_ALLOCATED;
		uintptr_t bad = allocated ? object_damage(m, bytes, sizeof(bytes)) : 0;
		v = (struct kfence_view){ i, *m };
		pthread_mutex_unlock(&kfence_lock);
		live += allocated;
		if (bad)
			report_corruption(&v, bad, bytes, true);
	}
	return live;
}

size_t kfence_ksize(const void *p, const char *caller)
{
	struct kfence_metadata *m = addr_to_metadata((uintptr_t)p);
	size_t size = 0;
	pthread_mutex_lock(&kfence_lock);
	if (m && m->state == KFENCE_OBJECT_ALLOCATED && m->addr == (uintptr_t)p)
		size = m->size;
	pthread_mutex_unlock(&kfence_lock);
	if (!size)
		slub_report("%s: invalid pointer %p (in the KFENCE pool, not an allocated object's "
			    "start); ignored", caller, p);
	return size;
}

void kfence_shutdown_cache(struct kmem_cache *s)
{
	if (!kfence_enabled())
		return;
	unsigned int left = 0;
	pthread_mutex_lock(&kfence_lock);
	for (unsigned int i = 0; i < kfence_nr; i++) {
		struct kfence_metadata *m = &kfence_metadata[i];
		if (m->cache != s)
			continue;
		left += m->state == KFENCE_OBJECT_ALLOCATED;
		m->cache = NULL;
	}
	pthread_mutex_unlock(&kfence_lock);
	if (left)
		slub_report("Objects remaining in %s on kmem_cache_destroy(): %u in the KFENCE pool",
			    s->name, left);
}

/* ---- the fault handler ------------------------------------------------------------------------ */

/* The object a fault at @addr concerns, and what the access was. */
static struct kfence_metadata *fault_object(uintptr_t addr, bool *oob)
{
	struct kfence_metadata *m = addr_to_metadata(addr);
	*oob = !m;
	if (m)
		return m->state == KFENCE_OBJECT_UNUSED ? NULL : m;
	/* A guard page: the nearer of its neighbours, an allocated one first. */
	uintptr_t page = (addr - kfence_pool_start) / PAGE_SIZE;
	struct kfence_metadata *left = page ? &kfence_metadata[page / 2 - 1] : NULL;
	struct kfence_metadata *right = page / 2 < kfence_nr ? &kfence_metadata[page / 2] : NULL;
	if (left && left->state == KFENCE_OBJECT_UNUSED)
		left = NULL;
	if (right && right->state == KFENCE_OBJECT_UNUSED)
		right = NULL;
	if (left && right && left->state != right->state)
		return left->state == KFENCE_OBJECT_ALLOCATED ? left : right;
	if (left && right)
		return addr - (left->addr + left->size) <= right->addr - addr ? left : right;
	return left ? left : right;
}

/* The interrupted context's stack: its pc, then its callers. */
static unsigned int context_stack(const ucontext_t *uc, uintptr_t *frames, unsigned int size)
{
#if defined(__x86_64__)
	void *raw[STACK_TRACE_FRAMES];
	int n = unwind_context(raw, (int)size < STACK_TRACE_FRAMES ? (int)size : STACK_TRACE_FRAMES,
			       (uintptr_t)uc->uc_mcontext.gregs[REG_RIP],
			       (uintptr_t)uc->uc_mcontext.gregs[REG_RSP],
			       (uintptr_t)uc->uc_mcontext.gregs[REG_RBP]);
	if (n <= 0) {
		frames[0] = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
		return 1;
	}
	for (int i = 0; i < n; i++)
		frames[i] = (uintptr_t)raw[i];
	frames[0]--;	/* the walk took pc + 1 for a return address (unwind_context) */
	return (unsigned int)n;
#else
	(void)uc;
	(void)frames;
	(void)size;
	return 0;
#endif
}

static bool fault_is_write(const ucontext_t *uc)
{
#if defined(__x86_64__)
	return uc->uc_mcontext.gregs[REG_ERR] & 2;	/* the page fault's W bit */
#else
	(void)uc;
	return false;
#endif
}

static void report_fault(uintptr_t addr, const ucontext_t *uc)
{
	uintptr_t stack[STACK_TRACE_FRAMES];
	unsigned int nr = context_stack(uc, stack, STACK_TRACE_FRAMES);
	const char *rw = fault_is_write(uc) ? "write" : "read";
	bool oob;
	pthread_mutex_lock(&kfence_lock);
	struct kfence_metadata *m = fault_object(addr, &oob);
	struct kfence_view v = { 0 };
	if (m)
		v = (struct kfence_view){ meta_index(m), *m };
	/* Let this access through; the page closes at the next pool event. */
	uintptr_t page = addr & ~(uintptr_t)(PAGE_SIZE - 1);
	protect(page, true);
	if (kfence_nr_open == KFENCE_OPEN_MAX)
		close_opened();
	kfence_open[kfence_nr_open++] = page;
	pthread_mutex_unlock(&kfence_lock);

	char kind[64];
	slub_report_begin();
	if (m && oob) {
		snprintf(kind, sizeof(kind), "out-of-bounds %s", rw);
		report_head(kind, stack, nr);
		bool left = addr < v.m.addr;
		slub_report_line("Out-of-bounds %s at %#lx (%luB %s of kfence-#%u):", rw,
				 (unsigned long)addr,
				 (unsigned long)(left ? v.m.addr - addr : addr - (v.m.addr + v.m.size)),
				 left ? "left" : "right", v.index);
	} else if (m && m->state == KFENCE_OBJECT_FREED) {
		snprintf(kind, sizeof(kind), "use-after-free %s", rw);
		report_head(kind, stack, nr);
		slub_report_line("Use-after-free %s at %#lx (in kfence-#%u):", rw, (unsigned long)addr,
				 v.index);
	} else {
		snprintf(kind, sizeof(kind), "invalid %s", rw);
		report_head(kind, stack, nr);
		slub_report_line("Invalid %s at %#lx:", rw, (unsigned long)addr);
	}
	report_tail(stack, nr);
	if (m)
		print_object(&v);
	slub_report_line("==================================================================");
	slub_report_end();	/* slub_abort_on_error stops here */
}

/* Not ours: what the program asked for this signal before us. */
static void chain_segv(int sig, siginfo_t *si, void *ctx)
{
	const struct sigaction *old = &kfence_old_segv;
	if (old->sa_flags & SA_SIGINFO) {
		old->sa_sigaction(sig, si, ctx);
	} else if (old->sa_handler == SIG_DFL || old->sa_handler == SIG_IGN) {
		/* The fault comes back on return, and kills as it would have. */
		signal(SIGSEGV, SIG_DFL);
	} else {
		old->sa_handler(sig);
	}
}

static void kfence_segv(int sig, siginfo_t *si, void *ctx)
{
	int saved = errno;
	if (si->si_code > 0 && is_kfence_address(si->si_addr))
		report_fault((uintptr_t)si->si_addr, ctx);
	else
		chain_segv(sig, si, ctx);
	errno = saved;
}

/* ---- start-up ----------------------------------------------------------------------------------- */

static void kfence_init(void)
{
	if (!slub_opt(kfence_sample_every) && !slub_opt(kfence_sample_interval))
		return;
	unsigned int n = (unsigned int)slub_opt(kfence_num_objects);
	size_t pool = (2 * (size_t)n + 1) * PAGE_SIZE;
	void *p = slub_os.mmap(NULL, pool, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			       -1, 0);
	void *meta = os_map_sparse(n * sizeof(struct kfence_metadata));
	if (p == MAP_FAILED || !meta) {
		slub_warn("KFENCE: no memory for a pool of %u objects; off", n);
		if (p != MAP_FAILED)
			slub_os.munmap(p, pool);
		return;
	}
	kfence_metadata = meta;
	kfence_nr = n;
	for (unsigned int i = 0; i < n; i++)
		list_add_tail(&kfence_metadata[i].list, &kfence_freelist);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = kfence_segv;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSEGV, &sa, &kfence_old_segv)) {
		slub_warn("KFENCE: cannot install its SIGSEGV handler; off");
		return;
	}
	kfence_next_ms = os_now_ms() + (uint64_t)slub_opt(kfence_sample_interval);
	kfence_pool_start = (uintptr_t)p;
	__atomic_store_n(&kfence_pool_size, pool, __ATOMIC_RELEASE);
}

/* fork(): the child's only thread may find the lock held by one that is gone. */
static void kfence_fork_prepare(void)
{
	pthread_mutex_lock(&kfence_lock);
	pthread_mutex_lock(&kfence_gate_lock);
}

static void kfence_fork_parent(void)
{
	pthread_mutex_unlock(&kfence_gate_lock);
	pthread_mutex_unlock(&kfence_lock);
}

static void kfence_fork_child(void)
{
	pthread_mutex_init(&kfence_gate_lock, NULL);
	pthread_mutex_init(&kfence_lock, NULL);
}
slub_initcall(kfence_initcall, .init_level = INIT_SLAB, .init = kfence_init,
	      .fork_level = FORK_SLAB, .fork_prepare = kfence_fork_prepare,
	      .fork_parent = kfence_fork_parent, .fork_child = kfence_fork_child);
