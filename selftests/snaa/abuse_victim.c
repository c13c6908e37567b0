// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * abuse_victim - the well-behaved process of abuse.sh: UC traffic between
 * a QP on device A and one on device B (possibly the same device), every
 * byte and every completion checked, for as long as the abuser runs.
 *
 * Message i goes A->B for even i, B->A for odd i; its operation cycles
 * through RDMA WRITE, RDMA WRITE WITH IMM, SEND and SEND WITH IMM, its
 * size through 0, 1, 63, MTU-1, MTU, MTU+1, 3*MTU+5 and 16 KiB+3, and it
 * is gathered from one or from three SGEs (and scattered into three
 * receive SGEs).  Its data is a PRNG stream seeded by i.  Before each
 * message the target range is poisoned with the complement of the data
 * and guard bytes around it with POISON; afterwards every target byte
 * must equal the data, every guard byte must be untouched, and the
 * completions must be exactly the expected ones, field by field (status,
 * wr_id, opcode, qp_num, byte_len, immediate, src_qp).  Plain RDMA WRITE
 * has no receive completion: the data must land within --timeout.  No
 * other completion may appear on any of the four CQs.
 *
 * Every CHECK_EVERY messages, and at the end, both QPs must be in RTS and
 * the canary must be intact: CANARY_LEN bytes at the end of each side's
 * WRITE target MR that no message ever targets.  --info-file publishes
 * the QP numbers and each canary's address, length and key (lkey ==
 * rkey), so that the abuser can aim at them: a key or QP of another
 * process must never be usable.
 *
 * The run ends on SIGTERM or SIGINT (after the message in flight), or
 * after --seconds.  Output is KTAP:
 *   1  every message exact (data, guards, completions, no stray CQE)
 *   2  no message lost (none timed out)
 *   3  both QPs in RTS at every check
 *   4  both canaries intact at every check
 *   5  at least --min-messages messages (the traffic was not starved)
 * After a failed message the QPs are recreated, so one loss does not
 * cascade; every failure is described in "# " lines.
 *
 * --self-test makes the check it names fail on purpose, to show that it
 * can: "data" flips one byte of message 21's expected data, "canary"
 * writes into A's canary before message 21, "lost" does not post the
 * receive WR of message 21 (use a short --timeout).
 *
 * Exit status: 0 iff every check passed, 1 if one failed or the setup
 * failed, 2 usage error, 4 (kselftest SKIP) if a device is missing.
 *
 * Build: make -C selftests/snaa abuse_victim
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "snaa_opt.h"
#include "verbs_util.h"

#define POISON		0xa5
#define GUARD		64		/* guard bytes checked each side */
#define MAX_MSG		(16 * 1024 + 3)
#define SLOT		(MAX_MSG + 2 * GUARD + 64)
#define CANARY_LEN	4096
#define CANARY_BYTE(i)	((uint8_t)(0x3c ^ (i) * 7))
#define NSGE		3
#define CQ_DEPTH	64
#define QP_DEPTH	16
#define CHECK_EVERY	32		/* messages between state checks */
#define READY_AFTER	8		/* messages before --ready-file */
#define SELF_TEST_MSG	21	/* a 63-byte SEND */

enum op { OP_WRITE, OP_WRITE_IMM, OP_SEND, OP_SEND_IMM, OP_NUM };

static const struct {
	const char *name;
	enum ibv_wr_opcode wr;
	enum ibv_wc_opcode send_wc, recv_wc;
	bool imm, rwr, write;
} ops[OP_NUM] = {
	[OP_WRITE] = { "WRITE", IBV_WR_RDMA_WRITE, IBV_WC_RDMA_WRITE, 0,
		       false, false, true },
	[OP_WRITE_IMM] = { "WRITE_WITH_IMM", IBV_WR_RDMA_WRITE_WITH_IMM,
			   IBV_WC_RDMA_WRITE, IBV_WC_RECV_RDMA_WITH_IMM,
			   true, true, true },
	[OP_SEND] = { "SEND", IBV_WR_SEND, IBV_WC_SEND, IBV_WC_RECV, false,
		      true, false },
	[OP_SEND_IMM] = { "SEND_WITH_IMM", IBV_WR_SEND_WITH_IMM, IBV_WC_SEND,
			  IBV_WC_RECV, true, true, false },
};

