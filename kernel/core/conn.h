/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A connection joins two endpoints (local device, remote address).  It owns
 * the paths, the data sequence (dsn) that makes every packet exactly-once,
 * the connection-wide congestion window and pacer, and multiplexes the
 * streams (QPs) between the two endpoints.  State is O(paths), whatever the
 * number of streams.
 *
 * The core is sans-I/O.  The caller (kernel glue, test harness, simulator):
 *  - feeds received packets:      mroce_conn_rx()
 *  - drains packets to transmit:  mroce_conn_poll_tx() until it says so
 *  - arms one timer per connection at mroce_conn_next_timer() and calls
 *    mroce_conn_on_timer() when it fires
 *  - makes one call at a time for a connection and everything reachable
 *    from it (its streams, and their callbacks): the core takes no locks,
 *    and a call may touch any of the connection's state.  Different
 *    connections are independent.
 * Memory placement, completions and stream lookups are callbacks (ops).
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

/* What the responder glue is asked to do with a packet's payload. */
enum mroce_place_kind {
	MROCE_PLACE_WRITE,	/* at (rkey, va + offset); whole message checked */
	MROCE_PLACE_SEND,	/* into the claimed receive at offset */
	MROCE_PLACE_READ_RESP,	/* into the requester's READ message */
	MROCE_PLACE_ATOMIC_RESP, /* 8-byte original value into the ATOMIC's buffer */
};

struct mroce_place {
	u8 kind;
	u32 rkey;	/* WRITE */
	u64 va;		/* WRITE: message base address */
	u32 total;	/* message length (validate the whole range) */
	u32 offset;	/* of this payload within the message */
	u32 len;
	u64 cookie;	/* SEND: claimed receive; *_RESP: the posted message */
	u64 value;	/* ATOMIC_RESP: original value, host order */
};

struct mroce_atomic {
	u8 op;		/* MROCE_OP_CMP_SWAP or MROCE_OP_FETCH_ADD */
	u32 rkey;
	u64 va;
	u64 swap_add;
	u64 compare;
};

struct mroce_recv_done {
	u64 cookie;
	u32 byte_len;
	u32 imm;
	u8 op;		/* MROCE_OP_SEND, _SEND_IMM or _WRITE_IMM */
	u8 status;	/* enum mroce_err */
	u8 solicited;
};

enum mroce_conn_event {
	MROCE_EV_ESTABLISHED,
	MROCE_EV_FAILED,	/* peer unreachable, reset or restarted */
	MROCE_EV_CLOSED,	/* peer closed */
	MROCE_EV_PATH,		/* a path changed state or port (telemetry) */
};

/*
 * Timer passes that must fire an RTO (or give up probing a path) without
 * an answer before the dead timer may fail a connection: one pass after a
 * stall of this host finds every deadline past at once.
 */
#define MROCE_DEAD_ROUNDS	3


/*
 * Callbacks into the caller.  Status-returning ones return an enum
 * mroce_err (MROCE_OK on success).  None may call back into the core
 * for the same connection.
 */
struct mroce_ops {
	/* Local stream @id, or NULL.  The core checks that it belongs here. */
	struct mroce_stream *(*stream_lookup)(void *ctx, struct mroce_conn *c,
					      u32 id);
	/*
	 * Take the receive for message number @rsn of @st (a SEND* or
	 * WRITE_IMM of @total bytes).  RNR when none is posted; INVALID when
	 * it is too small for @total, with *cookie set: the receive is
	 * consumed and completes with a length error.
	 */
	int (*recv_claim)(void *ctx, struct mroce_stream *st, u32 rsn,
			  u32 total, u64 *cookie);
	/* Copy @pl->len payload bytes from the caller's packet @pctx at @off. */
	int (*place)(void *ctx, struct mroce_stream *st,
		     const struct mroce_place *pl, const void *pctx, u32 off);
	/* May the peer read [va, va + len) with @rkey? */
	int (*read_check)(void *ctx, struct mroce_stream *st, u32 rkey, u64 va,
			  u32 len);
	/* Execute an atomic on local memory; *orig gets the old value. */
	int (*atomic)(void *ctx, struct mroce_stream *st,
		      const struct mroce_atomic *a, u64 *orig);
	/* A posted message completed (in posting order). */
	void (*send_done)(void *ctx, struct mroce_stream *st, u64 cookie,
			  int wc_status);
	/* A receive completed (in message order). */
	void (*recv_done)(void *ctx, struct mroce_stream *st,
			  const struct mroce_recv_done *rd);
	/* The stream hit a fatal error (verbs: move the QP to ERR). */
	void (*stream_error)(void *ctx, struct mroce_stream *st, int wc_status);
	void (*conn_event)(void *ctx, struct mroce_conn *c, int event, u32 arg);
};

