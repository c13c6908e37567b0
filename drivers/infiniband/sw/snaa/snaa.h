/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * snaa: soft network-attached accelerator, a RoCEv2 provider over any
 * Ethernet netdev.  Private core header: driver objects and the
 * prototypes shared between the files of the driver, grouped by file.
 */
#ifndef _SNAA_H
#define _SNAA_H

#include <linux/completion.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/percpu.h>
#include <linux/refcount.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <net/dst_cache.h>
#include <rdma/ib_verbs.h>
#include <uapi/rdma/snaa-abi.h>

#include "compat.h"
#include "snaa_wire.h"
#include "snaa_table.h"

#define SNAA_DRV_NAME		"snaa"
#define SNAA_NODE_DESC		"snaa soft-RoCE"
#define SNAA_VENDOR_ID		0xffffff	/* no IEEE OUI: software device */

/*
 * Device limits.  They are what query_device reports and what the verbs
 * entry points enforce, so changing one here changes both.
 */
#define SNAA_MAX_QP		16384
#define SNAA_MAX_QP_WR		16384
#define SNAA_MAX_CQ		16384
#define SNAA_MAX_CQE		65536
#define SNAA_MAX_MR		65536
#define SNAA_MAX_MW		65536
/* Pages of one fast-registration MR (kernel consumers, IB_WR_REG_MR). */
#define SNAA_MAX_FR_PAGES	65536
#define SNAA_MAX_PD		65536
#define SNAA_MAX_AH		65536
#define SNAA_MAX_SRQ		16384
#define SNAA_MAX_SRQ_WR		16384
#define SNAA_MAX_MR_SIZE	(1ULL << 40)
/*
 * 1 GiB, as mlx5 has it, not the 2 GiB the IBA allows: an RDMA READ
 * takes the PSNs of all its responses when it is sent, and at a path
 * MTU of 256 a 2 GiB one would take 2^23 of them, half the PSN space,
 * where "older" and "newer" can no longer be told apart (IBA 9.7.1:
 * fewer than 2^23 PSNs outstanding).  With 1 GiB a READ takes at most
 * 2^22, and the window bounds what comes before it.
 */
#define SNAA_MAX_MSG_SIZE	(1U << 30)
#define SNAA_MAX_INLINE		256
/*
 * Of the SNAA_MAX_* objects of a kind, user space may take all but a
 * sixteenth (snaa_obj_take()).
 */
#define SNAA_KERNEL_RESERVE(max)	((max) / 16)
/* RDMA READ and atomic requests outstanding per QP, each direction. */
#define SNAA_MAX_RD_ATOMIC	128

/*
 * QP access flags that modify_qp accepts and keeps (query_qp returns
 * them) but that enable nothing: remote FLUSH, bits 8 and 9 of the
 * uverbs ABI (IB_UVERBS_ACCESS_FLUSH_GLOBAL and _PERSISTENT, named from
 * 6.2 on; snaa has no FLUSH, whose requests are answered as unsupported
 * opcodes), and the optional range, which a driver may ignore.  The
 * pyverbs suites of rdma-core 56.1 and 65 ask for FLUSH on the RC QPs
 * they make with create_qp_ex; hardware without FLUSH accepts it.
 */
#define SNAA_QP_ACCESS_IGNORED	(BIT(8) | BIT(9) | IB_ACCESS_OPTIONAL)
/*
 * RC: unacknowledged packets a requester may have outstanding, and the
 * window it starts again from after a local ACK timeout (see
 * snaa_req.cwnd).
 */
#define SNAA_RC_WINDOW		512
#define SNAA_RC_CWND_MIN	2
/*
 * QPNs are drawn at random from [SNAA_MIN_QPN, SNAA_MAX_QPN], and the
 * index bits of MR keys from [1, SNAA_MR_INDEX_MAX], so that a blind
 * sender cannot guess a live one: see snaa_qpn_alloc(), snaa_mr_publish().
 * 0 and 1 are special QPNs, 2..15 reserved, 16..255 are given only to
 * those who ask for one (SNAA_QP_F_FIXED_QPN); 0xffffff is multicast.
 */
#define SNAA_MIN_QPN		(SNAA_FIXED_QPN_MAX + 1)
#define SNAA_MAX_QPN		(SNAA_QPN_MASK - 1)
#define SNAA_MR_INDEX_MAX	0xffffffu
/*
 * Buckets of the QP and key tables (snaa_table.h), log2: 32 and 64 KiB.
 * While there are fewer objects than buckets, a new one nearly always
 * gets a bucket of its own.
 */
#define SNAA_QP_TABLE_ORDER	12
#define SNAA_KEY_TABLE_ORDER	13
#define SNAA_GID_TBL_LEN	64
#define SNAA_PKEY_TBL_LEN	1

/**
 * struct snaa_dev - one snaa RDMA device, bound to one Ethernet netdev
 * @ibdev: the core device; must stay first (INIT_RDMA_OBJ_SIZE)
 * @ndev: the netdev carrying the RoCE traffic, held by @ndev_tracker
 * @ndev_tracker: reference tracker for @ndev
 * @list: entry in the driver-wide device list (snaa_dev_list)
 * @port_state: last port state reported through an IB event
 */
struct snaa_dev {
	struct ib_device ibdev;
	struct net_device *ndev;
	netdevice_tracker ndev_tracker;
	struct list_head list;
	struct list_head net_list;
	enum ib_port_state port_state;

