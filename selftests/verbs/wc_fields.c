// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * wc_fields: every field of every work completion, compared with the value
 * rdma_rxe reports, for each RC opcode once and each error once.  The same
 * binary runs over rxe (wc_fields_rxe.sh, proving the expectations are the
 * reference's) and over MetaRoCE (dp_wc_fields.sh).  One process owns both
 * ends: device A posts, device B receives.
 *
 * The expectations, as rxe (drivers/infiniband/sw/rxe, user CQs) has them:
 *   - a successful send: wr_id, status, opcode, byte_len (the sum of the
 *     SGEs or the inline length), qp_num, and IBV_WC_WITH_IMM for
 *     SEND_WITH_IMM and RDMA_WRITE_WITH_IMM (imm_data itself stays 0);
 *   - a successful receive: wr_id, status, opcode (IBV_WC_RECV or
 *     IBV_WC_RECV_RDMA_WITH_IMM), byte_len (the bytes received, or the
 *     length of the RDMA WRITE), qp_num, imm_data, and wc_flags IBV_WC_GRH
 *     plus IBV_WC_WITH_IMM when the message had one; src_qp 0 (RC);
 *   - an error, flushes included: wr_id, status and qp_num; every other
 *     field 0 (so opcode reads IBV_WC_SEND, sends and receives alike).
 * pkey_index, slid, sl, dlid_path_bits and vendor_err are always 0.
 *
 *   wc_fields -a DEV -A GIDX -b DEV -B GIDX [-v]
 * Exit 0 when every field matches, 1 on a mismatch or a missing
 * completion, 2 on a setup error.  -v prints every completion.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <infiniband/verbs.h>

#define BUF_SIZE	(1u << 20)
#define DEPTH		32
#define BIG		5000	/* more than one packet at any MTU here */

struct end {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_cq *scq, *rcq;
	struct ibv_srq *srq;
	struct ibv_qp *qp;
	uint8_t *buf;
	union ibv_gid gid;
	int gidx;
	enum ibv_mtu mtu;
};

struct pair {
	struct end a, b;
};

struct want {
	uint64_t wr_id;
	enum ibv_wc_status status;
	enum ibv_wc_opcode opcode;
	uint32_t byte_len;
	uint32_t imm;		/* host order */
	uint32_t qp_num;
	unsigned int wc_flags;
};

static const char *dev_name[2];
static int dev_gidx[2];
static struct ibv_context *dev_ctx[2];
static bool verbose;
static int failures, checked;

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("FAIL: ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	exit(2);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	if (!list)
		die("ibv_get_device_list: %s", strerror(errno));
	for (i = 0; list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!ctx)
		die("cannot open device %s", name);
	return ctx;
}

static void end_init(struct end *e, int side, bool srq)
{
	struct ibv_port_attr port;
	struct ibv_qp_init_attr qa = {
		.cap = {
			.max_send_wr = DEPTH, .max_recv_wr = DEPTH,
			.max_send_sge = 2, .max_recv_sge = 2,
			.max_inline_data = 64,
		},
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 0,
	};

	e->ctx = dev_ctx[side];
	e->gidx = dev_gidx[side];
	if (ibv_query_port(e->ctx, 1, &port))
		die("ibv_query_port: %s", strerror(errno));
	e->mtu = port.active_mtu;
	if (ibv_query_gid(e->ctx, 1, e->gidx, &e->gid))
		die("ibv_query_gid: %s", strerror(errno));
	e->pd = ibv_alloc_pd(e->ctx);
	if (!e->pd)
		die("ibv_alloc_pd: %s", strerror(errno));
	e->buf = aligned_alloc(4096, BUF_SIZE);
	if (!e->buf)
		die("out of memory");
	memset(e->buf, 0, BUF_SIZE);
	e->mr = ibv_reg_mr(e->pd, e->buf, BUF_SIZE,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	if (!e->mr)
		die("ibv_reg_mr: %s", strerror(errno));
	e->scq = ibv_create_cq(e->ctx, 2 * DEPTH, NULL, NULL, 0);
	e->rcq = ibv_create_cq(e->ctx, 2 * DEPTH, NULL, NULL, 0);
	if (!e->scq || !e->rcq)
		die("ibv_create_cq: %s", strerror(errno));
	if (srq) {
		struct ibv_srq_init_attr sa = {
			.attr = { .max_wr = DEPTH, .max_sge = 2 },
		};

		e->srq = ibv_create_srq(e->pd, &sa);
		if (!e->srq)
			die("ibv_create_srq: %s", strerror(errno));
	}
	qa.send_cq = e->scq;
	qa.recv_cq = e->rcq;
	qa.srq = e->srq;
	e->qp = ibv_create_qp(e->pd, &qa);
	if (!e->qp)
		die("ibv_create_qp: %s", strerror(errno));
}

static void end_connect(struct end *e, const struct end *peer, int retry_cnt,
			int rnr_retry, int timeout)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC,
	};

	if (ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		die("modify_qp INIT: %s", strerror(errno));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = e->mtu < peer->mtu ? e->mtu : peer->mtu;
	a.dest_qp_num = peer->qp->qp_num;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 1;		/* 0.01 ms: RNR exhaustion is quick */
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = peer->gid;
	a.ah_attr.grh.sgid_index = e->gidx;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_AV |
			  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		die("modify_qp RTR: %s", strerror(errno));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = timeout;
	a.retry_cnt = retry_cnt;
	a.rnr_retry = rnr_retry;
	a.max_rd_atomic = 4;
	if (ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
			  IBV_QP_MAX_QP_RD_ATOMIC))
		die("modify_qp RTS: %s", strerror(errno));
}

