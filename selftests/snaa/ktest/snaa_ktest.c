// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * snaa_ktest: snaa used by an in-kernel consumer, the way a kernel ULP
 * uses an RDMA device: PDs with the local DMA lkey and the unsafe global
 * rkey (DMA MRs), CQs polled directly and CQs completed from softirq
 * (ib_alloc_cq), UC and RC QPs with kernel rings (RC: SEND, WRITE and
 * RDMA READ through the unsafe global rkey), ib_post_send/ib_post_recv,
 * flush, and address handles created in atomic context.
 *
 * The tests run when the module is loaded (kselftest module style) and
 * print KTAP to the kernel log, each line prefixed "snaa_ktest: ";
 * loading fails with -EINVAL when a test failed.  ktest.sh loads it in
 * the test VM:
 *
 *	insmod snaa_ktest.ko dev_a=snaa0 addr_a=198.18.0.1 \
 *			     dev_b=snaa1 addr_b=198.18.0.2
 *
 * dev_a sends to dev_b (they may be the same device: loopback); addr_*
 * select the RoCE v2 GID (::ffff:addr) each side uses.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/inet.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

static char *dev_a = "snaa0";
module_param(dev_a, charp, 0444);
MODULE_PARM_DESC(dev_a, "sending RDMA device");
static char *dev_b = "snaa0";
module_param(dev_b, charp, 0444);
MODULE_PARM_DESC(dev_b, "receiving RDMA device (may equal dev_a)");
static char *addr_a = "198.18.0.1";
module_param(addr_a, charp, 0444);
MODULE_PARM_DESC(addr_a, "IPv4 address of dev_a's RoCE v2 GID");
static char *addr_b = "198.18.0.1";
module_param(addr_b, charp, 0444);
MODULE_PARM_DESC(addr_b, "IPv4 address of dev_b's RoCE v2 GID");

#define KT_TIMEOUT	(10 * HZ)	/* per completion; TCG is slow */
#define KT_MTU		1024		/* path MTU: small messages segment */
#define KT_WR		16
#define KT_SGE		3
#define KT_CQE		64
#define KT_BUF		(16 * KT_MTU + 64)
#define KT_GUARD	0xa5

static int kt_num, kt_failed;
/* the transport of the QPs kt_ep_open() creates */
static enum ib_qp_type kt_qpt = IB_QPT_UC;
static u32 kt_inline;		/* max_inline_data of the QPs kt_ep_open() makes */

static void kt_result(bool ok, const char *fmt, ...)
{
	struct va_format vaf;
	va_list args;

	va_start(args, fmt);
	vaf.fmt = fmt;
	vaf.va = &args;
	kt_num++;
	if (!ok)
		kt_failed++;
	pr_info("%s %d - %pV\n", ok ? "ok" : "not ok", kt_num, &vaf);
	va_end(args);
}

#define kt_diag(fmt, ...) pr_info("# " fmt "\n", ##__VA_ARGS__)

/* One side of a connection: device, PD, CQs, QP and a mapped buffer. */
struct kt_ep {
	struct ib_device *dev;
	u32 sgid_index;
	union ib_gid gid;
	struct ib_pd *pd;
	struct ib_cq *scq;
	struct ib_cq *rcq;
	struct ib_qp *qp;
	struct ib_qp_cap cap;		/* as granted */
	u8 *buf;
	u64 dma;			/* ib_dma_map_single() of @buf */
};

/*
 * kt_get_device() finds a registered device by name, with a registration
 * reference (ib_device_put() drops it), as ib_device_get_by_name() did
 * before kernels dropped it: a client is shown every registered device
 * when it registers.
 */
static const char *kt_want;
static struct ib_device *kt_found;

static int kt_client_add(struct ib_device *dev)
{
	if (!kt_found && !strcmp(dev_name(&dev->dev), kt_want) &&
	    ib_device_try_get(dev))
		kt_found = dev;
	return 0;
}

static void kt_client_remove(struct ib_device *dev, void *client_data)
{
}

static struct ib_client kt_client = {
	.name = "snaa_ktest",
	.add = kt_client_add,
	.remove = kt_client_remove,
};

static struct ib_device *kt_get_device(const char *name)
{
	struct ib_device *dev;

	kt_want = name;
	kt_found = NULL;
	if (ib_register_client(&kt_client))
		return NULL;
	dev = kt_found;
	ib_unregister_client(&kt_client);
	return dev;
}

static int kt_find_gid(struct kt_ep *ep, const char *addr)
{
	const struct ib_gid_attr *attr;
	__be32 v4;

	if (!in4_pton(addr, -1, (u8 *)&v4, -1, NULL)) {
		kt_diag("%s is not an IPv4 address", addr);
		return -EINVAL;
	}
	ipv6_addr_set_v4mapped(v4, (struct in6_addr *)ep->gid.raw);
	attr = rdma_find_gid_by_port(ep->dev, &ep->gid,
				     IB_GID_TYPE_ROCE_UDP_ENCAP, 1, NULL);
	if (IS_ERR(attr)) {
		kt_diag("%s has no RoCE v2 GID for %s", dev_name(&ep->dev->dev),
			addr);
		return PTR_ERR(attr);
	}
	ep->sgid_index = attr->index;
	rdma_put_gid_attr(attr);
	return 0;
}

/*
 * @pd_flags: IB_PD_UNSAFE_GLOBAL_RKEY for the side that is written to.
 * @softirq: CQs from ib_alloc_cq(IB_POLL_SOFTIRQ) instead of polled ones.
 * @rcomp: else the receive CQ's completion handler (context @ep), or NULL
 */