	struct snaa_table qp_table;	/* QPN -> snaa_qp_ref */
	struct snaa_table key_table;	/* key >> 8 -> snaa_mr, snaa_mw */
	struct xarray ah_xa;		/* ahn -> snaa_ah_av, RCU readers */
	u32 ah_next;			/* cyclic allocation hint for ah_xa */
	atomic_t num_pd;
	atomic_t num_ah;
	atomic_t num_cq;
	atomic_t num_qp;
	atomic_t num_mr;
	atomic_t num_mw;
	atomic_t num_srq;
	u64 __percpu *stats;		/* enum snaa_counter */
	struct dentry *debugfs;		/* snaa/<device>/ */
	/* WCU.BUF fault injection (debugfs, snaa_wcubuf.c) */
	u32 wcu_fault_events;		/* event bits to inject */
	atomic_t wcu_fault_next;	/* into the next N frames */
	u32 wcu_fault_every;		/* into one frame in K */
	atomic_t wcu_fault_seq;		/* frames seen, for @wcu_fault_every */
	/* modify_qp's pause after its checks (debugfs, snaa_qp.c) */
	u32 modify_qp_delay_ms;
	/* a lower AH limit for tests, 0: SNAA_MAX_AH (debugfs, snaa_ah.c) */
	u32 ah_limit;
	/* Transmit fault injection (debugfs, snaa_net.c) */
	atomic_t tx_fault_skip;		/* packets to send before dropping */
	atomic_t tx_fault_drop;		/* packets to drop then */
};

/* Counters in rdma_hw_stats order (snaa_stats.c has the names). */
enum snaa_counter {
	SNAA_CNT_TX_PKTS,
	SNAA_CNT_TX_BYTES,
	SNAA_CNT_RX_PKTS,
	SNAA_CNT_RX_BYTES,
	SNAA_CNT_TX_ERR,
	SNAA_CNT_LOOPBACK_PKTS,
	SNAA_CNT_RX_LINEARIZED,
	/* drops: the first ones are enum snaa_drop_reason's, in order */
#define SNAA_DROP(reason, str) SNAA_CNT_DROP_##reason,
#include "snaa_drop_reasons.h"
	SNAA_CNT_DROP_UNKNOWN_QPN,
	SNAA_CNT_DROP_QP_TYPE,		/* opcode not valid for the QP type */
	SNAA_CNT_DROP_QP_STATE,		/* QP not in RTR/RTS */
	SNAA_CNT_DROP_PSN_GAP,		/* UC: packets dropped after a gap */
	SNAA_CNT_DROP_BAD_SEQ,		/* MIDDLE/LAST without FIRST, etc. */
	SNAA_CNT_DROP_BAD_RKEY,
	SNAA_CNT_DROP_ACCESS,		/* MR lacks the access right */
	SNAA_CNT_DROP_RANGE,		/* VA/length outside the MR */
	SNAA_CNT_DROP_LENGTH,		/* message longer than RETH/WQE */
	SNAA_CNT_DROP_NO_RECV_WQE,
	SNAA_CNT_DROP_MALFORMED,	/* IP/UDP encapsulation */
	SNAA_CNT_DROP_NO_MEM,
	SNAA_CNT_DROP_ADDRESS,		/* IP addresses not the QP's path */
	/* completions lost to a full CQ (the CQ and its QPs are in error) */
	SNAA_CNT_CQE_OVERFLOW,
	SNAA_CNT_DROP_BAD_QKEY,		/* UD: Q_Key not the QP's */
	SNAA_CNT_DROP_ATOMIC_ALIGN,	/* atomic target not 8-byte aligned */
	SNAA_CNT_DROP_STALE_RESPONSE,	/* RC: ACK/response for nothing sent */
	/* RC requester */
	SNAA_CNT_RC_RETRANSMITS,	/* packets sent again (go-back-N) */
	SNAA_CNT_RC_TIMEOUTS,		/* local ACK timeouts */
	SNAA_CNT_RC_SEQ_NAKS_RCVD,
	SNAA_CNT_RC_RNR_NAKS_RCVD,
	SNAA_CNT_RC_ERR_NAKS_RCVD,	/* invalid request, access, op. */
	SNAA_CNT_RC_RETRY_EXCEEDED,
	SNAA_CNT_RC_RNR_RETRY_EXCEEDED,
	/* RC responder */
	SNAA_CNT_RC_ACKS_SENT,
	SNAA_CNT_RC_DUPLICATES,		/* duplicate requests answered */
	SNAA_CNT_RC_SEQ_NAKS_SENT,
	SNAA_CNT_RC_RNR_NAKS_SENT,
	SNAA_CNT_RC_ERR_NAKS_SENT,
	/* WCU.BUF receive mode */
	SNAA_CNT_WCU_FRAMES,		/* frames delivered (ACKed) */
	SNAA_CNT_WCU_BYTES,
	SNAA_CNT_WCU_DUPLICATES,	/* delivered before: ACKed again */
	SNAA_CNT_WCU_NACKS,
	SNAA_CNT_WCU_NACK_FIRST,	/* one per event bit, Table 3.7 */
	SNAA_CNT_WCU_NACK_LAST = SNAA_CNT_WCU_NACK_FIRST +
				 SNAA_WCUBUF_EV_NUM - 1,
	SNAA_CNT_WCU_ACK_DROPS,		/* ACK/NACK not sent: no memory, state */
	SNAA_CNT_TX_FAULT_DROPS,	/* dropped by debugfs tx_fault_drop */
	SNAA_CNT_SQ_BUDGET_YIELDS,	/* SQ processing stopped, work left */
	SNAA_CNT_NR
};

/* Drop reason r (enum snaa_drop_reason, r >= 1) counts at FIRST + r - 1. */
#define SNAA_CNT_DROP_FIRST	(SNAA_CNT_RX_LINEARIZED + 1)

