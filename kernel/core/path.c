// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A path's sender half: its scoreboard (what it sent, what was
 * acknowledged, what was lost), loss detection, RTT samples, and the
 * changes of route.  The RTT estimator itself, RFC 6298 arithmetic in
 * integer nanoseconds, is inline in path.h; the receiver half is sack.c;
 * the path timers (RTO, tail-loss probe, health epoch) are in timers.c.
 *
 * An ACK block (ack.c decodes them) says, for one path, "everything below
 * cum_psn, and these 256 psns above it, arrived".  Newly acknowledged
 * packets leave the window, their dsn is marked delivered and their stream
 * is told.  Because a path is ordered, a packet the receiver does not have
 * while it has dupthresh later ones (or a later one, and an RTT has passed)
 * is lost, not late: exactly that packet is queued for retransmission.  ECN
 * counts feed the path's and the connection's congestion control; the RTT
 * sample comes from the echoed timestamp.
 */
#include "internal.h"

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

static inline void out_set(struct mroce_path *p, u32 psn)
{
	u32 pos = psn % MROCE_PATH_WINDOW;

	p->out_bits[pos / 64] |= 1ull << (pos % 64);
}

static inline void out_clear(struct mroce_path *p, u32 psn)
{
	u32 pos = psn % MROCE_PATH_WINDOW;

	p->out_bits[pos / 64] &= ~(1ull << (pos % 64));
}

void mroce_path_sent(struct mroce_conn *c, struct mroce_path *p,
		     const struct mroce_pktref *ref, u64 now)
{
	struct mroce_txent *e = mroce_path_ent(p, p->snd_nxt);

	e->ref = *ref;
	e->sent_ns = now;
	if (p->snd_una == p->snd_nxt)
		p->una_sent_ns = now;
	e->state = MROCE_TXE_INFLIGHT;
	e->lost_by = MROCE_LOST_RTO;
	out_set(p, p->snd_nxt);
	p->snd_nxt++;
	p->inflight += ref->len;
	p->inflight_pkts++;
	c->inflight += ref->len;
	p->last_send_ns = now;
	p->epoch_sent++;
	mroce_timer_path(c, p);
}

void mroce_path_mark_lost(struct mroce_conn *c, struct mroce_path *p,
			  struct mroce_txent *e, u64 now)
{
	e->state = MROCE_TXE_LOST;
	p->inflight -= e->ref.len;
	p->inflight_pkts--;
	c->inflight -= e->ref.len;
	p->stats.lost_pkts++;
	p->epoch_lost++;
	c->stats.lost++;
	/* losses not yet shown spurious, since the last quiet spell */
	if (now - c->lost_ns >= c->cfg.quiet_ns)
		c->lost_open = 0;
	c->lost_open++;
	c->lost_ns = now;
	e->ref.path = (u8)p->id;
	mroce_retx_push(c, &e->ref);
}

/* Move snd_una past everything resolved (acknowledged or lost). */
void mroce_path_advance(struct mroce_path *p)
{
	u32 una = p->snd_una, nxt = p->snd_nxt, i;
	struct mroce_txent *e;

	while (una != nxt &&
	       (e = mroce_path_ent(p, una))->state != MROCE_TXE_INFLIGHT) {
		/* an ACKED entry's bit went when it was acknowledged */
		if (e->state != MROCE_TXE_ACKED)
			out_clear(p, una);
		if (e->state == MROCE_TXE_LOST &&
		    e->lost_by != MROCE_LOST_RTO) {
			i = (p->gone_head + p->gone_count) % MROCE_GONE_MAX;
			p->gone[i].psn = una;
			p->gone[i].sent = ((u32)e->sent_ns & ~1u) |
					  (e->lost_by == MROCE_LOST_TLP);
			if (p->gone_count < MROCE_GONE_MAX)
				p->gone_count++;
			else
				p->gone_head = (p->gone_head + 1) %
					       MROCE_GONE_MAX;
		}
		e->state = MROCE_TXE_FREE;
		una++;
	}
	p->snd_una = una;
	if (una != nxt)
		p->una_sent_ns = mroce_path_ent(p, una)->sent_ns;
	if (mroce_seq_lt(p->snd_high, una))
		p->snd_high = una;
}

