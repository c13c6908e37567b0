/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libwcubuf: the WCU.BUF streaming protocol (seed 000, "IMS Streaming
 * Protocol" 2.2, protocol version 1.1) as pure, host-testable logic:
 * the status and ACK/NACK codecs, the write-window arithmetic, CRC-32C,
 * the 4-bit and 6-bit image mappings, the emulator's status-channel
 * state machine (its worker table) and the worker's retransmit
 * bookkeeping.  No verbs in here: wcubuf-emu and wcubuf-send add them.
 *
 * ---- Decisions (our reading of the seed; Documentation/wcubuf.rst) ----
 *
 * Byte order of the status and ACK/NACK packets.  The seed's Tables 3.1
 * and 3.5 number the bytes of each 32-bit word little-endian, so every
 * word is little-endian on the wire:
 *
 *   status packet, 28 bytes (Table 3.1)
 *     0-3    method (bits 7-0) | reserved (15-8) | minor (23-16) |
 *            major (31-24)                  e.g. 05 00 01 01 = DATA_RES 1.1
 *     4-7    LID        8-11  QPN           12-15 QKEY or QPND
 *     16-19  VA[31:0]   20-23 VA[63:32]     24-27 RKEY
 *   ACK/NACK packet, 16 bytes (Table 3.5)
 *     0-3 type (0 ACK, 1 NACK)   4-7 event bits (Table 3.7)
 *     8-11 VA[31:0]              12-15 VA[63:32]   (VA 0: "no SOF")
 *
 * Version.  The emulator sends 1.1 in every packet; workers send 1.1
 * too (the emulator ignores the version of requests, as the seed's
 * firmware ignores "all other fields").  A worker refuses a response
 * whose major version is not 1.
 *
 * Addressing on RoCE.  There are no LIDs: a worker sends LID 0 and is
 * identified by (source GID from the GRH of its UD packets, the QPN
 * field of its status packets).  The emulator's status channel is a UD
 * QP with the fixed QPN 64 and Q_Key 0x57430000 (SNAA_WCUBUF_STATUS_*);
 * its GID is the IPv4-mapped (or IPv6) address of its netdev.  Workers
 * use Q_Key WCUBUF_WORKER_QKEY for their own status QP and put it in
 * the QKEY field of STAT_REQ; every response goes to the QPN and Q_Key
 * of the request it answers.  Responses echo LID and QPN.
 *
 * DATA_RES: QPND = the worker's data QPN (echo, as the seed says),
 * VA = VA_OFFS (non-zero, a multiple of the frame size: (slot + 1) *
 * 2^40 rounded down to a multiple of F, so each worker slot has its own
 * VA range), RKEY = the R_Key of the ring, and the LID word carries the
 * emulator's data QPN (RoCE has no LID, and the seed never tells the
 * worker the board's data QPN).  The data channel starts at PSN 0 in
 * both directions; its path MTU is the largest the link carries, at
 * most 4096.  STAT_RES, DATA_DOWN and STAT_DOWN carry LID and QPN and
 * zeros elsewhere.
 *
 * The emulator answers repeated requests idempotently (the worker lost
 * the response): a second STAT_REQ or DATA_REQ from the same worker gets
 * the same answer (a DATA_REQ with a different QPND replaces the data
 * channel); DATA_TERM and STAT_TERM from a worker it does not know (or
 * without a data channel) are answered with DATA_DOWN / STAT_DOWN.  A
 * DATA_REQ from a worker without a status channel and any request when
 * the worker table is full are not answered (the seed has no error
 * response): the worker's retries run out and it says so.
 *
 * Image data (seed section 4).  An image is a 64-byte header followed
 * by 256 columns of 256 pixels:
 *     0-3    CRC-32C, big-endian (section 4.3: big endian in the word)
 *     4-7    zero
 *     8-15   the image's own VA, big-endian
 *     16-63  zero
 *     64-    column 0 pixel 0 .. 255, column 1, ...
 *   6-bit: one pixel per byte, bits 5-0, bits 7-6 zero (65600 bytes)
 *   4-bit: two pixels per byte, the even pixel in bits 3-0, the odd one
 *          in bits 7-4 (the bit order is little-endian), 32832 bytes
 * The CRC-32C (Castagnoli, reflected, init ~0, final xor ~0: the iSCSI
 * CRC) covers bytes 4 .. end of the image, everything after the CRC
 * field.  A frame of F bytes holds floor(F / image size) images back to
 * back from its start, the rest is zero; an image's VA is the frame's VA
 * plus its offset.  Pixels are synthetic: wcubuf_pixel(va, i) of the
 * image's VA and the pixel index i = column * 256 + row, so that a
 * receiver can check every pixel.
 *
 * Worker reaction to an ACK/NACK (Table 3.4; several bits at once: the
 * strongest wins, in this order):
 *   invalid R_Key (3) or VA (8)     report, stop (fatal)
 *   outside window (2)              retransmit after a wait: 1 ms,
 *                                   doubling per NACK of that frame, at
 *                                   most 100 ms
 *   receive errors (0, 1, 4-7, 9-11) and a NACK without a known bit
 *                                   retransmit at once
 *   NACK with VA 0 ("no SOF")       matches no frame: counted; the
 *                                   frame whose start was lost times out
 *   ACK/NACK for a VA not in flight a late or duplicated answer: counted,
 *                                   ignored
 *   no answer within the timeout    retransmit; the worker gives up on a
 *                                   frame after WCUBUF_TX_MAX_TIMEOUTS
 *                                   timeouts in a row, or after
 *                                   WCUBUF_TX_MAX_NACKS NACKs in a row
 * Frame k of a stream has VA VA_OFFS + k * F and lives in slot k % N of
 * the N = --inflight slots: a new frame starts only when the frame N
 * before it is ACKed, so ACKs may come in any order but no more than N
 * frames are ever unanswered.  A retransmit is the same WRITE again
 * (same VA, same bytes); the receiver ACKs a frame it already has
 * without writing it (snaadv.h "duplicates"), so a lost ACK costs one
 * retransmit and no data.
 *
 * The data channel's frame size is not negotiated (the seed has no
 * field for it): worker and emulator are configured with the same F; a
 * mismatch shows as frame-length or VA NACKs.
 */