static inline void snaa_count(struct snaa_dev *sdev, enum snaa_counter c,
			      u64 n)
{
	this_cpu_add(sdev->stats[c], n);
}

/**
 * struct snaa_ucontext - a process's context
 * @ibuc: the core's part; nothing of the driver's hangs off a context
 */
struct snaa_ucontext {
	struct ib_ucontext ibuc;
};

struct snaa_pd {
	struct ib_pd ibpd;
};

/*
 * Memory region.  lkey == rkey == index << 8 | key byte.  User MRs keep
 * the pinned pages in @pages; DMA MRs (kernel consumers) address kernel
 * virtual memory directly.
 *
 * Fast-registration MRs (@fr; kernel consumers) are usable only while
 * @fr_state is VALID (snaa_mr.c): IB_WR_REG_MR sets their key
 * (@fr_key), VA range and rights from the pages ib_map_mr_sg() staged
 * (@fr_pages, @fr_npages, @fr_page_off) and validates them;
 * IB_WR_LOCAL_INV or a SEND with invalidate frees them.  Every access
 * through one is counted in @fr_users from before it looks at
 * @fr_state until it is done with the memory, and a state change waits
 * for the count to drop: once an invalidation has completed, no access
 * to the old pages is still under way.
 *
 * @num_mw counts the memory windows bound to the MR; deregistration
 * sets it to -1 if it is 0 and fails otherwise, so that no bind can
 * race it.
 */
struct snaa_mr {
	struct ib_mr ibmr;
	struct snaa_dev *sdev;
	struct snaa_tnode tn;		/* in key_table, tag SNAA_KEY_MR */
	struct ib_umem *umem;
	struct page **pages;
	unsigned long npages;
	u64 iova;			/* first VA of the region */
	u64 length;
	u32 page_off;			/* offset of @iova in pages[0] */
	int access;
	bool dma;			/* DMA MR: any kernel VA */
	bool fr;			/* fast-registration MR */
	int fr_state;
	u32 fr_key;
	atomic_t fr_users;
	u32 fr_max_pages;		/* entries of @fr_pages */
	u32 fr_npages;			/* set by ib_map_mr_sg() */
	u32 fr_page_off;
	struct page **fr_pages;
	atomic_t num_mw;
	refcount_t ref;
	struct completion done;
	struct rcu_head rcu;
};

/*
 * Memory window.  Its R_Key shares the MR key space (index << 8 | key
 * byte): sdev->key_table holds MRs and windows, told apart by the tag
 * of their entry.  The core owns struct ib_mw (struct snaa_ibmw) and
 * frees it without RCU, so the window itself is a separate object that
 * RCU readers of the table may still see after it is removed.
 *
 * @lock guards the binding: @rkey, @mr, @va, @length, @access, @qpn.  A
 * window is bound while @mr is set; it holds one of @mr's num_mw.
 */
struct snaa_mw {
	struct snaa_dev *sdev;
	struct snaa_tnode tn;		/* in key_table, tag SNAA_KEY_MW */
	struct ib_pd *pd;
	enum ib_mw_type type;
	spinlock_t lock;		/* the binding: fields below */
	u32 rkey;
	struct snaa_mr *mr;
	u64 va;
	u64 length;
	int access;
	u32 qpn;			/* type 2: bound through this QP */
	bool dead;			/* being deallocated: no more binds */
	refcount_t ref;
	struct completion done;
	struct rcu_head rcu;
};

/* What a key_table entry belongs to (snaa_tnode.tag). */
enum snaa_key_kind {
	SNAA_KEY_MR,
	SNAA_KEY_MW,
};

struct snaa_ibmw {
	struct ib_mw ibmw;
	struct snaa_mw *mw;
};

struct snaa_ring_mem;

/* A ring shared with user space (or private to a kernel object). */
struct snaa_queue {
	struct snaa_ring *ring;		/* in @mem; entries follow */
	void *entries;
	struct snaa_ring_mem *mem;	/* owned by @mmap if that is set */
	u32 num;			/* power of two */
	u32 stride;
	size_t size;			/* bytes, page aligned */
	u32 kidx;			/* the index the kernel owns */
	struct rdma_user_mmap_entry *mmap;
};

/*
 * Ring accessors.  Indices are published with a store-release after the
 * entry is written and read with a load-acquire before the entry is
 * read; the protocol (and the user-space side) is in snaa-abi.h.
 */
static inline u32 snaa_ring_producer(struct snaa_queue *q)
{
	/* Pairs with the producer's release: the entries are visible. */
	return smp_load_acquire(&q->ring->producer);
}

static inline u32 snaa_ring_consumer(struct snaa_queue *q)
{
	/* Pairs with the consumer's release: the slots are free. */
	return smp_load_acquire(&q->ring->consumer);
}

static inline void snaa_ring_publish_producer(struct snaa_queue *q, u32 v)
{
	/* Entries written before the index. */
	smp_store_release(&q->ring->producer, v);
}

static inline void snaa_ring_publish_consumer(struct snaa_queue *q, u32 v)
{
	/* Entries read before the slots are handed back. */
	smp_store_release(&q->ring->consumer, v);
}

static inline void *snaa_ring_slot(struct snaa_queue *q, u32 idx)
{
	return q->entries + (size_t)(idx & (q->num - 1)) * q->stride;
}

/* snaa_cq.upcalls: handlers to call once no lock is held */
#define SNAA_CQ_UPCALL_COMP	0	/* the completion handler */
#define SNAA_CQ_UPCALL_ERR	1	/* IB_EVENT_CQ_ERR */

