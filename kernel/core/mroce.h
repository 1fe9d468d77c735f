/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The protocol core's public interface: the one header of kernel/core/ that
 * its callers (the module's glue, the simulator, tools) include.
 *
 * The core is sans-I/O, in the shape of ngtcp2: a connection (struct
 * mroce_conn) and the streams (struct mroce_stream, one per QP) multiplexed
 * over it are opaque objects in memory the caller provides
 * (mroce_conn_size(), mroce_stream_size(), mroce_share_size()); the core
 * never allocates.  The caller feeds received packets, drains the packets
 * to send, runs one timer per connection, and gets placements, completions
 * and events through callbacks (struct mroce_ops).  What it needs to know
 * of an object it reads through the accessors at the end, copied out into
 * the info structs; nothing outside kernel/core/ reaches into the core's
 * structs or into the wire format's raw offsets (a decoded packet, struct
 * mroce_pkt, is a plain value).  The definitions live in the core's
 * private headers (conn.h, stream.h, path.h, share.h, wire.h, internal.h),
 * which only the core itself, the unit tests and the fuzzers include.
 *
 * The caller:
 *  - feeds received packets:      mroce_conn_rx()
 *  - drains packets to transmit:  mroce_conn_poll_tx() until it says so
 *  - arms one timer per connection at mroce_conn_next_timer() and calls
 *    mroce_conn_on_timer() when it fires
 *  - makes one call at a time for a connection and everything reachable
 *    from it (its streams, and their callbacks): the core takes no locks,
 *    and a call may touch any of the connection's state.  Different
 *    connections are independent.
 * Every error the core reports is an enum mroce_err (err.h).
 */
#ifndef MROCE_CORE_MROCE_H
#define MROCE_CORE_MROCE_H

#include "platform.h"
#include "err.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Opaque: the caller holds them by pointer only. */
struct mroce_conn;
struct mroce_stream;
struct mroce_share;

/* ---- wire format: limits, opcodes and the decoded packet ---- */

#define MROCE_VERSION		2
#define MROCE_UDP_PORT		4797	/* default destination port */

#define MROCE_MAX_PATHS		64	/* paths per connection */
#define MROCE_MIN_PAYLOAD	256	/* smallest max_payload a hello states */
#define MROCE_MAX_PAYLOAD	65535
#define MROCE_DEFAULT_PAYLOAD	4096	/* what max_payload 0 means */
/* payloads before the peer's parameters are known: fit any IPv6 link */
#define MROCE_IMPLICIT_PAYLOAD	1024
#define MROCE_PATH_WINDOW	256	/* packets in flight per path == SACK bits */
#define MROCE_DSN_WINDOW	16384	/* data sequence window per direction */
#define MROCE_STREAM_WINDOW	256	/* messages in flight per stream */
#define MROCE_MAX_RD_ATOMIC	16	/* READ/ATOMIC requests executing per stream */
#define MROCE_MAX_MSG		(1u << 31)
#define MROCE_STREAM_MASK	0x00ffffffu	/* stream ids are 24-bit QPNs */

/*
 * Sizes for buffers and budgets (wire.h has the layout; wire.c checks
 * these against it): the common header, the largest header with its
 * extension, the RESET and CHALLENGE a host sends without a connection
 * (mroce_reset_reply(), mroce_cookie_challenge()), and an ACK of @np path
 * blocks and @ns stream entries.
 */
#define MROCE_HDR_LEN		40
#define MROCE_MAX_HDR_LEN	72
#define MROCE_RESET_LEN		56
#define MROCE_CHALLENGE_LEN	48
#define MROCE_ACK_LEN(np, ns)	(MROCE_HDR_LEN + 8 + 56 * (np) + 16 * (ns))

