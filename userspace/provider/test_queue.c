// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_queue: host unit test of snaa_queue.h, the provider's ring code,
 * against a fake kernel written here from snaa-abi.h.  KTAP; exit 0 iff
 * every check passed.  No device, no libibverbs library (only its types).
 *
 * Expected SQE/RQE/CQE images are built byte by byte at hard-coded ABI
 * offsets, not through the snaa_* structs, so a layout change in either
 * snaa-abi.h or the encoder shows up as a mismatch.  Slots are poisoned
 * before encoding, so a field the encoder forgets to write is caught.
 */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "snaa_queue.h"

#include "../../tests/lib/ktap.h"

#define NUM_TESTS	42


/* ------------------------------------------------------------------ */
/* Fake kernel                                                         */
/* ------------------------------------------------------------------ */

#define POISON	0xa5

/* A ring as the kernel would hand it out: indices at @start, poisoned. */
static struct snaa_ring *ring_new(uint32_t num, uint32_t stride,
				  uint32_t start)
{
	size_t len = (size_t)snaa_ring_bytes(num, stride);
	struct snaa_ring *r = aligned_alloc(64, (len + 63) & ~(size_t)63);

	if (!r) {
		perror("aligned_alloc");
		exit(1);
	}
	memset(r, 0, sizeof(*r));
	memset(r + 1, POISON, len - sizeof(*r));
	r->producer = start;
	r->consumer = start;
	return r;
}

static uint8_t *k_slot(struct snaa_ring *r, uint32_t num, uint32_t stride,
		       uint32_t index)
{
	return (uint8_t *)(r + 1) + (size_t)(index & (num - 1)) * stride;
}

/* Kernel consumes @n entries of an SQ/RQ. */
static void k_consume(struct snaa_ring *r, uint32_t n)
{
	__atomic_store_n(&r->consumer, r->consumer + n, __ATOMIC_RELEASE);
}

/* Kernel completes into a CQ. */
static void k_complete(struct snaa_ring *r, uint32_t num,
		       const struct snaa_cqe *cqe)
{
	uint32_t p = r->producer;

	memcpy(k_slot(r, num, sizeof(*cqe), p), cqe, sizeof(*cqe));
	__atomic_store_n(&r->producer, p + 1, __ATOMIC_RELEASE);
}

/* ------------------------------------------------------------------ */
/* Byte images                                                         */
/* ------------------------------------------------------------------ */

static void put8(uint8_t *b, size_t off, uint8_t v)
{
	b[off] = v;
}

static void put16(uint8_t *b, size_t off, uint16_t v)
{
	memcpy(b + off, &v, sizeof(v));
}

static void put32(uint8_t *b, size_t off, uint32_t v)
{
	memcpy(b + off, &v, sizeof(v));
}

static void put64(uint8_t *b, size_t off, uint64_t v)
{
	memcpy(b + off, &v, sizeof(v));
}

/* ABI offsets in struct snaa_sqe / snaa_rqe / snaa_cqe (snaa-abi.h). */
enum {
	SQE_WR_ID = 0, SQE_OPCODE = 8, SQE_FLAGS = 12, SQE_NUM_SGE = 16,
	SQE_IMM = 20, SQE_RADDR = 24, SQE_RKEY = 32, SQE_INLINE_LEN = 36,
	SQE_AH = 40, SQE_QPN = 44, SQE_QKEY = 48, SQE_RESERVED = 52,
	SQE_SGE = 56,
	RQE_WR_ID = 0, RQE_NUM_SGE = 8, RQE_RESERVED = 12, RQE_SGE = 16,
	SGE_SIZE = 16,
};

struct sqe_img {
	uint64_t wr_id;
	uint32_t opcode, flags, num_sge, imm, rkey, inline_len;
	uint64_t raddr;
	uint32_t ah, qpn, qkey;
	bool atomic;			/* cmp and swp instead of ah..qkey */
	uint64_t cmp, swp;
	bool bind;			/* length, lkey, access instead */
	uint64_t len;
	uint32_t lkey, access;
};

static size_t sqe_image(uint8_t *b, size_t len, const struct sqe_img *e,
			const struct ibv_sge *sge, int nsge)
{
	int i;

	memset(b, POISON, len);
	put64(b, SQE_WR_ID, e->wr_id);
	put32(b, SQE_OPCODE, e->opcode);
	put32(b, SQE_FLAGS, e->flags);
	put32(b, SQE_NUM_SGE, e->num_sge);
	put32(b, SQE_IMM, e->imm);
	put64(b, SQE_RADDR, e->raddr);
	put32(b, SQE_RKEY, e->rkey);
	put32(b, SQE_INLINE_LEN, e->inline_len);
	put32(b, SQE_AH, e->ah);
	put32(b, SQE_QPN, e->qpn);
	put32(b, SQE_QKEY, e->qkey);
	put32(b, SQE_RESERVED, 0);
	if (e->atomic) {
		put64(b, SQE_AH, e->cmp);
		put64(b, SQE_AH + 8, e->swp);
	}
	if (e->bind) {
		put64(b, SQE_AH, e->len);
		put32(b, SQE_AH + 8, e->lkey);
		put32(b, SQE_AH + 12, e->access);
	}
	for (i = 0; i < nsge; i++) {
		put64(b, SQE_SGE + i * SGE_SIZE, sge[i].addr);
		put32(b, SQE_SGE + i * SGE_SIZE + 8, sge[i].length);
		put32(b, SQE_SGE + i * SGE_SIZE + 12, sge[i].lkey);
	}
	return SQE_SGE + (size_t)nsge * SGE_SIZE;
}

static bool same_bytes(const char *what, const uint8_t *got,
		       const uint8_t *want, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (got[i] != want[i]) {
			diag("%s: byte %zu is %#04x, expected %#04x", what, i,
			     got[i], want[i]);
			return false;
		}
	return true;
}

/* ------------------------------------------------------------------ */
/* SQE encoding                                                        */
/* ------------------------------------------------------------------ */

#define STRIDE	256	/* 56-byte header + 12 SGEs or 200 inline bytes */

static const struct snaa_sq_caps caps_uc = { IBV_QPT_UC, 4, 64 };
static const struct snaa_sq_caps caps_rc = { IBV_QPT_RC, 4, 64 };
static const struct snaa_sq_caps caps_ud = { IBV_QPT_UD, 4, 64 };

static struct ibv_sge sge2[2] = {
	{ .addr = 0x1000100010001000ull, .length = 0x10, .lkey = 0x77 },
	{ .addr = 0x2000, .length = 0xfffffff0u, .lkey = 0x88888888u },
};

/* Check and encode one WR into a poisoned slot: 0 or the check's errno. */
static int encode(const struct snaa_sq_caps *caps, struct ibv_send_wr *wr,
		  uint8_t *slot)
{
	uint32_t inline_len;
	int err;

	memset(slot, POISON, STRIDE);
	err = snaa_sq_check_wr(caps, wr, &inline_len);
	if (!err)
		snaa_sqe_encode(slot, caps->qp_type, wr, inline_len);
	return err;
}

static bool encode_matches(const char *what,
			   const struct snaa_sq_caps *caps,
			   struct ibv_send_wr *wr, const struct sqe_img *e,
			   const struct ibv_sge *sge, int nsge)
{
	uint8_t slot[STRIDE], want[STRIDE];
	int err = encode(caps, wr, slot);

	if (err) {
		diag("%s: rejected with %d", what, err);
		return false;
	}
	sqe_image(want, sizeof(want), e, sge, nsge);
	/* Whole slot: also nothing written past the last SGE. */
	return same_bytes(what, slot, want, sizeof(want));
}

