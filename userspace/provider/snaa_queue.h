/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * snaa_queue.h - the provider's side of the rings shared with snaa.ko
 * (layout and protocol: include/uapi/rdma/snaa-abi.h).
 *
 * Pure code: ring geometry checks, SQE/RQE encoding from ibv_*_wr,
 * CQE -> ibv_wc translation, the index protocol and the doorbell
 * decision.  No locking, no system calls and no libibverbs functions
 * (only its public types), so that snaa.c and the host unit test
 * test_queue.c run the very same code.  The caller serialises all
 * calls on one queue (snaa.c: one spinlock per SQ, RQ and CQ).
 *
 * Memory ordering
 * ---------------
 * The shared indices are plain __u32 fields of struct snaa_ring, written
 * on the kernel side with smp_store_release()/smp_load_acquire().  They
 * are accessed here with the GCC/Clang __atomic builtins on those plain
 * fields rather than through casts to _Atomic uint32_t *: C11 does not
 * promise that _Atomic uint32_t has the representation of uint32_t, nor
 * does it define accessing a non-atomic object through an atomic lvalue,
 * whereas the builtins are documented for ordinary integer objects and
 * the uapi header has to stay plain C for the kernel.  Both spellings
 * compile to the same instructions on gcc and clang.  The one full
 * barrier of the doorbell protocol is C11's
 * atomic_thread_fence(memory_order_seq_cst) (it involves no object).
 *
 *  - producer (SQ/RQ: us): write the entry, then store-release
 *    @producer, so the kernel's load-acquire of @producer sees the entry;
 *  - consumer (CQ: us): load-acquire @producer, read the entries, then
 *    store-release @consumer, so the kernel cannot reuse a slot we are
 *    still reading;
 *  - before reusing SQ/RQ slots we load-acquire the kernel's @consumer,
 *    so our new entry cannot overwrite one the kernel is still copying;
 *  - doorbell: after publishing, a seq_cst fence, then read @flags.  The
 *    kernel sets IDLE, issues smp_mb() and re-reads @producer before it
 *    stops (snaa-abi.h).  With a full barrier on both sides at least one
 *    of the two sees the other's store: either the kernel sees our
 *    producer and keeps going, or we see IDLE and ring.
 *
 * Our own index (SQ/RQ producer, CQ consumer) is kept privately in
 * struct snaa_queue and only ever written to the ring, never read back.
 */
#ifndef SNAA_QUEUE_H
#define SNAA_QUEUE_H

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <infiniband/verbs.h>	/* types only */
#include <rdma/ib_user_verbs.h>
#include <rdma/snaa-abi.h>

/*
 * The ABI puts IB_UVERBS_WR_* opcodes in an SQE and kernel ib_wc_opcode
 * values in a CQE, "equal to the libibverbs values": hold it to that.
 * The uapi enum ib_uverbs_wc_opcode stops at the send side; the receive
 * opcodes are the kernel's IB_WC_RECV (1 << 7) and IB_WC_RECV + 1.
 */
#define SNAA_SAME(a, b)	((int)(a) == (int)(b))
_Static_assert(SNAA_SAME(IB_UVERBS_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE) &&
	       SNAA_SAME(IB_UVERBS_WR_RDMA_WRITE_WITH_IMM,
			 IBV_WR_RDMA_WRITE_WITH_IMM) &&
	       SNAA_SAME(IB_UVERBS_WR_SEND, IBV_WR_SEND) &&
	       SNAA_SAME(IB_UVERBS_WR_SEND_WITH_IMM, IBV_WR_SEND_WITH_IMM) &&
	       SNAA_SAME(IB_UVERBS_WR_RDMA_READ, IBV_WR_RDMA_READ) &&
	       SNAA_SAME(IB_UVERBS_WR_LOCAL_INV, IBV_WR_LOCAL_INV) &&
	       SNAA_SAME(IB_UVERBS_WR_BIND_MW, IBV_WR_BIND_MW) &&
	       SNAA_SAME(IB_UVERBS_WR_SEND_WITH_INV, IBV_WR_SEND_WITH_INV),
	       "IB_UVERBS_WR_* != IBV_WR_*");
