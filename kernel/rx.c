// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Receive, in softirq from the netns socket's encap_rcv (the UDP checksum
 * was verified by then).  The MetaRoCE headers and ACK blocks are made
 * linear, exactly as far as validation reads, and decoded; rejections are
 * counted by reason.  A CONNECT must echo a cookie (else a CHALLENGE gives
 * it one and nothing is kept), then goes to the peer of its source address,
 * or to the passive-open queue; anything else to the peer its dst_conn
 * names, if it came from that peer's address, else a RESET answers it.
 * The core then runs under the peer lock with the skb as the payload
 * handle: placement copies from the skb into the target pages, once.
 */
#include <net/inet_ecn.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <linux/udp.h>

#include "metaroce.h"

static void rx_addrs(const struct sk_buff *skb, bool *v4,
		     struct in6_addr *saddr, struct in6_addr *daddr, bool *ce)
{
	if (skb->protocol == htons(ETH_P_IP)) {
		const struct iphdr *iph = ip_hdr(skb);

		*v4 = true;
		ipv6_addr_set_v4mapped(iph->saddr, saddr);
		ipv6_addr_set_v4mapped(iph->daddr, daddr);
		*ce = INET_ECN_is_ce(iph->tos);
	} else {
		const struct ipv6hdr *ip6h = ipv6_hdr(skb);

		*v4 = false;
		*saddr = ip6h->saddr;
		*daddr = ip6h->daddr;
		*ce = INET_ECN_is_ce(ipv6_get_dsfield(ip6h));
	}
}

/*
 * Decoded from the linear area, false (counted) if the packet is refused.
 * Only what the decoder and the ACK blocks need is made linear, in up to
 * three rounds (header, extensions, blocks), each bounded by the core
 * from bytes already pulled: IP fragments and page frags stay where they
 * are, and a datagram the core refuses is not pulled further.  The
 * payload is copied straight from the skb at placement.
 */
static bool rx_decode(struct mroce_dev *mdev, struct sk_buff *skb,
		      struct mroce_pkt *pkt)
{
	enum mroce_wire_err err;
	u32 head = 0, need;
	int round;

	for (round = 0; round < 3; round++) {
		need = mroce_wire_head_len(skb->data, head, skb->len);
		if (need <= head)
			break;
		if (!pskb_may_pull(skb, need)) {
			err = MROCE_WIRE_SHORT;
			goto bad;
		}
		head = need;
	}
	err = mroce_wire_decode_head(skb->data, head, skb->len, pkt);
	if (err == MROCE_WIRE_OK)
		return true;
bad:
	mroce_count(mdev, MROCE_CNT_RX_SHORT + err - MROCE_WIRE_SHORT);
	return false;
}

/*
 * The receiving host can be the bottleneck.  A software endpoint's packets
 * (veth, or any driver without NAPI) wait in this CPU's input backlog,
 * which drops when full and marks nothing: the senders would only see
 * losses, which are not a congestion signal here.  Act as an AQM on it: a
 * packet received while the backlog holds more than host_ce_pkts packets
 * counts as CE-marked, so the sender's ECN loop backs off before the drops.
 * A NAPI driver hands packets over without that queue: no effect there.
 */
static bool host_congested(struct mroce_dev *mdev)
{
	struct softnet_data *sd = this_cpu_ptr(&softnet_data);
	u32 mark = READ_ONCE(mroce_host_ce_pkts);

	if (!mark || skb_queue_len_lockless(&sd->input_pkt_queue) +
		     skb_queue_len_lockless(&sd->process_queue) <= mark)
		return false;
	mroce_count(mdev, MROCE_CNT_RX_HOST_CE);
	return true;
}

/*
 * Which of the peer's locks a packet needs (conn.h, "Two locks"): an ACK
 * the send half's, a WRITE or SEND the receive half's, anything else both.
 * The state is read without either; the core checks it again, and asks
 * for the other lock, or refuses the ACK, if it changed.
 */
