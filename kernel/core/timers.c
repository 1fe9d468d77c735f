// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Every timer of a connection, in one place.  The caller arms a single
 * timer at mroce_conn_next_timer() and calls mroce_conn_on_timer() when it
 * fires; each deadline below is derived from state, so nothing is ever
 * "cancelled".
 *
 *  hello      CONNECTING: resend CONNECT with exponential back-off; give
 *             up (FAILED) after hello_retries.
 *  ack        a delayed ACK is due (ack_delay after the first unacked
 *             packet of a path).
 *  pace       the pacer lets the next data packet go.
 *  rto        per path: the oldest packet in flight has waited an RTO
 *             since it was sent or since the path last made progress.
 *             Everything in flight on the path is lost; the path becomes
 *             SUSPECT (one packet at a time) and, after fail_rtos in a
 *             row, FAILED: a new source port is chosen and probed.
 *  reorder    per path: a gap that would prove a loss is still younger
 *             than the path's reordering window (only paths that have
 *             shown reordering have one): decide once it is not.
 *  tlp        per path: a tail-loss probe.  When a path has been silent
 *             for two RTTs after its last send, its newest packet is
 *             resent, so the last packet of a message does not wait for
 *             an RTO; the ACK of the probe exposes any earlier hole.  Up
 *             to MROCE_TLP_MAX probes per silence, each waiting twice as
 *             long, since a probe is lost as easily as the packet it
 *             replaces.
 *  probe      per path, PROBING: send a PROBE; after probe_max without an
 *             answer try yet another source port.
 *  epoch      path health: a path losing far more than its siblings, or
 *             persistently ECN-marked while others are not, is moved to a
 *             new source port (a new ECMP route).
 *  stream     RNR / retry back-off of a NACKed message expires; a stream
 *             whose completion is overdue sends a POLL.
 *  stall      per stream: its oldest incomplete message made no progress
 *             (nothing of the stream acknowledged, no frontier move, no
 *             response byte, no refusal) for T * (retry_cnt + 1), T the
 *             QP's local ACK timeout (dead_ns for an infinite one), and
 *             still none T later (T at least rto_min): it fails
 *             with retry exceeded and the stream breaks (requester.c,
 *             stall_bound()).  Back-offs do not count.  A stream's stall
 *             and back-off deadlines share its waitq entry.
 *  dead       data outstanding, no progress for dead_ns and at least
 *             MROCE_DEAD_ROUNDS timer passes that fired an RTO (or gave
 *             up probing a path) since: the peer is unreachable; the
 *             connection fails.
 */
#include "internal.h"

/* From the oldest packet out; una_sent_ns spares the scan the ring. */
static u64 path_rto_at(const struct mroce_path *p)
{
	if (!p->inflight_pkts)
		return 0;
	return MROCE_MAX(p->una_sent_ns, p->last_ack_ns) + p->rtt.rto;
}

static u64 path_tlp_at(const struct mroce_conn *c, const struct mroce_path *p)
{
	if (!p->inflight_pkts || !p->tlp_left ||
	    p->state != MROCE_PATH_ACTIVE)
		return 0;
	/* each further probe waits twice as long */
	return MROCE_MAX(p->last_send_ns, p->last_ack_ns) +
	       (mroce_tlp_timeout(c, p) << (MROCE_TLP_MAX - p->tlp_left));
}

/*
 * Keep the earliest of deadlines where 0 means none: minimise d - 1, which
 * turns "none" into U64_MAX, so every deadline is one compare (a cmov) and
 * no branch; the caller adds the 1 back (U64_MAX + 1: still none).
 */
static inline u64 earlier1(u64 m, u64 d)
{
	d -= 1;
	return d < m ? d : m;
}

