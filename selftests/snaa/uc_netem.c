// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * uc_netem - UC under packet loss, reordering, duplication and corruption.
 *
 * Connects a UC QP on device A with one on device B (no CM) and sends a
 * stream of multi-packet messages A -> B in three phases:
 *
 *   before    PRE messages over a clean link
 *   impaired  --count messages while the link A -> B is impaired: tc netem
 *             (--netem ARGS) or a tc u32 filter that drops every packet
 *             whose PSN matches (--drop-psn MASK:V1,V2,...)
 *   after     POST messages over the clean link again, same QPs
 *
 * The impairment is installed on A's egress netdev (--netdev, in network
 * namespace --netns) for RoCEv2 packets only: a prio qdisc whose fourth
 * band (which the priomap never picks) holds the netem qdisc, and a u32
 * filter that sends UDP packets to port 4791 there (or drops them).
 *
 * Every message is 3 * MTU + 5 bytes, four packets.  Message s is a SEND
 * if bit 1 of s is clear, else an RDMA WRITE WITH IMM (immediate s) to
 * slot s of B's target MR; its bytes are a PRNG stream seeded by s, the
 * first eight "NETM" and s (big endian), so that a message spliced from
 * two messages or put in the wrong place shows.  B has a receive WR
 * posted for every message of the three phases.
 *
 * UC semantics (IBA 9.7.5.1.4, the UC responder): a packet with a PSN
 * other than the expected one ends the message in progress (its receive
 * WR is kept for the next message); MIDDLE and LAST packets are dropped
 * until the next FIRST or ONLY (snaa counts the first after a gap as
 * drop_psn_gap, the ones behind it as drop_bad_sequence).  Hence,
 * whatever the impairment, it is asserted exactly that
 *
 *  - every send WR completes successfully, in order (UC requester);
 *  - every receive completion is successful, on the next receive WR
 *    (lost messages consume none), carries a message of this phase that
 *    completed no earlier, of the full length, with its exact data (a
 *    SEND: the receive buffer; a WRITE WITH IMM: its slot); with
 *    reordering, messages may complete out of order;
 *  - each packet-sized chunk of a WRITE slot holds either nothing or that
 *    message's data, nothing else (a lost WRITE may have landed in part);
 *  - the receiver counted no drop other than drop_psn_gap and
 *    drop_bad_sequence (and drop_bad_icrc under corruption);
 *  - drop_psn_gap + drop_bad_sequence <= rx_packets - 4 * completed
 *    (each completed message took four packets);
 *  - packet accounting: the receiver's rx_packets equals the packets netem
 *    passed on (loss, duplication, reordering); under corruption every
 *    packet netem passed on is counted exactly once: by snaa (rx_packets,
 *    drop_bad_icrc) or by the kernel before it (IP header errors, UDP
 *    errors and closed ports in B's namespace, frames for another MAC
 *    or of an unknown EtherType on B's netdev);
 *  - the QPs stay in RTS, and the after phase is delivered completely,
 *    in order, with no drop counted (as the before phase).
 *
 * Which packets netem loses, duplicates, reorders or corrupts is random
 * (the netem of Linux 6.1 cannot be seeded), so the amount of damage is
 * only asserted to be non-zero where it is certain for all practical
 * purposes (e.g. 10% loss of 800 packets losing none: p = 0.9^800), and
 * named in "# info:" lines.  With --drop-psn the loss pattern is fixed:
 * the outcome is computed by applying the UC rules above to the packets
 * that pass, and the completed messages, drop_psn_gap, drop_bad_sequence
 * and rx_packets must match it exactly.
 *
 * Output is KTAP; exit status 0 iff every check passed, 1 if one failed
 * or the setup failed, 2 for usage errors, 4 (kselftest SKIP) if a device
 * is missing.
 *
 * Build: make -C selftests/snaa uc_netem (uc_netem.c, verbs_util.c and
 * userspace/common/snaa_opt.c, with -libverbs)
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "snaa_opt.h"
#include "verbs_util.h"

#define PRE		16		/* messages before impairing */
#define POST		16		/* and after it */
#define PKTS		4		/* packets per message */
#define SQ_DEPTH	64
#define SLACK		64		/* receive WR room beyond it */
#define GUARD		256		/* bytes after that checked */
#define POISON		0xa5
#define PSN_A		0xffff80u	/* A's first PSN: it wraps */
#define MAGIC		0x4e45544du	/* "NETM" */
#define MAX_DROP	16		/* --drop-psn values */
#define MAX_DROP_COUNTERS 64
#define CQE_TIMEOUT	20.0		/* s for a phase's completions */
#define QUIET_MS	300		/* no completion that long: done */

static struct {
	struct vu_dev a, b;
	int mtu;
	unsigned int count;
	const char *netns, *netdev;	/* A's egress: where tc goes */
	const char *peer_netns, *peer_netdev;	/* B's netdev */
	const char *netem;
	uint32_t drop_mask;
	uint32_t drop_val[MAX_DROP];
	int ndrop;
	const char *name;
} opt = {
	.a = VU_DEV_INIT('A'), .b = VU_DEV_INIT('B'), .mtu = 1024,
	.count = 200,
};

static void usage(FILE *f)
{
	fprintf(f,
"Usage: uc_netem --dev-a NAME --dev-b NAME --netns NS --netdev IF\n"
"                --peer-netns NS --peer-netdev IF\n"
"                [--netem ARGS | --drop-psn MASK:V[,V...]] [--count N]\n"
"                [--mtu BYTES] [--name NAME] [--help]\n"
"\n"
"Send a stream of 4-packet UC messages (SEND and RDMA WRITE WITH IMM)\n"
"from device A to device B before, while and after the link A -> B is\n"
"impaired, and check what UC semantics require (see uc_netem.c).\n"
"Output is KTAP.\n"
"\n"
VU_PAIR_USAGE
"  --netns NS            network namespace of A's netdev (\"-\": this one)\n"
"  --netdev IF           A's netdev: tc impairs its egress\n"
"  --peer-netns NS       network namespace of B's netdev (\"-\": this one)\n"
"  --peer-netdev IF      B's netdev (its receive counters)\n"
"  --netem ARGS          netem parameters, e.g. \"loss 10%%\"\n"
"  --drop-psn MASK:V,... drop the packets whose PSN & MASK is one of the\n"
"                        values (a tc u32 filter; outcome computed exactly)\n"
"  --count N             messages while impaired (default 200)\n"
"  --mtu BYTES           path MTU (default 1024)\n"
"  --name NAME           what the impairment is called in the KTAP lines\n"
"  --help                show this help\n"
"\n"
"Without --netem and --drop-psn the middle phase is not impaired either.\n"
"Exit status: 0 all checks passed, 1 a check or the setup failed, 2 usage\n"
"error, 4 a device is missing (skip).\n");
}

/* Names that go into shell commands: letters, digits and "._-" only. */
static const char *safe_word(const char *what, const char *s)
{
	const char *p;

	for (p = s; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("._-", *p))
			opt_usage_error("%s: '%s' is not a plain name", what,
					s);
	if (!*s)
		opt_usage_error("%s: empty", what);
	return s;
}

static void parse_drop(const char *arg)
{
	char *colon, *e;
	const char *p;

	opt.drop_mask = (uint32_t)strtoul(arg, &colon, 0);
	if (*colon != ':' || !opt.drop_mask || opt.drop_mask > 0xffffff)
		opt_usage_error("--drop-psn: want MASK:V[,V...] with MASK "
				"1..0xffffff, not '%s'", arg);
	for (p = colon + 1; *p; p = *e ? e + 1 : e) {
		if (opt.ndrop == MAX_DROP)
			opt_usage_error("--drop-psn: more than %d values",
					MAX_DROP);
		errno = 0;
		opt.drop_val[opt.ndrop] = (uint32_t)strtoul(p, &e, 0);
		if (errno || e == p || (*e && *e != ',') ||
		    (opt.drop_val[opt.ndrop] & ~opt.drop_mask))
			opt_usage_error("--drop-psn: bad value in '%s' (values "
					"must lie within the mask)", arg);
		opt.ndrop++;
	}
	if (!opt.ndrop)
		opt_usage_error("--drop-psn: no value in '%s'", arg);
}

static void parse_args(int argc, char **argv)
{
	enum { O_NETNS = VU_OPT_NEXT, O_NETDEV, O_PEER_NETNS, O_PEER_NETDEV,
	       O_NETEM, O_DROP, O_COUNT, O_MTU, O_NAME };
	static const struct option lopts[] = {
		VU_PAIR_OPTIONS,
		{ "netns", required_argument, NULL, O_NETNS },
		{ "netdev", required_argument, NULL, O_NETDEV },
		{ "peer-netns", required_argument, NULL, O_PEER_NETNS },
		{ "peer-netdev", required_argument, NULL, O_PEER_NETDEV },
		{ "netem", required_argument, NULL, O_NETEM },
		{ "drop-psn", required_argument, NULL, O_DROP },
		{ "count", required_argument, NULL, O_COUNT },
		{ "mtu", required_argument, NULL, O_MTU },
		{ "name", required_argument, NULL, O_NAME },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *p;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
		switch (c) {
		case O_NETNS: opt.netns = optarg; break;
		case O_NETDEV: opt.netdev = optarg; break;
		case O_PEER_NETNS: opt.peer_netns = optarg; break;
		case O_PEER_NETDEV: opt.peer_netdev = optarg; break;
		case O_NETEM:
			for (p = optarg; *p; p++)
				if (!isalnum((unsigned char)*p) &&
				    !strchr(" .%_-", *p))
					opt_usage_error("--netem: unexpected "
							"'%c'", *p);
			opt.netem = optarg;
			break;
		case O_DROP: parse_drop(optarg); break;
		case O_COUNT:
			opt.count = (unsigned int)opt_int("--count", optarg, 1,
							  2000);
			break;
		case O_MTU:
			opt.mtu = vu_mtu_option("--mtu", optarg);
			break;
		case O_NAME: opt.name = optarg; break;
		default:
			if (!vu_pair_option(c, optarg, &opt.a, &opt.b))
				opt_help_or_error(c, argv, usage);
		}
	}
	opt_no_operands(argc, argv);
	vu_pair_options_check(&opt.a, &opt.b);
	if (!opt.netns || !opt.netdev || !opt.peer_netns || !opt.peer_netdev)
		opt_usage_error("--netns, --netdev, --peer-netns and "
				"--peer-netdev are required");
	safe_word("--netns", opt.netns);
	safe_word("--netdev", opt.netdev);
	safe_word("--peer-netns", opt.peer_netns);
	safe_word("--peer-netdev", opt.peer_netdev);
	if (opt.netem && opt.ndrop)
		opt_usage_error("--netem and --drop-psn exclude each other");
	if (!opt.name)
		opt.name = opt.netem ? opt.netem : opt.ndrop ? "drop-psn" :
			   "no impairment";
}

/* ---- shell commands in a network namespace ---------------------------- */

/*
 * Run "[ip netns exec NS] CMD" (printf format) with /bin/sh; its output
 * goes to out (up to len bytes, NUL-terminated) if out is not NULL, else
 * to our stdout as "# " lines.  Returns 0 iff the command exited with 0.
 */
static int __attribute__((format(printf, 4, 5)))
ns_run(const char *ns, char *out, size_t len, const char *fmt, ...)
{
	char cmd[512], line[512];
	size_t o = 0;
	va_list ap;
	FILE *f;
	int n;

	n = strcmp(ns, "-") ? snprintf(cmd, sizeof(cmd),
				       "ip netns exec %s ", ns) : 0;
	va_start(ap, fmt);
	vsnprintf(cmd + n, sizeof(cmd) - (size_t)n, fmt, ap);
	va_end(ap);
	strncat(cmd, " 2>&1", sizeof(cmd) - strlen(cmd) - 1);
	fflush(stdout);
	f = popen(cmd, "r");
	if (!f) {
		vu_diag("popen(%s): %s", cmd, strerror(errno));
		return -1;
	}
	if (out)
		out[0] = '\0';
	while (fgets(line, sizeof(line), f)) {
		if (!out) {
			printf("# %s", line);
			continue;
		}
		n = snprintf(out + o, len - o, "%s", line);
		if (n > 0 && o + (size_t)n < len)
			o += (size_t)n;
	}
	n = pclose(f);
	if (n) {
		vu_diag("'%s' failed (status %d)%s%s", cmd, n, out ? ": " : "",
			out ? out : "");
		return -1;
	}
	return 0;
}

/* The number after "key" in text (e.g. "Sent 123 bytes" with key "Sent "),
 * or -1. */
static long long num_after(const char *text, const char *key)
{
	const char *p = text ? strstr(text, key) : NULL;

	return p ? strtoll(p + strlen(key), NULL, 10) : -1;
}

/* ---- counters ----------------------------------------------------------- */

/* Everything counted about the packets A -> B at one moment. */
/*
 * Where B's kernel (and the veth link) can drop a packet before snaa sees
 * it: /proc/net/snmp columns, B's netdev statistics, and A's tx_dropped
 * (veth_xmit() counts a full peer backlog there, after the qdisc counted
 * the packet as sent).
 */
static const char *const kern_name[] = {
	"Ip InHdrErrors", "Ip InAddrErrors", "Ip InUnknownProtos",
	"Ip InDiscards", "IpExt InTruncatedPkts", "Udp InErrors", "Udp NoPorts",
	"rx_nohandler", "rx_dropped", "otherhost",
};
#define NKERN (sizeof(kern_name) / sizeof(kern_name[0]))

struct snap {
	long long a_tx;			/* A: tx_packets */
	long long b_rx;			/* B: rx_packets */
	int ndrop;
	char drop_name[MAX_DROP_COUNTERS][40];	/* B: drop_* */
	long long drop[MAX_DROP_COUNTERS];
	/* netem (or the prio qdisc with --drop-psn) on A's netdev */
	long long q_sent, q_dropped, q_requeues, q_backlog;
	/* A's netdev: packets the qdisc passed on that the link dropped */
	long long a_tx_dropped;
	/* the kernel in B's namespace and B's netdev (kern_name[]) */
	long long kern[NKERN];
	bool ok;			/* everything could be read */
};

static long long drop_of(const struct snap *s, const char *name)
{
	int i;

	for (i = 0; i < s->ndrop; i++)
		if (!strcmp(s->drop_name[i], name))
			return s->drop[i];
	vu_diag("no counter %s on %s", name, opt.b.name);
	return -1;
}

static int cmp_str(const void *x, const void *y)
{
	return strcmp(x, y);
}

/* B's drop_* counters, in name order. */
static bool read_drops(struct snap *s)
{
	char path[256];
	struct dirent *de;
	DIR *d;
	int i;

	snprintf(path, sizeof(path),
		 "/sys/class/infiniband/%s/ports/%d/hw_counters", opt.b.name,
		 VU_PORT);
	d = opendir(path);
	if (!d) {
		vu_diag("opendir %s: %s", path, strerror(errno));
		return false;
	}
	s->ndrop = 0;
	while ((de = readdir(d)) && s->ndrop < MAX_DROP_COUNTERS)
		if (!strncmp(de->d_name, "drop_", 5) &&
		    strlen(de->d_name) < sizeof(s->drop_name[0]))
			strcpy(s->drop_name[s->ndrop++], de->d_name);
	closedir(d);
	qsort(s->drop_name, (size_t)s->ndrop, sizeof(s->drop_name[0]),
	      cmp_str);
	for (i = 0; i < s->ndrop; i++) {
		s->drop[i] = vu_read_counter(opt.b.name, s->drop_name[i]);
		if (s->drop[i] < 0)
			return false;
	}
	return s->ndrop > 0;
}

/* "Sent N bytes P pkt (dropped D, overlimits O requeues R)" and
 * "backlog Xb Yp" of the qdisc whose line starts with head. */
static bool read_qdisc(struct snap *s, const char *head)
{
	char out[4096];
	const char *q;

	if (ns_run(opt.netns, out, sizeof(out), "sh -c 'tc -s qdisc show dev "
		   "%s; printf tx_dropped=; cat /sys/class/net/%s/statistics/"
		   "tx_dropped'", opt.netdev, opt.netdev))
		return false;
	s->a_tx_dropped = num_after(out, "tx_dropped=");
	q = strstr(out, head);
	if (!q) {
		vu_diag("no '%s' in tc -s qdisc show: %s", head, out);
		return false;
	}
	s->q_sent = num_after(strstr(q, " bytes "), " bytes ");
	s->q_dropped = num_after(q, "(dropped ");
	s->q_requeues = num_after(q, " requeues ");
	s->q_backlog = num_after(strstr(q, "backlog "), "b ");
	if (s->q_sent < 0 || s->q_dropped < 0 || s->q_requeues < 0 ||
	    s->q_backlog < 0 || s->a_tx_dropped < 0) {
		vu_diag("cannot parse tc -s qdisc show: %s", q);
		return false;
	}
	return true;
}

/* One value of /proc/net/snmp text: the column named field of the line
 * pair that starts with "proto:". */
static long long snmp_value(const char *text, const char *proto,
			    const char *field)
{
	char key[16], hdr[1024], val[1024], *hs, *vs, *h, *v;
	const char *p;
	size_t n;

	snprintf(key, sizeof(key), "%s:", proto);
	p = strstr(text, key);
	if (!p || sscanf(p, "%1023[^\n]\n%1023[^\n]", hdr, val) != 2)
		return -1;
	n = strlen(key);
	if (strncmp(val, key, n))
		return -1;
	h = strtok_r(hdr + n, " ", &hs);
	v = strtok_r(val + n, " ", &vs);
	while (h && v) {
		if (!strcmp(h, field))
			return strtoll(v, NULL, 10);
		h = strtok_r(NULL, " ", &hs);
		v = strtok_r(NULL, " ", &vs);
	}
	return -1;
}

/*
 * The counters of the kernel in B's namespace for packets it dropped
 * before snaa saw them (kern_name[]): /proc/net/snmp, B's netdev
 * statistics, and iproute2's JSON link statistics, which show
 * "otherhost" (frames for another MAC address) only when it is not 0.
 * One command: under TCG each "ip netns exec" takes a while.
 */
static bool read_peer_kernel(struct snap *s)
{
	char out[8192], proto[8];
	unsigned int i;

	if (ns_run(opt.peer_netns, out, sizeof(out), "sh -c 'cat "
		   "/proc/net/snmp /proc/net/netstat; cd /sys/class/net/%s/"
		   "statistics; printf "
		   "\"rx_nohandler=%%s rx_dropped=%%s\\n\" $(cat rx_nohandler "
		   "rx_dropped); ip -s -s -j link show dev %s'", opt.peer_netdev,
		   opt.peer_netdev))
		return false;
	for (i = 0; i < NKERN; i++) {
		const char *n = kern_name[i], *sp = strchr(n, ' ');
		char key[40];

		if (sp && (size_t)(sp - n) < sizeof(proto)) {
			snprintf(proto, sizeof(proto), "%.*s", (int)(sp - n), n);
			s->kern[i] = snmp_value(out, proto, sp + 1);
		} else if (!strcmp(n, "otherhost")) {
			/* iproute2 shows it only when it is not 0 */
			s->kern[i] = strstr(out, "\"otherhost\":") ?
				     num_after(out, "\"otherhost\":") : 0;
		} else {
			snprintf(key, sizeof(key), "%s=", n);
			s->kern[i] = num_after(out, key);
		}
		if (s->kern[i] < 0) {
			vu_diag("cannot read %s in %s", n, opt.peer_netns);
			return false;
		}
	}
	return true;
}

/* tc: what qdisc heads the stats come from, "" if there is none. */
static const char *qdisc_head = "";

/* What take_snap() reads besides the snaa counters. */
enum { SNAP_QDISC = 1, SNAP_KERNEL = 2 };

static bool take_snap(struct snap *s, int what)
{
	memset(s, 0, sizeof(*s));
	vu_nap_us(20 * 1000);	/* past the hw_counters cache lifespan */
	s->a_tx = vu_read_counter(opt.a.name, "tx_packets");
	s->b_rx = vu_read_counter(opt.b.name, "rx_packets");
	s->ok = s->a_tx >= 0 && s->b_rx >= 0 && read_drops(s) &&
		(!(what & SNAP_KERNEL) || read_peer_kernel(s)) &&
		(!(what & SNAP_QDISC) || !*qdisc_head ||
		 read_qdisc(s, qdisc_head));
	return s->ok;
}

/*
 * Every drop counter of B changed by exactly the expected amount: 0,
 * except for the names in allowed[] (-1: any amount, else exactly that).
 */
struct allow {
	const char *name;
	long long delta;		/* -1: any */
};

static bool drops_as_expected(const struct snap *s0, const struct snap *s1,
			      const struct allow *allowed, int nallowed)
{
	bool ok = true;
	int i, k;

	if (!s0->ok || !s1->ok || s0->ndrop != s1->ndrop) {
		vu_diag("counters could not be read");
		return false;
	}
	for (i = 0; i < s1->ndrop; i++) {
		long long d = s1->drop[i] - s0->drop[i], want = 0;

		for (k = 0; k < nallowed; k++)
			if (!strcmp(allowed[k].name, s1->drop_name[i]))
				want = allowed[k].delta;
		if (want >= 0 && d != want) {
			vu_diag("%s %s: +%lld, expected +%lld", opt.b.name,
				s1->drop_name[i], d, want);
			ok = false;
		}
	}
	return ok;
}

/* ---- the connection and the messages ------------------------------------- */

static size_t msg_len;			/* 3 * MTU + 5 */
static size_t stride;			/* per message in the buffers */
static unsigned int total;		/* PRE + count + POST */

static struct {
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp;
} ea, eb;
static struct vu_buf sbuf;		/* A: message s at s * stride */
static struct vu_buf rbuf;		/* B: receive WR k at k * stride */
static struct vu_buf wbuf;		/* B: WRITE slot s at s * stride */
static uint8_t *want;			/* a message as it must arrive */
static bool *done;			/* [s]: message s completed */
static unsigned int *comp_msg;		/* [k]: message of completion k */
static unsigned int ncomp;		/* receive completions so far */

static bool is_write(unsigned int s)
{
	return s & 2;
}

static void msg_fill(uint8_t *p, unsigned int s)
{
	uint32_t be;

	vu_fill_prng(p, msg_len, 0x6e65746d00000000ull ^ s);
	be = htonl(MAGIC);
	memcpy(p, &be, 4);
	be = htonl(s);
	memcpy(p + 4, &be, 4);
}

static int setup(void)
{
	const int rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	struct ibv_qp_cap ca = { SQ_DEPTH, 1, 1, 1, 0 };
	struct ibv_qp_cap cb = { 1, 0, 1, 1, 0 };
	const char *step;
	struct vu_qp_end ka, kb;
	unsigned int i;
	int ret;

	ret = vu_dev_open(&opt.a);
	if (ret == VU_EXIT_SKIP)
		printf("1..0 # SKIP device %s not found\n", opt.a.name);
	if (!ret) {
		ret = vu_dev_open(&opt.b);
		if (ret == VU_EXIT_SKIP)
			printf("1..0 # SKIP device %s not found\n",
			       opt.b.name);
	}
	if (ret)
		return ret;
	if (vu_mtu_bytes(vu_path_mtu(&opt.a, &opt.b)) < opt.mtu) {
		fprintf(stderr, "uc_netem: --mtu %d exceeds the active MTU of "
			"%s or %s\n", opt.mtu, opt.a.name, opt.b.name);
		return -1;
	}
	msg_len = 3 * (size_t)opt.mtu + 5;
	stride = (msg_len + SLACK + GUARD + 4095) & ~(size_t)4095;
	total = PRE + opt.count + POST;
	cb.max_recv_wr = total;
	ea.scq = ibv_create_cq(opt.a.ctx, 2 * SQ_DEPTH, NULL, NULL, 0);
	ea.rcq = ibv_create_cq(opt.a.ctx, 16, NULL, NULL, 0);
	eb.scq = ibv_create_cq(opt.b.ctx, 16, NULL, NULL, 0);
	eb.rcq = ibv_create_cq(opt.b.ctx, (int)total + 16, NULL, NULL, 0);
	want = malloc(msg_len);
	done = calloc(total, sizeof(*done));
	comp_msg = calloc(total, sizeof(*comp_msg));
	if (!ea.scq || !ea.rcq || !eb.scq || !eb.rcq || !want || !done ||
	    !comp_msg) {
		fprintf(stderr, "uc_netem: CQs or memory: %s\n",
			strerror(errno));
		return -1;
	}
	ret = vu_buf_alloc(&sbuf, opt.a.pd, total * stride, 0, POISON);
	if (!ret)
		ret = vu_buf_alloc(&rbuf, opt.b.pd, total * stride,
				   IBV_ACCESS_LOCAL_WRITE, POISON);
	if (!ret)
		ret = vu_buf_alloc(&wbuf, opt.b.pd, total * stride, rw,
				   POISON);
	if (ret) {
		fprintf(stderr, "uc_netem: buffers of %zu bytes: %s\n",
			total * stride, strerror(ret));
		return -1;
	}
	for (i = 0; i < total; i++)
		msg_fill(sbuf.p + i * stride, i);
	ea.qp = vu_qp_create(opt.a.pd, IBV_QPT_UC, ea.scq, ea.rcq, &ca);
	eb.qp = vu_qp_create(opt.b.pd, IBV_QPT_UC, eb.scq, eb.rcq, &cb);
	if (!ea.qp || !eb.qp) {
		fprintf(stderr, "uc_netem: ibv_create_qp(UC): %s\n",
			strerror(errno));
		return -1;
	}
	ka = (struct vu_qp_end){ ea.qp, &opt.a, PSN_A, 0x123456 };
	kb = (struct vu_qp_end){ eb.qp, &opt.b, 0x123456, PSN_A };
	ret = vu_qp_connect(&ka, &kb, vu_mtu_enum(opt.mtu), rw, &step);
	if (!ret)
		ret = vu_qp_connect(&kb, &ka, vu_mtu_enum(opt.mtu), rw, &step);
	if (ret) {
		fprintf(stderr, "uc_netem: QP %s: %s\n", step, strerror(ret));
		return -1;
	}
	for (i = 0; i < total; i++) {
		struct ibv_sge sge = {
			(uintptr_t)(rbuf.p + i * stride),
			(uint32_t)(msg_len + SLACK), rbuf.mr->lkey,
		};
		struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge,
					  .num_sge = 1 }, *bad;

		ret = ibv_post_recv(eb.qp, &wr, &bad);
		if (ret) {
			fprintf(stderr, "uc_netem: ibv_post_recv %u: %s\n", i,
				strerror(ret));
			return -1;
		}
	}
	printf("# A: %s GID[%d] %s (netdev %s), B: %s GID[%d] %s (netdev "
	       "%s)\n", opt.a.name, opt.a.gid_idx, opt.a.gid_str, opt.a.ndev,
	       opt.b.name, opt.b.gid_idx, opt.b.gid_str, opt.b.ndev);
	printf("# path MTU %d, messages of %zu bytes (%d packets), %u + %u + "
	       "%u, first PSN 0x%06x\n", opt.mtu, msg_len, PKTS, PRE,
	       opt.count, POST, PSN_A);
	return 0;
}

