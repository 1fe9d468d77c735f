// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Completion queues: the kernel produces CQEs into a ring mapped here;
 * ibv_poll_cq consumes them without a system call.  Notification arming
 * (ibv_req_notify_cq) is a system call; events arrive on the completion
 * channel and are read by libibverbs (ibv_get_cq_event).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mroce.h"

struct mroce_create_cq_cmd {
	struct ibv_create_cq ibv;
};

struct mroce_create_cq_resp_all {
	struct ib_uverbs_create_cq_resp ibv;
	struct mroce_create_cq_resp drv;
};

_Static_assert(offsetof(struct mroce_create_cq_resp_all, drv) ==
		       sizeof(struct ib_uverbs_create_cq_resp),
	       "driver payload must follow the core response");
_Static_assert(sizeof(struct mroce_cqe) == 64, "CQE is 64 bytes");

/* Check the kernel's answer, map the ring; shared with cq_ex.c. */
int mroce_cq_map(struct mroce_cq *cq, struct ibv_context *context,
		 const struct mroce_create_cq_resp *r, int cqe)
{
	int ret;

	if (r->entries < (uint32_t)cqe)
		return EPROTO;
	ret = mroce_ring_map(&cq->ring, context->cmd_fd, &r->ring, r->entries,
			     sizeof(struct mroce_cqe),
			     sizeof(struct mroce_cqe));
	if (ret)
		return ret;
	pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	return 0;
}

struct ibv_cq *mroce_create_cq(struct ibv_context *context, int cqe,
			       struct ibv_comp_channel *channel,
			       int comp_vector)
{
	struct mroce_create_cq_resp_all resp = {};
	struct mroce_create_cq_cmd cmd = {};
	struct mroce_cq *cq;
	int ret;

	if (cqe < 1) {
		errno = EINVAL;
		return NULL;
	}
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return NULL;
	ret = ibv_cmd_create_cq(context, cqe, channel, comp_vector,
				&cq->vcq.cq, &cmd.ibv, sizeof(cmd), &resp.ibv,
				sizeof(resp));
	if (ret)
		goto err_free;

	ret = mroce_cq_map(cq, context, &resp.drv, cqe);
	if (ret)
		goto err_destroy;
	return &cq->vcq.cq;

err_destroy:
	ibv_cmd_destroy_cq(&cq->vcq.cq);
err_free:
	free(cq);
	errno = ret;
	return NULL;
}

int mroce_destroy_cq(struct ibv_cq *ibcq)
{
	struct mroce_cq *cq = to_mcq(ibcq);
	int ret;

	ret = ibv_cmd_destroy_cq(ibcq);
	if (ret)
		return ret;
	mroce_ring_unmap(&cq->ring);
	pthread_spin_destroy(&cq->lock);
	free(cq);
	return 0;
}

static void mroce_cqe_to_wc(const struct mroce_cqe *e, struct ibv_wc *wc)
{
	wc->wr_id = e->wr_id;
	wc->status = e->status;
	wc->opcode = e->opcode;
	wc->vendor_err = e->vendor_err;
	wc->byte_len = e->byte_len;
	wc->imm_data = e->imm_data;
	wc->qp_num = e->qp_num;
	wc->src_qp = e->src_qp;
	wc->wc_flags = e->wc_flags;
	wc->pkey_index = e->pkey_index;
	wc->slid = e->slid;
	wc->sl = e->sl;
	wc->dlid_path_bits = e->dlid_path_bits;
}

int mroce_poll_cq(struct ibv_cq *ibcq, int ne, struct ibv_wc *wc)
{
	struct mroce_cq *cq = to_mcq(ibcq);
	struct mroce_ring *hdr = cq->ring.hdr;
	uint32_t cons, prod;
	int n = 0;

	pthread_spin_lock(&cq->lock);
	cons = mroce_load_relaxed(&hdr->cons);
	prod = mroce_load_acquire(&hdr->prod);
	if (prod - cons > cq->ring.num) {
		/* Only a broken kernel gets here; report, never read junk. */
		pthread_spin_unlock(&cq->lock);
		return -EIO;
	}
	while (n < ne && cons != prod) {
		mroce_cqe_to_wc(mroce_slot(&cq->ring, cons), &wc[n]);
		cons++;
		n++;
	}
	if (n)
		mroce_store_release(&hdr->cons, cons);
	pthread_spin_unlock(&cq->lock);
	return n;
}

int mroce_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	return ibv_cmd_req_notify_cq(ibcq, solicited_only);
}