static void test_sqe_opcodes(void)
{
	struct ibv_send_wr wr;
	struct sqe_img e;

	/* RDMA WRITE: imm_data holds garbage that must not leak. */
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 0x1122334455667788ull;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = sge2;
	wr.num_sge = 2;
	wr.imm_data = 0xffffffffu;
	wr.wr.rdma.remote_addr = 0xdeadbeef00ull;
	wr.wr.rdma.rkey = 0x1234;
	e = (struct sqe_img){ .wr_id = wr.wr_id, .opcode = 0, .flags = 2,
			      .num_sge = 2, .raddr = 0xdeadbeef00ull,
			      .rkey = 0x1234 };
	result(encode_matches("RDMA_WRITE", &caps_uc, &wr, &e, sge2, 2),
	       "SQE RDMA_WRITE (UC): exact bytes of every field and both SGEs, imm 0, rest of slot untouched");

	/* RDMA WRITE with immediate: imm bytes in network order as given. */
	wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	wr.imm_data = htonl(0x01020304);
	wr.send_flags = 0;
	e.opcode = 1;
	e.flags = 0;
	e.imm = htonl(0x01020304);
	{
		uint8_t slot[STRIDE];
		bool ok = encode_matches("RDMA_WRITE_WITH_IMM", &caps_uc, &wr,
					 &e, sge2, 2);

		encode(&caps_uc, &wr, slot);
		ok = ok && slot[SQE_IMM] == 1 && slot[SQE_IMM + 1] == 2 &&
		     slot[SQE_IMM + 2] == 3 && slot[SQE_IMM + 3] == 4;
		result(ok, "SQE RDMA_WRITE_WITH_IMM (UC): opcode 1, imm_data bytes 01 02 03 04 (network order kept)");
	}

	/* SEND: the rdma union holds garbage that must not leak. */
	wr.opcode = IBV_WR_SEND;
	wr.num_sge = 1;
	e = (struct sqe_img){ .wr_id = wr.wr_id, .opcode = 2, .num_sge = 1 };
	result(encode_matches("SEND", &caps_uc, &wr, &e, sge2, 1),
	       "SQE SEND (UC): opcode 2, remote_addr/rkey/imm 0 although the WR's union holds values");

	/* SEND with immediate, all three plain flags. */
	wr.opcode = IBV_WR_SEND_WITH_IMM;
	wr.send_flags = IBV_SEND_FENCE | IBV_SEND_SIGNALED | IBV_SEND_SOLICITED;
	wr.imm_data = htonl(0xa0b0c0d0);
	e.opcode = 3;
	e.flags = SNAA_WQE_FENCE | SNAA_WQE_SIGNALED | SNAA_WQE_SOLICITED;
	e.imm = htonl(0xa0b0c0d0);
	result(encode_matches("SEND_WITH_IMM", &caps_rc, &wr, &e, sge2, 1) &&
	       e.flags == 7,
	       "SQE SEND_WITH_IMM (RC): opcode 3, FENCE|SIGNALED|SOLICITED -> flags 0x7, imm kept");

	/* RDMA READ: RC only. */
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 42;
	wr.opcode = IBV_WR_RDMA_READ;
	wr.sg_list = sge2;
	wr.num_sge = 2;
	wr.imm_data = 0x5555;
	wr.wr.rdma.remote_addr = 0x7000000000000008ull;
	wr.wr.rdma.rkey = 0xabcdef01u;
	e = (struct sqe_img){ .wr_id = 42, .opcode = 4, .num_sge = 2,
			      .raddr = 0x7000000000000008ull,
			      .rkey = 0xabcdef01u };
	{
		uint8_t slot[STRIDE];
		bool ok = encode_matches("RDMA_READ", &caps_rc, &wr, &e,
					 sge2, 2);

		ok = ok && encode(&caps_uc, &wr, slot) == EINVAL &&
		     encode(&caps_ud, &wr, slot) == EINVAL;
		result(ok, "SQE RDMA_READ: encoded on RC (opcode 4), EINVAL on UC and UD");
	}
}

static void test_sqe_ud(void)
{
	/* The SQE carries the kernel's AH number, not the uverbs handle. */
	struct snaa_ah sah = { .ibv_ah = { .handle = 0x66 }, .ahn = 0x55 };
	struct ibv_ah *ah = &sah.ibv_ah;
	struct ibv_send_wr wr;
	struct sqe_img e;
	uint8_t slot[STRIDE];
	bool ok;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 7;
	wr.opcode = IBV_WR_SEND_WITH_IMM;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.imm_data = htonl(9);
	wr.sg_list = sge2;
	wr.num_sge = 1;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = 0xabcdef;
	wr.wr.ud.remote_qkey = 0x11111111u;
	e = (struct sqe_img){ .wr_id = 7, .opcode = 3, .flags = 2,
			      .num_sge = 1, .imm = htonl(9), .ah = 0x55,
			      .qpn = 0xabcdef, .qkey = 0x11111111u };
	ok = encode_matches("UD SEND_WITH_IMM", &caps_ud, &wr, &e, sge2, 1);
	result(ok, "SQE UD SEND_WITH_IMM: ah_handle (the AH's ahn), remote_qpn, remote_qkey set, remote_addr/rkey 0");

	ok = true;
	wr.opcode = IBV_WR_RDMA_WRITE;
	ok = ok && encode(&caps_ud, &wr, slot) == EINVAL;
	wr.opcode = IBV_WR_SEND;
	wr.wr.ud.ah = NULL;
	ok = ok && encode(&caps_ud, &wr, slot) == EINVAL;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = 0x1000000;
	ok = ok && encode(&caps_ud, &wr, slot) == EINVAL;
	wr.wr.ud.remote_qpn = 0xffffff;
	ok = ok && encode(&caps_ud, &wr, slot) == 0;
	result(ok, "UD: RDMA_WRITE, no AH and a QPN over 24 bits are EINVAL; QPN 0xffffff is fine");
}

static void test_sqe_atomic(void)
{
	struct ibv_send_wr wr;
	struct sqe_img e;
	uint8_t slot[STRIDE];
	bool ok;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 0x51;
	wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
	wr.send_flags = IBV_SEND_SIGNALED | IBV_SEND_FENCE;
	wr.sg_list = sge2;
	wr.num_sge = 1;
	wr.wr.atomic.remote_addr = 0x1000000000000008ull;
	wr.wr.atomic.rkey = 0xa70;
	wr.wr.atomic.compare_add = 0x0123456789abcdefull;
	wr.wr.atomic.swap = 0xfedcba9876543210ull;
	e = (struct sqe_img){ .wr_id = 0x51, .opcode = 5, .flags = 3,
			      .num_sge = 1, .raddr = 0x1000000000000008ull,
			      .rkey = 0xa70, .atomic = true,
			      .cmp = 0x0123456789abcdefull,
			      .swp = 0xfedcba9876543210ull };
	ok = encode_matches("ATOMIC_CMP_AND_SWP", &caps_rc, &wr, &e, sge2, 1);
	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	e.opcode = 6;
	ok = ok && encode_matches("ATOMIC_FETCH_AND_ADD", &caps_rc, &wr, &e,
				  sge2, 1);
	ok = ok && encode(&caps_uc, &wr, slot) == EINVAL &&
	     encode(&caps_ud, &wr, slot) == EINVAL;
	wr.send_flags |= IBV_SEND_INLINE;
	ok = ok && encode(&caps_rc, &wr, slot) == EINVAL;
	result(ok, "SQE atomics (RC): remote address, rkey, compare/add and swap over the UD fields; EINVAL on UC and UD and inline");
}

