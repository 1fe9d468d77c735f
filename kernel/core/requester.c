// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A stream's requester: the messages posted to it, their packets and
 * their completions.
 *
 * Messages are numbered (msn) as they are posted and packetised in order;
 * their packets may arrive in any order.  A SEND/WRITE completes when the
 * peer's frontier (reported in ACK stream entries) passes it, a READ when
 * all its response bytes are placed, an ATOMIC when its response arrives.
 * Completions are handed to the caller strictly in msn order.
 *
 * The stream sends from here what the responder (responder.c) owes as
 * well: its READ/ATOMIC response jobs go out first, and their packets
 * are acknowledged like the requester's own.
 */
#include "internal.h"

#define RNR_FOREVER	7

u8 mroce_refusal_wc(u8 err)
{
	switch (err) {
	case MROCE_OK:
		return MROCE_OK;
	case MROCE_ERR_RNR:
		return MROCE_ERR_RNR_RETRY;
	case MROCE_ERR_ACCESS:
		return MROCE_ERR_REM_ACCESS;
	case MROCE_ERR_OPERR:
		return MROCE_ERR_REM_OP;
	case MROCE_ERR_NO_STREAM:
		return MROCE_ERR_RETRY_EXC;
	default:
		return MROCE_ERR_REM_INVALID;
	}
}

/*
 * The local ACK timeout T, at least rto_min: a message must be able to
 * wait for one retransmission.  Also the grace of a stall found overdue
 * (mroce_stream_on_wake()).
 */
static u64 stall_unit(const struct mroce_conn *c,
		      const struct mroce_stream *st)
{
	return MROCE_MAX(st->prm.ack_timeout_ns, c->cfg.rto_min_ns);
}

/*
 * How long the oldest incomplete message may go without progress before
 * it fails with retry exceeded, and the stream with it: what verbs allows
 * a requester, T * (retry_cnt + 1) for the local ACK timeout T, as if each
 * retry waited T in vain (stall_unit()).  An infinite T (timeout 0) leaves the
 * connection's bound, dead_ns: a peer that answers its paths but never
 * completes the message (polled forever, the frontier stuck) does not keep
 * the connection's own dead timer from firing, which watches data in
 * flight only.  RNR back-offs do not count (progress_ns is set to their
 * end).  Never less than dead_ns, the time the connection allows a peer
 * to stay silent: a loaded software host can take longer than a NIC's
 * timeout to answer a READ without having failed, and would otherwise
 * see its QPs fail where its connection lives on.
 */
static u64 stall_bound(const struct mroce_conn *c,
		       const struct mroce_stream *st)
{
	if (!st->prm.ack_timeout_ns)
		return c->cfg.dead_ns;
	return MROCE_MAX(stall_unit(c, st) * (st->prm.retry_cnt + 1u),
			 c->cfg.dead_ns);
}

u64 mroce_stream_stall_at(const struct mroce_conn *c,
			  const struct mroce_stream *st)
{
	if (st->state != MROCE_STREAM_ACTIVE || st->tx_una == st->tx_end)
		return 0;
	return st->progress_ns + stall_bound(c, st);
}

int mroce_stream_post(struct mroce_stream *st, const struct mroce_msg *m,
		      u64 now)
{
	struct mroce_conn *c = st->conn;
	struct mroce_txmsg *t;

	if (st->state != MROCE_STREAM_ACTIVE)
		return MROCE_ERR_INVAL;
	if (!mroce_stream_can_post(st))
		return MROCE_ERR_AGAIN;
	switch (m->op) {
	case MROCE_OP_WRITE:
	case MROCE_OP_WRITE_IMM:
	case MROCE_OP_SEND:
	case MROCE_OP_SEND_IMM:
	case MROCE_OP_READ_REQ:
		if (m->len > MROCE_MAX_MSG || m->va + m->len < m->va)
			return MROCE_ERR_INVAL;
		break;
	case MROCE_OP_CMP_SWAP:
	case MROCE_OP_FETCH_ADD:
		if (m->len != 8 || (m->va & 7))
			return MROCE_ERR_INVAL;
		break;
	default:
		return MROCE_ERR_INVAL;
	}

	/* the oldest incomplete message: its progress deadline starts */
	if (st->tx_end == st->tx_una) {
		st->progress_ns = now;
		st->stall_check = 0;
		mroce_waitq_arm(c, st, now + stall_bound(c, st));
	}
	t = mroce_txmsg(st, st->tx_end);
	memset(t, 0, sizeof(*t));
	t->m = *m;
	t->msn = st->tx_end;
	t->state = MROCE_TXM_SENDING;
	t->rnr_left = st->prm.rnr_retry;
	t->retry_left = st->prm.retry_cnt;
	if (mroce_op_consumes_recv(m->op))
		t->rsn = st->tx_rsn++;
	st->tx_end++;
	st->stats.tx_msgs++;
	st->touched = 1;
	if (!mroce_conn_outstanding(c))
		mroce_conn_progress(c, now);
	mroce_sched_add(c, st);
	return 0;
}

