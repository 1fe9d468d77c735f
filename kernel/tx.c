// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Transmit.  Under the peer lock, mroce_peer_drain() asks the core for
 * packets (mroce_conn_poll_tx) and builds an skb for each: the header the
 * core wrote, then the payload from where it lives (the posted SGEs or
 * inline data of a send, the local MR of a READ response): payloads above
 * a small size in registered user memory are referenced as page fragments
 * (zero copy), others are copied into page fragments, so no allocation in
 * this path exceeds a page.  After the lock is dropped mroce_peer_xmit()
 * routes each skb with the path's UDP source port in the flow key (no
 * output interface is forced, so multipath routing hashes each path to its
 * own route) and sends it from the netns socket.  Data carries ECT(0).
 */
#include <linux/if_ether.h>
#include <net/inet_ecn.h>
#include <net/ip.h>
#include <net/ip6_route.h>
#include <net/ipv6.h>
#include <net/ipv6_stubs.h>
#include <net/route.h>
#include <net/udp_tunnel.h>

#include "metaroce.h"

/*
 * Headroom of a packet built for @ndev: its link header and the outer IP
 * and UDP headers, which xmit4() and udp_tunnel6_xmit_skb() push
 * unchecked (a route through a device that needs more gets it from the IP
 * output path).  Not LL_MAX_HEADER: that is 128 bytes on distribution
 * kernels, and a 64-byte WRITE's head then takes a 1 KiB kmalloc object
 * instead of 512 bytes, all of which init_on_alloc (Debian's default)
 * clears for each packet.
 */
static inline unsigned int skb_headroom_for(const struct net_device *ndev,
					    bool v4)
{
	return LL_RESERVED_SPACE(ndev) +
	       (v4 ? sizeof(struct iphdr) : sizeof(struct ipv6hdr)) +
	       sizeof(struct udphdr);
}

/* Payloads up to this size are copied into the linear area. */
#define MROCE_LINEAR_MAX	256

struct mroce_skb_cb {
	u16 sport;
	u8 path;
	u8 tos;
};

static struct mroce_skb_cb *mroce_cb(struct sk_buff *skb)
{
	BUILD_BUG_ON(sizeof(struct mroce_skb_cb) > sizeof(skb->cb));
	return (struct mroce_skb_cb *)skb->cb;
}

/* Room for @len payload bytes in the peer's current page. */
static void *peer_frag(struct mroce_peer *p, u32 len, struct page **pg,
		       u32 *off)
{
	if (!p->tx_page || p->tx_off + len > PAGE_SIZE) {
		if (p->tx_page)
			put_page(p->tx_page);
		p->tx_page = alloc_page(GFP_ATOMIC);
		p->tx_off = 0;
		if (!p->tx_page)
			return NULL;
	}
	*pg = p->tx_page;
	*off = p->tx_off;
	get_page(p->tx_page);
	p->tx_off += ALIGN(len, SMP_CACHE_BYTES);
	return page_address(*pg) + *off;
}

/* The region under a message went away (deregistered): fail the QP. */
static void payload_fault(struct mroce_peer *p, struct mroce_qp *qp)
{
	mroce_count(p->mdev, MROCE_CNT_TX_LOCAL_ERR);
	mroce_qp_error(qp, MROCE_ERR_LOC_PROT);
}

/*
 * Copy the payload @tx describes into @n pieces (@dst[i], @len[i] bytes, in
 * order); a failure errors the QP.
 */
static int payload_copy(struct mroce_peer *p, const struct mroce_tx *tx,
			void *const *dst, const u32 *len, unsigned int n)
{
	struct mroce_qp *qp = st_to_qp(tx->st);
	struct mroce_mr *mr;
	unsigned int i;
	u32 done = 0;
	int err = 0;

	if (tx->src == MROCE_SRC_SQ) {
		for (i = 0; i < n && !err; done += len[i++])
			err = mroce_sq_copy(qp, (u32)tx->cookie,
					    tx->offset + done, dst[i], len[i]);
	} else {
		rcu_read_lock();
		mr = mroce_mr_lookup(p->mdev, tx->rkey, qp->pd,
				     IB_ACCESS_REMOTE_READ,
				     tx->va + tx->offset, tx->len);
		if (mr)
			for (i = 0; i < n; done += len[i++])
				mroce_mr_copy_out(mr, tx->va + tx->offset + done,
						  dst[i], len[i]);
		else
			err = -EFAULT;
		rcu_read_unlock();
	}
	if (err)
		payload_fault(p, qp);
	return err;
}

