// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target: snaa_parse(), snaa_pkt_check_mtu(), snaa_pkey_check().
 *
 * Input: a RoCEv2 packet from the first byte of the BTH to the last byte
 * of the ICRC (the UDP payload), exactly what snaa_parse() is given.
 * The seeds are rdma_rxe's packets from tests/unit/vectors/.
 *
 * Oracles:
 *
 * 1. Verdict.  ref_verdict() is a second reading of the rules, written
 *    from IBA and from the documentation of enum snaa_drop_reason and
 *    snaa_parse() without the opcode table: it collects every rule the
 *    packet breaks.  snaa_parse() must accept exactly the packets that
 *    break none; when it rejects, its reason must be one the packet
 *    breaks, and from the earliest group in the documented order (BTH
 *    length, TVer, opcode, header length, QPN, pad, payload length).
 *    A rejected packet carries no payload offsets, and @op is set
 *    exactly when the opcode has a table entry and got checked.
 *
 * 2. Decoding.  For an accepted packet: the table entry agrees with
 *    IBA (position, kind, direction, and ref_layout(): which extension
 *    headers, their offsets, the header length); payload offset,
 *    payload, pad and ICRC add up to the buffer; every decoded field
 *    equals a big-endian load at its IBA offset; fields of absent
 *    headers stay zero; and encoding the decoded headers with the
 *    *_set() codecs into a buffer holding the complement of the input
 *    gives back the input bytes exactly - except DETH byte 4 (reserved,
 *    not decoded, written as 0 by snaa_deth_set()), which must come out
 *    0.  The single-field accessors and the PSN/AckReq setters touch
 *    only their own bits.
 *
 * 3. MTU.  snaa_pkt_check_mtu() for the five IB MTUs and one MTU from
 *    the input: FIRST and MIDDLE packets carry exactly the MTU, LAST and
 *    ONLY at most the MTU; a FIRST/MIDDLE packet fits exactly one IB MTU.
 *
 * 4. P_Key.  snaa_pkey_check() for the packet's P_Key against port
 *    P_Keys (fixed ones and one from the input): IBA 10.9.3, a P_Key
 *    with low 15 bits zero is invalid and matches nothing; otherwise two
 *    P_Keys match when they name the same partition and they are not
 *    both limited members.
 */
#include <string.h>

#include "snaa_wire.h"
#include "fuzz.h"

/* ------------------------------------------------------------------ */
/* Reference: IBA's packet layout, without snaa's opcode table         */
/* ------------------------------------------------------------------ */

enum ref_pos { RP_FIRST, RP_MIDDLE, RP_LAST, RP_ONLY };

enum ref_class { REF_RESERVED, REF_UNSUPPORTED, REF_SUPPORTED };

/* An opcode snaa implements, as IBA Vol 1 9.2-9.4 describes it. */
struct ref_op {
	enum ref_pos pos;
	uint32_t kind;	/* SNAA_OPF_SEND, _WRITE, _READ, _ATOMIC or _ACK */
	int resp;	/* sent by the responder */
	int payload;	/* may carry a payload */
	int ud;		/* datagram: the multicast QPN is allowed */
	/* extension headers present */
	int deth, reth, atmeth, aeth, atmack, immdt, ieth;
};

/* Offsets from the BTH start, 0 for an absent header. */
struct ref_layout {
	unsigned int deth, reth, atmeth, aeth, atmack, immdt, ieth;
	unsigned int hdr_len;
};

