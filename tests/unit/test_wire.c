// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Host unit tests of the wire-format unit, snaa_wire.c and snaa_wire.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snaa_wire.h"
#include "ktap.h"
#include "crc32_le.h"
#include "hexline.h"

#ifndef SNAA_VECTOR_DIR
#define SNAA_VECTOR_DIR "vectors"
#endif

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/*
 * A group of checks reported as one KTAP line; each failing check
 * prints a "# " diagnostic.
 */
struct grp {
	unsigned int n;
	unsigned int bad;
};

static void gchk(struct grp *g, int ok, const char *fmt, ...)
{
	va_list ap;

	g->n++;
	if (ok)
		return;
	g->bad++;
	if (g->bad > 20)
		return;
	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static void gend(struct grp *g, const char *name)
{
	result(g->n && !g->bad, "%s (%u checks)", name, g->n);
	g->n = 0;
	g->bad = 0;
}

#define GEQ(g, got, want)						\
	do {								\
		unsigned long long _g = (got), _w = (want);		\
		gchk(g, _g == _w, "%s:%d: %s = 0x%llx, want 0x%llx",	\
		     __FILE__, __LINE__, #got, _g, _w);			\
	} while (0)

static int bytes_eq(struct grp *g, const __u8 *got, const __u8 *want,
		    size_t n, const char *what)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (got[i] != want[i]) {
			gchk(g, 0, "%s: byte %zu = 0x%02x, want 0x%02x",
			     what, i, got[i], want[i]);
			return 0;
		}
	gchk(g, 1, "%s", what);
	return 1;
}

static const char *reason(int rc)
{
	return snaa_drop_reason_name(rc);
}

#define GRC(g, got, want)						\
	do {								\
		int _g = (got), _w = (want);				\
		gchk(g, _g == _w, "%s:%d: %s = %d (%s), want %d (%s)",	\
		     __FILE__, __LINE__, #got, _g, reason(_g), _w,	\
		     reason(_w));					\
	} while (0)

/* ------------------------------------------------------------------ */

static void test_mtu(void)
{
	static const struct {
		unsigned int netdev_mtu;
		unsigned int ib_mtu;
	} cases[] = {
		{ 0, 0 },	/* nothing fits */
		{ 339, 0 },	/* 256 + 84 - 1 */
		{ 340, 256 },	/* 256 + 84 */
		{ 595, 256 },
		{ 596, 512 },
		{ 1107, 512 },
		{ 1108, 1024 },
		{ 1500, 1024 },	/* standard Ethernet */
		{ 2131, 1024 },
		{ 2132, 2048 },
		{ 4000, 2048 },
		{ 4179, 2048 },
		{ 4180, 4096 },	/* 4096 + 84 */
		{ 9000, 4096 },	/* jumbo frames */
		{ 65535, 4096 },
		{ 0xffffffffu, 4096 },
	};
	char name[64];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		snprintf(name, sizeof(name), "mtu_from_netdev(%u) == %u",
			 cases[i].netdev_mtu, cases[i].ib_mtu);
		KTAP_EQ(snaa_mtu_from_netdev(cases[i].netdev_mtu),
			cases[i].ib_mtu, name);
	}
}

/* ------------------------------------------------------------------ */

static void test_byteorder(void)
{
	static const __u8 be16[] = { 0x12, 0x34 };
	static const __u8 be24[] = { 0xab, 0xcd, 0xef, 0x5a };
	static const __u8 be32[] = { 0xde, 0xad, 0xbe, 0xef };
	static const __u8 be64[] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	static const __u8 le32[] = { 0x44, 0x33, 0x22, 0x11 };
	struct grp g = { 0 };
	__u8 b[8];

	memset(b, 0x5a, sizeof(b));
	snaa_put_be16(b, 0x1234);
	bytes_eq(&g, b, be16, 2, "put_be16");
	GEQ(&g, snaa_get_be16(be16), 0x1234);
	snaa_put_be24(b, 0xffabcdef);	/* only 24 bits are written */
	bytes_eq(&g, b, be24, 4, "put_be24");
	GEQ(&g, snaa_get_be24(be24), 0xabcdef);
	snaa_put_be32(b, 0xdeadbeef);
	bytes_eq(&g, b, be32, 4, "put_be32");
	GEQ(&g, snaa_get_be32(be32), 0xdeadbeef);
	snaa_put_be64(b, 0x0102030405060708ull);
	bytes_eq(&g, b, be64, 8, "put_be64");
	GEQ(&g, snaa_get_be64(be64), 0x0102030405060708ull);
	snaa_put_le32(b, 0x11223344);
	bytes_eq(&g, b, le32, 4, "put_le32");
	GEQ(&g, snaa_get_le32(le32), 0x11223344);
	gend(&g, "byte order helpers");
}

/* ------------------------------------------------------------------ */

static __u32 lcg_state = 12345;

static __u32 lcg(void)
{
	lcg_state = lcg_state * 1103515245u + 12345u;
	return lcg_state >> 1;
}

static void test_bth(void)
{
	/* UC RDMA WRITE LAST with immediate: SE, pad 2, AckReq */
	static const __u8 wire[12] = {
		0x29, 0xa0, 0xff, 0xff, 0x00, 0x12, 0x34, 0x56,
		0x80, 0xab, 0xcd, 0xef,
	};
	static const __u8 ones[12] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		0xff, 0xff, 0xff, 0xff,
	};
	struct snaa_bth_info b, c;
	struct grp g = { 0 };
	__u8 buf[12];
	int i;

	snaa_bth_get(wire, &b);
	GEQ(&g, b.opcode, 0x29);
	GEQ(&g, b.se, 1);
	GEQ(&g, b.mig, 0);
	GEQ(&g, b.pad, 2);
	GEQ(&g, b.tver, 0);
	GEQ(&g, b.pkey, 0xffff);
	GEQ(&g, b.resv8a, 0);
	GEQ(&g, b.dqpn, 0x123456);
	GEQ(&g, b.ack_req, 1);
	GEQ(&g, b.resv7, 0);
	GEQ(&g, b.psn, 0xabcdef);
	GEQ(&g, snaa_bth_opcode(wire), 0x29);
	GEQ(&g, snaa_bth_se(wire), 1);
	GEQ(&g, snaa_bth_pad(wire), 2);
	GEQ(&g, snaa_bth_tver(wire), 0);
	GEQ(&g, snaa_bth_pkey(wire), 0xffff);
	GEQ(&g, snaa_bth_dqpn(wire), 0x123456);
	GEQ(&g, snaa_bth_ack_req(wire), 1);
	GEQ(&g, snaa_bth_psn(wire), 0xabcdef);
	memset(buf, 0x77, sizeof(buf));
	snaa_bth_set(buf, &b);
	bytes_eq(&g, buf, wire, 12, "bth_set(bth_get(wire)) == wire");

	/* every bit set, and M/TVer/resv fields in place */
	c = (struct snaa_bth_info){
		.opcode = 0xff, .se = 1, .mig = 1, .pad = 3, .tver = 15,
		.pkey = 0xffff, .resv8a = 0xff, .dqpn = 0xffffff,
		.ack_req = 1, .resv7 = 0x7f, .psn = 0xffffff,
	};
	snaa_bth_set(buf, &c);
	bytes_eq(&g, buf, ones, 12, "bth_set(all ones)");
	snaa_bth_get(ones, &b);
	GEQ(&g, b.mig, 1);
	GEQ(&g, b.tver, 15);
	GEQ(&g, b.resv8a, 0xff);
	GEQ(&g, b.resv7, 0x7f);

	/* out-of-range values are truncated to the field */
	c = (struct snaa_bth_info){
		.opcode = 0x24, .se = 7, .pad = 7, .tver = 0x1f,
		.pkey = 0x8001, .dqpn = 0x1234567, .ack_req = 2,
		.resv7 = 0xff, .psn = 0xff000001,
	};
	snaa_bth_set(buf, &c);
	{
		static const __u8 want[12] = {
			0x24, 0xbf, 0x80, 0x01, 0x00, 0x23, 0x45, 0x67,
			0xff, 0x00, 0x00, 0x01,
		};
		bytes_eq(&g, buf, want, 12, "bth_set truncates fields");
	}

	/* field setters touch only their field */
	memcpy(buf, wire, 12);
	snaa_bth_set_psn(buf, 0x1000002);
	GEQ(&g, snaa_get_be32(buf + 8), 0x80000002);
	snaa_bth_set_ack_req(buf, 0);
	GEQ(&g, snaa_get_be32(buf + 8), 0x00000002);
	snaa_bth_set_ack_req(buf, 1);
	GEQ(&g, snaa_get_be32(buf + 8), 0x80000002);
	GEQ(&g, memcmp(buf, wire, 8), 0);

	/* round trips */
	for (i = 0; i < 1000; i++) {
		__u8 x[12], y[12];
		int k;

		for (k = 0; k < 12; k++)
			x[k] = (__u8)lcg();
		snaa_bth_get(x, &b);
		snaa_bth_set(y, &b);
		if (memcmp(x, y, 12)) {
			gchk(&g, 0, "round trip %d", i);
			break;
		}
	}
	gchk(&g, i == 1000, "1000 random BTH round trips");
	gend(&g, "BTH layout, getters, setters, round trips");
}

