// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * verbs_util - shared helpers of the snaa verbs test programs; see
 * verbs_util.h.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>

#include "snaa_dev.h"
#include "snaa_opt.h"
#include "verbs_util.h"

#define PROG program_invocation_short_name

/* ---- time and data ------------------------------------------------------ */

double vu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double vu_time_scale(void)
{
	const char *env = getenv("SNAA_TIME_SCALE");
	double scale = env ? strtod(env, NULL) : 1.0;

	return scale >= 1.0 && scale <= 100.0 ? scale : 1.0;
}

int vu_ack_timeout(int base)
{
	double scale = vu_time_scale();
	int t = base;

	for (double f = 1.0; f < scale && t < 31; f *= 2)
		t++;
	return t;
}

void vu_nap_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

uint64_t vu_splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void vu_fill_prng(uint8_t *p, size_t n, uint64_t seed)
{
	uint64_t s = seed, v;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		v = vu_splitmix64(&s);
		memcpy(p + i, &v, 8);
	}
	if (i < n) {
		v = vu_splitmix64(&s);
		memcpy(p + i, &v, n - i);
	}
}

/* ---- KTAP --------------------------------------------------------------- */

#define DIAG_MAX 32
static char diag_lines[DIAG_MAX][320];
static int diag_n, diag_lost;
static unsigned int ktap_n, ktap_failed;