void mroce_path_lose_all(struct mroce_conn *c, struct mroce_path *p, u64 now)
{
	u32 psn;

	for (psn = p->snd_una; psn != p->snd_nxt; psn++)
		if (mroce_path_ent(p, psn)->state == MROCE_TXE_INFLIGHT)
			mroce_path_mark_lost(c, p, mroce_path_ent(p, psn),
					     now);
	mroce_path_advance(p);
}

/*
 * Acknowledged packets are reported to their stream per run of packets of
 * the same message, not one by one: an ACK usually covers consecutive
 * packets of one message, and the stream's bookkeeping is per message.
 */
struct ack_batch {
	struct mroce_pktref ref;	/* len: bytes so far; flags: LAST seen */
	bool open;
};

static void batch_flush(struct mroce_conn *c, struct ack_batch *b, u64 now)
{
	if (b->open)
		mroce_stream_pkt_acked(c, &b->ref, now);
	b->open = false;
}

static void batch_start(struct mroce_conn *c, struct ack_batch *b,
			const struct mroce_pktref *ref, u64 now)
{
	batch_flush(c, b, now);
	b->ref = *ref;
	b->open = true;
}

/* Inline: once per packet acknowledged; a new run is the rare case. */
static inline void batch_add(struct mroce_conn *c, struct ack_batch *b,
			     const struct mroce_pktref *ref, u64 now)
{
	if (b->open && b->ref.st == ref->st && b->ref.msn == ref->msn &&
	    b->ref.kind == ref->kind && b->ref.attempt == ref->attempt &&
	    b->ref.resp == ref->resp) {
		b->ref.len += ref->len;
		b->ref.flags |= ref->flags;
		return;
	}
	batch_start(c, b, ref, now);
}

/* What one ACK block acknowledged, summed as its packets go. */
struct ack_acc {
	struct ack_batch batch;
	u32 bytes;
	u32 newly;
};

/*
 * A packet we gave up arrived after all.  If it was given up for being
 * passed by later packets, the path reorders: widen its reordering window,
 * up to srtt + 4 rttvar (what an RTO would wait beyond a round trip), so
 * later gaps are given that long to fill.  Fabrics keep a path in order,
 * but hosts may not (one flow's packets sent from several CPUs and
 * received through several backlogs).  Its age
 * (@age: now - sent) shows how late it came against the round trip of its
 * successors, and the window takes that at once: a backlog stall makes
 * gaps many round trips long, which steps of a quarter of the minimum RTT
 * would take thousands of round trips to reach.  Otherwise the window
 * grows by such a step, once per round trip.
 */
static void spurious_loss(struct mroce_conn *c, struct mroce_path *p,
			  bool reordered, u64 age, u64 now)
{
	u64 late, cap = p->rtt.srtt + 4 * p->rtt.rttvar;

	p->stats.spurious++;
	c->stats.spurious++;
	p->epoch_spurious++;
	if (c->lost_open)
		c->lost_open--;
	/* not a loss after all: it must not make the route look bad */
	if (p->epoch_lost)
		p->epoch_lost--;
	if (!reordered || !p->rtt.samples)
		return;
	late = age > p->rack_rtt_ns ? age - p->rack_rtt_ns : 0;
	if (late > p->reo_ns) {
		p->reo_grown_ns = now;
		p->reo_ns = MROCE_MIN(late, cap);
		return;
	}
	if (now - p->reo_grown_ns < p->rtt.srtt)
		return;
	p->reo_grown_ns = now;
	p->reo_ns = MROCE_MIN(p->reo_ns + MROCE_MAX(p->rtt.min_rtt / 4, 1000),
			      cap);
}

/*
 * Given-up psns that left the ring: does this ACK show one arrived?  Below
 * cum_psn only counts above top - 256, since the receiver drags cum_psn
 * over older holes; those can no longer tell and are forgotten.
 */
static void gone_check(struct mroce_conn *c, struct mroce_path *p,
		       const struct mroce_ack_path *ap, u32 top, u64 now)
{
	u32 i, n = p->gone_count, head = p->gone_head, psn, d;
	u32 cum = ap->cum_psn, old = top - MROCE_PATH_WINDOW;
	struct mroce_gone keep[MROCE_GONE_MAX], *out, g;
	u32 nkeep = 0;

	/* from the start of the array (as it is after the first call) the
	 * survivors are compacted in place: never ahead of the reads
	 */
	out = head ? keep : p->gone;
	for (i = 0; i < n; i++) {
		g = p->gone[(head + i) % MROCE_GONE_MAX];
		psn = g.psn;
		if (mroce_seq_lt(psn, old))
			continue;			/* too old to tell */
		d = psn - cum - 1;
		if (mroce_seq_lt(psn, cum) ||
		    (d < MROCE_PATH_WINDOW && (ap->sack[d / 64] >> (d % 64) & 1))) {
			spurious_loss(c, p, !(g.sent & 1),
				      (u32)now - g.sent, now);
			continue;
		}
		out[nkeep++] = g;
	}
	if (head)
		for (i = 0; i < nkeep; i++)
			p->gone[i] = keep[i];
	p->gone_head = 0;
	p->gone_count = (u8)nkeep;
}