static int kt_ep_open(struct kt_ep *ep, const char *name, const char *addr,
		      unsigned int pd_flags, bool softirq,
		      ib_comp_handler rcomp)
{
	struct ib_cq_init_attr cq_attr = { .cqe = KT_CQE };
	struct ib_qp_init_attr init = {
		.qp_type = kt_qpt,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = {
			.max_send_wr = KT_WR,
			.max_recv_wr = KT_WR,
			.max_send_sge = KT_SGE,
			.max_recv_sge = KT_SGE,
			.max_inline_data = kt_inline,
		},
	};
	int err;

	memset(ep, 0, sizeof(*ep));
	ep->dev = kt_get_device(name);
	if (!ep->dev) {
		kt_diag("no RDMA device %s", name);
		return -ENODEV;
	}
	err = kt_find_gid(ep, addr);
	if (err)
		return err;

	ep->pd = ib_alloc_pd(ep->dev, pd_flags);
	if (IS_ERR(ep->pd)) {
		err = PTR_ERR(ep->pd);
		ep->pd = NULL;
		kt_diag("ib_alloc_pd: %d", err);
		return err;
	}
	if (softirq) {
		ep->scq = ib_alloc_cq(ep->dev, ep, KT_CQE, 0, IB_POLL_SOFTIRQ);
		ep->rcq = IS_ERR(ep->scq) ? ep->scq :
			  ib_alloc_cq(ep->dev, ep, KT_CQE, 0, IB_POLL_SOFTIRQ);
	} else {
		ep->scq = ib_create_cq(ep->dev, NULL, NULL, ep, &cq_attr);
		ep->rcq = IS_ERR(ep->scq) ? ep->scq :
			  ib_create_cq(ep->dev, rcomp, NULL, ep, &cq_attr);
	}
	if (IS_ERR(ep->scq) || IS_ERR(ep->rcq)) {
		err = PTR_ERR(IS_ERR(ep->scq) ? ep->scq : ep->rcq);
		if (IS_ERR(ep->rcq))
			ep->rcq = NULL;
		if (IS_ERR(ep->scq))
			ep->scq = NULL;
		kt_diag("CQ creation: %d", err);
		return err;
	}
	init.send_cq = ep->scq;
	init.recv_cq = ep->rcq;
	ep->qp = ib_create_qp(ep->pd, &init);
	if (IS_ERR(ep->qp)) {
		err = PTR_ERR(ep->qp);
		ep->qp = NULL;
		kt_diag("ib_create_qp: %d", err);
		return err;
	}
	ep->cap = init.cap;

	ep->buf = kmalloc(KT_BUF, GFP_KERNEL);
	if (!ep->buf)
		return -ENOMEM;
	ep->dma = ib_dma_map_single(ep->dev, ep->buf, KT_BUF,
				    DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(ep->dev, ep->dma)) {
		kfree(ep->buf);
		ep->buf = NULL;
		return -ENOMEM;
	}
	return 0;
}

static void kt_destroy_cq(struct ib_cq *cq)
{
	if (!cq)
		return;
	if (cq->poll_ctx == IB_POLL_SOFTIRQ)
		ib_free_cq(cq);
	else
		ib_destroy_cq(cq);
}

static void kt_ep_close(struct kt_ep *ep)
{
	if (ep->buf) {
		ib_dma_unmap_single(ep->dev, ep->dma, KT_BUF,
				    DMA_BIDIRECTIONAL);
		kfree(ep->buf);
	}
	if (ep->qp)
		ib_destroy_qp(ep->qp);
	kt_destroy_cq(ep->rcq);
	kt_destroy_cq(ep->scq);
	if (ep->pd)
		ib_dealloc_pd(ep->pd);
	if (ep->dev)
		ib_device_put(ep->dev);
	memset(ep, 0, sizeof(*ep));
}

static int kt_modify(struct kt_ep *ep, struct ib_qp_attr *attr, int mask,
		     const char *what)
{
	int err = ib_modify_qp(ep->qp, attr, mask);

	if (err)
		kt_diag("%s QP %u %s: %d", dev_name(&ep->dev->dev),
			ep->qp->qp_num, what, err);
	return err;
}

static int kt_init(struct kt_ep *ep)
{
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = IB_ACCESS_REMOTE_WRITE |
				   (kt_qpt == IB_QPT_RC ? IB_ACCESS_REMOTE_READ :
							   0),
	};

	return kt_modify(ep, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			 IB_QP_PORT | IB_QP_ACCESS_FLAGS, "RESET->INIT");
}

/* @ep: INIT -> RTR -> RTS, sending to @peer. */
static int kt_connect(struct kt_ep *ep, struct kt_ep *peer)
{
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_RTR,
		.path_mtu = ib_mtu_int_to_enum(KT_MTU),
		.dest_qp_num = peer->qp->qp_num,
		.rq_psn = 0x123,
	};
	bool rc = kt_qpt == IB_QPT_RC;
	int err, mask = IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU |
			IB_QP_DEST_QPN | IB_QP_RQ_PSN;

	attr.ah_attr.type = rdma_ah_find_type(ep->dev, 1);
	rdma_ah_set_port_num(&attr.ah_attr, 1);
	rdma_ah_set_grh(&attr.ah_attr, &peer->gid, 0, ep->sgid_index, 64, 0);
	if (rc) {
		attr.max_dest_rd_atomic = 4;
		attr.min_rnr_timer = 12;
		mask |= IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER;
	}
	err = kt_modify(ep, &attr, mask, "INIT->RTR");
	if (err)
		return err;
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_RTS;
	attr.sq_psn = 0x123;
	mask = IB_QP_STATE | IB_QP_SQ_PSN;
	if (rc) {
		attr.timeout = 14;
		attr.retry_cnt = 7;
		attr.rnr_retry = 7;
		attr.max_rd_atomic = 4;
		mask |= IB_QP_TIMEOUT | IB_QP_RETRY_CNT | IB_QP_RNR_RETRY |
			IB_QP_MAX_QP_RD_ATOMIC;
	}
	return kt_modify(ep, &attr, mask, "RTR->RTS");
}

static int kt_to_err(struct kt_ep *ep)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };

	return kt_modify(ep, &attr, IB_QP_STATE, "->ERR");
}

/* Wait for one completion on a polled CQ. */
static int kt_poll(struct ib_cq *cq, struct ib_wc *wc)
{
	unsigned long end = jiffies + KT_TIMEOUT;
	int n;

	for (;;) {
		n = ib_poll_cq(cq, 1, wc);
		if (n)
			return n < 0 ? n : 0;
		if (time_after(jiffies, end))
			return -ETIMEDOUT;
		usleep_range(20, 100);
	}
}

/* A polled CQ holds no completion (after a short grace period). */
static bool kt_cq_empty(struct ib_cq *cq)
{
	struct ib_wc wc;

	msleep(20);
	return ib_poll_cq(cq, 1, &wc) == 0;
}

static bool kt_wc_is(const struct ib_wc *wc, u64 wr_id,
		     enum ib_wc_status status, enum ib_wc_opcode opcode,
		     u32 byte_len, struct ib_qp *qp, bool imm, u32 imm_data)
{
	bool ok = wc->wr_id == wr_id && wc->status == status &&
		  wc->qp == qp && !!(wc->wc_flags & IB_WC_WITH_IMM) == imm;

	if (status == IB_WC_SUCCESS)
		ok = ok && wc->opcode == opcode && wc->byte_len == byte_len &&
		     (!imm || be32_to_cpu(wc->ex.imm_data) == imm_data);
	if (!ok)
		kt_diag("wc: wr_id %#llx status %d (%s) opcode %d byte_len %u qp %u flags %#x imm %#x; expected wr_id %#llx status %d opcode %d byte_len %u qp %u imm %d:%#x",
			wc->wr_id, wc->status, ib_wc_status_msg(wc->status),
			wc->opcode, wc->byte_len, wc->qp ? wc->qp->qp_num : 0,
			wc->wc_flags, be32_to_cpu(wc->ex.imm_data), wr_id,
			status, opcode, byte_len, qp->qp_num, imm, imm_data);
	return ok;
}

static void kt_fill(u8 *p, u32 len, u32 seed)
{
	u32 i;

	for (i = 0; i < len; i++)
		p[i] = (u8)(seed * 31 + i * 7 + (i >> 8));
}

