// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * snaa receive path: validate a packet, dispatch it to its QP and run
 * the responder (UC): RDMA WRITE placement, SEND into receive WQEs,
 * completions.  Everything in a packet is checked before anything is
 * written; a packet that fails a check is dropped and counted.
 */

#include <linux/skbuff.h>

#include "snaa.h"

static void snaa_drop(struct snaa_dev *sdev, enum snaa_counter why,
		      struct sk_buff *skb)
{
	snaa_count(sdev, why, 1);
	kfree_skb(skb);
}

/* Forget the message in progress; the RQE (if any) is kept for reuse. */
void snaa_recv_abort(struct snaa_qp *qp)
{
	struct snaa_recv_state *r = &qp->recv;

	r->in_msg = false;
	r->recvd = 0;
}

/* Take the next receive WQE, if one is posted.  rq_lock held. */
static int snaa_rq_fetch(struct snaa_qp *qp)
{
	struct snaa_recv_state *r = &qp->recv;
	struct snaa_queue *q = &qp->rq;
	const struct snaa_rqe *slot;
	u32 prod, i;

	if (r->have_wqe)
		return 0;
	prod = snaa_ring_producer(q);
	if (prod == q->kidx)
		return -ENOENT;
	if (prod - q->kidx > q->num)
		return -EPROTO;
	slot = snaa_ring_slot(q, q->kidx);
	memcpy(&r->wqe, slot, sizeof(r->wqe));
	if (r->wqe.num_sge > qp->max_recv_sge)
		return -EINVAL;
	memcpy(r->sge, slot->sge, r->wqe.num_sge * sizeof(r->sge[0]));
	r->wqe_len = 0;
	for (i = 0; i < r->wqe.num_sge; i++)
		r->wqe_len += r->sge[i].length;
	r->have_wqe = true;
	return 0;
}

/* Complete the held receive WQE and release its slot.  rq_lock held. */
static void snaa_rq_complete(struct snaa_qp *qp, u8 opcode, u8 status,
			     u32 byte_len, const struct snaa_pkt *pkt)
{
	struct snaa_recv_state *r = &qp->recv;
	struct snaa_cqe cqe = {
		.wr_id = r->wqe.wr_id,
		.qp_num = qp->ibqp.qp_num,
		.src_qp = qp->dest_qpn,
		.byte_len = byte_len,
		.opcode = opcode,
		.status = status,
	};

	if (pkt && (pkt->op->flags & SNAA_OPF_IMMDT)) {
		cqe.wc_flags = SNAA_WC_WITH_IMM;
		cqe.imm_data = (__force u32)cpu_to_be32(pkt->imm);
	}
	r->have_wqe = false;
	snaa_ring_publish_consumer(&qp->rq, ++qp->rq.kidx);
	snaa_cq_post(qp->rcq, &cqe, qp, pkt && pkt->bth.se);
}

/* The drop counter for an snaa_mr_check() or copy error. */
static enum snaa_counter snaa_mr_err_counter(int err)
{
	switch (err) {
	case 0:
		return 0;
	case -ERANGE:
		return SNAA_CNT_DROP_RANGE;
	case -EACCES:
		return SNAA_CNT_DROP_BAD_RKEY;	/* the key of another PD */
	case -EPERM:
		return SNAA_CNT_DROP_ACCESS;
	default:
		return SNAA_CNT_DROP_MALFORMED;
	}
}

/*
 * Scatter @len payload bytes at @off of @skb into the held RQE at
 * message offset r->recvd.  Return 0, -EMSGSIZE if the WQE is too
 * small, or -EACCES/-ERANGE for a bad SGE.
 */