enum mroce_opcode {
	MROCE_OP_CONNECT	= 0x01,
	MROCE_OP_ACCEPT		= 0x02,
	MROCE_OP_RESET		= 0x03,
	MROCE_OP_CLOSE		= 0x04,
	MROCE_OP_PROBE		= 0x05,
	MROCE_OP_PROBE_ACK	= 0x06,
	MROCE_OP_ACK		= 0x07,
	MROCE_OP_POLL		= 0x08,
	MROCE_OP_CHALLENGE	= 0x09,
	/* sequenced stream packets: carry psn and dsn */
	MROCE_OP_WRITE		= 0x10,
	MROCE_OP_WRITE_IMM	= 0x11,
	MROCE_OP_SEND		= 0x12,
	MROCE_OP_SEND_IMM	= 0x13,
	MROCE_OP_READ_REQ	= 0x14,
	MROCE_OP_READ_RESP	= 0x15,
	MROCE_OP_CMP_SWAP	= 0x16,
	MROCE_OP_FETCH_ADD	= 0x17,
	MROCE_OP_ATOMIC_RESP	= 0x18,
};

static inline bool mroce_op_sequenced(u8 op)
{
	return op >= MROCE_OP_WRITE && op <= MROCE_OP_ATOMIC_RESP;
}

/* Common header flags. */
#define MROCE_F_ACK_REQ		0x0001	/* acknowledge this packet at once */
#define MROCE_F_RETX		0x0002	/* retransmission (telemetry only) */
#define MROCE_F_ECE		0x0004	/* ACK: CE seen since the previous ACK */
#define MROCE_F_SOLICITED	0x0008	/* SEND*: solicited event */
#define MROCE_F_LAST		0x0010	/* last packet of a message */
#define MROCE_F_ACK_BODY	0x0020	/* data: an ACK body precedes the payload */
#define MROCE_F_ALL		0x003f

/*
 * RESET reasons on the wire.  The connection they end fails with the
 * matching MROCE_ERR_PEER_*.
 */
enum mroce_reset_reason {
	MROCE_RESET_UNKNOWN_CONN = 1,	/* dst_conn not known here */
	MROCE_RESET_CLOSED	 = 2,	/* connection was closed */
	MROCE_RESET_VERSION	 = 3,	/* hello parameters refused */
};

#define MROCE_RATE_NONE		0xffffffffu	/* ACK rate hint: no limit */

/* Decoded common header, host byte order. */
struct mroce_hdr {
	u8 version;
	u8 opcode;
	u16 flags;
	u32 dst_conn;
	u32 src_conn;
	u16 path;
	u8 attempt;
	u32 psn;
	u32 ts;
	u32 dst_stream;
	u32 src_stream;
	u32 msn;
	u32 dsn;
};

/* Placement and operation fields of the stream opcodes. */
struct mroce_data_ext {
	u64 va;		/* WRITE*, READ_REQ, atomics: remote address of byte 0 */
	u32 rkey;	/* WRITE*, READ_REQ, atomics */
	u32 rsn;	/* SEND*, WRITE_IMM: receive sequence number */
	u32 offset;	/* byte offset of this payload within the message */
	u32 total;	/* message length */
	u32 imm;	/* *_IMM: immediate data, opaque */
	u64 swap_add;	/* CMP_SWAP: swap value; FETCH_ADD: addend */
	u64 compare;	/* CMP_SWAP */
	u64 orig;	/* ATOMIC_RESP: value before the operation */
};

struct mroce_hello {
	u64 nonce;	/* sender's instance nonce (non-zero) */
	/*
	 * ACCEPT: the CONNECT's nonce.  CONNECT: the cookie of the CHALLENGE
	 * it answers (protocol.md 6.2), 0 before it has one.
	 */
	u64 echo_nonce;
	u16 max_paths;
	u16 max_payload;	/* largest data payload it receives; 0: 4096 */
	u32 dsn_window;
	/*
	 * The sender's first fair share for the peer's data, 1000 B/s (its
	 * receiver grants a start rate); 0: none, send as the window allows
	 */
	u32 rate_hint;
};