struct mroce_cfg {
	/* the first line: what packets and timers read */
	u32 npaths;		/* paths we open, 1..MROCE_MAX_PATHS */
	u32 mss;		/* max payload per packet we send and receive */
	u32 dupthresh;		/* psn distance that proves a loss */
	u32 ack_every;		/* ACK a path after this many packets */
	u32 dsn_window;		/* our receive dsn window (pow2) */
	u32 pace_burst;		/* bytes the pacer lets go back to back */
	u32 pace_slack_ns;	/* a packet due this soon goes now */
	u32 timer_slack_ns;	/* how late a deadline may fire */
	u16 sport_min;		/* source-port pool for paths, inclusive */
	u16 sport_max;
	u32 init_cwnd;		/* bytes, per path */
	u32 line_rate;		/* our port's rate, 1000 B/s; 0 = unknown */
	u64 ack_delay_ns;	/* ACK a path this long after the first unacked */
	/*
	 * A message's ACK may wait this long (at most ack_delay_ns) for data
	 * going the other way to carry it, when the connection answered the
	 * peer's previous data with a packet that had room for one (a
	 * request/response exchange); 0: never wait.
	 */
	u64 ack_hold_ns;
	u32 ack_bodies;		/* put owed ACKs on outgoing data (0: never) */
	u32 far_flight;		/* see far_ns below; here it fills a hole */
	u64 tlp_min_ns;
	u64 epoch_ns;		/* path health epoch */
	u64 rto_min_ns;
	u64 rto_max_ns;
	u64 rto_init_ns;
	u32 conn_init_cwnd;	/* bytes, whole connection */
	u32 conn_max_cwnd;
	u64 probe_interval_ns;
	u32 probe_max;		/* unanswered probes before a new port */
	u32 fail_rtos;		/* consecutive RTOs that fail a path */
	u64 dead_ns;		/* no progress this long: peer unreachable */
	u32 hello_retries;
	/* a path losing this much (permille) over the average moves */
	u32 bad_loss_permille;
	u32 congested_alpha;	/* alpha above which a path is congested */
	u32 congested_epochs;	/* ... for this many epochs: replaced */
	/*
	 * A deadline at least far_ns away may fire far_slack_ns late while
	 * the connection has declared nothing lost for quiet_ns (or what it
	 * declared was shown spurious since) and has at most far_flight
	 * bytes in flight; far_slack_ns 0: never.
	 * See mroce_conn_timer_slack().
	 */
	u64 far_ns;
	u64 far_slack_ns;
	u64 quiet_ns;
};

void mroce_cfg_default(struct mroce_cfg *cfg);

enum mroce_conn_state {
	MROCE_CONN_IDLE,
	MROCE_CONN_CONNECTING,	/* CONNECT sent, waiting for ACCEPT */
	MROCE_CONN_ESTABLISHED,
	MROCE_CONN_CLOSED,
	MROCE_CONN_FAILED,
};

extern const char *const mroce_conn_state_names[5];

/*
 * Counters; rx_drop_* are packets refused after decoding.  The first eight,
 * one cache line, count every packet.
 */
