// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * snaa requester: posting to the send queue, and the send queue
 * processor that turns WQEs into RoCEv2 packets for RC, UC and UD.
 *
 * Concurrency.  One context processes a QP's send queue at a time, under
 * qp->sq_mutex: the process that rang the doorbell (no work queue hop)
 * or the QP's work item, which also sends the responder's queued
 * responses (snaa_resp_tx()).  What the processor shares with the RC
 * completer and the retransmit and RNR timers, which run in softirq, is
 * under qp->sq_lock: each packet is decided and built under it, and sent
 * after it is dropped, so no QP lock is held while a packet goes out (a
 * looped-back packet is received synchronously, and its ACK comes back
 * into the completer on the same stack).
 *
 * Every WQE is copied out of the user's ring once, when it is fetched,
 * into a shadow entry (struct snaa_swqe) that retransmissions use.
 */

#include <linux/sched.h>
#include <linux/sched/isolation.h>

#include "snaa.h"

/* Packets sent per processor run before yielding to the work queue. */
#define SNAA_SQ_BUDGET		256
/* RC: AckReq at least this often within a long message. */
#define SNAA_RC_ACKREQ_EVERY	64

static u8 snaa_wc_opcode(u32 wr_opcode)
{
	switch (wr_opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return IB_WC_RDMA_WRITE;
	case IB_WR_RDMA_READ:
		return IB_WC_RDMA_READ;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		return IB_WC_COMP_SWAP;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return IB_WC_FETCH_ADD;
	case IB_WR_LOCAL_INV:
		return IB_WC_LOCAL_INV;
	case IB_WR_BIND_MW:
		return IB_WC_BIND_MW;
	case IB_WR_REG_MR:
		return IB_WC_REG_MR;
	default:
		return IB_WC_SEND;
	}
}

/*
 * Which opcodes each transport takes.  Return the WQE kind, or -1 for
 * an opcode the QP type does not have.
 */
static int snaa_wqe_kind(enum ib_qp_type type, u32 opcode)
{
	switch (opcode) {
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
		return SNAA_WK_SEND;
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return type == IB_QPT_RC || type == IB_QPT_UC ?
		       SNAA_WK_WRITE : -1;
	case IB_WR_RDMA_READ:
		return type == IB_QPT_RC ? SNAA_WK_READ : -1;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return type == IB_QPT_RC ? SNAA_WK_ATOMIC : -1;
	case IB_WR_SEND_WITH_INV:
		return type == IB_QPT_RC ? SNAA_WK_SEND : -1;
	case IB_WR_LOCAL_INV:
	case IB_WR_BIND_MW:
	case IB_WR_REG_MR:
		return type == IB_QPT_RC || type == IB_QPT_UC ?
		       SNAA_WK_LOCAL : -1;
	default:
		return -1;
	}
}

/* The largest UD message: what the port carries. */
static u32 snaa_ud_mtu(struct snaa_qp *qp)
{
	return snaa_mtu_from_netdev(READ_ONCE(qp->sdev->ndev->mtu));
}

/* Does a successful WQE with these SNAA_WQE_* flags make a completion? */
static bool snaa_wqe_signaled(const struct snaa_qp *qp, u32 flags)
{
	return qp->sq_sig_all || (flags & SNAA_WQE_SIGNALED);
}

/**
 * snaa_sq_complete() - complete the oldest outstanding send WQE
 * @qp: the QP
 * @status: IB_WC_*
 *
 * Frees its ring slot (the consumer index moves before the CQE is
 * visible: a poster that sees the completion may reuse the slot at once)
 * and posts a CQE if the WQE is signaled or failed.
 *
 * Context: qp->sq_lock held.
 */
void snaa_sq_complete(struct snaa_qp *qp, enum ib_wc_status status)
{
	struct snaa_swqe *w = snaa_swqe(qp, qp->sq.kidx);
	struct snaa_cqe cqe = {
		.wr_id = w->wqe.wr_id,
		.qp_num = qp->ibqp.qp_num,
		.opcode = snaa_wc_opcode(w->wqe.opcode),
		.status = status,
	};

	lockdep_assert_held(&qp->sq_lock);
	if (status == IB_WC_SUCCESS)
		cqe.byte_len = w->length;
	if (w->aav) {
		snaa_ah_av_put(w->aav);
		w->aav = NULL;
	}
	if (qp->req.cur == qp->sq.kidx) {
		/* completed before it was sent (an error, a flush) */
		qp->req.cur++;
		qp->req.offset = 0;
		qp->req.sge_idx = 0;
		qp->req.sge_off = 0;
	} else if (w->kind == SNAA_WK_READ || w->kind == SNAA_WK_ATOMIC) {
		qp->req.rd_atomic--;	/* it was in [kidx, cur) */
	}
	snaa_ring_publish_consumer(&qp->sq, ++qp->sq.kidx);
	if (status != IB_WC_SUCCESS || snaa_wqe_signaled(qp, w->wqe.flags))
		snaa_cq_post(qp->scq, &cqe, qp, false);
}

/*
 * Copy the SQE at req.head out of the ring into its shadow entry and
 * validate it.  Return 1 if one was fetched (possibly with an error
 * status to complete it with), 0 if the ring is empty, or -EPROTO if
 * user space corrupted the ring index.
 */
