// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * snaa counters, exported as rdma_hw_stats ("rdma statistic show link
 * snaa0/1").  Every dropped packet is counted under its reason.
 */

#include "snaa.h"

static const struct rdma_stat_desc snaa_counter_desc[SNAA_CNT_NR] = {
	[SNAA_CNT_TX_PKTS].name = "tx_packets",
	[SNAA_CNT_TX_BYTES].name = "tx_bytes",
	[SNAA_CNT_RX_PKTS].name = "rx_packets",
	[SNAA_CNT_RX_BYTES].name = "rx_bytes",
	[SNAA_CNT_TX_ERR].name = "tx_errors",
	[SNAA_CNT_LOOPBACK_PKTS].name = "loopback_packets",
	[SNAA_CNT_RX_LINEARIZED].name = "rx_linearized",
#define SNAA_DROP(reason, str) \
	[SNAA_CNT_DROP_##reason].name = "drop_" str,
#include "snaa_drop_reasons.h"
	[SNAA_CNT_DROP_UNKNOWN_QPN].name = "drop_unknown_qpn",
	[SNAA_CNT_DROP_QP_TYPE].name = "drop_opcode_for_qp_type",
	[SNAA_CNT_DROP_QP_STATE].name = "drop_qp_state",
	[SNAA_CNT_DROP_PSN_GAP].name = "drop_psn_gap",
	[SNAA_CNT_DROP_BAD_SEQ].name = "drop_bad_sequence",
	[SNAA_CNT_DROP_BAD_RKEY].name = "drop_bad_rkey",
	[SNAA_CNT_DROP_ACCESS].name = "drop_access",
	[SNAA_CNT_DROP_RANGE].name = "drop_va_out_of_mr",
	[SNAA_CNT_DROP_LENGTH].name = "drop_length",
	[SNAA_CNT_DROP_NO_RECV_WQE].name = "drop_no_recv_wqe",
	[SNAA_CNT_DROP_MALFORMED].name = "drop_malformed",
	[SNAA_CNT_DROP_NO_MEM].name = "drop_no_mem",
	[SNAA_CNT_DROP_ADDRESS].name = "drop_bad_address",
	[SNAA_CNT_CQE_OVERFLOW].name = "cqe_overflow",
	[SNAA_CNT_DROP_BAD_QKEY].name = "drop_bad_qkey",
	[SNAA_CNT_DROP_ATOMIC_ALIGN].name = "drop_misaligned_atomic",
	[SNAA_CNT_DROP_STALE_RESPONSE].name = "drop_stale_response",
	[SNAA_CNT_RC_RETRANSMITS].name = "rc_retransmits",
	[SNAA_CNT_RC_TIMEOUTS].name = "rc_timeouts",
	[SNAA_CNT_RC_SEQ_NAKS_RCVD].name = "rc_seq_naks_rcvd",
	[SNAA_CNT_RC_RNR_NAKS_RCVD].name = "rc_rnr_naks_rcvd",
	[SNAA_CNT_RC_ERR_NAKS_RCVD].name = "rc_err_naks_rcvd",
	[SNAA_CNT_RC_RETRY_EXCEEDED].name = "rc_retry_exceeded",
	[SNAA_CNT_RC_RNR_RETRY_EXCEEDED].name = "rc_rnr_retry_exceeded",
	[SNAA_CNT_RC_ACKS_SENT].name = "rc_acks_sent",
	[SNAA_CNT_RC_DUPLICATES].name = "rc_duplicate_requests",
	[SNAA_CNT_RC_SEQ_NAKS_SENT].name = "rc_seq_naks_sent",
	[SNAA_CNT_RC_RNR_NAKS_SENT].name = "rc_rnr_naks_sent",
	[SNAA_CNT_RC_ERR_NAKS_SENT].name = "rc_err_naks_sent",
	[SNAA_CNT_WCU_FRAMES].name = "wcubuf_frames",
	[SNAA_CNT_WCU_BYTES].name = "wcubuf_bytes",
	[SNAA_CNT_WCU_DUPLICATES].name = "wcubuf_duplicates",
	[SNAA_CNT_WCU_NACKS].name = "wcubuf_nacks",
	[SNAA_CNT_WCU_NACK_FIRST + SNAA_WCUBUF_EV_SEQUENCE].name =
		"wcubuf_nack_sequence",
	[SNAA_CNT_WCU_NACK_FIRST + SNAA_WCUBUF_EV_PARITY].name =
		"wcubuf_nack_parity",
	[SNAA_CNT_WCU_NACK_FIRST + SNAA_WCUBUF_EV_WINDOW].name =
		"wcubuf_nack_window",
	[SNAA_CNT_WCU_NACK_FIRST + SNAA_WCUBUF_EV_RKEY].name =
		"wcubuf_nack_rkey",
	[SNAA_CNT_WCU_NACK_FIRST + SNAA_WCUBUF_EV_FRAME_LEN].name =
		"wcubuf_nack_frame_length",
	[SNAA_CNT_WCU_NACK_FIRST + SNAA_WCUBUF_EV_PACKET_LEN].name =
		"wcubuf_nack_packet_length",
	[SNAA_CNT_WCU_NACK_FIRST + SNAA_WCUBUF_EV_EBF].name =
		"wcubuf_nack_bad_frame",
	[SNAA_CNT_WCU_NACK_FIRST + SNAA_WCUBUF_EV_EBP].name =
		"wcubuf_nack_bad_packet",
	[SNAA_CNT_WCU_NACK_FIRST + SNAA_WCUBUF_EV_VA].name =
		"wcubuf_nack_va",
	[SNAA_CNT_WCU_NACK_FIRST + SNAA_WCUBUF_EV_NO_SOF].name =
		"wcubuf_nack_no_sof",
	[SNAA_CNT_WCU_NACK_FIRST + SNAA_WCUBUF_EV_ECC_CORR].name =
		"wcubuf_nack_ecc_correctable",
	[SNAA_CNT_WCU_NACK_FIRST + SNAA_WCUBUF_EV_ECC_UNCORR].name =
		"wcubuf_nack_ecc_uncorrectable",
	[SNAA_CNT_WCU_ACK_DROPS].name = "wcubuf_ack_drops",
	[SNAA_CNT_TX_FAULT_DROPS].name = "tx_fault_drops",
	[SNAA_CNT_SQ_BUDGET_YIELDS].name = "sq_budget_yields",
};

static_assert(SNAA_CNT_DROP_MTU - SNAA_CNT_DROP_FIRST == SNAA_DROP_MTU - 1,
	      "drop counters must mirror enum snaa_drop_reason");

struct rdma_hw_stats *snaa_alloc_hw_port_stats(struct ib_device *ibdev,
					       u32 port)
{
	return rdma_alloc_hw_stats_struct(snaa_counter_desc, SNAA_CNT_NR,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

int snaa_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		      u32 port, int index)
{
	struct snaa_dev *sdev = to_snaa_dev(ibdev);
	int cpu, i;

	for (i = 0; i < SNAA_CNT_NR; i++) {
		u64 sum = 0;

		for_each_possible_cpu(cpu)
			sum += *per_cpu_ptr(sdev->stats + i, cpu);
		stats->value[i] = sum;
	}
	return SNAA_CNT_NR;
}
