// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Hex strings and "LABEL HEX" files: hexline.h. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "hexline.h"

static int hex_digit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

long hex_decode(const char *s, size_t n, unsigned char *out)
{
	size_t i;

	if (n % 2)
		return -1;
	for (i = 0; i < n / 2; i++) {
		int hi = hex_digit((unsigned char)s[2 * i]);
		int lo = hex_digit((unsigned char)s[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -1;
		out[i] = (unsigned char)(hi << 4 | lo);
	}
	return (long)(n / 2);
}

int hexline_read(FILE *f, struct hexline *h)
{
	ssize_t got;

	while ((got = getline(&h->line, &h->line_cap, f)) > 0) {
		char *sp, *hex;
		size_t n;

		h->lineno++;
		if (h->line[0] == '#' || h->line[0] == '\n')
			continue;
		sp = strchr(h->line, ' ');
		if (!sp || sp == h->line)
			return -1;
		*sp = 0;
		hex = sp + 1;
		n = strspn(hex, "0123456789abcdefABCDEF");
		if (hex[n] != '\n' && hex[n] != 0)
			return -1;
		if (n / 2 + 1 > h->buf_cap) {
			unsigned char *b = realloc(h->buf, n / 2 + 1);

			if (!b)
				return -1;
			h->buf = b;
			h->buf_cap = n / 2 + 1;
		}
		if (hex_decode(hex, n, h->buf) < 0)
			return -1;
		h->label = h->line;
		h->data = h->buf;
		h->len = n / 2;
		return 1;
	}
	return ferror(f) ? -1 : 0;
}

void hexline_free(struct hexline *h)
{
	free(h->line);
	free(h->buf);
	h->line = NULL;
	h->buf = NULL;
	h->line_cap = 0;
	h->buf_cap = 0;
}