void vu_diag(const char *fmt, ...)
{
	va_list ap;

	if (diag_n == DIAG_MAX) {
		diag_lost++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(diag_lines[diag_n++], sizeof(diag_lines[0]), fmt, ap);
	va_end(ap);
}

/* "" at the top level, four spaces in a subtest (vu_ktap_subtest()) */
static const char *ktap_indent = "";

void vu_ktap_subtest(void)
{
	ktap_indent = "    ";
}

void vu_diag_flush(void)
{
	int i;

	for (i = 0; i < diag_n; i++)
		printf("%s# %s\n", ktap_indent, diag_lines[i]);
	if (diag_lost)
		printf("%s# (%d more diagnostics suppressed)\n", ktap_indent,
		       diag_lost);
	diag_n = diag_lost = 0;
}

void vu_report(bool ok, const char *fmt, ...)
{
	va_list ap;

	vu_diag_flush();
	ktap_n++;
	if (!ok)
		ktap_failed++;
	printf("%s%sok %u - ", ktap_indent, ok ? "" : "not ", ktap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

unsigned int vu_reported(void)
{
	return ktap_n;
}

unsigned int vu_failed(void)
{
	return ktap_failed;
}

int vu_ktap_finish(double t0)
{
	vu_diag_flush();
	printf("1..%u\n", ktap_n);
	printf("# %u passed, %u failed, %.1f s\n", ktap_n - ktap_failed,
	       ktap_failed, vu_now() - t0);
	return ktap_failed ? 1 : 0;
}

/* ---- names and formatting ----------------------------------------------- */

const char *vu_wc_opcode_str(int opcode)
{
	switch (opcode) {
	case IBV_WC_SEND: return "SEND";
	case IBV_WC_RDMA_WRITE: return "RDMA_WRITE";
	case IBV_WC_RDMA_READ: return "RDMA_READ";
	case IBV_WC_COMP_SWAP: return "COMP_SWAP";
	case IBV_WC_FETCH_ADD: return "FETCH_ADD";
	case IBV_WC_BIND_MW: return "BIND_MW";
	case IBV_WC_LOCAL_INV: return "LOCAL_INV";
	case IBV_WC_RECV: return "RECV";
	case IBV_WC_RECV_RDMA_WITH_IMM: return "RECV_RDMA_WITH_IMM";
	default: return "?";
	}
}

const char *vu_qp_state_str(int state)
{
	switch (state) {
	case IBV_QPS_RESET: return "RESET";
	case IBV_QPS_INIT: return "INIT";
	case IBV_QPS_RTR: return "RTR";
	case IBV_QPS_RTS: return "RTS";
	case IBV_QPS_SQD: return "SQD";
	case IBV_QPS_SQE: return "SQE";
	case IBV_QPS_ERR: return "ERR";
	default: return "?";
	}
}

const char *vu_errno_str(int err)
{
	switch (err) {
	case 0: return "0 (success)";
	case EINVAL: return "EINVAL";
	case ENOMEM: return "ENOMEM";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case EPERM: return "EPERM";
	case EFAULT: return "EFAULT";
	case ENOSYS: return "ENOSYS";
	case EPROTO: return "EPROTO";
	default: return strerror(err);
	}
}

void vu_wc_flags_str(unsigned int flags, char *out, size_t len)
{
	static const struct { unsigned int bit; const char *name; } names[] = {
		{ IBV_WC_GRH, "GRH" }, { IBV_WC_WITH_IMM, "WITH_IMM" },
		{ IBV_WC_IP_CSUM_OK, "IP_CSUM_OK" },
		{ IBV_WC_WITH_INV, "WITH_INV" },
	};
	size_t i, o = 0;

	out[0] = '\0';
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (flags & names[i].bit) {
			o += (size_t)snprintf(out + o, len - o, "%s%s",
					      o ? "|" : "", names[i].name);
			if (o >= len)
				return;
		}
	}
	if (!o)
		snprintf(out, len, "none");
}

void vu_wc_str(const struct ibv_wc *wc, char *out, size_t len)
{
	char fl[64];

	vu_wc_flags_str(wc->wc_flags, fl, sizeof(fl));
	snprintf(out, len,
		 "wr_id=0x%" PRIx64 " status=%s(%d) opcode=%s(%d) "
		 "byte_len=%u qp_num=0x%x src_qp=0x%x wc_flags=0x%x(%s) "
		 "imm_data=0x%08x", wc->wr_id, ibv_wc_status_str(wc->status),
		 wc->status, vu_wc_opcode_str(wc->opcode), wc->opcode,
		 wc->byte_len, wc->qp_num, wc->src_qp, wc->wc_flags, fl,
		 ntohl(wc->imm_data));
}

/* ---- checks ------------------------------------------------------------- */

static void hexdump(const uint8_t *p, size_t n, char *out, size_t len)
{
	size_t i, o = 0;

	out[0] = '\0';
	for (i = 0; i < n && o + 3 < len; i++)
		o += (size_t)snprintf(out + o, len - o, "%s%02x", i ? " " : "",
				      p[i]);
}

/* The diagnostic of vu_bytes_eq() and vu_bytes_all(); want == NULL: all
 * bytes should be fill. */
static bool bytes_check(const char *what, const uint8_t *got,
			const uint8_t *want, uint8_t fill, size_t n,
			long long base)
{
	size_t i, first = SIZE_MAX, last = 0, cnt = 0, show;
	uint8_t w[12];
	char hw[64], hg[64];

	for (i = 0; i < n; i++) {
		if (got[i] != (want ? want[i] : fill)) {
			if (first == SIZE_MAX)
				first = i;
			last = i;
			cnt++;
		}
	}
	if (!cnt)
		return true;
	show = n - first < sizeof(w) ? n - first : sizeof(w);
	for (i = 0; i < show; i++)
		w[i] = want ? want[first + i] : fill;
	hexdump(w, show, hw, sizeof(hw));
	hexdump(got + first, show, hg, sizeof(hg));
	vu_diag("%s: %zu of %zu bytes differ, first at offset %lld, last at "
		"offset %lld", what, cnt, n, base + (long long)first,
		base + (long long)last);
	vu_diag("  expected [%s]", hw);
	vu_diag("  got      [%s]", hg);
	return false;
}

bool vu_bytes_eq(const char *what, const uint8_t *got, const uint8_t *want,
		 size_t n, long long base)
{
	if (!memcmp(got, want, n))
		return true;
	return bytes_check(what, got, want, 0, n, base);
}

bool vu_bytes_all(const char *what, const uint8_t *p, uint8_t fill,
		  size_t n, long long base)
{
	return bytes_check(what, p, NULL, fill, n, base);
}

/* ---- devices ------------------------------------------------------------ */

static const char *gid_type_str(uint32_t t)
{
	switch (t) {
	case IBV_GID_TYPE_IB: return "IB";
	case IBV_GID_TYPE_ROCE_V1: return "RoCE v1";
	case IBV_GID_TYPE_ROCE_V2: return "RoCE v2";
	default: return "?";
	}
}

static int pick_gid(struct vu_dev *d)
{
	bool v6 = d->gid_kind == SNAA_GID_IPV6;
	struct ibv_gid_entry e;
	int want = d->gid_idx;

	if (want >= 0) {
		if (want >= d->port.gid_tbl_len ||
		    ibv_query_gid_ex(d->ctx, VU_PORT, (uint32_t)want, &e, 0) ||
		    snaa_gid_is_zero(&e.gid)) {
			fprintf(stderr, "%s: GID index %d of %s port %d is "
				"empty or invalid (see ibv_devinfo -v -d %s)\n",
				PROG, want, d->name, VU_PORT, d->name);
			return -1;
		}
		if (e.gid_type != IBV_GID_TYPE_ROCE_V2)
			printf("# warning: %c GID %d is %s, not RoCE v2\n",
			       d->label, want, gid_type_str(e.gid_type));
	} else if (snaa_gid_find(d->ctx, VU_PORT, d->port.gid_tbl_len,
				 d->gid_kind, &e) < 0) {
		fprintf(stderr, "%s: %s port %d has no RoCE v2 GID with %s: "
			"add one to its netdev, e.g. 'ip addr add %s dev "
			"NETDEV'%s, or pick one with --gid-%c (see ibv_devinfo "
			"-v -d %s)\n", PROG, d->name, VU_PORT,
			v6 ? "a global IPv6 address" : "an IPv4 address",
			v6 ? "2001:2::1/64" : "198.18.0.1/24",
			v6 ? " nodad" : "", tolower((unsigned char)d->label),
			d->name);
		return -1;
	}
	d->gid_idx = (int)e.gid_index;
	d->gid = e.gid;
	if (!inet_ntop(AF_INET6, d->gid.raw, d->gid_str, sizeof(d->gid_str)))
		strcpy(d->gid_str, "?");
	if (!e.ndev_ifindex || !if_indextoname(e.ndev_ifindex, d->ndev))
		strcpy(d->ndev, "?");
	return 0;
}

int vu_dev_open(struct vu_dev *d)
{
	int ret;

	d->ctx = snaa_dev_open(PROG, d->name);
	if (!d->ctx)
		return errno == ENODEV ? VU_EXIT_SKIP : -1;
	ret = ibv_query_port(d->ctx, VU_PORT, &d->port);
	if (ret) {
		fprintf(stderr, "%s: %s: ibv_query_port(%d): %s\n", PROG,
			d->name, VU_PORT, strerror(ret));
		return -1;
	}
	if (d->port.link_layer != IBV_LINK_LAYER_ETHERNET) {
		fprintf(stderr, "%s: %s port %d is not Ethernet (RoCE)\n",
			PROG, d->name, VU_PORT);
		return -1;
	}
	if (d->port.state != IBV_PORT_ACTIVE) {
		fprintf(stderr, "%s: %s port %d is %s, not ACTIVE: bring its "
			"netdev and the peer up (ip link set DEV up)\n", PROG,
			d->name, VU_PORT, ibv_port_state_str(d->port.state));
		return -1;
	}
	if (pick_gid(d))
		return -1;
	d->pd = ibv_alloc_pd(d->ctx);
	if (!d->pd) {
		fprintf(stderr, "%s: %s: ibv_alloc_pd: %s\n", PROG, d->name,
			strerror(errno));
		return -1;
	}
	return 0;
}

void vu_dev_close(struct vu_dev *d)
{
	if (d->pd)
		ibv_dealloc_pd(d->pd);
	if (d->ctx)
		ibv_close_device(d->ctx);
	d->pd = NULL;
	d->ctx = NULL;
}

bool vu_pair_option(int c, const char *arg, struct vu_dev *a,
		    struct vu_dev *b)
{
	a->label = 'A';
	b->label = 'B';
	switch (c) {
	case VU_OPT_DEV_A: a->name = arg; return true;
	case VU_OPT_DEV_B: b->name = arg; return true;
	case VU_OPT_GID_A:
		a->gid_idx = opt_int("--gid-a", arg, 0, 255);
		return true;
	case VU_OPT_GID_B:
		b->gid_idx = opt_int("--gid-b", arg, 0, 255);
		return true;
	case VU_OPT_IPV6:
		a->gid_kind = b->gid_kind = SNAA_GID_IPV6;
		return true;
	}
	return false;
}

void vu_pair_options_check(const struct vu_dev *a, const struct vu_dev *b)
{
	if (!a->name || !b->name)
		opt_usage_error("--dev-a and --dev-b are required");
}

enum ibv_mtu vu_path_mtu(const struct vu_dev *a, const struct vu_dev *b)
{
	return a->port.active_mtu < b->port.active_mtu ? a->port.active_mtu :
	       b->port.active_mtu;
}

int vu_mtu_option(const char *name, const char *arg)
{
	int mtu = opt_int(name, arg, 256, 4096);

	if (mtu & (mtu - 1))
		opt_usage_error("%s: %d is not one of 256, 512, 1024, 2048, "
				"4096", name, mtu);
	return mtu;
}

enum ibv_mtu vu_mtu_enum(int bytes)
{
	switch (bytes) {
	case 256: return IBV_MTU_256;
	case 512: return IBV_MTU_512;
	case 2048: return IBV_MTU_2048;
	case 4096: return IBV_MTU_4096;
	default: return IBV_MTU_1024;
	}
}

int vu_mtu_bytes(enum ibv_mtu mtu)
{
	return 128 << mtu;
}

long long vu_read_counter(const char *dev, const char *name)
{
	char path[256];
	long long v;
	FILE *f;

	snprintf(path, sizeof(path),
		 "/sys/class/infiniband/%s/ports/%d/hw_counters/%s", dev,
		 VU_PORT, name);
	f = fopen(path, "r");
	if (!f) {
		vu_diag("cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	if (fscanf(f, "%lld", &v) != 1) {
		vu_diag("cannot read a number from %s", path);
		v = -1;
	}
	fclose(f);
	return v;
}

bool vu_write_file(const char *dir, const char *name, const char *fmt, ...)
{
	char path[512];
	va_list ap;
	FILE *f;
	int ret;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f) {
		vu_diag("cannot open %s: %s", path, strerror(errno));
		return false;
	}
	va_start(ap, fmt);
	ret = vfprintf(f, fmt, ap);
	va_end(ap);
	if (fclose(f) || ret < 0) {
		vu_diag("cannot write to %s: %s", path, strerror(errno));
		return false;
	}
	return true;
}

/* ---- buffers ------------------------------------------------------------ */

int vu_buf_alloc(struct vu_buf *b, struct ibv_pd *pd, size_t len, int access,
		 uint8_t fill)
{
	void *p;

	memset(b, 0, sizeof(*b));
	if (posix_memalign(&p, 4096, len ? len : 1))
		return ENOMEM;
	b->p = p;
	b->len = len;
	memset(b->p, fill, len);
	b->mr = ibv_reg_mr(pd, b->p, len, access);
	return b->mr ? 0 : errno;
}

void vu_buf_free(struct vu_buf *b)
{
	if (b->mr)
		ibv_dereg_mr(b->mr);
	free(b->p);
	memset(b, 0, sizeof(*b));
}

/* ---- QPs ---------------------------------------------------------------- */

struct ibv_qp *vu_qp_create(struct ibv_pd *pd, enum ibv_qp_type type,
			    struct ibv_cq *scq, struct ibv_cq *rcq,
			    struct ibv_qp_cap *cap)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp *qp;

	memset(&ia, 0, sizeof(ia));
	ia.send_cq = scq;
	ia.recv_cq = rcq;
	ia.qp_type = type;
	ia.cap = *cap;
	qp = ibv_create_qp(pd, &ia);
	if (qp)
		*cap = ia.cap;
	return qp;
}

int vu_qp_modify_state(struct ibv_qp *qp, enum ibv_qp_state state)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = state;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

int vu_qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;
	int ret;

	memset(&a, 0, sizeof(a));
	ret = ibv_query_qp(qp, &a, IBV_QP_STATE, &ia);
	if (ret) {
		vu_diag("ibv_query_qp: %s", strerror(ret));
		return -1;
	}
	return a.qp_state;
}

