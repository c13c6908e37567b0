// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The 4-bit and 6-bit image mappings of seed section 4: wcubuf.h. */
#include <string.h>
#include <strings.h>

#include "snaa_crc32c.h"
#include "wcubuf.h"

#define PIXELS		(WCUBUF_IMAGE_COLS * WCUBUF_IMAGE_ROWS)
#define PIXEL_STEP	0x85ebca77u	/* as in wcubuf_pixel() */

static void put_be(uint8_t *p, uint64_t v, unsigned int n)
{
	while (n--) {
		p[n] = (uint8_t)v;
		v >>= 8;
	}
}

static uint64_t get_be(const uint8_t *p, unsigned int n)
{
	uint64_t v = 0;

	for (unsigned int i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

uint32_t wcubuf_crc32c(const void *p, size_t len)
{
	return snaa_crc32c(p, len);
}

uint32_t wcubuf_crc32c_update(uint32_t crc, const void *p, size_t len)
{
	return snaa_crc32c_update(crc, p, len);
}

int wcubuf_image_parse(const char *s)
{
	if (!strcasecmp(s, "6bit") || !strcasecmp(s, "6-bit") ||
	    !strcmp(s, "6"))
		return WCUBUF_IMAGE_6BIT;
	if (!strcasecmp(s, "4bit") || !strcasecmp(s, "4-bit") ||
	    !strcmp(s, "4"))
		return WCUBUF_IMAGE_4BIT;
	return -1;
}

const char *wcubuf_image_name(enum wcubuf_image_kind kind)
{
	return kind == WCUBUF_IMAGE_4BIT ? "4bit" : "6bit";
}

size_t wcubuf_image_size(enum wcubuf_image_kind kind)
{
	return kind == WCUBUF_IMAGE_4BIT ? WCUBUF_IMAGE_4BIT_LEN :
					   WCUBUF_IMAGE_6BIT_LEN;
}

/* The pixel hash of wcubuf_pixel() at pixel 0; pixel i adds i * STEP. */
static uint32_t pixel_base(uint64_t va)
{
	return (uint32_t)(va >> 6) * 0x9e3779b1u ^ (uint32_t)(va >> 38);
}

static inline uint8_t pixel_of(uint32_t h)
{
	return (uint8_t)(h >> 24 ^ h >> 11);
}

void wcubuf_image_fill(void *img, enum wcubuf_image_kind kind, uint64_t va)
{
	uint8_t *p = img, *d = p + WCUBUF_IMAGE_HDR;
	size_t size = wcubuf_image_size(kind);
	uint32_t h = pixel_base(va);

	memset(p, 0, WCUBUF_IMAGE_HDR);
	put_be(p + 8, va, 8);
	if (kind == WCUBUF_IMAGE_6BIT) {
		for (unsigned int i = 0; i < PIXELS; i++, h += PIXEL_STEP)
			d[i] = pixel_of(h) & 0x3f;
	} else {
		for (unsigned int i = 0; i < PIXELS; i += 2) {
			uint8_t lo = pixel_of(h) & 0xf;

			h += PIXEL_STEP;
			d[i / 2] = (uint8_t)(lo | (pixel_of(h) & 0xf) << 4);
			h += PIXEL_STEP;
		}
	}
	put_be(p, wcubuf_crc32c(p + 4, size - 4), 4);
}

const char *wcubuf_image_error_str(enum wcubuf_image_error e)
{
	switch (e) {
	case WCUBUF_IMG_OK: return "ok";
	case WCUBUF_IMG_CRC: return "CRC mismatch";
	case WCUBUF_IMG_VA: return "wrong VA in the image header";
	case WCUBUF_IMG_PADDING: return "non-zero padding";
	case WCUBUF_IMG_PIXEL: return "wrong pixel value";
	case WCUBUF_IMG_TAIL: return "non-zero bytes after the last image";
	case WCUBUF_IMG_LENGTH: return "wrong frame length";
	}
	return "?";
}

static enum wcubuf_image_error img_fail(struct wcubuf_image_report *rep,
					enum wcubuf_image_error e,
					size_t offset)
{
	if (rep) {
		rep->error = e;
		rep->offset = offset;
	}
	return e;
}

enum wcubuf_image_error wcubuf_image_check(const void *img,
					   enum wcubuf_image_kind kind,
					   uint64_t va,
					   struct wcubuf_image_report *rep)
{
	const uint8_t *p = img, *d = p + WCUBUF_IMAGE_HDR;
	size_t size = wcubuf_image_size(kind);
	uint32_t crc = (uint32_t)get_be(p, 4);
	uint32_t want = wcubuf_crc32c(p + 4, size - 4);
	uint64_t got_va = get_be(p + 8, 8);
	uint32_t h = pixel_base(va);

	if (rep) {
		memset(rep, 0, sizeof(*rep));
		rep->va = va;
		rep->got_va = got_va;
		rep->crc = crc;
		rep->want_crc = want;
	}
	if (crc != want)
		return img_fail(rep, WCUBUF_IMG_CRC, 0);
	if (got_va != va)
		return img_fail(rep, WCUBUF_IMG_VA, 8);
	for (size_t i = 4; i < WCUBUF_IMAGE_HDR; i++)
		if (p[i] && (i < 8 || i >= 16))
			return img_fail(rep, WCUBUF_IMG_PADDING, i);
	if (kind == WCUBUF_IMAGE_6BIT) {
		for (unsigned int i = 0; i < PIXELS; i++, h += PIXEL_STEP) {
			if (d[i] == (pixel_of(h) & 0x3f))
				continue;
			return img_fail(rep, d[i] & 0xc0 ? WCUBUF_IMG_PADDING :
					WCUBUF_IMG_PIXEL,
					WCUBUF_IMAGE_HDR + i);
		}
	} else {
		for (unsigned int i = 0; i < PIXELS; i += 2) {
			uint8_t b = pixel_of(h) & 0xf;

			h += PIXEL_STEP;
			b |= (uint8_t)((pixel_of(h) & 0xf) << 4);
			h += PIXEL_STEP;
			if (d[i / 2] != b)
				return img_fail(rep, WCUBUF_IMG_PIXEL,
						WCUBUF_IMAGE_HDR + i / 2);
		}
	}
	return WCUBUF_IMG_OK;
}

size_t wcubuf_frame_images(size_t frame, enum wcubuf_image_kind kind)
{
	return frame / wcubuf_image_size(kind);
}

void wcubuf_frame_fill(void *buf, size_t frame, enum wcubuf_image_kind kind,
		       uint64_t va)
{
	size_t size = wcubuf_image_size(kind);
	size_t n = wcubuf_frame_images(frame, kind);
	uint8_t *p = buf;

	for (size_t i = 0; i < n; i++)
		wcubuf_image_fill(p + i * size, kind, va + i * size);
	memset(p + n * size, 0, frame - n * size);
}

enum wcubuf_image_error wcubuf_frame_check(const void *buf, size_t len,
					   size_t frame,
					   enum wcubuf_image_kind kind,
					   uint64_t va,
					   struct wcubuf_image_report *rep)
{
	size_t size = wcubuf_image_size(kind);
	size_t n = wcubuf_frame_images(frame, kind);
	const uint8_t *p = buf;
	enum wcubuf_image_error e;

	if (rep) {
		memset(rep, 0, sizeof(*rep));
		rep->va = va;
	}
	if (len != frame)
		return img_fail(rep, WCUBUF_IMG_LENGTH, len);
	for (size_t i = 0; i < n; i++) {
		e = wcubuf_image_check(p + i * size, kind, va + i * size, rep);
		if (e) {
			if (rep)
				rep->offset += i * size;
			return e;
		}
	}
	for (size_t o = n * size; o < frame; o++)
		if (p[o])
			return img_fail(rep, WCUBUF_IMG_TAIL, o);
	return WCUBUF_IMG_OK;
}
