/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * abuser.h - what the files of the abuser share: limits, the options,
 * the per-thread state, the objects it keeps per context and the rings
 * it found, its globals and functions.  abuser.c describes the program.
 */
#ifndef SNAA_SELFTEST_ABUSER_H
#define SNAA_SELFTEST_ABUSER_H

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/snaa-abi.h>
#include "snaa_opt.h"
#include "verbs_util.h"

#define PAGE		4096ul
#define NCTX		3
#define NPD		6
#define NMR		16
#define NCQ		8
#define NQP		12
#define NAH		6
#define NALIAS		16
#define MAX_SGE_ARR	(2 * SNAA_MAX_SGE)	/* sg_list arrays: more than any max */
#define SNAA_SGE_MAX	SNAA_MAX_SGE	/* snaa-abi.h */
#define SNAA_INLINE_MAX	256
#define SNAA_WR_MAX	16384
#define SNAA_CQE_MAX	65536
#define POOL_LEN	(4ul << 20)
#define RO_LEN		(64ul * 1024)
#define MR_MAX_LEN	(1ul << 20)
#define BIG_RING	(1ul << 20)	/* a ring this large is "big" */
#define MAX_BIG		2		/* big QPs alive at once */
#define WRID_TAG	0xab05000000000000ull
#define WRID_MASK	0xffff000000000000ull
#define ERRNO_MAX	133		/* EHWPOISON, the last Linux errno */
#define NTHREADS_MAX	16
#define STORM_QPS	4
#define BAD_PRINT_MAX	40

struct abuser_opt {
	const char *dev[2];
	int ndev;
	uint64_t seed;
	unsigned long iterations;
	double seconds;
	int threads;
	unsigned long storm_every;
	double storm_secs;
	double slow_limit, hang_limit;
	const char *victim_info;
	const char *loopback_victim;
	const char *self_test;
	bool verbose;
	double chase_secs, race_secs;
};

extern struct abuser_opt opt;

struct thr {
	uint64_t rng;
	int id;
	_Atomic(const char *) op;	/* the call in progress, for the watchdog */
	_Atomic long long since_ns;
};

#define PICK(arr) pick_u32((arr), sizeof(arr) / sizeof((arr)[0]))

struct devinfo {
	struct vu_dev vd;		/* probe context: GID, port */
	struct ibv_device *dev;
};

#define BIG_LAZY_LEN	(256ul << 20)

struct mapent {
	uintptr_t start, end;
	uint64_t off;
};

#define MAPS_MAX	512

struct ring {
	uint8_t *p;			/* NULL: not known / not mapped */
	size_t len;			/* bytes mapped at p */
	size_t entry_len;		/* bytes of the ring (mmap length) */
	uint64_t key;
	uint32_t num, stride;
	bool geo;			/* num/stride match len */
};

struct o_pd { struct ibv_pd *pd; };

struct o_mr {
	struct ibv_mr *mr;
	int pd;
	uint8_t *addr;
	size_t len;
	uint64_t iova;
	int access;
};

struct o_cq {
	struct ibv_cq *cq;
	struct ring r;
	bool tainted;		/* we wrote into its ring: CQEs unchecked */
	bool killed;		/* destroyed behind libibverbs' back */
};

struct o_qp {
	struct ibv_qp *qp;
	struct ring sq, rq;
	int pd, scq, rcq;
	struct ibv_qp_cap cap;
	bool killed;
	bool big;
};

struct o_ah { struct ibv_ah *ah; };

struct actx {
	struct ibv_context *ctx;
	int dev;
	struct ibv_comp_channel *ch;
	struct o_pd pd[NPD];
	struct o_mr mr[NMR];
	struct o_cq cq[NCQ];
	struct o_qp qp[NQP];
	struct o_ah ah[NAH];
	struct ring alias[NALIAS];	/* our own extra ring mappings */
};

#define QPN_SET		65536

struct canary {
	char dev[64];
	uint64_t addr;
	uint32_t len, lkey, rkey;
};

#define FREE_SLOT(arr, n, field)					\
	({ int _i, _r = -1;						\
	   for (_i = 0; _i < (n); _i++)					\
		if (!(arr)[_i].field) { _r = _i; break; }		\
	   _r; })

#define LIVE_SLOT(arr, n, field, extra)					\
	({ int _i, _k = 0, _p[64];					\
	   for (_i = 0; _i < (n); _i++)					\
		if ((arr)[_i].field && (extra))				\
			_p[_k++] = _i;					\
	   _k ? _p[rn((uint32_t)_k)] : -1; })

struct chase_result {
	long long per_doorbell, idle;
	double took;
	uint32_t num;
	int doorbells;
	bool one_cpu;			/* nothing to race with: skipped */
};

/* ---- globals (defined in the file of their section) ---- */

extern struct thr thr_slot[NTHREADS_MAX];
extern _Thread_local struct thr *me;
extern atomic_ulong st_calls, st_ok, st_err, st_bad, st_mustfail,
	st_mustfail_bad, st_cqes, st_cqe_bad, st_cqe_unchecked, st_ring_writes,
	st_doorbells, st_slow, st_storms, st_ctx_closed, st_killed,
	st_mw_storms, st_mw_pairs;
