/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Internal structures of metaroce.ko (the verbs/netdev glue around the
 * portable protocol core in kernel/core/).  Documentation/design.md explains
 * how they fit together; the locking rules are summarised at each struct.
 */
#ifndef MROCE_METAROCE_H
#define MROCE_METAROCE_H

#include <linux/atomic.h>
#include <linux/hashtable.h>
#include <linux/hrtimer.h>
#include <linux/in6.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/ratelimit.h>
#include <linux/skbuff.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <net/dst_cache.h>
#include <rdma/ib_verbs.h>

#include "metaroce-abi.h"
#include "core/mroce.h"

/*
 * Encoded as major << 32 | minor << 16 | sub_minor, the format the provider
 * and the sysfs fw_ver file print.
 */
#define MROCE_FW_VER ((0ULL << 32) | (1ULL << 16) | 0ULL)

/*
 * Per-packet overhead the netdev MTU must leave room for: the larger IP
 * header (IPv6, 40), UDP (8) and the largest MetaRoCE header (common header
 * plus the longest extension, 72).  The rest, rounded down to an IB MTU, is
 * the path MTU.
 */
#define MROCE_HDR_BUDGET	MROCE_MAX_HDR_LEN
#define MROCE_WIRE_OVERHEAD	(40 + 8 + MROCE_HDR_BUDGET)

#define MROCE_GID_TBL_LEN	128

/*
 * Device limits reported by query_device; each is enforced where the object
 * is created or used.
 */
#define MROCE_MAX_PD		65536
#define MROCE_MAX_QP		16384
#define MROCE_MAX_QP_WR		16384
#define MROCE_MAX_SGE		16
#define MROCE_MAX_INLINE	256
#define MROCE_MAX_CQ		16384
#define MROCE_MAX_CQE		65535
#define MROCE_MAX_MR		65536
#define MROCE_MAX_MR_SIZE	BIT_ULL(40)
#define MROCE_MAX_AH		65536
#define MROCE_MAX_SRQ		4096
#define MROCE_MAX_SRQ_WR	16384
#define MROCE_MAX_RD_ATOM	MROCE_MAX_RD_ATOMIC
#define MROCE_MAX_MSG_SIZE	BIT(31)

/*
 * A connection id is 32 random bits (never 0), hashed in mdev->conn_ids.
 * An off-path host that wants a packet taken by a connection must guess
 * both ends' ids, which it never sees (protocol.md 15).  Being random, an
 * id's low bits are its bucket: one bucket head and the peer per lookup.
 */
#define MROCE_CONN_ID_BITS	10

/* QP numbers: 0 and 1 are the IB special QPs, never handed out. */
#define MROCE_QPN_MIN		16
#define MROCE_QPN_MAX		0xffffff

/*
 * Messages a stream keeps outstanding: bounds the SQ entries the kernel has
 * copied (shadowed) and the receives claimed at once.
 */
#define MROCE_WINDOW		MROCE_STREAM_WINDOW

/* Passive opens (CONNECT from an unknown address) queued at most. */
#define MROCE_MAX_PENDING_OPENS	64

