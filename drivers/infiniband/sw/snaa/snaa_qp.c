// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * snaa queue pairs: RC, UC, UD and the GSI QP (QP1) with their rings,
 * the IBA state machine (RESET, INIT, RTR, RTS, SQD, SQE, ERR),
 * flushing, query and destroy.
 */

#include <linux/debugfs.h>
#include <linux/delay.h>

#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>
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
 * Enter @qref into the QP table: QPN 1 for the GSI QP, @fixed if set
 * (-EBUSY if it is taken), else a random free QPN.  With at most
 * SNAA_MAX_QP QPs in a space of 2^24, a draw hits a free number with
 * probability > 99.9 %: running out of draws (-ENOMEM) means the RNG is
 * broken.
 */
static int snaa_qpn_alloc(struct snaa_dev *sdev, struct snaa_qp_ref *qref,
			  enum ib_qp_type type, u32 fixed, u32 *qpn)
{
	int err;

	if (type == IB_QPT_GSI)
		fixed = 1;
	if (fixed)
		err = snaa_table_insert(&sdev->qp_table, &qref->tn, fixed);
	else
		err = snaa_table_insert_random(&sdev->qp_table, &qref->tn,
					       SNAA_MIN_QPN, SNAA_MAX_QPN);
	if (!err)
		*qpn = qref->tn.id;
	return err;
}

/*
 * The driver part of a create_qp request, if the provider sent one.
 * Return 0 (@req zeroed if there is none) or a negative errno.
 */
static int snaa_create_qp_ureq(struct ib_udata *udata,
			       struct snaa_ureq_create_qp *req)
{
	int err;

	memset(req, 0, sizeof(*req));
	if (!udata || !udata->inlen)
		return 0;
	if (udata->inlen > sizeof(*req) &&
	    !ib_is_udata_cleared(udata, sizeof(*req),
				 udata->inlen - sizeof(*req)))
		return -EOPNOTSUPP;
	err = ib_copy_from_udata(req, udata, min(udata->inlen, sizeof(*req)));
	if (err)
		return err;
	if (req->flags & ~(SNAA_QP_F_FIXED_QPN | SNAA_QP_F_WCUBUF))
		return -EOPNOTSUPP;
	if (req->flags & SNAA_QP_F_FIXED_QPN) {
		if (req->qpn < SNAA_FIXED_QPN_MIN ||
		    req->qpn > SNAA_FIXED_QPN_MAX)
			return -EINVAL;
		/* A well-known QPN: not for anyone to squat on. */
		if (!capable(CAP_NET_ADMIN))
			return -EPERM;
	}
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

	snaa_table_remove(&qp->sdev->qp_table, &qref->tn);
	snaa_qp_put(qp);
	wait_for_completion(&qp->done);
	kfree_rcu(qref, rcu);
}

/* Drop the AH references of WQEs that were never completed. */
static void snaa_qp_put_ahs(struct snaa_qp *qp)
{
	u32 i;

	for (i = 0; i < qp->sq.num; i++) {
		struct snaa_swqe *w = snaa_swqe(qp, i);

		if (w->aav) {
			snaa_ah_av_put(w->aav);
			w->aav = NULL;
		}
		if (qp->sq_ahs && qp->sq_ahs[i]) {
			snaa_ah_av_put(qp->sq_ahs[i]);
			qp->sq_ahs[i] = NULL;
		}
	}
}

/* What create_qp allocates besides the rings; freed by snaa_qp_free(). */
static int snaa_qp_alloc(struct snaa_qp *qp)
{
	qp->swq_stride = sizeof(struct snaa_swqe) + qp->sq.stride -
			 sizeof(struct snaa_sqe);
	qp->swq = kvcalloc(qp->sq.num, qp->swq_stride, GFP_KERNEL_ACCOUNT);
	if (!qp->swq)
		return -ENOMEM;
	if (snaa_qp_ud(qp) && !qp->user) {
		qp->sq_ahs = kvcalloc(qp->sq.num, sizeof(*qp->sq_ahs),
				      GFP_KERNEL_ACCOUNT);
		if (!qp->sq_ahs)
			return -ENOMEM;
	}
	if (qp->ibqp.qp_type == IB_QPT_RC) {
		qp->recv.res = kcalloc(SNAA_MAX_RD_ATOMIC,
				       sizeof(*qp->recv.res),
				       GFP_KERNEL_ACCOUNT);
		if (!qp->recv.res)
			return -ENOMEM;
	}
	return 0;
}

