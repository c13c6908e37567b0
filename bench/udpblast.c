// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * udpblast - measure how many UDP datagrams the kernel can move from one
 * socket to another, as fast as a sender can push them (bench/run.sh runs
 * it over a veth pair between two network namespaces: the ceiling for any
 * soft-RoCE inside the VM).
 *
 *   udpblast recv [-p PORT] [-i IDLE_MS] [-w WAIT_S] [-a ADDR] [-n EXPECT]
 *   udpblast send [-p PORT] [-n COUNT] [-s SIZE] [-b BATCH] ADDR
 *
 * The sender sends COUNT datagrams of SIZE payload bytes (sendmmsg, BATCH
 * at a time, on a connected socket) and then a few empty datagrams as end
 * markers.  The receiver counts the non-empty datagrams that arrive and
 * stops at the first end marker, or IDLE_MS after the last datagram (end
 * markers can be dropped like anything else), or after WAIT_S if nothing
 * arrives at all.  The rate is taken between the first and the last
 * datagram received; lost = EXPECT - received (-1 without -n).  Each side prints one line of "key=value" pairs:
 *
 *   send: count=... bytes=... secs=... gbits=... pps=... errors=...
 *   recv: count=... bytes=... secs=... gbits=... pps=... lost=...
 *
 * gbits counts UDP payload bytes only.  IPv4 only (bench addresses are in
 * 198.18.0.0/15).  Exit status 0 on success, 1 if nothing was received or
 * sent, 2 on usage errors.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "snaa_opt.h"

#define MAX_BATCH 256
#define MAX_SIZE 65507
#define BUF_BYTES (64 << 20)

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: udpblast recv [-p PORT] [-i IDLE_MS] [-w WAIT_S] [-a ADDR] [-n EXPECT]\n"
		"       udpblast send [-p PORT] [-n COUNT] [-s SIZE] [-b BATCH] ADDR\n");
}

/* Large socket buffers; SO_*BUFFORCE (root) ignores net.core.*mem_max. */
static void set_buf(int fd, int force, int plain)
{
	int v = BUF_BYTES;

	if (setsockopt(fd, SOL_SOCKET, force, &v, sizeof(v)))
		setsockopt(fd, SOL_SOCKET, plain, &v, sizeof(v));
}

static int do_send(int argc, char **argv)
{
	static char buf[MAX_SIZE];
	struct mmsghdr msgs[MAX_BATCH];
	struct iovec iov;
	struct sockaddr_in sin = { .sin_family = AF_INET };
	long count = 1000000, size = 1472, batch = 64, port = 18800;
	long sent = 0, errors = 0;
	double t0, secs;
	int fd, opt, i;

	opterr = 0;
	while ((opt = getopt(argc, argv, ":p:n:s:b:h")) != -1) {
		switch (opt) {
		case 'p': port = opt_long("-p", optarg, 1, 65535); break;
		case 'n': count = opt_long("-n", optarg, 1, 1L << 40); break;
		case 's': size = opt_long("-s", optarg, 1, MAX_SIZE); break;
		case 'b': batch = opt_long("-b", optarg, 1, MAX_BATCH); break;
		default: opt_help_or_error(opt, argv, usage);
		}
	}
	if (optind + 1 != argc)
		opt_usage_error("send: one IPv4 address expected");
	if (inet_pton(AF_INET, argv[optind], &sin.sin_addr) != 1)
		opt_usage_error("send: '%s' is no IPv4 address", argv[optind]);
	sin.sin_port = htons(port);

	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sin, sizeof(sin))) {
		perror("udpblast: send socket");
		return 1;
	}
	set_buf(fd, SO_SNDBUFFORCE, SO_SNDBUF);
	memset(buf, 0xa5, sizeof(buf));
	iov.iov_base = buf;
	iov.iov_len = size;
	memset(msgs, 0, sizeof(msgs));
	for (i = 0; i < MAX_BATCH; i++) {
		msgs[i].msg_hdr.msg_iov = &iov;
		msgs[i].msg_hdr.msg_iovlen = 1;
	}

	t0 = now();
	while (sent < count) {
		int n = count - sent < batch ? count - sent : batch;
		int r = sendmmsg(fd, msgs, n, 0);

		if (r > 0) {
			sent += r;
		} else if (errno == ENOBUFS || errno == EAGAIN ||
			   errno == ECONNREFUSED || errno == EINTR) {
			/* qdisc/veth full, or an ICMP error: keep going */
			errors++;
			if (errors > count)
				break;
		} else {
			perror("udpblast: sendmmsg");
			break;
		}
	}
	secs = now() - t0;

	/* End markers: empty datagrams, spread out a little. */
	iov.iov_len = 0;
	for (i = 0; i < 10; i++) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };

		if (send(fd, buf, 0, 0) < 0)
			errors++;
		nanosleep(&ts, NULL);
	}
	close(fd);

	if (secs <= 0)
		secs = 1e-9;
	printf("send: count=%ld bytes=%ld secs=%.6f gbits=%.4f pps=%.0f errors=%ld\n",
	       sent, sent * size, secs, sent * size * 8 / secs / 1e9,
	       sent / secs, errors);
	return sent ? 0 : 1;
}

