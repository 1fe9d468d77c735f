// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * verbs_api: the provider's verbs semantics on a real pair of devices, the
 * cases a data transfer test does not reach: completion channels and
 * solicited events, full queues (ENOMEM with bad_wr), invalid work requests
 * (EINVAL, nothing posted), unsignaled sends, the extended send API with an
 * error mid-batch, SRQ limits, extended CQ polling, remote access errors
 * (wrong, stale or out-of-range keys, missing rights), and the verbs that
 * must fail cleanly with EOPNOTSUPP.  TAP output; exit 0 if every check passed.
 *
 *   verbs_api -a DEV_A -A GIDX_A -b DEV_B -B GIDX_B
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <endian.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#define BUF_SIZE	(1 << 20)
#define DEPTH		16

struct end {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	union ibv_gid gid;
	int gidx;
	enum ibv_mtu mtu;
	struct ibv_qp_cap cap;
};

static int ntest, nfail;

static void check(bool ok, const char *fmt, ...)
{
	va_list ap;

	ntest++;
	if (!ok)
		nfail++;
	printf("%sok %d - ", ok ? "" : "not ", ntest);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

static void die(const char *fmt, ...)
{
	va_list ap;

	printf("Bail out! ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf(" (errno %s)\n", strerror(errno));
	exit(1);
}

static struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	for (i = 0; l && l[i]; i++)
		if (!strcmp(ibv_get_device_name(l[i]), name))
			ctx = ibv_open_device(l[i]);
	if (l)
		ibv_free_device_list(l);
	if (!ctx)
		die("cannot open %s", name);
	return ctx;
}

static struct ibv_qp *make_qp(struct end *e, struct ibv_srq *srq,
			      struct ibv_qp_cap *cap)
{
	struct ibv_qp_init_attr a = {
		.send_cq = e->cq, .recv_cq = e->cq, .srq = srq,
		.cap = { .max_send_wr = DEPTH, .max_recv_wr = DEPTH,
			 .max_send_sge = 2, .max_recv_sge = 2,
			 .max_inline_data = 32 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_qp *qp = ibv_create_qp(e->pd, &a);

	if (qp && cap)
		*cap = a.cap;
	return qp;
}

static void end_init(struct end *e, const char *dev, int gidx)
{
	struct ibv_port_attr pa;

	e->ctx = open_dev(dev);
	e->gidx = gidx;
	if (ibv_query_port(e->ctx, 1, &pa) ||
	    ibv_query_gid(e->ctx, 1, gidx, &e->gid))
		die("query port/gid of %s", dev);
	e->mtu = pa.active_mtu;
	e->pd = ibv_alloc_pd(e->ctx);
	e->ch = ibv_create_comp_channel(e->ctx);
	if (!e->pd || !e->ch)
		die("pd/channel");
	e->cq = ibv_create_cq(e->ctx, 4 * DEPTH, NULL, e->ch, 0);
	if (!e->cq)
		die("ibv_create_cq");
	e->buf = aligned_alloc(4096, BUF_SIZE);
	if (!e->buf)
		die("memory");
	memset(e->buf, 0, BUF_SIZE);
	e->mr = ibv_reg_mr(e->pd, e->buf, BUF_SIZE,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	if (!e->mr)
		die("ibv_reg_mr");
	e->qp = make_qp(e, NULL, &e->cap);
	if (!e->qp)
		die("ibv_create_qp");
}

static int to_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC,
	};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			     IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

static int to_rts(struct end *e, struct ibv_qp *qp, const struct end *peer,
		  uint32_t peer_qpn)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = e->mtu < peer->mtu ? e->mtu : peer->mtu,
		.dest_qp_num = peer_qpn,
		.max_dest_rd_atomic = 4,
		.min_rnr_timer = 12,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = peer->gid,
				      .sgid_index = e->gidx,
				      .hop_limit = 64 } },
	};

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

/* Poll cq until n completions or timeout; returns how many arrived. */
static int wait_wc(struct ibv_cq *cq, struct ibv_wc *wc, int n, int ms)
{
	struct timespec t0, t;
	int got = 0, r;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (got < n) {
		r = ibv_poll_cq(cq, n - got, wc + got);
		if (r < 0)
			return -1;
		got += r;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 +
		    (t.tv_nsec - t0.tv_nsec) / 1000000 > ms)
			break;
	}
	return got;
}

static bool all_ok(const struct ibv_wc *wc, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (wc[i].status != IBV_WC_SUCCESS)
			return false;
	return true;
}

static struct ibv_sge sge(struct end *e, size_t off, uint32_t len)
{
	struct ibv_sge s = {
		.addr = (uintptr_t)e->buf + off, .length = len,
		.lkey = e->mr->lkey,
	};

	return s;
}

static int post_recvs(struct end *e, int n)
{
	struct ibv_recv_wr wr, *bad;
	struct ibv_sge s = sge(e, BUF_SIZE / 2, 4096);
	int i;

	for (i = 0; i < n; i++) {
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = 1000 + i;
		wr.sg_list = &s;
		wr.num_sge = 1;
		if (ibv_post_recv(e->qp, &wr, &bad))
			return -1;
	}
	return 0;
}

