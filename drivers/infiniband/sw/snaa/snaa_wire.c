// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * snaa wire format: the opcode table, the packet parser, the ICRC and
 * the names of the drop reasons (declarations and the small codecs in
 * snaa_wire.h).
 *
 * Pure C with no kernel-only dependency: the same file is part of
 * snaa.ko and is linked into the host unit tests (tests/unit/), the
 * fuzzers (tests/fuzz/), selftests/snaa/rawpkt and the rdma_rxe vector
 * generator (tests/unit/vectors/gen/).  snaa_wire.h is the only place
 * that knows whether it is built for the kernel or the host.
 */

#include "snaa_wire.h"

/* ------------------------------------------------------------------ */
/* Path MTU                                                           */
/* ------------------------------------------------------------------ */

/**
 * snaa_mtu_from_netdev() - RoCE path MTU for a netdev MTU
 * @netdev_mtu: the netdev's MTU (L3 payload size) in bytes
 *
 * The RoCE MTU is the largest IB MTU (256, 512, 1024, 2048 or 4096
 * bytes of payload) whose packets, with the largest header stack, fit
 * in @netdev_mtu.
 *
 * Return: the MTU in bytes, or 0 if not even 256 bytes fit.
 */
__u32 snaa_mtu_from_netdev(__u32 netdev_mtu)
{
	__u32 mtu = SNAA_IB_MTU_MAX;

	if (netdev_mtu < SNAA_IB_MTU_MIN + SNAA_MAX_HDR_OVERHEAD)
		return 0;
	while (mtu + SNAA_MAX_HDR_OVERHEAD > netdev_mtu)
		mtu >>= 1;
	return mtu;
}

/* ------------------------------------------------------------------ */
/* Opcodes                                                            */
/* ------------------------------------------------------------------ */

/* Offsets derived from the flags, in IBA header order (constant exprs). */
#define SNAA__SZ(f, h, n)	(((f) & (h)) ? (n) : 0)
#define SNAA__DETH_OFF(f)	(SNAA_BTH_BYTES + \
				 SNAA__SZ(f, SNAA_OPF_XRCETH, SNAA_XRCETH_BYTES) + \
				 SNAA__SZ(f, SNAA_OPF_RDETH, SNAA_RDETH_BYTES) + \
				 SNAA__SZ(f, SNAA_OPF_FETH, SNAA_FETH_BYTES))
#define SNAA__RETH_OFF(f)	(SNAA__DETH_OFF(f) + \
				 SNAA__SZ(f, SNAA_OPF_DETH, SNAA_DETH_BYTES))
#define SNAA__AETH_OFF(f)	(SNAA__RETH_OFF(f) + \
				 SNAA__SZ(f, SNAA_OPF_RETH, SNAA_RETH_BYTES) + \
				 SNAA__SZ(f, SNAA_OPF_ATMETH, SNAA_ATMETH_BYTES))
#define SNAA__ATMACK_OFF(f)	(SNAA__AETH_OFF(f) + \
				 SNAA__SZ(f, SNAA_OPF_AETH, SNAA_AETH_BYTES))
#define SNAA__IMMDT_OFF(f)	(SNAA__ATMACK_OFF(f) + \
				 SNAA__SZ(f, SNAA_OPF_ATMACK, SNAA_ATMACK_BYTES))
#define SNAA__HDR_LEN(f)	(SNAA__IMMDT_OFF(f) + \
				 SNAA__SZ(f, SNAA_OPF_IMMDT, SNAA_IMMDT_BYTES) + \
				 SNAA__SZ(f, SNAA_OPF_IETH, SNAA_IETH_BYTES) + \
				 SNAA__SZ(f, SNAA_OPF_CNPR, SNAA_CNP_BYTES))

/* The position flags imply START/END. */
#define SNAA__POS(f)	((f) | \
			 (((f) & (SNAA_OPF_FIRST | SNAA_OPF_ONLY)) ? \
			  SNAA_OPF_START : 0) | \
			 (((f) & (SNAA_OPF_LAST | SNAA_OPF_ONLY)) ? \
			  SNAA_OPF_END : 0))

