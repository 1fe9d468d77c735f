// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Transmit scheduling: what goes out next, and on which path.
 *
 * Priority: handshake, probe answers and probes, POLLs, ACKs (never held
 * back by congestion control), then data: retransmissions of lost packets
 * before new packets, new packets round-robin over the streams that have
 * something to send.  Data needs room in a path's window, in the
 * connection's window and dsn window, and the pacer's permission when the
 * receiver has sent a rate hint.  Packets are sprayed over the paths in
 * turn; a path whose window is full is skipped, so ECN marks that shrink a
 * path's window steer traffic to the others.
 */
#include "internal.h"

void mroce_retx_push(struct mroce_conn *c, const struct mroce_pktref *ref)
{
	/* a packet of a vanished stream will never go again: resolve it */
	if (!ref->st) {
		mroce_dsn_tx_ack(c, ref->dsn);
		return;
	}
	if (MROCE_WARN_ON(c->retx_tail - c->retx_head >= c->retx_cap))
		return;
	c->retx[c->retx_tail % c->retx_cap] = *ref;
	c->retx_tail++;
}

bool mroce_conn_busy(const struct mroce_conn *c)
{
	return mroce_conn_has_work(c) || c->ack_mask || c->ack_now ||
	       c->ack_soft ||
	       !mroce_list_empty(&c->ackq) || c->accept_pending ||
	       c->close_pending || c->challenge_pending || c->hello_now ||
	       c->state == MROCE_CONN_CONNECTING;
}

static void hdr_common(struct mroce_conn *c, struct mroce_pkt *pkt, u8 op,
		       const struct mroce_path *p, u64 now)
{
	memset(&pkt->hdr, 0, sizeof(pkt->hdr));
	pkt->hdr.opcode = op;
	pkt->hdr.dst_conn = op == MROCE_OP_CONNECT ? 0 : c->peer_id;
	pkt->hdr.src_conn = c->id;
	pkt->hdr.path = p->id;
	pkt->hdr.ts = (u32)now;
}

static enum mroce_poll emit_ctrl(struct mroce_conn *c, struct mroce_pkt *pkt,
				 const struct mroce_path *p, void *buf,
				 struct mroce_tx *tx)
{
	memset(tx, 0, sizeof(*tx));
	tx->hdr_len = mroce_wire_encode(pkt, buf);
	tx->sport = p->sport;
	tx->path = p->id;
	tx->src = MROCE_SRC_NONE;
	tx->opcode = pkt->hdr.opcode;
	c->stats.tx_ctrl++;
	c->stats.tx_pkts++;
	c->stats.tx_bytes += tx->hdr_len;
	return MROCE_POLL_PACKET;
}

static bool poll_ctrl(struct mroce_conn *c, u64 now, void *buf,
		      struct mroce_tx *tx)
{
	struct mroce_path *p = &c->paths[0];
	struct mroce_pkt pkt;
	u64 probing;
	u32 i;

	memset(&pkt, 0, sizeof(pkt));
	/*
	 * CONNECT again while the peer's parameters are unknown: when the
	 * hello timer says, or at once with a new cookie (that costs no try:
	 * the peer answered).
	 */
	if ((c->state == MROCE_CONN_CONNECTING ||
	     (c->state == MROCE_CONN_ESTABLISHED && !c->peer_nonce)) &&
	    (c->hello_now || (c->hello_at <= now &&
			      c->hello_tries <= c->cfg.hello_retries))) {
		hdr_common(c, &pkt, MROCE_OP_CONNECT, p, now);
		pkt.hello.echo_nonce = c->cookie;
		goto hello;
	}
	c->hello_now = 0;
	if (c->accept_pending) {
		c->accept_pending = 0;
		c->accept_next = now + c->cfg.rto_min_ns;
		hdr_common(c, &pkt, MROCE_OP_ACCEPT, p, now);
		pkt.hello.echo_nonce = c->peer_nonce;
		if (c->share)
			pkt.hello.rate_hint = mroce_share_grant(c->share, c);
		goto hello;
	}
	if (c->close_pending) {
		c->close_pending = 0;
		hdr_common(c, &pkt, MROCE_OP_CLOSE, p, now);
		emit_ctrl(c, &pkt, p, buf, tx);
		return true;
	}
	if (c->challenge_pending) {
		c->challenge_pending = 0;
		if (c->state == MROCE_CONN_ESTABLISHED) {
			hdr_common(c, &pkt, MROCE_OP_CHALLENGE, p, now);
			pkt.challenge.token = c->challenge;
			c->stats.tx_challenges++;
			emit_ctrl(c, &pkt, p, buf, tx);
			return true;
		}
	}
	/*
	 * One RESET per rto_min at most: a burst of packets gets one.  The
	 * answer to a CHALLENGE goes regardless: the peer sends at most one
	 * per its initial RTO, and waits for exactly this.
	 */
	if (c->reset_pending) {
		c->reset_pending = 0;
		if (now >= c->reset_next || c->reset_echo) {
			if (!c->reset_echo)
				c->reset_next = now + c->cfg.rto_min_ns;
			hdr_common(c, &pkt, MROCE_OP_RESET, p, now);
			pkt.reset.reason = MROCE_RESET_CLOSED;
			pkt.reset.echo = c->reset_echo;
			c->reset_echo = 0;
			emit_ctrl(c, &pkt, p, buf, tx);
			return true;
		}
	}
	if (c->state != MROCE_CONN_ESTABLISHED)
		return false;