/* Event on the channel within ms? Acks it. */
static bool got_event(struct end *e, int ms)
{
	struct pollfd p = { .fd = e->ch->fd, .events = POLLIN };
	struct ibv_cq *cq;
	void *ctx;

	if (poll(&p, 1, ms) != 1)
		return false;
	if (ibv_get_cq_event(e->ch, &cq, &ctx))
		return false;
	ibv_ack_cq_events(cq, 1);
	return cq == e->cq;
}

static void test_events(struct end *a, struct end *b)
{
	struct ibv_send_wr wr = {}, *bad;
	struct ibv_sge s = sge(a, 0, 64);
	struct ibv_wc wc[4];

	/* poll() waits with a timeout; the read itself must never block. */
	fcntl(a->ch->fd, F_SETFL, fcntl(a->ch->fd, F_GETFL) | O_NONBLOCK);
	fcntl(b->ch->fd, F_SETFL, fcntl(b->ch->fd, F_GETFL) | O_NONBLOCK);
	check(!post_recvs(b, 2), "post 2 receives");
	check(!ibv_req_notify_cq(a->cq, 0), "ibv_req_notify_cq (all)");
	wr.wr_id = 1;
	wr.opcode = IBV_WR_SEND;
	wr.sg_list = &s;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	check(!ibv_post_send(a->qp, &wr, &bad), "post a signaled SEND");
	check(got_event(a, 10000), "completion event on the channel (ibv_get_cq_event)");
	check(wait_wc(a->cq, wc, 1, 10000) == 1 && all_ok(wc, 1) &&
	      wc[0].opcode == IBV_WC_SEND && wc[0].wr_id == 1,
	      "SEND completion after the event");
	check(wait_wc(b->cq, wc, 1, 10000) == 1 && all_ok(wc, 1) &&
	      wc[0].opcode == IBV_WC_RECV && wc[0].byte_len == 64,
	      "receive completion");

	/* Solicited only: the receiver's CQ wakes for a solicited SEND. */
	check(!ibv_req_notify_cq(b->cq, 1), "ibv_req_notify_cq (solicited only)");
	wr.wr_id = 2;
	wr.send_flags = IBV_SEND_SIGNALED | IBV_SEND_SOLICITED;
	check(!ibv_post_send(a->qp, &wr, &bad), "post a solicited SEND");
	check(got_event(b, 10000), "solicited event at the receiver");
	check(wait_wc(b->cq, wc, 1, 10000) == 1 && all_ok(wc, 1) &&
	      wc[0].opcode == IBV_WC_RECV, "solicited receive completed");
	check(wait_wc(a->cq, wc, 1, 10000) == 1 && all_ok(wc, 1),
	      "solicited SEND completed");
}

static void test_invalid(struct end *a, struct end *b)
{
	struct ibv_send_wr wr[2], *bad;
	struct ibv_sge s[4];
	struct ibv_wc wc[4];
	int i, ret;

	for (i = 0; i < 4; i++)
		s[i] = sge(a, 4096 * i, 8);

	/* WR 0 valid, WR 1 broken: EINVAL, bad_wr = WR 1, WR 0 posted. */
	static const char *const what[] = {
		"unknown opcode", "more SGEs than max_send_sge",
		"inline data over max_inline_data", "unaligned atomic",
		"inline RDMA READ", "unknown send flag",
	};

	for (i = 0; i < 6; i++) {
		memset(wr, 0, sizeof(wr));
		wr[0].wr_id = 10;
		wr[0].opcode = IBV_WR_RDMA_WRITE;
		wr[0].sg_list = s;
		wr[0].num_sge = 1;
		wr[0].send_flags = IBV_SEND_SIGNALED;
		wr[0].wr.rdma.remote_addr = (uintptr_t)b->buf;
		wr[0].wr.rdma.rkey = b->mr->rkey;
		wr[0].next = &wr[1];
		wr[1] = wr[0];
		wr[1].wr_id = 11;
		wr[1].next = NULL;
		switch (i) {
		case 0:
			wr[1].opcode = 99;
			break;
		case 1:
			wr[1].num_sge = a->cap.max_send_sge + 1;
			break;
		case 2:
			s[3].length = a->cap.max_inline_data + 1;
			wr[1].sg_list = &s[3];
			wr[1].send_flags |= IBV_SEND_INLINE;
			break;
		case 3:
			wr[1].opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
			wr[1].wr.atomic.remote_addr = (uintptr_t)b->buf + 4;
			wr[1].wr.atomic.rkey = b->mr->rkey;
			break;
		case 4:
			wr[1].opcode = IBV_WR_RDMA_READ;
			wr[1].send_flags |= IBV_SEND_INLINE;
			break;
		case 5:
			wr[1].send_flags |= 1u << 20;
			break;
		}
		bad = NULL;
		ret = ibv_post_send(a->qp, wr, &bad);
		check(ret == EINVAL && bad == &wr[1],
		      "%s: EINVAL with bad_wr at it (got %d)", what[i],
		      ret);
		check(wait_wc(a->cq, wc, 2, 3000) == 1 && all_ok(wc, 1) &&
		      wc[0].wr_id == 10,
		      "%s: the valid WR before it completed, nothing else",
		      what[i]);
	}
	s[3].length = 8;

	/* Receives on a QP that uses an SRQ: EINVAL. */
	{
		struct ibv_srq_init_attr sa = { .attr = { .max_wr = 8,
							  .max_sge = 1 } };
		struct ibv_srq *srq = ibv_create_srq(a->pd, &sa);
		struct ibv_qp *qp = srq ? make_qp(a, srq, NULL) : NULL;
		struct ibv_recv_wr rw = { .sg_list = s, .num_sge = 1 }, *rbad;

		check(srq && qp, "QP with an SRQ created");
		if (qp) {
			check(to_init(qp) == 0, "QP with SRQ to INIT");
			rbad = NULL;
			check(ibv_post_recv(qp, &rw, &rbad) == EINVAL &&
			      rbad == &rw,
			      "ibv_post_recv on a QP with an SRQ: EINVAL");
			ibv_destroy_qp(qp);
		}
		if (srq)
			ibv_destroy_srq(srq);
	}

	/* A QP not yet in RTS takes no sends. */
	{
		struct ibv_qp *qp = make_qp(a, NULL, NULL);

		check(qp && to_init(qp) == 0, "second QP to INIT");
		if (qp) {
			bad = NULL;
			wr[0].next = NULL;
			check(ibv_post_send(qp, wr, &bad) == EINVAL &&
			      bad == wr, "ibv_post_send in INIT: EINVAL");
			ibv_destroy_qp(qp);
		}
	}
}