/*
 * One packet acknowledged.  Its out_bits bit was set, so it is INFLIGHT or
 * LOST and this is news (anything else is left alone, as ever).
 */
static inline void ent_acked(struct mroce_conn *c, struct mroce_path *p,
			     u32 psn, struct ack_acc *acc, u64 now)
{
	struct mroce_txent *e = mroce_path_ent(p, psn);
	u32 len = e->ref.len;

	if (e->state == MROCE_TXE_INFLIGHT) {
		p->inflight -= len;
		p->inflight_pkts--;
		c->inflight -= len;
		if (e->sent_ns >= p->rack_sent_ns) {
			p->rack_sent_ns = e->sent_ns;
			p->rack_rtt_ns = now - e->sent_ns;
		}
	} else if (e->state == MROCE_TXE_LOST) {
		/* it arrived after all: the dsn check skips the resend */
		spurious_loss(c, p, e->lost_by == MROCE_LOST_REO,
			      now - e->sent_ns, now);
	} else {
		return;
	}
	e->state = MROCE_TXE_ACKED;
	out_clear(p, psn);
	acc->newly++;
	acc->bytes += len;
	if (mroce_dsn_tx_ack(c, e->ref.dsn) && e->ref.st)
		batch_add(c, &acc->batch, &e->ref, now);
}

/* Acknowledge psn @base + i for every bit i of @m, lowest first. */
static void ack_bits(struct mroce_conn *c, struct mroce_path *p, u32 base,
		     u64 m, struct ack_acc *acc, u64 now)
{
	while (m) {
		ent_acked(c, p, base + mroce_ctz64(m), acc, now);
		m &= m - 1;
	}
}

/* 64 bits of a 256-bit ring from position @pos on, wrapping around. */
static inline u64 ring_bits64(const u64 *bits, u32 pos)
{
	u32 q = pos / 64 % MROCE_SACK_WORDS, s = pos % 64;

	return bits[q] >> s |
	       bits[(q + 1) % MROCE_SACK_WORDS] << 1 << (63 - s);
}

/* 64 bits of a SACK bitmap from bit @i (< 256) on; zero past its end. */
static inline u64 sack_bits64(const u64 *sack, u32 i)
{
	u32 q = i / 64, s = i % 64;
	u64 hi = q + 1 < MROCE_SACK_WORDS ? sack[q + 1] : 0;

	return sack[q] >> s | hi << 1 << (63 - s);
}

/*
 * The SACKed psns in [@a, @b) (ascending, at most 256 psns, all in the
 * bitmap's span above cum_psn) that are still unresolved here, in psn
 * order.  Word-wise: what is outstanding (out_bits, in ring order) and
 * what the bitmap says arrived, 64 psns at a time.
 */
static void sack_range(struct mroce_conn *c, struct mroce_path *p,
		       const struct mroce_ack_path *ap, u32 a, u32 b,
		       struct ack_acc *acc, u64 now)
{
	u32 n;
	u64 m;

	for (; a != b; a += n) {
		n = MROCE_MIN(b - a, 64u);
		m = ring_bits64(p->out_bits, a % MROCE_PATH_WINDOW) &
		    sack_bits64(ap->sack, a - ap->cum_psn - 1);
		if (n < 64)
			m &= (1ull << n) - 1;
		ack_bits(c, p, a, m, acc, now);
	}
}

/*
 * A packet is lost when dupthresh later packets of its path arrived and,
 * if the path has shown reordering, it is overdue by the reordering
 * window: it was sent longer ago than the round trip the newest delivered
 * packet took, plus reo_ns (RACK's idea; the path's queue delays it as
 * much as its successors, so its age alone says nothing).  It is lost too
 * when a later one arrived and an RTT plus that window has passed.
 * Called on ACKs and when reo_at expires.
 */