#define SNAA__OPC(code, nm, f)						\
	[code] = {							\
		.name = nm,						\
		.flags = SNAA__POS(f),					\
		.opcode = (code),					\
		.transport = (code) >> 5,				\
		.hdr_len = SNAA__HDR_LEN(f),				\
		.ext_len = SNAA__HDR_LEN(f) - SNAA_BTH_BYTES,		\
		.reth_off = SNAA__SZ(f, SNAA_OPF_RETH, SNAA__RETH_OFF(f)), \
		.atmeth_off = SNAA__SZ(f, SNAA_OPF_ATMETH,		\
				       SNAA__RETH_OFF(f)),		\
		.aeth_off = SNAA__SZ(f, SNAA_OPF_AETH, SNAA__AETH_OFF(f)), \
		.atmack_off = SNAA__SZ(f, SNAA_OPF_ATMACK,		\
				       SNAA__ATMACK_OFF(f)),		\
		.immdt_off = SNAA__SZ(f, SNAA_OPF_IMMDT,		\
				      SNAA__IMMDT_OFF(f)),		\
		.ieth_off = SNAA__SZ(f, SNAA_OPF_IETH, SNAA__IMMDT_OFF(f)), \
		.deth_off = SNAA__SZ(f, SNAA_OPF_DETH, SNAA__DETH_OFF(f)), \
	}

/* Flags of an operation; the callers add position and headers. */
#define SNAA__SEND(f)	(SNAA_OPF_REQ | SNAA_OPF_SEND | SNAA_OPF_PAYLOAD | (f))
#define SNAA__WRITE(f)	(SNAA_OPF_REQ | SNAA_OPF_WRITE | SNAA_OPF_PAYLOAD | (f))
#define SNAA__RRESP(f)	(SNAA_OPF_RESP | SNAA_OPF_READ | SNAA_OPF_PAYLOAD | (f))
#define SNAA__READ_REQ(f) \
	(SNAA_OPF_REQ | SNAA_OPF_READ | SNAA_OPF_ONLY | SNAA_OPF_RETH | (f))
#define SNAA__ACK(f)	(SNAA_OPF_RESP | SNAA_OPF_ACK | SNAA_OPF_ONLY | \
			 SNAA_OPF_AETH | (f))
#define SNAA__ATOMIC_ACK(f) \
	(SNAA_OPF_RESP | SNAA_OPF_ATOMIC | SNAA_OPF_ONLY | SNAA_OPF_AETH | \
	 SNAA_OPF_ATMACK | (f))
#define SNAA__ATOMIC(f)	(SNAA_OPF_REQ | SNAA_OPF_ATOMIC | SNAA_OPF_ONLY | \
			 SNAA_OPF_ATMETH | (f))

#define SNAA__UNSUP		SNAA_OPF_UNSUPPORTED
#define SNAA__RD_REQ		(SNAA__UNSUP | SNAA_OPF_RDETH | SNAA_OPF_DETH)
#define SNAA__RD_RESP		(SNAA__UNSUP | SNAA_OPF_RDETH)
#define SNAA__XRC_REQ		(SNAA__UNSUP | SNAA_OPF_XRCETH)

/*
 * What every BTH opcode implies, indexed by the opcode.  Every opcode IBA
 * defines for RC, UC and UD has an entry; RD, XRC, CNP and the IBA 1.5
 * FLUSH/ATOMIC_WRITE have entries flagged %SNAA_OPF_UNSUPPORTED.
 * Reserved and manufacturer-specific opcodes have none (.name NULL).
 */