#ifndef WCUBUF_H
#define WCUBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The ACK/NACK numbers and the status channel's address (snaa's ABI) */
#include <rdma/snaa-abi.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- status channel (Tables 3.1, 3.2) ------------------------------------ */

#define WCUBUF_VERSION_MAJOR	1
#define WCUBUF_VERSION_MINOR	1
#define WCUBUF_STATUS_LEN	28
#define WCUBUF_STATUS_QPN	SNAA_WCUBUF_STATUS_QPN		/* 64 */
#define WCUBUF_STATUS_QKEY	SNAA_WCUBUF_STATUS_QKEY		/* 0x57430000 */
#define WCUBUF_WORKER_QKEY	0x57430001u	/* a worker's status QP */
#define WCUBUF_GRH_LEN		40		/* UD receive: the GRH area */

enum wcubuf_method {
	WCUBUF_STAT_REQ		= 0,
	WCUBUF_STAT_RES		= 1,
	WCUBUF_STAT_TERM	= 2,
	WCUBUF_STAT_DOWN	= 3,
	WCUBUF_DATA_REQ		= 4,
	WCUBUF_DATA_RES		= 5,
	WCUBUF_DATA_TERM	= 6,
	WCUBUF_DATA_DOWN	= 7,
	WCUBUF_METHOD_NUM	= 8,
};

struct wcubuf_status {
	uint8_t method;		/* enum wcubuf_method */
	uint8_t reserved;
	uint8_t minor;
	uint8_t major;
	uint32_t lid;		/* DATA_RES: the emulator's data QPN */
	uint32_t qpn;		/* the worker's status QPN */
	uint32_t qkey;		/* QKEY (STAT_REQ) or QPND (DATA_REQ/RES) */
	uint64_t va;		/* DATA_RES: VA_OFFS */
	uint32_t rkey;		/* DATA_RES: the ring's R_Key */
};