	if (c->probe_ack_mask) {
		p = &c->paths[mroce_ctz64(c->probe_ack_mask)];
		c->probe_ack_mask &= c->probe_ack_mask - 1;
		hdr_common(c, &pkt, MROCE_OP_PROBE_ACK, p, now);
		pkt.probe_ack.echo_ts = p->probe_echo_ts;
		pkt.probe_ack.delay = (u32)MROCE_MIN(now - p->probe_rcv_ns,
						     0xffffffffull);
		emit_ctrl(c, &pkt, p, buf, tx);
		return true;
	}
	/* the paths of probe_mask in order: the first due probe goes */
	for (probing = c->probe_mask; probing; probing &= probing - 1) {
		i = mroce_ctz64(probing);
		if (i >= c->npaths)
			break;
		p = &c->paths[i];
		if (p->state != MROCE_PATH_PROBING || p->probe_at > now)
			continue;
		p->probe_at = now + c->cfg.probe_interval_ns;
		c->timer_dirty |= 1ull << i;
		p->probes_unanswered++;
		p->stats.probes++;
		hdr_common(c, &pkt, MROCE_OP_PROBE, p, now);
		pkt.hdr.flags = MROCE_F_ACK_REQ;
		emit_ctrl(c, &pkt, p, buf, tx);
		return true;
	}
	if (!mroce_list_empty(&c->pollq)) {
		struct mroce_stream *st = mroce_list_entry(c->pollq.next,
							   struct mroce_stream,
							   pollq);

		mroce_list_del(&st->pollq);
		p = &c->paths[c->rr_path % c->npaths];
		hdr_common(c, &pkt, MROCE_OP_POLL, p, now);
		pkt.hdr.flags = MROCE_F_ACK_REQ;
		pkt.hdr.dst_stream = st->peer;
		pkt.hdr.src_stream = st->id;
		pkt.hdr.msn = st->tx_una;
		emit_ctrl(c, &pkt, p, buf, tx);
		return true;
	}
	return false;

hello:
	pkt.hello.nonce = c->nonce;
	pkt.hello.max_paths = (u16)c->cfg.npaths;
	pkt.hello.max_payload = (u16)c->cfg.mss;	/* what we receive */
	pkt.hello.dsn_window = c->cfg.dsn_window;
	if (pkt.hdr.opcode == MROCE_OP_CONNECT && c->hello_now) {
		c->hello_now = 0;
	} else if (pkt.hdr.opcode == MROCE_OP_CONNECT) {
		/* rto_init, then doubling: 1, 2, 4 ... times rto_init */
		c->hello_at = now + (c->cfg.rto_init_ns <<
				     MROCE_MIN(c->hello_tries, 10u));
		c->hello_tries++;
	}
	emit_ctrl(c, &pkt, p, buf, tx);
	return true;
}

/* Can @p take a packet of @len bytes now? */
static bool path_room(const struct mroce_path *p, u32 len)
{
	if (mroce_path_ring_full(p))
		return false;
	switch (p->state) {
	case MROCE_PATH_ACTIVE:
		return !p->inflight_pkts || p->inflight + len <= p->cc.cwnd;
	case MROCE_PATH_SUSPECT:
		return !p->inflight_pkts;
	default:
		return false;
	}
}

/* Spray: the next path in turn with room; @pref first if it has room. */
static struct mroce_path *pick_path(struct mroce_conn *c, u32 len,
				    struct mroce_path *pref)
{
	u32 i, idx;

	if (pref && path_room(pref, len))
		return pref;
	for (i = 0; i < c->npaths; i++) {
		idx = (c->rr_path + i) % c->npaths;
		if (path_room(&c->paths[idx], len)) {
			c->rr_path = idx + 1;
			return &c->paths[idx];
		}
	}
	return NULL;
}

static bool conn_room(const struct mroce_conn *c, u32 len)
{
	return !c->inflight || c->inflight + len <= c->cc.cwnd;
}

