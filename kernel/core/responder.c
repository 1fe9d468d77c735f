// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A stream's responder: the peer's messages placed, completed and
 * executed, and what it answers (the stream entries of ACKs, NACKs).
 *
 * Every packet names its message and offset, so it is placed at once.  A
 * message slot counts placed bytes; duplicates never reach it (the
 * connection's dsn filter drops them), so a full count means complete.
 * The frontier completes messages in msn order; READs and ATOMICs execute
 * there, so they see every earlier WRITE of the stream and an ATOMIC runs
 * exactly once.  Their response jobs go out with the requester's packets
 * (requester.c), ahead of them.
 */
#include "internal.h"

/* The responder's local error when it refuses (its QP's async event). */
static u8 local_wc(u8 status)
{
	return status == MROCE_ERR_INVALID ? MROCE_ERR_LOC_LEN :
					    MROCE_ERR_LOC_PROT;
}

/*
 * What the receive taken by a refused message completes with, as rxe: a
 * WRITE with immediate whose rkey fails, a remote access error; a SEND its
 * receive cannot hold or place, a local QP operation error.
 */
static u8 recv_wc(u8 status)
{
	return status == MROCE_ERR_ACCESS ? MROCE_ERR_REM_ACCESS :
					   MROCE_ERR_LOC_QP_OP;
}

/* The stream is broken (verbs: responder QP to ERR) by @status at @msn. */
static void rx_break(struct mroce_conn *c, struct mroce_stream *st,
		     struct mroce_rxmsg *r, u8 status, u32 msn, u8 attempt)
{
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
		return MROCE_ERR_AGAIN;
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
				.status = MROCE_OK,
				.solicited = !!(r->flags & MROCE_F_SOLICITED),
			};

			r->claimed = 0;
			c->ops->recv_done(c->ctx, st, &rd);
			break;
		}
		case MROCE_OP_READ_REQ:
		case MROCE_OP_CMP_SWAP:
		case MROCE_OP_FETCH_ADD:
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

				status = (r->va & 7) ? MROCE_ERR_INVALID :
					 c->ops->atomic(c->ctx, st, &a, &orig);
			}
			if (status != MROCE_OK) {
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
		if (st->nack_status == MROCE_OK) {
			st->nack_status = MROCE_ERR_NO_STREAM;
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
			if (!mroce_op_is_read_atomic(r->op))
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
		if (mroce_op_consumes_recv(r->op)) {
			status = c->ops->recv_claim(c->ctx, st, d->rsn,
						    d->total, &r->cookie);
			if (status == MROCE_ERR_RNR) {
				r->state = MROCE_RXM_RNR;
				st->rnr_slots++;
				st->stats.rnr_sent++;
				mroce_ackq_add(c, st, true);
				return;
			}
			/* a receive too small is consumed by the error */
			r->claimed = status == MROCE_OK ||
				     status == MROCE_ERR_INVALID;
			if (status != MROCE_OK) {
				rx_refuse(c, st, r, (u8)status, msn,
					  h->attempt);
				return;
			}
		}
		if (mroce_op_is_read_atomic(r->op)) {
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
		rx_refuse(c, st, r, MROCE_ERR_INVALID, msn, h->attempt);
		return;
	}

	if (mroce_op_has_payload(r->op)) {
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
		if (status != MROCE_OK) {
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
			e->status = MROCE_ERR_RNR;
			e->nack_msn = msn;
			e->attempt = r->attempt;
			e->rnr_delay_us = (u16)MROCE_MIN(st->prm.rnr_delay_ns /
							 1000, 0xffff);
			return;
		}
	}
}
