// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * verbs_test - verbs semantics of snaa, as named tests by feature
 * (kselftest_harness): what libibverbs programs may rely on (IBA chapters
 * 10 and 11, Documentation/verbs.rst).  QPs are UC unless a test names
 * RC, UD or SRQ.
 *
 * Two fixtures.  "dev" tests use device A alone; "pair" tests connect QPs
 * on A with QPs on B (port 1, RoCE v2, global AH from the peer's GID, no
 * CM), in two variants: "two" (A and B) and "loopback" (A with itself).
 * Every test uses QPs of its own, and runs in a process of its own (the
 * harness forks); its individual checks are a KTAP subtest, indented,
 * before the harness's result line "ok N FIXTURE[.VARIANT].TEST".
 *
 *  dev.objects        argument checks of ibv_reg_mr, ibv_create_qp (RC and
 *                     UD created, RAW_PACKET refused; limits: 32 SGEs, 256
 *                     bytes inline), ibv_create_cq (1..65536 CQEs); lkey
 *                     == rkey; granted caps >= requested
 *  dev.posting        post_send/post_recv errors: too many SGEs and
 *                     opcodes UC has not (RDMA READ, atomics) give EINVAL,
 *                     a full queue ENOMEM, *bad_wr always the first WR not
 *                     posted, the WRs before it posted (seen as flush
 *                     completions)
 *  dev.qp_attrs       modify_qp refuses attributes out of range and a
 *                     false IBV_QP_CUR_STATE
 *  dev.random_numbers QPNs and MR keys drawn at random (no two of 64 in a
 *                     row within 64 of each other, spread over > 2^20)
 *  dev.crowd          4602 QPs and 8702 MRs (more than snaa's lookup tables
 *                     have buckets): distinct numbers and keys, and SENDs
 *                     to the QPs and MRs created first and last arrive
 *                     byte-exact (--no-crowd skips it)
 *  dev.doorbell       the doorbell method rings only the caller's own QPs'
 *                     queues (EINVAL for another context's, the GSI QP, a
 *                     destroyed one's number, a reserved bit, the RQ of a
 *                     QP on an SRQ, a missing or short attribute), and the
 *                     POST_SEND and POST_RECV write commands are refused
 *                     (EOPNOTSUPP)
 *  dev.loopback_hijack on loopback, another context's QP that names our QP
 *                     and its PSN is dropped (drop_bad_address), UC and RC
 *  pair.qp_states     the QP state machine with the attribute masks the IBA
 *                     requires for UC (RESET->INIT: PKEY_INDEX, PORT,
 *                     ACCESS_FLAGS; INIT->RTR: AV, PATH_MTU, DEST_QPN,
 *                     RQ_PSN; RTR->RTS: SQ_PSN), illegal transitions
 *                     refused with EINVAL, ibv_query_qp returning exactly
 *                     what was set (and the PSNs advanced by the traffic),
 *                     RTS->SQD->RTS (WRs posted in SQD wait for RTS),
 *                     INIT/RTR/RTS/SQD -> ERR (RESET -> ERR is not an IBA
 *                     transition: EINVAL), ERR -> RESET -> ... -> RTS and
 *                     the QP is usable again
 *  pair.flush         ERR flushes every posted receive WR in order with
 *                     IBV_WC_WR_FLUSH_ERR, and also WRs posted while in
 *                     ERR; a send-side local error (invalid lkey:
 *                     LOC_PROT_ERR) moves the QP to ERR and flushes the
 *                     rest of both queues
 *  pair.cq_events     completion channel: ibv_req_notify_cq next /
 *                     solicited only
 *  pair.inline        IBV_SEND_INLINE SEND and RDMA WRITE of 1..max_inline
 *                     bytes from an unregistered buffer that is overwritten
 *                     as soon as ibv_post_send returns
 *  pair.rx_errors     a SEND longer than the receive WR: IBV_WC_LOC_LEN_ERR,
 *                     QP to ERR (documented), the other receive WRs
 *                     flushed; an RDMA WRITE to an MR without REMOTE_WRITE:
 *                     dropped and counted (hw_counters drop_access/
 *                     drop_bad_rkey), nothing written, no completion, the
 *                     QP keeps working (UC responder)
 *  pair.address_handles  address handles (UD)
 *  pair.cq_overflow   a full CQ: the completion that does not fit is lost,
 *                     the CQ raises IBV_EVENT_CQ_ERR, the QP
 *                     IBV_EVENT_QP_FATAL and enters ERR, hw_counters
 *                     cqe_overflow moves
 *  pair.modify_all_or_nothing  modify_qp is all or nothing (a failed
 *                     INIT->RTR leaves dest_qp_num alone)
 *  pair.rd_atomic     the READ/atomic limits of RC QPs
 *  pair.lowered_producer  an SQ producer moved back behind the WQEs
 *                     fetched fails the QP (IBV_EVENT_QP_FATAL) and
 *                     overwrites no slot
 *  pair.modify_race   modify_qp racing the data path
 *  pair.msg_size      messages at the size limits
 *  pair.cq_ex         the extended CQ (ibv_create_cq_ex, ibv_start_poll)
 *  pair.wr_api        the ibv_wr_* send API
 *  pair.srq           shared receive queues
 *  pair.mw            memory windows on RC QPs: type 1 (ibv_bind_mw) and
 *                     type 2 (IBV_WR_BIND_MW) binds in SQ order, access
 *                     with the window's rights and range only (its MR has
 *                     no remote rights), type 2 only through the QP it was
 *                     bound on, rebind, unbind, IBV_WR_LOCAL_INV, SEND with
 *                     invalidate (IBV_WC_WITH_INV, invalidated_rkey),
 *                     ibv_dealloc_mw, ibv_dereg_mr EBUSY while bound, and
 *                     the error statuses of binds and invalidations; a
 *                     storm of 1024 unsignaled bind/invalidate pairs in
 *                     one post is worked off in turns of the send queue's
 *                     budget (sq_budget_yields); 200 rounds of
 *                     ibv_dealloc_mw racing a bind leave the MR free to
 *                     deregister
 *
 * Completion fields are checked as the IBA defines them: opcode and
 * byte_len only where they are defined (not for flush errors of send
 * WRs).
 *
 * Options: --dev-a and --dev-b (a test whose device is missing is
 * skipped), --tests LIST (e.g. "pair.srq,dev.objects"; the others are
 * skipped), --no-crowd (dev.crowd skipped: minutes under KASAN); see
 * --help.  SNAA_TIME_SCALE gives a slow machine more time.  Output is the
 * harness's TAP (vu_harness.h); exit status 0 iff no test failed, 1
 * otherwise, 2 usage error.
 *
 * Build: make -C selftests/snaa verbs_test (verbs_test.c, verbs_util.c,
 * userspace/common, with -libverbs; kselftest_harness.h from the kernel
 * tree it is built in, else from the installed linux-source tarball)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

#include "snaa_opt.h"
#include "verbs_util.h"
#include "vu_harness.h"

#define CQ_DEPTH	256
#define QP_ACCESS	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE)
#define RC_ACCESS	(QP_ACCESS | IBV_ACCESS_REMOTE_READ)

/* documented limits (Documentation/verbs.rst, snaa-abi.h) */
#define LIM_SGE		32
#define LIM_INLINE	256
#define LIM_CQE		65536
#define LIM_RD_ATOMIC	128
#define LIM_SRQ		16384
#define LIM_SRQ_WR	16384
#define LIM_MW		65536

/* per-QP buffer, one MR (LOCAL_WRITE | REMOTE_WRITE) */
#define BUF_LEN		(64 * 1024)
#define RCV_OFF		0		/* receive buffers */
#define WR_OFF		16384		/* RDMA WRITE target */
#define SRC_OFF		32768		/* send source */
#define AUX_OFF		49152		/* anything else */
#define GUARD		64		/* bytes checked after a target */
#define POISON		0xa5

/* s: a completion that must come, times SNAA_TIME_SCALE */
#define CQE_TIMEOUT	(5.0 * g_time_scale)
#define EVENT_MS	5000		/* a CQ event that must come */
#define QUIET_MS	500		/* "nothing happens" windows */
#define SHORT_MS	200

#define MAX_WR		64		/* chains built in dev.posting */

/* ---- checks ------------------------------------------------------------- */

/* got == want, else a diagnostic naming what. */
static bool eq(const char *what, unsigned long long got,
	       unsigned long long want)
{
	if (got == want)
		return true;
	vu_diag("%s: got %llu (0x%llx), expected %llu (0x%llx)", what, got, got,
		want, want);
	return false;
}

static bool eq_state(const char *what, int got, int want)
{
	if (got == want)
		return true;
	vu_diag("%s: QP state %s (%d), expected %s (%d)", what,
		vu_qp_state_str(got), got, vu_qp_state_str(want), want);
	return false;
}

/* A verb that returns an errno value (0 on success). */
static bool eq_ret(const char *what, int got, int want)
{
	if (got == want)
		return true;
	vu_diag("%s returned %s (%d), expected %s (%d)", what,
		vu_errno_str(got), got, vu_errno_str(want), want);
	return false;
}

/* A verb that returns an object or NULL with errno: must have failed. */
static bool failed_with(const char *what, const void *obj, int err, int want)
{
	if (obj) {
		vu_diag("%s succeeded, expected failure with %s", what,
			vu_errno_str(want));
		return false;
	}
	if (err != want) {
		vu_diag("%s failed with errno %s (%d), expected %s (%d)", what,
			vu_errno_str(err), err, vu_errno_str(want), want);
		return false;
	}
	return true;
}

/* ---- options ------------------------------------------------------------- */

static struct {
	struct vu_dev a, b;		/* --dev-a, --gid-a, --ipv6, ... */
	bool no_crowd;			/* --no-crowd */
} opt = { .a = VU_DEV_INIT('A'), .b = VU_DEV_INIT('B') };

static void usage(FILE *f)
{
	fprintf(f,
"Usage: verbs_test --dev-a NAME [--gid-a IDX] --dev-b NAME [--gid-b IDX]\n"
"                  [--ipv6] [--tests LIST] [--no-crowd] [--help]\n"
"\n"
"Verbs semantics of snaa as named tests (kselftest_harness): fixture\n"
"\"dev\" on device A alone, fixture \"pair\" between A and B (variant\n"
"\"two\") and on A with itself (variant \"loopback\"); port 1, RoCE v2,\n"
"no CM.  The file's header lists what each test checks.  Output: TAP,\n"
"each test's checks a KTAP subtest before its result line.\n"
"\n"
VU_PAIR_USAGE
"  --tests LIST          comma-separated tests to run, e.g.\n"
"                        dev.objects,pair.srq (both variants of a pair\n"
"                        test); the others are skipped (default: all)\n"
"  --no-crowd            skip dev.crowd (4600 QPs and 8700 MRs, more\n"
"                        than the lookup tables have buckets): for a slow\n"
"                        kernel whose other tests chain the tables\n"
"  --help                show this help\n"
"\n"
"Exit status: 0 no test failed, 1 a test failed, 2 usage error.\n");
}

static void parse_args(int argc, char **argv)
{
	enum { O_TESTS = VU_OPT_NEXT, O_NO_CROWD };
	static const struct option lopts[] = {
		VU_PAIR_OPTIONS,
		{ "tests", required_argument, NULL, O_TESTS },
		{ "no-crowd", no_argument, NULL, O_NO_CROWD },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
		switch (c) {
		case O_TESTS:
			vu_tests = optarg;
			break;
		case O_NO_CROWD:
			opt.no_crowd = true;
			break;
		default:
			if (!vu_pair_option(c, optarg, &opt.a, &opt.b))
				opt_help_or_error(c, argv, usage);
		}
	}
	opt_no_operands(argc, argv);
	vu_pair_options_check(&opt.a, &opt.b);
}

/* ---- endpoints: a QP with its CQs, buffer and MR ------------------------- */

struct qp_req {
	uint32_t send_wr, recv_wr, send_sge, recv_sge, inline_data;
	bool channel;			/* receive CQ on a comp. channel */
	int rcq_depth;			/* receive CQ entries; 0: CQ_DEPTH */
	bool rcq_ex;			/* receive CQ from ibv_create_cq_ex */
	uint64_t send_ops;		/* ibv_create_qp_ex send_ops_flags */
	bool rc;			/* an RC QP (RC_ACCESS), not UC */
};

static const struct qp_req REQ_DEFAULT = { 16, 16, 2, 2, 0, false, 0, false, 0,
					   false };

struct ep {
	char label;
	struct vu_dev *d;
	struct ibv_comp_channel *ch;
	struct ibv_cq *scq, *rcq;
	struct ibv_cq_ex *rcq_ex;	/* rcq, if qp_req.rcq_ex */
	struct ibv_qp *qp;
	struct ibv_qp_cap cap;		/* granted */
	struct vu_buf mem;		/* BUF_LEN bytes, QP_ACCESS */
	uint32_t sq_psn, rq_psn;
	enum ibv_mtu mtu;		/* path MTU set at RTR */
};

static enum ibv_mtu g_mtu;		/* min of the ports' active MTUs */
static double g_time_scale = 1.0;	/* SNAA_TIME_SCALE: a slow machine */
static uint32_t psn_seed = 0x5a5a00;

static void ep_close(struct ep *e)
{
	if (e->qp && ibv_destroy_qp(e->qp))
		fprintf(stderr, "verbs_test: ibv_destroy_qp failed\n");
	vu_buf_free(&e->mem);
	if (e->scq)
		ibv_destroy_cq(e->scq);
	if (e->rcq)
		ibv_destroy_cq(e->rcq);
	if (e->ch)
		ibv_destroy_comp_channel(e->ch);
	memset(e, 0, sizeof(*e));
}

/* CQs, buffer, MR and a UC (or RC) QP in RESET; diagnostics on failure. */
static int ep_open(struct ep *e, struct vu_dev *d, char label,
		   const struct qp_req *r)
{
	struct ibv_qp_cap cap = {
		.max_send_wr = r->send_wr,
		.max_recv_wr = r->recv_wr,
		.max_send_sge = r->send_sge,
		.max_recv_sge = r->recv_sge,
		.max_inline_data = r->inline_data,
	};
	int ret;

	memset(e, 0, sizeof(*e));
	e->label = label;
	e->d = d;
	if (r->channel) {
		e->ch = ibv_create_comp_channel(d->ctx);
		if (!e->ch) {
			vu_diag("%c: ibv_create_comp_channel: %s", label,
				strerror(errno));
			goto err;
		}
	}
	e->scq = ibv_create_cq(d->ctx, CQ_DEPTH, NULL, NULL, 0);
	if (r->rcq_ex) {
		struct ibv_cq_init_attr_ex ca = {
			.cqe = r->rcq_depth ? r->rcq_depth : CQ_DEPTH,
			.cq_context = e,
			.channel = e->ch,
			.wc_flags = IBV_WC_STANDARD_FLAGS,
		};

		e->rcq_ex = ibv_create_cq_ex(d->ctx, &ca);
		e->rcq = e->rcq_ex ? ibv_cq_ex_to_cq(e->rcq_ex) : NULL;
	} else {
		e->rcq = ibv_create_cq(d->ctx,
				       r->rcq_depth ? r->rcq_depth : CQ_DEPTH,
				       e, e->ch, 0);
	}
	if (!e->scq || !e->rcq) {
		vu_diag("%c: ibv_create_cq: %s", label, strerror(errno));
		goto err;
	}
	ret = vu_buf_alloc(&e->mem, d->pd, BUF_LEN, QP_ACCESS, POISON);
	if (ret) {
		vu_diag("%c: %d-byte buffer and MR: %s", label, BUF_LEN,
			strerror(ret));
		goto err;
	}
	if (r->send_ops) {
		struct ibv_qp_init_attr_ex ax = {
			.send_cq = e->scq, .recv_cq = e->rcq, .cap = cap,
			.qp_type = r->rc ? IBV_QPT_RC : IBV_QPT_UC,
			.pd = d->pd,
			.comp_mask = IBV_QP_INIT_ATTR_PD |
				     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
			.send_ops_flags = r->send_ops,
		};

		e->qp = ibv_create_qp_ex(d->ctx, &ax);
		if (e->qp)
			cap = ax.cap;
	} else {
		e->qp = vu_qp_create(d->pd, r->rc ? IBV_QPT_RC : IBV_QPT_UC,
				     e->scq, e->rcq, &cap);
	}
	if (!e->qp) {
		vu_diag("%c: ibv_create_qp(%s): %s", label, r->rc ? "RC" : "UC",
			strerror(errno));
		goto err;
	}
	e->cap = cap;
	return 0;
err:
	ep_close(e);
	return -1;
}

static int ep_init(struct ep *e)
{
	return vu_qp_init(e->qp, e->qp->qp_type == IBV_QPT_RC ? RC_ACCESS :
								 QP_ACCESS);
}

static int ep_rtr(struct ep *e, const struct ep *peer, enum ibv_mtu mtu)
{
	e->mtu = mtu;
	return vu_qp_rtr(e->qp, e->d->gid_idx, &peer->d->gid,
			 peer->qp->qp_num, mtu, e->rq_psn);
}

static int ep_rts(struct ep *e)
{
	return vu_qp_rts(e->qp, e->sq_psn);
}

static void new_psns(struct ep *a, struct ep *b)
{
	psn_seed += 0x010203;
	a->sq_psn = b->rq_psn = psn_seed & 0xffffff;
	psn_seed += 0x030201;
	b->sq_psn = a->rq_psn = psn_seed & 0xffffff;
}

/* Both QPs RESET -> RTS, connected to each other. */
static int pair_connect(struct ep *a, struct ep *b, enum ibv_mtu mtu)
{
	struct ep *s[2] = { a, b };
	int i, ret;

	new_psns(a, b);
	for (i = 0; i < 2; i++) {
		ret = ep_init(s[i]);
		if (ret) {
			vu_diag("%c: RESET->INIT: %s", s[i]->label,
				strerror(ret));
			return -1;
		}
	}
	for (i = 0; i < 2; i++) {
		ret = ep_rtr(s[i], s[1 - i], mtu);
		if (ret) {
			vu_diag("%c: INIT->RTR: %s", s[i]->label,
				strerror(ret));
			return -1;
		}
	}
	for (i = 0; i < 2; i++) {
		ret = ep_rts(s[i]);
		if (ret) {
			vu_diag("%c: RTR->RTS: %s", s[i]->label, strerror(ret));
			return -1;
		}
	}
	return 0;
}

/* ---- case fixture --------------------------------------------------------- */

enum fx_state { FX_RESET, FX_RTS };

/*
 * The setup of a case: endpoint a on device da with the QP request ra,
 * b on db with rb (NULL: REQ_DEFAULT), both QPs left in RESET (FX_RESET)
 * or connected to each other at the path MTU and in RTS (FX_RTS).  If
 * that fails, the case's check "NAME: setup" fails (with the
 * diagnostics), nothing stays allocated and false is returned.
 * fx_teardown() frees a and b (also after a failed fx_setup()).
 */
static bool fx_setup(const char *name, enum fx_state state,
		     struct ep *a, struct vu_dev *da, const struct qp_req *ra,
		     struct ep *b, struct vu_dev *db, const struct qp_req *rb)
{
	memset(a, 0, sizeof(*a));
	memset(b, 0, sizeof(*b));
	if (!ep_open(a, da, 'A', ra ? ra : &REQ_DEFAULT) &&
	    !ep_open(b, db, 'B', rb ? rb : &REQ_DEFAULT) &&
	    (state == FX_RESET || !pair_connect(a, b, g_mtu)))
		return true;
	vu_report(false, "%s: setup", name);
	ep_close(a);
	ep_close(b);
	return false;
}

static void fx_teardown(struct ep *a, struct ep *b)
{
	ep_close(a);
	ep_close(b);
}

/* ---- posting and completions --------------------------------------------- */

/*
 * A message of len bytes went from tx to rx: advance the PSNs we expect
 * ibv_query_qp to report (the next PSN to send / expected), one per
 * packet of the path MTU, a 0-byte message taking one.
 */
static void psn_advance(struct ep *tx, struct ep *rx, uint32_t len)
{
	uint32_t mtu = 128u << tx->mtu;
	uint32_t n = len ? (len + mtu - 1) / mtu : 1;

	tx->sq_psn = (tx->sq_psn + n) & 0xffffff;
	rx->rq_psn = (rx->rq_psn + n) & 0xffffff;
}

static int post_recv1(struct ep *e, uint64_t wr_id, size_t off, uint32_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(e->mem.p + off),
		.length = len,
		.lkey = e->mem.mr->lkey,
	};
	struct ibv_recv_wr wr = {
		.wr_id = wr_id,
		.sg_list = len ? &sge : NULL,
		.num_sge = len ? 1 : 0,
	}, *bad = NULL;

	return ibv_post_recv(e->qp, &wr, &bad);
}

static int post_send1(struct ep *e, enum ibv_wr_opcode op, uint64_t wr_id,
		      size_t off, uint32_t len, unsigned int flags,
		      uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(e->mem.p + off),
		.length = len,
		.lkey = e->mem.mr->lkey,
	};
	struct ibv_send_wr wr, *bad = NULL;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = len ? &sge : NULL;
	wr.num_sge = len ? 1 : 0;
	wr.opcode = op;
	wr.send_flags = flags;
	if (op == IBV_WR_RDMA_WRITE || op == IBV_WR_RDMA_WRITE_WITH_IMM) {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	return ibv_post_send(e->qp, &wr, &bad);
}

/*
 * Check a CQE: wr_id, status and qp_num always; opcode unless < 0;
 * byte_len unless < 0.
 */
static bool check_wc(const char *what, const struct ibv_wc *wc,
		     uint64_t wr_id, enum ibv_wc_status status, int opcode,
		     uint32_t qp_num, long long byte_len)
{
	bool ok = true;
	char s[256];

	if (wc->wr_id != wr_id) {
		vu_diag("%s: wr_id 0x%" PRIx64 ", expected 0x%" PRIx64, what,
			wc->wr_id, wr_id);
		ok = false;
	}
	if (wc->status != status) {
		vu_diag("%s: status %s (%d), expected %s (%d)", what,
			ibv_wc_status_str(wc->status), wc->status,
			ibv_wc_status_str(status), status);
		ok = false;
	}
	if (opcode >= 0 && (int)wc->opcode != opcode) {
		vu_diag("%s: opcode %s (%d), expected %s (%d)", what,
			vu_wc_opcode_str(wc->opcode), wc->opcode,
			vu_wc_opcode_str(opcode), opcode);
		ok = false;
	}
	if (wc->qp_num != qp_num) {
		vu_diag("%s: qp_num 0x%x, expected 0x%x", what, wc->qp_num,
			qp_num);
		ok = false;
	}
	if (byte_len >= 0 && wc->byte_len != (unsigned long long)byte_len) {
		vu_diag("%s: byte_len %u, expected %lld", what, wc->byte_len,
			byte_len);
		ok = false;
	}
	if (!ok) {
		vu_wc_str(wc, s, sizeof(s));
		vu_diag("  %s", s);
	}
	return ok;
}

/* Wait for one CQE on cq and check it; a timeout is a diagnostic. */
static bool expect_cqe(const char *what, struct ibv_cq *cq, uint64_t wr_id,
		       enum ibv_wc_status status, int opcode, uint32_t qp_num,
		       long long byte_len)
{
	struct ibv_wc wc;

	if (vu_poll_cq(cq, &wc, 1, vu_now() + CQE_TIMEOUT) != 1) {
		vu_diag("%s: no completion within %.0f s", what, CQE_TIMEOUT);
		return false;
	}
	return check_wc(what, &wc, wr_id, status, opcode, qp_num, byte_len);
}

/*
 * Expect exactly n flush completions on cq with wr_ids ids[0..n-1] in
 * that order; opcode checked if >= 0.  Nothing more may follow.
 */
static bool expect_flushes(const char *what, struct ibv_cq *cq,
			   const uint64_t *ids, int n, int opcode,
			   uint32_t qp_num)
{
	struct ibv_wc wc[MAX_WR];
	char name[128];
	bool ok = true;
	int got, i;

	got = vu_poll_cq(cq, wc, n, vu_now() + CQE_TIMEOUT);
	if (got != n) {
		vu_diag("%s: %d of %d flush completions within %.0f s", what,
			got, n, CQE_TIMEOUT);
		ok = false;
	}
	for (i = 0; i < got; i++) {
		snprintf(name, sizeof(name), "%s: CQE %d", what, i);
		ok &= check_wc(name, &wc[i], ids[i], IBV_WC_WR_FLUSH_ERR,
			       opcode, qp_num, -1);
	}
	ok &= vu_cq_stays_empty(cq, SHORT_MS, what);
	return ok;
}

/*
 * SEND len bytes from tx to rx (receive buffer len + GUARD bytes) and
 * check both completions, the data and the untouched guard.
 */
static bool send_msg(struct ep *tx, struct ep *rx, uint32_t len,
		     uint64_t tag, const char *what)
{
	uint64_t rid = 0x7200000000000000ull | tag;
	uint64_t sid = 0x5300000000000000ull | tag;
	char name[128];
	bool ok = true;
	int ret;

	vu_fill_prng(tx->mem.p + SRC_OFF, len, tag);
	memset(rx->mem.p + RCV_OFF, POISON, len + GUARD);
	ret = post_recv1(rx, rid, RCV_OFF, len + GUARD);
	if (ret) {
		vu_diag("%s: ibv_post_recv on %c: %s", what, rx->label,
			strerror(ret));
		return false;
	}
	ret = post_send1(tx, IBV_WR_SEND, sid, SRC_OFF, len,
			 IBV_SEND_SIGNALED, 0, 0);
	if (ret) {
		vu_diag("%s: ibv_post_send on %c: %s", what, tx->label,
			strerror(ret));
		return false;
	}
	psn_advance(tx, rx, len);
	snprintf(name, sizeof(name), "%s: %c send CQE", what, tx->label);
	ok &= expect_cqe(name, tx->scq, sid, IBV_WC_SUCCESS, IBV_WC_SEND,
			 tx->qp->qp_num, -1);
	snprintf(name, sizeof(name), "%s: %c receive CQE", what, rx->label);
	ok &= expect_cqe(name, rx->rcq, rid, IBV_WC_SUCCESS, IBV_WC_RECV,
			 rx->qp->qp_num, len);
	if (ok) {
		uint8_t want[BUF_LEN / 4];

		vu_fill_prng(want, len, tag);
		snprintf(name, sizeof(name), "%s: data", what);
		ok &= vu_bytes_eq(name, rx->mem.p + RCV_OFF, want, len, 0);
		snprintf(name, sizeof(name), "%s: bytes after the message",
			 what);
		ok &= vu_bytes_all(name, rx->mem.p + RCV_OFF + len, POISON,
				   GUARD, 0);
	}
	return ok;
}