/* Operation codes (bits 4-0) of RC, IBA Table 35; 0 if undefined. */
static int ref_rc_op(unsigned int op, struct ref_op *r)
{
	*r = (struct ref_op){ .pos = RP_ONLY };
	switch (op) {
	case 0x00: case 0x06: case 0x0d:
		r->pos = RP_FIRST;
		break;
	case 0x01: case 0x07: case 0x0e:
		r->pos = RP_MIDDLE;
		break;
	case 0x02: case 0x03: case 0x08: case 0x09: case 0x0f: case 0x16:
		r->pos = RP_LAST;
		break;
	case 0x04: case 0x05: case 0x0a: case 0x0b: case 0x0c: case 0x10:
	case 0x11: case 0x12: case 0x13: case 0x14: case 0x17:
		break;
	default:
		return 0;
	}
	if (op <= 0x05 || op >= 0x16)
		r->kind = SNAA_OPF_SEND;
	else if (op <= 0x0b)
		r->kind = SNAA_OPF_WRITE;
	else if (op <= 0x10)
		r->kind = SNAA_OPF_READ;	/* request and responses */
	else if (op == 0x11)
		r->kind = SNAA_OPF_ACK;
	else
		r->kind = SNAA_OPF_ATOMIC;	/* requests and atomic ACK */
	r->resp = op >= 0x0d && op <= 0x12;
	/* SEND, RDMA WRITE, READ responses, SEND with invalidate */
	r->payload = op <= 0x0b || (op >= 0x0d && op <= 0x10) || op >= 0x16;
	r->reth = op == 0x06 || op == 0x0a || op == 0x0b || op == 0x0c;
	r->immdt = op == 0x03 || op == 0x05 || op == 0x09 || op == 0x0b;
	/* READ response FIRST/LAST/ONLY, ACK, atomic ACK */
	r->aeth = op == 0x0d || (op >= 0x0f && op <= 0x12);
	r->atmack = op == 0x12;
	r->atmeth = op == 0x13 || op == 0x14;
	r->ieth = op == 0x16 || op == 0x17;
	return 1;
}

/*
 * What snaa does with @opcode: RC, UC and UD are implemented (UC has
 * SEND and RDMA WRITE, UD only SEND ONLY); RD, CNP, XRC, the IBA 1.5
 * FLUSH and ATOMIC WRITE and the manufacturer-specific transports are
 * defined but not implemented; the rest is reserved.
 */
static enum ref_class ref_classify(uint8_t opcode, struct ref_op *r)
{
	unsigned int op = opcode & 0x1f;

	switch (opcode >> 5) {
	case 0:		/* RC */
		if (ref_rc_op(op, r))
			return REF_SUPPORTED;
		return op == 0x1c || op == 0x1d ? REF_UNSUPPORTED :
						  REF_RESERVED;
	case 1:		/* UC */
		return op <= 0x0b && ref_rc_op(op, r) ? REF_SUPPORTED :
							REF_RESERVED;
	case 2:		/* RD: the RC operations up to FETCH ADD, RESYNC */
		return op <= 0x15 ? REF_UNSUPPORTED : REF_RESERVED;
	case 3:		/* UD */
		if (op != 0x04 && op != 0x05)
			return REF_RESERVED;
		ref_rc_op(op, r);
		r->deth = 1;
		r->ud = 1;
		return REF_SUPPORTED;
	case 4:		/* CNP */
		return op == 0x01 ? REF_UNSUPPORTED : REF_RESERVED;
	case 5:		/* XRC */
		return op <= 0x14 || op == 0x16 || op == 0x17 ?
		       REF_UNSUPPORTED : REF_RESERVED;
	default:	/* manufacturer specific */
		return REF_UNSUPPORTED;
	}
}

/*
 * IBA header order: BTH, DETH (8), RETH (16) or AtomicETH (28),
 * AETH (4), AtomicAckETH (8), ImmDt (4) or IETH (4).
 */
static void ref_layout(const struct ref_op *r, struct ref_layout *l)
{
	unsigned int off = 12;

	*l = (struct ref_layout){ 0 };
	if (r->deth) {
		l->deth = off;
		off += 8;
	}
	if (r->reth) {
		l->reth = off;
		off += 16;
	}
	if (r->atmeth) {
		l->atmeth = off;
		off += 28;
	}
	if (r->aeth) {
		l->aeth = off;
		off += 4;
	}
	if (r->atmack) {
		l->atmack = off;
		off += 8;
	}
	if (r->immdt) {
		l->immdt = off;
		off += 4;
	}
	if (r->ieth) {
		l->ieth = off;
		off += 4;
	}
	l->hdr_len = off;
}

/*
 * The rules a packet breaks.  @all has bit (1 << reason) for each;
 * @first those of the earliest group in snaa_parse()'s documented
 * order, the only reasons it may give.
 */
struct ref_verdict {
	uint32_t all;
	uint32_t first;
	int group;
};

enum {
	G_BTH_LEN, G_TVER, G_OPCODE, G_HDR_LEN, G_QPN, G_PAD, G_PAYLOAD_LEN,
	G_NONE
};

static void ref_break(struct ref_verdict *v, int group, int reason)
{
	v->all |= 1u << reason;
	if (group < v->group) {
		v->group = group;
		v->first = 0;
	}
	if (group == v->group)
		v->first |= 1u << reason;
}

