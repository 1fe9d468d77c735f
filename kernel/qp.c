// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RC queue pairs: creation (rings, shadow and claim slots, the core
 * stream), the verbs state machine and attributes, destruction.
 *
 *   RESET -> INIT -> RTR: resolve the address vector, find or create the
 *                         peer (CONNECT goes out), attach the stream
 *         -> RTS:         first msn = sq_psn, requester parameters; the SQ
 *                         runs from now on
 *   RTS <-> SQD:          SQD takes no new entries; SQ_DRAINED when empty
 *   any -> ERR:           flush: outstanding sends and receives complete
 *                         with IB_WC_WR_FLUSH_ERR
 *   any -> RESET:         detach, rings emptied, no completions
 *
 * A QP stays attached to its peer from RTR until RESET or destroy; the
 * stream answers a peer that keeps sending to a QP in error.
 */
#include <linux/log2.h>
#include <linux/vmalloc.h>

#include "metaroce.h"

/* The IBA encoding of min_rnr_timer, in microseconds (0 is 655.36 ms). */
static const u32 rnr_timer_us[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960,
	1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720, 40960,
	61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

/* Our own RNR back-off never goes below this, whatever the peer asks. */
#define MROCE_MIN_RNR_NS	(10 * NSEC_PER_USEC)

static void qp_rehome_work(struct work_struct *work);

static void qp_ev_work(struct work_struct *work)
{
	struct mroce_qp *qp = container_of(work, struct mroce_qp, ev_work);
	static const enum ib_event_type map[] = {
		[MROCE_QPEV_FATAL] = IB_EVENT_QP_FATAL,
		[MROCE_QPEV_REQ_ERR] = IB_EVENT_QP_REQ_ERR,
		[MROCE_QPEV_ACCESS_ERR] = IB_EVENT_QP_ACCESS_ERR,
		[MROCE_QPEV_COMM_EST] = IB_EVENT_COMM_EST,
		[MROCE_QPEV_SQ_DRAINED] = IB_EVENT_SQ_DRAINED,
		[MROCE_QPEV_LAST_WQE] = IB_EVENT_QP_LAST_WQE_REACHED,
	};
	struct ib_event ev = {
		.device = qp->ibqp.device,
		.element.qp = &qp->ibqp,
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(map); i++) {
		if (!test_and_clear_bit(i, &qp->ev_pending))
			continue;
		ev.event = map[i];
		if (qp->ibqp.event_handler)
			qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
	}
}

/* An async event for the QP, delivered from process context. */
void mroce_qp_event(struct mroce_qp *qp, enum mroce_qp_ev ev)
{
	set_bit(ev, &qp->ev_pending);
	schedule_work(&qp->ev_work);
}

/*
 * Under the peer lock, from callbacks too: the QP goes to the error state
 * once the current core call has returned (mroce_qp_flush).
 */
void mroce_qp_error(struct mroce_qp *qp, u8 wc_status)
{
	if (!qp->peer)
		return;
	lockdep_assert_held(&qp->peer->lock);
	if (list_empty(&qp->flush_node))
		list_add_tail(&qp->flush_node, &qp->peer->flush_qps);
}

/* The peer lock held, outside any core call. */
void mroce_qp_flush(struct mroce_qp *qp, struct mroce_batch *b)
{
	if (!qp->peer)
		return;
	lockdep_assert_held(&qp->peer->lock);
	qp->state = IB_QPS_ERR;
	mroce_stream_flush(qp->st);
	mroce_sq_flush(qp, b);
	mroce_rq_flush(qp, b);
	if (qp->srq)
		mroce_qp_event(qp, MROCE_QPEV_LAST_WQE);
}

static u32 sq_stride(u32 sge, u32 inl)
{
	return roundup_pow_of_two(sizeof(struct mroce_sqe) +
				  max_t(u32, sge * sizeof(struct mroce_sge),
					inl));
}

static u32 rq_stride(u32 sge)
{
	return roundup_pow_of_two(sizeof(struct mroce_rqe) +
				  sge * sizeof(struct mroce_sge));
}

static void qp_free_mem(struct mroce_qp *qp)
{
	kvfree(qp->st);
	kvfree(qp->sq_shadow);
	kvfree(qp->rcv);
	mroce_queue_free(&qp->sq);
	mroce_queue_free(&qp->rq);
}

int mroce_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		    struct ib_udata *udata)
{
	struct mroce_dev *mdev = to_mdev(ibqp->device);
	struct mroce_qp *qp = to_mqp(ibqp);
	struct mroce_create_qp_resp resp = {};
	struct ib_qp_cap *cap = &init->cap;
	u32 send_wr, send_sge, recv_wr, recv_sge, rcv_sge, shadow;
	u32 qpn;
	int err;

	if (init->qp_type != IB_QPT_RC || init->create_flags)
		return -EOPNOTSUPP;
	send_wr = max(cap->max_send_wr, 1u);
	send_sge = max(cap->max_send_sge, 1u);
	recv_wr = max(cap->max_recv_wr, 1u);
	recv_sge = max(cap->max_recv_sge, 1u);
	if (send_wr > MROCE_MAX_QP_WR || send_sge > MROCE_MAX_SGE ||
	    cap->max_inline_data > MROCE_MAX_INLINE ||
	    (!init->srq && (recv_wr > MROCE_MAX_QP_WR ||
			    recv_sge > MROCE_MAX_SGE)))
		return -EINVAL;
	if (udata) {
		if (udata->outlen < sizeof(resp))
			return -EINVAL;
		if (udata->inlen &&
		    !ib_is_udata_cleared(udata, 0, udata->inlen))
			return -EINVAL;
	}
	if (atomic_inc_return(&mdev->num_qps) > MROCE_MAX_QP) {
		atomic_dec(&mdev->num_qps);
		return -ENOMEM;
	}

	qp->mdev = mdev;
	qp->pd = to_mpd(ibqp->pd);
	qp->scq = to_mcq(init->send_cq);
	qp->rcq = to_mcq(init->recv_cq);
	qp->srq = init->srq ? to_msrq(init->srq) : NULL;
	qp->user = !!udata;
	qp->sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	qp->state = IB_QPS_RESET;
	qp->path_mtu = IB_MTU_1024;
	qp->port = 1;
	mutex_init(&qp->mutex);
	spin_lock_init(&qp->lock);
	spin_lock_init(&qp->sq_plock);
	spin_lock_init(&qp->rq_plock);
	INIT_LIST_HEAD(&qp->flush_node);
	INIT_LIST_HEAD(&qp->sq_node);
	INIT_WORK(&qp->ev_work, qp_ev_work);
	INIT_WORK(&qp->db_work, mroce_doorbell_work);
	INIT_WORK(&qp->rehome_work, qp_rehome_work);

	err = xa_alloc_cyclic(&mdev->qpns, &qpn, qp,
			      XA_LIMIT(MROCE_QPN_MIN, MROCE_QPN_MAX),
			      &mdev->qpn_next, GFP_KERNEL);
	if (err < 0)
		goto err_count;
	ibqp->qp_num = qpn;

	err = -ENOMEM;
	qp->st = kvzalloc(mroce_stream_size(), GFP_KERNEL_ACCOUNT);
	if (!qp->st)
		goto err_qpn;
	mroce_stream_init(qp->st, qpn, qp);

	err = mroce_queue_alloc(&qp->sq, udata, roundup_pow_of_two(send_wr),
				sq_stride(send_sge, cap->max_inline_data),
				&resp.sq);
	if (err)
		goto err_mem;
	qp->max_send_sge = send_sge;
	qp->max_inline = min_t(u32, qp->sq.stride - sizeof(struct mroce_sqe),
			       MROCE_MAX_INLINE);
	qp->sq_nshadow = min_t(u32, qp->sq.entries, MROCE_WINDOW);
	shadow = mroce_swqe_size(qp->sq.stride);
	qp->sq_shadow = kvzalloc(array_size(qp->sq_nshadow, shadow),
				 GFP_KERNEL_ACCOUNT);
	if (!qp->sq_shadow)
		goto err_mem;

	if (qp->srq) {
		rcv_sge = qp->srq->max_sge;
	} else {
		err = mroce_queue_alloc(&qp->rq, udata,
					roundup_pow_of_two(recv_wr),
					rq_stride(recv_sge), &resp.rq);
		if (err)
			goto err_mem;
		qp->max_recv_sge = recv_sge;
		rcv_sge = recv_sge;
	}
	qp->rcv_stride = ALIGN(struct_size((struct mroce_rcv *)NULL, sge,
					   rcv_sge), 8);
	err = -ENOMEM;
	qp->rcv = kvzalloc(array_size(MROCE_WINDOW, qp->rcv_stride),
			   GFP_KERNEL_ACCOUNT);
	if (!qp->rcv)
		goto err_mem;

	cap->max_send_wr = qp->sq.entries;
	cap->max_send_sge = send_sge;
	cap->max_inline_data = qp->max_inline;
	cap->max_recv_wr = qp->srq ? 0 : qp->rq.entries;
	cap->max_recv_sge = qp->srq ? 0 : recv_sge;
	if (udata) {
		resp.sq_entries = qp->sq.entries;
		resp.sq_stride = qp->sq.stride;
		resp.rq_entries = qp->rq.entries;
		resp.rq_stride = qp->rq.stride;
		resp.max_inline = qp->max_inline;
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_mem;
	}
	return 0;

err_mem:
	qp_free_mem(qp);
err_qpn:
	xa_erase(&mdev->qpns, qpn);
err_count:
	atomic_dec(&mdev->num_qps);
	return err;
}

