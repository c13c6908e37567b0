// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rc_test - RC (reliable connected) over RoCE v2: every operation, the
 * error statuses, RNR, retry, READ/atomic limits, atomics under
 * contention and a long checked stream.
 *
 * Named tests (kselftest_harness, vu_harness.h) of fixture "rc": each
 * runs in a process of its own, opens devices A and B (possibly the same
 * device: loopback) and connects RC QPs between them directly (no CM).
 *
 *  rc.matrix   SEND, SEND with immediate, RDMA WRITE, WRITE with
 *              immediate and RDMA READ of 0, 1, 63, 64, MTU-1, MTU,
 *              MTU+1 bytes, 64 KiB, 1 MiB and 16 MiB, with 1 SGE and with
 *              3 unequal SGEs in 3 MRs on both sides; compare & swap
 *              (equal and not) and fetch & add; A->B and B->A.  Every
 *              byte, the guard bytes around the target and every field
 *              of every completion are checked.
 *  rc.errors   remote access (bad R_Key, READ beyond the MR, no
 *              REMOTE_WRITE on the QP), invalid request (SEND longer than
 *              the receive WR, misaligned atomic), remote operational
 *              error (receive WR with a bad lkey), local protection (bad
 *              lkey, READ into memory without LOCAL_WRITE, alone and
 *              behind a WRITE awaiting its ACK): the statuses
 *              the IBA defines, the WR behind flushed, both QPs' states
 *  rc.rnr      no receive WR: rnr_retry 7 waits until one is posted;
 *              rnr_retry 1 gives IBV_WC_RNR_RETRY_EXC_ERR
 *  rc.retry    the responder's QP in ERR (it drops everything): retry_cnt
 *              local ACK timeouts, then IBV_WC_RETRY_EXC_ERR
 *  rc.rd_atomic
 *              max_rd_atomic 1 serialises 8 READs; a responder with
 *              max_dest_rd_atomic 1 answers the first of 4 outstanding
 *              READs, then NAKs the next (IBV_WC_REM_INV_REQ_ERR; the
 *              rest is flushed); a SEND with IBV_SEND_FENCE from the
 *              buffer an RDMA READ fills carries the bytes read
 *  rc.atomics  a CPU thread and remote fetch & adds increment the same
 *              counter concurrently: the sum is exact, every remote
 *              result distinct; then fetch & adds posted unsignaled
 *              (every 16th signaled, 48 outstanding): results exactly
 *              0 .. N-1, the signaled completions once each, in order
 *  rc.loss     packets lost at fixed places (snaa's debugfs tx_fault_skip
 *              and tx_fault_drop): A's last WRITE packet, B's ACK, a
 *              middle packet; every retransmission, timeout, NAK,
 *              duplicate and gap drop counted as predicted (where timing
 *              decides a number, the relation between the counters)
 *  rc.slow     a responder slower than the local ACK timeout (the caller
 *              delays every packet past it: --link-delay): 16 MiB READs
 *              whose request goes out again while the responder answers
 *              it, so that the responder sends it twice and what is
 *              posted next waits behind the replay; every WR completes
 *              successfully with exact data, A timed out (snaa: counted)
 *  rc.stream   --stream BYTES (default 64 MiB) of SEND, WRITE WITH IMM and
 *              READ messages of random sizes, 16 outstanding, each checked;
 *              every WR completes exactly once, in order
 *
 * --expect-peer-loss (with rc.stream): device B is removed during the
 * stream (by the caller): A's WR must then complete with
 * IBV_WC_RETRY_EXC_ERR, the rest flushed, within the time limit.
 *
 * Every test but rc.slow runs unless --tests names the ones to run;
 * rc.slow runs with --link-delay only.  Output: the harness's TAP, each
 * test's checks a KTAP subtest before its result line.  Exit status: 0
 * no test failed, 1 a test failed, 2 usage error.
 *
 * Build: make -C selftests/snaa rc_test (rc_test.c, verbs_util.c,
 * userspace/common; -libverbs -lpthread; kselftest_harness.h as
 * verbs_test)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

#include "snaa_opt.h"
#include "verbs_util.h"
#include "vu_harness.h"

#define MIB		(1024 * 1024)
#define MAX_MSG		(16 * MIB)
#define GUARD		64
#define POISON		0xa5
/* Buffer layout of an endpoint: source, then target, each with guards. */
#define SRC_OFF		GUARD
#define DST_OFF		(SRC_OFF + MAX_MSG + 2 * GUARD)
#define BUF_LEN		(DST_OFF + MAX_MSG + GUARD)
#define ACCESS		(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)
#define QP_WR		64
#define CQ_DEPTH	256

static struct {
	struct vu_dev a, b;
	double timeout;
	unsigned long long stream;
	bool peer_loss;
	int ack_timeout;		/* the QPs' local ACK timeout (14) */
	uint32_t max_msg;		/* the matrix's largest message */
	const char *netem_expect;	/* what the caller's netem must move */
	bool link_delay;		/* the caller delays every packet */
	int mtu;
} opt = {
	.a = VU_DEV_INIT('A'), .b = VU_DEV_INIT('B'), .timeout = 30,
	.stream = 64ULL * MIB, .max_msg = MAX_MSG,
};

static enum ibv_mtu g_mtu;
static bool a_is_rxe;			/* A is rdma_rxe: its quirks below */
static bool b_is_rxe;			/* B is rdma_rxe */
static uint32_t psn_seed = 0xfffe00;	/* the PSNs wrap early */

/*
 * On a failure: the RC counters of A and B (snaa devices) that say what
 * the requester and the responder saw, as diagnostics of the check that
 * reports it.  They count since the device was added.
 */
static void rc_counters_diag(void)
{
	static const char *const names[] = {
		"rc_timeouts", "rc_retransmits", "rc_retry_exceeded",
		"rc_seq_naks_rcvd", "rc_err_naks_rcvd", "rc_rnr_naks_rcvd",
		"rc_duplicate_requests", "rc_seq_naks_sent", "rc_err_naks_sent",
		"drop_psn_gap", "drop_bad_sequence",
	};
	const struct vu_dev *d[2] = { &opt.a, &opt.b };
	const bool rxe[2] = { a_is_rxe, b_is_rxe };
	char line[512];
	size_t i, o;
	int k;

	for (k = 0; k < 2; k++) {
		if (rxe[k] || (k && !strcmp(d[1]->name, d[0]->name)))
			continue;
		o = (size_t)snprintf(line, sizeof(line), "counters of %s:",
				     d[k]->name);
		for (i = 0; i < sizeof(names) / sizeof(names[0]) &&
			    o < sizeof(line); i++)
			o += (size_t)snprintf(line + o, sizeof(line) - o,
					      " %s=%lld", names[i],
					      vu_read_counter(d[k]->name,
							      names[i]));
		vu_diag("%s", line);
	}
}

static void usage(FILE *f)
{
	fprintf(f,
"Usage: rc_test --dev-a NAME --dev-b NAME [--tests LIST] [--mtu BYTES]\n"
"               [--stream BYTES] [--max-msg BYTES] [--expect-peer-loss]\n"
"               [--timeout S]\n"
"\n"
"RC between RDMA devices A and B (no CM): every operation byte-exact,\n"
"error statuses, RNR, retry, READ/atomic limits, atomics under\n"
"contention, a long checked stream.  Output is KTAP.\n"
"\n"
VU_PAIR_USAGE
"  --tests LIST          comma-separated tests to run (default: all but\n"
"                        rc.slow): rc.matrix, rc.errors, rc.rnr,\n"
"                        rc.retry, rc.rd_atomic (and fences), rc.atomics,\n"
"                        rc.stream, rc.loss (snaa only), rc.slow (with\n"
"                        --link-delay)\n"
"  --mtu BYTES           path MTU (default: the ports' active MTU)\n"
"  --stream BYTES        bytes rc.stream moves (default 64 MiB)\n"
"  --max-msg BYTES       rc.matrix's largest message, 1 MiB to 16 MiB\n"
"                        (default 16 MiB; a smaller one for slow kernels)\n"
"  --expect-peer-loss    rc.stream: device B goes away during the stream;\n"
"                        A must see IBV_WC_RETRY_EXC_ERR, then flushes\n"
"  --ack-timeout N       the QPs' local ACK timeout, 4.096 us << N\n"
"                        (default 14, 67 ms, one more per doubling of\n"
"                        $SNAA_TIME_SCALE; rc.retry uses its own): a\n"
"                        longer one for slow kernels (KASAN)\n"
"  --netem-expect WHAT   rc.stream runs over a link the caller impairs with\n"
"                        netem; afterwards the counters of two snaa\n"
"                        devices must show it: retransmits (A's\n"
"                        rc_retransmits), duplicates (B's\n"
"                        rc_duplicate_requests), icrc (drop_bad_icrc of\n"
"                        A or B) or any (no counter)\n"
"  --link-delay          the caller delays every packet on the link by\n"
"                        milliseconds (netem delay): rc.loss then knows\n"
"                        how many packets A sends again after a timeout\n"
"                        before the first ACK comes back\n"
"  --timeout S           deadline per completion (default 30 times\n"
"                        $SNAA_TIME_SCALE)\n"
"  --help                show this help\n"
"\n"
"Exit status: 0 no test failed, 1 a test failed, 2 usage error.\n");
}