static u8 rx_locks(struct mroce_peer *peer, const struct mroce_pkt *pkt)
{
	unsigned int split = READ_ONCE(mroce_lock_split);

	if (!split || mroce_conn_get_state(peer->conn) != MROCE_CONN_ESTABLISHED)
		return MROCE_LOCK_ALL;
	if (pkt->hdr.opcode == MROCE_OP_ACK)
		return split & 2 ? MROCE_LOCK_TX : MROCE_LOCK_ALL;
	if ((split & 1) && mroce_rx_recv_only(&pkt->hdr))
		return MROCE_LOCK_RX;
	return MROCE_LOCK_ALL;
}

void mroce_rx(struct mroce_dev *mdev, struct sk_buff *skb)
{
	struct in6_addr saddr, daddr;
	struct mroce_rx_meta meta;
	struct mroce_peer *peer;
	struct mroce_batch b;
	struct mroce_pkt pkt;
	bool v4, ce;

	if (READ_ONCE(mdev->dying))
		goto drop;
	rx_addrs(skb, &v4, &saddr, &daddr, &ce);
	if (!pskb_may_pull(skb, sizeof(struct udphdr)))
		goto drop;
	__skb_pull(skb, sizeof(struct udphdr));
	if (!rx_decode(mdev, skb, &pkt))
		goto drop;

	if (pkt.hdr.opcode == MROCE_OP_CONNECT) {
		/* No state for a sender that has not proven its address. */
		u64 now = ktime_get_ns();

		if (!mroce_cookie_valid(&mdev->cookie_key, saddr.s6_addr, &pkt,
					now)) {
			mroce_count(mdev, MROCE_CNT_RX_CONNECT_UNPROVEN);
			mroce_send_challenge(mdev, &pkt, v4, &daddr, &saddr,
					     now);
			goto drop;
		}
		peer = mroce_peer_find(mdev, &saddr);
		if (!peer || READ_ONCE(peer->closed)) {
			mroce_queue_open(mdev, &saddr, &daddr, v4, skb,
					 skb->len);
			goto drop;
		}
	} else {
		peer = mroce_peer_by_id(mdev, pkt.hdr.dst_conn);
		/*
		 * An id from another address is answered as an unknown one:
		 * the answer must not tell which ids exist.
		 */
		if (peer && !ipv6_addr_equal(&peer->raddr, &saddr)) {
			mroce_count(mdev, MROCE_CNT_RX_WRONG_ADDR);
			peer = NULL;
		} else if (!peer) {
			mroce_count(mdev, MROCE_CNT_RX_UNKNOWN_CONN);
		}
		if (!peer) {
			mroce_send_reset(mdev, &pkt, v4, &daddr, &saddr);
			goto drop;
		}
	}

	meta.pctx = skb;
	meta.ce = ce || host_congested(mdev);
	mroce_peer_lock_some(peer, &b, rx_locks(peer, &pkt));
	if (b.locks == MROCE_LOCK_TX) {
		/* an ACK: the send half only, unless it needs more */
		bool done = peer->dead ||
			    mroce_conn_rx_ack(peer->conn, &pkt, skb->data, b.now);

		if (done) {
			if (!peer->dead) {
				WRITE_ONCE(peer->last_active, b.now);
				mroce_count(mdev, MROCE_CNT_RX_ONE_LOCK);
			}
			mroce_peer_unlock(peer, &b);
			consume_skb(skb);
			return;
		}
		/* refused, nothing changed: again with both */
		mroce_peer_relock_all(peer, &b);
	}
	if (!peer->dead) {
		WRITE_ONCE(peer->last_active, b.now);
		if (b.locks == MROCE_LOCK_RX)
			mroce_count(mdev, MROCE_CNT_RX_ONE_LOCK);
		mroce_conn_rx(peer->conn, &pkt, skb->data, &meta, b.now);
	}
	mroce_peer_unlock(peer, &b);
	/*
	 * A proven CONNECT with another nonce or id ended the connection it
	 * reached (the peer restarted): it opens the new one at once.
	 */
	if (pkt.hdr.opcode == MROCE_OP_CONNECT && READ_ONCE(peer->closed)) {
		mroce_queue_open(mdev, &saddr, &daddr, v4, skb, skb->len);
		kfree_skb(skb);
		return;
	}
	consume_skb(skb);
	return;

drop:
	kfree_skb(skb);
}
