// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * wcubuf_test: the WCU.BUF receive mode of snaa, frame by frame.
 *
 * Device B (snaa) holds a UC QP in WCU.BUF mode (snaadv_create_qp()) and
 * its ring; device A (any RoCE device, standard verbs) is the worker: a
 * UC QP that writes frames and receives the 16-byte ACK/NACK SENDs.
 * Every answer is checked byte for byte (type, event bits, VA), every
 * delivered frame in the ring (snaadv_wcubuf_peek()), and the per-QP and
 * device counters move by exactly what was sent.  Faults verbs cannot
 * make (PSN gaps, missing first packets, bad ICRCs, oversized packets,
 * a lying RETH) are sent with rawpkt (--rawpkt CMD: the command line
 * up to the packet's own options, run through the shell); parity and ECC
 * errors come from the device's fault injection in debugfs.
 *
 * Output: KTAP.  Exit status 0 if every check passed, 1 otherwise,
 * 2 usage error, 4 (skip) a device is missing.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "snaadv.h"
#include "snaa_opt.h"
#include "verbs_util.h"

#define NRECV		64	/* ACK/NACK receive WRs of the worker */
#define RECV_SLOT	64	/* bytes per receive buffer */
#define ANSWER_MS	3000	/* an answer takes at most this long */
#define EV(b)		(1U << SNAADV_WCUBUF_EV_##b)

static struct {
	struct vu_dev a, b;
	const char *rawpkt;
	const char *debugfs;
	uint32_t frame;
} opt = { VU_DEV_INIT('A'), VU_DEV_INIT('B'), NULL, NULL, 4096 };

static enum ibv_mtu g_mtu;

static void usage(FILE *f)
{
	fprintf(f,
"Usage: wcubuf_test --dev-a NAME --dev-b NAME [--rawpkt CMD] [--debugfs DIR]\n"
"                   [--frame-size BYTES]\n"
"The WCU.BUF receive mode of snaa device B, driven by a worker QP on A.\n"
VU_PAIR_USAGE
"  --rawpkt CMD        rawpkt command line from A's side up to the packet\n"
"                      options (e.g. \"ip netns exec a rawpkt --dev veth0\n"
"                      --dmac MAC --saddr IP --daddr IP\"); without it the\n"
"                      crafted-packet cases are skipped\n"
"  --debugfs DIR       B's debugfs directory (/sys/kernel/debug/snaa/B);\n"
"                      without it the fault injection case is skipped\n"
"  --frame-size BYTES  frame size F (default 4096, a multiple of 64)\n"
"Exit status: 0 all passed, 1 a check failed, 2 usage error, 4 device\n"
"missing (skip).\n");
}

static void parse_args(int argc, char **argv)
{
	enum { O_RAWPKT = VU_OPT_NEXT, O_DEBUGFS, O_FRAME };
	static const struct option lopts[] = {
		VU_PAIR_OPTIONS,
		{ "rawpkt", required_argument, NULL, O_RAWPKT },
		{ "debugfs", required_argument, NULL, O_DEBUGFS },
		{ "frame-size", required_argument, NULL, O_FRAME },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
		switch (c) {
		case O_RAWPKT:
			opt.rawpkt = optarg;
			break;
		case O_DEBUGFS:
			opt.debugfs = optarg;
			break;
		case O_FRAME:
			opt.frame = (uint32_t)opt_u64("--frame-size", optarg,
						      1U << 24);
			if (!opt.frame || opt.frame % 64)
				opt_usage_error("--frame-size: a multiple of 64");
			break;
		default:
			if (!vu_pair_option(c, optarg, &opt.a, &opt.b))
				opt_help_or_error(c, argv, usage);
		}
	}
	opt_no_operands(argc, argv);
	vu_pair_options_check(&opt.a, &opt.b);
}

/* ---- the two ends ------------------------------------------------------ */

struct emu {
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct vu_buf ring;
	uint64_t va_base, ring_size;
	uint32_t frame, rkey;
};

struct worker {
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp;
	struct vu_buf src;		/* frames are written from here */
	struct vu_buf rbuf;		/* NRECV answer slots */
	uint64_t next_va;		/* the next frame to send */
};

struct answer {
	uint32_t type, events;
	uint64_t va;
};

static int post_recv(struct worker *w, uint32_t slot)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(w->rbuf.p + slot * RECV_SLOT),
		.length = RECV_SLOT,
		.lkey = w->rbuf.mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	return ibv_post_recv(w->qp, &wr, &bad);
}

