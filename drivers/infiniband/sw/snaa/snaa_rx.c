// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * snaa receive path: validate a packet, find its QP and hand it to the
 * responder (requests) or the RC completer (responses); posting receive
 * WQEs.  Everything in a packet is checked before anything is written; a
 * packet that fails a check is dropped and counted.
 */

#include <linux/skbuff.h>

#include "snaa.h"

static void snaa_drop(struct snaa_dev *sdev, enum snaa_counter why,
		      struct sk_buff *skb)
{
	snaa_count(sdev, why, 1);
	kfree_skb(skb);
}

/* Does the packet's transport belong to the QP's type? */
static bool snaa_rcv_type_ok(const struct snaa_qp *qp,
			     const struct snaa_pkt *pkt)
{
	u32 flags = pkt->op->flags;

	switch (qp->ibqp.qp_type) {
	case IB_QPT_RC:
		return pkt->op->transport == SNAA_TR_RC &&
		       (flags & (SNAA_OPF_REQ | SNAA_OPF_RESP));
	case IB_QPT_UC:
		return pkt->op->transport == SNAA_TR_UC &&
		       (flags & SNAA_OPF_REQ);
	case IB_QPT_UD:
	case IB_QPT_GSI:
		return pkt->op->transport == SNAA_TR_UD &&
		       (flags & SNAA_OPF_REQ);
	default:
		return false;
	}
}

/*
 * Checks of a packet against its QP, under the lock of the side it is
 * for (rq_lock for requests, sq_lock for responses: modify_qp changes
 * the path under both, and a modify_qp to RESET or ERR flushes under
 * them, so nothing is placed once it has begun): the state, the MTU and,
 * for connected QPs, the addresses: a packet
 * from anywhere but the reverse of the QP's path never touches memory,
 * queues or PSN state.  Return 0 or the drop counter.
 */
static enum snaa_counter snaa_rcv_check(struct snaa_qp *qp,
					const struct snaa_pkt *pkt,
					struct sk_buff *skb)
{
	const struct snaa_skb_cb *cb = snaa_skb_cb(skb);
	enum ib_qp_state state = READ_ONCE(qp->state);

	if (state != IB_QPS_RTR && state != IB_QPS_RTS && state != IB_QPS_SQD)
		return SNAA_CNT_DROP_QP_STATE;
	if (!snaa_qp_connected(qp)) {
		/* UD: a message is at most what the port carries */
		if (snaa_pkt_check_mtu(pkt, snaa_mtu_from_netdev(
				READ_ONCE(qp->sdev->ndev->mtu))))
			return SNAA_CNT_DROP_MTU;
		return 0;
	}
	/* WCU.BUF: 64..4096 bytes whatever the MTU (snaa_wcubuf_rcv()) */
	if (!qp->wcu && snaa_pkt_check_mtu(pkt, qp->path_mtu))
		return SNAA_CNT_DROP_MTU;
	if (!snaa_av_match(&qp->av, cb))
		return SNAA_CNT_DROP_ADDRESS;
	/*
	 * Looped back, the addresses are this device's own, which any QP
	 * of it may send from: only the QP at the other end of the
	 * connection may send here.
	 */
	if (cb->loopback && cb->src_qpn != qp->dest_qpn)
		return SNAA_CNT_DROP_ADDRESS;
	return 0;
}

/*
 * A packet received in full.  Looped-back ones are ours
 * (snaa_skb_alloc()): their heads go to the per-CPU cache that
 * snaa_skb_alloc() takes heads from.  Others may hold pages of a
 * driver's page pool, which only its own NAPI context may recycle
 * directly.  BH disabled.
 */
static void snaa_rcv_consume(struct sk_buff *skb)
{
	if (snaa_skb_cb(skb)->loopback)
		napi_consume_skb(skb, 1);
	else
		consume_skb(skb);
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
	if (!snaa_rcv_type_ok(qp, &pkt))
		goto drop;

	if (pkt.op->flags & SNAA_OPF_RESP) {
		/* For the RC requester: its state is under sq_lock. */
		spin_lock(&qp->sq_lock);
		drop = snaa_rcv_check(qp, &pkt, skb);
		if (!drop)
			drop = snaa_comp_rcv(qp, &pkt, skb);
		spin_unlock(&qp->sq_lock);
	} else {
		bool tx;

		spin_lock(&qp->rq_lock);
		drop = snaa_rcv_check(qp, &pkt, skb);
		if (!drop)
			drop = qp->wcu ? snaa_wcubuf_rcv(qp, &pkt, skb) :
					 snaa_resp_rcv(qp, &pkt, skb);
		tx = snaa_resp_due(qp, &pkt);
		spin_unlock(&qp->rq_lock);
		/*
		 * The request is done with: free it before the response
		 * is built, which can then reuse its page fragment.
		 */
		if (!drop) {
			snaa_rcv_consume(skb);
			skb = NULL;
		}
		/* ACKs and short responses leave right away. */
		if (qp->wcu)
			snaa_wcubuf_tx(qp);
		else if (tx)
			snaa_resp_tx(qp, 16);
	}
	snaa_qp_upcalls(qp);
	if (drop)
		goto drop;
	snaa_qp_put(qp);
	if (skb)
		snaa_rcv_consume(skb);
	return;

drop:
	snaa_qp_put(qp);
	snaa_drop(sdev, drop, skb);
}