static void test_sqe_mw(void)
{
	struct ibv_mr mr = { .lkey = 0x3344 };
	struct ibv_mw mw2 = { .rkey = 0xabcdef07, .type = IBV_MW_TYPE_2 };
	struct ibv_mw mw1 = { .rkey = 0x12, .type = IBV_MW_TYPE_1 };
	struct snaa_ring *r;
	struct snaa_queue q;
	struct ibv_send_wr wr;
	struct sqe_img e;
	uint8_t slot[STRIDE];
	bool ok;

	/*
	 * BIND_MW: current key in rkey, new key in imm_data (host order),
	 * VA in remote_addr, length/L_Key/rights over the UD fields; the
	 * SGE list (garbage here) is neither checked nor copied.
	 */
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 0xb1;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = IBV_SEND_SIGNALED | IBV_SEND_FENCE;
	wr.sg_list = sge2;
	wr.num_sge = 99;
	wr.bind_mw.mw = &mw2;
	wr.bind_mw.rkey = 0xabcdef08;
	wr.bind_mw.bind_info.mr = &mr;
	wr.bind_mw.bind_info.addr = 0x7f0000001000ull;
	wr.bind_mw.bind_info.length = 0x100000001ull;
	wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE |
					       IBV_ACCESS_ZERO_BASED;
	e = (struct sqe_img){ .wr_id = 0xb1, .opcode = 8, .flags = 3,
			      .num_sge = 0, .imm = 0xabcdef08,
			      .raddr = 0x7f0000001000ull, .rkey = 0xabcdef07,
			      .bind = true, .len = 0x100000001ull,
			      .lkey = 0x3344,
			      .access = IBV_ACCESS_REMOTE_WRITE |
					IBV_ACCESS_ZERO_BASED };
	ok = encode_matches("BIND_MW RC", &caps_rc, &wr, &e, NULL, 0) &&
	     encode_matches("BIND_MW UC", &caps_uc, &wr, &e, NULL, 0);
	result(ok, "SQE BIND_MW (RC, UC): opcode 8, rkey = current key, imm = new key (host order), remote_addr = VA, 64-bit length, MR lkey and rights (ZERO_BASED passed on) at 40/48/52, num_sge 0, no SGE written");

	/* unbind: length 0 without an MR */
	wr.bind_mw.bind_info.mr = NULL;
	wr.bind_mw.bind_info.addr = 0;
	wr.bind_mw.bind_info.length = 0;
	wr.bind_mw.bind_info.mw_access_flags = 0;
	e.raddr = 0;
	e.len = 0;
	e.lkey = 0;
	e.access = 0;
	ok = encode_matches("BIND_MW unbind", &caps_rc, &wr, &e, NULL, 0);
	wr.bind_mw.bind_info.length = 1;
	ok = ok && encode(&caps_rc, &wr, slot) == EINVAL;
	wr.bind_mw.bind_info.length = 0;
	ok = ok && encode(&caps_ud, &wr, slot) == EINVAL;
	wr.bind_mw.mw = &mw1;
	ok = ok && encode(&caps_rc, &wr, slot) == EINVAL;
	wr.bind_mw.mw = NULL;
	ok = ok && encode(&caps_rc, &wr, slot) == EINVAL;
	wr.bind_mw.mw = &mw2;
	wr.send_flags = IBV_SEND_INLINE;
	ok = ok && encode(&caps_rc, &wr, slot) == EINVAL;
	result(ok, "BIND_MW: length 0 without an MR encodes L_Key 0; a length without an MR, UD, a type 1 window, no window, INLINE are EINVAL");

	/* ibv_bind_mw: type 1 only */
	r = ring_new(4, STRIDE, 7);
	snaa_queue_init(&q, r, 4, STRIDE, 1, true);
	wr.send_flags = 0;
	ok = snaa_sq_post_bind(&q, &caps_uc, &wr) == EINVAL &&
	     r->producer == 7;
	wr.bind_mw.mw = &mw1;
	wr.bind_mw.rkey = 0x13;
	e = (struct sqe_img){ .wr_id = 0xb1, .opcode = 8, .imm = 0x13,
			      .rkey = 0x12, .bind = true };
	sqe_image(slot, sizeof(slot), &e, NULL, 0);
	ok = ok && snaa_sq_post_bind(&q, &caps_uc, &wr) == 0 &&
	     r->producer == 8 && q.index == 8 &&
	     same_bytes("ibv_bind_mw", k_slot(r, 4, STRIDE, 7), slot,
			STRIDE) &&
	     snaa_sq_post_bind(&q, &caps_uc, &wr) == ENOMEM &&
	     r->producer == 8;
	result(ok, "type 1 bind (ibv_bind_mw): a type 2 window EINVAL, the WQE published as post_send does, ENOMEM when full");
	free(r);

	/* LOCAL_INV: the key in imm_data, host order, no data */
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 0x1a;
	wr.opcode = IBV_WR_LOCAL_INV;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = sge2;
	wr.num_sge = 2;
	wr.invalidate_rkey = 0x11223344;
	e = (struct sqe_img){ .wr_id = 0x1a, .opcode = 7, .flags = 2,
			      .imm = 0x11223344 };
	ok = encode_matches("LOCAL_INV RC", &caps_rc, &wr, &e, NULL, 0) &&
	     encode_matches("LOCAL_INV UC", &caps_uc, &wr, &e, NULL, 0) &&
	     encode(&caps_ud, &wr, slot) == EINVAL;
	wr.send_flags = IBV_SEND_INLINE;
	ok = ok && encode(&caps_rc, &wr, slot) == EINVAL;
	result(ok, "SQE LOCAL_INV (RC, UC): opcode 7, imm = R_Key in host order, num_sge 0, no SGE written; EINVAL on UD and inline");

	/* SEND_WITH_INV: a SEND with the key in imm_data; RC only */
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 0x5e;
	wr.opcode = IBV_WR_SEND_WITH_INV;
	wr.send_flags = IBV_SEND_SOLICITED;
	wr.sg_list = sge2;
	wr.num_sge = 2;
	wr.invalidate_rkey = 0xa1b2c3d4;
	e = (struct sqe_img){ .wr_id = 0x5e, .opcode = 9, .flags = 4,
			      .num_sge = 2, .imm = 0xa1b2c3d4 };
	ok = encode_matches("SEND_WITH_INV", &caps_rc, &wr, &e, sge2, 2) &&
	     encode(&caps_uc, &wr, slot) == EINVAL &&
	     encode(&caps_ud, &wr, slot) == EINVAL;
	{
		char d[] = "xyz";
		struct ibv_sge isg = { .addr = (uintptr_t)d, .length = 3 };
		uint8_t want[STRIDE];

		wr.sg_list = &isg;
		wr.num_sge = 1;
		wr.send_flags = IBV_SEND_INLINE;
		e.flags = SNAA_WQE_INLINE;
		e.num_sge = 0;
		e.inline_len = 3;
		sqe_image(want, sizeof(want), &e, NULL, 0);
		memcpy(want + SQE_SGE, d, 3);
		ok = ok && encode(&caps_rc, &wr, slot) == 0 &&
		     same_bytes("SEND_WITH_INV inline", slot, want,
				sizeof(want));
	}
	result(ok, "SQE SEND_WITH_INV (RC): opcode 9, imm = R_Key in host order, SGEs or inline data as for SEND; EINVAL on UC and UD");
}

