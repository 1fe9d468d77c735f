// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The fast path: ibv_post_send writes SQEs into the mapped send ring,
 * publishes the producer index once per call and rings the doorbell (a
 * POST_SEND command with no work requests: the kernel reads the ring).
 * ibv_post_recv and ibv_post_srq_recv only write the ring: the kernel reads
 * receives when a message needs one (a QP in the error state gets a
 * doorbell, so that its new receives are flushed at once).
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "mroce.h"

/* IB_USER_VERBS_CMD_POST_SEND with zero WRs. */
struct mroce_doorbell_cmd {
	struct ib_uverbs_cmd_hdr hdr;
	__aligned_u64 response;
	__u32 qp_handle;
	__u32 wr_count;
	__u32 sge_count;
	__u32 wqe_size;
};

_Static_assert(sizeof(struct mroce_doorbell_cmd) ==
		       sizeof(struct ib_uverbs_cmd_hdr) +
			       sizeof(struct ib_uverbs_post_send),
	       "doorbell is the legacy POST_SEND layout");

int mroce_doorbell(struct mroce_qp *qp)
{
	struct ib_uverbs_post_send_resp resp;
	struct mroce_doorbell_cmd cmd = {
		.hdr = {
			.command = IB_USER_VERBS_CMD_POST_SEND,
			.in_words = sizeof(cmd) / 4,
			.out_words = sizeof(resp) / 4,
		},
		.response = (uintptr_t)&resp,
		.qp_handle = qp->vqp.qp.handle,
		/* uverbs insists on a plausible WR size even for none. */
		.wqe_size = sizeof(struct ib_uverbs_send_wr),
	};
	ssize_t n;

	n = write(qp->vqp.qp.context->cmd_fd, &cmd, sizeof(cmd));
	if (n == (ssize_t)sizeof(cmd))
		return 0;
	return n < 0 ? errno : EIO;
}

/* Is the send ring full at producer index prod? */
bool mroce_sq_full(struct mroce_qp *qp, uint32_t prod)
{
	return prod - mroce_load_acquire(&qp->sq.hdr->cons) >= qp->sq.num;
}

static int mroce_sqe_inline(struct mroce_qp *qp, struct mroce_sqe *sqe,
			    const struct ibv_sge *sg, int num_sge)
{
	uint8_t *dst = (uint8_t *)(sqe + 1);
	uint32_t len = 0;
	int i;

	for (i = 0; i < num_sge; i++) {
		if (sg[i].length > qp->max_inline - len)
			return EINVAL;
		memcpy(dst + len, (void *)(uintptr_t)sg[i].addr,
		       sg[i].length);
		len += sg[i].length;
	}
	sqe->inline_len = len;
	sqe->flags |= MROCE_SQE_INLINE;
	return 0;
}

static void mroce_sqe_sges(struct mroce_sqe *sqe, const struct ibv_sge *sg,
			   int num_sge)
{
	struct mroce_sge *dst = (struct mroce_sge *)(sqe + 1);
	int i;

	for (i = 0; i < num_sge; i++) {
		dst[i].addr = sg[i].addr;
		dst[i].length = sg[i].length;
		dst[i].lkey = sg[i].lkey;
	}
	sqe->num_sge = num_sge;
}

/* Check one WR and write it into slot sqe; EINVAL leaves nothing posted. */
static int mroce_build_sqe(struct mroce_qp *qp, struct mroce_sqe *sqe,
			   const struct ibv_send_wr *wr)
{
	const unsigned int known = IBV_SEND_FENCE | IBV_SEND_SIGNALED |
				   IBV_SEND_SOLICITED | IBV_SEND_INLINE;
	bool inl = wr->send_flags & IBV_SEND_INLINE;
	bool ud = qp->vqp.qp.qp_type == IBV_QPT_UD;

	if ((wr->send_flags & ~known) || wr->num_sge < 0)
		return EINVAL;
	if (!inl && (uint32_t)wr->num_sge > qp->max_send_sge)
		return EINVAL;

	memset(sqe, 0, sizeof(*sqe));
	switch (wr->opcode) {
	case IBV_WR_SEND_WITH_IMM:
		sqe->imm_data = wr->imm_data;
		/* fallthrough */
	case IBV_WR_SEND:
		if (ud) {
			if (!wr->wr.ud.ah)
				return EINVAL;
			sqe->ah = wr->wr.ud.ah->handle;
			sqe->remote_qpn = wr->wr.ud.remote_qpn;
			sqe->remote_qkey = wr->wr.ud.remote_qkey;
		}
		break;
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		sqe->imm_data = wr->imm_data;
		/* fallthrough */
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_READ:
		if (ud || (inl && wr->opcode == IBV_WR_RDMA_READ))
			return EINVAL;
		sqe->remote_addr = wr->wr.rdma.remote_addr;
		sqe->rkey = wr->wr.rdma.rkey;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		/* One 8-byte local buffer, an aligned remote word. */
		if (ud || inl || wr->num_sge != 1 ||
		    wr->sg_list[0].length < 8 ||
		    (wr->wr.atomic.remote_addr & 7))
			return EINVAL;
		sqe->remote_addr = wr->wr.atomic.remote_addr;
		sqe->rkey = wr->wr.atomic.rkey;
		sqe->compare_add = wr->wr.atomic.compare_add;
		sqe->swap = wr->wr.atomic.swap;
		break;
	default:
		return EINVAL;
	}
	sqe->wr_id = wr->wr_id;
	sqe->opcode = wr->opcode;
	if ((wr->send_flags & IBV_SEND_SIGNALED) || qp->sq_sig_all)
		sqe->flags |= MROCE_SQE_SIGNALED;
	if (wr->send_flags & IBV_SEND_FENCE)
		sqe->flags |= MROCE_SQE_FENCE;
	if (wr->send_flags & IBV_SEND_SOLICITED)
		sqe->flags |= MROCE_SQE_SOLICITED;
	if (inl)
		return mroce_sqe_inline(qp, sqe, wr->sg_list, wr->num_sge);
	mroce_sqe_sges(sqe, wr->sg_list, wr->num_sge);
	return 0;
}