const struct snaa_opcode_info snaa_opcodes[256] = {
	/* RC */
	SNAA__OPC(0x00, "RC_SEND_FIRST", SNAA__SEND(SNAA_OPF_FIRST)),
	SNAA__OPC(0x01, "RC_SEND_MIDDLE", SNAA__SEND(SNAA_OPF_MIDDLE)),
	SNAA__OPC(0x02, "RC_SEND_LAST", SNAA__SEND(SNAA_OPF_LAST)),
	SNAA__OPC(0x03, "RC_SEND_LAST_WITH_IMMEDIATE",
		  SNAA__SEND(SNAA_OPF_LAST | SNAA_OPF_IMMDT)),
	SNAA__OPC(0x04, "RC_SEND_ONLY", SNAA__SEND(SNAA_OPF_ONLY)),
	SNAA__OPC(0x05, "RC_SEND_ONLY_WITH_IMMEDIATE",
		  SNAA__SEND(SNAA_OPF_ONLY | SNAA_OPF_IMMDT)),
	SNAA__OPC(0x06, "RC_RDMA_WRITE_FIRST",
		  SNAA__WRITE(SNAA_OPF_FIRST | SNAA_OPF_RETH)),
	SNAA__OPC(0x07, "RC_RDMA_WRITE_MIDDLE",
		  SNAA__WRITE(SNAA_OPF_MIDDLE)),
	SNAA__OPC(0x08, "RC_RDMA_WRITE_LAST",
		  SNAA__WRITE(SNAA_OPF_LAST)),
	SNAA__OPC(0x09, "RC_RDMA_WRITE_LAST_WITH_IMMEDIATE",
		  SNAA__WRITE(SNAA_OPF_LAST | SNAA_OPF_IMMDT)),
	SNAA__OPC(0x0a, "RC_RDMA_WRITE_ONLY",
		  SNAA__WRITE(SNAA_OPF_ONLY | SNAA_OPF_RETH)),
	SNAA__OPC(0x0b, "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE",
		  SNAA__WRITE(SNAA_OPF_ONLY | SNAA_OPF_RETH |
			      SNAA_OPF_IMMDT)),
	SNAA__OPC(0x0c, "RC_RDMA_READ_REQUEST", SNAA__READ_REQ(0)),
	SNAA__OPC(0x0d, "RC_RDMA_READ_RESPONSE_FIRST",
		  SNAA__RRESP(SNAA_OPF_FIRST | SNAA_OPF_AETH)),
	SNAA__OPC(0x0e, "RC_RDMA_READ_RESPONSE_MIDDLE",
		  SNAA__RRESP(SNAA_OPF_MIDDLE)),
	SNAA__OPC(0x0f, "RC_RDMA_READ_RESPONSE_LAST",
		  SNAA__RRESP(SNAA_OPF_LAST | SNAA_OPF_AETH)),
	SNAA__OPC(0x10, "RC_RDMA_READ_RESPONSE_ONLY",
		  SNAA__RRESP(SNAA_OPF_ONLY | SNAA_OPF_AETH)),
	SNAA__OPC(0x11, "RC_ACKNOWLEDGE", SNAA__ACK(0)),
	SNAA__OPC(0x12, "RC_ATOMIC_ACKNOWLEDGE", SNAA__ATOMIC_ACK(0)),
	SNAA__OPC(0x13, "RC_COMPARE_SWAP", SNAA__ATOMIC(0)),
	SNAA__OPC(0x14, "RC_FETCH_ADD", SNAA__ATOMIC(0)),
	SNAA__OPC(0x16, "RC_SEND_LAST_WITH_INVALIDATE",
		  SNAA__SEND(SNAA_OPF_LAST | SNAA_OPF_IETH)),
	SNAA__OPC(0x17, "RC_SEND_ONLY_WITH_INVALIDATE",
		  SNAA__SEND(SNAA_OPF_ONLY | SNAA_OPF_IETH)),
	SNAA__OPC(0x1c, "RC_FLUSH",
		  SNAA__UNSUP | SNAA_OPF_REQ | SNAA_OPF_ONLY |
		  SNAA_OPF_FETH | SNAA_OPF_RETH),
	SNAA__OPC(0x1d, "RC_ATOMIC_WRITE",
		  SNAA__UNSUP | SNAA_OPF_REQ | SNAA_OPF_ONLY |
		  SNAA_OPF_RETH | SNAA_OPF_PAYLOAD),
	/* UC */
	SNAA__OPC(0x20, "UC_SEND_FIRST", SNAA__SEND(SNAA_OPF_FIRST)),
	SNAA__OPC(0x21, "UC_SEND_MIDDLE", SNAA__SEND(SNAA_OPF_MIDDLE)),
	SNAA__OPC(0x22, "UC_SEND_LAST", SNAA__SEND(SNAA_OPF_LAST)),
	SNAA__OPC(0x23, "UC_SEND_LAST_WITH_IMMEDIATE",
		  SNAA__SEND(SNAA_OPF_LAST | SNAA_OPF_IMMDT)),
	SNAA__OPC(0x24, "UC_SEND_ONLY", SNAA__SEND(SNAA_OPF_ONLY)),
	SNAA__OPC(0x25, "UC_SEND_ONLY_WITH_IMMEDIATE",
		  SNAA__SEND(SNAA_OPF_ONLY | SNAA_OPF_IMMDT)),
	SNAA__OPC(0x26, "UC_RDMA_WRITE_FIRST",
		  SNAA__WRITE(SNAA_OPF_FIRST | SNAA_OPF_RETH)),
	SNAA__OPC(0x27, "UC_RDMA_WRITE_MIDDLE",
		  SNAA__WRITE(SNAA_OPF_MIDDLE)),
	SNAA__OPC(0x28, "UC_RDMA_WRITE_LAST",
		  SNAA__WRITE(SNAA_OPF_LAST)),
	SNAA__OPC(0x29, "UC_RDMA_WRITE_LAST_WITH_IMMEDIATE",
		  SNAA__WRITE(SNAA_OPF_LAST | SNAA_OPF_IMMDT)),
	SNAA__OPC(0x2a, "UC_RDMA_WRITE_ONLY",
		  SNAA__WRITE(SNAA_OPF_ONLY | SNAA_OPF_RETH)),
	SNAA__OPC(0x2b, "UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE",
		  SNAA__WRITE(SNAA_OPF_ONLY | SNAA_OPF_RETH |
			      SNAA_OPF_IMMDT)),
	/* RD: RDETH on every packet, DETH on requests */
	SNAA__OPC(0x40, "RD_SEND_FIRST",
		  SNAA__SEND(SNAA_OPF_FIRST | SNAA__RD_REQ)),
	SNAA__OPC(0x41, "RD_SEND_MIDDLE",
		  SNAA__SEND(SNAA_OPF_MIDDLE | SNAA__RD_REQ)),
	SNAA__OPC(0x42, "RD_SEND_LAST",
		  SNAA__SEND(SNAA_OPF_LAST | SNAA__RD_REQ)),
	SNAA__OPC(0x43, "RD_SEND_LAST_WITH_IMMEDIATE",
		  SNAA__SEND(SNAA_OPF_LAST | SNAA_OPF_IMMDT |
			     SNAA__RD_REQ)),
	SNAA__OPC(0x44, "RD_SEND_ONLY",
		  SNAA__SEND(SNAA_OPF_ONLY | SNAA__RD_REQ)),
	SNAA__OPC(0x45, "RD_SEND_ONLY_WITH_IMMEDIATE",
		  SNAA__SEND(SNAA_OPF_ONLY | SNAA_OPF_IMMDT |
			     SNAA__RD_REQ)),
	SNAA__OPC(0x46, "RD_RDMA_WRITE_FIRST",
		  SNAA__WRITE(SNAA_OPF_FIRST | SNAA_OPF_RETH |
			      SNAA__RD_REQ)),
	SNAA__OPC(0x47, "RD_RDMA_WRITE_MIDDLE",
		  SNAA__WRITE(SNAA_OPF_MIDDLE | SNAA__RD_REQ)),
	SNAA__OPC(0x48, "RD_RDMA_WRITE_LAST",
		  SNAA__WRITE(SNAA_OPF_LAST | SNAA__RD_REQ)),
	SNAA__OPC(0x49, "RD_RDMA_WRITE_LAST_WITH_IMMEDIATE",
		  SNAA__WRITE(SNAA_OPF_LAST | SNAA_OPF_IMMDT |
			      SNAA__RD_REQ)),
	SNAA__OPC(0x4a, "RD_RDMA_WRITE_ONLY",
		  SNAA__WRITE(SNAA_OPF_ONLY | SNAA_OPF_RETH |
			      SNAA__RD_REQ)),
	SNAA__OPC(0x4b, "RD_RDMA_WRITE_ONLY_WITH_IMMEDIATE",
		  SNAA__WRITE(SNAA_OPF_ONLY | SNAA_OPF_RETH |
			      SNAA_OPF_IMMDT | SNAA__RD_REQ)),
	SNAA__OPC(0x4c, "RD_RDMA_READ_REQUEST",
		  SNAA__READ_REQ(SNAA__RD_REQ)),
	SNAA__OPC(0x4d, "RD_RDMA_READ_RESPONSE_FIRST",
		  SNAA__RRESP(SNAA_OPF_FIRST | SNAA_OPF_AETH |
			      SNAA__RD_RESP)),
	SNAA__OPC(0x4e, "RD_RDMA_READ_RESPONSE_MIDDLE",
		  SNAA__RRESP(SNAA_OPF_MIDDLE | SNAA__RD_RESP)),
	SNAA__OPC(0x4f, "RD_RDMA_READ_RESPONSE_LAST",
		  SNAA__RRESP(SNAA_OPF_LAST | SNAA_OPF_AETH |
			      SNAA__RD_RESP)),
	SNAA__OPC(0x50, "RD_RDMA_READ_RESPONSE_ONLY",
		  SNAA__RRESP(SNAA_OPF_ONLY | SNAA_OPF_AETH |
			      SNAA__RD_RESP)),
	SNAA__OPC(0x51, "RD_ACKNOWLEDGE", SNAA__ACK(SNAA__RD_RESP)),
	SNAA__OPC(0x52, "RD_ATOMIC_ACKNOWLEDGE",
		  SNAA__ATOMIC_ACK(SNAA__RD_RESP)),
	SNAA__OPC(0x53, "RD_COMPARE_SWAP", SNAA__ATOMIC(SNAA__RD_REQ)),
	SNAA__OPC(0x54, "RD_FETCH_ADD", SNAA__ATOMIC(SNAA__RD_REQ)),
	SNAA__OPC(0x55, "RD_RESYNC",
		  SNAA__RD_REQ | SNAA_OPF_REQ | SNAA_OPF_ONLY),
	/* UD */
	SNAA__OPC(0x64, "UD_SEND_ONLY",
		  SNAA__SEND(SNAA_OPF_ONLY | SNAA_OPF_DETH)),
	SNAA__OPC(0x65, "UD_SEND_ONLY_WITH_IMMEDIATE",
		  SNAA__SEND(SNAA_OPF_ONLY | SNAA_OPF_DETH |
			     SNAA_OPF_IMMDT)),
	/* RoCEv2 congestion notification packet */
	SNAA__OPC(0x81, "CNP",
		  SNAA__UNSUP | SNAA_OPF_ONLY | SNAA_OPF_CNPR),
	/* XRC: XRCETH on requests */
	SNAA__OPC(0xa0, "XRC_SEND_FIRST",
		  SNAA__SEND(SNAA_OPF_FIRST | SNAA__XRC_REQ)),
	SNAA__OPC(0xa1, "XRC_SEND_MIDDLE",
		  SNAA__SEND(SNAA_OPF_MIDDLE | SNAA__XRC_REQ)),
	SNAA__OPC(0xa2, "XRC_SEND_LAST",
		  SNAA__SEND(SNAA_OPF_LAST | SNAA__XRC_REQ)),
	SNAA__OPC(0xa3, "XRC_SEND_LAST_WITH_IMMEDIATE",
		  SNAA__SEND(SNAA_OPF_LAST | SNAA_OPF_IMMDT |
			     SNAA__XRC_REQ)),
	SNAA__OPC(0xa4, "XRC_SEND_ONLY",
		  SNAA__SEND(SNAA_OPF_ONLY | SNAA__XRC_REQ)),
	SNAA__OPC(0xa5, "XRC_SEND_ONLY_WITH_IMMEDIATE",
		  SNAA__SEND(SNAA_OPF_ONLY | SNAA_OPF_IMMDT |
			     SNAA__XRC_REQ)),
	SNAA__OPC(0xa6, "XRC_RDMA_WRITE_FIRST",
		  SNAA__WRITE(SNAA_OPF_FIRST | SNAA_OPF_RETH |
			      SNAA__XRC_REQ)),
	SNAA__OPC(0xa7, "XRC_RDMA_WRITE_MIDDLE",
		  SNAA__WRITE(SNAA_OPF_MIDDLE | SNAA__XRC_REQ)),
	SNAA__OPC(0xa8, "XRC_RDMA_WRITE_LAST",
		  SNAA__WRITE(SNAA_OPF_LAST | SNAA__XRC_REQ)),
	SNAA__OPC(0xa9, "XRC_RDMA_WRITE_LAST_WITH_IMMEDIATE",
		  SNAA__WRITE(SNAA_OPF_LAST | SNAA_OPF_IMMDT |
			      SNAA__XRC_REQ)),
	SNAA__OPC(0xaa, "XRC_RDMA_WRITE_ONLY",
		  SNAA__WRITE(SNAA_OPF_ONLY | SNAA_OPF_RETH |
			      SNAA__XRC_REQ)),
	SNAA__OPC(0xab, "XRC_RDMA_WRITE_ONLY_WITH_IMMEDIATE",
		  SNAA__WRITE(SNAA_OPF_ONLY | SNAA_OPF_RETH |
			      SNAA_OPF_IMMDT | SNAA__XRC_REQ)),
	SNAA__OPC(0xac, "XRC_RDMA_READ_REQUEST",
		  SNAA__READ_REQ(SNAA__XRC_REQ)),
	SNAA__OPC(0xad, "XRC_RDMA_READ_RESPONSE_FIRST",
		  SNAA__RRESP(SNAA_OPF_FIRST | SNAA_OPF_AETH |
			      SNAA__UNSUP)),
	SNAA__OPC(0xae, "XRC_RDMA_READ_RESPONSE_MIDDLE",
		  SNAA__RRESP(SNAA_OPF_MIDDLE | SNAA__UNSUP)),
	SNAA__OPC(0xaf, "XRC_RDMA_READ_RESPONSE_LAST",
		  SNAA__RRESP(SNAA_OPF_LAST | SNAA_OPF_AETH |
			      SNAA__UNSUP)),
	SNAA__OPC(0xb0, "XRC_RDMA_READ_RESPONSE_ONLY",
		  SNAA__RRESP(SNAA_OPF_ONLY | SNAA_OPF_AETH |
			      SNAA__UNSUP)),
	SNAA__OPC(0xb1, "XRC_ACKNOWLEDGE", SNAA__ACK(SNAA__UNSUP)),
	SNAA__OPC(0xb2, "XRC_ATOMIC_ACKNOWLEDGE",
		  SNAA__ATOMIC_ACK(SNAA__UNSUP)),
	SNAA__OPC(0xb3, "XRC_COMPARE_SWAP",
		  SNAA__ATOMIC(SNAA__XRC_REQ)),
	SNAA__OPC(0xb4, "XRC_FETCH_ADD", SNAA__ATOMIC(SNAA__XRC_REQ)),
	SNAA__OPC(0xb6, "XRC_SEND_LAST_WITH_INVALIDATE",
		  SNAA__SEND(SNAA_OPF_LAST | SNAA_OPF_IETH |
			     SNAA__XRC_REQ)),
	SNAA__OPC(0xb7, "XRC_SEND_ONLY_WITH_INVALIDATE",
		  SNAA__SEND(SNAA_OPF_ONLY | SNAA_OPF_IETH |
			     SNAA__XRC_REQ)),
};