/* Decode results (negative) */
enum {
	WCUBUF_ESHORT	= -1,	/* fewer bytes than the packet has */
	WCUBUF_EMETHOD	= -2,	/* unknown method / ACK type */
	WCUBUF_EVERSION	= -3,	/* major version not WCUBUF_VERSION_MAJOR */
};

/* "STAT_REQ" .. "DATA_DOWN", "method N" for others (static buffer). */
const char *wcubuf_method_name(unsigned int method);

/* A status packet with method @m and version 1.1, zeros elsewhere. */
struct wcubuf_status wcubuf_status_make(enum wcubuf_method m);

/* Encode into @buf; returns WCUBUF_STATUS_LEN, or WCUBUF_ESHORT. */
int wcubuf_status_encode(const struct wcubuf_status *s, uint8_t *buf,
			 size_t len);
/*
 * Decode @len bytes (more than 28 are fine: UD receives may carry
 * padding); returns 0, WCUBUF_ESHORT or WCUBUF_EMETHOD.  The version is
 * not checked here (requests' versions are ignored): see
 * wcubuf_status_answers().
 */
int wcubuf_status_decode(const uint8_t *buf, size_t len,
			 struct wcubuf_status *s);

/*
 * Does @res answer the request @req the worker sent?  1 yes; 0 no (a
 * late answer to an earlier request, someone else's: ignore it);
 * WCUBUF_EVERSION if it would but its major version is not 1.
 */
int wcubuf_status_answers(const struct wcubuf_status *req,
			  const struct wcubuf_status *res);

/*
 * The source and destination GIDs of a UD receive's 40-byte GRH area:
 * an IPv6 header, or (RoCEv2 over IPv4) 20 bytes and then the IPv4
 * header, whose addresses become IPv4-mapped GIDs.  Returns 0, or -1 if
 * the area holds neither.
 */
int wcubuf_grh_gids(const uint8_t grh[WCUBUF_GRH_LEN], uint8_t sgid[16],
		    uint8_t dgid[16]);

/* ---- ACK/NACK (Tables 3.5 - 3.7) ------------------------------------------ */

#define WCUBUF_ACK_LEN		SNAA_WCUBUF_ACK_BYTES	/* 16 */
#define WCUBUF_ACK		SNAA_WCUBUF_ACK		/* 0 */
#define WCUBUF_NACK		SNAA_WCUBUF_NACK	/* 1 */

/* Event bits (Table 3.7): snaa-abi.h's numbers under this API's names */
enum wcubuf_event {
	WCUBUF_EV_SEQUENCE	= SNAA_WCUBUF_EV_SEQUENCE,
	WCUBUF_EV_PARITY	= SNAA_WCUBUF_EV_PARITY,
	WCUBUF_EV_WINDOW	= SNAA_WCUBUF_EV_WINDOW,
	WCUBUF_EV_RKEY		= SNAA_WCUBUF_EV_RKEY,
	WCUBUF_EV_FRAME_LEN	= SNAA_WCUBUF_EV_FRAME_LEN,
	WCUBUF_EV_PACKET_LEN	= SNAA_WCUBUF_EV_PACKET_LEN,
	WCUBUF_EV_EBF		= SNAA_WCUBUF_EV_EBF,
	WCUBUF_EV_EBP		= SNAA_WCUBUF_EV_EBP,
	WCUBUF_EV_VA		= SNAA_WCUBUF_EV_VA,
	WCUBUF_EV_NO_SOF	= SNAA_WCUBUF_EV_NO_SOF,
	WCUBUF_EV_ECC_CORR	= SNAA_WCUBUF_EV_ECC_CORR,
	WCUBUF_EV_ECC_UNCORR	= SNAA_WCUBUF_EV_ECC_UNCORR,
	WCUBUF_EV_NUM		= SNAA_WCUBUF_EV_NUM,
};

