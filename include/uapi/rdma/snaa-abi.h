/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause */
/*
 * snaa kernel <-> rdma-core provider ABI.
 *
 * Everything exchanged between snaa.ko and the provider (libsnaa) through
 * udata (driver-specific parts of uverbs commands) and through the
 * queues mapped into user space is declared here.  Structures use
 * fixed-width types, explicit padding and 64-bit alignment so that they
 * are identical for 32- and 64-bit user space.
 *
 * Queues
 * ------
 * Every queue (SQ, RQ, CQ) is one ring mapped with mmap(2) on the uverbs
 * file at the offset ("key") returned when the object is created:
 *
 *	struct snaa_ring   header, one cache line per index
 *	entries[num]        num is a power of two, entry size is "stride"
 *
 * The producer writes an entry, then publishes it with a store-release
 * of @producer; the consumer reads @producer with a load-acquire, reads
 * the entry, then releases the slot with a store-release of @consumer.
 * Indices are free-running 32-bit counters; the slot of index i is
 * i & (num - 1).  The ring is full when producer - consumer == num.
 *
 *	queue	producer	consumer
 *	SQ	user space	kernel
 *	RQ	user space	kernel
 *	CQ	kernel		user space
 *
 * The kernel never trusts an index user space wrote: it keeps its own
 * copy of the index it owns, bounds the other one, and copies an entry
 * out of the ring before it validates it.
 *
 * At creation producer == consumer == 0 on every ring.
 *
 * Doorbells: after publishing entries on an SQ or RQ, user space issues a
 * full memory barrier and reads @flags; if SNAA_RING_F_IDLE is set it
 * rings the queue's doorbell, SNAA_IB_METHOD_QP_DOORBELL (below).
 *  - SQ: IDLE is set at creation and whenever the kernel stops
 *    processing; before it stops, the kernel sets IDLE, issues a full
 *    barrier and re-reads @producer, so a posted WQE is never missed.
 *  - RQ: the kernel consumes RQEs as packets arrive and needs no kick;
 *    it sets IDLE only while the QP is in the error state, so that new
 *    RQEs are kicked and flushed.
 *  - Both: IDLE is set for good when the QP is destroyed, so that a
 *    process still holding the rings (the device was removed under it)
 *    rings a doorbell at its next post and sees that fail.
 * An SRQ needs no doorbell: the kernel takes its entries as messages
 * arrive, and flushes nothing from it.
 */
#ifndef SNAA_ABI_USER_H
#define SNAA_ABI_USER_H

#include <linux/types.h>
#include <rdma/ib_user_ioctl_cmds.h>

/*
 * Per-device ABI version, reported as ib_device_ops.uverbs_abi_ver and
 * checked by the provider (match_min/max_abi_version).  Bump it on any
 * incompatible change of the structures below.
 *
 * 2: one doorbell for SQ and RQ, SNAA_IB_METHOD_QP_DOORBELL; the
 *    POST_SEND and POST_RECV write commands, the doorbell device and its
 *    bind method are gone.
 */
#define SNAA_ABI_VERSION	2

/*
 * Driver methods of the uverbs ioctl (RDMA_VERBS_IOCTL; the header's
 * driver_id is RDMA_DRIVER_UNKNOWN), on the device object
 * (UVERBS_OBJECT_DEVICE).
 *
 * SNAA_IB_METHOD_QP_DOORBELL: the doorbell of one queue of one QP of
 * the calling context.  Its one attribute, SNAA_IB_ATTR_DOORBELL (a
 * __u32, mandatory, inline), is the doorbell word, laid out as a NIC's
 * doorbell register: the QP number in the low 24 bits
 * (SNAA_DOORBELL_QPN_MASK) and SNAA_DOORBELL_RQ for the receive queue
 * (clear: the send queue); the bits in between are reserved and must be
 * zero.  Errors: EINVAL if a reserved bit is set, if the context has no
 * QP of that number (another process's, a kernel QP, a destroyed one),
 * for the SQ of a WCU.BUF QP and the RQ of a QP on an SRQ; EIO once the
 * device is gone (uverbs).
 */
enum snaa_ib_methods {
	SNAA_IB_METHOD_QP_DOORBELL = (1U << UVERBS_ID_NS_SHIFT),
};

enum snaa_ib_qp_doorbell_attrs {
	SNAA_IB_ATTR_DOORBELL = (1U << UVERBS_ID_NS_SHIFT),
};

