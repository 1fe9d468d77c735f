// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The extended send API (ibv_wr_start ... ibv_wr_complete) on the same
 * send ring as ibv_post_send.  wr_start takes the SQ lock; each opcode call
 * opens the next SQE, the setters fill it; wr_complete publishes them all
 * with one store-release and one doorbell, or, after any error, publishes
 * nothing and returns the first error.  Operations the ring QP does not
 * have record EOPNOTSUPP instead of crashing.
 */
#include <errno.h>
#include <string.h>

#include "mroce.h"

static void mroce_wr_start(struct ibv_qp_ex *ibqp)
{
	struct mroce_qp *qp = qpex_to_mqp(ibqp);
	enum ibv_qp_state st = qp->vqp.qp.state;

	pthread_spin_lock(&qp->sq_lock);
	qp->wr_start_prod = mroce_load_relaxed(&qp->sq.hdr->prod);
	qp->wr_prod = qp->wr_start_prod;
	qp->wr_cur = NULL;
	qp->wr_err = (st == IBV_QPS_RTS || st == IBV_QPS_SQD ||
		      st == IBV_QPS_SQE || st == IBV_QPS_ERR) ? 0 : EINVAL;
}

static void mroce_wr_fail(struct mroce_qp *qp, int err)
{
	if (!qp->wr_err)
		qp->wr_err = err;
	qp->wr_cur = NULL;
}

/* Open the next SQE for opcode; NULL after an error. */
static struct mroce_sqe *mroce_wr_open(struct ibv_qp_ex *ibqp, uint8_t opcode)
{
	const unsigned int known = IBV_SEND_FENCE | IBV_SEND_SIGNALED |
				   IBV_SEND_SOLICITED | IBV_SEND_INLINE;
	struct mroce_qp *qp = qpex_to_mqp(ibqp);
	struct mroce_sqe *sqe;

	qp->wr_cur = NULL;
	if (qp->wr_err)
		return NULL;
	if (ibqp->wr_flags & ~known) {
		mroce_wr_fail(qp, EINVAL);
		return NULL;
	}
	if (mroce_sq_full(qp, qp->wr_prod)) {
		mroce_wr_fail(qp, ENOMEM);
		return NULL;
	}
	sqe = mroce_slot(&qp->sq, qp->wr_prod++);
	memset(sqe, 0, sizeof(*sqe));
	sqe->wr_id = ibqp->wr_id;
	sqe->opcode = opcode;
	if ((ibqp->wr_flags & IBV_SEND_SIGNALED) || qp->sq_sig_all)
		sqe->flags |= MROCE_SQE_SIGNALED;
	if (ibqp->wr_flags & IBV_SEND_FENCE)
		sqe->flags |= MROCE_SQE_FENCE;
	if (ibqp->wr_flags & IBV_SEND_SOLICITED)
		sqe->flags |= MROCE_SQE_SOLICITED;
	qp->wr_cur = sqe;
	return sqe;
}

static void mroce_wr_send(struct ibv_qp_ex *ibqp)
{
	mroce_wr_open(ibqp, IBV_WR_SEND);
}

static void mroce_wr_send_imm(struct ibv_qp_ex *ibqp, __be32 imm)
{
	struct mroce_sqe *sqe = mroce_wr_open(ibqp, IBV_WR_SEND_WITH_IMM);

	if (sqe)
		sqe->imm_data = imm;
}

static void mroce_wr_remote(struct ibv_qp_ex *ibqp, uint8_t opcode,
			    uint32_t rkey, uint64_t addr, __be32 imm)
{
	struct mroce_sqe *sqe = mroce_wr_open(ibqp, opcode);

	if (!sqe)
		return;
	sqe->rkey = rkey;
	sqe->remote_addr = addr;
	sqe->imm_data = imm;
}

static void mroce_wr_rdma_write(struct ibv_qp_ex *ibqp, uint32_t rkey,
				uint64_t addr)
{
	mroce_wr_remote(ibqp, IBV_WR_RDMA_WRITE, rkey, addr, 0);
}