static int check_attr(struct mroce_qp *qp, const struct ib_qp_attr *attr,
		      int mask, struct mroce_av *av)
{
	int err;

	if (mask & (IB_QP_ALT_PATH | IB_QP_PATH_MIG_STATE | IB_QP_RATE_LIMIT |
		    IB_QP_CAP))
		return -EOPNOTSUPP;
	if ((mask & IB_QP_PORT) && attr->port_num != 1)
		return -EINVAL;
	if ((mask & IB_QP_PKEY_INDEX) && attr->pkey_index)
		return -EINVAL;
	if ((mask & IB_QP_ACCESS_FLAGS) &&
	    (attr->qp_access_flags & ~(IB_ACCESS_LOCAL_WRITE |
				       IB_ACCESS_REMOTE_WRITE |
				       IB_ACCESS_REMOTE_READ |
				       IB_ACCESS_REMOTE_ATOMIC)))
		return -EINVAL;
	if ((mask & IB_QP_PATH_MTU) &&
	    (attr->path_mtu < IB_MTU_256 || attr->path_mtu > IB_MTU_4096))
		return -EINVAL;
	if ((mask & IB_QP_MAX_QP_RD_ATOMIC) &&
	    attr->max_rd_atomic > MROCE_MAX_RD_ATOM)
		return -EINVAL;
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic > MROCE_MAX_RD_ATOM)
		return -EINVAL;
	if ((mask & IB_QP_TIMEOUT) && attr->timeout > 31)
		return -EINVAL;
	if ((mask & IB_QP_RETRY_CNT) && attr->retry_cnt > 7)
		return -EINVAL;
	if ((mask & IB_QP_RNR_RETRY) && attr->rnr_retry > 7)
		return -EINVAL;
	if ((mask & IB_QP_MIN_RNR_TIMER) && attr->min_rnr_timer > 31)
		return -EINVAL;
	if ((mask & IB_QP_DEST_QPN) && attr->dest_qp_num > MROCE_QPN_MAX)
		return -EINVAL;
	if (mask & IB_QP_AV) {
		err = mroce_av_resolve(qp->mdev, &attr->ah_attr, av);
		if (err)
			return err;
	}
	return 0;
}

