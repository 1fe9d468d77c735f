// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Path bookkeeping shared by both halves: initialisation (the RTT
 * estimator, RFC 6298 arithmetic in integer nanoseconds, is inline in
 * path.h).  What a path does on ACKs, losses and timeouts lives in ack.c
 * and timers.c, where the connection-wide consequences are handled too.
 */
#include "path.h"

const char *const mroce_path_state_names[4] = {
	[MROCE_PATH_ACTIVE]	= "active",
	[MROCE_PATH_SUSPECT]	= "suspect",
	[MROCE_PATH_FAILED]	= "failed",
	[MROCE_PATH_PROBING]	= "probing",
};

void mroce_path_init(struct mroce_path *p, u16 id, u16 sport, u32 mss,
		     u32 init_cwnd, u64 rto_init, u64 now)
{
	memset(p, 0, sizeof(*p));
	p->id = id;
	p->sport = sport;
	p->state = MROCE_PATH_ACTIVE;
	p->rtt.rto = rto_init;
	p->state_since = now;
	p->epoch_start = now;
	p->tlp_left = MROCE_TLP_MAX;
	mroce_cc_init(&p->cc, mss, init_cwnd, MROCE_PATH_WINDOW * mss);
}
