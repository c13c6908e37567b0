// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * snaa queue pairs: creation with their rings, the IBA state machine
 * (RESET, INIT, RTR, RTS, SQD, SQE, ERR), flushing, query and destroy.
 */

#include <rdma/ib_cache.h>
#include <rdma/uverbs_ioctl.h>

#include "snaa.h"

static const char *const snaa_qp_state_name[] = {
	[IB_QPS_RESET] = "RESET",
	[IB_QPS_INIT] = "INIT",
	[IB_QPS_RTR] = "RTR",
	[IB_QPS_RTS] = "RTS",
	[IB_QPS_SQD] = "SQD",
	[IB_QPS_SQE] = "SQE",
	[IB_QPS_ERR] = "ERR",
};

static u32 snaa_sq_stride(u32 max_sge, u32 max_inline)
{
	u32 data = max_t(u32, max_sge * sizeof(struct snaa_sge), max_inline);

	return roundup_pow_of_two(sizeof(struct snaa_sqe) + data);
}

static u32 snaa_rq_stride(u32 max_sge)
{
	return roundup_pow_of_two(sizeof(struct snaa_rqe) +
				  max_sge * sizeof(struct snaa_sge));
}

static int snaa_qp_check_cap(struct ib_qp_cap *cap)
{
	if (cap->max_send_wr > SNAA_MAX_QP_WR ||
	    cap->max_recv_wr > SNAA_MAX_QP_WR ||
	    cap->max_send_sge > SNAA_MAX_SGE ||
	    cap->max_recv_sge > SNAA_MAX_SGE ||
	    cap->max_inline_data > SNAA_MAX_INLINE)
		return -EINVAL;
	return 0;
}

/*
 * Enter @qref into the QP table under a random free QPN.  With at most
 * SNAA_MAX_QP QPs in a space of 2^24, a draw hits a free number with
 * probability > 99.9 %: running out of draws means the RNG is broken.
 */
static int snaa_qpn_alloc(struct snaa_dev *sdev, struct snaa_qp_ref *qref,
			  u32 *qpn)
{
	int tries, err = -EBUSY;
	u32 n;

	for (tries = 0; tries < 64 && err == -EBUSY; tries++) {
		n = get_random_u32_inclusive(SNAA_MIN_QPN, SNAA_MAX_QPN);
		err = xa_insert(&sdev->qp_xa, n, qref, GFP_KERNEL_ACCOUNT);
	}
	if (err)
		return err == -EBUSY ? -ENOMEM : err;
	*qpn = n;
	return 0;
}

/*
 * Take the QP out of the table and wait until no packet, timer or work
 * item holds it; its snaa_qp_ref is freed after an RCU grace period,
 * without waiting for one.
 */
static void snaa_qp_unpublish(struct snaa_qp *qp)
{
	struct snaa_qp_ref *qref = qp->qref;

	xa_erase(&qp->sdev->qp_xa, qp->ibqp.qp_num);
	snaa_qp_put(qp);
	wait_for_completion(&qp->done);
	kfree_rcu(qref, rcu);
}

