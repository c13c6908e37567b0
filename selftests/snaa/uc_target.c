// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * uc_target: a passive UC responder for packet-level tests.
 *
 * Opens an RDMA device, registers an MR of --size bytes (REMOTE_WRITE |
 * LOCAL_WRITE) filled with a known pattern, creates a CQ and a UC QP,
 * moves the QP to RTR towards a peer that need not exist (UC responders
 * check neither the peer's QPN nor its GID), posts --recv receive WRs
 * into a second buffer (its own MR, LOCAL_WRITE only), prints one line
 *
 *   qpn=0x.. rkey=0x.. va=0x.. len=N psn=0x.. mtu=N recv=K recv_len=N
 *   rbuf_key=0x.. rbuf_va=0x.. gid_idx=N
 *
 * and then serves commands, one per line on stdin (a test script feeds
 * them through a FIFO).  Every answer ends with a line "end".
 *
 *   poll            the CQEs polled so far ("cqes=N", then one "cqe"
 *                   line each)
 *   digest          one line for the MR and one for the receive buffer:
 *                   "mr len=N crc32=0x.. pattern_crc32=0x.. changed=N
 *                   first=0x..|none last=0x..|none"
 *   read OFF LEN    "data=HEX": LEN bytes of the MR at offset OFF
 *   rread OFF LEN   the same for the receive buffer
 *   post N          post N more receive WRs ("posted=N")
 *   state           "state=RTR" (or another state), from ibv_query_qp
 *   error           move the QP to ERR ("state=ERR")
 *   reset PSN       move the QP ERR/RTR -> RESET -> INIT -> RTR with
 *                   expected PSN PSN, posting no receive WR ("state=RTR")
 *   dump            digest, then poll, then exit 0
 *   quit            exit 0 (end of input too)
 *
 * Both buffers are filled with bytes below 0x80 (MR byte i is
 * (i * 37 + (i >> 8) * 11 + 0x15) & 0x7f, receive buffer byte i is
 * (i * 29 + 0x33) & 0x7f), so a write of bytes >= 0x80 changes every
 * byte it touches and "changed" counts them exactly.
 *
 * The CQ is polled every 100 ms and before every command.
 *
 * Build: make -C selftests/snaa uc_target (uc_target.c, verbs_util.c and
 * userspace/common/snaa_opt.c; -I tests/unit for crc32_le.h; -libverbs)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "crc32_le.h"
#include "snaa_dev.h"
#include "snaa_opt.h"
#include "verbs_util.h"

#define EXTRA_RECV	64	/* receive WRs "post" may add */

static struct {
	const char *dev;
	int gid_idx;			/* -1: pick */
	size_t size;
	unsigned int recv;
	unsigned int recv_len;
	uint32_t psn;
	int mtu;
	uint32_t dest_qpn;
	const char *dgid;
	bool qp_no_remote_write;
	bool rc;			/* an RC QP instead of UC */
} opt = {
	.gid_idx = -1, .size = 65536, .recv = 4, .recv_len = 64,
	.mtu = 1024, .dest_qpn = 0x11,
};

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_mr *mr, *rmr;
static struct ibv_cq *cq;
static struct ibv_qp *qp;
static int qp_gid_idx;			/* for "reset" */
static union ibv_gid qp_dgid;
static uint8_t *buf, *rbuf;
static size_t rbuf_size;
static unsigned int rslots, rnext;
static struct ibv_wc *wcs;
static size_t nwc, wc_cap;

static void usage(FILE *f)
{
	fprintf(f,
"Usage: uc_target --dev NAME [OPTIONS]\n"
"\n"
"Creates a UC QP in RTR with an MR and posted receive WRs, prints\n"
"  qpn=0x.. rkey=0x.. va=0x.. len=N psn=0x.. mtu=N recv=K recv_len=N\n"
"  rbuf_key=0x.. rbuf_va=0x.. gid_idx=N\n"
"and then reads commands on stdin (poll, digest, read OFF LEN, rread OFF\n"
"LEN, post N, state, dump, quit; each answer ends with \"end\"; see the\n"
"top of uc_target.c).  \"dump\" prints the MR digest and the CQEs, then\n"
"exits.\n"
"\n"
"Options:\n"
"  --dev NAME        RDMA device (required)\n"
"  --gid-idx N       source GID index (default: the first RoCE v2 GID,\n"
"                    IPv4-mapped preferred)\n"
"  --size N          MR size in bytes (default 65536)\n"
"  --recv K          receive WRs posted at start (default 4, at most %d\n"
"                    more can be posted later with \"post\")\n"
"  --recv-len N      bytes per receive WR (default 64)\n"
"  --psn N           expected receive PSN, rq_psn (default 0)\n"
"  --mtu N           path MTU: 256, 512, 1024, 2048 or 4096 (default 1024)\n"
"  --dest-qpn N      the fictitious peer's QPN (default 0x11)\n"
"  --dgid ADDR       the peer's GID as an IPv4 or IPv6 address (default:\n"
"                    our own GID)\n"
"  --qp-no-remote-write  QP access flags without REMOTE_WRITE\n"
"  --rc              an RC QP (in RTR: it answers with ACKs) instead of UC\n"
"  -h, --help        this text\n"
"\n"
"Exit status: 0 after dump/quit/end of input, 1 error, 2 usage error.\n",
		EXTRA_RECV);
}

static void parse_args(int argc, char **argv)
{
	enum { O_DEV = 256, O_GID, O_SIZE, O_RECV, O_RECV_LEN, O_PSN, O_MTU,
	       O_DQPN, O_DGID, O_NORW, O_RC };
	static const struct option lo[] = {
		{ "dev", required_argument, NULL, O_DEV },
		{ "gid-idx", required_argument, NULL, O_GID },
		{ "size", required_argument, NULL, O_SIZE },
		{ "recv", required_argument, NULL, O_RECV },
		{ "recv-len", required_argument, NULL, O_RECV_LEN },
		{ "psn", required_argument, NULL, O_PSN },
		{ "mtu", required_argument, NULL, O_MTU },
		{ "dest-qpn", required_argument, NULL, O_DQPN },
		{ "dgid", required_argument, NULL, O_DGID },
		{ "qp-no-remote-write", no_argument, NULL, O_NORW },
		{ "rc", no_argument, NULL, O_RC },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case O_DEV:
			opt.dev = optarg;
			break;
		case O_GID:
			opt.gid_idx = (int)opt_u64("--gid-idx", optarg, 255);
			break;
		case O_SIZE:
			opt.size = (size_t)opt_u64("--size", optarg,
						   1ULL << 30);
			if (!opt.size)
				opt_usage_error("--size: 0");
			break;
		case O_RECV:
			opt.recv = (unsigned int)opt_u64("--recv", optarg,
							 4096);
			break;
		case O_RECV_LEN:
			opt.recv_len = (unsigned int)opt_u64("--recv-len",
							     optarg, 1 << 20);
			if (!opt.recv_len)
				opt_usage_error("--recv-len: 0");
			break;
		case O_PSN:
			opt.psn = (uint32_t)opt_u64("--psn", optarg, 0xffffff);
			break;
		case O_MTU:
			opt.mtu = (int)opt_u64("--mtu", optarg, 4096);
			if (opt.mtu != 256 && opt.mtu != 512 &&
			    opt.mtu != 1024 && opt.mtu != 2048 &&
			    opt.mtu != 4096)
				opt_usage_error("--mtu must be 256, 512, 1024, "
						"2048 or 4096");
			break;
		case O_DQPN:
			opt.dest_qpn = (uint32_t)opt_u64("--dest-qpn", optarg,
							 0xffffff);
			break;
		case O_DGID:
			opt.dgid = optarg;
			break;
		case O_RC:
			opt.rc = true;
			break;
		case O_NORW:
			opt.qp_no_remote_write = true;
			break;
		default:
			opt_help_or_error(c, argv, usage);
		}
	}
	opt_no_operands(argc, argv);
	if (!opt.dev)
		opt_usage_error("--dev is required");
}

