// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * snaa queues: rings of fixed-size entries behind a struct snaa_ring
 * header (see include/uapi/rdma/snaa-abi.h), which user space maps
 * through rdma_user_mmap entries.
 *
 * The memory of a ring is a set of pages charged to the memory cgroup
 * of the process that created the object (GFP_KERNEL_ACCOUNT), mapped
 * contiguously into the kernel with vmap().  A ring that user space can
 * map belongs to its mmap entry, not to the QP or CQ: the entry is
 * reference counted by the RDMA core (an mmap() in progress holds a
 * reference), and the pages are freed only in snaa_mmap_free(), when
 * the last reference is gone.  So an mmap() racing with the destruction
 * of its object maps live pages, never freed ones; pages a process
 * still has mapped stay allocated through the mapping's own page
 * references until it unmaps them.
 */

#include <linux/mm.h>
#include <linux/vmalloc.h>
#include <rdma/ib_verbs.h>

#include "snaa.h"

/**
 * struct snaa_ring_mem - the pages of one ring
 * @rdma: the mmap entry, for rings user space maps (else unused)
 * @addr: kernel address of the pages, from vmap()
 * @npages: number of pages
 * @pages: the pages, each charged to the creator's memory cgroup
 */
struct snaa_ring_mem {
	struct rdma_user_mmap_entry rdma;
	void *addr;
	unsigned long npages;
	struct page *pages[];
};

static void snaa_ring_mem_free(struct snaa_ring_mem *m)
{
	unsigned long i;

	if (m->addr)
		vunmap(m->addr);
	for (i = 0; i < m->npages; i++)
		if (m->pages[i])
			__free_page(m->pages[i]);
	kvfree(m);
}

/*
 * Ring sizes come from user space: at the memory cgroup's limit the
 * allocation fails (the verb returns ENOMEM) rather than invoking the
 * OOM killer.
 */
#define SNAA_RING_GFP	(GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL | __GFP_NOWARN)

static struct snaa_ring_mem *snaa_ring_mem_alloc(size_t size)
{
	unsigned long i, npages = size >> PAGE_SHIFT;
	struct snaa_ring_mem *m;

	m = kvzalloc(struct_size(m, pages, npages), SNAA_RING_GFP);
	if (!m)
		return NULL;
	m->npages = npages;
	for (i = 0; i < npages; i++) {
		m->pages[i] = alloc_page(SNAA_RING_GFP | __GFP_ZERO);
		if (!m->pages[i])
			goto err;
	}
	m->addr = vmap(m->pages, npages, VM_MAP, PAGE_KERNEL);
	if (!m->addr)
		goto err;
	return m;

err:
	snaa_ring_mem_free(m);
	return NULL;
}

/* Allocate @size bytes for @q and publish them to @uctx (if set). */
static int snaa_queue_mem(struct snaa_queue *q, size_t size,
			  struct ib_ucontext *uctx)
{
	struct snaa_ring_mem *m;
	int err;

	q->kidx = 0;
	q->mmap = NULL;
	q->size = PAGE_ALIGN(size);
	m = snaa_ring_mem_alloc(q->size);
	if (!m)
		return -ENOMEM;
	q->mem = m;
	q->ring = m->addr;
	if (!uctx)
		return 0;

	err = rdma_user_mmap_entry_insert(uctx, &m->rdma, q->size);
	if (err) {
		snaa_ring_mem_free(m);
		q->mem = NULL;
		q->ring = NULL;
		return err;
	}
	q->mmap = &m->rdma;
	return 0;
}

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
	int err;

	num = roundup_pow_of_two(max_t(u32, num, 1));
	q->num = num;
	q->stride = stride;
	err = snaa_queue_mem(q, sizeof(struct snaa_ring) + (size_t)num * stride,
			     uctx);
	if (err)
		return err;
	q->entries = (u8 *)q->ring + sizeof(struct snaa_ring);
	return 0;
}

/**
 * snaa_shm_init() - allocate zeroed memory shared with user space
 * @q: holds the memory: @q->ring points at its first byte, which is not
 *	a struct snaa_ring; snaa_queue_key() and snaa_queue_free() work
 *	as for a ring
 * @size: bytes
 * @uctx: user context to map it into, or NULL
 *
 * Context: process context, may sleep.
 * Return: 0 or a negative errno.
 */
int snaa_shm_init(struct snaa_queue *q, size_t size, struct ib_ucontext *uctx)
{
	q->num = 0;
	q->stride = 0;
	q->entries = NULL;
	return snaa_queue_mem(q, size, uctx);
}

/* The mmap offset user space passes to map the ring. */
u64 snaa_queue_key(struct snaa_queue *q)
{
	return q->mmap ? rdma_user_mmap_get_offset(q->mmap) : 0;
}

/**
 * snaa_queue_free() - release a ring
 * @q: the queue; the kernel must be done with it
 *
 * A kernel ring is freed here.  A user ring is only unpublished: its
 * memory goes with the last reference to its mmap entry
 * (snaa_mmap_free()), so an mmap() still in progress cannot map freed
 * pages.
 *
 * Context: process context.
 */
void snaa_queue_free(struct snaa_queue *q)
{
	if (q->mmap)
		rdma_user_mmap_entry_remove(q->mmap);
	else if (q->mem)
		snaa_ring_mem_free(q->mem);
	q->mmap = NULL;
	q->mem = NULL;
	q->ring = NULL;
}

/*
 * mmap() of a ring.  The entry reference held here keeps the pages
 * alive while they are inserted; afterwards the mapping holds its own
 * page references.
 */
int snaa_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *rdma;
	struct snaa_ring_mem *m;
	unsigned long i;
	int err = 0;

	/* Checks that the VMA is shared and exactly the ring's size. */
	rdma = rdma_user_mmap_entry_get(uctx, vma);
	if (!rdma)
		return -EINVAL;
	m = container_of(rdma, struct snaa_ring_mem, rdma);
	for (i = 0; i < m->npages && !err; i++)
		err = vm_insert_page(vma, vma->vm_start + i * PAGE_SIZE,
				     m->pages[i]);
	rdma_user_mmap_entry_put(rdma);
	return err;
}

/* The last reference to a user ring's mmap entry is gone. */
void snaa_mmap_free(struct rdma_user_mmap_entry *rdma)
{
	snaa_ring_mem_free(container_of(rdma, struct snaa_ring_mem, rdma));
}
