/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Functions the core's files share with each other and nobody else.
 * Data flows: rx.c dispatches a packet to responder.c (placement, frontier),
 * to requester.c (READ/ATOMIC responses) or to ack.c, which hands each path
 * block to path.c (scoreboard, loss, congestion) and each stream entry to
 * requester.c; tx.c picks what goes next; timers.c runs every deadline;
 * conn.c owns setup and teardown.
 */
#ifndef MROCE_CORE_INTERNAL_H
#define MROCE_CORE_INTERNAL_H

#include "conn.h"
#include "share.h"

#define NS_PER_SEC	1000000000ull

/* ---- conn.c ---- */
void mroce_conn_fail(struct mroce_conn *c, u32 reason);
void mroce_conn_implicit_accept(struct mroce_conn *c,
				const struct mroce_hdr *h, u64 now);
void mroce_conn_on_hello(struct mroce_conn *c, const struct mroce_pkt *pkt,
			 u64 now);
/* The proofs of protocol.md 6.3 (conn.c). */
void mroce_conn_on_reset(struct mroce_conn *c, const struct mroce_pkt *pkt,
			 u64 now);
void mroce_conn_on_close(struct mroce_conn *c, u64 now);
void mroce_conn_on_challenge(struct mroce_conn *c,
			     const struct mroce_pkt *pkt, u64 now);
u16 mroce_pick_sport(struct mroce_conn *c);
/* A timeout for stream-level waits: the smallest RTO of a live path. */
u64 mroce_conn_rto(const struct mroce_conn *c);
/* A probe timeout: two RTTs of the fastest live path, at least tlp_min. */
u64 mroce_conn_pto(const struct mroce_conn *c);
u64 mroce_rand(struct mroce_conn *c);

/* A stream has packets to send: put it on the scheduler ring. */
static inline void mroce_sched_add(struct mroce_conn *c,
				   struct mroce_stream *st)
{
	if (!mroce_list_linked(&st->sched))
		mroce_list_add_tail(&st->sched, &c->sched);
}

/* A path's tail-loss probe timeout (timers.c; the fuzzers' oracle too). */
static inline u64 mroce_tlp_timeout(const struct mroce_conn *c,
				    const struct mroce_path *p)
{
	/* without a sample, the RTT is unknown: wait a whole initial RTO */
	u64 t;

	if (!p->rtt.samples)
		return p->rtt.rto;
	/*
	 * Two RTTs, or the RTT plus its variance when queues make it jumpy,
	 * plus the delay the receiver may hold an ACK: a probe that fires
	 * before an ACK could have come back only duplicates data.
	 */
	t = MROCE_MAX(2 * p->rtt.srtt, p->rtt.srtt + 4 * p->rtt.rttvar);
	return MROCE_MAX(t + c->cfg.ack_delay_ns, c->cfg.tlp_min_ns);
}

/* @p may now have a deadline: mroce_conn_next_timer() must look at it. */
static inline void mroce_timer_path(struct mroce_conn *c,
				    const struct mroce_path *p)
{
	c->timer_mask |= 1ull << p->id;
	c->timer_dirty |= 1ull << p->id;
}

/*
 * A message was received whole (its last packet asked for an ACK, or its
 * stream's frontier moved): the ACK goes at once, or, when data going the
 * other way may soon carry it, by ack_hold_ns (§11).
 */
static inline void mroce_ack_soft_resolve(struct mroce_conn *c, u64 now)
{
	u64 at;

	if (!c->ack_soft)
		return;
	c->ack_soft = 0;
	if (c->ack_now)
		return;
	if (!c->ack_hold_ok || !c->cfg.ack_hold_ns || !c->cfg.ack_bodies) {
		c->ack_now = 1;
		return;
	}
	c->ack_hold_ok = 0;
	at = now + MROCE_MIN(c->cfg.ack_hold_ns, c->cfg.ack_delay_ns);
	if (!c->ack_at || c->ack_at > at)
		c->ack_at = at;
	c->stats.ack_holds++;
}

/* A stream entry (frontier / NACK) should go out with the next ACK. */
static inline void mroce_ackq_add(struct mroce_conn *c,
				  struct mroce_stream *st, bool now)
{
	if (!mroce_list_linked(&st->ackq))
		mroce_list_add_tail(&st->ackq, &c->ackq);
	if (now)
		c->ack_now = 1;
}

void mroce_waitq_arm(struct mroce_conn *c, struct mroce_stream *st, u64 at);

/* ---- dsn.c: exactly-once bookkeeping ---- */
static inline bool mroce_bit_test(const u64 *bits, u32 n, u32 mask)
{
	n &= mask;
	return bits[n / 64] >> (n % 64) & 1;
}