int snaa_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		   struct ib_udata *udata)
{
	struct snaa_dev *sdev = to_snaa_dev(ibqp->device);
	struct snaa_ucontext *uctx = rdma_udata_to_drv_context(udata,
			struct snaa_ucontext, ibuc);
	struct ib_ucontext *ibuc = udata ? &uctx->ibuc : NULL;
	struct snaa_qp *qp = to_snaa_qp(ibqp);
	struct snaa_uresp_create_qp uresp = {};
	u32 qpn;
	int err;

	if (init->qp_type != IB_QPT_UC)
		return -EOPNOTSUPP;
	if (init->srq || init->create_flags)
		return -EOPNOTSUPP;
	err = snaa_qp_check_cap(&init->cap);
	if (err)
		return err;
	if (udata && udata->outlen < sizeof(uresp))
		return -EINVAL;
	if (atomic_inc_return(&sdev->num_qp) > SNAA_MAX_QP) {
		err = -ENOMEM;
		goto err_count;
	}

	qp->qref = kzalloc(sizeof(*qp->qref), GFP_KERNEL_ACCOUNT);
	if (!qp->qref) {
		err = -ENOMEM;
		goto err_count;
	}
	refcount_set(&qp->qref->ref, 1);
	qp->qref->qp = qp;
	qp->sdev = sdev;
	qp->user = !!udata;
	qp->state = IB_QPS_RESET;
	qp->scq = to_snaa_cq(init->send_cq);
	qp->rcq = to_snaa_cq(init->recv_cq);
	qp->sq_sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	qp->max_send_sge = init->cap.max_send_sge;
	qp->max_recv_sge = init->cap.max_recv_sge;
	qp->max_inline = init->cap.max_inline_data;
	qp->path_mtu = SNAA_IB_MTU_MIN;
	init_completion(&qp->done);
	spin_lock_init(&qp->state_lock);
	spin_lock_init(&qp->sq_post_lock);
	spin_lock_init(&qp->rq_lock);
	mutex_init(&qp->sq_mutex);
	INIT_WORK(&qp->sq_work, snaa_sq_work);

	err = snaa_queue_init(&qp->sq, init->cap.max_send_wr,
			      snaa_sq_stride(qp->max_send_sge, qp->max_inline),
			      ibuc);
	if (err)
		goto err_qref;
	/* The SQ starts idle: the first post rings the doorbell. */
	qp->sq.ring->flags = SNAA_RING_F_IDLE;
	err = snaa_queue_init(&qp->rq, init->cap.max_recv_wr,
			      snaa_rq_stride(qp->max_recv_sge), ibuc);
	if (err)
		goto err_sq;

	/*
	 * From here on the receive path can find the QP; in RESET it drops
	 * every packet, after looking at nothing but the fields set above.
	 */
	err = snaa_qpn_alloc(sdev, qp->qref, &qpn);
	if (err)
		goto err_rq;
	ibqp->qp_num = qpn;
	qp->tx_cpu = cpumask_local_spread(qpn, NUMA_NO_NODE);

	init->cap.max_send_wr = qp->sq.num;
	init->cap.max_recv_wr = qp->rq.num;

	if (udata) {
		uresp.sq_key = snaa_queue_key(&qp->sq);
		uresp.rq_key = snaa_queue_key(&qp->rq);
		uresp.sq_num = qp->sq.num;
		uresp.sq_stride = qp->sq.stride;
		uresp.sq_ring_size = qp->sq.size;
		uresp.rq_num = qp->rq.num;
		uresp.rq_stride = qp->rq.stride;
		uresp.rq_ring_size = qp->rq.size;
		uresp.qp_num = qpn;
		err = ib_copy_to_udata(udata, &uresp, sizeof(uresp));
		if (err)
			goto err_unpublish;
	}
	return 0;

err_unpublish:
	snaa_qp_unpublish(qp);
	qp->qref = NULL;	/* freed by snaa_qp_unpublish() */
err_rq:
	snaa_queue_free(&qp->rq);
err_sq:
	snaa_queue_free(&qp->sq);
err_qref:
	kfree(qp->qref);
err_count:
	atomic_dec(&sdev->num_qp);
	return err;
}

/**
 * snaa_qp_get() - look up a QP by number and take a reference
 * @sdev: the device
 * @qpn: QP number from a packet
 *
 * Context: any.
 * Return: the QP or NULL.
 */
struct snaa_qp *snaa_qp_get(struct snaa_dev *sdev, u32 qpn)
{
	struct snaa_qp_ref *qref;
	struct snaa_qp *qp = NULL;

	rcu_read_lock();
	qref = xa_load(&sdev->qp_xa, qpn);
	if (qref && refcount_inc_not_zero(&qref->ref))
		qp = qref->qp;
	rcu_read_unlock();
	return qp;
}

void snaa_qp_put(struct snaa_qp *qp)
{
	if (refcount_dec_and_test(&qp->qref->ref))
		complete(&qp->done);
}

