// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Send queues.  The provider writes SQEs into the mapped ring and rings the
 * doorbell (a POST_SEND with no work requests); kernel consumers' post_send
 * writes the same entries into a kernel ring and rings it too.  From then
 * on there is one path: under the peer lock the kernel bounds the producer
 * index, copies each new entry into a shadow slot, validates the copy and
 * posts it to the QP's stream, as long as the stream's message window has
 * room.  Completions come back in order (send_done) and advance the ring's
 * consumer index; signaled or failed sends produce a CQE.
 *
 * An entry that fails validation completes with an error once every
 * earlier message has completed, and moves the QP to the error state, as
 * a work queue error does on hardware.
 */
#include "metaroce.h"

/* A taken SQ entry, as the kernel keeps it while the message is in flight. */
struct mroce_swqe {
	u32 len;		/* bytes of its SGEs (inline data), validated */
	u32 reserved;
	union {
		struct mroce_sqe e;	/* copied from the ring, then checked */
		DECLARE_FLEX_ARRAY(u8, raw);	/* the whole ring slot */
	};
	/* SGEs or inline data follow e, as in the ring */
};

#define MROCE_SQE_KNOWN_FLAGS	(MROCE_SQE_SIGNALED | MROCE_SQE_FENCE | \
				 MROCE_SQE_SOLICITED | MROCE_SQE_INLINE)

/* Bytes of a shadow slot for ring entries of @stride bytes. */
size_t mroce_swqe_size(u32 stride)
{
	return offsetof(struct mroce_swqe, e) + stride;
}

static struct mroce_swqe *sq_shadow(struct mroce_qp *qp, u32 idx)
{
	return (struct mroce_swqe *)(qp->sq_shadow +
		(idx & (qp->sq_nshadow - 1)) * mroce_swqe_size(qp->sq.stride));
}

static int wr_op(u8 opcode)
{
	switch (opcode) {
	case IB_WR_RDMA_WRITE:
		return MROCE_OP_WRITE;
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return MROCE_OP_WRITE_IMM;
	case IB_WR_SEND:
		return MROCE_OP_SEND;
	case IB_WR_SEND_WITH_IMM:
		return MROCE_OP_SEND_IMM;
	case IB_WR_RDMA_READ:
		return MROCE_OP_READ_REQ;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		return MROCE_OP_CMP_SWAP;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return MROCE_OP_FETCH_ADD;
	}
	return -1;
}

static u8 wc_opcode(u8 wr_opcode)
{
	switch (wr_opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return IB_WC_RDMA_WRITE;
	case IB_WR_RDMA_READ:
		return IB_WC_RDMA_READ;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		return IB_WC_COMP_SWAP;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return IB_WC_FETCH_ADD;
	default:
		return IB_WC_SEND;
	}
}

/*
 * Check the kernel copy @w of an SQ entry and describe it as a core message.
 * Returns IB_WC_SUCCESS or the error the work request completes with.
 */
static u8 sqe_check(struct mroce_qp *qp, struct mroce_swqe *w,
		    struct mroce_msg *m, u32 idx)
{
	const struct mroce_sqe *e = &w->e;
	const struct mroce_sge *sge = (const void *)(e + 1);
	bool inl = e->flags & MROCE_SQE_INLINE;
	int op = wr_op(e->opcode);
	int access = 0;
	struct mroce_mr *mr;
	u64 len = 0;
	u32 i;

	if (op < 0 || (e->flags & ~MROCE_SQE_KNOWN_FLAGS) || e->reserved)
		return IB_WC_LOC_QP_OP_ERR;
	if (op == MROCE_OP_READ_REQ || op == MROCE_OP_CMP_SWAP ||
	    op == MROCE_OP_FETCH_ADD) {
		/* the response lands in these buffers */
		if (inl)
			return IB_WC_LOC_QP_OP_ERR;
		access = IB_ACCESS_LOCAL_WRITE;
	}
	if (inl) {
		if (e->num_sge || e->inline_len > qp->max_inline)
			return IB_WC_LOC_QP_OP_ERR;
		len = e->inline_len;
	} else {
		if (e->num_sge > qp->max_send_sge)
			return IB_WC_LOC_QP_OP_ERR;
		for (i = 0; i < e->num_sge; i++) {
			len += sge[i].length;
			if (!sge[i].length)
				continue;
			rcu_read_lock();
			mr = mroce_mr_lookup(qp->mdev, sge[i].lkey, qp->pd,
					     access, sge[i].addr,
					     sge[i].length);
			rcu_read_unlock();
			if (!mr)
				return IB_WC_LOC_PROT_ERR;
		}
	}
	if (len > MROCE_MAX_MSG_SIZE)
		return IB_WC_LOC_LEN_ERR;

