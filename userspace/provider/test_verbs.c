// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_verbs: host test of the provider's verbs (snaa.c) through the
 * libibverbs of the rdma-core tree it is built in (CMakeLists.txt),
 * against a fake kernel.  KTAP; exit 0 iff all checks pass.
 *
 *   ./test_verbs /abs/path/libsnaa-rdmavNN.so
 *
 * This executable exports stand-ins for the ibv_cmd_* helpers the
 * provider imports (SNAA_TEST_VERBS_EXPORTS in CMakeLists.txt): a
 * versioned reference binds to an unversioned definition in the
 * executable, which comes first in the global scope, so they play the
 * kernel.  The context is
 * opened on a memfd instead of /dev/infiniband/uverbsN: the provider
 * mmap()s its rings from it at the keys the fake kernel hands out (the
 * test maps the same pages as the kernel's view); anything the provider
 * write()s to it lands at a known file offset, where the tests check
 * that no doorbell is ever written.  Everything else (ibv_create_cq,
 * ibv_poll_cq, ibv_post_send, ibv_dereg_mr, ...) is the real libibverbs.
 *
 * The doorbells, SQ and RQ, are one ioctl (SNAA_IB_METHOD_QP_DOORBELL):
 * the ioctl() this executable exports catches it on the memfd and
 * answers as the test says.  The resize_cq command layout is compared
 * with what libibverbs itself writes (its ibv_cmd_resize_cq) on a pipe.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <infiniband/driver.h>
#include <infiniband/kern-abi.h>
#include <rdma/rdma_user_ioctl.h>
#include <rdma/snaa-abi.h>

#include "ktap.h"		/* tests/lib/ */
#include "test_vlog.h"

#define NUM_TESTS	54

/* The symbol version of libibverbs' private interface. */
#define PABI_STR2(n)	#n
#define PABI_STR(n)	PABI_STR2(n)
#define IBVERBS_PRIVATE	"IBVERBS_PRIVATE_" PABI_STR(IBVERBS_PABI_VERSION)


/* ------------------------------------------------------------------ */
/* Fake kernel: memory                                                 */
/* ------------------------------------------------------------------ */

#define PAGE		4096u
#define FD_SIZE		(8u << 20)
#define DB_OFF		(7u << 20)	/* write()s land here */

static int memfd = -1;
static ino_t memfd_ino;
static uint64_t next_key = PAGE;

static size_t page_up(size_t len)
{
	return (len + PAGE - 1) & ~(size_t)(PAGE - 1);
}

/* A zeroed ring area; a free page after it keeps VMAs from merging. */
static uint64_t k_alloc(size_t len)
{
	uint64_t key = next_key;
	static const char zero[PAGE];
	size_t off;

	next_key += page_up(len) + PAGE;
	if (next_key > DB_OFF) {
		fprintf(stderr, "fake kernel: out of ring space\n");
		exit(1);
	}
	for (off = 0; off < page_up(len); off += PAGE)
		if (pwrite(memfd, zero, PAGE, (off_t)(key + off)) != PAGE)
			exit(1);
	return key;
}

/* The kernel's view of a ring (its own mapping of the same pages). */
static void *k_view(uint64_t key, size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, memfd,
		       (off_t)key);

	if (p == MAP_FAILED) {
		perror("fake kernel mmap");
		exit(1);
	}
	return p;
}

/*
 * Mappings of the memfd at file offset @key, from /proc/self/maps; the
 * length of the last one in *len.
 */
static int count_maps(uint64_t key, size_t *len)
{
	unsigned long lo, hi, off, ino;
	char line[512];
	FILE *f;
	int n = 0;

	f = fopen("/proc/self/maps", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx %*s %lx %*s %lu", &lo, &hi, &off,
			   &ino) == 4 &&
		    ino == memfd_ino && off == key) {
			n++;
			if (len)
				*len = hi - lo;
		}
	fclose(f);
	return n;
}

/* Bytes the provider wrote since db_reset(): never a doorbell. */
static void db_reset(void)
{
	lseek(memfd, DB_OFF, SEEK_SET);
}

static size_t db_written(void *buf, size_t len)
{
	off_t end = lseek(memfd, 0, SEEK_CUR);
	size_t n = (size_t)(end - DB_OFF);

	if (buf && n)
		pread(memfd, buf, n < len ? n : len, DB_OFF);
	return n;
}

/*
 * Doorbell ioctls on the fake uverbs file: the last one's bytes, how
 * many came, and the errno to fail them with (0: succeed).  Other
 * ioctls on it fail with ENOTTY, as on the bare memfd.
 */
static struct {
	struct ib_uverbs_ioctl_hdr hdr;
	struct ib_uverbs_attr attr[2];
} ioc;
static unsigned int ioc_calls;
static int ioc_err;

static ino_t fd_ino(int fd)
{
	struct stat st;

	return fstat(fd, &st) ? 0 : st.st_ino;
}

/* The fake uverbs file: the memfd, or a dup of it (second contexts). */
static int is_uverbs_fd(int fd)
{
	return fd == memfd || (fd >= 0 && fd_ino(fd) == memfd_ino);
}

int ioctl(int fd, unsigned long req, ...)
{
	static int (*real)(int, unsigned long, ...);
	const struct ib_uverbs_ioctl_hdr *hdr;
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (!is_uverbs_fd(fd) || req != RDMA_VERBS_IOCTL) {
		if (!real)
			real = (int (*)(int, unsigned long, ...))
				dlsym(RTLD_NEXT, "ioctl");
		return real(fd, req, arg);
	}
	hdr = arg;
	if (hdr->object_id != UVERBS_OBJECT_DEVICE ||
	    hdr->method_id != SNAA_IB_METHOD_QP_DOORBELL) {
		/* libibverbs' own ioctls: what the memfd answers */
		errno = ENOTTY;
		return -1;
	}
	ioc_calls++;
	memset(&ioc, 0, sizeof(ioc));
	memcpy(&ioc, arg, hdr->length < sizeof(ioc) ? hdr->length :
						       sizeof(ioc));
	if (ioc_err) {
		errno = ioc_err;
		return -1;
	}
	return 0;
}

/*
 * Exactly one well-formed doorbell ioctl for queue @rq (0: SQ) of @qp
 * came since @calls0, nothing was written.
 */
static int one_doorbell(struct ibv_qp *qp, int rq, unsigned int calls0)
{
	uint32_t word, want = qp->qp_num | (rq ? SNAA_DOORBELL_RQ : 0);

	memcpy(&word, &ioc.attr[0].data, sizeof(word));
	if (ioc_calls - calls0 == 1 && !db_written(NULL, 0) &&
	    ioc.hdr.length == sizeof(ioc.hdr) + sizeof(ioc.attr[0]) &&
	    ioc.hdr.object_id == UVERBS_OBJECT_DEVICE &&
	    ioc.hdr.method_id == SNAA_IB_METHOD_QP_DOORBELL &&
	    ioc.hdr.num_attrs == 1 && ioc.hdr.driver_id == RDMA_DRIVER_UNKNOWN &&
	    ioc.attr[0].attr_id == SNAA_IB_ATTR_DOORBELL &&
	    ioc.attr[0].len == sizeof(word) &&
	    ioc.attr[0].flags == UVERBS_ATTR_F_MANDATORY && word == want)
		return 1;
	diag("%s doorbell: %u ioctls, %zu bytes written; object %u method %#x, %u attrs, attr %#x len %u flags %#x, word %#x (want %#x)",
	     rq ? "RQ" : "SQ", ioc_calls - calls0, db_written(NULL, 0),
	     ioc.hdr.object_id, ioc.hdr.method_id, ioc.hdr.num_attrs,
	     ioc.attr[0].attr_id, ioc.attr[0].len, ioc.attr[0].flags, word,
	     want);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Stand-ins for libibverbs (exported, see Makefile)                   */
/* ------------------------------------------------------------------ */

static const struct verbs_device_ops *reg_ops;

/* verbs_register_driver_<IBVERBS_PABI_VERSION> (driver.h) */
void verbs_register_driver(const struct verbs_device_ops *ops)
{
	reg_ops = ops;
}

/*
 * The real verbs_set_ops(), keeping the provider's table: the context is
 * opened without verbs_open_device(), so what that adds (set_lib_ops:
 * ibv_create_cq_ex's entry point) is added here, see lib_create_cq_ex().
 */
static const struct verbs_context_ops *set_ops;

typedef void (*set_ops_fn)(struct verbs_context *,
			   const struct verbs_context_ops *);

void verbs_set_ops(struct verbs_context *vctx,
		   const struct verbs_context_ops *ops)
{
	set_ops_fn real = (set_ops_fn)dlvsym(RTLD_NEXT, "verbs_set_ops",
					     IBVERBS_PRIVATE);

	set_ops = ops;
	if (real)
		real(vctx, ops);
}

static struct ibv_cq_ex *lib_create_cq_ex(struct ibv_context *ctx,
					  struct ibv_cq_init_attr_ex *attr)
{
	return set_ops->create_cq_ex(ctx, attr);
}

/* From private ABI 57 on with the fds to pass, as the provider calls it. */
#if IBVERBS_PABI_VERSION >= 57
int ibv_cmd_get_context(struct verbs_context *vctx,
			struct ibv_get_context *cmd, size_t cmd_size,
			struct ibv_fd_arr *fds,
			struct ib_uverbs_get_context_resp *resp,
			size_t resp_size)
#else
int ibv_cmd_get_context(struct verbs_context *vctx,
			struct ibv_get_context *cmd, size_t cmd_size,
			struct ib_uverbs_get_context_resp *resp,
			size_t resp_size)
#endif
{
	struct snaa_uresp_alloc_ctx *drv = (void *)(resp + 1);

	(void)vctx;
	(void)cmd;
	(void)cmd_size;
#if IBVERBS_PABI_VERSION >= 57
	if (fds)
		return EINVAL;
#endif
	if (resp_size >= sizeof(*resp) + sizeof(*drv)) {
		drv->abi_version = SNAA_ABI_VERSION;
		drv->dev_id = 3;
	}
	return 0;
}

/* What the last helper call saw, and what the next one should do. */
static struct {
	const char *name;	/* helper last called */
	int calls;
	size_t cmd_size, resp_size;
	uint32_t handle;	/* object handle it was called for */
	int arg;		/* solicited_only, attr_mask, cqe, ... */
	int ret;		/* next call: return this (positive errno) */
	int mode;		/* next create: which response */
} k;

static uint32_t next_handle = 0x100;

static void k_call(const char *name, size_t cmd_size, size_t resp_size,
		   uint32_t handle)
{
	k.name = name;
	k.calls++;
	k.cmd_size = cmd_size;
	k.resp_size = resp_size;
	k.handle = handle;
}

static void k_reset(void)
{
	memset(&k, 0, sizeof(k));
}

int ibv_cmd_alloc_pd(struct ibv_context *ctx, struct ibv_pd *pd,
		     struct ibv_alloc_pd *cmd, size_t cmd_size,
		     struct ib_uverbs_alloc_pd_resp *resp, size_t resp_size)
{
	(void)cmd;
	k_call("alloc_pd", cmd_size, resp_size, 0);
	if (k.ret)
		return k.ret;
	pd->context = ctx;
	pd->handle = resp->pd_handle = next_handle++;
	return 0;
}

int ibv_cmd_dealloc_pd(struct ibv_pd *pd)
{
	k_call("dealloc_pd", 0, 0, pd->handle);
	return k.ret;
}

static struct {
	void *addr;
	size_t length;
	uint64_t hca_va;
	int access;
	struct verbs_mr *vmr;
} kmr;

int ibv_cmd_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
		   uint64_t hca_va, int access, struct verbs_mr *vmr,
		   struct ibv_reg_mr *cmd, size_t cmd_size,
		   struct ib_uverbs_reg_mr_resp *resp, size_t resp_size)
{
	(void)cmd;
	k_call("reg_mr", cmd_size, resp_size, pd->handle);
	kmr.addr = addr;
	kmr.length = length;
	kmr.hca_va = hca_va;
	kmr.access = access;
	kmr.vmr = vmr;
	if (k.ret)
		return k.ret;
	vmr->ibv_mr.context = pd->context;
	vmr->ibv_mr.handle = resp->mr_handle = next_handle++;
	vmr->ibv_mr.lkey = resp->lkey = 0x1000 + vmr->ibv_mr.handle;
	vmr->ibv_mr.rkey = resp->rkey = 0x2000 + vmr->ibv_mr.handle;
	vmr->mr_type = IBV_MR_TYPE_MR;
	vmr->access = access;
	return 0;
}

