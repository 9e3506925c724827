/* SPDX-License-Identifier: MIT */
/*
 * sheaf_rseq.h - restartable sequences for the main sheaves (x86-64), in the
 * manner of percpu_rseq.h, whose descriptor, entry and abort macros they use.
 *
 * A pop or a push reads this thread's CPU, finds its slot, and commits with
 * the store of main's new count, as tcmalloc's per-CPU caches do: a
 * preemption, migration or signal before that store restarts the sequence.
 * The slot's count and room are one word (sheaf.h); room 0 (an untouched
 * slot, or one a lock holder retired) turns both away, so the sequences
 * test nothing else.  The pop's test is count - 1 < room as unsigned: an
 * empty sheaf and a retired slot fail the one compare.
 */
#ifndef SLUB_SHEAF_RSEQ_H
#define SLUB_SHEAF_RSEQ_H

#include "slab/core/percpu_rseq.h"

/* Offsets the sequences use: in the slot (slab.h asserts them) and in a sheaf (sheaf.h). */
#define SHEAF_SLOT_SIZE 80
#define SHEAF_SLOT_ROOM 84
#define SHEAF_SLOT_MAIN 88
#define SHEAF_OBJECTS 24
/* The count a remote retire leaves: no sequence can store it (slub.c's sheaf_retire). */
#define SHEAF_SIZE_RETIRED 0x80000000u

#if SLUB_HAVE_RSEQ_ASM
#define SHEAF_STR(x) PCPU_STR(x)

/*
 * The slot of this CPU into %[c], or jump to @out (no usable CPU number, or
 * @nr 0: a cache without sheaves).  @nr is 32 bits and may be in memory:
 * the sequences leave the compiler registers enough not to save any.
 */
#define SHEAF_SLOT(out)                                                          \
	"movl %%fs:4(%[abi]), %k[c]\n\t"                                          \
	"cmpl %[nr], %k[c]\n\t"                                                   \
	"jae " out "\n\t"                                                         \
	"shlq $" PCPU_STR(PCPU_UNIT_SHIFT) ", %[c]\n\t"                            \
	"addq %[slots], %[c]\n\t"

/*
 * The last object of this CPU's main sheaf, or NULL: empty, no room (no
 * sheaf, retired), or no usable CPU number.  After the commit the object
 * is ours and the word its free pointer would use is zeroed: an allocated
 * object does not look free (slab.h, "free pointers").
 */
static __attribute__((always_inline)) inline void *
rseq_sheaf_pop(intptr_t abi, void *slots, unsigned int nr, unsigned long fp_offset)
{
	void *obj;
	unsigned long c, n;
	__asm__ __volatile__(
		RSEQ_CS_DESCRIPTOR(1, 2, 4)
		RSEQ_ENTER("[abi]", "[c]")
		"1:\n\t"
		"xorl %k[obj], %k[obj]\n\t"
		SHEAF_SLOT("3f")
		"movl " SHEAF_STR(SHEAF_SLOT_SIZE) "(%[c]), %k[n]\n\t"
		"subl $1, %k[n]\n\t"
		"cmpl " SHEAF_STR(SHEAF_SLOT_ROOM) "(%[c]), %k[n]\n\t"
		"jae 3f\n\t"
		"movq " SHEAF_STR(SHEAF_SLOT_MAIN) "(%[c]), %[obj]\n\t"	/* main, then the object */
		"movq " SHEAF_STR(SHEAF_OBJECTS) "(%[obj], %[n], 8), %[obj]\n\t"
		"movl %k[n], " SHEAF_STR(SHEAF_SLOT_SIZE) "(%[c])\n\t"	/* commit */
		"2:\n\t"
		"movq $0, (%[obj], %[off])\n\t"
		"3:\n\t"
		RSEQ_ABORT_RESTART
		: [obj] "=&r"(obj), [c] "=&r"(c), [n] "=&r"(n)
		: [abi] "r"(abi), [slots] "rm"(slots), [nr] "rm"(nr), [off] "r"(fp_offset)
		: "memory", "cc");
	return obj;
}

/*
 * Park @obj in this CPU's main sheaf.  RSEQ_NOT_CPU_SLAB: no room (full,
 * no sheaf, retired, no usable CPU number).  RSEQ_LOOKS_FREE: @obj's word
 * already carries the key's top bits, as a free or parked object's does (a
 * double free, likely): the caller confirms.  Parked, the word holds the
 * key itself, an encoded NULL, so that a second free of it is caught too.
 */
static __attribute__((always_inline)) inline enum rseq_push_result
rseq_sheaf_push(intptr_t abi, void *slots, unsigned int nr, unsigned long fp_offset,
		const uintptr_t *key, void *obj)
{
	unsigned long c, n, t;
	__asm__ __volatile__ goto(
		RSEQ_CS_DESCRIPTOR(1, 2, 4)
		RSEQ_ENTER("[abi]", "[c]")
		"1:\n\t"
		SHEAF_SLOT("%l[full]")
		"movl " SHEAF_STR(SHEAF_SLOT_SIZE) "(%[c]), %k[n]\n\t"
		"cmpl " SHEAF_STR(SHEAF_SLOT_ROOM) "(%[c]), %k[n]\n\t"
		"jae %l[full]\n\t"
		RSEQ_PUSH_LOOKS_FREE("t")
		"movq %[key], %[t]\n\t"
		"movq %[t], (%[obj], %[off])\n\t"
		"movq " SHEAF_STR(SHEAF_SLOT_MAIN) "(%[c]), %[t]\n\t"
		"movq %[obj], " SHEAF_STR(SHEAF_OBJECTS) "(%[t], %[n], 8)\n\t"
		"addl $1, %k[n]\n\t"
		"movl %k[n], " SHEAF_STR(SHEAF_SLOT_SIZE) "(%[c])\n\t"	/* commit */
		"2:\n\t"
		RSEQ_ABORT_RESTART
		: [c] "=&r"(c), [n] "=&r"(n), [t] "=&r"(t)
		: [abi] "r"(abi), [slots] "rm"(slots), [nr] "rm"(nr), [off] "r"(fp_offset),
		  [key] "m"(*key), [keytop] "m"(((const uint16_t *)key)[3]), [obj] "r"(obj)
		: "memory", "cc"
		: full, looks_free);
	return RSEQ_PUSHED;
full:
	return RSEQ_NOT_CPU_SLAB;
looks_free:
	return RSEQ_LOOKS_FREE;
}

/*
 * Retire the sheaf word at @word of @cpu's slot if this thread runs on
 * @cpu: read it and store 0 as one sequence, so that every sequence of
 * another thread there that began before restarts and finds no room.
 * Returns 0 if we are not on @cpu.
 */
static inline int rseq_sheaf_take(intptr_t abi, uint64_t *word, unsigned int cpu, uint64_t *old)
{
	uint64_t v;
	__asm__ __volatile__ goto(
		RSEQ_CS_DESCRIPTOR(1, 2, 4)
		RSEQ_ENTER("[abi]", "[v]")
		"1:\n\t"
		"cmpl %%fs:4(%[abi]), %[cpu]\n\t"
		"jne %l[elsewhere]\n\t"
		"movq (%[word]), %[v]\n\t"
		"movq %[v], (%[old])\n\t"
		"movq $0, (%[word])\n\t"		/* commit */
		"2:\n\t"
		RSEQ_ABORT_RESTART
		: [v] "=&r"(v)
		: [abi] "r"(abi), [word] "r"(word), [old] "r"(old), [cpu] "r"(cpu)
		: "memory", "cc"
		: elsewhere);
	return 1;
elsewhere:
	return 0;
}
#endif

#endif
