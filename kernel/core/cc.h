/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Sender congestion control: ECN-driven AIMD in the manner of DCTCP, one
 * instance per path and one per connection.  Loss is deliberately not a
 * congestion signal: a randomly lossy fabric must not collapse the window.
 * Only an RTO (the path went silent) shrinks a path to one packet.
 *
 * Fixed point only: alpha is the EWMA of the CE-marked fraction in units of
 * 1/MROCE_ALPHA_ONE.
 */
#ifndef MROCE_CORE_CC_H
#define MROCE_CORE_CC_H

#include "platform.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MROCE_ALPHA_SHIFT	10
#define MROCE_ALPHA_ONE		(1u << MROCE_ALPHA_SHIFT)
#define MROCE_ALPHA_G_SHIFT	4	/* EWMA gain g = 1/16 */

struct mroce_cc {
	u32 cwnd;	/* bytes allowed in flight */
	u32 ssthresh;	/* leave slow start above this */
	u32 min_cwnd;
	u32 max_cwnd;
	u32 mss;
	u32 alpha;	/* marked fraction estimate */
	u32 ai_acc;	/* congestion-avoidance byte accumulator */
	u32 wnd_pkts;	/* packets observed in this window */
	u32 wnd_ce;	/* of which CE-marked */
	u32 cuts;	/* multiplicative decreases (telemetry) */
};

void mroce_cc_init(struct mroce_cc *cc, u32 mss, u32 init_cwnd,
		   u32 max_cwnd);

/* @bytes newly acknowledged: grow the window (slow start or AIMD). */
void mroce_cc_on_ack(struct mroce_cc *cc, u32 bytes);

/* The receiver saw @pkts packets, @ce of them CE-marked. */
static inline void mroce_cc_on_ecn(struct mroce_cc *cc, u32 pkts, u32 ce)
{
	cc->wnd_pkts += pkts;
	cc->wnd_ce += MROCE_MIN(ce, pkts);
}

/*
 * End of an observation window (about one RTT of data): fold the marked
 * fraction into alpha and, if anything was marked, cut by alpha/2.
 * Returns true when the window was cut.
 */
bool mroce_cc_on_window(struct mroce_cc *cc);

/* The path timed out: back to the minimum, keep alpha. */
void mroce_cc_on_rto(struct mroce_cc *cc);

#ifdef __cplusplus
}
#endif
#endif /* MROCE_CORE_CC_H */
