/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Provider objects and the user side of the rings shared with metaroce.ko
 * (layouts in uapi/metaroce-abi.h).  Each ring index has one writer: the
 * provider reads back its own index with a plain load and publishes it with
 * a store-release; it reads the kernel's index with a load-acquire, which
 * orders the entry reads (CQ) or the slot reuse (SQ, RQ, SRQ) after it.
 */
#ifndef MROCE_PROVIDER_H
#define MROCE_PROVIDER_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "pabi34.h"
#include "metaroce-abi.h"

#define mroce_container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

struct mroce_context {
	struct verbs_context ibv_ctx;
	uint16_t udp_port;
};

/* A mapped ring: header, then num entries of stride bytes. */
struct mroce_uring {
	struct mroce_ring *hdr;
	uint8_t *entries;
	size_t map_len;
	uint32_t num;		/* power of two */
	uint32_t stride;
};

struct mroce_cq {
	struct verbs_cq vcq;
	pthread_spinlock_t lock;
	struct mroce_uring ring;
	/* Extended polling: the CQE between start_poll and end_poll. */
	uint32_t ex_cons;
	uint32_t ex_prod;
	const struct mroce_cqe *ex_cur;
};

struct mroce_srq {
	struct verbs_srq vsrq;
	pthread_spinlock_t lock;
	struct mroce_uring ring;
	uint32_t max_sge;
};

struct mroce_qp {
	struct verbs_qp vqp;
	pthread_spinlock_t sq_lock;
	pthread_spinlock_t rq_lock;
	struct mroce_uring sq;
	struct mroce_uring rq;	/* num == 0 with an SRQ */
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	uint32_t max_inline;
	int sq_sig_all;
	/* Extended send API (ibv_wr_*) between wr_start and wr_complete. */
	uint32_t wr_start_prod;
	uint32_t wr_prod;
	struct mroce_sqe *wr_cur;
	int wr_err;
};

static inline struct mroce_context *to_mctx(struct ibv_context *c)
{
	return mroce_container_of(c, struct mroce_context, ibv_ctx.context);
}

static inline struct mroce_cq *to_mcq(struct ibv_cq *c)
{
	return mroce_container_of(c, struct mroce_cq, vcq.cq);
}

static inline struct mroce_cq *cqex_to_mcq(struct ibv_cq_ex *c)
{
	return mroce_container_of(c, struct mroce_cq, vcq.cq_ex);
}

static inline struct mroce_qp *to_mqp(struct ibv_qp *q)
{
	return mroce_container_of(q, struct mroce_qp, vqp.qp);
}

static inline struct mroce_qp *qpex_to_mqp(struct ibv_qp_ex *q)
{
	return mroce_container_of(q, struct mroce_qp, vqp.qp_ex);
}

static inline struct mroce_srq *to_msrq(struct ibv_srq *s)
{
	return mroce_container_of(s, struct mroce_srq, vsrq.srq);
}

/* ---- ring access ---- */

static inline uint32_t mroce_load_acquire(const __u32 *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline uint32_t mroce_load_relaxed(const __u32 *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static inline void mroce_store_release(__u32 *p, uint32_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

static inline void *mroce_slot(const struct mroce_uring *r, uint32_t idx)
{
	return r->entries + (size_t)(idx & (r->num - 1)) * r->stride;
}

int mroce_ring_map(struct mroce_uring *r, int cmd_fd,
		   const struct mroce_mmap_info *mi, uint32_t num,
		   uint32_t stride, uint32_t min_stride);
void mroce_ring_unmap(struct mroce_uring *r);

/* ---- verbs, by file ---- */

/* mr.c */
struct ibv_mr *mroce_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
			    uint64_t hca_va, int access);
int mroce_dereg_mr(struct verbs_mr *vmr);

/* ah.c */
struct ibv_ah *mroce_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr);
int mroce_destroy_ah(struct ibv_ah *ah);

/* cq.c */
struct ibv_cq *mroce_create_cq(struct ibv_context *context, int cqe,
			       struct ibv_comp_channel *channel,
			       int comp_vector);
int mroce_destroy_cq(struct ibv_cq *cq);
int mroce_poll_cq(struct ibv_cq *cq, int ne, struct ibv_wc *wc);
int mroce_req_notify_cq(struct ibv_cq *cq, int solicited_only);
int mroce_cq_map(struct mroce_cq *cq, struct ibv_context *context,
		 const struct mroce_create_cq_resp *r, int cqe);

/* cq_ex.c */
struct ibv_cq_ex *mroce_create_cq_ex(struct ibv_context *context,
				     struct ibv_cq_init_attr_ex *attr);

/* qp.c */
struct ibv_qp *mroce_create_qp(struct ibv_pd *pd,
			       struct ibv_qp_init_attr *attr);
struct ibv_qp *mroce_create_qp_ex(struct ibv_context *context,
				  struct ibv_qp_init_attr_ex *attr);
int mroce_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		    int attr_mask);
int mroce_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		   int attr_mask, struct ibv_qp_init_attr *init_attr);
int mroce_destroy_qp(struct ibv_qp *qp);

/* post.c */
int mroce_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
		    struct ibv_send_wr **bad_wr);
int mroce_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
		    struct ibv_recv_wr **bad_wr);
int mroce_post_rqes(struct mroce_uring *ring, pthread_spinlock_t *lock,
		    uint32_t max_sge, struct ibv_recv_wr *wr,
		    struct ibv_recv_wr **bad_wr);
int mroce_doorbell(struct mroce_qp *qp);
bool mroce_sq_full(struct mroce_qp *qp, uint32_t prod);

/* qp_ex.c */
#define MROCE_SEND_OPS_FLAGS                                            \
	(IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | \
	 IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |            \
	 IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |  \
	 IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)
void mroce_qp_ex_init(struct mroce_qp *qp);

/* srq.c */
struct ibv_srq *mroce_create_srq(struct ibv_pd *pd,
				 struct ibv_srq_init_attr *attr);
int mroce_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr,
		     int attr_mask);
int mroce_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr);
int mroce_destroy_srq(struct ibv_srq *srq);
int mroce_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad_wr);

#endif /* MROCE_PROVIDER_H */
