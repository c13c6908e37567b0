/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rdma-core 44's private provider interface (libibverbs/driver.h, private
 * ABI 34), as far as the snaa provider uses it: a stand-in for the source
 * tree of rdma-core 44.0, Debian bookworm's rdma-core.
 *
 * The provider is built inside the source tree of the rdma-core release
 * that is to load it (scripts/provider-build.sh), against that release's
 * own driver.h.  Debian's archive no longer serves rdma-core 44's
 * upstream tarball (rdma-core_44.0.orig.tar.gz answers 404), so where
 * that source cannot be had the provider for rdma-core 44 is built
 * against this directory instead: the layouts and prototypes of that one
 * release, which will not change any more, declared from its driver.h
 * and kern-abi.h and checked three ways:
 *  - _Static_asserts below, on the layouts libibverbs 44 and the
 *    provider share (absolute numbers on x86_64);
 *  - test_pabi, at build time, against the installed libibverbs 44: the
 *    real library loads the provider, fills in its context and calls its
 *    ops through this table;
 *  - the provider refuses any libibverbs but 44.0 at run time
 *    (snaa_check_libibverbs), as a provider built in a tree does.
 *
 * Nothing here is used for any other release: those have their source.
 * Only LP64 targets are supported.
 */
#ifndef SNAA_RDMA_CORE_44_DRIVER_H
#define SNAA_RDMA_CORE_44_DRIVER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <config.h>
#include <infiniband/kern-abi.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

#if !defined(__LP64__) || __SIZEOF_POINTER__ != 8
#error "rdma-core 44 stand-in: only LP64 targets have been checked"
#endif
#if IBVERBS_PABI_VERSION != 34
#error "rdma-core 44 stand-in: config.h must say private ABI 34"
#endif

/* ------------------------------------------------------------------ */
/* Logging                                                             */
/* ------------------------------------------------------------------ */

/*
 * Levels understood by __verbs_log().  The library prints a message only
 * when level <= $VERBS_LOG_LEVEL, and (release builds) only if
 * $VERBS_LOG_FILE names a writable file; otherwise it is dropped.
 * Never pass level 0 (NONE): with logging disabled libibverbs has no
 * output stream and would hand a NULL FILE to vfprintf().
 */
enum {
	VERBS_LOG_LEVEL_NONE	= 0,
	VERBS_LOG_ERR		= 1,
	VERBS_LOG_WARN		= 2,
	VERBS_LOG_INFO		= 3,
	VERBS_LOG_DEBUG		= 4,
};