static void store_attr(struct mroce_qp *qp, const struct ib_qp_attr *attr,
		       int mask, const struct mroce_av *av)
{
	if (mask & IB_QP_AV)
		qp->av = *av;
	if (mask & IB_QP_ACCESS_FLAGS)
		qp->access = attr->qp_access_flags;
	if (mask & IB_QP_PATH_MTU)
		qp->path_mtu = attr->path_mtu;
	if (mask & IB_QP_DEST_QPN)
		qp->dest_qpn = attr->dest_qp_num;
	/* PSNs are 24-bit in verbs; the first msn of each direction. */
	if (mask & IB_QP_RQ_PSN)
		qp->rq_psn = attr->rq_psn & 0xffffff;
	if (mask & IB_QP_SQ_PSN)
		qp->sq_psn = attr->sq_psn & 0xffffff;
	if (mask & IB_QP_TIMEOUT)
		qp->timeout = attr->timeout;
	if (mask & IB_QP_RETRY_CNT)
		qp->retry_cnt = attr->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		qp->rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_MIN_RNR_TIMER)
		qp->min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		qp->max_rd_atomic = attr->max_rd_atomic;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		qp->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & IB_QP_EN_SQD_ASYNC_NOTIFY)
		qp->sqd_notify = attr->en_sqd_async_notify;
}

