/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* libwcubuf internals that the host tests reach as well. */
#ifndef WCUBUF_INT_H
#define WCUBUF_INT_H

#include <stddef.h>
#include <stdint.h>

/* The two CRC-32C implementations behind wcubuf_crc32c_update(). */
uint32_t wcubuf_crc32c_update_sw(uint32_t crc, const void *buf, size_t len);
/* SSE4.2 if the CPU has it, else the same as _sw */
uint32_t wcubuf_crc32c_update_hw(uint32_t crc, const void *buf, size_t len);
int wcubuf_crc32c_hw_available(void);

#endif /* WCUBUF_INT_H */
