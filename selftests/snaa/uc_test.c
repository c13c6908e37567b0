// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * uc_test - UC (unreliable connected) data path test over RoCE v2.
 *
 * One process opens two RDMA devices A and B (possibly the same device:
 * loopback), creates a UC QP on each, connects them directly (no CM:
 * RESET->INIT->RTR->RTS with a global AH built from the peer's GID) and
 * runs a matrix of transfers A->B and B->A:
 *
 *   opcodes   RDMA WRITE, RDMA WRITE WITH IMM, SEND, SEND WITH IMM
 *   sizes     0, 1, 63, 64, MTU-1, MTU, MTU+1, 1 MiB, 8 MiB (MTU = path MTU)
 *   layouts   1 SGE; 3 unequal SGEs in three different MRs on the sender
 *             (for SEND and SEND WITH IMM also 3 unequal receive SGEs,
 *             split at other offsets than the send SGEs, the last one
 *             longer than needed)
 *
 * Each case gets its own data (a PRNG seeded by the case number) and its
 * own immediate value.  The destination is poisoned before the transfer:
 * the target range with the complement of the expected data (so that any
 * byte not written shows), GUARD bytes before and after it with POISON.
 * Afterwards every target byte must equal the source, every guard byte
 * must be untouched and the completions must be exactly the expected
 * ones, field by field.
 *
 * Completion semantics asserted (verbs / IBA):
 *  - sender CQE: status SUCCESS, opcode IBV_WC_RDMA_WRITE (WRITE, WRITE
 *    WITH IMM) or IBV_WC_SEND (SEND, SEND WITH IMM), wr_id, qp_num.
 *    byte_len is not checked: it is defined only for receive, RDMA READ
 *    and atomic completions.
 *  - receiver CQE (WRITE WITH IMM, SEND, SEND WITH IMM): status, wr_id of
 *    the receive WR, opcode IBV_WC_RECV_RDMA_WITH_IMM or IBV_WC_RECV,
 *    qp_num, IBV_WC_WITH_IMM set iff the operation carried an immediate,
 *    IBV_WC_WITH_INV never set, imm_data equal (raw, network order) to the
 *    posted one.
 *  - byte_len of the receive CQE is the message length, also for RDMA
 *    WRITE WITH IMM: the IBA requires it to be the number of bytes written
 *    (rdma_rxe implements that since commit bdce1290493c "RDMA/rxe: Fill in
 *    wc byte_len with IB_WC_RECV_RDMA_WITH_IMM"; before, it reported 0).
 *    The receive WR's scatter list is not used by WRITE WITH IMM: its
 *    buffers must stay untouched.
 *  - src_qp: ibv_poll_cq(3) defines it as the "source QP number (remote
 *    QP number)" and the IBA returns it only for UD, so for UC the spec
 *    leaves it undefined.  The only meaningful value for a connected QP is
 *    the peer's QP number (mlx5, for one, passes the remote QPN from its
 *    CQE through for every QP type), and that is asserted by default.  rdma_rxe fills src_qp only from a DETH,
 *    which UC packets do not carry, and reports 0: with --rxe-src-qp-quirk
 *    the test expects exactly 0 instead.  Either way the value seen is
 *    printed as an "# info:" line.
 *  - wc_flags bits other than WITH_IMM/WITH_INV are reported, not checked:
 *    rdma_rxe sets IBV_WC_GRH on every receive CQE of a user CQ although
 *    that flag only has a meaning for UD.
 *  - RDMA WRITE without immediate must generate no receive completion and
 *    must not consume a receive WR.  The receiver has a sentinel receive
 *    WR posted; after the written data has landed the receive CQ is polled
 *    briefly (must stay empty), then a small SEND follows on the same QP
 *    and must complete on exactly that sentinel WR (UC keeps the order of
 *    messages on one QP, so it also fences the WRITE).
 *
 * PSNs start just below the 24-bit wrap and keep running over all cases:
 * A->B at 0xfffff0, so that the wrap falls between small messages, B->A at
 * 0xffff00, so that (with the default sizes, MTU 1024) it falls inside the
 * 1 MiB RDMA WRITE.
 *
 * After a failed case both QPs are destroyed and recreated (unless
 * --keep-qps), so a lost message or a stray receive WR cannot cascade into
 * the following cases.
 *
 * After the matrix come four ibv_resize_cq(3) cases on B's receive CQ,
 * each with 5 receive completions (SENDs A->B of distinct sizes, with and
 * without immediate) left unpolled in it: grow it (all 5 must come out of
 * the first poll afterwards, in order, field by field), shrink it below 5
 * (must fail with EINVAL and lose nothing), use it again, and shrink it
 * to exactly 5 (must succeed, keep the 5, then carry 3 more rounds).
 * They run on every device, whatever --ops/--sizes/--dir say; see "CQ
 * resize" below.
 *
 * Output is KTAP; exit status 0 iff every case passed, 1 if one failed or
 * the setup failed, 2 for usage errors, 4 (kselftest SKIP) if a device is
 * missing.
 *
 * Build: make -C selftests/snaa uc_test (uc_test.c, verbs_util.c and
 * userspace/common/snaa_opt.c, with -libverbs)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <infiniband/verbs.h>

#include "snaa_opt.h"
#include "verbs_util.h"

#define PSN_AB		0xfffff0u	/* A's sq_psn = B's rq_psn */
#define PSN_BA		0xffff00u	/* B's sq_psn = A's rq_psn */

#define POISON		0xa5
#define GUARD		4096		/* guard bytes checked each side */
#define PAD		8192		/* room for guards + odd offsets */
#define SLACK		29		/* spare room in the last recv SGE */
#define SENT_LEN	64		/* sentinel receive buffer */
#define FENCE_LEN	8		/* SEND that follows a plain WRITE */
#define MAX_SGE		3
#define CQ_DEPTH	64
#define QP_DEPTH	16
#define QUIET_MS	100		/* "poll briefly" for stray CQEs */
#define MAX_SIZE	(256u << 20)	/* largest --sizes entry accepted */

enum op { OP_WRITE, OP_WRITE_IMM, OP_SEND, OP_SEND_IMM, OP_NUM };

static const struct opinfo {
	const char *name;		/* KTAP name */
	const char *cli;		/* --ops token */
	enum ibv_wr_opcode wr_opcode;
	enum ibv_wc_opcode send_wc;	/* sender CQE opcode */
	enum ibv_wc_opcode recv_wc;	/* receiver CQE opcode */
	bool imm;			/* carries immediate data */
	bool rwr;			/* consumes a receive WR */
	bool write;			/* data goes to a remote address */
} ops[OP_NUM] = {
	[OP_WRITE] = { "WRITE", "write", IBV_WR_RDMA_WRITE,
		       IBV_WC_RDMA_WRITE, 0, false, false, true },
	[OP_WRITE_IMM] = { "WRITE_WITH_IMM", "write_imm",
			   IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WC_RDMA_WRITE,
			   IBV_WC_RECV_RDMA_WITH_IMM, true, true, true },
	[OP_SEND] = { "SEND", "send", IBV_WR_SEND, IBV_WC_SEND, IBV_WC_RECV,
		      false, true, false },
	[OP_SEND_IMM] = { "SEND_WITH_IMM", "send_imm", IBV_WR_SEND_WITH_IMM,
			  IBV_WC_SEND, IBV_WC_RECV, true, true, false },
};

/* wr_id: magic | case number | role */
enum role { ROLE_SEND = 1, ROLE_RECV, ROLE_SENTINEL, ROLE_FENCE };
#define WRID(cno, role) (0x5aa5000000000000ull | ((uint64_t)(cno) << 8) | \
			 (uint64_t)(role))

struct side {
	struct vu_dev d;		/* device, port, GID, PD */
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp;
	uint32_t sq_psn, rq_psn;
	struct vu_buf src[MAX_SGE];	/* send SGEs, one MR each */
	struct vu_buf dst;		/* RDMA WRITE target */
	struct vu_buf rcv[MAX_SGE];	/* receive SGEs, one MR each */
	struct vu_buf sent;		/* sentinel receive / fence source */
};