static void parse_args(int argc, char **argv)
{
	enum { O_TESTS = VU_OPT_NEXT, O_MTU, O_STREAM, O_PEER_LOSS,
	       O_TIMEOUT, O_NETEM, O_ACK_TIMEOUT, O_LINK_DELAY, O_MAX_MSG };
	static const struct option lopts[] = {
		VU_PAIR_OPTIONS,
		{ "tests", required_argument, NULL, O_TESTS },
		{ "mtu", required_argument, NULL, O_MTU },
		{ "stream", required_argument, NULL, O_STREAM },
		{ "max-msg", required_argument, NULL, O_MAX_MSG },
		{ "expect-peer-loss", no_argument, NULL, O_PEER_LOSS },
		{ "netem-expect", required_argument, NULL, O_NETEM },
		{ "link-delay", no_argument, NULL, O_LINK_DELAY },
		{ "ack-timeout", required_argument, NULL, O_ACK_TIMEOUT },
		{ "timeout", required_argument, NULL, O_TIMEOUT },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	bool timeout_given = false;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
		switch (c) {
		case O_TESTS:
			vu_tests = optarg;
			break;
		case O_MTU:
			opt.mtu = vu_mtu_option("--mtu", optarg);
			break;
		case O_STREAM:
			opt.stream = opt_u64("--stream", optarg, 1ULL << 40);
			break;
		case O_MAX_MSG:
			opt.max_msg = (uint32_t)opt_u64("--max-msg", optarg,
							MAX_MSG);
			if (opt.max_msg < MIB)
				opt_usage_error("--max-msg: at least 1 MiB "
						"(1048576)");
			break;
		case O_PEER_LOSS:
			opt.peer_loss = true;
			break;
		case O_ACK_TIMEOUT:
			opt.ack_timeout = opt_int("--ack-timeout", optarg, 1,
						  31);
			break;
		case O_NETEM:
			if (strcmp(optarg, "retransmits") &&
			    strcmp(optarg, "duplicates") &&
			    strcmp(optarg, "icrc") && strcmp(optarg, "any"))
				opt_usage_error("--netem-expect: retransmits, "
						"duplicates, icrc or any");
			opt.netem_expect = optarg;
			break;
		case O_LINK_DELAY:
			opt.link_delay = true;
			break;
		case O_TIMEOUT:
			opt.timeout = opt_int("--timeout", optarg, 1, 3600);
			timeout_given = true;
			break;
		default:
			if (!vu_pair_option(c, optarg, &opt.a, &opt.b))
				opt_help_or_error(c, argv, usage);
		}
	}
	opt_no_operands(argc, argv);
	vu_pair_options_check(&opt.a, &opt.b);
	/* on a slow day (or beside another VM) a completion takes longer */
	if (!timeout_given)
		opt.timeout *= vu_time_scale();
}

/* ---- endpoints --------------------------------------------------------- */

/*
 * One end: CQs, an RC QP, a buffer with one MR over all of it and three
 * more registrations of the same memory (three more keys: the three
 * SGEs of a 3-SGE layout use three different MRs).
 */
struct ep {
	char label;
	struct vu_dev *d;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp;
	struct vu_buf buf;
	struct ibv_mr *part[3];
	uint32_t sq_psn, rq_psn;
};

static void ep_close(struct ep *e)
{
	int i;

	if (e->qp)
		ibv_destroy_qp(e->qp);
	for (i = 0; i < 3; i++)
		if (e->part[i])
			ibv_dereg_mr(e->part[i]);
	vu_buf_free(&e->buf);
	if (e->scq)
		ibv_destroy_cq(e->scq);
	if (e->rcq)
		ibv_destroy_cq(e->rcq);
	memset(e, 0, sizeof(*e));
}

static int ep_open(struct ep *e, struct vu_dev *d, char label, int access)
{
	struct ibv_qp_cap cap = { QP_WR, QP_WR, 3, 3, 0 };
	int i, ret;

	memset(e, 0, sizeof(*e));
	e->label = label;
	e->d = d;
	e->scq = ibv_create_cq(d->ctx, CQ_DEPTH, NULL, NULL, 0);
	e->rcq = ibv_create_cq(d->ctx, CQ_DEPTH, NULL, NULL, 0);
	if (!e->scq || !e->rcq) {
		vu_diag("%c: ibv_create_cq: %s", label, strerror(errno));
		return -1;
	}
	ret = vu_buf_alloc(&e->buf, d->pd, BUF_LEN, access, POISON);
	if (ret) {
		vu_diag("%c: %d-byte buffer: %s", label, BUF_LEN, strerror(ret));
		return -1;
	}
	for (i = 0; i < 3; i++) {
		e->part[i] = ibv_reg_mr(d->pd, e->buf.p, BUF_LEN, access);
		if (!e->part[i]) {
			vu_diag("%c: ibv_reg_mr: %s", label, strerror(errno));
			return -1;
		}
	}
	e->qp = vu_qp_create(d->pd, IBV_QPT_RC, e->scq, e->rcq, &cap);
	if (!e->qp) {
		vu_diag("%c: ibv_create_qp(RC): %s", label, strerror(errno));
		return -1;
	}
	return 0;
}

static int pair_connect(struct ep *a, struct ep *b)
{
	struct vu_qp_end ea, eb;
	const char *step;
	int ret;

	psn_seed += 0x010203;
	a->sq_psn = b->rq_psn = psn_seed & 0xffffff;
	psn_seed += 0x030201;
	b->sq_psn = a->rq_psn = psn_seed & 0xffffff;
	ea = (struct vu_qp_end){ a->qp, a->d, a->sq_psn, a->rq_psn };
	eb = (struct vu_qp_end){ b->qp, b->d, b->sq_psn, b->rq_psn };
	ret = vu_qp_connect(&ea, &eb, g_mtu, ACCESS, &step);
	if (!ret)
		ret = vu_qp_connect(&eb, &ea, g_mtu, ACCESS, &step);
	if (ret)
		vu_diag("connecting: %s: %s", step, strerror(ret));
	return ret;
}

/* Both ends on their devices, connected; false (and diagnostics) if not. */
static bool pair_open(struct ep *a, struct ep *b, int b_access)
{
	if (!ep_open(a, &opt.a, 'A', ACCESS) &&
	    !ep_open(b, &opt.b, 'B', b_access) && !pair_connect(a, b))
		return true;
	ep_close(a);
	ep_close(b);
	return false;
}

/* rdma_rxe reports src_qp 0 for connected QPs; snaa the peer's QPN. */
static uint32_t want_src_qp(const struct ep *rx, const struct ep *tx)
{
	return strncmp(rx->d->name, "rxe", 3) ? tx->qp->qp_num : 0;
}

/* ---- WR helpers ----------------------------------------------------------- */

/* SGEs over [off, off + len) of e's buffer: 1, or 3 unequal ones, each
 * through another MR. */
static int sges(struct ep *e, size_t off, uint32_t len, int n,
		struct ibv_sge *sg)
{
	uint32_t l[3], i;

	if (n == 1 || len < 3) {
		sg[0] = (struct ibv_sge){ (uintptr_t)(e->buf.p + off), len,
					  e->buf.mr->lkey };
		return 1;
	}
	l[0] = len / 2;
	l[1] = len / 3;
	l[2] = len - l[0] - l[1];
	for (i = 0; i < 3; i++) {
		sg[i] = (struct ibv_sge){ (uintptr_t)(e->buf.p + off), l[i],
					  e->part[i]->lkey };
		off += l[i];
	}
	return 3;
}

static int post_send(struct ep *e, enum ibv_wr_opcode op, uint64_t id,
		     struct ibv_sge *sg, int nsg, uint64_t raddr,
		     uint32_t rkey, uint32_t imm)
{
	struct ibv_send_wr wr = {
		.wr_id = id, .sg_list = sg, .num_sge = nsg, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED, .imm_data = htonl(imm),
	}, *bad;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return ibv_post_send(e->qp, &wr, &bad);
}

static int post_atomic_flags(struct ep *e, enum ibv_wr_opcode op,
			     uint64_t id, size_t loff, uint64_t raddr,
			     uint32_t rkey, uint64_t cmp_add, uint64_t swap,
			     unsigned int flags)
{
	struct ibv_sge sg = { (uintptr_t)(e->buf.p + loff), 8,
			      e->buf.mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = id, .sg_list = &sg, .num_sge = 1, .opcode = op,
		.send_flags = flags,
	}, *bad;

	wr.wr.atomic.remote_addr = raddr;
	wr.wr.atomic.rkey = rkey;
	wr.wr.atomic.compare_add = cmp_add;
	wr.wr.atomic.swap = swap;
	return ibv_post_send(e->qp, &wr, &bad);
}

static int post_atomic(struct ep *e, enum ibv_wr_opcode op, uint64_t id,
		       size_t loff, uint64_t raddr, uint32_t rkey,
		       uint64_t cmp_add, uint64_t swap)
{
	return post_atomic_flags(e, op, id, loff, raddr, rkey, cmp_add, swap,
				 IBV_SEND_SIGNALED);
}

static int post_recv(struct ep *e, uint64_t id, struct ibv_sge *sg, int nsg)
{
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = sg, .num_sge = nsg },
			   *bad;

	return ibv_post_recv(e->qp, &wr, &bad);
}

/* One completion; its status and (if >= 0) opcode and byte_len. */
static bool expect_wc(const char *what, struct ibv_cq *cq, uint64_t id,
		      enum ibv_wc_status st, int opcode, long long len,
		      struct ibv_wc *out)
{
	struct ibv_wc wc;
	char s[256];

	if (vu_poll_cq(cq, &wc, 1, vu_now() + opt.timeout) != 1) {
		vu_diag("%s: no completion within %.0f s", what, opt.timeout);
		return false;
	}
	if (out)
		*out = wc;
	if (wc.wr_id == id && wc.status == st &&
	    (st != IBV_WC_SUCCESS ||
	     ((opcode < 0 || (int)wc.opcode == opcode) &&
	      (len < 0 || wc.byte_len == (uint64_t)len))))
		return true;
	vu_wc_str(&wc, s, sizeof(s));
	vu_diag("%s: %s; expected wr_id 0x%" PRIx64 " status %s opcode %d "
		"byte_len %lld", what, s, id, ibv_wc_status_str(st), opcode,
		len);
	return false;
}

static bool expect_state(const char *what, struct ibv_qp *qp,
			 enum ibv_qp_state want)
{
	int st = vu_qp_state(qp);

	if (st == (int)want)
		return true;
	vu_diag("%s: QP state %s, expected %s", what, vu_qp_state_str(st),
		vu_qp_state_str(want));
	return false;
}

/* ---- rc.matrix: the matrix ----------------------------------------------- */

enum kind { K_SEND, K_SEND_IMM, K_WRITE, K_WRITE_IMM, K_READ };
static const char *const kind_name[] = {
	"SEND", "SEND_WITH_IMM", "RDMA_WRITE", "RDMA_WRITE_WITH_IMM",
	"RDMA_READ",
};

/*
 * One transfer of @len bytes from tx to rx (READ: tx reads rx's
 * source into its own target) and its checks.
 */