/* Requester parameters the stream takes at RTS (and RTS -> RTS). */
static void stream_requester(struct mroce_qp *qp)
{
	struct mroce_stream_params prm = {};

	prm.rnr_retry = qp->rnr_retry;
	prm.retry_cnt = qp->retry_cnt;
	/* bounds every work request: requester.c, stall_bound() */
	prm.ack_timeout_ns = mroce_ib_timeout_ns(qp->timeout);
	prm.max_rd_atomic = clamp_t(u8, qp->max_rd_atomic, 1,
				    MROCE_MAX_RD_ATOMIC);
	prm.rnr_delay_ns = (u64)rnr_timer_us[qp->min_rnr_timer] *
			   NSEC_PER_USEC;
	mroce_stream_set_requester(qp->st, &prm);
}

/* INIT -> RTR: find or create the peer, attach the stream to it. */
static int qp_attach(struct mroce_qp *qp)
{
	struct mroce_stream_params prm = {};
	struct mroce_peer *peer;
	enum ib_mtu active;
	struct mroce_batch b;
	int err = 0;

	peer = mroce_peer_get(qp->mdev, &qp->av);
	if (IS_ERR(peer))
		return PTR_ERR(peer);
	/*
	 * The connection's payload size (both netdevs' MTU) cuts messages;
	 * a QP that asked for less than the port's MTU is cut at its own.
	 */
	active = mroce_active_mtu(READ_ONCE(qp->mdev->ndev->mtu));
	prm.mss = qp->path_mtu < active ? ib_mtu_enum_to_int(qp->path_mtu) :
					  MROCE_MAX_PAYLOAD;
	prm.tx_msn = qp->sq_psn;
	prm.rx_msn = qp->rq_psn;
	prm.max_rd_atomic = qp->max_rd_atomic;
	prm.rnr_retry = qp->rnr_retry;
	prm.retry_cnt = qp->retry_cnt;
	prm.ack_timeout_ns = mroce_ib_timeout_ns(qp->timeout);
	prm.srq = !!qp->srq;
	prm.rnr_delay_ns = (u64)rnr_timer_us[qp->min_rnr_timer] *
			   NSEC_PER_USEC;
	prm.min_rnr_ns = MROCE_MIN_RNR_NS;

	mroce_peer_lock(peer, &b);
	if (mroce_stream_attach(peer->conn, qp->st, qp->dest_qpn, &prm)) {
		err = -EINVAL;
	} else {
		mroce_peer_attach(peer, qp);
		qp->state = IB_QPS_RTR;
		/* lost a race with the connection failing: fail at once */
		if (peer->closed)
			mroce_qp_error(qp, MROCE_ERR_RETRY_EXC);
	}
	mroce_peer_unlock(peer, &b);
	if (err)
		mroce_peer_put(peer);
	return err;
}

/* Back to RESET: detach, empty the rings, no completions. */
static void qp_reset(struct mroce_qp *qp)
{
	struct mroce_peer *peer = qp->peer;
	struct mroce_stream *st = qp->st;
	struct mroce_stream_stats ss;
	struct mroce_batch b;
	unsigned long flags;

	if (peer) {
		mroce_peer_lock(peer, &b);
		mroce_stream_detach(st);
		mroce_stream_get_stats(st, &ss);
		peer->rnr_sent += ss.rnr_sent;
		peer->rnr_rcvd += ss.rnr_rcvd;
		mroce_peer_detach(peer, qp);
		qp->state = IB_QPS_RESET;
		mroce_peer_unlock(peer, &b);
		mroce_peer_put(peer);
	}
	spin_lock_irqsave(&qp->lock, flags);
	qp->state = IB_QPS_RESET;
	spin_lock(&qp->sq_plock);
	mroce_queue_reset(&qp->sq);
	qp->sq_next = 0;
	qp->sq_cons = 0;
	qp->sq_bad = false;
	qp->sqd_pending = false;
	spin_unlock(&qp->sq_plock);
	spin_lock(&qp->rq_plock);
	mroce_queue_reset(&qp->rq);
	qp->rq_cons = 0;
	qp->rq_rsn = 0;
	bitmap_zero(qp->rcv_used, MROCE_WINDOW);
	spin_unlock(&qp->rq_plock);
	mroce_stream_init(st, qp->ibqp.qp_num, qp);
	spin_unlock_irqrestore(&qp->lock, flags);
}