static void snaa_qp_free(struct snaa_qp *qp)
{
	snaa_wcubuf_destroy(qp);
	if (qp->swq)
		snaa_qp_put_ahs(qp);
	kvfree(qp->swq);
	kvfree(qp->sq_ahs);
	kfree(qp->recv.res);
	qp->swq = NULL;
	qp->sq_ahs = NULL;
	qp->recv.res = NULL;
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
	struct snaa_ureq_create_qp ureq;
	size_t resp_len;
	u32 qpn;
	int err;

	switch (init->qp_type) {
	case IB_QPT_RC:
	case IB_QPT_UC:
	case IB_QPT_UD:
		break;
	case IB_QPT_GSI:
		if (udata || init->port_num != 1)
			return -EINVAL;
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (init->create_flags)
		return -EOPNOTSUPP;
	if (init->srq) {
		/* The receive WQEs come from the SRQ: no RQ of its own. */
		init->cap.max_recv_wr = 0;
		init->cap.max_recv_sge = 0;
	}
	err = snaa_qp_check_cap(&init->cap);
	if (err)
		return err;
	/* Older providers know the response up to @reserved only. */
	resp_len = udata ? min(udata->outlen, sizeof(uresp)) : 0;
	if (udata && resp_len < offsetofend(typeof(uresp), reserved))
		return -EINVAL;
	err = snaa_create_qp_ureq(udata, &ureq);
	if (err)
		return err;
	if ((ureq.flags & SNAA_QP_F_WCUBUF) &&
	    resp_len < offsetofend(typeof(uresp), wcubuf_rkey))
		return -EINVAL;
	if (!snaa_obj_take(&sdev->num_qp, SNAA_MAX_QP, !!udata))
		return -ENOMEM;

	qp->qref = kzalloc(sizeof(*qp->qref), GFP_KERNEL_ACCOUNT);
	if (!qp->qref) {
		err = -ENOMEM;
		goto err_count;
	}
	refcount_set(&qp->qref->ref, 1);
	qp->qref->qp = qp;
	qp->sdev = sdev;
	qp->user = !!udata;
	qp->uctx = ibuc;
	qp->state = IB_QPS_RESET;
	qp->scq = to_snaa_cq(init->send_cq);
	qp->rcq = to_snaa_cq(init->recv_cq);
	qp->srq = init->srq ? to_snaa_srq(init->srq) : NULL;
	qp->sq_sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	qp->max_send_sge = init->cap.max_send_sge;
	qp->max_recv_sge = init->cap.max_recv_sge;
	qp->max_inline = init->cap.max_inline_data;
	qp->path_mtu = SNAA_IB_MTU_MIN;
	/* IBA defaults for RC until modify_qp sets them */
	qp->timeout = 14;
	qp->retry_cnt = 7;
	qp->rnr_retry = 7;
	qp->min_rnr_timer = IB_RNR_TIMER_000_32;
	if (init->qp_type == IB_QPT_GSI)
		qp->qkey = IB_QP1_QKEY;
	init_completion(&qp->done);
	spin_lock_init(&qp->state_lock);
	spin_lock_init(&qp->sq_post_lock);
	spin_lock_init(&qp->sq_lock);
	spin_lock_init(&qp->rq_lock);
	mutex_init(&qp->sq_mutex);
	INIT_WORK(&qp->sq_work, snaa_sq_work);
	snaa_comp_init(qp);

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
	err = snaa_qp_alloc(qp);
	if (err)
		goto err_rq;
	if (ureq.flags & SNAA_QP_F_WCUBUF) {
		err = snaa_wcubuf_create(qp, &ureq, ibuc, &uresp);
		if (err)
			goto err_rq;
	}

	/*
	 * From here on the receive path can find the QP; in RESET it drops
	 * every packet, after looking at nothing but the fields set above.
	 */
	err = snaa_qpn_alloc(sdev, qp->qref, init->qp_type,
			     (ureq.flags & SNAA_QP_F_FIXED_QPN) ? ureq.qpn : 0,
			     &qpn);
	if (err)
		goto err_rq;
	ibqp->qp_num = qpn;
	/* Where the creator runs: usually where it posts from. */
	qp->tx_cpu = raw_smp_processor_id();

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
		err = ib_copy_to_udata(udata, &uresp, resp_len);
		if (err)
			goto err_unpublish;
	}
	return 0;

err_unpublish:
	snaa_qp_unpublish(qp);
	qp->qref = NULL;	/* freed by snaa_qp_unpublish() */
err_rq:
	snaa_qp_free(qp);
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
	struct snaa_tnode *tn;

	rcu_read_lock();
	tn = snaa_table_find(&sdev->qp_table, qpn);
	if (tn) {
		qref = container_of(tn, struct snaa_qp_ref, tn);
		if (refcount_inc_not_zero(&qref->ref))
			qp = qref->qp;
	}
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
	if (qp->srq) {
		/*
		 * The WQE the QP took from its SRQ is the only one it has;
		 * the SRQ's stay for the other QPs.  IBA 10.8.1: the last
		 * WQE reached event, once per entry into the error state.
		 */
		if (qp->recv.have_wqe) {
			cqe.wr_id = qp->recv.wqe.wr_id;
			snaa_cq_post(qp->rcq, &cqe, qp, false);
		}
		qp->recv.have_wqe = false;
		if (!qp->recv.last_wqe_sent) {
			qp->recv.last_wqe_sent = true;
			set_bit(IB_EVENT_QP_LAST_WQE_REACHED, &qp->upcalls);
		}
		return;
	}
	/* A held RQE is still at q->kidx: flushed below, never reused. */
	qp->recv.have_wqe = false;
	/*
	 * Posts from now on must kick us to be flushed; one that did not
	 * see the flag is below the producer we read after it.  Pairs
	 * with the poster's barrier between its producer store and its
	 * flags load.
	 */
	WRITE_ONCE(q->ring->flags, SNAA_RING_F_IDLE);
	smp_mb();	/* the flag's store before the producer's load */
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
	snaa_dbg(qp->sdev, "QP %u: %s -> ERR (event %d) from %pS\n",
		 qp->ibqp.qp_num, snaa_qp_state_name[qp->state], event,
		 __builtin_return_address(0));
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
	if (qp->srq)
		snaa_srq_upcalls(qp->srq);
}

