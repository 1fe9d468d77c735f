// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ECN-driven AIMD (see cc.h).  The window grows exponentially until the
 * first mark, then by one MSS per window of acknowledged bytes; a window in
 * which the receiver saw CE marks shrinks it by alpha/2, where alpha tracks
 * the fraction of marked packets.  Losses are recovered by SACK and do not
 * touch the window.
 */
#include "cc.h"

void mroce_cc_init(struct mroce_cc *cc, u32 mss, u32 init_cwnd,
		   u32 max_cwnd)
{
	memset(cc, 0, sizeof(*cc));
	cc->mss = mss;
	cc->min_cwnd = mss;
	cc->max_cwnd = MROCE_MAX(max_cwnd, mss);
	cc->cwnd = MROCE_MIN(MROCE_MAX(init_cwnd, mss), cc->max_cwnd);
	cc->ssthresh = cc->max_cwnd;
	/* start pessimistic, as DCTCP does: the first marked window halves */
	cc->alpha = MROCE_ALPHA_ONE;
}

void mroce_cc_on_ack(struct mroce_cc *cc, u32 bytes)
{
	if (cc->cwnd < cc->ssthresh) {
		cc->cwnd += bytes;
	} else {
		cc->ai_acc += bytes;
		while (cc->ai_acc >= cc->cwnd) {
			cc->ai_acc -= cc->cwnd;
			cc->cwnd += cc->mss;
		}
	}
	if (cc->cwnd > cc->max_cwnd)
		cc->cwnd = cc->max_cwnd;
}

bool mroce_cc_on_window(struct mroce_cc *cc)
{
	u32 frac = 0, cut, delta;
	bool marked = cc->wnd_ce != 0;

	if (cc->wnd_pkts)
		frac = (u32)mroce_div64((u64)cc->wnd_ce << MROCE_ALPHA_SHIFT,
					cc->wnd_pkts);
	/*
	 * alpha += g * (frac - alpha), kept in [0, ONE]; a step that rounds
	 * to zero lands on frac, or alpha would stall up to 1/64 away from it
	 */
	if (frac >= cc->alpha) {
		delta = (frac - cc->alpha) >> MROCE_ALPHA_G_SHIFT;
		cc->alpha = delta ? cc->alpha + delta : frac;
	} else {
		delta = (cc->alpha - frac) >> MROCE_ALPHA_G_SHIFT;
		cc->alpha = delta ? cc->alpha - delta : frac;
	}
	cc->wnd_pkts = 0;
	cc->wnd_ce = 0;
	if (!marked)
		return false;

	cut = (u32)(((u64)cc->cwnd * cc->alpha) >> (MROCE_ALPHA_SHIFT + 1));
	cc->cwnd = cc->cwnd > cut + cc->min_cwnd ? cc->cwnd - cut :
						     cc->min_cwnd;
	cc->ssthresh = cc->cwnd;
	cc->ai_acc = 0;
	cc->cuts++;
	return true;
}

void mroce_cc_on_rto(struct mroce_cc *cc)
{
	cc->ssthresh = MROCE_MAX(cc->cwnd / 2, cc->min_cwnd);
	cc->cwnd = cc->min_cwnd;
	cc->ai_acc = 0;
}