static void emu_close(struct emu *e)
{
	if (e->qp)
		ibv_destroy_qp(e->qp);
	if (e->cq)
		ibv_destroy_cq(e->cq);
	vu_buf_free(&e->ring);
	memset(e, 0, sizeof(*e));
}

static void worker_close(struct worker *w)
{
	if (w->qp)
		ibv_destroy_qp(w->qp);
	if (w->scq)
		ibv_destroy_cq(w->scq);
	if (w->rcq)
		ibv_destroy_cq(w->rcq);
	vu_buf_free(&w->src);
	vu_buf_free(&w->rbuf);
	memset(w, 0, sizeof(*w));
}

static struct ibv_qp *emu_qp_create(struct emu *e, enum ibv_qp_type type,
				    uint64_t ring_size, uint32_t frame,
				    uint64_t va_base)
{
	struct snaadv_qp_init_attr dv = { .comp_mask = SNAADV_QP_INIT_WCUBUF };
	struct ibv_qp_init_attr ia = {
		.send_cq = e->cq, .recv_cq = e->cq, .qp_type = type,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	dv.wcubuf.mr = e->ring.mr;
	dv.wcubuf.ring = e->ring.p;
	dv.wcubuf.ring_size = ring_size;
	dv.wcubuf.frame_size = frame;
	dv.wcubuf.va_base = va_base;
	return snaadv_create_qp(opt.b.pd, &ia, &dv);
}

/*
 * A worker on A connected to a WCU.BUF QP on B with a ring of @nslots
 * frames of opt.frame bytes answering to @va_base.  Both start at PSN 0.
 */
static int pair_up(struct emu *e, struct worker *w, uint32_t nslots,
		   uint64_t va_base)
{
	struct ibv_qp_cap cap = { .max_send_wr = 16, .max_recv_wr = NRECV,
				  .max_send_sge = 1, .max_recv_sge = 1 };
	uint32_t i;

	memset(e, 0, sizeof(*e));
	memset(w, 0, sizeof(*w));
	e->frame = opt.frame;
	e->ring_size = (uint64_t)nslots * opt.frame;
	e->va_base = va_base;
	w->next_va = va_base;
	e->cq = ibv_create_cq(opt.b.ctx, 4, NULL, NULL, 0);
	w->scq = ibv_create_cq(opt.a.ctx, 32, NULL, NULL, 0);
	w->rcq = ibv_create_cq(opt.a.ctx, NRECV, NULL, NULL, 0);
	if (!e->cq || !w->scq || !w->rcq ||
	    vu_buf_alloc(&e->ring, opt.b.pd, e->ring_size,
			 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, 0) ||
	    vu_buf_alloc(&w->src, opt.a.pd, 2 * (size_t)opt.frame, 0, 0) ||
	    vu_buf_alloc(&w->rbuf, opt.a.pd, NRECV * RECV_SLOT,
			 IBV_ACCESS_LOCAL_WRITE, 0)) {
		vu_diag("CQ or buffer setup failed: %s", strerror(errno));
		return -1;
	}
	e->qp = emu_qp_create(e, IBV_QPT_UC, e->ring_size, e->frame, va_base);
	if (!e->qp) {
		vu_diag("snaadv_create_qp(WCU.BUF) failed: %s", strerror(errno));
		return -1;
	}
	e->rkey = snaadv_wcubuf_rkey(e->qp);
	w->qp = vu_qp_create(opt.a.pd, IBV_QPT_UC, w->scq, w->rcq, &cap);
	if (!w->qp) {
		vu_diag("worker QP: %s", strerror(errno));
		return -1;
	}
	if (vu_qp_init(e->qp, 0) || vu_qp_init(w->qp, 0) ||
	    vu_qp_rtr(e->qp, opt.b.gid_idx, &opt.a.gid, w->qp->qp_num, g_mtu,
		      0) ||
	    vu_qp_rtr(w->qp, opt.a.gid_idx, &opt.b.gid, e->qp->qp_num, g_mtu,
		      0) ||
	    vu_qp_rts(e->qp, 0) || vu_qp_rts(w->qp, 0)) {
		vu_diag("connecting the QPs failed: %s", strerror(errno));
		return -1;
	}
	for (i = 0; i < NRECV; i++)
		if (post_recv(w, i)) {
			vu_diag("ibv_post_recv failed");
			return -1;
		}
	return 0;
}

/* ---- frames and answers ------------------------------------------------ */

/* The bytes of the frame at @va (version @ver of it). */
static void frame_fill(uint8_t *p, size_t len, uint64_t va, unsigned int ver)
{
	vu_fill_prng(p, len, va * 31 + ver);
}

/* Write @len bytes as one RDMA WRITE to @va with @rkey. */
static int send_frame(struct worker *w, uint64_t va, uint32_t len,
		      uint32_t rkey, unsigned int ver)
{
	struct ibv_sge sge = { .addr = (uintptr_t)w->src.p, .length = len,
			       .lkey = w->src.mr->lkey };
	struct ibv_send_wr wr = {
		.opcode = IBV_WR_RDMA_WRITE, .sg_list = &sge,
		.num_sge = len ? 1 : 0, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_wc wc;

	frame_fill(w->src.p, len, va, ver);
	wr.wr.rdma.remote_addr = va;
	wr.wr.rdma.rkey = rkey;
	if (ibv_post_send(w->qp, &wr, &bad)) {
		vu_diag("ibv_post_send: %s", strerror(errno));
		return -1;
	}
	if (vu_poll_cq(w->scq, &wc, 1, vu_now() + 5) != 1 ||
	    wc.status != IBV_WC_SUCCESS) {
		vu_diag("the WRITE did not complete");
		return -1;
	}
	return 0;
}

static uint32_t le32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The next ACK/NACK; 0, or -1 if none came. */
static int get_answer(struct worker *w, struct answer *a, int ms)
{
	struct ibv_wc wc;
	const uint8_t *p;

	if (vu_poll_cq(w->rcq, &wc, 1, vu_now() + ms / 1000.0) != 1) {
		vu_diag("no ACK/NACK within %d ms", ms);
		return -1;
	}
	if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RECV ||
	    wc.byte_len != SNAADV_WCUBUF_ACK_BYTES) {
		vu_diag("answer completion: status %d opcode %d byte_len %u (want a 16-byte RECV)",
			wc.status, wc.opcode, wc.byte_len);
		post_recv(w, (uint32_t)wc.wr_id);
		return -1;
	}
	p = w->rbuf.p + wc.wr_id * RECV_SLOT;
	a->type = le32(p);
	a->events = le32(p + 4);
	a->va = le32(p + 8) | (uint64_t)le32(p + 12) << 32;
	return post_recv(w, (uint32_t)wc.wr_id);
}

/* What the test expects the device and the QP to have counted. */
static struct {
	uint64_t acks, bytes, dups, nacks, ev[SNAADV_WCUBUF_EV_NUM];
} want;

/* Check the next answer is @type with @events for @va. */
static bool expect(struct worker *w, uint32_t type, uint32_t events,
		   uint64_t va)
{
	struct answer a;
	int i;

	if (get_answer(w, &a, ANSWER_MS))
		return false;
	if (type == SNAADV_WCUBUF_NACK) {
		want.nacks++;
		for (i = 0; i < SNAADV_WCUBUF_EV_NUM; i++)
			if (events & 1U << i)
				want.ev[i]++;
	}
	if (a.type == type && a.events == events && a.va == va)
		return true;
	vu_diag("got %s events 0x%03x VA 0x%016" PRIx64
		", want %s events 0x%03x VA 0x%016" PRIx64,
		a.type ? "NACK" : "ACK", a.events, a.va,
		type ? "NACK" : "ACK", events, va);
	return false;
}

/* Send a good frame at the worker's next VA; expect its ACK. */
static bool good_frame(struct worker *w, struct emu *e, uint32_t len)
{
	uint64_t va = w->next_va;

	if (send_frame(w, va, len, e->rkey, 0))
		return false;
	w->next_va += e->frame;
	want.acks++;
	want.bytes += len;
	return expect(w, SNAADV_WCUBUF_ACK, 0, va);
}

/*
 * The delivered frames are exactly @n, from @va on, each @len bytes of
 * version 0 of its data; consume them if @consume.
 */
static bool check_ring(struct emu *e, int n, uint64_t va, uint32_t len,
		       bool consume)
{
	struct snaadv_wcubuf_frame f[64];
	static uint8_t ref[1 << 24];
	bool ok = true;
	int got, i;

	got = snaadv_wcubuf_peek(e->qp, f, 64);
	if (got != n) {
		vu_diag("peek: %d frames delivered, want %d", got, n);
		return false;
	}
	for (i = 0; i < n && ok; i++) {
		uint64_t fva = va + (uint64_t)i * e->frame;

		if (f[i].va != fva || f[i].length != len) {
			vu_diag("frame %d: VA 0x%" PRIx64 " length %u, want 0x%"
				PRIx64 " length %u", i, f[i].va, f[i].length,
				fva, len);
			ok = false;
			break;
		}
		frame_fill(ref, len, fva, 0);
		ok = vu_bytes_eq("frame", f[i].data, ref, len, 0);
	}
	if (ok && consume)
		snaadv_wcubuf_consume(e->qp, n);
	return ok;
}

/* ---- counters ---------------------------------------------------------- */

static const char *const ev_counter[SNAADV_WCUBUF_EV_NUM] = {
	"wcubuf_nack_sequence", "wcubuf_nack_parity", "wcubuf_nack_window",
	"wcubuf_nack_rkey", "wcubuf_nack_frame_length",
	"wcubuf_nack_packet_length", "wcubuf_nack_bad_frame",
	"wcubuf_nack_bad_packet", "wcubuf_nack_va", "wcubuf_nack_no_sof",
	"wcubuf_nack_ecc_correctable", "wcubuf_nack_ecc_uncorrectable",
};

struct counters {
	long long frames, bytes, dups, nacks, ev[SNAADV_WCUBUF_EV_NUM];
};

static void read_counters(struct counters *c)
{
	int i;

	c->frames = vu_read_counter(opt.b.name, "wcubuf_frames");
	c->bytes = vu_read_counter(opt.b.name, "wcubuf_bytes");
	c->dups = vu_read_counter(opt.b.name, "wcubuf_duplicates");
	c->nacks = vu_read_counter(opt.b.name, "wcubuf_nacks");
	for (i = 0; i < SNAADV_WCUBUF_EV_NUM; i++)
		c->ev[i] = vu_read_counter(opt.b.name, ev_counter[i]);
}

/* The QP's and the device's counters moved by exactly what we expect. */
static void check_counters(struct emu *e, const struct counters *c0,
			   const char *name)
{
	struct snaadv_wcubuf_stats st;
	struct counters c1;
	bool ok = true;
	int i;

	vu_nap_us(20000);	/* the hw_stats cache */
	read_counters(&c1);
	if (snaadv_wcubuf_query(e->qp, &st)) {
		vu_diag("snaadv_wcubuf_query failed");
		ok = false;
	}
#define CHK(what, got, exp)						\
	do {								\
		if ((uint64_t)(got) != (uint64_t)(exp)) {		\
			vu_diag("%s: %llu, want %llu", what,		\
				(unsigned long long)(got),		\
				(unsigned long long)(exp));		\
			ok = false;					\
		}							\
	} while (0)
	CHK("QP acks", st.acks, want.acks);
	CHK("QP bytes", st.bytes, want.bytes);
	CHK("QP duplicates", st.duplicates, want.dups);
	CHK("QP nacks", st.nacks, want.nacks);
	CHK("wcubuf_frames", c1.frames - c0->frames, want.acks);
	CHK("wcubuf_bytes", c1.bytes - c0->bytes, want.bytes);
	CHK("wcubuf_duplicates", c1.dups - c0->dups, want.dups);
	CHK("wcubuf_nacks", c1.nacks - c0->nacks, want.nacks);
	for (i = 0; i < SNAADV_WCUBUF_EV_NUM; i++) {
		CHK("QP NACK event", st.nack_events[i], want.ev[i]);
		CHK(ev_counter[i], c1.ev[i] - c0->ev[i], want.ev[i]);
	}
#undef CHK
	vu_report(ok, "%s: per-QP stats and rdma statistic counters exact",
		  name);
}

/* ---- crafted packets --------------------------------------------------- */

#define OP_UC_WRITE_FIRST	0x26
#define OP_UC_WRITE_MIDDLE	0x27
#define OP_UC_WRITE_LAST	0x28
#define OP_UC_WRITE_ONLY	0x2a

static uint32_t expected_psn(struct emu *e)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (ibv_query_qp(e->qp, &a, IBV_QP_RQ_PSN, &ia))
		return 0;
	return a.rq_psn;
}

