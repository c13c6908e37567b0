// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * abuser: the rings in /proc/self/maps, raw uverbs commands, ring attacks.
 * See abuser.c.
 */
#define _GNU_SOURCE

#include <sys/ioctl.h>

#include "abuser.h"

/* ------------------------------------------------------------------ */
/* Rings found in /proc/self/maps                                      */
/* ------------------------------------------------------------------ */

int maps_read(struct mapent *v)
{
	char line[512], path[256];
	unsigned long long s, e, off;
	FILE *f = fopen("/proc/self/maps", "r");
	int n = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f) && n < MAPS_MAX) {
		path[0] = '\0';
		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %255s", &s, &e,
			   &off, path) < 3)
			continue;
		if (!strstr(path, "/dev/infiniband/uverbs"))
			continue;
		v[n++] = (struct mapent){ (uintptr_t)s, (uintptr_t)e, off };
	}
	fclose(f);
	return n;
}

/* Mappings in after[] that were not in before[]; up to max into out[]. */
int maps_new(const struct mapent *before, int nb,
		    const struct mapent *after, int na, struct mapent *out,
		    int max)
{
	int i, j, n = 0;

	for (i = 0; i < na; i++) {
		for (j = 0; j < nb; j++)
			if (before[j].start == after[i].start &&
			    before[j].off == after[i].off)
				break;
		if (j == nb && n < max)
			out[n++] = after[i];
	}
	return n;
}

static size_t page_align(size_t n)
{
	return (n + PAGE - 1) & ~(PAGE - 1);
}

void ring_set(struct ring *r, const struct mapent *m, uint32_t num,
		     uint32_t stride)
{
	r->p = (uint8_t *)m->start;
	r->len = m->end - m->start;
	r->entry_len = r->len;
	r->key = m->off;
	r->num = num;
	r->stride = stride;
	r->geo = num && !(num & (num - 1)) && stride >= 16 &&
		 page_align(sizeof(struct snaa_ring) + (size_t)num * stride) ==
		 r->len;
}

struct snaa_ring *ring_hdr(const struct ring *r)
{
	return (struct snaa_ring *)r->p;
}

uint8_t *ring_slot(const struct ring *r, uint32_t idx)
{
	return r->p + sizeof(struct snaa_ring) +
	       (size_t)(idx & (r->num - 1)) * r->stride;
}

/* Tag the wr_id of every slot of a new SQ/RQ: whatever slot the kernel
 * takes after we moved the producer, its completion carries a tag. */
void ring_pretag(struct ring *r)
{
	uint32_t i;

	if (!r->p || !r->geo)
		return;
	for (i = 0; i < r->num; i++)
		*(uint64_t *)ring_slot(r, i) = WRID_TAG | i;
}

uint32_t pow2_up(uint32_t x)
{
	uint32_t p = 1;

	while (p < x && p < 0x80000000u)
		p <<= 1;
	return p;
}

/* ------------------------------------------------------------------ */
/* Raw uverbs commands                                                 */
/* ------------------------------------------------------------------ */

/* One legacy write() command; 0 or an errno value. */
static int raw_write(int fd, const void *buf, size_t len, const char *name)
{
	double t0 = call_begin(name);
	ssize_t n = write(fd, buf, len);
	int ret = n == (ssize_t)len ? 0 : n < 0 ? errno : -1;

	call_end(name, t0);
	if (ret == -1) {
		atomic_fetch_add(&st_calls, 1);
		atomic_fetch_add(&st_bad, 1);
		bad("%s: write() of %zu bytes returned %zd", name, len, n);
		return EIO;
	}
	return ret;
}

int raw_doorbell(int fd, uint32_t qpn, bool recv)
{
	struct vu_doorbell cmd;
	double t0;
	int ret;

	vu_doorbell_init(&cmd, qpn | (recv ? SNAA_DOORBELL_RQ : 0));
	atomic_fetch_add(&st_doorbells, 1);
	t0 = call_begin(recv ? "raw RQ doorbell" : "raw SQ doorbell");
	ret = vu_doorbell_ring(fd, &cmd);
	call_end(recv ? "raw RQ doorbell" : "raw SQ doorbell", t0);
	return ret;
}

static void rand_bytes(uint8_t *p, size_t n);