/* Device counters (stats.c); glue-level ones are kept in mroce_dev.cnt. */
enum mroce_cnt {
	MROCE_CNT_RX_SHORT,		/* = MROCE_ERR_SHORT - 1, and so on */
	MROCE_CNT_RX_VERSION,
	MROCE_CNT_RX_OPCODE,
	MROCE_CNT_RX_RESERVED,
	MROCE_CNT_RX_FLAGS,
	MROCE_CNT_RX_LENGTH,
	MROCE_CNT_RX_FIELD,
	MROCE_CNT_RX_UNKNOWN_CONN,	/* dst_conn names no connection */
	MROCE_CNT_RX_WRONG_ADDR,	/* connection id from the wrong address */
	MROCE_CNT_RX_OPEN_DROPPED,	/* CONNECT not queued (queue full) */
	MROCE_CNT_RX_HOST_CE,		/* taken as CE: host backlog (rx.c) */
	MROCE_CNT_RESET_SENT,
	MROCE_CNT_RESET_LIMITED,	/* RESET not sent: rate limit */
	MROCE_CNT_RX_CONNECT_UNPROVEN,	/* CONNECT without a valid cookie */
	MROCE_CNT_CHALLENGE_SENT,	/* cookie CHALLENGEs sent */
	MROCE_CNT_CHALLENGE_LIMITED,	/* ... not sent: rate limit */
	MROCE_CNT_TX_NOMEM,
	MROCE_CNT_TX_NO_ROUTE,
	MROCE_CNT_TX_LOCAL_ERR,		/* payload source vanished (MR gone) */
	MROCE_CNT_CQ_OVERFLOW,
	MROCE_CNT_BAD_RING,		/* a ring index out of bounds */
	MROCE_CNT_BAD_WQE,		/* an entry that failed validation */
	MROCE_CNT_RX_BAD_RSN,		/* a peer named a receive out of order */
	MROCE_CNT_PEER_LOCK_WAITS,	/* a peer's lock was taken: waited */
	MROCE_CNT_DB_TIMER_AFTER,	/* a doorbell set the timer itself */
	MROCE_CNT_CONN_FAILED,		/* a connection failed (logged) */
	MROCE_CNT_QP_REHOMED,		/* moved off a restarted connection */
	MROCE_NUM_GLUE_CNT,
};

/* Counters of connections and streams that no longer exist. */
struct mroce_retired {
	struct mroce_conn_stats conn;
	u64 rnr_sent;
	u64 rnr_rcvd;
	u64 rx_dup_path;
	u64 tx_zerocopy;
	u64 tx_copied;
};

struct mroce_net;
struct mroce_peer;

/*
 * Rate limit of what the receive path sends to hosts that proved nothing
 * (RESETs, cookie CHALLENGEs): a generic cell rate algorithm, @rate per
 * second with bursts of @burst.  Documented in protocol.md 15.
 */
struct mroce_bucket {
	spinlock_t lock;
	u64 tat;		/* ns: when the bucket is empty again */
	u64 interval;		/* ns per packet */
	u64 slack;		/* (burst - 1) * interval */
};

#define MROCE_RESET_RATE	100
#define MROCE_RESET_BURST	10
#define MROCE_CHALLENGE_RATE	1000
#define MROCE_CHALLENGE_BURST	100

void mroce_bucket_init(struct mroce_bucket *b, u32 rate, u32 burst);
bool mroce_bucket_take(struct mroce_bucket *b, u64 now);

struct mroce_dev {
	struct ib_device ibdev;		/* first: ib_alloc_device() requires it */
	struct net_device *ndev;	/* held (ndev_tracker) until dealloc */
	netdevice_tracker ndev_tracker;

	/* Driver registry (device.c), under mroce_devs_lock. */
	struct list_head list;
	bool registered;		/* ib_register_device() succeeded */
	bool unregistering;		/* an unregistration was started */
	bool gone;			/* dealloc_driver ran: mroce_reap_all() */
	struct work_struct unreg_work;	/* mroce_unreg_wq: netdev went away */

	/* Per-netns transport socket (net.c). */
	struct mroce_net *mnet;		/* NULL when not attached */
	struct list_head net_node;	/* mnet->devs, RCU for the rx path */

	enum ib_port_state port_state;	/* last state reported, under RTNL */
	bool dying;			/* teardown: rx and opens stop */

	atomic_t num_pds;
	atomic_t num_qps;
	atomic_t num_cqs;
	atomic_t num_mrs;
	atomic_t num_srqs;
	atomic_t num_ahs;

	struct xarray qpns;		/* QPN -> struct mroce_qp */
	u32 qpn_next;
	struct xarray mrs;		/* key >> 8 -> struct mroce_mr (RCU) */
	atomic_t mr_tag;		/* low byte of the last key given */

	/*
	 * Peers (peer.c).  The hash (by remote address) and the id xarray are
	 * read under RCU by the receive path; both change only in process
	 * context under peers_mutex, which also guards peer_list.
	 */
	struct mutex peers_mutex;
	DECLARE_HASHTABLE(peers, 8);
	struct list_head peer_list;
	unsigned int npeers;
	DECLARE_HASHTABLE(conn_ids, MROCE_CONN_ID_BITS);	/* by id */
	u64 nonce;			/* this endpoint instance (CONNECT) */
	struct mroce_key cookie_key;	/* CONNECT cookies (core/cookie.h) */