void mroce_path_detect_losses(struct mroce_conn *c, struct mroce_path *p,
			      u64 now)
{
	u64 reo = p->rtt.srtt ? p->rtt.srtt + p->rtt.srtt / 4 : 0;
	u32 highest = p->snd_high - 1, psn;
	struct mroce_txent *e;
	bool marked = false;
	u64 age, due;

	p->reo_at = 0;
	psn = mroce_seq_max(p->lost_scan, p->snd_una);
	for (; mroce_seq_lt(psn, highest); psn++) {
		e = mroce_path_ent(p, psn);
		if (e->state != MROCE_TXE_INFLIGHT)
			continue;
		/* older packets fail these tests first: stop at a survivor */
		age = now - e->sent_ns;
		due = p->reo_ns ? e->sent_ns + p->rack_rtt_ns + p->reo_ns : 0;
		if (!(highest - psn >= c->cfg.dupthresh && now >= due) &&
		    (!reo || age < reo + p->reo_ns)) {
			if (highest - psn >= c->cfg.dupthresh) {
				p->reo_at = due;
				mroce_timer_path(c, p);
			}
			break;
		}
		/*
		 * Either rule gives it up for being passed by a later packet:
		 * if it arrives after all, the path reorders.
		 */
		e->lost_by = MROCE_LOST_REO;
		mroce_path_mark_lost(c, p, e, now);
		marked = true;
	}
	p->lost_scan = psn;
	if (marked)
		mroce_path_advance(p);
}

/*
 * The paths of a connection join the same two endpoints, so the first
 * sample of any path is a far better guess for the paths still without one
 * than the initial RTO: seed them with it.  Otherwise a path whose first
 * packets are lost waits out rto_init, which on a fast fabric is the
 * dominant cost of a lossy transfer.
 */
static void rtt_sample(struct mroce_conn *c, struct mroce_path *p, u64 rtt)
{
	u32 i;

	if (!p->rtt.samples)
		for (i = 0; i < c->npaths; i++)
			if (!c->paths[i].rtt.samples && &c->paths[i] != p)
				mroce_rtt_sample(&c->paths[i].rtt, rtt,
						 c->cfg.rto_min_ns,
						 c->cfg.rto_max_ns);
	mroce_rtt_sample(&p->rtt, rtt, c->cfg.rto_min_ns, c->cfg.rto_max_ns);
}