/* ------------------------------------------------------------------ */
/* requester: packetising                                              */


static bool resp_has_tx(const struct mroce_stream *st)
{
	unsigned int i, idx;

	for (i = 0; i < st->resp_count; i++) {
		idx = (st->resp_head + i) % MROCE_MAX_RD_ATOMIC;
		if (st->resp[idx].busy && !st->resp[idx].all_sent)
			return true;
	}
	return false;
}

/*
 * The first message that still has packets to send, if the ordering rules
 * let it go now: READ/ATOMICs are limited to max_rd_atomic outstanding, a
 * fenced message waits for every earlier READ/ATOMIC, and nothing new goes
 * out behind a message that failed.
 */
static struct mroce_txmsg *next_sendable(struct mroce_stream *st)
{
	struct mroce_txmsg *t;
	u32 msn;

	while (st->tx_next != st->tx_end &&
	       mroce_txmsg(st, st->tx_next)->state != MROCE_TXM_SENDING &&
	       mroce_txmsg(st, st->tx_next)->state != MROCE_TXM_WAIT)
		st->tx_next++;
	for (msn = st->tx_next; msn != st->tx_end; msn++) {
		t = mroce_txmsg(st, msn);
		if (t->state == MROCE_TXM_DONE && t->status != MROCE_OK)
			return NULL;
		if (t->state != MROCE_TXM_SENDING)
			continue;
		/*
		 * A resent attempt honoured both rules when it first went out;
		 * the READ/ATOMICs in flight now are later ones, which cannot
		 * execute before it: waiting for them would deadlock.
		 */
		if (t->attempt)
			return t;
		if (!t->sent && (t->m.flags & MROCE_MSG_FENCE) &&
		    st->rd_inflight)
			return NULL;
		if (mroce_op_is_read_atomic(t->m.op) &&
		    st->rd_inflight >= st->prm.max_rd_atomic)
			return NULL;
		return t;
	}
	return NULL;
}

bool mroce_stream_has_tx(const struct mroce_stream *st)
{
	if (st->state != MROCE_STREAM_ACTIVE)
		return false;
	return resp_has_tx(st) ||
	       next_sendable((struct mroce_stream *)st) != NULL;
}

static bool resp_next(struct mroce_stream *st, u32 mss,
		      struct mroce_pktref *ref)
{
	unsigned int i, idx;
	struct mroce_resp *r;

	for (i = 0; i < st->resp_count; i++) {
		idx = (st->resp_head + i) % MROCE_MAX_RD_ATOMIC;
		r = &st->resp[idx];
		if (!r->busy || r->all_sent)
			continue;
		memset(ref, 0, sizeof(*ref));
		ref->st = st;
		ref->msn = r->msn;
		ref->kind = MROCE_TXE_RESP;
		ref->resp = (u8)idx;
		ref->offset = r->sent;
		ref->len = MROCE_MIN(mss, r->total - r->sent);
		r->sent += ref->len;
		if (r->sent == r->total) {
			ref->flags = MROCE_TXE_LAST;
			r->all_sent = 1;
		}
		return true;
	}
	return false;
}

bool mroce_stream_next(struct mroce_conn *c, struct mroce_stream *st,
		       struct mroce_pktref *ref, u64 now)
{
	u32 mss = MROCE_MIN(st->prm.mss, c->tx_mss);	/* QP's and connection's */
	struct mroce_txmsg *t;
	u32 total;

	if (st->state != MROCE_STREAM_ACTIVE)
		return false;
	/* responses first: the peer's READs are blocking its completions */
	if (resp_next(st, mss, ref))
		return true;
	t = next_sendable(st);
	if (!t)
		return false;