	/* CONNECTs from unknown addresses, turned into peers by open_work. */
	spinlock_t open_lock;
	struct list_head open_queue;
	unsigned int nopen;
	struct work_struct open_work;
	struct delayed_work gc_work;	/* frees idle and dead peers */

	/* Fair share of the inbound capacity (fairshare.c). */
	spinlock_t share_lock;
	struct mroce_share *share;	/* mroce_share_size() after mdev */
	struct hrtimer share_timer;
	bool share_armed;		/* under share_lock: the timer runs on */
	u64 capacity;			/* bytes/s, 0 = unknown: no hints */
	u32 line_rate;			/* the link's, 1000 B/s; 0 = unknown */

	/* answers to strangers: RESETs and cookie CHALLENGEs (tx.c) */
	struct mroce_bucket reset_tb;
	struct mroce_bucket challenge_tb;
	atomic64_t cnt[MROCE_NUM_GLUE_CNT];
	struct mroce_retired retired;	/* under peers_mutex */
	struct dentry *dbg;
};

struct mroce_ucontext {
	struct ib_ucontext ibuc;
};

struct mroce_pd {
	struct ib_pd ibpd;
};

/* A ring mapped to userspace (or kept in kernel memory for kernel users). */
struct mroce_queue {
	struct mroce_ring *hdr;		/* vmalloc: header, then entries */
	u8 *ents;
	u32 entries;			/* power of two */
	u32 stride;
	size_t size;
	struct rdma_user_mmap_entry *mentry;	/* NULL: kernel ring */
};

/* What a user mmap entry maps: a ring, freed with the last mapping. */
struct mroce_mmap {
	struct rdma_user_mmap_entry rdma;
	void *buf;
};

enum mroce_mr_kind {
	MROCE_MR_USER,		/* pinned user pages */
	MROCE_MR_DMA,		/* kernel virtual addresses, local access */
};

struct mroce_mr {
	struct ib_mr ibmr;
	struct mroce_dev *mdev;
	struct mroce_pd *pd;
	u8 kind;
	int access;		/* IB_ACCESS_* */
	u64 iova;
	u64 length;
	u32 offset;		/* of iova within the first page */
	struct ib_umem *umem;
	struct page **pages;
	unsigned long npages;
	struct rcu_head rcu;
};

struct mroce_cq {
	struct ib_cq ibcq;
	struct mroce_dev *mdev;
	spinlock_t lock;	/* producer side, notify state */
	struct mroce_queue q;
	u32 prod;		/* kernel copy of the producer index */
	u32 kcons;		/* kernel CQs: consumer index */
	struct mroce_qp **kqp;	/* kernel CQs: the QP of each CQE */
	u8 notify;		/* IB_CQ_NEXT_COMP, IB_CQ_SOLICITED or 0 */
	bool notify_queued;	/* on a peer batch's notify list */
	bool overflow;
	struct list_head notify_node;
	struct work_struct ev_work;	/* IB_EVENT_CQ_ERR */
};

struct mroce_srq {
	struct ib_srq ibsrq;
	struct mroce_dev *mdev;
	spinlock_t lock;	/* consumer side, limit */
	spinlock_t plock;	/* kernel producers */
	struct mroce_queue q;
	u32 cons;
	u32 max_sge;
	u32 limit;		/* armed limit, 0 = disarmed */
	bool user;
	unsigned long ev_pending;
	struct work_struct ev_work;
};

/* A resolved address vector: local and remote IP of a GID pair. */
struct mroce_av {
	bool v4;
	struct in6_addr saddr;	/* IPv4 as ::ffff:a.b.c.d */
	struct in6_addr daddr;
	union ib_gid dgid;
	u8 sgid_index;
	/*
	 * The GRH's fields as the application set them, for query only:
	 * packets do not carry them.  One connection serves every QP to the
	 * peer, each path takes its flow label from its own ports and the
	 * route's hop limit, and the traffic class carries only ECN.
	 */
	u8 hop_limit;
	u8 tclass;
	u32 flow_label;
	u8 dmac[ETH_ALEN];
};