/* @len bytes at @p match kt_fill(@seed), then @guard guard bytes. */
static bool kt_check(const u8 *p, u32 len, u32 seed, u32 guard)
{
	u32 i;

	for (i = 0; i < len; i++) {
		if (p[i] != (u8)(seed * 31 + i * 7 + (i >> 8))) {
			kt_diag("byte %u is %#x, expected %#x", i, p[i],
				(u8)(seed * 31 + i * 7 + (i >> 8)));
			return false;
		}
	}
	for (i = 0; i < guard; i++) {
		if (p[len + i] != KT_GUARD) {
			kt_diag("guard byte %u after %u bytes is %#x", i, len,
				p[len + i]);
			return false;
		}
	}
	return true;
}

/*
 * Split [off, off + len) of @ep's buffer into @nsge SGEs of the PD's
 * local DMA lkey (the last one takes the remainder).
 */
static void kt_sges(struct kt_ep *ep, struct ib_sge *sge, int nsge, u32 off,
		    u32 len)
{
	u32 part = len / nsge;
	int i;

	for (i = 0; i < nsge; i++) {
		sge[i].addr = ep->dma + off;
		sge[i].length = i == nsge - 1 ? len - part * i : part;
		sge[i].lkey = ep->pd->local_dma_lkey;
		off += sge[i].length;
	}
}

static int kt_post_recv(struct kt_ep *ep, u64 wr_id, int nsge, u32 len)
{
	struct ib_sge sge[KT_SGE];
	struct ib_recv_wr wr = {
		.wr_id = wr_id,
		.sg_list = sge,
		.num_sge = nsge,
	};

	kt_sges(ep, sge, nsge, 0, len);
	return ib_post_recv(ep->qp, &wr, NULL);
}

/* SEND(_WITH_IMM) of @len bytes in @nsge SGEs, A -> B. */
static void kt_send(struct kt_ep *a, struct kt_ep *b, u32 len, int nsge,
		    bool imm)
{
	static u32 seq;
	struct ib_sge sge[KT_SGE];
	struct ib_rdma_wr wr = {
		.wr = {
			.wr_id = 0x5000 + ++seq,
			.sg_list = sge,
			.num_sge = nsge,
			.opcode = imm ? IB_WR_SEND_WITH_IMM : IB_WR_SEND,
			.send_flags = IB_SEND_SIGNALED,
			.ex.imm_data = cpu_to_be32(0xc0de0000 + seq),
		},
	};
	struct ib_wc swc, rwc;
	bool ok;
	int err;

	memset(b->buf, KT_GUARD, KT_BUF);
	kt_fill(a->buf, len, seq);
	ok = !kt_post_recv(b, 0x6000 + seq, nsge, len + 64);
	kt_sges(a, sge, nsge, 0, len);
	err = ib_post_send(a->qp, &wr.wr, NULL);
	ok = ok && !err && !kt_poll(a->scq, &swc) && !kt_poll(b->rcq, &rwc);
	/* Send CQEs carry the message length, as rdma_rxe's do. */
	ok = ok && kt_wc_is(&swc, wr.wr.wr_id, IB_WC_SUCCESS, IB_WC_SEND, len,
			    a->qp, false, 0) &&
	     kt_wc_is(&rwc, 0x6000 + seq, IB_WC_SUCCESS, IB_WC_RECV, len,
		      b->qp, imm, 0xc0de0000 + seq) &&
	     kt_check(b->buf, len, seq, 64);
	kt_result(ok, "ib_post_send %s of %u bytes in %d SGE(s) from the local DMA lkey: both CQEs and every byte exact",
		  imm ? "SEND_WITH_IMM" : "SEND", len, nsge);
}

/*
 * RDMA WRITE(_WITH_IMM) of @len bytes to @off of B's buffer through B's
 * unsafe global rkey (a DMA MR with remote write).
 */
static void kt_write(struct kt_ep *a, struct kt_ep *b, u32 len, u32 off,
		     bool imm)
{
	static u32 seq = 100;
	struct ib_sge sge[KT_SGE];
	struct ib_rdma_wr wr = {
		.wr = {
			.wr_id = 0x7000 + ++seq,
			.sg_list = sge,
			.num_sge = 2,
			.opcode = imm ? IB_WR_RDMA_WRITE_WITH_IMM :
					IB_WR_RDMA_WRITE,
			.send_flags = IB_SEND_SIGNALED,
			.ex.imm_data = cpu_to_be32(0xbeef0000 + seq),
		},
		.remote_addr = b->dma + off,
		.rkey = b->pd->unsafe_global_rkey,
	};
	struct ib_wc swc, rwc;
	bool ok;

	memset(b->buf, KT_GUARD, KT_BUF);
	kt_fill(a->buf, len, seq);
	/* Without IMM the receive WR stays posted: it catches the SEND. */
	ok = !kt_post_recv(b, 0x8000 + seq, 1, 0);
	kt_sges(a, sge, 2, 0, len);
	ok = ok && !ib_post_send(a->qp, &wr.wr, NULL) &&
	     !kt_poll(a->scq, &swc) &&
	     kt_wc_is(&swc, wr.wr.wr_id, IB_WC_SUCCESS, IB_WC_RDMA_WRITE, len,
		      a->qp, false, 0);
	if (!imm) {
		/* A zero-length SEND behind it: UC keeps the order. */
		struct ib_send_wr send = {
			.wr_id = 0x7800 + seq,
			.opcode = IB_WR_SEND,
			.send_flags = IB_SEND_SIGNALED,
		};

		ok = ok && !ib_post_send(a->qp, &send, NULL) &&
		     !kt_poll(a->scq, &swc) &&
		     kt_wc_is(&swc, 0x7800 + seq, IB_WC_SUCCESS, IB_WC_SEND, 0,
			      a->qp, false, 0);
	}
	ok = ok && !kt_poll(b->rcq, &rwc) &&
	     kt_wc_is(&rwc, 0x8000 + seq, IB_WC_SUCCESS,
		      imm ? IB_WC_RECV_RDMA_WITH_IMM : IB_WC_RECV,
		      imm ? len : 0, b->qp, imm, 0xbeef0000 + seq);
	ok = ok && kt_check(b->buf + off, len, seq, 64);
	ok = ok && memchr_inv(b->buf, KT_GUARD, off) == NULL;
	kt_result(ok, "ib_post_send %s of %u bytes to offset %u through the unsafe global rkey: CQEs exact, data exact, bytes around untouched",
		  imm ? "RDMA_WRITE_WITH_IMM" : "RDMA_WRITE", len, off);
}

/*
 * RDMA READ of @len bytes at @off of B's buffer (the unsafe global rkey)
 * into A's buffer, in 3 SGEs of the local DMA lkey.
 */
