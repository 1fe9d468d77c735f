// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libmetaroce-rdmav34.so: the rdma-core provider for MetaRoCE devices.
 *
 * Devices are claimed by the sysfs attribute metaroce_abi (any ibdev name
 * works), never by name or driver id: the kernel uses RDMA_DRIVER_UNKNOWN.
 * The datapath verbs live in their own files (cq.c, cq_ex.c, qp.c, post.c,
 * qp_ex.c, srq.c, mr.c, ah.c); verbs not in the table below are left to libibverbs'
 * defaults, which fail with EOPNOTSUPP.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mroce.h"

struct mroce_device {
	struct verbs_device vdev;
};

struct mroce_get_context_cmd {
	struct ibv_get_context ibv;
	struct mroce_alloc_ucontext_req drv;
};

struct mroce_get_context_resp {
	struct ib_uverbs_get_context_resp ibv;
	struct mroce_alloc_ucontext_resp drv;
};

_Static_assert(offsetof(struct mroce_get_context_cmd, drv) ==
		       sizeof(struct ibv_get_context),
	       "driver payload must follow the core command");
_Static_assert(offsetof(struct mroce_get_context_resp, drv) ==
		       sizeof(struct ib_uverbs_get_context_resp),
	       "driver payload must follow the core response");

static int mroce_query_device_ex(struct ibv_context *context,
				 const struct ibv_query_device_ex_input *input,
				 struct ibv_device_attr_ex *attr,
				 size_t attr_size)
{
	struct ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);
	uint64_t fw;
	int ret;

	ret = ibv_cmd_query_device_any(context, input, attr, attr_size, &resp,
				       &resp_size);
	if (ret)
		return ret;

	/* The kernel encodes fw_ver as major << 32 | minor << 16 | sub. */
	fw = resp.base.fw_ver;
	snprintf(attr->orig_attr.fw_ver, sizeof(attr->orig_attr.fw_ver),
		 "%u.%u.%u", (unsigned int)(fw >> 32) & 0xffff,
		 (unsigned int)(fw >> 16) & 0xffff, (unsigned int)fw & 0xffff);
	return 0;
}

static int mroce_query_port(struct ibv_context *context, uint8_t port,
			    struct ibv_port_attr *attr)
{
	struct ibv_query_port cmd;

	return ibv_cmd_query_port(context, port, attr, &cmd, sizeof(cmd));
}