	memset(m, 0, sizeof(*m));
	m->cookie = idx;
	m->op = op;
	m->va = e->remote_addr;
	m->rkey = e->rkey;
	m->len = len;
	if (op == MROCE_OP_CMP_SWAP || op == MROCE_OP_FETCH_ADD) {
		if (e->num_sge != 1 || sge[0].length < 8 ||
		    (e->remote_addr & 7))
			return IB_WC_LOC_QP_OP_ERR;
		m->len = 8;
		if (op == MROCE_OP_CMP_SWAP) {
			m->compare = e->compare_add;
			m->swap_add = e->swap;
		} else {
			m->swap_add = e->compare_add;
		}
	}
	if (op == MROCE_OP_SEND || op == MROCE_OP_SEND_IMM) {
		m->va = 0;
		m->rkey = 0;
	}
	if (op == MROCE_OP_SEND_IMM || op == MROCE_OP_WRITE_IMM)
		m->imm = be32_to_cpu((__force __be32)e->imm_data);
	if (e->flags & MROCE_SQE_FENCE)
		m->flags |= MROCE_MSG_FENCE;
	if (e->flags & MROCE_SQE_SOLICITED)
		m->flags |= MROCE_MSG_SOLICITED;
	/* byte_len of the completion: for an atomic its SGE's, as rxe */
	w->len = len;
	return IB_WC_SUCCESS;
}

/*
 * Free the slot before the CQE appears: a consumer that polls the CQE and
 * posts again at once must find the room.  Only the shadow (or a value read
 * before) describes the entry from then on.
 */
static void sq_publish(struct mroce_qp *qp)
{
	mroce_ring_store(&qp->sq.hdr->cons, qp->sq_cons);
}

/* Entry sq_next failed validation and everything before it completed. */
static void sq_fail_bad(struct mroce_qp *qp, struct mroce_batch *b)
{
	struct mroce_swqe *w = sq_shadow(qp, qp->sq_next);
	struct mroce_cqe cqe = {
		.wr_id = w->e.wr_id,
		.status = qp->sq_bad_status,
		.qp_num = qp->ibqp.qp_num,
	};

	qp->sq_bad = false;
	qp->sq_next++;
	qp->sq_cons++;
	sq_publish(qp);
	mroce_cq_post(qp->scq, &cqe, qp, false, b);
	mroce_qp_error(qp, MROCE_ERR_FLUSH);
}

/*
 * Copy ring entry @idx into its shadow @w: the header, then only as much
 * of the slot as the header says it uses (SGEs or inline data), which for
 * a small message is a fraction of the slot.  Nothing past the copy is
 * read: sqe_check() rejects counts and lengths beyond the QP's limits,
 * which the slot holds, and the copy is clamped to the slot anyway.
 */
static void sq_copy_in(struct mroce_qp *qp, struct mroce_swqe *w, u32 idx)
{
	const struct mroce_sqe *src = mroce_queue_slot(&qp->sq, idx);
	u32 body;

	memcpy(&w->e, src, sizeof(w->e));
	if (w->e.flags & MROCE_SQE_INLINE)
		body = w->e.inline_len;
	else
		body = (u32)w->e.num_sge * sizeof(struct mroce_sge);
	body = min_t(u32, body, qp->sq.stride - sizeof(w->e));
	memcpy(w->raw + sizeof(w->e), src + 1, body);
}