/* Complete every RQE still posted with IB_WC_WR_FLUSH_ERR.  rq_lock held. */
void snaa_rq_flush(struct snaa_qp *qp)
{
	struct snaa_queue *q = &qp->rq;
	struct snaa_cqe cqe = {
		.qp_num = qp->ibqp.qp_num,
		.opcode = IB_WC_RECV,
		.status = IB_WC_WR_FLUSH_ERR,
	};
	struct snaa_rqe *rqe;
	u32 prod;

	lockdep_assert_held(&qp->rq_lock);
	snaa_recv_abort(qp);
	/* A held RQE is still at q->kidx: flushed below, never reused. */
	qp->recv.have_wqe = false;
	/*
	 * Posts from now on must kick us to be flushed; one that did not
	 * see the flag is below the producer we read after it.  Pairs
	 * with the poster's barrier between its producer store and its
	 * flags load.
	 */
	WRITE_ONCE(q->ring->flags, SNAA_RING_F_IDLE);
	smp_mb();
	prod = snaa_ring_producer(q);
	if (prod - q->kidx > q->num)	/* corrupt index from user space */
		prod = q->kidx + q->num;
	while (q->kidx != prod) {
		rqe = snaa_ring_slot(q, q->kidx);
		cqe.wr_id = READ_ONCE(rqe->wr_id);
		snaa_cq_post(qp->rcq, &cqe, qp, false);
		snaa_ring_publish_consumer(q, ++q->kidx);
	}
}

static void snaa_qp_enter_err(struct snaa_qp *qp)
{
	spin_lock_bh(&qp->rq_lock);
	snaa_rq_flush(qp);
	spin_unlock_bh(&qp->rq_lock);
	/* The send queue is flushed by its processor. */
	snaa_sq_schedule(qp);
}

/**
 * snaa_qp_error() - move a QP to the error state from the data path
 * @qp: the QP
 * @event: asynchronous event to raise, or 0 for none
 *
 * The send queue processor flushes both queues.  The event is raised by
 * snaa_qp_upcalls(), once the caller holds no lock of the QP.
 *
 * Context: any.
 */
void snaa_qp_error(struct snaa_qp *qp, enum ib_event_type event)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->state_lock, flags);
	if (qp->state == IB_QPS_ERR) {
		spin_unlock_irqrestore(&qp->state_lock, flags);
		return;
	}
	WRITE_ONCE(qp->state, IB_QPS_ERR);
	if (event)
		set_bit(event, &qp->upcalls);
	spin_unlock_irqrestore(&qp->state_lock, flags);
	WRITE_ONCE(qp->rq.ring->flags, SNAA_RING_F_IDLE);
	snaa_sq_schedule(qp);
}

/**
 * snaa_qp_upcalls() - raise what the data path of a QP left due
 * @qp: the QP
 *
 * Asynchronous events of the QP, then the handlers of its CQs.  Called
 * by every path that can complete work or raise an event, after it has
 * dropped the QP's locks, so that a consumer's handler may call any verb
 * (post, poll, modify) on the QP.
 *
 * Context: any, with no lock of the QP or its CQs held.
 */
void snaa_qp_upcalls(struct snaa_qp *qp)
{
	unsigned long ev;

	while ((ev = READ_ONCE(qp->upcalls))) {
		ev = __ffs(ev);
		if (!test_and_clear_bit(ev, &qp->upcalls))
			continue;
		if (qp->ibqp.event_handler) {
			struct ib_event event = {
				.device = qp->ibqp.device,
				.element.qp = &qp->ibqp,
				.event = ev,
			};

			qp->ibqp.event_handler(&event, qp->ibqp.qp_context);
		}
	}
	snaa_cq_upcalls(qp->scq);
	if (qp->rcq != qp->scq)
		snaa_cq_upcalls(qp->rcq);
}

static void snaa_qp_reset(struct snaa_qp *qp)
{
	/* Drop everything posted; both rings start over empty. */
	spin_lock_bh(&qp->rq_lock);
	snaa_recv_abort(qp);
	qp->recv.have_wqe = false;
	qp->rq.kidx = READ_ONCE(qp->rq.ring->producer);
	snaa_ring_publish_consumer(&qp->rq, qp->rq.kidx);
	WRITE_ONCE(qp->rq.ring->flags, 0);
	spin_unlock_bh(&qp->rq_lock);

	qp->send.busy = false;
	qp->sq.kidx = READ_ONCE(qp->sq.ring->producer);
	snaa_ring_publish_consumer(&qp->sq, qp->sq.kidx);
	WRITE_ONCE(qp->sq.ring->flags, SNAA_RING_F_IDLE);
}

