// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * wcubuf-send: a Rasterizer worker of the WCU.BUF streaming protocol
 * (seed 000) with standard verbs only, so that it runs on rdma_rxe, snaa
 * or a ConnectX against the real board.  Registers on the status channel
 * (STAT_REQ, DATA_REQ), streams frames of synthetic images with one
 * UC RDMA WRITE per frame, at most --inflight of them unanswered, reacts
 * to each ACK/NACK as Table 3.4 says (libwcubuf's wcubuf_tx), and ends
 * with DATA_TERM and STAT_TERM.  Exit status: see usage().
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wcubuf_tool.h"

enum {
	EX_OK		= 0,
	EX_STREAM	= 1,	/* not every frame ACKed: the emulator quit */
	EX_USAGE	= 2,
	EX_REGISTER	= 3,	/* no STAT_RES / DATA_RES, wrong version */
	EX_REFUSED	= 4,	/* NACK invalid R_Key or VA */
	EX_INTERRUPTED	= 5,
	EX_LOCAL	= 7,	/* device, verbs, memory */
};

#define STATUS_TRIES		5
#define STATUS_WAIT_MS		2000
#define ACK_BUF			64	/* bytes per ACK/NACK receive buffer */
#define RECV_BIT		(1ULL << 63)
#define MAX_INFLIGHT		4096
#define MAX_BUFFER		(1ULL << 30)

const char *wcu_prog = "wcubuf-send";
static volatile sig_atomic_t stop;

struct opts {
	const char *dev, *to;
	int port, gid_index;
	uint32_t status_qpn;
	uint64_t frames;
	uint32_t frame_size;
	enum wcubuf_image_kind image;
	uint32_t inflight;
	uint32_t timeout_ms;
	bool static_images;	/* fill each slot once (benchmarks) */
};

struct sender {
	struct opts o;
	struct wcu_dev d;
	struct wcu_ud st;
	struct ibv_ah *emu_ah;
	union ibv_gid emu_gid;
	char emu_str[INET6_ADDRSTRLEN];
	/* data channel */
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr, *amr;
	uint8_t *frames, *abuf;
	uint32_t nrecv;
	uint32_t emu_qpn, rkey;
	uint64_t va_offs;
	bool data_up, status_up;
	/* send queue accounting: tickets are WR numbers from 1 */
	uint32_t sq_depth, sig_every;
	uint64_t ticket, reaped, last_sig;
	uint64_t *slot_ticket;
	bool *slot_retx;
	struct wcubuf_tx tx;
	struct wcubuf_tx_frame *slots;
	uint64_t bad_answers;	/* undecodable ACK/NACK receives */
};

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: wcubuf-send --dev DEV --to IP [--status-qpn N] --frames N\n"
"                   --frame-size SIZE --image 4bit|6bit [--inflight N]\n"
"                   [--timeout-ms N] [--gid-index N] [--ib-port N]\n"
"                   [--static-images]\n"
"A Rasterizer worker of the WCU.BUF streaming protocol: registers with the\n"
"WCU.BUF (or wcubuf-emu) at IP on its status channel, streams N frames of\n"
"synthetic images with UC RDMA WRITEs, retransmits what is NACKed or not\n"
"answered, and ends the channels with DATA_TERM and STAT_TERM.\n"
"\n"
"  -d, --dev DEV          RDMA device (may be left out if there is one)\n"
"  -t, --to IP            the WCU.BUF's IPv4 or IPv6 address (its GID)\n"
"  -q, --status-qpn N     its status channel QPN (default %u; Q_Key 0x%08x)\n"
"  -n, --frames N         frames to deliver\n"
"  -s, --frame-size SIZE  bytes per frame, a multiple of 64 holding at least\n"
"                         one image (K, M, G); must equal wcubuf-emu's\n"
"  -i, --image KIND       4bit (32832-byte images) or 6bit (65600 bytes)\n"
"  -w, --inflight N       frames sent but not yet answered (default 16)\n"
"  -T, --timeout-ms N     retransmit a frame unanswered this long\n"
"                         (default 20000, the seed's); give up after %d\n"
"                         timeouts of one frame in a row\n"
"  -g, --gid-index N      our GID (default: the first RoCE v2 GID of IP's\n"
"                         family)\n"
"      --ib-port N        device port (default 1)\n"
"  -S, --static-images    synthesize the images of the first --inflight\n"
"                         frames only and send those again in every later\n"
"                         round (their VAs and CRCs are then stale): to\n"
"                         measure the protocol without the image synthesis;\n"
"                         the emulator must not --verify\n"
"  -h, --help             this text\n"
"\n"
"Exit status: 0 every frame ACKed, 1 the stream broke off (no answers, or\n"
"a frame NACKed %d times in a row), 2 usage, 3 no registration (no\n"
"STAT_RES/DATA_RES, or a protocol version other than 1.x), 4 the WCU.BUF\n"
"refused the R_Key or a VA, 5 interrupted, 7 local failure.\n",
		WCUBUF_STATUS_QPN, WCUBUF_STATUS_QKEY, WCUBUF_TX_MAX_TIMEOUTS,
		WCUBUF_TX_MAX_NACKS);
}

