// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rawpkt: send hand-crafted RoCEv2 frames (Ethernet / IPv4 / UDP 4791 /
 * BTH / extension headers / payload / pad / ICRC) over an AF_PACKET
 * socket, optionally broken on purpose.  The headers come from the
 * driver's own codecs (snaa_wire.c) and the ICRC from the portable CRC-32
 * of the host unit tests, so a frame built without mutations is exactly
 * what a correct RoCEv2 sender puts on the wire.
 *
 * Used by malformed.sh: the sender side needs no RDMA device at all.
 *
 * Build: make -C selftests/snaa rawpkt (rawpkt.c, snaa_opt.c, the
 * driver's snaa_wire.c and tests/lib/hexline.c, with
 * -I drivers/infiniband/sw/snaa -I tests/unit -I tests/lib).
 *
 * Order of construction, which defines what each mutation means:
 *   1. BTH (--opcode --qpn --psn --pkey --se --ackreq --tver, pad count
 *      from --pad or from the payload length), extension headers from the
 *      opcode table (RETH: --va --rkey --dma-len; ImmDt: --imm; DETH:
 *      --qkey --sqpn; IETH: --rkey), payload (--payload-len with --fill,
 *      or --payload HEX), pad bytes (zero);
 *   2. --cut N removes the last N bytes of that (headers included), so
 *      the ICRC computed next is valid for the short packet;
 *   3. IPv4 and UDP headers with the right lengths; --udp-len-lie D adds
 *      D to the UDP length field; IP header checksum; UDP checksum if
 *      --udp-csum (else 0);
 *   4. ICRC over the result (--bad-icrc flips its lowest bit);
 *   5. --truncate N removes the last N bytes of the UDP payload (ICRC
 *      first) and fixes the IP total length, IP checksum and UDP length
 *      so that the IP and UDP layers still deliver the frame.
 *
 * --mutate N sends N mutants of that packet instead (the packet fuzzer of
 * fuzz.sh): each draws new values for some of the fields above and may
 * then have bytes of its RoCE part flipped, keeping valid IP and UDP
 * headers, so that every frame reaches snaa; see mutate().
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <ifaddrs.h>
#include <inttypes.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netpacket/packet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "snaa_wire.h"
#include "crc32_le.h"
#include "hexline.h"
#include "snaa_opt.h"

#define ETH_HDR		14
#define IP_HDR		SNAA_IPV4_HDR_BYTES
#define UDP_HDR		SNAA_UDP_HDR_BYTES
#define MAX_PAYLOAD	9000
#define MAX_BODY	(SNAA_MAX_BTH_EXT_BYTES + MAX_PAYLOAD + 4)
#define MAX_IP_OPTS	10	/* 32-bit words: IHL up to 15 */
#define MAX_FRAME	(ETH_HDR + IP_HDR + 4 * MAX_IP_OPTS + UDP_HDR + \
			 MAX_BODY + SNAA_ICRC_BYTES)

struct opts {
	const char *dev;
	uint8_t dmac[6], smac[6];
	int have_dmac, have_smac;
	struct in_addr saddr, daddr;
	int have_saddr, have_daddr;
	uint16_t sport, dport;
	uint8_t ttl, tos;

	int opcode;
	uint32_t qpn, psn;
	int have_qpn;
	uint16_t pkey;
	int se, ackreq, mig, tver;
	uint8_t resv8a;
	uint64_t va;
	uint32_t rkey, dma_len, imm, qkey, sqpn;
	int have_dma_len;
	uint32_t payload_len;
	int fill;			/* -1: ramp 0x80 | (i & 0x7f) */
	uint8_t *payload_hex;		/* --payload */
	int pad;			/* -1: from the payload length */
	int pad_count;			/* -1: = pad */
	unsigned int ip_opts;		/* IPv4 option words (NOPs) */

	int bad_icrc;
	uint32_t truncate;
	uint32_t cut;
	long udp_len_lie;
	int udp_csum;
	unsigned long count;
	int psn_inc;

	unsigned long garbage;
	uint64_t seed;
	uint32_t garbage_max;
	int garbage_icrc;
	unsigned long mutate;
	uint32_t mutate_max;

	int print, no_send, verbose;
};

static struct opts o = {
	.sport = 0xc000, .dport = SNAA_ROCE_V2_UDP_DPORT, .ttl = 64,
	.opcode = 0x2a, .pkey = SNAA_DEFAULT_PKEY, .fill = -1, .pad = -1,
	.pad_count = -1,
	.qkey = 0x11111111, .sqpn = 1, .count = 1, .seed = 1,
	.garbage_max = 256, .mutate_max = 1400,
};