struct mroce_conn_stats {
	u64 rx_pkts;
	u64 rx_bytes;
	u64 rx_data;
	u64 rx_acks;
	u64 tx_pkts;
	u64 tx_bytes;
	u64 tx_data;
	u64 tx_ctrl;
	u64 tx_acks;
	u64 tx_retx;
	u64 rx_dup_dsn;		/* already received: not placed again */
	u64 rx_drop_state;	/* wrong connection state for the opcode */
	u64 rx_drop_path;	/* path id beyond the negotiated count */
	u64 rx_drop_dsn;	/* dsn outside the window (rx.c: rx_window_ok) */
	u64 rx_drop_psn;	/* psn outside its path's, no dsn to vouch */
	u64 rx_drop_msn;	/* msn beyond what its stream can take */
	u64 rx_dsn_jumps;	/* window dragged over abandoned dsns */
	u64 rx_drop_stream;	/* no such stream / not ours */
	u64 rx_drop_ack;	/* ACK block inconsistent with what we sent */
	u64 rx_failed_conn;	/* from the peer after we failed or closed */
	u64 lost;
	u64 spurious;
	u64 rtos;
	u64 tlps;
	u64 path_replaced;
	u64 pace_waits;
	u64 hint_limited;
	u64 tx_ack_bodies;	/* ACKs carried by data packets */
	u64 rx_ack_bodies;
	u64 ack_holds;		/* ACKs held for data to carry them */
	/* a RESET or CLOSE that ended nothing by itself: challenged */
	u64 rx_challenged;
	u64 tx_challenges;	/* CHALLENGEs sent to the peer */
	u64 rx_proven_end;	/* a RESET that echoed our challenge */
};

#define MROCE_TX_BUF_MIN	(MROCE_MAX_HDR_LEN + MROCE_ACK_PATH_LEN + \
				 MROCE_ACK_STREAM_LEN)

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

/* Bytes the caller must provide for a connection of @npaths paths. */
size_t mroce_conn_size(u32 npaths);

/*
 * Initialise @c in caller memory of mroce_conn_size(cfg->npaths) bytes.
 * @id: our non-zero connection id; @nonce: non-zero, unique per boot of
 * this endpoint; @seed: randomness for source ports.
 */
int mroce_conn_init(struct mroce_conn *c, const struct mroce_cfg *cfg,
		    const struct mroce_ops *ops, void *ctx, u32 id, u64 nonce,
		    u64 seed, u64 now);

/*
 * The key that makes this connection's CHALLENGE tokens unpredictable: a
 * host sets it from its random source after mroce_conn_init() (without
 * it, the key derives from the init seed, which suits tests only).
 */
void mroce_conn_set_key(struct mroce_conn *c, const struct mroce_key *key);

/* Active open: start the handshake (CONNECT goes out on poll_tx). */
void mroce_conn_open(struct mroce_conn *c, u64 now);

/* Orderly close: a CLOSE is sent, streams must already be detached. */
void mroce_conn_close(struct mroce_conn *c);

/*
 * The link now carries at most @mss bytes of payload per packet (its MTU
 * went down).  A packet keeps its payload when it is resent, and the peer
 * sends what our hello said we receive: if the connection's payload is
 * above @mss, its full-size packets are lost every time, and only its dead
 * timer would end it, which smaller messages that still get through keep
 * from firing.  Then it fails at once, as for an ACCEPT below payloads
 * already sent (protocol.md 6.2): its streams complete with retry exceeded,
 * the peer is reset, and the next stream opens a new connection, which
 * states the new size.  Returns whether it failed.
 */
bool mroce_conn_link_mss(struct mroce_conn *c, u32 mss);

struct mroce_rx_meta {
	const void *pctx;	/* caller's packet handle for placement */
	u8 ce;			/* the IP header carried ECN CE */
};

/*
 * Process one decoded packet addressed to @c (hdr.dst_conn == c->id, or a
 * CONNECT the caller routed here).  @buf holds the header and, for ACKs,
 * the blocks.  The caller routes a CONNECT here only when it echoed a
 * valid cookie (mroce_cookie_valid()): its sender receives at the address
 * it claims.
 */
void mroce_conn_rx(struct mroce_conn *c, const struct mroce_pkt *pkt,
		   const void *buf, const struct mroce_rx_meta *m, u64 now);

/* A copy of the connection's counters. */
void mroce_conn_get_stats(const struct mroce_conn *c,
			  struct mroce_conn_stats *out);

/* Where a packet's payload comes from: the caller copies it. */
enum mroce_src {
	MROCE_SRC_NONE,
	MROCE_SRC_SQ,		/* posted message (st, cookie) at offset */
	MROCE_SRC_READ,		/* local memory (rkey, va + offset) */
};