int ibv_cmd_dereg_mr(struct verbs_mr *vmr)
{
	k_call("dereg_mr", 0, 0, vmr->ibv_mr.handle);
	kmr.vmr = vmr;
	return k.ret;
}

/* CQ response variants */
enum {
	CQ_GOOD, CQ_NUM_NOT_POW2, CQ_CQE_SIZE, CQ_SHORT_RING, CQ_NO_UDATA,
	CQ_BAD_KEY, CQ_BAD_INDICES, CQ_TOO_SMALL,
};

/* The fake kernel's CQ (one at a time is enough here). */
static struct {
	uint64_t key;
	uint32_t num, ring_size;
	struct snaa_ring *ring;		/* kernel view */
} kcq;

static uint32_t pow2_at_least(uint32_t x)
{
	uint32_t p = 1;

	while (p < x)
		p <<= 1;
	return p;
}

static void kcq_setup(uint32_t num, uint32_t start)
{
	kcq.num = num;
	kcq.ring_size = sizeof(struct snaa_ring) + num * sizeof(struct snaa_cqe);
	kcq.key = k_alloc(kcq.ring_size);
	kcq.ring = k_view(kcq.key, kcq.ring_size);
	kcq.ring->producer = start;
	kcq.ring->consumer = start;
}

static void kcq_complete(uint64_t wr_id, uint32_t byte_len)
{
	struct snaa_cqe *e = (struct snaa_cqe *)(kcq.ring + 1) +
			     (kcq.ring->producer & (kcq.num - 1));

	memset(e, 0, sizeof(*e));
	e->wr_id = wr_id;
	e->byte_len = byte_len;
	e->qp_num = 0x42;
	e->opcode = IBV_WC_RECV;
	e->status = IBV_WC_SUCCESS;
	e->wc_flags = SNAA_WC_WITH_IMM;
	e->imm_data = 0x11223344;
	__atomic_store_n(&kcq.ring->producer, kcq.ring->producer + 1,
			 __ATOMIC_RELEASE);
}

int ibv_cmd_create_cq(struct ibv_context *ctx, int cqe,
		      struct ibv_comp_channel *channel, int comp_vector,
		      struct ibv_cq *cq, struct ibv_create_cq *cmd,
		      size_t cmd_size, struct ib_uverbs_create_cq_resp *resp,
		      size_t resp_size)
{
	struct snaa_uresp_create_cq *drv = (void *)(resp + 1);

	(void)channel;
	(void)comp_vector;
	(void)cmd;
	k_call("create_cq", cmd_size, resp_size, 0);
	k.arg = cqe;
	if (k.ret)
		return k.ret;
	cq->context = ctx;
	cq->handle = resp->cq_handle = next_handle++;
	cq->cqe = cqe;
	resp->cqe = (uint32_t)cqe;
	kcq_setup(pow2_at_least((uint32_t)cqe + 1), 0);
	if (resp_size < sizeof(*resp) + sizeof(*drv) || k.mode == CQ_NO_UDATA)
		return 0;
	drv->cq_key = kcq.key;
	drv->num_cqe = kcq.num;
	drv->cqe_size = sizeof(struct snaa_cqe);
	drv->ring_size = kcq.ring_size;
	switch (k.mode) {
	case CQ_NUM_NOT_POW2:
		drv->num_cqe = 3;
		break;
	case CQ_CQE_SIZE:
		drv->cqe_size = 24;
		break;
	case CQ_SHORT_RING:
		drv->ring_size--;
		break;
	case CQ_BAD_KEY:
		drv->cq_key = 1;	/* not page aligned: mmap fails */
		break;
	case CQ_BAD_INDICES:
		kcq.ring->producer = kcq.num + 1;
		break;
	case CQ_TOO_SMALL:
		resp->cqe = kcq.num + 1;
		break;
	}
	return 0;
}

int ibv_cmd_destroy_cq(struct ibv_cq *cq)
{
	k_call("destroy_cq", 0, 0, cq->handle);
	return k.ret;
}

int ibv_cmd_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	k_call("req_notify_cq", 0, 0, cq->handle);
	k.arg = solicited_only;
	return k.ret;
}

/* What libibverbs' own ibv_cmd_resize_cq wrote for the provider's call. */
static struct {
	int checked, ok;
	uint64_t old_key;
	uint32_t consumer;
} kresize;

enum { RESIZE_GOOD, RESIZE_BAD_RING };

typedef int (*resize_fn)(struct ibv_cq *, int, struct ibv_resize_cq *,
			 size_t, struct ib_uverbs_resize_cq_resp *, size_t);

/*
 * Run the real ibv_cmd_resize_cq on a pipe and check the bytes against
 * struct ibv_resize_cq as kern-abi.h declares it.
 */
static int check_real_resize(struct ibv_cq *cq, int cqe,
			     struct ibv_resize_cq *cmd, size_t cmd_size,
			     struct ib_uverbs_resize_cq_resp *resp,
			     size_t resp_size)
{
	resize_fn real = (resize_fn)dlvsym(RTLD_NEXT, "ibv_cmd_resize_cq",
					   IBVERBS_PRIVATE);
	struct ib_uverbs_resize_cq_resp saved = *resp;
	unsigned char buf[256];
	struct ibv_resize_cq got;
	int saved_cqe = cq->cqe;
	int pfd[2], fd = cq->context->cmd_fd, ret;
	ssize_t n;

	if (!real || pipe(pfd))
		return 0;
	cq->context->cmd_fd = pfd[1];
	ret = real(cq, cqe, cmd, cmd_size, resp, resp_size);
	cq->context->cmd_fd = fd;
	n = read(pfd[0], buf, sizeof(buf));
	close(pfd[0]);
	close(pfd[1]);
	*resp = saved;
	cq->cqe = saved_cqe;
	if (ret || n != (ssize_t)cmd_size) {
		diag("real ibv_cmd_resize_cq: ret %d, wrote %zd of %zu bytes",
		     ret, n, cmd_size);
		return 0;
	}
	memcpy(&got, buf, sizeof(got));
	if (got.hdr.command != IB_USER_VERBS_CMD_RESIZE_CQ ||
	    got.hdr.in_words != cmd_size / 4 ||
	    got.hdr.out_words != resp_size / 4 ||
	    got.core_payload.response != (uintptr_t)resp ||
	    got.core_payload.cq_handle != cq->handle || got.core_payload.cqe != (uint32_t)cqe) {
		diag("real ibv_cmd_resize_cq wrote command %u in %u out %u response %#llx handle %u cqe %u",
		     got.hdr.command, got.hdr.in_words, got.hdr.out_words,
		     (unsigned long long)got.core_payload.response,
		     got.core_payload.cq_handle, got.core_payload.cqe);
		return 0;
	}
	return 1;
}