static void mroce_wr_rdma_write_imm(struct ibv_qp_ex *ibqp, uint32_t rkey,
				    uint64_t addr, __be32 imm)
{
	mroce_wr_remote(ibqp, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, addr, imm);
}

static void mroce_wr_rdma_read(struct ibv_qp_ex *ibqp, uint32_t rkey,
			       uint64_t addr)
{
	mroce_wr_remote(ibqp, IBV_WR_RDMA_READ, rkey, addr, 0);
}

static void mroce_wr_atomic(struct ibv_qp_ex *ibqp, uint8_t opcode,
			    uint32_t rkey, uint64_t addr, uint64_t cmp_add,
			    uint64_t swap)
{
	struct mroce_qp *qp = qpex_to_mqp(ibqp);
	struct mroce_sqe *sqe;

	if (addr & 7) {
		mroce_wr_fail(qp, EINVAL);
		return;
	}
	sqe = mroce_wr_open(ibqp, opcode);
	if (!sqe)
		return;
	sqe->rkey = rkey;
	sqe->remote_addr = addr;
	sqe->compare_add = cmp_add;
	sqe->swap = swap;
}

static void mroce_wr_cas(struct ibv_qp_ex *ibqp, uint32_t rkey, uint64_t addr,
			 uint64_t compare, uint64_t swap)
{
	mroce_wr_atomic(ibqp, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, addr, compare,
			swap);
}

static void mroce_wr_faa(struct ibv_qp_ex *ibqp, uint32_t rkey, uint64_t addr,
			 uint64_t add)
{
	mroce_wr_atomic(ibqp, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, addr, add, 0);
}

static bool mroce_is_atomic(const struct mroce_sqe *sqe)
{
	return sqe->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
	       sqe->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD;
}

static void mroce_wr_set_sge_list(struct ibv_qp_ex *ibqp, size_t num,
				  const struct ibv_sge *sg)
{
	struct mroce_qp *qp = qpex_to_mqp(ibqp);
	struct mroce_sqe *sqe = qp->wr_cur;
	struct mroce_sge *dst;
	size_t i;

	if (!sqe)
		return;
	if (num > qp->max_send_sge ||
	    (mroce_is_atomic(sqe) && (num != 1 || sg[0].length < 8))) {
		mroce_wr_fail(qp, EINVAL);
		return;
	}
	dst = (struct mroce_sge *)(sqe + 1);
	for (i = 0; i < num; i++) {
		dst[i].addr = sg[i].addr;
		dst[i].length = sg[i].length;
		dst[i].lkey = sg[i].lkey;
	}
	sqe->num_sge = num;
	qp->wr_cur = NULL;	/* one setter per WR */
}

static void mroce_wr_set_sge(struct ibv_qp_ex *ibqp, uint32_t lkey,
			     uint64_t addr, uint32_t length)
{
	struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };

	mroce_wr_set_sge_list(ibqp, 1, &sge);
}

static void mroce_wr_set_inline_data_list(struct ibv_qp_ex *ibqp, size_t num,
					  const struct ibv_data_buf *buf)
{
	struct mroce_qp *qp = qpex_to_mqp(ibqp);
	struct mroce_sqe *sqe = qp->wr_cur;
	uint8_t *dst;
	size_t len = 0, i;

	if (!sqe)
		return;
	if (sqe->opcode == IBV_WR_RDMA_READ || mroce_is_atomic(sqe)) {
		mroce_wr_fail(qp, EINVAL);
		return;
	}
	dst = (uint8_t *)(sqe + 1);
	for (i = 0; i < num; i++) {
		if (buf[i].length > qp->max_inline - len) {
			mroce_wr_fail(qp, EINVAL);
			return;
		}
		memcpy(dst + len, buf[i].addr, buf[i].length);
		len += buf[i].length;
	}
	sqe->inline_len = len;
	sqe->flags |= MROCE_SQE_INLINE;
	qp->wr_cur = NULL;
}