static void test_sqe_rejects(void)
{
	static const enum ibv_wr_opcode bad_ops[] = {
		IBV_WR_TSO, IBV_WR_DRIVER1, IBV_WR_ATOMIC_WRITE,
		(enum ibv_wr_opcode)1000,
	};
	struct ibv_send_wr wr;
	uint8_t slot[STRIDE];
	bool ok = true;
	size_t i;

	memset(&wr, 0, sizeof(wr));
	wr.sg_list = sge2;
	wr.num_sge = 1;
	for (i = 0; i < sizeof(bad_ops) / sizeof(bad_ops[0]); i++) {
		wr.opcode = bad_ops[i];
		if (encode(&caps_rc, &wr, slot) != EINVAL) {
			diag("opcode %d accepted on RC", bad_ops[i]);
			ok = false;
		}
	}
	wr.opcode = IBV_WR_SEND;
	ok = ok && encode(&caps_rc, &wr, slot) == 0;
	wr.send_flags = IBV_SEND_IP_CSUM;
	ok = ok && encode(&caps_rc, &wr, slot) == EINVAL;
	wr.send_flags = 1u << 20;
	ok = ok && encode(&caps_rc, &wr, slot) == EINVAL;
	result(ok, "TSO, DRIVER1, ATOMIC_WRITE, unknown opcodes and unknown send flags (IP_CSUM) are EINVAL");
}

static void test_sqe_inline(void)
{
	char a[] = "abc", b[] = "defgh", c[] = "ij";
	struct ibv_sge sg[4] = {
		{ .addr = (uintptr_t)a, .length = 3, .lkey = 0xbad },
		{ .addr = (uintptr_t)b, .length = 5 },
		{ .addr = 0, .length = 0 },
		{ .addr = (uintptr_t)c, .length = 2 },
	};
	struct ibv_send_wr wr;
	uint8_t slot[STRIDE], want[STRIDE];
	struct sqe_img e;
	static char big[STRIDE];
	struct ibv_sge bsg = { .addr = (uintptr_t)big };
	bool ok;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 3;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED;
	wr.sg_list = sg;
	wr.num_sge = 4;
	e = (struct sqe_img){ .wr_id = 3, .opcode = 2, .flags = 0xa,
			      .num_sge = 0, .inline_len = 10 };
	ok = encode(&caps_rc, &wr, slot) == 0;
	sqe_image(want, sizeof(want), &e, NULL, 0);
	memcpy(want + SQE_SGE, "abcdefghij", 10);
	ok = ok && same_bytes("inline", slot, want, sizeof(want));
	result(ok, "inline SEND: 4 SGEs (one empty) copied as 10 contiguous bytes after the header, inline_len 10, num_sge 0, flags INLINE|SIGNALED, nothing more written");

	/* Inline RDMA WRITE keeps its remote address. */
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.wr.rdma.remote_addr = 0x99;
	wr.wr.rdma.rkey = 5;
	e.opcode = 0;
	e.raddr = 0x99;
	e.rkey = 5;
	ok = encode(&caps_uc, &wr, slot) == 0;
	sqe_image(want, sizeof(want), &e, NULL, 0);
	memcpy(want + SQE_SGE, "abcdefghij", 10);
	ok = ok && same_bytes("inline write", slot, want, sizeof(want));
	result(ok, "inline RDMA_WRITE (UC): data inline, remote_addr/rkey kept");

	/* Limits. */
	memset(&wr, 0, sizeof(wr));
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_INLINE;
	wr.sg_list = &bsg;
	wr.num_sge = 1;
	memset(big, 'x', sizeof(big));
	bsg.length = caps_rc.max_inline;
	ok = encode(&caps_rc, &wr, slot) == 0 &&
	     slot[SQE_SGE + caps_rc.max_inline - 1] == 'x' &&
	     slot[SQE_SGE + caps_rc.max_inline] == POISON;
	bsg.length = caps_rc.max_inline + 1;
	ok = ok && encode(&caps_rc, &wr, slot) == EINVAL;
	bsg.length = 1;
	wr.opcode = IBV_WR_RDMA_READ;
	ok = ok && encode(&caps_rc, &wr, slot) == EINVAL;
	/* 2^32 + 1 bytes in total must not wrap to 1. */
	{
		struct ibv_sge huge[2] = {
			{ .addr = (uintptr_t)big, .length = 0xffffffffu },
			{ .addr = (uintptr_t)big, .length = 2 },
		};

		wr.opcode = IBV_WR_SEND;
		wr.sg_list = huge;
		wr.num_sge = 2;
		ok = ok && encode(&caps_rc, &wr, slot) == EINVAL;
	}
	result(ok, "inline limits: max_inline_data bytes accepted, one more EINVAL, 64-bit total (no wrap), inline RDMA_READ EINVAL");
}

static void test_sqe_sge_limits(void)
{
	struct ibv_sge sg[5];
	struct ibv_send_wr wr;
	uint8_t slot[STRIDE];
	struct sqe_img e;
	bool ok;
	int i;

	for (i = 0; i < 5; i++)
		sg[i] = (struct ibv_sge){ .addr = 0x100u * (i + 1),
					  .length = (uint32_t)i + 1,
					  .lkey = 0x40u + i };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 11;
	wr.opcode = IBV_WR_SEND;
	wr.sg_list = sg;
	wr.num_sge = 4;		/* == caps.max_sge */
	e = (struct sqe_img){ .wr_id = 11, .opcode = 2, .num_sge = 4 };
	ok = encode_matches("4 SGEs", &caps_rc, &wr, &e, sg, 4);
	wr.num_sge = 5;
	ok = ok && encode(&caps_rc, &wr, slot) == EINVAL;
	wr.num_sge = -1;
	ok = ok && encode(&caps_rc, &wr, slot) == EINVAL;
	wr.num_sge = 1;
	wr.sg_list = NULL;
	ok = ok && encode(&caps_rc, &wr, slot) == EINVAL;
	wr.num_sge = 0;
	e.num_sge = 0;
	ok = ok && encode_matches("0 SGEs", &caps_rc, &wr, &e, NULL, 0);
	result(ok, "SGE limits: max_send_sge (4) SGEs encoded, 5 / -1 / NULL list EINVAL, 0 SGEs fine");
}

/* ------------------------------------------------------------------ */
/* SQ posting                                                          */
/* ------------------------------------------------------------------ */

static void chain(struct ibv_send_wr *wr, int n, uint64_t first_id)
{
	int i;

	memset(wr, 0, sizeof(*wr) * (size_t)n);
	for (i = 0; i < n; i++) {
		wr[i].wr_id = first_id + (uint64_t)i;
		wr[i].opcode = IBV_WR_SEND;
		wr[i].sg_list = sge2;
		wr[i].num_sge = 1;
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
	}
}

static uint64_t slot_wr_id(struct snaa_ring *r, uint32_t num,
			   uint32_t stride, uint32_t index)
{
	uint64_t id;

	memcpy(&id, k_slot(r, num, stride, index) + SQE_WR_ID, sizeof(id));
	return id;
}

