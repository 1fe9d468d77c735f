// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * integrity: end-to-end data check between two RDMA devices, libibverbs
 * only.  One process owns both ends: for every pair of RC QPs (one on each
 * device) it runs rounds of random operations in both directions -- SEND,
 * SEND_IMM, WRITE, WRITE_IMM, READ, CAS, FAA; random sizes (0 B .. 1 MiB),
 * unaligned offsets, 1..3 SGEs, inline or not, signaled or not -- waits for
 * every completion, then checks every byte: each message carries its own
 * deterministic pattern, every target range is poisoned beforehand and its
 * guard bytes must stay poisoned, each atomic hits its own word so a
 * duplicate execution shows.  Every field of every completion is compared
 * with the value rdma_rxe reports.  Exit 0 on success, 1 on the first mismatch
 * or timeout, 2 on a usage or setup error.  Asynchronous events are printed
 * as they come ("# async event on DEV: ..."); IBV_EVENT_DEVICE_FATAL ends
 * the run at once (exit 1), since a device that is gone completes nothing.
 *
 *   integrity -a mrA -A 1 -b mrB -B 1 [-q QPS] [-r ROUNDS] [-o OPS]
 *             [-m MAX_SIZE] [-s SEED] [-t SECONDS] [-T ROUND_TIMEOUT]
 *   integrity -P -a DEV     exit 4 (kselftest skip) if DEV has no datapath
 *                           (ibv_create_cq: EOPNOTSUPP), else 0
 */
#include <errno.h>
#include <fcntl.h>
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

#define AREA_SIZE	((3u << 20) + (64u << 10))	/* each data area */
#define ATOM_WORDS	1024
#define MAX_SGE		3
#define POISON(r)	((uint8_t)(0xa5 ^ (r)))

enum area { SRC, WDST, RDST, RSRC, RECV, NAREAS };

enum kind { K_SEND, K_SEND_IMM, K_WRITE, K_WRITE_IMM, K_READ, K_CAS, K_FAA,
	    NKINDS };

static const char *const kind_name[NKINDS] = {
	"SEND", "SEND_IMM", "WRITE", "WRITE_IMM", "READ", "CAS", "FAA",
};

struct op {
	enum kind kind;
	uint64_t id;		/* pattern seed, unique per message */
	uint32_t len;
	uint32_t loff;		/* local offset (SRC, RDST) or atomic word */
	uint32_t roff;		/* remote offset (WDST, RSRC, RECV) or word */
	uint32_t nsge;
	bool inl, signaled;
	uint32_t imm;
	uint64_t v0, cmp, swap_add;	/* atomics */
};

struct endpoint {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;		/* NAREAS areas, then 2 x ATOM_WORDS words */
	uint64_t *atom;		/* the peer's atomics land here */
	uint64_t *ares;		/* our atomics' results */
	union ibv_gid gid;
	int gidx;
	enum ibv_mtu mtu;
	uint32_t max_inline;
	/* per round */
	struct op *ops;
	uint32_t nops;
	uint32_t cursor[NAREAS];
	uint32_t nsig, sig_done;	/* signaled sends and their CQEs */
	uint32_t nrecv, recv_done;	/* receives the peer consumes */
	uint32_t next_word;
};

struct opts {
	const char *dev[2];
	int gidx[2];
	int qps, rounds, ops;
	uint32_t max_size;
	uint64_t seed;
	int seconds, round_timeout;
};

static struct opts opt = {
	.qps = 8, .rounds = 1000, .ops = 24, .max_size = 1u << 20,
	.seconds = 60, .round_timeout = 120,
};

static uint64_t rng_state;
static uint64_t stat_bytes, stat_msgs[NKINDS];