#define WCUBUF_EV_MASK		((1u << WCUBUF_EV_NUM) - 1)
#define WCUBUF_EV_FATAL		(1u << WCUBUF_EV_RKEY | 1u << WCUBUF_EV_VA)
#define WCUBUF_EV_RECEIVE	(WCUBUF_EV_MASK & ~WCUBUF_EV_FATAL & \
				 ~(1u << WCUBUF_EV_WINDOW))

struct wcubuf_ack {
	uint32_t type;		/* WCUBUF_ACK or WCUBUF_NACK */
	uint32_t events;	/* 1 << enum wcubuf_event */
	uint64_t va;		/* the frame's VA; 0 for "no SOF" */
};

/* Short names as the summaries print them: "sequence", "window", ... */
const char *wcubuf_event_name(unsigned int bit);
/* "window+ebp" for a set of bits ("none" if 0); returns @buf. */
char *wcubuf_events_str(uint32_t events, char *buf, size_t len);

int wcubuf_ack_encode(const struct wcubuf_ack *a, uint8_t *buf, size_t len);
/* 0, WCUBUF_ESHORT, or WCUBUF_EMETHOD (type neither 0 nor 1). */
int wcubuf_ack_decode(const uint8_t *buf, size_t len, struct wcubuf_ack *a);

/* ---- the write window (section 3.2.2) -------------------------------------- */

/*
 * Frame VAs are va_base + k * F (mod 2^64); the ring of R bytes makes
 * VA v land at ring offset (v - va_base) mod R; the write window is
 * [rp, rp + R - F) in VA space, all of it modulo 2^64.  The arithmetic
 * is the kernel receiver's own (snaa_wcubuf_proto.c, built into this
 * library).
 */
bool wcubuf_in_window(uint64_t va, uint64_t rp, uint64_t ring, uint64_t frame);
uint64_t wcubuf_ring_offset(uint64_t va, uint64_t va_base, uint64_t ring);
uint64_t wcubuf_frame_va(uint64_t va_base, uint64_t frame, uint64_t k);

/* The frame number of @va, or -1 if @va is no frame start. */
int64_t wcubuf_frame_index(uint64_t va, uint64_t va_base, uint64_t frame);

/* The VA_OFFS of worker slot @slot for frames of @frame bytes. */
uint64_t wcubuf_va_offs(unsigned int slot, uint32_t frame);

/* ---- CRC-32C ----------------------------------------------------------------- */

/* CRC-32C of @len bytes (init ~0, final xor ~0): "123456789" -> e3069283 */
uint32_t wcubuf_crc32c(const void *p, size_t len);
/* The raw register update, for a CRC in pieces:
 * crc32c(a|b) == ~wcubuf_crc32c_update(wcubuf_crc32c_update(~0, a), b) */
uint32_t wcubuf_crc32c_update(uint32_t crc, const void *p, size_t len);

/* ---- images (section 4) -------------------------------------------------------- */

enum wcubuf_image_kind {
	WCUBUF_IMAGE_6BIT	= 0,
	WCUBUF_IMAGE_4BIT	= 1,
};

#define WCUBUF_IMAGE_HDR	64
#define WCUBUF_IMAGE_COLS	256
#define WCUBUF_IMAGE_ROWS	256
#define WCUBUF_IMAGE_6BIT_LEN	(WCUBUF_IMAGE_HDR + 256 * 256)	/* 65600 */
#define WCUBUF_IMAGE_4BIT_LEN	(WCUBUF_IMAGE_HDR + 256 * 128)	/* 32832 */

/* "4bit"/"6bit" -> kind; -1 if neither. */
int wcubuf_image_parse(const char *s);
const char *wcubuf_image_name(enum wcubuf_image_kind kind);
size_t wcubuf_image_size(enum wcubuf_image_kind kind);

/* Pixel @i (column * 256 + row) of the image at @va, before masking to
 * 6 or 4 bits. */