/* ---- hw counters --------------------------------------------------------- */

/* ---- dev.objects: objects and arguments ---------------------------------- */

static struct ibv_qp *try_qp(struct vu_dev *d, struct ibv_cq *cq,
			     enum ibv_qp_type type, const struct ibv_qp_cap *c,
			     struct ibv_qp_cap *granted, int *err)
{
	struct ibv_qp_cap cap = *c;
	struct ibv_qp *qp;

	errno = 0;
	qp = vu_qp_create(d->pd, type, cq, cq, &cap);
	*err = errno;
	if (granted)
		*granted = cap;
	return qp;
}

/*
 * refuse_mr(), refuse_qp(), refuse_cq(): one check each, "objects:
 * NAME" (printf format): creating the object must fail with errno want
 * (what: the call, for the diagnostic).  An object that was created
 * nonetheless is destroyed again.
 */
static void refused(const char *what, const void *obj, int err, int want,
		    const char *fmt, va_list ap)
{
	char name[160];

	vsnprintf(name, sizeof(name), fmt, ap);
	vu_report(failed_with(what, obj, err, want), "objects: %s", name);
}

static void __attribute__((format(printf, 7, 8)))
refuse_mr(struct vu_dev *d, void *p, size_t len, int access, int want,
	  const char *what, const char *fmt, ...)
{
	struct ibv_mr *mr;
	va_list ap;
	int err;

	errno = 0;
	mr = ibv_reg_mr(d->pd, p, len, access);
	err = errno;
	va_start(ap, fmt);
	refused(what, mr, err, want, fmt, ap);
	va_end(ap);
	if (mr)
		ibv_dereg_mr(mr);
}

static void __attribute__((format(printf, 7, 8)))
refuse_qp(struct vu_dev *d, struct ibv_cq *cq, enum ibv_qp_type type,
	  const struct ibv_qp_cap *c, int want, const char *what,
	  const char *fmt, ...)
{
	struct ibv_qp *qp;
	va_list ap;
	int err;

	qp = try_qp(d, cq, type, c, NULL, &err);
	va_start(ap, fmt);
	refused(what, qp, err, want, fmt, ap);
	va_end(ap);
	if (qp)
		ibv_destroy_qp(qp);
}

static void __attribute__((format(printf, 5, 6)))
refuse_cq(struct vu_dev *d, int cqe, int want, const char *what,
	  const char *fmt, ...)
{
	struct ibv_cq *cq;
	va_list ap;
	int err;

	errno = 0;
	cq = ibv_create_cq(d->ctx, cqe, NULL, NULL, 0);
	err = errno;
	va_start(ap, fmt);
	refused(what, cq, err, want, fmt, ap);
	va_end(ap);
	if (cq)
		ibv_destroy_cq(cq);
}

static void case_objects(struct vu_dev *d)
{
	static const struct ibv_qp_cap base = { 4, 4, 1, 1, 0 };
	struct ibv_qp_cap c, g;
	struct ibv_mr *mr, *mr2;
	struct ibv_cq *cq, *cq2;
	struct ibv_qp *qp;
	void *p = NULL;
	bool ok;
	int err;

	printf("# objects and arguments (device %s)\n", d->name);
	if (posix_memalign(&p, 4096, 8192)) {
		vu_report(false, "objects: setup (out of memory)");
		return;
	}

	refuse_mr(d, p, 4096, IBV_ACCESS_REMOTE_WRITE, EINVAL,
		  "ibv_reg_mr(REMOTE_WRITE)", "ibv_reg_mr with REMOTE_WRITE "
		  "but no LOCAL_WRITE fails with EINVAL");
	refuse_mr(d, p, 4096, IBV_ACCESS_REMOTE_ATOMIC, EINVAL,
		  "ibv_reg_mr(REMOTE_ATOMIC)", "ibv_reg_mr with REMOTE_ATOMIC "
		  "but no LOCAL_WRITE fails with EINVAL");
	refuse_mr(d, p, 0, IBV_ACCESS_LOCAL_WRITE, EINVAL,
		  "ibv_reg_mr(length 0)", "ibv_reg_mr of length 0 fails with "
		  "EINVAL");

	ok = true;
	mr = ibv_reg_mr(d->pd, p, 8192, QP_ACCESS);
	mr2 = ibv_reg_mr(d->pd, (uint8_t *)p + 100, 1000, 0);
	if (!mr || !mr2) {
		vu_diag("ibv_reg_mr failed: %s", strerror(errno));
		ok = false;
	} else {
		ok &= eq("LOCAL_WRITE|REMOTE_WRITE MR: rkey vs lkey", mr->rkey,
			 mr->lkey);
		ok &= eq("local read only MR: rkey vs lkey", mr2->rkey,
			 mr2->lkey);
		ok &= eq("MR length", mr->length, 8192);
		ok &= eq("MR addr", (uintptr_t)mr->addr, (uintptr_t)p);
		if (mr->lkey == mr2->lkey) {
			vu_diag("two MRs have the same lkey 0x%x", mr->lkey);
			ok = false;
		}
	}
	vu_report(ok, "objects: a valid MR has lkey == rkey (and its own key)");
	if (mr)
		ibv_dereg_mr(mr);
	if (mr2)
		ibv_dereg_mr(mr2);

	cq = ibv_create_cq(d->ctx, CQ_DEPTH, NULL, NULL, 0);
	if (!cq) {
		vu_diag("ibv_create_cq(%d): %s", CQ_DEPTH, strerror(errno));
		vu_report(false, "objects: setup (CQ)");
		free(p);
		return;
	}

	{
		static const enum ibv_qp_type types[] = {
			IBV_QPT_RC, IBV_QPT_UD,
		};
		struct ibv_qp *q;
		size_t i;

		ok = true;
		for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
			c = base;
			q = vu_qp_create(d->pd, types[i], cq, cq, &c);
			if (!q) {
				vu_diag("ibv_create_qp(type %d): %s", types[i],
					strerror(errno));
				ok = false;
				continue;
			}
			ok &= eq("qp_type", q->qp_type, types[i]);
			ibv_destroy_qp(q);
		}
		vu_report(ok, "objects: RC and UD QPs are created with the "
			  "same caps as UC");
	}
	refuse_qp(d, cq, IBV_QPT_RAW_PACKET, &base, EOPNOTSUPP,
		  "ibv_create_qp(RAW_PACKET)", "ibv_create_qp of type "
		  "RAW_PACKET fails with EOPNOTSUPP");
	c = base;
	c.max_send_sge = LIM_SGE + 1;
	refuse_qp(d, cq, IBV_QPT_UC, &c, EINVAL,
		  "ibv_create_qp(UC, max_send_sge 33)", "UC QP with "
		  "max_send_sge %d fails with EINVAL", LIM_SGE + 1);
	c = base;
	c.max_recv_sge = LIM_SGE + 1;
	refuse_qp(d, cq, IBV_QPT_UC, &c, EINVAL,
		  "ibv_create_qp(UC, max_recv_sge 33)", "UC QP with "
		  "max_recv_sge %d fails with EINVAL", LIM_SGE + 1);
	c = base;
	c.max_inline_data = LIM_INLINE + 1;
	refuse_qp(d, cq, IBV_QPT_UC, &c, EINVAL,
		  "ibv_create_qp(UC, max_inline_data 257)", "UC QP with "
		  "max_inline_data %d fails with EINVAL", LIM_INLINE + 1);

	c = base;
	c.max_send_sge = LIM_SGE;
	c.max_recv_sge = LIM_SGE;
	c.max_inline_data = LIM_INLINE;
	qp = try_qp(d, cq, IBV_QPT_UC, &c, &g, &err);
	ok = true;
	if (!qp) {
		vu_diag("ibv_create_qp(UC, 32 SGEs, 256 inline) failed: %s",
			vu_errno_str(err));
		ok = false;
	} else {
		if (g.max_send_sge < LIM_SGE || g.max_recv_sge < LIM_SGE ||
		    g.max_inline_data < LIM_INLINE) {
			vu_diag("granted max_send_sge %u, max_recv_sge %u, "
				"max_inline_data %u", g.max_send_sge,
				g.max_recv_sge, g.max_inline_data);
			ok = false;
		}
		ibv_destroy_qp(qp);
	}
	vu_report(ok, "objects: UC QP at the limits (%d SGEs each way, %d "
		  "bytes inline) is created", LIM_SGE, LIM_INLINE);

	c.max_send_wr = 5;
	c.max_recv_wr = 7;
	c.max_send_sge = 3;
	c.max_recv_sge = 5;
	c.max_inline_data = 100;
	qp = try_qp(d, cq, IBV_QPT_UC, &c, &g, &err);
	ok = true;
	if (!qp) {
		vu_diag("ibv_create_qp(UC) failed: %s", vu_errno_str(err));
		ok = false;
	} else {
		if (g.max_send_wr < c.max_send_wr ||
		    g.max_recv_wr < c.max_recv_wr ||
		    g.max_send_sge < c.max_send_sge ||
		    g.max_recv_sge < c.max_recv_sge ||
		    g.max_inline_data < c.max_inline_data) {
			vu_diag("requested send_wr %u recv_wr %u send_sge %u "
				"recv_sge %u inline %u", c.max_send_wr,
				c.max_recv_wr, c.max_send_sge, c.max_recv_sge,
				c.max_inline_data);
			vu_diag("granted   send_wr %u recv_wr %u send_sge %u "
				"recv_sge %u inline %u", g.max_send_wr,
				g.max_recv_wr, g.max_send_sge, g.max_recv_sge,
				g.max_inline_data);
			ok = false;
		}
		printf("# info: requested 5/7 WRs, 3/5 SGEs, 100 inline; "
		       "granted %u/%u WRs, %u/%u SGEs, %u inline\n",
		       g.max_send_wr, g.max_recv_wr, g.max_send_sge,
		       g.max_recv_sge, g.max_inline_data);
		ibv_destroy_qp(qp);
	}
	vu_report(ok, "objects: the caps granted by ibv_create_qp are >= the "
		  "requested ones");
	ibv_destroy_cq(cq);

	refuse_cq(d, 0, EINVAL, "ibv_create_cq(0)",
		  "ibv_create_cq with cqe 0 fails with EINVAL");
	refuse_cq(d, LIM_CQE + 1, EINVAL, "ibv_create_cq(65537)",
		  "ibv_create_cq with cqe %d fails with EINVAL", LIM_CQE + 1);

	ok = true;
	cq = ibv_create_cq(d->ctx, LIM_CQE, NULL, NULL, 0);
	cq2 = ibv_create_cq(d->ctx, 1, NULL, NULL, 0);
	if (!cq || !cq2) {
		vu_diag("ibv_create_cq(%s) failed: %s", cq ? "1" : "65536",
			strerror(errno));
		ok = false;
	} else {
		if (cq->cqe < LIM_CQE) {
			vu_diag("CQ of %d entries has cqe %d", LIM_CQE,
				cq->cqe);
			ok = false;
		}
		if (cq2->cqe < 1) {
			vu_diag("CQ of 1 entry has cqe %d", cq2->cqe);
			ok = false;
		}
	}
	vu_report(ok, "objects: ibv_create_cq with cqe 1 and %d succeeds, "
		  "cqe >= requested", LIM_CQE);
	if (cq)
		ibv_destroy_cq(cq);
	if (cq2)
		ibv_destroy_cq(cq2);
	free(p);
}

/* ---- pair.qp_states: the QP state machine -------------------------------- */

#define QUERY_ALL (IBV_QP_STATE | IBV_QP_CUR_STATE | IBV_QP_PKEY_INDEX | \
		   IBV_QP_PORT | IBV_QP_ACCESS_FLAGS | IBV_QP_AV | \
		   IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | \
		   IBV_QP_SQ_PSN | IBV_QP_CAP)

enum stage { ST_RESET, ST_INIT, ST_RTR, ST_RTS };

/*
 * A modify_qp that must fail: it returned EINVAL (ret) and the QP is
 * still in the state it was in.
 */
static bool qp_refused(const char *what, int ret, struct ibv_qp *qp,
		       enum ibv_qp_state stays)
{
	bool ok = eq_ret(what, ret, EINVAL);

	ok &= eq_state("after the refused transition", vu_qp_state(qp), stays);
	return ok;
}

/*
 * ibv_query_qp must return exactly what was set up to stage st (and the
 * caps granted at creation).
 */
static bool check_query(struct ep *e, const struct ep *peer,
			enum ibv_qp_state want, enum stage st)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;
	bool ok = true;
	int ret;

	memset(&a, 0x5a, sizeof(a));
	memset(&ia, 0x5a, sizeof(ia));
	ret = ibv_query_qp(e->qp, &a, QUERY_ALL, &ia);
	if (ret) {
		vu_diag("%c: ibv_query_qp: %s", e->label, strerror(ret));
		return false;
	}
	ok &= eq_state("qp_state", a.qp_state, want);
	if (st >= ST_INIT) {
		ok &= eq("pkey_index", a.pkey_index, 0);
		ok &= eq("port_num", a.port_num, VU_PORT);
		ok &= eq("qp_access_flags", (unsigned int)a.qp_access_flags,
			 QP_ACCESS);
	}
	if (st >= ST_RTR) {
		ok &= eq("path_mtu", a.path_mtu, e->mtu);
		ok &= eq("dest_qp_num", a.dest_qp_num, peer->qp->qp_num);
		ok &= eq("rq_psn", a.rq_psn, e->rq_psn);
		ok &= eq("ah_attr.is_global", a.ah_attr.is_global, 1);
		if (memcmp(a.ah_attr.grh.dgid.raw, peer->d->gid.raw, 16)) {
			char s[INET6_ADDRSTRLEN];

			inet_ntop(AF_INET6, a.ah_attr.grh.dgid.raw, s,
				  sizeof(s));
			vu_diag("ah_attr.grh.dgid: got %s, expected %s", s,
				peer->d->gid_str);
			ok = false;
		}
		ok &= eq("ah_attr.grh.sgid_index", a.ah_attr.grh.sgid_index,
			 (unsigned int)e->d->gid_idx);
		ok &= eq("ah_attr.grh.hop_limit", a.ah_attr.grh.hop_limit,
			 VU_HOP_LIMIT);
		ok &= eq("ah_attr.port_num", a.ah_attr.port_num, VU_PORT);
	}
	if (st >= ST_RTS)
		ok &= eq("sq_psn", a.sq_psn, e->sq_psn);
	ok &= eq("cap.max_send_wr", a.cap.max_send_wr, e->cap.max_send_wr);
	ok &= eq("cap.max_recv_wr", a.cap.max_recv_wr, e->cap.max_recv_wr);
	ok &= eq("cap.max_send_sge", a.cap.max_send_sge, e->cap.max_send_sge);
	ok &= eq("cap.max_recv_sge", a.cap.max_recv_sge, e->cap.max_recv_sge);
	ok &= eq("cap.max_inline_data", a.cap.max_inline_data,
		 e->cap.max_inline_data);
	ok &= eq("init_attr.cap.max_send_wr", ia.cap.max_send_wr,
		 e->cap.max_send_wr);
	ok &= eq("init_attr.cap.max_recv_wr", ia.cap.max_recv_wr,
		 e->cap.max_recv_wr);
	ok &= eq("init_attr.cap.max_send_sge", ia.cap.max_send_sge,
		 e->cap.max_send_sge);
	ok &= eq("init_attr.cap.max_recv_sge", ia.cap.max_recv_sge,
		 e->cap.max_recv_sge);
	ok &= eq("init_attr.cap.max_inline_data", ia.cap.max_inline_data,
		 e->cap.max_inline_data);
	ok &= eq("init_attr.sq_sig_all", (unsigned int)ia.sq_sig_all, 0);
	return ok;
}

/* Bring a fresh QP from RESET to state s (peer: only its GID and QPN). */
static int bring_to(struct ep *e, const struct ep *peer, enum ibv_qp_state s)
{
	int ret;

	if (s == IBV_QPS_RESET)
		return 0;
	ret = ep_init(e);
	if (ret || s == IBV_QPS_INIT)
		return ret;
	ret = ep_rtr(e, peer, g_mtu);
	if (ret || s == IBV_QPS_RTR)
		return ret;
	ret = ep_rts(e);
	if (ret || s == IBV_QPS_RTS)
		return ret;
	return vu_qp_modify_state(e->qp, IBV_QPS_SQD);
}