static int parse(struct opts *o, int argc, char **argv)
{
	enum { O_IB_PORT = 256 };	/* long only: -p is a TCP port elsewhere */
	static const struct option lopts[] = {
		{ "dev", required_argument, NULL, 'd' },
		{ "to", required_argument, NULL, 't' },
		{ "status-qpn", required_argument, NULL, 'q' },
		{ "frames", required_argument, NULL, 'n' },
		{ "frame-size", required_argument, NULL, 's' },
		{ "image", required_argument, NULL, 'i' },
		{ "inflight", required_argument, NULL, 'w' },
		{ "timeout-ms", required_argument, NULL, 'T' },
		{ "gid-index", required_argument, NULL, 'g' },
		{ "ib-port", required_argument, NULL, O_IB_PORT },
		{ "static-images", no_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	long long frame = -1;
	int c, image = -1;

	memset(o, 0, sizeof(*o));
	o->port = 1;
	o->gid_index = -1;
	o->status_qpn = WCUBUF_STATUS_QPN;
	o->inflight = 16;
	o->timeout_ms = 20000;
	o->frames = UINT64_MAX;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":d:t:q:n:s:i:w:T:g:Sh", lopts,
				NULL)) != -1) {
		switch (c) {
		case 'd': o->dev = optarg; break;
		case 't': o->to = optarg; break;
		case 'q':
			o->status_qpn = (uint32_t)opt_long("--status-qpn",
							   optarg, 1, 0xffffff);
			break;
		case 'n':
			o->frames = (uint64_t)opt_long("--frames", optarg, 1,
						       INT64_MAX);
			break;
		case 's':
			frame = wcu_frame_size_opt(optarg);
			break;
		case 'i':
			image = wcu_image_opt(optarg);
			break;
		case 'w':
			o->inflight = (uint32_t)opt_long("--inflight", optarg,
							 1, MAX_INFLIGHT);
			break;
		case 'T':
			o->timeout_ms = (uint32_t)opt_long("--timeout-ms",
							   optarg, 1, 3600000);
			break;
		case 'g':
			o->gid_index = opt_int("--gid-index", optarg, 0, 65535);
			break;
		case O_IB_PORT:
			o->port = opt_int("--ib-port", optarg, 1, 255);
			break;
		case 'S':
			o->static_images = true;
			break;
		default:
			opt_help_or_error(c, argv, usage);
		}
	}
	opt_no_operands(argc, argv);
	if (!o->to || o->frames == UINT64_MAX || frame < 0 || image < 0)
		opt_usage_error("--to, --frames, --frame-size and --image are "
				"required");
	o->frame_size = (uint32_t)frame;
	o->image = (enum wcubuf_image_kind)image;
	if (!wcubuf_frame_images(o->frame_size, o->image)) {
		fprintf(stderr, "wcubuf-send: a frame of %u bytes holds no "
			"%s image (%zu bytes): use a larger --frame-size\n",
			o->frame_size, wcubuf_image_name(o->image),
			wcubuf_image_size(o->image));
		return -1;
	}
	if ((uint64_t)o->inflight * o->frame_size > MAX_BUFFER) {
		fprintf(stderr, "wcubuf-send: --inflight %u frames of %u bytes "
			"need more than 1 GiB of buffers: lower --inflight\n",
			o->inflight, o->frame_size);
		return -1;
	}
	return 0;
}

/* ---- status channel ---------------------------------------------------- */

/*
 * Send request @method (QPND @qpnd for DATA_REQ) and wait for its answer,
 * @tries times @wait_ms.  0 and *@res, -1 no answer, -2 wrong version.
 */
