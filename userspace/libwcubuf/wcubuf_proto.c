// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Status and ACK/NACK codecs, event names, window helpers: wcubuf.h.
 * The ACK/NACK layout and the window arithmetic are the kernel's
 * (drivers/infiniband/sw/snaa/snaa_wcubuf_proto.c), with this library's
 * length and type checks around them.
 */
#include <stdio.h>
#include <string.h>

#include "wcubuf.h"
#include "snaa_wcubuf_proto.h"

static const char *const method_names[WCUBUF_METHOD_NUM] = {
	"STAT_REQ", "STAT_RES", "STAT_TERM", "STAT_DOWN",
	"DATA_REQ", "DATA_RES", "DATA_TERM", "DATA_DOWN",
};

const char *wcubuf_method_name(unsigned int method)
{
	static char buf[24];

	if (method < WCUBUF_METHOD_NUM)
		return method_names[method];
	snprintf(buf, sizeof(buf), "method %u", method);
	return buf;
}

struct wcubuf_status wcubuf_status_make(enum wcubuf_method m)
{
	struct wcubuf_status s;

	memset(&s, 0, sizeof(s));
	s.method = (uint8_t)m;
	s.major = WCUBUF_VERSION_MAJOR;
	s.minor = WCUBUF_VERSION_MINOR;
	return s;
}

int wcubuf_status_encode(const struct wcubuf_status *s, uint8_t *buf,
			 size_t len)
{
	if (len < WCUBUF_STATUS_LEN)
		return WCUBUF_ESHORT;
	buf[0] = s->method;
	buf[1] = s->reserved;
	buf[2] = s->minor;
	buf[3] = s->major;
	snaa_put_le32(buf + 4, s->lid);
	snaa_put_le32(buf + 8, s->qpn);
	snaa_put_le32(buf + 12, s->qkey);
	snaa_put_le32(buf + 16, (uint32_t)s->va);
	snaa_put_le32(buf + 20, (uint32_t)(s->va >> 32));
	snaa_put_le32(buf + 24, s->rkey);
	return WCUBUF_STATUS_LEN;
}

int wcubuf_status_decode(const uint8_t *buf, size_t len,
			 struct wcubuf_status *s)
{
	memset(s, 0, sizeof(*s));
	if (len < WCUBUF_STATUS_LEN)
		return WCUBUF_ESHORT;
	s->method = buf[0];
	s->reserved = buf[1];
	s->minor = buf[2];
	s->major = buf[3];
	s->lid = snaa_get_le32(buf + 4);
	s->qpn = snaa_get_le32(buf + 8);
	s->qkey = snaa_get_le32(buf + 12);
	s->va = snaa_get_le32(buf + 16) |
		(uint64_t)snaa_get_le32(buf + 20) << 32;
	s->rkey = snaa_get_le32(buf + 24);
	return s->method < WCUBUF_METHOD_NUM ? 0 : WCUBUF_EMETHOD;
}

int wcubuf_status_answers(const struct wcubuf_status *req,
			  const struct wcubuf_status *res)
{
	/* Every request method is even; its answer is the next one. */
	if ((req->method & 1) || res->method != req->method + 1 ||
	    res->qpn != req->qpn)
		return 0;
	/* DATA_RES uses the LID word for the emulator's data QPN. */
	if (res->method != WCUBUF_DATA_RES && res->lid != req->lid)
		return 0;
	/* DATA_RES echoes QPND: an answer to an earlier data QP's request
	 * is not ours. */
	if (res->method == WCUBUF_DATA_RES && res->qkey != req->qkey)
		return 0;
	if (res->major != WCUBUF_VERSION_MAJOR)
		return WCUBUF_EVERSION;
	return 1;
}