/*
 * The doorbell ioctl (SNAA_IB_METHOD_QP_DOORBELL) for a queue of @qpn,
 * mostly well formed; else with reserved bits of the word set, random
 * header fields (the method stays ours: random ones could destroy
 * objects behind libibverbs' back), attribute id, length or flags, or
 * extra attributes.
 */
static int raw_ioctl_doorbell(int fd, uint32_t qpn, bool recv)
{
	struct vu_doorbell cmd;
	double t0;
	int ret;

	vu_doorbell_init(&cmd, qpn | (recv ? SNAA_DOORBELL_RQ : 0));
	if (chance(30)) {
		switch (rn(7)) {
		case 0:
			rand_bytes((uint8_t *)&cmd, sizeof(cmd));
			cmd.hdr.object_id = UVERBS_OBJECT_DEVICE;
			cmd.hdr.method_id = SNAA_IB_METHOD_QP_DOORBELL;
			break;
		case 1:
			cmd.attr[0].attr_id = (uint16_t)rnd();
			break;
		case 2:
			cmd.attr[0].len = (uint16_t)rn(64);
			cmd.attr[0].data = chance(50) ? rnd() : 0x10;
			break;
		case 3:
			cmd.attr[0].flags = (uint16_t)rnd();
			break;
		case 4:
			/* the same attribute twice, and a stray one */
			cmd.attr[1] = cmd.attr[0];
			cmd.attr[2].attr_id = (uint16_t)rnd();
			cmd.hdr.num_attrs = 3;
			cmd.hdr.length = sizeof(cmd);
			break;
		case 5:
			/* reserved bits of the doorbell word */
			cmd.attr[0].data |= (uint64_t)(rnd() | 1) << 24 &
					    0x7f000000u;
			break;
		default:
			cmd.hdr.num_attrs = 0;
			cmd.hdr.length = sizeof(cmd.hdr);
		}
	}
	atomic_fetch_add(&st_doorbells, 1);
	t0 = call_begin("raw doorbell ioctl");
	ret = vu_doorbell_ring(fd, &cmd);
	call_end("raw doorbell ioctl", t0);
	return ret;
}

/* A POST_SEND/POST_RECV with a garbage WR list, header or response. */
static int raw_doorbell_garbage(int fd, uint32_t handle, bool recv)
{
	uint8_t buf[1024];
	struct ib_uverbs_cmd_hdr *hdr = (void *)buf;
	struct ib_uverbs_post_send *s = (void *)(buf + sizeof(*hdr));
	uint32_t resp[4];
	size_t len;
	uint32_t i;
	static const uint64_t bad_resp[] = {
		0, 1, 0xffffffff81000000ull, 0x10, 0x7ffffffff000ull,
	};

	for (i = 0; i < sizeof(buf); i += 8) {
		uint64_t v = rnd();

		memcpy(buf + i, &v, 8);
	}
	hdr->command = recv ? IB_USER_VERBS_CMD_POST_RECV :
			      IB_USER_VERBS_CMD_POST_SEND;
	len = sizeof(*hdr) + sizeof(*s) + rn(4) * 64;
	if (chance(20))
		len = 4 * (1 + rn(255));
	hdr->in_words = (uint16_t)(chance(90) ? len / 4 : rn(300));
	len = len / 4 * 4;
	hdr->out_words = (uint16_t)(chance(80) ? 1 : rn(8));
	s->response = chance(70) ? (uintptr_t)resp : bad_resp[rn(5)];
	s->qp_handle = chance(80) ? handle : (uint32_t)rnd();
	s->wr_count = chance(50) ? rn(4) : (uint32_t)rnd();
	s->sge_count = chance(50) ? rn(8) : (uint32_t)rnd();
	s->wqe_size = chance(60) ? (recv ? sizeof(struct ib_uverbs_recv_wr) :
				    sizeof(struct ib_uverbs_send_wr)) :
		      rn(256);
	atomic_fetch_add(&st_doorbells, 1);
	return raw_write(fd, buf, len, "raw POST_* with garbage");
}