static void teardown(void)
{
	if (ea.qp)
		ibv_destroy_qp(ea.qp);
	if (eb.qp)
		ibv_destroy_qp(eb.qp);
	vu_buf_free(&sbuf);
	vu_buf_free(&rbuf);
	vu_buf_free(&wbuf);
	if (ea.scq)
		ibv_destroy_cq(ea.scq);
	if (ea.rcq)
		ibv_destroy_cq(ea.rcq);
	if (eb.scq)
		ibv_destroy_cq(eb.scq);
	if (eb.rcq)
		ibv_destroy_cq(eb.rcq);
	vu_dev_close(&opt.a);
	vu_dev_close(&opt.b);
	free(want);
	free(done);
	free(comp_msg);
}

/* Check one send completion: the next one in order. */
static bool check_send(const struct ibv_wc *wc, unsigned int s)
{
	int op = is_write(s) ? IBV_WC_RDMA_WRITE : IBV_WC_SEND;
	char str[256];

	if (wc->status == IBV_WC_SUCCESS && wc->wr_id == s &&
	    (int)wc->opcode == op && wc->qp_num == ea.qp->qp_num)
		return true;
	vu_wc_str(wc, str, sizeof(str));
	vu_diag("send completion %u: expected wr_id 0x%x, %s, SUCCESS; got "
		"%s", s, s, vu_wc_opcode_str(op), str);
	return false;
}