struct mroce_ah {
	struct ib_ah ibah;
	struct mroce_av av;
};

/* A receive claimed by a message: a kernel copy of its entry. */
struct mroce_rcv {
	u64 wr_id;
	u32 ring_idx;		/* RQ index (own RQ), unused for an SRQ */
	u32 num_sge;
	u32 capacity;		/* sum of the SGE lengths */
	u32 used;
	struct mroce_sge sge[];
};

/* QP async events raised from the datapath, dispatched by ev_work. */
enum mroce_qp_ev {
	MROCE_QPEV_FATAL,
	MROCE_QPEV_REQ_ERR,
	MROCE_QPEV_ACCESS_ERR,
	MROCE_QPEV_COMM_EST,
	MROCE_QPEV_SQ_DRAINED,
	MROCE_QPEV_LAST_WQE,
};

/*
 * Locking: @mutex serialises modify/query/destroy.  The datapath state
 * (rings' consumer side, state while attached) is under the peer lock when
 * @peer is set, else under @lock; @state is written holding that lock.
 * Kernel producers take @sq_plock / @rq_plock.
 */
struct mroce_qp {
	struct ib_qp ibqp;
	struct mroce_dev *mdev;
	struct mroce_pd *pd;
	struct mroce_cq *scq;
	struct mroce_cq *rcq;
	struct mroce_srq *srq;
	bool user;
	bool sig_all;

	struct mutex mutex;
	spinlock_t lock;
	enum ib_qp_state state;

	/* attributes, for query_qp and the stream parameters */
	struct mroce_av av;
	enum ib_mtu path_mtu;
	u32 dest_qpn;
	u32 rq_psn;
	u32 sq_psn;
	int access;
	u16 pkey_index;
	u8 port;
	u8 timeout;
	u8 retry_cnt;
	u8 rnr_retry;
	u8 min_rnr_timer;
	u8 max_rd_atomic;
	u8 max_dest_rd_atomic;
	bool sqd_notify;

	/* transport */
	/* the core's per-QP state (~40 KiB): kvzalloc(mroce_stream_size()) */
	struct mroce_stream *st;
	struct mroce_peer *peer;	/* attached from RTR to RESET */
	struct hlist_node peer_node;	/* peer->qps */
	struct list_head flush_node;	/* peer->flush_qps */
	struct list_head sq_node;	/* peer->sq_qps */
	u8 flush_status;		/* why it went to ERR (event) */

	/* send queue */
	struct mroce_queue sq;
	spinlock_t sq_plock;
	u32 sq_next;		/* next entry to take from the ring */
	u32 sq_cons;		/* oldest entry not completed */
	u8 *sq_shadow;		/* kernel copies of taken entries */
	u32 sq_nshadow;		/* power of two, <= MROCE_WINDOW */
	u32 max_send_sge;
	u32 max_inline;
	bool sq_bad;		/* entry sq_next failed validation */
	u8 sq_bad_status;	/* its ib_wc_status */
	bool sqd_pending;	/* SQD: report SQ_DRAINED when empty */

	/* receive queue (none with an SRQ) and claimed receives */
	struct mroce_queue rq;
	spinlock_t rq_plock;
	u32 rq_cons;		/* oldest receive not completed */
	u32 rq_rsn;		/* rsn of the receive at rq_cons */
	u32 max_recv_sge;
	u8 *rcv;		/* MROCE_WINDOW claimed-receive slots */
	u32 rcv_stride;
	unsigned long rcv_used[BITS_TO_LONGS(MROCE_WINDOW)];

	unsigned long ev_pending;	/* BIT(enum mroce_qp_ev) */
	struct work_struct ev_work;
	struct work_struct db_work;	/* doorbell deferred from hard irq */
	bool rehome;			/* moving to the peer's new connection */
	struct work_struct rehome_work;
};

/* An ACK of up to 4 path blocks and a stream entry fits. */
#define MROCE_ACK_STASH	MROCE_ACK_LEN(4, 1)