int raw_destroy(int fd, int type, uint32_t handle)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		union {
			struct ib_uverbs_destroy_qp qp;
			struct ib_uverbs_destroy_cq cq;
			struct ib_uverbs_dealloc_pd pd;
			struct ib_uverbs_dereg_mr mr;
			struct ib_uverbs_destroy_ah ah;
		};
	} cmd;
	uint32_t resp[4];
	size_t body;
	const char *name;

	memset(&cmd, 0, sizeof(cmd));
	switch (type) {
	case 0:
		cmd.hdr.command = IB_USER_VERBS_CMD_DESTROY_QP;
		cmd.qp.response = (uintptr_t)resp;
		cmd.qp.qp_handle = handle;
		cmd.hdr.out_words = 1;
		body = sizeof(cmd.qp);
		name = "raw DESTROY_QP";
		break;
	case 1:
		cmd.hdr.command = IB_USER_VERBS_CMD_DESTROY_CQ;
		cmd.cq.response = (uintptr_t)resp;
		cmd.cq.cq_handle = handle;
		cmd.hdr.out_words = 2;
		body = sizeof(cmd.cq);
		name = "raw DESTROY_CQ";
		break;
	case 2:
		cmd.hdr.command = IB_USER_VERBS_CMD_DEALLOC_PD;
		cmd.pd.pd_handle = handle;
		body = sizeof(cmd.pd);
		name = "raw DEALLOC_PD";
		break;
	case 3:
		cmd.hdr.command = IB_USER_VERBS_CMD_DEREG_MR;
		cmd.mr.mr_handle = handle;
		body = sizeof(cmd.mr);
		name = "raw DEREG_MR";
		break;
	default:
		cmd.hdr.command = IB_USER_VERBS_CMD_DESTROY_AH;
		cmd.ah.ah_handle = handle;
		body = sizeof(cmd.ah);
		name = "raw DESTROY_AH";
		break;
	}
	cmd.hdr.in_words = (uint16_t)((sizeof(cmd.hdr) + body) / 4);
	return raw_write(fd, &cmd, cmd.hdr.in_words * 4u, name);
}

/* RESIZE_CQ behind the provider's back; *key gets the new ring's key. */
int raw_resize_cq(int fd, uint32_t handle, uint32_t cqe,
			 uint64_t *key, uint32_t *num, uint32_t *ring_size)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_resize_cq cmd;
	} c;
	struct {
		struct ib_uverbs_resize_cq_resp core;
		struct snaa_uresp_resize_cq drv;
	} resp;
	int ret;

	memset(&c, 0, sizeof(c));
	memset(&resp, 0, sizeof(resp));
	c.hdr.command = IB_USER_VERBS_CMD_RESIZE_CQ;
	c.hdr.in_words = sizeof(c) / 4;
	c.hdr.out_words = sizeof(resp) / 4;
	c.cmd.response = (uintptr_t)&resp;
	c.cmd.cq_handle = handle;
	c.cmd.cqe = cqe;
	ret = raw_write(fd, &c, sizeof(c), "raw RESIZE_CQ");
	if (!ret) {
		*key = resp.drv.cq_key;
		*num = resp.drv.num_cqe;
		*ring_size = resp.drv.ring_size;
	}
	return ret;
}

/* ------------------------------------------------------------------ */
/* Ring attacks                                                        */
/* ------------------------------------------------------------------ */

static void rand_bytes(uint8_t *p, size_t n)
{
	uint64_t v;
	size_t i;

	for (i = 0; i < n; i += 8) {
		v = rnd();
		memcpy(p + i, &v, n - i < 8 ? n - i : 8);
	}
}

/* A half-valid SQE: the structure right, the fields hostile. */
static void fake_sqe(struct actx *c, struct o_qp *q, uint8_t *slot,
		     uint32_t stride)
{
	static const uint32_t ops[] = {
		IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_SEND,
		IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_READ,
		IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD, 99,
		0xffffffff,
	};
	uint8_t buf[8192];
	struct snaa_sqe *e = (void *)buf;
	struct snaa_sge *sg = (void *)(buf + sizeof(*e));
	uint32_t i, nsge = (stride - (uint32_t)sizeof(*e)) / 16;
	struct ibv_sge is;

	if (stride > sizeof(buf))
		return;
	rand_bytes(buf, stride);
	e->opcode = chance(70) ? PICK(ops) % 7 : PICK(ops);
	e->flags = chance(60) ? SNAA_WQE_SIGNALED : (uint32_t)rnd();
	if (chance(25))
		e->flags |= SNAA_WQE_INLINE;
	e->num_sge = chance(70) ? rn(q->cap.max_send_sge + 2) :
				  (uint32_t)rnd();
	e->inline_len = chance(60) ? rn(q->cap.max_inline_data + 8) :
				     (uint32_t)rnd();
	e->ah_handle = (uint32_t)rnd();	/* or half of compare_add */
	for (i = 0; i < nsge; i++) {
		rand_sge(c, &is, chance(50), 4096);
		sg[i] = (struct snaa_sge){ is.addr, is.length, is.lkey };
	}
	e->wr_id = tag_wrid();
	memcpy(slot, buf, stride);
}