#define SNAA_DOORBELL_QPN_MASK	0x00ffffffU
#define SNAA_DOORBELL_RQ	(1U << 31)

/*
 * The ib_device's parent is a platform device named "snaa"; its modalias
 * is what the provider matches, so the match does not depend on the
 * name given to the RDMA device.
 */
#define SNAA_MODALIAS		"platform:snaa"

/*
 * Largest number of scatter/gather elements in one work request: 32, as
 * rdma_rxe (the public NAAICE library asks for 32).
 */
#define SNAA_MAX_SGE		32

/* Ring header. */
#define SNAA_RING_F_IDLE	(1U << 0)	/* SQ: kernel stopped, ring bell */

struct snaa_ring {
	__u32 producer;
	__u32 flags;
	__u32 pad0[14];
	__u32 consumer;
	__u32 pad1[15];
};

struct snaa_sge {
	__aligned_u64 addr;
	__u32 length;
	__u32 lkey;
};

/* snaa_sqe.flags: IBV_SEND_* / IB_SEND_* values */
#define SNAA_WQE_FENCE		(1U << 0)
#define SNAA_WQE_SIGNALED	(1U << 1)
#define SNAA_WQE_SOLICITED	(1U << 2)
#define SNAA_WQE_INLINE		(1U << 3)

/*
 * Send queue entry.  @opcode is an IB_UVERBS_WR_* value (equal to
 * IBV_WR_*).  @imm_data is in network byte order, as in ibv_send_wr.
 * For SNAA_WQE_INLINE, the data (@inline_len bytes) follows the header
 * in place of the SGE array and @num_sge is 0.  The entry size (stride) of an SQ is
 * sizeof(struct snaa_sqe) + max(max_send_sge * sizeof(snaa_sge),
 * max_inline_data), rounded up to a power of two; it is returned at
 * QP creation.
 *
 * @remote_addr and @rkey: RDMA WRITE, RDMA READ and atomics (RC).
 * @ah_handle, @remote_qpn, @remote_qkey: UD sends.  @compare_add and
 * @swap (over the UD fields): compare & swap (the compare value in
 * @compare_add, the new value in @swap) and fetch & add (the addend in
 * @compare_add); the local SGE receives the 8-byte original value.
 *
 * Memory windows and invalidation (RC; BIND_MW and LOCAL_INV also UC),
 * with @num_sge 0 except for SEND_WITH_INV:
 *  - SEND_WITH_INV, LOCAL_INV: @imm_data is the R_Key to invalidate,
 *    in host byte order (ibv_send_wr.invalidate_rkey).
 *  - BIND_MW (both window types): @rkey is the window's current R_Key,
 *    @imm_data the R_Key it gets (host byte order; only the low 8 bits
 *    may differ), @remote_addr the window's first VA, and @bind the
 *    length (0 unbinds a type 1 window), the L_Key of the MR it lies in
 *    and the IBV_ACCESS_* rights it grants.
 */
struct snaa_sqe {
	__aligned_u64 wr_id;
	__u32 opcode;
	__u32 flags;
	__u32 num_sge;
	__u32 imm_data;
	__aligned_u64 remote_addr;
	__u32 rkey;
	__u32 inline_len;
	union {
		/* UD */
		struct {
			__u32 ah_handle;	/* snaa_uresp_create_ah.ahn */
			__u32 remote_qpn;
			__u32 remote_qkey;
			__u32 reserved;
		};
		/* atomics */
		struct {
			__aligned_u64 compare_add;
			__aligned_u64 swap;
		};
		/* BIND_MW */
		struct {
			__aligned_u64 length;
			__u32 mr_lkey;
			__u32 access;
		} bind;
	};
	struct snaa_sge sge[];
};

/* Receive queue entry; stride as for the SQ, without inline data. */
struct snaa_rqe {
	__aligned_u64 wr_id;
	__u32 num_sge;
	__u32 reserved;
	struct snaa_sge sge[];
};

/* snaa_cqe.wc_flags */
#define SNAA_WC_GRH		(1U << 0)	/* UD: the GRH area is filled */
#define SNAA_WC_WITH_IMM	(1U << 1)
#define SNAA_WC_NET_IPV4	(1U << 2)	/* UD: the packet was IPv4 */
#define SNAA_WC_NET_IPV6	(1U << 3)	/* UD: the packet was IPv6 */
#define SNAA_WC_WITH_INV	(1U << 4)	/* SEND with invalidate */

