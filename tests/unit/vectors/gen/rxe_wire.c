// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rxe_wire: capture RoCEv2 frames that rdma_rxe puts on the wire, and
 * check that rdma_rxe accepts frames built with snaa_wire.c.
 *
 * Runs as root in the test VM (see capture.sh): rxe0 sits on veth0 in
 * the initial network namespace; its peer veth1 is in namespace NETNS
 * and has no RDMA device.  This program plays the remote side itself:
 * an AF_PACKET socket on veth1 (opened inside NETNS) sees every frame
 * rxe0 sends and injects the answers, built with snaa_wire.c.
 *
 *   rxe_wire DEV NETNS IFNAME LOCAL_IP PEER_IP OUT.hex
 *
 * Every frame rxe sends is checked against the expected opcode and
 * written to OUT.hex as "LABEL HEX" (the whole Ethernet frame).  Every
 * frame injected must be accepted by rxe, observed as a successful work
 * completion; one frame with a corrupted ICRC must be dropped.  Exits
 * non-zero on the first failure.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "snaa_wire.h"
#include "crc32_le.h"

#define MTU		IBV_MTU_256
#define MTU_BYTES	256
#define BUF_SIZE	(1 << 16)

/* The emulated remote QPs. */
#define PEER_QPN_UC_TX	0x00d001	/* receives from rxe's uc_tx */
#define PEER_QPN_UC_RX	0x00d002	/* sends to rxe's uc_rx */
#define PEER_QPN_RC_REQ	0x00d003	/* responder for rxe's rc_req */
#define PEER_QPN_RC_RSP	0x00d004	/* requester for rxe's rc_rsp */
#define PEER_QPN_UD	0x00d005
#define QKEY		0x11111111u
#define PEER_RKEY	0x0000abcdu
#define PEER_VA		0x00007f0012340000ull

static const char *dev_name, *netns_name, *if_name;
static FILE *out;
static int failures;

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "rxe_wire: ");
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void check(int ok, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("%s: ", ok ? "ok" : "FAIL");
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	if (!ok)
		failures++;
}

/* ---- addresses ---- */

struct fam {
	int v6;
	const char *tag;
	__u8 rxe_ip[16], peer_ip[16];	/* IPv4: first 4 bytes */
	union ibv_gid rxe_gid, peer_gid;
	int sgid_index;
};

static void parse_ip(const char *s, struct fam *f, __u8 *ip, union ibv_gid *gid)
{
	memset(gid, 0, sizeof(*gid));
	if (inet_pton(AF_INET6, s, ip) == 1) {
		f->v6 = 1;
		memcpy(gid->raw, ip, 16);
	} else if (inet_pton(AF_INET, s, ip) == 1) {
		f->v6 = 0;
		gid->raw[10] = 0xff;
		gid->raw[11] = 0xff;
		memcpy(gid->raw + 12, ip, 4);
	} else {
		die("bad address %s", s);
	}
}

/* ---- packet socket ---- */

static int sock;
static int ifindex;
static __u8 peer_mac[6], rxe_mac[6];
static int have_rxe_mac;
static __u16 ip_id = 0x4000;

static void open_packet_socket(void)
{
	char path[256];
	struct sockaddr_ll sll = { 0 };
	struct ifreq ifr = { 0 };
	int self, ns;

	self = open("/proc/self/ns/net", O_RDONLY);
	snprintf(path, sizeof(path), "/var/run/netns/%s", netns_name);
	ns = open(path, O_RDONLY);
	if (self < 0 || ns < 0 || setns(ns, CLONE_NEWNET))
		die("cannot enter netns %s: %s", netns_name, strerror(errno));
	sock = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	if (sock < 0)
		die("socket: %s", strerror(errno));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", if_name);
	if (ioctl(sock, SIOCGIFINDEX, &ifr))
		die("SIOCGIFINDEX %s: %s", if_name, strerror(errno));
	ifindex = ifr.ifr_ifindex;
	if (ioctl(sock, SIOCGIFHWADDR, &ifr))
		die("SIOCGIFHWADDR: %s", strerror(errno));
	memcpy(peer_mac, ifr.ifr_hwaddr.sa_data, 6);
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(ETH_P_ALL);
	sll.sll_ifindex = ifindex;
	if (bind(sock, (struct sockaddr *)&sll, sizeof(sll)))
		die("bind: %s", strerror(errno));
	if (setns(self, CLONE_NEWNET))
		die("cannot return to the initial netns");
	close(ns);
	close(self);
}