/* Take new entries from the ring into the stream while it has room. */
static void sq_take(struct mroce_qp *qp, struct mroce_batch *b)
{
	struct mroce_stream *st = qp->st;
	struct mroce_swqe *w;
	struct mroce_msg m;
	u32 prod;
	u8 status;

	prod = mroce_ring_load(&qp->sq.hdr->prod);
	if (prod - qp->sq_cons > qp->sq.entries) {
		mroce_count(qp->mdev, MROCE_CNT_BAD_RING);
		mroce_qp_event(qp, MROCE_QPEV_FATAL);
		mroce_qp_error(qp, MROCE_ERR_FLUSH);
		return;
	}
	while (qp->sq_next != prod && mroce_stream_can_post(st)) {
		w = sq_shadow(qp, qp->sq_next);
		sq_copy_in(qp, w, qp->sq_next);
		status = sqe_check(qp, w, &m, qp->sq_next);
		if (status == IB_WC_SUCCESS &&
		    mroce_stream_post(st, &m, b->now))
			status = IB_WC_LOC_QP_OP_ERR;
		if (status != IB_WC_SUCCESS) {
			mroce_count(qp->mdev, MROCE_CNT_BAD_WQE);
			qp->sq_bad = true;
			qp->sq_bad_status = status;
			if (!mroce_stream_sq_outstanding(st))
				sq_fail_bad(qp, b);
			return;
		}
		qp->sq_next++;
	}
}

/*
 * Work the send queue after a doorbell or a completion: the QP's consumer
 * lock, its peer's, is held (only attached QPs get here).
 */
void mroce_sq_run(struct mroce_qp *qp, struct mroce_batch *b)
{
	struct mroce_stream *st = qp->st;

	lockdep_assert_held(&qp->peer->lock);
	switch (qp->state) {
	case IB_QPS_ERR:
		/* what was posted after the error is flushed, the RQ too */
		mroce_sq_flush(qp, b);
		mroce_rq_flush(qp, b);
		return;
	case IB_QPS_RTS:
	case IB_QPS_SQD:
		break;
	default:
		return;
	}
	/* its stream is dead until it joins the new connection: wait */
	if (!qp->peer || READ_ONCE(qp->rehome))
		return;
	if (qp->sq_bad) {
		if (!mroce_stream_sq_outstanding(st))
			sq_fail_bad(qp, b);
		return;
	}
	if (qp->state == IB_QPS_SQD) {
		if (qp->sqd_pending && !mroce_stream_sq_outstanding(st)) {
			qp->sqd_pending = false;
			mroce_qp_event(qp, MROCE_QPEV_SQ_DRAINED);
		}
		return;
	}
	sq_take(qp, b);
}

/* A message completed (send_done): in order, so it is the oldest. */
void mroce_sq_done(struct mroce_qp *qp, u32 idx, u8 status,
		   struct mroce_batch *b)
{
	struct mroce_swqe *w;
	struct mroce_cqe cqe;

	if (WARN_ON_ONCE(idx != qp->sq_cons))
		return;
	w = sq_shadow(qp, idx);
	qp->sq_cons++;
	sq_publish(qp);
	if (status != MROCE_OK || (w->e.flags & MROCE_SQE_SIGNALED)) {
		memset(&cqe, 0, sizeof(cqe));
		cqe.wr_id = w->e.wr_id;
		cqe.status = mroce_wc_status(status);
		cqe.opcode = wc_opcode(w->e.opcode);
		cqe.byte_len = w->len;
		cqe.qp_num = qp->ibqp.qp_num;
		/* rxe flags the immediate of a send, but leaves imm_data 0 */
		if (w->e.opcode == IB_WR_SEND_WITH_IMM ||
		    w->e.opcode == IB_WR_RDMA_WRITE_WITH_IMM)
			cqe.wc_flags = IB_WC_WITH_IMM;
		mroce_cq_post(qp->scq, &cqe, qp, false, b);
	}
	/* the window has room again */
	if (qp->peer && list_empty(&qp->sq_node))
		list_add_tail(&qp->sq_node, &qp->peer->sq_qps);
}

/*
 * Error state: every entry not given to the stream completes with
 * IB_WC_WR_FLUSH_ERR (the stream flushed its own already).
 */
void mroce_sq_flush(struct mroce_qp *qp, struct mroce_batch *b)
{
	const struct mroce_sqe *e;
	struct mroce_cqe cqe;
	u32 prod;

	qp->sq_bad = false;
	prod = mroce_ring_load(&qp->sq.hdr->prod);
	if (prod - qp->sq_cons > qp->sq.entries) {
		mroce_count(qp->mdev, MROCE_CNT_BAD_RING);
		return;
	}
	qp->sq_next = qp->sq_cons;
	while (qp->sq_next != prod) {
		e = mroce_queue_slot(&qp->sq, qp->sq_next);
		memset(&cqe, 0, sizeof(cqe));
		cqe.wr_id = READ_ONCE(e->wr_id);
		cqe.status = IB_WC_WR_FLUSH_ERR;
		cqe.qp_num = qp->ibqp.qp_num;
		qp->sq_next++;
		qp->sq_cons = qp->sq_next;
		sq_publish(qp);
		mroce_cq_post(qp->scq, &cqe, qp, false, b);
	}
}

