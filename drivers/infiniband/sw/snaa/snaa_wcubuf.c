// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * WCU.BUF receive mode of a UC QP: the ring-buffer receiver of the IMS
 * streaming protocol (seed 000; Documentation/wcubuf.rst), so that a
 * host running snaa answers Rasterizer Workers as the WCU.BUF FPGA does.
 *
 * Every frame (one RDMA WRITE message, FIRST ... LAST or ONLY) is
 * checked as the board checks it and answered, from the receive path,
 * with one 16-byte ACK or NACK, sent as a UC SEND ONLY to the QP's
 * destination.  A frame is written into its slot of the ring only while
 * nothing is wrong with it, and becomes visible to the consumer (the
 * control area, struct snaa_wcubuf_ctrl) only once its last packet has
 * arrived intact.  The arithmetic and the ACK/NACK codec, which
 * libwcubuf shares, are in snaa_wcubuf_proto.c.
 *
 * Packets that cannot belong to any frame (SENDs, WRITEs with
 * immediate) are dropped and counted without touching the frame state.
 *
 * Retransmitted frames: a frame that was delivered already (its ACK was
 * lost) is answered with an ACK again and never written: in the window
 * its slot holds the delivered data, which the consumer may be reading;
 * behind the read pointer (at most one ring back) it was consumed.
 *
 * Locking: everything here is under the QP's rq_lock; ACK/NACK packets
 * are built under it and sent after it is dropped (snaa_wcubuf_tx()).
 */

#include <linux/bitmap.h>
#include <linux/debugfs.h>
#include <linux/skbuff.h>

#include "snaa.h"
#include "snaa_wcubuf_proto.h"

/**
 * struct snaa_wcubuf - WCU.BUF state of a QP, under qp->rq_lock
 * @shm: the control area shared with user space (struct snaa_wcubuf_ctrl)
 * @ctrl: its first byte
 * @done: per slot: a delivered frame the consumer has not handed back
 * @ring_addr: VA of the ring in the MR of @lkey
 * @ring_size: R
 * @frame_size: F
 * @nslots: R / F
 * @lkey: the MR holding the ring, looked up for every packet
 * @rkey: what senders must put in their RETH
 * @rp: the read pointer as last accepted from the consumer
 * @rp_slot: its slot
 * @dp: the delivered pointer: frames in [@rp, @dp) are delivered
 * @dp_slot: its slot
 * @in_frame: a frame is in progress (between its first and last packet)
 * @no_sof: ... and it began without a first packet
 * @dup: ... and it was delivered before (do not write it)
 * @events: ... and these are its errors so far
 * @va: ... its VA
 * @dma_len: ... its RETH DMA length
 * @recvd: ... bytes received of it
 * @slot: ... its slot (in the window)
 * @ack_psn: PSN of the next ACK/NACK
 * @ackq: ACK/NACK packets to send
 */
struct snaa_wcubuf {
	struct snaa_queue shm;
	struct snaa_wcubuf_ctrl *ctrl;
	unsigned long *done;
	u64 ring_addr;
	u64 ring_size;
	u32 frame_size;
	u32 nslots;
	u32 lkey;
	u32 rkey;
	u64 rp;
	u32 rp_slot;
	u64 dp;
	u32 dp_slot;

	bool in_frame;
	bool no_sof;
	bool dup;
	u32 events;
	u64 va;
	u64 dma_len;
	u64 recvd;
	u32 slot;

	u32 ack_psn;
	struct sk_buff_head ackq;
};

static u32 snaa_wcu_slot_add(const struct snaa_wcubuf *w, u32 slot, u64 n)
{
	return snaa_mod_u32(slot + n, w->nslots);
}

/**
 * snaa_wcubuf_create() - put a new UC QP into WCU.BUF receive mode
 * @qp: the QP, not yet visible to the receive path
 * @req: the ring (checked here)
 * @uctx: the creator's context, to map the control area into
 * @uresp: gets the control area's key and size and the R_Key
 *
 * Context: process context.
 * Return: 0 or a negative errno; nothing is left allocated on error.
 */
int snaa_wcubuf_create(struct snaa_qp *qp, const struct snaa_ureq_create_qp *req,
		       struct ib_ucontext *uctx,
		       struct snaa_uresp_create_qp *uresp)
{
	struct snaa_wcubuf *w;
	struct snaa_mr *mr;
	u32 nslots;
	int err;

