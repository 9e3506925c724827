/* SPDX-License-Identifier: MIT */
/*
 * kstyle.h - the interface of kstyle.c, a piece of kernel-style code built
 * against the porter's headers alone (test_porter.c drives it).
 */
#ifndef KSTYLE_H
#define KSTYLE_H

#include <linux/slab.h>

int session_init(void);
void session_exit(void);
int session_add(unsigned long id, const char *name);
bool session_lookup(unsigned long id, char *name, size_t len);
int session_rename(unsigned long id, const char *name);
int session_del(unsigned long id);

#endif