int wcubuf_grh_gids(const uint8_t grh[WCUBUF_GRH_LEN], uint8_t sgid[16],
		    uint8_t dgid[16])
{
	static const uint8_t v4map[12] = { [10] = 0xff, [11] = 0xff };
	const uint8_t *ip4 = grh + 20;

	/* IPv4 first: then bytes 0..19 are zero, which is no IPv6 header */
	if ((ip4[0] >> 4) == 4 && (ip4[0] & 0xf) == 5) {
		memcpy(sgid, v4map, 12);
		memcpy(sgid + 12, ip4 + 12, 4);
		memcpy(dgid, v4map, 12);
		memcpy(dgid + 12, ip4 + 16, 4);
		return 0;
	}
	if ((grh[0] >> 4) == 6) {
		memcpy(sgid, grh + 8, 16);
		memcpy(dgid, grh + 24, 16);
		return 0;
	}
	return -1;
}

static const char *const event_names[WCUBUF_EV_NUM] = {
	[WCUBUF_EV_SEQUENCE]	= "sequence",
	[WCUBUF_EV_PARITY]	= "parity",
	[WCUBUF_EV_WINDOW]	= "window",
	[WCUBUF_EV_RKEY]	= "rkey",
	[WCUBUF_EV_FRAME_LEN]	= "frame_len",
	[WCUBUF_EV_PACKET_LEN]	= "packet_len",
	[WCUBUF_EV_EBF]		= "ebf",
	[WCUBUF_EV_EBP]		= "ebp",
	[WCUBUF_EV_VA]		= "va",
	[WCUBUF_EV_NO_SOF]	= "no_sof",
	[WCUBUF_EV_ECC_CORR]	= "ecc_corr",
	[WCUBUF_EV_ECC_UNCORR]	= "ecc_uncorr",
};

const char *wcubuf_event_name(unsigned int bit)
{
	return bit < WCUBUF_EV_NUM ? event_names[bit] : "unknown";
}

char *wcubuf_events_str(uint32_t events, char *buf, size_t len)
{
	size_t n = 0;

	if (!len)
		return buf;
	buf[0] = 0;
	if (!events) {
		snprintf(buf, len, "none");
		return buf;
	}
	for (unsigned int b = 0; b < 32; b++) {
		int w;

		if (!(events & 1u << b))
			continue;
		if (b < WCUBUF_EV_NUM)
			w = snprintf(buf + n, len - n, "%s%s", n ? "+" : "",
				     event_names[b]);
		else
			w = snprintf(buf + n, len - n, "%sbit%u", n ? "+" : "",
				     b);
		if (w < 0 || (size_t)w >= len - n)
			break;
		n += (size_t)w;
	}
	return buf;
}

int wcubuf_ack_encode(const struct wcubuf_ack *a, uint8_t *buf, size_t len)
{
	if (len < WCUBUF_ACK_LEN)
		return WCUBUF_ESHORT;
	snaa_wcu_ack_put(buf, a->type, a->events, a->va);
	return WCUBUF_ACK_LEN;
}

int wcubuf_ack_decode(const uint8_t *buf, size_t len, struct wcubuf_ack *a)
{
	__u32 type, events;
	__u64 va;

	memset(a, 0, sizeof(*a));
	if (len < WCUBUF_ACK_LEN)
		return WCUBUF_ESHORT;
	snaa_wcu_ack_get(buf, &type, &events, &va);
	a->type = type;
	a->events = events;
	a->va = va;
	return a->type <= WCUBUF_NACK ? 0 : WCUBUF_EMETHOD;
}

bool wcubuf_in_window(uint64_t va, uint64_t rp, uint64_t ring, uint64_t frame)
{
	return snaa_wcu_where(rp, ring, frame, va) == SNAA_WCU_IN_WINDOW;
}

uint64_t wcubuf_ring_offset(uint64_t va, uint64_t va_base, uint64_t ring)
{
	return snaa_wcu_ring_offset(va, va_base, ring);
}

uint64_t wcubuf_frame_va(uint64_t va_base, uint64_t frame, uint64_t k)
{
	return snaa_wcu_frame_va(va_base, frame, k);
}

int64_t wcubuf_frame_index(uint64_t va, uint64_t va_base, uint64_t frame)
{
	return snaa_wcu_frame_index(va, va_base, frame);
}

uint64_t wcubuf_va_offs(unsigned int slot, uint32_t frame)
{
	uint64_t v = (uint64_t)(slot + 1) << 40;

	return frame ? v - v % frame : v;
}
