// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Receive dispatch.  A decoded packet goes through three filters before it
 * touches a stream: the connection state, the path (psn -> SACK state, ACK
 * scheduling, ECN accounting) and the dsn window (exactly-once).  Only then
 * is it placed (responder) or matched to a posted READ/ATOMIC (requester).
 */
#include "internal.h"

/* Our stream @h names, if it is ours to take packets for; changes nothing. */
static struct mroce_stream *find_stream(struct mroce_conn *c,
					const struct mroce_hdr *h)
{
	struct mroce_stream *st;

	st = c->ops->stream_lookup(c->ctx, c, h->dst_stream);
	/* a QP only talks to the one peer QP it was connected to */
	if (!st || st->conn != c || st->peer != h->src_stream ||
	    st->state == MROCE_STREAM_IDLE)
		return NULL;
	return st;
}

/*
 * Is @h's msn beyond every message @st can take?  A request beyond the
 * responder's window [frontier, frontier + 256), or a response to a
 * message never posted.  A live sender never produces one: it has at most
 * 256 messages outstanding, from its oldest incomplete one, which is at or
 * above our frontier.  Only a forged packet, or a stale one of an earlier
 * incarnation of the peer QP (same QPN, msns restarted), does: it is
 * dropped and counted, and the stream carries on.  (The WINDOW status
 * stays in the wire format, but no NACK carries it any more: it failed
 * the peer's message and both QPs for one packet anyone could send.)
 * Below the window is a stale message, taken to be acknowledged.
 */
static bool msn_beyond(const struct mroce_stream *st,
		       const struct mroce_hdr *h)
{
	if (st->state != MROCE_STREAM_ACTIVE)
		return false;
	if (h->opcode == MROCE_OP_READ_RESP ||
	    h->opcode == MROCE_OP_ATOMIC_RESP)
		return !mroce_seq_lt(h->msn, st->tx_end);
	return (s32)(h->msn - st->rx_next) >= MROCE_STREAM_WINDOW;
}

/* Path bookkeeping of a sequenced packet whose psn was checked NEW or FAR. */
static void rx_path(struct mroce_conn *c, struct mroce_path *p,
		    const struct mroce_hdr *h, bool ce, u64 now)
{
	bool in_order = h->psn == p->rcv_nxt;
	bool asked, last;

	mroce_sack_commit(p, h->psn);
	p->stats.rx_pkts++;
	p->rcv_count++;
	if (ce) {
		p->rcv_ce++;
		p->rcv_ce_seen = 1;
		p->stats.rx_ce++;
	}
	p->rcv_last_ts = h->ts;
	p->rcv_last_ns = now;
	p->rcv_unacked++;
	if (mroce_seq_le(p->rcv_nxt, h->psn))
		p->rcv_nxt = h->psn + 1;
	c->ack_mask |= 1ull << p->id;
	/*
	 * Acknowledge at once when asked, when this packet opens a new gap
	 * (loss: the sender should hear of it now) or arrives behind the
	 * newest one (reordering: the sender may have given it up), or every
	 * ack_every packets.  An old hole does not count: the lost psn is
	 * never resent (its data goes out with a new psn), so the hole stays
	 * below the cumulative point until 256 psns later, and every packet
	 * in between would be acknowledged on its own.  A message's last
	 * packet asks too, but its ACK may wait briefly for an answer to
	 * carry it (mroce_ack_soft_resolve()); a retransmission's may not.
	 */
	asked = h->flags & MROCE_F_ACK_REQ;
	last = (h->flags & (MROCE_F_LAST | MROCE_F_RETX)) == MROCE_F_LAST;
	if (!in_order || p->rcv_unacked >= c->cfg.ack_every ||
	    (asked && !last))
		c->ack_now = 1;
	else if (asked)
		c->ack_soft = 1;	/* sets its own deadline if held */
	else if (!c->ack_at)
		c->ack_at = now + c->cfg.ack_delay_ns;
}