static void die(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("FAIL: ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	fflush(stdout);
	exit(code);
}

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t rnd(void)
{
	return splitmix(&rng_state);
}

static uint32_t rnd_below(uint32_t n)
{
	return n ? (uint32_t)(rnd() % n) : 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The bytes of message id: a stream of splitmix64 words. */
static void pattern_fill(uint8_t *p, uint32_t len, uint64_t id)
{
	uint64_t s = id, w = 0;
	uint32_t i;

	for (i = 0; i < len; i++) {
		if (!(i & 7))
			w = splitmix(&s);
		p[i] = (uint8_t)(w >> (8 * (i & 7)));
	}
}

/* Offset of the first wrong byte, or -1. */
static long pattern_check(const uint8_t *p, uint32_t len, uint64_t id)
{
	uint64_t s = id, w = 0;
	uint32_t i;

	for (i = 0; i < len; i++) {
		if (!(i & 7))
			w = splitmix(&s);
		if (p[i] != (uint8_t)(w >> (8 * (i & 7))))
			return i;
	}
	return -1;
}

static uint8_t *area(struct endpoint *e, enum area a)
{
	return e->buf + (size_t)a * AREA_SIZE;
}

/* ---- setup ---- */

/*
 * Report the asynchronous events of @ctx (its fd is non-blocking).  A
 * device that goes away (rdma link delete, its netdev or netns removed,
 * the module unloaded) says IBV_EVENT_DEVICE_FATAL and then neither
 * completes nor executes anything: stop there, saying why.
 */
static void check_async(struct ibv_context *ctx)
{
	struct ibv_async_event ev;
	enum ibv_event_type type;

	while (!ibv_get_async_event(ctx, &ev)) {
		type = ev.event_type;
		printf("# async event on %s: %s\n",
		       ibv_get_device_name(ctx->device),
		       ibv_event_type_str(type));
		ibv_ack_async_event(&ev);
		if (type == IBV_EVENT_DEVICE_FATAL)
			die(1, "%s: async event %s",
			    ibv_get_device_name(ctx->device),
			    ibv_event_type_str(type));
	}
}

static struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	if (!list)
		die(2, "ibv_get_device_list: %s", strerror(errno));
	for (i = 0; list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!ctx)
		die(2, "cannot open device %s", name);
	if (fcntl(ctx->async_fd, F_SETFL,
		  fcntl(ctx->async_fd, F_GETFL) | O_NONBLOCK))
		die(2, "async fd: %s", strerror(errno));
	return ctx;
}

static void ep_init(struct endpoint *e, struct ibv_context *ctx, int gidx,
		    uint32_t depth)
{
	size_t len = (size_t)NAREAS * AREA_SIZE + 2 * ATOM_WORDS * 8;
	struct ibv_port_attr port;
	struct ibv_qp_init_attr qa = {
		.cap = {
			.max_send_wr = depth, .max_recv_wr = depth,
			.max_send_sge = MAX_SGE, .max_recv_sge = MAX_SGE,
			.max_inline_data = 64,
		},
		.qp_type = IBV_QPT_RC,
	};
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		     IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

	e->ctx = ctx;
	e->gidx = gidx;
	if (ibv_query_port(ctx, 1, &port))
		die(2, "ibv_query_port: %s", strerror(errno));
	e->mtu = port.active_mtu;
	if (ibv_query_gid(ctx, 1, gidx, &e->gid))
		die(2, "ibv_query_gid %d: %s", gidx, strerror(errno));
	e->pd = ibv_alloc_pd(ctx);
	if (!e->pd)
		die(2, "ibv_alloc_pd: %s", strerror(errno));
	e->buf = aligned_alloc(4096, (len + 4095) & ~(size_t)4095);
	if (!e->buf)
		die(2, "out of memory");
	memset(e->buf, 0, len);
	e->atom = (uint64_t *)(e->buf + (size_t)NAREAS * AREA_SIZE);
	e->ares = e->atom + ATOM_WORDS;
	e->mr = ibv_reg_mr(e->pd, e->buf, len, access);
	if (!e->mr)
		die(2, "ibv_reg_mr %zu bytes: %s", len, strerror(errno));
	e->scq = ibv_create_cq(ctx, depth, NULL, NULL, 0);
	e->rcq = ibv_create_cq(ctx, depth, NULL, NULL, 0);
	if (!e->scq || !e->rcq)
		die(2, "ibv_create_cq: %s", strerror(errno));
	qa.send_cq = e->scq;
	qa.recv_cq = e->rcq;
	e->qp = ibv_create_qp(e->pd, &qa);
	if (!e->qp)
		die(2, "ibv_create_qp: %s", strerror(errno));
	e->max_inline = qa.cap.max_inline_data;
	e->ops = calloc(opt.ops, sizeof(*e->ops));
	if (!e->ops)
		die(2, "out of memory");
}

static void ep_connect(struct endpoint *e, const struct endpoint *peer,
		       uint8_t rd_atomic)
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
		die(2, "modify_qp INIT: %s", strerror(errno));

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = e->mtu < peer->mtu ? e->mtu : peer->mtu;
	a.dest_qp_num = peer->qp->qp_num;
	a.rq_psn = 0;
	a.max_dest_rd_atomic = rd_atomic;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = peer->gid;
	a.ah_attr.grh.sgid_index = e->gidx;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_AV |
			  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		die(2, "modify_qp RTR: %s", strerror(errno));

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = 0;
	a.max_rd_atomic = rd_atomic;
	if (ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
			  IBV_QP_MAX_QP_RD_ATOMIC))
		die(2, "modify_qp RTS: %s", strerror(errno));
}

