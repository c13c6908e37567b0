// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * snaa protection domains and memory regions: registration, key lookup
 * without a global lock (xarray + RCU + per-MR reference), access and
 * bounds checks, and copies between MRs and buffers or skbs.
 */

#include <linux/highmem.h>
#include <linux/random.h>
#include <linux/skbuff.h>
#include <rdma/ib_umem.h>

#include "snaa.h"

#define SNAA_ACCESS_SUPPORTED	(IB_ACCESS_LOCAL_WRITE | \
				 IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_READ | \
				 IB_ACCESS_REMOTE_ATOMIC)

int snaa_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct snaa_dev *sdev = to_snaa_dev(ibpd->device);

	if (atomic_inc_return(&sdev->num_pd) > SNAA_MAX_PD) {
		atomic_dec(&sdev->num_pd);
		return -ENOMEM;
	}
	return 0;
}

int snaa_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	atomic_dec(&to_snaa_dev(ibpd->device)->num_pd);
	return 0;
}

static struct snaa_mr *snaa_mr_alloc(struct snaa_dev *sdev, int access)
{
	struct snaa_mr *mr;

	/* Optional flags (relaxed ordering) are hints we may ignore. */
	access &= ~IB_ACCESS_OPTIONAL;
	if (access & ~SNAA_ACCESS_SUPPORTED)
		return ERR_PTR(-EOPNOTSUPP);
	/* IBA: remote write or atomic access requires local write. */
	if ((access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IB_ACCESS_LOCAL_WRITE))
		return ERR_PTR(-EINVAL);
	if (atomic_inc_return(&sdev->num_mr) > SNAA_MAX_MR) {
		atomic_dec(&sdev->num_mr);
		return ERR_PTR(-ENOMEM);
	}
	mr = kzalloc(sizeof(*mr), GFP_KERNEL_ACCOUNT);
	if (!mr) {
		atomic_dec(&sdev->num_mr);
		return ERR_PTR(-ENOMEM);
	}
	mr->sdev = sdev;
	mr->access = access;
	refcount_set(&mr->ref, 1);
	init_completion(&mr->done);
	return mr;
}

/*
 * Publish @mr under a fresh key; from here on the wire can find it.  The
 * key is index << 8 | key byte, both random: with at most SNAA_MAX_MR
 * MRs among 2^32 keys, a blind sender needs millions of tries per hit.
 * A draw finds a free index with probability > 99.6 %: running out of
 * draws means the RNG is broken.
 */
static int snaa_mr_publish(struct snaa_mr *mr)
{
	struct snaa_dev *sdev = mr->sdev;
	int tries, err = -EBUSY;
	u32 idx;

	for (tries = 0; tries < 64 && err == -EBUSY; tries++) {
		idx = get_random_u32_inclusive(1, SNAA_MR_INDEX_MAX);
		mr->ibmr.lkey = idx << 8 | get_random_u8();
		mr->ibmr.rkey = mr->ibmr.lkey;
		err = xa_insert(&sdev->mr_xa, idx, mr, GFP_KERNEL_ACCOUNT);
	}
	if (err)
		return err == -EBUSY ? -ENOMEM : err;
	return 0;
}

static void snaa_mr_destroy(struct snaa_mr *mr)
{
	if (mr->umem)
		ib_umem_release(mr->umem);
	kvfree(mr->pages);
	atomic_dec(&mr->sdev->num_mr);
	kfree_rcu(mr, rcu);
}

struct ib_mr *snaa_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct snaa_mr *mr;
	int err;

	mr = snaa_mr_alloc(to_snaa_dev(ibpd->device), access);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->dma = true;
	mr->length = U64_MAX;
	err = snaa_mr_publish(mr);
	if (err) {
		snaa_mr_destroy(mr);
		return ERR_PTR(err);
	}
	return &mr->ibmr;
}