static void usage(FILE *f)
{
	fprintf(f,
"Usage: rawpkt --dev IF --daddr A.B.C.D [--qpn N] [OPTIONS]\n"
"       rawpkt --dev IF --daddr A.B.C.D --garbage N [--seed S] [...]\n"
"       rawpkt --list-opcodes | --help\n"
"\n"
"Sends RoCEv2 frames (IPv4, UDP port 4791) out of network interface IF\n"
"through an AF_PACKET socket (needs CAP_NET_RAW).  Without mutations the\n"
"frame is a correct RoCEv2 packet with a valid ICRC.\n"
"\n"
"Addressing:\n"
"  --dev IF            interface to send on (required)\n"
"  --dmac MAC          destination MAC; default: IF's ARP entry for --daddr\n"
"  --smac MAC          source MAC; default: IF's address (sysfs)\n"
"  --saddr A.B.C.D     source address; default: IF's first IPv4 address\n"
"  --daddr A.B.C.D     destination address (required)\n"
"  --sport N           UDP source port (default 49152)\n"
"  --dport N           UDP destination port (default 4791)\n"
"  --ttl N --tos N     IPv4 TTL (default 64) and TOS (default 0)\n"
"  --udp-csum          compute the UDP checksum (default: 0, none)\n"
"\n"
"Transport headers:\n"
"  --opcode OP         IBA opcode name (see --list-opcodes, case does not\n"
"                      matter) or number, e.g. 0x2a; default\n"
"                      UC_RDMA_WRITE_ONLY.  Opcodes with no table entry\n"
"                      (reserved) get a bare BTH before the payload\n"
"  --qpn N             destination QP number (required unless --garbage)\n"
"  --psn N             PSN (default 0)\n"
"  --pkey N            P_Key (default 0xffff)\n"
"  --se --ackreq --mig BTH flags\n"
"  --tver N            BTH transport version (default 0)\n"
"  --resv8a N          BTH byte 4 (default 0; masked out of the ICRC)\n"
"  --va N --rkey N     RETH virtual address and R_Key (IETH: the R_Key)\n"
"  --dma-len N         RETH DMA length (default: the payload length)\n"
"  --imm N             immediate data, as a number (wire: big endian)\n"
"  --qkey N --sqpn N   DETH Q_Key (default 0x11111111), source QPN (1)\n"
"  --payload-len N     payload bytes (default 0, at most %d)\n"
"  --fill B            payload bytes all B (default: byte i is\n"
"                      0x80 | (i & 0x7f))\n"
"  --payload HEX       the payload itself (sets --payload-len)\n"
"\n"
"Mutations:\n"
"  --pad N             BTH pad count N and N zero pad bytes after the\n"
"                      payload (default: what the payload length needs)\n"
"  --pad-count N       BTH pad count N, whatever the pad bytes are\n"
"  --ip-options N      N 32-bit words of IPv4 options (NOPs, IHL 5 + N);\n"
"                      (the ICRC covers the first 20 bytes of IP header)\n"
"  --cut N             remove the last N bytes before the ICRC: headers and\n"
"                      payload are short, the ICRC is valid for them\n"
"  --bad-icrc          flip a bit of the ICRC\n"
"  --truncate N        cut N bytes off the end after building (the ICRC\n"
"                      first); IP and UDP lengths follow, so the frame\n"
"                      still reaches the RoCE layer\n"
"  --udp-len-lie D     add D (may be negative) to the UDP length field\n"
"                      (the ICRC covers the lie)\n"
"  --count N           send N copies (default 1)\n"
"  --psn-inc           add 1 to the PSN for each copy\n"
"\n"
"Garbage:\n"
"  --garbage N         send N random UDP payloads to the port instead (PRNG\n"
"                      seeded by --seed, default 1; same seed, same frames)\n"
"  --garbage-max-len N longest random UDP payload (default 256)\n"
"  --garbage-icrc      make each payload at least 16 bytes, with random\n"
"                      fields often fixed up (TVer 0, P_Key 0xffff, a UC\n"
"                      opcode, --qpn if given, aligned length) and a valid\n"
"                      ICRC, so that it gets past the ICRC check\n"
"\n"
"Fuzzing:\n"
"  --mutate N          send N mutants of the packet the options describe:\n"
"                      random values for some of opcode, BTH fields, PSN\n"
"                      (near --psn), QPN, P_Key, RETH VA / R_Key / DMA\n"
"                      length, immediate, DETH, payload length (up to\n"
"                      --mutate-max-len), pad, cut; then sometimes random\n"
"                      bytes of the RoCE part flipped; 1 in 16 with a bad\n"
"                      ICRC.  IP and UDP stay valid.  PRNG seeded by\n"
"                      --seed; the same seed gives the same frames.  Prints\n"
"                      \"mutants=N icrc_ok=N icrc_bad=N\" at the end\n"
"  --mutate-max-len N  longest mutant payload (default 1400)\n"
"\n"
"Other:\n"
"  --print             hex dump every frame sent on stdout\n"
"  --no-send           build and print (implies --print), do not send\n"
"  -v, --verbose       one line per frame on stderr\n"
"  --list-opcodes      list the opcode names and numbers\n"
"  -h, --help          this text\n"
"\n"
"Exit status: 0 all frames sent, 1 error, 2 usage error.\n",
		MAX_PAYLOAD);
}

static int parse_mac(const char *s, uint8_t mac[6])
{
	unsigned int b[6];
	char c;
	int i;

	if (sscanf(s, "%x:%x:%x:%x:%x:%x%c", &b[0], &b[1], &b[2], &b[3],
		   &b[4], &b[5], &c) != 6)
		return -1;
	for (i = 0; i < 6; i++) {
		if (b[i] > 0xff)
			return -1;
		mac[i] = (uint8_t)b[i];
	}
	return 0;
}