struct snaa_cq {
	struct ib_cq ibcq;
	spinlock_t lock;		/* producers and kernel consumers */
	struct snaa_queue q;
	u8 notify;			/* IB_CQ_SOLICITED / IB_CQ_NEXT_COMP */
	bool user;
	bool overflow;			/* lost a completion: in error */
	unsigned long upcalls;		/* SNAA_CQ_UPCALL_* bits */
};

/* Entry size of a receive ring (QP RQ or SRQ) for @max_sge SGEs. */
static inline u32 snaa_rq_stride(u32 max_sge)
{
	return roundup_pow_of_two(sizeof(struct snaa_rqe) +
				  max_sge * sizeof(struct snaa_sge));
}

/**
 * struct snaa_srq - shared receive queue (snaa_srq.c)
 * @ibsrq: the core's object; must stay first (INIT_RDMA_OBJ_SIZE)
 * @lock: the kernel's consumer index, @limit; kernel posters
 * @q: the ring of struct snaa_rqe
 * @max_sge: SGEs per entry
 * @limit: the armed limit (0: not armed)
 * @user: the ring is user space's
 * @upcalls: bit 0: the limit event is due
 */
struct snaa_srq {
	struct ib_srq ibsrq;
	struct snaa_dev *sdev;
	spinlock_t lock;		/* @q's kernel index, @limit */
	struct snaa_queue q;
	u32 max_sge;
	u32 limit;
	bool user;
	unsigned long upcalls;
};

/* An IPv4 or IPv6 address; which one is kept next to it. */
union snaa_ipaddr {
	struct in_addr v4;
	struct in6_addr v6;
};

/* Destination of a connected QP, resolved at INIT->RTR. */
struct snaa_av {
	bool valid;
	bool ipv6;
	bool loopback;			/* destination is this device */
	u8 tos;				/* traffic class */
	u8 ttl;				/* hop limit */
	u32 flow_label;
	__be16 sport;			/* UDP source port (flow entropy) */
	union snaa_ipaddr saddr, daddr;
	struct dst_cache dst_cache;
};

/**
 * struct snaa_ah_av - the address vector of an address handle
 * @av: the resolved destination
 * @pd: the AH's PD; a UD QP may only use AHs of its own PD
 * @ref: one for the AH, one per sender using it
 * @rcu: freed after a grace period (snaa_ah_get() runs under RCU)
 */
struct snaa_ah_av {
	struct snaa_av av;
	struct ib_pd *pd;
	refcount_t ref;
	struct rcu_head rcu;
};

/**
 * struct snaa_ah - address handle
 * @ibah: the core's object; must stay first (INIT_RDMA_OBJ_SIZE)
 * @aav: the address vector, which may outlive the AH
 * @attr: the path as created, for query_ah (no sgid_attr reference)
 * @ahn: user AHs: the number user space names it by; 0 for kernel AHs
 */
struct snaa_ah {
	struct ib_ah ibah;
	struct snaa_ah_av *aav;
	struct rdma_ah_attr attr;
	u32 ahn;
};

/* snaa_swqe.kind: how the transport treats a send WQE */
enum snaa_wqe_kind {
	SNAA_WK_SEND,			/* SEND, SEND with immediate */
	SNAA_WK_WRITE,			/* RDMA WRITE (with immediate) */
	SNAA_WK_READ,			/* RDMA READ */
	SNAA_WK_ATOMIC,			/* compare & swap, fetch & add */
	SNAA_WK_LOCAL,			/* BIND_MW, LOCAL_INV, REG_MR */
};

/**
 * struct snaa_swqe - a send WQE as the kernel keeps it
 * @wqe: the SQE, copied out of the ring and validated (SGEs or inline
 *	data follow the struct: snaa_swqe_sge(), snaa_swqe_inline())
 * @length: message bytes (atomics: 8)
 * @aav: UD: the destination, referenced until the WQE completes
 * @first_psn: RC: PSN of its first packet
 * @last_psn: RC: PSN of its last packet; for READ, of its last response
 * @done: READ: bytes of the response placed so far
 * @status: IB_WC_SUCCESS, or the error found when it was fetched
 * @kind: enum snaa_wqe_kind
 *
 * The SQ ring belongs to user space, which may rewrite an entry at any
 * time; the kernel copies each entry once, when it fetches it, and from
 * then on works from this copy (retransmissions included).
 */
struct snaa_swqe {
	struct snaa_sqe wqe;
	u64 length;
	struct snaa_ah_av *aav;
	u32 first_psn;
	u32 last_psn;
	u64 done;
	u8 status;
	u8 kind;
	/* SGEs or inline data: snaa_qp.swq_stride - sizeof(*this) bytes */
};

/*
 * Requester state (RC, UC, UD), under snaa_qp.sq_lock.  WQEs are in the
 * SQ ring from snaa_qp.sq.kidx (the oldest not completed; what the
 * consumer index publishes) to @head (the next to fetch); @cur is the
 * one being sent, so [kidx, cur) are sent and wait for their ACKs (RC).
 */
struct snaa_req {
	u32 head;
	u32 cur;
	u64 offset;			/* bytes of @cur sent */
	u32 sge_idx;			/* SGE cursor at @offset */
	u32 sge_off;
	u32 psn;			/* next PSN to send */
	u32 psn_max;			/* next PSN never sent before */
	u32 cwnd;			/* packets it may have outstanding now */
	u32 hi;				/* past the newest WQE sent from */
	u32 since_ackreq;		/* packets sent since the last AckReq */
	unsigned int rd_atomic;		/* READ/atomic WQEs in [kidx, cur) */
	bool rnr_wait;			/* RNR NAK: wait for the RNR timer */
	u8 blocked;			/* enum snaa_req_wait: what wakes it */
	u32 wake_psn;			/* SNAA_REQ_WAIT_PSN: for comp.psn */
};