void __verbs_log(struct verbs_context *ctx, uint32_t level,
		 const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ------------------------------------------------------------------ */
/* Device matching and registration                                    */
/* ------------------------------------------------------------------ */

/* Filled in by libibverbs; we never look inside, so keep it opaque. */
struct verbs_sysfs_dev;

enum verbs_match_kind {
	VERBS_MATCH_SENTINEL	= 0,	/* all-zero entry ending a table */
	VERBS_MATCH_PCI		= 1,
	VERBS_MATCH_MODALIAS	= 2,	/* fnmatch() pattern in u.modalias */
	VERBS_MATCH_DRIVER_ID	= 3,	/* enum rdma_driver_id in u.driver_id */
};

struct verbs_match_ent {
	void *driver_data;
	union {
		const char *modalias;
		uint64_t driver_id;
	} u;
	uint16_t vendor;
	uint16_t device;
	uint8_t kind;			/* enum verbs_match_kind */
};

struct verbs_device;

struct verbs_device_ops {
	const char *name;
	/* Accepted range of the kernel driver's uverbs_abi_ver. */
	uint32_t match_min_abi_version;
	uint32_t match_max_abi_version;
	const struct verbs_match_ent *match_table;
	/* Only used by statically linked libibverbs builds. */
	const struct verbs_device_ops **static_providers;
	/* Optional; if set it has the last word on every device. */
	bool (*match_device)(struct verbs_sysfs_dev *sysfs_dev);
	struct verbs_context *(*alloc_context)(struct ibv_device *device,
					       int cmd_fd, void *private_data);
	struct verbs_context *(*import_context)(struct ibv_device *device,
						int cmd_fd);
	struct verbs_device *(*alloc_device)(struct verbs_sysfs_dev *sysfs_dev);
	void (*uninit_device)(struct verbs_device *device);
};

/* libibverbs' intrusive list link (ccan list_node). */
struct verbs_list_link {
	struct verbs_list_link *next;
	struct verbs_list_link *prev;
};

/*
 * Allocated zeroed by the provider's alloc_device() (as the first member
 * of its own device struct); libibverbs fills in everything else and
 * calls uninit_device() when the last reference goes away.
 */
struct verbs_device {
	struct ibv_device device;	/* must be first */
	const struct verbs_device_ops *ops;
	atomic_int refcount;
	struct verbs_list_link entry;
	struct verbs_sysfs_dev *sysfs;
	uint64_t core_support;
};

void verbs_register_driver_34(const struct verbs_device_ops *ops);
#define verbs_register_driver verbs_register_driver_34

#define VERBS_MODALIAS_MATCH(_mod_str, _data)				\
	{								\
		.driver_data = (void *)(_data),				\
		.u.modalias = (_mod_str),				\
		.kind = VERBS_MATCH_MODALIAS,				\
	}

/*
 * The provider's registration: libibverbs dlopen()s the provider, whose
 * constructor hands it the ops.  (rdma-core also exports the ops as
 * verbs_provider_NAME for static builds; no one links snaa statically.)
 */
#define PROVIDER_DRIVER(provider_name, drv_struct)			\
	static __attribute__((constructor)) void			\
	provider_name##_register_driver(void)				\
	{								\
		verbs_register_driver(&drv_struct);			\
	}

/* ------------------------------------------------------------------ */
/* Provider operations                                                 */
/* ------------------------------------------------------------------ */

struct verbs_mr;

/*
 * Placeholder type for slots snaa does not implement.  All slots are
 * plain function pointers, so the layout is unaffected; give a slot its
 * real prototype when the provider starts to implement it.
 */
typedef void (*snaa44_unused_op)(void);

/*
 * 76 function pointers in strictly alphabetical order (slot number in
 * the comment).  verbs_set_ops() copies the non-NULL ones; NULL slots
 * keep libibverbs' stubs, which fail with EOPNOTSUPP/NULL.
 */
struct verbs_context_ops {
	snaa44_unused_op advise_mr;				/*  0 */
	snaa44_unused_op alloc_dm;				/*  1 */
	struct ibv_mw *(*alloc_mw)(struct ibv_pd *pd,		/*  2 */
				   enum ibv_mw_type type);
	snaa44_unused_op alloc_null_mr;			/*  3 */
	snaa44_unused_op alloc_parent_domain;		/*  4 */
	struct ibv_pd *(*alloc_pd)(struct ibv_context *ctx);	/*  5 */
	snaa44_unused_op alloc_td;				/*  6 */
	void (*async_event)(struct ibv_context *ctx,		/*  7 */
			    struct ibv_async_event *event);
	snaa44_unused_op attach_counters_point_flow;		/*  8 */
	snaa44_unused_op attach_mcast;			/*  9 */
	int (*bind_mw)(struct ibv_qp *qp, struct ibv_mw *mw,	/* 10 */
		       struct ibv_mw_bind *mw_bind);
	snaa44_unused_op close_xrcd;				/* 11 */
	void (*cq_event)(struct ibv_cq *cq);			/* 12 */
	struct ibv_ah *(*create_ah)(struct ibv_pd *pd,		/* 13 */
				    struct ibv_ah_attr *attr);
	snaa44_unused_op create_counters;			/* 14 */
	struct ibv_cq *(*create_cq)(struct ibv_context *ctx,	/* 15 */
				    int cqe,
				    struct ibv_comp_channel *channel,
				    int comp_vector);
	struct ibv_cq_ex *(*create_cq_ex)(			/* 16 */
			struct ibv_context *ctx,
			struct ibv_cq_init_attr_ex *attr);
	snaa44_unused_op create_flow;			/* 17 */
	snaa44_unused_op create_flow_action_esp;		/* 18 */
	struct ibv_qp *(*create_qp)(struct ibv_pd *pd,		/* 19 */
				    struct ibv_qp_init_attr *attr);
	struct ibv_qp *(*create_qp_ex)(				/* 20 */
			struct ibv_context *ctx,
			struct ibv_qp_init_attr_ex *attr);
	snaa44_unused_op create_rwq_ind_table;		/* 21 */
	struct ibv_srq *(*create_srq)(struct ibv_pd *pd,	/* 22 */
				      struct ibv_srq_init_attr *attr);
	snaa44_unused_op create_srq_ex;			/* 23 */
	snaa44_unused_op create_wq;				/* 24 */
	int (*dealloc_mw)(struct ibv_mw *mw);			/* 25 */
	int (*dealloc_pd)(struct ibv_pd *pd);			/* 26 */
	snaa44_unused_op dealloc_td;				/* 27 */
	int (*dereg_mr)(struct verbs_mr *vmr);			/* 28 */
	int (*destroy_ah)(struct ibv_ah *ah);			/* 29 */
	snaa44_unused_op destroy_counters;			/* 30 */
	int (*destroy_cq)(struct ibv_cq *cq);			/* 31 */
	snaa44_unused_op destroy_flow;			/* 32 */
	snaa44_unused_op destroy_flow_action;		/* 33 */
	int (*destroy_qp)(struct ibv_qp *qp);			/* 34 */
	snaa44_unused_op destroy_rwq_ind_table;		/* 35 */
	int (*destroy_srq)(struct ibv_srq *srq);		/* 36 */
	snaa44_unused_op destroy_wq;				/* 37 */
	snaa44_unused_op detach_mcast;			/* 38 */
	void (*free_context)(struct ibv_context *ctx);		/* 39 */
	snaa44_unused_op free_dm;				/* 40 */
	snaa44_unused_op get_srq_num;			/* 41 */
	snaa44_unused_op import_dm;				/* 42 */
	snaa44_unused_op import_mr;				/* 43 */
	snaa44_unused_op import_pd;				/* 44 */
	snaa44_unused_op modify_cq;				/* 45 */
	snaa44_unused_op modify_flow_action_esp;		/* 46 */
	int (*modify_qp)(struct ibv_qp *qp,			/* 47 */
			 struct ibv_qp_attr *attr, int attr_mask);
	snaa44_unused_op modify_qp_rate_limit;		/* 48 */
	int (*modify_srq)(struct ibv_srq *srq,			/* 49 */
			  struct ibv_srq_attr *attr, int mask);
	snaa44_unused_op modify_wq;				/* 50 */
	snaa44_unused_op open_qp;				/* 51 */
	snaa44_unused_op open_xrcd;				/* 52 */
	int (*poll_cq)(struct ibv_cq *cq, int num_entries,	/* 53 */
		       struct ibv_wc *wc);
	int (*post_recv)(struct ibv_qp *qp,			/* 54 */
			 struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad_wr);
	int (*post_send)(struct ibv_qp *qp,			/* 55 */
			 struct ibv_send_wr *wr,
			 struct ibv_send_wr **bad_wr);
	snaa44_unused_op post_srq_ops;			/* 56 */
	int (*post_srq_recv)(struct ibv_srq *srq,		/* 57 */
			     struct ibv_recv_wr *wr,
			     struct ibv_recv_wr **bad_wr);
	int (*query_device_ex)(struct ibv_context *ctx,		/* 58 */
			       const struct ibv_query_device_ex_input *input,
			       struct ibv_device_attr_ex *attr,
			       size_t attr_size);
	snaa44_unused_op query_ece;				/* 59 */
	int (*query_port)(struct ibv_context *ctx,		/* 60 */
			  uint8_t port_num,
			  struct ibv_port_attr *port_attr);
	int (*query_qp)(struct ibv_qp *qp,			/* 61 */
			struct ibv_qp_attr *attr, int attr_mask,
			struct ibv_qp_init_attr *init_attr);
	snaa44_unused_op query_qp_data_in_order;		/* 62 */
	snaa44_unused_op query_rt_values;			/* 63 */
	int (*query_srq)(struct ibv_srq *srq,			/* 64 */
			 struct ibv_srq_attr *attr);
	snaa44_unused_op read_counters;			/* 65 */
	snaa44_unused_op reg_dm_mr;				/* 66 */
	snaa44_unused_op reg_dmabuf_mr;			/* 67 */
	struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr,	/* 68 */
				 size_t length, uint64_t hca_va,
				 int access);
	int (*req_notify_cq)(struct ibv_cq *cq,			/* 69 */
			     int solicited_only);
	snaa44_unused_op rereg_mr;				/* 70 */
	int (*resize_cq)(struct ibv_cq *cq, int cqe);		/* 71 */
	snaa44_unused_op set_ece;				/* 72 */
	snaa44_unused_op unimport_dm;			/* 73 */
	snaa44_unused_op unimport_mr;			/* 74 */
	snaa44_unused_op unimport_pd;			/* 75 */
};

