// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Completion queues.  The kernel produces CQEs into a ring; the provider
 * polls it from userspace, kernel consumers through poll_cq.  A full ring
 * is an overflow: the CQE is dropped, counted, and IB_EVENT_CQ_ERR is
 * raised, never a silent loss.
 *
 * Completions are written inside a peer's critical section; the completion
 * handler is called after the peer lock is dropped (struct mroce_batch),
 * so a consumer may post from it.  Handlers run under rcu_read_lock() and
 * destroy waits for a grace period, so a CQ on a batch list stays alive.
 */
#include <linux/log2.h>
#include <linux/vmalloc.h>

#include "metaroce.h"

static void cq_ev_work(struct work_struct *work)
{
	struct mroce_cq *cq = container_of(work, struct mroce_cq, ev_work);
	struct ib_event ev = {
		.device = cq->ibcq.device,
		.element.cq = &cq->ibcq,
		.event = IB_EVENT_CQ_ERR,
	};

	if (cq->ibcq.event_handler)
		cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
}

int mroce_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    struct ib_udata *udata)
{
	struct mroce_dev *mdev = to_mdev(ibcq->device);
	struct mroce_cq *cq = to_mcq(ibcq);
	struct mroce_create_cq_resp resp = {};
	u32 entries;
	int err;

	if (attr->flags)
		return -EOPNOTSUPP;
	if (attr->cqe < 1 || attr->cqe > MROCE_MAX_CQE)
		return -EINVAL;
	if (udata) {
		if (udata->outlen < sizeof(resp))
			return -EINVAL;
		if (udata->inlen &&
		    !ib_is_udata_cleared(udata, 0, udata->inlen))
			return -EINVAL;
	}
	if (atomic_inc_return(&mdev->num_cqs) > MROCE_MAX_CQ) {
		err = -ENOMEM;
		goto err_count;
	}

	entries = roundup_pow_of_two(attr->cqe);
	cq->mdev = mdev;
	spin_lock_init(&cq->lock);
	INIT_LIST_HEAD(&cq->notify_node);
	INIT_WORK(&cq->ev_work, cq_ev_work);
	err = mroce_queue_alloc(&cq->q, udata, entries,
				sizeof(struct mroce_cqe), &resp.ring);
	if (err)
		goto err_count;
	if (!udata) {
		cq->kqp = kvcalloc(entries, sizeof(*cq->kqp), GFP_KERNEL_ACCOUNT);
		if (!cq->kqp) {
			err = -ENOMEM;
			goto err_queue;
		}
	}
	ibcq->cqe = entries;
	if (udata) {
		resp.entries = entries;
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_queue;
	}
	return 0;

err_queue:
	kvfree(cq->kqp);
	mroce_queue_free(&cq->q);
err_count:
	atomic_dec(&mdev->num_cqs);
	return err;
}

/*
 * ib_free_cq() (kernel consumers) cancels its polling work before it calls
 * destroy_cq, and a peer's batch that is about to call the handler would
 * queue that work again, on a CQ about to be freed.  Let such batches end
 * first: they call the handler inside an RCU read-side section.
 */
int mroce_pre_destroy_cq(struct ib_cq *ibcq)
{
	synchronize_rcu();
	return 0;
}

int mroce_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct mroce_cq *cq = to_mcq(ibcq);

	cancel_work_sync(&cq->ev_work);
	/* A batch of a peer may still be about to call the handler. */
	synchronize_rcu();
	kvfree(cq->kqp);
	mroce_queue_free(&cq->q);
	atomic_dec(&cq->mdev->num_cqs);
	return 0;
}

static u32 cq_cons(struct mroce_cq *cq)
{
	/* The provider owns cons of a user CQ: read it, trust nothing. */
	return cq->kqp ? cq->kcons : mroce_ring_load(&cq->q.hdr->cons);
}

/*
 * Append @cqe.  @solicited: a solicited receive (errors count as solicited,
 * as verbs wants for IB_CQ_SOLICITED).  The notification is queued on @b.
 *
 * Verbs leaves every field of an error completion but wr_id, status and
 * qp_num undefined; rxe zeroes them (opcode reads IB_WC_SEND, on receives
 * too), and so does this, whatever the producer filled in.
 *
 * Returns false when the CQ overflowed and @cqe was dropped.
 */
