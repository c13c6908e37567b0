// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target: the ICRC helpers of snaa_wire.c (snaa_icrc_pseudo_hdr,
 * _begin, _compute, _finish, _put, _get, _verify) with the portable CRC
 * of tests/unit/crc32_le.h, over IPv4 and IPv6 packets.
 *
 * Input:
 *   byte 0     bit 0: IPv6; bit 1: make the IP and UDP headers well
 *              formed (version, lengths, protocol, port), else they are
 *              taken as they come - the ICRC must not care
 *   bytes 1-4  two split points (big-endian u16 each)
 *   bytes 5-6  a bit to flip (big-endian u16)
 *   then       IP header (20 or 40 bytes), UDP header (8), BTH (12),
 *              extension headers, payload and pad: the packet without
 *              its ICRC
 * The seeds are rdma_rxe's packets from tests/unit/vectors/.
 *
 * Oracles:
 *
 * 1. ref_icrc() computes the ICRC from IBA Vol 1 Annex A17 and 7.8.1 on
 *    its own: a bit-serial CRC-32 (the LFSR of IEEE 802.3, one data bit
 *    per step, register preset to ones) over 8 bytes of ones for the
 *    LRH, then IP, UDP and BTH with the variant fields set to ones -
 *    taken as bit ranges of the RFC 791 / RFC 8200 / RFC 768 / IBA
 *    header diagrams (ref_variant()) - then the rest of the packet.
 *    snaa_icrc_pseudo_hdr() must give the masked bytes, snaa_icrc_begin()
 *    the register after them, snaa_icrc_compute() the complement of the
 *    final register.
 * 2. snaa_icrc_begin(), three pieces of the rest at the input's split
 *    points (empty pieces included), snaa_icrc_finish() give the same.
 * 3. Stored with snaa_icrc_put(), the ICRC is CRC-32's frame check
 *    sequence: running the reference register on over the 4 stored bytes
 *    must leave CRC-32's residue 0xdebb20e3 (this pins the byte order
 *    without restating it); snaa_icrc_get() reads the value back, and
 *    snaa_icrc_verify() accepts the packet.
 * 4. One bit flipped anywhere in IP, UDP, BTH, the rest or the ICRC: the
 *    packet still verifies iff the bit is variant (a CRC detects every
 *    single-bit error); a variant bit leaves snaa_icrc_compute() alone.
 * 5. snaa_icrc_verify() calls a packet shorter than BTH + ICRC truncated.
 */
#include <string.h>

#include "snaa_wire.h"
#include "crc32_le.h"
#include "fuzz.h"

#define IN_HDR		7	/* control bytes before the packet */
#define CRC32_RESIDUE	0xdebb20e3u

/* IEEE 802.3 CRC-32 as a bit-serial LFSR, data LSB first. */
static uint32_t ref_crc_bits(uint32_t reg, const uint8_t *p, size_t n)
{
	size_t i;
	int k;

	for (i = 0; i < n; i++)
		for (k = 0; k < 8; k++) {
			uint32_t fb = (reg ^ (uint32_t)(p[i] >> k)) & 1;

			reg >>= 1;
			if (fb)
				reg ^= 0xedb88320u;
		}
	return reg;
}

/*
 * Is bit @bit of the packet (counted from the first bit of the IP header,
 * most significant bit of each byte first, as in the RFC diagrams) a
 * variant field that the ICRC replaces by ones?
 */
static int ref_variant(size_t bit, int v6)
{
	static const struct { unsigned int first, bits; } v4f[] = {
		{ 8, 8 },	/* Type of Service */
		{ 64, 8 },	/* Time to Live */
		{ 80, 16 },	/* Header Checksum */
	}, v6f[] = {
		{ 4, 8 },	/* Traffic Class */
		{ 12, 20 },	/* Flow Label */
		{ 56, 8 },	/* Hop Limit */
	};
	size_t ip = v6 ? 320 : 160, i;

	for (i = 0; i < 3; i++) {
		unsigned int first = v6 ? v6f[i].first : v4f[i].first;
		unsigned int bits = v6 ? v6f[i].bits : v4f[i].bits;

		if (bit >= first && bit < first + bits)
			return 1;
	}
	if (bit >= ip + 48 && bit < ip + 64)		/* UDP Checksum */
		return 1;
	return bit >= ip + 64 + 32 && bit < ip + 64 + 40;	/* BTH resv8a */
}

/* IP + UDP + BTH with the variant bits set. */
static size_t ref_masked(uint8_t *out, const uint8_t *pkt, int v6)
{
	size_t n = (v6 ? 40 : 20) + 8 + 12, bit;

	memcpy(out, pkt, n);
	for (bit = 0; bit < n * 8; bit++)
		if (ref_variant(bit, v6))
			out[bit / 8] |= (uint8_t)(0x80 >> bit % 8);
	return n;
}

/* The CRC register after the masked LRH, IP, UDP and BTH. */
static uint32_t ref_begin(const uint8_t *pkt, int v6)
{
	static const uint8_t lrh[8] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	};
	uint8_t m[60];
	size_t n = ref_masked(m, pkt, v6);

	return ref_crc_bits(ref_crc_bits(0xffffffffu, lrh, 8), m, n);
}

/* @pkt: IP header onwards, @len bytes up to the ICRC (excluded). */
static uint32_t ref_icrc_reg(const uint8_t *pkt, int v6, size_t len)
{
	size_t hdr = (v6 ? 40 : 20) + 8 + 12;

	return ref_crc_bits(ref_begin(pkt, v6), pkt + hdr, len - hdr);
}