static void qp_to_err(struct mroce_qp *qp)
{
	struct mroce_peer *peer = qp->peer;
	struct mroce_batch b;
	unsigned long flags;

	if (peer) {
		mroce_peer_lock(peer, &b);
		qp->state = IB_QPS_ERR;
		mroce_qp_error(qp, MROCE_ERR_FLUSH);
		mroce_peer_unlock(peer, &b);	/* flushes */
		return;
	}
	mroce_batch_init(&b);
	spin_lock_irqsave(&qp->lock, flags);
	qp->state = IB_QPS_ERR;
	mroce_sq_flush(qp, &b);
	mroce_rq_flush(qp, &b);
	spin_unlock_irqrestore(&qp->lock, flags);
	mroce_cq_notify_batch(&b);
}

/*
 * The peer restarted (its CONNECT with another nonce failed our connection)
 * before this QP's stream carried anything.  That is what happens to the
 * first QPs after one end's connection failed: the other end attached its
 * QP to the old connection in the instant before the new CONNECT came.
 * Move the QP to the peer's new connection instead of failing it.  Called
 * under the old peer's lock; the move needs process context.
 */
void mroce_qp_rehome(struct mroce_qp *qp)
{
	WRITE_ONCE(qp->rehome, true);
	queue_work(system_wq, &qp->rehome_work);
}

static void qp_rehome_work(struct work_struct *work)
{
	struct mroce_qp *qp = container_of(work, struct mroce_qp, rehome_work);
	struct mroce_peer *old, *peer;
	enum ib_qp_state state;
	struct mroce_batch b;
	unsigned long flags;

	mutex_lock(&qp->mutex);
	old = qp->peer;
	state = READ_ONCE(qp->state);
	/* reset, moved to error or destroyed meanwhile: nothing to move */
	if (!READ_ONCE(qp->rehome) || !old ||
	    (state != IB_QPS_RTR && state != IB_QPS_RTS)) {
		WRITE_ONCE(qp->rehome, false);
		goto out;
	}
	mroce_peer_lock(old, &b);
	mroce_stream_detach(qp->st);
	mroce_peer_detach(old, qp);
	mroce_peer_unlock(old, &b);
	mroce_peer_put(old);
	spin_lock_irqsave(&qp->lock, flags);
	mroce_stream_init(qp->st, qp->ibqp.qp_num, qp);
	spin_unlock_irqrestore(&qp->lock, flags);
	WRITE_ONCE(qp->rehome, false);
	if (qp_attach(qp)) {
		qp_to_err(qp);
		goto out;
	}
	mroce_count(qp->mdev, MROCE_CNT_QP_REHOMED);
	peer = qp->peer;
	mroce_peer_lock(peer, &b);
	if (state == IB_QPS_RTS && qp->state != IB_QPS_ERR) {
		qp->state = IB_QPS_RTS;
		stream_requester(qp);
	}
	/* what was posted while it moved */
	mroce_sq_run(qp, &b);
	mroce_peer_unlock(peer, &b);
out:
	mutex_unlock(&qp->mutex);
}

/* A transition among RTR, RTS and SQD of an attached QP. */
static void qp_move(struct mroce_qp *qp, enum ib_qp_state cur,
		    enum ib_qp_state new)
{
	struct mroce_peer *peer = qp->peer;
	struct mroce_stream *st = qp->st;
	struct mroce_batch b;

	mroce_peer_lock(peer, &b);
	if (cur == IB_QPS_RTR && new == IB_QPS_RTS)
		mroce_stream_set_tx_start(st, qp->sq_psn);
	if (mroce_stream_get_state(st) == MROCE_STREAM_ACTIVE)
		stream_requester(qp);
	/* the connection may have failed the QP meanwhile */
	if (qp->state != IB_QPS_ERR) {
		qp->state = new;
		if (new == IB_QPS_SQD)
			qp->sqd_pending = qp->sqd_notify;
		mroce_sq_run(qp, &b);
	}
	mroce_peer_unlock(peer, &b);
}

int mroce_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_udata *udata)
{
	struct mroce_qp *qp = to_mqp(ibqp);
	enum ib_qp_state cur, new;
	struct mroce_av av;
	unsigned long flags;
	int err;

	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;
	mutex_lock(&qp->mutex);
	cur = READ_ONCE(qp->state);
	new = (mask & IB_QP_STATE) ? attr->qp_state : cur;
	if (!ib_modify_qp_is_ok(cur, new, IB_QPT_RC, mask)) {
		err = -EINVAL;
		goto out;
	}
	err = check_attr(qp, attr, mask, &av);
	if (err)
		goto out;
	store_attr(qp, attr, mask, &av);

	if (!(mask & IB_QP_STATE)) {
		if (qp->peer)
			qp_move(qp, cur, cur);
		goto out;
	}
	switch (new) {
	case IB_QPS_RESET:
		qp_reset(qp);
		break;
	case IB_QPS_INIT:
		spin_lock_irqsave(&qp->lock, flags);
		qp->state = IB_QPS_INIT;
		spin_unlock_irqrestore(&qp->lock, flags);
		break;
	case IB_QPS_RTR:
		if (cur == IB_QPS_INIT)
			err = qp_attach(qp);
		else if (qp->peer)
			qp_move(qp, cur, new);
		break;
	case IB_QPS_RTS:
	case IB_QPS_SQD:
	case IB_QPS_SQE:
		if (qp->peer)
			qp_move(qp, cur, new);
		else
			err = -EINVAL;
		break;
	case IB_QPS_ERR:
		qp_to_err(qp);
		break;
	default:
		err = -EINVAL;
	}
out:
	mutex_unlock(&qp->mutex);
	return err;
}

