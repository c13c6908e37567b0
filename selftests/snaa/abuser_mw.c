// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * abuser: memory window storms.  A loopback RC pair of the abuser's own,
 * an MR that windows may be bound to and a few type-2 windows; for
 * --storm-ms, --threads threads post unsignaled BIND_MW / LOCAL_INV pairs
 * without a pause (each post rings the kernel or, with the ring's IDLE
 * flag clear, only writes the ring: a local operation costs the kernel
 * work without a packet), while another thread deallocates windows under
 * the binds and allocates new ones, and moves the QPs through ERR and
 * back.  Afterwards every window is deallocated and the MR must
 * deregister: a window that a racing bind left counted would hold it
 * (EBUSY) and pin its pages for good.  The kernel must stay responsive
 * all along (the watchdog's slow-call limit, the kernel's soft lockup
 * and RCU stall detectors in dmesg).
 */
#include "abuser.h"

#define MWS_WINDOWS	4
#define MWS_LEN		(64ul * 1024)

struct mws {
	struct actx *c;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp[2];
	struct ibv_mr *mr;
	uint8_t *mem;
	_Atomic(struct ibv_mw *) mw[MWS_WINDOWS];
	pthread_mutex_t lock;		/* mw[] changes under it */
	double end;
	atomic_long binds, invals, deallocs, posted_err;
};

struct mws_arg {
	struct mws *s;
	struct thr *t;
};

static int mws_connect(struct mws *s, int i)
{
	static const char *const names[4] = {
		"mw storm ibv_modify_qp(RESET)", "mw storm ibv_modify_qp(INIT)",
		"mw storm ibv_modify_qp(RTR)", "mw storm ibv_modify_qp(RTS)",
	};

	return connect_loopback(s->c, s->qp[i], s->qp[i ^ 1]->qp_num, names);
}

/* A BIND_MW of window @w and a LOCAL_INV of its new R_Key, unsignaled. */
static void mws_pair(struct mws *s, int w)
{
	struct ibv_send_wr wr[2], *bad_wr = NULL;
	struct ibv_mw *mw, copy;
	uint32_t key;
	double t0;
	int ret;

	pthread_mutex_lock(&s->lock);
	mw = atomic_load(&s->mw[w]);
	if (!mw) {
		pthread_mutex_unlock(&s->lock);
		return;
	}
	/*
	 * A copy, taken under the lock: the racer may deallocate (and
	 * free) the window between here and the post, which must then
	 * fail in the kernel, not read freed memory here.
	 */
	copy = *mw;
	key = (copy.rkey & ~0xffu) | (uint8_t)rn(256);
	memset(wr, 0, sizeof(wr));
	wr[0].wr_id = WRID_TAG | 0xb1;
	wr[0].opcode = IBV_WR_BIND_MW;
	wr[0].bind_mw.mw = &copy;
	wr[0].bind_mw.rkey = key;
	wr[0].bind_mw.bind_info = (struct ibv_mw_bind_info){
		.mr = s->mr,
		.addr = (uintptr_t)s->mem + rn(MWS_LEN / 2),
		.length = 1 + rn(MWS_LEN / 2),
		.mw_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};
	wr[0].next = &wr[1];
	wr[1].wr_id = WRID_TAG | 0xb2;
	wr[1].opcode = IBV_WR_LOCAL_INV;
	wr[1].invalidate_rkey = key;
	/* one in 64 signaled, so that the CQ sees both kinds of end */
	if (!rn(64))
		wr[1].send_flags = IBV_SEND_SIGNALED;
	pthread_mutex_unlock(&s->lock);
	t0 = call_begin("mw storm ibv_post_send(BIND_MW, LOCAL_INV)");
	ret = ibv_post_send(s->qp[rn(2)], wr, &bad_wr);
	call_end("mw storm ibv_post_send(BIND_MW, LOCAL_INV)", t0);
	if (ret) {
		/* a full SQ or a QP moved to ERR/RESET by the racer */
		if (ret != ENOMEM && ret != EINVAL) {
			atomic_fetch_add(&st_bad, 1);
			bad("mw storm ibv_post_send: unexpected %s",
			    strerror(ret));
		}
		atomic_fetch_add(&s->posted_err, 1);
		return;
	}
	atomic_fetch_add(&s->binds, 1);
	atomic_fetch_add(&s->invals, 1);
}

static void *mws_poster(void *arg)
{
	struct mws_arg *sa = arg;
	struct mws *s = sa->s;
	int n = 0;

	me = sa->t;
	while (vu_now() < s->end) {
		mws_pair(s, (int)rn(MWS_WINDOWS));
		if (!(++n & 7))
			poll_one(s->cq, false);
	}
	return NULL;
}

/* Deallocates windows under the binds, allocates new ones, moves QPs. */
static void *mws_racer(void *arg)
{
	struct mws_arg *sa = arg;
	struct mws *s = sa->s;
	struct ibv_mw *mw;
	double t0;
	int w;

	me = sa->t;
	while (vu_now() < s->end) {
		vu_nap_us(200 + rn(5000));
		w = (int)rn(MWS_WINDOWS);
		if (chance(15)) {
			mws_connect(s, (int)rn(2));
			continue;
		}
		/* taken out of the table first, deallocated outside the lock:
		 * posts already past the lock may still use it */
		pthread_mutex_lock(&s->lock);
		mw = atomic_exchange(&s->mw[w], NULL);
		pthread_mutex_unlock(&s->lock);
		if (mw) {
			t0 = call_begin("mw storm ibv_dealloc_mw");
			chk("mw storm ibv_dealloc_mw", t0, ibv_dealloc_mw(mw),
			    false);
			atomic_fetch_add(&s->deallocs, 1);
		}
		t0 = call_begin("mw storm ibv_alloc_mw");
		mw = ibv_alloc_mw(s->pd, IBV_MW_TYPE_2);
		chk_ptr("mw storm ibv_alloc_mw", t0, mw, errno, false);
		pthread_mutex_lock(&s->lock);
		atomic_store(&s->mw[w], mw);
		pthread_mutex_unlock(&s->lock);
	}
	return NULL;
}