/* ---- options ----------------------------------------------------------- */

#define MAX_SIZES 64
struct size_tok {
	bool mtu_rel;			/* relative to the path MTU */
	long long base;			/* bytes (if !mtu_rel) */
	long long delta;
	char text[24];
};

static struct {
	struct vu_dev a, b;		/* --dev-a, --gid-a, --ipv6, ... */
	int mtu;			/* bytes, 0: active MTU */
	struct size_tok sizes[MAX_SIZES];
	int nsizes;
	bool op_on[OP_NUM];
	bool ab, ba;
	bool rxe_src_qp_quirk;
	bool keep_qps;
	double timeout;
} opt = {
	.a = VU_DEV_INIT('A'), .b = VU_DEV_INIT('B'), .timeout = 20.0,
};

static const char default_sizes[] = "0,1,63,64,mtu-1,mtu,mtu+1,1M,8M";

static void usage(FILE *f)
{
	fprintf(f,
"Usage: uc_test --dev-a NAME [--gid-a IDX] --dev-b NAME [--gid-b IDX]\n"
"               [--ipv6] [--mtu 256|512|1024|2048|4096] [--sizes LIST]\n"
"               [--ops LIST] [--dir ab|ba|both] [--timeout SEC]\n"
"               [--rxe-src-qp-quirk] [--keep-qps] [--help]\n"
"\n"
"Connect a UC QP on RDMA device A (port 1) with one on device B directly\n"
"(RoCE v2, no CM) and check RDMA WRITE [WITH IMM] and SEND [WITH IMM]\n"
"transfers of various sizes and SGE layouts, data and completions.\n"
"A and B may be the same device (loopback).  Output is KTAP.\n"
"\n"
VU_PAIR_USAGE
"  --mtu BYTES           path MTU; default: the ports' active MTU\n"
"  --sizes LIST          comma-separated message sizes in bytes; a size is\n"
"                        N, N with a K/M/G suffix (KiB...), or \"mtu\", each\n"
"                        optionally followed by +N or -N\n"
"                        (default: %s)\n"
"  --ops LIST            comma-separated subset of write,write_imm,send,\n"
"                        send_imm (default: all)\n"
"  --dir ab|ba|both      transfer direction(s) (default: both)\n"
"  --timeout SEC         completion deadline per case (default: 20)\n"
"  --rxe-src-qp-quirk    expect src_qp 0 in receive completions on rxe*\n"
"                        devices, as rdma_rxe reports for UC, instead of\n"
"                        the peer QPN\n"
"  --keep-qps            keep using the QPs after a failed case (default:\n"
"                        recreate them, so that one lost message or stale\n"
"                        receive WR does not fail the following cases)\n"
"  --help                show this help\n"
"\n"
"0 bytes run with num_sge = 0 (\"0sge\"); the 3-SGE layout needs at least\n"
"3 bytes and is skipped below.  After the matrix, four ibv_resize_cq\n"
"cases on B's receive CQ with completions pending (A->B SENDs).  Exit\n"
"status: 0 all cases passed, 1 a case or the setup failed, 2 usage\n"
"error, 4 a device is missing (skip).\n",
		default_sizes);
}

static bool parse_num(const char *s, long long *v, const char **end)
{
	char *e;

	errno = 0;
	if (*s < '0' || *s > '9')
		return false;
	*v = strtoll(s, &e, 10);
	if (errno)
		return false;
	*end = e;
	return true;
}

static bool parse_size(const char *s, struct size_tok *t)
{
	const char *p;
	long long v;

	memset(t, 0, sizeof(*t));
	if (!strncasecmp(s, "mtu", 3)) {
		t->mtu_rel = true;
		p = s + 3;
	} else {
		if (!parse_num(s, &v, &p) || v > (1ll << 40))
			return false;
		switch (*p) {
		case 'k': case 'K': v <<= 10; p++; break;
		case 'm': case 'M': v <<= 20; p++; break;
		case 'g': case 'G': v <<= 30; p++; break;
		}
		t->base = v;
	}
	if (*p == '+' || *p == '-') {
		int sign = *p == '-' ? -1 : 1;

		if (!parse_num(p + 1, &v, &p) || v > (1ll << 40))
			return false;
		t->delta = sign * v;
	}
	return *p == '\0';
}

static void add_size(const char *tok, void *ctx)
{
	(void)ctx;
	if (opt.nsizes == MAX_SIZES)
		opt_usage_error("--sizes: more than %d sizes", MAX_SIZES);
	if (strlen(tok) >= sizeof(opt.sizes[0].text) ||
	    !parse_size(tok, &opt.sizes[opt.nsizes]))
		opt_usage_error("--sizes: bad size '%s' (want N, N[KMG] or "
				"mtu, optionally +N/-N)", tok);
	strcpy(opt.sizes[opt.nsizes].text, tok);
	opt.nsizes++;
}

static void add_op(const char *tok, void *ctx)
{
	int i;

	(void)ctx;
	if (!strcasecmp(tok, "all")) {
		for (i = 0; i < OP_NUM; i++)
			opt.op_on[i] = true;
		return;
	}
	for (i = 0; i < OP_NUM; i++) {
		if (!strcasecmp(tok, ops[i].cli) ||
		    !strcasecmp(tok, ops[i].name)) {
			opt.op_on[i] = true;
			return;
		}
	}
	opt_usage_error("--ops: unknown operation '%s' (want write, write_imm, "
			"send, send_imm)", tok);
}

static void parse_args(int argc, char **argv)
{
	enum { O_MTU = VU_OPT_NEXT, O_SIZES, O_OPS, O_DIR, O_TIMEOUT, O_QUIRK,
	       O_KEEP };
	static const struct option lopts[] = {
		VU_PAIR_OPTIONS,
		{ "mtu", required_argument, NULL, O_MTU },
		{ "sizes", required_argument, NULL, O_SIZES },
		{ "ops", required_argument, NULL, O_OPS },
		{ "dir", required_argument, NULL, O_DIR },
		{ "timeout", required_argument, NULL, O_TIMEOUT },
		{ "rxe-src-qp-quirk", no_argument, NULL, O_QUIRK },
		{ "keep-qps", no_argument, NULL, O_KEEP },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	bool ops_given = false, sizes_given = false;
	char *e;
	int c, i;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
		switch (c) {
		case O_MTU:
			opt.mtu = vu_mtu_option("--mtu", optarg);
			break;
		case O_SIZES:
			opt.nsizes = 0;
			opt_list(optarg, "--sizes", add_size, NULL);
			if (!opt.nsizes)
				opt_usage_error("--sizes: empty list");
			sizes_given = true;
			break;
		case O_OPS:
			memset(opt.op_on, 0, sizeof(opt.op_on));
			opt_list(optarg, "--ops", add_op, NULL);
			ops_given = true;
			break;
		case O_DIR:
			if (!strcmp(optarg, "ab")) {
				opt.ab = true, opt.ba = false;
			} else if (!strcmp(optarg, "ba")) {
				opt.ab = false, opt.ba = true;
			} else if (!strcmp(optarg, "both")) {
				opt.ab = opt.ba = true;
			} else {
				opt_usage_error("--dir: want ab, ba or both, "
						"not '%s'", optarg);
			}
			break;
		case O_TIMEOUT:
			errno = 0;
			opt.timeout = strtod(optarg, &e);
			if (errno || e == optarg || *e || !(opt.timeout > 0) ||
			    opt.timeout > 86400)
				opt_usage_error("--timeout: bad value '%s'",
						optarg);
			break;
		case O_QUIRK: opt.rxe_src_qp_quirk = true; break;
		case O_KEEP: opt.keep_qps = true; break;
		default:
			if (!vu_pair_option(c, optarg, &opt.a, &opt.b))
				opt_help_or_error(c, argv, usage);
		}
	}
	opt_no_operands(argc, argv);
	vu_pair_options_check(&opt.a, &opt.b);
	if (!ops_given)
		for (i = 0; i < OP_NUM; i++)
			opt.op_on[i] = true;
	for (i = 0; i < OP_NUM && !opt.op_on[i]; i++)
		;
	if (i == OP_NUM)
		opt_usage_error("--ops: empty list");
	if (!sizes_given)
		opt_list(default_sizes, "--sizes", add_size, NULL);
	if (!opt.ab && !opt.ba)
		opt.ab = opt.ba = true;
}