struct side {
	struct vu_dev d;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp;
	uint32_t sq_psn, rq_psn;
	struct vu_buf src;	/* NSGE source slots */
	struct vu_buf rcv;	/* NSGE receive slots */
	struct vu_buf dst;	/* WRITE target slot, then the canary */
};

static struct {
	struct vu_dev a, b;
	double seconds, timeout;
	const char *ready_file, *info_file;
	unsigned long min_messages;
	const char *self_test;
} opt = {
	.a = VU_DEV_INIT('A'), .b = VU_DEV_INIT('B'), .seconds = 600,
	.timeout = 30,
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
"Usage: abuse_victim --dev-a NAME --dev-b NAME [--gid-a IDX] [--gid-b IDX]\n"
"                    [--ipv6] [--seconds S] [--timeout S] [--ready-file F]\n"
"                    [--info-file F] [--min-messages N]\n"
"                    [--self-test data|canary|lost] [--help]\n"
"\n"
"UC traffic between a QP on device A and one on device B, every byte and\n"
"completion checked, until SIGTERM/SIGINT or --seconds.  Output is KTAP.\n"
"\n"
VU_PAIR_USAGE
"  --seconds S           stop after S seconds of traffic (default: 600)\n"
"  --timeout S           completion deadline per message (default: 30)\n"
"  --ready-file F        create F once the first %d messages arrived\n"
"  --info-file F         write the QPNs and the canaries' device, address,\n"
"                        length and keys to F (\"qpn A 0x..\", \"canary A\n"
"                        DEV addr len lkey rkey\")\n"
"  --min-messages N      fail unless at least N messages went through\n"
"                        (default: 0)\n"
"  --self-test WHAT      make a check fail on purpose: data, canary, lost\n"
"  --help                show this help\n", READY_AFTER);
}

static void parse_args(int argc, char **argv)
{
	enum { O_SECONDS = VU_OPT_NEXT, O_TIMEOUT, O_READY, O_INFO, O_MIN,
	       O_SELF };
	static const struct option lopts[] = {
		VU_PAIR_OPTIONS,
		{ "seconds", required_argument, NULL, O_SECONDS },
		{ "timeout", required_argument, NULL, O_TIMEOUT },
		{ "ready-file", required_argument, NULL, O_READY },
		{ "info-file", required_argument, NULL, O_INFO },
		{ "min-messages", required_argument, NULL, O_MIN },
		{ "self-test", required_argument, NULL, O_SELF },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
		switch (c) {
		case O_SECONDS:
			opt.seconds = (double)opt_long("--seconds", optarg, 1,
						       86400);
			break;
		case O_TIMEOUT:
			opt.timeout = (double)opt_long("--timeout", optarg, 1,
						       3600);
			break;
		case O_READY: opt.ready_file = optarg; break;
		case O_INFO: opt.info_file = optarg; break;
		case O_MIN:
			opt.min_messages = (unsigned long)opt_u64(
				"--min-messages", optarg, 1000000000);
			break;
		case O_SELF:
			if (strcmp(optarg, "data") && strcmp(optarg, "canary") &&
			    strcmp(optarg, "lost"))
				opt_usage_error("--self-test: want data, canary "
						"or lost, not '%s'", optarg);
			opt.self_test = optarg;
			break;
		default:
			if (!vu_pair_option(c, optarg, &opt.a, &opt.b))
				opt_help_or_error(c, argv, usage);
		}
	}
	opt_no_operands(argc, argv);
	vu_pair_options_check(&opt.a, &opt.b);
}

static bool self_test(const char *what, unsigned long msg)
{
	return opt.self_test && !strcmp(opt.self_test, what) &&
	       msg == SELF_TEST_MSG;
}

/* ---- setup ------------------------------------------------------------- */