/* Index of bad in a chain, or -1. */
static long pos_of(const void *bad, const void *base, size_t sz)
{
	return bad ? (long)(((const char *)bad - (const char *)base) / sz) :
		     -1L;
}

/*
 * Post cap + 8 WRs in one call: the queue takes at least cap of them, then
 * ENOMEM with bad_wr at the first one it did not take.
 */
static void test_full(struct end *a, struct end *b)
{
	uint32_t n = a->cap.max_send_wr + 8, i;
	struct ibv_send_wr *wr = calloc(n, sizeof(*wr)), *bad;
	struct ibv_recv_wr *rw = calloc(n, sizeof(*rw)), *rbad;
	struct ibv_wc *wc = calloc(n, sizeof(*wc));
	struct ibv_sge s = sge(a, 0, 4096);
	struct ibv_qp_cap cap;
	struct ibv_qp *qp;
	long k;
	int ret, got;

	if (!wr || !rw || !wc)
		die("memory");
	usleep(100000);	/* let earlier completions free their slots */
	for (i = 0; i < n; i++) {
		wr[i].wr_id = i;
		wr[i].opcode = IBV_WR_RDMA_WRITE;
		wr[i].sg_list = &s;
		wr[i].num_sge = 1;
		wr[i].send_flags = IBV_SEND_SIGNALED;
		wr[i].wr.rdma.remote_addr = (uintptr_t)b->buf;
		wr[i].wr.rdma.rkey = b->mr->rkey;
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
	}
	bad = NULL;
	ret = ibv_post_send(a->qp, wr, &bad);
	k = pos_of(bad, wr, sizeof(*wr));
	check(ret == ENOMEM && k >= (long)a->cap.max_send_wr,
	      "%u WRs on a send queue of %u: ENOMEM with bad_wr at WR %ld (ret %d)",
	      n, a->cap.max_send_wr, k, ret);
	got = wait_wc(a->cq, wc, n, 20000);
	check(k >= 0 && got == k && all_ok(wc, got),
	      "the %ld WRs taken completed (%d)", k, got);
	for (i = 0; i < (uint32_t)got; i++)
		if (wc[i].wr_id != i)
			break;
	check(i == (uint32_t)got, "in posting order");

	/* Receive queue of a fresh QP: same rule. */
	qp = make_qp(a, NULL, &cap);
	if (qp && to_init(qp) == 0) {
		n = cap.max_recv_wr + 8;
		rw = realloc(rw, n * sizeof(*rw));
		for (i = 0; i < n; i++) {
			memset(&rw[i], 0, sizeof(rw[i]));
			rw[i].wr_id = i;
			rw[i].sg_list = &s;
			rw[i].num_sge = 1;
			rw[i].next = i + 1 < n ? &rw[i + 1] : NULL;
		}
		rbad = NULL;
		ret = ibv_post_recv(qp, rw, &rbad);
		k = pos_of(rbad, rw, sizeof(*rw));
		check(ret == ENOMEM && k >= (long)cap.max_recv_wr,
		      "%u receives on a receive queue of %u: ENOMEM with bad_wr at %ld",
		      n, cap.max_recv_wr, k);
	} else {
		check(false, "fresh QP for the receive queue test");
	}
	if (qp)
		ibv_destroy_qp(qp);
	free(wr);
	free(rw);
	free(wc);
}

