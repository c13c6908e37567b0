// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * snaa RC completer (IBA 9.7.5.1): what comes back to an RC requester,
 * ACKs, NAKs, RDMA READ responses and atomic ACKs, completes its WQEs or
 * sends it back to retransmit (go-back-N); the local ACK timeout and the
 * RNR NAK timer.
 *
 * Runs in softirq (the receive path and the timers) under qp->sq_lock,
 * the lock it shares with the requester (snaa_tx.c).  It never sends a
 * packet: it rewinds the requester's cursor and schedules its work.
 */

#include <linux/highmem.h>

#include "snaa.h"

/* Local ACK timeouts shorter than this are rounded up (see verbs.rst). */
#define SNAA_MIN_RETRANS_MS	50

/* IBA table 45, RNR NAK timer field: microseconds per code. */
static const u32 snaa_rnr_usec[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960,
	1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
	40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

static unsigned long snaa_rnr_jiffies(u8 code)
{
	return max_t(unsigned long, usecs_to_jiffies(snaa_rnr_usec[code & 31]),
		     1);
}

/* 4.096 us << timeout; 0 means no timeout (IBA 9.7.6.1.2). */
static unsigned long snaa_retrans_jiffies(struct snaa_qp *qp)
{
	u64 ns = 4096ULL << min_t(u8, qp->timeout, 31);

	return max_t(u64, nsecs_to_jiffies64(ns),
		     msecs_to_jiffies(SNAA_MIN_RETRANS_MS));
}

/*
 * Was a packet sent for the oldest WQE?  After a rewind req.cur may be
 * the oldest WQE again while its responses are still on their way.
 */
static bool snaa_comp_sent(struct snaa_qp *qp)
{
	return (s32)(qp->sq.kidx - qp->req.hi) < 0;
}

/* Anything sent that is not acknowledged yet? */
static bool snaa_comp_outstanding(struct snaa_qp *qp)
{
	return snaa_psn_diff(qp->req.psn_max, qp->comp.psn) > 0;
}

/*
 * The local ACK timer is lazy: progress moves comp.deadline, not the
 * timer, which would cost a timer-wheel update (and its lock) per ACK;
 * a timer that fires early finds the deadline ahead and waits for it.
 * With nothing outstanding the timer is left to expire on its own.
 * No timeout (timeout 0) and a dying QP: nothing is timed.
 * sq_lock held.
 *
 * A deadline alone is not enough on a loaded host: the timer runs in
 * softirq before the receive processing of the same pass, so it can
 * expire with the responses that arrived in time still queued behind
 * it, and when receive processing lags by a timeout pass after pass,
 * every pass sent a request again.  For an RDMA READ that is a feedback
 * loop: each request makes the responder send the response once more
 * (rdma_rxe finishes the one it is sending first), the queue of
 * replays grows faster than it drains, and the READs behind wait for
 * ever.  So a timeout also needs a whole period with nothing heard
 * (comp.heard, set by every response and cleared when the timer
 * expires): the requester retries between one and two timeouts after
 * the last response, never while the responses keep coming.
 */
static void snaa_comp_set_deadline(struct snaa_qp *qp)
{
	if (!qp->timeout || qp->dying) {
		qp->comp.timing = false;
		return;
	}
	qp->comp.timing = true;
	qp->comp.deadline = jiffies + snaa_retrans_jiffies(qp);
	if (!timer_pending(&qp->retrans_timer))
		mod_timer(&qp->retrans_timer, qp->comp.deadline);
}

/**
 * snaa_comp_arm_retrans() - start the local ACK timeout if it is not running
 * @qp: an RC QP that just sent a packet needing an ACK
 *
 * Context: qp->sq_lock held.
 */
void snaa_comp_arm_retrans(struct snaa_qp *qp)
{
	lockdep_assert_held(&qp->sq_lock);
	if (!qp->comp.timing) {
		qp->comp.heard = false;
		snaa_comp_set_deadline(qp);
	}
}

/* A response came: the responder is there; the timer starts again. */
static void snaa_comp_heard(struct snaa_qp *qp)
{
	qp->comp.heard = true;
	snaa_comp_set_deadline(qp);
}

/**
 * snaa_comp_stop_timers() - stop waiting for ACKs (flush, reset)
 * @qp: the QP
 *
 * Context: qp->sq_lock held.
 */
void snaa_comp_stop_timers(struct snaa_qp *qp)
{
	lockdep_assert_held(&qp->sq_lock);
	snaa_timer_delete(&qp->retrans_timer);
	snaa_timer_delete(&qp->rnr_timer);
	qp->comp.timing = false;
	qp->req.rnr_wait = false;
}

/*
 * The requester's window (snaa_req.cwnd): full (SNAA_RC_WINDOW) on a
 * working path; SNAA_RC_CWND_MIN after a local ACK timeout, when the
 * path may be clogged with what was sent; each packet acknowledged
 * opens it by one again (so it doubles per round trip), like TCP's slow
 * start.  Without it every timeout sent the whole window again behind
 * the one still queued on the path: under heavy reordering on a loaded
 * host the oldest packet then kept arriving too late, and the QP died
 * with RETRY_EXC_ERR.  Sequence NAKs do not shrink it: with reordering
 * they come by the hundred, and a small window then crawls.
 */
static void snaa_comp_set_psn(struct snaa_qp *qp, u32 psn)
{
	int n = snaa_psn_diff(psn, qp->comp.psn);

	if (n > 0)
		qp->req.cwnd = min_t(u32, qp->req.cwnd + n, SNAA_RC_WINDOW);
	qp->comp.psn = psn;
}

/*
 * A response for a PSN acknowledged already: the responder answering a
 * request it got twice.  After a local ACK timeout it may replay a whole
 * RDMA READ response (from the READ's first PSN if no response had
 * arrived yet), and whatever was posted behind waits until the replay
 * is over.  That is the responder at work, not silence: the local ACK
 * timer starts again, as any response restarts rdma_rxe's, and the retry
 * count starts again too.  The timer runs in softirq before the receive
 * processing of the same pass, and on a loaded host that processing may
 * lag by more than a timeout: the timer then fires with the replay's
 * responses still queued, and a count spent on each such timeout would
 * run out while the responder is busy answering.  The count is for a
 * responder that does not answer at all: with nothing received, every
 * timeout spends one.  A replay cannot keep the QP alive for long
 * without progress either: each one answers a request that a timeout
 * sent, and the answer to the newest request is progress, or nothing.
 */
static void snaa_comp_alive(struct snaa_qp *qp)
{
	if (!qp->comp.timing || !snaa_comp_outstanding(qp))
		return;
	qp->comp.retry_left = qp->retry_cnt;
	snaa_comp_heard(qp);
}

/* The ACK moved forward: reset the retry count and the timer. */
static void snaa_comp_progress(struct snaa_qp *qp)
{
	qp->comp.retry_left = qp->retry_cnt;
	qp->comp.rnr_left = qp->rnr_retry;
	qp->comp.gap = false;
	if (snaa_comp_outstanding(qp))
		snaa_comp_heard(qp);
	else
		qp->comp.timing = false;
}

/*
 * Complete the oldest WQE with an error and move the QP to the error
 * state; the requester's flush completes the rest.
 */
static void snaa_comp_fail(struct snaa_qp *qp, enum ib_wc_status status)
{
	snaa_dbg(qp->sdev, "QP %u: %s, acknowledged up to PSN %#x, sent up to %#x\n",
		 qp->ibqp.qp_num, ib_wc_status_msg(status), qp->comp.psn,
		 qp->req.psn_max);
	if (qp->sq.kidx != qp->req.head)
		snaa_sq_complete(qp, status);
	snaa_comp_stop_timers(qp);
	snaa_qp_error(qp, 0);
}

/*
 * Everything up to and including @psn is acknowledged: complete the
 * SEND and WRITE WQEs it covers.  An RDMA READ or atomic WQE completes
 * only with its response; an acknowledgement of a PSN past its last
 * response means the rest of the response was lost, and the request is
 * sent again for what is missing (IBA 9.7.5.1.3, implicit NAK).  Return
 * true if the acknowledged PSN moved forward.
 */
static bool snaa_comp_ack(struct snaa_qp *qp, u32 psn)
{
	bool resume = false;
	struct snaa_swqe *w;

	if (snaa_psn_diff(psn, qp->comp.psn) < 0)
		return false;		/* an older ACK, or one for nothing */
	/* every WQE a packet was sent for, including those to send again */
	while (snaa_comp_sent(qp)) {
		w = snaa_swqe(qp, qp->sq.kidx);
		if (w->kind == SNAA_WK_READ || w->kind == SNAA_WK_ATOMIC) {
			u32 want = snaa_psn_add(w->first_psn,
						(u32)(w->done / qp->path_mtu));

			/*
			 * An implicit NAK asks for the rest once; until a
			 * response moves the READ on, later ACKs (for
			 * requests sent again behind it) must not restart
			 * it again and again.
			 */
			if (snaa_psn_diff(psn, w->last_psn) > 0 &&
			    !qp->comp.gap) {
				qp->comp.gap = true;
				snaa_req_rewind(qp, want);
			}
			/*
			 * Never past the response still expected: a response
			 * that arrives early (reordered) acknowledges only
			 * what precedes the READ, or the missing responses
			 * would look like duplicates.
			 */
			if (snaa_psn_diff(psn, want) >= 0)
				psn = snaa_psn_add(want, -1);
			break;
		}
		if (snaa_psn_diff(psn, w->last_psn) < 0)
			break;
		/* one the requester was going to send again (a rewind) */
		resume |= qp->sq.kidx == qp->req.cur;
		snaa_sq_complete(qp, IB_WC_SUCCESS);
	}
	if (snaa_psn_diff(psn, qp->comp.psn) < 0)
		return false;
	snaa_comp_set_psn(qp, snaa_psn_add(psn, 1));
	if (resume)
		snaa_req_resume(qp);
	return true;
}

/*
 * An error NAK is for the request at its PSN.  An older RDMA READ or
 * atomic that still waits for its responses has them on the way: the
 * responder sends in PSN order, but not always from one CPU (from the
 * receive path and from its work item), and on a veth a packet queued
 * on another CPU's backlog can be overtaken.  Must the error wait for
 * that WQE?
 */
static bool snaa_comp_nak_waits(struct snaa_qp *qp, u32 psn)
{
	struct snaa_swqe *w;

	if (!snaa_comp_sent(qp))
		return false;
	w = snaa_swqe(qp, qp->sq.kidx);
	return (w->kind == SNAA_WK_READ || w->kind == SNAA_WK_ATOMIC) &&
	       snaa_psn_diff(psn, w->last_psn) > 0;
}

/*
 * A waiting error NAK whose turn has come: what it acknowledges
 * completes, then the NAKed WQE fails and the QP enters ERR.  Return
 * true if it did.
 */
static bool snaa_comp_err_nak(struct snaa_qp *qp)
{
	struct snaa_comp *c = &qp->comp;

	if (!c->err_nak)
		return false;
	snaa_comp_ack(qp, snaa_psn_add(c->err_nak_psn, -1));
	if (snaa_comp_nak_waits(qp, c->err_nak_psn))
		return false;
	c->err_nak = false;
	snaa_comp_fail(qp, c->err_nak_status);
	return true;
}

/*
 * The oldest WQE got its last response.  If the requester was going to
 * send it again (a rewind), it goes on behind it instead.  Return true if
 * an error NAK that waited for it moved the QP to ERR.
 */
static bool snaa_comp_complete(struct snaa_qp *qp)
{
	bool resend = qp->sq.kidx == qp->req.cur;

	snaa_sq_complete(qp, IB_WC_SUCCESS);
	if (snaa_comp_err_nak(qp))
		return true;
	if (resend)
		snaa_req_resume(qp);
	return false;
}

/* NAK syndromes to completion statuses (IBA table 47). */
static enum ib_wc_status snaa_nak_status(u8 code)
{
	switch (code) {
	case SNAA_NAK_INVALID_REQUEST:
		return IB_WC_REM_INV_REQ_ERR;
	case SNAA_NAK_REMOTE_ACCESS_ERROR:
		return IB_WC_REM_ACCESS_ERR;
	case SNAA_NAK_REMOTE_OP_ERROR:
		return IB_WC_REM_OP_ERR;
	default:
		return IB_WC_REM_INV_RD_REQ_ERR;
	}
}

/* A retry that went nowhere: spend one, or give up. */
static bool snaa_comp_retry(struct snaa_qp *qp)
{
	if (!qp->comp.retry_left) {
		snaa_count(qp->sdev, SNAA_CNT_RC_RETRY_EXCEEDED, 1);
		snaa_comp_fail(qp, IB_WC_RETRY_EXC_ERR);
		return false;
	}
	qp->comp.retry_left--;
	return true;
}

static void snaa_comp_nak(struct snaa_qp *qp, const struct snaa_pkt *pkt)
{
	u32 psn = pkt->bth.psn;
	u8 value = snaa_aeth_value(pkt->aeth.syndrome);
	bool moved;

	/* A NAK acknowledges everything before its PSN. */
	moved = snaa_comp_ack(qp, snaa_psn_add(psn, -1));
	if (snaa_aeth_type(pkt->aeth.syndrome) == SNAA_AETH_RNR_NAK) {
		snaa_count(qp->sdev, SNAA_CNT_RC_RNR_NAKS_RCVD, 1);
		if (qp->rnr_retry != 7) {
			if (!qp->comp.rnr_left) {
				snaa_count(qp->sdev,
					   SNAA_CNT_RC_RNR_RETRY_EXCEEDED, 1);
				snaa_comp_fail(qp, IB_WC_RNR_RETRY_EXC_ERR);
				return;
			}
			qp->comp.rnr_left--;
		}
		snaa_req_rewind(qp, psn);
		qp->req.rnr_wait = true;
		if (!qp->dying)
			mod_timer(&qp->rnr_timer,
				  jiffies + snaa_rnr_jiffies(value));
		return;
	}
	if (value == SNAA_NAK_PSN_SEQ_ERROR) {
		struct snaa_comp *c = &qp->comp;
		bool newer = !c->nak_valid || snaa_psn_diff(psn, c->nak_psn) > 0;

		snaa_count(qp->sdev, SNAA_CNT_RC_SEQ_NAKS_RCVD, 1);
		/* overtaken by a newer NAK (reordered): nothing to do */
		if (!newer && psn != c->nak_psn)
			return;
		c->nak_valid = true;
		c->nak_psn = psn;
		/*
		 * A NAK further on than the last one is progress too: the
		 * responder got everything before it, only the ACK cannot
		 * move past an RDMA READ still waiting for responses.  The
		 * same NAK again means the retransmission did not help.
		 */
		if (moved)
			snaa_comp_progress(qp);
		else if (!newer && !snaa_comp_retry(qp))
			return;
		snaa_req_rewind(qp, psn);
		return;
	}
	snaa_count(qp->sdev, SNAA_CNT_RC_ERR_NAKS_RCVD, 1);
	if (snaa_comp_nak_waits(qp, psn)) {
		/* the older READ or atomic completes first */
		qp->comp.err_nak = true;
		qp->comp.err_nak_psn = psn;
		qp->comp.err_nak_status = snaa_nak_status(value);
		return;
	}
	snaa_comp_fail(qp, snaa_nak_status(value));
}

/*
 * Write @len bytes of response (@skb at @off, or @buf) into the local
 * SGEs of @w at byte @pos.
 */
static int snaa_comp_place(struct snaa_qp *qp, struct snaa_swqe *w, u64 pos,
			   const struct sk_buff *skb, u32 off, const void *buf,
			   u32 len)
{
	return snaa_sge_scatter(qp, snaa_swqe_sge(w), w->wqe.num_sge, pos, skb,
				off, buf, len);
}

static enum snaa_counter snaa_comp_read_resp(struct snaa_qp *qp,
					     const struct snaa_pkt *pkt,
					     struct sk_buff *skb)
{
	u32 psn = pkt->bth.psn, flags = pkt->op->flags, want, left;
	struct snaa_swqe *w;
	bool last;
	int err;

	snaa_comp_ack(qp, snaa_psn_add(psn, -1));
	if (!snaa_comp_sent(qp))
		return SNAA_CNT_DROP_STALE_RESPONSE;
	w = snaa_swqe(qp, qp->sq.kidx);
	if (w->kind != SNAA_WK_READ)
		return SNAA_CNT_DROP_STALE_RESPONSE;
	want = snaa_psn_add(w->first_psn, (u32)(w->done / qp->path_mtu));
	if (snaa_psn_diff(psn, want) < 0)
		return SNAA_CNT_DROP_STALE_RESPONSE;	/* a duplicate */
	if (snaa_psn_diff(psn, want) > 0) {
		/*
		 * A response was lost: ask for the rest again, once; the
		 * responses still in flight behind the gap are dropped
		 * until the first missing one comes.
		 */
		if (!qp->comp.gap) {
			if (!snaa_comp_retry(qp))
				return SNAA_CNT_DROP_PSN_GAP;
			qp->comp.gap = true;
			snaa_req_rewind(qp, want);
		}
		/*
		 * The responder is alive and still sending the old
		 * response of this READ; a responder that finishes it
		 * before it looks at the new request (rdma_rxe does) must
		 * not run the retry count down meanwhile.  The wait is
		 * bounded by the length of the READ.  Responses to later
		 * READs do not count: if the request for the rest was
		 * lost, only the timer asks again.
		 */
		if (snaa_psn_diff(psn, w->last_psn) <= 0)
			snaa_comp_heard(qp);
		return SNAA_CNT_DROP_PSN_GAP;
	}
	left = w->length - w->done;
	last = left <= qp->path_mtu;
	if (last ? !(flags & SNAA_OPF_END) || pkt->payload_len != left :
		   (flags & SNAA_OPF_END) || pkt->payload_len != qp->path_mtu) {
		snaa_comp_fail(qp, IB_WC_BAD_RESP_ERR);
		return SNAA_CNT_DROP_LENGTH;
	}
	err = snaa_comp_place(qp, w, w->done, skb, pkt->payload_off, NULL,
			      pkt->payload_len);
	if (err) {
		snaa_comp_fail(qp, IB_WC_LOC_PROT_ERR);
		return SNAA_CNT_DROP_ACCESS;
	}
	w->done += pkt->payload_len;
	snaa_comp_set_psn(qp, snaa_psn_add(psn, 1));
	if (last && snaa_comp_complete(qp))
		return 0;
	snaa_comp_progress(qp);
	return 0;
}

static enum snaa_counter snaa_comp_atomic_ack(struct snaa_qp *qp,
					      const struct snaa_pkt *pkt)
{
	u32 psn = pkt->bth.psn;
	struct snaa_swqe *w;
	u64 orig = pkt->atmack;	/* the target's value, in our byte order */

	snaa_comp_ack(qp, snaa_psn_add(psn, -1));
	if (!snaa_comp_sent(qp))
		return SNAA_CNT_DROP_STALE_RESPONSE;
	w = snaa_swqe(qp, qp->sq.kidx);
	if (w->kind != SNAA_WK_ATOMIC || w->first_psn != psn)
		return SNAA_CNT_DROP_STALE_RESPONSE;
	if (snaa_comp_place(qp, w, 0, NULL, 0, &orig, sizeof(orig))) {
		snaa_comp_fail(qp, IB_WC_LOC_PROT_ERR);
		return SNAA_CNT_DROP_ACCESS;
	}
	w->done = 8;
	snaa_comp_set_psn(qp, snaa_psn_add(psn, 1));
	if (!snaa_comp_complete(qp))
		snaa_comp_progress(qp);
	return 0;
}

/**
 * snaa_comp_rcv() - an ACK, NAK or response for an RC requester
 * @qp: the RC QP (its state and addresses checked)
 * @pkt: the parsed packet, a responder opcode
 * @skb: the packet
 *
 * A response must name a PSN that was sent and not acknowledged yet;
 * anything else (a duplicate, a late response, a forgery) is dropped
 * without touching the requester.
 *
 * Context: softirq, qp->sq_lock held.
 * Return: 0, or the counter of the drop.
 */
enum snaa_counter snaa_comp_rcv(struct snaa_qp *qp, const struct snaa_pkt *pkt,
				struct sk_buff *skb)
{
	u32 psn = pkt->bth.psn, flags = pkt->op->flags;
	enum snaa_counter drop = 0;
	u32 kidx, cur, cpsn;

	lockdep_assert_held(&qp->sq_lock);
	if (snaa_psn_diff(psn, qp->req.psn_max) >= 0)
		return SNAA_CNT_DROP_STALE_RESPONSE;
	if (snaa_psn_diff(psn, qp->comp.psn) < 0) {
		snaa_comp_alive(qp);
		return SNAA_CNT_DROP_STALE_RESPONSE;
	}
	kidx = qp->sq.kidx;
	cur = qp->req.cur;
	cpsn = qp->comp.psn;
	if (flags & SNAA_OPF_READ) {
		drop = snaa_comp_read_resp(qp, pkt, skb);
	} else if (flags & SNAA_OPF_ATOMIC) {
		drop = snaa_comp_atomic_ack(qp, pkt);
	} else if (snaa_aeth_type(pkt->aeth.syndrome) == SNAA_AETH_ACK) {
		if (snaa_comp_ack(qp, psn))
			snaa_comp_progress(qp);
		else
			drop = SNAA_CNT_DROP_STALE_RESPONSE;
	} else {
		snaa_comp_nak(qp, pkt);
	}
	/* an ACK of what is being sent again: not sent again */
	if (snaa_psn_diff(qp->comp.psn, cpsn) > 0 &&
	    READ_ONCE(qp->state) != IB_QPS_ERR)
		snaa_req_skip(qp);
	/*
	 * Wake the requester if it waits for what just happened (the
	 * window, a READ/atomic slot, a fence) or must go back (a rewind).
	 */
	if ((qp->req.blocked && qp->sq.kidx != kidx) ||
	    (qp->req.blocked == SNAA_REQ_WAIT_PSN && qp->comp.psn != cpsn &&
	     snaa_psn_diff(qp->comp.psn, qp->req.wake_psn) >= 0) ||
	    qp->req.cur != cur) {
		qp->req.blocked = SNAA_REQ_RUNS;
		snaa_sq_schedule(qp);
	}
	return drop;
}

/* Local ACK timeout: nothing was acknowledged for a timeout's time. */
static void snaa_comp_retrans_timer(struct timer_list *t)
{
	struct snaa_qp *qp = snaa_timer_container_of(qp, t, retrans_timer);

	spin_lock(&qp->sq_lock);
	if (qp->dying || !snaa_comp_outstanding(qp) ||
	    READ_ONCE(qp->state) == IB_QPS_ERR) {
		qp->comp.timing = false;
		goto out;
	}
	if (!qp->comp.timing)
		goto out;
	if (time_before(jiffies, qp->comp.deadline)) {
		/* progress since the timer was set */
		mod_timer(&qp->retrans_timer, qp->comp.deadline);
		goto out;
	}
	if (qp->comp.heard) {
		/* responses were processed after this period began */
		qp->comp.heard = false;
		snaa_comp_set_deadline(qp);
		goto out;
	}
	snaa_count(qp->sdev, SNAA_CNT_RC_TIMEOUTS, 1);
	if (!snaa_comp_retry(qp))
		goto out;
	qp->req.cwnd = SNAA_RC_CWND_MIN;
	snaa_req_rewind(qp, qp->comp.psn);
	snaa_comp_set_deadline(qp);
	snaa_sq_schedule(qp);
out:
	spin_unlock(&qp->sq_lock);
	snaa_qp_upcalls(qp);
}

/* The RNR NAK's wait is over: send again. */
static void snaa_comp_rnr_timer(struct timer_list *t)
{
	struct snaa_qp *qp = snaa_timer_container_of(qp, t, rnr_timer);

	spin_lock(&qp->sq_lock);
	qp->req.rnr_wait = false;
	if (!qp->dying)
		snaa_sq_schedule(qp);
	spin_unlock(&qp->sq_lock);
}

/* Set up the completer of a new QP. */
void snaa_comp_init(struct snaa_qp *qp)
{
	timer_setup(&qp->retrans_timer, snaa_comp_retrans_timer, 0);
	timer_setup(&qp->rnr_timer, snaa_comp_rnr_timer, 0);
}

/**
 * snaa_comp_shutdown() - stop the timers for good (destroy)
 * @qp: the QP, out of the QP table
 *
 * After this no timer runs or can be started again.
 *
 * Context: process context.
 */
void snaa_comp_shutdown(struct snaa_qp *qp)
{
	spin_lock_bh(&qp->sq_lock);
	qp->dying = true;
	spin_unlock_bh(&qp->sq_lock);
	timer_shutdown_sync(&qp->retrans_timer);
	timer_shutdown_sync(&qp->rnr_timer);
}
