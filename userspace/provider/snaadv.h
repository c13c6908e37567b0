/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * snaadv.h: snaa direct verbs, in the style of mlx5dv.
 *
 * What standard verbs cannot express: a QP with a QPN chosen by the
 * caller (a well-known status-channel QPN) and the WCU.BUF receive mode
 * of a UC QP (Documentation/wcubuf.rst).  The functions live in the
 * provider, libsnaa.so.1 (version SNAA_1.0, libsnaa.map); a program using
 * them links it with -lsnaa, and the provider libibverbs loads (through
 * libsnaa-rdmavNN.so) is then the same object.  They fail with
 * EOPNOTSUPP on a device that is not snaa.
 */
#ifndef SNAADV_H
#define SNAADV_H

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/snaa-abi.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The numbers below are those of the kernel ABI, <rdma/snaa-abi.h>
 * (installed with this header), under the names of this API.
 */

/* QPNs a caller may ask for (snaadv_qp_init_attr.qpn): never random. */
#define SNAADV_FIXED_QPN_MIN	SNAA_FIXED_QPN_MIN
#define SNAADV_FIXED_QPN_MAX	SNAA_FIXED_QPN_MAX

/* WCU.BUF emulation defaults: the status channel's well-known address. */
#define SNAADV_WCUBUF_STATUS_QPN	SNAA_WCUBUF_STATUS_QPN
#define SNAADV_WCUBUF_STATUS_QKEY	SNAA_WCUBUF_STATUS_QKEY

/*
 * The ACK/NACK a WCU.BUF QP sends for every frame (Table 3.5): 16 bytes,
 * four little-endian 32-bit words: type (Table 3.6), event bits
 * (Table 3.7), VA[31:0], VA[63:32] (VA 0 for "no start of frame").
 */
#define SNAADV_WCUBUF_ACK		SNAA_WCUBUF_ACK
#define SNAADV_WCUBUF_NACK		SNAA_WCUBUF_NACK
#define SNAADV_WCUBUF_ACK_BYTES		SNAA_WCUBUF_ACK_BYTES

/* ACK/NACK event bits (seed 000, Table 3.7; meanings in snaa-abi.h) */
enum snaadv_wcubuf_event {
	SNAADV_WCUBUF_EV_SEQUENCE	= SNAA_WCUBUF_EV_SEQUENCE,
	SNAADV_WCUBUF_EV_PARITY		= SNAA_WCUBUF_EV_PARITY,
	SNAADV_WCUBUF_EV_WINDOW		= SNAA_WCUBUF_EV_WINDOW,
	SNAADV_WCUBUF_EV_RKEY		= SNAA_WCUBUF_EV_RKEY,
	SNAADV_WCUBUF_EV_FRAME_LEN	= SNAA_WCUBUF_EV_FRAME_LEN,
	SNAADV_WCUBUF_EV_PACKET_LEN	= SNAA_WCUBUF_EV_PACKET_LEN,
	SNAADV_WCUBUF_EV_EBF		= SNAA_WCUBUF_EV_EBF,
	SNAADV_WCUBUF_EV_EBP		= SNAA_WCUBUF_EV_EBP,
	SNAADV_WCUBUF_EV_VA		= SNAA_WCUBUF_EV_VA,
	SNAADV_WCUBUF_EV_NO_SOF		= SNAA_WCUBUF_EV_NO_SOF,
	SNAADV_WCUBUF_EV_ECC_CORR	= SNAA_WCUBUF_EV_ECC_CORR,
	SNAADV_WCUBUF_EV_ECC_UNCORR	= SNAA_WCUBUF_EV_ECC_UNCORR,
	SNAADV_WCUBUF_EV_NUM		= SNAA_WCUBUF_EV_NUM,
};