int ibv_cmd_resize_cq(struct ibv_cq *cq, int cqe,
		      struct ibv_resize_cq *cmd, size_t cmd_size,
		      struct ib_uverbs_resize_cq_resp *resp, size_t resp_size)
{
	struct snaa_uresp_resize_cq *drv = (void *)(resp + 1);
	struct snaa_ring *old = kcq.ring;
	uint32_t old_num = kcq.num, c, start = 0x7ffffffeu;

	k_call("resize_cq", cmd_size, resp_size, cq->handle);
	k.arg = cqe;
	kresize.checked = 1;
	kresize.ok = check_real_resize(cq, cqe, cmd, cmd_size, resp,
				       resp_size);
	if (k.ret)
		return k.ret;
	/* New ring; move the unpolled CQEs, continue at another index. */
	kresize.old_key = kcq.key;
	kcq_setup(pow2_at_least((uint32_t)cqe + 1), start);
	for (c = old->consumer; c != old->producer; c++) {
		memcpy((struct snaa_cqe *)(kcq.ring + 1) +
		       (kcq.ring->producer & (kcq.num - 1)),
		       (struct snaa_cqe *)(old + 1) + (c & (old_num - 1)),
		       sizeof(struct snaa_cqe));
		kcq.ring->producer++;
	}
	kcq.ring->consumer = 0;	/* the provider must set it */
	kresize.consumer = start;
	resp->cqe = (uint32_t)cqe;
	cq->cqe = cqe;
	if (resp_size < sizeof(*resp) + sizeof(*drv))
		return 0;
	drv->cq_key = kcq.key;
	drv->num_cqe = kcq.num;
	drv->ring_size = kcq.ring_size;
	drv->consumer = start;
	if (k.mode == RESIZE_BAD_RING)
		drv->num_cqe = 6;
	return 0;
}

/* QP response variants */
enum {
	QP_GOOD, QP_SQ_STRIDE, QP_SQ_NUM, QP_QPN, QP_RQ_BAD_KEY,
};

static struct {
	uint64_t sq_key, rq_key;
	uint32_t sq_num, sq_stride, sq_size, rq_num, rq_stride, rq_size;
	struct snaa_ring *sq, *rq;	/* kernel views */
	struct ibv_qp_init_attr attr;	/* as requested */
} kqp;

int ibv_cmd_create_qp(struct ibv_pd *pd, struct ibv_qp *qp,
		      struct ibv_qp_init_attr *attr,
		      struct ibv_create_qp *cmd, size_t cmd_size,
		      struct ib_uverbs_create_qp_resp *resp, size_t resp_size)
{
	struct snaa_uresp_create_qp *drv = (void *)(resp + 1);
	struct ibv_qp_cap *cap = &attr->cap;

	(void)cmd;
	k_call("create_qp", cmd_size, resp_size, pd->handle);
	kqp.attr = *attr;
	if (k.ret)
		return k.ret;
	qp->context = pd->context;
	qp->pd = pd;
	qp->send_cq = attr->send_cq;
	qp->recv_cq = attr->recv_cq;
	qp->srq = attr->srq;
	qp->qp_type = attr->qp_type;
	qp->state = IBV_QPS_RESET;
	qp->handle = resp->qp_handle = next_handle++;
	qp->qp_num = resp->qpn = 0x10000 + qp->handle;
	pthread_mutex_init(&qp->mutex, NULL);
	pthread_cond_init(&qp->cond, NULL);
	/* Grant: WRs rounded up to a power of two, inline at least 48. */
	cap->max_send_wr = pow2_at_least(cap->max_send_wr);
	cap->max_recv_wr = attr->srq ? 0 : pow2_at_least(cap->max_recv_wr);
	if (cap->max_inline_data < 48)
		cap->max_inline_data = 48;
	resp->max_send_wr = cap->max_send_wr;
	resp->max_recv_wr = cap->max_recv_wr;
	resp->max_send_sge = cap->max_send_sge;
	resp->max_recv_sge = cap->max_recv_sge;
	resp->max_inline_data = cap->max_inline_data;

	kqp.sq_num = cap->max_send_wr;
	kqp.sq_stride = pow2_at_least(56 + (16 * cap->max_send_sge >
					    cap->max_inline_data ?
					    16 * cap->max_send_sge :
					    cap->max_inline_data));
	kqp.sq_size = 128 + kqp.sq_num * kqp.sq_stride;
	kqp.sq_key = k_alloc(kqp.sq_size);
	kqp.sq = k_view(kqp.sq_key, kqp.sq_size);
	/* With an SRQ still describe an RQ ring: the provider must ignore it. */
	kqp.rq_num = attr->srq ? 4 : cap->max_recv_wr;
	kqp.rq_stride = kqp.rq_num ?
			pow2_at_least(16 + 16 * cap->max_recv_sge) : 0;
	kqp.rq_size = kqp.rq_num ? 128 + kqp.rq_num * kqp.rq_stride : 0;
	kqp.rq_key = kqp.rq_num ? k_alloc(kqp.rq_size) : 0;
	kqp.rq = kqp.rq_num ? k_view(kqp.rq_key, kqp.rq_size) : NULL;

	drv->sq_key = kqp.sq_key;
	drv->rq_key = kqp.rq_key;
	drv->sq_num = kqp.sq_num;
	drv->sq_stride = kqp.sq_stride;
	drv->sq_ring_size = kqp.sq_size;
	drv->rq_num = kqp.rq_num;
	drv->rq_stride = kqp.rq_stride;
	drv->rq_ring_size = kqp.rq_size;
	drv->qp_num = qp->qp_num;
	switch (k.mode) {
	case QP_SQ_STRIDE:
		drv->sq_stride = 64;	/* < 56 + 48 inline */
		break;
	case QP_SQ_NUM:
		drv->sq_num = cap->max_send_wr / 2;
		break;
	case QP_QPN:
		drv->qp_num++;
		break;
	case QP_RQ_BAD_KEY:
		drv->rq_key = PAGE + 8;
		break;
	}
	return 0;
}

int ibv_cmd_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		      int attr_mask, struct ibv_modify_qp *cmd,
		      size_t cmd_size)
{
	(void)attr;
	(void)cmd;
	k_call("modify_qp", cmd_size, 0, qp->handle);
	k.arg = attr_mask;
	return k.ret;
}

int ibv_cmd_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		     int attr_mask, struct ibv_qp_init_attr *init_attr,
		     struct ibv_query_qp *cmd, size_t cmd_size)
{
	(void)init_attr;
	(void)cmd;
	k_call("query_qp", cmd_size, 0, qp->handle);
	k.arg = attr_mask;
	attr->qp_state = IBV_QPS_RTS;
	return k.ret;
}

int ibv_cmd_destroy_qp(struct ibv_qp *qp)
{
	k_call("destroy_qp", 0, 0, qp->handle);
	return k.ret;
}

int ibv_cmd_create_ah(struct ibv_pd *pd, struct ibv_ah *ah,
		      struct ibv_ah_attr *attr,
		      struct ib_uverbs_create_ah_resp *resp, size_t resp_size)
{
	struct snaa_uresp_create_ah drv = { .ahn = 0x77 };

	k_call("create_ah", 0, resp_size, pd->handle);
	k.arg = attr->dlid;
	if (k.ret)
		return k.ret;
	ah->handle = resp->ah_handle = next_handle++;
	/* The driver's part follows the core's response. */
	if (resp_size >= sizeof(*resp) + sizeof(drv))
		memcpy(resp + 1, &drv, sizeof(drv));
	return 0;
}

int ibv_cmd_destroy_ah(struct ibv_ah *ah)
{
	k_call("destroy_ah", 0, 0, ah->handle);
	return k.ret;
}

int ibv_cmd_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type,
		     struct ibv_mw *mw, struct ibv_alloc_mw *cmd,
		     size_t cmd_size, struct ib_uverbs_alloc_mw_resp *resp,
		     size_t resp_size)
{
	(void)cmd;
	k_call("alloc_mw", cmd_size, resp_size, pd->handle);
	k.arg = type;
	if (k.ret)
		return k.ret;
	mw->context = pd->context;
	mw->pd = pd;
	mw->type = type;
	mw->handle = resp->mw_handle = next_handle++;
	/* low byte 0xff: the next key wraps to 0x00 in the low byte */
	mw->rkey = resp->rkey = (mw->handle << 8) | 0xff;
	return 0;
}

int ibv_cmd_dealloc_mw(struct ibv_mw *mw)
{
	k_call("dealloc_mw", 0, 0, mw->handle);
	return k.ret;
}

/* ------------------------------------------------------------------ */
/* Tests                                                               */
/* ------------------------------------------------------------------ */

#define CALLED(n)	(k.name && !strcmp(k.name, n))

static struct ibv_pd *test_pd_mr(struct ibv_context *ctx)
{
	static char buf[8192];
	struct ibv_pd *pd, *pd2;
	struct ibv_mr *mr;
	uint32_t h;
	int ok, ret;

	k_reset();
	pd = ibv_alloc_pd(ctx);
	ok = pd && CALLED("alloc_pd") && k.calls == 1 &&
	     k.cmd_size == sizeof(struct ibv_alloc_pd) &&
	     k.resp_size == sizeof(struct ib_uverbs_alloc_pd_resp) &&
	     pd->context == ctx && pd->handle >= 0x100;
	result(ok, "ibv_alloc_pd -> ibv_cmd_alloc_pd with a %zu-byte cmd and %zu-byte resp (no udata)",
	       k.cmd_size, k.resp_size);

