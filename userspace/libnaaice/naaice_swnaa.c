// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libnaaice software NAA (NAAICE specification, section 3.2).
 *
 * One context per connection.  naaice_swnaa_init_communication_context
 * makes a listening context; naaice_swnaa_setup_connection on it takes
 * the first connection request (the specification's one-client NAA),
 * naaice_swnaa_accept hands each request to a context of its own so that
 * several clients can be served at once (naa-server: a thread each).
 *
 * Receives are always posted before the peer can need them: the MRSP
 * receive before rdma_accept, the first data receive before the
 * advertisement goes out, each next one before the result goes back.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "naaice_int.h"

int naaice_swnaa_init_communication_context(
	struct naaice_communication_context **comm_ctx, uint16_t port)
{
	struct naaice_communication_context *ctx = naaice_ctx_alloc();
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
		.sin_addr.s_addr = htonl(INADDR_ANY),
	};
	/* IPv6 any, IPv4 too (not AF-only); IPv4 any if there is no IPv6 */
	struct sockaddr_in6 sin6 = {
		.sin6_family = AF_INET6,
		.sin6_port = htons(port),
		.sin6_addr = IN6ADDR_ANY_INIT,
	};
	int afonly = 0;

	*comm_ctx = NULL;
	if (!ctx) {
		naaice_err("out of memory");
		return -1;
	}
	ctx->is_server = true;
	if (naaice_cm_channel(ctx))
		goto fail;
	if (rdma_create_id(ctx->ev_channel, &ctx->id, ctx, RDMA_PS_TCP)) {
		naaice_err("cannot create an rdma_cm id: %s", strerror(errno));
		goto fail;
	}
	if ((rdma_set_option(ctx->id, RDMA_OPTION_ID, RDMA_OPTION_ID_AFONLY,
			     &afonly, sizeof(afonly)) ||
	     rdma_bind_addr(ctx->id, (struct sockaddr *)&sin6)) &&
	    rdma_bind_addr(ctx->id, (struct sockaddr *)&sin)) {
		naaice_err("cannot bind port %u: %s", port, strerror(errno));
		goto fail;
	}
	if (rdma_listen(ctx->id, 64)) {
		naaice_err("cannot listen on port %u: %s", port,
			   strerror(errno));
		goto fail;
	}
	*comm_ctx = ctx;
	return 0;
fail:
	naaice_destroy(ctx);
	return -1;
}

int naaice_swnaa_accept(struct naaice_communication_context *listener,
			struct naaice_communication_context **conn,
			int timeout_ms)
{
	struct naaice_communication_context *c;
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	int rc;

	*conn = NULL;
	for (;;) {
		rc = naaice_wait_cm_event(listener, &ev, timeout_ms);
		if (rc)
			return rc;
		if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
			break;
		rdma_ack_cm_event(ev);
	}
	id = ev->id;
	rdma_ack_cm_event(ev);
	c = naaice_ctx_alloc();
	if (!c || naaice_cm_channel(c) ||
	    rdma_migrate_id(id, c->ev_channel)) {
		naaice_err("cannot take the connection: %s", strerror(errno));
		rdma_reject(id, NULL, 0);
		rdma_destroy_id(id);
		if (c)
			naaice_destroy(c);
		naaice_fail(listener, NAAICE_ERR_SYSTEM);
		return -1;
	}
	c->is_server = true;
	c->id = id;
	id->context = c;
	c->wire = listener->wire;
	c->timeout_ms = listener->timeout_ms;
	c->cancel = listener->cancel;
	c->mem_limit = listener->mem_limit;
	c->max_mrs = listener->max_mrs;
	c->state = READY;	/* request received, not accepted yet */
	*conn = c;
	return 0;
}

int naaice_swnaa_handle_connection_requests(
	struct naaice_communication_context *ctx, struct rdma_cm_event *ev)
{
	if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST || ctx->state != INIT)
		return 0;
	/* The one-client NAA of the specification: keep the listener. */
	ctx->listen_id = ctx->id;
	ctx->id = ev->id;
	ctx->state = READY;
	return 0;
}

int naaice_swnaa_handle_connection_established(
	struct naaice_communication_context *ctx, struct rdma_cm_event *ev)
{
	if (ev->event == RDMA_CM_EVENT_ESTABLISHED && ctx->state == READY)
		ctx->state = CONNECTED;
	return 0;
}