static void test_unsignaled(struct end *a, struct end *b)
{
	struct ibv_send_wr wr[8], *bad;
	struct ibv_sge s = sge(a, 0, 256);
	struct ibv_wc wc[8];
	int i;

	memset(wr, 0, sizeof(wr));
	for (i = 0; i < 8; i++) {
		wr[i].wr_id = 100 + i;
		wr[i].opcode = IBV_WR_RDMA_WRITE;
		wr[i].sg_list = &s;
		wr[i].num_sge = 1;
		wr[i].wr.rdma.remote_addr = (uintptr_t)b->buf + 8192;
		wr[i].wr.rdma.rkey = b->mr->rkey;
		wr[i].next = i < 7 ? &wr[i + 1] : NULL;
	}
	wr[7].send_flags = IBV_SEND_SIGNALED | IBV_SEND_FENCE;
	check(!ibv_post_send(a->qp, wr, &bad), "7 unsignaled + 1 signaled fenced WRITE");
	check(wait_wc(a->cq, wc, 8, 5000) == 1 && all_ok(wc, 1) &&
	      wc[0].wr_id == 107, "exactly one completion, the signaled one");
}

static void test_wr_api(struct end *a, struct end *b)
{
	struct ibv_qp_init_attr_ex ax = {
		.send_cq = a->cq, .recv_cq = a->cq,
		.cap = { .max_send_wr = DEPTH, .max_recv_wr = DEPTH,
			 .max_send_sge = 2, .max_recv_sge = 1,
			 .max_inline_data = 16 },
		.qp_type = IBV_QPT_RC,
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = a->pd,
		.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE |
				  IBV_QP_EX_WITH_RDMA_READ |
				  IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD,
	};
	struct ibv_sge sl[3] = { sge(a, 0, 8), sge(a, 8, 8), sge(a, 16, 8) };
	struct ibv_qp *qp, *peer;
	struct ibv_qp_ex *qx;
	struct ibv_wc wc[4];
	uint64_t *word = (uint64_t *)(b->buf + 65536);
	int ret;

	/* Refused: what the ring QP does not have. */
	{
		struct ibv_qp_init_attr_ex bad_ax = ax;

		bad_ax.send_ops_flags |= IBV_QP_EX_WITH_BIND_MW;
		errno = 0;
		check(!ibv_create_qp_ex(a->ctx, &bad_ax) && errno == EOPNOTSUPP,
		      "ibv_create_qp_ex with BIND_MW: EOPNOTSUPP");
		bad_ax = ax;
		bad_ax.comp_mask |= IBV_QP_INIT_ATTR_CREATE_FLAGS;
		bad_ax.create_flags = IBV_QP_CREATE_SCATTER_FCS;
		errno = 0;
		check(!ibv_create_qp_ex(a->ctx, &bad_ax) &&
		      errno == EOPNOTSUPP,
		      "ibv_create_qp_ex with creation flags: EOPNOTSUPP");
	}

	qp = ibv_create_qp_ex(a->ctx, &ax);
	check(qp != NULL, "ibv_create_qp_ex with send ops flags");
	if (!qp)
		return;
	qx = ibv_qp_to_qp_ex(qp);
	check(qx != NULL, "ibv_qp_to_qp_ex");
	peer = make_qp(b, NULL, NULL);
	if (!qx || !peer || to_init(qp) || to_init(peer) ||
	    to_rts(a, qp, b, peer->qp_num) || to_rts(b, peer, a, qp->qp_num)) {
		check(false, "connect the extended QP");
		goto out;
	}

	*word = 40;
	ibv_wr_start(qx);
	qx->wr_id = 1;
	qx->wr_flags = 0;
	ibv_wr_rdma_write(qx, b->mr->rkey, (uintptr_t)b->buf + 4096);
	ibv_wr_set_inline_data(qx, "hello, metaroce", 16);
	qx->wr_id = 2;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_fetch_add(qx, b->mr->rkey, (uintptr_t)word, 2);
	ibv_wr_set_sge(qx, a->mr->lkey, (uintptr_t)a->buf + 512, 8);
	ret = ibv_wr_complete(qx);
	check(ret == 0, "ibv_wr_*: inline WRITE + FETCH_ADD batch (%d)", ret);
	check(wait_wc(a->cq, wc, 1, 10000) == 1 && all_ok(wc, 1) &&
	      wc[0].wr_id == 2 && wc[0].opcode == IBV_WC_FETCH_ADD,
	      "batch completed");
	check(!memcmp(b->buf + 4096, "hello, metaroce", 16),
	      "inline WRITE data arrived");
	check(*word == 42 && *(uint64_t *)(a->buf + 512) == 40,
	      "FETCH_ADD executed once, returned the old value");

	/* An error mid-batch: nothing of the batch is posted. */
	ibv_wr_start(qx);
	qx->wr_id = 3;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(qx, b->mr->rkey, (uintptr_t)b->buf + 4096);
	ibv_wr_set_sge(qx, a->mr->lkey, (uintptr_t)a->buf, 8);
	qx->wr_id = 4;
	ibv_wr_rdma_write(qx, b->mr->rkey, (uintptr_t)b->buf + 4096);
	ibv_wr_set_sge_list(qx, 3, sl);		/* max_send_sge is 2 */
	ret = ibv_wr_complete(qx);
	check(ret == EINVAL, "ibv_wr_complete after too many SGEs: EINVAL (%d)",
	      ret);
	check(wait_wc(a->cq, wc, 1, 1000) == 0,
	      "nothing of the failed batch was posted");

	/* ibv_wr_abort leaves the queue usable. */
	ibv_wr_start(qx);
	qx->wr_id = 5;
	ibv_wr_rdma_read(qx, b->mr->rkey, (uintptr_t)b->buf + 4096);
	ibv_wr_abort(qx);
	ibv_wr_start(qx);
	qx->wr_id = 6;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_read(qx, b->mr->rkey, (uintptr_t)b->buf + 4096);
	ibv_wr_set_sge(qx, a->mr->lkey, (uintptr_t)a->buf + 1024, 16);
	check(ibv_wr_complete(qx) == 0 && wait_wc(a->cq, wc, 2, 10000) == 1 &&
	      all_ok(wc, 1) && wc[0].wr_id == 6 &&
	      !memcmp(a->buf + 1024, "hello, metaroce", 16),
	      "after ibv_wr_abort: a READ batch works and reads the data");
out:
	if (peer)
		ibv_destroy_qp(peer);
	ibv_destroy_qp(qp);
}