extern atomic_ulong st_errno[ERRNO_MAX + 2];
extern pthread_mutex_t out_lock;
extern double slowest;
extern char slowest_name[64];
extern atomic_int bad_printed;
extern struct devinfo devs[2];
extern struct ibv_device **dev_list;
extern int ndev_list;
extern uint8_t *pool;
extern uint8_t *ro_zero;
extern uint8_t *ro_pat;
extern uint8_t *hole;
extern uint8_t *prot_none;
extern uint8_t *big_lazy;
extern struct actx ctxs[NCTX];
extern _Atomic uint32_t qpn_set[QPN_SET];
extern _Atomic uint32_t wild_set[QPN_SET];
extern uint32_t dead_qpn[32];
extern int ndead;
extern uint32_t victim_qpn[8];
extern int nvictim_qpn;
extern struct canary canaries[4];
extern int ncanary;
extern struct ibv_sge sge_pool[NTHREADS_MAX][8][MAX_SGE_ARR];

/* ---- functions, by the file that has them ---- */

/* abuser.c */
uint64_t rnd(void);
uint32_t rn(uint32_t n);
bool chance(unsigned int pct);
uint32_t pick_u32(const uint32_t *v, size_t n);
__attribute__((format(printf, 1, 2)))
void bad(const char *fmt, ...);
__attribute__((format(printf, 1, 2)))
void info(const char *fmt, ...);
double call_begin(const char *name);
void call_end(const char *name, double t0);
int outcome(const char *name, int ret, bool must_fail);
int chk(const char *name, double t0, int ret, bool must_fail);
void *chk_ptr(const char *name, double t0, void *p, int err,
		     bool must_fail);
void step(void);

/* abuser_verbs.c */
uint8_t ro_byte(size_t i);
int memory_setup(void);
bool ro_memory_intact(void);
void set_add(_Atomic uint32_t *set, uint32_t qpn);
uint64_t tag_wrid(void);
void drain_events(struct actx *c);
void check_wc(const struct ibv_wc *wc, bool tainted);
void poll_one(struct ibv_cq *cq, bool tainted);
void poll_all(struct actx *c);
int open_ctx(int slot, int dev);
int live_ctx(void);
void unmap_ring(struct ring *r);
void close_ctx_abruptly(struct actx *c);
void act_alloc_pd(struct actx *c);
void act_dealloc_pd(struct actx *c);
struct ring *any_ring(struct actx *c, int *cq_owner, int *qp_owner);
void taint_owner(struct actx *c, int cq, int qp);
void act_reg_mr(struct actx *c);
void act_dereg_mr(struct actx *c);
void act_rereg_mr(struct actx *c);
int find_new_ring(const struct mapent *before, int nb,
			 struct mapent *out, int max);
void act_create_cq(struct actx *c);
void act_resize_cq(struct actx *c);
void act_destroy_cq(struct actx *c);
void act_notify(struct actx *c);
uint32_t sq_stride(uint32_t sge, uint32_t inl);
uint32_t rq_stride(uint32_t sge);
void act_create_qp(struct actx *c);
void forget_qp(struct o_qp *q);
void act_destroy_qp(struct actx *c);
uint32_t rand_dest_qpn(int dev, struct ibv_qp *self);
void act_connect(struct actx *c);
void act_modify_random(struct actx *c);
void act_query(struct actx *c);
void act_ah(struct actx *c);
void rand_sge(struct actx *c, struct ibv_sge *sg, bool hostile,
		     uint32_t maxlen);
void post_send_chain(struct actx *c, struct o_qp *q, int tid,
			    bool hostile);
void post_recv_chain(struct actx *c, struct o_qp *q, int tid,
			    bool hostile);
void act_post_send(struct actx *c);
void act_post_recv(struct actx *c);
void act_traffic(struct actx *c);

/* abuser_ring.c */
int maps_read(struct mapent *v);
int maps_new(const struct mapent *before, int nb,
		    const struct mapent *after, int na, struct mapent *out,
		    int max);
void ring_set(struct ring *r, const struct mapent *m, uint32_t num,
		     uint32_t stride);
struct snaa_ring *ring_hdr(const struct ring *r);
uint8_t *ring_slot(const struct ring *r, uint32_t idx);
void ring_pretag(struct ring *r);
uint32_t pow2_up(uint32_t x);
/* A well-formed doorbell ioctl for a queue of qpn: 0 or an errno. */
int raw_doorbell(int fd, uint32_t qpn, bool recv);
int raw_destroy(int fd, int type, uint32_t handle);
int raw_resize_cq(int fd, uint32_t handle, uint32_t cqe,
			 uint64_t *key, uint32_t *num, uint32_t *ring_size);
void ring_wq(struct actx *c, struct o_qp *q, bool rq, bool threaded);
void act_ring_wq(struct actx *c, bool rq);
void act_ring_cq(struct actx *c);
void act_ring_bytes(struct actx *c);
uint32_t rand_handle(struct actx *c);
void act_doorbell(struct actx *c);
void act_raw_cmd(struct actx *c);
void act_mmap(struct actx *c);

/* abuser_probe.c */
int connect_loopback(struct actx *c, struct ibv_qp *qp, uint32_t peer_qpn,
		     const char *const names[4]);
void act_storm(struct actx *c);
/* abuser_mw.c */
void act_mw_storm(struct actx *c);
int read_victim_info(const char *path);
bool foreign_probe(void);
bool loopback_probe(const char *path);
bool flush_chase(double secs, struct chase_result *res);
void resize_race(double secs);
bool sanity(void);

#endif /* SNAA_SELFTEST_ABUSER_H */
