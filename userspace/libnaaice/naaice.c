// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libnaaice client API (NAAICE specification, section 3.1).
 *
 * Local region #0 is always the 8-byte metadata region; on the spec wire
 * it is advertised and written first, on the upstream wire it stays
 * unused and the peer's region i corresponds to local region i + 1.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>

#include "naaice_int.h"

/* First local region that is advertised and written. */
static unsigned int naaice_base(const struct naaice_communication_context *ctx)
{
	return ctx->wire == NAAICE_WIRE_SPEC ? 0 : 1;
}

int naaice_init_communication_context(
	struct naaice_communication_context **comm_ctx,
	unsigned int *param_sizes, char **params, unsigned int params_amount,
	uint8_t fncode, const char *remote_ip, uint16_t port)
{
	struct naaice_communication_context *ctx;
	struct addrinfo hints = { .ai_family = AF_UNSPEC,
				  .ai_socktype = SOCK_STREAM };
	struct addrinfo *ai;
	char port_str[8];
	int rc;

	*comm_ctx = NULL;
	if (!fncode) {
		naaice_err("the function code must be positive");
		return -1;
	}
	if (params_amount < 1 ||
	    params_amount + 1 > NAAICE_MRSP_MAX_COUNT) {
		naaice_err("between 1 and %d parameters, not %u",
			   NAAICE_MRSP_MAX_COUNT - 1, params_amount);
		return -1;
	}
	for (unsigned int i = 0; i < params_amount; i++) {
		if (!params[i] || !param_sizes[i]) {
			naaice_err("parameter %u is empty", i);
			return -1;
		}
	}
	ctx = naaice_ctx_alloc();
	if (!ctx) {
		naaice_err("out of memory");
		return -1;
	}
	ctx->fncode = fncode;
	ctx->no_local_mrs = (uint8_t)(params_amount + 1);
	ctx->mr_local_data = calloc(ctx->no_local_mrs,
				    sizeof(*ctx->mr_local_data));
	if (!ctx->mr_local_data)
		goto nomem;
	ctx->mr_local_data[0].size = sizeof(struct naaice_rpc_metadata);
	ctx->mr_local_data[0].addr = calloc(1, ctx->mr_local_data[0].size);
	if (!ctx->mr_local_data[0].addr)
		goto nomem;
	for (unsigned int i = 0; i < params_amount; i++) {
		ctx->mr_local_data[i + 1].addr = params[i];
		ctx->mr_local_data[i + 1].size = param_sizes[i];
		ctx->mr_local_data[i + 1].write = true;
		ctx->mr_local_data[i + 1].flags = MRFLAG_INPUT;
	}
	if (naaice_cm_channel(ctx))
		goto fail;
	if (rdma_create_id(ctx->ev_channel, &ctx->id, ctx, RDMA_PS_TCP)) {
		naaice_err("cannot create an rdma_cm id: %s", strerror(errno));
		goto fail;
	}
	snprintf(port_str, sizeof(port_str), "%u", port);
	rc = getaddrinfo(remote_ip, port_str, &hints, &ai);
	if (rc) {
		naaice_err("cannot resolve %s: %s", remote_ip,
			   gai_strerror(rc));
		goto fail;
	}
	rc = rdma_resolve_addr(ctx->id, NULL, ai->ai_addr, NAAICE_RESOLVE_MS);
	freeaddrinfo(ai);
	if (rc) {
		naaice_err("cannot resolve %s to an RDMA device: %s",
			   remote_ip, strerror(errno));
		goto fail;
	}
	*comm_ctx = ctx;
	return 0;
nomem:
	naaice_err("out of memory");
fail:
	naaice_destroy(ctx);
	return -1;
}

int naaice_init_rdma_resources(struct naaice_communication_context *ctx)
{
	return naaice_create_resources(ctx);
}

int naaice_poll_connection_event(struct naaice_communication_context *ctx,
				 struct rdma_cm_event *ev,
				 struct rdma_cm_event *ev_cp)
{
	struct rdma_cm_event *e;