static void ref_verdict(const uint8_t *p, size_t len, struct ref_verdict *v)
{
	struct ref_layout l;
	struct ref_op r;
	enum ref_class cls;
	uint32_t qpn;
	size_t rest, payload;
	unsigned int pad;

	*v = (struct ref_verdict){ .group = G_NONE };
	if (len < 12) {
		ref_break(v, G_BTH_LEN, SNAA_DROP_TRUNCATED);
		return;
	}
	if (p[1] & 0x0f)
		ref_break(v, G_TVER, SNAA_DROP_BAD_TVER);
	cls = ref_classify(p[0], &r);
	if (cls != REF_SUPPORTED) {
		ref_break(v, G_OPCODE, cls == REF_RESERVED ?
			  SNAA_DROP_BAD_OPCODE : SNAA_DROP_UNSUPPORTED);
		return;		/* no layout to check the rest against */
	}
	ref_layout(&r, &l);
	if (len < l.hdr_len + 4) {
		ref_break(v, G_HDR_LEN, SNAA_DROP_TRUNCATED);
		return;
	}
	qpn = fz_be(p + 5, 3);
	if (qpn == 0 || (qpn == 0xffffff && !r.ud))
		ref_break(v, G_QPN, SNAA_DROP_BAD_QPN);

	pad = (p[1] >> 4) & 3;
	rest = len - l.hdr_len - 4;	/* payload + pad */
	/* Only the packet that ends a message with payload is padded. */
	if (pad && !(r.payload && (r.pos == RP_LAST || r.pos == RP_ONLY)))
		ref_break(v, G_PAD, SNAA_DROP_BAD_PAD);
	if (rest % 4)
		ref_break(v, G_PAD, SNAA_DROP_UNALIGNED);
	if (pad > rest) {
		ref_break(v, G_PAD, SNAA_DROP_PAD_EXCEEDS_PAYLOAD);
		return;		/* no payload length */
	}
	payload = rest - pad;
	if (payload > 4096 || (payload && !r.payload))
		ref_break(v, G_PAYLOAD_LEN, SNAA_DROP_BAD_LENGTH);
	if ((r.pos == RP_FIRST || r.pos == RP_MIDDLE) &&
	    !fz_is_ib_mtu((uint32_t)payload))
		ref_break(v, G_PAYLOAD_LEN, SNAA_DROP_BAD_LENGTH);
	if (r.pos == RP_LAST && payload == 0)
		ref_break(v, G_PAYLOAD_LEN, SNAA_DROP_BAD_LENGTH);
}

/* ------------------------------------------------------------------ */
/* Oracles                                                             */
/* ------------------------------------------------------------------ */