static inline uint8_t wcubuf_pixel(uint64_t va, unsigned int i)
{
	uint32_t h = (uint32_t)(va >> 6) * 0x9e3779b1u ^ (uint32_t)(va >> 38);

	h += i * 0x85ebca77u;
	return (uint8_t)(h >> 24 ^ h >> 11);
}

/* Write the image at @va (wcubuf_image_size() bytes) into @img. */
void wcubuf_image_fill(void *img, enum wcubuf_image_kind kind, uint64_t va);

enum wcubuf_image_error {
	WCUBUF_IMG_OK		= 0,
	WCUBUF_IMG_CRC		= 1,	/* the CRC does not match the data */
	WCUBUF_IMG_VA		= 2,	/* CRC fine, the wrong VA inside */
	WCUBUF_IMG_PADDING	= 3,	/* CRC fine, non-zero padding (bits) */
	WCUBUF_IMG_PIXEL	= 4,	/* CRC fine, a pixel differs */
	WCUBUF_IMG_TAIL		= 5,	/* frame: non-zero after the images */
	WCUBUF_IMG_LENGTH	= 6,	/* frame: not F bytes */
};

struct wcubuf_image_report {
	enum wcubuf_image_error error;
	size_t offset;		/* in the frame (or image): first bad byte */
	uint64_t va;		/* the VA the image should have */
	uint64_t got_va;	/* the VA it carries */
	uint32_t crc;		/* the CRC it carries */
	uint32_t want_crc;	/* the CRC of its bytes 4.. */
};

const char *wcubuf_image_error_str(enum wcubuf_image_error e);

/* Check the image at @img for VA @va: CRC first, then VA, padding and
 * every pixel.  Returns the error (@rep, if not NULL, says where). */
enum wcubuf_image_error wcubuf_image_check(const void *img,
					   enum wcubuf_image_kind kind,
					   uint64_t va,
					   struct wcubuf_image_report *rep);

/* Images per frame of @frame bytes (0 if not even one fits). */
size_t wcubuf_frame_images(size_t frame, enum wcubuf_image_kind kind);
/* Fill a frame of @frame bytes at @va: images, then zeros. */
void wcubuf_frame_fill(void *buf, size_t frame, enum wcubuf_image_kind kind,
		       uint64_t va);
/* Check @len bytes received as the frame at @va (want @frame bytes). */
enum wcubuf_image_error wcubuf_frame_check(const void *buf, size_t len,
					   size_t frame,
					   enum wcubuf_image_kind kind,
					   uint64_t va,
					   struct wcubuf_image_report *rep);

/* ---- emulator: the status channel's worker table --------------------------------- */

struct wcubuf_emu_worker {
	bool used;
	uint8_t gid[16];	/* source GID of its status packets */
	uint32_t qpn;		/* its status QPN  } the key */
	uint32_t lid;		/* echoed */
	uint32_t qkey;		/* its status Q_Key (the last STAT_REQ's) */
	bool data_up;		/* data channel set up */
	uint32_t data_qpn;	/* its data QPN (QPND) */
	uint32_t emu_qpn;	/* our data QPN (DATA_RES LID) */
	uint32_t rkey;		/* DATA_RES RKEY */
	uint64_t va_offs;	/* DATA_RES VA */
	unsigned int slot;	/* its index in the table */
	void *priv;		/* the tool's resources */
	double last_seen;	/* wcubuf_emu.now at its last sign of life */
};

/*
 * What the table needs from the tool: setting up a data channel (fill
 * w->emu_qpn and w->rkey; w->va_offs, w->data_qpn and w->gid are set;
 * return 0, or an errno value: no answer) and tearing it down.
 */
struct wcubuf_emu_ops {
	int (*data_up)(void *ctx, struct wcubuf_emu_worker *w);
	void (*data_down)(void *ctx, struct wcubuf_emu_worker *w);
};