	memset(ref, 0, sizeof(*ref));
	ref->st = st;
	ref->msn = t->msn;
	ref->kind = MROCE_TXE_SQ;
	ref->attempt = t->attempt;
	total = mroce_op_has_payload(t->m.op) ? t->m.len : 0;
	/*
	 * The oldest message leaving for the first time: its progress
	 * deadline runs from now, not from a post that waited for the
	 * connection to open or for room in its windows.
	 */
	if (!t->sent && !t->attempt && t->msn == st->tx_una)
		st->progress_ns = MROCE_MAX(st->progress_ns, now);
	ref->offset = t->sent;
	ref->len = MROCE_MIN(mss, total - t->sent);
	t->sent += ref->len;
	if (t->sent == total) {
		ref->flags = MROCE_TXE_LAST;
		t->state = MROCE_TXM_SENT;
		if (mroce_op_is_read_atomic(t->m.op))
			st->rd_inflight++;
	}
	return true;
}

static inline bool pktref_live(const struct mroce_pktref *ref)
{
	struct mroce_stream *st = ref->st;
	const struct mroce_txmsg *t;

	if (!st || st->state != MROCE_STREAM_ACTIVE)
		return false;
	if (ref->kind == MROCE_TXE_RESP) {
		const struct mroce_resp *r = &st->resp[ref->resp];

		return r->busy && r->msn == ref->msn;
	}
	t = mroce_txmsg(st, ref->msn);
	return t->msn == ref->msn && t->attempt == ref->attempt &&
	       (t->state == MROCE_TXM_SENDING || t->state == MROCE_TXM_SENT) &&
	       mroce_seq_le(st->tx_una, ref->msn) &&
	       mroce_seq_lt(ref->msn, st->tx_end);
}

bool mroce_pktref_live(const struct mroce_pktref *ref)
{
	return pktref_live(ref);
}

void mroce_stream_fill(const struct mroce_pktref *ref, struct mroce_pkt *pkt,
		       struct mroce_tx *tx)
{
	struct mroce_stream *st = ref->st;
	struct mroce_data_ext *d = &pkt->data;
	struct mroce_hdr *h = &pkt->hdr;

	memset(d, 0, sizeof(*d));
	h->dst_stream = st->peer;
	h->src_stream = st->id;
	h->msn = ref->msn;
	h->attempt = ref->attempt;
	h->dsn = ref->dsn;
	if (ref->flags & MROCE_TXE_LAST)
		h->flags |= MROCE_F_LAST | MROCE_F_ACK_REQ;
	tx->st = st;
	tx->offset = ref->offset;
	tx->len = ref->len;

	if (ref->kind == MROCE_TXE_RESP) {
		const struct mroce_resp *r = &st->resp[ref->resp];

		h->opcode = r->op;
		d->offset = ref->offset;
		d->total = r->total;
		d->orig = r->orig;
		if (r->op == MROCE_OP_READ_RESP) {
			tx->src = MROCE_SRC_READ;
			tx->rkey = r->rkey;
			tx->va = r->va;
		} else {
			tx->src = MROCE_SRC_NONE;
			d->total = 8;
		}
		return;
	}

	{
		const struct mroce_txmsg *t = mroce_txmsg(st, ref->msn);

		h->opcode = t->m.op;
		if (t->m.op != MROCE_OP_SEND && t->m.op != MROCE_OP_SEND_IMM) {
			d->va = t->m.va;
			d->rkey = t->m.rkey;
		}
		d->rsn = t->rsn;
		d->offset = ref->offset;
		d->total = t->m.len;
		if (mroce_op_is_read_atomic(t->m.op) &&
		    t->m.op != MROCE_OP_READ_REQ) {
			d->swap_add = t->m.swap_add;
			if (t->m.op == MROCE_OP_CMP_SWAP)
				d->compare = t->m.compare;
		}
		if (t->m.op == MROCE_OP_WRITE_IMM || t->m.op == MROCE_OP_SEND_IMM)
			d->imm = t->m.imm;
		if ((t->m.flags & MROCE_MSG_SOLICITED) &&
		    (ref->flags & MROCE_TXE_LAST) &&
		    mroce_op_consumes_recv(t->m.op))
			h->flags |= MROCE_F_SOLICITED;
		tx->cookie = t->m.cookie;
		tx->src = mroce_op_has_payload(t->m.op) ? MROCE_SRC_SQ :
						    MROCE_SRC_NONE;
	}
}

/* ------------------------------------------------------------------ */
/* requester: completion                                               */