static bool transfer(struct ep *tx, struct ep *rx, enum kind k, uint32_t len,
		     int nsg, uint64_t seed)
{
	bool read = k == K_READ, imm = k == K_SEND_IMM || k == K_WRITE_IMM;
	struct ep *src_ep = read ? rx : tx, *dst_ep = read ? tx : rx;
	uint8_t *src = src_ep->buf.p + SRC_OFF, *dst = dst_ep->buf.p + DST_OFF;
	struct ibv_sge ssg[3], rsg[3];
	uint64_t id = seed;
	uint32_t immv = (uint32_t)seed * 2654435761u;
	struct ibv_wc wc;
	int n, ret = 0;
	bool ok = true;

	vu_fill_prng(src, len, seed);
	/* the target: complement of the data; guards: POISON */
	memset(dst - GUARD, POISON, GUARD);
	memset(dst + len, POISON, GUARD);
	for (size_t i = 0; i < len; i++)
		dst[i] = (uint8_t)~src[i];

	if (k == K_SEND || k == K_SEND_IMM) {
		n = sges(rx, DST_OFF, len + 16, nsg, rsg);
		ret = post_recv(rx, id, rsg, len ? n : 0);
		n = sges(tx, SRC_OFF, len, nsg, ssg);
		if (!ret)
			ret = post_send(tx, imm ? IBV_WR_SEND_WITH_IMM :
					IBV_WR_SEND, id, ssg, len ? n : 0, 0, 0,
					immv);
	} else if (k == K_READ) {
		n = sges(tx, DST_OFF, len, nsg, rsg);
		ret = post_send(tx, IBV_WR_RDMA_READ, id, rsg, len ? n : 0,
				(uintptr_t)src, rx->buf.mr->rkey, 0);
	} else {
		if (imm)
			ret = post_recv(rx, id, NULL, 0);
		n = sges(tx, SRC_OFF, len, nsg, ssg);
		if (!ret)
			ret = post_send(tx, imm ? IBV_WR_RDMA_WRITE_WITH_IMM :
					IBV_WR_RDMA_WRITE, id, ssg, len ? n : 0,
					(uintptr_t)dst, rx->buf.mr->rkey, immv);
	}
	if (ret) {
		vu_diag("posting: %s", strerror(ret));
		return false;
	}
	ok &= expect_wc("requester completion", tx->scq, id, IBV_WC_SUCCESS,
			read ? IBV_WC_RDMA_READ :
			k == K_SEND || k == K_SEND_IMM ? IBV_WC_SEND :
			IBV_WC_RDMA_WRITE, read ? (long long)len : -1, NULL);
	if (k != K_WRITE && k != K_READ) {
		ok &= expect_wc("responder completion", rx->rcq, id,
				IBV_WC_SUCCESS,
				k == K_WRITE_IMM ? IBV_WC_RECV_RDMA_WITH_IMM :
				IBV_WC_RECV, len, &wc);
		if (ok && (!!(wc.wc_flags & IBV_WC_WITH_IMM) != imm ||
			   (imm && ntohl(wc.imm_data) != immv) ||
			   wc.qp_num != rx->qp->qp_num ||
			   wc.src_qp != want_src_qp(rx, tx))) {
			char s[256];

			vu_wc_str(&wc, s, sizeof(s));
			vu_diag("responder completion fields: %s", s);
			ok = false;
		}
	}
	/* RC: the requester's completion means the data is there. */
	ok &= vu_bytes_eq("target", dst, src, len, 0);
	ok &= vu_bytes_all("guard before", dst - GUARD, POISON, GUARD, -GUARD);
	ok &= vu_bytes_all("guard after", dst + len, POISON, GUARD, len);
	return ok;
}

static bool atomic_case(struct ep *tx, struct ep *rx, uint64_t seed)
{
	uint64_t *target = (uint64_t *)(rx->buf.p + DST_OFF);
	uint64_t *local = (uint64_t *)(tx->buf.p + SRC_OFF);
	uint64_t v = seed * 0x9e3779b97f4a7c15ULL;
	uintptr_t raddr = (uintptr_t)target;
	bool ok = true;

	*target = v;
	/* compare & swap, equal: swaps */
	*local = 0;
	ok &= !post_atomic(tx, IBV_WR_ATOMIC_CMP_AND_SWP, 1, SRC_OFF, raddr,
			   rx->buf.mr->rkey, v, v + 1) &&
	      expect_wc("CMP_SWAP (equal)", tx->scq, 1, IBV_WC_SUCCESS,
			IBV_WC_COMP_SWAP, 8, NULL) &&
	      vu_bytes_eq("CMP_SWAP (equal) result", (uint8_t *)local,
			  (uint8_t *)&v, 8, 0);
	v++;
	ok &= vu_bytes_eq("CMP_SWAP (equal) target", (uint8_t *)target,
			  (uint8_t *)&v, 8, 0);
	/* compare & swap, not equal: no change */
	ok &= !post_atomic(tx, IBV_WR_ATOMIC_CMP_AND_SWP, 2, SRC_OFF, raddr,
			   rx->buf.mr->rkey, v + 7, 0) &&
	      expect_wc("CMP_SWAP (not equal)", tx->scq, 2, IBV_WC_SUCCESS,
			IBV_WC_COMP_SWAP, 8, NULL) &&
	      vu_bytes_eq("CMP_SWAP (not equal) result", (uint8_t *)local,
			  (uint8_t *)&v, 8, 0) &&
	      vu_bytes_eq("CMP_SWAP (not equal) target", (uint8_t *)target,
			  (uint8_t *)&v, 8, 0);
	/* fetch & add */
	ok &= !post_atomic(tx, IBV_WR_ATOMIC_FETCH_AND_ADD, 3, SRC_OFF, raddr,
			   rx->buf.mr->rkey, 0x100000001ULL, 0) &&
	      expect_wc("FETCH_ADD", tx->scq, 3, IBV_WC_SUCCESS,
			IBV_WC_FETCH_ADD, 8, NULL) &&
	      vu_bytes_eq("FETCH_ADD result", (uint8_t *)local,
			  (uint8_t *)&v, 8, 0);
	v += 0x100000001ULL;
	ok &= vu_bytes_eq("FETCH_ADD target", (uint8_t *)target,
			  (uint8_t *)&v, 8, 0);
	return ok;
}

static void case_matrix(void)
{
	uint32_t mtu = (uint32_t)vu_mtu_bytes(g_mtu);
	const uint32_t sizes[] = { 0, 1, 63, 64, mtu - 1, mtu, mtu + 1,
				   64 * 1024, MIB, opt.max_msg };
	struct ep a, b;
	int dir, k, nsg;
	size_t i;

	printf("# matrix (A %s, B %s, path MTU %u)\n", opt.a.name,
	       opt.b.name, mtu);
	if (!pair_open(&a, &b, ACCESS)) {
		vu_report(false, "matrix: setup");
		return;
	}
	for (dir = 0; dir < 2; dir++) {
		struct ep *tx = dir ? &b : &a, *rx = dir ? &a : &b;
		const char *d = dir ? "B->A" : "A->B";

		for (k = K_SEND; k <= K_READ; k++)
			for (nsg = 1; nsg <= 3; nsg += 2)
				for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
					if ((nsg == 3 && sizes[i] < 3) ||
					    (i && sizes[i] == sizes[i - 1]))
						continue;
					vu_report(transfer(tx, rx, (enum kind)k,
							   sizes[i], nsg,
							   0x1000 * (dir + 1) +
							   k * 64 + i),
						  "matrix %s: %s of %u bytes, %d SGE%s",
						  d, kind_name[k], sizes[i], nsg,
						  nsg > 1 ? "s" : "");
				}
		vu_report(atomic_case(tx, rx, dir + 1), "matrix %s: compare & "
			  "swap (equal, not equal) and fetch & add: results and "
			  "targets exact", d);
	}
	vu_report(expect_state("A", a.qp, IBV_QPS_RTS) &&
		  expect_state("B", b.qp, IBV_QPS_RTS),
		  "matrix: both QPs still in RTS");
	ep_close(&a);
	ep_close(&b);
}

/* ---- rc.errors: errors --------------------------------------------------- */

/*
 * Post @op from A (with the given remote address/key), then a SEND that
 * must be flushed; A's first WR must complete with @want, A and B end
 * in the given states.
 */
static void error_case(const char *name, int b_access, enum ibv_wr_opcode op,
		       bool bad_lkey, bool b_recv_len16, bool b_recv_badkey,
		       long long raddr_off, bool bad_rkey,
		       enum ibv_wc_status want, enum ibv_wc_status b_want,
		       enum ibv_qp_state b_state)
{
	struct ibv_sge sg, rsg;
	struct ep a, b;
	bool ok = true;
	int ret = 0;