static int open_side(struct side *s)
{
	const int rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	int ret;

	ret = vu_dev_open(&s->d);
	if (ret)
		return ret;
	s->scq = ibv_create_cq(s->d.ctx, CQ_DEPTH, NULL, NULL, 0);
	s->rcq = ibv_create_cq(s->d.ctx, CQ_DEPTH, NULL, NULL, 0);
	if (!s->scq || !s->rcq) {
		fprintf(stderr, "abuse_victim: %s: ibv_create_cq: %s\n",
			s->d.name, strerror(errno));
		return -1;
	}
	ret = vu_buf_alloc(&s->src, s->d.pd, NSGE * SLOT, 0, POISON);
	if (!ret)
		ret = vu_buf_alloc(&s->rcv, s->d.pd, NSGE * SLOT,
				   IBV_ACCESS_LOCAL_WRITE, POISON);
	if (!ret)
		ret = vu_buf_alloc(&s->dst, s->d.pd, SLOT + CANARY_LEN, rw,
				   POISON);
	if (ret) {
		fprintf(stderr, "abuse_victim: %s: buffers: %s\n", s->d.name,
			strerror(ret));
		return -1;
	}
	return 0;
}

static void close_side(struct side *s)
{
	if (s->qp)
		ibv_destroy_qp(s->qp);
	vu_buf_free(&s->src);
	vu_buf_free(&s->rcv);
	vu_buf_free(&s->dst);
	if (s->scq)
		ibv_destroy_cq(s->scq);
	if (s->rcq)
		ibv_destroy_cq(s->rcq);
	vu_dev_close(&s->d);
}

static uint8_t *canary(struct side *s)
{
	return s->dst.p + SLOT;
}

static void canary_fill(struct side *s)
{
	int i;

	for (i = 0; i < CANARY_LEN; i++)
		canary(s)[i] = CANARY_BYTE(i);
}

static bool canary_ok(struct side *s)
{
	static uint8_t want[CANARY_LEN];
	char what[64];
	int i;

	for (i = 0; i < CANARY_LEN; i++)
		want[i] = CANARY_BYTE(i);
	snprintf(what, sizeof(what), "%c canary", s->d.label);
	return vu_bytes_eq(what, canary(s), want, CANARY_LEN, 0);
}

static int create_qp(struct side *s)
{
	struct ibv_qp_cap cap = {
		.max_send_wr = QP_DEPTH, .max_recv_wr = QP_DEPTH,
		.max_send_sge = NSGE, .max_recv_sge = NSGE,
	};

	s->qp = vu_qp_create(s->d.pd, IBV_QPT_UC, s->scq, s->rcq, &cap);
	if (!s->qp)
		fprintf(stderr, "abuse_victim: %s: ibv_create_qp: %s\n",
			s->d.name, strerror(errno));
	return s->qp ? 0 : -1;
}

static int connect_pair(struct side *a, struct side *b, enum ibv_mtu mtu)
{
	struct side *s[2] = { a, b };
	const char *step;
	int i, ret;

	for (i = 0; i < 2; i++)
		if (create_qp(s[i]))
			return -1;
	for (i = 0; i < 2; i++) {
		struct vu_qp_end self = { s[i]->qp, &s[i]->d, s[i]->sq_psn,
					  s[i]->rq_psn };
		struct vu_qp_end peer = { s[!i]->qp, &s[!i]->d,
					  s[!i]->sq_psn, s[!i]->rq_psn };

		ret = vu_qp_connect(&self, &peer, mtu, IBV_ACCESS_LOCAL_WRITE |
				    IBV_ACCESS_REMOTE_WRITE, &step);
		if (ret) {
			fprintf(stderr, "abuse_victim: %s: %s: %s\n",
				s[i]->d.name, step, strerror(ret));
			return -1;
		}
	}
	return 0;
}

/* After a failed message: fresh QPs and empty CQs (new PSNs). */
static int reset_pair(struct side *a, struct side *b, enum ibv_mtu mtu)
{
	struct side *s[2] = { a, b };
	int i;

	for (i = 0; i < 2; i++) {
		if (s[i]->qp)
			ibv_destroy_qp(s[i]->qp);
		s[i]->qp = NULL;
	}
	vu_nap_us(100000);
	for (i = 0; i < 2; i++) {
		vu_cq_drain(s[i]->scq);
		vu_cq_drain(s[i]->rcq);
	}
	return connect_pair(a, b, mtu);
}

