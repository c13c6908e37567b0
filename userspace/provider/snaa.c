// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libsnaa: rdma-core (libibverbs) user-space provider for the snaa
 * soft-RoCE kernel driver, built as an rdma-core provider (providers/snaa
 * in the source tree of the rdma-core release that is to load it, see
 * CMakeLists.txt): libsnaa.so.1, loaded by libibverbs as
 * libsnaa-rdmav<N>.so (N: that release's private provider ABI), also
 * the library of the direct verbs of snaadv.h (libsnaa.map).
 *
 * libibverbs binds a snaa ib_device to this provider through the
 * modalias of its parent platform device ("platform:snaa"), opens it with
 * snaa_alloc_context() and routes the verbs below to us.
 *
 * Control path: every verb is the matching ibv_cmd_* helper, plus the
 * snaa udata of include/uapi/rdma/snaa-abi.h for CQs and QPs.
 * Data path: SQ, RQ and CQ are rings mapped from the uverbs file
 * (snaa_queue.h holds the ring code).  poll_cq never enters the kernel;
 * post_send/post_recv enter it only to ring a queue's doorbell
 * (SNAA_IB_METHOD_QP_DOORBELL) when the kernel has marked the ring idle.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* dladdr; rdma-core's build defines it already */
#endif

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <infiniband/driver.h>
#include <infiniband/kern-abi.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/rdma_user_ioctl.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/snaa-abi.h>
#include <kernel-abi/snaa-abi.h>

#include "snaa_queue.h"
#include "snaadv.h"

/*
 * The uverbs commands that carry snaa udata: the core command or
 * response, then ours (kernel-abi/snaa-abi.h is generated from
 * rdma/snaa-abi.h by rdma-core's build).
 */
DECLARE_DRV_CMD(usnaa_alloc_context, IB_USER_VERBS_CMD_GET_CONTEXT,
		empty, snaa_uresp_alloc_ctx);
DECLARE_DRV_CMD(usnaa_create_ah, IB_USER_VERBS_CMD_CREATE_AH,
		empty, snaa_uresp_create_ah);
DECLARE_DRV_CMD(usnaa_create_cq, IB_USER_VERBS_CMD_CREATE_CQ,
		empty, snaa_uresp_create_cq);
DECLARE_DRV_CMD(usnaa_create_qp, IB_USER_VERBS_CMD_CREATE_QP,
		snaa_ureq_create_qp, snaa_uresp_create_qp);
DECLARE_DRV_CMD(usnaa_create_srq, IB_USER_VERBS_CMD_CREATE_SRQ,
		empty, snaa_uresp_create_srq);
DECLARE_DRV_CMD(usnaa_resize_cq, IB_USER_VERBS_CMD_RESIZE_CQ,
		empty, snaa_uresp_resize_cq);

#define snaa_container_of(ptr, type, member)				\
	((type *)((char *)(ptr) - offsetof(type, member)))

struct snaa_device {
	struct verbs_device ibv_dev;	/* must be first (zeroed) */
};

/*
 * A doorbell: the driver method SNAA_IB_METHOD_QP_DOORBELL of the uverbs
 * ioctl on the device object, its one mandatory 4-byte attribute (the
 * doorbell word) carried inline (snaa-abi.h).  Built once per queue.
 */
struct snaa_doorbell {
	struct ib_uverbs_ioctl_hdr hdr;
	struct ib_uverbs_attr attr;
};

static void snaa_doorbell_init(struct snaa_doorbell *db, uint32_t word)
{
	memset(db, 0, sizeof(*db));
	db->hdr.length = sizeof(*db);
	db->hdr.object_id = UVERBS_OBJECT_DEVICE;
	db->hdr.method_id = SNAA_IB_METHOD_QP_DOORBELL;
	db->hdr.num_attrs = 1;
	db->hdr.driver_id = RDMA_DRIVER_UNKNOWN;
	db->attr.attr_id = SNAA_IB_ATTR_DOORBELL;
	db->attr.len = sizeof(word);
	db->attr.flags = UVERBS_ATTR_F_MANDATORY;
	/* up to 8 bytes travel in the attribute itself */
	memcpy(&db->attr.data, &word, sizeof(word));
}

struct snaa_context {
	struct verbs_context ibv_ctx;
	uint32_t dev_id;		/* kernel ib_device index */
};

struct snaa_pd {
	struct ibv_pd ibv_pd;
};

struct snaa_mr {
	struct verbs_mr vmr;	/* ibv_dereg_mr() reads mr_type behind it */
};

struct snaa_cq {
	struct verbs_cq vcq;	/* an extended CQ is its ibv_cq_ex */
	pthread_spinlock_t lock;	/* q, map, map_len, broken */
	struct snaa_queue q;
	void *map;
	size_t map_len;
	bool broken;		/* resize left no usable ring */
	/* extended CQ: the CQE between start_poll and end_poll */
	struct snaa_cqe cur;
	bool polling;		/* @cur is consumed at next/end_poll */
};

/* A QP's SQ or RQ: its ring and the lock serialising posts to it. */
struct snaa_wq {
	pthread_spinlock_t lock;	/* q.index */
	struct snaa_queue q;	/* q.ring == NULL: no ring */
	void *map;
	size_t map_len;
	uint32_t max_sge;
};

struct snaa_qp {
	/*
	 * The ibv_qp, or the ibv_qp_ex of a QP with send ops: libibverbs'
	 * ibv_qp_to_qp_ex() finds it through vqp.comp_mask.
	 */
	struct verbs_qp vqp;
	struct snaa_wq sq;
	struct snaa_wq rq;
	struct snaa_sq_caps sq_caps;
	struct snaa_doorbell sq_db, rq_db;
	struct snaa_wcu *wcu;		/* WCU.BUF receive mode */
	struct snaa_wr_batch *wrb;	/* the ibv_wr_* API, if enabled */
	/*
	 * The state as the application last set or queried it: posting to
	 * a QP in RESET fails at once (IBA C10-97), which the rings alone
	 * cannot tell.  A move to ERR by the kernel is not seen here, and
	 * need not be: WRs posted then are flushed.
	 */
	enum ibv_qp_state state;
};

/*
 * The ibv_wr_* batch being built, between wr_start and wr_complete (or
 * wr_abort), under the SQ lock.  WR i of the batch goes into the slot of
 * sq.q.index + i; the producer index moves only at wr_complete, so an
 * aborted or failed batch leaves no trace.  A WR is encoded when its
 * data is set (inline data is copied then, as the API allows the caller
 * to reuse the buffer at once); a WR whose data is never set is encoded
 * without any when the next one starts or the batch completes.
 */
struct snaa_wr_batch {
	uint64_t ops;			/* IBV_QP_EX_WITH_* granted */
	uint32_t n;			/* WRs started */
	bool encoded;			/* WR n - 1 is in its slot */
	int err;			/* first error: the batch fails */
	struct ibv_send_wr wr;		/* WR n - 1 */
	struct ibv_sge sge[SNAA_MAX_SGE];
};

/*
 * The consumer side of a WCU.BUF QP: the control area the kernel shares
 * (struct snaa_wcubuf_ctrl, snaa-abi.h) and the ring in the caller's MR.
 * One consumer thread at a time, as for a CQ without a lock.
 */
struct snaa_wcu {
	struct snaa_wcubuf_ctrl *ctrl;
	size_t ctrl_len;
	uint8_t *ring;
	uint64_t ring_size;
	uint32_t frame_size;
	uint32_t nslots;
	uint32_t rkey;
	uint64_t rp;			/* our read pointer */
	uint32_t rp_slot;
};

/* A shared receive queue: a ring of receive entries, like an RQ. */
struct snaa_srq {
	struct ibv_srq ibv_srq;
	struct snaa_wq rq;
};

static inline struct snaa_context *snaa_ctx(struct ibv_context *ibctx)
{
	return snaa_container_of(ibctx, struct snaa_context, ibv_ctx.context);
}

static inline struct snaa_pd *snaa_pd(struct ibv_pd *ibpd)
{
	return snaa_container_of(ibpd, struct snaa_pd, ibv_pd);
}

static inline struct snaa_mr *snaa_mr(struct verbs_mr *vmr)
{
	return snaa_container_of(vmr, struct snaa_mr, vmr);
}

static inline struct snaa_ah *snaa_ah(struct ibv_ah *ibah)
{
	return snaa_container_of(ibah, struct snaa_ah, ibv_ah);
}

static inline struct snaa_cq *snaa_cq(struct ibv_cq *ibcq)
{
	return snaa_container_of(ibcq, struct snaa_cq, vcq.cq);
}

static inline struct snaa_qp *snaa_qp(struct ibv_qp *ibqp)
{
	return snaa_container_of(ibqp, struct snaa_qp, vqp.qp);
}

/*
 * Error messages go through libibverbs' logger (VERBS_LOG_LEVEL and
 * VERBS_LOG_FILE select them), prefixed with "snaa: <device>: " (not
 * verbs_err(): that one names the function and line instead).
 */
__attribute__((format(printf, 3, 4)))
static void snaa_log(struct verbs_context *vctx, uint32_t level,
		     const char *fmt, ...)
{
	char msg[256];
	va_list ap;
	int err = errno;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	__verbs_log(vctx, level, "snaa: %s: %s\n",
		    vctx->context.device->name, msg);
	errno = err;
}

#define snaa_err(vctx, ...) snaa_log(vctx, VERBS_LOG_ERR, __VA_ARGS__)
#define snaa_ctx_err(ibctx, ...) \
	snaa_err(&snaa_ctx(ibctx)->ibv_ctx, __VA_ARGS__)

/*
 * Is the running libibverbs the rdma-core release this provider was
 * built in?  The private ABI number (the -rdmavNN.so the library looks
 * for) only says so much: within 34, struct ibv_qp_ex and with it
 * verbs_qp.comp_mask moved between rdma-core 44 and 56, so a provider
 * left over from before an upgrade would load and then corrupt memory.
 * libibverbs has no version query, but rdma-core's build names the
 * library libibverbs.so.1.<minor>.<PACKAGE_VERSION>: the file the
 * running one came from tells.  Under any other name nothing is known,
 * and nothing refused.  Returns 0, or EPROTO (logged).
 */
static int snaa_check_libibverbs(struct verbs_context *vctx)
{
	static const char prefix[] = "libibverbs.so.1.";
	char path[PATH_MAX];
	const char *base, *ver;
	Dl_info info;

	/* (a symbol the host test does not stand in for) */
	if (!dladdr((void *)_verbs_init_and_alloc_context, &info) ||
	    !info.dli_fname || !realpath(info.dli_fname, path))
		return 0;
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	if (strncmp(base, prefix, sizeof(prefix) - 1))
		return 0;
	/* past the minor number */
	ver = strchr(base + sizeof(prefix) - 1, '.');
	if (!ver || !strcmp(ver + 1, PACKAGE_VERSION))
		return 0;
	snaa_err(vctx,
		 "libibverbs is %s, this provider was built in rdma-core %s: rebuild it against the installed rdma-core (make provider)",
		 base, PACKAGE_VERSION);
	return EPROTO;
}

static int snaa_query_device_ex(struct ibv_context *ibctx,
				const struct ibv_query_device_ex_input *input,
				struct ibv_device_attr_ex *attr,
				size_t attr_size)
{
	return ibv_cmd_query_device_any(ibctx, input, attr, attr_size,
					NULL, NULL);
}

static int snaa_query_port(struct ibv_context *ibctx, uint8_t port,
			   struct ibv_port_attr *attr)
{
	struct ibv_query_port cmd;

	memset(&cmd, 0, sizeof(cmd));
	return ibv_cmd_query_port(ibctx, port, attr, &cmd, sizeof(cmd));
}

static void snaa_free_context(struct ibv_context *ibctx)
{
	struct snaa_context *ctx = snaa_ctx(ibctx);

	verbs_uninit_context(&ctx->ibv_ctx);
	free(ctx);
}

/* ------------------------------------------------------------------ */
/* Protection domains, memory regions, address handles                 */
/* ------------------------------------------------------------------ */

static struct ibv_pd *snaa_alloc_pd(struct ibv_context *ibctx)
{
	struct ib_uverbs_alloc_pd_resp resp;
	struct ibv_alloc_pd cmd;
	struct snaa_pd *pd;
	int ret;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;
	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	ret = ibv_cmd_alloc_pd(ibctx, &pd->ibv_pd, &cmd, sizeof(cmd),
			       &resp, sizeof(resp));
	if (ret) {
		free(pd);
		errno = ret;
		return NULL;
	}
	return &pd->ibv_pd;
}

static int snaa_dealloc_pd(struct ibv_pd *ibpd)
{
	int ret = ibv_cmd_dealloc_pd(ibpd);

	if (ret)
		return ret;
	free(snaa_pd(ibpd));
	return 0;
}

static struct ibv_mr *snaa_reg_mr(struct ibv_pd *ibpd, void *addr,
				  size_t length, uint64_t hca_va, int access)
{
	struct ib_uverbs_reg_mr_resp resp;
	struct ibv_reg_mr cmd;
	struct snaa_mr *mr;
	int ret;

	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return NULL;
	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	ret = ibv_cmd_reg_mr(ibpd, addr, length, hca_va, access, &mr->vmr,
			     &cmd, sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		free(mr);
		errno = ret;
		return NULL;
	}
	return &mr->vmr.ibv_mr;
}

static int snaa_dereg_mr(struct verbs_mr *vmr)
{
	int ret = ibv_cmd_dereg_mr(vmr);

	if (ret)
		return ret;
	free(snaa_mr(vmr));
	return 0;
}

/*
 * Memory windows: the kernel allocates the window and its first R_Key;
 * binds are work requests (snaa_bind_mw(), IBV_WR_BIND_MW).
 */
static struct ibv_mw *snaa_alloc_mw(struct ibv_pd *ibpd,
				    enum ibv_mw_type type)
{
	struct ib_uverbs_alloc_mw_resp resp;
	struct ibv_alloc_mw cmd;
	struct ibv_mw *mw;
	int ret;

	if (type != IBV_MW_TYPE_1 && type != IBV_MW_TYPE_2) {
		errno = EINVAL;
		return NULL;
	}
	mw = calloc(1, sizeof(*mw));
	if (!mw)
		return NULL;
	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	ret = ibv_cmd_alloc_mw(ibpd, type, mw, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (ret) {
		free(mw);
		errno = ret;
		return NULL;
	}
	return mw;
}

static int snaa_dealloc_mw(struct ibv_mw *mw)
{
	int ret = ibv_cmd_dealloc_mw(mw);

	if (ret)
		return ret;
	free(mw);
	return 0;
}

/*
 * UD only: RC/UC QPs get their destination through modify_qp.  A UD send
 * names the AH by the number the kernel returned (snaa_sqe.ah_handle).
 */
static struct ibv_ah *snaa_create_ah(struct ibv_pd *ibpd,
				     struct ibv_ah_attr *attr)
{
	struct usnaa_create_ah_resp resp;
	struct snaa_uresp_create_ah *drv = &resp.drv_payload;
	struct snaa_ah *ah;
	int ret;

	ah = calloc(1, sizeof(*ah));
	if (!ah)
		return NULL;
	memset(&resp, 0, sizeof(resp));
	ret = ibv_cmd_create_ah(ibpd, &ah->ibv_ah, attr, &resp.ibv_resp,
				sizeof(resp));
	if (ret) {
		free(ah);
		errno = ret;
		return NULL;
	}
	ah->ahn = drv->ahn;
	return &ah->ibv_ah;
}

static int snaa_destroy_ah(struct ibv_ah *ibah)
{
	int ret = ibv_cmd_destroy_ah(ibah);

	if (ret)
		return ret;
	free(snaa_ah(ibah));
	return 0;
}

/* ------------------------------------------------------------------ */
/* Rings                                                               */
/* ------------------------------------------------------------------ */

/*
 * mmap() one ring of the uverbs file; NULL with errno set on failure.
 * A forked child must not see the parent's live rings (it would post
 * into the parent's QPs, or consume its completions): the mapping is
 * not inherited across fork(2).
 */
static void *snaa_map_ring(struct ibv_context *ibctx, const char *what,
			   uint64_t key, size_t len)
{
	void *p;
	int err;

	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
		 ibctx->cmd_fd, (off_t)key);
	if (p == MAP_FAILED) {
		snaa_ctx_err(ibctx,
			     "mapping the %s ring (offset %#llx, %zu bytes) failed: %s",
			     what, (unsigned long long)key, len,
			     strerror(errno));
		return NULL;
	}
	if (madvise(p, len, MADV_DONTFORK)) {
		err = errno;
		snaa_ctx_err(ibctx,
			     "madvise(MADV_DONTFORK) on the %s ring failed: %s",
			     what, strerror(err));
		munmap(p, len);
		errno = err;
		return NULL;
	}
	return p;
}

/*
 * Ring a prebuilt doorbell (snaa_doorbell_init()); 0 or the errno of the
 * ioctl.  On failure the kernel has not been told of the caller's work
 * requests (the QP or the device is gone), so the caller reports none of
 * them as posted, and says why.
 */
static int snaa_ring_doorbell(struct ibv_qp *ibqp, struct snaa_doorbell *db,
			      const char *queue)
{
	int err;

	if (!ioctl(ibqp->context->cmd_fd, RDMA_VERBS_IOCTL, db))
		return 0;
	err = errno;
	snaa_ctx_err(ibqp->context,
		     "QP %u: %s doorbell failed: %s; the work requests of this call are not posted",
		     ibqp->qp_num, queue, strerror(err));
	return err;
}

/* ------------------------------------------------------------------ */
/* Completion queues                                                   */
/* ------------------------------------------------------------------ */

static bool snaa_cq_geometry_ok(uint32_t num_cqe, uint32_t ring_size,
				uint32_t granted_cqe)
{
	return snaa_ring_geometry_ok(num_cqe, sizeof(struct snaa_cqe),
				     ring_size, sizeof(struct snaa_cqe)) &&
	       num_cqe >= granted_cqe;
}

static struct snaa_cq *snaa_cq_new(struct ibv_context *ibctx, int cqe,
				    struct ibv_comp_channel *channel,
				    int comp_vector)
{
	struct usnaa_create_cq_resp resp;
	struct usnaa_create_cq cmd;
	struct snaa_uresp_create_cq *drv = &resp.drv_payload;
	struct snaa_cq *cq;
	void *map;
	int ret;

	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return NULL;
	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	ret = ibv_cmd_create_cq(ibctx, cqe, channel, comp_vector, &cq->vcq.cq,
				&cmd.ibv_cmd, sizeof(cmd), &resp.ibv_resp,
				sizeof(resp));
	if (ret) {
		free(cq);
		errno = ret;
		return NULL;
	}

	if (drv->cqe_size != sizeof(struct snaa_cqe) ||
	    !snaa_cq_geometry_ok(drv->num_cqe, drv->ring_size,
				 resp.ibv_resp.cqe)) {
		snaa_ctx_err(ibctx,
			     "kernel returned a CQ ring of %u entries of size %u in %u bytes for %u CQEs (provider needs a power of two >= the CQEs, entries of %zu bytes, a %zu-byte header): provider/kernel ABI mismatch",
			     drv->num_cqe, drv->cqe_size,
			     drv->ring_size, resp.ibv_resp.cqe,
			     sizeof(struct snaa_cqe), sizeof(struct snaa_ring));
		ret = EPROTO;
		goto err_destroy;
	}

	map = snaa_map_ring(ibctx, "CQ", drv->cq_key, drv->ring_size);
	if (!map) {
		ret = errno;
		goto err_destroy;
	}
	snaa_queue_init(&cq->q, map, drv->num_cqe, sizeof(struct snaa_cqe),
			drv->num_cqe, false);
	if (!snaa_queue_indices_ok(&cq->q)) {
		snaa_ctx_err(ibctx,
			     "new CQ ring has producer %u, consumer %u for %u entries: provider/kernel ABI mismatch",
			     cq->q.ring->producer, cq->q.ring->consumer,
			     drv->num_cqe);
		munmap(map, drv->ring_size);
		ret = EPROTO;
		goto err_destroy;
	}
	cq->map = map;
	cq->map_len = drv->ring_size;
	pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	return cq;

err_destroy:
	if (ibv_cmd_destroy_cq(&cq->vcq.cq))
		snaa_ctx_err(ibctx, "could not destroy the rejected CQ");
	free(cq);
	errno = ret;
	return NULL;
}

static struct ibv_cq *snaa_create_cq(struct ibv_context *ibctx, int cqe,
				     struct ibv_comp_channel *channel,
				     int comp_vector)
{
	struct snaa_cq *cq = snaa_cq_new(ibctx, cqe, channel, comp_vector);

	return cq ? &cq->vcq.cq : NULL;
}

/* ---- extended CQ: ibv_start_poll() and friends ---- */

static inline struct snaa_cq *snaa_cq_of_ex(struct ibv_cq_ex *cq_ex)
{
	return snaa_container_of(cq_ex, struct snaa_cq, vcq.cq_ex);
}

/*
 * Take the next CQE into cq->cur, without consuming it yet.  Return 0,
 * ENOENT (empty) or EIO (the ring is unusable).
 */
static int snaa_cq_ex_fetch(struct snaa_cq *cq)
{
	struct snaa_queue *q = &cq->q;
	uint32_t prod;

	if (cq->broken)
		return EIO;
	prod = snaa_load_acquire(&q->ring->producer);
	if (prod - q->index > q->num)
		return EIO;
	if (prod == q->index)
		return ENOENT;
	memcpy(&cq->cur, snaa_queue_slot(q, q->index), sizeof(cq->cur));
	cq->vcq.cq_ex.wr_id = cq->cur.wr_id;
	cq->vcq.cq_ex.status = (enum ibv_wc_status)cq->cur.status;
	return 0;
}

/* Hand the CQE in cq->cur back to the kernel. */
static void snaa_cq_ex_consume(struct snaa_cq *cq)
{
	cq->q.index++;
	snaa_store_release(&cq->q.ring->consumer, cq->q.index);
}

/* The lock is held from a successful start_poll to end_poll. */
static int snaa_start_poll(struct ibv_cq_ex *cq_ex,
			   struct ibv_poll_cq_attr *attr)
{
	struct snaa_cq *cq = snaa_cq_of_ex(cq_ex);
	int ret;

	if (attr->comp_mask)
		return EINVAL;
	pthread_spin_lock(&cq->lock);
	ret = snaa_cq_ex_fetch(cq);
	if (ret) {
		pthread_spin_unlock(&cq->lock);
		return ret;
	}
	cq->polling = true;
	return 0;
}

static int snaa_next_poll(struct ibv_cq_ex *cq_ex)
{
	struct snaa_cq *cq = snaa_cq_of_ex(cq_ex);
	int ret;

	if (cq->polling)
		snaa_cq_ex_consume(cq);
	cq->polling = false;
	ret = snaa_cq_ex_fetch(cq);
	if (ret)
		return ret;
	cq->polling = true;
	return 0;
}

static void snaa_end_poll(struct ibv_cq_ex *cq_ex)
{
	struct snaa_cq *cq = snaa_cq_of_ex(cq_ex);

	if (cq->polling)
		snaa_cq_ex_consume(cq);
	cq->polling = false;
	pthread_spin_unlock(&cq->lock);
}

static enum ibv_wc_opcode snaa_wc_read_opcode(struct ibv_cq_ex *cq_ex)
{
	return (enum ibv_wc_opcode)snaa_cq_of_ex(cq_ex)->cur.opcode;
}

static uint32_t snaa_wc_read_vendor_err(struct ibv_cq_ex *cq_ex)
{
	(void)cq_ex;
	return 0;
}

static uint32_t snaa_wc_read_byte_len(struct ibv_cq_ex *cq_ex)
{
	return snaa_cq_of_ex(cq_ex)->cur.byte_len;
}

static __be32 snaa_wc_read_imm_data(struct ibv_cq_ex *cq_ex)
{
	return (__be32)snaa_cq_of_ex(cq_ex)->cur.imm_data;
}

static uint32_t snaa_wc_read_qp_num(struct ibv_cq_ex *cq_ex)
{
	return snaa_cq_of_ex(cq_ex)->cur.qp_num;
}

static uint32_t snaa_wc_read_src_qp(struct ibv_cq_ex *cq_ex)
{
	return snaa_cq_of_ex(cq_ex)->cur.src_qp;
}

static unsigned int snaa_wc_read_wc_flags(struct ibv_cq_ex *cq_ex)
{
	struct ibv_wc wc;

	snaa_cqe_to_wc(&snaa_cq_of_ex(cq_ex)->cur, &wc);
	return wc.wc_flags;
}

static uint32_t snaa_wc_read_slid(struct ibv_cq_ex *cq_ex)
{
	(void)cq_ex;
	return 0;	/* RoCE: no LIDs */
}

static uint8_t snaa_wc_read_sl(struct ibv_cq_ex *cq_ex)
{
	return snaa_cq_of_ex(cq_ex)->cur.sl;
}

static uint8_t snaa_wc_read_dlid_path_bits(struct ibv_cq_ex *cq_ex)
{
	(void)cq_ex;
	return 0;
}

/* The work completion fields an extended CQ can report. */
#define SNAA_CQ_EX_WC_FLAGS	IBV_WC_STANDARD_FLAGS

/*
 * ibv_create_cq_ex(): the same ring as a CQ, read through the
 * ibv_start_poll() family.  No completion timestamps (the device has no
 * clock to report), none of the vendor fields, no flags.
 */
static struct ibv_cq_ex *snaa_create_cq_ex(struct ibv_context *ibctx,
					   struct ibv_cq_init_attr_ex *attr)
{
	struct ibv_cq_ex *ex;
	struct snaa_cq *cq;

	if ((attr->comp_mask & ~(uint32_t)(IBV_CQ_INIT_ATTR_MASK_FLAGS |
					   IBV_CQ_INIT_ATTR_MASK_PD)) ||
	    (attr->wc_flags & ~(uint64_t)SNAA_CQ_EX_WC_FLAGS) ||
	    ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	     attr->flags)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr->cqe > INT32_MAX) {
		errno = EINVAL;
		return NULL;
	}
	cq = snaa_cq_new(ibctx, (int)attr->cqe, attr->channel,
			 (int)attr->comp_vector);
	if (!cq)
		return NULL;
	verbs_init_cq(&cq->vcq.cq, ibctx, attr->channel, attr->cq_context);
	ex = &cq->vcq.cq_ex;
	ex->start_poll = snaa_start_poll;
	ex->next_poll = snaa_next_poll;
	ex->end_poll = snaa_end_poll;
	ex->read_opcode = snaa_wc_read_opcode;
	ex->read_vendor_err = snaa_wc_read_vendor_err;
	ex->read_wc_flags = snaa_wc_read_wc_flags;
	ex->read_byte_len = snaa_wc_read_byte_len;
	ex->read_imm_data = snaa_wc_read_imm_data;
	ex->read_qp_num = snaa_wc_read_qp_num;
	ex->read_src_qp = snaa_wc_read_src_qp;
	ex->read_slid = snaa_wc_read_slid;
	ex->read_sl = snaa_wc_read_sl;
	ex->read_dlid_path_bits = snaa_wc_read_dlid_path_bits;
	return ex;
}

