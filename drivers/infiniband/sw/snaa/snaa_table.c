// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * snaa ID tables (snaa_table.h): fixed arrays of RCU hash chains keyed
 * by the low bits of random IDs.
 */

#include <linux/random.h>
#include <linux/slab.h>

#include "snaa_table.h"

/* Random draws that must find an empty bucket before a shared one will do. */
#define SNAA_TABLE_EMPTY_DRAWS	16
/* Draws in all: running out means the ID range is full (or the RNG broken). */
#define SNAA_TABLE_DRAWS	64

/**
 * snaa_table_init() - set up an empty table
 * @t: the table
 * @order: log2 of its buckets
 *
 * Return: 0 or -ENOMEM.
 */
int snaa_table_init(struct snaa_table *t, unsigned int order)
{
	u32 i, n = 1U << order;

	t->buckets = kvmalloc_array(n, sizeof(*t->buckets), GFP_KERNEL);
	if (!t->buckets)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		INIT_HLIST_HEAD(&t->buckets[i]);
	t->mask = n - 1;
	t->count = 0;
	spin_lock_init(&t->lock);
	return 0;
}

/**
 * snaa_table_destroy() - free a table
 * @t: the table, empty; no reader may still use it
 */
void snaa_table_destroy(struct snaa_table *t)
{
	/* also for a table that snaa_table_init() never set up (zeroed) */
	WARN_ON(t->count);
	kvfree(t->buckets);
	t->buckets = NULL;
}

static bool snaa_table_has(struct snaa_table *t, u32 id)
{
	struct snaa_tnode *n;

	lockdep_assert_held(&t->lock);
	hlist_for_each_entry(n, &t->buckets[id & t->mask], node)
		if (n->id == id)
			return true;
	return false;
}

static void snaa_table_add(struct snaa_table *t, struct snaa_tnode *n, u32 id)
{
	n->id = id;
	/* publishes n->id with the entry */
	hlist_add_head_rcu(&n->node, &t->buckets[id & t->mask]);
	t->count++;
}

/**
 * snaa_table_insert() - enter an object under an ID of the caller's
 * @t: the table
 * @n: the object's entry, not in a table
 * @id: its ID
 *
 * Return: 0, or -EBUSY if @id is taken.
 */
int snaa_table_insert(struct snaa_table *t, struct snaa_tnode *n, u32 id)
{
	int err = -EBUSY;

	spin_lock(&t->lock);
	if (!snaa_table_has(t, id)) {
		snaa_table_add(t, n, id);
		err = 0;
	}
	spin_unlock(&t->lock);
	return err;
}

/**
 * snaa_table_insert_random() - enter an object under a random free ID
 * @t: the table
 * @n: the object's entry, not in a table; its ID is in @n->id after
 * @min: the lowest ID allowed
 * @max: the highest ID allowed
 *
 * IDs are drawn uniformly from [@min, @max] until one falls in an empty
 * bucket; after SNAA_TABLE_EMPTY_DRAWS draws any ID not taken will do.
 *
 * Return: 0, or -ENOMEM if no free ID was drawn.
 */
int snaa_table_insert_random(struct snaa_table *t, struct snaa_tnode *n,
			     u32 min, u32 max)
{
	int draw;
	u32 id;

	spin_lock(&t->lock);
	for (draw = 0; draw < SNAA_TABLE_DRAWS; draw++) {
		id = get_random_u32_inclusive(min, max);
		if (draw < SNAA_TABLE_EMPTY_DRAWS ?
		    !hlist_empty(&t->buckets[id & t->mask]) :
		    snaa_table_has(t, id))
			continue;
		snaa_table_add(t, n, id);
		spin_unlock(&t->lock);
		return 0;
	}
	spin_unlock(&t->lock);
	return -ENOMEM;
}

/**
 * snaa_table_remove() - take an object out of its table
 * @t: the table
 * @n: the entry, in @t
 *
 * RCU readers may find it until a grace period has passed.
 */
void snaa_table_remove(struct snaa_table *t, struct snaa_tnode *n)
{
	spin_lock(&t->lock);
	hlist_del_rcu(&n->node);
	t->count--;
	spin_unlock(&t->lock);
}
