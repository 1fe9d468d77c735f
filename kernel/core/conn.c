// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Connection lifecycle: configuration, the CONNECT/ACCEPT handshake that
 * exchanges connection ids, nonces and path counts, failure and close.
 *
 *   IDLE --open--> CONNECTING --ACCEPT--> ESTABLISHED --CLOSE--> CLOSED
 *   IDLE --CONNECT--> ESTABLISHED (passive; ACCEPT goes out)
 *   any --RESET / peer restarted / dead--> FAILED
 *
 * Both ends may open at once: each answers the other's CONNECT and both
 * end up established with each other's ids.
 */
#include "internal.h"

const char *const mroce_conn_state_names[5] = {
	[MROCE_CONN_IDLE]		= "idle",
	[MROCE_CONN_CONNECTING]		= "connecting",
	[MROCE_CONN_ESTABLISHED]	= "established",
	[MROCE_CONN_CLOSED]		= "closed",
	[MROCE_CONN_FAILED]		= "failed",
};

void mroce_cfg_default(struct mroce_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->npaths = 4;
	cfg->mss = 4096;
	cfg->sport_min = 49152;
	cfg->sport_max = 65535;
	cfg->dupthresh = 3;
	cfg->init_cwnd = 16 * 4096;
	cfg->conn_init_cwnd = 64 * 4096;
	cfg->conn_max_cwnd = MROCE_MAX_PATHS * MROCE_PATH_WINDOW * 4096u;
	cfg->ack_every = 4;
	cfg->ack_delay_ns = 20000;
	cfg->ack_bodies = 0;
	cfg->rto_init_ns = 4000000;
	cfg->rto_min_ns = 1000000;
	cfg->rto_max_ns = 500000000;
	cfg->tlp_min_ns = 200000;
	cfg->probe_interval_ns = 2000000;
	cfg->probe_max = 3;
	cfg->fail_rtos = 2;
	cfg->dead_ns = 2000000000ull;
	cfg->hello_retries = 8;
	cfg->epoch_ns = 10000000;
	cfg->bad_loss_permille = 200;
	cfg->congested_alpha = MROCE_ALPHA_ONE / 2;
	cfg->congested_epochs = 4;
	cfg->dsn_window = MROCE_DSN_WINDOW;
	cfg->pace_burst = 4 * 4096;
	cfg->far_ns = 1000000;
	cfg->quiet_ns = 1000000000ull;
	cfg->far_flight = 4096;
}

/* Whole lines: paths[] of a line-aligned connection start on lines. */
_Static_assert(offsetof(struct mroce_conn, paths) % 64 == 0 &&
	       sizeof(struct mroce_path) % 64 == 0,
	       "struct mroce_conn: paths[] not on a line");

void mroce_conn_get_stats(const struct mroce_conn *c,
			  struct mroce_conn_stats *out)
{
	*out = c->stats;
}

/* The connection, its paths, their rings, the retransmission queue. */
size_t mroce_conn_size(u32 npaths)
{
	return sizeof(struct mroce_conn) +
	       (size_t)npaths * sizeof(struct mroce_path) +
	       (size_t)npaths * MROCE_PATH_WINDOW * sizeof(struct mroce_txent) +
	       (size_t)npaths * MROCE_PATH_WINDOW * sizeof(struct mroce_pktref);
}

/* xorshift64*: good enough to spread source ports, never for secrets */
u64 mroce_rand(struct mroce_conn *c)
{
	u64 x = c->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	c->rng = x;
	return x * 0x2545F4914F6CDD1Dull;
}

/* A source port no other path of this connection uses. */
u16 mroce_pick_sport(struct mroce_conn *c)
{
	u32 span = (u32)c->cfg.sport_max - c->cfg.sport_min + 1;
	u16 port;
	u32 i, tries;

	for (tries = 0;; tries++) {
		port = (u16)(c->cfg.sport_min +
			     (u32)(mroce_rand(c) >> 32) % span);
		for (i = 0; i < c->cfg.npaths; i++)
			if (c->paths[i].sport == port)
				break;
		if (i == c->cfg.npaths || tries > 64)
			return port;
	}
}