/* ---- devices ------------------------------------------------------------ */

static int alloc_buf(struct side *s, struct vu_buf *b, size_t len, int access)
{
	int ret = vu_buf_alloc(b, s->d.pd, len, access, POISON);

	if (ret)
		fprintf(stderr, "uc_test: %s: %zu-byte buffer: %s (ulimit "
			"-l?)\n", s->d.name, len, strerror(ret));
	return ret;
}

/*
 * Open the device (vu_dev_open()), then create its CQs and the buffers.
 * Returns 0, -1 on error, or VU_EXIT_SKIP if the device is missing.
 */
static int open_side(struct side *s, size_t maxlen)
{
	const int rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	int i, ret;

	ret = vu_dev_open(&s->d);
	if (ret)
		return ret;
	if (maxlen > s->d.port.max_msg_sz) {
		fprintf(stderr, "uc_test: size %zu exceeds max_msg_sz %u of "
			"%s\n", maxlen, s->d.port.max_msg_sz, s->d.name);
		return -1;
	}
	s->scq = ibv_create_cq(s->d.ctx, CQ_DEPTH, NULL, NULL, 0);
	s->rcq = ibv_create_cq(s->d.ctx, CQ_DEPTH, NULL, NULL, 0);
	if (!s->scq || !s->rcq) {
		fprintf(stderr, "uc_test: %s: cannot allocate CQs: %s\n",
			s->d.name, strerror(errno));
		return -1;
	}
	for (i = 0; i < MAX_SGE; i++)
		if (alloc_buf(s, &s->src[i], maxlen + 64, 0) ||
		    alloc_buf(s, &s->rcv[i], maxlen + 2 * PAD,
			      IBV_ACCESS_LOCAL_WRITE))
			return -1;
	if (alloc_buf(s, &s->dst, maxlen + 2 * PAD, rw) ||
	    alloc_buf(s, &s->sent, SENT_LEN + 2 * PAD, IBV_ACCESS_LOCAL_WRITE))
		return -1;
	return 0;
}

static void close_side(struct side *s)
{
	int i;

	if (s->qp)
		ibv_destroy_qp(s->qp);
	for (i = 0; i < MAX_SGE; i++) {
		vu_buf_free(&s->src[i]);
		vu_buf_free(&s->rcv[i]);
	}
	vu_buf_free(&s->dst);
	vu_buf_free(&s->sent);
	if (s->scq)
		ibv_destroy_cq(s->scq);
	if (s->rcq)
		ibv_destroy_cq(s->rcq);
	vu_dev_close(&s->d);
	s->qp = NULL;
	s->scq = s->rcq = NULL;
}

/* ---- QPs ---------------------------------------------------------------- */

static int create_qp(struct side *s)
{
	struct ibv_qp_cap cap = {
		.max_send_wr = QP_DEPTH,
		.max_recv_wr = QP_DEPTH,
		.max_send_sge = MAX_SGE,
		.max_recv_sge = MAX_SGE,
	};

	s->qp = vu_qp_create(s->d.pd, IBV_QPT_UC, s->scq, s->rcq, &cap);
	if (!s->qp) {
		fprintf(stderr, "uc_test: %s: ibv_create_qp(UC) failed: %s\n",
			s->d.name, strerror(errno));
		return -1;
	}
	return 0;
}

static int qp_to_rts(struct side *s, const struct side *peer,
		     enum ibv_mtu mtu)
{
	const struct vu_qp_end self_end = {
		s->qp, &s->d, s->sq_psn, s->rq_psn,
	}, peer_end = {
		peer->qp, &peer->d, peer->sq_psn, peer->rq_psn,
	};
	const char *step;
	int ret;

	ret = vu_qp_connect(&self_end, &peer_end, mtu,
			    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
			    &step);
	if (ret)
		fprintf(stderr, "uc_test: %s: QP 0x%x %s (to %s GID %s): "
			"%s%s\n", s->d.name, s->qp->qp_num, step, peer->d.name,
			peer->d.gid_str, strerror(ret), ret == ETIMEDOUT ||
			ret == ENETUNREACH || ret == EHOSTUNREACH ?
			" (is the peer address reachable? ip route get, ip "
			"neigh)" : "");
	return ret ? -1 : 0;
}

static int connect_pair(struct side *a, struct side *b, enum ibv_mtu mtu)
{
	if (create_qp(a) || create_qp(b))
		return -1;
	if (qp_to_rts(a, b, mtu) || qp_to_rts(b, a, mtu))
		return -1;
	return 0;
}

/* After a failure: new QPs, empty CQs, so nothing stale can leak on. */
static int reset_pair(struct side *a, struct side *b, enum ibv_mtu mtu)
{
	struct side *s[2] = { a, b };
	int i, ret;

	for (i = 0; i < 2; i++) {
		ret = s[i]->qp ? ibv_destroy_qp(s[i]->qp) : 0;
		if (ret)
			fprintf(stderr, "uc_test: %s: ibv_destroy_qp: %s\n",
				s[i]->d.name, strerror(ret));
		s[i]->qp = NULL;
	}
	vu_nap_us(QUIET_MS * 1000);	/* let packets in flight die */
	for (i = 0; i < 2; i++) {
		vu_cq_drain(s[i]->scq);
		vu_cq_drain(s[i]->rcq);
	}
	return connect_pair(a, b, mtu);
}

/* ---- one case ----------------------------------------------------------- */

struct layout {
	int nsge;
	size_t len[MAX_SGE];
	size_t off[MAX_SGE];		/* into src[i] or rcv[i] */
};

static uint8_t *expect;			/* the message, as it must arrive */
static bool info_done[2][OP_NUM];

/*
 * The fields every CQE of a test has: status SUCCESS, wr_id (@hint
 * follows the diagnostic), qp_num and, for a success, opcode.
 */
static bool check_cqe_common(const struct ibv_wc *wc, uint32_t qp_num,
			     enum ibv_wc_opcode opcode, uint64_t wr_id,
			     const char *hint, const char *what)
{
	bool ok = true;

	if (wc->status != IBV_WC_SUCCESS) {
		vu_diag("%s: status %s (%d), expected SUCCESS, vendor_err 0x%x",
			what, ibv_wc_status_str(wc->status), wc->status,
			wc->vendor_err);
		ok = false;
	}
	if (wc->wr_id != wr_id) {
		vu_diag("%s: wr_id 0x%" PRIx64 ", expected 0x%" PRIx64 "%s",
			what, wc->wr_id, wr_id, hint);
		ok = false;
	}
	if (wc->qp_num != qp_num) {
		vu_diag("%s: qp_num 0x%x, expected 0x%x", what, wc->qp_num,
			qp_num);
		ok = false;
	}
	/* opcode is only defined for successful completions */
	if (wc->status == IBV_WC_SUCCESS && wc->opcode != opcode) {
		vu_diag("%s: opcode %s (%d), expected %s (%d)", what,
			vu_wc_opcode_str(wc->opcode), wc->opcode,
			vu_wc_opcode_str(opcode), opcode);
		ok = false;
	}
	return ok;
}

/* The whole completion, after a failed check. */
static void diag_wc(const struct ibv_wc *wc)
{
	char s[256];

	vu_wc_str(wc, s, sizeof(s));
	vu_diag("  %s", s);
}

static bool check_send_cqe(const struct ibv_wc *wc, const struct side *tx,
			   enum ibv_wc_opcode opcode, uint64_t wr_id,
			   const char *what)
{
	bool ok = check_cqe_common(wc, tx->qp->qp_num, opcode, wr_id, "",
				   what);

	if (!ok)
		diag_wc(wc);
	return ok;
}

