// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * snaa completion queues.  The kernel produces CQEs into the ring; user
 * space (or snaa_poll_cq() for kernel consumers) consumes them.
 */

#include <rdma/uverbs_ioctl.h>

#include "snaa.h"

/* Kernel CQ entries also carry the QP pointer ib_wc needs. */
struct snaa_kcqe {
	struct snaa_cqe cqe;
	struct ib_qp *qp;
};

/* A CQ for user space (@udata) or for a kernel consumer (NULL). */
static int snaa_cq_create(struct ib_cq *ibcq,
			  const struct ib_cq_init_attr *attr,
			  struct ib_udata *udata)
{
	struct snaa_dev *sdev = to_snaa_dev(ibcq->device);
	struct snaa_ucontext *uctx = rdma_udata_to_drv_context(udata,
			struct snaa_ucontext, ibuc);
	struct snaa_cq *cq = to_snaa_cq(ibcq);
	struct snaa_uresp_create_cq uresp = {};
	int err;

	if (attr->flags)
		return -EOPNOTSUPP;
	if (attr->cqe < 1 || attr->cqe > SNAA_MAX_CQE)
		return -EINVAL;
	if (udata && udata->outlen < sizeof(uresp))
		return -EINVAL;
	if (!snaa_obj_take(&sdev->num_cq, SNAA_MAX_CQ, !!udata))
		return -ENOMEM;

	spin_lock_init(&cq->lock);
	cq->user = !!udata;
	err = snaa_queue_init(&cq->q, attr->cqe,
			      udata ? sizeof(struct snaa_cqe) :
				      sizeof(struct snaa_kcqe),
			      udata ? &uctx->ibuc : NULL);
	if (err)
		goto err_count;
	ibcq->cqe = cq->q.num;

	if (udata) {
		uresp.cq_key = snaa_queue_key(&cq->q);
		uresp.num_cqe = cq->q.num;
		uresp.cqe_size = sizeof(struct snaa_cqe);
		uresp.ring_size = cq->q.size;
		err = ib_copy_to_udata(udata, &uresp, sizeof(uresp));
		if (err)
			goto err_queue;
	}
	return 0;

err_queue:
	snaa_queue_free(&cq->q);
err_count:
	atomic_dec(&sdev->num_cq);
	return err;
}

int snaa_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		   SNAA_CREATE_CQ_UARG *uarg)
{
	return snaa_cq_create(ibcq, attr, snaa_create_cq_udata(uarg));
}

/*
 * On kernels with ib_device_ops.create_user_cq (compat.h), the CQs of
 * user space come here and create_cq makes kernel CQs only.
 */
int snaa_create_user_cq(struct ib_cq *ibcq,
			const struct ib_cq_init_attr *attr,
			struct uverbs_attr_bundle *attrs)
{
	if (snaa_cq_user_buffer(attrs))
		return -EOPNOTSUPP;
	return snaa_cq_create(ibcq, attr, &attrs->driver_udata);
}

int snaa_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct snaa_cq *cq = to_snaa_cq(ibcq);

	snaa_queue_free(&cq->q);
	atomic_dec(&to_snaa_dev(ibcq->device)->num_cq);
	return 0;
}

/**
 * snaa_cq_post() - add a completion
 * @cq: the CQ
 * @cqe: the entry
 * @qp: the QP the completion belongs to
 * @solicited: the completion is solicited (SE bit)
 *
 * Handlers are not called here, as the caller may hold QP locks that a
 * handler's own verbs take: if the CQ is armed for this completion, the
 * completion handler is marked due, and snaa_cq_upcalls() (normally
 * through snaa_qp_upcalls()) calls it once the caller holds no lock.
 *
 * A full CQ loses the entry: IBA 11.4.2.1 has the CQ enter the error
 * state, which it keeps until it is resized (IB_EVENT_CQ_ERR is marked
 * due once), and every QP completing into it from then on enter the
 * error state with IB_EVENT_QP_FATAL.
 *
 * Context: any (takes cq->lock with interrupts saved).
 * Return: 0, or -ENOSPC if the CQ is (or just became) in error.
 */
