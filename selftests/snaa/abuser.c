// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * abuser - a hostile verbs process for abuse.sh: it does everything a
 * misbehaving (unprivileged) process can do to an snaa device through
 * libibverbs, the uverbs file and the rings mapped from it, and checks
 * that all it ever gets back are ordinary errors.
 *
 * A pseudo-random sequence (splitmix64, --seed) of actions runs for
 * --iterations steps or --seconds, whichever ends first, on up to three
 * contexts of the device(s) (--dev, --dev2):
 *
 *  objects   PDs; MRs on pool memory at odd offsets and lengths, on
 *            read-only memory (the zero page and a memfd), on unmapped
 *            and PROT_NONE memory, on the rings themselves, of length 0
 *            and huge lengths, with odd IOVAs and access flags; CQs of
 *            every size (also 0 and above the limit), resized; UC, RC
 *            and UD QPs (and RAW, XRC and garbage types, which must
 *            be refused) with caps at and over
 *            the limits; AHs with random paths; destroyed in random
 *            order, also while in use, contexts closed with everything
 *            still alive (and their rings still mapped, or not)
 *  states    modify_qp with random states, masks and attribute values,
 *            lying IBV_QP_CUR_STATE; and the valid RESET -> INIT -> RTR
 *            -> RTS connection to another of its QPs (same or other
 *            device), so that there is real traffic to disturb
 *  posting   ibv_post_send/ibv_post_recv chains with garbage WRs: bad
 *            lkeys and rkeys, lengths, SGE counts, opcodes, flags,
 *            inline sizes; to QPs in every state
 *  rings     the rings are found in /proc/self/maps (the mappings of
 *            /dev/infiniband/uverbs*: each new one after a create is the
 *            object's ring; an SQ starts with SNAA_RING_F_IDLE set, an
 *            RQ without); it writes garbage and half-valid WQEs into the
 *            SQ/RQ slots, moves producer and consumer indices backwards,
 *            past the end, to random values, flips the flags word and
 *            random bytes, corrupts CQ rings (consumer, producer, CQEs);
 *            then rings the raw doorbell ioctl on cmd_fd (SQ and RQ,
 *            also for foreign, stale and random QPNs, with reserved
 *            bits, broken headers and attributes) or posts through
 *            ibv_post_*, and writes the POST_SEND/POST_RECV commands
 *            that snaa refuses (with garbage WR lists, bad response
 *            pointers, stale, foreign and random handles);
 *            maps rings a second
 *            time, with the wrong size, MAP_PRIVATE, at random keys
 *  commands  raw destroy commands with stale handles (an object destroyed
 *            twice, or a new object that reused the handle), raw
 *            RESIZE_CQ behind the provider's back, garbage commands
 *  storms    every --storm-every steps, --threads threads post (valid
 *            and invalid WRs), ring raw doorbells, scribble on the ring
 *            headers, poll, modify and resize (raw, concurrently) on the
 *            same few QPs and CQs, while another thread moves them
 *            through ERR/RESET and destroys them (raw commands); every
 *            other storm is one of memory windows (abuser_mw.c): threads
 *            post unsignaled BIND_MW/LOCAL_INV pairs without a pause on
 *            a loopback RC pair while another deallocates the windows
 *            under the binds and moves the QPs; afterwards the MR must
 *            deregister
 *  foreign   with --victim-info (written by abuse_victim): SENDs gathered
 *            from, receives scattered into and WRITEs aimed at the
 *            victim's canary with the victim's keys, from its own QPs,
 *            after the sequence
 *  probes    before the sequence: the flush chase (--chase: a thread
 *            keeps refilling the SQ of a QP in ERR while raw doorbells
 *            make the kernel flush it) and the resize race
 *            (--resize-race: raw RESIZE_CQ on one CQ from several
 *            threads at once; the core holds only a shared lock for it)
 *            and, with --loopback-victim, the loopback intruder: QPs of
 *            its own name another user's loopback QPs and the PSNs
 *            "rdma resource show qp" shows for them, and send
 * *
 * At the end it tears down in a random way (destroy everything in random
 * order, close the contexts with everything alive, or just exit).  It
 * can be killed at any moment.
 *
 * What it checks (KTAP):
 *   1  every verb and every raw command returned success or an ordinary
 *      errno value (1..133; not a negative, not a kernel-internal code
 *      such as ENOTSUPP 524), ibv_post_* set *bad_wr into the chain
 *   2  calls that cannot succeed (documented limits, unmapped memory,
 *      MAP_PRIVATE rings, ...) failed
 *   3  every completion polled from a CQ whose ring it did not corrupt is
 *      well formed: a QP number of its own, a valid status, a wr_id it
 *      posted (all its wr_ids carry a tag)
 *   4  no call took longer than --slow-limit seconds (a watchdog also
 *      reports a call stuck for --hang-limit seconds and exits)
 *   5  the read-only memory it registered is unchanged
 *   6  the victim's keys were refused (SKIP without --victim-info)
 *   7  afterwards a fresh context on --dev still carries a SEND exactly
 *   8  the flush chase: a doorbell flushes at most what the SQ can hold
 *      (num entries), and nothing is flushed without one
 *   9  every packet of the loopback intruder was dropped and counted in
 *      drop_bad_address (SKIP without --loopback-victim)
 *
 * --self-test makes a check fail on purpose: "foreign" uses its own keys
 * as the victim's (check 6 must fail), "slow" makes one call slow
 * (check 4 must fail).
 *
 * Exit status: 0 iff every check passed, 1 otherwise, 2 usage error,
 * 4 (kselftest SKIP) if the device is missing.
 *
 * Build: make -C selftests/snaa abuser (abuser*.c, abuser.h, verbs_util.c,
 * userspace/common/snaa_opt.c, the snaa uapi header; -pthread -libverbs)
 */