	k_reset();
	k.ret = ENOSPC;
	errno = 0;
	pd2 = ibv_alloc_pd(ctx);
	result(!pd2 && errno == ENOSPC,
	       "alloc_pd: the kernel's error comes back as errno (ENOSPC)");

	k_reset();
	mr = ibv_reg_mr(pd, buf, sizeof(buf),
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	ok = mr && CALLED("reg_mr") &&
	     k.cmd_size == sizeof(struct ibv_reg_mr) &&
	     k.resp_size == sizeof(struct ib_uverbs_reg_mr_resp) &&
	     k.handle == pd->handle && kmr.addr == buf &&
	     kmr.length == sizeof(buf) && kmr.hca_va == (uintptr_t)buf &&
	     kmr.access == (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE) &&
	     (void *)kmr.vmr == (void *)mr && mr->lkey == 0x1000 + mr->handle &&
	     mr->pd == pd && mr->addr == buf;
	result(ok, "ibv_reg_mr -> ibv_cmd_reg_mr(addr, len, iova, access) with a %zu-byte cmd and %zu-byte resp, verbs_mr at the MR's start",
	       k.cmd_size, k.resp_size);

	k_reset();
	h = mr ? mr->handle : 0;
	ret = mr ? ibv_dereg_mr(mr) : -1;
	result(!ret && CALLED("dereg_mr") && k.handle == h,
	       "ibv_dereg_mr -> ibv_cmd_dereg_mr for the same MR");

	k_reset();
	pd2 = ibv_alloc_pd(ctx);
	h = pd2 ? pd2->handle : 0;
	k.ret = EBUSY;
	ret = pd2 ? ibv_dealloc_pd(pd2) : -1;
	ok = ret == EBUSY && CALLED("dealloc_pd") && k.handle == h;
	k.ret = 0;
	ret = pd2 ? ibv_dealloc_pd(pd2) : -1;
	result(ok && !ret && k.handle == h,
	       "ibv_dealloc_pd -> ibv_cmd_dealloc_pd; EBUSY passed through and the PD kept until a later success");
	return pd;
}

static int mapped_at(uint64_t key, uint32_t ring_size)
{
	size_t len = 0;
	int n = count_maps(key, &len);

	return n == 2 && len == page_up(ring_size);	/* kernel's + ours */
}

static int unmapped_at(uint64_t key)
{
	return count_maps(key, NULL) == 1;		/* only the kernel's */
}

static void test_cq_bad(struct ibv_context *ctx)
{
	static const struct {
		int mode, err;
		const char *what, *logged;
	} cases[] = {
		{ CQ_NUM_NOT_POW2, EPROTO, "3 entries", "ABI mismatch" },
		{ CQ_CQE_SIZE, EPROTO, "24-byte entries", "ABI mismatch" },
		{ CQ_SHORT_RING, EPROTO, "ring_size one byte short",
		  "ABI mismatch" },
		{ CQ_NO_UDATA, EPROTO, "no snaa udata", "ABI mismatch" },
		{ CQ_TOO_SMALL, EPROTO, "fewer entries than CQEs granted",
		  "ABI mismatch" },
		{ CQ_BAD_INDICES, EPROTO, "producer > num ahead",
		  "ABI mismatch" },
		{ CQ_BAD_KEY, EINVAL, "unmappable key", "mapping the CQ ring" },
	};
	struct ibv_cq *cq;
	size_t i;
	int ok, err;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		k_reset();
		log_reset();
		k.mode = cases[i].mode;
		errno = 0;
		cq = ibv_create_cq(ctx, 7, NULL, NULL, 0);
		err = errno;
		ok = !cq && err == cases[i].err && CALLED("destroy_cq") &&
		     k.calls == 2 && k.handle == next_handle - 1 &&
		     klog.calls >= 1 && strstr(klog.msg, cases[i].logged) &&
		     count_maps(kcq.key, NULL) == 1;
		if (klog.calls)
			diag("logged: %s", klog.msg);
		result(ok, "create_cq, kernel returns %s: errno %s, kernel CQ destroyed, nothing left mapped, logged",
		       cases[i].what, strerror(cases[i].err));
		if (cq)
			ibv_destroy_cq(cq);
	}

	k_reset();
	k.ret = EMFILE;
	errno = 0;
	cq = ibv_create_cq(ctx, 7, NULL, NULL, 0);
	result(!cq && errno == EMFILE && k.calls == 1,
	       "create_cq: the kernel's error comes back as errno, nothing else called");
}

/* The ring of the CQ test_cq() leaves behind for the QP tests. */
static uint64_t main_cq_key;
static uint32_t main_cq_size;

static struct ibv_cq *test_cq(struct ibv_context *ctx)
{
	struct ibv_wc wc[4];
	struct ibv_cq *cq;
	uint64_t key;
	int ok, n, ret;

	k_reset();
	cq = ibv_create_cq(ctx, 7, NULL, NULL, 0);
	ok = cq && CALLED("create_cq") && k.arg == 7 &&
	     k.cmd_size == sizeof(struct ibv_create_cq) &&
	     k.resp_size == sizeof(struct ib_uverbs_create_cq_resp) +
			    sizeof(struct snaa_uresp_create_cq) &&
	     cq->cqe == 7 && mapped_at(kcq.key, kcq.ring_size);
	result(ok, "ibv_create_cq -> ibv_cmd_create_cq with a %zu-byte cmd and %zu-byte resp (%zu bytes of snaa udata), ring mapped at cq_key with ring_size",
	       k.cmd_size, k.resp_size, sizeof(struct snaa_uresp_create_cq));
	if (!cq)
		return NULL;

	n = ibv_poll_cq(cq, 4, wc);
	kcq_complete(1, 10);
	kcq_complete(2, 20);
	kcq_complete(3, 30);
	memset(wc, 0, sizeof(wc));
	ok = n == 0 && ibv_poll_cq(cq, 2, wc) == 2 && wc[0].wr_id == 1 &&
	     wc[1].wr_id == 2 && wc[1].byte_len == 20 &&
	     wc[1].opcode == IBV_WC_RECV && wc[1].qp_num == 0x42 &&
	     wc[1].wc_flags == IBV_WC_WITH_IMM &&
	     wc[1].imm_data == 0x11223344 && kcq.ring->consumer == 2 &&
	     ibv_poll_cq(cq, 4, wc) == 1 && wc[0].wr_id == 3 &&
	     kcq.ring->consumer == 3 && ibv_poll_cq(cq, 4, wc) == 0;
	result(ok, "ibv_poll_cq: empty 0, then 3 kernel CQEs as 2 + 1 in order, consumer index published in the ring");

	k_reset();
	ret = ibv_req_notify_cq(cq, 1);
	ok = !ret && CALLED("req_notify_cq") && k.arg == 1 &&
	     k.handle == cq->handle;
	k.ret = EIO;
	ret = ibv_req_notify_cq(cq, 0);
	result(ok && ret == EIO && k.arg == 0,
	       "ibv_req_notify_cq -> ibv_cmd_req_notify_cq(solicited_only), errors passed through");

	/* Resize with two CQEs still unpolled. */
	kcq_complete(4, 40);
	kcq_complete(5, 50);
	k_reset();
	key = kcq.key;
	ret = ibv_resize_cq(cq, 30);
	ok = !ret && CALLED("resize_cq") && k.arg == 30 &&
	     k.cmd_size == sizeof(struct ibv_resize_cq) &&
	     k.resp_size == sizeof(struct ib_uverbs_resize_cq_resp) +
			    sizeof(struct snaa_uresp_resize_cq) &&
	     cq->cqe == 30 && unmapped_at(key) &&
	     mapped_at(kcq.key, kcq.ring_size) &&
	     kcq.ring->consumer == kresize.consumer;
	result(ok, "ibv_resize_cq -> ibv_cmd_resize_cq with a %zu-byte cmd and %zu-byte resp (%zu bytes of snaa udata); new ring mapped, old unmapped, consumer set from the response",
	       k.cmd_size, k.resp_size, sizeof(struct snaa_uresp_resize_cq));
	result(kresize.checked && kresize.ok,
	       "struct ibv_resize_cq matches what the installed libibverbs writes (command, in/out words, response, cq_handle, cqe)");

	memset(wc, 0, sizeof(wc));
	kcq_complete(6, 60);
	n = ibv_poll_cq(cq, 4, wc);
	ok = n == 3 && wc[0].wr_id == 4 && wc[1].wr_id == 5 &&
	     wc[2].wr_id == 6 && wc[2].byte_len == 60 &&
	     kcq.ring->consumer == kresize.consumer + 3;
	result(ok, "after resize: the 2 moved CQEs, then a new one, polled from the new ring in order (%d)",
	       n);

	k_reset();
	k.ret = EINVAL;
	key = kcq.key;
	ret = ibv_resize_cq(cq, 1);
	kcq_complete(7, 70);
	ok = ret == EINVAL && cq->cqe == 30 && mapped_at(key, kcq.ring_size) &&
	     ibv_poll_cq(cq, 4, wc) == 1 && wc[0].wr_id == 7;
	result(ok, "resize refused by the kernel: error returned, CQ keeps working on its ring");
	main_cq_key = kcq.key;
	main_cq_size = kcq.ring_size;
	return cq;
}

