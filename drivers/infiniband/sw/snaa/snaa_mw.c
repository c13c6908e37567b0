// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * snaa memory windows (type 1 and 2B) and the local operations of the
 * send queue: bind, local invalidate, fast registration, and the remote
 * invalidation a SEND with invalidate asks for.
 *
 * A window's R_Key lives in the MR key space (sdev->key_table, entry
 * tagged SNAA_KEY_MW).  Binding and invalidation run in the send queue
 * processor or the responder, under the window's lock; remote accesses
 * take the lock to check the R_Key, rights and bounds, then use the MR
 * the window is bound to with a reference of their own.
 */

#include "snaa.h"

/* What a window may grant; IB_ZERO_BASED windows are not supported. */
#define SNAA_MW_ACCESS		(IB_ACCESS_LOCAL_WRITE | \
				 IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_READ | \
				 IB_ACCESS_REMOTE_ATOMIC)

int snaa_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct snaa_ibmw *smw = container_of(ibmw, struct snaa_ibmw, ibmw);
	struct snaa_dev *sdev = to_snaa_dev(ibmw->device);
	struct snaa_mw *mw;
	int err;

	if (ibmw->type != IB_MW_TYPE_1 && ibmw->type != IB_MW_TYPE_2)
		return -EINVAL;
	if (!snaa_obj_take(&sdev->num_mw, SNAA_MAX_MW, true))
		return -ENOMEM;
	mw = kzalloc(sizeof(*mw), GFP_KERNEL_ACCOUNT);
	if (!mw) {
		atomic_dec(&sdev->num_mw);
		return -ENOMEM;
	}
	mw->sdev = sdev;
	mw->pd = ibmw->pd;
	mw->type = ibmw->type;
	spin_lock_init(&mw->lock);
	refcount_set(&mw->ref, 1);
	init_completion(&mw->done);
	mw->tn.tag = SNAA_KEY_MW;
	err = snaa_key_publish(sdev, &mw->tn, &mw->rkey);
	if (err) {
		kfree(mw);
		atomic_dec(&sdev->num_mw);
		return err;
	}
	ibmw->rkey = mw->rkey;
	smw->mw = mw;
	return 0;
}

/* Unbind: the window's MR may be deregistered again.  mw->lock held. */
static struct snaa_mr *snaa_mw_unbind(struct snaa_mw *mw)
{
	struct snaa_mr *mr = mw->mr;

	lockdep_assert_held(&mw->lock);
	mw->mr = NULL;
	mw->length = 0;
	mw->access = 0;
	return mr;
}

int snaa_dealloc_mw(struct ib_mw *ibmw)
{
	struct snaa_mw *mw = to_snaa_mw(ibmw);
	struct snaa_dev *sdev = mw->sdev;
	struct snaa_mr *mr;

	snaa_table_remove(&sdev->key_table, &mw->tn);
	/*
	 * A bind that found the window before it left the table may still
	 * come; it must not bind it after this unbind, or the MR would
	 * count a window that no longer exists, and never deregister.
	 */
	spin_lock_bh(&mw->lock);
	mw->dead = true;
	mr = snaa_mw_unbind(mw);
	spin_unlock_bh(&mw->lock);
	if (mr)
		atomic_dec(&mr->num_mw);
	/* Wait for packets that found the window before it was erased. */
	snaa_mw_put(mw);
	wait_for_completion(&mw->done);
	atomic_dec(&sdev->num_mw);
	kfree_rcu(mw, rcu);
	return 0;
}

/**
 * snaa_mw_get() - look up a memory window by the index bits of a key
 * @sdev: the device
 * @key: an R_Key; the caller compares it with the window's under its
 *	lock, as binds change the key byte
 *
 * Return: the window, referenced (snaa_mw_put()), or NULL.
 */
struct snaa_mw *snaa_mw_get(struct snaa_dev *sdev, u32 key)
{
	struct snaa_mw *mw = NULL;
	struct snaa_tnode *tn;

	rcu_read_lock();
	tn = snaa_table_find(&sdev->key_table, key >> 8);
	if (tn && tn->tag == SNAA_KEY_MW) {
		mw = container_of(tn, struct snaa_mw, tn);
		if (!refcount_inc_not_zero(&mw->ref))
			mw = NULL;
	}
	rcu_read_unlock();
	return mw;
}

