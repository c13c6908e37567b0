// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * wcubuf-emu: the WCU.BUF board emulated on an snaa device.  The status
 * channel (seed 3.1, the board's NIOS firmware) is a UD QP with the
 * well-known QPN and Q_Key, served here through libwcubuf's worker
 * table; each worker's data channel is a UC QP in snaa's WCU.BUF receive
 * mode (snaadv.h) on a ring of --ring-size bytes, whose ACKs/NACKs the
 * kernel sends.  This program consumes the delivered frames in place
 * (snaadv_wcubuf_peek/consume, no system call per frame), checks every
 * image with --verify, and prints a summary when SIGINT/SIGTERM ends it.
 * Exit status: see usage().
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <snaadv.h>

#include "wcubuf_tool.h"

enum {
	EX_OK		= 0,
	EX_VERIFY	= 1,	/* --verify found bad frames */
	EX_USAGE	= 2,
	EX_STATUS_QP	= 3,	/* no status channel QP (QPN taken, not snaa) */
	EX_LOCAL	= 7,
};

#define MAX_WORKERS	32
#define PEEK_MAX	64
#define REPORT_MAX	10	/* verification failures printed in full */

const char *wcu_prog = "wcubuf-emu";
static volatile sig_atomic_t stop;

struct opts {
	const char *dev;
	int port, gid_index;
	uint64_t ring_size;
	uint32_t frame_size;
	long consume_delay_us;
	long idle_s;		/* reclaim slots of workers silent this long */
	bool verify;
	int image;		/* -1: detect per worker */
};

/* What one frame count adds up to, per worker and in total. */
struct counts {
	uint64_t frames, bytes, verified, crc_fail, img_fail;
	uint64_t duplicates, nacks, nack_events[WCUBUF_EV_NUM];
};

struct chan {
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	void *ring;
	int image;		/* detected kind, -1 not yet */
	struct counts c;
	char name[80];		/* "198.18.0.1 QPN 0x11" */
};

struct emu {
	struct opts o;
	struct wcu_dev d;
	struct wcu_ud st;
	struct ibv_cq *dcq;	/* every data QP's (unused) CQ */
	struct wcubuf_emu tab;
	struct wcubuf_emu_worker w[MAX_WORKERS];
	struct counts gone;	/* channels torn down */
	int req_gid_index;	/* our GID the current request came to */
	uint64_t reported;
};

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: wcubuf-emu --dev DEV --ring-size SIZE --frame-size SIZE\n"
"                  [--consume-delay-us N] [--idle-s N] [--verify]\n"
"                  [--image 4bit|6bit] [--gid-index N] [--ib-port N]\n"
"The WCU.BUF board emulated on an snaa device: serves the status channel\n"
"(UD QPN %u, Q_Key 0x%08x), gives each worker a ring of SIZE bytes behind\n"
"a UC QP in snaa's WCU.BUF receive mode (the kernel ACKs/NACKs frames),\n"
"consumes the delivered frames and runs until SIGINT or SIGTERM, then\n"
"prints a summary line.\n"
"\n"
"  -d, --dev DEV              snaa device (may be left out if there is one)\n"
"  -r, --ring-size SIZE       ring bytes per worker, a multiple of the frame\n"
"                             size, at least 2 frames (K, M, G)\n"
"  -s, --frame-size SIZE      bytes per frame, a multiple of 64 (K, M);\n"
"                             workers must use the same\n"
"  -c, --consume-delay-us N   sleep N us per frame consumed (a slow reader)\n"
"  -I, --idle-s N             when the worker table (%d) is full, a new\n"
"                             worker takes the slot of one silent (no\n"
"                             request, no frame) for N s (default 60; 0:\n"
"                             never): a worker that died without STAT_TERM\n"
"                             leaves after that\n"
"  -v, --verify               check every image: CRC-32C, VA, padding and\n"
"                             pixels (seed section 4)\n"
"  -i, --image KIND           4bit or 6bit images (default: detected from\n"
"                             each worker's first frame)\n"
"  -g, --gid-index N          our GID for the status channel's address\n"
"                             (default: the first RoCE v2 IPv4 one)\n"
"      --ib-port N            device port (default 1)\n"
"  -h, --help                 this text\n"
"\n"
"Exit status: 0 ended by a signal, every verified image good; 1 --verify\n"
"found bad frames; 2 usage; 3 no status channel (QPN %u taken, or the\n"
"device is not snaa); 7 local failure.\n",
		WCUBUF_STATUS_QPN, WCUBUF_STATUS_QKEY, MAX_WORKERS,
		WCUBUF_STATUS_QPN);
}

