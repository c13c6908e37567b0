/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * snaa_crc32c - CRC-32C (Castagnoli), as iSCSI, SCTP and the WCU.BUF
 * images use it: reflected, initial value and final XOR ~0.
 *
 *     snaa_crc32c("123456789", 9) == 0xe3069283
 *
 * The _update functions work on the register without the inversions,
 * so that a CRC can be computed in pieces:
 *
 *     crc32c(a|b) == ~snaa_crc32c_update(snaa_crc32c_update(~0, a), b)
 *
 * Thread-safe (the tables are built once, on first use).
 */
#ifndef SNAA_CRC32C_H
#define SNAA_CRC32C_H

#include <stddef.h>
#include <stdint.h>

uint32_t snaa_crc32c(const void *buf, size_t len);
uint32_t snaa_crc32c_update(uint32_t crc, const void *buf, size_t len);

/* The two implementations behind snaa_crc32c_update(), for tests: */
/* slice-by-8 in C */
uint32_t snaa_crc32c_update_sw(uint32_t crc, const void *buf, size_t len);
/* the SSE4.2 instruction if the CPU has it, else the same as _sw */
uint32_t snaa_crc32c_update_hw(uint32_t crc, const void *buf, size_t len);
int snaa_crc32c_hw_available(void);

#endif /* SNAA_CRC32C_H */