/*
 * Post the send WRs of messages first .. first + n - 1 (at most SQ_DEPTH
 * outstanding) and wait for their completions, each checked.
 */
static bool send_stream(unsigned int first, unsigned int n)
{
	unsigned int next = first, end = first + n, polled = first;
	double deadline = vu_now() + CQE_TIMEOUT;
	struct ibv_wc wc[16];
	bool ok = true;
	int got, i, ret;

	while (polled < end) {
		while (next < end && next - polled < SQ_DEPTH) {
			struct ibv_sge sge = {
				(uintptr_t)(sbuf.p + next * stride),
				(uint32_t)msg_len, sbuf.mr->lkey,
			};
			struct ibv_send_wr wr, *bad;

			memset(&wr, 0, sizeof(wr));
			wr.wr_id = next;
			wr.sg_list = &sge;
			wr.num_sge = 1;
			wr.send_flags = IBV_SEND_SIGNALED;
			if (is_write(next)) {
				wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
				wr.imm_data = htonl(next);
				wr.wr.rdma.remote_addr =
					(uintptr_t)(wbuf.p + next * stride);
				wr.wr.rdma.rkey = wbuf.mr->rkey;
			} else {
				wr.opcode = IBV_WR_SEND;
			}
			ret = ibv_post_send(ea.qp, &wr, &bad);
			if (ret) {
				vu_diag("ibv_post_send of message %u: %s", next,
					strerror(ret));
				return false;
			}
			next++;
		}
		got = vu_poll_cq(ea.scq, wc, 1, deadline);
		if (got < 1) {
			vu_diag("send completions: %u of %u within %.0f s",
				polled - first, n, CQE_TIMEOUT);
			return false;
		}
		got += ibv_poll_cq(ea.scq, 15, wc + 1);
		for (i = 0; i < got; i++)
			ok &= check_send(&wc[i], polled++);
	}
	return ok;
}

