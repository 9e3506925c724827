/* SPDX-License-Identifier: MIT */
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
 *
 * Unsupported: allocating or freeing in the child of vfork() (or of
 * clone(CLONE_VM) without CLONE_THREAD) while the parent has other threads.
 * Such a child runs on its parent thread's TLS, so it reads that thread's
 * rseq area, but the kernel registers no rseq for a CLONE_VM child: the
 * area keeps the parent's cpu_id, stale, and nothing aborts the child's
 * sections, which then race the parent's other threads on that CPU's
 * slots.  POSIX leaves anything but _exit() and the exec functions
 * undefined there.  Not detected: the fast paths have nothing to tell
 * such a child from its parent thread by short of a system call (getpid)
 * on every operation.
 */
#ifndef SLUB_PERCPU_RSEQ_H
#define SLUB_PERCPU_RSEQ_H

#include "base/compiler.h"
#include "base/percpu.h"

#if defined(__x86_64__) && !defined(SLUB_TSAN)
#define SLUB_HAVE_RSEQ_ASM 1

#define RSEQ_CS_DESCRIPTOR(start, post, abort)                                   \
	".pushsection __rseq_cs, \"aw\"\n\t"                                     \
	".balign 32\n\t"                                                         \
	"9:\n\t"                                                                 \
	".long 0x0, 0x0\n\t"                                                     \
	".quad " #start "f, (" #post "f - " #start "f), " #abort "f\n\t"         \
	".popsection\n\t"

/*
 * Every access to the rseq area goes through %fs with the area's offset
 * from the thread pointer in a register (@abi): struct rseq has cpu_id at
 * 4 and rseq_cs at 8.  Entering stores the descriptor's address there.
 */
#define RSEQ_ENTER(abi, tmp)                                                     \
	"0:\n\t"                                                                 \
	"leaq 9b(%%rip), %" tmp "\n\t"                                           \
	"movq %" tmp ", %%fs:8(%" abi ")\n\t"

#define RSEQ_ABORT_RESTART                                                       \
	".pushsection __rseq_failure, \"ax\"\n\t"                                \
	".byte 0x0f, 0xb9, 0x3d\n\t"                                             \
	".long 0x53053053\n\t"                                                   \
	"4:\n\t"                                                                 \
	"jmp 0b\n\t"                                                             \
	".popsection\n\t"

/* The slot of this CPU: slots + (cpu << PCPU_UNIT_SHIFT), or jump to @out if cpu_id is not usable. */
#define RSEQ_SLOT(abi, slots, nr, c, out)                                        \
	"movl %%fs:4(%" abi "), %k" c "\n\t"                                     \
	"cmpq %" nr ", %" c "\n\t"                                               \
	"jae %l[" out "]\n\t"                                                    \
	"shlq $" PCPU_STR(PCPU_UNIT_SHIFT) ", %" c "\n\t"                          \
	"addq %" slots ", %" c "\n\t"

/*
 * Pop the first object of this CPU's freelist, or NULL: slot marked,
 * freelist empty, no usable CPU number, or a free pointer that does not
 * decode to a plausible pointer (slab.h, "free pointers"; the slow path
 * then finds it again, under the slot's lock, and reports it).  The word
 * is decoded with *@key and checked against *@tag before the commit, so a
 * corrupt one is never followed; after the commit the object is ours and
 * its word is zeroed: an allocated object does not look free.  Not an asm
 * goto: compilers disagree on what asm goto outputs hold on the jump
 * edges, so every way out leaves the answer in @obj.
 */
static __attribute__((always_inline)) inline void *
rseq_freelist_pop(intptr_t abi, void *slots, unsigned long nr, unsigned long fp_offset,
		  const uintptr_t *key, const uintptr_t *tag)
{
	void *obj;
	unsigned long c, next;
	__asm__ __volatile__(
		RSEQ_CS_DESCRIPTOR(1, 2, 4)
		RSEQ_ENTER("[abi]", "[c]")
		"1:\n\t"
		"xorl %k[obj], %k[obj]\n\t"
		"movl %%fs:4(%[abi]), %k[c]\n\t"
		"cmpq %[nr], %[c]\n\t"
		"jae 3f\n\t"
		"shlq $" PCPU_STR(PCPU_UNIT_SHIFT) ", %[c]\n\t"
		"addq %[slots], %[c]\n\t"
		"testb $1, 8(%[c])\n\t"
		"jnz 3f\n\t"
		"movq (%[c]), %[obj]\n\t"
		"testq %[obj], %[obj]\n\t"
		"jz 3f\n\t"
		"movq (%[obj], %[off]), %[next]\n\t"
		"xorq %[key], %[next]\n\t"
		"testq %[next], %[tag]\n\t"
		"jnz 5f\n\t"
		"movq %[next], (%[c])\n\t"		/* commit */
		"2:\n\t"
		"movq $0, (%[obj], %[off])\n\t"	/* allocated: the word no longer says free */
		"3:\n\t"
		RSEQ_ABORT_RESTART
		".pushsection __rseq_failure, \"ax\"\n\t"
		"5:\n\t"
		"xorl %k[obj], %k[obj]\n\t"
		"jmp 3b\n\t"
		".popsection\n\t"
		: [obj] "=&r"(obj), [c] "=&r"(c), [next] "=&r"(next)
		: [abi] "r"(abi), [slots] "r"(slots), [nr] "r"(nr), [off] "r"(fp_offset),
		  [key] "m"(*key), [tag] "m"(*tag)
		: "memory", "cc");
	return obj;
}

