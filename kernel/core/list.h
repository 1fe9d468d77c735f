/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A minimal intrusive doubly linked list, so the core needs neither
 * <linux/list.h> nor an allocator.  An unlinked node points at itself.
 */
#ifndef MROCE_CORE_LIST_H
#define MROCE_CORE_LIST_H

#include "platform.h"

#ifdef __cplusplus
extern "C" {
#endif

struct mroce_list {
	struct mroce_list *next, *prev;
};

static inline void mroce_list_init(struct mroce_list *l)
{
	l->next = l;
	l->prev = l;
}

static inline bool mroce_list_empty(const struct mroce_list *l)
{
	return l->next == l;
}

/* A node is linked iff it does not point at itself. */
static inline bool mroce_list_linked(const struct mroce_list *n)
{
	return n->next != n;
}

static inline void mroce_list_add_tail(struct mroce_list *n,
				       struct mroce_list *head)
{
	n->prev = head->prev;
	n->next = head;
	head->prev->next = n;
	head->prev = n;
}

static inline void mroce_list_del(struct mroce_list *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	mroce_list_init(n);
}

#define mroce_list_entry(ptr, type, member) \
	MROCE_CONTAINER_OF(ptr, type, member)

#ifdef __cplusplus
}
#endif
#endif /* MROCE_CORE_LIST_H */