static bool check_recv_cqe(const struct ibv_wc *wc, const struct side *rx,
			   const struct side *tx, enum ibv_wc_opcode opcode,
			   uint64_t wr_id, uint32_t byte_len, bool imm,
			   uint32_t imm_be, const char *what)
{
	/* The quirk is rdma_rxe's: it applies when rxe is the receiver. */
	bool quirk = opt.rxe_src_qp_quirk && !strncmp(rx->d.name, "rxe", 3);
	uint32_t want_src = quirk ? 0 : tx->qp->qp_num;
	bool ok;

	ok = check_cqe_common(wc, rx->qp->qp_num, opcode, wr_id,
			      " (not the receive WR posted for this message)",
			      what);
	if (wc->status == IBV_WC_SUCCESS) {
		if (wc->byte_len != byte_len) {
			vu_diag("%s: byte_len %u, expected %u (the message "
				"length)", what, wc->byte_len, byte_len);
			ok = false;
		}
		if (!!(wc->wc_flags & IBV_WC_WITH_IMM) != imm) {
			vu_diag("%s: IBV_WC_WITH_IMM %s in wc_flags 0x%x, "
				"expected %s", what,
				wc->wc_flags & IBV_WC_WITH_IMM ? "set" :
								 "clear",
				wc->wc_flags, imm ? "set" : "clear");
			ok = false;
		}
		if (wc->wc_flags & IBV_WC_WITH_INV) {
			vu_diag("%s: IBV_WC_WITH_INV set in wc_flags 0x%x",
				what, wc->wc_flags);
			ok = false;
		}
		if (imm && wc->imm_data != imm_be) {
			vu_diag("%s: imm_data 0x%08x (network order), expected "
				"0x%08x as posted", what, ntohl(wc->imm_data),
				ntohl(imm_be));
			ok = false;
		}
		if (wc->src_qp != want_src) {
			vu_diag("%s: src_qp 0x%x, expected 0x%x (%s)", what,
				wc->src_qp, want_src, quirk ?
				"0 as rdma_rxe reports it, --rxe-src-qp-quirk" :
				"the peer QPN; rdma_rxe reports 0 for UC, see "
				"--rxe-src-qp-quirk");
			ok = false;
		}
	}
	if (!ok)
		diag_wc(wc);
	return ok;
}

/* Poison a target range of len bytes at off: guards POISON, the range
 * itself the complement of want (or POISON if want is NULL). */
static void poison_range(uint8_t *p, size_t off, size_t len,
			 const uint8_t *want)
{
	size_t i;

	memset(p + off - GUARD, POISON, GUARD);
	if (want)
		for (i = 0; i < len; i++)
			p[off + i] = (uint8_t)~want[i];
	else
		memset(p + off, POISON, len);
	memset(p + off + len, POISON, GUARD);
}

/* Check a target range: guards untouched, the range equal to want (or
 * untouched POISON if want is NULL). */
static bool check_range(const char *what, const uint8_t *p, size_t off,
			size_t len, const uint8_t *want)
{
	char name[160];
	bool ok = true;
	size_t i;

	snprintf(name, sizeof(name), "%s: guard before", what);
	ok &= vu_bytes_all(name, p + off - GUARD, POISON, GUARD, -GUARD);
	snprintf(name, sizeof(name), "%s: guard after", what);
	ok &= vu_bytes_all(name, p + off + len, POISON, GUARD, (long long)len);
	if (want) {
		snprintf(name, sizeof(name), "%s: data", what);
		ok &= vu_bytes_eq(name, p + off, want, len, 0);
	} else {
		for (i = 0; i < len; i += GUARD) {
			size_t n = len - i < GUARD ? len - i : GUARD;

			snprintf(name, sizeof(name), "%s: (must stay "
				 "unwritten)", what);
			if (!vu_bytes_all(name, p + off + i, POISON, n,
					  (long long)i)) {
				ok = false;
				break;
			}
		}
	}
	return ok;
}

/* Wait until the WRITE target holds the data (plain WRITE has no receive
 * completion to wait for). */
static void wait_landed(const uint8_t *p, size_t n, double deadline)
{
	while (memcmp(p, expect, n) && vu_now() < deadline)
		vu_nap_us(500);
}

static void split3(size_t n, size_t a_div, size_t b_div, size_t len[3])
{
	len[0] = n / a_div ? n / a_div : 1;
	len[1] = n / b_div ? n / b_div : 1;
	len[2] = n - len[0] - len[1];
}

struct pair {
	struct side *tx, *rx;
	const char *name;		/* "A->B" */
	int dir;			/* 0 A->B, 1 B->A */
};