static void parse_payload_hex(const char *s)
{
	size_t n = strlen(s);

	if (n % 2 || n / 2 > MAX_PAYLOAD)
		opt_usage_error("--payload needs an even number of hex digits "
				"(at most 2 * max payload): %s", s);
	o.payload_hex = malloc(n / 2 + 1);
	if (!o.payload_hex) {
		perror("rawpkt: malloc");
		exit(1);
	}
	if (hex_decode(s, n, o.payload_hex) < 0)
		opt_usage_error("bad hex in --payload: %s", s);
	o.payload_len = (uint32_t)(n / 2);
}

static int parse_opcode(const char *s)
{
	const struct snaa_opcode_info *op;
	int i;

	for (i = 0; i < 256; i++) {
		op = snaa_opcode_lookup((__u8)i);
		if (op && !strcasecmp(op->name, s))
			return i;
	}
	if ((s[0] >= '0' && s[0] <= '9'))
		return (int)opt_u64("--opcode", s, 255);
	opt_usage_error("unknown opcode name %s (rawpkt --list-opcodes)", s);
	return -1;
}

static void list_opcodes(void)
{
	const struct snaa_opcode_info *op;
	int i;

	for (i = 0; i < 256; i++) {
		op = snaa_opcode_lookup((__u8)i);
		if (op)
			printf("0x%02x %s%s\n", i, op->name,
			       op->flags & SNAA_OPF_UNSUPPORTED ?
			       " (not implemented by snaa)" : "");
	}
}

static int read_sysfs_mac(const char *dev, uint8_t mac[6])
{
	char path[128], buf[64];
	FILE *f;
	int ret = -1;

	snprintf(path, sizeof(path), "/sys/class/net/%s/address", dev);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fgets(buf, sizeof(buf), f)) {
		buf[strcspn(buf, "\n")] = 0;
		ret = parse_mac(buf, mac);
	}
	fclose(f);
	return ret;
}

/* The complete ARP entry of @ip on @dev, from /proc/net/arp. */
static int read_arp_mac(const char *dev, struct in_addr ip, uint8_t mac[6])
{
	char line[256], addr[64], hw[64], ifn[64];
	unsigned int type, flags;
	FILE *f = fopen("/proc/net/arp", "r");
	int ret = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		struct in_addr a;

		if (sscanf(line, "%63s 0x%x 0x%x %63s %*s %63s", addr, &type,
			   &flags, hw, ifn) != 5)
			continue;
		if (inet_pton(AF_INET, addr, &a) != 1 ||
		    a.s_addr != ip.s_addr || strcmp(ifn, dev) ||
		    !(flags & 0x2))	/* ATF_COM */
			continue;
		ret = parse_mac(hw, mac);
		break;
	}
	fclose(f);
	return ret;
}