static void test_sq_full(void)
{
	struct ibv_send_wr wr[6], *bad = NULL;
	struct snaa_ring *r = ring_new(4, STRIDE, 100);
	struct snaa_queue q;
	unsigned int posted = 99;
	bool ok;
	int err, i;

	snaa_queue_init(&q, r, 4, STRIDE, 4, true);
	chain(wr, 6, 1000);
	err = snaa_sq_post(&q, &caps_rc, wr, &bad, &posted);
	ok = err == ENOMEM && bad == &wr[4] && posted == 4 &&
	     r->producer == 104 && q.index == 104 && r->consumer == 100;
	for (i = 0; ok && i < 4; i++)
		ok = slot_wr_id(r, 4, STRIDE, 100u + i) == 1000u + i;
	if (!ok)
		diag("err %d bad %td posted %u producer %u", err,
		     bad ? bad - wr : -1, posted, r->producer);
	result(ok, "SQ full: 6 WRs into 4 slots -> ENOMEM, bad_wr = 5th WR, first 4 posted and published");

	k_consume(r, 2);
	bad = NULL;
	err = snaa_sq_post(&q, &caps_rc, &wr[4], &bad, &posted);
	ok = !err && posted == 2 && !bad && r->producer == 106 &&
	     slot_wr_id(r, 4, STRIDE, 104) == 1004 &&
	     slot_wr_id(r, 4, STRIDE, 105) == 1005 &&
	     k_slot(r, 4, STRIDE, 104) == k_slot(r, 4, STRIDE, 100);
	result(ok, "after the kernel consumed 2, the rest goes into the freed slots (index 104 -> slot 0)");
	free(r);
}

static void test_sq_bad_middle(void)
{
	struct ibv_send_wr wr[3], *bad = NULL;
	struct snaa_ring *r = ring_new(8, STRIDE, 0);
	struct snaa_queue q;
	unsigned int posted;
	bool ok;
	int err;

	snaa_queue_init(&q, r, 8, STRIDE, 8, true);
	chain(wr, 3, 1);
	wr[1].num_sge = 5;
	err = snaa_sq_post(&q, &caps_rc, wr, &bad, &posted);
	ok = err == EINVAL && bad == &wr[1] && posted == 1 &&
	     r->producer == 1 && slot_wr_id(r, 8, STRIDE, 0) == 1 &&
	     k_slot(r, 8, STRIDE, 1)[0] == POISON;

	/* Invalid beats full: a full queue still reports EINVAL. */
	q.limit = 1;
	bad = NULL;
	err = snaa_sq_post(&q, &caps_rc, &wr[1], &bad, &posted);
	ok = ok && err == EINVAL && bad == &wr[1] && posted == 0 &&
	     r->producer == 1;
	result(ok, "bad WR in the middle: EINVAL, bad_wr = 2nd WR, 1st posted, nothing written for the 2nd; invalid reported before full");
	free(r);
}

static void test_sq_limit(void)
{
	struct ibv_send_wr wr[6], *bad = NULL;
	struct snaa_ring *r = ring_new(8, STRIDE, 0);
	struct snaa_queue q;
	unsigned int posted;
	int err;

	snaa_queue_init(&q, r, 8, STRIDE, 5, true);
	chain(wr, 6, 0);
	err = snaa_sq_post(&q, &caps_rc, wr, &bad, &posted);
	result(err == ENOMEM && bad == &wr[5] && posted == 5 && q.limit == 5,
	       "granted max_send_wr (5) below the ring size (8) bounds the WRs in flight");
	free(r);

	r = ring_new(4, STRIDE, 0);
	snaa_queue_init(&q, r, 4, STRIDE, 100, true);
	result(q.limit == 4, "a limit above the ring size is clamped to it");
	free(r);
}

static void test_sq_wrap(void)
{
	const uint32_t start = 0xfffffff0u, num = 8;
	struct ibv_send_wr wr[5], *bad;
	struct snaa_ring *r = ring_new(num, STRIDE, start);
	struct snaa_queue q;
	uint32_t k = start;	/* kernel's consumer */
	uint64_t next_id = 0, want = 0;
	unsigned int posted;
	bool ok = true;
	int round, err;

	snaa_queue_init(&q, r, num, STRIDE, num, true);
	ok = q.index == start;
	for (round = 0; ok && round < 12; round++) {
		chain(wr, 5, next_id);
		bad = NULL;
		err = snaa_sq_post(&q, &caps_rc, wr, &bad, &posted);
		next_id += posted;
		if (err && err != ENOMEM) {
			diag("round %d: error %d", round, err);
			ok = false;
		}
		/* Kernel: check in order what became visible, then free. */
		while (ok && k != __atomic_load_n(&r->producer,
						  __ATOMIC_ACQUIRE)) {
			if (slot_wr_id(r, num, STRIDE, k) != want) {
				diag("index %#x: wr_id %llu, expected %llu", k,
				     (unsigned long long)slot_wr_id(r, num,
								    STRIDE, k),
				     (unsigned long long)want);
				ok = false;
			}
			k++;
			want++;
		}
		k_consume(r, k - r->consumer);
	}
	ok = ok && next_id == 60 && r->producer == start + 60 &&
	     r->producer == 0x2c && r->consumer == 0x2c;
	result(ok, "SQ wrap-around: producer from 0xfffffff0 past 2^32 to 0x2c, 60 WRs seen by the kernel in order");
	free(r);
}

static void test_sq_bogus_consumer(void)
{
	struct ibv_send_wr wr[1], *bad = NULL;
	struct snaa_ring *r = ring_new(8, STRIDE, 10);
	struct snaa_queue q;
	unsigned int posted;
	int err;

	snaa_queue_init(&q, r, 8, STRIDE, 8, true);
	r->consumer = 11;	/* kernel claims to have consumed unposted */
	chain(wr, 1, 0);
	err = snaa_sq_post(&q, &caps_rc, wr, &bad, &posted);
	result(err == ENOMEM && bad == wr && r->producer == 10 &&
	       !snaa_queue_indices_ok(&q),
	       "a kernel consumer index ahead of our producer reads as full (ENOMEM), never as room; indices_ok rejects it");
	free(r);
}

/* ------------------------------------------------------------------ */
/* Receive queue                                                       */
/* ------------------------------------------------------------------ */

