// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The core's callbacks (struct mroce_ops).  They run under the peer lock,
 * with ctx = the peer, and never call back into the core: work that needs
 * the core again (flushing a QP in error, taking more entries from an SQ)
 * is queued on the peer and done by mroce_peer_unlock().
 *
 * Every access to local memory goes through an MR lookup that checks key,
 * PD, access rights (the MR's and, for the peer's requests, the QP's) and
 * bounds; a WRITE is checked against its whole message on every packet.
 */
#include <linux/highmem.h>

#include "metaroce.h"

static struct mroce_stream *op_stream_lookup(void *ctx, struct mroce_conn *c,
					     u32 id)
{
	struct mroce_qp *qp = mroce_peer_qp(ctx, id);

	return qp ? qp->st : NULL;
}

static int op_recv_claim(void *ctx, struct mroce_stream *st, u32 rsn,
			 u32 total, u64 *cookie)
{
	return mroce_rq_claim(st_to_qp(st), rsn, total, cookie);
}

static int place_write(struct mroce_qp *qp, const struct mroce_place *pl,
		       const struct sk_buff *skb, u32 off)
{
	struct mroce_mr *mr;
	int st = MROCE_OK;

	if (!(qp->access & IB_ACCESS_REMOTE_WRITE))
		return MROCE_ERR_ACCESS;
	/* A zero-length WRITE checks neither key nor address. */
	if (!pl->total)
		return MROCE_OK;
	rcu_read_lock();
	mr = mroce_mr_lookup(qp->mdev, pl->rkey, qp->pd,
			     IB_ACCESS_REMOTE_WRITE, pl->va, pl->total);
	if (!mr)
		st = MROCE_ERR_ACCESS;
	else if (mroce_mr_copy_skb(mr, pl->va + pl->offset, skb, off, pl->len))
		st = MROCE_ERR_INVALID;
	rcu_read_unlock();
	return st;
}

static int op_place(void *ctx, struct mroce_stream *st,
		    const struct mroce_place *pl, const void *pctx, u32 off)
{
	struct mroce_qp *qp = st_to_qp(st);
	const struct sk_buff *skb = pctx;

	switch (pl->kind) {
	case MROCE_PLACE_WRITE:
		return place_write(qp, pl, skb, off);
	case MROCE_PLACE_SEND:
		return mroce_rq_place(qp, pl->cookie, pl->total, pl->offset,
				      skb, off, pl->len);
	case MROCE_PLACE_READ_RESP:
		return mroce_sq_place(qp, (u32)pl->cookie, pl->offset, skb,
				      off, pl->len, NULL);
	case MROCE_PLACE_ATOMIC_RESP:
		return mroce_sq_place(qp, (u32)pl->cookie, 0, NULL, 0, 8,
				      &pl->value);
	}
	return MROCE_ERR_INVALID;
}

static int op_read_check(void *ctx, struct mroce_stream *st, u32 rkey, u64 va,
			 u32 len)
{
	struct mroce_qp *qp = st_to_qp(st);
	struct mroce_mr *mr;

	if (!(qp->access & IB_ACCESS_REMOTE_READ))
		return MROCE_ERR_ACCESS;
	if (!len)
		return MROCE_OK;
	rcu_read_lock();
	mr = mroce_mr_lookup(qp->mdev, rkey, qp->pd, IB_ACCESS_REMOTE_READ, va,
			     len);
	rcu_read_unlock();
	return mr ? MROCE_OK : MROCE_ERR_ACCESS;
}

/*
 * Atomics use the CPU's atomic instructions on the mapped word, so they are
 * atomic against each other and against CPU atomics on the same memory.
 */
static int op_atomic(void *ctx, struct mroce_stream *st,
		     const struct mroce_atomic *a, u64 *orig)
{
	struct mroce_qp *qp = st_to_qp(st);
	struct mroce_mr *mr;
	u64 *p, old;
	void *map;

	if (!(qp->access & IB_ACCESS_REMOTE_ATOMIC))
		return MROCE_ERR_ACCESS;
	rcu_read_lock();
	mr = mroce_mr_lookup(qp->mdev, a->rkey, qp->pd, IB_ACCESS_REMOTE_ATOMIC,
			     a->va, 8);
	if (!mr) {
		rcu_read_unlock();
		return MROCE_ERR_ACCESS;
	}
	p = mroce_mr_atomic_ptr(mr, a->va, &map);
	if (a->op == MROCE_OP_CMP_SWAP) {
		*orig = cmpxchg64(p, a->compare, a->swap_add);
	} else {
		do {
			old = READ_ONCE(*p);
		} while (cmpxchg64(p, old, old + a->swap_add) != old);
		*orig = old;
	}
	if (map)
		kunmap_local(map);
	rcu_read_unlock();
	return MROCE_OK;
}

/* The batch of the section that called into the core (peer.c). */
static struct mroce_batch *ctx_batch(void *ctx)
{
	struct mroce_peer *peer = ctx;

	lockdep_assert_held(&peer->lock);
	return peer->batch;
}

static void op_send_done(void *ctx, struct mroce_stream *st, u64 cookie,
			 int wc_status)
{
	mroce_sq_done(st_to_qp(st), (u32)cookie, wc_status, ctx_batch(ctx));
}

static void op_recv_done(void *ctx, struct mroce_stream *st,
			 const struct mroce_recv_done *rd)
{
	mroce_rq_done(st_to_qp(st), rd, ctx_batch(ctx));
}

static void op_stream_error(void *ctx, struct mroce_stream *st, int wc_status)
{
	struct mroce_conn *c = mroce_stream_get_conn(st);
	struct mroce_qp *qp = st_to_qp(st);
	struct mroce_stream_stats ss;

	/*
	 * The peer restarted before this stream carried anything: the QP
	 * moves to the new connection rather than failing with the old.
	 */
	if (c && mroce_conn_get_state(c) == MROCE_CONN_FAILED &&
	    mroce_conn_get_fail_reason(c) == MROCE_ERR_RESTARTED &&
	    mroce_stream_pristine(st)) {
		mroce_qp_rehome(qp);
		return;
	}
	/*
	 * Local errors are the responder's (or a READ response that could
	 * not be placed): verbs reports them as async events as well.  A
	 * requester's failure is told by its error completion.
	 */
	if (wc_status == MROCE_ERR_LOC_PROT)
		mroce_qp_event(qp, MROCE_QPEV_ACCESS_ERR);
	else if (wc_status == MROCE_ERR_LOC_LEN)
		mroce_qp_event(qp, MROCE_QPEV_REQ_ERR);
	/*
	 * Retry exceeded on a connection that lives: the QP's own stall
	 * bound fired (its oldest message made no progress for
	 * T * (retry_cnt + 1), at least dead_ms).  A connection failure says
	 * why in op_conn_event(); this one must not be silent either.
	 */
	mroce_stream_get_stats(st, &ss);
	if (wc_status == MROCE_ERR_RETRY_EXC && ss.stalls && c &&
	    mroce_conn_get_state(c) == MROCE_CONN_ESTABLISHED)
		ibdev_warn_ratelimited(&qp->mdev->ibdev,
				       "QP %u: a message made no progress within its timeout and retry count: retry exceeded\n",
				       qp->ibqp.qp_num);
	mroce_qp_error(qp, wc_status);
}

static void op_conn_event(void *ctx, struct mroce_conn *c, int event, u32 arg)
{
	struct mroce_peer *peer = ctx;
	struct mroce_qp *qp;
	unsigned int bkt;

	if (event != MROCE_EV_FAILED && event != MROCE_EV_CLOSED)
		return;
	if (event == MROCE_EV_FAILED) {
		/* Every QP on it fails: the operator needs to know why. */
		mroce_count(peer->mdev, MROCE_CNT_CONN_FAILED);
		if (peer->v4)
			ibdev_warn_ratelimited(&peer->mdev->ibdev,
					       "connection %u to %pI4 failed: %s\n",
					       mroce_conn_get_id(c), &peer->raddr.s6_addr32[3],
					       mroce_strerror(arg));
		else
			ibdev_warn_ratelimited(&peer->mdev->ibdev,
					       "connection %u to %pI6c failed: %s\n",
					       mroce_conn_get_id(c), &peer->raddr,
					       mroce_strerror(arg));
	}
	/*
	 * The peer is gone (unreachable, reset, restarted or closed): no new
	 * stream will use this connection, and every QP on it fails.  The
	 * core already failed the active streams of a failed connection.
	 */
	WRITE_ONCE(peer->closed, true);
	hash_for_each(peer->qps, bkt, qp, peer_node) {
		if (READ_ONCE(qp->rehome))
			continue;
		/* a closed peer leaves only flushes: say why */
		if (event == MROCE_EV_CLOSED)
			mroce_qp_event(qp, MROCE_QPEV_FATAL);
		mroce_qp_error(qp, MROCE_ERR_RETRY_EXC);
	}
}

const struct mroce_ops mroce_core_ops = {
	.stream_lookup = op_stream_lookup,
	.recv_claim = op_recv_claim,
	.place = op_place,
	.read_check = op_read_check,
	.atomic = op_atomic,
	.send_done = op_send_done,
	.recv_done = op_recv_done,
	.stream_error = op_stream_error,
	.conn_event = op_conn_event,
};
