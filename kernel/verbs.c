// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ib_device_ops of a MetaRoCE device: device and port queries, user
 * contexts and protection domains here; the objects of the datapath in
 * their own files (cq.c, mr.c, qp.c, srq.c, ah.c, sq.c, rq.c, ring.c).
 * Every op of ib_core's kverbs gate is present, so kernel clients attach;
 * only RC QPs exist so far (UD and GSI QPs fail with -EOPNOTSUPP).
 */
#include <rdma/ib_mad.h>

#include "metaroce.h"

static int mroce_query_device(struct ib_device *ibdev,
			      struct ib_device_attr *attr,
			      struct ib_udata *udata)
{
	/* There is no driver-specific query_device input. */
	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;

	memset(attr, 0, sizeof(*attr));
	attr->fw_ver = MROCE_FW_VER;
	attr->sys_image_guid = ibdev->node_guid;
	attr->max_mr_size = MROCE_MAX_MR_SIZE;
	attr->page_size_cap = GENMASK_ULL(63, PAGE_SHIFT);
	attr->vendor_id = 0;
	attr->vendor_part_id = 0;
	attr->hw_ver = 0;
	attr->max_qp = MROCE_MAX_QP;
	attr->max_qp_wr = MROCE_MAX_QP_WR;
	attr->max_send_sge = MROCE_MAX_SGE;
	attr->max_recv_sge = MROCE_MAX_SGE;
	attr->max_sge_rd = MROCE_MAX_SGE;
	attr->max_cq = MROCE_MAX_CQ;
	attr->max_cqe = MROCE_MAX_CQE;
	attr->max_mr = MROCE_MAX_MR;
	attr->max_pd = MROCE_MAX_PD;
	attr->max_qp_rd_atom = MROCE_MAX_RD_ATOM;
	attr->max_qp_init_rd_atom = MROCE_MAX_RD_ATOM;
	attr->max_res_rd_atom = MROCE_MAX_RD_ATOM * MROCE_MAX_QP;
	/* CPU atomics on the target word (ops.c): atomic among our own. */
	attr->atomic_cap = IB_ATOMIC_HCA;
	attr->max_ah = MROCE_MAX_AH;
	attr->max_srq = MROCE_MAX_SRQ;
	attr->max_srq_wr = MROCE_MAX_SRQ_WR;
	attr->max_srq_sge = MROCE_MAX_SGE;
	/*
	 * mroce_ndev_changed() dispatches IB_EVENT_PORT_ACTIVE; RNR NAKs are
	 * generated; an SQD transition drains and reports SQ_DRAINED.
	 */
	attr->device_cap_flags = IB_DEVICE_PORT_ACTIVE_EVENT |
				 IB_DEVICE_RC_RNR_NAK_GEN;
	attr->max_pkeys = 1;
	attr->local_ca_ack_delay = 15;
	attr->kernel_cap_flags = IBK_ALLOW_USER_UNREG;
	return 0;
}

static void mroce_get_dev_fw_str(struct ib_device *ibdev, char *str)
{
	snprintf(str, IB_FW_VERSION_NAME_MAX, "%llu.%llu.%llu",
		 MROCE_FW_VER >> 32, (MROCE_FW_VER >> 16) & 0xffff,
		 MROCE_FW_VER & 0xffff);
}

static int mroce_query_port(struct ib_device *ibdev, u32 port,
			    struct ib_port_attr *attr)
{
	struct net_device *ndev = to_mdev(ibdev)->ndev;
	enum ib_mtu mtu = mroce_active_mtu(READ_ONCE(ndev->mtu));

	attr->state = mroce_port_state(ndev);
	if (!netif_running(ndev))
		attr->phys_state = IB_PORT_PHYS_STATE_DISABLED;
	else if (!netif_carrier_ok(ndev))
		attr->phys_state = IB_PORT_PHYS_STATE_POLLING;
	else
		attr->phys_state = IB_PORT_PHYS_STATE_LINK_UP;
	attr->max_mtu = IB_MTU_4096;
	attr->active_mtu = mtu ? mtu : IB_MTU_256;
	attr->phys_mtu = ib_mtu_enum_to_int(IB_MTU_4096);
	attr->gid_tbl_len = MROCE_GID_TBL_LEN;
	attr->pkey_tbl_len = 1;
	attr->max_msg_sz = MROCE_MAX_MSG_SIZE;
	attr->max_vl_num = 1;
	/*
	 * Takes RTNL: never call query_port from the netdev notifier.  It
	 * fails only once ib_core has let go of a netdev that is being
	 * unregistered; the port is down then, not the query.
	 */
	if (ib_get_eth_speed(ibdev, port, &attr->active_speed,
			     &attr->active_width)) {
		attr->state = IB_PORT_DOWN;
		attr->phys_state = IB_PORT_PHYS_STATE_DISABLED;
		attr->active_speed = IB_SPEED_SDR;
		attr->active_width = IB_WIDTH_1X;
	}
	return 0;
}

