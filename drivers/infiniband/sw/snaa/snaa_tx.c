// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * snaa requester: posting to the send queue, and the send queue
 * processor that turns WQEs into RoCEv2 packets.
 *
 * One processor runs per QP at a time, under qp->sq_mutex: either in the
 * context of the process that rang the doorbell (no workqueue hop for
 * the common case) or in a work item.
 */

#include <linux/sched.h>

#include "snaa.h"

/* Packets sent per processor run before yielding to the work queue. */
#define SNAA_SQ_BUDGET		256

static u8 snaa_wc_opcode(u32 wr_opcode)
{
	switch (wr_opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return IB_WC_RDMA_WRITE;
	default:
		return IB_WC_SEND;
	}
}

static void snaa_sq_complete(struct snaa_qp *qp, enum ib_wc_status status)
{
	struct snaa_send_state *s = &qp->send;
	struct snaa_cqe cqe = {
		.wr_id = s->wqe.wr_id,
		.qp_num = qp->ibqp.qp_num,
		.opcode = snaa_wc_opcode(s->wqe.opcode),
		.status = status,
		.byte_len = status == IB_WC_SUCCESS ? s->length : 0,
	};

	/*
	 * Free the slot before the completion is visible: a poster that
	 * sees the completion may immediately reuse the slot.
	 */
	s->busy = false;
	snaa_ring_publish_consumer(&qp->sq, ++qp->sq.kidx);
	if (status != IB_WC_SUCCESS || qp->sq_sig_all ||
	    (s->wqe.flags & SNAA_WQE_SIGNALED))
		snaa_cq_post(qp->scq, &cqe, qp, false);
}

/*
 * Copy the next WQE out of the ring and validate it.  Return 1 if one
 * was taken, 0 if the ring is empty, or a negative errno if user space
 * corrupted the ring index.
 */
static int snaa_sq_fetch(struct snaa_qp *qp)
{
	struct snaa_send_state *s = &qp->send;
	struct snaa_queue *q = &qp->sq;
	const struct snaa_sqe *slot;
	u32 prod, i;
	u64 len = 0;

	prod = snaa_ring_producer(q);
	if (prod == q->kidx)
		return 0;
	if (prod - q->kidx > q->num)
		return -EPROTO;

	slot = snaa_ring_slot(q, q->kidx);
	memcpy(&s->wqe, slot, sizeof(s->wqe));
	s->busy = true;
	s->offset = 0;
	s->npkts_sent = 0;
	s->sge_idx = 0;
	s->sge_off = 0;
	s->status = IB_WC_SUCCESS;

	switch (s->wqe.opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
		break;
	default:
		s->status = IB_WC_LOC_QP_OP_ERR;
		return 1;
	}

	if (s->wqe.flags & SNAA_WQE_INLINE) {
		if (s->wqe.inline_len > qp->max_inline) {
			s->status = IB_WC_LOC_LEN_ERR;
			return 1;
		}
		memcpy(s->inline_data, slot->sge, s->wqe.inline_len);
		s->length = s->wqe.inline_len;
		return 1;
	}

	if (s->wqe.num_sge > qp->max_send_sge) {
		s->status = IB_WC_LOC_LEN_ERR;
		return 1;
	}
	memcpy(s->sge, slot->sge, s->wqe.num_sge * sizeof(s->sge[0]));
	for (i = 0; i < s->wqe.num_sge; i++)
		len += s->sge[i].length;
	if (len > SNAA_MAX_MSG_SIZE) {
		s->status = IB_WC_LOC_LEN_ERR;
		return 1;
	}
	s->length = len;
	return 1;
}

/* Gather @len bytes of the message at the current SGE cursor into @dst. */
static int snaa_sq_gather(struct snaa_qp *qp, u8 *dst, u32 len)
{
	struct snaa_send_state *s = &qp->send;
	struct snaa_sge *sge;
	struct snaa_mr *mr;
	u32 chunk;
	int err;

	if (s->wqe.flags & SNAA_WQE_INLINE) {
		memcpy(dst, s->inline_data + s->offset, len);
		return 0;
	}
	while (len) {
		sge = &s->sge[s->sge_idx];
		if (s->sge_off == sge->length) {
			s->sge_idx++;
			s->sge_off = 0;
			continue;
		}
		chunk = min(len, sge->length - s->sge_off);
		mr = snaa_mr_get(qp->sdev, sge->lkey);
		if (!mr)
			return -EACCES;
		err = snaa_mr_check(mr, qp->ibqp.pd, sge->addr + s->sge_off,
				    chunk, 0);
		if (!err)
			snaa_mr_read(mr, sge->addr + s->sge_off, dst, chunk);
		snaa_mr_put(mr);
		if (err)
			return err;
		dst += chunk;
		s->sge_off += chunk;
		len -= chunk;
	}
	return 0;
}