static int snaa_sq_fetch(struct snaa_qp *qp)
{
	struct snaa_queue *q = &qp->sq;
	u32 idx = qp->req.head, prod, i;
	const struct snaa_sqe *slot;
	struct snaa_swqe *w;
	struct snaa_sge *sge;
	int kind;
	u64 len = 0;

	prod = snaa_ring_producer(q);
	if (prod == idx)
		return 0;
	/*
	 * A WCU.BUF QP's send side is the kernel's (snaa_wcubuf.c).  The
	 * slots from kidx to head hold WQEs still outstanding: a producer
	 * that claims more than the free slots after head, or one moved
	 * back behind head (a huge distance, unsigned), is corrupt.
	 */
	if (prod - idx > q->num - (idx - q->kidx) || qp->wcu)
		return -EPROTO;

	slot = snaa_ring_slot(q, idx);
	w = snaa_swqe(qp, idx);
	memcpy(&w->wqe, slot, sizeof(w->wqe));
	/* the SGEs or the inline data */
	memcpy(snaa_swqe_sge(w), slot->sge, q->stride - sizeof(*slot));
	w->length = 0;
	w->done = 0;
	w->first_psn = w->last_psn = 0;
	w->status = IB_WC_SUCCESS;
	w->aav = NULL;
	if (qp->sq_ahs)
		swap(w->aav, qp->sq_ahs[idx & (q->num - 1)]);
	qp->req.head++;

	kind = snaa_wqe_kind(qp->ibqp.qp_type, w->wqe.opcode);
	if (kind < 0) {
		w->kind = SNAA_WK_SEND;
		w->status = IB_WC_LOC_QP_OP_ERR;
		return 1;
	}
	w->kind = kind;

	if (kind == SNAA_WK_LOCAL) {
		/* no data: the operation is in the header */
		if (w->wqe.num_sge || (w->wqe.flags & SNAA_WQE_INLINE))
			w->status = IB_WC_LOC_QP_OP_ERR;
		return 1;
	}
	if (w->wqe.flags & SNAA_WQE_INLINE) {
		/* inline: SEND and WRITE only, checked by the poster too */
		if (kind == SNAA_WK_READ || kind == SNAA_WK_ATOMIC ||
		    w->wqe.inline_len > qp->max_inline) {
			w->status = IB_WC_LOC_LEN_ERR;
			return 1;
		}
		w->length = w->wqe.inline_len;
	} else {
		if (w->wqe.num_sge > qp->max_send_sge) {
			w->status = IB_WC_LOC_LEN_ERR;
			return 1;
		}
		sge = snaa_swqe_sge(w);
		for (i = 0; i < w->wqe.num_sge; i++)
			len += sge[i].length;
		if (len > SNAA_MAX_MSG_SIZE) {
			w->status = IB_WC_LOC_LEN_ERR;
			return 1;
		}
		w->length = len;
	}

	switch (kind) {
	case SNAA_WK_ATOMIC:
		/* The original value lands in 8 bytes of the local SGEs. */
		if (w->length < 8) {
			w->status = IB_WC_LOC_LEN_ERR;
			return 1;
		}
		w->length = 8;
		break;
	case SNAA_WK_SEND:
		if (!snaa_qp_ud(qp))
			break;
		if (w->length > snaa_ud_mtu(qp)) {
			w->status = IB_WC_LOC_LEN_ERR;
			return 1;
		}
		if (!w->aav)
			w->aav = snaa_ah_get(qp->sdev, w->wqe.ah_handle,
					     qp->ibqp.pd);
		if (!w->aav) {
			w->status = IB_WC_LOC_QP_OP_ERR;
			return 1;
		}
		break;
	default:
		break;
	}
	return 1;
}

/* Put the SGE cursor of req.cur at req.offset. */
static void snaa_req_seek(struct snaa_qp *qp, struct snaa_swqe *w)
{
	struct snaa_req *r = &qp->req;
	struct snaa_sge *sge = snaa_swqe_sge(w);
	u64 left = r->offset;
	u32 i = 0;

	if (!(w->wqe.flags & SNAA_WQE_INLINE))
		while (i < w->wqe.num_sge && left >= sge[i].length) {
			left -= sge[i].length;
			i++;
		}
	r->sge_idx = i;
	r->sge_off = (u32)left;
}

/*
 * Gather @len bytes of req.cur's message at the cursor into @dst and
 * move the cursor.  Return 0 or a negative errno (bad lkey, bounds).
 */
static int snaa_sq_gather(struct snaa_qp *qp, struct snaa_swqe *w, u8 *dst,
			  u32 len)
{
	struct snaa_req *r = &qp->req;
	struct snaa_sge *sge;
	struct snaa_mr *mr;
	u32 chunk;
	int err;

	if (w->wqe.flags & SNAA_WQE_INLINE) {
		memcpy(dst, snaa_swqe_inline(w) + r->offset, len);
		return 0;
	}
	while (len) {
		sge = &snaa_swqe_sge(w)[r->sge_idx];
		if (r->sge_off == sge->length) {
			r->sge_idx++;
			r->sge_off = 0;
			continue;
		}
		chunk = min(len, sge->length - r->sge_off);
		mr = snaa_mr_get(qp->sdev, sge->lkey);
		if (!mr)
			return -EACCES;
		err = snaa_mr_check(mr, qp->ibqp.pd, sge->addr + r->sge_off,
				    chunk, 0);
		if (!err)
			snaa_mr_read(mr, sge->addr + r->sge_off, dst, chunk);
		snaa_mr_put(mr);
		if (err)
			return err;
		dst += chunk;
		r->sge_off += chunk;
		len -= chunk;
	}
	return 0;
}

/*
 * Check that the local SGEs of a READ or atomic WQE can take its
 * response, before the request goes out.
 */
static int snaa_sq_check_local(struct snaa_qp *qp, struct snaa_swqe *w)
{
	struct snaa_sge *sge = snaa_swqe_sge(w);
	u64 left = w->length;
	struct snaa_mr *mr;
	u32 i, n;
	int err = 0;

	for (i = 0; i < w->wqe.num_sge && left && !err; i++) {
		n = min_t(u64, left, sge[i].length);
		if (!n)
			continue;
		mr = snaa_mr_get(qp->sdev, sge[i].lkey);
		if (!mr)
			return -EACCES;
		err = snaa_mr_check(mr, qp->ibqp.pd, sge[i].addr, n,
				    IB_ACCESS_LOCAL_WRITE);
		snaa_mr_put(mr);
		left -= n;
	}
	return err;
}

/*
 * RC: packets the window still lets the requester send from req.psn.
 * A READ is sent while there is room and then takes all its responses'
 * PSNs, so the PSNs outstanding stay below the window plus the largest
 * READ: within the 2^23 the IBA allows.
 */
static int snaa_rc_room(const struct snaa_qp *qp)
{
	BUILD_BUG_ON(SNAA_RC_WINDOW + SNAA_MAX_MSG_SIZE / 256 >= 1U << 23);
	return (int)qp->req.cwnd - snaa_psn_diff(qp->req.psn, qp->comp.psn);
}