	/* No event: ev->id is NULL. */
	memset(ev, 0, sizeof(*ev));
	if (rdma_get_cm_event(ctx->ev_channel, &e)) {
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return 0;
		naaice_err("reading a connection event failed: %s",
			   strerror(errno));
		return naaice_fail(ctx, NAAICE_ERR_SYSTEM);
	}
	*ev = *e;
	if (ev_cp)
		*ev_cp = *e;
	rdma_ack_cm_event(e);
	return 0;
}

int naaice_handle_addr_resolved(struct naaice_communication_context *ctx,
				struct rdma_cm_event *ev)
{
	if (!ev->id || ev->event != RDMA_CM_EVENT_ADDR_RESOLVED)
		return 0;
	ctx->state = READY;
	if (rdma_resolve_route(ctx->id, NAAICE_RESOLVE_MS)) {
		naaice_err("cannot resolve a route: %s", strerror(errno));
		return naaice_fail(ctx, NAAICE_ERR_CONNECT);
	}
	return 0;
}

int naaice_handle_route_resolved(struct naaice_communication_context *ctx,
				 struct rdma_cm_event *ev)
{
	struct rdma_conn_param cp = naaice_conn_param();

	if (!ev->id || ev->event != RDMA_CM_EVENT_ROUTE_RESOLVED)
		return 0;
	if (naaice_init_rdma_resources(ctx))
		return -1;
	if (rdma_connect(ctx->id, &cp)) {
		naaice_err("rdma_connect failed: %s", strerror(errno));
		return naaice_fail(ctx, NAAICE_ERR_CONNECT);
	}
	return 0;
}

int naaice_handle_connection_established(
	struct naaice_communication_context *ctx, struct rdma_cm_event *ev)
{
	if (!ev->id || ev->event != RDMA_CM_EVENT_ESTABLISHED)
		return 0;
	ctx->state = CONNECTED;
	return 0;
}

int naaice_handle_error(struct naaice_communication_context *ctx,
			struct rdma_cm_event *ev)
{
	const char *what;

	if (!ev->id)
		return 0;
	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_ERROR:
		what = "address resolution failed (no RDMA device for it?)";
		break;
	case RDMA_CM_EVENT_ROUTE_ERROR:
		what = "route resolution failed";
		break;
	case RDMA_CM_EVENT_CONNECT_ERROR:
		what = "connection error";
		break;
	case RDMA_CM_EVENT_UNREACHABLE:
		what = "peer unreachable";
		break;
	case RDMA_CM_EVENT_REJECTED:
		what = "connection refused (no NAA listening on that port?)";
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		what = "RDMA device removed";
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		ctx->state = DISCONNECTED;
		naaice_err("the peer disconnected");
		return naaice_fail(ctx, NAAICE_ERR_DISCONNECTED);
	default:
		return 0;
	}
	naaice_err("%s (status %d)", what, ev->status);
	ctx->state = ERROR;
	return naaice_fail(ctx, NAAICE_ERR_CONNECT);
}

int naaice_handle_other(struct naaice_communication_context *ctx,
			struct rdma_cm_event *ev)
{
	(void)ctx;
	(void)ev;
	return 0;
}

int naaice_poll_and_handle_connection_event(
	struct naaice_communication_context *ctx)
{
	struct rdma_cm_event ev;

	if (naaice_poll_connection_event(ctx, &ev, NULL))
		return -1;
	if (!ev.id)
		return 0;
	if (naaice_handle_addr_resolved(ctx, &ev) ||
	    naaice_handle_route_resolved(ctx, &ev) ||
	    naaice_handle_connection_established(ctx, &ev) ||
	    naaice_handle_error(ctx, &ev) || naaice_handle_other(ctx, &ev))
		return -1;
	return 0;
}

