// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Streams: verbs semantics on top of out-of-order placement.
 *
 * What is the stream as a whole: attaching it to a connection, and its
 * error and teardown.  Its two halves have a file each: the requester
 * (requester.c) and the responder (responder.c).
 */
#include "internal.h"

void mroce_stream_init(struct mroce_stream *st, u32 id, void *ctx)
{
	memset(st, 0, sizeof(*st));
	mroce_stream_init_zeroed(st, id, ctx);
}

void mroce_stream_init_zeroed(struct mroce_stream *st, u32 id, void *ctx)
{
	st->id = id & MROCE_STREAM_MASK;
	st->ctx = ctx;
	st->state = MROCE_STREAM_IDLE;
	mroce_list_init(&st->node);
	mroce_list_init(&st->sched);
	mroce_list_init(&st->ackq);
	mroce_list_init(&st->waitq);
	mroce_list_init(&st->pollq);
}

int mroce_stream_attach(struct mroce_conn *c, struct mroce_stream *st,
			u32 peer, const struct mroce_stream_params *prm)
{
	if (st->state != MROCE_STREAM_IDLE || !prm->mss ||
	    (peer & ~MROCE_STREAM_MASK))
		return MROCE_ERR_INVAL;
	st->conn = c;
	st->peer = peer;
	st->prm = *prm;
	st->prm.mss = MROCE_MIN(prm->mss, c->cfg.mss);
	/* verbs allows 0, which would park every READ forever */
	st->prm.max_rd_atomic = MROCE_MIN(MROCE_MAX(prm->max_rd_atomic, 1),
					  MROCE_MAX_RD_ATOMIC);
	st->tx_una = prm->tx_msn;
	st->tx_next = prm->tx_msn;
	st->tx_end = prm->tx_msn;
	st->frontier = prm->tx_msn;
	st->rx_next = prm->rx_msn;
	st->state = MROCE_STREAM_ACTIVE;
	mroce_list_add_tail(&st->node, &c->streams);
	return 0;
}

int mroce_stream_set_tx_start(struct mroce_stream *st, u32 msn)
{
	if (st->state != MROCE_STREAM_ACTIVE || st->tx_end != st->tx_una ||
	    st->tx_end != st->prm.tx_msn)
		return MROCE_ERR_INVAL;
	st->prm.tx_msn = msn;
	st->tx_una = msn;
	st->tx_next = msn;
	st->tx_end = msn;
	st->frontier = msn;
	return 0;
}

/* ------------------------------------------------------------------ */
/* error and teardown                                                  */

void mroce_stream_flush(struct mroce_stream *st)
{
	struct mroce_conn *c = st->conn;
	struct mroce_txmsg *t;
	unsigned int i;

	if (!c)
		return;
	st->state = MROCE_STREAM_ERROR;
	while (st->tx_una != st->tx_end) {
		t = mroce_txmsg(st, st->tx_una);
		st->tx_una++;
		if (t->state == MROCE_TXM_FREE)
			continue;
		c->ops->send_done(c->ctx, st, t->m.cookie,
				  t->state == MROCE_TXM_DONE ? t->status :
							       MROCE_ERR_FLUSH);
		t->state = MROCE_TXM_FREE;
	}
	st->tx_next = st->tx_una;
	st->rd_inflight = 0;
	for (i = 0; i < MROCE_STREAM_WINDOW; i++) {
		struct mroce_rxmsg *r = &st->rx[i];

		if (r->state != MROCE_RXM_FREE && r->claimed) {
			struct mroce_recv_done rd = {
				.cookie = r->cookie,
				.op = r->op,
				.status = MROCE_ERR_FLUSH,
			};

			c->ops->recv_done(c->ctx, st, &rd);
		}
		r->state = MROCE_RXM_FREE;
		r->claimed = 0;
	}
	st->rnr_slots = 0;
	st->failing = 0;
	for (i = 0; i < MROCE_MAX_RD_ATOMIC; i++)
		st->resp[i].busy = 0;
	st->resp_count = 0;
	if (mroce_list_linked(&st->sched))
		mroce_list_del(&st->sched);
	if (mroce_list_linked(&st->waitq))
		mroce_list_del(&st->waitq);
	if (mroce_list_linked(&st->pollq))
		mroce_list_del(&st->pollq);
	st->poll_at = 0;
}