static void test_cq_resize_bad(struct ibv_context *ctx)
{
	struct ibv_wc wc[2];
	struct ibv_cq *cq;
	uint64_t key;
	int ret, n;

	k_reset();
	cq = ibv_create_cq(ctx, 3, NULL, NULL, 0);
	if (!cq) {
		result(0, "resize with a bad new ring (no CQ)");
		result(0, "destroy of a broken CQ (no CQ)");
		return;
	}
	key = kcq.key;
	k_reset();
	log_reset();
	k.mode = RESIZE_BAD_RING;
	ret = ibv_resize_cq(cq, 10);
	n = ibv_poll_cq(cq, 2, wc);
	if (klog.calls)
		diag("logged: %s", klog.msg);
	result(ret == EPROTO && n < 0 && klog.calls &&
	       strstr(klog.msg, "unusable"),
	       "resize to a bad ring (6 entries): EPROTO, logged, CQ marked broken (poll returns %d)",
	       n);
	k_reset();
	ret = ibv_destroy_cq(cq);
	result(!ret && CALLED("destroy_cq") && unmapped_at(key),
	       "a broken CQ can still be destroyed; its ring is unmapped");
}

static void test_cq_destroy(struct ibv_cq *cq)
{
	uint64_t key = main_cq_key;
	uint32_t h = cq->handle;
	int ret, ok;

	k_reset();
	k.ret = EBUSY;
	ret = ibv_destroy_cq(cq);
	ok = ret == EBUSY && mapped_at(key, main_cq_size);
	k.ret = 0;
	ret = ibv_destroy_cq(cq);
	result(ok && !ret && CALLED("destroy_cq") && k.handle == h &&
	       unmapped_at(key),
	       "ibv_destroy_cq: EBUSY keeps the ring mapped; success destroys the kernel CQ, then unmaps");
}

static struct snaa_sqe *k_sqe(uint32_t index)
{
	return (struct snaa_sqe *)((char *)(kqp.sq + 1) +
				   (index & (kqp.sq_num - 1)) *
				   kqp.sq_stride);
}

static void test_qp_bad(struct ibv_pd *pd, struct ibv_cq *cq)
{
	static const struct {
		int mode, err;
		const char *what;
	} cases[] = {
		{ QP_SQ_STRIDE, EPROTO, "an SQ stride too small for max_inline_data" },
		{ QP_SQ_NUM, EPROTO, "fewer SQ entries than max_send_wr" },
		{ QP_QPN, EPROTO, "two different QP numbers" },
		{ QP_RQ_BAD_KEY, EINVAL, "an unmappable RQ key" },
	};
	struct ibv_qp_init_attr attr;
	struct ibv_qp *qp;
	size_t i;
	int ok;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(&attr, 0, sizeof(attr));
		attr.send_cq = attr.recv_cq = cq;
		attr.qp_type = IBV_QPT_RC;
		attr.cap = (struct ibv_qp_cap){ 4, 4, 1, 1, 0 };
		k_reset();
		log_reset();
		k.mode = cases[i].mode;
		errno = 0;
		qp = ibv_create_qp(pd, &attr);
		ok = !qp && errno == cases[i].err && CALLED("destroy_qp") &&
		     k.calls == 2 && klog.calls >= 1 &&
		     count_maps(kqp.sq_key, NULL) == 1 &&
		     count_maps(kqp.rq_key, NULL) == 1;
		if (klog.calls)
			diag("logged: %s", klog.msg);
		result(ok, "create_qp, kernel returns %s: errno %s, kernel QP destroyed, no ring left mapped, logged",
		       cases[i].what, strerror(cases[i].err));
		if (qp)
			ibv_destroy_qp(qp);
	}
}

static void test_qp(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr attr, iattr;
	struct ibv_send_wr wr[10], *bad;
	struct ibv_recv_wr rwr, *rbad;
	struct ibv_sge sge = { .addr = 0x5000, .length = 64, .lkey = 0x77 };
	struct ibv_qp_attr qattr;
	struct snaa_sqe *e;
	struct snaa_rqe *r;
	struct ibv_qp *qp;
	uint64_t sq_key, rq_key;
	size_t i;
	int ok, ret, status;
	pid_t pid;

	memset(&attr, 0, sizeof(attr));
	attr.send_cq = attr.recv_cq = cq;
	attr.qp_type = IBV_QPT_UC;
	attr.cap = (struct ibv_qp_cap){ .max_send_wr = 6, .max_recv_wr = 3,
					.max_send_sge = 3, .max_recv_sge = 2,
					.max_inline_data = 16 };
	k_reset();
	qp = ibv_create_qp(pd, &attr);
	ok = qp && CALLED("create_qp") &&
	     k.cmd_size == sizeof(struct ibv_create_qp) &&
	     k.resp_size == sizeof(struct ib_uverbs_create_qp_resp) +
			    sizeof(struct snaa_uresp_create_qp) &&
	     attr.cap.max_send_wr == 8 && attr.cap.max_inline_data == 48 &&
	     mapped_at(kqp.sq_key, kqp.sq_size) &&
	     mapped_at(kqp.rq_key, kqp.rq_size);
	result(ok, "ibv_create_qp -> ibv_cmd_create_qp with a %zu-byte cmd and %zu-byte resp (%zu bytes of snaa udata); SQ and RQ mapped at their keys with their sizes",
	       k.cmd_size, k.resp_size, sizeof(struct snaa_uresp_create_qp));
	if (!qp) {
		while (test_no < NUM_TESTS - 1)
			result(0, "skipped: no QP");
		return;
	}
	sq_key = kqp.sq_key;
	rq_key = kqp.rq_key;

	fflush(NULL);
	pid = fork();
	if (pid == 0)
		_exit(unmapped_at(sq_key) && unmapped_at(rq_key) ? 0 : 1);
	ok = pid > 0 && waitpid(pid, &status, 0) == pid &&
	     WIFEXITED(status) && WEXITSTATUS(status) == 0;
	result(ok, "fork(): the child does not inherit the SQ and RQ mappings (MADV_DONTFORK)");

	ok = !ibv_qp_to_qp_ex(qp) &&
	     !container_of(qp, struct verbs_qp, qp)->comp_mask;
	result(ok, "QP object: a verbs_qp, comp_mask clear: ibv_qp_to_qp_ex() is NULL");

	/*
	 * In RESET nothing may be posted (IBA C10-97): EINVAL, bad_wr set,
	 * the rings untouched.  Then INIT, where posting works.
	 */
	memset(wr, 0, sizeof(wr));
	wr[0].wr_id = 0xfeed;
	wr[0].opcode = IBV_WR_SEND;
	wr[0].sg_list = &sge;
	wr[0].num_sge = 1;
	memset(&rwr, 0, sizeof(rwr));
	rwr.sg_list = &sge;
	rwr.num_sge = 1;
	bad = NULL;
	rbad = NULL;
	k_reset();
	ret = ibv_post_send(qp, wr, &bad);
	ok = ret == EINVAL && bad == &wr[0] &&
	     ibv_post_recv(qp, &rwr, &rbad) == EINVAL && rbad == &rwr &&
	     k.calls == 0 && kqp.sq->producer == 0 &&
	     kqp.rq->producer == 0;
	memset(&qattr, 0, sizeof(qattr));
	qattr.qp_state = IBV_QPS_INIT;
	ok = ok && !ibv_modify_qp(qp, &qattr, IBV_QP_STATE);
	result(ok, "QP in RESET: ibv_post_send and ibv_post_recv fail with EINVAL and bad_wr, nothing reaches the kernel");

	/* Post with the kernel busy: SQE in the ring, no doorbell. */
	memset(wr, 0, sizeof(wr));
	wr[0].wr_id = 0xfeed;
	wr[0].opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	wr[0].send_flags = IBV_SEND_SIGNALED;
	wr[0].imm_data = 0x01020304;
	wr[0].sg_list = &sge;
	wr[0].num_sge = 1;
	wr[0].wr.rdma.remote_addr = 0xabc000;
	wr[0].wr.rdma.rkey = 0x99;
	db_reset();
	bad = NULL;
	ret = ibv_post_send(qp, wr, &bad);
	e = k_sqe(0);
	ok = !ret && !bad && kqp.sq->producer == 1 && e->wr_id == 0xfeed &&
	     e->opcode == IBV_WR_RDMA_WRITE_WITH_IMM &&
	     e->flags == SNAA_WQE_SIGNALED && e->imm_data == 0x01020304 &&
	     e->remote_addr == 0xabc000 && e->rkey == 0x99 &&
	     e->num_sge == 1 && e->sge[0].addr == 0x5000 &&
	     e->sge[0].length == 64 && e->sge[0].lkey == 0x77 &&
	     db_written(NULL, 0) == 0;
	result(ok, "ibv_post_send, SQ not idle: SQE in the kernel's ring, producer 1, no doorbell");

	/* Kernel idle: exactly one doorbell, the SQ doorbell ioctl. */
	kqp.sq->flags = SNAA_RING_F_IDLE;
	wr[0].opcode = IBV_WR_SEND;
	wr[0].send_flags = IBV_SEND_INLINE;
	wr[0].num_sge = 1;
	sge.addr = (uintptr_t)"0123456789abcdef";
	sge.length = 16;
	db_reset();
	i = ioc_calls;
	ret = ibv_post_send(qp, wr, &bad);
	e = k_sqe(1);
	ok = !ret && kqp.sq->producer == 2 && e->inline_len == 16 &&
	     e->num_sge == 0 && !memcmp(e->sge, "0123456789abcdef", 16) &&
	     one_doorbell(qp, 0, i);
	result(ok, "SQ idle: one doorbell ioctl (SNAA_IB_METHOD_QP_DOORBELL on the device object, the doorbell word inline in its one attribute: the QPN, SNAA_DOORBELL_RQ clear), nothing written");

	/* Doorbell failure: errno back, bad_wr at the call's first WR. */
	ioc_err = EBADF;
	log_reset();
	bad = wr;
	ret = ibv_post_send(qp, wr, &bad);
	ioc_err = 0;
	if (klog.calls)
		diag("logged: %s", klog.msg);
	result(ret == EBADF && bad == wr && klog.calls,
	       "failed doorbell: post_send returns its errno (EBADF) with bad_wr at the first WR of the call, logged");
	kqp.sq->flags = 0;

	/* Bad WR in a chain. */
	for (i = 0; i < 3; i++) {
		wr[i] = wr[0];
		wr[i].send_flags = 0;
		wr[i].wr_id = 100 + i;
		wr[i].next = i < 2 ? &wr[i + 1] : NULL;
	}
	wr[1].num_sge = 4;	/* max_send_sge 3 */
	ret = ibv_post_send(qp, wr, &bad);
	result(ret == EINVAL && bad == &wr[1] && kqp.sq->producer == 4 &&
	       k_sqe(3)->wr_id == 100,
	       "more SGEs than granted: EINVAL, bad_wr = 2nd WR, the 1st posted");

	/* Full: 8 granted, 4 in flight. */
	for (i = 0; i < 10; i++) {
		wr[i] = wr[0];
		wr[i].wr_id = 200 + i;
		wr[i].next = i < 9 ? &wr[i + 1] : NULL;
	}
	ret = ibv_post_send(qp, wr, &bad);
	result(ret == ENOMEM && bad == &wr[4] && kqp.sq->producer == 8,
	       "SQ full (8 granted, 4 in flight): 4 more posted, ENOMEM, bad_wr = 5th");

	/* RQ */
	memset(&rwr, 0, sizeof(rwr));
	rwr.wr_id = 0xbeef;
	sge = (struct ibv_sge){ .addr = 0x6000, .length = 128, .lkey = 5 };
	rwr.sg_list = &sge;
	rwr.num_sge = 1;
	db_reset();
	ret = ibv_post_recv(qp, &rwr, &rbad);
	r = (struct snaa_rqe *)(kqp.rq + 1);
	ok = !ret && kqp.rq->producer == 1 && r->wr_id == 0xbeef &&
	     r->num_sge == 1 && r->sge[0].addr == 0x6000 &&
	     r->sge[0].length == 128 && r->sge[0].lkey == 5 &&
	     db_written(NULL, 0) == 0;
	rwr.num_sge = 3;
	rbad = NULL;
	ret = ibv_post_recv(qp, &rwr, &rbad);
	ok = ok && ret == EINVAL && rbad == &rwr && kqp.rq->producer == 1;
	result(ok, "ibv_post_recv: RQE in the kernel's RQ ring, no doorbell while not idle; 3 SGEs (2 granted) EINVAL");

	rwr.num_sge = 1;
	kqp.rq->flags = SNAA_RING_F_IDLE;
	db_reset();
	i = ioc_calls;
	ret = ibv_post_recv(qp, &rwr, &rbad);
	result(!ret && kqp.rq->producer == 2 && one_doorbell(qp, 1, i),
	       "RQ idle (errored QP): one doorbell ioctl, the QPN with SNAA_DOORBELL_RQ, nothing written");

	/* RQ doorbell failure: errno back, bad_wr at the call's first WR. */
	ioc_err = EIO;
	log_reset();
	rbad = NULL;
	ret = ibv_post_recv(qp, &rwr, &rbad);
	ioc_err = 0;
	if (klog.calls)
		diag("logged: %s", klog.msg);
	result(ret == EIO && rbad == &rwr && kqp.rq->producer == 3 &&
	       klog.calls,
	       "failed RQ doorbell: post_recv returns its errno (EIO) with bad_wr at the first WR of the call, logged");
	kqp.rq->flags = 0;

	k_reset();
	memset(&qattr, 0, sizeof(qattr));
	qattr.qp_state = IBV_QPS_INIT;
	ret = ibv_modify_qp(qp, &qattr, IBV_QP_STATE);
	ok = !ret && CALLED("modify_qp") &&
	     k.cmd_size == sizeof(struct ibv_modify_qp) &&
	     k.arg == IBV_QP_STATE && qp->state == IBV_QPS_INIT;
	k_reset();
	ret = ibv_query_qp(qp, &qattr, IBV_QP_STATE, &iattr);
	result(ok && !ret && CALLED("query_qp") &&
	       k.cmd_size == sizeof(struct ibv_query_qp) &&
	       qattr.qp_state == IBV_QPS_RTS,
	       "ibv_modify_qp / ibv_query_qp -> ibv_cmd_* with %zu- / %zu-byte cmds, no udata",
	       sizeof(struct ibv_modify_qp), sizeof(struct ibv_query_qp));

	k_reset();
	k.ret = EBUSY;
	ret = ibv_destroy_qp(qp);
	ok = ret == EBUSY && mapped_at(sq_key, kqp.sq_size) &&
	     mapped_at(rq_key, kqp.rq_size);
	k.ret = 0;
	ret = ibv_destroy_qp(qp);
	result(ok && !ret && CALLED("destroy_qp") && unmapped_at(sq_key) &&
	       unmapped_at(rq_key),
	       "ibv_destroy_qp: EBUSY keeps both rings; success destroys the kernel QP, then unmaps SQ and RQ");
}

