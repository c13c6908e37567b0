/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What wcubuf-send and wcubuf-emu share: option parsing helpers, the
 * clock, opening a device and picking its RoCE v2 GID, the UD status QP
 * and its buffers, address vectors, the UC QP's RESET -> RTS.  Standard
 * verbs only (the emulator's direct verbs live in wcubuf_emu_main.c).
 */
#ifndef WCUBUF_TOOL_H
#define WCUBUF_TOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "snaa_gid.h"
#include "snaa_opt.h"
#include "snaa_qp.h"
#include "wcubuf.h"

#define WCU_UD_RECVS	64			/* status receive buffers */
#define WCU_UD_BUF	(WCUBUF_GRH_LEN + 64)	/* GRH + a status packet */

/* The program's name for messages ("wcubuf-send"). */
extern const char *wcu_prog;

/* --frame-size: 64 bytes to 2 GiB, a multiple of 64 (else a usage error) */
long long wcu_frame_size_opt(const char *s);
/* --image: 4bit or 6bit (else a usage error) */
int wcu_image_opt(const char *s);

int64_t wcu_now_ms(void);
double wcu_now(void);
void wcu_sleep_us(long us);

/* The GID as text (inet_ntop of its 16 bytes); returns @buf (>= 46). */
char *wcu_gid_str(const void *gid, char *buf);

struct wcu_dev {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_port_attr port;
	uint8_t port_num;
	int gid_index;		/* ours, RoCE v2 */
	union ibv_gid gid;
	enum ibv_mtu mtu;	/* path MTU: the port's active MTU, <= 4096 */
};

/*
 * Open device @name (NULL: the only one there is), port @port, and pick
 * GID @gid_index (-1: the first RoCE v2 GID of the same family as
 * @like: IPv4-mapped or IPv6).  Prints what to do on failure; returns 0
 * or -1.
 */
int wcu_open(struct wcu_dev *d, const char *name, int port, int gid_index,
	     const union ibv_gid *like);
void wcu_close(struct wcu_dev *d);

/* An address vector to @dgid from our GID @sgid_index. */
void wcu_fill_ah(struct wcu_dev *d, struct ibv_ah_attr *ah, int sgid_index,
		 const void *dgid);

/* The UD status channel: QP, CQs, receive buffers (posted), a send
 * buffer. */
struct wcu_ud {
	struct ibv_qp *qp;
	struct ibv_cq *scq, *rcq;
	struct ibv_mr *mr;
	uint8_t *buf;		/* WCU_UD_RECVS receive + 1 send buffer */
	uint32_t qkey;
};

/* Ready the UD QP @u->qp (created by the caller) with Q_Key @qkey: INIT,
 * RTR, RTS, receive buffers posted.  @u->scq/@u->rcq are its CQs. */
int wcu_ud_ready(struct wcu_dev *d, struct wcu_ud *u, uint32_t qkey);
/* Create CQs for the status QP (before creating it). */
int wcu_ud_cqs(struct wcu_dev *d, struct wcu_ud *u);
void wcu_ud_destroy(struct wcu_ud *u);
/* Receive buffer @i: its GRH area and payload. */
uint8_t *wcu_ud_rbuf(struct wcu_ud *u, unsigned int i);
int wcu_ud_repost(struct wcu_ud *u, unsigned int i);
/* Send @s to (@ah, @qpn, @qkey) and wait for the send completion (at
 * most @ms). 0 or -1 (a message was printed). */
int wcu_ud_send(struct wcu_ud *u, struct ibv_ah *ah, uint32_t qpn,
		uint32_t qkey, const struct wcubuf_status *s, int ms);

/* UC QP from RESET to RTS: from our GID @sgid_index to @dqpn at @dgid,
 * PSN 0 both ways, path MTU d->mtu, remote write allowed.  0 or an
 * errno value. */
int wcu_uc_connect(struct wcu_dev *d, struct ibv_qp *qp, int sgid_index,
		   uint32_t dqpn, const void *dgid);
/* UC QP from RESET to INIT (receive WRs may be posted then). */
int wcu_uc_init(struct wcu_dev *d, struct ibv_qp *qp);
/* UC QP from INIT to RTS. */
int wcu_uc_rtr_rts(struct wcu_dev *d, struct ibv_qp *qp, int sgid_index,
		   uint32_t dqpn, const void *dgid);

/* The 12 NACK counters as "sequence 0, parity 0, ..." into @buf. */
void wcu_events_counts(const uint64_t c[WCUBUF_EV_NUM], char *buf,
		       size_t len);

#endif /* WCUBUF_TOOL_H */