/*
 * May a packet whose psn is @ps on its path and whose dsn is @ds move the
 * receiver?  Each sequence number may move its state beyond its window
 * only when the other one is inside its own, so that no single forged
 * number, nor a stale packet, can drag a window (after which every genuine
 * packet would be a duplicate or late, acknowledged and never placed):
 *
 *   psn \ dsn   NEW        DUP          JUMP         OUTSIDE
 *   NEW         take       path only    take, drag   drop (rx_drop_dsn)
 *   FAR         take, drag path, drag   drop         drop (rx_drop_psn)
 *   LATE        dsn only   count dup    drop         drop (rx_drop_psn)
 *   DUP         dropped before the dsn is looked at (rx_dup, per path)
 *
 * FAR: 256 or more above the path's cumulative psn (mroce_sack_check());
 * JUMP: a window or more above the dsn base (mroce_dsn_check()).  A
 * duplicate dsn with a new psn is recorded on its path, so the sender's
 * scoreboard resolves the psn; a LATE psn is news only through a dsn
 * inside [base, base + window), and a duplicate below the base is not.
 * A FAR psn with a duplicate dsn forces the path's window up too: a
 * resend of something that arrived, whose ACKs were lost, may be all
 * the sender has left to send, and with the path's cumulative point on
 * a hole it abandoned (never filled: resends take new psns) nothing else
 * would ever move it; the resends would go unacknowledged until the
 * connection died (a READ response's job held all the while).
 * A dropped packet moves nothing: not the path's cumulative point, SACK
 * bits, counts or ACK schedule, not the dsn window, not a stream.  A
 * genuine packet can be both FAR (its path lost a packet 256 psns ago)
 * and the first to JUMP: it is dropped too, and taken when its
 * retransmission, with a new psn, comes after another packet moved one
 * of the windows.
 */
static bool rx_window_ok(struct mroce_conn *c, enum mroce_sack_result ps,
			 enum mroce_dsn_rx ds, u32 dsn)
{
	switch (ps) {
	case MROCE_SACK_NEW:
		if (ds != MROCE_DSN_OUTSIDE)
			return true;
		c->stats.rx_drop_dsn++;
		return false;
	case MROCE_SACK_FAR:
		if (ds == MROCE_DSN_NEW || ds == MROCE_DSN_DUP)
			return true;
		break;
	default:	/* LATE */
		if (dsn - c->rx_dsn_base < c->cfg.dsn_window)
			return true;
		break;
	}
	c->stats.rx_drop_psn++;
	return false;
}

static void rx_sequenced(struct mroce_conn *c, const struct mroce_pkt *pkt,
			 const struct mroce_rx_meta *m, u64 now)
{
	const struct mroce_hdr *h = &pkt->hdr;
	struct mroce_stream *st = NULL;
	enum mroce_sack_result ps;
	enum mroce_dsn_rx ds;
	struct mroce_path *p;
	u32 hint;

	/*
	 * The peer's path ids index our receive halves: any id below what we
	 * allocated is fine (it sends on min(its, our) paths; while an
	 * implicit accept has us sending on one path, it may still use more).
	 */
	if (h->path >= c->cfg.npaths) {
		c->stats.rx_drop_path++;
		return;
	}
	/* both numbers are checked before either commits anything */
	p = &c->paths[h->path];
	ps = mroce_sack_check(p, h->psn);
	if (ps == MROCE_SACK_DUP) {
		p->stats.rx_dup++;
		return;
	}
	ds = mroce_dsn_check(c, h->dsn);
	if (!rx_window_ok(c, ps, ds, h->dsn))
		return;
	/* news for a stream: its message window is the third check */
	if (ds != MROCE_DSN_DUP) {
		st = find_stream(c, h);
		if (st && msn_beyond(st, h)) {
			st->stats.rx_window++;
			c->stats.rx_drop_msn++;
			return;
		}
	}
	if (ps == MROCE_SACK_LATE)
		p->stats.rx_late++;	/* the sender gave it up */
	else
		rx_path(c, p, h, m->ce, now);
	if (ds == MROCE_DSN_DUP) {
		c->stats.rx_dup_dsn++;
		return;
	}
	mroce_dsn_commit(c, h->dsn);
	c->stats.rx_data++;
	c->rx_data_bytes += pkt->payload_len;
	if (c->share) {
		mroce_share_rx(c->share, c);
		mroce_share_mark(c->share, m->ce);
	}
	/*
	 * The sender's first data, or its share fell by more than 1/8 since
	 * our last ACK (a new sender in an incast): tell it now.  The delayed
	 * ACK would hold the hint up to ack_delay, and a connection that
	 * sprays its first window one packet per path never reaches ack_every
	 * on a path.
	 */
	hint = mroce_conn_rx_hint(c);
	if (hint != MROCE_RATE_NONE &&
	    (c->ack_hint == MROCE_RATE_NONE ||
	     hint < c->ack_hint - c->ack_hint / 8 ||
	     hint > c->ack_hint + c->ack_hint / 8))
		c->ack_now = 1;

	if (!st) {
		c->stats.rx_drop_stream++;
		/* responses to a vanished requester need no answer */
		if (h->opcode != MROCE_OP_READ_RESP &&
		    h->opcode != MROCE_OP_ATOMIC_RESP)
			mroce_orphan_nack(c, h);
		return;
	}
	st->touched = 1;
	if (h->opcode == MROCE_OP_READ_RESP ||
	    h->opcode == MROCE_OP_ATOMIC_RESP)
		mroce_stream_rx_resp(c, st, pkt, m, now);
	else
		mroce_stream_rx(c, st, pkt, m, now);
}