static void test_ud_srq(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr attr;
	struct ibv_ah_attr ah_attr;
	struct ibv_send_wr wr, *bad;
	struct ibv_recv_wr rwr, *rbad;
	struct ibv_sge sge = { .addr = 0x5000, .length = 8, .lkey = 1 };
	struct ibv_qp *qp;
	struct ibv_ah *ah;
	struct snaa_sqe *e;
	int ok, ret;

	memset(&ah_attr, 0, sizeof(ah_attr));
	ah_attr.dlid = 0x33;
	ah_attr.port_num = 1;
	k_reset();
	ah = ibv_create_ah(pd, &ah_attr);
	ok = ah && CALLED("create_ah") && k.arg == 0x33 &&
	     k.resp_size == sizeof(struct ib_uverbs_create_ah_resp) +
			    sizeof(struct snaa_uresp_create_ah) &&
	     ah->pd == pd && ah->handle != 0x77;
	result(ok, "ibv_create_ah -> ibv_cmd_create_ah with a %zu-byte resp (core + snaa_uresp_create_ah)",
	       k.resp_size);

	memset(&attr, 0, sizeof(attr));
	attr.send_cq = attr.recv_cq = cq;
	attr.qp_type = IBV_QPT_UD;
	attr.srq = (struct ibv_srq *)&attr;	/* never dereferenced */
	attr.cap = (struct ibv_qp_cap){ .max_send_wr = 2, .max_send_sge = 1 };
	k_reset();
	qp = ibv_create_qp(pd, &attr);
	ok = qp && count_maps(kqp.rq_key, NULL) == 1;	/* the kernel's */
	if (qp) {
		struct ibv_qp_attr init = { .qp_state = IBV_QPS_INIT };

		ok = ok && !ibv_modify_qp(qp, &init, IBV_QP_STATE);
	}
	if (qp && ah) {
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = 9;
		wr.opcode = IBV_WR_SEND;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = 0x123456;
		wr.wr.ud.remote_qkey = 0x80010000u;
		ret = ibv_post_send(qp, &wr, &bad);
		e = k_sqe(0);
		ok = ok && !ret && e->ah_handle == 0x77 &&
		     e->remote_qpn == 0x123456 &&
		     e->remote_qkey == 0x80010000u && e->remote_addr == 0;
		wr.opcode = IBV_WR_RDMA_WRITE;
		ok = ok && ibv_post_send(qp, &wr, &bad) == EINVAL;
		memset(&rwr, 0, sizeof(rwr));
		ok = ok && ibv_post_recv(qp, &rwr, &rbad) == EINVAL &&
		     rbad == &rwr;
	}
	result(ok, "UD QP with an SRQ: no RQ mapped, UD SEND carries the kernel's AH number/QPN/Q_Key, RDMA WRITE EINVAL, post_recv EINVAL");
	if (qp)
		ibv_destroy_qp(qp);

	k_reset();
	ret = ah ? ibv_destroy_ah(ah) : -1;
	result(!ret && CALLED("destroy_ah"),
	       "ibv_destroy_ah -> ibv_cmd_destroy_ah");
}

/* ---- memory windows ---- */

/*
 * A QP of type @type with @send_wr SQ entries on @cq, in INIT (where
 * posting works), or NULL.
 */
static struct ibv_qp *mw_qp(struct ibv_pd *pd, struct ibv_cq *cq,
			    enum ibv_qp_type type, uint32_t send_wr,
			    uint64_t send_ops)
{
	struct ibv_qp_init_attr_ex ax;
	struct ibv_qp_attr qattr = { .qp_state = IBV_QPS_INIT };
	struct ibv_qp *qp;

	memset(&ax, 0, sizeof(ax));
	ax.send_cq = ax.recv_cq = cq;
	ax.qp_type = type;
	ax.cap = (struct ibv_qp_cap){ .max_send_wr = send_wr, .max_recv_wr = 1,
				      .max_send_sge = 1, .max_recv_sge = 1 };
	ax.pd = pd;
	ax.comp_mask = IBV_QP_INIT_ATTR_PD;
	if (send_ops) {
		ax.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		ax.send_ops_flags = send_ops;
	}
	qp = ibv_create_qp_ex(pd->context, &ax);
	if (qp && ibv_modify_qp(qp, &qattr, IBV_QP_STATE)) {
		ibv_destroy_qp(qp);
		return NULL;
	}
	return qp;
}