int vu_qp_init(struct ibv_qp *qp, int access)
{
	return snaa_qp_init(qp, VU_PORT, (unsigned int)access);
}

void vu_fill_av(struct ibv_ah_attr *ah, int sgid_index,
		const union ibv_gid *dgid)
{
	snaa_fill_av(ah, VU_PORT, sgid_index, dgid);
}

struct snaa_rc_attr vu_rc = {
	.timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
	.min_rnr_timer = 12, .max_rd_atomic = 16, .max_dest_rd_atomic = 16,
};

int vu_qp_rtr(struct ibv_qp *qp, int sgid_index, const union ibv_gid *dgid,
	      uint32_t dest_qpn, enum ibv_mtu mtu, uint32_t rq_psn)
{
	return snaa_qp_rtr(qp, VU_PORT, sgid_index, dgid, dest_qpn, mtu,
			   rq_psn, &vu_rc);
}

int vu_qp_rts(struct ibv_qp *qp, uint32_t sq_psn)
{
	return snaa_qp_rts(qp, sq_psn, &vu_rc);
}

int vu_qp_connect(const struct vu_qp_end *self, const struct vu_qp_end *peer,
		  enum ibv_mtu mtu, int access, const char **step)
{
	int ret;

	*step = "RESET->INIT";
	ret = vu_qp_init(self->qp, access);
	if (ret)
		return ret;
	*step = "INIT->RTR";
	ret = vu_qp_rtr(self->qp, self->dev->gid_idx, &peer->dev->gid,
			peer->qp->qp_num, mtu, self->rq_psn);
	if (ret)
		return ret;
	*step = "RTR->RTS";
	return vu_qp_rts(self->qp, self->sq_psn);
}