void snaa_mw_put(struct snaa_mw *mw)
{
	if (refcount_dec_and_test(&mw->ref))
		complete(&mw->done);
}

/**
 * snaa_mw_access() - check a remote access through a window
 * @mw: the window, referenced
 * @qp: the responder's QP
 * @rkey: the R_Key of the packet
 * @va: first byte accessed
 * @len: bytes
 * @access: the IB_ACCESS_REMOTE_* right needed
 * @err: as for snaa_rkey_get()
 *
 * A type 1 window serves the QPs of its PD, a type 2B window only the
 * QP it was bound through (IBA 10.6.7.2).
 *
 * Return: the MR the window is bound to, referenced, or NULL.
 */
struct snaa_mr *snaa_mw_access(struct snaa_mw *mw, struct snaa_qp *qp,
			       u32 rkey, u64 va, u64 len, int access,
			       int *err)
{
	struct snaa_mr *mr = NULL;

	spin_lock_bh(&mw->lock);
	if (mw->rkey != rkey || !mw->mr || mw->pd != qp->ibqp.pd ||
	    (mw->type == IB_MW_TYPE_2 && mw->qpn != qp->ibqp.qp_num))
		*err = -EACCES;
	else if ((mw->access & access) != access)
		*err = -EPERM;
	else if (va < mw->va || len > mw->length ||
		 va - mw->va > mw->length - len)
		*err = -ERANGE;
	else
		mr = mw->mr;
	/* A bound window keeps its MR registered (num_mw). */
	if (mr)
		refcount_inc(&mr->ref);
	spin_unlock_bh(&mw->lock);
	return mr;
}

/*
 * The MR a bind names: of the QP's PD, bindable, holding the window's
 * range, with local write if the window grants remote write or atomics
 * (IBA 10.6.7.2.1).  Return it referenced and with one more window
 * counted, or NULL.
 */