/* A's retry_cnt, rnr_retry and timeout are the case's; B retries forever. */
static void pair_init(struct pair *p, bool srq, int retry_cnt, int rnr_retry,
		      int timeout)
{
	memset(p, 0, sizeof(*p));
	end_init(&p->a, 0, false);
	end_init(&p->b, 1, srq);
	end_connect(&p->a, &p->b, retry_cnt, rnr_retry, timeout);
	end_connect(&p->b, &p->a, 7, 7, 14);
}

static void end_free(struct end *e)
{
	if (e->qp)
		ibv_destroy_qp(e->qp);
	if (e->srq)
		ibv_destroy_srq(e->srq);
	ibv_destroy_cq(e->scq);
	ibv_destroy_cq(e->rcq);
	ibv_dereg_mr(e->mr);
	ibv_dealloc_pd(e->pd);
	free(e->buf);
}

static void pair_free(struct pair *p)
{
	end_free(&p->a);
	end_free(&p->b);
}

static void to_err(struct end *e)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

	if (ibv_modify_qp(e->qp, &a, IBV_QP_STATE))
		die("modify_qp ERR: %s", strerror(errno));
}

static void post_recv(struct end *e, uint64_t wr_id, uint32_t off,
		      uint32_t len)
{
	struct ibv_sge sg = {
		.addr = (uintptr_t)e->buf + off, .length = len,
		.lkey = e->mr->lkey,
	};
	struct ibv_recv_wr wr = {
		.wr_id = wr_id, .sg_list = &sg, .num_sge = 1,
	}, *bad;
	int ret;

	ret = e->srq ? ibv_post_srq_recv(e->srq, &wr, &bad) :
		       ibv_post_recv(e->qp, &wr, &bad);
	if (ret)
		die("ibv_post_recv: %s", strerror(ret));
}

/*
 * Post one work request from @e to @peer: @len bytes at local offset @loff
 * (two SGEs when @two_sge), to remote offset @roff.  rkey_xor spoils the
 * rkey.  Atomics use one 8-byte SGE.
 */
static void post_send(struct end *e, const struct end *peer, uint64_t wr_id,
		      enum ibv_wr_opcode op, uint32_t loff, uint32_t len,
		      uint32_t roff, uint32_t imm, unsigned int flags,
		      bool two_sge, uint32_t rkey_xor)
{
	struct ibv_sge sg[2] = {
		{ .addr = (uintptr_t)e->buf + loff, .length = len,
		  .lkey = e->mr->lkey },
	};
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = sg, .num_sge = len ? 1 : 0,
		.opcode = op, .send_flags = flags, .imm_data = htonl(imm),
	}, *bad;
	int ret;

	if (two_sge && len > 1) {
		sg[0].length = len / 2;
		sg[1] = sg[0];
		sg[1].addr += len / 2;
		sg[1].length = len - len / 2;
		wr.num_sge = 2;
	}
	if (op == IBV_WR_ATOMIC_CMP_AND_SWP ||
	    op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.num_sge = 1;
		wr.wr.atomic.remote_addr = (uintptr_t)peer->buf + roff;
		wr.wr.atomic.rkey = peer->mr->rkey ^ rkey_xor;
		wr.wr.atomic.compare_add = 0;
		wr.wr.atomic.swap = 0x1122334455667788ull;
	} else {
		wr.wr.rdma.remote_addr = (uintptr_t)peer->buf + roff;
		wr.wr.rdma.rkey = peer->mr->rkey ^ rkey_xor;
	}
	ret = ibv_post_send(e->qp, &wr, &bad);
	if (ret)
		die("ibv_post_send (opcode %d): %s", op, strerror(ret));
}