struct wcubuf_emu {
	struct wcubuf_emu_worker *w;
	unsigned int slots;
	uint32_t frame_size;
	const struct wcubuf_emu_ops *ops;
	void *ctx;
	/*
	 * The tool's clock (seconds), set before each wcubuf_emu_handle();
	 * every request a worker sends, and every frame the tool sees from
	 * it (wcubuf_emu_seen()), is a sign of life.  A STAT_REQ that finds
	 * the table full takes the slot of the worker silent longest if that
	 * one has been silent for @idle_s seconds (0: never): a worker that
	 * died without STAT_TERM does not keep its slot for ever.
	 */
	double now;
	double idle_s;
	uint64_t reclaimed;			/* slots taken from the silent */
	/* what happened, for the log */
	uint64_t requests[WCUBUF_METHOD_NUM];	/* received, by method */
	uint64_t ignored;			/* not answered */
};

/* @w: @slots entries, zeroed by this. */
void wcubuf_emu_init(struct wcubuf_emu *e, struct wcubuf_emu_worker *w,
		     unsigned int slots, uint32_t frame_size,
		     const struct wcubuf_emu_ops *ops, void *ctx);

/* The worker (gid, qpn), or NULL. */
struct wcubuf_emu_worker *wcubuf_emu_find(struct wcubuf_emu *e,
					  const uint8_t gid[16], uint32_t qpn);

/* A sign of life of @w (a frame arrived) at e->now. */
void wcubuf_emu_seen(struct wcubuf_emu *e, struct wcubuf_emu_worker *w);

/* Workers in the table. */
unsigned int wcubuf_emu_count(const struct wcubuf_emu *e);

enum wcubuf_emu_result {
	WCUBUF_EMU_REPLY	= 0,	/* send *@res back */
	WCUBUF_EMU_IGNORE	= 1,	/* a response method: not for us */
	WCUBUF_EMU_NO_STATUS	= 2,	/* DATA_REQ without STAT_REQ */
	WCUBUF_EMU_FULL		= 3,	/* the worker table is full */
	WCUBUF_EMU_DATA_FAILED	= 4,	/* ops->data_up failed */
};

/*
 * Handle the status packet @req from source GID @gid.  On
 * WCUBUF_EMU_REPLY, @res is the answer, to be sent to QPN @req->qpn
 * with Q_Key *@reply_qkey (the worker's recorded one; the request's
 * QKEY field for STAT_REQ and for workers not in the table).
 */
enum wcubuf_emu_result wcubuf_emu_handle(struct wcubuf_emu *e,
					 const uint8_t gid[16],
					 const struct wcubuf_status *req,
					 struct wcubuf_status *res,
					 uint32_t *reply_qkey);

/* Remove every worker (data_down first): the emulator is ending. */
void wcubuf_emu_clear(struct wcubuf_emu *e);

/* ---- worker: frames in flight and retransmits -------------------------------------- */

#define WCUBUF_TX_WAIT_MIN_MS	1	/* outside window: first wait */
#define WCUBUF_TX_WAIT_MAX_MS	100	/* ... doubling up to this */
#define WCUBUF_TX_MAX_TIMEOUTS	5	/* a frame unanswered this often: give up */
#define WCUBUF_TX_MAX_NACKS	1000	/* NACKed this often in a row: give up */

enum wcubuf_tx_reason {
	WCUBUF_TX_NEW		= 0,	/* first transmission */
	WCUBUF_TX_NACK		= 1,	/* receive error NACK */
	WCUBUF_TX_WINDOW	= 2,	/* outside window, after the wait */
	WCUBUF_TX_TIMEOUT	= 3,	/* no answer in time */
	WCUBUF_TX_REASON_NUM	= 4,
};

enum wcubuf_tx_state {
	WCUBUF_TXS_FREE		= 0,
	WCUBUF_TXS_SEND		= 1,	/* to be (re)sent now */
	WCUBUF_TXS_WAIT_ACK	= 2,	/* sent; deadline: the timeout */
	WCUBUF_TXS_WAIT_RETRY	= 3,	/* NACKed "window"; deadline: retry */
};

struct wcubuf_tx_frame {
	enum wcubuf_tx_state state;
	enum wcubuf_tx_reason reason;	/* why the next send happens */
	uint64_t seq;			/* frame number */
	int64_t deadline;		/* ms */
	uint32_t wait_ms;		/* the next window wait */
	uint32_t sends;			/* transmissions so far */
	uint32_t timeouts;		/* in a row */
	uint32_t nacks;			/* in a row */
};