u64 mroce_conn_rto(const struct mroce_conn *c)
{
	u64 rto = 0;
	u32 i;

	for (i = 0; i < c->npaths; i++) {
		const struct mroce_path *p = &c->paths[i];

		if (p->state == MROCE_PATH_ACTIVE && (!rto || p->rtt.rto < rto))
			rto = p->rtt.rto;
	}
	if (!rto)
		rto = c->cfg.rto_init_ns;
	return MROCE_MAX(rto, c->cfg.rto_min_ns);
}

u64 mroce_conn_pto(const struct mroce_conn *c)
{
	u64 srtt = 0;
	u32 i;

	for (i = 0; i < c->npaths; i++) {
		const struct mroce_path *p = &c->paths[i];

		if (p->state == MROCE_PATH_ACTIVE && p->rtt.samples &&
		    (!srtt || p->rtt.srtt < srtt))
			srtt = p->rtt.srtt;
	}
	if (!srtt)
		return mroce_conn_rto(c);
	return MROCE_MAX(2 * srtt, c->cfg.tlp_min_ns);
}

static bool cfg_valid(const struct mroce_cfg *cfg)
{
	return cfg->npaths >= 1 && cfg->npaths <= MROCE_MAX_PATHS &&
	       cfg->mss >= 64 && cfg->mss <= 65535 &&
	       cfg->sport_min && cfg->sport_min <= cfg->sport_max &&
	       cfg->sport_max - cfg->sport_min + 1u >= cfg->npaths &&
	       cfg->dupthresh >= 1 && cfg->dupthresh < MROCE_PATH_WINDOW &&
	       cfg->ack_every >= 1 && cfg->rto_min_ns &&
	       cfg->rto_min_ns <= cfg->rto_max_ns &&
	       cfg->dsn_window >= MROCE_PATH_WINDOW &&
	       cfg->dsn_window <= MROCE_DSN_WINDOW &&
	       !(cfg->dsn_window & (cfg->dsn_window - 1)) &&
	       cfg->fail_rtos >= 1 && cfg->probe_max >= 1;
}

int mroce_conn_init(struct mroce_conn *c, const struct mroce_cfg *cfg,
		    const struct mroce_ops *ops, void *ctx, u32 id, u64 nonce,
		    u64 seed, u64 now)
{
	struct mroce_txent *ring;
	u32 i;

	if (!cfg_valid(cfg) || !id || !nonce)
		return MROCE_ERR_INVAL;
	memset(c, 0, sizeof(*c));
	c->ops = ops;
	c->ctx = ctx;
	c->cfg = *cfg;
	c->id = id;
	c->nonce = nonce;
	c->rng = seed ? seed : 0x9e3779b97f4a7c15ull;
	c->key.k0 = c->rng ^ nonce;
	c->key.k1 = c->rng * 0x9e3779b97f4a7c15ull + id;
	c->state = MROCE_CONN_IDLE;
	c->npaths = cfg->npaths;
	c->tx_dsn_window = cfg->dsn_window;
	c->tx_mss = cfg->mss;
	c->rate_hint = MROCE_RATE_NONE;
	c->rx_hint = MROCE_RATE_NONE;
	c->ack_hint = MROCE_RATE_NONE;
	c->last_progress_ns = now;
	mroce_cc_init(&c->cc, cfg->mss, cfg->conn_init_cwnd,
		      cfg->conn_max_cwnd);
	mroce_list_init(&c->share_node);
	mroce_list_init(&c->streams);
	mroce_list_init(&c->sched);
	mroce_list_init(&c->ackq);
	mroce_list_init(&c->waitq);
	mroce_list_init(&c->pollq);
	for (i = 0; i < cfg->npaths; i++)
		c->paths[i].sport = 0;
	for (i = 0; i < cfg->npaths; i++) {
		mroce_path_init(&c->paths[i], (u16)i, mroce_pick_sport(c),
				cfg->mss, cfg->init_cwnd, cfg->rto_init_ns, now);
		/* its ring (mroce_path_ent) is read only in [snd_una, snd_nxt) */
		c->paths[i].ring_stride = cfg->npaths;
		c->timer_at[i] = ~0ULL;	/* no deadline: not in timer_mask */
	}
	ring = (struct mroce_txent *)&c->paths[cfg->npaths];
	c->retx = (struct mroce_pktref *)(ring + cfg->npaths *
					  MROCE_PATH_WINDOW);
	c->retx_cap = cfg->npaths * MROCE_PATH_WINDOW;
	c->timer_dirty = ~0ull;
	return 0;
}