/* One packet of RC/UC SEND or WRITE: bytes at req.offset. */
static struct sk_buff *snaa_req_send_write(struct snaa_qp *qp,
					   struct snaa_swqe *w, int *err)
{
	struct snaa_req *r = &qp->req;
	enum snaa_transport tr = qp->ibqp.qp_type == IB_QPT_RC ? SNAA_TR_RC :
							       SNAA_TR_UC;
	bool imm = w->wqe.opcode == IB_WR_SEND_WITH_IMM ||
		   w->wqe.opcode == IB_WR_RDMA_WRITE_WITH_IMM;
	const struct snaa_opcode_info *op;
	struct snaa_bth_info bth = {};
	u32 paylen, pad;
	struct sk_buff *skb;
	bool first, last;
	int opcode;
	u8 *p;

	paylen = min_t(u64, qp->path_mtu, w->length - r->offset);
	first = r->offset == 0;
	last = r->offset + paylen == w->length;
	if (last && w->wqe.opcode == IB_WR_SEND_WITH_INV)	/* RC only */
		opcode = SNAA_OPCODE_RC | (first ? SNAA_OP_SEND_ONLY_INV :
						   SNAA_OP_SEND_LAST_INV);
	else
		opcode = snaa_req_opcode(tr, w->kind == SNAA_WK_WRITE ?
					 SNAA_OPF_WRITE : SNAA_OPF_SEND,
					 first, last, imm);
	op = snaa_opcode_lookup(opcode);
	pad = snaa_pad_for(paylen);
	skb = snaa_skb_alloc(qp->sdev, &qp->av, op->hdr_len + paylen + pad);
	if (!skb) {
		*err = -ENOMEM;
		return NULL;
	}
	p = skb_put(skb, op->hdr_len + paylen + pad);
	bth.opcode = op->opcode;
	bth.se = last && (w->wqe.flags & SNAA_WQE_SOLICITED);
	bth.pad = pad;
	bth.pkey = SNAA_DEFAULT_PKEY;
	bth.dqpn = qp->dest_qpn;
	bth.psn = r->psn;
	/*
	 * RC asks for an ACK at the end of a message, every so often in a
	 * long one, and when the packet fills the window: the requester
	 * then waits for that ACK, which must not wait for more.
	 */
	if (tr == SNAA_TR_RC &&
	    (last || ++r->since_ackreq >= SNAA_RC_ACKREQ_EVERY ||
	     snaa_rc_room(qp) <= 1)) {
		bth.ack_req = 1;
		r->since_ackreq = 0;
	}
	snaa_bth_set(p, &bth);
	if (op->flags & SNAA_OPF_RETH) {
		struct snaa_reth_info reth = {
			.va = w->wqe.remote_addr,
			.rkey = w->wqe.rkey,
			.dma_len = w->length,
		};

		snaa_reth_set(p + op->reth_off, &reth);
	}
	if (op->flags & SNAA_OPF_IMMDT)
		snaa_immdt_set(p + op->immdt_off,
			       be32_to_cpu((__force __be32)w->wqe.imm_data));
	if (op->flags & SNAA_OPF_IETH)
		snaa_ieth_set(p + op->ieth_off, w->wqe.imm_data);
	*err = snaa_sq_gather(qp, w, p + op->hdr_len, paylen);
	if (*err) {
		kfree_skb(skb);
		return NULL;
	}
	memset(p + op->hdr_len + paylen, 0, pad);
	if (first) {
		/*
		 * Known from the start: an ACK may cover it before its end
		 * is sent again after a rewind.
		 */
		w->first_psn = r->psn;
		w->last_psn = snaa_psn_add(r->psn,
			max(snaa_num_pkts(w->length, qp->path_mtu), 1U) - 1);
	}
	r->psn = snaa_psn_add(r->psn, 1);
	r->offset += paylen;
	if (last)
		w->last_psn = snaa_psn_add(r->psn, -1);
	return skb;
}

/*
 * An RDMA READ request for the part of the response not placed yet
 * (all of it, unless this is a retry), or an atomic request.
 */
static struct sk_buff *snaa_req_read_atomic(struct snaa_qp *qp,
					    struct snaa_swqe *w, int *err)
{
	struct snaa_req *r = &qp->req;
	bool read = w->kind == SNAA_WK_READ;
	const struct snaa_opcode_info *op;
	struct snaa_bth_info bth = {};
	struct sk_buff *skb;
	u32 npkts;
	u8 *p;

	op = snaa_opcode_lookup(read ? SNAA_OP_READ_REQUEST :
				w->wqe.opcode == IB_WR_ATOMIC_CMP_AND_SWP ?
				SNAA_OP_CMP_SWAP : SNAA_OP_FETCH_ADD);
	skb = snaa_skb_alloc(qp->sdev, &qp->av, op->hdr_len);
	if (!skb) {
		*err = -ENOMEM;
		return NULL;
	}
	p = skb_put(skb, op->hdr_len);
	/*
	 * Responses may have arrived since the rewind that chose req.psn:
	 * the request asks for what is missing now, at its PSN, so that
	 * the PSNs of the responses match the VA they carry.
	 */
	if (read && w->done)
		r->psn = snaa_psn_add(w->first_psn,
				      (u32)(w->done / qp->path_mtu));
	bth.opcode = op->opcode;
	bth.pkey = SNAA_DEFAULT_PKEY;
	bth.dqpn = qp->dest_qpn;
	bth.psn = r->psn;
	bth.ack_req = 1;
	snaa_bth_set(p, &bth);
	if (read) {
		struct snaa_reth_info reth = {
			.va = w->wqe.remote_addr + w->done,
			.rkey = w->wqe.rkey,
			.dma_len = w->length - w->done,
		};

		snaa_reth_set(p + op->reth_off, &reth);
		/* responses of what is left; the first one at this PSN */
		npkts = max(snaa_num_pkts(w->length - w->done, qp->path_mtu),
			    1U);
		if (!w->done)
			w->first_psn = r->psn;
		w->last_psn = snaa_psn_add(r->psn, npkts - 1);
	} else {
		struct snaa_atmeth_info a = {
			.va = w->wqe.remote_addr,
			.rkey = w->wqe.rkey,
			.swap_add = w->wqe.opcode == IB_WR_ATOMIC_CMP_AND_SWP ?
				    w->wqe.swap :
				    w->wqe.compare_add,
			.compare = w->wqe.compare_add,
		};

		snaa_atmeth_set(p + op->atmeth_off, &a);
		npkts = 1;
		w->first_psn = w->last_psn = r->psn;
	}
	r->psn = snaa_psn_add(r->psn, npkts);
	r->offset = w->length;
	r->since_ackreq = 0;
	return skb;
}