struct mroce_ack_ext {
	u32 rate_hint;	/* receiver's fair share for this sender, 1000 B/s */
	u8 npaths;
	u8 nstreams;
	u16 flags;	/* reserved, zero */
};

/* A decoded packet: header + extension; payload located by offset/len. */
struct mroce_pkt {
	struct mroce_hdr hdr;
	union {
		struct mroce_data_ext data;
		struct mroce_hello hello;
		struct {
			u32 reason;
			/*
			 * The token of the CHALLENGE it answers, or the nonce
			 * of the CONNECT it refuses; else 0.
			 */
			u64 echo;
		} reset;
		struct {
			u64 token;	/* non-zero; echoed as above */
		} challenge;
		struct {
			u32 echo_ts;
			u32 delay;
		} probe_ack;
	};
	/* ACK, or a data packet's ACK body (MROCE_F_ACK_BODY); else zero */
	struct mroce_ack_ext ack;
	u8 ack_nack;		/* one of its stream entries is a NACK */
	u32 ack_off;		/* where the ACK's path blocks start */
	u32 payload_off;	/* where the payload starts (ACK: the blocks) */
	u32 payload_len;
};

/* Length of the opcode's extension, or -1 for an unknown opcode. */
int mroce_wire_ext_len(u8 opcode);

/*
 * Decode and validate @len bytes at @buf.  On success, @pkt describes the
 * packet; the payload (data, or an ACK's blocks) is buf[payload_off..+len),
 * and the ACK blocks of an ACK or of a data packet's ACK body start at
 * buf[ack_off].
 */
enum mroce_err mroce_wire_decode(const void *buf, u32 len,
				      struct mroce_pkt *pkt);

/*
 * A datagram of @len bytes of which only a prefix is contiguous (a
 * receiver's linear area).  mroce_wire_head_len() says how many leading
 * bytes must be contiguous to decode it and read its ACK blocks, from the
 * @avail <= @len it has at @buf: never more than @len or
 * MROCE_MAX_HEAD_LEN, and nothing a refused packet would not need (an
 * ACK's blocks only if they fill @len exactly).  If that is more than
 * @avail, make them contiguous and ask again: the header, then the
 * extensions, then the blocks; at most three rounds.
 *
 * mroce_wire_decode_head() decodes with @head contiguous bytes at @buf,
 * reading none past them; it gives what mroce_wire_decode() gives for the
 * whole datagram when @head is at least mroce_wire_head_len() (fewer:
 * MROCE_ERR_SHORT).  The payload, from payload_off, is not read: it
 * stays wherever the caller keeps it.  The ACK blocks are inside @head.
 */
u32 mroce_wire_head_len(const void *buf, u32 avail, u32 len);
enum mroce_err mroce_wire_decode_head(const void *buf, u32 head,
					   u32 len, struct mroce_pkt *pkt);

/*
 * The dst_conn of the @len bytes at @buf, not decoded (0: too short), to
 * find the connection a packet is for before it is decoded: a prefetch
 * hint (mroce_conn_prefetch_rx()), never a decision.
 */
u32 mroce_wire_dst_conn(const void *buf, u32 len);

/* ---- address validation (cookie.c) ---- */

struct mroce_key {
	u64 k0, k1;
};

/*
 * Does CONNECT @pkt, received from @addr (16 bytes; IPv4 as v4-mapped
 * IPv6) at @now, echo a cookie this endpoint gave that address?
 */
bool mroce_cookie_valid(const struct mroce_key *key, const u8 *addr,
			const struct mroce_pkt *pkt, u64 now);

/*
 * Write to @buf the CHALLENGE that gives the opener of CONNECT @pkt from
 * @addr its cookie; returns its length (MROCE_HDR_LEN +
 * MROCE_CHALLENGE_EXT_LEN).
 */
u32 mroce_cookie_challenge(const struct mroce_key *key, const u8 *addr,
			   const struct mroce_pkt *pkt, u64 now, void *buf);

