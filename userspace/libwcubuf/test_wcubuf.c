// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Host tests of libwcubuf without an RDMA device: the status and
 * ACK/NACK codecs byte by byte and on hostile input, the GRH parsing,
 * the write window and frame arithmetic across the 64-bit wrap, the
 * CRC-32C API (the CRC itself: userspace/common's test_common), the 4-bit
 * and 6-bit image mappings and their corruption detection, the emulator's
 * worker table with fake data channels, and the worker's retransmit
 * decisions for every event bit, timeouts and a lossy simulated link.
 * KTAP.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "../../tests/lib/ktap.h"
#include "wcubuf.h"

#define PLAN	134

static void test_status_codec(void)
{
	/* DATA_RES 1.1: every word little-endian */
	static const uint8_t want[28] = {
		0x05, 0x00, 0x01, 0x01,
		0x44, 0x33, 0x22, 0x11,
		0x40, 0x00, 0x00, 0x00,
		0x78, 0x56, 0x34, 0x12,
		0x00, 0xbc, 0xfe, 0xca,
		0x00, 0x01, 0x00, 0x00,
		0xd4, 0xc3, 0xb2, 0xa1,
	};
	static const uint8_t stat_req[28] = {
		0x00, 0x00, 0x01, 0x01,
		0x00, 0x00, 0x00, 0x00,
		0x11, 0x00, 0x00, 0x00,
		0x01, 0x00, 0x43, 0x57,
	};
	struct wcubuf_status s = wcubuf_status_make(WCUBUF_DATA_RES), d;
	uint8_t buf[64], big[64];
	int n;

	s.lid = 0x11223344;
	s.qpn = 0x40;
	s.qkey = 0x12345678;
	s.va = 0x100cafebc00ULL;
	s.rkey = 0xa1b2c3d4;
	memset(buf, 0xee, sizeof(buf));
	n = wcubuf_status_encode(&s, buf, sizeof(buf));
	result(n == 28 && !memcmp(buf, want, 28) && buf[28] == 0xee,
	       "DATA_RES encodes to the 28 bytes of Table 3.1, LE words");
	result(!wcubuf_status_decode(want, 28, &d) &&
	       !memcmp(&d, &s, sizeof(s)), "DATA_RES decodes back");

	s = wcubuf_status_make(WCUBUF_STAT_REQ);
	s.qpn = 0x11;
	s.qkey = WCUBUF_WORKER_QKEY;
	n = wcubuf_status_encode(&s, buf, sizeof(buf));
	result(n == 28 && !memcmp(buf, stat_req, 28),
	       "STAT_REQ: method 0, version 1.1, LID 0, QPN, the worker Q_Key");
	result(wcubuf_status_encode(&s, buf, 27) == WCUBUF_ESHORT,
	       "no status packet into 27 bytes");

	result(wcubuf_status_decode(want, 27, &d) == WCUBUF_ESHORT,
	       "a 27-byte status packet is refused");
	result(wcubuf_status_decode(want, 0, &d) == WCUBUF_ESHORT,
	       "an empty status packet is refused");
	memset(big, 0x5a, sizeof(big));
	memcpy(big, want, 28);
	result(!wcubuf_status_decode(big, sizeof(big), &d) &&
	       d.method == WCUBUF_DATA_RES && d.rkey == 0xa1b2c3d4,
	       "bytes after the 28 are ignored");
	big[0] = 8;
	result(wcubuf_status_decode(big, 28, &d) == WCUBUF_EMETHOD,
	       "method 8 is unknown");
	big[0] = 0xff;
	result(wcubuf_status_decode(big, 28, &d) == WCUBUF_EMETHOD,
	       "method 0xff is unknown");
	big[0] = WCUBUF_DATA_DOWN;
	big[1] = 0x77;
	result(!wcubuf_status_decode(big, 28, &d) && d.reserved == 0x77,
	       "a non-zero reserved byte is tolerated");

	result(!strcmp(wcubuf_method_name(WCUBUF_STAT_REQ), "STAT_REQ") &&
	       !strcmp(wcubuf_method_name(WCUBUF_DATA_DOWN), "DATA_DOWN") &&
	       !strcmp(wcubuf_method_name(9), "method 9"),
	       "method names (Table 3.2)");
}

static void test_answers(void)
{
	struct wcubuf_status req = wcubuf_status_make(WCUBUF_STAT_REQ);
	struct wcubuf_status res = wcubuf_status_make(WCUBUF_STAT_RES);

	req.qpn = res.qpn = 0x123;
	result(wcubuf_status_answers(&req, &res) == 1,
	       "STAT_RES with the same LID/QPN answers STAT_REQ");
	res.qpn = 0x124;
	result(wcubuf_status_answers(&req, &res) == 0,
	       "... not with another QPN");
	res.qpn = 0x123;
	res.lid = 5;
	result(wcubuf_status_answers(&req, &res) == 0,
	       "... not with another LID");
	res.lid = 0;
	res.minor = 9;
	result(wcubuf_status_answers(&req, &res) == 1,
	       "version 1.9 is accepted (minor)");
	res.major = 2;
	result(wcubuf_status_answers(&req, &res) == WCUBUF_EVERSION,
	       "version 2.x is refused");
	res.major = 0;
	result(wcubuf_status_answers(&req, &res) == WCUBUF_EVERSION,
	       "version 0.x (no CRC) is refused");
	res = wcubuf_status_make(WCUBUF_DATA_DOWN);
	res.qpn = 0x123;
	result(wcubuf_status_answers(&req, &res) == 0,
	       "DATA_DOWN does not answer STAT_REQ");
	res.method = WCUBUF_STAT_REQ;
	result(wcubuf_status_answers(&res, &req) == 0,
	       "a request never answers (STAT_REQ for STAT_RES)");

	req = wcubuf_status_make(WCUBUF_DATA_REQ);
	req.qpn = 0x123;
	req.qkey = 0x456;
	res = wcubuf_status_make(WCUBUF_DATA_RES);
	res.qpn = 0x123;
	res.qkey = 0x456;
	res.lid = 0x99;	/* the emulator's data QPN */
	result(wcubuf_status_answers(&req, &res) == 1,
	       "DATA_RES answers DATA_REQ, LID word = emulator data QPN");
	res.qkey = 0x457;
	result(wcubuf_status_answers(&req, &res) == 0,
	       "DATA_RES echoing another QPND is not ours");
}

static void test_grh(void)
{
	uint8_t grh[40], s[16], d[16];
	static const uint8_t s4[16] = { [10] = 0xff, [11] = 0xff, 198, 18, 0, 1 };
	static const uint8_t d4[16] = { [10] = 0xff, [11] = 0xff, 198, 18, 0, 2 };
	static const uint8_t s6[16] = { 0x20, 0x01, 0, 2, [15] = 1 };
	static const uint8_t d6[16] = { 0x20, 0x01, 0, 2, [15] = 2 };

	memset(grh, 0, sizeof(grh));
	grh[20] = 0x45;
	grh[29] = 17;
	memcpy(grh + 32, s4 + 12, 4);
	memcpy(grh + 36, d4 + 12, 4);
	result(!wcubuf_grh_gids(grh, s, d) && !memcmp(s, s4, 16) &&
	       !memcmp(d, d4, 16),
	       "RoCEv2/IPv4 GRH area: IPv4-mapped source and destination");
	memset(grh, 0, sizeof(grh));
	grh[0] = 0x60;
	grh[6] = 17;
	memcpy(grh + 8, s6, 16);
	memcpy(grh + 24, d6, 16);
	result(!wcubuf_grh_gids(grh, s, d) && !memcmp(s, s6, 16) &&
	       !memcmp(d, d6, 16), "IPv6 GRH: the addresses as GIDs");
	memset(grh, 0, sizeof(grh));
	result(wcubuf_grh_gids(grh, s, d) == -1, "an all-zero GRH is refused");
	grh[20] = 0x46;	/* IPv4 with options: not what RoCEv2 sends */
	result(wcubuf_grh_gids(grh, s, d) == -1, "IPv4 with IHL 6 is refused");
}

static void test_ack_codec(void)
{
	static const uint8_t want[16] = {
		0x01, 0x00, 0x00, 0x00,
		0x05, 0x02, 0x00, 0x00,
		0x40, 0x30, 0x20, 0x10,
		0x80, 0x70, 0x60, 0x50,
	};
	struct wcubuf_ack a = { WCUBUF_NACK,
				1u << WCUBUF_EV_SEQUENCE |
				1u << WCUBUF_EV_WINDOW |
				1u << WCUBUF_EV_NO_SOF,
				0x5060708010203040ULL }, d;
	uint8_t buf[32];
	char s[128];

	memset(buf, 0xee, sizeof(buf));
	result(wcubuf_ack_encode(&a, buf, sizeof(buf)) == 16 &&
	       !memcmp(buf, want, 16) && buf[16] == 0xee,
	       "NACK sequence+window+no_sof: the 16 bytes of Table 3.5");
	result(!wcubuf_ack_decode(want, 16, &d) && d.type == WCUBUF_NACK &&
	       d.events == 0x205 && d.va == 0x5060708010203040ULL,
	       "NACK decodes back");
	result(wcubuf_ack_encode(&a, buf, 15) == WCUBUF_ESHORT,
	       "no ACK/NACK into 15 bytes");
	result(wcubuf_ack_decode(want, 15, &d) == WCUBUF_ESHORT,
	       "a 15-byte ACK/NACK is refused");
	memcpy(buf, want, 16);
	buf[0] = 2;
	result(wcubuf_ack_decode(buf, 16, &d) == WCUBUF_EMETHOD,
	       "ACK type 2 is refused");
	buf[0] = 0;
	buf[3] = 1;
	result(wcubuf_ack_decode(buf, 16, &d) == WCUBUF_EMETHOD,
	       "ACK type 0x01000000 (a big-endian 1) is refused");
	buf[3] = 0;
	result(!wcubuf_ack_decode(buf, 16, &d) && d.type == WCUBUF_ACK,
	       "type 0 is an ACK");
	result(!strcmp(wcubuf_events_str(0x205, s, sizeof(s)),
		       "sequence+window+no_sof"),
	       "events 0x205 read sequence+window+no_sof");
	result(!strcmp(wcubuf_events_str(0, s, sizeof(s)), "none") &&
	       !strcmp(wcubuf_events_str(1u << 31 | 1u << 11, s, sizeof(s)),
		       "ecc_uncorr+bit31"), "no events; an unknown bit");
	wcubuf_events_str(0xfff, s, 10);
	result(strlen(s) < 10, "event string truncated to its buffer");
	result(!strcmp(wcubuf_event_name(WCUBUF_EV_RKEY), "rkey") &&
	       !strcmp(wcubuf_event_name(WCUBUF_EV_EBP), "ebp") &&
	       !strcmp(wcubuf_event_name(12), "unknown"), "event names");
	result(WCUBUF_EV_FATAL == 0x108 && WCUBUF_EV_RECEIVE == 0xef3,
	       "fatal bits 3, 8; receive errors 0, 1, 4-7, 9-11");
}

/*
 * The window arithmetic itself is the kernel receiver's
 * (snaa_wcubuf_proto.c), tested in tests/unit/test_wcubuf.c: here only
 * that the library's names hand their arguments on in the right order,
 * and the emulator's VA_OFFS policy.
 */
static void test_window(void)
{
	const uint64_t R = 16 * 65600, F = 65600;

	result(wcubuf_in_window(1000, 1000, R, F) &&
	       !wcubuf_in_window(1000 - 64, 1000, R, F) &&
	       !wcubuf_in_window(5, 5, F, F) &&
	       wcubuf_ring_offset(0x1000 + 3 * R + 128, 0x1000, R) == 128 &&
	       wcubuf_frame_va(F * 2, F, 9) == F * 11 &&
	       wcubuf_frame_index(F * 11, F * 2, F) == 9 &&
	       wcubuf_frame_index(F * 9 + 64, F * 2, F) == -1,
	       "window, ring offset, frame VA and index: the kernel's "
	       "arithmetic, arguments in order");
	result(wcubuf_va_offs(0, 65600) % 65600 == 0 &&
	       wcubuf_va_offs(0, 65600) > (1ULL << 40) - 65600 &&
	       wcubuf_va_offs(1, 65600) > wcubuf_va_offs(0, 65600) &&
	       wcubuf_va_offs(3, 4096) == 4ULL << 40,
	       "VA_OFFS: (slot + 1) * 2^40 rounded down to a multiple of F");
}

/* The library's CRC-32C is userspace/common's (test_common tests it). */
static void test_crc(void)
{
	uint8_t big[4001];
	uint32_t c;

	result(wcubuf_crc32c("123456789", 9) == 0xe3069283,
	       "wcubuf_crc32c(\"123456789\") = e3069283");
	srand(7);
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)rand();
	c = wcubuf_crc32c_update(~0u, big, 1000);
	c = wcubuf_crc32c_update(c, big + 1000, 3001);
	result(~c == wcubuf_crc32c(big, 4001),
	       "wcubuf_crc32c_update: a CRC in two pieces");
}