static void fake_rqe(struct actx *c, struct o_qp *q, uint8_t *slot,
		     uint32_t stride)
{
	uint8_t buf[8192];
	struct snaa_rqe *e = (void *)buf;
	struct snaa_sge *sg = (void *)(buf + sizeof(*e));
	uint32_t i, nsge = (stride - (uint32_t)sizeof(*e)) / 16;
	struct ibv_sge is;

	if (stride > sizeof(buf))
		return;
	rand_bytes(buf, stride);
	e->num_sge = chance(70) ? rn(q->cap.max_recv_sge + 2) :
				  (uint32_t)rnd();
	for (i = 0; i < nsge; i++) {
		rand_sge(c, &is, chance(50), 16384);
		sg[i] = (struct snaa_sge){ is.addr, is.length, is.lkey };
	}
	e->wr_id = tag_wrid();
	memcpy(slot, buf, stride);
}

/* Hostile writes into one work queue ring, then maybe a doorbell. */
void ring_wq(struct actx *c, struct o_qp *q, bool rq, bool threaded)
{
	struct ring *r = rq ? &q->rq : &q->sq;
	struct snaa_ring *h = ring_hdr(r);
	uint32_t prod, k, i;

	if (!r->p)
		return;
	atomic_fetch_add(&st_ring_writes, 1);
	prod = __atomic_load_n(&h->producer, __ATOMIC_ACQUIRE);
	switch (threaded ? 3 + rn(5) : rn(8)) {
	case 0: case 1: case 2:
		if (!r->geo) {
			set_add(wild_set, q->qp->qp_num);
			rand_bytes(r->p + sizeof(*h), 256);
			break;
		}
		k = 1 + rn(chance(90) ? 4 : r->num);
		for (i = 0; i < k; i++) {
			uint8_t *slot = ring_slot(r, prod + i);

			if (chance(20) && r->stride <= 8192) {
				/* built aside: the tag is never missing */
				uint8_t buf[8192];

				rand_bytes(buf, r->stride);
				*(uint64_t *)buf = tag_wrid();
				memcpy(slot, buf, r->stride);
			} else if (rq) {
				fake_rqe(c, q, slot, r->stride);
			} else {
				fake_sqe(c, q, slot, r->stride);
			}
		}
		__atomic_store_n(&h->producer, prod + k, __ATOMIC_RELEASE);
		break;
	case 3:
		__atomic_store_n(&h->producer, prod - 1 - rn(r->num + 5),
				 __ATOMIC_RELEASE);
		break;
	case 4:
		__atomic_store_n(&h->producer, prod + r->num + 1 + rn(100),
				 __ATOMIC_RELEASE);
		break;
	case 5:
		__atomic_store_n(&h->producer, chance(50) ? (uint32_t)rnd() :
				 h->consumer + r->num, __ATOMIC_RELEASE);
		break;
	case 6:
		__atomic_store_n(&h->consumer, chance(50) ? (uint32_t)rnd() :
				 h->consumer + 1 + rn(r->num + 2),
				 __ATOMIC_RELEASE);
		break;
	default:
		if (chance(50))
			__atomic_store_n(&h->flags, h->flags ^ SNAA_RING_F_IDLE,
					 __ATOMIC_RELAXED);
		else
			__atomic_store_n(&h->flags, (uint32_t)rnd(),
					 __ATOMIC_RELAXED);
		h->pad0[rn(14)] = (uint32_t)rnd();
		h->pad1[rn(15)] = (uint32_t)rnd();
	}
}

