// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libnaaice core: context lifetime, verbs resources, posting, and the
 * one place that waits (naaice_wait_until).  Waiting never loses a
 * wake-up: the CQ is polled, re-armed, and polled again before sleeping
 * on the completion channel, and the rdma_cm event channel is watched at
 * the same time, so a peer that goes away ends the wait too.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "naaice_int.h"

static const char *const naaice_state_names[] = {
	[INIT] = "INIT", [READY] = "READY", [CONNECTED] = "CONNECTED",
	[DISCONNECTED] = "DISCONNECTED", [MRSP_SENDING] = "MRSP_SENDING",
	[MRSP_RECEIVING] = "MRSP_RECEIVING", [MRSP_DONE] = "MRSP_DONE",
	[DATA_SENDING] = "DATA_SENDING", [CALCULATING] = "CALCULATING",
	[DATA_RECEIVING] = "DATA_RECEIVING", [FINISHED] = "FINISHED",
	[ERROR] = "ERROR",
};

const char *naaice_state_name(enum naaice_communication_state state)
{
	if ((unsigned int)state < sizeof(naaice_state_names) /
				  sizeof(naaice_state_names[0]) &&
	    naaice_state_names[state])
		return naaice_state_names[state];
	return "?";
}

const char *naaice_mrsp_error_str(uint8_t code)
{
	switch (code) {
	case NAAICE_MRSP_ENOMEM:
		return "not enough memory available";
	case NAAICE_MRSP_EADDR:
		return "invalid address";
	case NAAICE_MRSP_ETOOMANY:
		return "too many regions requested";
	}
	return "unknown MRSP error";
}

const char *naaice_error_str(enum naaice_error err)
{
	switch (err) {
	case NAAICE_OK: return "success";
	case NAAICE_ERR_SYSTEM: return "system error";
	case NAAICE_ERR_CONNECT: return "connection failed";
	case NAAICE_ERR_TIMEOUT: return "timed out";
	case NAAICE_ERR_DISCONNECTED: return "peer disconnected";
	case NAAICE_ERR_MRSP: return "memory region setup refused";
	case NAAICE_ERR_PROTOCOL: return "protocol error";
	case NAAICE_ERR_REMOTE: return "NAA returned an error";
	case NAAICE_ERR_TRANSFER: return "data transfer failed";
	case NAAICE_ERR_USAGE: return "invalid argument";
	case NAAICE_ERR_CANCELLED: return "cancelled";
	}
	return "?";
}

int naaice_wire_parse(const char *s, enum naaice_wire *wire)
{
	if (!strcmp(s, "spec"))
		*wire = NAAICE_WIRE_SPEC;
	else if (!strcmp(s, "upstream"))
		*wire = NAAICE_WIRE_UPSTREAM;
	else
		return -1;
	return 0;
}

const char *naaice_wire_name(enum naaice_wire wire)
{
	return wire == NAAICE_WIRE_UPSTREAM ? "upstream" : "spec";
}

int naaice_set_wire(struct naaice_communication_context *ctx,
		    enum naaice_wire wire)
{
	if (!ctx || ctx->state >= MRSP_SENDING ||
	    (wire != NAAICE_WIRE_SPEC && wire != NAAICE_WIRE_UPSTREAM))
		return -1;
	ctx->wire = wire;
	return 0;
}

int naaice_fail(struct naaice_communication_context *ctx,
		enum naaice_error err)
{
	ctx->last_error = err;
	return -1;
}

struct naaice_communication_context *naaice_ctx_alloc(void)
{
	struct naaice_communication_context *ctx = calloc(1, sizeof(*ctx));

	if (!ctx)
		return NULL;
	ctx->mr_local_message = calloc(1, sizeof(*ctx->mr_local_message));
	if (ctx->mr_local_message) {
		/* receive half, then send half */
		ctx->mr_local_message->size = 2 * NAAICE_MRSP_BUF_LEN;
		ctx->mr_local_message->addr =
			calloc(1, ctx->mr_local_message->size);
	}
	if (!ctx->mr_local_message || !ctx->mr_local_message->addr) {
		if (ctx->mr_local_message)
			free(ctx->mr_local_message);
		free(ctx);
		return NULL;
	}
	ctx->state = INIT;
	ctx->timeout_ms = NAAICE_DEFAULT_TIMEOUT_MS;
	ctx->max_mrs = MAX_MRS;
	ctx->mem_limit = 1ULL << 30;
	return ctx;
}