/* The table entry against the IBA layout. */
static void check_table(const struct snaa_opcode_info *op, uint8_t opcode,
			const struct ref_op *r, const struct ref_layout *l)
{
	static const uint32_t pos_flag[] = {
		[RP_FIRST] = SNAA_OPF_FIRST, [RP_MIDDLE] = SNAA_OPF_MIDDLE,
		[RP_LAST] = SNAA_OPF_LAST, [RP_ONLY] = SNAA_OPF_ONLY,
	};
	const uint32_t pos_mask = SNAA_OPF_FIRST | SNAA_OPF_MIDDLE |
				  SNAA_OPF_LAST | SNAA_OPF_ONLY;
	uint32_t f = op->flags;

	FUZZ_CHECK(op->name && op->opcode == opcode &&
		   op->transport == opcode >> 5, "entry of 0x%02x", opcode);
	FUZZ_CHECK(!(f & SNAA_OPF_UNSUPPORTED), "%s", op->name);
	FUZZ_CHECK((f & pos_mask) == pos_flag[r->pos], "%s: flags 0x%x",
		   op->name, f);
	FUZZ_CHECK(!!(f & SNAA_OPF_START) ==
		   (r->pos == RP_FIRST || r->pos == RP_ONLY) &&
		   !!(f & SNAA_OPF_END) ==
		   (r->pos == RP_LAST || r->pos == RP_ONLY),
		   "%s: START/END in flags 0x%x", op->name, f);
	FUZZ_CHECK(!!(f & SNAA_OPF_PAYLOAD) == r->payload, "%s", op->name);
	FUZZ_CHECK((f & SNAA_OPF_KIND_MASK) == r->kind &&
		   (f & (SNAA_OPF_REQ | SNAA_OPF_RESP)) ==
		   (r->resp ? SNAA_OPF_RESP : SNAA_OPF_REQ),
		   "%s: kind/direction in flags 0x%x", op->name, f);
	FUZZ_CHECK(!!(f & SNAA_OPF_DETH) == r->deth &&
		   !!(f & SNAA_OPF_RETH) == r->reth &&
		   !!(f & SNAA_OPF_ATMETH) == r->atmeth &&
		   !!(f & SNAA_OPF_AETH) == r->aeth &&
		   !!(f & SNAA_OPF_ATMACK) == r->atmack &&
		   !!(f & SNAA_OPF_IMMDT) == r->immdt &&
		   !!(f & SNAA_OPF_IETH) == r->ieth &&
		   !(f & (SNAA_OPF_RDETH | SNAA_OPF_XRCETH | SNAA_OPF_FETH |
			  SNAA_OPF_CNPR)),
		   "%s: header flags 0x%x", op->name, f);
	FUZZ_CHECK(op->hdr_len == l->hdr_len &&
		   op->ext_len == l->hdr_len - 12,
		   "%s: hdr_len %u ext_len %u, want %u", op->name, op->hdr_len,
		   op->ext_len, l->hdr_len);
	FUZZ_CHECK(op->deth_off == l->deth && op->reth_off == l->reth &&
		   op->atmeth_off == l->atmeth && op->aeth_off == l->aeth &&
		   op->atmack_off == l->atmack && op->immdt_off == l->immdt &&
		   op->ieth_off == l->ieth, "%s: header offsets", op->name);
}

/* Every decoded field against a load at its IBA offset (0 if absent). */
static void check_fields(const struct snaa_pkt *pkt, const uint8_t *p,
			 const struct ref_layout *l)
{
	const struct snaa_bth_info *b = &pkt->bth;

	FUZZ_CHECK(b->opcode == p[0] && b->se == p[1] >> 7 &&
		   b->mig == (p[1] >> 6 & 1) && b->pad == (p[1] >> 4 & 3) &&
		   b->tver == (p[1] & 0xf) && b->pkey == fz_be(p + 2, 2) &&
		   b->resv8a == p[4] && b->dqpn == fz_be(p + 5, 3) &&
		   b->ack_req == p[8] >> 7 && b->resv7 == (p[8] & 0x7f) &&
		   b->psn == fz_be(p + 9, 3), "BTH fields");
	FUZZ_CHECK(snaa_bth_opcode(p) == b->opcode &&
		   snaa_bth_se(p) == b->se && snaa_bth_pad(p) == b->pad &&
		   snaa_bth_tver(p) == b->tver &&
		   snaa_bth_pkey(p) == b->pkey &&
		   snaa_bth_dqpn(p) == b->dqpn &&
		   snaa_bth_ack_req(p) == b->ack_req &&
		   snaa_bth_psn(p) == b->psn, "BTH accessors");

	FUZZ_CHECK(l->reth ? pkt->reth.va == fz_be64(p + l->reth) &&
		   pkt->reth.rkey == fz_be(p + l->reth + 8, 4) &&
		   pkt->reth.dma_len == fz_be(p + l->reth + 12, 4) :
		   !pkt->reth.va && !pkt->reth.rkey && !pkt->reth.dma_len,
		   "RETH");
	FUZZ_CHECK(l->aeth ? pkt->aeth.syndrome == p[l->aeth] &&
		   pkt->aeth.msn == fz_be(p + l->aeth + 1, 3) :
		   !pkt->aeth.syndrome && !pkt->aeth.msn, "AETH");
	FUZZ_CHECK(l->deth ? pkt->deth.qkey == fz_be(p + l->deth, 4) &&
		   pkt->deth.sqpn == fz_be(p + l->deth + 5, 3) :
		   !pkt->deth.qkey && !pkt->deth.sqpn, "DETH");
	FUZZ_CHECK(l->atmeth ? pkt->atmeth.va == fz_be64(p + l->atmeth) &&
		   pkt->atmeth.rkey == fz_be(p + l->atmeth + 8, 4) &&
		   pkt->atmeth.swap_add == fz_be64(p + l->atmeth + 12) &&
		   pkt->atmeth.compare == fz_be64(p + l->atmeth + 20) :
		   !pkt->atmeth.va && !pkt->atmeth.rkey &&
		   !pkt->atmeth.swap_add && !pkt->atmeth.compare, "AtomicETH");
	FUZZ_CHECK(pkt->atmack == (l->atmack ? fz_be64(p + l->atmack) : 0),
		   "AtomicAckETH");
	FUZZ_CHECK(pkt->imm == (l->immdt ? fz_be(p + l->immdt, 4) : 0),
		   "ImmDt");
	FUZZ_CHECK(pkt->ieth_rkey == (l->ieth ? fz_be(p + l->ieth, 4) : 0),
		   "IETH");
}

