// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Helpers shared by wcubuf-send and wcubuf-emu: wcubuf_tool.h. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "snaa_dev.h"
#include "wcubuf_tool.h"

long long wcu_frame_size_opt(const char *s)
{
	uint64_t v = opt_size("--frame-size", s, 64, 1ULL << 31);

	if (v % 64)
		opt_usage_error("--frame-size: %s is not a multiple of 64", s);
	return (long long)v;
}

int wcu_image_opt(const char *s)
{
	int kind = wcubuf_image_parse(s);

	if (kind < 0)
		opt_usage_error("--image: '%s' is neither 4bit nor 6bit", s);
	return kind;
}

int64_t wcu_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

double wcu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

void wcu_sleep_us(long us)
{
	struct timespec ts = { us / 1000000, us % 1000000 * 1000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

char *wcu_gid_str(const void *gid, char *buf)
{
	if (!inet_ntop(AF_INET6, gid, buf, INET6_ADDRSTRLEN))
		strcpy(buf, "?");
	return buf;
}

int wcu_open(struct wcu_dev *d, const char *name, int port, int gid_index,
	     const union ibv_gid *like)
{
	struct ibv_gid_entry e;
	int i;

	memset(d, 0, sizeof(*d));
	d->ctx = snaa_dev_open(wcu_prog, name);
	if (!d->ctx)
		return -1;
	d->port_num = (uint8_t)port;
	if (ibv_query_port(d->ctx, d->port_num, &d->port)) {
		fprintf(stderr, "%s: %s has no port %d (--ib-port)\n", wcu_prog,
			ibv_get_device_name(d->ctx->device), port);
		goto fail;
	}
	if (d->port.state != IBV_PORT_ACTIVE)
		fprintf(stderr, "%s: warning: port %d of %s is not active "
			"(is its netdev up?)\n", wcu_prog, port,
			ibv_get_device_name(d->ctx->device));
	d->mtu = d->port.active_mtu > IBV_MTU_4096 ? IBV_MTU_4096 :
						     d->port.active_mtu;
	if (gid_index >= 0) {
		if (gid_index >= d->port.gid_tbl_len ||
		    ibv_query_gid_ex(d->ctx, d->port_num, (uint32_t)gid_index,
				     &e, 0) || snaa_gid_is_zero(&e.gid)) {
			fprintf(stderr, "%s: GID index %d of %s is empty (see "
				"ibv_devinfo -v for its GIDs)\n", wcu_prog,
				gid_index, ibv_get_device_name(d->ctx->device));
			goto fail;
		}
		if (e.gid_type != IBV_GID_TYPE_ROCE_V2)
			fprintf(stderr, "%s: warning: GID index %d is not "
				"RoCE v2\n", wcu_prog, gid_index);
	} else {
		enum snaa_gid_kind kind = like ? snaa_gid_kind_of(like) :
						 SNAA_GID_IPV4;
		const char *ip = kind == SNAA_GID_IPV4 ? "IPv4" : "IPv6";

		i = snaa_gid_find(d->ctx, d->port_num, d->port.gid_tbl_len,
				  kind, &e);
		if (i < 0) {
			fprintf(stderr, "%s: %s has no RoCE v2 %s GID: give "
				"its netdev an %s address, or pick a GID with "
				"--gid-index (ibv_devinfo -v lists them)\n",
				wcu_prog, ibv_get_device_name(d->ctx->device),
				ip, ip);
			goto fail;
		}
	}
	d->gid_index = (int)e.gid_index;
	d->gid = e.gid;
	d->pd = ibv_alloc_pd(d->ctx);
	if (!d->pd) {
		fprintf(stderr, "%s: ibv_alloc_pd: %s\n", wcu_prog,
			strerror(errno));
		goto fail;
	}
	return 0;
fail:
	ibv_close_device(d->ctx);
	d->ctx = NULL;
	return -1;
}

void wcu_close(struct wcu_dev *d)
{
	if (d->pd)
		ibv_dealloc_pd(d->pd);
	if (d->ctx)
		ibv_close_device(d->ctx);
	memset(d, 0, sizeof(*d));
}

void wcu_fill_ah(struct wcu_dev *d, struct ibv_ah_attr *ah, int sgid_index,
		 const void *dgid)
{
	union ibv_gid g;

	memcpy(g.raw, dgid, sizeof(g.raw));
	snaa_fill_av(ah, d->port_num, sgid_index, &g);
}

int wcu_ud_cqs(struct wcu_dev *d, struct wcu_ud *u)
{
	memset(u, 0, sizeof(*u));
	u->scq = ibv_create_cq(d->ctx, 16, NULL, NULL, 0);
	u->rcq = ibv_create_cq(d->ctx, WCU_UD_RECVS, NULL, NULL, 0);
	if (!u->scq || !u->rcq) {
		fprintf(stderr, "%s: ibv_create_cq: %s\n", wcu_prog,
			strerror(errno));
		return -1;
	}
	return 0;
}

uint8_t *wcu_ud_rbuf(struct wcu_ud *u, unsigned int i)
{
	return u->buf + (size_t)i * WCU_UD_BUF;
}

int wcu_ud_repost(struct wcu_ud *u, unsigned int i)
{
	struct ibv_sge sge = { (uintptr_t)wcu_ud_rbuf(u, i), WCU_UD_BUF,
			       u->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_recv(u->qp, &wr, &bad);
}

int wcu_ud_ready(struct wcu_dev *d, struct wcu_ud *u, uint32_t qkey)
{
	struct ibv_qp_attr a;
	size_t len = (size_t)(WCU_UD_RECVS + 1) * WCU_UD_BUF;
	int ret;

	u->qkey = qkey;
	u->buf = calloc(1, len);
	if (!u->buf)
		return ENOMEM;
	u->mr = ibv_reg_mr(d->pd, u->buf, len, IBV_ACCESS_LOCAL_WRITE);
	if (!u->mr)
		return errno;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = d->port_num;
	a.qkey = qkey;
	ret = ibv_modify_qp(u->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_QKEY);
	if (ret)
		return ret;
	for (unsigned int i = 0; i < WCU_UD_RECVS; i++)
		if ((ret = wcu_ud_repost(u, i)))
			return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	ret = ibv_modify_qp(u->qp, &a, IBV_QP_STATE);
	if (ret)
		return ret;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	return ibv_modify_qp(u->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

void wcu_ud_destroy(struct wcu_ud *u)
{
	if (u->qp)
		ibv_destroy_qp(u->qp);
	if (u->scq)
		ibv_destroy_cq(u->scq);
	if (u->rcq)
		ibv_destroy_cq(u->rcq);
	if (u->mr)
		ibv_dereg_mr(u->mr);
	free(u->buf);
	memset(u, 0, sizeof(*u));
}

int wcu_ud_send(struct wcu_ud *u, struct ibv_ah *ah, uint32_t qpn,
		uint32_t qkey, const struct wcubuf_status *s, int ms)
{
	uint8_t *p = wcu_ud_rbuf(u, WCU_UD_RECVS);
	struct ibv_sge sge = { (uintptr_t)p, WCUBUF_STATUS_LEN, u->mr->lkey };
	struct ibv_send_wr wr, *bad;
	struct ibv_wc wc;
	int64_t end = wcu_now_ms() + ms;
	int n, ret;

	wcubuf_status_encode(s, p, WCUBUF_STATUS_LEN);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 0x5e4d;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = qpn;
	wr.wr.ud.remote_qkey = qkey;
	ret = ibv_post_send(u->qp, &wr, &bad);
	if (ret) {
		fprintf(stderr, "%s: cannot send %s: ibv_post_send: %s\n",
			wcu_prog, wcubuf_method_name(s->method), strerror(ret));
		return -1;
	}
	while (!(n = ibv_poll_cq(u->scq, 1, &wc))) {
		if (wcu_now_ms() > end) {
			fprintf(stderr, "%s: the %s send did not complete "
				"within %d ms\n", wcu_prog,
				wcubuf_method_name(s->method), ms);
			return -1;
		}
		wcu_sleep_us(50);
	}
	if (n < 0 || wc.status != IBV_WC_SUCCESS) {
		fprintf(stderr, "%s: sending %s failed: %s\n", wcu_prog,
			wcubuf_method_name(s->method),
			n < 0 ? "ibv_poll_cq failed" :
				ibv_wc_status_str(wc.status));
		return -1;
	}
	return 0;
}

int wcu_uc_init(struct wcu_dev *d, struct ibv_qp *qp)
{
	return snaa_qp_init(qp, d->port_num, IBV_ACCESS_REMOTE_WRITE);
}

int wcu_uc_rtr_rts(struct wcu_dev *d, struct ibv_qp *qp, int sgid_index,
		   uint32_t dqpn, const void *dgid)
{
	union ibv_gid g;
	int ret;

	memcpy(g.raw, dgid, sizeof(g.raw));
	ret = snaa_qp_rtr(qp, d->port_num, sgid_index, &g, dqpn, d->mtu, 0,
			  NULL);
	return ret ? ret : snaa_qp_rts(qp, 0, NULL);
}

int wcu_uc_connect(struct wcu_dev *d, struct ibv_qp *qp, int sgid_index,
		   uint32_t dqpn, const void *dgid)
{
	int ret = wcu_uc_init(d, qp);

	return ret ? ret : wcu_uc_rtr_rts(d, qp, sgid_index, dqpn, dgid);
}

void wcu_events_counts(const uint64_t c[WCUBUF_EV_NUM], char *buf,
		       size_t len)
{
	size_t n = 0;

	buf[0] = 0;
	for (unsigned int b = 0; b < WCUBUF_EV_NUM && n < len; b++) {
		int w = snprintf(buf + n, len - n, "%s%s %llu", b ? ", " : "",
				 wcubuf_event_name(b),
				 (unsigned long long)c[b]);

		if (w < 0)
			break;
		n += (size_t)w;
	}
}
