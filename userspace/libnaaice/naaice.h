/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libnaaice: the NAAICE RMA-basic-communication API (client and software
 * NAA), written from the NAAICE API specification.  Function names,
 * parameters, return conventions, the state machine, the MRSP message
 * types and the error codes are the specification's; everything after
 * the specification's fields in struct naaice_communication_context is
 * ours (wire mode, timeouts, bookkeeping).  See Documentation/naaice.rst.
 *
 * Return convention, as in the specification: 0 on success, -1 on
 * failure (a message on stderr, ctx->last_error says what kind).
 */
#ifndef NAAICE_H
#define NAAICE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <rdma/rdma_cma.h>
#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The port the public NAAICE implementations use. */
#define NAAICE_DEFAULT_PORT 12345

/* Memory regions a software NAA accepts per connection (the FPGA's limit). */
#define MAX_MRS 32

/* ---- MRSP message types and error codes (specification section 2) ---- */

enum message_id {
	MSG_MR_ERR = 0x00,	/* error, carries an error code */
	MSG_MR_AAR = 0x01,	/* advertisement and request (client) */
	MSG_MR_A = 0x02,	/* advertisement (NAA) */
	MSG_MR_R = 0x03,	/* request: defined, unused */
};

enum naaice_mrsp_error {
	NAAICE_MRSP_ENOMEM = 0x01,	/* address + size exceeds the memory */
	NAAICE_MRSP_EADDR = 0x02,	/* address out of bounds */
	NAAICE_MRSP_ETOOMANY = 0x03,	/* too many regions requested */
};

/* Immediate values of the NAA's final WRITE_WITH_IMM. */
enum naaice_return_code {
	NAAICE_RC_OK = 0x00,
	NAAICE_RC_SOCKET = 0x01,	/* socket not available */
	NAAICE_RC_TIMEOUT = 0x02,	/* kernel timeout */
	/* 0x03-0x0f reserved, 0x10-0x7f application/calculation errors */
	NAAICE_RC_CALC_FIRST = 0x10,
	NAAICE_RC_CALC_LAST = 0x7f,
};

/* MR flags of an advertisement-and-request entry. */
enum naaice_mrflags_value {
	MRFLAG_INTERNAL = 0x01,		/* both wire generations */
	MRFLAG_WRITEBACK = 0x02,	/* spec wire */
	MRFLAG_SINGLESEND = 0x02,	/* upstream wire */
	MRFLAG_INPUT = 0x04,		/* upstream wire */
	MRFLAG_OUTPUT = 0x08,		/* upstream wire */
};

/* ---- message structures of the specification (host order views) ---- */

struct naaice_mr_hdr {
	uint8_t type;
};

struct naaice_mr_dynamic_hdr {
	uint8_t count;
	uint8_t padding[2];
};

struct naaice_mr_advertisement_request {
	uint8_t mrflags;
	uint8_t fpgaaddress[7];
	uint64_t addr;
	uint32_t rkey;
	uint32_t size;
};

struct naaice_mr_advertisement {
	uint64_t addr;
	uint32_t rkey;
	uint32_t size;
};

struct naaice_mr_error {
	uint8_t code;
	uint8_t padding[2];
};

/* ---- memory regions ---- */

struct naaice_mr_peer {
	uint64_t addr;
	uint32_t rkey;
	uint32_t size;
};

struct naaice_mr_local {
	struct ibv_mr *ibv;
	char *addr;
	size_t size;
	bool write;
	/* ours: MRFLAG_* sent in (client) or received with (NAA) the MRSP */
	uint8_t flags;
};

struct naaice_mr_internal {
	char *addr;
	uint32_t size;
};

/* The metadata region (spec wire): the return address, big-endian. */
struct naaice_rpc_metadata {
	uint64_t return_addr;
};

/* ---- state machine ---- */

enum naaice_communication_state {
	INIT = 0,
	READY = 1,
	CONNECTED = 2,
	DISCONNECTED = 3,
	MRSP_SENDING = 10,
	MRSP_RECEIVING = 11,
	MRSP_DONE = 12,
	DATA_SENDING = 20,
	CALCULATING = 21,
	DATA_RECEIVING = 22,
	FINISHED = 30,
	ERROR = 40,
};

/* ---- ours ---- */

/*
 * Which generation of the public NAAICE library to talk to:
 * SPEC      the specification (public code of Dec 2023 - Jan 2024):
 *           8-byte metadata region written first, function code as the
 *           plain immediate, return code as the whole immediate;
 * UPSTREAM  the public library's later wire: no metadata region,
 *           INPUT/OUTPUT/SINGLESEND flags, immediate fn | 0x80 in the
 *           low byte with 24 user bits above, return code above bit 8.
 */