static bool mroce_can_send(const struct ibv_qp *qp)
{
	return qp->state == IBV_QPS_RTS || qp->state == IBV_QPS_SQD ||
	       qp->state == IBV_QPS_SQE || qp->state == IBV_QPS_ERR;
}

int mroce_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		    struct ibv_send_wr **bad_wr)
{
	struct mroce_qp *qp = to_mqp(ibqp);
	struct ibv_send_wr *first = wr;
	uint32_t prod, start;
	int ret = 0;

	if (!mroce_can_send(ibqp)) {
		*bad_wr = wr;
		return EINVAL;
	}
	pthread_spin_lock(&qp->sq_lock);
	start = prod = mroce_load_relaxed(&qp->sq.hdr->prod);
	for (; wr; wr = wr->next) {
		if (mroce_sq_full(qp, prod)) {
			ret = ENOMEM;
			break;
		}
		ret = mroce_build_sqe(qp, mroce_slot(&qp->sq, prod), wr);
		if (ret)
			break;
		prod++;
	}
	if (ret)
		*bad_wr = wr;
	if (prod != start)
		mroce_store_release(&qp->sq.hdr->prod, prod);
	pthread_spin_unlock(&qp->sq_lock);

	/*
	 * Outside the lock: the kernel reads whatever prod says by then.  It
	 * fails only when the QP or device is gone, and then nothing of this
	 * call will ever execute: report it from the first WR.
	 */
	if (prod != start) {
		int db = mroce_doorbell(qp);

		if (db) {
			ret = db;
			*bad_wr = first;
		}
	}
	return ret;
}

/* Write receives into an RQ or SRQ ring: no system call. */
int mroce_post_rqes(struct mroce_uring *ring, pthread_spinlock_t *lock,
		    uint32_t max_sge, struct ibv_recv_wr *wr,
		    struct ibv_recv_wr **bad_wr)
{
	uint32_t prod, start, cons;
	int ret = 0;

	pthread_spin_lock(lock);
	start = prod = mroce_load_relaxed(&ring->hdr->prod);
	cons = mroce_load_acquire(&ring->hdr->cons);
	for (; wr; wr = wr->next) {
		struct mroce_rqe *rqe;
		struct mroce_sge *sge;
		int i;

		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > max_sge) {
			ret = EINVAL;
			break;
		}
		if (prod - cons >= ring->num) {
			cons = mroce_load_acquire(&ring->hdr->cons);
			if (prod - cons >= ring->num) {
				ret = ENOMEM;
				break;
			}
		}
		rqe = mroce_slot(ring, prod);
		rqe->wr_id = wr->wr_id;
		rqe->num_sge = wr->num_sge;
		rqe->reserved = 0;
		sge = (struct mroce_sge *)(rqe + 1);
		for (i = 0; i < wr->num_sge; i++) {
			sge[i].addr = wr->sg_list[i].addr;
			sge[i].length = wr->sg_list[i].length;
			sge[i].lkey = wr->sg_list[i].lkey;
		}
		prod++;
	}
	if (ret)
		*bad_wr = wr;
	if (prod != start)
		mroce_store_release(&ring->hdr->prod, prod);
	pthread_spin_unlock(lock);
	return ret;
}

int mroce_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		    struct ibv_recv_wr **bad_wr)
{
	struct mroce_qp *qp = to_mqp(ibqp);

	struct ibv_recv_wr *first = wr;
	int ret;

	/* No receive ring with an SRQ; none accepted before INIT. */
	if (!qp->rq.num || ibqp->state == IBV_QPS_RESET) {
		*bad_wr = wr;
		return EINVAL;
	}
	ret = mroce_post_rqes(&qp->rq, &qp->rq_lock, qp->max_recv_sge, wr,
			      bad_wr);
	/*
	 * In the error state receives complete at once, flushed: the kernel
	 * flushes what it finds at a doorbell (drain idioms wait for that).
	 */
	if (ibqp->state == IBV_QPS_ERR && (ret == 0 || *bad_wr != first)) {
		int db = mroce_doorbell(qp);

		if (db && !ret) {
			ret = db;
			*bad_wr = first;
		}
	}
	return ret;
}