/*
 * What a blocked RC requester waits for (snaa_req.blocked), so that the
 * completer wakes it only when it can go on: a READ's responses move
 * the acknowledged PSN packet by packet, but free a READ/atomic slot
 * only with the last one.
 */
enum snaa_req_wait {
	SNAA_REQ_RUNS,			/* not blocked */
	SNAA_REQ_WAIT_PSN,		/* the window: comp.psn at wake_psn */
	/* a fence, a READ/atomic slot, a local operation: the oldest WQE */
	SNAA_REQ_WAIT_WQE,
};

/* RC completer state, under snaa_qp.sq_lock. */
struct snaa_comp {
	u32 psn;			/* the oldest PSN not acknowledged */
	u8 retry_left;			/* local ACK timeouts and NAKs left */
	u8 rnr_left;			/* RNR NAKs left (7: infinite) */
	bool timing;			/* @deadline counts: ACKs are awaited */
	bool heard;			/* a response since the timer expired */
	bool gap;			/* READ responses lost, asked again */
	bool nak_valid;			/* @nak_psn holds a sequence NAK */
	u32 nak_psn;			/* PSN of the newest sequence NAK */
	bool err_nak;			/* an error NAK waits (snaa_comp.c) */
	u32 err_nak_psn;		/* ... for the request at this PSN */
	enum ib_wc_status err_nak_status;	/* ... completing it so */
	unsigned long deadline;		/* local ACK timeout, in jiffies */
};

/**
 * struct snaa_res - an RDMA READ or atomic request the responder holds
 * @psn: PSN of the request (of its first response)
 * @npkts: response packets
 * @sent: response packets sent (a duplicate request rewinds it)
 * @pending: responses are still to be sent
 * @atomic: an atomic: @orig is the result, computed once
 * @va: READ: the VA of the first response byte
 * @rkey: READ: the R_Key, looked up again for every packet
 * @length: READ: bytes
 * @orig: atomic: the value the target held before the operation
 * @msn: MSN to report in the last response
 */
struct snaa_res {
	u32 psn;
	u32 npkts;
	u32 sent;
	bool pending;
	bool atomic;
	bool dup;			/* answering a duplicate request */
	u64 va;
	u32 rkey;
	u32 length;
	u64 orig;
	u32 msn;
};

/* Responder state (RC, UC, UD), under snaa_qp.rq_lock. */
struct snaa_recv_state {
	bool in_msg;			/* between FIRST and LAST */
	bool is_send;
	bool have_wqe;			/* @wqe holds a consumed RQ entry */
	bool last_wqe_sent;		/* SRQ: LAST_WQE_REACHED raised */
	u32 epsn;			/* expected PSN */
	/* RDMA WRITE: the MR is looked up again for every packet */
	u32 rkey;
	u64 va;
	u64 resid;			/* bytes left of the RETH DMA length */
	u64 dma_len;
	/* SEND */
	u64 recvd;			/* bytes placed into the RQE */
	u64 wqe_len;			/* sum of the RQE's SGE lengths */
	struct snaa_rqe wqe;
	struct snaa_sge sge[SNAA_MAX_SGE];

	/* RC */
	u32 msn;			/* messages completed */
	bool nak_sent;			/* a PSN sequence NAK went out */
	struct snaa_res *res;		/* ring of max_dest_rd_atomic */
	u32 res_head;			/* next slot to take */
	u32 res_pending;		/* slots with res->pending set */
	bool ack_pending;		/* an ACK for @ack_psn is due */
	u32 ack_psn;
	bool nak_pending;		/* a NAK for @nak_psn is due */
	u32 nak_psn;
	u8 nak_syndrome;
	/*
	 * A fatal NAK is due: requests are dropped from now on, and once
	 * the responses before it and the NAK are out, the QP goes to ERR
	 * with @fatal_event.
	 */
	bool halted;
	u8 fatal_event;
	bool tx_owner;			/* someone is sending responses */
	bool tx_more;			/* responses left to the work item */
};

/**
 * struct snaa_qp_ref - what the QP table (snaa_dev.qp_table) finds
 * @tn: the entry in the table; its ID is the QPN
 * @ref: one for the QP itself, one per packet or timer using it
 * @qp: the QP; valid while @ref could be raised from non-zero
 * @rcu: freed after a grace period: snaa_qp_get() reads @ref under RCU
 *
 * The core frees a QP's memory as soon as destroy_qp returns, so the
 * lookup cannot take its reference inside the QP without a grace period
 * per destroy; this small object carries the reference instead.
 */
struct snaa_qp_ref {
	struct snaa_tnode tn;
	refcount_t ref;
	struct snaa_qp *qp;
	struct rcu_head rcu;
};

struct snaa_qp {
	struct ib_qp ibqp;
	struct snaa_dev *sdev;
	struct snaa_qp_ref *qref;
	struct completion done;		/* qref->ref dropped to 0 */
	unsigned long upcalls;		/* async events (bit = ib_event_type) */

	spinlock_t state_lock;		/* @state updates */
	enum ib_qp_state state;
	u32 path_mtu;			/* bytes */
	u32 dest_qpn;
	u32 qkey;
	u16 pkey_index;
	int access;			/* qp_access_flags */
	/* written under @sq_mutex, @sq_lock and @rq_lock: any keeps it */
	struct snaa_av av;
	struct rdma_ah_attr ah_attr;	/* as set, for query_qp */
	bool sq_sig_all;
	bool user;
	/* the context that created it (compared only); NULL: kernel QP */
	const struct ib_ucontext *uctx;
	/* RC attributes */
	u8 timeout;			/* local ACK timeout: 4.096 us << n */
	u8 retry_cnt;
	u8 rnr_retry;			/* 7: infinite */
	u8 min_rnr_timer;		/* IB_RNR_TIMER_* we NAK with */
	u8 max_rd_atomic;		/* we may have outstanding */
	u8 max_dest_rd_atomic;		/* we accept */

