// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * snaa responder: requests arriving at a QP (IBA 9.7.5.1, 9.7.5.2).
 *
 * One core places data and consumes receive WQEs for all transports;
 * each transport decides what a failed check means:
 *  - UC drops the packet (and ends the message in progress);
 *  - RC answers with a NAK (sequence error, RNR, invalid request, remote
 *    access, remote operational error), and for the errors of classes A
 *    and C moves the QP to the error state;
 *  - UD drops the packet; a receive WQE too short for it completes with
 *    IB_WC_LOC_LEN_ERR.
 *
 * RC responses (ACKs, NAKs, RDMA READ responses, atomic ACKs) leave in
 * PSN order: the responder records what is due (recv.res[] for READ and
 * atomic requests, recv.ack_pending, recv.nak_pending) and
 * snaa_resp_tx() sends it, from the receive path right away or from the
 * QP's work item for long READ responses; recv.tx_owner keeps the two
 * from interleaving.
 *
 * Everything here runs under qp->rq_lock.  Counters: every packet
 * dropped or NAKed moves the counter of its reason.
 */

#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/skbuff.h>
#include <net/ip.h>

#include "snaa.h"

/* Forget the message in progress; the RQE (if any) is kept for reuse. */
void snaa_recv_abort(struct snaa_qp *qp)
{
	struct snaa_recv_state *r = &qp->recv;

	r->in_msg = false;
	r->recvd = 0;
}

/**
 * snaa_resp_reset() - forget all responder state (RESET, destroy)
 * @qp: the QP
 *
 * Context: qp->rq_lock held.
 */
void snaa_resp_reset(struct snaa_qp *qp)
{
	struct snaa_recv_state *r = &qp->recv;

	lockdep_assert_held(&qp->rq_lock);
	snaa_recv_abort(qp);
	r->have_wqe = false;
	r->last_wqe_sent = false;
	r->msn = 0;
	r->nak_sent = false;
	r->ack_pending = false;
	r->nak_pending = false;
	r->halted = false;
	WRITE_ONCE(r->tx_more, false);
	r->res_head = 0;
	r->res_pending = 0;
	if (r->res)
		memset(r->res, 0, sizeof(*r->res) * SNAA_MAX_RD_ATOMIC);
}

/* ---- receive WQEs ------------------------------------------------------ */

/* Take the next receive WQE, if one is posted.  rq_lock held. */
static int snaa_rq_fetch(struct snaa_qp *qp)
{
	struct snaa_recv_state *r = &qp->recv;
	struct snaa_queue *q = &qp->rq;
	const struct snaa_rqe *slot;
	u32 prod, i;

	if (r->have_wqe)
		return 0;
	if (qp->srq) {
		int err = snaa_srq_fetch(qp->srq, &r->wqe, r->sge);

		if (err)
			return err;
		goto got;
	}
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
got:
	r->wqe_len = 0;
	for (i = 0; i < r->wqe.num_sge; i++)
		r->wqe_len += r->sge[i].length;
	r->have_wqe = true;
	return 0;
}

/* Complete the held receive WQE and release its slot.  rq_lock held. */
static void snaa_rq_complete(struct snaa_qp *qp, struct snaa_cqe *cqe,
			     bool solicited)
{
	struct snaa_recv_state *r = &qp->recv;

	cqe->wr_id = r->wqe.wr_id;
	cqe->qp_num = qp->ibqp.qp_num;
	r->have_wqe = false;
	/* An SRQ's entry left its ring when the QP took it. */
	if (!qp->srq)
		snaa_ring_publish_consumer(&qp->rq, ++qp->rq.kidx);
	snaa_cq_post(qp->rcq, cqe, qp, solicited);
}

/* Complete the held receive WQE of a request that ended.  rq_lock held. */
static void snaa_rq_done(struct snaa_qp *qp, u8 opcode, u32 byte_len,
			 const struct snaa_pkt *pkt)
{
	struct snaa_cqe cqe = {
		.src_qp = qp->dest_qpn,
		.byte_len = byte_len,
		.opcode = opcode,
		.status = IB_WC_SUCCESS,
	};

	if (pkt->op->flags & SNAA_OPF_IMMDT) {
		cqe.wc_flags = SNAA_WC_WITH_IMM;
		cqe.imm_data = (__force u32)cpu_to_be32(pkt->imm);
	} else if (pkt->op->flags & SNAA_OPF_IETH) {
		cqe.wc_flags = SNAA_WC_WITH_INV;
		cqe.imm_data = pkt->ieth_rkey;
	}
	snaa_rq_complete(qp, &cqe, pkt->bth.se);
}