void act_ring_wq(struct actx *c, bool rq)
{
	int s = LIVE_SLOT(c->qp, NQP, qp, rq ? c->qp[_i].rq.p != NULL :
			  c->qp[_i].sq.p != NULL);
	struct o_qp *q;

	if (s < 0)
		return;
	q = &c->qp[s];
	ring_wq(c, q, rq, false);
	if (chance(10))
		ring_wq(c, q, rq, false);
	switch (rn(10)) {
	case 0: case 1: case 2: case 3: case 4:
		outcome(rq ? "raw POST_RECV doorbell" : "raw POST_SEND doorbell",
			raw_doorbell(c->ctx->cmd_fd, q->qp->handle, rq), false);
		break;
	case 5: case 6: case 7:
		if (!q->killed) {
			if (rq)
				post_recv_chain(c, q, me->id, false);
			else
				post_send_chain(c, q, me->id, false);
		}
		break;
	default:
		break;
	}
}

void act_ring_cq(struct actx *c)
{
	int s = LIVE_SLOT(c->cq, NCQ, cq, c->cq[_i].r.p != NULL);
	struct snaa_ring *h;
	struct ring *r;

	if (s < 0)
		return;
	r = &c->cq[s].r;
	h = ring_hdr(r);
	c->cq[s].tainted = true;
	atomic_fetch_add(&st_ring_writes, 1);
	switch (rn(6)) {
	case 0:
		h->consumer -= 1 + rn(r->num + 3);
		break;
	case 1:
		h->consumer += 1 + rn(r->num + 3);
		break;
	case 2:
		h->consumer = (uint32_t)rnd();
		break;
	case 3:
		h->producer = chance(50) ? (uint32_t)rnd() :
			      h->producer + 1 + rn(r->num + 2);
		break;
	case 4:
		if (r->geo)
			rand_bytes(ring_slot(r, h->producer + rn(r->num)),
				   r->stride);
		break;
	default:
		h->flags = (uint32_t)rnd();
	}
	if (!c->cq[s].killed)
		poll_one(c->cq[s].cq, true);
}

/* Random bytes anywhere in a ring (header included), or all of it. */
void act_ring_bytes(struct actx *c)
{
	int cq = -1, qp = -1, i, n;
	struct ring *r = any_ring(c, &cq, &qp);

	if (!r)
		return;
	taint_owner(c, cq, qp);
	atomic_fetch_add(&st_ring_writes, 1);
	if (chance(15)) {
		switch (rn(3)) {
		case 0: memset(r->p, 0xff, r->len); break;
		case 1: memset(r->p, 0, r->len); break;
		default: rand_bytes(r->p, r->len);
		}
		return;
	}
	n = 1 + (int)rn(64);
	for (i = 0; i < n; i++)
		r->p[rn((uint32_t)r->len)] ^= (uint8_t)(1 + rn(255));
}

uint32_t rand_handle(struct actx *c)
{
	int s;

	switch (rn(6)) {
	case 0:
		s = LIVE_SLOT(c->cq, NCQ, cq, 1);
		return s >= 0 ? c->cq[s].cq->handle : 0;
	case 1:
		s = LIVE_SLOT(c->pd, NPD, pd, 1);
		return s >= 0 ? c->pd[s].pd->handle : 0;
	case 2:
		return (uint32_t)rnd();
	case 3:
		return rn(64);
	default:
		s = LIVE_SLOT(c->qp, NQP, qp, 1);
		return s >= 0 ? c->qp[s].qp->handle : rn(64);
	}
}

void act_doorbell(struct actx *c)
{
	int fd = c->ctx->cmd_fd, o, s;
	uint32_t h = rand_handle(c), qpn;
	bool rq = chance(40);

	if (chance(10)) {
		o = live_ctx();
		if (o >= 0)
			fd = ctxs[o].ctx->cmd_fd;	/* a foreign fd */
	}
	s = LIVE_SLOT(c->qp, NQP, qp, 1);
	/* a foreign fd rings another context's QP: EINVAL */
	qpn = s >= 0 && chance(70) ? c->qp[s].qp->qp_num :
	      chance(50) ? (uint32_t)rnd() & SNAA_DOORBELL_QPN_MASK : rn(256);
	if (chance(25))
		outcome("raw POST_* with garbage",
			raw_doorbell_garbage(fd, h, rq), true);
	else if (chance(40))
		outcome("raw doorbell ioctl", raw_ioctl_doorbell(fd, qpn, rq),
			false);
	else
		outcome(rq ? "raw RQ doorbell" : "raw SQ doorbell",
			raw_doorbell(fd, qpn, rq), false);
}