struct ib_mr *snaa_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
			       u64 iova, int access, struct ib_udata *udata)
{
	struct snaa_dev *sdev = to_snaa_dev(ibpd->device);
	struct sg_page_iter piter;
	struct snaa_mr *mr;
	unsigned long i = 0;
	int err;

	if (!length || length > SNAA_MAX_MR_SIZE || iova + length < iova)
		return ERR_PTR(-EINVAL);

	mr = snaa_mr_alloc(sdev, access);
	if (IS_ERR(mr))
		return ERR_CAST(mr);

	mr->umem = ib_umem_get(&sdev->ibdev, start, length, access);
	if (IS_ERR(mr->umem)) {
		err = PTR_ERR(mr->umem);
		mr->umem = NULL;
		goto err_free;
	}
	mr->npages = ib_umem_num_pages(mr->umem);
	mr->pages = kvcalloc(mr->npages, sizeof(*mr->pages),
			     GFP_KERNEL_ACCOUNT);
	if (!mr->pages) {
		err = -ENOMEM;
		goto err_free;
	}
	for_each_sgtable_page(&mr->umem->sgt_append.sgt, &piter, 0) {
		if (i >= mr->npages)
			break;
		mr->pages[i++] = sg_page_iter_page(&piter);
	}
	if (i != mr->npages) {
		err = -EFAULT;
		goto err_free;
	}
	mr->iova = iova;
	mr->length = length;
	mr->page_off = ib_umem_offset(mr->umem);
	mr->ibmr.iova = iova;
	mr->ibmr.length = length;

	err = snaa_mr_publish(mr);
	if (err)
		goto err_free;
	return &mr->ibmr;

err_free:
	snaa_mr_destroy(mr);
	return ERR_PTR(err);
}

int snaa_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct snaa_mr *mr = to_snaa_mr(ibmr);

	xa_erase(&mr->sdev->mr_xa, mr->ibmr.lkey >> 8);
	/* Wait for packets that found the MR before it was erased. */
	snaa_mr_put(mr);
	wait_for_completion(&mr->done);
	snaa_mr_destroy(mr);
	return 0;
}

/**
 * snaa_mr_get() - look up an MR by key and take a reference
 * @sdev: the device
 * @key: lkey or rkey from a WQE or a packet
 *
 * Context: any; no lock taken besides RCU.
 * Return: the MR, or NULL if no MR has this key.
 */
struct snaa_mr *snaa_mr_get(struct snaa_dev *sdev, u32 key)
{
	struct snaa_mr *mr;

	rcu_read_lock();
	mr = xa_load(&sdev->mr_xa, key >> 8);
	if (mr && (mr->ibmr.lkey != key || !refcount_inc_not_zero(&mr->ref)))
		mr = NULL;
	rcu_read_unlock();
	return mr;
}

void snaa_mr_put(struct snaa_mr *mr)
{
	if (refcount_dec_and_test(&mr->ref))
		complete(&mr->done);
}

/**
 * snaa_mr_check() - may @len bytes at @va of @mr be accessed?
 * @mr: the MR
 * @pd: PD of the QP doing the access
 * @va: first address
 * @len: length in bytes
 * @access: IB_ACCESS_* bits required (0 for local read)
 *
 * Return: 0, -EACCES (another PD), -EPERM (access rights) or -ERANGE
 * (bounds).
 */
int snaa_mr_check(struct snaa_mr *mr, struct ib_pd *pd, u64 va, u64 len,
		  int access)
{
	if (mr->ibmr.pd != pd)
		return -EACCES;
	if ((mr->access & access) != access)
		return -EPERM;
	if (mr->dma)
		return 0;
	if (va < mr->iova || len > mr->length || va - mr->iova > mr->length - len)
		return -ERANGE;
	return 0;
}

/*
 * Map the page of a checked user MR that holds @va; *@chunk is set to
 * the bytes available there, at most @len.  Undo with kunmap_local().
 */
static u8 *snaa_mr_map(struct snaa_mr *mr, u64 va, u64 len, u32 *chunk)
{
	u64 off = va - mr->iova + mr->page_off;
	u32 poff = off & ~PAGE_MASK;

	*chunk = min_t(u64, len, PAGE_SIZE - poff);
	return (u8 *)kmap_local_page(mr->pages[off >> PAGE_SHIFT]) + poff;
}

/* Copy @len bytes at @va of a checked MR into @buf. */
void snaa_mr_read(struct snaa_mr *mr, u64 va, void *buf, u32 len)
{
	u8 *dst = buf;
	u32 chunk;
	u8 *src;

	if (mr->dma) {
		memcpy(buf, (void *)(uintptr_t)va, len);
		return;
	}
	while (len) {
		src = snaa_mr_map(mr, va, len, &chunk);
		memcpy(dst, src, chunk);
		kunmap_local(src);
		dst += chunk;
		va += chunk;
		len -= chunk;
	}
}

/* Copy @len bytes from @buf to @va of a checked MR. */
int snaa_mr_write(struct snaa_mr *mr, u64 va, const void *buf, u32 len)
{
	const u8 *src = buf;
	u32 chunk;
	u8 *dst;

	if (mr->dma) {
		memcpy((void *)(uintptr_t)va, buf, len);
		return 0;
	}
	while (len) {
		dst = snaa_mr_map(mr, va, len, &chunk);
		memcpy(dst, src, chunk);
		kunmap_local(dst);
		src += chunk;
		va += chunk;
		len -= chunk;
	}
	return 0;
}