	struct snaa_cq *scq;
	struct snaa_cq *rcq;
	u32 max_send_sge;
	u32 max_recv_sge;
	u32 max_inline;

	/*
	 * Send queue.  One context sends at a time, under @sq_mutex: the
	 * process that rang the doorbell or the work item.  The state it
	 * shares with the completer and the timers (softirq) is under
	 * @sq_lock; packets are built under it and sent after it.
	 */
	struct snaa_queue sq;
	spinlock_t sq_post_lock;	/* kernel QPs: producers */
	struct mutex sq_mutex;
	struct work_struct sq_work;	/* runs on @tx_cpu */
	int tx_cpu;			/* every packet leaves from here */
	spinlock_t sq_lock;
	void *swq;			/* shadow WQEs, @swq_stride each */
	u32 swq_stride;
	struct snaa_ah_av **sq_ahs;	/* kernel UD QPs: AHs of posted WRs */
	struct snaa_req req;
	struct snaa_comp comp;
	struct timer_list retrans_timer;
	struct timer_list rnr_timer;
	bool dying;			/* destroy: timers must not re-arm */

	/* receive queue: consumed by the responder under @rq_lock */
	struct snaa_queue rq;
	spinlock_t rq_lock;		/* RQ consumer side, @recv, @wcu */
	struct snaa_recv_state recv;

	struct snaa_wcubuf *wcu;	/* WCU.BUF receive mode (UC) */
	struct snaa_srq *srq;		/* receive WQEs come from here */
};

static inline struct snaa_swqe *snaa_swqe(struct snaa_qp *qp, u32 idx)
{
	return qp->swq + (size_t)(idx & (qp->sq.num - 1)) * qp->swq_stride;
}

static inline struct snaa_sge *snaa_swqe_sge(struct snaa_swqe *w)
{
	return (struct snaa_sge *)(w + 1);
}

static inline u8 *snaa_swqe_inline(struct snaa_swqe *w)
{
	return (u8 *)(w + 1);
}

/* Connected transports check addresses and keep a path. */
static inline bool snaa_qp_connected(const struct snaa_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_RC || qp->ibqp.qp_type == IB_QPT_UC;
}

static inline bool snaa_qp_ud(const struct snaa_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_UD || qp->ibqp.qp_type == IB_QPT_GSI;
}

static inline struct snaa_pd *to_snaa_pd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct snaa_pd, ibpd);
}

static inline struct snaa_mr *to_snaa_mr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct snaa_mr, ibmr);
}

static inline struct snaa_mw *to_snaa_mw(struct ib_mw *ibmw)
{
	return container_of(ibmw, struct snaa_ibmw, ibmw)->mw;
}

static inline struct snaa_cq *to_snaa_cq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct snaa_cq, ibcq);
}

static inline struct snaa_qp *to_snaa_qp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct snaa_qp, ibqp);
}

static inline struct snaa_srq *to_snaa_srq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct snaa_srq, ibsrq);
}

static inline struct snaa_ah *to_snaa_ah(struct ib_ah *ibah)
{
	return container_of(ibah, struct snaa_ah, ibah);
}

/**
 * snaa_obj_take() - count a new object of a kind the device has @max of
 * @num: the device's count of that kind
 * @max: SNAA_MAX_* of that kind
 * @user: for user space (uverbs), which gets all but
 *	SNAA_KERNEL_RESERVE(@max) of them
 *
 * The reserve is for kernel consumers: the CM's address handles, the
 * queues of NVMe-oF and NFS over RDMA.  Without it one user who took
 * every AH (any unprivileged process may, where no rdma cgroup limit
 * was set) made every rdma_cm connection on the host fail.
 *
 * Return: true if counted; false (nothing counted) if none is left.
 */
static inline bool snaa_obj_take(atomic_t *num, int max, bool user)
{
	int limit = user ? max - SNAA_KERNEL_RESERVE(max) : max;

	if (atomic_inc_return(num) > limit) {
		atomic_dec(num);
		return false;
	}
	return true;
}

static inline struct snaa_dev *to_snaa_dev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct snaa_dev, ibdev);
}

static inline struct snaa_ucontext *to_snaa_uctx(struct ib_ucontext *ibuc)
{
	return container_of(ibuc, struct snaa_ucontext, ibuc);
}

