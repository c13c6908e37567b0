/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * WCU.BUF receive mode: the pure arithmetic (no kernel-only dependency),
 * shared by snaa_wcubuf.c and the host unit tests (tests/unit/).
 *
 * The ring of R bytes is divided into R / F slots of F bytes.  Senders
 * see it as the whole 64-bit VA space: frame starts are va_base + k * F,
 * k counting on forever, modulo 2^64.  Everything is computed relative
 * to the read pointer rp (itself va_base + j * F), never as an absolute
 * (va - va_base) mod R, so a VA wrapping at 2^64 needs no special case
 * even when R is not a power of two.
 *
 *  - write window: frames starting in [rp, rp + R - F) (seed 000, 3.2.2),
 *    i.e. at most R / F - 1 frames ahead of the consumer;
 *  - consumed: frames starting in [rp - R, rp): delivered and handed
 *    back already (rp never passes an undelivered frame), so a worker
 *    that lost their ACK is answered with an ACK again;
 *  - anything else is outside the window.
 */
#ifndef _SNAA_WCUBUF_H
#define _SNAA_WCUBUF_H

#include "snaa_wire.h"
#ifdef __KERNEL__
#include <uapi/rdma/snaa-abi.h>
#else
#include <rdma/snaa-abi.h>
#endif

#define SNAA_WCU_EV(bit)	(1U << SNAA_WCUBUF_EV_##bit)
/* Events the receive path detects; the others come from fault injection. */
#define SNAA_WCU_EV_ALL		((1U << SNAA_WCUBUF_EV_NUM) - 1)

#define SNAA_WCU_PKT_MIN	64	/* payload bytes of one packet */
#define SNAA_WCU_PKT_MAX	4096
#define SNAA_WCU_ALIGN		64	/* frame VAs and sizes */

/* Is this a usable ring geometry? */
static inline int snaa_wcu_geom_ok(__u64 ring_size, __u32 frame_size,
				   __u64 va_base)
{
	return frame_size && !(frame_size % SNAA_WCU_ALIGN) &&
	       frame_size <= SNAA_WCUBUF_MAX_FRAME &&
	       ring_size <= SNAA_WCUBUF_MAX_RING &&
	       !snaa_mod_u32(ring_size, frame_size) &&
	       ring_size >= 2ULL * frame_size &&
	       ring_size <= (__u64)SNAA_WCUBUF_MAX_SLOTS * frame_size &&
	       va_base && !(va_base % SNAA_WCU_ALIGN);
}

enum snaa_wcu_where {
	SNAA_WCU_IN_WINDOW,
	SNAA_WCU_CONSUMED,
	SNAA_WCU_OUTSIDE,
};

/* Where a frame starting at @va lies, for read pointer @rp. */
static inline enum snaa_wcu_where snaa_wcu_where(__u64 rp, __u64 ring_size,
						 __u32 frame_size, __u64 va)
{
	if (va - rp < ring_size - frame_size)
		return SNAA_WCU_IN_WINDOW;
	if (rp - va && rp - va <= ring_size)
		return SNAA_WCU_CONSUMED;
	return SNAA_WCU_OUTSIDE;
}

/**
 * snaa_wcu_start_events() - the events a frame's first packet shows
 * @rp: read pointer
 * @ring_size: R
 * @frame_size: F
 * @va: RETH virtual address
 * @dma_len: RETH DMA length
 * @rkey: RETH R_Key
 * @ring_rkey: the R_Key of the ring
 * @where: set to where the frame lies
 *
 * Invalid VA (bit 8) covers a VA that is not 64-byte aligned (the seed)
 * and one that is aligned but not a frame start (our slots); frame
 * length (bit 4) a DMA length of 0 or above F.
 *
 * Return: the event bits, 0 for a frame that may be placed.
 */
static inline __u32 snaa_wcu_start_events(__u64 rp, __u64 ring_size,
					  __u32 frame_size, __u64 va,
					  __u64 dma_len, __u32 rkey,
					  __u32 ring_rkey,
					  enum snaa_wcu_where *where)
{
	__u32 ev = 0;

	if (rkey != ring_rkey)
		ev |= SNAA_WCU_EV(RKEY);
	if (va % SNAA_WCU_ALIGN)
		ev |= SNAA_WCU_EV(VA);
	*where = snaa_wcu_where(rp, ring_size, frame_size, va);
	switch (*where) {
	case SNAA_WCU_IN_WINDOW:
		if (snaa_mod_u32(va - rp, frame_size))
			ev |= SNAA_WCU_EV(VA);
		break;
	case SNAA_WCU_CONSUMED:
		if (snaa_mod_u32(rp - va, frame_size))
			ev |= SNAA_WCU_EV(VA);
		break;
	default:
		ev |= SNAA_WCU_EV(WINDOW);
		break;
	}
	if (!dma_len || dma_len > frame_size)
		ev |= SNAA_WCU_EV(FRAME_LEN);
	return ev;
}

/* Packet length error (bit 5): payload < 64, not a multiple of 64, > 4096 */
static inline int snaa_wcu_packet_len_bad(__u32 len)
{
	return len < SNAA_WCU_PKT_MIN || len % SNAA_WCU_ALIGN ||
	       len > SNAA_WCU_PKT_MAX;
}

static inline void snaa_wcu_put_le32(__u8 *p, __u32 v)
{
	p[0] = v;
	p[1] = v >> 8;
	p[2] = v >> 16;
	p[3] = v >> 24;
}

/* The 16-byte ACK/NACK message (Table 3.5, little-endian words). */
static inline void snaa_wcu_ack_put(__u8 *p, __u32 type, __u32 events,
				    __u64 va)
{
	snaa_wcu_put_le32(p, type);
	snaa_wcu_put_le32(p + 4, events);
	snaa_wcu_put_le32(p + 8, (__u32)va);
	snaa_wcu_put_le32(p + 12, (__u32)(va >> 32));
}

#endif /* _SNAA_WCUBUF_H */
