// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* MRSP codec, see naaice_mrsp.h. */
#include <string.h>

#include "naaice.h"
#include "naaice_mrsp.h"

static void mrsp_put_be(uint8_t *p, uint64_t v, unsigned int n)
{
	while (n--) {
		p[n] = (uint8_t)v;
		v >>= 8;
	}
}

static uint64_t mrsp_get_be(const uint8_t *p, unsigned int n)
{
	uint64_t v = 0;

	for (unsigned int i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

int naaice_mrsp_encode(const struct naaice_mrsp_msg *m, uint8_t *buf,
		       size_t len)
{
	size_t need, elen;
	uint8_t *p;

	switch (m->type) {
	case MSG_MR_ERR:
		if (len < NAAICE_MRSP_ERR_LEN)
			return -1;
		memset(buf, 0, NAAICE_MRSP_ERR_LEN);
		buf[0] = MSG_MR_ERR;
		buf[1] = m->code;
		return NAAICE_MRSP_ERR_LEN;
	case MSG_MR_AAR:
		elen = NAAICE_MRSP_AAR_LEN;
		break;
	case MSG_MR_A:
		elen = NAAICE_MRSP_A_LEN;
		break;
	default:
		return -1;
	}
	need = NAAICE_MRSP_HDR_LEN + m->count * elen;
	if (len < need)
		return -1;
	buf[0] = m->type;
	buf[1] = m->count;
	buf[2] = 0;
	buf[3] = 0;
	p = buf + NAAICE_MRSP_HDR_LEN;
	for (unsigned int i = 0; i < m->count; i++, p += elen) {
		const struct naaice_mrsp_entry *e = &m->e[i];
		uint8_t *q = p;

		if (m->type == MSG_MR_AAR) {
			q[0] = e->flags;
			mrsp_put_be(q + 1, e->fpga_addr, 7);
			q += 8;
		}
		mrsp_put_be(q, e->addr, 8);
		mrsp_put_be(q + 8, e->rkey, 4);
		mrsp_put_be(q + 12, e->size, 4);
	}
	return (int)need;
}

int naaice_mrsp_decode(const uint8_t *buf, size_t len,
		       struct naaice_mrsp_msg *m)
{
	size_t elen;
	const uint8_t *p;

	memset(m, 0, sizeof(*m));
	/* The error message is 4 bytes; only its first two carry meaning. */
	if (len < 2)
		return -1;
	m->type = buf[0];
	switch (m->type) {
	case MSG_MR_ERR:
		m->code = buf[1];
		return 0;
	case MSG_MR_AAR:
		elen = NAAICE_MRSP_AAR_LEN;
		break;
	case MSG_MR_A:
		elen = NAAICE_MRSP_A_LEN;
		break;
	default:
		return -1;
	}
	if (len < NAAICE_MRSP_HDR_LEN)
		return -1;
	m->count = buf[1];
	if (len < NAAICE_MRSP_HDR_LEN + m->count * elen)
		return -1;
	p = buf + NAAICE_MRSP_HDR_LEN;
	for (unsigned int i = 0; i < m->count; i++, p += elen) {
		struct naaice_mrsp_entry *e = &m->e[i];
		const uint8_t *q = p;

		if (m->type == MSG_MR_AAR) {
			e->flags = q[0];
			e->fpga_addr = mrsp_get_be(q + 1, 7);
			q += 8;
		}
		e->addr = mrsp_get_be(q, 8);
		e->rkey = (uint32_t)mrsp_get_be(q + 8, 4);
		e->size = (uint32_t)mrsp_get_be(q + 12, 4);
	}
	return 0;
}