#define snaa_dbg(sdev, fmt, ...) \
	ibdev_dbg(&(sdev)->ibdev, "%s: " fmt, __func__, ##__VA_ARGS__)

/**
 * struct snaa_skb_cb - what the receive path knows of a packet besides
 * its bytes: the IP addresses it travelled between (for a looped-back
 * packet, those of the sending QP's path)
 * @ipv6: the addresses are IPv6
 * @loopback: the packet was looped back on the device: it has no IP
 *	header, @tos, @ttl and @flow_label say what it would have held
 * @tos: traffic class
 * @ttl: hop limit
 * @flow_label: IPv6 flow label
 * @saddr: source address
 * @daddr: destination address
 */
struct snaa_skb_cb {
	bool ipv6;
	bool loopback;			/* no IP header in front of the BTH */
	u8 tos;				/* loopback: from the sender's path */
	u8 ttl;
	u32 flow_label;
	u32 src_qpn;			/* loopback: the QP that sent it */
	union snaa_ipaddr saddr, daddr;
};

static inline struct snaa_skb_cb *snaa_skb_cb(struct sk_buff *skb)
{
	BUILD_BUG_ON(sizeof(struct snaa_skb_cb) > sizeof(skb->cb));
	return (struct snaa_skb_cb *)skb->cb;
}

/* snaa_main.c */
extern struct workqueue_struct *snaa_wq;
extern struct dentry *snaa_debugfs_root;
enum ib_port_state snaa_port_state(struct snaa_dev *sdev);

/* snaa_queue.c */
int snaa_queue_init(struct snaa_queue *q, u32 num, u32 stride,
		    struct ib_ucontext *uctx);
int snaa_shm_init(struct snaa_queue *q, size_t size, struct ib_ucontext *uctx);
u64 snaa_queue_key(struct snaa_queue *q);
void snaa_queue_free(struct snaa_queue *q);
int snaa_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma);
void snaa_mmap_free(struct rdma_user_mmap_entry *rdma);

/* snaa_mr.c */
int snaa_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int snaa_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
struct ib_mr *snaa_get_dma_mr(struct ib_pd *ibpd, int access);
struct ib_mr *snaa_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
			       u64 iova, int access,
			       SNAA_REG_MR_DMAH_ARG(dmah)
			       struct ib_udata *udata);
int snaa_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);
struct snaa_mr *snaa_mr_get(struct snaa_dev *sdev, u32 key);
void snaa_mr_put(struct snaa_mr *mr);
int snaa_mr_check(struct snaa_mr *mr, struct ib_pd *pd, u64 va, u64 len,
		  int access);
void snaa_mr_read(struct snaa_mr *mr, u64 va, void *buf, u32 len);
int snaa_mr_write(struct snaa_mr *mr, u64 va, const void *buf, u32 len);
int snaa_sge_scatter(struct snaa_qp *qp, const struct snaa_sge *sge,
		     u32 num_sge, u64 pos, const struct sk_buff *skb, u32 off,
		     const void *buf, u32 len);
int snaa_mr_write_skb(struct snaa_mr *mr, u64 va, const struct sk_buff *skb,
		      u32 off, u32 len);
bool snaa_mr_atomic_aligned(struct snaa_mr *mr, u64 va);
u64 snaa_mr_atomic(struct snaa_mr *mr, u64 va, bool cmp_swap, u64 compare_add,
		   u64 swap);
struct ib_mr *snaa_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			    u32 max_num_sg);
int snaa_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		   unsigned int *sg_offset);
struct snaa_mr *snaa_mr_get_index(struct snaa_dev *sdev, u32 key);
int snaa_mr_fr_reg(struct snaa_mr *mr, u32 key, int access);
int snaa_mr_fr_invalidate(struct snaa_mr *mr, struct ib_pd *pd, u32 key);
void snaa_mr_unref(struct snaa_mr *mr);
int snaa_key_publish(struct snaa_dev *sdev, struct snaa_tnode *tn, u32 *key);
int snaa_mr_access_valid(int access);
struct snaa_mr *snaa_rkey_get(struct snaa_qp *qp, u32 rkey, u64 va, u64 len,
			      int access, int *err);

/* snaa_mw.c */
int snaa_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata);
int snaa_dealloc_mw(struct ib_mw *ibmw);
struct snaa_mw *snaa_mw_get(struct snaa_dev *sdev, u32 key);
void snaa_mw_put(struct snaa_mw *mw);
struct snaa_mr *snaa_mw_access(struct snaa_mw *mw, struct snaa_qp *qp,
			       u32 rkey, u64 va, u64 len, int access,
			       int *err);
u8 snaa_local_op(struct snaa_qp *qp, const struct snaa_sqe *wqe);
int snaa_invalidate_remote(struct snaa_qp *qp, u32 rkey);

/* snaa_ah.c */
int snaa_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		   struct ib_udata *udata);
int snaa_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr);
int snaa_destroy_ah(struct ib_ah *ibah, u32 flags);
struct snaa_ah_av *snaa_ah_get(struct snaa_dev *sdev, u32 ahn,
			       struct ib_pd *pd);
void snaa_ah_av_put(struct snaa_ah_av *aav);

/* snaa_cq.c */
int snaa_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		   SNAA_CREATE_CQ_UARG *uarg);
int snaa_create_user_cq(struct ib_cq *ibcq,
			const struct ib_cq_init_attr *attr,
			struct uverbs_attr_bundle *attrs);
int snaa_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int snaa_cq_post(struct snaa_cq *cq, const struct snaa_cqe *cqe,
		 struct snaa_qp *qp, bool solicited);
void snaa_cq_upcalls(struct snaa_cq *cq);
int snaa_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc);
int snaa_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);
int snaa_resize_cq(struct ib_cq *ibcq, SNAA_RESIZE_CQE cqe,
		   struct ib_udata *udata);

/* snaa_qp.c */
int snaa_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		   struct ib_udata *udata);
int snaa_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_udata *udata);
int snaa_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		  struct ib_qp_init_attr *init);
int snaa_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);
struct snaa_qp *snaa_qp_get(struct snaa_dev *sdev, u32 qpn);
void snaa_qp_put(struct snaa_qp *qp);
void snaa_qp_error(struct snaa_qp *qp, enum ib_event_type event);
void snaa_qp_upcalls(struct snaa_qp *qp);
void snaa_rq_flush(struct snaa_qp *qp);

