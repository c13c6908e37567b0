/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Hex text for the host tests and test tools: hex strings, and the
 * "LABEL HEX" files that hold packets (the .hex files of
 * tests/unit/vectors/, whole Ethernet frames captured from rdma_rxe, and
 * of tests/fuzz/regress/, fuzz inputs).  One input per line:
 *
 *	# a comment line; blank lines are skipped too
 *	LABEL 0123abcd...
 *
 * LABEL is at least one character and no space; then one space, an even
 * number of hex digits (either case) and the end of the line.
 *
 * Used by tests/unit/test_wire.c, tests/fuzz/mkcorpus.c and
 * selftests/snaa/rawpkt.c.
 */
#ifndef SNAA_TESTS_HEXLINE_H
#define SNAA_TESTS_HEXLINE_H

#include <stddef.h>
#include <stdio.h>

/*
 * hex_decode() - decode the @n characters at @s, two hex digits a byte,
 * into @out (room for @n / 2 bytes).  Returns @n / 2, or -1 if @n is odd
 * or one of the characters is no hex digit.
 */
long hex_decode(const char *s, size_t n, unsigned char *out);

/* One input of a "LABEL HEX" file; zero it before the first read. */
struct hexline {
	char *label;		/* NUL-terminated, valid until the next read */
	unsigned char *data;	/* the bytes, valid until the next read */
	size_t len;		/* ... and how many */
	unsigned long lineno;	/* the input's line in the file, from 1 */
	/* the reader's buffers */
	char *line;
	size_t line_cap;
	unsigned char *buf;
	size_t buf_cap;
};

/*
 * hexline_read() - read the next input of @f into @h.  Returns 1, 0 at
 * the end of the file, or -1 for a line that is not "LABEL HEX" (or no
 * memory); @h->lineno says which.
 */
int hexline_read(FILE *f, struct hexline *h);

/* Free the reader's buffers; @h may be read into again after. */
void hexline_free(struct hexline *h);

#endif /* SNAA_TESTS_HEXLINE_H */