	if (qp->ibqp.qp_type != IB_QPT_UC)
		return -EINVAL;
	if (!snaa_wcu_geom_ok(req->ring_size, req->frame_size, req->va_base))
		return -EINVAL;
	mr = snaa_mr_get(qp->sdev, req->ring_lkey);
	if (!mr)
		return -EINVAL;
	/*
	 * Its lkey becomes the R_Key the workers write with: the MR must
	 * allow remote writes as any MR a peer writes into does.
	 */
	err = snaa_mr_check(mr, qp->ibqp.pd, req->ring_addr, req->ring_size,
			    IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE);
	snaa_mr_put(mr);
	if (err)
		return err == -EPERM ? -EACCES : -EINVAL;

	nslots = div_u64(req->ring_size, req->frame_size);
	w = kzalloc(sizeof(*w), GFP_KERNEL_ACCOUNT);
	if (!w)
		return -ENOMEM;
	w->done = bitmap_zalloc(nslots, GFP_KERNEL_ACCOUNT);
	if (!w->done) {
		err = -ENOMEM;
		goto err_free;
	}
	err = snaa_shm_init(&w->shm, struct_size(w->ctrl, len, nslots), uctx);
	if (err)
		goto err_free;
	w->ctrl = (struct snaa_wcubuf_ctrl *)w->shm.ring;
	w->ring_addr = req->ring_addr;
	w->ring_size = req->ring_size;
	w->frame_size = req->frame_size;
	w->nslots = nslots;
	w->lkey = req->ring_lkey;
	w->rkey = req->ring_lkey;
	w->rp = req->va_base;
	w->dp = req->va_base;
	w->ctrl->rp = req->va_base;
	w->ctrl->dp = req->va_base;
	__skb_queue_head_init(&w->ackq);
	qp->wcu = w;

	uresp->wcubuf_key = snaa_queue_key(&w->shm);
	uresp->wcubuf_size = w->shm.size;
	uresp->wcubuf_rkey = w->rkey;
	return 0;

err_free:
	bitmap_free(w->done);
	kfree(w);
	return err;
}

/**
 * snaa_wcubuf_destroy() - free the WCU.BUF state of a QP
 * @qp: the QP, which the receive path can no longer find
 */
void snaa_wcubuf_destroy(struct snaa_qp *qp)
{
	struct snaa_wcubuf *w = qp->wcu;

	if (!w)
		return;
	__skb_queue_purge(&w->ackq);
	snaa_queue_free(&w->shm);
	bitmap_free(w->done);
	kfree(w);
	qp->wcu = NULL;
}

/**
 * snaa_wcubuf_reset() - forget the frame in progress
 * @qp: the QP, rq_lock held (modify_qp to RESET or ERR)
 *
 * Delivered frames stay delivered: the ring and the pointers survive a
 * QP reset, as the board's memory survives a reconnection.
 */
void snaa_wcubuf_reset(struct snaa_qp *qp)
{
	struct snaa_wcubuf *w = qp->wcu;

	lockdep_assert_held(&qp->rq_lock);
	if (w)
		w->in_frame = false;
}

/* The first PSN of the ACK/NACK SENDs (modify_qp's sq_psn). */
void snaa_wcubuf_set_psn(struct snaa_qp *qp, u32 psn)
{
	lockdep_assert_held(&qp->rq_lock);
	if (qp->wcu)
		qp->wcu->ack_psn = psn & SNAA_PSN_MASK;
}

/* Queue one ACK or NACK for the QP's destination. */
static void snaa_wcu_answer(struct snaa_qp *qp, u32 type, u32 events, u64 va)
{
	const u8 opcode = SNAA_OPCODE_UC | SNAA_OP_SEND_ONLY;
	const struct snaa_opcode_info *op = snaa_opcode_lookup(opcode);
	struct snaa_wcubuf *w = qp->wcu;
	struct snaa_bth_info bth = {
		.opcode = opcode,
		.pkey = SNAA_DEFAULT_PKEY,
		.dqpn = qp->dest_qpn,
		.psn = w->ack_psn,
	};
	struct sk_buff *skb;
	u8 *p;

	/* A UC QP sends in RTS (and SQD) only. */
	if (READ_ONCE(qp->state) != IB_QPS_RTS &&
	    READ_ONCE(qp->state) != IB_QPS_SQD)
		goto drop;
	skb = snaa_skb_alloc(qp->sdev, &qp->av,
			     op->hdr_len + SNAA_WCUBUF_ACK_BYTES);
	if (!skb)
		goto drop;
	p = skb_put(skb, op->hdr_len + SNAA_WCUBUF_ACK_BYTES);
	snaa_bth_set(p, &bth);
	snaa_wcu_ack_put(p + op->hdr_len, type, events, va);
	w->ack_psn = snaa_psn_add(w->ack_psn, 1);
	__skb_queue_tail(&w->ackq, skb);
	return;

drop:
	snaa_count(qp->sdev, SNAA_CNT_WCU_ACK_DROPS, 1);
}

