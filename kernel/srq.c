// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Shared receive queues: a ring of receives like a QP's RQ, consumed when
 * the first packet of a message claims one (mroce_srq_take, under the
 * claiming peer's lock).  The limit event fires when a claim leaves fewer
 * receives than the armed limit; the provider posts without a system call,
 * so claims are the only moment the kernel can notice.
 */
#include <linux/log2.h>

#include "metaroce.h"

#define SRQ_EV_LIMIT	0

static void srq_ev_work(struct work_struct *work)
{
	struct mroce_srq *srq = container_of(work, struct mroce_srq, ev_work);
	struct ib_event ev = {
		.device = srq->ibsrq.device,
		.element.srq = &srq->ibsrq,
		.event = IB_EVENT_SRQ_LIMIT_REACHED,
	};

	if (test_and_clear_bit(SRQ_EV_LIMIT, &srq->ev_pending) &&
	    srq->ibsrq.event_handler)
		srq->ibsrq.event_handler(&ev, srq->ibsrq.srq_context);
}

static u32 rqe_stride(u32 max_sge)
{
	return roundup_pow_of_two(sizeof(struct mroce_rqe) +
				  max_sge * sizeof(struct mroce_sge));
}

int mroce_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		     struct ib_udata *udata)
{
	struct mroce_dev *mdev = to_mdev(ibsrq->device);
	struct mroce_srq *srq = to_msrq(ibsrq);
	struct mroce_create_srq_resp resp = {};
	struct ib_srq_attr *a = &init->attr;
	u32 entries;
	int err;

	if (init->srq_type != IB_SRQT_BASIC)
		return -EOPNOTSUPP;
	if (!a->max_wr || a->max_wr > MROCE_MAX_SRQ_WR ||
	    a->max_sge > MROCE_MAX_SGE || a->srq_limit > a->max_wr)
		return -EINVAL;
	if (udata) {
		if (udata->outlen < sizeof(resp))
			return -EINVAL;
		if (udata->inlen &&
		    !ib_is_udata_cleared(udata, 0, udata->inlen))
			return -EINVAL;
	}
	if (atomic_inc_return(&mdev->num_srqs) > MROCE_MAX_SRQ) {
		err = -ENOMEM;
		goto err_count;
	}

	entries = roundup_pow_of_two(a->max_wr);
	srq->mdev = mdev;
	srq->user = !!udata;
	srq->max_sge = max_t(u32, a->max_sge, 1);
	srq->limit = a->srq_limit;
	spin_lock_init(&srq->lock);
	spin_lock_init(&srq->plock);
	INIT_WORK(&srq->ev_work, srq_ev_work);
	err = mroce_queue_alloc(&srq->q, udata, entries,
				rqe_stride(srq->max_sge), &resp.ring);
	if (err)
		goto err_count;
	a->max_wr = entries;
	a->max_sge = srq->max_sge;
	if (udata) {
		resp.entries = entries;
		resp.stride = srq->q.stride;
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_queue;
	}
	return 0;

err_queue:
	mroce_queue_free(&srq->q);
err_count:
	atomic_dec(&mdev->num_srqs);
	return err;
}

int mroce_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct mroce_srq *srq = to_msrq(ibsrq);

	if (mask & ~(IB_SRQ_MAX_WR | IB_SRQ_LIMIT))
		return -EINVAL;
	/* The ring is mapped by the provider: it cannot grow. */
	if (mask & IB_SRQ_MAX_WR)
		return -EOPNOTSUPP;
	if (mask & IB_SRQ_LIMIT) {
		if (attr->srq_limit > srq->q.entries)
			return -EINVAL;
		spin_lock_bh(&srq->lock);
		srq->limit = attr->srq_limit;
		spin_unlock_bh(&srq->lock);
	}
	return 0;
}

int mroce_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct mroce_srq *srq = to_msrq(ibsrq);

	attr->max_wr = srq->q.entries;
	attr->max_sge = srq->max_sge;
	attr->srq_limit = READ_ONCE(srq->limit);
	return 0;
}

int mroce_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct mroce_srq *srq = to_msrq(ibsrq);

	cancel_work_sync(&srq->ev_work);
	mroce_queue_free(&srq->q);
	atomic_dec(&srq->mdev->num_srqs);
	return 0;
}

int mroce_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad_wr)
{
	struct mroce_srq *srq = to_msrq(ibsrq);
	struct mroce_sge *sge;
	struct mroce_rqe *rqe;
	unsigned long flags;
	int i, err = 0;
	u32 prod;

	if (srq->user) {
		*bad_wr = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&srq->plock, flags);
	prod = srq->q.hdr->prod;
	for (; wr; wr = wr->next) {
		if (wr->num_sge < 0 || wr->num_sge > srq->max_sge) {
			err = -EINVAL;
			break;
		}
		if (prod - mroce_ring_load(&srq->q.hdr->cons) >=
		    srq->q.entries) {
			err = -ENOMEM;
			break;
		}
		rqe = mroce_queue_slot(&srq->q, prod);
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
	mroce_ring_store(&srq->q.hdr->prod, prod);
	spin_unlock_irqrestore(&srq->plock, flags);
	if (err)
		*bad_wr = wr;
	return err;
}

/*
 * Take the oldest receive into @rcv (room for @max_sge SGEs).  -EAGAIN when
 * none is posted; -EINVAL for an entry that breaks the rules (it is
 * consumed all the same, so the queue moves on).
 */
int mroce_srq_take(struct mroce_srq *srq, struct mroce_rcv *rcv,
		   u32 max_sge)
{
	const struct mroce_rqe *rqe;
	u32 prod, avail, i;
	int err = 0;

	spin_lock(&srq->lock);
	prod = mroce_ring_load(&srq->q.hdr->prod);
	avail = prod - srq->cons;
	if (avail > srq->q.entries) {
		mroce_count(srq->mdev, MROCE_CNT_BAD_RING);
		avail = 0;
	}
	if (!avail) {
		err = -EAGAIN;
		goto out;
	}
	rqe = mroce_queue_slot(&srq->q, srq->cons);
	rcv->wr_id = READ_ONCE(rqe->wr_id);
	rcv->num_sge = READ_ONCE(rqe->num_sge);
	rcv->capacity = 0;
	if (rcv->num_sge > min(srq->max_sge, max_sge) ||
	    READ_ONCE(rqe->reserved)) {
		mroce_count(srq->mdev, MROCE_CNT_BAD_WQE);
		rcv->num_sge = 0;
		err = -EINVAL;
	} else {
		memcpy(rcv->sge, rqe + 1, rcv->num_sge * sizeof(rcv->sge[0]));
		for (i = 0; i < rcv->num_sge; i++)
			rcv->capacity = min_t(u64, (u64)rcv->capacity +
					      rcv->sge[i].length, U32_MAX);
	}
	srq->cons++;
	mroce_ring_store(&srq->q.hdr->cons, srq->cons);
	avail--;
	if (srq->limit && avail < srq->limit) {
		srq->limit = 0;
		set_bit(SRQ_EV_LIMIT, &srq->ev_pending);
		schedule_work(&srq->ev_work);
	}
out:
	spin_unlock(&srq->lock);
	return err;
}