static void mroce_wr_set_inline_data(struct ibv_qp_ex *ibqp, void *addr,
				     size_t length)
{
	struct ibv_data_buf buf = { .addr = addr, .length = length };

	mroce_wr_set_inline_data_list(ibqp, 1, &buf);
}

static int mroce_wr_complete(struct ibv_qp_ex *ibqp)
{
	struct mroce_qp *qp = qpex_to_mqp(ibqp);
	uint32_t n = qp->wr_prod - qp->wr_start_prod;
	int err = qp->wr_err;

	if (!err && n)
		mroce_store_release(&qp->sq.hdr->prod, qp->wr_prod);
	pthread_spin_unlock(&qp->sq_lock);
	if (err)
		return err;
	return n ? mroce_doorbell(qp) : 0;
}

static void mroce_wr_abort(struct ibv_qp_ex *ibqp)
{
	pthread_spin_unlock(&qpex_to_mqp(ibqp)->sq_lock);
}

/* Operations outside MROCE_SEND_OPS_FLAGS: fail the batch, never crash. */
static void mroce_wr_unsupported(struct ibv_qp_ex *ibqp)
{
	mroce_wr_fail(qpex_to_mqp(ibqp), EOPNOTSUPP);
}

static void mroce_wr_bind_mw(struct ibv_qp_ex *ibqp, struct ibv_mw *mw,
			     uint32_t rkey,
			     const struct ibv_mw_bind_info *info)
{
	mroce_wr_unsupported(ibqp);
}

static void mroce_wr_rkey_op(struct ibv_qp_ex *ibqp, uint32_t rkey)
{
	mroce_wr_unsupported(ibqp);
}

static void mroce_wr_send_tso(struct ibv_qp_ex *ibqp, void *hdr,
			      uint16_t hdr_sz, uint16_t mss)
{
	mroce_wr_unsupported(ibqp);
}

static void mroce_wr_set_ud_addr(struct ibv_qp_ex *ibqp, struct ibv_ah *ah,
				 uint32_t qpn, uint32_t qkey)
{
	mroce_wr_unsupported(ibqp);
}

static void mroce_wr_atomic_write(struct ibv_qp_ex *ibqp, uint32_t rkey,
				  uint64_t addr, const void *wr)
{
	mroce_wr_unsupported(ibqp);
}

void mroce_qp_ex_init(struct mroce_qp *qp)
{
	struct ibv_qp_ex *q = &qp->vqp.qp_ex;

	q->wr_atomic_cmp_swp = mroce_wr_cas;
	q->wr_atomic_fetch_add = mroce_wr_faa;
	q->wr_bind_mw = mroce_wr_bind_mw;
	q->wr_local_inv = mroce_wr_rkey_op;
	q->wr_rdma_read = mroce_wr_rdma_read;
	q->wr_rdma_write = mroce_wr_rdma_write;
	q->wr_rdma_write_imm = mroce_wr_rdma_write_imm;
	q->wr_send = mroce_wr_send;
	q->wr_send_imm = mroce_wr_send_imm;
	q->wr_send_inv = mroce_wr_rkey_op;
	q->wr_send_tso = mroce_wr_send_tso;
	q->wr_set_ud_addr = mroce_wr_set_ud_addr;
	q->wr_set_xrc_srqn = mroce_wr_rkey_op;
	q->wr_set_inline_data = mroce_wr_set_inline_data;
	q->wr_set_inline_data_list = mroce_wr_set_inline_data_list;
	q->wr_set_sge = mroce_wr_set_sge;
	q->wr_set_sge_list = mroce_wr_set_sge_list;
	q->wr_start = mroce_wr_start;
	q->wr_complete = mroce_wr_complete;
	q->wr_abort = mroce_wr_abort;
	q->wr_atomic_write = mroce_wr_atomic_write;
	qp->vqp.comp_mask |= VERBS_QP_EX;
}