/* One crafted packet to the WCU.BUF QP; @extra: more rawpkt options. */
static bool raw(struct emu *e, int opcode, uint32_t psn, uint32_t len,
		const char *extra)
{
	char cmd[1024];
	int r;

	snprintf(cmd, sizeof(cmd),
		 "%s --opcode %d --qpn %u --psn %u --payload-len %u %s >/dev/null",
		 opt.rawpkt, opcode, e->qp->qp_num, psn & 0xffffff, len,
		 extra ? extra : "");
	r = system(cmd);
	if (r) {
		vu_diag("failed (%d): %s", r, cmd);
		return false;
	}
	return true;
}

/* A RETH for the frame at @va of @len bytes with the ring's R_Key. */
static const char *reth(struct emu *e, uint64_t va, uint32_t len)
{
	static char s[128];

	snprintf(s, sizeof(s), "--va %" PRIu64 " --rkey %u --dma-len %u", va,
		 e->rkey, len);
	return s;
}

static void case_crafted(struct emu *e, struct worker *w)
{
	uint64_t va = w->next_va;
	long long bad_len0, bad_len;
	uint32_t psn;
	bool ok;

	if (!opt.rawpkt) {
		vu_report(true, "crafted packets # SKIP no --rawpkt");
		return;
	}
	/* out of sequence: FIRST, then a LAST one PSN too far */
	psn = expected_psn(e);
	ok = raw(e, OP_UC_WRITE_FIRST, psn, 1024, reth(e, va, 2048)) &&
	     raw(e, OP_UC_WRITE_LAST, psn + 2, 1024, NULL) &&
	     expect(w, SNAADV_WCUBUF_NACK, EV(SEQUENCE), va) &&
	     expect(w, SNAADV_WCUBUF_NACK, EV(SEQUENCE) | EV(NO_SOF), 0);
	vu_report(ok, "PSN gap in a frame: NACK out of sequence with its VA, the rest NACK out of sequence + no SOF with VA 0");

	psn = expected_psn(e);
	ok = raw(e, OP_UC_WRITE_MIDDLE, psn, 1024, NULL) &&
	     raw(e, OP_UC_WRITE_LAST, psn + 1, 1024, NULL) &&
	     expect(w, SNAADV_WCUBUF_NACK, EV(NO_SOF), 0);
	vu_report(ok, "MIDDLE + LAST without a FIRST: one NACK no SOF, VA 0");

	psn = expected_psn(e);
	ok = raw(e, OP_UC_WRITE_FIRST, psn, 1024, reth(e, va, 3072)) &&
	     raw(e, OP_UC_WRITE_MIDDLE, psn + 1, 1024, "--bad-icrc") &&
	     raw(e, OP_UC_WRITE_LAST, psn + 2, 1024, NULL) &&
	     expect(w, SNAADV_WCUBUF_NACK, EV(EBP), va);
	vu_report(ok, "a packet with a bad ICRC: NACK end of bad packet for its frame");

	/*
	 * No RoCE packet carries more than 4096 bytes: the parser drops
	 * it (drop_bad_length) before any QP sees it, so its frame misses
	 * a packet.
	 */
	psn = expected_psn(e);
	bad_len0 = vu_read_counter(opt.b.name, "drop_bad_length");
	ok = raw(e, OP_UC_WRITE_FIRST, psn, 1024, reth(e, va, 3072)) &&
	     raw(e, OP_UC_WRITE_MIDDLE, psn + 1, 4160, NULL) &&
	     raw(e, OP_UC_WRITE_LAST, psn + 2, 1024, NULL) &&
	     expect(w, SNAADV_WCUBUF_NACK, EV(SEQUENCE), va) &&
	     expect(w, SNAADV_WCUBUF_NACK, EV(SEQUENCE) | EV(NO_SOF), 0);
	vu_nap_us(20000);
	bad_len = vu_read_counter(opt.b.name, "drop_bad_length") - bad_len0;
	if (bad_len != 1) {
		vu_diag("drop_bad_length moved by %lld, want 1", bad_len);
		ok = false;
	}
	vu_report(ok, "a 4160-byte packet in a frame: dropped as malformed, its frame NACKed out of sequence");

	psn = expected_psn(e);
	ok = raw(e, OP_UC_WRITE_FIRST, psn, 1024, reth(e, va, 2048)) &&
	     raw(e, OP_UC_WRITE_MIDDLE, psn + 1, 1024, NULL) &&
	     raw(e, OP_UC_WRITE_LAST, psn + 2, 1024, NULL) &&
	     expect(w, SNAADV_WCUBUF_NACK, EV(FRAME_LEN), va);
	vu_report(ok, "3072 bytes under a RETH of 2048: NACK frame length");

	psn = expected_psn(e);
	ok = raw(e, OP_UC_WRITE_ONLY, psn, 1024,
		 "--va 4096 --rkey 1 --dma-len 1024") &&
	     expect(w, SNAADV_WCUBUF_NACK, EV(RKEY) | EV(WINDOW), 4096);
	vu_report(ok, "several errors at once: R_Key and window bits together");

	/* the worker's own PSNs no longer follow: a FIRST resynchronises */
	ok = good_frame(w, e, opt.frame) &&
	     check_ring(e, 1, va, opt.frame, true);
	vu_report(ok, "after the crafted packets a good frame is ACKed and only it is delivered");
}