static int snaa_destroy_cq(struct ibv_cq *ibcq)
{
	struct snaa_cq *cq = snaa_cq(ibcq);
	int ret;

	ret = ibv_cmd_destroy_cq(ibcq);
	if (ret)
		return ret;
	munmap(cq->map, cq->map_len);
	pthread_spin_destroy(&cq->lock);
	free(cq);
	return 0;
}

/* The data path: no system call, ever. */
static int snaa_poll_cq(struct ibv_cq *ibcq, int num_entries,
			struct ibv_wc *wc)
{
	struct snaa_cq *cq = snaa_cq(ibcq);
	int ret;

	pthread_spin_lock(&cq->lock);
	ret = cq->broken ? -EIO : snaa_cq_poll(&cq->q, num_entries, wc);
	pthread_spin_unlock(&cq->lock);
	return ret;
}

/* The kernel arms the CQ; completions are reported on the channel. */
static int snaa_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	return ibv_cmd_req_notify_cq(ibcq, solicited_only);
}

/*
 * The kernel moves the entries between our consumer index and its
 * producer into a new ring and from then on completes into that one.
 * No poll may consume from the old ring meanwhile, so the CQ lock is
 * held across the command.  Once the command succeeded there is no way
 * back: if the new ring cannot be used the CQ is marked broken and
 * poll_cq fails with -EIO from then on.
 */