/**
 * snaa_req_opcode() - opcode of a request packet, for the sender
 * @transport: %SNAA_TR_RC, %SNAA_TR_UC or %SNAA_TR_UD
 * @kind: %SNAA_OPF_SEND or %SNAA_OPF_WRITE
 * @first: the packet is the first of its message
 * @last: the packet is the last of its message
 * @imm: the message carries immediate data
 *
 * Return: the opcode, or -1 if the combination does not exist (UD has
 * only single-packet SENDs).
 */
int snaa_req_opcode(enum snaa_transport transport, __u32 kind, int first,
		    int last, int imm)
{
	int op;

	if (transport != SNAA_TR_RC && transport != SNAA_TR_UC &&
	    transport != SNAA_TR_UD)
		return -1;
	if (transport == SNAA_TR_UD && (kind != SNAA_OPF_SEND ||
					!first || !last))
		return -1;
	if (kind == SNAA_OPF_SEND)
		op = SNAA_OP_SEND_FIRST;
	else if (kind == SNAA_OPF_WRITE)
		op = SNAA_OP_WRITE_FIRST;
	else
		return -1;
	if (first && last)
		op += imm ? 5 : 4;	/* ONLY, ONLY_WITH_IMMEDIATE */
	else if (last)
		op += imm ? 3 : 2;	/* LAST, LAST_WITH_IMMEDIATE */
	else if (!first)
		op += 1;		/* MIDDLE */
	return (int)((unsigned int)transport << 5) | op;
}