/* earlier1() of m and every deadline of @p */
static inline u64 path_earliest(const struct mroce_conn *c,
				const struct mroce_path *p, u64 m)
{
	m = earlier1(m, p->reo_at);
	if (p->epoch_sent)
		m = earlier1(m, p->epoch_start + c->cfg.epoch_ns);
	if (p->state == MROCE_PATH_PROBING)
		m = earlier1(m, p->probe_at);
	if (!p->inflight_pkts)
		return m;
	m = earlier1(m, MROCE_MAX(p->una_sent_ns, p->last_ack_ns) +
			p->rtt.rto);
	if (p->tlp_left && p->state == MROCE_PATH_ACTIVE)
		m = earlier1(m, MROCE_MAX(p->last_send_ns, p->last_ack_ns) +
			     (mroce_tlp_timeout(c, p) <<
			      (MROCE_TLP_MAX - p->tlp_left)));
	return m;
}

/*
 * Called after every core call: only the paths of timer_mask count (a path
 * without traffic in this epoch has no deadline), their deadlines those of
 * path_rto_at() and path_tlp_at(), inline and without a branch per "none".
 * Each path's earliest is kept in timer_at and computed again only for the
 * paths of timer_dirty: a transmit changes one path, while every path
 * header a scan reads is a cache miss when many connections take turns.
 * selftests/fuzz/timer_ref.c keeps the plain scan as the oracle.
 */
u64 mroce_conn_next_timer(struct mroce_conn *c)
{
	const struct mroce_list *pos;
	u64 paths, dirty, m = ~0ULL;
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
		m = earlier1(m, c->hello_at);
	m = earlier1(m, c->ack_at);
	/* only when the pacer, not a window, is what holds data back */
	if (c->paced)
		m = earlier1(m, c->pace_next_ns - c->cfg.pace_slack_ns);
	paths = c->timer_mask;
	if (c->npaths < 64)
		paths &= (1ull << c->npaths) - 1;
	dirty = paths & c->timer_dirty;
	c->timer_dirty &= ~dirty;
	for (; dirty; dirty &= dirty - 1) {
		i = mroce_ctz64(dirty);
		c->timer_at[i] = path_earliest(c, &c->paths[i], ~0ULL);
	}
	/*
	 * The entry of a path outside timer_mask is U64_MAX: no branch.  Four
	 * at a time: the loop's own count and test were half its instructions.
	 */
	for (i = 0; i + 4 <= c->npaths; i += 4) {
		m = MROCE_MIN(m, c->timer_at[i]);
		m = MROCE_MIN(m, c->timer_at[i + 1]);
		m = MROCE_MIN(m, c->timer_at[i + 2]);
		m = MROCE_MIN(m, c->timer_at[i + 3]);
	}
	for (; i < c->npaths; i++)
		m = MROCE_MIN(m, c->timer_at[i]);
	for (pos = c->waitq.next; pos != &c->waitq; pos = pos->next) {
		const struct mroce_stream *st =
			mroce_list_entry(pos, struct mroce_stream, waitq);

		m = earlier1(m, st->wake_at);
	}
	/* before enough rounds, the RTOs and probes are what is due */
	if (mroce_conn_outstanding(c) && c->rto_rounds >= MROCE_DEAD_ROUNDS)
		m = earlier1(m, c->last_progress_ns + c->cfg.dead_ns);
	return m + 1;
}

u64 mroce_conn_timer_slack(const struct mroce_conn *c, u64 now, u64 at)
{
	if (c->cfg.far_slack_ns > c->cfg.timer_slack_ns &&
	    at >= now + c->cfg.far_ns && c->inflight <= c->cfg.far_flight &&
	    (!c->lost_open || now - c->lost_ns >= c->cfg.quiet_ns))
		return c->cfg.far_slack_ns;
	return c->cfg.timer_slack_ns;
}

