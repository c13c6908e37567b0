// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * snaa protection domains and memory regions: registration, key lookup
 * without a global lock (ID table + RCU + per-MR reference), access and
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
				 IB_ACCESS_REMOTE_ATOMIC | \
				 IB_ACCESS_MW_BIND)

/* Fast-registration MR states (snaa_mr.fr_state). */
enum {
	SNAA_FR_FREE,
	SNAA_FR_VALID,
	SNAA_FR_BUSY,		/* being registered or invalidated */
};

int snaa_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct snaa_dev *sdev = to_snaa_dev(ibpd->device);

	if (!snaa_obj_take(&sdev->num_pd, SNAA_MAX_PD, !!udata))
		return -ENOMEM;
	return 0;
}

int snaa_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	atomic_dec(&to_snaa_dev(ibpd->device)->num_pd);
	return 0;
}

/**
 * snaa_mr_access_valid() - may an MR (or a window) have these rights?
 * @access: IB_ACCESS_* bits, optional ones removed
 *
 * Return: 0, -EOPNOTSUPP for a right snaa does not have, or -EINVAL for
 * remote write or atomic access without local write (IBA 10.6.3.1).
 */
int snaa_mr_access_valid(int access)
{
	if (access & ~SNAA_ACCESS_SUPPORTED)
		return -EOPNOTSUPP;
	if ((access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IB_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	return 0;
}

static struct snaa_mr *snaa_mr_alloc(struct snaa_dev *sdev, int access,
				     bool user)
{
	struct snaa_mr *mr;
	int err;

	/* Optional flags (relaxed ordering) are hints we may ignore. */
	access &= ~IB_ACCESS_OPTIONAL;
	err = snaa_mr_access_valid(access);
	if (err)
		return ERR_PTR(err);
	if (!snaa_obj_take(&sdev->num_mr, SNAA_MAX_MR, user))
		return ERR_PTR(-ENOMEM);
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

/**
 * snaa_key_publish() - publish an MR or a window under a fresh key
 * @sdev: the device
 * @tn: the object's entry for sdev->key_table, its tag set
 * @key: set to the key
 *
 * From here on the wire can find it.  The key is index << 8 | key byte,
 * both random: with at most SNAA_MAX_MR + SNAA_MAX_MW objects among 2^32
 * keys, a blind sender needs millions of tries per hit.  A draw finds a
 * free index with probability > 99 %: running out of draws means the
 * RNG is broken.
 *
 * Return: 0 or -ENOMEM.
 */
int snaa_key_publish(struct snaa_dev *sdev, struct snaa_tnode *tn, u32 *key)
{
	int err;

	err = snaa_table_insert_random(&sdev->key_table, tn, 1,
				       SNAA_MR_INDEX_MAX);
	if (!err)
		*key = tn->id << 8 | get_random_u8();
	return err;
}

static int snaa_mr_publish(struct snaa_mr *mr)
{
	int err;

	mr->tn.tag = SNAA_KEY_MR;
	err = snaa_key_publish(mr->sdev, &mr->tn, &mr->ibmr.lkey);
	mr->ibmr.rkey = mr->ibmr.lkey;
	mr->fr_key = mr->ibmr.lkey;
	return err;
}

static void snaa_mr_destroy(struct snaa_mr *mr)
{
	if (mr->umem)
		ib_umem_release(mr->umem);
	kvfree(mr->pages);
	kvfree(mr->fr_pages);
	atomic_dec(&mr->sdev->num_mr);
	kfree_rcu(mr, rcu);
}

struct ib_mr *snaa_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct snaa_mr *mr;
	int err;

	mr = snaa_mr_alloc(to_snaa_dev(ibpd->device), access, false);
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
			       u64 iova, int access,
			       SNAA_REG_MR_DMAH_ARG(dmah)
			       struct ib_udata *udata)
{
	struct snaa_dev *sdev = to_snaa_dev(ibpd->device);
	struct sg_page_iter piter;
	struct snaa_mr *mr;
	unsigned long i = 0;
	int err;

	if (snaa_dmah_given(dmah))
		return ERR_PTR(-EOPNOTSUPP);
	if (!length || length > SNAA_MAX_MR_SIZE || iova + length < iova)
		return ERR_PTR(-EINVAL);

	mr = snaa_mr_alloc(sdev, access, true);
	if (IS_ERR(mr))
		return ERR_CAST(mr);

	mr->umem = snaa_umem_get(&sdev->ibdev, start, length, access);
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

/* Fast registration (kernel consumers): an MR for IB_WR_REG_MR. */
struct ib_mr *snaa_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			    u32 max_num_sg)
{
	struct snaa_mr *mr;
	int err;

	if (type != IB_MR_TYPE_MEM_REG)
		return ERR_PTR(-EOPNOTSUPP);
	if (!max_num_sg || max_num_sg > SNAA_MAX_FR_PAGES)
		return ERR_PTR(-EINVAL);
	mr = snaa_mr_alloc(to_snaa_dev(ibpd->device), 0, false);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->fr = true;
	mr->fr_max_pages = max_num_sg;
	mr->pages = kvcalloc(max_num_sg, sizeof(*mr->pages),
			     GFP_KERNEL_ACCOUNT);
	mr->fr_pages = kvcalloc(max_num_sg, sizeof(*mr->fr_pages),
				GFP_KERNEL_ACCOUNT);
	err = -ENOMEM;
	if (mr->pages && mr->fr_pages)
		err = snaa_mr_publish(mr);
	if (err) {
		snaa_mr_destroy(mr);
		return ERR_PTR(err);
	}
	return &mr->ibmr;
}

static int snaa_mr_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct snaa_mr *mr = to_snaa_mr(ibmr);

	if (mr->fr_npages >= mr->fr_max_pages)
		return -ENOMEM;
	/* snaa uses virtual DMA: a DMA address is a kernel address */
	mr->fr_pages[mr->fr_npages++] = virt_to_page((void *)(uintptr_t)addr);
	return 0;
}

/*
 * ib_map_mr_sg(): the pages of the next registration.  They are staged
 * apart from the pages in use, so that an MR may be mapped again while
 * its current registration is still valid; IB_WR_REG_MR switches.
 */
int snaa_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		   unsigned int *sg_offset)
{
	struct snaa_mr *mr = to_snaa_mr(ibmr);
	int n;

	if (!mr->fr || ibmr->page_size != PAGE_SIZE)
		return -EINVAL;
	mr->fr_npages = 0;
	n = ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, snaa_mr_set_page);
	mr->fr_page_off = ibmr->iova & ~PAGE_MASK;
	return n;
}

