// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * CRC-32C (Castagnoli, reflected polynomial 0x82f63b78): slice-by-8 in
 * C, or the SSE4.2 crc32 instruction where the CPU has it (the same
 * CRC; test_common checks both against known values).  Used by the
 * WCU.BUF images (libwcubuf) and the NAA's crc32c function (libnaaice).
 */
#include <pthread.h>
#include <string.h>

#include "snaa_crc32c.h"

#define CRC32C_POLY	0x82f63b78u

static uint32_t crc_tab[8][256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;
static int crc_hw;

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define SNAA_CRC_HAVE_HW 1
__attribute__((target("sse4.2")))
static uint32_t crc_update_hw(uint32_t crc, const uint8_t *p, size_t len)
{
	uint64_t c = crc;

	for (; len && ((uintptr_t)p & 7); len--)
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
	for (; len >= 8; len -= 8, p += 8) {
		uint64_t v;

		memcpy(&v, p, 8);
		c = __builtin_ia32_crc32di(c, v);
	}
	for (; len; len--)
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
	return (uint32_t)c;
}
#endif

static void crc_init(void)
{
	for (unsigned int i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = c & 1 ? c >> 1 ^ CRC32C_POLY : c >> 1;
		crc_tab[0][i] = c;
	}
	for (unsigned int i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			crc_tab[t][i] = crc_tab[t - 1][i] >> 8 ^
					crc_tab[0][crc_tab[t - 1][i] & 0xff];
#ifdef SNAA_CRC_HAVE_HW
	__builtin_cpu_init();
	crc_hw = __builtin_cpu_supports("sse4.2");
#endif
}

uint32_t snaa_crc32c_update_sw(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	pthread_once(&crc_once, crc_init);
	for (; len && ((uintptr_t)p & 7); len--)
		crc = crc >> 8 ^ crc_tab[0][(crc ^ *p++) & 0xff];
	for (; len >= 8; len -= 8, p += 8) {
		uint32_t lo = crc ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 |
				     (uint32_t)p[2] << 16 |
				     (uint32_t)p[3] << 24);

		crc = crc_tab[7][lo & 0xff] ^ crc_tab[6][lo >> 8 & 0xff] ^
		      crc_tab[5][lo >> 16 & 0xff] ^ crc_tab[4][lo >> 24] ^
		      crc_tab[3][p[4]] ^ crc_tab[2][p[5]] ^
		      crc_tab[1][p[6]] ^ crc_tab[0][p[7]];
	}
	for (; len; len--)
		crc = crc >> 8 ^ crc_tab[0][(crc ^ *p++) & 0xff];
	return crc;
}

int snaa_crc32c_hw_available(void)
{
	pthread_once(&crc_once, crc_init);
	return crc_hw;
}

uint32_t snaa_crc32c_update_hw(uint32_t crc, const void *buf, size_t len)
{
#ifdef SNAA_CRC_HAVE_HW
	if (snaa_crc32c_hw_available())
		return crc_update_hw(crc, buf, len);
#endif
	return snaa_crc32c_update_sw(crc, buf, len);
}

uint32_t snaa_crc32c_update(uint32_t crc, const void *buf, size_t len)
{
	return snaa_crc32c_update_hw(crc, buf, len);
}

uint32_t snaa_crc32c(const void *buf, size_t len)
{
	return ~snaa_crc32c_update(~0u, buf, len);
}