/* ---- cases -------------------------------------------------------------- */

static void case_clean(struct emu *e, struct worker *w, uint32_t nslots)
{
	uint32_t i, round = nslots - 1, nframes = 3 * nslots;
	uint64_t va0 = w->next_va;
	bool ok = true;

	for (i = 0; i < nframes && ok; i++) {
		ok = good_frame(w, e, opt.frame);
		if (ok && (i + 1) % round == 0) {
			ok = check_ring(e, round, va0, opt.frame, true);
			va0 = w->next_va;
		}
	}
	if (ok)
		ok = check_ring(e, (int)(nframes % round), va0, opt.frame,
				true);
	vu_report(ok, "%u frames in a ring of %u: every frame ACKed with its VA, delivered in order, byte-exact",
		  nframes, nslots);
}

static void case_window(struct emu *e, struct worker *w, uint32_t nslots)
{
	uint64_t va0 = w->next_va, over;
	uint32_t i;
	bool ok = true;

	for (i = 0; i < nslots - 1 && ok; i++)
		ok = good_frame(w, e, opt.frame);
	over = w->next_va;
	ok = ok && !send_frame(w, over, opt.frame, e->rkey, 0) &&
	     expect(w, SNAADV_WCUBUF_NACK, EV(WINDOW), over) &&
	     check_ring(e, (int)nslots - 1, va0, opt.frame, false);
	vu_report(ok, "ring full (R/F - 1 frames unconsumed): the next frame is NACKed outside window");

	snaadv_wcubuf_consume(e->qp, 1);
	ok = ok && good_frame(w, e, opt.frame) &&
	     check_ring(e, (int)nslots - 1, va0 + e->frame, opt.frame, true);
	vu_report(ok, "one frame consumed: the retransmitted frame is ACKed and delivered");
}