void mroce_stream_detach(struct mroce_stream *st)
{
	struct mroce_conn *c = st->conn;
	u32 i, psn;

	if (!c)
		return;
	/* forget every remembered packet of this stream */
	for (i = 0; i < c->npaths; i++) {
		struct mroce_path *p = &c->paths[i];

		for (psn = p->snd_una; psn != p->snd_nxt; psn++)
			if (mroce_path_ent(p, psn)->ref.st == st)
				mroce_path_ent(p, psn)->ref.st = NULL;
	}
	for (i = c->retx_head; i != c->retx_tail; i++)
		if (c->retx[i % c->retx_cap].st == st)
			c->retx[i % c->retx_cap].st = NULL;
	mroce_list_del(&st->node);
	if (mroce_list_linked(&st->sched))
		mroce_list_del(&st->sched);
	if (mroce_list_linked(&st->ackq))
		mroce_list_del(&st->ackq);
	if (mroce_list_linked(&st->waitq))
		mroce_list_del(&st->waitq);
	if (mroce_list_linked(&st->pollq))
		mroce_list_del(&st->pollq);
	st->conn = NULL;
	st->state = MROCE_STREAM_IDLE;
}

size_t mroce_stream_size(void)
{
	return sizeof(struct mroce_stream);
}

bool mroce_stream_pristine(const struct mroce_stream *st)
{
	return !st->touched;
}

bool mroce_stream_can_post(const struct mroce_stream *st)
{
	return st->tx_end - st->tx_una < MROCE_STREAM_WINDOW;
}

void *mroce_stream_get_ctx(const struct mroce_stream *st)
{
	return st->ctx;
}

u32 mroce_stream_get_id(const struct mroce_stream *st)
{
	return st->id;
}

enum mroce_stream_state mroce_stream_get_state(const struct mroce_stream *st)
{
	return (enum mroce_stream_state)st->state;
}

struct mroce_conn *mroce_stream_get_conn(const struct mroce_stream *st)
{
	return st->conn;
}

u32 mroce_stream_sq_outstanding(const struct mroce_stream *st)
{
	return MROCE_READ_ONCE(st->tx_end) - MROCE_READ_ONCE(st->tx_una);
}

void mroce_stream_get_stats(const struct mroce_stream *st,
			struct mroce_stream_stats *out)
{
	*out = st->stats;
}

void mroce_stream_set_requester(struct mroce_stream *st,
				const struct mroce_stream_params *prm)
{
	st->prm.rnr_retry = prm->rnr_retry;
	st->prm.retry_cnt = prm->retry_cnt;
	st->prm.ack_timeout_ns = prm->ack_timeout_ns;
	st->prm.max_rd_atomic = prm->max_rd_atomic;
	st->prm.rnr_delay_ns = prm->rnr_delay_ns;
}

void mroce_stream_get_info(const struct mroce_stream *st,
		       struct mroce_stream_info *out)
{
	memset(out, 0, sizeof(*out));
	out->id = st->id;
	out->peer = st->peer;
	out->state = st->state;
	out->failing = st->failing;
	out->resp_head = st->resp_head;
	out->resp_count = st->resp_count;
	out->sched = !mroce_list_empty(&st->sched);
	out->waiting = !mroce_list_empty(&st->waitq);
	out->polling = !mroce_list_empty(&st->pollq);
	out->rnr_slots = st->rnr_slots;
	out->tx_una = st->tx_una;
	out->tx_next = st->tx_next;
	out->tx_end = st->tx_end;
	out->rd_inflight = st->rd_inflight;
	out->frontier = st->frontier;
	out->rx_next = st->rx_next;
	out->poll_at = st->poll_at;
	out->wake_at = st->wake_at;
	out->stats = st->stats;
}

bool mroce_stream_get_txmsg_info(const struct mroce_stream *st, u32 msn,
			     struct mroce_txmsg_info *out)
{
	const struct mroce_txmsg *t = &st->tx[msn % MROCE_STREAM_WINDOW];

	if (msn - st->tx_una >= st->tx_end - st->tx_una)
		return false;
	out->msn = t->msn;
	out->len = t->m.len;
	out->sent = t->sent;
	out->acked = t->acked;
	out->resp = t->resp;
	out->resend_at = t->resend_at;
	out->op = t->m.op;
	out->state = t->state;
	out->acked_last = t->acked_last;
	out->attempt = t->attempt;
	out->rnr_left = t->rnr_left;
	out->retry_left = t->retry_left;
	return true;
}

bool mroce_stream_get_rxmsg_info(const struct mroce_stream *st, u32 msn,
			     struct mroce_rxmsg_info *out)
{
	const struct mroce_rxmsg *r = &st->rx[msn % MROCE_STREAM_WINDOW];

	if (r->state == MROCE_RXM_FREE)
		return false;
	out->msn = r->msn;
	out->total = r->total;
	out->got = r->got;
	out->op = r->op;
	out->state = r->state;
	out->attempt = r->attempt;
	out->claimed = r->claimed;
	out->status = r->status;
	return true;
}

void mroce_stream_prefetch_rx(const struct mroce_stream *st, const void *buf,
			      u32 len)
{
	struct mroce_wire_peek pk;

	mroce_prefetch(st);
	mroce_prefetch((const char *)st + 64);
	if (mroce_wire_peek(buf, len, &pk))
		mroce_prefetch(&st->rx[pk.msn % MROCE_STREAM_WINDOW]);
}