/* Hand completed messages to the caller in posting order. */
static void tx_deliver(struct mroce_conn *c, struct mroce_stream *st)
{
	struct mroce_txmsg *t;
	u8 status;

	while (st->tx_una != st->tx_end && st->state == MROCE_STREAM_ACTIVE) {
		t = mroce_txmsg(st, st->tx_una);
		if (t->state != MROCE_TXM_DONE)
			break;
		status = t->status;
		t->state = MROCE_TXM_FREE;
		st->tx_una++;
		if (mroce_seq_lt(st->tx_next, st->tx_una))
			st->tx_next = st->tx_una;
		c->ops->send_done(c->ctx, st, t->m.cookie, status);
		if (status != MROCE_OK) {
			st->state = MROCE_STREAM_ERROR;
			c->ops->stream_error(c->ctx, st, status);
			return;
		}
	}
	/*
	 * Everything completed: no completion can stall, and nothing waits
	 * for a back-off (a waiting message is outstanding), so the stream
	 * needs no timer (nor a progress deadline: nothing is outstanding).
	 * Left armed, the POLL deadline of the last message
	 * made the connection's timer fire once per PTO in a ping-pong, to
	 * find nothing due, and each firing delayed the iteration it hit.
	 */
	if (st->tx_una == st->tx_end && mroce_list_linked(&st->waitq)) {
		st->poll_at = 0;
		st->wake_at = 0;
		if (mroce_list_linked(&st->waitq))
			mroce_list_del(&st->waitq);
	}
}

static void tx_complete(struct mroce_conn *c, struct mroce_stream *st,
			struct mroce_txmsg *t, u8 status)
{
	if (t->state == MROCE_TXM_DONE || t->state == MROCE_TXM_FREE)
		return;
	if (mroce_op_is_read_atomic(t->m.op) && t->state == MROCE_TXM_SENT &&
	    st->rd_inflight)
		st->rd_inflight--;
	t->state = MROCE_TXM_DONE;
	t->status = status;
	tx_deliver(c, st);
	/* a freed READ slot or fence may unblock the next message */
	if (mroce_stream_has_tx(st))
		mroce_sched_add(c, st);
}

void mroce_stream_pkt_acked(struct mroce_conn *c,
			    const struct mroce_pktref *ref, u64 now)
{
	struct mroce_stream *st = ref->st;

	if (!pktref_live(ref))	/* inline: once per run acknowledged */
		return;
	if (ref->kind == MROCE_TXE_RESP) {
		struct mroce_resp *r = &st->resp[ref->resp];

		r->acked += ref->len;
		if (ref->flags & MROCE_TXE_LAST)
			r->acked_last = 1;
		if (r->acked != r->total || !r->acked_last)
			return;
		/* the response is delivered: the job slot is free again */
		r->busy = 0;
		while (st->resp_count && !st->resp[st->resp_head].busy) {
			st->resp_head = (st->resp_head + 1) % MROCE_MAX_RD_ATOMIC;
			st->resp_count--;
		}
		/* the frontier may have been waiting for a free job */
		mroce_stream_rx_advance(c, st, now);
		return;
	}

	{
		struct mroce_txmsg *t = mroce_txmsg(st, ref->msn);
		u32 total = mroce_op_has_payload(t->m.op) ? t->m.len : 0;

		st->progress_ns = now;
		t->acked += ref->len;
		if (ref->flags & MROCE_TXE_LAST)
			t->acked_last = 1;
		/*
		 * All of it arrived; the completion rides on the peer's
		 * stream entry.  Should that be lost, POLL after an RTO.
		 */
		if (t->acked == total && t->acked_last && !st->poll_at &&
		    !mroce_op_is_read_atomic(t->m.op)) {
			st->poll_at = now + mroce_conn_pto(c);
			mroce_waitq_arm(c, st, st->poll_at);
		}
	}
}

/* Peer refused message @t (NACK): retry later or fail it. */
static void tx_nacked(struct mroce_conn *c, struct mroce_stream *st,
		      struct mroce_txmsg *t, const struct mroce_ack_stream *e,
		      u64 now)
{
	u64 delay;

	if (t->state == MROCE_TXM_WAIT || t->attempt != e->attempt)
		return;		/* already handled, or about an old attempt */
	st->progress_ns = now;
	switch (e->status) {
	case MROCE_ERR_RNR:
		st->stats.rnr_rcvd++;
		if (!t->rnr_left) {
			tx_complete(c, st, t, MROCE_ERR_RNR_RETRY);
			return;
		}
		if (t->rnr_left != RNR_FOREVER)
			t->rnr_left--;
		delay = MROCE_MAX((u64)e->rnr_delay_us * 1000,
				  st->prm.min_rnr_ns);
		break;
	case MROCE_ERR_NO_STREAM:
		/* the peer QP may not be ready yet: retry like a timeout */
		if (!t->retry_left) {
			tx_complete(c, st, t, MROCE_ERR_RETRY_EXC);
			return;
		}
		t->retry_left--;
		delay = mroce_conn_rto(c);
		break;
	default:
		tx_complete(c, st, t, mroce_refusal_wc(e->status));
		return;
	}
	if (mroce_op_is_read_atomic(t->m.op) && t->state == MROCE_TXM_SENT &&
	    st->rd_inflight)
		st->rd_inflight--;
	t->state = MROCE_TXM_WAIT;
	t->resend_at = now + delay;
	/* a back-off is no stall: the deadline counts from its end */
	st->progress_ns = MROCE_MAX(st->progress_ns, t->resend_at);
	mroce_waitq_arm(c, st, t->resend_at);
}

