// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ib_device lifecycle: creation from "rdma link add", the driver's own
 * device registry, sysfs attributes, and the netdev notifier that follows
 * carrier/MTU and removes a device whose netdev goes away.
 *
 * Teardown has exactly one place, mroce_dealloc_driver(): ib_core calls it
 * for every way a device ends (rdma link delete, our queued unregister on
 * NETDEV_UNREGISTER, module exit, netns exit, and ib_dealloc_device() when
 * creation fails half way).
 *
 * Locking: mroce_devs_lock protects the registry and the registered,
 * unregistering and gone flags.  It nests inside RTNL (the notifier runs
 * under RTNL) and is never held across ib_register_device() or
 * ib_unregister_device().  Nothing on the packet path takes it.
 *
 * Module unload must not free code another thread is still running.  The
 * thread that runs mroce_dealloc_driver() (rdma link delete, a queued
 * unregistration, netns exit) is in our code until it returns, after it
 * last touched the registry; so the registry keeps a device reference and
 * a "gone" entry after mroce_dealloc_driver(), and whoever removes the entry
 * (mroce_reap_all()) first waits for that thread with ib_unregister_device(),
 * which takes the device's unregistration lock: ib_core holds that lock
 * around the whole of ib_dealloc_device().
 */
#include <linux/delay.h>
#include <linux/if_arp.h>
#include <linux/if_vlan.h>
#include <linux/mutex.h>
#include <linux/random.h>
#include <linux/rtnetlink.h>
#include <net/addrconf.h>

#include "metaroce.h"

static LIST_HEAD(mroce_devs);
static DEFINE_MUTEX(mroce_devs_lock);

/*
 * The unregistrations this driver starts itself (its netdev went away) run
 * here, not on ib_core's ib_unregister_device_queued() queue, whose fence
 * for module unload, ib_unregister_driver(), selects by driver id: ours is
 * RDMA_DRIVER_UNKNOWN, which other out-of-tree drivers share.  Module exit
 * destroys this queue, which waits until each has returned.
 */
static struct workqueue_struct *mroce_unreg_wq;

static struct mroce_dev *mroce_find_by_ndev(const struct net_device *ndev)
{
	struct mroce_dev *mdev;

	lockdep_assert_held(&mroce_devs_lock);
	list_for_each_entry(mdev, &mroce_devs, list)
		if (!mdev->gone && mdev->ndev == ndev)
			return mdev;
	return NULL;
}

/*
 * Take the first gone entry off the registry (NULL: none).  The caller
 * passes it to mroce_unregister_put().
 */
static struct mroce_dev *mroce_unlink_gone(void)
{
	struct mroce_dev *mdev;

	lockdep_assert_held(&mroce_devs_lock);
	list_for_each_entry(mdev, &mroce_devs, list) {
		if (mdev->gone) {
			list_del_init(&mdev->list);
			return mdev;
		}
	}
	return NULL;
}

/*
 * Unregister @mdev and drop a device reference the caller took, which may
 * free it.  When ib_core is unregistering it already, or has, this waits
 * until that thread has left ib_core's unregistration (and so
 * mroce_dealloc_driver()) and unregisters nothing.
 */
static void mroce_unregister_put(struct mroce_dev *mdev)
{
	ib_unregister_device(&mdev->ibdev);
	put_device(&mdev->ibdev.dev);
}

/* Free what rdma link delete left; bounds the gone entries. */
static void mroce_reap_all(void)
{
	struct mroce_dev *mdev;

	for (;;) {
		mutex_lock(&mroce_devs_lock);
		mdev = mroce_unlink_gone();
		mutex_unlock(&mroce_devs_lock);
		if (!mdev)
			return;
		mroce_unregister_put(mdev);	/* the registry's reference */
	}
}

enum ib_mtu mroce_active_mtu(unsigned int ndev_mtu)
{
	static const enum ib_mtu mtus[] = {
		IB_MTU_4096, IB_MTU_2048, IB_MTU_1024, IB_MTU_512, IB_MTU_256,
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(mtus); i++)
		if (ndev_mtu >= ib_mtu_enum_to_int(mtus[i]) + MROCE_WIRE_OVERHEAD)
			return mtus[i];
	return 0;	/* not even a 256-byte payload fits */
}

/*
 * The largest data payload a connection over this netdev carries (its
 * hello's max_payload): what fits the MTU beside the IP, UDP and MetaRoCE
 * headers, rounded down to 1024 bytes (to 256 below that), not bounded by
 * the IB MTUs: a 9000-byte MTU carries 8 KiB per packet.  0: none fits.
 */
