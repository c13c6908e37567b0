// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * snaa shared receive queues.  An SRQ is a receive ring of its own
 * (struct snaa_rqe entries, mapped into user space like a QP's RQ) from
 * which every QP attached to it takes its receive WQEs.  A QP takes a WQE
 * out of the SRQ when a message starts (snaa_srq_fetch()) and from then
 * on holds it as it would hold one of its own RQ; a QP that enters the
 * error state flushes the WQE it holds, never the SRQ's, and raises
 * IB_EVENT_QP_LAST_WQE_REACHED.  The SRQ limit event fires once when
 * the WQEs left drop below the armed limit.
 *
 * Locking: srq->lock protects the kernel's consumer index and the limit;
 * it nests inside a QP's rq_lock.  Kernel posters take it too.
 */

#include "snaa.h"

int snaa_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		    struct ib_udata *udata)
{
	struct snaa_dev *sdev = to_snaa_dev(ibsrq->device);
	struct snaa_ucontext *uctx = rdma_udata_to_drv_context(udata,
			struct snaa_ucontext, ibuc);
	struct snaa_srq *srq = to_snaa_srq(ibsrq);
	struct snaa_uresp_create_srq uresp = {};
	struct ib_srq_attr *attr = &init->attr;
	int err;

	if (init->srq_type != IB_SRQT_BASIC)
		return -EOPNOTSUPP;
	if (!attr->max_wr || attr->max_wr > SNAA_MAX_SRQ_WR ||
	    attr->max_sge > SNAA_MAX_SGE || attr->srq_limit > attr->max_wr)
		return -EINVAL;
	if (udata && udata->outlen < sizeof(uresp))
		return -EINVAL;
	if (!snaa_obj_take(&sdev->num_srq, SNAA_MAX_SRQ, !!udata))
		return -ENOMEM;
	spin_lock_init(&srq->lock);
	srq->sdev = sdev;
	srq->user = !!udata;
	srq->max_sge = max_t(u32, attr->max_sge, 1);
	err = snaa_queue_init(&srq->q, attr->max_wr,
			      snaa_rq_stride(srq->max_sge),
			      udata ? &uctx->ibuc : NULL);
	if (err)
		goto err_count;
	srq->limit = attr->srq_limit;
	attr->max_wr = srq->q.num;
	attr->max_sge = srq->max_sge;

	if (udata) {
		uresp.srq_key = snaa_queue_key(&srq->q);
		uresp.num = srq->q.num;
		uresp.stride = srq->q.stride;
		uresp.ring_size = srq->q.size;
		err = ib_copy_to_udata(udata, &uresp, sizeof(uresp));
		if (err)
			goto err_queue;
	}
	return 0;

err_queue:
	snaa_queue_free(&srq->q);
err_count:
	atomic_dec(&sdev->num_srq);
	return err;
}

int snaa_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		    enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct snaa_srq *srq = to_snaa_srq(ibsrq);

	if (udata && (udata->inlen || udata->outlen))
		return -EINVAL;
	if (mask & ~IB_SRQ_LIMIT)
		return -EOPNOTSUPP;	/* no resize */
	if (attr->srq_limit > srq->q.num)
		return -EINVAL;
	spin_lock_bh(&srq->lock);
	srq->limit = attr->srq_limit;	/* arms it; 0 disarms */
	spin_unlock_bh(&srq->lock);
	return 0;
}

int snaa_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct snaa_srq *srq = to_snaa_srq(ibsrq);

	spin_lock_bh(&srq->lock);
	attr->max_wr = srq->q.num;
	attr->max_sge = srq->max_sge;
	attr->srq_limit = srq->limit;
	spin_unlock_bh(&srq->lock);
	return 0;
}

int snaa_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct snaa_srq *srq = to_snaa_srq(ibsrq);

	/* The core destroys the QPs using it first (usecnt). */
	WRITE_ONCE(srq->q.ring->flags, SNAA_RING_F_IDLE);
	snaa_queue_free(&srq->q);
	atomic_dec(&srq->sdev->num_srq);
	return 0;
}

int snaa_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad_wr)
{
	struct snaa_srq *srq = to_snaa_srq(ibsrq);
	unsigned long flags;
	int err = 0;

	/* User SRQs post into the mapped ring, with no doorbell. */
	if (srq->user)
		return wr ? -EINVAL : 0;
	spin_lock_irqsave(&srq->lock, flags);
	for (; wr; wr = wr->next) {
		err = snaa_rqe_post(&srq->q, srq->max_sge, wr);
		if (err) {
			*bad_wr = wr;
			break;
		}
	}
	spin_unlock_irqrestore(&srq->lock, flags);
	return err;
}

/**
 * snaa_srq_fetch() - take the next receive WQE of an SRQ for a QP
 * @srq: the SRQ
 * @wqe: gets the entry's header
 * @sge: gets its SGEs (SNAA_MAX_SGE room)
 *
 * The entry is consumed: from now on the QP holds it.  If that leaves
 * fewer entries than the armed limit, the limit is disarmed and the
 * limit event is due (snaa_srq_upcalls()).
 *
 * Context: softirq, the QP's rq_lock held.
 * Return: 0, -ENOENT if the SRQ is empty, -EPROTO if user space corrupted
 * its index, -EINVAL for an entry with too many SGEs (consumed).
 */
int snaa_srq_fetch(struct snaa_srq *srq, struct snaa_rqe *wqe,
		   struct snaa_sge *sge)
{
	struct snaa_queue *q = &srq->q;
	const struct snaa_rqe *slot;
	int err = 0;
	u32 prod;

	spin_lock(&srq->lock);
	prod = snaa_ring_producer(q);
	if (prod == q->kidx) {
		err = -ENOENT;
		goto out;
	}
	if (prod - q->kidx > q->num) {
		err = -EPROTO;
		goto out;
	}
	slot = snaa_ring_slot(q, q->kidx);
	memcpy(wqe, slot, sizeof(*wqe));
	if (wqe->num_sge > srq->max_sge)
		err = -EINVAL;
	else
		memcpy(sge, slot->sge, wqe->num_sge * sizeof(*sge));
	snaa_ring_publish_consumer(q, ++q->kidx);
	if (srq->limit && prod - q->kidx < srq->limit) {
		srq->limit = 0;
		set_bit(0, &srq->upcalls);
	}
out:
	spin_unlock(&srq->lock);
	return err;
}

/* Raise the limit event if it is due.  No lock held. */
void snaa_srq_upcalls(struct snaa_srq *srq)
{
	struct ib_event event = {
		.device = srq->ibsrq.device,
		.element.srq = &srq->ibsrq,
		.event = IB_EVENT_SRQ_LIMIT_REACHED,
	};

	if (!test_and_clear_bit(0, &srq->upcalls))
		return;
	if (srq->ibsrq.event_handler)
		srq->ibsrq.event_handler(&event, srq->ibsrq.srq_context);
}