/* Drop everything posted; both rings start over empty.  sq_mutex held. */
static void snaa_qp_reset(struct snaa_qp *qp)
{
	spin_lock_bh(&qp->rq_lock);
	snaa_resp_reset(qp);
	snaa_wcubuf_reset(qp);
	qp->rq.kidx = READ_ONCE(qp->rq.ring->producer);
	snaa_ring_publish_consumer(&qp->rq, qp->rq.kidx);
	WRITE_ONCE(qp->rq.ring->flags, 0);
	spin_unlock_bh(&qp->rq_lock);

	spin_lock_bh(&qp->sq_lock);
	snaa_comp_stop_timers(qp);
	snaa_qp_put_ahs(qp);
	qp->sq.kidx = READ_ONCE(qp->sq.ring->producer);
	snaa_ring_publish_consumer(&qp->sq, qp->sq.kidx);
	memset(&qp->req, 0, sizeof(qp->req));
	qp->req.head = qp->req.cur = qp->sq.kidx;
	memset(&qp->comp, 0, sizeof(qp->comp));
	WRITE_ONCE(qp->sq.ring->flags, SNAA_RING_F_IDLE);
	spin_unlock_bh(&qp->sq_lock);
}

/* The attributes each QP type takes beyond what the IBA table checks. */
#define SNAA_QP_ATTRS	(IB_QP_STATE | IB_QP_CUR_STATE |		\
			 IB_QP_EN_SQD_ASYNC_NOTIFY | IB_QP_ACCESS_FLAGS |\
			 IB_QP_PKEY_INDEX | IB_QP_PORT | IB_QP_QKEY |	\
			 IB_QP_AV | IB_QP_PATH_MTU | IB_QP_TIMEOUT |	\
			 IB_QP_RETRY_CNT | IB_QP_RNR_RETRY |		\
			 IB_QP_RQ_PSN | IB_QP_MAX_QP_RD_ATOMIC |	\
			 IB_QP_MIN_RNR_TIMER | IB_QP_SQ_PSN |		\
			 IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_PATH_MIG_STATE | \
			 IB_QP_CAP | IB_QP_DEST_QPN)

/*
 * Validate a modify_qp request against the device and the QP, without
 * changing anything.  Return 0 or -EINVAL / -EOPNOTSUPP.
 */
static int snaa_modify_qp_check(struct snaa_qp *qp, struct ib_qp_attr *attr,
				int mask, enum ib_qp_state cur,
				enum ib_qp_state new)
{
	struct snaa_dev *sdev = qp->sdev;
	u32 mtu;