	if (!pair_open(&a, &b, b_access)) {
		vu_report(false, "errors: %s: setup", name);
		return;
	}
	if (b_recv_len16 || b_recv_badkey) {
		rsg = (struct ibv_sge){ (uintptr_t)(b.buf.p + DST_OFF),
					b_recv_len16 ? 16 : 64,
					b_recv_badkey ? b.buf.mr->lkey ^ 0x80 :
							b.buf.mr->lkey };
		ret = post_recv(&b, 0xb1, &rsg, 1);
	}
	sg = (struct ibv_sge){ (uintptr_t)(a.buf.p + SRC_OFF), 64,
			       bad_lkey ? a.buf.mr->lkey ^ 0x80 :
					  a.buf.mr->lkey };
	if (!ret) {
		if (op == IBV_WR_ATOMIC_FETCH_AND_ADD)
			ret = post_atomic(&a, op, 0xa1, SRC_OFF,
					  (uintptr_t)(b.buf.p + DST_OFF) +
					  raddr_off, b.buf.mr->rkey, 1, 0);
		else
			ret = post_send(&a, op, 0xa1, &sg, 1,
					(uintptr_t)(b.buf.p + DST_OFF) +
					raddr_off,
					bad_rkey ? b.buf.mr->rkey ^ 0x80 :
						   b.buf.mr->rkey, 0);
	}
	sg.lkey = a.buf.mr->lkey;
	if (ret == EINVAL && a_is_rxe && op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		/* rdma_rxe refuses a misaligned atomic when it is posted */
		printf("# info: %s refuses it at ibv_post_send (EINVAL)\n",
		       opt.a.name);
		vu_report(true, "errors: %s: refused by %s's provider", name,
			  opt.a.name);
		goto out;
	}
	if (!ret)
		ret = post_send(&a, IBV_WR_SEND, 0xa2, &sg, 1, 0, 0, 0);
	if (ret) {
		vu_diag("posting: %s", strerror(ret));
		ok = false;
	}
	/* rdma_rxe reports a bad local lkey as a local QP operation error */
	if (a_is_rxe && want == IBV_WC_LOC_PROT_ERR)
		want = IBV_WC_LOC_QP_OP_ERR;
	/*
	 * An rdma_rxe responder that cannot place a SEND in its receive WR
	 * (too small, or a bad lkey) NAKs it as a remote operation error
	 * and completes the receive WR as a local QP operation error.
	 */
	if (b_is_rxe && (b_recv_len16 || b_recv_badkey)) {
		printf("# info: %s: rdma_rxe's responder answers with a "
		       "remote operation error NAK\n", name);
		want = IBV_WC_REM_OP_ERR;
		b_want = IBV_WC_LOC_QP_OP_ERR;
	}
	if (ok && a_is_rxe && want == IBV_WC_LOC_QP_OP_ERR) {
		/* rdma_rxe of 6.12 flushes that WR itself */
		struct ibv_wc wc;

		ok = vu_poll_cq(a.scq, &wc, 1, vu_now() + opt.timeout) == 1 &&
		     wc.wr_id == 0xa1 && (wc.status == want ||
					  wc.status == IBV_WC_WR_FLUSH_ERR);
		if (!ok)
			vu_diag("A's WR: no completion 0xa1 with %s or %s",
				ibv_wc_status_str(want),
				ibv_wc_status_str(IBV_WC_WR_FLUSH_ERR));
		else if (wc.status != want)
			printf("# info: %s completes the WR with the bad lkey "
			       "as flushed\n", opt.a.name);
	} else {
		ok = ok && expect_wc("A's WR", a.scq, 0xa1, want, -1, -1,
				     NULL);
	}
	ok = ok && expect_wc("A's WR behind it", a.scq, 0xa2,
			     IBV_WC_WR_FLUSH_ERR, -1, -1, NULL);
	if (b_recv_len16 || b_recv_badkey)
		ok = ok && expect_wc("B's receive WR", b.rcq, 0xb1, b_want, -1,
				     -1, NULL);
	ok = ok && expect_state("A", a.qp, IBV_QPS_ERR);
	/* The responder changes state after sending its NAK. */
	if (ok && b_state == IBV_QPS_ERR) {
		double end = vu_now() + 2;

		while (vu_qp_state(b.qp) != IBV_QPS_ERR && vu_now() < end)
			vu_nap_us(1000);
	}
	ok = ok && expect_state("B", b.qp, b_state);
	vu_report(ok, "errors: %s: A %s, the next WR flushed, A in ERR, B in "
		  "%s", name, ibv_wc_status_str(want),
		  vu_qp_state_str(b_state));
out:
	ep_close(&a);
	ep_close(&b);
}

static void case_errors(void)
{
	printf("# errors\n");
	error_case("RDMA WRITE with a bad R_Key", ACCESS, IBV_WR_RDMA_WRITE,
		   false, false, false, 0, true, IBV_WC_REM_ACCESS_ERR, 0,
		   IBV_QPS_ERR);
	error_case("RDMA READ beyond the MR", ACCESS, IBV_WR_RDMA_READ, false,
		   false, false, MAX_MSG + GUARD, false,
		   IBV_WC_REM_ACCESS_ERR, 0, IBV_QPS_ERR);
	error_case("RDMA WRITE to a QP without REMOTE_WRITE",
		   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ,
		   IBV_WR_RDMA_WRITE, false, false, false, 0, false,
		   IBV_WC_REM_ACCESS_ERR, 0, IBV_QPS_ERR);
	error_case("SEND of 64 bytes into a 16-byte receive WR", ACCESS,
		   IBV_WR_SEND, false, true, false, 0, false,
		   IBV_WC_REM_INV_REQ_ERR, IBV_WC_LOC_LEN_ERR, IBV_QPS_ERR);
	error_case("fetch & add at a misaligned address", ACCESS,
		   IBV_WR_ATOMIC_FETCH_AND_ADD, false, false, false, 4, false,
		   IBV_WC_REM_INV_REQ_ERR, 0, IBV_QPS_ERR);
	error_case("SEND into a receive WR with a bad lkey", ACCESS,
		   IBV_WR_SEND, false, false, true, 0, false,
		   IBV_WC_REM_OP_ERR, IBV_WC_LOC_PROT_ERR, IBV_QPS_ERR);
	error_case("SEND from a bad lkey", ACCESS, IBV_WR_SEND, true, false,
		   false, 0, false, IBV_WC_LOC_PROT_ERR, 0, IBV_QPS_RTS);
}

/*
 * A READ into local memory registered without LOCAL_WRITE; with @behind,
 * posted behind a 1 MiB WRITE still waiting for its ACK, so that its
 * error completion waits for the WRITE's.
 */
static void case_read_local_prot(bool behind)
{
	const char *what = behind ? " behind a 1 MiB WRITE" : "";
	struct ibv_sge sg, wsg;
	struct ibv_mr *ro;
	struct ep a, b;
	bool ok;

	if (!pair_open(&a, &b, ACCESS)) {
		vu_report(false, "errors: READ into read-only memory%s: setup",
			  what);
		return;
	}
	ro = ibv_reg_mr(opt.a.pd, a.buf.p + DST_OFF, 4096, 0);
	sg = (struct ibv_sge){ (uintptr_t)(a.buf.p + DST_OFF), 64,
			       ro ? ro->lkey : 0 };
	wsg = (struct ibv_sge){ (uintptr_t)(a.buf.p + SRC_OFF), 1 << 20,
				a.buf.mr->lkey };
	ok = ro &&
	     (!behind || !post_send(&a, IBV_WR_RDMA_WRITE, 0xa4, &wsg, 1,
				    (uintptr_t)(b.buf.p + DST_OFF),
				    b.buf.mr->rkey, 0)) &&
	     !post_send(&a, IBV_WR_RDMA_READ, 0xa3, &sg, 1,
			(uintptr_t)(b.buf.p + SRC_OFF), b.buf.mr->rkey, 0) &&
	     (!behind || expect_wc("A's WRITE", a.scq, 0xa4, IBV_WC_SUCCESS,
				   IBV_WC_RDMA_WRITE, -1, NULL)) &&
	     expect_wc("A's READ", a.scq, 0xa3, IBV_WC_LOC_PROT_ERR, -1, -1,
		       NULL) &&
	     expect_state("A", a.qp, IBV_QPS_ERR) &&
	     expect_state("B", b.qp, IBV_QPS_RTS);
	vu_report(ok, "errors: RDMA READ into memory without LOCAL_WRITE%s: "
		  "%sA IBV_WC_LOC_PROT_ERR, A in ERR, B in RTS", what,
		  behind ? "the WRITE completes, then " : "");
	if (ro)
		ibv_dereg_mr(ro);
	ep_close(&a);
	ep_close(&b);
}

/* ---- rc.rnr: RNR --------------------------------------------------------- */

static void case_rnr(void)
{
	long long n0, n1;
	struct ibv_sge sg;
	struct ep a, b;
	bool ok;

	printf("# RNR\n");
	vu_rc.rnr_retry = 7;
	vu_rc.min_rnr_timer = 4;	/* 0.04 ms: many NAKs */
	if (!pair_open(&a, &b, ACCESS)) {
		vu_report(false, "rnr: setup");
		goto out;
	}
	n0 = a_is_rxe ? 0 : vu_read_counter(opt.a.name, "rc_rnr_naks_rcvd");
	sg = (struct ibv_sge){ (uintptr_t)(a.buf.p + SRC_OFF), 100,
			       a.buf.mr->lkey };
	vu_fill_prng(a.buf.p + SRC_OFF, 100, 77);
	ok = !post_send(&a, IBV_WR_SEND, 0x31, &sg, 1, 0, 0, 0) &&
	     vu_cq_stays_empty(a.scq, 500, "A's send CQ while B has no "
			       "receive WR");
	sg = (struct ibv_sge){ (uintptr_t)(b.buf.p + DST_OFF), 128,
			       b.buf.mr->lkey };
	ok = ok && !post_recv(&b, 0x32, &sg, 1) &&
	     expect_wc("A's SEND", a.scq, 0x31, IBV_WC_SUCCESS, IBV_WC_SEND,
		       -1, NULL) &&
	     expect_wc("B's receive", b.rcq, 0x32, IBV_WC_SUCCESS,
		       IBV_WC_RECV, 100, NULL) &&
	     vu_bytes_eq("received", b.buf.p + DST_OFF, a.buf.p + SRC_OFF,
			 100, 0);
	vu_nap_us(100 * 1000);
	n1 = a_is_rxe ? 1 : vu_read_counter(opt.a.name, "rc_rnr_naks_rcvd");
	if (ok && n1 <= n0) {
		vu_diag("rc_rnr_naks_rcvd of %s did not move (%lld -> %lld)",
			opt.a.name, n0, n1);
		ok = false;
	}
	vu_report(ok, "rnr: rnr_retry 7 waits (RNR NAKs) until the receive WR "
		  "is posted 500 ms later, then the SEND completes");
	ep_close(&a);
	ep_close(&b);

	vu_rc.rnr_retry = 1;
	if (!pair_open(&a, &b, ACCESS)) {
		vu_report(false, "rnr: setup");
		goto out;
	}
	sg = (struct ibv_sge){ (uintptr_t)(a.buf.p + SRC_OFF), 100,
			       a.buf.mr->lkey };
	ok = !post_send(&a, IBV_WR_SEND, 0x33, &sg, 1, 0, 0, 0) &&
	     expect_wc("A's SEND", a.scq, 0x33, IBV_WC_RNR_RETRY_EXC_ERR, -1,
		       -1, NULL) &&
	     expect_state("A", a.qp, IBV_QPS_ERR);
	vu_report(ok, "rnr: rnr_retry 1 and no receive WR: "
		  "IBV_WC_RNR_RETRY_EXC_ERR, A in ERR");
	ep_close(&a);
	ep_close(&b);
out:
	vu_rc.rnr_retry = 7;
	vu_rc.min_rnr_timer = 12;
}