/* An ACK, or a data packet's ACK body: our deadlines as a sender move. */
static void rx_ack(struct mroce_conn *c, const struct mroce_pkt *pkt,
		   const void *buf, u64 now)
{
	c->timer_dirty = ~0ull;
	mroce_ack_rx(c, pkt, buf, now);
}

void mroce_conn_rx(struct mroce_conn *c, const struct mroce_pkt *pkt,
		   const void *buf, const struct mroce_rx_meta *m, u64 now)
{
	const struct mroce_hdr *h = &pkt->hdr;
	struct mroce_stream *st;

	c->stats.rx_pkts++;
	c->stats.rx_bytes += pkt->payload_len;

	switch (h->opcode) {
	case MROCE_OP_CONNECT:
	case MROCE_OP_ACCEPT:
		mroce_conn_on_hello(c, pkt, now);
		return;
	case MROCE_OP_RESET:
		mroce_conn_on_reset(c, pkt, now);
		return;
	case MROCE_OP_CHALLENGE:
		mroce_conn_on_challenge(c, pkt, now);
		return;
	default:
		break;
	}

	if (c->state == MROCE_CONN_CONNECTING && h->dst_conn == c->id &&
	    h->opcode != MROCE_OP_CLOSE)
		mroce_conn_implicit_accept(c, h, now);
	if (c->state != MROCE_CONN_ESTABLISHED || h->src_conn != c->peer_id) {
		/*
		 * Failed or closed here while the peer still sends: tell it
		 * (RESET, reason closed), or it finds out only through its
		 * own dead timer, after seconds of retransmissions.
		 */
		if ((c->state == MROCE_CONN_FAILED ||
		     c->state == MROCE_CONN_CLOSED) &&
		    h->src_conn == c->peer_id && h->opcode != MROCE_OP_CLOSE) {
			c->stats.rx_failed_conn++;
			c->reset_pending = 1;
			return;
		}
		c->stats.rx_drop_state++;
		return;
	}

	switch (h->opcode) {
	case MROCE_OP_CLOSE:
		mroce_conn_on_close(c, now);
		return;
	case MROCE_OP_PROBE:
		if (h->path >= c->cfg.npaths) {
			c->stats.rx_drop_path++;
			return;
		}
		c->paths[h->path].probe_echo_ts = h->ts;
		c->paths[h->path].probe_rcv_ns = now;
		c->probe_ack_mask |= 1ull << h->path;
		return;
	case MROCE_OP_PROBE_ACK:
		if (h->path >= c->npaths) {
			c->stats.rx_drop_path++;
			return;
		}
		/* only ACKs and answered probes move a sender's deadlines */
		c->timer_dirty = ~0ull;
		mroce_path_probe_acked(c, &c->paths[h->path],
				       pkt->probe_ack.echo_ts,
				       pkt->probe_ack.delay, now);
		return;
	case MROCE_OP_ACK:
		c->stats.rx_acks++;
		rx_ack(c, pkt, buf, now);
		mroce_ack_soft_resolve(c, now);
		return;
	case MROCE_OP_POLL:
		st = find_stream(c, h);
		if (st) {
			st->touched = 1;
			mroce_ackq_add(c, st, true);
		} else {
			c->stats.rx_drop_stream++;
			mroce_orphan_nack(c, h);
		}
		return;
	default:
		/*
		 * The data first, which an application may be polling for,
		 * then the ACK it carries (§4: they are independent).
		 */
		rx_sequenced(c, pkt, m, now);
		if ((h->flags & MROCE_F_ACK_BODY) &&
		    c->state == MROCE_CONN_ESTABLISHED) {
			c->stats.rx_ack_bodies++;
			rx_ack(c, pkt, buf, now);
		}
		mroce_ack_soft_resolve(c, now);
	}
}
