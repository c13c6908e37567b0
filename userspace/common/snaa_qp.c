// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* A connected QP from RESET to RTS: snaa_qp.h. */
#include <string.h>

#include "snaa_qp.h"

void snaa_fill_av(struct ibv_ah_attr *ah, uint8_t port, int sgid_index,
		  const union ibv_gid *dgid)
{
	memset(ah, 0, sizeof(*ah));
	ah->is_global = 1;
	ah->grh.dgid = *dgid;
	ah->grh.sgid_index = (uint8_t)sgid_index;
	ah->grh.hop_limit = SNAA_HOP_LIMIT;
	ah->port_num = port;
}

int snaa_qp_init(struct ibv_qp *qp, uint8_t port, unsigned int access)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = port;
	a.qp_access_flags = access;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			     IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

int snaa_qp_rtr(struct ibv_qp *qp, uint8_t port, int sgid_index,
		const union ibv_gid *dgid, uint32_t dqpn, enum ibv_mtu mtu,
		uint32_t rq_psn, const struct snaa_rc_attr *rc)
{
	int mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
		   IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = mtu;
	a.dest_qp_num = dqpn;
	a.rq_psn = rq_psn;
	snaa_fill_av(&a.ah_attr, port, sgid_index, dgid);
	if (qp->qp_type == IBV_QPT_RC) {
		a.max_dest_rd_atomic = rc->max_dest_rd_atomic;
		a.min_rnr_timer = rc->min_rnr_timer;
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	}
	return ibv_modify_qp(qp, &a, mask);
}

int snaa_qp_rts(struct ibv_qp *qp, uint32_t sq_psn,
		const struct snaa_rc_attr *rc)
{
	int mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = sq_psn;
	if (qp->qp_type == IBV_QPT_RC) {
		a.timeout = rc->timeout;
		a.retry_cnt = rc->retry_cnt;
		a.rnr_retry = rc->rnr_retry;
		a.max_rd_atomic = rc->max_rd_atomic;
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	}
	return ibv_modify_qp(qp, &a, mask);
}