#define _GNU_SOURCE

#include "abuser.h"

/* ------------------------------------------------------------------ */
/* Options                                                             */
/* ------------------------------------------------------------------ */

struct abuser_opt opt = {
	.seed = 1, .iterations = 3000, .seconds = 60, .threads = 4,
	.storm_every = 400, .storm_secs = 1.5, .slow_limit = 20,
	.hang_limit = 90, .chase_secs = 5, .race_secs = 2,
};

static void usage(FILE *f)
{
	fprintf(f,
"Usage: abuser --dev NAME [--dev2 NAME] [--seed N] [--iterations N]\n"
"              [--seconds S] [--threads N] [--storm-every N]\n"
"              [--storm-ms MS] [--slow-limit S] [--hang-limit S]\n"
"              [--victim-info FILE] [--loopback-victim FILE]\n"
"              [--chase S] [--resize-race S]\n"
"              [--self-test foreign|slow]\n"
"              [--verbose] [--help]\n"
"\n"
"A hostile verbs process: random (also invalid) verbs, garbage written\n"
"into its own mapped SQ/RQ/CQ rings, raw doorbells and commands on the\n"
"uverbs file, concurrent posting while QPs are modified and destroyed.\n"
"Checks that every failure is an ordinary error.  Output is KTAP.\n"
"\n"
"  --dev NAME          the snaa device to abuse (port 1, RoCE v2 IPv4 GID)\n"
"  --dev2 NAME         a second device: contexts and peers there too\n"
"  --seed N            PRNG seed (default 1); the same seed and\n"
"                      --iterations give the same single-threaded steps\n"
"  --iterations N      steps of the random sequence (default 3000)\n"
"  --seconds S         stop the sequence after S seconds (default 60;\n"
"                      the probes come on top)\n"
"  --threads N         posting threads in a storm (default 4, 1..%d)\n"
"  --storm-every N     a concurrency storm every N steps (default 400;\n"
"                      0: none)\n"
"  --storm-ms MS       length of a storm (default 1500)\n"
"  --slow-limit S      a call longer than S seconds fails check 4\n"
"                      (default 20)\n"
"  --hang-limit S      a call stuck for S seconds: report and exit\n"
"                      (default 90)\n"
"  --victim-info FILE  abuse_victim's --info-file: aim at its keys\n"
"  --loopback-victim FILE  the --info-file of an abuse_victim whose QPs\n"
"                      are both on --dev or --dev2: inject into that\n"
"                      loopback connection with the PSNs \"rdma\" shows\n"
"  --chase S           flush chase: refill an SQ in ERR for up to S s\n"
"                      while the kernel flushes it (default 5; 0: off)\n"
"  --resize-race S     raw RESIZE_CQ from --threads threads on one CQ\n"
"                      for S s (default 2; 0: off)\n"
"  --self-test WHAT    make a check fail on purpose: foreign, slow\n"
"  --verbose           print every unexpected-but-ordinary outcome\n"
"  --help              show this help\n", NTHREADS_MAX - 2);
}

