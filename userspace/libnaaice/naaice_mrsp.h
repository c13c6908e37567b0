/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * MRSP codec: the memory region setup protocol messages of the NAAICE
 * specification, section 2.  Byte order on the wire is big-endian and
 * the entries are not aligned: they start at byte 4.
 *
 *   header       type (1) | count (1) | padding (2)
 *   AAR entry    mrflags (1) | FPGA address (7, big-endian) |
 *                addr (8) | rkey (4) | size (4)         = 24 bytes
 *   A entry      addr (8) | rkey (4) | size (4)         = 16 bytes
 *   error        type = 0 (1) | code (1) | padding (2)  = 4 bytes
 *
 * Both wire generations share these layouts; only the meaning of the
 * flags differs (naaice.h).  Pure functions, no verbs: host-testable.
 */
#ifndef NAAICE_MRSP_H
#define NAAICE_MRSP_H

#include <stddef.h>
#include <stdint.h>

#define NAAICE_MRSP_HDR_LEN	4
#define NAAICE_MRSP_AAR_LEN	24
#define NAAICE_MRSP_A_LEN	16
#define NAAICE_MRSP_ERR_LEN	4
#define NAAICE_MRSP_MAX_COUNT	255
#define NAAICE_MRSP_BUF_LEN	(NAAICE_MRSP_HDR_LEN + \
				 NAAICE_MRSP_MAX_COUNT * NAAICE_MRSP_AAR_LEN)
#define NAAICE_FPGA_ADDR_MAX	((1ULL << 56) - 1)

struct naaice_mrsp_entry {
	uint8_t flags;		/* AAR only */
	uint64_t fpga_addr;	/* AAR only, 56 bits */
	uint64_t addr;
	uint32_t rkey;
	uint32_t size;
};

struct naaice_mrsp_msg {
	uint8_t type;		/* enum message_id */
	uint8_t count;		/* AAR, A */
	uint8_t code;		/* error */
	struct naaice_mrsp_entry e[NAAICE_MRSP_MAX_COUNT];
};

/* Encode @m into @buf; returns the length, or -1 if it does not fit or
 * the type is not one we send (0x00, 0x01, 0x02). */
int naaice_mrsp_encode(const struct naaice_mrsp_msg *m, uint8_t *buf,
		       size_t len);
/* Decode @len bytes; returns 0, or -1 if truncated or of unknown type. */
int naaice_mrsp_decode(const uint8_t *buf, size_t len,
		       struct naaice_mrsp_msg *m);

#endif /* NAAICE_MRSP_H */
