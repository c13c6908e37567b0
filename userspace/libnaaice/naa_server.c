// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * naa-server: a software NAA.  Listens with rdma_cm, serves every client
 * in a thread of its own, runs the function the client's immediate names
 * (naa_kernels.h) and writes the result back with WRITE_WITH_IMM,
 * immediate 0 on success or a calculation error code.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "naa_kernels.h"
#include "snaa_opt.h"
#include "naaice_int.h"

static volatile sig_atomic_t naa_stop;
static int naa_quiet;
static pthread_mutex_t naa_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t naa_cond = PTHREAD_COND_INITIALIZER;
static unsigned int naa_active;
static unsigned long naa_next_id;

static void naa_on_signal(int sig)
{
	(void)sig;
	naa_stop = 1;
}

#define naa_log(...) do { if (!naa_quiet) { printf(__VA_ARGS__); \
			fflush(stdout); } } while (0)

struct naa_conn {
	struct naaice_communication_context *ctx;
	unsigned long id;
	char peer[64];
};

/* Run the requested function over the regions; the return code. */
static uint8_t naa_serve_rpc(struct naaice_communication_context *ctx)
{
	struct naa_buf in[NAAICE_MRSP_MAX_COUNT], out;
	unsigned int n = 0;

	if (naaice_swnaa_handle_metadata(ctx))
		return NAA_ESHAPE;
	for (unsigned int i = 0; i < ctx->no_local_mrs; i++) {
		struct naaice_mr_local *l = &ctx->mr_local_data[i];

		if (i == ctx->mr_return_idx)
			continue;
		if (ctx->wire == NAAICE_WIRE_SPEC ? i == 0 :
		    !(l->flags & MRFLAG_INPUT))
			continue;
		in[n].p = (uint8_t *)l->addr;
		in[n].len = l->size;
		n++;
	}
	out.p = (uint8_t *)ctx->mr_local_data[ctx->mr_return_idx].addr;
	out.len = ctx->mr_local_data[ctx->mr_return_idx].size;
	return naa_run(ctx->fncode, in, n, &out);
}

static void *naa_conn_thread(void *arg)
{
	struct naa_conn *c = arg;
	struct naaice_communication_context *ctx = c->ctx;
	unsigned long rpcs = 0;

	if (naaice_swnaa_setup_connection(ctx)) {
		naa_log("client %lu (%s): connection setup failed\n", c->id,
			c->peer);
		goto out;
	}
	naa_log("client %lu (%s): connected\n", c->id, c->peer);
	if (naaice_swnaa_do_mrsp(ctx)) {
		naa_log("client %lu: memory region setup failed: %s\n", c->id,
			ctx->mrsp_error ? naaice_mrsp_error_str(ctx->mrsp_error)
					: naaice_error_str(ctx->last_error));
		goto out;
	}
	naa_log("client %lu: %u regions set up\n", c->id, ctx->no_local_mrs);
	for (;;) {
		uint8_t rc;

		if (naaice_swnaa_receive_data_transfer(ctx))
			break;
		rc = naa_serve_rpc(ctx);
		if (rc)
			naa_log("client %lu: function %u (%s): error 0x%02x\n",
				c->id, ctx->fncode, naa_fn_name(ctx->fncode),
				rc);
		if (naaice_swnaa_write_data_transfer(ctx, rc))
			break;
		rpcs++;
	}
	if (ctx->last_error == NAAICE_ERR_DISCONNECTED)
		naa_log("client %lu: disconnected after %lu RPCs\n", c->id,
			rpcs);
	else if (ctx->last_error != NAAICE_ERR_CANCELLED)
		naa_log("client %lu: dropped after %lu RPCs: %s\n", c->id,
			rpcs, naaice_error_str(ctx->last_error));
out:
	naaice_swnaa_disconnect_and_cleanup(ctx);
	free(c);
	pthread_mutex_lock(&naa_lock);
	naa_active--;
	pthread_cond_broadcast(&naa_cond);
	pthread_mutex_unlock(&naa_lock);
	return NULL;
}

/*
 * The specification's software NAA, one client on the listening context:
 * setup_connection takes the first request, then MRSP and RPCs until the
 * client disconnects.
 */
static int naa_serve_once(struct naaice_communication_context *ctx)
{
	unsigned long rpcs = 0;
	int ok;

	if (naaice_swnaa_setup_connection(ctx) || naaice_swnaa_do_mrsp(ctx)) {
		naaice_swnaa_disconnect_and_cleanup(ctx);
		return 1;
	}
	while (!naaice_swnaa_receive_data_transfer(ctx) &&
	       !naaice_swnaa_write_data_transfer(ctx, naa_serve_rpc(ctx)))
		rpcs++;
	ok = ctx->last_error == NAAICE_ERR_DISCONNECTED;
	naa_log("naa-server: the client %s after %lu RPCs\n",
		ok ? "disconnected" : "was dropped", rpcs);
	naaice_swnaa_disconnect_and_cleanup(ctx);
	return ok ? 0 : 1;
}