/**
 * snaa_opcode_seq() - may @cur follow @prev in one direction of a QP?
 * @prev: the previous packet accepted in this stream, NULL if none
 * @cur: the new packet
 *
 * A packet that continues a message (MIDDLE, LAST) must follow the
 * FIRST or a MIDDLE of the same kind of message (SEND, WRITE or READ
 * response); a packet that starts one (FIRST, ONLY) must not arrive
 * while a message is open.  PSN checks are separate.  An RC responder
 * NAKs either error; a UC responder drops the open message, and
 * accepts @cur as a new message on %SNAA_SEQ_MISSING_LAST if @cur
 * starts one.
 *
 * Return: enum snaa_seq.
 */
enum snaa_seq snaa_opcode_seq(const struct snaa_opcode_info *prev,
			      const struct snaa_opcode_info *cur)
{
	int open = prev && !(prev->flags & SNAA_OPF_END);

	if (!open)
		return cur->flags & SNAA_OPF_START ? SNAA_SEQ_OK :
						     SNAA_SEQ_MISSING_FIRST;
	if (cur->flags & SNAA_OPF_START)
		return SNAA_SEQ_MISSING_LAST;
	if ((prev->flags ^ cur->flags) & SNAA_OPF_KIND_MASK)
		return SNAA_SEQ_MISSING_LAST;
	return SNAA_SEQ_OK;
}

