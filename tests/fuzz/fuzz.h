/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Shared bits of the libFuzzer targets in tests/fuzz/.
 *
 * A target checks an oracle with FUZZ_CHECK(); a failed check prints
 * what it expected and aborts, so that libFuzzer stops, prints the stack
 * and writes the input as a crash artifact (see run.sh).
 */
#ifndef SNAA_FUZZ_H
#define SNAA_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FZ_ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#define FUZZ_CHECK(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "oracle failed: %s:%d: %s: ",	\
				__FILE__, __LINE__, #cond);		\
			fprintf(stderr, __VA_ARGS__);			\
			fputc('\n', stderr);				\
			abort();					\
		}							\
	} while (0)

/* Big-endian reads of the fuzzer's own, independent of snaa_wire.h. */
static inline uint32_t fz_be(const uint8_t *p, unsigned int bytes)
{
	uint32_t v = 0;

	while (bytes--)
		v = v << 8 | *p++;
	return v;
}

static inline uint64_t fz_be64(const uint8_t *p)
{
	return (uint64_t)fz_be(p, 4) << 32 | fz_be(p + 4, 4);
}

/* The five IB MTUs, spelled out rather than computed. */
static const uint32_t fz_ib_mtus[5] = { 256, 512, 1024, 2048, 4096 };

static inline int fz_is_ib_mtu(uint32_t v)
{
	unsigned int i;

	for (i = 0; i < 5; i++)
		if (v == fz_ib_mtus[i])
			return 1;
	return 0;
}

#endif /* SNAA_FUZZ_H */