	if (mask & ~SNAA_QP_ATTRS)
		return -EOPNOTSUPP;	/* alternate paths: no APM */
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
				       IB_ACCESS_LOCAL_WRITE |
				       SNAA_QP_ACCESS_IGNORED)))
		return -EINVAL;
	if ((mask & IB_QP_DEST_QPN) && attr->dest_qp_num > SNAA_QPN_MASK)
		return -EINVAL;
	if ((mask & IB_QP_TIMEOUT) && attr->timeout > 31)
		return -EINVAL;
	if ((mask & IB_QP_RETRY_CNT) && attr->retry_cnt > 7)
		return -EINVAL;
	if ((mask & IB_QP_RNR_RETRY) && attr->rnr_retry > 7)
		return -EINVAL;
	if ((mask & IB_QP_MIN_RNR_TIMER) && attr->min_rnr_timer > 31)
		return -EINVAL;
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic > SNAA_MAX_RD_ATOMIC)
		return -EINVAL;
	/*
	 * The responder resources are a ring of max_dest_rd_atomic slots
	 * that answers may still be read from (duplicates included): its
	 * size is set on the way to RTR, not changed under them (SQD).
	 */
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    cur != IB_QPS_RESET && cur != IB_QPS_INIT &&
	    attr->max_dest_rd_atomic != qp->max_dest_rd_atomic) {
		snaa_dbg(sdev, "QP %u: max_dest_rd_atomic changes only before RTR\n",
			 qp->ibqp.qp_num);
		return -EINVAL;
	}
	/* The caps cannot change: the rings have their size. */
	if ((mask & IB_QP_CAP) &&
	    (attr->cap.max_send_wr > qp->sq.num ||
	     attr->cap.max_recv_wr > qp->rq.num ||
	     attr->cap.max_send_sge > qp->max_send_sge ||
	     attr->cap.max_recv_sge > qp->max_recv_sge ||
	     attr->cap.max_inline_data > qp->max_inline))
		return -EINVAL;
	return 0;
}

/* Set the attributes of a checked modify_qp.  Both QP locks held. */
static void snaa_modify_qp_apply(struct snaa_qp *qp, struct ib_qp_attr *attr,
				 int mask)
{
	if (mask & IB_QP_ACCESS_FLAGS)
		qp->access = attr->qp_access_flags;
	if (mask & IB_QP_PKEY_INDEX)
		qp->pkey_index = attr->pkey_index;
	if (mask & IB_QP_QKEY)
		qp->qkey = attr->qkey;
	if (mask & IB_QP_PATH_MTU)
		qp->path_mtu = ib_mtu_enum_to_int(attr->path_mtu);
	if (mask & IB_QP_TIMEOUT)
		qp->timeout = attr->timeout;
	if (mask & IB_QP_RETRY_CNT)
		qp->retry_cnt = attr->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		qp->rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_MIN_RNR_TIMER)
		qp->min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		/*
		 * The initiator depth only bounds what we keep outstanding:
		 * fewer than the peer's responder allows is always safe,
		 * and peers offer their own limit (rdma_rxe: 128), which
		 * perftest and rdma_cm pass on as is.  Clamped, as
		 * hardware does.
		 */
		qp->max_rd_atomic = min_t(u8, attr->max_rd_atomic,
					  SNAA_MAX_RD_ATOMIC);
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		qp->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & IB_QP_RQ_PSN) {
		qp->recv.epsn = attr->rq_psn & SNAA_PSN_MASK;
		qp->recv.in_msg = false;
	}
	if (mask & IB_QP_SQ_PSN) {
		snaa_wcubuf_set_psn(qp, attr->sq_psn);
		qp->req.psn = attr->sq_psn & SNAA_PSN_MASK;
		qp->req.psn_max = qp->req.psn;
		qp->req.cwnd = SNAA_RC_WINDOW;
		qp->req.hi = qp->req.cur;
		qp->comp.psn = qp->req.psn;
		qp->comp.gap = false;
		qp->comp.nak_valid = false;
		qp->comp.err_nak = false;
	}
	if (mask & (IB_QP_RETRY_CNT | IB_QP_STATE))
		qp->comp.retry_left = qp->retry_cnt;
	if (mask & (IB_QP_RNR_RETRY | IB_QP_STATE))
		qp->comp.rnr_left = qp->rnr_retry;
}