/**
 * snaa_wcubuf_tx() - send the ACKs and NACKs the receive path queued
 * @qp: the QP
 *
 * As for RC responses (snaa_resp_tx()), one context sends at a time
 * (recv.tx_owner), so that modify_qp can wait until no packet is on its
 * way over the path it replaces.
 *
 * Context: softirq or process context, no QP lock held.
 */
void snaa_wcubuf_tx(struct snaa_qp *qp)
{
	struct snaa_recv_state *r = &qp->recv;
	struct snaa_wcubuf *w = qp->wcu;
	struct sk_buff_head list;
	struct sk_buff *skb;

	__skb_queue_head_init(&list);
	spin_lock_bh(&qp->rq_lock);
	if (r->tx_owner) {
		/* The owner looks at the queue again before it stops. */
		spin_unlock_bh(&qp->rq_lock);
		return;
	}
	r->tx_owner = true;
	while (!skb_queue_empty(&w->ackq)) {
		skb_queue_splice_init(&w->ackq, &list);
		spin_unlock_bh(&qp->rq_lock);
		while ((skb = __skb_dequeue(&list)))
			snaa_xmit(qp->sdev, &qp->av, qp->ibqp.qp_num, skb);
		spin_lock_bh(&qp->rq_lock);
	}
	r->tx_owner = false;
	spin_unlock_bh(&qp->rq_lock);
}

/* Fault injection: the event bits to add to the frame ending now. */
static u32 snaa_wcu_fault(struct snaa_dev *sdev)
{
	u32 events = READ_ONCE(sdev->wcu_fault_events) & SNAA_WCU_EV_ALL;
	u32 every = READ_ONCE(sdev->wcu_fault_every);

	if (!events)
		return 0;
	if (atomic_dec_if_positive(&sdev->wcu_fault_next) >= 0)
		return events;
	if (every && !(atomic_inc_return(&sdev->wcu_fault_seq) % every))
		return events;
	return 0;
}

static void snaa_wcu_stat_add(u64 *stat, u64 n)
{
	WRITE_ONCE(*stat, *stat + n);
}

/* A good frame is complete: make it visible, in order. */
static void snaa_wcu_deliver(struct snaa_wcubuf *w)
{
	struct snaa_wcubuf_ctrl *c = w->ctrl;

	WRITE_ONCE(c->len[w->slot], w->recvd);
	set_bit(w->slot, w->done);
	if (w->slot != w->dp_slot)
		return;
	/* dp stops before rp's slot: the window ends one frame short. */
	do {
		w->dp += w->frame_size;
		w->dp_slot = snaa_wcu_slot_add(w, w->dp_slot, 1);
	} while (w->dp_slot != w->rp_slot && test_bit(w->dp_slot, w->done));
	/* Pairs with the consumer's load-acquire: data and len come first. */
	smp_store_release(&c->dp, w->dp);
}

