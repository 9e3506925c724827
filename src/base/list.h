/* SPDX-License-Identifier: MIT */
/*
 * list.h - the kernel's circular doubly linked list, for free lists and
 * (later) partial lists.  An embedded node, no allocation.
 */
#ifndef SLUB_LIST_H
#define SLUB_LIST_H

#include "base/compiler.h"

struct list_head {
	struct list_head *next, *prev;
};

static inline void INIT_LIST_HEAD(struct list_head *h)
{
	h->next = h;
	h->prev = h;
}

static inline bool list_empty(const struct list_head *h)
{
	return h->next == h;
}

static inline void __list_link(struct list_head *n, struct list_head *prev,
			       struct list_head *next)
{
	next->prev = n;
	n->next = next;
	n->prev = prev;
	prev->next = n;
}

/* Add after @h (stack order). */
static inline void list_add(struct list_head *n, struct list_head *h)
{
	__list_link(n, h, h->next);
}

/* Add before @h (queue order). */
static inline void list_add_tail(struct list_head *n, struct list_head *h)
{
	__list_link(n, h->prev, h);
}

static inline void list_del(struct list_head *n)
{
	n->next->prev = n->prev;
	n->prev->next = n->next;
	n->next = n->prev = NULL;
}

/* Move every node of @from to the front of @to; @from is left empty. */
static inline void list_splice_init(struct list_head *from, struct list_head *to)
{
	if (list_empty(from))
		return;
	struct list_head *first = from->next, *last = from->prev;
	first->prev = to;
	last->next = to->next;
	to->next->prev = last;
	to->next = first;
	INIT_LIST_HEAD(from);
}

#define list_entry(ptr, type, member) container_of(ptr, type, member)
#define list_first_entry(h, type, member) list_entry((h)->next, type, member)
#define list_last_entry(h, type, member) list_entry((h)->prev, type, member)

#define list_for_each(pos, h) \
	for ((pos) = (h)->next; (pos) != (h); (pos) = (pos)->next)

/* The same, where the body may unlink @pos (@n holds the next). */
#define list_for_each_safe(pos, n, h) \
	for ((pos) = (h)->next, (n) = (pos)->next; (pos) != (h); (pos) = (n), (n) = (pos)->next)

#endif