/* Undo a partial payload_attach(): @skb is left with its header only. */
static void payload_detach(struct sk_buff *skb)
{
	struct skb_shared_info *sh = skb_shinfo(skb);

	while (sh->nr_frags)
		skb_frag_unref(skb, --sh->nr_frags);
	skb->truesize -= skb->data_len;
	skb->len -= skb->data_len;
	skb->data_len = 0;
}

/*
 * Reference the payload @tx describes where it lives (pinned user pages)
 * instead of copying it.  The work request completes only when the
 * receiver acknowledged the data, so every copy of the packet that can
 * still be placed was placed; a late or duplicated copy carries a dsn the
 * receiver already has and is dropped.  -EAGAIN: copy it (inline data,
 * kernel memory, too many pieces); -EFAULT: the QP is failed.
 */
static int payload_attach(struct mroce_peer *p, const struct mroce_tx *tx,
			  struct sk_buff *skb)
{
	struct mroce_qp *qp = st_to_qp(tx->st);
	struct mroce_mr *mr;
	int err;

	if (tx->src == MROCE_SRC_SQ) {
		err = mroce_sq_attach(qp, (u32)tx->cookie, tx->offset, tx->len,
				      skb);
	} else {
		rcu_read_lock();
		mr = mroce_mr_lookup(p->mdev, tx->rkey, qp->pd,
				     IB_ACCESS_REMOTE_READ,
				     tx->va + tx->offset, tx->len);
		err = mr ? mroce_mr_attach(mr, tx->va + tx->offset, tx->len,
					   skb) : -EFAULT;
		rcu_read_unlock();
	}
	if (!err) {
		/* the pages are the application's, not ours */
		skb_shinfo(skb)->flags |= SKBFL_SHARED_FRAG;
		return 0;
	}
	payload_detach(skb);
	if (err != -EAGAIN)
		payload_fault(p, qp);
	return err;
}

/* A jumbo payload spans this many page fragments at most. */
#define MROCE_TX_FRAGS	DIV_ROUND_UP(MROCE_MAX_PAYLOAD, PAGE_SIZE)

static struct sk_buff *tx_build_skb(struct mroce_peer *p, const void *hdr,
				    const struct mroce_tx *tx)
{
	bool linear = tx->len <= MROCE_LINEAR_MAX;
	void *dst[MROCE_TX_FRAGS];
	u32 len[MROCE_TX_FRAGS];
	unsigned int n = 0, room;
	struct sk_buff *skb;
	struct page *pg;
	u32 off, left;
	int err;

	room = skb_headroom_for(p->mdev->ndev, p->v4);
	skb = alloc_skb(room + tx->hdr_len + (linear ? tx->len : 0),
			GFP_ATOMIC);
	if (!skb)
		goto nomem;
	skb_reserve(skb, room);
	skb_put_data(skb, hdr, tx->hdr_len);
	if (tx->len && tx->src != MROCE_SRC_NONE) {
		if (!linear && READ_ONCE(mroce_tx_zerocopy)) {
			err = payload_attach(p, tx, skb);
			if (!err) {
				p->tx_zerocopy++;
				goto done;
			}
			if (err != -EAGAIN) {
				kfree_skb(skb);
				return NULL;
			}
		}
		if (linear) {
			dst[n] = skb_put(skb, tx->len);
			len[n++] = tx->len;
		}
		/* above a page (jumbo payloads): one fragment per page */
		for (left = linear ? 0 : tx->len; left; left -= len[n++]) {
			len[n] = min_t(u32, left, PAGE_SIZE);
			dst[n] = peer_frag(p, len[n], &pg, &off);
			if (!dst[n]) {
				kfree_skb(skb);
				goto nomem;
			}
			skb_fill_page_desc(skb, n, pg, off, len[n]);
			skb->len += len[n];
			skb->data_len += len[n];
			skb->truesize += len[n];
		}
		if (payload_copy(p, tx, dst, len, n)) {
			kfree_skb(skb);
			return NULL;
		}
		p->tx_copied++;
	}
done:
	mroce_cb(skb)->sport = tx->sport;
	mroce_cb(skb)->path = (u8)tx->path;
	mroce_cb(skb)->tos = tx->ect ? INET_ECN_ECT_0 : 0;
	return skb;

nomem:
	/* As if lost on the wire: the core retransmits it. */
	mroce_count(p->mdev, MROCE_CNT_TX_NOMEM);
	return NULL;
}