int naaice_setup_connection(struct naaice_communication_context *ctx)
{
	/* Address and route resolution have their own 2 s bounds. */
	int budget = ctx->timeout_ms < 0 ? -1 : ctx->timeout_ms;

	while (ctx->state != CONNECTED) {
		struct rdma_cm_event *e, ev;
		int rc = naaice_wait_cm_event(ctx, &e, budget);

		if (rc < 0)
			return -1;
		if (rc > 0) {
			naaice_err("no connection within %d ms", budget);
			return naaice_fail(ctx, NAAICE_ERR_TIMEOUT);
		}
		ev = *e;
		rdma_ack_cm_event(e);
		if (naaice_handle_addr_resolved(ctx, &ev) ||
		    naaice_handle_route_resolved(ctx, &ev) ||
		    naaice_handle_connection_established(ctx, &ev) ||
		    naaice_handle_error(ctx, &ev))
			return -1;
	}
	return 0;
}

int naaice_register_mrs(struct naaice_communication_context *ctx)
{
	if (!ctx->pd) {
		naaice_err("naaice_register_mrs before the connection is set up");
		return naaice_fail(ctx, NAAICE_ERR_USAGE);
	}
	for (unsigned int i = 0; i < ctx->no_local_mrs; i++) {
		struct naaice_mr_local *l = &ctx->mr_local_data[i];

		if (l->ibv)
			continue;
		l->ibv = ibv_reg_mr(ctx->pd, l->addr, l->size,
				    IBV_ACCESS_LOCAL_WRITE |
				    IBV_ACCESS_REMOTE_WRITE);
		if (!l->ibv) {
			naaice_err("cannot register %zu bytes: %s", l->size,
				   strerror(errno));
			return naaice_fail(ctx, NAAICE_ERR_SYSTEM);
		}
	}
	return 0;
}

int naaice_set_metadata(struct naaice_communication_context *ctx,
			uintptr_t return_addr)
{
	struct naaice_rpc_metadata *md;

	for (unsigned int i = 1; i < ctx->no_local_mrs; i++) {
		if ((uintptr_t)ctx->mr_local_data[i].addr != return_addr)
			continue;
		if (ctx->mr_return_idx)
			ctx->mr_local_data[ctx->mr_return_idx].flags =
				MRFLAG_INPUT;
		ctx->mr_return_idx = (uint8_t)i;
		/* upstream wire: the result region is an output only */
		ctx->mr_local_data[i].flags = MRFLAG_OUTPUT;
		md = (struct naaice_rpc_metadata *)ctx->mr_local_data[0].addr;
		md->return_addr = htobe64((uint64_t)return_addr);
		return 0;
	}
	naaice_err("the return address is not one of the parameters");
	return naaice_fail(ctx, NAAICE_ERR_USAGE);
}

int naaice_set_internal_mrs(struct naaice_communication_context *ctx,
			    unsigned int n_internal_mrs, uintptr_t *addrs,
			    size_t *sizes)
{
	struct naaice_mr_internal *in = NULL;

	if (n_internal_mrs + ctx->no_local_mrs > NAAICE_MRSP_MAX_COUNT) {
		naaice_err("too many regions for one MRSP message");
		return naaice_fail(ctx, NAAICE_ERR_USAGE);
	}
	if (n_internal_mrs) {
		in = calloc(n_internal_mrs, sizeof(*in));
		if (!in)
			return naaice_fail(ctx, NAAICE_ERR_SYSTEM);
	}
	for (unsigned int i = 0; i < n_internal_mrs; i++) {
		if (addrs[i] > NAAICE_FPGA_ADDR_MAX || sizes[i] > UINT32_MAX) {
			naaice_err("internal region %u does not fit the MRSP "
				   "fields", i);
			free(in);
			return naaice_fail(ctx, NAAICE_ERR_USAGE);
		}
		in[i].addr = (char *)addrs[i];
		in[i].size = (uint32_t)sizes[i];
	}
	free(ctx->mr_internal);
	ctx->mr_internal = in;
	ctx->no_internal_mrs = (uint8_t)n_internal_mrs;
	return 0;
}