_Static_assert(SNAA_SAME(IB_UVERBS_WC_SEND, IBV_WC_SEND) &&
	       SNAA_SAME(IB_UVERBS_WC_RDMA_WRITE, IBV_WC_RDMA_WRITE) &&
	       SNAA_SAME(IB_UVERBS_WC_RDMA_READ, IBV_WC_RDMA_READ) &&
	       SNAA_SAME(IB_UVERBS_WC_BIND_MW, IBV_WC_BIND_MW) &&
	       SNAA_SAME(IB_UVERBS_WC_LOCAL_INV, IBV_WC_LOCAL_INV) &&
	       SNAA_SAME(IBV_WC_RECV, 1 << 7) &&
	       SNAA_SAME(IBV_WC_RECV_RDMA_WITH_IMM, (1 << 7) + 1),
	       "kernel WC opcodes != IBV_WC_*");
#undef SNAA_SAME
_Static_assert(sizeof(struct snaa_ring) == 128, "snaa_ring is two lines");
_Static_assert(offsetof(struct snaa_ring, consumer) == 64,
	       "snaa_ring.consumer has its own cache line");
_Static_assert(sizeof(struct snaa_sqe) == 56 &&
	       offsetof(struct snaa_sqe, sge) == 56, "snaa_sqe layout");
_Static_assert(sizeof(struct snaa_rqe) == 16 &&
	       offsetof(struct snaa_rqe, sge) == 16, "snaa_rqe layout");
_Static_assert(sizeof(struct snaa_sge) == 16, "snaa_sge layout");
_Static_assert(sizeof(struct snaa_cqe) == 32, "snaa_cqe layout");
/* Both unions the invalidation keys travel in, as the ABI relies on. */
_Static_assert(offsetof(struct ibv_send_wr, invalidate_rkey) ==
	       offsetof(struct ibv_send_wr, imm_data) &&
	       offsetof(struct ibv_wc, invalidated_rkey) ==
	       offsetof(struct ibv_wc, imm_data),
	       "invalidate_rkey / invalidated_rkey share imm_data's place");
_Static_assert(offsetof(struct snaa_sqe, bind.length) == 40 &&
	       offsetof(struct snaa_sqe, bind.mr_lkey) == 48 &&
	       offsetof(struct snaa_sqe, bind.access) == 52,
	       "snaa_sqe.bind overlays the UD/atomic fields");

/* Largest value of the 24-bit QPN field. */
#define SNAA_QPN_MASK	0xffffffU

