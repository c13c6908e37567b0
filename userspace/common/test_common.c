// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Host tests of userspace/common: CRC-32C against known values, its two
 * implementations against each other at every alignment, GIDs from IP
 * addresses and their kinds, and the command line helpers: what they
 * accept, and that what they refuse ends the program with status 2 and
 * the one message format (each refusal runs in a child process, since
 * the helpers exit); opening a device that is not there.  KTAP.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../tests/lib/ktap.h"
#include "snaa_crc32c.h"
#include "snaa_dev.h"
#include "snaa_gid.h"
#include "snaa_opt.h"

#define PLAN	32

static void test_crc(void)
{
	static const char digits[] = "123456789";
	uint8_t b[32], big[4096 + 64];
	int same = 1;
	uint32_t c;

	result(snaa_crc32c(digits, 9) == 0xe3069283,
	       "CRC-32C(\"123456789\") = e3069283");
	result(snaa_crc32c("", 0) == 0, "CRC-32C of nothing = 0");
	memset(b, 0, 32);
	result(snaa_crc32c(b, 32) == 0x8a9136aa,
	       "RFC 3720 B.4: 32 bytes of zeros = 8a9136aa");
	memset(b, 0xff, 32);
	result(snaa_crc32c(b, 32) == 0x62a8ab43,
	       "RFC 3720 B.4: 32 bytes of ones = 62a8ab43");
	for (int i = 0; i < 32; i++)
		b[i] = (uint8_t)i;
	result(snaa_crc32c(b, 32) == 0x46dd794e,
	       "RFC 3720 B.4: 0x00..0x1f = 46dd794e");
	for (int i = 0; i < 32; i++)
		b[i] = (uint8_t)(31 - i);
	result(snaa_crc32c(b, 32) == 0x113fdb5c,
	       "RFC 3720 B.4: 0x1f..0x00 = 113fdb5c");
	result(~snaa_crc32c_update_sw(~0u, digits, 9) == 0xe3069283 &&
	       ~snaa_crc32c_update_hw(~0u, digits, 9) == 0xe3069283,
	       "both implementations: e3069283");
	srand(7);
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)rand();
	for (size_t off = 0; off < 16; off++)
		for (size_t len = 0; len < 300; len += 1 + len / 8)
			same &= snaa_crc32c_update_sw(0x1234, big + off, len)
				== snaa_crc32c_update_hw(0x1234, big + off,
							 len);
	same &= snaa_crc32c_update_sw(~0u, big, 4096) ==
		snaa_crc32c_update_hw(~0u, big, 4096);
	result(same, "software and SSE4.2 (%s) agree at every alignment",
	       snaa_crc32c_hw_available() ? "present" : "absent: sw twice");
	c = snaa_crc32c_update(~0u, big, 1000);
	c = snaa_crc32c_update(c, big + 1000, 3001);
	result(~c == snaa_crc32c(big, 4001), "a CRC in two pieces");
}

enum kind { K_SIZE, K_INT, K_U64, K_LONG };

/*
 * Run the helper of @kind on @arg in a child; true if it exited with
 * status 2 and printed exactly @msg (then the "Try" line) on stderr.
 */
static int refused(enum kind kind, const char *arg, const char *msg)
{
	char out[512], want[512];
	int fd[2], st;
	ssize_t n = 0, r;
	pid_t pid;

	if (pipe(fd))
		return 0;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return 0;
	if (!pid) {
		dup2(fd[1], 2);
		close(fd[0]);
		switch (kind) {
		case K_SIZE:
			opt_size("--size", arg, 64, 1ULL << 30);
			break;
		case K_INT:
			opt_int("--count", arg, 1, 100);
			break;
		case K_U64:
			opt_u64("--qpn", arg, 0xffffff);
			break;
		case K_LONG:
			opt_long("--delta", arg, -5, 5);
			break;
		}
		_exit(0);
	}
	close(fd[1]);
	while (n < (ssize_t)sizeof(out) - 1 &&
	       (r = read(fd[0], out + n, sizeof(out) - 1 - (size_t)n)) > 0)
		n += r;
	out[n] = 0;
	close(fd[0]);
	if (waitpid(pid, &st, 0) != pid)
		return 0;
	snprintf(want, sizeof(want), "%s: %s\nTry '%s --help'.\n",
		 program_invocation_short_name, msg,
		 program_invocation_short_name);
	if (strcmp(out, want))
		diag("stderr: %s", out);
	return WIFEXITED(st) && WEXITSTATUS(st) == OPT_EXIT_USAGE &&
	       !strcmp(out, want);
}