/*
 * Completion queue entry.  @opcode is an enum ib_wc_opcode value and
 * @status an enum ib_wc_status (equal to IBV_WC_* of libibverbs;
 * IB_WC_RECV is 128, IB_WC_RECV_RDMA_WITH_IMM 129).  @imm_data is
 * in network byte order, as in ibv_wc; with SNAA_WC_WITH_INV it is the
 * R_Key the SEND invalidated, in host byte order
 * (ibv_wc.invalidated_rkey).
 */
struct snaa_cqe {
	__aligned_u64 wr_id;
	__u32 qp_num;
	__u32 src_qp;
	__u32 byte_len;
	__u32 imm_data;
	__u8 opcode;
	__u8 status;
	__u8 wc_flags;
	__u8 sl;
	__u16 pkey_index;
	__u16 reserved;
};

/* Response to get_context (ibv_open_device). */
struct snaa_uresp_alloc_ctx {
	__u32 abi_version;	/* SNAA_ABI_VERSION */
	__u32 dev_id;		/* ib_device index, for diagnostics */
};

struct snaa_uresp_create_cq {
	__aligned_u64 cq_key;	/* mmap offset of the CQ ring */
	__u32 num_cqe;		/* ring entries, a power of two */
	__u32 cqe_size;		/* sizeof(struct snaa_cqe) */
	__u32 ring_size;	/* bytes to map */
	__u32 reserved;
};

/* resize_cq returns the new ring; the old one stays valid until unmapped */
struct snaa_uresp_resize_cq {
	__aligned_u64 cq_key;
	__u32 num_cqe;
	__u32 ring_size;
	__u32 consumer;		/* consumer index to continue from */
	__u32 reserved;
};

/*
 * create_srq response.  An SRQ is a ring of struct snaa_rqe as a QP's RQ
 * is; user space produces, the kernel consumes, and no doorbell is ever
 * needed (an SRQ has no error state to flush in).
 */
struct snaa_uresp_create_srq {
	__aligned_u64 srq_key;	/* mmap offset of the ring */
	__u32 num;		/* entries, a power of two */
	__u32 stride;		/* bytes per entry */
	__u32 ring_size;	/* bytes to map */
	__u32 reserved;
};

/*
 * create_qp request (optional: a provider that sends none, or a shorter
 * one, gets an ordinary QP; bytes beyond this struct must be zero).
 *
 * SNAA_QP_F_FIXED_QPN: the QP gets @qpn, which must lie in
 * [SNAA_FIXED_QPN_MIN, SNAA_FIXED_QPN_MAX] (never handed out at random);
 * needs CAP_NET_ADMIN; EBUSY if it is taken.
 *
 * SNAA_QP_F_WCUBUF: a UC QP in WCU.BUF receive mode
 * (Documentation/wcubuf.rst).  The ring is @ring_size bytes at
 * @ring_addr in the MR of @ring_lkey (same PD, local write access);
 * frames are @frame_size bytes (a multiple of 64, dividing @ring_size,
 * at most SNAA_WCUBUF_MAX_SLOTS of them in the ring); the sender VA
 * @va_base (non-zero, a multiple of 64) lands at ring offset 0.
 */
#define SNAA_QP_F_FIXED_QPN	(1U << 0)
#define SNAA_QP_F_WCUBUF	(1U << 1)

#define SNAA_FIXED_QPN_MIN	16
#define SNAA_FIXED_QPN_MAX	255

#define SNAA_WCUBUF_MAX_SLOTS	65536
#define SNAA_WCUBUF_MAX_RING	(1ULL << 40)
#define SNAA_WCUBUF_MAX_FRAME	(1U << 31)

struct snaa_ureq_create_qp {
	__u32 flags;		/* SNAA_QP_F_* */
	__u32 qpn;
	__aligned_u64 ring_addr;
	__aligned_u64 ring_size;
	__aligned_u64 va_base;
	__u32 ring_lkey;
	__u32 frame_size;
};

/*
 * create_qp response.  The fields from @wcubuf_key on are written only
 * if the provider's buffer has room for them (older providers stop at
 * @reserved).
 */