void mroce_conn_set_key(struct mroce_conn *c, const struct mroce_key *key)
{
	c->key = *key;
}

void mroce_conn_open(struct mroce_conn *c, u64 now)
{
	if (c->state != MROCE_CONN_IDLE)
		return;
	c->state = MROCE_CONN_CONNECTING;
	c->hello_at = now;
	c->hello_tries = 0;
}

void mroce_conn_close(struct mroce_conn *c)
{
	if (c->state == MROCE_CONN_ESTABLISHED)
		c->close_pending = 1;
	c->state = MROCE_CONN_CLOSED;
}

void mroce_conn_fail(struct mroce_conn *c, u32 reason)
{
	struct mroce_list *pos, *next;

	if (c->state == MROCE_CONN_FAILED)
		return;
	c->state = MROCE_CONN_FAILED;
	c->fail_reason = reason;
	/*
	 * Every stream loses its peer: fail the oldest message (verbs sees
	 * retry exceeded); the caller then flushes the rest.
	 */
	for (pos = c->streams.next; pos != &c->streams; pos = next) {
		struct mroce_stream *st =
			mroce_list_entry(pos, struct mroce_stream, node);

		next = pos->next;
		if (st->state != MROCE_STREAM_ACTIVE)
			continue;
		st->state = MROCE_STREAM_ERROR;
		if (st->tx_una != st->tx_end) {
			struct mroce_txmsg *t = mroce_txmsg(st, st->tx_una);

			t->state = MROCE_TXM_FREE;
			st->tx_una++;
			c->ops->send_done(c->ctx, st, t->m.cookie,
					  MROCE_ERR_RETRY_EXC);
		}
		c->ops->stream_error(c->ctx, st, MROCE_ERR_RETRY_EXC);
	}
	c->ops->conn_event(c->ctx, c, MROCE_EV_FAILED, reason);
}

bool mroce_conn_link_mss(struct mroce_conn *c, u32 mss)
{
	u32 need;

	if (c->state == MROCE_CONN_FAILED || c->state == MROCE_CONN_CLOSED)
		return false;
	/*
	 * Established with the peer's hello: both ends send min(both
	 * max_payloads), tx_mss.  Before it (opening, or an implicit accept)
	 * the peer may yet adopt the max_payload our CONNECT stated.
	 */
	need = c->state == MROCE_CONN_ESTABLISHED && c->peer_nonce ?
	       c->tx_mss : c->cfg.mss;
	if (mss >= need)
		return false;
	mroce_conn_fail(c, MROCE_ERR_LINK_MTU);
	c->reset_pending = 1;
	return true;
}

/* The largest payload a hello says its sender receives. */
static u32 hello_payload(const struct mroce_hello *hl)
{
	return hl->max_payload ? hl->max_payload : MROCE_DEFAULT_PAYLOAD;
}

/* Adopt the peer's parameters from a CONNECT or ACCEPT. */
static void adopt_peer(struct mroce_conn *c, const struct mroce_pkt *pkt)
{
	c->peer_id = pkt->hdr.src_conn;
	c->peer_nonce = pkt->hello.nonce;
	c->npaths = MROCE_MIN(c->cfg.npaths, (u32)pkt->hello.max_paths);
	c->tx_dsn_window = MROCE_MIN(c->cfg.dsn_window,
				     pkt->hello.dsn_window);
	c->tx_mss = MROCE_MIN(c->cfg.mss, hello_payload(&pkt->hello));
}