/* Complete the held receive WQE with an error.  rq_lock held. */
static void snaa_rq_fail(struct snaa_qp *qp, u8 status)
{
	struct snaa_cqe cqe = { .opcode = IB_WC_RECV, .status = status };

	snaa_rq_complete(qp, &cqe, false);
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
 * Scatter @len bytes into the held RQE at message offset r->recvd, from
 * @skb at @off or from @buf.  Return 0, -EMSGSIZE if the WQE is too
 * small, or -EACCES/-EPERM/-ERANGE for a bad SGE.
 */
static int snaa_rq_scatter(struct snaa_qp *qp, const struct sk_buff *skb,
			   u32 off, const void *buf, u32 len)
{
	struct snaa_recv_state *r = &qp->recv;
	int err;

	if (r->recvd + len > r->wqe_len)
		return -EMSGSIZE;
	err = snaa_sge_scatter(qp, r->sge, r->wqe.num_sge, r->recvd, skb, off,
			       buf, len);
	if (!err)
		r->recvd += len;
	return err;
}

/* ---- RC responses ------------------------------------------------------ */

/* Responder resources in use: max_dest_rd_atomic, at least one. */
static u32 snaa_res_num(const struct snaa_qp *qp)
{
	return max_t(u8, qp->max_dest_rd_atomic, 1);
}

/* Mark @res as having responses to send, or not; recv.res_pending counts. */
static void snaa_res_set_pending(struct snaa_qp *qp, struct snaa_res *res,
				 bool pending)
{
	if (res->pending != pending)
		qp->recv.res_pending += pending ? 1 : -1;
	res->pending = pending;
}

/* An ACK for everything up to @psn is due (coalesced with others). */
static void snaa_resp_ack(struct snaa_qp *qp, u32 psn)
{
	qp->recv.ack_pending = true;
	qp->recv.ack_psn = psn;
}

static void snaa_resp_nak(struct snaa_qp *qp, u8 syndrome, u32 psn)
{
	struct snaa_recv_state *r = &qp->recv;

	r->nak_pending = true;
	r->nak_psn = psn;
	r->nak_syndrome = syndrome;
	snaa_count(qp->sdev,
		   snaa_aeth_type(syndrome) == SNAA_AETH_RNR_NAK ?
		   SNAA_CNT_RC_RNR_NAKS_SENT :
		   snaa_aeth_value(syndrome) == SNAA_NAK_PSN_SEQ_ERROR ?
		   SNAA_CNT_RC_SEQ_NAKS_SENT : SNAA_CNT_RC_ERR_NAKS_SENT, 1);
}

/*
 * An error of class A (invalid request) or C (remote access): NAK it and
 * move the QP to the error state with @event (IBA 9.9.3.1.2).  Responses
 * leave in PSN order, so the NAK goes after the READ and atomic
 * responses due for earlier requests, and the QP enters ERR when the
 * NAK is out (snaa_resp_next()); requests arriving meanwhile are
 * dropped.
 */
static void snaa_resp_fatal(struct snaa_qp *qp, const struct snaa_pkt *pkt,
			    u8 code, enum ib_event_type event)
{
	struct snaa_recv_state *r = &qp->recv;

	snaa_dbg(qp->sdev, "QP %u: NAK code %u for opcode %#x PSN %#x (expected %#x)\n",
		 qp->ibqp.qp_num, code, pkt->bth.opcode, pkt->bth.psn, r->epsn);
	snaa_resp_nak(qp, snaa_aeth_syndrome(SNAA_AETH_NAK, code),
		      pkt->bth.psn);
	snaa_recv_abort(qp);
	r->halted = true;
	r->fatal_event = event;
}

/*
 * A response packet to the connected peer: BTH, AETH (if the opcode has
 * one), @paylen bytes of payload (the caller fills them: *@hdr points to
 * the BTH) and the pad.
 */
static struct sk_buff *snaa_resp_pkt(struct snaa_qp *qp, u8 opcode, u32 psn,
				     u8 syndrome, u32 paylen, u8 **hdr)
{
	const struct snaa_opcode_info *op = snaa_opcode_lookup(opcode);
	struct snaa_bth_info bth = {};
	struct snaa_aeth_info aeth = {
		.syndrome = syndrome,
		.msn = qp->recv.msn & SNAA_PSN_MASK,
	};
	u32 pad = snaa_pad_for(paylen);
	struct sk_buff *skb;
	u8 *p;

	skb = snaa_skb_alloc(qp->sdev, &qp->av, op->hdr_len + paylen + pad);
	if (!skb)
		return NULL;
	p = skb_put(skb, op->hdr_len + paylen + pad);
	bth.opcode = opcode;
	bth.pad = pad;
	bth.pkey = SNAA_DEFAULT_PKEY;
	bth.dqpn = qp->dest_qpn;
	bth.psn = psn;
	snaa_bth_set(p, &bth);
	if (op->flags & SNAA_OPF_AETH)
		snaa_aeth_set(p + op->aeth_off, &aeth);
	memset(p + op->hdr_len + paylen, 0, pad);
	if (hdr)
		*hdr = p;
	return skb;
}

/* The next packet of READ response @res. */
static struct sk_buff *snaa_resp_read(struct snaa_qp *qp, struct snaa_res *res)
{
	u32 mtu = qp->path_mtu, off = res->sent * mtu;
	u32 len = min(res->length - off, mtu);
	bool first = !res->sent, last = res->sent + 1 == res->npkts;
	struct sk_buff *skb;
	struct snaa_mr *mr;
	u8 opcode, *p;
	int err = 0;

	opcode = first && last ? SNAA_OP_READ_RESP_ONLY :
		 first ? SNAA_OP_READ_RESP_FIRST :
		 last ? SNAA_OP_READ_RESP_LAST : SNAA_OP_READ_RESP_MIDDLE;
	mr = NULL;
	if (len) {
		/* The MR may have gone since the request was accepted. */
		mr = snaa_rkey_get(qp, res->rkey, res->va + off, len,
				   IB_ACCESS_REMOTE_READ, &err);
		if (!mr) {
			snaa_res_set_pending(qp, res, false);
			snaa_resp_nak(qp, snaa_aeth_syndrome(SNAA_AETH_NAK,
					SNAA_NAK_REMOTE_ACCESS_ERROR),
				      snaa_psn_add(res->psn, res->sent));
			snaa_qp_error(qp, IB_EVENT_QP_ACCESS_ERR);
			return NULL;
		}
	}
	skb = snaa_resp_pkt(qp, opcode, snaa_psn_add(res->psn, res->sent),
			    snaa_aeth_syndrome(SNAA_AETH_ACK,
					       SNAA_AETH_CREDIT_INVALID),
			    len, &p);
	if (skb && len)
		snaa_mr_read(mr, res->va + off,
			     p + snaa_opcode_lookup(opcode)->hdr_len, len);
	if (mr)
		snaa_mr_put(mr);
	if (!skb)
		return NULL;
	if (++res->sent == res->npkts)
		snaa_res_set_pending(qp, res, false);
	return skb;
}

/*
 * The oldest resource with responses to send.  Slots are taken in PSN
 * order, so the newest (at res_head - 1) is looked at first, and the
 * scan stops once it has seen all recv.res_pending of them: one step
 * for the usual single READ or atomic being answered.
 */
static struct snaa_res *snaa_res_next(struct snaa_qp *qp)
{
	u32 n = snaa_res_num(qp), i = qp->recv.res_head, left, k;
	struct snaa_res *res, *best = NULL;

	left = qp->recv.res_pending;
	for (k = 0; left && k < n; k++) {
		i = (i ? i : n) - 1;
		res = &qp->recv.res[i];
		if (!res->pending)
			continue;
		left--;
		if (!best || snaa_psn_diff(res->psn, best->psn) < 0)
			best = res;
	}
	WARN_ON_ONCE(left);
	return best;
}

/*
 * The next response due, in PSN order: READ and atomic responses, then
 * a NAK or the (coalesced) ACK.  rq_lock held.
 */
static struct sk_buff *snaa_resp_next(struct snaa_qp *qp)
{
	struct snaa_recv_state *r = &qp->recv;
	struct snaa_res *res = NULL;
	struct sk_buff *skb;
	u8 *p;

	if (READ_ONCE(qp->state) != IB_QPS_ERR && r->res)
		res = snaa_res_next(qp);
	if (res) {
		if (!res->atomic)
			return snaa_resp_read(qp, res);
		skb = snaa_resp_pkt(qp, SNAA_OP_ATOMIC_ACK, res->psn,
				    snaa_aeth_syndrome(SNAA_AETH_ACK,
						SNAA_AETH_CREDIT_INVALID),
				    0, &p);
		if (skb) {
			snaa_atmack_set(p + snaa_opcode_lookup(SNAA_OP_ATOMIC_ACK)->atmack_off,
					res->orig);
			snaa_res_set_pending(qp, res, false);
		}
		return skb;
	}
	if (r->nak_pending && r->ack_pending && !r->halted &&
	    snaa_psn_diff(r->ack_psn, r->nak_psn) >= 0)
		r->nak_pending = false;	/* the NAKed PSN arrived since */
	if (r->nak_pending) {
		skb = snaa_resp_pkt(qp, SNAA_OP_ACK, r->nak_psn,
				    r->nak_syndrome, 0, NULL);
		if (skb) {
			r->nak_pending = false;
			r->ack_pending = false;
			if (r->halted) {
				r->halted = false;
				snaa_qp_error(qp, r->fatal_event);
			}
		}
		return skb;
	}
	if (r->ack_pending && READ_ONCE(qp->state) != IB_QPS_ERR) {
		skb = snaa_resp_pkt(qp, SNAA_OP_ACK, r->ack_psn,
				    snaa_aeth_syndrome(SNAA_AETH_ACK,
						SNAA_AETH_CREDIT_INVALID),
				    0, NULL);
		if (skb) {
			r->ack_pending = false;
			snaa_count(qp->sdev, SNAA_CNT_RC_ACKS_SENT, 1);
		}
		return skb;
	}
	return NULL;
}

/**
 * snaa_resp_due() - must the receive path send responses after @pkt?
 * @qp: the QP
 * @pkt: the request just received
 *
 * Only if it made an ACK, a NAK or a READ/atomic response due.  Responses
 * due before have a context sending them: the one holding recv.tx_owner,
 * which looks again before it stops, or the work item it scheduled.  So
 * the common RC packet, one without AckReq, costs no second lock and no
 * scan of the responder resources.
 *
 * Context: qp->rq_lock held.
 */
bool snaa_resp_due(struct snaa_qp *qp, const struct snaa_pkt *pkt)
{
	lockdep_assert_held(&qp->rq_lock);
	return qp->ibqp.qp_type == IB_QPT_RC &&
	       (qp->recv.ack_pending || qp->recv.nak_pending ||
		(pkt->op->flags & (SNAA_OPF_READ | SNAA_OPF_ATOMIC)));
}

/**
 * snaa_resp_pending() - has an RC QP responses left for its work item?
 * @qp: the QP
 *
 * Responses become due in the receive path, which sends them itself
 * (snaa_resp_tx()); what it leaves (long READ responses, a failed
 * allocation) is flagged for the QP's work item.  A lockless look: the
 * context that sets the flag also schedules the work item.
 *
 * Context: any.
 */
bool snaa_resp_pending(struct snaa_qp *qp)
{
	return READ_ONCE(qp->recv.tx_more);
}

/**
 * snaa_resp_tx() - send the RC responses that are due
 * @qp: the QP
 * @budget: packets to send at most
 *
 * Packets are built under qp->rq_lock and sent after it is dropped, one
 * at a time: a looped-back response is consumed before the next one is
 * built, which then reuses its page fragment (snaa_skb_alloc()), where a
 * batch held at once sends the fragment cache for a new page, zeroed
 * under init_on_alloc.  Only one context sends at a time
 * (recv.tx_owner): one that finds another sending leaves the rest to
 * it, which looks again before it stops.
 *
 * Context: process or softirq context, no QP lock held.
 * Return: the number of packets sent.
 */
int snaa_resp_tx(struct snaa_qp *qp, int budget)
{
	struct snaa_recv_state *r = &qp->recv;
	struct sk_buff *skb;
	int sent = 0;
	bool more;

	if (qp->ibqp.qp_type != IB_QPT_RC)
		return 0;
	spin_lock_bh(&qp->rq_lock);
	if (r->tx_owner) {
		spin_unlock_bh(&qp->rq_lock);
		return 0;
	}
	r->tx_owner = true;
	/* also what becomes due while we send */
	while (sent < budget && (skb = snaa_resp_next(qp))) {
		spin_unlock_bh(&qp->rq_lock);
		snaa_xmit(qp->sdev, &qp->av, qp->ibqp.qp_num, skb);
		sent++;
		spin_lock_bh(&qp->rq_lock);
	}
	r->tx_owner = false;
	more = r->ack_pending || r->nak_pending ||
	       (READ_ONCE(qp->state) != IB_QPS_ERR && snaa_res_next(qp));
	WRITE_ONCE(r->tx_more, more);
	spin_unlock_bh(&qp->rq_lock);
	/* Long READ responses go on from the work item. */
	if (more)
		snaa_sq_schedule(qp);
	return sent;
}

/* ---- the sequence of a message (UC and RC) ---------------------------- */

/*
 * Does the packet continue the message in progress (or start one)?
 * Return 0 or SNAA_CNT_DROP_BAD_SEQ.
 */
static enum snaa_counter snaa_resp_seq(struct snaa_qp *qp,
				       const struct snaa_pkt *pkt)
{
	struct snaa_recv_state *r = &qp->recv;
	u32 flags = pkt->op->flags;

	if (r->in_msg && (flags & SNAA_OPF_START))
		return SNAA_CNT_DROP_BAD_SEQ;
	if (!r->in_msg && !(flags & SNAA_OPF_START))
		return SNAA_CNT_DROP_BAD_SEQ;
	if (r->in_msg && !!(flags & SNAA_OPF_SEND) != r->is_send)
		return SNAA_CNT_DROP_BAD_SEQ;
	return 0;
}

/* ---- SEND (UC and RC) ---------------------------------------------------- */

/*
 * Place a SEND packet.  Return 0, SNAA_CNT_DROP_NO_RECV_WQE if no
 * receive WQE is posted (nothing changed), or the counter of a local
 * error on the WQE (then completed in error, message ended).
 */
static enum snaa_counter snaa_resp_send(struct snaa_qp *qp,
					const struct snaa_pkt *pkt,
					struct sk_buff *skb, u8 *wc_status)
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
	err = snaa_rq_scatter(qp, skb, pkt->payload_off, NULL,
			      pkt->payload_len);
	if (err) {
		/* Local error on the receive WQE: complete it. */
		*wc_status = err == -EMSGSIZE ? IB_WC_LOC_LEN_ERR :
						IB_WC_LOC_PROT_ERR;
		snaa_rq_fail(qp, *wc_status);
		snaa_recv_abort(qp);
		return err == -EMSGSIZE ? SNAA_CNT_DROP_LENGTH :
					  snaa_mr_err_counter(err);
	}
	if (flags & SNAA_OPF_END) {
		/* SEND with invalidate: the key goes before the completion */
		if ((flags & SNAA_OPF_IETH) &&
		    snaa_invalidate_remote(qp, pkt->ieth_rkey)) {
			*wc_status = IB_WC_REM_INV_REQ_ERR;
			snaa_rq_fail(qp, IB_WC_LOC_PROT_ERR);
			snaa_recv_abort(qp);
			return SNAA_CNT_DROP_BAD_RKEY;
		}
		snaa_rq_done(qp, IB_WC_RECV, r->recvd, pkt);
		snaa_recv_abort(qp);
	}
	return 0;
}