static int naaice_set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

int naaice_create_resources(struct naaice_communication_context *ctx)
{
	struct ibv_qp_init_attr attr = {
		.cap = {
			.max_send_wr = NAAICE_SQ_DEPTH,
			.max_recv_wr = NAAICE_RQ_DEPTH,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
	};

	ctx->ibv_ctx = ctx->id->verbs;
	ctx->pd = ibv_alloc_pd(ctx->ibv_ctx);
	if (!ctx->pd) {
		naaice_err("cannot allocate a protection domain: %s",
			   strerror(errno));
		return naaice_fail(ctx, NAAICE_ERR_SYSTEM);
	}
	ctx->comp_channel = ibv_create_comp_channel(ctx->ibv_ctx);
	if (!ctx->comp_channel ||
	    naaice_set_nonblock(ctx->comp_channel->fd)) {
		naaice_err("cannot create a completion channel: %s",
			   strerror(errno));
		return naaice_fail(ctx, NAAICE_ERR_SYSTEM);
	}
	ctx->cq = ibv_create_cq(ctx->ibv_ctx,
				NAAICE_SQ_DEPTH + NAAICE_RQ_DEPTH, NULL,
				ctx->comp_channel, 0);
	if (!ctx->cq) {
		naaice_err("cannot create a completion queue: %s",
			   strerror(errno));
		return naaice_fail(ctx, NAAICE_ERR_SYSTEM);
	}
	attr.send_cq = ctx->cq;
	attr.recv_cq = ctx->cq;
	if (rdma_create_qp(ctx->id, ctx->pd, &attr)) {
		naaice_err("cannot create an RC queue pair: %s",
			   strerror(errno));
		return naaice_fail(ctx, NAAICE_ERR_SYSTEM);
	}
	ctx->qp = ctx->id->qp;
	ctx->mr_local_message->ibv =
		ibv_reg_mr(ctx->pd, ctx->mr_local_message->addr,
			   ctx->mr_local_message->size, IBV_ACCESS_LOCAL_WRITE);
	if (!ctx->mr_local_message->ibv) {
		naaice_err("cannot register the MRSP buffer: %s",
			   strerror(errno));
		return naaice_fail(ctx, NAAICE_ERR_SYSTEM);
	}
	return 0;
}

void naaice_destroy(struct naaice_communication_context *ctx)
{
	if (ctx->qp)
		rdma_destroy_qp(ctx->id);
	ctx->qp = NULL;
	for (unsigned int i = 0; ctx->mr_local_data && i < ctx->no_local_mrs;
	     i++) {
		struct naaice_mr_local *l = &ctx->mr_local_data[i];

		if (l->ibv)
			ibv_dereg_mr(l->ibv);
		/* the client's parameters belong to the caller */
		if (ctx->is_server || i == 0)
			free(l->addr);
	}
	free(ctx->mr_local_data);
	for (unsigned int i = 0; ctx->mr_internal && i < ctx->no_internal_mrs;
	     i++)
		if (ctx->is_server)
			free(ctx->mr_internal[i].addr);
	free(ctx->mr_internal);
	free(ctx->mr_peer_data);
	if (ctx->mr_local_message) {
		if (ctx->mr_local_message->ibv)
			ibv_dereg_mr(ctx->mr_local_message->ibv);
		free(ctx->mr_local_message->addr);
		free(ctx->mr_local_message);
	}
	if (ctx->cq)
		ibv_destroy_cq(ctx->cq);
	if (ctx->comp_channel)
		ibv_destroy_comp_channel(ctx->comp_channel);
	if (ctx->pd)
		ibv_dealloc_pd(ctx->pd);
	if (ctx->id)
		rdma_destroy_id(ctx->id);
	if (ctx->listen_id)
		rdma_destroy_id(ctx->listen_id);
	if (ctx->ev_channel)
		rdma_destroy_event_channel(ctx->ev_channel);
	free(ctx);
}

int naaice_post_recv(struct naaice_communication_context *ctx,
		     enum naaice_wrid id)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)ctx->mr_local_message->addr,
		.length = NAAICE_MRSP_BUF_LEN,
		.lkey = ctx->mr_local_message->ibv->lkey,
	};
	/* A WRITE_WITH_IMM consumes a receive but puts no data there. */
	struct ibv_recv_wr wr = {
		.wr_id = id,
		.sg_list = &sge,
		.num_sge = id == NAAICE_WRID_MRSP_RECV ? 1 : 0,
	}, *bad;
	int rc = ibv_post_recv(ctx->qp, &wr, &bad);

	if (rc) {
		naaice_err("posting a receive failed: %s", strerror(rc));
		return naaice_fail(ctx, NAAICE_ERR_SYSTEM);
	}
	return 0;
}