/* ------------------------------------------------------------------ */
/* Parser                                                             */
/* ------------------------------------------------------------------ */

static const char *const snaa_drop_names[SNAA_DROP_NR] = {
	[SNAA_DROP_NONE] = "none",
#define SNAA_DROP(reason, str) \
	[SNAA_DROP_##reason] = str,
#include "snaa_drop_reasons.h"
};

/**
 * snaa_drop_reason_name() - the name of a drop reason
 * @reason: an enum snaa_drop_reason, or its negation (as snaa_parse()
 *	returns it)
 *
 * The driver's counters are these names prefixed with "drop_".
 *
 * Return: the name, "?" if @reason is out of range.
 */
const char *snaa_drop_reason_name(int reason)
{
	if (reason < 0)
		reason = -reason;
	return reason < SNAA_DROP_NR ? snaa_drop_names[reason] : "?";
}

/**
 * snaa_parse() - validate and decode a RoCEv2 packet
 * @bth: first byte of the BTH (the UDP payload)
 * @len: bytes from @bth to the end of the ICRC (UDP length - 8)
 * @out: the result; zeroed first, then filled as far as parsing got
 *	(@out->op is set from the first check that needs it onwards)
 *
 * Checks, in this order, what IBA requires of a packet independently of
 * any QP: length of the BTH, TVer, opcode, length of the headers and
 * ICRC, destination QPN, pad count, payload length.  The ICRC itself
 * (snaa_icrc_verify()), the P_Key and everything that depends on the
 * QP (type, state, PSN, MTU, opcode sequence) are the caller's.
 *
 * Return: 0, or the negated enum snaa_drop_reason.
 */
int snaa_parse(const __u8 *bth, size_t len, struct snaa_pkt *out)
{
	const struct snaa_opcode_info *op;
	size_t rest;
	__u32 flags;
	__u8 pad;

	*out = (struct snaa_pkt){ .op = NULL };
	if (len < SNAA_BTH_BYTES)
		return -SNAA_DROP_TRUNCATED;
	snaa_bth_get(bth, &out->bth);
	if (out->bth.tver != SNAA_BTH_TVER)
		return -SNAA_DROP_BAD_TVER;

	op = snaa_opcode_lookup(out->bth.opcode);
	if (!op)
		return out->bth.opcode >= 0xc0 ? -SNAA_DROP_UNSUPPORTED :
						 -SNAA_DROP_BAD_OPCODE;
	out->op = op;
	flags = op->flags;
	if (flags & SNAA_OPF_UNSUPPORTED)
		return -SNAA_DROP_UNSUPPORTED;
	if (len < (size_t)op->hdr_len + SNAA_ICRC_BYTES)
		return -SNAA_DROP_TRUNCATED;

	if (out->bth.dqpn == 0 || (out->bth.dqpn == SNAA_MULTICAST_QPN &&
				   op->transport != SNAA_TR_UD))
		return -SNAA_DROP_BAD_QPN;

	pad = out->bth.pad;
	rest = len - op->hdr_len - SNAA_ICRC_BYTES;	/* payload + pad */
	if (pad && (!(flags & SNAA_OPF_PAYLOAD) || !(flags & SNAA_OPF_END)))
		return -SNAA_DROP_BAD_PAD;
	if (rest & 3)
		return -SNAA_DROP_UNALIGNED;
	if (pad > rest)
		return -SNAA_DROP_PAD_EXCEEDS_PAYLOAD;
	rest -= pad;
	if (rest > SNAA_IB_MTU_MAX || (!(flags & SNAA_OPF_PAYLOAD) && rest))
		return -SNAA_DROP_BAD_LENGTH;
	if ((flags & (SNAA_OPF_FIRST | SNAA_OPF_MIDDLE)) &&
	    !snaa_is_ib_mtu((__u32)rest))
		return -SNAA_DROP_BAD_LENGTH;
	if ((flags & SNAA_OPF_LAST) && rest == 0)
		return -SNAA_DROP_BAD_LENGTH;

	out->payload_off = op->hdr_len;
	out->payload_len = (__u32)rest;
	out->icrc_off = (__u32)(len - SNAA_ICRC_BYTES);
	if (flags & SNAA_OPF_RETH)
		snaa_reth_get(bth + op->reth_off, &out->reth);
	if (flags & SNAA_OPF_AETH)
		snaa_aeth_get(bth + op->aeth_off, &out->aeth);
	if (flags & SNAA_OPF_DETH)
		snaa_deth_get(bth + op->deth_off, &out->deth);
	if (flags & SNAA_OPF_ATMETH)
		snaa_atmeth_get(bth + op->atmeth_off, &out->atmeth);
	if (flags & SNAA_OPF_ATMACK)
		out->atmack = snaa_atmack_get(bth + op->atmack_off);
	if (flags & SNAA_OPF_IMMDT)
		out->imm = snaa_immdt_get(bth + op->immdt_off);
	if (flags & SNAA_OPF_IETH)
		out->ieth_rkey = snaa_ieth_get(bth + op->ieth_off);
	return 0;
}

/* ------------------------------------------------------------------ */
/* ICRC                                                               */
/* ------------------------------------------------------------------ */

/**
 * snaa_icrc_pseudo_hdr() - the masked IP, UDP and BTH bytes of the ICRC
 * @buf: at least %SNAA_ICRC_PSEUDO_HDR_MAX bytes
 * @ip: the IP header, followed directly by the UDP header.  An IPv4
 *	header must have no options (IHL 5), an IPv6 header no extension
 *	headers: rdma_rxe and RoCE NICs send neither, and callers should
 *	drop packets that have them
 * @is_v6: @ip is IPv6
 * @bth: the BTH
 *
 * Return: the number of bytes written, 40 (IPv4) or 60 (IPv6).
 */
size_t snaa_icrc_pseudo_hdr(__u8 *buf, const __u8 *ip, int is_v6,
			    const __u8 *bth)
{
	size_t ip_len = is_v6 ? SNAA_IPV6_HDR_BYTES : SNAA_IPV4_HDR_BYTES;
	size_t i;
	__u8 *udp = buf + ip_len;

	for (i = 0; i < ip_len + SNAA_UDP_HDR_BYTES; i++)
		buf[i] = ip[i];
	for (i = 0; i < SNAA_BTH_BYTES; i++)
		buf[ip_len + SNAA_UDP_HDR_BYTES + i] = bth[i];

	if (is_v6) {
		buf[0] |= 0x0f;		/* traffic class, high nibble */
		buf[1] = 0xff;		/* traffic class low, flow label */
		buf[2] = 0xff;
		buf[3] = 0xff;
		buf[7] = 0xff;		/* hop limit */
	} else {
		buf[1] = 0xff;		/* TOS */
		buf[8] = 0xff;		/* TTL */
		buf[10] = 0xff;		/* header checksum */
		buf[11] = 0xff;
	}
	udp[6] = 0xff;			/* UDP checksum */
	udp[7] = 0xff;
	udp[SNAA_UDP_HDR_BYTES + 4] = 0xff;	/* BTH resv8a */
	return ip_len + SNAA_UDP_HDR_BYTES + SNAA_BTH_BYTES;
}

/**
 * snaa_icrc_begin() - start an ICRC: LRH, IP, UDP and BTH
 * @crc: the CRC routine
 * @ip: the IP header followed by the UDP header
 * @is_v6: @ip is IPv6
 * @bth: the BTH
 *
 * Continue with @crc over the extension headers, payload and pad (in any
 * number of pieces), then snaa_icrc_finish().
 *
 * Return: the running CRC register.
 */
__u32 snaa_icrc_begin(snaa_crc32_fn crc, const __u8 *ip, int is_v6,
		      const __u8 *bth)
{
	__u8 buf[SNAA_ICRC_PSEUDO_HDR_MAX];
	size_t n = snaa_icrc_pseudo_hdr(buf, ip, is_v6, bth);

	return crc(SNAA_ICRC_SEED, buf, n);
}

/**
 * snaa_icrc_compute() - ICRC of a contiguous packet
 * @crc: the CRC routine
 * @ip: the IP header followed by the UDP header
 * @is_v6: @ip is IPv6
 * @bth: the BTH, followed by the rest of the packet
 * @len: bytes from @bth to the end of the pad (ICRC excluded), >= 12
 *
 * Return: the value to store with snaa_icrc_put().
 */
__u32 snaa_icrc_compute(snaa_crc32_fn crc, const __u8 *ip, int is_v6,
			const __u8 *bth, size_t len)
{
	__u32 reg = snaa_icrc_begin(crc, ip, is_v6, bth);

	reg = crc(reg, bth + SNAA_BTH_BYTES, len - SNAA_BTH_BYTES);
	return snaa_icrc_finish(reg);
}

/**
 * snaa_icrc_verify() - check the ICRC of a contiguous packet
 * @crc: the CRC routine
 * @ip: the IP header followed by the UDP header
 * @is_v6: @ip is IPv6
 * @bth: the BTH, followed by the rest of the packet
 * @len: bytes from @bth to the end of the ICRC, >= 16
 *
 * Return: 0, -%SNAA_DROP_BAD_ICRC, or -%SNAA_DROP_TRUNCATED if @len < 16.
 */
int snaa_icrc_verify(snaa_crc32_fn crc, const __u8 *ip, int is_v6,
		     const __u8 *bth, size_t len)
{
	size_t n = len - SNAA_ICRC_BYTES;

	if (len < SNAA_BTH_BYTES + SNAA_ICRC_BYTES)
		return -SNAA_DROP_TRUNCATED;
	return snaa_icrc_compute(crc, ip, is_v6, bth, n) ==
	       snaa_icrc_get(bth + n) ? 0 : -SNAA_DROP_BAD_ICRC;
}