static void fix_headers(uint8_t *pkt, int v6, size_t ip_len, size_t blen)
{
	uint8_t *udp = pkt + ip_len;
	uint16_t udp_len = (uint16_t)(8 + blen + 4);

	if (v6) {
		pkt[0] = (uint8_t)(0x60 | (pkt[0] & 0x0f));
		snaa_put_be16(pkt + 4, udp_len);	/* payload length */
		pkt[6] = 17;				/* next header */
	} else {
		pkt[0] = 0x45;
		snaa_put_be16(pkt + 2, (uint16_t)(20 + udp_len));
		pkt[9] = 17;				/* protocol */
	}
	snaa_put_be16(udp + 2, SNAA_ROCE_V2_UDP_DPORT);
	snaa_put_be16(udp + 4, udp_len);
}

static void check_packet(uint8_t *pkt, int v6, size_t ip_len, size_t blen,
			 const uint8_t *ctl)
{
	uint8_t *bth = pkt + ip_len + 8;
	uint8_t mine[SNAA_ICRC_PSEUDO_HDR_MAX], ref[60];
	size_t total = ip_len + 8 + blen + 4, n, s1, s2, bit;
	uint32_t reg, ref_reg, want, got;
	int rc, variant;

	/* 1. against the reference */
	n = snaa_icrc_pseudo_hdr(mine, pkt, v6, bth);
	FUZZ_CHECK(n == ref_masked(ref, pkt, v6) && !memcmp(mine, ref, n),
		   "pseudo-header (IPv%d)", v6 ? 6 : 4);
	reg = snaa_icrc_begin(test_crc32_le, pkt, v6, bth);
	FUZZ_CHECK(reg == ref_begin(pkt, v6), "begin 0x%08x, want 0x%08x",
		   reg, ref_begin(pkt, v6));
	ref_reg = ref_icrc_reg(pkt, v6, ip_len + 8 + blen);
	want = ~ref_reg;
	got = snaa_icrc_compute(test_crc32_le, pkt, v6, bth, blen);
	FUZZ_CHECK(got == want, "IPv%d, %zu bytes from the BTH: ICRC "
		   "0x%08x, reference 0x%08x", v6 ? 6 : 4, blen, got, want);

	/* 2. in pieces */
	s1 = 12 + fz_be(ctl + 1, 2) % (blen - 11);
	s2 = 12 + fz_be(ctl + 3, 2) % (blen - 11);
	if (s1 > s2) {
		n = s1;
		s1 = s2;
		s2 = n;
	}
	reg = test_crc32_le(reg, bth + 12, s1 - 12);
	reg = test_crc32_le(reg, bth + s1, s2 - s1);
	reg = test_crc32_le(reg, bth + s2, blen - s2);
	FUZZ_CHECK(snaa_icrc_finish(reg) == want,
		   "split at %zu, %zu of %zu: 0x%08x, want 0x%08x", s1, s2,
		   blen, snaa_icrc_finish(reg), want);

	/* 3. stored */
	snaa_icrc_put(bth + blen, want);
	FUZZ_CHECK(ref_crc_bits(ref_reg, bth + blen, 4) == CRC32_RESIDUE,
		   "stored ICRC %02x %02x %02x %02x of 0x%08x is not the FCS",
		   bth[blen], bth[blen + 1], bth[blen + 2], bth[blen + 3],
		   want);
	FUZZ_CHECK(snaa_icrc_get(bth + blen) == want, "icrc_get");
	rc = snaa_icrc_verify(test_crc32_le, pkt, v6, bth, blen + 4);
	FUZZ_CHECK(rc == 0, "verify of a good packet: %d", rc);

	/* 4. one bit flipped */
	bit = fz_be(ctl + 5, 2) % (total * 8);
	variant = ref_variant(bit, v6);
	pkt[bit / 8] ^= (uint8_t)(0x80 >> bit % 8);
	rc = snaa_icrc_verify(test_crc32_le, pkt, v6, bth, blen + 4);
	FUZZ_CHECK(rc == (variant ? 0 : -SNAA_DROP_BAD_ICRC),
		   "IPv%d, byte %zu bit %zu (%s) flipped: verify %d",
		   v6 ? 6 : 4, bit / 8, 7 - bit % 8,
		   variant ? "variant" : "invariant", rc);
	if (variant)
		FUZZ_CHECK(snaa_icrc_compute(test_crc32_le, pkt, v6, bth,
					     blen) == want,
			   "variant byte %zu changes the ICRC", bit / 8);
	pkt[bit / 8] ^= (uint8_t)(0x80 >> bit % 8);

	/* 5. too short: must not even be read */
	FUZZ_CHECK(snaa_icrc_verify(test_crc32_le, pkt, v6, bth,
				    ctl[0] >> 4) == -SNAA_DROP_TRUNCATED,
		   "verify of %d bytes", ctl[0] >> 4);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t ip_len, blen;
	uint8_t *pkt;
	int v6;

	if (size < IN_HDR)
		return 0;
	v6 = data[0] & 1;
	ip_len = v6 ? 40 : 20;
	if (size < IN_HDR + ip_len + 8 + 12)
		return 0;
	blen = size - IN_HDR - ip_len - 8;
	/* exactly the packet and its ICRC, so that ASan sees any overrun */
	pkt = malloc(ip_len + 8 + blen + 4);
	if (!pkt)
		return 0;
	memcpy(pkt, data + IN_HDR, ip_len + 8 + blen);
	if (data[0] & 2)
		fix_headers(pkt, v6, ip_len, blen);
	check_packet(pkt, v6, ip_len, blen, data);
	free(pkt);
	return 0;
}