/*
 * Work collected inside a peer critical section and done after the lock
 * is dropped: packets to transmit (handed to the peer's transmitter), an
 * ACK still to be made an skb, and CQs to notify.
 */
struct mroce_batch {
	struct sk_buff_head skbs;	/* for the peer's ordered queue */
	struct sk_buff_head acks;	/* sent at once, by the batch's owner */
	struct list_head cqs;
	u64 now;
	bool defer_timer;		/* a doorbell's: see mroce_peer_unlock */
	/* one ACK's header, made an skb after the unlock (tx.c) */
	u32 ack_len;
	struct mroce_tx ack_tx;
	u8 ack_hdr[MROCE_ACK_STASH];
};

static inline void mroce_batch_init(struct mroce_batch *b)
{
	__skb_queue_head_init(&b->skbs);
	__skb_queue_head_init(&b->acks);
	INIT_LIST_HEAD(&b->cqs);
	b->ack_len = 0;
	b->defer_timer = false;
}

/*
 * The route of one path (its UDP source port), cached: a path is a fixed
 * 5-tuple, so its route only changes when the routing tables do (the
 * cache's check) or when the path moves to a new port.
 */
struct mroce_route {
	struct dst_cache cache;
	u16 sport;			/* the port the cached route is for */
};

/*
 * One per (device, remote address): wraps the core's connection.  The
 * memory is freed after an RCU grace period.
 */
struct mroce_peer {
	struct mroce_dev *mdev;
	/*
	 * @lock protects the connection and everything of the peer but the
	 * transmit queue (design.md, "Locks"): every call into the core is
	 * made under it.  @txq_lock, inside it, protects @txq and @xmitting.
	 */
	spinlock_t lock;
	spinlock_t txq_lock;
	struct mroce_batch *batch;	/* the section's, for core callbacks */
	struct mroce_conn *conn;	/* kvzalloc(mroce_conn_size()) */
	u32 id;				/* conn->id, hashed in mdev->conn_ids */
	bool v4;
	struct in6_addr raddr;
	struct in6_addr laddr;
	refcount_t ref;			/* hash + attached QPs */
	bool hashed;			/* in mdev->peers and mdev->conn_ids */
	bool dead;			/* being freed: no timer, no input */
	bool closed;			/* connection failed or closed */
	u64 last_active;		/* last packet in, or QP attach/detach */
	struct hlist_node hnode;	/* mdev->peers */
	struct hlist_node idnode;	/* mdev->conn_ids */
	struct list_head node;		/* mdev->peer_list */
	struct rcu_head rcu;

	struct hrtimer timer;		/* near deadlines (peer.c, peer_arm()) */
	u64 timer_at;			/* its soonest expiry, 0: not armed */
	u64 timer_late;			/* latest expiry (timer_at + slack) */
	u64 timer_span;			/* timer_at - now when armed */
	struct timer_list wheel;	/* far ones, a tick of slack allowed */
	u64 wheel_at;			/* the deadline it was last set for */
	bool more_tx;			/* drain stopped at its budget */
	bool timer_stale;		/* a doorbell left the timer */

	DECLARE_HASHTABLE(qps, 5);	/* attached QPs by QPN */
	unsigned int nqps;
	struct list_head flush_qps;	/* to move to ERR after the core call */
	struct list_head sq_qps;	/* SQ to take more entries from */
	u64 rnr_sent;			/* of streams detached from it */
	u64 rnr_rcvd;
	u64 tx_zerocopy;		/* payloads sent as the user's pages */
	u64 tx_copied;			/* payloads copied into the skb */

	struct sk_buff_head txq;	/* built, waiting for the transmitter */
	bool xmitting;			/* a context is draining txq */
	struct mroce_route *routes;	/* per path id */
	u32 nroutes;
	struct page *tx_page;		/* payload fragments are cut from it */
	u32 tx_off;
	u32 hdr_cap;
	u8 hdr[1024];			/* poll_tx writes headers here */
};

static inline struct mroce_dev *to_mdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct mroce_dev, ibdev);
}

static inline struct mroce_pd *to_mpd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct mroce_pd, ibpd);
}

static inline struct mroce_cq *to_mcq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct mroce_cq, ibcq);
}