static int snaa_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct ibv_context *ibctx = ibcq->context;
	struct snaa_cq *cq = snaa_cq(ibcq);
	struct usnaa_resize_cq_resp resp;
	struct usnaa_resize_cq cmd;
	struct snaa_uresp_resize_cq *drv = &resp.drv_payload;
	struct snaa_queue q;
	size_t old_len;
	uint32_t prod;
	void *map, *old;
	int ret;

	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	pthread_spin_lock(&cq->lock);
	if (cq->broken) {
		ret = EIO;
		goto out_unlock;
	}
	ret = ibv_cmd_resize_cq(ibcq, cqe, &cmd.ibv_cmd, sizeof(cmd), &resp.ibv_resp,
				sizeof(resp));
	if (ret)
		goto out_unlock;	/* nothing changed */

	if (!snaa_cq_geometry_ok(drv->num_cqe, drv->ring_size,
				 resp.ibv_resp.cqe)) {
		snaa_ctx_err(ibctx,
			     "kernel resized the CQ to a ring of %u entries in %u bytes for %u CQEs: provider/kernel ABI mismatch; the CQ is unusable",
			     drv->num_cqe, drv->ring_size,
			     resp.ibv_resp.cqe);
		ret = EPROTO;
		goto out_broken;
	}
	map = snaa_map_ring(ibctx, "resized CQ", drv->cq_key,
			    drv->ring_size);
	if (!map) {
		ret = errno;
		snaa_ctx_err(ibctx, "the CQ is unusable");
		goto out_broken;
	}
	snaa_queue_init(&q, map, drv->num_cqe, sizeof(struct snaa_cqe),
			drv->num_cqe, false);
	q.index = drv->consumer;
	prod = snaa_load_acquire(&q.ring->producer);
	if (prod - q.index > q.num) {
		snaa_ctx_err(ibctx,
			     "resized CQ ring has producer %u, consumer %u for %u entries: provider/kernel ABI mismatch; the CQ is unusable",
			     prod, q.index, q.num);
		munmap(map, drv->ring_size);
		ret = EPROTO;
		goto out_broken;
	}
	/* We own the consumer index, of the new ring too. */
	snaa_store_release(&q.ring->consumer, q.index);

	old = cq->map;
	old_len = cq->map_len;
	cq->q = q;
	cq->map = map;
	cq->map_len = drv->ring_size;
	pthread_spin_unlock(&cq->lock);
	munmap(old, old_len);
	return 0;