static void test_ext_headers(void)
{
	static const __u8 reth[16] = {
		0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
		0xde, 0xad, 0xbe, 0xef, 0x00, 0x00, 0x10, 0x00,
	};
	static const __u8 aeth[4] = { 0x60, 0x01, 0x02, 0x03 };
	static const __u8 deth[8] = {
		0x80, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
	};
	static const __u8 atmeth[28] = {
		0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,
		0x99, 0xaa, 0xbb, 0xcc,
		0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
		0xf0, 0xe0, 0xd0, 0xc0, 0xb0, 0xa0, 0x90, 0x80,
	};
	static const __u8 atmack[8] = {
		0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10,
	};
	static const __u8 imm[4] = { 0x11, 0x22, 0x33, 0x44 };
	struct snaa_reth_info r;
	struct snaa_aeth_info a;
	struct snaa_deth_info d;
	struct snaa_atmeth_info at;
	struct grp g = { 0 };
	__u8 buf[32];

	snaa_reth_get(reth, &r);
	GEQ(&g, r.va, 0x0123456789abcdefull);
	GEQ(&g, r.rkey, 0xdeadbeef);
	GEQ(&g, r.dma_len, 0x1000);
	memset(buf, 0x5a, sizeof(buf));
	snaa_reth_set(buf, &r);
	bytes_eq(&g, buf, reth, 16, "RETH");
	gend(&g, "RETH layout and round trip");

	snaa_aeth_get(aeth, &a);
	GEQ(&g, a.syndrome, 0x60);
	GEQ(&g, a.msn, 0x010203);
	snaa_aeth_set(buf, &a);
	bytes_eq(&g, buf, aeth, 4, "AETH");
	a.msn = 0xff000005;		/* MSN is 24 bits */
	snaa_aeth_set(buf, &a);
	GEQ(&g, snaa_get_be32(buf), 0x60000005);
	GEQ(&g, snaa_aeth_syndrome(SNAA_AETH_NAK, SNAA_NAK_PSN_SEQ_ERROR),
	    0x60);
	GEQ(&g, snaa_aeth_syndrome(SNAA_AETH_NAK,
				   SNAA_NAK_REMOTE_ACCESS_ERROR), 0x62);
	GEQ(&g, snaa_aeth_syndrome(SNAA_AETH_ACK, SNAA_AETH_CREDIT_INVALID),
	    0x1f);
	GEQ(&g, snaa_aeth_syndrome(SNAA_AETH_RNR_NAK, 0x0e), 0x2e);
	GEQ(&g, snaa_aeth_type(0x2e), SNAA_AETH_RNR_NAK);
	GEQ(&g, snaa_aeth_type(0x63), SNAA_AETH_NAK);
	GEQ(&g, snaa_aeth_type(0x1f), SNAA_AETH_ACK);
	GEQ(&g, snaa_aeth_type(0x40), SNAA_AETH_RESERVED);
	GEQ(&g, snaa_aeth_type(0x9f), SNAA_AETH_ACK);	/* bit 7 reserved */
	GEQ(&g, snaa_aeth_value(0x63), 3);
	gend(&g, "AETH layout and syndrome helpers");

	snaa_deth_get(deth, &d);
	GEQ(&g, d.qkey, SNAA_GSI_QKEY);
	GEQ(&g, d.sqpn, 1);
	memset(buf, 0xff, sizeof(buf));
	snaa_deth_set(buf, &d);
	bytes_eq(&g, buf, deth, 8, "DETH (reserved byte cleared)");
	buf[4] = 0xa5;			/* reserved byte is ignored */
	snaa_deth_get(buf, &d);
	GEQ(&g, d.sqpn, 1);
	gend(&g, "DETH layout and round trip");

	snaa_atmeth_get(atmeth, &at);
	GEQ(&g, at.va, 0x1122334455667788ull);
	GEQ(&g, at.rkey, 0x99aabbcc);
	GEQ(&g, at.swap_add, 0x0102030405060708ull);
	GEQ(&g, at.compare, 0xf0e0d0c0b0a09080ull);
	snaa_atmeth_set(buf, &at);
	bytes_eq(&g, buf, atmeth, 28, "AtomicETH");
	GEQ(&g, snaa_atmack_get(atmack), 0xfedcba9876543210ull);
	snaa_atmack_set(buf, 0xfedcba9876543210ull);
	bytes_eq(&g, buf, atmack, 8, "AtomicAckETH");
	gend(&g, "AtomicETH and AtomicAckETH layout and round trip");

	GEQ(&g, snaa_immdt_get(imm), 0x11223344);
	snaa_immdt_set(buf, 0x11223344);
	bytes_eq(&g, buf, imm, 4, "ImmDt");
	GEQ(&g, snaa_ieth_get(imm), 0x11223344);
	snaa_ieth_set(buf, 0x11223344);
	bytes_eq(&g, buf, imm, 4, "IETH");
	GEQ(&g, SNAA_BTH_BYTES + SNAA_RETH_BYTES + SNAA_IMMDT_BYTES +
	    SNAA_AETH_BYTES + SNAA_DETH_BYTES + SNAA_ATMETH_BYTES +
	    SNAA_ATMACK_BYTES + SNAA_IETH_BYTES + SNAA_ICRC_BYTES,
	    12 + 16 + 4 + 4 + 8 + 28 + 8 + 4 + 4);
	gend(&g, "ImmDt and IETH layout, header sizes");
}

/* ------------------------------------------------------------------ */
/* Opcode table                                                        */
/* ------------------------------------------------------------------ */

#define F_	SNAA_OPF_FIRST
#define M_	SNAA_OPF_MIDDLE
#define L_	SNAA_OPF_LAST
#define O_	SNAA_OPF_ONLY
#define PL	SNAA_OPF_PAYLOAD
#define RQ	SNAA_OPF_REQ
#define RS	SNAA_OPF_RESP
#define SND	SNAA_OPF_SEND
#define WR	SNAA_OPF_WRITE
#define RD	SNAA_OPF_READ
#define AT	SNAA_OPF_ATOMIC
#define AK	SNAA_OPF_ACK

/*
 * Expected entries, written from IBA Vol 1 chapter 9 (the header tables
 * per opcode), not from the code under test.  Offsets from the BTH
 * start; 0 means absent.
 */
struct exp_op {
	__u8 opcode;
	const char *name;
	__u8 hdr_len;
	__u32 flags;	/* position, direction, kind, payload */
	__u8 reth, immdt, aeth, atmeth, atmack, ieth, deth;
};

static const struct exp_op exp_ops[] = {
	/* RC */
	{ .opcode = 0x00, .name = "RC_SEND_FIRST", .hdr_len = 12,
	  .flags = F_ | RQ | SND | PL },
	{ .opcode = 0x01, .name = "RC_SEND_MIDDLE", .hdr_len = 12,
	  .flags = M_ | RQ | SND | PL },
	{ .opcode = 0x02, .name = "RC_SEND_LAST", .hdr_len = 12,
	  .flags = L_ | RQ | SND | PL },
	{ .opcode = 0x03, .name = "RC_SEND_LAST_WITH_IMMEDIATE", .hdr_len = 16,
	  .flags = L_ | RQ | SND | PL,
	  .immdt = 12 },
	{ .opcode = 0x04, .name = "RC_SEND_ONLY", .hdr_len = 12,
	  .flags = O_ | RQ | SND | PL },
	{ .opcode = 0x05, .name = "RC_SEND_ONLY_WITH_IMMEDIATE", .hdr_len = 16,
	  .flags = O_ | RQ | SND | PL,
	  .immdt = 12 },
	{ .opcode = 0x06, .name = "RC_RDMA_WRITE_FIRST", .hdr_len = 28,
	  .flags = F_ | RQ | WR | PL, .reth = 12 },
	{ .opcode = 0x07, .name = "RC_RDMA_WRITE_MIDDLE", .hdr_len = 12,
	  .flags = M_ | RQ | WR | PL },
	{ .opcode = 0x08, .name = "RC_RDMA_WRITE_LAST", .hdr_len = 12,
	  .flags = L_ | RQ | WR | PL },
	{ .opcode = 0x09, .name = "RC_RDMA_WRITE_LAST_WITH_IMMEDIATE", .hdr_len = 16,
	  .flags = L_ | RQ | WR | PL,
	  .immdt = 12 },
	{ .opcode = 0x0a, .name = "RC_RDMA_WRITE_ONLY", .hdr_len = 28,
	  .flags = O_ | RQ | WR | PL, .reth = 12 },
	{ .opcode = 0x0b, .name = "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", .hdr_len = 32,
	  .flags = O_ | RQ | WR | PL,
	  .reth = 12, .immdt = 28 },
	{ .opcode = 0x0c, .name = "RC_RDMA_READ_REQUEST", .hdr_len = 28,
	  .flags = O_ | RQ | RD, .reth = 12 },
	{ .opcode = 0x0d, .name = "RC_RDMA_READ_RESPONSE_FIRST", .hdr_len = 16,
	  .flags = F_ | RS | RD | PL,
	  .aeth = 12 },
	{ .opcode = 0x0e, .name = "RC_RDMA_READ_RESPONSE_MIDDLE", .hdr_len = 12,
	  .flags = M_ | RS | RD | PL },
	{ .opcode = 0x0f, .name = "RC_RDMA_READ_RESPONSE_LAST", .hdr_len = 16,
	  .flags = L_ | RS | RD | PL,
	  .aeth = 12 },
	{ .opcode = 0x10, .name = "RC_RDMA_READ_RESPONSE_ONLY", .hdr_len = 16,
	  .flags = O_ | RS | RD | PL,
	  .aeth = 12 },
	{ .opcode = 0x11, .name = "RC_ACKNOWLEDGE", .hdr_len = 16,
	  .flags = O_ | RS | AK, .aeth = 12 },
	{ .opcode = 0x12, .name = "RC_ATOMIC_ACKNOWLEDGE", .hdr_len = 24,
	  .flags = O_ | RS | AT, .aeth = 12,
	  .atmack = 16 },
	{ .opcode = 0x13, .name = "RC_COMPARE_SWAP", .hdr_len = 40,
	  .flags = O_ | RQ | AT, .atmeth = 12 },
	{ .opcode = 0x14, .name = "RC_FETCH_ADD", .hdr_len = 40,
	  .flags = O_ | RQ | AT, .atmeth = 12 },
	{ .opcode = 0x16, .name = "RC_SEND_LAST_WITH_INVALIDATE", .hdr_len = 16,
	  .flags = L_ | RQ | SND | PL,
	  .ieth = 12 },
	{ .opcode = 0x17, .name = "RC_SEND_ONLY_WITH_INVALIDATE", .hdr_len = 16,
	  .flags = O_ | RQ | SND | PL,
	  .ieth = 12 },
	/* UC */
	{ .opcode = 0x20, .name = "UC_SEND_FIRST", .hdr_len = 12,
	  .flags = F_ | RQ | SND | PL },
	{ .opcode = 0x21, .name = "UC_SEND_MIDDLE", .hdr_len = 12,
	  .flags = M_ | RQ | SND | PL },
	{ .opcode = 0x22, .name = "UC_SEND_LAST", .hdr_len = 12,
	  .flags = L_ | RQ | SND | PL },
	{ .opcode = 0x23, .name = "UC_SEND_LAST_WITH_IMMEDIATE", .hdr_len = 16,
	  .flags = L_ | RQ | SND | PL,
	  .immdt = 12 },
	{ .opcode = 0x24, .name = "UC_SEND_ONLY", .hdr_len = 12,
	  .flags = O_ | RQ | SND | PL },
	{ .opcode = 0x25, .name = "UC_SEND_ONLY_WITH_IMMEDIATE", .hdr_len = 16,
	  .flags = O_ | RQ | SND | PL,
	  .immdt = 12 },
	{ .opcode = 0x26, .name = "UC_RDMA_WRITE_FIRST", .hdr_len = 28,
	  .flags = F_ | RQ | WR | PL, .reth = 12 },
	{ .opcode = 0x27, .name = "UC_RDMA_WRITE_MIDDLE", .hdr_len = 12,
	  .flags = M_ | RQ | WR | PL },
	{ .opcode = 0x28, .name = "UC_RDMA_WRITE_LAST", .hdr_len = 12,
	  .flags = L_ | RQ | WR | PL },
	{ .opcode = 0x29, .name = "UC_RDMA_WRITE_LAST_WITH_IMMEDIATE", .hdr_len = 16,
	  .flags = L_ | RQ | WR | PL,
	  .immdt = 12 },
	{ .opcode = 0x2a, .name = "UC_RDMA_WRITE_ONLY", .hdr_len = 28,
	  .flags = O_ | RQ | WR | PL, .reth = 12 },
	{ .opcode = 0x2b, .name = "UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", .hdr_len = 32,
	  .flags = O_ | RQ | WR | PL,
	  .reth = 12, .immdt = 28 },
	/* UD */
	{ .opcode = 0x64, .name = "UD_SEND_ONLY", .hdr_len = 20,
	  .flags = O_ | RQ | SND | PL, .deth = 12 },
	{ .opcode = 0x65, .name = "UD_SEND_ONLY_WITH_IMMEDIATE", .hdr_len = 24,
	  .flags = O_ | RQ | SND | PL,
	  .deth = 12, .immdt = 20 },
};

