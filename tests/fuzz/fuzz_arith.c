// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target: the arithmetic of snaa_wire.[ch], whose domains are too
 * large for the unit tests' sweeps - PSNs (2^48 pairs), MTUs from any
 * netdev MTU, message lengths - plus the small codecs that sit next to
 * it.  Input: up to 32 bytes, read as fields (missing bytes are 0):
 *
 *   0-3 a, 4-7 b, 8-11 n, 12-15 m1, 16-19 m2, 20-23 len (big-endian u32)
 *   24 MTU choice, 25-26 snaa_req_opcode() arguments, 27 AETH type/value,
 *   28-29 two opcodes, 30 bit 0: no previous packet
 *
 * Oracles (identities, each against a direct computation in 64 bits):
 * - snaa_psn_add(a, n) is (a + n) mod 2^24;
 * - d = snaa_psn_diff(a, b) lies in [-2^23, 2^23), b + d == a (mod 2^24),
 *   bits above 24 are ignored, diff(b, a) == -d except at the tie -2^23;
 *   snaa_psn_diff(snaa_psn_add(b, n), b) is n read as a signed 24-bit
 *   number; snaa_psn_before(a, b) iff d < 0, and of a and b exactly one
 *   comes before the other unless they are equal or 2^23 apart (both);
 * - snaa_mtu_from_netdev(m) is 0 iff not even 256 bytes of payload fit
 *   with the largest header stack, else the largest IB MTU that fits
 *   (so it is monotonic in m); the stack is IPv6 + UDP + BTH + RETH +
 *   ImmDt + ICRC and must be the largest the opcode table allows;
 * - snaa_is_ib_mtu() is membership of {256, 512, 1024, 2048, 4096};
 * - snaa_num_pkts(len, mtu) is ceil(len / mtu), and 1 for len 0;
 * - snaa_pad_for(len) is the p in [0, 3] with len + p == 0 (mod 4);
 * - snaa_req_opcode() returns an opcode exactly for the combinations
 *   that exist (RC/UC SEND and WRITE, UD SEND ONLY), and its table
 *   entry has that transport, kind, position, ImmDt and RETH;
 * - snaa_opcode_seq(): a packet that continues a message (MIDDLE, LAST)
 *   must follow a FIRST or MIDDLE of the same kind, one that starts a
 *   message (FIRST, ONLY) must not; for implemented opcodes, whose
 *   position and kind flags fuzz_parse checks against IBA;
 * - the AETH syndrome helpers and codec, and the byte-order helpers,
 *   give back what they were given.
 */
#include <string.h>

#include "snaa_wire.h"
#include "fuzz.h"

static int32_t sign24(uint32_t v)
{
	v &= 0xffffff;
	return v >= 0x800000 ? (int32_t)v - 0x1000000 : (int32_t)v;
}

static void check_psn(uint32_t a, uint32_t b, uint32_t n)
{
	uint32_t A = a & 0xffffff, B = b & 0xffffff;
	int d = snaa_psn_diff(a, b), back = snaa_psn_diff(b, a);
	int ba = snaa_psn_before(a, b), bb = snaa_psn_before(b, a);

	FUZZ_CHECK(snaa_psn_add(a, n) == ((uint64_t)a + n) % 0x1000000,
		   "psn_add(0x%x, 0x%x) = 0x%x", a, n, snaa_psn_add(a, n));
	FUZZ_CHECK(d >= -0x800000 && d < 0x800000 &&
		   ((int64_t)B + d + 0x1000000) % 0x1000000 == A,
		   "psn_diff(0x%x, 0x%x) = %d", a, b, d);
	FUZZ_CHECK(snaa_psn_diff(A, B) == d, "high bits of 0x%x 0x%x", a, b);
	FUZZ_CHECK(back == (d == -0x800000 ? d : -d),
		   "psn_diff(0x%x, 0x%x) = %d, reverse %d", a, b, d, back);
	FUZZ_CHECK(snaa_psn_diff(snaa_psn_add(b, n), b) == sign24(n),
		   "diff(add(0x%x, 0x%x))", b, n);
	FUZZ_CHECK(ba == (d < 0), "psn_before(0x%x, 0x%x) = %d, diff %d", a,
		   b, ba, d);
	if (A == B)
		FUZZ_CHECK(!ba && !bb, "0x%x before itself", a);
	else if (d == -0x800000)
		FUZZ_CHECK(ba && bb, "tie 0x%x 0x%x", a, b);
	else
		FUZZ_CHECK(ba + bb == 1, "0x%x 0x%x: before %d/%d", a, b, ba,
			   bb);
}