u32 mroce_max_payload(unsigned int ndev_mtu)
{
	u32 room, cap = READ_ONCE(mroce_payload_max);

	if (ndev_mtu < MROCE_WIRE_OVERHEAD + MROCE_MIN_PAYLOAD)
		return 0;
	room = min_t(u32, ndev_mtu - MROCE_WIRE_OVERHEAD, MROCE_MAX_PAYLOAD);
	if (cap)
		room = min_t(u32, room, max_t(u32, cap, MROCE_MIN_PAYLOAD));
	return room >= 1024 ? rounddown(room, 1024) : rounddown(room, 256);
}

/* The port is usable when the netdev is up, has carrier and a usable MTU. */
enum ib_port_state mroce_port_state(const struct net_device *ndev)
{
	if (netif_running(ndev) && netif_carrier_ok(ndev) &&
	    mroce_active_mtu(READ_ONCE(ndev->mtu)))
		return IB_PORT_ACTIVE;
	return IB_PORT_DOWN;
}

static ssize_t metaroce_abi_show(struct device *device,
				 struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", MROCE_ABI_VERSION);
}
static DEVICE_ATTR_RO(metaroce_abi);

static ssize_t netdev_show(struct device *device,
			   struct device_attribute *attr, char *buf)
{
	struct mroce_dev *mdev =
		rdma_device_to_drv_device(device, struct mroce_dev, ibdev);

	return sysfs_emit(buf, "%s\n", netdev_name(mdev->ndev));
}
static DEVICE_ATTR_RO(netdev);

static struct attribute *mroce_attrs[] = {
	&dev_attr_metaroce_abi.attr,
	&dev_attr_netdev.attr,
	NULL,
};

const struct attribute_group mroce_attr_group = {
	.attrs = mroce_attrs,
};

static int mroce_check_netdev(struct net_device *ndev)
{
	if (ndev->type != ARPHRD_ETHER || (ndev->flags & IFF_LOOPBACK)) {
		pr_info("refusing %s: not an Ethernet device\n", ndev->name);
		return -EINVAL;
	}
	/*
	 * ib_core's RoCE GID management already adds the addresses of VLAN
	 * uppers to the GID table of the device on the real netdev.
	 */
	if (is_vlan_dev(ndev)) {
		pr_info("refusing %s: VLAN device, use its real device\n",
			ndev->name);
		return -EINVAL;
	}
	return 0;
}

static void mroce_init_ibdev(struct mroce_dev *mdev)
{
	struct ib_device *ibdev = &mdev->ibdev;

	ibdev->node_type = RDMA_NODE_IB_CA;
	ibdev->phys_port_cnt = 1;
	ibdev->num_comp_vectors = 1;
	strscpy(ibdev->node_desc, "metaroce", sizeof(ibdev->node_desc));
	addrconf_addr_eui48((u8 *)&ibdev->node_guid, mdev->ndev->dev_addr);
	/* The doorbell and CQ arming are the only data-path system calls. */
	ibdev->uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POST_SEND) |
				  BIT_ULL(IB_USER_VERBS_CMD_REQ_NOTIFY_CQ);
	ib_set_device_ops(ibdev, &mroce_dev_ops);
}

static void mroce_init_state(struct mroce_dev *mdev)
{
	xa_init_flags(&mdev->qpns, XA_FLAGS_ALLOC);
	xa_init_flags(&mdev->mrs, XA_FLAGS_ALLOC1);
	mdev->qpn_next = MROCE_QPN_MIN;
	atomic_set(&mdev->mr_tag, get_random_u32());
	mroce_peers_init(mdev);
	mroce_share_setup(mdev);
	mroce_bucket_init(&mdev->reset_tb, MROCE_RESET_RATE,
			  MROCE_RESET_BURST);
	mroce_bucket_init(&mdev->challenge_tb, MROCE_CHALLENGE_RATE,
			  MROCE_CHALLENGE_BURST);
}

/* Not under RTNL: ib_unregister_device() may wait for RTNL users. */
static void mroce_unreg_work(struct work_struct *work)
{
	struct mroce_dev *mdev = container_of(work, struct mroce_dev,
					      unreg_work);

	/* The reference mroce_queue_unregister() took. */
	mroce_unregister_put(mdev);
}

/*
 * Queue the unregistration of a registered device (once: the caller sees
 * !unregistering).  Unconditionally: if ib_core is unregistering it already
 * (rdma link delete), the queued ib_unregister_device() waits for that and
 * does nothing; if ib_core has it disabled only for a while (moving it to
 * another rdma netns), it waits for that and then unregisters it.  The
 * device reference keeps the work item's memory.
 */
static void mroce_queue_unregister(struct mroce_dev *mdev)
{
	lockdep_assert_held(&mroce_devs_lock);
	mdev->unregistering = true;
	get_device(&mdev->ibdev.dev);
	queue_work(mroce_unreg_wq, &mdev->unreg_work);
}

