/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A connection joins two endpoints (local device, remote address).  It owns
 * the paths, the data sequence (dsn) that makes every packet exactly-once,
 * the connection-wide congestion window and pacer, and multiplexes the
 * streams (QPs) between the two endpoints.  State is O(paths), whatever the
 * number of streams.
 *
 * Private to the core (and its white-box tests): callers see struct
 * mroce_conn only through mroce.h, which declares its interface.
 */
#ifndef MROCE_CORE_CONN_H
#define MROCE_CORE_CONN_H

#include "platform.h"
#include "wire.h"
#include "list.h"
#include "cc.h"
#include "cookie.h"
#include "path.h"
#include "stream.h"

#ifdef __cplusplus
extern "C" {
#endif

struct mroce_share;

/*
 * Timer passes that must fire an RTO (or give up probing a path) without
 * an answer before the dead timer may fail a connection: one pass after a
 * stall of this host finds every deadline past at once.
 */
#define MROCE_DEAD_ROUNDS	3




struct mroce_conn {
	/*
	 * What most packets and timer passes read or write comes first, in
	 * five lines (the order is only a matter of cache lines: with
	 * hundreds of connections taking turns, each line a call touches is
	 * a miss).  The rest, read at setup, on rare events or by the
	 * statistics, follows the timer cache.
	 */
	const struct mroce_ops *ops;
	void *ctx;
	u32 id;			/* ours; the peer puts it in dst_conn */
	u32 peer_id;
	u8 state;
	u8 accept_pending;	/* answer a CONNECT */
	u8 close_pending;
	u8 reset_pending;	/* failed or closed: tell the still sending peer */
	u32 npaths;		/* min(ours, peer's) once established */

	/* exactly-once: data sequence numbers */
	u32 tx_dsn_nxt;
	u32 tx_dsn_una;
	u32 tx_dsn_window;	/* the peer's receive window */
	u32 tx_mss;		/* payload per packet: min(our mss, the peer's max) */
	u32 rx_dsn_base;	/* every dsn below has been received */

	/* connection-wide congestion window, pacing, receiver hint */
	u32 inflight;		/* bytes in flight on all paths */
	u32 rate_hint;		/* from the peer, 1000 B/s; NONE = no limit */
	u32 rr_path;		/* scheduling: the next path to try */
	struct mroce_cc cc;
	u32 cc_wnd_end;		/* tx dsn that closes the window */
	u8 paced;		/* the pacer holds data back until pace_next_ns */
	u8 pace_late_ok;	/* ... and was the last to: lateness may be caught up */
	u8 ack_now;
	u8 norphan;
	u64 pace_next_ns;
	u64 ack_at;		/* earliest delayed-ACK deadline (0: none) */

	u64 ack_mask;		/* paths with something to acknowledge */
	u64 probe_ack_mask;	/* paths owing a PROBE_ACK */
	/*
	 * Paths that may have a timer (mroce_timer_path()): a clear bit
	 * means no packet in flight, no epoch traffic, no reo_at, not
	 * PROBING, so mroce_conn_next_timer() skips the path.
	 */
	u64 timer_mask;
	/*
	 * Paths whose entry of timer_at may be stale: every core call that
	 * may change a path's deadlines marks the paths it may change.
	 */
	u64 timer_dirty;
	/*
	 * Paths that may be PROBING (set when a path starts probing, cleared
	 * when its probe is answered): transmit looks for due probes only
	 * there, not in every path's header.
	 */
	u64 probe_mask;
	/* retransmission queue: lost packets in detection order */
	u32 retx_head;
	u32 retx_tail;
	struct mroce_pktref *retx;
	u64 last_progress_ns;	/* last ACK that acknowledged data */
	u64 lost_ns;		/* last packet declared lost (stats.lost) */
	/*
	 * Losses declared since a quiet spell (quiet_ns without one) that no
	 * late ACK has shown spurious: a tail-loss probe fired by a stall of
	 * this host or the peer's is one, until the original's ACK comes.
	 */
	u32 lost_open;

	/* scheduling */
	struct mroce_list sched;
	struct mroce_list ackq;
	struct mroce_list waitq;
	struct mroce_list pollq;

	struct mroce_list streams;
	/* receiver: fair share among our senders (share.c) */
	struct mroce_share *share;
	u64 rx_data_bytes;	/* payload received, only ever grows */
	u32 rx_hint;		/* what we tell the peer (without a share) */
	u32 ack_hint;		/* the hint our last ACK carried */
	u32 share_epoch;	/* share epoch of our last data */
	u8 share_light;		/* below the equal share in the last epoch */
	/* a message's ACK was asked for: at once, or held (ack_hold_ns) */
	u8 ack_soft:1;
	/* new data with room for an ACK body left since the last data came */
	u8 ack_hold_ok:1;
	/* a simultaneous open: the ACCEPT answering our CONNECT grants */
	u8 await_grant:1;
	/* largest payload sent before the ACCEPT of an implicit accept */
	u16 implicit_len;
	u32 rto_rounds;		/* timer passes with an RTO since then */
	u32 retx_cap;
	u64 peer_nonce;

	/*
	 * The earliest deadline of each path minus one (U64_MAX: none), as
	 * mroce_conn_next_timer() last computed it: it reads the paths of
	 * timer_dirty and these, not every path header.  U64_MAX for every
	 * path outside timer_mask, so the minimum needs no mask.
	 */
	u64 timer_at[MROCE_MAX_PATHS];
	struct mroce_cfg cfg;
	u64 nonce;
	u32 fail_reason;	/* enum mroce_err */
	u32 hello_tries;
	u64 rng;
	u64 reset_next;		/* no second RESET to the peer before this */
	u64 hello_at;
	struct mroce_list share_node;
	u64 share_prev;		/* rx_data_bytes at the last epoch */
	struct mroce_conn_stats stats;	/* its first line: every packet's */
	u64 share_rate;		/* bytes/s measured in the last epoch */
	/* NACKs for packets that named no stream of ours */
	struct mroce_ack_stream orphan[4];
	u64 tx_dsn_acked[MROCE_DSN_WINDOW / 64];
	u64 rx_dsn_bits[MROCE_DSN_WINDOW / 64];

	/*
	 * Proofs (protocol.md 6.2, 6.3).  A RESET or CLOSE from the peer
	 * ends the connection only when it echoes @challenge, a token we
	 * sent the peer in a CHALLENGE: a packet from anyone else is a
	 * request to check, never a verdict.
	 */
	u8 challenge_pending;	/* a CHALLENGE to send */
	u8 close_seen;		/* the peer said CLOSE: end as closed */
	u8 hello_now;		/* CONNECT again at once (a new cookie) */
	u64 challenge;		/* token of our last CHALLENGE; 0: none */
	u64 challenge_next;	/* no new CHALLENGE before this */
	u64 cookie;		/* CONNECT: the cookie it echoes */
	u64 reset_echo;		/* the echo of the RESET we owe */
	u64 accept_next;	/* no second ACCEPT before this */
	struct mroce_key key;	/* tokens: mroce_conn_set_key() */
	u8 pad[40];		/* paths[] stays line-aligned (conn.c) */
	/*
	 * The paths start on a cache line of a line-aligned connection, so a
	 * timer scan reads two lines of each path, not three.
	 */
	struct mroce_path paths[];
};

/*
 * Does the pacer hold us to the peer's hint?  Not when there is none, nor
 * when it is at or above our own port's rate: the port spaces the packets
 * then, and a software pacer would only add timer wake-ups (in the module,
 * an interrupt and a softirq every few packets).  mroce_conn_paced() for
 * callers.
 */
static inline bool mroce_hint_paced(const struct mroce_conn *c)
{
	return c->rate_hint != MROCE_RATE_NONE &&
	       (!c->cfg.line_rate || c->rate_hint < c->cfg.line_rate);
}

#ifdef __cplusplus
}
#endif
#endif /* MROCE_CORE_CONN_H */