/*
 * The hello that completes an implicit accept: paths and window can only
 * grow, and so can the payload unless the peer states less than we sent
 * meanwhile (a link below IPv6's minimum MTU).  A resent packet keeps its
 * payload, so those packets could never get through: refuse the peer's
 * parameters rather than retransmit them until the dead timer.
 */
static void adopt_implicit(struct mroce_conn *c, const struct mroce_pkt *pkt)
{
	if (c->implicit_len > hello_payload(&pkt->hello)) {
		mroce_conn_fail(c, MROCE_ERR_PAYLOAD);
		c->reset_pending = 1;
		return;
	}
	adopt_peer(c, pkt);
}

/*
 * A CONNECTING endpoint got a packet addressed to its own connection id: the
 * peer has processed our CONNECT and is established, and its ACCEPT is
 * late (data sprayed over other paths overtook it) or lost.  Dropping the
 * packet would make the peer time out before it has an RTT sample, so take
 * the peer's id now and run conservatively (one path, the smallest dsn
 * window, payloads that fit any link that carries IPv6) until its ACCEPT
 * brings its parameters; keep asking with CONNECT.
 */
void mroce_conn_implicit_accept(struct mroce_conn *c,
				const struct mroce_hdr *h, u64 now)
{
	c->peer_id = h->src_conn;
	c->peer_nonce = 0;	/* unknown until the ACCEPT */
	c->npaths = 1;
	c->tx_dsn_window = MROCE_PATH_WINDOW;
	c->tx_mss = MROCE_MIN(c->cfg.mss, MROCE_IMPLICIT_PAYLOAD);
	c->implicit_len = 0;
	c->hello_at = now;
	c->state = MROCE_CONN_ESTABLISHED;
	c->last_progress_ns = now;
	c->ops->conn_event(c->ctx, c, MROCE_EV_ESTABLISHED, 0);
}

static void establish(struct mroce_conn *c, u64 now)
{
	c->state = MROCE_CONN_ESTABLISHED;
	c->last_progress_ns = now;
	c->ops->conn_event(c->ctx, c, MROCE_EV_ESTABLISHED, 0);
}

/*
 * The peer's ACCEPT grants us a first rate: pace our first data at it, the
 * first packet at a random point of one packet time at that rate.  The
 * senders of an incast that connect at once then neither put their first
 * windows into the receiver's port together (64 windows of 2 packets are
 * 5 times a 100-KiB marking threshold) nor their first packets.
 */
static void start_granted(struct mroce_conn *c, u32 grant, u64 now)
{
	u64 gap;

	if (!grant || grant == MROCE_RATE_NONE)
		return;
	c->rate_hint = grant;
	if (!mroce_hint_paced(c))
		return;
	gap = MROCE_MIN(mroce_pace_ns(c->tx_mss + MROCE_HDR_LEN, grant),
			0x7fffffffull);
	c->pace_next_ns = now + (u32)mroce_rand(c) % ((u32)gap + 1);
	c->pace_late_ok = 0;
}

