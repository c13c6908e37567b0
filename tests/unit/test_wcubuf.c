// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Host unit tests of the WCU.BUF protocol source that the kernel's
 * receiver and libwcubuf share (drivers/infiniband/sw/snaa/
 * snaa_wcubuf_proto.c): ring geometry, the write window with wrap-around
 * of the 64-bit VA, the event bits of a frame's first packet, the packet
 * length rule, frame VAs and ring offsets, and the ACK/NACK bytes.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "snaa_wcubuf_proto.h"
#include "ktap.h"

#define F	4096u
#define R	(8ull * F)
#define EV(b)	SNAA_WCU_EV(b)

static const char *where_str(enum snaa_wcu_where w)
{
	return w == SNAA_WCU_IN_WINDOW ? "window" :
	       w == SNAA_WCU_CONSUMED ? "consumed" : "outside";
}

static void test_geometry(void)
{
	result(snaa_wcu_geom_ok(R, F, 1ull << 40),
		    "8 frames of 4096 at 2^40: accepted");
	result(snaa_wcu_geom_ok(3 * 65600ull, 65600, 64),
		    "3 frames of 65600 (not a power of two): accepted");
	result(!snaa_wcu_geom_ok(F, F, 1ull << 40),
		    "one-frame ring: refused (the window would be empty)");
	result(!snaa_wcu_geom_ok(R, 100, 1ull << 40),
		    "F not a multiple of 64: refused");
	result(!snaa_wcu_geom_ok(R + 64, F, 1ull << 40),
		    "R not a multiple of F: refused");
	result(!snaa_wcu_geom_ok(R, F, 0),
		    "VA base 0 (the no-SOF VA): refused");
	result(!snaa_wcu_geom_ok(R, F, 32),
		    "VA base not 64-byte aligned: refused");
	result(!snaa_wcu_geom_ok(65537ull * 64, 64, 64) &&
		       snaa_wcu_geom_ok(65536ull * 64, 64, 64),
		    "at most 65536 frames");
	result(!snaa_wcu_geom_ok(2ull << 40, 1u << 20, 64) &&
		       !snaa_wcu_geom_ok(4ull << 31, (1u << 31) + 64, 64),
		    "R above 2^40 or F above 2^31: refused");
	result(!snaa_wcu_geom_ok(R, 0, 64), "F 0: refused");
}

struct where_case {
	uint64_t rp, va;
	enum snaa_wcu_where want;
	const char *what;
};

static void test_window(void)
{
	const uint64_t top = UINT64_MAX - F + 1;	/* 2^64 - F */
	const struct where_case c[] = {
		{ 1ull << 40, 1ull << 40, SNAA_WCU_IN_WINDOW, "va == rp" },
		{ 1ull << 40, (1ull << 40) + R - F - 64, SNAA_WCU_IN_WINDOW,
		  "last byte before rp + R - F" },
		{ 1ull << 40, (1ull << 40) + R - F, SNAA_WCU_OUTSIDE,
		  "rp + R - F (the slot of rp - F)" },
		{ 1ull << 40, (1ull << 40) - F, SNAA_WCU_CONSUMED,
		  "rp - F" },
		{ 1ull << 40, (1ull << 40) - R, SNAA_WCU_CONSUMED,
		  "rp - R" },
		{ 1ull << 40, (1ull << 40) - R - F, SNAA_WCU_OUTSIDE,
		  "rp - R - F" },
		{ 1ull << 40, 0, SNAA_WCU_OUTSIDE, "VA 0 far behind" },
		{ top, 0, SNAA_WCU_IN_WINDOW, "rp 2^64 - F, VA 0 (wrapped)" },
		{ top, 5ull * F, SNAA_WCU_IN_WINDOW,
		  "rp 2^64 - F, VA 5F (wrapped, last frame of the window)" },
		{ top, 6ull * F, SNAA_WCU_OUTSIDE,
		  "rp 2^64 - F, VA 6F (wrapped, beyond the window)" },
		{ 0, top, SNAA_WCU_CONSUMED,
		  "rp 0, VA 2^64 - F (behind, across the wrap)" },
		{ 2ull * F, top, SNAA_WCU_CONSUMED,
		  "rp 2F, VA 2^64 - F (3 frames behind)" },
		{ 0, UINT64_MAX - R + 1 - F, SNAA_WCU_OUTSIDE,
		  "rp 0, VA 2^64 - R - F" },
	};
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		enum snaa_wcu_where w = snaa_wcu_where(c[i].rp, R, F, c[i].va);

		result(w == c[i].want, "window: %s -> %s (got %s)",
			    c[i].what, where_str(c[i].want), where_str(w));
	}
}

