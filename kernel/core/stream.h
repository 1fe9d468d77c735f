/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A stream is one RC QP's message flow inside a connection: all QPs between
 * two endpoints share the connection's paths and congestion state, and
 * keep only this per-QP state.  It has two halves:
 *
 *  - requester (requester.c): the messages posted to the send queue (a
 *    window of 256), numbered by msn, completed strictly in posting order;
 *  - responder (responder.c): a window of 256 message slots into which
 *    packets of the peer's messages are placed in any order, plus the
 *    READ/ATOMIC response jobs it owes the peer.  Messages complete, and
 *    READs and ATOMICs execute, in msn order: the "frontier".
 */
#ifndef MROCE_CORE_STREAM_H
#define MROCE_CORE_STREAM_H

#include "platform.h"
#include "wire.h"
#include "list.h"

#ifdef __cplusplus
extern "C" {
#endif

struct mroce_conn;

/* ---- requester (requester.c): the messages posted, their completion ---- */

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

enum mroce_txmsg_state {
	MROCE_TXM_FREE,
	MROCE_TXM_SENDING,	/* packets left to send */
	MROCE_TXM_SENT,		/* all sent, waiting for completion */
	MROCE_TXM_WAIT,		/* NACKed (RNR …): resend at resend_at */
	MROCE_TXM_DONE,		/* complete, reported when it is oldest */
};

struct mroce_txmsg {
	struct mroce_msg m;
	u64 resend_at;
	u64 orig;		/* ATOMIC: value returned by the peer */
	u32 msn;
	u32 rsn;		/* receive sequence (SEND*, WRITE_IMM) */
	u32 sent;		/* next byte offset to send (this attempt) */
	u32 acked;		/* bytes acknowledged on paths (this attempt) */
	u32 resp;		/* READ: response bytes placed */
	u8 state;
	u8 attempt;
	u8 status;		/* enum mroce_err once DONE */
	u8 acked_last;		/* last packet (this attempt) acknowledged */
	u8 rnr_left;		/* remaining RNR retries (7 = forever) */
	u8 retry_left;		/* remaining retries for NO_STREAM */
};

/* ---- responder (responder.c): the peer's messages, the responses owed ---- */

enum mroce_rxmsg_state {
	MROCE_RXM_FREE,
	MROCE_RXM_ACTIVE,	/* packets arriving */
	MROCE_RXM_READY,	/* all arrived: completes at the frontier */
	MROCE_RXM_RNR,		/* refused for want of a receive */
	MROCE_RXM_FAILED,	/* refused for good: breaks the stream */
};

struct mroce_rxmsg {
	u64 cookie;		/* claimed receive (SEND*, WRITE_IMM) */
	u64 va;			/* READ_REQ / atomics */
	u64 swap_add;
	u64 compare;
	u32 msn;
	u32 total;
	u32 got;		/* bytes placed (this attempt) */
	u32 imm;
	u32 rkey;
	u8 op;
	u8 state;
	u8 attempt;
	u8 flags;		/* MROCE_F_SOLICITED */
	u8 claimed;		/* cookie is a claimed receive */
	u8 status;		/* FAILED: why (enum mroce_err) */
};

/* A READ or ATOMIC response the responder owes the requester. */
struct mroce_resp {
	u64 va;
	u64 orig;
	u32 msn;
	u32 rkey;
	u32 total;		/* payload bytes (ATOMIC: 0, value in header) */
	u32 sent;
	u32 acked;
	u8 op;			/* MROCE_OP_READ_RESP / MROCE_OP_ATOMIC_RESP */
	u8 busy;
	u8 all_sent;
	u8 acked_last;
};

/* ---- the stream as a whole ---- */

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

struct mroce_stream {
	struct mroce_conn *conn;
	u32 id;			/* local stream id (our QPN) */
	u32 peer;		/* the peer's stream id (its QPN) */
	u8 state;
	u8 touched;		/* posted to, or a packet came for it */
	struct mroce_stream_params prm;
	struct mroce_list node;		/* conn->streams */
	struct mroce_list sched;	/* conn->sched: has packets to send */
	struct mroce_list ackq;		/* conn->ackq: stream entry to send */
	struct mroce_list waitq;	/* conn->waitq: a timer is pending */
	struct mroce_list pollq;	/* conn->pollq: a POLL is to be sent */
	u64 wake_at;			/* earliest waitq deadline */

	/* requester */
	u32 tx_una;		/* oldest incomplete msn */
	u32 tx_next;		/* no unsent packets below this msn */
	u32 tx_end;		/* msn of the next post */
	u32 tx_rsn;		/* next receive sequence number */
	u32 rd_inflight;	/* READ/ATOMICs sent and not complete */
	u32 frontier;		/* peer's frontier as last reported */
	u64 poll_at;		/* POLL if completion stalls */
	/*
	 * Last progress of the oldest incomplete message: a packet of the
	 * stream acknowledged, the frontier moved, a response byte, a
	 * refusal (a back-off counts from its end), or its becoming oldest.
	 */
	u64 progress_ns;
	u64 stall_check;	/* found overdue: fails at this check */

	/* responder */
	u32 rx_next;		/* frontier: every msn below completed */
	u32 nack_msn;		/* ERROR: the refusal that broke it */
	u8 nack_status;
	u8 nack_attempt;
	u8 failing;		/* a message ahead of the frontier failed */
	u8 fail_status;
	u8 fail_attempt;
	u32 fail_msn;
	u8 resp_head;		/* oldest response job */
	u8 resp_count;
	u16 rnr_slots;		/* messages refused for want of a receive */

	struct mroce_stream_stats stats;
	struct mroce_txmsg tx[MROCE_STREAM_WINDOW];
	struct mroce_rxmsg rx[MROCE_STREAM_WINDOW];
	struct mroce_resp resp[MROCE_MAX_RD_ATOMIC];
};

static inline struct mroce_txmsg *mroce_txmsg(struct mroce_stream *st,
					      u32 msn)
{
	return &st->tx[msn % MROCE_STREAM_WINDOW];
}

static inline struct mroce_rxmsg *mroce_rxmsg(struct mroce_stream *st,
					      u32 msn)
{
	return &st->rx[msn % MROCE_STREAM_WINDOW];
}

/* Zero @st and give it its local id.  Not yet attached to a connection. */
void mroce_stream_init(struct mroce_stream *st, u32 id);

/*
 * The same for @st in memory the caller knows to be zeroed (calloc, fresh
 * pages): the message windows (~41 KB) are not written, so their pages are
 * touched only as messages use them.
 */
void mroce_stream_init_zeroed(struct mroce_stream *st, u32 id);

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
 * Nothing was ever posted to it and no packet came for it: it can move to
 * another connection of the same peer as if it had been attached there.
 */
static inline bool mroce_stream_pristine(const struct mroce_stream *st)
{
	return !st->touched;
}

/*
 * Post one message.  Returns 0, MROCE_ERR_AGAIN when the message window is
 * full (post again after a completion), or MROCE_ERR_INVAL.
 */
int mroce_stream_post(struct mroce_stream *st, const struct mroce_msg *m,
		      u64 now);

/* Room for another message? */
static inline bool mroce_stream_can_post(const struct mroce_stream *st)
{
	return st->tx_end - st->tx_una < MROCE_STREAM_WINDOW;
}

/*
 * Error path (verbs: QP moved to ERR): report every outstanding send as
 * MROCE_ERR_FLUSH in order, and every claimed, incomplete receive likewise;
 * forget what is in flight.  The stream stays attached until detach.
 */
void mroce_stream_flush(struct mroce_stream *st);

/* Detach from the connection; drops everything in flight for it. */
void mroce_stream_detach(struct mroce_stream *st);

#define MROCE_ERR_AGAIN	(-11)
#define MROCE_ERR_INVAL	(-22)

#ifdef __cplusplus
}
#endif
#endif /* MROCE_CORE_STREAM_H */
