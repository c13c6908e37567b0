// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tdload - traffic for the teardown tests (teardown.sh): keeps UC traffic
 * flowing in both directions between devices A and B, checks every
 * message, and, when a device goes away underneath it (rdma link delete,
 * netdev or namespace removal, rmmod), checks that what follows fails
 * cleanly instead of hanging.
 *
 * One process holds both ends: --pairs QP pairs, each A <-> B.  Each
 * direction of a pair streams RDMA WRITE WITH IMM messages of 1 byte to
 * 64 KiB (sizes and data from a PRNG seeded with the pair, direction and
 * sequence number) into a ring of slots of the receiver's buffer; the
 * immediate is the sequence number.  The receiver checks the immediate,
 * byte_len and every byte of its slot, and reposts its receive WR.  The
 * sender never has more than half the slots outstanding.
 *
 * Optional load around it:
 *   --mmap-churn   a thread that creates and destroys CQs on both devices
 *                  all the time (every CQ is an mmap of a new ring)
 *   --churn        a thread that creates QP pairs with their CQs and MRs,
 *                  starts sends on them, and destroys everything again in
 *                  random order while the sends are in flight
 *
 * SIGUSR1 says that a teardown begins (teardown.sh sends it just before
 * it removes a device, netdev, namespace or the module).  From then on a
 * UC message may be lost on the way: QPs, routes and sockets go away in
 * an order no driver controls, and UC never retransmits.  A completion
 * whose immediate names a later message then counts the ones in between
 * as lost (reported); everything delivered is still checked byte for
 * byte, and before SIGUSR1 a lost message fails the run.
 *
 * The run ends after --seconds (0: never), on SIGTERM/SIGINT, or when a
 * device is lost: IBV_EVENT_DEVICE_FATAL on its async fd, or a verb
 * failing.  After a loss tdload checks that posting to the lost device
 * fails (an error, never a silent success), that polling its CQs returns,
 * and that every object can still be destroyed and the device closed;
 * then it prints "device lost: ..." and exits 3.
 *
 * Output: progress and a final "tdload: ..." line on stdout.
 * Exit status: 0 ran until the end with every message exact, 1 a message
 * was wrong or missing or a verb failed without a device loss, 2 usage
 * error, 3 a device was lost and everything after it failed cleanly,
 * 4 (skip) a device is missing.
 *
 * Build: make -C selftests/snaa tdload (tdload.c, verbs_util.c and
 * userspace/common/snaa_opt.c; -libverbs -lpthread)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "snaa_opt.h"
#include "verbs_util.h"

#define EXIT_LOST	3
#define SLOT		65536
#define SLOTS		16		/* per direction */
#define WINDOW		(SLOTS / 2)
#define STALL_S		20.0		/* a message that must have arrived */
#define ACCESS		(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE)

static struct {
	struct vu_dev a, b;
	unsigned int pairs;
	double seconds;
	bool mmap_churn, churn;
} opt = { .a = VU_DEV_INIT('A'), .b = VU_DEV_INIT('B'), .pairs = 4 };

static atomic_int stop;			/* signal, deadline or loss */
static atomic_int async_stop;		/* the async event thread */
static atomic_int lost;			/* a device was lost */
static atomic_int fatal[2];		/* IBV_EVENT_DEVICE_FATAL: A, B */
static atomic_int teardown;		/* SIGUSR1: UC messages may be lost */
static unsigned long lost_msgs;		/* ... and that many were */
static char lost_why[160];
static pthread_mutex_t lost_lock = PTHREAD_MUTEX_INITIALIZER;

/* One end of a pair: its QP, CQ and buffer (SLOTS receive slots, then
 * SLOTS send slots). */
struct end {
	struct vu_dev *d;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct vu_buf buf;
};

/* One direction of a pair: what was sent and what was checked. */
struct flow {
	struct end *tx, *rx;
	unsigned int pair, dir;
	uint32_t sent, done;		/* sequence numbers */
	double last_progress;
};