/* ---- connections ---- */

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
	MROCE_EV_FAILED,	/* peer unreachable, reset or restarted; arg: why */
	MROCE_EV_CLOSED,	/* peer closed */
	MROCE_EV_PATH,		/* a path changed state or port (telemetry) */
};

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

/* A buffer for mroce_conn_poll_tx(): the largest header and an ACK block. */
#define MROCE_TX_BUF_MIN	(MROCE_MAX_HDR_LEN + 56 + 16)

enum mroce_path_state {
	MROCE_PATH_ACTIVE,	/* carries data */
	MROCE_PATH_SUSPECT,	/* timed out once: one packet at a time */
	MROCE_PATH_FAILED,	/* declared dead; a new source port is chosen */
	MROCE_PATH_PROBING,	/* new or revived route: probes only */
};

extern const char *const mroce_path_state_names[4];

struct mroce_path_stats {
	u64 tx_pkts;
	u64 tx_bytes;
	u64 retx_pkts;		/* retransmissions sent on this path */
	u64 lost_pkts;		/* packets of this path declared lost */
	u64 spurious;		/* declared lost, then acknowledged */
	u64 acked_pkts;
	u64 acked_bytes;
	u64 ce_pkts;		/* CE marks the peer reported */
	u64 rtos;
	u64 tlps;
	u64 replaced;		/* source port changes */
	u64 probes;
	u64 rx_pkts;		/* receiver half */
	u64 rx_dup;
	u64 rx_late;		/* psn below the cumulative point */
	u64 rx_ce;
};

/* ---- streams ---- */

/* Message flags (struct mroce_msg.flags). */
#define MROCE_MSG_FENCE		0x01	/* wait for earlier READ/ATOMICs */
#define MROCE_MSG_SOLICITED	0x02

/* A work request as the glue posts it. */
struct mroce_msg {
	u64 cookie;	/* glue's handle, returned in the completion */
	u64 va;		/* WRITE*, READ, atomics: remote address */
	u64 swap_add;	/* CMP_SWAP swap / FETCH_ADD addend */
	u64 compare;	/* CMP_SWAP */
	u32 rkey;
	u32 len;	/* bytes; READ: bytes to read; atomics: 8 */
	u32 imm;
	u8 op;		/* MROCE_OP_WRITE … MROCE_OP_FETCH_ADD */
	u8 flags;
};

struct mroce_stream_params {
	u32 mss;		/* payload per packet: the QP's path MTU */
	u32 tx_msn;		/* first msn we send (verbs sq_psn) */
	u32 rx_msn;		/* first msn we expect (verbs rq_psn) */
	u8 max_rd_atomic;	/* READ/ATOMICs we may have outstanding */
	u8 rnr_retry;		/* 7 = forever */
	u8 retry_cnt;
	u8 srq;			/* receives come from a shared queue */
	u64 rnr_delay_ns;	/* back-off we ask of a peer we refuse */
	u64 min_rnr_ns;		/* floor for our own RNR back-off */
	/*
	 * Local ACK timeout T (verbs: mroce_ib_timeout_ns(timeout)); 0:
	 * infinite.  The oldest incomplete message fails with retry
	 * exceeded after T * (retry_cnt + 1) without progress (requester.c,
	 * stall_bound()).
	 */
	u64 ack_timeout_ns;
};

/* The verbs local ACK timeout attribute in ns: 4.096 us * 2^timeout. */
static inline u64 mroce_ib_timeout_ns(u8 timeout)
{
	return timeout ? 4096ull << (timeout & 31) : 0;
}

enum mroce_stream_state {
	MROCE_STREAM_IDLE,	/* not attached to a connection */
	MROCE_STREAM_ACTIVE,
	MROCE_STREAM_ERROR,	/* fatal error; only flush remains */
};

