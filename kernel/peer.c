// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Peers: one per (device, remote address), each wrapping one connection of
 * the protocol core, with its lock, its timer and the QPs attached to it.
 *
 * Creation is in process context only (a connection is tens of KiB): at a
 * QP's RTR (active open), or by open_work for a CONNECT from an unknown
 * address (passive open; the receive path queues it, bounded, and the
 * opener retransmits meanwhile).  The receive path queues only a CONNECT
 * that echoed a valid cookie: its sender receives at the address it
 * claims, so spoofed CONNECTs never make a peer (protocol.md 6.2).  A peer whose connection failed or closed
 * stays until its QPs leave; the next RTR or CONNECT for that address gets
 * a new peer.
 *
 * The critical section: mroce_peer_lock() ... core call ...
 * mroce_peer_unlock().  The lock makes the core's callers one at a time,
 * as its contract asks (core/conn.h).  Core callbacks only queue work that
 * needs the core again (QP flushes, taking more SQ entries); unlock settles
 * it, drains the packets the core has to send, re-arms the timer, drops the
 * lock, and only then transmits and calls completion handlers.
 */
#include <linux/jhash.h>
#include <linux/random.h>
#include <linux/rculist.h>
#include <net/ipv6.h>

#include "metaroce.h"
#define CREATE_TRACE_POINTS
#include "trace.h"

/* How often idle and dead peers are looked for. */
#define MROCE_GC_PERIOD		(5 * HZ)

static u32 addr_hash(const struct in6_addr *a)
{
	return jhash2(a->s6_addr32, 4, 0);
}

static void peer_free_routes(struct mroce_peer *p)
{
	while (p->nroutes)
		dst_cache_destroy(&p->routes[--p->nroutes].cache);
	kfree(p->routes);
}

/* Under RCU or peers_mutex. */
struct mroce_peer *mroce_peer_find(struct mroce_dev *mdev,
				   const struct in6_addr *raddr)
{
	struct mroce_peer *p;

	RCU_LOCKDEP_WARN(!rcu_read_lock_any_held() &&
			 !lockdep_is_held(&mdev->peers_mutex),
			 "peer lookup without RCU or peers_mutex");
	hash_for_each_possible_rcu(mdev->peers, p, hnode, addr_hash(raddr),
				   lockdep_is_held(&mdev->peers_mutex))
		if (ipv6_addr_equal(&p->raddr, raddr))
			return p;
	return NULL;
}

/* Only while the event is enabled: naming the deadline walks the paths. */
static void peer_trace_arm(struct mroce_peer *p, u64 now, u64 at, u64 slack,
			   s64 was_late, bool wheel)
{
	enum mroce_timer_what w;
	u32 path;

	w = mroce_conn_timer_what(p->conn, at, &path);
	trace_mroce_timer_arm(p->id, w, path, (s64)(at - now), slack, was_late,
			      wheel);
}

/*
 * Deadlines a tick of slack allows (core's choice: far ones, on a
 * connection that is not losing) go on the timer wheel, like TCP's and
 * rxe's retransmit timers.  Arming or moving a wheel timer touches only a
 * CPU's timer base.  An hrtimer whose latest expiry comes before the CPU's
 * next event reprograms the clock event device when it is started, and
 * again when it is moved while it is that event: a register write in the
 * path of the packet that moved it (a VM exit on a virtualised host), and
 * every start walks the hrtimer tree.  A ping-pong moves its tail-loss
 * probe's deadline with every message, so on an hrtimer it would pay that
 * on most round trips; on the wheel it moves at most once per tick.
 *
 * The wheel fires at a tick: the first one after the deadline rounded up
 * to whole ticks, plus one for the tick under way, so it is never early
 * and less than two ticks late.  A deadline beyond the wheel's first level
 * (where it fires exactly at its jiffy, not rounded up to a coarser one)
 * is served by an early expiry that finds nothing due and re-arms.
 *
 * As with the hrtimer, a pending timer that fires no later than that stays:
 * a ping-pong's deadline swings with every packet between the tail-loss
 * probe (while the write is out) and a later epoch (once it is
 * acknowledged), and following it moved the timer twice per round trip.
 * One due to fire early at the next tick is moved on instead, so a probe
 * deadline that moves with every write costs one move per tick, not a
 * needless expiry.
 */
#define MROCE_WHEEL_MAX_TICKS	60