static void case_states(struct vu_dev *da, struct vu_dev *db)
{
	static const enum ibv_qp_state from[] = {
		IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS, IBV_QPS_SQD,
	};
	struct ep a, b, t;
	struct ibv_qp_attr at;
	enum ibv_mtu mtu = g_mtu >= IBV_MTU_512 ? IBV_MTU_512 : g_mtu;
	unsigned int i;
	bool ok;
	int ret;

	printf("# QP state machine (A %s, B %s, path MTU %d)\n",
	       da->name, db->name, 128 << mtu);
	if (!fx_setup("states", FX_RESET, &a, da, NULL, &b, db, NULL))
		return;
	new_psns(&a, &b);

	ok = check_query(&a, &b, IBV_QPS_RESET, ST_RESET);
	vu_report(ok, "states: new QP is in RESET with the granted caps");

	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_RTS;
	at.sq_psn = a.sq_psn;
	ret = ibv_modify_qp(a.qp, &at, IBV_QP_STATE | IBV_QP_SQ_PSN);
	ok = qp_refused("ibv_modify_qp(RESET->RTS)", ret, a.qp, IBV_QPS_RESET);
	vu_report(ok, "states: RESET->RTS directly fails with EINVAL, QP stays "
		  "in RESET");

	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_INIT;
	at.pkey_index = 0;
	at.port_num = VU_PORT;
	ret = ibv_modify_qp(a.qp, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT);
	ok = qp_refused("ibv_modify_qp(RESET->INIT without ACCESS_FLAGS)",
			ret, a.qp, IBV_QPS_RESET);
	vu_report(ok, "states: RESET->INIT without the required ACCESS_FLAGS "
		  "fails with EINVAL");

	at.qp_access_flags = QP_ACCESS | IBV_ACCESS_MW_BIND;
	ret = ibv_modify_qp(a.qp, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	ok = qp_refused("ibv_modify_qp(RESET->INIT, access MW_BIND)",
			ret, a.qp, IBV_QPS_RESET);
	vu_report(ok, "states: RESET->INIT with an MR-only access flag "
		  "(MW_BIND) fails with EINVAL");

	ok = eq_ret("ibv_modify_qp(RESET->INIT) A", ep_init(&a), 0);
	ok &= eq_ret("ibv_modify_qp(RESET->INIT) B", ep_init(&b), 0);
	if (ok)
		ok = check_query(&a, &b, IBV_QPS_INIT, ST_INIT);
	vu_report(ok, "states: RESET->INIT with PKEY_INDEX|PORT|ACCESS_FLAGS; "
		  "ibv_query_qp returns what was set");

	/*
	 * Remote FLUSH (the uverbs ABI's access bits 8 and 9, which rdma-core
	 * 44 does not name): accepted and kept, as hardware without FLUSH
	 * does (the pyverbs suites of rdma-core 56.1 and 65 ask for it).
	 */
	memset(&at, 0, sizeof(at));
	at.qp_access_flags = QP_ACCESS | (1 << 8) | (1 << 9);
	ret = ibv_modify_qp(a.qp, &at, IBV_QP_ACCESS_FLAGS);
	ok = eq_ret("ibv_modify_qp(INIT, access + FLUSH_GLOBAL|PERSISTENT)",
		    ret, 0);
	memset(&at, 0, sizeof(at));
	if (ok) {
		struct ibv_qp_init_attr ia;

		ok = eq_ret("ibv_query_qp", ibv_query_qp(a.qp, &at,
			    IBV_QP_ACCESS_FLAGS, &ia), 0);
		ok = ok && eq("qp_access_flags", (unsigned int)at.qp_access_flags,
			      QP_ACCESS | (1 << 8) | (1 << 9));
	}
	at.qp_access_flags = QP_ACCESS;
	ok &= eq_ret("ibv_modify_qp(INIT, access back)",
		     ibv_modify_qp(a.qp, &at, IBV_QP_ACCESS_FLAGS), 0);
	vu_report(ok, "states: the remote FLUSH access flags are accepted and "
		  "kept (no FLUSH is served)");

	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_RTR;
	at.path_mtu = mtu;
	at.dest_qp_num = b.qp->qp_num;
	vu_fill_av(&at.ah_attr, a.d->gid_idx, &b.d->gid);
	ret = ibv_modify_qp(a.qp, &at, IBV_QP_STATE | IBV_QP_AV |
			    IBV_QP_PATH_MTU | IBV_QP_DEST_QPN);
	ok = qp_refused("ibv_modify_qp(INIT->RTR without RQ_PSN)",
			ret, a.qp, IBV_QPS_INIT);
	vu_report(ok, "states: INIT->RTR without the required RQ_PSN fails "
		  "with EINVAL");

	ok = eq_ret("ibv_modify_qp(INIT->RTR) A", ep_rtr(&a, &b, mtu), 0);
	ok &= eq_ret("ibv_modify_qp(INIT->RTR) B", ep_rtr(&b, &a, mtu), 0);
	if (ok)
		ok = check_query(&a, &b, IBV_QPS_RTR, ST_RTR);
	vu_report(ok, "states: INIT->RTR with AV|PATH_MTU|DEST_QPN|RQ_PSN; "
		  "ibv_query_qp returns what was set");

	ok = eq_ret("ibv_modify_qp(RTR->RTS) A", ep_rts(&a), 0);
	ok &= eq_ret("ibv_modify_qp(RTR->RTS) B", ep_rts(&b), 0);
	if (ok) {
		ok = check_query(&a, &b, IBV_QPS_RTS, ST_RTS);
		ok &= check_query(&b, &a, IBV_QPS_RTS, ST_RTS);
	}
	vu_report(ok, "states: RTR->RTS with SQ_PSN; ibv_query_qp returns "
		  "exactly what was set (state, path_mtu, dest_qp_num, rq_psn, "
		  "sq_psn, access, pkey_index, port_num, AV, cap), on A and B");

	ok = send_msg(&a, &b, 100, 0x201, "A->B");
	ok &= send_msg(&b, &a, 3000, 0x202, "B->A");
	vu_report(ok, "states: the RTS pair carries a SEND each way");

	ok = eq_ret("ibv_modify_qp(RTS->SQD)",
		    vu_qp_modify_state(a.qp, IBV_QPS_SQD), 0);
	if (ok)
		ok = check_query(&a, &b, IBV_QPS_SQD, ST_RTS);
	vu_report(ok, "states: RTS->SQD; ibv_query_qp returns SQD and the rest "
		  "unchanged (PSNs advanced by the packets sent and received)");

	/* A SEND posted in SQD is queued but not processed (IBA: SQ Drain). */
	ok = true;
	vu_fill_prng(a.mem.p + SRC_OFF, 64, 0x203);
	memset(b.mem.p + RCV_OFF, POISON, 64 + GUARD);
	ret = post_recv1(&b, 0x203, RCV_OFF, 64 + GUARD);
	if (!ret)
		ret = post_send1(&a, IBV_WR_SEND, 0x1203, SRC_OFF, 64,
				 IBV_SEND_SIGNALED, 0, 0);
	if (ret) {
		vu_diag("posting in SQD: %s", strerror(ret));
		ok = false;
	} else {
		ok &= vu_cq_stays_empty(b.rcq, QUIET_MS, "B receive CQ while A "
					"is in SQD");
		ok &= vu_cq_stays_empty(a.scq, 0, "A send CQ while A is in "
					"SQD");
		ok &= eq_ret("ibv_modify_qp(SQD->RTS)",
			     vu_qp_modify_state(a.qp, IBV_QPS_RTS), 0);
		psn_advance(&a, &b, 64);
		ok &= expect_cqe("A send CQE after SQD->RTS", a.scq, 0x1203,
				 IBV_WC_SUCCESS, IBV_WC_SEND, a.qp->qp_num,
				 -1);
		ok &= expect_cqe("B receive CQE after SQD->RTS", b.rcq, 0x203,
				 IBV_WC_SUCCESS, IBV_WC_RECV, b.qp->qp_num,
				 64);
		ok &= check_query(&a, &b, IBV_QPS_RTS, ST_RTS);
		if (ok) {
			ok &= vu_bytes_eq("data", b.mem.p + RCV_OFF,
					  a.mem.p + SRC_OFF, 64, 0);
		}
	}
	vu_report(ok, "states: SQD->RTS; a SEND posted in SQD is held until "
		  "RTS, then delivered");

	ok = send_msg(&a, &b, 1, 0x204, "A->B");
	vu_report(ok, "states: the QP works after RTS->SQD->RTS");

	/*
	 * RESET -> ERR is not a transition of the IBA state diagram (nor of
	 * ib_modify_qp_is_ok()): from RESET only INIT (or RESET).
	 */
	ok = true;
	if (ep_open(&t, da, 'T', &REQ_DEFAULT)) {
		vu_report(false, "states: RESET->ERR (setup)");
	} else {
		ok &= qp_refused("ibv_modify_qp(RESET->ERR)",
				 vu_qp_modify_state(t.qp, IBV_QPS_ERR),
				 t.qp, IBV_QPS_RESET);
		vu_report(ok, "states: RESET->ERR fails with EINVAL (IBA: from "
			  "RESET only to INIT)");
		ep_close(&t);
	}

	/* any other state -> ERR, each on a fresh QP */
	for (i = 0; i < sizeof(from) / sizeof(from[0]); i++) {
		ok = true;
		if (ep_open(&t, da, 'T', &REQ_DEFAULT)) {
			vu_report(false, "states: %s->ERR (setup)",
				  vu_qp_state_str(from[i]));
			continue;
		}
		t.sq_psn = 0x123;
		t.rq_psn = 0x456;
		ret = bring_to(&t, &b, from[i]);
		if (ret) {
			vu_diag("bringing a QP to %s: %s",
				vu_qp_state_str(from[i]), strerror(ret));
			ok = false;
		} else {
			ok &= eq_state("before", vu_qp_state(t.qp), from[i]);
			ok &= eq_ret("ibv_modify_qp(->ERR)",
				     vu_qp_modify_state(t.qp, IBV_QPS_ERR), 0);
			ok &= eq_state("after", vu_qp_state(t.qp),
				       IBV_QPS_ERR);
		}
		vu_report(ok, "states: %s->ERR works",
			  vu_qp_state_str(from[i]));
		ep_close(&t);
	}

	/* ERR -> RESET -> INIT -> RTR -> RTS, then usable again */
	ok = eq_ret("ibv_modify_qp(RTS->ERR) A",
		    vu_qp_modify_state(a.qp, IBV_QPS_ERR), 0);
	ok &= eq_ret("ibv_modify_qp(RTS->ERR) B",
		     vu_qp_modify_state(b.qp, IBV_QPS_ERR), 0);
	ret = ep_init(&a);
	ok &= qp_refused("ibv_modify_qp(ERR->INIT)", ret, a.qp, IBV_QPS_ERR);
	vu_report(ok, "states: ERR->INIT directly fails with EINVAL");

	ok = eq_ret("ibv_modify_qp(ERR->RESET) A",
		    vu_qp_modify_state(a.qp, IBV_QPS_RESET), 0);
	ok &= eq_ret("ibv_modify_qp(ERR->RESET) B",
		     vu_qp_modify_state(b.qp, IBV_QPS_RESET), 0);
	ok &= eq_state("A after ERR->RESET", vu_qp_state(a.qp),
		       IBV_QPS_RESET);
	vu_report(ok, "states: ERR->RESET works");

	vu_nap_us(SHORT_MS * 1000);
	vu_cq_drain(a.scq);
	vu_cq_drain(a.rcq);
	vu_cq_drain(b.scq);
	vu_cq_drain(b.rcq);
	new_psns(&a, &b);
	ok = eq_ret("ibv_modify_qp(RESET->INIT) A", ep_init(&a), 0);
	ok &= eq_ret("ibv_modify_qp(RESET->INIT) B", ep_init(&b), 0);
	if (ok)
		ok = check_query(&a, &b, IBV_QPS_INIT, ST_INIT);
	vu_report(ok, "states: RESET->INIT works again after ERR->RESET");

	ok = eq_ret("ibv_modify_qp(INIT->RTR) A", ep_rtr(&a, &b, g_mtu), 0);
	ok &= eq_ret("ibv_modify_qp(INIT->RTR) B", ep_rtr(&b, &a, g_mtu), 0);
	ok &= eq_ret("ibv_modify_qp(RTR->RTS) A", ep_rts(&a), 0);
	ok &= eq_ret("ibv_modify_qp(RTR->RTS) B", ep_rts(&b), 0);
	if (ok) {
		ok &= check_query(&a, &b, IBV_QPS_RTS, ST_RTS);
		ok &= send_msg(&a, &b, 200, 0x205, "A->B");
		ok &= send_msg(&b, &a, 7, 0x206, "B->A");
		ok &= vu_cq_stays_empty(a.scq, 0, "A send CQ");
		ok &= vu_cq_stays_empty(a.rcq, 0, "A receive CQ");
		ok &= vu_cq_stays_empty(b.scq, 0, "B send CQ");
		ok &= vu_cq_stays_empty(b.rcq, 0, "B receive CQ");
	}
	vu_report(ok, "states: after ERR->RESET->INIT->RTR->RTS the QPs carry "
		  "a SEND each way");
	fx_teardown(&a, &b);
}

/* ---- dev.posting: posting errors ----------------------------------------- */

static void case_posting(struct vu_dev *d)
{
	struct ibv_sge sg[LIM_SGE + 2];
	struct ibv_send_wr swr[MAX_WR + 1], *sbad;
	struct ibv_recv_wr rwr[MAX_WR + 1], *rbad;
	struct ep e1, e2;
	uint64_t ids[MAX_WR];
	unsigned int i, n;
	bool ok;
	int ret;

	printf("# posting errors (device %s, QPs in INIT)\n",
	       d->name);
	if (!fx_setup("posting", FX_RESET, &e1, d, NULL, &e2, d,
		      &(struct qp_req){ 4, 4, 1, 1, 0, false, 0, false, 0,
					 false }))
		return;
	ok = eq_ret("RESET->INIT", ep_init(&e1), 0);
	ok &= eq_ret("RESET->INIT", ep_init(&e2), 0);
	if (!ok || e1.cap.max_send_sge + 1 > LIM_SGE + 2 ||
	    e2.cap.max_send_wr + 1 > MAX_WR ||
	    e2.cap.max_recv_wr + 1 > MAX_WR) {
		vu_diag("granted caps too large for this test: send_sge %u, "
			"send_wr %u, recv_wr %u", e1.cap.max_send_sge,
			e2.cap.max_send_wr, e2.cap.max_recv_wr);
		vu_report(false, "posting: setup");
		goto out;
	}
	for (i = 0; i < LIM_SGE + 2; i++) {
		sg[i].addr = (uintptr_t)(e1.mem.p + SRC_OFF + 16 * i);
		sg[i].length = 8;
		sg[i].lkey = e1.mem.mr->lkey;
	}

	/* num_sge > max_send_sge: EINVAL, bad_wr the second WR */
	memset(swr, 0, sizeof(swr));
	swr[0].wr_id = 0x3001;
	swr[0].sg_list = sg;
	swr[0].num_sge = 1;
	swr[0].opcode = IBV_WR_SEND;
	swr[0].send_flags = IBV_SEND_SIGNALED;
	swr[0].next = &swr[1];
	swr[1] = swr[0];
	swr[1].wr_id = 0x3002;
	swr[1].num_sge = (int)e1.cap.max_send_sge + 1;
	swr[1].next = NULL;
	sbad = NULL;
	ret = ibv_post_send(e1.qp, swr, &sbad);
	ok = eq_ret("ibv_post_send", ret, EINVAL);
	if (sbad != &swr[1]) {
		vu_diag("bad_wr %p, expected the second WR %p", (void *)sbad,
			(void *)&swr[1]);
		ok = false;
	}
	vu_report(ok, "posting: post_send with num_sge %u > max_send_sge %u "
		  "returns EINVAL, bad_wr = that WR", e1.cap.max_send_sge + 1,
		  e1.cap.max_send_sge);

	/* opcodes UC has not */
	memset(&swr[2], 0, sizeof(swr[2]));
	swr[2].wr_id = 0x3003;
	swr[2].sg_list = sg;
	swr[2].num_sge = 1;
	swr[2].opcode = IBV_WR_RDMA_READ;
	swr[2].send_flags = IBV_SEND_SIGNALED;
	swr[2].wr.rdma.remote_addr = (uintptr_t)(e1.mem.p + WR_OFF);
	swr[2].wr.rdma.rkey = e1.mem.mr->rkey;
	sbad = NULL;
	ret = ibv_post_send(e1.qp, &swr[2], &sbad);
	ok = eq_ret("ibv_post_send(RDMA_READ)", ret, EINVAL);
	if (sbad != &swr[2]) {
		vu_diag("bad_wr %p, expected the WR %p", (void *)sbad,
			(void *)&swr[2]);
		ok = false;
	}
	vu_report(ok, "posting: IBV_WR_RDMA_READ on a UC QP returns EINVAL, "
		  "bad_wr = the WR");

	memset(&swr[3], 0, sizeof(swr[3]));
	swr[3].wr_id = 0x3004;
	swr[3].sg_list = sg;
	swr[3].num_sge = 1;
	swr[3].opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
	swr[3].send_flags = IBV_SEND_SIGNALED;
	swr[3].wr.atomic.remote_addr = (uintptr_t)(e1.mem.p + WR_OFF);
	swr[3].wr.atomic.rkey = e1.mem.mr->rkey;
	swr[3].wr.atomic.compare_add = 1;
	swr[3].wr.atomic.swap = 2;
	sbad = NULL;
	ret = ibv_post_send(e1.qp, &swr[3], &sbad);
	ok = eq_ret("ibv_post_send(ATOMIC_CMP_AND_SWP)", ret, EINVAL);
	if (sbad != &swr[3]) {
		vu_diag("bad_wr %p, expected the WR %p", (void *)sbad,
			(void *)&swr[3]);
		ok = false;
	}
	vu_report(ok, "posting: IBV_WR_ATOMIC_CMP_AND_SWP on a UC QP returns "
		  "EINVAL, bad_wr = the WR");

	/* post_recv num_sge > max_recv_sge */
	memset(rwr, 0, sizeof(rwr));
	rwr[0].wr_id = 0x3101;
	rwr[0].sg_list = sg;
	rwr[0].num_sge = 1;
	rwr[0].next = &rwr[1];
	rwr[1].wr_id = 0x3102;
	rwr[1].sg_list = sg;
	rwr[1].num_sge = (int)e1.cap.max_recv_sge + 1;
	for (i = 0; i < LIM_SGE + 2; i++)
		sg[i].addr = (uintptr_t)(e1.mem.p + RCV_OFF + 16 * i);
	rbad = NULL;
	ret = ibv_post_recv(e1.qp, rwr, &rbad);
	ok = eq_ret("ibv_post_recv", ret, EINVAL);
	if (rbad != &rwr[1]) {
		vu_diag("bad_wr %p, expected the second WR %p", (void *)rbad,
			(void *)&rwr[1]);
		ok = false;
	}
	vu_report(ok, "posting: post_recv with num_sge %u > max_recv_sge %u "
		  "returns EINVAL, bad_wr = that WR", e1.cap.max_recv_sge + 1,
		  e1.cap.max_recv_sge);

	/* the valid WRs before the rejected ones were posted: ERR flushes */
	ok = eq_ret("ibv_modify_qp(INIT->ERR)",
		    vu_qp_modify_state(e1.qp, IBV_QPS_ERR), 0);
	ids[0] = 0x3001;
	ok &= expect_flushes("send CQ", e1.scq, ids, 1, -1, e1.qp->qp_num);
	ids[0] = 0x3101;
	ok &= expect_flushes("receive CQ", e1.rcq, ids, 1, IBV_WC_RECV,
			     e1.qp->qp_num);
	vu_report(ok, "posting: the valid WR before the rejected one was "
		  "posted, the rejected ones were not (exactly one flush each "
		  "on ERR)");

	/* SQ full: ENOMEM at the first WR beyond max_send_wr */
	n = e2.cap.max_send_wr;
	memset(swr, 0, sizeof(swr));
	for (i = 0; i <= n; i++) {
		swr[i].wr_id = 0x3200 + i;
		swr[i].opcode = IBV_WR_SEND;
		swr[i].send_flags = IBV_SEND_SIGNALED;
		swr[i].next = i < n ? &swr[i + 1] : NULL;
	}
	sbad = NULL;
	ret = ibv_post_send(e2.qp, swr, &sbad);
	ok = eq_ret("ibv_post_send(max_send_wr + 1 WRs)", ret, ENOMEM);
	if (sbad != &swr[n]) {
		vu_diag("bad_wr %p (WR %td), expected WR %u %p", (void *)sbad,
			sbad ? sbad - swr : -1, n, (void *)&swr[n]);
		ok = false;
	}
	swr[n].next = NULL;
	sbad = NULL;
	ret = ibv_post_send(e2.qp, &swr[n], &sbad);
	ok &= eq_ret("ibv_post_send(one more WR)", ret, ENOMEM);
	if (sbad != &swr[n]) {
		vu_diag("bad_wr %p, expected the WR %p", (void *)sbad,
			(void *)&swr[n]);
		ok = false;
	}
	vu_report(ok, "posting: a chain of max_send_wr + 1 = %u WRs on an SQ "
		  "that is not processed (INIT) returns ENOMEM, bad_wr = WR %u",
		  n + 1, n);

	/* RQ full */
	n = e2.cap.max_recv_wr;
	memset(rwr, 0, sizeof(rwr));
	for (i = 0; i <= n; i++) {
		rwr[i].wr_id = 0x3300 + i;
		rwr[i].next = i < n ? &rwr[i + 1] : NULL;
	}
	rbad = NULL;
	ret = ibv_post_recv(e2.qp, rwr, &rbad);
	ok = eq_ret("ibv_post_recv(max_recv_wr + 1 WRs)", ret, ENOMEM);
	if (rbad != &rwr[n]) {
		vu_diag("bad_wr %p (WR %td), expected WR %u %p", (void *)rbad,
			rbad ? rbad - rwr : -1, n, (void *)&rwr[n]);
		ok = false;
	}
	vu_report(ok, "posting: a chain of max_recv_wr + 1 = %u receive WRs "
		  "returns ENOMEM, bad_wr = WR %u", n + 1, n);

	ok = eq_ret("ibv_modify_qp(INIT->ERR)",
		    vu_qp_modify_state(e2.qp, IBV_QPS_ERR), 0);
	for (i = 0; i < e2.cap.max_send_wr; i++)
		ids[i] = 0x3200 + i;
	ok &= expect_flushes("send CQ", e2.scq, ids, (int)e2.cap.max_send_wr,
			     -1, e2.qp->qp_num);
	for (i = 0; i < e2.cap.max_recv_wr; i++)
		ids[i] = 0x3300 + i;
	ok &= expect_flushes("receive CQ", e2.rcq, ids,
			     (int)e2.cap.max_recv_wr, IBV_WC_RECV,
			     e2.qp->qp_num);
	vu_report(ok, "posting: the %u send and %u receive WRs before the full "
		  "queue were posted (flushed in order on ERR)",
		  e2.cap.max_send_wr, e2.cap.max_recv_wr);
out:
	fx_teardown(&e1, &e2);
}

/* ---- pair.flush: flush on ERR -------------------------------------------- */

#define FLUSH_K 5

static void case_flush(struct vu_dev *da, struct vu_dev *db)
{
	struct ibv_send_wr swr[3], *sbad;
	struct ibv_sge sge;
	struct ep a, b;
	uint64_t ids[FLUSH_K];
	bool ok;
	int i, ret;

	printf("# flush on ERR (A %s, B %s)\n", da->name, db->name);
	if (!fx_setup("flush", FX_RTS, &a, da, NULL, &b, db, NULL))
		return;
	ok = true;
	for (i = 0; i < FLUSH_K && ok; i++) {
		ids[i] = 0x4000 + (uint64_t)i;
		ret = post_recv1(&b, ids[i], RCV_OFF + 256 * (size_t)i, 256);
		if (ret) {
			vu_diag("ibv_post_recv %d: %s", i, strerror(ret));
			ok = false;
		}
	}
	ok &= vu_cq_stays_empty(b.rcq, SHORT_MS, "B receive CQ before ERR");
	ok &= eq_ret("ibv_modify_qp(RTS->ERR)",
		     vu_qp_modify_state(b.qp, IBV_QPS_ERR), 0);
	ok &= expect_flushes("B receive CQ", b.rcq, ids, FLUSH_K, IBV_WC_RECV,
			     b.qp->qp_num);
	vu_report(ok, "flush: %d posted receive WRs complete with "
		  "IBV_WC_WR_FLUSH_ERR, opcode RECV, in order, exactly once, "
		  "on RTS->ERR", FLUSH_K);

	ids[0] = 0x4100;
	ret = post_recv1(&b, ids[0], RCV_OFF, 256);
	ok = eq_ret("ibv_post_recv in ERR", ret, 0);
	ok &= expect_flushes("B receive CQ", b.rcq, ids, 1, IBV_WC_RECV,
			     b.qp->qp_num);
	vu_report(ok, "flush: a receive WR posted in ERR completes with "
		  "IBV_WC_WR_FLUSH_ERR");

	/* A listens: anything B would actually transmit shows up there. */
	ret = post_recv1(&a, 0x4300, RCV_OFF, 256);
	ok = eq_ret("ibv_post_recv on A", ret, 0);
	sge.addr = (uintptr_t)(b.mem.p + SRC_OFF);
	sge.length = 32;
	sge.lkey = b.mem.mr->lkey;
	memset(swr, 0, sizeof(swr));
	for (i = 0; i < 3; i++) {
		swr[i].wr_id = 0x4200 + (uint64_t)i;
		swr[i].sg_list = &sge;
		swr[i].num_sge = 1;
		swr[i].opcode = IBV_WR_SEND;
		swr[i].send_flags = IBV_SEND_SIGNALED;
		swr[i].next = i < 2 ? &swr[i + 1] : NULL;
		ids[i] = swr[i].wr_id;
	}
	swr[1].opcode = IBV_WR_RDMA_WRITE;
	swr[1].wr.rdma.remote_addr = (uintptr_t)(a.mem.p + WR_OFF);
	swr[1].wr.rdma.rkey = a.mem.mr->rkey;
	swr[2].send_flags = 0;		/* unsignaled: errors complete anyway */
	sbad = NULL;
	ret = ibv_post_send(b.qp, swr, &sbad);
	ok &= eq_ret("ibv_post_send in ERR", ret, 0);
	ok &= expect_flushes("B send CQ", b.scq, ids, 3, -1, b.qp->qp_num);
	ok &= vu_cq_stays_empty(a.rcq, 0, "A receive CQ (B transmitted?)");
	ok &= vu_bytes_all("A WRITE target (B transmitted?)",
			   a.mem.p + WR_OFF, POISON, 32, 0);
	vu_report(ok, "flush: send WRs posted in ERR (SEND, WRITE, unsignaled "
		  "SEND) complete with IBV_WC_WR_FLUSH_ERR in order, nothing "
		  "transmitted");
	fx_teardown(&a, &b);

	/*
	 * A local error on the send side: a SEND whose SGE has an lkey no
	 * MR has completes with IBV_WC_LOC_PROT_ERR and the QP goes to ERR
	 * (IBA: local errors), which flushes everything else outstanding on it:
	 * the send WR behind it and the posted receive WRs.
	 */
	if (!fx_setup("flush", FX_RTS, &a, da, NULL, &b, db, NULL))
		return;
	ok = true;
	for (i = 0; i < 2 && ok; i++) {
		ids[i] = 0x4400 + (uint64_t)i;
		ret = post_recv1(&a, ids[i], RCV_OFF + 256 * (size_t)i, 256);
		if (ret) {
			vu_diag("ibv_post_recv on A: %s", strerror(ret));
			ok = false;
		}
	}
	ret = post_recv1(&b, 0x4500, RCV_OFF, 256);
	ok &= eq_ret("ibv_post_recv on B", ret, 0);
	sge.addr = (uintptr_t)(a.mem.p + SRC_OFF);
	sge.length = 32;
	sge.lkey = a.mem.mr->lkey ^ 0x80;	/* no MR has this key */
	memset(swr, 0, sizeof(swr));
	for (i = 0; i < 2; i++) {
		swr[i].wr_id = 0x4600 + (uint64_t)i;
		swr[i].sg_list = &sge;
		swr[i].num_sge = 1;
		swr[i].opcode = IBV_WR_SEND;
		swr[i].send_flags = IBV_SEND_SIGNALED;
	}
	swr[0].next = &swr[1];
	sbad = NULL;
	ret = ibv_post_send(a.qp, swr, &sbad);
	ok &= eq_ret("ibv_post_send", ret, 0);
	if (ok) {
		struct ibv_wc wc[2];
		double deadline;
		int st, got;

		got = vu_poll_cq(a.scq, wc, 2, vu_now() + CQE_TIMEOUT);
		if (got != 2) {
			vu_diag("%d of 2 send completions on A within %.0f s",
				got, CQE_TIMEOUT);
			ok = false;
		}
		if (got > 0)
			ok &= check_wc("A send CQE 0 (bad lkey)", &wc[0],
				       0x4600, IBV_WC_LOC_PROT_ERR, -1,
				       a.qp->qp_num, -1);
		if (got > 1)
			ok &= check_wc("A send CQE 1 (behind it)", &wc[1],
				       0x4601, IBV_WC_WR_FLUSH_ERR, -1,
				       a.qp->qp_num, -1);
		deadline = vu_now() + 1.0;
		st = vu_qp_state(a.qp);
		while (st != IBV_QPS_ERR && st >= 0 && vu_now() < deadline) {
			vu_nap_us(1000);
			st = vu_qp_state(a.qp);
		}
		ok &= eq_state("A", st, IBV_QPS_ERR);
		ok &= vu_cq_stays_empty(b.rcq, SHORT_MS, "B receive CQ (the "
					"bad SEND was transmitted?)");
	}
	vu_report(ok, "flush: a SEND with an invalid lkey completes with "
		  "IBV_WC_LOC_PROT_ERR, the WR behind it is flushed, the QP is "
		  "in ERR, nothing is transmitted");

	ok = expect_flushes("A receive CQ", a.rcq, ids, 2, IBV_WC_RECV,
			    a.qp->qp_num);
	vu_report(ok, "flush: the receive WRs posted on that QP are flushed "
		  "(IBV_WC_WR_FLUSH_ERR) when the send-side error moves it to "
		  "ERR");
	fx_teardown(&a, &b);
}

/* ---- pair.cq_events: completion events ----------------------------------- */

/* Wait up to ms for an event on e's channel; 1 if one is readable. */
static int event_ready(struct ep *e, int ms)
{
	struct pollfd pfd = { .fd = e->ch->fd, .events = POLLIN };
	int r;

	do
		r = poll(&pfd, 1, ms);
	while (r < 0 && errno == EINTR);
	if (r < 0) {
		vu_diag("poll on the completion channel: %s", strerror(errno));
		return -1;
	}
	return r > 0 && (pfd.revents & POLLIN);
}

/* Take one event (must be for e->rcq) and ack it. */
static bool take_event(struct ep *e)
{
	struct ibv_cq *cq = NULL;
	void *ctx = NULL;
	bool ok = true;

	if (ibv_get_cq_event(e->ch, &cq, &ctx)) {
		vu_diag("ibv_get_cq_event failed: %s", strerror(errno));
		return false;
	}
	if (cq != e->rcq || ctx != e) {
		vu_diag("event for CQ %p context %p, expected %p %p",
			(void *)cq, ctx, (void *)e->rcq, (void *)e);
		ok = false;
	}
	if (cq)
		ibv_ack_cq_events(cq, 1);
	return ok;
}

/* Post a receive on rx and a SEND on tx; both must complete successfully
 * (checked by polling).  flags: IBV_SEND_SOLICITED or 0. */
static bool send_polled(struct ep *tx, struct ep *rx, uint64_t id,
			unsigned int flags)
{
	bool ok = true;
	int ret;

	ret = post_recv1(rx, id, RCV_OFF, 64);
	if (!ret)
		ret = post_send1(tx, IBV_WR_SEND, id | 0x10000, SRC_OFF, 16,
				 IBV_SEND_SIGNALED | flags, 0, 0);
	if (ret) {
		vu_diag("posting: %s", strerror(ret));
		return false;
	}
	ok &= expect_cqe("A send CQE", tx->scq, id | 0x10000, IBV_WC_SUCCESS,
			 IBV_WC_SEND, tx->qp->qp_num, -1);
	ok &= expect_cqe("B receive CQE", rx->rcq, id, IBV_WC_SUCCESS,
			 IBV_WC_RECV, rx->qp->qp_num, 16);
	return ok;
}

/* No event on e's channel within ms; else the diagnostic why (and the
 * event is taken). */
static bool no_event(struct ep *e, int ms, const char *why)
{
	if (event_ready(e, ms) == 0)
		return true;
	vu_diag("%s", why);
	take_event(e);
	return false;
}

/*
 * A SEND from tx (flags: 0 or IBV_SEND_SOLICITED) into a receive WR
 * posted on rx, whose receive CQ is armed: exactly one event (taken and
 * acked), then both completions successful.
 */
static bool send_one_event(struct ep *tx, struct ep *rx, uint64_t id,
			   unsigned int flags)
{
	bool ok = true;
	int ret;

	ret = post_recv1(rx, id, RCV_OFF, 64);
	if (!ret)
		ret = post_send1(tx, IBV_WR_SEND, id | 0x1000, SRC_OFF, 16,
				 IBV_SEND_SIGNALED | flags, 0, 0);
	if (ret) {
		vu_diag("posting: %s", strerror(ret));
		return false;
	}
	if (event_ready(rx, EVENT_MS) != 1) {
		vu_diag("no completion event within %d ms%s", EVENT_MS,
			flags ? " for a solicited SEND" : "");
		ok = false;
	} else {
		ok &= take_event(rx);
	}
	ok &= expect_cqe("B receive CQE", rx->rcq, id, IBV_WC_SUCCESS,
			 IBV_WC_RECV, rx->qp->qp_num, 16);
	ok &= expect_cqe("A send CQE", tx->scq, id | 0x1000, IBV_WC_SUCCESS,
			 IBV_WC_SEND, tx->qp->qp_num, -1);
	ok &= no_event(rx, SHORT_MS, "a second event for the same completion");
	return ok;
}

static void case_events(struct vu_dev *da, struct vu_dev *db)
{
	struct qp_req rb = REQ_DEFAULT;
	struct ep a, b;
	bool ok;

	printf("# completion events (A %s, B %s with a completion "
	       "channel)\n", da->name, db->name);
	rb.channel = true;
	if (!fx_setup("events", FX_RTS, &a, da, NULL, &b, db, &rb))
		return;
	vu_fill_prng(a.mem.p + SRC_OFF, 64, 0x500);

	/* armed for the next completion: exactly one event */
	ok = eq_ret("ibv_req_notify_cq(cq, 0)", ibv_req_notify_cq(b.rcq, 0),
		    0);
	ok &= send_one_event(&a, &b, 0x501, 0);
	vu_report(ok, "events: ibv_req_notify_cq(cq, 0), then a SEND arrives: "
		  "exactly one event (ibv_get_cq_event, acked)");

	/* not re-armed: no event */
	ok = send_polled(&a, &b, 0x502, 0);
	ok &= no_event(&b, QUIET_MS, "event on a CQ that was not re-armed");
	vu_report(ok, "events: without re-arming, a second SEND completes with "
		  "no event");

	/* solicited only: an unsolicited SEND gives no event */
	ok = eq_ret("ibv_req_notify_cq(cq, 1)", ibv_req_notify_cq(b.rcq, 1),
		    0);
	ok &= send_polled(&a, &b, 0x503, 0);
	ok &= no_event(&b, QUIET_MS, "event for an unsolicited completion on "
		       "a CQ armed solicited-only");
	vu_report(ok, "events: ibv_req_notify_cq(cq, 1), an unsolicited "
		  "SEND: no event");

	/* ... and a solicited one does */
	ok = send_one_event(&a, &b, 0x504, IBV_SEND_SOLICITED);
	vu_report(ok, "events: still armed solicited-only, a SEND with "
		  "IBV_SEND_SOLICITED: exactly one event");
	fx_teardown(&a, &b);
}

/* ---- pair.inline: inline data -------------------------------------------- */

/* Source of inline WRs: global (stores to it cannot be optimised away)
 * and never registered. */
static uint8_t inline_src[LIM_INLINE + 64];

static void case_inline(struct vu_dev *da, struct vu_dev *db)
{
	struct qp_req ra = REQ_DEFAULT;
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	struct ep a, b;
	uint8_t want[LIM_INLINE + 64];
	char what[96];
	uint32_t n, max;
	int op, ret;
	bool ok;

	printf("# inline data (A %s, B %s)\n", da->name, db->name);
	ra.inline_data = LIM_INLINE;
	if (!fx_setup("inline", FX_RTS, &a, da, &ra, &b, db, NULL))
		return;
	max = a.cap.max_inline_data;
	if (max < LIM_INLINE || max > LIM_INLINE + 63) {
		vu_diag("granted max_inline_data %u for %u requested", max,
			LIM_INLINE);
		vu_report(false, "inline: setup (max_inline_data)");
		goto out;
	}

	for (op = 0; op < 2; op++) {
		bool write = op == 1;

		ok = true;
		for (n = 1; n <= max && ok; n++) {
			uint64_t id = 0x6000 + (write ? 0x1000 : 0) + n;

			vu_fill_prng(want, n, id);
			memcpy(inline_src, want, n);
			if (write) {
				memset(b.mem.p + WR_OFF, POISON, n + GUARD);
			} else {
				memset(b.mem.p + RCV_OFF, POISON, n + GUARD);
				ret = post_recv1(&b, id, RCV_OFF, n + GUARD);
				if (ret) {
					vu_diag("ibv_post_recv: %s",
						strerror(ret));
					ok = false;
					break;
				}
			}
			/* unregistered: the lkey must not matter */
			sge.addr = (uintptr_t)inline_src;
			sge.length = n;
			sge.lkey = 0;
			memset(&wr, 0, sizeof(wr));
			wr.wr_id = id | 0x100000;
			wr.sg_list = &sge;
			wr.num_sge = 1;
			wr.opcode = write ? IBV_WR_RDMA_WRITE : IBV_WR_SEND;
			wr.send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED;
			if (write) {
				wr.wr.rdma.remote_addr =
					(uintptr_t)(b.mem.p + WR_OFF);
				wr.wr.rdma.rkey = b.mem.mr->rkey;
			}
			bad = NULL;
			ret = ibv_post_send(a.qp, &wr, &bad);
			/* inline: the buffer is ours again right away */
			memset(inline_src, (uint8_t)~want[0],
			       sizeof(inline_src));
			if (ret) {
				vu_diag("%u bytes: ibv_post_send: %s", n,
					strerror(ret));
				ok = false;
				break;
			}
			snprintf(what, sizeof(what), "%u bytes: A send CQE", n);
			ok &= expect_cqe(what, a.scq, id | 0x100000,
					 IBV_WC_SUCCESS, write ?
					 IBV_WC_RDMA_WRITE : IBV_WC_SEND,
					 a.qp->qp_num, -1);
			if (write) {
				/* a 0-byte SEND behind it: UC keeps order */
				ret = post_recv1(&b, id, RCV_OFF, 0);
				if (!ret)
					ret = post_send1(&a, IBV_WR_SEND,
							 id | 0x200000, 0, 0,
							 IBV_SEND_SIGNALED, 0,
							 0);
				if (ret) {
					vu_diag("fence SEND: %s",
						strerror(ret));
					ok = false;
					break;
				}
				snprintf(what, sizeof(what), "%u bytes: fence "
					 "SEND A send CQE", n);
				ok &= expect_cqe(what, a.scq, id | 0x200000,
						 IBV_WC_SUCCESS, IBV_WC_SEND,
						 a.qp->qp_num, -1);
				snprintf(what, sizeof(what), "%u bytes: fence "
					 "SEND B receive CQE", n);
				ok &= expect_cqe(what, b.rcq, id,
						 IBV_WC_SUCCESS, IBV_WC_RECV,
						 b.qp->qp_num, 0);
			} else {
				snprintf(what, sizeof(what), "%u bytes: B "
					 "receive CQE", n);
				ok &= expect_cqe(what, b.rcq, id,
						 IBV_WC_SUCCESS, IBV_WC_RECV,
						 b.qp->qp_num, n);
			}
			if (!ok)
				break;
			snprintf(what, sizeof(what), "%u bytes: data", n);
			ok &= vu_bytes_eq(what, b.mem.p +
					  (write ? WR_OFF : RCV_OFF), want, n,
					  0);
			snprintf(what, sizeof(what), "%u bytes: bytes after "
				 "the message", n);
			ok &= vu_bytes_all(what, b.mem.p +
					   (write ? WR_OFF : RCV_OFF) + n,
					   POISON, GUARD, 0);
		}
		ok &= vu_cq_stays_empty(a.scq, 0, "A send CQ");
		ok &= vu_cq_stays_empty(b.rcq, 0, "B receive CQ");
		vu_report(ok, "inline: IBV_SEND_INLINE %s of 1..%u bytes from "
			  "an unregistered buffer overwritten right after "
			  "post_send: data exact",
			  write ? "RDMA WRITE" : "SEND", max);
	}

	/* one byte more than granted: EINVAL, nothing posted */
	memset(inline_src, 0x11, sizeof(inline_src));
	sge.addr = (uintptr_t)inline_src;
	sge.length = max + 1;
	sge.lkey = 0;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 0x6fff;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED;
	bad = NULL;
	ret = ibv_post_send(a.qp, &wr, &bad);
	ok = eq_ret("ibv_post_send(inline max + 1)", ret, EINVAL);
	if (bad != &wr) {
		vu_diag("bad_wr %p, expected the WR %p", (void *)bad,
			(void *)&wr);
		ok = false;
	}
	ok &= vu_cq_stays_empty(a.scq, SHORT_MS, "A send CQ");
	vu_report(ok, "inline: IBV_SEND_INLINE of max_inline_data + 1 = %u "
		  "bytes returns EINVAL, bad_wr = the WR, nothing completes",
		  max + 1);
out:
	fx_teardown(&a, &b);
}

/* ---- pair.rx_errors: receive-side errors --------------------------------- */

static void case_rx_errors(struct vu_dev *da, struct vu_dev *db)
{
	static const char *const cnt_names[] = {
		"drop_access", "drop_bad_rkey",
	};
	struct ibv_mr *ro = NULL;
	struct ep a, b;
	long long before[2], after[2];
	uint64_t ids[1];
	bool ok;
	int ret, st, i;

	printf("# receive-side errors (A %s -> B %s)\n", da->name,
	       db->name);

	/* SEND longer than the receive WR */
	if (!fx_setup("rx errors", FX_RTS, &a, da, NULL, &b, db, NULL))
		return;
	vu_fill_prng(a.mem.p + SRC_OFF, 64, 0x700);
	ok = eq_ret("ibv_post_recv (16 bytes)",
		    post_recv1(&b, 0x701, RCV_OFF, 16), 0);
	ok &= eq_ret("ibv_post_recv (256 bytes)",
		     post_recv1(&b, 0x702, RCV_OFF + 1024, 256), 0);
	ok &= eq_ret("ibv_post_send (64 bytes)",
		     post_send1(&a, IBV_WR_SEND, 0x1701, SRC_OFF, 64,
				IBV_SEND_SIGNALED, 0, 0), 0);
	ok &= expect_cqe("A send CQE (UC: the requester sees success)", a.scq,
			 0x1701, IBV_WC_SUCCESS, IBV_WC_SEND, a.qp->qp_num,
			 -1);
	ok &= expect_cqe("B receive CQE", b.rcq, 0x701, IBV_WC_LOC_LEN_ERR,
			 -1, b.qp->qp_num, -1);
	/*
	 * What the consumer sees right after the error completion.  The
	 * driver may publish the CQE a moment before it changes the state,
	 * so the check allows 1 s; an early RTS is reported as info.
	 */
	st = vu_qp_state(b.qp);
	vu_report(ok, "rx errors: a 64-byte SEND into a 16-byte receive WR "
		  "completes that WR with IBV_WC_LOC_LEN_ERR");

	if (st != IBV_QPS_ERR) {
		double deadline = vu_now() + 1.0;

		printf("# info: QP state %s right after polling the "
		       "IBV_WC_LOC_LEN_ERR completion\n", vu_qp_state_str(st));
		while (st != IBV_QPS_ERR && st >= 0 && vu_now() < deadline) {
			vu_nap_us(1000);
			st = vu_qp_state(b.qp);
		}
	}
	ok = eq_state("B within 1 s of IBV_WC_LOC_LEN_ERR", st, IBV_QPS_ERR);
	vu_report(ok, "rx errors: after IBV_WC_LOC_LEN_ERR the receiver's QP "
		  "is in ERR (ibv_query_qp)");

	ids[0] = 0x702;
	ok = expect_flushes("B receive CQ", b.rcq, ids, 1, IBV_WC_RECV,
			    b.qp->qp_num);
	vu_report(ok, "rx errors: the other receive WR posted on that QP is "
		  "flushed (IBV_WC_WR_FLUSH_ERR) when the QP enters ERR");
	fx_teardown(&a, &b);

	/* RDMA WRITE to an MR without REMOTE_WRITE */
	if (!fx_setup("rx errors", FX_RTS, &a, da, NULL, &b, db, NULL))
		return;
	ro = ibv_reg_mr(db->pd, b.mem.p + AUX_OFF, 4096,
			IBV_ACCESS_LOCAL_WRITE);
	if (!ro) {
		vu_diag("ibv_reg_mr(LOCAL_WRITE): %s", strerror(errno));
		vu_report(false, "rx errors: setup");
		goto out;
	}
	memset(b.mem.p + AUX_OFF, POISON, 4096);
	vu_fill_prng(a.mem.p + SRC_OFF, 64, 0x710);
	vu_nap_us(100 * 1000);	/* past the hw_counters cache lifespan */
	for (i = 0; i < 2; i++)
		before[i] = vu_read_counter(db->name, cnt_names[i]);

	ok = eq_ret("ibv_post_send(RDMA WRITE)",
		    post_send1(&a, IBV_WR_RDMA_WRITE, 0x1711, SRC_OFF, 64,
			       IBV_SEND_SIGNALED,
			       (uintptr_t)(b.mem.p + AUX_OFF + 128),
			       ro->rkey), 0);
	ok &= expect_cqe("A send CQE (UC: the requester sees success)", a.scq,
			 0x1711, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE,
			 a.qp->qp_num, -1);
	/* a SEND behind it: once it arrived the WRITE was processed */
	ret = post_recv1(&b, 0x712, RCV_OFF, 64);
	if (!ret)
		ret = post_send1(&a, IBV_WR_SEND, 0x1712, SRC_OFF, 8,
				 IBV_SEND_SIGNALED, 0, 0);
	if (ret) {
		vu_diag("posting the SEND behind the WRITE: %s", strerror(ret));
		ok = false;
	}
	ok &= expect_cqe("A send CQE of the SEND", a.scq, 0x1712,
			 IBV_WC_SUCCESS, IBV_WC_SEND, a.qp->qp_num, -1);
	/* the first receive completion must be the SEND's */
	{
		bool ok2 = expect_cqe("B receive CQE of the SEND behind the "
				      "WRITE", b.rcq, 0x712, IBV_WC_SUCCESS,
				      IBV_WC_RECV, b.qp->qp_num, 8);

		ok2 &= vu_cq_stays_empty(b.rcq, SHORT_MS, "B receive CQ");
		ok2 &= vu_cq_stays_empty(b.scq, 0, "B send CQ");
		vu_report(ok && ok2, "rx errors: RDMA WRITE to an MR without "
			  "REMOTE_WRITE: no completion on the receiver");
		ok2 = eq_state("B", vu_qp_state(b.qp), IBV_QPS_RTS);
		vu_report(ok && ok2, "rx errors: after the dropped WRITE the "
			  "receiver's QP is still RTS and receives the next "
			  "SEND");
	}
	ok = vu_bytes_all("MR without REMOTE_WRITE", b.mem.p + AUX_OFF,
			  POISON, 4096, 0);
	vu_report(ok, "rx errors: RDMA WRITE to an MR without REMOTE_WRITE: "
		  "nothing written");

	vu_nap_us(100 * 1000);
	for (i = 0; i < 2; i++)
		after[i] = vu_read_counter(db->name, cnt_names[i]);
	ok = before[0] >= 0 && before[1] >= 0 && after[0] >= 0 &&
	     after[1] >= 0;
	if (ok) {
		long long d0 = after[0] - before[0], d1 = after[1] - before[1];

		printf("# info: %s: drop_access +%lld, drop_bad_rkey +%lld\n",
		       db->name, d0, d1);
		if (d0 + d1 != 1) {
			vu_diag("drop_access %lld -> %lld, drop_bad_rkey %lld "
				"-> %lld: together +%lld, expected +1",
				before[0], after[0], before[1], after[1],
				d0 + d1);
			ok = false;
		}
	}
	vu_report(ok, "rx errors: RDMA WRITE to an MR without REMOTE_WRITE: "
		  "drop_access + drop_bad_rkey of %s increase by exactly 1",
		  db->name);
out:
	if (ro)
		ibv_dereg_mr(ro);
	fx_teardown(&a, &b);
}

/* ---- pair.address_handles ------------------------------------------------ */

/* ibv_create_ah(attr) must fail with errno want. */
static void refuse_ah(struct vu_dev *d, struct ibv_ah_attr *attr, int want,
		      const char *name)
{
	struct ibv_ah *ah;
	int err;

	errno = 0;
	ah = ibv_create_ah(d->pd, attr);
	err = errno;
	vu_report(failed_with("ibv_create_ah", ah, err, want), "ah: %s", name);
	if (ah)
		ibv_destroy_ah(ah);
}

static void case_ah(struct vu_dev *da, struct vu_dev *db)
{
	bool v4 = IN6_IS_ADDR_V4MAPPED((struct in6_addr *)da->gid.raw);
	struct ibv_ah_attr attr;
	struct ibv_ah *ah[3] = { NULL, NULL, NULL };
	union ibv_gid gid;
	bool ok = true;
	int i, ret;

	printf("# address handles (A %s -> B %s)\n", da->name,
	       db->name);
	vu_fill_av(&attr, da->gid_idx, &db->gid);
	attr.grh.flow_label = 0x12345;
	attr.grh.traffic_class = 0x28;
	for (i = 0; i < 3; i++) {
		errno = 0;
		ah[i] = ibv_create_ah(da->pd, &attr);
		if (!ah[i]) {
			vu_diag("ibv_create_ah #%d: %s", i, strerror(errno));
			ok = false;
		} else {
			ok &= eq("ah->pd is the PD", ah[i]->pd == da->pd, 1);
		}
	}
	vu_report(ok, "ah: three ibv_create_ah from GID[%d] of A to B's GID "
		  "(flow label, traffic class set) succeed", da->gid_idx);

	/* Only with the AHs in place: a success would free the PD. */
	ret = ok ? ibv_dealloc_pd(da->pd) : -1;
	vu_report(eq_ret("ibv_dealloc_pd with AHs", ret, EBUSY),
		  "ah: ibv_dealloc_pd of a PD with AHs fails with EBUSY");

	ok = true;
	for (i = 0; i < 3; i++)
		if (ah[i])
			ok &= eq_ret("ibv_destroy_ah", ibv_destroy_ah(ah[i]), 0);
	vu_report(ok, "ah: ibv_destroy_ah of each returns 0");

	attr.is_global = 0;
	refuse_ah(da, &attr, EINVAL, "no GRH (RoCE needs one): EINVAL");

	vu_fill_av(&attr, da->gid_idx, &db->gid);
	attr.grh.sgid_index = 255;
	refuse_ah(da, &attr, EINVAL, "source GID index 255, beyond the "
		  "table: EINVAL");

	vu_fill_av(&attr, da->gid_idx, &db->gid);
	attr.port_num = 2;
	refuse_ah(da, &attr, EINVAL, "port 2 (the device has one): EINVAL");

	/* A multicast destination of the source's family. */
	memset(&gid, 0, sizeof(gid));
	if (v4) {
		gid.raw[10] = 0xff;
		gid.raw[11] = 0xff;
		gid.raw[12] = 224;
	} else {
		gid.raw[0] = 0xff;
		gid.raw[1] = 0x0e;
	}
	gid.raw[15] = 1;
	vu_fill_av(&attr, da->gid_idx, &gid);
	refuse_ah(da, &attr, EINVAL, v4 ? "to multicast ::ffff:224.0.0.1 "
		  "(snaa has no multicast): EINVAL" : "to multicast ff0e::1 "
		  "(snaa has no multicast): EINVAL");
}

/* ---- hardening (dev.qp_attrs ... pair.msg_size) -------------------------- */

#define SPREAD_N	64

/*
 * n numbers handed out in a row look random: at most 2 successive pairs
 * within 64 of each other (a sequential allocator makes all of them),
 * and a spread of more than 2^20.
 */
static bool looks_random(const char *what, const uint32_t *v, int n)
{
	uint32_t lo = v[0], hi = v[0];
	int i, close = 0;

	for (i = 1; i < n; i++) {
		uint32_t d = v[i] > v[i - 1] ? v[i] - v[i - 1] :
					       v[i - 1] - v[i];

		close += d <= 64;
		lo = v[i] < lo ? v[i] : lo;
		hi = v[i] > hi ? v[i] : hi;
	}
	if (close <= 2 && hi - lo > (1u << 20))
		return true;
	vu_diag("%s: %d of %d successive pairs within 64 of each other, "
		"spread 0x%x (0x%x .. 0x%x); first ones 0x%x 0x%x 0x%x 0x%x",
		what, close, n - 1, hi - lo, lo, hi, v[0], v[1], v[2], v[3]);
	return false;
}

static void hardening_random(struct vu_dev *d)
{
	struct ibv_qp *qps[SPREAD_N] = { NULL };
	struct ibv_mr *mrs[SPREAD_N] = { NULL };
	uint32_t qpn[SPREAD_N], idx[SPREAD_N];
	struct ibv_cq *cq;
	void *mem = NULL;
	bool ok = false;
	int i;

	cq = ibv_create_cq(d->ctx, 16, NULL, NULL, 0);
	if (!cq || posix_memalign(&mem, 4096, 4096)) {
		vu_diag("CQ or buffer: %s", strerror(errno));
		goto out;
	}
	for (i = 0; i < SPREAD_N; i++) {
		struct ibv_qp_cap cap = { 1, 1, 1, 1, 0 };

		qps[i] = vu_qp_create(d->pd, IBV_QPT_UC, cq, cq, &cap);
		mrs[i] = ibv_reg_mr(d->pd, mem, 4096, IBV_ACCESS_LOCAL_WRITE |
				    IBV_ACCESS_REMOTE_WRITE);
		if (!qps[i] || !mrs[i]) {
			vu_diag("QP or MR %d: %s", i, strerror(errno));
			goto out;
		}
		qpn[i] = qps[i]->qp_num;
		idx[i] = mrs[i]->rkey >> 8;
	}
	ok = true;
out:
	vu_report(ok && looks_random("QP numbers", qpn, SPREAD_N),
		  "hardening: %d QP numbers created in a row are not "
		  "predictable from each other", SPREAD_N);
	vu_report(ok && looks_random("MR key indices (rkey >> 8)", idx,
				     SPREAD_N),
		  "hardening: %d MR keys registered in a row are not "
		  "predictable from each other", SPREAD_N);
	for (i = 0; i < SPREAD_N; i++) {
		if (qps[i])
			ibv_destroy_qp(qps[i]);
		if (mrs[i])
			ibv_dereg_mr(mrs[i]);
	}
	if (cq)
		ibv_destroy_cq(cq);
	free(mem);
}

/*
 * More QPs and MR keys than the driver's lookup tables have buckets (4096
 * and 8192, snaa.h): numbers and keys then share buckets.  The QP and MR
 * created before the crowd and the ones created after it must still be
 * what the packets addressed to them find.
 */
#define CROWD_QPS	4600
#define CROWD_MRS	8700

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Do n numbers (sorted in place) repeat? */
static bool all_distinct(const char *what, uint32_t *v, int n)
{
	int i;

	qsort(v, n, sizeof(*v), cmp_u32);
	for (i = 1; i < n; i++) {
		if (v[i] == v[i - 1]) {
			vu_diag("%s: 0x%x given twice", what, v[i]);
			return false;
		}
	}
	return true;
}

static void hardening_crowd(struct vu_dev *da, struct vu_dev *db)
{
	struct ibv_qp **qps = calloc(CROWD_QPS, sizeof(*qps));
	struct ibv_mr **mrs = calloc(CROWD_MRS, sizeof(*mrs));
	uint32_t *qpn = calloc(CROWD_QPS + 2, sizeof(*qpn));
	uint32_t *idx = calloc(CROWD_MRS + 2, sizeof(*idx));
	struct ep first, last = { 0 }, p1, p2 = { 0 };
	int i, nqp = 0, nmr = 0;
	struct ibv_cq *cq = NULL;
	void *mem = NULL;
	bool ok = false;

	if (!qps || !mrs || !qpn || !idx) {
		vu_report(false, "hardening: crowded tables: setup (no memory)");
		goto out;
	}
	if (!fx_setup("hardening: crowded tables", FX_RESET, &first, da, NULL,
		      &p1, db, NULL))
		goto out;
	cq = ibv_create_cq(da->ctx, 16, NULL, NULL, 0);
	if (!cq || posix_memalign(&mem, 4096, 4096)) {
		vu_diag("CQ or buffer: %s", strerror(errno));
		goto report;
	}
	for (nqp = 0; nqp < CROWD_QPS; nqp++) {
		struct ibv_qp_cap cap = { 1, 1, 1, 1, 0 };

		qps[nqp] = vu_qp_create(da->pd, IBV_QPT_UC, cq, cq, &cap);
		if (!qps[nqp]) {
			vu_diag("QP %d of %d: %s", nqp + 1, CROWD_QPS,
				strerror(errno));
			goto report;
		}
		qpn[nqp] = qps[nqp]->qp_num;
	}
	for (nmr = 0; nmr < CROWD_MRS; nmr++) {
		mrs[nmr] = ibv_reg_mr(da->pd, mem, 4096,
				      IBV_ACCESS_LOCAL_WRITE |
				      IBV_ACCESS_REMOTE_WRITE);
		if (!mrs[nmr]) {
			vu_diag("MR %d of %d: %s", nmr + 1, CROWD_MRS,
				strerror(errno));
			goto report;
		}
		idx[nmr] = mrs[nmr]->rkey >> 8;
	}
	if (ep_open(&last, da, 'L', &REQ_DEFAULT) ||
	    ep_open(&p2, db, 'Q', &REQ_DEFAULT) ||
	    pair_connect(&first, &p1, g_mtu) || pair_connect(&last, &p2, g_mtu))
		goto report;
	qpn[CROWD_QPS] = first.qp->qp_num;
	qpn[CROWD_QPS + 1] = last.qp->qp_num;
	idx[CROWD_MRS] = first.mem.mr->rkey >> 8;
	idx[CROWD_MRS + 1] = last.mem.mr->rkey >> 8;
	ok = true;
report:
	vu_report(ok && all_distinct("QP numbers", qpn, CROWD_QPS + 2) &&
		  all_distinct("MR key indices", idx, CROWD_MRS + 2),
		  "hardening: %d QPs and %d MRs on one device: every QP "
		  "number and key index distinct", CROWD_QPS + 2,
		  CROWD_MRS + 2);
	vu_report(ok && send_msg(&p1, &first, 1000, 0x91, "crowd: first"),
		  "hardening: among %d QPs and %d MRs, a SEND reaches the "
		  "QP and MR created before them, byte-exact", CROWD_QPS,
		  CROWD_MRS);
	vu_report(ok && send_msg(&p2, &last, 1000, 0x92, "crowd: last"),
		  "hardening: among %d QPs and %d MRs, a SEND reaches the "
		  "QP and MR created after them, byte-exact", CROWD_QPS,
		  CROWD_MRS);
	for (i = 0; i < nqp; i++)
		ibv_destroy_qp(qps[i]);
	for (i = 0; i < nmr; i++)
		ibv_dereg_mr(mrs[i]);
	if (cq)
		ibv_destroy_cq(cq);
	free(mem);
	ep_close(&last);
	ep_close(&p2);
	fx_teardown(&first, &p1);
out:
	free(qps);
	free(mrs);
	free(qpn);
	free(idx);
}

/*
 * The doorbell ioctl (SNAA_IB_METHOD_QP_DOORBELL) by hand: its doorbell
 * word attribute of len bytes from v (none if len is 0).  0 or an errno.
 */
static int doorbell(struct ibv_context *ctx, uint32_t v, uint16_t len)
{
	struct vu_doorbell cmd;

	vu_doorbell_init(&cmd, v);
	if (!len) {
		cmd.hdr.length = sizeof(cmd.hdr);
		cmd.hdr.num_attrs = 0;
	} else if (len < sizeof(v)) {
		cmd.attr[0].len = len;
		cmd.attr[0].data = 0;
		memcpy(&cmd.attr[0].data, &v, len);
	}
	return vu_doorbell_ring(ctx->cmd_fd, &cmd);
}

/*
 * A legacy POST_SEND or POST_RECV write command with no work request
 * for qp, as libibverbs' ibv_cmd_post_send/recv writes it: 0 or the
 * errno of write(2).
 */
static int legacy_post(struct ibv_qp *qp, bool recv)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		union {
			struct ib_uverbs_post_send s;
			struct ib_uverbs_post_recv r;
		};
	} cmd;
	uint32_t resp[2];

	memset(&cmd, 0, sizeof(cmd));
	cmd.hdr.command = recv ? IB_USER_VERBS_CMD_POST_RECV :
				 IB_USER_VERBS_CMD_POST_SEND;
	cmd.hdr.in_words = sizeof(cmd.hdr) / 4 +
			   (recv ? sizeof(cmd.r) : sizeof(cmd.s)) / 4;
	cmd.hdr.out_words = 1;
	/* response and qp_handle sit at the same place in both */
	cmd.s.response = (uintptr_t)resp;
	cmd.s.qp_handle = qp->handle;
	if (recv)
		cmd.r.wqe_size = sizeof(struct ib_uverbs_recv_wr);
	else
		cmd.s.wqe_size = sizeof(struct ib_uverbs_send_wr);
	if (write(qp->context->cmd_fd, &cmd, cmd.hdr.in_words * 4) < 0)
		return errno;
	return 0;
}