/* Offset of the BTH in a RoCEv2 frame, or 0 if it is not one. */
static size_t roce_bth_off(const __u8 *f, size_t n, int *v6)
{
	if (n < 14)
		return 0;
	if (f[12] == 0x08 && f[13] == 0x00 && n >= 14 + 20 + 8 + 12 &&
	    f[14] == 0x45 && f[14 + 9] == 17 &&
	    snaa_get_be16(f + 14 + 20 + 2) == SNAA_ROCE_V2_UDP_DPORT) {
		*v6 = 0;
		return 14 + 20 + 8;
	}
	if (f[12] == 0x86 && f[13] == 0xdd && n >= 14 + 40 + 8 + 12 &&
	    (f[14] >> 4) == 6 && f[14 + 6] == 17 &&
	    snaa_get_be16(f + 14 + 40 + 2) == SNAA_ROCE_V2_UDP_DPORT) {
		*v6 = 1;
		return 14 + 40 + 8;
	}
	return 0;
}

/* Next RoCEv2 frame received on the peer's interface, 0 on timeout. */
static size_t recv_roce(__u8 *f, size_t size, int timeout_ms)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct pollfd pfd = { .fd = sock, .events = POLLIN };
		struct sockaddr_ll sll;
		socklen_t sl = sizeof(sll);
		int left, v6;
		ssize_t n;

		clock_gettime(CLOCK_MONOTONIC, &t);
		left = timeout_ms - (int)((t.tv_sec - t0.tv_sec) * 1000 +
					  (t.tv_nsec - t0.tv_nsec) / 1000000);
		if (left <= 0 || poll(&pfd, 1, left) <= 0)
			return 0;
		n = recvfrom(sock, f, size, 0, (struct sockaddr *)&sll, &sl);
		if (n <= 0 || sll.sll_pkttype == PACKET_OUTGOING)
			continue;
		if (!roce_bth_off(f, (size_t)n, &v6))
			continue;
		if (!have_rxe_mac) {
			memcpy(rxe_mac, f + 6, 6);
			have_rxe_mac = 1;
		}
		return (size_t)n;
	}
}

static __u8 last_opcode;
static __u32 last_psn = 0xffffffffu;

/*
 * expect() - the next frame from rxe must have @opcode; record it as
 * "@fam->tag.@name".  Retransmissions of the previous frame are skipped.
 * Returns the frame length, the frame in @f.
 */
static size_t expect(const struct fam *fam, __u8 *f, __u8 opcode,
		     const char *name)
{
	size_t n, off, i;
	int v6;

	for (;;) {
		n = recv_roce(f, 2048, 5000);
		if (!n) {
			check(0, "%s: rxe sends %s (timeout)", fam->tag, name);
			die("giving up");
		}
		off = roce_bth_off(f, n, &v6);
		if (f[off] == last_opcode && snaa_bth_psn(f + off) == last_psn)
			continue;	/* retransmission */
		break;
	}
	last_opcode = f[off];
	last_psn = snaa_bth_psn(f + off);
	check(f[off] == opcode && v6 == fam->v6,
	      "%s: rxe sends %s (opcode 0x%02x, psn 0x%06x, %zu bytes)",
	      fam->tag, name, f[off], last_psn, n);
	fprintf(out, "%s.%s ", fam->tag, name);
	for (i = 0; i < n; i++)
		fprintf(out, "%02x", f[i]);
	fputc('\n', out);
	fflush(out);
	return n;
}

static __u16 inet_csum(const __u8 *p, size_t n, __u32 sum)
{
	size_t i;

	for (i = 0; i + 1 < n; i += 2)
		sum += snaa_get_be16(p + i);
	if (n & 1)
		sum += (__u32)p[n - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)~sum;
}

/*
 * inject() - send BTH..pad (@len bytes at @bth) from the peer to rxe,
 * with an ICRC computed by snaa_wire.c.  The variant fields (TOS/traffic
 * class, TTL/hop limit, flow label, checksums) get non-default values
 * so that rxe's masking is exercised; @flags: INJ_BAD_ICRC flips one
 * ICRC bit, INJ_NO_UDP_CSUM leaves the UDP checksum 0 as rxe does.
 */
#define INJ_BAD_ICRC	1
#define INJ_NO_UDP_CSUM	2

