/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * snaa wire format: constants, the decoded headers, the small codecs
 * (static inline) and the declarations of snaa_wire.c (opcode table,
 * parser, ICRC, drop-reason names).
 *
 * Nothing here or in snaa_wire.c depends on the kernel, so the same code
 * builds into the module and into the host unit tests, the fuzzers and
 * the test tools (tests/unit/, tests/fuzz/, selftests/snaa/rawpkt.c);
 * the few lines below that tell the two apart are the only ones.
 *
 * RoCEv2 (IBA Vol 1 Annex A17) packet, as seen by this file:
 *
 *   IPv4 (20) or IPv6 (40) | UDP (8, dport 4791) | BTH (12) |
 *   extension headers | payload | pad (0-3) | ICRC (4)
 *
 * Everything here works on byte pointers with explicit big-endian loads
 * and stores, so it is independent of the CPU's byte order and of
 * alignment.  "Offsets" are counted from the first byte of the BTH.
 */
#ifndef _SNAA_WIRE_H
#define _SNAA_WIRE_H

/* Kernel or host: the one place that knows. */
#include <linux/types.h>
#ifdef __KERNEL__
#include <linux/math64.h>
#include <linux/stddef.h>
#else
#include <stddef.h>
#endif

/* @a mod @b, also where the CPU has no 64-bit division */
static inline __u32 snaa_mod_u32(__u64 a, __u32 b)
{
#ifdef __KERNEL__
	__u32 rem;

	div_u64_rem(a, b, &rem);
	return rem;
#else
	return (__u32)(a % b);
#endif
}

/* @a / @b and, in *@rem, @a mod @b, for a 64-bit @b */
static inline __u64 snaa_div_u64_rem(__u64 a, __u64 b, __u64 *rem)
{
#ifdef __KERNEL__
	return div64_u64_rem(a, b, rem);
#else
	*rem = a % b;
	return a / b;
#endif
}

/*
 * Largest header stack around a packet's payload:
 * IPv6 (40) + UDP (8) + BTH (12) + RETH (16) + ImmDt (4) + ICRC (4).
 */
#define SNAA_MAX_HDR_OVERHEAD	84

#define SNAA_IB_MTU_MIN		256
#define SNAA_IB_MTU_MAX		4096

/* RoCE path MTU for a netdev MTU, 0 if not even 256 bytes fit. */
__u32 snaa_mtu_from_netdev(__u32 netdev_mtu);

/* True for the five IB MTUs: 256, 512, 1024, 2048, 4096. */
static inline int snaa_is_ib_mtu(__u32 len)
{
	return len >= SNAA_IB_MTU_MIN && len <= SNAA_IB_MTU_MAX &&
	       (len & (len - 1)) == 0;
}

/* ------------------------------------------------------------------ */
/* Sizes and constants                                                 */
/* ------------------------------------------------------------------ */

#define SNAA_ROCE_V2_UDP_DPORT	4791

#define SNAA_IPV4_HDR_BYTES	20	/* without options */
#define SNAA_IPV6_HDR_BYTES	40	/* without extension headers */
#define SNAA_UDP_HDR_BYTES	8

#define SNAA_BTH_BYTES		12
#define SNAA_RETH_BYTES		16	/* VA, R_Key, DMA length */
#define SNAA_IMMDT_BYTES	4
#define SNAA_AETH_BYTES		4	/* syndrome, MSN */
#define SNAA_DETH_BYTES		8	/* Q_Key, resv8, source QPN */
#define SNAA_ATMETH_BYTES	28	/* VA, R_Key, swap/add, compare */
#define SNAA_ATMACK_BYTES	8	/* original remote data */
#define SNAA_IETH_BYTES		4	/* R_Key to invalidate */
#define SNAA_RDETH_BYTES	4	/* RD only: resv8, EE context */
#define SNAA_XRCETH_BYTES	4	/* XRC only: resv8, XRC SRQ */
#define SNAA_FETH_BYTES		4	/* RC FLUSH only */
#define SNAA_CNP_BYTES		16	/* reserved bytes of a RoCEv2 CNP */
#define SNAA_ICRC_BYTES		4

/* Longest BTH + extension headers of any opcode (RD atomic). */
#define SNAA_MAX_BTH_EXT_BYTES	(SNAA_BTH_BYTES + SNAA_RDETH_BYTES + \
				 SNAA_DETH_BYTES + SNAA_ATMETH_BYTES)