static inline void mroce_bit_set(u64 *bits, u32 n, u32 mask)
{
	n &= mask;
	bits[n / 64] |= 1ull << (n % 64);
}

static inline void mroce_bit_clear(u64 *bits, u32 n, u32 mask)
{
	n &= mask;
	bits[n / 64] &= ~(1ull << (n % 64));
}

#define MROCE_DSN_MASK	(MROCE_DSN_WINDOW - 1)

/* The sender's window of acknowledged dsns; inline: once per packet acked. */
static inline bool mroce_dsn_tx_acked(const struct mroce_conn *c, u32 dsn)
{
	if (mroce_seq_lt(dsn, c->tx_dsn_una))
		return true;
	if (!mroce_seq_lt(dsn, c->tx_dsn_nxt))
		return false;
	return mroce_bit_test(c->tx_dsn_acked, dsn, MROCE_DSN_MASK);
}

/*
 * tx_dsn_una was just acknowledged: move it past it and the run of
 * acknowledged dsns behind it (out of line: it keeps the inline part of
 * mroce_dsn_tx_ack() small where it is inlined).
 */
void mroce_dsn_tx_advance(struct mroce_conn *c);

/* Returns true if @dsn was not acknowledged before. */
static inline bool mroce_dsn_tx_ack(struct mroce_conn *c, u32 dsn)
{
	u32 d = dsn - c->tx_dsn_una;

	/* outside [una, nxt) is old or never sent */
	if (d >= c->tx_dsn_nxt - c->tx_dsn_una ||
	    mroce_bit_test(c->tx_dsn_acked, dsn, MROCE_DSN_MASK))
		return false;
	if (d) {	/* una itself is still missing: nothing to advance */
		mroce_bit_set(c->tx_dsn_acked, dsn, MROCE_DSN_MASK);
		return true;
	}
	mroce_dsn_tx_advance(c);
	return true;
}

enum mroce_dsn_rx {
	MROCE_DSN_NEW,		/* inside the window, not seen before */
	MROCE_DSN_DUP,		/* seen, or at most a window below it */
	MROCE_DSN_OUTSIDE,	/* further below, or too far above */
	MROCE_DSN_JUMP,		/* above the window: drags it (check only) */
};

/*
 * How far above the receive window's base a dsn may drag it: the sender
 * abandons at most what it sent, far less than this.  A dsn beyond is
 * dropped whatever its psn says.
 */
#define MROCE_DSN_JUMP_MAX	(1u << 30)

/* Classify @dsn against the receive window, changing nothing (rx.c). */
enum mroce_dsn_rx mroce_dsn_check(const struct mroce_conn *c, u32 dsn);
/* Record @dsn, checked NEW or JUMP (a JUMP drags the window up). */
void mroce_dsn_commit(struct mroce_conn *c, u32 dsn);
/* Check and commit in one: NEW (a JUMP included), DUP or OUTSIDE. */
enum mroce_dsn_rx mroce_dsn_rx(struct mroce_conn *c, u32 dsn);

/* ---- requester.c and responder.c: what a message's opcode asks ---- */
static inline bool mroce_op_is_read_atomic(u8 op)
{
	return op == MROCE_OP_READ_REQ || op == MROCE_OP_CMP_SWAP ||
	       op == MROCE_OP_FETCH_ADD;
}

static inline bool mroce_op_consumes_recv(u8 op)
{
	return op == MROCE_OP_SEND || op == MROCE_OP_SEND_IMM ||
	       op == MROCE_OP_WRITE_IMM;
}

static inline bool mroce_op_has_payload(u8 op)
{
	return op == MROCE_OP_WRITE || op == MROCE_OP_WRITE_IMM ||
	       op == MROCE_OP_SEND || op == MROCE_OP_SEND_IMM;
}

/* ---- requester.c: a stream's send side ---- */
/* Next packet of @st (response jobs first, then posted messages). */
bool mroce_stream_next(struct mroce_conn *c, struct mroce_stream *st,
		       struct mroce_pktref *ref, u64 now);
/*
 * When the oldest incomplete message of @st fails for want of progress
 * (requester.c, stall_bound()); 0: nothing outstanding.
 */
u64 mroce_stream_stall_at(const struct mroce_conn *c,
			  const struct mroce_stream *st);
/* Is a remembered packet still worth (re)sending? */
bool mroce_pktref_live(const struct mroce_pktref *ref);
/* Fill the opcode, stream fields and extension of a packet. */
void mroce_stream_fill(const struct mroce_pktref *ref, struct mroce_pkt *pkt,
		       struct mroce_tx *tx);
/* A packet of @ref was acknowledged on a path (exactly once per dsn). */
void mroce_stream_pkt_acked(struct mroce_conn *c,
			    const struct mroce_pktref *ref, u64 now);