static void inject(const struct fam *fam, const __u8 *bth, size_t len,
		   int flags)
{
	__u8 f[2048];
	size_t ip_len = fam->v6 ? 40 : 20, l4 = 14 + ip_len;
	size_t udp_len = 8 + len + SNAA_ICRC_BYTES;
	__u8 *ip = f + 14, *udp = f + l4;
	__u32 icrc;
	ssize_t n;
	struct sockaddr_ll sll = { 0 };

	if (!have_rxe_mac)
		die("no frame from rxe seen yet: its MAC is unknown");
	memcpy(f, rxe_mac, 6);
	memcpy(f + 6, peer_mac, 6);
	memset(ip, 0, ip_len);
	if (fam->v6) {
		f[12] = 0x86;
		f[13] = 0xdd;
		snaa_put_be32(ip, 0x60000000u | (0x68u << 20) | 0xabcde);
		snaa_put_be16(ip + 4, (__u16)udp_len);
		ip[6] = 17;
		ip[7] = 63;
		memcpy(ip + 8, fam->peer_ip, 16);
		memcpy(ip + 24, fam->rxe_ip, 16);
	} else {
		f[12] = 0x08;
		f[13] = 0x00;
		ip[0] = 0x45;
		ip[1] = 0x68;				/* DSCP 26 */
		snaa_put_be16(ip + 2, (__u16)(20 + udp_len));
		snaa_put_be16(ip + 4, ip_id++);
		snaa_put_be16(ip + 6, 0x4000);		/* DF */
		ip[8] = 63;
		ip[9] = 17;
		memcpy(ip + 12, fam->peer_ip, 4);
		memcpy(ip + 16, fam->rxe_ip, 4);
		snaa_put_be16(ip + 10, inet_csum(ip, 20, 0));
	}
	snaa_put_be16(udp, 0xc0de);
	snaa_put_be16(udp + 2, SNAA_ROCE_V2_UDP_DPORT);
	snaa_put_be16(udp + 4, (__u16)udp_len);
	snaa_put_be16(udp + 6, 0);
	memcpy(udp + 8, bth, len);

	icrc = snaa_icrc_compute(test_crc32_le, ip, fam->v6, udp + 8, len);
	if (flags & INJ_BAD_ICRC)
		icrc ^= 0x00010000;
	snaa_icrc_put(udp + 8 + len, icrc);

	/* UDP checksum over the pseudo header and the whole datagram */
	if (!(flags & INJ_NO_UDP_CSUM)) {
		__u8 ph[40];
		__u32 sum = 0;
		size_t i, alen = fam->v6 ? 16 : 4;

		memcpy(ph, fam->v6 ? ip + 8 : ip + 12, alen * 2);
		for (i = 0; i < alen * 2; i += 2)
			sum += snaa_get_be16(ph + i);
		sum += 17 + (__u32)udp_len;
		__u16 c = inet_csum(udp, udp_len, sum);

		snaa_put_be16(udp + 6, c ? c : 0xffff);
	}

	sll.sll_family = AF_PACKET;
	sll.sll_ifindex = ifindex;
	sll.sll_halen = 6;
	memcpy(sll.sll_addr, rxe_mac, 6);
	n = sendto(sock, f, l4 + udp_len, 0, (struct sockaddr *)&sll,
		   sizeof(sll));
	if (n != (ssize_t)(l4 + udp_len))
		die("sendto: %s", strerror(errno));
}

/* ---- verbs ---- */

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_mr *mr;
static __u8 *buf;

static int find_gid(const union ibv_gid *gid)
{
	struct ibv_port_attr pa;
	int i;

	if (ibv_query_port(ctx, 1, &pa))
		die("query_port");
	for (i = 0; i < pa.gid_tbl_len; i++) {
		struct ibv_gid_entry e;

		if (ibv_query_gid_ex(ctx, 1, i, &e, 0))
			continue;
		if (e.gid_type == IBV_GID_TYPE_ROCE_V2 &&
		    !memcmp(e.gid.raw, gid->raw, 16))
			return i;
	}
	return -1;
}

static struct ibv_qp *make_qp(enum ibv_qp_type type)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = type,
		.cap = { .max_send_wr = 32, .max_recv_wr = 32,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);

	if (!qp)
		die("create_qp: %s", strerror(errno));
	return qp;
}

static void connect_qp(struct ibv_qp *qp, const struct fam *fam,
		       __u32 dqpn, __u32 sq_psn, __u32 rq_psn)
{
	struct ibv_qp_attr a;
	int rc = qp->qp_type == IBV_QPT_RC;
	int mask;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			    IBV_ACCESS_REMOTE_ATOMIC;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		die("INIT: %s", strerror(errno));

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = MTU;
	a.dest_qp_num = dqpn;
	a.rq_psn = rq_psn;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = fam->peer_gid;
	a.ah_attr.grh.sgid_index = (__u8)fam->sgid_index;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.grh.traffic_class = 0;
	a.ah_attr.port_num = 1;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 12;
	mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
	       IBV_QP_RQ_PSN;
	if (rc)
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	if (ibv_modify_qp(qp, &a, mask))
		die("RTR: %s", strerror(errno));

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = sq_psn;
	a.timeout = 18;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (rc)
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	if (ibv_modify_qp(qp, &a, mask))
		die("RTS: %s", strerror(errno));
}

static void ud_ready(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qkey = QKEY;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_QKEY))
		die("UD INIT");
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		die("UD RTR");
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0x000042;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		die("UD RTS");
}

static void post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
		      size_t off, size_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(buf + off), .length = (__u32)len,
		.lkey = mr->lkey,
	};
	struct ibv_send_wr *bad;

	wr->sg_list = &sge;
	wr->num_sge = len ? 1 : 0;
	wr->send_flags |= IBV_SEND_SIGNALED;
	if (ibv_post_send(qp, wr, &bad))
		die("post_send: %s", strerror(errno));
}