/*
 * Called by ib_core's nldev_newlink() with a reference on @ndev, looked up in
 * the caller's network namespace, and not under RTNL.
 */
int mroce_newlink(const char *ibdev_name, struct net_device *ndev)
{
	struct ib_device *other;
	struct mroce_dev *mdev;
	bool held;
	int err;

	err = mroce_check_netdev(ndev);
	if (err)
		return err;

	/* ib_core reports a taken name as -ENFILE; say what it is. */
	other = ib_device_get_by_name(ibdev_name, RDMA_DRIVER_UNKNOWN);
	if (other) {
		ib_device_put(other);
		return -EEXIST;
	}

	mroce_reap_all();

	/* the fair share's state follows the device, in the same allocation */
	BUILD_BUG_ON(offsetof(struct mroce_dev, ibdev));
	mdev = container_of(_ib_alloc_device(sizeof(*mdev) + mroce_share_size()),
			    struct mroce_dev, ibdev);
	if (!mdev)
		return -ENOMEM;
	mdev->share = (struct mroce_share *)(mdev + 1);
	INIT_LIST_HEAD(&mdev->list);
	INIT_LIST_HEAD(&mdev->net_node);
	INIT_WORK(&mdev->unreg_work, mroce_unreg_work);
	netdev_hold(ndev, &mdev->ndev_tracker, GFP_KERNEL);
	mdev->ndev = ndev;
	mroce_init_ibdev(mdev);
	mroce_init_state(mdev);

	mutex_lock(&mroce_devs_lock);
	if (mroce_find_by_ndev(ndev)) {
		mutex_unlock(&mroce_devs_lock);
		err = -EEXIST;
		goto err_dealloc;
	}
	get_device(&mdev->ibdev.dev);	/* the registry's: mroce_reap_all() */
	list_add_tail(&mdev->list, &mroce_devs);
	mutex_unlock(&mroce_devs_lock);

	err = mroce_net_attach(mdev);
	if (err)
		goto err_dealloc;

	err = ib_device_set_netdev(&mdev->ibdev, ndev, 1);
	if (err)
		goto err_dealloc;

	/*
	 * Once registered, "rdma link delete" may free the device at any
	 * time; pin the memory until we are done looking at it.
	 */
	get_device(&mdev->ibdev.dev);
	err = ib_register_device(&mdev->ibdev, ibdev_name, NULL);
	if (err) {
		put_device(&mdev->ibdev.dev);
		if (err == -ENFILE)
			err = -EEXIST;
		goto err_dealloc;
	}

	/*
	 * Under RTNL the netdev cannot start unregistering behind our back.
	 * Holding the device keeps a concurrent rdma link delete (or netns
	 * exit) in ib_core's disable_device() until we are done here, so its
	 * mroce_dealloc_driver() comes after, and undoes, what we add.  A
	 * failed try_get: a teardown began (gone: it ended), or ib_core has
	 * the device disabled for a moment; -ENODEV then always means that
	 * the device goes.  An entry leaves the registry only when gone.
	 */
	rtnl_lock();
	mutex_lock(&mroce_devs_lock);
	held = !mdev->gone && ib_device_try_get(&mdev->ibdev);
	if (held) {
		mdev->registered = true;
		mdev->port_state = mroce_port_state(ndev);
		mroce_share_set_capacity(mdev);
	}
	if (!held || mdev->unregistering ||
	    ndev->reg_state != NETREG_REGISTERED) {
		/* Or the netdev went away while we were registering. */
		if (!mdev->gone)
			mroce_queue_unregister(mdev);
		err = -ENODEV;
	}
	mutex_unlock(&mroce_devs_lock);
	rtnl_unlock();
	if (!err) {
		mroce_debugfs_add(mdev);
		ibdev_info(&mdev->ibdev, "created on %s (netns inode %u)\n",
			   netdev_name(ndev), dev_net(ndev)->ns.inum);
	}
	if (held)
		ib_device_put(&mdev->ibdev);
	put_device(&mdev->ibdev.dev);
	return err;

err_dealloc:
	ib_dealloc_device(&mdev->ibdev);	/* calls mroce_dealloc_driver() */
	return err;
}

/*
 * Every QP, CQ, MR and SRQ is gone by now (ib_core destroyed them, user
 * contexts included).  Stop the receive path, say CLOSE to every peer and
 * free them, then leave the netns socket.
 */
void mroce_dealloc_driver(struct ib_device *ibdev)
{
	struct mroce_dev *mdev = to_mdev(ibdev);

	mroce_debugfs_del(mdev);
	WRITE_ONCE(mdev->dying, true);
	synchronize_rcu();
	mroce_peers_destroy(mdev);
	mroce_share_stop(mdev);
	mroce_net_detach(mdev);
	WARN_ON(!xa_empty(&mdev->qpns) || !xa_empty(&mdev->mrs));
	xa_destroy(&mdev->qpns);
	xa_destroy(&mdev->mrs);

	/* Unlisted: newlink failed before it listed the device. */
	mutex_lock(&mroce_devs_lock);
	if (!list_empty(&mdev->list))
		mdev->gone = true;
	mutex_unlock(&mroce_devs_lock);

	netdev_put(mdev->ndev, &mdev->ndev_tracker);
	mdev->ndev = NULL;
}

