// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * abuser: concurrency storms, foreign keys, targeted probes, the sanity check.
 * See abuser.c.
 */
#define _GNU_SOURCE

#include "abuser.h"

/* ------------------------------------------------------------------ */
/* Concurrency storms                                                  */
/* ------------------------------------------------------------------ */

struct storm {
	struct actx *c;
	struct o_qp q[STORM_QPS];
	uint32_t handles[STORM_QPS];
	struct o_cq cq[2];
	double end;
	atomic_int killed_qp[STORM_QPS];
	atomic_int killed_cq[2];
	atomic_int resized_cq[2];	/* behind the provider's back */
};

struct storm_arg {
	struct storm *st;
	struct thr *t;
};

/**
 * connect_loopback() - RESET -> RTS, connected to @peer_qpn on the device
 *	of @c itself
 * @c: the context
 * @qp: an RC or UC QP of @c
 * @peer_qpn: the QP it sends to (one of @c's)
 * @names: the four calls' names for the statistics (static strings:
 *	RESET, INIT, RTR, RTS)
 *
 * Return: 0, or the errno of the first of INIT, RTR, RTS that failed
 * (a failed RESET, of a QP in any state, does not stop it).
 */
int connect_loopback(struct actx *c, struct ibv_qp *qp, uint32_t peer_qpn,
		     const char *const names[4])
{
	struct ibv_qp_attr a;
	double t0;
	int ret;

	t0 = call_begin(names[0]);
	memset(&a, 0, sizeof(a));
	chk(names[0], t0, ibv_modify_qp(qp, &a, IBV_QP_STATE), false);
	t0 = call_begin(names[1]);
	ret = chk(names[1], t0, vu_qp_init(qp, IBV_ACCESS_LOCAL_WRITE |
					   IBV_ACCESS_REMOTE_WRITE), false);
	if (ret)
		return ret;
	t0 = call_begin(names[2]);
	ret = chk(names[2], t0,
		  vu_qp_rtr(qp, devs[c->dev].vd.gid_idx, &devs[c->dev].vd.gid,
			    peer_qpn, IBV_MTU_1024, 0), false);
	if (ret)
		return ret;
	t0 = call_begin(names[3]);
	return chk(names[3], t0, vu_qp_rts(qp, 0), false);
}

static void storm_connect(struct storm *st, int i)
{
	static const char *const names[4] = {
		"storm ibv_modify_qp(RESET)", "storm ibv_modify_qp(INIT)",
		"storm ibv_modify_qp(RTR)", "storm ibv_modify_qp(RTS)",
	};

	connect_loopback(st->c, st->q[i].qp, st->q[i ^ 1].qp->qp_num, names);
}

static void *storm_worker(void *arg)
{
	struct storm_arg *sa = arg;
	struct storm *st = sa->st;
	struct actx *c = st->c;
	struct ibv_qp_attr a;
	uint32_t key_num, rsz;
	uint64_t key;
	double t0;
	int i, k;

	me = sa->t;
	while (vu_now() < st->end) {
		i = (int)rn(STORM_QPS);
		k = (int)rn(2);
		switch (rn(12)) {
		case 0: case 1: case 2:
			post_send_chain(c, &st->q[i], me->id, chance(30));
			break;
		case 3: case 4:
			post_recv_chain(c, &st->q[i], me->id, chance(30));
			break;
		case 5:
			outcome("storm raw doorbell",
				raw_doorbell(c->ctx->cmd_fd,
					     st->q[i].qp->qp_num, chance(40)),
				false);
			break;
		case 6:
			ring_wq(c, &st->q[i], chance(40), true);
			break;
		case 7:
			/* nobody writes into these CQ rings: checked, until
			 * a raw resize left the provider polling the old ring */
			if (!atomic_load(&st->killed_cq[k]))
				poll_one(st->cq[k].cq,
					 atomic_load(&st->resized_cq[k]));
			break;
		case 8:
			memset(&a, 0, sizeof(a));
			a.qp_state = chance(50) ? IBV_QPS_ERR :
				     (enum ibv_qp_state)rn(7);
			t0 = call_begin("storm ibv_modify_qp");
			chk("storm ibv_modify_qp", t0,
			    ibv_modify_qp(st->q[i].qp, &a, IBV_QP_STATE),
			    false);
			break;
		case 9:
			storm_connect(st, i);
			break;
		case 10:
			/* concurrent resizes, also behind the provider's
			 * back; the provider's view of the CQ is stale
			 * afterwards (its CQs are "tainted") */
			if (atomic_load(&st->killed_cq[k]))
				break;
			/* tainted before the resize: a poll racing with it
			 * may already see the new ring's indexes */
			atomic_store(&st->resized_cq[k], 1);
			outcome("storm raw RESIZE_CQ",
				raw_resize_cq(c->ctx->cmd_fd,
					      st->cq[k].cq->handle, 1 + rn(200),
					      &key, &key_num, &rsz), false);
			break;
		default:
			drain_events(c);
			break;
		}
	}
	return NULL;
}

