// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * snaa queues: rings of fixed-size entries behind a struct snaa_ring
 * header, in vmalloc_user() memory that user space maps through
 * rdma_user_mmap entries (see include/uapi/rdma/snaa-abi.h).
 */

#include <linux/mm.h>
#include <linux/vmalloc.h>
#include <rdma/ib_verbs.h>

#include "snaa.h"

struct snaa_mmap_entry {
	struct rdma_user_mmap_entry rdma;
	void *addr;
};

/**
 * snaa_queue_init() - allocate a ring
 * @q: the queue
 * @num: entries wanted; rounded up to a power of two
 * @stride: bytes per entry
 * @uctx: user context to map the ring into, or NULL for a kernel ring
 *
 * Context: process context, may sleep.
 * Return: 0 or a negative errno; nothing is left allocated on error.
 */
int snaa_queue_init(struct snaa_queue *q, u32 num, u32 stride,
		    struct ib_ucontext *uctx)
{
	struct snaa_mmap_entry *e;
	int err;

	num = roundup_pow_of_two(max_t(u32, num, 1));
	q->num = num;
	q->stride = stride;
	q->kidx = 0;
	q->mmap = NULL;
	q->size = PAGE_ALIGN(sizeof(struct snaa_ring) + (size_t)num * stride);
	q->ring = vmalloc_user(q->size);
	if (!q->ring)
		return -ENOMEM;
	q->entries = (u8 *)q->ring + sizeof(struct snaa_ring);
	if (!uctx)
		return 0;

	e = kzalloc(sizeof(*e), GFP_KERNEL);
	if (!e) {
		err = -ENOMEM;
		goto err_free;
	}
	e->addr = q->ring;
	err = rdma_user_mmap_entry_insert(uctx, &e->rdma, q->size);
	if (err) {
		kfree(e);
		goto err_free;
	}
	q->mmap = &e->rdma;
	return 0;

err_free:
	vfree(q->ring);
	q->ring = NULL;
	return err;
}

/* The mmap offset user space passes to map the ring. */
u64 snaa_queue_key(struct snaa_queue *q)
{
	return q->mmap ? rdma_user_mmap_get_offset(q->mmap) : 0;
}

/*
 * Free a ring.  Pages still mapped by a process stay alive until it
 * unmaps them (the mapping holds page references).
 */
void snaa_queue_free(struct snaa_queue *q)
{
	if (q->mmap)
		rdma_user_mmap_entry_remove(q->mmap);
	q->mmap = NULL;
	vfree(q->ring);
	q->ring = NULL;
}

int snaa_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *rdma;
	struct snaa_mmap_entry *e;
	int err;

	rdma = rdma_user_mmap_entry_get(uctx, vma);
	if (!rdma)
		return -EINVAL;
	e = container_of(rdma, struct snaa_mmap_entry, rdma);
	err = remap_vmalloc_range(vma, e->addr, 0);
	rdma_user_mmap_entry_put(rdma);
	return err;
}

void snaa_mmap_free(struct rdma_user_mmap_entry *rdma)
{
	kfree(container_of(rdma, struct snaa_mmap_entry, rdma));
}