/* Check one receive completion: see the top of the file. */
static bool check_recv(const struct ibv_wc *wc, unsigned int lo,
		       unsigned int hi)
{
	const uint8_t *rb = rbuf.p + ncomp * stride;
	uint32_t be;
	unsigned int s;
	bool w, ok = true;
	char str[256], what[96];

	vu_wc_str(wc, str, sizeof(str));
	if (wc->status != IBV_WC_SUCCESS || wc->wr_id != ncomp ||
	    wc->qp_num != eb.qp->qp_num || wc->byte_len != msg_len ||
	    (wc->opcode != IBV_WC_RECV &&
	     wc->opcode != IBV_WC_RECV_RDMA_WITH_IMM)) {
		vu_diag("receive completion %u: expected SUCCESS on receive WR "
			"0x%x, byte_len %zu; got %s", ncomp, ncomp, msg_len,
			str);
		ncomp++;
		return false;
	}
	w = wc->opcode == IBV_WC_RECV_RDMA_WITH_IMM;
	if (!!(wc->wc_flags & IBV_WC_WITH_IMM) != w) {
		vu_diag("receive completion %u: %s with wc_flags 0x%x", ncomp,
			vu_wc_opcode_str(wc->opcode), wc->wc_flags);
		ok = false;
	}
	if (w) {
		s = ntohl(wc->imm_data);
	} else {
		memcpy(&be, rb + 4, 4);
		s = ntohl(be);
	}
	if (s < lo || s >= hi || is_write(s) != w || done[s]) {
		vu_diag("receive completion %u: %s of message %u, expected a "
			"%s of messages %u..%u not completed before (%s)",
			ncomp, w ? "WRITE WITH IMM" : "SEND", s,
			w ? "WRITE WITH IMM" : "SEND", lo, hi - 1,
			s < total && done[s] ? "completed before" :
			"out of range or wrong kind");
		vu_diag("  %s", str);
		ncomp++;
		return false;
	}
	done[s] = true;
	comp_msg[ncomp] = s;
	msg_fill(want, s);
	snprintf(what, sizeof(what), "message %u (%s, receive WR %u)", s,
		 w ? "WRITE WITH IMM, its slot" : "SEND", ncomp);
	ok &= vu_bytes_eq(what, w ? wbuf.p + s * stride : rb, want, msg_len,
			  0);
	ncomp++;
	return ok;
}