static inline uint32_t snaa_load_acquire(const uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline void snaa_store_release(uint32_t *p, uint32_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

/* ------------------------------------------------------------------ */
/* Geometry                                                            */
/* ------------------------------------------------------------------ */

static inline bool snaa_is_pow2(uint32_t x)
{
	return x && !(x & (x - 1));
}

/* Bytes a ring of @num entries of @stride bytes needs (no overflow). */
static inline uint64_t snaa_ring_bytes(uint32_t num, uint32_t stride)
{
	return sizeof(struct snaa_ring) + (uint64_t)num * stride;
}

/*
 * Can a ring the kernel described be used safely?  @num a power of two,
 * @stride at least @min_stride and a multiple of 8 (the entries hold
 * 64-bit fields), and @ring_size bytes covering header and entries.
 */
static inline bool snaa_ring_geometry_ok(uint32_t num, uint32_t stride,
					 uint64_t ring_size,
					 uint64_t min_stride)
{
	return snaa_is_pow2(num) && stride >= min_stride && !(stride % 8) &&
	       ring_size >= snaa_ring_bytes(num, stride);
}

/* Smallest SQ/RQ stride that holds what the kernel granted. */
static inline uint64_t snaa_sq_min_stride(uint32_t max_sge,
					  uint32_t max_inline)
{
	uint64_t sges = (uint64_t)max_sge * sizeof(struct snaa_sge);

	return sizeof(struct snaa_sqe) +
	       (sges > max_inline ? sges : max_inline);
}

static inline uint64_t snaa_rq_min_stride(uint32_t max_sge)
{
	return sizeof(struct snaa_rqe) +
	       (uint64_t)max_sge * sizeof(struct snaa_sge);
}

/* ------------------------------------------------------------------ */
/* Queue state                                                         */
/* ------------------------------------------------------------------ */

struct snaa_queue {
	struct snaa_ring *ring;	/* mapped ring header, NULL: no queue */
	uint8_t *slots;		/* entries, right after the header */
	uint32_t num;		/* entries, a power of two */
	uint32_t stride;	/* bytes per entry */
	uint32_t limit;		/* most entries in flight (<= num) */
	uint32_t index;		/* private copy of the index we own */
};

/*
 * Start using a ring at @base.  @user_produces: SQ/RQ (we own @producer)
 * rather than CQ (we own @consumer).  Our index starts where the kernel
 * initialised it.  @limit caps the entries in flight (the granted
 * max_send_wr/max_recv_wr; for a CQ @num); more than @num means @num.
 */
static inline void snaa_queue_init(struct snaa_queue *q, void *base,
				   uint32_t num, uint32_t stride,
				   uint32_t limit, bool user_produces)
{
	q->ring = base;
	q->slots = (uint8_t *)base + sizeof(struct snaa_ring);
	q->num = num;
	q->stride = stride;
	q->limit = limit < num ? limit : num;
	q->index = snaa_load_acquire(user_produces ? &q->ring->producer :
					  &q->ring->consumer);
}

/* The indices the kernel left in a ring are consistent (not > num apart). */
static inline bool snaa_queue_indices_ok(const struct snaa_queue *q)
{
	uint32_t prod = snaa_load_acquire(&q->ring->producer);
	uint32_t cons = snaa_load_acquire(&q->ring->consumer);

	return prod - cons <= q->num;
}

static inline void *snaa_queue_slot(const struct snaa_queue *q,
				    uint32_t index)
{
	return q->slots + (size_t)(index & (q->num - 1)) * q->stride;
}

/*
 * Room for one more entry at our producer index?  A consumer index the
 * kernel has moved past our producer makes the difference huge, i.e.
 * "full", never an overwrite.
 */
static inline bool snaa_queue_has_room(const struct snaa_queue *q)
{
	uint32_t cons = snaa_load_acquire(&q->ring->consumer);

	return q->index - cons < q->limit;
}

/*
 * Doorbell decision after publishing entries: full barrier, then is the
 * kernel idle on this ring?  (The flag read needs no ordering of its own
 * beyond the fence.)
 */
static inline bool snaa_ring_needs_doorbell(const struct snaa_ring *ring)
{
	atomic_thread_fence(memory_order_seq_cst);
	return __atomic_load_n(&ring->flags, __ATOMIC_RELAXED) &
	       SNAA_RING_F_IDLE;
}

/* ------------------------------------------------------------------ */
/* Send queue                                                          */
/* ------------------------------------------------------------------ */

/* What the kernel granted for the QP (attr->cap after create_qp). */
/*
 * The provider's address handle: UD SQEs name it by the number the
 * kernel returned at creation (snaa_uresp_create_ah.ahn), not by its
 * uverbs handle.
 */
struct snaa_ah {
	struct ibv_ah ibv_ah;	/* first: a struct ibv_ah * converts */
	uint32_t ahn;
};

_Static_assert(offsetof(struct snaa_ah, ibv_ah) == 0, "ibv_ah first");

static inline uint32_t snaa_ahn(const struct ibv_ah *ah)
{
	return ((const struct snaa_ah *)ah)->ahn;
}

struct snaa_sq_caps {
	enum ibv_qp_type qp_type;
	uint32_t max_sge;
	uint32_t max_inline;
};

static inline bool snaa_sq_opcode_ok(enum ibv_qp_type type,
				     enum ibv_wr_opcode opcode)
{
	switch (opcode) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		return type == IBV_QPT_RC || type == IBV_QPT_UC ||
		       type == IBV_QPT_UD;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_BIND_MW:
	case IBV_WR_LOCAL_INV:
		return type == IBV_QPT_RC || type == IBV_QPT_UC;
	case IBV_WR_RDMA_READ:
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
	case IBV_WR_SEND_WITH_INV:
		return type == IBV_QPT_RC;
	default:
		return false;
	}
}

/* BIND_MW and LOCAL_INV carry no data: their SGE list is not used. */
static inline bool snaa_sq_opcode_has_data(enum ibv_wr_opcode opcode)
{
	return opcode != IBV_WR_BIND_MW && opcode != IBV_WR_LOCAL_INV;
}

#define SNAA_SEND_FLAGS	(IBV_SEND_FENCE | IBV_SEND_SIGNALED |		\
			 IBV_SEND_SOLICITED | IBV_SEND_INLINE)