out_broken:
	cq->broken = true;
out_unlock:
	pthread_spin_unlock(&cq->lock);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Queue pairs                                                         */
/* ------------------------------------------------------------------ */

/*
 * Map one work queue of a new QP.  A queue the kernel sized to zero
 * entries for zero granted WRs is not mapped (nothing can be posted).
 */
static int snaa_wq_map(struct ibv_qp *ibqp, struct snaa_wq *wq,
		       const char *what, uint64_t key, uint32_t num,
		       uint32_t stride, uint32_t ring_size,
		       uint64_t min_stride, uint32_t max_wr, uint32_t max_sge)
{
	struct ibv_context *ibctx = ibqp->context;
	void *map;

	wq->max_sge = max_sge;
	if (!num && !max_wr)
		return 0;
	if (!snaa_ring_geometry_ok(num, stride, ring_size, min_stride) ||
	    num < max_wr) {
		snaa_ctx_err(ibctx,
			     "QP %u: kernel returned %u %s entries of size %u in %u bytes for %u WRs (provider needs a power of two >= the WRs, entries of >= %llu bytes, a multiple of 8): provider/kernel ABI mismatch",
			     ibqp->qp_num, num, what, stride, ring_size,
			     max_wr, (unsigned long long)min_stride);
		return EPROTO;
	}
	map = snaa_map_ring(ibctx, what, key, ring_size);
	if (!map)
		return errno;
	snaa_queue_init(&wq->q, map, num, stride, max_wr, true);
	if (!snaa_queue_indices_ok(&wq->q)) {
		snaa_ctx_err(ibctx,
			     "QP %u: new %s ring has producer %u, consumer %u for %u entries: provider/kernel ABI mismatch",
			     ibqp->qp_num, what, wq->q.ring->producer,
			     wq->q.ring->consumer, num);
		munmap(map, ring_size);
		wq->q.ring = NULL;
		return EPROTO;
	}
	wq->map = map;
	wq->map_len = ring_size;
	return 0;
}

static void snaa_wq_unmap(struct snaa_wq *wq)
{
	if (wq->map)
		munmap(wq->map, wq->map_len);
	wq->map = NULL;
	wq->q.ring = NULL;
}

/* The doorbells of a new QP, SQ and RQ: the QPN in the doorbell word. */
static void snaa_qp_init_doorbells(struct snaa_qp *qp)
{
	uint32_t qpn = qp->vqp.qp.qp_num & SNAA_DOORBELL_QPN_MASK;

	snaa_doorbell_init(&qp->sq_db, qpn);
	snaa_doorbell_init(&qp->rq_db, qpn | SNAA_DOORBELL_RQ);
}