/*
 * Validate a modify_qp request against the device and the QP, without
 * changing anything.  Return 0 or -EINVAL.
 */
static int snaa_modify_qp_check(struct snaa_qp *qp, struct ib_qp_attr *attr,
				int mask, enum ib_qp_state cur,
				enum ib_qp_state new)
{
	struct snaa_dev *sdev = qp->sdev;
	u32 mtu;

	/* The core passes IB_QP_CUR_STATE through: it must be the truth. */
	if ((mask & IB_QP_CUR_STATE) && attr->cur_qp_state != cur)
		return -EINVAL;
	if (!ib_modify_qp_is_ok(cur, new, qp->ibqp.qp_type, mask)) {
		snaa_dbg(sdev, "QP %u: %s -> %s with mask 0x%x refused\n",
			 qp->ibqp.qp_num, snaa_qp_state_name[cur],
			 snaa_qp_state_name[new], mask);
		return -EINVAL;
	}
	if ((mask & IB_QP_PORT) && attr->port_num != 1)
		return -EINVAL;
	if ((mask & IB_QP_PKEY_INDEX) && attr->pkey_index >= SNAA_PKEY_TBL_LEN)
		return -EINVAL;
	if (mask & IB_QP_PATH_MTU) {
		/* Packets leave with DF set: they must fit the netdev. */
		mtu = snaa_mtu_from_netdev(READ_ONCE(sdev->ndev->mtu));
		if (attr->path_mtu < IB_MTU_256 || attr->path_mtu > IB_MTU_4096 ||
		    ib_mtu_enum_to_int(attr->path_mtu) > mtu) {
			snaa_dbg(sdev, "QP %u: path MTU %d does not fit %s (MTU %u)\n",
				 qp->ibqp.qp_num,
				 ib_mtu_enum_to_int(attr->path_mtu),
				 netdev_name(sdev->ndev), sdev->ndev->mtu);
			return -EINVAL;
		}
	}
	if ((mask & IB_QP_ACCESS_FLAGS) &&
	    (attr->qp_access_flags & ~(IB_ACCESS_REMOTE_WRITE |
				       IB_ACCESS_REMOTE_READ |
				       IB_ACCESS_REMOTE_ATOMIC |
				       IB_ACCESS_LOCAL_WRITE)))
		return -EINVAL;
	if ((mask & IB_QP_DEST_QPN) && attr->dest_qp_num > SNAA_QPN_MASK)
		return -EINVAL;
	return 0;
}

/*
 * modify_qp is all or nothing: everything is checked and the new path
 * resolved before the first attribute changes.
 */
int snaa_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_udata *udata)
{
	struct snaa_qp *qp = to_snaa_qp(ibqp);
	struct snaa_dev *sdev = qp->sdev;
	struct snaa_av av = {};
	enum ib_qp_state cur, new;
	u32 dest_qpn;
	int err;

	if (mask & ~IB_QP_ATTR_STANDARD_BITS)
		return -EOPNOTSUPP;
	if (udata && (udata->inlen || udata->outlen))
		return -EINVAL;

	/* No send processing while attributes change. */
	mutex_lock(&qp->sq_mutex);
	cur = qp->state;
	new = (mask & IB_QP_STATE) ? attr->qp_state : cur;
	err = snaa_modify_qp_check(qp, attr, mask, cur, new);
	if (err)
		goto out;
	dest_qpn = (mask & IB_QP_DEST_QPN) ? attr->dest_qp_num : qp->dest_qpn;
	if (mask & IB_QP_AV) {
		err = snaa_av_init(sdev, &av, &attr->ah_attr, ibqp->qp_num,
				   dest_qpn, GFP_KERNEL_ACCOUNT);
		if (err)
			goto out;
	}

	/* Nothing fails from here on. */
	spin_lock_bh(&qp->rq_lock);
	if (mask & IB_QP_AV)
		swap(qp->av, av);
	qp->dest_qpn = dest_qpn;
	if (mask & IB_QP_ACCESS_FLAGS)
		qp->access = attr->qp_access_flags;
	if (mask & IB_QP_PKEY_INDEX)
		qp->pkey_index = attr->pkey_index;
	if (mask & IB_QP_QKEY)
		qp->qkey = attr->qkey;
	if (mask & IB_QP_PATH_MTU)
		qp->path_mtu = ib_mtu_enum_to_int(attr->path_mtu);
	if (mask & IB_QP_RQ_PSN) {
		qp->recv.epsn = attr->rq_psn & SNAA_PSN_MASK;
		qp->recv.in_msg = false;
	}
	spin_unlock_bh(&qp->rq_lock);
	/* The old path, if it was replaced. */
	snaa_av_release(&av);
	if (mask & IB_QP_AV)
		rdma_replace_ah_attr(&qp->ah_attr, &attr->ah_attr);
	if (mask & IB_QP_SQ_PSN)
		qp->sq_psn = attr->sq_psn & SNAA_PSN_MASK;

	if (new != cur) {
		spin_lock_bh(&qp->state_lock);
		WRITE_ONCE(qp->state, new);
		spin_unlock_bh(&qp->state_lock);
		snaa_dbg(sdev, "QP %u: %s -> %s\n", ibqp->qp_num,
			 snaa_qp_state_name[cur], snaa_qp_state_name[new]);
		if (new == IB_QPS_RESET)
			snaa_qp_reset(qp);
		else if (new == IB_QPS_ERR)
			snaa_qp_enter_err(qp);
		else if (new == IB_QPS_RTS)
			snaa_sq_schedule(qp);
	}
out:
	mutex_unlock(&qp->sq_mutex);
	snaa_qp_upcalls(qp);
	return err;
}