/* Payload of message @idx at @off for a packet (poll_tx). */
int mroce_sq_copy(struct mroce_qp *qp, u32 idx, u32 off, void *dst, u32 len)
{
	struct mroce_swqe *w = sq_shadow(qp, idx);
	const u8 *data = (const u8 *)(&w->e + 1);

	if (w->e.flags & MROCE_SQE_INLINE) {
		if (off > w->e.inline_len || len > w->e.inline_len - off)
			return -EINVAL;
		memcpy(dst, data + off, len);
		return 0;
	}
	return mroce_sgl_read(qp->mdev, qp->pd, (const void *)data,
			      w->e.num_sge, off, dst, NULL, len);
}

/* The same payload as page fragments of @skb (mroce_sgl_read). */
int mroce_sq_attach(struct mroce_qp *qp, u32 idx, u32 off, u32 len,
		    struct sk_buff *skb)
{
	struct mroce_swqe *w = sq_shadow(qp, idx);

	if (w->e.flags & MROCE_SQE_INLINE)
		return -EAGAIN;
	return mroce_sgl_read(qp->mdev, qp->pd, (const void *)(&w->e + 1),
			      w->e.num_sge, off, NULL, skb, len);
}

/*
 * A READ response (from @skb) or an ATOMIC's original value (@value) for
 * message @idx: into its local buffers, which need local write access.
 */
int mroce_sq_place(struct mroce_qp *qp, u32 idx, u32 offset,
		   const struct sk_buff *skb, u32 off, u32 len,
		   const u64 *value)
{
	struct mroce_swqe *w;
	int err;

	if (idx - qp->sq_cons >= qp->sq_next - qp->sq_cons)
		return MROCE_ERR_ACCESS;
	w = sq_shadow(qp, idx);
	if (offset > w->len || len > w->len - offset)
		return MROCE_ERR_ACCESS;
	err = mroce_sgl_write(qp->mdev, qp->pd,
			      (const struct mroce_sge *)(&w->e + 1),
			      w->e.num_sge, offset, skb, off, value, len);
	return err ? MROCE_ERR_ACCESS : MROCE_OK;
}

/* ---- doorbell ---- */

/* Run the SQ now: take entries, or flush them in the error state. */
static void qp_kick(struct mroce_qp *qp)
{
	struct mroce_peer *peer;
	struct mroce_batch b;
	unsigned long flags;

	rcu_read_lock();
	peer = READ_ONCE(qp->peer);
	if (peer) {
		mroce_peer_lock(peer, &b);
		b.defer_timer = true;
		if (qp->peer == peer)
			mroce_sq_run(qp, &b);
		mroce_peer_unlock(peer, &b);
		rcu_read_unlock();
		return;
	}
	rcu_read_unlock();

	/* Not attached: only a QP in error has work, its flushes. */
	mroce_batch_init(&b);
	spin_lock_irqsave(&qp->lock, flags);
	if (!qp->peer && qp->state == IB_QPS_ERR) {
		mroce_sq_flush(qp, &b);
		mroce_rq_flush(qp, &b);
	}
	spin_unlock_irqrestore(&qp->lock, flags);
	mroce_cq_notify_batch(&b);
}

void mroce_doorbell_work(struct work_struct *work)
{
	qp_kick(container_of(work, struct mroce_qp, db_work));
}

/* Kernel consumers may post from hard interrupt context. */
void mroce_qp_kick(struct mroce_qp *qp)
{
	if (in_hardirq() || irqs_disabled())
		schedule_work(&qp->db_work);
	else
		qp_kick(qp);
}

