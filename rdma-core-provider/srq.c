// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Shared receive queues: a ring of receives like a QP's RQ; the kernel
 * consumes an entry when a message claims it.
 */
#include <errno.h>
#include <stdlib.h>

#include "mroce.h"

struct mroce_create_srq_cmd {
	struct ibv_create_srq ibv;
};

struct mroce_create_srq_resp_all {
	struct ib_uverbs_create_srq_resp ibv;
	struct mroce_create_srq_resp drv;
};

_Static_assert(offsetof(struct mroce_create_srq_resp_all, drv) ==
		       sizeof(struct ib_uverbs_create_srq_resp),
	       "driver payload must follow the core response");

struct ibv_srq *mroce_create_srq(struct ibv_pd *pd,
				 struct ibv_srq_init_attr *attr)
{
	struct mroce_create_srq_resp_all resp = {};
	struct mroce_create_srq_cmd cmd = {};
	struct mroce_srq *srq;
	uint32_t min_stride;
	int ret;

	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return NULL;
	ret = ibv_cmd_create_srq(pd, &srq->vsrq.srq, attr, &cmd.ibv,
				 sizeof(cmd), &resp.ibv, sizeof(resp));
	if (ret)
		goto err_free;
	srq->max_sge = attr->attr.max_sge;
	min_stride = sizeof(struct mroce_rqe) +
		     srq->max_sge * sizeof(struct mroce_sge);
	if (resp.drv.entries < attr->attr.max_wr)
		ret = EPROTO;
	else
		ret = mroce_ring_map(&srq->ring, pd->context->cmd_fd,
				     &resp.drv.ring, resp.drv.entries,
				     resp.drv.stride, min_stride);
	if (ret)
		goto err_destroy;
	pthread_spin_init(&srq->lock, PTHREAD_PROCESS_PRIVATE);
	return &srq->vsrq.srq;

err_destroy:
	ibv_cmd_destroy_srq(&srq->vsrq.srq);
err_free:
	free(srq);
	errno = ret;
	return NULL;
}

int mroce_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr,
		     int attr_mask)
{
	struct ibv_modify_srq cmd;

	/* The ring cannot grow: resizing is not supported. */
	if (attr_mask & IBV_SRQ_MAX_WR)
		return EOPNOTSUPP;
	return ibv_cmd_modify_srq(srq, attr, attr_mask, &cmd, sizeof(cmd));
}

int mroce_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr)
{
	struct ibv_query_srq cmd;

	return ibv_cmd_query_srq(srq, attr, &cmd, sizeof(cmd));
}

int mroce_destroy_srq(struct ibv_srq *ibsrq)
{
	struct mroce_srq *srq = to_msrq(ibsrq);
	int ret;

	ret = ibv_cmd_destroy_srq(ibsrq);
	if (ret)
		return ret;
	mroce_ring_unmap(&srq->ring);
	pthread_spin_destroy(&srq->lock);
	free(srq);
	return 0;
}

int mroce_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad_wr)
{
	struct mroce_srq *srq = to_msrq(ibsrq);

	return mroce_post_rqes(&srq->ring, &srq->lock, srq->max_sge, wr,
			       bad_wr);
}