/*
 * Poll B's receive CQ until want completions more (want < 0: until it
 * stays empty for QUIET_MS) and check them; messages lo..hi-1 may
 * complete.  Returns how many came, *ok false if one was wrong.
 */
static unsigned int collect(int want_n, unsigned int lo, unsigned int hi,
			    bool *ok)
{
	double deadline = vu_now() + CQE_TIMEOUT;
	struct ibv_wc wc[16];
	unsigned int n = 0;
	int got, i;

	for (;;) {
		int room = 16;

		if (want_n >= 0) {
			if ((int)n >= want_n)
				break;
			if (want_n - (int)n < room)
				room = want_n - (int)n;
		}
		got = vu_poll_cq(eb.rcq, wc, 1, want_n >= 0 ? deadline :
				 vu_now() + QUIET_MS / 1000.0);
		if (got < 1)
			break;
		got += ibv_poll_cq(eb.rcq, room - 1, wc + 1);
		for (i = 0; i < got; i++)
			*ok &= check_recv(&wc[i], lo, hi);
		n += (unsigned int)got;
	}
	return n;
}

/* ---- the impairment ----------------------------------------------------- */

static bool impair_on(void)
{
	const char *d = opt.netdev;
	int i;

	if (!opt.netem && !opt.ndrop)
		return true;
	if (ns_run(opt.netns, NULL, 0, "tc qdisc add dev %s root handle 1: "
		   "prio bands 4", d))
		return false;
	if (opt.netem) {
		qdisc_head = "qdisc netem 40:";
		return !ns_run(opt.netns, NULL, 0, "tc qdisc add dev %s parent "
			       "1:4 handle 40: netem limit 100000 %s", d,
			       opt.netem) &&
		       !ns_run(opt.netns, NULL, 0, "tc filter add dev %s "
			       "parent 1: protocol ip prio 1 u32 match ip "
			       "protocol 17 0xff match ip dport 4791 0xffff "
			       "flowid 1:4", d);
	}
	qdisc_head = "qdisc prio 1:";
	/* BTH bytes 8..11 (A bit, reserved, PSN) are at IP offset 36 */
	for (i = 0; i < opt.ndrop; i++)
		if (ns_run(opt.netns, NULL, 0, "tc filter add dev %s parent 1: "
			   "protocol ip prio 1 u32 match ip protocol 17 0xff "
			   "match ip dport 4791 0xffff match u32 0x%06x "
			   "0x%06x at 36 action drop", d, opt.drop_val[i],
			   opt.drop_mask))
			return false;
	return true;
}