/* Moves the storm's QPs around and destroys them (raw), then a CQ. */
static void *storm_destroyer(void *arg)
{
	struct storm_arg *sa = arg;
	struct storm *st = sa->st;
	struct actx *c = st->c;
	int i, tries, ret;

	me = sa->t;
	for (i = 0; i < STORM_QPS; i++) {
		vu_nap_us((long)((st->end - vu_now()) / (STORM_QPS + 1) *
				 1e6 * (0.5 + rn(100) / 100.0)));
		if (vu_now() > st->end || chance(25))
			continue;
		for (tries = 0; tries < 1000; tries++) {
			ret = outcome("storm raw DESTROY_QP",
				      raw_destroy(c->ctx->cmd_fd, 0,
						  st->handles[i]), false);
			if (ret != EBUSY)
				break;
			vu_nap_us(100);
		}
		if (!ret)
			atomic_store(&st->killed_qp[i], 1);
	}
	/* a CQ may go once its QPs are gone */
	for (i = 0; i < 2; i++) {
		ret = outcome("storm raw DESTROY_CQ",
			      raw_destroy(c->ctx->cmd_fd, 1,
					  st->cq[i].cq->handle), false);
		if (!ret)
			atomic_store(&st->killed_cq[i], 1);
	}
	return NULL;
}

void act_storm(struct actx *c)
{
	static struct mapent before[MAPS_MAX];
	pthread_t tid[NTHREADS_MAX];
	struct storm_arg args[NTHREADS_MAX];
	struct storm *st;
	struct mapent nw[4];
	struct ibv_qp_init_attr ia;
	int pd, i, n, nb, nthr = opt.threads + 1, err, j;
	double t0;

	pd = LIVE_SLOT(c->pd, NPD, pd, 1);
	if (pd < 0)
		return;
	st = calloc(1, sizeof(*st));
	if (!st)
		return;
	st->c = c;
	atomic_fetch_add(&st_storms, 1);
	for (i = 0; i < 2; i++) {
		nb = maps_read(before);
		t0 = call_begin("storm ibv_create_cq");
		st->cq[i].cq = ibv_create_cq(c->ctx, 16 + (int)rn(64), NULL,
					     NULL, 0);
		err = errno;
		if (!chk_ptr("storm ibv_create_cq", t0, st->cq[i].cq, err,
			     false))
			goto out;
		n = find_new_ring(before, nb, nw, 4);
		if (n == 1)
			ring_set(&st->cq[i].r, &nw[0],
				 (uint32_t)st->cq[i].cq->cqe,
				 sizeof(struct snaa_cqe));
	}
	for (i = 0; i < STORM_QPS; i++) {
		memset(&ia, 0, sizeof(ia));
		ia.qp_type = IBV_QPT_UC;
		ia.send_cq = st->cq[rn(2)].cq;
		ia.recv_cq = st->cq[rn(2)].cq;
		ia.cap = (struct ibv_qp_cap){ 32, 32, 2, 2, 64 };
		nb = maps_read(before);
		t0 = call_begin("storm ibv_create_qp");
		st->q[i].qp = ibv_create_qp(c->pd[pd].pd, &ia);
		err = errno;
		if (!chk_ptr("storm ibv_create_qp", t0, st->q[i].qp, err,
			     false))
			goto out;
		set_add(qpn_set, st->q[i].qp->qp_num);
		st->q[i].cap = ia.cap;
		st->handles[i] = st->q[i].qp->handle;
		n = find_new_ring(before, nb, nw, 4);
		if (n == 2) {
			j = ((struct snaa_ring *)nw[0].start)->flags &
			    SNAA_RING_F_IDLE ? 0 : 1;
			ring_set(&st->q[i].sq, &nw[j], ia.cap.max_send_wr,
				 sq_stride(2, 64));
			ring_set(&st->q[i].rq, &nw[!j], ia.cap.max_recv_wr,
				 rq_stride(2));
			ring_pretag(&st->q[i].sq);
			ring_pretag(&st->q[i].rq);
		}
	}
	for (i = 0; i < STORM_QPS; i++)
		storm_connect(st, i);

	st->end = vu_now() + opt.storm_secs;
	for (i = 0; i < nthr; i++) {
		struct thr *t = &thr_slot[1 + i];

		t->rng = rnd() ^ (uint64_t)i;
		t->id = 1 + i;
		args[i] = (struct storm_arg){ st, t };
		if (pthread_create(&tid[i], NULL, i ? storm_worker :
				   storm_destroyer, &args[i])) {
			nthr = i;
			break;
		}
	}
	for (i = 0; i < nthr; i++)
		pthread_join(tid[i], NULL);

out:
	drain_events(c);
	for (i = 0; i < STORM_QPS; i++) {
		if (!st->q[i].qp)
			continue;
		if (atomic_load(&st->killed_qp[i])) {
			/* gone in the kernel: the provider's copy is leaked,
			 * its rings we unmap ourselves */
			unmap_ring(&st->q[i].sq);
			unmap_ring(&st->q[i].rq);
			continue;
		}
		t0 = call_begin("storm ibv_destroy_qp");
		chk("storm ibv_destroy_qp", t0, ibv_destroy_qp(st->q[i].qp),
		    false);
	}
	for (i = 0; i < 2; i++) {
		if (!st->cq[i].cq)
			continue;
		if (atomic_load(&st->killed_cq[i])) {
			unmap_ring(&st->cq[i].r);
			continue;
		}
		t0 = call_begin("storm ibv_destroy_cq");
		chk("storm ibv_destroy_cq", t0, ibv_destroy_cq(st->cq[i].cq),
		    false);
	}
	free(st);
}