/* ---- RDMA WRITE (UC and RC) ------------------------------------------- */

/* Check the RETH of a WRITE's first packet.  Return 0 or the counter. */
static enum snaa_counter snaa_resp_reth(struct snaa_qp *qp,
					const struct snaa_pkt *pkt, int access)
{
	const struct snaa_reth_info *reth = &pkt->reth;
	struct snaa_mr *mr;
	int err;

	if (!(qp->access & access))
		return SNAA_CNT_DROP_ACCESS;
	if (reth->dma_len > SNAA_MAX_MSG_SIZE)
		return SNAA_CNT_DROP_LENGTH;
	if (!reth->dma_len)
		return 0;	/* IBA 9.4.4: no R_Key check for 0 bytes */
	mr = snaa_rkey_get(qp, reth->rkey, reth->va, reth->dma_len, access,
			   &err);
	if (!mr)
		return snaa_mr_err_counter(err);
	snaa_mr_put(mr);
	return 0;
}

/*
 * Place @len payload bytes at r->va.  The MR is looked up and checked for
 * every packet rather than pinned for the whole message, so that a peer
 * that never finishes a message cannot hold up deregistration.
 */
static enum snaa_counter snaa_resp_place(struct snaa_qp *qp,
					 const struct snaa_pkt *pkt,
					 struct sk_buff *skb)
{
	struct snaa_recv_state *r = &qp->recv;
	u32 len = pkt->payload_len;
	struct snaa_mr *mr;
	int err;