/**
 * act_mw_storm() - a memory window storm on context @c (see above)
 * @c: a live context; its device is used in loopback
 */
void act_mw_storm(struct actx *c)
{
	struct mws_arg args[NTHREADS_MAX];
	pthread_t tid[NTHREADS_MAX];
	struct ibv_qp_init_attr ia;
	int i, nthr = opt.threads + 1, started = 0;
	struct mws *s;
	double t0;

	s = calloc(1, sizeof(*s));
	if (!s)
		return;
	s->c = c;
	pthread_mutex_init(&s->lock, NULL);
	s->mem = aligned_alloc(PAGE, MWS_LEN);
	t0 = call_begin("mw storm ibv_alloc_pd");
	s->pd = ibv_alloc_pd(c->ctx);
	if (!s->mem || !chk_ptr("mw storm ibv_alloc_pd", t0, s->pd, errno,
				false))
		goto out;
	t0 = call_begin("mw storm ibv_reg_mr");
	s->mr = ibv_reg_mr(s->pd, s->mem, MWS_LEN, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_MW_BIND);
	if (!chk_ptr("mw storm ibv_reg_mr", t0, s->mr, errno, false))
		goto out;
	t0 = call_begin("mw storm ibv_create_cq");
	s->cq = ibv_create_cq(c->ctx, 1024, NULL, NULL, 0);
	if (!chk_ptr("mw storm ibv_create_cq", t0, s->cq, errno, false))
		goto out;
	for (i = 0; i < 2; i++) {
		memset(&ia, 0, sizeof(ia));
		ia.qp_type = IBV_QPT_RC;
		ia.send_cq = ia.recv_cq = s->cq;
		ia.cap = (struct ibv_qp_cap){ 64, 4, 1, 1, 0 };
		ia.sq_sig_all = 0;
		t0 = call_begin("mw storm ibv_create_qp");
		s->qp[i] = ibv_create_qp(s->pd, &ia);
		if (!chk_ptr("mw storm ibv_create_qp", t0, s->qp[i], errno,
			     false))
			goto out;
		set_add(qpn_set, s->qp[i]->qp_num);
	}
	for (i = 0; i < 2; i++)
		if (mws_connect(s, i))
			goto out;
	for (i = 0; i < MWS_WINDOWS; i++) {
		t0 = call_begin("mw storm ibv_alloc_mw");
		atomic_store(&s->mw[i], ibv_alloc_mw(s->pd, IBV_MW_TYPE_2));
		chk_ptr("mw storm ibv_alloc_mw", t0, atomic_load(&s->mw[i]),
			errno, false);
	}

	s->end = vu_now() + opt.storm_secs;
	for (i = 0; i < nthr; i++) {
		struct thr *t = &thr_slot[1 + i];

		t->rng = rnd() ^ (uint64_t)i ^ 0x3757;
		t->id = 1 + i;
		args[i] = (struct mws_arg){ s, t };
		if (pthread_create(&tid[i], NULL, i ? mws_poster : mws_racer,
				   &args[i]))
			break;
		started++;
	}
	for (i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	atomic_fetch_add(&st_mw_storms, 1);
	atomic_fetch_add(&st_mw_pairs, atomic_load(&s->binds));
	info("mw storm: %ld BIND_MW/LOCAL_INV pairs posted, %ld posts "
	     "refused, %ld windows deallocated under them",
	     atomic_load(&s->binds), atomic_load(&s->posted_err),
	     atomic_load(&s->deallocs));
out:
	for (i = 0; i < 2; i++) {
		if (!s->qp[i])
			continue;
		t0 = call_begin("mw storm ibv_destroy_qp");
		chk("mw storm ibv_destroy_qp", t0, ibv_destroy_qp(s->qp[i]),
		    false);
	}
	for (i = 0; i < MWS_WINDOWS; i++) {
		struct ibv_mw *mw = atomic_load(&s->mw[i]);

		if (!mw)
			continue;
		t0 = call_begin("mw storm ibv_dealloc_mw");
		chk("mw storm ibv_dealloc_mw", t0, ibv_dealloc_mw(mw), false);
	}
	if (s->mr) {
		/* every window is gone: nothing may hold the MR now */
		t0 = call_begin("mw storm ibv_dereg_mr");
		if (chk("mw storm ibv_dereg_mr", t0, ibv_dereg_mr(s->mr),
			false)) {
			atomic_fetch_add(&st_bad, 1);
			bad("mw storm: the MR does not deregister with every "
			    "window deallocated (a window left bound to it)");
		}
	}
	if (s->cq) {
		t0 = call_begin("mw storm ibv_destroy_cq");
		chk("mw storm ibv_destroy_cq", t0, ibv_destroy_cq(s->cq),
		    false);
	}
	if (s->pd) {
		t0 = call_begin("mw storm ibv_dealloc_pd");
		chk("mw storm ibv_dealloc_pd", t0, ibv_dealloc_pd(s->pd),
		    false);
	}
	pthread_mutex_destroy(&s->lock);
	free(s->mem);
	free(s);
}
