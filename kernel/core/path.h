/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A path is one UDP source port of a connection: the fabric's ECMP hash
 * pins it to one route, so packets on a path stay in order and a gap in its
 * sequence is loss, not reordering.  Each path has two halves:
 *
 *  - sender: its own packet sequence (psn), a ring of the packets in flight
 *    (the SACK scoreboard), RTT estimate, congestion window, telemetry and
 *    health state (active / suspect / failed / probing);
 *  - receiver: the cumulative psn and 256-bit SACK bitmap of what the peer
 *    sent on its path with the same id, and the pending-ACK bookkeeping.
 */
#ifndef MROCE_CORE_PATH_H
#define MROCE_CORE_PATH_H

#include "platform.h"
#include "wire.h"
#include "cc.h"

#ifdef __cplusplus
extern "C" {
#endif

struct mroce_stream;

/* Tail-loss probes a silent path sends (backing off) before its RTO. */
#define MROCE_TLP_MAX		3


/* What an in-flight packet carried, so it can be rebuilt if lost. */
enum mroce_txent_kind {
	MROCE_TXE_SQ,		/* a packet of a send-queue message */
	MROCE_TXE_RESP,		/* a READ or ATOMIC response packet */
};

enum mroce_txent_state {
	MROCE_TXE_FREE,
	MROCE_TXE_INFLIGHT,
	MROCE_TXE_ACKED,
	MROCE_TXE_LOST,		/* resolved: queued for retransmission */
};

#define MROCE_TXE_LAST		0x01	/* last packet of its message */

/* One packet of a stream, as remembered for retransmission. */
struct mroce_pktref {
	struct mroce_stream *st;
	u32 msn;
	u32 offset;
	u32 len;
	u32 dsn;
	u8 kind;
	u8 attempt;
	u8 flags;
	u8 resp;	/* MROCE_TXE_RESP: index of the response job */
	u8 path;	/* lost: the path it was lost on */
};

/*
 * Why a packet was declared LOST.  Those lost by reordering distance or by
 * a tail-loss probe are remembered (mroce_path.gone) after they leave the
 * ring, so a late ACK of one shows the loss was not one; an RTO's are not.
 */
enum mroce_lost_by {
	MROCE_LOST_RTO,
	MROCE_LOST_REO,		/* passed by dupthresh or a reordering window */
	MROCE_LOST_TLP,		/* the newest packet of a silent path */
};

struct mroce_txent {
	struct mroce_pktref ref;
	u64 sent_ns;
	u8 state;
	u8 lost_by;	/* enum mroce_lost_by, while LOST */
};

struct mroce_rtt {
	u64 srtt;	/* ns, 0 until the first sample */
	u64 rttvar;
	u64 min_rtt;
	u64 rto;
	u64 latest;
	u32 samples;
};


/* Given-up psns a path remembers to notice reordering (struct mroce_path). */
#define MROCE_GONE_MAX		16

/* A psn given up for being passed by later packets, and when it was sent. */
struct mroce_gone {
	u32 psn;
	u32 sent;	/* low 32 bits of the send time, ns; bit 0: MROCE_LOST_TLP */
};

struct mroce_path {
	/*
	 * What mroce_conn_next_timer() reads of a path whose deadlines may
	 * have changed comes first, the RTT second: an idle path costs one
	 * cache line, a busy one two (paths start on lines, conn.c; the
	 * simulator's profile: the scan was 12% of its time, nearly all cache
	 * misses).
	 */
	u16 id;
	u16 sport;
	u8 state;
	u8 rto_count;		/* consecutive timeouts */
	u8 probes_unanswered;
	u8 tlp_left;		/* tail-loss probes left before an RTO */
	u32 snd_una;		/* oldest unresolved psn */
	u32 inflight_pkts;
	u32 epoch_sent;
	u32 epoch_lost;
	u64 reo_at;		/* loss detection waits for reo_ns until */
	u64 last_send_ns;
	u64 last_ack_ns;	/* last ACK that acknowledged something */
	u64 probe_at;		/* PROBING: next probe */
	u64 epoch_start;	/* health epoch (loss / ECN telemetry) */
	struct mroce_rtt rtt;
	u64 una_sent_ns;	/* ring[snd_una].sent_ns while anything is out */

	/* ---- sender half ---- */
	u32 snd_nxt;		/* next psn to send */
	u32 snd_high;		/* one past the highest psn acknowledged */
	u32 lost_scan;		/* loss detection resumes here */
	u32 inflight;		/* bytes in flight (not acked, not lost) */
	u32 wnd_end;		/* psn closing the CC observation window */
	u32 ring_stride;	/* the connection's path count (mroce_path_ent) */
	u64 out_bits[MROCE_SACK_WORDS];	/* unacked psns, bit psn % 256 */
	/*
	 * The last psns given up for being passed by later ones, after they left
	 * the ring: an ACK that shows one arrived after all proves the path
	 * reorders.  (Those still in the ring are found by their LOST state.)
	 */
	struct mroce_gone gone[MROCE_GONE_MAX];
	u8 gone_head;
	u8 gone_count;
	u32 epoch_spurious;
	u64 reo_ns;		/* reordering window (0: a gap is loss) */
	u64 reo_grown_ns;	/* when reo_ns last grew */
	u64 rack_sent_ns;	/* latest send time of an acknowledged packet */
	u64 rack_rtt_ns;	/* and the round trip it took */
	u32 peer_ce;		/* last cumulative counts from the peer */
	u32 peer_rcv;
	u32 ackreq_psn;		/* last window-filling ACK_REQ (tx.c) */
	u8 ackreq_on;
	u64 state_since;
	u32 congested_epochs;	/* consecutive epochs with heavy marking */
	struct mroce_cc cc;
	struct mroce_path_stats stats;

	/* ---- receiver half ---- */
	u32 rcv_cum;		/* every psn < rcv_cum received or abandoned */
	u32 rcv_nxt;		/* one past the newest psn received */
	u32 rcv_ce;		/* cumulative CE-marked packets */
	u32 rcv_count;		/* cumulative packets */
	u32 rcv_last_ts;	/* ts of the newest packet, echoed */
	u32 rcv_unacked;	/* packets since this path was last acked */
	u32 probe_echo_ts;
	u64 rcv_last_ns;
	u64 rcv_ack_at;		/* ACK deadline, 0 = none due */
	u64 probe_rcv_ns;
	u64 rcv_bits[MROCE_SACK_WORDS];	/* bit (psn % 256) */
	u8 rcv_ack_now;		/* acknowledge without delay */
	u8 rcv_ce_seen;		/* CE since the last ACK (ECE flag) */
	u8 probe_ack_pending;
};

/*
 * The scoreboard entry of @psn.  The rings of a connection's paths follow
 * its array of paths as one array, interleaved: the entry of psn on path
 * id is entry (psn % MROCE_PATH_WINDOW) * npaths + id (ring_stride =
 * npaths), so packets sprayed over the paths share cache lines and pages,
 * and the path headers stay together for the timer scans.  Only paths of
 * a connection have a ring.
 */
static inline struct mroce_txent *mroce_path_ent(const struct mroce_path *p,
						 u32 psn)
{
	struct mroce_path *paths = (struct mroce_path *)(uintptr_t)(p - p->id);
	struct mroce_txent *ring = (struct mroce_txent *)&paths[p->ring_stride];

	return &ring[(psn % MROCE_PATH_WINDOW) * p->ring_stride + p->id];
}

/* Packets the sender may still put on this path before the ring is full. */
static inline bool mroce_path_ring_full(const struct mroce_path *p)
{
	return p->snd_nxt - p->snd_una >= MROCE_PATH_WINDOW;
}

/* A path without a ring (the connection gives it one: mroce_conn_init). */
void mroce_path_init(struct mroce_path *p, u16 id, u16 sport, u32 mss,
		     u32 init_cwnd, u64 rto_init, u64 now);

/*
 * Fold an RTT sample into the estimator; recompute the RTO.  Inline: once
 * per ACK block that acknowledged something.
 */
static inline void mroce_rtt_sample(struct mroce_rtt *r, u64 sample,
				    u64 rto_min, u64 rto_max)
{
	u64 var;

	r->latest = sample;
	if (!r->samples++) {
		r->srtt = sample;
		r->rttvar = sample / 2;
		r->min_rtt = sample;
	} else {
		var = r->srtt > sample ? r->srtt - sample : sample - r->srtt;
		r->rttvar = r->rttvar - r->rttvar / 4 + var / 4;
		r->srtt = r->srtt - r->srtt / 8 + sample / 8;
		if (sample < r->min_rtt)
			r->min_rtt = sample;
	}
	r->rto = r->srtt + MROCE_MAX(4 * r->rttvar, rto_min / 4);
	if (r->rto < rto_min)
		r->rto = rto_min;
	if (r->rto > rto_max)
		r->rto = rto_max;
}

/* ---- receiver half (sack.c) ---- */

enum mroce_sack_result {
	MROCE_SACK_NEW,		/* first time this psn was seen */
	MROCE_SACK_DUP,		/* already received (fabric duplicate) */
	MROCE_SACK_LATE,	/* below the cumulative point: not tracked */
	MROCE_SACK_FAR,		/* new, 256 or more above it (check only) */
};

/*
 * What @psn is to the path, changing nothing: the receiver decides with
 * the packet's dsn whether a psn outside the window may move it (rx.c).
 */
enum mroce_sack_result mroce_sack_check(const struct mroce_path *p, u32 psn);

/*
 * Record @psn, checked NEW or FAR: a FAR psn drags the cumulative point up
 * to psn - 255 (everything below is resolved at the sender, which never has
 * more than 256 psns unresolved on a path).
 */
void mroce_sack_commit(struct mroce_path *p, u32 psn);

/* Check and commit in one: NEW (FAR included), DUP or LATE. */
enum mroce_sack_result mroce_sack_rx(struct mroce_path *p, u32 psn);

/* Fill @ap with this path's receive state (cum_psn + SACK bitmap). */
void mroce_sack_fill(const struct mroce_path *p, struct mroce_ack_path *ap,
		     u64 now);

/* The same, encoded as the wire's path block at @buf. */
void mroce_sack_put(const struct mroce_path *p, void *buf, u64 now);

/*
 * Re-align a SACK bitmap whose bit i means psn @base + i onto the ring
 * position of each psn (bit psn % 256), as the sender's scoreboard uses.
 */
void mroce_sack_to_ring(const u64 in[MROCE_SACK_WORDS], u32 base,
			u64 out[MROCE_SACK_WORDS]);

#ifdef __cplusplus
}
#endif
#endif /* MROCE_CORE_PATH_H */