static struct ibv_pd *mroce_alloc_pd(struct ibv_context *context)
{
	struct ib_uverbs_alloc_pd_resp resp;
	struct ibv_alloc_pd cmd;
	struct ibv_pd *pd;
	int ret;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;
	ret = ibv_cmd_alloc_pd(context, pd, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (ret) {
		free(pd);
		errno = ret;
		return NULL;
	}
	return pd;
}

static int mroce_dealloc_pd(struct ibv_pd *pd)
{
	int ret;

	ret = ibv_cmd_dealloc_pd(pd);
	if (ret)
		return ret;
	free(pd);
	return 0;
}

static void mroce_free_context(struct ibv_context *ibctx)
{
	struct mroce_context *ctx = to_mctx(ibctx);

	verbs_uninit_context(&ctx->ibv_ctx);
	free(ctx);
}

static const struct verbs_context_ops mroce_ctx_ops = {
	.alloc_pd = mroce_alloc_pd,
	.create_ah = mroce_create_ah,
	.create_cq = mroce_create_cq,
	.create_cq_ex = mroce_create_cq_ex,
	.create_qp = mroce_create_qp,
	.create_qp_ex = mroce_create_qp_ex,
	.create_srq = mroce_create_srq,
	.dealloc_pd = mroce_dealloc_pd,
	.dereg_mr = mroce_dereg_mr,
	.destroy_ah = mroce_destroy_ah,
	.destroy_cq = mroce_destroy_cq,
	.destroy_qp = mroce_destroy_qp,
	.destroy_srq = mroce_destroy_srq,
	.free_context = mroce_free_context,
	.modify_qp = mroce_modify_qp,
	.modify_srq = mroce_modify_srq,
	.poll_cq = mroce_poll_cq,
	.post_recv = mroce_post_recv,
	.post_send = mroce_post_send,
	.post_srq_recv = mroce_post_srq_recv,
	.query_device_ex = mroce_query_device_ex,
	.query_port = mroce_query_port,
	.query_qp = mroce_query_qp,
	.query_srq = mroce_query_srq,
	.reg_mr = mroce_reg_mr,
	.req_notify_cq = mroce_req_notify_cq,
};

static struct verbs_context *mroce_alloc_context(struct ibv_device *ibdev,
						 int cmd_fd,
						 void *private_data)
{
	struct mroce_get_context_resp resp = {};
	struct mroce_get_context_cmd cmd = {};
	struct mroce_context *ctx;
	int ret;

	/* The offset argument is the position of the verbs_context in ctx. */
	ctx = _verbs_init_and_alloc_context(
		ibdev, cmd_fd, sizeof(*ctx),
		(struct verbs_context *)offsetof(struct mroce_context, ibv_ctx),
		RDMA_DRIVER_UNKNOWN);
	if (!ctx)
		return NULL;

	cmd.drv.abi_version = MROCE_ABI_VERSION;
	ret = ibv_cmd_get_context(&ctx->ibv_ctx, &cmd.ibv, sizeof(cmd),
				  &resp.ibv, sizeof(resp));
	if (ret) {
		errno = ret;
		goto err;
	}
	if (resp.drv.abi_version != MROCE_ABI_VERSION) {
		errno = EPROTO;
		goto err;
	}
	ctx->udp_port = resp.drv.udp_port;
	verbs_set_ops(&ctx->ibv_ctx, &mroce_ctx_ops);
	return &ctx->ibv_ctx;

err:
	ret = errno;
	verbs_uninit_context(&ctx->ibv_ctx);
	free(ctx);
	errno = ret;
	return NULL;
}

/* Claim exactly the devices whose kernel driver speaks our ABI. */
static bool mroce_match_device(struct verbs_sysfs_dev *sysfs_dev)
{
	char buf[16], *end;
	unsigned long abi;
	int len;

	len = ibv_read_ibdev_sysfs_file(buf, sizeof(buf), sysfs_dev,
					MROCE_SYSFS_ABI_ATTR);
	if (len <= 0)
		return false;
	errno = 0;
	abi = strtoul(buf, &end, 10);
	if (errno || end == buf || *end)
		return false;
	if (abi != MROCE_ABI_VERSION) {
		fprintf(stderr,
			"libmetaroce: %s: kernel ABI %lu, provider ABI %u; device ignored (install matching metaroce.ko and provider)\n",
			sysfs_dev->ibdev_name, abi, MROCE_ABI_VERSION);
		return false;
	}
	return true;
}

static struct verbs_device *
mroce_alloc_device(struct verbs_sysfs_dev *sysfs_dev)
{
	struct mroce_device *dev = calloc(1, sizeof(*dev));

	return dev ? &dev->vdev : NULL;
}

static void mroce_uninit_device(struct verbs_device *vdev)
{
	free((struct mroce_device *)vdev);	/* vdev is the first member */
}

/*
 * No entries, but not NULL: libibverbs walks every provider's table for a
 * device with a known driver_id (rxe, for one) without checking for NULL.
 */
static const struct verbs_match_ent mroce_match_table[] = {
	{ .kind = VERBS_MATCH_SENTINEL },
};

static const struct verbs_device_ops mroce_dev_ops = {
	.name = "metaroce",
	.match_min_abi_version = MROCE_ABI_VERSION,
	.match_max_abi_version = MROCE_ABI_VERSION,
	.match_table = mroce_match_table,
	.match_device = mroce_match_device,
	.alloc_context = mroce_alloc_context,
	.alloc_device = mroce_alloc_device,
	.uninit_device = mroce_uninit_device,
};

__attribute__((constructor)) static void mroce_register_driver(void)
{
	verbs_register_driver_34(&mroce_dev_ops);
}