static const struct {
	const char *arg, *msg, *what;
} bad_sizes[] = {
	{ "63", "--size: size '63' out of range (64..1073741824 bytes)",
	  "below the minimum" },
	{ "2G", "--size: size '2G' out of range (64..1073741824 bytes)",
	  "above the maximum" },
	{ "17179869184G",
	  "--size: size '17179869184G' out of range (64..1073741824 bytes)",
	  "a suffix that overflows 64 bits (not wrapped)" },
	{ "4X", "--size: bad size '4X' (a number, optionally with K, M or G)",
	  "an unknown suffix" },
	{ "-4K", "--size: bad size '-4K' (a number, optionally with K, M or G)",
	  "a sign" },
	{ "", "--size: bad size '' (a number, optionally with K, M or G)",
	  "empty" },
	{ "4Ki", "--size: bad size '4Ki' (a number, optionally with K, M or G)",
	  "a half suffix (4Ki)" },
	{ "4iB", "--size: bad size '4iB' (a number, optionally with K, M or G)",
	  "iB without K, M or G" },
};

static void test_opt(void)
{
	result(opt_size("--size", "4096", 64, 1ULL << 30) == 4096 &&
	       opt_size("--size", "0x1000", 64, 1ULL << 30) == 4096 &&
	       opt_size("--size", "4K", 64, 1ULL << 30) == 4096 &&
	       opt_size("--size", "4k", 64, 1ULL << 30) == 4096 &&
	       opt_size("--size", "4KiB", 64, 1ULL << 30) == 4096 &&
	       opt_size("--size", "4KB", 64, 1ULL << 30) == 4096,
	       "opt_size: 4096, 0x1000, 4K, 4k, 4KiB and 4KB are 4096");
	result(opt_size("--size", "3M", 64, 1ULL << 30) == 3 << 20 &&
	       opt_size("--size", "1G", 64, 1ULL << 30) == 1ULL << 30 &&
	       opt_size("--size", "64B", 64, 1ULL << 30) == 64 &&
	       opt_size("--size", "64", 64, 1ULL << 30) == 64,
	       "opt_size: 3M, 1G (the maximum), 64B and 64 (the minimum)");
	for (size_t i = 0; i < sizeof(bad_sizes) / sizeof(bad_sizes[0]); i++)
		result(refused(K_SIZE, bad_sizes[i].arg, bad_sizes[i].msg),
		       "opt_size: %s: refused (status 2, the message)",
		       bad_sizes[i].what);
	result(opt_int("--count", "100", 1, 100) == 100 &&
	       opt_int("--count", "1", 1, 100) == 1,
	       "opt_int: both ends of the range");
	result(refused(K_INT, "0", "--count: bad value '0' (want 1..100)") &&
	       refused(K_INT, "101", "--count: bad value '101' (want 1..100)"),
	       "opt_int: just outside the range: refused");
	result(refused(K_INT, "0x10", "--count: bad value '0x10' (want 1..100)"),
	       "opt_int: decimal only");
	result(opt_u64("--qpn", "0xffffff", 0xffffff) == 0xffffff &&
	       opt_u64("--qpn", "017", 0xffffff) == 15,
	       "opt_u64: C notation (0x, octal)");
	result(refused(K_U64, "0x1000000",
		       "--qpn: bad number or out of range: '0x1000000' (at most 16777215)"),
	       "opt_u64: above the maximum: refused");
	result(refused(K_U64, "-1", "--qpn: bad number '-1'"),
	       "opt_u64: a sign: refused, not wrapped");
	result(opt_long("--delta", "-5", -5, 5) == -5 &&
	       opt_long("--delta", "5", -5, 5) == 5,
	       "opt_long: both ends of a signed range");
	result(refused(K_LONG, "6",
		       "--delta: bad number or out of range: '6' (want -5..5)"),
	       "opt_long: outside the range: refused");
}

