// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Host unit tests of tests/lib/hexline.c, the hex reader behind the
 * rdma_rxe vectors (test_wire), the fuzz corpora (mkcorpus) and rawpkt's
 * --payload: what it accepts and, as much, what it refuses.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include "hexline.h"
#include "ktap.h"

static void test_decode(void)
{
	unsigned char b[8];

	memset(b, 0xee, sizeof(b));
	result(hex_decode("00aBcDfF", 8, b) == 4 &&
		       !memcmp(b, "\x00\xab\xcd\xff", 4) && b[4] == 0xee,
		    "hex_decode: 4 bytes, either case, nothing written beyond");
	result(hex_decode("", 0, b) == 0, "hex_decode: empty string");
	result(hex_decode("abc", 3, b) == -1,
		    "hex_decode: an odd number of digits is refused");
	result(hex_decode("0g", 2, b) == -1 &&
		       hex_decode("g0", 2, b) == -1 &&
		       hex_decode(" 1", 2, b) == -1,
		    "hex_decode: a character that is no digit is refused");
}

/* Reads @text; returns the number of inputs, or -(line) of an error. */
static long read_all(const char *text, char *labels, size_t cap,
		     size_t *bytes)
{
	struct hexline h = { 0 };
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	long n = 0;
	int rc;

	*labels = 0;
	*bytes = 0;
	if (!f)
		return -1000;
	while ((rc = hexline_read(f, &h)) > 0) {
		n++;
		*bytes += h.len;
		size_t l = strlen(labels);

		snprintf(labels + l, cap - l, "%s%s:%zu", n > 1 ? "," : "",
			 h.label, h.len);
	}
	if (rc < 0)
		n = -(long)h.lineno;
	hexline_free(&h);
	fclose(f);
	return n;
}

static void test_lines(void)
{
	char labels[256];
	size_t bytes;
	long n;

	n = read_all("# comment\n\nv4.A 0102\nv6.B.pad2 aabbccdd\n\nc 00",
		     labels, sizeof(labels), &bytes);
	result(n == 3 && !strcmp(labels, "v4.A:2,v6.B.pad2:4,c:1") &&
		       bytes == 7,
		    "comments and blank lines skipped, last line without "
		    "newline (%s)", labels);
	n = read_all("empty \n", labels, sizeof(labels), &bytes);
	result(n == 1 && !strcmp(labels, "empty:0"),
		    "a label with no bytes");
	result(read_all("a 01\nnospace\n", labels, sizeof(labels),
				&bytes) == -2,
		    "a line without a space is refused, with its line number");
	result(read_all(" 01\n", labels, sizeof(labels), &bytes) == -1,
		    "an empty label is refused");
	result(read_all("a 012\n", labels, sizeof(labels), &bytes) == -1,
		    "an odd number of digits is refused");
	result(read_all("#\na 01 # x\n", labels, sizeof(labels),
				&bytes) == -2,
		    "anything after the digits is refused");
	result(read_all("a 0x01\n", labels, sizeof(labels),
				&bytes) == -1,
		    "a 0x prefix is refused");
}

static void test_long_line(void)
{
	static char text[2 * 9000 + 16];
	char labels[64];
	size_t bytes, i;

	strcpy(text, "big ");
	for (i = 0; i < 9000; i++)
		memcpy(text + 4 + 2 * i, "5a", 2);
	strcpy(text + 4 + 2 * 9000, "\n");
	result(read_all(text, labels, sizeof(labels), &bytes) == 1 &&
		       bytes == 9000,
		    "a 9000-byte input (a jumbo frame) in one line");
}

int main(void)
{

	ktap_header("hexline");
	test_decode();
	test_lines();
	test_long_line();
	return ktap_finish();
}