static int parse(struct opts *o, int argc, char **argv)
{
	enum { O_IB_PORT = 256 };	/* long only: -p is a TCP port elsewhere */
	static const struct option lopts[] = {
		{ "dev", required_argument, NULL, 'd' },
		{ "ring-size", required_argument, NULL, 'r' },
		{ "frame-size", required_argument, NULL, 's' },
		{ "consume-delay-us", required_argument, NULL, 'c' },
		{ "idle-s", required_argument, NULL, 'I' },
		{ "verify", no_argument, NULL, 'v' },
		{ "image", required_argument, NULL, 'i' },
		{ "gid-index", required_argument, NULL, 'g' },
		{ "ib-port", required_argument, NULL, O_IB_PORT },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	long long ring = -1, frame = -1;
	int c;

	memset(o, 0, sizeof(*o));
	o->port = 1;
	o->idle_s = 60;
	o->gid_index = -1;
	o->image = -1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":d:r:s:c:I:vi:g:h", lopts,
				NULL)) != -1) {
		switch (c) {
		case 'd': o->dev = optarg; break;
		case 'r':
			ring = (long long)opt_size("--ring-size", optarg, 128,
						   1ULL << 40);
			break;
		case 's':
			frame = wcu_frame_size_opt(optarg);
			break;
		case 'c':
			o->consume_delay_us = opt_long("--consume-delay-us",
						       optarg, 0, 10000000);
			break;
		case 'I':
			o->idle_s = opt_long("--idle-s", optarg, 0, 86400);
			break;
		case 'v': o->verify = true; break;
		case 'i':
			o->image = wcu_image_opt(optarg);
			break;
		case 'g':
			o->gid_index = opt_int("--gid-index", optarg, 0, 65535);
			break;
		case O_IB_PORT:
			o->port = opt_int("--ib-port", optarg, 1, 255);
			break;
		default:
			opt_help_or_error(c, argv, usage);
		}
	}
	opt_no_operands(argc, argv);
	if (ring < 0 || frame < 0)
		opt_usage_error("--ring-size and --frame-size are required");
	if (ring % frame || ring < 2 * frame || ring / frame > 65536)
		opt_usage_error("--ring-size %lld must be a multiple of "
				"--frame-size %lld, of 2 to 65536 frames",
				ring, frame);
	o->ring_size = (uint64_t)ring;
	o->frame_size = (uint32_t)frame;
	return 0;
}

static void add_counts(struct counts *to, const struct counts *c)
{
	to->frames += c->frames;
	to->bytes += c->bytes;
	to->verified += c->verified;
	to->crc_fail += c->crc_fail;
	to->img_fail += c->img_fail;
	to->duplicates += c->duplicates;
	to->nacks += c->nacks;
	for (int b = 0; b < WCUBUF_EV_NUM; b++)
		to->nack_events[b] += c->nack_events[b];
}

/* The kernel's counters of @ch into its counts. */
static void query_chan(struct chan *ch)
{
	struct snaadv_wcubuf_stats st;

	if (snaadv_wcubuf_query(ch->qp, &st))
		return;
	ch->c.duplicates = st.duplicates;
	ch->c.nacks = st.nacks;
	for (int b = 0; b < WCUBUF_EV_NUM; b++)
		ch->c.nack_events[b] = st.nack_events[b];
}