#define SNAA_BTH_TVER		0
#define SNAA_DEFAULT_PKEY	0xffff
#define SNAA_PSN_MASK		0xffffffu
#define SNAA_QPN_MASK		0xffffffu
#define SNAA_MULTICAST_QPN	0xffffffu
#define SNAA_GSI_QKEY		0x80010000u

/* BTH byte 1 */
#define SNAA_BTH_SE		0x80
#define SNAA_BTH_MIG		0x40
#define SNAA_BTH_PAD_SHIFT	4
#define SNAA_BTH_PAD_MASK	0x30
#define SNAA_BTH_TVER_MASK	0x0f
/* BTH byte 8 */
#define SNAA_BTH_ACKREQ		0x80
#define SNAA_BTH_RESV7_MASK	0x7f

/* ------------------------------------------------------------------ */
/* Byte order                                                          */
/* ------------------------------------------------------------------ */

static inline __u16 snaa_get_be16(const __u8 *p)
{
	return (__u16)((p[0] << 8) | p[1]);
}

static inline __u32 snaa_get_be24(const __u8 *p)
{
	return ((__u32)p[0] << 16) | ((__u32)p[1] << 8) | p[2];
}

static inline __u32 snaa_get_be32(const __u8 *p)
{
	return ((__u32)p[0] << 24) | ((__u32)p[1] << 16) |
	       ((__u32)p[2] << 8) | p[3];
}

static inline __u64 snaa_get_be64(const __u8 *p)
{
	return ((__u64)snaa_get_be32(p) << 32) | snaa_get_be32(p + 4);
}

static inline __u32 snaa_get_le32(const __u8 *p)
{
	return ((__u32)p[3] << 24) | ((__u32)p[2] << 16) |
	       ((__u32)p[1] << 8) | p[0];
}

static inline void snaa_put_be16(__u8 *p, __u16 v)
{
	p[0] = (__u8)(v >> 8);
	p[1] = (__u8)v;
}

static inline void snaa_put_be24(__u8 *p, __u32 v)
{
	p[0] = (__u8)(v >> 16);
	p[1] = (__u8)(v >> 8);
	p[2] = (__u8)v;
}

static inline void snaa_put_be32(__u8 *p, __u32 v)
{
	p[0] = (__u8)(v >> 24);
	p[1] = (__u8)(v >> 16);
	p[2] = (__u8)(v >> 8);
	p[3] = (__u8)v;
}

static inline void snaa_put_be64(__u8 *p, __u64 v)
{
	snaa_put_be32(p, (__u32)(v >> 32));
	snaa_put_be32(p + 4, (__u32)v);
}

static inline void snaa_put_le32(__u8 *p, __u32 v)
{
	p[0] = (__u8)v;
	p[1] = (__u8)(v >> 8);
	p[2] = (__u8)(v >> 16);
	p[3] = (__u8)(v >> 24);
}

/* ------------------------------------------------------------------ */
/* Base Transport Header                                               */
/* ------------------------------------------------------------------ */

/**
 * struct snaa_bth_info - decoded Base Transport Header
 * @opcode: IBA opcode (transport in bits 7-5, operation in bits 4-0)
 * @se: solicited event
 * @mig: MigReq
 * @pad: pad count, 0-3 bytes after the payload
 * @tver: transport header version, 0
 * @pkey: partition key
 * @resv8a: byte 4 (FECN/BECN in IB, reserved in RoCEv2; sent as 0,
 *	masked out of the ICRC)
 * @dqpn: destination QP number, 24 bits
 * @ack_req: AckReq
 * @resv7: the 7 reserved bits next to AckReq (sent as 0)
 * @psn: packet sequence number, 24 bits
 */
struct snaa_bth_info {
	__u8 opcode;
	__u8 se;
	__u8 mig;
	__u8 pad;
	__u8 tver;
	__u8 resv8a;
	__u16 pkey;
	__u32 dqpn;
	__u8 ack_req;
	__u8 resv7;
	__u32 psn;
};

static inline __u8 snaa_bth_opcode(const __u8 *bth)
{
	return bth[0];
}

static inline __u8 snaa_bth_se(const __u8 *bth)
{
	return !!(bth[1] & SNAA_BTH_SE);
}

static inline __u8 snaa_bth_pad(const __u8 *bth)
{
	return (bth[1] & SNAA_BTH_PAD_MASK) >> SNAA_BTH_PAD_SHIFT;
}

static inline __u8 snaa_bth_tver(const __u8 *bth)
{
	return bth[1] & SNAA_BTH_TVER_MASK;
}

