// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * objhog - take resources of an RDMA device the way a greedy (or hostile)
 * unprivileged process would, for the limits and teardown tests
 * (limits.sh, teardown.sh):
 *
 *   --cqs N --cqe M   create up to N CQs of M entries (each a ring the
 *                     kernel allocates and maps), one "cq K" line per CQ
 *   --qps N           create up to N UC QPs (1 WR, 1 SGE: a page for each
 *                     ring) on one CQ, one progress line per 1000
 *   --mr BYTES        register one buffer of BYTES
 *   --ahs N           create up to N address handles (to the device's own
 *                     GID), one progress line per 10000
 *
 * After creating, it prints "created N" (or "failed after N: ERRNO
 * (message)" when a creation failed) and, with --hold, waits for a
 * signal before it frees anything; SIGKILL tests the exit path.
 *
 * Exit status: 0 everything asked for was created, 3 a creation failed
 * (the line above says why), 1 another error, 2 usage error, 4 (skip)
 * no such device.
 *
 * Build: make -C selftests/snaa objhog (objhog.c, verbs_util.c and
 * userspace/common/snaa_opt.c; -libverbs)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "snaa_opt.h"
#include "verbs_util.h"

#define EXIT_FAILED	3

static struct {
	struct vu_dev d;
	long cqs, cqe, qps, ahs;
	unsigned long long mr;
	bool hold;
} opt = { .d = VU_DEV_INIT('A'), .cqe = 64 };

static void usage(FILE *f)
{
	fprintf(f,
"Usage: objhog --dev NAME (--cqs N [--cqe M] | --qps N | --mr BYTES)\n"
"              [--hold]\n"
"\n"
"Create resources on an RDMA device until the count is reached or a\n"
"creation fails, as a greedy process would (limits.sh, teardown.sh).\n"
"\n"
"  --dev NAME      the RDMA device\n"
"  --cqs N         create up to N CQs ...\n"
"  --cqe M         ... of M entries each (default 64)\n"
"  --qps N         create up to N UC QPs (1 WR, 1 SGE each)\n"
"  --mr BYTES      register one buffer of BYTES\n"
"  --ahs N         create up to N address handles (to the device's GID)\n"
"  --hold          then wait for a signal before freeing anything\n"
"  --help          show this help\n"
"\n"
"Prints \"created N\" or \"failed after N: ERRNO (message)\".  Exit status:\n"
"0 all created, 3 a creation failed, 1 another error, 2 usage error,\n"
"4 no such device.\n");
}

static void parse_args(int argc, char **argv)
{
	enum { O_DEV = 256, O_CQS, O_CQE, O_QPS, O_MR, O_AHS, O_HOLD };
	static const struct option lopts[] = {
		{ "dev", required_argument, NULL, O_DEV },
		{ "cqs", required_argument, NULL, O_CQS },
		{ "cqe", required_argument, NULL, O_CQE },
		{ "qps", required_argument, NULL, O_QPS },
		{ "mr", required_argument, NULL, O_MR },
		{ "ahs", required_argument, NULL, O_AHS },
		{ "hold", no_argument, NULL, O_HOLD },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int c, modes;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
		switch (c) {
		case O_DEV:
			opt.d.name = optarg;
			break;
		case O_CQS:
			opt.cqs = opt_int("--cqs", optarg, 1, 1 << 20);
			break;
		case O_CQE:
			opt.cqe = opt_int("--cqe", optarg, 1, 1 << 20);
			break;
		case O_QPS:
			opt.qps = opt_int("--qps", optarg, 1, 1 << 20);
			break;
		case O_MR:
			opt.mr = opt_u64("--mr", optarg, 1ULL << 40);
			break;
		case O_AHS:
			opt.ahs = opt_int("--ahs", optarg, 1, 1 << 20);
			break;
		case O_HOLD:
			opt.hold = true;
			break;
		default:
			opt_help_or_error(c, argv, usage);
		}
	}
	opt_no_operands(argc, argv);
	if (!opt.d.name)
		opt_usage_error("%s is required", "--dev");
	modes = !!opt.cqs + !!opt.qps + !!opt.mr + !!opt.ahs;
	if (modes != 1)
		opt_usage_error("give exactly one of %s",
				"--cqs, --qps, --mr, --ahs");
}

static long created;

static int report(int err)
{
	if (err) {
		printf("failed after %ld: %s (%s)\n", created, vu_errno_str(err),
		       strerror(err));
		return EXIT_FAILED;
	}
	printf("created %ld\n", created);
	return 0;
}

static int hog_cqs(void)
{
	while (created < opt.cqs) {
		if (!ibv_create_cq(opt.d.ctx, (int)opt.cqe, NULL, NULL, 0))
			return errno;
		created++;
		printf("cq %ld\n", created);
	}
	return 0;
}

static int hog_qps(void)
{
	struct ibv_cq *cq = ibv_create_cq(opt.d.ctx, 16, NULL, NULL, 0);

	if (!cq)
		return errno;
	while (created < opt.qps) {
		struct ibv_qp_cap cap = { 1, 1, 1, 1, 0 };

		if (!vu_qp_create(opt.d.pd, IBV_QPT_UC, cq, cq, &cap))
			return errno;
		if (++created % 1000 == 0)
			printf("qps %ld\n", created);
	}
	return 0;
}

static int hog_mr(void)
{
	void *p;

	if (posix_memalign(&p, 4096, (size_t)opt.mr))
		return ENOMEM;
	memset(p, 0, (size_t)opt.mr);
	if (!ibv_reg_mr(opt.d.pd, p, (size_t)opt.mr, IBV_ACCESS_LOCAL_WRITE))
		return errno;
	created = 1;
	return 0;
}

static int hog_ahs(void)
{
	struct ibv_ah_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.is_global = 1;
	attr.grh.dgid = opt.d.gid;
	attr.grh.sgid_index = (uint8_t)opt.d.gid_idx;
	attr.grh.hop_limit = 64;
	attr.port_num = 1;
	while (created < opt.ahs) {
		if (!ibv_create_ah(opt.d.pd, &attr))
			return errno;
		if (++created % 10000 == 0)
			printf("ahs %ld\n", created);
	}
	return 0;
}

int main(int argc, char **argv)
{
	int ret;
	sigset_t set;

	setvbuf(stdout, NULL, _IOLBF, 0);
	parse_args(argc, argv);
	ret = vu_dev_open(&opt.d);
	if (ret)
		return ret == VU_EXIT_SKIP ? VU_EXIT_SKIP : 1;

	ret = report(opt.cqs ? hog_cqs() : opt.qps ? hog_qps() :
		     opt.ahs ? hog_ahs() : hog_mr());
	if (opt.hold) {
		int sig;

		/* Freed only by the exit: the kernel cleans up. */
		sigemptyset(&set);
		sigaddset(&set, SIGTERM);
		sigaddset(&set, SIGINT);
		sigprocmask(SIG_BLOCK, &set, NULL);
		sigwait(&set, &sig);
	}
	return ret;
}