/* Map the control area of a new WCU.BUF QP.  Return 0 or an errno. */
static int snaa_wcu_map(struct snaa_qp *qp,
			const struct snaa_uresp_create_qp *drv,
			const struct snaadv_wcubuf_attr *wattr)
{
	struct ibv_context *ibctx = qp->vqp.qp.context;
	uint32_t nslots = (uint32_t)(wattr->ring_size / wattr->frame_size);
	struct snaa_wcu *w;

	if (drv->wcubuf_size < sizeof(struct snaa_wcubuf_ctrl) +
			       (uint64_t)nslots * sizeof(uint32_t)) {
		snaa_ctx_err(ibctx,
			     "QP %u: kernel returned a %u-byte WCU.BUF control area for %u frames: provider/kernel ABI mismatch",
			     qp->vqp.qp.qp_num, drv->wcubuf_size, nslots);
		return EPROTO;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return ENOMEM;
	w->ctrl = snaa_map_ring(ibctx, "WCU.BUF control", drv->wcubuf_key,
				drv->wcubuf_size);
	if (!w->ctrl) {
		free(w);
		return errno;
	}
	w->ctrl_len = drv->wcubuf_size;
	w->ring = wattr->ring;
	w->ring_size = wattr->ring_size;
	w->frame_size = wattr->frame_size;
	w->nslots = nslots;
	w->rkey = drv->wcubuf_rkey;
	w->rp = wattr->va_base;
	qp->wcu = w;
	return 0;
}

static void snaa_wcu_unmap(struct snaa_qp *qp)
{
	if (!qp->wcu)
		return;
	munmap(qp->wcu->ctrl, qp->wcu->ctrl_len);
	free(qp->wcu);
	qp->wcu = NULL;
}

static struct ibv_qp *snaa_create_qp_ureq(struct ibv_pd *ibpd,
					  struct ibv_qp_init_attr *attr,
					  const struct snaa_ureq_create_qp *ureq,
					  const struct snaadv_wcubuf_attr *wattr)
{
	struct usnaa_create_qp_resp resp;
	struct usnaa_create_qp cmd;
	struct snaa_uresp_create_qp *drv = &resp.drv_payload;
	struct ibv_qp_cap *cap = &attr->cap;
	struct snaa_qp *qp;
	int ret;

	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	pthread_spin_init(&qp->sq.lock, PTHREAD_PROCESS_PRIVATE);
	pthread_spin_init(&qp->rq.lock, PTHREAD_PROCESS_PRIVATE);
	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	/* No driver request at all for an ordinary QP: any kernel takes it. */
	if (ureq)
		cmd.drv_payload = *ureq;
	ret = ibv_cmd_create_qp(ibpd, &qp->vqp.qp, attr, &cmd.ibv_cmd,
				ureq ? sizeof(cmd) : sizeof(cmd.ibv_cmd),
				&resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_free;

	/* attr->cap now holds what the kernel granted. */
	if (drv->qp_num != qp->vqp.qp.qp_num) {
		snaa_ctx_err(ibpd->context,
			     "kernel returned QP number %u in the snaa response, %u in the uverbs one: provider/kernel ABI mismatch",
			     drv->qp_num, qp->vqp.qp.qp_num);
		ret = EPROTO;
		goto err_destroy;
	}
	qp->sq_caps.qp_type = attr->qp_type;
	qp->sq_caps.max_sge = cap->max_send_sge;
	qp->sq_caps.max_inline = cap->max_inline_data;
	ret = snaa_wq_map(&qp->vqp.qp, &qp->sq, "SQ", drv->sq_key,
			  drv->sq_num, drv->sq_stride, drv->sq_ring_size,
			  snaa_sq_min_stride(cap->max_send_sge,
					     cap->max_inline_data),
			  cap->max_send_wr, cap->max_send_sge);
	if (ret)
		goto err_destroy;
	/* With an SRQ the receive WRs go there; the QP has no RQ ring. */
	if (!attr->srq) {
		ret = snaa_wq_map(&qp->vqp.qp, &qp->rq, "RQ", drv->rq_key,
				  drv->rq_num, drv->rq_stride,
				  drv->rq_ring_size,
				  snaa_rq_min_stride(cap->max_recv_sge),
				  cap->max_recv_wr, cap->max_recv_sge);
		if (ret)
			goto err_unmap;
	}
	if (wattr) {
		ret = snaa_wcu_map(qp, drv, wattr);
		if (ret)
			goto err_unmap;
	}
	snaa_qp_init_doorbells(qp);
	return &qp->vqp.qp;

err_unmap:
	snaa_wq_unmap(&qp->rq);
	snaa_wq_unmap(&qp->sq);
err_destroy:
	if (ibv_cmd_destroy_qp(&qp->vqp.qp))
		snaa_ctx_err(ibpd->context, "could not destroy the rejected QP");
err_free:
	pthread_spin_destroy(&qp->sq.lock);
	pthread_spin_destroy(&qp->rq.lock);
	free(qp);
	errno = ret;
	return NULL;
}

static struct ibv_qp *snaa_create_qp(struct ibv_pd *ibpd,
				     struct ibv_qp_init_attr *attr)
{
	return snaa_create_qp_ureq(ibpd, attr, NULL, NULL);
}

static int snaa_destroy_qp(struct ibv_qp *ibqp);

/*
 * Why nothing can be posted to the QP's SQ now, as an errno, or 0: no
 * SQ granted (ENOMEM), a WCU.BUF QP (its send side carries the kernel's
 * ACKs) or a QP in RESET (EINVAL).
 */
static int snaa_sq_refuses(const struct snaa_qp *qp)
{
	if (!qp->sq.q.ring)
		return ENOMEM;
	return qp->wcu || qp->state == IBV_QPS_RESET ? EINVAL : 0;
}

/*
 * After SQEs were published: ring the doorbell if the kernel has marked
 * the SQ idle (outside the SQ lock: every poster does its own
 * barrier-and-check, so a second thread's entries are never stranded).
 * 0 or the errno of the doorbell (snaa_ring_doorbell()).
 */
static int snaa_sq_kick(struct snaa_qp *qp)
{
	if (!snaa_ring_needs_doorbell(qp->sq.q.ring))
		return 0;
	return snaa_ring_doorbell(&qp->vqp.qp, &qp->sq_db, "SQ");
}

/* ---- the ibv_wr_* send API (ibv_create_qp_ex with send_ops_flags) ---- */

static inline struct snaa_qp *snaa_qp_of_ex(struct ibv_qp_ex *qpx)
{
	return snaa_container_of(qpx, struct snaa_qp, vqp.qp_ex);
}

/* Check and write WR n - 1 of the batch into its slot. */
static void snaa_wr_encode(struct snaa_qp *qp)
{
	struct snaa_wr_batch *b = qp->wrb;
	uint32_t inline_len;
	int err;

	if (b->err || !b->n || b->encoded)
		return;
	err = snaa_sq_check_wr(&qp->sq_caps, &b->wr, &inline_len);
	if (err) {
		b->err = err;
		return;
	}
	snaa_sqe_encode(snaa_queue_slot(&qp->sq.q, qp->sq.q.index + b->n - 1),
			qp->sq_caps.qp_type, &b->wr, inline_len);
	b->encoded = true;
}

/* A new WR of the batch with @opcode; false if the batch has failed. */
static bool snaa_wr_begin(struct ibv_qp_ex *qpx, enum ibv_wr_opcode opcode,
			  uint64_t op_flag)
{
	struct snaa_qp *qp = snaa_qp_of_ex(qpx);
	struct snaa_wr_batch *b = qp->wrb;
	struct snaa_queue *q = &qp->sq.q;
	uint32_t cons;

	snaa_wr_encode(qp);
	if (b->err)
		return false;
	if (!(b->ops & op_flag)) {
		b->err = EINVAL;	/* not in send_ops_flags */
		return false;
	}
	cons = snaa_load_acquire(&q->ring->consumer);
	if (q->index + b->n - cons >= q->limit) {
		b->err = ENOMEM;
		return false;
	}
	memset(&b->wr, 0, sizeof(b->wr));
	b->wr.wr_id = qpx->wr_id;
	b->wr.send_flags = qpx->wr_flags;
	b->wr.opcode = opcode;
	b->wr.sg_list = b->sge;
	b->n++;
	b->encoded = false;
	return true;
}

static void snaa_wr_start(struct ibv_qp_ex *qpx)
{
	struct snaa_qp *qp = snaa_qp_of_ex(qpx);

	pthread_spin_lock(&qp->sq.lock);
	qp->wrb->n = 0;
	qp->wrb->err = snaa_sq_refuses(qp);
	qp->wrb->encoded = false;
}

static int snaa_wr_complete(struct ibv_qp_ex *qpx)
{
	struct snaa_qp *qp = snaa_qp_of_ex(qpx);
	struct snaa_wr_batch *b = qp->wrb;
	uint32_t n;
	int err;

	snaa_wr_encode(qp);
	err = b->err;
	n = err ? 0 : b->n;
	if (n) {
		qp->sq.q.index += n;
		snaa_store_release(&qp->sq.q.ring->producer, qp->sq.q.index);
	}
	pthread_spin_unlock(&qp->sq.lock);
	if (n)
		err = snaa_sq_kick(qp);
	return err;
}

static void snaa_wr_abort(struct ibv_qp_ex *qpx)
{
	pthread_spin_unlock(&snaa_qp_of_ex(qpx)->sq.lock);
}

static void snaa_wr_send(struct ibv_qp_ex *qpx)
{
	snaa_wr_begin(qpx, IBV_WR_SEND, IBV_QP_EX_WITH_SEND);
}

static void snaa_wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm)
{
	if (snaa_wr_begin(qpx, IBV_WR_SEND_WITH_IMM,
			  IBV_QP_EX_WITH_SEND_WITH_IMM))
		snaa_qp_of_ex(qpx)->wrb->wr.imm_data = imm;
}

static void snaa_wr_rdma(struct ibv_qp_ex *qpx, enum ibv_wr_opcode opcode,
			 uint64_t op_flag, uint32_t rkey, uint64_t raddr,
			 __be32 imm)
{
	struct snaa_wr_batch *b = snaa_qp_of_ex(qpx)->wrb;

	if (!snaa_wr_begin(qpx, opcode, op_flag))
		return;
	b->wr.wr.rdma.rkey = rkey;
	b->wr.wr.rdma.remote_addr = raddr;
	b->wr.imm_data = imm;
}

static void snaa_wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey,
			       uint64_t raddr)
{
	snaa_wr_rdma(qpx, IBV_WR_RDMA_WRITE, IBV_QP_EX_WITH_RDMA_WRITE, rkey,
		     raddr, 0);
}

static void snaa_wr_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey,
				   uint64_t raddr, __be32 imm)
{
	snaa_wr_rdma(qpx, IBV_WR_RDMA_WRITE_WITH_IMM,
		     IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM, rkey, raddr, imm);
}

static void snaa_wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey,
			      uint64_t raddr)
{
	snaa_wr_rdma(qpx, IBV_WR_RDMA_READ, IBV_QP_EX_WITH_RDMA_READ, rkey,
		     raddr, 0);
}

static void snaa_wr_atomic(struct ibv_qp_ex *qpx, enum ibv_wr_opcode opcode,
			   uint64_t op_flag, uint32_t rkey, uint64_t raddr,
			   uint64_t compare_add, uint64_t swap)
{
	struct snaa_wr_batch *b = snaa_qp_of_ex(qpx)->wrb;

	if (!snaa_wr_begin(qpx, opcode, op_flag))
		return;
	b->wr.wr.atomic.rkey = rkey;
	b->wr.wr.atomic.remote_addr = raddr;
	b->wr.wr.atomic.compare_add = compare_add;
	b->wr.wr.atomic.swap = swap;
}

static void snaa_wr_atomic_cmp_swp(struct ibv_qp_ex *qpx, uint32_t rkey,
				   uint64_t raddr, uint64_t compare,
				   uint64_t swap)
{
	snaa_wr_atomic(qpx, IBV_WR_ATOMIC_CMP_AND_SWP,
		       IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP, rkey, raddr, compare,
		       swap);
}

static void snaa_wr_atomic_fetch_add(struct ibv_qp_ex *qpx, uint32_t rkey,
				     uint64_t raddr, uint64_t add)
{
	snaa_wr_atomic(qpx, IBV_WR_ATOMIC_FETCH_AND_ADD,
		       IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD, rkey, raddr, add, 0);
}

/* BIND_MW and LOCAL_INV carry no data: encoded right away. */
static void snaa_wr_bind_mw(struct ibv_qp_ex *qpx, struct ibv_mw *mw,
			    uint32_t rkey,
			    const struct ibv_mw_bind_info *bind_info)
{
	struct snaa_qp *qp = snaa_qp_of_ex(qpx);
	struct snaa_wr_batch *b = qp->wrb;

	if (!snaa_wr_begin(qpx, IBV_WR_BIND_MW, IBV_QP_EX_WITH_BIND_MW))
		return;
	if (!bind_info) {
		b->err = EINVAL;
		return;
	}
	b->wr.bind_mw.mw = mw;
	b->wr.bind_mw.rkey = rkey;
	b->wr.bind_mw.bind_info = *bind_info;
	snaa_wr_encode(qp);
}