static int read_if_addr(const char *dev, struct in_addr *out)
{
	struct ifaddrs *ifa, *i;
	int ret = -1;

	if (getifaddrs(&ifa))
		return -1;
	for (i = ifa; i; i = i->ifa_next) {
		if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET &&
		    !strcmp(i->ifa_name, dev)) {
			*out = ((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr;
			ret = 0;
			break;
		}
	}
	freeifaddrs(ifa);
	return ret;
}

/* ---- checksums ----------------------------------------------------- */

static uint32_t csum_add(uint32_t sum, const uint8_t *p, size_t len)
{
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (len & 1)
		sum += (uint32_t)(p[len - 1] << 8);
	return sum;
}

static uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static void ip_csum(uint8_t *ip)
{
	ip[10] = ip[11] = 0;
	snaa_put_be16(ip + 10, csum_fold(csum_add(0, ip, (ip[0] & 15) * 4u)));
}

/* UDP checksum over the pseudo header and @udp_len bytes at @udp. */
static void udp_csum(const uint8_t *ip, uint8_t *udp, size_t avail)
{
	uint16_t ulen = snaa_get_be16(udp + 4);
	size_t len = ulen < avail ? ulen : avail;
	uint8_t ph[12];
	uint16_t c;

	memcpy(ph, ip + 12, 8);
	ph[8] = 0;
	ph[9] = 17;
	snaa_put_be16(ph + 10, ulen);
	udp[6] = udp[7] = 0;
	c = csum_fold(csum_add(csum_add(0, ph, sizeof(ph)), udp, len));
	snaa_put_be16(udp + 6, c ? c : 0xffff);
}

/* ---- frame construction -------------------------------------------- */

static uint16_t ip_id;

/* IPv4 header length with the options: where the UDP header starts. */
static size_t ip_hlen(void)
{
	return IP_HDR + 4 * (size_t)o.ip_opts;
}

static uint8_t *bth_of(uint8_t *frame)
{
	return frame + ETH_HDR + ip_hlen() + UDP_HDR;
}

/*
 * Wrap @body_len bytes already at frame + 42 in Ethernet, IPv4 and UDP
 * headers with correct lengths (UDP payload = @body_len + @extra).
 */
static void put_headers(uint8_t *frame, size_t udp_payload)
{
	uint8_t *ip = frame + ETH_HDR, *udp = ip + ip_hlen();
	long ulen = (long)(UDP_HDR + udp_payload) + o.udp_len_lie;

	memcpy(frame, o.dmac, 6);
	memcpy(frame + 6, o.smac, 6);
	frame[12] = 0x08;
	frame[13] = 0x00;

	ip[0] = (uint8_t)(0x40 | (ip_hlen() / 4));
	ip[1] = o.tos;
	snaa_put_be16(ip + 2, (uint16_t)(ip_hlen() + UDP_HDR + udp_payload));
	snaa_put_be16(ip + 4, ip_id++);
	ip[6] = 0x40;			/* DF */
	ip[7] = 0;
	ip[8] = o.ttl;
	ip[9] = 17;			/* UDP */
	memcpy(ip + 12, &o.saddr, 4);
	memcpy(ip + 16, &o.daddr, 4);
	memset(ip + IP_HDR, 1, ip_hlen() - IP_HDR);	/* NOP options */
	ip_csum(ip);

	snaa_put_be16(udp, o.sport);
	snaa_put_be16(udp + 2, o.dport);
	snaa_put_be16(udp + 4, (uint16_t)(ulen < 0 ? 0 : ulen > 0xffff ?
					  0xffff : ulen));
	udp[6] = udp[7] = 0;
	if (o.udp_csum)
		udp_csum(ip, udp, UDP_HDR + udp_payload);
}

/* Append the ICRC to @body_len bytes of body; return the new length. */
static size_t put_icrc(uint8_t *frame, size_t body_len, int bad)
{
	uint8_t *ip = frame + ETH_HDR;
	uint8_t *bth = bth_of(frame);
	uint8_t hdr[IP_HDR + UDP_HDR];
	__u32 icrc;

	/* The ICRC helpers want the UDP header right after 20 bytes of IP. */
	memcpy(hdr, ip, IP_HDR);
	memcpy(hdr + IP_HDR, ip + ip_hlen(), UDP_HDR);
	icrc = snaa_icrc_compute(test_crc32_le, hdr, 0, bth, body_len);

	if (bad)
		icrc ^= 1;
	snaa_icrc_put(bth + body_len, icrc);
	return body_len + SNAA_ICRC_BYTES;
}

/* Build the requested packet into @frame; return the frame length. */
static size_t build_packet(uint8_t *frame, uint32_t psn)
{
	uint8_t *bth = bth_of(frame);
	const struct snaa_opcode_info *op = snaa_opcode_lookup((__u8)o.opcode);
	struct snaa_bth_info b = { 0 };
	size_t hdr_len = op ? op->hdr_len : SNAA_BTH_BYTES;
	uint32_t flags = op ? op->flags : 0;
	uint32_t pad = o.pad >= 0 ? (uint32_t)o.pad :
				    snaa_pad_for(o.payload_len);
	size_t body_len, udp_payload, i;
	uint8_t *pl;

	memset(bth, 0, hdr_len);
	b.opcode = (__u8)o.opcode;
	b.se = (__u8)o.se;
	b.mig = (__u8)o.mig;
	b.pad = (__u8)((o.pad_count >= 0 ? (uint32_t)o.pad_count : pad) & 3);
	b.tver = (__u8)o.tver;
	b.pkey = o.pkey;
	b.resv8a = o.resv8a;
	b.dqpn = o.qpn;
	b.ack_req = (__u8)o.ackreq;
	b.psn = psn;
	snaa_bth_set(bth, &b);

	if (flags & SNAA_OPF_RETH) {
		struct snaa_reth_info r = {
			.va = o.va, .rkey = o.rkey,
			.dma_len = o.have_dma_len ? o.dma_len : o.payload_len,
		};

		snaa_reth_set(bth + op->reth_off, &r);
	}
	if (flags & SNAA_OPF_ATMETH) {
		struct snaa_atmeth_info a = { .va = o.va, .rkey = o.rkey };

		snaa_atmeth_set(bth + op->atmeth_off, &a);
	}
	if (flags & SNAA_OPF_DETH) {
		struct snaa_deth_info d = { .qkey = o.qkey, .sqpn = o.sqpn };

		snaa_deth_set(bth + op->deth_off, &d);
	}
	if (flags & SNAA_OPF_IMMDT)
		snaa_immdt_set(bth + op->immdt_off, o.imm);
	if (flags & SNAA_OPF_IETH)
		snaa_ieth_set(bth + op->ieth_off, o.rkey);

	pl = bth + hdr_len;
	for (i = 0; i < o.payload_len; i++)
		pl[i] = o.payload_hex ? o.payload_hex[i] :
			o.fill >= 0 ? (uint8_t)o.fill : (uint8_t)(0x80 | (i & 0x7f));
	memset(pl + o.payload_len, 0, pad);
	body_len = hdr_len + o.payload_len + pad;

	if (o.cut) {
		if (o.cut > body_len - SNAA_BTH_BYTES) {
			fprintf(stderr, "rawpkt: --cut %u leaves less than a "
				"BTH (%zu bytes before the ICRC); use "
				"--truncate\n", o.cut, body_len);
			exit(2);
		}
		body_len -= o.cut;
	}

	udp_payload = body_len + SNAA_ICRC_BYTES;
	put_headers(frame, udp_payload);
	put_icrc(frame, body_len, o.bad_icrc);

	if (o.truncate) {
		if (o.truncate > udp_payload) {
			fprintf(stderr, "rawpkt: --truncate %u is more than the "
				"UDP payload (%zu bytes)\n", o.truncate,
				udp_payload);
			exit(2);
		}
		udp_payload -= o.truncate;
		put_headers(frame, udp_payload);	/* lengths, checksums */
	}
	return ETH_HDR + ip_hlen() + UDP_HDR + udp_payload;
}

/* ---- garbage ------------------------------------------------------- */

static uint64_t rng_state;

static uint64_t rng(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

static size_t build_garbage(uint8_t *frame)
{
	uint8_t *bth = bth_of(frame);
	size_t len, i;

	if (!o.garbage_icrc) {
		len = (size_t)(rng() % (o.garbage_max + 1));
		for (i = 0; i < len; i++)
			bth[i] = (uint8_t)rng();
		put_headers(frame, len);
		return ETH_HDR + ip_hlen() + UDP_HDR + len;
	}

	/* BTH + body of 12 .. max-4 bytes, then a valid ICRC. */
	len = SNAA_BTH_BYTES +
	      (size_t)(rng() % (o.garbage_max - SNAA_ICRC_BYTES -
				SNAA_BTH_BYTES + 1));
	for (i = 0; i < len; i++)
		bth[i] = (uint8_t)rng();
	if (rng() & 1)
		bth[1] &= (uint8_t)~SNAA_BTH_TVER_MASK;
	if (rng() & 1)
		snaa_put_be16(bth + 2, SNAA_DEFAULT_PKEY);
	if (o.have_qpn && rng() % 4)
		snaa_put_be24(bth + 5, o.qpn);
	if (rng() & 1)
		bth[0] = (uint8_t)(SNAA_OPCODE_UC + rng() % 12);
	if (rng() & 1) {
		len &= ~(size_t)3;
		if (len < SNAA_BTH_BYTES)
			len = SNAA_BTH_BYTES;
	}
	put_headers(frame, len + SNAA_ICRC_BYTES);
	put_icrc(frame, len, 0);
	return ETH_HDR + ip_hlen() + UDP_HDR + len + SNAA_ICRC_BYTES;
}

/* ---- mutants ------------------------------------------------------- */

static unsigned long mutants_bad_icrc;

/* A random value near @base: equal, a little off, or anything. */
static uint64_t near(uint64_t base, uint64_t span)
{
	switch (rng() % 8) {
	case 0:
		return rng();
	case 1:
		return base - 1 - rng() % span;
	case 2:
	case 3:
		return base + rng() % span;
	default:
		return base;
	}
}

/* Some boundary value of a field of @bits bits. */
static uint64_t edge(int bits)
{
	static const uint64_t v[] = { 0, 1, 0x7f, 0x80, 0xff, 0xffff,
				      0xffffff, 0x7fffffff, 0xffffffff,
				      0x8000000000000000ULL, ~0ULL };
	uint64_t x = v[rng() % (sizeof(v) / sizeof(v[0]))];

	return bits >= 64 ? x : x & ((1ULL << bits) - 1);
}

/*
 * Build a mutant of the packet the options describe into @frame: new
 * values for some fields (each field is kept as given most of the time,
 * so mutants reach deep into the receive path), then maybe flipped bytes
 * in the RoCE part and a fresh ICRC, or a bad one.  The IP and UDP
 * headers stay valid: every frame is handed to snaa.
 */
static size_t build_mutant(uint8_t *frame)
{
	static const uint32_t lens[] = { 0, 1, 3, 4, 63, 64, 255, 256, 257,
					 1023, 1024, 1025 };
	const struct opts base = o;
	size_t len, body, i, hdr;
	uint8_t *bth;

	switch (rng() % 8) {
	case 0:
		o.opcode = (int)(rng() & 0xff);
		break;
	case 1:
	case 2:
		o.opcode = (int)(SNAA_OPCODE_UC + rng() % 12);
		break;
	case 3:
		o.opcode = (int)(rng() % 0x18);		/* RC */
		break;
	}
	o.psn = (uint32_t)near(o.psn, 8) & SNAA_PSN_MASK;
	if (!(rng() % 16))
		o.qpn = (uint32_t)(rng() & 1 ? rng() : edge(24)) & SNAA_QPN_MASK;
	if (!(rng() % 16))
		o.pkey = (uint16_t)(rng() & 1 ? rng() : edge(16));
	if (!(rng() % 16))
		o.tver = (int)(rng() & 15);
	o.se = (int)(rng() & 1);
	o.ackreq = (int)(rng() & 1);
	o.mig = !(rng() % 8);
	o.resv8a = rng() % 8 ? 0 : (uint8_t)rng();
	if (rng() % 2)
		o.va = rng() % 4 ? near(o.va, 65536) : edge(64);
	if (!(rng() % 4))
		o.rkey = (uint32_t)(rng() % 2 ? rng() : o.rkey ^ (1u << rng() % 32));
	if (rng() % 2) {
		o.have_dma_len = 1;
		o.dma_len = (uint32_t)(rng() % 2 ? near(o.payload_len, 4096) :
					edge(32));
	}
	if (!(rng() % 4))
		o.imm = (uint32_t)rng();
	if (!(rng() % 4)) {
		o.qkey = (uint32_t)(rng() % 2 ? rng() : edge(32));
		o.sqpn = (uint32_t)rng() & SNAA_QPN_MASK;
	}
	o.payload_len = rng() % 2 ? lens[rng() % (sizeof(lens) / sizeof(lens[0]))] :
				    (uint32_t)(rng() % (o.mutate_max + 1));
	if (o.payload_len > o.mutate_max)
		o.payload_len = o.mutate_max;
	o.fill = rng() % 2 ? -1 : (int)(rng() & 0xff);
	o.pad = -1;
	o.pad_count = -1;
	if (!(rng() % 16))
		o.pad = (int)(rng() & 3);
	if (!(rng() % 16))
		o.pad_count = (int)(rng() & 3);
	o.bad_icrc = !(rng() % 16);
	mutants_bad_icrc += o.bad_icrc;

	len = build_packet(frame, o.psn);
	bth = bth_of(frame);
	body = len - (size_t)(bth - frame) - SNAA_ICRC_BYTES;
	o.cut = 0;
	if (!(rng() % 16) && body > SNAA_BTH_BYTES) {
		/* shorter, with an ICRC valid for what is left */
		body -= 1 + rng() % (body - SNAA_BTH_BYTES);
		put_headers(frame, body + SNAA_ICRC_BYTES);
		put_icrc(frame, body, o.bad_icrc);
		len = (size_t)(bth - frame) + body + SNAA_ICRC_BYTES;
	}
	if (!(rng() % 4)) {
		/* flip bytes of the headers (mostly) or the payload */
		hdr = body < 48 ? body : 48;
		for (i = 1 + rng() % 4; i; i--) {
			size_t at = rng() % 4 ? rng() % hdr : rng() % body;

			bth[at] ^= (uint8_t)(1 + rng() % 255);
		}
		put_icrc(frame, body, o.bad_icrc);
	}
	o = base;
	return len;
}

/* ---- main ---------------------------------------------------------- */

static void hexdump(const uint8_t *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		printf("%02x%s", p[i], (i % 32 == 31 || i + 1 == len) ? "\n" :
				       (i % 4 == 3) ? " " : "");
}

enum {
	O_DEV = 256, O_DMAC, O_SMAC, O_SADDR, O_DADDR, O_SPORT, O_DPORT,
	O_TTL, O_TOS, O_UDP_CSUM, O_OPCODE, O_QPN, O_PSN, O_PKEY, O_SE,
	O_ACKREQ, O_MIG, O_TVER, O_RESV8A, O_VA, O_RKEY, O_DMA_LEN, O_IMM,
	O_QKEY, O_SQPN, O_PAYLOAD_LEN, O_FILL, O_PAYLOAD, O_PAD, O_PAD_COUNT,
	O_IP_OPTS, O_CUT,
	O_BAD_ICRC, O_TRUNCATE, O_UDP_LEN_LIE, O_COUNT, O_PSN_INC, O_GARBAGE,
	O_SEED, O_GARBAGE_MAX, O_GARBAGE_ICRC, O_PRINT, O_NO_SEND,
	O_LIST_OPCODES, O_MUTATE, O_MUTATE_MAX,
};

static const struct option lopts[] = {
	{ "dev", required_argument, NULL, O_DEV },
	{ "dmac", required_argument, NULL, O_DMAC },
	{ "smac", required_argument, NULL, O_SMAC },
	{ "saddr", required_argument, NULL, O_SADDR },
	{ "daddr", required_argument, NULL, O_DADDR },
	{ "sport", required_argument, NULL, O_SPORT },
	{ "dport", required_argument, NULL, O_DPORT },
	{ "ttl", required_argument, NULL, O_TTL },
	{ "tos", required_argument, NULL, O_TOS },
	{ "udp-csum", no_argument, NULL, O_UDP_CSUM },
	{ "opcode", required_argument, NULL, O_OPCODE },
	{ "qpn", required_argument, NULL, O_QPN },
	{ "psn", required_argument, NULL, O_PSN },
	{ "pkey", required_argument, NULL, O_PKEY },
	{ "se", no_argument, NULL, O_SE },
	{ "ackreq", no_argument, NULL, O_ACKREQ },
	{ "mig", no_argument, NULL, O_MIG },
	{ "tver", required_argument, NULL, O_TVER },
	{ "resv8a", required_argument, NULL, O_RESV8A },
	{ "va", required_argument, NULL, O_VA },
	{ "rkey", required_argument, NULL, O_RKEY },
	{ "dma-len", required_argument, NULL, O_DMA_LEN },
	{ "imm", required_argument, NULL, O_IMM },
	{ "qkey", required_argument, NULL, O_QKEY },
	{ "sqpn", required_argument, NULL, O_SQPN },
	{ "payload-len", required_argument, NULL, O_PAYLOAD_LEN },
	{ "fill", required_argument, NULL, O_FILL },
	{ "payload", required_argument, NULL, O_PAYLOAD },
	{ "pad", required_argument, NULL, O_PAD },
	{ "pad-count", required_argument, NULL, O_PAD_COUNT },
	{ "ip-options", required_argument, NULL, O_IP_OPTS },
	{ "cut", required_argument, NULL, O_CUT },
	{ "bad-icrc", no_argument, NULL, O_BAD_ICRC },
	{ "truncate", required_argument, NULL, O_TRUNCATE },
	{ "udp-len-lie", required_argument, NULL, O_UDP_LEN_LIE },
	{ "count", required_argument, NULL, O_COUNT },
	{ "psn-inc", no_argument, NULL, O_PSN_INC },
	{ "garbage", required_argument, NULL, O_GARBAGE },
	{ "seed", required_argument, NULL, O_SEED },
	{ "garbage-max-len", required_argument, NULL, O_GARBAGE_MAX },
	{ "garbage-icrc", no_argument, NULL, O_GARBAGE_ICRC },
	{ "mutate", required_argument, NULL, O_MUTATE },
	{ "mutate-max-len", required_argument, NULL, O_MUTATE_MAX },
	{ "print", no_argument, NULL, O_PRINT },
	{ "no-send", no_argument, NULL, O_NO_SEND },
	{ "verbose", no_argument, NULL, 'v' },
	{ "list-opcodes", no_argument, NULL, O_LIST_OPCODES },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

static void parse_args(int argc, char **argv)
{
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "hv", lopts, NULL)) != -1) {
		switch (c) {
		case O_DEV:
			o.dev = optarg;
			break;
		case O_DMAC:
			if (parse_mac(optarg, o.dmac))
				opt_usage_error("bad MAC for --dmac: %s",
						optarg);
			o.have_dmac = 1;
			break;
		case O_SMAC:
			if (parse_mac(optarg, o.smac))
				opt_usage_error("bad MAC for --smac: %s",
						optarg);
			o.have_smac = 1;
			break;
		case O_SADDR:
			if (inet_pton(AF_INET, optarg, &o.saddr) != 1)
				opt_usage_error("bad IPv4 address for --saddr: "
						"%s", optarg);
			o.have_saddr = 1;
			break;
		case O_DADDR:
			if (inet_pton(AF_INET, optarg, &o.daddr) != 1)
				opt_usage_error("bad IPv4 address for --daddr: "
						"%s", optarg);
			o.have_daddr = 1;
			break;
		case O_SPORT:
			o.sport = (uint16_t)opt_u64("--sport", optarg, 0xffff);
			break;
		case O_DPORT:
			o.dport = (uint16_t)opt_u64("--dport", optarg, 0xffff);
			break;
		case O_TTL:
			o.ttl = (uint8_t)opt_u64("--ttl", optarg, 255);
			break;
		case O_TOS:
			o.tos = (uint8_t)opt_u64("--tos", optarg, 255);
			break;
		case O_UDP_CSUM:
			o.udp_csum = 1;
			break;
		case O_OPCODE:
			o.opcode = parse_opcode(optarg);
			break;
		case O_QPN:
			o.qpn = (uint32_t)opt_u64("--qpn", optarg,
						  SNAA_QPN_MASK);
			o.have_qpn = 1;
			break;
		case O_PSN:
			o.psn = (uint32_t)opt_u64("--psn", optarg,
						  SNAA_PSN_MASK);
			break;
		case O_PKEY:
			o.pkey = (uint16_t)opt_u64("--pkey", optarg, 0xffff);
			break;
		case O_SE:
			o.se = 1;
			break;
		case O_ACKREQ:
			o.ackreq = 1;
			break;
		case O_MIG:
			o.mig = 1;
			break;
		case O_TVER:
			o.tver = (int)opt_u64("--tver", optarg, 15);
			break;
		case O_RESV8A:
			o.resv8a = (uint8_t)opt_u64("--resv8a", optarg, 255);
			break;
		case O_VA:
			o.va = opt_u64("--va", optarg, UINT64_MAX);
			break;
		case O_RKEY:
			o.rkey = (uint32_t)opt_u64("--rkey", optarg,
						   UINT32_MAX);
			break;
		case O_DMA_LEN:
			o.dma_len = (uint32_t)opt_u64("--dma-len", optarg,
						      UINT32_MAX);
			o.have_dma_len = 1;
			break;
		case O_IMM:
			o.imm = (uint32_t)opt_u64("--imm", optarg,
						  UINT32_MAX);
			break;
		case O_QKEY:
			o.qkey = (uint32_t)opt_u64("--qkey", optarg,
						   UINT32_MAX);
			break;
		case O_SQPN:
			o.sqpn = (uint32_t)opt_u64("--sqpn", optarg,
						   SNAA_QPN_MASK);
			break;
		case O_PAYLOAD_LEN:
			o.payload_len = (uint32_t)opt_u64("--payload-len",
							  optarg,
							  MAX_PAYLOAD);
			free(o.payload_hex);
			o.payload_hex = NULL;
			break;
		case O_FILL:
			o.fill = (int)opt_u64("--fill", optarg, 255);
			break;
		case O_PAYLOAD:
			free(o.payload_hex);
			parse_payload_hex(optarg);
			break;
		case O_PAD:
			o.pad = (int)opt_u64("--pad", optarg, 3);
			break;
		case O_PAD_COUNT:
			o.pad_count = (int)opt_u64("--pad-count", optarg, 3);
			break;
		case O_IP_OPTS:
			o.ip_opts = (unsigned int)opt_u64("--ip-options",
							  optarg,
							  MAX_IP_OPTS);
			break;
		case O_CUT:
			o.cut = (uint32_t)opt_u64("--cut", optarg, MAX_BODY);
			break;
		case O_BAD_ICRC:
			o.bad_icrc = 1;
			break;
		case O_TRUNCATE:
			o.truncate = (uint32_t)opt_u64("--truncate", optarg,
						       MAX_FRAME);
			break;
		case O_UDP_LEN_LIE:
			o.udp_len_lie = opt_long("--udp-len-lie", optarg,
						 -65535, 65535);
			break;
		case O_COUNT:
			o.count = (unsigned long)opt_u64("--count", optarg,
							 1000000);
			break;
		case O_PSN_INC:
			o.psn_inc = 1;
			break;
		case O_GARBAGE:
			o.garbage = (unsigned long)opt_u64("--garbage",
							   optarg, 1000000);
			break;
		case O_SEED:
			o.seed = opt_u64("--seed", optarg, UINT64_MAX);
			break;
		case O_GARBAGE_MAX:
			o.garbage_max = (uint32_t)opt_u64("--garbage-max-len",
							  optarg, 1400);
			break;
		case O_GARBAGE_ICRC:
			o.garbage_icrc = 1;
			break;
		case O_MUTATE:
			o.mutate = (unsigned long)opt_u64("--mutate", optarg,
							  100000000);
			break;
		case O_MUTATE_MAX:
			o.mutate_max = (uint32_t)opt_u64("--mutate-max-len",
							 optarg, MAX_PAYLOAD);
			break;
		case O_PRINT:
			o.print = 1;
			break;
		case O_NO_SEND:
			o.no_send = o.print = 1;
			break;
		case 'v':
			o.verbose = 1;
			break;
		case O_LIST_OPCODES:
			list_opcodes();
			exit(0);
		default:
			opt_help_or_error(c, argv, usage);
		}
	}
	opt_no_operands(argc, argv);
	if (!o.dev)
		opt_usage_error("%s is required", "--dev");
	if (!o.have_daddr)
		opt_usage_error("%s is required", "--daddr");
	if (!o.garbage && !o.have_qpn)
		opt_usage_error("%s is required (except with --garbage)",
				"--qpn");
	if (o.mutate && o.garbage)
		opt_usage_error("%s and %s exclude each other", "--mutate",
				"--garbage");
	if (o.garbage_icrc && o.garbage_max < SNAA_BTH_BYTES + SNAA_ICRC_BYTES)
		opt_usage_error("%s must be at least 16 with --garbage-icrc",
				"--garbage-max-len");
}