void mroce_stream_rx_resp(struct mroce_conn *c, struct mroce_stream *st,
			  const struct mroce_pkt *pkt,
			  const struct mroce_rx_meta *m, u64 now);
void mroce_stream_on_entry(struct mroce_conn *c, struct mroce_stream *st,
			   const struct mroce_ack_stream *e, u64 now);
void mroce_stream_on_wake(struct mroce_conn *c, struct mroce_stream *st,
			  u64 now);
bool mroce_stream_has_tx(const struct mroce_stream *st);
/* The completion status of a message the peer refused with @err. */
u8 mroce_refusal_wc(u8 err);

/* ---- responder.c: a stream's receive side ---- */
void mroce_stream_rx(struct mroce_conn *c, struct mroce_stream *st,
		     const struct mroce_pkt *pkt, const struct mroce_rx_meta *m,
		     u64 now);
void mroce_stream_rx_advance(struct mroce_conn *c, struct mroce_stream *st,
			     u64 now);
void mroce_stream_entry(struct mroce_stream *st, struct mroce_ack_stream *e);

/* ---- ack.c ---- */
void mroce_ack_rx(struct mroce_conn *c, const struct mroce_pkt *pkt,
		  const void *buf, u64 now);
u32 mroce_ack_build(struct mroce_conn *c, u64 now, u8 *buf, u32 cap,
		    struct mroce_tx *tx);
u32 mroce_ack_body(struct mroce_conn *c, u64 now, u8 *buf, u32 off, u32 cap);
/* The rate hint our ACKs carry now (share.c, or rx_hint without a share). */
static inline u32 mroce_conn_rx_hint(const struct mroce_conn *c)
{
	return c->share ? mroce_share_hint(c->share) : c->rx_hint;
}

/* ---- path.c: the sender's scoreboard of each path ---- */
/* One ACK block about @p: acknowledgements, losses, ECN, RTT. */
void mroce_path_on_ack(struct mroce_conn *c, struct mroce_path *p,
		       const struct mroce_ack_path *ap, u64 now);
/* Move snd_una past resolved packets: the RTO runs from the oldest live one. */
void mroce_path_advance(struct mroce_path *p);
void mroce_path_detect_losses(struct mroce_conn *c, struct mroce_path *p,
			      u64 now);
void mroce_path_sent(struct mroce_conn *c, struct mroce_path *p,
		     const struct mroce_pktref *ref, u64 now);
void mroce_path_mark_lost(struct mroce_conn *c, struct mroce_path *p,
			  struct mroce_txent *e, u64 now);
/* Resolve every in-flight packet of @p as lost (timeout, new route). */
void mroce_path_lose_all(struct mroce_conn *c, struct mroce_path *p, u64 now);
void mroce_path_replace(struct mroce_conn *c, struct mroce_path *p, u64 now);
void mroce_path_probe_acked(struct mroce_conn *c, struct mroce_path *p,
			    u32 echo_ts, u32 delay, u64 now);

/* ---- tx.c ---- */
/*
 * How long @bytes on the wire (payload and header) take at the peer's
 * @hint (1000 B/s): the pacer's spacing.
 */
static inline u64 mroce_pace_ns(u64 bytes, u32 hint)
{
	return mroce_div64(bytes * NS_PER_SEC, (u64)hint * 1000);
}

void mroce_retx_push(struct mroce_conn *c, const struct mroce_pktref *ref);

/* Data in flight, to retransmit or to send (inline: every next_timer). */
static inline bool mroce_conn_has_work(const struct mroce_conn *c)
{
	return c->inflight || c->retx_head != c->retx_tail ||
	       !mroce_list_empty(&c->sched);
}

/*
 * Packets sent and not yet resolved, or lost and not yet resent: what the
 * dead timer watches.  Work merely queued is not outstanding: a stream
 * woken after a long idle spell (an RNR back-off, a READ to answer) must
 * not find the connection dead before its first packet leaves.
 */
static inline bool mroce_conn_outstanding(const struct mroce_conn *c)
{
	return c->inflight || c->retx_head != c->retx_tail;
}

/*
 * The peer answered (or the connection starts being outstanding from
 * idle): the dead timer starts over.
 */
static inline void mroce_conn_progress(struct mroce_conn *c, u64 now)
{
	c->last_progress_ns = MROCE_MAX(c->last_progress_ns, now);
	c->rto_rounds = 0;
}

/* A stream that failed orphan NACK, for packets to an unknown stream. */
void mroce_orphan_nack(struct mroce_conn *c, const struct mroce_hdr *h);

#endif /* MROCE_CORE_INTERNAL_H */