struct pair {
	struct end e[2];		/* 0 on A, 1 on B */
	struct flow f[2];		/* 0: A -> B, 1: B -> A */
};

static void usage(FILE *f)
{
	fprintf(f,
"Usage: tdload --dev-a NAME --dev-b NAME [--pairs N] [--seconds S]\n"
"              [--mmap-churn] [--churn]\n"
"\n"
"Keep exact UC traffic flowing both ways between RDMA devices A and B\n"
"(RDMA WRITE WITH IMM, every byte checked) until the time is up, a signal\n"
"comes, or a device is lost; after a loss, check that everything fails\n"
"cleanly.  SIGUSR1 announces a teardown: from then on a message lost on\n"
"the way is counted, not an error.  For the teardown tests (teardown.sh).\n"
"\n"
VU_PAIR_USAGE
"  --pairs N             QP pairs (default 4)\n"
"  --seconds S           run time; 0: until a signal or a loss (default 0)\n"
"  --mmap-churn          also create and destroy CQs (mmaps) all the time\n"
"  --churn               also create QPs, CQs and MRs, start sends and\n"
"                        destroy them under the sends, all the time\n"
"  --help                show this help\n"
"\n"
"Exit status: 0 ran to the end, every message exact; 1 a message wrong or\n"
"missing, or a verb failed with no device lost; 2 usage error; 3 a device\n"
"was lost and everything after it failed cleanly; 4 a device is missing.\n");
}

static void parse_args(int argc, char **argv)
{
	enum { O_PAIRS = VU_OPT_NEXT, O_SECONDS, O_MMAP_CHURN, O_CHURN };
	static const struct option lopts[] = {
		VU_PAIR_OPTIONS,
		{ "pairs", required_argument, NULL, O_PAIRS },
		{ "seconds", required_argument, NULL, O_SECONDS },
		{ "mmap-churn", no_argument, NULL, O_MMAP_CHURN },
		{ "churn", no_argument, NULL, O_CHURN },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
		switch (c) {
		case O_PAIRS:
			opt.pairs = (unsigned int)opt_int("--pairs", optarg, 1,
							  256);
			break;
		case O_SECONDS:
			opt.seconds = (double)opt_int("--seconds", optarg, 0,
						      86400);
			break;
		case O_MMAP_CHURN:
			opt.mmap_churn = true;
			break;
		case O_CHURN:
			opt.churn = true;
			break;
		default:
			if (!vu_pair_option(c, optarg, &opt.a, &opt.b))
				opt_help_or_error(c, argv, usage);
		}
	}
	opt_no_operands(argc, argv);
	vu_pair_options_check(&opt.a, &opt.b);
}

/* Record the first loss and stop everything. */
static void device_lost(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
static void device_lost(const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&lost_lock);
	if (!atomic_load(&lost)) {
		va_start(ap, fmt);
		vsnprintf(lost_why, sizeof(lost_why), fmt, ap);
		va_end(ap);
		atomic_store(&lost, 1);
	}
	pthread_mutex_unlock(&lost_lock);
	atomic_store(&stop, 1);
}

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		atomic_store(&teardown, 1);
	else
		atomic_store(&stop, 1);
}

/* ---- async events --------------------------------------------------------- */

static void *async_thread(void *arg)
{
	struct vu_dev *devs = arg;
	struct pollfd pfd[2];
	int i;

	for (i = 0; i < 2; i++) {
		int fl = fcntl(devs[i].ctx->async_fd, F_GETFL);

		fcntl(devs[i].ctx->async_fd, F_SETFL, fl | O_NONBLOCK);
		pfd[i].fd = devs[i].ctx->async_fd;
		pfd[i].events = POLLIN;
	}
	while (!atomic_load(&async_stop)) {
		if (poll(pfd, 2, 100) <= 0)
			continue;
		for (i = 0; i < 2; i++) {
			struct ibv_async_event ev;

			if (!(pfd[i].revents & POLLIN) ||
			    ibv_get_async_event(devs[i].ctx, &ev))
				continue;
			if (ev.event_type == IBV_EVENT_DEVICE_FATAL) {
				atomic_store(&fatal[i], 1);
				device_lost("%s: IBV_EVENT_DEVICE_FATAL",
					    devs[i].name);
			}
			else
				printf("tdload: %s: async event %s\n",
				       devs[i].name,
				       ibv_event_type_str(ev.event_type));
			ibv_ack_async_event(&ev);
		}
	}
	return NULL;
}

