// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Extended CQs (ibv_create_cq_ex): the same ring as cq.c, polled with
 * ibv_start_poll / ibv_next_poll / ibv_end_poll.  start_poll takes the CQ
 * lock when it finds a CQE; end_poll publishes the consumer index once for
 * the whole batch and drops the lock.  Fields the transport does not
 * produce (timestamps, VLAN, flow tag, tag matching) are refused at
 * creation with EOPNOTSUPP.
 */
#include <errno.h>
#include <stdlib.h>

#include "mroce.h"

#define MROCE_WC_EX_FLAGS                                              \
	(IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM |                \
	 IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP |               \
	 IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL |                     \
	 IBV_WC_EX_WITH_DLID_PATH_BITS)

struct mroce_create_cq_ex_resp_all {
	struct ib_uverbs_ex_create_cq_resp ibv;
	struct mroce_create_cq_resp drv;
};

_Static_assert(offsetof(struct mroce_create_cq_ex_resp_all, drv) ==
		       sizeof(struct ib_uverbs_ex_create_cq_resp),
	       "driver payload must follow the core response");

static void mroce_ex_load(struct mroce_cq *cq)
{
	const struct mroce_cqe *e = mroce_slot(&cq->ring, cq->ex_cons);

	cq->ex_cur = e;
	cq->vcq.cq_ex.wr_id = e->wr_id;
	cq->vcq.cq_ex.status = e->status;
}

static int mroce_start_poll(struct ibv_cq_ex *ibcq,
			    struct ibv_poll_cq_attr *attr)
{
	struct mroce_cq *cq = cqex_to_mcq(ibcq);
	struct mroce_ring *hdr = cq->ring.hdr;

	if (attr->comp_mask)
		return EINVAL;
	pthread_spin_lock(&cq->lock);
	cq->ex_cons = mroce_load_relaxed(&hdr->cons);
	cq->ex_prod = mroce_load_acquire(&hdr->prod);
	if (cq->ex_prod - cq->ex_cons > cq->ring.num) {
		pthread_spin_unlock(&cq->lock);
		return EIO;
	}
	if (cq->ex_cons == cq->ex_prod) {
		pthread_spin_unlock(&cq->lock);
		return ENOENT;
	}
	mroce_ex_load(cq);
	return 0;
}

static int mroce_next_poll(struct ibv_cq_ex *ibcq)
{
	struct mroce_cq *cq = cqex_to_mcq(ibcq);

	if (cq->ex_cons + 1 == cq->ex_prod) {
		cq->ex_prod = mroce_load_acquire(&cq->ring.hdr->prod);
		if (cq->ex_cons + 1 == cq->ex_prod)
			return ENOENT;
	}
	cq->ex_cons++;
	mroce_ex_load(cq);
	return 0;
}

static void mroce_end_poll(struct ibv_cq_ex *ibcq)
{
	struct mroce_cq *cq = cqex_to_mcq(ibcq);

	mroce_store_release(&cq->ring.hdr->cons, cq->ex_cons + 1);
	cq->ex_cur = NULL;
	pthread_spin_unlock(&cq->lock);
}

static enum ibv_wc_opcode mroce_read_opcode(struct ibv_cq_ex *ibcq)
{
	return cqex_to_mcq(ibcq)->ex_cur->opcode;
}

static uint32_t mroce_read_vendor_err(struct ibv_cq_ex *ibcq)
{
	return cqex_to_mcq(ibcq)->ex_cur->vendor_err;
}

static uint32_t mroce_read_byte_len(struct ibv_cq_ex *ibcq)
{
	return cqex_to_mcq(ibcq)->ex_cur->byte_len;
}

static __be32 mroce_read_imm_data(struct ibv_cq_ex *ibcq)
{
	return cqex_to_mcq(ibcq)->ex_cur->imm_data;
}

static uint32_t mroce_read_qp_num(struct ibv_cq_ex *ibcq)
{
	return cqex_to_mcq(ibcq)->ex_cur->qp_num;
}

static uint32_t mroce_read_src_qp(struct ibv_cq_ex *ibcq)
{
	return cqex_to_mcq(ibcq)->ex_cur->src_qp;
}

static unsigned int mroce_read_wc_flags(struct ibv_cq_ex *ibcq)
{
	return cqex_to_mcq(ibcq)->ex_cur->wc_flags;
}

static uint32_t mroce_read_slid(struct ibv_cq_ex *ibcq)
{
	return cqex_to_mcq(ibcq)->ex_cur->slid;
}

static uint8_t mroce_read_sl(struct ibv_cq_ex *ibcq)
{
	return cqex_to_mcq(ibcq)->ex_cur->sl;
}

static uint8_t mroce_read_dlid_path_bits(struct ibv_cq_ex *ibcq)
{
	return cqex_to_mcq(ibcq)->ex_cur->dlid_path_bits;
}

struct ibv_cq_ex *mroce_create_cq_ex(struct ibv_context *context,
				     struct ibv_cq_init_attr_ex *attr)
{
	struct mroce_create_cq_ex_resp_all resp = {};
	struct ibv_create_cq_ex cmd = {};
	struct ibv_cq_ex *ex;
	struct mroce_cq *cq;
	int ret;

	if ((attr->wc_flags & ~(uint64_t)MROCE_WC_EX_FLAGS) ||
	    (attr->comp_mask & ~(uint32_t)IBV_CQ_INIT_ATTR_MASK_FLAGS) ||
	    ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	     (attr->flags & ~(uint32_t)IBV_CREATE_CQ_ATTR_SINGLE_THREADED))) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr->cqe < 1) {
		errno = EINVAL;
		return NULL;
	}
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return NULL;
	ret = ibv_cmd_create_cq_ex(context, attr, &cq->vcq, &cmd, sizeof(cmd),
				   &resp.ibv, sizeof(resp), 0);
	if (ret)
		goto err_free;
	ret = mroce_cq_map(cq, context, &resp.drv, attr->cqe);
	if (ret)
		goto err_destroy;

	ex = &cq->vcq.cq_ex;
	ex->start_poll = mroce_start_poll;
	ex->next_poll = mroce_next_poll;
	ex->end_poll = mroce_end_poll;
	ex->read_opcode = mroce_read_opcode;
	ex->read_vendor_err = mroce_read_vendor_err;
	ex->read_wc_flags = mroce_read_wc_flags;
	if (attr->wc_flags & IBV_WC_EX_WITH_BYTE_LEN)
		ex->read_byte_len = mroce_read_byte_len;
	if (attr->wc_flags & IBV_WC_EX_WITH_IMM)
		ex->read_imm_data = mroce_read_imm_data;
	if (attr->wc_flags & IBV_WC_EX_WITH_QP_NUM)
		ex->read_qp_num = mroce_read_qp_num;
	if (attr->wc_flags & IBV_WC_EX_WITH_SRC_QP)
		ex->read_src_qp = mroce_read_src_qp;
	if (attr->wc_flags & IBV_WC_EX_WITH_SLID)
		ex->read_slid = mroce_read_slid;
	if (attr->wc_flags & IBV_WC_EX_WITH_SL)
		ex->read_sl = mroce_read_sl;
	if (attr->wc_flags & IBV_WC_EX_WITH_DLID_PATH_BITS)
		ex->read_dlid_path_bits = mroce_read_dlid_path_bits;
	return ex;

err_destroy:
	ibv_cmd_destroy_cq(&cq->vcq.cq);
err_free:
	free(cq);
	errno = ret;
	return NULL;
}
