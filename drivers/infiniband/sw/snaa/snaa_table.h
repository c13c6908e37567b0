/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * snaa ID tables: QPN -> QP and key index -> MR or window, looked up by
 * every packet.
 *
 * The IDs are random (a blind sender must guess them) and sparse in a
 * 24-bit space, where a radix tree (xarray) walks four nodes per lookup,
 * a cache miss each.  A table hashes an ID by its low bits into a fixed
 * array of RCU hash chains instead; IDs it draws itself land in an
 * empty bucket whenever one can be found in a few draws, so a lookup
 * reads one bucket and one object.  IDs set by the caller (well-known
 * QPNs) share a bucket when they must.
 */

#ifndef SNAA_TABLE_H
#define SNAA_TABLE_H

#include <linux/rculist.h>
#include <linux/spinlock.h>

/**
 * struct snaa_tnode - an object's entry in a struct snaa_table
 * @node: in the bucket of @id
 * @id: what it is found by; set by the table, fixed while it is in it
 * @tag: what kind of object holds the entry, for the table's user
 */
struct snaa_tnode {
	struct hlist_node node;
	u32 id;
	u8 tag;
};

/**
 * struct snaa_table - an ID table
 * @buckets: @mask + 1 RCU hash chains
 * @mask: a bucket's index is id & @mask
 * @lock: serializes insertions and removals
 * @count: entries
 */
struct snaa_table {
	struct hlist_head *buckets;
	u32 mask;
	spinlock_t lock;	/* writers */
	u32 count;
};

int snaa_table_init(struct snaa_table *t, unsigned int order);
void snaa_table_destroy(struct snaa_table *t);
int snaa_table_insert(struct snaa_table *t, struct snaa_tnode *n, u32 id);
int snaa_table_insert_random(struct snaa_table *t, struct snaa_tnode *n,
			     u32 min, u32 max);
void snaa_table_remove(struct snaa_table *t, struct snaa_tnode *n);

/**
 * snaa_table_find() - look up an ID
 * @t: the table
 * @id: the ID, from a packet or a work request
 *
 * The entry found may be on its way out (removed after the caller's RCU
 * read section began): its object must stay valid for a grace period
 * after snaa_table_remove() and tell by itself whether it is usable.
 *
 * Context: rcu_read_lock() held.
 * Return: the entry with @id, or NULL.
 */
static inline struct snaa_tnode *snaa_table_find(const struct snaa_table *t,
						 u32 id)
{
	struct snaa_tnode *n;

	hlist_for_each_entry_rcu(n, &t->buckets[id & t->mask], node)
		if (n->id == id)
			return n;
	return NULL;
}

#endif /* SNAA_TABLE_H */