static int do_recv(int argc, char **argv)
{
	static char bufs[MAX_BATCH][MAX_SIZE + 1];
	struct mmsghdr msgs[MAX_BATCH];
	struct iovec iovs[MAX_BATCH];
	struct sockaddr_in sin = { .sin_family = AF_INET };
	long port = 18800, idle_ms = 1000, wait_s = 30;
	long count = 0, bytes = 0, expect = -1;
	double first = 0, last = 0, start, secs, rate;
	int fd, opt, i, done = 0;

	sin.sin_addr.s_addr = htonl(INADDR_ANY);
	opterr = 0;
	while ((opt = getopt(argc, argv, ":p:i:w:a:n:h")) != -1) {
		switch (opt) {
		case 'p': port = opt_long("-p", optarg, 1, 65535); break;
		case 'i': idle_ms = opt_long("-i", optarg, 1, 3600000); break;
		case 'w': wait_s = opt_long("-w", optarg, 1, 3600); break;
		case 'n': expect = opt_long("-n", optarg, 1, 1L << 40); break;
		case 'a':
			if (inet_pton(AF_INET, optarg, &sin.sin_addr) != 1)
				opt_usage_error("-a: '%s' is no IPv4 address",
						optarg);
			break;
		default: opt_help_or_error(opt, argv, usage);
		}
	}
	opt_no_operands(argc, argv);
	sin.sin_port = htons(port);

	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0) {
		perror("udpblast: recv socket");
		return 1;
	}
	set_buf(fd, SO_RCVBUFFORCE, SO_RCVBUF);
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin))) {
		perror("udpblast: bind");
		return 1;
	}
	for (i = 0; i < MAX_BATCH; i++) {
		iovs[i].iov_base = bufs[i];
		iovs[i].iov_len = sizeof(bufs[i]);
		memset(&msgs[i], 0, sizeof(msgs[i]));
		msgs[i].msg_hdr.msg_iov = &iovs[i];
		msgs[i].msg_hdr.msg_iovlen = 1;
	}
	/* Ready: run.sh waits for this line before starting the sender. */
	printf("recv: listening on port %ld\n", port);
	fflush(stdout);

	start = now();
	while (!done) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int timeout = count ? idle_ms : 100;
		int r = poll(&pfd, 1, timeout);

		if (r < 0 && errno != EINTR) {
			perror("udpblast: poll");
			break;
		}
		if (r == 0) {
			if (count || now() - start > wait_s)
				break;
			continue;
		}
		r = recvmmsg(fd, msgs, MAX_BATCH, MSG_DONTWAIT, NULL);
		if (r < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			perror("udpblast: recvmmsg");
			break;
		}
		for (i = 0; i < r; i++) {
			if (msgs[i].msg_len == 0) {
				if (count)
					done = 1;
				continue;
			}
			if (!count)
				first = now();
			count++;
			bytes += msgs[i].msg_len;
		}
		if (count)
			last = now();
	}
	close(fd);

	secs = last - first;
	if (secs <= 0)
		secs = 1e-9;
	/* count - 1 intervals between the first and the last datagram */
	rate = count > 1 ? (count - 1) / secs : 0.0;
	printf("recv: count=%ld bytes=%ld secs=%.6f gbits=%.4f pps=%.0f lost=%ld\n",
	       count, bytes, secs, rate * ((double)bytes / (count ? count : 1)) * 8 / 1e9,
	       rate, expect >= 0 ? expect - count : -1L);
	return count ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "send"))
		return do_send(argc - 1, argv + 1);
	if (!strcmp(argv[1], "recv"))
		return do_recv(argc - 1, argv + 1);
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return 0;
	}
	usage(stderr);
	return 2;
}
