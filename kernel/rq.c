// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Receive queues.  The provider writes RQEs and publishes the producer
 * index, without a system call; kernel consumers' post_recv writes the same
 * ring.  The kernel reads the ring only when a message needs a receive:
 * message rsn k of a stream takes the k-th receive posted to the QP (or any
 * receive of its SRQ).  The claimed entry is copied to a claim slot and
 * checked there; the payload of every packet is placed through it.  Claims
 * complete in message order and then advance the ring's consumer index.
 */
#include "metaroce.h"

static struct mroce_rcv *rcv_slot(struct mroce_qp *qp, u32 slot)
{
	return (struct mroce_rcv *)(qp->rcv + (size_t)slot * qp->rcv_stride);
}

u8 mroce_wc_status(u8 err)
{
	switch (err) {
	case MROCE_OK:
		return IB_WC_SUCCESS;
	case MROCE_ERR_RNR_RETRY:
		return IB_WC_RNR_RETRY_EXC_ERR;
	case MROCE_ERR_REM_ACCESS:
		return IB_WC_REM_ACCESS_ERR;
	case MROCE_ERR_REM_INVALID:
		return IB_WC_REM_INV_REQ_ERR;
	case MROCE_ERR_REM_OP:
		return IB_WC_REM_OP_ERR;
	case MROCE_ERR_RETRY_EXC:
		return IB_WC_RETRY_EXC_ERR;
	case MROCE_ERR_LOC_PROT:
		return IB_WC_LOC_PROT_ERR;
	case MROCE_ERR_LOC_LEN:
		return IB_WC_LOC_LEN_ERR;
	case MROCE_ERR_FLUSH:
		return IB_WC_WR_FLUSH_ERR;
	case MROCE_ERR_LOC_QP_OP:
		return IB_WC_LOC_QP_OP_ERR;
	default:
		return IB_WC_GENERAL_ERR;
	}
}

/* Copy and check RQE @idx of the QP's own ring into @rcv. */
static bool rq_copy(struct mroce_qp *qp, u32 idx, struct mroce_rcv *rcv)
{
	const struct mroce_rqe *rqe = mroce_queue_slot(&qp->rq, idx);
	u32 i;

	rcv->wr_id = READ_ONCE(rqe->wr_id);
	rcv->num_sge = READ_ONCE(rqe->num_sge);
	rcv->ring_idx = idx;
	rcv->capacity = 0;
	if (rcv->num_sge > qp->max_recv_sge || READ_ONCE(rqe->reserved)) {
		rcv->num_sge = 0;
		return false;
	}
	memcpy(rcv->sge, rqe + 1, rcv->num_sge * sizeof(rcv->sge[0]));
	for (i = 0; i < rcv->num_sge; i++)
		rcv->capacity = min_t(u64, (u64)rcv->capacity +
				      rcv->sge[i].length, U32_MAX);
	return true;
}

/*
 * recv_claim: the receive for message number @rsn of @total bytes.  The
 * cookie is the claim slot.  A claim that names a receive the QP cannot
 * have (the peer's rsn is out of the window) refuses the message.
 *
 * The receive's size is not checked here: a WRITE with immediate consumes
 * a receive but writes elsewhere, so any receive fits it; a SEND too long
 * for its receive is refused by the placement of its packets (the receive
 * is consumed and completes in error all the same).
 */