int naaice_swnaa_poll_and_handle_connection_event(
	struct naaice_communication_context *ctx)
{
	struct rdma_cm_event ev;

	if (naaice_poll_connection_event(ctx, &ev, NULL))
		return -1;
	if (!ev.id)
		return 0;
	if (naaice_swnaa_handle_connection_requests(ctx, &ev) ||
	    naaice_swnaa_handle_connection_established(ctx, &ev))
		return -1;
	if (naaice_handle_cm_async(ctx, &ev))
		return -1;
	return 0;
}

static int naaice_swnaa_accept_now(struct naaice_communication_context *ctx)
{
	struct rdma_conn_param cp = naaice_conn_param();

	if (naaice_create_resources(ctx) || naaice_swnaa_init_mrsp(ctx)) {
		rdma_reject(ctx->id, NULL, 0);
		return -1;
	}
	if (rdma_accept(ctx->id, &cp)) {
		naaice_err("rdma_accept failed: %s", strerror(errno));
		return naaice_fail(ctx, NAAICE_ERR_CONNECT);
	}
	return 0;
}

int naaice_swnaa_setup_connection(struct naaice_communication_context *ctx)
{
	bool accepted = false;

	for (;;) {
		struct rdma_cm_event *e, ev;
		int rc;

		if (ctx->state == READY && !accepted) {
			if (naaice_swnaa_accept_now(ctx))
				return -1;
			accepted = true;
		}
		if (ctx->state == CONNECTED)
			return 0;
		rc = naaice_wait_cm_event(ctx, &e,
					  accepted ? ctx->timeout_ms : -1);
		if (rc < 0)
			return -1;
		if (rc > 0) {
			naaice_err("the client did not complete the "
				   "connection");
			return naaice_fail(ctx, NAAICE_ERR_TIMEOUT);
		}
		ev = *e;
		if (ev.event == RDMA_CM_EVENT_CONNECT_REQUEST &&
		    (ctx->state != INIT || ev.listen_id != ctx->id)) {
			/* one client at a time on this context */
			rdma_reject(ev.id, NULL, 0);
			rdma_ack_cm_event(e);
			continue;
		}
		rdma_ack_cm_event(e);
		naaice_swnaa_handle_connection_requests(ctx, &ev);
		naaice_swnaa_handle_connection_established(ctx, &ev);
		if (ev.event == RDMA_CM_EVENT_CONNECT_ERROR ||
		    ev.event == RDMA_CM_EVENT_UNREACHABLE ||
		    ev.event == RDMA_CM_EVENT_REJECTED ||
		    ev.event == RDMA_CM_EVENT_DISCONNECTED) {
			naaice_err("connection setup failed (event %s)",
				   rdma_event_str(ev.event));
			return naaice_fail(ctx, NAAICE_ERR_CONNECT);
		}
	}
}

int naaice_swnaa_post_recv_mrsp(struct naaice_communication_context *ctx)
{
	return naaice_post_recv(ctx, NAAICE_WRID_MRSP_RECV);
}

int naaice_swnaa_init_mrsp(struct naaice_communication_context *ctx)
{
	ctx->mrsp_sent = ctx->mrsp_received = false;
	ctx->mrsp_error = 0;
	return naaice_swnaa_post_recv_mrsp(ctx);
}

/* The error code for a request, or 0 if it can be granted. */
uint8_t naaice_swnaa_check(const struct naaice_communication_context *ctx,
			   const struct naaice_mrsp_msg *m)
{
	uint64_t total = 0;
	unsigned int params = 0;

	if (m->count > ctx->max_mrs)
		return NAAICE_MRSP_ETOOMANY;
	for (unsigned int i = 0; i < m->count; i++) {
		const struct naaice_mrsp_entry *e = &m->e[i];

		if (e->fpga_addr && e->fpga_addr >= ctx->mem_limit)
			return NAAICE_MRSP_EADDR;
		if (e->fpga_addr + e->size > ctx->mem_limit)
			return NAAICE_MRSP_ENOMEM;
		total += e->size;
		if (!(e->flags & MRFLAG_INTERNAL))
			params++;
	}
	if (total > ctx->mem_limit)
		return NAAICE_MRSP_ENOMEM;
	if (!params)
		return NAAICE_MRSP_ETOOMANY;
	return 0;
}