static void kt_read(struct kt_ep *a, struct kt_ep *b, u32 len, u32 off)
{
	static u32 seq = 200;
	struct ib_sge sge[KT_SGE];
	struct ib_rdma_wr wr = {
		.wr = {
			.wr_id = 0x9000 + ++seq,
			.sg_list = sge,
			.num_sge = KT_SGE,
			.opcode = IB_WR_RDMA_READ,
			.send_flags = IB_SEND_SIGNALED,
		},
		.remote_addr = b->dma + off,
		.rkey = b->pd->unsafe_global_rkey,
	};
	struct ib_wc wc;
	bool ok;

	memset(a->buf, KT_GUARD, KT_BUF);
	kt_fill(b->buf + off, len, seq);
	kt_sges(a, sge, KT_SGE, 0, len);
	ok = !ib_post_send(a->qp, &wr.wr, NULL) && !kt_poll(a->scq, &wc) &&
	     kt_wc_is(&wc, wr.wr.wr_id, IB_WC_SUCCESS, IB_WC_RDMA_READ, len,
		      a->qp, false, 0) &&
	     kt_check(a->buf, len, seq, 64);
	kt_result(ok, "ib_post_send RDMA_READ of %u bytes at offset %u through the unsafe global rkey into 3 SGEs: CQE exact, data exact, bytes after untouched",
		  len, off);
}

/* RC: what kt_datapath() does for UC, and RDMA READ. */
static void kt_rc(struct kt_ep *a, struct kt_ep *b)
{
	static const u32 sizes[] = { 0, 1, KT_MTU + 1, 16 * KT_MTU };
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;
	bool ok;
	int i;

	ok = !ib_query_qp(a->qp, &attr, IB_QP_STATE | IB_QP_TIMEOUT |
			  IB_QP_RETRY_CNT | IB_QP_RNR_RETRY |
			  IB_QP_MAX_QP_RD_ATOMIC, &init) &&
	     attr.qp_state == IB_QPS_RTS && attr.timeout == 14 &&
	     attr.retry_cnt == 7 && attr.rnr_retry == 7 &&
	     attr.max_rd_atomic == 4 && init.qp_type == IB_QPT_RC;
	kt_result(ok, "ib_query_qp of a kernel RC QP: RTS, timeout, retry counts and max_rd_atomic as set");
	for (i = 0; i < ARRAY_SIZE(sizes); i++)
		kt_send(a, b, sizes[i], 1, false);
	kt_send(a, b, 3 * KT_MTU + 5, KT_SGE, true);
	kt_write(a, b, 3 * KT_MTU + 5, 100, false);
	kt_write(a, b, 2 * KT_MTU, 8, true);
	kt_read(a, b, 3, 5);
	kt_read(a, b, 5 * KT_MTU + 3, 64);
}

static void kt_datapath(struct kt_ep *a, struct kt_ep *b)
{
	static const u32 sizes[] = {
		0, 1, KT_MTU - 1, KT_MTU, KT_MTU + 1, 3 * KT_MTU + 5,
		16 * KT_MTU,
	};
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;
	bool ok;
	int i;

	ok = !ib_query_qp(a->qp, &attr, IB_QP_STATE | IB_QP_PATH_MTU |
			  IB_QP_DEST_QPN | IB_QP_SQ_PSN, &init) &&
	     attr.qp_state == IB_QPS_RTS &&
	     attr.path_mtu == ib_mtu_int_to_enum(KT_MTU) &&
	     attr.dest_qp_num == b->qp->qp_num && attr.sq_psn == 0x123 &&
	     init.qp_type == IB_QPT_UC && init.cap.max_send_wr >= KT_WR &&
	     init.cap.max_send_sge >= KT_SGE;
	kt_result(ok, "ib_query_qp of a kernel UC QP: RTS, path MTU %u, dest QPN, SQ PSN and caps as set",
		  KT_MTU);

	for (i = 0; i < ARRAY_SIZE(sizes); i++)
		kt_send(a, b, sizes[i], 1, false);
	kt_send(a, b, 3 * KT_MTU + 5, KT_SGE, false);
	kt_send(a, b, KT_MTU + 1, KT_SGE, true);
	kt_send(a, b, 0, 1, true);
	kt_write(a, b, 1, 0, false);
	kt_write(a, b, 3 * KT_MTU + 5, 100, false);
	kt_write(a, b, 2 * KT_MTU, 8, true);
}

/*
 * Posting limits and flush, on a QP in INIT (the SQ is not processed):
 * too many SGEs and an opcode UC lacks are EINVAL with bad_wr; a full SQ
 * and RQ are ENOMEM; ERR flushes every WR in order.
 */
static void kt_posting(struct kt_ep *a)
{
	struct ib_sge sge[KT_SGE + 1];
	struct ib_send_wr wr[2], *swr;
	const struct ib_send_wr *bad;
	const struct ib_recv_wr *rbad;
	struct ib_recv_wr rwr;
	struct ib_wc wc;
	u32 nsq = 0, nrq = 0, i;
	bool ok;
	int err;

	if (kt_init(a)) {
		kt_result(false, "posting: RESET->INIT");
		return;
	}
	kt_sges(a, sge, KT_SGE + 1, 0, 64);
	memset(wr, 0, sizeof(wr));
	wr[0].wr_id = 1;
	wr[0].opcode = IB_WR_SEND;
	wr[0].sg_list = sge;
	wr[0].num_sge = 1;
	wr[0].send_flags = IB_SEND_SIGNALED;
	wr[0].next = &wr[1];
	wr[1] = wr[0];
	wr[1].wr_id = 2;
	wr[1].num_sge = a->cap.max_send_sge + 1;
	wr[1].next = NULL;
	bad = NULL;
	err = ib_post_send(a->qp, wr, &bad);
	ok = err == -EINVAL && bad == &wr[1];
	nsq += ok;			/* the first one was posted */
	kt_result(ok, "ib_post_send: num_sge %u > max_send_sge: -EINVAL, bad_wr the offending WR (got %d)",
		  a->cap.max_send_sge + 1, err);

	wr[1].num_sge = 1;
	wr[1].opcode = IB_WR_RDMA_READ;
	bad = NULL;
	err = ib_post_send(a->qp, &wr[1], &bad);
	kt_result(err == -EINVAL && bad == &wr[1],
		  "ib_post_send: RDMA_READ on a UC QP: -EINVAL, bad_wr set (got %d)",
		  err);

	swr = &wr[0];
	swr->next = NULL;
	err = 0;
	for (i = 0; i < 4 * KT_WR && !err; i++) {
		swr->wr_id = 0x100 + nsq;
		err = ib_post_send(a->qp, swr, &bad);
		nsq += !err;
	}
	ok = err == -ENOMEM && bad == swr && nsq >= KT_WR;
	kt_result(ok, "ib_post_send: a full SQ (%u WRs) returns -ENOMEM (got %d)",
		  nsq, err);

	memset(&rwr, 0, sizeof(rwr));
	rwr.sg_list = sge;
	rwr.num_sge = a->cap.max_recv_sge + 1;
	err = ib_post_recv(a->qp, &rwr, &rbad);
	kt_result(err == -EINVAL && rbad == &rwr,
		  "ib_post_recv: num_sge > max_recv_sge: -EINVAL, bad_wr set (got %d)",
		  err);
	rwr.num_sge = 1;
	err = 0;
	for (i = 0; i < 4 * KT_WR && !err; i++) {
		rwr.wr_id = 0x900 + nrq;
		err = ib_post_recv(a->qp, &rwr, &rbad);
		nrq += !err;
	}
	kt_result(err == -ENOMEM && rbad == &rwr && nrq >= KT_WR,
		  "ib_post_recv: a full RQ (%u WRs) returns -ENOMEM (got %d)",
		  nrq, err);

	ok = !kt_to_err(a);
	for (i = 0; ok && i < nsq; i++)
		ok = !kt_poll(a->scq, &wc) &&
		     kt_wc_is(&wc, i ? 0x100 + i : 1, IB_WC_WR_FLUSH_ERR, 0, 0,
			      a->qp, false, 0);
	ok = ok && kt_cq_empty(a->scq);
	kt_result(ok, "ERR flushes the %u posted send WRs in order with IB_WC_WR_FLUSH_ERR, nothing more",
		  nsq);
	for (i = 0; ok && i < nrq; i++)
		ok = !kt_poll(a->rcq, &wc) &&
		     kt_wc_is(&wc, 0x900 + i, IB_WC_WR_FLUSH_ERR, 0, 0, a->qp,
			      false, 0);
	ok = ok && kt_cq_empty(a->rcq);
	kt_result(ok, "ERR flushes the %u posted receive WRs in order with IB_WC_WR_FLUSH_ERR, nothing more",
		  nrq);
}