/* The SQE at @index is a BIND_MW with these fields. */
static int is_bind_sqe(uint32_t index, uint64_t wr_id, uint32_t flags,
		       uint32_t cur_key, uint32_t new_key, uint64_t va,
		       uint64_t len, uint32_t lkey, uint32_t access)
{
	const struct snaa_sqe *e = k_sqe(index);

	if (e->wr_id == wr_id && e->opcode == IBV_WR_BIND_MW &&
	    e->flags == flags && e->num_sge == 0 && e->rkey == cur_key &&
	    e->imm_data == new_key && e->remote_addr == va &&
	    e->inline_len == 0 && e->bind.length == len &&
	    e->bind.mr_lkey == lkey && e->bind.access == access)
		return 1;
	diag("SQE %u: wr_id %#llx opcode %u flags %#x num_sge %u rkey %#x imm %#x va %#llx len %#llx lkey %#x access %#x",
	     index, (unsigned long long)e->wr_id, e->opcode, e->flags,
	     e->num_sge, e->rkey, e->imm_data,
	     (unsigned long long)e->remote_addr,
	     (unsigned long long)e->bind.length, e->bind.mr_lkey,
	     e->bind.access);
	return 0;
}

static void kcq_put(uint64_t wr_id, uint8_t opcode, uint8_t wc_flags,
		    uint32_t imm_data)
{
	struct snaa_cqe *e = (struct snaa_cqe *)(kcq.ring + 1) +
			     (kcq.ring->producer & (kcq.num - 1));

	memset(e, 0, sizeof(*e));
	e->wr_id = wr_id;
	e->qp_num = 0x42;
	e->opcode = opcode;
	e->wc_flags = wc_flags;
	e->imm_data = imm_data;
	e->byte_len = 16;
	__atomic_store_n(&kcq.ring->producer, kcq.ring->producer + 1,
			 __ATOMIC_RELEASE);
}

static void test_mw(struct ibv_pd *pd)
{
	static char buf[8192];
	struct ibv_context *ctx = pd->context;
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 7, .wc_flags = IBV_WC_STANDARD_FLAGS,
	};
	struct ibv_send_wr wr[3], *bad;
	struct ibv_sge sge = { .addr = 0x5000, .length = 8, .lkey = 0x77 };
	struct ibv_poll_cq_attr pa = { 0 };
	struct ibv_mw *mw1 = NULL, *mw2 = NULL, *mw;
	struct ibv_mw_bind bind;
	struct ibv_mr *mr;
	struct ibv_cq_ex *cqx;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_wc wc[2];
	uint32_t key, h;
	size_t n;
	int ok, ret;

	/* alloc */
	k_reset();
	mw1 = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	ok = mw1 && CALLED("alloc_mw") && k.arg == IBV_MW_TYPE_1 &&
	     k.handle == pd->handle &&
	     k.cmd_size == sizeof(struct ibv_alloc_mw) &&
	     k.resp_size == sizeof(struct ib_uverbs_alloc_mw_resp) &&
	     mw1->type == IBV_MW_TYPE_1 && mw1->pd == pd &&
	     mw1->context == ctx && (mw1->rkey & 0xff) == 0xff;
	k_reset();
	mw2 = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	ok = ok && mw2 && CALLED("alloc_mw") && k.arg == IBV_MW_TYPE_2 &&
	     mw2->type == IBV_MW_TYPE_2;
	result(ok, "ibv_alloc_mw (type 1 and 2) -> ibv_cmd_alloc_mw with a %zu-byte cmd and %zu-byte resp (no udata); type, PD and R_Key from the kernel",
	       sizeof(struct ibv_alloc_mw),
	       sizeof(struct ib_uverbs_alloc_mw_resp));

	k_reset();
	errno = 0;
	mw = ibv_alloc_mw(pd, (enum ibv_mw_type)3);
	ok = !mw && errno == EINVAL && k.calls == 0;
	k.ret = ENOMEM;
	errno = 0;
	mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	result(ok && !mw && errno == ENOMEM && k.calls == 1,
	       "ibv_alloc_mw: type 3 EINVAL without asking the kernel; the kernel's error comes back as errno");
	if (!mw1 || !mw2) {
		while (test_no < NUM_TESTS - 1)
			result(0, "skipped: no memory windows");
		return;
	}

	k_reset();
	mr = ibv_reg_mr(pd, buf, sizeof(buf),
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	cqx = ibv_create_cq_ex(ctx, &ca);
	cq = cqx ? ibv_cq_ex_to_cq(cqx) : NULL;
	qp = cq ? mw_qp(pd, cq, IBV_QPT_RC, 2, 0) : NULL;
	if (!mr || !qp) {
		diag("MR %p CQ %p QP %p: %s", (void *)mr, (void *)cq,
		     (void *)qp, strerror(errno));
		while (test_no < NUM_TESTS - 1)
			result(0, "skipped: no MR, CQ or QP");
		return;
	}

	/* ibv_bind_mw: a type 1 window, the next key */
	memset(&bind, 0, sizeof(bind));
	bind.wr_id = 0xb1;
	bind.send_flags = IBV_SEND_SIGNALED;
	bind.bind_info.mr = mr;
	bind.bind_info.addr = (uintptr_t)buf + 64;
	bind.bind_info.length = 1000;
	bind.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE |
					 IBV_ACCESS_REMOTE_READ;
	key = mw1->rkey;
	db_reset();
	k_reset();
	ret = ibv_bind_mw(qp, mw1, &bind);
	ok = !ret && k.calls == 0 && kqp.sq->producer == 1 &&
	     mw1->rkey == ibv_inc_rkey(key) && mw1->rkey == (key & ~0xffu) &&
	     is_bind_sqe(0, 0xb1, SNAA_WQE_SIGNALED, key, mw1->rkey,
			 (uintptr_t)buf + 64, 1000, mr->lkey,
			 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ) &&
	     db_written(NULL, 0) == 0;
	result(ok, "ibv_bind_mw (type 1, RC): one BIND_MW SQE (current key, ibv_inc_rkey() of it, VA, length, MR lkey, rights, wr_id, flags), window takes the new key, no doorbell while the SQ is busy");

	/* idle kernel: doorbell; unbind with length 0 and no MR */
	kqp.sq->flags = SNAA_RING_F_IDLE;
	memset(&bind.bind_info, 0, sizeof(bind.bind_info));
	bind.wr_id = 0xb2;
	bind.send_flags = 0;
	key = mw1->rkey;
	db_reset();
	n = ioc_calls;
	ret = ibv_bind_mw(qp, mw1, &bind);
	ok = !ret && kqp.sq->producer == 2 && mw1->rkey == ibv_inc_rkey(key) &&
	     is_bind_sqe(1, 0xb2, 0, key, mw1->rkey, 0, 0, 0, 0) &&
	     one_doorbell(qp, 0, n);
	kqp.sq->flags = 0;
	result(ok, "ibv_bind_mw with length 0 and no MR (unbind): L_Key 0, range 0; SQ idle: one SQ doorbell ioctl");

	/* full, type 2, RESET */
	key = mw1->rkey;
	ret = ibv_bind_mw(qp, mw1, &bind);
	ok = ret == ENOMEM && mw1->rkey == key && kqp.sq->producer == 2;
	ret = ctx->ops.bind_mw(qp, mw2, &bind);
	ok = ok && ret == EINVAL && kqp.sq->producer == 2;
	{
		struct ibv_qp_attr reset = { .qp_state = IBV_QPS_RESET };

		kqp.sq->consumer = 2;
		ok = ok && !ibv_modify_qp(qp, &reset, IBV_QP_STATE) &&
		     ibv_bind_mw(qp, mw1, &bind) == EINVAL &&
		     mw1->rkey == key && kqp.sq->producer == 2;
		reset.qp_state = IBV_QPS_INIT;
		ok = ok && !ibv_modify_qp(qp, &reset, IBV_QP_STATE);
	}
	result(ok, "ibv_bind_mw: SQ full ENOMEM, a type 2 window (op called directly) EINVAL, QP in RESET EINVAL; the key is kept, nothing posted");

	/* ibv_post_send: BIND_MW of a type 2 window, LOCAL_INV, SEND_WITH_INV */
	memset(wr, 0, sizeof(wr));
	wr[0].wr_id = 0xc0;
	wr[0].opcode = IBV_WR_BIND_MW;
	wr[0].send_flags = IBV_SEND_SIGNALED;
	wr[0].bind_mw.mw = mw2;
	wr[0].bind_mw.rkey = ibv_inc_rkey(mw2->rkey);
	wr[0].bind_mw.bind_info.mr = mr;
	wr[0].bind_mw.bind_info.addr = (uintptr_t)buf;
	wr[0].bind_mw.bind_info.length = sizeof(buf);
	wr[0].bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
	wr[0].next = &wr[1];
	wr[1].wr_id = 0xc1;
	wr[1].opcode = IBV_WR_LOCAL_INV;
	wr[1].invalidate_rkey = wr[0].bind_mw.rkey;
	key = mw2->rkey;
	bad = NULL;
	ret = ibv_post_send(qp, wr, &bad);
	ok = !ret && !bad && kqp.sq->producer == 4 && mw2->rkey == key &&
	     is_bind_sqe(2, 0xc0, SNAA_WQE_SIGNALED, key, ibv_inc_rkey(key),
			 (uintptr_t)buf, sizeof(buf), mr->lkey,
			 IBV_ACCESS_REMOTE_WRITE) &&
	     k_sqe(3)->opcode == IBV_WR_LOCAL_INV &&
	     k_sqe(3)->imm_data == ibv_inc_rkey(key) &&
	     k_sqe(3)->num_sge == 0 && k_sqe(3)->wr_id == 0xc1;
	kqp.sq->consumer = 4;
	wr[0].opcode = IBV_WR_SEND_WITH_INV;
	wr[0].invalidate_rkey = 0x12345678;
	wr[0].sg_list = &sge;
	wr[0].num_sge = 1;
	wr[1] = wr[0];
	wr[0].next = &wr[1];
	wr[1].next = NULL;
	wr[1].opcode = IBV_WR_BIND_MW;
	wr[1].bind_mw.mw = mw1;		/* type 1: only ibv_bind_mw */
	bad = NULL;
	ret = ibv_post_send(qp, wr, &bad);
	ok = ok && ret == EINVAL && bad == &wr[1] &&
	     kqp.sq->producer == 5 &&
	     k_sqe(4)->opcode == IBV_WR_SEND_WITH_INV &&
	     k_sqe(4)->imm_data == 0x12345678 && k_sqe(4)->num_sge == 1 &&
	     k_sqe(4)->sge[0].addr == 0x5000 && k_sqe(4)->sge[0].lkey == 0x77;
	result(ok, "ibv_post_send (RC): BIND_MW of a type 2 window (the WR's new key, the window's key unchanged), LOCAL_INV and SEND_WITH_INV (key in imm_data, host order); BIND_MW of a type 1 window EINVAL with bad_wr");

	/* completions: WITH_INV, BIND_MW and LOCAL_INV opcodes */
	kcq_put(1, IBV_WC_RECV, SNAA_WC_WITH_INV, 0xfeedbeef);
	kcq_put(2, IBV_WC_BIND_MW, 0, 0);
	ok = ibv_start_poll(cqx, &pa) == 0 && cqx->wr_id == 1 &&
	     ibv_wc_read_opcode(cqx) == IBV_WC_RECV &&
	     ibv_wc_read_wc_flags(cqx) == IBV_WC_WITH_INV &&
	     ibv_wc_read_invalidated_rkey(cqx) == 0xfeedbeef &&
	     ibv_next_poll(cqx) == 0 && cqx->wr_id == 2 &&
	     ibv_wc_read_opcode(cqx) == IBV_WC_BIND_MW &&
	     ibv_wc_read_wc_flags(cqx) == 0;
	ibv_end_poll(cqx);
	kcq_put(3, IBV_WC_RECV, SNAA_WC_WITH_INV, 0xfeedbeef);
	kcq_put(4, IBV_WC_LOCAL_INV, 0, 0);
	memset(wc, 0, sizeof(wc));
	ok = ok && ibv_poll_cq(cq, 2, wc) == 2 && wc[0].wr_id == 3 &&
	     wc[0].wc_flags == IBV_WC_WITH_INV &&
	     wc[0].invalidated_rkey == 0xfeedbeef &&
	     wc[1].opcode == IBV_WC_LOCAL_INV;
	result(ok, "SEND with invalidate: ibv_wc_read_wc_flags / ibv_wc_read_invalidated_rkey and ibv_poll_cq agree (IBV_WC_WITH_INV, the key); BIND_MW and LOCAL_INV opcodes pass");
	ibv_destroy_qp(qp);

	/* the ibv_wr_* API */
	qp = mw_qp(pd, cq, IBV_QPT_RC, 4, IBV_QP_EX_WITH_BIND_MW |
		   IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_SEND_WITH_INV);
	ok = qp != NULL;
	if (!qp)
		diag("RC QP with MW send ops: %s", strerror(errno));
	if (qp) {
		struct ibv_qp_ex *qpx = ibv_qp_to_qp_ex(qp);
		struct ibv_mw_bind_info bi = {
			.mr = mr, .addr = (uintptr_t)buf + 8, .length = 16,
			.mw_access_flags = IBV_ACCESS_REMOTE_READ,
		};

		ibv_wr_start(qpx);
		qpx->wr_id = 0xd0;
		qpx->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_bind_mw(qpx, mw2, 0xabc, &bi);
		qpx->wr_id = 0xd1;
		qpx->wr_flags = 0;
		ibv_wr_local_inv(qpx, 0xabc);
		qpx->wr_id = 0xd2;
		ibv_wr_send_inv(qpx, 0x5151);
		ibv_wr_set_sge(qpx, 0x99, 0x7000, 32);
		ok = !ibv_wr_complete(qpx) && kqp.sq->producer == 3 &&
		     is_bind_sqe(0, 0xd0, SNAA_WQE_SIGNALED, mw2->rkey, 0xabc,
				 (uintptr_t)buf + 8, 16, mr->lkey,
				 IBV_ACCESS_REMOTE_READ) &&
		     k_sqe(1)->opcode == IBV_WR_LOCAL_INV &&
		     k_sqe(1)->imm_data == 0xabc && k_sqe(1)->wr_id == 0xd1 &&
		     k_sqe(2)->opcode == IBV_WR_SEND_WITH_INV &&
		     k_sqe(2)->imm_data == 0x5151 &&
		     k_sqe(2)->sge[0].addr == 0x7000 &&
		     k_sqe(2)->sge[0].length == 32;
		kqp.sq->consumer = 3;
		ibv_wr_start(qpx);
		ibv_wr_bind_mw(qpx, mw1, 0xabc, &bi);	/* type 1 */
		ok = ok && ibv_wr_complete(qpx) == EINVAL &&
		     kqp.sq->producer == 3;
		ibv_destroy_qp(qp);
	}
	errno = 0;
	qp = mw_qp(pd, cq, IBV_QPT_UC, 4, IBV_QP_EX_WITH_SEND_WITH_INV);
	ok = ok && !qp && errno == EOPNOTSUPP;
	if (qp)
		ibv_destroy_qp(qp);
	qp = mw_qp(pd, cq, IBV_QPT_UC, 4, IBV_QP_EX_WITH_BIND_MW |
		   IBV_QP_EX_WITH_LOCAL_INV);
	ok = ok && qp;
	if (qp)
		ibv_destroy_qp(qp);
	result(ok, "ibv_wr_bind_mw / ibv_wr_local_inv / ibv_wr_send_inv: one batch, SQEs as ibv_post_send writes them; a type 1 window fails the batch (EINVAL); send_ops_flags: BIND_MW and LOCAL_INV on RC and UC, SEND_WITH_INV on RC only (UC: EOPNOTSUPP)");

	/* dealloc */
	k_reset();
	h = mw1->handle;
	k.ret = EBUSY;
	ret = ibv_dealloc_mw(mw1);
	ok = ret == EBUSY && CALLED("dealloc_mw") && k.handle == h &&
	     mw1->handle == h;
	k.ret = 0;
	ok = ok && !ibv_dealloc_mw(mw1) && k.handle == h &&
	     !ibv_dealloc_mw(mw2);
	result(ok, "ibv_dealloc_mw -> ibv_cmd_dealloc_mw for the window; EBUSY passed through and the window kept until a later success");

	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
}