/* Poll exactly n completions of cq within secs seconds; -1 on a timeout. */
static int poll_n(struct ibv_cq *cq, struct ibv_wc *wc, int n, double secs)
{
	double end = now_s() + secs;
	int got = 0, r;

	while (got < n) {
		r = ibv_poll_cq(cq, n - got, wc + got);
		if (r < 0)
			die("ibv_poll_cq: %d", r);
		got += r;
		if (got < n && now_s() > end)
			return got;
		if (!r)
			usleep(1000);
	}
	return got;
}

static void check(const char *what, const struct ibv_wc *wc,
		  const struct want *w)
{
	char got[256];
	bool ok;

	snprintf(got, sizeof(got),
		 "wr_id %" PRIu64 " status %d (%s) opcode %d vendor_err %u byte_len %u imm_data %#x qp_num %u src_qp %u wc_flags %#x pkey_index %u slid %u sl %u dlid_path_bits %u",
		 wc->wr_id, wc->status, ibv_wc_status_str(wc->status),
		 wc->opcode, wc->vendor_err, wc->byte_len, ntohl(wc->imm_data),
		 wc->qp_num, wc->src_qp, wc->wc_flags, wc->pkey_index,
		 wc->slid, wc->sl, wc->dlid_path_bits);
	ok = wc->wr_id == w->wr_id && wc->status == w->status &&
	     wc->opcode == w->opcode && !wc->vendor_err &&
	     wc->byte_len == w->byte_len && ntohl(wc->imm_data) == w->imm &&
	     wc->qp_num == w->qp_num && !wc->src_qp &&
	     wc->wc_flags == w->wc_flags && !wc->pkey_index && !wc->slid &&
	     !wc->sl && !wc->dlid_path_bits;
	checked++;
	if (ok) {
		if (verbose)
			printf("# ok %s: %s\n", what, got);
		return;
	}
	failures++;
	printf("# MISMATCH %s:\n#   got  %s\n#   want wr_id %" PRIu64 " status %d (%s) opcode %d vendor_err 0 byte_len %u imm_data %#x qp_num %u src_qp 0 wc_flags %#x pkey_index 0 slid 0 sl 0 dlid_path_bits 0\n",
	       what, got, w->wr_id, w->status, ibv_wc_status_str(w->status),
	       w->opcode, w->byte_len, w->imm, w->qp_num, w->wc_flags);
}

/* Expect exactly the completions in @w (n of them) on @cq, then no more. */
static void expect(const char *what, struct ibv_cq *cq, const struct want *w,
		   int n, double secs)
{
	struct ibv_wc wc[DEPTH];
	char name[128];
	int got, i;

	got = poll_n(cq, wc, n, secs);
	for (i = 0; i < got; i++) {
		snprintf(name, sizeof(name), "%s #%d", what, i);
		check(name, &wc[i], &w[i]);
	}
	if (got < n) {
		failures++;
		printf("# MISSING %s: %d of %d completions after %.0f s\n",
		       what, got, n, secs);
		return;
	}
	usleep(50000);
	got = ibv_poll_cq(cq, 1, wc);
	if (got) {
		failures++;
		printf("# EXTRA %s: status %s opcode %d wr_id %" PRIu64 "\n",
		       what, ibv_wc_status_str(wc[0].status), wc[0].opcode,
		       wc[0].wr_id);
	}
}

static struct want ok_send(uint64_t id, enum ibv_wc_opcode op, uint32_t len,
			   bool imm, const struct end *e)
{
	return (struct want){
		.wr_id = id, .status = IBV_WC_SUCCESS, .opcode = op,
		.byte_len = len, .qp_num = e->qp->qp_num,
		.wc_flags = imm ? IBV_WC_WITH_IMM : 0,
	};
}