static void peer_arm_wheel(struct mroce_peer *p, u64 now, u64 at, u64 slack)
{
	u64 ticks = 1 + DIV_ROUND_UP_ULL(at > now ? at - now : 0, TICK_NSEC);
	unsigned long j = jiffies;
	unsigned long expires = j + min_t(u64, ticks, MROCE_WHEEL_MAX_TICKS);

	if (timer_pending(&p->wheel) &&
	    !time_after(p->wheel.expires, expires) &&
	    (p->wheel.expires == expires || time_after(p->wheel.expires, j + 1)))
		return;
	if (trace_mroce_timer_arm_enabled())
		peer_trace_arm(p, now, at, slack, timer_pending(&p->wheel) ?
			       (s64)(p->wheel.expires - j) * (s64)TICK_NSEC :
			       0, true);
	p->wheel_at = at;
	mod_timer(&p->wheel, expires);
}

static void peer_arm(struct mroce_peer *p, u64 now, u64 at)
{
	u64 slack;

	if (p->more_tx)
		at = now;
	/*
	 * Nothing due: a pending timer is not cancelled, it fires, finds
	 * nothing and stops.  A timer that fires no later than the new
	 * deadline allows stays too, even one already overdue (its softirq
	 * has not run yet): it fires early, finds nothing due and re-arms.
	 * Deadlines come and go with nearly every packet (an RTO while data
	 * is out, none once it is acknowledged); following each would
	 * reprogram the timer twice per round trip of a ping-pong, under the
	 * lock the other side's doorbell waits for, and re-arming an overdue
	 * soft timer raises a timer interrupt at once, every time.  So a
	 * pending hrtimer is left alone when the deadline goes to the wheel,
	 * and the wheel's when it goes to the hrtimer.
	 */
	if (!at)
		return;
	/*
	 * The deadline the wheel was armed for stays on it as it comes near:
	 * its slack was granted while it was far.  Asked again, the core
	 * would want it exact, and a health epoch's end (or a probe while
	 * nothing else happens) started the hrtimer, reprogramming the clock
	 * event device, once per epoch.
	 */
	if (at == p->wheel_at && timer_pending(&p->wheel))
		return;
	slack = mroce_conn_timer_slack(p->conn, now, at);
	if (slack >= TICK_NSEC) {
		peer_arm_wheel(p, now, at, slack);
		return;
	}
	/*
	 * Except one that would fire before half the time to a deadline of
	 * the same horizon: that is the same timeout moving on, and it is
	 * moved along.  In a ping-pong with more than MROCE_FAR_FLIGHT_BYTES out
	 * the tail-loss probe's deadline (milliseconds) moves with every
	 * write and the ACK always comes first; left alone, the timer fired
	 * once per probe timeout to find nothing.  A soft timer fires at its
	 * latest expiry unless another one runs its softirq first, so that
	 * is the time compared.  A deadline much further out (a health epoch
	 * once the ACK has come) leaves the timer alone, or the next write
	 * would bring it back: two rearms per round trip.
	 */
	if (p->timer_at && p->timer_late <= at + slack &&
	    (at <= now || at - now > 2 * p->timer_span ||
	     (s64)(p->timer_late - now) >= (s64)(at - now) / 2))
		return;
	if (trace_mroce_timer_arm_enabled())
		peer_trace_arm(p, now, at, slack, p->timer_at ?
			       (s64)(p->timer_late - now) : 0, false);
	p->timer_span = at > now ? at - now : 0;
	p->timer_at = at;
	p->timer_late = at + slack;
	hrtimer_start_range_ns(&p->timer, ns_to_ktime(at), slack,
			       HRTIMER_MODE_ABS_SOFT);
}

/* Either timer: serve what is due; unlocking arms for what is next. */
static void peer_timer_run(struct mroce_peer *p, bool hr)
{
	struct mroce_batch b;

	mroce_peer_lock(p, &b);
	if (hr)
		p->timer_at = 0;
	p->more_tx = false;
	if (!p->dead)
		mroce_conn_on_timer(p->conn, b.now);
	mroce_peer_unlock(p, &b);
}

static enum hrtimer_restart peer_timer_fn(struct hrtimer *t)
{
	peer_timer_run(container_of(t, struct mroce_peer, timer), true);
	return HRTIMER_NORESTART;
}

