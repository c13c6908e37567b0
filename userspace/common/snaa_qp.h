/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * snaa_qp - a connected QP (UC or RC) from RESET to RTS without a CM,
 * for the snaa tools and test programs: each step one ibv_modify_qp()
 * with the attributes IBA requires for it, and a global address vector
 * (RoCE) to the peer's GID.
 */
#ifndef SNAA_QP_H
#define SNAA_QP_H

#include <stdint.h>

#include <infiniband/verbs.h>

#define SNAA_HOP_LIMIT	64

/* What an RC QP gets at RTR and RTS (ignored for UC: may be NULL then). */
struct snaa_rc_attr {
	uint8_t timeout;		/* local ACK timeout, 4.096 us << N */
	uint8_t retry_cnt, rnr_retry;
	uint8_t min_rnr_timer;
	uint8_t max_rd_atomic;		/* RTS: outstanding READs/atomics */
	uint8_t max_dest_rd_atomic;	/* RTR: responder resources */
};

/* A global address vector on @port from our GID @sgid_index to @dgid. */
void snaa_fill_av(struct ibv_ah_attr *ah, uint8_t port, int sgid_index,
		  const union ibv_gid *dgid);

/* RESET -> INIT on @port with @access (IBV_ACCESS_REMOTE_*). */
int snaa_qp_init(struct ibv_qp *qp, uint8_t port, unsigned int access);

/*
 * INIT -> RTR: to QP @dqpn at @dgid from our GID @sgid_index on @port,
 * path MTU @mtu, expecting PSN @rq_psn; an RC QP gets @rc's
 * max_dest_rd_atomic and min_rnr_timer.
 */
int snaa_qp_rtr(struct ibv_qp *qp, uint8_t port, int sgid_index,
		const union ibv_gid *dgid, uint32_t dqpn, enum ibv_mtu mtu,
		uint32_t rq_psn, const struct snaa_rc_attr *rc);

/* RTR -> RTS sending from PSN @sq_psn; an RC QP gets @rc's timeouts. */
int snaa_qp_rts(struct ibv_qp *qp, uint32_t sq_psn,
		const struct snaa_rc_attr *rc);

/* Each returns 0 or ibv_modify_qp()'s error (an errno value). */

#endif /* SNAA_QP_H */