/* ---- planning a round ---- */

/* Mostly small, sometimes up to max_size: uniform in log2 of the size. */
static uint32_t pick_size(void)
{
	uint32_t bits = 0, max = opt.max_size, lo, hi;

	while ((1u << (bits + 1)) <= max && bits < 31)
		bits++;
	if (rnd_below(64) == 0)
		return 0;
	hi = rnd_below(bits + 1);
	lo = hi ? 1u << (hi - 1) : 1;
	hi = 1u << hi;
	if (hi > max)
		hi = max;
	return lo + rnd_below(hi - lo + 1);
}

/* Reserve len bytes of area a at a random, unaligned offset; -1 if full. */
static int64_t reserve(struct endpoint *e, enum area a, uint32_t len)
{
	uint32_t off = e->cursor[a] + 1 + rnd_below(200);

	if ((uint64_t)off + len + 1 > AREA_SIZE)
		return -1;
	e->cursor[a] = off + len + 1;	/* guard bytes on both sides */
	return off;
}

static void poison(struct endpoint *e, enum area a, uint32_t off,
		   uint32_t len, int round)
{
	memset(area(e, a) + off - 1, POISON(round), (size_t)len + 2);
}

/*
 * Plan e's operations towards peer: pick kinds and sizes, reserve and
 * prepare the ranges at both ends (payload written, targets poisoned,
 * atomic words seeded).
 */
static void plan(struct endpoint *e, struct endpoint *peer, int side,
		 int qpi, int round)
{
	uint32_t i;

	e->nops = 0;
	e->nsig = 0;
	e->sig_done = 0;
	for (i = 0; i < (uint32_t)opt.ops; i++) {
		struct op *o = &e->ops[e->nops];
		int64_t l = 0, r = 0;
		uint32_t w;

		memset(o, 0, sizeof(*o));
		o->kind = rnd_below(NKINDS);
		o->id = ((uint64_t)side << 62) ^ ((uint64_t)qpi << 52) ^
			((uint64_t)round << 24) ^ i ^ opt.seed << 32;
		o->imm = (uint32_t)rnd();
		if (o->kind == K_CAS || o->kind == K_FAA) {
			w = peer->next_word++;
			if (w >= ATOM_WORDS)
				continue;
			o->len = 8;
			o->loff = w;
			o->roff = w;
			o->v0 = rnd();
			o->cmp = rnd_below(4) ? o->v0 : o->v0 ^ 1;
			o->swap_add = rnd();
			peer->atom[w] = o->v0;
			e->ares[w] = 0xdeadbeefdeadbeefull;
			o->nsge = 1;
		} else {
			o->len = pick_size();
			if (o->kind == K_READ) {
				l = reserve(e, RDST, o->len);
				r = reserve(peer, RSRC, o->len);
			} else {
				l = reserve(e, SRC, o->len);
				r = reserve(peer, o->kind == K_WRITE ||
					    o->kind == K_WRITE_IMM ?
					    WDST : RECV, o->len);
			}
			if (l < 0 || r < 0)
				continue;	/* area full this round */
			o->loff = l;
			o->roff = r;
			o->inl = o->kind != K_READ && o->len <= e->max_inline &&
				 rnd_below(2);
			o->nsge = o->len ? 1 + rnd_below(MAX_SGE) : 0;
			if (o->nsge > o->len)
				o->nsge = o->len;
			if (o->kind == K_READ) {
				pattern_fill(area(peer, RSRC) + r, o->len,
					     o->id);
				poison(e, RDST, l, o->len, round);
			} else {
				pattern_fill(area(e, SRC) + l, o->len, o->id);
				poison(peer, o->kind == K_WRITE ||
				       o->kind == K_WRITE_IMM ? WDST : RECV,
				       r, o->len, round);
			}
		}
		/* The last operation is always signaled: it ends the round. */
		o->signaled = rnd_below(4) != 0;
		e->nops++;
	}
	if (e->nops)
		e->ops[e->nops - 1].signaled = true;
	for (i = 0; i < e->nops; i++)
		e->nsig += e->ops[i].signaled;
}