static uint64_t be(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

static void put_crc(uint8_t *img, size_t size)
{
	uint32_t c = wcubuf_crc32c(img + 4, size - 4);

	img[0] = (uint8_t)(c >> 24);
	img[1] = (uint8_t)(c >> 16);
	img[2] = (uint8_t)(c >> 8);
	img[3] = (uint8_t)c;
}

static void test_image_kind(enum wcubuf_image_kind k)
{
	const char *kn = wcubuf_image_name(k);
	size_t size = wcubuf_image_size(k);
	uint64_t va = 0x123456789abcdec0ULL;
	uint8_t *img = malloc(size);
	struct wcubuf_image_report r;
	int ok = 1, zero = 1;

	wcubuf_image_fill(img, k, va);
	result(be(img, 4) == wcubuf_crc32c(img + 4, size - 4),
	       "%s: bytes 0-3 are the big-endian CRC-32C of bytes 4..end", kn);
	result(be(img + 8, 8) == va, "%s: bytes 8-15 the big-endian VA", kn);
	for (int i = 4; i < 64; i++)
		if ((i < 8 || i >= 16) && img[i])
			zero = 0;
	result(zero, "%s: bytes 4-7 and 16-63 are zero", kn);
	for (unsigned int i = 0; i < 65536; i++) {
		unsigned int col = i / 256, row = i % 256, b;

		if (k == WCUBUF_IMAGE_6BIT)
			b = img[64 + col * 256 + row];
		else
			b = img[64 + col * 128 + row / 2] >> (row & 1 ? 4 : 0)
			    & 0xf;
		ok &= b == (wcubuf_pixel(va, i) &
			    (k == WCUBUF_IMAGE_6BIT ? 0x3fu : 0xfu));
	}
	result(ok, "%s: every pixel at its column/row place", kn);
	result(wcubuf_image_check(img, k, va, &r) == WCUBUF_IMG_OK,
	       "%s: the image checks out", kn);

	img[size - 1] ^= 0x01;
	result(wcubuf_image_check(img, k, va, &r) == WCUBUF_IMG_CRC &&
	       r.crc != r.want_crc, "%s: a flipped pixel bit: CRC error", kn);
	put_crc(img, size);
	result(wcubuf_image_check(img, k, va, &r) == WCUBUF_IMG_PIXEL &&
	       r.offset == size - 1,
	       "%s: ... with a matching CRC: pixel error at its offset", kn);
	img[size - 1] ^= 0x01;
	put_crc(img, size);
	img[2] ^= 0x10;
	result(wcubuf_image_check(img, k, va, &r) == WCUBUF_IMG_CRC,
	       "%s: a flipped CRC bit: CRC error", kn);
	img[2] ^= 0x10;
	result(wcubuf_image_check(img, k, va + 64, &r) == WCUBUF_IMG_VA &&
	       r.got_va == va,
	       "%s: an image for another VA: VA error (CRC fine)", kn);
	img[40] = 1;
	put_crc(img, size);
	result(wcubuf_image_check(img, k, va, &r) == WCUBUF_IMG_PADDING &&
	       r.offset == 40, "%s: header padding byte 40 set: padding", kn);
	img[40] = 0;
	if (k == WCUBUF_IMAGE_6BIT) {
		img[1000] |= 0x80;
		put_crc(img, size);
		result(wcubuf_image_check(img, k, va, &r) ==
		       WCUBUF_IMG_PADDING && r.offset == 1000,
		       "6bit: a pixel's top bit set: padding error");
		img[1000] &= 0x3f;
	} else {
		uint8_t t = img[1000];

		img[1000] = (uint8_t)(t << 4 | t >> 4);
		put_crc(img, size);
		result(wcubuf_image_check(img, k, va, &r) ==
		       (t >> 4 == (t & 0xf) ? WCUBUF_IMG_OK :
					       WCUBUF_IMG_PIXEL),
		       "4bit: swapped nibbles: pixel error");
		img[1000] = t;
	}
	put_crc(img, size);
	result(wcubuf_image_check(img, k, va, &r) == WCUBUF_IMG_OK,
	       "%s: repaired image checks out again", kn);
	free(img);
}

static void test_frames(void)
{
	const size_t S6 = WCUBUF_IMAGE_6BIT_LEN, S4 = WCUBUF_IMAGE_4BIT_LEN;
	size_t F = 3 * S6 + 128;
	uint8_t *f = malloc(F);
	struct wcubuf_image_report r;
	uint64_t va = ~0ULL - S6 - 63;	/* image 2 lies past 2^64 */

	result(S6 == 65600 && S4 == 32832 &&
	       wcubuf_image_size(WCUBUF_IMAGE_4BIT) == S4,
	       "image sizes: 6bit 65600, 4bit 32832 bytes");
	result(wcubuf_frame_images(F, WCUBUF_IMAGE_6BIT) == 3 &&
	       wcubuf_frame_images(F, WCUBUF_IMAGE_4BIT) == 5 &&
	       wcubuf_frame_images(4096, WCUBUF_IMAGE_6BIT) == 0,
	       "images per frame: floor(F / image size)");
	result(wcubuf_image_parse("4bit") == WCUBUF_IMAGE_4BIT &&
	       wcubuf_image_parse("6bit") == WCUBUF_IMAGE_6BIT &&
	       wcubuf_image_parse("8bit") == -1, "--image 4bit|6bit");
	wcubuf_frame_fill(f, F, WCUBUF_IMAGE_6BIT, va);
	result(wcubuf_frame_check(f, F, F, WCUBUF_IMAGE_6BIT, va, &r) ==
	       WCUBUF_IMG_OK, "3 images + 128 zero bytes, VAs across 2^64");
	result(be(f + 2 * S6 + 8, 8) == va + 2 * S6 && va + 2 * S6 < va,
	       "image 2 carries frame VA + 2 * 65600 (wrapped)");
	result(wcubuf_frame_check(f, F, F, WCUBUF_IMAGE_4BIT, va, &r) ==
	       WCUBUF_IMG_CRC, "the 6bit frame is no 4bit frame");
	result(wcubuf_frame_check(f, F - 64, F, WCUBUF_IMAGE_6BIT, va, &r) ==
	       WCUBUF_IMG_LENGTH, "a short frame: length error");
	f[F - 1] = 1;
	result(wcubuf_frame_check(f, F, F, WCUBUF_IMAGE_6BIT, va, &r) ==
	       WCUBUF_IMG_TAIL && r.offset == F - 1,
	       "a byte set after the images: tail error at its offset");
	f[F - 1] = 0;
	f[2 * S6 + 500] ^= 4;
	result(wcubuf_frame_check(f, F, F, WCUBUF_IMAGE_6BIT, va, &r) ==
	       WCUBUF_IMG_CRC && r.offset == 2 * S6 && r.va == va + 2 * S6,
	       "a corrupted image 2: CRC error at image 2's offset");
	f[2 * S6 + 500] ^= 4;
	/* the frame of one image at the next VA: every image VA differs */
	result(wcubuf_frame_check(f, F, F, WCUBUF_IMAGE_6BIT, va + F, &r) ==
	       WCUBUF_IMG_VA, "the frame checked as the next frame: VA error");
	wcubuf_frame_fill(f, 2 * S4, WCUBUF_IMAGE_4BIT, 4096);
	result(wcubuf_frame_check(f, 2 * S4, 2 * S4, WCUBUF_IMAGE_4BIT, 4096,
				  &r) == WCUBUF_IMG_OK,
	       "4bit frame of exactly two images");
	free(f);
}

/* ---- emulator worker table with fake data channels ---- */

static int ups, downs, fail_up;

static int fake_up(void *ctx, struct wcubuf_emu_worker *w)
{
	(void)ctx;
	if (fail_up)
		return 12;
	ups++;
	w->emu_qpn = 0x100 + w->slot;
	w->rkey = 0xabc00 + w->slot;
	return 0;
}

static void fake_down(void *ctx, struct wcubuf_emu_worker *w)
{
	(void)ctx;
	(void)w;
	downs++;
}

static struct wcubuf_status req_of(enum wcubuf_method m, uint32_t qpn,
				   uint32_t qkey)
{
	struct wcubuf_status s = wcubuf_status_make(m);

	s.qpn = qpn;
	s.qkey = qkey;
	return s;
}

static void test_emu(void)
{
	static const struct wcubuf_emu_ops ops = { fake_up, fake_down };
	const uint8_t g1[16] = { [10] = 0xff, [11] = 0xff, 198, 18, 0, 1 };
	const uint8_t g2[16] = { [10] = 0xff, [11] = 0xff, 198, 18, 0, 3 };
	struct wcubuf_emu_worker w[3];
	struct wcubuf_emu e;
	struct wcubuf_status q, r, r2;
	uint32_t qk;
	enum wcubuf_emu_result x;

	wcubuf_emu_init(&e, w, 3, 65600, &ops, NULL);
	q = req_of(WCUBUF_DATA_REQ, 0x11, 0x21);
	result(wcubuf_emu_handle(&e, g1, &q, &r, &qk) == WCUBUF_EMU_NO_STATUS &&
	       !ups, "DATA_REQ before STAT_REQ: not answered");
	q = req_of(WCUBUF_STAT_REQ, 0x11, 0x5555);
	q.lid = 7;
	x = wcubuf_emu_handle(&e, g1, &q, &r, &qk);
	result(x == WCUBUF_EMU_REPLY && r.method == WCUBUF_STAT_RES &&
	       r.lid == 7 && r.qpn == 0x11 && r.major == 1 && r.minor == 1 &&
	       qk == 0x5555 && wcubuf_emu_count(&e) == 1,
	       "STAT_REQ: STAT_RES 1.1 echoing LID and QPN, to its Q_Key");
	x = wcubuf_emu_handle(&e, g1, &q, &r2, &qk);
	result(x == WCUBUF_EMU_REPLY && !memcmp(&r, &r2, sizeof(r)) &&
	       wcubuf_emu_count(&e) == 1,
	       "a repeated STAT_REQ: the same answer, still one worker");
	q = req_of(WCUBUF_STAT_REQ, 0x11, 0x5555);
	wcubuf_emu_handle(&e, g2, &q, &r, &qk);
	q = req_of(WCUBUF_STAT_REQ, 0x12, 0x5555);
	wcubuf_emu_handle(&e, g1, &q, &r, &qk);
	result(wcubuf_emu_count(&e) == 3 && wcubuf_emu_find(&e, g2, 0x11) &&
	       wcubuf_emu_find(&e, g1, 0x12) &&
	       wcubuf_emu_find(&e, g1, 0x11) != wcubuf_emu_find(&e, g2, 0x11),
	       "same QPN other GID, same GID other QPN: three workers");
	q = req_of(WCUBUF_STAT_REQ, 0x13, 0x5555);
	result(wcubuf_emu_handle(&e, g1, &q, &r, &qk) == WCUBUF_EMU_FULL,
	       "a fourth worker in a table of three: not answered");
	e.idle_s = 60;
	e.now = 59;
	result(wcubuf_emu_handle(&e, g1, &q, &r, &qk) == WCUBUF_EMU_FULL &&
	       !e.reclaimed,
	       "... nor with the others silent for 59 s of an idle limit of 60");
	e.now = 0;
	e.idle_s = 0;

	q = req_of(WCUBUF_DATA_REQ, 0x11, 0x777);
	q.lid = 7;
	x = wcubuf_emu_handle(&e, g1, &q, &r, &qk);
	result(x == WCUBUF_EMU_REPLY && ups == 1 &&
	       r.method == WCUBUF_DATA_RES && r.qpn == 0x11 &&
	       r.lid == 0x100 && r.qkey == 0x777 && r.rkey == 0xabc00 &&
	       r.va == wcubuf_va_offs(0, 65600) && r.va % 65600 == 0 && r.va,
	       "DATA_REQ: DATA_RES with our data QPN in LID, QPND echoed, "
	       "VA_OFFS, R_Key");
	x = wcubuf_emu_handle(&e, g1, &q, &r2, &qk);
	result(x == WCUBUF_EMU_REPLY && ups == 1 && !memcmp(&r, &r2, sizeof(r)),
	       "a repeated DATA_REQ: the same DATA_RES, no second channel");
	q.qkey = 0x778;
	x = wcubuf_emu_handle(&e, g1, &q, &r2, &qk);
	result(x == WCUBUF_EMU_REPLY && ups == 2 && downs == 1 &&
	       r2.qkey == 0x778, "DATA_REQ for another data QPN: replaced");
	q = req_of(WCUBUF_DATA_REQ, 0x11, 0x900);
	fail_up = 1;
	result(wcubuf_emu_handle(&e, g2, &q, &r, &qk) ==
	       WCUBUF_EMU_DATA_FAILED && !wcubuf_emu_find(&e, g2, 0x11)->data_up,
	       "a data channel that cannot be set up: not answered");
	fail_up = 0;
	result(wcubuf_emu_handle(&e, g2, &q, &r, &qk) == WCUBUF_EMU_REPLY &&
	       r.va == wcubuf_va_offs(1, 65600) && r.lid == 0x101,
	       "... its retry works: slot 1's VA_OFFS");

	q = req_of(WCUBUF_DATA_TERM, 0x11, 0);
	x = wcubuf_emu_handle(&e, g1, &q, &r, &qk);
	result(x == WCUBUF_EMU_REPLY && r.method == WCUBUF_DATA_DOWN &&
	       downs == 2 && qk == 0x5555 && !wcubuf_emu_find(&e, g1, 0x11)->data_up,
	       "DATA_TERM: channel down, DATA_DOWN to the recorded Q_Key");
	x = wcubuf_emu_handle(&e, g1, &q, &r, &qk);
	result(x == WCUBUF_EMU_REPLY && r.method == WCUBUF_DATA_DOWN &&
	       downs == 2, "a repeated DATA_TERM: DATA_DOWN again, nothing torn");
	/* g1 QPN 0x11 (data up) spoke at 0 s, g2 QPN 0x11 at 0 s, g1 QPN
	 * 0x12 now at 50 s and a frame of g2 arrived at 70 s: at 100 s a
	 * new worker takes the slot of g1 QPN 0x11, silent for 100 s */
	e.idle_s = 60;
	e.now = 50;
	q = req_of(WCUBUF_STAT_REQ, 0x12, 0x5555);
	wcubuf_emu_handle(&e, g1, &q, &r, &qk);
	e.now = 70;
	wcubuf_emu_seen(&e, wcubuf_emu_find(&e, g2, 0x11));
	{
		struct wcubuf_emu_worker *old = wcubuf_emu_find(&e, g1, 0x11);
		unsigned int slot = old ? old->slot : 99;
		int d0 = downs + (old && old->data_up ? 1 : 0);

		e.now = 100;
		q = req_of(WCUBUF_STAT_REQ, 0x14, 0x5555);
		x = wcubuf_emu_handle(&e, g1, &q, &r, &qk);
		result(x == WCUBUF_EMU_REPLY && e.reclaimed == 1 &&
		       !wcubuf_emu_find(&e, g1, 0x11) &&
		       wcubuf_emu_find(&e, g1, 0x14) &&
		       wcubuf_emu_find(&e, g1, 0x14)->slot == slot &&
		       downs == d0 &&
		       wcubuf_emu_count(&e) == 3,
		       "table full, idle limit 60 s: a new worker takes the slot of the one silent 100 s (its data channel torn down)");
		q = req_of(WCUBUF_STAT_TERM, 0x14, 0);
		wcubuf_emu_handle(&e, g1, &q, &r, &qk);
		q = req_of(WCUBUF_STAT_REQ, 0x11, 0x5555);
		wcubuf_emu_handle(&e, g1, &q, &r, &qk);
		e.idle_s = 0;
	}
	q = req_of(WCUBUF_STAT_TERM, 0x11, 0);
	x = wcubuf_emu_handle(&e, g2, &q, &r, &qk);
	result(x == WCUBUF_EMU_REPLY && r.method == WCUBUF_STAT_DOWN &&
	       downs == 3 && wcubuf_emu_count(&e) == 2 &&
	       !wcubuf_emu_find(&e, g2, 0x11),
	       "STAT_TERM with the data channel up: both gone, STAT_DOWN");
	q.qkey = 0x4242;
	x = wcubuf_emu_handle(&e, g2, &q, &r, &qk);
	result(x == WCUBUF_EMU_REPLY && r.method == WCUBUF_STAT_DOWN &&
	       qk == 0x4242, "STAT_TERM from an unknown worker: STAT_DOWN");
	q = req_of(WCUBUF_STAT_RES, 0x11, 0);
	result(wcubuf_emu_handle(&e, g1, &q, &r, &qk) == WCUBUF_EMU_IGNORE,
	       "a response method sent to the emulator is ignored");
	q = req_of(WCUBUF_STAT_REQ, 0x55, 1);
	result(wcubuf_emu_handle(&e, g2, &q, &r, &qk) == WCUBUF_EMU_REPLY &&
	       wcubuf_emu_find(&e, g2, 0x55)->slot == 1,
	       "a freed slot is used again");
	q = req_of(WCUBUF_DATA_REQ, 0x12, 0x31);
	wcubuf_emu_handle(&e, g1, &q, &r, &qk);
	downs = 0;
	wcubuf_emu_clear(&e);
	result(wcubuf_emu_count(&e) == 0 && downs == 1,
	       "clearing the table tears the open data channel down");
}

/* ---- worker retransmit bookkeeping ---- */

/* a pointer to an ACK/NACK (a compound literal) */
#define ACK(type, ev, va)	(&(struct wcubuf_ack){ (type), (ev), (va) })

static void test_tx_basic(void)
{
	const uint32_t F = 65600;
	const uint64_t base = wcubuf_va_offs(0, F);
	struct wcubuf_tx_frame sl[4];
	struct wcubuf_tx tx;
	int i, order[4], ok = 1;

	wcubuf_tx_init(&tx, sl, 4, base, F, 10, 1000);
	for (int k = 0; k < 4; k++) {
		order[k] = wcubuf_tx_next(&tx, 0);
		ok &= order[k] == k && sl[k].sends == 0 &&
		      sl[k].reason == WCUBUF_TX_NEW && sl[k].seq == (uint64_t)k;
		wcubuf_tx_sent(&tx, order[k], 0);
	}
	result(ok && wcubuf_tx_next(&tx, 0) == -1,
	       "4 in flight: frames 0-3 go out, then nothing");
	result(wcubuf_tx_answer(&tx, &(struct wcubuf_ack){ 0, 0, base + 2 * F },
				1) == WCUBUF_TXV_ACKED && tx.base == 0 &&
	       wcubuf_tx_next(&tx, 1) == -1,
	       "ACK of frame 2 out of order: done, frame 0 still blocks");
	result(wcubuf_tx_answer(&tx, &(struct wcubuf_ack){ 0, 0, base }, 1) ==
	       WCUBUF_TXV_ACKED && tx.base == 1,
	       "ACK of frame 0: the oldest moves to 1");
	i = wcubuf_tx_next(&tx, 1);
	result(i == 0 && sl[0].seq == 4 && sl[0].sends == 0,
	       "frame 4 takes frame 0's slot");
	wcubuf_tx_sent(&tx, i, 1);
	result(wcubuf_tx_answer(&tx, &(struct wcubuf_ack){ 0, 0, base }, 2) ==
	       WCUBUF_TXV_STALE && tx.stale == 1,
	       "a second ACK of frame 0 is stale");
	result(wcubuf_tx_answer(&tx, &(struct wcubuf_ack){ 0, 0, base + 64 },
				2) == WCUBUF_TXV_STALE,
	       "an ACK for a VA inside a frame is stale");
	result(wcubuf_tx_answer(&tx, &(struct wcubuf_ack){ 0, 0, base + 9 * F },
				2) == WCUBUF_TXV_STALE,
	       "an ACK for a frame not sent yet is stale");
	result(wcubuf_tx_answer(&tx, ACK(1, 1u << WCUBUF_EV_SEQUENCE,
					     base + F), 3) ==
	       WCUBUF_TXV_RETRANSMIT && wcubuf_tx_deadline(&tx) == INT64_MIN,
	       "NACK sequence for frame 1: retransmit at once");
	i = wcubuf_tx_next(&tx, 3);
	result(i == 1 && sl[1].reason == WCUBUF_TX_NACK && sl[1].sends == 1,
	       "frame 1 is next, reason nack");
	wcubuf_tx_sent(&tx, i, 3);
	result(wcubuf_tx_answer(&tx, ACK(1, 1u << WCUBUF_EV_WINDOW,
					     base + 3 * F), 10) ==
	       WCUBUF_TXV_WAIT && wcubuf_tx_next(&tx, 10) == -1 &&
	       wcubuf_tx_deadline(&tx) == 11,
	       "NACK window for frame 3: wait 1 ms, nothing to send now");
	i = wcubuf_tx_next(&tx, 11);
	result(i == 3 && sl[3].reason == WCUBUF_TX_WINDOW,
	       "after 1 ms frame 3 goes again, reason window");
	wcubuf_tx_sent(&tx, i, 11);
	ok = 1;
	{
		static const int64_t waits[] = { 2, 4, 8, 16, 32, 64, 100, 100 };
		int64_t now = 20;

		for (unsigned int k = 0; k < 8; k++) {
			ok &= wcubuf_tx_answer(&tx, ACK(1, 4, base + 3 * F),
					       now) == WCUBUF_TXV_WAIT &&
			      sl[3].deadline == now + waits[k];
			now += waits[k];
			ok &= wcubuf_tx_next(&tx, now) == 3;
			wcubuf_tx_sent(&tx, 3, now);
		}
	}
	result(ok, "window waits double: 2, 4, .. 64, then 100, 100 ms");
	result(tx.sent[WCUBUF_TX_NEW] == 5 && tx.sent[WCUBUF_TX_NACK] == 1 &&
	       tx.sent[WCUBUF_TX_WINDOW] == 9 && tx.nacks == 10 &&
	       tx.nack_events[WCUBUF_EV_WINDOW] == 9 &&
	       tx.nack_events[WCUBUF_EV_SEQUENCE] == 1,
	       "transmissions and NACKs counted by reason and bit");
}

static void test_tx_events(void)
{
	const uint32_t F = 4096;
	struct wcubuf_tx_frame sl[2];
	struct wcubuf_tx tx;

	for (unsigned int b = 0; b < WCUBUF_EV_NUM; b++) {
		enum wcubuf_tx_verdict want, got;

		wcubuf_tx_init(&tx, sl, 2, F, F, 2, 1000);
		wcubuf_tx_sent(&tx, wcubuf_tx_next(&tx, 0), 0);
		got = wcubuf_tx_answer(&tx, ACK(1, 1u << b, F), 5);
		if (b == WCUBUF_EV_RKEY || b == WCUBUF_EV_VA)
			want = WCUBUF_TXV_FATAL;
		else if (b == WCUBUF_EV_WINDOW)
			want = WCUBUF_TXV_WAIT;
		else
			want = WCUBUF_TXV_RETRANSMIT;
		result(got == want && tx.nack_events[b] == 1,
		       "NACK %s for a frame in flight: %s", wcubuf_event_name(b),
		       want == WCUBUF_TXV_FATAL ? "report and stop" :
		       want == WCUBUF_TXV_WAIT ? "wait, retransmit" :
		       "retransmit at once");
	}
	wcubuf_tx_init(&tx, sl, 2, F, F, 2, 1000);
	wcubuf_tx_sent(&tx, wcubuf_tx_next(&tx, 0), 0);
	result(wcubuf_tx_answer(&tx, ACK(1, 1u << WCUBUF_EV_NO_SOF, 0), 1) ==
	       WCUBUF_TXV_NO_SOF && tx.no_sof == 1 &&
	       tx.nack_events[WCUBUF_EV_NO_SOF] == 1 && sl[0].state ==
	       WCUBUF_TXS_WAIT_ACK, "NACK no_sof with VA 0: counted, no frame");
	result(wcubuf_tx_answer(&tx, ACK(1, 0x5, F), 1) == WCUBUF_TXV_WAIT,
	       "sequence+window: the wait wins");
	wcubuf_tx_init(&tx, sl, 2, F, F, 2, 1000);
	wcubuf_tx_sent(&tx, wcubuf_tx_next(&tx, 0), 0);
	result(wcubuf_tx_answer(&tx, ACK(1, 0x104 | 1, F), 1) ==
	       WCUBUF_TXV_FATAL && tx.fail_va == F && tx.fail_events == 0x105,
	       "window+va: fatal wins, VA and events recorded");
	result(wcubuf_tx_answer(&tx, ACK(1, 1u << WCUBUF_EV_RKEY, 9 * F),
				1) == WCUBUF_TXV_FATAL,
	       "invalid R_Key for a frame not in flight: still fatal");
	wcubuf_tx_init(&tx, sl, 2, F, F, 2, 1000);
	wcubuf_tx_sent(&tx, wcubuf_tx_next(&tx, 0), 0);
	result(wcubuf_tx_answer(&tx, ACK(1, 0, F), 1) ==
	       WCUBUF_TXV_RETRANSMIT && tx.nack_unknown == 1,
	       "NACK without event bits: retransmit, counted");
	result(wcubuf_tx_answer(&tx, ACK(1, 1u << 20, F), 1) ==
	       WCUBUF_TXV_RETRANSMIT && tx.nack_unknown == 2,
	       "NACK with only bit 20: retransmit, counted");
	result(wcubuf_tx_answer(&tx, ACK(0, 1u << 2, F), 1) ==
	       WCUBUF_TXV_ACKED, "an ACK with event bits set is an ACK");
}

static void test_tx_timeouts(void)
{
	const uint32_t F = 4096;
	struct wcubuf_tx_frame sl[2];
	struct wcubuf_tx tx;
	int ok = 1, i;

	wcubuf_tx_init(&tx, sl, 2, 64 * F, F, 1, 500);
	wcubuf_tx_sent(&tx, wcubuf_tx_next(&tx, 0), 0);
	result(wcubuf_tx_next(&tx, 499) == -1 && wcubuf_tx_deadline(&tx) == 500,
	       "no retransmit before the timeout");
	for (int k = 1; k < WCUBUF_TX_MAX_TIMEOUTS; k++) {
		i = wcubuf_tx_next(&tx, k * 500);
		ok &= i == 0 && sl[0].reason == WCUBUF_TX_TIMEOUT;
		wcubuf_tx_sent(&tx, i, k * 500);
	}
	result(ok && tx.sent[WCUBUF_TX_TIMEOUT] == WCUBUF_TX_MAX_TIMEOUTS - 1,
	       "each timeout retransmits (%d times)",
	       WCUBUF_TX_MAX_TIMEOUTS - 1);
	result(wcubuf_tx_next(&tx, WCUBUF_TX_MAX_TIMEOUTS * 500) == -2 &&
	       tx.fail_va == 64 * F,
	       "timeout number %d: give up on the frame",
	       WCUBUF_TX_MAX_TIMEOUTS);

	wcubuf_tx_init(&tx, sl, 2, 64 * F, F, 1, 500);
	wcubuf_tx_sent(&tx, wcubuf_tx_next(&tx, 0), 0);
	for (int k = 1; k < 4; k++)
		wcubuf_tx_sent(&tx, wcubuf_tx_next(&tx, k * 500), k * 500);
	wcubuf_tx_answer(&tx, ACK(1, 1, 64 * F), 1700);
	result(sl[0].timeouts == 0, "a NACK resets the timeouts in a row");
	ok = 1;
	for (int k = 1; k < WCUBUF_TX_MAX_NACKS - 1; k++) {
		ok &= wcubuf_tx_next(&tx, 2000) == 0;
		wcubuf_tx_sent(&tx, 0, 2000);
		ok &= wcubuf_tx_answer(&tx, ACK(1, 1, 64 * F), 2000) ==
		      WCUBUF_TXV_RETRANSMIT;
	}
	result(ok && wcubuf_tx_answer(&tx, ACK(1, 1, 64 * F), 2000) ==
	       WCUBUF_TXV_GIVE_UP, "NACK number %d in a row: give up",
	       WCUBUF_TX_MAX_NACKS);
}

/* A lossy, reordering link simulated: every frame ends up ACKed exactly
 * once, the receiver sees every frame at least once, in any order. */
static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint32_t rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

static void test_tx_sim(uint64_t va_base, const char *what)
{
	enum { N = 3000, INFL = 16, QMAX = 64 };
	const uint32_t F = 65600;
	struct wcubuf_tx_frame sl[INFL];
	struct wcubuf_tx tx;
	struct wcubuf_ack q[QMAX];
	static uint8_t delivered[N];
	unsigned int nq = 0, dups = 0, bad = 0;
	int64_t now = 0;
	long steps = 0;
	uint64_t ra = 0;	/* receiver read pointer: frames in order */

	memset(delivered, 0, sizeof(delivered));
	wcubuf_tx_init(&tx, sl, INFL, va_base, F, N, 50);
	while (!wcubuf_tx_done(&tx) && steps++ < 10000000) {
		int i = wcubuf_tx_next(&tx, now);

		if (i == -2) {
			bad++;
			break;
		}
		if (i >= 0) {
			uint64_t va = wcubuf_tx_va(&tx, sl[i].seq);
			int64_t k = wcubuf_frame_index(va, va_base, F);

			wcubuf_tx_sent(&tx, i, now);
			if (rnd(100) < 5 || nq == QMAX)
				continue;	/* frame lost */
			/* receiver: 16-frame ring, window [ra, ra + 15) */
			if ((uint64_t)k >= ra + 15) {
				q[nq++] = *ACK(1, 4, va);
			} else if (rnd(100) < 3) {
				q[nq++] = *ACK(1, 1 | 1u << 7, va);
			} else {
				if (delivered[k])
					dups++;
				delivered[k] = 1;
				while (ra < N && delivered[ra])
					ra++;
				q[nq++] = *ACK(0, 0, va);
			}
			continue;
		}
		/* deliver a random answer (reordering), or let time pass */
		if (nq && rnd(4)) {
			unsigned int j = rnd(nq);
			struct wcubuf_ack a = q[j];

			q[j] = q[--nq];
			if (rnd(100) < 5)
				continue;	/* answer lost */
			wcubuf_tx_answer(&tx, &a, now);
		} else {
			now++;
		}
	}
	result(wcubuf_tx_done(&tx) && !bad && tx.acks == N && ra == N,
	       "%s: 3000 frames over 5%% loss both ways, reordering, NACKs: "
	       "all ACKed once (%llu nack, %llu window, %llu timeout "
	       "retransmits, %u duplicates at the receiver)", what,
	       (unsigned long long)tx.sent[WCUBUF_TX_NACK],
	       (unsigned long long)tx.sent[WCUBUF_TX_WINDOW],
	       (unsigned long long)tx.sent[WCUBUF_TX_TIMEOUT], dups);
}

int main(void)
{
	ktap_plan(PLAN);
	test_status_codec();
	test_answers();
	test_grh();
	test_ack_codec();
	test_window();
	test_crc();
	test_image_kind(WCUBUF_IMAGE_6BIT);
	test_image_kind(WCUBUF_IMAGE_4BIT);
	test_frames();
	test_emu();
	test_tx_basic();
	test_tx_events();
	test_tx_timeouts();
	test_tx_sim(wcubuf_va_offs(0, 65600), "VA_OFFS of slot 0");
	test_tx_sim(~0ULL - 1000ULL * 65600 - 63, "VAs across 2^64");
	return test_finish("libwcubuf", PLAN);
}