/* ---- rc.retry: retry ----------------------------------------------------- */

static void case_retry(void)
{
	struct ibv_sge sg;
	struct ep a, b;
	double t0;
	bool ok;

	printf("# retry\n");
	vu_rc.timeout = 10;	/* 4 ms, rounded up to 50 ms by snaa */
	vu_rc.retry_cnt = 2;
	if (!pair_open(&a, &b, ACCESS)) {
		vu_report(false, "retry: setup");
		goto out;
	}
	sg = (struct ibv_sge){ (uintptr_t)(a.buf.p + SRC_OFF), 64,
			       a.buf.mr->lkey };
	t0 = vu_now();
	ok = !vu_qp_modify_state(b.qp, IBV_QPS_ERR) &&
	     !post_send(&a, IBV_WR_RDMA_WRITE, 0x41, &sg, 1,
			(uintptr_t)(b.buf.p + DST_OFF), b.buf.mr->rkey, 0) &&
	     !post_send(&a, IBV_WR_SEND, 0x42, &sg, 1, 0, 0, 0) &&
	     expect_wc("A's WRITE", a.scq, 0x41, IBV_WC_RETRY_EXC_ERR, -1, -1,
		       NULL) &&
	     expect_wc("A's SEND", a.scq, 0x42, IBV_WC_WR_FLUSH_ERR, -1, -1,
		       NULL) &&
	     expect_state("A", a.qp, IBV_QPS_ERR);
	printf("# info: IBV_WC_RETRY_EXC_ERR after %.2f s\n", vu_now() - t0);
	vu_report(ok, "retry: the peer drops everything: 2 retries, then "
		  "IBV_WC_RETRY_EXC_ERR, the next WR flushed, A in ERR");
	ep_close(&a);
	ep_close(&b);
out:
	vu_rc.timeout = opt.ack_timeout;
	vu_rc.retry_cnt = 7;
}

/* ---- rc.rd_atomic: READ/atomic limits ------------------------------------ */

static void case_rd_atomic(void)
{
	struct ibv_sge sg;
	struct ep a, b;
	bool ok = true;
	int i, errs = 0, flushed = 0, good = 0;

	printf("# READ/atomic limits\n");
	vu_rc.max_rd_atomic = 1;
	if (!pair_open(&a, &b, ACCESS)) {
		vu_report(false, "rd_atomic: setup");
		goto out;
	}
	vu_fill_prng(b.buf.p + SRC_OFF, 8 * 4096, 55);
	for (i = 0; i < 8 && ok; i++) {
		sg = (struct ibv_sge){ (uintptr_t)(a.buf.p + DST_OFF + i * 4096),
				       4096, a.buf.mr->lkey };
		ok = !post_send(&a, IBV_WR_RDMA_READ, 0x50 + i, &sg, 1,
				(uintptr_t)(b.buf.p + SRC_OFF + i * 4096),
				b.buf.mr->rkey, 0);
	}
	for (i = 0; i < 8 && ok; i++)
		ok = expect_wc("READ", a.scq, 0x50 + i, IBV_WC_SUCCESS,
			       IBV_WC_RDMA_READ, 4096, NULL);
	ok = ok && vu_bytes_eq("READs", a.buf.p + DST_OFF, b.buf.p + SRC_OFF,
			       8 * 4096, 0);
	vu_report(ok, "rd_atomic: max_rd_atomic 1: 8 READs posted at once "
		  "complete one after the other, in order, data exact");
	ep_close(&a);
	ep_close(&b);

	vu_rc.max_rd_atomic = 4;
	vu_rc.max_dest_rd_atomic = 1;
	if (a_is_rxe) {
		/*
		 * A requester that breaks the limit it agreed to: what
		 * rdma_rxe then does (it asks again early, and its 6.12
		 * version waits on) is not snaa's to test; snaa's own
		 * requester does it in the runs with A an snaa device.
		 */
		vu_report(true, "rd_atomic: 4 READs towards a responder with "
			  "max_dest_rd_atomic 1 # SKIP rdma_rxe as the "
			  "requester breaking the limit");
		goto out;
	}
	if (!pair_open(&a, &b, ACCESS)) {
		vu_report(false, "rd_atomic: setup");
		goto out;
	}
	vu_fill_prng(b.buf.p + SRC_OFF, 4 * MIB, 56);
	ok = true;
	for (i = 0; i < 4 && ok; i++) {
		sg = (struct ibv_sge){ (uintptr_t)(a.buf.p + DST_OFF + i * MIB),
				       MIB, a.buf.mr->lkey };
		ok = !post_send(&a, IBV_WR_RDMA_READ, 0x60 + i, &sg, 1,
				(uintptr_t)(b.buf.p + SRC_OFF + i * MIB),
				b.buf.mr->rkey, 0);
	}
	for (i = 0; i < 4 && ok; i++) {
		struct ibv_wc wc;

		if (vu_poll_cq(a.scq, &wc, 1, vu_now() + opt.timeout) != 1) {
			vu_diag("READ %d: no completion", i);
			ok = false;
			break;
		}
		if (wc.wr_id != (uint64_t)0x60 + i) {
			vu_diag("completion %d for WR 0x%" PRIx64, i, wc.wr_id);
			ok = false;
		}
		/* READs before the NAKed one succeed, the rest is flushed */
		if (wc.status == IBV_WC_SUCCESS && !errs)
			good++;
		else if (wc.status == IBV_WC_REM_INV_REQ_ERR && !errs)
			errs++;
		else if (wc.status == IBV_WC_WR_FLUSH_ERR && errs)
			flushed++;
		else {
			vu_diag("READ %d: %s after %d succeeded, %d errors", i,
				ibv_wc_status_str(wc.status), good, errs);
			ok = false;
		}
	}
	if (ok && b_is_rxe && good == 4) {
		/* rdma_rxe keeps as many READs as come, whatever it agreed */
		printf("# info: %s does not enforce max_dest_rd_atomic: all 4 "
		       "READs succeeded\n", opt.b.name);
	} else if (ok && (errs != 1 || good < 1 || good + flushed != 3)) {
		vu_diag("%d succeeded, %d IBV_WC_REM_INV_REQ_ERR, %d flushed",
			good, errs, flushed);
		ok = false;
	}
	ok = ok && vu_bytes_eq("the READs that succeeded", a.buf.p + DST_OFF,
			       b.buf.p + SRC_OFF, (size_t)good * MIB, 0);
	if (!ok)
		rc_counters_diag();
	vu_report(ok, "rd_atomic: 4 READs of 1 MiB outstanding towards a "
		  "responder with max_dest_rd_atomic 1: the first completes, "
		  "then IBV_WC_REM_INV_REQ_ERR, the rest flushed");
	ep_close(&a);
	ep_close(&b);
out:
	vu_rc.max_rd_atomic = 16;
	vu_rc.max_dest_rd_atomic = 16;
}

/*
 * IBV_SEND_FENCE: a SEND from the buffer an RDMA READ fills waits for the
 * READ's response, so it carries the bytes read, not what was there.
 */
static void case_fence(void)
{
	struct ibv_sge rsg, ssg, rcv;
	struct ibv_send_wr wr = { 0 }, *bad;
	struct ep a, b;
	bool ok;

	if (!pair_open(&a, &b, ACCESS)) {
		vu_report(false, "fence: setup");
		return;
	}
	vu_fill_prng(b.buf.p + SRC_OFF, MIB, 57);
	rsg = (struct ibv_sge){ (uintptr_t)(a.buf.p + DST_OFF), MIB,
				a.buf.mr->lkey };
	ssg = rsg;
	rcv = (struct ibv_sge){ (uintptr_t)(b.buf.p + DST_OFF), MIB,
				b.buf.mr->lkey };
	ok = !post_recv(&b, 0x70, &rcv, 1) &&
	     !post_send(&a, IBV_WR_RDMA_READ, 0x71, &rsg, 1,
			(uintptr_t)(b.buf.p + SRC_OFF), b.buf.mr->rkey, 0);
	wr = (struct ibv_send_wr){
		.wr_id = 0x72, .sg_list = &ssg, .num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED | IBV_SEND_FENCE,
	};
	ok = ok && !ibv_post_send(a.qp, &wr, &bad) &&
	     expect_wc("READ", a.scq, 0x71, IBV_WC_SUCCESS, IBV_WC_RDMA_READ,
		       MIB, NULL) &&
	     expect_wc("fenced SEND", a.scq, 0x72, IBV_WC_SUCCESS,
		       IBV_WC_SEND, MIB, NULL) &&
	     expect_wc("receive", b.rcq, 0x70, IBV_WC_SUCCESS, IBV_WC_RECV,
		       MIB, NULL) &&
	     vu_bytes_eq("received", b.buf.p + DST_OFF, b.buf.p + SRC_OFF,
			 MIB, 0);
	vu_report(ok, "fence: a SEND with IBV_SEND_FENCE from the buffer a "
		  "1 MiB RDMA READ fills carries the bytes read");
	ep_close(&a);
	ep_close(&b);
}

/* ---- rc.atomics: atomics under contention -------------------------------- */

#define ATOMIC_N	4000