static inline uint32_t snaa_sqe_flags(unsigned int send_flags)
{
	return (send_flags & IBV_SEND_FENCE ? SNAA_WQE_FENCE : 0) |
	       (send_flags & IBV_SEND_SIGNALED ? SNAA_WQE_SIGNALED : 0) |
	       (send_flags & IBV_SEND_SOLICITED ? SNAA_WQE_SOLICITED : 0) |
	       (send_flags & IBV_SEND_INLINE ? SNAA_WQE_INLINE : 0);
}

/*
 * Check a BIND_MW WR (wr->bind_mw) for a window of type @mw_type:
 * IBV_MW_TYPE_2 from ibv_post_send and ibv_wr_bind_mw, IBV_MW_TYPE_1
 * from ibv_bind_mw.  0 or EINVAL.  What the window may be bound to (MR,
 * range, rights, the new key) is the kernel's to check: a bind it
 * refuses completes with IBV_WC_MW_BIND_ERR.
 */
static inline int snaa_sq_check_bind(const struct snaa_sq_caps *caps,
				     const struct ibv_send_wr *wr,
				     enum ibv_mw_type mw_type)
{
	const struct ibv_mw_bind_info *bi = &wr->bind_mw.bind_info;

	if (wr->opcode != IBV_WR_BIND_MW ||
	    !snaa_sq_opcode_ok(caps->qp_type, wr->opcode))
		return EINVAL;
	if (wr->send_flags & ~(unsigned int)(SNAA_SEND_FLAGS &
					     ~IBV_SEND_INLINE))
		return EINVAL;
	if (!wr->bind_mw.mw || wr->bind_mw.mw->type != mw_type)
		return EINVAL;
	if (!bi->mr && bi->length)
		return EINVAL;
	return 0;
}

/*
 * Check one send WR against the QP; 0 or EINVAL.  For IBV_SEND_INLINE
 * *inline_len is set to the total length.
 */
static inline int snaa_sq_check_wr(const struct snaa_sq_caps *caps,
				   const struct ibv_send_wr *wr,
				   uint32_t *inline_len)
{
	uint64_t total = 0;
	int i;

	*inline_len = 0;
	if (wr->opcode == IBV_WR_BIND_MW)
		return snaa_sq_check_bind(caps, wr, IBV_MW_TYPE_2);
	if (!snaa_sq_opcode_ok(caps->qp_type, wr->opcode))
		return EINVAL;
	if (wr->send_flags & ~(unsigned int)SNAA_SEND_FLAGS)
		return EINVAL;
	if (!snaa_sq_opcode_has_data(wr->opcode))
		return wr->send_flags & IBV_SEND_INLINE ? EINVAL : 0;
	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > caps->max_sge ||
	    (wr->num_sge && !wr->sg_list))
		return EINVAL;
	if (caps->qp_type == IBV_QPT_UD &&
	    (!wr->wr.ud.ah || wr->wr.ud.remote_qpn & ~SNAA_QPN_MASK))
		return EINVAL;
	if (wr->send_flags & IBV_SEND_INLINE) {
		if (wr->opcode == IBV_WR_RDMA_READ ||
		    wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
		    wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD)
			return EINVAL;	/* nothing to send inline */
		for (i = 0; i < wr->num_sge; i++)
			total += wr->sg_list[i].length;
		if (total > caps->max_inline)
			return EINVAL;
		*inline_len = (uint32_t)total;
	}
	return 0;
}

/*
 * Encode a checked WR into the SQ slot @slot.  Every header field is
 * written (stale bytes of an earlier SQE never leak through); the SGE
 * array, or for inline the data, follows the header.
 */