/*
 * Synchronously unregister every device attached to @mnet (all devices when
 * NULL), and reap every gone entry: when this returns for NULL, no thread is
 * in mroce_dealloc_driver() any more.  ib_unregister_device() serialises
 * with any unregistration already running, so when it returns
 * mroce_dealloc_driver() has run and the entry is gone.
 */
void mroce_unregister_devices(struct mroce_net *mnet)
{
	struct mroce_dev *mdev, *it, *last = NULL;

	for (;;) {
		mutex_lock(&mroce_devs_lock);
		mdev = mroce_unlink_gone();
		if (mdev) {
			mutex_unlock(&mroce_devs_lock);
			mroce_unregister_put(mdev);
			continue;
		}
		list_for_each_entry(it, &mroce_devs, list) {
			if (!mnet || it->mnet == mnet) {
				mdev = it;
				get_device(&mdev->ibdev.dev);
				break;
			}
		}
		mutex_unlock(&mroce_devs_lock);
		if (!mdev)
			return;
		/* Still listed after an unregister: newlink is mid-way. */
		if (mdev == last)
			msleep(20);
		mroce_unregister_put(mdev);
		last = mdev;
	}
}

/* Under RTNL. */
static void mroce_ndev_unregister(struct net_device *ndev)
{
	struct mroce_dev *mdev;

	ASSERT_RTNL();
	mutex_lock(&mroce_devs_lock);
	mdev = mroce_find_by_ndev(ndev);
	if (mdev && !mdev->unregistering) {
		if (mdev->registered)
			mroce_queue_unregister(mdev);
		else
			mdev->unregistering = true;	/* newlink acts on it */
	}
	mutex_unlock(&mroce_devs_lock);
}

/* Under RTNL: carrier, admin state or MTU changed. */
static void mroce_ndev_changed(struct net_device *ndev, unsigned long event)
{
	struct mroce_dev *mdev;
	enum ib_port_state state;
	struct ib_event ev = {};

	ASSERT_RTNL();
	mutex_lock(&mroce_devs_lock);
	mdev = mroce_find_by_ndev(ndev);
	if (!mdev || !mdev->registered || mdev->unregistering)
		goto out;
	/*
	 * rdma link delete, rmmod and netns exit do not set unregistering:
	 * without a reference the port event could be queued after ib_core's
	 * last flush, or the share timer armed after mroce_share_stop().
	 */
	if (!ib_device_try_get(&mdev->ibdev))
		goto out;
	mroce_share_set_capacity(mdev);
	if (event == NETDEV_CHANGEMTU)
		mroce_peers_link_mtu(mdev, READ_ONCE(ndev->mtu));
	state = mroce_port_state(ndev);
	if (state == mdev->port_state)
		goto put;
	mdev->port_state = state;
	ev.device = &mdev->ibdev;
	ev.element.port_num = 1;
	ev.event = state == IB_PORT_ACTIVE ? IB_EVENT_PORT_ACTIVE :
					     IB_EVENT_PORT_ERR;
	ib_dispatch_event(&ev);
put:
	ib_device_put(&mdev->ibdev);
out:
	mutex_unlock(&mroce_devs_lock);
}

static int mroce_netdev_event(struct notifier_block *nb, unsigned long event,
			      void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);

	switch (event) {
	case NETDEV_UNREGISTER:
		mroce_ndev_unregister(ndev);
		break;
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
	case NETDEV_CHANGEMTU:
		mroce_ndev_changed(ndev, event);
		break;
	default:
		break;
	}
	return NOTIFY_DONE;
}

static struct notifier_block mroce_netdev_nb = {
	.notifier_call = mroce_netdev_event,
};

int mroce_notifier_register(void)
{
	int err;

	mroce_unreg_wq = alloc_workqueue("metaroce_unreg", 0, 0);
	if (!mroce_unreg_wq)
		return -ENOMEM;
	err = register_netdevice_notifier(&mroce_netdev_nb);
	if (err)
		destroy_workqueue(mroce_unreg_wq);
	return err;
}

/*
 * After mroce_unregister_devices(NULL): the registry is empty and newlink is
 * fenced, so nothing queues any more; the queue drains before it goes.
 */
void mroce_notifier_unregister(void)
{
	unregister_netdevice_notifier(&mroce_netdev_nb);
	destroy_workqueue(mroce_unreg_wq);
}