/* Wait until no access that saw the registration valid is under way. */
static void snaa_mr_fr_drain(struct snaa_mr *mr)
{
	/* Pairs with the barrier in snaa_mr_get(). */
	smp_mb();
	while (atomic_read(&mr->fr_users))
		cpu_relax();
}

/**
 * snaa_mr_fr_reg() - execute IB_WR_REG_MR
 * @mr: a fast-registration MR, referenced
 * @key: its new key (only the key byte may change)
 * @access: the rights the registration grants
 *
 * The MR must be free (IBA 10.6.3.4: invalidated since its last
 * registration).  Its VA range is the one ib_map_mr_sg() set.
 *
 * Context: any, BHs disabled; waits (spins) for accesses started before
 * the MR was invalidated, each of them one packet's copy.
 * Return: 0 or -EINVAL.
 */
int snaa_mr_fr_reg(struct snaa_mr *mr, u32 key, int access)
{
	u64 span;

	access &= ~IB_ACCESS_OPTIONAL;
	if (!mr->fr || (key >> 8) != (mr->fr_key >> 8) ||
	    snaa_mr_access_valid(access) || (access & IB_ACCESS_MW_BIND) ||
	    mr->ibmr.page_size != PAGE_SIZE || !mr->fr_npages)
		return -EINVAL;
	span = (u64)mr->fr_npages * PAGE_SIZE - mr->fr_page_off;
	if (!mr->ibmr.length || mr->ibmr.length > span)
		return -EINVAL;
	if (cmpxchg(&mr->fr_state, SNAA_FR_FREE, SNAA_FR_BUSY) != SNAA_FR_FREE)
		return -EINVAL;
	snaa_mr_fr_drain(mr);
	swap(mr->pages, mr->fr_pages);
	mr->npages = mr->fr_npages;
	mr->page_off = mr->fr_page_off;
	mr->iova = mr->ibmr.iova;
	mr->length = mr->ibmr.length;
	mr->access = access;
	WRITE_ONCE(mr->fr_key, key);
	/* Readers that see VALID see all of the above. */
	smp_store_release(&mr->fr_state, SNAA_FR_VALID);
	return 0;
}

/**
 * snaa_mr_fr_invalidate() - IB_WR_LOCAL_INV or SEND with invalidate
 * @mr: a fast-registration MR, referenced
 * @pd: the PD of the QP doing it
 * @key: the key named; must be the MR's current one
 *
 * Context: any, BHs disabled; waits (spins) for the accesses under way.
 * Return: 0, or -EINVAL if @key names no valid registration of @pd.
 */
int snaa_mr_fr_invalidate(struct snaa_mr *mr, struct ib_pd *pd, u32 key)
{
	if (!mr->fr || mr->ibmr.pd != pd || READ_ONCE(mr->fr_key) != key ||
	    cmpxchg(&mr->fr_state, SNAA_FR_VALID, SNAA_FR_BUSY) !=
	    SNAA_FR_VALID)
		return -EINVAL;
	snaa_mr_fr_drain(mr);
	/* after the drain: a new access sees BUSY until here */
	smp_store_release(&mr->fr_state, SNAA_FR_FREE);
	return 0;
}