static void check_frame(struct emu *e, struct chan *ch,
			const struct snaadv_wcubuf_frame *f)
{
	struct wcubuf_image_report r;
	enum wcubuf_image_error err;
	int kind = ch->image >= 0 ? ch->image : e->o.image;

	if (kind >= 0) {
		err = wcubuf_frame_check(f->data, f->length, e->o.frame_size,
					 (enum wcubuf_image_kind)kind, f->va,
					 &r);
	} else {
		/* detect: 6bit if it fits and checks out, else 4bit */
		kind = WCUBUF_IMAGE_6BIT;
		err = wcubuf_frame_images(e->o.frame_size, kind) ?
		      wcubuf_frame_check(f->data, f->length, e->o.frame_size,
					 kind, f->va, &r) : WCUBUF_IMG_CRC;
		if (err == WCUBUF_IMG_CRC) {
			kind = WCUBUF_IMAGE_4BIT;
			err = wcubuf_frame_check(f->data, f->length,
						 e->o.frame_size, kind, f->va,
						 &r);
		}
		if (!err) {
			ch->image = kind;
			printf("wcubuf-emu: %s sends %s images\n", ch->name,
			       wcubuf_image_name((enum wcubuf_image_kind)kind));
		}
	}
	ch->c.verified++;
	if (!err)
		return;
	if (err == WCUBUF_IMG_CRC)
		ch->c.crc_fail++;
	else
		ch->c.img_fail++;
	if (e->reported++ < REPORT_MAX)
		fprintf(stderr, "wcubuf-emu: %s: frame VA 0x%llx (%u bytes) "
			"at byte %zu: %s (image VA 0x%llx carries VA 0x%llx, "
			"CRC 0x%08x, computed 0x%08x)\n", ch->name,
			(unsigned long long)f->va, f->length, r.offset,
			wcubuf_image_error_str(err), (unsigned long long)r.va,
			(unsigned long long)r.got_va, r.crc, r.want_crc);
}

/* Consume what the ring of @w holds; returns frames consumed. */
static int consume(struct emu *e, struct wcubuf_emu_worker *w, bool delay)
{
	struct snaadv_wcubuf_frame f[PEEK_MAX];
	struct chan *ch = w->priv;
	int n = snaadv_wcubuf_peek(ch->qp, f, PEEK_MAX);

	if (n > 0) {
		e->tab.now = wcu_now();
		wcubuf_emu_seen(&e->tab, w);
	}

	for (int i = 0; i < n; i++) {
		if (e->o.verify)
			check_frame(e, ch, &f[i]);
		ch->c.frames++;
		ch->c.bytes += f[i].length;
		if (delay && e->o.consume_delay_us) {
			wcu_sleep_us(e->o.consume_delay_us);
			snaadv_wcubuf_consume(ch->qp, 1);
		}
	}
	if (n > 0 && !(delay && e->o.consume_delay_us))
		snaadv_wcubuf_consume(ch->qp, n);
	return n > 0 ? n : 0;
}

static void chan_free(struct chan *ch)
{
	if (ch->qp)
		ibv_destroy_qp(ch->qp);
	if (ch->mr)
		ibv_dereg_mr(ch->mr);
	free(ch->ring);
	free(ch);
}

static int data_up(void *ctx, struct wcubuf_emu_worker *w)
{
	struct emu *e = ctx;
	struct ibv_qp_init_attr qa;
	struct snaadv_qp_init_attr dv;
	struct chan *ch = calloc(1, sizeof(*ch));
	char gs[INET6_ADDRSTRLEN];
	int sgid, ret;

	if (!ch)
		return ENOMEM;
	ch->image = -1;
	snprintf(ch->name, sizeof(ch->name), "worker %s QPN 0x%x",
		 wcu_gid_str(w->gid, gs), w->qpn);
	if (posix_memalign(&ch->ring, 4096, e->o.ring_size)) {
		fprintf(stderr, "wcubuf-emu: %s: no memory for a ring of "
			"%llu bytes (lower --ring-size)\n", ch->name,
			(unsigned long long)e->o.ring_size);
		free(ch);
		return ENOMEM;
	}
	/* the workers write into it: its lkey is the R_Key of DATA_RES */
	ch->mr = ibv_reg_mr(e->d.pd, ch->ring, e->o.ring_size,
			    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!ch->mr) {
		ret = errno;
		fprintf(stderr, "wcubuf-emu: %s: cannot register the ring: %s "
			"(ulimit -l?)\n", ch->name, strerror(ret));
		goto fail;
	}
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = e->dcq;
	qa.recv_cq = e->dcq;
	qa.qp_type = IBV_QPT_UC;
	qa.cap.max_send_wr = 16;
	qa.cap.max_recv_wr = 1;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	memset(&dv, 0, sizeof(dv));
	dv.comp_mask = SNAADV_QP_INIT_WCUBUF;
	dv.wcubuf.mr = ch->mr;
	dv.wcubuf.ring = ch->ring;
	dv.wcubuf.ring_size = e->o.ring_size;
	dv.wcubuf.frame_size = e->o.frame_size;
	dv.wcubuf.va_base = w->va_offs;
	ch->qp = snaadv_create_qp(e->d.pd, &qa, &dv);
	if (!ch->qp) {
		ret = errno;
		fprintf(stderr, "wcubuf-emu: %s: cannot create the WCU.BUF "
			"data QP: %s\n", ch->name, strerror(ret));
		goto fail;
	}
	/* from the address the worker's DATA_REQ came to */
	sgid = e->req_gid_index;
	ret = wcu_uc_connect(&e->d, ch->qp, sgid, w->data_qpn, w->gid);
	if (ret) {
		fprintf(stderr, "wcubuf-emu: %s: cannot connect the data QP to "
			"QPN 0x%x: %s\n", ch->name, w->data_qpn, strerror(ret));
		goto fail;
	}
	w->emu_qpn = ch->qp->qp_num;
	w->rkey = snaadv_wcubuf_rkey(ch->qp);
	w->priv = ch;
	printf("wcubuf-emu: %s: data channel up: QPN 0x%x -> 0x%x, ring %llu "
	       "bytes, VA_OFFS 0x%llx, R_Key 0x%x\n", ch->name, w->emu_qpn,
	       w->data_qpn, (unsigned long long)e->o.ring_size,
	       (unsigned long long)w->va_offs, w->rkey);
	fflush(stdout);
	return 0;
fail:
	chan_free(ch);
	return ret ? ret : EIO;
}