/*
 * Encode the decoded headers over the complement of the input: every
 * header byte must be written, and written back as it was.
 */
static void check_round_trip(const struct snaa_pkt *pkt, const uint8_t *p)
{
	const struct snaa_opcode_info *op = pkt->op;
	uint8_t buf[SNAA_MAX_BTH_EXT_BYTES], save[SNAA_BTH_BYTES];
	unsigned int i, n = op->hdr_len;
	uint32_t psn;

	for (i = 0; i < n; i++)
		buf[i] = (uint8_t)~p[i];
	snaa_bth_set(buf, &pkt->bth);
	if (op->flags & SNAA_OPF_DETH)
		snaa_deth_set(buf + op->deth_off, &pkt->deth);
	if (op->flags & SNAA_OPF_RETH)
		snaa_reth_set(buf + op->reth_off, &pkt->reth);
	if (op->flags & SNAA_OPF_ATMETH)
		snaa_atmeth_set(buf + op->atmeth_off, &pkt->atmeth);
	if (op->flags & SNAA_OPF_AETH)
		snaa_aeth_set(buf + op->aeth_off, &pkt->aeth);
	if (op->flags & SNAA_OPF_ATMACK)
		snaa_atmack_set(buf + op->atmack_off, pkt->atmack);
	if (op->flags & SNAA_OPF_IMMDT)
		snaa_immdt_set(buf + op->immdt_off, pkt->imm);
	if (op->flags & SNAA_OPF_IETH)
		snaa_ieth_set(buf + op->ieth_off, pkt->ieth_rkey);

	for (i = 0; i < n; i++) {
		/* DETH resv8: normalised to 0 */
		if (op->deth_off && i == op->deth_off + 4u) {
			FUZZ_CHECK(buf[i] == 0, "%s: DETH byte 4 = 0x%02x",
				   op->name, buf[i]);
			continue;
		}
		FUZZ_CHECK(buf[i] == p[i], "%s: re-encoded byte %u = 0x%02x, "
			   "input 0x%02x", op->name, i, buf[i], p[i]);
	}

	/* The BTH setters change their own bits only. */
	memcpy(save, buf, sizeof(save));
	psn = ~pkt->bth.psn ^ (uint32_t)p[0] << 24;	/* high bits set too */
	snaa_bth_set_psn(buf, psn);
	FUZZ_CHECK(snaa_bth_psn(buf) == (psn & 0xffffff) &&
		   !memcmp(buf, save, 9), "bth_set_psn(0x%x)", psn);
	memcpy(buf, save, sizeof(save));
	snaa_bth_set_ack_req(buf, !pkt->bth.ack_req);
	FUZZ_CHECK((buf[8] ^ save[8]) == 0x80 && !memcmp(buf, save, 8) &&
		   !memcmp(buf + 9, save + 9, 3), "bth_set_ack_req");
}

static void check_mtu(const struct snaa_pkt *pkt, const struct ref_op *r,
		      uint32_t other)
{
	int fits = 0, exact = r->pos == RP_FIRST || r->pos == RP_MIDDLE;
	unsigned int i;

	for (i = 0; i <= 5; i++) {
		uint32_t mtu = i < 5 ? fz_ib_mtus[i] : other;
		int want = exact ? pkt->payload_len == mtu :
				   pkt->payload_len <= mtu;
		int rc = snaa_pkt_check_mtu(pkt, mtu);

		FUZZ_CHECK(rc == (want ? 0 : -SNAA_DROP_MTU),
			   "%s payload %u, MTU %u: %d", pkt->op->name,
			   pkt->payload_len, mtu, rc);
		fits += i < 5 && want;
	}
	FUZZ_CHECK(!exact || fits == 1, "%s payload %u fits %d IB MTUs",
		   pkt->op->name, pkt->payload_len, fits);
}

