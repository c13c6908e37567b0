/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * verbs_util - what the snaa verbs test programs (uc_test, verbs_test,
 * uc_netem, ...) share: opening a device and picking its RoCE v2 GID, UC QP
 * creation and the RESET -> INIT -> RTR -> RTS connection without a CM,
 * registered buffers, polling completion queues, comparing data, the
 * device's hw counters and KTAP output.
 *
 * Conventions: functions that run a verb return what the verb returns
 * (0 or an errno value) unless said otherwise.  Functions that check
 * something return true if it holds and otherwise describe what is wrong
 * with vu_diag(); the diagnostics are printed ("# ...") before the next
 * KTAP result line (vu_report()) or by vu_diag_flush().  Messages about
 * the setup go to stderr, prefixed with the program's name.
 *
 * Everything uses port VU_PORT of a device.
 */
#ifndef SNAA_SELFTEST_VERBS_UTIL_H
#define SNAA_SELFTEST_VERBS_UTIL_H

#include <arpa/inet.h>
#include <getopt.h>
#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_user_ioctl.h>
#include <rdma/snaa-abi.h>

#include "snaa_gid.h"
#include "snaa_qp.h"

#define VU_PORT		1
#define VU_HOP_LIMIT	SNAA_HOP_LIMIT
#define VU_EXIT_SKIP	4	/* kselftest KSFT_SKIP: a device is missing */

/* ---- time and data ------------------------------------------------------ */

/* CLOCK_MONOTONIC in seconds. */
double vu_now(void);
void vu_nap_us(long us);

/*
 * $SNAA_TIME_SCALE (scripts/check.sh's measure of how much slower than
 * normal the test VM is today): 1 if unset or outside [1, 100].
 */
double vu_time_scale(void);

/*
 * An RC local ACK timeout (4.096 us << value) of @base on a machine of
 * normal speed, one step (twice as long) more for each doubling of
 * $SNAA_TIME_SCALE (scripts/check.sh's measure of a slow machine), at
 * most 31: for tests that need a responder's answers, not the timeout.
 */
int vu_ack_timeout(int base);

/* splitmix64 step: the next pseudo-random number from state *s. */
uint64_t vu_splitmix64(uint64_t *s);

/* n bytes of the splitmix64 stream seeded with seed (same seed, same
 * bytes). */
void vu_fill_prng(uint8_t *p, size_t n, uint64_t seed);

/* ---- KTAP --------------------------------------------------------------- */

/* Collect one diagnostic line (printf format, no newline). */
void vu_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Print the collected diagnostics as "# " lines and forget them. */
void vu_diag_flush(void);