static void test_rq(void)
{
	const uint32_t num = 4, stride = 64, start = 0xfffffffeu;
	struct snaa_ring *r = ring_new(num, stride, start);
	struct ibv_recv_wr wr[6], *bad = NULL;
	uint8_t want[64];
	struct snaa_queue q;
	unsigned int posted;
	bool ok;
	int err, i;

	memset(wr, 0, sizeof(wr));
	for (i = 0; i < 6; i++) {
		wr[i].wr_id = 0xabcd0000u + (uint64_t)i;
		wr[i].sg_list = sge2;
		wr[i].num_sge = 2;
		wr[i].next = i < 5 ? &wr[i + 1] : NULL;
	}
	wr[0].num_sge = 3;	/* max_sge is 2 */
	snaa_queue_init(&q, r, num, stride, num, true);
	err = snaa_rq_post(&q, 2, wr, &bad, &posted);
	ok = err == EINVAL && bad == wr && posted == 0 && r->producer == start;
	result(ok, "RQ: more SGEs than max_recv_sge is EINVAL, bad_wr set, nothing posted");

	wr[0].num_sge = 2;
	bad = NULL;
	err = snaa_rq_post(&q, 2, wr, &bad, &posted);
	ok = err == ENOMEM && bad == &wr[4] && posted == 4 &&
	     r->producer == start + 4 && r->producer == 2;
	memset(want, POISON, sizeof(want));
	put64(want, RQE_WR_ID, 0xabcd0000u);
	put32(want, RQE_NUM_SGE, 2);
	put32(want, RQE_RESERVED, 0);
	put64(want, RQE_SGE, sge2[0].addr);
	put32(want, RQE_SGE + 8, sge2[0].length);
	put32(want, RQE_SGE + 12, sge2[0].lkey);
	put64(want, RQE_SGE + 16, sge2[1].addr);
	put32(want, RQE_SGE + 24, sge2[1].length);
	put32(want, RQE_SGE + 28, sge2[1].lkey);
	ok = ok && same_bytes("RQE", k_slot(r, num, stride, start), want,
			      sizeof(want));
	/* Index 0xffffffff is slot 3, index 0 slot 0. */
	ok = ok && slot_wr_id(r, num, stride, 0xffffffffu) == 0xabcd0001u &&
	     k_slot(r, num, stride, 0xffffffffu) ==
	     (uint8_t *)(r + 1) + 3 * stride &&
	     slot_wr_id(r, num, stride, 0) == 0xabcd0002u;
	result(ok, "RQ: exact RQE bytes, full -> ENOMEM with bad_wr = 5th, indices wrap 0xfffffffe -> 2");
	free(r);
}

/* ------------------------------------------------------------------ */
/* Completion queue                                                    */
/* ------------------------------------------------------------------ */

static void test_cqe_to_wc(void)
{
	struct snaa_cqe cqe;
	uint8_t img[32];
	struct ibv_wc wc;
	bool ok;

	/* Build the CQE from bytes at the ABI offsets. */
	memset(img, 0, sizeof(img));
	put64(img, 0, 0x0102030405060708ull);	/* wr_id */
	put32(img, 8, 0x00123456);		/* qp_num */
	put32(img, 12, 0x00654321);		/* src_qp */
	put32(img, 16, 0x80000001u);		/* byte_len */
	put32(img, 20, htonl(0xcafef00d));	/* imm_data */
	put8(img, 24, IBV_WC_RECV_RDMA_WITH_IMM); /* opcode */
	put8(img, 25, IBV_WC_REM_ACCESS_ERR);	/* status */
	put8(img, 26, SNAA_WC_GRH | SNAA_WC_WITH_IMM);
	put8(img, 27, 0xf);			/* sl */
	put16(img, 28, 0xfffe);			/* pkey_index */
	put16(img, 30, 0xffff);			/* reserved */
	memcpy(&cqe, img, sizeof(cqe));
	memset(&wc, 0xff, sizeof(wc));
	snaa_cqe_to_wc(&cqe, &wc);
	ok = wc.wr_id == 0x0102030405060708ull &&
	     wc.status == IBV_WC_REM_ACCESS_ERR &&
	     wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
	     wc.vendor_err == 0 && wc.byte_len == 0x80000001u &&
	     wc.imm_data == htonl(0xcafef00d) && wc.qp_num == 0x123456 &&
	     wc.src_qp == 0x654321 &&
	     wc.wc_flags == (IBV_WC_GRH | IBV_WC_WITH_IMM) &&
	     wc.pkey_index == 0xfffe && wc.slid == 0 && wc.sl == 0xf &&
	     wc.dlid_path_bits == 0;
	if (!ok)
		diag("wr_id %#llx status %d opcode %d vendor_err %u byte_len %#x imm %#x qp %#x src %#x flags %#x pkey %#x slid %#x sl %u dlid_path_bits %u",
		     (unsigned long long)wc.wr_id, wc.status, wc.opcode,
		     wc.vendor_err, wc.byte_len, wc.imm_data, wc.qp_num,
		     wc.src_qp, wc.wc_flags, wc.pkey_index, wc.slid, wc.sl,
		     wc.dlid_path_bits);
	result(ok, "CQE -> ibv_wc: wr_id, status, opcode, byte_len, imm (network order), qp_num, src_qp, flags, pkey_index, sl copied; vendor_err, slid, dlid_path_bits 0");

	{
		static const struct { uint8_t in; unsigned int out; } map[] = {
			{ 0, 0 },
			{ SNAA_WC_GRH, IBV_WC_GRH },
			{ SNAA_WC_WITH_IMM, IBV_WC_WITH_IMM },
			{ SNAA_WC_GRH | SNAA_WC_WITH_IMM,
			  IBV_WC_GRH | IBV_WC_WITH_IMM },
			{ SNAA_WC_WITH_INV, IBV_WC_WITH_INV },
			{ 0xec, 0 },
		};
		size_t i;

		ok = true;
		for (i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
			cqe.wc_flags = map[i].in;
			snaa_cqe_to_wc(&cqe, &wc);
			if (wc.wc_flags != map[i].out) {
				diag("flags %#x -> %#x, expected %#x",
				     map[i].in, wc.wc_flags, map[i].out);
				ok = false;
			}
		}
		result(ok, "wc_flags: GRH -> IBV_WC_GRH, WITH_IMM -> IBV_WC_WITH_IMM, WITH_INV -> IBV_WC_WITH_INV, unknown bits dropped");
	}

	/* SEND with invalidate: the key, host order, as invalidated_rkey */
	memset(&cqe, 0, sizeof(cqe));
	cqe.opcode = IBV_WC_RECV;
	cqe.wc_flags = SNAA_WC_WITH_INV;
	cqe.imm_data = 0x8899aabb;
	cqe.byte_len = 12;
	snaa_cqe_to_wc(&cqe, &wc);
	result(wc.wc_flags == IBV_WC_WITH_INV &&
	       wc.invalidated_rkey == 0x8899aabb && wc.byte_len == 12 &&
	       wc.opcode == IBV_WC_RECV,
	       "CQE with SNAA_WC_WITH_INV: IBV_WC_WITH_INV, invalidated_rkey = imm_data (host order)");

	ok = true;
	{
		static const uint8_t ops[] = {
			IBV_WC_SEND, IBV_WC_RDMA_WRITE, IBV_WC_RDMA_READ,
			IBV_WC_RECV, IBV_WC_RECV_RDMA_WITH_IMM,
			IBV_WC_BIND_MW, IBV_WC_LOCAL_INV,
		};
		size_t i;

		for (i = 0; i < sizeof(ops); i++) {
			cqe.opcode = ops[i];
			cqe.status = (uint8_t)(IBV_WC_SUCCESS + i);
			snaa_cqe_to_wc(&cqe, &wc);
			ok = ok && wc.opcode == (enum ibv_wc_opcode)ops[i] &&
			     wc.status == (enum ibv_wc_status)i;
		}
	}
	result(ok, "CQE opcodes SEND, RDMA_WRITE, RDMA_READ, RECV (128), RECV_RDMA_WITH_IMM (129), BIND_MW (5), LOCAL_INV (6) and statuses (up to MW_BIND_ERR) pass through");
}

static struct snaa_cqe mk_cqe(uint64_t id)
{
	struct snaa_cqe c;