static const struct exp_op *exp_find(__u8 opcode)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(exp_ops); i++)
		if (exp_ops[i].opcode == opcode)
			return &exp_ops[i];
	return NULL;
}

/* Defined by IBA, not implemented: RD, CNP, XRC, IBA 1.5 additions. */
static int exp_unsupported(unsigned int op)
{
	if (op == 0x1c || op == 0x1d)		/* FLUSH, ATOMIC WRITE */
		return 1;
	if (op >= 0x40 && op <= 0x55)		/* RD, incl. RESYNC */
		return 1;
	if (op == 0x81)				/* CNP */
		return 1;
	if (op >= 0xa0 && op <= 0xb7 && op != 0xb5)	/* XRC */
		return 1;
	return 0;
}

#define POS_MASK	(F_ | M_ | L_ | O_)
#define CHECKED_FLAGS	(POS_MASK | PL | RQ | RS | SND | WR | RD | AT | AK)

static void test_opcode_table(void)
{
	struct grp g = { 0 };
	unsigned int op, max_hdr = 0, max_pl_hdr = 0;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(exp_ops); i++) {
		const struct exp_op *e = &exp_ops[i];
		const struct snaa_opcode_info *info =
			snaa_opcode_lookup(e->opcode);
		__u32 pos;

		if (!info) {
			gchk(&g, 0, "0x%02x %s: no entry", e->opcode, e->name);
			result(0, "opcode 0x%02x %s", e->opcode,
				    e->name);
			continue;
		}
		pos = info->flags;
		gchk(&g, snaa_opcode_supported(info), "supported");
		gchk(&g, !strcmp(info->name, e->name), "name %s, want %s",
		     info->name, e->name);
		GEQ(&g, info->opcode, e->opcode);
		GEQ(&g, info->transport, e->opcode >> 5);
		GEQ(&g, info->hdr_len, e->hdr_len);
		GEQ(&g, info->ext_len, e->hdr_len - 12);
		GEQ(&g, info->flags & CHECKED_FLAGS, e->flags);
		GEQ(&g, !!(pos & SNAA_OPF_START), !!(e->flags & (F_ | O_)));
		GEQ(&g, !!(pos & SNAA_OPF_END), !!(e->flags & (L_ | O_)));
		GEQ(&g, info->reth_off, e->reth);
		GEQ(&g, info->immdt_off, e->immdt);
		GEQ(&g, info->aeth_off, e->aeth);
		GEQ(&g, info->atmeth_off, e->atmeth);
		GEQ(&g, info->atmack_off, e->atmack);
		GEQ(&g, info->ieth_off, e->ieth);
		GEQ(&g, info->deth_off, e->deth);
		GEQ(&g, !!(pos & SNAA_OPF_RETH), !!e->reth);
		GEQ(&g, !!(pos & SNAA_OPF_IMMDT), !!e->immdt);
		GEQ(&g, !!(pos & SNAA_OPF_AETH), !!e->aeth);
		GEQ(&g, !!(pos & SNAA_OPF_ATMETH), !!e->atmeth);
		GEQ(&g, !!(pos & SNAA_OPF_ATMACK), !!e->atmack);
		GEQ(&g, !!(pos & SNAA_OPF_IETH), !!e->ieth);
		GEQ(&g, !!(pos & SNAA_OPF_DETH), !!e->deth);
		GEQ(&g, pos & (SNAA_OPF_RDETH | SNAA_OPF_XRCETH |
			       SNAA_OPF_FETH | SNAA_OPF_CNPR), 0);
		result(!g.bad, "opcode 0x%02x %s: hdr_len %u, flags, "
			    "offsets", e->opcode, e->name, e->hdr_len);
		g.n = g.bad = 0;
	}

	/* all 256 values */
	for (op = 0; op < 256; op++) {
		const struct snaa_opcode_info *info = snaa_opcode_lookup((__u8)op);
		int want_sup = exp_find((__u8)op) != NULL;
		int want_unsup = exp_unsupported(op);

		if (want_sup)
			gchk(&g, snaa_opcode_supported(info),
			     "0x%02x should be supported", op);
		else if (want_unsup)
			gchk(&g, info && !snaa_opcode_supported(info) &&
			     info->opcode == op &&
			     info->transport == op >> 5,
			     "0x%02x should be known but unsupported", op);
		else
			gchk(&g, info == NULL, "0x%02x should be reserved",
			     op);
		if (!info)
			continue;
		if (info->hdr_len > max_hdr)
			max_hdr = info->hdr_len;
		if (snaa_opcode_supported(info) && (info->flags & PL) &&
		    info->hdr_len > max_pl_hdr)
			max_pl_hdr = info->hdr_len;
		/* names carry the transport */
		{
			static const char *const pfx[8] = {
				"RC_", "UC_", "RD_", "UD_", "CNP", "XRC_",
			};
			gchk(&g, pfx[op >> 5] &&
			     !strncmp(info->name, pfx[op >> 5],
				      strlen(pfx[op >> 5])),
			     "0x%02x name %s", op, info->name);
		}
	}
	gchk(&g, snaa_opcode_supported(NULL) == 0, "supported(NULL)");
	gend(&g, "lookup classifies all 256 opcodes: 37 supported, "
	     "RD/XRC/CNP/FLUSH/ATOMIC_WRITE unsupported, others reserved");

	/* a few unsupported header stacks, from IBA (RD, XRC) and A17 (CNP) */
	GEQ(&g, snaa_opcode_lookup(0x44)->hdr_len, 12 + 4 + 8);
	GEQ(&g, snaa_opcode_lookup(0x4b)->hdr_len, 12 + 4 + 8 + 16 + 4);
	GEQ(&g, snaa_opcode_lookup(0x51)->hdr_len, 12 + 4 + 4);
	GEQ(&g, snaa_opcode_lookup(0x52)->hdr_len, 12 + 4 + 4 + 8);
	GEQ(&g, snaa_opcode_lookup(0x53)->hdr_len, 12 + 4 + 8 + 28);
	GEQ(&g, snaa_opcode_lookup(0x55)->hdr_len, 12 + 4 + 8);
	GEQ(&g, snaa_opcode_lookup(0xa4)->hdr_len, 12 + 4);
	GEQ(&g, snaa_opcode_lookup(0xab)->hdr_len, 12 + 4 + 16 + 4);
	GEQ(&g, snaa_opcode_lookup(0xad)->hdr_len, 12 + 4);
	GEQ(&g, snaa_opcode_lookup(0x81)->hdr_len, 12 + 16);
	GEQ(&g, snaa_opcode_lookup(0x1c)->hdr_len, 12 + 4 + 16);
	GEQ(&g, snaa_opcode_lookup(0x1d)->hdr_len, 12 + 16);
	GEQ(&g, !strcmp(snaa_opcode_lookup(0x81)->name, "CNP"), 1);
	GEQ(&g, max_hdr, SNAA_MAX_BTH_EXT_BYTES);
	/* the MTU budget covers every supported opcode with payload */
	GEQ(&g, SNAA_IPV6_HDR_BYTES + SNAA_UDP_HDR_BYTES + max_pl_hdr +
	    SNAA_ICRC_BYTES, SNAA_MAX_HDR_OVERHEAD);
	gend(&g, "unsupported header stacks, SNAA_MAX_HDR_OVERHEAD");
}