static inline __u16 snaa_bth_pkey(const __u8 *bth)
{
	return snaa_get_be16(bth + 2);
}

static inline __u32 snaa_bth_dqpn(const __u8 *bth)
{
	return snaa_get_be24(bth + 5);
}

static inline __u8 snaa_bth_ack_req(const __u8 *bth)
{
	return !!(bth[8] & SNAA_BTH_ACKREQ);
}

static inline __u32 snaa_bth_psn(const __u8 *bth)
{
	return snaa_get_be24(bth + 9);
}

static inline void snaa_bth_set_psn(__u8 *bth, __u32 psn)
{
	snaa_put_be24(bth + 9, psn & SNAA_PSN_MASK);
}

static inline void snaa_bth_set_ack_req(__u8 *bth, int ack_req)
{
	if (ack_req)
		bth[8] |= SNAA_BTH_ACKREQ;
	else
		bth[8] &= (__u8)~SNAA_BTH_ACKREQ;
}

/* snaa_bth_get() - decode the 12 bytes at @bth into @b. */
static inline void snaa_bth_get(const __u8 *bth, struct snaa_bth_info *b)
{
	b->opcode = bth[0];
	b->se = snaa_bth_se(bth);
	b->mig = !!(bth[1] & SNAA_BTH_MIG);
	b->pad = snaa_bth_pad(bth);
	b->tver = snaa_bth_tver(bth);
	b->pkey = snaa_bth_pkey(bth);
	b->resv8a = bth[4];
	b->dqpn = snaa_bth_dqpn(bth);
	b->ack_req = snaa_bth_ack_req(bth);
	b->resv7 = bth[8] & SNAA_BTH_RESV7_MASK;
	b->psn = snaa_bth_psn(bth);
}

/*
 * snaa_bth_set() - encode @b into the 12 bytes at @bth.  Fields are
 * truncated to their width; flags are taken as booleans.
 */
static inline void snaa_bth_set(__u8 *bth, const struct snaa_bth_info *b)
{
	bth[0] = b->opcode;
	bth[1] = (b->se ? SNAA_BTH_SE : 0) | (b->mig ? SNAA_BTH_MIG : 0) |
		 ((b->pad << SNAA_BTH_PAD_SHIFT) & SNAA_BTH_PAD_MASK) |
		 (b->tver & SNAA_BTH_TVER_MASK);
	snaa_put_be16(bth + 2, b->pkey);
	bth[4] = b->resv8a;
	snaa_put_be24(bth + 5, b->dqpn & SNAA_QPN_MASK);
	bth[8] = (b->ack_req ? SNAA_BTH_ACKREQ : 0) |
		 (b->resv7 & SNAA_BTH_RESV7_MASK);
	snaa_put_be24(bth + 9, b->psn & SNAA_PSN_MASK);
}

/* ------------------------------------------------------------------ */
/* Extension headers                                                   */
/* ------------------------------------------------------------------ */

/* RDMA Extended Transport Header: first/only packet of WRITE, READ req. */
struct snaa_reth_info {
	__u64 va;
	__u32 rkey;
	__u32 dma_len;
};

static inline void snaa_reth_get(const __u8 *p, struct snaa_reth_info *r)
{
	r->va = snaa_get_be64(p);
	r->rkey = snaa_get_be32(p + 8);
	r->dma_len = snaa_get_be32(p + 12);
}

static inline void snaa_reth_set(__u8 *p, const struct snaa_reth_info *r)
{
	snaa_put_be64(p, r->va);
	snaa_put_be32(p + 8, r->rkey);
	snaa_put_be32(p + 12, r->dma_len);
}

/*
 * Immediate data.  The wire holds it big-endian; these return/take it as
 * a number, so that on the wire bytes 0..3 are (imm >> 24) .. (imm & 0xff).
 * Verbs carry immediate data as a __be32 that is copied to the wire
 * unchanged: kernel callers convert with be32_to_cpu()/cpu_to_be32().
 */
static inline __u32 snaa_immdt_get(const __u8 *p)
{
	return snaa_get_be32(p);
}

static inline void snaa_immdt_set(__u8 *p, __u32 imm)
{
	snaa_put_be32(p, imm);
}

/* ACK Extended Transport Header. */
struct snaa_aeth_info {
	__u8 syndrome;
	__u32 msn;
};