/* Completions delivered through ib_alloc_cq(IB_POLL_SOFTIRQ) and wr_cqe. */
struct kt_done {
	struct ib_cqe cqe;
	struct completion done;
	struct ib_wc wc;
};

static void kt_done_fn(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kt_done *d = container_of(wc->wr_cqe, struct kt_done, cqe);

	d->wc = *wc;
	complete(&d->done);
}

static void kt_softirq(struct kt_ep *a, struct kt_ep *b)
{
	struct kt_done sd, rd;
	struct ib_sge ssge, rsge;
	struct ib_send_wr wr = {
		.wr_cqe = &sd.cqe,
		.sg_list = &ssge,
		.num_sge = 1,
		.opcode = IB_WR_SEND_WITH_IMM,
		.send_flags = IB_SEND_SIGNALED,
		.ex.imm_data = cpu_to_be32(0x51c0),
	};
	struct ib_recv_wr rwr = {
		.wr_cqe = &rd.cqe,
		.sg_list = &rsge,
		.num_sge = 1,
	};
	bool ok;
	int round;

	for (round = 0; round < 3; round++) {
		sd.cqe.done = kt_done_fn;
		rd.cqe.done = kt_done_fn;
		init_completion(&sd.done);
		init_completion(&rd.done);
		memset(b->buf, KT_GUARD, KT_BUF);
		kt_fill(a->buf, 2 * KT_MTU + 3, round);
		kt_sges(a, &ssge, 1, 0, 2 * KT_MTU + 3);
		kt_sges(b, &rsge, 1, 0, 4 * KT_MTU);
		ok = !ib_post_recv(b->qp, &rwr, NULL) &&
		     !ib_post_send(a->qp, &wr, NULL) &&
		     wait_for_completion_timeout(&sd.done, KT_TIMEOUT) &&
		     wait_for_completion_timeout(&rd.done, KT_TIMEOUT);
		ok = ok && sd.wc.status == IB_WC_SUCCESS &&
		     sd.wc.opcode == IB_WC_SEND && rd.wc.status == IB_WC_SUCCESS &&
		     rd.wc.opcode == IB_WC_RECV &&
		     rd.wc.byte_len == 2 * KT_MTU + 3 &&
		     (rd.wc.wc_flags & IB_WC_WITH_IMM) &&
		     rd.wc.ex.imm_data == cpu_to_be32(0x51c0) &&
		     kt_check(b->buf, 2 * KT_MTU + 3, round, 64);
		if (!ok)
			break;
	}
	kt_result(ok, "ib_alloc_cq(IB_POLL_SOFTIRQ): 3 rounds of SEND_WITH_IMM, each completion handler called with the exact CQE (CQ armed and re-armed)");
}

/* rdma_create_ah from @a's GID to @dgid must fail with -EINVAL. */
static void kt_refuse_ah(struct kt_ep *a, struct rdma_ah_attr *attr,
			 union ib_gid *dgid, const char *what)
{
	struct ib_ah *ah;

	rdma_ah_set_grh(attr, dgid, 0, a->sgid_index, 64, 0);
	ah = rdma_create_ah(a->pd, attr, RDMA_CREATE_AH_SLEEPABLE);
	kt_result(PTR_ERR_OR_ZERO(ah) == -EINVAL,
		  "rdma_create_ah %s: -EINVAL (got %d)", what,
		  (int)PTR_ERR_OR_ZERO(ah));
	if (!IS_ERR(ah))
		rdma_destroy_ah(ah, RDMA_DESTROY_AH_SLEEPABLE);
}

/*
 * Address handles: created and destroyed in atomic context (no
 * RDMA_CREATE_AH_SLEEPABLE), query returns the path; paths snaa cannot
 * use are -EINVAL.
 */
static void kt_ah(struct kt_ep *a, struct kt_ep *b)
{
	struct rdma_ah_attr attr = {}, q = {};
	static DEFINE_SPINLOCK(lock);
	const struct ib_global_route *grh;
	union ib_gid gid;
	struct ib_ah *ah;
	bool ok;
	int err;

	attr.type = rdma_ah_find_type(a->dev, 1);
	rdma_ah_set_port_num(&attr, 1);
	rdma_ah_set_grh(&attr, &b->gid, 0x12345, a->sgid_index, 17, 0x28);

	spin_lock(&lock);
	ah = rdma_create_ah(a->pd, &attr, 0);
	spin_unlock(&lock);
	ok = !IS_ERR(ah);
	kt_result(ok, "rdma_create_ah (not sleepable) under a spinlock: %d",
		  ok ? 0 : (int)PTR_ERR(ah));
	if (!ok)
		return;

	err = rdma_query_ah(ah, &q);
	grh = rdma_ah_read_grh(&q);
	ok = !err && q.type == attr.type && rdma_ah_get_port_num(&q) == 1 &&
	     (rdma_ah_get_ah_flags(&q) & IB_AH_GRH) &&
	     !memcmp(grh->dgid.raw, b->gid.raw, sizeof(gid)) &&
	     grh->flow_label == 0x12345 && grh->sgid_index == a->sgid_index &&
	     grh->hop_limit == 17 && grh->traffic_class == 0x28;
	spin_lock(&lock);
	rdma_destroy_ah(ah, 0);
	spin_unlock(&lock);
	kt_result(ok, "rdma_query_ah returns the dgid, sgid index, flow label, hop limit and traffic class it was created with (err %d); destroyed under a spinlock",
		  err);

	/* Multicast destination (::ffff:224.0.0.1): snaa has no multicast. */
	memset(&gid, 0, sizeof(gid));
	gid.raw[10] = 0xff;
	gid.raw[11] = 0xff;
	gid.raw[12] = 224;
	gid.raw[15] = 1;
	kt_refuse_ah(a, &attr, &gid, "to a multicast GID");

	/* An IPv6 destination (2001:db8::2) from an IPv4 source GID. */
	memset(&gid, 0, sizeof(gid));
	gid.raw[0] = 0x20;
	gid.raw[1] = 0x01;
	gid.raw[2] = 0x0d;
	gid.raw[3] = 0xb8;
	gid.raw[15] = 2;
	kt_refuse_ah(a, &attr, &gid, "from an IPv4 GID to an IPv6 GID");
}