int snaa_cq_post(struct snaa_cq *cq, const struct snaa_cqe *cqe,
		 struct snaa_qp *qp, bool solicited)
{
	struct snaa_queue *q = &cq->q;
	unsigned long flags;
	void *slot;
	u32 cons;

	spin_lock_irqsave(&cq->lock, flags);
	cons = snaa_ring_consumer(q);
	if (cq->overflow || q->kidx - cons >= q->num) {
		if (!cq->overflow) {
			cq->overflow = true;
			set_bit(SNAA_CQ_UPCALL_ERR, &cq->upcalls);
		}
		spin_unlock_irqrestore(&cq->lock, flags);
		snaa_count(qp->sdev, SNAA_CNT_CQE_OVERFLOW, 1);
		snaa_qp_error(qp, IB_EVENT_QP_FATAL);
		return -ENOSPC;
	}
	slot = snaa_ring_slot(q, q->kidx);
	if (cq->user) {
		memcpy(slot, cqe, sizeof(*cqe));
	} else {
		struct snaa_kcqe *k = slot;

		k->cqe = *cqe;
		k->qp = &qp->ibqp;
	}
	snaa_ring_publish_producer(q, ++q->kidx);
	if (cq->notify == IB_CQ_NEXT_COMP ||
	    (cq->notify == IB_CQ_SOLICITED && solicited)) {
		cq->notify = 0;
		set_bit(SNAA_CQ_UPCALL_COMP, &cq->upcalls);
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	return 0;
}

/**
 * snaa_cq_upcalls() - call the handlers snaa_cq_post() marked due
 * @cq: the CQ
 *
 * Context: any, but with no QP or CQ lock held: a completion handler
 * may poll, re-arm and post work requests.
 */
void snaa_cq_upcalls(struct snaa_cq *cq)
{
	if (!READ_ONCE(cq->upcalls))
		return;
	if (test_and_clear_bit(SNAA_CQ_UPCALL_ERR, &cq->upcalls) &&
	    cq->ibcq.event_handler) {
		struct ib_event ev = {
			.device = cq->ibcq.device,
			.element.cq = &cq->ibcq,
			.event = IB_EVENT_CQ_ERR,
		};

		cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
	}
	if (test_and_clear_bit(SNAA_CQ_UPCALL_COMP, &cq->upcalls) &&
	    cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
}

int snaa_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	struct snaa_cq *cq = to_snaa_cq(ibcq);
	struct snaa_queue *q = &cq->q;
	struct snaa_kcqe *k;
	unsigned long flags;
	u32 cons, prod;
	int n = 0;

	spin_lock_irqsave(&cq->lock, flags);
	cons = q->ring->consumer;
	prod = q->kidx;
	for (; n < num_entries && cons != prod; n++, cons++, wc++) {
		k = snaa_ring_slot(q, cons);
		memset(wc, 0, sizeof(*wc));
		wc->wr_id = k->cqe.wr_id;
		wc->status = k->cqe.status;
		wc->opcode = k->cqe.opcode;
		wc->byte_len = k->cqe.byte_len;
		wc->qp = k->qp;
		wc->src_qp = k->cqe.src_qp;
		wc->ex.imm_data = (__force __be32)k->cqe.imm_data;
		if (k->cqe.wc_flags & SNAA_WC_WITH_IMM)
			wc->wc_flags |= IB_WC_WITH_IMM;
		if (k->cqe.wc_flags & SNAA_WC_WITH_INV) {
			wc->wc_flags |= IB_WC_WITH_INVALIDATE;
			wc->ex.invalidate_rkey = k->cqe.imm_data;
		}
		if (k->cqe.wc_flags & SNAA_WC_GRH)
			wc->wc_flags |= IB_WC_GRH;
		/* UD: what the GRH area holds (ib_init_ah_attr_from_wc()) */
		if (k->cqe.wc_flags & (SNAA_WC_NET_IPV4 | SNAA_WC_NET_IPV6)) {
			wc->wc_flags |= IB_WC_WITH_NETWORK_HDR_TYPE;
			wc->network_hdr_type =
				k->cqe.wc_flags & SNAA_WC_NET_IPV6 ?
				RDMA_NETWORK_IPV6 : RDMA_NETWORK_IPV4;
		}
		wc->pkey_index = k->cqe.pkey_index;
		wc->port_num = 1;
	}
	snaa_ring_publish_consumer(q, cons);
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}

int snaa_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct snaa_cq *cq = to_snaa_cq(ibcq);
	unsigned long irqflags;
	int ret = 0;