/* After the unlock: the ACK mroce_peer_drain() kept back, as an skb. */
void mroce_batch_build_ack(struct mroce_peer *p, struct mroce_batch *b)
{
	struct sk_buff *skb;

	if (!b->ack_len)
		return;
	skb = tx_build_skb(p, b->ack_hdr, &b->ack_tx);
	b->ack_len = 0;
	if (skb)
		__skb_queue_tail(&b->acks, skb);
}

/*
 * Build what the core has to send, up to a budget.  True when the budget
 * ran out with more to send.
 */
bool mroce_peer_drain(struct mroce_peer *p, struct mroce_batch *b)
{
	unsigned int n, budget = MROCE_TX_BUDGET;
	u8 *hdr = p->hdr;
	struct sk_buff *skb;
	struct mroce_tx tx;
	bool ack;

	lockdep_assert_held(&p->lock);
	for (n = 0; n < budget; n++) {
		if (mroce_conn_poll_tx(p->conn, b->now, hdr, p->hdr_cap,
				       &tx) != MROCE_POLL_PACKET)
			return false;
		if (tx.path < p->nroutes) {
			struct mroce_route *r = &p->routes[tx.path];

			/*
			 * The path moved to a new port: a new route.  The
			 * transmitter reads the port outside the lock.
			 */
			if (READ_ONCE(r->sport) != tx.sport) {
				dst_cache_reset(&r->cache);
				WRITE_ONCE(r->sport, tx.sport);
			}
		}
		/*
		 * ACKs carry no path sequence and their receiver takes them in
		 * any order, so they need not wait for the peer's transmitter:
		 * one busy on another CPU would otherwise carry this CPU's
		 * next data too (see mroce_peer_unlock).  The first one's skb
		 * is even built after the unlock: the allocation was half the
		 * time a data packet's receipt held the lock, which in a
		 * ping-pong the application's answer waits for.
		 */
		ack = tx.opcode == MROCE_OP_ACK ||
		      tx.opcode == MROCE_OP_PROBE_ACK;
		if (ack && !b->ack_len && !tx.len &&
		    tx.hdr_len <= sizeof(b->ack_hdr)) {
			memcpy(b->ack_hdr, hdr, tx.hdr_len);
			b->ack_tx = tx;
			b->ack_len = tx.hdr_len;
			continue;
		}
		skb = tx_build_skb(p, hdr, &tx);
		if (!skb)
			continue;
		__skb_queue_tail(ack ? &b->acks : &b->skbs, skb);
	}
	/* More to send: yield, the timer continues right away. */
	return true;
}

/*
 * udp_tunnel_xmit_skb() for IPv4, less the IP ID's hash.  A datagram with
 * DF set is atomic (RFC 6864): its ID identifies no fragments, and Linux's
 * own unconnected UDP sockets send 0 there (ip_select_ident_segs()).
 * iptunnel_xmit() instead ran __ip_select_ident() for every packet: a
 * keyed hash of the addresses and an atomic add on a global table, about
 * 140 instructions and three pages of data per packet.  A route with a
 * locked MTU clears DF and gets the hashed ID.  The skb is our own, just
 * built, so there is nothing to scrub.
 */
static void xmit4(struct sock *sk, struct rtable *rt, struct sk_buff *skb,
		  __be32 saddr, __be32 daddr, u8 tos, __be16 sport,
		  __be16 dport)
{
	struct net *net = dev_net(rt->dst.dev);
	struct udphdr *uh;
	struct iphdr *iph;

	__skb_push(skb, sizeof(*uh));
	skb_reset_transport_header(skb);
	uh = udp_hdr(skb);
	uh->source = sport;
	uh->dest = dport;
	uh->len = htons(skb->len);
	udp_set_csum(false, skb, saddr, daddr, skb->len);

	skb_dst_set(skb, &rt->dst);
	memset(IPCB(skb), 0, sizeof(*IPCB(skb)));
	__skb_push(skb, sizeof(*iph));
	skb_reset_network_header(skb);
	iph = ip_hdr(skb);
	iph->version = 4;
	iph->ihl = sizeof(*iph) >> 2;
	iph->tos = tos;
	iph->frag_off = ip_mtu_locked(&rt->dst) ? 0 : htons(IP_DF);
	iph->ttl = ip4_dst_hoplimit(&rt->dst);
	iph->protocol = IPPROTO_UDP;
	iph->saddr = saddr;
	iph->daddr = daddr;
	if (iph->frag_off)
		iph->id = 0;
	else
		__ip_select_ident(net, iph, 1);
	/* __ip_local_out() sets tot_len, the checksum and skb->protocol */
	ip_local_out(net, sk, skb);
}