/*
 * A completion handler that reposts a receive WR for every receive
 * completion it polls, from inside the handler: what a kernel ULP does.
 * snaa must call it with none of the QP's locks held.
 */
#define KT_REPOST_N	8

static struct {
	atomic_t recvs, reposted, errors;
	struct completion done;
} kt_rp;

static void kt_repost_handler(struct ib_cq *cq, void *ctx)
{
	struct kt_ep *b = ctx;
	struct ib_wc wc;

	do {
		while (ib_poll_cq(cq, 1, &wc) == 1) {
			if (wc.status != IB_WC_SUCCESS ||
			    kt_post_recv(b, 0x7100 + wc.wr_id, 1, 64))
				atomic_inc(&kt_rp.errors);
			else
				atomic_inc(&kt_rp.reposted);
			if (atomic_inc_return(&kt_rp.recvs) == KT_REPOST_N)
				complete(&kt_rp.done);
		}
	} while (ib_req_notify_cq(cq, IB_CQ_NEXT_COMP |
				  IB_CQ_REPORT_MISSED_EVENTS) > 0);
}

static void kt_repost(struct kt_ep *a, struct kt_ep *b)
{
	struct ib_sge sge;
	struct ib_send_wr wr = {
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
	};
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;
	struct ib_wc wc;
	bool ok;
	int i;

	atomic_set(&kt_rp.recvs, 0);
	atomic_set(&kt_rp.reposted, 0);
	atomic_set(&kt_rp.errors, 0);
	init_completion(&kt_rp.done);
	ok = !kt_post_recv(b, 0, 1, 64) && !kt_post_recv(b, 1, 1, 64) &&
	     !ib_req_notify_cq(b->rcq, IB_CQ_NEXT_COMP);
	kt_fill(a->buf, 64, 0x7100);
	kt_sges(a, &sge, 1, 0, 64);
	for (i = 0; ok && i < KT_REPOST_N; i++) {
		wr.wr_id = 0x7000 + i;
		ok = !ib_post_send(a->qp, &wr, NULL) && !kt_poll(a->scq, &wc) &&
		     wc.status == IB_WC_SUCCESS;
	}
	ok = ok && wait_for_completion_timeout(&kt_rp.done, KT_TIMEOUT);
	ok = ok && !atomic_read(&kt_rp.errors) &&
	     atomic_read(&kt_rp.reposted) == KT_REPOST_N &&
	     !ib_query_qp(b->qp, &attr, IB_QP_STATE, &init) &&
	     attr.qp_state == IB_QPS_RTS;
	kt_result(ok, "a completion handler that polls and reposts a receive WR from inside the handler: %d SENDs received, %d reposted, %d errors, QP still RTS",
		  atomic_read(&kt_rp.recvs), atomic_read(&kt_rp.reposted),
		  atomic_read(&kt_rp.errors));
}

/* Open both ends, connect them, run @fn, close. */
static void kt_srq_event(struct ib_event *ev, void *ctx)
{
	if (ev->event == IB_EVENT_SRQ_LIMIT_REACHED)
		atomic_inc((atomic_t *)ctx);
}

/*
 * A kernel SRQ on B: a second QP pair whose B side takes its receive
 * WQEs from the SRQ; two SENDs consume the two WQEs posted with
 * ib_post_srq_recv in order, the armed limit fires its event once.
 */
static void kt_srq(struct kt_ep *a, struct kt_ep *b)
{
	struct ib_srq_init_attr sinit = {
		.event_handler = kt_srq_event,
		.attr = { .max_wr = 4, .max_sge = 1, .srq_limit = 2 },
		.srq_type = IB_SRQT_BASIC,
	};
	struct ib_qp_init_attr init = {
		.qp_type = kt_qpt,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = { .max_send_wr = 4, .max_send_sge = 1,
			 .max_recv_wr = 4, .max_recv_sge = 1 },
	};
	struct kt_ep a2 = *a, b2 = *b;
	struct ib_sge sge;
	struct ib_recv_wr rwr = { .sg_list = &sge, .num_sge = 1 };
	struct ib_send_wr swr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
	};
	struct ib_srq *srq;
	struct ib_wc wc;
	atomic_t limit_events = ATOMIC_INIT(0);
	bool ok;
	int i;

	sinit.srq_context = &limit_events;
	srq = ib_create_srq(b->pd, &sinit);
	if (IS_ERR(srq)) {
		kt_diag("ib_create_srq: %ld", PTR_ERR(srq));
		kt_result(false, "SRQ: created");
		return;
	}
	init.send_cq = a->scq;
	init.recv_cq = a->rcq;
	a2.qp = ib_create_qp(a->pd, &init);
	init.send_cq = b->scq;
	init.recv_cq = b->rcq;
	init.srq = srq;
	init.cap.max_recv_wr = 0;
	init.cap.max_recv_sge = 0;
	b2.qp = ib_create_qp(b->pd, &init);
	ok = !IS_ERR(a2.qp) && !IS_ERR(b2.qp) && !kt_init(&a2) &&
	     !kt_init(&b2) && !kt_connect(&a2, &b2) && !kt_connect(&b2, &a2);
	kt_result(ok, "SRQ: a %s QP on an SRQ of %u WRs, connected",
		  kt_qpt == IB_QPT_RC ? "RC" : "UC", sinit.attr.max_wr);
	memset(b->buf, KT_GUARD, KT_BUF);
	for (i = 0; ok && i < 2; i++) {
		kt_sges(b, &sge, 1, 1024 * i, 512);
		rwr.wr_id = 0x7100 + i;
		ok = !ib_post_srq_recv(srq, &rwr, NULL);
	}
	for (i = 0; ok && i < 2; i++) {
		kt_fill(a->buf, 100 + i, 0x71 + i);
		kt_sges(a, &sge, 1, 0, 100 + i);
		swr.wr_id = 0x7200 + i;
		ok = !ib_post_send(a2.qp, &swr, NULL) && !kt_poll(a->scq, &wc) &&
		     !kt_poll(b->rcq, &wc) &&
		     kt_wc_is(&wc, 0x7100 + i, IB_WC_SUCCESS, IB_WC_RECV,
			      100 + i, b2.qp, false, 0) &&
		     kt_check(b->buf + 1024 * i, 100 + i, 0x71 + i, 64);
	}
	kt_result(ok, "SRQ: ib_post_srq_recv WRs are consumed in order, each byte exact");
	ok = atomic_read(&limit_events) == 1;
	if (!ok)
		kt_diag("%d limit events", atomic_read(&limit_events));
	kt_result(ok, "SRQ: the armed limit of 2 fired IB_EVENT_SRQ_LIMIT_REACHED once");
	if (!IS_ERR(b2.qp))
		ib_destroy_qp(b2.qp);
	if (!IS_ERR(a2.qp))
		ib_destroy_qp(a2.qp);
	ib_destroy_srq(srq);
}