/* Syndrome bits 6-5: what the AETH says. */
enum snaa_aeth_type {
	SNAA_AETH_ACK = 0,
	SNAA_AETH_RNR_NAK = 1,
	SNAA_AETH_RESERVED = 2,
	SNAA_AETH_NAK = 3,
};

/* Syndrome bits 4-0 of a NAK. */
enum snaa_aeth_nak_code {
	SNAA_NAK_PSN_SEQ_ERROR = 0,
	SNAA_NAK_INVALID_REQUEST = 1,
	SNAA_NAK_REMOTE_ACCESS_ERROR = 2,
	SNAA_NAK_REMOTE_OP_ERROR = 3,
	SNAA_NAK_INVALID_RD_REQUEST = 4,
};

#define SNAA_AETH_CREDIT_INVALID	0x1f	/* ACK: no credit count */

/* snaa_aeth_syndrome() - build a syndrome from a type and 5-bit value. */
static inline __u8 snaa_aeth_syndrome(enum snaa_aeth_type type, __u8 value)
{
	return (__u8)(((type & 3) << 5) | (value & 0x1f));
}

static inline enum snaa_aeth_type snaa_aeth_type(__u8 syndrome)
{
	return (enum snaa_aeth_type)((syndrome >> 5) & 3);
}

/* Credit count (ACK), RNR timer (RNR NAK) or NAK code (NAK). */
static inline __u8 snaa_aeth_value(__u8 syndrome)
{
	return syndrome & 0x1f;
}

static inline void snaa_aeth_get(const __u8 *p, struct snaa_aeth_info *a)
{
	a->syndrome = p[0];
	a->msn = snaa_get_be24(p + 1);
}

static inline void snaa_aeth_set(__u8 *p, const struct snaa_aeth_info *a)
{
	p[0] = a->syndrome;
	snaa_put_be24(p + 1, a->msn & 0xffffffu);
}

/* Datagram Extended Transport Header (UD). */
struct snaa_deth_info {
	__u32 qkey;
	__u32 sqpn;
};

static inline void snaa_deth_get(const __u8 *p, struct snaa_deth_info *d)
{
	d->qkey = snaa_get_be32(p);
	d->sqpn = snaa_get_be24(p + 5);
}

static inline void snaa_deth_set(__u8 *p, const struct snaa_deth_info *d)
{
	snaa_put_be32(p, d->qkey);
	p[4] = 0;
	snaa_put_be24(p + 5, d->sqpn & SNAA_QPN_MASK);
}

/* Atomic Extended Transport Header (RC CmpSwap, FetchAdd). */
struct snaa_atmeth_info {
	__u64 va;
	__u32 rkey;
	__u64 swap_add;
	__u64 compare;
};

static inline void snaa_atmeth_get(const __u8 *p, struct snaa_atmeth_info *a)
{
	a->va = snaa_get_be64(p);
	a->rkey = snaa_get_be32(p + 8);
	a->swap_add = snaa_get_be64(p + 12);
	a->compare = snaa_get_be64(p + 20);
}

static inline void snaa_atmeth_set(__u8 *p, const struct snaa_atmeth_info *a)
{
	snaa_put_be64(p, a->va);
	snaa_put_be32(p + 8, a->rkey);
	snaa_put_be64(p + 12, a->swap_add);
	snaa_put_be64(p + 20, a->compare);
}

/* AtomicAckETH: the original remote data. */
static inline __u64 snaa_atmack_get(const __u8 *p)
{
	return snaa_get_be64(p);
}

static inline void snaa_atmack_set(__u8 *p, __u64 orig)
{
	snaa_put_be64(p, orig);
}

/* IETH: the R_Key a SEND with invalidate invalidates. */
static inline __u32 snaa_ieth_get(const __u8 *p)
{
	return snaa_get_be32(p);
}

static inline void snaa_ieth_set(__u8 *p, __u32 rkey)
{
	snaa_put_be32(p, rkey);
}

/* ------------------------------------------------------------------ */
/* Opcodes                                                             */
/* ------------------------------------------------------------------ */

/* Transport: bits 7-5 of the opcode. */
enum snaa_transport {
	SNAA_TR_RC = 0,
	SNAA_TR_UC = 1,
	SNAA_TR_RD = 2,
	SNAA_TR_UD = 3,
	SNAA_TR_CNP = 4,
	SNAA_TR_XRC = 5,
	SNAA_TR_VENDOR6 = 6,	/* manufacturer specific */
	SNAA_TR_VENDOR7 = 7,	/* manufacturer specific */
};