	mr = snaa_rkey_get(qp, r->rkey, r->va, len, IB_ACCESS_REMOTE_WRITE,
			   &err);
	if (!mr)
		return snaa_mr_err_counter(err);
	err = snaa_mr_write_skb(mr, r->va, skb, pkt->payload_off, len);
	snaa_mr_put(mr);
	return snaa_mr_err_counter(err);
}

/*
 * Check a WRITE packet: its RETH (first packet) or its length against
 * what is left.  Return 0 or the counter; *class_c tells an access
 * error (RC: remote access NAK) from an invalid request.
 */
static enum snaa_counter snaa_resp_write_check(struct snaa_qp *qp,
					       const struct snaa_pkt *pkt,
					       bool *class_c)
{
	struct snaa_recv_state *r = &qp->recv;
	u32 flags = pkt->op->flags, len = pkt->payload_len;
	enum snaa_counter drop;

	*class_c = false;
	if (flags & SNAA_OPF_START) {
		const struct snaa_reth_info *reth = &pkt->reth;

		if (reth->dma_len <= SNAA_MAX_MSG_SIZE &&
		    (flags & SNAA_OPF_ONLY ? len != reth->dma_len :
					     len >= reth->dma_len))
			return SNAA_CNT_DROP_LENGTH;
		drop = snaa_resp_reth(qp, pkt, IB_ACCESS_REMOTE_WRITE);
		*class_c = drop && drop != SNAA_CNT_DROP_LENGTH;
		return drop;
	}
	if (flags & SNAA_OPF_END ? len != r->resid : len >= r->resid)
		return SNAA_CNT_DROP_LENGTH;
	return 0;
}