/*
 * The doorbell ioctl rings only the caller's own QPs: a QP of another
 * context of the same device, a kernel QP (QPN 1, the GSI QP) and a QPN
 * no QP has are refused with EINVAL, for the SQ and the RQ alike, as are
 * a reserved bit of the doorbell word, the RQ of a QP on an SRQ and a
 * missing or short attribute.  The provider rings it for every post
 * that finds a ring idle (all traffic tests go through it); the write
 * commands that used to be doorbells are gone.
 */
static void hardening_doorbell(struct vu_dev *d)
{
	struct ibv_srq_init_attr sattr = { .attr = { .max_wr = 2,
						     .max_sge = 1 } };
	struct ibv_qp_cap cap = { 1, 1, 1, 1, 0 };
	struct ibv_qp_init_attr sinit;
	struct ibv_context *ctx2 = NULL;
	struct ibv_cq *cq = NULL, *cq2 = NULL;
	struct ibv_qp *qp = NULL, *qp2 = NULL, *sqp = NULL;
	struct ibv_srq *srq = NULL;
	struct ibv_pd *pd2 = NULL;
	const uint32_t rq = SNAA_DOORBELL_RQ;
	uint32_t gone = 0, n;
	bool ok = false;

	ctx2 = ibv_open_device(d->ctx->device);
	pd2 = ctx2 ? ibv_alloc_pd(ctx2) : NULL;
	cq2 = pd2 ? ibv_create_cq(ctx2, 4, NULL, NULL, 0) : NULL;
	qp2 = cq2 ? vu_qp_create(pd2, IBV_QPT_UC, cq2, cq2, &cap) : NULL;
	cq = ibv_create_cq(d->ctx, 4, NULL, NULL, 0);
	qp = cq ? vu_qp_create(d->pd, IBV_QPT_UC, cq, cq, &cap) : NULL;
	srq = qp ? ibv_create_srq(d->pd, &sattr) : NULL;
	if (srq) {
		memset(&sinit, 0, sizeof(sinit));
		sinit.send_cq = sinit.recv_cq = cq;
		sinit.srq = srq;
		sinit.qp_type = IBV_QPT_RC;
		sinit.cap = cap;
		sqp = ibv_create_qp(d->pd, &sinit);
	}
	if (!qp || !qp2 || !sqp) {
		vu_diag("second context, its QP, ours or one on an SRQ: %s",
			strerror(errno));
		goto out;
	}
	ok = true;
	n = qp->qp_num;
	vu_report(eq_ret("SQ of our own QP", doorbell(d->ctx, n, 4), 0) &&
		  eq_ret("RQ of our own QP", doorbell(d->ctx, n | rq, 4), 0),
		  "hardening: the doorbell ioctl rings the caller's QP's SQ "
		  "and RQ");
	vu_report(eq_ret("SQ of another context's QP",
			 doorbell(d->ctx, qp2->qp_num, 4), EINVAL) &&
		  eq_ret("RQ of another context's QP",
			 doorbell(d->ctx, qp2->qp_num | rq, 4), EINVAL) &&
		  eq_ret("SQ of the GSI QP", doorbell(d->ctx, 1, 4), EINVAL) &&
		  eq_ret("RQ of the GSI QP", doorbell(d->ctx, 1 | rq, 4),
			 EINVAL),
		  "hardening: the doorbell ioctl refuses another context's "
		  "QP and a kernel QP (EINVAL)");
	gone = qp2->qp_num;
	if (ibv_destroy_qp(qp2))
		vu_diag("ibv_destroy_qp: %s", strerror(errno));
	qp2 = NULL;
	vu_report(eq_ret("a destroyed QP's number",
			 doorbell(d->ctx, gone, 4), EINVAL) &&
		  eq_ret("reserved bit 24", doorbell(d->ctx, n | 1U << 24, 4),
			 EINVAL) &&
		  eq_ret("reserved bit 30", doorbell(d->ctx, n | 1U << 30, 4),
			 EINVAL) &&
		  eq_ret("RQ of a QP on an SRQ",
			 doorbell(d->ctx, sqp->qp_num | rq, 4), EINVAL) &&
		  eq_ret("SQ of a QP on an SRQ",
			 doorbell(d->ctx, sqp->qp_num, 4), 0) &&
		  eq_ret("no attribute", doorbell(d->ctx, n, 0), EINVAL) &&
		  eq_ret("a 2-byte attribute", doorbell(d->ctx, n, 2), EINVAL),
		  "hardening: the doorbell ioctl refuses a QPN no QP has, a "
		  "reserved bit, the RQ of a QP on an SRQ, a missing or short "
		  "attribute (EINVAL)");
	vu_report(eq_ret("POST_SEND write", legacy_post(qp, false),
			 EOPNOTSUPP) &&
		  eq_ret("POST_RECV write", legacy_post(qp, true), EOPNOTSUPP),
		  "hardening: the POST_SEND and POST_RECV write commands are "
		  "refused (EOPNOTSUPP): the doorbell ioctl is the only one");
out:
	if (!ok)
		vu_report(false, "hardening: the doorbell ioctl: setup");
	if (sqp)
		ibv_destroy_qp(sqp);
	if (srq)
		ibv_destroy_srq(srq);
	if (qp)
		ibv_destroy_qp(qp);
	if (qp2)
		ibv_destroy_qp(qp2);
	if (cq)
		ibv_destroy_cq(cq);
	if (cq2)
		ibv_destroy_cq(cq2);
	if (pd2)
		ibv_dealloc_pd(pd2);
	if (ctx2)
		ibv_close_device(ctx2);
}