/*
 * Send @skb from @laddr to @raddr.  @route (NULL: none) caches the route of
 * the skb's path.  Bottom halves are disabled: the cache is per CPU, so
 * several CPUs may use one route at once; its port changes only under the
 * peer lock, and a route looked up as it changes is not cached.
 */
static void xmit_one(struct mroce_dev *mdev, bool v4,
		     const struct in6_addr *laddr,
		     const struct in6_addr *raddr, struct mroce_route *route,
		     struct sk_buff *skb)
{
	struct mroce_skb_cb cb = *mroce_cb(skb);
	__be16 dport = htons(mroce_udp_port);
	__be16 sport = htons(cb.sport);
	struct sock *sk;

	sk = mroce_net_sock(mdev, v4);
	if (!sk)
		goto drop;
	/* built for the port the path had before: route it uncached */
	if (route && READ_ONCE(route->sport) != cb.sport)
		route = NULL;
	if (v4) {
		struct flowi4 fl4 = {
			.flowi4_proto = IPPROTO_UDP,
			.daddr = raddr->s6_addr32[3],
			.saddr = laddr->s6_addr32[3],
			.fl4_sport = sport,
			.fl4_dport = dport,
		};
		struct rtable *rt = NULL;
		__be32 saddr;

		if (route)
			rt = dst_cache_get_ip4(&route->cache, &saddr);
		if (!rt) {
			rt = ip_route_output_key(sock_net(sk), &fl4);
			if (IS_ERR(rt))
				goto no_route;
			if (route && READ_ONCE(route->sport) == cb.sport)
				dst_cache_set_ip4(&route->cache, &rt->dst,
						  fl4.saddr);
		}
		xmit4(sk, rt, skb, fl4.saddr, fl4.daddr, cb.tos, sport, dport);
	} else {
#if IS_ENABLED(CONFIG_IPV6)
		struct flowi6 fl6 = {
			.flowi6_proto = IPPROTO_UDP,
			.daddr = *raddr,
			.saddr = *laddr,
			.fl6_sport = sport,
			.fl6_dport = dport,
		};
		struct dst_entry *dst = NULL;
		struct in6_addr saddr;

		/* Link-local addresses only make sense on our own link. */
		if (ipv6_addr_type(raddr) & IPV6_ADDR_LINKLOCAL)
			fl6.flowi6_oif = mdev->ndev->ifindex;
		/*
		 * The flow label is the path's, from its ports as Linux's own
		 * UDP sockets make it (auto_flowlabels): IPv6 multipath hashes
		 * that take the label rather than the ports (our own route
		 * lookup's default, RFC 6438 routers) then tell the paths of
		 * a connection apart, as they would not with label 0.
		 */
		fl6.flowlabel = ip6_make_flowlabel(sock_net(sk), skb, 0, true,
						   &fl6);
		if (route)
			dst = dst_cache_get_ip6(&route->cache, &saddr);
		if (!dst) {
			dst = ipv6_stub->ipv6_dst_lookup_flow(sock_net(sk), sk,
							      &fl6, NULL);
			if (IS_ERR(dst))
				goto no_route;
			if (route && READ_ONCE(route->sport) == cb.sport)
				dst_cache_set_ip6(&route->cache, dst,
						  &fl6.saddr);
		}
		udp_tunnel6_xmit_skb(dst, sk, skb, NULL, &fl6.saddr, &fl6.daddr,
				     cb.tos, ip6_dst_hoplimit(dst), fl6.flowlabel,
				     sport, dport, false);
#else
		goto drop;
#endif
	}
	return;

no_route:
	mroce_count(mdev, MROCE_CNT_TX_NO_ROUTE);
drop:
	kfree_skb(skb);
}

/*
 * The peer's transmitter (mroce_peer_unlock made us it), bottom halves
 * disabled: put the queued packets on the wire, in order, until no more
 * come; the lock is held only to take them.
 */
