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

/* naaice_swnaa.c: the MRSP error code for a request, 0 to grant it */
uint8_t naaice_swnaa_check(const struct naaice_communication_context *ctx,
			   const struct naaice_mrsp_msg *m);

#endif /* NAAICE_INT_H */