#define SNAA44_NUM_OPS	76

/* ------------------------------------------------------------------ */
/* Context life cycle                                                  */
/* ------------------------------------------------------------------ */

/*
 * Allocates alloc_size zeroed bytes and initialises the verbs_context
 * found context_offset bytes into them (the offset is passed disguised
 * as a pointer).  Takes ownership of cmd_fd: closes it on failure.
 * driver_id must equal the kernel's ib_device_ops.driver_id; it goes
 * into every ioctl header.  Returns NULL with errno set on failure.
 */
void *_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd,
				    size_t alloc_size,
				    struct verbs_context *context_offset,
				    uint32_t driver_id);
/* Frees the private part, closes cmd_fd/async_fd, drops the device. */
void verbs_uninit_context(struct verbs_context *vctx);
void verbs_set_ops(struct verbs_context *vctx,
		   const struct verbs_context_ops *ops);

#define verbs_init_and_alloc_context(ibdev, cmd_fd, drv_ctx_ptr, ctx_memb,	\
				     driver_id)				\
	((__typeof__(drv_ctx_ptr))_verbs_init_and_alloc_context(		\
		ibdev, cmd_fd, sizeof(*(drv_ctx_ptr)),			\
		&((__typeof__(drv_ctx_ptr))NULL)->ctx_memb, (driver_id)))