static void *cpu_adder(void *arg)
{
	uint64_t *counter = arg;
	int i;

	for (i = 0; i < ATOMIC_N; i++)
		__atomic_fetch_add(counter, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

/*
 * Fetch & adds posted as streaming applications post them: unsignaled
 * but for every ATOMIC_SIG-th, several groups outstanding (on snaa
 * loopback this is what hands the send queue to another CPU).  Each add
 * of 1 must see a distinct value, so the results are exactly 0 ..
 * ATOMIC_N - 1, and the signaled completions come once each, in order.
 */
#define ATOMIC_SIG	16

static void atomics_unsignaled(void)
{
	uint64_t *counter, *res;
	struct ibv_wc wc;
	struct ep a, b;
	int posted = 0, done = 0, i, n;
	bool ok = true;

	if (!pair_open(&a, &b, ACCESS)) {
		vu_report(false, "atomics unsignaled: setup");
		return;
	}
	counter = (uint64_t *)(b.buf.p + DST_OFF);
	*counter = 0;
	res = (uint64_t *)(a.buf.p + SRC_OFF);
	memset(res, 0xff, ATOMIC_N * 8);
	while (done < ATOMIC_N && ok) {
		while (posted < ATOMIC_N &&
		       posted - done < QP_WR - ATOMIC_SIG) {
			bool sig = posted % ATOMIC_SIG == ATOMIC_SIG - 1 ||
				   posted == ATOMIC_N - 1;

			ok = !post_atomic_flags(&a,
						IBV_WR_ATOMIC_FETCH_AND_ADD,
						posted, SRC_OFF +
						(size_t)posted * 8,
						(uintptr_t)counter,
						b.buf.mr->rkey, 1, 0,
						sig ? IBV_SEND_SIGNALED : 0);
			if (!ok)
				break;
			posted++;
		}
		n = ok ? vu_poll_cq(a.scq, &wc, 1, vu_now() + opt.timeout) : 0;
		if (n != 1 || wc.status != IBV_WC_SUCCESS ||
		    wc.wr_id != (uint64_t)(done + ATOMIC_SIG - 1 < ATOMIC_N ?
					   done + ATOMIC_SIG - 1 :
					   ATOMIC_N - 1)) {
			vu_diag("after %d fetch & adds: %s, wr_id %llu", done,
				n == 1 ? ibv_wc_status_str(wc.status) :
					 "no completion",
				n == 1 ? (unsigned long long)wc.wr_id : 0ULL);
			ok = false;
			break;
		}
		done = (int)wc.wr_id + 1;
	}
	ok = ok && vu_cq_stays_empty(a.scq, 100, "A's send CQ") &&
	     vu_bytes_eq("counter", (uint8_t *)counter,
			 (uint8_t *)&(uint64_t){ ATOMIC_N }, 8, 0);
	if (ok) {
		qsort(res, ATOMIC_N, 8, cmp_u64);
		for (i = 0; i < ATOMIC_N && ok; i++)
			if (res[i] != (uint64_t)i) {
				vu_diag("sorted result %d is %" PRIu64, i,
					res[i]);
				ok = false;
			}
	}
	vu_report(ok, "atomics unsignaled: %d fetch & adds, every %dth "
		  "signaled, up to %d outstanding: the counter ends at %d, "
		  "the results are 0 .. %d, %d completions in order",
		  ATOMIC_N, ATOMIC_SIG, QP_WR - ATOMIC_SIG, ATOMIC_N,
		  ATOMIC_N - 1, ATOMIC_N / ATOMIC_SIG);
	ep_close(&a);
	ep_close(&b);
}

static void case_atomics(void)
{
	uint64_t *counter, *res;
	struct ibv_wc wc[16];
	struct ep a, b;
	pthread_t t;
	int posted = 0, done = 0, i, n;
	bool ok = true;

	printf("# atomics under contention\n");
	if (!pair_open(&a, &b, ACCESS)) {
		vu_report(false, "atomics: setup");
		return;
	}
	counter = (uint64_t *)(b.buf.p + DST_OFF);
	*counter = 0;
	res = (uint64_t *)(a.buf.p + SRC_OFF);	/* one result per WR */
	if (pthread_create(&t, NULL, cpu_adder, counter)) {
		vu_report(false, "atomics: thread");
		goto out;
	}
	while (done < ATOMIC_N && ok) {
		while (posted < ATOMIC_N && posted - done < 16) {
			ok = !post_atomic(&a, IBV_WR_ATOMIC_FETCH_AND_ADD,
					  posted, SRC_OFF + (size_t)posted * 8,
					  (uintptr_t)counter, b.buf.mr->rkey,
					  1, 0);
			if (!ok)
				break;
			posted++;
		}
		n = vu_poll_cq(a.scq, wc, 1, vu_now() + opt.timeout);
		if (n != 1 || wc[0].status != IBV_WC_SUCCESS) {
			vu_diag("FETCH_ADD %d: %s", done,
				n == 1 ? ibv_wc_status_str(wc[0].status) :
					 "no completion");
			ok = false;
			break;
		}
		done++;
	}
	pthread_join(t, NULL);
	if (ok && b_is_rxe && *counter >= ATOMIC_N && *counter < 2 * ATOMIC_N) {
		/*
		 * rdma_rxe applies an atomic as a read and a write under a
		 * lock of its own, which the CPU's atomics do not take: a
		 * CPU add between the two is lost.  Its remote atomics are
		 * still atomic among themselves (checked below).
		 */
		printf("# info: %s lost %llu of the CPU's adds to its remote "
		       "atomics\n", opt.b.name,
		       (unsigned long long)(2 * ATOMIC_N - *counter));
	} else {
		ok = ok && vu_bytes_eq("counter", (uint8_t *)counter,
				       (uint8_t *)&(uint64_t){ 2 * ATOMIC_N },
				       8, 0);
	}
	if (ok) {
		qsort(res, ATOMIC_N, 8, cmp_u64);
		for (i = 1; i < ATOMIC_N; i++)
			if (res[i] == res[i - 1]) {
				vu_diag("two fetch & adds saw %" PRIu64, res[i]);
				ok = false;
				break;
			}
	}
	if (b_is_rxe)
		vu_report(ok, "atomics: %d remote fetch & adds and %d CPU "
			  "atomic adds on one counter: every remote result "
			  "distinct (rdma_rxe may lose CPU adds)", ATOMIC_N,
			  ATOMIC_N);
	else
		vu_report(ok, "atomics: %d remote fetch & adds and %d CPU "
			  "atomic adds on one counter: it ends at %d, every "
			  "remote result distinct",
			  ATOMIC_N, ATOMIC_N, 2 * ATOMIC_N);
out:
	ep_close(&a);
	ep_close(&b);
}

/* ---- rc.stream: stream --------------------------------------------------- */

#define SLOTS		16
#define SLOT		MIB

struct msg {
	enum kind k;
	uint32_t len;
	uint64_t seed;
};

static struct msg stream_msg(uint64_t seq)
{
	uint64_t s = seq * 0x5851f42d4c957f2dULL + 17;
	uint64_t r = vu_splitmix64(&s);
	struct msg m;

	m.k = (enum kind)(r % 3 == 0 ? K_SEND : r % 3 == 1 ? K_WRITE_IMM :
			  K_READ);
	m.len = (uint32_t)(vu_splitmix64(&s) % SLOT) + 1;
	m.seed = 0xa110c000000000ULL + seq;
	return m;
}

/* The counters a netem run is judged by (-1: not an snaa device). */
struct netem_cnt {
	long long a_retx, a_timeouts, b_dup, a_icrc, b_icrc;
};

static long long snaa_counter(const struct vu_dev *d, bool is_rxe,
			      const char *name)
{
	return is_rxe ? -1 : vu_read_counter(d->name, name);
}

static void netem_cnt_read(struct netem_cnt *c)
{
	c->a_retx = snaa_counter(&opt.a, a_is_rxe, "rc_retransmits");
	c->a_timeouts = snaa_counter(&opt.a, a_is_rxe, "rc_timeouts");
	c->b_dup = snaa_counter(&opt.b, b_is_rxe, "rc_duplicate_requests");
	c->a_icrc = snaa_counter(&opt.a, a_is_rxe, "drop_bad_icrc");
	c->b_icrc = snaa_counter(&opt.b, b_is_rxe, "drop_bad_icrc");
}

/*
 * After a clean stream nothing was retransmitted; after one over a link
 * impaired as --netem-expect says, the matching counter moved.
 */
static void netem_cnt_check(const struct netem_cnt *c0,
			    const struct netem_cnt *c1)
{
	long long retx = c1->a_retx - c0->a_retx;
	long long dup = c1->b_dup - c0->b_dup;
	long long icrc = c1->a_icrc - c0->a_icrc + c1->b_icrc - c0->b_icrc;
	const char *e = opt.netem_expect;

	if (a_is_rxe || b_is_rxe)
		return;
	printf("# info: %s rc_retransmits +%lld, rc_timeouts +%lld; %s "
	       "rc_duplicate_requests +%lld; drop_bad_icrc +%lld\n",
	       opt.a.name, retx, c1->a_timeouts - c0->a_timeouts, opt.b.name,
	       dup, icrc);
	/*
	 * A clean veth link still reorders: each CPU's backlog delivers
	 * what was sent from that CPU, and a QP's packets leave from the
	 * softirq and from the work item, on either CPU.  An ACK that
	 * overtakes the last READ responses is an implicit NAK (IBA
	 * 9.7.5.1.3) and legitimately retransmits: no assertion on a clean
	 * link but the absence of ICRC errors.
	 */
	if (!e)
		vu_report(icrc == 0, "stream over a clean link: no ICRC error");
	else if (!strcmp(e, "retransmits"))
		vu_report(retx > 0, "stream over a lossy link: A retransmitted "
			  "(rc_retransmits +%lld)", retx);
	else if (!strcmp(e, "duplicates"))
		vu_report(dup > 0, "stream over a duplicating link: B counted "
			  "duplicate requests (+%lld)", dup);
	else if (!strcmp(e, "icrc"))
		vu_report(icrc > 0, "stream over a corrupting link: bad ICRCs "
			  "dropped and counted (+%lld)", icrc);
}

static void case_stream(void)
{
	uint64_t posted = 0, sdone = 0, rdone = 0, bytes = 0;
	uint64_t rposted = 0, nmsg = 0;
	struct netem_cnt c0, c1;
	struct ep a, b;
	bool ok = true, lost = false;
	double t0 = vu_now();

	printf("# stream of %llu bytes\n", opt.stream);
	if (!pair_open(&a, &b, ACCESS)) {
		vu_report(false, "stream: setup");
		return;
	}
	netem_cnt_read(&c0);
	/* how many messages: the prefix of the sequence that fills BYTES */
	for (nmsg = 0; bytes < opt.stream; nmsg++)
		bytes += stream_msg(nmsg).len;
	printf("# streaming: %" PRIu64 " messages\n", nmsg);
	fflush(stdout);

	while (ok && (sdone < nmsg || rdone < rposted)) {
		struct ibv_wc wc;
		int n;

		/* keep SLOTS / 2 messages outstanding */
		while (ok && posted < nmsg && posted - sdone < SLOTS / 2) {
			struct msg m = stream_msg(posted);
			size_t slot = (posted % SLOTS) * SLOT;
			struct ibv_sge sg;
			int ret;

			if (m.k == K_READ) {
				vu_fill_prng(b.buf.p + SRC_OFF + slot, m.len,
					     m.seed);
				sg = (struct ibv_sge){
					(uintptr_t)(a.buf.p + DST_OFF + slot),
					m.len, a.buf.mr->lkey };
				ret = post_send(&a, IBV_WR_RDMA_READ, posted,
						&sg, 1,
						(uintptr_t)(b.buf.p + SRC_OFF +
							    slot),
						b.buf.mr->rkey, 0);
			} else {
				vu_fill_prng(a.buf.p + SRC_OFF + slot, m.len,
					     m.seed);
				sg = (struct ibv_sge){
					(uintptr_t)(b.buf.p + DST_OFF + slot),
					m.len, b.buf.mr->lkey };
				ret = post_recv(&b, posted, &sg,
						m.k == K_SEND ? 1 : 0);
				rposted++;
				sg = (struct ibv_sge){
					(uintptr_t)(a.buf.p + SRC_OFF + slot),
					m.len, a.buf.mr->lkey };
				if (!ret)
					ret = post_send(&a, m.k == K_SEND ?
						IBV_WR_SEND :
						IBV_WR_RDMA_WRITE_WITH_IMM,
						posted, &sg, 1,
						(uintptr_t)(b.buf.p + DST_OFF +
							    slot),
						b.buf.mr->rkey,
						(uint32_t)posted);
			}
			if (ret && opt.peer_loss) {
				/* B is gone: post nothing more */
				nmsg = posted;
				break;
			}
			if (ret) {
				vu_diag("posting message %" PRIu64 ": %s",
					posted, strerror(ret));
				ok = false;
			}
			posted++;
		}
		n = vu_poll_cq(a.scq, &wc, 1, vu_now() + opt.timeout);
		if (n != 1) {
			vu_diag("message %" PRIu64 ": no completion within "
				"%.0f s", sdone, opt.timeout);
			ok = false;
			break;
		}
		if (wc.status != IBV_WC_SUCCESS) {
			lost = opt.peer_loss && wc.wr_id == sdone &&
			       wc.status == IBV_WC_RETRY_EXC_ERR;
			if (!lost)
				vu_diag("message %" PRIu64 ": %s", wc.wr_id,
					ibv_wc_status_str(wc.status));
			ok = false;
			break;
		}
		if (wc.wr_id != sdone) {
			vu_diag("completion for message %" PRIu64 ", expected "
				"%" PRIu64, wc.wr_id, sdone);
			ok = false;
			break;
		}
		{
			struct msg m = stream_msg(sdone);
			size_t slot = (sdone % SLOTS) * SLOT;

			if (m.k == K_READ) {
				uint8_t *want = malloc(m.len);

				vu_fill_prng(want, m.len, m.seed);
				ok = wc.byte_len == m.len &&
				     vu_bytes_eq("READ", a.buf.p + DST_OFF + slot,
						 want, m.len, 0);
				free(want);
			} else {
				/* its receive completion: the next one */
				struct ibv_wc rwc;

				ok = expect_wc("receive", b.rcq, sdone,
					       IBV_WC_SUCCESS,
					       m.k == K_SEND ? IBV_WC_RECV :
					       IBV_WC_RECV_RDMA_WITH_IMM,
					       m.len, &rwc) &&
				     vu_bytes_eq("received",
						 b.buf.p + DST_OFF + slot,
						 a.buf.p + SRC_OFF + slot,
						 m.len, 0);
				rdone++;
			}
			if (!ok)
				vu_diag("message %" PRIu64 " (%s, %u bytes)",
					sdone, kind_name[m.k], m.len);
		}
		sdone++;
	}
	if (opt.peer_loss) {
		struct ibv_wc wc;
		uint64_t flushed = 0;

		while (lost && vu_poll_cq(a.scq, &wc, 1, vu_now() + 5) == 1)
			flushed += wc.status == IBV_WC_WR_FLUSH_ERR;
		if (!lost) {
			struct ibv_qp_attr qa;
			struct ibv_qp_init_attr qi;

			if (!ibv_query_qp(a.qp, &qa, IBV_QP_STATE, &qi))
				vu_diag("A's QP is in %s",
					vu_qp_state_str(qa.qp_state));
			rc_counters_diag();
		}
		vu_report(lost && flushed == posted - sdone - 1,
			  "stream: after the peer's device went away: "
			  "IBV_WC_RETRY_EXC_ERR after %" PRIu64 " messages, "
			  "the %" PRIu64 " WRs behind it flushed", sdone,
			  flushed);
	} else {
		struct ibv_wc wc;
		bool extra;

		vu_report(ok && sdone == nmsg, "stream: %" PRIu64 " messages, "
			  "%llu bytes A->B (SEND, WRITE WITH IMM, READ), each "
			  "completed once, in order, every byte exact "
			  "(%.1f s)", sdone, opt.stream, vu_now() - t0);
		extra = vu_poll_cq(a.scq, &wc, 1, vu_now() + 0.5) != 0 ||
			vu_poll_cq(b.rcq, &wc, 1, vu_now() + 0.1) != 0 ||
			vu_poll_cq(a.rcq, &wc, 1, vu_now()) != 0 ||
			vu_poll_cq(b.scq, &wc, 1, vu_now()) != 0;
		vu_report(!extra, "stream: no completion beyond one per WR");
		netem_cnt_read(&c1);
		netem_cnt_check(&c0, &c1);
	}
	ep_close(&a);
	ep_close(&b);
}

/* ---- rc.loss: losses at fixed places ------------------------------------- */

#define LOSS_PKTS	32
/*
 * The window a snaa requester restarts from after a local ACK timeout
 * (SNAA_RC_CWND_MIN, snaa.h): it then waits for an ACK before it sends
 * more.
 */
#define CWND_MIN	2

/* Arm @d's transmit fault injection: send @skip packets, lose @drop. */
static bool fault_arm(const struct vu_dev *d, int skip, int drop)
{
	char dir[256];

	snprintf(dir, sizeof(dir), VU_SNAA_DEBUGFS "/%s", d->name);
	return vu_write_file(dir, "tx_fault_skip", "%d\n", skip) &&
	       vu_write_file(dir, "tx_fault_drop", "%d\n", drop);
}

enum { LC_A_RETRANS, LC_A_TIMEOUTS, LC_A_NAKS_RCVD, LC_A_FAULTS,
       LC_B_GAP, LC_B_NAKS_SENT, LC_B_DUPS, LC_B_FAULTS, LC_NUM };

static const struct {
	char dev;
	const char *name;
} loss_cnt[LC_NUM] = {
	{ 'A', "rc_retransmits" }, { 'A', "rc_timeouts" },
	{ 'A', "rc_seq_naks_rcvd" }, { 'A', "tx_fault_drops" },
	{ 'B', "drop_psn_gap" }, { 'B', "rc_seq_naks_sent" },
	{ 'B', "rc_duplicate_requests" }, { 'B', "tx_fault_drops" },
};

static void loss_read(long long c[LC_NUM])
{
	int i;

	for (i = 0; i < LC_NUM; i++)
		c[i] = vu_read_counter(loss_cnt[i].dev == 'A' ? opt.a.name :
				       opt.b.name, loss_cnt[i].name);
}

/*
 * One RDMA WRITE of LOSS_PKTS packets A -> B with the faults armed;
 * fills @d with the counter deltas.  False if the WRITE went wrong.
 */
static bool loss_write(struct ep *a, struct ep *b, int a_skip, int a_drop,
		       int b_skip, int b_drop, long long d[LC_NUM])
{
	uint32_t len = LOSS_PKTS * vu_mtu_bytes(g_mtu);
	static uint64_t seed = 800;
	long long c0[LC_NUM], c1[LC_NUM];
	struct ibv_sge sg;
	bool ok;
	int i;

	vu_fill_prng(a->buf.p + SRC_OFF, len, ++seed);
	memset(b->buf.p + DST_OFF, POISON, len);
	sg = (struct ibv_sge){ (uintptr_t)(a->buf.p + SRC_OFF), len,
			       a->buf.mr->lkey };
	loss_read(c0);
	ok = fault_arm(&opt.a, a_skip, a_drop) &&
	     fault_arm(&opt.b, b_skip, b_drop) &&
	     !post_send(a, IBV_WR_RDMA_WRITE, 0x80 + seed, &sg, 1,
			(uintptr_t)(b->buf.p + DST_OFF), b->buf.mr->rkey, 0) &&
	     expect_wc("WRITE", a->scq, 0x80 + seed, IBV_WC_SUCCESS,
		       IBV_WC_RDMA_WRITE, len, NULL) &&
	     vu_bytes_eq("written", b->buf.p + DST_OFF, a->buf.p + SRC_OFF,
			 len, 0);
	/* late ACKs of duplicates must not move anything after this */
	nanosleep(&(struct timespec){ 0, 200 * 1000 * 1000 }, NULL);
	loss_read(c1);
	fault_arm(&opt.a, 0, 0);
	fault_arm(&opt.b, 0, 0);
	for (i = 0; i < LC_NUM; i++) {
		if (c0[i] < 0 || c1[i] < 0)
			ok = false;
		d[i] = c1[i] - c0[i];
	}
	return ok;
}

/* The deltas @d are @want (-1: not checked); say which differ. */
static bool loss_expect(const long long d[LC_NUM], const long long want[LC_NUM])
{
	bool ok = true;
	int i;

	for (i = 0; i < LC_NUM; i++) {
		if (want[i] < 0 || d[i] == want[i])
			continue;
		vu_diag("%c's %s moved by %lld, expected %lld",
			loss_cnt[i].dev, loss_cnt[i].name, d[i], want[i]);
		ok = false;
	}
	return ok;
}

static void case_loss(void)
{
	long long d[LC_NUM];
	struct ep a, b;
	bool ok;

	printf("# losses at fixed places\n");
	if (a_is_rxe || b_is_rxe) {
		vu_report(true, "loss: # SKIP needs two snaa devices (debugfs "
			  "fault injection)");
		return;
	}
	if (!pair_open(&a, &b, ACCESS)) {
		vu_report(false, "loss: setup");
		return;
	}
	/*
	 * The last packet carries the only AckReq: nothing is ACKed, the
	 * local ACK timer fires and the requester goes back to the first
	 * packet.  B answers that duplicate with an ACK of the 31 it has,
	 * and A skips to the last.  How many A sent before that ACK came
	 * depends on timing, each a duplicate at B, unless the link delays
	 * every packet (--link-delay): then A sends its restart window,
	 * waits, and sends the last.
	 */
	ok = loss_write(&a, &b, LOSS_PKTS - 1, 1, 0, 0, d) &&
	     loss_expect(d, (long long[LC_NUM]){
		     [LC_A_RETRANS] = opt.link_delay ? CWND_MIN + 1 : -1,
		     [LC_A_TIMEOUTS] = 1,
		     [LC_A_NAKS_RCVD] = 0, [LC_A_FAULTS] = 1, [LC_B_GAP] = 0,
		     [LC_B_NAKS_SENT] = 0, [LC_B_DUPS] = d[LC_A_RETRANS] - 1,
		     [LC_B_FAULTS] = 0 }) &&
	     d[LC_A_RETRANS] >= 2 && d[LC_A_RETRANS] <= LOSS_PKTS;
	vu_report(ok, "loss: A's last packet of a %d-packet WRITE lost: 1 "
		  "timeout, A sends %lld again (%s), B counts %lld "
		  "duplicates, no NAK, data exact", LOSS_PKTS,
		  d[LC_A_RETRANS], opt.link_delay ?
		  "its restart window, then the last" :
		  "from the first until B's ACK, then the last",
		  d[LC_B_DUPS]);

	/*
	 * B's one ACK is lost: the timer fires and A goes back to the
	 * first packet, which B, having everything, answers with an ACK
	 * of all; A stops when that ACK comes, so how many went again
	 * depends on timing (on a delayed link: its restart window), but
	 * each was a duplicate at B.
	 */
	ok = loss_write(&a, &b, 0, 0, 0, 1, d) &&
	     loss_expect(d, (long long[LC_NUM]){
		     [LC_A_RETRANS] = opt.link_delay ? CWND_MIN : -1,
		     [LC_A_TIMEOUTS] = 1,
		     [LC_A_NAKS_RCVD] = 0, [LC_A_FAULTS] = 0, [LC_B_GAP] = 0,
		     [LC_B_NAKS_SENT] = 0, [LC_B_DUPS] = d[LC_A_RETRANS],
		     [LC_B_FAULTS] = 1 }) &&
	     d[LC_A_RETRANS] >= 1 && d[LC_A_RETRANS] <= LOSS_PKTS;
	vu_report(ok, "loss: B's ACK of a %d-packet WRITE lost: 1 timeout, "
		  "A sends %lld again from the first until B's ACK of all "
		  "comes, each a duplicate at B, no NAK, data exact",
		  LOSS_PKTS, d[LC_A_RETRANS]);

	/*
	 * The 6th packet is lost: B NAKs the gap once and drops what
	 * follows until the 6th comes again; A goes back to it on the
	 * NAK.  How many packets A sent before the NAK arrived depends on
	 * timing, but A retransmits exactly those B dropped, and the 6th.
	 */
	ok = loss_write(&a, &b, 5, 1, 0, 0, d) &&
	     loss_expect(d, (long long[LC_NUM]){
		     [LC_A_RETRANS] = d[LC_B_GAP] + 1, [LC_A_TIMEOUTS] = 0,
		     [LC_A_NAKS_RCVD] = 1, [LC_A_FAULTS] = 1,
		     [LC_B_GAP] = -1, [LC_B_NAKS_SENT] = 1, [LC_B_DUPS] = 0,
		     [LC_B_FAULTS] = 0 });
	vu_report(ok, "loss: A's 6th packet of %d lost: B NAKs once and drops "
		  "%lld behind the gap, A retransmits %lld (those and the "
		  "6th), no timeout, data exact", LOSS_PKTS, d[LC_B_GAP],
		  d[LC_A_RETRANS]);
	ep_close(&a);
	ep_close(&b);
}

/* ---- rc.slow: a slow responder ------------------------------------------- */

/*
 * Every packet on the link is late by more than the local ACK timeout
 * (the caller's netem delay, --link-delay): A's timer fires before the
 * first response of each READ arrives, so A asks again while B is still
 * answering, B sends the response a second time (from the start: the
 * request names the READ's first PSN), and the READ posted next waits
 * behind that replay.  The replay is the responder at work, not silence:
 * a requester that spends its retry count on it fails the next READ with
 * IBV_WC_RETRY_EXC_ERR though nothing was lost.
 */
static void case_slow(void)
{
	static const uint32_t sizes[] = { MAX_MSG, 4096, MAX_MSG, 64 };
	long long t0, t1;
	struct ep a, b;
	size_t i;

	printf("# slow responder (A %s, B %s)\n", opt.a.name,
	       opt.b.name);
	if (!opt.link_delay) {
		vu_report(false, "slow: needs --link-delay (a delay on the link "
			  "longer than the local ACK timeout)");
		return;
	}
	if (!pair_open(&a, &b, ACCESS)) {
		vu_report(false, "slow: setup");
		return;
	}
	t0 = snaa_counter(&opt.a, a_is_rxe, "rc_timeouts");
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		vu_report(transfer(&a, &b, K_READ, sizes[i], i ? 1 : 3,
				   0x9000 + i),
			  "slow: RDMA_READ %zu of %u bytes behind the replay of "
			  "the one before: success, data exact", i + 1,
			  sizes[i]);
	vu_report(atomic_case(&a, &b, 9), "slow: compare & swap and fetch & "
		  "add behind a replayed READ: results and targets exact");
	t1 = snaa_counter(&opt.a, a_is_rxe, "rc_timeouts");
	if (t0 >= 0 && t1 >= 0) {
		printf("# info: %s rc_timeouts +%lld\n", opt.a.name, t1 - t0);
		vu_report(t1 > t0, "slow: A's local ACK timer fired (rc_timeouts "
			  "+%lld): the responder did get the READs twice",
			  t1 - t0);
	}
	vu_report(expect_state("A", a.qp, IBV_QPS_RTS) &&
		  expect_state("B", b.qp, IBV_QPS_RTS),
		  "slow: both QPs still in RTS");
	ep_close(&a);
	ep_close(&b);
}

/* ---- the tests ------------------------------------------------------------ */

/* Under KASAN and TCG a test may take minutes; the VM's budget is the limit. */
#define RC_TIMEOUT	1800

FIXTURE(rc) {
	bool open;		/* opt.a and opt.b are open */
};

FIXTURE_SETUP(rc)
{
}

FIXTURE_TEARDOWN(rc)
{
	if (self->open) {
		vu_dev_close(&opt.b);
		vu_dev_close(&opt.a);
	}
}

/*
 * Devices A and B of the options, into opt.a and opt.b (this test's
 * process's): 0, 1 if one is missing (the test is skipped), -1 if the
 * setup failed (said on stderr).
 */
static int rc_open(void)
{
	int ret = vu_dev_open(&opt.a);

	if (!ret)
		ret = vu_dev_open(&opt.b);
	if (ret)
		return ret == VU_EXIT_SKIP ? 1 : -1;
	g_mtu = opt.mtu ? vu_mtu_enum(opt.mtu) : vu_path_mtu(&opt.a, &opt.b);
	a_is_rxe = !strncmp(opt.a.name, "rxe", 3);
	b_is_rxe = !strncmp(opt.b.name, "rxe", 3);
	printf("# A: %s GID[%d] %s, B: %s GID[%d] %s, path MTU %d\n",
	       opt.a.name, opt.a.gid_idx, opt.a.gid_str, opt.b.name,
	       opt.b.gid_idx, opt.b.gid_str, vu_mtu_bytes(g_mtu));
	return 0;
}

/* In a test of fixture rc: open the devices, or skip or fail the test. */
#define RC_OPEN() do {							\
		int ret_ = rc_open();					\
									\
		if (ret_ > 0)						\
			SKIP(return, "device %s or %s missing",		\
			     opt.a.name, opt.b.name);			\
		ASSERT_EQ(0, ret_);					\
		self->open = true;					\
	} while (0)

/*
 * A test of fixture rc: @call as a subtest.  The comment after each test
 * names its feature for Documentation/testing.rst's index.
 */
#define RC_TEST(name, call)						\
	VU_NAMED(rc, name)						\
	TEST_F_TIMEOUT(rc, name, RC_TIMEOUT)				\
	{								\
		VU_SELECT("rc." #name);					\
		RC_OPEN();						\
		VU_CHECKS(call);					\
	}

static void errors_all(void)
{
	case_errors();
	case_read_local_prot(false);
	case_read_local_prot(true);
}

static void rd_atomic_all(void)
{
	case_rd_atomic();
	case_fence();
}

static void atomics_all(void)
{
	case_atomics();
	atomics_unsignaled();
}

RC_TEST(matrix, case_matrix())	/* rc */
RC_TEST(errors, errors_all())	/* rc */
RC_TEST(rnr, case_rnr())	/* rc */
RC_TEST(retry, case_retry())	/* rc */
RC_TEST(rd_atomic, rd_atomic_all())	/* atomics */
RC_TEST(atomics, atomics_all())	/* atomics */
RC_TEST(stream, case_stream())	/* rc */
RC_TEST(loss, case_loss())	/* rc */

/* Needs the caller's delay on the link: with --link-delay only. */
VU_NAMED(rc, slow)
TEST_F_TIMEOUT(rc, slow, RC_TIMEOUT)	/* rc */
{
	VU_SELECT("rc.slow");
	if (!opt.link_delay)
		SKIP(return, "not selected (--tests): needs --link-delay");
	RC_OPEN();
	VU_CHECKS(case_slow());
}

int main(int argc, char **argv)
{
	vu_harness_init();
	/* vu_rc's default (14), scaled as verbs_test's */
	opt.ack_timeout = vu_ack_timeout(vu_rc.timeout);
	parse_args(argc, argv);
	vu_rc.timeout = (uint8_t)opt.ack_timeout;
	printf("# rc_test: A=%s B=%s\n", opt.a.name, opt.b.name);
	return vu_harness_run(argv[0]);
}
