// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The emulator's side of the status channel (seed 3.1): the worker
 * table keyed by (GID, status QPN) and the answer to each request.
 * Pure logic; the data channel's QP comes from the tool's ops.
 */
#include <string.h>

#include "wcubuf.h"

void wcubuf_emu_init(struct wcubuf_emu *e, struct wcubuf_emu_worker *w,
		     unsigned int slots, uint32_t frame_size,
		     const struct wcubuf_emu_ops *ops, void *ctx)
{
	memset(e, 0, sizeof(*e));
	memset(w, 0, slots * sizeof(*w));
	for (unsigned int i = 0; i < slots; i++)
		w[i].slot = i;
	e->w = w;
	e->slots = slots;
	e->frame_size = frame_size;
	e->ops = ops;
	e->ctx = ctx;
}

struct wcubuf_emu_worker *wcubuf_emu_find(struct wcubuf_emu *e,
					  const uint8_t gid[16], uint32_t qpn)
{
	for (unsigned int i = 0; i < e->slots; i++)
		if (e->w[i].used && e->w[i].qpn == qpn &&
		    !memcmp(e->w[i].gid, gid, 16))
			return &e->w[i];
	return NULL;
}

void wcubuf_emu_seen(struct wcubuf_emu *e, struct wcubuf_emu_worker *w)
{
	w->last_seen = e->now;
}

unsigned int wcubuf_emu_count(const struct wcubuf_emu *e)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < e->slots; i++)
		n += e->w[i].used;
	return n;
}

static void data_down(struct wcubuf_emu *e, struct wcubuf_emu_worker *w)
{
	if (!w->data_up)
		return;
	if (e->ops && e->ops->data_down)
		e->ops->data_down(e->ctx, w);
	w->data_up = false;
	w->data_qpn = 0;
	w->emu_qpn = 0;
	w->rkey = 0;
}

static void remove_worker(struct wcubuf_emu *e, struct wcubuf_emu_worker *w)
{
	unsigned int slot = w->slot;

	data_down(e, w);
	memset(w, 0, sizeof(*w));
	w->slot = slot;
}

/*
 * The table is full: the worker silent longest, removed, if it has been
 * silent for e->idle_s; else NULL.
 */
static struct wcubuf_emu_worker *silent_worker(struct wcubuf_emu *e)
{
	struct wcubuf_emu_worker *old = NULL;

	if (e->idle_s <= 0)
		return NULL;
	for (unsigned int i = 0; i < e->slots; i++)
		if (!old || e->w[i].last_seen < old->last_seen)
			old = &e->w[i];
	if (!old || e->now - old->last_seen < e->idle_s)
		return NULL;
	remove_worker(e, old);
	e->reclaimed++;
	return old;
}

enum wcubuf_emu_result wcubuf_emu_handle(struct wcubuf_emu *e,
					 const uint8_t gid[16],
					 const struct wcubuf_status *req,
					 struct wcubuf_status *res,
					 uint32_t *reply_qkey)
{
	struct wcubuf_emu_worker *w = wcubuf_emu_find(e, gid, req->qpn);
	unsigned int i;

	if (req->method < WCUBUF_METHOD_NUM)
		e->requests[req->method]++;
	if (w)
		w->last_seen = e->now;
	*res = wcubuf_status_make(WCUBUF_STAT_RES);
	res->lid = req->lid;
	res->qpn = req->qpn;
	*reply_qkey = w && req->method != WCUBUF_STAT_REQ ? w->qkey : req->qkey;

	switch (req->method) {
	case WCUBUF_STAT_REQ:
		if (!w) {
			for (i = 0; i < e->slots && e->w[i].used; i++)
				;
			if (i == e->slots)
				w = silent_worker(e);
			else
				w = &e->w[i];
			if (!w) {
				e->ignored++;
				return WCUBUF_EMU_FULL;
			}
			w->used = true;
			memcpy(w->gid, gid, 16);
			w->qpn = req->qpn;
			w->last_seen = e->now;
		}
		/* a repeated STAT_REQ: the same answer, the newest Q_Key */
		w->lid = req->lid;
		w->qkey = req->qkey;
		res->method = WCUBUF_STAT_RES;
		return WCUBUF_EMU_REPLY;
	case WCUBUF_DATA_REQ:
		if (!w) {
			e->ignored++;
			return WCUBUF_EMU_NO_STATUS;
		}
		if (w->data_up && w->data_qpn != req->qkey)
			data_down(e, w);	/* a new data QP: start over */
		if (!w->data_up) {
			w->data_qpn = req->qkey;
			w->va_offs = wcubuf_va_offs(w->slot, e->frame_size);
			if (e->ops && e->ops->data_up &&
			    e->ops->data_up(e->ctx, w)) {
				w->data_qpn = 0;
				e->ignored++;
				return WCUBUF_EMU_DATA_FAILED;
			}
			w->data_up = true;
		}
		res->method = WCUBUF_DATA_RES;
		res->lid = w->emu_qpn;
		res->qkey = w->data_qpn;
		res->va = w->va_offs;
		res->rkey = w->rkey;
		return WCUBUF_EMU_REPLY;
	case WCUBUF_DATA_TERM:
		if (w)
			data_down(e, w);
		res->method = WCUBUF_DATA_DOWN;
		return WCUBUF_EMU_REPLY;
	case WCUBUF_STAT_TERM:
		if (w)
			remove_worker(e, w);
		res->method = WCUBUF_STAT_DOWN;
		return WCUBUF_EMU_REPLY;
	default:
		/* responses (odd methods) are not for the emulator */
		e->ignored++;
		return WCUBUF_EMU_IGNORE;
	}
}

void wcubuf_emu_clear(struct wcubuf_emu *e)
{
	for (unsigned int i = 0; i < e->slots; i++)
		if (e->w[i].used)
			remove_worker(e, &e->w[i]);
}