static void peer_wheel_fn(struct timer_list *t)
{
	struct mroce_peer *p = from_timer(p, t, wheel);

	peer_timer_run(p, false);
}

/*
 * Enter a peer's critical section.  @b collects what the section leaves for
 * after the unlock; core callbacks find it as peer->batch (ops.c).
 * Sections do not nest, and bottom halves stay off in them.
 */
void mroce_peer_lock(struct mroce_peer *peer, struct mroce_batch *b)
{
	mroce_batch_init(b);
	local_bh_disable();
	/* say how often two CPUs want a peer at once */
	if (unlikely(!spin_trylock(&peer->lock))) {
		mroce_count(peer->mdev, MROCE_CNT_PEER_LOCK_WAITS);
		spin_lock(&peer->lock);
	}
	b->now = ktime_get_ns();
	peer->batch = b;
}

/* Finish what callbacks deferred: QP flushes first, then SQ refills. */
static void peer_settle(struct mroce_peer *p, struct mroce_batch *b)
{
	struct mroce_qp *qp;

	for (;;) {
		qp = list_first_entry_or_null(&p->flush_qps, struct mroce_qp,
					      flush_node);
		if (qp) {
			list_del_init(&qp->flush_node);
			mroce_qp_flush(qp, b);
			continue;
		}
		qp = list_first_entry_or_null(&p->sq_qps, struct mroce_qp,
					      sq_node);
		if (!qp)
			return;
		list_del_init(&qp->sq_node);
		mroce_sq_run(qp, b);
	}
}

/* Serve a deadline that passed, then arm for the next one. */
static void peer_unlock_timer(struct mroce_peer *peer, struct mroce_batch *b)
{
	u64 at;

	peer->timer_stale = false;
	at = mroce_conn_next_timer(peer->conn);
	/*
	 * A deadline that passed is served here, by whoever holds the lock,
	 * rather than by the timer: a soft hrtimer waits for its softirq,
	 * which a busy CPU defers to ksoftirqd, which waits behind the busy
	 * task for milliseconds.
	 */
	if (at && at <= b->now && !peer->more_tx) {
		mroce_conn_on_timer(peer->conn, b->now);
		peer->more_tx = mroce_peer_drain(peer, b);
		peer_settle(peer, b);
		at = mroce_conn_next_timer(peer->conn);
	}
	peer_arm(peer, b->now, at);
}

/*
 * Packets leave in the order the core produced them: one context at a time
 * transmits a peer's queue (a path is an ordered route; reordering its
 * packets would look like loss).  Whoever finds no transmitter becomes it
 * and sends until the queue stays empty, with bottom halves disabled so
 * the packets are also received in order on this CPU.  The queue has its
 * own lock, so that the transmitter never waits for a section to end.
 * ACKs are not ordered and leave first, from the context that built them:
 * in a ping-pong the receive softirq that sends one ACK would otherwise
 * still be the transmitter when the application answers on the other CPU,
 * and carry the answer too, so both directions ran on one CPU, inside the
 * first side's system call.
 */
void mroce_peer_unlock(struct mroce_peer *peer, struct mroce_batch *b)
{
	bool xmit = false;

	peer_settle(peer, b);
	if (!peer->dead) {
		peer->more_tx = mroce_peer_drain(peer, b);
		/* a payload that could not be copied fails its QP */
		peer_settle(peer, b);
		/*
		 * A doorbell's packets are received (over veth, or loopback)
		 * when bottom halves come back on after the unlock, and the
		 * application on the other side waits for them: the timer is
		 * set after that, by the section of their ACK if it came in
		 * that softirq run, else by one of the doorbell's own (below).
		 */
		if (b->defer_timer && !peer->more_tx)
			peer->timer_stale = true;
		else
			peer_unlock_timer(peer, b);
	}
	peer->batch = NULL;
	if (!skb_queue_empty(&b->skbs)) {
		spin_lock(&peer->txq_lock);
		skb_queue_splice_tail_init(&b->skbs, &peer->txq);
		xmit = !peer->xmitting;
		peer->xmitting = true;
		spin_unlock(&peer->txq_lock);
	}
	/* Keeps the peer and the notified CQs alive past the unlock. */
	rcu_read_lock();
	spin_unlock(&peer->lock);
	mroce_batch_build_ack(peer, b);
	if (!skb_queue_empty(&b->acks))
		mroce_peer_xmit_list(peer, &b->acks);
	if (xmit)
		mroce_peer_xmit(peer);
	local_bh_enable();
	mroce_cq_notify_batch(b);
	if (b->defer_timer && READ_ONCE(peer->timer_stale)) {
		/* the timer a doorbell left, unless an ACK set it since */
		struct mroce_batch b2;

		mroce_count(peer->mdev, MROCE_CNT_DB_TIMER_AFTER);
		mroce_peer_lock(peer, &b2);
		mroce_peer_unlock(peer, &b2);
	}
	rcu_read_unlock();
}