/*
 * Pacing to the receiver's hint: @len bytes leave at @now.  A sender the
 * pacer held back and that comes late (a coarse timer) may catch up by
 * pace_burst at line rate.  One that a window or an empty queue held back
 * may be one packet ahead, no more: its clock restarts a packet back.
 * Catching up a whole burst after a window opened put bursts above the
 * hint on the wire, and in an incast the bursts kept the receiver's queue,
 * its ECN marks and so the small windows going.  No credit at all cost a
 * 64-host all-to-all (senders briefly window-limited) 3.5% of its goodput.
 */
static void pace(struct mroce_conn *c, u32 len, u64 now)
{
	u64 burst, start;

	if (!mroce_hint_paced(c))
		return;
	burst = mroce_pace_ns(c->pace_late_ok ? c->cfg.pace_burst :
			      c->tx_mss + MROCE_HDR_LEN, c->rate_hint);
	start = c->pace_next_ns;
	if (start + burst < now)
		start = now - burst;
	c->pace_next_ns = start + mroce_pace_ns(len + MROCE_HDR_LEN,
						c->rate_hint);
}

/* An earlier window-filling request of @p has not been answered yet. */
static bool ackreq_pending(const struct mroce_path *p)
{
	const struct mroce_txent *e;

	if (!p->ackreq_on || mroce_seq_lt(p->ackreq_psn, p->snd_una))
		return false;
	e = mroce_path_ent(p, p->ackreq_psn);
	return e->state == MROCE_TXE_INFLIGHT;
}

/* The smallest ACK body worth holding an ACK for: one path, one stream. */
#define MROCE_ACK_BODY_MIN	(MROCE_ACK_EXT_LEN + MROCE_ACK_PATH_LEN + \
				 MROCE_ACK_STREAM_LEN)

/*
 * A data packet whose headers end at @hlen, with @len bytes of payload:
 * the ACK owed to the peer rides along if it fits (§4, ACK body).  Returns
 * the new end of the headers.
 */
static u32 add_ack_body(struct mroce_conn *c, u16 flags, u32 len, bool retx,
			u64 now, void *buf, u32 cap, u32 hlen)
{
	u32 room, end;

	/*
	 * What this packet may add and still be no larger than a full one
	 * (the largest header and tx_mss fit the path MTU), and the buffer.
	 */
	room = MROCE_MIN(cap, MROCE_MAX_HDR_LEN + c->tx_mss);
	room = room > hlen + len ? room - len : hlen;
	/*
	 * New data with room for an ACK: the peer's next message may wait a
	 * moment for it to come back the same way (§11), as an answer would.
	 */
	if (!retx && room - hlen >= MROCE_ACK_BODY_MIN)
		c->ack_hold_ok = 1;
	if (!c->ack_mask && !c->norphan && mroce_list_empty(&c->ackq))
		return hlen;
	end = mroce_ack_body(c, now, (u8 *)buf, hlen, room);
	if (!end)
		return hlen;
	mroce_put_be16(flags | MROCE_F_ACK_BODY, (u8 *)buf + 2);
	return end;
}

static void emit_data(struct mroce_conn *c, struct mroce_path *p,
		      const struct mroce_pktref *ref, bool retx, u64 now,
		      void *buf, u32 cap, struct mroce_tx *tx)
{
	struct mroce_pkt pkt;

	memset(tx, 0, sizeof(*tx));
	hdr_common(c, &pkt, 0, p, now);
	pkt.hdr.psn = p->snd_nxt;
	mroce_stream_fill(ref, &pkt, tx);
	if (retx) {
		pkt.hdr.flags |= MROCE_F_RETX | MROCE_F_ACK_REQ;
		p->stats.retx_pkts++;
		c->stats.tx_retx++;
		tx->retx = 1;
	}
	/*
	 * New data leaving an idle connection starts the dead clock; a
	 * retransmission never does, even of the last packet lost.
	 */
	if (!retx && !mroce_conn_outstanding(c))
		mroce_conn_progress(c, now);
	/* before the peer's parameters: what its ACCEPT must allow */
	if (unlikely(!c->peer_nonce) && ref->len > c->implicit_len)
		c->implicit_len = (u16)ref->len;
	mroce_path_sent(c, p, ref, now);
	/*
	 * The packet that fills the path's (or the connection's) window asks
	 * for an immediate ACK: nothing more will follow it until one comes,
	 * and a window smaller than ack_every packets would otherwise wait
	 * out the receiver's delayed-ACK timer every round trip.  Once per
	 * round trip of the path: a window-limited sender fills its window
	 * with every packet an ACK lets out, and asking each time would turn
	 * ACK coalescing off exactly when the fabric is congested.
	 */
	if ((!path_room(p, c->tx_mss) || !conn_room(c, c->tx_mss)) &&
	    !ackreq_pending(p)) {
		pkt.hdr.flags |= MROCE_F_ACK_REQ;
		p->ackreq_psn = pkt.hdr.psn;
		p->ackreq_on = 1;
	}
	tx->hdr_len = mroce_wire_encode(&pkt, buf);
	if (c->cfg.ack_bodies)
		tx->hdr_len = add_ack_body(c, pkt.hdr.flags, ref->len, retx,
					   now, buf, cap, tx->hdr_len);
	tx->sport = p->sport;
	tx->path = p->id;
	tx->ect = 1;
	tx->opcode = pkt.hdr.opcode;
	p->stats.tx_pkts++;
	p->stats.tx_bytes += ref->len;
	c->stats.tx_pkts++;
	c->stats.tx_data++;
	c->stats.tx_bytes += tx->hdr_len + ref->len;
	pace(c, ref->len, now);
}