static bool run_case(const struct pair *pr, enum op op, size_t n, int nsge,
		     unsigned int cno)
{
	const struct opinfo *oi = &ops[op];
	struct side *tx = pr->tx, *rx = pr->rx;
	struct ibv_sge ssge[MAX_SGE], rsge[MAX_SGE], fsge, tsge;
	struct ibv_send_wr swr, fwr, *bad_s;
	struct ibv_recv_wr rwr, *bad_r;
	struct ibv_wc swc[2], rwc[1];
	struct layout sl, rl;
	uint64_t seed = 0x736e616100000000ull ^ ((uint64_t)cno << 8);
	uint32_t imm_be;
	size_t doff, pos;
	double deadline;
	bool ok = true;
	int i, got, want_s;
	char what[96];

	/* --- layouts: unequal splits at odd offsets ------------------------ */
	memset(&sl, 0, sizeof(sl));
	memset(&rl, 0, sizeof(rl));
	sl.nsge = rl.nsge = nsge;
	if (nsge == 1) {
		sl.len[0] = rl.len[0] = n;
	} else if (nsge == 3) {
		split3(n, 5, 2, sl.len);	/* ~1/5, 1/2, rest */
		split3(n, 3, 4, rl.len);	/* ~1/3, 1/4, rest */
	}
	for (i = 0; i < nsge; i++) {
		sl.off[i] = 1 + 2 * (size_t)i + cno % 5;
		rl.off[i] = PAD + 5 * (size_t)i + cno % 7;
	}
	doff = PAD + (cno % 13) * 3;

	/* --- data ----------------------------------------------------------- */
	vu_fill_prng(expect, n, seed);
	imm_be = htonl((uint32_t)vu_splitmix64(&seed) | 1);
	for (i = 0, pos = 0; i < sl.nsge; pos += sl.len[i], i++) {
		memcpy(tx->src[i].p + sl.off[i], expect + pos, sl.len[i]);
		ssge[i].addr = (uintptr_t)(tx->src[i].p + sl.off[i]);
		ssge[i].length = (uint32_t)sl.len[i];
		ssge[i].lkey = tx->src[i].mr->lkey;
	}
	if (oi->write)
		poison_range(rx->dst.p, doff, n, expect);
	if (oi->rwr) {
		for (i = 0, pos = 0; i < rl.nsge; pos += rl.len[i], i++) {
			/* WRITE WITH IMM must not touch the receive buffers */
			poison_range(rx->rcv[i].p, rl.off[i], rl.len[i],
				     oi->write ? NULL : expect + pos);
			rsge[i].addr = (uintptr_t)(rx->rcv[i].p + rl.off[i]);
			rsge[i].length = (uint32_t)rl.len[i];
			rsge[i].lkey = rx->rcv[i].mr->lkey;
		}
		/* the last receive SGE has spare room that must stay unused */
		if (rl.nsge == 3)
			rsge[2].length += SLACK;
	}

	/* --- receive WR ----------------------------------------------------- */
	memset(&rwr, 0, sizeof(rwr));
	if (oi->rwr) {
		rwr.wr_id = WRID(cno, ROLE_RECV);
		rwr.sg_list = rsge;
		rwr.num_sge = rl.nsge;
	} else {
		/* sentinel: must survive the WRITE, then take the fence */
		poison_range(rx->sent.p, PAD, SENT_LEN, NULL);
		tsge.addr = (uintptr_t)(rx->sent.p + PAD);
		tsge.length = SENT_LEN;
		tsge.lkey = rx->sent.mr->lkey;
		rwr.wr_id = WRID(cno, ROLE_SENTINEL);
		rwr.sg_list = &tsge;
		rwr.num_sge = 1;
	}
	i = ibv_post_recv(rx->qp, &rwr, &bad_r);
	if (i) {
		vu_diag("ibv_post_recv on %c failed: %s", rx->d.label,
			strerror(i));
		return false;
	}

	/* --- send WR -------------------------------------------------------- */
	memset(&swr, 0, sizeof(swr));
	swr.wr_id = WRID(cno, ROLE_SEND);
	swr.sg_list = sl.nsge ? ssge : NULL;
	swr.num_sge = sl.nsge;
	swr.opcode = oi->wr_opcode;
	swr.send_flags = IBV_SEND_SIGNALED;
	if (oi->imm)
		swr.imm_data = imm_be;
	if (oi->write) {
		swr.wr.rdma.remote_addr = (uintptr_t)(rx->dst.p + doff);
		swr.wr.rdma.rkey = rx->dst.mr->rkey;
	}
	i = ibv_post_send(tx->qp, &swr, &bad_s);
	if (i) {
		vu_diag("ibv_post_send on %c failed: %s", tx->d.label,
			strerror(i));
		return false;
	}
	deadline = vu_now() + opt.timeout;
	want_s = 1;
	got = 0;

	if (op == OP_WRITE) {
		/* data landed? then no receive CQE may show up, and the
		 * sentinel receive WR must still be there for a SEND */
		got = vu_poll_cq(tx->scq, swc, 1, deadline);
		wait_landed(rx->dst.p + doff, n, deadline);
		if (vu_poll_cq(rx->rcq, rwc, 1, vu_now() + QUIET_MS / 1000.0)) {
			char s[256];

			vu_wc_str(&rwc[0], s, sizeof(s));
			vu_diag("RDMA WRITE without immediate produced a "
				"receive completion: %s", s);
			ok = false;
		}
		vu_fill_prng(tx->sent.p + PAD, FENCE_LEN, seed);
		fsge.addr = (uintptr_t)(tx->sent.p + PAD);
		fsge.length = FENCE_LEN;
		fsge.lkey = tx->sent.mr->lkey;
		memset(&fwr, 0, sizeof(fwr));
		fwr.wr_id = WRID(cno, ROLE_FENCE);
		fwr.sg_list = &fsge;
		fwr.num_sge = 1;
		fwr.opcode = IBV_WR_SEND;
		fwr.send_flags = IBV_SEND_SIGNALED;
		i = ibv_post_send(tx->qp, &fwr, &bad_s);
		if (i) {
			vu_diag("ibv_post_send (fence SEND) on %c failed: %s",
				tx->d.label, strerror(i));
			return false;
		}
		/* the fence SEND gets its own deadline */
		deadline = vu_now() + opt.timeout;
		want_s = 2;
	}

	/* --- completions ---------------------------------------------------- */
	got += vu_poll_cq(tx->scq, swc + got, want_s - got, deadline);
	if (got < want_s) {
		vu_diag("timed out after %.0f s: %d of %d send completion(s) "
			"on %c", opt.timeout, got, want_s, tx->d.label);
		ok = false;
	}
	for (i = 0; i < got; i++) {
		bool fence = op == OP_WRITE && i == 1;

		snprintf(what, sizeof(what), "%c send CQE%s", tx->d.label,
			 fence ? " (fence SEND)" : "");
		ok &= check_send_cqe(&swc[i], tx, fence ? IBV_WC_SEND :
				     oi->send_wc, WRID(cno, fence ? ROLE_FENCE :
						       ROLE_SEND), what);
	}

	got = vu_poll_cq(rx->rcq, rwc, 1, deadline);
	if (!got) {
		if (op == OP_WRITE)
			vu_diag("timed out after %.0f s waiting for the fence "
				"SEND's receive completion on %c: was the "
				"sentinel receive WR consumed by the WRITE, or "
				"was the SEND lost?", opt.timeout, rx->d.label);
		else
			vu_diag("timed out after %.0f s waiting for the "
				"receive completion on %c (message lost?)",
				opt.timeout, rx->d.label);
		ok = false;
	} else if (op == OP_WRITE) {
		ok &= check_recv_cqe(&rwc[0], rx, tx, IBV_WC_RECV,
				     WRID(cno, ROLE_SENTINEL), FENCE_LEN,
				     false, 0, "receive CQE for the SEND "
				     "after the WRITE (sentinel receive WR)");
	} else {
		snprintf(what, sizeof(what), "%c receive CQE", rx->d.label);
		ok &= check_recv_cqe(&rwc[0], rx, tx, oi->recv_wc,
				     WRID(cno, ROLE_RECV), (uint32_t)n,
				     oi->imm, imm_be, what);
		if (!info_done[pr->dir][op] && n > 0) {
			char fl[64];

			info_done[pr->dir][op] = true;
			vu_wc_flags_str(rwc[0].wc_flags, fl, sizeof(fl));
			printf("# info: %s %s %zuB: %c receive CQE byte_len=%u "
			       "src_qp=0x%x (peer QPN 0x%x) wc_flags=0x%x(%s)"
			       "\n", pr->name, oi->name, n, rx->d.label,
			       rwc[0].byte_len, rwc[0].src_qp,
			       tx->qp->qp_num, rwc[0].wc_flags, fl);
		}
	}

	/* nothing else may have completed anywhere */
	vu_nap_us(1000);
	snprintf(what, sizeof(what), "%c send CQ", tx->d.label);
	ok &= vu_cq_stays_empty(tx->scq, 0, what);
	snprintf(what, sizeof(what), "%c receive CQ", rx->d.label);
	ok &= vu_cq_stays_empty(rx->rcq, 0, what);
	snprintf(what, sizeof(what), "%c receive CQ", tx->d.label);
	ok &= vu_cq_stays_empty(tx->rcq, 0, what);
	snprintf(what, sizeof(what), "%c send CQ", rx->d.label);
	ok &= vu_cq_stays_empty(rx->scq, 0, what);

	/* --- data ----------------------------------------------------------- */
	if (oi->write) {
		snprintf(what, sizeof(what), "%c WRITE target", rx->d.label);
		ok &= check_range(what, rx->dst.p, doff, n, expect);
	}
	if (oi->rwr) {
		for (i = 0, pos = 0; i < rl.nsge; pos += rl.len[i], i++) {
			snprintf(what, sizeof(what), "%c receive SGE %d (%zu "
				 "bytes at message offset %zu)", rx->d.label, i,
				 rl.len[i], pos);
			ok &= check_range(what, rx->rcv[i].p, rl.off[i],
					  rl.len[i],
					  oi->write ? NULL : expect + pos);
		}
	} else {
		uint8_t fence[FENCE_LEN];

		vu_fill_prng(fence, FENCE_LEN, seed);
		snprintf(what, sizeof(what), "%c sentinel receive buffer",
			 rx->d.label);
		ok &= check_range(what, rx->sent.p, PAD, FENCE_LEN, fence);
	}
	return ok;
}

/* ---- CQ resize ---------------------------------------------------------- */

/*
 * After the matrix: ibv_resize_cq on B's receive CQ with completions
 * pending, A->B.  Each round posts RZ_K receive WRs on B and RZ_K SENDs
 * of distinct sizes (alternately with and without immediate) from A,
 * waits for A's send completions and for the data to land in B's
 * receive buffers, then RZ_SETTLE_MS more, so that all RZ_K receive
 * completions sit unpolled in B's receive CQ.  Then:
 *
 *   grow    resize to RZ_GROW: succeeds, ibv_cq->cqe >= RZ_GROW, the
 *           very first poll returns exactly the RZ_K pending completions,
 *           in order, each field as posted, and nothing else
 *   shrink  resize to RZ_K - 1: fails with EINVAL (the new size cannot
 *           hold the pending completions), ibv_cq->cqe is unchanged and
 *           the RZ_K completions are all still there (first poll)
 *   reuse   a further round through the resized CQ completes normally
 *   fit     resize to exactly RZ_K with RZ_K pending: succeeds (ibv_cq->
 *           cqe >= RZ_K), the pending ones come out as in "grow", then
 *           RZ_ROUNDS more rounds run through the smaller CQ (its ring
 *           wraps several times, starting from the carried-over index)
 *
 * Unlike the matrix these ignore --ops/--sizes/--dir.  After a failed
 * one the QPs and B's receive CQ are recreated (unless --keep-qps).
 */