int naaice_post_mrsp(struct naaice_communication_context *ctx,
		     const struct naaice_mrsp_msg *m)
{
	uint8_t *buf = (uint8_t *)ctx->mr_local_message->addr +
		       NAAICE_MRSP_BUF_LEN;
	int len = naaice_mrsp_encode(m, buf, NAAICE_MRSP_BUF_LEN);
	struct ibv_sge sge;
	struct ibv_send_wr wr = { 0 }, *bad;
	int rc;

	if (len < 0) {
		naaice_err("MRSP message does not fit");
		return naaice_fail(ctx, NAAICE_ERR_USAGE);
	}
	sge.addr = (uintptr_t)buf;
	sge.length = (uint32_t)len;
	sge.lkey = ctx->mr_local_message->ibv->lkey;
	wr.wr_id = NAAICE_WRID_MRSP_SEND;
	wr.opcode = IBV_WR_SEND;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	/* The public implementations arm their CQs solicited-only. */
	wr.send_flags = IBV_SEND_SOLICITED;
	ctx->mrsp_sent = false;
	rc = ibv_post_send(ctx->qp, &wr, &bad);
	if (rc) {
		naaice_err("posting the MRSP message failed: %s",
			   strerror(rc));
		return naaice_fail(ctx, NAAICE_ERR_SYSTEM);
	}
	return 0;
}

/* Poll and handle what the CQ holds; the number handled, or -1. */
int naaice_poll_cq_once(struct naaice_communication_context *ctx)
{
	struct ibv_wc wc[16];
	int n, total = 0, err = 0;

	do {
		n = ibv_poll_cq(ctx->cq, 16, wc);
		if (n < 0) {
			naaice_err("polling the completion queue failed");
			return naaice_fail(ctx, NAAICE_ERR_SYSTEM);
		}
		/* Handle the whole batch even after an error: keeps the
		 * accounting of the others straight. */
		for (int i = 0; i < n; i++) {
			int r = ctx->is_server ?
				naaice_swnaa_handle_work_completion(&wc[i], ctx) :
				naaice_handle_work_completion(&wc[i], ctx);
			if (r && !err) {
				err = 1;
			}
		}
		total += n;
		ctx->completions += (unsigned int)n;
	} while (n == 16);
	return err ? -1 : total;
}

static long long naaice_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int naaice_handle_cm_async(struct naaice_communication_context *ctx,
			   struct rdma_cm_event *ev)
{
	switch (ev->event) {
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		ctx->state = DISCONNECTED;
		return naaice_fail(ctx, NAAICE_ERR_DISCONNECTED);
	default:
		return 0;
	}
}

/* The rdma_cm event channel of @ctx, non-blocking. */
int naaice_cm_channel(struct naaice_communication_context *ctx)
{
	ctx->ev_channel = rdma_create_event_channel();
	if (!ctx->ev_channel || naaice_set_nonblock(ctx->ev_channel->fd)) {
		naaice_err("cannot create an rdma_cm event channel: %s "
			   "(is rdma_ucm loaded?)", strerror(errno));
		return naaice_fail(ctx, NAAICE_ERR_SYSTEM);
	}
	return 0;
}

