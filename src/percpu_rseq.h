/*
 * percpu_rseq.h - restartable sequences for the per-CPU freelists (x86-64).
 *
 * A critical section reads this thread's CPU from glibc's rseq area,
 * checks the CPU's slot and commits with one plain store.  If the thread
 * is preempted, migrated or signalled before the commit, the kernel moves
 * it to the abort handler, which starts over.  So a pop or push is atomic
 * with respect to every other thread on that CPU without a locked
 * instruction; no other CPU touches the slot's freelist except a lock
 * holder who first marked the slot (odd tid) and made sure no section on
 * that CPU can still commit (see slot_retire() in slub.c).
 *
 * The descriptors live in section __rseq_cs; each abort handler is
 * preceded by the signature glibc registered (RSEQ_SIG, 0x53053053),
 * packed into a ud1 instruction so the bytes also disassemble cleanly.
 */
#ifndef SLUB_PERCPU_RSEQ_H
#define SLUB_PERCPU_RSEQ_H

#include "compiler.h"

#if defined(__x86_64__) && !defined(__SANITIZE_THREAD__)
#define SLUB_HAVE_RSEQ_ASM 1

#define RSEQ_CS_DESCRIPTOR(start, post, abort)                                   \
	".pushsection __rseq_cs, \"aw\"\n\t"                                     \
	".balign 32\n\t"                                                         \
	"9:\n\t"                                                                 \
	".long 0x0, 0x0\n\t"                                                     \
	".quad " #start "f, (" #post "f - " #start "f), " #abort "f\n\t"         \
	".popsection\n\t"

#define RSEQ_ENTER(abi, tmp)                                                     \
	"0:\n\t"                                                                 \
	"leaq 9b(%%rip), %" tmp "\n\t"                                           \
	"movq %" tmp ", 8(%" abi ")\n\t"

#define RSEQ_ABORT_RESTART                                                       \
	".pushsection __rseq_failure, \"ax\"\n\t"                                \
	".byte 0x0f, 0xb9, 0x3d\n\t"                                             \
	".long 0x53053053\n\t"                                                   \
	"4:\n\t"                                                                 \
	"jmp 0b\n\t"                                                             \
	".popsection\n\t"

/* The slot of this CPU: slots + cpu * 128, or out if cpu_id is not usable. */
#define RSEQ_SLOT(abi, slots, nr, c, out)                                        \
	"movl 4(%" abi "), %k" c "\n\t"                                          \
	"cmpq %" nr ", %" c "\n\t"                                               \
	"jae " out "\n\t"                                                        \
	"shlq $7, %" c "\n\t"                                                    \
	"addq %" slots ", %" c "\n\t"

/*
 * Pop the first object of this CPU's freelist.  Returns 1 and the object,
 * or 0: slot marked, freelist empty, or no usable CPU number.
 */
static __attribute__((always_inline)) inline int
rseq_freelist_pop(uintptr_t abi, void *slots, unsigned long nr, unsigned long fp_offset,
		  void **object)
{
	void *obj;
	unsigned long c, next;
	int ok;
	__asm__ __volatile__(
		RSEQ_CS_DESCRIPTOR(1, 2, 4)
		RSEQ_ENTER("[abi]", "[c]")
		"1:\n\t"
		RSEQ_SLOT("[abi]", "[slots]", "[nr]", "[c]", "5f")
		"testb $1, 8(%[c])\n\t"
		"jnz 5f\n\t"
		"movq (%[c]), %[obj]\n\t"
		"testq %[obj], %[obj]\n\t"
		"jz 5f\n\t"
		"movq (%[obj], %[off]), %[next]\n\t"
		"movq %[next], (%[c])\n\t"		/* commit */
		"2:\n\t"
		"movl $1, %[ok]\n\t"
		"jmp 6f\n\t"
		RSEQ_ABORT_RESTART
		"5:\n\t"
		"xorl %[ok], %[ok]\n\t"
		"6:\n\t"
		: [obj] "=&r"(obj), [c] "=&r"(c), [next] "=&r"(next), [ok] "=&r"(ok)
		: [abi] "r"(abi), [slots] "r"(slots), [nr] "r"(nr), [off] "r"(fp_offset)
		: "memory", "cc");
	*object = obj;
	return ok;
}

/*
 * Push @obj on this CPU's freelist if @slab is the CPU's slab.  Returns 1
 * when pushed, 0 for the slow path, 2 if @obj is already the first free
 * object (a double free).
 */
static inline int rseq_freelist_push(uintptr_t abi, void *slots, unsigned long nr,
				     unsigned long fp_offset, void *slab, void *obj)
{
	unsigned long c, head;
	int ret;
	__asm__ __volatile__(
		RSEQ_CS_DESCRIPTOR(1, 2, 4)
		RSEQ_ENTER("[abi]", "[c]")
		"1:\n\t"
		RSEQ_SLOT("[abi]", "[slots]", "[nr]", "[c]", "5f")
		"testb $1, 8(%[c])\n\t"
		"jnz 5f\n\t"
		"cmpq %[slab], 16(%[c])\n\t"
		"jne 5f\n\t"
		"movq (%[c]), %[head]\n\t"
		"cmpq %[head], %[obj]\n\t"
		"je 7f\n\t"
		"movq %[head], (%[obj], %[off])\n\t"
		"movq %[obj], (%[c])\n\t"		/* commit */
		"2:\n\t"
		"movl $1, %[ret]\n\t"
		"jmp 6f\n\t"
		RSEQ_ABORT_RESTART
		"7:\n\t"
		"movl $2, %[ret]\n\t"
		"jmp 6f\n\t"
		"5:\n\t"
		"xorl %[ret], %[ret]\n\t"
		"6:\n\t"
		: [c] "=&r"(c), [head] "=&r"(head), [ret] "=&r"(ret)
		: [abi] "r"(abi), [slots] "r"(slots), [nr] "r"(nr), [off] "r"(fp_offset),
		  [slab] "r"(slab), [obj] "r"(obj)
		: "memory", "cc");
	return ret;
}

/*
 * Mark the slot of @cpu (set the tid's low bit) if this thread runs on
 * @cpu, as one critical section: any section of another thread on @cpu
 * that began before was preempted by us and will restart, and sees the
 * mark.  Returns 0 if we are not on @cpu.
 */
static inline int rseq_slot_mark(uintptr_t abi, unsigned long *tid, unsigned int cpu)
{
	unsigned long tmp;
	int ok;
	__asm__ __volatile__(
		RSEQ_CS_DESCRIPTOR(1, 2, 4)
		RSEQ_ENTER("[abi]", "[tmp]")
		"1:\n\t"
		"cmpl 4(%[abi]), %[cpu]\n\t"
		"jne 5f\n\t"
		"movq (%[tid]), %[tmp]\n\t"
		"orq $1, %[tmp]\n\t"
		"movq %[tmp], (%[tid])\n\t"		/* commit */
		"2:\n\t"
		"movl $1, %[ok]\n\t"
		"jmp 6f\n\t"
		RSEQ_ABORT_RESTART
		"5:\n\t"
		"xorl %[ok], %[ok]\n\t"
		"6:\n\t"
		: [tmp] "=&r"(tmp), [ok] "=&r"(ok)
		: [abi] "r"(abi), [tid] "r"(tid), [cpu] "r"(cpu)
		: "memory", "cc");
	return ok;
}

#else
#define SLUB_HAVE_RSEQ_ASM 0
#endif

#endif