static void data_down(void *ctx, struct wcubuf_emu_worker *w)
{
	struct emu *e = ctx;
	struct chan *ch = w->priv;
	char ev[512];

	if (!ch)
		return;
	/* the frames ACKed before DATA_TERM are still to be read */
	while (consume(e, w, false) > 0)
		;
	query_chan(ch);
	wcu_events_counts(ch->c.nack_events, ev, sizeof(ev));
	printf("wcubuf-emu: %s: data channel down: %llu frames, %llu bytes, "
	       "%llu duplicates, NACKs: %llu (%s)\n", ch->name,
	       (unsigned long long)ch->c.frames,
	       (unsigned long long)ch->c.bytes,
	       (unsigned long long)ch->c.duplicates,
	       (unsigned long long)ch->c.nacks, ev);
	fflush(stdout);
	add_counts(&e->gone, &ch->c);
	chan_free(ch);
	w->priv = NULL;
}

static const struct wcubuf_emu_ops ops = { data_up, data_down };

static int status_setup(struct emu *e)
{
	struct ibv_qp_init_attr qa;
	struct snaadv_qp_init_attr dv;
	char gs[INET6_ADDRSTRLEN];
	int ret;

	if (wcu_ud_cqs(&e->d, &e->st))
		return EX_LOCAL;
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = e->st.scq;
	qa.recv_cq = e->st.rcq;
	qa.qp_type = IBV_QPT_UD;
	qa.cap.max_send_wr = 4;
	qa.cap.max_recv_wr = WCU_UD_RECVS;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	memset(&dv, 0, sizeof(dv));
	dv.comp_mask = SNAADV_QP_INIT_QPN;
	dv.qpn = WCUBUF_STATUS_QPN;
	e->st.qp = snaadv_create_qp(e->d.pd, &qa, &dv);
	if (!e->st.qp) {
		ret = errno;
		if (ret == EBUSY)
			fprintf(stderr, "wcubuf-emu: QPN %u is taken on %s: is "
				"another wcubuf-emu running there?\n",
				WCUBUF_STATUS_QPN,
				ibv_get_device_name(e->d.ctx->device));
		else if (ret == EOPNOTSUPP)
			fprintf(stderr, "wcubuf-emu: %s is not an snaa device "
				"(the emulation needs snaa's direct verbs; is "
				"RDMAV_DRIVERS pointing at this tree's "
				"provider?)\n",
				ibv_get_device_name(e->d.ctx->device));
		else
			fprintf(stderr, "wcubuf-emu: cannot create the status "
				"QP with QPN %u: %s%s\n", WCUBUF_STATUS_QPN,
				strerror(ret), ret == EPERM ?
				" (a fixed QPN needs CAP_NET_ADMIN: run as "
				"root)" : "");
		return EX_STATUS_QP;
	}
	ret = wcu_ud_ready(&e->d, &e->st, WCUBUF_STATUS_QKEY);
	if (ret) {
		fprintf(stderr, "wcubuf-emu: cannot ready the status QP: %s\n",
			strerror(ret));
		return EX_LOCAL;
	}
	e->dcq = ibv_create_cq(e->d.ctx, 256, NULL, NULL, 0);
	if (!e->dcq) {
		fprintf(stderr, "wcubuf-emu: ibv_create_cq: %s\n",
			strerror(errno));
		return EX_LOCAL;
	}
	printf("wcubuf-emu: listening on %s GID %s, status QPN %u, Q_Key "
	       "0x%08x; ring %llu bytes, frames %u bytes, path MTU %d\n",
	       ibv_get_device_name(e->d.ctx->device),
	       wcu_gid_str(e->d.gid.raw, gs), e->st.qp->qp_num,
	       WCUBUF_STATUS_QKEY, (unsigned long long)e->o.ring_size,
	       e->o.frame_size, 128 << e->d.mtu);
	fflush(stdout);
	return EX_OK;
}