/* ------------------------------------------------------------------ */
/* Foreign keys                                                        */
/* ------------------------------------------------------------------ */

/*
 * Parse an abuse_victim --info-file: up to @max_qpn "qpn" lines into
 * @qpn and up to @max_canary "canary" lines into @canary; the counts into
 * *@nqpn and *@ncanary.  -1 (and a message) if the file cannot be read.
 */
static int parse_victim_info(const char *path, uint32_t *qpn, int max_qpn,
			     int *nqpn, struct canary *canary, int max_canary,
			     int *ncanary)
{
	char line[256], dev[64], who;
	unsigned long long addr;
	unsigned int len, lkey, rkey, n;
	FILE *f = fopen(path, "r");

	*nqpn = *ncanary = 0;
	if (!f) {
		fprintf(stderr, "abuser: %s: %s\n", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "qpn %c %x", &who, &n) == 2 &&
		    *nqpn < max_qpn)
			qpn[(*nqpn)++] = n;
		else if (sscanf(line, "canary %c %63s %llx %u %x %x", &who,
				dev, &addr, &len, &lkey, &rkey) == 6 &&
			 *ncanary < max_canary) {
			struct canary *k = &canary[(*ncanary)++];

			snprintf(k->dev, sizeof(k->dev), "%s", dev);
			k->addr = addr;
			k->len = len;
			k->lkey = lkey;
			k->rkey = rkey;
		}
	}
	fclose(f);
	return 0;
}

int read_victim_info(const char *path)
{
	return parse_victim_info(path, victim_qpn,
				 (int)(sizeof(victim_qpn) / sizeof(victim_qpn[0])),
				 &nvictim_qpn, canaries,
				 (int)(sizeof(canaries) / sizeof(canaries[0])),
				 &ncanary);
}

/* A loopback pair on a fresh context of dev, for a clean experiment. */
struct pair {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *x, *y;
	struct vu_buf buf;
};

static void pair_close(struct pair *p)
{
	if (p->x)
		ibv_destroy_qp(p->x);
	if (p->y)
		ibv_destroy_qp(p->y);
	vu_buf_free(&p->buf);
	if (p->cq)
		ibv_destroy_cq(p->cq);
	if (p->pd)
		ibv_dealloc_pd(p->pd);
	if (p->ctx)
		ibv_close_device(p->ctx);
	memset(p, 0, sizeof(*p));
}

static int pair_open(struct pair *p, int dev)
{
	struct ibv_qp_cap cap = { 8, 8, 1, 1, 0 };
	const struct vu_dev *d = &devs[dev].vd;
	struct vu_qp_end ex, ey;
	const char *step;

	memset(p, 0, sizeof(*p));
	p->ctx = ibv_open_device(devs[dev].dev);
	if (!p->ctx)
		return -1;
	p->pd = ibv_alloc_pd(p->ctx);
	p->cq = p->pd ? ibv_create_cq(p->ctx, 64, NULL, NULL, 0) : NULL;
	if (!p->cq || vu_buf_alloc(&p->buf, p->pd, 65536,
				   IBV_ACCESS_LOCAL_WRITE |
				   IBV_ACCESS_REMOTE_WRITE, 0x5a))
		return -1;
	p->x = vu_qp_create(p->pd, IBV_QPT_UC, p->cq, p->cq, &cap);
	p->y = vu_qp_create(p->pd, IBV_QPT_UC, p->cq, p->cq, &cap);
	if (!p->x || !p->y)
		return -1;
	set_add(qpn_set, p->x->qp_num);
	set_add(qpn_set, p->y->qp_num);
	ex = (struct vu_qp_end){ p->x, d, 0x10, 0x20 };
	ey = (struct vu_qp_end){ p->y, d, 0x20, 0x10 };
	if (vu_qp_connect(&ex, &ey, IBV_MTU_1024, IBV_ACCESS_LOCAL_WRITE |
			  IBV_ACCESS_REMOTE_WRITE, &step) ||
	    vu_qp_connect(&ey, &ex, IBV_MTU_1024, IBV_ACCESS_LOCAL_WRITE |
			  IBV_ACCESS_REMOTE_WRITE, &step))
		return -1;
	return 0;
}