#define RZ_K		5		/* completions kept pending */
#define RZ_MAXMSG	3000		/* largest message */
#define RZ_SLOT		16384		/* buffer room per message */
#define RZ_BUF_LEN	(PAD + RZ_K * RZ_SLOT + PAD)
#define RZ_GROW		256		/* grown CQ size */
#define RZ_SETTLE_MS	200		/* extra wait after the data landed */
#define RZ_ROUNDS	3		/* rounds through the fitted CQ */

/* distinct sizes, two of them multi-packet at MTU 1024 */
static const size_t rz_len[RZ_K] = { 1, 63, 700, 1500, RZ_MAXMSG };

struct rz {
	struct side *tx, *rx;
	struct vu_buf sbuf;		/* on tx: message i at rz_off(i) */
	struct vu_buf rbuf;		/* on rx: buffer i at rz_off(i) */
	unsigned int cno;		/* KTAP case number */
	unsigned int round;		/* rounds posted so far */
	uint8_t data[RZ_K][RZ_MAXMSG];	/* message i of the current round */
	uint32_t imm_be[RZ_K];
	bool imm[RZ_K];
};

static size_t rz_off(int i)
{
	return PAD + (size_t)i * RZ_SLOT;
}

/* wr_id: WRID() plus round and message index in bits 32..47 */
static uint64_t rz_wrid(const struct rz *z, enum role role, int i)
{
	return WRID(z->cno, role) | ((uint64_t)(z->round & 0xff) << 40) |
	       ((uint64_t)i << 32);
}

static const char *rz_opname(const struct rz *z, int i)
{
	return z->imm[i] ? "SEND_WITH_IMM" : "SEND";
}

/* Post one round: RZ_K receive WRs on rx, then RZ_K SENDs on tx. */
static bool rz_post(struct rz *z)
{
	struct ibv_sge ssge, rsge;
	struct ibv_send_wr swr, *bad_s;
	struct ibv_recv_wr rwr, *bad_r;
	uint64_t seed;
	int i, ret;

	z->round++;
	for (i = 0; i < RZ_K; i++) {
		seed = 0x72737a0000000000ull ^ ((uint64_t)z->cno << 16) ^
		       ((uint64_t)z->round << 8) ^ (uint64_t)i;
		vu_fill_prng(z->data[i], rz_len[i], seed);
		z->imm[i] = (i + z->round) & 1;
		z->imm_be[i] = htonl((uint32_t)vu_splitmix64(&seed) | 1);
		memcpy(z->sbuf.p + rz_off(i), z->data[i], rz_len[i]);
		/* receive buffer: complement of the data, guards (and the
		 * SLACK bytes beyond the message) POISON */
		poison_range(z->rbuf.p, rz_off(i), rz_len[i], z->data[i]);

		rsge.addr = (uintptr_t)(z->rbuf.p + rz_off(i));
		rsge.length = (uint32_t)rz_len[i] + SLACK;
		rsge.lkey = z->rbuf.mr->lkey;
		memset(&rwr, 0, sizeof(rwr));
		rwr.wr_id = rz_wrid(z, ROLE_RECV, i);
		rwr.sg_list = &rsge;
		rwr.num_sge = 1;
		ret = ibv_post_recv(z->rx->qp, &rwr, &bad_r);
		if (ret) {
			vu_diag("ibv_post_recv %d of %d on %c failed: %s",
				i + 1, RZ_K, z->rx->d.label, strerror(ret));
			return false;
		}
	}
	for (i = 0; i < RZ_K; i++) {
		ssge.addr = (uintptr_t)(z->sbuf.p + rz_off(i));
		ssge.length = (uint32_t)rz_len[i];
		ssge.lkey = z->sbuf.mr->lkey;
		memset(&swr, 0, sizeof(swr));
		swr.wr_id = rz_wrid(z, ROLE_SEND, i);
		swr.sg_list = &ssge;
		swr.num_sge = 1;
		swr.opcode = z->imm[i] ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND;
		swr.send_flags = IBV_SEND_SIGNALED;
		if (z->imm[i])
			swr.imm_data = z->imm_be[i];
		ret = ibv_post_send(z->tx->qp, &swr, &bad_s);
		if (ret) {
			vu_diag("ibv_post_send %d of %d on %c failed: %s",
				i + 1, RZ_K, z->tx->d.label, strerror(ret));
			return false;
		}
	}
	return true;
}

/*
 * Poll and check tx's RZ_K send completions, wait until every message
 * has landed in rx's receive buffers, then settle_ms more.  rx's receive
 * CQ is not touched.
 */
static bool rz_settle(struct rz *z, double deadline, long settle_ms)
{
	struct ibv_wc wc[RZ_K];
	char what[96];
	bool ok = true;
	int got, i;

	got = vu_poll_cq(z->tx->scq, wc, RZ_K, deadline);
	if (got < RZ_K) {
		vu_diag("timed out after %.0f s: %d of %d send completions on "
			"%c", opt.timeout, got, RZ_K, z->tx->d.label);
		ok = false;
	}
	for (i = 0; i < got; i++) {
		snprintf(what, sizeof(what), "%c send CQE %d (%s %zuB)",
			 z->tx->d.label, i + 1, rz_opname(z, i), rz_len[i]);
		ok &= check_send_cqe(&wc[i], z->tx, IBV_WC_SEND,
				     rz_wrid(z, ROLE_SEND, i), what);
	}
	for (i = 0; i < RZ_K; i++) {
		const uint8_t *p = z->rbuf.p + rz_off(i);

		while (memcmp(p, z->data[i], rz_len[i]) && vu_now() < deadline)
			vu_nap_us(500);
		if (memcmp(p, z->data[i], rz_len[i]))
			vu_diag("message %d (%s %zuB) has not landed in %c's "
				"receive buffer after %.0f s", i + 1,
				rz_opname(z, i), rz_len[i], z->rx->d.label,
				opt.timeout);
	}
	if (settle_ms)
		vu_nap_us(settle_ms * 1000);
	return ok;
}

/*
 * Collect the round's RZ_K receive completions from rx's receive CQ and
 * check them in order, field by field, then the receive buffers.  With
 * pending, the completions were all in the CQ already (rz_settle()), so
 * the first ibv_poll_cq must return exactly RZ_K of them.
 */
static bool rz_collect(struct rz *z, bool pending, double deadline,
		       const char *when)
{
	struct ibv_wc wc[RZ_K + 4];
	char what[128], s[256];
	bool ok = true;
	int got = 0, r, i;

	if (pending) {
		r = ibv_poll_cq(z->rx->rcq, RZ_K + 4, wc);
		if (r < 0) {
			vu_diag("first ibv_poll_cq on %c's receive CQ %s "
				"failed (%d)", z->rx->d.label, when, r);
			ok = false;
		} else {
			got = r;
		}
		if (r >= 0 && r != RZ_K) {
			vu_diag("first ibv_poll_cq(%d) on %c's receive CQ %s "
				"returned %d completion(s), expected exactly "
				"the %d pending ones (their data had landed >= "
				"%d ms before)", RZ_K + 4, z->rx->d.label, when, r,
				RZ_K, RZ_SETTLE_MS);
			ok = false;
		}
	}
	if (got < RZ_K)
		got += vu_poll_cq(z->rx->rcq, wc + got, RZ_K - got, deadline);
	if (got < RZ_K) {
		vu_diag("timed out after %.0f s: %d of %d receive completions "
			"on %c %s (lost?)", opt.timeout, got, RZ_K,
			z->rx->d.label, when);
		ok = false;
	}
	for (i = 0; i < got && i < RZ_K; i++) {
		snprintf(what, sizeof(what), "%c receive CQE %d of %d (%s "
			 "%zuB) %s", z->rx->d.label, i + 1, RZ_K,
			 rz_opname(z, i), rz_len[i], when);
		ok &= check_recv_cqe(&wc[i], z->rx, z->tx, IBV_WC_RECV,
				     rz_wrid(z, ROLE_RECV, i),
				     (uint32_t)rz_len[i], z->imm[i],
				     z->imm_be[i], what);
	}
	for (; i < got; i++) {
		vu_wc_str(&wc[i], s, sizeof(s));
		vu_diag("unexpected extra CQE on %c receive CQ %s: %s",
			z->rx->d.label, when, s);
	}
	snprintf(what, sizeof(what), "%c receive CQ %s", z->rx->d.label, when);
	ok &= vu_cq_stays_empty(z->rx->rcq, 0, what);
	for (i = 0; i < RZ_K; i++) {
		snprintf(what, sizeof(what), "%c receive buffer %d (%s %zuB)",
			 z->rx->d.label, i + 1, rz_opname(z, i), rz_len[i]);
		ok &= check_range(what, z->rbuf.p, rz_off(i), rz_len[i],
				  z->data[i]);
	}
	return ok;
}