struct wcubuf_tx {
	struct wcubuf_tx_frame *slot;	/* frame seq lives in slot seq % n */
	uint32_t inflight;		/* slots */
	uint64_t va_base;
	uint32_t frame_size;
	uint64_t frames;		/* to send in all */
	uint32_t timeout_ms;
	uint64_t base;			/* oldest frame not ACKed */
	uint64_t next;			/* next new frame */
	uint64_t acked;			/* frames ACKed */
	/* statistics */
	uint64_t sent[WCUBUF_TX_REASON_NUM];	/* transmissions by reason */
	uint64_t acks;			/* ACKs matched to a frame */
	uint64_t nacks;			/* NACKs received (all) */
	uint64_t nack_events[WCUBUF_EV_NUM];	/* NACKs with each bit */
	uint64_t nack_unknown;		/* NACKs with bits 12-31 only or none */
	uint64_t no_sof;		/* NACKs with VA 0 */
	uint64_t stale;			/* ACK/NACK for no frame in flight */
	/* set with WCUBUF_TXV_FATAL / _GIVE_UP */
	uint64_t fail_va;
	uint32_t fail_events;
};

enum wcubuf_tx_verdict {
	WCUBUF_TXV_ACKED	= 0,	/* the frame is done */
	WCUBUF_TXV_RETRANSMIT	= 1,	/* it will be resent at once */
	WCUBUF_TXV_WAIT		= 2,	/* ... after a wait */
	WCUBUF_TXV_STALE	= 3,	/* answers no frame in flight */
	WCUBUF_TXV_NO_SOF	= 4,	/* NACK with VA 0 */
	WCUBUF_TXV_FATAL	= 5,	/* invalid R_Key or VA: stop */
	WCUBUF_TXV_GIVE_UP	= 6,	/* too many NACKs in a row */
};

/* @slot: @inflight entries, zeroed by this. */
void wcubuf_tx_init(struct wcubuf_tx *tx, struct wcubuf_tx_frame *slot,
		    uint32_t inflight, uint64_t va_base, uint32_t frame_size,
		    uint64_t frames, uint32_t timeout_ms);

static inline uint64_t wcubuf_tx_va(const struct wcubuf_tx *tx, uint64_t seq)
{
	return wcubuf_frame_va(tx->va_base, tx->frame_size, seq);
}

/*
 * The next frame to put on the wire at time @now (ms): a retransmit that
 * is due (a NACK, a window wait over, a timeout: oldest first), else a
 * new frame if one is left and its slot is free.  Returns the slot index
 * (the frame is tx->slot[i].seq; .sends == 0: new, fill it first; .reason
 * says why), or -1 if nothing is to be sent now, or -2 if a frame timed
 * out WCUBUF_TX_MAX_TIMEOUTS times in a row (tx->fail_va: give up).
 * Call wcubuf_tx_sent() once it is posted.
 */
int wcubuf_tx_next(struct wcubuf_tx *tx, int64_t now);

/* Slot @i was posted at time @now: wait for its answer. */
void wcubuf_tx_sent(struct wcubuf_tx *tx, int i, int64_t now);

/* An ACK/NACK arrived at time @now: what it means for its frame. */
enum wcubuf_tx_verdict wcubuf_tx_answer(struct wcubuf_tx *tx,
					const struct wcubuf_ack *a,
					int64_t now);

/* Every frame ACKed. */
static inline bool wcubuf_tx_done(const struct wcubuf_tx *tx)
{
	return tx->acked == tx->frames;
}

/* The earliest deadline of a frame in flight (ms): INT64_MIN if one is
 * to be sent now, INT64_MAX if none waits for anything. */
int64_t wcubuf_tx_deadline(const struct wcubuf_tx *tx);

#ifdef __cplusplus
}
#endif

#endif /* WCUBUF_H */