/* ---- lifetime ---- */

static struct mroce_peer *peer_alloc(struct mroce_dev *mdev,
				     const struct in6_addr *laddr,
				     const struct in6_addr *raddr, bool v4,
				     gfp_t gfp)
{
	unsigned int mtu = READ_ONCE(mdev->ndev->mtu);
	struct mroce_cfg cfg;
	struct mroce_key key;
	struct mroce_peer *p;
	u32 id;
	int err;

	/* an active open is the verbs user's doing: charge its cgroup */
	p = kzalloc(sizeof(*p), gfp);
	if (!p)
		return ERR_PTR(-ENOMEM);
	mroce_conn_cfg(mdev, &cfg);
	p->conn = kvzalloc(mroce_conn_size(cfg.npaths), gfp);
	if (!p->conn) {
		err = -ENOMEM;
		goto err_free;
	}
	/*
	 * A random id, unique among the hashed peers (peers_mutex held, so
	 * none is added meanwhile); a clash is drawn again.
	 */
	lockdep_assert_held(&mdev->peers_mutex);
	do
		id = get_random_u32();
	while (!id || mroce_peer_by_id(mdev, id));
	err = mroce_conn_init(p->conn, &cfg, &mroce_core_ops, p, id,
			      mdev->nonce, get_random_u64(), ktime_get_ns());
	if (err) {
		err = -EINVAL;
		goto err_free;
	}
	get_random_bytes(&key, sizeof(key));
	mroce_conn_set_key(p->conn, &key);
	p->routes = kcalloc(cfg.npaths, sizeof(*p->routes), gfp);
	if (!p->routes)
		goto err_conn;
	for (; p->nroutes < cfg.npaths; p->nroutes++)
		if (dst_cache_init(&p->routes[p->nroutes].cache, GFP_KERNEL))
			goto err_conn;
	p->mdev = mdev;
	p->id = id;
	p->v4 = v4;
	p->laddr = *laddr;
	p->raddr = *raddr;
	spin_lock_init(&p->lock);
	spin_lock_init(&p->txq_lock);
	refcount_set(&p->ref, 1);
	hash_init(p->qps);
	INIT_LIST_HEAD(&p->flush_qps);
	INIT_LIST_HEAD(&p->sq_qps);
	INIT_LIST_HEAD(&p->node);
	skb_queue_head_init(&p->txq);
	hrtimer_init(&p->timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS_SOFT);
	p->timer.function = peer_timer_fn;
	timer_setup(&p->wheel, peer_wheel_fn, 0);
	/* ACKs fill the header buffer: keep them inside the netdev MTU. */
	p->hdr_cap = clamp_t(u32, mtu > 48 ? mtu - 48 : 0, MROCE_TX_BUF_MIN,
			     sizeof(p->hdr));
	return p;

err_conn:
	err = -ENOMEM;
err_free:
	peer_free_routes(p);
	kvfree(p->conn);
	kfree(p);
	return ERR_PTR(err);
}

/* Publish @p: the receive path finds it from now on.  peers_mutex held. */
static void peer_hash(struct mroce_dev *mdev, struct mroce_peer *p)
{
	lockdep_assert_held(&mdev->peers_mutex);
	hlist_add_head_rcu(&p->idnode, mroce_conn_bucket(mdev, p->id));
	hash_add_rcu(mdev->peers, &p->hnode, addr_hash(&p->raddr));
	list_add_tail(&p->node, &mdev->peer_list);
	mdev->npeers++;
	p->hashed = true;
	p->last_active = ktime_get_ns();
	mroce_share_add(mdev, p->conn);
	if (!delayed_work_pending(&mdev->gc_work))
		schedule_delayed_work(&mdev->gc_work, MROCE_GC_PERIOD);
}

