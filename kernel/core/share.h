/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Receiver-driven fair share.  A receiving endpoint knows its inbound
 * capacity and who is sending to it; every epoch it divides the capacity
 * max-min fairly among its active senders, and every ACK it returns carries
 * that sender's share as a rate hint.  An incast therefore settles within
 * about one epoch plus one RTT, instead of waiting for ECN to converge.
 */
#ifndef MROCE_CORE_SHARE_H
#define MROCE_CORE_SHARE_H

#include "platform.h"
#include "list.h"
#include "wire.h"

#ifdef __cplusplus
extern "C" {
#endif

struct mroce_conn;

struct mroce_share {
	u64 capacity;		/* inbound bytes per second; 0 = no hints */
	u64 epoch_ns;
	u64 epoch_start;
	u32 hint;		/* current fair share, 1000 B/s */
	u32 nactive;		/* senders active in the last epoch */
	u32 cur_active;		/* senders seen so far in this epoch */
	u32 epoch_id;
	u32 ce_frac;		/* CE-marked fraction of recent data, of ONE */
	u32 drained;		/* the drain term was on in this epoch */
	u32 grants;		/* grant new connections a first rate */
	u32 nmembers;		/* connections sharing the capacity */
	u64 epochs;
	struct mroce_list conns;
};


/*
 * A member received data.  A sender new in this epoch, beyond the number
 * active in the last one, lowers the share at once: its first ACK already
 * carries capacity / senders, so an incast settles in about an RTT instead
 * of waiting for the epoch to end.  Called under the member's own lock
 * only: the counters it bumps are shared by the members and may lose an
 * increment to a race, which only delays that correction to the epoch.
 */
void mroce_share_rx(struct mroce_share *s, struct mroce_conn *c);

/*
 * The first rate we grant a connection a peer opens to us (our ACCEPT
 * carries it), 1000 B/s, or 0 for none.  The capacity split equally among
 * every connection we have, as if all of them were about to send: the
 * peers of an incast connect within a few packet times of each other, so
 * the share as it stands (capacity / senders seen so far) would grant the
 * first ones most of the port and build the very queue a grant is for.
 * The connection counts as a sender from now on, as its first data would;
 * the ACK of that data brings the share as it is by then.
 */
u32 mroce_share_grant(struct mroce_share *s, struct mroce_conn *c);

#define MROCE_SHARE_CE_ONE	1024u
#define MROCE_SHARE_CE_SHIFT	4	/* EWMA gain 1/16 per packet */

/*
 * A member received new data, CE-marked or not.  Our inbound port's queue
 * is above the fabric's marking threshold while the marks come.
 */
static inline void mroce_share_mark(struct mroce_share *s, bool ce)
{
	u32 v = ce ? MROCE_SHARE_CE_ONE : 0;

	if (v >= s->ce_frac)
		s->ce_frac += (v - s->ce_frac + (1u << MROCE_SHARE_CE_SHIFT) -
			       1) >> MROCE_SHARE_CE_SHIFT;
	else
		s->ce_frac -= (s->ce_frac - v + (1u << MROCE_SHARE_CE_SHIFT) -
			       1) >> MROCE_SHARE_CE_SHIFT;
	if (s->ce_frac > MROCE_SHARE_CE_ONE / 4)
		s->drained = 1;
}

/*
 * The hint a member's ACK carries now, 1000 B/s: the fair share less a
 * drain term while our port's queue is above the marking threshold.  The
 * shares add up to the port, so without it a queue (an incast's first
 * windows) drains only at the share's rounding headroom (~1% of the
 * port).  Above 1/4 marked, each hint is cut by half the marked
 * fraction: at full marking the senders get half their share and the
 * queue drains at half the port; as the marks stop it rises back.
 */
static inline u32 mroce_share_hint(const struct mroce_share *s)
{
	u64 cut;

	if (s->hint == MROCE_RATE_NONE ||
	    s->ce_frac <= MROCE_SHARE_CE_ONE / 4)
		return s->hint;
	cut = ((u64)s->hint * s->ce_frac) >> 11;
	return s->hint - (u32)cut;
}

#ifdef __cplusplus
}
#endif
#endif /* MROCE_CORE_SHARE_H */
