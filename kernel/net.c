// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Per network namespace transport sockets.
 *
 * Each netns that holds at least one MetaRoCE device has one IPv4 and one
 * IPv6 (v6only) kernel UDP tunnel socket bound to udp_port, created with the
 * first device of the netns and released with the last.  The devices of a
 * netns hang off its struct mroce_net on an RCU list so that the receive
 * path can find the device of an incoming datagram without a lock.
 */
#include <linux/mutex.h>
#include <linux/rculist.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>
#include <net/udp_tunnel.h>

#include "metaroce.h"

struct mroce_net {
	struct mutex lock;		/* users, sockets and devs updates */
	unsigned int users;
	struct socket *sock4;
	struct socket *sock6;		/* NULL if the netns has no IPv6 */
	struct list_head devs;
};

static unsigned int mroce_net_id __read_mostly;

/* Softirq, under RCU: hand the datagram to the device it arrived for. */
static int mroce_udp_encap_recv(struct sock *sk, struct sk_buff *skb)
{
	struct mroce_net *mn = rcu_dereference_sk_user_data(sk);
	struct mroce_dev *mdev;

	if (mn) {
		list_for_each_entry_rcu(mdev, &mn->devs, net_node) {
			if (mdev->ndev == skb->dev) {
				mroce_rx(mdev, skb);
				return 0;
			}
		}
	}
	kfree_skb(skb);
	return 0;	/* consumed */
}

/*
 * The socket a device transmits from.  Valid while the device is attached,
 * which outlives every peer and QP of the device.
 */
struct sock *mroce_net_sock(struct mroce_dev *mdev, bool v4)
{
	struct mroce_net *mn = mdev->mnet;
	struct socket *sock;

	if (!mn)
		return NULL;
	sock = v4 ? mn->sock4 : mn->sock6;
	return sock ? sock->sk : NULL;
}

static int mroce_sock_open(struct net *net, struct mroce_net *mn, int family,
			   struct socket **sockp)
{
	struct udp_tunnel_sock_cfg tcfg = {
		.sk_user_data = mn,
		.encap_type = 1,
		.encap_rcv = mroce_udp_encap_recv,
	};
	struct udp_port_cfg cfg = {
		.family = family,
		.local_udp_port = htons(mroce_udp_port),
	};
	int err;

	if (family == AF_INET6) {
		cfg.local_ip6 = in6addr_any;
		cfg.ipv6_v6only = 1;
		cfg.use_udp6_tx_checksums = 1;
		cfg.use_udp6_rx_checksums = 1;
	} else {
		cfg.local_ip.s_addr = htonl(INADDR_ANY);
		cfg.use_udp_checksums = 1;
	}

	err = udp_sock_create(net, &cfg, sockp);
	if (err)
		return err;
	setup_udp_tunnel_sock(net, *sockp, &tcfg);
	return 0;
}

static void mroce_socks_close(struct mroce_net *mn)
{
	if (mn->sock6)
		udp_tunnel_sock_release(mn->sock6);
	if (mn->sock4)
		udp_tunnel_sock_release(mn->sock4);
	mn->sock6 = NULL;
	mn->sock4 = NULL;
}

static int mroce_socks_open(struct net *net, struct mroce_net *mn)
{
	int err;

	err = mroce_sock_open(net, mn, AF_INET, &mn->sock4);
	if (err)
		goto err;
#if IS_ENABLED(CONFIG_IPV6)
	err = mroce_sock_open(net, mn, AF_INET6, &mn->sock6);
	/* IPv6 disabled at boot (ipv6.disable=1): run IPv4 only. */
	if (err == -EAFNOSUPPORT)
		err = 0;
	if (err)
		goto err;
#endif
	return 0;
err:
	pr_warn("cannot bind UDP port %u in netns %u: %d\n", mroce_udp_port,
		net->ns.inum, err);
	mroce_socks_close(mn);
	return err;
}

int mroce_net_attach(struct mroce_dev *mdev)
{
	struct net *net = dev_net(mdev->ndev);
	struct mroce_net *mn = net_generic(net, mroce_net_id);
	int err = 0;

	mutex_lock(&mn->lock);
	if (!mn->users)
		err = mroce_socks_open(net, mn);
	if (!err) {
		mn->users++;
		list_add_tail_rcu(&mdev->net_node, &mn->devs);
		mdev->mnet = mn;
	}
	mutex_unlock(&mn->lock);
	return err;
}

/*
 * The device memory is freed with kfree_rcu() by ib_core after this, so a
 * receive path reader still walking mn->devs stays safe.
 */
void mroce_net_detach(struct mroce_dev *mdev)
{
	struct mroce_net *mn = mdev->mnet;

	if (!mn)
		return;
	mutex_lock(&mn->lock);
	list_del_rcu(&mdev->net_node);
	if (!--mn->users)
		mroce_socks_close(mn);
	mutex_unlock(&mn->lock);
	mdev->mnet = NULL;
}

static int __net_init mroce_net_init(struct net *net)
{
	struct mroce_net *mn = net_generic(net, mroce_net_id);

	mutex_init(&mn->lock);
	INIT_LIST_HEAD(&mn->devs);
	return 0;
}

/*
 * Netdevs of a dying netns are unregistered before subsystems exit, and a
 * device holds its netdev until it is deallocated, so normally nothing is
 * left here.  A physical netdev is moved back to init_net instead, which
 * only queues its device's unregistration: finish that synchronously
 * before the sockets and this struct go away.
 */
static void __net_exit mroce_net_exit(struct net *net)
{
	struct mroce_net *mn = net_generic(net, mroce_net_id);

	mroce_unregister_devices(mn);
	WARN_ON(mn->users || mn->sock4 || mn->sock6);
	mutex_destroy(&mn->lock);
}

static struct pernet_operations mroce_net_ops = {
	.init = mroce_net_init,
	.exit = mroce_net_exit,
	.id = &mroce_net_id,
	.size = sizeof(struct mroce_net),
};

int mroce_net_register(void)
{
	return register_pernet_subsys(&mroce_net_ops);
}

void mroce_net_unregister(void)
{
	unregister_pernet_subsys(&mroce_net_ops);
}