/* One status packet received in buffer @k (@len bytes with the GRH). */
static void status_packet(struct emu *e, unsigned int k, uint32_t len)
{
	uint8_t *p = wcu_ud_rbuf(&e->st, k), sgid[16], dgid[16];
	union ibv_gid gid;
	struct wcubuf_status req, res;
	struct ibv_ah_attr aa;
	struct ibv_ah *ah;
	enum wcubuf_emu_result r;
	char gs[INET6_ADDRSTRLEN];
	uint32_t qkey;
	uint64_t reclaimed;
	int idx;

	if (len < WCUBUF_GRH_LEN || wcubuf_grh_gids(p, sgid, dgid) ||
	    wcubuf_status_decode(p + WCUBUF_GRH_LEN, len - WCUBUF_GRH_LEN,
				 &req)) {
		fprintf(stderr, "wcubuf-emu: ignored a status packet of %u "
			"bytes that is none\n", len);
		return;
	}
	memcpy(gid.raw, dgid, sizeof(gid.raw));
	idx = snaa_gid_index(e->d.ctx, e->d.port_num, e->d.port.gid_tbl_len,
			     &gid);
	e->req_gid_index = idx >= 0 ? idx : e->d.gid_index;
	e->tab.now = wcu_now();
	reclaimed = e->tab.reclaimed;
	r = wcubuf_emu_handle(&e->tab, sgid, &req, &res, &qkey);
	wcu_gid_str(sgid, gs);
	if (e->tab.reclaimed != reclaimed)
		fprintf(stderr, "wcubuf-emu: STAT_REQ from %s QPN 0x%x: the "
			"table was full; took the slot of a worker silent for "
			"%ld s or more\n", gs, req.qpn, e->o.idle_s);
	switch (r) {
	case WCUBUF_EMU_REPLY:
		break;
	case WCUBUF_EMU_IGNORE:
		return;
	case WCUBUF_EMU_NO_STATUS:
		fprintf(stderr, "wcubuf-emu: DATA_REQ from %s QPN 0x%x, which "
			"sent no STAT_REQ: not answered\n", gs, req.qpn);
		return;
	case WCUBUF_EMU_FULL:
		fprintf(stderr, "wcubuf-emu: STAT_REQ from %s QPN 0x%x: the "
			"worker table is full (%d workers, none silent for "
			"--idle-s %ld s): not answered\n", gs, req.qpn,
			MAX_WORKERS, e->o.idle_s);
		return;
	case WCUBUF_EMU_DATA_FAILED:
		fprintf(stderr, "wcubuf-emu: DATA_REQ from %s QPN 0x%x: no "
			"data channel (see above): not answered\n", gs,
			req.qpn);
		return;
	}
	if (req.method == WCUBUF_STAT_REQ || req.method == WCUBUF_STAT_TERM) {
		printf("wcubuf-emu: %s from %s QPN 0x%x: %u workers\n",
		       wcubuf_method_name(req.method), gs, req.qpn,
		       wcubuf_emu_count(&e->tab));
		fflush(stdout);
	}
	/* reply from the GID the request came to */
	wcu_fill_ah(&e->d, &aa, e->req_gid_index, sgid);
	ah = ibv_create_ah(e->d.pd, &aa);
	if (!ah) {
		fprintf(stderr, "wcubuf-emu: no address handle to %s for the "
			"%s: %s\n", gs, wcubuf_method_name(res.method),
			strerror(errno));
		return;
	}
	wcu_ud_send(&e->st, ah, req.qpn, qkey, &res, 5000);
	ibv_destroy_ah(ah);
}