/* The window in libwcubuf's terms: rp not a frame start, WF = 65600. */
static void test_window_worker(void)
{
	const uint64_t WR = 16 * 65600, WF = 65600, top = ~0ULL - 63;

#define IN(va, rp, r, f)	(snaa_wcu_where(rp, r, f, va) == SNAA_WCU_IN_WINDOW)
	result(IN(1000, 1000, WR, WF), "va = rp is inside");
	result(IN(1000 + WR - WF - 64, 1000, WR, WF),
		    "the last 64 bytes before rp + R - F are inside");
	result(!IN(1000 + WR - WF, 1000, WR, WF),
		    "rp + R - F is outside (one frame kept free)");
	result(!IN(1000 - 64, 1000, WR, WF), "below rp is outside");
	result(IN(top + 64 + WF, top, WR, WF),
		    "wrap: rp at 2^64 - 64, va past 2^64 is inside");
	result(!IN(top - WF, top, WR, WF),
		    "wrap: va below rp near 2^64 is outside");
	result(!IN(top + WR, top, WR, WF),
		    "wrap: va = rp + R past 2^64 is outside");
	result(!IN(5, 5, WF, WF) && !IN(5, 5, 64, WF),
		    "a ring of one frame (or less) has no window");
}

static void test_frames(void)
{
	const uint64_t WR = 16 * 65600, WF = 65600, top = ~0ULL - 63;

	result(snaa_wcu_ring_offset(0x1000 + 3 * WR + 128, 0x1000,
					    WR) == 128,
		    "ring offset: VA modulo R from va_base");
	/* (va - va_base) is taken modulo 2^64 first: below va_base is far
	 * ahead, which lands at the ring's end when R divides 2^64 */
	result(snaa_wcu_ring_offset(5 * 4096 - 2 * 4096, 5 * 4096,
					    1 << 20) == (1 << 20) - 2 * 4096,
		    "ring offset: a VA below va_base wraps to the ring's end");
	result(snaa_wcu_ring_offset(snaa_wcu_frame_va(top - 63, WF, 3),
					    top - 63, WR) == 3 * WF,
		    "ring offset across the 2^64 wrap");
	result(snaa_wcu_frame_index(snaa_wcu_frame_va(~0ULL - WF + 1,
							      WF, 7),
					    ~0ULL - WF + 1, WF) == 7,
		    "frame index across the 2^64 wrap");
	result(snaa_wcu_frame_index(WF * 9 + 64, WF * 2, WF) == -1,
		    "a VA inside a frame is no frame start");
	result(snaa_wcu_frame_index(5, 5, 0) == -1,
		    "frame size 0 refused");
	result(snaa_wcu_frame_index(1ull << 63, 0, 1) == -1 &&
		       snaa_wcu_frame_index((1ull << 63) - 1, 0, 1) ==
		       INT64_MAX,
		    "frame numbers up to 2^63 - 1, not beyond");
}