static inline struct mroce_qp *to_mqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct mroce_qp, ibqp);
}

static inline struct mroce_srq *to_msrq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct mroce_srq, ibsrq);
}

static inline struct mroce_mr *to_mmr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct mroce_mr, ibmr);
}

static inline struct mroce_ah *to_mah(struct ib_ah *ibah)
{
	return container_of(ibah, struct mroce_ah, ibah);
}

static inline struct mroce_qp *st_to_qp(struct mroce_stream *st)
{
	return mroce_stream_get_ctx(st);
}

/*
 * Ring indices (uapi/metaroce-abi.h): each has one writer.  Reading the
 * other side's index is an acquire, so the entries it published (or the
 * slots it freed) are read (or reused) only after it; publishing our own
 * index is a release, after the entries we wrote or consumed.
 */
static inline u32 mroce_ring_load(const __u32 *idx)
{
	/* pairs with the writer's release of this index */
	return smp_load_acquire(idx);
}

static inline void mroce_ring_store(__u32 *idx, u32 val)
{
	/* pairs with the reader's acquire of this index */
	smp_store_release(idx, val);
}

static inline void *mroce_queue_slot(const struct mroce_queue *q, u32 idx)
{
	return q->ents + (size_t)(idx & (q->entries - 1)) * q->stride;
}

static inline void mroce_count(struct mroce_dev *mdev, enum mroce_cnt c)
{
	atomic64_inc(&mdev->cnt[c]);
}

/* params.c: module parameters and debugfs tunables, read with READ_ONCE() */
extern unsigned short mroce_udp_port;
extern unsigned int mroce_tx_zerocopy;
extern unsigned int mroce_share_epoch_us;
extern unsigned int mroce_share_grants;
extern unsigned int mroce_capacity_mbps;
extern unsigned int mroce_idle_peer_s;
extern unsigned int mroce_max_peers;
extern unsigned int mroce_host_ce_pkts;
extern unsigned int mroce_payload_max;
void mroce_conn_cfg(struct mroce_dev *mdev, struct mroce_cfg *cfg);
void mroce_tunables_debugfs(struct dentry *root);

/*
 * Packets one pass builds for a connection before it yields the CPU (and
 * the connection's locks) to the other connections and to receive work:
 * half of NAPI's default weight, so a bulk sender does not hold a CPU's
 * softirq for much longer than a receive poll would.
 */
#define MROCE_TX_BUDGET		32

/* device.c */
int mroce_newlink(const char *ibdev_name, struct net_device *ndev);
void mroce_dealloc_driver(struct ib_device *ibdev);
void mroce_unregister_devices(struct mroce_net *mnet);
enum ib_port_state mroce_port_state(const struct net_device *ndev);
enum ib_mtu mroce_active_mtu(unsigned int ndev_mtu);
u32 mroce_max_payload(unsigned int ndev_mtu);
int mroce_notifier_register(void);
void mroce_notifier_unregister(void);
extern const struct attribute_group mroce_attr_group;

/* verbs.c */
extern const struct ib_device_ops mroce_dev_ops;

/* ring.c */
int mroce_queue_alloc(struct mroce_queue *q, struct ib_udata *udata,
		      u32 entries, u32 stride, struct mroce_mmap_info *mi);
void mroce_queue_free(struct mroce_queue *q);
void mroce_queue_reset(struct mroce_queue *q);
int mroce_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma);
void mroce_mmap_free(struct rdma_user_mmap_entry *entry);

/* mr.c */
struct ib_mr *mroce_get_dma_mr(struct ib_pd *ibpd, int access);
struct ib_mr *mroce_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				u64 iova, int access, struct ib_udata *udata);
int mroce_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);
struct mroce_mr *mroce_mr_lookup(struct mroce_dev *mdev, u32 key,
				 struct mroce_pd *pd, int access, u64 iova,
				 u64 len);
void mroce_mr_copy_in(struct mroce_mr *mr, u64 iova, const void *src,
		      u32 len);
void mroce_mr_copy_out(struct mroce_mr *mr, u64 iova, void *dst, u32 len);
int mroce_mr_copy_skb(struct mroce_mr *mr, u64 iova,
		      const struct sk_buff *skb, u32 off, u32 len);