/* ---- the checked traffic -------------------------------------------------- */

static uint32_t msg_len(const struct flow *f, uint32_t seq)
{
	uint64_t s = (uint64_t)f->pair << 40 | (uint64_t)f->dir << 32 | seq;

	return (uint32_t)(vu_splitmix64(&s) % SLOT) + 1;
}

static uint64_t msg_seed(const struct flow *f, uint32_t seq)
{
	return 0x7d10ad0000000000ULL ^ (uint64_t)f->pair << 33 ^
	       (uint64_t)f->dir << 32 ^ seq;
}

static int post_recv(struct end *e, uint32_t slot)
{
	struct ibv_recv_wr wr = { .wr_id = slot }, *bad;

	return ibv_post_recv(e->qp, &wr, &bad);
}

static int post_msg(struct flow *f)
{
	uint32_t seq = f->sent, slot = seq % SLOTS, len = msg_len(f, seq);
	uint8_t *src = f->tx->buf.p + (size_t)(SLOTS + slot) * SLOT;
	struct ibv_sge sge = {
		.addr = (uintptr_t)src, .length = len,
		.lkey = f->tx->buf.mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = seq, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
		.send_flags = IBV_SEND_SIGNALED,
		.imm_data = htonl(seq),
		.wr.rdma = {
			.remote_addr = (uintptr_t)f->rx->buf.p +
				       (uint64_t)slot * SLOT,
			.rkey = f->rx->buf.mr->rkey,
		},
	}, *bad;

	/*
	 * Send slot seq % SLOTS was last used by message seq - SLOTS, which
	 * has arrived (no more than WINDOW are outstanding).
	 */
	vu_fill_prng(src, len, msg_seed(f, seq));
	return ibv_post_send(f->tx->qp, &wr, &bad);
}

/*
 * A receive completion of flow f: the next message, or, once a teardown
 * has begun, a later one (the ones in between lost on the way, counted).
 * Its immediate, length and every byte must be the message's.
 */
static bool check_recv(struct flow *f, const struct ibv_wc *wc)
{
	uint32_t seq = f->done, imm = ntohl(wc->imm_data), len;
	uint8_t *want, *got;
	bool ok;

	/* No more than WINDOW messages are outstanding. */
	if (wc->status == IBV_WC_SUCCESS && atomic_load(&teardown) &&
	    imm - seq < WINDOW && imm - seq < f->sent - seq) {
		lost_msgs += imm - seq;
		f->done = seq = imm;
	}
	len = msg_len(f, seq);
	want = malloc(len);
	if (!want)
		return false;
	got = f->rx->buf.p + (size_t)(seq % SLOTS) * SLOT;
	vu_fill_prng(want, len, msg_seed(f, seq));
	ok = wc->status == IBV_WC_SUCCESS &&
	     wc->opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
	     (wc->wc_flags & IBV_WC_WITH_IMM) && imm == seq &&
	     wc->byte_len == len && !memcmp(got, want, len);
	if (!ok)
		fprintf(stderr, "tdload: pair %u %s message %u: status %s, "
			"imm %u, byte_len %u (want %u), data %s%s\n", f->pair,
			f->dir ? "B->A" : "A->B", seq,
			ibv_wc_status_str(wc->status), imm, wc->byte_len, len,
			memcmp(got, want, len) ? "wrong" : "right",
			atomic_load(&teardown) ? "" :
			" (no teardown announced: nothing may be lost)");
	free(want);
	return ok;
}