bool mroce_cq_post(struct mroce_cq *cq, const struct mroce_cqe *cqe,
		   struct mroce_qp *qp, bool solicited, struct mroce_batch *b)
{
	struct mroce_cqe err;
	unsigned long flags;
	u32 slot;

	if (cqe->status != IB_WC_SUCCESS) {
		memset(&err, 0, sizeof(err));
		err.wr_id = cqe->wr_id;
		err.status = cqe->status;
		err.qp_num = cqe->qp_num;
		err.vendor_err = cqe->vendor_err;
		cqe = &err;
	}
	spin_lock_irqsave(&cq->lock, flags);
	if (cq->overflow || cq->prod - cq_cons(cq) >= cq->q.entries) {
		mroce_count(cq->mdev, MROCE_CNT_CQ_OVERFLOW);
		if (!cq->overflow) {
			cq->overflow = true;
			schedule_work(&cq->ev_work);
		}
		spin_unlock_irqrestore(&cq->lock, flags);
		return false;
	}
	slot = cq->prod & (cq->q.entries - 1);
	memcpy(mroce_queue_slot(&cq->q, slot), cqe, sizeof(*cqe));
	if (cq->kqp)
		cq->kqp[slot] = qp;
	mroce_ring_store(&cq->q.hdr->prod, ++cq->prod);

	if (cq->notify == IB_CQ_NEXT_COMP ||
	    (cq->notify == IB_CQ_SOLICITED &&
	     (solicited || cqe->status != IB_WC_SUCCESS))) {
		cq->notify = 0;
		if (!cq->notify_queued) {
			cq->notify_queued = true;
			list_add_tail(&cq->notify_node, &b->cqs);
		}
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	return true;
}

/* Call the completion handlers queued on @b (no peer lock held). */
void mroce_cq_notify_batch(struct mroce_batch *b)
{
	struct mroce_cq *cq, *tmp;
	unsigned long flags;

	list_for_each_entry_safe(cq, tmp, &b->cqs, notify_node) {
		spin_lock_irqsave(&cq->lock, flags);
		list_del_init(&cq->notify_node);
		cq->notify_queued = false;
		spin_unlock_irqrestore(&cq->lock, flags);
		if (cq->ibcq.comp_handler)
			cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
	}
}

int mroce_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct mroce_cq *cq = to_mcq(ibcq);
	unsigned long irqflags;
	int ret = 0;

	spin_lock_irqsave(&cq->lock, irqflags);
	if ((flags & IB_CQ_SOLICITED_MASK) == IB_CQ_SOLICITED) {
		if (cq->notify != IB_CQ_NEXT_COMP)
			cq->notify = IB_CQ_SOLICITED;
	} else {
		cq->notify = IB_CQ_NEXT_COMP;
	}
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) && cq->prod != cq_cons(cq))
		ret = 1;
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return ret;
}

/* Kernel consumers only: a user CQ is polled by the provider. */
int mroce_poll_cq(struct ib_cq *ibcq, int num, struct ib_wc *wc)
{
	struct mroce_cq *cq = to_mcq(ibcq);
	const struct mroce_cqe *e;
	unsigned long flags;
	struct mroce_qp *qp;
	int n = 0;
	u32 slot;

	if (!cq->kqp)
		return -EINVAL;
	spin_lock_irqsave(&cq->lock, flags);
	while (n < num && cq->kcons != cq->prod) {
		slot = cq->kcons & (cq->q.entries - 1);
		e = mroce_queue_slot(&cq->q, slot);
		qp = cq->kqp[slot];
		memset(&wc[n], 0, sizeof(wc[n]));
		wc[n].wr_id = e->wr_id;
		wc[n].status = e->status;
		wc[n].opcode = e->opcode;
		wc[n].vendor_err = e->vendor_err;
		wc[n].byte_len = e->byte_len;
		wc[n].qp = qp ? &qp->ibqp : NULL;
		wc[n].ex.imm_data = (__force __be32)e->imm_data;
		wc[n].src_qp = e->src_qp;
		wc[n].wc_flags = e->wc_flags;
		/* the provider's wc_flags have no bit for it */
		if (e->network_hdr_type)
			wc[n].wc_flags |= IB_WC_WITH_NETWORK_HDR_TYPE;
		wc[n].pkey_index = e->pkey_index;
		wc[n].port_num = 1;
		wc[n].network_hdr_type = e->network_hdr_type;
		cq->kcons++;
		n++;
	}
	mroce_ring_store(&cq->q.hdr->cons, cq->kcons);
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}