struct mroce_stream_stats {
	u64 tx_msgs;
	u64 rx_msgs;
	u64 rnr_sent;		/* NACKs for want of a receive */
	u64 rnr_rcvd;
	u64 rx_stale;		/* packets of completed messages or old tries */
	u64 rx_window;		/* dropped: beyond the message window */
	u64 polls;
	u64 stalls;		/* messages failed for want of progress */
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
	u8 retx;		/* a retransmission (stats.tx_retx) */
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
 * when it is at or above our own port's rate (the port spaces the packets).
 */
bool mroce_conn_paced(const struct mroce_conn *c);

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

/*
 * Zero @st, mroce_stream_size() bytes of caller memory, and give it its
 * local id and the caller's @ctx (mroce_stream_get_ctx(): the callbacks get
 * the stream).  Not yet attached to a connection.
 */
void mroce_stream_init(struct mroce_stream *st, u32 id, void *ctx);

/*
 * The same for @st in memory the caller knows to be zeroed (calloc, fresh
 * pages): the message windows (~41 KB) are not written, so their pages are
 * touched only as messages use them.
 */
void mroce_stream_init_zeroed(struct mroce_stream *st, u32 id, void *ctx);

/*
 * Attach @st to @conn, talking to the peer's stream @peer (verbs: the QP
 * reached RTR).  Packets may flow once the connection is established.
 */
int mroce_stream_attach(struct mroce_conn *conn, struct mroce_stream *st,
			u32 peer, const struct mroce_stream_params *prm);

/*
 * Set the first msn we send (verbs: sq_psn, known at RTS, after attach at
 * RTR).  Only before anything was posted; MROCE_ERR_INVAL otherwise.
 */
int mroce_stream_set_tx_start(struct mroce_stream *st, u32 msn);

/*
 * Post one message.  Returns 0, MROCE_ERR_AGAIN when the message window is
 * full (post again after a completion), or MROCE_ERR_INVAL.
 */
int mroce_stream_post(struct mroce_stream *st, const struct mroce_msg *m,
		      u64 now);

/*
 * Nothing was ever posted to it and no packet came for it: it can move to
 * another connection of the same peer as if it had been attached there.
 */
bool mroce_stream_pristine(const struct mroce_stream *st);

/* Room for another message? */
bool mroce_stream_can_post(const struct mroce_stream *st);

/*
 * Error path (verbs: QP moved to ERR): report every outstanding send as
 * MROCE_ERR_FLUSH in order, and every claimed, incomplete receive likewise;
 * forget what is in flight.  The stream stays attached until detach.
 */
void mroce_stream_flush(struct mroce_stream *st);

/* Detach from the connection; drops everything in flight for it. */
void mroce_stream_detach(struct mroce_stream *st);

/* ---- receiver fair share (share.c) ---- */

void mroce_share_init(struct mroce_share *s, u64 capacity, u64 epoch_ns,
		      u64 now);
void mroce_share_join(struct mroce_share *s, struct mroce_conn *c);
void mroce_share_leave(struct mroce_conn *c);

/* When the current epoch ends (the caller's timer). */
u64 mroce_share_deadline(const struct mroce_share *s);

/*
 * Close the epoch: measure every member's inbound rate, water-fill the
 * capacity, store each member's hint.  Members' counters are only read
 * (each is written by its own connection), so the caller need only keep
 * the member list stable.
 */
void mroce_share_epoch(struct mroce_share *s, u64 now);

/*
 * Epochs are needed only while two or more connections share the
 * capacity: a lone member's share is all of it, and a second member's
 * first data lowers the hint at once (mroce_share_rx).  Every epoch is a
 * timer interrupt on a host that may be busy polling, so the caller stops
 * its epoch timer while this is false, after mroce_share_pause(), and
 * calls mroce_share_resume() when it starts the timer again.
 */
bool mroce_share_wants_epochs(const struct mroce_share *s);

/*
 * Forget the last epoch's split: the hint is no limit until a member's
 * next data, which counts as a new sender and brings the whole capacity.
 */
void mroce_share_pause(struct mroce_share *s);

/* Epochs start again at @now; rates are measured from here on. */
void mroce_share_resume(struct mroce_share *s, u64 now);

/* ---- accessors and copy-out ---- */

/*
 * Bytes the caller provides for a struct mroce_stream (mroce_stream_init())
 * and a struct mroce_share (mroce_share_init()), aligned like a u64.
 */
size_t mroce_stream_size(void);
size_t mroce_share_size(void);

/* The caller's @ctx given to mroce_stream_init(): its QP. */
void *mroce_stream_get_ctx(const struct mroce_stream *st);
u32 mroce_stream_get_id(const struct mroce_stream *st);
enum mroce_stream_state mroce_stream_get_state(const struct mroce_stream *st);
/* The connection it is attached to, or NULL. */
struct mroce_conn *mroce_stream_get_conn(const struct mroce_stream *st);
/*
 * Messages posted and not yet complete (sent or not): 0 when the send
 * queue has drained.  Without the connection's lock, a snapshot.
 */
u32 mroce_stream_sq_outstanding(const struct mroce_stream *st);
void mroce_stream_get_stats(const struct mroce_stream *st,
			struct mroce_stream_stats *out);
/*
 * Take the requester's parameters of @prm (max_rd_atomic, rnr_retry,
 * retry_cnt, ack_timeout_ns, rnr_delay_ns; verbs: they may change at RTS)
 * for an attached stream; the rest of @prm is ignored.
 */
void mroce_stream_set_requester(struct mroce_stream *st,
				const struct mroce_stream_params *prm);

/* A stream's sequence state, for debugging (debugfs). */
struct mroce_stream_info {
	u32 id;
	u32 peer;
	u8 state;		/* enum mroce_stream_state */
	u8 failing;		/* a message ahead of the frontier failed */
	u8 resp_head;		/* oldest READ/ATOMIC response job */
	u8 resp_count;
	u8 sched;		/* has packets to send */
	u8 waiting;		/* a timer is pending (wake_at) */
	u8 polling;		/* a POLL is to be sent */
	u16 rnr_slots;
	u32 tx_una;		/* oldest incomplete msn */
	u32 tx_next;		/* no unsent packets below this msn */
	u32 tx_end;		/* msn of the next post */
	u32 rd_inflight;
	u32 frontier;		/* the peer's, as last reported */
	u32 rx_next;		/* our frontier */
	u64 poll_at;
	u64 wake_at;
	struct mroce_stream_stats stats;
};

void mroce_stream_get_info(const struct mroce_stream *st,
		       struct mroce_stream_info *out);

/* A posted message, msn in [tx_una, tx_end). */
struct mroce_txmsg_info {
	u32 msn;
	u32 len;
	u32 sent;
	u32 acked;
	u32 resp;
	u64 resend_at;
	u8 op;
	u8 state;
	u8 acked_last;
	u8 attempt;
	u8 rnr_left;
	u8 retry_left;
};

/* A message being received, msn in [rx_next, rx_next + window). */
struct mroce_rxmsg_info {
	u32 msn;
	u32 total;
	u32 got;
	u8 op;
	u8 state;
	u8 attempt;
	u8 claimed;
	u8 status;
};

/* False when @msn is not outstanding (tx), or its slot is free (rx). */
bool mroce_stream_get_txmsg_info(const struct mroce_stream *st, u32 msn,
			     struct mroce_txmsg_info *out);
bool mroce_stream_get_rxmsg_info(const struct mroce_stream *st, u32 msn,
			     struct mroce_rxmsg_info *out);

u32 mroce_conn_get_id(const struct mroce_conn *c);
/*
 * Its state; may be read without the connection's lock (a snapshot, read
 * once).
 */
enum mroce_conn_state mroce_conn_get_state(const struct mroce_conn *c);
/* enum mroce_err once FAILED. */
u32 mroce_conn_get_fail_reason(const struct mroce_conn *c);
/* Payload bytes received, only ever grows. */
u64 mroce_conn_get_rx_data_bytes(const struct mroce_conn *c);
/* The share it joined, or NULL. */
struct mroce_share *mroce_conn_get_share(const struct mroce_conn *c);

/* A connection's state, for telemetry and debugging. */
struct mroce_conn_info {
	u32 id;
	u32 peer_id;
	u8 state;		/* enum mroce_conn_state */
	u8 paced;		/* the pacer holds data back (pace_next_ns) */
	u8 hint_paced;		/* mroce_conn_paced() */
	u8 sched;		/* streams with packets to send */
	u8 waitq;		/* streams with a timer pending */
	u8 pollq;		/* streams with a POLL to send */
	u8 ackq;		/* stream entries to acknowledge */
	u32 fail_reason;
	u32 npaths;		/* negotiated once established */
	u32 tx_mss;		/* payload per packet: 0 before the hello */
	u32 inflight;		/* bytes, all paths */
	u32 cwnd;		/* the connection-wide window */
	u32 rate_hint;		/* from the peer; MROCE_RATE_NONE: none */
	u32 rx_hint;		/* what we tell the peer (without a share) */
	u32 tx_dsn_nxt;
	u32 tx_dsn_una;
	u32 tx_dsn_window;
	u32 rx_dsn_base;
	u32 retx_head;		/* retransmission queue */
	u32 retx_tail;
	u64 ack_at;		/* delayed-ACK deadline, 0: none */
	u64 pace_next_ns;
};

void mroce_conn_get_info(const struct mroce_conn *c, struct mroce_conn_info *out);

/* One path of a connection. */
struct mroce_path_info {
	u32 id;
	u16 sport;		/* its UDP source port */
	u8 state;		/* enum mroce_path_state */
	u32 cwnd;
	u32 alpha;		/* ECN estimate, 1/1024 */
	u32 inflight;		/* bytes */
	u64 srtt_ns;		/* 0 before the first sample */
	u64 rttvar_ns;
	u64 min_rtt_ns;
	u64 rto_ns;
	u64 reo_ns;		/* reordering window */
	struct mroce_path_stats stats;
};

/*
 * Path @i, below the count the connection was made with (cfg.npaths; the
 * negotiated ones come first).  False beyond it.
 */
bool mroce_conn_get_path_info(const struct mroce_conn *c, u32 i,
			  struct mroce_path_info *out);

/*
 * Prefetch what mroce_conn_rx() will touch first for the packet of @len
 * bytes at @buf, not yet decoded (the connection's leading lines, the
 * path, for an ACK the paths it acknowledges and their newest ring
 * entries, for data the receiver's half of the path and the dsn window).
 * @npaths: cfg.npaths of mroce_conn_init() (reading it would wait for the
 * very lines being fetched).  Returns the destination stream of a data
 * packet, for mroce_stream_prefetch_rx(), else 0.  Only a hint: nothing
 * is validated, nothing changes.
 */
u32 mroce_conn_prefetch_rx(const struct mroce_conn *c, u32 npaths,
			   const void *buf, u32 len);
/* The same for the stream a data packet is for: its slot of the message. */
void mroce_stream_prefetch_rx(const struct mroce_stream *st, const void *buf,
			      u32 len);

/*
 * The share's settings, which may change between epochs: the inbound
 * capacity (bytes per second; 0: no hints), the epoch, whether a new
 * connection is granted a first rate.
 */
void mroce_share_set_inbound(struct mroce_share *s, u64 capacity);
void mroce_share_set_epoch(struct mroce_share *s, u64 epoch_ns);
void mroce_share_set_grants(struct mroce_share *s, bool grants);
/* Senders active in the last epoch. */
u32 mroce_share_get_nactive(const struct mroce_share *s);

#ifdef __cplusplus
}
#endif
#endif /* MROCE_CORE_MROCE_H */