/* A verb failed: a loss if a device is gone, else an error. */
static int verb_failed(const char *what, int err)
{
	if (atomic_load(&lost) || err == EIO || err == ENODEV) {
		device_lost("%s failed: %s", what, strerror(err));
		return 0;
	}
	fprintf(stderr, "tdload: %s failed: %s\n", what, strerror(err));
	return -1;
}

static int open_end(struct end *e, struct vu_dev *d)
{
	struct ibv_qp_cap cap = { SLOTS, SLOTS, 1, 1, 0 };

	e->d = d;
	e->cq = ibv_create_cq(d->ctx, 4 * SLOTS, NULL, NULL, 0);
	if (!e->cq)
		return errno;
	if (vu_buf_alloc(&e->buf, d->pd, (size_t)2 * SLOTS * SLOT, ACCESS, 0))
		return ENOMEM;
	e->qp = vu_qp_create(d->pd, IBV_QPT_UC, e->cq, e->cq, &cap);
	return e->qp ? 0 : errno;
}

static int open_pair(struct pair *p, unsigned int idx)
{
	struct vu_qp_end qa, qb;
	const char *step;
	uint32_t i;
	int ret, k;

	memset(p, 0, sizeof(*p));
	if ((ret = open_end(&p->e[0], &opt.a)) ||
	    (ret = open_end(&p->e[1], &opt.b)))
		return ret;
	qa = (struct vu_qp_end){ p->e[0].qp, &opt.a, 0x10 * idx, 0x800 };
	qb = (struct vu_qp_end){ p->e[1].qp, &opt.b, 0x800, 0x10 * idx };
	ret = vu_qp_connect(&qa, &qb, vu_path_mtu(&opt.a, &opt.b), ACCESS,
			    &step);
	if (!ret)
		ret = vu_qp_connect(&qb, &qa, vu_path_mtu(&opt.a, &opt.b),
				    ACCESS, &step);
	if (ret)
		return ret;
	for (k = 0; k < 2; k++) {
		p->f[k] = (struct flow){ .tx = &p->e[k], .rx = &p->e[1 - k],
					 .pair = idx, .dir = (unsigned int)k,
					 .last_progress = vu_now() };
		for (i = 0; i < SLOTS; i++)
			if ((ret = post_recv(&p->e[k], i)))
				return ret;
	}
	return 0;
}

static void close_end(struct end *e)
{
	if (e->qp && ibv_destroy_qp(e->qp))
		fprintf(stderr, "tdload: ibv_destroy_qp: %s\n", strerror(errno));
	vu_buf_free(&e->buf);
	if (e->cq && ibv_destroy_cq(e->cq))
		fprintf(stderr, "tdload: ibv_destroy_cq: %s\n", strerror(errno));
	memset(e, 0, sizeof(*e));
}

/* Poll one end's CQ: send completions, and receives for its flow in. */
static int poll_end(struct pair *p, int k)
{
	struct end *e = &p->e[k];
	struct flow *in = &p->f[1 - k];
	struct ibv_wc wc[16];
	int n, i, ret;

	n = ibv_poll_cq(e->cq, 16, wc);
	if (n < 0)
		return verb_failed("ibv_poll_cq", EIO);
	for (i = 0; i < n; i++) {
		if (wc[i].opcode == IBV_WC_RDMA_WRITE &&
		    wc[i].status == IBV_WC_SUCCESS)
			continue;
		if (wc[i].status == IBV_WC_WR_FLUSH_ERR && atomic_load(&lost))
			continue;
		if (!(wc[i].opcode & IBV_WC_RECV) || !check_recv(in, &wc[i]))
			return -1;
		in->done++;
		in->last_progress = vu_now();
		ret = post_recv(e, (uint32_t)wc[i].wr_id);
		if (ret)
			return verb_failed("ibv_post_recv", ret);
	}
	return 0;
}

