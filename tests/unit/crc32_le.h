/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Portable stand-in for the kernel's crc32_le(): the reflected CRC-32
 * with polynomial 0xedb88320, no pre- or post-inversion, continuing
 * from @seed.  Matches snaa_crc32_fn for the ICRC helpers.
 */
#ifndef SNAA_TEST_CRC32_LE_H
#define SNAA_TEST_CRC32_LE_H

#include <stddef.h>
#include <linux/types.h>

static inline __u32 test_crc32_le(__u32 seed, const void *p, size_t len)
{
	static __u32 table[256];
	static int ready;
	const unsigned char *b = p;
	__u32 crc = seed;
	size_t i;

	if (!ready) {
		for (i = 0; i < 256; i++) {
			__u32 c = (__u32)i;
			int k;

			for (k = 0; k < 8; k++)
				c = (c >> 1) ^ (c & 1 ? 0xedb88320u : 0);
			table[i] = c;
		}
		ready = 1;
	}
	for (i = 0; i < len; i++)
		crc = (crc >> 8) ^ table[(crc ^ b[i]) & 0xff];
	return crc;
}

/* Bit-at-a-time version, to cross-check the table. */
static inline __u32 test_crc32_le_bitwise(__u32 seed, const void *p,
					  size_t len)
{
	const unsigned char *b = p;
	__u32 crc = seed;
	size_t i;
	int k;

	for (i = 0; i < len; i++) {
		crc ^= b[i];
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (crc & 1 ? 0xedb88320u : 0);
	}
	return crc;
}

#endif /* SNAA_TEST_CRC32_LE_H */