static void snaa_wr_local_inv(struct ibv_qp_ex *qpx, uint32_t invalidate_rkey)
{
	struct snaa_qp *qp = snaa_qp_of_ex(qpx);

	if (!snaa_wr_begin(qpx, IBV_WR_LOCAL_INV, IBV_QP_EX_WITH_LOCAL_INV))
		return;
	qp->wrb->wr.invalidate_rkey = invalidate_rkey;
	snaa_wr_encode(qp);
}

static void snaa_wr_send_inv(struct ibv_qp_ex *qpx, uint32_t invalidate_rkey)
{
	if (snaa_wr_begin(qpx, IBV_WR_SEND_WITH_INV,
			  IBV_QP_EX_WITH_SEND_WITH_INV))
		snaa_qp_of_ex(qpx)->wrb->wr.invalidate_rkey = invalidate_rkey;
}

static void snaa_wr_set_ud_addr(struct ibv_qp_ex *qpx, struct ibv_ah *ah,
				uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct snaa_qp *qp = snaa_qp_of_ex(qpx);
	struct snaa_wr_batch *b = qp->wrb;
	struct snaa_sqe *sqe;

	if (b->err || !b->n)
		return;
	if (qp->sq_caps.qp_type != IBV_QPT_UD || !ah ||
	    remote_qpn & ~SNAA_QPN_MASK) {
		b->err = EINVAL;
		return;
	}
	b->wr.wr.ud.ah = ah;
	b->wr.wr.ud.remote_qpn = remote_qpn;
	b->wr.wr.ud.remote_qkey = remote_qkey;
	if (!b->encoded)
		return;
	/* the data came first: the WR is in its slot already */
	sqe = snaa_queue_slot(&qp->sq.q, qp->sq.q.index + b->n - 1);
	sqe->ah_handle = snaa_ahn(ah);
	sqe->remote_qpn = remote_qpn;
	sqe->remote_qkey = remote_qkey;
}

static void snaa_wr_set_sge_list(struct ibv_qp_ex *qpx, size_t num_sge,
				 const struct ibv_sge *sg_list)
{
	struct snaa_qp *qp = snaa_qp_of_ex(qpx);
	struct snaa_wr_batch *b = qp->wrb;

	if (b->err || !b->n || b->encoded)
		return;
	if (num_sge > SNAA_MAX_SGE || (num_sge && !sg_list)) {
		b->err = EINVAL;
		return;
	}
	memcpy(b->sge, sg_list, num_sge * sizeof(*sg_list));
	b->wr.num_sge = (int)num_sge;
	b->wr.send_flags &= ~(unsigned int)IBV_SEND_INLINE;
	snaa_wr_encode(qp);
}

static void snaa_wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey,
			    uint64_t addr, uint32_t length)
{
	struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };

	snaa_wr_set_sge_list(qpx, 1, &sge);
}

/* Inline data: copied into the slot right away. */
static void snaa_wr_set_inline_data_list(struct ibv_qp_ex *qpx,
					 size_t num_buf,
					 const struct ibv_data_buf *buf_list)
{
	struct snaa_qp *qp = snaa_qp_of_ex(qpx);
	struct snaa_wr_batch *b = qp->wrb;
	size_t i;

	if (b->err || !b->n || b->encoded)
		return;
	if (num_buf > SNAA_MAX_SGE || (num_buf && !buf_list)) {
		b->err = EINVAL;
		return;
	}
	for (i = 0; i < num_buf; i++) {
		b->sge[i].addr = (uintptr_t)buf_list[i].addr;
		b->sge[i].length = (uint32_t)buf_list[i].length;
		b->sge[i].lkey = 0;
		if (buf_list[i].length > UINT32_MAX) {
			b->err = EINVAL;
			return;
		}
	}
	b->wr.num_sge = (int)num_buf;
	b->wr.send_flags |= IBV_SEND_INLINE;
	snaa_wr_encode(qp);
}

static void snaa_wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr,
				    size_t length)
{
	struct ibv_data_buf buf = { .addr = addr, .length = length };

	snaa_wr_set_inline_data_list(qpx, 1, &buf);
}

/* What the ibv_wr_* API can post, per QP type. */
static uint64_t snaa_wr_ops(enum ibv_qp_type type)
{
	uint64_t send = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM;
	uint64_t write = IBV_QP_EX_WITH_RDMA_WRITE |
			 IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM;
	uint64_t mw = IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV;

	switch (type) {
	case IBV_QPT_RC:
		return send | write | mw | IBV_QP_EX_WITH_RDMA_READ |
		       IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
		       IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |
		       IBV_QP_EX_WITH_SEND_WITH_INV;
	case IBV_QPT_UC:
		return send | write | mw;
	case IBV_QPT_UD:
		return send;
	default:
		return 0;
	}
}

static struct ibv_qp *snaa_create_qp_ex(struct ibv_context *ibctx,
					struct ibv_qp_init_attr_ex *ax)
{
	struct ibv_qp_init_attr attr;
	struct ibv_qp_ex *qpx;
	struct snaa_qp *qp;
	struct ibv_qp *ibqp;
	uint64_t ops = 0;
	int err;

	if ((ax->comp_mask & ~(uint32_t)(IBV_QP_INIT_ATTR_PD |
					 IBV_QP_INIT_ATTR_CREATE_FLAGS |
					 IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)) ||
	    !(ax->comp_mask & IBV_QP_INIT_ATTR_PD) ||
	    ((ax->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	     ax->create_flags)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (ax->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		ops = ax->send_ops_flags;
		if (!ops || ops & ~snaa_wr_ops(ax->qp_type)) {
			errno = EOPNOTSUPP;
			return NULL;
		}
	}
	memset(&attr, 0, sizeof(attr));
	attr.qp_context = ax->qp_context;
	attr.send_cq = ax->send_cq;
	attr.recv_cq = ax->recv_cq;
	attr.srq = ax->srq;
	attr.cap = ax->cap;
	attr.qp_type = ax->qp_type;
	attr.sq_sig_all = ax->sq_sig_all;
	ibqp = snaa_create_qp_ureq(ax->pd, &attr, NULL, NULL);
	if (!ibqp)
		return NULL;
	ax->cap = attr.cap;
	if (!ops)
		return ibqp;

	qp = snaa_qp(ibqp);
	qp->wrb = calloc(1, sizeof(*qp->wrb));
	if (!qp->wrb) {
		err = ENOMEM;
		goto err_destroy;
	}
	qp->wrb->ops = ops;
	qpx = &qp->vqp.qp_ex;
	qpx->wr_start = snaa_wr_start;
	qpx->wr_complete = snaa_wr_complete;
	qpx->wr_abort = snaa_wr_abort;
	qpx->wr_send = snaa_wr_send;
	qpx->wr_send_imm = snaa_wr_send_imm;
	qpx->wr_rdma_write = snaa_wr_rdma_write;
	qpx->wr_rdma_write_imm = snaa_wr_rdma_write_imm;
	qpx->wr_rdma_read = snaa_wr_rdma_read;
	qpx->wr_atomic_cmp_swp = snaa_wr_atomic_cmp_swp;
	qpx->wr_atomic_fetch_add = snaa_wr_atomic_fetch_add;
	qpx->wr_bind_mw = snaa_wr_bind_mw;
	qpx->wr_local_inv = snaa_wr_local_inv;
	qpx->wr_send_inv = snaa_wr_send_inv;
	qpx->wr_set_ud_addr = snaa_wr_set_ud_addr;
	qpx->wr_set_sge = snaa_wr_set_sge;
	qpx->wr_set_sge_list = snaa_wr_set_sge_list;
	qpx->wr_set_inline_data = snaa_wr_set_inline_data;
	qpx->wr_set_inline_data_list = snaa_wr_set_inline_data_list;
	/* ibv_qp_to_qp_ex() now returns &qp->vqp.qp_ex */
	qp->vqp.comp_mask |= VERBS_QP_EX;
	return ibqp;

err_destroy:
	snaa_destroy_qp(ibqp);
	errno = err;
	return NULL;
}

static int snaa_destroy_qp(struct ibv_qp *ibqp)
{
	struct snaa_qp *qp = snaa_qp(ibqp);
	int ret;

	ret = ibv_cmd_destroy_qp(ibqp);
	if (ret)
		return ret;
	snaa_wcu_unmap(qp);
	free(qp->wrb);
	snaa_wq_unmap(&qp->sq);
	snaa_wq_unmap(&qp->rq);
	pthread_spin_destroy(&qp->sq.lock);
	pthread_spin_destroy(&qp->rq.lock);
	free(qp);
	return 0;
}

static int snaa_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
			  int attr_mask)
{
	struct ibv_modify_qp cmd;
	int ret;

	memset(&cmd, 0, sizeof(cmd));
	ret = ibv_cmd_modify_qp(ibqp, attr, attr_mask, &cmd, sizeof(cmd));
	if (!ret && (attr_mask & IBV_QP_STATE))
		snaa_qp(ibqp)->state = attr->qp_state;
	return ret;
}

static int snaa_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
			 int attr_mask, struct ibv_qp_init_attr *init_attr)
{
	struct ibv_query_qp cmd;
	int ret;

	memset(&cmd, 0, sizeof(cmd));
	ret = ibv_cmd_query_qp(ibqp, attr, attr_mask, init_attr, &cmd,
			       sizeof(cmd));
	if (!ret && (attr_mask & IBV_QP_STATE))
		snaa_qp(ibqp)->state = attr->qp_state;
	return ret;
}