/*
 * A failed work completion ends the connection's transfers: -1 (the
 * context in ERROR, NAAICE_ERR_TRANSFER), or 0 if @wc succeeded.  A
 * flushed WR is no news of its own: the error that flushed it was said.
 */
int naaice_wc_failed(struct naaice_communication_context *ctx,
		     const struct ibv_wc *wc)
{
	if (wc->status == IBV_WC_SUCCESS)
		return 0;
	if (wc->status != IBV_WC_WR_FLUSH_ERR)
		naaice_err("work request %llu failed: %s",
			   (unsigned long long)wc->wr_id,
			   ibv_wc_status_str(wc->status));
	ctx->state = ERROR;
	return naaice_fail(ctx, NAAICE_ERR_TRANSFER);
}

/* Disconnect (if connected) and free everything of @ctx. */
void naaice_close(struct naaice_communication_context *ctx)
{
	if (!ctx)
		return;
	if (ctx->qp && ctx->state != DISCONNECTED && ctx->state >= CONNECTED)
		rdma_disconnect(ctx->id);
	naaice_destroy(ctx);
}

/**
 * naaice_post_writes() - post the RDMA WRITEs of one transfer
 * @ctx: the connection, its peer's regions known (MRSP done)
 * @w: which local regions go where, and the immediate
 *
 * One WRITE per selected local region, chained; the last one is a WRITE
 * WITH IMM, SOLICITED, carrying @w->imm, which wakes the peer.  With no
 * region selected, that is a zero-length WRITE WITH IMM to the peer's
 * region @w->bare_peer.  The context goes to DATA_SENDING.
 *
 * Return: 0, or -1 (NAAICE_ERR_SYSTEM; the context in ERROR if posting
 * failed).
 */
int naaice_post_writes(struct naaice_communication_context *ctx,
		       const struct naaice_writes *w)
{
	struct ibv_send_wr *wr, *bad;
	struct ibv_sge *sge;
	/* one WR per local region, or the one zero-length WRITE */
	unsigned int i, n = 0, max = ctx->no_local_mrs ? ctx->no_local_mrs : 1;
	int rc;

	wr = calloc(max, sizeof(*wr));
	sge = calloc(max, sizeof(*sge));
	if (!wr || !sge) {
		free(wr);
		free(sge);
		return naaice_fail(ctx, NAAICE_ERR_SYSTEM);
	}
	ctx->state = DATA_SENDING;
	ctx->rdma_writes_done = 0;
	for (i = w->first; !w->bare && i < ctx->no_local_mrs; i++) {
		const struct naaice_mr_local *l = &ctx->mr_local_data[i];
		const struct naaice_mr_peer *p;

		if ((w->only >= 0 && i != (unsigned int)w->only) ||
		    (w->need_flag && !(l->flags & w->need_flag)))
			continue;
		p = &ctx->mr_peer_data[i - w->peer_base];
		sge[n].addr = (uintptr_t)l->addr;
		sge[n].length = (uint32_t)l->size;
		sge[n].lkey = l->ibv->lkey;
		wr[n].wr_id = NAAICE_WRID_WRITE;
		wr[n].opcode = IBV_WR_RDMA_WRITE;
		wr[n].sg_list = &sge[n];
		wr[n].num_sge = 1;
		wr[n].wr.rdma.remote_addr = p->addr;
		wr[n].wr.rdma.rkey = p->rkey;
		if (n)
			wr[n - 1].next = &wr[n];
		n++;
	}
	if (!n) {
		wr[0].wr_id = NAAICE_WRID_WRITE;
		wr[0].wr.rdma.remote_addr = ctx->mr_peer_data[w->bare_peer].addr;
		wr[0].wr.rdma.rkey = ctx->mr_peer_data[w->bare_peer].rkey;
		n = 1;
	}
	wr[n - 1].opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	wr[n - 1].send_flags = IBV_SEND_SOLICITED;
	wr[n - 1].imm_data = htonl(w->imm);
	ctx->writes_posted = (uint8_t)n;
	rc = ibv_post_send(ctx->qp, wr, &bad);
	free(wr);
	free(sge);
	if (rc) {
		naaice_err("posting the %s writes failed: %s", w->what,
			   strerror(rc));
		ctx->state = ERROR;
		return naaice_fail(ctx, NAAICE_ERR_SYSTEM);
	}
	return 0;
}