struct mroce_tx {
	u32 hdr_len;		/* bytes the core wrote at the buffer */
	u16 sport;		/* UDP source port: the path */
	u16 path;
	u8 ect;			/* mark ECT(0) in the IP header */
	u8 src;			/* enum mroce_src */
	u8 opcode;		/* MROCE_OP_*: what the header says */
	struct mroce_stream *st;
	u64 cookie;
	u64 va;
	u32 rkey;
	u32 offset;
	u32 len;		/* payload bytes to append */
};

enum mroce_poll {
	MROCE_POLL_IDLE,	/* nothing to send until new input */
	MROCE_POLL_PACKET,	/* @tx describes a packet; poll again */
	MROCE_POLL_WAIT,	/* paced: try again at next_timer */
};

/*
 * Produce the next packet.  The header goes to @buf (@cap bytes, at least
 * MROCE_TX_BUF_MIN; ACKs use as much as fits), the payload is described in
 * @tx.  The caller must send it; if it cannot, it should treat the packet
 * as lost on the wire (retransmission covers it).
 */
enum mroce_poll mroce_conn_poll_tx(struct mroce_conn *c, u64 now, void *buf,
				   u32 cap, struct mroce_tx *tx);

/*
 * Absolute time of the next timer event, or 0 when none is armed.  Not
 * const: it refreshes the per-path deadline cache (timer_at, timer_dirty).
 */
u64 mroce_conn_next_timer(struct mroce_conn *c);

/*
 * How late the timer armed for deadline @at may fire.  timer_slack_ns,
 * except for a far deadline (a loss timer, an epoch) of a connection that
 * has lost nothing lately and has little in flight: far_slack_ns.  A host
 * gives its timers a tick of that and can move them without reprogramming
 * its timer hardware; a tail-loss probe would come that much later, which
 * only a connection that has not been losing can afford.  The first loss
 * after a quiet spell pays it once.  A connection with a window in flight
 * keeps its timers exact: a late probe would stall a window, not one
 * request, and its timer is moved by a stream of sends either way.
 */
u64 mroce_conn_timer_slack(const struct mroce_conn *c, u64 now, u64 at);

/* Which of a connection's deadlines a timer armed for @at serves. */
enum mroce_timer_what {
	MROCE_TW_OTHER,		/* none of these: the caller's own */
	MROCE_TW_HELLO,
	MROCE_TW_ACK,
	MROCE_TW_PACE,
	MROCE_TW_REORDER,
	MROCE_TW_EPOCH,
	MROCE_TW_PROBE,
	MROCE_TW_RTO,
	MROCE_TW_TLP,
	MROCE_TW_STREAM,
	MROCE_TW_DEAD,
	MROCE_TW_STALL,		/* a stream's oldest message: no progress */
};

/*
 * The deadline of @c equal to @at, in the order mroce_conn_on_timer()
 * serves them; *@path is the path's index for per-path deadlines, else
 * U32_MAX.  For tracing and tests: it scans every path and stream.
 */
enum mroce_timer_what mroce_conn_timer_what(const struct mroce_conn *c,
					    u64 at, u32 *path);

/* Run whatever timers expired at @now. */
void mroce_conn_on_timer(struct mroce_conn *c, u64 now);

/*
 * Does the pacer hold us to the peer's hint?  Not when there is none, nor
 * when it is at or above our own port's rate: the port spaces the packets
 * then, and a software pacer would only add timer wake-ups (in the module,
 * an interrupt and a softirq every few packets).
 */
static inline bool mroce_conn_paced(const struct mroce_conn *c)
{
	return c->rate_hint != MROCE_RATE_NONE &&
	       (!c->cfg.line_rate || c->rate_hint < c->cfg.line_rate);
}

/* True while the connection still has data or control to deliver. */
bool mroce_conn_busy(const struct mroce_conn *c);

/*
 * Build a RESET answering @pkt, for a packet whose dst_conn matched no
 * connection (or came from another address than its connection's peer:
 * the answer must not tell the two apart).  A CHALLENGE's token is
 * echoed.  Returns the length written to @buf (MROCE_HDR_LEN +
 * MROCE_RESET_EXT_LEN), or 0 when no answer is due (never answer a RESET).
 */
u32 mroce_reset_reply(const struct mroce_pkt *pkt, u32 reason, void *buf);

#ifdef __cplusplus
}
#endif
#endif /* MROCE_CORE_CONN_H */