void mroce_stream_on_entry(struct mroce_conn *c, struct mroce_stream *st,
			   const struct mroce_ack_stream *e, u64 now)
{
	struct mroce_txmsg *t;
	u32 msn;

	if (st->state != MROCE_STREAM_ACTIVE)
		return;
	if (e->status == MROCE_ERR_NO_STREAM)
		goto nack;	/* frontier means nothing without a stream */
	/* a frontier beyond what we posted is a lie: ignore the entry */
	if (mroce_seq_lt(st->tx_end, e->msn))
		return;
	if (mroce_seq_lt(st->frontier, e->msn)) {
		msn = mroce_seq_max(st->frontier, st->tx_una);
		st->frontier = e->msn;
		st->progress_ns = now;
		for (; mroce_seq_lt(msn, e->msn); msn++) {
			t = mroce_txmsg(st, msn);
			if (!mroce_op_is_read_atomic(t->m.op))
				tx_complete(c, st, t, MROCE_OK);
			if (st->state != MROCE_STREAM_ACTIVE)
				return;
		}
	}
nack:
	if (e->status == MROCE_OK)
		return;
	if (mroce_seq_lt(e->nack_msn, st->tx_una) ||
	    !mroce_seq_lt(e->nack_msn, st->tx_end))
		return;
	t = mroce_txmsg(st, e->nack_msn);
	if (t->state == MROCE_TXM_FREE || t->state == MROCE_TXM_DONE)
		return;
	tx_nacked(c, st, t, e, now);
}

void mroce_stream_rx_resp(struct mroce_conn *c, struct mroce_stream *st,
			  const struct mroce_pkt *pkt,
			  const struct mroce_rx_meta *m, u64 now)
{
	const struct mroce_hdr *h = &pkt->hdr;
	const struct mroce_data_ext *d = &pkt->data;
	struct mroce_place pl;
	struct mroce_txmsg *t;
	int status;

	if (st->state != MROCE_STREAM_ACTIVE ||
	    mroce_seq_lt(h->msn, st->tx_una) ||
	    !mroce_seq_lt(h->msn, st->tx_end)) {
		st->stats.rx_stale++;
		return;
	}
	t = mroce_txmsg(st, h->msn);
	/* a response answers only its own kind of request */
	if (t->state != MROCE_TXM_SENT ||
	    (h->opcode == MROCE_OP_READ_RESP ?
		     t->m.op != MROCE_OP_READ_REQ :
		     !mroce_op_is_read_atomic(t->m.op) ||
			     t->m.op == MROCE_OP_READ_REQ) ||
	    (h->opcode == MROCE_OP_READ_RESP && d->total != t->m.len)) {
		st->stats.rx_stale++;
		return;
	}

	memset(&pl, 0, sizeof(pl));
	pl.cookie = t->m.cookie;
	pl.offset = d->offset;
	pl.len = pkt->payload_len;
	pl.total = d->total;
	if (h->opcode == MROCE_OP_READ_RESP) {
		pl.kind = MROCE_PLACE_READ_RESP;
	} else {
		pl.kind = MROCE_PLACE_ATOMIC_RESP;
		pl.value = d->orig;
		pl.total = 8;
		pl.len = 8;
	}
	status = c->ops->place(c->ctx, st, &pl, m->pctx, pkt->payload_off);
	if (status != MROCE_OK) {
		tx_complete(c, st, t, MROCE_ERR_LOC_PROT);
		return;
	}
	st->progress_ns = now;
	if (h->opcode == MROCE_OP_ATOMIC_RESP) {
		t->orig = d->orig;
		tx_complete(c, st, t, MROCE_OK);
		return;
	}
	t->resp += pkt->payload_len;
	if (t->resp == t->m.len)
		tx_complete(c, st, t, MROCE_OK);
}