int mroce_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_qp_init_attr *init)
{
	struct mroce_qp *qp = to_mqp(ibqp);
	struct mroce_stream *st = qp->st;

	mutex_lock(&qp->mutex);
	memset(attr, 0, sizeof(*attr));
	attr->qp_state = READ_ONCE(qp->state);
	attr->cur_qp_state = attr->qp_state;
	attr->path_mtu = qp->path_mtu;
	attr->path_mig_state = IB_MIG_MIGRATED;
	attr->rq_psn = qp->rq_psn;
	attr->sq_psn = qp->sq_psn;
	attr->dest_qp_num = qp->dest_qpn;
	attr->qp_access_flags = qp->access;
	attr->cap.max_send_wr = qp->sq.entries;
	attr->cap.max_send_sge = qp->max_send_sge;
	attr->cap.max_inline_data = qp->max_inline;
	attr->cap.max_recv_wr = qp->srq ? 0 : qp->rq.entries;
	attr->cap.max_recv_sge = qp->srq ? 0 : qp->max_recv_sge;
	if (attr->qp_state != IB_QPS_RESET && attr->qp_state != IB_QPS_INIT)
		mroce_av_to_attr(&qp->av, qp->port, &attr->ah_attr);
	attr->pkey_index = qp->pkey_index;
	attr->en_sqd_async_notify = qp->sqd_notify;
	attr->sq_draining = attr->qp_state == IB_QPS_SQD &&
			    mroce_stream_sq_outstanding(st);
	attr->max_rd_atomic = qp->max_rd_atomic;
	attr->max_dest_rd_atomic = qp->max_dest_rd_atomic;
	attr->min_rnr_timer = qp->min_rnr_timer;
	attr->port_num = qp->port;
	attr->timeout = qp->timeout;
	attr->retry_cnt = qp->retry_cnt;
	attr->rnr_retry = qp->rnr_retry;

	memset(init, 0, sizeof(*init));
	init->qp_type = IB_QPT_RC;
	init->send_cq = qp->ibqp.send_cq;
	init->recv_cq = qp->ibqp.recv_cq;
	init->srq = qp->ibqp.srq;
	init->cap = attr->cap;
	init->sq_sig_type = qp->sig_all ? IB_SIGNAL_ALL_WR : IB_SIGNAL_REQ_WR;
	mutex_unlock(&qp->mutex);
	return 0;
}

/* Kernel CQs remember the QP of each CQE: forget this one. */
static void cq_forget(struct mroce_cq *cq, struct mroce_qp *qp)
{
	unsigned long flags;
	u32 i;

	if (!cq->kqp)
		return;
	spin_lock_irqsave(&cq->lock, flags);
	for (i = cq->kcons; i != cq->prod; i++)
		if (cq->kqp[i & (cq->q.entries - 1)] == qp)
			cq->kqp[i & (cq->q.entries - 1)] = NULL;
	spin_unlock_irqrestore(&cq->lock, flags);
}

int mroce_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct mroce_qp *qp = to_mqp(ibqp);
	struct mroce_dev *mdev = qp->mdev;

	mutex_lock(&qp->mutex);
	qp_reset(qp);
	mutex_unlock(&qp->mutex);
	cancel_work_sync(&qp->db_work);
	cancel_work_sync(&qp->ev_work);
	cancel_work_sync(&qp->rehome_work);
	cq_forget(qp->scq, qp);
	cq_forget(qp->rcq, qp);
	xa_erase(&mdev->qpns, ibqp->qp_num);
	qp_free_mem(qp);
	mutex_destroy(&qp->mutex);
	atomic_dec(&mdev->num_qps);
	return 0;
}