/* ------------------------------------------------------------------ */
/* Objects                                                             */
/* ------------------------------------------------------------------ */

/* Values of verbs_mr.mr_type. */
enum {
	IBV_MR_TYPE_MR		= 0,
	IBV_MR_TYPE_NULL_MR	= 1,
	IBV_MR_TYPE_IMPORTED_MR	= 2,
	IBV_MR_TYPE_DMABUF_MR	= 3,
};

/*
 * Provider MR objects must embed this: ibv_dereg_mr() reads mr_type and
 * access behind the ibv_mr.  ibv_cmd_reg_mr() fills it in.
 */
struct verbs_mr {
	struct ibv_mr ibv_mr;
	uint32_t mr_type;		/* an enum in rdma-core: 4 bytes */
	int access;
};

/* Values of verbs_qp.comp_mask. */
enum {
	VERBS_QP_XRCD	= 1 << 0,
	VERBS_QP_EX	= 1 << 1,	/* qp_ex is valid: ibv_qp_to_qp_ex() */
};

struct verbs_xrcd;

/*
 * A provider's QP starts with this.  libibverbs' ibv_qp_to_qp_ex() reads
 * comp_mask behind any ibv_qp: zero unless the QP was created with send
 * ops, whose ibv_qp_ex then sits at the start.
 */
struct verbs_qp {
	union {
		struct ibv_qp qp;
		struct ibv_qp_ex qp_ex;
	};
	uint32_t comp_mask;
	struct verbs_xrcd *xrcd;
};

/* A provider's CQ starts with this: an extended CQ is its ibv_cq_ex. */
struct verbs_cq {
	union {
		struct ibv_cq cq;
		struct ibv_cq_ex cq_ex;
	};
};

/* ------------------------------------------------------------------ */
/* Command helpers: all return 0 or a positive errno value             */
/* ------------------------------------------------------------------ */

int ibv_cmd_get_context(struct verbs_context *vctx,
			struct ibv_get_context *cmd, size_t cmd_size,
			struct ib_uverbs_get_context_resp *resp,
			size_t resp_size);
/* resp and resp_size may both be NULL. */
int ibv_cmd_query_device_any(struct ibv_context *ctx,
			     const struct ibv_query_device_ex_input *input,
			     struct ibv_device_attr_ex *attr, size_t attr_size,
			     struct ib_uverbs_ex_query_device_resp *resp,
			     size_t *resp_size);
int ibv_cmd_query_port(struct ibv_context *ctx, uint8_t port_num,
		       struct ibv_port_attr *port_attr,
		       struct ibv_query_port *cmd, size_t cmd_size);

/* Sets pd->handle and pd->context. */
int ibv_cmd_alloc_pd(struct ibv_context *ctx, struct ibv_pd *pd,
		     struct ibv_alloc_pd *cmd, size_t cmd_size,
		     struct ib_uverbs_alloc_pd_resp *resp, size_t resp_size);