static int poll_status(struct emu *e)
{
	struct ibv_wc wc[16];
	int n = ibv_poll_cq(e->st.rcq, 16, wc);

	for (int i = 0; i < n; i++) {
		unsigned int k = (unsigned int)wc[i].wr_id;

		if (wc[i].status == IBV_WC_SUCCESS)
			status_packet(e, k, wc[i].byte_len);
		if (wcu_ud_repost(&e->st, k))
			fprintf(stderr, "wcubuf-emu: cannot repost a status "
				"receive buffer\n");
	}
	return n > 0 ? n : 0;
}

static void summary(struct emu *e)
{
	struct counts t = e->gone;
	char ev[512];

	for (unsigned int i = 0; i < MAX_WORKERS; i++) {
		struct chan *ch = e->w[i].priv;

		if (!e->w[i].used || !ch)
			continue;
		query_chan(ch);
		add_counts(&t, &ch->c);
	}
	wcu_events_counts(t.nack_events, ev, sizeof(ev));
	printf("wcubuf-emu: %llu frames, %llu bytes, %llu verified, %llu CRC "
	       "failures, %llu image errors, %llu duplicates, NACKs: %llu "
	       "(%s)\n", (unsigned long long)t.frames,
	       (unsigned long long)t.bytes, (unsigned long long)t.verified,
	       (unsigned long long)t.crc_fail, (unsigned long long)t.img_fail,
	       (unsigned long long)t.duplicates, (unsigned long long)t.nacks,
	       ev);
	fflush(stdout);
	e->gone = t;
}

int main(int argc, char **argv)
{
	static struct emu emu;
	struct emu *e = &emu;
	struct sigaction sa;
	int ret, idle = 0;

	if (parse(&e->o, argc, argv))
		return EX_USAGE;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (wcu_open(&e->d, e->o.dev, e->o.port, e->o.gid_index, NULL))
		return EX_LOCAL;
	if (!snaadv_is_supported(e->d.ctx)) {
		fprintf(stderr, "wcubuf-emu: %s is not driven by the snaa "
			"provider: use an snaa device (rdma link add NAME "
			"type snaa netdev DEV) and the installed provider or "
			"RDMAV_DRIVERS=%s\n",
			ibv_get_device_name(e->d.ctx->device),
			"<tree>/build/provider/libsnaa");
		wcu_close(&e->d);
		return EX_STATUS_QP;
	}
	wcubuf_emu_init(&e->tab, e->w, MAX_WORKERS, e->o.frame_size, &ops, e);
	e->tab.idle_s = (double)e->o.idle_s;
	ret = status_setup(e);
	if (ret)
		goto out;

	while (!stop) {
		int n = poll_status(e);

		for (unsigned int i = 0; i < MAX_WORKERS; i++)
			if (e->w[i].used && e->w[i].priv)
				n += consume(e, &e->w[i], true);
		if (e->dcq) {
			struct ibv_wc wc[16];

			/* the data QPs complete nothing we use: keep it empty */
			while (ibv_poll_cq(e->dcq, 16, wc) > 0)
				;
		}
		/* idle: short sleeps, growing to 1 ms */
		idle = n ? 0 : idle < 10 ? idle + 1 : idle;
		if (!n)
			wcu_sleep_us(idle * 100);
	}
	ret = EX_OK;
out:
	wcubuf_emu_clear(&e->tab);
	summary(e);
	if (e->o.verify && (e->gone.crc_fail || e->gone.img_fail))
		ret = ret ? ret : EX_VERIFY;
	if (e->dcq)
		ibv_destroy_cq(e->dcq);
	wcu_ud_destroy(&e->st);
	wcu_close(&e->d);
	return ret;
}