enum naaice_wire {
	NAAICE_WIRE_SPEC = 0,
	NAAICE_WIRE_UPSTREAM = 1,
};

enum naaice_error {
	NAAICE_OK = 0,
	NAAICE_ERR_SYSTEM,	/* allocation, verbs or rdma_cm call failed */
	NAAICE_ERR_CONNECT,	/* address, route or connection refused */
	NAAICE_ERR_TIMEOUT,	/* the peer did not answer in time */
	NAAICE_ERR_DISCONNECTED,/* the peer went away */
	NAAICE_ERR_MRSP,	/* the peer answered the MRSP with an error */
	NAAICE_ERR_PROTOCOL,	/* malformed or unexpected message */
	NAAICE_ERR_REMOTE,	/* the NAA returned a non-zero return code */
	NAAICE_ERR_TRANSFER,	/* a work completion failed */
	NAAICE_ERR_USAGE,	/* bad arguments */
	NAAICE_ERR_CANCELLED,	/* *cancel was set */
};

struct naaice_communication_context {
	/* Basic connection properties. */
	struct rdma_cm_id *id;
	struct rdma_event_channel *ev_channel;
	struct ibv_context *ibv_ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *comp_channel;
	struct ibv_cq *cq;
	struct ibv_qp *qp;

	enum naaice_communication_state state;

	/* Local memory regions; on the spec wire #0 is the metadata. */
	struct naaice_mr_local *mr_local_data;
	uint8_t no_local_mrs;
	/* Index of the return region, set by naaice_set_metadata. */
	uint8_t mr_return_idx;

	/* The peer's regions (parameters only, no internal ones). */
	struct naaice_mr_peer *mr_peer_data;
	uint8_t no_peer_mrs;

	/* Used for MRSP. */
	struct naaice_mr_local *mr_local_message;

	/* Regions only on the NAA, requested by the client. */
	struct naaice_mr_internal *mr_internal;
	uint8_t no_internal_mrs;

	uint8_t fncode;
	uint8_t rdma_writes_done;

	/* ---- ours, not in the specification ---- */
	enum naaice_wire wire;
	int timeout_ms;		/* bound of every blocking wait (30000) */
	volatile sig_atomic_t *cancel;	/* if set and non-zero: give up */
	uint32_t imm_user;	/* upstream wire: 24 user bits */
	uint8_t naa_returncode;	/* last return code from the NAA */
	uint8_t mrsp_error;	/* MRSP error code received or sent */
	enum naaice_error last_error;
	bool is_server;
	bool mrsp_sent, mrsp_received, result_received;
	uint8_t writes_posted;
	struct rdma_cm_id *listen_id;	/* software NAA */
	uint64_t mem_limit;	/* software NAA: bytes per connection */
	unsigned int max_mrs;	/* software NAA: regions per connection */
	uint64_t rpcs_done;
	uint64_t completions, wait_mark;	/* work completions handled */
};

/* ---- client API (specification section 3.1) ---- */

int naaice_init_communication_context(
	struct naaice_communication_context **comm_ctx,
	unsigned int *param_sizes, char **params, unsigned int params_amount,
	uint8_t fncode, const char *remote_ip, uint16_t port);
int naaice_handle_work_completion(struct ibv_wc *wc,
	struct naaice_communication_context *comm_ctx);
int naaice_poll_cq_nonblocking(struct naaice_communication_context *comm_ctx);
int naaice_poll_cq_blocking(struct naaice_communication_context *comm_ctx);
int naaice_init_rdma_resources(struct naaice_communication_context *comm_ctx);

int naaice_poll_connection_event(struct naaice_communication_context *comm_ctx,
				 struct rdma_cm_event *ev,
				 struct rdma_cm_event *ev_cp);
int naaice_handle_addr_resolved(struct naaice_communication_context *comm_ctx,
				struct rdma_cm_event *ev);
int naaice_handle_route_resolved(struct naaice_communication_context *comm_ctx,
				 struct rdma_cm_event *ev);
int naaice_handle_connection_established(
	struct naaice_communication_context *comm_ctx,
	struct rdma_cm_event *ev);
int naaice_handle_error(struct naaice_communication_context *comm_ctx,
			struct rdma_cm_event *ev);
int naaice_handle_other(struct naaice_communication_context *comm_ctx,
			struct rdma_cm_event *ev);
int naaice_poll_and_handle_connection_event(
	struct naaice_communication_context *comm_ctx);