/* Post @wr on @ep's QP and wait for its CQE; is it @status/@opcode? */
static bool kt_post_wait(struct kt_ep *ep, struct ib_send_wr *wr,
			 enum ib_wc_status status, enum ib_wc_opcode opcode,
			 u32 byte_len)
{
	struct ib_wc wc;

	wr->send_flags |= IB_SEND_SIGNALED;
	return !ib_post_send(ep->qp, wr, NULL) && !kt_poll(ep->scq, &wc) &&
	       kt_wc_is(&wc, wr->wr_id, status, opcode, byte_len, ep->qp,
			false, 0);
}

/* Register @len bytes at @off of B's buffer with @mr under a new key. */
static bool kt_fr_reg(struct kt_ep *b, struct ib_mr *mr,
		      struct scatterlist *sg, u32 off, u32 len)
{
	struct ib_reg_wr reg = {
		.wr = { .wr_id = 0xf000, .opcode = IB_WR_REG_MR },
		.mr = mr,
		.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
			  IB_ACCESS_REMOTE_READ,
	};
	int n;

	sg_init_one(sg, b->buf + off, len);
	if (ib_dma_map_sg(b->dev, sg, 1, DMA_BIDIRECTIONAL) != 1)
		return false;
	n = ib_map_mr_sg(mr, sg, 1, NULL, PAGE_SIZE);
	if (n != 1 || mr->iova != sg_dma_address(sg) || mr->length != len) {
		kt_diag("ib_map_mr_sg: %d, iova %#llx length %llu", n, mr->iova,
			mr->length);
		return false;
	}
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
	reg.key = mr->rkey;
	return kt_post_wait(b, &reg.wr, IB_WC_SUCCESS, IB_WC_REG_MR, 0);
}

/* A writes @len bytes at @off of B's buffer through @rkey. */
static bool kt_fr_write(struct kt_ep *a, struct kt_ep *b, u32 rkey, u32 off,
			u32 len, enum ib_wc_status status, u32 seed)
{
	struct ib_sge sge;
	struct ib_rdma_wr wr = {
		.wr = {
			.wr_id = 0xf100 + seed,
			.sg_list = &sge,
			.num_sge = 1,
			.opcode = IB_WR_RDMA_WRITE,
		},
		.remote_addr = b->dma + off,
		.rkey = rkey,
	};

	memset(b->buf, KT_GUARD, KT_BUF);
	kt_fill(a->buf, len, seed);
	kt_sges(a, &sge, 1, 0, len);
	if (!kt_post_wait(a, &wr.wr, status, IB_WC_RDMA_WRITE, len))
		return false;
	return status != IB_WC_SUCCESS ||
	       (kt_check(b->buf + off, len, seed, 64) &&
		!memchr_inv(b->buf, KT_GUARD, off));
}

/*
 * Fast registration as NVMe-oF and RDS use it: ib_alloc_mr(), then per
 * I/O ib_map_mr_sg() + IB_WR_REG_MR under a new key, remote access, and
 * IB_WR_LOCAL_INV or a SEND with invalidate from the peer.
 */
static void kt_fastreg(struct kt_ep *a, struct kt_ep *b)
{
	struct ib_send_wr inv = { .wr_id = 0xf200, .opcode = IB_WR_LOCAL_INV };
	struct ib_send_wr sinv = {
		.wr_id = 0xf300, .opcode = IB_WR_SEND_WITH_INV,
	};
	struct ib_device_attr *da = &b->dev->attrs;
	struct scatterlist sg;
	struct ib_wc wc;
	struct ib_mr *mr;
	u32 key;
	bool ok;

	ok = (da->device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS) &&
	     da->max_fast_reg_page_list_len == 65536;
	kt_result(ok, "fast registration: device attributes announce MEM_MGT_EXTENSIONS, 65536 pages per MR");
	mr = ib_alloc_mr(b->pd, IB_MR_TYPE_MEM_REG, 4);
	kt_result(!IS_ERR(mr), "ib_alloc_mr(MEM_REG, 4 pages)");
	if (IS_ERR(mr))
		return;

	ok = kt_fr_reg(b, mr, &sg, 100, 3 * PAGE_SIZE);
	kt_result(ok, "IB_WR_REG_MR of 3 pages at offset 100 under a new key byte: CQE IB_WC_REG_MR");
	ok = ok && kt_fr_write(a, b, mr->rkey, 150, 5000, IB_WC_SUCCESS, 1) &&
	     kt_fr_write(a, b, mr->rkey, 100, 3 * PAGE_SIZE, IB_WC_SUCCESS, 2);
	kt_result(ok, "RDMA WRITE through the registration (5000 bytes inside, then all of it): data exact, bytes around untouched");

	inv.ex.invalidate_rkey = mr->rkey;
	ok = kt_post_wait(b, &inv, IB_WC_SUCCESS, IB_WC_LOCAL_INV, 0);
	kt_result(ok, "IB_WR_LOCAL_INV of the key: CQE IB_WC_LOCAL_INV");
	ib_dma_unmap_sg(b->dev, &sg, 1, DMA_BIDIRECTIONAL);

	ok = kt_fr_reg(b, mr, &sg, 4096, 2 * PAGE_SIZE) &&
	     kt_fr_write(a, b, mr->rkey, 4096 + 10, 3000, IB_WC_SUCCESS, 3);
	kt_result(ok, "registered again at another range under the next key: RDMA WRITE exact");

	/* SEND with invalidate: B's receive CQE names the key */
	key = mr->rkey;
	sinv.ex.invalidate_rkey = key;
	ok = !kt_post_recv(b, 0xf400, 1, 64) &&
	     kt_post_wait(a, &sinv, IB_WC_SUCCESS, IB_WC_SEND, 0) &&
	     !kt_poll(b->rcq, &wc) &&
	     kt_wc_is(&wc, 0xf400, IB_WC_SUCCESS, IB_WC_RECV, 0, b->qp, false,
		      0) &&
	     (wc.wc_flags & IB_WC_WITH_INVALIDATE) &&
	     wc.ex.invalidate_rkey == key;
	kt_result(ok, "IB_WR_SEND_WITH_INV from A: B's receive CQE has IB_WC_WITH_INVALIDATE and the key");
	ib_dma_unmap_sg(b->dev, &sg, 1, DMA_BIDIRECTIONAL);

	/* The key is dead: the access fails and both QPs go to ERR. */
	ok = kt_fr_write(a, b, key, 4096 + 10, 100, IB_WC_REM_ACCESS_ERR, 4);
	kt_result(ok, "RDMA WRITE through the invalidated key: IB_WC_REM_ACCESS_ERR");
	kt_result(!ib_dereg_mr(mr), "ib_dereg_mr of the fast-registration MR");
}