/* The frame in progress ends, with @events added: answer it. */
static void snaa_wcu_frame_end(struct snaa_qp *qp, u32 events)
{
	struct snaa_wcubuf *w = qp->wcu;
	struct snaa_wcubuf_ctrl *c = w->ctrl;
	struct snaa_dev *sdev = qp->sdev;
	unsigned long bits;
	unsigned int bit;

	w->in_frame = false;
	events |= w->events | snaa_wcu_fault(sdev);
	if (!events) {
		if (w->dup) {
			snaa_wcu_stat_add(&c->duplicates, 1);
			snaa_count(sdev, SNAA_CNT_WCU_DUPLICATES, 1);
		} else {
			snaa_wcu_deliver(w);
			snaa_wcu_stat_add(&c->acks, 1);
			snaa_wcu_stat_add(&c->bytes, w->recvd);
			snaa_count(sdev, SNAA_CNT_WCU_FRAMES, 1);
			snaa_count(sdev, SNAA_CNT_WCU_BYTES, w->recvd);
		}
		snaa_wcu_answer(qp, SNAA_WCUBUF_ACK, 0, w->va);
		return;
	}
	snaa_wcu_stat_add(&c->nacks, 1);
	snaa_count(sdev, SNAA_CNT_WCU_NACKS, 1);
	bits = events;
	for_each_set_bit(bit, &bits, SNAA_WCUBUF_EV_NUM) {
		snaa_wcu_stat_add(&c->nack_events[bit], 1);
		snaa_count(sdev, SNAA_CNT_WCU_NACK_FIRST + bit, 1);
	}
	snaa_wcu_answer(qp, SNAA_WCUBUF_NACK, events,
			w->no_sof ? 0 : w->va);
}

/*
 * Take the consumer's read pointer if it is a sane one: a whole number
 * of frames ahead, not past what is delivered.  The slots it passes are
 * free again.
 */
static void snaa_wcu_update_rp(struct snaa_wcubuf *w)
{
	u64 rp = READ_ONCE(w->ctrl->rp), adv = rp - w->rp, n;

	if (!adv || adv > w->dp - w->rp || snaa_mod_u32(adv, w->frame_size))
		return;
	for (n = div_u64(adv, w->frame_size); n; n--) {
		clear_bit(w->rp_slot, w->done);
		w->rp_slot = snaa_wcu_slot_add(w, w->rp_slot, 1);
	}
	w->rp = rp;
}

/* A frame begins without its first packet (VA 0 in the NACK). */
static void snaa_wcu_start_nosof(struct snaa_wcubuf *w, u32 events)
{
	w->in_frame = true;
	w->no_sof = true;
	w->dup = false;
	w->events = events | SNAA_WCU_EV(NO_SOF);
	w->va = 0;
	w->dma_len = 0;
	w->recvd = 0;
}

/* A frame begins with the RETH of its first packet. */
static void snaa_wcu_start(struct snaa_wcubuf *w, const struct snaa_pkt *pkt)
{
	const struct snaa_reth_info *reth = &pkt->reth;
	enum snaa_wcu_where where;

	snaa_wcu_update_rp(w);
	w->in_frame = true;
	w->no_sof = false;
	w->va = reth->va;
	w->dma_len = reth->dma_len;
	w->recvd = 0;
	w->events = snaa_wcu_start_events(w->rp, w->ring_size, w->frame_size,
					  reth->va, reth->dma_len, reth->rkey,
					  w->rkey, &where);
	w->dup = where == SNAA_WCU_CONSUMED;
	if (where == SNAA_WCU_IN_WINDOW && !w->events) {
		w->slot = snaa_wcu_slot_add(w, w->rp_slot,
					    div_u64(reth->va - w->rp,
						    w->frame_size));
		w->dup = test_bit(w->slot, w->done);
	}
}

/* Write a packet of a good frame into its slot; return event bits. */
static u32 snaa_wcu_place(struct snaa_qp *qp, const struct snaa_pkt *pkt,
			  struct sk_buff *skb)
{
	struct snaa_wcubuf *w = qp->wcu;
	u64 va = w->ring_addr + (u64)w->slot * w->frame_size + w->recvd;
	struct snaa_mr *mr;
	int err;

	mr = snaa_mr_get(qp->sdev, w->lkey);
	if (!mr)
		return SNAA_WCU_EV(RKEY);	/* the ring's MR is gone */
	err = snaa_mr_check(mr, qp->ibqp.pd, va, pkt->payload_len,
			    IB_ACCESS_LOCAL_WRITE);
	if (!err)
		err = snaa_mr_write_skb(mr, va, skb, pkt->payload_off,
					pkt->payload_len);
	snaa_mr_put(mr);
	return err ? SNAA_WCU_EV(RKEY) : 0;
}