static int write_info(const char *path, struct side *a, struct side *b)
{
	struct side *s[2] = { a, b };
	FILE *f = fopen(path, "w");
	int i;

	if (!f) {
		fprintf(stderr, "abuse_victim: %s: %s\n", path, strerror(errno));
		return -1;
	}
	for (i = 0; i < 2; i++)
		fprintf(f, "qpn %c 0x%x\n", s[i]->d.label, s[i]->qp->qp_num);
	for (i = 0; i < 2; i++)
		fprintf(f, "canary %c %s 0x%" PRIxPTR " %d 0x%x 0x%x\n",
			s[i]->d.label, s[i]->d.name, (uintptr_t)canary(s[i]),
			CANARY_LEN,
			s[i]->dst.mr->lkey, s[i]->dst.mr->rkey);
	return fclose(f) ? -1 : 0;
}

/* ---- one message ------------------------------------------------------- */

static uint8_t expect[MAX_MSG];

static bool check_wc(const char *what, const struct ibv_wc *wc,
		     uint64_t wr_id, uint32_t qpn, enum ibv_wc_opcode opcode)
{
	bool ok = wc->status == IBV_WC_SUCCESS && wc->wr_id == wr_id &&
		  wc->qp_num == qpn && wc->opcode == opcode;

	if (!ok) {
		char s[256];

		vu_wc_str(wc, s, sizeof(s));
		vu_diag("%s: %s; expected status SUCCESS wr_id 0x%" PRIx64
			" qp_num 0x%x opcode %s", what, s, wr_id, qpn,
			vu_wc_opcode_str(opcode));
	}
	return ok;
}

/* Poison [off, off + len) with ~want (or POISON), guards with POISON. */
static void poison(uint8_t *p, size_t off, size_t len, const uint8_t *want)
{
	size_t i;

	memset(p + off - GUARD, POISON, GUARD);
	for (i = 0; i < len; i++)
		p[off + i] = want ? (uint8_t)~want[i] : POISON;
	memset(p + off + len, POISON, GUARD);
}

static bool check_range(const char *what, const uint8_t *p, size_t off,
			size_t len, const uint8_t *want)
{
	char name[128];
	bool ok = true;

	snprintf(name, sizeof(name), "%s: guard before", what);
	ok &= vu_bytes_all(name, p + off - GUARD, POISON, GUARD, -GUARD);
	snprintf(name, sizeof(name), "%s: guard after", what);
	ok &= vu_bytes_all(name, p + off + len, POISON, GUARD, (long long)len);
	snprintf(name, sizeof(name), "%s: data", what);
	if (want)
		ok &= vu_bytes_eq(name, p + off, want, len, 0);
	else
		ok &= vu_bytes_all(name, p + off, POISON, len, 0);
	return ok;
}

/*
 * Has the whole message arrived at p?  Not memcmp(): on memory that
 * changes under it, glibc's memcmp may find a difference, re-read the
 * bytes to order them, find them equal by then and return 0 without
 * looking further.  Each byte here is read once; bytes only ever change
 * from the poison to the data, so all equal means all arrived.
 */
static bool landed(const uint8_t *p, size_t n)
{
	const volatile uint8_t *v = p;
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i] != expect[i])
			return false;
	return true;
}

struct msg_result {
	bool ok;
	bool lost;		/* a completion or the data never came */
};

/*
 * Send message i from tx to rx and check everything.  sizes: the size
 * cycle.
 */
