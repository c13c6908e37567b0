// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The WCU.BUF protocol arithmetic and ACK/NACK codec shared by the
 * kernel's receiver (snaa_wcubuf.c) and libwcubuf: snaa_wcubuf_proto.h.
 */

#include "snaa_wcubuf_proto.h"

/**
 * snaa_wcu_geom_ok() - is this a usable ring geometry?
 * @ring_size: R
 * @frame_size: F
 * @va_base: the sender VA of ring offset 0
 *
 * F a non-zero multiple of 64 up to %SNAA_WCUBUF_MAX_FRAME; R a multiple
 * of F, at least two frames (the window of one frame would be empty), at
 * most %SNAA_WCUBUF_MAX_SLOTS frames and %SNAA_WCUBUF_MAX_RING bytes;
 * @va_base non-zero (VA 0 means "no start of frame") and 64-byte aligned.
 *
 * Return: 1 if usable, 0 if not.
 */
int snaa_wcu_geom_ok(__u64 ring_size, __u32 frame_size, __u64 va_base)
{
	return frame_size && !(frame_size % SNAA_WCU_ALIGN) &&
	       frame_size <= SNAA_WCUBUF_MAX_FRAME &&
	       ring_size <= SNAA_WCUBUF_MAX_RING &&
	       !snaa_mod_u32(ring_size, frame_size) &&
	       ring_size >= 2ULL * frame_size &&
	       ring_size <= (__u64)SNAA_WCUBUF_MAX_SLOTS * frame_size &&
	       va_base && !(va_base % SNAA_WCU_ALIGN);
}

/**
 * snaa_wcu_where() - where a frame lies relative to the read pointer
 * @rp: the read pointer (VA)
 * @ring_size: R
 * @frame_size: F
 * @va: the VA the frame starts at
 *
 * All modulo 2^64.  A ring of one frame or less has no window.
 *
 * Return: %SNAA_WCU_IN_WINDOW for @va in [@rp, @rp + R - F),
 * %SNAA_WCU_CONSUMED for @va in [@rp - R, @rp), else %SNAA_WCU_OUTSIDE.
 */
enum snaa_wcu_where snaa_wcu_where(__u64 rp, __u64 ring_size,
				   __u64 frame_size, __u64 va)
{
	if (ring_size > frame_size && va - rp < ring_size - frame_size)
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
__u32 snaa_wcu_start_events(__u64 rp, __u64 ring_size, __u32 frame_size,
			    __u64 va, __u64 dma_len, __u32 rkey,
			    __u32 ring_rkey, enum snaa_wcu_where *where)
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

/**
 * snaa_wcu_frame_index() - the frame number of a VA
 * @va: a VA
 * @va_base: the VA of frame 0
 * @frame_size: F
 *
 * Return: k with @va == @va_base + k * F (mod 2^64), or -1 if @va is no
 * frame start, F is 0 or k does not fit in 63 bits.
 */
__s64 snaa_wcu_frame_index(__u64 va, __u64 va_base, __u64 frame_size)
{
	__u64 k, rem;

	if (!frame_size)
		return -1;
	k = snaa_div_u64_rem(va - va_base, frame_size, &rem);
	if (rem || k > (__u64)((~0ULL) >> 1))
		return -1;
	return (__s64)k;
}

/**
 * snaa_wcu_ring_offset() - where a VA lands in the ring
 * @va: a VA
 * @va_base: the VA of ring offset 0
 * @ring_size: R, not 0
 *
 * (@va - @va_base) is taken modulo 2^64 first: a VA below @va_base is
 * far ahead of it.
 *
 * Return: (@va - @va_base) mod R.
 */
__u64 snaa_wcu_ring_offset(__u64 va, __u64 va_base, __u64 ring_size)
{
	__u64 off;

	snaa_div_u64_rem(va - va_base, ring_size, &off);
	return off;
}

/**
 * snaa_wcu_ack_put() - encode an ACK or NACK
 * @p: 16 bytes (%SNAA_WCUBUF_ACK_BYTES)
 * @type: %SNAA_WCUBUF_ACK or %SNAA_WCUBUF_NACK
 * @events: the event bits (Table 3.7)
 * @va: the frame's VA, 0 for "no start of frame"
 *
 * Four little-endian 32-bit words: type, events, VA[31:0], VA[63:32].
 */
void snaa_wcu_ack_put(__u8 *p, __u32 type, __u32 events, __u64 va)
{
	snaa_put_le32(p, type);
	snaa_put_le32(p + 4, events);
	snaa_put_le32(p + 8, (__u32)va);
	snaa_put_le32(p + 12, (__u32)(va >> 32));
}

/**
 * snaa_wcu_ack_get() - decode an ACK or NACK
 * @p: 16 bytes (%SNAA_WCUBUF_ACK_BYTES)
 * @type: gets the type word, whatever it holds
 * @events: gets the event bits
 * @va: gets the VA
 */
void snaa_wcu_ack_get(const __u8 *p, __u32 *type, __u32 *events, __u64 *va)
{
	*type = snaa_get_le32(p);
	*events = snaa_get_le32(p + 4);
	*va = snaa_get_le32(p + 8) | (__u64)snaa_get_le32(p + 12) << 32;
}