/**
 * snaa_wcubuf_rcv() - a request packet for a WCU.BUF QP
 * @qp: the QP, rq_lock held; the packet passed snaa_rcv()'s checks
 * @pkt: the parsed packet
 * @skb: its buffer
 *
 * Out of sequence (bit 0): a PSN gap ends the frame in progress with a
 * NACK; a MIDDLE or LAST packet after the gap starts a frame without a
 * start (bits 0 and 9, answered at its LAST).  A FIRST packet while a
 * frame is in progress ends that one with a frame length error (bit 4).
 *
 * Return: 0, or the counter of a packet that is not part of any frame.
 */
enum snaa_counter snaa_wcubuf_rcv(struct snaa_qp *qp,
				  const struct snaa_pkt *pkt,
				  struct sk_buff *skb)
{
	struct snaa_wcubuf *w = qp->wcu;
	struct snaa_recv_state *r = &qp->recv;
	u32 flags = pkt->op->flags, len = pkt->payload_len, ev = 0;
	bool gap;

	lockdep_assert_held(&qp->rq_lock);
	if (flags & (SNAA_OPF_SEND | SNAA_OPF_IMMDT))
		return SNAA_CNT_DROP_QP_TYPE;

	gap = pkt->bth.psn != r->epsn;
	r->epsn = snaa_psn_add(pkt->bth.psn, 1);
	if (gap && w->in_frame)
		snaa_wcu_frame_end(qp, SNAA_WCU_EV(SEQUENCE));
	if (flags & SNAA_OPF_START) {
		if (w->in_frame)
			snaa_wcu_frame_end(qp, w->no_sof ? 0 :
					   SNAA_WCU_EV(FRAME_LEN));
		snaa_wcu_start(w, pkt);
	} else if (!w->in_frame) {
		snaa_wcu_start_nosof(w, gap ? SNAA_WCU_EV(SEQUENCE) : 0);
	}

	if (snaa_wcu_packet_len_bad(len))
		ev |= SNAA_WCU_EV(PACKET_LEN);
	if (!w->no_sof && (w->recvd + len > w->dma_len ||
			   ((flags & SNAA_OPF_END) &&
			    w->recvd + len != w->dma_len)))
		ev |= SNAA_WCU_EV(FRAME_LEN);
	w->events |= ev;
	if (!w->events && !w->dup && len)
		w->events |= snaa_wcu_place(qp, pkt, skb);
	w->recvd += len;
	if (flags & SNAA_OPF_END)
		snaa_wcu_frame_end(qp, 0);
	return 0;
}

/**
 * snaa_wcubuf_bad_packet() - a packet with a bad ICRC came for the QP
 * @qp: the QP, rq_lock held; the packet came over the QP's path
 * @psn: the PSN its BTH claims
 * @len: its payload bytes as far as they can be told
 *
 * The board's "end of bad packet" (bit 7): the frame the packet belongs
 * to is bad.  Only a packet in sequence is taken to belong to the frame
 * in progress (or to start one whose first packet it may have been);
 * any other is left to the sequence check of the packets after it.
 */
void snaa_wcubuf_bad_packet(struct snaa_qp *qp, u32 psn, u32 len)
{
	struct snaa_wcubuf *w = qp->wcu;
	struct snaa_recv_state *r = &qp->recv;

	lockdep_assert_held(&qp->rq_lock);
	if (psn != r->epsn)
		return;
	r->epsn = snaa_psn_add(psn, 1);
	if (!w->in_frame)
		snaa_wcu_start_nosof(w, 0);
	w->events |= SNAA_WCU_EV(EBP);
	w->recvd += len;
}

/**
 * snaa_wcubuf_debugfs_init() - the device's fault injection files
 * @sdev: the device, registered
 *
 * snaa/<device>/wcubuf_fault_events: event bits to add (Table 3.7;
 * parity and ECC errors, bits 1, 10 and 11, exist only this way);
 * wcubuf_fault_next: add them to the next N frames; wcubuf_fault_every:
 * and to one frame in K (0: off).
 */
void snaa_wcubuf_debugfs_init(struct snaa_dev *sdev)
{
	struct dentry *d = sdev->debugfs;

	debugfs_create_x32("wcubuf_fault_events", 0600, d,
			   &sdev->wcu_fault_events);
	debugfs_create_atomic_t("wcubuf_fault_next", 0600, d,
				&sdev->wcu_fault_next);
	debugfs_create_u32("wcubuf_fault_every", 0600, d,
			   &sdev->wcu_fault_every);
}