/*
 * post_send/post_recv: post under the queue's lock, then, if anything
 * was posted and the kernel has marked the ring idle, ring the doorbell
 * (outside the lock: every poster does its own barrier-and-check, so a
 * second thread's entries are never stranded).  If the doorbell fails,
 * the kernel cannot be told about the WRs of this call (the device is
 * gone, or the QP): its errno is returned with *bad_wr at the first of
 * them, so the caller treats none of them as posted.
 */
static int snaa_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
			  struct ibv_send_wr **bad_wr)
{
	struct snaa_qp *qp = snaa_qp(ibqp);
	unsigned int posted;
	int err, db_err;

	err = snaa_sq_refuses(qp);
	if (err) {
		if (!wr)
			return 0;
		*bad_wr = wr;
		return err;
	}

	pthread_spin_lock(&qp->sq.lock);
	err = snaa_sq_post(&qp->sq.q, &qp->sq_caps, wr, bad_wr, &posted);
	pthread_spin_unlock(&qp->sq.lock);

	if (posted) {
		db_err = snaa_sq_kick(qp);
		if (db_err) {
			*bad_wr = wr;
			err = db_err;
		}
	}
	return err;
}

/*
 * ibv_bind_mw() (type 1 windows; libibverbs has checked the type, the
 * MR's PD and that no range is given without an MR): a BIND_MW WR that
 * gives the window the next R_Key, posted as post_send would.  The
 * window takes the new key once the WR is posted; the bind itself
 * happens when the kernel executes it, in SQ order.
 */
static int snaa_bind_mw(struct ibv_qp *ibqp, struct ibv_mw *mw,
			struct ibv_mw_bind *mw_bind)
{
	struct snaa_qp *qp = snaa_qp(ibqp);
	struct ibv_send_wr wr;
	int err;

	err = snaa_sq_refuses(qp);
	if (err)
		return err;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = mw_bind->wr_id;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = mw_bind->send_flags;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info = mw_bind->bind_info;

	pthread_spin_lock(&qp->sq.lock);
	err = snaa_sq_post_bind(&qp->sq.q, &qp->sq_caps, &wr);
	pthread_spin_unlock(&qp->sq.lock);
	if (!err)
		err = snaa_sq_kick(qp);
	if (!err)
		mw->rkey = wr.bind_mw.rkey;
	return err;
}

static int snaa_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
			  struct ibv_recv_wr **bad_wr)
{
	struct snaa_qp *qp = snaa_qp(ibqp);
	unsigned int posted;
	int err, db_err;

	if (!qp->rq.q.ring || qp->state == IBV_QPS_RESET) {
		if (!wr)
			return 0;
		*bad_wr = wr;
		/* an SRQ takes the receives; else no receive WRs granted */
		return ibqp->srq || qp->rq.q.ring ? EINVAL : ENOMEM;
	}

	pthread_spin_lock(&qp->rq.lock);
	err = snaa_rq_post(&qp->rq.q, qp->rq.max_sge, wr, bad_wr, &posted);
	pthread_spin_unlock(&qp->rq.lock);

	/* The kernel marks the RQ idle when an errored QP needs a flush. */
	if (posted && snaa_ring_needs_doorbell(qp->rq.q.ring)) {
		db_err = snaa_ring_doorbell(ibqp, &qp->rq_db, "RQ");
		if (db_err) {
			*bad_wr = wr;
			err = db_err;
		}
	}
	return err;
}

/* ------------------------------------------------------------------ */
/* Shared receive queues                                               */
/* ------------------------------------------------------------------ */

static inline struct snaa_srq *snaa_srq(struct ibv_srq *ibsrq)
{
	return snaa_container_of(ibsrq, struct snaa_srq, ibv_srq);
}

static struct ibv_srq *snaa_create_srq(struct ibv_pd *ibpd,
				       struct ibv_srq_init_attr *attr)
{
	struct ibv_context *ibctx = ibpd->context;
	struct usnaa_create_srq_resp resp;
	struct usnaa_create_srq cmd;
	struct snaa_uresp_create_srq *drv = &resp.drv_payload;
	struct snaa_srq *srq;
	void *map;
	int ret;

	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return NULL;
	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	ret = ibv_cmd_create_srq(ibpd, &srq->ibv_srq, attr, &cmd.ibv_cmd,
				 sizeof(cmd),
				 &resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_free;
	/* attr->attr now holds what the kernel granted. */
	if (!snaa_ring_geometry_ok(drv->num, drv->stride,
				   drv->ring_size,
				   snaa_rq_min_stride(attr->attr.max_sge)) ||
	    drv->num < attr->attr.max_wr) {
		snaa_ctx_err(ibctx,
			     "kernel returned an SRQ ring of %u entries of size %u in %u bytes for %u WRs: provider/kernel ABI mismatch",
			     drv->num, drv->stride, drv->ring_size,
			     attr->attr.max_wr);
		ret = EPROTO;
		goto err_destroy;
	}
	map = snaa_map_ring(ibctx, "SRQ", drv->srq_key,
			    drv->ring_size);
	if (!map) {
		ret = errno;
		goto err_destroy;
	}
	pthread_spin_init(&srq->rq.lock, PTHREAD_PROCESS_PRIVATE);
	snaa_queue_init(&srq->rq.q, map, drv->num, drv->stride,
			attr->attr.max_wr, true);
	srq->rq.map = map;
	srq->rq.map_len = drv->ring_size;
	srq->rq.max_sge = attr->attr.max_sge;
	return &srq->ibv_srq;

err_destroy:
	if (ibv_cmd_destroy_srq(&srq->ibv_srq))
		snaa_ctx_err(ibctx, "could not destroy the rejected SRQ");
err_free:
	free(srq);
	errno = ret;
	return NULL;
}

static int snaa_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
			   int mask)
{
	struct ibv_modify_srq cmd;

	memset(&cmd, 0, sizeof(cmd));
	return ibv_cmd_modify_srq(ibsrq, attr, mask, &cmd, sizeof(cmd));
}

static int snaa_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
	struct ibv_query_srq cmd;

	memset(&cmd, 0, sizeof(cmd));
	return ibv_cmd_query_srq(ibsrq, attr, &cmd, sizeof(cmd));
}

static int snaa_destroy_srq(struct ibv_srq *ibsrq)
{
	struct snaa_srq *srq = snaa_srq(ibsrq);
	int ret;

	ret = ibv_cmd_destroy_srq(ibsrq);
	if (ret)
		return ret;
	snaa_wq_unmap(&srq->rq);
	pthread_spin_destroy(&srq->rq.lock);
	free(srq);
	return 0;
}

/* The kernel takes SRQ entries as messages arrive: no doorbell. */
static int snaa_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
			      struct ibv_recv_wr **bad_wr)
{
	struct snaa_srq *srq = snaa_srq(ibsrq);
	unsigned int posted;
	int err;

	pthread_spin_lock(&srq->rq.lock);
	err = snaa_rq_post(&srq->rq.q, srq->rq.max_sge, wr, bad_wr, &posted);
	pthread_spin_unlock(&srq->rq.lock);
	return err;
}

/* Keep sorted, like struct verbs_context_ops. */
static const struct verbs_context_ops snaa_context_ops = {
	.alloc_mw = snaa_alloc_mw,
	.alloc_pd = snaa_alloc_pd,
	.bind_mw = snaa_bind_mw,
	.create_ah = snaa_create_ah,
	.create_cq = snaa_create_cq,
	.create_cq_ex = snaa_create_cq_ex,
	.create_qp = snaa_create_qp,
	.create_qp_ex = snaa_create_qp_ex,
	.create_srq = snaa_create_srq,
	.dealloc_mw = snaa_dealloc_mw,
	.dealloc_pd = snaa_dealloc_pd,
	.dereg_mr = snaa_dereg_mr,
	.destroy_ah = snaa_destroy_ah,
	.destroy_cq = snaa_destroy_cq,
	.destroy_qp = snaa_destroy_qp,
	.destroy_srq = snaa_destroy_srq,
	.free_context = snaa_free_context,
	.modify_qp = snaa_modify_qp,
	.modify_srq = snaa_modify_srq,
	.poll_cq = snaa_poll_cq,
	.post_recv = snaa_post_recv,
	.post_send = snaa_post_send,
	.post_srq_recv = snaa_post_srq_recv,
	.query_device_ex = snaa_query_device_ex,
	.query_port = snaa_query_port,
	.query_qp = snaa_query_qp,
	.query_srq = snaa_query_srq,
	.reg_mr = snaa_reg_mr,
	.req_notify_cq = snaa_req_notify_cq,
	.resize_cq = snaa_resize_cq,
};