	memset(&c, 0, sizeof(c));
	c.wr_id = id;
	c.byte_len = (uint32_t)(id * 3 + 1);
	c.qp_num = 17;
	c.opcode = IBV_WC_RECV;
	return c;
}

static void test_cq_poll(void)
{
	const uint32_t num = 8, start = 0xfffffffeu;
	struct snaa_ring *r = ring_new(num, sizeof(struct snaa_cqe), start);
	struct ibv_wc wc[4];
	struct snaa_queue q;
	struct snaa_cqe c;
	bool ok;
	int n, i;

	snaa_queue_init(&q, r, num, sizeof(struct snaa_cqe), num, false);
	for (i = 0; i < 5; i++) {
		c = mk_cqe(100u + i);
		k_complete(r, num, &c);
	}
	memset(wc, 0, sizeof(wc));
	n = snaa_cq_poll(&q, 2, wc);
	ok = n == 2 && wc[0].wr_id == 100 && wc[1].wr_id == 101 &&
	     wc[1].byte_len == 304 && r->consumer == start + 2 &&
	     r->consumer == 0;
	n = snaa_cq_poll(&q, 2, wc);
	ok = ok && n == 2 && wc[0].wr_id == 102 && wc[1].wr_id == 103 &&
	     r->consumer == 2;
	n = snaa_cq_poll(&q, 2, wc);
	ok = ok && n == 1 && wc[0].wr_id == 104 && r->consumer == 3;
	wc[0].wr_id = 0;
	n = snaa_cq_poll(&q, 4, wc);
	ok = ok && n == 0 && wc[0].wr_id == 0 && r->consumer == 3;
	result(ok, "poll in partial batches: 5 CQEs -> 2, 2, 1, 0; consumer published after each (0xfffffffe -> 3, wraps)");

	c = mk_cqe(200);
	k_complete(r, num, &c);
	n = snaa_cq_poll(&q, 0, wc);
	ok = n == 0 && r->consumer == 3;
	n = snaa_cq_poll(&q, -5, wc);
	ok = ok && n == 0 && r->consumer == 3;
	n = snaa_cq_poll(&q, 4, wc);
	ok = ok && n == 1 && wc[0].wr_id == 200 && r->consumer == 4;
	result(ok, "poll of 0 or a negative count consumes nothing");

	r->producer = r->consumer + num + 1;
	n = snaa_cq_poll(&q, 4, wc);
	result(n == -EIO && r->consumer == 4 && q.index == 4,
	       "producer more than a ring ahead: -EIO, nothing consumed");
	r->producer = r->consumer + num;
	n = snaa_cq_poll(&q, 4, wc);
	result(n == 4 && r->consumer == 8,
	       "producer exactly a full ring ahead is valid (4 of 8 polled)");
	free(r);
}

/* ------------------------------------------------------------------ */
/* Doorbell decision, geometry                                         */
/* ------------------------------------------------------------------ */

static void test_doorbell(void)
{
	struct snaa_ring r;
	bool ok;

	memset(&r, 0, sizeof(r));
	ok = !snaa_ring_needs_doorbell(&r);
	r.flags = SNAA_RING_F_IDLE;
	ok = ok && snaa_ring_needs_doorbell(&r);
	r.flags = 0x6;
	ok = ok && !snaa_ring_needs_doorbell(&r);
	r.flags = 0x7;
	ok = ok && snaa_ring_needs_doorbell(&r);
	r.flags = 0;
	r.producer = r.consumer = 5;	/* indices do not matter */
	ok = ok && !snaa_ring_needs_doorbell(&r);
	result(ok, "doorbell only when SNAA_RING_F_IDLE is set (0: no, IDLE: yes, other bits: no, all: yes)");
}

static void test_geometry(void)
{
	bool ok;

	ok = snaa_ring_geometry_ok(8, 32, 128 + 8 * 32, 32) &&
	     !snaa_ring_geometry_ok(8, 32, 128 + 8 * 32 - 1, 32) &&
	     !snaa_ring_geometry_ok(6, 32, 4096, 32) &&
	     !snaa_ring_geometry_ok(0, 32, 4096, 32) &&
	     !snaa_ring_geometry_ok(8, 24, 4096, 32) &&
	     !snaa_ring_geometry_ok(8, 36, 4096, 32) &&
	     snaa_ring_geometry_ok(1, 64, 192, 64) &&
	     /* 0x10000 * 0x10000 wraps to 0 in 32 bits */
	     !snaa_ring_geometry_ok(0x10000, 0x10000, 0xffffffffu, 32) &&
	     !snaa_ring_geometry_ok(0x80000000u, 8, 0xffffffffu, 8);
	result(ok, "ring geometry: power-of-two count, stride >= minimum and a multiple of 8, size >= 128 + num*stride computed in 64 bits");

	ok = snaa_sq_min_stride(2, 0) == 56 + 32 &&
	     snaa_sq_min_stride(2, 100) == 56 + 100 &&
	     snaa_sq_min_stride(16, 64) == 56 + 256 &&
	     snaa_sq_min_stride(0xffffffffu, 0) ==
	     56 + 16 * (uint64_t)0xffffffffu &&
	     snaa_rq_min_stride(3) == 16 + 48 && snaa_rq_min_stride(0) == 16;
	result(ok, "minimum strides: SQ 56 + max(16*max_sge, max_inline), RQ 16 + 16*max_sge, no 32-bit overflow");
}

static void test_init(void)
{
	struct snaa_ring *r = ring_new(4, 64, 0);
	struct snaa_queue q;
	bool ok;

	r->producer = 9;
	r->consumer = 7;
	snaa_queue_init(&q, r, 4, 64, 4, true);
	ok = q.index == 9 && q.slots == (uint8_t *)r + 128 &&
	     snaa_queue_indices_ok(&q);
	snaa_queue_init(&q, r, 4, 64, 4, false);
	ok = ok && q.index == 7;
	r->producer = 12;
	ok = ok && !snaa_queue_indices_ok(&q);
	result(ok, "init takes our index from the ring (SQ/RQ: producer, CQ: consumer); entries start after the 128-byte header");
	free(r);
}

/* ------------------------------------------------------------------ */
/* Threads: the index and doorbell protocols under concurrency         */
/* ------------------------------------------------------------------ */

#define RACE_N		200000u
#define RACE_NUM	16u
#define RACE_TIMEOUT_NS	(30ull * 1000000000ull)	/* hang guard only */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct race {
	struct snaa_ring *ring;
	struct snaa_queue q;
	unsigned int kicks;	/* doorbells rung (atomic) */
	unsigned int bad;	/* kernel-side mismatches */
	unsigned int stranded;	/* posted WQEs the kernel never saw */
	uint32_t seen;
	bool idle_protocol;
};