/* ---- CRC-32 (IEEE, as zlib's crc32()) and the fill patterns ---------- */

static uint32_t crc32_ieee(const uint8_t *p, size_t len)
{
	return ~test_crc32_le(0xffffffffu, p, len);
}

static uint8_t mr_pattern(size_t i)
{
	return (uint8_t)((i * 37 + (i >> 8) * 11 + 0x15) & 0x7f);
}

static uint8_t rbuf_pattern(size_t i)
{
	return (uint8_t)((i * 29 + 0x33) & 0x7f);
}

/* ---- setup --------------------------------------------------------- */

static int pick_gid(int tbl_len, union ibv_gid *gid)
{
	struct ibv_gid_entry e;
	int i;

	if (opt.gid_idx >= 0) {
		if (ibv_query_gid(ctx, VU_PORT, opt.gid_idx, gid) ||
		    snaa_gid_is_zero(gid)) {
			fprintf(stderr, "uc_target: %s: no GID at index %d\n",
				opt.dev, opt.gid_idx);
			return -1;
		}
		return opt.gid_idx;
	}
	/* RoCE v2 and IPv4-mapped if there is one, else any RoCE v2 */
	i = snaa_gid_find(ctx, VU_PORT, tbl_len, SNAA_GID_IPV4, &e);
	if (i < 0)
		i = snaa_gid_find(ctx, VU_PORT, tbl_len, SNAA_GID_ANY, &e);
	if (i >= 0) {
		*gid = e.gid;
		return i;
	}
	fprintf(stderr, "uc_target: %s: no RoCE v2 GID (is the netdev up "
		"with an address?)\n", opt.dev);
	return -1;
}