static void naa_usage(FILE *f)
{
	fprintf(f,
"usage: naa-server [--port N] [--wire spec|upstream] [options]\n"
"A software NAA (NAAICE network-attached accelerator) over RDMA (rdma_cm,\n"
"RC): serves any number of clients at once until SIGINT/SIGTERM.\n"
"\n"
"  -p, --port N          rdma_cm port to listen on (default %d)\n"
"  -w, --wire MODE       spec (default): the NAAICE specification's wire,\n"
"                        as the public library of Dec 2023-Jan 2024;\n"
"                        upstream: the public library's current wire\n"
"  -m, --mem-limit SIZE  memory per client (default 1G); larger MRSP\n"
"                        requests are refused with \"not enough memory\"\n"
"  -r, --max-regions N   regions per client (default %d); more are refused\n"
"                        with \"too many regions\"\n"
"  -t, --timeout MS      bound on each wait for a client inside an RPC\n"
"                        (default 30000)\n"
"  -1, --once            serve one client with the specification's\n"
"                        single-client flow, then exit (0 if it ended\n"
"                        with a normal disconnect)\n"
"  -q, --quiet           no per-client log lines\n"
"  -h, --help            this text\n"
"\n"
"Functions (the client's function code): 1 add, 2 sum, 3 crc32c, 4 matmul,\n"
"5 inc (the result region as written by the client, each byte + 1).\n"
"Return codes: 0 success, 0x10 unknown function, 0x11 inputs do not fit.\n",
		NAAICE_DEFAULT_PORT, MAX_MRS);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "port", required_argument, NULL, 'p' },
		{ "wire", required_argument, NULL, 'w' },
		{ "mem-limit", required_argument, NULL, 'm' },
		{ "max-regions", required_argument, NULL, 'r' },
		{ "timeout", required_argument, NULL, 't' },
		{ "once", no_argument, NULL, '1' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct naaice_communication_context *lst, *conn;
	enum naaice_wire wire = NAAICE_WIRE_SPEC;
	long long mem = 1LL << 30;
	long port = NAAICE_DEFAULT_PORT, maxr = MAX_MRS, tmo = 30000;
	struct sigaction sa = { .sa_handler = naa_on_signal };
	int o, once = 0;

	opterr = 0;
	while ((o = getopt_long(argc, argv, ":p:w:m:r:t:1qh", opts, NULL)) != -1) {
		switch (o) {
		case 'p':
			port = opt_long("--port", optarg, 1, 65535);
			break;
		case 'w':
			if (naaice_wire_parse(optarg, &wire))
				opt_usage_error("--wire: '%s' is neither spec "
						"nor upstream", optarg);
			break;
		case 'm':
			mem = (long long)opt_size("--mem-limit", optarg, 1,
						  1ULL << 40);
			break;
		case 'r':
			maxr = opt_long("--max-regions", optarg, 1,
					NAAICE_MRSP_MAX_COUNT);
			break;
		case 't':
			tmo = opt_long("--timeout", optarg, 1, INT_MAX);
			break;
		case '1':
			once = 1;
			break;
		case 'q':
			naa_quiet = 1;
			break;
		default:
			opt_help_or_error(o, argv, naa_usage);
		}
	}
	opt_no_operands(argc, argv);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (naaice_swnaa_init_communication_context(&lst, (uint16_t)port)) {
		fprintf(stderr, "naa-server: cannot listen on port %ld\n",
			port);
		return 1;
	}
	lst->wire = wire;
	lst->mem_limit = (uint64_t)mem;
	lst->max_mrs = (unsigned int)maxr;
	lst->timeout_ms = (int)tmo;
	lst->cancel = &naa_stop;
	naa_log("naa-server: listening on port %ld, %s wire, %lld bytes and "
		"%ld regions per client\n", port, naaice_wire_name(wire), mem,
		maxr);
	if (once)
		return naa_serve_once(lst);
	while (!naa_stop) {
		struct naa_conn *c;
		pthread_t t;
		struct sockaddr *sa_peer;

		o = naaice_swnaa_accept(lst, &conn, -1);
		if (o) {
			if (lst->last_error == NAAICE_ERR_CANCELLED)
				break;
			usleep(100000);	/* no busy loop on a lasting error */
			continue;
		}
		c = calloc(1, sizeof(*c));
		if (!c) {
			naaice_swnaa_disconnect_and_cleanup(conn);
			continue;
		}
		c->ctx = conn;
		c->id = ++naa_next_id;
		sa_peer = rdma_get_peer_addr(conn->id);
		if (sa_peer && sa_peer->sa_family == AF_INET)
			inet_ntop(AF_INET,
				  &((struct sockaddr_in *)sa_peer)->sin_addr,
				  c->peer, sizeof(c->peer));
		else if (sa_peer && sa_peer->sa_family == AF_INET6)
			inet_ntop(AF_INET6,
				  &((struct sockaddr_in6 *)sa_peer)->sin6_addr,
				  c->peer, sizeof(c->peer));
		pthread_mutex_lock(&naa_lock);
		naa_active++;
		pthread_mutex_unlock(&naa_lock);
		if (pthread_create(&t, NULL, naa_conn_thread, c)) {
			naa_log("client %lu: no thread for it\n", c->id);
			rdma_reject(conn->id, NULL, 0);
			naaice_swnaa_disconnect_and_cleanup(conn);
			free(c);
			pthread_mutex_lock(&naa_lock);
			naa_active--;
			pthread_mutex_unlock(&naa_lock);
			continue;
		}
		pthread_detach(t);
	}
	/* The threads see naa_stop within 250 ms. */
	pthread_mutex_lock(&naa_lock);
	while (naa_active)
		pthread_cond_wait(&naa_cond, &naa_lock);
	pthread_mutex_unlock(&naa_lock);
	naaice_swnaa_disconnect_and_cleanup(lst);
	naa_log("naa-server: stopped after %lu clients\n", naa_next_id);
	return 0;
}