/* The other three CQs must stay empty. */
static bool rz_quiet(struct rz *z)
{
	char what[32];
	bool ok = true;

	vu_nap_us(1000);
	snprintf(what, sizeof(what), "%c send CQ", z->tx->d.label);
	ok &= vu_cq_stays_empty(z->tx->scq, 0, what);
	snprintf(what, sizeof(what), "%c receive CQ", z->tx->d.label);
	ok &= vu_cq_stays_empty(z->tx->rcq, 0, what);
	snprintf(what, sizeof(what), "%c send CQ", z->rx->d.label);
	ok &= vu_cq_stays_empty(z->rx->scq, 0, what);
	return ok;
}

/* A round left pending in rx's receive CQ (posted and settled). */
static bool rz_pend(struct rz *z, double deadline)
{
	if (!rz_post(z))
		return false;
	return rz_settle(z, deadline, RZ_SETTLE_MS);
}

/*
 * ibv_resize_cq() on rx's receive CQ, expecting success: ibv_cq->cqe at
 * least cqe afterwards.
 */
static bool rz_resize_ok(struct rz *z, int cqe, const char *why)
{
	struct ibv_cq *cq = z->rx->rcq;
	int before = cq->cqe, ret;

	errno = 0;
	ret = ibv_resize_cq(cq, cqe);
	if (ret) {
		vu_diag("ibv_resize_cq(%c receive CQ, %d) %s failed: %s (%d)%s",
			z->rx->d.label, cqe, why,
			strerror(ret < 0 ? errno : ret), ret, ret < 0 ?
			", and returned a negative value instead of an errno" :
			"");
		return false;
	}
	printf("# info: ibv_resize_cq(%c receive CQ, %d) %s: ibv_cq->cqe "
	       "%d -> %d\n", z->rx->d.label, cqe, why, before, cq->cqe);
	if (cq->cqe < cqe) {
		vu_diag("after ibv_resize_cq(%d) ibv_cq->cqe is %d, less than "
			"requested", cqe, cq->cqe);
		return false;
	}
	return true;
}

static bool rz_case_grow(struct rz *z)
{
	double deadline = vu_now() + opt.timeout;
	bool ok, resized;

	if (!rz_pend(z, deadline))
		return false;
	ok = resized = rz_resize_ok(z, RZ_GROW, "with the round pending");
	ok &= rz_collect(z, resized, deadline, "after the grow");
	ok &= rz_quiet(z);
	return ok;
}

static bool rz_case_shrink_fails(struct rz *z)
{
	struct ibv_cq *cq = z->rx->rcq;
	double deadline = vu_now() + opt.timeout;
	int before = cq->cqe, ret;
	bool ok;

	if (!rz_pend(z, deadline))
		return false;
	errno = 0;
	ret = ibv_resize_cq(cq, RZ_K - 1);
	ok = ret == EINVAL;
	if (!ok)
		vu_diag("ibv_resize_cq(%c receive CQ, %d) with %d completions "
			"pending returned %d (%s), expected EINVAL: a CQ of %d "
			"cannot hold them", z->rx->d.label, RZ_K - 1, RZ_K, ret,
			ret ? strerror(ret < 0 ? errno : ret) : "success",
			RZ_K - 1);
	if (cq->cqe != before) {
		vu_diag("ibv_cq->cqe changed from %d to %d by the %s", before,
			cq->cqe, ret ? "failed resize" : "resize");
		ok = false;
	}
	ok &= rz_collect(z, true, deadline, ret ? "after the failed shrink" :
			 "after the shrink");
	ok &= rz_quiet(z);
	return ok;
}

static bool rz_case_reuse(struct rz *z)
{
	double deadline = vu_now() + opt.timeout;
	bool ok;

	if (!rz_post(z))
		return false;
	ok = rz_settle(z, deadline, 0);
	ok &= rz_collect(z, false, deadline, "(resized before)");
	ok &= rz_quiet(z);
	return ok;
}

static bool rz_case_fit(struct rz *z)
{
	double deadline = vu_now() + opt.timeout;
	char when[64];
	bool ok, resized;
	int r;

	if (!rz_pend(z, deadline))
		return false;
	ok = resized = rz_resize_ok(z, RZ_K, "to exactly the pending round");
	ok &= rz_collect(z, resized, deadline, "after the shrink");
	ok &= rz_quiet(z);
	for (r = 0; r < RZ_ROUNDS; r++) {
		snprintf(when, sizeof(when), "after the shrink, round %d of "
			 "%d", r + 1, RZ_ROUNDS);
		deadline = vu_now() + opt.timeout;
		if (!rz_post(z))
			return false;
		ok &= rz_settle(z, deadline, 0);
		ok &= rz_collect(z, false, deadline, when);
		ok &= rz_quiet(z);
	}
	return ok;
}

/* After a failure: new QPs and a new receive CQ on rx, all CQs empty. */
static int rz_reset(struct rz *z, struct side *a, struct side *b,
		    enum ibv_mtu mtu)
{
	struct side *rx = z->rx;
	int ret;

	if (rx->qp) {
		ret = ibv_destroy_qp(rx->qp);
		if (ret)
			fprintf(stderr, "uc_test: %s: ibv_destroy_qp: %s\n",
				rx->d.name, strerror(ret));
		rx->qp = NULL;
	}
	ret = ibv_destroy_cq(rx->rcq);
	if (ret)
		fprintf(stderr, "uc_test: %s: ibv_destroy_cq: %s\n", rx->d.name,
			strerror(ret));
	rx->rcq = ibv_create_cq(rx->d.ctx, CQ_DEPTH, NULL, NULL, 0);
	if (!rx->rcq) {
		fprintf(stderr, "uc_test: %s: ibv_create_cq: %s\n", rx->d.name,
			strerror(errno));
		return -1;
	}
	return reset_pair(a, b, mtu);
}

/*
 * Run the resize cases, numbered from *ncase + 1.  If the QPs cannot be
 * recreated after a failure, the remaining cases fail without running.
 */