static void test_req_opcode(void)
{
	static const enum snaa_transport trs[] = {
		SNAA_TR_RC, SNAA_TR_UC, SNAA_TR_UD,
	};
	static const __u32 kinds[] = { SNAA_OPF_SEND, SNAA_OPF_WRITE };
	struct grp g = { 0 };
	size_t c;

	for (c = 0; c < ARRAY_SIZE(trs) * ARRAY_SIZE(kinds) * 8; c++) {
		size_t i = c / (ARRAY_SIZE(kinds) * 8);
		size_t k = c / 8 % ARRAY_SIZE(kinds);
		int first = c & 1, last = !!(c & 2), imm = !!(c & 4);
		int op = snaa_req_opcode(trs[i], kinds[k], first, last, imm);
		const struct snaa_opcode_info *info;
		__u32 pos = first && last ? O_ : first ? F_ : last ? L_ : M_;

		if (trs[i] == SNAA_TR_UD &&
		    (kinds[k] != SNAA_OPF_SEND || !first || !last)) {
			GEQ(&g, op, -1);
			continue;
		}
		info = op < 0 ? NULL : snaa_opcode_lookup((__u8)op);
		gchk(&g, snaa_opcode_supported(info),
		     "tr %d kind %x %d%d%d -> %d", trs[i], kinds[k], first,
		     last, imm, op);
		if (!info)
			continue;
		GEQ(&g, info->transport, trs[i]);
		GEQ(&g, info->flags & (SND | WR), kinds[k]);
		GEQ(&g, info->flags & POS_MASK, pos);
		GEQ(&g, !!(info->flags & SNAA_OPF_IMMDT), imm && last);
		GEQ(&g, !!(info->flags & SNAA_OPF_RETH),
		    kinds[k] == SNAA_OPF_WRITE && first);
	}
	GEQ(&g, snaa_req_opcode(SNAA_TR_UC, SNAA_OPF_WRITE, 1, 1, 1), 0x2b);
	GEQ(&g, snaa_req_opcode(SNAA_TR_UC, SNAA_OPF_WRITE, 1, 0, 1), 0x26);
	GEQ(&g, snaa_req_opcode(SNAA_TR_UC, SNAA_OPF_WRITE, 0, 0, 0), 0x27);
	GEQ(&g, snaa_req_opcode(SNAA_TR_RC, SNAA_OPF_SEND, 0, 1, 1), 0x03);
	GEQ(&g, snaa_req_opcode(SNAA_TR_UD, SNAA_OPF_SEND, 1, 1, 0), 0x64);
	GEQ(&g, snaa_req_opcode(SNAA_TR_UD, SNAA_OPF_SEND, 1, 1, 1), 0x65);
	GEQ(&g, snaa_req_opcode(SNAA_TR_RD, SNAA_OPF_SEND, 1, 1, 0), -1);
	GEQ(&g, snaa_req_opcode(SNAA_TR_UC, SNAA_OPF_READ, 1, 1, 0), -1);
	gend(&g, "req_opcode agrees with the table for RC/UC/UD");
}

static void test_opcode_seq(void)
{
	static const struct {
		int prev;	/* -1: none */
		__u8 cur;
		enum snaa_seq want;
	} cases[] = {
		{ -1, 0x20, SNAA_SEQ_OK },
		{ -1, 0x24, SNAA_SEQ_OK },
		{ -1, 0x2b, SNAA_SEQ_OK },
		{ -1, 0x21, SNAA_SEQ_MISSING_FIRST },
		{ -1, 0x28, SNAA_SEQ_MISSING_FIRST },
		{ 0x20, 0x21, SNAA_SEQ_OK },
		{ 0x20, 0x22, SNAA_SEQ_OK },
		{ 0x21, 0x23, SNAA_SEQ_OK },
		{ 0x26, 0x27, SNAA_SEQ_OK },
		{ 0x27, 0x29, SNAA_SEQ_OK },
		{ 0x20, 0x27, SNAA_SEQ_MISSING_LAST },	/* other kind */
		{ 0x26, 0x22, SNAA_SEQ_MISSING_LAST },
		{ 0x21, 0x20, SNAA_SEQ_MISSING_LAST },	/* new FIRST */
		{ 0x27, 0x2a, SNAA_SEQ_MISSING_LAST },	/* new ONLY */
		{ 0x22, 0x21, SNAA_SEQ_MISSING_FIRST },
		{ 0x22, 0x26, SNAA_SEQ_OK },
		{ 0x2b, 0x20, SNAA_SEQ_OK },
		{ 0x0d, 0x0e, SNAA_SEQ_OK },		/* read responses */
		{ 0x0e, 0x0f, SNAA_SEQ_OK },
		{ 0x0d, 0x08, SNAA_SEQ_MISSING_LAST },
		{ 0x00, 0x16, SNAA_SEQ_OK },		/* SEND_LAST_INV */
		{ 0x11, 0x01, SNAA_SEQ_MISSING_FIRST },
		{ 0x0c, 0x04, SNAA_SEQ_OK },
	};
	struct grp g = { 0 };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct snaa_opcode_info *prev = NULL;
		enum snaa_seq s;

		if (cases[i].prev >= 0)
			prev = snaa_opcode_lookup((__u8)cases[i].prev);
		s = snaa_opcode_seq(prev, snaa_opcode_lookup(cases[i].cur));

		gchk(&g, s == cases[i].want, "prev %d cur 0x%02x: %d, want %d",
		     cases[i].prev, cases[i].cur, s, cases[i].want);
	}
	gend(&g, "opcode_seq: FIRST/MIDDLE/LAST ordering");
}

/* ------------------------------------------------------------------ */

static void test_psn(void)
{
	static const __u32 bases[] = {
		0, 1, 0x7fffff, 0x800000, 0x800001, 0xfffffe, 0xffffff,
		0x123456,
	};
	struct grp g = { 0 };
	size_t i;
	int d;

	GEQ(&g, snaa_psn_add(0xffffff, 1), 0);
	GEQ(&g, snaa_psn_add(0xfffffe, 5), 3);
	GEQ(&g, snaa_psn_add(0, 0x1000000), 0);
	GEQ(&g, snaa_psn_add(5, 0xffffff), 4);		/* i.e. -1 */
	GEQ(&g, snaa_psn_add(0x1000005, 0), 5);
	gend(&g, "psn_add wraps at 2^24");

	GEQ(&g, snaa_psn_diff(0, 0xffffff), 1);
	GEQ(&g, snaa_psn_diff(0xffffff, 0), -1);
	GEQ(&g, snaa_psn_diff(2, 0xfffffe), 4);
	GEQ(&g, snaa_psn_diff(0xfffffe, 2), -4);
	GEQ(&g, snaa_psn_diff(0x7fffff, 0), 0x7fffff);
	GEQ(&g, snaa_psn_diff(0x800000, 0), -0x800000);
	GEQ(&g, snaa_psn_diff(0, 0x800000), -0x800000);
	GEQ(&g, snaa_psn_diff(0x123456, 0x123456), 0);
	GEQ(&g, snaa_psn_diff(0x1000005, 3), 2);	/* high bits ignored */
	for (i = 0; i < ARRAY_SIZE(bases); i++)
		for (d = -0x800000; d < 0x800000; d += 0x1fff)
			if (snaa_psn_diff(snaa_psn_add(bases[i], (__u32)d),
					  bases[i]) != d) {
				gchk(&g, 0, "diff(add(%x, %d)) != %d",
				     bases[i], d, d);
				break;
			}
	gchk(&g, 1, "sweep");
	gend(&g, "psn_diff is the signed 24-bit distance");

	GEQ(&g, snaa_psn_before(0xffffff, 0), 1);
	GEQ(&g, snaa_psn_before(0, 0xffffff), 0);
	GEQ(&g, snaa_psn_before(0xfffff0, 0x10), 1);
	GEQ(&g, snaa_psn_before(0x10, 0xfffff0), 0);
	GEQ(&g, snaa_psn_before(7, 7), 0);
	GEQ(&g, snaa_psn_before(0, 0x7fffff), 1);
	GEQ(&g, snaa_psn_before(0x7fffff, 0), 0);
	GEQ(&g, snaa_psn_before(0, 0x800000), 1);	/* half-way tie */
	GEQ(&g, snaa_psn_before(0x800000, 0), 1);
	GEQ(&g, snaa_psn_before(0x800001, 0), 1);
	GEQ(&g, snaa_psn_before(0, 0x800001), 0);
	gend(&g, "psn_before across the wrap, window 2^23");

	GEQ(&g, snaa_pad_for(0), 0);
	GEQ(&g, snaa_pad_for(1), 3);
	GEQ(&g, snaa_pad_for(2), 2);
	GEQ(&g, snaa_pad_for(3), 1);
	GEQ(&g, snaa_pad_for(4), 0);
	GEQ(&g, snaa_pad_for(4097), 3);
	GEQ(&g, snaa_pad_for(0xffffffffu), 1);
	GEQ(&g, snaa_num_pkts(0, 256), 1);
	GEQ(&g, snaa_num_pkts(1, 256), 1);
	GEQ(&g, snaa_num_pkts(256, 256), 1);
	GEQ(&g, snaa_num_pkts(257, 256), 2);
	GEQ(&g, snaa_num_pkts(600, 256), 3);
	GEQ(&g, snaa_num_pkts(0xffffffffu, 256), 0x1000000);
	GEQ(&g, snaa_num_pkts(0x80000000u, 4096), 0x80000);
	GEQ(&g, snaa_is_ib_mtu(256) + snaa_is_ib_mtu(512) +
	    snaa_is_ib_mtu(1024) + snaa_is_ib_mtu(2048) +
	    snaa_is_ib_mtu(4096), 5);
	GEQ(&g, snaa_is_ib_mtu(0) + snaa_is_ib_mtu(128) +
	    snaa_is_ib_mtu(255) + snaa_is_ib_mtu(257) +
	    snaa_is_ib_mtu(768) + snaa_is_ib_mtu(8192), 0);
	gend(&g, "pad_for, num_pkts, is_ib_mtu");
}

/* ------------------------------------------------------------------ */
/* Parser                                                              */
/* ------------------------------------------------------------------ */

#define T_VA	0x00007f0012340000ull
#define T_RKEY	0x0000abcdu
#define T_IMM	0x11223344u
#define T_QPN	0x00d001u
#define T_PSN	0x000007u

/*
 * build() - a packet with @opcode, pad count @pad and @plen bytes of
 * payload + pad (the pad is part of @plen), ICRC bytes 0.  Layout from
 * the table, which test_opcode_table() checks.  Returns the length.
 */
static size_t build(__u8 *p, __u8 opcode, __u8 pad, size_t plen, __u32 dqpn)
{
	const struct snaa_opcode_info *info = snaa_opcode_lookup(opcode);
	struct snaa_bth_info b = {
		.opcode = opcode, .pad = pad, .pkey = 0xffff, .dqpn = dqpn,
		.psn = T_PSN,
	};
	size_t hdr = info ? info->hdr_len : 12, i;

	memset(p, 0, hdr);
	snaa_bth_set(p, &b);
	if (info && (info->flags & SNAA_OPF_RETH)) {
		struct snaa_reth_info r = {
			.va = T_VA, .rkey = T_RKEY, .dma_len = 4096,
		};
		snaa_reth_set(p + info->reth_off, &r);
	}
	if (info && (info->flags & SNAA_OPF_IMMDT))
		snaa_immdt_set(p + info->immdt_off, T_IMM);
	if (info && (info->flags & SNAA_OPF_DETH)) {
		struct snaa_deth_info d = { .qkey = 0x11111111, .sqpn = 0x42 };

		snaa_deth_set(p + info->deth_off, &d);
	}
	for (i = 0; i < plen; i++)
		p[hdr + i] = (__u8)(i + 1);
	for (i = plen - pad; i < plen; i++)
		p[hdr + i] = 0;
	memset(p + hdr + plen, 0, 4);
	return hdr + plen + 4;
}