static struct msg_result run_msg(struct side *tx, struct side *rx,
				 unsigned long i, const size_t *sizes,
				 int nsizes)
{
	enum op op = (enum op)((i >> 1) % OP_NUM);
	size_t n = sizes[(i >> 3) % (unsigned long)nsizes];
	int nsge = n == 0 ? 0 : (n >= NSGE && ((i >> 6) & 1)) ? NSGE : 1;
	uint64_t seed = 0x76696374696d0000ull ^ i, wr_id = 0x7600000000ull | i;
	struct ibv_sge ssge[NSGE], rsge[NSGE];
	struct ibv_send_wr swr, *bad_s;
	struct ibv_recv_wr rwr, *bad_r;
	struct msg_result r = { true, false };
	size_t len[NSGE] = { n, 0, 0 }, pos;
	struct ibv_wc wc;
	uint32_t imm_be;
	double deadline;
	char what[96];
	int k, ret;

	if (nsge == NSGE) {
		len[0] = n / 5 ? n / 5 : 1;
		len[1] = n / 2 ? n / 2 : 1;
		len[2] = n - len[0] - len[1];
	}
	vu_fill_prng(expect, n, seed);
	imm_be = htonl((uint32_t)vu_splitmix64(&seed) | 1);
	for (k = 0, pos = 0; k < nsge; pos += len[k], k++) {
		uint8_t *p = tx->src.p + (size_t)k * SLOT + GUARD + k + 1;

		memcpy(p, expect + pos, len[k]);
		ssge[k] = (struct ibv_sge){ (uintptr_t)p, (uint32_t)len[k],
					    tx->src.mr->lkey };
	}
	if (ops[op].write)
		poison(rx->dst.p, GUARD, n, expect);
	if (ops[op].rwr) {
		/* receive SGEs split differently; WRITE_IMM must not use
		 * them */
		size_t rl[NSGE] = { n, 0, 0 };
		int rn = nsge == NSGE ? NSGE : 1;

		if (rn == NSGE) {
			rl[0] = n / 3;
			rl[1] = n / 4;
			rl[2] = n - rl[0] - rl[1];
		}
		for (k = 0, pos = 0; k < rn; pos += rl[k], k++) {
			size_t off = (size_t)k * SLOT + GUARD;

			poison(rx->rcv.p, off, rl[k],
			       ops[op].write ? NULL : expect + pos);
			rsge[k] = (struct ibv_sge){ (uintptr_t)(rx->rcv.p + off),
						    (uint32_t)rl[k],
						    rx->rcv.mr->lkey };
		}
		memset(&rwr, 0, sizeof(rwr));
		rwr.wr_id = wr_id;
		rwr.sg_list = rsge;
		rwr.num_sge = rn;
		if (!self_test("lost", i)) {
			ret = ibv_post_recv(rx->qp, &rwr, &bad_r);
			if (ret) {
				vu_diag("message %lu: ibv_post_recv on %c: %s",
					i, rx->d.label, strerror(ret));
				r.ok = false;
				return r;
			}
		}
	}
	if (self_test("data", i) && n)
		expect[n / 2] ^= 0x40;

	memset(&swr, 0, sizeof(swr));
	swr.wr_id = wr_id;
	swr.sg_list = nsge ? ssge : NULL;
	swr.num_sge = nsge;
	swr.opcode = ops[op].wr;
	swr.send_flags = IBV_SEND_SIGNALED;
	if (ops[op].imm)
		swr.imm_data = imm_be;
	if (ops[op].write) {
		swr.wr.rdma.remote_addr = (uintptr_t)(rx->dst.p + GUARD);
		swr.wr.rdma.rkey = rx->dst.mr->rkey;
	}
	ret = ibv_post_send(tx->qp, &swr, &bad_s);
	if (ret) {
		vu_diag("message %lu: ibv_post_send on %c: %s", i, tx->d.label,
			strerror(ret));
		r.ok = false;
		return r;
	}
	deadline = vu_now() + opt.timeout;

	if (vu_poll_cq(tx->scq, &wc, 1, deadline) != 1) {
		vu_diag("message %lu: no send completion on %c within %.0f s",
			i, tx->d.label, opt.timeout);
		r.ok = false;
		r.lost = true;
	} else {
		snprintf(what, sizeof(what), "message %lu: %c send CQE", i,
			 tx->d.label);
		r.ok &= check_wc(what, &wc, wr_id, tx->qp->qp_num,
				 ops[op].send_wc);
	}
	if (ops[op].rwr) {
		if (vu_poll_cq(rx->rcq, &wc, 1, deadline) != 1) {
			vu_diag("message %lu: no receive completion on %c "
				"within %.0f s", i, rx->d.label, opt.timeout);
			r.ok = false;
			r.lost = true;
		} else {
			snprintf(what, sizeof(what), "message %lu: %c receive "
				 "CQE", i, rx->d.label);
			if (!check_wc(what, &wc, wr_id, rx->qp->qp_num,
				      ops[op].recv_wc) ||
			    wc.byte_len != n || wc.src_qp != tx->qp->qp_num ||
			    !!(wc.wc_flags & IBV_WC_WITH_IMM) != ops[op].imm ||
			    (ops[op].imm && wc.imm_data != imm_be)) {
				char s[256];

				vu_wc_str(&wc, s, sizeof(s));
				vu_diag("%s: %s; expected byte_len %zu src_qp "
					"0x%x imm %s 0x%08x", what, s, n,
					tx->qp->qp_num, ops[op].imm ? "set" :
					"clear", ntohl(imm_be));
				r.ok = false;
			}
		}
	} else {
		/* plain WRITE: wait for the data to land */
		while (!landed(rx->dst.p + GUARD, n) && vu_now() < deadline)
			vu_nap_us(200);
		if (!landed(rx->dst.p + GUARD, n)) {
			vu_diag("message %lu: RDMA WRITE data not (exactly) on "
				"%c within %.0f s", i, rx->d.label,
				opt.timeout);
			r.lost = true;
		}
	}

	snprintf(what, sizeof(what), "message %lu (%s %zuB %dsge %c->%c)", i,
		 ops[op].name, n, nsge, tx->d.label, rx->d.label);
	if (ops[op].write)
		r.ok &= check_range(what, rx->dst.p, GUARD, n, expect);
	if (ops[op].rwr) {
		/* WRITE WITH IMM must leave the receive buffers alone */
		for (k = 0, pos = 0; k < rwr.num_sge; k++) {
			size_t l = rsge[k].length;

			r.ok &= check_range(what, rx->rcv.p,
					    (size_t)k * SLOT + GUARD, l,
					    ops[op].write ? NULL :
							    expect + pos);
			pos += l;
		}
	}
	r.ok &= vu_cq_stays_empty(tx->scq, 0, "sender's send CQ");
	r.ok &= vu_cq_stays_empty(tx->rcq, 0, "sender's receive CQ");
	r.ok &= vu_cq_stays_empty(rx->scq, 0, "receiver's send CQ");
	r.ok &= vu_cq_stays_empty(rx->rcq, 0, "receiver's receive CQ");
	if (r.lost)
		r.ok = false;
	if (!r.ok)
		vu_diag("  in %s", what);
	return r;
}