static struct want ok_recv(uint64_t id, enum ibv_wc_opcode op, uint32_t len,
			   bool imm, uint32_t imm_data, const struct end *e)
{
	return (struct want){
		.wr_id = id, .status = IBV_WC_SUCCESS, .opcode = op,
		.byte_len = len, .imm = imm ? imm_data : 0,
		.qp_num = e->qp->qp_num,
		.wc_flags = IBV_WC_GRH | (imm ? IBV_WC_WITH_IMM : 0),
	};
}

/* An error: wr_id, status and qp_num; the rest 0 (opcode IBV_WC_SEND). */
static struct want err(uint64_t id, enum ibv_wc_status st,
		       const struct end *e)
{
	return (struct want){
		.wr_id = id, .status = st, .opcode = IBV_WC_SEND,
		.qp_num = e->qp->qp_num,
	};
}

/* Every opcode once, signaled; receives on the QP's RQ or on an SRQ. */
static void case_success(bool srq)
{
	const char *tag = srq ? "srq" : "rq";
	struct want ws[9], wr[5];
	struct pair p;
	char what[64];
	int n = 0, m = 0;

	pair_init(&p, srq, 7, 7, 14);
	post_recv(&p.b, 100, 0, 4096);		/* SEND 100 */
	post_recv(&p.b, 101, 8192, 8192);	/* SEND_WITH_IMM BIG */
	post_recv(&p.b, 102, 0, 0);		/* WRITE_WITH_IMM BIG */
	post_recv(&p.b, 103, 16384, 64);	/* inline SEND 40 */
	post_recv(&p.b, 104, 20000, 64);	/* WRITE_WITH_IMM 0 */

	post_send(&p.a, &p.b, 1, IBV_WR_SEND, 0, 100, 0, 0,
		  IBV_SEND_SIGNALED, true, 0);
	ws[n++] = ok_send(1, IBV_WC_SEND, 100, false, &p.a);
	post_send(&p.a, &p.b, 2, IBV_WR_SEND_WITH_IMM, 0, BIG, 0, 0xa1b2c3d4,
		  IBV_SEND_SIGNALED, false, 0);
	ws[n++] = ok_send(2, IBV_WC_SEND, BIG, true, &p.a);
	post_send(&p.a, &p.b, 3, IBV_WR_RDMA_WRITE, 0, 300, 65536, 0,
		  IBV_SEND_SIGNALED, true, 0);
	ws[n++] = ok_send(3, IBV_WC_RDMA_WRITE, 300, false, &p.a);
	post_send(&p.a, &p.b, 4, IBV_WR_RDMA_WRITE_WITH_IMM, 0, BIG, 131072,
		  0x01020304, IBV_SEND_SIGNALED, false, 0);
	ws[n++] = ok_send(4, IBV_WC_RDMA_WRITE, BIG, true, &p.a);
	post_send(&p.a, &p.b, 5, IBV_WR_RDMA_READ, 262144, 250, 0, 0,
		  IBV_SEND_SIGNALED, true, 0);
	ws[n++] = ok_send(5, IBV_WC_RDMA_READ, 250, false, &p.a);
	post_send(&p.a, &p.b, 6, IBV_WR_ATOMIC_CMP_AND_SWP, 270000, 8, 196608,
		  0, IBV_SEND_SIGNALED, false, 0);
	ws[n++] = ok_send(6, IBV_WC_COMP_SWAP, 8, false, &p.a);
	post_send(&p.a, &p.b, 7, IBV_WR_ATOMIC_FETCH_AND_ADD, 270008, 8,
		  196616, 0, IBV_SEND_SIGNALED, false, 0);
	ws[n++] = ok_send(7, IBV_WC_FETCH_ADD, 8, false, &p.a);
	post_send(&p.a, &p.b, 8, IBV_WR_SEND, 1000, 40, 0, 0,
		  IBV_SEND_SIGNALED | IBV_SEND_INLINE, true, 0);
	ws[n++] = ok_send(8, IBV_WC_SEND, 40, false, &p.a);
	post_send(&p.a, &p.b, 9, IBV_WR_RDMA_WRITE_WITH_IMM, 0, 0, 0,
		  0x55aa55aa, IBV_SEND_SIGNALED, false, 0);
	ws[n++] = ok_send(9, IBV_WC_RDMA_WRITE, 0, true, &p.a);

	wr[m++] = ok_recv(100, IBV_WC_RECV, 100, false, 0, &p.b);
	wr[m++] = ok_recv(101, IBV_WC_RECV, BIG, true, 0xa1b2c3d4, &p.b);
	wr[m++] = ok_recv(102, IBV_WC_RECV_RDMA_WITH_IMM, BIG, true,
			  0x01020304, &p.b);
	wr[m++] = ok_recv(103, IBV_WC_RECV, 40, false, 0, &p.b);
	wr[m++] = ok_recv(104, IBV_WC_RECV_RDMA_WITH_IMM, 0, true, 0x55aa55aa,
			  &p.b);

	snprintf(what, sizeof(what), "success (%s): send", tag);
	expect(what, p.a.scq, ws, n, 20);
	snprintf(what, sizeof(what), "success (%s): receive", tag);
	expect(what, p.b.rcq, wr, m, 20);
	pair_free(&p);
}