/* Build and send the next packet of the current WQE. */
static int snaa_sq_send_pkt(struct snaa_qp *qp)
{
	struct snaa_send_state *s = &qp->send;
	const struct snaa_opcode_info *op;
	struct snaa_bth_info bth = {};
	u32 paylen, pad;
	struct sk_buff *skb;
	bool first, last, write;
	int opcode, err;
	u8 *p;

	paylen = min_t(u64, qp->path_mtu, s->length - s->offset);
	first = s->offset == 0;
	last = s->offset + paylen == s->length;
	write = s->wqe.opcode == IB_WR_RDMA_WRITE ||
		s->wqe.opcode == IB_WR_RDMA_WRITE_WITH_IMM;
	opcode = snaa_req_opcode(SNAA_TR_UC,
				 write ? SNAA_OPF_WRITE : SNAA_OPF_SEND,
				 first, last,
				 s->wqe.opcode == IB_WR_RDMA_WRITE_WITH_IMM ||
				 s->wqe.opcode == IB_WR_SEND_WITH_IMM);
	op = snaa_opcode_lookup(opcode);
	pad = snaa_pad_for(paylen);

	skb = snaa_skb_alloc(qp->sdev, &qp->av, op->hdr_len + paylen + pad);
	if (!skb)
		return -ENOMEM;
	p = skb_put(skb, op->hdr_len + paylen + pad);

	bth.opcode = opcode;
	bth.se = last && (s->wqe.flags & SNAA_WQE_SOLICITED);
	bth.pad = pad;
	bth.pkey = SNAA_DEFAULT_PKEY;
	bth.dqpn = qp->dest_qpn;
	bth.psn = qp->sq_psn;
	snaa_bth_set(p, &bth);
	if (op->flags & SNAA_OPF_RETH) {
		struct snaa_reth_info reth = {
			.va = s->wqe.remote_addr,
			.rkey = s->wqe.rkey,
			.dma_len = s->length,
		};

		snaa_reth_set(p + op->reth_off, &reth);
	}
	if (op->flags & SNAA_OPF_IMMDT)
		snaa_immdt_set(p + op->immdt_off, be32_to_cpu((__force __be32)
							      s->wqe.imm_data));

	err = snaa_sq_gather(qp, p + op->hdr_len, paylen);
	if (err) {
		kfree_skb(skb);
		return err;
	}
	memset(p + op->hdr_len + paylen, 0, pad);

	qp->sq_psn = snaa_psn_add(qp->sq_psn, 1);
	s->offset += paylen;
	s->npkts_sent++;
	/* UC: a packet lost on the way is not the requester's error. */
	snaa_xmit(qp->sdev, &qp->av, skb);
	return 0;
}

/*
 * Flush: complete every WQE posted so far with IB_WC_WR_FLUSH_ERR.  The
 * ring goes idle first, so a post from now on kicks us again, and one
 * that did not see the flag is below the producer read after it (the
 * pairing of snaa_sq_process()).  Entries posted while the flush runs
 * are left to their own doorbell: a poster that keeps refilling the
 * ring cannot hold this caller, or another QP's work on this CPU.
 */
static void snaa_sq_flush(struct snaa_qp *qp)
{
	u32 prod;

	if (qp->send.busy)
		snaa_sq_complete(qp, IB_WC_WR_FLUSH_ERR);
	WRITE_ONCE(qp->sq.ring->flags, SNAA_RING_F_IDLE);
	smp_mb();
	prod = snaa_ring_producer(&qp->sq);
	/* at most a ring's worth: snaa_sq_fetch() refuses more */
	while (qp->sq.kidx != prod && snaa_sq_fetch(qp) == 1)
		snaa_sq_complete(qp, IB_WC_WR_FLUSH_ERR);
	/* Errors raised on the send side flush the receive queue here. */
	spin_lock_bh(&qp->rq_lock);
	snaa_rq_flush(qp);
	spin_unlock_bh(&qp->rq_lock);
}

/*
 * Process the send queue.  Return true if work is left (budget used up).
 * Called with qp->sq_mutex held.
 */