#define SNAA_OPCODE_RC		0x00
#define SNAA_OPCODE_UC		0x20
#define SNAA_OPCODE_RD		0x40
#define SNAA_OPCODE_UD		0x60
#define SNAA_OPCODE_CNP		0x80
#define SNAA_OPCODE_XRC		0xa0

/* Operation: bits 4-0 of the opcode. */
#define SNAA_OP_SEND_FIRST		0x00
#define SNAA_OP_SEND_MIDDLE		0x01
#define SNAA_OP_SEND_LAST		0x02
#define SNAA_OP_SEND_LAST_IMM		0x03
#define SNAA_OP_SEND_ONLY		0x04
#define SNAA_OP_SEND_ONLY_IMM		0x05
#define SNAA_OP_WRITE_FIRST		0x06
#define SNAA_OP_WRITE_MIDDLE		0x07
#define SNAA_OP_WRITE_LAST		0x08
#define SNAA_OP_WRITE_LAST_IMM		0x09
#define SNAA_OP_WRITE_ONLY		0x0a
#define SNAA_OP_WRITE_ONLY_IMM		0x0b
#define SNAA_OP_READ_REQUEST		0x0c
#define SNAA_OP_READ_RESP_FIRST		0x0d
#define SNAA_OP_READ_RESP_MIDDLE	0x0e
#define SNAA_OP_READ_RESP_LAST		0x0f
#define SNAA_OP_READ_RESP_ONLY		0x10
#define SNAA_OP_ACK			0x11
#define SNAA_OP_ATOMIC_ACK		0x12
#define SNAA_OP_CMP_SWAP		0x13
#define SNAA_OP_FETCH_ADD		0x14
#define SNAA_OP_RESYNC			0x15	/* RD only */
#define SNAA_OP_SEND_LAST_INV		0x16
#define SNAA_OP_SEND_ONLY_INV		0x17
#define SNAA_OP_FLUSH			0x1c	/* IBA 1.5 */
#define SNAA_OP_ATOMIC_WRITE		0x1d	/* IBA 1.5 */

#define SNAA_OP_CNP			0x01	/* 0x81 */

/* Packet position in its message. */
#define SNAA_OPF_FIRST		0x00000001u
#define SNAA_OPF_MIDDLE		0x00000002u
#define SNAA_OPF_LAST		0x00000004u
#define SNAA_OPF_ONLY		0x00000008u
/* Extension headers present, and whether a payload may follow. */
#define SNAA_OPF_RETH		0x00000010u
#define SNAA_OPF_IMMDT		0x00000020u
#define SNAA_OPF_AETH		0x00000040u
#define SNAA_OPF_DETH		0x00000080u
#define SNAA_OPF_ATMETH		0x00000100u
#define SNAA_OPF_ATMACK		0x00000200u
#define SNAA_OPF_IETH		0x00000400u
#define SNAA_OPF_RDETH		0x00000800u
#define SNAA_OPF_XRCETH		0x00001000u
#define SNAA_OPF_FETH		0x00002000u
#define SNAA_OPF_CNPR		0x00004000u	/* 16 reserved CNP bytes */
#define SNAA_OPF_PAYLOAD	0x00008000u
/* Direction: sent by the requester or by the responder. */
#define SNAA_OPF_REQ		0x00010000u
#define SNAA_OPF_RESP		0x00020000u
/* Operation kind. */
#define SNAA_OPF_SEND		0x00040000u
#define SNAA_OPF_WRITE		0x00080000u
#define SNAA_OPF_READ		0x00100000u	/* request and responses */
#define SNAA_OPF_ATOMIC		0x00200000u	/* request and atomic ACK */
#define SNAA_OPF_ACK		0x00400000u	/* plain ACK/NAK */
/* FIRST or ONLY: the packet starts a new message. */
#define SNAA_OPF_START		0x00800000u
/* LAST or ONLY: the packet ends its message. */
#define SNAA_OPF_END		0x01000000u
/* Defined by IBA but not implemented by snaa: always dropped. */
#define SNAA_OPF_UNSUPPORTED	0x80000000u

#define SNAA_OPF_KIND_MASK	(SNAA_OPF_SEND | SNAA_OPF_WRITE | \
				 SNAA_OPF_READ | SNAA_OPF_ATOMIC | \
				 SNAA_OPF_ACK)