/*
 * The one packet of a UD SEND.  The WQE completes as soon as it is
 * built, so the caller gets its own reference to the destination.
 */
static struct sk_buff *snaa_req_ud(struct snaa_qp *qp, struct snaa_swqe *w,
				   struct snaa_ah_av **aav, int *err)
{
	bool imm = w->wqe.opcode == IB_WR_SEND_WITH_IMM;
	const struct snaa_opcode_info *op;
	struct snaa_bth_info bth = {};
	struct snaa_deth_info deth;
	u32 pad = snaa_pad_for(w->length);
	struct sk_buff *skb;
	u8 *p;

	op = snaa_opcode_lookup(SNAA_OPCODE_UD |
				(imm ? SNAA_OP_SEND_ONLY_IMM : SNAA_OP_SEND_ONLY));
	skb = snaa_skb_alloc(qp->sdev, &w->aav->av,
			     op->hdr_len + w->length + pad);
	if (!skb) {
		*err = -ENOMEM;
		return NULL;
	}
	p = skb_put(skb, op->hdr_len + w->length + pad);
	bth.opcode = op->opcode;
	bth.se = !!(w->wqe.flags & SNAA_WQE_SOLICITED);
	bth.pad = pad;
	bth.pkey = SNAA_DEFAULT_PKEY;
	bth.dqpn = w->wqe.remote_qpn & SNAA_QPN_MASK;
	bth.psn = qp->req.psn;
	snaa_bth_set(p, &bth);
	/* IBA 10.2.5: a Q_Key with the high bit set means the QP's own. */
	deth.qkey = (w->wqe.remote_qkey & 0x80000000u) ? qp->qkey :
							     w->wqe.remote_qkey;
	deth.sqpn = qp->ibqp.qp_num;
	snaa_deth_set(p + op->deth_off, &deth);
	if (imm)
		snaa_immdt_set(p + op->immdt_off,
			       be32_to_cpu((__force __be32)w->wqe.imm_data));
	*err = snaa_sq_gather(qp, w, p + op->hdr_len, w->length);
	if (*err) {
		kfree_skb(skb);
		return NULL;
	}
	memset(p + op->hdr_len + w->length, 0, pad);
	qp->req.psn = snaa_psn_add(qp->req.psn, 1);
	qp->req.offset = w->length;
	refcount_inc(&w->aav->ref);
	*aav = w->aav;
	return skb;
}

/*
 * May RC send from req.cur now?  Return SNAA_REQ_RUNS, or what it must
 * wait for (enum snaa_req_wait).  After an RNR NAK the RNR timer wakes
 * it; an ACK meanwhile lets it look again, as before.
 */
static u8 snaa_rc_may_send(struct snaa_qp *qp, struct snaa_swqe *w)
{
	struct snaa_req *r = &qp->req;

	if (r->rnr_wait) {
		r->wake_psn = snaa_psn_add(qp->comp.psn, 1);
		return SNAA_REQ_WAIT_PSN;
	}
	if (snaa_rc_room(qp) <= 0) {
		/*
		 * Until the oldest PSN in the window is acknowledged: not
		 * at each of a long READ's responses, only at the one that
		 * makes room.
		 */
		r->wake_psn = snaa_psn_add(r->psn, 1 - r->cwnd);
		return SNAA_REQ_WAIT_PSN;
	}
	if (r->offset)
		return SNAA_REQ_RUNS;	/* a message already started */
	if ((w->wqe.flags & SNAA_WQE_FENCE) && r->rd_atomic)
		return SNAA_REQ_WAIT_WQE;
	if ((w->kind == SNAA_WK_READ || w->kind == SNAA_WK_ATOMIC) &&
	    r->rd_atomic >= max_t(u8, qp->max_rd_atomic, 1))
		return SNAA_REQ_WAIT_WQE;
	return SNAA_REQ_RUNS;
}

/**
 * snaa_req_next() - the next packet the requester sends
 * @qp: the QP
 * @aav: UD: set to the packet's destination, referenced (the caller
 *	puts it once the packet is sent); else NULL
 * @err: set to -ENOMEM if there was no memory for the packet, -EPROTO if
 *	user space corrupted the ring index, -EIO if a WQE completed with a
 *	local error: the QP must then go to the error state; -EINPROGRESS
 *	if a local operation (bind, invalidate, registration) was executed
 *	and completed instead of building a packet; else 0
 *
 * Fetches WQEs as needed, completes the ones that failed validation
 * once they are the oldest, and builds one packet of req.cur.  UC and
 * UD WQEs complete when their last packet is built; RC ones when their
 * ACK or response comes (snaa_comp.c).
 *
 * Context: qp->sq_lock held.
 * Return: the packet, or NULL (nothing to send now, or *err).
 */
static struct sk_buff *snaa_req_next(struct snaa_qp *qp,
				     struct snaa_ah_av **aav, int *err)
{
	struct snaa_req *r = &qp->req;
	bool rc = qp->ibqp.qp_type == IB_QPT_RC;
	struct sk_buff *skb = NULL;
	struct snaa_swqe *w;
	int ret;

