// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Streams: verbs semantics on top of out-of-order placement.
 *
 * What is the stream as a whole: attaching it to a connection, and its
 * error and teardown.  Its two halves have a file each: the requester
 * (requester.c) and the responder (responder.c).
 */
#include "internal.h"

void mroce_stream_init(struct mroce_stream *st, u32 id)
{
	memset(st, 0, sizeof(*st));
	mroce_stream_init_zeroed(st, id);
}

void mroce_stream_init_zeroed(struct mroce_stream *st, u32 id)
{
	st->id = id & MROCE_STREAM_MASK;
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