int mroce_mr_attach(struct mroce_mr *mr, u64 iova, u32 len,
		    struct sk_buff *skb);
u64 *mroce_mr_atomic_ptr(struct mroce_mr *mr, u64 iova, void **map);
int mroce_sgl_read(struct mroce_dev *mdev, struct mroce_pd *pd,
		   const struct mroce_sge *sgl, u32 n, u32 offset, void *dst,
		   struct sk_buff *skb, u32 len);
int mroce_sgl_write(struct mroce_dev *mdev, struct mroce_pd *pd,
		    const struct mroce_sge *sgl, u32 n, u32 offset,
		    const struct sk_buff *skb, u32 off, const void *src,
		    u32 len);

/* cq.c */
int mroce_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    struct ib_udata *udata);
int mroce_pre_destroy_cq(struct ib_cq *ibcq);
int mroce_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int mroce_poll_cq(struct ib_cq *ibcq, int num, struct ib_wc *wc);
int mroce_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);
bool mroce_cq_post(struct mroce_cq *cq, const struct mroce_cqe *cqe,
		   struct mroce_qp *qp, bool solicited,
		   struct mroce_batch *b);
void mroce_cq_notify_batch(struct mroce_batch *b);

/* srq.c */
int mroce_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		     struct ib_udata *udata);
int mroce_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata);
int mroce_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int mroce_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);
int mroce_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad_wr);
int mroce_srq_take(struct mroce_srq *srq, struct mroce_rcv *rcv,
		   u32 max_sge);

/* ah.c */
int mroce_av_resolve(struct mroce_dev *mdev, const struct rdma_ah_attr *attr,
		     struct mroce_av *av);
void mroce_av_to_attr(const struct mroce_av *av, u32 port,
		      struct rdma_ah_attr *attr);
int mroce_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		    struct ib_udata *udata);
int mroce_destroy_ah(struct ib_ah *ibah, u32 flags);

/* qp.c */
int mroce_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		    struct ib_udata *udata);
int mroce_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_udata *udata);
int mroce_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_qp_init_attr *init);
int mroce_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);
void mroce_qp_event(struct mroce_qp *qp, enum mroce_qp_ev ev);
void mroce_qp_error(struct mroce_qp *qp, u8 wc_status);
void mroce_qp_rehome(struct mroce_qp *qp);
void mroce_qp_flush(struct mroce_qp *qp, struct mroce_batch *b);

/* sq.c */
int mroce_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr);
void mroce_sq_run(struct mroce_qp *qp, struct mroce_batch *b);
void mroce_sq_flush(struct mroce_qp *qp, struct mroce_batch *b);
void mroce_sq_done(struct mroce_qp *qp, u32 idx, u8 status,
		   struct mroce_batch *b);
int mroce_sq_copy(struct mroce_qp *qp, u32 idx, u32 off, void *dst, u32 len);
int mroce_sq_attach(struct mroce_qp *qp, u32 idx, u32 off, u32 len,
		    struct sk_buff *skb);
int mroce_sq_place(struct mroce_qp *qp, u32 idx, u32 offset,
		   const struct sk_buff *skb, u32 off, u32 len,
		   const u64 *value);
void mroce_doorbell_work(struct work_struct *work);
void mroce_qp_kick(struct mroce_qp *qp);
size_t mroce_swqe_size(u32 stride);

/* rq.c */
int mroce_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr);
int mroce_rq_claim(struct mroce_qp *qp, u32 rsn, u32 total, u64 *cookie);
int mroce_rq_place(struct mroce_qp *qp, u64 cookie, u32 total, u32 offset,
		   const struct sk_buff *skb, u32 off, u32 len);
void mroce_rq_done(struct mroce_qp *qp, const struct mroce_recv_done *rd,
		   struct mroce_batch *b);
void mroce_rq_flush(struct mroce_qp *qp, struct mroce_batch *b);
u8 mroce_wc_status(u8 err);

/* ops.c */
extern const struct mroce_ops mroce_core_ops;

/* peer.c */
struct mroce_peer *mroce_peer_get(struct mroce_dev *mdev,
				  const struct mroce_av *av);