/* Split [addr, addr + len) into n SGEs. */
static void split_sges(struct ibv_sge *sg, uint32_t n, uint64_t addr,
		       uint32_t len, uint32_t lkey)
{
	uint32_t i, left = len;

	for (i = 0; i < n; i++) {
		uint32_t part = i + 1 == n ? left :
				1 + rnd_below(left - (n - i - 1));

		sg[i].addr = addr;
		sg[i].length = part;
		sg[i].lkey = lkey;
		addr += part;
		left -= part;
	}
}

static bool consumes_recv(enum kind k)
{
	return k == K_SEND || k == K_SEND_IMM || k == K_WRITE_IMM;
}

/* Post the receives the peer's operations will consume, in their order. */
static void post_recvs(struct endpoint *e, const struct endpoint *peer)
{
	uint32_t i;

	e->nrecv = 0;
	e->recv_done = 0;
	for (i = 0; i < peer->nops; i++) {
		const struct op *o = &peer->ops[i];
		struct ibv_sge sg[MAX_SGE];
		struct ibv_recv_wr wr = {}, *bad;
		int ret;

		if (!consumes_recv(o->kind))
			continue;
		wr.wr_id = i;
		wr.sg_list = sg;
		if (o->kind != K_WRITE_IMM) {
			/*
			 * One byte larger than the message (it covers the
			 * guard byte, which must stay poisoned), split
			 * independently of the sender's SGEs.
			 */
			wr.num_sge = 1 + rnd_below(MAX_SGE);
			if ((uint32_t)wr.num_sge > o->len + 1)
				wr.num_sge = o->len + 1;
			split_sges(sg, wr.num_sge,
				   (uintptr_t)area(e, RECV) + o->roff,
				   o->len + 1, e->mr->lkey);
		}
		ret = ibv_post_recv(e->qp, &wr, &bad);
		if (ret)
			die(1, "ibv_post_recv: %s", strerror(ret));
		e->nrecv++;
	}
}

static void build_send(struct endpoint *e, const struct endpoint *peer,
		       const struct op *o, uint32_t idx, struct ibv_send_wr *wr,
		       struct ibv_sge *sg)
{
	static const enum ibv_wr_opcode opc[NKINDS] = {
		IBV_WR_SEND, IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE,
		IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_READ,
		IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD,
	};

	memset(wr, 0, sizeof(*wr));
	wr->wr_id = idx;
	wr->opcode = opc[o->kind];
	wr->sg_list = sg;
	wr->send_flags = (o->signaled ? IBV_SEND_SIGNALED : 0) |
			 (o->inl ? IBV_SEND_INLINE : 0);
	wr->imm_data = htonl(o->imm);
	switch (o->kind) {
	case K_CAS:
	case K_FAA:
		wr->num_sge = 1;
		sg->addr = (uintptr_t)&e->ares[o->loff];
		sg->length = 8;
		sg->lkey = e->mr->lkey;
		wr->wr.atomic.remote_addr = (uintptr_t)&peer->atom[o->roff];
		wr->wr.atomic.rkey = peer->mr->rkey;
		wr->wr.atomic.compare_add = o->kind == K_CAS ? o->cmp :
					    o->swap_add;
		wr->wr.atomic.swap = o->swap_add;
		return;
	case K_READ:
		wr->wr.rdma.remote_addr = (uintptr_t)area((struct endpoint *)
							  peer, RSRC) + o->roff;
		split_sges(sg, o->nsge, (uintptr_t)area(e, RDST) + o->loff,
			   o->len, e->mr->lkey);
		break;
	case K_WRITE:
	case K_WRITE_IMM:
		wr->wr.rdma.remote_addr = (uintptr_t)area((struct endpoint *)
							  peer, WDST) + o->roff;
		/* fallthrough */
	default:
		split_sges(sg, o->nsge, (uintptr_t)area(e, SRC) + o->loff,
			   o->len, e->mr->lkey);
		break;
	}
	wr->num_sge = o->nsge;
	wr->wr.rdma.rkey = peer->mr->rkey;
}