static bool impair_off(void)
{
	if (!*qdisc_head)
		return true;
	qdisc_head = "";
	return !ns_run(opt.netns, NULL, 0, "tc qdisc del dev %s root",
		       opt.netdev);
}

/* Under corruption the kernel drops some packets before snaa sees them. */
static bool corrupting(void)
{
	return opt.netem && strstr(opt.netem, "corrupt");
}

/* Packets B's kernel dropped before snaa saw them, since s0. */
static long long kernel_drops(const struct snap *s0, const struct snap *s1)
{
	long long n = s1->a_tx_dropped - s0->a_tx_dropped;
	unsigned int i;

	for (i = 0; i < NKERN; i++)
		n += s1->kern[i] - s0->kern[i];
	return n;
}

/* Which of kernel_drops() moved, as a diagnostic. */
static void diag_kernel_drops(const struct snap *s0, const struct snap *s1)
{
	char buf[512];
	size_t len = 0;
	unsigned int i;

	len += (size_t)snprintf(buf, sizeof(buf), "A's link tx_dropped +%lld",
				s1->a_tx_dropped - s0->a_tx_dropped);
	for (i = 0; i < NKERN && len < sizeof(buf); i++)
		if (s1->kern[i] != s0->kern[i])
			len += (size_t)snprintf(buf + len, sizeof(buf) - len,
						", %s +%lld", kern_name[i],
						s1->kern[i] - s0->kern[i]);
	vu_diag("B's kernel dropped: %s", buf);
}

/* Packets that reached B since s0: snaa's rx_packets, and under
 * corruption also drop_bad_icrc and what B's kernel dropped before. */
static long long arrived(const struct snap *s0, const struct snap *s1)
{
	long long n = s1->b_rx - s0->b_rx;

	if (corrupting())
		n += drop_of(s1, "drop_bad_icrc") -
		     drop_of(s0, "drop_bad_icrc") + kernel_drops(s0, s1);
	return n;
}

/*
 * Wait until every packet of the stream that was not dropped on the way
 * has reached B (arrived()): target packets (exact), or with netem as
 * many as it passed on, once its queue is empty.  If that never happens
 * (a packet vanished), give up after CQE_TIMEOUT: the accounting check
 * then fails.
 */
static bool quiesce(const struct snap *s0, long long target)
{
	double deadline = vu_now() + CQE_TIMEOUT;
	struct snap s;

	while (vu_now() < deadline) {
		if (!take_snap(&s, SNAP_QDISC |
			       (corrupting() ? SNAP_KERNEL : 0)))
			return false;
		if (target < 0 && s.q_backlog == 0 &&
		    arrived(s0, &s) >= s.q_sent - s0->q_sent)
			return true;
		if (target >= 0 && arrived(s0, &s) >= target)
			return true;
		vu_nap_us(50 * 1000);
	}
	vu_diag("the packets of the stream did not all arrive within %.0f s",
		CQE_TIMEOUT);
	return true;
}

/*
 * --drop-psn: the outcome of the UC rules for the packets of messages
 * first .. first + n - 1 that pass the filter, in order: which messages
 * complete, how many packets are dropped for a PSN gap or a missing
 * FIRST, how many the filter drops.
 */
struct model {
	bool *complete;			/* [s - first] */
	long long psn_gap, bad_seq, filtered;
};

static bool filtered(uint32_t psn)
{
	int i;

	for (i = 0; i < opt.ndrop; i++)
		if ((psn & opt.drop_mask) == opt.drop_val[i])
			return true;
	return false;
}

static void model_run(struct model *m, unsigned int first, unsigned int n)
{
	uint32_t psn = (PSN_A + first * PKTS) & 0xffffff;
	uint32_t epsn = psn;		/* the before phase arrived whole */
	bool in_msg = false;
	unsigned int s, k;

	memset(m->complete, 0, n * sizeof(*m->complete));
	m->psn_gap = m->bad_seq = m->filtered = 0;
	for (s = 0; s < n; s++) {
		for (k = 0; k < PKTS; k++, psn = (psn + 1) & 0xffffff) {
			bool start = k == 0, gap = psn != epsn;

			if (filtered(psn)) {
				m->filtered++;
				continue;
			}
			epsn = (psn + 1) & 0xffffff;
			if (gap || (in_msg && start)) {
				in_msg = false;
				if (!start) {
					m->psn_gap++;
					continue;
				}
			}
			if (!in_msg && !start) {
				m->bad_seq++;
				continue;
			}
			in_msg = true;
			if (k == PKTS - 1) {
				m->complete[s] = true;
				in_msg = false;
			}
		}
	}
}