int ibv_cmd_dealloc_pd(struct ibv_pd *pd);

/* Sets handle, lkey, rkey, context, mr_type and access. */
int ibv_cmd_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
		   uint64_t hca_va, int access, struct verbs_mr *vmr,
		   struct ibv_reg_mr *cmd, size_t cmd_size,
		   struct ib_uverbs_reg_mr_resp *resp, size_t resp_size);
int ibv_cmd_dereg_mr(struct verbs_mr *vmr);

/*
 * Memory windows.  alloc_mw fills in the command (pd_handle, mw_type)
 * and sets mw->context, pd, rkey, handle and type; ibv_alloc_mw() does
 * nothing after the provider's alloc_mw.
 */
int ibv_cmd_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type,
		     struct ibv_mw *mw, struct ibv_alloc_mw *cmd,
		     size_t cmd_size, struct ib_uverbs_alloc_mw_resp *resp,
		     size_t resp_size);
int ibv_cmd_dealloc_mw(struct ibv_mw *mw);

/* Sets cq->context, handle and cqe; ibv_create_cq() does the rest. */
int ibv_cmd_create_cq(struct ibv_context *ctx, int cqe,
		      struct ibv_comp_channel *channel, int comp_vector,
		      struct ibv_cq *cq, struct ibv_create_cq *cmd,
		      size_t cmd_size, struct ib_uverbs_create_cq_resp *resp,
		      size_t resp_size);
int ibv_cmd_destroy_cq(struct ibv_cq *cq);
/*
 * What ibv_create_cq() does after the provider's create_cq: the channel,
 * cq_context, event counters, mutex and condition variable.  An
 * extended CQ (create_cq_ex, which libibverbs returns as is) calls it
 * itself.
 */
void verbs_init_cq(struct ibv_cq *cq, struct ibv_context *ctx,
		   struct ibv_comp_channel *channel, void *cq_context);
int ibv_cmd_req_notify_cq(struct ibv_cq *cq, int solicited_only);
/*
 * A write()-ABI command: sent with write(), or wrapped in the
 * INVOKE_WRITE ioctl where the kernel has it.  Fills in
 * cmd->core_payload.cq_handle and cqe, sets cq->cqe from the response;
 * the bytes past sizeof(struct ibv_resize_cq) in cmd_size and past
 * sizeof(*resp) in resp_size are the driver's udata.
 */
int ibv_cmd_resize_cq(struct ibv_cq *cq, int cqe,
		      struct ibv_resize_cq *cmd, size_t cmd_size,
		      struct ib_uverbs_resize_cq_resp *resp, size_t resp_size);
int ibv_cmd_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);

/* Fills the ibv_qp and writes the granted sizes back to attr->cap. */
int ibv_cmd_create_qp(struct ibv_pd *pd, struct ibv_qp *qp,
		      struct ibv_qp_init_attr *attr,
		      struct ibv_create_qp *cmd, size_t cmd_size,
		      struct ib_uverbs_create_qp_resp *resp, size_t resp_size);
int ibv_cmd_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		      int attr_mask, struct ibv_modify_qp *cmd,
		      size_t cmd_size);
int ibv_cmd_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		     int attr_mask, struct ibv_qp_init_attr *init_attr,
		     struct ibv_query_qp *cmd, size_t cmd_size);
int ibv_cmd_destroy_qp(struct ibv_qp *qp);

/* Shared receive queues; ibv_create_srq() sets context, pd, ... after. */
int ibv_cmd_create_srq(struct ibv_pd *pd, struct ibv_srq *srq,
		       struct ibv_srq_init_attr *attr,
		       struct ibv_create_srq *cmd, size_t cmd_size,
		       struct ib_uverbs_create_srq_resp *resp,
		       size_t resp_size);
int ibv_cmd_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr,
		       int mask, struct ibv_modify_srq *cmd, size_t cmd_size);
int ibv_cmd_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr,
		      struct ibv_query_srq *cmd, size_t cmd_size);
int ibv_cmd_destroy_srq(struct ibv_srq *srq);

/* UD only; RC/UC carry the destination in ibv_qp_attr.ah_attr. */
int ibv_cmd_create_ah(struct ibv_pd *pd, struct ibv_ah *ah,
		      struct ibv_ah_attr *attr,
		      struct ib_uverbs_create_ah_resp *resp, size_t resp_size);