static int traffic(struct pair *pairs)
{
	double end = opt.seconds ? vu_now() + opt.seconds : 0;
	unsigned int i;
	int k, ret;

	while (!atomic_load(&stop)) {
		if (end && vu_now() > end)
			break;
		for (i = 0; i < opt.pairs; i++) {
			struct pair *p = &pairs[i];

			for (k = 0; k < 2; k++) {
				struct flow *f = &p->f[k];

				if (f->sent - f->done < WINDOW) {
					ret = post_msg(f);
					if (ret)
						return verb_failed("ibv_post_send",
								   ret);
					f->sent++;
				}
				if (poll_end(p, k))
					return -1;
				if (f->sent != f->done &&
				    vu_now() - f->last_progress > STALL_S &&
				    !atomic_load(&stop)) {
					fprintf(stderr, "tdload: pair %u %s: "
						"message %u not delivered within "
						"%.0f s\n", i,
						k ? "B->A" : "A->B", f->done,
						STALL_S);
					return -1;
				}
			}
		}
	}
	return 0;
}

/* ---- churn ------------------------------------------------------------------ */

static void *mmap_churn_thread(void *arg)
{
	struct vu_dev *devs = arg;
	unsigned long n = 0;
	uint64_t s = 1;

	while (!atomic_load(&stop)) {
		struct vu_dev *d = &devs[n++ & 1];
		struct ibv_cq *cq = ibv_create_cq(d->ctx,
						  64 << (vu_splitmix64(&s) % 7),
						  NULL, NULL, 0);

		if (cq)
			ibv_destroy_cq(cq);
		else
			vu_nap_us(1000);	/* device going away */
	}
	printf("tdload: mmap churn: %lu CQs\n", n);
	return NULL;
}

/* A pair whose objects go away in random order under its sends. */
static void *churn_thread(void *arg)
{
	struct vu_dev *devs = arg;
	unsigned long rounds = 0;
	uint64_t s = 2;

	(void)devs;
	while (!atomic_load(&stop)) {
		struct pair p;
		int j, order;

		if (open_pair(&p, 1000 + (unsigned int)(rounds & 0xff))) {
			close_end(&p.e[0]);
			close_end(&p.e[1]);
			vu_nap_us(1000);
			continue;
		}
		for (j = 0; j < WINDOW; j++) {
			if (post_msg(&p.f[0]) || post_msg(&p.f[1]))
				break;
			p.f[0].sent++;
			p.f[1].sent++;
		}
		order = (int)(vu_splitmix64(&s) % 4);
		/* receiver first, sender first, MRs before QPs, ... */
		if (order & 1) {
			close_end(&p.e[1]);
			close_end(&p.e[0]);
		} else {
			if (order & 2) {
				vu_buf_free(&p.e[0].buf);
				vu_buf_free(&p.e[1].buf);
			}
			close_end(&p.e[0]);
			close_end(&p.e[1]);
		}
		rounds++;
	}
	printf("tdload: churn: %lu QP pairs destroyed under their sends\n",
	       rounds);
	return NULL;
}

/* ---- after a loss ---------------------------------------------------------- */

/*
 * A device is gone (IBV_EVENT_DEVICE_FATAL): posting to it must fail (an
 * error, not a silent success) and polling must return.  The other
 * device may well be alive.  Everything must be destroyable afterwards.
 */
static int after_loss(struct pair *pairs)
{
	unsigned int i, failed = 0, tried = 0;
	int k, bad = 0;

	for (i = 0; i < opt.pairs; i++) {
		for (k = 0; k < 2; k++) {
			struct flow *f = &pairs[i].f[k];
			struct ibv_wc wc;
			int n;

			if (!f->tx->qp || !atomic_load(&fatal[k]))
				continue;
			/* Once the device is gone no post can succeed. */
			if (post_msg(f))
				failed++;
			tried++;
			n = ibv_poll_cq(f->tx->cq, 1, &wc);
			if (n > 0 && wc.status == IBV_WC_SUCCESS &&
			    wc.opcode == IBV_WC_RDMA_WRITE && wc.wr_id == f->sent)
				bad++;	/* the post after the loss completed */
		}
	}
	printf("tdload: after the loss: %u of %u posts to %s%s%s failed\n",
	       failed, tried, atomic_load(&fatal[0]) ? opt.a.name : "",
	       atomic_load(&fatal[0]) && atomic_load(&fatal[1]) ? " and " : "",
	       atomic_load(&fatal[1]) ? opt.b.name : "");
	return bad;
}