static void peer_free_rcu(struct rcu_head *rcu)
{
	struct mroce_peer *p = container_of(rcu, struct mroce_peer, rcu);

	skb_queue_purge(&p->txq);
	peer_free_routes(p);
	kvfree(p->conn);
	kfree(p);
}

/* The last reference is gone.  peers_mutex held, process context. */
static void peer_free(struct mroce_peer *p)
{
	struct mroce_dev *mdev = p->mdev;

	lockdep_assert_held(&mdev->peers_mutex);
	spin_lock_bh(&p->lock);
	p->dead = true;
	spin_unlock_bh(&p->lock);
	hrtimer_cancel(&p->timer);
	del_timer_sync(&p->wheel);
	mroce_retire_peer(mdev, p);
	list_del(&p->node);
	mdev->npeers--;
	if (p->tx_page)
		put_page(p->tx_page);
	call_rcu(&p->rcu, peer_free_rcu);
}

/* peers_mutex held: the last reference frees @p. */
static void peer_put_locked(struct mroce_peer *p)
{
	lockdep_assert_held(&p->mdev->peers_mutex);
	if (refcount_dec_and_test(&p->ref))
		peer_free(p);
}

void mroce_peer_put(struct mroce_peer *peer)
{
	struct mroce_dev *mdev = peer->mdev;

	mutex_lock(&mdev->peers_mutex);
	peer_put_locked(peer);
	mutex_unlock(&mdev->peers_mutex);
}

/*
 * Take @p out of lookups; it lives on while QPs are attached.  Its id goes
 * too, so stale packets for it are answered with a RESET.
 */
static void peer_unhash(struct mroce_dev *mdev, struct mroce_peer *p)
{
	lockdep_assert_held(&mdev->peers_mutex);
	if (!p->hashed)
		return;
	p->hashed = false;
	mroce_share_del(mdev, p->conn);
	hash_del_rcu(&p->hnode);
	hlist_del_rcu(&p->idnode);
	peer_put_locked(p);
}

/* Can new streams use @p?  Not once its connection failed or closed. */
static bool peer_usable(struct mroce_peer *p)
{
	enum mroce_conn_state state;
	bool ok;

	spin_lock_bh(&p->lock);
	state = mroce_conn_get_state(p->conn);
	ok = !p->closed && state != MROCE_CONN_FAILED &&
	     state != MROCE_CONN_CLOSED;
	spin_unlock_bh(&p->lock);
	return ok;
}

/*
 * The live peer for @raddr, created (and hashed) if needed; a new
 * reference is returned.  *created says whether it is new.
 */
static struct mroce_peer *peer_lookup_create(struct mroce_dev *mdev,
					     const struct in6_addr *laddr,
					     const struct in6_addr *raddr,
					     bool v4, bool passive,
					     bool *created)
{
	struct mroce_peer *p;

	*created = false;
	mutex_lock(&mdev->peers_mutex);
	if (mdev->dying) {
		p = ERR_PTR(-ENODEV);
		goto out;
	}
	p = mroce_peer_find(mdev, raddr);
	if (p && !peer_usable(p)) {
		peer_unhash(mdev, p);
		p = NULL;
	}
	if (!p) {
		/* Anyone can send CONNECTs: bound what they make us allocate. */
		if (passive && mdev->npeers >= READ_ONCE(mroce_max_peers)) {
			mroce_count(mdev, MROCE_CNT_RX_OPEN_DROPPED);
			p = ERR_PTR(-ENOSPC);
			goto out;
		}
		p = peer_alloc(mdev, laddr, raddr, v4,
			       passive ? GFP_KERNEL : GFP_KERNEL_ACCOUNT);
		if (IS_ERR(p))
			goto out;
		peer_hash(mdev, p);
		*created = true;
	}
	refcount_inc(&p->ref);
out:
	mutex_unlock(&mdev->peers_mutex);
	return p;
}

/* Active open at a QP's RTR: the peer for @av, with a reference. */
struct mroce_peer *mroce_peer_get(struct mroce_dev *mdev,
				  const struct mroce_av *av)
{
	struct mroce_batch b;
	struct mroce_peer *p;
	bool created;

	p = peer_lookup_create(mdev, &av->saddr, &av->daddr, av->v4, false,
			       &created);
	if (IS_ERR(p) || !created)
		return p;
	mroce_peer_lock(p, &b);
	mroce_conn_open(p->conn, b.now);	/* CONNECT goes out */
	mroce_peer_unlock(p, &b);
	return p;
}