static int status_call(struct sender *s, enum wcubuf_method method,
		       uint32_t qpnd, struct wcubuf_status *res, int tries,
		       int wait_ms, bool quiet)
{
	struct wcubuf_status req = wcubuf_status_make(method);
	struct ibv_wc wc[8];

	req.lid = 0;	/* RoCE has no LIDs */
	req.qpn = s->st.qp->qp_num;
	req.qkey = method == WCUBUF_STAT_REQ ? s->st.qkey :
		   method == WCUBUF_DATA_REQ ? qpnd : 0;
	for (int t = 1; t <= tries; t++) {
		int64_t end = wcu_now_ms() + wait_ms;

		if (wcu_ud_send(&s->st, s->emu_ah, s->o.status_qpn,
				WCUBUF_STATUS_QKEY, &req, 5000))
			return -1;
		while (wcu_now_ms() < end) {
			int n = ibv_poll_cq(s->st.rcq, 8, wc);

			if (n <= 0) {
				if (stop)
					return -1;
				wcu_sleep_us(200);
				continue;
			}
			for (int i = 0; i < n; i++) {
				unsigned int k = (unsigned int)wc[i].wr_id;
				uint8_t *p = wcu_ud_rbuf(&s->st, k);
				int ok = 0;

				if (wc[i].status == IBV_WC_SUCCESS &&
				    wc[i].byte_len >= WCUBUF_GRH_LEN &&
				    !wcubuf_status_decode(p + WCUBUF_GRH_LEN,
					wc[i].byte_len - WCUBUF_GRH_LEN, res))
					ok = wcubuf_status_answers(&req, res);
				wcu_ud_repost(&s->st, k);
				if (ok == WCUBUF_EVERSION) {
					fprintf(stderr, "wcubuf-send: %s "
						"answers with protocol version "
						"%u.%u; this worker speaks "
						"%u.x\n", s->emu_str,
						res->major, res->minor,
						WCUBUF_VERSION_MAJOR);
					return -2;
				}
				if (ok == 1)
					return 0;
			}
		}
		if (!quiet)
			fprintf(stderr, "wcubuf-send: no %s from %s within "
				"%d ms (try %d of %d)\n",
				wcubuf_method_name(method + 1), s->emu_str,
				wait_ms, t, tries);
	}
	return -1;
}

static int status_setup(struct sender *s)
{
	struct ibv_qp_init_attr qa;
	struct ibv_ah_attr ah;
	int ret;

	if (wcu_ud_cqs(&s->d, &s->st))
		return -1;
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = s->st.scq;
	qa.recv_cq = s->st.rcq;
	qa.qp_type = IBV_QPT_UD;
	qa.cap.max_send_wr = 4;
	qa.cap.max_recv_wr = WCU_UD_RECVS;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	s->st.qp = ibv_create_qp(s->d.pd, &qa);
	if (!s->st.qp) {
		fprintf(stderr, "wcubuf-send: cannot create the status UD QP: "
			"%s\n", strerror(errno));
		return -1;
	}
	ret = wcu_ud_ready(&s->d, &s->st, WCUBUF_WORKER_QKEY);
	if (ret) {
		fprintf(stderr, "wcubuf-send: cannot ready the status UD QP: "
			"%s\n", strerror(ret));
		return -1;
	}
	wcu_fill_ah(&s->d, &ah, s->d.gid_index, s->emu_gid.raw);
	s->emu_ah = ibv_create_ah(s->d.pd, &ah);
	if (!s->emu_ah) {
		fprintf(stderr, "wcubuf-send: no address handle for %s (%s): "
			"is it reachable from %s?\n", s->emu_str,
			strerror(errno), ibv_get_device_name(s->d.ctx->device));
		return -1;
	}
	return 0;
}

/* ---- data channel ------------------------------------------------------- */