int naaice_wait_cm_event(struct naaice_communication_context *ctx,
			 struct rdma_cm_event **ev, int timeout_ms)
{
	long long end = naaice_now_ms() + timeout_ms;

	for (;;) {
		struct pollfd p = { .fd = ctx->ev_channel->fd, .events = POLLIN };
		long long left = end - naaice_now_ms();
		int slice = timeout_ms < 0 || left > 250 ? 250 : (int)left;

		if (!rdma_get_cm_event(ctx->ev_channel, ev))
			return 0;
		if (errno != EAGAIN && errno != EWOULDBLOCK) {
			naaice_err("reading a connection event failed: %s",
				   strerror(errno));
			return naaice_fail(ctx, NAAICE_ERR_SYSTEM);
		}
		if (ctx->cancel && *ctx->cancel)
			return naaice_fail(ctx, NAAICE_ERR_CANCELLED);
		if (timeout_ms >= 0 && left <= 0)
			return 1;
		if (poll(&p, 1, slice) < 0 && errno != EINTR)
			return naaice_fail(ctx, NAAICE_ERR_SYSTEM);
	}
}

int naaice_wait_until(struct naaice_communication_context *ctx,
		      int (*done)(struct naaice_communication_context *))
{
	long long end = naaice_now_ms() + ctx->timeout_ms;

	for (;;) {
		struct pollfd p[2] = {
			{ .fd = ctx->comp_channel->fd, .events = POLLIN },
			{ .fd = ctx->ev_channel->fd, .events = POLLIN },
		};
		struct rdma_cm_event *ev;
		struct ibv_cq *cq;
		void *cq_ctx;
		long long left;
		int n;

		if (done(ctx))
			return 0;
		n = naaice_poll_cq_once(ctx);
		if (n < 0)
			return -1;
		if (n)
			continue;
		if (ibv_req_notify_cq(ctx->cq, 0)) {
			naaice_err("arming the completion queue failed");
			return naaice_fail(ctx, NAAICE_ERR_SYSTEM);
		}
		/* What arrived between the poll and the arming. */
		n = naaice_poll_cq_once(ctx);
		if (n < 0)
			return -1;
		if (n)
			continue;
		while (!rdma_get_cm_event(ctx->ev_channel, &ev)) {
			enum naaice_communication_state was = ctx->state;
			int r = naaice_handle_cm_async(ctx, ev);

			rdma_ack_cm_event(ev);
			if (r) {
				/* the CQ may still hold the answer */
				n = naaice_poll_cq_once(ctx);
				if (n >= 0 && done(ctx))
					return 0;
				/* between two RPCs that is how a client
				 * says goodbye */
				if (!ctx->is_server || was != DATA_RECEIVING)
					naaice_err("the peer disconnected "
						   "(state %s)",
						   naaice_state_name(was));
				ctx->state = DISCONNECTED;
				return naaice_fail(ctx,
						   NAAICE_ERR_DISCONNECTED);
			}
		}
		if (ctx->cancel && *ctx->cancel)
			return naaice_fail(ctx, NAAICE_ERR_CANCELLED);
		left = end - naaice_now_ms();
		if (ctx->timeout_ms >= 0 && left <= 0) {
			naaice_err("no answer from the peer within %d ms "
				   "(state %s)", ctx->timeout_ms,
				   naaice_state_name(ctx->state));
			return naaice_fail(ctx, NAAICE_ERR_TIMEOUT);
		}
		if (poll(p, 2, ctx->timeout_ms < 0 || left > 250 ? 250 :
			 (int)left) < 0 && errno != EINTR)
			return naaice_fail(ctx, NAAICE_ERR_SYSTEM);
		if (p[0].revents & POLLIN &&
		    !ibv_get_cq_event(ctx->comp_channel, &cq, &cq_ctx))
			ibv_ack_cq_events(cq, 1);
	}
}