enum mroce_timer_what mroce_conn_timer_what(const struct mroce_conn *c,
					    u64 at, u32 *path)
{
	const struct mroce_list *pos;
	u32 i;

	*path = ~0u;
	if (!at)
		return MROCE_TW_OTHER;
	if (c->state == MROCE_CONN_CONNECTING ||
	    (!c->peer_nonce && c->hello_at == at))
		return c->hello_at == at ? MROCE_TW_HELLO : MROCE_TW_OTHER;
	if (c->ack_at == at)
		return MROCE_TW_ACK;
	if (c->paced && c->pace_next_ns - c->cfg.pace_slack_ns == at)
		return MROCE_TW_PACE;
	for (i = 0; i < c->npaths; i++) {
		const struct mroce_path *p = &c->paths[i];
		enum mroce_timer_what w = MROCE_TW_OTHER;

		if (path_rto_at(p) == at)
			w = MROCE_TW_RTO;
		else if (p->reo_at == at)
			w = MROCE_TW_REORDER;
		else if (path_tlp_at(c, p) == at)
			w = MROCE_TW_TLP;
		else if (p->state == MROCE_PATH_PROBING && p->probe_at == at)
			w = MROCE_TW_PROBE;
		else if (p->epoch_sent && p->epoch_start + c->cfg.epoch_ns == at)
			w = MROCE_TW_EPOCH;
		if (w != MROCE_TW_OTHER) {
			*path = i;
			return w;
		}
	}
	for (pos = c->waitq.next; pos != &c->waitq; pos = pos->next) {
		const struct mroce_stream *st =
			mroce_list_entry(pos, struct mroce_stream, waitq);

		if (st->wake_at != at)
			continue;
		return mroce_stream_stall_at(c, st) == at ||
		       (st->stall_check == at && at) ? MROCE_TW_STALL :
						       MROCE_TW_STREAM;
	}
	if (mroce_conn_outstanding(c) &&
	    c->last_progress_ns + c->cfg.dead_ns == at)
		return MROCE_TW_DEAD;
	return MROCE_TW_OTHER;
}

static void on_rto(struct mroce_conn *c, struct mroce_path *p, u64 now)
{
	p->stats.rtos++;
	c->stats.rtos++;
	mroce_path_lose_all(c, p, now);
	mroce_cc_on_rto(&p->cc);
	p->rtt.rto = MROCE_MIN(p->rtt.rto * 2, c->cfg.rto_max_ns);
	if (++p->rto_count >= c->cfg.fail_rtos) {
		p->state = MROCE_PATH_FAILED;
		mroce_path_replace(c, p, now);
		return;
	}
	if (p->state == MROCE_PATH_ACTIVE) {
		p->state = MROCE_PATH_SUSPECT;
		p->state_since = now;
	}
}

static void on_tlp(struct mroce_conn *c, struct mroce_path *p, u64 now)
{
	u32 psn = p->snd_nxt;

	p->tlp_left--;
	while (psn != p->snd_una) {
		struct mroce_txent *e = mroce_path_ent(p, --psn);

		if (e->state == MROCE_TXE_INFLIGHT) {
			p->stats.tlps++;
			c->stats.tlps++;
			e->lost_by = MROCE_LOST_TLP;
			mroce_path_mark_lost(c, p, e, now);
			/* snd_una may now name a resolved packet: move it on */
			mroce_path_advance(p);
			return;
		}
	}
}

/*
 * Path health at the end of an epoch.  Loss alone is not congestion, but
 * a path that loses much more than the connection's other paths is a bad
 * route: move it.  Likewise a path marked heavily for several epochs while
 * some sibling is clean.
 */
