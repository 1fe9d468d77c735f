// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * metaroce.ko: init/exit and the "metaroce" rdma link type
 * (rdma link add <name> type metaroce netdev <ifname>).  The module
 * parameters are in params.c.
 */
#include <linux/module.h>
#include <rdma/rdma_netlink.h>

#include "metaroce.h"

static struct rdma_link_ops mroce_link_ops = {
	.type = "metaroce",
	.newlink = mroce_newlink,
};

static int __init mroce_init(void)
{
	int err;

	if (!mroce_udp_port) {
		pr_err("udp_port must not be 0\n");
		return -EINVAL;
	}

	mroce_stats_init();
	mroce_debugfs_init();
	err = mroce_net_register();
	if (err)
		goto err_debugfs;

	err = mroce_notifier_register();
	if (err)
		goto err_net;

	rdma_link_register(&mroce_link_ops);
	pr_info("loaded, udp_port %u, abi %u\n", mroce_udp_port,
		MROCE_ABI_VERSION);
	return 0;

err_net:
	mroce_net_unregister();
err_debugfs:
	mroce_debugfs_exit();
	return err;
}

static void __exit mroce_exit(void)
{
	/* No new devices once this returns: it waits for running newlinks. */
	rdma_link_unregister(&mroce_link_ops);
	mroce_unregister_devices(NULL);
	/* Also waits for the unregistrations a netdev's removal queued. */
	mroce_notifier_unregister();
	mroce_net_unregister();
	mroce_debugfs_exit();
	/* Peers are freed by RCU callbacks of this module. */
	rcu_barrier();
	pr_info("unloaded\n");
}

module_init(mroce_init);
module_exit(mroce_exit);

MODULE_ALIAS_RDMA_LINK("metaroce");
MODULE_DESCRIPTION("MetaRoCE: loss-tolerant multipath RDMA transport over UDP");
MODULE_AUTHOR("MetaRoCE for Linux developers");
MODULE_LICENSE("Dual BSD/GPL");