int main(int argc, char **argv)
{
	struct pair *pairs = NULL;
	pthread_t at, mt, ct;
	struct vu_dev devs[2];
	bool mt_on = false, ct_on = false;
	unsigned long total = 0;
	unsigned int i;
	int ret, rc = 1;
	double t0 = vu_now();

	setvbuf(stdout, NULL, _IOLBF, 0);
	parse_args(argc, argv);
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	signal(SIGUSR1, on_signal);
	signal(SIGPIPE, SIG_IGN);

	ret = vu_dev_open(&opt.a);
	if (!ret)
		ret = vu_dev_open(&opt.b);
	if (ret)
		return ret == VU_EXIT_SKIP ? VU_EXIT_SKIP : 1;

	pairs = calloc(opt.pairs, sizeof(*pairs));
	if (!pairs)
		return 1;
	for (i = 0; i < opt.pairs; i++) {
		ret = open_pair(&pairs[i], i);
		if (ret) {
			fprintf(stderr, "tdload: pair %u: %s\n", i,
				strerror(ret));
			goto out;
		}
	}
	devs[0] = opt.a;
	devs[1] = opt.b;
	pthread_create(&at, NULL, async_thread, devs);
	if (opt.mmap_churn)
		mt_on = !pthread_create(&mt, NULL, mmap_churn_thread, devs);
	if (opt.churn)
		ct_on = !pthread_create(&ct, NULL, churn_thread, devs);
	printf("tdload: %u QP pairs %s <-> %s running%s%s\n", opt.pairs,
	       opt.a.name, opt.b.name, opt.mmap_churn ? ", mmap churn" : "",
	       opt.churn ? ", churn" : "");

	ret = traffic(pairs);
	atomic_store(&stop, 1);
	/* A verb may have failed before the device's fatal event came. */
	if (atomic_load(&lost)) {
		double until = vu_now() + 10;

		while (!atomic_load(&fatal[0]) && !atomic_load(&fatal[1]) &&
		       vu_now() < until)
			vu_nap_us(10000);
	}
	atomic_store(&async_stop, 1);
	pthread_join(at, NULL);
	if (mt_on)
		pthread_join(mt, NULL);
	if (ct_on)
		pthread_join(ct, NULL);
	for (i = 0; i < opt.pairs; i++)
		total += pairs[i].f[0].done + pairs[i].f[1].done;

	if (atomic_load(&lost)) {
		double t = vu_now();

		if (!atomic_load(&fatal[0]) && !atomic_load(&fatal[1])) {
			fprintf(stderr, "tdload: %s, but no device reported "
				"IBV_EVENT_DEVICE_FATAL within 10 s\n",
				lost_why);
			goto out;
		}
		if (after_loss(pairs)) {
			fprintf(stderr, "tdload: a post after the device loss "
				"completed successfully\n");
			goto out;
		}
		for (i = 0; i < opt.pairs; i++) {
			close_end(&pairs[i].e[0]);
			close_end(&pairs[i].e[1]);
		}
		vu_dev_close(&opt.a);
		vu_dev_close(&opt.b);
		printf("tdload: device lost: %s; %lu messages exact before it "
		       "(%lu lost on the way after the teardown began); "
		       "cleanup took %.1f s\n", lost_why, total - lost_msgs,
		       lost_msgs, vu_now() - t);
		free(pairs);
		return EXIT_LOST;
	}
	if (!ret) {
		printf("tdload: %lu messages exact in %.1f s\n",
		       total - lost_msgs, vu_now() - t0);
		rc = 0;
	}
out:
	if (pairs)
		for (i = 0; i < opt.pairs; i++) {
			close_end(&pairs[i].e[0]);
			close_end(&pairs[i].e[1]);
		}
	free(pairs);
	vu_dev_close(&opt.a);
	vu_dev_close(&opt.b);
	return rc;
}