	*err = 0;
	*aav = NULL;
again:
	for (;;) {
		if (r->cur == r->head) {
			if (READ_ONCE(qp->state) != IB_QPS_RTS)
				return NULL;	/* SQD: no new WQE */
			ret = snaa_sq_fetch(qp);
			if (ret <= 0) {
				*err = ret;
				return NULL;
			}
		}
		w = snaa_swqe(qp, r->cur);
		if (w->status != IB_WC_SUCCESS) {
			/* Completions are in order: wait for the older ones. */
			if (r->cur != qp->sq.kidx) {
				r->blocked = SNAA_REQ_WAIT_WQE;
				return NULL;
			}
			snaa_sq_complete(qp, w->status);
			*err = -EIO;
			return NULL;
		}
		if (w->kind == SNAA_WK_LOCAL) {
			/*
			 * Executed once every older WQE has completed, so
			 * that a bind or invalidation cannot overtake the
			 * accesses posted before it (a fence on each).
			 */
			if (r->cur != qp->sq.kidx) {
				r->blocked = SNAA_REQ_WAIT_WQE;
				return NULL;
			}
			w->status = snaa_local_op(qp, &w->wqe);
			if (w->status != IB_WC_SUCCESS)
				continue;	/* completes with its error */
			/*
			 * Work done without a packet: it counts against the
			 * caller's budget like one, or a poster that keeps
			 * the ring full of unsignaled local operations
			 * would hold this loop, and BHs off, for as long as
			 * it likes.
			 */
			snaa_sq_complete(qp, IB_WC_SUCCESS);
			*err = -EINPROGRESS;
			return NULL;
		}
		if (rc) {
			r->blocked = snaa_rc_may_send(qp, w);
			if (r->blocked)
				return NULL;
		}
		if (r->offset == 0 && (w->kind == SNAA_WK_READ ||
				       w->kind == SNAA_WK_ATOMIC) &&
		    snaa_sq_check_local(qp, w)) {
			/* the response would have nowhere to go */
			w->status = IB_WC_LOC_PROT_ERR;
			continue;
		}
		break;
	}

	/* A packet below the highest PSN sent is a retransmission. */
	if (rc && snaa_psn_diff(r->psn, r->psn_max) < 0)
		snaa_count(qp->sdev, SNAA_CNT_RC_RETRANSMITS, 1);
	if (w->kind == SNAA_WK_READ || w->kind == SNAA_WK_ATOMIC)
		skb = snaa_req_read_atomic(qp, w, err);
	else if (snaa_qp_ud(qp))
		skb = snaa_req_ud(qp, w, aav, err);
	else
		skb = snaa_req_send_write(qp, w, err);
	if (!skb) {
		if (*err == -ENOMEM)
			return NULL;
		/* An SGE the WQE cannot use: completes when it is oldest. */
		w->status = IB_WC_LOC_PROT_ERR;
		*err = 0;
		goto again;
	}
	if (snaa_psn_diff(r->psn, r->psn_max) > 0)
		r->psn_max = r->psn;
	if ((s32)(r->cur + 1 - r->hi) > 0)
		r->hi = r->cur + 1;

	if (r->offset < w->length)
		return skb;
	/* The last packet of the WQE. */
	if (w->kind == SNAA_WK_READ || w->kind == SNAA_WK_ATOMIC)
		r->rd_atomic++;
	r->cur++;
	r->offset = 0;
	r->sge_idx = 0;
	r->sge_off = 0;
	if (rc)
		snaa_comp_arm_retrans(qp);
	else
		snaa_sq_complete(qp, IB_WC_SUCCESS);
	return skb;
}

/*
 * Send the WQE at req.cur (sent before) again from @psn, or from the
 * first response byte not placed yet for an RDMA READ.
 */
static void snaa_req_restart(struct snaa_qp *qp, u32 psn)
{
	struct snaa_req *r = &qp->req;
	struct snaa_swqe *w = snaa_swqe(qp, r->cur);
	u32 i;

	if (w->kind == SNAA_WK_READ || w->kind == SNAA_WK_ATOMIC) {
		r->offset = 0;
		r->psn = snaa_psn_add(w->first_psn,
				      (u32)(w->done / qp->path_mtu));
	} else {
		u32 n = max(snaa_num_pkts(w->length, qp->path_mtu), 1U);
		u32 k = max(snaa_psn_diff(psn, w->first_psn), 0);

		/*
		 * A sequence NAK may name a PSN past what this round sent
		 * of the WQE (the responder got it in an earlier round):
		 * at most its last packet goes again.
		 */
		k = min(k, n - 1);
		r->offset = (u64)k * qp->path_mtu;
		r->psn = snaa_psn_add(w->first_psn, k);
		snaa_req_seek(qp, w);
	}
	r->since_ackreq = 0;
	/* READ/atomic WQEs from req.cur on are not outstanding any more. */
	r->rd_atomic = 0;
	for (i = qp->sq.kidx; i != r->cur; i++) {
		w = snaa_swqe(qp, i);
		if (w->kind == SNAA_WK_READ || w->kind == SNAA_WK_ATOMIC)
			r->rd_atomic++;
	}
}

/**
 * snaa_req_rewind() - go back to send from @psn again (go-back-N)
 * @qp: an RC QP
 * @psn: the first PSN to send again; within the WQEs outstanding
 *
 * The WQE holding @psn becomes req.cur again, at the offset of @psn
 * (an RDMA READ restarts at the first response byte not placed yet).
 *
 * Context: qp->sq_lock held.
 */
void snaa_req_rewind(struct snaa_qp *qp, u32 psn)
{
	struct snaa_req *r = &qp->req;
	struct snaa_swqe *w;
	u32 i;

	lockdep_assert_held(&qp->sq_lock);
	for (i = qp->sq.kidx; i != r->cur; i++) {
		w = snaa_swqe(qp, i);
		if (snaa_psn_diff(w->last_psn, psn) >= 0)
			break;
	}
	if (i == r->cur && r->offset == 0)
		return;		/* nothing sent at or after @psn */
	r->cur = i;
	snaa_req_restart(qp, psn);
}

/**
 * snaa_req_resume() - the completer completed the WQE to be sent again
 * @qp: an RC QP whose req.cur is sq.kidx (snaa_sq_complete() moved it)
 *
 * An ACK that arrives after a rewind may acknowledge WQEs the requester
 * was about to send again: it goes on with the oldest WQE left, from the
 * first PSN not acknowledged, or with new WQEs at the PSN never sent.
 *
 * Context: qp->sq_lock held.
 */