/**
 * struct snaa_opcode_info - what a BTH opcode implies
 * @name: IBA name, e.g. "UC_SEND_FIRST"; NULL for reserved opcodes
 * @flags: SNAA_OPF_*
 * @opcode: the opcode itself
 * @transport: enum snaa_transport (bits 7-5 of @opcode)
 * @hdr_len: BTH plus extension headers: offset of the payload
 * @ext_len: extension headers only (@hdr_len - SNAA_BTH_BYTES)
 * @reth_off: offset of the RETH from the BTH start, 0 if absent
 * @atmeth_off: offset of the AtomicETH, 0 if absent
 * @aeth_off: offset of the AETH, 0 if absent
 * @atmack_off: offset of the AtomicAckETH, 0 if absent
 * @immdt_off: offset of the ImmDt, 0 if absent
 * @ieth_off: offset of the IETH, 0 if absent
 * @deth_off: offset of the DETH, 0 if absent
 *
 * Extension headers always come in the IBA order: XRCETH/RDETH/FETH,
 * DETH, RETH/AtomicETH, AETH, AtomicAckETH, ImmDt/IETH.
 */
struct snaa_opcode_info {
	const char *name;
	__u32 flags;
	__u8 opcode;
	__u8 transport;
	__u8 hdr_len;
	__u8 ext_len;
	__u8 reth_off;
	__u8 atmeth_off;
	__u8 aeth_off;
	__u8 atmack_off;
	__u8 immdt_off;
	__u8 ieth_off;
	__u8 deth_off;
};

/* The table, indexed by opcode; .name is NULL for undefined opcodes. */
extern const struct snaa_opcode_info snaa_opcodes[256];

/*
 * snaa_opcode_lookup() - describe a BTH opcode
 *
 * Every opcode IBA defines for RC, UC and UD has an entry; RD, XRC,
 * CNP and the IBA 1.5 FLUSH/ATOMIC_WRITE have entries flagged
 * %SNAA_OPF_UNSUPPORTED.  Reserved and manufacturer-specific opcodes
 * have none: NULL.
 */
static inline const struct snaa_opcode_info *snaa_opcode_lookup(__u8 opcode)
{
	const struct snaa_opcode_info *info = &snaa_opcodes[opcode];

	return info->name ? info : NULL;
}

/* snaa_opcode_supported() - a defined opcode that snaa implements. */
static inline int snaa_opcode_supported(const struct snaa_opcode_info *info)
{
	return info && !(info->flags & SNAA_OPF_UNSUPPORTED);
}

/* Opcode of a request packet for the sender, -1 if none exists. */
int snaa_req_opcode(enum snaa_transport transport, __u32 kind, int first,
		    int last, int imm);

/* Result of snaa_opcode_seq(). */
enum snaa_seq {
	SNAA_SEQ_OK = 0,
	SNAA_SEQ_MISSING_FIRST,	/* MIDDLE/LAST with no message open */
	SNAA_SEQ_MISSING_LAST,	/* FIRST/ONLY, or other kind, while open */
};

/* May @cur follow @prev in one direction of a QP? */
enum snaa_seq snaa_opcode_seq(const struct snaa_opcode_info *prev,
			      const struct snaa_opcode_info *cur);

/* ------------------------------------------------------------------ */
/* PSN arithmetic, modulo 2^24                                         */
/* ------------------------------------------------------------------ */

static inline __u32 snaa_psn_add(__u32 psn, __u32 n)
{
	return (psn + n) & SNAA_PSN_MASK;
}

/**
 * snaa_psn_diff() - signed distance from @b to @a modulo 2^24
 * @a: a PSN
 * @b: a PSN
 *
 * Return: d in [-2^23, 2^23 - 1] with a == b + d (mod 2^24).
 */
static inline int snaa_psn_diff(__u32 a, __u32 b)
{
	__u32 d = (a - b) & SNAA_PSN_MASK;

	return d & 0x800000u ? (int)d - 0x1000000 : (int)d;
}

/*
 * snaa_psn_before() - @a comes before @b: within 2^23 PSNs behind it.
 * Exactly 2^23 apart counts as "before" either way round.
 */
static inline int snaa_psn_before(__u32 a, __u32 b)
{
	return snaa_psn_diff(a, b) < 0;
}

/* Number of packets of a @len-byte message at path MTU @mtu (>= 1). */
static inline __u32 snaa_num_pkts(__u32 len, __u32 mtu)
{
	return len ? (__u32)(((__u64)len + mtu - 1) / mtu) : 1;
}

/* Pad count for a payload of @len bytes. */
static inline __u8 snaa_pad_for(__u32 len)
{
	return (__u8)(-len & 3);
}