/* Start a WRITE message at its first packet.  Its checks passed. */
static void snaa_resp_write_start(struct snaa_qp *qp,
				  const struct snaa_pkt *pkt)
{
	struct snaa_recv_state *r = &qp->recv;

	r->in_msg = true;
	r->is_send = false;
	r->rkey = pkt->reth.rkey;
	r->va = pkt->reth.va;
	r->dma_len = pkt->reth.dma_len;
	r->resid = pkt->reth.dma_len;
}

/* Place a checked WRITE packet; complete a WRITE with immediate. */
static enum snaa_counter snaa_resp_write_place(struct snaa_qp *qp,
					       const struct snaa_pkt *pkt,
					       struct sk_buff *skb)
{
	struct snaa_recv_state *r = &qp->recv;
	u32 flags = pkt->op->flags, len = pkt->payload_len;
	enum snaa_counter drop;

	if (len) {
		drop = snaa_resp_place(qp, pkt, skb);
		if (drop)
			return drop;
		r->va += len;
		r->resid -= len;
	}
	if (flags & SNAA_OPF_END) {
		if (flags & SNAA_OPF_IMMDT)
			snaa_rq_done(qp, IB_WC_RECV_RDMA_WITH_IMM, r->dma_len,
				     pkt);
		snaa_recv_abort(qp);
	}
	return 0;
}

/* ---- UC ------------------------------------------------------------------ */

static enum snaa_counter snaa_uc_write(struct snaa_qp *qp,
				       const struct snaa_pkt *pkt,
				       struct sk_buff *skb)
{
	enum snaa_counter drop;
	bool class_c;

	drop = snaa_resp_write_check(qp, pkt, &class_c);
	if (drop) {
		snaa_recv_abort(qp);
		return drop;
	}
	if (pkt->op->flags & SNAA_OPF_START)
		snaa_resp_write_start(qp, pkt);
	/* WRITE with immediate consumes a receive WQE: it must be there. */
	if ((pkt->op->flags & SNAA_OPF_IMMDT) && snaa_rq_fetch(qp)) {
		snaa_recv_abort(qp);
		return SNAA_CNT_DROP_NO_RECV_WQE;
	}
	drop = snaa_resp_write_place(qp, pkt, skb);
	if (drop)
		snaa_recv_abort(qp);
	return drop;
}

/*
 * UC responder.  IBA 9.7.5.1.4 (UC): a PSN other than the expected one
 * ends the message in progress; the responder resynchronises on the next
 * FIRST or ONLY packet and drops MIDDLE and LAST packets until then.
 */
static enum snaa_counter snaa_uc_rcv(struct snaa_qp *qp,
				     const struct snaa_pkt *pkt,
				     struct sk_buff *skb)
{
	struct snaa_recv_state *r = &qp->recv;
	u32 flags = pkt->op->flags;
	enum snaa_counter drop;
	bool gap = pkt->bth.psn != r->epsn;
	u8 status;

	r->epsn = snaa_psn_add(pkt->bth.psn, 1);
	if (gap || (r->in_msg && (flags & SNAA_OPF_START))) {
		snaa_recv_abort(qp);
		if (!(flags & SNAA_OPF_START))
			return SNAA_CNT_DROP_PSN_GAP;
	}
	drop = snaa_resp_seq(qp, pkt);
	if (drop) {
		snaa_recv_abort(qp);
		return drop;
	}
	if (!(flags & SNAA_OPF_SEND))
		return snaa_uc_write(qp, pkt, skb);
	drop = snaa_resp_send(qp, pkt, skb, &status);
	if (drop && drop != SNAA_CNT_DROP_NO_RECV_WQE &&
	    drop != SNAA_CNT_DROP_QP_STATE) {
		/* A local error on the receive WQE: QP to ERR. */
		snaa_qp_error(qp, 0);
		snaa_rq_flush(qp);
	}
	return drop;
}

/* ---- RC ------------------------------------------------------------------ */