int ibv_cmd_destroy_ah(struct ibv_ah *ah);

/* ------------------------------------------------------------------ */
/* Layout guards                                                       */
/* ------------------------------------------------------------------ */

#define SNAA44_CHECK_SIZE(type, size)				\
	_Static_assert(sizeof(type) == (size),				\
		       "rdma-core 44: sizeof(" #type ") != " #size)
#define SNAA44_CHECK_OFF(type, member, off)				\
	_Static_assert(offsetof(type, member) == (off),			\
		       "rdma-core 44: offsetof(" #type ", " #member ") != " #off)

/* Declared here: pointer-only layouts, valid on every LP64 target. */
SNAA44_CHECK_SIZE(struct verbs_match_ent, 24);
SNAA44_CHECK_OFF(struct verbs_match_ent, driver_data, 0);
SNAA44_CHECK_OFF(struct verbs_match_ent, u.modalias, 8);
SNAA44_CHECK_OFF(struct verbs_match_ent, u.driver_id, 8);
SNAA44_CHECK_OFF(struct verbs_match_ent, vendor, 16);
SNAA44_CHECK_OFF(struct verbs_match_ent, device, 18);
SNAA44_CHECK_OFF(struct verbs_match_ent, kind, 20);

SNAA44_CHECK_SIZE(struct verbs_device_ops, 72);
SNAA44_CHECK_OFF(struct verbs_device_ops, name, 0);
SNAA44_CHECK_OFF(struct verbs_device_ops, match_min_abi_version, 8);
SNAA44_CHECK_OFF(struct verbs_device_ops, match_max_abi_version, 12);
SNAA44_CHECK_OFF(struct verbs_device_ops, match_table, 16);
SNAA44_CHECK_OFF(struct verbs_device_ops, static_providers, 24);
SNAA44_CHECK_OFF(struct verbs_device_ops, match_device, 32);
SNAA44_CHECK_OFF(struct verbs_device_ops, alloc_context, 40);
SNAA44_CHECK_OFF(struct verbs_device_ops, import_context, 48);
SNAA44_CHECK_OFF(struct verbs_device_ops, alloc_device, 56);
SNAA44_CHECK_OFF(struct verbs_device_ops, uninit_device, 64);

/* verbs_device: relative to the public ibv_device it starts with. */
SNAA44_CHECK_OFF(struct verbs_device, device, 0);
SNAA44_CHECK_OFF(struct verbs_device, ops, sizeof(struct ibv_device));
SNAA44_CHECK_OFF(struct verbs_device, refcount,
		    sizeof(struct ibv_device) + 8);
SNAA44_CHECK_OFF(struct verbs_device, entry,
		    sizeof(struct ibv_device) + 16);
SNAA44_CHECK_OFF(struct verbs_device, sysfs,
		    sizeof(struct ibv_device) + 32);
SNAA44_CHECK_OFF(struct verbs_device, core_support,
		    sizeof(struct ibv_device) + 40);
SNAA44_CHECK_SIZE(struct verbs_device, sizeof(struct ibv_device) + 48);
_Static_assert(sizeof(atomic_int) == 4, "rdma-core 44: atomic_int is not 4 bytes");

SNAA44_CHECK_OFF(struct verbs_mr, ibv_mr, 0);
SNAA44_CHECK_OFF(struct verbs_mr, mr_type, sizeof(struct ibv_mr));
SNAA44_CHECK_OFF(struct verbs_mr, access, sizeof(struct ibv_mr) + 4);
SNAA44_CHECK_SIZE(struct verbs_mr, sizeof(struct ibv_mr) + 8);

/* Every ops slot, by its alphabetical index. */
#define SNAA44_SLOT(member, idx)					\
	SNAA44_CHECK_OFF(struct verbs_context_ops, member,		\
			    (idx) * sizeof(snaa44_unused_op))
SNAA44_SLOT(advise_mr, 0);
SNAA44_SLOT(alloc_dm, 1);
SNAA44_SLOT(alloc_mw, 2);
SNAA44_SLOT(alloc_null_mr, 3);
SNAA44_SLOT(alloc_parent_domain, 4);
SNAA44_SLOT(alloc_pd, 5);
SNAA44_SLOT(alloc_td, 6);
SNAA44_SLOT(async_event, 7);
SNAA44_SLOT(attach_counters_point_flow, 8);
SNAA44_SLOT(attach_mcast, 9);
SNAA44_SLOT(bind_mw, 10);
SNAA44_SLOT(close_xrcd, 11);
SNAA44_SLOT(cq_event, 12);
SNAA44_SLOT(create_ah, 13);
SNAA44_SLOT(create_counters, 14);
SNAA44_SLOT(create_cq, 15);
SNAA44_SLOT(create_cq_ex, 16);
SNAA44_SLOT(create_flow, 17);
SNAA44_SLOT(create_flow_action_esp, 18);
SNAA44_SLOT(create_qp, 19);
SNAA44_SLOT(create_qp_ex, 20);
SNAA44_SLOT(create_rwq_ind_table, 21);
SNAA44_SLOT(create_srq, 22);
SNAA44_SLOT(create_srq_ex, 23);
SNAA44_SLOT(create_wq, 24);
SNAA44_SLOT(dealloc_mw, 25);
SNAA44_SLOT(dealloc_pd, 26);
SNAA44_SLOT(dealloc_td, 27);
SNAA44_SLOT(dereg_mr, 28);
SNAA44_SLOT(destroy_ah, 29);
SNAA44_SLOT(destroy_counters, 30);
SNAA44_SLOT(destroy_cq, 31);
SNAA44_SLOT(destroy_flow, 32);
SNAA44_SLOT(destroy_flow_action, 33);
SNAA44_SLOT(destroy_qp, 34);
SNAA44_SLOT(destroy_rwq_ind_table, 35);
SNAA44_SLOT(destroy_srq, 36);
SNAA44_SLOT(destroy_wq, 37);
SNAA44_SLOT(detach_mcast, 38);
SNAA44_SLOT(free_context, 39);
SNAA44_SLOT(free_dm, 40);
SNAA44_SLOT(get_srq_num, 41);
SNAA44_SLOT(import_dm, 42);
SNAA44_SLOT(import_mr, 43);
SNAA44_SLOT(import_pd, 44);
SNAA44_SLOT(modify_cq, 45);
SNAA44_SLOT(modify_flow_action_esp, 46);
SNAA44_SLOT(modify_qp, 47);
SNAA44_SLOT(modify_qp_rate_limit, 48);
SNAA44_SLOT(modify_srq, 49);
SNAA44_SLOT(modify_wq, 50);
SNAA44_SLOT(open_qp, 51);
SNAA44_SLOT(open_xrcd, 52);
SNAA44_SLOT(poll_cq, 53);
SNAA44_SLOT(post_recv, 54);
SNAA44_SLOT(post_send, 55);
SNAA44_SLOT(post_srq_ops, 56);
SNAA44_SLOT(post_srq_recv, 57);
SNAA44_SLOT(query_device_ex, 58);
SNAA44_SLOT(query_ece, 59);
SNAA44_SLOT(query_port, 60);
SNAA44_SLOT(query_qp, 61);
SNAA44_SLOT(query_qp_data_in_order, 62);
SNAA44_SLOT(query_rt_values, 63);
SNAA44_SLOT(query_srq, 64);
SNAA44_SLOT(read_counters, 65);
SNAA44_SLOT(reg_dm_mr, 66);
SNAA44_SLOT(reg_dmabuf_mr, 67);
SNAA44_SLOT(reg_mr, 68);
SNAA44_SLOT(req_notify_cq, 69);
SNAA44_SLOT(rereg_mr, 70);
SNAA44_SLOT(resize_cq, 71);
SNAA44_SLOT(set_ece, 72);
SNAA44_SLOT(unimport_dm, 73);
SNAA44_SLOT(unimport_mr, 74);
SNAA44_SLOT(unimport_pd, 75);
#undef SNAA44_SLOT
SNAA44_CHECK_SIZE(struct verbs_context_ops,
		     SNAA44_NUM_OPS * sizeof(snaa44_unused_op));
SNAA44_CHECK_SIZE(struct verbs_context_ops, 608);

/* Command buffers: header directly followed by the kernel's request. */
SNAA44_CHECK_SIZE(struct ib_uverbs_cmd_hdr, 8);
SNAA44_CHECK_SIZE(struct ibv_get_context, 16);
SNAA44_CHECK_SIZE(struct ibv_query_port, 24);
SNAA44_CHECK_SIZE(struct ibv_alloc_pd, 16);
SNAA44_CHECK_SIZE(struct ibv_reg_mr, 48);
SNAA44_CHECK_SIZE(struct ibv_create_cq, 40);
SNAA44_CHECK_OFF(struct ibv_alloc_mw, core_payload.pd_handle, 16);
SNAA44_CHECK_OFF(struct ibv_alloc_mw, core_payload.mw_type, 20);
SNAA44_CHECK_SIZE(struct ibv_alloc_mw, 24);
SNAA44_CHECK_SIZE(struct ibv_create_qp, 64);
SNAA44_CHECK_SIZE(struct ibv_modify_qp, 120);
SNAA44_CHECK_SIZE(struct ibv_query_qp, 24);
SNAA44_CHECK_OFF(struct ibv_resize_cq, core_payload.cq_handle, 16);
SNAA44_CHECK_OFF(struct ibv_resize_cq, core_payload.cqe, 20);
SNAA44_CHECK_SIZE(struct ibv_resize_cq, 24);

/* uapi responses (from linux-libc-dev; must match rdma-core's copy). */
SNAA44_CHECK_SIZE(struct ib_uverbs_get_context_resp, 8);
SNAA44_CHECK_SIZE(struct ib_uverbs_alloc_pd_resp, 4);
SNAA44_CHECK_SIZE(struct ib_uverbs_reg_mr_resp, 12);
SNAA44_CHECK_SIZE(struct ib_uverbs_alloc_mw_resp, 8);
SNAA44_CHECK_SIZE(struct ib_uverbs_create_cq_resp, 8);
SNAA44_CHECK_SIZE(struct ib_uverbs_create_qp_resp, 32);
SNAA44_CHECK_SIZE(struct ib_uverbs_create_ah_resp, 4);
SNAA44_CHECK_SIZE(struct ib_uverbs_ex_query_device_resp, 304);
SNAA44_CHECK_SIZE(struct ib_uverbs_resize_cq_resp, 8);

/* Public structs whose layout the private ABI depends on. */
SNAA44_CHECK_OFF(struct verbs_context, context,
		    sizeof(struct verbs_context) - sizeof(struct ibv_context));
SNAA44_CHECK_OFF(struct verbs_context, sz,
		    offsetof(struct verbs_context, context) - sizeof(size_t));
SNAA44_CHECK_SIZE(struct ibv_pd, 16);

#if defined(__x86_64__)
/* Absolute numbers, verified against Debian's libibverbs 44.0 [bin]. */
SNAA44_CHECK_SIZE(struct ibv_device, 664);
SNAA44_CHECK_SIZE(struct verbs_device, 712);
SNAA44_CHECK_OFF(struct verbs_device, ops, 664);
SNAA44_CHECK_OFF(struct verbs_device, refcount, 672);
SNAA44_CHECK_OFF(struct verbs_device, entry, 680);
SNAA44_CHECK_OFF(struct verbs_device, sysfs, 696);
SNAA44_CHECK_OFF(struct verbs_device, core_support, 704);
SNAA44_CHECK_SIZE(struct ibv_mr, 48);
SNAA44_CHECK_SIZE(struct verbs_mr, 56);
SNAA44_CHECK_OFF(struct verbs_mr, mr_type, 48);
SNAA44_CHECK_OFF(struct verbs_mr, access, 52);
SNAA44_CHECK_SIZE(struct verbs_context, 648);
SNAA44_CHECK_OFF(struct verbs_context, priv, 208);
SNAA44_CHECK_OFF(struct verbs_context, sz, 312);
SNAA44_CHECK_OFF(struct verbs_context, context, 320);
SNAA44_CHECK_SIZE(struct ibv_context, 328);
SNAA44_CHECK_SIZE(struct ibv_qp, 160);
SNAA44_CHECK_SIZE(struct ibv_cq, 128);
SNAA44_CHECK_SIZE(struct ibv_device_attr, 232);
SNAA44_CHECK_SIZE(struct ibv_qp_ex, 352);
SNAA44_CHECK_SIZE(struct verbs_qp, 368);
SNAA44_CHECK_OFF(struct verbs_qp, comp_mask, 352);
SNAA44_CHECK_SIZE(struct verbs_cq, sizeof(struct ibv_cq_ex));
#endif

#undef SNAA44_CHECK_SIZE
#undef SNAA44_CHECK_OFF

#endif /* SNAA_RDMA_CORE_44_DRIVER_H */