enum rseq_push_result { RSEQ_PUSHED, RSEQ_NOT_CPU_SLAB, RSEQ_LOOKS_FREE };

/*
 * A push's double-free compare: @obj's word already has the key's top 16
 * bits (see below), in scratch register @t.  Left out by the unsafe
 * measurement build SLUB_UNCHECKED_FREE (slab.h).
 */
#ifdef SLUB_UNCHECKED_FREE
#define RSEQ_PUSH_LOOKS_FREE(t) ""
#else
#define RSEQ_PUSH_LOOKS_FREE(t)                                                  \
	"movzwl 6(%[obj], %[off]), %k[" t "]\n\t"                              \
	"cmpw %[keytop], %w[" t "]\n\t"                                        \
	"je %l[looks_free]\n\t"
#endif

/*
 * Push @obj on this CPU's freelist if @slab is the CPU's slab, its free
 * pointer encoded with *@key.  If @obj's word already has the key's top
 * 16 bits, which every encoded pointer has (it is below 2^47), @obj is
 * likely free already (a double free, of the freelist head or deeper):
 * RSEQ_LOOKS_FREE, for the caller to confirm.  One 16-bit compare, where
 * decoding and testing the 17 bits would take three instructions.  The outputs of this asm goto are scratch registers only, never
 * read; "volatile" is spelled out because GCC 12 deleted an asm goto whose
 * outputs were unused.
 */
static __attribute__((always_inline)) inline enum rseq_push_result
rseq_freelist_push(intptr_t abi, void *slots, unsigned long nr, unsigned long fp_offset,
		   const uintptr_t *key, void *slab, void *obj)
{
	unsigned long c, head;
	__asm__ __volatile__ goto(
		RSEQ_CS_DESCRIPTOR(1, 2, 4)
		RSEQ_ENTER("[abi]", "[c]")
		"1:\n\t"
		RSEQ_SLOT("[abi]", "[slots]", "[nr]", "[c]", "other")
		"testb $1, 8(%[c])\n\t"
		"jnz %l[other]\n\t"
		"cmpq %[slab], 16(%[c])\n\t"
		"jne %l[other]\n\t"
		RSEQ_PUSH_LOOKS_FREE("head")
		"movq (%[c]), %[head]\n\t"
		"xorq %[key], %[head]\n\t"
		"movq %[head], (%[obj], %[off])\n\t"
		"movq %[obj], (%[c])\n\t"		/* commit */
		"2:\n\t"
		RSEQ_ABORT_RESTART
		: [c] "=&r"(c), [head] "=&r"(head)
		: [abi] "r"(abi), [slots] "r"(slots), [nr] "r"(nr), [off] "r"(fp_offset),
		  [key] "m"(*key), [keytop] "m"(((const uint16_t *)key)[3]),
		  [slab] "r"(slab), [obj] "r"(obj)
		: "memory", "cc"
		: other, looks_free);
	return RSEQ_PUSHED;
other:
	return RSEQ_NOT_CPU_SLAB;
looks_free:
	return RSEQ_LOOKS_FREE;
}

/*
 * Mark the slot of @cpu (set the tid's low bit) if this thread runs on
 * @cpu, as one critical section: any section of another thread on @cpu
 * that began before was preempted by us and will restart, and sees the
 * mark.  Returns 0 if we are not on @cpu.
 */
static inline int rseq_slot_mark(intptr_t abi, unsigned long *tid, unsigned int cpu)
{
	unsigned long tmp;
	__asm__ __volatile__ goto(
		RSEQ_CS_DESCRIPTOR(1, 2, 4)
		RSEQ_ENTER("[abi]", "[tmp]")
		"1:\n\t"
		"cmpl %%fs:4(%[abi]), %[cpu]\n\t"
		"jne %l[elsewhere]\n\t"
		"movq (%[tid]), %[tmp]\n\t"
		"orq $1, %[tmp]\n\t"
		"movq %[tmp], (%[tid])\n\t"		/* commit */
		"2:\n\t"
		RSEQ_ABORT_RESTART
		: [tmp] "=&r"(tmp)
		: [abi] "r"(abi), [tid] "r"(tid), [cpu] "r"(cpu)
		: "memory", "cc"
		: elsewhere);
	return 1;
elsewhere:
	return 0;
}

#else
#define SLUB_HAVE_RSEQ_ASM 0
#endif

#endif