static inline void snaa_sqe_encode(void *slot, enum ibv_qp_type qp_type,
				   const struct ibv_send_wr *wr,
				   uint32_t inline_len)
{
	const struct ibv_mw_bind_info *bi = &wr->bind_mw.bind_info;
	struct snaa_sqe *sqe = slot;
	bool is_inline = wr->send_flags & IBV_SEND_INLINE;
	bool rdma = wr->opcode == IBV_WR_RDMA_WRITE ||
		    wr->opcode == IBV_WR_RDMA_WRITE_WITH_IMM ||
		    wr->opcode == IBV_WR_RDMA_READ;
	bool imm = wr->opcode == IBV_WR_SEND_WITH_IMM ||
		   wr->opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
	bool inv = wr->opcode == IBV_WR_SEND_WITH_INV ||
		   wr->opcode == IBV_WR_LOCAL_INV;
	bool atomic = wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
		      wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD;
	bool bind = wr->opcode == IBV_WR_BIND_MW;
	bool data = snaa_sq_opcode_has_data(wr->opcode);
	bool ud = qp_type == IBV_QPT_UD;
	uint8_t *data_p;
	int i;

	sqe->wr_id = wr->wr_id;
	sqe->opcode = wr->opcode;
	sqe->flags = snaa_sqe_flags(wr->send_flags);
	sqe->num_sge = is_inline || !data ? 0 : (uint32_t)wr->num_sge;
	/* network order as is; an R_Key to invalidate in host order */
	sqe->imm_data = imm ? wr->imm_data : inv ? wr->invalidate_rkey : 0;
	sqe->remote_addr = rdma ? wr->wr.rdma.remote_addr :
			   atomic ? wr->wr.atomic.remote_addr : 0;
	sqe->rkey = rdma ? wr->wr.rdma.rkey : atomic ? wr->wr.atomic.rkey : 0;
	sqe->inline_len = is_inline ? inline_len : 0;
	if (atomic) {
		sqe->compare_add = wr->wr.atomic.compare_add;
		sqe->swap = wr->wr.atomic.swap;
	} else if (bind) {
		sqe->rkey = wr->bind_mw.mw->rkey;	/* the current key */
		sqe->imm_data = wr->bind_mw.rkey;	/* the new one */
		sqe->remote_addr = bi->addr;
		sqe->bind.length = bi->length;
		sqe->bind.mr_lkey = bi->mr ? bi->mr->lkey : 0;
		sqe->bind.access = bi->mw_access_flags;
	} else {
		sqe->ah_handle = ud ? snaa_ahn(wr->wr.ud.ah) : 0;
		sqe->remote_qpn = ud ? wr->wr.ud.remote_qpn : 0;
		sqe->remote_qkey = ud ? wr->wr.ud.remote_qkey : 0;
		sqe->reserved = 0;
	}
	if (!data)
		return;

	if (is_inline) {
		data_p = (uint8_t *)sqe->sge;
		for (i = 0; i < wr->num_sge; i++) {
			if (!wr->sg_list[i].length)
				continue;	/* its addr may be anything */
			memcpy(data_p, (const void *)(uintptr_t)
			       wr->sg_list[i].addr, wr->sg_list[i].length);
			data_p += wr->sg_list[i].length;
		}
		return;
	}
	for (i = 0; i < wr->num_sge; i++) {
		sqe->sge[i].addr = wr->sg_list[i].addr;
		sqe->sge[i].length = wr->sg_list[i].length;
		sqe->sge[i].lkey = wr->sg_list[i].lkey;
	}
}

/* Write a checked WR at our producer index and publish it. */
static inline void snaa_sq_put(struct snaa_queue *sq, enum ibv_qp_type qp_type,
			       const struct ibv_send_wr *wr,
			       uint32_t inline_len)
{
	snaa_sqe_encode(snaa_queue_slot(sq, sq->index), qp_type, wr,
			inline_len);
	sq->index++;
	snaa_store_release(&sq->ring->producer, sq->index);
}

/*
 * Post a chain of send WRs.  Each one is checked, written at our
 * producer index and published with a store-release of @producer.  Stops
 * at the first WR that is invalid (EINVAL, checked first) or finds the
 * queue full (ENOMEM) and points *bad_wr at it; the WRs before it stay posted.
 * *posted counts the WRs published.  Returns 0 or that errno.
 */
static inline int snaa_sq_post(struct snaa_queue *sq,
			       const struct snaa_sq_caps *caps,
			       struct ibv_send_wr *wr,
			       struct ibv_send_wr **bad_wr,
			       unsigned int *posted)
{
	uint32_t inline_len;
	int err = 0;

	*posted = 0;
	for (; wr; wr = wr->next) {
		err = snaa_sq_check_wr(caps, wr, &inline_len);
		if (err)
			break;
		if (!snaa_queue_has_room(sq)) {
			err = ENOMEM;
			break;
		}
		snaa_sq_put(sq, caps->qp_type, wr, inline_len);
		(*posted)++;
	}
	if (err)
		*bad_wr = wr;
	return err;
}

/*
 * ibv_bind_mw(): the bind of a type 1 window, built by the caller as a
 * BIND_MW WR, posted like any other.  0, EINVAL or ENOMEM.
 */