static int naaice_swnaa_grant(struct naaice_communication_context *ctx,
			      const struct naaice_mrsp_msg *m)
{
	unsigned int np = 0, ni = 0;

	for (unsigned int i = 0; i < m->count; i++)
		m->e[i].flags & MRFLAG_INTERNAL ? ni++ : np++;
	ctx->mr_local_data = calloc(np, sizeof(*ctx->mr_local_data));
	ctx->mr_peer_data = calloc(np, sizeof(*ctx->mr_peer_data));
	ctx->mr_internal = ni ? calloc(ni, sizeof(*ctx->mr_internal)) : NULL;
	if (!ctx->mr_local_data || !ctx->mr_peer_data ||
	    (ni && !ctx->mr_internal))
		return NAAICE_MRSP_ENOMEM;
	np = ni = 0;
	for (unsigned int i = 0; i < m->count; i++) {
		const struct naaice_mrsp_entry *e = &m->e[i];
		size_t sz = e->size ? e->size : 1;

		if (e->flags & MRFLAG_INTERNAL) {
			struct naaice_mr_internal *in = &ctx->mr_internal[ni];

			in->addr = calloc(1, sz);
			if (!in->addr)
				return NAAICE_MRSP_ENOMEM;
			in->size = e->size;
			ctx->no_internal_mrs = (uint8_t)++ni;
			continue;
		}
		struct naaice_mr_local *l = &ctx->mr_local_data[np];

		ctx->mr_peer_data[np].addr = e->addr;
		ctx->mr_peer_data[np].rkey = e->rkey;
		ctx->mr_peer_data[np].size = e->size;
		ctx->no_peer_mrs = (uint8_t)(np + 1);
		l->flags = e->flags;
		l->size = e->size;
		l->addr = calloc(1, sz);
		ctx->no_local_mrs = (uint8_t)(np + 1);
		if (!l->addr)
			return NAAICE_MRSP_ENOMEM;
		l->ibv = ibv_reg_mr(ctx->pd, l->addr, sz,
				    IBV_ACCESS_LOCAL_WRITE |
				    IBV_ACCESS_REMOTE_WRITE);
		if (!l->ibv)
			return NAAICE_MRSP_ENOMEM;
		np++;
	}
	return 0;
}

/* Decode the request in the receive buffer and grant it, or keep the
 * error code in ctx->mrsp_error. */
static int naaice_swnaa_handle_request(struct naaice_communication_context *ctx,
				       size_t len, bool with_request)
{
	struct naaice_mrsp_msg *m = malloc(sizeof(*m));
	uint8_t code;

	if (!m)
		return naaice_fail(ctx, NAAICE_ERR_SYSTEM);
	if (naaice_mrsp_decode((uint8_t *)ctx->mr_local_message->addr, len, m)) {
		free(m);
		naaice_err("malformed MRSP message (%zu bytes)", len);
		ctx->mrsp_error = NAAICE_MRSP_ETOOMANY;
		return naaice_fail(ctx, NAAICE_ERR_PROTOCOL);
	}
	if (!with_request)	/* plain advertisement: same-size regions */
		for (unsigned int i = 0; i < m->count; i++)
			m->e[i].flags = m->e[i].flags & ~MRFLAG_INTERNAL;
	code = naaice_swnaa_check(ctx, m);
	if (!code)
		code = naaice_swnaa_grant(ctx, m);
	free(m);
	ctx->mrsp_error = code;
	return code ? naaice_fail(ctx, NAAICE_ERR_MRSP) : 0;
}

int naaice_swnaa_handle_mr_announce_and_request(
	struct naaice_communication_context *ctx)
{
	return naaice_swnaa_handle_request(ctx, NAAICE_MRSP_BUF_LEN, true);
}

int naaice_swnaa_handle_mr_announce(struct naaice_communication_context *ctx)
{
	return naaice_swnaa_handle_request(ctx, NAAICE_MRSP_BUF_LEN, false);
}

int naaice_swnaa_send_message(struct naaice_communication_context *ctx,
			      enum message_id message_type, uint8_t errorcode)
{
	static struct naaice_mrsp_msg zero;
	struct naaice_mrsp_msg *m = malloc(sizeof(*m));
	int rc;