static void test_gid(void)
{
	static const uint8_t v4[16] = { [10] = 0xff, [11] = 0xff, 198, 18, 0, 2 };
	static const uint8_t v6[16] = { 0x20, 0x01, 0x00, 0x02, [15] = 0x01 };
	union ibv_gid g;

	result(!snaa_gid_from_ip("198.18.0.2", &g) && !memcmp(g.raw, v4, 16) &&
	       snaa_gid_is_v4mapped(&g) && !snaa_gid_is_zero(&g) &&
	       snaa_gid_kind_of(&g) == SNAA_GID_IPV4,
	       "198.18.0.2 -> ::ffff:198.18.0.2, IPv4-mapped");
	result(!snaa_gid_from_ip("2001:2::1", &g) && !memcmp(g.raw, v6, 16) &&
	       !snaa_gid_is_v4mapped(&g) && !snaa_gid_is_linklocal(&g) &&
	       snaa_gid_kind_of(&g) == SNAA_GID_IPV6,
	       "2001:2::1 as it is, global IPv6");
	result(!snaa_gid_from_ip("fe80::1", &g) && snaa_gid_is_linklocal(&g) &&
	       !snaa_gid_from_ip("febf::1", &g) && snaa_gid_is_linklocal(&g) &&
	       !snaa_gid_from_ip("fec0::1", &g) && !snaa_gid_is_linklocal(&g),
	       "link-local is fe80::/10 (fe80::1 and febf::1, not fec0::1)");
	result(snaa_gid_from_ip("198.18.0.256", &g) == -1 &&
	       snaa_gid_is_zero(&g) && snaa_gid_from_ip("", &g) == -1 &&
	       snaa_gid_from_ip("snaa0", &g) == -1,
	       "no address (198.18.0.256, empty, a name): -1, the GID zeroed");
}

/*
 * No such device (the host has no RDMA device of that name, or none at
 * all): NULL, errno ENODEV, and one message on stderr that starts with
 * the program's name and says what to do.
 */
static void test_dev(void)
{
	char out[512];
	struct ibv_context *ctx;
	int fd[2], saved, err, ok;
	ssize_t n;

	if (pipe(fd)) {
		result(0, "snaa_dev_open: no such device (pipe: %s)",
		       strerror(errno));
		return;
	}
	fflush(stderr);
	saved = dup(2);
	dup2(fd[1], 2);
	close(fd[1]);
	errno = 0;
	ctx = snaa_dev_open("tdev", "snaa-no-such-device");
	err = errno;
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	n = read(fd[0], out, sizeof(out) - 1);
	close(fd[0]);
	out[n > 0 ? n : 0] = 0;
	if (ctx)
		ibv_close_device(ctx);
	ok = !ctx && err == ENODEV && !strncmp(out, "tdev: ", 6) &&
	     strstr(out, "rdma link add snaa-no-such-device type snaa") &&
	     strchr(out, '\n') == out + strlen(out) - 1;
	if (!ok)
		diag("got %p, errno %d, stderr: %s", (void *)ctx, err, out);
	result(ok, "snaa_dev_open: no such device: NULL, ENODEV, one line that "
	       "says how to create it");
}

int main(void)
{
	ktap_plan(PLAN);
	test_crc();
	test_opt();
	test_gid();
	test_dev();
	return test_finish("common", PLAN);
}