static void on_epoch(struct mroce_conn *c, u64 now)
{
	u32 i, sent = 0, lost = 0, clean = 0, avg;

	for (i = 0; i < c->npaths; i++) {
		sent += c->paths[i].epoch_sent;
		lost += c->paths[i].epoch_lost;
		if (c->paths[i].state == MROCE_PATH_ACTIVE &&
		    c->paths[i].cc.alpha < c->cfg.congested_alpha / 2)
			clean++;
	}
	avg = sent ? (u32)mroce_div64((u64)lost * 1000, sent) : 0;
	for (i = 0; i < c->npaths; i++) {
		struct mroce_path *p = &c->paths[i];
		u32 rate;

		/* a reordering window shrinks while it is not needed */
		if (!p->epoch_spurious)
			p->reo_ns -= p->reo_ns / 8;
		p->epoch_spurious = 0;
		if (p->state != MROCE_PATH_ACTIVE || p->epoch_sent < 32) {
			p->epoch_sent = 0;
			p->epoch_lost = 0;
			p->epoch_start = now;
			continue;
		}
		rate = (u32)mroce_div64((u64)p->epoch_lost * 1000,
					p->epoch_sent);
		if (p->cc.alpha > c->cfg.congested_alpha && clean)
			p->congested_epochs++;
		else
			p->congested_epochs = 0;
		p->epoch_sent = 0;
		p->epoch_lost = 0;
		p->epoch_start = now;
		if (c->npaths > 1 && rate > avg + c->cfg.bad_loss_permille) {
			mroce_path_replace(c, p, now);
			continue;
		}
		if (p->congested_epochs >= c->cfg.congested_epochs)
			mroce_path_replace(c, p, now);
	}
	/* the only place bits are cleared: epoch_sent just went to 0 */
	for (i = 0; i < c->npaths; i++) {
		const struct mroce_path *p = &c->paths[i];

		if (!p->inflight_pkts && !p->epoch_sent && !p->reo_at &&
		    p->state != MROCE_PATH_PROBING) {
			c->timer_mask &= ~(1ull << i);
			c->timer_at[i] = ~0ULL;
		}
	}
}

void mroce_conn_on_timer(struct mroce_conn *c, u64 now)
{
	struct mroce_list *pos, *next;
	bool epoch = false, unanswered = false;
	u32 i;

	if (c->state == MROCE_CONN_CONNECTING) {
		if (c->hello_tries > c->cfg.hello_retries &&
		    c->hello_at <= now)
			mroce_conn_fail(c, MROCE_ERR_NO_ANSWER);
		return;
	}
	if (c->state != MROCE_CONN_ESTABLISHED)
		return;
	if (c->ack_at && c->ack_at <= now)
		c->ack_now = 1;

	for (i = 0; i < c->npaths; i++) {
		struct mroce_path *p = &c->paths[i];
		u64 at;

		/*
		 * Nothing is due on a path without timers, or on one whose
		 * earliest deadline, fresh in timer_at, is later.
		 */
		if (!(c->timer_mask >> i & 1) ||
		    (!(c->timer_dirty >> i & 1) && c->timer_at[i] >= now))
			continue;
		/* what fires changes this path's deadlines, no other's */
		at = path_rto_at(p);
		if (at && at <= now) {
			c->timer_dirty |= 1ull << i;
			on_rto(c, p, now);
			unanswered = true;
			continue;
		}
		if (p->reo_at && p->reo_at <= now) {
			c->timer_dirty |= 1ull << i;
			mroce_path_detect_losses(c, p, now);
		}
		at = path_tlp_at(c, p);
		if (at && at <= now) {
			c->timer_dirty |= 1ull << i;
			on_tlp(c, p, now);
		}
		if (p->state == MROCE_PATH_PROBING &&
		    p->probes_unanswered >= c->cfg.probe_max &&
		    p->probe_at <= now) {
			mroce_path_replace(c, p, now);
			unanswered = true;
		}
		if (p->epoch_sent && p->epoch_start + c->cfg.epoch_ns <= now)
			epoch = true;
	}
	if (epoch) {
		c->timer_dirty = ~0ull;
		on_epoch(c, now);
	}

	for (pos = c->waitq.next; pos != &c->waitq; pos = next) {
		struct mroce_stream *st =
			mroce_list_entry(pos, struct mroce_stream, waitq);

		next = pos->next;
		if (st->wake_at && st->wake_at <= now)
			mroce_stream_on_wake(c, st, now);
	}

	/*
	 * Dead takes both time and unanswered rounds: after a stall of this
	 * host (a busy or paused CPU) every deadline is past at once, while
	 * the peer's answers still wait in the receive queue behind us.
	 */
	if (!mroce_conn_outstanding(c))
		return;
	if (unanswered)
		c->rto_rounds++;
	if (c->rto_rounds >= MROCE_DEAD_ROUNDS &&
	    c->last_progress_ns + c->cfg.dead_ns <= now)
		mroce_conn_fail(c, MROCE_ERR_DEAD);
}