/* Parse @len bytes copied to a buffer of exactly that size (ASan). */
static int parse_exact(const __u8 *p, size_t len, struct snaa_pkt *out)
{
	__u8 *copy = malloc(len ? len : 1);
	int rc;

	memcpy(copy, p, len);
	rc = snaa_parse(copy, len, out);
	free(copy);
	return rc;
}

static void test_parse_valid(void)
{
	/* UC RDMA WRITE ONLY with immediate, 5 bytes, pad 3 */
	static const __u8 w[44] = {
		0x2b, 0x30, 0xff, 0xff, 0x00, 0x00, 0xd0, 0x01,
		0x00, 0x00, 0x00, 0x07,
		0x00, 0x00, 0x7f, 0x00, 0x12, 0x34, 0x00, 0x00,
		0x00, 0x00, 0xab, 0xcd, 0x00, 0x00, 0x00, 0x05,
		0xde, 0xad, 0xbe, 0xef,
		0x01, 0x02, 0x03, 0x04, 0x05, 0x00, 0x00, 0x00,
		0x11, 0x22, 0x33, 0x44,
	};
	/* UD SEND ONLY with immediate to QP1, 4 bytes */
	static const __u8 ud[32] = {
		0x65, 0x80, 0xff, 0xff, 0x00, 0x00, 0x00, 0x01,
		0x00, 0x00, 0x00, 0x2a,
		0x80, 0x01, 0x00, 0x00, 0x00, 0x00, 0x01, 0x23,
		0xca, 0xfe, 0xf0, 0x0d,
		0x61, 0x62, 0x63, 0x64,
		0xaa, 0xbb, 0xcc, 0xdd,
	};
	/* RC NAK (PSN sequence error), MSN 5 */
	static const __u8 nak[20] = {
		0x11, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x11,
		0x00, 0x00, 0x01, 0x00,
		0x60, 0x00, 0x00, 0x05,
		0x01, 0x02, 0x03, 0x04,
	};
	static const struct {
		__u8 opcode;
		__u8 pad;
		size_t plen;	/* payload + pad */
	} uc[] = {
		{ 0x20, 0, 256 }, { 0x21, 0, 1024 }, { 0x22, 3, 16 },
		{ 0x23, 1, 4 }, { 0x24, 0, 0 }, { 0x25, 2, 4096 },
		{ 0x26, 0, 4096 }, { 0x27, 0, 256 }, { 0x28, 0, 4 },
		{ 0x29, 3, 8 }, { 0x2a, 0, 64 }, { 0x2b, 0, 0 },
	};
	static __u8 p[4200];
	struct snaa_pkt pkt;
	struct grp g = { 0 };
	size_t i, len;

	GRC(&g, snaa_parse(w, sizeof(w), &pkt), 0);
	GEQ(&g, pkt.op == snaa_opcode_lookup(0x2b), 1);
	GEQ(&g, pkt.bth.pad, 3);
	GEQ(&g, pkt.bth.dqpn, 0xd001);
	GEQ(&g, pkt.bth.psn, 7);
	GEQ(&g, pkt.payload_off, 32);
	GEQ(&g, pkt.payload_len, 5);
	GEQ(&g, pkt.icrc_off, 40);
	GEQ(&g, pkt.reth.va, 0x00007f0012340000ull);
	GEQ(&g, pkt.reth.rkey, 0xabcd);
	GEQ(&g, pkt.reth.dma_len, 5);
	GEQ(&g, pkt.imm, 0xdeadbeef);
	GEQ(&g, snaa_icrc_get(w + pkt.icrc_off), 0x44332211);
	gend(&g, "parse: hand-written UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE");

	GRC(&g, snaa_parse(ud, sizeof(ud), &pkt), 0);
	GEQ(&g, pkt.op->opcode, 0x65);
	GEQ(&g, pkt.bth.se, 1);
	GEQ(&g, pkt.bth.dqpn, 1);
	GEQ(&g, pkt.deth.qkey, 0x80010000);
	GEQ(&g, pkt.deth.sqpn, 0x123);
	GEQ(&g, pkt.imm, 0xcafef00d);
	GEQ(&g, pkt.payload_off, 24);
	GEQ(&g, pkt.payload_len, 4);
	GEQ(&g, pkt.icrc_off, 28);
	gend(&g, "parse: hand-written UD_SEND_ONLY_WITH_IMMEDIATE");

	GRC(&g, snaa_parse(nak, sizeof(nak), &pkt), 0);
	GEQ(&g, pkt.op->opcode, 0x11);
	GEQ(&g, pkt.aeth.syndrome, 0x60);
	GEQ(&g, pkt.aeth.msn, 5);
	GEQ(&g, pkt.bth.psn, 0x100);
	GEQ(&g, pkt.payload_len, 0);
	GEQ(&g, pkt.icrc_off, 16);
	gend(&g, "parse: hand-written RC_ACKNOWLEDGE (NAK)");

	for (i = 0; i < ARRAY_SIZE(uc); i++) {
		const struct snaa_opcode_info *info =
			snaa_opcode_lookup(uc[i].opcode);

		len = build(p, uc[i].opcode, uc[i].pad, uc[i].plen, T_QPN);
		GRC(&g, parse_exact(p, len, &pkt), 0);
		GEQ(&g, pkt.op == info, 1);
		GEQ(&g, pkt.bth.opcode, uc[i].opcode);
		GEQ(&g, pkt.bth.pad, uc[i].pad);
		GEQ(&g, pkt.bth.dqpn, T_QPN);
		GEQ(&g, pkt.bth.psn, T_PSN);
		GEQ(&g, pkt.payload_off, info->hdr_len);
		GEQ(&g, pkt.payload_len, uc[i].plen - uc[i].pad);
		GEQ(&g, pkt.icrc_off, len - 4);
		if (info->flags & SNAA_OPF_RETH) {
			GEQ(&g, pkt.reth.va, T_VA);
			GEQ(&g, pkt.reth.rkey, T_RKEY);
			GEQ(&g, pkt.reth.dma_len, 4096);
		}
		GEQ(&g, pkt.imm, info->flags & SNAA_OPF_IMMDT ? T_IMM : 0);
		result(!g.bad, "parse: valid %s, %zu payload bytes, "
			    "pad %u", info->name, uc[i].plen - uc[i].pad,
			    uc[i].pad);
		g.n = g.bad = 0;
	}

	/* RC and UD opcodes with extension headers */
	len = build(p, 0x0c, 0, 0, T_QPN);
	GRC(&g, parse_exact(p, len, &pkt), 0);
	GEQ(&g, pkt.reth.va, T_VA);
	len = build(p, 0x13, 0, 0, T_QPN);
	{
		struct snaa_atmeth_info a = {
			.va = 8, .rkey = 9, .swap_add = 10, .compare = 11,
		};
		snaa_atmeth_set(p + 12, &a);
	}
	GRC(&g, parse_exact(p, len, &pkt), 0);
	GEQ(&g, pkt.atmeth.va, 8);
	GEQ(&g, pkt.atmeth.rkey, 9);
	GEQ(&g, pkt.atmeth.swap_add, 10);
	GEQ(&g, pkt.atmeth.compare, 11);
	len = build(p, 0x12, 0, 0, T_QPN);
	p[12] = 0x1f;
	snaa_atmack_set(p + 16, 0x0102030405060708ull);
	GRC(&g, parse_exact(p, len, &pkt), 0);
	GEQ(&g, pkt.aeth.syndrome, 0x1f);
	GEQ(&g, pkt.atmack, 0x0102030405060708ull);
	len = build(p, 0x17, 1, 8, T_QPN);
	snaa_ieth_set(p + 12, 0x5566);
	GRC(&g, parse_exact(p, len, &pkt), 0);
	GEQ(&g, pkt.ieth_rkey, 0x5566);
	GEQ(&g, pkt.payload_len, 7);
	len = build(p, 0x64, 0, 4096, SNAA_MULTICAST_QPN);
	GRC(&g, parse_exact(p, len, &pkt), 0);
	GEQ(&g, pkt.deth.qkey, 0x11111111);
	GEQ(&g, pkt.deth.sqpn, 0x42);
	GEQ(&g, pkt.payload_len, 4096);
	len = build(p, 0x0d, 0, 2048, T_QPN);
	GRC(&g, parse_exact(p, len, &pkt), 0);
	GEQ(&g, pkt.payload_off, 16);
	gend(&g, "parse: RC READ/atomic/ACK/invalidate and UD headers");
}

/* What snaa_parse must say about a valid @info packet cut to @len bytes. */
static int expect_cut(const struct snaa_opcode_info *info, __u8 pad,
		      size_t len)
{
	size_t rest;

	if (len < 12 || len < (size_t)info->hdr_len + 4)
		return -SNAA_DROP_TRUNCATED;
	rest = len - info->hdr_len - 4;
	if (rest & 3)
		return -SNAA_DROP_UNALIGNED;
	if (pad > rest)
		return -SNAA_DROP_PAD_EXCEEDS_PAYLOAD;
	rest -= pad;
	if ((info->flags & (F_ | M_)) && !snaa_is_ib_mtu((__u32)rest))
		return -SNAA_DROP_BAD_LENGTH;
	if ((info->flags & L_) && rest == 0)
		return -SNAA_DROP_BAD_LENGTH;
	return 0;
}