static int snaa_rq_scatter(struct snaa_qp *qp, struct sk_buff *skb, u32 off,
			   u32 len)
{
	struct snaa_recv_state *r = &qp->recv;
	u64 pos = r->recvd, base = 0;
	struct snaa_sge *sge;
	struct snaa_mr *mr;
	u32 i, chunk;
	int err;

	for (i = 0; i < r->wqe.num_sge && len; i++) {
		sge = &r->sge[i];
		if (pos >= base + sge->length) {
			base += sge->length;
			continue;
		}
		chunk = min_t(u64, len, base + sge->length - pos);
		mr = snaa_mr_get(qp->sdev, sge->lkey);
		if (!mr)
			return -EACCES;
		err = snaa_mr_check(mr, qp->ibqp.pd, sge->addr + (pos - base),
				    chunk, IB_ACCESS_LOCAL_WRITE);
		if (!err)
			err = snaa_mr_write_skb(mr, sge->addr + (pos - base),
						skb, off, chunk);
		snaa_mr_put(mr);
		if (err)
			return err;
		off += chunk;
		pos += chunk;
		len -= chunk;
		base += sge->length;
	}
	if (len)
		return -EMSGSIZE;
	r->recvd = pos;
	return 0;
}

static enum snaa_counter snaa_uc_send(struct snaa_qp *qp,
				      const struct snaa_pkt *pkt,
				      struct sk_buff *skb)
{
	struct snaa_recv_state *r = &qp->recv;
	u32 flags = pkt->op->flags;
	int err;

	if (flags & SNAA_OPF_START) {
		err = snaa_rq_fetch(qp);
		if (err == -ENOENT)
			return SNAA_CNT_DROP_NO_RECV_WQE;
		if (err) {
			snaa_qp_error(qp, IB_EVENT_QP_FATAL);
			return SNAA_CNT_DROP_QP_STATE;
		}
		r->in_msg = true;
		r->is_send = true;
		r->recvd = 0;
	}
	/* Too long for the WQE: fail before writing any of this packet. */
	if (r->recvd + pkt->payload_len > r->wqe_len)
		err = -EMSGSIZE;
	else
		err = snaa_rq_scatter(qp, skb, pkt->payload_off,
				      pkt->payload_len);
	if (err) {
		/* Local error on the receive WQE: complete it, QP to ERR. */
		snaa_rq_complete(qp, IB_WC_RECV,
				 err == -EMSGSIZE ? IB_WC_LOC_LEN_ERR :
						    IB_WC_LOC_PROT_ERR, 0, NULL);
		snaa_recv_abort(qp);
		snaa_qp_error(qp, 0);
		snaa_rq_flush(qp);
		return err == -EMSGSIZE ? SNAA_CNT_DROP_LENGTH :
					  snaa_mr_err_counter(err);
	}
	if (flags & SNAA_OPF_END) {
		snaa_rq_complete(qp, IB_WC_RECV, IB_WC_SUCCESS, r->recvd, pkt);
		snaa_recv_abort(qp);
	}
	return 0;
}

/*
 * Place @len payload bytes at r->va.  The MR is looked up and checked for
 * every packet rather than pinned for the whole message, so that a peer
 * that never finishes a message cannot hold up deregistration.
 */
static enum snaa_counter snaa_uc_place(struct snaa_qp *qp,
				       const struct snaa_pkt *pkt,
				       struct sk_buff *skb)
{
	struct snaa_recv_state *r = &qp->recv;
	u32 len = pkt->payload_len;
	struct snaa_mr *mr;
	int err;

	mr = snaa_mr_get(qp->sdev, r->rkey);
	if (!mr)
		return SNAA_CNT_DROP_BAD_RKEY;
	err = snaa_mr_check(mr, qp->ibqp.pd, r->va, len,
			    IB_ACCESS_REMOTE_WRITE);
	if (!err)
		err = snaa_mr_write_skb(mr, r->va, skb, pkt->payload_off, len);
	snaa_mr_put(mr);
	return snaa_mr_err_counter(err);
}

static enum snaa_counter snaa_uc_write(struct snaa_qp *qp,
				       const struct snaa_pkt *pkt,
				       struct sk_buff *skb)
{
	struct snaa_recv_state *r = &qp->recv;
	u32 flags = pkt->op->flags;
	u32 len = pkt->payload_len;
	enum snaa_counter drop;