int main(int argc, char **argv)
{
	struct verbs_context *vctx;
	struct verbs_device *vdev;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct stat st;
	void *h;

	if (argc != 2 || argv[1][0] != '/') {
		fprintf(stderr, "usage: %s /abs/path/libsnaa-rdmavNN.so\n",
			argv[0]);
		return 2;
	}
	ktap_plan(NUM_TESTS);

	memfd = memfd_create("snaa-fake-uverbs", MFD_CLOEXEC);
	if (memfd < 0 || ftruncate(memfd, FD_SIZE) || fstat(memfd, &st)) {
		perror("memfd");
		return 1;
	}
	memfd_ino = st.st_ino;

	h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	vdev = h && reg_ops ? reg_ops->alloc_device(NULL) : NULL;
	if (!vdev) {
		diag("%s", h ? "no device" : dlerror());
		while (test_no < NUM_TESTS)
			result(0, "skipped: provider not loaded");
		return 1;
	}
	vdev->ops = reg_ops;
	atomic_init(&vdev->refcount, 1);
	snprintf(vdev->device.name, sizeof(vdev->device.name), "snaatest0");
	vdev->device.node_type = IBV_NODE_CA;
	vdev->device.transport_type = IBV_TRANSPORT_IB;

	/*
	 * Open on the memfd (what verbs_open_device would do with the
	 * uverbs cdev).  ioctl() on it fails with ENOTTY, so libibverbs
	 * uses write() for legacy commands, as on a kernel without the
	 * ioctl write path, and its own command bytes can be captured.
	 */
	vctx = reg_ops->alloc_context(&vdev->device, memfd, NULL);
	ctx = vctx ? &vctx->context : NULL;
	result(ctx && ctx->cmd_fd == memfd,
	       "context opened on the fake uverbs file");
	if (vctx && set_ops)
		vctx->create_cq_ex = lib_create_cq_ex;
	if (!ctx) {
		while (test_no < NUM_TESTS)
			result(0, "skipped: no context");
		return 1;
	}

	pd = test_pd_mr(ctx);
	test_cq_bad(ctx);
	cq = test_cq(ctx);
	test_cq_resize_bad(ctx);
	if (pd && cq) {
		test_qp_bad(pd, cq);
		test_qp(pd, cq);
		test_ud_srq(pd, cq);
		test_mw(pd);
	}
	if (cq)
		test_cq_destroy(cq);
	if (pd)
		ibv_dealloc_pd(pd);
	ibv_close_device(ctx);	/* closes the memfd */
	reg_ops->uninit_device(vdev);

	return test_finish("test_verbs", NUM_TESTS);
}