static int post_recv(unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		unsigned int slot = rnext % rslots;
		struct ibv_sge sge = {
			.addr = (uintptr_t)(rbuf + (size_t)slot * opt.recv_len),
			.length = opt.recv_len,
			.lkey = rmr->lkey,
		};
		struct ibv_recv_wr wr = {
			.wr_id = rnext, .sg_list = &sge, .num_sge = 1,
		}, *bad;
		int ret = ibv_post_recv(qp, &wr, &bad);

		if (ret) {
			fprintf(stderr, "uc_target: ibv_post_recv: %s\n",
				strerror(ret));
			return -1;
		}
		rnext++;
	}
	return 0;
}

static int setup(void)
{
	struct ibv_port_attr port;
	struct ibv_qp_cap cap = { 0 };
	union ibv_gid sgid, dgid;
	int gid_idx, ret;
	size_t k;

	ctx = snaa_dev_open("uc_target", opt.dev);
	if (!ctx)
		return -1;
	ret = ibv_query_port(ctx, VU_PORT, &port);
	if (ret) {
		fprintf(stderr, "uc_target: ibv_query_port: %s\n",
			strerror(ret));
		return -1;
	}
	gid_idx = pick_gid(port.gid_tbl_len, &sgid);
	if (gid_idx < 0)
		return -1;
	if (opt.dgid) {
		if (snaa_gid_from_ip(opt.dgid, &dgid))
			opt_usage_error("bad --dgid %s", opt.dgid);
	} else {
		dgid = sgid;
	}

	pd = ibv_alloc_pd(ctx);
	if (!pd) {
		fprintf(stderr, "uc_target: ibv_alloc_pd: %s\n",
			strerror(errno));
		return -1;
	}
	if (posix_memalign((void **)&buf, 4096, opt.size)) {
		fprintf(stderr, "uc_target: cannot allocate %zu bytes\n",
			opt.size);
		return -1;
	}
	for (k = 0; k < opt.size; k++)
		buf[k] = mr_pattern(k);
	mr = ibv_reg_mr(pd, buf, opt.size, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE);
	if (!mr) {
		fprintf(stderr, "uc_target: ibv_reg_mr(%zu): %s\n", opt.size,
			strerror(errno));
		return -1;
	}

	rslots = opt.recv + EXTRA_RECV;
	rbuf_size = (size_t)rslots * opt.recv_len;
	if (posix_memalign((void **)&rbuf, 4096, rbuf_size)) {
		fprintf(stderr, "uc_target: cannot allocate %zu bytes\n",
			rbuf_size);
		return -1;
	}
	for (k = 0; k < rbuf_size; k++)
		rbuf[k] = rbuf_pattern(k);
	rmr = ibv_reg_mr(pd, rbuf, rbuf_size, IBV_ACCESS_LOCAL_WRITE);
	if (!rmr) {
		fprintf(stderr, "uc_target: ibv_reg_mr(%zu): %s\n", rbuf_size,
			strerror(errno));
		return -1;
	}

	cq = ibv_create_cq(ctx, (int)rslots + 16, NULL, NULL, 0);
	if (!cq) {
		fprintf(stderr, "uc_target: ibv_create_cq: %s\n",
			strerror(errno));
		return -1;
	}
	cap.max_send_wr = 1;
	cap.max_recv_wr = rslots;
	cap.max_send_sge = 1;
	cap.max_recv_sge = 1;
	qp = vu_qp_create(pd, opt.rc ? IBV_QPT_RC : IBV_QPT_UC, cq, cq, &cap);
	if (!qp) {
		fprintf(stderr, "uc_target: ibv_create_qp(%s): %s\n",
			opt.rc ? "RC" : "UC", strerror(errno));
		return -1;
	}

	ret = vu_qp_init(qp, opt.qp_no_remote_write ? 0 :
			 IBV_ACCESS_REMOTE_WRITE);
	if (ret) {
		fprintf(stderr, "uc_target: QP RESET->INIT: %s\n",
			strerror(ret));
		return -1;
	}
	/* Receive WRs may be posted from INIT on. */
	if (post_recv(opt.recv))
		return -1;

	ret = vu_qp_rtr(qp, gid_idx, &dgid, opt.dest_qpn,
			vu_mtu_enum(opt.mtu), opt.psn);
	if (ret) {
		fprintf(stderr, "uc_target: QP INIT->RTR: %s\n",
			strerror(ret));
		return -1;
	}

	qp_gid_idx = gid_idx;
	qp_dgid = dgid;
	printf("qpn=0x%x rkey=0x%x va=0x%" PRIx64 " len=%zu psn=0x%06x mtu=%d "
	       "recv=%u recv_len=%u rbuf_key=0x%x rbuf_va=0x%" PRIx64
	       " gid_idx=%d\n", qp->qp_num, mr->rkey, (uint64_t)(uintptr_t)buf,
	       opt.size, opt.psn, opt.mtu, opt.recv, opt.recv_len, rmr->rkey,
	       (uint64_t)(uintptr_t)rbuf, gid_idx);
	return 0;
}