/* ---- completions -------------------------------------------------------- */

int vu_poll_cq(struct ibv_cq *cq, struct ibv_wc *wc, int want,
	       double deadline)
{
	long backoff = 0;
	int got = 0, r;

	while (got < want) {
		r = ibv_poll_cq(cq, want - got, wc + got);
		if (r < 0) {
			vu_diag("ibv_poll_cq failed (%d)", r);
			return got;
		}
		if (r > 0) {
			got += r;
			backoff = 0;
			continue;
		}
		if (vu_now() > deadline)
			break;
		backoff = backoff ? (backoff < 1000 ? backoff * 2 : 2000) : 10;
		vu_nap_us(backoff);
	}
	return got;
}

bool vu_cq_stays_empty(struct ibv_cq *cq, int ms, const char *what)
{
	struct ibv_wc wc;
	char s[256];
	bool ok = true;
	int n = 0;

	if (ms)
		vu_nap_us(ms * 1000L);
	while (ibv_poll_cq(cq, 1, &wc) > 0 && n++ < 8) {
		vu_wc_str(&wc, s, sizeof(s));
		vu_diag("unexpected CQE on %s: %s", what, s);
		ok = false;
	}
	return ok;
}

void vu_cq_drain(struct ibv_cq *cq)
{
	struct ibv_wc wc[16];

	while (ibv_poll_cq(cq, 16, wc) > 0)
		;
}