/*
 * The largest header stack around a payload: IPv6, UDP, the longest
 * BTH + extension headers of any implemented opcode that carries a
 * payload, ICRC.  The pad needs no room: a payload shorter than the MTU
 * is padded at most up to it.
 */
static uint32_t max_overhead(void)
{
	static uint32_t max;
	unsigned int op;

	if (max)
		return max;
	for (op = 0; op < 256; op++) {
		const struct snaa_opcode_info *i = snaa_opcode_lookup(op);

		if (i && !(i->flags & SNAA_OPF_UNSUPPORTED) &&
		    (i->flags & SNAA_OPF_PAYLOAD) && i->hdr_len > max)
			max = i->hdr_len;
	}
	max += 40 + 8 + 4;
	FUZZ_CHECK(max == 40 + 8 + 12 + 16 + 4 + 4 &&
		   max == SNAA_MAX_HDR_OVERHEAD, "largest stack %u", max);
	return max;
}

static void check_mtu(uint32_t m1, uint32_t m2)
{
	uint32_t o = max_overhead();
	uint32_t f1 = snaa_mtu_from_netdev(m1), f2 = snaa_mtu_from_netdev(m2);

	FUZZ_CHECK(f1 ? fz_is_ib_mtu(f1) && (uint64_t)f1 + o <= m1 &&
		   (f1 == 4096 || (uint64_t)2 * f1 + o > m1) :
		   (uint64_t)256 + o > m1,
		   "mtu_from_netdev(%u) = %u", m1, f1);
	if (m1 <= m2)
		FUZZ_CHECK(f1 <= f2, "mtu_from_netdev(%u) = %u > "
			   "mtu_from_netdev(%u) = %u", m1, f1, m2, f2);
	FUZZ_CHECK(!!snaa_is_ib_mtu(m1) == fz_is_ib_mtu(m1) &&
		   !!snaa_is_ib_mtu(m1 & 0x1fff) == fz_is_ib_mtu(m1 & 0x1fff),
		   "is_ib_mtu(%u)", m1);
}

static void check_len(uint32_t len, uint32_t mtu)
{
	uint32_t n = snaa_num_pkts(len, mtu), p = snaa_pad_for(len);

	if (!len)
		FUZZ_CHECK(n == 1, "num_pkts(0, %u) = %u", mtu, n);
	else
		FUZZ_CHECK((uint64_t)(n - 1) * mtu < len &&
			   len <= (uint64_t)n * mtu,
			   "num_pkts(%u, %u) = %u", len, mtu, n);
	FUZZ_CHECK(p < 4 && ((uint64_t)len + p) % 4 == 0, "pad_for(%u) = %u",
		   len, p);
}

static void check_req_opcode(uint8_t x, uint8_t y)
{
	static const uint32_t kinds[4] = {
		SNAA_OPF_SEND, SNAA_OPF_WRITE, SNAA_OPF_READ, 0,
	};
	enum snaa_transport tr = (enum snaa_transport)(x & 7);
	uint32_t kind = kinds[x >> 3 & 3];
	int first = y & 1, last = y >> 1 & 1, imm = y >> 2 & 1;
	int exists = (tr == SNAA_TR_RC || tr == SNAA_TR_UC ||
		      (tr == SNAA_TR_UD && first && last)) &&
		     (kind == SNAA_OPF_SEND ||
		      (kind == SNAA_OPF_WRITE && tr != SNAA_TR_UD));
	int rc = snaa_req_opcode(tr, kind, first, last, imm);
	const struct snaa_opcode_info *i;
	uint32_t f;

	FUZZ_CHECK(exists ? rc >= 0 && rc <= 0xff : rc == -1,
		   "req_opcode(%d, 0x%x, %d, %d, %d) = %d", tr, kind, first,
		   last, imm, rc);
	if (!exists)
		return;
	i = snaa_opcode_lookup((uint8_t)rc);
	FUZZ_CHECK(i && !(i->flags & SNAA_OPF_UNSUPPORTED),
		   "req_opcode gave 0x%02x", rc);
	f = i->flags;
	FUZZ_CHECK(i->transport == tr && (f & SNAA_OPF_KIND_MASK) == kind &&
		   (f & SNAA_OPF_REQ) &&
		   !!(f & SNAA_OPF_START) == first &&
		   !!(f & SNAA_OPF_END) == last &&
		   !!(f & SNAA_OPF_IMMDT) == (imm && last) &&
		   !!(f & SNAA_OPF_RETH) == (kind == SNAA_OPF_WRITE && first),
		   "req_opcode(%d, 0x%x, %d, %d, %d) = %s", tr, kind, first,
		   last, imm, i->name);
}

