/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The command buffers of rdma-core 44's libibverbs/kern-abi.h that the
 * snaa provider passes to the ibv_cmd_* helpers, and its
 * DECLARE_DRV_CMD.  Part of the rdma-core 44 stand-in, see driver.h.
 *
 * A command buffer is the write() ABI's header followed by the kernel's
 * request (linux/rdma/ib_user_verbs.h); the helpers fill both in, and
 * whatever the caller passes beyond it in cmd_size is the driver's
 * udata.  rdma-core declares the request flattened into the struct as
 * well; the provider uses core_payload and drv_payload only, which both
 * declarations have.
 *
 * The requests end in a flexible array (driver_data), so nesting them is
 * a GNU C extension that gcc accepts in C11 mode (-pedantic warns).
 */
#ifndef SNAA_RDMA_CORE_44_KERN_ABI_H
#define SNAA_RDMA_CORE_44_KERN_ABI_H

#include <assert.h>
#include <stddef.h>

#include <rdma/ib_user_verbs.h>

/* (ccan/container_of.h, which rdma-core's kern-abi.h includes) */
#ifndef container_of
#define container_of(member_ptr, containing_type, member)		\
	((containing_type *)((char *)(member_ptr) -			\
			     offsetof(containing_type, member)))
#endif

#define SNAA44_CMD(name, kabi)					\
	struct ibv_##name {					\
		struct ib_uverbs_cmd_hdr hdr;			\
		struct ib_uverbs_##kabi core_payload;		\
	};							\
	static_assert(offsetof(struct ibv_##name, core_payload) == 8,	\
		      "kern-abi 44: " #name " request must follow the header")

SNAA44_CMD(get_context, get_context);
SNAA44_CMD(query_port, query_port);
SNAA44_CMD(alloc_pd, alloc_pd);
SNAA44_CMD(reg_mr, reg_mr);
SNAA44_CMD(alloc_mw, alloc_mw);
SNAA44_CMD(create_ah, create_ah);
SNAA44_CMD(create_cq, create_cq);
SNAA44_CMD(resize_cq, resize_cq);
SNAA44_CMD(create_qp, create_qp);
SNAA44_CMD(modify_qp, modify_qp);
SNAA44_CMD(query_qp, query_qp);
SNAA44_CMD(create_srq, create_srq);
SNAA44_CMD(modify_srq, modify_srq);
SNAA44_CMD(query_srq, query_srq);

#undef SNAA44_CMD

/* The driver part of a command or response that has none. */
struct empty {};

/*
 * The request and response of each command the provider extends with
 * udata, by the command's enum, as IBV_ABI_REQ and IBV_KABI_RESP map them.
 */
#define SNAA44_REQ_IB_USER_VERBS_CMD_GET_CONTEXT struct ibv_get_context
#define SNAA44_RESP_IB_USER_VERBS_CMD_GET_CONTEXT \
	struct ib_uverbs_get_context_resp
#define SNAA44_REQ_IB_USER_VERBS_CMD_CREATE_AH struct ibv_create_ah
#define SNAA44_RESP_IB_USER_VERBS_CMD_CREATE_AH \
	struct ib_uverbs_create_ah_resp
#define SNAA44_REQ_IB_USER_VERBS_CMD_CREATE_CQ struct ibv_create_cq
#define SNAA44_RESP_IB_USER_VERBS_CMD_CREATE_CQ \
	struct ib_uverbs_create_cq_resp
#define SNAA44_REQ_IB_USER_VERBS_CMD_RESIZE_CQ struct ibv_resize_cq
#define SNAA44_RESP_IB_USER_VERBS_CMD_RESIZE_CQ \
	struct ib_uverbs_resize_cq_resp
#define SNAA44_REQ_IB_USER_VERBS_CMD_CREATE_QP struct ibv_create_qp
#define SNAA44_RESP_IB_USER_VERBS_CMD_CREATE_QP \
	struct ib_uverbs_create_qp_resp
#define SNAA44_REQ_IB_USER_VERBS_CMD_CREATE_SRQ struct ibv_create_srq
#define SNAA44_RESP_IB_USER_VERBS_CMD_CREATE_SRQ \
	struct ib_uverbs_create_srq_resp

/*
 * struct NAME: the command buffer and the driver's request; struct
 * NAME_resp: the kernel's response and the driver's.  No padding between
 * core and driver part: the kernel finds the udata right after the core.
 */
#define DECLARE_DRV_CMD(_name, _enum, _kabi_req, _kabi_resp)		\
	struct _name {							\
		SNAA44_REQ_##_enum ibv_cmd;				\
		struct _kabi_req drv_payload;				\
	};								\
	struct _name##_resp {						\
		SNAA44_RESP_##_enum ibv_resp;				\
		struct _kabi_resp drv_payload;				\
	};								\
	static_assert(sizeof(struct _name) ==				\
		      sizeof(SNAA44_REQ_##_enum) + sizeof(struct _kabi_req), \
		      "kern-abi 44: padding in " #_name);		\
	static_assert(sizeof(struct _name##_resp) ==			\
		      sizeof(SNAA44_RESP_##_enum) +			\
		      sizeof(struct _kabi_resp),			\
		      "kern-abi 44: padding in " #_name "_resp")

#endif /* SNAA_RDMA_CORE_44_KERN_ABI_H */