/* Post e's operations in chains of 1..8 WRs per ibv_post_send call. */
static void post_sends(struct endpoint *e, const struct endpoint *peer)
{
	struct ibv_send_wr wr[8], *bad;
	struct ibv_sge sg[8][MAX_SGE];
	uint32_t i = 0;

	while (i < e->nops) {
		uint32_t n = 1 + rnd_below(8), k;
		int ret;

		if (n > e->nops - i)
			n = e->nops - i;
		for (k = 0; k < n; k++) {
			build_send(e, peer, &e->ops[i + k], i + k, &wr[k],
				   sg[k]);
			wr[k].next = k + 1 < n ? &wr[k + 1] : NULL;
		}
		ret = ibv_post_send(e->qp, wr, &bad);
		if (ret)
			die(1, "ibv_post_send (%s, %u bytes): %s",
			    kind_name[e->ops[i + (bad - wr)].kind],
			    e->ops[i + (bad - wr)].len, strerror(ret));
		i += n;
	}
}

/* ---- completions and checks ---- */

static const enum ibv_wc_opcode wc_of[NKINDS] = {
	IBV_WC_SEND, IBV_WC_SEND, IBV_WC_RDMA_WRITE, IBV_WC_RDMA_WRITE,
	IBV_WC_RDMA_READ, IBV_WC_COMP_SWAP, IBV_WC_FETCH_ADD,
};

/*
 * The fields every completion must have, as rdma_rxe reports them (see
 * wc_fields.c): nothing vendor- or UD-specific, and on a send imm_data 0.
 */
static void check_common(const struct ibv_wc *wc, const struct endpoint *e,
			 int qpi, const char *what, uint32_t idx)
{
	if (wc->qp_num != e->qp->qp_num || wc->src_qp || wc->vendor_err ||
	    wc->pkey_index || wc->slid || wc->sl || wc->dlid_path_bits)
		die(1, "qp %d: %s #%u: qp_num %u (expected %u) src_qp %u vendor_err %u pkey_index %u slid %u sl %u dlid_path_bits %u",
		    qpi, what, idx, wc->qp_num, e->qp->qp_num, wc->src_qp,
		    wc->vendor_err, wc->pkey_index, wc->slid, wc->sl,
		    wc->dlid_path_bits);
}

/* Next signaled op after position from. */
static uint32_t next_signaled(const struct endpoint *e, uint32_t from)
{
	while (from < e->nops && !e->ops[from].signaled)
		from++;
	return from;
}

static void poll_send(struct endpoint *e, int qpi, uint32_t *pos)
{
	struct ibv_wc wc[16];
	int n, i;

	n = ibv_poll_cq(e->scq, 16, wc);
	if (n < 0)
		die(1, "ibv_poll_cq: %d", n);
	for (i = 0; i < n; i++) {
		uint32_t want = next_signaled(e, *pos);
		const struct op *o;

		if (want >= e->nops || e->sig_done >= e->nsig)
			die(1, "qp %d: unexpected send completion wr_id %" PRIu64,
			    qpi, wc[i].wr_id);
		o = &e->ops[want];
		if (wc[i].status != IBV_WC_SUCCESS)
			die(1, "qp %d: %s #%u (%u bytes) completed with %s",
			    qpi, kind_name[o->kind], want, o->len,
			    ibv_wc_status_str(wc[i].status));
		if (wc[i].wr_id != want)
			die(1, "qp %d: send completion out of order: wr_id %" PRIu64 ", expected %u",
			    qpi, wc[i].wr_id, want);
		if (wc[i].opcode != wc_of[o->kind])
			die(1, "qp %d: %s #%u completed as opcode %d", qpi,
			    kind_name[o->kind], want, wc[i].opcode);
		/* byte_len: the SGEs' sum (inline: the data's length) */
		if (wc[i].byte_len != o->len)
			die(1, "qp %d: %s #%u: send byte_len %u, expected %u",
			    qpi, kind_name[o->kind], want, wc[i].byte_len,
			    o->len);
		if (wc[i].wc_flags != (o->kind == K_SEND_IMM ||
				       o->kind == K_WRITE_IMM ?
				       IBV_WC_WITH_IMM : 0u) || wc[i].imm_data)
			die(1, "qp %d: %s #%u: send wc_flags %#x imm_data %#x",
			    qpi, kind_name[o->kind], want, wc[i].wc_flags,
			    ntohl(wc[i].imm_data));
		check_common(&wc[i], e, qpi, kind_name[o->kind], want);
		*pos = want + 1;
		e->sig_done++;
	}
}