static const struct snaa_opcode_info *implemented(uint8_t opcode)
{
	const struct snaa_opcode_info *i = snaa_opcode_lookup(opcode);

	return i && !(i->flags & SNAA_OPF_UNSUPPORTED) ? i : NULL;
}

static void check_seq(uint8_t prev_op, uint8_t cur_op, int none)
{
	const uint32_t cont = SNAA_OPF_MIDDLE | SNAA_OPF_LAST;
	const struct snaa_opcode_info *prev = implemented(prev_op);
	const struct snaa_opcode_info *cur = implemented(cur_op);
	enum snaa_seq want, got;
	int open;

	if (!cur || (!prev && !none))
		return;
	if (none)
		prev = NULL;
	/* a message is open after its FIRST or a MIDDLE */
	open = prev && (prev->flags & (SNAA_OPF_FIRST | SNAA_OPF_MIDDLE));
	if (!open)
		want = cur->flags & cont ? SNAA_SEQ_MISSING_FIRST : SNAA_SEQ_OK;
	else if (!(cur->flags & cont) ||
		 (cur->flags & SNAA_OPF_KIND_MASK) !=
		 (prev->flags & SNAA_OPF_KIND_MASK))
		want = SNAA_SEQ_MISSING_LAST;
	else
		want = SNAA_SEQ_OK;
	got = snaa_opcode_seq(prev, cur);
	FUZZ_CHECK(got == want, "opcode_seq(%s, %s) = %d, want %d",
		   prev ? prev->name : "none", cur->name, got, want);
}

static void check_codecs(uint32_t a, uint32_t b, uint8_t t)
{
	enum snaa_aeth_type type = (enum snaa_aeth_type)(t & 3);
	uint8_t syn = snaa_aeth_syndrome(type, (uint8_t)(t >> 2));
	struct snaa_aeth_info ai = { .syndrome = t, .msn = a }, ao;
	uint64_t v = (uint64_t)a << 32 | b;
	uint8_t p[8];

	FUZZ_CHECK(snaa_aeth_type(syn) == type && !(syn & 0x80) &&
		   snaa_aeth_value(syn) == (t >> 2 & 0x1f),
		   "syndrome(%d, %d) = 0x%02x", type, t >> 2, syn);
	snaa_aeth_set(p, &ai);
	snaa_aeth_get(p, &ao);
	FUZZ_CHECK(ao.syndrome == t && ao.msn == (a & 0xffffff) &&
		   p[0] == t && fz_be(p + 1, 3) == (a & 0xffffff), "AETH");

	snaa_put_be64(p, v);
	FUZZ_CHECK(fz_be64(p) == v && snaa_get_be64(p) == v, "be64");
	snaa_put_be32(p, a);
	FUZZ_CHECK(fz_be(p, 4) == a && snaa_get_be32(p) == a, "be32");
	snaa_put_be24(p, a);
	FUZZ_CHECK(fz_be(p, 3) == (a & 0xffffff) &&
		   snaa_get_be24(p) == (a & 0xffffff), "be24");
	snaa_put_be16(p, (uint16_t)a);
	FUZZ_CHECK(fz_be(p, 2) == (a & 0xffff) &&
		   snaa_get_be16(p) == (a & 0xffff), "be16");
	snaa_put_le32(p, a);
	FUZZ_CHECK(p[0] == (a & 0xff) && p[3] == a >> 24 &&
		   fz_be(p, 4) == __builtin_bswap32(a) &&
		   snaa_get_le32(p) == a, "le32");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t in[32] = { 0 };
	uint32_t a, b, n, mtu;

	memcpy(in, data, size < sizeof(in) ? size : sizeof(in));
	a = fz_be(in, 4);
	b = fz_be(in + 4, 4);
	n = fz_be(in + 8, 4);

	check_psn(a, b, n);
	check_mtu(fz_be(in + 12, 4), fz_be(in + 16, 4));
	/* an IB MTU, or any MTU from 1 to 65536 */
	mtu = in[24] & 0x80 ? (b & 0xffff) + 1 : fz_ib_mtus[in[24] % 5];
	check_len(fz_be(in + 20, 4), mtu);
	check_req_opcode(in[25], in[26]);
	check_codecs(a, b, in[27]);
	check_seq(in[28], in[29], in[30] & 1);
	return 0;
}
