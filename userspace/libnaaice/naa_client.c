// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * naa-client: runs RPCs on an NAA with generated data, checks every
 * result bit for bit against the same function computed here, and
 * prints the round-trip times.  Exit status: 0 only if every result was
 * bit-exact (see naa_usage for the others).
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "naa_kernels.h"
#include "snaa_opt.h"
#include "naaice_int.h"

enum naa_exit {
	NAA_EXIT_OK = 0,
	NAA_EXIT_MISMATCH = 1,
	NAA_EXIT_USAGE = 2,
	NAA_EXIT_CONNECT = 3,
	NAA_EXIT_MRSP = 4,
	NAA_EXIT_REMOTE = 5,
	NAA_EXIT_LOST = 6,
	NAA_EXIT_SYSTEM = 7,
};

enum naa_poll { NAA_POLL_WAIT, NAA_POLL_BLOCKING, NAA_POLL_NONBLOCKING };

static long long naa_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Drive the state machine with naaice_poll_cq_(non)blocking until
 * @target, as an application with its own event loop would. */
static int naa_poll_until(struct naaice_communication_context *ctx,
			  enum naaice_communication_state target,
			  enum naa_poll mode, long tmo)
{
	long long end = naa_now_ms() + tmo;

	while (ctx->state != target) {
		if (ctx->state == ERROR || ctx->state == DISCONNECTED)
			return -1;
		if (mode == NAA_POLL_BLOCKING ?
		    naaice_poll_cq_blocking(ctx) :
		    naaice_poll_cq_nonblocking(ctx))
			return -1;
		if (mode == NAA_POLL_NONBLOCKING && naa_now_ms() > end) {
			fprintf(stderr, "naa-client: no answer within %ld ms\n",
				tmo);
			ctx->last_error = NAAICE_ERR_TIMEOUT;
			return -1;
		}
	}
	return 0;
}

static void naa_usage(FILE *f)
{
	fprintf(f,
"usage: naa-client --to IP [--port N] [--fn CODE] [--size BYTES]\n"
"                  [--regions N] [--count N] [--wire spec|upstream] [options]\n"
"Runs RPCs on a NAAICE NAA (e.g. naa-server) with generated input data and\n"
"checks each result bit for bit.\n"
"\n"
"  -a, --to IP           the NAA's address (required)\n"
"  -p, --port N          its rdma_cm port (default %d)\n"
"  -f, --fn CODE         function: 1/add (default), 2/sum, 3/crc32c,\n"
"                        4/matmul, 5/inc (spec wire: the result region\n"
"                        comes back with each byte + 1, as from the public\n"
"                        library's example NAA), or any other code 1-255\n"
"                        (then the NAA's\n"
"                        error code is expected, nothing is checked)\n"
"  -s, --size BYTES      bytes per input region (default 4096; K, M, G)\n"
"                        matmul: 4*n*n for n x n 32-bit matrices\n"
"  -r, --regions N       input regions (default 2); the result region\n"
"                        comes on top\n"
"  -c, --count N         RPCs on the one connection (default 1)\n"
"  -w, --wire MODE       spec (default) or upstream (see naa-server -h)\n"
"  -i, --internal A:S    also request an NAA-internal region of S bytes\n"
"                        at NAA address A (repeatable)\n"
"  -t, --timeout MS      bound on every wait for the NAA (default 30000)\n"
"  -P, --poll MODE       how to wait: wait (default: naaice_do_mrsp and\n"
"                        naaice_do_data_transfer), blocking or nonblocking\n"
"                        (naaice_poll_cq_blocking / _nonblocking loops)\n"
"  -q, --quiet           only the summary line\n"
"  -h, --help            this text\n"
"\n"
"Exit status: 0 every result bit-exact, 1 a result differed, 2 usage,\n"
"3 no connection, 4 the NAA refused the memory regions (MRSP error),\n"
"5 the NAA returned an error code, 6 the NAA went away or timed out,\n"
"7 local failure.\n", NAAICE_DEFAULT_PORT);
}

