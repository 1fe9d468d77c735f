// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ACK packets, both ways.
 *
 * Sender: each path block of an ACK goes to its path's scoreboard
 * (path.c), each stream entry to its stream's requester (requester.c); the
 * rate hint is taken only when the path blocks vouch for it.
 *
 * Receiver: one ACK packet carries a block for every path with news and an
 * entry for every stream whose frontier moved or that has a NACK; a data
 * packet may carry the same as its ACK body.
 */
#include "internal.h"

/*
 * A new rate hint.  A higher one also shortens the wait the pacer already
 * scheduled at the old rate: the receiver lowers its hints while it drains
 * its queue, and a packet paced at 1/8 of the share would otherwise hold
 * the sender back 8 packet times after the hint came back.
 */
static void ack_hint(struct mroce_conn *c, u32 hint, u64 now)
{
	u32 old = c->rate_hint;

	c->rate_hint = hint;
	if (old == MROCE_RATE_NONE || hint <= old || c->pace_next_ns <= now)
		return;
	if (!mroce_hint_paced(c)) {
		c->pace_next_ns = now;
		return;
	}
	c->pace_next_ns = now + mroce_div64(MROCE_MIN(c->pace_next_ns - now,
						      0xffffffffull) * old,
					    hint);
}

void mroce_ack_rx(struct mroce_conn *c, const struct mroce_pkt *pkt,
		  const void *buf, u64 now)
{
	struct mroce_ack_path ap;
	struct mroce_ack_stream e;
	struct mroce_stream *st;
	struct mroce_path *p;
	bool vouched = false;
	unsigned int i;

	for (i = 0; i < pkt->ack.npaths; i++) {
		mroce_wire_ack_path(buf, pkt, i, &ap);
		if (ap.path >= c->npaths) {
			c->stats.rx_drop_ack++;
			continue;
		}
		p = &c->paths[ap.path];
		/* a block about psns this path has in the air (protocol.md 15) */
		vouched |= mroce_seq_le(ap.cum_psn, p->snd_nxt) &&
			   mroce_seq_le(p->snd_una, ap.cum_psn + MROCE_PATH_WINDOW);
		mroce_path_on_ack(c, p, &ap, now);
	}
	/*
	 * The connection ids alone do not make a rate hint believed: one
	 * forged ACK would hold the sender to any rate.  Its path blocks must
	 * speak of packets in flight, which only the receiver sees.
	 */
	if (pkt->ack.rate_hint && vouched)
		ack_hint(c, pkt->ack.rate_hint, now);
	for (i = 0; i < pkt->ack.nstreams; i++) {
		mroce_wire_ack_stream(buf, pkt, i, &e);
		st = c->ops->stream_lookup(c->ctx, c, e.stream);
		if (!st || st->conn != c) {
			c->stats.rx_drop_stream++;
			continue;
		}
		mroce_stream_on_entry(c, st, &e, now);
	}
}

/* Pick the path an ACK leaves on: the one it mostly answers, if alive. */
static struct mroce_path *ack_path_out(struct mroce_conn *c, u32 hint)
{
	u32 i;

	if (hint < c->npaths && c->paths[hint].state == MROCE_PATH_ACTIVE)
		return &c->paths[hint];
	for (i = 0; i < c->npaths; i++)
		if (c->paths[i].state == MROCE_PATH_ACTIVE)
			return &c->paths[i];
	return &c->paths[hint < c->npaths ? hint : 0];
}

/*
 * Write the owed ACK blocks at buf[off], as many as fit below @cap: paths
 * with news, then NACKs for unknown streams, then streams with news.
 * Fills @ext's counts and hint; returns the end, or 0 if nothing was owed.
 * An ACK only partly written stays due for the rest.
 */