static void test_start_events(void)
{
	const uint64_t rp = 1ull << 40;
	enum snaa_wcu_where w;
	uint32_t ev;

	ev = snaa_wcu_start_events(rp, R, F, rp + F, F, 7, 7, &w);
	result(ev == 0 && w == SNAA_WCU_IN_WINDOW,
		    "good frame: no event (0x%03x)", ev);
	ev = snaa_wcu_start_events(rp, R, F, rp + F, F, 8, 7, &w);
	result(ev == EV(RKEY), "other R_Key: bit 3 (0x%03x)", ev);
	ev = snaa_wcu_start_events(rp, R, F, rp + 1, F, 7, 7, &w);
	result(ev == EV(VA), "VA + 1: bit 8 (0x%03x)", ev);
	ev = snaa_wcu_start_events(rp, R, F, rp + 64, F, 7, 7, &w);
	result(ev == EV(VA), "VA + 64, not a frame start: bit 8 (0x%03x)",
		    ev);
	ev = snaa_wcu_start_events(rp, R, F, rp - F + 64, F, 7, 7, &w);
	result(ev == EV(VA) && w == SNAA_WCU_CONSUMED,
		    "behind rp but not a frame start: bit 8 (0x%03x)", ev);
	ev = snaa_wcu_start_events(rp, R, F, rp + R, F, 7, 7, &w);
	result(ev == EV(WINDOW), "rp + R: bit 2 (0x%03x)", ev);
	ev = snaa_wcu_start_events(rp, R, F, rp, F + 64, 7, 7, &w);
	result(ev == EV(FRAME_LEN), "DMA length F + 64: bit 4 (0x%03x)",
		    ev);
	ev = snaa_wcu_start_events(rp, R, F, rp, 0, 7, 7, &w);
	result(ev == EV(FRAME_LEN), "DMA length 0: bit 4 (0x%03x)", ev);
	ev = snaa_wcu_start_events(rp, R, F, 3, 0, 8, 7, &w);
	result(ev == (EV(RKEY) | EV(VA) | EV(WINDOW) | EV(FRAME_LEN)),
		    "everything wrong: bits 2, 3, 4 and 8 together (0x%03x)",
		    ev);
	ev = snaa_wcu_start_events(rp, R, F, rp - F, F, 7, 7, &w);
	result(ev == 0 && w == SNAA_WCU_CONSUMED,
		    "consumed frame: no event, consumed (0x%03x)", ev);
}

static void test_packet_len(void)
{
	static const struct { uint32_t len; int bad; } c[] = {
		{ 0, 1 }, { 32, 1 }, { 63, 1 }, { 64, 0 }, { 100, 1 },
		{ 128, 0 }, { 4032, 0 }, { 4096, 0 }, { 4097, 1 },
		{ 4160, 1 },
	};
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		result(snaa_wcu_packet_len_bad(c[i].len) == c[i].bad,
			    "packet of %u bytes: %s", c[i].len,
			    c[i].bad ? "bit 5" : "fine");
}

static void test_ack_bytes(void)
{
	static const uint8_t want_nack[16] = {
		0x01, 0x00, 0x00, 0x00,  0x84, 0x02, 0x00, 0x00,
		0x40, 0x30, 0x20, 0x10,  0x04, 0x03, 0x02, 0x01,
	};
	static const uint8_t want_ack[16] = {
		0, 0, 0, 0,  0, 0, 0, 0,  0x00, 0xf0, 0xff, 0xff,
		0xff, 0xff, 0xff, 0xff,
	};
	__u32 type, events;
	__u64 va;
	uint8_t p[16];

	snaa_wcu_ack_put(p, SNAA_WCUBUF_NACK, EV(WINDOW) | EV(EBP) | EV(NO_SOF),
			 0x0102030410203040ull);
	result(!memcmp(p, want_nack, 16),
		    "NACK window + bad packet + no SOF at 0x0102030410203040: exact little-endian bytes");
	snaa_wcu_ack_put(p, SNAA_WCUBUF_ACK, 0, UINT64_MAX - F + 1);
	result(!memcmp(p, want_ack, 16),
		    "ACK at 2^64 - 4096: exact bytes");
	snaa_wcu_ack_get(want_nack, &type, &events, &va);
	result(type == SNAA_WCUBUF_NACK &&
		       events == (EV(WINDOW) | EV(EBP) | EV(NO_SOF)) &&
		       va == 0x0102030410203040ull,
		    "the NACK's bytes decode back");
	memcpy(p, want_ack, 16);
	p[3] = 1;
	snaa_wcu_ack_get(p, &type, &events, &va);
	result(type == 0x01000000 && va == UINT64_MAX - F + 1,
		    "type word read little-endian, whatever it holds");
}

int main(void)
{

	ktap_header("wcubuf");
	test_geometry();
	test_window();
	test_window_worker();
	test_frames();
	test_start_events();
	test_packet_len();
	test_ack_bytes();
	return ktap_finish();
}