void mroce_conn_on_hello(struct mroce_conn *c, const struct mroce_pkt *pkt,
			 u64 now)
{
	const struct mroce_hello *hl = &pkt->hello;

	if (pkt->hdr.opcode == MROCE_OP_CONNECT) {
		switch (c->state) {
		case MROCE_CONN_IDLE:
		case MROCE_CONN_CONNECTING:	/* simultaneous open */
			c->await_grant = c->state == MROCE_CONN_CONNECTING;
			adopt_peer(c, pkt);
			c->accept_pending = 1;
			establish(c, now);
			return;
		case MROCE_CONN_ESTABLISHED:
			if (pkt->hdr.src_conn == c->peer_id &&
			    (hl->nonce == c->peer_nonce || !c->peer_nonce)) {
				/*
				 * Adopt only to complete an implicit accept
				 * (one path, the smallest window: it can only
				 * grow).  Otherwise packets may be in flight
				 * on every path: nothing may shrink under them.
				 */
				if (!c->peer_nonce)
					adopt_implicit(c, pkt);
				/* ours was lost; one per rto_min at most */
				if (c->state == MROCE_CONN_ESTABLISHED &&
				    now >= c->accept_next)
					c->accept_pending = 1;
				return;
			}
			/*
			 * Another nonce or id, with a cookie (the caller
			 * checked it): the host at the peer's address has
			 * restarted or given our connection up.  What we
			 * had with it is gone.
			 */
			mroce_conn_fail(c, MROCE_ERR_RESTARTED);
			return;
		default:
			c->stats.rx_drop_state++;
			return;
		}
	}

	/* ACCEPT: must answer our CONNECT */
	if (hl->echo_nonce != c->nonce) {
		c->stats.rx_drop_state++;
		return;
	}
	if (c->state == MROCE_CONN_CONNECTING) {
		adopt_peer(c, pkt);
		start_granted(c, hl->rate_hint, now);
		establish(c, now);
	} else if (c->state == MROCE_CONN_ESTABLISHED &&
		   (pkt->hdr.src_conn == c->peer_id || !c->peer_nonce)) {
		/*
		 * Completes an implicit accept; a repeat changes nothing.
		 * The ACCEPT echoes our nonce, the packet that made the
		 * implicit accept only named our id: the ACCEPT's id wins.
		 */
		if (!c->peer_nonce)
			adopt_implicit(c, pkt);
		/*
		 * A simultaneous open established us on the peer's CONNECT,
		 * which grants nothing: take the grant of the ACCEPT that
		 * answers ours, unless an ACK has brought a hint already.
		 */
		if (c->await_grant && c->rate_hint == MROCE_RATE_NONE)
			start_granted(c, hl->rate_hint, now);
		c->await_grant = 0;
	} else {
		c->stats.rx_drop_state++;
	}
}

u32 mroce_reset_reply(const struct mroce_pkt *pkt, u32 reason, void *buf)
{
	struct mroce_pkt out;

	if (pkt->hdr.opcode == MROCE_OP_RESET || !pkt->hdr.src_conn)
		return 0;
	memset(&out, 0, sizeof(out));
	out.hdr.opcode = MROCE_OP_RESET;
	out.hdr.dst_conn = pkt->hdr.src_conn;
	out.hdr.src_conn = pkt->hdr.dst_conn;
	out.hdr.path = pkt->hdr.path;
	out.reset.reason = reason;
	if (pkt->hdr.opcode == MROCE_OP_CHALLENGE)
		out.reset.echo = pkt->challenge.token;
	else if (pkt->hdr.opcode == MROCE_OP_CONNECT)
		out.reset.echo = pkt->hello.nonce;
	return mroce_wire_encode(&out, buf);
}

/*
 * A RESET or CLOSE from the peer's id, which anyone who learnt both ids
 * could have sent: ask the peer, with a token only a host receiving at its
 * address can echo.  The peer answers with a RESET echoing it only if it
 * has indeed lost or closed the connection; a live peer ignores it.  One
 * CHALLENGE per initial RTO at most.
 */
static void challenge_peer(struct mroce_conn *c, u64 now)
{
	u8 in[16];

	c->stats.rx_challenged++;
	if (now < c->challenge_next)
		return;
	c->challenge_next = now + c->cfg.rto_init_ns;
	if (!c->challenge) {
		mroce_put_be64(c->nonce, in);
		mroce_put_be32(c->id, in + 8);
		mroce_put_be32(c->peer_id, in + 12);
		c->challenge = mroce_siphash(&c->key, in, sizeof(in)) | 1;
	}
	c->challenge_pending = 1;
}