void mroce_peer_xmit(struct mroce_peer *p)
{
	struct sk_buff_head q;

	__skb_queue_head_init(&q);
	for (;;) {
		spin_lock(&p->txq_lock);
		skb_queue_splice_init(&p->txq, &q);
		if (skb_queue_empty(&q)) {
			p->xmitting = false;
			spin_unlock(&p->txq_lock);
			return;
		}
		spin_unlock(&p->txq_lock);
		mroce_peer_xmit_list(p, &q);
	}
}

/*
 * Send every skb of @q, each on its path's route, bottom halves disabled:
 * the transmitter's share of the queue, or a batch's ACKs from its owner.
 */
void mroce_peer_xmit_list(struct mroce_peer *p, struct sk_buff_head *q)
{
	struct sk_buff *skb;

	while ((skb = __skb_dequeue(q))) {
		u8 path = mroce_cb(skb)->path;

		xmit_one(p->mdev, p->v4, &p->laddr, &p->raddr,
			 path < p->nroutes ? &p->routes[path] : NULL, skb);
	}
}

void mroce_bucket_init(struct mroce_bucket *b, u32 rate, u32 burst)
{
	spin_lock_init(&b->lock);
	b->tat = 0;
	b->interval = NSEC_PER_SEC / rate;
	b->slack = (u64)(burst - 1) * b->interval;
}

/* May one more packet go at @now? */
bool mroce_bucket_take(struct mroce_bucket *b, u64 now)
{
	bool ok;

	spin_lock_bh(&b->lock);
	if (b->tat < now)
		b->tat = now;
	ok = b->tat - now <= b->slack;
	if (ok)
		b->tat += b->interval;
	spin_unlock_bh(&b->lock);
	return ok;
}

/* Send the @n bytes at @buf from @laddr to @raddr, off any connection. */
static void xmit_stray(struct mroce_dev *mdev, const void *buf, u32 n,
		       bool v4, const struct in6_addr *laddr,
		       const struct in6_addr *raddr)
{
	unsigned int room = skb_headroom_for(mdev->ndev, v4);
	struct sk_buff *skb;

	skb = alloc_skb(room + n, GFP_ATOMIC);
	if (!skb) {
		mroce_count(mdev, MROCE_CNT_TX_NOMEM);
		return;
	}
	skb_reserve(skb, room);
	skb_put_data(skb, buf, n);
	mroce_cb(skb)->sport = mroce_udp_port;
	mroce_cb(skb)->path = 0;
	mroce_cb(skb)->tos = 0;
	xmit_one(mdev, v4, laddr, raddr, NULL, skb);
}

/*
 * Answer a packet for an unknown connection id, or for a known one from
 * another address than its peer's (the same answer: it must not tell an
 * attacker which ids exist), with a RESET, rate limited; from @laddr to
 * @raddr, the addresses the packet came between.
 */
void mroce_send_reset(struct mroce_dev *mdev, const struct mroce_pkt *pkt,
		      bool v4, const struct in6_addr *laddr,
		      const struct in6_addr *raddr)
{
	u8 buf[MROCE_RESET_LEN];
	u32 n;

	if (pkt->hdr.opcode == MROCE_OP_RESET)
		return;
	if (!mroce_bucket_take(&mdev->reset_tb, ktime_get_ns())) {
		mroce_count(mdev, MROCE_CNT_RESET_LIMITED);
		return;
	}
	n = mroce_reset_reply(pkt, MROCE_RESET_UNKNOWN_CONN, buf);
	if (!n)
		return;
	mroce_count(mdev, MROCE_CNT_RESET_SENT);
	xmit_stray(mdev, buf, n, v4, laddr, raddr);
}

/*
 * Answer a CONNECT that echoed no valid cookie with the CHALLENGE that
 * gives its sender one (protocol.md 6.2), rate limited.  Nothing is kept.
 */
void mroce_send_challenge(struct mroce_dev *mdev, const struct mroce_pkt *pkt,
			  bool v4, const struct in6_addr *laddr,
			  const struct in6_addr *raddr, u64 now)
{
	u8 buf[MROCE_CHALLENGE_LEN];
	u32 n;

	if (!mroce_bucket_take(&mdev->challenge_tb, now)) {
		mroce_count(mdev, MROCE_CNT_CHALLENGE_LIMITED);
		return;
	}
	n = mroce_cookie_challenge(&mdev->cookie_key, raddr->s6_addr, pkt, now,
				   buf);
	mroce_count(mdev, MROCE_CNT_CHALLENGE_SENT);
	xmit_stray(mdev, buf, n, v4, laddr, raddr);
}