/*
 * A WRITE_WITH_IMM with a bad rkey: the requester's WR completes with
 * REM_ACCESS_ERR and the SEND after it is flushed; the responder's
 * receive taken by the WRITE completes with REM_ACCESS_ERR, the next one
 * is flushed (the responder's QP is in error too).
 */
static void case_rem_access(void)
{
	struct want ws[2], wr[2];
	struct pair p;

	pair_init(&p, false, 7, 7, 14);
	post_recv(&p.b, 200, 0, 4096);
	post_recv(&p.b, 201, 4096, 4096);
	post_send(&p.a, &p.b, 20, IBV_WR_RDMA_WRITE_WITH_IMM, 0, 64, 0, 7,
		  IBV_SEND_SIGNALED, false, 0x5a5a0000);
	post_send(&p.a, &p.b, 21, IBV_WR_SEND, 0, 64, 0, 0, 0, false, 0);
	ws[0] = err(20, IBV_WC_REM_ACCESS_ERR, &p.a);
	ws[1] = err(21, IBV_WC_WR_FLUSH_ERR, &p.a);
	wr[0] = err(200, IBV_WC_REM_ACCESS_ERR, &p.b);
	wr[1] = err(201, IBV_WC_WR_FLUSH_ERR, &p.b);
	expect("remote access: send", p.a.scq, ws, 2, 20);
	expect("remote access: receive", p.b.rcq, wr, 2, 20);
	pair_free(&p);
}

/*
 * A SEND longer than its receive: rxe refuses the receive as a malformed
 * WQE (LOC_QP_OP_ERR) and NAKs with a remote operation error.
 */
static void case_too_long(void)
{
	struct want ws[1], wr[2];
	struct pair p;

	pair_init(&p, false, 7, 7, 14);
	post_recv(&p.b, 300, 0, 10);
	post_recv(&p.b, 301, 4096, 4096);
	post_send(&p.a, &p.b, 30, IBV_WR_SEND, 0, 100, 0, 0,
		  IBV_SEND_SIGNALED, false, 0);
	ws[0] = err(30, IBV_WC_REM_OP_ERR, &p.a);
	wr[0] = err(300, IBV_WC_LOC_QP_OP_ERR, &p.b);
	wr[1] = err(301, IBV_WC_WR_FLUSH_ERR, &p.b);
	expect("receive too small: send", p.a.scq, ws, 1, 20);
	expect("receive too small: receive", p.b.rcq, wr, 2, 20);
	pair_free(&p);
}

/* rnr_retry 0 and no receive: RNR_RETRY_EXC_ERR, then a flush. */
static void case_rnr(void)
{
	struct want ws[2];
	struct pair p;

	pair_init(&p, false, 7, 0, 14);
	post_send(&p.a, &p.b, 40, IBV_WR_SEND_WITH_IMM, 0, 64, 0, 9,
		  IBV_SEND_SIGNALED, false, 0);
	post_send(&p.a, &p.b, 41, IBV_WR_RDMA_WRITE, 0, 64, 0, 0, 0, false, 0);
	ws[0] = err(40, IBV_WC_RNR_RETRY_EXC_ERR, &p.a);
	ws[1] = err(41, IBV_WC_WR_FLUSH_ERR, &p.a);
	expect("rnr retries exhausted: send", p.a.scq, ws, 2, 30);
	expect("rnr retries exhausted: receive", p.b.rcq, NULL, 0, 0);
	pair_free(&p);
}

