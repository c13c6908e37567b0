// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The software NAA's function table, see naa_kernels.h. */
#include <stdlib.h>
#include <string.h>

#include "naa_kernels.h"
#include "snaa_crc32c.h"

static const char *const naa_fn_names[] = {
	[NAA_FN_ADD] = "add",
	[NAA_FN_SUM] = "sum",
	[NAA_FN_CRC32C] = "crc32c",
	[NAA_FN_MATMUL] = "matmul",
	[NAA_FN_INC] = "inc",
};

const char *naa_fn_name(uint8_t fn)
{
	if (fn < sizeof(naa_fn_names) / sizeof(naa_fn_names[0]) &&
	    naa_fn_names[fn])
		return naa_fn_names[fn];
	return "unknown";
}

uint8_t naa_fn_parse(const char *s)
{
	char *end;
	unsigned long v;

	for (unsigned int i = 1; i < sizeof(naa_fn_names) / sizeof(naa_fn_names[0]); i++)
		if (!strcmp(s, naa_fn_names[i]))
			return (uint8_t)i;
	v = strtoul(s, &end, 0);
	if (*s && !*end && v >= 1 && v <= 255)
		return (uint8_t)v;
	return 0;
}

/* n with n * n * 4 == bytes, or 0. */
static size_t naa_matmul_n(size_t bytes)
{
	size_t n = 0;

	if (bytes % 4)
		return 0;
	while ((n + 1) * (n + 1) * 4 <= bytes)
		n++;
	return n * n * 4 == bytes ? n : 0;
}

size_t naa_result_size(uint8_t fn, unsigned int n_in, size_t in_size)
{
	if (fn == NAA_FN_INC)
		return in_size;
	if (!n_in)
		return 0;
	switch (fn) {
	case NAA_FN_ADD:
		return in_size;
	case NAA_FN_SUM:
		return 8;
	case NAA_FN_CRC32C:
		return 4;
	case NAA_FN_MATMUL:
		return n_in == 2 && naa_matmul_n(in_size) ? in_size : 0;
	}
	return 0;
}

/* Start with crc = 0; chain by passing the previous result. */
uint32_t naa_crc32c(uint32_t crc, const uint8_t *p, size_t len)
{
	return ~snaa_crc32c_update(~crc, p, len);
}

static void naa_put_le(uint8_t *p, uint64_t v, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++, v >>= 8)
		p[i] = (uint8_t)v;
}

static uint32_t naa_get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint8_t naa_matmul(const struct naa_buf *a, const struct naa_buf *b,
			  struct naa_buf *c)
{
	size_t n = naa_matmul_n(a->len);
	uint32_t *row;

	if (!n || b->len != a->len || c->len != a->len)
		return NAA_ESHAPE;
	row = malloc(n * sizeof(*row));
	if (!row)
		return NAA_ESHAPE;
	for (size_t i = 0; i < n; i++) {
		memset(row, 0, n * sizeof(*row));
		for (size_t k = 0; k < n; k++) {
			uint32_t aik = naa_get_le32(a->p + 4 * (i * n + k));
			const uint8_t *bk = b->p + 4 * k * n;

			for (size_t j = 0; j < n; j++)
				row[j] += aik * naa_get_le32(bk + 4 * j);
		}
		for (size_t j = 0; j < n; j++)
			naa_put_le(c->p + 4 * (i * n + j), row[j], 4);
	}
	free(row);
	return 0;
}

uint8_t naa_run(uint8_t fn, const struct naa_buf *in, unsigned int n_in,
		struct naa_buf *out)
{
	uint64_t sum = 0;
	uint32_t crc = 0;

	if (fn < 1 || fn > NAA_FN_LAST)
		return NAA_EUNKNOWN_FN;
	if (fn == NAA_FN_INC) {
		for (size_t i = 0; i < out->len; i++)
			out->p[i]++;
		return 0;
	}
	if (!n_in || naa_result_size(fn, n_in, in[0].len) != out->len)
		return NAA_ESHAPE;
	switch (fn) {
	case NAA_FN_ADD:
		for (unsigned int r = 0; r < n_in; r++)
			if (in[r].len != out->len)
				return NAA_ESHAPE;
		for (size_t i = 0; i < out->len; i++) {
			uint8_t s = 0;

			for (unsigned int r = 0; r < n_in; r++)
				s += in[r].p[i];
			out->p[i] = s;
		}
		return 0;
	case NAA_FN_SUM:
		for (unsigned int r = 0; r < n_in; r++)
			for (size_t i = 0; i < in[r].len; i++)
				sum += in[r].p[i];
		naa_put_le(out->p, sum, 8);
		return 0;
	case NAA_FN_CRC32C:
		for (unsigned int r = 0; r < n_in; r++)
			crc = naa_crc32c(crc, in[r].p, in[r].len);
		naa_put_le(out->p, crc, 4);
		return 0;
	case NAA_FN_MATMUL:
		return naa_matmul(&in[0], &in[1], out);
	}
	return NAA_EUNKNOWN_FN;
}