static int post1(struct ibv_qp *qp, enum ibv_wr_opcode op, uint64_t addr,
		 uint32_t len, uint32_t lkey, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sg = { addr, len, lkey };
	struct ibv_send_wr wr, *bad_wr;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = tag_wrid();
	wr.sg_list = &sg;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return ibv_post_send(qp, &wr, &bad_wr);
}

static int recv1(struct ibv_qp *qp, uint64_t addr, uint32_t len,
		 uint32_t lkey)
{
	struct ibv_sge sg = { addr, len, lkey };
	struct ibv_recv_wr wr, *bad_wr;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = tag_wrid();
	wr.sg_list = &sg;
	wr.num_sge = 1;
	return ibv_post_recv(qp, &wr, &bad_wr);
}

/* Collect completions for a while; count the successful ones per QP. */
static void collect(struct pair *p, double secs, int *ok_x, int *ok_y,
		    int *n)
{
	struct ibv_wc wc[8];
	double end = vu_now() + secs;
	int k, i;

	*ok_x = *ok_y = *n = 0;
	while (vu_now() < end) {
		k = ibv_poll_cq(p->cq, 8, wc);
		for (i = 0; i < k; i++) {
			check_wc(&wc[i], false);
			(*n)++;
			if (wc[i].status != IBV_WC_SUCCESS)
				continue;
			if (wc[i].qp_num == p->x->qp_num)
				(*ok_x)++;
			else
				(*ok_y)++;
		}
		if (k <= 0)
			vu_nap_us(2000);
	}
}

/*
 * The victim's keys, from our own QPs: gathering from its canary (SEND),
 * scattering into it (receive WR), writing to it (RDMA WRITE WITH IMM).
 * Gathering and scattering must fail with an error completion; the WRITE
 * must not complete a receive (the victim checks its canary itself).
 */
bool foreign_probe(void)
{
	bool ok = true;
	int k, d, okx, oky, n;
	struct pair p;

	for (k = 0; k < ncanary; k++) {
		struct canary cn = canaries[k];

		for (d = 0; d < opt.ndev; d++)
			if (!strcmp(devs[d].vd.name, cn.dev))
				break;
		if (d == opt.ndev)
			continue;
		if (pair_open(&p, d)) {
			vu_diag("foreign: cannot set up a QP pair on %s",
				cn.dev);
			pair_close(&p);
			return false;
		}
		if (opt.self_test && !strcmp(opt.self_test, "foreign")) {
			cn.addr = (uintptr_t)p.buf.p;
			cn.lkey = p.buf.mr->lkey;
			cn.rkey = p.buf.mr->rkey;
		}
		/* 1: exfiltration, a SEND gathered from the canary */
		recv1(p.y, (uintptr_t)p.buf.p, 4096, p.buf.mr->lkey);
		post1(p.x, IBV_WR_SEND, cn.addr, 64, cn.lkey, 0, 0);
		collect(&p, 0.6, &okx, &oky, &n);
		if (okx || oky) {
			vu_diag("foreign: a SEND gathered from the victim's "
				"canary on %s (lkey 0x%x) completed: %d send, "
				"%d receive successes", cn.dev, cn.lkey, okx,
				oky);
			ok = false;
		}
		pair_close(&p);

		/* 2: a receive WR scattering into the canary */
		if (pair_open(&p, d)) {
			pair_close(&p);
			return false;
		}
		if (opt.self_test && !strcmp(opt.self_test, "foreign")) {
			cn.addr = (uintptr_t)p.buf.p;
			cn.lkey = p.buf.mr->lkey;
			cn.rkey = p.buf.mr->rkey;
		}
		recv1(p.y, cn.addr, 64, cn.lkey);
		post1(p.x, IBV_WR_SEND, (uintptr_t)p.buf.p + 8192, 64,
		      p.buf.mr->lkey, 0, 0);
		collect(&p, 0.6, &okx, &oky, &n);
		if (oky) {
			vu_diag("foreign: a SEND was received into the "
				"victim's canary on %s (lkey 0x%x)", cn.dev,
				cn.lkey);
			ok = false;
		}
		/* 3: WRITE WITH IMM aimed at the canary, on a fresh pair */
		pair_close(&p);
		if (pair_open(&p, d)) {
			pair_close(&p);
			return false;
		}
		if (opt.self_test && !strcmp(opt.self_test, "foreign")) {
			cn.addr = (uintptr_t)p.buf.p;
			cn.rkey = p.buf.mr->rkey;
		}
		recv1(p.y, (uintptr_t)p.buf.p, 64, p.buf.mr->lkey);
		post1(p.x, IBV_WR_RDMA_WRITE_WITH_IMM,
		      (uintptr_t)p.buf.p + 8192, 64, p.buf.mr->lkey, cn.addr,
		      cn.rkey);
		post1(p.x, IBV_WR_RDMA_WRITE, (uintptr_t)p.buf.p + 8192, 64,
		      p.buf.mr->lkey, cn.addr + 64, cn.rkey);
		collect(&p, 0.6, &okx, &oky, &n);
		if (oky) {
			vu_diag("foreign: an RDMA WRITE WITH IMM with the "
				"victim's rkey 0x%x on %s completed a receive",
				cn.rkey, cn.dev);
			ok = false;
		}
		pair_close(&p);
	}
	return ok;
}