static inline int snaa_sq_post_bind(struct snaa_queue *sq,
				    const struct snaa_sq_caps *caps,
				    const struct ibv_send_wr *wr)
{
	int err = snaa_sq_check_bind(caps, wr, IBV_MW_TYPE_1);

	if (err)
		return err;
	if (!snaa_queue_has_room(sq))
		return ENOMEM;
	snaa_sq_put(sq, caps->qp_type, wr, 0);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Receive queue                                                       */
/* ------------------------------------------------------------------ */

static inline int snaa_rq_check_wr(uint32_t max_sge,
				   const struct ibv_recv_wr *wr)
{
	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > max_sge ||
	    (wr->num_sge && !wr->sg_list))
		return EINVAL;
	return 0;
}

static inline void snaa_rqe_encode(void *slot, const struct ibv_recv_wr *wr)
{
	struct snaa_rqe *rqe = slot;
	int i;

	rqe->wr_id = wr->wr_id;
	rqe->num_sge = (uint32_t)wr->num_sge;
	rqe->reserved = 0;
	for (i = 0; i < wr->num_sge; i++) {
		rqe->sge[i].addr = wr->sg_list[i].addr;
		rqe->sge[i].length = wr->sg_list[i].length;
		rqe->sge[i].lkey = wr->sg_list[i].lkey;
	}
}

/* As snaa_sq_post(), for the RQ. */
static inline int snaa_rq_post(struct snaa_queue *rq, uint32_t max_sge,
			       struct ibv_recv_wr *wr,
			       struct ibv_recv_wr **bad_wr,
			       unsigned int *posted)
{
	int err = 0;

	*posted = 0;
	for (; wr; wr = wr->next) {
		err = snaa_rq_check_wr(max_sge, wr);
		if (err)
			break;
		if (!snaa_queue_has_room(rq)) {
			err = ENOMEM;
			break;
		}
		snaa_rqe_encode(snaa_queue_slot(rq, rq->index), wr);
		rq->index++;
		snaa_store_release(&rq->ring->producer, rq->index);
		(*posted)++;
	}
	if (err)
		*bad_wr = wr;
	return err;
}

/* ------------------------------------------------------------------ */
/* Completion queue                                                    */
/* ------------------------------------------------------------------ */

static inline void snaa_cqe_to_wc(const struct snaa_cqe *cqe,
				  struct ibv_wc *wc)
{
	wc->wr_id = cqe->wr_id;
	wc->status = (enum ibv_wc_status)cqe->status;
	wc->opcode = (enum ibv_wc_opcode)cqe->opcode;
	wc->vendor_err = 0;
	wc->byte_len = cqe->byte_len;
	/* network order as is; with WITH_INV the R_Key, host order */
	wc->imm_data = cqe->imm_data;
	wc->qp_num = cqe->qp_num;
	wc->src_qp = cqe->src_qp;
	wc->wc_flags = (cqe->wc_flags & SNAA_WC_GRH ? IBV_WC_GRH : 0) |
		       (cqe->wc_flags & SNAA_WC_WITH_IMM ? IBV_WC_WITH_IMM : 0) |
		       (cqe->wc_flags & SNAA_WC_WITH_INV ? IBV_WC_WITH_INV : 0);
	wc->pkey_index = cqe->pkey_index;
	wc->slid = 0;
	wc->sl = cqe->sl;
	wc->dlid_path_bits = 0;
}

/*
 * Consume up to @n CQEs into @wc.  Returns how many, or -EIO if the
 * kernel's producer index is more than a ring ahead of ours (nothing is
 * consumed then).
 */
static inline int snaa_cq_poll(struct snaa_queue *cq, int n,
			       struct ibv_wc *wc)
{
	uint32_t prod = snaa_load_acquire(&cq->ring->producer);
	uint32_t avail = prod - cq->index;
	struct snaa_cqe cqe;
	int i;

	if (avail > cq->num)
		return -EIO;
	if (n < 0)
		n = 0;
	if ((uint32_t)n > avail)
		n = (int)avail;
	for (i = 0; i < n; i++) {
		memcpy(&cqe, snaa_queue_slot(cq, cq->index + (uint32_t)i),
		       sizeof(cqe));
		snaa_cqe_to_wc(&cqe, &wc[i]);
	}
	if (n) {
		cq->index += (uint32_t)n;
		snaa_store_release(&cq->ring->consumer, cq->index);
	}
	return n;
}

#endif /* SNAA_QUEUE_H */
