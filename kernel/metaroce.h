/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Internal structures of metaroce.ko (the verbs/netdev glue around the
 * portable protocol core in kernel/core/).
 */
#ifndef MROCE_METAROCE_H
#define MROCE_METAROCE_H

#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/netdevice.h>
#include <rdma/ib_verbs.h>

#include "metaroce-abi.h"

/*
 * Encoded as major << 32 | minor << 16 | sub_minor, the format the provider
 * and the sysfs fw_ver file print.
 */
#define MROCE_FW_VER ((0ULL << 32) | (1ULL << 16) | 0ULL)

/*
 * Per-packet overhead the netdev MTU must leave room for: the larger IP
 * header (IPv6, 40), UDP (8) and a budget of 64 bytes for the MetaRoCE
 * transport header.  The rest, rounded down to an IB MTU, is the path MTU.
 */
#define MROCE_HDR_BUDGET	64
#define MROCE_WIRE_OVERHEAD	(40 + 8 + MROCE_HDR_BUDGET)

#define MROCE_GID_TBL_LEN	128

/*
 * Device limits reported by query_device.  Each one is the limit the driver
 * enforces when the object is created: PDs now, the others in the datapath
 * issue that adds the objects.  Object types with a limit of zero (SRQ, MW,
 * XRC, multicast) are not part of the design yet.
 */
#define MROCE_MAX_PD		65536
#define MROCE_MAX_QP		16384
#define MROCE_MAX_QP_WR		16384
#define MROCE_MAX_SGE		16
#define MROCE_MAX_CQ		16384
#define MROCE_MAX_CQE		65535
#define MROCE_MAX_MR		65536
#define MROCE_MAX_MR_SIZE	BIT_ULL(40)
#define MROCE_MAX_AH		65536
#define MROCE_MAX_RD_ATOM	16
#define MROCE_MAX_MSG_SIZE	BIT(31)

struct mroce_net;

struct mroce_dev {
	struct ib_device ibdev;		/* first: ib_alloc_device() requires it */
	struct net_device *ndev;	/* held (ndev_tracker) until dealloc */
	netdevice_tracker ndev_tracker;

	/* Driver registry (device.c), under mroce_devs_lock. */
	struct list_head list;
	bool registered;		/* ib_register_device() succeeded */
	bool unregistering;		/* an unregistration was started */

	/* Per-netns transport socket (net.c). */
	struct mroce_net *mnet;		/* NULL when not attached */
	struct list_head net_node;	/* mnet->devs, RCU for the rx path */

	enum ib_port_state port_state;	/* last state reported, under RTNL */
	atomic_t num_pds;
	atomic64_t rx_no_datapath;	/* datagrams received and dropped */
};

struct mroce_ucontext {
	struct ib_ucontext ibuc;
};

struct mroce_pd {
	struct ib_pd ibpd;
};

static inline struct mroce_dev *to_mdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct mroce_dev, ibdev);
}

extern unsigned short mroce_udp_port;

/* device.c */
int mroce_newlink(const char *ibdev_name, struct net_device *ndev);
void mroce_dealloc_driver(struct ib_device *ibdev);
void mroce_unregister_devices(struct mroce_net *mnet);
enum ib_port_state mroce_port_state(const struct net_device *ndev);
enum ib_mtu mroce_active_mtu(unsigned int ndev_mtu);
int mroce_notifier_register(void);
void mroce_notifier_unregister(void);
extern const struct attribute_group mroce_attr_group;

/* verbs.c */
extern const struct ib_device_ops mroce_dev_ops;

/* net.c */
int mroce_net_attach(struct mroce_dev *mdev);
void mroce_net_detach(struct mroce_dev *mdev);
int mroce_net_register(void);
void mroce_net_unregister(void);

/* stats.c */
struct rdma_hw_stats *mroce_alloc_hw_device_stats(struct ib_device *ibdev);
int mroce_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		       u32 port, int index);

#endif /* MROCE_METAROCE_H */