void mroce_conn_on_reset(struct mroce_conn *c, const struct mroce_pkt *pkt,
			 u64 now)
{
	const struct mroce_hdr *h = &pkt->hdr;

	/* a refusal of our CONNECT echoes its nonce */
	if (pkt->reset.echo == c->nonce &&
	    (c->state == MROCE_CONN_CONNECTING ||
	     (c->state == MROCE_CONN_ESTABLISHED && !c->peer_nonce))) {
		mroce_conn_fail(c, mroce_reset_err(pkt->reset.reason));
		return;
	}
	if (c->state != MROCE_CONN_ESTABLISHED || h->src_conn != c->peer_id) {
		c->stats.rx_drop_state++;
		return;
	}
	if (!c->challenge || pkt->reset.echo != c->challenge) {
		/* the last unproven request says how a proof ends us */
		c->close_seen = 0;
		challenge_peer(c, now);
		return;
	}
	/* proven: the peer has no connection with us any more */
	c->stats.rx_proven_end++;
	if (c->close_seen) {
		c->state = MROCE_CONN_CLOSED;
		c->ops->conn_event(c->ctx, c, MROCE_EV_CLOSED, 0);
		return;
	}
	mroce_conn_fail(c, mroce_reset_err(pkt->reset.reason));
}

void mroce_conn_on_close(struct mroce_conn *c, u64 now)
{
	c->close_seen = 1;
	challenge_peer(c, now);
}

void mroce_conn_on_challenge(struct mroce_conn *c,
			     const struct mroce_pkt *pkt, u64 now)
{
	const struct mroce_hdr *h = &pkt->hdr;
	bool hello = c->state == MROCE_CONN_CONNECTING ||
		     (c->state == MROCE_CONN_ESTABLISHED && !c->peer_nonce);

	(void)now;
	if (!h->src_conn) {
		/* a cookie for our CONNECT: send it again at once, with it */
		if (!hello)
			goto drop;
		if (pkt->challenge.token != c->cookie) {
			c->cookie = pkt->challenge.token;
			c->hello_now = 1;
		}
		return;
	}
	if (h->src_conn != c->peer_id)
		goto drop;
	if (c->state == MROCE_CONN_FAILED || c->state == MROCE_CONN_CLOSED) {
		/* what the peer asks to be proven is true: say so */
		c->reset_echo = pkt->challenge.token;
		c->reset_pending = 1;
		return;
	}
	/* alive: nothing to answer, the peer hears from us anyway */
	if (c->state == MROCE_CONN_ESTABLISHED)
		return;
drop:
	c->stats.rx_drop_state++;
}

void mroce_waitq_arm(struct mroce_conn *c, struct mroce_stream *st, u64 at)
{
	if (!st->wake_at || at < st->wake_at)
		st->wake_at = at;
	if (!mroce_list_linked(&st->waitq))
		mroce_list_add_tail(&st->waitq, &c->waitq);
}

void mroce_orphan_nack(struct mroce_conn *c, const struct mroce_hdr *h)
{
	struct mroce_ack_stream *e;
	unsigned int i;

	for (i = 0; i < c->norphan; i++)
		if (c->orphan[i].stream == h->src_stream &&
		    c->orphan[i].nack_msn == h->msn)
			goto out;
	if (c->norphan == MROCE_ARRAY_SIZE(c->orphan))
		goto out;	/* the sender retries; we answer then */
	e = &c->orphan[c->norphan++];
	memset(e, 0, sizeof(*e));
	e->stream = h->src_stream;
	e->msn = h->msn;
	e->nack_msn = h->msn;
	e->status = MROCE_ERR_NO_STREAM;
	e->attempt = h->attempt;
out:
	c->ack_now = 1;
}

bool mroce_conn_paced(const struct mroce_conn *c)
{
	return mroce_hint_paced(c);
}

u32 mroce_conn_get_id(const struct mroce_conn *c)
{
	return c->id;
}

enum mroce_conn_state mroce_conn_get_state(const struct mroce_conn *c)
{
	return (enum mroce_conn_state)c->state;
}

u32 mroce_conn_get_fail_reason(const struct mroce_conn *c)
{
	return c->fail_reason;
}

u64 mroce_conn_get_rx_data_bytes(const struct mroce_conn *c)
{
	return c->rx_data_bytes;
}

struct mroce_share *mroce_conn_get_share(const struct mroce_conn *c)
{
	return c->share;
}