int snaa_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		  struct ib_qp_init_attr *init)
{
	struct snaa_qp *qp = to_snaa_qp(ibqp);

	memset(attr, 0, sizeof(*attr));
	memset(init, 0, sizeof(*init));

	mutex_lock(&qp->sq_mutex);
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	attr->path_mtu = ib_mtu_int_to_enum(qp->path_mtu);
	attr->qkey = qp->qkey;
	attr->rq_psn = qp->recv.epsn;
	attr->sq_psn = qp->sq_psn;
	attr->dest_qp_num = qp->dest_qpn;
	attr->qp_access_flags = qp->access;
	attr->pkey_index = qp->pkey_index;
	attr->port_num = 1;
	attr->sq_draining = 0;
	/* A copy without a GID attribute reference: the caller takes none. */
	attr->ah_attr = qp->ah_attr;
	attr->ah_attr.grh.sgid_attr = NULL;
	attr->cap.max_send_wr = qp->sq.num;
	attr->cap.max_recv_wr = qp->rq.num;
	attr->cap.max_send_sge = qp->max_send_sge;
	attr->cap.max_recv_sge = qp->max_recv_sge;
	attr->cap.max_inline_data = qp->max_inline;
	mutex_unlock(&qp->sq_mutex);

	init->qp_type = ibqp->qp_type;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->cap = attr->cap;
	init->sq_sig_type = qp->sq_sig_all ? IB_SIGNAL_ALL_WR : IB_SIGNAL_REQ_WR;
	return 0;
}

int snaa_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct snaa_qp *qp = to_snaa_qp(ibqp);
	struct snaa_dev *sdev = qp->sdev;

	/* No new lookups; wait for the packets that found the QP. */
	snaa_qp_unpublish(qp);

	WRITE_ONCE(qp->state, IB_QPS_RESET);
	cancel_work_sync(&qp->sq_work);
	/*
	 * A process may keep the rings mapped after the QP is gone (the
	 * device was removed under it): its next post must ring the
	 * doorbell, which then fails, instead of queueing silently.
	 */
	WRITE_ONCE(qp->sq.ring->flags, SNAA_RING_F_IDLE);
	WRITE_ONCE(qp->rq.ring->flags, SNAA_RING_F_IDLE);
	spin_lock_bh(&qp->rq_lock);
	snaa_recv_abort(qp);
	spin_unlock_bh(&qp->rq_lock);
	snaa_av_release(&qp->av);
	rdma_destroy_ah_attr(&qp->ah_attr);
	snaa_queue_free(&qp->rq);
	snaa_queue_free(&qp->sq);
	atomic_dec(&sdev->num_qp);
	return 0;
}