	if (!m)
		return naaice_fail(ctx, NAAICE_ERR_SYSTEM);
	*m = zero;
	m->type = (uint8_t)message_type;
	m->code = errorcode;
	if (message_type == MSG_MR_A) {
		m->count = ctx->no_local_mrs;
		for (unsigned int i = 0; i < ctx->no_local_mrs; i++) {
			m->e[i].addr = (uintptr_t)ctx->mr_local_data[i].addr;
			m->e[i].rkey = ctx->mr_local_data[i].ibv->rkey;
			m->e[i].size = (uint32_t)ctx->mr_local_data[i].size;
		}
	}
	ctx->state = MRSP_SENDING;
	rc = naaice_post_mrsp(ctx, m);
	free(m);
	return rc;
}

int naaice_swnaa_post_recv_data(struct naaice_communication_context *ctx)
{
	return naaice_post_recv(ctx, NAAICE_WRID_DATA_RECV);
}

int naaice_swnaa_handle_work_completion(struct ibv_wc *wc,
					struct naaice_communication_context *ctx)
{
	struct naaice_mrsp_msg hdr;
	uint32_t imm;

	if (naaice_wc_failed(ctx, wc))
		return -1;
	switch (wc->wr_id) {
	case NAAICE_WRID_MRSP_RECV:
		ctx->state = MRSP_RECEIVING;
		ctx->mrsp_received = true;
		/* only the type here; the handlers decode the rest */
		if (wc->byte_len < 1)
			hdr.type = 0xff;
		else
			hdr.type = *(uint8_t *)ctx->mr_local_message->addr;
		if (hdr.type == MSG_MR_ERR) {
			naaice_err("the client reported an MRSP error");
			ctx->state = ERROR;
			return naaice_fail(ctx, NAAICE_ERR_MRSP);
		}
		if (hdr.type == MSG_MR_AAR || hdr.type == MSG_MR_A)
			naaice_swnaa_handle_request(ctx, wc->byte_len,
						    hdr.type == MSG_MR_AAR);
		else
			ctx->mrsp_error = NAAICE_MRSP_ETOOMANY;
		if (ctx->mrsp_error)
			return naaice_swnaa_send_message(ctx, MSG_MR_ERR,
							 ctx->mrsp_error);
		/* the client may write as soon as it has our answer */
		if (naaice_swnaa_post_recv_data(ctx))
			return -1;
		return naaice_swnaa_send_message(ctx, MSG_MR_A, 0);
	case NAAICE_WRID_MRSP_SEND:
		ctx->mrsp_sent = true;
		if (ctx->state == MRSP_SENDING)
			ctx->state = ctx->mrsp_error ? ERROR : MRSP_DONE;
		return 0;
	case NAAICE_WRID_DATA_RECV:
		if (wc->opcode != IBV_WC_RECV_RDMA_WITH_IMM ||
		    !(wc->wc_flags & IBV_WC_WITH_IMM)) {
			naaice_err("data without an immediate");
			ctx->state = ERROR;
			return naaice_fail(ctx, NAAICE_ERR_PROTOCOL);
		}
		imm = ntohl(wc->imm_data);
		if (ctx->wire == NAAICE_WIRE_SPEC) {
			ctx->fncode = imm > 0xff ? 0 : (uint8_t)imm;
		} else {
			ctx->fncode = imm & 0x7f;
			ctx->imm_user = imm >> 8;
		}
		ctx->result_received = true;	/* a request is here */
		return 0;
	case NAAICE_WRID_WRITE:
		ctx->rdma_writes_done++;
		if (ctx->rdma_writes_done == ctx->writes_posted &&
		    ctx->state == DATA_SENDING)
			ctx->state = FINISHED;
		return 0;
	}
	naaice_err("completion of unknown work request %llu",
		   (unsigned long long)wc->wr_id);
	return naaice_fail(ctx, NAAICE_ERR_PROTOCOL);
}

int naaice_swnaa_poll_cq_nonblocking(struct naaice_communication_context *ctx)
{
	return naaice_poll_cq_nonblocking(ctx);
}

static int naaice_swnaa_mrsp_done(struct naaice_communication_context *ctx)
{
	return ctx->mrsp_sent;
}