int main(int argc, char **argv)
{
	static uint8_t frame[MAX_FRAME];
	struct sockaddr_ll sll = { 0 };
	unsigned long i, n;
	int fd = -1;
	unsigned int ifindex;

	setvbuf(stdout, NULL, _IOLBF, 0);
	parse_args(argc, argv);
	rng_state = o.seed ? o.seed : 0x9e3779b97f4a7c15ULL;

	ifindex = if_nametoindex(o.dev);
	if (!ifindex && !o.no_send) {
		fprintf(stderr, "rawpkt: no interface %s: %s\n", o.dev,
			strerror(errno));
		return 1;
	}
	if (!o.have_smac && read_sysfs_mac(o.dev, o.smac) && !o.no_send) {
		fprintf(stderr, "rawpkt: cannot read the MAC of %s; use "
			"--smac\n", o.dev);
		return 1;
	}
	if (!o.have_saddr && read_if_addr(o.dev, &o.saddr) && !o.no_send) {
		fprintf(stderr, "rawpkt: %s has no IPv4 address; use "
			"--saddr\n", o.dev);
		return 1;
	}
	if (!o.have_dmac && read_arp_mac(o.dev, o.daddr, o.dmac) &&
	    !o.no_send) {
		fprintf(stderr, "rawpkt: no complete ARP entry for the "
			"destination on %s; use --dmac (or ping it first)\n",
			o.dev);
		return 1;
	}

	if (!o.no_send) {
		fd = socket(AF_PACKET, SOCK_RAW, 0);
		if (fd < 0) {
			perror("rawpkt: socket(AF_PACKET)");
			return 1;
		}
		sll.sll_family = AF_PACKET;
		sll.sll_ifindex = (int)ifindex;
		sll.sll_halen = 6;
		memcpy(sll.sll_addr, o.dmac, 6);
	}

	n = o.mutate ? o.mutate : o.garbage ? o.garbage : o.count;
	for (i = 0; i < n; i++) {
		uint32_t psn = o.psn_inc ? snaa_psn_add(o.psn, (__u32)i) : o.psn;
		size_t len = o.mutate ? build_mutant(frame) :
			     o.garbage ? build_garbage(frame) :
					 build_packet(frame, psn);

		if (o.verbose)
			fprintf(stderr, "rawpkt: frame %lu: %zu bytes, UDP "
				"payload %zu\n", i, len,
				len - ETH_HDR - ip_hlen() - UDP_HDR);
		if (o.print) {
			printf("# frame %lu, %zu bytes\n", i, len);
			hexdump(frame, len);
		}
		if (o.no_send)
			continue;
		if (sendto(fd, frame, len, 0, (struct sockaddr *)&sll,
			   sizeof(sll)) != (ssize_t)len) {
			fprintf(stderr, "rawpkt: sendto(%s, %zu bytes): %s\n",
				o.dev, len, strerror(errno));
			close(fd);
			return 1;
		}
	}
	if (fd >= 0)
		close(fd);
	free(o.payload_hex);
	if (o.mutate)
		printf("mutants=%lu icrc_ok=%lu icrc_bad=%lu\n", n,
		       n - mutants_bad_icrc, mutants_bad_icrc);
	return 0;
}