/* ------------------------------------------------------------------ */
/* Parser                                                              */
/* ------------------------------------------------------------------ */

/**
 * enum snaa_drop_reason - why a received packet is dropped
 * @SNAA_DROP_NONE: not dropped
 * @SNAA_DROP_TRUNCATED: shorter than BTH, extension headers and ICRC
 * @SNAA_DROP_BAD_TVER: BTH transport version is not 0
 * @SNAA_DROP_BAD_OPCODE: reserved opcode
 * @SNAA_DROP_UNSUPPORTED: opcode of RD, XRC, CNP, FLUSH, ATOMIC_WRITE or
 *	of a manufacturer-specific transport
 * @SNAA_DROP_BAD_QPN: destination QP 0, or the multicast QPN on a
 *	connected transport
 * @SNAA_DROP_BAD_PAD: nonzero pad count on a packet that is not the
 *	LAST or ONLY packet of a message with payload
 * @SNAA_DROP_PAD_EXCEEDS_PAYLOAD: pad count larger than payload + pad
 * @SNAA_DROP_UNALIGNED: payload + pad not a multiple of 4 bytes
 * @SNAA_DROP_BAD_LENGTH: payload on an opcode that has none; a FIRST or
 *	MIDDLE payload that is not an IB MTU; an empty LAST; more than
 *	4096 bytes
 * @SNAA_DROP_BAD_ICRC: ICRC mismatch (snaa_icrc_verify())
 * @SNAA_DROP_BAD_PKEY: P_Key does not match (snaa_pkey_check())
 * @SNAA_DROP_MTU: payload does not fit the QP's path MTU
 *	(snaa_pkt_check_mtu())
 * @SNAA_DROP_NR: number of reasons, for counter arrays
 *
 * snaa_parse() returns %SNAA_DROP_TRUNCATED to %SNAA_DROP_BAD_LENGTH,
 * negated; the others come from the helpers named, which need more than
 * the packet (the IP header, the port's P_Key, the QP's MTU).
 */
enum snaa_drop_reason {
	SNAA_DROP_NONE = 0,
#define SNAA_DROP(reason, str) SNAA_DROP_##reason,
#include "snaa_drop_reasons.h"
	SNAA_DROP_NR
};

/* Counter name of a drop reason (or its negation), "?" if out of range. */
const char *snaa_drop_reason_name(int reason);

/**
 * struct snaa_pkt - a parsed packet; offsets count from the BTH start
 * @op: the opcode's table entry
 * @bth: the decoded BTH
 * @payload_off: offset of the payload (= @op->hdr_len)
 * @payload_len: payload bytes, pad excluded
 * @icrc_off: offset of the ICRC
 * @reth: valid if @op->flags has %SNAA_OPF_RETH
 * @aeth: valid if %SNAA_OPF_AETH
 * @deth: valid if %SNAA_OPF_DETH
 * @atmeth: valid if %SNAA_OPF_ATMETH
 * @atmack: original remote data, valid if %SNAA_OPF_ATMACK
 * @imm: immediate data (see snaa_immdt_get()), valid if %SNAA_OPF_IMMDT
 * @ieth_rkey: valid if %SNAA_OPF_IETH
 */
struct snaa_pkt {
	const struct snaa_opcode_info *op;
	struct snaa_bth_info bth;
	__u32 payload_off;
	__u32 payload_len;
	__u32 icrc_off;
	struct snaa_reth_info reth;
	struct snaa_aeth_info aeth;
	struct snaa_deth_info deth;
	struct snaa_atmeth_info atmeth;
	__u64 atmack;
	__u32 imm;
	__u32 ieth_rkey;
};

/* Validate and decode a RoCEv2 packet: 0 or -enum snaa_drop_reason. */
int snaa_parse(const __u8 *bth, size_t len, struct snaa_pkt *out);

/**
 * snaa_pkt_check_mtu() - payload length against the QP's path MTU
 * @pkt: a packet snaa_parse() accepted
 * @mtu: the path MTU in bytes
 *
 * FIRST and MIDDLE packets carry exactly @mtu bytes, LAST and ONLY at
 * most @mtu.
 *
 * Return: 0 or -%SNAA_DROP_MTU.
 */
static inline int snaa_pkt_check_mtu(const struct snaa_pkt *pkt, __u32 mtu)
{
	if (pkt->op->flags & (SNAA_OPF_FIRST | SNAA_OPF_MIDDLE))
		return pkt->payload_len == mtu ? 0 : -SNAA_DROP_MTU;
	return pkt->payload_len <= mtu ? 0 : -SNAA_DROP_MTU;
}