/* ---- main -------------------------------------------------------------- */

static bool qps_in_rts(struct side *a, struct side *b)
{
	struct side *s[2] = { a, b };
	bool ok = true;
	int i, st;

	for (i = 0; i < 2; i++) {
		st = vu_qp_state(s[i]->qp);
		if (st != IBV_QPS_RTS) {
			vu_diag("QP 0x%x on %c is %s, expected RTS",
				s[i]->qp->qp_num, s[i]->d.label,
				vu_qp_state_str(st));
			ok = false;
		}
	}
	return ok;
}

int main(int argc, char **argv)
{
	struct side a = { .sq_psn = 0x100, .rq_psn = 0x200 };
	struct side b = { .sq_psn = 0x200, .rq_psn = 0x100 };
	unsigned long i, nmsg = 0, nfail = 0, nlost = 0, nchecks = 0;
	unsigned long bad_state = 0, bad_canary = 0, bytes = 0;
	size_t sizes[8];
	int ret = 1, mtu;
	double t0 = vu_now(), end, worst = 0, t;
	enum ibv_mtu path_mtu;
	struct sigaction sa;
	bool ready = false;

	setvbuf(stdout, NULL, _IOLBF, 0);
	parse_args(argc, argv);
	a.d = opt.a;
	b.d = opt.b;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	printf("KTAP version 1\n");
	printf("# abuse_victim: UC traffic A=%s B=%s\n", a.d.name, b.d.name);
	ret = open_side(&a);
	if (!ret)
		ret = open_side(&b);
	if (ret == VU_EXIT_SKIP)
		printf("1..0 # SKIP device missing\n");
	else if (ret)
		ret = 1;
	if (ret)
		goto out;
	ret = 1;
	path_mtu = vu_path_mtu(&a.d, &b.d);
	mtu = vu_mtu_bytes(path_mtu);
	sizes[0] = 0;
	sizes[1] = 1;
	sizes[2] = 63;
	sizes[3] = (size_t)mtu - 1;
	sizes[4] = (size_t)mtu;
	sizes[5] = (size_t)mtu + 1;
	sizes[6] = 3 * (size_t)mtu + 5;
	sizes[7] = MAX_MSG;
	for (i = 3; i < 8; i++)
		if (sizes[i] > MAX_MSG)
			sizes[i] = MAX_MSG;
	canary_fill(&a);
	canary_fill(&b);
	if (connect_pair(&a, &b, path_mtu))
		goto out;
	printf("# A: %s GID %s QPN 0x%x; B: %s GID %s QPN 0x%x; path MTU %d\n",
	       a.d.name, a.d.gid_str, a.qp->qp_num, b.d.name, b.d.gid_str,
	       b.qp->qp_num, mtu);
	if (opt.info_file && write_info(opt.info_file, &a, &b))
		goto out;

	end = vu_now() + opt.seconds;	/* the setup does not count */
	for (i = 0; !stop && vu_now() < end; i++) {
		struct side *tx = (i & 1) ? &b : &a, *rx = (i & 1) ? &a : &b;
		struct msg_result r;

		if (self_test("canary", i))
			canary(&a)[CANARY_LEN / 2] ^= 1;
		t = vu_now();
		r = run_msg(tx, rx, i, sizes, 8);
		t = vu_now() - t;
		if (t > worst)
			worst = t;
		nmsg++;
		if (r.ok) {
			bytes += sizes[(i >> 3) % 8];
		} else {
			nfail++;
			nlost += r.lost;
			vu_diag_flush();
			if (reset_pair(&a, &b, path_mtu)) {
				printf("# cannot recreate the QPs\n");
				break;
			}
			if (opt.info_file)
				write_info(opt.info_file, &a, &b);
		}
		if (!ready && nmsg - nfail >= READY_AFTER && opt.ready_file) {
			FILE *f = fopen(opt.ready_file, "w");

			if (f)
				fclose(f);
			ready = true;
		}
		if ((i + 1) % CHECK_EVERY == 0) {
			nchecks++;
			bad_state += !qps_in_rts(&a, &b);
			bad_canary += !canary_ok(&a) | !canary_ok(&b);
			vu_diag_flush();
		}
	}
	nchecks++;
	bad_state += !qps_in_rts(&a, &b);
	bad_canary += !canary_ok(&a) | !canary_ok(&b);
	vu_diag_flush();

	printf("# %lu messages in %.1f s (%lu bytes exact), slowest %.3f s\n",
	       nmsg, vu_now() - t0, bytes, worst);
	vu_report(nfail == 0, "every message exact (%lu of %lu)",
		  nmsg - nfail, nmsg);
	vu_report(nlost == 0, "no message lost (%lu lost)", nlost);
	vu_report(bad_state == 0, "QPs in RTS at every check (%lu of %lu "
		  "bad)", bad_state, nchecks);
	vu_report(bad_canary == 0, "canaries intact at every check (%lu of "
		  "%lu bad)", bad_canary, nchecks);
	vu_report(nmsg - nfail >= opt.min_messages, "traffic flowed: %lu "
		  "good messages, at least %lu wanted", nmsg - nfail,
		  opt.min_messages);
	ret = vu_ktap_finish(t0);
out:
	close_side(&a);
	close_side(&b);
	return ret;
}
