/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* libnaaice internals shared by the client and the software NAA. */
#ifndef NAAICE_INT_H
#define NAAICE_INT_H

#include <stdio.h>

#include "naaice.h"
#include "naaice_mrsp.h"

/* Work request ids: completions are told apart by these, never by the
 * opcode (which is undefined in a failed completion). */
enum naaice_wrid {
	NAAICE_WRID_MRSP_SEND = 1,
	NAAICE_WRID_MRSP_RECV,
	NAAICE_WRID_WRITE,
	NAAICE_WRID_DATA_RECV,
};

#define NAAICE_SQ_DEPTH		(NAAICE_MRSP_MAX_COUNT + 8)
#define NAAICE_RQ_DEPTH		4
#define NAAICE_RESOLVE_MS	2000
#define NAAICE_DEFAULT_TIMEOUT_MS 30000

#define naaice_err(fmt, ...) fprintf(stderr, "naaice: " fmt "\n", ##__VA_ARGS__)

/* naaice_core.c */
struct naaice_communication_context *naaice_ctx_alloc(void);
int naaice_fail(struct naaice_communication_context *ctx,
		enum naaice_error err);
int naaice_create_resources(struct naaice_communication_context *ctx);
void naaice_destroy(struct naaice_communication_context *ctx);
int naaice_post_recv(struct naaice_communication_context *ctx,
		     enum naaice_wrid id);
int naaice_post_mrsp(struct naaice_communication_context *ctx,
		     const struct naaice_mrsp_msg *m);
int naaice_poll_cq_once(struct naaice_communication_context *ctx);
int naaice_wait_until(struct naaice_communication_context *ctx,
		      int (*done)(struct naaice_communication_context *));
int naaice_wait_cm_event(struct naaice_communication_context *ctx,
			 struct rdma_cm_event **ev, int timeout_ms);
int naaice_handle_cm_async(struct naaice_communication_context *ctx,
			   struct rdma_cm_event *ev);
int naaice_cm_channel(struct naaice_communication_context *ctx);
int naaice_wc_failed(struct naaice_communication_context *ctx,
		     const struct ibv_wc *wc);
void naaice_close(struct naaice_communication_context *ctx);

/* The CM parameters of both sides' connection (rdma_connect, rdma_accept). */
static inline struct rdma_conn_param naaice_conn_param(void)
{
	return (struct rdma_conn_param){
		.responder_resources = 1,
		.initiator_depth = 1,
		.retry_count = 7,
		.rnr_retry_count = 6,
	};
}

/**
 * struct naaice_writes - which local regions one transfer writes, and where
 * @first: the first local region to consider
 * @peer_base: local region i goes to the peer's region i - @peer_base
 * @need_flag: skip local regions without this MRFLAG_ (0: none skipped)
 * @only: write only this local region (-1: every one from @first)
 * @bare: write no data: one zero-length WRITE WITH IMM to @bare_peer
 * @bare_peer: the peer region of that WRITE (also when no region is
 *	selected)
 * @imm: the immediate of the last WRITE, in host byte order
 * @what: what is written, for the error message ("data", "result")
 */
struct naaice_writes {
	unsigned int first, peer_base, need_flag;
	int only;
	bool bare;
	unsigned int bare_peer;
	uint32_t imm;
	const char *what;
};

int naaice_post_writes(struct naaice_communication_context *ctx,
		       const struct naaice_writes *w);

/* naaice_swnaa.c: the MRSP error code for a request, 0 to grant it */
uint8_t naaice_swnaa_check(const struct naaice_communication_context *ctx,
			   const struct naaice_mrsp_msg *m);

#endif /* NAAICE_INT_H */