/* ---- commands ------------------------------------------------------ */

static int drain_cq(void)
{
	for (;;) {
		struct ibv_wc wc[16];
		int n = ibv_poll_cq(cq, 16, wc);

		if (n < 0) {
			fprintf(stderr, "uc_target: ibv_poll_cq failed\n");
			return -1;
		}
		if (!n)
			return 0;
		if (nwc + (size_t)n > wc_cap) {
			size_t cap = wc_cap ? wc_cap * 2 : 64;
			struct ibv_wc *p;

			while (cap < nwc + (size_t)n)
				cap *= 2;
			p = realloc(wcs, cap * sizeof(*p));
			if (!p) {
				perror("uc_target: realloc");
				return -1;
			}
			wcs = p;
			wc_cap = cap;
		}
		memcpy(wcs + nwc, wc, (size_t)n * sizeof(*wc));
		nwc += (size_t)n;
	}
}

static const char *wc_opcode_str(enum ibv_wc_opcode op)
{
	switch (op) {
	case IBV_WC_SEND: return "send";
	case IBV_WC_RDMA_WRITE: return "rdma_write";
	case IBV_WC_RDMA_READ: return "rdma_read";
	case IBV_WC_RECV: return "recv";
	case IBV_WC_RECV_RDMA_WITH_IMM: return "recv_rdma_with_imm";
	default: return "other";
	}
}