/*
 * snaa_pkey_check() - IBA P_Key match: the low 15 bits are equal and at
 * least one of the two is a full member (bit 15 set).
 * Return: 0 or -%SNAA_DROP_BAD_PKEY.
 */
static inline int snaa_pkey_check(__u16 pkt_pkey, __u16 port_pkey)
{
	if (((pkt_pkey ^ port_pkey) & 0x7fff) == 0 && (pkt_pkey & 0x7fff) &&
	    ((pkt_pkey | port_pkey) & 0x8000))
		return 0;
	return -SNAA_DROP_BAD_PKEY;
}

/* ------------------------------------------------------------------ */
/* ICRC                                                                */
/* ------------------------------------------------------------------ */

/*
 * The RoCEv2 ICRC is the IBA ICRC computed as if the packet had an LRH
 * and a GRH: CRC-32 (IEEE 802.3 polynomial, reflected, as Ethernet's
 * FCS and zlib's crc32()) over
 *
 *   8 bytes of 0xff (the masked LRH),
 *   the IP header with IPv4 TOS, TTL and header checksum, or IPv6
 *	traffic class, flow label and hop limit, set to all ones,
 *   the UDP header with the checksum set to 0xffff,
 *   the BTH with byte 4 (resv8a) set to 0xff,
 *   the extension headers, the payload and the pad bytes.
 *
 * The stored ICRC is the complement of the reflected CRC register,
 * i.e. the standard CRC-32 value, transmitted least significant byte
 * first: with crc32_le(~0, data) the register after all bytes, the
 * wire bytes are ~reg & 0xff, (~reg >> 8) & 0xff, ... rdma_rxe stores
 * ~reg as a CPU-order u32, which is this order on little-endian CPUs;
 * snaa_icrc_put() is right on any CPU.
 *
 * The CRC routine is passed in: it must compute the reflected CRC-32
 * (polynomial 0xedb88320) of @len bytes at @p continuing from register
 * value @seed, with no pre- or post-inversion.  That is crc32_le() in
 * the kernel, and the same as zlib's ~crc32(~seed, p, len).
 */
typedef __u32 (*snaa_crc32_fn)(__u32 seed, const void *p, size_t len);

/* Register after 0xffffffff and the 8 bytes of the masked LRH. */
#define SNAA_ICRC_SEED		0xdebb20e3u

#define SNAA_ICRC_PSEUDO_HDR_V4	(SNAA_IPV4_HDR_BYTES + SNAA_UDP_HDR_BYTES + \
				 SNAA_BTH_BYTES)
#define SNAA_ICRC_PSEUDO_HDR_V6	(SNAA_IPV6_HDR_BYTES + SNAA_UDP_HDR_BYTES + \
				 SNAA_BTH_BYTES)
#define SNAA_ICRC_PSEUDO_HDR_MAX	SNAA_ICRC_PSEUDO_HDR_V6

/* The masked IP, UDP and BTH bytes of the ICRC; returns 40 or 60. */
size_t snaa_icrc_pseudo_hdr(__u8 *buf, const __u8 *ip, int is_v6,
			    const __u8 *bth);
/* Start an ICRC: LRH, IP, UDP and BTH; returns the CRC register. */
__u32 snaa_icrc_begin(snaa_crc32_fn crc, const __u8 *ip, int is_v6,
		      const __u8 *bth);

/* The ICRC value from the final CRC register. */
static inline __u32 snaa_icrc_finish(__u32 reg)
{
	return ~reg;
}

/* Store an ICRC value in wire order (least significant byte first). */
static inline void snaa_icrc_put(__u8 *p, __u32 icrc)
{
	snaa_put_le32(p, icrc);
}

/* Load the ICRC value stored at @p. */
static inline __u32 snaa_icrc_get(const __u8 *p)
{
	return snaa_get_le32(p);
}

/* ICRC of a contiguous packet, to store with snaa_icrc_put(). */
__u32 snaa_icrc_compute(snaa_crc32_fn crc, const __u8 *ip, int is_v6,
			const __u8 *bth, size_t len);
/* Check the ICRC of a contiguous packet: 0 or -enum snaa_drop_reason. */
int snaa_icrc_verify(snaa_crc32_fn crc, const __u8 *ip, int is_v6,
		     const __u8 *bth, size_t len);

#endif /* _SNAA_WIRE_H */