/* A duplicate request (PSN before the expected one): answer it again. */
static enum snaa_counter snaa_rc_duplicate(struct snaa_qp *qp,
					   const struct snaa_pkt *pkt)
{
	u32 psn = pkt->bth.psn, flags = pkt->op->flags, i;
	u32 n = snaa_res_num(qp);
	struct snaa_res *res;

	snaa_count(qp->sdev, SNAA_CNT_RC_DUPLICATES, 1);
	if (!(flags & (SNAA_OPF_READ | SNAA_OPF_ATOMIC))) {
		/* Already done: acknowledge everything received. */
		snaa_resp_ack(qp, snaa_psn_add(qp->recv.epsn, -1));
		return 0;
	}
	for (i = 0; i < n; i++) {
		res = &qp->recv.res[i];
		if (!res->npkts || snaa_psn_diff(psn, res->psn) < 0 ||
		    snaa_psn_diff(psn, res->psn) >= (int)res->npkts)
			continue;
		if (res->atomic) {
			/* Never executed twice: the saved result again. */
			if (!(flags & SNAA_OPF_ATOMIC) || psn != res->psn)
				break;
			snaa_res_set_pending(qp, res, true);
			res->dup = true;
			return 0;
		}
		if (!(flags & SNAA_OPF_READ) ||
		    snaa_resp_reth(qp, pkt, IB_ACCESS_REMOTE_READ))
			break;
		/* A READ retried from @psn on, for what is left. */
		res->psn = psn;
		res->va = pkt->reth.va;
		res->rkey = pkt->reth.rkey;
		res->length = pkt->reth.dma_len;
		res->npkts = max(snaa_num_pkts(res->length, qp->path_mtu), 1U);
		res->sent = 0;
		snaa_res_set_pending(qp, res, true);
		res->dup = true;
		return 0;
	}
	return SNAA_CNT_DROP_STALE_RESPONSE;	/* too old to answer */
}

/* A resource slot for a new READ or atomic request, or NULL if full. */
static struct snaa_res *snaa_rc_res_take(struct snaa_qp *qp)
{
	struct snaa_res *res = &qp->recv.res[qp->recv.res_head];

	/*
	 * Still sending the first answer: the requester has more
	 * outstanding than max_dest_rd_atomic.  An answer to a duplicate
	 * may be cut short: the requester would not send a new request
	 * if it still waited for that one (its max_rd_atomic).
	 */
	if (res->pending && !res->dup)
		return NULL;
	qp->recv.res_head = (qp->recv.res_head + 1) % snaa_res_num(qp);
	snaa_res_set_pending(qp, res, false);
	memset(res, 0, sizeof(*res));
	return res;
}

static enum snaa_counter snaa_rc_read(struct snaa_qp *qp,
				      const struct snaa_pkt *pkt)
{
	struct snaa_recv_state *r = &qp->recv;
	enum snaa_counter drop;
	struct snaa_res *res;

	drop = snaa_resp_reth(qp, pkt, IB_ACCESS_REMOTE_READ);
	if (drop) {
		if (drop == SNAA_CNT_DROP_LENGTH)
			snaa_resp_fatal(qp, pkt, SNAA_NAK_INVALID_REQUEST,
					IB_EVENT_QP_REQ_ERR);
		else
			snaa_resp_fatal(qp, pkt, SNAA_NAK_REMOTE_ACCESS_ERROR,
					IB_EVENT_QP_ACCESS_ERR);
		return drop;
	}
	res = snaa_rc_res_take(qp);
	if (!res) {
		snaa_resp_fatal(qp, pkt, SNAA_NAK_INVALID_REQUEST,
				IB_EVENT_QP_REQ_ERR);
		return SNAA_CNT_DROP_LENGTH;
	}
	res->psn = pkt->bth.psn;
	res->va = pkt->reth.va;
	res->rkey = pkt->reth.rkey;
	res->length = pkt->reth.dma_len;
	res->npkts = max(snaa_num_pkts(res->length, qp->path_mtu), 1U);
	snaa_res_set_pending(qp, res, true);
	r->msn++;
	r->epsn = snaa_psn_add(r->epsn, res->npkts);
	return 0;
}

static enum snaa_counter snaa_rc_atomic(struct snaa_qp *qp,
					const struct snaa_pkt *pkt)
{
	const struct snaa_atmeth_info *a = &pkt->atmeth;
	struct snaa_recv_state *r = &qp->recv;
	struct snaa_res *res;
	struct snaa_mr *mr;
	int err;

	if (!(qp->access & IB_ACCESS_REMOTE_ATOMIC)) {
		snaa_resp_fatal(qp, pkt, SNAA_NAK_REMOTE_ACCESS_ERROR,
				IB_EVENT_QP_ACCESS_ERR);
		return SNAA_CNT_DROP_ACCESS;
	}
	mr = snaa_rkey_get(qp, a->rkey, a->va, 8, IB_ACCESS_REMOTE_ATOMIC,
			   &err);
	if (!mr) {
		snaa_resp_fatal(qp, pkt, SNAA_NAK_REMOTE_ACCESS_ERROR,
				IB_EVENT_QP_ACCESS_ERR);
		return snaa_mr_err_counter(err);
	}
	if (!snaa_mr_atomic_aligned(mr, a->va)) {
		/* IBA 9.4.5: a misaligned atomic is an invalid request */
		snaa_mr_put(mr);
		snaa_resp_fatal(qp, pkt, SNAA_NAK_INVALID_REQUEST,
				IB_EVENT_QP_REQ_ERR);
		return SNAA_CNT_DROP_ATOMIC_ALIGN;
	}
	res = snaa_rc_res_take(qp);
	if (!res) {
		snaa_mr_put(mr);
		snaa_resp_fatal(qp, pkt, SNAA_NAK_INVALID_REQUEST,
				IB_EVENT_QP_REQ_ERR);
		return SNAA_CNT_DROP_LENGTH;
	}
	res->orig = snaa_mr_atomic(mr, a->va,
				   pkt->bth.opcode == (SNAA_OPCODE_RC |
						       SNAA_OP_CMP_SWAP),
				   pkt->bth.opcode == (SNAA_OPCODE_RC |
						       SNAA_OP_CMP_SWAP) ?
				   a->compare : a->swap_add, a->swap_add);
	snaa_mr_put(mr);
	res->psn = pkt->bth.psn;
	res->npkts = 1;
	res->atomic = true;
	snaa_res_set_pending(qp, res, true);
	r->msn++;
	r->epsn = snaa_psn_add(r->epsn, 1);
	return 0;
}