static int post_one(struct mroce_qp *qp, const struct ib_send_wr *wr,
		    u32 prod)
{
	struct mroce_sqe *e = mroce_queue_slot(&qp->sq, prod);
	struct mroce_sge *sge = (struct mroce_sge *)(e + 1);
	u8 *data = (u8 *)(e + 1);
	u32 len = 0;
	int i;

	if (wr_op(wr->opcode) < 0)
		return -EINVAL;
	if (wr->send_flags & ~(IB_SEND_FENCE | IB_SEND_SIGNALED |
			       IB_SEND_SOLICITED | IB_SEND_INLINE))
		return -EINVAL;
	if (wr->num_sge < 0)
		return -EINVAL;

	memset(e, 0, sizeof(*e));
	e->wr_id = wr->wr_id;
	e->opcode = wr->opcode;
	switch (wr->opcode) {
	case IB_WR_RDMA_WRITE_WITH_IMM:
		e->imm_data = (__force u32)wr->ex.imm_data;
		fallthrough;
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_READ:
		e->remote_addr = rdma_wr(wr)->remote_addr;
		e->rkey = rdma_wr(wr)->rkey;
		break;
	case IB_WR_SEND_WITH_IMM:
		e->imm_data = (__force u32)wr->ex.imm_data;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		e->remote_addr = atomic_wr(wr)->remote_addr;
		e->rkey = atomic_wr(wr)->rkey;
		e->compare_add = atomic_wr(wr)->compare_add;
		e->swap = atomic_wr(wr)->swap;
		break;
	default:
		break;
	}
	if ((wr->send_flags & IB_SEND_SIGNALED) || qp->sig_all)
		e->flags |= MROCE_SQE_SIGNALED;
	if (wr->send_flags & IB_SEND_FENCE)
		e->flags |= MROCE_SQE_FENCE;
	if (wr->send_flags & IB_SEND_SOLICITED)
		e->flags |= MROCE_SQE_SOLICITED;

	if ((wr->send_flags & IB_SEND_INLINE) &&
	    (wr->opcode == IB_WR_SEND || wr->opcode == IB_WR_SEND_WITH_IMM ||
	     wr->opcode == IB_WR_RDMA_WRITE ||
	     wr->opcode == IB_WR_RDMA_WRITE_WITH_IMM)) {
		/* Kernel SGE addresses are kernel virtual (virtual DMA). */
		for (i = 0; i < wr->num_sge; i++) {
			if (wr->sg_list[i].length > qp->max_inline - len)
				return -EINVAL;
			memcpy(data + len,
			       (void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			len += wr->sg_list[i].length;
		}
		e->flags |= MROCE_SQE_INLINE;
		e->inline_len = len;
		return 0;
	}
	if (wr->num_sge > qp->max_send_sge)
		return -EINVAL;
	for (i = 0; i < wr->num_sge; i++) {
		sge[i].addr = wr->sg_list[i].addr;
		sge[i].length = wr->sg_list[i].length;
		sge[i].lkey = wr->sg_list[i].lkey;
	}
	e->num_sge = wr->num_sge;
	return 0;
}

/*
 * ib_device_ops.post_send.  User QPs: the doorbell (no work requests, the
 * entries are in the ring).  Kernel QPs: write the ring, then the same.
 */
int mroce_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr)
{
	struct mroce_qp *qp = to_mqp(ibqp);
	unsigned long flags;
	u32 prod, start;
	int err = 0;

	if (qp->user) {
		if (wr) {
			*bad_wr = wr;
			return -EINVAL;
		}
		qp_kick(qp);
		return 0;
	}
	switch (READ_ONCE(qp->state)) {
	case IB_QPS_RESET:
	case IB_QPS_INIT:
	case IB_QPS_RTR:
		*bad_wr = wr;
		return -EINVAL;
	default:
		break;
	}

	spin_lock_irqsave(&qp->sq_plock, flags);
	start = prod = qp->sq.hdr->prod;
	for (; wr; wr = wr->next) {
		if (prod - mroce_ring_load(&qp->sq.hdr->cons) >=
		    qp->sq.entries) {
			err = -ENOMEM;
			break;
		}
		err = post_one(qp, wr, prod);
		if (err)
			break;
		prod++;
	}
	mroce_ring_store(&qp->sq.hdr->prod, prod);
	spin_unlock_irqrestore(&qp->sq_plock, flags);
	if (err)
		*bad_wr = wr;
	if (prod != start)
		mroce_qp_kick(qp);
	return err;
}