	spin_lock_irqsave(&cq->lock, irqflags);
	if ((flags & IB_CQ_SOLICITED_MASK) == IB_CQ_NEXT_COMP ||
	    cq->notify != IB_CQ_NEXT_COMP)
		cq->notify = flags & IB_CQ_SOLICITED_MASK;
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) &&
	    READ_ONCE(cq->q.ring->consumer) != cq->q.kidx)
		ret = 1;
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return ret;
}

/*
 * Resize: the entries not yet polled move to a new ring at the same
 * indices, so the consumer carries on where it was.  User space gets the
 * new ring's key and the consumer index; it keeps polling nothing while
 * the command runs (the provider holds its CQ lock).
 */
int snaa_resize_cq(struct ib_cq *ibcq, SNAA_RESIZE_CQE cqe,
		   struct ib_udata *udata)
{
	struct snaa_ucontext *uctx = rdma_udata_to_drv_context(udata,
			struct snaa_ucontext, ibuc);
	struct snaa_cq *cq = to_snaa_cq(ibcq);
	struct snaa_uresp_resize_cq uresp = {};
	struct snaa_queue nq, old;
	unsigned long flags;
	u32 cons, i;
	int err;

	if (cqe < 1 || cqe > SNAA_MAX_CQE)
		return -EINVAL;
	if (udata && udata->outlen < sizeof(uresp))
		return -EINVAL;
	err = snaa_queue_init(&nq, cqe, cq->q.stride,
			      udata ? &uctx->ibuc : NULL);
	if (err)
		return err;
	/*
	 * Once published, @nq belongs to the CQ: a concurrent resize (the
	 * core serialises nothing here) may replace and free it at once.
	 */
	uresp.cq_key = snaa_queue_key(&nq);
	uresp.num_cqe = nq.num;
	uresp.ring_size = nq.size;

	/*
	 * The completions of WRs posted before the resize count: a send
	 * queue the doorbell handed to the work queue (another CPU's) may
	 * not have run yet, and a resize below what the CQ then holds must
	 * fail as if the doorbell had run it itself (as rdma_rxe, which
	 * runs the requester in the caller, does).
	 */
	flush_workqueue(snaa_wq);

	spin_lock_irqsave(&cq->lock, flags);
	cons = snaa_ring_consumer(&cq->q);
	if (cq->q.kidx - cons > cq->q.num)	/* bogus index from user space */
		cons = cq->q.kidx - cq->q.num;
	if (cq->q.kidx - cons > nq.num) {
		spin_unlock_irqrestore(&cq->lock, flags);
		snaa_queue_free(&nq);
		return -EINVAL;		/* the new ring cannot hold them */
	}
	for (i = cons; i != cq->q.kidx; i++)
		memcpy(snaa_ring_slot(&nq, i), snaa_ring_slot(&cq->q, i),
		       cq->q.stride);
	nq.kidx = cq->q.kidx;
	nq.ring->consumer = cons;
	nq.ring->producer = nq.kidx;
	old = cq->q;
	cq->q = nq;
	cq->overflow = false;
	ibcq->cqe = nq.num;
	spin_unlock_irqrestore(&cq->lock, flags);

	if (udata) {
		uresp.consumer = cons;
		err = ib_copy_to_udata(udata, &uresp, sizeof(uresp));
	}
	snaa_queue_free(&old);
	return err;
}