static void test_parse_truncation(void)
{
	/* UC SEND ONLY with immediate, 5 bytes + pad 3: 28 bytes */
	enum {
		TR = -SNAA_DROP_TRUNCATED,
		PX = -SNAA_DROP_PAD_EXCEEDS_PAYLOAD,
		UA = -SNAA_DROP_UNALIGNED,
	};
	static const int want28[29] = {
		TR, TR, TR, TR, TR, TR, TR, TR, TR, TR,	/* 0..9 */
		TR, TR, TR, TR, TR, TR, TR, TR, TR, TR,	/* 10..19 */
		PX,			/* 20: pad 3, nothing else */
		UA, UA, UA,
		0,			/* 24: 1 byte + pad 3 */
		UA, UA, UA,
		0,			/* 28: 5 bytes + pad 3 */
	};
	static const struct {
		__u8 opcode, pad;
		size_t plen;
	} pk[] = {
		{ 0x20, 0, 256 }, { 0x21, 0, 256 }, { 0x22, 2, 12 },
		{ 0x23, 3, 4 }, { 0x24, 1, 8 }, { 0x25, 0, 0 },
		{ 0x26, 0, 256 }, { 0x27, 0, 512 }, { 0x28, 0, 4 },
		{ 0x29, 1, 4 }, { 0x2a, 3, 12 }, { 0x2b, 2, 8 },
		{ 0x11, 0, 0 }, { 0x12, 0, 0 }, { 0x0c, 0, 0 },
		{ 0x13, 0, 0 }, { 0x0d, 0, 256 }, { 0x10, 1, 4 },
		{ 0x64, 3, 36 }, { 0x65, 0, 4 }, { 0x17, 0, 4 },
	};
	static __u8 p[1200];
	struct snaa_pkt pkt;
	struct grp g = { 0 };
	size_t i, len, cut;

	len = build(p, 0x25, 3, 8, T_QPN);
	GEQ(&g, len, 28);
	for (cut = 0; cut <= 28; cut++) {
		int rc = parse_exact(p, cut, &pkt);

		gchk(&g, rc == want28[cut], "len %zu: %s, want %s", cut,
		     reason(rc), reason(want28[cut]));
		if (rc == 0)
			GEQ(&g, pkt.payload_len, cut == 24 ? 1 : 5);
	}
	gend(&g, "parse: UC_SEND_ONLY_WITH_IMMEDIATE cut to 0..28 bytes");

	for (i = 0; i < ARRAY_SIZE(pk); i++) {
		const struct snaa_opcode_info *info =
			snaa_opcode_lookup(pk[i].opcode);

		len = build(p, pk[i].opcode, pk[i].pad, pk[i].plen, T_QPN);
		for (cut = 0; cut <= len; cut++) {
			int rc = parse_exact(p, cut, &pkt);
			int want = expect_cut(info, pk[i].pad, cut);

			gchk(&g, rc == want, "%s len %zu/%zu: %s, want %s",
			     info->name, cut, len, reason(rc), reason(want));
		}
		gchk(&g, expect_cut(info, pk[i].pad, len) == 0, "full");
		result(!g.bad, "parse: %s cut to every length "
			    "0..%zu", info->name, len);
		g.n = g.bad = 0;
	}
}

static void test_parse_malformed(void)
{
	static __u8 p[8300];
	struct snaa_pkt pkt;
	struct grp g = { 0 };
	unsigned int op, tver;
	size_t len;
	int rc;

	/* TVer */
	for (tver = 1; tver < 16; tver++) {
		len = build(p, 0x24, 0, 4, T_QPN);
		p[1] |= (__u8)tver;
		GRC(&g, parse_exact(p, len, &pkt), -SNAA_DROP_BAD_TVER);
		GRC(&g, parse_exact(p, 12, &pkt), -SNAA_DROP_BAD_TVER);
		p[0] = 0x3f;		/* reserved opcode: TVer first */
		GRC(&g, parse_exact(p, len, &pkt), -SNAA_DROP_BAD_TVER);
	}
	gend(&g, "parse: TVer 1..15 is bad_tver, checked before opcode");

	/* every opcode value */
	for (op = 0; op < 256; op++) {
		const struct snaa_opcode_info *info = snaa_opcode_lookup((__u8)op);
		size_t plen = 0;
		int want;

		if (exp_find((__u8)op)) {
			if (info->flags & (F_ | M_))
				plen = 256;
			else if (info->flags & L_)
				plen = 4;
			want = 0;
		} else if (exp_unsupported(op) || op >= 0xc0) {
			want = -SNAA_DROP_UNSUPPORTED;
		} else {
			want = -SNAA_DROP_BAD_OPCODE;
		}
		len = build(p, (__u8)op, 0, plen, 0x17);
		if (want)
			len = 64;	/* room for any header stack */
		rc = parse_exact(p, len, &pkt);
		gchk(&g, rc == want, "opcode 0x%02x: %s, want %s", op,
		     reason(rc), reason(want));
		gchk(&g, pkt.op == (rc == -SNAA_DROP_BAD_OPCODE ||
				    op >= 0xc0 ? NULL : info),
		     "opcode 0x%02x: out->op", op);
		gchk(&g, pkt.bth.opcode == op, "opcode decoded");
	}
	gend(&g, "parse: all 256 opcodes classified (ok/unsupported/"
	     "bad_opcode)");

	/* pad count on packets that cannot carry one */
	len = build(p, 0x20, 1, 256, T_QPN);
	GRC(&g, parse_exact(p, len, &pkt), -SNAA_DROP_BAD_PAD);
	len = build(p, 0x26, 2, 256, T_QPN);
	GRC(&g, parse_exact(p, len, &pkt), -SNAA_DROP_BAD_PAD);
	len = build(p, 0x21, 3, 256, T_QPN);
	GRC(&g, parse_exact(p, len, &pkt), -SNAA_DROP_BAD_PAD);
	len = build(p, 0x27, 1, 4, T_QPN);
	GRC(&g, parse_exact(p, len, &pkt), -SNAA_DROP_BAD_PAD);
	len = build(p, 0x0e, 1, 256, T_QPN);
	GRC(&g, parse_exact(p, len, &pkt), -SNAA_DROP_BAD_PAD);
	len = build(p, 0x11, 1, 0, T_QPN);
	GRC(&g, parse_exact(p, len, &pkt), -SNAA_DROP_BAD_PAD);
	len = build(p, 0x0c, 3, 0, T_QPN);
	GRC(&g, parse_exact(p, len, &pkt), -SNAA_DROP_BAD_PAD);
	len = build(p, 0x14, 2, 0, T_QPN);
	GRC(&g, parse_exact(p, len, &pkt), -SNAA_DROP_BAD_PAD);
	len = build(p, 0x12, 1, 4, T_QPN);
	GRC(&g, parse_exact(p, len, &pkt), -SNAA_DROP_BAD_PAD);
	len = build(p, 0x28, 3, 4, T_QPN);	/* LAST/ONLY may */
	GRC(&g, parse_exact(p, len, &pkt), 0);
	len = build(p, 0x2a, 3, 4, T_QPN);
	GRC(&g, parse_exact(p, len, &pkt), 0);
	gend(&g, "parse: pad count only on LAST/ONLY packets with payload");

	/* payload shorter than the pad */
	for (op = 1; op <= 3; op++) {
		len = build(p, 0x24, (__u8)op, 0, T_QPN);
		GRC(&g, parse_exact(p, len, &pkt),
		    -SNAA_DROP_PAD_EXCEEDS_PAYLOAD);
		len = build(p, 0x22, (__u8)op, 0, T_QPN);
		GRC(&g, parse_exact(p, len, &pkt),
		    -SNAA_DROP_PAD_EXCEEDS_PAYLOAD);
		len = build(p, 0x2b, (__u8)op, 0, T_QPN);
		GRC(&g, parse_exact(p, len, &pkt),
		    -SNAA_DROP_PAD_EXCEEDS_PAYLOAD);
		len = build(p, 0x24, (__u8)op, 4, T_QPN);
		GRC(&g, parse_exact(p, len, &pkt), 0);
		GEQ(&g, pkt.payload_len, 4 - op);
	}
	gend(&g, "parse: pad larger than payload + pad");

	/* lengths */
	len = build(p, 0x11, 0, 4, T_QPN);
	GRC(&g, parse_exact(p, len, &pkt), -SNAA_DROP_BAD_LENGTH);
	len = build(p, 0x0c, 0, 4, T_QPN);
	GRC(&g, parse_exact(p, len, &pkt), -SNAA_DROP_BAD_LENGTH);
	len = build(p, 0x12, 0, 8, T_QPN);
	GRC(&g, parse_exact(p, len, &pkt), -SNAA_DROP_BAD_LENGTH);
	len = build(p, 0x13, 0, 4, T_QPN);
	GRC(&g, parse_exact(p, len, &pkt), -SNAA_DROP_BAD_LENGTH);
	for (op = 0; op <= 8192; op += 4) {
		int want = snaa_is_ib_mtu(op) ? 0 : -SNAA_DROP_BAD_LENGTH;

		len = build(p, 0x20, 0, op, T_QPN);
		rc = parse_exact(p, len, &pkt);
		gchk(&g, rc == want, "SEND_FIRST %u: %s", op, reason(rc));
		len = build(p, 0x27, 0, op, T_QPN);
		rc = parse_exact(p, len, &pkt);
		gchk(&g, rc == want, "WRITE_MIDDLE %u: %s", op, reason(rc));
		len = build(p, 0x24, 0, op, T_QPN);
		rc = parse_exact(p, len, &pkt);
		gchk(&g, rc == (op <= 4096 ? 0 : -SNAA_DROP_BAD_LENGTH),
		     "SEND_ONLY %u: %s", op, reason(rc));
		len = build(p, 0x22, 0, op, T_QPN);
		rc = parse_exact(p, len, &pkt);
		gchk(&g, rc == (op && op <= 4096 ? 0 : -SNAA_DROP_BAD_LENGTH),
		     "SEND_LAST %u: %s", op, reason(rc));
	}
	len = build(p, 0x24, 3, 4100, T_QPN);	/* 4097 bytes */
	GRC(&g, parse_exact(p, len, &pkt), -SNAA_DROP_BAD_LENGTH);
	len = build(p, 0x24, 3, 4096, T_QPN);	/* 4093 bytes */
	GRC(&g, parse_exact(p, len, &pkt), 0);
	len = build(p, 0x29, 0, 0, T_QPN);	/* empty LAST */
	GRC(&g, parse_exact(p, len, &pkt), -SNAA_DROP_BAD_LENGTH);
	len = build(p, 0x0f, 0, 0, T_QPN);
	GRC(&g, parse_exact(p, len, &pkt), -SNAA_DROP_BAD_LENGTH);
	len = build(p, 0x10, 0, 0, T_QPN);	/* empty ONLY is fine */
	GRC(&g, parse_exact(p, len, &pkt), 0);
	gend(&g, "parse: payload lengths (none, IB MTU, empty LAST, "
	     "> 4096)");

	for (op = 1; op < 8; op++) {
		if (!(op & 3))
			continue;
		len = build(p, 0x24, 0, op, T_QPN);
		GRC(&g, parse_exact(p, len, &pkt), -SNAA_DROP_UNALIGNED);
		len = build(p, 0x2b, 3, op, T_QPN);
		GRC(&g, parse_exact(p, len, &pkt), -SNAA_DROP_UNALIGNED);
	}
	gend(&g, "parse: payload + pad not a multiple of 4");

	len = build(p, 0x24, 0, 4, 0);
	GRC(&g, parse_exact(p, len, &pkt), -SNAA_DROP_BAD_QPN);
	len = build(p, 0x24, 0, 4, SNAA_MULTICAST_QPN);
	GRC(&g, parse_exact(p, len, &pkt), -SNAA_DROP_BAD_QPN);
	len = build(p, 0x04, 0, 4, SNAA_MULTICAST_QPN);
	GRC(&g, parse_exact(p, len, &pkt), -SNAA_DROP_BAD_QPN);
	len = build(p, 0x11, 0, 0, 0);
	GRC(&g, parse_exact(p, len, &pkt), -SNAA_DROP_BAD_QPN);
	len = build(p, 0x64, 0, 4, 0);
	GRC(&g, parse_exact(p, len, &pkt), -SNAA_DROP_BAD_QPN);
	len = build(p, 0x64, 0, 4, SNAA_MULTICAST_QPN);
	GRC(&g, parse_exact(p, len, &pkt), 0);
	len = build(p, 0x64, 0, 4, 1);
	GRC(&g, parse_exact(p, len, &pkt), 0);
	len = build(p, 0x20, 1, 256, 0);	/* QPN before pad */
	GRC(&g, parse_exact(p, len, &pkt), -SNAA_DROP_BAD_QPN);
	len = build(p, 0x24, 0, 4, 0);		/* length before QPN */
	GRC(&g, parse_exact(p, 15, &pkt), -SNAA_DROP_TRUNCATED);
	gend(&g, "parse: destination QPN 0, multicast QPN only on UD");

	/* reserved fields, SE, M, AckReq, P_Key are not the parser's */
	len = build(p, 0x24, 0, 4, T_QPN);
	p[1] |= SNAA_BTH_SE | SNAA_BTH_MIG;
	p[2] = 0x00;
	p[3] = 0x00;
	p[4] = 0xff;
	p[8] = 0xff;
	GRC(&g, parse_exact(p, len, &pkt), 0);
	GEQ(&g, pkt.bth.resv8a, 0xff);
	GEQ(&g, pkt.bth.resv7, 0x7f);
	GEQ(&g, pkt.bth.pkey, 0);
	gend(&g, "parse: reserved bits and P_Key are left to the caller");
}

