// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * mkcorpus - write fuzz inputs, one file each, from "LABEL HEX" text.
 *
 *   mkcorpus parse OUTDIR VECTORS...   UDP payloads (BTH to ICRC)
 *   mkcorpus icrc OUTDIR VECTORS...    fuzz_icrc inputs: control bytes,
 *                                      then IP header to pad (no ICRC)
 *   mkcorpus raw OUTDIR FILES...       the bytes as they are
 *
 * VECTORS are the .hex files of tests/unit/vectors/: whole Ethernet frames captured
 * from rdma_rxe.  FILES are tests/fuzz/regress/TARGET.hex: fuzz inputs.
 * Both have one input per line, "LABEL HEX", and "#" comment lines.
 * Output names: LABEL for raw; STEM-NN-LABEL for the vectors (STEM the
 * file name without ".hex", NN the line's input number).
 *
 * The captures are at path MTU 256; for each packet with a payload the
 * vector modes also write STEM-NN-LABEL.4096, the same packet with 4096
 * bytes of payload (its own, repeated; pad 0), so that the fuzzers start
 * from the largest packets too instead of growing inputs byte by byte;
 * and parse mode STEM-NN-LABEL.4100, 4 bytes too many.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snaa_wire.h"
#include "hexline.h"

#define ICRC_IN_HDR	7	/* fuzz_icrc's control bytes */

enum mode { M_PARSE, M_ICRC, M_RAW };

static unsigned int be16(const unsigned char *p)
{
	return (unsigned int)p[0] << 8 | p[1];
}

static int write_file(const char *dir, const char *name,
		      const unsigned char *a, size_t na,
		      const unsigned char *b, size_t nb)
{
	char path[4096];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f) {
		perror(path);
		return -1;
	}
	ok = fwrite(a, 1, na, f) == na && fwrite(b, 1, nb, f) == nb;
	if (fclose(f) || !ok) {
		perror(path);
		return -1;
	}
	return 0;
}

/*
 * One seed: @ip is the IP header, @ip_len + @udp_len bytes up to the end
 * of the ICRC.  fuzz_icrc's control bytes: the IP version, the headers
 * fixed up by the target if @fixup, split points and a flipped bit that
 * vary with @idx.
 */
static int seed(enum mode m, const char *dir, const char *name,
		const unsigned char *ip, size_t ip_len, size_t udp_len,
		int fixup, int idx)
{
	unsigned char ctl[ICRC_IN_HDR];

	if (m == M_PARSE)
		return write_file(dir, name, ip + ip_len + 8, udp_len - 8,
				  NULL, 0);
	ctl[0] = (unsigned char)((ip_len == 40) | (fixup ? 2 : 0));
	ctl[1] = (unsigned char)(idx * 7);
	ctl[2] = (unsigned char)(idx * 31);
	ctl[3] = (unsigned char)(idx * 3);
	ctl[4] = (unsigned char)(idx * 101);
	ctl[5] = (unsigned char)(idx * 13);
	ctl[6] = (unsigned char)(idx * 57);
	return write_file(dir, name, ctl, sizeof(ctl), ip,
			  ip_len + udp_len - 4);
}

/* @fr's packet with @n bytes of payload (its own, repeated), pad 0. */
static int stretch(enum mode m, const char *dir, const char *name,
		   const unsigned char *fr, size_t ip_len,
		   const struct snaa_pkt *pkt, size_t n, int idx)
{
	static unsigned char big[SNAA_MAX_HDR_OVERHEAD + SNAA_IB_MTU_MAX + 4];
	const unsigned char *bth = fr + 14 + ip_len + 8;
	size_t hdr = ip_len + 8 + pkt->payload_off, udp_len, i;
	char big_name[600];

	memcpy(big, fr + 14, hdr);
	big[ip_len + 8 + 1] &= (unsigned char)~SNAA_BTH_PAD_MASK;
	for (i = 0; i < n; i++)
		big[hdr + i] = bth[pkt->payload_off + i % pkt->payload_len];
	memset(big + hdr + n, 0, SNAA_ICRC_BYTES);
	udp_len = 8 + pkt->payload_off + n + SNAA_ICRC_BYTES;
	snaa_put_be16(big + ip_len + 4, (__u16)udp_len);
	snprintf(big_name, sizeof(big_name), "%s.%zu", name, n);
	/* fuzz_icrc fixes up the IP length fields */
	return seed(m, dir, big_name, big, ip_len, udp_len, 1, idx);
}