void mroce_conn_get_info(const struct mroce_conn *c, struct mroce_conn_info *out)
{
	memset(out, 0, sizeof(*out));
	out->id = c->id;
	out->peer_id = c->peer_id;
	out->state = c->state;
	out->paced = c->paced;
	out->hint_paced = mroce_hint_paced(c);
	out->sched = !mroce_list_empty(&c->sched);
	out->waitq = !mroce_list_empty(&c->waitq);
	out->pollq = !mroce_list_empty(&c->pollq);
	out->ackq = !mroce_list_empty(&c->ackq);
	out->fail_reason = c->fail_reason;
	out->npaths = c->npaths;
	out->tx_mss = c->tx_mss;
	out->inflight = c->inflight;
	out->cwnd = c->cc.cwnd;
	out->rate_hint = c->rate_hint;
	out->rx_hint = c->rx_hint;
	out->tx_dsn_nxt = c->tx_dsn_nxt;
	out->tx_dsn_una = c->tx_dsn_una;
	out->tx_dsn_window = c->tx_dsn_window;
	out->rx_dsn_base = c->rx_dsn_base;
	out->retx_head = c->retx_head;
	out->retx_tail = c->retx_tail;
	out->ack_at = c->ack_at;
	out->pace_next_ns = c->pace_next_ns;
}

bool mroce_conn_get_path_info(const struct mroce_conn *c, u32 i,
			  struct mroce_path_info *out)
{
	const struct mroce_path *p;

	if (i >= c->cfg.npaths)
		return false;
	p = &c->paths[i];
	memset(out, 0, sizeof(*out));
	out->id = p->id;
	out->sport = p->sport;
	out->state = p->state;
	out->cwnd = p->cc.cwnd;
	out->alpha = p->cc.alpha;
	out->inflight = p->inflight;
	out->srtt_ns = p->rtt.srtt;
	out->rttvar_ns = p->rtt.rttvar;
	out->min_rtt_ns = p->rtt.min_rtt;
	out->rto_ns = p->rtt.rto;
	out->reo_ns = p->reo_ns;
	out->stats = p->stats;
	return true;
}

/*
 * A sender's first six lines of a path (state, rtt, sequence numbers,
 * outstanding bits, rack, cc); a receiver reads the two from rcv_cum.
 */
#define PATH_SEND_LINES	6
#define PATH_RECV_OFF	(offsetof(struct mroce_path, rcv_cum) / 64 * 64)
/* The leading lines most calls touch: hot fields and the timer cache. */
#define CONN_HOT_LINES	6

static inline void prefetch_lines(const void *p, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		mroce_prefetch((const char *)p + 64 * i);
}

u32 mroce_conn_prefetch_rx(const struct mroce_conn *c, u32 npaths,
			   const void *buf, u32 len)
{
	const struct mroce_txent *ring;
	struct mroce_wire_peek pk;
	u32 i, cum;
	u16 ap;

	if (!mroce_wire_peek(buf, len, &pk))
		return 0;
	prefetch_lines(c, CONN_HOT_LINES);
	mroce_prefetch(&c->stats);
	if (pk.path < npaths)
		prefetch_lines(&c->paths[pk.path], 2);
	if (pk.opcode == MROCE_OP_ACK) {
		/* the ring entries of their newest acknowledged packets */
		ring = (const struct mroce_txent *)&c->paths[npaths];
		for (i = 0; i < pk.ack_paths &&
		     mroce_wire_peek_ack_path(buf, len, i, &ap, &cum); i++) {
			if (ap >= npaths)
				continue;
			prefetch_lines(&c->paths[ap], PATH_SEND_LINES);
			mroce_prefetch(&ring[((cum - 1) % MROCE_PATH_WINDOW) *
					     npaths + ap]);
			mroce_prefetch(&ring[((cum - 2) % MROCE_PATH_WINDOW) *
					     npaths + ap]);
		}
		return 0;
	}
	if (!mroce_op_sequenced(pk.opcode))
		return 0;
	if (pk.path < npaths)
		prefetch_lines((const char *)&c->paths[pk.path] + PATH_RECV_OFF,
			       2);
	mroce_prefetch(&c->rx_dsn_bits[(pk.dsn & (MROCE_DSN_WINDOW - 1)) / 64]);
	return pk.dst_stream;
}