struct snaa_uresp_create_qp {
	__aligned_u64 sq_key;	/* mmap offset of the SQ ring */
	__aligned_u64 rq_key;	/* mmap offset of the RQ ring */
	__u32 sq_num;		/* SQ entries, a power of two */
	__u32 sq_stride;	/* bytes per SQ entry */
	__u32 sq_ring_size;	/* bytes to map */
	__u32 rq_num;
	__u32 rq_stride;
	__u32 rq_ring_size;
	__u32 qp_num;
	__u32 reserved;
	/* SNAA_QP_F_WCUBUF */
	__aligned_u64 wcubuf_key;	/* mmap offset of snaa_wcubuf_ctrl */
	__u32 wcubuf_size;		/* bytes to map */
	__u32 wcubuf_rkey;		/* the R_Key senders must use */
};

/*
 * WCU.BUF ACK/NACK event bits (seed 000, Table 3.7) and the 16-byte
 * ACK/NACK message the kernel sends for every frame (Table 3.5): four
 * little-endian 32-bit words: type (Table 3.6: 0 ACK, 1 NACK), events,
 * VA[31:0], VA[63:32] (VA 0 for "no start of frame").
 *
 * These are the only definitions: the direct verbs header (snaadv.h)
 * and libwcubuf (wcubuf.h) name the same numbers after them.
 */
#define SNAA_WCUBUF_EV_SEQUENCE		0	/* out of sequence */
#define SNAA_WCUBUF_EV_PARITY		1	/* fault injection only */
#define SNAA_WCUBUF_EV_WINDOW		2	/* outside the write window */
#define SNAA_WCUBUF_EV_RKEY		3	/* invalid R_Key */
#define SNAA_WCUBUF_EV_FRAME_LEN	4	/* frame length */
#define SNAA_WCUBUF_EV_PACKET_LEN	5	/* packet length */
#define SNAA_WCUBUF_EV_EBF		6	/* end of bad frame (never) */
#define SNAA_WCUBUF_EV_EBP		7	/* end of bad packet: bad ICRC */
#define SNAA_WCUBUF_EV_VA		8	/* VA not a frame start */
#define SNAA_WCUBUF_EV_NO_SOF		9	/* no start of frame */
#define SNAA_WCUBUF_EV_ECC_CORR		10	/* fault injection only */
#define SNAA_WCUBUF_EV_ECC_UNCORR	11	/* fault injection only */
#define SNAA_WCUBUF_EV_NUM		12

#define SNAA_WCUBUF_ACK			0
#define SNAA_WCUBUF_NACK		1
#define SNAA_WCUBUF_ACK_BYTES		16

/*
 * The well-known address of an emulated board's status channel: a UD QP
 * with this fixed QPN (SNAA_QP_F_FIXED_QPN) and Q_Key.  The kernel does
 * not use them; wcubuf-emu and its workers do.
 */
#define SNAA_WCUBUF_STATUS_QPN		64
#define SNAA_WCUBUF_STATUS_QKEY		0x57430000U

/*
 * The WCU.BUF control area, mapped at @wcubuf_key: how the consumer
 * learns which frames are delivered and hands them back, without a
 * system call.
 *
 * Slot s of the ring holds frames at VAs va_base + (s + k * nslots) * F.
 * Frames in [@rp, @dp) are delivered, in VA order, without a gap; the
 * length of the frame in slot s is @len[s], valid while its frame is in
 * [@rp, @dp).  The kernel publishes @dp with a store-release after the
 * frame's data and @len; the consumer reads it with a load-acquire.
 * When done with frames, the consumer moves @rp forward (a multiple of
 * F, at most to @dp) with a store-release; the kernel reads @rp when a
 * frame starts and ignores a value outside [its last rp, dp].  Counters
 * are the kernel's, for this QP.
 */
struct snaa_wcubuf_ctrl {
	__aligned_u64 rp;		/* consumer */
	__u64 pad0[7];
	__aligned_u64 dp;		/* kernel, from here on */
	__aligned_u64 acks;
	__aligned_u64 bytes;
	__aligned_u64 duplicates;
	__aligned_u64 nacks;
	__aligned_u64 nack_events[SNAA_WCUBUF_EV_NUM];
	__u64 pad1[7];
	__u32 len[];			/* per slot */
};

/*
 * Response to create_ah.  A UD send queue entry names its destination by
 * @ahn (snaa_sqe.ah_handle); it is never 0.
 */
struct snaa_uresp_create_ah {
	__u32 ahn;
	__u32 reserved;
};

#endif /* SNAA_ABI_USER_H */