static void case_duplicate(struct emu *e, struct worker *w)
{
	uint64_t va = w->next_va;
	bool ok;

	ok = good_frame(w, e, opt.frame) &&
	     !send_frame(w, va, opt.frame, e->rkey, 1) &&
	     expect(w, SNAADV_WCUBUF_ACK, 0, va);
	want.dups++;
	ok = ok && check_ring(e, 1, va, opt.frame, true);
	vu_report(ok, "a delivered frame sent again (other bytes): ACKed again, not written");
	ok = ok && !send_frame(w, va, opt.frame, e->rkey, 2) &&
	     expect(w, SNAADV_WCUBUF_ACK, 0, va) && check_ring(e, 0, 0, 0, true);
	want.dups++;
	vu_report(ok, "a consumed frame sent again: ACKed again, nothing delivered");
}

static void case_errors(struct emu *e, struct worker *w)
{
	uint64_t va = w->next_va;
	bool ok;

	ok = !send_frame(w, va, opt.frame, e->rkey + 1, 0) &&
	     expect(w, SNAADV_WCUBUF_NACK, EV(RKEY), va);
	vu_report(ok, "wrong R_Key: NACK invalid R_Key");
	ok = !send_frame(w, va + 1, 128, e->rkey, 0) &&
	     expect(w, SNAADV_WCUBUF_NACK, EV(VA), va + 1);
	vu_report(ok, "VA not 64-byte aligned: NACK invalid VA");
	ok = !send_frame(w, va + 64, 128, e->rkey, 0) &&
	     expect(w, SNAADV_WCUBUF_NACK, EV(VA), va + 64);
	vu_report(ok, "VA aligned but not a frame start: NACK invalid VA");
	ok = !send_frame(w, va, 32, e->rkey, 0) &&
	     expect(w, SNAADV_WCUBUF_NACK, EV(PACKET_LEN), va);
	vu_report(ok, "32-byte frame: NACK packet length");
	ok = !send_frame(w, va, 100, e->rkey, 0) &&
	     expect(w, SNAADV_WCUBUF_NACK, EV(PACKET_LEN), va);
	vu_report(ok, "100-byte frame (not a multiple of 64): NACK packet length");
	ok = !send_frame(w, va, 0, e->rkey, 0) &&
	     expect(w, SNAADV_WCUBUF_NACK, EV(FRAME_LEN) | EV(PACKET_LEN), va);
	vu_report(ok, "0-byte frame: NACK frame length + packet length");
	ok = !send_frame(w, va, opt.frame + 64, e->rkey, 0) &&
	     expect(w, SNAADV_WCUBUF_NACK, EV(FRAME_LEN), va);
	vu_report(ok, "frame longer than F: NACK frame length");
	ok = good_frame(w, e, 1024) && check_ring(e, 1, va, 1024, true);
	vu_report(ok, "after the errors: a short good frame is ACKed, delivered alone with its length");
}