static void parse_args(int argc, char **argv)
{
	enum { O_DEV = 256, O_DEV2, O_SEED, O_ITER, O_SECS, O_THREADS,
	       O_STORM, O_STORM_MS, O_SLOW, O_HANG, O_VICTIM, O_SELF,
	       O_VERBOSE, O_CHASE, O_RACE, O_LOOPBACK };
	static const struct option lopts[] = {
		{ "dev", required_argument, NULL, O_DEV },
		{ "dev2", required_argument, NULL, O_DEV2 },
		{ "seed", required_argument, NULL, O_SEED },
		{ "iterations", required_argument, NULL, O_ITER },
		{ "seconds", required_argument, NULL, O_SECS },
		{ "threads", required_argument, NULL, O_THREADS },
		{ "storm-every", required_argument, NULL, O_STORM },
		{ "storm-ms", required_argument, NULL, O_STORM_MS },
		{ "slow-limit", required_argument, NULL, O_SLOW },
		{ "hang-limit", required_argument, NULL, O_HANG },
		{ "victim-info", required_argument, NULL, O_VICTIM },
		{ "loopback-victim", required_argument, NULL, O_LOOPBACK },
		{ "self-test", required_argument, NULL, O_SELF },
		{ "verbose", no_argument, NULL, O_VERBOSE },
		{ "chase", required_argument, NULL, O_CHASE },
		{ "resize-race", required_argument, NULL, O_RACE },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
		switch (c) {
		case O_DEV: opt.dev[0] = optarg; break;
		case O_DEV2: opt.dev[1] = optarg; break;
		case O_SEED: opt.seed = opt_u64("--seed", optarg, UINT64_MAX);
			break;
		case O_ITER:
			opt.iterations = opt_u64("--iterations", optarg,
						 100000000);
			break;
		case O_SECS:
			opt.seconds = (double)opt_long("--seconds", optarg, 1,
						       86400);
			break;
		case O_THREADS:
			opt.threads = opt_int("--threads", optarg, 1,
					      NTHREADS_MAX - 2);
			break;
		case O_STORM:
			opt.storm_every = opt_u64("--storm-every", optarg,
						  100000000);
			break;
		case O_STORM_MS:
			opt.storm_secs = opt_long("--storm-ms", optarg, 10,
						  600000) / 1000.0;
			break;
		case O_SLOW:
			opt.slow_limit = (double)opt_long("--slow-limit",
							  optarg, 1, 3600);
			break;
		case O_HANG:
			opt.hang_limit = (double)opt_long("--hang-limit",
							  optarg, 2, 86400);
			break;
		case O_VICTIM: opt.victim_info = optarg; break;
		case O_LOOPBACK: opt.loopback_victim = optarg; break;
		case O_SELF:
			if (strcmp(optarg, "foreign") && strcmp(optarg, "slow"))
				opt_usage_error("--self-test: want foreign or "
						"slow, not '%s'", optarg);
			opt.self_test = optarg;
			break;
		case O_VERBOSE: opt.verbose = true; break;
		case O_CHASE:
			opt.chase_secs = (double)opt_long("--chase", optarg, 0,
							  3600);
			break;
		case O_RACE:
			opt.race_secs = (double)opt_long("--resize-race", optarg,
							 0, 86400);
			break;
		default:
			opt_help_or_error(c, argv, usage);
		}
	}
	opt_no_operands(argc, argv);
	if (!opt.dev[0])
		opt_usage_error("--dev is required");
	opt.ndev = opt.dev[1] ? 2 : 1;
}

/* ------------------------------------------------------------------ */
/* Random numbers, per thread                                          */
/* ------------------------------------------------------------------ */

struct thr thr_slot[NTHREADS_MAX];
_Thread_local struct thr *me;

uint64_t rnd(void)
{
	return vu_splitmix64(&me->rng);
}

uint32_t rn(uint32_t n)
{
	return n ? (uint32_t)(rnd() % n) : 0;
}

bool chance(unsigned int pct)
{
	return rn(100) < pct;
}

uint32_t pick_u32(const uint32_t *v, size_t n)
{
	return v[rn((uint32_t)n)];
}

/* ------------------------------------------------------------------ */
/* Outcome bookkeeping                                                 */
/* ------------------------------------------------------------------ */

atomic_ulong st_calls, st_ok, st_err, st_bad, st_mustfail,
	st_mustfail_bad, st_cqes, st_cqe_bad, st_cqe_unchecked, st_ring_writes,
	st_doorbells, st_slow, st_storms, st_ctx_closed, st_killed,
	st_mw_storms, st_mw_pairs;