void snaa_req_resume(struct snaa_qp *qp)
{
	struct snaa_req *r = &qp->req;

	lockdep_assert_held(&qp->sq_lock);
	if ((s32)(r->cur - r->hi) < 0) {
		snaa_req_restart(qp, qp->comp.psn);
		return;
	}
	r->psn = r->psn_max;
	r->offset = 0;
	r->sge_idx = 0;
	r->sge_off = 0;
	r->since_ackreq = 0;
	r->rd_atomic = 0;
}

/**
 * snaa_req_skip() - an ACK overtook a retransmission: skip what it covers
 * @qp: an RC QP whose comp.psn just moved past req.psn
 *
 * After a timeout or a sequence NAK the requester sends again from the
 * oldest PSN not acknowledged; the responder answers the first duplicate
 * with an ACK of everything it has.  What that ACK covers of the WQE
 * being sent again is not sent a second time: the requester goes on
 * from comp.psn.  (WQEs it covers whole were completed, and
 * snaa_req_resume() moved the requester past them.)  READ and atomic
 * requests are left alone: their responses say what is missing.
 *
 * Context: qp->sq_lock held.
 */
void snaa_req_skip(struct snaa_qp *qp)
{
	struct snaa_req *r = &qp->req;
	struct snaa_swqe *w;

	lockdep_assert_held(&qp->sq_lock);
	/* not a WQE sent before (nor past the last WQE), or not overtaken */
	if ((s32)(r->cur - r->hi) >= 0 ||
	    snaa_psn_diff(qp->comp.psn, r->psn) <= 0)
		return;
	w = snaa_swqe(qp, r->cur);
	if (w->kind == SNAA_WK_READ || w->kind == SNAA_WK_ATOMIC ||
	    snaa_psn_diff(qp->comp.psn, w->last_psn) > 0)
		return;
	snaa_req_restart(qp, qp->comp.psn);
}

/*
 * Flush: complete every WQE posted so far with IB_WC_WR_FLUSH_ERR.  The
 * ring goes idle first, so a post from now on kicks us again, and one
 * that did not see the flag is below the producer read after it (the
 * pairing of snaa_sq_process()).  Entries posted while the flush runs
 * are left to their own doorbell: a poster that keeps refilling the
 * ring cannot hold this caller, or another QP's work on this CPU.
 * sq_mutex held.
 */
static void snaa_sq_flush(struct snaa_qp *qp)
{
	u32 prod, n;

	spin_lock_bh(&qp->sq_lock);
	snaa_comp_stop_timers(qp);
	WRITE_ONCE(qp->sq.ring->flags, SNAA_RING_F_IDLE);
	smp_mb();	/* the flag's store before the producer's load */
	prod = snaa_ring_producer(&qp->sq);
	/*
	 * At most a ring's worth (each round completes one WQE, and no more
	 * than that are outstanding or fetchable), however user space moves
	 * the producer meanwhile: snaa_sq_fetch() reads it again.
	 */
	for (n = 0; n < qp->sq.num; n++) {
		if (qp->sq.kidx == qp->req.head &&
		    (qp->req.head == prod || snaa_sq_fetch(qp) <= 0))
			break;
		snaa_sq_complete(qp, IB_WC_WR_FLUSH_ERR);
	}
	qp->req.cur = qp->req.head;
	qp->req.hi = qp->req.head;
	qp->req.offset = 0;
	qp->req.rd_atomic = 0;
	qp->req.rnr_wait = false;
	spin_unlock_bh(&qp->sq_lock);
	/* Errors raised on the send side flush the receive queue here. */
	spin_lock_bh(&qp->rq_lock);
	snaa_rq_flush(qp);
	spin_unlock_bh(&qp->rq_lock);
}

/*
 * Process the send queue: the responder's queued responses first, then
 * requests, SNAA_SQ_BUDGET packets or local operations at most, so that
 * no poster can keep a CPU here (and BHs off at times) for longer.
 * Return true if work is left (budget used up, or no memory).  Called
 * with qp->sq_mutex held.
 */
static bool snaa_sq_process(struct snaa_qp *qp)
{
	int budget = SNAA_SQ_BUDGET;
	struct snaa_ah_av *aav;
	struct sk_buff *skb;
	int err;

	lockdep_assert_held(&qp->sq_mutex);
	WRITE_ONCE(qp->sq.ring->flags, 0);
	for (;;) {
		if (READ_ONCE(qp->state) == IB_QPS_ERR) {
			snaa_sq_flush(qp);
			return false;
		}
		if (snaa_resp_pending(qp)) {
			budget -= snaa_resp_tx(qp, min(budget, 16));
			if (budget <= 0)
				goto yield;
		}

		spin_lock_bh(&qp->sq_lock);
		skb = NULL;
		aav = NULL;
		err = 0;
		if (READ_ONCE(qp->state) == IB_QPS_RTS ||
		    READ_ONCE(qp->state) == IB_QPS_SQD)
			skb = snaa_req_next(qp, &aav, &err);
		if (!skb && !err) {
			/* Go idle, then look again: see snaa-abi.h. */
			WRITE_ONCE(qp->sq.ring->flags, SNAA_RING_F_IDLE);
			/* Pairs with the poster's barrier between its
			 * producer store and its flags load.
			 */
			smp_mb();
			if (READ_ONCE(qp->sq.ring->producer) == qp->req.head ||
			    qp->req.cur != qp->req.head ||
			    READ_ONCE(qp->state) != IB_QPS_RTS) {
				spin_unlock_bh(&qp->sq_lock);
				return snaa_resp_pending(qp);
			}
			WRITE_ONCE(qp->sq.ring->flags, 0);
		}
		spin_unlock_bh(&qp->sq_lock);
		if (err == -ENOMEM)
			return true;	/* retry from the work item */
		if (err == -EINPROGRESS) {
			if (--budget <= 0)
				goto yield;
			continue;
		}
		if (err) {
			snaa_qp_error(qp, err == -EPROTO ? IB_EVENT_QP_FATAL : 0);
			continue;
		}
		if (!skb)
			continue;
		snaa_xmit(qp->sdev, aav ? &aav->av : &qp->av,
			  qp->ibqp.qp_num, skb);
		if (aav)
			snaa_ah_av_put(aav);
		if (--budget <= 0)
			goto yield;
		/*
		 * Let softirq work deferred to ksoftirqd (receive
		 * processing of what we sent, on veth) catch up, so that
		 * our own packets do not overflow the backlog.
		 */
		if (!(budget & 15))
			cond_resched();
	}
yield:
	/* the budget is spent: the caller schedules the rest */
	snaa_count(qp->sdev, SNAA_CNT_SQ_BUDGET_YIELDS, 1);
	return true;
}