/* ---- QPs attached to a peer (its lock held) ---- */

void mroce_peer_attach(struct mroce_peer *peer, struct mroce_qp *qp)
{
	lockdep_assert_held(&peer->lock);
	hash_add(peer->qps, &qp->peer_node, qp->ibqp.qp_num);
	peer->nqps++;
	WRITE_ONCE(peer->last_active, ktime_get_ns());
	WRITE_ONCE(qp->peer, peer);
}

void mroce_peer_detach(struct mroce_peer *peer, struct mroce_qp *qp)
{
	lockdep_assert_held(&peer->lock);
	hash_del(&qp->peer_node);
	peer->nqps--;
	WRITE_ONCE(peer->last_active, ktime_get_ns());
	list_del_init(&qp->flush_node);
	list_del_init(&qp->sq_node);
	WRITE_ONCE(qp->peer, NULL);
}

struct mroce_qp *mroce_peer_qp(struct mroce_peer *peer, u32 qpn)
{
	struct mroce_qp *qp;

	lockdep_assert_held(&peer->lock);
	hash_for_each_possible(peer->qps, qp, peer_node, qpn)
		if (qp->ibqp.qp_num == qpn)
			return qp;
	return NULL;
}

/* ---- passive open ---- */

struct mroce_open {
	struct list_head node;
	struct in6_addr raddr;
	struct in6_addr laddr;
	bool v4;
	u32 len;
	u8 pkt[];
};

/* Softirq: queue a CONNECT from an address without a usable peer. */
int mroce_queue_open(struct mroce_dev *mdev, const struct in6_addr *raddr,
		     const struct in6_addr *laddr, bool v4,
		     const struct sk_buff *skb, u32 len)
{
	struct mroce_open *o;

	spin_lock(&mdev->open_lock);
	if (mdev->nopen >= MROCE_MAX_PENDING_OPENS) {
		spin_unlock(&mdev->open_lock);
		mroce_count(mdev, MROCE_CNT_RX_OPEN_DROPPED);
		return -ENOBUFS;
	}
	mdev->nopen++;
	spin_unlock(&mdev->open_lock);

	o = kmalloc(sizeof(*o) + len, GFP_ATOMIC);
	if (!o || skb_copy_bits(skb, 0, o->pkt, len)) {
		kfree(o);
		spin_lock(&mdev->open_lock);
		mdev->nopen--;
		spin_unlock(&mdev->open_lock);
		mroce_count(mdev, MROCE_CNT_RX_OPEN_DROPPED);
		return -ENOMEM;
	}
	o->raddr = *raddr;
	o->laddr = *laddr;
	o->v4 = v4;
	o->len = len;
	spin_lock(&mdev->open_lock);
	list_add_tail(&o->node, &mdev->open_queue);
	spin_unlock(&mdev->open_lock);
	schedule_work(&mdev->open_work);
	return 0;
}

static void open_one(struct mroce_dev *mdev, struct mroce_open *o)
{
	struct mroce_rx_meta meta = {};
	struct mroce_batch b;
	struct mroce_peer *p;
	struct mroce_pkt pkt;
	bool created;

	if (mroce_wire_decode(o->pkt, o->len, &pkt) != MROCE_OK ||
	    pkt.hdr.opcode != MROCE_OP_CONNECT)
		return;
	p = peer_lookup_create(mdev, &o->laddr, &o->raddr, o->v4, true,
			       &created);
	if (IS_ERR(p))
		return;
	mroce_peer_lock(p, &b);
	if (!p->dead)
		mroce_conn_rx(p->conn, &pkt, o->pkt, &meta, b.now);
	mroce_peer_unlock(p, &b);
	mroce_peer_put(p);
}

void mroce_open_work(struct work_struct *work)
{
	struct mroce_dev *mdev = container_of(work, struct mroce_dev,
					      open_work);
	struct mroce_open *o;

	for (;;) {
		spin_lock_bh(&mdev->open_lock);
		o = list_first_entry_or_null(&mdev->open_queue,
					     struct mroce_open, node);
		if (o) {
			list_del(&o->node);
			mdev->nopen--;
		}
		spin_unlock_bh(&mdev->open_lock);
		if (!o)
			return;
		if (!READ_ONCE(mdev->dying))
			open_one(mdev, o);
		kfree(o);
	}
}