/* ---- phases ------------------------------------------------------------- */

/* A clean phase: n messages from first, all delivered in order, and the
 * counters say so exactly. */
static void clean_phase(const char *phase, unsigned int first, unsigned int n)
{
	unsigned int n0 = ncomp, got, i;
	struct snap s0, s1;
	bool ok = true;

	take_snap(&s0, 0);
	ok &= send_stream(first, n);
	got = collect((int)n, first, first + n, &ok);
	if (got != n) {
		vu_diag("%u of %u receive completions within %.0f s", got, n,
			CQE_TIMEOUT);
		ok = false;
	}
	for (i = 0; i < n && ok; i++) {
		if (!done[first + i]) {
			vu_diag("message %u did not complete", first + i);
			ok = false;
		}
	}
	for (i = 0; i < n && ok; i++) {
		if (comp_msg[n0 + i] != first + i) {
			vu_diag("receive completion %u is message %u, expected "
				"%u (out of order)", n0 + i, comp_msg[n0 + i],
				first + i);
			ok = false;
		}
	}
	vu_report(ok, "%s: %u messages over the clean link all delivered, "
		  "exact data, in order", phase, n);

	ok = take_snap(&s1, 0);
	if (ok) {
		if (s1.a_tx - s0.a_tx != PKTS * n ||
		    s1.b_rx - s0.b_rx != PKTS * n) {
			vu_diag("A tx_packets +%lld, B rx_packets +%lld, "
				"expected +%u each", s1.a_tx - s0.a_tx,
				s1.b_rx - s0.b_rx, PKTS * n);
			ok = false;
		}
		ok &= drops_as_expected(&s0, &s1, NULL, 0);
	}
	vu_report(ok, "%s: A tx_packets and B rx_packets +%u, every drop "
		  "counter of B +0", phase, PKTS * n);
}

/* What the impaired phase changed, from its two snapshots. */
struct delta {
	long long a_tx, rx, gap, seq, icrc, kern;
	long long q_sent, q_dropped, q_requeues;
	unsigned int got, lost;		/* messages completed and not */
};

static void delta_of(struct delta *d, const struct snap *s0,
		     const struct snap *s1)
{
	d->a_tx = s1->a_tx - s0->a_tx;
	d->rx = s1->b_rx - s0->b_rx;
	d->gap = drop_of(s1, "drop_psn_gap") - drop_of(s0, "drop_psn_gap");
	d->seq = drop_of(s1, "drop_bad_sequence") -
		 drop_of(s0, "drop_bad_sequence");
	d->icrc = drop_of(s1, "drop_bad_icrc") - drop_of(s0, "drop_bad_icrc");
	d->kern = kernel_drops(s0, s1);
	d->q_sent = s1->q_sent - s0->q_sent;
	d->q_dropped = s1->q_dropped - s0->q_dropped;
	d->q_requeues = s1->q_requeues - s0->q_requeues;
}

/* Where every packet of the stream went; m: the model (exact), or NULL. */
static void check_accounting(const struct delta *d, const struct model *m,
			     const struct snap *s0, const struct snap *s1)
{
	const char *name = opt.name;
	long long sent = (long long)PKTS * opt.count;
	bool ok = d->a_tx == sent;

	if (!ok)
		vu_diag("A tx_packets +%lld, expected +%lld", d->a_tx, sent);
	if (m) {
		if (d->rx != sent - m->filtered || d->kern) {
			vu_diag("B rx_packets +%lld, expected %lld - %lld "
				"filtered; B's kernel dropped %lld", d->rx,
				sent, m->filtered, d->kern);
			ok = false;
		}
		vu_report(ok, "%s: B rx_packets +%lld: the %lld packets sent "
			  "less the %lld the filter dropped", name, d->rx,
			  sent, m->filtered);
	} else if (corrupting()) {
		if (d->rx + d->icrc + d->kern != d->q_sent) {
			vu_diag("netem passed on %lld packets; B counted %lld "
				"(rx_packets %lld + drop_bad_icrc %lld + "
				"kernel %lld)", d->q_sent,
				d->rx + d->icrc + d->kern, d->rx, d->icrc,
				d->kern);
			ok = false;
		}
		vu_report(ok, "%s: each of the %lld packets netem passed on "
			  "is counted once: rx_packets + drop_bad_icrc + the "
			  "link's and B's kernel drop counters", name,
			  d->q_sent);
	} else {
		if (d->rx != d->q_sent || d->kern) {
			vu_diag("netem passed on %lld packets, B rx_packets "
				"+%lld, B's kernel dropped %lld", d->q_sent,
				d->rx, d->kern);
			ok = false;
		}
		vu_report(ok, "%s: B rx_packets +%lld == the packets netem "
			  "passed on, none dropped before snaa", name, d->rx);
	}
	if (d->kern || !ok)
		diag_kernel_drops(s0, s1);
}

/*
 * netem: the damage is random; what is asserted holds but with a
 * probability too small to matter (see the top of the file).
 */
static void check_effect(const struct delta *d)
{
	const char *why = "";
	bool ok = d->gap > 0;

	if (strstr(opt.netem, "loss")) {
		ok &= d->q_dropped > 0 && d->lost > 0;
		why = "netem dropped packets, messages were lost";
	} else if (strstr(opt.netem, "reorder")) {
		ok &= d->q_requeues > 0;
		why = "netem sent packets early";
	} else if (strstr(opt.netem, "duplicate")) {
		ok &= d->q_sent > d->a_tx;
		why = "netem sent more packets than A";
	} else if (corrupting()) {
		ok &= d->icrc > 0;
		why = "drop_bad_icrc counted the corrupted packets";
	}
	vu_report(ok, "%s: the impairment took effect: %s, drop_psn_gap > 0",
		  opt.name, why);
}