static void run_resize_cases(struct side *a, struct side *b,
			     enum ibv_mtu mtu, unsigned int *ncase,
			     unsigned int *nfail)
{
	static bool (*const cases[])(struct rz *z) = {
		rz_case_grow, rz_case_shrink_fails, rz_case_reuse,
		rz_case_fit,
	};
	char names[4][96];
	static struct rz z;
	bool alive = true, setup;
	size_t c;

	snprintf(names[0], sizeof(names[0]), "grow to %d with %d completions "
		 "pending", RZ_GROW, RZ_K);
	snprintf(names[1], sizeof(names[1]), "shrink to %d below %d pending "
		 "fails with EINVAL, nothing lost", RZ_K - 1, RZ_K);
	snprintf(names[2], sizeof(names[2]), "transfer after resize");
	snprintf(names[3], sizeof(names[3]), "shrink to %d holding %d "
		 "pending, then %d rounds through it", RZ_K, RZ_K, RZ_ROUNDS);
	memset(&z, 0, sizeof(z));
	z.tx = a;
	z.rx = b;
	printf("# CQ resize: %c (%s) receive CQ, ibv_cq->cqe %d, %d "
	       "completions kept pending, A->B SEND/SEND_WITH_IMM\n",
	       b->d.label, b->d.name, b->rcq->cqe, RZ_K);
	setup = !alloc_buf(a, &z.sbuf, RZ_BUF_LEN, 0) &&
		!alloc_buf(b, &z.rbuf, RZ_BUF_LEN, IBV_ACCESS_LOCAL_WRITE);
	vu_cq_drain(a->scq);
	vu_cq_drain(a->rcq);
	vu_cq_drain(b->scq);
	vu_cq_drain(b->rcq);
	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		bool ok;

		z.cno = ++*ncase;
		z.round = 0;
		if (!setup) {
			vu_diag("cannot allocate the resize test buffers");
			ok = false;
		} else if (!alive) {
			vu_diag("not run: the QPs could not be recreated");
			ok = false;
		} else {
			ok = cases[c](&z);
		}
		vu_diag_flush();
		printf("%sok %u - A->B resize %c rcq: %s\n", ok ? "" : "not ",
		       z.cno, b->d.label, names[c]);
		if (ok)
			continue;
		++*nfail;
		if (opt.keep_qps || !alive || !setup)
			continue;
		if (rz_reset(&z, a, b, mtu)) {
			printf("# cannot recreate the QPs, giving up\n");
			alive = false;
			continue;
		}
		printf("# QPs and %c receive CQ recreated: A 0x%x, B 0x%x\n",
		       b->d.label, a->qp->qp_num, b->qp->qp_num);
	}
	vu_buf_free(&z.sbuf);
	vu_buf_free(&z.rbuf);
}

/* ---- main --------------------------------------------------------------- */

#define MTU_HINT "raise the netdev MTU (the RoCE MTU is the largest of " \
	"256..4096 that fits in the netdev MTU minus headers), e.g. 'ip " \
	"link set NETDEV mtu 9000'"

int main(int argc, char **argv)
{
	struct side a = { .sq_psn = PSN_AB, .rq_psn = PSN_BA };
	struct side b = { .sq_psn = PSN_BA, .rq_psn = PSN_AB };
	size_t sizes[MAX_SIZES], maxlen = 0;
	unsigned int ncase = 0, nfail = 0;
	int ret = 1, i, d, o, s, l, mtu;
	enum ibv_mtu path_mtu;
	double t0 = vu_now();

	setvbuf(stdout, NULL, _IOLBF, 0);
	parse_args(argc, argv);
	a.d = opt.a;
	b.d = opt.b;

	/* sizes relative to the MTU are resolved later; bound them here
	 * by the largest MTU so that buffers can be sized first */
	for (i = 0; i < opt.nsizes; i++) {
		const struct size_tok *t = &opt.sizes[i];
		long long lo = (t->mtu_rel ? 256 : t->base) + t->delta;
		long long hi = (t->mtu_rel ? 4096 : t->base) + t->delta;

		/* mtu-N may still turn out negative, checked below */
		if ((!t->mtu_rel && lo < 0) || hi > (long long)MAX_SIZE)
			opt_usage_error("--sizes: '%s' out of range 0..%u",
					t->text, MAX_SIZE);
		if (hi < 0)
			hi = 0;
		if ((size_t)hi > maxlen)
			maxlen = (size_t)hi;
	}

	printf("KTAP version 1\n");
	printf("# uc_test: UC data path, A=%s B=%s\n", a.d.name, b.d.name);

	ret = open_side(&a, maxlen);
	if (ret == VU_EXIT_SKIP)
		printf("1..0 # SKIP device %s not found\n", a.d.name);
	if (!ret) {
		ret = open_side(&b, maxlen);
		if (ret == VU_EXIT_SKIP)
			printf("1..0 # SKIP device %s not found\n", b.d.name);
	}
	if (ret) {
		if (ret != VU_EXIT_SKIP)
			ret = 1;
		goto out;
	}
	ret = 1;

	mtu = opt.mtu;
	path_mtu = vu_path_mtu(&a.d, &b.d);
	if (mtu) {
		struct side *lo = a.d.port.active_mtu < b.d.port.active_mtu ?
				  &a : &b;

		if (mtu > vu_mtu_bytes(path_mtu)) {
			fprintf(stderr, "uc_test: --mtu %d exceeds the active "
				"MTU %d of %s (netdev %s): " MTU_HINT "\n",
				mtu, vu_mtu_bytes(path_mtu), lo->d.name,
				lo->d.ndev);
			goto out;
		}
		path_mtu = vu_mtu_enum(mtu);
	}
	mtu = vu_mtu_bytes(path_mtu);
	for (i = 0; i < opt.nsizes; i++) {
		long long v = (opt.sizes[i].mtu_rel ? mtu : opt.sizes[i].base)
			      + opt.sizes[i].delta;

		if (v < 0) {
			fprintf(stderr, "uc_test: --sizes: '%s' is negative "
				"at path MTU %d\n", opt.sizes[i].text, mtu);
			ret = OPT_EXIT_USAGE;
			goto out;
		}
		sizes[i] = (size_t)v;
	}
	expect = malloc(maxlen ? maxlen : 1);
	if (!expect) {
		fprintf(stderr, "uc_test: out of memory\n");
		goto out;
	}
	if (connect_pair(&a, &b, path_mtu))
		goto out;

	printf("# A: %s port %d GID[%d] %s (netdev %s) QPN 0x%x\n", a.d.name,
	       VU_PORT, a.d.gid_idx, a.d.gid_str, a.d.ndev, a.qp->qp_num);
	printf("# B: %s port %d GID[%d] %s (netdev %s) QPN 0x%x\n", b.d.name,
	       VU_PORT, b.d.gid_idx, b.d.gid_str, b.d.ndev, b.qp->qp_num);
	printf("# path MTU %d, PSN A->B 0x%06x, B->A 0x%06x, src_qp "
	       "expected: %s\n", mtu, PSN_AB, PSN_BA, opt.rxe_src_qp_quirk ?
	       "0 (--rxe-src-qp-quirk)" : "peer QPN");

	for (d = 0; d < 2; d++) {
		struct pair pr = d ? (struct pair){ &b, &a, "B->A", 1 } :
				     (struct pair){ &a, &b, "A->B", 0 };

		if (d ? !opt.ba : !opt.ab)
			continue;
		for (o = 0; o < OP_NUM; o++) {
			if (!opt.op_on[o])
				continue;
			for (s = 0; s < opt.nsizes; s++) {
				for (l = 1; l <= 3; l += 2) {
					size_t n = sizes[s];
					int nsge = l;
					bool ok;

					/*
					 * Deliberately skipped: 0 bytes has
					 * nothing to gather, so it runs once,
					 * with num_sge = 0 ("0sge"), not with
					 * 1 or 3 zero-length SGEs; 1 and 2
					 * bytes cannot be split into 3
					 * non-empty SGEs, so they run with
					 * 1 SGE only.
					 */
					if (n == 0) {
						if (l == 3)
							continue;
						nsge = 0;
					}
					if (l == 3 && n < 3)
						continue;
					ncase++;
					ok = run_case(&pr, (enum op)o, n, nsge,
						      ncase);
					vu_diag_flush();
					printf("%sok %u - %s %s %zuB %dsge\n",
					       ok ? "" : "not ", ncase,
					       pr.name, ops[o].name, n, nsge);
					if (ok)
						continue;
					nfail++;
					if (opt.keep_qps)
						continue;
					if (reset_pair(&a, &b, path_mtu)) {
						printf("# cannot recreate the "
						       "QPs, giving up\n");
						goto plan;
					}
					printf("# QPs recreated: A 0x%x, B "
					       "0x%x\n", a.qp->qp_num,
					       b.qp->qp_num);
				}
			}
		}
	}
	run_resize_cases(&a, &b, path_mtu, &ncase, &nfail);
plan:
	printf("1..%u\n", ncase);
	printf("# %u passed, %u failed, %.1f s\n", ncase - nfail, nfail,
	       vu_now() - t0);
	ret = nfail ? 1 : 0;
out:
	close_side(&a);
	close_side(&b);
	free(expect);
	return ret;
}