static void case_faults(struct emu *e, struct worker *w)
{
	const uint32_t inj = EV(PARITY) | EV(ECC_CORR) | EV(ECC_UNCORR);
	uint64_t va = w->next_va;
	bool ok;
	int i;

	if (!opt.debugfs) {
		vu_report(true, "fault injection # SKIP no --debugfs");
		return;
	}
	ok = vu_write_file(opt.debugfs, "wcubuf_fault_events", "0xc02") &&
	     vu_write_file(opt.debugfs, "wcubuf_fault_next", "2");
	for (i = 0; i < 2 && ok; i++)
		ok = !send_frame(w, va, opt.frame, e->rkey, 0) &&
		     expect(w, SNAADV_WCUBUF_NACK, inj, va);
	ok = ok && good_frame(w, e, opt.frame) &&
	     check_ring(e, 1, va, opt.frame, true);
	vu_report(ok, "fault injection \"next 2 frames\": parity + ECC NACKs, then the retransmission is ACKed");

	va = w->next_va;
	ok = vu_write_file(opt.debugfs, "wcubuf_fault_events", "0x2") &&
	     vu_write_file(opt.debugfs, "wcubuf_fault_every", "3") &&
	     good_frame(w, e, opt.frame) && good_frame(w, e, opt.frame) &&
	     !send_frame(w, w->next_va, opt.frame, e->rkey, 0) &&
	     expect(w, SNAADV_WCUBUF_NACK, EV(PARITY), w->next_va) &&
	     good_frame(w, e, opt.frame) &&
	     check_ring(e, 3, va, opt.frame, true);
	vu_write_file(opt.debugfs, "wcubuf_fault_every", "0");
	vu_write_file(opt.debugfs, "wcubuf_fault_events", "0");
	vu_report(ok, "fault injection \"one in 3\": the third frame is NACKed parity");
}