/* ------------------------------------------------------------------ */
/* timers: RNR back-off expiry and POLL                                 */

/*
 * Some message is delivered and waits only for the peer's frontier to
 * complete it: not just the oldest one, which may be a READ waiting for
 * its response while the ACK that would complete the SENDs behind it was
 * lost (they would then wait forever).
 */
static bool awaits_frontier(struct mroce_stream *st)
{
	const struct mroce_txmsg *t;
	u32 msn;

	for (msn = st->tx_una; msn != st->tx_end; msn++) {
		t = mroce_txmsg(st, msn);
		if (t->state == MROCE_TXM_SENT &&
		    !mroce_op_is_read_atomic(t->m.op) && t->acked_last &&
		    t->acked == (mroce_op_has_payload(t->m.op) ? t->m.len : 0))
			return true;
	}
	return false;
}

void mroce_stream_on_wake(struct mroce_conn *c, struct mroce_stream *st,
			  u64 now)
{
	struct mroce_txmsg *t;
	u64 next = 0, at;
	u32 msn;

	if (st->state != MROCE_STREAM_ACTIVE) {
		/* nothing to resend or poll for: disarm, or the deadline stays */
		st->wake_at = 0;
		st->poll_at = 0;
		if (mroce_list_linked(&st->waitq))
			mroce_list_del(&st->waitq);
		return;
	}
	for (msn = st->tx_una; msn != st->tx_end; msn++) {
		t = mroce_txmsg(st, msn);
		if (t->state != MROCE_TXM_WAIT)
			continue;
		if (t->resend_at > now) {
			next = next ? MROCE_MIN(next, t->resend_at) :
				      t->resend_at;
			continue;
		}
		/* resend the whole message as a new attempt */
		st->progress_ns = MROCE_MAX(st->progress_ns, now);
		t->attempt++;
		t->sent = 0;
		t->acked = 0;
		t->acked_last = 0;
		t->state = MROCE_TXM_SENDING;
		if (mroce_seq_lt(msn, st->tx_next))
			st->tx_next = msn;
		mroce_sched_add(c, st);
	}
	if (st->poll_at && st->poll_at <= now) {
		st->poll_at = 0;
		if (awaits_frontier(st)) {
			if (!mroce_list_linked(&st->pollq))
				mroce_list_add_tail(&st->pollq, &c->pollq);
			st->stats.polls++;
			st->poll_at = now + mroce_conn_pto(c);
		}
	}
	if (st->poll_at)
		next = next ? MROCE_MIN(next, st->poll_at) : st->poll_at;
	/*
	 * The oldest message made no progress for its bound (stall_bound()):
	 * it fails with retry exceeded, the stream breaks, its QP flushes
	 * the rest.  Not while it waits for a back-off, nor before its first
	 * packet left: until then it waits for its connection to open or
	 * for room in the windows, which the connection's own timers bound.
	 * And not at the first pass that finds it overdue, but T later,
	 * if nothing came meanwhile: after a stall of this host every
	 * deadline is past at once, while the peer's answers still wait in
	 * the receive queue behind this timer (the dead timer's rounds).
	 */
	at = mroce_stream_stall_at(c, st);
	if (at) {
		t = mroce_txmsg(st, st->tx_una);
		if (at > now || !(t->state == MROCE_TXM_SENT ||
				  (t->state == MROCE_TXM_SENDING &&
				   (t->sent || t->attempt)))) {
			st->stall_check = 0;
		} else if (!st->stall_check) {
			st->stall_check = now + stall_unit(c, st);
			at = st->stall_check;
		} else if (st->stall_check <= now) {
			st->stats.stalls++;
			tx_complete(c, st, t, MROCE_ERR_RETRY_EXC);
			if (st->state != MROCE_STREAM_ACTIVE) {
				mroce_stream_on_wake(c, st, now); /* disarm */
				return;
			}
			st->stall_check = 0;
			at = mroce_stream_stall_at(c, st);
		} else {
			at = st->stall_check;
		}
		if (at && at <= now)	/* it waits for a back-off, or to leave */
			at = now + stall_bound(c, st);
		if (at)
			next = next ? MROCE_MIN(next, at) : at;
	}
	st->wake_at = 0;
	if (mroce_list_linked(&st->waitq))
		mroce_list_del(&st->waitq);
	if (next)
		mroce_waitq_arm(c, st, next);
}