	if (flags & SNAA_OPF_START) {
		const struct snaa_reth_info *reth = &pkt->reth;
		struct snaa_mr *mr;
		int err;

		if (!(qp->access & IB_ACCESS_REMOTE_WRITE))
			return SNAA_CNT_DROP_ACCESS;
		if (reth->dma_len > SNAA_MAX_MSG_SIZE ||
		    (flags & SNAA_OPF_ONLY ? len != reth->dma_len :
					     len >= reth->dma_len))
			return SNAA_CNT_DROP_LENGTH;
		if (reth->dma_len) {
			/* IBA: the R_Key is not checked for a 0-byte write. */
			mr = snaa_mr_get(qp->sdev, reth->rkey);
			if (!mr)
				return SNAA_CNT_DROP_BAD_RKEY;
			err = snaa_mr_check(mr, qp->ibqp.pd, reth->va,
					    reth->dma_len,
					    IB_ACCESS_REMOTE_WRITE);
			snaa_mr_put(mr);
			if (err)
				return snaa_mr_err_counter(err);
		}
		r->in_msg = true;
		r->is_send = false;
		r->rkey = reth->rkey;
		r->va = reth->va;
		r->dma_len = reth->dma_len;
		r->resid = reth->dma_len;
	} else if (flags & SNAA_OPF_END ? len != r->resid : len >= r->resid) {
		snaa_recv_abort(qp);
		return SNAA_CNT_DROP_LENGTH;
	}

	/* WRITE with immediate consumes a receive WQE: it must be there. */
	if ((flags & SNAA_OPF_IMMDT) && snaa_rq_fetch(qp)) {
		snaa_recv_abort(qp);
		return SNAA_CNT_DROP_NO_RECV_WQE;
	}

	if (len) {
		drop = snaa_uc_place(qp, pkt, skb);
		if (drop) {
			snaa_recv_abort(qp);
			return drop;
		}
		r->va += len;
		r->resid -= len;
	}
	if (flags & SNAA_OPF_END) {
		if (flags & SNAA_OPF_IMMDT)
			snaa_rq_complete(qp, IB_WC_RECV_RDMA_WITH_IMM,
					 IB_WC_SUCCESS, r->dma_len, pkt);
		snaa_recv_abort(qp);
	}
	return 0;
}

/*
 * UC responder.  IBA 9.7.5.1.4 (UC): a PSN other than the expected one
 * ends the message in progress; the responder resynchronises on the next
 * FIRST or ONLY packet and drops MIDDLE and LAST packets until then.
 * Called with qp->rq_lock held.
 */
static enum snaa_counter snaa_uc_rcv(struct snaa_qp *qp,
				     const struct snaa_pkt *pkt,
				     struct sk_buff *skb)
{
	struct snaa_recv_state *r = &qp->recv;
	u32 flags = pkt->op->flags;
	u32 psn = pkt->bth.psn;
	bool gap = psn != r->epsn;

	r->epsn = snaa_psn_add(psn, 1);
	if (gap || (r->in_msg && (flags & SNAA_OPF_START))) {
		snaa_recv_abort(qp);
		if (!(flags & SNAA_OPF_START))
			return SNAA_CNT_DROP_PSN_GAP;
	}
	if (!r->in_msg && !(flags & SNAA_OPF_START))
		return SNAA_CNT_DROP_BAD_SEQ;
	if (r->in_msg && (!!(flags & SNAA_OPF_SEND) != r->is_send)) {
		snaa_recv_abort(qp);
		return SNAA_CNT_DROP_BAD_SEQ;
	}
	if (flags & SNAA_OPF_SEND)
		return snaa_uc_send(qp, pkt, skb);
	return snaa_uc_write(qp, pkt, skb);
}

/*
 * Checks of a request against its connected QP, under qp->rq_lock: the
 * state (a modify_qp to RESET or ERR flushes under this lock, so nothing
 * is placed once it has begun), the path MTU and the addresses.  Return
 * 0 or the drop counter.
 */
static enum snaa_counter snaa_rcv_check(struct snaa_qp *qp,
					const struct snaa_pkt *pkt,
					struct sk_buff *skb)
{
	enum ib_qp_state state = READ_ONCE(qp->state);