/* snaa_tx.c */
int snaa_sq_doorbell(struct snaa_qp *qp);
int snaa_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		   const struct ib_send_wr **bad_wr);
void snaa_sq_work(struct work_struct *work);
void snaa_sq_schedule(struct snaa_qp *qp);
void snaa_sq_complete(struct snaa_qp *qp, enum ib_wc_status status);
void snaa_req_rewind(struct snaa_qp *qp, u32 psn);
void snaa_req_resume(struct snaa_qp *qp);
void snaa_req_skip(struct snaa_qp *qp);

/* snaa_comp.c */
void snaa_comp_init(struct snaa_qp *qp);
void snaa_comp_shutdown(struct snaa_qp *qp);
void snaa_comp_arm_retrans(struct snaa_qp *qp);
void snaa_comp_stop_timers(struct snaa_qp *qp);
enum snaa_counter snaa_comp_rcv(struct snaa_qp *qp, const struct snaa_pkt *pkt,
				struct sk_buff *skb);

/* snaa_resp.c */
void snaa_recv_abort(struct snaa_qp *qp);
void snaa_resp_reset(struct snaa_qp *qp);
enum snaa_counter snaa_resp_rcv(struct snaa_qp *qp, const struct snaa_pkt *pkt,
				struct sk_buff *skb);
int snaa_resp_tx(struct snaa_qp *qp, int budget);
bool snaa_resp_due(struct snaa_qp *qp, const struct snaa_pkt *pkt);
bool snaa_resp_pending(struct snaa_qp *qp);

/* snaa_rx.c */
int snaa_rqe_post(struct snaa_queue *q, u32 max_sge,
		  const struct ib_recv_wr *wr);
int snaa_rq_doorbell(struct snaa_qp *qp);
int snaa_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		   const struct ib_recv_wr **bad_wr);
void snaa_rcv(struct snaa_dev *sdev, struct sk_buff *skb);
void snaa_rcv_bad_icrc(struct snaa_dev *sdev, struct sk_buff *skb);

/* snaa_srq.c */
int snaa_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		    struct ib_udata *udata);
int snaa_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		    enum ib_srq_attr_mask mask, struct ib_udata *udata);
int snaa_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int snaa_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);
int snaa_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad_wr);
int snaa_srq_fetch(struct snaa_srq *srq, struct snaa_rqe *wqe,
		   struct snaa_sge *sge);
void snaa_srq_upcalls(struct snaa_srq *srq);

/* snaa_wcubuf.c */
struct snaa_wcubuf;
int snaa_wcubuf_create(struct snaa_qp *qp, const struct snaa_ureq_create_qp *req,
		       struct ib_ucontext *uctx,
		       struct snaa_uresp_create_qp *uresp);
void snaa_wcubuf_destroy(struct snaa_qp *qp);
void snaa_wcubuf_reset(struct snaa_qp *qp);
void snaa_wcubuf_set_psn(struct snaa_qp *qp, u32 psn);
enum snaa_counter snaa_wcubuf_rcv(struct snaa_qp *qp,
				  const struct snaa_pkt *pkt,
				  struct sk_buff *skb);
void snaa_wcubuf_bad_packet(struct snaa_qp *qp, u32 psn, u32 len);
void snaa_wcubuf_tx(struct snaa_qp *qp);
void snaa_wcubuf_debugfs_init(struct snaa_dev *sdev);
void snaa_net_debugfs_init(struct snaa_dev *sdev);
void snaa_qp_debugfs_init(struct snaa_dev *sdev);
void snaa_ah_debugfs_init(struct snaa_dev *sdev);

/* snaa_uapi.c */
extern const struct uapi_definition snaa_uapi_defs[];
struct snaa_qp *snaa_uctx_qp(struct ib_ucontext *uctx, u32 qpn);

/* snaa_stats.c */
struct rdma_hw_stats *snaa_alloc_hw_port_stats(struct ib_device *ibdev,
					       u32 port);
int snaa_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		      u32 port, int index);

/* snaa_net.c */
int snaa_net_init(void);
void snaa_net_exit(void);
int snaa_net_dev_add(struct snaa_dev *sdev);
void snaa_net_dev_del(struct snaa_dev *sdev);
int snaa_av_init(struct snaa_dev *sdev, struct snaa_av *av,
		 const struct rdma_ah_attr *ah, u32 lqpn, u32 rqpn, gfp_t gfp);
void snaa_av_release(struct snaa_av *av);
bool snaa_av_match(const struct snaa_av *av, const struct snaa_skb_cb *cb);
struct sk_buff *snaa_skb_alloc(struct snaa_dev *sdev, struct snaa_av *av,
			       unsigned int len);
int snaa_xmit(struct snaa_dev *sdev, struct snaa_av *av, u32 src_qpn,
	      struct sk_buff *skb);

/* snaa_verbs.c */
int snaa_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata);
void snaa_dealloc_ucontext(struct ib_ucontext *ibuc);
void snaa_disassociate_ucontext(struct ib_ucontext *ibuc);
void snaa_get_dev_fw_str(struct ib_device *ibdev, char *str);
enum rdma_link_layer snaa_get_link_layer(struct ib_device *ibdev, u32 port);
int snaa_get_port_immutable(struct ib_device *ibdev, u32 port,
			    struct ib_port_immutable *immutable);
int snaa_modify_device(struct ib_device *ibdev, int mask,
		       struct ib_device_modify *attr);
int snaa_query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
		      struct ib_udata *udata);
int snaa_query_pkey(struct ib_device *ibdev, u32 port, u16 index, u16 *pkey);
int snaa_query_port(struct ib_device *ibdev, u32 port,
		    struct ib_port_attr *attr);

#endif /* _SNAA_H */