/* A lost packet still worth sending, or NULL. */
static struct mroce_pktref *retx_peek(struct mroce_conn *c)
{
	struct mroce_pktref *ref;

	while (c->retx_head != c->retx_tail) {
		ref = &c->retx[c->retx_head % c->retx_cap];
		if (ref->st && !mroce_dsn_tx_acked(c, ref->dsn) &&
		    mroce_pktref_live(ref))
			return ref;
		/*
		 * Not needed any more (its message completed, failed or went
		 * to a new attempt): the dsn is resolved without being acked,
		 * or the dsn window would never move past it.
		 */
		mroce_dsn_tx_ack(c, ref->dsn);
		c->retx_head++;
	}
	return NULL;
}

static enum mroce_poll poll_data(struct mroce_conn *c, u64 now, void *buf,
				 u32 cap, struct mroce_tx *tx)
{
	struct mroce_pktref *ref, nref;
	struct mroce_stream *st;
	struct mroce_path *p;

	c->paced = 0;
	if (mroce_hint_paced(c) &&
	    c->pace_next_ns > now + c->cfg.pace_slack_ns &&
	    (c->retx_head != c->retx_tail || !mroce_list_empty(&c->sched))) {
		c->stats.pace_waits++;
		c->paced = 1;
		c->pace_late_ok = 1;
		return MROCE_POLL_WAIT;
	}

	ref = retx_peek(c);
	if (ref) {
		if (!conn_room(c, ref->len))
			return MROCE_POLL_IDLE;
		/*
		 * Back on the path that lost it while that path is healthy: a
		 * path's losses are detected by its later packets, so a resend
		 * elsewhere would leave the original path's tail unexposed.
		 */
		p = &c->paths[ref->path < c->npaths ? ref->path : 0];
		p = pick_path(c, ref->len,
			      p->state == MROCE_PATH_ACTIVE ? p : NULL);
		if (!p)
			return MROCE_POLL_IDLE;
		nref = *ref;
		c->retx_head++;
		emit_data(c, p, &nref, true, now, buf, cap, tx);
		return MROCE_POLL_PACKET;
	}

	while (!mroce_list_empty(&c->sched)) {
		if (c->tx_dsn_nxt - c->tx_dsn_una >= c->tx_dsn_window)
			return MROCE_POLL_IDLE;
		if (!conn_room(c, c->tx_mss))
			return MROCE_POLL_IDLE;
		p = pick_path(c, c->tx_mss, NULL);
		if (!p)
			return MROCE_POLL_IDLE;
		st = mroce_list_entry(c->sched.next, struct mroce_stream, sched);
		mroce_list_del(&st->sched);
		if (!mroce_stream_next(c, st, &nref, now))
			continue;	/* blocked (fence, READ limit): later */
		nref.dsn = c->tx_dsn_nxt++;
		emit_data(c, p, &nref, false, now, buf, cap, tx);
		/* round-robin: back of the line if it has more */
		if (mroce_stream_has_tx(st))
			mroce_sched_add(c, st);
		return MROCE_POLL_PACKET;
	}
	return MROCE_POLL_IDLE;
}

enum mroce_poll mroce_conn_poll_tx(struct mroce_conn *c, u64 now, void *buf,
				   u32 cap, struct mroce_tx *tx)
{
	enum mroce_poll r;

	if (MROCE_WARN_ON(cap < MROCE_TX_BUF_MIN))
		return MROCE_POLL_IDLE;
	if (poll_ctrl(c, now, buf, tx))
		return MROCE_POLL_PACKET;
	if (c->state != MROCE_CONN_ESTABLISHED)
		return MROCE_POLL_IDLE;
	mroce_ack_soft_resolve(c, now);
	if ((c->ack_now || (c->ack_at && c->ack_at <= now) || c->norphan) &&
	    mroce_ack_build(c, now, (u8 *)buf, cap, tx)) {
		c->stats.tx_pkts++;
		c->stats.tx_bytes += tx->hdr_len;
		return MROCE_POLL_PACKET;
	}
	r = poll_data(c, now, buf, cap, tx);
	if (r == MROCE_POLL_IDLE)
		c->pace_late_ok = 0;	/* a window or no data holds it now */
	return r;
}