static void print_cqes(void)
{
	size_t i;

	printf("cqes=%zu\n", nwc);
	for (i = 0; i < nwc; i++) {
		const struct ibv_wc *w = &wcs[i];

		char imm[16] = "none";

		if (w->wc_flags & IBV_WC_WITH_IMM)
			snprintf(imm, sizeof(imm), "0x%08x",
				 ntohl(w->imm_data));
		/* IBA: only status and wr_id are valid in an error CQE. */
		printf("cqe wr_id=%" PRIu64 " status=%d(%s) opcode=%d(%s) "
		       "byte_len=%u imm=%s wc_flags=0x%x qp_num=0x%x "
		       "src_qp=0x%x\n", (uint64_t)w->wr_id, (int)w->status,
		       ibv_wc_status_str(w->status), (int)w->opcode,
		       w->status == IBV_WC_SUCCESS ?
		       wc_opcode_str(w->opcode) : "invalid", w->byte_len, imm,
		       (unsigned int)w->wc_flags, w->qp_num, w->src_qp);
	}
}

static void print_digest(const char *name, const uint8_t *p, size_t len,
			 uint8_t (*pattern)(size_t))
{
	size_t i, changed = 0, first = SIZE_MAX, last = 0;
	uint8_t *ref = malloc(len);
	char fb[32] = "none", lb[32] = "none";

	if (!ref) {
		perror("uc_target: malloc");
		exit(1);
	}
	for (i = 0; i < len; i++) {
		ref[i] = pattern(i);
		if (p[i] != ref[i]) {
			changed++;
			if (first == SIZE_MAX)
				first = i;
			last = i;
		}
	}
	if (changed) {
		snprintf(fb, sizeof(fb), "0x%zx", first);
		snprintf(lb, sizeof(lb), "0x%zx", last);
	}
	printf("%s len=%zu crc32=0x%08x pattern_crc32=0x%08x changed=%zu "
	       "first=%s last=%s\n", name, len, crc32_ieee(p, len),
	       crc32_ieee(ref, len), changed, fb, lb);
	free(ref);
}

static void print_hex(const uint8_t *p, size_t size, const char *args)
{
	unsigned long long off, len;
	char *end;
	size_t i;

	errno = 0;
	off = strtoull(args, &end, 0);
	if (errno || end == args) {
		printf("error bad offset\n");
		return;
	}
	len = strtoull(end, &end, 0);
	if (errno || off > size || len > size - off) {
		printf("error range outside the buffer (%zu bytes)\n", size);
		return;
	}
	printf("data=");
	for (i = 0; i < len; i++)
		printf("%02x", p[off + i]);
	printf("\n");
}