static int ref_pkey_match(uint16_t a, uint16_t b)
{
	const uint16_t full = 0x8000, partition = 0x7fff;

	if (!(a & partition) || !(b & partition))
		return 0;			/* invalid P_Key */
	if ((a & partition) != (b & partition))
		return 0;			/* other partition */
	return (a & full) || (b & full);	/* not both limited */
}

static void check_pkey(uint16_t pkey, uint16_t other)
{
	const uint16_t ports[] = {
		0xffff, 0x7fff, 0x8000, 0x0000, pkey, pkey ^ 0x8000,
		pkey ^ 0x0001, other,
	};
	unsigned int i;

	for (i = 0; i < FZ_ARRAY_SIZE(ports); i++) {
		int want = ref_pkey_match(pkey, ports[i]) ? 0 :
			   -SNAA_DROP_BAD_PKEY;

		FUZZ_CHECK(snaa_pkey_check(pkey, ports[i]) == want &&
			   snaa_pkey_check(ports[i], pkey) == want,
			   "P_Keys 0x%04x 0x%04x", pkey, ports[i]);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ref_verdict v;
	struct ref_layout l;
	struct snaa_pkt pkt;
	struct ref_op r;
	int rc, reason;

	ref_verdict(data, size, &v);
	rc = snaa_parse(data, size, &pkt);
	reason = -rc;

	/* 1. the verdict */
	FUZZ_CHECK(rc <= 0 && (rc == 0) == (v.all == 0),
		   "snaa_parse() = %d (%s), rules broken 0x%x", rc,
		   snaa_drop_reason_name(rc), v.all);
	if (size >= 12)
		check_pkey((uint16_t)fz_be(data + 2, 2),
			   (uint16_t)fz_be(data + 9, 2));
	if (rc) {
		FUZZ_CHECK(reason >= SNAA_DROP_TRUNCATED &&
			   reason <= SNAA_DROP_BAD_LENGTH &&
			   (v.first >> reason & 1),
			   "snaa_parse() = %d (%s), want one of 0x%x "
			   "(all broken: 0x%x)", rc,
			   snaa_drop_reason_name(rc), v.first, v.all);
		FUZZ_CHECK(strcmp(snaa_drop_reason_name(rc), "?") &&
			   strcmp(snaa_drop_reason_name(rc), "none"),
			   "name of %d", rc);
		FUZZ_CHECK(!pkt.payload_off && !pkt.payload_len &&
			   !pkt.icrc_off, "offsets of a rejected packet");
		/* @op is set by the opcode check, NULL for no entry */
		FUZZ_CHECK(pkt.op == (v.group < G_OPCODE ? NULL :
				      snaa_opcode_lookup(data[0])),
			   "op %p after reason %d", (const void *)pkt.op,
			   reason);
		return 0;
	}

	/* 2. an accepted packet */
	FUZZ_CHECK(ref_classify(data[0], &r) == REF_SUPPORTED, "class");
	ref_layout(&r, &l);
	FUZZ_CHECK(pkt.op && pkt.op == snaa_opcode_lookup(data[0]), "op");
	check_table(pkt.op, data[0], &r, &l);
	FUZZ_CHECK(pkt.payload_off == l.hdr_len &&
		   size == (size_t)pkt.payload_off + pkt.payload_len +
			   pkt.bth.pad + 4 && pkt.icrc_off == size - 4,
		   "%s: payload %u+%u pad %u ICRC at %u, %zu bytes",
		   pkt.op->name, pkt.payload_off, pkt.payload_len,
		   pkt.bth.pad, pkt.icrc_off, size);
	FUZZ_CHECK(pkt.payload_len <= 4096 &&
		   (pkt.payload_len + pkt.bth.pad) % 4 == 0 &&
		   (!pkt.payload_len || r.payload) &&
		   (!pkt.bth.pad || pkt.op->flags & SNAA_OPF_END),
		   "%s: payload %u pad %u", pkt.op->name, pkt.payload_len,
		   pkt.bth.pad);
	check_fields(&pkt, data, &l);
	check_round_trip(&pkt, data);

	/* 3. MTU; the PSN's low 13 bits as an arbitrary MTU */
	check_mtu(&pkt, &r, pkt.bth.psn & 0x1fff);
	return 0;
}