/* Fake kernel SQ consumer; with idle_protocol it sleeps until a kick. */
static void *race_kernel(void *arg)
{
	struct race *rc = arg;
	struct snaa_ring *r = rc->ring;
	uint32_t cons = r->consumer, prod;
	unsigned int kicks_seen = 0;
	uint64_t deadline, end = now_ns() + 4 * RACE_TIMEOUT_NS;

	while (rc->seen < RACE_N) {
		if (now_ns() > end) {
			rc->stranded = __atomic_load_n(&r->producer,
						       __ATOMIC_ACQUIRE) - cons;
			diag("kernel side gave up after %u WRs", rc->seen);
			return NULL;
		}
		prod = __atomic_load_n(&r->producer, __ATOMIC_ACQUIRE);
		if (prod != cons) {
			uint8_t *s = k_slot(r, RACE_NUM, STRIDE, cons);
			uint64_t id, addr;

			memcpy(&id, s + SQE_WR_ID, sizeof(id));
			memcpy(&addr, s + SQE_SGE, sizeof(addr));
			if (id != rc->seen || addr != id * 3)
				rc->bad++;
			cons++;
			rc->seen++;
			__atomic_store_n(&r->consumer, cons, __ATOMIC_RELEASE);
			continue;
		}
		if (!rc->idle_protocol) {
			sched_yield();
			continue;
		}
		/* snaa-abi.h: set IDLE, full barrier, re-read producer. */
		__atomic_store_n(&r->flags, SNAA_RING_F_IDLE, __ATOMIC_RELAXED);
		atomic_thread_fence(memory_order_seq_cst);
		if (__atomic_load_n(&r->producer, __ATOMIC_ACQUIRE) != cons) {
			__atomic_store_n(&r->flags, 0, __ATOMIC_RELAXED);
			continue;
		}
		deadline = now_ns() + RACE_TIMEOUT_NS;
		while (__atomic_load_n(&rc->kicks, __ATOMIC_ACQUIRE) ==
		       kicks_seen) {
			if (now_ns() > deadline) {
				rc->stranded = __atomic_load_n(&r->producer,
							       __ATOMIC_ACQUIRE) -
					       cons;
				return NULL;
			}
			sched_yield();
		}
		kicks_seen = __atomic_load_n(&rc->kicks, __ATOMIC_ACQUIRE);
		__atomic_store_n(&r->flags, 0, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void race_sq(bool idle_protocol)
{
	struct ibv_send_wr wr[5], *head, *bad;
	struct ibv_sge sg[5];
	struct race rc;
	pthread_t t;
	uint64_t id = 0, deadline;
	unsigned int posted, n, i;
	bool timeout = false;
	int err;

	memset(&rc, 0, sizeof(rc));
	rc.ring = ring_new(RACE_NUM, STRIDE, 0xffff0000u);
	rc.idle_protocol = idle_protocol;
	if (idle_protocol)
		rc.ring->flags = SNAA_RING_F_IDLE;	/* kernel idle at start */
	snaa_queue_init(&rc.q, rc.ring, RACE_NUM, STRIDE, RACE_NUM, true);
	pthread_create(&t, NULL, race_kernel, &rc);

	deadline = now_ns() + 4 * RACE_TIMEOUT_NS;
	while (id < RACE_N && !timeout) {
		n = 1 + (unsigned int)(id % 5);
		if (id + n > RACE_N)
			n = (unsigned int)(RACE_N - id);
		for (i = 0; i < n; i++) {
			sg[i] = (struct ibv_sge){ .addr = (id + i) * 3,
						  .length = 1 };
			wr[i] = (struct ibv_send_wr){
				.wr_id = id + i, .opcode = IBV_WR_SEND,
				.sg_list = &sg[i], .num_sge = 1,
				.next = i + 1 < n ? &wr[i + 1] : NULL };
		}
		head = wr;
		do {
			bad = NULL;
			err = snaa_sq_post(&rc.q, &caps_rc, head, &bad,
					   &posted);
			id += posted;
			if (posted && idle_protocol &&
			    snaa_ring_needs_doorbell(rc.ring))
				__atomic_fetch_add(&rc.kicks, 1,
						   __ATOMIC_RELEASE);
			if (err == ENOMEM) {
				head = bad;
				sched_yield();
			}
			if (now_ns() > deadline)
				timeout = true;
		} while (err == ENOMEM && !timeout);
		if (err && err != ENOMEM) {
			diag("post error %d", err);
			break;
		}
	}
	pthread_join(t, NULL);

	if (idle_protocol) {
		diag("%u doorbells for %u WRs", rc.kicks, RACE_N);
		result(rc.seen == RACE_N && !rc.bad && !rc.stranded &&
		       rc.kicks > 0 && rc.kicks <= RACE_N,
		       "doorbell protocol with a kernel that goes idle: all %u WRs consumed in order, none stranded (seen %u, stranded %u)",
		       RACE_N, rc.seen, rc.stranded);
	} else {
		result(rc.seen == RACE_N && !rc.bad && id == RACE_N,
		       "two threads, SQ of %u: %u WRs posted (retrying on ENOMEM) and consumed in order with their SGEs (%u mismatches)",
		       RACE_NUM, RACE_N, rc.bad);
	}
	free(rc.ring);
}

struct cq_race {
	struct snaa_ring *ring;
};

static void *race_cq_kernel(void *arg)
{
	struct cq_race *cr = arg;
	struct snaa_ring *r = cr->ring;
	uint64_t id = 0, deadline = now_ns() + 4 * RACE_TIMEOUT_NS;
	struct snaa_cqe c;

	while (id < RACE_N && now_ns() < deadline) {
		uint32_t cons = __atomic_load_n(&r->consumer,
						__ATOMIC_ACQUIRE);

		if (r->producer - cons >= RACE_NUM) {
			sched_yield();
			continue;
		}
		c = mk_cqe(id++);
		k_complete(r, RACE_NUM, &c);
	}
	return NULL;
}

static void race_cq(void)
{
	struct cq_race cr;
	struct snaa_queue q;
	struct ibv_wc wc[7];
	uint64_t want = 0, deadline = now_ns() + 4 * RACE_TIMEOUT_NS;
	unsigned int bad = 0, errs = 0;
	pthread_t t;
	int n, i;

	cr.ring = ring_new(RACE_NUM, sizeof(struct snaa_cqe), 0xfffff000u);
	snaa_queue_init(&q, cr.ring, RACE_NUM, sizeof(struct snaa_cqe),
			RACE_NUM, false);
	pthread_create(&t, NULL, race_cq_kernel, &cr);
	while (want < RACE_N && now_ns() < deadline) {
		n = snaa_cq_poll(&q, 1 + (int)(want % 7), wc);
		if (n < 0) {
			errs++;
			break;
		}
		if (n == 0)
			sched_yield();	/* let the producer run on a busy host */
		for (i = 0; i < n; i++, want++)
			if (wc[i].wr_id != want ||
			    wc[i].byte_len != (uint32_t)(want * 3 + 1) ||
			    wc[i].opcode != IBV_WC_RECV || wc[i].qp_num != 17)
				bad++;
	}
	pthread_join(t, NULL);
	result(want == RACE_N && !bad && !errs,
	       "two threads, CQ of %u: %u CQEs polled in batches of 1..7, in order and intact (%llu polled, %u mismatches)",
	       RACE_NUM, RACE_N, (unsigned long long)want, bad);
	free(cr.ring);
}

int main(void)
{
	ktap_plan(NUM_TESTS);

	test_sqe_opcodes();
	test_sqe_ud();
	test_sqe_atomic();
	test_sqe_mw();
	test_sqe_rejects();
	test_sqe_inline();
	test_sqe_sge_limits();
	test_sq_full();
	test_sq_bad_middle();
	test_sq_limit();
	test_sq_wrap();
	test_sq_bogus_consumer();
	test_rq();
	test_cqe_to_wc();
	test_cq_poll();
	test_doorbell();
	test_geometry();
	test_init();
	race_sq(false);
	race_sq(true);
	race_cq();

	return test_finish("test_queue", NUM_TESTS);
}
