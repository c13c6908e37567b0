/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The WCU.BUF protocol (seed 000) as both ends compute it: ring
 * geometry, the write window, the checks of a frame's first packet,
 * the packet length rule, frame VAs and the 16-byte ACK/NACK.  Pure C,
 * like snaa_wire.c: snaa_wcubuf_proto.c is part of snaa.ko (the
 * receiver, snaa_wcubuf.c) and of libwcubuf (the worker and the
 * emulator, userspace/libwcubuf/), and tests/unit/test_wcubuf.c tests it.
 *
 * The ring of R bytes is divided into R / F slots of F bytes.  Senders
 * see it as the whole 64-bit VA space: frame starts are va_base + k * F,
 * k counting on forever, modulo 2^64, and VA v lands at ring offset
 * (v - va_base) mod R.  The receiver computes everything relative to
 * the read pointer rp (itself va_base + j * F), never as an absolute
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
#ifndef _SNAA_WCUBUF_PROTO_H
#define _SNAA_WCUBUF_PROTO_H

#include <rdma/snaa-abi.h>

#include "snaa_wire.h"

#define SNAA_WCU_EV(bit)	(1U << SNAA_WCUBUF_EV_##bit)
/* Events the receive path detects; the others come from fault injection. */
#define SNAA_WCU_EV_ALL		((1U << SNAA_WCUBUF_EV_NUM) - 1)

#define SNAA_WCU_PKT_MIN	64	/* payload bytes of one packet */
#define SNAA_WCU_PKT_MAX	4096
#define SNAA_WCU_ALIGN		64	/* frame VAs and sizes */

enum snaa_wcu_where {
	SNAA_WCU_IN_WINDOW,
	SNAA_WCU_CONSUMED,
	SNAA_WCU_OUTSIDE,
};

/* Is this a usable ring geometry (the limits of snaa-abi.h)? */
int snaa_wcu_geom_ok(__u64 ring_size, __u32 frame_size, __u64 va_base);

/* Where a frame starting at @va lies, for read pointer @rp. */
enum snaa_wcu_where snaa_wcu_where(__u64 rp, __u64 ring_size,
				   __u64 frame_size, __u64 va);

/* The event bits a frame's first packet shows, 0 if it may be placed. */
__u32 snaa_wcu_start_events(__u64 rp, __u64 ring_size, __u32 frame_size,
			    __u64 va, __u64 dma_len, __u32 rkey,
			    __u32 ring_rkey, enum snaa_wcu_where *where);

/* Packet length error (bit 5): payload < 64, not a multiple of 64, > 4096 */
static inline int snaa_wcu_packet_len_bad(__u32 len)
{
	return len < SNAA_WCU_PKT_MIN || len % SNAA_WCU_ALIGN ||
	       len > SNAA_WCU_PKT_MAX;
}

/* VA of frame @k: va_base + k * F, modulo 2^64. */
static inline __u64 snaa_wcu_frame_va(__u64 va_base, __u64 frame_size,
				      __u64 k)
{
	return va_base + k * frame_size;
}

/* The frame number of @va, or -1 if @va is no frame start. */
__s64 snaa_wcu_frame_index(__u64 va, __u64 va_base, __u64 frame_size);

/* Where VA @va lands in the ring: (@va - @va_base) mod R. */
__u64 snaa_wcu_ring_offset(__u64 va, __u64 va_base, __u64 ring_size);

/* The 16-byte ACK/NACK message (Table 3.5, little-endian words). */
void snaa_wcu_ack_put(__u8 *p, __u32 type, __u32 events, __u64 va);
void snaa_wcu_ack_get(const __u8 *p, __u32 *type, __u32 *events, __u64 *va);

#endif /* _SNAA_WCUBUF_PROTO_H */