static void impaired_phase(void)
{
	const char *name = opt.name;
	bool exact = !opt.netem;	/* --drop-psn or nothing: the model */
	unsigned int first = PRE, n = opt.count, i;
	struct model m = { 0 };
	struct delta d;
	struct snap s0, s1;
	bool ok;
	double t0, t1;

	if (exact) {
		m.complete = calloc(n, sizeof(*m.complete));
		if (!m.complete) {
			vu_report(false, "%s: setup (out of memory)", name);
			return;
		}
		model_run(&m, first, n);
	}
	if (!impair_on() || !take_snap(&s0, SNAP_QDISC | SNAP_KERNEL)) {
		vu_report(false, "%s: installing the impairment with tc", name);
		impair_off();
		free(m.complete);
		return;
	}
	t0 = vu_now();
	ok = send_stream(first, n);
	t1 = vu_now();
	vu_report(ok, "%s: %u send WRs complete successfully, in order", name,
		  n);

	ok = quiesce(&s0, exact ? (long long)PKTS * n - m.filtered : -1);
	ok &= take_snap(&s1, SNAP_QDISC | SNAP_KERNEL);
	ok &= impair_off();
	d.got = collect(-1, first, first + n, &ok);
	d.lost = n - d.got;
	vu_report(ok, "%s: every receive completion is a distinct message of "
		  "the stream, on the next receive WR, of full length, with "
		  "its exact data", name);
	printf("# info: %s: %u messages sent in %.1f s, settled %.1f s later; "
	       "%u completed, %u lost\n", name, n, t1 - t0, vu_now() - t1,
	       d.got, d.lost);
	if (!s1.ok)
		goto out;

	delta_of(&d, &s0, &s1);
	printf("# info: %s: A tx_packets +%lld; qdisc sent %lld, dropped "
	       "%lld, requeued %lld; B rx_packets +%lld, drop_psn_gap +%lld, "
	       "drop_bad_sequence +%lld, drop_bad_icrc +%lld; B's kernel "
	       "dropped %lld\n", name, d.a_tx, d.q_sent, d.q_dropped,
	       d.q_requeues, d.rx, d.gap, d.seq, d.icrc, d.kern);
	check_accounting(&d, exact ? &m : NULL, &s0, &s1);

	{
		struct allow allowed[] = {
			{ "drop_psn_gap", exact ? m.psn_gap : -1 },
			{ "drop_bad_sequence", exact ? m.bad_seq : -1 },
			{ "drop_bad_icrc", corrupting() ? -1 : 0 },
		};

		ok = drops_as_expected(&s0, &s1, allowed, 3);
		if (exact)
			vu_report(ok, "%s: drop_psn_gap +%lld and "
				  "drop_bad_sequence +%lld as the UC rules "
				  "predict, every other drop counter +0", name,
				  m.psn_gap, m.bad_seq);
		else
			vu_report(ok, "%s: no drop counted but drop_psn_gap, "
				  "drop_bad_sequence%s", name,
				  allowed[2].delta ? ", drop_bad_icrc" : "");
	}

	ok = d.gap + d.seq <= d.rx - (long long)PKTS * d.got;
	if (!ok)
		vu_diag("drop_psn_gap +%lld + drop_bad_sequence +%lld > "
			"rx_packets +%lld - %u x %u completed", d.gap, d.seq,
			d.rx, PKTS, d.got);
	vu_report(ok, "%s: drop_psn_gap + drop_bad_sequence <= rx_packets - "
		  "%d x completed messages", name, PKTS);

	if (exact) {
		ok = true;
		for (i = 0; i < n; i++) {
			if (m.complete[i] != done[first + i]) {
				vu_diag("message %u: %s, the UC rules say %s",
					first + i, done[first + i] ?
					"completed" : "lost", m.complete[i] ?
					"complete" : "lost");
				ok = false;
			}
		}
		vu_report(ok, "%s: exactly the messages that the UC rules "
			  "complete completed (%u of %u)", name, d.got, n);
	} else {
		check_effect(&d);
	}
out:
	free(m.complete);
}

/* What no phase may have left: stray completions, writes outside a
 * message, a WRITE slot with foreign data. */
static void final_checks(void)
{
	size_t off, len;
	unsigned int s, k;
	char what[96];
	bool ok = true;

	ok &= vu_cq_stays_empty(ea.scq, 0, "A send CQ");
	ok &= vu_cq_stays_empty(ea.rcq, 0, "A receive CQ");
	ok &= vu_cq_stays_empty(eb.scq, 0, "B send CQ");
	ok &= vu_cq_stays_empty(eb.rcq, 0, "B receive CQ");
	vu_report(ok, "no completion beyond the ones checked");

	ok = true;
	for (k = 0; k < total; k++) {
		snprintf(what, sizeof(what), "receive WR %u: bytes after the "
			 "message", k);
		ok &= vu_bytes_all(what, rbuf.p + k * stride + msg_len, POISON,
				   stride - msg_len, (long long)msg_len);
	}
	vu_report(ok, "receive buffers: nothing written beyond a message");

	ok = true;
	for (s = 0; s < total; s++) {
		const uint8_t *slot = wbuf.p + s * stride;

		snprintf(what, sizeof(what), "WRITE slot %u: after the "
			 "message", s);
		ok &= vu_bytes_all(what, slot + msg_len, POISON,
				   stride - msg_len, (long long)msg_len);
		if (!is_write(s)) {
			snprintf(what, sizeof(what), "slot %u (a SEND's)", s);
			ok &= vu_bytes_all(what, slot, POISON, msg_len, 0);
			continue;
		}
		msg_fill(want, s);
		for (off = 0; off < msg_len; off += (size_t)opt.mtu) {
			len = msg_len - off < (size_t)opt.mtu ? msg_len - off :
			      (size_t)opt.mtu;
			if (!memcmp(slot + off, want + off, len))
				continue;
			snprintf(what, sizeof(what), "WRITE slot %u, packet "
				 "%zu (%s)", s, off / (size_t)opt.mtu,
				 done[s] ? "completed" : "lost message");
			if (done[s])
				ok &= vu_bytes_eq(what, slot + off, want + off,
						  len, (long long)off);
			else
				ok &= vu_bytes_all(what, slot + off, POISON,
						   len, (long long)off);
		}
	}
	vu_report(ok, "WRITE slots: each packet's part holds its own "
		  "message's data or nothing, never another's");
}

int main(int argc, char **argv)
{
	double t0 = vu_now();
	int ret, sa, sb;

	setvbuf(stdout, NULL, _IOLBF, 0);
	parse_args(argc, argv);
	printf("KTAP version 1\n");
	printf("# uc_netem: UC A=%s -> B=%s, link impaired by: %s\n",
	       opt.a.name, opt.b.name, opt.netem ? opt.netem : opt.ndrop ?
	       "a tc u32 filter dropping PSNs" : "nothing");
	ret = setup();
	if (ret) {
		teardown();
		return ret == VU_EXIT_SKIP ? VU_EXIT_SKIP : 1;
	}

	clean_phase("before", 0, PRE);
	impaired_phase();
	sa = vu_qp_state(ea.qp);
	sb = vu_qp_state(eb.qp);
	if (sa != IBV_QPS_RTS || sb != IBV_QPS_RTS)
		vu_diag("QP states: A %s, B %s", vu_qp_state_str(sa),
			vu_qp_state_str(sb));
	vu_report(sa == IBV_QPS_RTS && sb == IBV_QPS_RTS,
		  "after: both QPs still in RTS");
	clean_phase("after", PRE + opt.count, POST);
	final_checks();

	ret = vu_ktap_finish(t0);
	impair_off();
	teardown();
	return ret;
}