static void test_srq(struct end *a)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 8, .max_sge = 1 } };
	struct ibv_srq_attr q = { .srq_limit = 2 };
	struct ibv_srq *srq = ibv_create_srq(a->pd, &sa);
	struct ibv_recv_wr *rw, *bad;
	struct ibv_sge s = sge(a, 0, 64);
	uint32_t n, i;
	long pos;
	int ret;

	check(srq != NULL, "ibv_create_srq");
	if (!srq)
		return;
	check(ibv_modify_srq(srq, &q, IBV_SRQ_LIMIT) == 0,
	      "ibv_modify_srq srq_limit");
	memset(&q, 0, sizeof(q));
	ret = ibv_query_srq(srq, &q);
	check(ret == 0 && q.max_wr >= 8 && q.srq_limit == 2,
	      "ibv_query_srq: max_wr %u srq_limit %u", q.max_wr, q.srq_limit);
	q.max_wr = 1024;
	check(ibv_modify_srq(srq, &q, IBV_SRQ_MAX_WR) == EOPNOTSUPP,
	      "resizing an SRQ: EOPNOTSUPP");
	/*
	 * More receives than the capacity it reported (which may be rounded
	 * up from the 8 asked for): the post stops with ENOMEM at a receive
	 * past the 8 asked for and no further than that capacity.
	 */
	n = sa.attr.max_wr + 8;
	rw = calloc(n, sizeof(*rw));
	check(rw != NULL, "memory for %u receives", n);
	if (!rw) {
		ibv_destroy_srq(srq);
		return;
	}
	for (i = 0; i < n; i++) {
		rw[i].wr_id = i;
		rw[i].sg_list = &s;
		rw[i].num_sge = 1;
		rw[i].next = i + 1 < n ? &rw[i + 1] : NULL;
	}
	bad = NULL;
	ret = ibv_post_srq_recv(srq, rw, &bad);
	pos = pos_of(bad, rw, sizeof(*rw));
	check(ret == ENOMEM && pos >= 8 && pos <= (long)sa.attr.max_wr,
	      "%u receives on an SRQ of %u: ENOMEM with bad_wr at %ld", n,
	      sa.attr.max_wr, pos);
	free(rw);
	check(ibv_destroy_srq(srq) == 0, "ibv_destroy_srq");
}

/* In the error state, new work requests complete at once, flushed. */
static void test_err_flush(struct end *a, struct end *b)
{
	struct ibv_qp *qp = make_qp(a, NULL, NULL), *peer = make_qp(b, NULL,
								    NULL);
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_ERR };
	struct ibv_sge s = sge(a, 0, 64);
	struct ibv_recv_wr rw = { .wr_id = 77, .sg_list = &s, .num_sge = 1 },
			   *rbad;
	struct ibv_send_wr wr = { .wr_id = 78, .sg_list = &s, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc[4];
	int n, i, flushed = 0;

	if (!qp || !peer || to_init(qp) || to_init(peer) ||
	    to_rts(a, qp, b, peer->qp_num) || to_rts(b, peer, a, qp->qp_num)) {
		check(false, "QP pair for the error-state test");
		goto out;
	}
	check(ibv_modify_qp(qp, &at, IBV_QP_STATE) == 0, "QP to ERR");
	check(ibv_post_recv(qp, &rw, &rbad) == 0, "ibv_post_recv in ERR");
	check(ibv_post_send(qp, &wr, &bad) == 0, "ibv_post_send in ERR");
	n = wait_wc(a->cq, wc, 2, 5000);
	for (i = 0; i < n; i++)
		flushed += wc[i].status == IBV_WC_WR_FLUSH_ERR &&
			   (wc[i].wr_id == 77 || wc[i].wr_id == 78);
	check(n == 2 && flushed == 2,
	      "both flushed with IBV_WC_WR_FLUSH_ERR (%d CQEs, %d flushed)", n,
	      flushed);
out:
	if (qp)
		ibv_destroy_qp(qp);
	if (peer)
		ibv_destroy_qp(peer);
}