/* The entry whose handle the kernel just destroyed: never touch it
 * through libibverbs again. */
static void mark_killed(struct actx *c, int type, uint32_t h)
{
	int i;

	atomic_fetch_add(&st_killed, 1);
	for (i = 0; i < NQP && type == 0; i++)
		if (c->qp[i].qp && !c->qp[i].killed &&
		    c->qp[i].qp->handle == h)
			c->qp[i].killed = true;
	for (i = 0; i < NCQ && type == 1; i++)
		if (c->cq[i].cq && !c->cq[i].killed &&
		    c->cq[i].cq->handle == h)
			c->cq[i].killed = true;
	/* A killed PD, MR or AH is simply forgotten (leaked). */
	for (i = 0; i < NPD && type == 2; i++)
		if (c->pd[i].pd && c->pd[i].pd->handle == h)
			c->pd[i].pd = NULL;
	for (i = 0; i < NMR && type == 3; i++)
		if (c->mr[i].mr && c->mr[i].mr->handle == h)
			memset(&c->mr[i], 0, sizeof(c->mr[i]));
	for (i = 0; i < NAH && type == 4; i++)
		if (c->ah[i].ah && c->ah[i].ah->handle == h)
			c->ah[i].ah = NULL;
}

/* A free alias slot of c, or -1. */
static int alias_slot(struct actx *c)
{
	return FREE_SLOT(c->alias, NALIAS, p);
}

void act_raw_cmd(struct actx *c)
{
	static const char *const names[] = {
		"raw DESTROY_QP", "raw DESTROY_CQ", "raw DEALLOC_PD",
		"raw DEREG_MR", "raw DESTROY_AH",
	};
	int type, s, ret, a;
	/* (set by raw_resize_cq() when it succeeds: gcc 15 cannot see it) */
	uint32_t h, num = 0, rsz = 0;
	uint64_t key = 0;

	switch (rn(4)) {
	case 0: case 1:
		/* destroy twice: a stale or random handle; if the kernel
		 * destroyed one of ours, that one is dead now */
		type = (int)rn(5);
		h = rand_handle(c);
		ret = outcome(names[type], raw_destroy(c->ctx->cmd_fd, type, h),
			      false);
		if (!ret)
			mark_killed(c, type, h);
		break;
	case 2:
		s = LIVE_SLOT(c->cq, NCQ, cq, !c->cq[_i].killed);
		if (s < 0)
			return;
		ret = outcome("raw RESIZE_CQ",
			      raw_resize_cq(c->ctx->cmd_fd, c->cq[s].cq->handle,
					    chance(80) ? 1 + rn(300) :
					    (uint32_t)rnd(), &key, &num, &rsz),
			      false);
		if (ret)
			return;
		/* the provider still polls the old ring; map the new one
		 * ourselves, to attack it too */
		c->cq[s].tainted = true;
		a = alias_slot(c);
		if (a >= 0) {
			void *p = mmap(NULL, rsz, PROT_READ | PROT_WRITE,
				       MAP_SHARED, c->ctx->cmd_fd, (off_t)key);

			if (p != MAP_FAILED) {
				struct mapent m = { (uintptr_t)p,
						    (uintptr_t)p + rsz, key };

				ring_set(&c->alias[a], &m, num,
					 sizeof(struct snaa_cqe));
			} else {
				outcome("mmap(resized CQ ring)", errno, false);
			}
		}
		break;
	default: {
		/* a garbage command: random number, sizes and contents,
		 * handles far from ours */
		uint8_t buf[512];
		struct ib_uverbs_cmd_hdr *hdr = (void *)buf;
		size_t len = 8 + 4 * rn(120);
		uint64_t resp[32];
		uint32_t i;

		rand_bytes(buf, sizeof(buf));
		hdr->command = rn(60);
		if (hdr->command == IB_USER_VERBS_CMD_GET_CONTEXT ||
		    hdr->command == IB_USER_VERBS_CMD_DESTROY_QP ||
		    hdr->command == IB_USER_VERBS_CMD_DESTROY_CQ ||
		    hdr->command == IB_USER_VERBS_CMD_DEALLOC_PD ||
		    hdr->command == IB_USER_VERBS_CMD_DEREG_MR ||
		    hdr->command == IB_USER_VERBS_CMD_DESTROY_AH ||
		    hdr->command == IB_USER_VERBS_CMD_RESIZE_CQ ||
		    hdr->command == IB_USER_VERBS_CMD_MODIFY_QP)
			hdr->command = IB_USER_VERBS_CMD_QUERY_DEVICE;
		hdr->in_words = (uint16_t)(chance(80) ? len / 4 : rnd());
		hdr->out_words = (uint16_t)rn(64);
		/* first u64 is the response pointer in most commands */
		*(uint64_t *)(buf + 8) = chance(60) ? (uintptr_t)resp :
					 rnd();
		/* handles at +16 and +20 of most commands: make them
		 * foreign */
		for (i = 16; i < 32; i += 4)
			*(uint32_t *)(buf + i) |= 0x100000;
		outcome("raw garbage command",
			raw_write(c->ctx->cmd_fd, buf, len,
				  "raw garbage command"), false);
	}
	}
}