void snaa_sq_work(struct work_struct *work)
{
	struct snaa_qp *qp = container_of(work, struct snaa_qp, sq_work);
	bool more;

	mutex_lock(&qp->sq_mutex);
	more = snaa_sq_process(qp);
	mutex_unlock(&qp->sq_mutex);
	snaa_qp_upcalls(qp);
	if (more) {
		cond_resched();
		snaa_sq_schedule(qp);
	}
}

/**
 * snaa_sq_schedule() - process the send queue from the work queue
 * @qp: the QP
 *
 * The work runs on the QP's CPU.  All packets of a QP leave from that
 * one CPU: on a veth a packet is queued to the backlog of the CPU that
 * sent it, so packets sent from two CPUs can be received out of order,
 * which UC turns into a lost message and RC into a retransmission.
 *
 * Context: any.
 */
void snaa_sq_schedule(struct snaa_qp *qp)
{
	queue_work_on(READ_ONCE(qp->tx_cpu), snaa_wq, &qp->sq_work);
}

/*
 * May the SQ move to this CPU?  Every RC packet sent so far has been
 * acknowledged, so none can still wait in another CPU's backlog and be
 * overtaken.  sq_mutex held.
 */
static bool snaa_sq_may_move(struct snaa_qp *qp)
{
	bool idle;

	if (qp->ibqp.qp_type != IB_QPT_RC)
		return false;
	spin_lock_bh(&qp->sq_lock);
	idle = qp->req.psn_max == qp->comp.psn;
	spin_unlock_bh(&qp->sq_lock);
	return idle;
}

/*
 * A CPU other than @cpu for the poster's send queue work: one the poster
 * may run on (its affinity, its cpuset) and that is not isolated from
 * the scheduler's domains (isolcpus=), so that the work does not land
 * where the administrator keeps everything else away.  nr_cpu_ids if
 * none.
 */
static unsigned int snaa_sq_other_cpu(int cpu)
{
	const struct cpumask *hk = housekeeping_cpumask(HK_TYPE_DOMAIN);
	unsigned int c;

	for_each_cpu_and(c, current->cpus_ptr, hk)
		if (c != cpu && cpu_online(c))
			return c;
	return nr_cpu_ids;
}

/*
 * Hand a looped-back RC QP's send queue to a work item on another CPU?
 * Only if the WQE the doorbell rang for is unsignaled (no
 * IBV_SEND_SIGNALED, no sq_sig_all) and fits in one packet: its poster
 * does not wait for it and is likely to post more, and the cost per WQE
 * is mostly fixed.  The work item then runs
 * requester, responder and completer beside the poster, and until it
 * has emptied the ring and flagged it idle the poster's next WQEs need
 * no doorbell (snaa-abi.h).  A signaled WQE, which a ping-pong waits
 * for, and a long message, whose cost is in its bytes, are processed in
 * the poster's context right away.  The WQE is read from the shared
 * ring without a lock: a hint, any value is safe.
 */
static bool snaa_sq_hand_off(struct snaa_qp *qp, int cpu)
{
	const struct snaa_sqe *slot;
	unsigned int other;
	u32 i, n, flags;
	u64 len;

	if (!READ_ONCE(qp->av.loopback) || qp->ibqp.qp_type != IB_QPT_RC)
		return false;
	slot = snaa_ring_slot(&qp->sq, READ_ONCE(qp->req.head));
	flags = READ_ONCE(slot->flags);
	if (snaa_wqe_signaled(qp, flags))
		return false;
	if (flags & SNAA_WQE_INLINE) {
		len = READ_ONCE(slot->inline_len);
	} else {
		n = min_t(u32, READ_ONCE(slot->num_sge), qp->max_send_sge);
		for (i = 0, len = 0; i < n; i++)
			len += READ_ONCE(slot->sge[i].length);
	}
	if (len > qp->path_mtu)
		return false;
	other = snaa_sq_other_cpu(cpu);
	if (other >= nr_cpu_ids)
		return false;
	/* No doorbell meanwhile: the work item looks at the ring. */
	WRITE_ONCE(qp->sq.ring->flags, 0);
	WRITE_ONCE(qp->tx_cpu, other);
	snaa_sq_schedule(qp);
	return true;
}

/*
 * Doorbell from user space: hand the SQ to another CPU if that pays
 * (snaa_sq_hand_off()); else run it right here (no work queue hop) if
 * nobody else is running it and we are on the QP's CPU, or the QP loops
 * back (delivery is synchronous, so no backlog can reorder it), or the
 * SQ can move to this CPU.
 */
static void snaa_sq_kick(struct snaa_qp *qp)
{
	bool ran = false, more = true;
	int cpu;

	migrate_disable();
	cpu = raw_smp_processor_id();
	if (snaa_sq_hand_off(qp, cpu)) {
		migrate_enable();
		return;
	}
	if (mutex_trylock(&qp->sq_mutex)) {
		if (cpu != qp->tx_cpu && !READ_ONCE(qp->av.loopback) &&
		    snaa_sq_may_move(qp))
			WRITE_ONCE(qp->tx_cpu, cpu);
		if (cpu == qp->tx_cpu || READ_ONCE(qp->av.loopback)) {
			more = snaa_sq_process(qp);
			ran = true;
		}
		mutex_unlock(&qp->sq_mutex);
	}
	migrate_enable();
	if (ran)
		snaa_qp_upcalls(qp);
	if (more)
		snaa_sq_schedule(qp);
}