/*
 * Is the 8-byte target of an atomic at @va of @mr naturally aligned, in
 * the MR's VA space and in memory (an MR's I/O VA need not have the
 * alignment of the user address it maps)?
 */
bool snaa_mr_atomic_aligned(struct snaa_mr *mr, u64 va)
{
	if (va & 7)
		return false;
	return mr->dma || !((va - mr->iova + mr->page_off) & 7);
}

/**
 * snaa_mr_atomic() - an atomic operation on 8 bytes of a checked MR
 * @mr: the MR; its 8 bytes at @va are within it and aligned
 *	(snaa_mr_atomic_aligned())
 * @va: the target
 * @cmp_swap: compare & swap (else fetch & add)
 * @compare_add: the value to compare with, or to add
 * @swap: the value to store if it compares equal
 *
 * A real atomic instruction on the target memory: atomic with respect
 * to other operations of this device and to CPUs using atomic
 * instructions on the same memory.  Values are in host byte order.
 *
 * Return: the value the target held before.
 */
u64 snaa_mr_atomic(struct snaa_mr *mr, u64 va, bool cmp_swap, u64 compare_add,
		   u64 swap)
{
	u64 *p, orig;
	u32 chunk;
	u8 *page;

	if (mr->dma) {
		p = (u64 *)(uintptr_t)va;
		page = NULL;
	} else {
		page = snaa_mr_map(mr, va, 8, &chunk);
		p = (u64 *)page;
	}
	if (cmp_swap)
		orig = cmpxchg64(p, compare_add, swap);
	else
		orig = atomic64_fetch_add(compare_add, (atomic64_t *)p);
	if (page)
		kunmap_local(page);
	return orig;
}

/**
 * snaa_sge_scatter() - write @len bytes into a list of local SGEs
 * @qp: the QP whose PD the SGEs' MRs must belong to
 * @sge: the SGEs
 * @num_sge: how many
 * @pos: byte offset into the SGE list where the bytes go
 * @skb: the source, at @off, unless @buf is given
 * @off: offset in @skb
 * @buf: the source, or NULL
 * @len: bytes to write
 *
 * Each SGE's MR is looked up and checked for LOCAL_WRITE before it is
 * written.
 *
 * Return: 0, -EMSGSIZE if the SGEs end before @len bytes, or the
 * error of a bad SGE (-EACCES, -EPERM, -ERANGE).
 */
int snaa_sge_scatter(struct snaa_qp *qp, const struct snaa_sge *sge,
		     u32 num_sge, u64 pos, const struct sk_buff *skb, u32 off,
		     const void *buf, u32 len)
{
	struct snaa_mr *mr;
	u64 base = 0;
	u32 i, chunk;
	int err;

	for (i = 0; i < num_sge && len; i++) {
		if (pos >= base + sge[i].length) {
			base += sge[i].length;
			continue;
		}
		chunk = min_t(u64, len, base + sge[i].length - pos);
		mr = snaa_mr_get(qp->sdev, sge[i].lkey);
		if (!mr)
			return -EACCES;
		err = snaa_mr_check(mr, qp->ibqp.pd, sge[i].addr + (pos - base),
				    chunk, IB_ACCESS_LOCAL_WRITE);
		if (!err)
			err = buf ? snaa_mr_write(mr, sge[i].addr + (pos - base),
						  buf, chunk) :
				    snaa_mr_write_skb(mr, sge[i].addr +
						      (pos - base), skb, off,
						      chunk);
		snaa_mr_put(mr);
		if (err)
			return err;
		if (buf)
			buf += chunk;
		off += chunk;
		pos += chunk;
		len -= chunk;
		base += sge[i].length;
	}
	return len ? -EMSGSIZE : 0;
}

/* Copy @len bytes at @off of @skb to @va of a checked MR. */
int snaa_mr_write_skb(struct snaa_mr *mr, u64 va, const struct sk_buff *skb,
		      u32 off, u32 len)
{
	u32 chunk;
	u8 *dst;
	int err;

	if (mr->dma)
		return skb_copy_bits(skb, off, (void *)(uintptr_t)va, len);
	while (len) {
		dst = snaa_mr_map(mr, va, len, &chunk);
		err = skb_copy_bits(skb, off, dst, chunk);
		kunmap_local(dst);
		if (err)
			return err;
		off += chunk;
		va += chunk;
		len -= chunk;
	}
	return 0;
}