/* An asynchronous event a test waits for. */
struct want_event {
	enum ibv_event_type type;
	const void *obj;		/* the QP or CQ it is about */
	bool seen;
};

/*
 * Wait up to ms for all n events of want[] on ctx, in any order; every
 * event read is acknowledged, events not wanted are skipped.
 */
static bool wait_async_events(struct ibv_context *ctx, struct want_event *want,
			      int n, int ms)
{
	double deadline = vu_now() + ms / 1000.0;
	int fl = fcntl(ctx->async_fd, F_GETFL), i, left = n;

	if (fl < 0 || fcntl(ctx->async_fd, F_SETFL, fl | O_NONBLOCK)) {
		vu_diag("async fd: %s", strerror(errno));
		return false;
	}
	while (left && vu_now() < deadline) {
		struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
		struct ibv_async_event ev;
		const void *about;
		bool used = false;

		if (poll(&pfd, 1, 50) <= 0 || ibv_get_async_event(ctx, &ev))
			continue;
		about = ev.event_type == IBV_EVENT_CQ_ERR ?
			(const void *)ev.element.cq :
			ev.event_type == IBV_EVENT_SRQ_LIMIT_REACHED ||
			ev.event_type == IBV_EVENT_SRQ_ERR ?
			(const void *)ev.element.srq : (const void *)ev.element.qp;
		ibv_ack_async_event(&ev);
		for (i = 0; i < n; i++) {
			if (!want[i].seen && want[i].type == ev.event_type &&
			    want[i].obj == about) {
				want[i].seen = used = true;
				left--;
				break;
			}
		}
		if (!used)
			printf("# info: skipped async event %s\n",
			       ibv_event_type_str(ev.event_type));
	}
	for (i = 0; i < n; i++)
		if (!want[i].seen)
			vu_diag("no %s within %d ms",
				ibv_event_type_str(want[i].type), ms);
	return !left;
}

static void hardening_cq_overflow(struct vu_dev *da, struct vu_dev *db)
{
	static const struct qp_req rb = { 16, 16, 2, 2, 0, false, 1, false, 0,
					  false };
	long long before, after;
	struct ibv_wc wc;
	struct ep a, b;
	bool ok;
	int i;

	if (!fx_setup("hardening: CQ overflow", FX_RTS, &a, da, NULL, &b, db,
		      &rb))
		return;
	before = vu_read_counter(db->name, "cqe_overflow");
	vu_fill_prng(a.mem.p + SRC_OFF, 8, 0x900);
	ok = true;
	for (i = 0; i < 3; i++)
		ok &= eq_ret("ibv_post_recv",
			     post_recv1(&b, 0x901 + i, RCV_OFF + 64 * i, 64), 0);
	for (i = 0; i < 3 && ok; i++) {
		ok &= eq_ret("ibv_post_send",
			     post_send1(&a, IBV_WR_SEND, 0x1901 + i, SRC_OFF, 8,
					IBV_SEND_SIGNALED, 0, 0), 0);
		ok &= expect_cqe("A send CQE", a.scq, 0x1901 + i,
				 IBV_WC_SUCCESS, IBV_WC_SEND, a.qp->qp_num, -1);
	}
	vu_report(ok, "hardening: three SENDs into a QP whose receive CQ has "
		  "one entry");
	{
		struct want_event ev[2] = {
			{ IBV_EVENT_CQ_ERR, b.rcq, false },
			{ IBV_EVENT_QP_FATAL, b.qp, false },
		};

		wait_async_events(db->ctx, ev, 2, EVENT_MS);
		vu_report(ev[0].seen, "hardening: the full CQ raises "
			  "IBV_EVENT_CQ_ERR");
		vu_report(ev[1].seen, "hardening: its QP raises "
			  "IBV_EVENT_QP_FATAL");
	}
	ok = eq_state("B after the overflow", vu_qp_state(b.qp), IBV_QPS_ERR);
	vu_report(ok, "hardening: the QP whose completion did not fit is in "
		  "ERR");
	ok = vu_poll_cq(b.rcq, &wc, 1, vu_now() + CQE_TIMEOUT) == 1 &&
	     check_wc("B receive CQE that fitted", &wc, 0x901, IBV_WC_SUCCESS,
		      IBV_WC_RECV, b.qp->qp_num, 8);
	ok &= vu_cq_stays_empty(b.rcq, SHORT_MS, "B receive CQ in error");
	vu_report(ok, "hardening: the CQ holds the completion that fitted and "
		  "takes none after the overflow");
	vu_nap_us(100 * 1000);	/* past the hw_counters cache lifespan */
	after = vu_read_counter(db->name, "cqe_overflow");
	ok = before >= 0 && after > before;
	if (!ok)
		vu_diag("cqe_overflow %lld -> %lld", before, after);
	vu_report(ok, "hardening: hw_counters cqe_overflow of %s moves",
		  db->name);
	fx_teardown(&a, &b);
}

static void hardening_modify(struct vu_dev *da, struct vu_dev *db)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;
	union ibv_gid other;
	struct ep a, b;
	bool ok, v4;
	int ret;

	if (!fx_setup("hardening: modify_qp", FX_RESET, &a, da, NULL, &b, db,
		      NULL))
		return;
	ok = eq_ret("A RESET->INIT", ep_init(&a), 0) &&
	     eq_ret("B RESET->INIT", ep_init(&b), 0);

	/*
	 * A path the core accepts but snaa cannot use: a multicast
	 * destination (the core maps it to a multicast MAC; snaa has no
	 * multicast).
	 */
	v4 = IN6_IS_ADDR_V4MAPPED((struct in6_addr *)da->gid.raw);
	memset(&other, 0, sizeof(other));
	if (v4) {
		other.raw[10] = other.raw[11] = 0xff;	/* ::ffff:224.0.0.1 */
		other.raw[12] = 224;
		other.raw[15] = 1;
	} else {
		other.raw[0] = 0xff;			/* ff0e::1 */
		other.raw[1] = 0x0e;
		other.raw[15] = 1;
	}
	ret = vu_qp_rtr(a.qp, da->gid_idx, &other, 0x123456, g_mtu, 0x10);
	ok &= eq_ret("INIT->RTR to a multicast GID", ret, EINVAL);
	memset(&attr, 0, sizeof(attr));
	ret = ibv_query_qp(a.qp, &attr, IBV_QP_STATE | IBV_QP_DEST_QPN,
			   &init);
	ok &= eq_ret("ibv_query_qp", ret, 0) &&
	      eq_state("A after the failed INIT->RTR", attr.qp_state,
		       IBV_QPS_INIT) &&
	      eq("dest_qp_num after the failed INIT->RTR", attr.dest_qp_num, 0);
	vu_report(ok, "hardening: a failed INIT->RTR (multicast path) changes "
		  "nothing, not even dest_qp_num");

	/* IBV_QP_CUR_STATE must name the state the QP is in. */
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTS;
	attr.cur_qp_state = IBV_QPS_RTR;
	attr.sq_psn = 0x20;
	ret = ibv_modify_qp(a.qp, &attr, IBV_QP_STATE | IBV_QP_CUR_STATE |
			    IBV_QP_SQ_PSN);
	ok = eq_ret("INIT->RTS claiming IBV_QP_CUR_STATE RTR", ret, EINVAL) &&
	     eq_state("A", vu_qp_state(a.qp), IBV_QPS_INIT);
	vu_report(ok, "hardening: a QP in INIT claimed to be in RTR "
		  "(IBV_QP_CUR_STATE) cannot skip to RTS: EINVAL, stays INIT");

	ok = eq_ret("A INIT->RTR", ep_rtr(&a, &b, g_mtu), 0);
	vu_report(ok, "hardening: after the refused modifies a valid "
		  "INIT->RTR works");
	fx_teardown(&a, &b);
}

/* @qp is in @state with both READ/atomic depths at the device's limit. */
static bool rd_atomic_is(struct ibv_qp *qp, enum ibv_qp_state state)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;
	int ret;

	memset(&attr, 0, sizeof(attr));
	ret = ibv_query_qp(qp, &attr, IBV_QP_STATE | IBV_QP_MAX_QP_RD_ATOMIC |
			   IBV_QP_MAX_DEST_RD_ATOMIC, &init);
	return eq_ret("ibv_query_qp", ret, 0) &&
	       eq_state("qp_state", attr.qp_state, state) &&
	       eq("max_rd_atomic", attr.max_rd_atomic, LIM_RD_ATOMIC) &&
	       eq("max_dest_rd_atomic", attr.max_dest_rd_atomic,
		  LIM_RD_ATOMIC);
}

/*
 * The READ/atomic limits of an RC QP: a max_dest_rd_atomic above what
 * the device reports is refused (the responder could not keep the
 * resources it promises), a larger max_rd_atomic is clamped.
 */
static void hardening_rd_atomic(struct vu_dev *da, struct vu_dev *db)
{
	struct qp_req rc = REQ_DEFAULT;
	struct snaa_rc_attr saved = vu_rc;
	struct ibv_qp_attr attr;
	struct ep a, b;
	bool ok;

	rc.rc = true;
	if (!fx_setup("hardening: rd_atomic limits", FX_RESET, &a, da, &rc,
		      &b, db, &rc))
		return;
	ok = eq_ret("A RESET->INIT", ep_init(&a), 0) &&
	     eq_ret("B RESET->INIT", ep_init(&b), 0);
	vu_rc.max_dest_rd_atomic = LIM_RD_ATOMIC + 1;
	ok &= eq_ret("INIT->RTR with max_dest_rd_atomic 129",
		     ep_rtr(&a, &b, g_mtu), EINVAL) &&
	      eq_state("A after the refused INIT->RTR", vu_qp_state(a.qp),
		       IBV_QPS_INIT);
	vu_rc.max_dest_rd_atomic = LIM_RD_ATOMIC;
	ok &= eq_ret("INIT->RTR with max_dest_rd_atomic 128",
		     ep_rtr(&a, &b, g_mtu), 0);
	vu_rc.max_rd_atomic = 255;
	ok &= eq_ret("RTR->RTS with max_rd_atomic 255", ep_rts(&a), 0);
	ok &= rd_atomic_is(a.qp, IBV_QPS_RTS);
	vu_rc = saved;
	vu_report(ok, "hardening: RC max_dest_rd_atomic 129 is refused "
		  "(EINVAL, QP stays in INIT), 128 is taken; max_rd_atomic "
		  "255 is clamped to 128");

	/* SQD->SQD may name max_dest_rd_atomic, but not resize the ring. */
	ok = eq_ret("RTS->SQD", vu_qp_modify_state(a.qp, IBV_QPS_SQD), 0);
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_SQD;
	attr.max_dest_rd_atomic = 4;
	ok &= eq_ret("SQD->SQD with max_dest_rd_atomic 4",
		     ibv_modify_qp(a.qp, &attr, IBV_QP_STATE |
				   IBV_QP_MAX_DEST_RD_ATOMIC), EINVAL);
	attr.max_dest_rd_atomic = LIM_RD_ATOMIC;
	ok &= eq_ret("SQD->SQD with max_dest_rd_atomic 128 (unchanged)",
		     ibv_modify_qp(a.qp, &attr, IBV_QP_STATE |
				   IBV_QP_MAX_DEST_RD_ATOMIC), 0);
	ok &= rd_atomic_is(a.qp, IBV_QPS_SQD);
	vu_report(ok, "hardening: in SQD, max_dest_rd_atomic cannot change "
		  "(EINVAL for 4, the same 128 is accepted): the responder "
		  "resources keep their size while answers may be pending");
	fx_teardown(&a, &b);
}

/* What ibv_query_device reports is what the driver enforces. */
static void hardening_attrs(struct vu_dev *d)
{
	struct ibv_device_attr a;
	int ret = ibv_query_device(d->ctx, &a);
	bool ok = eq_ret("ibv_query_device", ret, 0);

	ok = ok && eq("max_sge (send and receive WRs)", a.max_sge, LIM_SGE) &&
	     eq("max_sge_rd", a.max_sge_rd, LIM_SGE) &&
	     eq("max_qp_rd_atom", a.max_qp_rd_atom, LIM_RD_ATOMIC) &&
	     eq("max_qp_init_rd_atom", a.max_qp_init_rd_atom, LIM_RD_ATOMIC) &&
	     eq("max_res_rd_atom", a.max_res_rd_atom,
		(unsigned long long)a.max_qp * LIM_RD_ATOMIC) &&
	     eq("atomic_cap", a.atomic_cap, IBV_ATOMIC_HCA) &&
	     eq("max_cqe", a.max_cqe, LIM_CQE) &&
	     eq("max_srq", a.max_srq, LIM_SRQ) &&
	     eq("max_srq_wr", a.max_srq_wr, LIM_SRQ_WR) &&
	     eq("max_srq_sge", a.max_srq_sge, LIM_SGE) &&
	     eq("max_mw", a.max_mw, LIM_MW);
	vu_report(ok, "hardening: ibv_query_device reports the limits the "
		  "driver enforces (32 SGEs also for RDMA READ and SRQs, 128 "
		  "READ/atomic requests per QP, HCA atomics, 16384 SRQs of "
		  "16384 WRs, 65536 MWs, 65536 CQEs)");
}

/*
 * A looped-back packet's addresses are the device's own, so any QP of
 * the device could name them: user B, with a context of its own, builds
 * a QP whose destination is user A's QP b (its number and PSN are in
 * "rdma resource show qp") and sends to it.  Only b's peer a may send to
 * b: B's packets are dropped and counted (drop_bad_address, one per
 * packet sent: 1 for UC, retry_cnt + 1 for RC, whose intruder ends in
 * RETRY_EXC_ERR), and what a sends next is what b receives.
 */
static bool loopback_intruder(struct vu_dev *da, bool rc)
{
	struct qp_req r = REQ_DEFAULT;
	struct vu_dev dc = *da;
	struct snaa_rc_attr saved = vu_rc;
	long long d0, d1, want = rc ? 3 : 1;
	struct ep a, b, c = { 0 };
	struct ibv_wc wc;
	double end;
	bool ok;

	r.rc = rc;
	if (!fx_setup("hardening: loopback intruder", FX_RTS, &a, da, &r, &b,
		      da, &r))
		return false;
	dc.ctx = ibv_open_device(da->ctx->device);
	dc.pd = dc.ctx ? ibv_alloc_pd(dc.ctx) : NULL;
	vu_rc.retry_cnt = 2;	/* the intruder's: 3 packets, then RETRY_EXC */
	ok = dc.pd && !ep_open(&c, &dc, 'C', &r) && !ep_init(&c);
	c.sq_psn = b.rq_psn;	/* what b expects next */
	ok = ok && !ep_rtr(&c, &b, g_mtu) && !ep_rts(&c);
	vu_rc = saved;
	if (!ok) {
		vu_diag("the intruder's context, PD or QP: %s", strerror(errno));
		goto out;
	}
	memset(c.mem.p + SRC_OFF, 0xee, 64);
	vu_nap_us(100 * 1000);	/* past the hw_counters cache lifespan */
	d0 = vu_read_counter(da->name, "drop_bad_address");
	ok = !post_recv1(&b, 1, RCV_OFF, 256) &&
	     !post_send1(&c, IBV_WR_SEND, 2, SRC_OFF, 64, IBV_SEND_SIGNALED, 0,
			 0) &&
	     expect_cqe("the intruder's SEND", c.scq, 2,
			rc ? IBV_WC_RETRY_EXC_ERR : IBV_WC_SUCCESS,
			rc ? -1 : IBV_WC_SEND, c.qp->qp_num, -1);
	end = vu_now() + CQE_TIMEOUT;
	for (;;) {
		d1 = vu_read_counter(da->name, "drop_bad_address");
		if (!ok || d1 - d0 >= want || vu_now() >= end)
			break;
		vu_nap_us(10000);
	}
	if (d0 < 0 || d1 - d0 != want) {
		vu_diag("drop_bad_address %lld -> %lld, want +%lld", d0, d1,
			want);
		ok = false;
	}
	ok &= vu_cq_stays_empty(b.rcq, SHORT_MS, "b's receive CQ");
	/* a's own SEND is what b's receive WR gets */
	memset(a.mem.p + SRC_OFF, 0xa5, 64);
	ok = ok && !post_send1(&a, IBV_WR_SEND, 3, SRC_OFF, 64,
			       IBV_SEND_SIGNALED, 0, 0) &&
	     expect_cqe("a's SEND", a.scq, 3, IBV_WC_SUCCESS, IBV_WC_SEND,
			a.qp->qp_num, -1) &&
	     vu_poll_cq(b.rcq, &wc, 1, vu_now() + CQE_TIMEOUT) == 1 &&
	     wc.wr_id == 1 && wc.status == IBV_WC_SUCCESS &&
	     wc.byte_len == 64 &&
	     vu_bytes_all("b's receive buffer", b.mem.p + RCV_OFF, 0xa5, 64, 0);
out:
	ep_close(&c);
	if (dc.pd)
		ibv_dealloc_pd(dc.pd);
	if (dc.ctx)
		ibv_close_device(dc.ctx);
	fx_teardown(&a, &b);
	return ok;
}

static void hardening_loopback(struct vu_dev *da)
{
	vu_report(loopback_intruder(da, false), "hardening: loopback UC: "
		  "another context's QP that names our QP and its PSN is "
		  "dropped (drop_bad_address +1), our peer's SEND is what "
		  "arrives");
	vu_report(loopback_intruder(da, true), "hardening: loopback RC: "
		  "another context's QP that names our QP and its PSN is "
		  "dropped (drop_bad_address +3: every try of retry_cnt 2), "
		  "it ends in RETRY_EXC_ERR, our peer's SEND is what arrives");
}

/* Start addresses of this process's mappings of the uverbs file. */
static int uverbs_maps(uintptr_t *v, int max)
{
	unsigned long long start, end;
	char line[512], path[256];
	FILE *f = fopen("/proc/self/maps", "r");
	int n = 0;

	if (!f)
		return 0;
	while (n < max && fgets(line, sizeof(line), f)) {
		path[0] = '\0';
		if (sscanf(line, "%llx-%llx %*s %*s %*s %*s %255s", &start, &end,
			   path) == 3 && strstr(path, "/dev/infiniband/uverbs"))
			v[n++] = (uintptr_t)start;
	}
	fclose(f);
	return n;
}

/*
 * A producer index moved back behind what the kernel fetched: an SQ of
 * two slots holds two outstanding READs (the responder drops them, its
 * QP in ERR), kidx 0 and head 2, and user space sets the producer to 1
 * and rings.  Taking that as one more WQE, at index 2, would overwrite
 * slot 0, the oldest READ's, while its responses are due: the ring is
 * corrupt, the QP fails (IBV_EVENT_QP_FATAL, ERR) and the two READs are
 * flushed, once each.
 */
#define LP_MAPS		32

static void hardening_lowered_producer(struct vu_dev *da, struct vu_dev *db)
{
	struct qp_req ra = REQ_DEFAULT, rb = REQ_DEFAULT;
	uintptr_t before[LP_MAPS], after[LP_MAPS];
	struct snaa_rc_attr saved = vu_rc;
	struct snaa_ring *sq = NULL;
	int nb, na, i, j, n = 0;
	struct ep a = { 0 }, b = { 0 };
	struct ibv_wc wc[4];
	bool ok;

	ra.rc = rb.rc = true;
	ra.send_wr = 2;
	nb = uverbs_maps(before, LP_MAPS);
	vu_rc.timeout = 20;	/* 4.3 s: the READs stay outstanding */
	ok = !ep_open(&a, da, 'A', &ra) && !ep_open(&b, db, 'B', &rb) &&
	     !pair_connect(&a, &b, g_mtu) &&
	     !vu_qp_modify_state(b.qp, IBV_QPS_ERR);
	vu_rc = saved;
	na = uverbs_maps(after, LP_MAPS);
	for (i = 0; ok && i < 2; i++)
		ok = eq_ret("a READ", post_send1(&a, IBV_WR_RDMA_READ, 1 + i,
						 AUX_OFF, 64, IBV_SEND_SIGNALED,
						 (uintptr_t)b.mem.p,
						 b.mem.mr->rkey), 0);
	/* the SQ ring: new since, with the two READs posted, none consumed */
	for (i = 0; ok && i < na; i++) {
		struct snaa_ring *h = (struct snaa_ring *)after[i];

		for (j = 0; j < nb && before[j] != after[i]; j++)
			;
		if (j == nb &&
		    __atomic_load_n(&h->producer, __ATOMIC_ACQUIRE) == 2 &&
		    __atomic_load_n(&h->consumer, __ATOMIC_ACQUIRE) == 0) {
			sq = h;
			n++;
		}
	}
	if (ok && n != 1) {
		vu_diag("%d rings look like the SQ", n);
		ok = false;
	}
	if (ok) {
		struct want_event ev = { IBV_EVENT_QP_FATAL, a.qp, false };

		__atomic_store_n(&sq->producer, 1, __ATOMIC_RELEASE);
		doorbell(da->ctx, a.qp->qp_num, 4);
		ok = wait_async_events(da->ctx, &ev, 1, EVENT_MS) &&
		     eq_state("A", vu_qp_state(a.qp), IBV_QPS_ERR) &&
		     vu_poll_cq(a.scq, wc, 2, vu_now() + CQE_TIMEOUT) == 2 &&
		     check_wc("first READ", &wc[0], 1, IBV_WC_WR_FLUSH_ERR, -1,
			      a.qp->qp_num, -1) &&
		     check_wc("second READ", &wc[1], 2, IBV_WC_WR_FLUSH_ERR,
			      -1, a.qp->qp_num, -1) &&
		     vu_cq_stays_empty(a.scq, SHORT_MS, "A's send CQ");
	}
	vu_report(ok, "hardening: an SQ producer moved back behind the WQEs "
		  "fetched (2 slots, 2 READs outstanding, producer 1): "
		  "IBV_EVENT_QP_FATAL, ERR, both READs flushed once, no slot "
		  "overwritten");
	fx_teardown(&a, &b);
}