/* Kernel QPs: check a WR and write it into the ring. */
static int snaa_post_one_send(struct snaa_qp *qp, const struct ib_send_wr *wr)
{
	struct snaa_queue *q = &qp->sq;
	u32 prod = q->ring->producer, i;
	struct snaa_sqe *sqe;
	u64 len = 0;
	int kind;

	if (prod - snaa_ring_consumer(q) >= q->num)
		return -ENOMEM;
	kind = snaa_wqe_kind(qp->ibqp.qp_type, wr->opcode);
	if (kind < 0)
		return -EINVAL;
	if (wr->num_sge > qp->max_send_sge)
		return -EINVAL;
	if ((wr->send_flags & IB_SEND_INLINE) &&
	    (kind == SNAA_WK_READ || kind == SNAA_WK_ATOMIC))
		return -EINVAL;
	/* No kernel verb posts a bind; the others carry no data. */
	if (kind == SNAA_WK_LOCAL &&
	    (wr->opcode == IB_WR_BIND_MW || wr->num_sge ||
	     (wr->send_flags & IB_SEND_INLINE)))
		return -EINVAL;
	/* in 64 bits: SGE lengths near 2^32 must not wrap into a small sum */
	if (wr->send_flags & IB_SEND_INLINE) {
		for (i = 0; i < wr->num_sge; i++)
			len += wr->sg_list[i].length;
		if (len > qp->max_inline)
			return -EINVAL;
	}
	if (snaa_qp_ud(qp) && kind != SNAA_WK_LOCAL &&
	    to_snaa_ah(ud_wr(wr)->ah)->aav->pd != qp->ibqp.pd)
		return -EINVAL;

	/* Nothing fails from here on: the slot and a reference are taken. */
	sqe = snaa_ring_slot(q, prod);
	memset(sqe, 0, sizeof(*sqe));
	sqe->wr_id = wr->wr_id;
	sqe->opcode = wr->opcode;
	if (wr->send_flags & IB_SEND_SIGNALED)
		sqe->flags |= SNAA_WQE_SIGNALED;
	if (wr->send_flags & IB_SEND_SOLICITED)
		sqe->flags |= SNAA_WQE_SOLICITED;
	if (wr->send_flags & IB_SEND_FENCE)
		sqe->flags |= SNAA_WQE_FENCE;
	if (wr->opcode == IB_WR_SEND_WITH_IMM ||
	    wr->opcode == IB_WR_RDMA_WRITE_WITH_IMM)
		sqe->imm_data = (__force u32)wr->ex.imm_data;
	if (wr->opcode == IB_WR_SEND_WITH_INV ||
	    wr->opcode == IB_WR_LOCAL_INV)
		sqe->imm_data = wr->ex.invalidate_rkey;
	if (wr->opcode == IB_WR_REG_MR) {
		sqe->rkey = reg_wr(wr)->mr->lkey;
		sqe->imm_data = reg_wr(wr)->key;
		sqe->bind.access = reg_wr(wr)->access;
	} else if (kind == SNAA_WK_WRITE || kind == SNAA_WK_READ) {
		sqe->remote_addr = rdma_wr(wr)->remote_addr;
		sqe->rkey = rdma_wr(wr)->rkey;
	} else if (kind == SNAA_WK_ATOMIC) {
		sqe->remote_addr = atomic_wr(wr)->remote_addr;
		sqe->rkey = atomic_wr(wr)->rkey;
		sqe->compare_add = atomic_wr(wr)->compare_add;
		sqe->swap = atomic_wr(wr)->swap;
	} else if (snaa_qp_ud(qp)) {
		struct snaa_ah_av *aav = to_snaa_ah(ud_wr(wr)->ah)->aav;

		sqe->remote_qpn = ud_wr(wr)->remote_qpn;
		sqe->remote_qkey = ud_wr(wr)->remote_qkey;
		/* The AH may be destroyed before the send: hold its path. */
		refcount_inc(&aav->ref);
		qp->sq_ahs[prod & (q->num - 1)] = aav;
	}
	if (wr->send_flags & IB_SEND_INLINE) {
		u8 *dst = (u8 *)sqe->sge;

		for (i = 0; i < wr->num_sge; i++) {
			memcpy(dst, (void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			dst += wr->sg_list[i].length;
		}
		sqe->flags |= SNAA_WQE_INLINE;
		sqe->inline_len = len;
	} else {
		sqe->num_sge = wr->num_sge;
		for (i = 0; i < wr->num_sge; i++) {
			sqe->sge[i].addr = wr->sg_list[i].addr;
			sqe->sge[i].length = wr->sg_list[i].length;
			sqe->sge[i].lkey = wr->sg_list[i].lkey;
		}
	}
	snaa_ring_publish_producer(q, prod + 1);
	return 0;
}

/**
 * snaa_sq_doorbell() - a user QP's SQ doorbell
 * @qp: the QP, a user QP
 *
 * The WQEs are already in the mapped ring.  From
 * SNAA_IB_METHOD_QP_DOORBELL.
 *
 * Context: process.
 * Return: 0, or -EINVAL for a WCU.BUF QP (no send WRs).
 */
int snaa_sq_doorbell(struct snaa_qp *qp)
{
	if (qp->wcu)
		return -EINVAL;
	snaa_sq_kick(qp);
	return 0;
}

int snaa_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		   const struct ib_send_wr **bad_wr)
{
	struct snaa_qp *qp = to_snaa_qp(ibqp);
	unsigned long flags;
	int err = 0;

	/*
	 * No send WRs on a WCU.BUF QP (snaa_sq_fetch()), none in RESET.  A
	 * user QP's come through its ring: uverbs has no POST_SEND for snaa.
	 */
	if (qp->wcu || qp->user || READ_ONCE(qp->state) == IB_QPS_RESET) {
		*bad_wr = wr;
		return -EINVAL;
	}

	spin_lock_irqsave(&qp->sq_post_lock, flags);
	for (; wr; wr = wr->next) {
		err = snaa_post_one_send(qp, wr);
		if (err) {
			*bad_wr = wr;
			break;
		}
	}
	spin_unlock_irqrestore(&qp->sq_post_lock, flags);
	/* Kernel callers may be atomic: always process from the work item. */
	snaa_sq_schedule(qp);
	return err;
}