/*
 * Fault injection for tests of what may change under a modify_qp:
 * snaa/<device>/modify_qp_delay_ms in debugfs makes every modify_qp of
 * the device sleep that long (at most 10 s) between its checks and
 * applying them, so that a test can make the data path move the QP to
 * the error state in between.  0 (the default): no pause.
 */
void snaa_qp_debugfs_init(struct snaa_dev *sdev)
{
	debugfs_create_u32("modify_qp_delay_ms", 0600, sdev->debugfs,
			   &sdev->modify_qp_delay_ms);
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
	u32 dest_qpn, delay;
	int err;

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
	delay = READ_ONCE(sdev->modify_qp_delay_ms);
	if (unlikely(delay))
		msleep(min(delay, 10000U));

	/*
	 * Nothing fails from here on but a change of state under us
	 * (below).  The path is read by the responder (rq_lock, and its
	 * responses sent outside the lock: wait until none is being sent)
	 * and the completer (sq_lock).
	 */
	spin_lock_bh(&qp->rq_lock);
	while (qp->recv.tx_owner) {
		spin_unlock_bh(&qp->rq_lock);
		cond_resched();
		spin_lock_bh(&qp->rq_lock);
	}
	spin_lock(&qp->sq_lock);
	/*
	 * The data path may have moved the QP to the error state (a fatal
	 * NAK, a local error) since the checks: they were made for a
	 * state it is no longer in, and writing the new state would undo
	 * an error the consumer has been told of.  Checked under every
	 * lock the state is written under, so that the attributes and the
	 * state change together or not at all.  RESET and ERR may be
	 * entered from any state (and take no other attribute).
	 */
	spin_lock(&qp->state_lock);
	if (qp->state != cur && (new == IB_QPS_RESET || new == IB_QPS_ERR))
		cur = qp->state;
	if (qp->state == cur) {
		if (mask & IB_QP_AV)
			swap(qp->av, av);
		qp->dest_qpn = dest_qpn;
		snaa_modify_qp_apply(qp, attr, mask);
		WRITE_ONCE(qp->state, new);
	} else {
		err = -EINVAL;
	}
	spin_unlock(&qp->state_lock);
	spin_unlock(&qp->sq_lock);
	spin_unlock_bh(&qp->rq_lock);
	/* The old path if it was replaced, else the unused new one. */
	snaa_av_release(&av);
	if (err) {
		snaa_dbg(sdev, "QP %u: went to %s during modify_qp from %s\n",
			 ibqp->qp_num, snaa_qp_state_name[READ_ONCE(qp->state)],
			 snaa_qp_state_name[cur]);
		goto out;
	}
	if (mask & IB_QP_AV)
		rdma_replace_ah_attr(&qp->ah_attr, &attr->ah_attr);

	if (new != cur) {
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
	spin_lock_bh(&qp->rq_lock);
	attr->rq_psn = qp->recv.epsn;
	spin_unlock_bh(&qp->rq_lock);
	spin_lock_bh(&qp->sq_lock);
	attr->sq_psn = qp->req.psn;
	spin_unlock_bh(&qp->sq_lock);
	attr->dest_qp_num = qp->dest_qpn;
	attr->qp_access_flags = qp->access;
	attr->pkey_index = qp->pkey_index;
	attr->port_num = 1;
	attr->sq_draining = 0;
	attr->timeout = qp->timeout;
	attr->retry_cnt = qp->retry_cnt;
	attr->rnr_retry = qp->rnr_retry;
	attr->min_rnr_timer = qp->min_rnr_timer;
	attr->max_rd_atomic = qp->max_rd_atomic;
	attr->max_dest_rd_atomic = qp->max_dest_rd_atomic;
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
	/* Timers first: they queue the work, which may arm them. */
	snaa_comp_shutdown(qp);
	cancel_work_sync(&qp->sq_work);
	/*
	 * A process may keep the rings mapped after the QP is gone (the
	 * device was removed under it): its next post must ring the
	 * doorbell, which then fails, instead of queueing silently.
	 */
	WRITE_ONCE(qp->sq.ring->flags, SNAA_RING_F_IDLE);
	WRITE_ONCE(qp->rq.ring->flags, SNAA_RING_F_IDLE);
	snaa_av_release(&qp->av);
	rdma_destroy_ah_attr(&qp->ah_attr);
	snaa_qp_free(qp);
	snaa_queue_free(&qp->rq);
	snaa_queue_free(&qp->sq);
	atomic_dec(&sdev->num_qp);
	return 0;
}