/* ------------------------------------------------------------------ */
/* Targeted probes                                                     */
/* ------------------------------------------------------------------ */

struct chase {
	struct snaa_ring *h;
	int cpu;			/* the chaser's CPU */
	uint32_t ahead;
	atomic_bool stop;
	double deadline;
	struct thr *t;
};

/* Run the calling thread on cpu only. */
static void pin_to(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/* Two CPUs this process may run on, or false. */
static bool two_cpus(int cpu[2])
{
	cpu_set_t set;
	int i, n = 0;

	if (sched_getaffinity(0, sizeof(set), &set))
		return false;
	for (i = 0; i < CPU_SETSIZE && n < 2; i++)
		if (CPU_ISSET(i, &set))
			cpu[n++] = i;
	return n == 2;
}

/* Keep the SQ producer ahead of whatever the kernel consumed. */
static void *chaser(void *arg)
{
	struct chase *ch = arg;
	uint32_t cons;

	me = ch->t;
	pin_to(ch->cpu);
	while (!atomic_load(&ch->stop) && vu_now() < ch->deadline) {
		cons = __atomic_load_n(&ch->h->consumer, __ATOMIC_ACQUIRE);
		__atomic_store_n(&ch->h->producer, cons + ch->ahead,
				 __ATOMIC_RELEASE);
	}
	return NULL;
}

/*
 * A QP in ERR whose SQ user space keeps refilling while the kernel
 * flushes it: every flush must end after what was there when it began.
 * A loopback QP (so that a doorbell runs the send queue inline, in the
 * caller's system call) is moved to ERR; a thread keeps the producer
 * index num - 1 entries ahead of the consumer for secs seconds, while
 * raw doorbells are rung one after the other.  A kernel that flushes a
 * snapshot consumes at most num entries per doorbell and none between
 * doorbells (the ring is idle).  Fills *res: the most entries one
 * doorbell consumed, the most consumed between two, the longest
 * doorbell, the ring size; false if the setup failed.
 */
bool flush_chase(double secs, struct chase_result *res)
{
	static struct mapent before[MAPS_MAX];
	/* 4096 entries: a correct flush of all of them takes a fraction of
	 * a second even on a debug kernel under TCG */
	struct ibv_qp_cap cap = { 4096, 1, 1, 1, 0 };
	struct ibv_context *ctx;
	struct ibv_pd *pd = NULL;
	struct ibv_cq *cq = NULL;
	struct ibv_qp *qp = NULL;
	struct mapent nw[4];
	struct ring sq = { 0 };
	struct chase ch;
	pthread_t tid;
	uint32_t c0, c1, c2;
	cpu_set_t saved;
	bool ok = false;
	double t0, dt;
	int nb, n, i, cpu[2];

	memset(res, 0, sizeof(*res));
	/* the chaser must run while the kernel flushes, on another CPU */
	if (!two_cpus(cpu) ||
	    pthread_getaffinity_np(pthread_self(), sizeof(saved), &saved)) {
		res->one_cpu = true;
		return true;
	}
	ctx = ibv_open_device(devs[0].dev);
	if (!ctx)
		return false;
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 1, NULL, NULL, 0);
	if (!pd || !cq)
		goto out;
	nb = maps_read(before);
	qp = vu_qp_create(pd, IBV_QPT_UC, cq, cq, &cap);
	if (!qp)
		goto out;
	set_add(qpn_set, qp->qp_num);
	n = find_new_ring(before, nb, nw, 4);
	if (n != 2)
		goto out;
	i = ((struct snaa_ring *)nw[0].start)->flags & SNAA_RING_F_IDLE ? 0 : 1;
	ring_set(&sq, &nw[i], cap.max_send_wr, sq_stride(1, 0));
	ring_pretag(&sq);
	if (vu_qp_init(qp, IBV_ACCESS_LOCAL_WRITE) ||
	    vu_qp_rtr(qp, devs[0].vd.gid_idx, &devs[0].vd.gid, qp->qp_num,
		      IBV_MTU_1024, 0) || vu_qp_rts(qp, 0) ||
	    vu_qp_modify_state(qp, IBV_QPS_ERR))
		goto out;
	vu_nap_us(200000);	/* the worker's flush of the empty SQ */
	memset(&ch, 0, sizeof(ch));
	ch.h = ring_hdr(&sq);
	ch.ahead = sq.num - 1;
	ch.deadline = vu_now() + secs;
	ch.t = &thr_slot[NTHREADS_MAX - 1];
	ch.t->id = NTHREADS_MAX - 1;
	res->num = sq.num;
	ch.cpu = cpu[1];
	pin_to(cpu[0]);
	if (pthread_create(&tid, NULL, chaser, &ch))
		goto out;
	ok = true;
	vu_nap_us(50000);
	while (vu_now() < ch.deadline - 0.3) {
		c0 = __atomic_load_n(&ch.h->consumer, __ATOMIC_ACQUIRE);
		t0 = call_begin("flush chase: raw SQ doorbell");
		outcome("flush chase: raw SQ doorbell",
			raw_doorbell(ctx->cmd_fd, qp->qp_num, false), false);
		call_end("flush chase: raw SQ doorbell", t0);
		dt = vu_now() - t0;
		c1 = __atomic_load_n(&ch.h->consumer, __ATOMIC_ACQUIRE);
		/* a while without a doorbell, then many more tries: on a
		 * fast kernel the chaser does not always keep up */
		vu_nap_us(res->doorbells < 3 ? 200000 : 10000);
		c2 = __atomic_load_n(&ch.h->consumer, __ATOMIC_ACQUIRE);
		res->doorbells++;
		if (dt > res->took)
			res->took = dt;
		if ((long long)(c1 - c0) > res->per_doorbell)
			res->per_doorbell = c1 - c0;
		if ((long long)(c2 - c1) > res->idle)
			res->idle = c2 - c1;
	}
	atomic_store(&ch.stop, true);
	pthread_join(tid, NULL);
out:
	pthread_setaffinity_np(pthread_self(), sizeof(saved), &saved);
	if (qp)
		ibv_destroy_qp(qp);
	if (cq)
		ibv_destroy_cq(cq);
	if (pd)
		ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return ok;
}