static int post_ack_recv(struct sender *s, uint32_t i)
{
	struct ibv_sge sge = { (uintptr_t)(s->abuf + (size_t)i * ACK_BUF),
			       ACK_BUF, s->amr->lkey };
	struct ibv_recv_wr wr = { .wr_id = RECV_BIT | i, .sg_list = &sge,
				  .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_recv(s->qp, &wr, &bad);
}

static int data_setup(struct sender *s)
{
	struct ibv_qp_init_attr qa;
	size_t fbytes = (size_t)s->o.inflight * s->o.frame_size;
	int ret;

	s->nrecv = 2 * s->o.inflight + 16;
	s->sq_depth = 2 * s->o.inflight + 8;
	s->sig_every = s->sq_depth / 4;
	s->ch = ibv_create_comp_channel(s->d.ctx);
	s->cq = ibv_create_cq(s->d.ctx, (int)(s->nrecv + s->sq_depth), NULL,
			      s->ch, 0);
	if (!s->ch || !s->cq) {
		fprintf(stderr, "wcubuf-send: cannot create the data CQ: %s\n",
			strerror(errno));
		return -1;
	}
	if (posix_memalign((void **)&s->frames, 4096, fbytes) ||
	    !(s->abuf = calloc(s->nrecv, ACK_BUF)) ||
	    !(s->slot_ticket = calloc(s->o.inflight, sizeof(uint64_t))) ||
	    !(s->slot_retx = calloc(s->o.inflight, sizeof(bool))) ||
	    !(s->slots = calloc(s->o.inflight, sizeof(*s->slots)))) {
		fprintf(stderr, "wcubuf-send: out of memory for %u frames of "
			"%u bytes\n", s->o.inflight, s->o.frame_size);
		return -1;
	}
	s->mr = ibv_reg_mr(s->d.pd, s->frames, fbytes, 0);
	s->amr = ibv_reg_mr(s->d.pd, s->abuf, (size_t)s->nrecv * ACK_BUF,
			    IBV_ACCESS_LOCAL_WRITE);
	if (!s->mr || !s->amr) {
		fprintf(stderr, "wcubuf-send: cannot register %zu bytes of "
			"buffers: %s (ulimit -l?)\n", fbytes, strerror(errno));
		return -1;
	}
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = s->cq;
	qa.recv_cq = s->cq;
	qa.qp_type = IBV_QPT_UC;
	qa.cap.max_send_wr = s->sq_depth;
	qa.cap.max_recv_wr = s->nrecv;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	s->qp = ibv_create_qp(s->d.pd, &qa);
	if (!s->qp) {
		fprintf(stderr, "wcubuf-send: cannot create the data UC QP "
			"(%u send, %u receive WRs): %s\n", s->sq_depth,
			s->nrecv, strerror(errno));
		return -1;
	}
	ret = wcu_uc_init(&s->d, s->qp);
	for (uint32_t i = 0; !ret && i < s->nrecv; i++)
		ret = post_ack_recv(s, i);
	if (ret) {
		fprintf(stderr, "wcubuf-send: cannot ready the data UC QP: "
			"%s\n", strerror(ret));
		return -1;
	}
	return ibv_req_notify_cq(s->cq, 0) ? -1 : 0;
}

static const char *mb(double bytes, double secs, char *buf)
{
	snprintf(buf, 32, "%.1f", secs > 0 ? bytes / secs / 1e6 : 0.0);
	return buf;
}

static void summary(struct sender *s, double secs)
{
	const struct wcubuf_tx *tx = &s->tx;
	char ev[512], rate[32];
	uint64_t rtx = tx->sent[WCUBUF_TX_NACK] + tx->sent[WCUBUF_TX_WINDOW] +
		       tx->sent[WCUBUF_TX_TIMEOUT];

	wcu_events_counts(tx->nack_events, ev, sizeof(ev));
	printf("wcubuf-send: %llu frames, %llu bytes, retransmits: %llu "
	       "(nack %llu, window %llu, timeout %llu), NACKs: %llu (%s), "
	       "no-SOF NACKs %llu, stale answers %llu, %.2f s, %s MB/s\n",
	       (unsigned long long)tx->acked,
	       (unsigned long long)(tx->acked * s->o.frame_size),
	       (unsigned long long)rtx,
	       (unsigned long long)tx->sent[WCUBUF_TX_NACK],
	       (unsigned long long)tx->sent[WCUBUF_TX_WINDOW],
	       (unsigned long long)tx->sent[WCUBUF_TX_TIMEOUT],
	       (unsigned long long)tx->nacks, ev,
	       (unsigned long long)tx->no_sof,
	       (unsigned long long)tx->stale, secs,
	       mb((double)tx->acked * s->o.frame_size, secs, rate));
	fflush(stdout);
}

/* Post slot @i's frame (a first transmission or a retransmit). */
static int post_frame(struct sender *s, int i)
{
	struct wcubuf_tx_frame *f = &s->slots[i];
	bool retx = f->sends > 0;
	uint64_t t = ++s->ticket;
	struct ibv_sge sge = {
		(uintptr_t)(s->frames + (size_t)i * s->o.frame_size),
		s->o.frame_size, s->mr->lkey };
	struct ibv_send_wr wr, *bad;
	int ret;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = t;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.wr.rdma.remote_addr = wcubuf_tx_va(&s->tx, f->seq);
	wr.wr.rdma.rkey = s->rkey;
	/* Retransmits are signaled: a slot is only refilled once they are
	 * off the queue (an ACK may be for the first transmission). */
	if (retx || t - s->last_sig >= s->sig_every) {
		wr.send_flags = IBV_SEND_SIGNALED;
		s->last_sig = t;
	}
	ret = ibv_post_send(s->qp, &wr, &bad);
	if (ret) {
		fprintf(stderr, "wcubuf-send: ibv_post_send (RDMA WRITE of "
			"frame %llu): %s\n", (unsigned long long)f->seq,
			strerror(ret));
		return -1;
	}
	s->slot_ticket[i] = t;
	s->slot_retx[i] = retx;
	return 0;
}

enum { RUN_ON, RUN_FATAL, RUN_GIVE_UP, RUN_LOCAL };

static int handle_answer(struct sender *s, const struct ibv_wc *wc)
{
	uint32_t k = (uint32_t)(wc->wr_id & ~RECV_BIT);
	struct wcubuf_ack a;
	char ev[128];
	int ret = RUN_ON;

	if (wc->status != IBV_WC_SUCCESS) {
		if (wc->status == IBV_WC_WR_FLUSH_ERR) {
			fprintf(stderr, "wcubuf-send: the data QP went to the "
				"error state\n");
			return RUN_LOCAL;
		}
		s->bad_answers++;
	} else if (wcubuf_ack_decode(s->abuf + (size_t)k * ACK_BUF,
				     wc->byte_len, &a)) {
		s->bad_answers++;
	} else {
		switch (wcubuf_tx_answer(&s->tx, &a, wcu_now_ms())) {
		case WCUBUF_TXV_FATAL:
			wcubuf_events_str(a.events, ev, sizeof(ev));
			fprintf(stderr, "wcubuf-send: %s refused frame VA "
				"0x%llx: NACK %s (%s)\n", s->emu_str,
				(unsigned long long)a.va, ev,
				a.events & 1u << WCUBUF_EV_RKEY ?
				"invalid R_Key: the RKEY of DATA_RES is not "
				"accepted; did the emulator tear the data "
				"channel down?" :
				"invalid VA: frames must start 64-byte "
				"aligned; does --frame-size match the "
				"emulator's?");
			ret = RUN_FATAL;
			break;
		case WCUBUF_TXV_GIVE_UP:
			wcubuf_events_str(a.events, ev, sizeof(ev));
			fprintf(stderr, "wcubuf-send: frame VA 0x%llx NACKed "
				"%d times in a row (last: %s): giving up; "
				"does --frame-size match the emulator's?\n",
				(unsigned long long)a.va,
				WCUBUF_TX_MAX_NACKS, ev);
			ret = RUN_GIVE_UP;
			break;
		default:
			break;
		}
	}
	if (post_ack_recv(s, k)) {
		fprintf(stderr, "wcubuf-send: cannot repost an ACK receive\n");
		return RUN_LOCAL;
	}
	return ret;
}

/* Poll the data CQ once; returns completions seen or -RUN_*. */
static int poll_data(struct sender *s)
{
	struct ibv_wc wc[32];
	int n = ibv_poll_cq(s->cq, 32, wc), r;

	if (n < 0) {
		fprintf(stderr, "wcubuf-send: ibv_poll_cq failed\n");
		return -RUN_LOCAL;
	}
	for (int i = 0; i < n; i++) {
		if (wc[i].wr_id & RECV_BIT) {
			if ((r = handle_answer(s, &wc[i])) != RUN_ON)
				return -r;
			continue;
		}
		if (wc[i].status != IBV_WC_SUCCESS) {
			fprintf(stderr, "wcubuf-send: RDMA WRITE failed: %s\n",
				ibv_wc_status_str(wc[i].status));
			return -RUN_LOCAL;
		}
		if (wc[i].wr_id > s->reaped)
			s->reaped = wc[i].wr_id;
	}
	return n;
}

/* Wait for a completion event, at most @ms. */
static void wait_event(struct sender *s, int ms)
{
	struct pollfd p = { s->ch->fd, POLLIN, 0 };
	struct ibv_cq *cq;
	void *ctx;

	if (ms <= 0)
		return;
	if (poll(&p, 1, ms) == 1 && !ibv_get_cq_event(s->ch, &cq, &ctx)) {
		ibv_ack_cq_events(cq, 1);
		ibv_req_notify_cq(cq, 0);
	}
}

static int stream(struct sender *s)
{
	struct wcubuf_tx *tx = &s->tx;
	bool tty = isatty(2);
	double t0 = wcu_now(), last = t0;
	int r;

	wcubuf_tx_init(tx, s->slots, s->o.inflight, s->va_offs,
		       s->o.frame_size, s->o.frames, s->o.timeout_ms);
	while (!wcubuf_tx_done(tx)) {
		int64_t now, dl;
		bool busy = false;

		if (stop)
			return EX_INTERRUPTED;
		if ((r = poll_data(s)) < 0)
			goto fail;
		busy = r > 0;
		now = wcu_now_ms();
		while (s->ticket - s->reaped < s->sq_depth - 1) {
			int i = wcubuf_tx_next(tx, now);

			if (i == -1)
				break;
			if (i == -2) {
				fprintf(stderr, "wcubuf-send: frame VA 0x%llx "
					"got no ACK/NACK in %d tries of %u ms: "
					"is the emulator (%s) still running?\n",
					(unsigned long long)tx->fail_va,
					WCUBUF_TX_MAX_TIMEOUTS,
					s->o.timeout_ms, s->emu_str);
				r = -RUN_GIVE_UP;
				goto fail;
			}
			if (!s->slots[i].sends &&
			    (!s->o.static_images ||
			     s->slots[i].seq < s->o.inflight)) {
				/* its retransmit must be off the queue */
				while (s->slot_retx[i] &&
				       s->slot_ticket[i] > s->reaped)
					if ((r = poll_data(s)) < 0)
						goto fail;
				wcubuf_frame_fill(s->frames +
						  (size_t)i * s->o.frame_size,
						  s->o.frame_size, s->o.image,
						  wcubuf_tx_va(tx,
							       s->slots[i].seq));
			}
			if (post_frame(s, i)) {
				r = -RUN_LOCAL;
				goto fail;
			}
			wcubuf_tx_sent(tx, i, now);
			busy = true;
		}
		if (tty && wcu_now() - last >= 0.5) {
			char rate[32];

			last = wcu_now();
			fprintf(stderr, "\rwcubuf-send: %llu/%llu frames ACKed,"
				" %s MB/s, %llu retransmits  ",
				(unsigned long long)tx->acked,
				(unsigned long long)tx->frames,
				mb((double)tx->acked * s->o.frame_size,
				   last - t0, rate),
				(unsigned long long)(tx->sent[1] +
						     tx->sent[2] +
						     tx->sent[3]));
		}
		if (busy)
			continue;
		dl = wcubuf_tx_deadline(tx);
		now = wcu_now_ms();
		wait_event(s, dl == INT64_MIN ? 0 :
			      dl - now > 10 ? 10 : (int)(dl - now));
	}
	if (tty)
		fputc('\n', stderr);
	return EX_OK;
fail:
	if (tty)
		fputc('\n', stderr);
	switch (-r) {
	case RUN_FATAL: return EX_REFUSED;
	case RUN_GIVE_UP: return EX_STREAM;
	default: return EX_LOCAL;
	}
}

static void teardown(struct sender *s, bool quick)
{
	struct wcubuf_status res;
	int tries = quick ? 1 : 3, wait = quick ? 500 : STATUS_WAIT_MS;

	if (s->data_up && status_call(s, WCUBUF_DATA_TERM, 0, &res, tries,
				      wait, quick))
		fprintf(stderr, "wcubuf-send: no DATA_DOWN from %s\n",
			s->emu_str);
	s->data_up = false;
	if (s->status_up && status_call(s, WCUBUF_STAT_TERM, 0, &res, tries,
					wait, quick))
		fprintf(stderr, "wcubuf-send: no STAT_DOWN from %s\n",
			s->emu_str);
	s->status_up = false;
}

static void cleanup(struct sender *s)
{
	if (s->qp)
		ibv_destroy_qp(s->qp);
	if (s->cq)
		ibv_destroy_cq(s->cq);
	if (s->ch)
		ibv_destroy_comp_channel(s->ch);
	if (s->mr)
		ibv_dereg_mr(s->mr);
	if (s->amr)
		ibv_dereg_mr(s->amr);
	if (s->emu_ah)
		ibv_destroy_ah(s->emu_ah);
	wcu_ud_destroy(&s->st);
	wcu_close(&s->d);
	free(s->frames);
	free(s->abuf);
	free(s->slot_ticket);
	free(s->slot_retx);
	free(s->slots);
}

int main(int argc, char **argv)
{
	static struct sender snd;
	struct sender *s = &snd;
	struct wcubuf_status res;
	struct sigaction sa;
	double t0;
	int ret;

	if (parse(&s->o, argc, argv))
		return EX_USAGE;
	if (snaa_gid_from_ip(s->o.to, &s->emu_gid)) {
		fprintf(stderr, "wcubuf-send: --to %s is no IPv4 or IPv6 "
			"address\n", s->o.to);
		return EX_USAGE;
	}
	wcu_gid_str(s->emu_gid.raw, s->emu_str);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (wcu_open(&s->d, s->o.dev, s->o.port, s->o.gid_index, &s->emu_gid)) {
		cleanup(s);
		return EX_LOCAL;
	}
	if (status_setup(s) || data_setup(s)) {
		cleanup(s);
		return EX_LOCAL;
	}
	ret = status_call(s, WCUBUF_STAT_REQ, 0, &res, STATUS_TRIES,
			  STATUS_WAIT_MS, false);
	if (ret) {
		if (ret == -1 && !stop)
			fprintf(stderr, "wcubuf-send: no status channel: is "
				"wcubuf-emu running at %s (status QPN %u, "
				"Q_Key 0x%08x)?\n", s->o.to, s->o.status_qpn,
				WCUBUF_STATUS_QKEY);
		cleanup(s);
		return stop ? EX_INTERRUPTED : EX_REGISTER;
	}
	s->status_up = true;
	ret = status_call(s, WCUBUF_DATA_REQ, s->qp->qp_num, &res,
			  STATUS_TRIES, STATUS_WAIT_MS, false);
	if (ret) {
		if (ret == -1 && !stop)
			fprintf(stderr, "wcubuf-send: no data channel: %s "
				"answered STAT_REQ but not DATA_REQ (its log "
				"says why: worker table full, or the ring "
				"could not be set up)\n", s->o.to);
		teardown(s, true);
		cleanup(s);
		return stop ? EX_INTERRUPTED : EX_REGISTER;
	}
	s->data_up = true;
	s->emu_qpn = res.lid;
	s->rkey = res.rkey;
	s->va_offs = res.va;
	ret = wcu_uc_rtr_rts(&s->d, s->qp, s->d.gid_index, s->emu_qpn,
			     s->emu_gid.raw);
	if (ret) {
		fprintf(stderr, "wcubuf-send: cannot connect the data QP to "
			"QPN 0x%x: %s\n", s->emu_qpn, strerror(ret));
		teardown(s, true);
		cleanup(s);
		return EX_LOCAL;
	}
	printf("wcubuf-send: %s -> %s: data QPN 0x%x -> 0x%x, VA_OFFS "
	       "0x%llx, R_Key 0x%x, MTU %d, %llu frames of %u bytes (%zu %s "
	       "images each), %u in flight\n",
	       ibv_get_device_name(s->d.ctx->device), s->emu_str,
	       s->qp->qp_num, s->emu_qpn, (unsigned long long)s->va_offs,
	       s->rkey, 128 << s->d.mtu, (unsigned long long)s->o.frames,
	       s->o.frame_size, wcubuf_frame_images(s->o.frame_size,
						    s->o.image),
	       wcubuf_image_name(s->o.image), s->o.inflight);
	fflush(stdout);

	t0 = wcu_now();
	ret = stream(s);
	summary(s, wcu_now() - t0);
	if (s->bad_answers)
		fprintf(stderr, "wcubuf-send: %llu receives on the data QP "
			"were no ACK/NACK\n",
			(unsigned long long)s->bad_answers);
	if (ret == EX_INTERRUPTED)
		fprintf(stderr, "wcubuf-send: interrupted: %llu of %llu "
			"frames ACKed\n", (unsigned long long)s->tx.acked,
			(unsigned long long)s->tx.frames);
	teardown(s, ret != EX_OK);
	cleanup(s);
	return ret;
}
