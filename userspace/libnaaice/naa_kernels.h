/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The software NAA's function table.  Pure functions over byte buffers
 * (host-testable); naa-server runs them, naa-client runs them too to
 * know the expected result.
 *
 *   code  name     inputs                 result
 *   1     add      N >= 1 regions, equal  element-wise byte sum mod 256,
 *                  sizes                  same size
 *   2     sum      N >= 1 regions         u64 little-endian: sum of all
 *                                         input bytes (8 bytes)
 *   3     crc32c   N >= 1 regions         CRC-32C (Castagnoli) of the
 *                                         inputs in order, u32 LE (4)
 *   4     matmul   2 regions, n x n u32   C = A x B mod 2^32, n x n u32
 *                  little-endian each     little-endian
 *   5     inc      the result region as   each byte + 1, in place (what
 *                  the client wrote it    the public library's example
 *                  (spec wire only)       NAA does to the return region)
 */
#ifndef NAA_KERNELS_H
#define NAA_KERNELS_H

#include <stddef.h>
#include <stdint.h>

enum naa_fn {
	NAA_FN_ADD = 1,
	NAA_FN_SUM = 2,
	NAA_FN_CRC32C = 3,
	NAA_FN_MATMUL = 4,
	NAA_FN_INC = 5,
	NAA_FN_LAST = NAA_FN_INC,
};

/* Calculation errors, in the specification's 0x10-0x7f range. */
enum naa_calc_error {
	NAA_EUNKNOWN_FN = 0x10,	/* no such function code */
	NAA_ESHAPE = 0x11,	/* inputs/result do not fit the function */
};

struct naa_buf {
	uint8_t *p;
	size_t len;
};

const char *naa_fn_name(uint8_t fn);
/* Function code from a name or a number; 0 if unknown. */
uint8_t naa_fn_parse(const char *s);
/* Result size for n_in inputs of in_size bytes each; 0 if invalid. */
size_t naa_result_size(uint8_t fn, unsigned int n_in, size_t in_size);
/* Run @fn; returns 0 or an enum naa_calc_error. */
uint8_t naa_run(uint8_t fn, const struct naa_buf *in, unsigned int n_in,
		struct naa_buf *out);
uint32_t naa_crc32c(uint32_t crc, const uint8_t *p, size_t len);

#endif /* NAA_KERNELS_H */