static int naa_exit_for(enum naaice_error e)
{
	switch (e) {
	case NAAICE_ERR_CONNECT: return NAA_EXIT_CONNECT;
	case NAAICE_ERR_MRSP: return NAA_EXIT_MRSP;
	case NAAICE_ERR_REMOTE: return NAA_EXIT_REMOTE;
	case NAAICE_ERR_TIMEOUT:
	case NAAICE_ERR_DISCONNECTED:
	case NAAICE_ERR_TRANSFER:
	case NAAICE_ERR_PROTOCOL:
		return NAA_EXIT_LOST;
	default:
		return NAA_EXIT_SYSTEM;
	}
}

static uint64_t naa_rng;

static uint64_t naa_next(void)
{
	naa_rng ^= naa_rng << 13;
	naa_rng ^= naa_rng >> 7;
	naa_rng ^= naa_rng << 17;
	return naa_rng;
}

static void naa_fill(uint8_t *p, size_t len)
{
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		uint64_t v = naa_next();

		memcpy(p + i, &v, 8);
	}
	for (; i < len; i++)
		p[i] = (uint8_t)naa_next();
}

static double naa_ms(const struct timespec *a, const struct timespec *b)
{
	return (b->tv_sec - a->tv_sec) * 1e3 + (b->tv_nsec - a->tv_nsec) / 1e6;
}

static int naa_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void *naa_alloc(size_t len)
{
	void *p = NULL;

	if (posix_memalign(&p, 4096, len ? len : 1))
		return NULL;
	return p;
}