static u32 ack_blocks(struct mroce_conn *c, u64 now, u8 *buf, u32 off,
		      u32 cap, struct mroce_ack_ext *ext, u32 *first,
		      bool *ece)
{
	u64 mask = c->ack_mask, done = 0;
	struct mroce_ack_stream e;
	struct mroce_stream *st;
	struct mroce_path *p;
	u32 np = 0, ns = 0;

	while (mask && off + MROCE_ACK_PATH_LEN <= cap) {
		p = &c->paths[mroce_ctz64(mask)];
		mask &= mask - 1;
		if (!np)
			*first = p->id;
		mroce_sack_put(p, buf + off, now);
		off += MROCE_ACK_PATH_LEN;
		np++;
		done |= 1ull << p->id;
		p->rcv_unacked = 0;
		if (p->rcv_ce_seen)
			*ece = true;
		p->rcv_ce_seen = 0;
	}
	c->ack_mask &= ~done;
	while (c->norphan && ns < 255 && off + MROCE_ACK_STREAM_LEN <= cap) {
		mroce_wire_put_ack_stream(&c->orphan[--c->norphan], buf + off);
		off += MROCE_ACK_STREAM_LEN;
		ns++;
	}
	while (!mroce_list_empty(&c->ackq) && ns < 255 &&
	       off + MROCE_ACK_STREAM_LEN <= cap) {
		st = mroce_list_entry(c->ackq.next, struct mroce_stream, ackq);
		mroce_list_del(&st->ackq);
		mroce_stream_entry(st, &e);
		mroce_wire_put_ack_stream(&e, buf + off);
		off += MROCE_ACK_STREAM_LEN;
		ns++;
	}
	if (!c->ack_mask && !c->norphan && mroce_list_empty(&c->ackq)) {
		c->ack_now = 0;
		c->ack_at = 0;
	}
	if (!np && !ns)
		return 0;
	memset(ext, 0, sizeof(*ext));
	ext->rate_hint = mroce_conn_rx_hint(c);
	c->ack_hint = ext->rate_hint;
	ext->npaths = (u8)np;
	ext->nstreams = (u8)ns;
	return off;
}

u32 mroce_ack_build(struct mroce_conn *c, u64 now, u8 *buf, u32 cap,
		    struct mroce_tx *tx)
{
	struct mroce_path *p;
	struct mroce_pkt pkt;
	bool ece = false;
	u32 off, first = 0;

	off = ack_blocks(c, now, buf, MROCE_HDR_LEN + MROCE_ACK_EXT_LEN, cap,
			 &pkt.ack, &first, &ece);
	if (!off)
		return 0;

	/* mroce_wire_encode() of an ACK reads the header and pkt.ack only */
	memset(&pkt.hdr, 0, sizeof(pkt.hdr));
	p = ack_path_out(c, first);
	pkt.hdr.opcode = MROCE_OP_ACK;
	pkt.hdr.flags = ece ? MROCE_F_ECE : 0;
	pkt.hdr.dst_conn = c->peer_id;
	pkt.hdr.src_conn = c->id;
	pkt.hdr.path = p->id;
	pkt.hdr.ts = (u32)now;
	mroce_wire_encode(&pkt, buf);

	memset(tx, 0, sizeof(*tx));
	tx->hdr_len = off;
	tx->sport = p->sport;
	tx->path = p->id;
	tx->src = MROCE_SRC_NONE;
	tx->opcode = MROCE_OP_ACK;
	c->stats.tx_acks++;
	return off;
}

/*
 * A data packet whose headers end at buf[off] carries what ACK is owed, as
 * much as fits below @cap (§4, ACK body; the caller sets the flag).
 * Returns the new end of the headers, or 0 if it carries none.  ECE is not
 * carried: the path blocks' ce_count is what senders act on.
 */
u32 mroce_ack_body(struct mroce_conn *c, u64 now, u8 *buf, u32 off, u32 cap)
{
	struct mroce_ack_ext ext;
	u32 end, first = 0;
	bool ece = false;

	if (off + MROCE_ACK_EXT_LEN + MROCE_ACK_STREAM_LEN > cap)
		return 0;
	end = ack_blocks(c, now, buf, off + MROCE_ACK_EXT_LEN, cap, &ext,
			 &first, &ece);
	if (!end)
		return 0;
	mroce_wire_put_ack_ext(&ext, buf + off);
	c->stats.tx_ack_bodies++;
	return end;
}