static bool snaa_sq_process(struct snaa_qp *qp)
{
	struct snaa_send_state *s = &qp->send;
	int budget = SNAA_SQ_BUDGET;
	enum ib_qp_state state;
	int ret;

	lockdep_assert_held(&qp->sq_mutex);
	WRITE_ONCE(qp->sq.ring->flags, 0);
	for (;;) {
		state = READ_ONCE(qp->state);
		if (state == IB_QPS_ERR) {
			snaa_sq_flush(qp);
			return false;
		}
		if (state != IB_QPS_RTS)
			break;

		if (!s->busy) {
			ret = snaa_sq_fetch(qp);
			if (ret < 0) {
				snaa_qp_error(qp, IB_EVENT_QP_FATAL);
				continue;
			}
			if (ret == 0) {
				/* Go idle, then look again: see snaa-abi.h. */
				WRITE_ONCE(qp->sq.ring->flags, SNAA_RING_F_IDLE);
				/* Pairs with the poster's barrier between its
				 * producer store and its flags load.
				 */
				smp_mb();
				if (READ_ONCE(qp->sq.ring->producer) == qp->sq.kidx)
					return false;
				WRITE_ONCE(qp->sq.ring->flags, 0);
				continue;
			}
			if (s->status != IB_WC_SUCCESS) {
				snaa_sq_complete(qp, s->status);
				snaa_qp_error(qp, 0);
				continue;
			}
		}

		while (s->offset < s->length || !s->npkts_sent) {
			if (budget-- == 0)
				return true;
			/*
			 * Let softirq work deferred to ksoftirqd (receive
			 * processing of what we sent, on veth) catch up, so
			 * that our own packets do not overflow the backlog.
			 */
			if (!(budget & 15))
				cond_resched();
			ret = snaa_sq_send_pkt(qp);
			if (ret == -ENOMEM)
				return true;	/* retry from the work item */
			if (ret) {
				snaa_sq_complete(qp, IB_WC_LOC_PROT_ERR);
				snaa_qp_error(qp, 0);
				break;
			}
		}
		if (s->busy)
			snaa_sq_complete(qp, IB_WC_SUCCESS);
	}
	WRITE_ONCE(qp->sq.ring->flags, SNAA_RING_F_IDLE);
	return false;
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
 * which UC turns into a lost message.
 */
void snaa_sq_schedule(struct snaa_qp *qp)
{
	queue_work_on(qp->tx_cpu, snaa_wq, &qp->sq_work);
}

/*
 * Doorbell from user space: run the SQ right here (no work queue hop)
 * if nobody else is running it and we are on the QP's CPU, or the QP
 * loops back (delivery is synchronous, so no backlog can reorder it).
 */
static void snaa_sq_kick(struct snaa_qp *qp)
{
	bool more = true;

	migrate_disable();
	if ((READ_ONCE(qp->av.loopback) ||
	     raw_smp_processor_id() == qp->tx_cpu) &&
	    mutex_trylock(&qp->sq_mutex)) {
		more = snaa_sq_process(qp);
		mutex_unlock(&qp->sq_mutex);
		snaa_qp_upcalls(qp);
	}
	migrate_enable();
	if (more)
		snaa_sq_schedule(qp);
}

static int snaa_post_one_send(struct snaa_qp *qp, const struct ib_send_wr *wr)
{
	struct snaa_queue *q = &qp->sq;
	struct snaa_sqe *sqe;
	u32 i, len = 0;

	if (READ_ONCE(q->ring->producer) - snaa_ring_consumer(q) >=
	    q->num)
		return -ENOMEM;
	switch (wr->opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
		break;
	default:
		return -EINVAL;
	}
	if (wr->num_sge > qp->max_send_sge)
		return -EINVAL;

	sqe = snaa_ring_slot(q, q->ring->producer);
	memset(sqe, 0, sizeof(*sqe));
	sqe->wr_id = wr->wr_id;
	sqe->opcode = wr->opcode;
	if (wr->send_flags & IB_SEND_SIGNALED)
		sqe->flags |= SNAA_WQE_SIGNALED;
	if (wr->send_flags & IB_SEND_SOLICITED)
		sqe->flags |= SNAA_WQE_SOLICITED;
	if (wr->opcode == IB_WR_SEND_WITH_IMM ||
	    wr->opcode == IB_WR_RDMA_WRITE_WITH_IMM)
		sqe->imm_data = (__force u32)wr->ex.imm_data;
	if (wr->opcode == IB_WR_RDMA_WRITE ||
	    wr->opcode == IB_WR_RDMA_WRITE_WITH_IMM) {
		sqe->remote_addr = rdma_wr(wr)->remote_addr;
		sqe->rkey = rdma_wr(wr)->rkey;
	}
	if (wr->send_flags & IB_SEND_INLINE) {
		u8 *dst = (u8 *)sqe->sge;

		for (i = 0; i < wr->num_sge; i++)
			len += wr->sg_list[i].length;
		if (len > qp->max_inline)
			return -EINVAL;
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
	snaa_ring_publish_producer(q, q->ring->producer + 1);
	return 0;
}

int snaa_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		   const struct ib_send_wr **bad_wr)
{
	struct snaa_qp *qp = to_snaa_qp(ibqp);
	unsigned long flags;
	int err = 0;

	if (qp->user) {
		/* Doorbell: the WQEs are already in the mapped ring. */
		snaa_sq_kick(qp);
		return 0;
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