static void post_recv(struct ibv_qp *qp, size_t off, size_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(buf + off), .length = (__u32)len,
		.lkey = mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = off, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	if (ibv_post_recv(qp, &wr, &bad))
		die("post_recv: %s", strerror(errno));
}

/* One completion within @ms, or status -1 / wc zeroed on timeout. */
static int poll_one(struct ibv_wc *wc, int ms)
{
	int i;

	for (i = 0; i < ms; i++) {
		int n = ibv_poll_cq(cq, 1, wc);

		if (n < 0)
			die("poll_cq");
		if (n == 1)
			return 0;
		usleep(1000);
	}
	memset(wc, 0, sizeof(*wc));
	return -1;
}

static void expect_wc(const char *what, enum ibv_wc_opcode op,
		      __u32 byte_len, struct ibv_wc *wc)
{
	int err = poll_one(wc, 5000);

	check(!err && wc->status == IBV_WC_SUCCESS && wc->opcode == op &&
	      (byte_len == ~0u || wc->byte_len == byte_len),
	      "%s: completion (timeout %d, status %s, opcode %d, len %u)",
	      what, err, ibv_wc_status_str(wc->status), wc->opcode,
	      wc->byte_len);
}

static void fill(size_t off, size_t len, __u8 seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[off + i] = (__u8)(seed + i * 7);
}

/* ---- BTH and friends for injected packets ---- */

static size_t bth(__u8 *p, __u8 opcode, __u32 dqpn, __u32 psn, int pad,
		  int ack_req)
{
	struct snaa_bth_info b = {
		.opcode = opcode, .pad = (__u8)pad, .pkey = SNAA_DEFAULT_PKEY,
		.dqpn = dqpn, .ack_req = (__u8)ack_req, .psn = psn,
	};

	snaa_bth_set(p, &b);
	return SNAA_BTH_BYTES;
}

static size_t payload(__u8 *p, size_t len, __u8 seed)
{
	size_t i, pad = snaa_pad_for((__u32)len);

	for (i = 0; i < len; i++)
		p[i] = (__u8)(seed + i * 13);
	memset(p + len, 0, pad);
	return len + pad;
}

/* ---- the scenario ---- */

