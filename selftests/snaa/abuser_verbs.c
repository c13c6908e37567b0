// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * abuser: devices, memory, contexts, objects, QP states, posting.
 * See abuser.c.
 */
#define _GNU_SOURCE

#include "abuser.h"

/* ------------------------------------------------------------------ */
/* Devices, memory                                                     */
/* ------------------------------------------------------------------ */

struct devinfo devs[2];
struct ibv_device **dev_list;
int ndev_list;

uint8_t *pool;			/* POOL_LEN bytes, RW, never freed */
uint8_t *ro_zero;		/* PROT_READ anonymous: zero page */
uint8_t *ro_pat;			/* PROT_READ memfd with a pattern */
uint8_t *hole;			/* an unmapped address range */
uint8_t *prot_none;		/* PROT_NONE mapping */
uint8_t *big_lazy;		/* 256 MiB MAP_NORESERVE, non-root */
uint8_t ro_byte(size_t i)
{
	return (uint8_t)(i * 13 + 7);
}

int memory_setup(void)
{
	struct rlimit rl;
	int fd, i;
	uint8_t *p;

	/* a PROT_NONE guard page after the pool: "past its end" is
	 * unmapped for sure */
	pool = mmap(NULL, POOL_LEN + PAGE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ro_zero = mmap(NULL, RO_LEN, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	prot_none = mmap(NULL, RO_LEN, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
	/* below vm.mmap_min_addr (64 KiB): nothing is ever mapped there */
	hole = (uint8_t *)(uintptr_t)0x2000;
	if (pool == MAP_FAILED || ro_zero == MAP_FAILED ||
	    prot_none == MAP_FAILED ||
	    mprotect(pool + POOL_LEN, PAGE, PROT_NONE))
		return -1;
	for (i = 0; i < (int)POOL_LEN; i += 8)
		*(uint64_t *)(pool + i) = WRID_TAG | (uint64_t)i;
	fd = memfd_create("abuser-ro", 0);
	if (fd < 0 || ftruncate(fd, RO_LEN))
		return -1;
	p = mmap(NULL, RO_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -1;
	for (i = 0; i < (int)RO_LEN; i++)
		p[i] = ro_byte((size_t)i);
	munmap(p, RO_LEN);
	ro_pat = mmap(NULL, RO_LEN, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (ro_pat == MAP_FAILED)
		return -1;
	if (geteuid() != 0 && !getrlimit(RLIMIT_MEMLOCK, &rl) &&
	    rl.rlim_cur < BIG_LAZY_LEN) {
		big_lazy = mmap(NULL, BIG_LAZY_LEN, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
				-1, 0);
		if (big_lazy == MAP_FAILED)
			big_lazy = NULL;
	}
	return 0;
}

bool ro_memory_intact(void)
{
	size_t i;

	for (i = 0; i < RO_LEN; i++) {
		if (ro_zero[i]) {
			vu_diag("read-only anonymous memory (the zero page) "
				"has 0x%02x at offset %zu", ro_zero[i], i);
			return false;
		}
		if (ro_pat[i] != ro_byte(i)) {
			vu_diag("read-only memfd mapping has 0x%02x at offset "
				"%zu, expected 0x%02x", ro_pat[i], i,
				ro_byte(i));
			return false;
		}
	}
	return true;
}

/* ------------------------------------------------------------------ */
/* Objects                                                             */
/* ------------------------------------------------------------------ */

struct actx ctxs[NCTX];

/* Every QPN this process ever had, and QPs whose rings we scribbled on
 * without knowing the layout ("wild": their wr_ids are unchecked). */
_Atomic uint32_t qpn_set[QPN_SET];
_Atomic uint32_t wild_set[QPN_SET];

void set_add(_Atomic uint32_t *set, uint32_t qpn)
{
	uint32_t h = (qpn * 2654435761u) % QPN_SET, i, exp;

	for (i = 0; i < QPN_SET; i++, h = (h + 1) % QPN_SET) {
		exp = 0;
		if (atomic_load(&set[h]) == qpn + 1)
			return;
		if (atomic_compare_exchange_strong(&set[h], &exp, qpn + 1))
			return;
		if (exp == qpn + 1)
			return;
	}
}

static bool set_has(_Atomic uint32_t *set, uint32_t qpn)
{
	uint32_t h = (qpn * 2654435761u) % QPN_SET, i, v;

	for (i = 0; i < QPN_SET; i++, h = (h + 1) % QPN_SET) {
		v = atomic_load(&set[h]);
		if (!v)
			return false;
		if (v == qpn + 1)
			return true;
	}
	return false;
}

/* QPNs of destroyed QPs, as destinations */
uint32_t dead_qpn[32];
int ndead;

/* the victim's, from --victim-info: never used as destinations */
uint32_t victim_qpn[8];
int nvictim_qpn;
struct canary canaries[4];
int ncanary;

static bool is_victim_qpn(uint32_t qpn)
{
	int i;

	for (i = 0; i < nvictim_qpn; i++)
		if (victim_qpn[i] == qpn)
			return true;
	return false;
}

uint64_t tag_wrid(void)
{
	return WRID_TAG | (rnd() & ~WRID_MASK);
}

/* ------------------------------------------------------------------ */
/* Events and completions                                              */
/* ------------------------------------------------------------------ */

static void set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl >= 0)
		fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* Read and acknowledge whatever events are queued (never block). */
void drain_events(struct actx *c)
{
	struct ibv_async_event ev;
	struct ibv_cq *cq;
	void *cq_ctx;
	int n;

	for (n = 0; n < 64 && !ibv_get_async_event(c->ctx, &ev); n++)
		ibv_ack_async_event(&ev);
	if (c->ch)
		for (n = 0; n < 64 &&
		     !ibv_get_cq_event(c->ch, &cq, &cq_ctx); n++)
			ibv_ack_cq_events(cq, 1);
}

void check_wc(const struct ibv_wc *wc, bool tainted)
{
	atomic_fetch_add(&st_cqes, 1);
	if (tainted) {
		atomic_fetch_add(&st_cqe_unchecked, 1);
		return;
	}
	if (!set_has(qpn_set, wc->qp_num)) {
		atomic_fetch_add(&st_cqe_bad, 1);
		bad("CQE of QP 0x%x, which is not one of ours (wr_id 0x%"
		    PRIx64 " status %d)", wc->qp_num, wc->wr_id, wc->status);
		return;
	}
	if ((int)wc->status < 0 || wc->status > IBV_WC_GENERAL_ERR) {
		atomic_fetch_add(&st_cqe_bad, 1);
		bad("CQE with status %d (QP 0x%x)", wc->status, wc->qp_num);
		return;
	}
	if ((wc->wr_id & WRID_MASK) != WRID_TAG &&
	    !set_has(wild_set, wc->qp_num)) {
		atomic_fetch_add(&st_cqe_bad, 1);
		bad("CQE with wr_id 0x%" PRIx64 ", which we never posted (QP "
		    "0x%x status %d)", wc->wr_id, wc->qp_num, wc->status);
	}
}

void poll_one(struct ibv_cq *cq, bool tainted)
{
	struct ibv_wc wc[16];
	double t0;
	int n, i;

	t0 = call_begin("ibv_poll_cq");
	n = ibv_poll_cq(cq, 16, wc);
	call_end("ibv_poll_cq", t0);
	if (n < 0) {
		outcome("ibv_poll_cq", -n, false);
		return;
	}
	for (i = 0; i < n && i < 16; i++)
		check_wc(&wc[i], tainted);
	if (n > 16) {
		atomic_fetch_add(&st_bad, 1);
		bad("ibv_poll_cq(16) returned %d", n);
	}
}

void poll_all(struct actx *c)
{
	int i;

	for (i = 0; i < NCQ; i++)
		if (c->cq[i].cq && !c->cq[i].killed)
			poll_one(c->cq[i].cq, c->cq[i].tainted);
}

/* ------------------------------------------------------------------ */
/* Contexts and objects                                                */
/* ------------------------------------------------------------------ */

int open_ctx(int slot, int dev)
{
	struct actx *c = &ctxs[slot];
	double t0;
	int err;

	memset(c, 0, sizeof(*c));
	t0 = call_begin("ibv_open_device");
	c->ctx = ibv_open_device(devs[dev].dev);
	err = errno;
	if (!chk_ptr("ibv_open_device", t0, c->ctx, err, false))
		return -1;
	c->dev = dev;
	set_nonblock(c->ctx->async_fd);
	if (chance(70)) {
		t0 = call_begin("ibv_create_comp_channel");
		c->ch = ibv_create_comp_channel(c->ctx);
		err = errno;
		if (chk_ptr("ibv_create_comp_channel", t0, c->ch, err, false))
			set_nonblock(c->ch->fd);
	}
	return 0;
}

int live_ctx(void)
{
	int i, n = 0, pick[NCTX];

	for (i = 0; i < NCTX; i++)
		if (ctxs[i].ctx)
			pick[n++] = i;
	return n ? pick[rn((uint32_t)n)] : -1;
}

void unmap_ring(struct ring *r)
{
	if (r->p)
		munmap(r->p, r->len);
	r->p = NULL;
}

/*
 * Close a context with everything alive: libibverbs closes the uverbs
 * fds, the kernel destroys the objects once the last mapping is gone
 * (now if we unmap the rings too, else at exit).  Its objects are
 * forgotten without being destroyed.
 */
void close_ctx_abruptly(struct actx *c)
{
	bool unmap = chance(50);
	double t0;
	int i;

	drain_events(c);
	if (unmap) {
		for (i = 0; i < NQP; i++) {
			unmap_ring(&c->qp[i].sq);
			unmap_ring(&c->qp[i].rq);
		}
		for (i = 0; i < NCQ; i++)
			unmap_ring(&c->cq[i].r);
		for (i = 0; i < NALIAS; i++)
			unmap_ring(&c->alias[i]);
	}
	t0 = call_begin("ibv_close_device");
	chk("ibv_close_device (objects alive)", t0, ibv_close_device(c->ctx),
	    false);
	atomic_fetch_add(&st_ctx_closed, 1);
	memset(c, 0, sizeof(*c));
}

static int free_slot_pd(struct actx *c)
{
	int i;

	for (i = 0; i < NPD; i++)
		if (!c->pd[i].pd)
			return i;
	return -1;
}

void act_alloc_pd(struct actx *c)
{
	int s = free_slot_pd(c), err;
	double t0;

	if (s < 0)
		return;
	t0 = call_begin("ibv_alloc_pd");
	c->pd[s].pd = ibv_alloc_pd(c->ctx);
	err = errno;
	chk_ptr("ibv_alloc_pd", t0, c->pd[s].pd, err, false);
}

void act_dealloc_pd(struct actx *c)
{
	int s = LIVE_SLOT(c->pd, NPD, pd, 1);
	double t0;

	if (s < 0)
		return;
	t0 = call_begin("ibv_dealloc_pd");
	if (!chk("ibv_dealloc_pd", t0, ibv_dealloc_pd(c->pd[s].pd), false))
		c->pd[s].pd = NULL;
}

static int rand_access(void)
{
	static const uint32_t ok[] = {
		0, IBV_ACCESS_LOCAL_WRITE,
		IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
		IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		IBV_ACCESS_REMOTE_READ,
	};
	static const uint32_t odd[] = {
		IBV_ACCESS_REMOTE_WRITE, IBV_ACCESS_REMOTE_ATOMIC,
		IBV_ACCESS_MW_BIND, IBV_ACCESS_ZERO_BASED,
		IBV_ACCESS_ON_DEMAND, IBV_ACCESS_HUGETLB,
		IBV_ACCESS_RELAXED_ORDERING, 1u << 30, 0x7fffffff,
	};

	if (chance(85))
		return (int)PICK(ok);
	return (int)(PICK(odd) | (chance(50) ? IBV_ACCESS_LOCAL_WRITE : 0));
}

/* A ring of any live object of c, or NULL. */
struct ring *any_ring(struct actx *c, int *cq_owner, int *qp_owner)
{
	struct ring *r[NQP * 2 + NCQ + NALIAS];
	int own_cq[NQP * 2 + NCQ + NALIAS], own_qp[NQP * 2 + NCQ + NALIAS];
	int i, n = 0, k;

	for (i = 0; i < NQP; i++) {
		if (c->qp[i].qp && c->qp[i].sq.p) {
			own_cq[n] = -1;
			own_qp[n] = i;
			r[n++] = &c->qp[i].sq;
		}
		if (c->qp[i].qp && c->qp[i].rq.p) {
			own_cq[n] = -1;
			own_qp[n] = i;
			r[n++] = &c->qp[i].rq;
		}
	}
	for (i = 0; i < NCQ; i++) {
		if (c->cq[i].cq && c->cq[i].r.p) {
			own_cq[n] = i;
			own_qp[n] = -1;
			r[n++] = &c->cq[i].r;
		}
	}
	for (i = 0; i < NALIAS; i++) {
		if (c->alias[i].p) {
			own_cq[n] = -2;
			own_qp[n] = -2;
			r[n++] = &c->alias[i];
		}
	}
	if (!n)
		return NULL;
	k = (int)rn((uint32_t)n);
	*cq_owner = own_cq[k];
	*qp_owner = own_qp[k];
	return r[k];
}

/* Everything of c that may be affected by writes to an unknown ring. */
static void taint_all(struct actx *c)
{
	int i;

	for (i = 0; i < NCQ; i++)
		c->cq[i].tainted = true;
	for (i = 0; i < NQP; i++)
		if (c->qp[i].qp)
			set_add(wild_set, c->qp[i].qp->qp_num);
}

/* The ring's owner will see garbage written by us (or by the kernel on
 * our behalf, through an MR on it). */
void taint_owner(struct actx *c, int cq, int qp)
{
	if (cq >= 0)
		c->cq[cq].tainted = true;
	else if (qp >= 0)
		set_add(wild_set, c->qp[qp].qp->qp_num);
	else
		taint_all(c);
}

void act_reg_mr(struct actx *c)
{
	int s = FREE_SLOT(c->mr, NMR, mr), pd, access = rand_access(), err;
	uint8_t *addr = pool;
	size_t len = 1;
	uint64_t iova = 0;
	bool must_fail = false, use_iova = chance(15);
	int cq_owner = -1, qp_owner = -1;
	const char *what = "ibv_reg_mr(pool)";
	struct ring *r;
	struct ibv_mr *mr;
	double t0;

	if (s < 0)
		return;
	pd = LIVE_SLOT(c->pd, NPD, pd, 1);
	if (pd < 0)
		return;
	switch (rn(20)) {
	case 0: case 1: case 2: case 3: case 4: case 5: case 6: case 7:
		len = chance(70) ? 1 + rn(64 * 1024) : 1 + rn(MR_MAX_LEN);
		addr = pool + rn((uint32_t)(POOL_LEN - len));
		break;
	case 8:
		what = "ibv_reg_mr(read-only zero page)";
		addr = ro_zero + rn(RO_LEN / 2);
		len = 1 + rn(RO_LEN / 2);
		must_fail = access & IBV_ACCESS_LOCAL_WRITE;
		break;
	case 9:
		what = "ibv_reg_mr(read-only memfd)";
		addr = ro_pat + rn(RO_LEN / 2);
		len = 1 + rn(RO_LEN / 2);
		must_fail = access & IBV_ACCESS_LOCAL_WRITE;
		break;
	case 10:
		what = "ibv_reg_mr(unmapped)";
		addr = hole + rn(0x4000);
		len = 1 + rn(0x4000);
		must_fail = true;
		break;
	case 11:
		/* read-only registrations pin with FOLL_FORCE up to 6.1
		 * (dropped in 6.2): only a writable one must fail */
		what = "ibv_reg_mr(PROT_NONE)";
		addr = prot_none;
		len = 1 + rn(RO_LEN);
		must_fail = access & IBV_ACCESS_LOCAL_WRITE;
		break;
	case 12:
		what = "ibv_reg_mr(length 0)";
		addr = pool + rn(1000);
		len = 0;
		must_fail = true;
		break;
	case 13: {
		static const uint64_t huge[] = {
			(1ull << 40) + 1, 1ull << 63, UINT64_MAX,
			UINT64_MAX - 4095, 1ull << 48,
		};

		what = "ibv_reg_mr(huge length)";
		addr = pool + rn(1000);
		len = (size_t)huge[rn(5)];
		must_fail = true;
		break;
	}
	case 14:
		/* into the PROT_NONE guard page: see PROT_NONE below */
		what = "ibv_reg_mr(pool, past its end)";
		addr = pool + POOL_LEN - 1 - rn(4096);
		len = 4096 + rn(1u << 20);
		must_fail = access & IBV_ACCESS_LOCAL_WRITE;
		break;
	case 15:
		if (big_lazy) {
			what = "ibv_reg_mr(256 MiB lazy, over RLIMIT_MEMLOCK?)";
			addr = big_lazy;
			len = BIG_LAZY_LEN;
		} else {
			len = 1 + rn(4096);
			addr = pool + rn((uint32_t)(POOL_LEN - len));
		}
		break;
	case 16: case 17:
		r = any_ring(c, &cq_owner, &qp_owner);
		if (!r)
			return;
		what = "ibv_reg_mr(a ring)";
		addr = r->p + rn((uint32_t)r->len);
		len = 1 + rn((uint32_t)(r->p + r->len - addr));
		break;
	default:
		/* unaligned odd bits of the pool */
		len = 1 + 2 * rn(5000);
		addr = pool + 1 + 2 * rn((uint32_t)((POOL_LEN - len) / 2 - 1));
		break;
	}
	/* unsupported bits: EOPNOTSUPP or EINVAL, not asserted */
	if (!(access & ~(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |
			 IBV_ACCESS_RELAXED_ORDERING)) &&
	    (access & (IBV_ACCESS_REMOTE_WRITE |
			    IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IBV_ACCESS_LOCAL_WRITE))
		must_fail = true;	/* IBA 10.6.3.1 */
	if (use_iova) {
		static const uint64_t iovas[] = {
			0, 1, 0x1000, 0xfffffffffffff000ull,
			0x8000000000000000ull,
		};

		iova = chance(50) ? iovas[rn(5)] : rnd();
		/* the core wants iova and address at the same page offset */
		if (chance(80))
			iova = (iova & ~(PAGE - 1)) |
			       ((uintptr_t)addr & (PAGE - 1));
		if (len && iova + len < iova)
			must_fail = true;	/* wraps */
		t0 = call_begin("ibv_reg_mr_iova");
		mr = ibv_reg_mr_iova(c->pd[pd].pd, addr, len, iova, access);
	} else {
		iova = (uintptr_t)addr;
		t0 = call_begin(what);
		mr = ibv_reg_mr(c->pd[pd].pd, addr, len, access);
	}
	err = errno;
	mr = chk_ptr(use_iova ? "ibv_reg_mr_iova" : what, t0, mr, err,
		     must_fail);
	if (!mr)
		return;
	c->mr[s] = (struct o_mr){ mr, pd, addr, len, iova, access };
	if (cq_owner != -1 || qp_owner != -1)
		taint_owner(c, cq_owner, qp_owner);
}

void act_dereg_mr(struct actx *c)
{
	int s = LIVE_SLOT(c->mr, NMR, mr, 1);
	double t0;

	if (s < 0)
		return;
	t0 = call_begin("ibv_dereg_mr");
	if (!chk("ibv_dereg_mr", t0, ibv_dereg_mr(c->mr[s].mr), false))
		memset(&c->mr[s], 0, sizeof(c->mr[s]));
}

void act_rereg_mr(struct actx *c)
{
	int s = LIVE_SLOT(c->mr, NMR, mr, 1);
	double t0;
	int ret;

	if (s < 0 || !c->pd[c->mr[s].pd].pd)
		return;
	t0 = call_begin("ibv_rereg_mr");
	ret = ibv_rereg_mr(c->mr[s].mr, (int)rn(8), c->pd[c->mr[s].pd].pd,
			   pool, 4096, IBV_ACCESS_LOCAL_WRITE);
	/* IBV_REREG_MR_ERR_* are negative by definition */
	call_end("ibv_rereg_mr", t0);
	if (ret < 0)
		ret = EINVAL;
	if (!outcome("ibv_rereg_mr", ret, false)) {
		/* it now covers pool[0, 4096) (or whatever it said) */
		c->mr[s].addr = pool;
		c->mr[s].len = 4096;
		c->mr[s].iova = (uintptr_t)pool;
		c->mr[s].access = IBV_ACCESS_LOCAL_WRITE;
	}
}

int find_new_ring(const struct mapent *before, int nb,
			 struct mapent *out, int max)
{
	static struct mapent after[MAPS_MAX];
	int na = maps_read(after);

	return maps_new(before, nb, after, na, out, max);
}

void act_create_cq(struct actx *c)
{
	static const uint32_t sizes[] = {
		1, 2, 3, 15, 16, 17, 63, 64, 100, 255, 256, 1000, 4096,
		SNAA_CQE_MAX, SNAA_CQE_MAX + 1, 0, 0x7fffffff, 0xffffffff,
	};
	static struct mapent before[MAPS_MAX];
	struct mapent nw[4];
	int s = FREE_SLOT(c->cq, NCQ, cq), nb, cqe, vec = 0, err, n;
	bool must_fail;
	struct ibv_cq *cq;
	double t0;

	if (s < 0)
		return;
	cqe = chance(80) ? (int)(1 + rn(300)) : (int)PICK(sizes);
	if (cqe > 8192 && chance(70))
		cqe = 8192;	/* keep memory bounded, mostly */
	if (chance(10))
		vec = chance(50) ? c->ctx->num_comp_vectors : (int)rnd();
	must_fail = cqe < 1 || cqe > SNAA_CQE_MAX || vec < 0 ||
		    vec >= c->ctx->num_comp_vectors;
	nb = maps_read(before);
	t0 = call_begin("ibv_create_cq");
	cq = ibv_create_cq(c->ctx, cqe, NULL, chance(50) ? c->ch : NULL, vec);
	err = errno;
	cq = chk_ptr("ibv_create_cq", t0, cq, err, must_fail);
	if (!cq)
		return;
	memset(&c->cq[s], 0, sizeof(c->cq[s]));
	c->cq[s].cq = cq;
	n = find_new_ring(before, nb, nw, 4);
	if (n == 1)
		ring_set(&c->cq[s].r, &nw[0], (uint32_t)cq->cqe,
			 sizeof(struct snaa_cqe));
	else
		info("create_cq: %d new mappings", n);
}

void act_resize_cq(struct actx *c)
{
	static const uint32_t sizes[] = {
		1, 2, 4, 5, 64, 1000, SNAA_CQE_MAX, SNAA_CQE_MAX + 1, 0,
		0xffffffff,
	};
	static struct mapent before[MAPS_MAX];
	struct mapent nw[4];
	int s = LIVE_SLOT(c->cq, NCQ, cq, !c->cq[_i].killed), nb, cqe, n;
	double t0;

	if (s < 0)
		return;
	cqe = chance(70) ? (int)(1 + rn(500)) : (int)PICK(sizes);
	nb = maps_read(before);
	t0 = call_begin("ibv_resize_cq");
	if (chk("ibv_resize_cq", t0, ibv_resize_cq(c->cq[s].cq, cqe),
		cqe < 1 || cqe > SNAA_CQE_MAX))
		return;
	n = find_new_ring(before, nb, nw, 4);
	if (n == 1)
		ring_set(&c->cq[s].r, &nw[0], (uint32_t)c->cq[s].cq->cqe,
			 sizeof(struct snaa_cqe));
	else
		c->cq[s].r.p = NULL;	/* lost track: no more writes */
}

void act_destroy_cq(struct actx *c)
{
	int s = LIVE_SLOT(c->cq, NCQ, cq, !c->cq[_i].killed);
	double t0;

	if (s < 0)
		return;
	t0 = call_begin("ibv_destroy_cq");
	if (!chk("ibv_destroy_cq", t0, ibv_destroy_cq(c->cq[s].cq), false))
		memset(&c->cq[s], 0, sizeof(c->cq[s]));
}

void act_notify(struct actx *c)
{
	int s = LIVE_SLOT(c->cq, NCQ, cq, !c->cq[_i].killed);
	double t0;

	if (s < 0)
		return;
	t0 = call_begin("ibv_req_notify_cq");
	chk("ibv_req_notify_cq", t0, ibv_req_notify_cq(c->cq[s].cq,
						       (int)rn(2)), false);
}

static int nbig(void)
{
	int i, j, n = 0;

	for (i = 0; i < NCTX; i++)
		for (j = 0; j < NQP; j++)
			n += ctxs[i].qp[j].qp && ctxs[i].qp[j].big;
	return n;
}

uint32_t sq_stride(uint32_t sge, uint32_t inl)
{
	uint32_t d = sge * 16 > inl ? sge * 16 : inl;

	return pow2_up((uint32_t)sizeof(struct snaa_sqe) + d);
}

uint32_t rq_stride(uint32_t sge)
{
	return pow2_up((uint32_t)sizeof(struct snaa_rqe) + sge * 16);
}

void act_create_qp(struct actx *c)
{
	static const uint32_t wrs[] = {
		0, 1, 2, 3, 64, 255, 256, SNAA_WR_MAX, SNAA_WR_MAX + 1,
		0xffffffff,
	};
	static const uint32_t sges[] = { 0, 1, 31, 32, 33, 255 };
	static const uint32_t inls[] = {
		0, 1, 64, 255, 256, 257, 4096, 0xffffffff,
	};
	/* the device has UC, RC and UD QPs; the rest must be refused */
	static const uint32_t bad_types[] = {
		IBV_QPT_RAW_PACKET, IBV_QPT_DRIVER, IBV_QPT_XRC_SEND, 77, 0,
	};
	static struct mapent before[MAPS_MAX];
	struct ibv_qp_init_attr ia;
	struct mapent nw[4];
	int s = FREE_SLOT(c->qp, NQP, qp), pd, scq, rcq, nb, n, err, i;
	bool must_fail;
	struct ibv_qp *qp;
	size_t sq_bytes, rq_bytes;
	double t0;

	if (s < 0)
		return;
	pd = LIVE_SLOT(c->pd, NPD, pd, 1);
	scq = LIVE_SLOT(c->cq, NCQ, cq, !c->cq[_i].killed);
	rcq = chance(50) ? scq : LIVE_SLOT(c->cq, NCQ, cq, !c->cq[_i].killed);
	if (pd < 0 || scq < 0 || rcq < 0)
		return;
	memset(&ia, 0, sizeof(ia));
	i = (int)rn(100);
	ia.qp_type = i < 55 ? IBV_QPT_UC : i < 80 ? IBV_QPT_RC :
		     i < 92 ? IBV_QPT_UD : (enum ibv_qp_type)PICK(bad_types);
	ia.send_cq = c->cq[scq].cq;
	ia.recv_cq = c->cq[rcq].cq;
	ia.sq_sig_all = (int)rn(2);
	if (chance(75)) {
		ia.cap.max_send_wr = 1 + rn(64);
		ia.cap.max_recv_wr = 1 + rn(64);
		ia.cap.max_send_sge = 1 + rn(4);
		ia.cap.max_recv_sge = 1 + rn(4);
		ia.cap.max_inline_data = chance(50) ? rn(SNAA_INLINE_MAX + 1) :
				0;
	} else {
		ia.cap.max_send_wr = PICK(wrs);
		ia.cap.max_recv_wr = PICK(wrs);
		ia.cap.max_send_sge = PICK(sges);
		ia.cap.max_recv_sge = PICK(sges);
		ia.cap.max_inline_data = PICK(inls);
	}
	must_fail = (ia.qp_type != IBV_QPT_UC && ia.qp_type != IBV_QPT_RC &&
		     ia.qp_type != IBV_QPT_UD) ||
		    ia.cap.max_send_wr > SNAA_WR_MAX ||
		    ia.cap.max_recv_wr > SNAA_WR_MAX ||
		    ia.cap.max_send_sge > SNAA_SGE_MAX ||
		    ia.cap.max_recv_sge > SNAA_SGE_MAX ||
		    ia.cap.max_inline_data > SNAA_INLINE_MAX;
	sq_bytes = (size_t)pow2_up(ia.cap.max_send_wr ? ia.cap.max_send_wr :
				   1) *
		   sq_stride(ia.cap.max_send_sge, ia.cap.max_inline_data);
	rq_bytes = (size_t)pow2_up(ia.cap.max_recv_wr ? ia.cap.max_recv_wr :
				   1) * rq_stride(ia.cap.max_recv_sge);
	if (!must_fail && (sq_bytes > BIG_RING || rq_bytes > BIG_RING) &&
	    nbig() >= MAX_BIG)
		return;		/* memory: at most MAX_BIG big ones */
	if (chance(3)) {
		/* CQs of another context: their handles mean something else
		 * (or nothing) here */
		int o = live_ctx(), q;

		if (o >= 0 && o != c - ctxs) {
			q = LIVE_SLOT(ctxs[o].cq, NCQ, cq,
				      !ctxs[o].cq[_i].killed);
			if (q >= 0)
				ia.send_cq = ctxs[o].cq[q].cq;
		}
	}
	nb = maps_read(before);
	t0 = call_begin("ibv_create_qp");
	qp = ibv_create_qp(c->pd[pd].pd, &ia);
	err = errno;
	qp = chk_ptr("ibv_create_qp", t0, qp, err, must_fail);
	if (!qp)
		return;
	set_add(qpn_set, qp->qp_num);
	memset(&c->qp[s], 0, sizeof(c->qp[s]));
	c->qp[s] = (struct o_qp){ .qp = qp, .pd = pd, .scq = scq, .rcq = rcq,
				  .cap = ia.cap };
	c->qp[s].big = sq_bytes > BIG_RING || rq_bytes > BIG_RING;
	n = find_new_ring(before, nb, nw, 4);
	if (n != 2) {
		info("create_qp: %d new mappings", n);
		set_add(wild_set, qp->qp_num);
		return;
	}
	/* the SQ is created idle, the RQ is not */
	i = ((struct snaa_ring *)nw[0].start)->flags & SNAA_RING_F_IDLE ? 0 : 1;
	ring_set(&c->qp[s].sq, &nw[i], ia.cap.max_send_wr,
		 sq_stride(ia.cap.max_send_sge, ia.cap.max_inline_data));
	ring_set(&c->qp[s].rq, &nw[!i], ia.cap.max_recv_wr,
		 rq_stride(ia.cap.max_recv_sge));
	ring_pretag(&c->qp[s].sq);
	ring_pretag(&c->qp[s].rq);
	if (!c->qp[s].sq.geo || !c->qp[s].rq.geo)
		set_add(wild_set, qp->qp_num);
}

void forget_qp(struct o_qp *q)
{
	if (ndead < 32)
		dead_qpn[ndead++] = q->qp->qp_num;
	else
		dead_qpn[rn(32)] = q->qp->qp_num;
	memset(q, 0, sizeof(*q));
}

void act_destroy_qp(struct actx *c)
{
	int s = LIVE_SLOT(c->qp, NQP, qp, !c->qp[_i].killed);
	double t0;

	if (s < 0)
		return;
	t0 = call_begin("ibv_destroy_qp");
	if (!chk("ibv_destroy_qp", t0, ibv_destroy_qp(c->qp[s].qp), false))
		forget_qp(&c->qp[s]);
}

/* ------------------------------------------------------------------ */
/* QP states                                                           */
/* ------------------------------------------------------------------ */

/* A live QP on device dev of any context, not q itself. */
static struct ibv_qp *peer_on(int dev, struct ibv_qp *not)
{
	struct ibv_qp *p[NCTX * NQP];
	int i, j, n = 0;

	for (i = 0; i < NCTX; i++) {
		if (!ctxs[i].ctx || ctxs[i].dev != dev)
			continue;
		for (j = 0; j < NQP; j++)
			if (ctxs[i].qp[j].qp && !ctxs[i].qp[j].killed &&
			    ctxs[i].qp[j].qp != not)
				p[n++] = ctxs[i].qp[j].qp;
	}
	return n ? p[rn((uint32_t)n)] : NULL;
}

uint32_t rand_dest_qpn(int dev, struct ibv_qp *self)
{
	static const uint32_t odd[] = { 0, 1, 2, 15, 0xffffff, 0x1000000,
					0xffffffff };
	struct ibv_qp *p;
	uint32_t q;

	switch (rn(6)) {
	case 0:
		q = ndead ? dead_qpn[rn((uint32_t)ndead)] : self->qp_num;
		break;
	case 1:
		q = PICK(odd);
		break;
	case 2:
		q = self->qp_num;
		break;
	default:
		p = peer_on(dev, self);
		q = p ? p->qp_num : self->qp_num;
	}
	return is_victim_qpn(q) ? self->qp_num : q;
}

static void fill_av(struct ibv_ah_attr *ah, int self_dev, int dst_dev,
		    bool hostile)
{
	static const char *const dgids[] = {
		"::", "ff02::1", "::ffff:224.0.0.1", "::ffff:255.255.255.255",
		"::ffff:0.0.0.0", "::ffff:127.0.0.1", "::1", "fe80::1",
		"2001:2::1", "2001:2::77", "::ffff:198.18.0.77",
	};

	vu_fill_av(ah, devs[self_dev].vd.gid_idx, &devs[dst_dev].vd.gid);
	if (!hostile)
		return;
	switch (rn(8)) {
	case 0: ah->is_global = 0; break;
	case 1: ah->grh.sgid_index = (uint8_t)rnd(); break;
	case 2:
		snaa_gid_from_ip(dgids[rn(sizeof(dgids) / sizeof(dgids[0]))],
			     &ah->grh.dgid);
		break;
	case 3: ah->port_num = (uint8_t)PICK(((const uint32_t[]){ 0, 2, 255 }));
		break;
	case 4: ah->grh.hop_limit = (uint8_t)rnd(); break;
	case 5: ah->grh.traffic_class = (uint8_t)rnd(); break;
	case 6: ah->grh.flow_label = (uint32_t)rnd(); break;
	default:
		ah->sl = (uint8_t)rnd();
		ah->dlid = (uint16_t)rnd();
		ah->static_rate = (uint8_t)rnd();
	}
}

/* The valid RESET -> INIT -> RTR -> RTS way to a peer QP. */
void act_connect(struct actx *c)
{
	int s = LIVE_SLOT(c->qp, NQP, qp, !c->qp[_i].killed), dd, stop;
	struct ibv_qp_attr a;
	struct ibv_qp *qp, *peer;
	uint32_t dqpn;
	double t0;

	if (s < 0)
		return;
	qp = c->qp[s].qp;
	dd = opt.ndev == 2 && chance(40) ? !c->dev : c->dev;
	peer = peer_on(dd, qp);
	dqpn = peer && !is_victim_qpn(peer->qp_num) ? peer->qp_num :
						      qp->qp_num;
	if (dd != c->dev && !peer)
		dd = c->dev;
	if (is_victim_qpn(dqpn))
		return;
	stop = chance(85) ? 3 : (int)rn(3);

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RESET;
	t0 = call_begin("ibv_modify_qp(RESET)");
	chk("ibv_modify_qp(RESET)", t0, ibv_modify_qp(qp, &a, IBV_QP_STATE),
	    false);
	t0 = call_begin("ibv_modify_qp(INIT)");
	if (chk("ibv_modify_qp(INIT)", t0,
		vu_qp_init(qp, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE), false) || stop < 1)
		return;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = (enum ibv_mtu)(IBV_MTU_256 + rn(5));
	if (a.path_mtu > devs[c->dev].vd.port.active_mtu)
		a.path_mtu = devs[c->dev].vd.port.active_mtu;
	a.dest_qp_num = dqpn;
	a.rq_psn = (uint32_t)rnd() & 0xffffff;
	fill_av(&a.ah_attr, c->dev, dd, false);
	t0 = call_begin("ibv_modify_qp(RTR)");
	if (chk("ibv_modify_qp(RTR)", t0,
		ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV |
			      IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			      IBV_QP_RQ_PSN), false) || stop < 2)
		return;
	t0 = call_begin("ibv_modify_qp(RTS)");
	chk("ibv_modify_qp(RTS)", t0, vu_qp_rts(qp, (uint32_t)rnd() &
						0xffffff), false);
}

void act_modify_random(struct actx *c)
{
	static const uint32_t bits[] = {
		IBV_QP_STATE, IBV_QP_CUR_STATE, IBV_QP_EN_SQD_ASYNC_NOTIFY,
		IBV_QP_ACCESS_FLAGS, IBV_QP_PKEY_INDEX, IBV_QP_PORT,
		IBV_QP_QKEY, IBV_QP_AV, IBV_QP_PATH_MTU, IBV_QP_TIMEOUT,
		IBV_QP_RETRY_CNT, IBV_QP_RNR_RETRY, IBV_QP_RQ_PSN,
		IBV_QP_MAX_QP_RD_ATOMIC, IBV_QP_ALT_PATH,
		IBV_QP_MIN_RNR_TIMER, IBV_QP_SQ_PSN,
		IBV_QP_MAX_DEST_RD_ATOMIC, IBV_QP_PATH_MIG_STATE,
		IBV_QP_CAP, IBV_QP_DEST_QPN, 1u << 21, 1u << 23,
		IBV_QP_RATE_LIMIT, 1u << 30,
	};
	int s = LIVE_SLOT(c->qp, NQP, qp, !c->qp[_i].killed), i, mask = 0;
	struct ibv_qp_attr a;
	struct ibv_qp *qp;
	double t0;

	if (s < 0)
		return;
	qp = c->qp[s].qp;
	memset(&a, 0, sizeof(a));
	if (chance(80))
		mask |= IBV_QP_STATE;
	for (i = (int)rn(5); i > 0; i--)
		mask |= (int)PICK(bits);
	a.qp_state = (enum ibv_qp_state)(chance(90) ? rn(7) : rn(1000));
	a.cur_qp_state = (enum ibv_qp_state)rn(8);
	a.qp_access_flags = chance(70) ? (unsigned int)rn(16) :
					 (unsigned int)rnd();
	a.pkey_index = (uint16_t)(chance(70) ? 0 : rnd());
	a.port_num = (uint8_t)(chance(70) ? 1 : rnd());
	a.qkey = (uint32_t)rnd();
	a.path_mtu = (enum ibv_mtu)(chance(80) ? 1 + rn(5) : rnd());
	a.dest_qp_num = chance(80) ? rand_dest_qpn(c->dev, qp) :
		(uint32_t)rnd();
	if (is_victim_qpn(a.dest_qp_num))
		a.dest_qp_num = qp->qp_num;
	a.rq_psn = (uint32_t)rnd();
	a.sq_psn = (uint32_t)rnd();
	a.timeout = (uint8_t)rnd();
	a.retry_cnt = (uint8_t)rnd();
	a.rnr_retry = (uint8_t)rnd();
	a.min_rnr_timer = (uint8_t)rnd();
	a.max_rd_atomic = (uint8_t)rnd();
	a.max_dest_rd_atomic = (uint8_t)rnd();
	a.en_sqd_async_notify = (uint8_t)rnd();
	a.path_mig_state = (enum ibv_mig_state)rn(4);
	a.cap.max_send_wr = (uint32_t)rnd();
	a.cap.max_recv_wr = (uint32_t)rnd();
	fill_av(&a.ah_attr, c->dev, opt.ndev == 2 ? (int)rn(2) : 0,
		chance(15));
	fill_av(&a.alt_ah_attr, c->dev, c->dev, chance(50));
	a.alt_port_num = (uint8_t)rnd();
	a.alt_pkey_index = (uint16_t)rnd();
	a.alt_timeout = (uint8_t)rnd();
	a.rate_limit = (uint32_t)rnd();
	t0 = call_begin("ibv_modify_qp(random)");
	chk("ibv_modify_qp(random)", t0, ibv_modify_qp(qp, &a, mask), false);
}

void act_query(struct actx *c)
{
	struct ibv_qp_init_attr ia;
	struct ibv_port_attr pa;
	struct ibv_qp_attr a;
	union ibv_gid gid;
	uint16_t pkey;
	uint8_t port;
	int s, idx, ret;
	double t0;

	switch (rn(4)) {
	case 0:
		s = LIVE_SLOT(c->qp, NQP, qp, !c->qp[_i].killed);
		if (s < 0)
			return;
		t0 = call_begin("ibv_query_qp");
		chk("ibv_query_qp", t0, ibv_query_qp(c->qp[s].qp, &a,
						     (int)rnd(), &ia), false);
		break;
	case 1:
		port = (uint8_t)(chance(60) ? 1 : rnd());
		t0 = call_begin("ibv_query_port");
		chk("ibv_query_port", t0, ibv_query_port(c->ctx, port, &pa),
		    port != 1);
		break;
	case 2:
		idx = chance(60) ? (int)rn(64) : (int)rnd();
		/* ibv_query_gid(3), ibv_query_pkey(3): -1 and errno on
		 * failure */
		t0 = call_begin("ibv_query_gid");
		ret = ibv_query_gid(c->ctx, (uint8_t)(chance(80) ? 1 : rnd()),
				    idx, &gid);
		chk("ibv_query_gid", t0, ret == -1 ? errno : ret, false);
		break;
	default:
		idx = chance(60) ? 0 : (int)rnd();
		t0 = call_begin("ibv_query_pkey");
		ret = ibv_query_pkey(c->ctx, 1, idx, &pkey);
		chk("ibv_query_pkey", t0, ret == -1 ? errno : ret, false);
	}
}

void act_ah(struct actx *c)
{
	int s, pd, err;
	struct ibv_ah_attr aa;
	struct ibv_ah *ah;
	double t0;

	if (chance(50)) {
		s = LIVE_SLOT(c->ah, NAH, ah, 1);
		if (s < 0)
			return;
		t0 = call_begin("ibv_destroy_ah");
		if (!chk("ibv_destroy_ah", t0, ibv_destroy_ah(c->ah[s].ah),
			 false))
			c->ah[s].ah = NULL;
		return;
	}
	s = FREE_SLOT(c->ah, NAH, ah);
	pd = LIVE_SLOT(c->pd, NPD, pd, 1);
	if (s < 0 || pd < 0)
		return;
	fill_av(&aa, c->dev, opt.ndev == 2 ? (int)rn(2) : 0, chance(40));
	t0 = call_begin("ibv_create_ah");
	ah = ibv_create_ah(c->pd[pd].pd, &aa);
	err = errno;
	c->ah[s].ah = chk_ptr("ibv_create_ah", t0, ah, err, false);
}

/* ------------------------------------------------------------------ */
/* Posting                                                             */
/* ------------------------------------------------------------------ */

/* An SGE: usually inside an MR of c, else hostile. */
void rand_sge(struct actx *c, struct ibv_sge *sg, bool hostile,
		     uint32_t maxlen)
{
	static const uint32_t lens[] = { 0, 1, 4095, 4097, 0x7fffffff,
					 0x80000000u, 0xffffffffu };
	int m = LIVE_SLOT(c->mr, NMR, mr, 1);
	struct o_mr *mr = m >= 0 ? &c->mr[m] : NULL;
	uint32_t len;
	uint64_t off;

	if (mr && mr->len && (!hostile || chance(40))) {
		off = rn((uint32_t)(mr->len < 0x7fffffff ? mr->len :
				   0x7fffffff));
		len = 1 + rn(maxlen);
		if (off + len > mr->len)
			len = (uint32_t)(mr->len - off);
		sg->addr = mr->iova + off;
		sg->length = len;
		sg->lkey = mr->mr->lkey;
		if (hostile) {
			switch (rn(5)) {
			case 0: sg->length = PICK(lens); break;
			case 1: sg->addr = mr->iova - 1 - rn(100); break;
			case 2: sg->addr = mr->iova + mr->len; break;
			case 3: sg->lkey ^= 1u << rn(32); break;
			default: sg->lkey = mr->mr->lkey & 0xff; break;
			}
		}
		return;
	}
	sg->addr = chance(50) ? (uintptr_t)(pool + rn(POOL_LEN)) : rnd();
	sg->length = chance(50) ? rn(maxlen) : PICK(lens);
	sg->lkey = chance(30) && ncanary ? canaries[0].lkey : (uint32_t)rnd();
}

static bool in_chain_s(struct ibv_send_wr *wr, struct ibv_send_wr *b)
{
	for (; wr; wr = wr->next)
		if (wr == b)
			return true;
	return false;
}

static bool in_chain_r(struct ibv_recv_wr *wr, struct ibv_recv_wr *b)
{
	for (; wr; wr = wr->next)
		if (wr == b)
			return true;
	return false;
}

struct ibv_sge sge_pool[NTHREADS_MAX][8][MAX_SGE_ARR];

/* A send WR for qp (of c): plausible, or hostile. */
static void rand_send_wr(struct actx *c, struct o_qp *q,
			 struct ibv_send_wr *wr, struct ibv_sge *sg,
			 bool hostile)
{
	static const uint32_t bad_ops[] = {
		IBV_WR_RDMA_READ, IBV_WR_ATOMIC_CMP_AND_SWP,
		IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_WR_LOCAL_INV, IBV_WR_BIND_MW,
		IBV_WR_SEND_WITH_INV, IBV_WR_TSO, IBV_WR_DRIVER1, 99,
		0xffffffff,
	};
	static const uint32_t good_ops[] = {
		IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_SEND,
		IBV_WR_SEND_WITH_IMM,
	};
	int m, i, n;

	memset(wr, 0, sizeof(*wr));
	wr->wr_id = tag_wrid();
	wr->sg_list = sg;
	wr->opcode = (enum ibv_wr_opcode)(hostile && chance(30) ?
					  PICK(bad_ops) : PICK(good_ops));
	wr->send_flags = IBV_SEND_SIGNALED;
	if (chance(30))
		wr->send_flags |= IBV_SEND_SOLICITED;
	wr->imm_data = (uint32_t)rnd();
	n = (int)(q->cap.max_send_sge ? rn(q->cap.max_send_sge + 1) : 0);
	if (hostile && chance(20))
		n = chance(50) ? (int)rn(MAX_SGE_ARR + 1) : -1 - (int)rn(5);
	wr->num_sge = n;
	for (i = 0; i < MAX_SGE_ARR; i++)
		rand_sge(c, &sg[i], hostile, 16 * 1024);
	if (hostile && chance(20))
		wr->send_flags |= chance(80) ? IBV_SEND_INLINE :
				  (unsigned int)rnd();
	if (wr->send_flags & IBV_SEND_INLINE) {
		/* the provider copies inline data: readable addresses */
		for (i = 0; i < MAX_SGE_ARR; i++) {
			sg[i].length = rn(chance(70) ? 64 : 300);
			sg[i].addr = (uintptr_t)(pool + rn(POOL_LEN - 4096));
		}
	}
	m = LIVE_SLOT(c->mr, NMR, mr, c->mr[_i].access &
		      IBV_ACCESS_REMOTE_WRITE);
	if (m >= 0 && (!hostile || chance(50))) {
		wr->wr.rdma.remote_addr = c->mr[m].iova +
			rn((uint32_t)(c->mr[m].len > 4096 ? c->mr[m].len - 4096
					: 1));
		wr->wr.rdma.rkey = c->mr[m].mr->rkey;
	} else {
		wr->wr.rdma.remote_addr = rnd();
		wr->wr.rdma.rkey = chance(30) && ncanary ? canaries[0].rkey :
				   (uint32_t)rnd();
	}
}

static void rand_recv_wr(struct actx *c, struct o_qp *q,
			 struct ibv_recv_wr *wr, struct ibv_sge *sg,
			 bool hostile)
{
	int i, n;

	memset(wr, 0, sizeof(*wr));
	wr->wr_id = tag_wrid();
	wr->sg_list = sg;
	n = (int)(q->cap.max_recv_sge ? 1 + rn(q->cap.max_recv_sge) : 0);
	if (hostile && chance(20))
		n = chance(50) ? (int)rn(MAX_SGE_ARR + 1) : -1 - (int)rn(5);
	wr->num_sge = n;
	for (i = 0; i < MAX_SGE_ARR; i++)
		rand_sge(c, &sg[i], hostile, 64 * 1024);
}

/* A full queue: to ERR (everything posted is flushed) or RESET. */
static void flush_qp(struct o_qp *q)
{
	struct ibv_qp_attr a;
	double t0;

	memset(&a, 0, sizeof(a));
	a.qp_state = chance(70) ? IBV_QPS_ERR : IBV_QPS_RESET;
	t0 = call_begin("ibv_modify_qp(flush)");
	chk("ibv_modify_qp(flush)", t0, ibv_modify_qp(q->qp, &a, IBV_QP_STATE),
	    false);
}

void post_send_chain(struct actx *c, struct o_qp *q, int tid,
			    bool hostile)
{
	struct ibv_send_wr wr[8], *bad_wr = NULL;
	int i, n = 1 + (int)rn(chance(80) ? 3 : 8), ret;
	double t0;

	for (i = 0; i < n; i++) {
		rand_send_wr(c, q, &wr[i], sge_pool[tid][i],
			     hostile && chance(60));
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
	}
	t0 = call_begin("ibv_post_send");
	ret = ibv_post_send(q->qp, wr, &bad_wr);
	chk("ibv_post_send", t0, ret, false);
	if (ret && !in_chain_s(wr, bad_wr)) {
		atomic_fetch_add(&st_bad, 1);
		bad("ibv_post_send failed with %d but *bad_wr %p is not in "
		    "the chain", ret, (void *)bad_wr);
	}
	if (ret == ENOMEM && chance(40))
		flush_qp(q);
}

void post_recv_chain(struct actx *c, struct o_qp *q, int tid,
			    bool hostile)
{
	struct ibv_recv_wr wr[8], *bad_wr = NULL;
	int i, n = 1 + (int)rn(chance(80) ? 3 : 8), ret;
	double t0;

	for (i = 0; i < n; i++) {
		rand_recv_wr(c, q, &wr[i], sge_pool[tid][i],
			     hostile && chance(60));
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
	}
	t0 = call_begin("ibv_post_recv");
	ret = ibv_post_recv(q->qp, wr, &bad_wr);
	chk("ibv_post_recv", t0, ret, false);
	if (ret && !in_chain_r(wr, bad_wr)) {
		atomic_fetch_add(&st_bad, 1);
		bad("ibv_post_recv failed with %d but *bad_wr %p is not in "
		    "the chain", ret, (void *)bad_wr);
	}
	if (ret == ENOMEM && chance(40))
		flush_qp(q);
}

void act_post_send(struct actx *c)
{
	int s = LIVE_SLOT(c->qp, NQP, qp, !c->qp[_i].killed);

	if (s >= 0)
		post_send_chain(c, &c->qp[s], me->id, chance(40));
}

void act_post_recv(struct actx *c)
{
	int s = LIVE_SLOT(c->qp, NQP, qp, !c->qp[_i].killed);

	if (s >= 0)
		post_recv_chain(c, &c->qp[s], me->id, chance(40));
}

/* An MR of context c in PD pd with access bits acc, or -1. */
static int mr_in_pd(struct actx *c, int pd, int acc)
{
	return LIVE_SLOT(c->mr, NMR, mr, c->mr[_i].pd == pd && c->mr[_i].len &&
			 (c->mr[_i].access & acc) == acc &&
			 c->mr[_i].access < 16);
}

/*
 * Well-behaved traffic between two of our QPs, so that there are real
 * completions to check: a QP in RTS whose destination is one of our
 * live QPs gets a receive WR posted on that peer and a SEND, SEND WITH
 * IMM or RDMA WRITE WITH IMM from MRs of the right PDs.
 */
void act_traffic(struct actx *c)
{
	int s = LIVE_SLOT(c->qp, NQP, qp, !c->qp[_i].killed), i, j, m, rm,
	    pm, ret;
	struct ibv_qp_init_attr ia;
	struct ibv_send_wr wr, *bad_s;
	struct ibv_recv_wr rw, *bad_r;
	struct ibv_sge sg, rsg;
	struct ibv_qp_attr a;
	struct actx *pc = NULL;
	struct o_qp *q, *p = NULL;
	double t0;

	if (s < 0)
		return;
	q = &c->qp[s];
	t0 = call_begin("ibv_query_qp");
	if (chk("ibv_query_qp", t0, ibv_query_qp(q->qp, &a, IBV_QP_STATE |
						 IBV_QP_DEST_QPN, &ia), false) ||
	    a.qp_state != IBV_QPS_RTS)
		return;
	for (i = 0; i < NCTX && !p; i++) {
		if (!ctxs[i].ctx)
			continue;
		for (j = 0; j < NQP; j++) {
			if (ctxs[i].qp[j].qp && !ctxs[i].qp[j].killed &&
			    ctxs[i].qp[j].qp->qp_num == a.dest_qp_num) {
				p = &ctxs[i].qp[j];
				pc = &ctxs[i];
				break;
			}
		}
	}
	if (!p)
		return;
	m = mr_in_pd(c, q->pd, 0);
	pm = mr_in_pd(pc, p->pd, IBV_ACCESS_LOCAL_WRITE);
	if (m < 0 || pm < 0)
		return;
	rsg.addr = pc->mr[pm].iova;
	rsg.length = (uint32_t)(pc->mr[pm].len < 65536 ? pc->mr[pm].len :
				65536);
	rsg.lkey = pc->mr[pm].mr->lkey;
	memset(&rw, 0, sizeof(rw));
	rw.wr_id = tag_wrid();
	rw.sg_list = &rsg;
	rw.num_sge = p->cap.max_recv_sge ? 1 : 0;
	t0 = call_begin("ibv_post_recv(traffic)");
	ret = ibv_post_recv(p->qp, &rw, &bad_r);
	chk("ibv_post_recv(traffic)", t0, ret, false);
	sg.addr = c->mr[m].iova;
	sg.length = (uint32_t)(c->mr[m].len < rsg.length ? c->mr[m].len :
			       rsg.length);
	sg.lkey = c->mr[m].mr->lkey;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = tag_wrid();
	wr.sg_list = &sg;
	wr.num_sge = q->cap.max_send_sge ? 1 : 0;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.opcode = chance(50) ? IBV_WR_SEND : IBV_WR_SEND_WITH_IMM;
	rm = mr_in_pd(pc, p->pd, IBV_ACCESS_REMOTE_WRITE);
	if (rm >= 0 && chance(40)) {
		wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
		wr.wr.rdma.remote_addr = pc->mr[rm].iova;
		wr.wr.rdma.rkey = pc->mr[rm].mr->rkey;
		if (sg.length > pc->mr[rm].len)
			sg.length = (uint32_t)pc->mr[rm].len;
	}
	t0 = call_begin("ibv_post_send(traffic)");
	ret = ibv_post_send(q->qp, &wr, &bad_s);
	chk("ibv_post_send(traffic)", t0, ret, false);
}