static void test_drop_helpers(void)
{
	struct grp g = { 0 };
	struct snaa_pkt pkt;
	__u8 p[600];
	size_t len;
	int i, j;

	for (i = 0; i < SNAA_DROP_NR; i++) {
		const char *n = snaa_drop_reason_name(i);

		gchk(&g, n && strcmp(n, "?") && !strcmp(n,
		     snaa_drop_reason_name(-i)), "reason %d", i);
		for (j = 0; j < i; j++)
			gchk(&g, strcmp(n, snaa_drop_reason_name(j)),
			     "reasons %d and %d share a name", i, j);
	}
	gchk(&g, !strcmp(snaa_drop_reason_name(SNAA_DROP_NR), "?"), "NR");
	gchk(&g, !strcmp(snaa_drop_reason_name(-1000), "?"), "-1000");
	gchk(&g, !strcmp(snaa_drop_reason_name(SNAA_DROP_NONE), "none"),
	     "none");
	gend(&g, "drop reason names");

	GRC(&g, snaa_pkey_check(0xffff, 0xffff), 0);
	GRC(&g, snaa_pkey_check(0x7fff, 0xffff), 0);
	GRC(&g, snaa_pkey_check(0xffff, 0x7fff), 0);
	GRC(&g, snaa_pkey_check(0x7fff, 0x7fff), -SNAA_DROP_BAD_PKEY);
	GRC(&g, snaa_pkey_check(0x8001, 0xffff), -SNAA_DROP_BAD_PKEY);
	GRC(&g, snaa_pkey_check(0x8000, 0x8000), -SNAA_DROP_BAD_PKEY);
	GRC(&g, snaa_pkey_check(0x0000, 0xffff), -SNAA_DROP_BAD_PKEY);
	gend(&g, "pkey_check: full/limited membership");

	len = build(p, 0x20, 0, 256, T_QPN);
	snaa_parse(p, len, &pkt);
	GRC(&g, snaa_pkt_check_mtu(&pkt, 256), 0);
	GRC(&g, snaa_pkt_check_mtu(&pkt, 512), -SNAA_DROP_MTU);
	len = build(p, 0x27, 0, 512, T_QPN);
	snaa_parse(p, len, &pkt);
	GRC(&g, snaa_pkt_check_mtu(&pkt, 256), -SNAA_DROP_MTU);
	GRC(&g, snaa_pkt_check_mtu(&pkt, 512), 0);
	len = build(p, 0x24, 3, 260, T_QPN);	/* 257 bytes */
	snaa_parse(p, len, &pkt);
	GRC(&g, snaa_pkt_check_mtu(&pkt, 256), -SNAA_DROP_MTU);
	GRC(&g, snaa_pkt_check_mtu(&pkt, 512), 0);
	len = build(p, 0x28, 0, 256, T_QPN);
	snaa_parse(p, len, &pkt);
	GRC(&g, snaa_pkt_check_mtu(&pkt, 256), 0);
	len = build(p, 0x2a, 0, 0, T_QPN);
	snaa_parse(p, len, &pkt);
	GRC(&g, snaa_pkt_check_mtu(&pkt, 256), 0);
	gend(&g, "pkt_check_mtu: FIRST/MIDDLE == MTU, LAST/ONLY <= MTU");
}

/* ------------------------------------------------------------------ */
/* ICRC                                                                */
/* ------------------------------------------------------------------ */

static void test_icrc_basics(void)
{
	static const __u8 v4[40] = {
		/* IPv4: TOS 0xb8, ID 0x1234, DF, TTL 63, csum 0xabcd */
		0x45, 0xb8, 0x00, 0x3c, 0x12, 0x34, 0x40, 0x00,
		0x3f, 0x11, 0xab, 0xcd, 0xc6, 0x12, 0x00, 0x02,
		0xc6, 0x12, 0x00, 0x01,
		/* UDP: csum 0x55aa */
		0xc0, 0xde, 0x12, 0xb7, 0x00, 0x28, 0x55, 0xaa,
		/* BTH: resv8a 0x5a */
		0x24, 0x30, 0xff, 0xff, 0x5a, 0x00, 0xd0, 0x01,
		0x80, 0x00, 0x00, 0x07,
	};
	static const __u8 v4_masked[40] = {
		0x45, 0xff, 0x00, 0x3c, 0x12, 0x34, 0x40, 0x00,
		0xff, 0x11, 0xff, 0xff, 0xc6, 0x12, 0x00, 0x02,
		0xc6, 0x12, 0x00, 0x01,
		0xc0, 0xde, 0x12, 0xb7, 0x00, 0x28, 0xff, 0xff,
		0x24, 0x30, 0xff, 0xff, 0xff, 0x00, 0xd0, 0x01,
		0x80, 0x00, 0x00, 0x07,
	};
	static const __u8 v6[60] = {
		/* IPv6: TC 0xb8, flow label 0xabcde, hop limit 63 */
		0x6b, 0x8a, 0xbc, 0xde, 0x00, 0x28, 0x11, 0x3f,
		0x20, 0x01, 0x00, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2,
		0x20, 0x01, 0x00, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
		0xc0, 0xde, 0x12, 0xb7, 0x00, 0x28, 0x12, 0x34,
		0x24, 0x30, 0xff, 0xff, 0x01, 0x00, 0xd0, 0x01,
		0x80, 0x00, 0x00, 0x07,
	};
	static const __u8 v6_masked[60] = {
		0x6f, 0xff, 0xff, 0xff, 0x00, 0x28, 0x11, 0xff,
		0x20, 0x01, 0x00, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2,
		0x20, 0x01, 0x00, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
		0xc0, 0xde, 0x12, 0xb7, 0x00, 0x28, 0xff, 0xff,
		0x24, 0x30, 0xff, 0xff, 0xff, 0x00, 0xd0, 0x01,
		0x80, 0x00, 0x00, 0x07,
	};
	static const __u8 ff8[8] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	};
	struct grp g = { 0 };
	__u8 buf[SNAA_ICRC_PSEUDO_HDR_MAX + 8], pkt[64], data[256];
	__u32 whole, reg;
	size_t i, cut;

	GEQ(&g, ~test_crc32_le(~0u, "123456789", 9), 0xcbf43926);
	for (i = 0; i < sizeof(data); i++)
		data[i] = (__u8)lcg();
	GEQ(&g, test_crc32_le(0x12345678, data, sizeof(data)),
	    test_crc32_le_bitwise(0x12345678, data, sizeof(data)));
	GEQ(&g, test_crc32_le(0xffffffff, ff8, 8), SNAA_ICRC_SEED);
	gend(&g, "test CRC-32 check value; ICRC seed = CRC of 8 x 0xff");

	memset(buf, 0xee, sizeof(buf));
	GEQ(&g, snaa_icrc_pseudo_hdr(buf, v4, 0, v4 + 28), 40);
	bytes_eq(&g, buf, v4_masked, 40, "IPv4 pseudo header");
	GEQ(&g, buf[40], 0xee);
	memset(buf, 0xee, sizeof(buf));
	GEQ(&g, snaa_icrc_pseudo_hdr(buf, v6, 1, v6 + 48), 60);
	bytes_eq(&g, buf, v6_masked, 60, "IPv6 pseudo header");
	GEQ(&g, buf[60], 0xee);
	GEQ(&g, SNAA_ICRC_PSEUDO_HDR_V4, 40);
	GEQ(&g, SNAA_ICRC_PSEUDO_HDR_V6, 60);
	gend(&g, "pseudo header: variant fields set to ones");

	/* begin + pieces + finish == compute, for every split */
	memcpy(pkt, v4 + 28, 12);
	for (i = 12; i < 48; i++)
		pkt[i] = (__u8)(i * 3);
	whole = snaa_icrc_compute(test_crc32_le, v4, 0, pkt, 48);
	reg = test_crc32_le(0xffffffff, ff8, 8);
	reg = test_crc32_le(reg, v4_masked, 40);
	reg = test_crc32_le(reg, pkt + 12, 36);
	GEQ(&g, whole, ~reg);
	for (cut = 12; cut <= 48; cut++) {
		reg = snaa_icrc_begin(test_crc32_le, v4, 0, pkt);
		reg = test_crc32_le(reg, pkt + 12, cut - 12);
		reg = test_crc32_le(reg, pkt + cut, 48 - cut);
		if (snaa_icrc_finish(reg) != whole)
			gchk(&g, 0, "split at %zu", cut);
	}
	gchk(&g, 1, "splits");
	gend(&g, "ICRC computed incrementally over any split");

	snaa_icrc_put(buf, 0x11223344);
	{
		static const __u8 le[4] = { 0x44, 0x33, 0x22, 0x11 };

		bytes_eq(&g, buf, le, 4, "ICRC stored LSB first");
	}
	GEQ(&g, snaa_icrc_get(buf), 0x11223344);
	snaa_icrc_put(pkt + 48, whole);
	GRC(&g, snaa_icrc_verify(test_crc32_le, v4, 0, pkt, 52), 0);
	pkt[20] ^= 0x40;
	GRC(&g, snaa_icrc_verify(test_crc32_le, v4, 0, pkt, 52),
	    -SNAA_DROP_BAD_ICRC);
	pkt[20] ^= 0x40;
	pkt[50] ^= 1;
	GRC(&g, snaa_icrc_verify(test_crc32_le, v4, 0, pkt, 52),
	    -SNAA_DROP_BAD_ICRC);
	GRC(&g, snaa_icrc_verify(test_crc32_le, v4, 0, pkt, 15),
	    -SNAA_DROP_TRUNCATED);
	gend(&g, "ICRC store/load/verify");
}