atomic_ulong st_errno[ERRNO_MAX + 2];
pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
double slowest;
char slowest_name[64];
atomic_int bad_printed;

__attribute__((format(printf, 1, 2)))
void bad(const char *fmt, ...)
{
	va_list ap;

	if (atomic_fetch_add(&bad_printed, 1) >= BAD_PRINT_MAX)
		return;
	pthread_mutex_lock(&out_lock);
	printf("# BAD: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	pthread_mutex_unlock(&out_lock);
}

__attribute__((format(printf, 1, 2)))
void info(const char *fmt, ...)
{
	va_list ap;

	if (!opt.verbose)
		return;
	pthread_mutex_lock(&out_lock);
	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	pthread_mutex_unlock(&out_lock);
}

static long long now_ns(void)
{
	return (long long)(vu_now() * 1e9);
}

double call_begin(const char *name)
{
	me->since_ns = now_ns();
	me->op = name;
	return vu_now();
}

void call_end(const char *name, double t0)
{
	double dt = vu_now() - t0;

	me->op = NULL;
	if (dt > slowest) {
		pthread_mutex_lock(&out_lock);
		if (dt > slowest) {
			slowest = dt;
			snprintf(slowest_name, sizeof(slowest_name), "%s", name);
		}
		pthread_mutex_unlock(&out_lock);
	}
	if (dt > opt.slow_limit) {
		atomic_fetch_add(&st_slow, 1);
		bad("%s took %.1f s (limit %.0f s)", name, dt, opt.slow_limit);
	}
}

/* Outcomes per call name (the name strings are literals). */
#define NAMES_MAX	96
static struct {
	const char *name;
	atomic_ulong n, ok;
	atomic_ulong err[ERRNO_MAX + 2];
} per_name[NAMES_MAX];
static int n_names;

static void count_name(const char *name, int ret)
{
	int i, e = ret == 0 ? 0 : ret > 0 && ret <= ERRNO_MAX ? ret :
		   ERRNO_MAX + 1;

	for (i = 0; i < n_names; i++)
		if (per_name[i].name == name)
			break;
	if (i == n_names) {
		pthread_mutex_lock(&out_lock);
		for (i = 0; i < n_names; i++)
			if (per_name[i].name == name)
				break;
		if (i == n_names && n_names < NAMES_MAX)
			per_name[n_names++].name = name;
		pthread_mutex_unlock(&out_lock);
		if (i == NAMES_MAX)
			return;
	}
	atomic_fetch_add(&per_name[i].n, 1);
	if (e)
		atomic_fetch_add(&per_name[i].err[e], 1);
	else
		atomic_fetch_add(&per_name[i].ok, 1);
}

/* Count an outcome: 0 (success) or an errno value. */
int outcome(const char *name, int ret, bool must_fail)
{
	count_name(name, ret);
	atomic_fetch_add(&st_calls, 1);
	if (must_fail)
		atomic_fetch_add(&st_mustfail, 1);
	if (ret == 0) {
		atomic_fetch_add(&st_ok, 1);
		if (must_fail) {
			atomic_fetch_add(&st_mustfail_bad, 1);
			bad("%s succeeded, but it cannot", name);
		}
	} else if (ret > 0 && ret <= ERRNO_MAX) {
		atomic_fetch_add(&st_err, 1);
		atomic_fetch_add(&st_errno[ret], 1);
		info("%s: %s", name, strerror(ret));
	} else {
		atomic_fetch_add(&st_bad, 1);
		atomic_fetch_add(&st_errno[ERRNO_MAX + 1], 1);
		bad("%s returned %d: not an errno value", name, ret);
	}
	return ret;
}

/* A verb that returns 0 or an errno value. */
int chk(const char *name, double t0, int ret, bool must_fail)
{
	call_end(name, t0);
	return outcome(name, ret, must_fail);
}

/* A verb that returns an object, or NULL with errno set. */
void *chk_ptr(const char *name, double t0, void *p, int err,
		     bool must_fail)
{
	call_end(name, t0);
	if (!p && err == 0) {
		atomic_fetch_add(&st_calls, 1);
		atomic_fetch_add(&st_bad, 1);
		bad("%s returned NULL with errno 0", name);
		return NULL;
	}
	outcome(name, p ? 0 : err, must_fail);
	return p;
}

/* ------------------------------------------------------------------ */
/* Watchdog and crash handler                                          */
/* ------------------------------------------------------------------ */

static void crash_handler(int sig)
{
	char buf[256];
	const char *op = me ? atomic_load(&me->op) : NULL;
	int n;

	n = snprintf(buf, sizeof(buf), "# BAD: signal %d (%s) in thread %d "
		     "during %s\nnot ok 99 - abuser crashed\n", sig,
		     strsignal(sig), me ? me->id : -1, op ? op : "(no call)");
	if (n > 0)
		(void)!write(STDOUT_FILENO, buf, (size_t)n);
	_exit(1);
}

static void *watchdog(void *arg)
{
	int i;

	(void)arg;
	for (;;) {
		sleep(1);
		for (i = 0; i < NTHREADS_MAX; i++) {
			const char *op = atomic_load(&thr_slot[i].op);
			long long t = atomic_load(&thr_slot[i].since_ns);

			if (op && now_ns() - t > (long long)(opt.hang_limit *
							     1e9)) {
				printf("# BAD: thread %d stuck in %s for %.0f "
				       "s\nnot ok 99 - a call hung\n", i, op,
				       (now_ns() - t) / 1e9);
				fflush(stdout);
				_exit(1);
			}
		}
	}
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Teardown                                                            */
/* ------------------------------------------------------------------ */

static void destroy_all(struct actx *c)
{
	int pass, i;
	double t0;

	for (pass = 0; pass < 4; pass++) {
		drain_events(c);
		for (i = 0; i < NQP; i++) {
			struct o_qp *q = &c->qp[(i * 5 + pass) % NQP];

			if (!q->qp || q->killed)
				continue;
			t0 = call_begin("ibv_destroy_qp");
			if (!chk("ibv_destroy_qp", t0, ibv_destroy_qp(q->qp),
				 false))
				forget_qp(q);
		}
		for (i = 0; i < NAH; i++) {
			if (!c->ah[i].ah)
				continue;
			t0 = call_begin("ibv_destroy_ah");
			if (!chk("ibv_destroy_ah", t0,
				 ibv_destroy_ah(c->ah[i].ah), false))
				c->ah[i].ah = NULL;
		}
		for (i = 0; i < NMR; i++) {
			if (!c->mr[i].mr)
				continue;
			t0 = call_begin("ibv_dereg_mr");
			if (!chk("ibv_dereg_mr", t0, ibv_dereg_mr(c->mr[i].mr),
				 false))
				c->mr[i].mr = NULL;
		}
		for (i = 0; i < NCQ; i++) {
			if (!c->cq[i].cq || c->cq[i].killed)
				continue;
			t0 = call_begin("ibv_destroy_cq");
			if (!chk("ibv_destroy_cq", t0,
				 ibv_destroy_cq(c->cq[i].cq), false))
				c->cq[i].cq = NULL;
		}
		for (i = 0; i < NPD; i++) {
			if (!c->pd[i].pd)
				continue;
			t0 = call_begin("ibv_dealloc_pd");
			if (!chk("ibv_dealloc_pd", t0,
				 ibv_dealloc_pd(c->pd[i].pd), false))
				c->pd[i].pd = NULL;
		}
	}
	for (i = 0; i < NALIAS; i++)
		unmap_ring(&c->alias[i]);
	/* killed objects: their rings are still mapped by the provider;
	 * closing the device releases the rest */
	for (i = 0; i < NQP; i++) {
		if (c->qp[i].qp && c->qp[i].killed) {
			unmap_ring(&c->qp[i].sq);
			unmap_ring(&c->qp[i].rq);
		}
	}
	for (i = 0; i < NCQ; i++)
		if (c->cq[i].cq && c->cq[i].killed)
			unmap_ring(&c->cq[i].r);
	if (c->ch && !ibv_destroy_comp_channel(c->ch))
		c->ch = NULL;
	t0 = call_begin("ibv_close_device");
	chk("ibv_close_device", t0, ibv_close_device(c->ctx), false);
	memset(c, 0, sizeof(*c));
}

/* ------------------------------------------------------------------ */
/* Main                                                                */
/* ------------------------------------------------------------------ */

enum act {
	A_OPEN, A_CLOSE, A_PD, A_UNPD, A_MR, A_UNMR, A_REREG, A_CQ, A_RESIZE,
	A_UNCQ, A_NOTIFY, A_QP, A_UNQP, A_CONNECT, A_MODIFY, A_QUERY, A_AH,
	A_SEND, A_RECV, A_RING_SQ, A_RING_RQ, A_RING_CQ, A_RING_BYTES,
	A_DOORBELL, A_RAW, A_MMAP, A_TRAFFIC, A_NUM
};

static const unsigned int weight[A_NUM] = {
	[A_OPEN] = 2, [A_CLOSE] = 1, [A_PD] = 4, [A_UNPD] = 2, [A_MR] = 7,
	[A_UNMR] = 3, [A_REREG] = 1, [A_CQ] = 5, [A_RESIZE] = 3,
	[A_UNCQ] = 3, [A_NOTIFY] = 2, [A_QP] = 7, [A_UNQP] = 3,
	[A_CONNECT] = 12, [A_MODIFY] = 8, [A_QUERY] = 3, [A_AH] = 2,
	[A_SEND] = 16, [A_RECV] = 12, [A_RING_SQ] = 8, [A_RING_RQ] = 5,
	[A_RING_CQ] = 1, [A_RING_BYTES] = 1, [A_DOORBELL] = 6, [A_RAW] = 3,
	[A_MMAP] = 2, [A_TRAFFIC] = 14,
};

static enum act pick_act(void)
{
	unsigned int total = 0, r, i;

	for (i = 0; i < A_NUM; i++)
		total += weight[i];
	r = rn(total);
	for (i = 0; i < A_NUM; i++) {
		if (r < weight[i])
			return (enum act)i;
		r -= weight[i];
	}
	return A_SEND;
}

void step(void)
{
	int ci = live_ctx(), i;
	struct actx *c;

	if (ci < 0) {
		for (i = 0; i < NCTX && ctxs[i].ctx; i++)
			;
		open_ctx(i, opt.ndev == 2 ? (int)rn(2) : 0);
		return;
	}
	c = &ctxs[ci];
	switch (pick_act()) {
	case A_OPEN:
		for (i = 0; i < NCTX && ctxs[i].ctx; i++)
			;
		if (i < NCTX)
			open_ctx(i, opt.ndev == 2 ? (int)rn(2) : 0);
		break;
	case A_CLOSE:
		if (chance(30))
			close_ctx_abruptly(c);
		break;
	case A_PD: act_alloc_pd(c); break;
	case A_UNPD: act_dealloc_pd(c); break;
	case A_MR: act_reg_mr(c); break;
	case A_UNMR: act_dereg_mr(c); break;
	case A_REREG: act_rereg_mr(c); break;
	case A_CQ: act_create_cq(c); break;
	case A_RESIZE: act_resize_cq(c); break;
	case A_UNCQ: act_destroy_cq(c); break;
	case A_NOTIFY: act_notify(c); break;
	case A_QP: act_create_qp(c); break;
	case A_UNQP: act_destroy_qp(c); break;
	case A_CONNECT: act_connect(c); break;
	case A_MODIFY: act_modify_random(c); break;
	case A_QUERY: act_query(c); break;
	case A_AH: act_ah(c); break;
	case A_SEND: act_post_send(c); break;
	case A_RECV: act_post_recv(c); break;
	case A_RING_SQ: act_ring_wq(c, false); break;
	case A_RING_RQ: act_ring_wq(c, true); break;
	case A_RING_CQ: act_ring_cq(c); break;
	case A_RING_BYTES: act_ring_bytes(c); break;
	case A_DOORBELL: act_doorbell(c); break;
	case A_RAW: act_raw_cmd(c); break;
	case A_MMAP: act_mmap(c); break;
	case A_TRAFFIC: act_traffic(c); break;
	default: break;
	}
	for (i = 0; i < NCTX; i++) {
		if (!ctxs[i].ctx)
			continue;
		drain_events(&ctxs[i]);
		poll_all(&ctxs[i]);
	}
}

static const char *errname(int e)
{
	const char *s = e > ERRNO_MAX ? "NOT-AN-ERRNO" : strerrorname_np(e);

	return s ? s : "?";
}

static void print_per_name(void)
{
	char line[1024];
	size_t o;
	int i, e;

	for (i = 0; i < n_names; i++) {
		o = 0;
		for (e = 1; e <= ERRNO_MAX + 1; e++) {
			unsigned long n = atomic_load(&per_name[i].err[e]);

			if (n && o < sizeof(line) - 64)
				o += (size_t)snprintf(line + o, sizeof(line) - o,
						      " %s:%lu", errname(e), n);
		}
		line[o] = '\0';
		printf("#   %-40s %6lu calls, %6lu ok%s\n", per_name[i].name,
		       atomic_load(&per_name[i].n),
		       atomic_load(&per_name[i].ok), line);
	}
}

static void print_errnos(void)
{
	char line[1024];
	size_t o = 0;
	int e;

	for (e = 1; e <= ERRNO_MAX + 1; e++) {
		unsigned long n = atomic_load(&st_errno[e]);

		if (!n)
			continue;
		o += (size_t)snprintf(line + o, sizeof(line) - o, " %s:%lu",
				      errname(e), n);
		if (o >= sizeof(line) - 64)
			break;
	}
	printf("# errors by errno:%s\n", o ? line : " none");
}

int main(int argc, char **argv)
{
	unsigned long it = 0;
	pthread_t wd;
	struct sigaction sa;
	double t0 = vu_now(), end;
	bool foreign_ok = true, foreign_ran = false, ro_ok, sane;
	struct chase_result chase = { 0 };
	bool chase_ok = false, loopback_ok = true;
	int d, ret, teardown, i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	parse_args(argc, argv);
	me = &thr_slot[0];
	me->rng = opt.seed * 0x9e3779b97f4a7c15ull + 1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = crash_handler;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGILL, &sa, NULL);
	sigaction(SIGFPE, &sa, NULL);
	sigaction(SIGABRT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	printf("KTAP version 1\n");
	printf("# abuser: --dev %s%s%s --seed %" PRIu64 " --iterations %lu "
	       "--seconds %.0f --threads %d --storm-every %lu (uid %d)\n",
	       opt.dev[0], opt.dev[1] ? " --dev2 " : "",
	       opt.dev[1] ? opt.dev[1] : "", opt.seed, opt.iterations,
	       opt.seconds, opt.threads, opt.storm_every, (int)getuid());
	if (opt.victim_info && read_victim_info(opt.victim_info))
		return 1;
	if (memory_setup()) {
		fprintf(stderr, "abuser: memory setup: %s\n", strerror(errno));
		return 1;
	}
	for (d = 0; d < opt.ndev; d++) {
		devs[d].vd = (struct vu_dev)VU_DEV_INIT((char)('A' + d));
		devs[d].vd.name = opt.dev[d];
		ret = vu_dev_open(&devs[d].vd);
		if (ret == VU_EXIT_SKIP) {
			printf("1..0 # SKIP device %s not found\n", opt.dev[d]);
			return VU_EXIT_SKIP;
		}
		if (ret)
			return 1;
		/* valid while vd.ctx is open: the probes open more contexts */
		devs[d].dev = devs[d].vd.ctx->device;
		printf("# device %s: GID[%d] %s, active MTU %d\n", opt.dev[d],
		       devs[d].vd.gid_idx, devs[d].vd.gid_str,
		       vu_mtu_bytes(devs[d].vd.port.active_mtu));
	}
	if (pthread_create(&wd, NULL, watchdog, NULL) == 0)
		pthread_detach(wd);
	if (opt.chase_secs) {
		chase_ok = flush_chase(opt.chase_secs, &chase);
		printf("# flush chase: %d doorbells on a %u-entry SQ in ERR "
		       "refilled all along: at most %lld entries flushed by "
		       "one, %lld between two, longest %.2f s\n",
		       chase.doorbells, chase.num, chase.per_doorbell,
		       chase.idle, chase.took);
	}
	if (opt.race_secs)
		resize_race(opt.race_secs);
	if (opt.loopback_victim)
		loopback_ok = loopback_probe(opt.loopback_victim);
	printf("# t=%.1f s: probes done\n", vu_now() - t0);

	/* --seconds is the random sequence's: the probes come on top */
	end = vu_now() + opt.seconds;
	open_ctx(0, 0);
	for (it = 0; it < opt.iterations && vu_now() < end; it++) {
		/* a storm (setup and teardown included) must fit */
		if (opt.storm_every && it % opt.storm_every ==
		    opt.storm_every / 2 &&
		    end - vu_now() > 2 * opt.storm_secs + 2) {
			int ci = live_ctx();

			/* every other one a memory window storm */
			if (ci >= 0 && (it / opt.storm_every) % 2)
				act_mw_storm(&ctxs[ci]);
			else if (ci >= 0)
				act_storm(&ctxs[ci]);
		}
		step();
		if (it % 500 == 499)
			printf("# step %lu, %.1f s\n", it + 1, vu_now() - t0);
	}
	if (opt.self_test && !strcmp(opt.self_test, "slow")) {
		double ts = call_begin("self-test sleep");

		sleep((unsigned int)opt.slow_limit + 1);
		chk("self-test sleep", ts, 0, false);
	}
	printf("# %lu steps in %.1f s (reproduce: --seed %" PRIu64
	       " --iterations %lu)\n", it, vu_now() - t0, opt.seed, it);

	/* after the abuse: whatever state it left must still refuse them */
	if (ncanary) {
		foreign_ran = true;
		foreign_ok = foreign_probe();
		printf("# t=%.1f s: foreign keys tried\n", vu_now() - t0);
	}

	teardown = (int)rn(3);
	printf("# teardown: %s\n", teardown == 0 ? "destroy everything" :
	       teardown == 1 ? "close the contexts with everything alive" :
	       "none, exit with everything alive");
	for (i = 0; i < NCTX; i++) {
		if (!ctxs[i].ctx)
			continue;
		if (teardown == 0)
			destroy_all(&ctxs[i]);
		else if (teardown == 1)
			close_ctx_abruptly(&ctxs[i]);
	}
	printf("# t=%.1f s: teardown done\n", vu_now() - t0);
	ro_ok = ro_memory_intact();
	sane = sanity();
	printf("# t=%.1f s: sanity check done\n", vu_now() - t0);

	printf("# calls %lu: %lu ok, %lu ordinary errors, %lu unexpected; "
	       "%lu must-fail (%lu succeeded)\n", atomic_load(&st_calls),
	       atomic_load(&st_ok), atomic_load(&st_err),
	       atomic_load(&st_bad), atomic_load(&st_mustfail),
	       atomic_load(&st_mustfail_bad));
	print_errnos();
	print_per_name();
	printf("# memory window storms %lu: %lu BIND_MW/LOCAL_INV pairs "
	       "posted\n", atomic_load(&st_mw_storms),
	       atomic_load(&st_mw_pairs));
	printf("# ring writes %lu, raw doorbells %lu, storms %lu, contexts "
	       "closed alive %lu, objects killed by raw commands %lu\n",
	       atomic_load(&st_ring_writes), atomic_load(&st_doorbells),
	       atomic_load(&st_storms), atomic_load(&st_ctx_closed),
	       atomic_load(&st_killed));
	printf("# completions %lu (%lu on corrupted CQs, unchecked), "
	       "slowest call %.2f s (%s)\n", atomic_load(&st_cqes),
	       atomic_load(&st_cqe_unchecked), slowest,
	       slowest_name[0] ? slowest_name : "-");

	vu_report(atomic_load(&st_bad) == 0, "every result an ordinary "
		  "error or success (%lu unexpected)", atomic_load(&st_bad));
	vu_report(atomic_load(&st_mustfail_bad) == 0, "calls that cannot "
		  "succeed failed (%lu of %lu succeeded)",
		  atomic_load(&st_mustfail_bad), atomic_load(&st_mustfail));
	vu_report(atomic_load(&st_cqe_bad) == 0, "completions well formed "
		  "(%lu bad)", atomic_load(&st_cqe_bad));
	vu_report(atomic_load(&st_slow) == 0, "no call slower than %.0f s "
		  "(slowest %.2f s)", opt.slow_limit, slowest);
	vu_report(ro_ok, "read-only memory unchanged");
	vu_report(foreign_ok, "the victim's keys were refused%s",
		  foreign_ran ? "" : " # SKIP no --victim-info");
	vu_report(sane, "a fresh QP pair on %s carries a SEND exactly",
		  opt.dev[0]);
	if (opt.chase_secs && !chase.one_cpu && !(chase_ok && chase.doorbells &&
				chase.per_doorbell <= (long long)chase.num &&
				chase.idle <= (long long)chase.num))
		vu_diag("the kernel kept flushing entries added after the "
			"flush began: %lld in one doorbell (%.2f s), %lld with "
			"no doorbell, for a %u-entry ring", chase.per_doorbell,
			chase.took, chase.idle, chase.num);
	vu_report(!opt.chase_secs || chase.one_cpu ||
		  (chase_ok && chase.doorbells &&
		   chase.per_doorbell <= (long long)chase.num &&
		   chase.idle <= (long long)chase.num),
		  "an SQ in ERR refilled while flushed does not hold the "
		  "kernel%s", !opt.chase_secs ? " # SKIP --chase 0" :
		  chase.one_cpu ? " # SKIP one CPU" : "");
	vu_report(loopback_ok, "packets at another user's loopback QPs were "
		  "dropped and counted (drop_bad_address)%s",
		  opt.loopback_victim ? "" : " # SKIP no --loopback-victim");
	ret = vu_ktap_finish(t0);
	fflush(stdout);
	/* no libibverbs cleanup of what we leaked on purpose */
	_exit(ret);
}
