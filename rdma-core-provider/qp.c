// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Queue pairs: created, modified and destroyed by system calls; the send
 * and receive queues are rings mapped here (post.c writes them).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mroce.h"

struct mroce_create_qp_cmd {
	struct ibv_create_qp ibv;
};

struct mroce_create_qp_resp_all {
	struct ib_uverbs_create_qp_resp ibv;
	struct mroce_create_qp_resp drv;
};

_Static_assert(offsetof(struct mroce_create_qp_resp_all, drv) ==
		       sizeof(struct ib_uverbs_create_qp_resp),
	       "driver payload must follow the core response");
_Static_assert(sizeof(struct mroce_sqe) == 64, "SQE header is 64 bytes");
_Static_assert(sizeof(struct mroce_rqe) == 16, "RQE header is 16 bytes");
_Static_assert(sizeof(struct mroce_sge) == 16, "SGE is 16 bytes");

static uint32_t max_u32(uint32_t a, uint32_t b)
{
	return a > b ? a : b;
}

/* Check the kernel's answer against what the QP needs, then map. */
static int mroce_qp_map(struct mroce_qp *qp, int cmd_fd,
			const struct mroce_create_qp_resp *r,
			const struct ibv_qp_cap *cap, bool has_srq)
{
	uint32_t sq_min, rq_min;
	int ret;

	qp->max_send_sge = cap->max_send_sge;
	qp->max_recv_sge = cap->max_recv_sge;
	qp->max_inline = r->max_inline;

	if (!r->sq.size || r->sq_entries < cap->max_send_wr ||
	    r->max_inline < cap->max_inline_data)
		return EPROTO;
	sq_min = sizeof(struct mroce_sqe) +
		 max_u32(cap->max_send_sge * sizeof(struct mroce_sge),
			 r->max_inline);
	ret = mroce_ring_map(&qp->sq, cmd_fd, &r->sq, r->sq_entries,
			     r->sq_stride, sq_min);
	if (ret)
		return ret;

	rq_min = sizeof(struct mroce_rqe) +
		 cap->max_recv_sge * sizeof(struct mroce_sge);
	if (has_srq)
		ret = r->rq.size ? EPROTO : 0;	/* receives come from the SRQ */
	else if (r->rq_entries < cap->max_recv_wr)
		ret = EPROTO;
	else
		ret = mroce_ring_map(&qp->rq, cmd_fd, &r->rq, r->rq_entries,
				     r->rq_stride, rq_min);
	if (ret)
		mroce_ring_unmap(&qp->sq);
	return ret;
}

static struct mroce_qp *mroce_qp_create(struct ibv_context *context,
					struct ibv_qp_init_attr_ex *attr)
{
	struct mroce_create_qp_resp_all resp = {};
	struct mroce_create_qp_cmd cmd = {};
	struct mroce_qp *qp;
	int ret;

	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	ret = ibv_cmd_create_qp_ex(context, &qp->vqp, attr, &cmd.ibv,
				   sizeof(cmd), &resp.ibv, sizeof(resp));
	if (ret)
		goto err_free;
	ret = mroce_qp_map(qp, context->cmd_fd, &resp.drv, &attr->cap,
			   attr->srq != NULL);
	if (ret)
		goto err_destroy;
	attr->cap.max_inline_data = qp->max_inline;
	qp->sq_sig_all = attr->sq_sig_all;
	pthread_spin_init(&qp->sq_lock, PTHREAD_PROCESS_PRIVATE);
	pthread_spin_init(&qp->rq_lock, PTHREAD_PROCESS_PRIVATE);
	return qp;

err_destroy:
	ibv_cmd_destroy_qp(&qp->vqp.qp);
err_free:
	free(qp);
	errno = ret;
	return NULL;
}

struct ibv_qp *mroce_create_qp(struct ibv_pd *pd,
			       struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex ex = {
		.qp_context = attr->qp_context,
		.send_cq = attr->send_cq,
		.recv_cq = attr->recv_cq,
		.srq = attr->srq,
		.cap = attr->cap,
		.qp_type = attr->qp_type,
		.sq_sig_all = attr->sq_sig_all,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = pd,
	};
	struct mroce_qp *qp;

	qp = mroce_qp_create(pd->context, &ex);
	if (!qp)
		return NULL;
	attr->cap = ex.cap;
	return &qp->vqp.qp;
}

/*
 * The extended create: only what the ring QP implements.  Anything else
 * (XRC, TSO, RSS, creation flags, send ops we do not have) is refused.
 */
struct ibv_qp *mroce_create_qp_ex(struct ibv_context *context,
				  struct ibv_qp_init_attr_ex *attr)
{
	const uint32_t known = IBV_QP_INIT_ATTR_PD |
			       IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	struct mroce_qp *qp;

	if ((attr->comp_mask & ~known) || !(attr->comp_mask &
					     IBV_QP_INIT_ATTR_PD)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	    ((attr->send_ops_flags & ~(uint64_t)MROCE_SEND_OPS_FLAGS) ||
	     attr->qp_type != IBV_QPT_RC)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	qp = mroce_qp_create(context, attr);
	if (!qp)
		return NULL;
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
		mroce_qp_ex_init(qp);
	return &qp->vqp.qp;
}

int mroce_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		    int attr_mask)
{
	struct ibv_modify_qp cmd;

	return ibv_cmd_modify_qp(qp, attr, attr_mask, &cmd, sizeof(cmd));
}

int mroce_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		   int attr_mask, struct ibv_qp_init_attr *init_attr)
{
	struct mroce_qp *qp = to_mqp(ibqp);
	struct ibv_query_qp cmd;
	int ret;

	ret = ibv_cmd_query_qp(ibqp, attr, attr_mask, init_attr, &cmd,
			       sizeof(cmd));
	if (ret)
		return ret;
	attr->cap.max_inline_data = qp->max_inline;
	init_attr->cap.max_inline_data = qp->max_inline;
	return 0;
}

int mroce_destroy_qp(struct ibv_qp *ibqp)
{
	struct mroce_qp *qp = to_mqp(ibqp);
	int ret;

	ret = ibv_cmd_destroy_qp(ibqp);
	if (ret)
		return ret;
	mroce_ring_unmap(&qp->sq);
	mroce_ring_unmap(&qp->rq);
	pthread_spin_destroy(&qp->sq_lock);
	pthread_spin_destroy(&qp->rq_lock);
	free(qp);
	return 0;
}