int naaice_post_recv_mrsp(struct naaice_communication_context *ctx)
{
	return naaice_post_recv(ctx, NAAICE_WRID_MRSP_RECV);
}

int naaice_send_message(struct naaice_communication_context *ctx,
			enum message_id message_type, uint8_t errorcode)
{
	static struct naaice_mrsp_msg zero;
	struct naaice_mrsp_msg *m = malloc(sizeof(*m));
	unsigned int base = naaice_base(ctx), n = 0;
	int rc;

	if (!m)
		return naaice_fail(ctx, NAAICE_ERR_SYSTEM);
	*m = zero;
	m->type = (uint8_t)message_type;
	m->code = errorcode;
	if (message_type == MSG_MR_AAR || message_type == MSG_MR_A) {
		for (unsigned int i = base; i < ctx->no_local_mrs; i++, n++) {
			struct naaice_mr_local *l = &ctx->mr_local_data[i];

			if (!l->ibv) {
				free(m);
				naaice_err("regions not registered "
					   "(naaice_register_mrs)");
				return naaice_fail(ctx, NAAICE_ERR_USAGE);
			}
			m->e[n].flags = ctx->wire == NAAICE_WIRE_UPSTREAM ?
					l->flags : 0;
			m->e[n].addr = (uintptr_t)l->addr;
			m->e[n].rkey = l->ibv->rkey;
			m->e[n].size = (uint32_t)l->size;
		}
		for (unsigned int i = 0; message_type == MSG_MR_AAR &&
		     i < ctx->no_internal_mrs; i++, n++) {
			m->e[n].flags = MRFLAG_INTERNAL;
			m->e[n].fpga_addr = (uintptr_t)ctx->mr_internal[i].addr;
			m->e[n].size = ctx->mr_internal[i].size;
			/* the spec wire advertises the NAA address there */
			if (ctx->wire == NAAICE_WIRE_SPEC)
				m->e[n].addr = m->e[n].fpga_addr;
		}
		m->count = (uint8_t)n;
	}
	ctx->state = MRSP_SENDING;
	rc = naaice_post_mrsp(ctx, m);
	free(m);
	return rc;
}

int naaice_init_mrsp(struct naaice_communication_context *ctx)
{
	if (ctx->state != CONNECTED && ctx->state != MRSP_DONE) {
		naaice_err("MRSP in state %s", naaice_state_name(ctx->state));
		return naaice_fail(ctx, NAAICE_ERR_USAGE);
	}
	if (ctx->wire == NAAICE_WIRE_UPSTREAM && !ctx->mr_return_idx) {
		naaice_err("no return region set (naaice_set_metadata)");
		return naaice_fail(ctx, NAAICE_ERR_USAGE);
	}
	ctx->mrsp_sent = ctx->mrsp_received = false;
	/* The answer's receive goes first: no race with the peer. */
	if (naaice_post_recv_mrsp(ctx))
		return -1;
	return naaice_send_message(ctx, MSG_MR_AAR, 0);
}

static int naaice_mrsp_done(struct naaice_communication_context *ctx)
{
	return ctx->state == MRSP_DONE;
}

int naaice_do_mrsp(struct naaice_communication_context *ctx)
{
	if (naaice_init_mrsp(ctx) || naaice_wait_until(ctx, naaice_mrsp_done)) {
		if (ctx->state != DISCONNECTED)
			ctx->state = ERROR;
		return -1;
	}
	return 0;
}