static struct snaa_mr *snaa_mw_bind_mr(struct snaa_qp *qp,
				       const struct snaa_sqe *wqe)
{
	int access = wqe->bind.access;
	struct snaa_mr *mr;

	mr = snaa_mr_get(qp->sdev, wqe->bind.mr_lkey);
	if (!mr)
		return NULL;
	if (mr->fr || mr->dma || mr->ibmr.pd != qp->ibqp.pd ||
	    !(mr->access & IB_ACCESS_MW_BIND) ||
	    ((access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	     !(mr->access & IB_ACCESS_LOCAL_WRITE)) ||
	    (wqe->bind.length &&
	     snaa_mr_check(mr, qp->ibqp.pd, wqe->remote_addr,
			   wqe->bind.length, 0)) ||
	    !atomic_inc_unless_negative(&mr->num_mw)) {
		snaa_mr_put(mr);
		return NULL;
	}
	return mr;
}

/*
 * IB_WR_BIND_MW (IBA 10.6.7.2): bind a type 1 window again (length 0
 * unbinds it) or a free type 2 window, under a new key byte.  @rkey and
 * the new key must share their index bits.
 */
static int snaa_mw_bind(struct snaa_qp *qp, const struct snaa_sqe *wqe)
{
	struct snaa_mr *mr = NULL, *old = NULL;
	struct snaa_mw *mw;
	int err = -EINVAL;

	if ((wqe->imm_data >> 8) != (wqe->rkey >> 8) ||
	    (wqe->bind.access & ~SNAA_MW_ACCESS))
		return -EINVAL;
	mw = snaa_mw_get(qp->sdev, wqe->rkey);
	if (!mw)
		return -EINVAL;
	if (mw->pd != qp->ibqp.pd)
		goto out;
	if (wqe->bind.length || mw->type == IB_MW_TYPE_2) {
		mr = snaa_mw_bind_mr(qp, wqe);
		if (!mr)
			goto out;
	}
	/*
	 * The window is named by the index bits of its key, as hardware
	 * names it by index: after a type 2 window was bound, user space
	 * still holds the key it was allocated with (libibverbs updates
	 * mw->rkey only for ibv_bind_mw()).
	 */
	spin_lock_bh(&mw->lock);
	if (!mw->dead && (mw->type == IB_MW_TYPE_1 || !mw->mr)) {
		old = snaa_mw_unbind(mw);
		mw->rkey = wqe->imm_data;
		if (mr) {
			mw->mr = mr;
			mw->va = wqe->remote_addr;
			mw->length = wqe->bind.length;
			mw->access = wqe->bind.access;
			mw->qpn = qp->ibqp.qp_num;
		}
		err = 0;
	}
	spin_unlock_bh(&mw->lock);
	if (old)
		atomic_dec(&old->num_mw);
	if (mr) {
		/* a bound window keeps the count, not the reference */
		if (err)
			atomic_dec(&mr->num_mw);
		snaa_mr_put(mr);
	}
out:
	snaa_mw_put(mw);
	return err;
}

/*
 * Invalidate @rkey for @qp: a type 2 window of its PD (for a remote
 * invalidation, bound through @qp) or a fast-registration MR of its PD.
 */
static int snaa_invalidate(struct snaa_qp *qp, u32 rkey, bool remote)
{
	struct snaa_mr *mr = NULL;
	struct snaa_mw *mw;
	int err = -EINVAL;

	mw = snaa_mw_get(qp->sdev, rkey);
	if (mw) {
		spin_lock_bh(&mw->lock);
		if (mw->type == IB_MW_TYPE_2 && mw->rkey == rkey && mw->mr &&
		    mw->pd == qp->ibqp.pd &&
		    (!remote || mw->qpn == qp->ibqp.qp_num)) {
			mr = snaa_mw_unbind(mw);
			err = 0;
		}
		spin_unlock_bh(&mw->lock);
		if (mr)
			atomic_dec(&mr->num_mw);
		snaa_mw_put(mw);
		return err;
	}
	mr = snaa_mr_get_index(qp->sdev, rkey);
	if (!mr)
		return -EINVAL;
	err = snaa_mr_fr_invalidate(mr, qp->ibqp.pd, rkey);
	snaa_mr_unref(mr);
	return err;
}

/**
 * snaa_invalidate_remote() - the invalidation of a SEND with invalidate
 * @qp: the RC QP that received it
 * @rkey: the R_Key of its IETH
 *
 * Return: 0, or -EINVAL if @qp may not invalidate @rkey.
 */
int snaa_invalidate_remote(struct snaa_qp *qp, u32 rkey)
{
	return snaa_invalidate(qp, rkey, true);
}

/* IB_WR_REG_MR: kernel QPs only (a user SQE cannot name an ib_mr). */
static int snaa_fast_reg(struct snaa_qp *qp, const struct snaa_sqe *wqe)
{
	struct snaa_mr *mr;
	int err = -EINVAL;

	if (qp->user)
		return -EINVAL;
	mr = snaa_mr_get_index(qp->sdev, wqe->rkey);
	if (!mr)
		return -EINVAL;
	if (mr->ibmr.pd == qp->ibqp.pd)
		err = snaa_mr_fr_reg(mr, wqe->imm_data, wqe->bind.access);
	snaa_mr_unref(mr);
	return err;
}

/**
 * snaa_local_op() - execute a BIND_MW, LOCAL_INV or REG_MR work request
 * @qp: the QP whose send queue holds it; every older WQE has completed
 * @wqe: the WQE, copied out of the ring
 *
 * Context: qp->sq_lock held.
 * Return: the completion status: IB_WC_SUCCESS, IB_WC_MW_BIND_ERR for a
 * bind that cannot be done, IB_WC_LOC_QP_OP_ERR for another failure.
 */
u8 snaa_local_op(struct snaa_qp *qp, const struct snaa_sqe *wqe)
{
	switch (wqe->opcode) {
	case IB_WR_BIND_MW:
		return snaa_mw_bind(qp, wqe) ? IB_WC_MW_BIND_ERR :
					       IB_WC_SUCCESS;
	case IB_WR_LOCAL_INV:
		return snaa_invalidate(qp, wqe->imm_data, false) ?
		       IB_WC_LOC_QP_OP_ERR : IB_WC_SUCCESS;
	case IB_WR_REG_MR:
		return snaa_fast_reg(qp, wqe) ? IB_WC_LOC_QP_OP_ERR :
						IB_WC_SUCCESS;
	default:
		return IB_WC_LOC_QP_OP_ERR;
	}
}
