// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Reference implementation of mroce_conn_next_timer(): the plain scan of
 * kernel/core/timers.c before it was optimised, verbatim (see timer_ref.h),
 * except the probe timeout, a formula both share (mroce_tlp_timeout).
 */
#include "internal.h"
#include "timer_ref.h"

static inline u64 ref_earliest(u64 a, u64 b)
{
	if (!a)
		return b;
	if (!b)
		return a;
	return a < b ? a : b;
}

/* From the oldest packet out; una_sent_ns spares the scan the ring. */
static u64 ref_rto_at(const struct mroce_path *p)
{
	if (!p->inflight_pkts)
		return 0;
	return MROCE_MAX(p->una_sent_ns, p->last_ack_ns) + p->rtt.rto;
}

static u64 ref_tlp_at(const struct mroce_conn *c, const struct mroce_path *p)
{
	if (!p->inflight_pkts || !p->tlp_left ||
	    p->state != MROCE_PATH_ACTIVE)
		return 0;
	/* each further probe waits twice as long */
	return MROCE_MAX(p->last_send_ns, p->last_ack_ns) +
	       (mroce_tlp_timeout(c, p) << (MROCE_TLP_MAX - p->tlp_left));
}

uint64_t mroce_path_timer_ref(const struct mroce_conn *c, uint32_t i)
{
	const struct mroce_path *p = &c->paths[i];
	u64 at = 0;

	at = ref_earliest(at, ref_rto_at(p));
	at = ref_earliest(at, p->reo_at);
	at = ref_earliest(at, ref_tlp_at(c, p));
	if (p->state == MROCE_PATH_PROBING)
		at = ref_earliest(at, p->probe_at);
	if (p->epoch_sent)
		at = ref_earliest(at, p->epoch_start + c->cfg.epoch_ns);
	return at;
}

uint64_t mroce_next_timer_ref(const struct mroce_conn *c)
{
	const struct mroce_list *pos;
	u64 at = 0;
	u32 i;

	switch (c->state) {
	case MROCE_CONN_CONNECTING:
		return c->hello_at;
	case MROCE_CONN_ESTABLISHED:
		break;
	default:
		return 0;
	}
	if (!c->peer_nonce && c->hello_tries <= c->cfg.hello_retries)
		at = ref_earliest(at, c->hello_at);
	if (c->ack_at)
		at = ref_earliest(at, c->ack_at);
	/* only when the pacer, not a window, is what holds data back */
	if (c->paced)
		at = ref_earliest(at, c->pace_next_ns - c->cfg.pace_slack_ns);
	for (i = 0; i < c->npaths; i++)
		at = ref_earliest(at, mroce_path_timer_ref(c, i));
	for (pos = c->waitq.next; pos != &c->waitq; pos = pos->next) {
		const struct mroce_stream *st =
			mroce_list_entry(pos, struct mroce_stream, waitq);

		at = ref_earliest(at, st->wake_at);
	}
	/* dead: outstanding data, after MROCE_DEAD_ROUNDS unanswered rounds */
	if (mroce_conn_outstanding(c) && c->rto_rounds >= MROCE_DEAD_ROUNDS)
		at = ref_earliest(at, c->last_progress_ns + c->cfg.dead_ns);
	return at;
}
