// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The worker's frames in flight: which frame to put on the wire next,
 * and what an ACK/NACK or a timeout means for it (seed Table 3.4, the
 * precedence in wcubuf.h).  Pure logic on a clock the caller passes in.
 */
#include <string.h>

#include "wcubuf.h"

void wcubuf_tx_init(struct wcubuf_tx *tx, struct wcubuf_tx_frame *slot,
		    uint32_t inflight, uint64_t va_base, uint32_t frame_size,
		    uint64_t frames, uint32_t timeout_ms)
{
	memset(tx, 0, sizeof(*tx));
	memset(slot, 0, inflight * sizeof(*slot));
	tx->slot = slot;
	tx->inflight = inflight;
	tx->va_base = va_base;
	tx->frame_size = frame_size;
	tx->frames = frames;
	tx->timeout_ms = timeout_ms;
}

int wcubuf_tx_next(struct wcubuf_tx *tx, int64_t now)
{
	struct wcubuf_tx_frame *s;
	int i;

	for (uint64_t seq = tx->base; seq < tx->next; seq++) {
		i = (int)(seq % tx->inflight);
		s = &tx->slot[i];
		switch (s->state) {
		case WCUBUF_TXS_SEND:
			return i;
		case WCUBUF_TXS_WAIT_RETRY:
			if (s->deadline > now)
				break;
			s->state = WCUBUF_TXS_SEND;
			s->reason = WCUBUF_TX_WINDOW;
			return i;
		case WCUBUF_TXS_WAIT_ACK:
			if (s->deadline > now)
				break;
			if (++s->timeouts >= WCUBUF_TX_MAX_TIMEOUTS) {
				tx->fail_va = wcubuf_tx_va(tx, seq);
				tx->fail_events = 0;
				return -2;
			}
			s->state = WCUBUF_TXS_SEND;
			s->reason = WCUBUF_TX_TIMEOUT;
			return i;
		case WCUBUF_TXS_FREE:
			break;
		}
	}
	if (tx->next >= tx->frames || tx->next - tx->base >= tx->inflight)
		return -1;
	i = (int)(tx->next % tx->inflight);
	s = &tx->slot[i];
	memset(s, 0, sizeof(*s));
	s->state = WCUBUF_TXS_SEND;
	s->reason = WCUBUF_TX_NEW;
	s->seq = tx->next++;
	s->wait_ms = WCUBUF_TX_WAIT_MIN_MS;
	return i;
}

void wcubuf_tx_sent(struct wcubuf_tx *tx, int i, int64_t now)
{
	struct wcubuf_tx_frame *s = &tx->slot[i];

	s->sends++;
	tx->sent[s->reason]++;
	s->state = WCUBUF_TXS_WAIT_ACK;
	s->deadline = now + tx->timeout_ms;
}

/* The slot of the frame at @va if it is in flight, else NULL. */
static struct wcubuf_tx_frame *tx_find(struct wcubuf_tx *tx, uint64_t va)
{
	int64_t seq = wcubuf_frame_index(va, tx->va_base, tx->frame_size);
	struct wcubuf_tx_frame *s;

	if (seq < 0 || (uint64_t)seq < tx->base || (uint64_t)seq >= tx->next)
		return NULL;
	s = &tx->slot[(uint64_t)seq % tx->inflight];
	return s->state != WCUBUF_TXS_FREE && s->seq == (uint64_t)seq ? s :
									NULL;
}

enum wcubuf_tx_verdict wcubuf_tx_answer(struct wcubuf_tx *tx,
					const struct wcubuf_ack *a,
					int64_t now)
{
	struct wcubuf_tx_frame *s = tx_find(tx, a->va);

	if (a->type == WCUBUF_ACK) {
		if (!s || a->va == 0) {
			tx->stale++;
			return WCUBUF_TXV_STALE;
		}
		s->state = WCUBUF_TXS_FREE;
		tx->acks++;
		tx->acked++;
		while (tx->base < tx->next &&
		       tx->slot[tx->base % tx->inflight].state ==
				WCUBUF_TXS_FREE)
			tx->base++;
		return WCUBUF_TXV_ACKED;
	}

	tx->nacks++;
	for (unsigned int b = 0; b < WCUBUF_EV_NUM; b++)
		if (a->events & 1u << b)
			tx->nack_events[b]++;
	if (!(a->events & WCUBUF_EV_MASK))
		tx->nack_unknown++;
	/* An emulator that refuses our R_Key or addresses refuses them
	 * all: fatal whether or not the frame is still in flight. */
	if (a->events & WCUBUF_EV_FATAL) {
		tx->fail_va = a->va;
		tx->fail_events = a->events;
		return WCUBUF_TXV_FATAL;
	}
	if (a->va == 0) {
		tx->no_sof++;
		return WCUBUF_TXV_NO_SOF;
	}
	if (!s) {
		tx->stale++;
		return WCUBUF_TXV_STALE;
	}
	s->timeouts = 0;
	if (++s->nacks >= WCUBUF_TX_MAX_NACKS) {
		tx->fail_va = a->va;
		tx->fail_events = a->events;
		return WCUBUF_TXV_GIVE_UP;
	}
	if (a->events & 1u << WCUBUF_EV_WINDOW) {
		s->state = WCUBUF_TXS_WAIT_RETRY;
		s->deadline = now + s->wait_ms;
		s->wait_ms *= 2;
		if (s->wait_ms > WCUBUF_TX_WAIT_MAX_MS)
			s->wait_ms = WCUBUF_TX_WAIT_MAX_MS;
		return WCUBUF_TXV_WAIT;
	}
	s->state = WCUBUF_TXS_SEND;
	s->reason = WCUBUF_TX_NACK;
	return WCUBUF_TXV_RETRANSMIT;
}

int64_t wcubuf_tx_deadline(const struct wcubuf_tx *tx)
{
	int64_t d = INT64_MAX;

	for (uint64_t seq = tx->base; seq < tx->next; seq++) {
		const struct wcubuf_tx_frame *s =
			&tx->slot[seq % tx->inflight];

		if (s->state == WCUBUF_TXS_SEND)
			return INT64_MIN;
		if (s->state != WCUBUF_TXS_FREE && s->deadline < d)
			d = s->deadline;
	}
	return d;
}