/* ---- snaa's doorbell ioctl ----------------------------------------------- */

void vu_doorbell_init(struct vu_doorbell *cmd, uint32_t word)
{
	memset(cmd, 0, sizeof(*cmd));
	cmd->hdr.length = sizeof(cmd->hdr) + sizeof(cmd->attr[0]);
	cmd->hdr.object_id = UVERBS_OBJECT_DEVICE;
	cmd->hdr.method_id = SNAA_IB_METHOD_QP_DOORBELL;
	cmd->hdr.num_attrs = 1;
	cmd->hdr.driver_id = RDMA_DRIVER_UNKNOWN;
	cmd->attr[0].attr_id = SNAA_IB_ATTR_DOORBELL;
	cmd->attr[0].len = sizeof(word);
	cmd->attr[0].flags = UVERBS_ATTR_F_MANDATORY;
	memcpy(&cmd->attr[0].data, &word, sizeof(word));
}

int vu_doorbell_ring(int fd, struct vu_doorbell *cmd)
{
	return ioctl(fd, RDMA_VERBS_IOCTL, cmd) ? errno : 0;
}

int vu_doorbell(struct ibv_context *ctx, uint32_t word)
{
	struct vu_doorbell cmd;

	vu_doorbell_init(&cmd, word);
	return vu_doorbell_ring(ctx->cmd_fd, &cmd);
}