/*
 * One RDMA WRITE of 8 bytes from a fresh QP pair to @raddr with @rkey:
 * the requester's completion status, or -1 if there was none.  A remote
 * access error takes the pair to ERR, hence a pair per case.
 */
static int write_status(struct end *a, struct end *b, uint64_t raddr,
			uint32_t rkey)
{
	struct ibv_qp *qp = make_qp(a, NULL, NULL), *peer = make_qp(b, NULL,
								    NULL);
	struct ibv_sge s = sge(a, 0, 8);
	struct ibv_send_wr wr = { .wr_id = 90, .sg_list = &s, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;
	int st = -1;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	if (qp && peer && !to_init(qp) && !to_init(peer) &&
	    !to_rts(a, qp, b, peer->qp_num) && !to_rts(b, peer, a, qp->qp_num) &&
	    !ibv_post_send(qp, &wr, &bad) && wait_wc(a->cq, &wc, 1, 10000) == 1 &&
	    wc.wr_id == 90)
		st = wc.status;
	if (qp)
		ibv_destroy_qp(qp);
	if (peer)
		ibv_destroy_qp(peer);
	return st;
}

/*
 * Remote access errors: a wrong key, a range past the region, a region
 * without remote write, and the key of a region deregistered and
 * registered again over the same memory.  Each completes with
 * IBV_WC_REM_ACCESS_ERR and writes nothing.
 */
static void test_remote_access(struct end *a, struct end *b)
{
	static const uint8_t pat[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	uint8_t *t = b->buf + BUF_SIZE / 4;	/* target, 0 if untouched */
	uint64_t ta = (uintptr_t)t;
	struct ibv_mr *ro, *m1, *m2;
	uint32_t old;
	int st;

	memcpy(a->buf, pat, sizeof(pat));
	memset(t, 0, 16);
	st = write_status(a, b, ta, b->mr->rkey ^ 0x5a5a00);
	check(st == IBV_WC_REM_ACCESS_ERR, "wrong rkey: %s",
	      st < 0 ? "no completion" : ibv_wc_status_str(st));
	st = write_status(a, b, (uintptr_t)b->buf + BUF_SIZE - 4, b->mr->rkey);
	check(st == IBV_WC_REM_ACCESS_ERR, "past the region's end: %s",
	      st < 0 ? "no completion" : ibv_wc_status_str(st));
	ro = ibv_reg_mr(b->pd, t, 4096, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_READ);
	st = ro ? write_status(a, b, ta, ro->rkey) : -1;
	check(ro && st == IBV_WC_REM_ACCESS_ERR,
	      "write to a region without remote write: %s",
	      st < 0 ? "no completion" : ibv_wc_status_str(st));
	if (ro)
		ibv_dereg_mr(ro);
	m1 = ibv_reg_mr(b->pd, t, 4096, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE);
	old = m1 ? m1->rkey : 0;
	if (m1)
		ibv_dereg_mr(m1);
	m2 = ibv_reg_mr(b->pd, t, 4096, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE);
	check(m1 && m2 && m2->rkey != old,
	      "a region registered again gets a new key (%#x, then %#x)", old,
	      m2 ? m2->rkey : 0);
	st = m2 ? write_status(a, b, ta, old) : -1;
	check(st == IBV_WC_REM_ACCESS_ERR, "the deregistered region's key: %s",
	      st < 0 ? "no completion" : ibv_wc_status_str(st));
	check(!memcmp(t, (const uint8_t[16]){ 0 }, 16),
	      "nothing written by a refused WRITE");
	st = m2 ? write_status(a, b, ta, m2->rkey) : -1;
	check(st == IBV_WC_SUCCESS && !memcmp(t, pat, sizeof(pat)),
	      "the new key writes: %s",
	      st < 0 ? "no completion" : ibv_wc_status_str(st));
	if (m2)
		ibv_dereg_mr(m2);
}

/* Extended CQ polling on a receive CQ: opcode, length, immediate, QPN. */
static void test_cq_ex(struct end *a, struct end *b)
{
	struct ibv_cq_init_attr_ex cx = {
		.cqe = 16,
		.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM |
			    IBV_WC_EX_WITH_QP_NUM,
	};
	struct ibv_poll_cq_attr pa = {};
	struct ibv_send_wr wr = {}, *bad;
	struct ibv_recv_wr rw = {}, *rbad;
	struct ibv_sge s = sge(a, 0, 100), rs = sge(b, 0, 4096);
	struct ibv_qp_init_attr qa = {
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_qp *qa_qp = NULL, *qb_qp = NULL;
	struct ibv_cq_ex *cq;
	struct ibv_wc wc[4];
	int i, n = 0, good = 0, ret;

	cx.wc_flags |= IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
	errno = 0;
	cq = ibv_create_cq_ex(b->ctx, &cx);
	check(!cq && errno == EOPNOTSUPP,
	      "ibv_create_cq_ex with completion timestamps: EOPNOTSUPP");
	cx.wc_flags &= ~(uint64_t)IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
	cq = ibv_create_cq_ex(b->ctx, &cx);
	check(cq != NULL, "ibv_create_cq_ex (byte_len, imm, qp_num)");
	if (!cq)
		return;
	qa.send_cq = qa.recv_cq = a->cq;
	qa_qp = ibv_create_qp(a->pd, &qa);
	qa.send_cq = qa.recv_cq = ibv_cq_ex_to_cq(cq);
	qb_qp = ibv_create_qp(b->pd, &qa);
	if (!qa_qp || !qb_qp || to_init(qa_qp) || to_init(qb_qp) ||
	    to_rts(a, qa_qp, b, qb_qp->qp_num) ||
	    to_rts(b, qb_qp, a, qa_qp->qp_num)) {
		check(false, "QP pair on the extended CQ");
		goto out;
	}
	rw.sg_list = &rs;
	rw.num_sge = 1;
	wr.opcode = IBV_WR_SEND_WITH_IMM;
	wr.sg_list = &s;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	for (i = 0; i < 3; i++) {
		rw.wr_id = 50 + i;
		ibv_post_recv(qb_qp, &rw, &rbad);
		wr.wr_id = 60 + i;
		wr.imm_data = htobe32(0x1000 + i);
		ibv_post_send(qa_qp, &wr, &bad);
	}
	check(wait_wc(a->cq, wc, 3, 10000) == 3 && all_ok(wc, 3),
	      "3 SEND_WITH_IMM completed");
	for (i = 0; i < 1000 && n < 3; i++) {
		ret = ibv_start_poll(cq, &pa);
		if (ret == ENOENT) {
			usleep(10000);
			continue;
		}
		if (ret)
			break;
		do {
			if (cq->status == IBV_WC_SUCCESS &&
			    cq->wr_id == (uint64_t)(50 + n) &&
			    ibv_wc_read_opcode(cq) == IBV_WC_RECV &&
			    ibv_wc_read_byte_len(cq) == 100 &&
			    be32toh(ibv_wc_read_imm_data(cq)) ==
				    (uint32_t)(0x1000 + n) &&
			    ibv_wc_read_qp_num(cq) == qb_qp->qp_num &&
			    (ibv_wc_read_wc_flags(cq) & IBV_WC_WITH_IMM))
				good++;
			n++;
		} while (ibv_next_poll(cq) == 0);
		ibv_end_poll(cq);
	}
	check(n == 3 && good == 3,
	      "ibv_start_poll/next_poll/end_poll: %d receives, %d as expected",
	      n, good);
	check(ibv_poll_cq(ibv_cq_ex_to_cq(cq), 4, wc) == 0,
	      "nothing left for ibv_poll_cq");
out:
	if (qa_qp)
		ibv_destroy_qp(qa_qp);
	if (qb_qp)
		ibv_destroy_qp(qb_qp);
	check(ibv_destroy_cq(ibv_cq_ex_to_cq(cq)) == 0, "destroy the extended CQ");
}

/*
 * Thread safety: 4 threads post to one send queue (retrying on ENOMEM)
 * while 2 threads poll the shared CQ; every WR completes exactly once.
 * The QP and its CQ are the test's own, the CQ large enough for every
 * completion (sends complete whether or not anyone polls: a smaller CQ
 * could overflow, which verbs leaves to the application to prevent).
 */
#define T_POSTERS	4
#define T_PER		200

struct tstate {
	struct end *a, *b;
	struct ibv_qp *qp;
	struct ibv_cq *cq;
	int id;
	int errors;
};

static uint8_t t_seen[T_POSTERS * T_PER];
static int t_done, t_bad;
static pthread_mutex_t t_mu = PTHREAD_MUTEX_INITIALIZER;

static void *t_post(void *arg)
{
	struct tstate *t = arg;
	struct ibv_sge s = sge(t->a, 128 * t->id, 64);
	struct ibv_send_wr wr = {}, *bad;
	int i, ret;

	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.sg_list = &s;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)t->b->buf + 128 * t->id;
	wr.wr.rdma.rkey = t->b->mr->rkey;
	for (i = 0; i < T_PER; i++) {
		wr.wr_id = t->id * T_PER + i;
		while ((ret = ibv_post_send(t->qp, &wr, &bad)) == ENOMEM)
			sched_yield();
		if (ret) {
			t->errors++;
			break;
		}
	}
	return NULL;
}

static void *t_poll(void *arg)
{
	struct tstate *t = arg;
	struct ibv_wc wc[8];
	struct timespec t0, now;
	int n, i;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		pthread_mutex_lock(&t_mu);
		n = t_done >= T_POSTERS * T_PER;
		pthread_mutex_unlock(&t_mu);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (n || now.tv_sec - t0.tv_sec > 60)
			return NULL;
		n = ibv_poll_cq(t->cq, 8, wc);
		if (n < 0) {
			t->errors++;
			return NULL;
		}
		pthread_mutex_lock(&t_mu);
		for (i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS ||
			    wc[i].wr_id >= T_POSTERS * T_PER ||
			    t_seen[wc[i].wr_id]++)
				t_bad++;
			t_done++;
		}
		pthread_mutex_unlock(&t_mu);
	}
}