/**
 * snaa_rcv_bad_icrc() - a packet failed its ICRC check
 * @sdev: the device it arrived on
 * @skb: the packet, data at the BTH, its addresses in the control block
 *
 * Such a packet is dropped (and counted) by the caller, but a WCU.BUF
 * receiver reports it: the frame it belonged to ends with "end of bad
 * packet" (snaa_wcubuf_bad_packet()).  Its headers are only believed if
 * they parse, name a WCU.BUF QP and came over that QP's path.
 *
 * Context: softirq.  Does not consume @skb.
 */
void snaa_rcv_bad_icrc(struct snaa_dev *sdev, struct sk_buff *skb)
{
	struct snaa_pkt pkt;
	struct snaa_qp *qp;

	if (snaa_parse(skb->data, skb->len, &pkt) ||
	    !(pkt.op->flags & SNAA_OPF_REQ))
		return;
	qp = snaa_qp_get(sdev, pkt.bth.dqpn);
	if (!qp)
		return;
	if (qp->wcu && snaa_rcv_type_ok(qp, &pkt)) {
		spin_lock(&qp->rq_lock);
		if (!snaa_rcv_check(qp, &pkt, skb))
			snaa_wcubuf_bad_packet(qp, pkt.bth.psn,
					       pkt.payload_len);
		spin_unlock(&qp->rq_lock);
	}
	snaa_qp_put(qp);
}

/**
 * snaa_rqe_post() - post one kernel receive WR into a receive ring
 * @q: a QP's RQ or an SRQ
 * @max_sge: the SGEs an entry may have
 * @wr: the WR
 *
 * Context: the ring's producer lock held.
 * Return: 0, -ENOMEM (ring full) or -EINVAL (too many SGEs).
 */
int snaa_rqe_post(struct snaa_queue *q, u32 max_sge,
		  const struct ib_recv_wr *wr)
{
	struct snaa_rqe *rqe;
	u32 prod = q->ring->producer, i;

	if (prod - snaa_ring_consumer(q) >= q->num)
		return -ENOMEM;
	if (wr->num_sge > max_sge)
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

/**
 * snaa_rq_doorbell() - a user QP's RQ doorbell
 * @qp: the QP, a user QP
 *
 * The RQEs are already in the mapped ring.  The receive path takes them
 * as messages arrive; the ring is flagged idle, and so rung, only while
 * the QP is in the error state, whose new RQEs are flushed here.  From
 * SNAA_IB_METHOD_QP_DOORBELL.
 *
 * Context: process.
 * Return: 0, or -EINVAL for a QP on an SRQ (it has no RQ).
 */
int snaa_rq_doorbell(struct snaa_qp *qp)
{
	unsigned long flags;

	if (qp->srq)
		return -EINVAL;
	spin_lock_irqsave(&qp->rq_lock, flags);
	if (READ_ONCE(qp->state) == IB_QPS_ERR)
		snaa_rq_flush(qp);
	spin_unlock_irqrestore(&qp->rq_lock, flags);
	snaa_qp_upcalls(qp);
	return 0;
}

int snaa_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		   const struct ib_recv_wr **bad_wr)
{
	struct snaa_qp *qp = to_snaa_qp(ibqp);
	unsigned long flags;
	int err = 0;

	/*
	 * Its receive WRs go to the SRQ; none may be posted in RESET.  A
	 * user QP's come through its ring: uverbs has no POST_RECV for snaa.
	 */
	if (qp->srq || qp->user || READ_ONCE(qp->state) == IB_QPS_RESET) {
		*bad_wr = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&qp->rq_lock, flags);
	for (; wr; wr = wr->next) {
		err = snaa_rqe_post(&qp->rq, qp->max_recv_sge, wr);
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