/* ------------------------------------------------------------------ */
/* Known-answer vectors captured from rdma_rxe                         */
/* ------------------------------------------------------------------ */

struct frame {
	char label[96];
	__u8 b[2048];
	size_t len;
};

/* Reads "LABEL HEX" lines; returns the number of frames, -1 on error. */
static int load_frames(const char *path, struct frame *fr, int max)
{
	struct hexline h = { 0 };
	FILE *f = fopen(path, "r");
	int n = 0, rc;

	if (!f)
		return -1;
	while ((rc = hexline_read(f, &h)) > 0) {
		if (n == max || strlen(h.label) >= sizeof(fr->label) ||
		    h.len > sizeof(fr->b)) {
			rc = -1;
			break;
		}
		strcpy(fr[n].label, h.label);
		memcpy(fr[n].b, h.data, h.len);
		fr[n].len = h.len;
		n++;
	}
	hexline_free(&h);
	fclose(f);
	return rc < 0 ? -1 : n;
}

/* Positions of the variant bits: mask[i] has the bits that are masked. */
static void variant_mask(__u8 *mask, size_t n, int v6, size_t ip_len)
{
	memset(mask, 0, n);
	if (v6) {
		mask[0] = 0x0f;
		mask[1] = mask[2] = mask[3] = 0xff;
		mask[7] = 0xff;
	} else {
		mask[1] = 0xff;
		mask[8] = 0xff;
		mask[10] = mask[11] = 0xff;
	}
	mask[ip_len + 6] = mask[ip_len + 7] = 0xff;	/* UDP checksum */
	mask[ip_len + 8 + 4] = 0xff;			/* BTH resv8a */
}

static void check_frame(const struct frame *fr, int idx,
			const struct snaa_opcode_info **prev,
			__u32 *prev_psn, __u32 *prev_qpn)
{
	static __u8 b[2048], mask[2048];
	struct grp g = { 0 };
	struct snaa_pkt pkt;
	const __u8 *ip;
	char name[64], *dot;
	size_t ip_len, udp_len, len, i, covered;
	__u32 icrc = 0, stored;
	unsigned int et, bit, nvar = 0, ninv = 0;
	int v6, rc, pad = 0;

	memcpy(b, fr->b, fr->len);
	et = snaa_get_be16(b + 12);
	v6 = et == 0x86dd;
	gchk(&g, et == 0x0800 || v6, "ethertype 0x%04x", et);
	ip = b + 14;
	ip_len = v6 ? 40 : 20;
	if (!v6)
		gchk(&g, ip[0] == 0x45 && ip[9] == 17, "IPv4 IHL 5, UDP");
	else
		gchk(&g, ip[6] == 17, "IPv6 next header UDP");
	GEQ(&g, snaa_get_be16(ip + ip_len + 2), SNAA_ROCE_V2_UDP_DPORT);
	udp_len = snaa_get_be16(ip + ip_len + 4);
	GEQ(&g, 14 + ip_len + udp_len, fr->len);
	if (g.bad)
		goto out;
	len = udp_len - 8;
	{
		__u8 *bth = b + 14 + ip_len + 8;

		/* parser */
		rc = snaa_parse(bth, len, &pkt);
		GRC(&g, rc, 0);
		if (rc)
			goto out;
		dot = strchr(fr->label, '.');
		snprintf(name, sizeof(name), "%s", dot ? dot + 1 : "");
		dot = strchr(name, '.');
		if (dot) {
			char *pd = strstr(dot, ".pad");

			if (pd)
				pad = pd[4] - '0';
			*dot = 0;
		}
		gchk(&g, !strcmp(pkt.op->name, name), "opcode %s, label %s",
		     pkt.op->name, name);
		GEQ(&g, pkt.bth.pad, pad);
		for (i = 0; i < (size_t)pad; i++)
			GEQ(&g, bth[pkt.payload_off + pkt.payload_len + i], 0);
		GEQ(&g, pkt.bth.resv8a, 0);
		GEQ(&g, pkt.bth.tver, 0);
		GEQ(&g, pkt.bth.pkey, SNAA_DEFAULT_PKEY);

		/* opcode order and PSNs within each QP and direction */
		{
			int slot = (pkt.op->flags & SNAA_OPF_REQ) ? 0 : 1;
			int k, found = -1, free_k = -1;

			for (k = 0; k < 8; k++) {
				if (prev[k] && prev_qpn[k] ==
				    (pkt.bth.dqpn | (__u32)slot << 24))
					found = k;
				if (!prev[k] && free_k < 0)
					free_k = k;
			}
			if (found >= 0) {
				GEQ(&g, snaa_opcode_seq(prev[found], pkt.op),
				    SNAA_SEQ_OK);
				if (pkt.op->transport == SNAA_TR_UC)
					GEQ(&g, pkt.bth.psn,
					    snaa_psn_add(prev_psn[found], 1));
			} else {
				GEQ(&g, snaa_opcode_seq(NULL, pkt.op),
				    SNAA_SEQ_OK);
				found = free_k;
			}
			if (found >= 0) {
				prev[found] = pkt.op;
				prev_psn[found] = pkt.bth.psn;
				prev_qpn[found] = pkt.bth.dqpn |
						  (__u32)slot << 24;
			}
		}

		/* ICRC known answer */
		stored = snaa_icrc_get(bth + pkt.icrc_off);
		icrc = snaa_icrc_compute(test_crc32_le, ip, v6, bth,
					 pkt.icrc_off);
		gchk(&g, icrc == stored, "ICRC 0x%08x, captured 0x%08x", icrc,
		     stored);
		GRC(&g, snaa_icrc_verify(test_crc32_le, ip, v6, bth, len), 0);

		/*
		 * Flip every bit of IP, UDP and BTH, and one bit in each
		 * later byte: variant bits must not change the ICRC, all
		 * others must.
		 */
		covered = ip_len + 8 + len - 4;
		variant_mask(mask, covered, v6, ip_len);
		for (i = 0; i < covered; i++) {
			for (bit = 0; bit < 8; bit++) {
				__u8 m = (__u8)(1u << bit);
				__u32 x;

				if (i >= ip_len + 8 + 12 && bit != (i & 7))
					continue;
				b[14 + i] ^= m;
				x = snaa_icrc_compute(test_crc32_le, ip, v6,
						      bth, pkt.icrc_off);
				b[14 + i] ^= m;
				if (mask[i] & m) {
					nvar++;
					if (x != icrc)
						gchk(&g, 0, "variant byte %zu "
						     "bit %u changes the ICRC",
						     i, bit);
				} else {
					ninv++;
					if (x == icrc)
						gchk(&g, 0, "invariant byte %zu "
						     "bit %u does not change "
						     "the ICRC", i, bit);
				}
			}
		}
		/* v6: TC+flow label 28, hop limit 8; v4: TOS, TTL 16, csum 16 */
		GEQ(&g, nvar, (v6 ? 28 + 8 : 16 + 16) + 16 + 8);
		gchk(&g, ninv > 0, "invariant bits");
	}
out:
	result(!g.bad, "rxe vector %d %s (%zu bytes): parse, ICRC "
		    "0x%08x, %u variant/%u invariant bit flips", idx,
		    fr->label, fr->len, g.bad ? 0 : icrc, nvar, ninv);
}

static void test_vectors(const char *file, int want_v6)
{
	static struct frame fr[64];
	const struct snaa_opcode_info *prev[8] = { 0 };
	__u32 prev_psn[8] = { 0 }, prev_qpn[8] = { 0 };
	char path[512];
	int n, i, nv6 = 0;

	snprintf(path, sizeof(path), "%s/%s", SNAA_VECTOR_DIR, file);
	n = load_frames(path, fr, (int)ARRAY_SIZE(fr));
	result(n >= 10, "%s: %d frames loaded", file, n);
	for (i = 0; i < n; i++) {
		nv6 += snaa_get_be16(fr[i].b + 12) == 0x86dd;
		check_frame(&fr[i], i, prev, prev_psn, prev_qpn);
	}
	result(n > 0 && nv6 == (want_v6 ? n : 0), "%s: all IPv%d",
		    file, want_v6 ? 6 : 4);
}

int main(void)
{

	ktap_header("snaa_wire");
	test_mtu();
	test_byteorder();
	test_bth();
	test_ext_headers();
	test_opcode_table();
	test_req_opcode();
	test_opcode_seq();
	test_psn();
	test_parse_valid();
	test_parse_truncation();
	test_parse_malformed();
	test_drop_helpers();
	test_icrc_basics();
	test_vectors("rxe-ipv4.hex", 0);
	test_vectors("rxe-ipv6.hex", 1);
	return ktap_finish();
}