int mroce_rq_claim(struct mroce_qp *qp, u32 rsn, u32 total, u64 *cookie)
{
	struct mroce_rcv *rcv;
	u32 slot, idx, prod, avail;
	bool ok;
	int err;

	if (qp->srq) {
		slot = find_first_zero_bit(qp->rcv_used, MROCE_WINDOW);
		if (slot >= MROCE_WINDOW)
			return MROCE_ERR_OPERR;
		rcv = rcv_slot(qp, slot);
		err = mroce_srq_take(qp->srq, rcv, qp->srq->max_sge);
		if (err == -EAGAIN)
			return MROCE_ERR_RNR;
		ok = !err;
	} else {
		idx = rsn - qp->rq_rsn;
		prod = mroce_ring_load(&qp->rq.hdr->prod);
		avail = prod - qp->rq_cons;
		if (avail > qp->rq.entries) {
			mroce_count(qp->mdev, MROCE_CNT_BAD_RING);
			return MROCE_ERR_OPERR;
		}
		if (idx >= avail)
			return MROCE_ERR_RNR;
		slot = (qp->rq_cons + idx) % MROCE_WINDOW;
		if (idx >= MROCE_WINDOW || test_bit(slot, qp->rcv_used)) {
			mroce_count(qp->mdev, MROCE_CNT_RX_BAD_RSN);
			return MROCE_ERR_OPERR;
		}
		rcv = rcv_slot(qp, slot);
		ok = rq_copy(qp, qp->rq_cons + idx, rcv);
		if (!ok)
			mroce_count(qp->mdev, MROCE_CNT_BAD_WQE);
	}
	__set_bit(slot, qp->rcv_used);
	rcv->used = ok;		/* 0: a malformed entry, completes in error */
	*cookie = slot;
	return ok ? MROCE_OK : MROCE_ERR_INVALID;
}

static struct mroce_rcv *rcv_get(struct mroce_qp *qp, u64 cookie)
{
	if (cookie >= MROCE_WINDOW || !test_bit(cookie, qp->rcv_used))
		return NULL;
	return rcv_slot(qp, cookie);
}

/* place, SEND: into the claimed receive at @offset. */
int mroce_rq_place(struct mroce_qp *qp, u64 cookie, u32 total, u32 offset,
		   const struct sk_buff *skb, u32 off, u32 len)
{
	struct mroce_rcv *rcv = rcv_get(qp, cookie);

	if (!rcv)
		return MROCE_ERR_OPERR;
	/* too long: as rxe, the requester hears a remote operation error */
	if (total > rcv->capacity)
		return MROCE_ERR_OPERR;
	/* A bad local buffer is the responder's fault: "remote op error". */
	if (mroce_sgl_write(qp->mdev, qp->pd, rcv->sge, rcv->num_sge, offset,
			    skb, off, NULL, len))
		return MROCE_ERR_OPERR;
	return MROCE_OK;
}

static u8 recv_opcode(u8 op)
{
	return op == MROCE_OP_WRITE_IMM ? IB_WC_RECV_RDMA_WITH_IMM : IB_WC_RECV;
}

/* For kernel consumers' ib_wc.network_hdr_type, as rxe reports it. */
static u8 recv_net_type(const struct mroce_qp *qp)
{
	const struct mroce_peer *peer = READ_ONCE(qp->peer);

	if (peer && !ipv6_addr_v4mapped(&peer->raddr))
		return RDMA_NETWORK_IPV6;
	return RDMA_NETWORK_IPV4;
}

/* recv_done: a claimed receive completes (in message order). */
void mroce_rq_done(struct mroce_qp *qp, const struct mroce_recv_done *rd,
		   struct mroce_batch *b)
{
	struct mroce_rcv *rcv = rcv_get(qp, rd->cookie);
	struct mroce_cqe cqe = {};