/*
 * No receive WQE: RNR NAK (IBA 9.7.5.2.8).  The requester waits and
 * sends this packet and what followed it again; the packets already on
 * their way are dropped without a sequence NAK of their own.
 */
static void snaa_rc_rnr(struct snaa_qp *qp, const struct snaa_pkt *pkt)
{
	snaa_resp_nak(qp, snaa_aeth_syndrome(SNAA_AETH_RNR_NAK,
					     qp->min_rnr_timer),
		      pkt->bth.psn);
	qp->recv.nak_sent = true;
}

/*
 * An RC request packet was placed: the MSN counts a message it ends, the
 * expected PSN moves past it, and it is acknowledged if the requester
 * asked (the AckReq bit).
 */
static void snaa_rc_accepted(struct snaa_qp *qp, const struct snaa_pkt *pkt)
{
	struct snaa_recv_state *r = &qp->recv;

	if (pkt->op->flags & SNAA_OPF_END)
		r->msn++;
	r->epsn = snaa_psn_add(r->epsn, 1);
	if (pkt->bth.ack_req)
		snaa_resp_ack(qp, pkt->bth.psn);
}

static enum snaa_counter snaa_rc_write(struct snaa_qp *qp,
				       const struct snaa_pkt *pkt,
				       struct sk_buff *skb)
{
	u32 flags = pkt->op->flags;
	enum snaa_counter drop;
	bool class_c;

	drop = snaa_resp_write_check(qp, pkt, &class_c);
	if (drop) {
		if (class_c)
			snaa_resp_fatal(qp, pkt, SNAA_NAK_REMOTE_ACCESS_ERROR,
					IB_EVENT_QP_ACCESS_ERR);
		else
			snaa_resp_fatal(qp, pkt, SNAA_NAK_INVALID_REQUEST,
					IB_EVENT_QP_REQ_ERR);
		return drop;
	}
	/*
	 * WRITE with immediate consumes a receive WQE: without one, RNR
	 * NAK before anything of this packet is written (the requester
	 * sends it again).
	 */
	if ((flags & SNAA_OPF_IMMDT) && snaa_rq_fetch(qp)) {
		snaa_rc_rnr(qp, pkt);
		return 0;	/* counted as an RNR NAK; epsn stays */
	}
	if (flags & SNAA_OPF_START)
		snaa_resp_write_start(qp, pkt);
	drop = snaa_resp_write_place(qp, pkt, skb);
	if (drop) {
		snaa_resp_fatal(qp, pkt, SNAA_NAK_REMOTE_ACCESS_ERROR,
				IB_EVENT_QP_ACCESS_ERR);
		return drop;
	}
	snaa_rc_accepted(qp, pkt);
	return 0;
}

static enum snaa_counter snaa_rc_send(struct snaa_qp *qp,
				      const struct snaa_pkt *pkt,
				      struct sk_buff *skb)
{
	enum snaa_counter drop;
	u8 status;

	drop = snaa_resp_send(qp, pkt, skb, &status);
	if (drop == SNAA_CNT_DROP_NO_RECV_WQE) {
		snaa_rc_rnr(qp, pkt);
		return 0;	/* counted as an RNR NAK; epsn stays */
	}
	if (drop == SNAA_CNT_DROP_QP_STATE)
		return drop;
	if (drop) {
		/*
		 * The receive WQE was too short (invalid request, as
		 * rdma_rxe and RoCE NICs answer), has a bad SGE (remote
		 * operational error), or the SEND named a key this QP may
		 * not invalidate (invalid request); it completed in error.
		 */
		snaa_resp_fatal(qp, pkt, status == IB_WC_LOC_PROT_ERR ?
				SNAA_NAK_REMOTE_OP_ERROR :
				SNAA_NAK_INVALID_REQUEST,
				status == IB_WC_LOC_PROT_ERR ?
				IB_EVENT_QP_FATAL : IB_EVENT_QP_REQ_ERR);
		return drop;
	}
	snaa_rc_accepted(qp, pkt);
	return 0;
}

/* RC responder (IBA 9.7.5.1, 9.9). */
static enum snaa_counter snaa_rc_rcv(struct snaa_qp *qp,
				     const struct snaa_pkt *pkt,
				     struct sk_buff *skb)
{
	struct snaa_recv_state *r = &qp->recv;
	u32 flags = pkt->op->flags;
	int d = snaa_psn_diff(pkt->bth.psn, r->epsn);
	enum snaa_counter drop;

	if (r->halted)
		return SNAA_CNT_DROP_QP_STATE;	/* on its way to ERR */
	if (d > 0) {
		/* A gap: NAK once, drop until the expected PSN comes. */
		if (!r->nak_sent) {
			r->nak_sent = true;
			snaa_resp_nak(qp, snaa_aeth_syndrome(SNAA_AETH_NAK,
					SNAA_NAK_PSN_SEQ_ERROR), r->epsn);
		}
		return SNAA_CNT_DROP_PSN_GAP;
	}
	if (d < 0)
		return snaa_rc_duplicate(qp, pkt);
	r->nak_sent = false;