struct race {
	int fd;
	uint32_t handle;
	double end;
	struct thr *t;
};

static void *resizer(void *arg)
{
	struct race *r = arg;
	uint32_t num, rsz;
	uint64_t key;

	me = r->t;
	while (vu_now() < r->end)
		outcome("resize race: raw RESIZE_CQ",
			raw_resize_cq(r->fd, r->handle, 1 + rn(4), &key, &num,
				      &rsz), false);
	free(r);
	return NULL;
}

/*
 * Raw RESIZE_CQ commands on one CQ from several threads at once: the
 * core takes only a shared lock on the CQ for them, so resizes run
 * concurrently in the driver.
 */
void resize_race(double secs)
{
	pthread_t tid[NTHREADS_MAX];
	struct ibv_context *ctx;
	struct ibv_cq *cq;
	struct race r;
	int i, n = opt.threads;

	ctx = ibv_open_device(devs[0].dev);
	if (!ctx)
		return;
	cq = ibv_create_cq(ctx, 1, NULL, NULL, 0);
	if (cq) {
		memset(&r, 0, sizeof(r));
		r.fd = ctx->cmd_fd;
		r.handle = cq->handle;
		r.end = vu_now() + secs;
		for (i = 0; i < n; i++) {
			struct race *ri = malloc(sizeof(*ri));

			if (!ri)
				break;
			*ri = r;
			ri->t = &thr_slot[1 + i];
			ri->t->id = 1 + i;
			ri->t->rng = rnd() + (uint64_t)i;
			if (pthread_create(&tid[i], NULL, resizer, ri)) {
				free(ri);
				break;
			}
		}
		n = i;
		for (i = 0; i < n; i++)
			pthread_join(tid[i], NULL);
		printf("# resize race: %d threads, %.0f s\n", n, secs);
		ibv_destroy_cq(cq);
	}
	ibv_close_device(ctx);
}

