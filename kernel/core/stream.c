// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Streams: verbs semantics on top of out-of-order placement.
 *
 * Requester: messages are numbered (msn) as they are posted and packetised
 * in order; their packets may arrive in any order.  A SEND/WRITE completes
 * when the peer's frontier (reported in ACK stream entries) passes it, a
 * READ when all its response bytes are placed, an ATOMIC when its response
 * arrives.  Completions are handed to the caller strictly in msn order.
 *
 * Responder: every packet names its message and offset, so it is placed at
 * once.  A message slot counts placed bytes; duplicates never reach it (the
 * connection's dsn filter drops them), so a full count means complete.
 * The frontier completes messages in msn order; READs and ATOMICs execute
 * there, so they see every earlier WRITE of the stream and an ATOMIC runs
 * exactly once.
 */
#include "internal.h"

const char *const mroce_wc_names[MROCE_WC_NR] = {
	[MROCE_WC_OK]		= "ok",
	[MROCE_WC_RNR_RETRY]	= "rnr-retry-exceeded",
	[MROCE_WC_REM_ACCESS]	= "remote-access",
	[MROCE_WC_REM_INVALID]	= "remote-invalid-request",
	[MROCE_WC_REM_OP]	= "remote-operation",
	[MROCE_WC_RETRY_EXC]	= "retry-exceeded",
	[MROCE_WC_LOC_PROT]	= "local-protection",
	[MROCE_WC_LOC_LEN]	= "local-length",
	[MROCE_WC_FLUSH]	= "flushed",
	[MROCE_WC_LOC_QP_OP]	= "local-qp-operation",
};

#define RNR_FOREVER	7

static bool op_is_read_atomic(u8 op)
{
	return op == MROCE_OP_READ_REQ || op == MROCE_OP_CMP_SWAP ||
	       op == MROCE_OP_FETCH_ADD;
}

static bool op_consumes_recv(u8 op)
{
	return op == MROCE_OP_SEND || op == MROCE_OP_SEND_IMM ||
	       op == MROCE_OP_WRITE_IMM;
}

static bool op_has_payload(u8 op)
{
	return op == MROCE_OP_WRITE || op == MROCE_OP_WRITE_IMM ||
	       op == MROCE_OP_SEND || op == MROCE_OP_SEND_IMM;
}

u8 mroce_status_to_wc(u8 status)
{
	switch (status) {
	case MROCE_ST_OK:
		return MROCE_WC_OK;
	case MROCE_ST_RNR:
		return MROCE_WC_RNR_RETRY;
	case MROCE_ST_ACCESS:
		return MROCE_WC_REM_ACCESS;
	case MROCE_ST_OPERR:
		return MROCE_WC_REM_OP;
	case MROCE_ST_NO_STREAM:
		return MROCE_WC_RETRY_EXC;
	default:
		return MROCE_WC_REM_INVALID;
	}
}

/* The responder's local error when it refuses (its QP's async event). */
static u8 local_wc(u8 status)
{
	return status == MROCE_ST_INVALID ? MROCE_WC_LOC_LEN :
					    MROCE_WC_LOC_PROT;
}

/*
 * What the receive taken by a refused message completes with, as rxe: a
 * WRITE with immediate whose rkey fails, a remote access error; a SEND its
 * receive cannot hold or place, a local QP operation error.
 */
static u8 recv_wc(u8 status)
{
	return status == MROCE_ST_ACCESS ? MROCE_WC_REM_ACCESS :
					   MROCE_WC_LOC_QP_OP;
}

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
		return MROCE_EINVAL;
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
		return MROCE_EINVAL;
	st->prm.tx_msn = msn;
	st->tx_una = msn;
	st->tx_next = msn;
	st->tx_end = msn;
	st->frontier = msn;
	return 0;
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
		return MROCE_EINVAL;
	if (!mroce_stream_can_post(st))
		return MROCE_EAGAIN;
	switch (m->op) {
	case MROCE_OP_WRITE:
	case MROCE_OP_WRITE_IMM:
	case MROCE_OP_SEND:
	case MROCE_OP_SEND_IMM:
	case MROCE_OP_READ_REQ:
		if (m->len > MROCE_MAX_MSG || m->va + m->len < m->va)
			return MROCE_EINVAL;
		break;
	case MROCE_OP_CMP_SWAP:
	case MROCE_OP_FETCH_ADD:
		if (m->len != 8 || (m->va & 7))
			return MROCE_EINVAL;
		break;
	default:
		return MROCE_EINVAL;
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
	if (op_consumes_recv(m->op))
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
		if (t->state == MROCE_TXM_DONE && t->status != MROCE_WC_OK)
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
		if (op_is_read_atomic(t->m.op) &&
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
	total = op_has_payload(t->m.op) ? t->m.len : 0;
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
		if (op_is_read_atomic(t->m.op))
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
		if (op_is_read_atomic(t->m.op) && t->m.op != MROCE_OP_READ_REQ) {
			d->swap_add = t->m.swap_add;
			if (t->m.op == MROCE_OP_CMP_SWAP)
				d->compare = t->m.compare;
		}
		if (t->m.op == MROCE_OP_WRITE_IMM || t->m.op == MROCE_OP_SEND_IMM)
			d->imm = t->m.imm;
		if ((t->m.flags & MROCE_MSG_SOLICITED) &&
		    (ref->flags & MROCE_TXE_LAST) && op_consumes_recv(t->m.op))
			h->flags |= MROCE_F_SOLICITED;
		tx->cookie = t->m.cookie;
		tx->src = op_has_payload(t->m.op) ? MROCE_SRC_SQ :
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
		if (status != MROCE_WC_OK && c->ack_only) {
			st->deliver_held = 1;
			c->cross_pending = 1;
			return;
		}
		t->state = MROCE_TXM_FREE;
		st->tx_una++;
		if (mroce_seq_lt(st->tx_next, st->tx_una))
			st->tx_next = st->tx_una;
		c->ops->send_done(c->ctx, st, t->m.cookie, status);
		if (status != MROCE_WC_OK) {
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
	if (op_is_read_atomic(t->m.op) && t->state == MROCE_TXM_SENT &&
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
		if (c->ack_only) {
			/* the receive half is not ours: mroce_conn_poll() */
			st->resp_freed = 1;
			c->cross_pending = 1;
			return;
		}
		mroce_stream_rx_advance(c, st, now);
		return;
	}

	{
		struct mroce_txmsg *t = mroce_txmsg(st, ref->msn);
		u32 total = op_has_payload(t->m.op) ? t->m.len : 0;

		st->progress_ns = now;
		t->acked += ref->len;
		if (ref->flags & MROCE_TXE_LAST)
			t->acked_last = 1;
		/*
		 * All of it arrived; the completion rides on the peer's
		 * stream entry.  Should that be lost, POLL after an RTO.
		 */
		if (t->acked == total && t->acked_last && !st->poll_at &&
		    !op_is_read_atomic(t->m.op)) {
			st->poll_at = now + mroce_conn_pto(c);
			mroce_waitq_arm(c, st, st->poll_at);
		}
	}
}

/* What receipts under the send lock alone left: see mroce_conn_rx_ack(). */
void mroce_stream_settle(struct mroce_conn *c, struct mroce_stream *st,
			 u64 now)
{
	if (st->deliver_held) {
		st->deliver_held = 0;
		st->progress_ns = now;
		tx_deliver(c, st);
	}
	if (st->resp_freed) {
		st->resp_freed = 0;
		mroce_stream_rx_advance(c, st, now);
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
	case MROCE_ST_RNR:
		st->stats.rnr_rcvd++;
		if (!t->rnr_left) {
			tx_complete(c, st, t, MROCE_WC_RNR_RETRY);
			return;
		}
		if (t->rnr_left != RNR_FOREVER)
			t->rnr_left--;
		delay = MROCE_MAX((u64)e->rnr_delay_us * 1000,
				  st->prm.min_rnr_ns);
		break;
	case MROCE_ST_NO_STREAM:
		/* the peer QP may not be ready yet: retry like a timeout */
		if (!t->retry_left) {
			tx_complete(c, st, t, MROCE_WC_RETRY_EXC);
			return;
		}
		t->retry_left--;
		delay = mroce_conn_rto(c);
		break;
	default:
		tx_complete(c, st, t, mroce_status_to_wc(e->status));
		return;
	}
	if (op_is_read_atomic(t->m.op) && t->state == MROCE_TXM_SENT &&
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
	if (e->status == MROCE_ST_NO_STREAM)
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
			if (!op_is_read_atomic(t->m.op))
				tx_complete(c, st, t, MROCE_WC_OK);
			if (st->state != MROCE_STREAM_ACTIVE)
				return;
		}
	}
nack:
	if (e->status == MROCE_ST_OK)
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
		     !op_is_read_atomic(t->m.op) ||
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
	if (status != MROCE_ST_OK) {
		tx_complete(c, st, t, MROCE_WC_LOC_PROT);
		return;
	}
	st->progress_ns = now;
	if (h->opcode == MROCE_OP_ATOMIC_RESP) {
		t->orig = d->orig;
		tx_complete(c, st, t, MROCE_WC_OK);
		return;
	}
	t->resp += pkt->payload_len;
	if (t->resp == t->m.len)
		tx_complete(c, st, t, MROCE_WC_OK);
}

/* ------------------------------------------------------------------ */
/* responder                                                           */

/* The stream is broken (verbs: responder QP to ERR) by @status at @msn. */
static void rx_break(struct mroce_conn *c, struct mroce_stream *st,
		     struct mroce_rxmsg *r, u8 status, u32 msn, u8 attempt)
{
	mroce_lock_tx(c);	/* the stream's state, its QP's flush */
	st->nack_status = status;
	st->nack_msn = msn;
	st->nack_attempt = attempt;
	mroce_ackq_add(c, st, true);
	if (st->state != MROCE_STREAM_ACTIVE)
		return;
	if (r && r->claimed) {
		struct mroce_recv_done rd = {
			.cookie = r->cookie,
			.op = r->op,
			.status = recv_wc(status),
		};

		r->claimed = 0;
		c->ops->recv_done(c->ctx, st, &rd);
	}
	st->state = MROCE_STREAM_ERROR;
	c->ops->stream_error(c->ctx, st, local_wc(status));
}

/*
 * Message @msn is refused for good.  Verbs executes a QP's requests in
 * order, so the error must too: earlier messages still complete, the
 * stream breaks when the frontier reaches @msn, and nothing after it is
 * placed.  The requester hears the NACK at once; its own completions are
 * ordered anyway.
 */
static void rx_refuse(struct mroce_conn *c, struct mroce_stream *st,
		      struct mroce_rxmsg *r, u8 status, u32 msn, u8 attempt)
{
	if (msn == st->rx_next) {
		rx_break(c, st, r, status, msn, attempt);
		return;
	}
	if (!st->failing || mroce_seq_lt(msn, st->fail_msn)) {
		st->failing = 1;
		st->fail_msn = msn;
		st->fail_status = status;
		st->fail_attempt = attempt;
	}
	r->state = MROCE_RXM_FAILED;
	r->status = status;
	mroce_ackq_add(c, st, true);
}

static int resp_push(struct mroce_stream *st, const struct mroce_rxmsg *r,
		     u64 orig)
{
	unsigned int idx;
	struct mroce_resp *j;

	if (st->resp_count == MROCE_MAX_RD_ATOMIC)
		return MROCE_EAGAIN;
	idx = (st->resp_head + st->resp_count) % MROCE_MAX_RD_ATOMIC;
	j = &st->resp[idx];
	memset(j, 0, sizeof(*j));
	j->msn = r->msn;
	j->busy = 1;
	if (r->op == MROCE_OP_READ_REQ) {
		j->op = MROCE_OP_READ_RESP;
		j->va = r->va;
		j->rkey = r->rkey;
		j->total = r->total;
	} else {
		j->op = MROCE_OP_ATOMIC_RESP;
		j->orig = orig;
	}
	st->resp_count++;
	return 0;
}

/*
 * Complete, or execute, messages at the frontier in msn order.  Stops at
 * the first message not yet whole, or when no response job is free.
 */
void mroce_stream_rx_advance(struct mroce_conn *c, struct mroce_stream *st,
			     u64 now)
{
	struct mroce_rxmsg *r;
	bool moved = false;
	u64 orig = 0;
	int status;

	while (st->state == MROCE_STREAM_ACTIVE) {
		r = mroce_rxmsg(st, st->rx_next);
		if (r->msn != st->rx_next)
			break;
		if (r->state == MROCE_RXM_FAILED) {
			rx_break(c, st, r, r->status, r->msn, r->attempt);
			break;
		}
		if (r->state != MROCE_RXM_READY)
			break;
		switch (r->op) {
		case MROCE_OP_SEND:
		case MROCE_OP_SEND_IMM:
		case MROCE_OP_WRITE_IMM: {
			struct mroce_recv_done rd = {
				.cookie = r->cookie,
				.byte_len = r->total,
				.imm = r->imm,
				.op = r->op,
				.status = MROCE_WC_OK,
				.solicited = !!(r->flags & MROCE_F_SOLICITED),
			};

			r->claimed = 0;
			c->ops->recv_done(c->ctx, st, &rd);
			break;
		}
		case MROCE_OP_READ_REQ:
		case MROCE_OP_CMP_SWAP:
		case MROCE_OP_FETCH_ADD:
			/* response jobs are the sender's to send and free */
			mroce_lock_tx(c);
			if (st->resp_count == MROCE_MAX_RD_ATOMIC)
				goto out;	/* resumes when a job frees */
			if (r->op == MROCE_OP_READ_REQ) {
				status = c->ops->read_check(c->ctx, st, r->rkey,
							    r->va, r->total);
			} else {
				struct mroce_atomic a = {
					.op = r->op,
					.rkey = r->rkey,
					.va = r->va,
					.swap_add = r->swap_add,
					.compare = r->compare,
				};

				status = (r->va & 7) ? MROCE_ST_INVALID :
					 c->ops->atomic(c->ctx, st, &a, &orig);
			}
			if (status != MROCE_ST_OK) {
				rx_break(c, st, NULL, (u8)status, r->msn,
					 r->attempt);
				goto out;
			}
			resp_push(st, r, orig);
			mroce_sched_add(c, st);
			break;
		default:	/* WRITE: placed already, nothing to report */
			break;
		}
		r->state = MROCE_RXM_FREE;
		st->rx_next++;
		st->stats.rx_msgs++;
		moved = true;
	}
out:
	/* at once, or held for an answer (mroce_ack_soft_resolve()) */
	if (moved) {
		mroce_ackq_add(c, st, false);
		c->ack_soft = 1;
	}
}

void mroce_stream_rx(struct mroce_conn *c, struct mroce_stream *st,
		     const struct mroce_pkt *pkt, const struct mroce_rx_meta *m,
		     u64 now)
{
	const struct mroce_hdr *h = &pkt->hdr;
	const struct mroce_data_ext *d = &pkt->data;
	struct mroce_place pl;
	struct mroce_rxmsg *r;
	u32 msn = h->msn;
	int status;

	/* whatever happens, the sender wants to hear about this stream */
	mroce_ackq_add(c, st, false);
	if (st->state != MROCE_STREAM_ACTIVE) {
		/*
		 * A QP in error drops what arrives, as verbs does; the NACK
		 * makes the peer retry and then give up (retry exceeded)
		 * instead of waiting on a frontier that will never move.
		 */
		if (st->nack_status == MROCE_ST_OK) {
			st->nack_status = MROCE_ST_NO_STREAM;
			st->nack_msn = msn;
			st->nack_attempt = h->attempt;
		}
		return;
	}
	if (mroce_seq_lt(msn, st->rx_next)) {
		st->stats.rx_stale++;
		return;
	}
	/* beyond the window: dropped before anything moved (rx.c, msn_beyond) */
	if (MROCE_WARN_ON(msn - st->rx_next >= MROCE_STREAM_WINDOW))
		return;

	if (st->failing && !mroce_seq_lt(msn, st->fail_msn)) {
		st->stats.rx_stale++;
		return;
	}
	r = mroce_rxmsg(st, msn);
	if (r->state != MROCE_RXM_FREE && r->attempt != h->attempt) {
		if ((s8)(h->attempt - r->attempt) < 0) {
			st->stats.rx_stale++;
			return;
		}
		/* a new attempt (after a NACK) starts the count afresh */
		r->got = 0;
		if (r->state == MROCE_RXM_RNR) {
			r->state = MROCE_RXM_FREE;
			st->rnr_slots--;
		} else {
			r->attempt = h->attempt;
			if (!op_is_read_atomic(r->op))
				r->state = MROCE_RXM_ACTIVE;
		}
	}
	if (r->state == MROCE_RXM_FREE) {
		memset(r, 0, sizeof(*r));
		r->msn = msn;
		r->op = h->opcode;
		r->total = d->total;
		r->attempt = h->attempt;
		r->imm = d->imm;
		r->flags = (u8)(h->flags & MROCE_F_SOLICITED);
		r->state = MROCE_RXM_ACTIVE;
		if (op_consumes_recv(r->op)) {
			status = c->ops->recv_claim(c->ctx, st, d->rsn,
						    d->total, &r->cookie);
			if (status == MROCE_ST_RNR) {
				r->state = MROCE_RXM_RNR;
				st->rnr_slots++;
				st->stats.rnr_sent++;
				mroce_ackq_add(c, st, true);
				return;
			}
			/* a receive too small is consumed by the error */
			r->claimed = status == MROCE_ST_OK ||
				     status == MROCE_ST_INVALID;
			if (status != MROCE_ST_OK) {
				rx_refuse(c, st, r, (u8)status, msn,
					  h->attempt);
				return;
			}
		}
		if (op_is_read_atomic(r->op)) {
			r->va = d->va;
			r->rkey = d->rkey;
			r->swap_add = d->swap_add;
			r->compare = d->compare;
			r->state = MROCE_RXM_READY;
		}
	} else if (r->state == MROCE_RXM_RNR) {
		mroce_ackq_add(c, st, true);
		return;
	} else if (r->op != h->opcode || r->total != d->total) {
		rx_refuse(c, st, r, MROCE_ST_INVALID, msn, h->attempt);
		return;
	}

	if (op_has_payload(r->op)) {
		memset(&pl, 0, sizeof(pl));
		pl.kind = r->op == MROCE_OP_WRITE || r->op == MROCE_OP_WRITE_IMM ?
			  MROCE_PLACE_WRITE : MROCE_PLACE_SEND;
		pl.rkey = d->rkey;
		pl.va = d->va;
		pl.total = d->total;
		pl.offset = d->offset;
		pl.len = pkt->payload_len;
		pl.cookie = r->cookie;
		status = c->ops->place(c->ctx, st, &pl, m->pctx,
				       pkt->payload_off);
		if (status != MROCE_ST_OK) {
			rx_refuse(c, st, r, (u8)status, msn, h->attempt);
			return;
		}
		r->got += pkt->payload_len;
		if (r->got == r->total)
			r->state = MROCE_RXM_READY;
	}
	if (r->state == MROCE_RXM_READY && msn == st->rx_next)
		mroce_stream_rx_advance(c, st, now);
}

/*
 * The stream entry for the next ACK: the frontier and the oldest refusal
 * (a broken stream's cause, else the first RNR or pending failure).
 */
void mroce_stream_entry(struct mroce_stream *st, struct mroce_ack_stream *e)
{
	u32 msn, end;

	memset(e, 0, sizeof(*e));
	e->stream = st->peer;
	e->msn = st->rx_next;
	if (st->state != MROCE_STREAM_ACTIVE) {
		e->status = st->nack_status;
		e->nack_msn = st->nack_msn;
		e->attempt = st->nack_attempt;
		return;
	}
	if (st->failing) {
		e->status = st->fail_status;
		e->nack_msn = st->fail_msn;
		e->attempt = st->fail_attempt;
	}
	if (!st->rnr_slots)
		return;
	end = st->failing ? st->fail_msn : st->rx_next + MROCE_STREAM_WINDOW;
	for (msn = st->rx_next; mroce_seq_lt(msn, end); msn++) {
		const struct mroce_rxmsg *r = mroce_rxmsg(st, msn);

		if (r->state == MROCE_RXM_RNR && r->msn == msn) {
			e->status = MROCE_ST_RNR;
			e->nack_msn = msn;
			e->attempt = r->attempt;
			e->rnr_delay_us = (u16)MROCE_MIN(st->prm.rnr_delay_ns /
							 1000, 0xffff);
			return;
		}
	}
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
		if (t->state == MROCE_TXM_SENT && !op_is_read_atomic(t->m.op) &&
		    t->acked_last &&
		    t->acked == (op_has_payload(t->m.op) ? t->m.len : 0))
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
			tx_complete(c, st, t, MROCE_WC_RETRY_EXC);
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
							       MROCE_WC_FLUSH);
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
				.status = MROCE_WC_FLUSH,
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