	if (flags & (SNAA_OPF_READ | SNAA_OPF_ATOMIC)) {
		if (r->in_msg) {
			snaa_resp_fatal(qp, pkt, SNAA_NAK_INVALID_REQUEST,
					IB_EVENT_QP_REQ_ERR);
			return SNAA_CNT_DROP_BAD_SEQ;
		}
		return flags & SNAA_OPF_READ ? snaa_rc_read(qp, pkt) :
					       snaa_rc_atomic(qp, pkt);
	}
	drop = snaa_resp_seq(qp, pkt);
	if (drop) {
		snaa_resp_fatal(qp, pkt, SNAA_NAK_INVALID_REQUEST,
				IB_EVENT_QP_REQ_ERR);
		return drop;
	}
	if (flags & SNAA_OPF_SEND)
		return snaa_rc_send(qp, pkt, skb);
	return snaa_rc_write(qp, pkt, skb);
}

/* ---- UD ------------------------------------------------------------------ */

/*
 * The 40-byte GRH area of a UD receive (IBA 11.4.1.2, RoCEv2 Annex
 * A17.4.5.1): the IPv6 header, or 20 bytes of zeros and the IPv4
 * header, as the packet carried it (looped-back packets never had one:
 * it is made up from the sender's path).
 */
static void snaa_ud_grh(struct sk_buff *skb, u8 grh[40])
{
	struct snaa_skb_cb *cb = snaa_skb_cb(skb);
	u32 paylen = skb->len + SNAA_UDP_HDR_BYTES;

	memset(grh, 0, 40);
	if (!cb->loopback) {
		if (cb->ipv6)
			memcpy(grh, skb_network_header(skb), 40);
		else
			memcpy(grh + 20, skb_network_header(skb), 20);
		return;
	}
	if (cb->ipv6) {
		struct ipv6hdr *ip6 = (struct ipv6hdr *)grh;

		ip6_flow_hdr(ip6, cb->tos, htonl(cb->flow_label &
						 IB_GRH_FLOWLABEL_MASK));
		ip6->payload_len = htons(paylen);
		ip6->nexthdr = IPPROTO_UDP;
		ip6->hop_limit = cb->ttl;
		ip6->saddr = cb->saddr.v6;
		ip6->daddr = cb->daddr.v6;
	} else {
		struct iphdr *iph = (struct iphdr *)(grh + 20);

		iph->version = 4;
		iph->ihl = 5;
		iph->tos = cb->tos;
		iph->tot_len = htons(paylen + sizeof(*iph));
		iph->frag_off = htons(IP_DF);
		iph->ttl = cb->ttl;
		iph->protocol = IPPROTO_UDP;
		iph->saddr = cb->saddr.v4.s_addr;
		iph->daddr = cb->daddr.v4.s_addr;
		iph->check = ip_fast_csum((u8 *)iph, iph->ihl);
	}
}

/*
 * UD responder: Q_Key check (IBA 10.2.5), one receive WQE per message,
 * the GRH area first (IBV_WC_GRH), byte_len including it.
 */
static enum snaa_counter snaa_ud_rcv(struct snaa_qp *qp,
				     const struct snaa_pkt *pkt,
				     struct sk_buff *skb)
{
	struct snaa_recv_state *r = &qp->recv;
	struct snaa_cqe cqe = {};
	u8 grh[40];
	int err;

	if (pkt->deth.qkey != qp->qkey)
		return SNAA_CNT_DROP_BAD_QKEY;
	err = snaa_rq_fetch(qp);
	if (err == -ENOENT)
		return SNAA_CNT_DROP_NO_RECV_WQE;
	if (err) {
		snaa_qp_error(qp, IB_EVENT_QP_FATAL);
		return SNAA_CNT_DROP_QP_STATE;
	}
	r->recvd = 0;
	snaa_ud_grh(skb, grh);
	err = snaa_rq_scatter(qp, NULL, 0, grh, sizeof(grh));
	if (!err)
		err = snaa_rq_scatter(qp, skb, pkt->payload_off, NULL,
				      pkt->payload_len);
	if (err) {
		/* UD: the WQE completes in error, the QP goes on. */
		snaa_rq_fail(qp, err == -EMSGSIZE ? IB_WC_LOC_LEN_ERR :
						    IB_WC_LOC_PROT_ERR);
		r->recvd = 0;
		return err == -EMSGSIZE ? SNAA_CNT_DROP_LENGTH :
					  snaa_mr_err_counter(err);
	}
	cqe.opcode = IB_WC_RECV;
	cqe.status = IB_WC_SUCCESS;
	cqe.byte_len = r->recvd;
	cqe.src_qp = pkt->deth.sqpn;
	cqe.wc_flags = SNAA_WC_GRH | (snaa_skb_cb(skb)->ipv6 ?
				      SNAA_WC_NET_IPV6 : SNAA_WC_NET_IPV4);
	if (pkt->op->flags & SNAA_OPF_IMMDT) {
		cqe.wc_flags |= SNAA_WC_WITH_IMM;
		cqe.imm_data = (__force u32)cpu_to_be32(pkt->imm);
	}
	snaa_rq_complete(qp, &cqe, pkt->bth.se);
	r->recvd = 0;
	return 0;
}

/**
 * snaa_resp_rcv() - a request for this QP's responder
 * @qp: the QP; its type matches the packet's transport, its state and
 *	(connected QPs) addresses were checked
 * @pkt: the parsed packet
 * @skb: the packet
 *
 * Context: softirq, qp->rq_lock held.
 * Return: 0 if the packet was used, else the counter of its drop.
 */
enum snaa_counter snaa_resp_rcv(struct snaa_qp *qp, const struct snaa_pkt *pkt,
				struct sk_buff *skb)
{
	lockdep_assert_held(&qp->rq_lock);
	switch (qp->ibqp.qp_type) {
	case IB_QPT_RC:
		return snaa_rc_rcv(qp, pkt, skb);
	case IB_QPT_UC:
		return snaa_uc_rcv(qp, pkt, skb);
	default:
		return snaa_ud_rcv(qp, pkt, skb);
	}
}