/* Return 1 to exit, 0 to go on. */
static int command(char *line)
{
	char *args;

	line[strcspn(line, "\r\n")] = 0;
	args = line + strcspn(line, " \t");
	if (*args)
		*args++ = 0;
	if (drain_cq())
		exit(1);

	if (!strcmp(line, "poll")) {
		print_cqes();
	} else if (!strcmp(line, "digest") || !strcmp(line, "dump")) {
		print_digest("mr", buf, opt.size, mr_pattern);
		print_digest("rbuf", rbuf, rbuf_size, rbuf_pattern);
		if (!strcmp(line, "dump")) {
			print_cqes();
			printf("end\n");
			return 1;
		}
	} else if (!strcmp(line, "read")) {
		print_hex(buf, opt.size, args);
	} else if (!strcmp(line, "rread")) {
		print_hex(rbuf, rbuf_size, args);
	} else if (!strcmp(line, "post")) {
		unsigned long n = strtoul(args, NULL, 0);

		if (!n || n > EXTRA_RECV || post_recv((unsigned int)n))
			printf("error post failed\n");
		else
			printf("posted=%lu\n", n);
	} else if (!strcmp(line, "state")) {
		struct ibv_qp_attr a;
		struct ibv_qp_init_attr ia;
		int ret = ibv_query_qp(qp, &a, IBV_QP_STATE, &ia);

		if (ret)
			printf("error ibv_query_qp: %s\n", strerror(ret));
		else
			printf("state=%s\n", vu_qp_state_str(a.qp_state));
	} else if (!strcmp(line, "error")) {
		int ret = vu_qp_modify_state(qp, IBV_QPS_ERR);

		if (ret)
			printf("error modify to ERR: %s\n", strerror(ret));
		else
			printf("state=%s\n", vu_qp_state_str(vu_qp_state(qp)));
	} else if (!strcmp(line, "reset")) {
		uint32_t psn = (uint32_t)strtoul(args, NULL, 0) & 0xffffff;
		int ret = vu_qp_modify_state(qp, IBV_QPS_RESET);

		if (!ret)
			ret = vu_qp_init(qp, opt.qp_no_remote_write ? 0 :
					 IBV_ACCESS_REMOTE_WRITE);
		if (!ret)
			ret = vu_qp_rtr(qp, qp_gid_idx, &qp_dgid, opt.dest_qpn,
					vu_mtu_enum(opt.mtu), psn);
		if (ret)
			printf("error reset: %s\n", strerror(ret));
		else
			printf("state=%s\n", vu_qp_state_str(vu_qp_state(qp)));
	} else if (!strcmp(line, "quit")) {
		printf("end\n");
		return 1;
	} else if (*line) {
		printf("error unknown command %s\n", line);
	} else {
		return 0;		/* empty line: no answer */
	}
	printf("end\n");
	return 0;
}

static void cleanup(void)
{
	if (qp)
		ibv_destroy_qp(qp);
	if (cq)
		ibv_destroy_cq(cq);
	if (rmr)
		ibv_dereg_mr(rmr);
	if (mr)
		ibv_dereg_mr(mr);
	if (pd)
		ibv_dealloc_pd(pd);
	if (ctx)
		ibv_close_device(ctx);
	free(buf);
	free(rbuf);
	free(wcs);
}

int main(int argc, char **argv)
{
	char line[4096];
	size_t have = 0;
	int done = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	parse_args(argc, argv);
	if (setup()) {
		cleanup();
		return 1;
	}

	while (!done) {
		struct pollfd pfd = { .fd = 0, .events = POLLIN };
		char *nl;
		ssize_t r;
		int ret = poll(&pfd, 1, 100);

		if (ret < 0 && errno != EINTR) {
			perror("uc_target: poll");
			break;
		}
		if (drain_cq())
			break;
		if (ret <= 0)
			continue;
		r = read(0, line + have, sizeof(line) - 1 - have);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;		/* end of input or error: quit */
		have += (size_t)r;
		line[have] = 0;
		while (!done && (nl = strchr(line, '\n'))) {
			size_t used = (size_t)(nl - line) + 1;

			*nl = 0;
			done = command(line);
			memmove(line, line + used, have - used + 1);
			have -= used;
		}
		if (have == sizeof(line) - 1) {
			fprintf(stderr, "uc_target: command line too long\n");
			break;
		}
	}
	cleanup();
	return 0;
}