/* ------------------------------------------------------------------ */
/* Sanity at the end                                                   */
/* ------------------------------------------------------------------ */

bool sanity(void)
{
	struct pair p;
	struct ibv_wc wc[4];
	uint8_t want[4097];
	int got = 0, k;
	bool ok = true;

	if (pair_open(&p, 0)) {
		vu_diag("cannot set up a QP pair on %s: %s", devs[0].vd.name,
			strerror(errno));
		pair_close(&p);
		return false;
	}
	vu_fill_prng(want, sizeof(want), opt.seed);
	memcpy(p.buf.p + 32768, want, sizeof(want));
	if (recv1(p.y, (uintptr_t)p.buf.p, 8192, p.buf.mr->lkey) ||
	    post1(p.x, IBV_WR_SEND, (uintptr_t)p.buf.p + 32768, sizeof(want),
		  p.buf.mr->lkey, 0, 0)) {
		vu_diag("posting failed");
		pair_close(&p);
		return false;
	}
	got = vu_poll_cq(p.cq, wc, 2, vu_now() + 20);
	for (k = 0; k < got; k++) {
		if (wc[k].status != IBV_WC_SUCCESS) {
			char s[256];

			vu_wc_str(&wc[k], s, sizeof(s));
			vu_diag("completion: %s", s);
			ok = false;
		}
	}
	if (got != 2) {
		vu_diag("%d of 2 completions", got);
		ok = false;
	}
	ok &= vu_bytes_eq("received data", p.buf.p, want, sizeof(want), 0);
	pair_close(&p);
	return ok;
}

/* ------------------------------------------------------------------ */
/* Another user's loopback connection                                  */
/* ------------------------------------------------------------------ */

/* Packets aimed at each of the victim's QPs: SENDs, then WRITEs. */
#define LO_SENDS	48
#define LO_WRITES	16
/* The first PSN tried is this far behind the one "rdma" showed. */
#define LO_PSN_BEHIND	8

/*
 * The receive PSN of @qpn on @dev as "rdma resource show qp" shows it to
 * any user; -1 if it does not show one.
 */
static long res_rq_psn(const char *dev, uint32_t qpn)
{
	char cmd[192], line[1024], *p;
	long psn = -1;
	FILE *f;

	snprintf(cmd, sizeof(cmd),
		 "rdma resource show qp link %s/%d lqpn %u 2>/dev/null", dev,
		 VU_PORT, qpn);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if ((p = strstr(line, " rq-psn ")))
			psn = strtol(p + 8, NULL, 10);
	pclose(f);
	return psn;
}

/* The victim's QPs (both on one device) and canaries, from its info file. */
struct lo_victim {
	char dev[64];
	uint32_t qpn[2];
	struct canary canary[2];
	int nqpn, ncanary;
};

static int read_lo_victim(const char *path, struct lo_victim *v)
{
	memset(v, 0, sizeof(*v));
	if (parse_victim_info(path, v->qpn, 2, &v->nqpn, v->canary, 2,
			      &v->ncanary))
		return -1;
	if (v->nqpn != 2 || v->ncanary != 2 ||
	    strcmp(v->canary[0].dev, v->canary[1].dev)) {
		vu_diag("%s: want two QPs and two canaries on one device", path);
		return -1;
	}
	snprintf(v->dev, sizeof(v->dev), "%s", v->canary[0].dev);
	return 0;
}

/*
 * One intruder QP of our own on @d, connected (UC) to the victim's QP
 * @qpn with the device's own GID, starting LO_PSN_BEHIND before the PSN
 * "rdma" shows for it, sends LO_SENDS SENDs and LO_WRITES RDMA WRITEs
 * at @k (the victim's canary, with its rkey): every one a single packet
 * that the victim's QP would take, were it not from another QP than its
 * peer.  Returns the packets sent (all completed), or -1.
 */