/* The NAA's advertisement: one entry per advertised local region. */
static int naaice_handle_advertisement(struct naaice_communication_context *ctx,
				       const struct naaice_mrsp_msg *m)
{
	unsigned int base = naaice_base(ctx);
	unsigned int want = ctx->no_local_mrs - base;

	if (m->count != want) {
		naaice_err("the NAA advertised %u regions, %u expected",
			   m->count, want);
		return naaice_fail(ctx, NAAICE_ERR_PROTOCOL);
	}
	free(ctx->mr_peer_data);
	ctx->mr_peer_data = calloc(want, sizeof(*ctx->mr_peer_data));
	if (!ctx->mr_peer_data)
		return naaice_fail(ctx, NAAICE_ERR_SYSTEM);
	ctx->no_peer_mrs = (uint8_t)want;
	for (unsigned int i = 0; i < want; i++) {
		ctx->mr_peer_data[i].addr = m->e[i].addr;
		ctx->mr_peer_data[i].rkey = m->e[i].rkey;
		ctx->mr_peer_data[i].size = m->e[i].size;
		if (m->e[i].size < ctx->mr_local_data[base + i].size) {
			naaice_err("the NAA's region %u is smaller (%u bytes) "
				   "than ours (%zu)", i, m->e[i].size,
				   ctx->mr_local_data[base + i].size);
			return naaice_fail(ctx, NAAICE_ERR_PROTOCOL);
		}
	}
	return 0;
}

int naaice_handle_work_completion(struct ibv_wc *wc,
				  struct naaice_communication_context *ctx)
{
	struct naaice_mrsp_msg *m;
	uint32_t imm;
	int rc = 0;

	if (naaice_wc_failed(ctx, wc))
		return -1;
	switch (wc->wr_id) {
	case NAAICE_WRID_MRSP_SEND:
		ctx->mrsp_sent = true;
		if (!ctx->mrsp_received && ctx->state == MRSP_SENDING)
			ctx->state = MRSP_RECEIVING;
		break;
	case NAAICE_WRID_MRSP_RECV:
		m = malloc(sizeof(*m));
		if (!m)
			return naaice_fail(ctx, NAAICE_ERR_SYSTEM);
		if (naaice_mrsp_decode((uint8_t *)ctx->mr_local_message->addr,
				       wc->byte_len, m)) {
			naaice_err("malformed MRSP message (%u bytes)",
				   wc->byte_len);
			rc = naaice_fail(ctx, NAAICE_ERR_PROTOCOL);
		} else if (m->type == MSG_MR_ERR) {
			ctx->mrsp_error = m->code;
			naaice_err("the NAA refused the memory regions: %s "
				   "(MRSP error 0x%02x)",
				   naaice_mrsp_error_str(m->code), m->code);
			rc = naaice_fail(ctx, NAAICE_ERR_MRSP);
		} else if (m->type != MSG_MR_A) {
			naaice_err("unexpected MRSP message type 0x%02x",
				   m->type);
			rc = naaice_fail(ctx, NAAICE_ERR_PROTOCOL);
		} else {
			rc = naaice_handle_advertisement(ctx, m);
			ctx->mrsp_received = !rc;
		}
		free(m);
		if (rc) {
			ctx->state = ERROR;
			return rc;
		}
		break;
	case NAAICE_WRID_WRITE:
		ctx->rdma_writes_done++;
		if (ctx->rdma_writes_done == ctx->writes_posted &&
		    !ctx->result_received && ctx->state == DATA_SENDING)
			ctx->state = DATA_RECEIVING;
		break;
	case NAAICE_WRID_DATA_RECV:
		if (wc->opcode != IBV_WC_RECV_RDMA_WITH_IMM ||
		    !(wc->wc_flags & IBV_WC_WITH_IMM)) {
			naaice_err("the NAA answered without an immediate");
			ctx->state = ERROR;
			return naaice_fail(ctx, NAAICE_ERR_PROTOCOL);
		}
		imm = ntohl(wc->imm_data);
		if (ctx->wire == NAAICE_WIRE_SPEC)
			ctx->naa_returncode = imm > 0xff ? 0xff : (uint8_t)imm;
		else	/* return code above bit 8; their NAA puts it low */
			ctx->naa_returncode = (uint8_t)(imm >> 8 ? imm >> 8 :
							imm & 0xff);
		ctx->result_received = true;
		break;
	default:
		naaice_err("completion of unknown work request %llu",
			   (unsigned long long)wc->wr_id);
		return naaice_fail(ctx, NAAICE_ERR_PROTOCOL);
	}
	if (ctx->mrsp_sent && ctx->mrsp_received &&
	    (ctx->state == MRSP_SENDING || ctx->state == MRSP_RECEIVING))
		ctx->state = MRSP_DONE;
	if (ctx->result_received &&
	    ctx->rdma_writes_done == ctx->writes_posted &&
	    (ctx->state == DATA_SENDING || ctx->state == DATA_RECEIVING)) {
		ctx->state = FINISHED;
		if (ctx->naa_returncode) {
			naaice_err("the NAA returned error code 0x%02x",
				   ctx->naa_returncode);
			return naaice_fail(ctx, NAAICE_ERR_REMOTE);
		}
	}
	return 0;
}