static struct verbs_context *snaa_alloc_context(struct ibv_device *ibdev,
						int cmd_fd,
						void *private_data)
{
	struct usnaa_alloc_context_resp resp;
	struct usnaa_alloc_context cmd;
	struct snaa_uresp_alloc_ctx *drv = &resp.drv_payload;
	struct snaa_context *ctx;
	int ret;

	(void)private_data;

	/*
	 * The driver id must be the kernel's ib_device_ops.driver_id: snaa
	 * is out of tree and has none, i.e. RDMA_DRIVER_UNKNOWN.
	 */
	ctx = verbs_init_and_alloc_context(ibdev, cmd_fd, ctx, ibv_ctx,
					   RDMA_DRIVER_UNKNOWN);
	if (!ctx)
		return NULL;	/* cmd_fd closed, errno set */

	/*
	 * Cheap run-time guard: libibverbs records its own
	 * sizeof(struct verbs_context) here.  A mismatch means the library
	 * is not the ABI this provider was built for.
	 */
	if (ctx->ibv_ctx.sz != sizeof(struct verbs_context)) {
		snaa_err(&ctx->ibv_ctx,
			 "libibverbs verbs_context is %zu bytes, provider built for %zu",
			 ctx->ibv_ctx.sz, sizeof(struct verbs_context));
		ret = EPROTO;
		goto err_uninit;
	}
	ret = snaa_check_libibverbs(&ctx->ibv_ctx);
	if (ret)
		goto err_uninit;

	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	/* From private ABI 57 on, with the fds to pass to the kernel. */
#if IBVERBS_PABI_VERSION >= 57
	ret = ibv_cmd_get_context(&ctx->ibv_ctx, &cmd.ibv_cmd, sizeof(cmd),
				  NULL, &resp.ibv_resp, sizeof(resp));
#else
	ret = ibv_cmd_get_context(&ctx->ibv_ctx, &cmd.ibv_cmd, sizeof(cmd),
				  &resp.ibv_resp, sizeof(resp));
#endif
	if (ret) {
		snaa_err(&ctx->ibv_ctx, "get_context failed: %s",
			 strerror(ret));
		goto err_uninit;
	}

	if (!drv->abi_version) {
		snaa_err(&ctx->ibv_ctx,
			 "kernel driver returned no snaa get_context response (provider needs ABI %u)",
			 SNAA_ABI_VERSION);
		ret = EPROTO;
		goto err_uninit;
	}
	if (drv->abi_version != SNAA_ABI_VERSION) {
		snaa_err(&ctx->ibv_ctx,
			 "kernel driver speaks snaa ABI %u, provider needs %u; rebuild libsnaa or snaa.ko so they match",
			 drv->abi_version, SNAA_ABI_VERSION);
		ret = EPROTO;
		goto err_uninit;
	}
	ctx->dev_id = drv->dev_id;

	verbs_set_ops(&ctx->ibv_ctx, &snaa_context_ops);

	return &ctx->ibv_ctx;

err_uninit:
	/* Closes cmd_fd (and async_fd) and drops the device reference. */
	verbs_uninit_context(&ctx->ibv_ctx);
	free(ctx);
	errno = ret;
	return NULL;
}

static struct verbs_device *snaa_device_alloc(struct verbs_sysfs_dev *sysfs)
{
	struct snaa_device *dev;

	(void)sysfs;

	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return NULL;

	return &dev->ibv_dev;
}

static void snaa_device_free(struct verbs_device *vdev)
{
	free(snaa_container_of(vdev, struct snaa_device, ibv_dev));
}

/*
 * Match by the modalias of the ib_device's parent (the "snaa" platform
 * device), i.e. /sys/class/infiniband/<dev>/device/modalias, never by
 * the RDMA device name.
 */
static const struct verbs_match_ent snaa_match_table[] = {
	VERBS_MODALIAS_MATCH(SNAA_MODALIAS, NULL),
	{},
};

static const struct verbs_device_ops snaa_dev_ops = {
	.name = "snaa",
	.match_min_abi_version = SNAA_ABI_VERSION,
	.match_max_abi_version = SNAA_ABI_VERSION,
	.match_table = snaa_match_table,
	.alloc_device = snaa_device_alloc,
	.uninit_device = snaa_device_free,
	.alloc_context = snaa_alloc_context,
};

/* ------------------------------------------------------------------ */
/* Direct verbs (snaadv.h)                                             */
/* ------------------------------------------------------------------ */

/* What libsnaa.so.1 exports: libsnaa.map. */

bool snaadv_is_supported(struct ibv_context *ctx)
{
	return ctx && ctx->ops.post_send == snaa_post_send;
}

struct ibv_qp *snaadv_create_qp(struct ibv_pd *pd,
				struct ibv_qp_init_attr *attr,
				const struct snaadv_qp_init_attr *dv)
{
	const struct snaadv_wcubuf_attr *wa = NULL;
	struct snaa_ureq_create_qp ureq = { 0 };
	uintptr_t ring, mr_start;

	if (!pd || !attr || !dv) {
		errno = EINVAL;
		return NULL;
	}
	if (!snaadv_is_supported(pd->context)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (dv->comp_mask & ~(uint32_t)(SNAADV_QP_INIT_QPN |
					SNAADV_QP_INIT_WCUBUF)) {
		errno = EINVAL;
		return NULL;
	}
	if (dv->comp_mask & SNAADV_QP_INIT_QPN) {
		ureq.flags |= SNAA_QP_F_FIXED_QPN;
		ureq.qpn = dv->qpn;
	}
	if (dv->comp_mask & SNAADV_QP_INIT_WCUBUF) {
		wa = &dv->wcubuf;
		if (attr->qp_type != IBV_QPT_UC || !wa->mr || !wa->ring ||
		    !wa->frame_size || wa->ring_size % wa->frame_size ||
		    wa->mr->pd != pd) {
			errno = EINVAL;
			return NULL;
		}
		/* The ring must lie in the MR: the kernel checks it too. */
		ring = (uintptr_t)wa->ring;
		mr_start = (uintptr_t)wa->mr->addr;
		if (ring < mr_start || ring - mr_start > wa->mr->length ||
		    wa->ring_size > wa->mr->length - (ring - mr_start)) {
			errno = EINVAL;
			return NULL;
		}
		ureq.flags |= SNAA_QP_F_WCUBUF;
		ureq.ring_addr = ring;
		ureq.ring_size = wa->ring_size;
		ureq.va_base = wa->va_base;
		ureq.ring_lkey = wa->mr->lkey;
		ureq.frame_size = wa->frame_size;
	}
	return snaa_create_qp_ureq(pd, attr, &ureq, wa);
}

static struct snaa_wcu *snaadv_wcu(struct ibv_qp *ibqp)
{
	if (!ibqp || !snaadv_is_supported(ibqp->context))
		return NULL;
	return snaa_qp(ibqp)->wcu;
}

uint32_t snaadv_wcubuf_rkey(struct ibv_qp *ibqp)
{
	struct snaa_wcu *w = snaadv_wcu(ibqp);

	return w ? w->rkey : 0;
}

/* Frames delivered from our read pointer on. */
static uint64_t snaa_wcu_ready(struct snaa_wcu *w)
{
	uint64_t dp = __atomic_load_n(&w->ctrl->dp, __ATOMIC_ACQUIRE);

	return (dp - w->rp) / w->frame_size;
}

int snaadv_wcubuf_peek(struct ibv_qp *ibqp,
				     struct snaadv_wcubuf_frame *frames,
				     int max)
{
	struct snaa_wcu *w = snaadv_wcu(ibqp);
	uint64_t n, i;
	uint32_t slot, len;

	if (!w || max <= 0)
		return 0;
	n = snaa_wcu_ready(w);
	/* never more than a ring: the kernel cannot have delivered more */
	if (n > w->nslots)
		n = 0;
	if (n > (uint64_t)max)
		n = (uint64_t)max;
	slot = w->rp_slot;
	for (i = 0; i < n; i++) {
		len = w->ctrl->len[slot];
		frames[i].va = w->rp + i * w->frame_size;
		frames[i].length = len <= w->frame_size ? len : w->frame_size;
		frames[i].data = w->ring + (uint64_t)slot * w->frame_size;
		slot = slot + 1 == w->nslots ? 0 : slot + 1;
	}
	return (int)n;
}

void snaadv_wcubuf_consume(struct ibv_qp *ibqp, int n)
{
	struct snaa_wcu *w = snaadv_wcu(ibqp);
	uint64_t ready;

	if (!w || n <= 0)
		return;
	ready = snaa_wcu_ready(w);
	if ((uint64_t)n > ready)
		n = (int)ready;
	w->rp += (uint64_t)n * w->frame_size;
	w->rp_slot = (uint32_t)((w->rp_slot + (uint64_t)n) % w->nslots);
	/* Our reads of the frames come before the kernel may reuse them. */
	__atomic_store_n(&w->ctrl->rp, w->rp, __ATOMIC_RELEASE);
}

int snaadv_wcubuf_query(struct ibv_qp *ibqp,
				      struct snaadv_wcubuf_stats *st)
{
	struct snaa_wcu *w = snaadv_wcu(ibqp);
	const volatile struct snaa_wcubuf_ctrl *c;
	int i;

	if (!st)
		return EINVAL;
	if (!w)
		return ibqp && snaadv_is_supported(ibqp->context) ? EINVAL :
								    EOPNOTSUPP;
	c = w->ctrl;
	st->acks = c->acks;
	st->bytes = c->bytes;
	st->duplicates = c->duplicates;
	st->nacks = c->nacks;
	for (i = 0; i < SNAADV_WCUBUF_EV_NUM; i++)
		st->nack_events[i] = c->nack_events[i];
	st->read_ptr = w->rp;
	st->delivered_ptr = __atomic_load_n(&w->ctrl->dp, __ATOMIC_ACQUIRE);
	return 0;
}

PROVIDER_DRIVER(snaa, snaa_dev_ops);