	if (!rcv)
		return;
	if (!qp->srq) {
		/* A flush completes the whole ring in order (rq_flush). */
		if (rd->status == MROCE_ERR_FLUSH) {
			__clear_bit(rd->cookie, qp->rcv_used);
			return;
		}
		if (rcv->ring_idx != qp->rq_cons) {
			/* The peer numbered its receives out of order. */
			mroce_count(qp->mdev, MROCE_CNT_RX_BAD_RSN);
			__clear_bit(rd->cookie, qp->rcv_used);
			mroce_qp_event(qp, MROCE_QPEV_REQ_ERR);
			mroce_qp_error(qp, MROCE_ERR_FLUSH);
			return;
		}
	}
	cqe.wr_id = rcv->wr_id;
	cqe.status = rcv->used ? mroce_wc_status(rd->status) :
				 IB_WC_LOC_QP_OP_ERR;
	cqe.qp_num = qp->ibqp.qp_num;
	/*
	 * As rxe: byte_len is the bytes received, or for a WRITE with
	 * immediate the length of the write; every RoCE packet has a GRH;
	 * src_qp is left 0 (it is defined for UD only).  An error CQE
	 * keeps only wr_id, status and qp_num (mroce_cq_post).
	 */
	cqe.opcode = recv_opcode(rd->op);
	cqe.byte_len = rd->byte_len;
	cqe.wc_flags = IB_WC_GRH;
	cqe.network_hdr_type = recv_net_type(qp);
	if (rd->op == MROCE_OP_SEND_IMM || rd->op == MROCE_OP_WRITE_IMM) {
		cqe.imm_data = (__force u32)cpu_to_be32(rd->imm);
		cqe.wc_flags |= IB_WC_WITH_IMM;
	}
	__clear_bit(rd->cookie, qp->rcv_used);
	/* the slot is free before the CQE shows (see sq.c sq_publish) */
	if (!qp->srq) {
		qp->rq_cons++;
		qp->rq_rsn++;
		mroce_ring_store(&qp->rq.hdr->cons, qp->rq_cons);
	}
	/*
	 * A receive whose completion the CQ could not take is lost to the
	 * application: stop receiving (the QP goes to error, the requester's
	 * later messages are refused), as the IBA's class G responder error
	 * and rxe's responder have it.  The CQ_ERR event says why.  A QP
	 * already in error (an SRQ's claimed receives flushing) is left be:
	 * flushing it again would repeat LAST_WQE_REACHED.
	 */
	if (!mroce_cq_post(qp->rcq, &cqe, qp, rd->solicited, b) &&
	    READ_ONCE(qp->state) != IB_QPS_ERR)
		mroce_qp_error(qp, MROCE_ERR_FLUSH);
}

/*
 * Error state: every receive still in the QP's ring completes with
 * IB_WC_WR_FLUSH_ERR, in posting order.  (With an SRQ the core flushed the
 * claimed ones; the others stay in the SRQ for other QPs.)
 */
void mroce_rq_flush(struct mroce_qp *qp, struct mroce_batch *b)
{
	const struct mroce_rqe *rqe;
	struct mroce_cqe cqe;
	u32 prod;

	bitmap_zero(qp->rcv_used, MROCE_WINDOW);
	if (qp->srq)
		return;
	prod = mroce_ring_load(&qp->rq.hdr->prod);
	if (prod - qp->rq_cons > qp->rq.entries) {
		mroce_count(qp->mdev, MROCE_CNT_BAD_RING);
		return;
	}
	while (qp->rq_cons != prod) {
		rqe = mroce_queue_slot(&qp->rq, qp->rq_cons);
		memset(&cqe, 0, sizeof(cqe));
		cqe.wr_id = READ_ONCE(rqe->wr_id);
		cqe.status = IB_WC_WR_FLUSH_ERR;
		cqe.qp_num = qp->ibqp.qp_num;
		qp->rq_cons++;
		qp->rq_rsn++;
		mroce_ring_store(&qp->rq.hdr->cons, qp->rq_cons);
		mroce_cq_post(qp->rcq, &cqe, qp, false, b);
	}
}

int mroce_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr)
{
	struct mroce_qp *qp = to_mqp(ibqp);
	struct mroce_sge *sge;
	struct mroce_rqe *rqe;
	unsigned long flags;
	u32 prod, start;
	int i, err = 0;

	/* The provider writes a user RQ itself; an SRQ has its own verb. */
	if (qp->user || qp->srq || READ_ONCE(qp->state) == IB_QPS_RESET) {
		*bad_wr = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&qp->rq_plock, flags);
	start = prod = qp->rq.hdr->prod;
	for (; wr; wr = wr->next) {
		if (wr->num_sge < 0 || wr->num_sge > qp->max_recv_sge) {
			err = -EINVAL;
			break;
		}
		if (prod - mroce_ring_load(&qp->rq.hdr->cons) >=
		    qp->rq.entries) {
			err = -ENOMEM;
			break;
		}
		rqe = mroce_queue_slot(&qp->rq, prod);
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
	mroce_ring_store(&qp->rq.hdr->prod, prod);
	spin_unlock_irqrestore(&qp->rq_plock, flags);
	if (err)
		*bad_wr = wr;
	/* In the error state a receive completes at once, flushed. */
	if (prod != start && READ_ONCE(qp->state) == IB_QPS_ERR)
		mroce_qp_kick(qp);
	return err;
}