/* mmap games on the uverbs file. */
void act_mmap(struct actx *c)
{
	int cq = -1, qp = -1, a;
	struct ring *r = any_ring(c, &cq, &qp);
	size_t len;
	uint64_t key;
	bool must_fail = false;
	int flags = MAP_SHARED, prot = PROT_READ | PROT_WRITE, v;
	const char *what = "mmap(ring alias)";
	void *p;
	double t0;

	a = LIVE_SLOT(c->alias, NALIAS, p, 1);
	if (a >= 0 && chance(30)) {
		/* drop an alias (maybe only half of it) */
		struct ring *al = &c->alias[a];

		if (al->len > PAGE && chance(30)) {
			munmap(al->p + PAGE, al->len - PAGE);
			al->len = PAGE;
			al->geo = false;
		} else {
			unmap_ring(al);
		}
		return;
	}
	if (!r)
		return;
	len = r->entry_len;
	key = r->key;
	v = (int)rn(6);
	switch (v) {
	case 0:
		what = "mmap(ring, wrong size)";
		len = chance(50) ? len + PAGE : (len > PAGE ? len - PAGE :
							      2 * PAGE);
		must_fail = true;
		break;
	case 1:
		what = "mmap(ring, MAP_PRIVATE)";
		flags = MAP_PRIVATE;
		must_fail = true;
		break;
	case 2:
		what = "mmap(random key)";
		key = ((rnd() & 0xffffff) | 0x10000000ull) * PAGE;
		must_fail = true;
		break;
	case 3:
		what = "mmap(ring, PROT_EXEC)";
		prot |= PROT_EXEC;
		break;
	default:
		break;
	}
	t0 = call_begin(what);
	p = mmap(NULL, len, prot, flags, c->ctx->cmd_fd, (off_t)key);
	call_end(what, t0);
	if (p == MAP_FAILED) {
		outcome(what, errno, must_fail);
		return;
	}
	if (v == 0) {
		/*
		 * The wrong size fits: then the ring we knew is gone (a
		 * resize or destroy behind the provider's back) and its key
		 * went to a ring of that size.  That one takes no other
		 * size, ours included; a key that took both would be a bug.
		 */
		void *q = mmap(NULL, r->entry_len, prot, flags,
			       c->ctx->cmd_fd, (off_t)key);

		if (q == MAP_FAILED) {
			munmap(p, len);
			outcome("mmap(ring, wrong size: key reused)", 0, false);
			return;
		}
		munmap(q, r->entry_len);
	}
	outcome(what, 0, must_fail);
	a = alias_slot(c);
	if (v == 0 || v == 1 || v == 2 || a < 0) {
		munmap(p, len);
		return;
	}
	c->alias[a] = *r;
	c->alias[a].p = p;
	c->alias[a].len = len;
	/* writes through the alias reach the object */
	taint_owner(c, cq, qp);
	if (chance(50)) {
		struct snaa_ring *h = (struct snaa_ring *)p;

		atomic_fetch_add(&st_ring_writes, 1);
		h->producer += rn(5);
		h->consumer -= rn(5);
	}
}