/* The responder QP is gone: the transport retries retry_cnt times. */
static void case_retry_exc(void)
{
	struct want ws[2];
	struct pair p;

	pair_init(&p, false, 1, 7, 12);
	ibv_destroy_qp(p.b.qp);
	p.b.qp = NULL;
	post_send(&p.a, &p.b, 50, IBV_WR_RDMA_READ, 0, 64, 0, 0,
		  IBV_SEND_SIGNALED, false, 0);
	post_send(&p.a, &p.b, 51, IBV_WR_SEND, 0, 64, 0, 0, IBV_SEND_SIGNALED,
		  false, 0);
	ws[0] = err(50, IBV_WC_RETRY_EXC_ERR, &p.a);
	ws[1] = err(51, IBV_WC_WR_FLUSH_ERR, &p.a);
	expect("transport retries exhausted: send", p.a.scq, ws, 2, 60);
	pair_free(&p);
}

/*
 * Flushes: a SEND stuck on RNR (rnr_retry 7, no receive) when A moves to
 * ERR, receives outstanding on A, and work requests posted to B after B
 * moved to ERR, sends of every opcode (and a receive posted before).
 */
static void case_flush(void)
{
	static const enum ibv_wr_opcode ops[] = {
		IBV_WR_SEND, IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE,
		IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_READ,
		IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD,
	};
	struct want ws[8], wr[3];
	struct pair p;
	unsigned int i;

	pair_init(&p, false, 7, 7, 14);
	post_recv(&p.a, 600, 0, 64);
	post_recv(&p.a, 601, 64, 64);
	post_send(&p.a, &p.b, 60, IBV_WR_SEND, 0, 64, 0, 0, IBV_SEND_SIGNALED,
		  false, 0);
	post_send(&p.a, &p.b, 61, IBV_WR_RDMA_WRITE, 0, 64, 0, 0, 0, false, 0);
	usleep(200000);		/* the SEND is retrying on RNR */
	to_err(&p.a);
	ws[0] = err(60, IBV_WC_WR_FLUSH_ERR, &p.a);
	ws[1] = err(61, IBV_WC_WR_FLUSH_ERR, &p.a);
	wr[0] = err(600, IBV_WC_WR_FLUSH_ERR, &p.a);
	wr[1] = err(601, IBV_WC_WR_FLUSH_ERR, &p.a);
	expect("flush, outstanding: send", p.a.scq, ws, 2, 20);
	expect("flush, outstanding: receive", p.a.rcq, wr, 2, 20);

	/*
	 * A receive rxe's provider posts to a QP already in ERR waits for
	 * the responder to run; post it before the transition.
	 */
	post_recv(&p.b, 700, 0, 64);
	to_err(&p.b);
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		post_send(&p.b, &p.a, 70 + i, ops[i], 0, 8, 0, 1,
			  i & 1 ? IBV_SEND_SIGNALED : 0, false, 0);
		ws[i] = err(70 + i, IBV_WC_WR_FLUSH_ERR, &p.b);
	}
	wr[0] = err(700, IBV_WC_WR_FLUSH_ERR, &p.b);
	expect("flush, posted in ERR: send", p.b.scq, ws, i, 20);
	expect("flush, posted in ERR: receive", p.b.rcq, wr, 1, 20);
	pair_free(&p);
}

static void usage(void)
{
	fprintf(stderr, "usage: wc_fields -a DEV -A GIDX -b DEV -B GIDX [-v]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int c;

	while ((c = getopt(argc, argv, "a:A:b:B:v")) != -1) {
		switch (c) {
		case 'a': dev_name[0] = optarg; break;
		case 'A': dev_gidx[0] = atoi(optarg); break;
		case 'b': dev_name[1] = optarg; break;
		case 'B': dev_gidx[1] = atoi(optarg); break;
		case 'v': verbose = true; break;
		default: usage();
		}
	}
	if (!dev_name[0] || !dev_name[1])
		usage();
	setvbuf(stdout, NULL, _IOLBF, 0);
	dev_ctx[0] = open_dev(dev_name[0]);
	dev_ctx[1] = open_dev(dev_name[1]);

	case_success(false);
	case_success(true);
	case_rem_access();
	case_too_long();
	case_rnr();
	case_retry_exc();
	case_flush();

	ibv_close_device(dev_ctx[0]);
	ibv_close_device(dev_ctx[1]);
	if (failures) {
		printf("FAIL: %d of %d completions (or counts) wrong\n",
		       failures, checked);
		return 1;
	}
	printf("PASS: every field of %d completions as rxe reports them\n",
	       checked);
	return 0;
}