static void poll_recv(struct endpoint *e, const struct endpoint *peer,
		      int qpi, uint32_t *pos)
{
	struct ibv_wc wc[16];
	int n, i;

	n = ibv_poll_cq(e->rcq, 16, wc);
	if (n < 0)
		die(1, "ibv_poll_cq: %d", n);
	for (i = 0; i < n; i++) {
		const struct op *o;

		while (*pos < peer->nops && !consumes_recv(peer->ops[*pos].kind))
			(*pos)++;
		if (*pos >= peer->nops)
			die(1, "qp %d: unexpected receive completion", qpi);
		o = &peer->ops[*pos];
		if (wc[i].status != IBV_WC_SUCCESS)
			die(1, "qp %d: receive for %s #%u (%u bytes): %s", qpi,
			    kind_name[o->kind], *pos, o->len,
			    ibv_wc_status_str(wc[i].status));
		if (wc[i].wr_id != *pos)
			die(1, "qp %d: receive out of order: wr_id %" PRIu64 ", expected %u",
			    qpi, wc[i].wr_id, *pos);
		/* a WRITE_IMM's byte_len is the length of the write */
		if (wc[i].opcode != (o->kind == K_WRITE_IMM ?
				     IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV) ||
		    wc[i].byte_len != o->len)
			die(1, "qp %d: %s #%u: receive opcode %d byte_len %u, expected %u",
			    qpi, kind_name[o->kind], *pos, wc[i].opcode,
			    wc[i].byte_len, o->len);
		if (o->kind != K_SEND &&
		    (wc[i].wc_flags != (IBV_WC_GRH | IBV_WC_WITH_IMM) ||
		     ntohl(wc[i].imm_data) != o->imm))
			die(1, "qp %d: %s #%u: wc_flags %#x imm_data %#x, expected GRH|WITH_IMM %#x",
			    qpi, kind_name[o->kind], *pos, wc[i].wc_flags,
			    ntohl(wc[i].imm_data), o->imm);
		if (o->kind == K_SEND &&
		    (wc[i].wc_flags != IBV_WC_GRH || wc[i].imm_data))
			die(1, "qp %d: SEND #%u: wc_flags %#x imm_data %#x, expected GRH and none",
			    qpi, *pos, wc[i].wc_flags, ntohl(wc[i].imm_data));
		check_common(&wc[i], e, qpi, kind_name[o->kind], *pos);
		(*pos)++;
		e->recv_done++;
	}
}

static void check_range(struct endpoint *e, enum area a, uint32_t off,
			const struct op *o, int qpi, int round,
			const char *what)
{
	const uint8_t *p = area(e, a) + off;
	long bad = pattern_check(p, o->len, o->id);

	if (bad >= 0)
		die(1, "qp %d round %d: %s %s #%" PRIx64 " (%u bytes): byte %ld wrong (0x%02x)",
		    qpi, round, kind_name[o->kind], what, o->id, o->len, bad,
		    p[bad]);
	if (p[-1] != POISON(round) || p[o->len] != POISON(round))
		die(1, "qp %d round %d: %s (%u bytes) wrote outside its range",
		    qpi, round, kind_name[o->kind], o->len);
}

static void check_round(struct endpoint *e, struct endpoint *peer, int qpi,
			int round)
{
	uint32_t i;

	for (i = 0; i < e->nops; i++) {
		const struct op *o = &e->ops[i];
		uint64_t want;

		switch (o->kind) {
		case K_SEND:
		case K_SEND_IMM:
			check_range(peer, RECV, o->roff, o, qpi, round, "data");
			break;
		case K_WRITE:
		case K_WRITE_IMM:
			check_range(peer, WDST, o->roff, o, qpi, round, "data");
			break;
		case K_READ:
			check_range(e, RDST, o->loff, o, qpi, round, "data");
			break;
		case K_CAS:
		case K_FAA:
			if (e->ares[o->loff] != o->v0)
				die(1, "qp %d round %d: %s returned %#" PRIx64 ", expected %#" PRIx64,
				    qpi, round, kind_name[o->kind],
				    e->ares[o->loff], o->v0);
			if (o->kind == K_CAS)
				want = o->cmp == o->v0 ? o->swap_add : o->v0;
			else
				want = o->v0 + o->swap_add;
			if (peer->atom[o->roff] != want)
				die(1, "qp %d round %d: %s left %#" PRIx64 ", expected %#" PRIx64 " (executed twice?)",
				    qpi, round, kind_name[o->kind],
				    peer->atom[o->roff], want);
			break;
		default:
			break;
		}
		stat_bytes += o->len;
		stat_msgs[o->kind]++;
	}
}