static void test_threads(struct end *a, struct end *b)
{
	struct ibv_cq *cq = ibv_create_cq(a->ctx, 2 * T_POSTERS * T_PER, NULL,
					  NULL, 0);
	struct ibv_qp_init_attr qa = {
		.send_cq = cq, .recv_cq = cq,
		.cap = { .max_send_wr = DEPTH, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct tstate ts[T_POSTERS + 2];
	pthread_t th[T_POSTERS + 2];
	struct ibv_qp *qp = NULL, *peer = NULL;
	int i, errors = 0, missing = 0;

	if (cq)
		qp = ibv_create_qp(a->pd, &qa);
	peer = make_qp(b, NULL, NULL);
	if (!qp || !peer || to_init(qp) || to_init(peer) ||
	    to_rts(a, qp, b, peer->qp_num) || to_rts(b, peer, a, qp->qp_num)) {
		check(false, "QP and CQ for the thread test");
		goto out;
	}
	for (i = 0; i < T_POSTERS + 2; i++) {
		ts[i] = (struct tstate){ .a = a, .b = b, .qp = qp, .cq = cq,
					 .id = i };
		pthread_create(&th[i], NULL, i < T_POSTERS ? t_post : t_poll,
			       &ts[i]);
	}
	for (i = 0; i < T_POSTERS + 2; i++) {
		pthread_join(th[i], NULL);
		errors += ts[i].errors;
	}
	for (i = 0; i < T_POSTERS * T_PER; i++)
		missing += !t_seen[i];
	check(!errors && !t_bad && !missing && t_done == T_POSTERS * T_PER,
	      "%d threads posting, 2 polling one CQ: %d completions, %d bad, %d missing, %d errors",
	      T_POSTERS, t_done, t_bad, missing, errors);
out:
	if (qp)
		ibv_destroy_qp(qp);
	if (peer)
		ibv_destroy_qp(peer);
	if (cq)
		ibv_destroy_cq(cq);
}

static void test_unsupported(struct end *a)
{
	struct ibv_qp_init_attr ua = {
		.send_cq = a->cq, .recv_cq = a->cq,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_UD,
	};
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;
	struct ibv_qp *qp;

	errno = 0;
	qp = ibv_create_qp(a->pd, &ua);
	check(!qp && errno, "UD QP refused (%s)", strerror(errno));
	if (qp)
		ibv_destroy_qp(qp);
	errno = 0;
	check(ibv_resize_cq(a->cq, 128) != 0, "ibv_resize_cq refused");
	check(ibv_alloc_mw(a->pd, IBV_MW_TYPE_1) == NULL,
	      "ibv_alloc_mw refused");
	memset(&qi, 0, sizeof(qi));
	errno = ibv_query_qp(a->qp, &qa, IBV_QP_STATE | IBV_QP_CAP, &qi);
	check(errno == 0 && qa.qp_state == IBV_QPS_RTS &&
	      qi.cap.max_inline_data >= 32,
	      "ibv_query_qp: RTS, max_inline_data %u", qi.cap.max_inline_data);
}

int main(int argc, char **argv)
{
	const char *da = NULL, *db = NULL;
	struct end a = {}, b = {};
	int c, ga = 0, gb = 0;

	while ((c = getopt(argc, argv, "a:A:b:B:")) != -1) {
		switch (c) {
		case 'a': da = optarg; break;
		case 'A': ga = atoi(optarg); break;
		case 'b': db = optarg; break;
		case 'B': gb = atoi(optarg); break;
		default: return 2;
		}
	}
	if (!da || !db) {
		fprintf(stderr, "usage: verbs_api -a DEV -A GIDX -b DEV -B GIDX\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("TAP version 13\n");
	end_init(&a, da, ga);
	end_init(&b, db, gb);
	if (to_init(a.qp) || to_init(b.qp) ||
	    to_rts(&a, a.qp, &b, b.qp->qp_num) ||
	    to_rts(&b, b.qp, &a, a.qp->qp_num))
		die("connect");

	test_events(&a, &b);
	test_invalid(&a, &b);
	test_unsignaled(&a, &b);
	test_full(&a, &b);
	test_threads(&a, &b);
	test_wr_api(&a, &b);
	test_srq(&a);
	test_cq_ex(&a, &b);
	test_err_flush(&a, &b);
	test_remote_access(&a, &b);
	test_unsupported(&a);

	printf("1..%d\n", ntest);
	printf("# %d passed, %d failed\n", ntest - nfail, nfail);
	return nfail ? 1 : 0;
}