void mroce_path_on_ack(struct mroce_conn *c, struct mroce_path *p,
		       const struct mroce_ack_path *ap, u64 now)
{
	u32 cum = ap->cum_psn, una = p->snd_una, n, d, lo, hi, wrap, top;
	struct ack_acc acc = { .batch.open = false };
	u64 sample;
	int i;

	/* acknowledging what was never sent is a broken or hostile peer */
	if (mroce_seq_lt(p->snd_nxt, cum)) {
		c->stats.rx_drop_ack++;
		return;
	}
	/*
	 * Below cum_psn: every psn still outstanding, in psn order.  Only
	 * INFLIGHT and LOST entries have their out_bits bit set (ACKED ones
	 * are skipped, as they are not news).
	 */
	for (lo = una; mroce_seq_lt(lo, cum); lo += n) {
		n = MROCE_MIN(cum - lo, 64u);
		ack_bits(c, p, lo, ring_bits64(p->out_bits,
					       lo % MROCE_PATH_WINDOW) &
			 (n < 64 ? (1ull << n) - 1 : ~0ull), &acc, now);
	}

	/*
	 * The bitmap: bit i is psn cum + 1 + i.  Of a ring position only the
	 * psn in [snd_una, snd_una + 256) can be outstanding; it counts if
	 * it is also in [cum + 1, cum + 257) (a bit may name a psn 256
	 * away).  So the psns that count are [lo, hi), and only those below
	 * snd_nxt can be outstanding.  They are taken in ring order (as the
	 * scoreboard lays them out): when [lo, hi) wraps past ring position
	 * 0, the part from there on comes first.
	 */
	d = una - cum - 1;
	if (d < MROCE_PATH_WINDOW) {
		lo = una;
		hi = cum + 1 + MROCE_PATH_WINDOW;
	} else {
		lo = cum + 1;
		hi = -d < MROCE_PATH_WINDOW ? una + MROCE_PATH_WINDOW : lo;
	}
	if (mroce_seq_lt(p->snd_nxt, hi))
		hi = p->snd_nxt;
	if (lo != hi && mroce_seq_lt(lo, hi)) {
		wrap = lo + (MROCE_PATH_WINDOW - lo % MROCE_PATH_WINDOW);
		if (mroce_seq_lt(wrap, hi)) {
			sack_range(c, p, ap, wrap, hi, &acc, now);
			hi = wrap;
		}
		sack_range(c, p, ap, lo, hi, &acc, now);
	}
	batch_flush(c, &acc.batch, now);
	p->stats.acked_pkts += acc.newly;
	p->stats.acked_bytes += acc.bytes;

	/* one past the highest psn the receiver has */
	top = cum;
	for (i = MROCE_SACK_WORDS - 1; i >= 0; i--) {
		if (ap->sack[i]) {
			top = cum + 1 + (u32)i * 64 +
			      (63 - mroce_clz64(ap->sack[i])) + 1;
			break;
		}
	}
	if (mroce_seq_lt(p->snd_high, top) && mroce_seq_le(top, p->snd_nxt))
		p->snd_high = top;
	if (p->gone_count)
		gone_check(c, p, ap, top, now);
	mroce_path_advance(p);
	mroce_path_detect_losses(c, p, now);

	/* ECN: the receiver's cumulative counts, newer than what we had */
	if (mroce_seq_lt(p->peer_rcv, ap->rcv_count)) {
		u32 dp = ap->rcv_count - p->peer_rcv;
		u32 dce = ap->ce_count - p->peer_ce;

		if (dce > dp)
			dce = dp;
		mroce_cc_on_ecn(&p->cc, dp, dce);
		mroce_cc_on_ecn(&c->cc, dp, dce);
		p->stats.ce_pkts += dce;
		p->peer_rcv = ap->rcv_count;
		p->peer_ce = ap->ce_count;
	}

	if (!acc.newly)
		return;
	sample = (u32)((u32)now - ap->echo_ts);
	if (sample > ap->ack_delay)
		rtt_sample(c, p, sample - ap->ack_delay);
	mroce_cc_on_ack(&p->cc, acc.bytes);
	mroce_cc_on_ack(&c->cc, acc.bytes);
	if (mroce_seq_le(p->wnd_end, p->snd_una)) {
		mroce_cc_on_window(&p->cc);
		p->wnd_end = p->snd_nxt;
	}
	if (mroce_seq_le(c->cc_wnd_end, c->tx_dsn_una)) {
		mroce_cc_on_window(&c->cc);
		c->cc_wnd_end = c->tx_dsn_nxt;
	}
	p->last_ack_ns = now;
	mroce_conn_progress(c, now);
	p->rto_count = 0;
	p->tlp_left = MROCE_TLP_MAX;
	if (p->state == MROCE_PATH_SUSPECT) {
		p->state = MROCE_PATH_ACTIVE;
		p->state_since = now;
	}
}

void mroce_path_replace(struct mroce_conn *c, struct mroce_path *p, u64 now)
{
	mroce_path_lose_all(c, p, now);
	p->sport = mroce_pick_sport(c);
	p->state = MROCE_PATH_PROBING;
	p->state_since = now;
	p->probe_at = now;
	mroce_timer_path(c, p);
	c->probe_mask |= 1ull << p->id;
	p->probes_unanswered = 0;
	p->rto_count = 0;
	p->congested_epochs = 0;
	/* a new route: what the old one taught about reordering is moot */
	p->reo_ns = 0;
	p->reo_at = 0;
	p->gone_count = 0;
	mroce_cc_init(&p->cc, c->cfg.mss, c->cfg.init_cwnd,
		      MROCE_PATH_WINDOW * c->cfg.mss);
	p->stats.replaced++;
	c->stats.path_replaced++;
	c->ops->conn_event(c->ctx, c, MROCE_EV_PATH, p->id);
}

void mroce_path_probe_acked(struct mroce_conn *c, struct mroce_path *p,
			    u32 echo_ts, u32 delay, u64 now)
{
	u32 sample = (u32)now - echo_ts;

	if (sample > delay)
		rtt_sample(c, p, sample - delay);
	p->probes_unanswered = 0;
	if (p->state != MROCE_PATH_PROBING)
		return;
	p->state = MROCE_PATH_ACTIVE;
	c->probe_mask &= ~(1ull << p->id);
	p->state_since = now;
	p->rto_count = 0;
	p->wnd_end = p->snd_nxt;
	c->ops->conn_event(c->ctx, c, MROCE_EV_PATH, p->id);
}