/* ---- idle and dead peers ---- */

/*
 * A peer without QPs whose connection failed or closed goes at once; one
 * that is merely idle (nothing received for idle_peer_s, nothing left to
 * send) says CLOSE and goes.  The next RTR or CONNECT makes a new one.
 */
static void peer_gc_work(struct work_struct *work)
{
	struct mroce_dev *mdev = container_of(to_delayed_work(work),
					      struct mroce_dev, gc_work);
	u64 idle = (u64)READ_ONCE(mroce_idle_peer_s) * NSEC_PER_SEC;
	struct mroce_peer *p, *tmp;
	struct mroce_batch b;
	bool drop;

	mutex_lock(&mdev->peers_mutex);
	list_for_each_entry_safe(p, tmp, &mdev->peer_list, node) {
		if (!p->hashed)
			continue;
		mroce_peer_lock(p, &b);
		drop = !p->nqps && !p->dead &&
		       (p->closed || (idle && !mroce_conn_busy(p->conn) &&
				      b.now - READ_ONCE(p->last_active) > idle));
		if (drop && !p->closed)
			mroce_conn_close(p->conn);
		mroce_peer_unlock(p, &b);
		if (drop)
			peer_unhash(mdev, p);
	}
	if (mdev->npeers && !READ_ONCE(mdev->dying))
		schedule_delayed_work(&mdev->gc_work, MROCE_GC_PERIOD);
	mutex_unlock(&mdev->peers_mutex);
}

/*
 * The netdev's MTU changed.  A connection whose payload no longer fits
 * fails now (mroce_conn_link_mss()), its QPs with retry exceeded, rather
 * than lose its full-size packets until a dead timer that the small ones
 * getting through may keep from ever firing; the next QP opens a new
 * connection, which states what the new MTU carries.
 */
void mroce_peers_link_mtu(struct mroce_dev *mdev, unsigned int ndev_mtu)
{
	u32 mss = mroce_max_payload(ndev_mtu);
	struct mroce_peer *p;
	struct mroce_batch b;

	mutex_lock(&mdev->peers_mutex);
	list_for_each_entry(p, &mdev->peer_list, node) {
		if (!p->hashed)
			continue;
		mroce_peer_lock(p, &b);
		mroce_conn_link_mss(p->conn, mss);
		mroce_peer_unlock(p, &b);
	}
	mutex_unlock(&mdev->peers_mutex);
}

/* ---- device ---- */

void mroce_peers_init(struct mroce_dev *mdev)
{
	mutex_init(&mdev->peers_mutex);
	hash_init(mdev->peers);
	INIT_LIST_HEAD(&mdev->peer_list);
	hash_init(mdev->conn_ids);
	mdev->nonce = get_random_u64() | 1;
	get_random_bytes(&mdev->cookie_key, sizeof(mdev->cookie_key));
	spin_lock_init(&mdev->open_lock);
	INIT_LIST_HEAD(&mdev->open_queue);
	INIT_WORK(&mdev->open_work, mroce_open_work);
	INIT_DELAYED_WORK(&mdev->gc_work, peer_gc_work);
}

/*
 * Device teardown, after every QP is gone and the receive path stopped
 * (mdev->dying, then a grace period).  Each connection says CLOSE.
 */
void mroce_peers_destroy(struct mroce_dev *mdev)
{
	struct mroce_peer *p, *tmp;
	struct mroce_open *o, *otmp;
	struct mroce_batch b;

	cancel_work_sync(&mdev->open_work);
	cancel_delayed_work_sync(&mdev->gc_work);
	list_for_each_entry_safe(o, otmp, &mdev->open_queue, node) {
		list_del(&o->node);
		kfree(o);
	}
	mdev->nopen = 0;

	mutex_lock(&mdev->peers_mutex);
	list_for_each_entry_safe(p, tmp, &mdev->peer_list, node) {
		if (!p->hashed)
			continue;
		mroce_peer_lock(p, &b);
		mroce_conn_close(p->conn);
		mroce_peer_unlock(p, &b);
		peer_unhash(mdev, p);
	}
	WARN_ON(!list_empty(&mdev->peer_list));
	mutex_unlock(&mdev->peers_mutex);
}