static int lo_intrude(int d, uint32_t qpn, const struct canary *k)
{
	struct ibv_qp_cap cap = { LO_SENDS + LO_WRITES, 1, 1, 1, 0 };
	const struct vu_dev *vd = &devs[d].vd;
	struct ibv_context *ctx;
	struct ibv_pd *pd = NULL;
	struct ibv_cq *cq = NULL;
	struct ibv_qp *qp = NULL;
	struct vu_buf buf = { 0 };
	struct ibv_wc wc[16];
	int i, n = -1, done = 0, got;
	double end;
	long psn;

	ctx = ibv_open_device(devs[d].dev);
	if (!ctx)
		return -1;
	psn = res_rq_psn(opt.dev[d], qpn);
	if (psn < 0) {
		vu_diag("rdma resource show qp: no rq-psn for QP 0x%x on %s",
			qpn, opt.dev[d]);
		goto out;
	}
	pd = ibv_alloc_pd(ctx);
	cq = pd ? ibv_create_cq(ctx, LO_SENDS + LO_WRITES, NULL, NULL, 0) :
		  NULL;
	if (!cq || vu_buf_alloc(&buf, pd, 4096, IBV_ACCESS_LOCAL_WRITE, 0xee))
		goto out;
	qp = vu_qp_create(pd, IBV_QPT_UC, cq, cq, &cap);
	if (!qp || vu_qp_init(qp, IBV_ACCESS_LOCAL_WRITE) ||
	    vu_qp_rtr(qp, vd->gid_idx, &vd->gid, qpn, IBV_MTU_1024, 0) ||
	    vu_qp_rts(qp, (uint32_t)(psn - LO_PSN_BEHIND) & 0xffffff)) {
		vu_diag("the intruder's QP: %s", strerror(errno));
		goto out;
	}
	printf("# loopback intruder: QP 0x%x -> the victim's QP 0x%x on %s "
	       "(rq-psn %ld), PSNs from %ld\n", qp->qp_num, qpn, opt.dev[d],
	       psn, (psn - LO_PSN_BEHIND) & 0xffffff);
	for (i = 0; i < LO_SENDS + LO_WRITES; i++) {
		bool wr = i >= LO_SENDS;

		if (post1(qp, wr ? IBV_WR_RDMA_WRITE : IBV_WR_SEND,
			  (uintptr_t)buf.p, wr ? 16 : 64, buf.mr->lkey,
			  wr ? k->addr : 0, wr ? k->rkey : 0)) {
			vu_diag("the intruder's post %d: %s", i, strerror(errno));
			goto out;
		}
	}
	end = vu_now() + 30;
	while (done < LO_SENDS + LO_WRITES && vu_now() < end) {
		got = ibv_poll_cq(cq, 16, wc);
		for (i = 0; i < got; i++)
			if (wc[i].status == IBV_WC_SUCCESS)
				done++;
			else
				end = 0;
		if (got == 0)
			vu_nap_us(1000);
	}
	if (done == LO_SENDS + LO_WRITES)
		n = done;
	else
		vu_diag("the intruder's %d WRs: %d completed successfully",
			LO_SENDS + LO_WRITES, done);
out:
	if (qp)
		ibv_destroy_qp(qp);
	vu_buf_free(&buf);
	if (cq)
		ibv_destroy_cq(cq);
	if (pd)
		ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return n;
}

/**
 * loopback_probe() - inject into another user's loopback connection
 * @path: the info file of an abuse_victim whose two QPs are on one device
 *
 * A looped-back packet carries the device's own addresses, so the
 * receiving QP must know which QP sent it: only its connected peer may.
 * For each of the victim's QPs, an intruder QP of ours on the same device
 * names it and the PSN it expects (read as any user can, from "rdma
 * resource show qp") and sends SENDs and WRITEs at it (the WRITEs with
 * the victim's canary key).  Every packet must be dropped and counted in
 * drop_bad_address; the victim checks that none of them landed.
 *
 * Return: true if the drop counter rose by exactly the packets sent.
 */
bool loopback_probe(const char *path)
{
	struct lo_victim v;
	long long c0, c1 = -1;
	int d, i, n, sent = 0;
	double end;

	if (read_lo_victim(path, &v))
		return false;
	for (d = 0; d < opt.ndev; d++)
		if (!strcmp(opt.dev[d], v.dev))
			break;
	if (d == opt.ndev) {
		vu_diag("the loopback victim is on %s, not on --dev/--dev2",
			v.dev);
		return false;
	}
	c0 = vu_read_counter(v.dev, "drop_bad_address");
	for (i = 0; i < 2; i++) {
		/* QP i's canary is in the MR of QP i's own PD */
		n = lo_intrude(d, v.qpn[i], &v.canary[i]);
		if (n < 0)
			return false;
		sent += n;
	}
	/* the counters are cached for a moment: wait for the last drops */
	end = vu_now() + 10;
	do {
		vu_nap_us(20000);
		c1 = vu_read_counter(v.dev, "drop_bad_address");
	} while (c0 >= 0 && c1 >= 0 && c1 - c0 < sent && vu_now() < end);
	printf("# loopback intruder: %d packets at the victim's QPs on %s, "
	       "drop_bad_address %lld -> %lld\n", sent, v.dev, c0, c1);
	if (c0 < 0 || c1 < 0 || c1 - c0 != sent) {
		vu_diag("drop_bad_address rose by %lld, want %d", c1 - c0,
			sent);
		return false;
	}
	return true;
}