static void case_api(struct emu *e)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = e->cq, .recv_cq = e->cq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct snaadv_qp_init_attr dv = { .comp_mask = SNAADV_QP_INIT_QPN,
					  .qpn = SNAADV_WCUBUF_STATUS_QPN };
	struct ibv_qp *qp, *qp2;
	struct ibv_send_wr wr = { .opcode = IBV_WR_SEND }, *bad = NULL;
	bool ok;

	errno = 0;
	qp = emu_qp_create(e, IBV_QPT_RC, e->ring_size, e->frame, e->va_base);
	ok = !qp && errno == EINVAL;
	qp = qp ? (ibv_destroy_qp(qp), NULL) : NULL;
	qp = emu_qp_create(e, IBV_QPT_UC, e->ring_size, 100, e->va_base);
	ok = ok && !qp && errno == EINVAL;
	qp = emu_qp_create(e, IBV_QPT_UC, e->ring_size, e->frame, 0);
	ok = ok && !qp && errno == EINVAL;
	qp = emu_qp_create(e, IBV_QPT_UC, e->ring_size, e->frame,
			   e->va_base + 1);
	ok = ok && !qp && errno == EINVAL;
	qp = emu_qp_create(e, IBV_QPT_UC, e->frame, e->frame, e->va_base);
	ok = ok && !qp && errno == EINVAL;
	qp = emu_qp_create(e, IBV_QPT_UC, 2 * e->ring_size, e->frame,
			   e->va_base);
	ok = ok && !qp && errno == EINVAL;
	vu_report(ok, "WCU.BUF QP refused (EINVAL): RC, F not a multiple of 64, VA base 0 or unaligned, one-frame ring, ring beyond the MR");

	/* the ring's lkey is the R_Key the workers write with */
	{
		struct ibv_mr *rw = e->ring.mr, *lw;

		lw = ibv_reg_mr(opt.b.pd, e->ring.p, e->ring_size,
				IBV_ACCESS_LOCAL_WRITE);
		e->ring.mr = lw;
		errno = 0;
		qp = lw ? emu_qp_create(e, IBV_QPT_UC, e->ring_size, e->frame,
					e->va_base) : NULL;
		ok = lw && !qp && errno == EACCES;
		if (qp)
			ibv_destroy_qp(qp);
		e->ring.mr = rw;
		if (lw)
			ibv_dereg_mr(lw);
		vu_report(ok, "WCU.BUF QP refused (EACCES): a ring MR without IBV_ACCESS_REMOTE_WRITE (the one with it is what every other case uses)");
	}

	ok = ibv_post_send(e->qp, &wr, &bad) == EINVAL && bad == &wr;
	vu_report(ok, "ibv_post_send on a WCU.BUF QP: EINVAL, bad_wr set");
	vu_report(vu_doorbell(e->qp->context, e->qp->qp_num) == EINVAL,
		  "the SQ doorbell (SNAA_IB_METHOD_QP_DOORBELL) of a WCU.BUF QP: EINVAL");

	qp = snaadv_create_qp(opt.b.pd, &ia, &dv);
	qp2 = snaadv_create_qp(opt.b.pd, &ia, &dv);
	ok = qp && qp->qp_num == SNAADV_WCUBUF_STATUS_QPN && !qp2 &&
	     errno == EBUSY;
	if (!ok)
		vu_diag("QPN %u: %s; second: %s", qp ? qp->qp_num : 0,
			qp ? "created" : strerror(errno),
			qp2 ? "created" : "refused");
	if (qp2)
		ibv_destroy_qp(qp2);
	if (qp)
		ibv_destroy_qp(qp);
	dv.qpn = 300;
	qp = snaadv_create_qp(opt.b.pd, &ia, &dv);
	ok = ok && !qp && errno == EINVAL;
	if (qp)
		ibv_destroy_qp(qp);
	vu_report(ok, "fixed QPN %d: granted once, EBUSY while taken, EINVAL outside 16..255",
		  SNAADV_WCUBUF_STATUS_QPN);
}

