/* SPDX-License-Identifier: MIT */
/*
 * <linux/rcupdate.h> for kernel code built on libslub: the kfree_rcu part
 * (kfree_rcu, kvfree_rcu, their mightsleep forms, struct rcu_head,
 * kvfree_rcu_barrier) is slub.h's; rcu_read_lock(), rcu_dereference(),
 * rcu_assign_pointer(), call_rcu(), synchronize_rcu() and rcu_barrier()
 * are liburcu's, of the flavour slub.h includes (read slub.h's RCU
 * section for what a program must do).  Added here: the kernel's other
 * spellings of a pointer read or write, mapped onto liburcu's.
 */
#ifndef SLUB_PORTER_LINUX_RCUPDATE_H
#define SLUB_PORTER_LINUX_RCUPDATE_H

#include <slub.h>

#ifndef __rcu
#define __rcu
#endif
#define rcu_access_pointer(p) __atomic_load_n(&(p), __ATOMIC_RELAXED)
#define rcu_dereference_raw(p) rcu_dereference(p)
#define rcu_dereference_check(p, c) rcu_dereference(p)
#define rcu_dereference_protected(p, c) (p)
#define RCU_INIT_POINTER(p, v) __atomic_store_n(&(p), (v), __ATOMIC_RELAXED)
#define rcu_replace_pointer(p, v, c) rcu_xchg_pointer(&(p), (v))

#endif