static bool mw_reset(struct ep *a, struct ep *b, bool b_errs);

/*
 * The data path moving a QP to ERR during an ibv_modify_qp: snaa's
 * debugfs modify_qp_delay_ms makes A's modify (RTS->RTS, from a second
 * thread) sleep between its checks and applying them, and meanwhile B
 * WRITEs to A with a bad R_Key: A's responder moves A to ERR.  The
 * modify, checked for RTS, must not write RTS over that error: it fails
 * with EINVAL and A stays in ERR.
 */
#define MODRACE_ROUNDS		3
#define MODRACE_DELAY_MS	300

struct modrace {
	struct ibv_qp *qp;
	int ret;
};

static void *modrace_modify(void *p)
{
	struct modrace *m = p;
	struct ibv_qp_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTS;
	m->ret = ibv_modify_qp(m->qp, &attr, IBV_QP_STATE);
	return NULL;
}

/* Write @ms to @d's debugfs modify_qp_delay_ms. */
static bool modify_delay(const struct vu_dev *d, int ms)
{
	char dir[256];

	snprintf(dir, sizeof(dir), VU_SNAA_DEBUGFS "/%s", d->name);
	return vu_write_file(dir, "modify_qp_delay_ms", "%d\n", ms);
}

static void hardening_modify_race(struct vu_dev *da, struct vu_dev *db)
{
	struct qp_req r = REQ_DEFAULT;
	struct modrace m;
	struct ep a, b;
	struct ibv_wc wc;
	bool ok = true;
	int i, ret;

	r.rc = true;
	if (!fx_setup("hardening: ERR during modify_qp", FX_RTS, &a, da, &r,
		      &b, db, &r))
		return;
	for (i = 0; ok && i < MODRACE_ROUNDS; i++) {
		pthread_t th;

		m.qp = a.qp;
		m.ret = -1;
		if (!modify_delay(da, MODRACE_DELAY_MS) ||
		    pthread_create(&th, NULL, modrace_modify, &m)) {
			ok = false;
			break;
		}
		vu_nap_us(MODRACE_DELAY_MS * 1000 / 4);	/* A's modify sleeps */
		ret = post_send1(&b, IBV_WR_RDMA_WRITE, 0x2900 + i, SRC_OFF, 64,
				 IBV_SEND_SIGNALED, (uintptr_t)a.mem.p,
				 a.mem.mr->rkey ^ 0x80);
		ok = eq_ret("B's WRITE to A with a bad R_Key", ret, 0) &&
		     vu_poll_cq(b.scq, &wc, 1, vu_now() + CQE_TIMEOUT) == 1 &&
		     check_wc("B's WRITE", &wc, 0x2900 + (uint64_t)i,
			      IBV_WC_REM_ACCESS_ERR, -1, b.qp->qp_num, -1);
		pthread_join(th, NULL);
		ok &= eq_ret("A's RTS->RTS modify, checked before the error",
			     m.ret, EINVAL) &&
		      eq_state("A after the modify", vu_qp_state(a.qp),
			       IBV_QPS_ERR);
		if (!modify_delay(da, 0))
			ok = false;
		if (ok)
			ok = mw_reset(&a, &b, true);
	}
	modify_delay(da, 0);
	vu_report(ok, "hardening: A's responder moved A to ERR (a WRITE with "
		  "a bad R_Key) while A's RTS->RTS modify slept after its "
		  "checks (debugfs modify_qp_delay_ms): EINVAL, A stays in "
		  "ERR (%d rounds)", MODRACE_ROUNDS);
	fx_teardown(&a, &b);
}

/*
 * max_msg_sz is 1 GiB: a READ (or WRITE) of 1 GiB + 1 byte completes
 * with LOC_LEN_ERR and A goes to ERR, whatever the path MTU (at 256 a
 * READ that long would take half the PSN space).  The SGE is longer
 * than its MR too: the length is what is checked first.
 */
static void hardening_msg_size(struct vu_dev *da, struct vu_dev *db)
{
	static const struct {
		enum ibv_wr_opcode op;
		const char *name;
	} ops[] = {
		{ IBV_WR_RDMA_READ, "RDMA READ" },
		{ IBV_WR_RDMA_WRITE, "RDMA WRITE" },
	};
	struct qp_req r = REQ_DEFAULT;
	struct ibv_send_wr wr, *bad;
	struct ibv_port_attr port;
	struct ep a, b;
	struct ibv_sge sge;
	struct ibv_wc wc;
	bool ok;
	size_t i;
	int ret;

	r.rc = true;
	if (!fx_setup("hardening: message size", FX_RTS, &a, da, &r, &b, db,
		      &r))
		return;
	ret = ibv_query_port(da->ctx, 1, &port);
	ok = eq_ret("ibv_query_port", ret, 0) &&
	     eq("max_msg_sz", port.max_msg_sz, 1u << 30);
	for (i = 0; ok && i < sizeof(ops) / sizeof(ops[0]); i++) {
		sge.addr = (uintptr_t)a.mem.p;
		sge.length = (1u << 30) + 1;
		sge.lkey = a.mem.mr->lkey;
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = 0x2a00 + i;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = ops[i].op;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.wr.rdma.remote_addr = (uintptr_t)b.mem.p;
		wr.wr.rdma.rkey = b.mem.mr->rkey;
		ok = eq_ret(ops[i].name, ibv_post_send(a.qp, &wr, &bad), 0) &&
		     vu_poll_cq(a.scq, &wc, 1, vu_now() + CQE_TIMEOUT) == 1 &&
		     check_wc(ops[i].name, &wc, wr.wr_id, IBV_WC_LOC_LEN_ERR,
			      -1, a.qp->qp_num, -1) &&
		     eq_state("A after the error", vu_qp_state(a.qp),
			      IBV_QPS_ERR) &&
		     mw_reset(&a, &b, false);
	}
	vu_report(ok, "hardening: max_msg_sz 1 GiB; an RDMA READ and an RDMA "
		  "WRITE of 1 GiB + 1 byte: IBV_WC_LOC_LEN_ERR, A in ERR");
	fx_teardown(&a, &b);
}

/* ---- pair.cq_ex: the extended CQ (ibv_create_cq_ex, ibv_start_poll) ------ */

/* What one work completion said, read either way. */
struct wc_fields {
	uint64_t wr_id;
	int status, opcode;
	uint32_t byte_len, imm, qp_num, src_qp, wc_flags, sl;
};

static void wc_fields_ex(struct ibv_cq_ex *cq, struct wc_fields *f)
{
	f->wr_id = cq->wr_id;
	f->status = cq->status;
	f->opcode = ibv_wc_read_opcode(cq);
	f->byte_len = ibv_wc_read_byte_len(cq);
	f->wc_flags = ibv_wc_read_wc_flags(cq);
	f->imm = f->wc_flags & IBV_WC_WITH_IMM ?
		 ntohl(ibv_wc_read_imm_data(cq)) : 0;
	f->qp_num = ibv_wc_read_qp_num(cq);
	f->src_qp = ibv_wc_read_src_qp(cq);
	f->sl = ibv_wc_read_sl(cq);
}

static void wc_fields_wc(const struct ibv_wc *wc, struct wc_fields *f)
{
	f->wr_id = wc->wr_id;
	f->status = wc->status;
	f->opcode = wc->opcode;
	f->byte_len = wc->byte_len;
	f->wc_flags = wc->wc_flags;
	f->imm = wc->wc_flags & IBV_WC_WITH_IMM ? ntohl(wc->imm_data) : 0;
	f->qp_num = wc->qp_num;
	f->src_qp = wc->src_qp;
	f->sl = wc->sl;
}

static bool wc_fields_eq(const char *what, const struct wc_fields *got,
			 const struct wc_fields *want)
{
	if (!memcmp(got, want, sizeof(*got)))
		return true;
	vu_diag("%s: wr_id 0x%" PRIx64 " status %d opcode %d byte_len %u imm 0x%x qp %u src_qp %u flags 0x%x sl %u",
		what, got->wr_id, got->status, got->opcode, got->byte_len,
		got->imm, got->qp_num, got->src_qp, got->wc_flags, got->sl);
	vu_diag("%s: want wr_id 0x%" PRIx64 " status %d opcode %d byte_len %u imm 0x%x qp %u src_qp %u flags 0x%x sl %u",
		what, want->wr_id, want->status, want->opcode,
		want->byte_len, want->imm, want->qp_num, want->src_qp,
		want->wc_flags, want->sl);
	return false;
}

/*
 * Three messages from A to B (SEND of 100 bytes, SEND with immediate of
 * 0 bytes, WRITE with immediate of 64 bytes), B's receives posted with
 * wr_id base + 0..2; waits until A's sends completed.
 */
static bool cq_ex_traffic(struct ep *a, struct ep *b, uint64_t base)
{
	static const struct { enum ibv_wr_opcode op; uint32_t len, imm; } m[3] = {
		{ IBV_WR_SEND, 100, 0 },
		{ IBV_WR_SEND_WITH_IMM, 0, 0x12345678 },
		{ IBV_WR_RDMA_WRITE_WITH_IMM, 64, 0xabcdef01 },
	};
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	struct ibv_wc wc[3];
	int i;

	for (i = 0; i < 3; i++)
		if (post_recv1(b, base + i, RCV_OFF + 256 * i, 256)) {
			vu_diag("ibv_post_recv failed");
			return false;
		}
	for (i = 0; i < 3; i++) {
		memset(&wr, 0, sizeof(wr));
		sge.addr = (uintptr_t)a->mem.p;
		sge.length = m[i].len;
		sge.lkey = a->mem.mr->lkey;
		wr.wr_id = base + 0x100 + i;
		wr.sg_list = &sge;
		wr.num_sge = m[i].len ? 1 : 0;
		wr.opcode = m[i].op;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.imm_data = htonl(m[i].imm);
		wr.wr.rdma.remote_addr = (uintptr_t)(b->mem.p + WR_OFF);
		wr.wr.rdma.rkey = b->mem.mr->rkey;
		if (ibv_post_send(a->qp, &wr, &bad)) {
			vu_diag("ibv_post_send failed");
			return false;
		}
		psn_advance(a, b, m[i].len);
	}
	if (vu_poll_cq(a->scq, wc, 3, vu_now() + 5) != 3) {
		vu_diag("the sends did not complete");
		return false;
	}
	vu_nap_us(50000);	/* the receive side is on the same path */
	return true;
}

static void case_cq_ex(struct vu_dev *da, struct vu_dev *db)
{
	struct qp_req rb = REQ_DEFAULT;
	struct ibv_poll_cq_attr pa = { 0 };
	struct ibv_cq_init_attr_ex ca = { .cqe = 4 };
	struct wc_fields want[3], got;
	struct ibv_cq_ex *cq;
	struct ibv_wc wc[4];
	struct ep a, b;
	bool ok;
	int i, ret;

	printf("# extended CQ (A %s, B %s)\n", da->name, db->name);
	ca.wc_flags = IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
	errno = 0;
	cq = ibv_create_cq_ex(db->ctx, &ca);
	ok = !cq && errno == EOPNOTSUPP;
	if (cq)
		ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
	ca.wc_flags = IBV_WC_STANDARD_FLAGS;
	ca.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS;
	ca.flags = IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN;
	errno = 0;
	cq = ibv_create_cq_ex(db->ctx, &ca);
	ok = ok && !cq && errno == EOPNOTSUPP;
	if (cq)
		ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
	vu_report(ok, "cq_ex: completion timestamps and IGNORE_OVERRUN refused with EOPNOTSUPP");

	rb.rcq_ex = true;
	if (!fx_setup("cq_ex", FX_RTS, &a, da, NULL, &b, db, &rb))
		return;
	ret = ibv_start_poll(b.rcq_ex, &pa);
	ok = ret == ENOENT;
	if (!ok)
		vu_diag("ibv_start_poll on an empty CQ: %d", ret);
	vu_report(ok, "cq_ex: ibv_start_poll on an empty CQ returns ENOENT");

	/* what ibv_poll_cq() says of the three messages, on the same CQ */
	ok = cq_ex_traffic(&a, &b, 0x7000) &&
	     ibv_poll_cq(b.rcq, 4, wc) == 3;
	for (i = 0; ok && i < 3; i++)
		wc_fields_wc(&wc[i], &want[i]);
	ok = ok && want[0].opcode == IBV_WC_RECV && want[0].byte_len == 100 &&
	     want[1].opcode == IBV_WC_RECV && want[1].imm == 0x12345678 &&
	     want[2].opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
	     want[2].byte_len == 64 && want[2].imm == 0xabcdef01 &&
	     want[2].qp_num == b.qp->qp_num;
	vu_report(ok, "cq_ex: ibv_poll_cq on an extended CQ returns the three completions");

	/* the same messages again, read with start/next/end_poll */
	ok = ok && cq_ex_traffic(&a, &b, 0x7000);
	ret = ok ? ibv_start_poll(b.rcq_ex, &pa) : -1;
	for (i = 0; ok && i < 3; i++) {
		char what[32];

		if (ret) {
			vu_diag("completion %d: %s returned %d", i,
				i ? "ibv_next_poll" : "ibv_start_poll", ret);
			ok = false;
			break;
		}
		wc_fields_ex(b.rcq_ex, &got);
		snprintf(what, sizeof(what), "completion %d", i);
		ok = wc_fields_eq(what, &got, &want[i]);
		ret = ibv_next_poll(b.rcq_ex);
	}
	if (ok && ret != ENOENT) {
		vu_diag("ibv_next_poll after the last: %d", ret);
		ok = false;
	}
	if (!ret || ret == ENOENT)
		ibv_end_poll(b.rcq_ex);
	vu_report(ok, "cq_ex: ibv_start_poll/ibv_next_poll read every field as ibv_poll_cq does, then ENOENT");
	ok = ibv_poll_cq(b.rcq, 4, wc) == 0 &&
	     ibv_start_poll(b.rcq_ex, &pa) == ENOENT;
	vu_report(ok, "cq_ex: nothing left after ibv_end_poll");
	fx_teardown(&a, &b);
}

/* ---- pair.wr_api: the ibv_wr_* send API ---------------------------------- */

#define WR_API_OPS	(IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | \
			 IBV_QP_EX_WITH_RDMA_WRITE | \
			 IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM)

static void case_wr_api(struct vu_dev *da, struct vu_dev *db)
{
	struct qp_req ra = REQ_DEFAULT;
	struct ibv_qp_init_attr_ex ax;
	struct ibv_sge big[17], two[2];
	struct ibv_qp_ex *qpx;
	struct ibv_qp *qp;
	struct ibv_wc wc[4];
	uint8_t want[256], inl[40];
	struct ep a, b;
	bool ok;
	int i, n, ret;

	printf("# ibv_wr_* API (A %s, B %s)\n", da->name, db->name);
	memset(&ax, 0, sizeof(ax));
	ax.pd = da->pd;
	ax.qp_type = IBV_QPT_UC;
	ax.cap.max_send_wr = ax.cap.max_recv_wr = 4;
	ax.cap.max_send_sge = ax.cap.max_recv_sge = 1;
	ax.send_cq = ax.recv_cq = ibv_create_cq(da->ctx, 8, NULL, NULL, 0);
	ax.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	ax.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_INV;
	errno = 0;
	qp = ax.send_cq ? ibv_create_qp_ex(da->ctx, &ax) : NULL;
	ok = !qp && errno == EOPNOTSUPP;
	if (qp)
		ibv_destroy_qp(qp);
	ax.send_ops_flags = IBV_QP_EX_WITH_RDMA_READ;	/* RC only */
	errno = 0;
	qp = ax.send_cq ? ibv_create_qp_ex(da->ctx, &ax) : NULL;
	ok = ok && !qp && errno == EOPNOTSUPP;
	if (qp)
		ibv_destroy_qp(qp);
	if (ax.send_cq)
		ibv_destroy_cq(ax.send_cq);
	vu_report(ok, "wr_api: send_ops_flags snaa cannot do (SEND_WITH_INV and READ on UC) refused with EOPNOTSUPP");

	ra.send_ops = WR_API_OPS;
	ra.inline_data = 64;
	if (!fx_setup("wr_api", FX_RTS, &a, da, &ra, &b, db, NULL))
		return;
	qpx = ibv_qp_to_qp_ex(a.qp);
	ok = qpx != NULL;
	vu_report(ok, "wr_api: ibv_qp_to_qp_ex finds the extended QP");
	if (!ok)
		goto out;

	/* one batch: SEND (1 SGE), SEND with immediate (inline), WRITE
	 * with immediate (2 SGEs) */
	vu_fill_prng(want, sizeof(want), 0x11);
	memcpy(a.mem.p + SRC_OFF, want, sizeof(want));
	memcpy(inl, want, sizeof(inl));
	for (i = 0; i < 3; i++)	/* the WRITE with immediate takes one */
		if (post_recv1(&b, 0x8000 + i, RCV_OFF + 1024 * i, 1024))
			ok = false;
	two[0] = (struct ibv_sge){ (uintptr_t)(a.mem.p + SRC_OFF), 100,
				   a.mem.mr->lkey };
	two[1] = (struct ibv_sge){ (uintptr_t)(a.mem.p + SRC_OFF + 100), 156,
				   a.mem.mr->lkey };
	ibv_wr_start(qpx);
	qpx->wr_id = 0x9000;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(qpx);
	ibv_wr_set_sge(qpx, a.mem.mr->lkey, (uintptr_t)(a.mem.p + SRC_OFF),
		       200);
	qpx->wr_id = 0x9001;
	qpx->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
	ibv_wr_send_imm(qpx, htonl(0x55aa55aa));
	ibv_wr_set_inline_data(qpx, inl, sizeof(inl));
	memset(inl, 0, sizeof(inl));	/* the data was copied */
	qpx->wr_id = 0x9002;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write_imm(qpx, b.mem.mr->rkey,
			      (uintptr_t)(b.mem.p + WR_OFF), htonl(0x01020304));
	ibv_wr_set_sge_list(qpx, 2, two);
	ret = ibv_wr_complete(qpx);
	if (ret) {
		vu_diag("ibv_wr_complete: %s", strerror(ret));
		ok = false;
	}
	n = ok ? vu_poll_cq(a.scq, wc, 3, vu_now() + 5) : 0;
	for (i = 0; i < n; i++)
		if (wc[i].status || wc[i].wr_id != 0x9000u + i)
			ok = false;
	ok = ok && n == 3;
	vu_report(ok, "wr_api: a batch of SEND, SEND_IMM (inline) and WRITE_IMM (2 SGEs) completes in order");
	n = vu_poll_cq(b.rcq, wc, 3, vu_now() + 5);
	vu_nap_us(20000);
	ok = n >= 2 && wc[0].wr_id == 0x8000 && wc[0].byte_len == 200 &&
	     wc[0].opcode == IBV_WC_RECV &&
	     wc[1].wr_id == 0x8001 && wc[1].byte_len == 40 &&
	     (wc[1].wc_flags & IBV_WC_WITH_IMM) &&
	     ntohl(wc[1].imm_data) == 0x55aa55aa &&
	     vu_bytes_eq("SEND", b.mem.p + RCV_OFF, want, 200, 0) &&
	     vu_bytes_eq("SEND_IMM inline", b.mem.p + RCV_OFF + 1024, want,
			 40, 0) &&
	     vu_bytes_eq("WRITE_IMM", b.mem.p + WR_OFF, want, 256, 0);
	if (ok && n == 2)
		n += vu_poll_cq(b.rcq, wc + 2, 1, vu_now() + 5);
	ok = ok && n == 3 && wc[2].opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
	     wc[2].byte_len == 256 && ntohl(wc[2].imm_data) == 0x01020304;
	vu_report(ok, "wr_api: B receives every byte, immediate and length as posted");

	/* a failing batch leaves no trace */
	for (i = 0; i < 17; i++)
		big[i] = two[0];
	ibv_wr_start(qpx);
	qpx->wr_id = 0x9100;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(qpx);
	ibv_wr_set_sge(qpx, a.mem.mr->lkey, (uintptr_t)(a.mem.p + SRC_OFF),
		       8);
	ibv_wr_send(qpx);
	ibv_wr_set_sge_list(qpx, 17, big);
	ret = ibv_wr_complete(qpx);
	ok = ret == EINVAL;
	ibv_wr_start(qpx);
	ibv_wr_rdma_read(qpx, b.mem.mr->rkey, (uintptr_t)b.mem.p);
	ibv_wr_set_sge(qpx, a.mem.mr->lkey, (uintptr_t)a.mem.p, 8);
	ret = ibv_wr_complete(qpx);
	ok = ok && ret == EINVAL;
	ibv_wr_start(qpx);
	ibv_wr_send(qpx);
	ibv_wr_set_sge(qpx, a.mem.mr->lkey, (uintptr_t)a.mem.p, 8);
	ibv_wr_abort(qpx);
	ok = ok && vu_cq_stays_empty(a.scq, 100, "A's send CQ") &&
	     vu_cq_stays_empty(b.rcq, 100, "B's receive CQ");
	vu_report(ok, "wr_api: a batch with 17 SGEs or an op outside send_ops_flags fails with EINVAL, an aborted one posts nothing");

	/* and the QP still works */
	ok = !post_recv1(&b, 0x8003, RCV_OFF, 1024);
	ibv_wr_start(qpx);
	qpx->wr_id = 0x9200;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(qpx);
	ibv_wr_set_sge(qpx, a.mem.mr->lkey, (uintptr_t)(a.mem.p + SRC_OFF),
		       64);
	ok = ok && !ibv_wr_complete(qpx) &&
	     vu_poll_cq(a.scq, wc, 1, vu_now() + 5) == 1 && !wc[0].status &&
	     wc[0].wr_id == 0x9200 &&
	     vu_poll_cq(b.rcq, wc, 1, vu_now() + 5) == 1 &&
	     wc[0].wr_id == 0x8003 && wc[0].byte_len == 64;
	vu_report(ok, "wr_api: after the failed batches the next one is delivered");
out:
	fx_teardown(&a, &b);
}

/* ---- pair.srq: shared receive queues ------------------------------------- */

/* A UC QP on d with CQ cq (and SRQ srq, if set), in RESET. */
static struct ibv_qp *srq_qp(struct vu_dev *d, struct ibv_cq *cq,
			     struct ibv_srq *srq)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .srq = srq, .qp_type = IBV_QPT_UC,
		.cap = { .max_send_wr = 8, .max_recv_wr = srq ? 0 : 8,
			 .max_send_sge = 1, .max_recv_sge = srq ? 0 : 1 },
	};

	return ibv_create_qp(d->pd, &ia);
}

static int srq_connect(struct ibv_qp *qp, struct vu_dev *d,
		       struct ibv_qp *peer, struct vu_dev *pd)
{
	return vu_qp_init(qp, QP_ACCESS) ||
	       vu_qp_rtr(qp, d->gid_idx, &pd->gid, peer->qp_num, g_mtu, 0) ||
	       vu_qp_rts(qp, 0);
}

static int srq_send(struct ibv_qp *qp, struct vu_buf *m, uint32_t len,
		    struct ibv_cq *cq)
{
	struct ibv_sge sge = { (uintptr_t)m->p, len, m->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = len, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;