int snaa_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct snaa_mr *mr = to_snaa_mr(ibmr);

	/* IBA 10.6.7.2.1: not while windows are bound to it. */
	if (atomic_cmpxchg(&mr->num_mw, 0, -1) != 0)
		return -EBUSY;
	snaa_table_remove(&mr->sdev->key_table, &mr->tn);
	/* Wait for packets that found the MR before it was removed. */
	snaa_mr_unref(mr);
	wait_for_completion(&mr->done);
	snaa_mr_destroy(mr);
	return 0;
}

/**
 * snaa_mr_get_index() - look up an MR by the index bits of a key
 * @sdev: the device
 * @key: a key; its key byte and the MR's state are not checked
 *
 * For the operations that change an MR's key or state.  Release with
 * snaa_mr_unref().
 *
 * Return: the MR, referenced, or NULL.
 */
struct snaa_mr *snaa_mr_get_index(struct snaa_dev *sdev, u32 key)
{
	struct snaa_mr *mr = NULL;
	struct snaa_tnode *tn;

	rcu_read_lock();
	tn = snaa_table_find(&sdev->key_table, key >> 8);
	if (tn && tn->tag == SNAA_KEY_MR) {
		mr = container_of(tn, struct snaa_mr, tn);
		if (!refcount_inc_not_zero(&mr->ref))
			mr = NULL;
	}
	rcu_read_unlock();
	return mr;
}

void snaa_mr_unref(struct snaa_mr *mr)
{
	if (refcount_dec_and_test(&mr->ref))
		complete(&mr->done);
}

/**
 * snaa_mr_get() - look up an MR by key for an access
 * @sdev: the device
 * @key: lkey or rkey from a WQE or a packet
 *
 * A fast-registration MR is found only while its registration is valid,
 * and counts the access until snaa_mr_put().  Memory windows are not
 * MRs: see snaa_rkey_get().
 *
 * Context: any; no lock taken besides RCU.
 * Return: the MR, referenced, or NULL if no usable MR has this key.
 */
struct snaa_mr *snaa_mr_get(struct snaa_dev *sdev, u32 key)
{
	struct snaa_mr *mr;

	mr = snaa_mr_get_index(sdev, key);
	if (!mr)
		return NULL;
	if (likely(!mr->fr)) {
		if (mr->ibmr.lkey == key)
			return mr;
		snaa_mr_unref(mr);
		return NULL;
	}
	atomic_inc(&mr->fr_users);
	/* Pairs with snaa_mr_fr_drain(): it sees us, or we see BUSY. */
	smp_mb__after_atomic();
	/* acquire: VALID comes with the registration snaa_mr_fr_reg() made */
	if (smp_load_acquire(&mr->fr_state) == SNAA_FR_VALID &&
	    READ_ONCE(mr->fr_key) == key)
		return mr;
	snaa_mr_put(mr);
	return NULL;
}

/* Done with an MR from snaa_mr_get(), snaa_rkey_get() or a window. */
void snaa_mr_put(struct snaa_mr *mr)
{
	if (unlikely(mr->fr)) {
		/* the accesses are done before the count drops */
		smp_mb__before_atomic();
		atomic_dec(&mr->fr_users);
	}
	snaa_mr_unref(mr);
}

/**
 * snaa_rkey_get() - resolve an R_Key for a remote access by @qp
 * @qp: the responder's QP
 * @rkey: from the packet
 * @va: first byte accessed
 * @len: bytes accessed
 * @access: the IB_ACCESS_REMOTE_* right needed
 * @err: set to -EACCES (no such key, or not for this QP), -EPERM
 *	(rights) or -ERANGE (bounds) if NULL is returned
 *
 * The key names an MR or a memory window; for a window, the rights and
 * bounds are the window's.
 *
 * Return: the MR holding the bytes, referenced (snaa_mr_put()), or NULL.
 */
struct snaa_mr *snaa_rkey_get(struct snaa_qp *qp, u32 rkey, u64 va, u64 len,
			      int access, int *err)
{
	struct snaa_mr *mr;
	struct snaa_mw *mw;

	mr = snaa_mr_get(qp->sdev, rkey);
	if (!mr) {
		mw = snaa_mw_get(qp->sdev, rkey);
		if (!mw) {
			*err = -EACCES;
			return NULL;
		}
		mr = snaa_mw_access(mw, qp, rkey, va, len, access, err);
		snaa_mw_put(mw);
		return mr;
	}
	*err = snaa_mr_check(mr, qp->ibqp.pd, va, len, access);
	if (*err) {
		snaa_mr_put(mr);
		return NULL;
	}
	return mr;
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
		/* the common case: a linear packet (always, on loopback) */
		if (off + chunk <= skb_headlen(skb)) {
			memcpy(dst, skb->data + off, chunk);
			err = 0;
		} else {
			err = skb_copy_bits(skb, off, dst, chunk);
		}
		kunmap_local(dst);
		if (err)
			return err;
		off += chunk;
		va += chunk;
		len -= chunk;
	}
	return 0;
}