static int mroce_get_port_immutable(struct ib_device *ibdev, u32 port,
				    struct ib_port_immutable *immutable)
{
	/*
	 * RoCEv2-style addressing (GIDs from the netdev's IP addresses,
	 * Ethernet AHs), but no MAD or CM capability until QP1 exists: with
	 * them, ib_mad and ib_cm try to create QP1 on every new device and
	 * log errors when it is refused.
	 */
	immutable->core_cap_flags = RDMA_CORE_CAP_PROT_ROCE_UDP_ENCAP |
				    RDMA_CORE_CAP_ETH_AH;
	immutable->pkey_tbl_len = 1;
	immutable->gid_tbl_len = MROCE_GID_TBL_LEN;
	immutable->max_mad_size = 0;
	return 0;
}

static enum rdma_link_layer mroce_get_link_layer(struct ib_device *ibdev,
						 u32 port)
{
	return IB_LINK_LAYER_ETHERNET;
}

static int mroce_query_pkey(struct ib_device *ibdev, u32 port, u16 index,
			    u16 *pkey)
{
	if (index)
		return -EINVAL;
	*pkey = IB_DEFAULT_PKEY_FULL;
	return 0;
}

static int mroce_alloc_ucontext(struct ib_ucontext *uctx,
				struct ib_udata *udata)
{
	struct mroce_alloc_ucontext_resp resp = {};
	struct mroce_alloc_ucontext_req req;

	if (udata->inlen < sizeof(req) || udata->outlen < sizeof(resp))
		return -EINVAL;
	if (ib_copy_from_udata(&req, udata, sizeof(req)))
		return -EFAULT;
	if (req.reserved)
		return -EINVAL;
	if (udata->inlen > sizeof(req) &&
	    !ib_is_udata_cleared(udata, sizeof(req), udata->inlen - sizeof(req)))
		return -EINVAL;
	if (req.abi_version != MROCE_ABI_VERSION) {
		ibdev_warn_ratelimited(uctx->device,
				       "provider ABI %u, kernel ABI %u\n",
				       req.abi_version, MROCE_ABI_VERSION);
		return -EPROTO;
	}

	resp.abi_version = MROCE_ABI_VERSION;
	resp.udp_port = mroce_udp_port;
	return ib_copy_to_udata(udata, &resp, sizeof(resp));
}

static void mroce_dealloc_ucontext(struct ib_ucontext *uctx)
{
}

/*
 * Having this op lets ib_uverbs detach running applications when the device
 * goes away (they get IB_EVENT_DEVICE_FATAL, then EIO) instead of blocking
 * rdma link delete, netdev removal and rmmod until they exit.  ib_core
 * destroys their objects; a ring an application still maps keeps its pages
 * (they hold page references) until it unmaps them, and the kernel no
 * longer reads or writes them.
 */
static void mroce_disassociate_ucontext(struct ib_ucontext *uctx)
{
}

static int mroce_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct mroce_dev *mdev = to_mdev(ibpd->device);

	if (atomic_inc_return(&mdev->num_pds) > MROCE_MAX_PD) {
		atomic_dec(&mdev->num_pds);
		return -ENOMEM;
	}
	return 0;
}

static int mroce_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	atomic_dec(&to_mdev(ibpd->device)->num_pds);
	return 0;
}

const struct ib_device_ops mroce_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.uverbs_abi_ver = MROCE_ABI_VERSION,

	.alloc_hw_device_stats = mroce_alloc_hw_device_stats,
	.alloc_pd = mroce_alloc_pd,
	.alloc_ucontext = mroce_alloc_ucontext,
	.create_ah = mroce_create_ah,
	.create_cq = mroce_create_cq,
	.create_qp = mroce_create_qp,
	.create_srq = mroce_create_srq,
	.dealloc_driver = mroce_dealloc_driver,
	.dealloc_pd = mroce_dealloc_pd,
	.dealloc_ucontext = mroce_dealloc_ucontext,
	.dereg_mr = mroce_dereg_mr,
	.destroy_ah = mroce_destroy_ah,
	.destroy_cq = mroce_destroy_cq,
	.destroy_qp = mroce_destroy_qp,
	.destroy_srq = mroce_destroy_srq,
	.device_group = &mroce_attr_group,
	.disassociate_ucontext = mroce_disassociate_ucontext,
	.get_dev_fw_str = mroce_get_dev_fw_str,
	.get_dma_mr = mroce_get_dma_mr,
	.get_hw_stats = mroce_get_hw_stats,
	.get_link_layer = mroce_get_link_layer,
	.get_port_immutable = mroce_get_port_immutable,
	.mmap = mroce_mmap,
	.mmap_free = mroce_mmap_free,
	.modify_qp = mroce_modify_qp,
	.modify_srq = mroce_modify_srq,
	.poll_cq = mroce_poll_cq,
	.post_recv = mroce_post_recv,
	.post_send = mroce_post_send,
	.post_srq_recv = mroce_post_srq_recv,
	.pre_destroy_cq = mroce_pre_destroy_cq,
	.query_device = mroce_query_device,
	.query_pkey = mroce_query_pkey,
	.query_port = mroce_query_port,
	.query_qp = mroce_query_qp,
	.query_srq = mroce_query_srq,
	.reg_user_mr = mroce_reg_user_mr,
	.req_notify_cq = mroce_req_notify_cq,

	INIT_RDMA_OBJ_SIZE(ib_ah, mroce_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, mroce_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_pd, mroce_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, mroce_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_srq, mroce_srq, ibsrq),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, mroce_ucontext, ibuc),
};