	if (ibv_post_send(qp, &wr, &bad) ||
	    vu_poll_cq(cq, &wc, 1, vu_now() + 5) != 1 || wc.status)
		return -1;
	return 0;
}

static void case_srq(struct vu_dev *da, struct vu_dev *db)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 8, .max_sge = 1 } };
	struct ibv_qp *a1 = NULL, *a2 = NULL, *b1 = NULL, *b2 = NULL;
	struct ibv_cq *acq = NULL, *bcq = NULL;
	struct ibv_recv_wr rwr, *rbad;
	struct ibv_srq_attr attr;
	struct ibv_device_attr dattr;
	struct vu_buf am = { 0 }, bm = { 0 };
	struct ibv_srq *srq = NULL;
	struct want_event ev[1];
	struct ibv_sge sge;
	struct ibv_wc wc[4];
	bool ok;
	int i, n;

	printf("# shared receive queue (A %s, B %s)\n", da->name,
	       db->name);
	ok = !ibv_query_device(db->ctx, &dattr) && dattr.max_srq > 0 &&
	     dattr.max_srq_wr >= 8 && dattr.max_srq_sge >= 1;
	vu_report(ok, "srq: query_device reports max_srq %d, max_srq_wr %d, max_srq_sge %d",
		  dattr.max_srq, dattr.max_srq_wr, dattr.max_srq_sge);

	{
		struct ibv_srq_init_attr big = {
			.attr = { .max_wr = LIM_SRQ_WR + 1, .max_sge = 1 } };
		struct ibv_srq *s2;

		errno = 0;
		s2 = ibv_create_srq(db->pd, &big);
		ok = !s2 && errno == EINVAL;
		if (s2)
			ibv_destroy_srq(s2);
		big.attr.max_wr = 8;
		big.attr.max_sge = LIM_SGE + 1;
		errno = 0;
		s2 = ibv_create_srq(db->pd, &big);
		ok = ok && !s2 && errno == EINVAL;
		if (s2)
			ibv_destroy_srq(s2);
		big.attr.max_sge = 1;
		big.attr.srq_limit = 9;
		errno = 0;
		s2 = ibv_create_srq(db->pd, &big);
		ok = ok && !s2 && errno == EINVAL;
		if (s2)
			ibv_destroy_srq(s2);
		vu_report(ok, "srq: more WRs or SGEs than the device allows, or a limit above max_wr: EINVAL");
	}
	acq = ibv_create_cq(da->ctx, 16, NULL, NULL, 0);
	bcq = ibv_create_cq(db->ctx, 16, NULL, NULL, 0);
	srq = ibv_create_srq(db->pd, &sa);
	ok = acq && bcq && srq && sa.attr.max_wr >= 8 &&
	     !vu_buf_alloc(&am, da->pd, 4096, QP_ACCESS, 0x11) &&
	     !vu_buf_alloc(&bm, db->pd, 4096, QP_ACCESS, POISON);
	if (ok) {
		a1 = srq_qp(da, acq, NULL);
		a2 = srq_qp(da, acq, NULL);
		b1 = srq_qp(db, bcq, srq);
		b2 = srq_qp(db, bcq, srq);
	}
	ok = ok && a1 && a2 && b1 && b2 &&
	     !srq_connect(a1, da, b1, db) && !srq_connect(b1, db, a1, da) &&
	     !srq_connect(a2, da, b2, db) && !srq_connect(b2, db, a2, da);
	if (!ok)
		vu_diag("setup: %s", strerror(errno));
	vu_report(ok, "srq: an SRQ of %u and two UC QPs on it, connected",
		  sa.attr.max_wr);
	if (!ok)
		goto out;

	/* four receive WRs, limit 3: armed */
	for (i = 0; i < 4; i++) {
		sge = (struct ibv_sge){ (uintptr_t)(bm.p + 512 * i), 512,
					bm.mr->lkey };
		rwr = (struct ibv_recv_wr){ .wr_id = 0xa0 + i, .sg_list = &sge,
					    .num_sge = 1 };
		if (ibv_post_srq_recv(srq, &rwr, &rbad))
			ok = false;
	}
	attr.srq_limit = 3;
	ok = ok && !ibv_modify_srq(srq, &attr, IBV_SRQ_LIMIT) &&
	     !ibv_query_srq(srq, &attr) && attr.srq_limit == 3;
	vu_report(ok, "srq: four WRs posted, limit 3 armed (ibv_query_srq says so)");

	/*
	 * Messages on both QPs take the SRQ's WRs in order.  Each is
	 * received before the next is sent: a UC send completes when the
	 * packet leaves, and packets of two QPs may leave from two CPUs'
	 * backlogs in either order.
	 */
	n = 0;
	ok = !srq_send(a1, &am, 100, acq) &&
	     (n += vu_poll_cq(bcq, wc + n, 1, vu_now() + 5)) == 1 &&
	     !srq_send(a2, &am, 200, acq) &&
	     (n += vu_poll_cq(bcq, wc + n, 1, vu_now() + 5)) == 2 &&
	     !srq_send(a1, &am, 50, acq) &&
	     (n += vu_poll_cq(bcq, wc + n, 1, vu_now() + 5)) == 3;
	ok = n == 3 &&
	     wc[0].wr_id == 0xa0 && wc[0].qp_num == b1->qp_num &&
	     wc[0].byte_len == 100 && !wc[0].status &&
	     wc[1].wr_id == 0xa1 && wc[1].qp_num == b2->qp_num &&
	     wc[1].byte_len == 200 && !wc[1].status &&
	     wc[2].wr_id == 0xa2 && wc[2].qp_num == b1->qp_num &&
	     wc[2].byte_len == 50 && !wc[2].status;
	for (i = 0; !ok && i < n; i++)
		vu_diag("completion %d: wr_id 0x%llx qp %u len %u status %d", i,
			(unsigned long long)wc[i].wr_id, wc[i].qp_num,
			wc[i].byte_len, wc[i].status);
	vu_report(ok, "srq: three messages on two QPs consume the SRQ's WRs in order, each completion names its QP");

	ev[0] = (struct want_event){ IBV_EVENT_SRQ_LIMIT_REACHED, srq, false };
	ok = wait_async_events(db->ctx, ev, 1, 2000) &&
	     !ibv_query_srq(srq, &attr) && attr.srq_limit == 0;
	vu_report(ok, "srq: below the limit: IBV_EVENT_SRQ_LIMIT_REACHED once, limit disarmed");

	rbad = NULL;
	sge = (struct ibv_sge){ (uintptr_t)bm.p, 64, bm.mr->lkey };
	rwr = (struct ibv_recv_wr){ .wr_id = 1, .sg_list = &sge, .num_sge = 1 };
	ok = ibv_post_recv(b1, &rwr, &rbad) != 0;
	vu_report(ok, "srq: ibv_post_recv on a QP with an SRQ fails");

	/* B1 to ERR: last WQE reached; the SRQ's last WR is B2's */
	ok = !vu_qp_modify_state(b1, IBV_QPS_ERR);
	ev[0] = (struct want_event){ IBV_EVENT_QP_LAST_WQE_REACHED, b1, false };
	ok = ok && wait_async_events(db->ctx, ev, 1, 2000) &&
	     vu_cq_stays_empty(bcq, 100, "B's CQ after B1's error");
	vu_report(ok, "srq: a QP in error raises IBV_EVENT_QP_LAST_WQE_REACHED and flushes none of the SRQ's WRs");
	ok = !srq_send(a2, &am, 300, acq) &&
	     vu_poll_cq(bcq, wc, 1, vu_now() + 5) == 1 &&
	     wc[0].wr_id == 0xa3 && wc[0].qp_num == b2->qp_num &&
	     wc[0].byte_len == 300;
	vu_report(ok, "srq: the other QP receives into the SRQ's last WR");
out:
	if (b1)
		ibv_destroy_qp(b1);
	if (b2)
		ibv_destroy_qp(b2);
	if (a1)
		ibv_destroy_qp(a1);
	if (a2)
		ibv_destroy_qp(a2);
	if (srq && ibv_destroy_srq(srq))
		vu_report(false, "srq: ibv_destroy_srq");
	vu_buf_free(&am);
	vu_buf_free(&bm);
	if (acq)
		ibv_destroy_cq(acq);
	if (bcq)
		ibv_destroy_cq(bcq);
}

/* ---- pair.mw: memory windows (RC) ---------------------------------------- */

/*
 * B's target memory: four pages in an MR with LOCAL_WRITE | MW_BIND and
 * no remote rights of its own.  The windows cover its second page (from
 * MW_OFF, MW_LEN bytes) unless a check says otherwise.  A2 and B2 are
 * labelled 'a' and 'b' in diagnostics.
 */
#define MW_TGT_LEN	(4 * 4096)
#define MW_OFF		4096
#define MW_LEN		4096
#define MW_MAX		24		/* windows one run allocates */
#define MW_ERR_WAIT_MS	1000		/* a responder enters ERR after its NAK */

struct mwx {
	struct vu_dev *db;
	struct ep a1, b1, a2, b2;	/* RC pairs; B1 and B2 share B's PD */
	struct vu_buf t;		/* B's target */
	struct ibv_mw *mw[MW_MAX];	/* allocated, freed at the end */
	int nmw;
	uint64_t id;			/* wr_id of the next WR */
};

static uint8_t mw_snap[MW_TGT_LEN];

static uint64_t mw_addr(const struct mwx *x, long long off)
{
	return (uintptr_t)x->t.p + (uint64_t)off;
}

static struct ibv_mw *mw_new(struct mwx *x, enum ibv_mw_type type)
{
	struct ibv_mw *mw;

	if (x->nmw == MW_MAX) {
		vu_diag("more than %d windows", MW_MAX);
		return NULL;
	}
	mw = ibv_alloc_mw(x->db->pd, type);
	if (!mw)
		vu_diag("ibv_alloc_mw(type %d): %s", type, strerror(errno));
	else
		x->mw[x->nmw++] = mw;
	return mw;
}

/* ibv_dealloc_mw() of a window mw_new() gave; true on success. */
static bool mw_free(struct mwx *x, struct ibv_mw *mw)
{
	int i, ret;

	for (i = 0; i < x->nmw && x->mw[i] != mw; i++)
		;
	ret = ibv_dealloc_mw(mw);
	if (ret) {
		vu_diag("ibv_dealloc_mw: %s", strerror(ret));
		return false;
	}
	if (i < x->nmw)
		x->mw[i] = NULL;
	return true;
}

/*
 * Post one signaled WR of opcode op on e's QP: RDMA WRITE (len bytes
 * from SRC_OFF of e's buffer) or READ (into AUX_OFF) at raddr with R_Key
 * key, SEND_WITH_INV (len bytes from SRC_OFF) or LOCAL_INV of key.
 * Returns ibv_post_send's value.
 */
static int mw_post(struct ep *e, enum ibv_wr_opcode op, uint64_t wr_id,
		   uint32_t len, uint64_t raddr, uint32_t key)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(e->mem.p + (op == IBV_WR_RDMA_READ ?
						AUX_OFF : SRC_OFF)),
		.length = len,
		.lkey = e->mem.mr->lkey,
	};
	struct ibv_send_wr wr, *bad = NULL;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.opcode = op;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = len ? &sge : NULL;
	wr.num_sge = len ? 1 : 0;
	if (op == IBV_WR_RDMA_WRITE || op == IBV_WR_RDMA_READ) {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = key;
	} else {
		wr.invalidate_rkey = key;
	}
	return ibv_post_send(e->qp, &wr, &bad);
}

/* ibv_bind_mw() of type 1 window mw on e's QP, signaled. */
static int mw_bind1(struct ep *e, struct ibv_mw *mw, uint64_t wr_id,
		    struct ibv_mr *mr, uint64_t addr, uint64_t len,
		    unsigned int access)
{
	struct ibv_mw_bind b = {
		.wr_id = wr_id,
		.send_flags = IBV_SEND_SIGNALED,
		.bind_info = { .mr = mr, .addr = addr, .length = len,
			       .mw_access_flags = access },
	};

	return ibv_bind_mw(e->qp, mw, &b);
}

/*
 * IBV_WR_BIND_MW of type 2 window mw on e's QP, signaled, giving it
 * R_Key key.  The provider takes the window's current key from
 * mw->rkey, which, as with rdma-core's providers, is the application's
 * to keep for a type 2 window: set it once the bind has completed.
 */
static int mw_bind2(struct ep *e, struct ibv_mw *mw, uint32_t key,
		    uint64_t wr_id, struct ibv_mr *mr, uint64_t addr,
		    uint64_t len, unsigned int access)
{
	struct ibv_send_wr wr, *bad = NULL;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = key;
	wr.bind_mw.bind_info = (struct ibv_mw_bind_info){
		.mr = mr, .addr = addr, .length = len,
		.mw_access_flags = access };
	return ibv_post_send(e->qp, &wr, &bad);
}

/* A verb's return value that must be 0, as a diagnostic. */
static bool posted(const char *what, int ret)
{
	return eq_ret(what, ret, 0);
}

/* The WR wr_id of e's SQ completes with st (and opcode, on success). */
static bool mw_cqe(const char *what, struct ep *e, uint64_t wr_id,
		   enum ibv_wc_status st, int opcode)
{
	return expect_cqe(what, e->scq, wr_id, st,
			  st == IBV_WC_SUCCESS ? opcode : -1, e->qp->qp_num,
			  -1);
}

/* Type 1 bind on e, posted and completed with st. */
static bool mw_bind1_done(const char *what, struct mwx *x, struct ep *e,
			  struct ibv_mw *mw, struct ibv_mr *mr, uint64_t addr,
			  uint64_t len, unsigned int access,
			  enum ibv_wc_status st)
{
	uint64_t id = ++x->id;

	return posted(what, mw_bind1(e, mw, id, mr, addr, len, access)) &&
	       mw_cqe(what, e, id, st, IBV_WC_BIND_MW);
}

/* Type 2 bind on e to key, completed with st; mw->rkey follows it. */
static bool mw_bind2_done(const char *what, struct mwx *x, struct ep *e,
			  struct ibv_mw *mw, uint32_t key, struct ibv_mr *mr,
			  uint64_t addr, uint64_t len, unsigned int access,
			  enum ibv_wc_status st)
{
	uint64_t id = ++x->id;
	bool ok = posted(what, mw_bind2(e, mw, key, id, mr, addr, len,
					access)) &&
		  mw_cqe(what, e, id, st, IBV_WC_BIND_MW);

	if (ok && st == IBV_WC_SUCCESS)
		mw->rkey = key;
	return ok;
}

/* LOCAL_INV of key on e, completed with st. */
static bool mw_local_inv(const char *what, struct mwx *x, struct ep *e,
			 uint32_t key, enum ibv_wc_status st)
{
	uint64_t id = ++x->id;

	return posted(what, mw_post(e, IBV_WR_LOCAL_INV, id, 0, 0, key)) &&
	       mw_cqe(what, e, id, st, IBV_WC_LOCAL_INV);
}

/*
 * Both QPs of a pair back to RTS after an error (RESET, then connected
 * again with new PSNs), their CQs empty.  If b is to enter ERR by
 * itself (a responder that NAKed), it is given time to.
 */
static bool mw_reset(struct ep *a, struct ep *b, bool b_errs)
{
	struct ep *s[2] = { a, b };
	double end = vu_now() + MW_ERR_WAIT_MS / 1000.0;
	int i, ret;

	while (b_errs && vu_qp_state(b->qp) != IBV_QPS_ERR && vu_now() < end)
		vu_nap_us(1000);
	for (i = 0; i < 2; i++) {
		ret = vu_qp_modify_state(s[i]->qp, IBV_QPS_RESET);
		if (ret) {
			vu_diag("%c: to RESET: %s", s[i]->label,
				strerror(ret));
			return false;
		}
		vu_cq_drain(s[i]->scq);
		vu_cq_drain(s[i]->rcq);
	}
	return !pair_connect(a, b, g_mtu);
}

/*
 * RDMA WRITE of len bytes (PRNG stream seed) from a at offset off of B's
 * target with R_Key key: it completes, and the whole target then holds
 * exactly what it held before plus those bytes.
 */