	lockdep_assert_held(&qp->rq_lock);
	if (state != IB_QPS_RTR && state != IB_QPS_RTS && state != IB_QPS_SQD)
		return SNAA_CNT_DROP_QP_STATE;
	if (snaa_pkt_check_mtu(pkt, qp->path_mtu))
		return SNAA_CNT_DROP_MTU;
	if (!snaa_av_match(&qp->av, snaa_skb_cb(skb)))
		return SNAA_CNT_DROP_ADDRESS;
	return 0;
}

/**
 * snaa_rcv() - receive one RoCEv2 packet
 * @sdev: the device it arrived on
 * @skb: data at the BTH, length up to and including the (verified) ICRC;
 *	the IP addresses in its control block (struct snaa_skb_cb)
 *
 * Context: softirq or bottom halves disabled.  Consumes @skb.
 */
void snaa_rcv(struct snaa_dev *sdev, struct sk_buff *skb)
{
	enum snaa_counter drop;
	struct snaa_pkt pkt;
	struct snaa_qp *qp;
	int ret;

	ret = snaa_parse(skb->data, skb->len, &pkt);
	if (ret)
		return snaa_drop(sdev, SNAA_CNT_DROP_FIRST - ret - 1, skb);
	if (snaa_pkey_check(pkt.bth.pkey, SNAA_DEFAULT_PKEY))
		return snaa_drop(sdev, SNAA_CNT_DROP_BAD_PKEY, skb);

	qp = snaa_qp_get(sdev, pkt.bth.dqpn);
	if (!qp)
		return snaa_drop(sdev, SNAA_CNT_DROP_UNKNOWN_QPN, skb);

	drop = SNAA_CNT_DROP_QP_TYPE;
	if (pkt.op->transport != SNAA_TR_UC || qp->ibqp.qp_type != IB_QPT_UC ||
	    !(pkt.op->flags & SNAA_OPF_REQ))
		goto drop;

	spin_lock(&qp->rq_lock);
	drop = snaa_rcv_check(qp, &pkt, skb);
	if (!drop)
		drop = snaa_uc_rcv(qp, &pkt, skb);
	spin_unlock(&qp->rq_lock);
	snaa_qp_upcalls(qp);
	if (drop)
		goto drop;
	snaa_qp_put(qp);
	consume_skb(skb);
	return;

drop:
	snaa_qp_put(qp);
	snaa_drop(sdev, drop, skb);
}

static int snaa_post_one_recv(struct snaa_qp *qp, const struct ib_recv_wr *wr)
{
	struct snaa_queue *q = &qp->rq;
	struct snaa_rqe *rqe;
	u32 prod = q->ring->producer, i;

	if (prod - snaa_ring_consumer(q) >= q->num)
		return -ENOMEM;
	if (wr->num_sge > qp->max_recv_sge)
		return -EINVAL;
	rqe = snaa_ring_slot(q, prod);
	rqe->wr_id = wr->wr_id;
	rqe->num_sge = wr->num_sge;
	for (i = 0; i < wr->num_sge; i++) {
		rqe->sge[i].addr = wr->sg_list[i].addr;
		rqe->sge[i].length = wr->sg_list[i].length;
		rqe->sge[i].lkey = wr->sg_list[i].lkey;
	}
	snaa_ring_publish_producer(q, prod + 1);
	return 0;
}

int snaa_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		   const struct ib_recv_wr **bad_wr)
{
	struct snaa_qp *qp = to_snaa_qp(ibqp);
	unsigned long flags;
	int err = 0;

	spin_lock_irqsave(&qp->rq_lock, flags);
	/* User QPs post into the mapped ring; a NULL list is a doorbell. */
	for (; wr && !qp->user; wr = wr->next) {
		err = snaa_post_one_recv(qp, wr);
		if (err) {
			*bad_wr = wr;
			break;
		}
	}
	if (READ_ONCE(qp->state) == IB_QPS_ERR)
		snaa_rq_flush(qp);
	spin_unlock_irqrestore(&qp->rq_lock, flags);
	snaa_qp_upcalls(qp);
	return err;
}