static void run(struct fam *fam)
{
	struct ibv_qp *uc_tx, *uc_rx, *rc_req, *rc_rsp, *ud;
	struct ibv_send_wr wr;
	struct ibv_wc wc;
	__u8 f[2048], p[2048];
	size_t n, off;
	__u32 psn;
	int i, v6;

	fam->sgid_index = find_gid(&fam->rxe_gid);
	if (fam->sgid_index < 0)
		die("%s: no RoCEv2 GID for the local address", fam->tag);
	printf("# %s: sgid_index %d\n", fam->tag, fam->sgid_index);
	last_psn = 0xffffffffu;

	uc_tx = make_qp(IBV_QPT_UC);
	uc_rx = make_qp(IBV_QPT_UC);
	rc_req = make_qp(IBV_QPT_RC);
	rc_rsp = make_qp(IBV_QPT_RC);
	ud = make_qp(IBV_QPT_UD);
	connect_qp(uc_tx, fam, PEER_QPN_UC_TX, 0xfffffe, 0);
	connect_qp(uc_rx, fam, PEER_QPN_UC_RX, 0, 0x123456);
	connect_qp(rc_req, fam, PEER_QPN_RC_REQ, 0xfffffd, 0);
	connect_qp(rc_rsp, fam, PEER_QPN_RC_RSP, 0x000777, 0x000100);
	ud_ready(ud);
	printf("# %s: qpn uc_tx 0x%06x uc_rx 0x%06x rc_req 0x%06x rc_rsp 0x%06x ud 0x%06x\n",
	       fam->tag, uc_tx->qp_num, uc_rx->qp_num, rc_req->qp_num,
	       rc_rsp->qp_num, ud->qp_num);
	fill(0, 0x8000, 0x31);

	/* 1. UC requester: rxe sends, nobody answers. */
	memset(&wr, 0, sizeof(wr));
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.wr.rdma.remote_addr = PEER_VA;
	wr.wr.rdma.rkey = PEER_RKEY;
	post_send(uc_tx, &wr, 0, 600);
	expect(fam, f, 0x26, "UC_RDMA_WRITE_FIRST");	/* psn 0xfffffe */
	expect(fam, f, 0x27, "UC_RDMA_WRITE_MIDDLE");	/* 0xffffff */
	expect(fam, f, 0x28, "UC_RDMA_WRITE_LAST");	/* 0x000000 */
	expect_wc("uc write 600", IBV_WC_RDMA_WRITE, ~0u, &wc);

	memset(&wr, 0, sizeof(wr));
	wr.opcode = IBV_WR_SEND;
	post_send(uc_tx, &wr, 0x100, 1);
	expect(fam, f, 0x24, "UC_SEND_ONLY.pad3");
	expect_wc("uc send 1", IBV_WC_SEND, ~0u, &wc);

	memset(&wr, 0, sizeof(wr));
	wr.opcode = IBV_WR_SEND_WITH_IMM;
	wr.imm_data = htobe32(0x11223344);
	post_send(uc_tx, &wr, 0x200, 13);
	expect(fam, f, 0x25, "UC_SEND_ONLY_WITH_IMMEDIATE.pad3");
	expect_wc("uc send imm 13", IBV_WC_SEND, ~0u, &wc);

	memset(&wr, 0, sizeof(wr));
	wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	wr.imm_data = htobe32(0xcafef00d);
	wr.wr.rdma.remote_addr = PEER_VA + 0x1000;
	wr.wr.rdma.rkey = PEER_RKEY;
	post_send(uc_tx, &wr, 0x300, 302);
	expect(fam, f, 0x26, "UC_RDMA_WRITE_FIRST");
	expect(fam, f, 0x29, "UC_RDMA_WRITE_LAST_WITH_IMMEDIATE.pad2");
	expect_wc("uc write imm 302", IBV_WC_RDMA_WRITE, ~0u, &wc);

	memset(&wr, 0, sizeof(wr));
	wr.opcode = IBV_WR_SEND;
	post_send(uc_tx, &wr, 0x500, 520);
	expect(fam, f, 0x20, "UC_SEND_FIRST");
	expect(fam, f, 0x21, "UC_SEND_MIDDLE");
	expect(fam, f, 0x22, "UC_SEND_LAST");
	expect_wc("uc send 520", IBV_WC_SEND, ~0u, &wc);

	memset(&wr, 0, sizeof(wr));
	wr.opcode = IBV_WR_SEND_WITH_IMM;
	wr.imm_data = htobe32(0x0badc0de);
	post_send(uc_tx, &wr, 0x800, 270);
	expect(fam, f, 0x20, "UC_SEND_FIRST");
	expect(fam, f, 0x23, "UC_SEND_LAST_WITH_IMMEDIATE.pad2");
	expect_wc("uc send imm 270", IBV_WC_SEND, ~0u, &wc);

	memset(&wr, 0, sizeof(wr));
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.wr.rdma.remote_addr = PEER_VA + 0x2000;
	wr.wr.rdma.rkey = PEER_RKEY;
	post_send(uc_tx, &wr, 0, 0);
	expect(fam, f, 0x2a, "UC_RDMA_WRITE_ONLY.empty");
	expect_wc("uc write 0", IBV_WC_RDMA_WRITE, ~0u, &wc);

	memset(&wr, 0, sizeof(wr));
	wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	wr.imm_data = htobe32(0x00000001);
	wr.wr.rdma.remote_addr = PEER_VA + 0x3040;
	wr.wr.rdma.rkey = PEER_RKEY;
	post_send(uc_tx, &wr, 0xa00, 64);
	expect(fam, f, 0x2b, "UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE");
	expect_wc("uc write imm 64", IBV_WC_RDMA_WRITE, ~0u, &wc);

	memset(&wr, 0, sizeof(wr));
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SOLICITED;
	post_send(uc_tx, &wr, 0xb00, 2);
	expect(fam, f, 0x24, "UC_SEND_ONLY.se.pad2");
	expect_wc("uc send 2 solicited", IBV_WC_SEND, ~0u, &wc);

	/* 2. UC responder: the peer sends, rxe must accept. */
	post_recv(uc_rx, 0x4000, 1024);
	post_recv(uc_rx, 0x4400, 1024);
	post_recv(uc_rx, 0x4800, 1024);
	psn = 0x123456;
	n = bth(p, 0x25, uc_rx->qp_num, psn++, 3, 0);
	snaa_immdt_set(p + n, 0xa1b2c3d4);
	n += 4;
	n += payload(p + n, 13, 0x50);
	inject(fam, p, n, 0);
	expect_wc("rxe accepts UC_SEND_ONLY_WITH_IMMEDIATE", IBV_WC_RECV, 13,
		  &wc);
	check(wc.wc_flags & IBV_WC_WITH_IMM &&
	      be32toh(wc.imm_data) == 0xa1b2c3d4 &&
	      !memcmp(buf + 0x4000, p + 16, 13),
	      "%s: immediate data and payload as sent (imm 0x%08x)",
	      fam->tag, be32toh(wc.imm_data));

	/* WRITE FIRST (RETH) + LAST_WITH_IMMEDIATE into the ring at 0x6000 */
	{
		struct snaa_reth_info r = {
			.va = (uintptr_t)(buf + 0x6000), .rkey = mr->rkey,
			.dma_len = 300,
		};

		memset(buf + 0x6000, 0, 300);
		n = bth(p, 0x26, uc_rx->qp_num, psn++, 0, 0);
		snaa_reth_set(p + n, &r);
		n += 16;
		n += payload(p + n, 256, 0x70);
		inject(fam, p, n, 0);
		memcpy(f, p + 28, 256);
		n = bth(p, 0x29, uc_rx->qp_num, psn++, snaa_pad_for(44), 0);
		snaa_immdt_set(p + n, 0x01020304);
		n += 4;
		n += payload(p + n, 44, 0x90);
		memcpy(f + 256, p + 16, 44);
		inject(fam, p, n, 0);
		expect_wc("rxe accepts UC_RDMA_WRITE_FIRST + LAST_WITH_IMMEDIATE",
			  IBV_WC_RECV_RDMA_WITH_IMM, 300, &wc);
		check(be32toh(wc.imm_data) == 0x01020304 &&
		      !memcmp(buf + 0x6000, f, 300),
		      "%s: RDMA WRITE data placed at the RETH VA", fam->tag);
	}

	/* the same SEND with a corrupted ICRC is dropped; then accepted */
	n = bth(p, 0x24, uc_rx->qp_num, psn, 0, 0);
	n += payload(p + n, 8, 0xb0);
	inject(fam, p, n, INJ_BAD_ICRC);
	check(poll_one(&wc, 500) == -1,
	      "%s: rxe drops UC_SEND_ONLY with a bad ICRC", fam->tag);
	inject(fam, p, n, INJ_NO_UDP_CSUM);
	expect_wc("rxe accepts the same UC_SEND_ONLY with a good ICRC and UDP checksum 0",
		  IBV_WC_RECV, 8, &wc);

	/* 3. RC requester: rxe sends, the peer answers. */
	memset(&wr, 0, sizeof(wr));
	wr.opcode = IBV_WR_SEND;
	post_send(rc_req, &wr, 0xc00, 40);
	n = expect(fam, f, 0x04, "RC_SEND_ONLY");
	off = roce_bth_off(f, n, &v6);
	psn = snaa_bth_psn(f + off);
	check(snaa_bth_ack_req(f + off), "%s: RC SEND ONLY asks for an ACK",
	      fam->tag);
	{
		struct snaa_aeth_info a = {
			.syndrome = snaa_aeth_syndrome(SNAA_AETH_ACK,
						       SNAA_AETH_CREDIT_INVALID),
			.msn = 1,
		};

		n = bth(p, 0x11, rc_req->qp_num, psn, 0, 0);
		snaa_aeth_set(p + n, &a);
		inject(fam, p, n + 4, 0);
		expect_wc("rxe accepts RC_ACKNOWLEDGE", IBV_WC_SEND, ~0u, &wc);
	}

	memset(&wr, 0, sizeof(wr));
	wr.opcode = IBV_WR_RDMA_READ;
	wr.wr.rdma.remote_addr = PEER_VA;
	wr.wr.rdma.rkey = PEER_RKEY;
	memset(buf + 0x7000, 0, 600);
	post_send(rc_req, &wr, 0x7000, 600);
	n = expect(fam, f, 0x0c, "RC_RDMA_READ_REQUEST");
	off = roce_bth_off(f, n, &v6);
	psn = snaa_bth_psn(f + off);
	{
		static const __u8 ops[3] = { 0x0d, 0x0e, 0x0f };
		static const size_t lens[3] = { 256, 256, 88 };
		struct snaa_aeth_info a = {
			.syndrome = snaa_aeth_syndrome(SNAA_AETH_ACK,
						       SNAA_AETH_CREDIT_INVALID),
			.msn = 2,
		};
		__u8 expect_data[600];

		for (i = 0; i < 3; i++) {
			n = bth(p, ops[i], rc_req->qp_num,
				snaa_psn_add(psn, (__u32)i), 0, 0);
			if (i != 1) {
				snaa_aeth_set(p + n, &a);
				n += 4;
			}
			n += payload(p + n, lens[i], (__u8)(0x10 * i + 3));
			memcpy(expect_data + 256 * i, p + n - lens[i], lens[i]);
			inject(fam, p, n, 0);
		}
		expect_wc("rxe accepts RC_RDMA_READ_RESPONSE_FIRST/MIDDLE/LAST",
			  IBV_WC_RDMA_READ, 600, &wc);
		check(!memcmp(buf + 0x7000, expect_data, 600),
		      "%s: RDMA READ data as sent", fam->tag);
	}

	memset(&wr, 0, sizeof(wr));
	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	wr.wr.atomic.remote_addr = PEER_VA + 8;
	wr.wr.atomic.rkey = PEER_RKEY;
	wr.wr.atomic.compare_add = 5;
	post_send(rc_req, &wr, 0x7800, 8);
	n = expect(fam, f, 0x14, "RC_FETCH_ADD");
	off = roce_bth_off(f, n, &v6);
	psn = snaa_bth_psn(f + off);
	{
		struct snaa_aeth_info a = {
			.syndrome = snaa_aeth_syndrome(SNAA_AETH_ACK,
						       SNAA_AETH_CREDIT_INVALID),
			.msn = 3,
		};
		__u64 orig;

		n = bth(p, 0x12, rc_req->qp_num, psn, 0, 0);
		snaa_aeth_set(p + n, &a);
		snaa_atmack_set(p + n + 4, 0x0102030405060708ull);
		inject(fam, p, n + 12, 0);
		expect_wc("rxe accepts RC_ATOMIC_ACKNOWLEDGE",
			  IBV_WC_FETCH_ADD, ~0u, &wc);
		memcpy(&orig, buf + 0x7800, 8);
		check(orig == 0x0102030405060708ull,
		      "%s: atomic original value as sent (0x%016llx)",
		      fam->tag, (unsigned long long)orig);
	}

	memset(&wr, 0, sizeof(wr));
	wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	wr.imm_data = htobe32(0x55667788);
	wr.wr.rdma.remote_addr = PEER_VA + 0x100;
	wr.wr.rdma.rkey = PEER_RKEY;
	post_send(rc_req, &wr, 0xd00, 257);
	expect(fam, f, 0x06, "RC_RDMA_WRITE_FIRST");
	n = expect(fam, f, 0x09, "RC_RDMA_WRITE_LAST_WITH_IMMEDIATE.pad3");
	off = roce_bth_off(f, n, &v6);
	psn = snaa_bth_psn(f + off);
	{
		struct snaa_aeth_info a = {
			.syndrome = snaa_aeth_syndrome(SNAA_AETH_ACK,
						       SNAA_AETH_CREDIT_INVALID),
			.msn = 4,
		};

		n = bth(p, 0x11, rc_req->qp_num, psn, 0, 0);
		snaa_aeth_set(p + n, &a);
		inject(fam, p, n + 4, 0);
		expect_wc("rxe accepts RC_ACKNOWLEDGE (write)",
			  IBV_WC_RDMA_WRITE, ~0u, &wc);
	}

	/* 4. RC responder: the peer sends, rxe answers. */
	post_recv(rc_rsp, 0x5000, 1024);
	psn = 0x000100;
	n = bth(p, 0x04, rc_rsp->qp_num, psn++, 0, 1);
	n += payload(p + n, 20, 0xd0);
	inject(fam, p, n, 0);
	expect(fam, f, 0x11, "RC_ACKNOWLEDGE");
	expect_wc("rxe accepts RC_SEND_ONLY", IBV_WC_RECV, 20, &wc);

	{
		struct snaa_reth_info r = {
			.va = (uintptr_t)(buf + 0x100), .rkey = mr->rkey,
			.dma_len = 600,
		};

		n = bth(p, 0x0c, rc_rsp->qp_num, psn, 0, 1);
		psn = snaa_psn_add(psn, 3);
		snaa_reth_set(p + n, &r);
		inject(fam, p, n + 16, 0);
		expect(fam, f, 0x0d, "RC_RDMA_READ_RESPONSE_FIRST");
		expect(fam, f, 0x0e, "RC_RDMA_READ_RESPONSE_MIDDLE");
		expect(fam, f, 0x0f, "RC_RDMA_READ_RESPONSE_LAST");

		n = bth(p, 0x0c, rc_rsp->qp_num, psn, 0, 1);
		psn = snaa_psn_add(psn, 1);
		r.dma_len = 7;
		snaa_reth_set(p + n, &r);
		inject(fam, p, n + 16, 0);
		expect(fam, f, 0x10, "RC_RDMA_READ_RESPONSE_ONLY.pad1");
	}
	{
		struct snaa_reth_info r = {
			.va = (uintptr_t)(buf + 0x5800), .rkey = mr->rkey,
			.dma_len = 5,
		};

		n = bth(p, 0x0a, rc_rsp->qp_num, psn++, 3, 1);
		snaa_reth_set(p + n, &r);
		n += 16;
		n += payload(p + n, 5, 0xe0);
		inject(fam, p, n, 0);
		expect(fam, f, 0x11, "RC_ACKNOWLEDGE");
		check(!memcmp(buf + 0x5800, p + 28, 5),
		      "%s: rxe accepts RC_RDMA_WRITE_ONLY (data placed)",
		      fam->tag);
	}
	{
		struct snaa_atmeth_info at = {
			.va = (uintptr_t)(buf + 0x5c00), .rkey = mr->rkey,
			.swap_add = 0x10,
		};
		__u64 v = 0x1122334455667788ull;

		memcpy(buf + 0x5c00, &v, 8);
		n = bth(p, 0x14, rc_rsp->qp_num, psn++, 0, 1);
		snaa_atmeth_set(p + n, &at);
		inject(fam, p, n + 28, 0);
		n = expect(fam, f, 0x12, "RC_ATOMIC_ACKNOWLEDGE");
		off = roce_bth_off(f, n, &v6);
		memcpy(&v, buf + 0x5c00, 8);
		check(snaa_atmack_get(f + off + 16) == 0x1122334455667788ull &&
		      v == 0x1122334455667798ull,
		      "%s: rxe executes RC_FETCH_ADD", fam->tag);
	}
	/* a PSN gap: rxe NAKs with "PSN sequence error" */
	n = bth(p, 0x04, rc_rsp->qp_num, snaa_psn_add(psn, 1), 0, 1);
	n += payload(p + n, 4, 0xf0);
	inject(fam, p, n, 0);
	n = expect(fam, f, 0x11, "RC_ACKNOWLEDGE.nak_psn_seq");
	off = roce_bth_off(f, n, &v6);
	check(f[off + 12] == 0x60 && snaa_bth_psn(f + off) == psn,
	      "%s: NAK PSN sequence error for the expected PSN (syndrome 0x%02x)",
	      fam->tag, f[off + 12]);

	/* 5. UD */
	{
		struct ibv_ah_attr aa = {
			.is_global = 1, .port_num = 1,
			.grh = { .dgid = fam->peer_gid,
				 .sgid_index = (__u8)fam->sgid_index,
				 .hop_limit = 64 },
		};
		struct ibv_ah *ah = ibv_create_ah(pd, &aa);

		if (!ah)
			die("create_ah: %s", strerror(errno));
		memset(&wr, 0, sizeof(wr));
		wr.opcode = IBV_WR_SEND;
		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = PEER_QPN_UD;
		wr.wr.ud.remote_qkey = QKEY;
		post_send(ud, &wr, 0xe00, 33);
		expect(fam, f, 0x64, "UD_SEND_ONLY.pad3");
		expect_wc("ud send 33", IBV_WC_SEND, ~0u, &wc);

		memset(&wr, 0, sizeof(wr));
		wr.opcode = IBV_WR_SEND_WITH_IMM;
		wr.imm_data = htobe32(0x99aabbcc);
		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = PEER_QPN_UD;
		wr.wr.ud.remote_qkey = QKEY;
		post_send(ud, &wr, 0xf00, 8);
		expect(fam, f, 0x65, "UD_SEND_ONLY_WITH_IMMEDIATE");
		expect_wc("ud send imm 8", IBV_WC_SEND, ~0u, &wc);
		ibv_destroy_ah(ah);
	}
	post_recv(ud, 0x9000, 1024);
	{
		struct snaa_deth_info d = { .qkey = QKEY, .sqpn = PEER_QPN_UD };

		n = bth(p, 0x65, ud->qp_num, 0x000777, 3, 0);
		snaa_deth_set(p + n, &d);
		n += 8;
		snaa_immdt_set(p + n, 0x0a0b0c0d);
		n += 4;
		n += payload(p + n, 9, 0x21);
		inject(fam, p, n, 0);
		expect_wc("rxe accepts UD_SEND_ONLY_WITH_IMMEDIATE",
			  IBV_WC_RECV, 40 + 9, &wc);
		check(wc.src_qp == PEER_QPN_UD &&
		      be32toh(wc.imm_data) == 0x0a0b0c0d &&
		      !memcmp(buf + 0x9000 + 40, p + 24, 9),
		      "%s: UD source QP, immediate data and payload as sent",
		      fam->tag);
	}

	ibv_destroy_qp(uc_tx);
	ibv_destroy_qp(uc_rx);
	ibv_destroy_qp(rc_req);
	ibv_destroy_qp(rc_rsp);
	ibv_destroy_qp(ud);
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	struct fam fam;
	int i, n;

	if (argc != 7)
		die("usage: rxe_wire DEV NETNS IFNAME LOCAL_IP PEER_IP OUT.hex");
	dev_name = argv[1];
	netns_name = argv[2];
	if_name = argv[3];
	memset(&fam, 0, sizeof(fam));
	parse_ip(argv[4], &fam, fam.rxe_ip, &fam.rxe_gid);
	parse_ip(argv[5], &fam, fam.peer_ip, &fam.peer_gid);
	fam.tag = fam.v6 ? "v6" : "v4";
	out = fopen(argv[6], "a");
	if (!out)
		die("%s: %s", argv[6], strerror(errno));

	open_packet_socket();
	list = ibv_get_device_list(&n);
	for (i = 0; list && i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), dev_name))
			ctx = ibv_open_device(list[i]);
	if (!ctx)
		die("no device %s", dev_name);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	buf = aligned_alloc(4096, BUF_SIZE);
	if (!pd || !cq || !buf)
		die("setup");
	memset(buf, 0, BUF_SIZE);
	mr = ibv_reg_mr(pd, buf, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			IBV_ACCESS_REMOTE_ATOMIC);
	if (!mr)
		die("reg_mr: %s", strerror(errno));

	run(&fam);

	fclose(out);
	printf("# %s: %d failure(s)\n", fam.tag, failures);
	return failures ? 1 : 0;
}