static bool mw_write_ok(const char *what, struct mwx *x, struct ep *a,
			long long off, uint32_t len, uint32_t key,
			uint64_t seed)
{
	uint64_t id = ++x->id;
	bool ok;

	vu_fill_prng(a->mem.p + SRC_OFF, len, seed);
	memcpy(mw_snap, x->t.p, MW_TGT_LEN);
	memcpy(mw_snap + off, a->mem.p + SRC_OFF, len);
	ok = posted(what, mw_post(a, IBV_WR_RDMA_WRITE, id, len,
				  mw_addr(x, off), key)) &&
	     mw_cqe(what, a, id, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	return ok && vu_bytes_eq(what, x->t.p, mw_snap, MW_TGT_LEN, 0);
}

/*
 * An RDMA WRITE or READ of len bytes from a at offset off of B's target
 * with R_Key key that must fail: IBV_WC_REM_ACCESS_ERR, the target
 * unchanged.  The pair a-b is reset afterwards.
 */
static bool mw_denied(const char *what, struct mwx *x, struct ep *a,
		      struct ep *b, enum ibv_wr_opcode op, long long off,
		      uint32_t len, uint32_t key)
{
	uint64_t id = ++x->id;
	bool ok;

	memset(a->mem.p + SRC_OFF, 0x3c, len);
	memcpy(mw_snap, x->t.p, MW_TGT_LEN);
	ok = posted(what, mw_post(a, op, id, len, mw_addr(x, off), key)) &&
	     mw_cqe(what, a, id, IBV_WC_REM_ACCESS_ERR, -1);
	ok = vu_bytes_eq(what, x->t.p, mw_snap, MW_TGT_LEN, 0) && ok;
	return mw_reset(a, b, true) && ok;
}

/* Windows, MR and QPs of pair.mw; false (reported) if that failed. */
static bool mw_setup(struct mwx *x, struct vu_dev *da, struct vu_dev *db)
{
	struct qp_req ra = REQ_DEFAULT, rb = REQ_DEFAULT;
	bool ok;
	int ret;

	memset(x, 0, sizeof(*x));
	x->db = db;
	ra.rc = rb.rc = true;
	rb.rcq_ex = true;		/* B1's receive CQ: read both ways */
	if (!fx_setup("mw", FX_RTS, &x->a1, da, &ra, &x->b1, db, &rb))
		return false;
	ok = !ep_open(&x->a2, da, 'a', &ra) && !ep_open(&x->b2, db, 'b', &ra) &&
	     !pair_connect(&x->a2, &x->b2, g_mtu);
	ret = ok ? vu_buf_alloc(&x->t, db->pd, MW_TGT_LEN,
				IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND,
				POISON) : 0;
	if (ret)
		vu_diag("B: %d-byte MR with LOCAL_WRITE | MW_BIND: %s",
			MW_TGT_LEN, strerror(ret));
	ok = ok && !ret;
	vu_report(ok, "mw: setup: two RC pairs A1-B1, A2-B2 (B1, B2 in one PD), B's MR with only LOCAL_WRITE | MW_BIND registered");
	return ok;
}

static void mw_teardown(struct mwx *x)
{
	int i;

	for (i = 0; i < x->nmw; i++)
		if (x->mw[i] && ibv_dealloc_mw(x->mw[i]))
			vu_report(false, "mw: teardown: ibv_dealloc_mw");
	vu_buf_free(&x->t);
	fx_teardown(&x->a2, &x->b2);
	fx_teardown(&x->a1, &x->b1);
}

/* ibv_alloc_mw, and a type 1 bind in SQ order behind a SEND in RNR. */
static struct ibv_mw *mw_alloc_and_order(struct mwx *x)
{
	struct ibv_device_attr_ex da;
	struct ibv_mw *mw1, *mw2, *mw3;
	uint64_t sid = ++x->id, bid = ++x->id, rid = ++x->id;
	uint32_t key;
	bool ok;
	int err;

	memset(&da, 0, sizeof(da));
	ok = eq_ret("ibv_query_device_ex",
		    ibv_query_device_ex(x->db->ctx, NULL, &da), 0) &&
	     eq("device_cap_flags & (MEM_WINDOW | MEM_WINDOW_TYPE_2B)",
		da.orig_attr.device_cap_flags &
		(IBV_DEVICE_MEM_WINDOW | IBV_DEVICE_MEM_WINDOW_TYPE_2B),
		IBV_DEVICE_MEM_WINDOW | IBV_DEVICE_MEM_WINDOW_TYPE_2B) &&
	     eq("max_mw", da.orig_attr.max_mw, LIM_MW);
	mw1 = mw_new(x, IBV_MW_TYPE_1);
	mw2 = mw_new(x, IBV_MW_TYPE_2);
	errno = 0;
	mw3 = ibv_alloc_mw(x->db->pd, (enum ibv_mw_type)3);
	err = errno;
	ok = ok && mw1 && mw2 && eq("type 1 window's type", mw1->type, 1) &&
	     eq("type 2 window's type", mw2->type, 2) &&
	     failed_with("ibv_alloc_mw(type 3)", mw3, err, EINVAL);
	if (mw3)
		ibv_dealloc_mw(mw3);
	if (mw2)
		mw_free(x, mw2);
	vu_report(ok, "mw: query_device reports MEM_WINDOW, MEM_WINDOW_TYPE_2B and max_mw %d; ibv_alloc_mw gives type 1 and type 2 windows, refuses type 3 (EINVAL)",
		  LIM_MW);
	if (!mw1)
		return NULL;

	/*
	 * B1's SEND waits for a receive WR on A1 (RNR, retried forever);
	 * the bind behind it must wait too, then complete after it.
	 */
	key = mw1->rkey;
	ok = posted("B1's SEND", mw_post(&x->b1, IBV_WR_SEND, sid, 16, 0, 0)) &&
	     posted("ibv_bind_mw", mw_bind1(&x->b1, mw1, bid, x->t.mr,
					    mw_addr(x, MW_OFF), MW_LEN,
					    IBV_ACCESS_REMOTE_WRITE)) &&
	     eq("window's key after ibv_bind_mw", mw1->rkey,
		ibv_inc_rkey(key)) &&
	     vu_cq_stays_empty(x->b1.scq, SHORT_MS,
			       "B1's send CQ while its SEND waits (RNR)") &&
	     posted("A1's receive WR", post_recv1(&x->a1, rid, RCV_OFF, 64)) &&
	     mw_cqe("B1's SEND", &x->b1, sid, IBV_WC_SUCCESS, IBV_WC_SEND) &&
	     mw_cqe("the bind", &x->b1, bid, IBV_WC_SUCCESS, IBV_WC_BIND_MW) &&
	     expect_cqe("A1's receive", x->a1.rcq, rid, IBV_WC_SUCCESS,
			IBV_WC_RECV, x->a1.qp->qp_num, 16);
	vu_report(ok, "mw: a type 1 bind (ibv_bind_mw) behind a SEND waiting for RNR does not complete before it, then completes with IBV_WC_BIND_MW; the window has the next key");
	return mw1;
}

/* Type 1: access through it, rebind, unbind. */
static void mw_type1(struct mwx *x, struct ibv_mw *mw1)
{
	static const struct {
		const char *what;
		enum ibv_wr_opcode op;
		long long off;
	} denied[] = {
		{ "WRITE across its end", IBV_WR_RDMA_WRITE, MW_OFF + MW_LEN - 32 },
		{ "WRITE across its start", IBV_WR_RDMA_WRITE, MW_OFF - 32 },
		{ "READ inside it (no REMOTE_READ)", IBV_WR_RDMA_READ, MW_OFF },
	};
	uint8_t want[1000];
	uint32_t old;
	size_t i;
	bool ok;

	ok = mw_write_ok("WRITE A1->B1 through the window", x, &x->a1,
			 MW_OFF + 100, 1000, mw1->rkey, 0x1301);
	vu_report(ok, "mw: RDMA WRITE through the type 1 window (its MR has no REMOTE_WRITE) lands: 1000 bytes exact, nothing else in the MR changed");
	ok = mw_write_ok("WRITE A2->B2 through the window", x, &x->a2,
			 MW_OFF + 2000, 500, mw1->rkey, 0x1302);
	vu_report(ok, "mw: the type 1 window bound through B1 also serves B2 (same PD): WRITE A2->B2 lands exactly");

	for (i = 0; i < sizeof(denied) / sizeof(denied[0]); i++) {
		ok = mw_denied(denied[i].what, x, &x->a1, &x->b1, denied[i].op,
			       denied[i].off, 64, mw1->rkey);
		vu_report(ok, "mw: write-only window [+%d, +%d): %s: IBV_WC_REM_ACCESS_ERR, nothing written",
			  MW_OFF, MW_OFF + MW_LEN, denied[i].what);
	}

	/* rebind, now with READ too: the old key is dead */
	old = mw1->rkey;
	ok = mw_bind1_done("rebind", x, &x->b1, mw1, x->t.mr,
			   mw_addr(x, MW_OFF), MW_LEN,
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
			   IBV_WC_SUCCESS) &&
	     eq("new key", mw1->rkey, ibv_inc_rkey(old));
	ok = ok && mw_denied("WRITE with the old key", x, &x->a1, &x->b1,
			     IBV_WR_RDMA_WRITE, MW_OFF + 100, 64, old);
	vu_fill_prng(want, sizeof(want), 0x1301);
	ok = ok && posted("READ", mw_post(&x->a1, IBV_WR_RDMA_READ, ++x->id,
					  1000, mw_addr(x, MW_OFF + 100),
					  mw1->rkey)) &&
	     mw_cqe("READ with the new key", &x->a1, x->id, IBV_WC_SUCCESS,
		    IBV_WC_RDMA_READ) &&
	     vu_bytes_eq("READ data", x->a1.mem.p + AUX_OFF, want, 1000, 0);
	vu_report(ok, "mw: type 1 rebind (write + read): the old key fails (IBV_WC_REM_ACCESS_ERR), a READ with the new one returns the bytes written before");

	/* unbind: length 0, no MR */
	ok = mw_bind1_done("unbind", x, &x->b1, mw1, NULL, 0, 0, 0,
			   IBV_WC_SUCCESS) &&
	     mw_denied("WRITE after the unbind", x, &x->a1, &x->b1,
		       IBV_WR_RDMA_WRITE, MW_OFF + 100, 64, mw1->rkey);
	vu_report(ok, "mw: type 1 unbind (length 0) completes; access through the window then fails (IBV_WC_REM_ACCESS_ERR)");
}

/*
 * The next completion of B1's receive CQ, read with ibv_poll_cq or (ex)
 * with ibv_start_poll and the ibv_wc_read_* functions.
 */
static bool mw_recv_wc(struct mwx *x, bool ex, struct ibv_wc *wc)
{
	struct ibv_poll_cq_attr pa = { 0 };
	struct ibv_cq_ex *cqx = x->b1.rcq_ex;
	double end = vu_now() + CQE_TIMEOUT;
	int ret;

	memset(wc, 0, sizeof(*wc));
	if (!ex) {
		if (vu_poll_cq(x->b1.rcq, wc, 1, end) == 1)
			return true;
		vu_diag("B1's receive: no completion within %.0f s",
			CQE_TIMEOUT);
		return false;
	}
	while ((ret = ibv_start_poll(cqx, &pa)) == ENOENT && vu_now() < end)
		vu_nap_us(100);
	if (!eq_ret("ibv_start_poll", ret, 0))
		return false;
	wc->wr_id = cqx->wr_id;
	wc->status = cqx->status;
	wc->opcode = ibv_wc_read_opcode(cqx);
	wc->qp_num = ibv_wc_read_qp_num(cqx);
	wc->byte_len = ibv_wc_read_byte_len(cqx);
	wc->wc_flags = ibv_wc_read_wc_flags(cqx);
	wc->invalidated_rkey = ibv_wc_read_invalidated_rkey(cqx);
	ibv_end_poll(cqx);
	return true;
}

/*
 * SEND_WITH_INV of 24 bytes from A1 naming a type 2 window bound
 * through B1: A1's SEND completes, B1's receive completion carries
 * IBV_WC_WITH_INV and the key, the data arrived, and access through the
 * window then fails.
 */
static bool mw_send_inv(struct mwx *x, bool ex)
{
	struct ibv_mw *mw = mw_new(x, IBV_MW_TYPE_2);
	uint64_t sid = ++x->id, rid = ++x->id;
	uint32_t key = mw ? ibv_inc_rkey(mw->rkey) : 0;
	uint8_t want[24];
	struct ibv_wc wc;
	bool ok;

	vu_fill_prng(x->a1.mem.p + SRC_OFF, sizeof(want), rid);
	memcpy(want, x->a1.mem.p + SRC_OFF, sizeof(want));
	ok = mw && mw_bind2_done("bind", x, &x->b1, mw, key, x->t.mr,
				 mw_addr(x, MW_OFF), MW_LEN,
				 IBV_ACCESS_REMOTE_WRITE, IBV_WC_SUCCESS) &&
	     posted("B1's receive WR", post_recv1(&x->b1, rid, RCV_OFF, 64)) &&
	     posted("SEND_WITH_INV", mw_post(&x->a1, IBV_WR_SEND_WITH_INV, sid,
					     sizeof(want), 0, key)) &&
	     mw_cqe("A1's SEND_WITH_INV", &x->a1, sid, IBV_WC_SUCCESS,
		    IBV_WC_SEND) &&
	     mw_recv_wc(x, ex, &wc) &&
	     check_wc("B1's receive", &wc, rid, IBV_WC_SUCCESS, IBV_WC_RECV,
		      x->b1.qp->qp_num, sizeof(want)) &&
	     eq("wc_flags", wc.wc_flags, IBV_WC_WITH_INV) &&
	     eq("invalidated_rkey", wc.invalidated_rkey, key) &&
	     vu_bytes_eq("SEND_WITH_INV data", x->b1.mem.p + RCV_OFF, want,
			 sizeof(want), 0);
	return ok && mw_denied("WRITE after SEND_WITH_INV", x, &x->a1, &x->b1,
			       IBV_WR_RDMA_WRITE, MW_OFF, 64, key);
}

/* Type 2: bound through B1 only, LOCAL_INV, SEND with invalidate. */
static void mw_type2(struct mwx *x)
{
	const unsigned int rw = IBV_ACCESS_REMOTE_WRITE |
				IBV_ACCESS_REMOTE_READ;
	struct ibv_mw *mw = mw_new(x, IBV_MW_TYPE_2);
	uint32_t key = mw ? ibv_inc_rkey(mw->rkey) : 0;
	uint64_t wid;
	bool ok;

	ok = mw && mw_bind2_done("type 2 bind", x, &x->b1, mw, key, x->t.mr,
				 mw_addr(x, MW_OFF), MW_LEN, rw,
				 IBV_WC_SUCCESS) &&
	     mw_write_ok("WRITE A1->B1 through the type 2 window", x, &x->a1,
			 MW_OFF + 10, 300, key, 0x1321);
	vu_report(ok, "mw: type 2 bind (IBV_WR_BIND_MW on B1) completes with IBV_WC_BIND_MW; RDMA WRITE A1->B1 through it lands exactly");
	ok = mw && mw_denied("WRITE A2->B2 with the type 2 window's key", x,
			     &x->a2, &x->b2, IBV_WR_RDMA_WRITE, MW_OFF + 10,
			     64, key);
	vu_report(ok, "mw: the type 2 window bound through B1 refuses access through B2 (same PD): IBV_WC_REM_ACCESS_ERR, nothing written");

	/* bound: a second bind fails, and breaks B1 */
	wid = ++x->id;
	ok = mw && mw_bind2_done("second bind", x, &x->b1, mw,
				 ibv_inc_rkey(key), x->t.mr,
				 mw_addr(x, MW_OFF), MW_LEN, rw,
				 IBV_WC_MW_BIND_ERR) &&
	     posted("WRITE behind the bind",
		    mw_post(&x->b1, IBV_WR_RDMA_WRITE, wid, 8,
			    (uintptr_t)(x->a1.mem.p + WR_OFF),
			    x->a1.mem.mr->rkey)) &&
	     mw_cqe("WRITE behind the failed bind", &x->b1, wid,
		    IBV_WC_WR_FLUSH_ERR, -1) &&
	     eq_state("B1", vu_qp_state(x->b1.qp), IBV_QPS_ERR);
	ok = mw_reset(&x->a1, &x->b1, false) && ok;
	vu_report(ok, "mw: binding a type 2 window that is still bound: IBV_WC_MW_BIND_ERR, the WR behind it flushed, B1 in ERR");

	mw = mw_new(x, IBV_MW_TYPE_2);
	key = mw ? ibv_inc_rkey(mw->rkey) : 0;
	ok = mw && mw_bind2_done("bind", x, &x->b1, mw, key, x->t.mr,
				 mw_addr(x, MW_OFF), MW_LEN, rw,
				 IBV_WC_SUCCESS) &&
	     mw_local_inv("LOCAL_INV of the type 2 window", x, &x->b1, key,
			  IBV_WC_SUCCESS) &&
	     mw_denied("WRITE after LOCAL_INV", x, &x->a1, &x->b1,
		       IBV_WR_RDMA_WRITE, MW_OFF + 10, 64, key);
	vu_report(ok, "mw: IBV_WR_LOCAL_INV of a type 2 window: IBV_WC_LOCAL_INV, success; access then fails (IBV_WC_REM_ACCESS_ERR)");

	vu_report(mw_send_inv(x, false),
		  "mw: SEND_WITH_INV of a type 2 window's key (ibv_poll_cq): the receive completion is IBV_WC_RECV with IBV_WC_WITH_INV and invalidated_rkey = the key, data exact; access then fails");
	vu_report(mw_send_inv(x, true),
		  "mw: the same through ibv_start_poll: ibv_wc_read_wc_flags gives IBV_WC_WITH_INV, ibv_wc_read_invalidated_rkey the key");

	mw = mw_new(x, IBV_MW_TYPE_2);
	key = mw ? ibv_inc_rkey(mw->rkey) : 0;
	ok = mw && mw_bind2_done("bind", x, &x->b1, mw, key, x->t.mr,
				 mw_addr(x, MW_OFF), MW_LEN, rw,
				 IBV_WC_SUCCESS) &&
	     mw_free(x, mw) &&
	     mw_denied("WRITE after ibv_dealloc_mw", x, &x->a1, &x->b1,
		       IBV_WR_RDMA_WRITE, MW_OFF + 10, 64, key);
	vu_report(ok, "mw: ibv_dealloc_mw of a bound type 2 window: access through its key then fails (IBV_WC_REM_ACCESS_ERR)");
}

/*
 * ibv_dereg_mr of an MR with a window bound to it: EBUSY until the
 * window is unbound (type 1), invalidated or deallocated (type 2).  The
 * MR covers the first page of B's target (a second MR on that memory).
 */
static void mw_dereg(struct mwx *x)
{
	static const char *const how[] = {
		"type 1, unbound", "type 2, LOCAL_INV", "type 2, deallocated",
	};
	struct ibv_mr *mr;
	struct ibv_mw *mw;
	uint32_t key;
	bool ok = true;
	int i, ret;

	for (i = 0; ok && i < 3; i++) {
		mr = ibv_reg_mr(x->db->pd, x->t.p, 4096,
				IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
		mw = mw_new(x, i ? IBV_MW_TYPE_2 : IBV_MW_TYPE_1);
		if (!mr || !mw) {
			vu_diag("%s: MR or window: %s", how[i],
				strerror(errno));
			ok = false;
			break;
		}
		key = ibv_inc_rkey(mw->rkey);
		ok = i ? mw_bind2_done(how[i], x, &x->b1, mw, key, mr,
				       (uintptr_t)x->t.p, 4096,
				       IBV_ACCESS_REMOTE_WRITE,
				       IBV_WC_SUCCESS) :
			 mw_bind1_done(how[i], x, &x->b1, mw, mr,
				       (uintptr_t)x->t.p, 4096,
				       IBV_ACCESS_REMOTE_WRITE,
				       IBV_WC_SUCCESS);
		ret = ibv_dereg_mr(mr);
		ok = ok && eq_ret("ibv_dereg_mr with a window bound", ret,
				  EBUSY);
		if (!ret)
			mr = NULL;
		if (ok && i == 0)
			ok = mw_bind1_done("unbind", x, &x->b1, mw, NULL, 0, 0,
					   0, IBV_WC_SUCCESS);
		if (ok && i == 1)
			ok = mw_local_inv("LOCAL_INV", x, &x->b1, key,
					  IBV_WC_SUCCESS);
		if (ok && i == 2)
			ok = mw_free(x, mw);
		if (mr) {
			ret = ibv_dereg_mr(mr);
			ok = eq_ret(how[i], ret, 0) && ok;
			if (ret)
				vu_diag("%s: the MR stays registered", how[i]);
		}
	}
	vu_report(ok, "mw: ibv_dereg_mr of an MR with a bound window fails with EBUSY, and succeeds once the window is unbound (type 1), invalidated (LOCAL_INV) or deallocated (type 2)");
}

/*
 * Binds that cannot be done: IBV_WC_MW_BIND_ERR, the WR behind flushed,
 * the QP in ERR.  Each with a new type 1 window, on B1.
 */
static void mw_bind_errors(struct mwx *x)
{
	enum { M_TGT, M_NO_BIND, M_NO_LW };
	static const struct {
		const char *what;
		int mr;
		long long off;
		uint64_t len;
		unsigned int access;
	} bad[] = {
		{ "an MR without MW_BIND", M_NO_BIND, MW_OFF, MW_LEN,
		  IBV_ACCESS_REMOTE_WRITE },
		{ "a range beyond the MR's end", M_TGT, MW_TGT_LEN - 100, 200,
		  IBV_ACCESS_REMOTE_WRITE },
		{ "REMOTE_WRITE on an MR without LOCAL_WRITE", M_NO_LW, MW_OFF,
		  MW_LEN, IBV_ACCESS_REMOTE_WRITE },
		{ "IBV_ACCESS_ZERO_BASED in the rights", M_TGT, MW_OFF, MW_LEN,
		  IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_ZERO_BASED },
	};
	struct ibv_mr *mrs[3] = { x->t.mr, NULL, NULL };
	struct ibv_mw *mw;
	uint64_t bid, wid;
	size_t i;
	bool ok;

	mrs[M_NO_BIND] = ibv_reg_mr(x->db->pd, x->t.p, MW_TGT_LEN,
				    IBV_ACCESS_LOCAL_WRITE);
	mrs[M_NO_LW] = ibv_reg_mr(x->db->pd, x->t.p, MW_TGT_LEN,
				  IBV_ACCESS_MW_BIND);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		mw = mw_new(x, IBV_MW_TYPE_1);
		bid = ++x->id;
		wid = ++x->id;
		ok = mw && mrs[bad[i].mr];
		if (!mrs[bad[i].mr])
			vu_diag("ibv_reg_mr: %s", strerror(errno));
		ok = ok && posted(bad[i].what,
				  mw_bind1(&x->b1, mw, bid, mrs[bad[i].mr],
					   mw_addr(x, bad[i].off), bad[i].len,
					   bad[i].access)) &&
		     posted("WRITE behind the bind",
			    mw_post(&x->b1, IBV_WR_RDMA_WRITE, wid, 8,
				    (uintptr_t)(x->a1.mem.p + WR_OFF),
				    x->a1.mem.mr->rkey)) &&
		     mw_cqe(bad[i].what, &x->b1, bid, IBV_WC_MW_BIND_ERR, -1) &&
		     mw_cqe("WRITE behind the failed bind", &x->b1, wid,
			    IBV_WC_WR_FLUSH_ERR, -1) &&
		     eq_state("B1", vu_qp_state(x->b1.qp), IBV_QPS_ERR);
		ok = mw_reset(&x->a1, &x->b1, false) && ok;
		vu_report(ok, "mw: bind error, %s: IBV_WC_MW_BIND_ERR, the WR behind it flushed, B1 in ERR",
			  bad[i].what);
	}
	if (mrs[M_NO_BIND])
		ibv_dereg_mr(mrs[M_NO_BIND]);
	if (mrs[M_NO_LW])
		ibv_dereg_mr(mrs[M_NO_LW]);
}

/*
 * Invalidations of keys that cannot be invalidated: LOCAL_INV gives
 * IBV_WC_LOC_QP_OP_ERR, SEND_WITH_INV a NAK (IBV_WC_REM_INV_REQ_ERR).
 */
static void mw_inv_errors(struct mwx *x)
{
	struct ibv_mw *t1 = mw_new(x, IBV_MW_TYPE_1);
	struct ibv_mw *t2 = mw_new(x, IBV_MW_TYPE_2);
	uint32_t key2 = t2 ? ibv_inc_rkey(t2->rkey) : 0;
	uint64_t sid, rid;
	bool ok, bound2;
	int i;

	ok = t1 && mw_bind1_done("type 1 bind", x, &x->b1, t1, x->t.mr,
				 mw_addr(x, MW_OFF), MW_LEN,
				 IBV_ACCESS_REMOTE_WRITE, IBV_WC_SUCCESS) &&
	     mw_local_inv("LOCAL_INV of a type 1 window's key", x, &x->b1,
			  t1->rkey, IBV_WC_LOC_QP_OP_ERR);
	ok = mw_reset(&x->a1, &x->b1, false) && ok;
	vu_report(ok, "mw: LOCAL_INV of a (bound) type 1 window's R_Key: IBV_WC_LOC_QP_OP_ERR");

	ok = mw_local_inv("LOCAL_INV of a plain MR's key", x, &x->b1,
			  x->b1.mem.mr->rkey, IBV_WC_LOC_QP_OP_ERR);
	ok = mw_reset(&x->a1, &x->b1, false) && ok;
	vu_report(ok, "mw: LOCAL_INV of a plain MR's R_Key: IBV_WC_LOC_QP_OP_ERR");

	/* a type 2 window bound through B2: B1 may not invalidate it */
	bound2 = t2 && mw_bind2_done("type 2 bind on B2", x, &x->b2, t2, key2,
				     x->t.mr, mw_addr(x, MW_OFF), MW_LEN,
				     IBV_ACCESS_REMOTE_WRITE, IBV_WC_SUCCESS);
	for (i = 0; i < 2; i++) {
		uint32_t key = i ? key2 : x->t.mr->rkey;

		sid = ++x->id;
		rid = ++x->id;
		ok = (i == 0 || bound2) &&
		     posted("B1's receive WR",
			    post_recv1(&x->b1, rid, RCV_OFF, 64)) &&
		     posted("SEND_WITH_INV",
			    mw_post(&x->a1, IBV_WR_SEND_WITH_INV, sid, 16, 0,
				    key)) &&
		     mw_cqe("A1's SEND_WITH_INV", &x->a1, sid,
			    IBV_WC_REM_INV_REQ_ERR, -1);
		ok = mw_reset(&x->a1, &x->b1, true) && ok;
		vu_report(ok, "mw: SEND_WITH_INV naming %s: the sender gets IBV_WC_REM_INV_REQ_ERR",
			  i ? "a type 2 window bound through another QP (B2)" :
			      "a plain MR's R_Key (B's target MR)");
	}
}

/*
 * Local operations are work without a packet: they count against the
 * send queue's budget of 256 per turn like packets, or a process that
 * keeps the ring full of unsignaled binds and invalidations holds the
 * kernel in one loop (with BHs off at times) for as long as it likes.
 * 1024 pairs in one post are 2048 operations: at least 7 turns that end
 * with work left, each counted in sq_budget_yields.
 */
#define STORM_PAIRS	1024

static void mw_storm(struct mwx *x, struct vu_dev *da)
{
	struct qp_req ra = REQ_DEFAULT, rb = REQ_DEFAULT;
	struct ibv_send_wr *wrs, *bad = NULL;
	uint64_t last = 0x5703000 + STORM_PAIRS - 1;
	long long y0, y1;
	struct ibv_mw *mw;
	struct ep a, b;
	uint32_t key;
	bool ok;
	int i;

	ra.rc = rb.rc = true;
	rb.send_wr = 2 * STORM_PAIRS;
	if (!fx_setup("mw: storm", FX_RTS, &a, da, &ra, &b, x->db, &rb))
		return;
	mw = mw_new(x, IBV_MW_TYPE_2);
	wrs = calloc(2 * STORM_PAIRS, sizeof(*wrs));
	ok = mw && wrs;
	for (i = 0; ok && i < STORM_PAIRS; i++) {
		struct ibv_send_wr *bw = &wrs[2 * i], *iw = &wrs[2 * i + 1];

		key = (mw->rkey & ~0xffu) | ((mw->rkey + 1 + i) & 0xff);
		bw->wr_id = iw->wr_id = 0x5703000 + i;
		bw->opcode = IBV_WR_BIND_MW;
		bw->bind_mw.mw = mw;
		bw->bind_mw.rkey = key;
		bw->bind_mw.bind_info = (struct ibv_mw_bind_info){
			.mr = x->t.mr, .addr = mw_addr(x, MW_OFF),
			.length = MW_LEN,
			.mw_access_flags = IBV_ACCESS_REMOTE_WRITE };
		bw->next = iw;
		iw->opcode = IBV_WR_LOCAL_INV;
		iw->invalidate_rkey = key;
		iw->next = i + 1 < STORM_PAIRS ? &wrs[2 * i + 2] : NULL;
	}
	if (ok)
		wrs[2 * STORM_PAIRS - 1].send_flags = IBV_SEND_SIGNALED;
	y0 = vu_read_counter(x->db->name, "sq_budget_yields");
	ok = ok && posted("1024 BIND_MW/LOCAL_INV pairs",
			  ibv_post_send(b.qp, wrs, &bad)) &&
	     mw_cqe("the last LOCAL_INV", &b, last, IBV_WC_SUCCESS,
		    IBV_WC_LOCAL_INV);
	vu_nap_us(100 * 1000);	/* past the hw_counters cache lifespan */
	y1 = vu_read_counter(x->db->name, "sq_budget_yields");
	if (ok && (y0 < 0 || y1 - y0 < 2 * STORM_PAIRS / 256 - 1)) {
		vu_diag("sq_budget_yields %lld -> %lld", y0, y1);
		ok = false;
	}
	vu_report(ok, "mw: %d unsignaled BIND_MW/LOCAL_INV pairs in one post "
		  "complete (the last signaled, success) in turns of the send "
		  "queue's budget (sq_budget_yields +%lld, at least %d)",
		  STORM_PAIRS, y1 - y0, 2 * STORM_PAIRS / 256 - 1);
	free(wrs);
	if (mw)
		mw_free(x, mw);
	fx_teardown(&a, &b);
}

/*
 * ibv_dealloc_mw() racing a bind of the same type 2 window: the bind may
 * have found the window before it left the key table, and win or lose,
 * it must not leave it bound once it is gone: the MR would then count a
 * window that no longer exists and never deregister (EBUSY), pinned for
 * good.  Each round: a fresh window, its dealloc in a second thread
 * released together with the bind's post; the bind completes with
 * success (it came first; the dealloc unbinds it) or IBV_WC_MW_BIND_ERR
 * (the window was gone: the QP is reset).  Then the MR deregisters.
 */
#define DR_ROUNDS	200

struct dr_arg {
	struct ibv_mw *mw;
	atomic_int go;
	int ret;
};

static void *dr_dealloc(void *p)
{
	struct dr_arg *d = p;

	while (!atomic_load(&d->go))
		;
	d->ret = ibv_dealloc_mw(d->mw);
	return NULL;
}

static void mw_dealloc_race(struct mwx *x, struct vu_dev *da)
{
	struct qp_req r = REQ_DEFAULT;
	int i, won = 0, lost = 0, ret;
	struct ibv_mr *mr = NULL;
	struct dr_arg d;
	struct ep a, b;
	struct ibv_wc wc;
	bool ok;

	r.rc = true;
	if (!fx_setup("mw: dealloc racing a bind", FX_RTS, &a, da, &r, &b,
		      x->db, &r))
		return;
	mr = ibv_reg_mr(x->db->pd, x->t.p, MW_TGT_LEN,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	ok = mr != NULL;
	for (i = 0; ok && i < DR_ROUNDS; i++) {
		struct ibv_mw *mw = ibv_alloc_mw(x->db->pd, IBV_MW_TYPE_2);
		struct ibv_mw copy;
		pthread_t th;

		if (!mw) {
			vu_diag("ibv_alloc_mw: %s", strerror(errno));
			ok = false;
			break;
		}
		copy = *mw;	/* the post reads it after the dealloc freed mw */
		d.mw = mw;
		atomic_store(&d.go, 0);
		if (pthread_create(&th, NULL, dr_dealloc, &d)) {
			ibv_dealloc_mw(mw);
			ok = false;
			break;
		}
		atomic_store(&d.go, 1);
		ret = mw_bind2(&b, &copy, (copy.rkey & ~0xffu) |
			       ((copy.rkey + 1) & 0xff), 0xd000 + i, mr,
			       mw_addr(x, MW_OFF), MW_LEN,
			       IBV_ACCESS_REMOTE_WRITE);
		pthread_join(th, NULL);
		ok = eq_ret("the bind's post", ret, 0) &&
		     eq_ret("ibv_dealloc_mw", d.ret, 0) &&
		     vu_poll_cq(b.scq, &wc, 1, vu_now() + CQE_TIMEOUT) == 1 &&
		     wc.wr_id == 0xd000 + (uint64_t)i;
		if (!ok)
			break;
		if (wc.status == IBV_WC_SUCCESS) {
			won++;
		} else if (wc.status == IBV_WC_MW_BIND_ERR) {
			lost++;
			ok = mw_reset(&a, &b, false);
		} else {
			vu_diag("bind %d: %s", i, ibv_wc_status_str(wc.status));
			ok = false;
		}
	}
	if (mr) {
		ret = ibv_dereg_mr(mr);
		ok &= eq_ret("ibv_dereg_mr after the races", ret, 0);
	}
	vu_report(ok, "mw: %d rounds of ibv_dealloc_mw racing a bind of the "
		  "window (%d binds first, %d after the window was gone): "
		  "none leaves the MR counting a window, it deregisters",
		  DR_ROUNDS, won, lost);
	fx_teardown(&a, &b);
}

static void case_mw(struct vu_dev *da, struct vu_dev *db)
{
	struct ibv_mw *mw1;
	struct mwx x;

	printf("# memory windows, RC (A %s, B %s)\n", da->name,
	       db->name);
	if (!mw_setup(&x, da, db)) {
		mw_teardown(&x);
		return;
	}
	mw1 = mw_alloc_and_order(&x);
	if (mw1)
		mw_type1(&x, mw1);
	mw_type2(&x);
	mw_dereg(&x);
	mw_bind_errors(&x);
	mw_inv_errors(&x);
	mw_storm(&x, da);
	mw_dealloc_race(&x, da);
	mw_teardown(&x);
}

/* ---- the tests ------------------------------------------------------------ */

/* Under KASAN and TCG a test may take minutes; the VM's budget is the limit. */
#define VT_TIMEOUT	900

/*
 * Open @d, a copy of --dev-X's settings: 0, 1 if the device is missing
 * (the test is skipped), -1 if the setup failed (said on stderr).
 */
static int vt_open(struct vu_dev *d, const struct vu_dev *tmpl)
{
	int ret;

	*d = *tmpl;
	ret = vu_dev_open(d);
	return ret == VU_EXIT_SKIP ? 1 : ret;
}

/* ---- dev: device A alone ---- */

FIXTURE(dev) {
	struct vu_dev a;	/* open in the test, closed at teardown */
};

FIXTURE_SETUP(dev)
{
}

FIXTURE_TEARDOWN(dev)
{
	vu_dev_close(&self->a);
}

/* In a test of fixture dev: open A, or skip or fail the test. */
#define DEV_OPEN() do {							\
		int ret_ = vt_open(&self->a, &opt.a);			\
									\
		if (ret_ > 0)						\
			SKIP(return, "device %s not found", opt.a.name); \
		ASSERT_EQ(0, ret_);					\
		g_mtu = vu_path_mtu(&self->a, &self->a);		\
	} while (0)

/*
 * A test of fixture dev: @fn(&self->a) as a subtest.  The comment after
 * each test names its feature for Documentation/testing.rst's index
 * (scripts/test-index.sh).
 */
#define DEV_TEST(name, fn)						\
	VU_NAMED(dev, name)						\
	TEST_F_TIMEOUT(dev, name, VT_TIMEOUT)				\
	{								\
		VU_SELECT("dev." #name);				\
		DEV_OPEN();						\
		VU_CHECKS(fn(&self->a));				\
	}

DEV_TEST(objects, case_objects)	/* verbs */
DEV_TEST(posting, case_posting)	/* verbs */
DEV_TEST(qp_attrs, hardening_attrs)	/* qp_state */
DEV_TEST(random_numbers, hardening_random)	/* hostile */
DEV_TEST(doorbell, hardening_doorbell)	/* doorbell */
DEV_TEST(loopback_hijack, hardening_loopback)	/* hostile */

VU_NAMED(dev, crowd)
TEST_F_TIMEOUT(dev, crowd, VT_TIMEOUT)	/* limits */
{
	VU_SELECT("dev.crowd");
	if (opt.no_crowd)
		SKIP(return, "--no-crowd: minutes under KASAN");
	DEV_OPEN();
	VU_CHECKS(hardening_crowd(&self->a, &self->a));
}

/* ---- pair: A and B, or A with itself ---- */

FIXTURE(pair) {
	struct vu_dev a, b;	/* open in the test, closed at teardown */
};

FIXTURE_VARIANT(pair) {
	bool loopback;		/* B is A */
};

FIXTURE_VARIANT_ADD(pair, two) {
	.loopback = false,
};

FIXTURE_VARIANT_ADD(pair, loopback) {
	.loopback = true,
};

FIXTURE_SETUP(pair)
{
}

FIXTURE_TEARDOWN(pair)
{
	vu_dev_close(&self->b);
	vu_dev_close(&self->a);
}

/* In a test of fixture pair: open A and B, or skip or fail the test. */
#define PAIR_OPEN() do {						\
		int ret_ = vt_open(&self->a, &opt.a);			\
									\
		if (!ret_ && !variant->loopback)			\
			ret_ = vt_open(&self->b, &opt.b);		\
		if (ret_ > 0)						\
			SKIP(return, "device %s or %s not found",	\
			     opt.a.name, opt.b.name);			\
		ASSERT_EQ(0, ret_);					\
		g_mtu = vu_path_mtu(&self->a, variant->loopback ?	\
				    &self->a : &self->b);		\
	} while (0)

/* A test of fixture pair: @fn(A, B) as a subtest (B is A on loopback). */
#define PAIR_TEST(name, fn)						\
	VU_NAMED(pair, name)						\
	TEST_F_TIMEOUT(pair, name, VT_TIMEOUT)				\
	{								\
		VU_SELECT("pair." #name);				\
		PAIR_OPEN();						\
		VU_CHECKS(fn(&self->a, variant->loopback ?		\
				       &self->a : &self->b));		\
	}

PAIR_TEST(qp_states, case_states)	/* qp_state */
PAIR_TEST(flush, case_flush)	/* qp_state */
PAIR_TEST(cq_events, case_events)	/* cq */
PAIR_TEST(inline, case_inline)	/* verbs */
PAIR_TEST(rx_errors, case_rx_errors)	/* uc */
PAIR_TEST(address_handles, case_ah)	/* ud */
PAIR_TEST(cq_overflow, hardening_cq_overflow)	/* cq */
PAIR_TEST(modify_all_or_nothing, hardening_modify)	/* qp_state */
PAIR_TEST(rd_atomic, hardening_rd_atomic)	/* atomics */
PAIR_TEST(lowered_producer, hardening_lowered_producer)	/* hostile */
PAIR_TEST(modify_race, hardening_modify_race)	/* qp_state */
PAIR_TEST(msg_size, hardening_msg_size)	/* verbs */
PAIR_TEST(cq_ex, case_cq_ex)	/* cq */
PAIR_TEST(wr_api, case_wr_api)	/* verbs */
PAIR_TEST(srq, case_srq)	/* srq */
PAIR_TEST(mw, case_mw)	/* mw */

int main(int argc, char **argv)
{
	vu_harness_init();
	parse_args(argc, argv);
	/*
	 * On a slow machine (SNAA_TIME_SCALE), completions may take longer
	 * and the RC QPs' local ACK timeout grows with it, as rc_test's: a
	 * link whose queue holds another test's stream must not make a
	 * 67 ms timeout expire eight times in a row (RETRY_EXC_ERR).
	 */
	g_time_scale = vu_time_scale();
	vu_rc.timeout = (uint8_t)vu_ack_timeout(vu_rc.timeout);
	printf("# verbs_test: verbs semantics, A=%s B=%s\n", opt.a.name,
	       opt.b.name);
	return vu_harness_run(argv[0]);
}