void mroce_peer_put(struct mroce_peer *peer);
void mroce_peer_lock(struct mroce_peer *peer, struct mroce_batch *b);
void mroce_peer_unlock(struct mroce_peer *peer, struct mroce_batch *b);
struct mroce_peer *mroce_peer_find(struct mroce_dev *mdev,
				   const struct in6_addr *raddr);

static inline struct hlist_head *mroce_conn_bucket(struct mroce_dev *mdev,
						  u32 id)
{
	return &mdev->conn_ids[id & (BIT(MROCE_CONN_ID_BITS) - 1)];
}

/* The peer of connection id @id (under RCU or peers_mutex), or NULL. */
static inline struct mroce_peer *mroce_peer_by_id(struct mroce_dev *mdev,
						  u32 id)
{
	struct mroce_peer *p;

	RCU_LOCKDEP_WARN(!rcu_read_lock_any_held() &&
			 !lockdep_is_held(&mdev->peers_mutex),
			 "peer lookup without RCU or peers_mutex");
	hlist_for_each_entry_rcu(p, mroce_conn_bucket(mdev, id), idnode,
				 lockdep_is_held(&mdev->peers_mutex))
		if (p->id == id)
			return p;
	return NULL;
}

void mroce_peer_attach(struct mroce_peer *peer, struct mroce_qp *qp);
void mroce_peer_detach(struct mroce_peer *peer, struct mroce_qp *qp);
struct mroce_qp *mroce_peer_qp(struct mroce_peer *peer, u32 qpn);
int mroce_queue_open(struct mroce_dev *mdev, const struct in6_addr *raddr,
		     const struct in6_addr *laddr, bool v4,
		     const struct sk_buff *skb, u32 len);
void mroce_open_work(struct work_struct *work);
void mroce_peers_init(struct mroce_dev *mdev);
void mroce_peers_destroy(struct mroce_dev *mdev);
void mroce_peers_link_mtu(struct mroce_dev *mdev, unsigned int ndev_mtu);

/* tx.c */
bool mroce_peer_drain(struct mroce_peer *peer, struct mroce_batch *b);
void mroce_peer_xmit(struct mroce_peer *peer);
void mroce_peer_xmit_list(struct mroce_peer *peer, struct sk_buff_head *q);
void mroce_batch_build_ack(struct mroce_peer *peer, struct mroce_batch *b);
void mroce_send_reset(struct mroce_dev *mdev, const struct mroce_pkt *pkt,
		      bool v4, const struct in6_addr *laddr,
		      const struct in6_addr *raddr);
void mroce_send_challenge(struct mroce_dev *mdev, const struct mroce_pkt *pkt,
			  bool v4, const struct in6_addr *laddr,
			  const struct in6_addr *raddr, u64 now);

/* rx.c */
void mroce_rx(struct mroce_dev *mdev, struct sk_buff *skb);

/* net.c */
int mroce_net_attach(struct mroce_dev *mdev);
void mroce_net_detach(struct mroce_dev *mdev);
int mroce_net_register(void);
void mroce_net_unregister(void);
struct sock *mroce_net_sock(struct mroce_dev *mdev, bool v4);

/* fairshare.c */
void mroce_share_setup(struct mroce_dev *mdev);
void mroce_share_add(struct mroce_dev *mdev, struct mroce_conn *conn);
void mroce_share_del(struct mroce_dev *mdev, struct mroce_conn *conn);
void mroce_share_stop(struct mroce_dev *mdev);
void mroce_share_set_capacity(struct mroce_dev *mdev);

/* stats.c */
struct rdma_hw_stats *mroce_alloc_hw_device_stats(struct ib_device *ibdev);
int mroce_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		       u32 port, int index);
void mroce_retire_peer(struct mroce_dev *mdev, const struct mroce_peer *p);
void mroce_stats_init(void);

/* debugfs.c */
void mroce_debugfs_init(void);
void mroce_debugfs_exit(void);
void mroce_debugfs_add(struct mroce_dev *mdev);
void mroce_debugfs_del(struct mroce_dev *mdev);

#endif /* MROCE_METAROCE_H */