/* --internal ADDR:SIZE, one more region the client advertises */
static void naa_internal_opt(const char *arg, uintptr_t *addr, size_t *size,
			     unsigned int *n)
{
	const char *colon = strchr(arg, ':');
	char a[32];

	if (!colon || (size_t)(colon - arg) >= sizeof(a))
		opt_usage_error("--internal: '%s' is not ADDR:SIZE", arg);
	if (*n >= NAAICE_MRSP_MAX_COUNT)
		opt_usage_error("--internal: more than %d regions",
				NAAICE_MRSP_MAX_COUNT);
	memcpy(a, arg, (size_t)(colon - arg));
	a[colon - arg] = 0;
	addr[*n] = (uintptr_t)opt_u64("--internal", a, UINTPTR_MAX);
	size[(*n)++] = (size_t)opt_size("--internal", colon + 1, 0, 1ULL << 40);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "to", required_argument, NULL, 'a' },
		{ "port", required_argument, NULL, 'p' },
		{ "fn", required_argument, NULL, 'f' },
		{ "size", required_argument, NULL, 's' },
		{ "regions", required_argument, NULL, 'r' },
		{ "count", required_argument, NULL, 'c' },
		{ "wire", required_argument, NULL, 'w' },
		{ "internal", required_argument, NULL, 'i' },
		{ "timeout", required_argument, NULL, 't' },
		{ "poll", required_argument, NULL, 'P' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *to = NULL;
	long port = NAAICE_DEFAULT_PORT, regions = 2, count = 1, tmo = 30000;
	long long size = 4096;
	uint8_t fn = NAA_FN_ADD;
	enum naaice_wire wire = NAAICE_WIRE_SPEC;
	uintptr_t iaddr[NAAICE_MRSP_MAX_COUNT];
	size_t isize[NAAICE_MRSP_MAX_COUNT];
	unsigned int n_int = 0, sizes[NAAICE_MRSP_MAX_COUNT];
	char *params[NAAICE_MRSP_MAX_COUNT];
	struct naaice_communication_context *ctx = NULL;
	struct naa_buf in[NAAICE_MRSP_MAX_COUNT], want;
	size_t rsize;
	double *rtt = NULL;
	int quiet = 0, o, ret = NAA_EXIT_OK, known;
	enum naa_poll pmode = NAA_POLL_WAIT;
	long done = 0;

	opterr = 0;
	while ((o = getopt_long(argc, argv, ":a:p:f:s:r:c:w:i:t:P:qh", opts,
				NULL)) != -1) {
		switch (o) {
		case 'a':
			to = optarg;
			break;
		case 'p':
			port = opt_long("--port", optarg, 1, 65535);
			break;
		case 'f':
			fn = naa_fn_parse(optarg);
			if (!fn)
				opt_usage_error("--fn: '%s' is no function (add, "
						"sum, crc32c, matmul, inc or a "
						"code 1..255)", optarg);
			break;
		case 's':
			size = (long long)opt_size("--size", optarg, 1,
						   UINT32_MAX);
			break;
		case 'r':
			regions = opt_long("--regions", optarg, 1,
					   NAAICE_MRSP_MAX_COUNT - 2);
			break;
		case 'c':
			count = opt_long("--count", optarg, 1, LONG_MAX);
			break;
		case 'w':
			if (naaice_wire_parse(optarg, &wire))
				opt_usage_error("--wire: '%s' is neither spec "
						"nor upstream", optarg);
			break;
		case 'i':
			naa_internal_opt(optarg, iaddr, isize, &n_int);
			break;
		case 't':
			tmo = opt_long("--timeout", optarg, 1, INT_MAX);
			break;
		case 'P':
			if (!strcmp(optarg, "wait"))
				pmode = NAA_POLL_WAIT;
			else if (!strcmp(optarg, "blocking"))
				pmode = NAA_POLL_BLOCKING;
			else if (!strcmp(optarg, "nonblocking"))
				pmode = NAA_POLL_NONBLOCKING;
			else
				opt_usage_error("--poll: '%s' is not wait, "
						"blocking or nonblocking",
						optarg);
			break;
		case 'q':
			quiet = 1;
			break;
		default:
			opt_help_or_error(o, argv, naa_usage);
		}
	}
	opt_no_operands(argc, argv);
	if (!to)
		opt_usage_error("--to IP is required");
	known = fn <= NAA_FN_LAST;
	if (fn == NAA_FN_INC && wire != NAAICE_WIRE_SPEC) {
		fprintf(stderr, "naa-client: inc needs the spec wire (the "
			"upstream wire does not send the result region)\n");
		return NAA_EXIT_USAGE;
	}
	rsize = known ? naa_result_size(fn, (unsigned int)regions, (size_t)size)
		      : 8;
	if (!rsize) {
		fprintf(stderr, "naa-client: %s does not take %ld regions of "
			"%lld bytes%s\n", naa_fn_name(fn), regions, size,
			fn == NAA_FN_MATMUL ?
			" (2 regions of 4*n*n bytes)" : "");
		return NAA_EXIT_USAGE;
	}
	signal(SIGPIPE, SIG_IGN);
	memset(params, 0, sizeof(params));
	want.p = naa_alloc(rsize);
	want.len = rsize;
	rtt = calloc((size_t)count, sizeof(*rtt));
	for (long i = 0; i <= regions; i++) {
		sizes[i] = (unsigned int)(i < regions ? (size_t)size : rsize);
		params[i] = naa_alloc(sizes[i]);
		if (!params[i])
			break;
		in[i].p = (uint8_t *)params[i];
		in[i].len = sizes[i];
	}
	if (!want.p || !rtt || !params[regions]) {
		fprintf(stderr, "naa-client: out of memory for %ld x %lld "
			"bytes\n", regions, size);
		ret = NAA_EXIT_SYSTEM;
		goto out;
	}
	if (naaice_init_communication_context(&ctx, sizes, params,
					      (unsigned int)regions + 1, fn,
					      to, (uint16_t)port)) {
		ret = NAA_EXIT_CONNECT;
		goto out;
	}
	ctx->timeout_ms = (int)tmo;
	naaice_set_wire(ctx, wire);
	if (naaice_setup_connection(ctx)) {
		fprintf(stderr, "naa-client: cannot connect to %s port %ld\n",
			to, port);
		ret = NAA_EXIT_CONNECT;
		goto out;
	}
	if (naaice_register_mrs(ctx) ||
	    naaice_set_metadata(ctx, (uintptr_t)params[regions]) ||
	    (n_int && naaice_set_internal_mrs(ctx, n_int, iaddr, isize))) {
		ret = NAA_EXIT_SYSTEM;
		goto out;
	}
	if (pmode == NAA_POLL_WAIT ? naaice_do_mrsp(ctx) :
	    naaice_init_mrsp(ctx) ||
	    naa_poll_until(ctx, MRSP_DONE, pmode, tmo)) {
		if (ctx->last_error == NAAICE_ERR_MRSP)
			fprintf(stderr, "naa-client: the NAA refused the "
				"memory regions (%ld inputs of %lld bytes and "
				"a result of %zu): %s\n", regions, size, rsize,
				naaice_mrsp_error_str(ctx->mrsp_error));
		ret = naa_exit_for(ctx->last_error);
		goto out;
	}
	naa_rng = 0x9e3779b97f4a7c15ULL;
	for (done = 0; done < count; done++) {
		struct timespec t0, t1;

		for (long i = 0; i < regions; i++)
			naa_fill(in[i].p, in[i].len);
		memset(params[regions], 0xa5, rsize);
		if (fn == NAA_FN_INC) {
			naa_fill(want.p, rsize);
			memcpy(params[regions], want.p, rsize);
		}
		if (known && naa_run(fn, in, (unsigned int)regions, &want)) {
			fprintf(stderr, "naa-client: cannot compute %s here\n",
				naa_fn_name(fn));
			ret = NAA_EXIT_SYSTEM;
			break;
		}
		clock_gettime(CLOCK_MONOTONIC, &t0);
		if (pmode == NAA_POLL_WAIT ? naaice_do_data_transfer(ctx) :
		    naaice_init_data_transfer(ctx) ||
		    naa_poll_until(ctx, FINISHED, pmode, tmo)) {
			clock_gettime(CLOCK_MONOTONIC, &t1);
			rtt[done] = naa_ms(&t0, &t1);
			if (ctx->last_error == NAAICE_ERR_REMOTE) {
				fprintf(stderr, "naa-client: RPC %ld: the NAA "
					"returned error code 0x%02x%s\n",
					done + 1, ctx->naa_returncode,
					ctx->naa_returncode == NAA_EUNKNOWN_FN ?
					" (unknown function)" : "");
				ret = NAA_EXIT_REMOTE;
				continue;
			}
			fprintf(stderr, "naa-client: RPC %ld failed: %s\n",
				done + 1, naaice_error_str(ctx->last_error));
			ret = naa_exit_for(ctx->last_error);
			break;
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		rtt[done] = naa_ms(&t0, &t1);
		if (!known) {
			fprintf(stderr, "naa-client: RPC %ld: function %u "
				"returned success, an error was expected\n",
				done + 1, fn);
			ret = NAA_EXIT_MISMATCH;
		} else if (memcmp(params[regions], want.p, rsize)) {
			size_t k = 0;

			while (((uint8_t *)params[regions])[k] == want.p[k])
				k++;
			fprintf(stderr, "naa-client: RPC %ld: result differs "
				"at byte %zu of %zu (got 0x%02x, want 0x%02x)\n",
				done + 1, k, rsize,
				((uint8_t *)params[regions])[k], want.p[k]);
			ret = NAA_EXIT_MISMATCH;
		}
		if (!quiet)
			printf("RPC %ld: %s, %.3f ms\n", done + 1,
			       ret == NAA_EXIT_OK ? "bit-exact" : "WRONG",
			       rtt[done]);
	}
	if (done) {
		double tot = 0, bytes = (double)size * regions + (double)rsize;

		for (long i = 0; i < done; i++)
			tot += rtt[i];
		qsort(rtt, (size_t)done, sizeof(*rtt), naa_cmp_double);
		printf("naa-client: %ld RPCs of %s (%ld x %lld bytes, %s wire): "
		       "%s; round trip min %.3f ms, median %.3f ms, max %.3f "
		       "ms, %.1f MB/s\n", done, naa_fn_name(fn), regions, size,
		       naaice_wire_name(wire),
		       ret == NAA_EXIT_OK ? "all bit-exact" : "FAILED",
		       rtt[0], rtt[done / 2], rtt[done - 1],
		       tot > 0 ? bytes * done / (tot / 1e3) / 1e6 : 0.0);
	}
out:
	naaice_disconnect_and_cleanup(ctx);
	for (long i = 0; i <= regions; i++)
		free(params[i]);
	free(want.p);
	free(rtt);
	return ret;
}