/* One KTAP result line "[not ]ok N - NAME", after the diagnostics. */
void vu_report(bool ok, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Results reported so far, and how many of them failed. */
unsigned int vu_reported(void);
unsigned int vu_failed(void);

/*
 * From now on, print results and diagnostics as a KTAP subtest, indented
 * by four spaces: the checks of one named test of a kselftest_harness
 * program, whose own result line follows them.
 */
void vu_ktap_subtest(void);

/*
 * The KTAP plan "1..N" and a "# P passed, F failed, T s" summary (T:
 * seconds since t0, from vu_now()); returns the exit status, 0 iff
 * nothing failed.
 */
int vu_ktap_finish(double t0);

/* ---- names and formatting ----------------------------------------------- */

const char *vu_wc_opcode_str(int opcode);
const char *vu_qp_state_str(int state);
const char *vu_errno_str(int err);	/* "EINVAL", "0 (success)", ... */

/* One line with every field of a work completion. */
void vu_wc_str(const struct ibv_wc *wc, char *out, size_t len);

/* wc_flags as "GRH|WITH_IMM" ("none" if 0). */
void vu_wc_flags_str(unsigned int flags, char *out, size_t len);

/* ---- checks ------------------------------------------------------------- */

/*
 * got[0..n) == want[0..n), else a diagnostic: how many bytes differ,
 * the first and last offset (counted from base, so that a piece of a
 * larger region can name its offsets in that region) and the bytes
 * expected and found from the first difference on.
 */
bool vu_bytes_eq(const char *what, const uint8_t *got, const uint8_t *want,
		 size_t n, long long base);

/* Every byte of p[0..n) is fill (see vu_bytes_eq()). */
bool vu_bytes_all(const char *what, const uint8_t *p, uint8_t fill,
		  size_t n, long long base);

/* ---- devices ------------------------------------------------------------ */

/* GIDs: userspace/common/snaa_gid.h (snaa_gid_find() etc.) */

/* One RDMA device, its port VU_PORT, the GID used and a PD. */
struct vu_dev {
	/* set by the caller */
	char label;			/* 'A' or 'B': for messages */
	const char *name;		/* e.g. "snaa0" */
	int gid_idx;			/* -1: pick one of kind gid_kind */
	enum snaa_gid_kind gid_kind;
	/* set by vu_dev_open() */
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_port_attr port;
	union ibv_gid gid;
	char gid_str[INET6_ADDRSTRLEN];
	char ndev[IF_NAMESIZE];		/* the GID's netdev, "?" if unknown */
};

/* A vu_dev to be named and opened: label 'A' or 'B', GID to pick. */
#define VU_DEV_INIT(l)	{ .label = (l), .gid_idx = -1 }

/*
 * Open the device d->name (userspace/common's snaa_dev_open()), check that
 * port VU_PORT is an ACTIVE Ethernet (RoCE) port, pick the GID
 * (d->gid_idx if >= 0, which must exist, else the first one of kind
 * d->gid_kind; the hint names the option --gid-<label>) and allocate a
 * PD.  Returns 0, -1 on an error, VU_EXIT_SKIP if there is no such device
 * (or no RDMA device at all); the reason is printed on stderr.
 */
int vu_dev_open(struct vu_dev *d);

/* Free what vu_dev_open() allocated; d may be partly opened. */
void vu_dev_close(struct vu_dev *d);

/*
 * The options of the programs that connect a QP on device A with one on
 * device B: --dev-a NAME, --dev-b NAME, --gid-a IDX, --gid-b IDX, --ipv6.
 * VU_PAIR_OPTIONS goes into getopt_long()'s option table (with values
 * from 256 on: a program numbers its own options from VU_OPT_NEXT), and
 * VU_PAIR_USAGE into the help text.
 */
enum {
	VU_OPT_DEV_A = 256, VU_OPT_DEV_B, VU_OPT_GID_A, VU_OPT_GID_B,
	VU_OPT_IPV6, VU_OPT_NEXT
};

#define VU_PAIR_OPTIONS \
	{ "dev-a", required_argument, NULL, VU_OPT_DEV_A }, \
	{ "dev-b", required_argument, NULL, VU_OPT_DEV_B }, \
	{ "gid-a", required_argument, NULL, VU_OPT_GID_A }, \
	{ "gid-b", required_argument, NULL, VU_OPT_GID_B }, \
	{ "ipv6", no_argument, NULL, VU_OPT_IPV6 }

#define VU_PAIR_USAGE \
"  --dev-a/--dev-b NAME  RDMA devices (e.g. snaa0, see ibv_devices)\n" \
"  --gid-a/--gid-b IDX   GID index to use; default: the first RoCE v2 GID\n" \
"                        that is IPv4-mapped (::ffff:a.b.c.d), or with\n" \
"                        --ipv6 the first global IPv6 one\n" \
"  --ipv6                pick IPv6 GIDs instead of IPv4-mapped ones\n"

/*
 * If getopt_long()'s c is one of VU_PAIR_OPTIONS, set what it says in a
 * or b (name, gid_idx, gid_kind; labels 'A' and 'B') and return true.
 */
bool vu_pair_option(int c, const char *arg, struct vu_dev *a,
		    struct vu_dev *b);

/* After the options: a usage error unless both devices were named. */
void vu_pair_options_check(const struct vu_dev *a, const struct vu_dev *b);

/* The smaller of the two ports' active MTUs. */
enum ibv_mtu vu_path_mtu(const struct vu_dev *a, const struct vu_dev *b);

/* An MTU option's value: 256, 512, 1024, 2048 or 4096, else a usage
 * error naming the option name. */
int vu_mtu_option(const char *name, const char *arg);

/* 256 .. 4096 to IBV_MTU_*; anything else gives IBV_MTU_1024. */
enum ibv_mtu vu_mtu_enum(int bytes);
int vu_mtu_bytes(enum ibv_mtu mtu);

/*
 * The device's hw counter name (Documentation/counters.rst), read from
 * /sys/class/infiniband/DEV/ports/VU_PORT/hw_counters/NAME; -1 and a
 * diagnostic if it cannot be read.  The kernel caches the values for a
 * short while (rdma_hw_stats lifespan, 10 ms by default): wait that long
 * after the traffic before reading.
 */
long long vu_read_counter(const char *dev, const char *name);

/* snaa's per-device debugfs directory (fault injection, counters.rst). */
#define VU_SNAA_DEBUGFS	"/sys/kernel/debug/snaa"

/*
 * Write printf(@fmt, ...) to the file @dir/@name (a debugfs or sysfs
 * knob); false and a diagnostic if that fails.
 */
bool vu_write_file(const char *dir, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ---- buffers ------------------------------------------------------------ */

/* A page-aligned buffer and its MR. */
struct vu_buf {
	uint8_t *p;
	size_t len;
	struct ibv_mr *mr;
};

/*
 * Allocate len bytes (page-aligned), fill them with fill and register
 * them in pd with access.  Returns 0 or an errno value (b is then
 * partly set up: vu_buf_free() it).
 */
int vu_buf_alloc(struct vu_buf *b, struct ibv_pd *pd, size_t len, int access,
		 uint8_t fill);
void vu_buf_free(struct vu_buf *b);

/* ---- QPs ---------------------------------------------------------------- */

/* A QP of type type; NULL and errno on failure.  *cap is updated to the
 * granted capabilities. */
struct ibv_qp *vu_qp_create(struct ibv_pd *pd, enum ibv_qp_type type,
			    struct ibv_cq *scq, struct ibv_cq *rcq,
			    struct ibv_qp_cap *cap);

/* Modify to state with IBV_QP_STATE alone. */
int vu_qp_modify_state(struct ibv_qp *qp, enum ibv_qp_state state);

/* The QP's state from ibv_query_qp(), or -1 and a diagnostic. */
int vu_qp_state(struct ibv_qp *qp);

/* RESET -> INIT: P_Key index 0, port VU_PORT, access flags. */
int vu_qp_init(struct ibv_qp *qp, int access);

/* A global AH: from GID sgid_index to dgid, hop limit VU_HOP_LIMIT. */
void vu_fill_av(struct ibv_ah_attr *ah, int sgid_index,
		const union ibv_gid *dgid);

/*
 * The RC attributes vu_qp_rtr() and vu_qp_rts() set on RC QPs (RTR:
 * max_dest_rd_atomic, min_rnr_timer; RTS: timeout, retry_cnt,
 * rnr_retry, max_rd_atomic).  A test may change them before connecting.
 * Defaults: timeout 14 (67 ms), 7 retries, rnr_retry 7 (infinite),
 * min_rnr_timer 12 (0.64 ms), 16 READ/atomic requests each way.
 */
extern struct snaa_rc_attr vu_rc;

/* INIT -> RTR towards QP dest_qpn at dgid, expecting PSN rq_psn. */
int vu_qp_rtr(struct ibv_qp *qp, int sgid_index, const union ibv_gid *dgid,
	      uint32_t dest_qpn, enum ibv_mtu mtu, uint32_t rq_psn);

/* RTR -> RTS, sending from PSN sq_psn. */
int vu_qp_rts(struct ibv_qp *qp, uint32_t sq_psn);

/* What vu_qp_connect() needs to know about one end. */
struct vu_qp_end {
	struct ibv_qp *qp;
	const struct vu_dev *dev;	/* its device: GID and GID index */
	uint32_t sq_psn;		/* first PSN it sends */
	uint32_t rq_psn;		/* first PSN it expects */
};

/*
 * Move qp (RESET) to RTS, connected to peer: vu_qp_init(access),
 * vu_qp_rtr() and vu_qp_rts().  Returns 0, or the failing verb's errno
 * value with *step set to "RESET->INIT", "INIT->RTR" or "RTR->RTS".
 */
int vu_qp_connect(const struct vu_qp_end *self, const struct vu_qp_end *peer,
		  enum ibv_mtu mtu, int access, const char **step);

/* ---- completions -------------------------------------------------------- */

/*
 * Poll cq until want completions are in wc[0..want) or the deadline
 * (vu_now() time) has passed; returns how many arrived.
 */
int vu_poll_cq(struct ibv_cq *cq, struct ibv_wc *wc, int want,
	       double deadline);

/* No completion on cq, now and ms milliseconds from now (what: for the
 * diagnostic, which lists up to 8 of them). */
bool vu_cq_stays_empty(struct ibv_cq *cq, int ms, const char *what);

/* Poll cq until it is empty, forgetting what was there. */
void vu_cq_drain(struct ibv_cq *cq);

/* ---- snaa's doorbell ioctl ----------------------------------------------- */

/*
 * SNAA_IB_METHOD_QP_DOORBELL (snaa-abi.h) by hand, so that tests can
 * also break it: the header and room for three attributes.
 */
struct vu_doorbell {
	struct ib_uverbs_ioctl_hdr hdr;
	struct ib_uverbs_attr attr[3];
};

/*
 * A well-formed doorbell: one attribute, the doorbell word inline (a QPN,
 * with SNAA_DOORBELL_RQ for the RQ).
 */
void vu_doorbell_init(struct vu_doorbell *cmd, uint32_t word);

/* Issue cmd on fd (a context's cmd_fd): 0 or the errno of ioctl(2). */
int vu_doorbell_ring(int fd, struct vu_doorbell *cmd);

/* A well-formed doorbell of word on ctx: 0 or the errno of ioctl(2). */
int vu_doorbell(struct ibv_context *ctx, uint32_t word);

#endif /* SNAA_SELFTEST_VERBS_UTIL_H */