/**
 * struct snaadv_wcubuf_attr - the ring of a WCU.BUF-mode UC QP
 * @mr: the memory region holding the ring (IBV_ACCESS_LOCAL_WRITE and
 *	IBV_ACCESS_REMOTE_WRITE: its lkey is the R_Key the workers write
 *	with; without REMOTE_WRITE snaadv_create_qp() fails with EACCES;
 *	the same PD as the QP).  It must stay registered while the QP lives.
 * @ring: the ring's first byte, inside @mr
 * @ring_size: R, a multiple of @frame_size, at most 2^40 bytes and
 *	65536 frames
 * @frame_size: F, a multiple of 64, at most 2^31 bytes
 * @va_base: the sender VA that lands at ring offset 0 (the VA_OFFS of
 *	DATA_RES); non-zero, a multiple of 64.  The read pointer starts here.
 *
 * The worker sees the ring as the whole 64-bit VA space: VA v lands at
 * ring offset (v - va_base) mod R.  Frames start at va_base + k * F.
 */
struct snaadv_wcubuf_attr {
	struct ibv_mr *mr;
	void *ring;
	uint64_t ring_size;
	uint32_t frame_size;
	uint64_t va_base;
};

enum {
	SNAADV_QP_INIT_QPN	= 1 << 0,	/* @qpn is valid */
	SNAADV_QP_INIT_WCUBUF	= 1 << 1,	/* @wcubuf is valid (UC) */
};

struct snaadv_qp_init_attr {
	uint32_t comp_mask;		/* SNAADV_QP_INIT_* */
	uint32_t qpn;			/* in [SNAADV_FIXED_QPN_MIN, _MAX] */
	struct snaadv_wcubuf_attr wcubuf;
};

/* Is @ctx an snaa device (and this provider the one driving it)? */
bool snaadv_is_supported(struct ibv_context *ctx);

/*
 * ibv_create_qp() with snaa extras.  A fixed QPN needs CAP_NET_ADMIN and
 * fails with EBUSY if the QPN is taken.  A WCU.BUF QP must be UC; it has
 * no use for receive WRs, and ibv_post_send() on it fails (EINVAL): its
 * send side carries the kernel's ACK/NACK SENDs.
 */
struct ibv_qp *snaadv_create_qp(struct ibv_pd *pd,
				struct ibv_qp_init_attr *attr,
				const struct snaadv_qp_init_attr *dv);

/* The R_Key a worker must put in its RETHs (DATA_RES RKEY). */
uint32_t snaadv_wcubuf_rkey(struct ibv_qp *qp);

/* A delivered frame, read in place from the ring. */
struct snaadv_wcubuf_frame {
	uint64_t va;			/* the frame's VA */
	uint32_t length;		/* bytes (at most F) */
	const void *data;		/* in the ring */
};

/*
 * The frames delivered from the read pointer on, in VA order, without
 * a gap: at most @max of them into @frames.  Returns how many.  No
 * system call.  Their data stays put until snaadv_wcubuf_consume().
 */
int snaadv_wcubuf_peek(struct ibv_qp *qp, struct snaadv_wcubuf_frame *frames,
		       int max);

/*
 * Hand the @n oldest delivered frames back: the read pointer moves on
 * by n * F (at most to the last delivered frame), which opens the write
 * window for the worker.  No system call.
 */
void snaadv_wcubuf_consume(struct ibv_qp *qp, int n);

/**
 * struct snaadv_wcubuf_stats - what the kernel counted for one QP
 * @acks: frames delivered (ACKed; duplicates excluded)
 * @bytes: bytes of the frames delivered
 * @duplicates: frames that were already delivered, ACKed again, not
 *	written (a worker that lost an ACK)
 * @nacks: NACKs sent
 * @nack_events: NACKs with each event bit set (enum snaadv_wcubuf_event)
 * @read_ptr: the read pointer (VA)
 * @delivered_ptr: the VA after the last frame delivered without a gap
 */
struct snaadv_wcubuf_stats {
	uint64_t acks;
	uint64_t bytes;
	uint64_t duplicates;
	uint64_t nacks;
	uint64_t nack_events[SNAADV_WCUBUF_EV_NUM];
	uint64_t read_ptr;
	uint64_t delivered_ptr;
};

int snaadv_wcubuf_query(struct ibv_qp *qp, struct snaadv_wcubuf_stats *stats);

#ifdef __cplusplus
}
#endif

#endif /* SNAADV_H */