int naaice_setup_connection(struct naaice_communication_context *comm_ctx);
int naaice_disconnect_and_cleanup(
	struct naaice_communication_context *comm_ctx);

int naaice_register_mrs(struct naaice_communication_context *comm_ctx);
int naaice_set_metadata(struct naaice_communication_context *comm_ctx,
			uintptr_t return_addr);
int naaice_set_internal_mrs(struct naaice_communication_context *comm_ctx,
			    unsigned int n_internal_mrs, uintptr_t *addrs,
			    size_t *sizes);
int naaice_init_mrsp(struct naaice_communication_context *comm_ctx);
int naaice_send_message(struct naaice_communication_context *comm_ctx,
			enum message_id message_type, uint8_t errorcode);
int naaice_post_recv_mrsp(struct naaice_communication_context *comm_ctx);
int naaice_do_mrsp(struct naaice_communication_context *comm_ctx);

int naaice_init_data_transfer(struct naaice_communication_context *comm_ctx);
int naaice_write_data(struct naaice_communication_context *comm_ctx,
		      uint8_t fncode);
int naaice_post_recv_data(struct naaice_communication_context *comm_ctx);
int naaice_do_data_transfer(struct naaice_communication_context *comm_ctx);

/* ---- software NAA API (specification section 3.2) ---- */

int naaice_swnaa_init_communication_context(
	struct naaice_communication_context **comm_ctx, uint16_t port);
int naaice_swnaa_handle_work_completion(struct ibv_wc *wc,
	struct naaice_communication_context *comm_ctx);
int naaice_swnaa_poll_cq_nonblocking(
	struct naaice_communication_context *comm_ctx);
int naaice_swnaa_setup_connection(
	struct naaice_communication_context *comm_ctx);
int naaice_swnaa_handle_connection_requests(
	struct naaice_communication_context *comm_ctx,
	struct rdma_cm_event *ev);
int naaice_swnaa_handle_connection_established(
	struct naaice_communication_context *comm_ctx,
	struct rdma_cm_event *ev);
int naaice_swnaa_poll_and_handle_connection_event(
	struct naaice_communication_context *comm_ctx);
int naaice_swnaa_disconnect_and_cleanup(
	struct naaice_communication_context *comm_ctx);
int naaice_swnaa_init_mrsp(struct naaice_communication_context *comm_ctx);
int naaice_swnaa_post_recv_mrsp(struct naaice_communication_context *comm_ctx);
int naaice_swnaa_handle_mr_announce(
	struct naaice_communication_context *comm_ctx);
int naaice_swnaa_handle_mr_announce_and_request(
	struct naaice_communication_context *comm_ctx);
int naaice_swnaa_send_message(struct naaice_communication_context *comm_ctx,
			      enum message_id message_type, uint8_t errorcode);
int naaice_swnaa_do_mrsp(struct naaice_communication_context *comm_ctx);
int naaice_swnaa_post_recv_data(struct naaice_communication_context *comm_ctx);
int naaice_swnaa_handle_metadata(struct naaice_communication_context *comm_ctx);
int naaice_swnaa_write_data(struct naaice_communication_context *comm_ctx,
			    uint8_t errorcode);
int naaice_swnaa_receive_data_transfer(
	struct naaice_communication_context *comm_ctx);
int naaice_swnaa_write_data_transfer(
	struct naaice_communication_context *comm_ctx, uint8_t errorcode);

/* ---- ours ---- */

/* Select the wire generation; before naaice_init_mrsp / the MRSP. */
int naaice_set_wire(struct naaice_communication_context *comm_ctx,
		    enum naaice_wire wire);
/* Parse "spec" or "upstream"; -1 if neither. */
int naaice_wire_parse(const char *s, enum naaice_wire *wire);
const char *naaice_wire_name(enum naaice_wire wire);
const char *naaice_state_name(enum naaice_communication_state state);
const char *naaice_mrsp_error_str(uint8_t code);
const char *naaice_error_str(enum naaice_error err);

/*
 * Software NAA serving several clients: naaice_swnaa_accept() waits up to
 * timeout_ms (-1: forever, but *listener->cancel is honoured) for a
 * connection request on the listening context and returns a new context
 * for it (own event channel), to be passed to
 * naaice_swnaa_setup_connection() - from another thread if wanted.
 * Returns 0 with *conn set, 1 on timeout, -1 on error.
 */
int naaice_swnaa_accept(struct naaice_communication_context *listener,
			struct naaice_communication_context **conn,
			int timeout_ms);

#ifdef __cplusplus
}
#endif

#endif /* NAAICE_H */