static void case_mr_gone(struct emu *e, struct worker *w)
{
	uint64_t va = w->next_va;
	bool ok;

	ok = !ibv_dereg_mr(e->ring.mr);
	e->ring.mr = NULL;
	ok = ok && !send_frame(w, va, opt.frame, e->rkey, 0) &&
	     expect(w, SNAADV_WCUBUF_NACK, EV(RKEY), va) &&
	     check_ring(e, 0, 0, 0, false);
	vu_report(ok, "ring MR deregistered under the QP: NACK invalid R_Key, nothing delivered");
}

static void case_wrap(void)
{
	struct emu e;
	struct worker w;
	uint64_t va0 = 0 - 2 * (uint64_t)opt.frame;
	bool ok;
	int i;

	ok = !pair_up(&e, &w, 4, va0);
	for (i = 0; i < 6 && ok; i++)
		ok = good_frame(&w, &e, opt.frame) &&
		     check_ring(&e, 1, w.next_va - opt.frame, opt.frame, true);
	vu_report(ok, "VA base 2^64 - 2F: frames wrap past 2^64 to VA 0, F, 2F ... ACKed and delivered");
	emu_close(&e);
	worker_close(&w);
}

int main(int argc, char **argv)
{
	const uint32_t nslots = 8;
	struct counters c0;
	struct emu e;
	struct worker w;
	double t0 = vu_now();
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	parse_args(argc, argv);
	printf("KTAP version 1\n");
	printf("# wcubuf_test: worker %s, WCU.BUF %s, F %u\n", opt.a.name,
	       opt.b.name, opt.frame);
	ret = vu_dev_open(&opt.a);
	if (!ret)
		ret = vu_dev_open(&opt.b);
	if (ret) {
		if (ret == VU_EXIT_SKIP)
			printf("1..0 # SKIP device missing\n");
		return ret == VU_EXIT_SKIP ? VU_EXIT_SKIP : 1;
	}
	if (!snaadv_is_supported(opt.b.ctx)) {
		printf("1..0 # SKIP %s is not an snaa device\n", opt.b.name);
		return VU_EXIT_SKIP;
	}
	g_mtu = vu_path_mtu(&opt.a, &opt.b);
	printf("# path MTU %d\n", vu_mtu_bytes(g_mtu));

	read_counters(&c0);
	ret = pair_up(&e, &w, nslots, 1ULL << 40);
	vu_report(!ret, "WCU.BUF QP created and connected (ring %u x %u bytes)",
		  nslots, opt.frame);
	if (!ret) {
		case_clean(&e, &w, nslots);
		case_window(&e, &w, nslots);
		case_duplicate(&e, &w);
		case_errors(&e, &w);
		case_crafted(&e, &w);
		case_faults(&e, &w);
		check_counters(&e, &c0, "after every case");
		case_api(&e);
		case_mr_gone(&e, &w);
	}
	emu_close(&e);
	worker_close(&w);
	case_wrap();

	ret = vu_ktap_finish(t0);
	vu_dev_close(&opt.a);
	vu_dev_close(&opt.b);
	return ret;
}