static void kt_pair_rcomp(const char *what, bool softirq,
			  ib_comp_handler rcomp,
			  void (*fn)(struct kt_ep *a, struct kt_ep *b))
{
	struct kt_ep a, b;
	bool ok;

	kt_diag("%s: %s (%s) -> %s (%s)", what, dev_a, addr_a, dev_b, addr_b);
	ok = !kt_ep_open(&a, dev_a, addr_a, 0, softirq, NULL);
	ok = !kt_ep_open(&b, dev_b, addr_b, IB_PD_UNSAFE_GLOBAL_RKEY,
			 softirq, rcomp) && ok;
	ok = ok && b.pd->unsafe_global_rkey && a.pd->local_dma_lkey &&
	     !kt_init(&a) && !kt_init(&b) && !kt_connect(&a, &b) &&
	     !kt_connect(&b, &a);
	kt_result(ok, "%s: PDs (DMA MRs), CQs and %s QPs created and connected",
		  what, kt_qpt == IB_QPT_RC ? "RC" : "UC");
	if (ok)
		fn(&a, &b);
	kt_ep_close(&b);
	kt_ep_close(&a);
}

static void kt_pair(const char *what, bool softirq,
		    void (*fn)(struct kt_ep *a, struct kt_ep *b))
{
	kt_pair_rcomp(what, softirq, NULL, fn);
}

/*
 * UD sends that must fail leave nothing behind: an inline SEND longer
 * than max_inline_data, and one whose SGE lengths add up past 2^32 to a
 * length that would fit (in 32 bits the copy would overrun the slot by
 * 4 GiB), are refused before the WR takes a slot or a reference to its
 * AH (kmemleak, on the debug kernel, sees an AH path left referenced).
 * A valid inline SEND through the same AH is then taken and flushed.
 */
static void kt_ud_posting(struct kt_ep *a)
{
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_INIT, .port_num = 1, .qkey = 0x11111111,
	};
	struct rdma_ah_attr ah_attr = {};
	const struct ib_send_wr *bad;
	struct ib_ud_wr ud = {};
	struct ib_sge sge[2];
	struct ib_wc wc;
	struct ib_ah *ah;
	int err;
	bool ok;

	if (kt_modify(a, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT |
		      IB_QP_QKEY, "RESET->INIT")) {
		kt_result(false, "UD posting: RESET->INIT");
		return;
	}
	ah_attr.type = rdma_ah_find_type(a->dev, 1);
	rdma_ah_set_port_num(&ah_attr, 1);
	rdma_ah_set_grh(&ah_attr, &a->gid, 0, a->sgid_index, 64, 0);
	ah = rdma_create_ah(a->pd, &ah_attr, RDMA_CREATE_AH_SLEEPABLE);
	if (IS_ERR(ah)) {
		kt_result(false, "UD posting: rdma_create_ah: %d",
			  (int)PTR_ERR(ah));
		return;
	}
	sge[0] = (struct ib_sge){ .addr = (uintptr_t)a->buf,
				  .length = a->cap.max_inline_data + 1 };
	sge[1] = (struct ib_sge){ .addr = (uintptr_t)a->buf, .length = 2 };
	ud.wr.wr_id = 1;
	ud.wr.opcode = IB_WR_SEND;
	ud.wr.sg_list = sge;
	ud.wr.num_sge = 1;
	ud.wr.send_flags = IB_SEND_INLINE | IB_SEND_SIGNALED;
	ud.ah = ah;
	ud.remote_qpn = a->qp->qp_num;
	ud.remote_qkey = 0x11111111;
	bad = NULL;
	err = ib_post_send(a->qp, &ud.wr, &bad);
	kt_result(err == -EINVAL && bad == &ud.wr,
		  "UD inline SEND of max_inline_data %u + 1 bytes: -EINVAL, bad_wr set (got %d)",
		  a->cap.max_inline_data, err);

	sge[0].length = U32_MAX;	/* + 2: 1 in 32 bits */
	ud.wr.num_sge = 2;
	bad = NULL;
	err = ib_post_send(a->qp, &ud.wr, &bad);
	kt_result(err == -EINVAL && bad == &ud.wr,
		  "UD inline SEND of SGEs of 2^32 - 1 and 2 bytes (1 in 32 bits): -EINVAL, nothing copied (got %d)",
		  err);

	sge[0].length = 8;
	ud.wr.num_sge = 1;
	ud.wr.wr_id = 2;
	err = ib_post_send(a->qp, &ud.wr, &bad);
	ok = !err && !kt_to_err(a) && !kt_poll(a->scq, &wc) &&
	     kt_wc_is(&wc, 2, IB_WC_WR_FLUSH_ERR, 0, 0, a->qp, false, 0) &&
	     kt_cq_empty(a->scq);
	kt_result(ok, "then an 8-byte UD inline SEND through the same AH is taken (err %d) and flushed once, first (the refused ones took no slot)",
		  err);
	rdma_destroy_ah(ah, RDMA_DESTROY_AH_SLEEPABLE);
}

static void kt_single(const char *what, void (*fn)(struct kt_ep *a))
{
	struct kt_ep a;

	if (kt_ep_open(&a, dev_a, addr_a, 0, false, NULL)) {
		kt_result(false, "%s: setup", what);
		kt_ep_close(&a);
		return;
	}
	fn(&a);
	kt_ep_close(&a);
}

static int __init snaa_ktest_init(void)
{
	pr_info("KTAP version 1\n");
	kt_pair("polled CQs", false, kt_datapath);
	kt_pair("softirq CQs", true, kt_softirq);
	kt_single("posting", kt_posting);
	kt_pair("address handles", false, kt_ah);
	kt_pair_rcomp("repost from the completion handler", false,
		      kt_repost_handler, kt_repost);
	kt_pair("SRQ", false, kt_srq);
	kt_qpt = IB_QPT_RC;
	kt_pair("RC", false, kt_rc);
	kt_pair("RC, softirq CQs", true, kt_softirq);
	kt_pair("RC SRQ", false, kt_srq);
	kt_pair("RC fast registration", false, kt_fastreg);
	kt_qpt = IB_QPT_UD;
	kt_inline = 64;
	kt_single("UD posting", kt_ud_posting);
	kt_inline = 0;
	kt_qpt = IB_QPT_UC;
	pr_info("1..%d\n", kt_num);
	pr_info("# %d passed, %d failed\n", kt_num - kt_failed, kt_failed);
	return kt_failed ? -EINVAL : 0;
}

static void __exit snaa_ktest_exit(void)
{
}

module_init(snaa_ktest_init);
module_exit(snaa_ktest_exit);

MODULE_AUTHOR("The snaa authors");
MODULE_DESCRIPTION("snaa in-kernel consumer test");
MODULE_LICENSE("Dual BSD/GPL");