/* Does the device's kernel driver have the datapath verbs at all? */
static int probe(const char *dev)
{
	struct ibv_context *ctx = open_dev(dev);
	struct ibv_cq *cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	int err = errno;

	if (cq) {
		ibv_destroy_cq(cq);
		ibv_close_device(ctx);
		return 0;
	}
	ibv_close_device(ctx);
	printf("# %s: ibv_create_cq: %s\n", dev, strerror(err));
	return err == EOPNOTSUPP ? 4 : 1;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: integrity -a DEV -A GIDX -b DEV -B GIDX [-q QPS] [-r ROUNDS]\n"
		"                 [-o OPS] [-m MAX_SIZE] [-s SEED] [-t SECONDS] [-T ROUND_TIMEOUT]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct ibv_device_attr dattr;
	struct endpoint (*ep)[2];
	struct ibv_context *ctx[2];
	double start, elapsed, next_async = 0;
	uint8_t rd_atomic;
	bool probe_only = false;
	int c, i, s, round;

	opt.seed = (uint64_t)time(NULL);
	while ((c = getopt(argc, argv, "Pa:A:b:B:q:r:o:m:s:t:T:")) != -1) {
		switch (c) {
		case 'P': probe_only = true; break;
		case 'a': opt.dev[0] = optarg; break;
		case 'A': opt.gidx[0] = atoi(optarg); break;
		case 'b': opt.dev[1] = optarg; break;
		case 'B': opt.gidx[1] = atoi(optarg); break;
		case 'q': opt.qps = atoi(optarg); break;
		case 'r': opt.rounds = atoi(optarg); break;
		case 'o': opt.ops = atoi(optarg); break;
		case 'm': opt.max_size = strtoul(optarg, NULL, 0); break;
		case 's': opt.seed = strtoull(optarg, NULL, 0); break;
		case 't': opt.seconds = atoi(optarg); break;
		case 'T': opt.round_timeout = atoi(optarg); break;
		default: usage();
		}
	}
	if (probe_only && opt.dev[0])
		return probe(opt.dev[0]);
	if (!opt.dev[0] || !opt.dev[1] || opt.qps < 1 || opt.ops < 1 ||
	    opt.rounds < 1 || opt.max_size > AREA_SIZE / 3)
		usage();
	rng_state = opt.seed;
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("# integrity: %s <-> %s, %d QPs, %d ops per direction per round, sizes 0..%u, seed %" PRIu64 "\n",
	       opt.dev[0], opt.dev[1], opt.qps, opt.ops, opt.max_size,
	       opt.seed);

	ctx[0] = open_dev(opt.dev[0]);
	ctx[1] = open_dev(opt.dev[1]);
	rd_atomic = 16;
	for (s = 0; s < 2; s++) {
		if (ibv_query_device(ctx[s], &dattr))
			die(2, "ibv_query_device: %s", strerror(errno));
		if (dattr.max_qp_rd_atom < rd_atomic)
			rd_atomic = dattr.max_qp_rd_atom;
		if (dattr.max_qp_init_rd_atom < rd_atomic)
			rd_atomic = dattr.max_qp_init_rd_atom;
	}
	if (!rd_atomic)
		die(2, "device allows no outstanding READ/atomic");

	ep = calloc(opt.qps, sizeof(*ep));
	if (!ep)
		die(2, "out of memory");
	for (i = 0; i < opt.qps; i++)
		for (s = 0; s < 2; s++)
			ep_init(&ep[i][s], ctx[s], opt.gidx[s], opt.ops + 8);
	for (i = 0; i < opt.qps; i++) {
		ep_connect(&ep[i][0], &ep[i][1], rd_atomic);
		ep_connect(&ep[i][1], &ep[i][0], rd_atomic);
	}

	start = now_s();
	for (round = 0; round < opt.rounds; round++) {
		uint32_t spos[2], rpos[2];
		double deadline;
		bool done;

		if (round && now_s() - start >= opt.seconds)
			break;
		for (i = 0; i < opt.qps; i++) {
			for (s = 0; s < 2; s++) {
				memset(ep[i][s].cursor, 0,
				       sizeof(ep[i][s].cursor));
				ep[i][s].next_word = 0;
			}
			for (s = 0; s < 2; s++)
				plan(&ep[i][s], &ep[i][!s], s, i, round);
			for (s = 0; s < 2; s++)
				post_recvs(&ep[i][s], &ep[i][!s]);
		}
		for (i = 0; i < opt.qps; i++)
			for (s = 0; s < 2; s++)
				post_sends(&ep[i][s], &ep[i][!s]);

		deadline = now_s() + opt.round_timeout;
		for (i = 0; i < opt.qps; i++) {
			spos[0] = spos[1] = rpos[0] = rpos[1] = 0;
			do {
				done = true;
				for (s = 0; s < 2; s++) {
					struct endpoint *e = &ep[i][s];

					poll_send(e, i, &spos[s]);
					poll_recv(e, &ep[i][!s], i, &rpos[s]);
					if (e->sig_done < e->nsig ||
					    e->recv_done < e->nrecv)
						done = false;
				}
				if (!done && now_s() >= next_async) {
					/* a read(2) each: not every spin */
					next_async = now_s() + 0.01;
					check_async(ctx[0]);
					check_async(ctx[1]);
				}
				if (!done && now_s() > deadline) {
					for (s = 0; s < 2; s++)
						printf("# qp %d (qpn %u) side %d: %u/%u send, %u/%u receive completions\n",
						       i, ep[i][s].qp->qp_num, s,
						       ep[i][s].sig_done,
						       ep[i][s].nsig,
						       ep[i][s].recv_done,
						       ep[i][s].nrecv);
					/* let the caller snapshot the stuck state */
					if (getenv("INTEGRITY_STALL_HOOK")) {
						fflush(stdout);
						if (system(getenv("INTEGRITY_STALL_HOOK")))
							printf("# stall hook failed\n");
					}
					die(1, "round %d: completions missing after %d s",
					    round, opt.round_timeout);
				}
			} while (!done);
		}
		for (i = 0; i < opt.qps; i++)
			for (s = 0; s < 2; s++)
				check_round(&ep[i][s], &ep[i][!s], i, round);
	}
	elapsed = now_s() - start;

	/* Nothing may complete after the last round. */
	for (i = 0; i < opt.qps; i++) {
		struct ibv_wc wc;

		for (s = 0; s < 2; s++)
			if (ibv_poll_cq(ep[i][s].scq, 1, &wc) ||
			    ibv_poll_cq(ep[i][s].rcq, 1, &wc))
				die(1, "qp %d: completion after the end", i);
	}

	printf("# integrity: %d rounds in %.1f s, %.1f MB verified (%.2f MB/s)\n",
	       round, elapsed, stat_bytes / 1e6,
	       elapsed > 0 ? stat_bytes / 1e6 / elapsed : 0.0);
	printf("# messages:");
	for (c = 0; c < NKINDS; c++)
		printf(" %s %" PRIu64, kind_name[c], stat_msgs[c]);
	printf("\n");
	for (i = 0; i < opt.qps; i++) {
		for (s = 0; s < 2; s++) {
			ibv_destroy_qp(ep[i][s].qp);
			ibv_destroy_cq(ep[i][s].scq);
			ibv_destroy_cq(ep[i][s].rcq);
			ibv_dereg_mr(ep[i][s].mr);
			ibv_dealloc_pd(ep[i][s].pd);
			free(ep[i][s].buf);
			free(ep[i][s].ops);
		}
	}
	ibv_close_device(ctx[0]);
	ibv_close_device(ctx[1]);
	printf("PASS: every byte of %" PRIu64 " messages verified\n",
	       stat_msgs[0] + stat_msgs[1] + stat_msgs[2] + stat_msgs[3] +
	       stat_msgs[4] + stat_msgs[5] + stat_msgs[6]);
	return 0;
}