/* An Ethernet frame of a vector file, and its stretched versions. */
static int seeds(enum mode m, const char *dir, const char *name,
		 const unsigned char *fr, size_t len, int idx)
{
	const unsigned char *bth;
	struct snaa_pkt pkt;
	size_t ip_len, udp_len;
	int v6;

	if (len < 14 + 20 + 8 + 12 + 4)
		return -1;
	v6 = be16(fr + 12) == 0x86dd;
	ip_len = v6 ? 40 : 20;
	if (len < 14 + ip_len + 8 + 12 + 4)
		return -1;
	udp_len = be16(fr + 14 + ip_len + 4);
	if (14 + ip_len + udp_len != len || udp_len < 8 + 12 + 4)
		return -1;
	if (seed(m, dir, name, fr + 14, ip_len, udp_len, 0, idx))
		return -1;

	bth = fr + 14 + ip_len + 8;
	if (snaa_parse(bth, udp_len - 8, &pkt) ||
	    !(pkt.op->flags & SNAA_OPF_PAYLOAD) || !pkt.payload_len)
		return 0;
	if (stretch(m, dir, name, fr, ip_len, &pkt, SNAA_IB_MTU_MAX, idx))
		return -1;
	if (m == M_PARSE)
		return stretch(m, dir, name, fr, ip_len, &pkt,
			       SNAA_IB_MTU_MAX + 4, idx);
	return 0;
}

static int do_file(enum mode m, const char *dir, const char *path)
{
	char name[512], stem[256];
	const char *base = strrchr(path, '/');
	struct hexline h = { 0 };
	int idx = 0, rc;
	FILE *f = fopen(path, "r");

	if (!f) {
		perror(path);
		return -1;
	}
	base = base ? base + 1 : path;
	snprintf(stem, sizeof(stem), "%.*s", (int)strcspn(base, "."), base);
	while ((rc = hexline_read(f, &h)) > 0) {
		/* the label becomes a file name */
		if (strchr(h.label, '/')) {
			rc = -1;
			break;
		}
		if (m == M_RAW) {
			snprintf(name, sizeof(name), "%s", h.label);
			rc = write_file(dir, name, h.data, h.len, NULL, 0);
		} else {
			snprintf(name, sizeof(name), "%s-%02d-%s", stem, idx,
				 h.label);
			rc = seeds(m, dir, name, h.data, h.len, idx);
		}
		if (rc)
			break;
		idx++;
	}
	if (rc)
		fprintf(stderr, "%s: bad input %d (line %lu)\n", path, idx,
			h.lineno);
	hexline_free(&h);
	fclose(f);
	return rc ? -1 : 0;
}

int main(int argc, char **argv)
{
	enum mode m;
	int i;

	if (argc < 4)
		goto usage;
	if (!strcmp(argv[1], "parse"))
		m = M_PARSE;
	else if (!strcmp(argv[1], "icrc"))
		m = M_ICRC;
	else if (!strcmp(argv[1], "raw"))
		m = M_RAW;
	else
		goto usage;
	for (i = 3; i < argc; i++)
		if (do_file(m, argv[2], argv[i]))
			return 1;
	return 0;
usage:
	fprintf(stderr, "usage: mkcorpus parse|icrc|raw OUTDIR FILE...\n");
	return 2;
}