int naaice_poll_cq_nonblocking(struct naaice_communication_context *ctx)
{
	struct rdma_cm_event *ev;
	int r = 0;

	if (naaice_poll_cq_once(ctx) < 0)
		return -1;
	while (!r && !rdma_get_cm_event(ctx->ev_channel, &ev)) {
		r = naaice_handle_cm_async(ctx, ev);
		rdma_ack_cm_event(ev);
	}
	if (r)
		naaice_err("the peer disconnected");
	return r;
}

static int naaice_new_completion(struct naaice_communication_context *ctx)
{
	return ctx->completions != ctx->wait_mark;
}

int naaice_poll_cq_blocking(struct naaice_communication_context *ctx)
{
	/* Until at least one completion was handled, or error, timeout. */
	ctx->wait_mark = ctx->completions;
	return naaice_wait_until(ctx, naaice_new_completion);
}

int naaice_post_recv_data(struct naaice_communication_context *ctx)
{
	return naaice_post_recv(ctx, NAAICE_WRID_DATA_RECV);
}

int naaice_write_data(struct naaice_communication_context *ctx,
		      uint8_t fncode)
{
	unsigned int base = naaice_base(ctx);
	struct naaice_writes w;

	if (ctx->state < MRSP_DONE || !ctx->mr_peer_data) {
		naaice_err("data transfer before the MRSP");
		return naaice_fail(ctx, NAAICE_ERR_USAGE);
	}
	w.first = w.peer_base = base;
	/* upstream: only the regions the NAA reads (function code 0: none) */
	w.need_flag = ctx->wire == NAAICE_WIRE_UPSTREAM ? MRFLAG_INPUT : 0;
	w.only = -1;
	w.bare = !fncode;
	w.bare_peer = 0;
	/* The last write carries the function code and wakes the NAA. */
	w.imm = ctx->wire == NAAICE_WIRE_SPEC ? fncode :
		(ctx->imm_user & 0xffffff) << 8 | 0x80 | (fncode & 0x7f);
	w.what = "data";
	return naaice_post_writes(ctx, &w);
}

int naaice_init_data_transfer(struct naaice_communication_context *ctx)
{
	ctx->result_received = false;
	ctx->naa_returncode = 0;
	ctx->last_error = NAAICE_OK;
	if (ctx->state != MRSP_DONE && ctx->state != FINISHED) {
		naaice_err("data transfer in state %s",
			   naaice_state_name(ctx->state));
		return naaice_fail(ctx, NAAICE_ERR_USAGE);
	}
	/* The answer's receive first, then the writes. */
	if (naaice_post_recv_data(ctx))
		return -1;
	return naaice_write_data(ctx, ctx->fncode);
}

static int naaice_rpc_done(struct naaice_communication_context *ctx)
{
	return ctx->state == FINISHED;
}

int naaice_do_data_transfer(struct naaice_communication_context *ctx)
{
	if (naaice_init_data_transfer(ctx))
		return -1;
	if (naaice_wait_until(ctx, naaice_rpc_done)) {
		if (ctx->last_error != NAAICE_ERR_REMOTE &&
		    ctx->state != DISCONNECTED)
			ctx->state = ERROR;
		return -1;
	}
	return 0;
}

int naaice_disconnect_and_cleanup(struct naaice_communication_context *ctx)
{
	naaice_close(ctx);
	return 0;
}