int naaice_swnaa_do_mrsp(struct naaice_communication_context *ctx)
{
	if (naaice_wait_until(ctx, naaice_swnaa_mrsp_done))
		return -1;
	if (ctx->mrsp_error) {
		naaice_err("refused the client's memory regions: %s "
			   "(MRSP error 0x%02x)",
			   naaice_mrsp_error_str(ctx->mrsp_error),
			   ctx->mrsp_error);
		ctx->state = ERROR;
		return naaice_fail(ctx, NAAICE_ERR_MRSP);
	}
	return 0;
}

static int naaice_swnaa_request_here(struct naaice_communication_context *ctx)
{
	return ctx->result_received;
}

int naaice_swnaa_receive_data_transfer(struct naaice_communication_context *ctx)
{
	int saved = ctx->timeout_ms, rc;

	if (ctx->state != MRSP_DONE && ctx->state != FINISHED) {
		naaice_err("receive in state %s", naaice_state_name(ctx->state));
		return naaice_fail(ctx, NAAICE_ERR_USAGE);
	}
	ctx->state = DATA_RECEIVING;
	/* a client may think as long as it likes between two RPCs */
	ctx->timeout_ms = -1;
	rc = naaice_wait_until(ctx, naaice_swnaa_request_here);
	ctx->timeout_ms = saved;
	if (rc)
		return -1;
	ctx->result_received = false;
	ctx->state = CALCULATING;
	return 0;
}

int naaice_swnaa_handle_metadata(struct naaice_communication_context *ctx)
{
	uint64_t ret;

	if (ctx->wire == NAAICE_WIRE_UPSTREAM) {
		/* the first output region takes the result */
		for (unsigned int i = 0; i < ctx->no_local_mrs; i++)
			if (ctx->mr_local_data[i].flags & MRFLAG_OUTPUT) {
				ctx->mr_return_idx = (uint8_t)i;
				return 0;
			}
		return naaice_fail(ctx, NAAICE_ERR_PROTOCOL);
	}
	if (ctx->no_local_mrs < 2 || ctx->mr_local_data[0].size < 8)
		return naaice_fail(ctx, NAAICE_ERR_PROTOCOL);
	memcpy(&ret, ctx->mr_local_data[0].addr, 8);
	ret = be64toh(ret);
	for (unsigned int i = 1; i < ctx->no_peer_mrs; i++)
		if (ctx->mr_peer_data[i].addr == ret) {
			ctx->mr_return_idx = (uint8_t)i;
			return 0;
		}
	naaice_err("the metadata's return address 0x%llx is not a "
		   "parameter region", (unsigned long long)ret);
	return naaice_fail(ctx, NAAICE_ERR_PROTOCOL);
}

int naaice_swnaa_write_data(struct naaice_communication_context *ctx,
			    uint8_t errorcode)
{
	unsigned int ret = ctx->mr_return_idx;
	struct naaice_writes w;

	if (!ctx->no_peer_mrs)
		return naaice_fail(ctx, NAAICE_ERR_USAGE);
	if (ret >= ctx->no_peer_mrs)
		ret = ctx->no_peer_mrs > 1 ? 1 : 0;
	w.first = w.peer_base = 0;
	/* the spec: the one return region; upstream: the output regions */
	w.need_flag = ctx->wire == NAAICE_WIRE_SPEC ? 0 : MRFLAG_OUTPUT;
	w.only = ctx->wire == NAAICE_WIRE_SPEC ? (int)ret : -1;
	/* an error: a zero-length write carrying the code */
	w.bare = errorcode != 0;
	w.bare_peer = ret;
	w.imm = ctx->wire == NAAICE_WIRE_SPEC ? errorcode :
						(uint32_t)errorcode << 8;
	w.what = "result";
	return naaice_post_writes(ctx, &w);
}

static int naaice_swnaa_sent(struct naaice_communication_context *ctx)
{
	return ctx->state == FINISHED;
}

int naaice_swnaa_write_data_transfer(struct naaice_communication_context *ctx,
				     uint8_t errorcode)
{
	/* the client's next request may follow our answer at once */
	if (naaice_swnaa_post_recv_data(ctx) ||
	    naaice_swnaa_write_data(ctx, errorcode) ||
	    naaice_wait_until(ctx, naaice_swnaa_sent))
		return -1;
	ctx->rpcs_done++;
	return 0;
}

int naaice_swnaa_disconnect_and_cleanup(struct naaice_communication_context *ctx)
{
	naaice_close(ctx);
	return 0;
}
